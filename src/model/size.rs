//! Byte sizes as Docker Compose reads them.
//!
//! Compose (compose-go `UnitBytes`) first tries the value as a plain integer,
//! which means *bytes*; otherwise docker/go-units `RAMInBytes` parses a float,
//! an optional single space and a case-insensitive suffix `b`, or `k m g t p`
//! optionally followed by `b` or `ib`. All multipliers are binary (1k = 1024).

use super::variables::{Interpolated, Variables, interpolate};
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
    /// Compose drops the value without a word (a YAML float, an integer
    /// too large for `int`), so the container gets the engine's default.
    Dropped {
        text: String,
        reason: String,
    },
}

/// Parses `shm_size` as Compose 2.26 reads its YAML value (measured against
/// it by tests/engine.rs). A plain scalar is typed first, as go-yaml v3
/// resolves it: an integer (underscores removed; `0x`, `0o`, `0b` and a
/// leading `0` for octal; a sign) is bytes; a float (`1e9`, `1.5`, `.5`,
/// `!!float`) reaches compose-go's `UnitBytes` as a type it ignores, so the
/// value is dropped. A string (quoted, `!!str`, or plain text that is not a
/// number) is interpolated with `vars` (the project's `.env`, if any) and
/// read by go-units `RAMInBytes`.
pub fn parse_compose_yaml_size(
    text: &str,
    plain: bool,
    tag: Option<&str>,
    vars: Option<&Variables>,
) -> SizeValue {
    let typed = match tag {
        Some("!!str" | "tag:yaml.org,2002:str") => false,
        Some("!!int" | "tag:yaml.org,2002:int" | "!!float" | "tag:yaml.org,2002:float") => true,
        _ => plain,
    };
    if typed {
        let float_tag = matches!(tag, Some("!!float" | "tag:yaml.org,2002:float"));
        if !float_tag && let Some(n) = yaml_int(text) {
            return match n {
                Ok(n) if n < 0 => SizeValue::Negative(n),
                Ok(n) => SizeValue::Bytes {
                    bytes: n as u64,
                    bare_number: true,
                },
                Err(()) => SizeValue::Dropped {
                    text: text.to_string(),
                    reason: "an integer too large for Compose, which drops it".into(),
                },
            };
        }
        if float_tag || is_yaml_float(text) {
            return SizeValue::Dropped {
                text: text.to_string(),
                reason: "a YAML float, which Compose drops without a word".into(),
            };
        }
    }
    let value = match interpolate(text, vars) {
        Interpolated::Text(t) => t,
        Interpolated::Unknown(variable) => return SizeValue::Unknown { variable },
        Interpolated::Invalid(reason) => {
            return SizeValue::Invalid {
                text: text.to_string(),
                reason,
            };
        }
    };
    match compose_ram_in_bytes(&value) {
        Some(bytes) => SizeValue::Bytes {
            bytes,
            bare_number: value.bytes().all(|b| b.is_ascii_digit()),
        },
        None => SizeValue::Invalid {
            reason: match ram_in_bytes(&value) {
                Err(reason) => reason,
                Ok(_) => format!(
                    "`{value}` is not a size Compose accepts (no sign, no space around it, at most one space before the unit)"
                ),
            },
            text: value,
        },
    }
}

/// An integer as go-yaml v3 resolves a plain scalar: `Some(Ok(n))`,
/// `Some(Err(()))` for one that only fits an unsigned 64-bit integer, or
/// `None` when it is not an integer.
fn yaml_int(text: &str) -> Option<Result<i64, ()>> {
    let first = text.bytes().next()?;
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return None;
    }
    let plain: String = text.chars().filter(|&c| c != '_').collect();
    let (negative, unsigned) = match plain.as_bytes().first() {
        Some(b'-') => (true, &plain[1..]),
        Some(b'+') => (false, &plain[1..]),
        _ => (false, &plain[..]),
    };
    let lower = unsigned.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, &lower[..])
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    let value = if negative {
        (magnitude <= i64::MIN.unsigned_abs()).then(|| (magnitude as i64).wrapping_neg())
    } else {
        i64::try_from(magnitude).ok()
    };
    Some(value.ok_or(()))
}

/// go-yaml v3's float: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`,
/// or `.inf` and `.nan` in their spellings.
fn is_yaml_float(text: &str) -> bool {
    if matches!(
        text,
        ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | ".nan"
            | ".NaN"
            | ".NAN"
    ) {
        return true;
    }
    let plain: String = text.chars().filter(|&c| c != '_').collect();
    let s = plain.strip_prefix(['+', '-']).unwrap_or(&plain);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => !frac.is_empty() && frac.bytes().all(|b| b.is_ascii_digit()),
        Some((int, frac)) => {
            !int.is_empty()
                && int.bytes().all(|b| b.is_ascii_digit())
                && frac.bytes().all(|b| b.is_ascii_digit())
        }
        None => !mantissa.is_empty() && mantissa.bytes().all(|b| b.is_ascii_digit()),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

/// go-units `RAMInBytes` as Compose 2.26 links it: the whole text must match
/// `^(\d+(\.\d+)*) ?([kKmMgGtTpP])?[iI]?[bB]?$` (no sign, no leading or
/// trailing space, one optional space before the unit), the number is parsed
/// as a float, and the unit's multiplier is binary.
fn compose_ram_in_bytes(s: &str) -> Option<u64> {
    let bytes = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return None;
    }
    while i < bytes.len() && bytes[i] == b'.' {
        let dot = i;
        i += 1;
        if !digits(&mut i) {
            i = dot;
            break;
        }
    }
    let number = &s[..i];
    if i < bytes.len() && bytes[i] == b' ' {
        i += 1;
    }
    let mut multiplier = 1u64;
    if i < bytes.len() {
        let m = match bytes[i].to_ascii_lowercase() {
            b'k' => Some(KIB),
            b'm' => Some(MIB),
            b'g' => Some(GIB),
            b't' => Some(GIB * KIB),
            b'p' => Some(GIB * MIB),
            _ => None,
        };
        if let Some(m) = m {
            multiplier = m;
            i += 1;
        }
    }
    if i < bytes.len() && bytes[i].eq_ignore_ascii_case(&b'i') {
        i += 1;
    }
    if i < bytes.len() && bytes[i].eq_ignore_ascii_case(&b'b') {
        i += 1;
    }
    if i != bytes.len() {
        return None;
    }
    // `1.5.5` matches the pattern but is not a float: Compose refuses it.
    let size: f64 = number.parse().ok()?;
    Some((size * multiplier as f64) as u64)
}

/// Parses a size the way `docker compose` does, after interpolation with
/// the defaults the text itself gives (a `docker run` option, a setting:
/// no project `.env` applies).
pub fn parse_compose_size(raw: &str) -> SizeValue {
    parse_compose_size_with(raw, None)
}

/// [`parse_compose_size`] for a value of a compose file, interpolated with
/// its project's variables `vars`.
pub fn parse_compose_size_with(raw: &str, vars: Option<&Variables>) -> SizeValue {
    let text = match interpolate(raw, vars) {
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
        assert_eq!(interpolate("a$$b", None), Interpolated::Text("a$b".into()));
        assert!(matches!(interpolate("${A", None), Interpolated::Invalid(_)));
    }

    fn yaml(text: &str, plain: bool) -> SizeValue {
        parse_compose_yaml_size(text, plain, None, None)
    }

    /// Each spelling with what Compose 2.26 gave the container, as
    /// tests/engine.rs measured it.
    #[test]
    fn compose_yaml_sizes_as_the_engine_measured_them() {
        let bytes = |v: SizeValue| match v {
            SizeValue::Bytes { bytes, .. } => Some(bytes),
            _ => None,
        };
        for (text, expected) in [
            ("1073741824", GIB),
            ("0x10", 16),
            ("0o1000", 512),
            ("017", 15),
            ("1_000", 1000),
            ("0b1000000000", 512),
            ("+1073741824", GIB),
        ] {
            assert_eq!(bytes(yaml(text, true)), Some(expected), "{text}");
        }
        for text in ["1e9", "1.5", "2.0", ".5", "1E3", ".inf"] {
            assert!(
                matches!(yaml(text, true), SizeValue::Dropped { .. }),
                "{text}"
            );
        }
        assert!(matches!(
            parse_compose_yaml_size("4096", true, Some("!!float"), None),
            SizeValue::Dropped { .. }
        ));
        assert_eq!(yaml("-1", true), SizeValue::Negative(-1));
        for (text, expected) in [
            ("1g", GIB),
            ("1 g", GIB),
            ("1.5g", GIB + GIB / 2),
            ("1kib", KIB),
            ("1Gb", GIB),
            ("1073741824", GIB),
            ("${S:-1024}", 1024),
        ] {
            assert_eq!(bytes(yaml(text, false)), Some(expected), "{text}");
        }
        for text in [
            "1  g", "+1g", "1g ", " 1g", "10%", "1gig", "1.5.5g", "0x10", "1_000", "-1", "", ".5g",
            "1.g", "1e3",
        ] {
            assert!(
                matches!(yaml(text, false), SizeValue::Invalid { .. }),
                "{text:?}"
            );
        }
        assert_eq!(
            bytes(parse_compose_yaml_size("1g", true, None, None)),
            Some(GIB),
            "plain text that is not a number is a string"
        );
        assert_eq!(
            bytes(parse_compose_yaml_size("4096", true, Some("!!str"), None)),
            Some(4096)
        );
    }

    #[test]
    fn human_bytes() {
        assert_eq!(HumanBytes(64 * MIB).to_string(), "64 MiB");
        assert_eq!(HumanBytes(GIB + GIB / 2).to_string(), "1.5 GiB");
        assert_eq!(HumanBytes(2).to_string(), "2 bytes");
    }
}
