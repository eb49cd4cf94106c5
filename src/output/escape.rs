//! Text from the files gpulint reads (service names, values, paths) shown
//! to people and logs: one escaping step, so that nothing read from a file
//! can act on the terminal or the CI log that shows it.
//!
//! - Control characters (C0, DEL, C1) are written visibly: `\n`, `\r`,
//!   `\t`, `\e` for ESC, `\u{85}` for the rest. A line break in a service
//!   name cannot start a new line (where a GitHub runner would read a
//!   `::error::` or `::add-mask::` workflow command), and ESC, BEL or CSI
//!   cannot recolour, retitle or rewrite the terminal, with `--color never`
//!   too.
//! - Characters that reorder or break text without being control
//!   characters (the Unicode bidirectional overrides and isolates, the line
//!   and paragraph separators) are written as `\u{202e}`: a name cannot
//!   show itself as something else.
//! - `##[`, the GitHub runner's legacy command prefix, which it reads
//!   anywhere in a line, is written `##\[`.
//!
//! A backslash itself is left alone: it is common in Windows paths and
//! Dockerfile continuations, and the escapes above are read by people, not
//! parsed back.

use std::borrow::Cow;
use std::path::Path;

/// `text` with every character a terminal or log would act on written
/// visibly, line breaks included.
pub fn human(text: &str) -> Cow<'_, str> {
    escape(text)
}

/// A path for people: [`human`], each byte that is not UTF-8 written as
/// `\xe9` (a Latin-1 `compose-\xe9.yaml` is named as its bytes, where a
/// lossy U+FFFD would make two such names one), and a path that starts
/// with `:` (a file named `:` is `::3:5` with its line and column after
/// it) or with white space (which the runner trims before looking for
/// `::`) is written with a leading `./`, so that a line starting with the
/// path (the concise format, `inspect`'s table) cannot be a workflow
/// command.
pub fn human_path(path: &Path) -> String {
    let shown = utf8_or_hex_escaped(path.as_os_str().as_encoded_bytes());
    let shown = human(&shown);
    let needs_prefix = shown.starts_with(':') || shown.starts_with(char::is_whitespace);
    if needs_prefix {
        format!("./{shown}")
    } else {
        shown.into_owned()
    }
}

/// `bytes` as text, each byte of an invalid UTF-8 sequence written `\xNN`.
fn utf8_or_hex_escaped(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is written as an escape.
pub(crate) fn is_escaped(c: char) -> bool {
    c.is_control() || is_layout_control(c)
}

/// Characters that change how the text around them is laid out: the
/// bidirectional embeddings, overrides, isolates and marks, and the line
/// and paragraph separators.
fn is_layout_control(c: char) -> bool {
    matches!(
        c,
        '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}'
    )
}

fn escape(text: &str) -> Cow<'_, str> {
    if !text.contains(is_escaped) && !text.contains("##[") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{1b}' => out.push_str("\\e"),
            '[' if out.ends_with("##") => out.push_str("\\["),
            c if is_escaped(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_written_visibly() {
        assert_eq!(human("a\nb\r\tc"), "a\\nb\\r\\tc");
        assert_eq!(human("\u{1b}[31mred\u{7}"), "\\e[31mred\\u{7}");
        assert_eq!(human("c1\u{9b}2J\u{85}"), "c1\\u{9b}2J\\u{85}");
        assert_eq!(human("del\u{7f}"), "del\\u{7f}");
        assert_eq!(human("rtl\u{202e}txt.yaml"), "rtl\\u{202e}txt.yaml");
        assert_eq!(human("line\u{2028}sep"), "line\\u{2028}sep");
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for text in ["services: [a, b]", "C:\\dir\\x", "训练 😀", "#[a] ##", ""] {
            assert!(
                matches!(human(text), Cow::Borrowed(t) if t == text),
                "{text}"
            );
        }
    }

    #[test]
    fn the_runners_legacy_command_prefix_is_broken() {
        assert_eq!(human("x##[add-mask]y"), "x##\\[add-mask]y");
        assert_eq!(human("###[a]"), "###\\[a]");
        assert_eq!(human("# #[a]"), "# #[a]");
    }

    #[test]
    fn paths_cannot_start_a_workflow_command() {
        assert_eq!(human_path(Path::new("::error::x.yml")), "./::error::x.yml");
        assert_eq!(human_path(Path::new(" ::x")), "./ ::x");
        assert_eq!(human_path(Path::new("a\n::error::b")), "a\\n::error::b");
        assert_eq!(
            human_path(Path::new("dir/compose.yaml")),
            "dir/compose.yaml"
        );
        assert_eq!(human_path(Path::new("/abs:/x")), "/abs:/x");
    }

    #[cfg(unix)]
    #[test]
    fn bytes_that_are_not_utf8_are_written_as_hex() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(OsStr::from_bytes(b"d\xe9/compose-\xff\xfe.yaml"));
        assert_eq!(human_path(path), "d\\xe9/compose-\\xff\\xfe.yaml");
        let path = Path::new(OsStr::from_bytes(b"::\xe9\n"));
        assert_eq!(human_path(path), "./::\\xe9\\n");
        assert_eq!(human_path(Path::new("caf\u{e9}")), "caf\u{e9}");
    }
}
