//! A unit file's values split into words as Podman's Quadlet generator
//! splits them: podman `pkg/systemd/parser` (commit c6580b4a), whose
//! `extractFirstWord` and `cUnescapeOne` follow systemd's
//! `extract_first_word` and `cunescape_one`. Not the shell's reading: a
//! `;` is an ordinary character, `\110` is `H`, an escape systemd does not
//! know drops the whole value, and an empty word ends the list.

use crate::syntax::shell::Word;
use crate::text::TextRange;

/// The whitespace that separates words (`WhitespaceSeparators`).
const SEPARATORS: &[char] = &[' ', '\t', '\n', '\r'];

/// Which of the parser's ways of splitting a key uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Split {
    /// `LookupAllArgs`, `LookupLastArgs`, `LookupAllKeyVal`: quotes
    /// removed, C escapes decoded, an unbalanced quote or a final
    /// backslash allowed (`SplitRelax|SplitUnquote|SplitCUnescape`).
    Args,
    /// `LookupAllStrv`: quotes removed, a backslash an ordinary character
    /// (`SplitRetainEscape|SplitUnquote`); an unbalanced quote drops the
    /// value.
    Strv,
}

/// A value as the unit parser reads it, with the file offset of each of
/// its bytes: each line trimmed, a final `\` joining the next line on
/// directly, comment lines inside a continued value skipped.
pub(super) struct Logical {
    pub text: String,
    offsets: Vec<usize>,
}

impl Logical {
    /// The value written at `range` of `text` (from its first line's
    /// value to the end of its last continued line).
    pub fn read(text: &str, range: TextRange) -> Logical {
        let (mut out, mut offsets) = (String::new(), Vec::new());
        let mut at = range.start as usize;
        for (n, line) in text[range.as_range()].split_inclusive('\n').enumerate() {
            let start = at;
            at += line.len();
            let body = line.trim_end_matches(['\n', '\r']);
            let lead = body.len() - body.trim_start().len();
            let trimmed = body.trim();
            if n > 0 && trimmed.starts_with(['#', ';']) {
                continue;
            }
            let content = trimmed.strip_suffix('\\').unwrap_or(trimmed);
            out.push_str(content);
            offsets.extend((0..content.len()).map(|i| start + lead + i));
            if !trimmed.ends_with('\\') {
                break;
            }
        }
        Logical { text: out, offsets }
    }

    /// The file range of the bytes `start..end` of the value.
    fn range(&self, start: usize, end: usize) -> TextRange {
        match (
            self.offsets.get(start),
            end.checked_sub(1).and_then(|e| self.offsets.get(e)),
        ) {
            (Some(&a), Some(&b)) if end > start => TextRange::new(a, b + 1),
            (Some(&a), _) => TextRange::new(a, a),
            _ => TextRange::default(),
        }
    }

    /// Its words, each with the file range it was read from; `None` where
    /// the parser refuses the value (an escape it does not know, or an
    /// unbalanced quote for [`Split::Strv`]), which then adds no word.
    pub fn words(&self, split: Split) -> Option<Vec<Word>> {
        let text = self.text.as_str();
        let mut words = Vec::new();
        let mut p = 0;
        loop {
            while text[p..].starts_with(SEPARATORS) {
                p += 1;
            }
            if p >= text.len() {
                return Some(words);
            }
            let (word, start, end) = first_word(text, p, split)?;
            // `extractFirstWord` reports an empty word as the end of the
            // list (`if s.Len() == 0 { return "", "", false, nil }`).
            if word.is_empty() {
                return Some(words);
            }
            let dynamic = word.contains(['%', '$']);
            words.push(Word {
                text: word,
                range: self.range(start, end),
                dynamic,
            });
            p = end;
        }
    }
}

/// The word that starts at byte `p` of `text` (not a separator): its text,
/// and the bytes it was read from.
fn first_word(text: &str, start: usize, split: Split) -> Option<(String, usize, usize)> {
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text[start..].char_indices().map(|(i, c)| (start + i, c));
    let mut end = text.len();
    while let Some((i, c)) = chars.next() {
        match c {
            // `SplitRetainEscape` leaves a backslash as it is.
            '\\' if split == Split::Args => {
                let rest = &text[i + 1..];
                if rest.is_empty() {
                    // `SplitRelax` eats a final backslash.
                    break;
                }
                let (len, decoded) = unescape_one(rest)?;
                word.push(decoded);
                // The escape's own bytes, after the backslash.
                for _ in 0..rest[..len].chars().count() {
                    chars.next();
                }
            }
            c if Some(c) == quote => quote = None,
            '\'' | '"' if quote.is_none() => quote = Some(c),
            c if quote.is_none() && SEPARATORS.contains(&c) => {
                end = i;
                break;
            }
            c => word.push(c),
        }
    }
    // `SplitRelax` accepts an unbalanced quote; without it the value fails.
    if quote.is_some() && split == Split::Strv {
        return None;
    }
    Some((word, start, end))
}

/// One C escape after its backslash (`cUnescapeOne` without NUL): how
/// many bytes it takes and what it stands for; `None` for one systemd
/// does not know.
fn unescape_one(p: &str) -> Option<(usize, char)> {
    let b = p.as_bytes();
    let hex = |s: &[u8]| -> Option<u32> {
        let s = std::str::from_utf8(s).ok()?;
        s.bytes()
            .all(|c| c.is_ascii_hexdigit())
            .then(|| u32::from_str_radix(s, 16).ok())?
    };
    let simple = match b.first()? {
        b'a' => Some('\x07'),
        b'b' => Some('\x08'),
        b'f' => Some('\x0c'),
        b'n' => Some('\n'),
        b'r' => Some('\r'),
        b't' => Some('\t'),
        b'v' => Some('\x0b'),
        b'\\' => Some('\\'),
        b'"' => Some('"'),
        b'\'' => Some('\''),
        b's' => Some(' '),
        _ => None,
    };
    if let Some(c) = simple {
        return Some((1, c));
    }
    let (len, code) = match b[0] {
        b'x' => (3, hex(b.get(1..3)?)?),
        b'u' => (5, hex(b.get(1..5)?)?),
        b'U' => (9, hex(b.get(1..9)?)?),
        b'0'..=b'7' => {
            let digits = b.get(0..3)?;
            if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                return None;
            }
            let m = digits
                .iter()
                .fold(0u32, |m, d| (m << 3) | u32::from(d - b'0'));
            if m > 255 {
                return None;
            }
            (3, m)
        }
        _ => return None,
    };
    if code == 0 {
        return None;
    }
    Some((len, char::from_u32(code)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(value: &str, split: Split) -> Option<Vec<String>> {
        let logical = Logical::read(value, TextRange::new(0, value.len()));
        logical
            .words(split)
            .map(|w| w.into_iter().map(|w| w.text).collect())
    }

    /// containers/podman test/e2e/quadlet/escapes.container and
    /// pkg/systemd/parser/split_test.go.
    #[test]
    fn splits_as_systemd_does() {
        assert_eq!(
            words(
                r#"/some/path "an arg" a;b\nc\td 'a"b' '\110ello \127orld'"#,
                Split::Args
            )
            .unwrap(),
            ["/some/path", "an arg", "a;b\nc\td", "a\"b", "Hello World"]
        );
        // An escape systemd does not know drops the value.
        assert_eq!(words(r"'test\.com'", Split::Args), None);
        // An empty word ends the list.
        assert_eq!(words(r#"a "" b"#, Split::Args).unwrap(), ["a"]);
        // A final backslash is eaten; an unbalanced quote runs to the end.
        assert_eq!(words(r#"a "b c"#, Split::Args).unwrap(), ["a", "b c"]);
        // `LookupAllStrv` keeps backslashes and refuses an open quote.
        assert_eq!(
            words(r"CAP_A C\x41", Split::Strv).unwrap(),
            ["CAP_A", r"C\x41"]
        );
        assert_eq!(words(r#"a "b"#, Split::Strv), None);
    }

    /// podman pkg/systemd/parser/split_test.go `TestCUnescapeOne`, the
    /// cases without `acceptNul` (the generator never accepts NUL).
    #[test]
    fn c_escapes_are_podmans() {
        let known = [
            ("a", '\x07', 1),
            ("b", '\x08', 1),
            ("f", '\x0c', 1),
            ("n", '\n', 1),
            ("r", '\r', 1),
            ("t", '\t', 1),
            ("v", '\x0b', 1),
            ("\\", '\\', 1),
            ("\"", '"', 1),
            ("'", '\'', 1),
            ("s", ' ', 1),
            ("xAb1", '«', 3),
            ("u2a00", '⨀', 5),
            ("U0001F51F", '🔟', 9),
            ("376", 'þ', 3),
        ];
        for (input, decoded, count) in known {
            assert_eq!(unescape_one(input), Some((count, decoded)), "{input}");
        }
        for refused in [
            "",
            "k",
            "x1",
            "xzz",
            "xaz",
            "x000",
            "u123",
            "u12v1A",
            "u0000",
            "U123",
            "U12345678",
            "U1234V678",
            "U00000000",
            "77",
            "792",
            "758",
            "000",
            "777",
        ] {
            assert_eq!(unescape_one(refused), None, "{refused}");
        }
    }

    /// podman pkg/systemd/parser/split_test.go
    /// `TestExtractFirstWordUnescapes`.
    #[test]
    fn words_unescape_as_podmans_do() {
        let input = r#"\a \b \f \n \r \t \v \\ \" \' \s \x50odman is \U0001F51F/\u0031\u0030 \110ello \127orld"#;
        assert_eq!(
            words(input, Split::Args).unwrap(),
            [
                "\x07", "\x08", "\x0c", "\n", "\r", "\t", "\x0b", "\\", "\"", "'", " ", "Podman",
                "is", "🔟/10", "Hello", "World",
            ]
        );
    }

    #[test]
    fn continued_lines_join_as_the_unit_parser_joins_them() {
        let text = "\"/some/binary file\" --arg1 \\ \n  # a comment\n  \"arg 2\"\n";
        let logical = Logical::read(text, TextRange::new(0, text.len()));
        assert_eq!(logical.text, "\"/some/binary file\" --arg1 \"arg 2\"");
        let words = logical.words(Split::Args).unwrap();
        assert_eq!(words[2].text, "arg 2");
        assert_eq!(&text[words[2].range.as_range()], "\"arg 2\"");
        assert_eq!(&text[words[0].range.as_range()], "\"/some/binary file\"");
    }
}
