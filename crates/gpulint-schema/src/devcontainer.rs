//! The dev container specification's schema (`devContainer.base.schema.json`,
//! the one VS Code and the Dev Container CLI publish), applied to each
//! setting a `devcontainer.json` writes.
//!
//! The whole schema is a `oneOf` of the configuration's forms (an image, a
//! Dockerfile, a Compose file, none) closed by `unevaluatedProperties`, so
//! its verdict on a file mixes every form's complaints and calls any
//! setting it does not list an error: old VS Code settings (`extensions`,
//! `settings`), a tool's own keys. Neither stops a dev container. So each
//! top-level setting the schema defines is judged on its own by the
//! definition (or definitions: `shutdownAction` has one per form) that
//! gives it, and what is reported is a value of the wrong type, outside
//! its choices, or an unknown property inside an object the spec closes
//! (`hostRequirements`, `build`, a mount). A missing required property is
//! not: a setting of another form, or a partial one, is the other form's
//! business, and the CLI names what it needs.

use crate::message::location;
use crate::syntax::jsonc;
use crate::text::TextRange;
use boon::{Compiler, ErrorKind, SchemaIndex, Schemas, Type, ValidationError};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

const SCHEMA: &str = include_str!("../schemas/devContainer.base.schema.json");

/// The devcontainers/spec commit the vendored schema is from.
pub const SPEC_COMMIT: &str = "c95ffeed1d05";

/// See `compose::FAST_LOCATION`: boon skips its metaschema check here.
const FAST_LOCATION: &str = "https://json-schema.org/gpulint-vendored/devContainer.base.json";

/// The objects whose `properties` are the top-level settings, each form's
/// first: a setting two forms define is accepted when either accepts it.
const SETTINGS: &[&str] = &[
    "/definitions/devContainerCommon",
    "/definitions/nonComposeBase",
    "/definitions/composeContainer",
    "/definitions/imageContainer",
    "/definitions/dockerfileContainer/oneOf/0",
    "/definitions/dockerfileContainer/oneOf/1/allOf/0",
    "/definitions/dockerfileContainer/oneOf/1/allOf/1",
];

/// What the schema does not allow, at the value (or the key) that wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    /// What is wrong (`"runArgs" must be an array, not a string`); never a
    /// value the file writes (it may be a secret).
    pub message: String,
    /// The value, or for an unknown property its key.
    pub range: TextRange,
    /// Where in the file (`["hostRequirements", "gpu"]`).
    pub path: Vec<String>,
    pub unknown_property: bool,
}

struct Compiled {
    schemas: Schemas,
    /// Each setting and the schemas that define it, in [`SETTINGS`] order.
    settings: Vec<(String, Vec<SchemaIndex>)>,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        compile(FAST_LOCATION).expect("the vendored devContainer.base.schema.json compiles")
    })
}

fn compile(location: &str) -> Result<Compiled, Box<boon::CompileError>> {
    let json: Value =
        serde_json::from_str(SCHEMA).expect("the vendored devContainer.base.schema.json is JSON");
    let mut compiler = Compiler::new();
    compiler.add_resource(location, json.clone())?;
    let mut schemas = Schemas::new();
    let mut settings: Vec<(String, Vec<SchemaIndex>)> = Vec::new();
    for object in SETTINGS {
        let properties = json
            .pointer(&format!("{object}/properties"))
            .and_then(Value::as_object)
            .expect("each settings object of SETTINGS has properties");
        for name in properties.keys() {
            let escaped = name.replace('~', "~0").replace('/', "~1");
            let index = compiler.compile(
                &format!("{location}#{object}/properties/{escaped}"),
                &mut schemas,
            )?;
            match settings.iter_mut().find(|(known, _)| known == name) {
                Some((_, indexes)) => indexes.push(index),
                None => settings.push((name.clone(), vec![index])),
            }
        }
    }
    Ok(Compiled { schemas, settings })
}

/// The top-level settings the schema defines, and where: each as
/// `(name, [JSON pointer of each definition])`, the first form's first.
pub fn settings() -> Vec<(String, Vec<String>)> {
    let json: Value = serde_json::from_str(SCHEMA).expect("the vendored schema is JSON");
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for object in SETTINGS {
        let properties = json
            .pointer(&format!("{object}/properties"))
            .and_then(Value::as_object)
            .expect("each settings object of SETTINGS has properties");
        for name in properties.keys() {
            let escaped = name.replace('~', "~0").replace('/', "~1");
            let pointer = format!("{object}/properties/{escaped}");
            match out.iter_mut().find(|(known, _)| known == name) {
                Some((_, pointers)) => pointers.push(pointer),
                None => out.push((name.clone(), vec![pointer])),
            }
        }
    }
    out
}

/// What the schema does not allow in the settings of `root` (the file's
/// top-level object), in the file's order.
pub fn validate(root: &jsonc::Value) -> Vec<SettingError> {
    let jsonc::Kind::Object(members) = &root.kind else {
        return Vec::new();
    };
    let compiled = compiled();
    // JSON.parse keeps the last of repeated keys: only it is read.
    let last: HashMap<&str, usize> = members
        .iter()
        .enumerate()
        .map(|(at, member)| (member.key.as_str(), at))
        .collect();
    let mut out = Vec::new();
    for (at, member) in members.iter().enumerate() {
        if last[member.key.as_str()] != at {
            continue;
        }
        let Some((_, indexes)) = compiled
            .settings
            .iter()
            .find(|(name, _)| *name == member.key)
        else {
            continue;
        };
        let mut first_refusal = None;
        let accepted = indexes.iter().any(|&index| {
            match judge(&compiled.schemas, index, &member.key, &member.value) {
                Ok(()) => true,
                Err(errors) => {
                    first_refusal.get_or_insert(errors);
                    false
                }
            }
        });
        if !accepted {
            out.extend(first_refusal.unwrap_or_default());
        }
    }
    out
}

/// The most values one setting has written as text before it is judged.
const MOST_COERCED: usize = 64;

/// Whether the definition at `index` accepts a setting's value, as DEV001
/// reads it: a number or a boolean where the schema wants a string is the
/// text JavaScript writes of it (the CLI's `-e N=${value}`), and is judged
/// as that text; the errors left, in DEV001's terms.
fn judge(
    schemas: &Schemas,
    index: SchemaIndex,
    setting: &str,
    written: &jsonc::Value,
) -> Result<(), Vec<SettingError>> {
    let mut value = to_json(written);
    for _ in 0..MOST_COERCED {
        let textual = match schemas.validate(&value, index) {
            Ok(()) => return Ok(()),
            Err(error) => {
                let mut textual = Vec::new();
                written_as_text(&error, &mut textual);
                // The same place may fail in several options.
                textual.sort_unstable();
                textual.dedup();
                if textual.is_empty() {
                    return refusal(&error, setting, written);
                }
                textual
            }
        };
        for path in textual {
            as_text(&mut value, &path);
        }
    }
    match schemas.validate(&value, index) {
        Ok(()) => Ok(()),
        Err(error) => refusal(&error, setting, written),
    }
}

fn refusal(
    error: &ValidationError,
    setting: &str,
    written: &jsonc::Value,
) -> Result<(), Vec<SettingError>> {
    let mut leaves = Vec::new();
    collect(error, &mut leaves);
    let mut members = Members::default();
    // Only missing properties: a partial setting, not refused here.
    if leaves.is_empty() {
        return Ok(());
    }
    let mut errors = leaves
        .iter()
        .flat_map(|leaf| setting_errors(leaf, setting, written, &mut members))
        .collect::<Vec<_>>();
    // A property whose value fails counts as unevaluated too
    // (`unevaluatedProperties`): its value's error says it.
    let failing: std::collections::HashSet<&[String]> = errors
        .iter()
        .filter(|e| !e.unknown_property)
        .flat_map(|e| (1..=e.path.len()).map(|n| &e.path[..n]))
        .collect();
    let hidden: Vec<bool> = errors
        .iter()
        .map(|e| e.unknown_property && failing.contains(e.path.as_slice()))
        .collect();
    let mut hidden = hidden.into_iter();
    errors.retain(|_| !hidden.next().unwrap_or(false));
    Err(errors)
}

/// Where, anywhere in the tree of causes, a number or a boolean stands
/// where only a string is allowed.
fn written_as_text(error: &ValidationError, out: &mut Vec<Vec<String>>) {
    if let ErrorKind::Type { got, want } = &error.kind
        && want.iter().all(|t| t == Type::String)
        && matches!(got, Type::Number | Type::Integer | Type::Boolean)
    {
        out.push(location(error));
    }
    for cause in &error.causes {
        written_as_text(cause, out);
    }
}

/// The value at `path` replaced by the text JavaScript's `String()` gives it.
fn as_text(value: &mut Value, path: &[String]) {
    let mut node = value;
    for step in path {
        node = match node {
            Value::Object(map) => match map.get_mut(step) {
                Some(next) => next,
                None => return,
            },
            Value::Array(items) => {
                match step.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    Some(next) => next,
                    None => return,
                }
            }
            _ => return,
        };
    }
    let text = match node {
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return,
    };
    *node = Value::String(text);
}

/// The errors at the ends of the tree of causes, without missing
/// properties; a `oneOf` or `anyOf` is one error however its options fail,
/// and none when an option fails only for a missing property.
fn collect<'e, 's, 'v>(
    error: &'e ValidationError<'s, 'v>,
    out: &mut Vec<&'e ValidationError<'s, 'v>>,
) {
    match &error.kind {
        ErrorKind::Required { .. } => {}
        ErrorKind::OneOf(_) | ErrorKind::AnyOf => {
            let options: Vec<Vec<&ValidationError>> = error
                .causes
                .iter()
                .map(|cause| {
                    let mut leaves = Vec::new();
                    collect(cause, &mut leaves);
                    leaves
                })
                .collect();
            // An option that fails only for a missing property: partial.
            if options.iter().any(Vec::is_empty) {
                return;
            }
            // The one option of the value's own type (a mount as an
            // object, not a string) says what is wrong inside it.
            let at = error.instance_location.tokens.len();
            let fitting: Vec<&Vec<&ValidationError>> = options
                .iter()
                .filter(|leaves| {
                    !leaves.iter().all(|leaf| {
                        matches!(leaf.kind, ErrorKind::Type { .. } | ErrorKind::Enum { .. })
                            && leaf.instance_location.tokens.len() == at
                    })
                })
                .collect();
            match fitting.as_slice() {
                [only] => out.extend(only.iter().copied()),
                _ => out.push(error),
            }
        }
        _ if error.causes.is_empty() => out.push(error),
        _ => error.causes.iter().for_each(|cause| collect(cause, out)),
    }
}

fn setting_errors<'a>(
    error: &ValidationError,
    setting: &str,
    value: &'a jsonc::Value,
    members: &mut Members<'a>,
) -> Vec<SettingError> {
    let mut path = vec![setting.to_string()];
    path.extend(location(error));
    let node = members.value_at(value, &path[1..]).unwrap_or(value);
    match &error.kind {
        ErrorKind::AdditionalProperties { got } => got
            .iter()
            .map(|name| {
                let mut field = path.clone();
                field.push(name.to_string());
                SettingError {
                    message: format!("unknown property \"{}\"", field_path(&field)),
                    range: members
                        .get(node, name)
                        .map(|m| m.key_range)
                        .unwrap_or(node.range),
                    path: field,
                    unknown_property: true,
                }
            })
            .collect(),
        // `unevaluatedProperties: false`: the error is at the property.
        ErrorKind::FalseSchema if path.len() > 1 => {
            let parent = members
                .value_at(value, &path[1..path.len() - 1])
                .unwrap_or(value);
            let name = path.last().map(String::as_str).unwrap_or_default();
            vec![SettingError {
                message: format!("unknown property \"{}\"", field_path(&path)),
                range: members
                    .get(parent, name)
                    .map(|m| m.key_range)
                    .unwrap_or(node.range),
                path,
                unknown_property: true,
            }]
        }
        _ => vec![SettingError {
            message: words(error, &path),
            range: node.range,
            path,
            unknown_property: false,
        }],
    }
}

/// The members of the objects errors are in, by name (the last of
/// repeated keys), made once per object: a file with thousands of errors
/// in one object must not scan it for each.
#[derive(Default)]
struct Members<'a> {
    by_object: HashMap<u32, HashMap<&'a str, &'a jsonc::Member>>,
}

impl<'a> Members<'a> {
    fn get(&mut self, object: &'a jsonc::Value, name: &str) -> Option<&'a jsonc::Member> {
        let jsonc::Kind::Object(members) = &object.kind else {
            return None;
        };
        self.by_object
            .entry(object.range.start)
            .or_insert_with(|| members.iter().map(|m| (m.key.as_str(), m)).collect())
            .get(name)
            .copied()
    }

    /// The value at `path` (keys and item indexes) under `value`.
    fn value_at(&mut self, value: &'a jsonc::Value, path: &[String]) -> Option<&'a jsonc::Value> {
        let mut node = value;
        for step in path {
            node = match &node.kind {
                jsonc::Kind::Object(_) => &self.get(node, step)?.value,
                jsonc::Kind::Array(items) => items.get(step.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }
}

/// A value as `JSON.parse` gives it (the last of repeated keys).
fn to_json(value: &jsonc::Value) -> Value {
    match &value.kind {
        jsonc::Kind::Object(members) => {
            let mut map = Map::with_capacity(members.len());
            for member in members {
                map.insert(member.key.clone(), to_json(&member.value));
            }
            Value::Object(map)
        }
        jsonc::Kind::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        jsonc::Kind::String(text) => Value::String(text.clone()),
        jsonc::Kind::Number(text) => serde_json::from_str::<Number>(text)
            .ok()
            .or_else(|| text.parse::<f64>().ok().and_then(Number::from_f64))
            .map_or(Value::Null, Value::Number),
        jsonc::Kind::Bool(b) => Value::Bool(*b),
        jsonc::Kind::Null => Value::Null,
    }
}

/// `hostRequirements.gpu`, `mounts[0].type`.
pub fn field_path(path: &[String]) -> String {
    let mut out = String::new();
    for part in path {
        if !out.is_empty() && !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(part);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

/// What is wrong, in words that never repeat the value.
fn words(error: &ValidationError, path: &[String]) -> String {
    let field = format!("\"{}\"", field_path(path));
    match &error.kind {
        ErrorKind::Type { got, want } => {
            format!(
                "{field} must be {}, not {}",
                wanted(want.iter().collect()),
                a_type(*got)
            )
        }
        ErrorKind::Enum { want } => format!("{field} must be {}", choices(want)),
        ErrorKind::OneOf(_) | ErrorKind::AnyOf => {
            let options: Vec<String> = error
                .causes
                .iter()
                .filter_map(|cause| match &cause.kind {
                    ErrorKind::Type { want, .. } => Some(wanted(want.iter().collect())),
                    ErrorKind::Enum { want } => Some(choices(want)),
                    _ => None,
                })
                .collect();
            if options.is_empty() {
                format!("{field} is in none of the forms the spec allows")
            } else {
                format!("{field} must be {}", options.join(", or "))
            }
        }
        ErrorKind::Pattern { want, .. } => {
            format!("{field} does not match the spec's pattern `{want}`")
        }
        ErrorKind::Minimum { want, .. } => format!("{field} must be at least {want}"),
        ErrorKind::Maximum { want, .. } => format!("{field} must be at most {want}"),
        ErrorKind::FalseSchema => format!("{field} is not allowed"),
        _ => format!("{field} is not a value the spec allows"),
    }
}

fn choices(values: &[Value]) -> String {
    let all: Vec<String> = values.iter().map(Value::to_string).collect();
    match all.split_last() {
        None => "one of no values".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

fn wanted(types: Vec<Type>) -> String {
    let mut names: Vec<&str> = types.into_iter().map(a_type).collect();
    names.dedup();
    match names.split_last() {
        None => "a value".to_string(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

fn a_type(kind: Type) -> &'static str {
    match kind {
        Type::Null => "null",
        Type::Boolean => "a boolean",
        Type::Number => "a number",
        Type::Integer => "an integer",
        Type::String => "a string",
        Type::Array => "an array",
        Type::Object => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::{compile, validate};

    fn refused(text: &str) -> Vec<String> {
        let json = crate::syntax::jsonc::parse(text).expect("JSONC");
        validate(&json.root)
            .into_iter()
            .map(|e| e.message)
            .collect()
    }

    /// Compiled where boon checks it against draft 2019-09's metaschema.
    #[test]
    fn the_vendored_schema_is_valid_draft_2019_09() {
        if let Err(error) = compile("devContainer.base.schema.json") {
            panic!("the vendored schema fails its metaschema: {error:#}");
        }
    }

    #[test]
    fn each_setting_by_its_definition() {
        let none: Vec<String> = Vec::new();
        // A healthy GPU configuration, with comments and trailing commas.
        assert_eq!(
            refused(
                r#"{
                // The image's CUDA matches the host's driver.
                "image": "nvcr.io/nvidia/pytorch:24.01-py3",
                "runArgs": ["--gpus=all", "--ipc=host",],
                "hostRequirements": {"gpu": "optional", "cpus": 8, "memory": "64gb"},
                "mounts": ["source=cache,target=/cache,type=volume", {"type": "bind", "source": "/data", "target": "/data"}],
                "containerEnv": {"NCCL_DEBUG": "INFO"},
                "shutdownAction": "none",
                "extensions": ["ms-python.python"],
                "hostname": "dev",
            }"#
            ),
            none
        );
        assert_eq!(
            refused(r#"{"image": "i", "runArgs": "--gpus all"}"#),
            [r#""runArgs" must be an array, not a string"#]
        );
        assert_eq!(
            refused(r#"{"image": "i", "hostRequirements": {"gpu": "yes"}}"#),
            [r#""hostRequirements.gpu" must be true, false or "optional", or an object"#]
        );
        assert_eq!(
            refused(r#"{"image": "i", "hostRequirements": {"gpus": true}}"#),
            [r#"unknown property "hostRequirements.gpus""#]
        );
        // JavaScript writes `8` as the text `8`.
        assert_eq!(refused(r#"{"image": "i", "containerEnv": {"N": 8}}"#), none);
        assert_eq!(
            refused(r#"{"image": "i", "containerEnv": {"N": ["8"]}}"#),
            [r#""containerEnv.N" must be a string, not an array"#]
        );
        assert_eq!(
            refused(r#"{"image": "i", "hostRequirements": {"memory": "64GB"}}"#),
            [r#""hostRequirements.memory" does not match the spec's pattern `^[0-9]+([tgmk]b)?$`"#]
        );
        // A compose configuration's own shutdown action, and a setting of
        // either form, are each accepted.
        assert_eq!(
            refused(
                r#"{"dockerComposeFile": "c.yml", "service": "s", "shutdownAction": "stopCompose"}"#
            ),
            none
        );
        assert_eq!(refused(r#"{"shutdownAction": "stopContainer"}"#), none);
        assert_eq!(
            refused(r#"{"image": "i", "shutdownAction": "stop"}"#),
            [r#""shutdownAction" must be "none" or "stopContainer""#]
        );
        // A Dockerfile written either way; a mount missing what it needs
        // is left to the CLI.
        assert_eq!(
            refused(r#"{"build": {"dockerfile": "Dockerfile", "context": ".."}}"#),
            none
        );
        assert_eq!(
            refused(r#"{"dockerFile": "Dockerfile", "build": {"args": {"A": "1"}}}"#),
            none
        );
        assert_eq!(
            refused(r#"{"image": "i", "mounts": [{"source": "a"}]}"#),
            none
        );
        assert_eq!(
            refused(r#"{"build": {"dockerfile": "Dockerfile", "args": ["A=1"]}}"#),
            [r#""build.args" must be an object, not an array"#]
        );
    }

    #[test]
    fn errors_are_at_the_value_or_the_key() {
        let text = r#"{"image": "i", "hostRequirements": {"gpus": true, "cpus": "8"}}"#;
        let json = crate::syntax::jsonc::parse(text).unwrap();
        let errors = validate(&json.root);
        let mut at: Vec<&str> = errors
            .iter()
            .map(|e| &text[e.range.start as usize..e.range.end as usize])
            .collect();
        at.sort();
        assert_eq!(at, ["\"8\"", "\"gpus\""]);
    }
}
