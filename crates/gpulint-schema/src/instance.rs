//! A merged Compose tree as the JSON value compose-go validates: YAML's
//! types as go-yaml v3 resolves them, interpolated strings cast where
//! compose-go's interpolation casts them, and the way back from an error's
//! instance location to the node that wrote the value.

use crate::DecidedBy;
use crate::quick::{Instance, Shape};
use crate::syntax::tree::{Interpolated, Kind, Node, Src};
use crate::syntax::yaml::{self, NodeId, Style, Yaml};
use serde_json::{Map, Number, Value};

/// A part of a path through the tree: a mapping key or a sequence item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    Item(usize),
}

/// A value the tree cannot become: a string compose-go's interpolation
/// fails to cast (`ulimits: {memlock: unlimited}`), in compose-go's words.
#[derive(Debug, Clone)]
pub(crate) struct CastError<'a> {
    pub message: String,
    pub node: &'a Node,
    pub path: Vec<String>,
}

/// What converting a tree gives: the JSON value, or the first cast
/// compose-go refuses (interpolation runs before the schema).
pub(crate) fn to_json<'a>(root: &'a Node, casts: &[&[&str]]) -> Result<Value, CastError<'a>> {
    let mut path = Vec::new();
    convert(root, casts, &mut path)
}

/// A manifest as the JSON kubectl sends: sigs.k8s.io/yaml reads YAML with
/// go-yaml v2, whose plain scalars follow YAML 1.1 (`yes`, `on`, `y` are
/// booleans), then writes the value as JSON. Nothing is interpolated.
pub(crate) fn to_json_yaml_1_1(node: &Node) -> Value {
    match &node.kind {
        Kind::Mapping(entries) => Value::Object(
            entries
                .iter()
                .map(|entry| (entry.key.clone(), to_json_yaml_1_1(&entry.value)))
                .collect(),
        ),
        Kind::Sequence(items) => Value::Array(items.iter().map(|i| to_json_yaml_1_1(i)).collect()),
        Kind::Scalar { raw, style, .. } => yaml_1_1_scalar(raw, *style, node.tag.as_deref())
            .unwrap_or_else(|| Value::String(raw.clone())),
    }
}

/// A scalar as go-yaml v2 types it, `None` when it is the string `raw`.
pub(crate) fn yaml_1_1_scalar(raw: &str, style: Style, tag: Option<&str>) -> Option<Value> {
    let plain = style == Style::Plain && tag.is_none();
    if plain && let Some(boolean) = yaml_1_1_bool(raw) {
        return Some(Value::Bool(boolean));
    }
    if plain && (raw.starts_with("0o") || raw.starts_with("-0o") || raw.starts_with("+0o")) {
        // go-yaml v2 has no `0o` octal: such a word is a string.
        return None;
    }
    typed_scalar(raw, raw, style, tag)
}

/// A node of a YAML file read as [`to_json_yaml_1_1`] reads its tree, but
/// in place: the quick checker accepts most manifests without a tree or a
/// JSON value being made. An alias or a `<<` merge key is "cannot tell"
/// (the tree resolves them within its budget), as is nesting deeper than
/// the tree allows.
#[derive(Clone, Copy)]
pub(crate) struct Yaml11<'a> {
    yaml: &'a Yaml,
    node: NodeId,
    depth: u32,
}

impl<'a> Yaml11<'a> {
    /// Deeper nesting is the tree's error (`tree::Builder`'s limit).
    const MAX_DEPTH: u32 = 256;

    pub fn new(yaml: &'a Yaml, node: NodeId) -> Self {
        Yaml11 {
            yaml,
            node,
            depth: 0,
        }
    }

    fn child(self, node: NodeId) -> Self {
        Yaml11 {
            node,
            depth: self.depth + 1,
            ..self
        }
    }

    fn syntax(self) -> &'a yaml::Node {
        self.yaml.node(self.node)
    }

    /// The mapping's entries whose key is a scalar: the tree leaves the
    /// others out.
    fn pairs(self) -> impl Iterator<Item = (&'a str, NodeId)> {
        let yaml = self.yaml;
        let pairs = match &self.syntax().value {
            yaml::Value::Mapping(pairs) => pairs.as_slice(),
            _ => &[],
        };
        pairs
            .iter()
            .filter_map(move |&(key, value)| match &yaml.node(key).value {
                yaml::Value::Scalar { text, .. } => Some((text.as_str(), value)),
                _ => None,
            })
    }
}

impl<'a> Instance<'a> for Yaml11<'a> {
    fn shape(self) -> Option<Shape<'a>> {
        if self.depth > Self::MAX_DEPTH {
            return None;
        }
        let syntax = self.syntax();
        Some(match &syntax.value {
            yaml::Value::Alias(_) => return None,
            yaml::Value::Sequence(_) => Shape::Array,
            yaml::Value::Mapping(pairs) => {
                let merges = pairs.iter().any(|&(key, _)| {
                    matches!(&self.yaml.node(key).value,
                        yaml::Value::Scalar { text, style } if *style == Style::Plain && text == "<<")
                });
                if merges {
                    return None;
                }
                Shape::Object
            }
            yaml::Value::Scalar { text, style } => {
                match yaml_1_1_scalar(text, *style, syntax.tag.as_deref()) {
                    None => Shape::String(text),
                    Some(Value::Null) => Shape::Null,
                    Some(Value::Bool(b)) => Shape::Bool(b),
                    Some(Value::Number(n)) => Shape::Number(n),
                    Some(_) => return None,
                }
            }
        })
    }

    fn entries(self) -> impl Iterator<Item = (&'a str, Self)> {
        self.pairs()
            .map(move |(key, value)| (key, self.child(value)))
    }

    fn items(self) -> impl Iterator<Item = Self> {
        let items = match &self.syntax().value {
            yaml::Value::Sequence(items) => items.as_slice(),
            _ => &[],
        };
        items.iter().map(move |&item| self.child(item))
    }

    fn has_key(self, name: &str) -> Option<bool> {
        Some(self.pairs().any(|(key, _)| key == name))
    }

    fn to_value(self) -> Option<Value> {
        Some(match self.shape()? {
            Shape::Null => Value::Null,
            Shape::Bool(b) => Value::Bool(b),
            Shape::Number(n) => Value::Number(n),
            Shape::String(text) => Value::String(text.to_string()),
            Shape::Array => Value::Array(
                self.items()
                    .map(|item| item.to_value())
                    .collect::<Option<_>>()?,
            ),
            Shape::Object => {
                let mut map = Map::new();
                for (key, value) in self.entries() {
                    // The first of repeated keys, as the tree keeps.
                    if !map.contains_key(key) {
                        map.insert(key.to_string(), value.to_value()?);
                    }
                }
                Value::Object(map)
            }
        })
    }
}

/// go-yaml v2's booleans (YAML 1.1, as its `resolve` table lists them).
fn yaml_1_1_bool(raw: &str) -> Option<bool> {
    match raw {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            Some(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            Some(false)
        }
        _ => None,
    }
}

/// `path` borrows its parts from the tree: converting allocates only the
/// value itself.
fn convert<'a>(
    node: &'a Node,
    casts: &[&[&str]],
    path: &mut Vec<&'a str>,
) -> Result<Value, CastError<'a>> {
    Ok(match &node.kind {
        Kind::Mapping(entries) => {
            let mut map = Map::with_capacity(entries.len());
            for entry in entries {
                path.push(&entry.key);
                let value = convert(&entry.value, casts, path);
                path.pop();
                map.insert(entry.key.clone(), value?);
            }
            Value::Object(map)
        }
        Kind::Sequence(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                path.push("[]");
                let value = convert(item, casts, path);
                path.pop();
                out.push(value?);
            }
            Value::Array(out)
        }
        Kind::Scalar { raw, style, value } => {
            let scalar = scalar(raw, *style, value, node.tag.as_deref());
            match scalar {
                // An unknown value is not cast: what the cast would say of
                // it is the shell's to decide, and the schema still judges
                // the rest of the model.
                Value::String(text)
                    if !matches!(value, Interpolated::Unknown(_))
                        && casts.iter().any(|c| matches(c, path)) =>
                {
                    cast(&text, cast_kind(path)).map_err(|why| CastError {
                        message: format!(
                            "error while interpolating {}: failed to cast to expected type: {why}",
                            path.join(".")
                        ),
                        node,
                        path: path.iter().map(|part| part.to_string()).collect(),
                    })?
                }
                other => other,
            }
        }
    })
}

/// compose-go's `tree.Path.Matches`: `*` is any one part.
fn matches(pattern: &[&str], path: &[&str]) -> bool {
    pattern.len() == path.len() && pattern.iter().zip(path).all(|(p, s)| *p == "*" || p == s)
}

#[derive(Debug, Clone, Copy)]
enum Cast {
    Int,
    Float,
    Bool,
}

/// Which cast compose-go's `interpolateTypeCastMapping` gives a path.
fn cast_kind(path: &[&str]) -> Cast {
    let last = path.last().copied().unwrap_or("");
    match last {
        "cpu_percent" | "cpus" | "max_failure_ratio" => Cast::Float,
        "init" | "disable" | "oom_kill_disable" | "privileged" | "read_only" | "stdin_open"
        | "tty" | "nocopy" | "external" | "internal" | "attachable" | "enable_ipv4"
        | "enable_ipv6" => Cast::Bool,
        _ => Cast::Int,
    }
}

fn cast(text: &str, kind: Cast) -> Result<Value, String> {
    match kind {
        Cast::Int => {
            let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
            let parsed = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| text.parse::<i64>().ok())
                .flatten();
            match parsed {
                Some(n) => Ok(Value::Number(n.into())),
                None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                    Err(format!(
                        "strconv.Atoi: parsing {}: value out of range",
                        go_quote(text)
                    ))
                }
                None => Err(format!(
                    "strconv.Atoi: parsing {}: invalid syntax",
                    go_quote(text)
                )),
            }
        }
        Cast::Float => match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(format!(
                "strconv.ParseFloat: parsing {}: invalid syntax",
                go_quote(text)
            )),
        },
        Cast::Bool => match text.to_ascii_lowercase().as_str() {
            "true" | "y" | "yes" | "on" => Ok(Value::Bool(true)),
            "false" | "n" | "no" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("invalid boolean: {text}")),
        },
    }
}

/// Go's `strconv.Quote` for the texts a cast error shows.
fn go_quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// A scalar as go-yaml v3 decodes it into an `interface{}`, after
/// compose-go's interpolation: a value with a `$` is the string it
/// interpolates to.
fn scalar(raw: &str, style: Style, value: &Interpolated, tag: Option<&str>) -> Value {
    // A value that depends on a variable nothing here sets is kept as
    // written: a string, as Compose's would be, and still told apart from
    // the other values of its list (two mounts `${DATA}/a:/a` and
    // `${DATA}/b:/b` are not one mount because `DATA` is unknown here).
    let text = match value {
        Interpolated::Text(text) => text.as_str(),
        Interpolated::Unknown(_) | Interpolated::Invalid(_) => raw,
    };
    typed_scalar(raw, text, style, tag).unwrap_or_else(|| Value::String(text.to_string()))
}

/// What [`scalar`] makes of `raw` (interpolated to `text`) when it is not
/// a string; `None` when it is the string `text`.
fn typed_scalar(raw: &str, text: &str, style: Style, tag: Option<&str>) -> Option<Value> {
    let typed_tag = tag.map(|t| {
        t.trim_start_matches("tag:yaml.org,2002:")
            .trim_start_matches("!!")
    });
    match typed_tag {
        Some("str") => return None,
        Some("int") => {
            if let Some(n) = yaml_int(text) {
                return Some(n);
            }
        }
        _ => {}
    }
    if style != Style::Plain || raw.contains('$') || tag.is_some_and(|t| t == "!") {
        return None;
    }
    resolve_plain(raw)
}

/// go-yaml v3's `resolve` for an untagged plain scalar: `None` for a string.
fn resolve_plain(raw: &str) -> Option<Value> {
    match raw {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        _ => {}
    }
    let first = raw.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return None;
    }
    if let Some(n) = yaml_int(raw) {
        return Some(n);
    }
    let plain = without_underscores(raw);
    if is_yaml_float(&plain)
        && let Some(n) = plain.parse::<f64>().ok().and_then(Number::from_f64)
    {
        return Some(Value::Number(n));
    }
    // `.inf` and `.nan` have no JSON number: they are no string either,
    // so a string-typed setting still refuses them.
    if matches!(
        raw.trim_start_matches(['-', '+']),
        ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN"
    ) {
        return Some(Value::Number(
            Number::from_f64(f64::MAX).unwrap_or(0.into()),
        ));
    }
    None
}

/// `raw` as go-yaml reads a number: its underscores left out.
fn without_underscores(raw: &str) -> std::borrow::Cow<'_, str> {
    if raw.contains('_') {
        raw.replace('_', "").into()
    } else {
        raw.into()
    }
}

/// An integer as Go's `strconv.ParseInt(s, 0, 64)` reads it once go-yaml
/// has removed the underscores (`0x1f`, `0o17`, `017`, `0b101`).
fn yaml_int(raw: &str) -> Option<Value> {
    let plain = without_underscores(raw);
    let (negative, digits) = match plain.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, plain.strip_prefix('+').unwrap_or(&plain)),
    };
    let (radix, body) = if let Some(rest) = digits.strip_prefix("0x").or(digits.strip_prefix("0X"))
    {
        (16, rest)
    } else if let Some(rest) = digits.strip_prefix("0o").or(digits.strip_prefix("0O")) {
        (8, rest)
    } else if let Some(rest) = digits.strip_prefix("0b").or(digits.strip_prefix("0B")) {
        (2, rest)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(body, radix).ok()?;
    if negative {
        let n = i64::try_from(magnitude)
            .ok()
            .map(|m| -m)
            .or_else(|| (magnitude == 1u64 << 63).then_some(i64::MIN))?;
        Some(Value::Number(n.into()))
    } else {
        Some(Value::Number(magnitude.into()))
    }
}

/// go-yaml v3's `yamlStyleFloat`: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_yaml_float(text: &str) -> bool {
    let s = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => {
            !fraction.is_empty() && fraction.bytes().all(|b| b.is_ascii_digit())
        }
        Some((whole, fraction)) => {
            !whole.is_empty()
                && whole.bytes().all(|b| b.is_ascii_digit())
                && fraction.bytes().all(|b| b.is_ascii_digit())
        }
        None => !mantissa.is_empty() && mantissa.bytes().all(|b| b.is_ascii_digit()),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = e.strip_prefix(['-', '+']).unwrap_or(e);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

/// The node at `path`, and the key of the entry that holds it when it is
/// a mapping's value.
pub(crate) fn node_at<'a>(root: &'a Node, path: &[Step]) -> Option<(&'a Node, Option<Src>)> {
    let mut node = root;
    let mut key = None;
    for step in path {
        (node, key) = match (step, &node.kind) {
            (Step::Key(name), Kind::Mapping(_)) => {
                let entry = node.entry(name)?;
                (&*entry.value, Some(entry.key_src))
            }
            (Step::Item(index), Kind::Sequence(items)) => (&**items.get(*index)?, None),
            _ => return None,
        };
    }
    Some((node, key))
}

/// What decides the values under `node` besides their text: a variable
/// nothing here sets (the shell's to decide, when `values_matter`), or one
/// that could not be interpolated (which Compose refuses first).
pub fn decided_by(node: &Node, values_matter: bool) -> DecidedBy {
    let mut found = DecidedBy::Text;
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        match &node.kind {
            Kind::Scalar {
                value: Interpolated::Invalid(_),
                ..
            } => return DecidedBy::FailedInterpolation,
            Kind::Scalar {
                value: Interpolated::Unknown(_),
                ..
            } if values_matter => found = DecidedBy::Shell,
            Kind::Scalar { .. } => {}
            Kind::Sequence(items) => stack.extend(items.iter().map(|n| &**n)),
            Kind::Mapping(entries) => stack.extend(entries.iter().map(|e| &*e.value)),
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resolve_plain(raw: &str) -> Value {
        super::resolve_plain(raw).unwrap_or_else(|| Value::String(raw.to_string()))
    }

    #[test]
    fn plain_scalars_take_go_yamls_types() {
        assert_eq!(resolve_plain("1"), json!(1));
        assert_eq!(resolve_plain("-1"), json!(-1));
        assert_eq!(resolve_plain("0x10"), json!(16));
        assert_eq!(resolve_plain("010"), json!(8));
        assert_eq!(resolve_plain("1_000"), json!(1000));
        assert_eq!(resolve_plain("1.5"), json!(1.5));
        assert_eq!(resolve_plain("1e3"), json!(1000.0));
        assert_eq!(resolve_plain("true"), json!(true));
        assert_eq!(resolve_plain("yes"), json!("yes"));
        assert_eq!(resolve_plain("~"), json!(null));
        assert_eq!(resolve_plain("8g"), json!("8g"));
        assert_eq!(resolve_plain("1.2.3"), json!("1.2.3"));
        assert_eq!(resolve_plain("all"), json!("all"));
    }

    #[test]
    fn casts_follow_compose_gos_interpolation() {
        assert_eq!(cast("-1", Cast::Int), Ok(json!(-1)));
        assert_eq!(
            cast("unlimited", Cast::Int).unwrap_err(),
            r#"strconv.Atoi: parsing "unlimited": invalid syntax"#
        );
        assert_eq!(cast("yes", Cast::Bool), Ok(json!(true)));
        assert_eq!(cast("1.5", Cast::Float), Ok(json!(1.5)));
    }
}
