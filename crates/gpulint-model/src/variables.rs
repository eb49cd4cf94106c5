//! Variable substitution as Compose does it (compose-go v2.9.1
//! `template/template.go`), bounded: the template engine under every
//! interpolated value. Which variables exist is the caller's business (a
//! Compose project's `.env` files: `crate::project::env`); a variable the
//! lookup does not know is unknown, never blank, since the shell that runs
//! Compose may set it.

pub use crate::syntax::tree::Interpolated;

/// The longest value substitution may produce (1 MiB): far beyond any real
/// setting, far below what would exhaust memory.
pub const MAX_VALUE_LEN: usize = 1 << 20;
/// How deeply `${a:-${b:-...}}` may nest.
pub const MAX_DEPTH: usize = 64;

/// Substitutes with no variables at all: every `${VAR}` without a default
/// is unknown.
pub fn interpolate_alone(template: &str) -> Interpolated {
    interpolate(template, &|_| None)
}

/// A variable's value as substitution sees it: `Ok` known, `Err` unknown
/// (with the variable it depends on); `None` when it is not set at all.
pub(crate) type Lookup<'a> = &'a dyn Fn(&str) -> Option<Result<&'a str, &'a str>>;

/// compose-go's `template.Substitute`, bounded (see the module docs).
pub fn interpolate<'a>(template: &str, lookup: Lookup<'a>) -> Interpolated {
    if !template.contains('$') {
        return Interpolated::Text(template.to_string());
    }
    let mut out = String::with_capacity(template.len());
    match substitute(template, lookup, 0, &mut out) {
        Ok(()) => Interpolated::Text(out),
        Err(stop) => stop.into(),
    }
}

/// Why substitution stopped.
enum Stop {
    Unknown(String),
    Invalid(String),
    Required { name: String, reason: String },
}

impl From<Stop> for Interpolated {
    fn from(stop: Stop) -> Self {
        match stop {
            Stop::Unknown(name) => Interpolated::Unknown(name),
            Stop::Invalid(why) => Interpolated::Invalid(why),
            Stop::Required { name, reason } => Interpolated::Invalid(if reason.is_empty() {
                format!("required variable {name} is missing a value")
            } else {
                format!("required variable {name} is missing a value: {reason}")
            }),
        }
    }
}

fn is_name_start(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphabetic()
}

fn is_name_char(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric()
}

fn push(out: &mut String, text: &str) -> Result<(), Stop> {
    if out.len() + text.len() > MAX_VALUE_LEN {
        return Err(Stop::Invalid(format!(
            "the value expands past {} MiB",
            MAX_VALUE_LEN >> 20
        )));
    }
    out.push_str(text);
    Ok(())
}

/// The index of the `}` closing the `${` at the start of `s`, as compose-go
/// finds it (`getFirstBraceClosingIndex`: a `{` also skips the character
/// after it).
fn closing_brace(s: &[u8]) -> Option<usize> {
    let mut open = 0usize;
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'}' {
            open = open.saturating_sub(1);
            if open == 0 {
                return Some(i);
            }
        }
        if s[i] == b'{' {
            open += 1;
            i += 1;
        }
        i += 1;
    }
    None
}

fn substitute(template: &str, lookup: Lookup, depth: usize, out: &mut String) -> Result<(), Stop> {
    if depth > MAX_DEPTH {
        return Err(Stop::Invalid(format!(
            "`${{...}}` nests deeper than {MAX_DEPTH} levels (gpulint's limit)"
        )));
    }
    let bytes = template.as_bytes();
    let mut i = 0;
    let mut literal_from = 0;
    while let Some(offset) = template[i..].find('$') {
        let dollar = i + offset;
        push(out, &template[literal_from..dollar])?;
        let next = bytes.get(dollar + 1).copied();
        match next {
            Some(b'$') => {
                push(out, "$")?;
                i = dollar + 2;
            }
            Some(b'{') => {
                let Some(close) = closing_brace(&bytes[dollar..]) else {
                    return Err(invalid(template));
                };
                let inner = &template[dollar + 2..dollar + close];
                braced(inner, template, lookup, depth, out)?;
                i = dollar + close + 1;
            }
            Some(c) if is_name_start(c) => {
                let end = bytes[dollar + 1..]
                    .iter()
                    .position(|&c| !is_name_char(c))
                    .map_or(bytes.len(), |n| dollar + 1 + n);
                let name = &template[dollar + 1..end];
                match lookup(name) {
                    Some(Ok(value)) => push(out, value)?,
                    Some(Err(on)) => return Err(Stop::Unknown(on.to_string())),
                    None => return Err(Stop::Unknown(name.to_string())),
                }
                i = end;
            }
            // A `$` before anything else is kept as it is.
            _ => {
                push(out, "$")?;
                i = dollar + 1;
            }
        }
        literal_from = i;
    }
    push(out, &template[literal_from..])
}

fn invalid(template: &str) -> Stop {
    Stop::Invalid(format!("invalid interpolation format for {template:?}"))
}

/// `${...}`'s inside: a name, then nothing or an operator and its argument.
fn braced(
    inner: &str,
    template: &str,
    lookup: Lookup,
    depth: usize,
    out: &mut String,
) -> Result<(), Stop> {
    let bytes = inner.as_bytes();
    if !bytes.first().copied().is_some_and(is_name_start) {
        return Err(invalid(template));
    }
    let name_len = bytes
        .iter()
        .position(|&c| !is_name_char(c))
        .unwrap_or(bytes.len());
    let (name, rest) = inner.split_at(name_len);
    let value = lookup(name);
    if rest.is_empty() {
        return match value {
            Some(Ok(v)) => push(out, v),
            Some(Err(on)) => Err(Stop::Unknown(on.to_string())),
            None => Err(Stop::Unknown(name.to_string())),
        };
    }
    let (op, argument) = [":?", "?", ":-", "-", ":+", "+"]
        .iter()
        .find_map(|op| rest.strip_prefix(op).map(|arg| (*op, arg)))
        .ok_or_else(|| invalid(template))?;
    // The argument is substituted first, as compose-go does, whether or not
    // it is used: one that cannot be (`${SET:-${REQ?x}}`) fails either way.
    let mut argument_value = String::new();
    let argument_result = substitute(argument, lookup, depth + 1, &mut argument_value);
    if let Err(stop @ (Stop::Invalid(_) | Stop::Required { .. })) = argument_result {
        return Err(stop);
    }
    let set_nonempty = matches!(value, Some(Ok(v)) if !v.is_empty());
    let the_argument = |out: &mut String| -> Result<(), Stop> {
        match argument_result {
            Ok(()) => push(out, &argument_value),
            Err(Stop::Invalid(why)) => Err(Stop::Invalid(why)),
            Err(Stop::Unknown(on)) => Err(Stop::Unknown(on)),
            Err(Stop::Required { name, reason }) => Err(Stop::Required { name, reason }),
        }
    };
    let the_value = |out: &mut String| -> Result<(), Stop> {
        match value {
            Some(Ok(v)) => push(out, v),
            Some(Err(on)) => Err(Stop::Unknown(on.to_string())),
            None => Err(Stop::Unknown(name.to_string())),
        }
    };
    match op {
        ":-" => match value {
            Some(Ok(_)) if set_nonempty => the_value(out),
            Some(Err(on)) => Err(Stop::Unknown(on.to_string())),
            _ => the_argument(out),
        },
        "-" => match value {
            None => the_argument(out),
            _ => the_value(out),
        },
        ":+" => match value {
            Some(Ok(_)) if set_nonempty => the_argument(out),
            // Set and empty: the empty value.
            Some(Ok(_)) => Ok(()),
            Some(Err(on)) => Err(Stop::Unknown(on.to_string())),
            // Unset here; the shell could set it.
            None => Err(Stop::Unknown(name.to_string())),
        },
        "+" => match value {
            Some(Ok(_)) => the_argument(out),
            Some(Err(on)) => Err(Stop::Unknown(on.to_string())),
            None => Err(Stop::Unknown(name.to_string())),
        },
        ":?" | "?" => {
            let satisfied = match value {
                Some(Ok(v)) => op == "?" || !v.is_empty(),
                Some(Err(on)) => return Err(Stop::Unknown(on.to_string())),
                None => false,
            };
            if satisfied {
                the_value(out)
            } else {
                Err(Stop::Required {
                    name: name.to_string(),
                    reason: argument_value.clone(),
                })
            }
        }
        _ => unreachable!("the operators listed above"),
    }
}
