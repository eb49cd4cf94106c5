//! The error Compose prints for a schema error tree, in its words:
//! compose-go's `schema.Validate` keeps the most specific cause (the
//! deepest instance location, an unknown property one deeper; the first of
//! equals) and words it as santhosh-tekuri/jsonschema v6 does in English,
//! except for types (`must be a mapping`) and bounds, which compose-go
//! words itself (`schema/schema.go`, `kind/kind.go`).

use crate::instance::Step;
use boon::{ErrorKind, InstanceToken, Type, Types, ValidationError};
use serde_json::Value;

/// compose-go's `getMostSpecificError`, except that an error `known`
/// rejects (one about a value the shell decides) loses to any other: the
/// one reported is then a refusal whatever the shell sets.
pub(crate) fn most_specific<'e, 's, 'v>(
    error: &'e ValidationError<'s, 'v>,
    known: &dyn Fn(&ValidationError) -> bool,
) -> &'e ValidationError<'s, 'v> {
    if error.causes.is_empty() {
        return error;
    }
    let rank = |e: &ValidationError| (known(e), specificity(e));
    let mut best: Option<&ValidationError> = None;
    for cause in &error.causes {
        let cause = most_specific(cause, known);
        if best.is_none_or(|b| rank(cause) > rank(b)) {
            best = Some(cause);
        }
    }
    best.unwrap_or(error)
}

fn specificity(error: &ValidationError) -> usize {
    let depth = error.instance_location.tokens.len();
    match error.kind {
        ErrorKind::AdditionalProperties { .. } => depth + 1,
        _ => depth,
    }
}

/// An error's instance location as compose-go joins it: keys, and the
/// items of lists by their index.
pub fn location(error: &ValidationError) -> Vec<String> {
    error
        .instance_location
        .tokens
        .iter()
        .map(|token| match token {
            InstanceToken::Prop(name) => name.to_string(),
            InstanceToken::Item(index) => index.to_string(),
        })
        .collect()
}

/// An error's instance location as steps through the tree.
pub fn steps<'e>(error: &'e ValidationError) -> Vec<Step<'e>> {
    error
        .instance_location
        .tokens
        .iter()
        .map(|token| match token {
            InstanceToken::Prop(name) => Step::Key(name),
            InstanceToken::Item(index) => Step::Item(*index),
        })
        .collect()
}

/// compose-go's `validationError.Error()`: the dotted path, then the words.
pub fn words(error: &ValidationError) -> String {
    let path = location(error).join(".");
    let what = match &error.kind {
        ErrorKind::Type { want, .. } => {
            return format!("{path} must be a {}", type_names(*want));
        }
        ErrorKind::Minimum { want, .. } => {
            return format!("{path} must be greater than or equal to {}", number(want));
        }
        ErrorKind::Maximum { want, .. } => {
            return format!("{path} must be less than or equal to {}", number(want));
        }
        ErrorKind::Group | ErrorKind::Reference { .. } => "validation failed".to_string(),
        ErrorKind::Schema { url } => format!("jsonschema validation failed with {}", quote(url)),
        ErrorKind::ContentSchema => "contentSchema failed".to_string(),
        ErrorKind::PropertyName { prop } => format!("invalid propertyName {}", quote(prop)),
        ErrorKind::RefCycle { url, .. } => format!("reference cycle at {url}"),
        ErrorKind::FalseSchema => "false schema".to_string(),
        ErrorKind::Enum { want } => enum_words(want),
        ErrorKind::Const { want } => {
            if is_primitive(want) {
                format!("value must be {}", display(want))
            } else {
                "const failed".to_string()
            }
        }
        ErrorKind::Format { got, want, err } => {
            format!("{} is not valid {want}: {err}", display(got))
        }
        ErrorKind::MinProperties { got, want } => format!("minProperties: got {got}, want {want}"),
        ErrorKind::MaxProperties { got, want } => format!("maxProperties: got {got}, want {want}"),
        ErrorKind::AdditionalProperties { got } => {
            format!("additional properties {} not allowed", quoted(got))
        }
        ErrorKind::Required { want } if want.len() == 1 => {
            format!("missing property {}", quote(want[0]))
        }
        ErrorKind::Required { want } => format!("missing properties {}", quoted(want)),
        ErrorKind::Dependency { prop, missing }
        | ErrorKind::DependentRequired { prop, missing } => {
            format!(
                "properties {} required, if {} exists",
                quoted(missing),
                quote(prop)
            )
        }
        ErrorKind::MinItems { got, want } => format!("minItems: got {got}, want {want}"),
        ErrorKind::MaxItems { got, want } => format!("maxItems: got {got}, want {want}"),
        ErrorKind::Contains => "no items match contains schema".to_string(),
        ErrorKind::MinContains { want, .. } => {
            format!("min {want} items required to match contains schema")
        }
        ErrorKind::MaxContains { want, .. } => {
            format!("max {want} items required to match contains schema")
        }
        ErrorKind::UniqueItems { got } => format!("items at {} and {} are equal", got[0], got[1]),
        ErrorKind::AdditionalItems { got } => format!("last {got} additionalItem(s) not allowed"),
        ErrorKind::MinLength { got, want } => format!("minLength: got {got}, want {want}"),
        ErrorKind::MaxLength { got, want } => format!("maxLength: got {got}, want {want}"),
        ErrorKind::Pattern { got, want } => {
            format!("{} does not match pattern {}", quote(got), quote(want))
        }
        ErrorKind::ContentEncoding { want, .. } => format!("value is not {} encoded", quote(want)),
        ErrorKind::ContentMediaType { want, .. } => {
            format!("value if not of mediatype {}", quote(want))
        }
        ErrorKind::ExclusiveMinimum { got, want } => {
            format!(
                "exclusiveMinimum: got {}, want {}",
                number(got),
                number(want)
            )
        }
        ErrorKind::ExclusiveMaximum { got, want } => {
            format!(
                "exclusiveMaximum: got {}, want {}",
                number(got),
                number(want)
            )
        }
        ErrorKind::MultipleOf { got, want } => {
            format!("multipleOf: got {}, want {}", number(got), number(want))
        }
        ErrorKind::Not => "not failed".to_string(),
        ErrorKind::AllOf => "allOf failed".to_string(),
        ErrorKind::AnyOf => "anyOf failed".to_string(),
        ErrorKind::OneOf(None) => "oneOf failed, none matched".to_string(),
        ErrorKind::OneOf(Some((a, b))) => format!("oneOf failed, subschemas {a}, {b} matched"),
    };
    format!("{path} {what}")
}

/// The types an instance may have, as compose-go's `humanReadableType`
/// names them: `mapping`, `string or number`, `array, null or string`.
fn type_names(want: Types) -> String {
    let mut wanted: Vec<&str> = want.iter().map(type_name).collect();
    if wanted.len() == 1 {
        return wanted[0].to_string();
    }
    wanted.sort_unstable();
    let (last, rest) = wanted.split_last().unwrap_or((&"", &[]));
    format!("{} or {last}", rest.join(", "))
}

/// The words of an `enum` a value is not in: its values when all are
/// primitive.
fn enum_words(want: &[Value]) -> String {
    if !want.iter().all(is_primitive) {
        return "enum failed".to_string();
    }
    if want.len() == 1 {
        return format!("value must be {}", display(&want[0]));
    }
    let all: Vec<String> = want.iter().map(display).collect();
    format!("value must be one of {}", all.join(", "))
}

/// Property names, each quoted, joined by commas.
fn quoted<S: AsRef<str>>(names: &[S]) -> String {
    let names: Vec<String> = names.iter().map(|n| quote(n.as_ref())).collect();
    names.join(", ")
}

/// compose-go's `humanReadableType` of one JSON type.
fn type_name(kind: Type) -> &'static str {
    match kind {
        Type::Null => "null",
        Type::Boolean => "boolean",
        Type::Number => "number",
        Type::Integer => "integer",
        Type::String => "string",
        Type::Array => "array",
        Type::Object => "mapping",
    }
}

fn number(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i.to_string(),
        (None, Some(f)) => f.to_string(),
        _ => n.to_string(),
    }
}

fn is_primitive(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

/// jsonschema v6's `display`: a string quoted, a number or boolean as Go
/// prints it.
fn display(value: &Value) -> String {
    match value {
        Value::String(s) => quote(s),
        Value::Array(_) | Value::Object(_) => "value".to_string(),
        Value::Null => "<nil>".to_string(),
        other => other.to_string(),
    }
}

/// jsonschema v6's `quote`: Go's `%q` in single quotes.
fn quote(text: &str) -> String {
    let json = serde_json::to_string(text).unwrap_or_default();
    let inner = &json[1..json.len() - 1];
    format!("'{}'", inner.replace("\\\"", "\"").replace('\'', "\\'"))
}
