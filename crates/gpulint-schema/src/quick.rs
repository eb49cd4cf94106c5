//! Whether a schema accepts an instance, yes or no, without compiling it
//! with boon.
//!
//! boon's compile of the compose-spec schema costs more than everything
//! else a one-file check does (about 30 million instructions against 1.5
//! million), and most files it would check are valid. This checker reads
//! the same schema in a tenth of that, answers only "valid", and leaves
//! every invalid instance to boon, whose error tree gives Compose's words.
//! It follows boon's draft-07 semantics keyword by keyword (numbers
//! compared as boon's `equals` compares them, `integer` as any number
//! with no fraction, a `$ref` hiding its siblings); a schema that uses a
//! keyword it does not know gives no checker at all, so boon decides
//! everything. `tests::agrees_with_boon_on_generated_instances` holds the
//! two to the same verdict.

use serde_json::{Number, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

/// A compiled schema: its rules, the first the root.
#[derive(Debug)]
pub(crate) struct Checker {
    rules: Vec<Rule>,
}

#[derive(Debug, Default)]
struct Rule {
    /// `true` or `false` as a whole schema.
    boolean: Option<bool>,
    /// Draft 07: a `$ref` is the whole rule.
    reference: Option<usize>,
    /// A set of [`TYPE_*`] bits; empty allows any type.
    types: u8,
    enumeration: Option<Vec<Value>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    pattern: Option<Pattern>,
    required: Vec<String>,
    properties: HashMap<String, usize>,
    pattern_properties: Vec<(Pattern, usize)>,
    additional_allowed: bool,
    /// `additionalProperties` as a schema: what every other property must be.
    additional: Option<usize>,
    items: Option<usize>,
    unique_items: bool,
    one_of: Vec<usize>,
}

const TYPE_NULL: u8 = 1;
const TYPE_BOOLEAN: u8 = 2;
const TYPE_NUMBER: u8 = 4;
const TYPE_INTEGER: u8 = 8;
const TYPE_STRING: u8 = 16;
const TYPE_ARRAY: u8 = 32;
const TYPE_OBJECT: u8 = 64;

/// A `pattern` or `patternProperties` key: `^x-`, the most common, is a
/// prefix test; the rest are regexes compiled on first use (boon hands
/// these escape-free patterns to the same `regex` crate unchanged).
#[derive(Debug)]
enum Pattern {
    Prefix(String),
    Regex(String, OnceLock<Option<regex::Regex>>),
}

impl Pattern {
    fn new(pattern: &str) -> Option<Pattern> {
        // An escape is where ECMA and Rust regexes differ (`\d`, `\w`),
        // and boon rewrites it: such a schema is left to boon.
        if pattern.contains('\\') {
            return None;
        }
        if let Some(prefix) = pattern.strip_prefix('^')
            && !prefix.is_empty()
            && prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Some(Pattern::Prefix(prefix.to_string()));
        }
        Some(Pattern::Regex(pattern.to_string(), OnceLock::new()))
    }

    /// `None` when the regex does not compile (boon would refuse the
    /// schema): the checker then has no answer.
    fn is_match(&self, text: &str) -> Option<bool> {
        match self {
            Pattern::Prefix(prefix) => Some(text.starts_with(prefix.as_str())),
            Pattern::Regex(source, compiled) => compiled
                .get_or_init(|| regex::Regex::new(source).ok())
                .as_ref()
                .map(|regex| regex.is_match(text)),
        }
    }
}

/// Keywords that never change a verdict.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "definitions",
];

impl Checker {
    /// The checker for `schema`, or `None` when it uses anything this
    /// module does not decide exactly as boon does.
    pub fn new(schema: &Value) -> Option<Checker> {
        let mut compiling = Compiling {
            root: schema,
            rules: vec![Rule::default()],
            by_pointer: HashMap::new(),
        };
        compiling.by_pointer.insert(String::new(), 0);
        compiling.fill(0, schema)?;
        Some(Checker {
            rules: compiling.rules,
        })
    }

    /// A checker for each of `entries` (`#/definitions/…` references into
    /// `schema`), sharing the definitions they reach; the root is not
    /// compiled. `None` as for [`Checker::new`].
    pub(crate) fn with_entries(schema: &Value, entries: &[&str]) -> Option<(Checker, Vec<usize>)> {
        let mut compiling = Compiling {
            root: schema,
            rules: Vec::new(),
            by_pointer: HashMap::new(),
        };
        let starts = entries
            .iter()
            .map(|entry| compiling.reference(entry))
            .collect::<Option<Vec<_>>>()?;
        Some((
            Checker {
                rules: compiling.rules,
            },
            starts,
        ))
    }

    /// Whether the schema at `entry` (an index [`Checker::with_entries`]
    /// gave) accepts `instance`, as [`Checker::accepts`] answers.
    pub(crate) fn accepts_at<'a, I: Instance<'a>>(
        &self,
        entry: usize,
        instance: I,
    ) -> Option<bool> {
        self.valid(entry, instance)
    }

    /// Whether the schema accepts `instance`: `Some(true)` only when boon
    /// would, `None` when this checker cannot tell.
    pub fn accepts(&self, instance: &Value) -> Option<bool> {
        self.valid(0, instance)
    }

    fn valid<'a, I: Instance<'a>>(&self, rule: usize, value: I) -> Option<bool> {
        let rule = &self.rules[rule];
        if let Some(boolean) = rule.boolean {
            return Some(boolean);
        }
        if let Some(target) = rule.reference {
            return self.valid(target, value);
        }
        let shape = value.shape()?;
        if rule.types != 0 && rule.types & shape.type_bits() == 0 {
            return Some(false);
        }
        if let Some(values) = &rule.enumeration {
            let mut any = false;
            for allowed in values {
                if value.equals(&shape, allowed)? {
                    any = true;
                    break;
                }
            }
            if !any {
                return Some(false);
            }
        }
        let own = match &shape {
            Shape::Object => self.object_valid(rule, value)?,
            Shape::Array => self.array_valid(rule, value)?,
            Shape::String(text) => match &rule.pattern {
                Some(pattern) => pattern.is_match(text)?,
                None => true,
            },
            Shape::Number(number) => number_valid(rule, number),
            Shape::Null | Shape::Bool(_) => true,
        };
        if !own {
            return Some(false);
        }
        if rule.one_of.is_empty() {
            return Some(true);
        }
        let mut matched = 0;
        for &option in &rule.one_of {
            if self.valid(option, value)? {
                matched += 1;
            }
        }
        Some(matched == 1)
    }

    fn object_valid<'a, I: Instance<'a>>(&self, rule: &Rule, object: I) -> Option<bool> {
        for name in &rule.required {
            if !object.has_key(name)? {
                return Some(false);
            }
        }
        for (name, value) in object.entries() {
            let mut evaluated = false;
            if let Some(&schema) = rule.properties.get(name) {
                evaluated = true;
                if !self.valid(schema, value)? {
                    return Some(false);
                }
            }
            for (pattern, schema) in &rule.pattern_properties {
                if pattern.is_match(name)? {
                    evaluated = true;
                    if !self.valid(*schema, value)? {
                        return Some(false);
                    }
                }
            }
            if !evaluated {
                if !rule.additional_allowed {
                    return Some(false);
                }
                if let Some(schema) = rule.additional
                    && !self.valid(schema, value)?
                {
                    return Some(false);
                }
            }
        }
        Some(true)
    }

    fn array_valid<'a, I: Instance<'a>>(&self, rule: &Rule, array: I) -> Option<bool> {
        if rule.unique_items && !array.items_unique()? {
            return Some(false);
        }
        if let Some(schema) = rule.items {
            for item in array.items() {
                if !self.valid(schema, item)? {
                    return Some(false);
                }
            }
        }
        Some(true)
    }
}

/// What the checker reads of a value besides its children.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(&'a str),
    Array,
    Object,
}

impl Shape<'_> {
    /// The type bits the value satisfies: a number with no fraction is
    /// also an `integer`, as boon's `is_integer` says.
    fn type_bits(&self) -> u8 {
        match self {
            Shape::Null => TYPE_NULL,
            Shape::Bool(_) => TYPE_BOOLEAN,
            Shape::Number(n) => {
                let integer =
                    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
                if integer {
                    TYPE_NUMBER | TYPE_INTEGER
                } else {
                    TYPE_NUMBER
                }
            }
            Shape::String(_) => TYPE_STRING,
            Shape::Array => TYPE_ARRAY,
            Shape::Object => TYPE_OBJECT,
        }
    }

    /// Whether a scalar of this shape equals `value` as boon's `equals`
    /// compares them; `None` for a collection.
    fn scalar_equals(&self, value: &Value) -> Option<bool> {
        Some(match (self, value) {
            (Shape::Null, Value::Null) => true,
            (Shape::Bool(a), Value::Bool(b)) => a == b,
            (Shape::Number(a), Value::Number(b)) => numbers_equal(a, b),
            (Shape::String(a), Value::String(b)) => *a == b,
            (Shape::Array | Shape::Object, _) => return None,
            _ => false,
        })
    }
}

/// A value the checker can judge without making it a [`Value`] first: a
/// JSON value, or a YAML node read as the tool reads it. Every method may
/// answer `None`, "cannot tell", which the checker passes on (boon then
/// decides on the value made in full).
pub(crate) trait Instance<'a>: Copy + 'a {
    fn shape(self) -> Option<Shape<'a>>;
    /// A mapping's entries (nothing for any other value).
    fn entries(self) -> impl Iterator<Item = (&'a str, Self)>;
    /// A sequence's items (nothing for any other value).
    fn items(self) -> impl Iterator<Item = Self>;
    fn has_key(self, name: &str) -> Option<bool>;
    /// The value in full, for the comparisons of `enum` and `uniqueItems`.
    fn to_value(self) -> Option<Value>;

    /// Whether the value (of `shape`) equals `other`, as boon compares.
    fn equals(self, shape: &Shape<'a>, other: &Value) -> Option<bool> {
        match shape.scalar_equals(other) {
            Some(equal) => Some(equal),
            None => Some(equals(&self.to_value()?, other)),
        }
    }

    /// Whether no two items of a sequence are equal.
    fn items_unique(self) -> Option<bool> {
        let items = self
            .items()
            .map(|i| i.to_value())
            .collect::<Option<Vec<_>>>()?;
        Some(
            !items
                .iter()
                .enumerate()
                .any(|(i, a)| items[i + 1..].iter().any(|b| equals(a, b))),
        )
    }
}

impl<'a> Instance<'a> for &'a Value {
    fn shape(self) -> Option<Shape<'a>> {
        Some(match self {
            Value::Null => Shape::Null,
            Value::Bool(b) => Shape::Bool(*b),
            Value::Number(n) => Shape::Number(n.clone()),
            Value::String(s) => Shape::String(s),
            Value::Array(_) => Shape::Array,
            Value::Object(_) => Shape::Object,
        })
    }

    fn entries(self) -> impl Iterator<Item = (&'a str, Self)> {
        self.as_object()
            .into_iter()
            .flat_map(|object| object.iter().map(|(k, v)| (k.as_str(), v)))
    }

    fn items(self) -> impl Iterator<Item = Self> {
        self.as_array().into_iter().flatten()
    }

    fn has_key(self, name: &str) -> Option<bool> {
        Some(self.as_object().is_some_and(|o| o.contains_key(name)))
    }

    fn to_value(self) -> Option<Value> {
        Some(self.clone())
    }

    fn equals(self, _: &Shape<'a>, other: &Value) -> Option<bool> {
        Some(equals(self, other))
    }

    fn items_unique(self) -> Option<bool> {
        let items = self.as_array().map_or(&[][..], Vec::as_slice);
        Some(
            !items
                .iter()
                .enumerate()
                .any(|(i, a)| items[i + 1..].iter().any(|b| equals(a, b))),
        )
    }
}

fn number_valid(rule: &Rule, number: &Number) -> bool {
    let Some(n) = number.as_f64() else {
        return true;
    };
    rule.minimum.is_none_or(|min| n >= min) && rule.maximum.is_none_or(|max| n <= max)
}

/// boon's `util::equals`: numbers equal as integers, else as floats.
fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equals(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, a)| y.get(key).is_some_and(|b| equals(a, b)))
        }
        _ => a == b,
    }
}

/// Numbers equal as integers, else as floats.
fn numbers_equal(x: &Number, y: &Number) -> bool {
    if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
        return x == y;
    }
    matches!((x.as_f64(), y.as_f64()), (Some(x), Some(y)) if x == y)
}

struct Compiling<'s> {
    root: &'s Value,
    rules: Vec<Rule>,
    /// Rules already made for a `$ref` target, by JSON pointer.
    by_pointer: HashMap<String, usize>,
}

impl<'s> Compiling<'s> {
    /// A new rule for `schema` (compiled at once), by its index.
    fn rule(&mut self, schema: &'s Value) -> Option<usize> {
        let index = self.rules.len();
        self.rules.push(Rule::default());
        self.fill(index, schema)?;
        Some(index)
    }

    fn fill(&mut self, index: usize, schema: &'s Value) -> Option<()> {
        let object = match schema {
            Value::Bool(boolean) => {
                self.rules[index].boolean = Some(*boolean);
                return Some(());
            }
            Value::Object(object) => object,
            _ => return None,
        };
        let mut rule = Rule {
            additional_allowed: true,
            ..Rule::default()
        };
        if let Some(reference) = object.get("$ref") {
            rule.reference = Some(self.reference(reference.as_str()?)?);
            self.rules[index] = rule;
            return Some(());
        }
        for (keyword, value) in object {
            match keyword.as_str() {
                "type" => rule.types = types(value)?,
                "enum" => rule.enumeration = Some(value.as_array()?.clone()),
                "minimum" => rule.minimum = Some(value.as_f64()?),
                "maximum" => rule.maximum = Some(value.as_f64()?),
                "pattern" => rule.pattern = Some(Pattern::new(value.as_str()?)?),
                "required" => {
                    rule.required = value
                        .as_array()?
                        .iter()
                        .map(|name| name.as_str().map(str::to_string))
                        .collect::<Option<_>>()?;
                }
                "properties" => {
                    for (name, schema) in value.as_object()? {
                        let schema = self.rule(schema)?;
                        rule.properties.insert(name.clone(), schema);
                    }
                }
                "patternProperties" => {
                    for (pattern, schema) in value.as_object()? {
                        let schema = self.rule(schema)?;
                        rule.pattern_properties
                            .push((Pattern::new(pattern)?, schema));
                    }
                }
                "additionalProperties" if value.is_object() => {
                    rule.additional = Some(self.rule(value)?);
                }
                "additionalProperties" => rule.additional_allowed = value.as_bool()?,
                "items" if value.is_object() || value.is_boolean() => {
                    rule.items = Some(self.rule(value)?);
                }
                "uniqueItems" => rule.unique_items = value.as_bool()?,
                "oneOf" => {
                    for option in value.as_array()? {
                        let option = self.rule(option)?;
                        rule.one_of.push(option);
                    }
                }
                known if ANNOTATIONS.contains(&known) => {}
                _ => return None,
            }
        }
        self.rules[index] = rule;
        Some(())
    }

    /// The rule a `$ref` names: only `#/definitions/…` in the same
    /// document, which is all the vendored schema refers to.
    fn reference(&mut self, reference: &str) -> Option<usize> {
        let pointer = reference.strip_prefix('#')?;
        if let Some(&index) = self.by_pointer.get(pointer) {
            return Some(index);
        }
        if !pointer.starts_with("/definitions/") || pointer.contains('~') || pointer.contains('%') {
            return None;
        }
        let target = self.root.pointer(pointer)?;
        let index = self.rules.len();
        self.rules.push(Rule::default());
        // Registered before it is filled, so that a recursive definition
        // refers to itself.
        self.by_pointer.insert(pointer.to_string(), index);
        self.fill(index, target)?;
        Some(index)
    }
}

fn types(value: &Value) -> Option<u8> {
    let one = |name: &str| -> Option<u8> {
        Some(match name {
            "null" => TYPE_NULL,
            "boolean" => TYPE_BOOLEAN,
            "number" => TYPE_NUMBER,
            "integer" => TYPE_INTEGER,
            "string" => TYPE_STRING,
            "array" => TYPE_ARRAY,
            "object" => TYPE_OBJECT,
            _ => return None,
        })
    };
    match value {
        Value::String(name) => one(name),
        Value::Array(names) => names
            .iter()
            .try_fold(0, |bits, name| Some(bits | one(name.as_str()?)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::Checker;
    use crate::compose::{compile, schema_json};
    use serde_json::{Value, json};

    /// A project that uses most of the schema's shapes, valid as a whole.
    fn base() -> Value {
        serde_json::from_str(
            r#"{
            "name": "demo",
            "x-common": {"anything": [1, "a"]},
            "include": ["other.yaml", {"path": ["a.yaml", "b.yaml"], "env_file": ".env"}],
            "services": {
                "trainer": {
                    "image": "pytorch/pytorch:2.3.0",
                    "build": {"context": ".", "args": {"A": "1"}, "ulimits": {"nofile": 1024}},
                    "command": ["torchrun", "--nproc_per_node=8", "train.py"],
                    "entrypoint": "/bin/sh -c",
                    "environment": {"NCCL_DEBUG": "INFO", "EMPTY": null, "N": 1},
                    "env_file": [".env", {"path": "b.env", "required": false}],
                    "shm_size": "8gb",
                    "ipc": "host",
                    "gpus": "all",
                    "ulimits": {"memlock": -1, "stack": {"soft": 67108864, "hard": 67108864}},
                    "deploy": {
                        "replicas": 1,
                        "resources": {
                            "limits": {"cpus": "4", "memory": "16g", "pids": 100},
                            "reservations": {"devices": [
                                {"driver": "nvidia", "count": "all", "capabilities": ["gpu"]},
                                {"device_ids": ["0", "1"], "capabilities": ["gpu", "utility"], "options": {"a": "b"}}
                            ]}
                        },
                        "restart_policy": {"condition": "on-failure", "max_attempts": 3}
                    },
                    "volumes": [
                        "./data:/data:ro",
                        {"type": "bind", "source": ".", "target": "/src", "bind": {"propagation": "rprivate"}},
                        {"type": "tmpfs", "target": "/tmp", "tmpfs": {"size": 1024}},
                        {"type": "volume", "source": "cache", "target": "/cache", "volume": {"nocopy": true}}
                    ],
                    "ports": ["8080:80", 9000, {"target": 80, "published": "8081", "protocol": "tcp"}],
                    "expose": ["3000", 3001],
                    "depends_on": {"db": {"condition": "service_healthy", "restart": true}},
                    "networks": {"front": {"aliases": ["t"], "ipv4_address": "10.0.0.2"}, "back": null},
                    "healthcheck": {"test": ["CMD", "true"], "interval": "5s", "retries": 3},
                    "labels": ["a=b"],
                    "tmpfs": ["/run"],
                    "cap_add": ["IPC_LOCK"],
                    "devices": ["/dev/infiniband:/dev/infiniband", {"source": "/dev/a", "target": "/dev/b"}],
                    "sysctls": {"net.core.somaxconn": 1024},
                    "logging": {"driver": "json-file", "options": {"max-size": "10m"}},
                    "profiles": ["gpu"],
                    "init": true,
                    "runtime": "nvidia",
                    "privileged": false,
                    "cpus": 2.5,
                    "mem_limit": "1g",
                    "secrets": ["token", {"source": "key", "target": "/run/key", "mode": 256}],
                    "extends": {"service": "base", "file": "base.yaml"},
                    "develop": {"watch": [{"path": "./src", "action": "sync", "target": "/src"}]},
                    "x-extra": true
                },
                "db": {"image": "postgres", "depends_on": ["cache"], "networks": ["back"], "gpus": [{"driver": "nvidia", "count": 1}]},
                "cache": {"build": ".", "image": "redis", "extends": "db"}
            },
            "networks": {"front": {"driver": "bridge", "ipam": {"config": [{"subnet": "10.0.0.0/24"}]}}, "back": {"external": true}},
            "volumes": {"cache": {}, "ext": {"external": true, "name": "x"}},
            "secrets": {"token": {"file": "./token"}, "key": {"environment": "KEY"}},
            "configs": {"conf": {"content": "a"}}
        }"#,
        )
        .expect("the base project is JSON")
    }

    /// Values of every JSON type and the edges the schema's keywords test.
    fn pool() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(1),
            json!(-1),
            json!(1.5),
            json!(1000.0),
            json!(4294967296u64),
            json!(""),
            json!("x"),
            json!("all"),
            json!("x-a"),
            json!("1"),
            json!("a b\n"),
            json!("host"),
            json!([]),
            json!([1]),
            json!(["a"]),
            json!(["a", "a"]),
            json!([1, 1.0]),
            json!({}),
            json!({"a": 1}),
            json!({"x-a": 1}),
            json!({"a": null}),
        ]
    }

    /// Every property name the schema declares, and two it does not.
    fn names(schema: &Value, into: &mut Vec<String>) {
        match schema {
            Value::Object(object) => {
                for (keyword, value) in object {
                    if keyword == "properties"
                        && let Some(properties) = value.as_object()
                    {
                        into.extend(properties.keys().cloned());
                    }
                    names(value, into);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| names(item, into)),
            _ => {}
        }
    }

    /// Every mutation of `base` by one change: a value replaced, a key
    /// removed, a key added, an item repeated.
    fn mutations(base: &Value, keys: &[String], pool: &[Value], out: &mut Vec<Value>) {
        fn walk(
            root: &Value,
            pointer: String,
            node: &Value,
            keys: &[String],
            pool: &[Value],
            out: &mut Vec<Value>,
        ) {
            let mut with = |change: &dyn Fn(&mut Value)| {
                let mut copy = root.clone();
                change(
                    copy.pointer_mut(&pointer)
                        .expect("the pointer is in the copy"),
                );
                out.push(copy);
            };
            for value in pool {
                with(&|at: &mut Value| *at = value.clone());
            }
            match node {
                Value::Object(object) => {
                    for key in object.keys() {
                        with(&|at: &mut Value| {
                            at.as_object_mut().unwrap().shift_remove(key);
                        });
                    }
                    for (n, key) in keys.iter().enumerate() {
                        let value = pool[n % pool.len()].clone();
                        with(&|at: &mut Value| {
                            at.as_object_mut()
                                .unwrap()
                                .insert(key.clone(), value.clone());
                        });
                    }
                    for (key, child) in object {
                        let escaped = key.replace('~', "~0").replace('/', "~1");
                        walk(root, format!("{pointer}/{escaped}"), child, keys, pool, out);
                    }
                }
                Value::Array(items) => {
                    if let Some(first) = items.first() {
                        with(&|at: &mut Value| at.as_array_mut().unwrap().push(first.clone()));
                    }
                    for (i, child) in items.iter().enumerate() {
                        walk(root, format!("{pointer}/{i}"), child, keys, pool, out);
                    }
                }
                _ => {}
            }
        }
        walk(base, String::new(), base, keys, pool, out);
    }

    #[test]
    fn agrees_with_boon_on_generated_instances() {
        let checker = Checker::new(schema_json()).expect("the vendored schema has a quick checker");
        let (schemas, index) = compile("compose-spec.json").expect("the schema compiles");
        let mut keys = Vec::new();
        names(schema_json(), &mut keys);
        keys.sort();
        keys.dedup();
        keys.extend(["x-added".to_string(), "not_a_setting".to_string()]);
        let base = base();
        assert!(
            schemas.validate(&base, index).is_ok(),
            "the base project is valid"
        );
        let mut cases = Vec::new();
        mutations(&base, &keys, &pool(), &mut cases);
        let (mut accepted, mut disagreements) = (0, Vec::new());
        for case in &cases {
            let boon = schemas.validate(case, index).is_ok();
            let quick = checker.accepts(case);
            if quick != Some(boon) {
                disagreements.push(format!("quick {quick:?}, boon {boon}: {case}"));
            }
            accepted += usize::from(boon);
        }
        assert!(
            disagreements.is_empty(),
            "{} of {} cases disagree, the first: {}",
            disagreements.len(),
            cases.len(),
            disagreements[0]
        );
        // Both verdicts are tested, each many times.
        assert!(
            accepted > 1000 && cases.len() - accepted > 1000,
            "{accepted} of {}",
            cases.len()
        );
    }
}
