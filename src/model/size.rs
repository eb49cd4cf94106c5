//! Byte sizes as Docker Compose reads them, and `${VAR}` interpolation.
//!
//! Compose (compose-go `UnitBytes`) first tries the value as a plain integer,
//! which means *bytes*; otherwise docker/go-units `RAMInBytes` parses a float,
//! an optional single space and a case-insensitive suffix `b`, or `k m g t p`
//! optionally followed by `b` or `ib`. All multipliers are binary (1k = 1024).

use std::fmt;

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1024 * KIB;
pub const GIB: u64 = 1024 * MIB;

/// Result of reading a size value.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeValue {
    /// A size in bytes, and whether its spelling was a bare number (meaning bytes).
    Bytes {
        bytes: u64,
        bare_number: bool,
    },
    Negative(i64),
    /// Depends on a variable with no default; the linter never guesses it.
    Unknown {
        variable: String,
    },
    Invalid {
        text: String,
        reason: String,
    },
}

/// Parses a size the way `docker compose` does, after interpolation.
pub fn parse_compose_size(raw: &str) -> SizeValue {
    let text = match interpolate(raw) {
        Interpolated::Text(t) => t,
        Interpolated::Unknown(variable) => return SizeValue::Unknown { variable },
        Interpolated::Invalid(reason) => {
            return SizeValue::Invalid {
                text: raw.to_string(),
                reason,
            };
        }
    };
    if let Ok(n) = text.parse::<i64>() {
        return if n < 0 {
            SizeValue::Negative(n)
        } else {
            SizeValue::Bytes {
                bytes: n as u64,
                bare_number: true,
            }
        };
    }
    match ram_in_bytes(&text) {
        Ok(bytes) => SizeValue::Bytes {
            bytes,
            bare_number: false,
        },
        Err(reason) => SizeValue::Invalid { text, reason },
    }
}

/// A port of go-units `RAMInBytes` (binary multipliers).
fn ram_in_bytes(s: &str) -> Result<u64, String> {
    let invalid = || format!("`{s}` is not a size Docker understands");
    let sep = s
        .rfind(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
        .ok_or_else(|| format!("`{s}` has no number"))?;
    let (num, suffix) = if s.as_bytes()[sep] == b' ' {
        (&s[..sep], &s[sep + 1..])
    } else {
        (&s[..=sep], &s[sep + 1..])
    };
    if num.is_empty() || num.contains(' ') || num.starts_with('+') {
        return Err(invalid());
    }
    let size: f64 = num.parse().map_err(|_| invalid())?;
    if !size.is_finite() {
        return Err(invalid());
    }
    if size < 0.0 {
        return Err(format!("`{s}` is negative"));
    }
    if suffix.is_empty() {
        return Ok(size as u64);
    }
    let suffix = suffix.to_ascii_lowercase();
    if suffix.len() > 3 {
        return Err(format!("unknown unit `{suffix}` in `{s}`"));
    }
    if suffix == "b" {
        return Ok(size as u64);
    }
    let multiplier = match suffix.as_bytes()[0] {
        b'k' => KIB,
        b'm' => MIB,
        b'g' => GIB,
        b't' => GIB * KIB,
        b'p' => GIB * MIB,
        _ => return Err(format!("unknown unit `{suffix}` in `{s}`")),
    };
    let rest = &suffix[1..];
    if !(rest.is_empty() || rest == "b" || rest == "ib") {
        return Err(format!("unknown unit `{suffix}` in `{s}`"));
    }
    Ok((size * multiplier as f64) as u64)
}

#[derive(Debug, Clone, PartialEq)]
pub enum Interpolated {
    Text(String),
    /// The first variable that has no default.
    Unknown(String),
    Invalid(String),
}

/// Resolves Compose interpolation using only what the file itself says:
/// `${VAR:-default}` and `${VAR-default}` take the default, `$$` is a literal
/// `$`, and a variable without a default makes the value unknown. The shell
/// environment is deliberately not consulted, so results do not depend on
/// who runs the linter.
pub fn interpolate(raw: &str) -> Interpolated {
    if !raw.contains('$') {
        return Interpolated::Text(raw.to_string());
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let Some(close) = find_closing_brace(body) else {
                return Interpolated::Invalid(format!("unclosed `${{` in `{raw}`"));
            };
            let expr = &body[..close];
            rest = &body[close + 1..];
            let name_len = expr
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(expr.len());
            let (name, op) = expr.split_at(name_len);
            if name.is_empty() {
                return Interpolated::Invalid(format!("invalid interpolation `${{{expr}}}`"));
            }
            let default = op.strip_prefix(":-").or_else(|| op.strip_prefix('-'));
            match default {
                Some(default) => match interpolate(default) {
                    Interpolated::Text(t) => out.push_str(&t),
                    other => return other,
                },
                None if op.is_empty()
                    || op.starts_with(":?")
                    || op.starts_with('?')
                    || op.starts_with(":+")
                    || op.starts_with('+') =>
                {
                    return Interpolated::Unknown(name.to_string());
                }
                None => {
                    return Interpolated::Invalid(format!("invalid interpolation `${{{expr}}}`"));
                }
            }
        } else {
            let name_len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if name_len == 0 {
                // A lone `$` is kept as is by Compose.
                out.push('$');
                rest = after;
            } else {
                return Interpolated::Unknown(after[..name_len].to_string());
            }
        }
    }
    out.push_str(rest);
    Interpolated::Text(out)
}

fn find_closing_brace(body: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// A human spelling of a byte count: `64 MiB`, `1.5 GiB`, `2 bytes`.
pub struct HumanBytes(pub u64);

impl fmt::Display for HumanBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        let units = [(GIB * KIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")];
        for (size, name) in units {
            if b >= size {
                let value = b as f64 / size as f64;
                return if (value - value.round()).abs() < 0.005 {
                    write!(f, "{} {name}", value.round() as u64)
                } else {
                    write!(f, "{value:.1} {name}")
                };
            }
        }
        if b == 1 {
            write!(f, "1 byte")
        } else {
            write!(f, "{b} bytes")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> u64 {
        match parse_compose_size(s) {
            SizeValue::Bytes { bytes, .. } => bytes,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn compose_size_grammar() {
        assert_eq!(bytes("2"), 2);
        assert_eq!(bytes("1024"), 1024);
        assert_eq!(bytes("1g"), GIB);
        assert_eq!(bytes("1G"), GIB);
        assert_eq!(bytes("1gb"), GIB);
        assert_eq!(bytes("1GiB"), GIB);
        assert_eq!(bytes("1.5g"), GIB + GIB / 2);
        assert_eq!(bytes("2 GB"), 2 * GIB);
        assert_eq!(bytes("1t"), 1024 * GIB);
        assert_eq!(bytes("64m"), 64 * MIB);
        assert_eq!(bytes("512k"), 512 * KIB);
        assert_eq!(bytes("100b"), 100);
        assert!(matches!(
            parse_compose_size("2"),
            SizeValue::Bytes {
                bare_number: true,
                ..
            }
        ));
    }

    #[test]
    fn rejected_spellings() {
        for s in [
            "1 gigabyte",
            "1gig",
            "1GBs",
            "1.5.0g",
            "",
            "g",
            "1 g b",
            "1x",
            "-1g",
        ] {
            assert!(
                matches!(parse_compose_size(s), SizeValue::Invalid { .. }),
                "{s} should be invalid"
            );
        }
        assert_eq!(parse_compose_size("-5"), SizeValue::Negative(-5));
    }

    #[test]
    fn interpolation_defaults_and_unknowns() {
        assert_eq!(bytes("${SHM_SIZE:-8g}"), 8 * GIB);
        assert_eq!(bytes("${SHM_SIZE-2gb}"), 2 * GIB);
        assert_eq!(
            parse_compose_size("${SHM_SIZE}"),
            SizeValue::Unknown {
                variable: "SHM_SIZE".into()
            }
        );
        assert_eq!(
            parse_compose_size("$SHM"),
            SizeValue::Unknown {
                variable: "SHM".into()
            }
        );
        assert_eq!(
            parse_compose_size("${A:-${B:-4g}}"),
            SizeValue::Bytes {
                bytes: 4 * GIB,
                bare_number: false
            }
        );
        assert_eq!(interpolate("a$$b"), Interpolated::Text("a$b".into()));
        assert!(matches!(interpolate("${A"), Interpolated::Invalid(_)));
    }

    #[test]
    fn human_bytes() {
        assert_eq!(HumanBytes(64 * MIB).to_string(), "64 MiB");
        assert_eq!(HumanBytes(GIB + GIB / 2).to_string(), "1.5 GiB");
        assert_eq!(HumanBytes(2).to_string(), "2 bytes");
    }
}
