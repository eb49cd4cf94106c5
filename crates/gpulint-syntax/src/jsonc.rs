//! JSON with comments (JSONC), as VS Code and the Dev Container CLI read
//! `devcontainer.json`: `//` and `/* */` comments and trailing commas, with
//! the byte range of every value and member, so that a fix edits the text
//! in place and keeps its comments and layout. Nesting is bounded
//! ([`MAX_DEPTH`]): a hostile file is a located error, never a stack
//! overflow.

use crate::text::TextRange;

/// Deeper nesting than any real configuration is refused.
pub const MAX_DEPTH: usize = 128;

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Value>),
    /// Escapes decoded.
    String(String),
    /// As written.
    Number(String),
    Bool(bool),
    Null,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub kind: Kind,
    /// The whole value: a string's quotes, an object's braces included.
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    /// The key with its quotes.
    pub key_range: TextRange,
    pub value: Value,
}

impl Member {
    /// From the key's opening quote to the end of the value.
    pub fn range(&self) -> TextRange {
        self.key_range.cover(self.value.range)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Jsonc {
    pub root: Value,
    /// Every comment, `//` to the end of its line or `/*` to `*/`.
    pub comments: Vec<TextRange>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub message: String,
    pub offset: usize,
}

impl Value {
    /// The last member named `key` (JSON.parse keeps the last of repeated keys).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.member(key).map(|m| &m.value)
    }

    pub fn member(&self, key: &str) -> Option<&Member> {
        match &self.kind {
            Kind::Object(members) => members.iter().rfind(|m| m.key == key),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// A string's text between its quotes.
    pub fn inner_range(&self) -> TextRange {
        match self.kind {
            Kind::String(_) => {
                TextRange::new(self.range.start as usize + 1, self.range.end as usize - 1)
            }
            _ => self.range,
        }
    }

    /// Whether JavaScript would read it as true (the Dev Container CLI's
    /// `if (config.hostRequirements?.gpu)`).
    pub fn truthy(&self) -> bool {
        match &self.kind {
            Kind::Object(_) | Kind::Array(_) => true,
            Kind::String(s) => !s.is_empty(),
            Kind::Number(n) => n.parse::<f64>().is_ok_and(|n| n != 0.0),
            Kind::Bool(b) => *b,
            Kind::Null => false,
        }
    }

    /// Every leaf as (path, text): what fix verification compares. Object
    /// members by key (the last of a repeated key), array items by index;
    /// an empty object or array is a leaf of its own.
    pub fn leaves(&self) -> Vec<(Vec<String>, String)> {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.collect_leaves(&mut path, &mut out);
        out.sort();
        out
    }

    fn collect_leaves(&self, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
        match &self.kind {
            Kind::Object(members) if !members.is_empty() => {
                // The last of a repeated key, found in one pass: a hostile
                // object of many members stays linear.
                let mut last =
                    <foldhash::HashMap<_, _> as foldhash::HashMapExt>::with_capacity(members.len());
                for (n, member) in members.iter().enumerate() {
                    last.insert(member.key.as_str(), n);
                }
                for (n, member) in members.iter().enumerate() {
                    if last.get(member.key.as_str()) != Some(&n) {
                        continue;
                    }
                    path.push(member.key.clone());
                    member.value.collect_leaves(path, out);
                    path.pop();
                }
            }
            Kind::Array(items) if !items.is_empty() => {
                for (n, item) in items.iter().enumerate() {
                    path.push(n.to_string());
                    item.collect_leaves(path, out);
                    path.pop();
                }
            }
            Kind::Object(_) => out.push((path.clone(), "{}".into())),
            Kind::Array(_) => out.push((path.clone(), "[]".into())),
            Kind::String(s) => out.push((path.clone(), format!("\"{s}"))),
            Kind::Number(n) => out.push((path.clone(), n.clone())),
            Kind::Bool(b) => out.push((path.clone(), b.to_string())),
            Kind::Null => out.push((path.clone(), "null".into())),
        }
    }
}

/// Parses JSONC text: one value, with comments and trailing commas allowed.
pub fn parse(text: &str) -> Result<Jsonc, JsonError> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
        comments: Vec::new(),
    };
    if text.starts_with('\u{feff}') {
        parser.at = 3;
    }
    parser.trivia()?;
    let root = parser.value(0)?;
    parser.trivia()?;
    if parser.at < parser.bytes.len() {
        return Err(parser.error("text after the end of the JSON value"));
    }
    Ok(Jsonc {
        root,
        comments: parser.comments,
    })
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    comments: Vec<TextRange>,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> JsonError {
        JsonError {
            message: message.into(),
            offset: self.at.min(self.bytes.len()),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Blanks and comments.
    fn trivia(&mut self) -> Result<(), JsonError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.at += 1,
                Some(b'/') if self.bytes.get(self.at + 1) == Some(&b'/') => {
                    let start = self.at;
                    let end = self.text[start..]
                        .find(['\n', '\r'])
                        .map_or(self.bytes.len(), |n| start + n);
                    self.comments.push(TextRange::new(start, end));
                    self.at = end;
                }
                Some(b'/') if self.bytes.get(self.at + 1) == Some(&b'*') => {
                    let start = self.at;
                    let Some(n) = self.text[start + 2..].find("*/") else {
                        return Err(self.error("a `/*` comment is not closed"));
                    };
                    self.at = start + 2 + n + 2;
                    self.comments.push(TextRange::new(start, self.at));
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        let start = self.at;
        let kind = match self.peek() {
            Some(b'{') => {
                if depth >= MAX_DEPTH {
                    return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
                }
                self.object(depth)?
            }
            Some(b'[') => {
                if depth >= MAX_DEPTH {
                    return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
                }
                self.array(depth)?
            }
            Some(b'"') => Kind::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => {
                let end = self.bytes[start..]
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .map_or(self.bytes.len(), |n| start + n);
                let number = &self.text[start..end];
                if number.parse::<f64>().is_err() {
                    return Err(self.error(format!("`{number}` is not a number")));
                }
                self.at = end;
                Kind::Number(number.to_string())
            }
            _ => {
                let rest = &self.text[start..];
                let (word, kind) = [
                    ("true", Kind::Bool(true)),
                    ("false", Kind::Bool(false)),
                    ("null", Kind::Null),
                ]
                .into_iter()
                .find(|(word, _)| rest.starts_with(word))
                .ok_or_else(|| self.error("expected a JSON value"))?;
                self.at += word.len();
                kind
            }
        };
        Ok(Value {
            kind,
            range: TextRange::new(start, self.at),
        })
    }

    fn object(&mut self, depth: usize) -> Result<Kind, JsonError> {
        self.at += 1;
        let mut members = Vec::new();
        loop {
            self.trivia()?;
            match self.peek() {
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Kind::Object(members));
                }
                Some(b'"') => {}
                _ => return Err(self.error("expected a quoted key or `}`")),
            }
            let key_start = self.at;
            let key = self.string()?;
            let key_range = TextRange::new(key_start, self.at);
            self.trivia()?;
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:` after the key"));
            }
            self.at += 1;
            self.trivia()?;
            let value = self.value(depth + 1)?;
            members.push(Member {
                key,
                key_range,
                value,
            });
            self.trivia()?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {}
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Kind, JsonError> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.trivia()?;
            if self.peek() == Some(b']') {
                self.at += 1;
                return Ok(Kind::Array(items));
            }
            items.push(self.value(depth + 1)?);
            self.trivia()?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {}
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    /// A string at `"`, escapes decoded.
    fn string(&mut self) -> Result<String, JsonError> {
        let open = self.at;
        self.at += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.at..];
            let Some(n) = rest.find(['"', '\\', '\n', '\r']) else {
                self.at = open;
                return Err(self.error("a string is not closed"));
            };
            out.push_str(&rest[..n]);
            self.at += n;
            match self.bytes[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok(out);
                }
                b'\\' => {
                    let escape = self.bytes.get(self.at + 1).copied();
                    let decoded = match escape {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let unit = |at: usize| {
                                self.text
                                    .get(at..at + 4)
                                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                            };
                            let Some(high) = unit(self.at + 2) else {
                                return Err(self.error("a `\\u` escape needs four hex digits"));
                            };
                            self.at += 6;
                            let low = (0xD800..0xDC00).contains(&high)
                                && self.text[self.at..].starts_with("\\u");
                            let code = match low.then(|| unit(self.at + 2)).flatten() {
                                Some(low) if (0xDC00..0xE000).contains(&low) => {
                                    self.at += 6;
                                    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                                }
                                _ => high,
                            };
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                            continue;
                        }
                        _ => return Err(self.error("an unknown escape in a string")),
                    };
                    out.push(decoded);
                    self.at += 2;
                }
                _ => return Err(self.error("a string is not closed on its line")),
            }
        }
    }
}

/// A JSON string literal of `value` (quotes, backslashes and control
/// characters escaped).
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The blanks that start the line `offset` is on, when only blanks come
/// before it there.
fn indent_before(text: &str, offset: usize) -> Option<&str> {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let before = &text[line_start..offset];
    before
        .bytes()
        .all(|b| b == b' ' || b == b'\t')
        .then_some(before)
}

/// Text to insert so that `items` (JSON literals) come first in `array`,
/// laid out like the array's own items: one per line when its first item
/// starts a line, else on the line of `[`.
pub fn prepend_items(text: &str, array: &Value, items: &[String]) -> (usize, String) {
    let existing = array.as_array().unwrap_or(&[]);
    match existing.first() {
        None => (array.range.start as usize + 1, items.join(", ")),
        Some(first) => {
            let at = first.range.start as usize;
            let separator = match indent_before(text, at) {
                Some(indent) => format!(",\n{indent}"),
                None => ", ".to_string(),
            };
            let mut content = items.join(&separator);
            content.push_str(&separator);
            (at, content)
        }
    }
}

/// Text to insert so that `object` ends with the member `"key": value`,
/// indented like its last member.
pub fn append_member(text: &str, object: &Value, key: &str, value: &str) -> (usize, String) {
    let members = object.as_object().unwrap_or(&[]);
    let member = format!("{}: {value}", quote(key));
    let Some(last) = members.last() else {
        return (object.range.start as usize + 1, member);
    };
    let end = last.value.range.end as usize;
    let indent = indent_before(text, last.key_range.start as usize)
        .map_or(" ".to_string(), |indent| format!("\n{indent}"));
    // A trailing comma after the last member stays the last thing.
    let after = &text[end..object.range.end as usize];
    let comma = after.find(',').filter(|&n| {
        let between = &after[..n];
        between.trim().is_empty()
    });
    match comma {
        Some(n) => (end + n + 1, format!("{indent}{member},")),
        None => (end, format!(",{indent}{member}")),
    }
}

/// The ranges to delete to remove items `first..=last` of one array or
/// object (`ranges`: each item's or member's range, in order) with their
/// comma, keeping the comments and layout around them: a line they leave
/// empty goes too.
pub fn remove_items(text: &str, ranges: &[TextRange], first: usize, last: usize) -> Vec<TextRange> {
    let (start, end) = (ranges[first].start as usize, ranges[last].end as usize);
    let blanks_after = |from: usize| {
        from + text[from..].len() - text[from..].trim_start_matches([' ', '\t']).len()
    };
    let blanks_before = |to: usize| text[..to].trim_end_matches([' ', '\t']).len();
    let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
    let alone = text[line_start..start].trim().is_empty();
    // `start..to`, or its whole line when nothing else is on it.
    let span = |to: usize| {
        let rest = &text[to..];
        match ["\r\n", "\n"].iter().find(|nl| rest.starts_with(**nl)) {
            Some(nl) if alone => TextRange::new(line_start, to + nl.len()),
            Some(_) => TextRange::new(blanks_before(start), to),
            None => TextRange::new(start, to),
        }
    };
    let after = blanks_after(end);
    if text[after..].starts_with(',') {
        return vec![span(blanks_after(after + 1))];
    }
    // The last items, without a trailing comma: the comma before them goes.
    let mut out = Vec::new();
    if first > 0 {
        let previous = ranges[first - 1].end as usize;
        let comma = blanks_after(previous);
        if text[comma..].starts_with(',') {
            // `, "b"` on one line goes as one piece.
            if text[comma + 1..start].trim_matches([' ', '\t']).is_empty() {
                return vec![TextRange::new(comma, end)];
            }
            out.push(TextRange::new(comma, comma + 1));
        }
    }
    out.push(span(after));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::{Edit, apply_edits};

    #[test]
    fn comments_and_trailing_commas_are_read_with_spans() {
        let text = "// top\n{\n  /* block */ \"image\": \"a\\\"b\", // after\n  \"runArgs\": [\"--gpus\", \"all\",],\n}\n";
        let json = parse(text).unwrap();
        assert_eq!(json.comments.len(), 3);
        let image = json.root.get("image").unwrap();
        assert_eq!(image.as_str(), Some("a\"b"));
        assert_eq!(&text[image.range.as_range()], "\"a\\\"b\"");
        let args = json.root.get("runArgs").unwrap().as_array().unwrap();
        assert_eq!(args.len(), 2);
        assert_eq!(&text[args[1].inner_range().as_range()], "all");
        assert_eq!(
            json.root.leaves(),
            vec![
                (vec!["image".to_string()], "\"a\"b".to_string()),
                (vec!["runArgs".into(), "0".into()], "\"--gpus".into()),
                (vec!["runArgs".into(), "1".into()], "\"all".into()),
            ]
        );
    }

    #[test]
    fn bad_text_is_a_located_error() {
        for (text, offset) in [
            ("{\"a\": }", 6),
            ("{\"a\" 1}", 5),
            ("[1 2]", 3),
            ("{\"a\": \"x\n\"}", 8),
            ("/* open", 0),
            ("{} x", 3),
            ("", 0),
        ] {
            let error = parse(text).unwrap_err();
            assert_eq!(error.offset, offset, "{text:?}: {}", error.message);
        }
        let deep = "[".repeat(100_000);
        let error = parse(&deep).unwrap_err();
        assert!(error.message.contains("nested deeper"), "{}", error.message);
    }

    #[test]
    fn unicode_escapes_and_surrogate_pairs_decode() {
        let json = parse("\"\\u00e9\\ud83d\\ude00\\ud800x\"").unwrap();
        assert_eq!(json.root.as_str(), Some("é😀\u{fffd}x"));
    }

    fn edit(text: &str, (at, content): (usize, String)) -> String {
        apply_edits(text, &[Edit::insert(at as u32, content)])
    }

    #[test]
    fn items_are_prepended_in_the_arrays_layout() {
        let items = ["\"--shm-size=8g\"".to_string()];
        let text = "{\"runArgs\": [\"--gpus\", \"all\"]}";
        let json = parse(text).unwrap();
        let array = json.root.get("runArgs").unwrap();
        assert_eq!(
            edit(text, prepend_items(text, array, &items)),
            "{\"runArgs\": [\"--shm-size=8g\", \"--gpus\", \"all\"]}"
        );
        let text = "{\n  \"runArgs\": [\n    // GPUs\n    \"--gpus\",\n    \"all\"\n  ]\n}";
        let json = parse(text).unwrap();
        let array = json.root.get("runArgs").unwrap();
        assert_eq!(
            edit(text, prepend_items(text, array, &items)),
            "{\n  \"runArgs\": [\n    // GPUs\n    \"--shm-size=8g\",\n    \"--gpus\",\n    \"all\"\n  ]\n}"
        );
        let text = "{\"runArgs\": []}";
        let json = parse(text).unwrap();
        let array = json.root.get("runArgs").unwrap();
        assert_eq!(
            edit(text, prepend_items(text, array, &items)),
            "{\"runArgs\": [\"--shm-size=8g\"]}"
        );
    }

    #[test]
    fn a_member_is_appended_after_the_last_with_or_without_a_trailing_comma() {
        for (text, expected) in [
            (
                "{\n  \"image\": \"x\" // img\n}",
                "{\n  \"image\": \"x\",\n  \"runArgs\": [] // img\n}",
            ),
            (
                "{\n\t\"image\": \"x\",\n}",
                "{\n\t\"image\": \"x\",\n\t\"runArgs\": [],\n}",
            ),
            ("{}", "{\"runArgs\": []}"),
        ] {
            let json = parse(text).unwrap();
            let result = edit(text, append_member(text, &json.root, "runArgs", "[]"));
            assert_eq!(result, expected);
            parse(&result).unwrap();
        }
    }

    #[test]
    fn removed_items_take_their_comma_and_an_emptied_line() {
        let text = "[\n  \"-e\", \"A=1\",\n  // keep\n  \"b\"\n]";
        let json = parse(text).unwrap();
        let ranges: Vec<TextRange> = json
            .root
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.range)
            .collect();
        let removed = |first, last| {
            let edits: Vec<Edit> = remove_items(text, &ranges, first, last)
                .into_iter()
                .map(Edit::delete)
                .collect();
            apply_edits(text, &edits)
        };
        assert_eq!(removed(0, 1), "[\n  // keep\n  \"b\"\n]");
        assert_eq!(removed(1, 1), "[\n  \"-e\",\n  // keep\n  \"b\"\n]");
        assert_eq!(removed(2, 2), "[\n  \"-e\", \"A=1\"\n  // keep\n]");
        assert_eq!(removed(0, 0), "[\n  \"A=1\",\n  // keep\n  \"b\"\n]");
        for (first, last) in [(0, 0), (0, 1), (1, 1), (2, 2), (0, 2)] {
            parse(&removed(first, last)).unwrap();
        }
        let text = "{\"a\": 1, \"b\": 2}";
        let json = parse(text).unwrap();
        let ranges: Vec<TextRange> = json
            .root
            .as_object()
            .unwrap()
            .iter()
            .map(|m| m.range())
            .collect();
        let edits: Vec<Edit> = remove_items(text, &ranges, 1, 1)
            .into_iter()
            .map(Edit::delete)
            .collect();
        assert_eq!(apply_edits(text, &edits), "{\"a\": 1}");
    }
}
