//! Kubernetes resource quantities (`apimachinery/pkg/api/resource`).
//!
//! `<number><suffix>`, where the suffix is binary (`Ki Mi Gi Ti Pi Ei`),
//! decimal (`n u m "" k M G T P E`) or an exponent (`e3`, `E-2`). The decimal
//! `m` is *milli*: `sizeLimit: 512m` is 0.512 bytes. Kubernetes keeps values
//! exactly and rounds anything finer than a nano-unit up; so does this.

use std::fmt;

/// Nano-units per unit.
const NANO: i128 = 1_000_000_000;

/// A parsed quantity, exact to a nano-unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    /// The value in nano-units (rounded up, as Kubernetes does).
    pub nanos: i128,
    pub suffix: Suffix,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suffix {
    /// `Ki` (1) to `Ei` (6): powers of 1024.
    Binary(u32),
    /// A decimal SI suffix as a power of ten: `m` is -3, `""` 0, `G` 9.
    Decimal(i32),
    /// `e<n>` / `E<n>`.
    Exponent(i32),
}

impl Suffix {
    /// The milli suffix `m`, which people write meaning mega- or mebibytes.
    pub fn is_milli(self) -> bool {
        self == Suffix::Decimal(-3)
    }
}

/// Why a string is not a quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityError {
    pub reason: String,
    /// A corrected spelling when the intent is clear enough to suggest (`1g` → `1Gi`).
    pub suggestion: Option<String>,
}

/// What a quantity field holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuantityValue {
    Parsed(Quantity),
    /// An unexpanded template variable (`$GPUS`, `${N}`): rendered later, never guessed.
    Placeholder(String),
    Invalid(QuantityError),
}

impl QuantityValue {
    pub fn read(text: &str) -> QuantityValue {
        let text = text.trim();
        if text.contains('$') || text.contains("{{") {
            return QuantityValue::Placeholder(text.to_string());
        }
        match Quantity::parse(text) {
            Ok(q) => QuantityValue::Parsed(q),
            Err(e) => QuantityValue::Invalid(e),
        }
    }

    pub fn quantity(&self) -> Option<Quantity> {
        match self {
            QuantityValue::Parsed(q) => Some(*q),
            _ => None,
        }
    }
}

impl Quantity {
    pub fn parse(text: &str) -> Result<Quantity, QuantityError> {
        let invalid = |reason: String| QuantityError {
            reason,
            suggestion: None,
        };
        if text.is_empty() {
            return Err(invalid("an empty quantity".into()));
        }
        let bytes = text.as_bytes();
        let mut i = 0;
        let negative = match bytes[0] {
            b'-' => {
                i = 1;
                true
            }
            b'+' => {
                i = 1;
                false
            }
            _ => false,
        };
        let digits_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let whole = &text[digits_start..i];
        let mut fraction = "";
        if i < bytes.len() && bytes[i] == b'.' {
            let start = i + 1;
            i = start;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            fraction = &text[start..i];
        }
        if whole.is_empty() && fraction.is_empty() {
            return Err(invalid(format!("`{text}` does not start with a number")));
        }
        let suffix_text = &text[i..];
        let suffix = parse_suffix(suffix_text).ok_or_else(|| QuantityError {
            reason: format!("`{suffix_text}` is not a Kubernetes quantity suffix"),
            suggestion: suggest_suffix(suffix_text).map(|s| format!("{}{s}", &text[..i])),
        })?;
        let too_large = || invalid(format!("`{text}` is too large"));
        // The number as an integer mantissa and a power of ten.
        let mut mantissa: i128 = 0;
        for d in whole.bytes().chain(fraction.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(i128::from(d - b'0')))
                .ok_or_else(too_large)?;
        }
        let mut exponent: i32 = -(fraction.len() as i32);
        let mut multiplier: i128 = 1;
        match suffix {
            Suffix::Binary(power) => multiplier = 1i128 << (10 * power),
            Suffix::Decimal(e) | Suffix::Exponent(e) => exponent += e,
        }
        // Scale to nano-units, rounding up what is finer.
        let scale = exponent + 9;
        let mut nanos = mantissa.checked_mul(multiplier).ok_or_else(too_large)?;
        if scale >= 0 {
            for _ in 0..scale {
                nanos = nanos.checked_mul(10).ok_or_else(too_large)?;
            }
        } else {
            let mut divisor: i128 = 1;
            for _ in 0..(-scale).min(38) {
                divisor = divisor.saturating_mul(10);
            }
            let rounded_down = nanos / divisor;
            nanos = rounded_down + i128::from(nanos % divisor != 0);
        }
        if negative {
            nanos = -nanos;
        }
        Ok(Quantity { nanos, suffix })
    }

    /// A whole number of units (GPU counts must be).
    pub fn whole(&self) -> Option<i64> {
        (self.nanos % NANO == 0)
            .then(|| i64::try_from(self.nanos / NANO).ok())
            .flatten()
    }

    /// The value in bytes, rounded up (Kubernetes rounds memory up), at least 0.
    pub fn bytes_ceil(&self) -> u64 {
        if self.nanos <= 0 {
            return 0;
        }
        let bytes = self.nanos / NANO + i128::from(self.nanos % NANO != 0);
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }

    pub(crate) fn is_positive(&self) -> bool {
        self.nanos > 0
    }
}

fn parse_suffix(suffix: &str) -> Option<Suffix> {
    let binary = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if let Some(p) = binary.iter().position(|&s| s == suffix) {
        return Some(Suffix::Binary(p as u32 + 1));
    }
    let decimal = match suffix {
        "n" => Some(-9),
        "u" => Some(-6),
        "m" => Some(-3),
        "" => Some(0),
        "k" => Some(3),
        "M" => Some(6),
        "G" => Some(9),
        "T" => Some(12),
        "P" => Some(15),
        "E" => Some(18),
        _ => None,
    };
    if let Some(e) = decimal {
        return Some(Suffix::Decimal(e));
    }
    let exponent = suffix.strip_prefix(['e', 'E'])?;
    let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 3 {
        return None;
    }
    exponent.parse().ok().map(Suffix::Exponent)
}

/// Docker-style spellings (`1g`, `512mb`, `2GB`, `1GiB`, `16gi`, `4K`) mapped to the
/// binary suffix they almost always mean.
fn suggest_suffix(suffix: &str) -> Option<&'static str> {
    let lower = suffix.to_ascii_lowercase();
    let unit = lower.strip_suffix('b').unwrap_or(&lower);
    let unit = unit.strip_suffix('i').unwrap_or(unit);
    match unit {
        "k" => Some("Ki"),
        "m" => Some("Mi"),
        "g" => Some("Gi"),
        "t" => Some("Ti"),
        "p" => Some("Pi"),
        _ => None,
    }
}

/// A byte count as a Kubernetes quantity: the largest binary suffix that
/// divides it (`8589934592` → `8Gi`), or plain bytes.
pub fn bytes_to_quantity(bytes: u64) -> String {
    for (power, suffix) in [(5, "Pi"), (4, "Ti"), (3, "Gi"), (2, "Mi"), (1, "Ki")] {
        let unit = 1u64 << (10 * power);
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nanos(s: &str) -> i128 {
        Quantity::parse(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .nanos
    }

    #[test]
    fn suffixes_have_kubernetes_meaning() {
        assert_eq!(nanos("1"), NANO);
        assert_eq!(nanos("512m"), 512_000_000, "m is milli: half a byte");
        assert_eq!(nanos("1Gi"), (1 << 30) * NANO);
        assert_eq!(nanos("1G"), 1_000_000_000 * NANO);
        assert_eq!(nanos("1e9"), 1_000_000_000 * NANO);
        assert_eq!(nanos("1E3"), 1_000 * NANO);
        assert_eq!(nanos("1.5Gi"), 1_610_612_736 * NANO);
        assert_eq!(nanos("100n"), 100);
        assert_eq!(nanos("2u"), 2_000);
        assert_eq!(nanos(".5"), NANO / 2);
        assert_eq!(nanos("5."), 5 * NANO);
        assert_eq!(nanos("+3k"), 3_000 * NANO);
        assert_eq!(nanos("-1"), -NANO);
        assert_eq!(nanos("1e-3"), 1_000_000);
        assert_eq!(nanos("8Ei"), (8i128 << 60) * NANO);
    }

    #[test]
    fn finer_than_nano_rounds_up() {
        assert_eq!(nanos("0.0000000001"), 1);
        assert_eq!(nanos("1.0000000001"), NANO + 1);
    }

    #[test]
    fn whole_numbers_and_bytes() {
        let q = |s: &str| Quantity::parse(s).unwrap();
        assert_eq!(q("2").whole(), Some(2));
        assert_eq!(q("1.0").whole(), Some(1));
        assert_eq!(q("1000m").whole(), Some(1));
        assert_eq!(q("500m").whole(), None);
        assert_eq!(q("0.5").whole(), None);
        assert_eq!(q("512m").bytes_ceil(), 1);
        assert_eq!(q("1Gi").bytes_ceil(), 1 << 30);
        assert_eq!(q("1G").bytes_ceil(), 1_000_000_000);
        assert_eq!(q("-5").bytes_ceil(), 0);
    }

    #[test]
    fn docker_spellings_are_rejected_with_a_suggestion() {
        for (text, suggestion) in [
            ("1g", "1Gi"),
            ("512mb", "512Mi"),
            ("2GB", "2Gi"),
            ("1GiB", "1Gi"),
            ("16gi", "16Gi"),
            ("4K", "4Ki"),
        ] {
            let e = Quantity::parse(text).unwrap_err();
            assert_eq!(e.suggestion.as_deref(), Some(suggestion), "{text}");
        }
        for text in ["", "Gi", "abc", "1 Gi", "1.2.3", "1e", "1e1.5", "1x"] {
            assert!(Quantity::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn huge_values_are_errors_not_panics() {
        assert!(Quantity::parse("99999999999999999999999999999999999999999Ei").is_err());
        assert!(Quantity::parse("1e999").is_err());
        assert!(Quantity::parse(&"9".repeat(100)).is_err());
        assert!(
            Quantity::parse("1e-9999").is_err(),
            "exponents have at most 3 digits"
        );
        assert_eq!(
            nanos("1e-100"),
            1,
            "a tiny positive value rounds up to one nano"
        );
    }

    #[test]
    fn placeholders_are_not_guessed() {
        assert!(matches!(
            QuantityValue::read("$GPU_PER_NODE"),
            QuantityValue::Placeholder(_)
        ));
        assert!(matches!(
            QuantityValue::read("${N}"),
            QuantityValue::Placeholder(_)
        ));
    }

    #[test]
    fn bytes_become_binary_quantities() {
        assert_eq!(bytes_to_quantity(8 << 30), "8Gi");
        assert_eq!(bytes_to_quantity(512 << 20), "512Mi");
        assert_eq!(bytes_to_quantity(1536 << 20), "1536Mi");
        assert_eq!(bytes_to_quantity(1000), "1000");
    }
}
