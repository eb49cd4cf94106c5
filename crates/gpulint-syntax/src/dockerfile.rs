//! A Dockerfile parser that keeps byte spans and recovers from errors.
//!
//! It follows BuildKit's parser (`frontend/dockerfile/parser`): parser
//! directives at the top (`# syntax=`, `# escape=`), logical lines joined
//! over escaped newlines (comment and blank lines inside a continuation are
//! dropped), heredocs collected after the line that opens them, then per
//! instruction `--flags`, JSON (exec) or shell form. A syntax error is
//! recorded with its range and parsing goes on with the next instruction,
//! so one typo neither hides the rest of the file nor stops a run.

use crate::text::TextRange;

mod instruction;

/// The instructions BuildKit knows.
pub(crate) const KEYWORDS: &[&str] = &[
    "ADD",
    "ARG",
    "CMD",
    "COPY",
    "ENTRYPOINT",
    "ENV",
    "EXPOSE",
    "FROM",
    "HEALTHCHECK",
    "LABEL",
    "MAINTAINER",
    "ONBUILD",
    "RUN",
    "SHELL",
    "STOPSIGNAL",
    "USER",
    "VOLUME",
    "WORKDIR",
];

/// Instructions whose arguments may be a JSON array (exec form).
const JSON_FORM: &[&str] = &["ADD", "CMD", "COPY", "ENTRYPOINT", "RUN", "SHELL", "VOLUME"];

/// Instructions that may open heredocs.
const HEREDOC_FORM: &[&str] = &["ADD", "COPY", "RUN"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dockerfile {
    /// `\` unless a `# escape=` directive says `` ` ``.
    pub escape: char,
    pub directives: Vec<Directive>,
    pub instructions: Vec<Instruction>,
    pub errors: Vec<SyntaxError>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// Lower-cased: `syntax`, `escape`, `check`.
    pub name: String,
    pub value: String,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub range: TextRange,
}

/// A piece of the source: its text as the instruction sees it (escaped
/// newlines removed, quotes kept) and the source range it spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub range: TextRange,
}

/// `--name=value` (or `--name`) before an instruction's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    pub name: String,
    pub value: Option<String>,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Args {
    /// `["python", "train.py"]`: the strings, unescaped, with their spans.
    Exec(Vec<Word>),
    /// Everything after the flags, as one logical line.
    Shell(Word),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heredoc {
    /// The delimiter word (`EOF`).
    pub name: String,
    /// `<<-EOF`: leading tabs are stripped from the body.
    pub strip_tabs: bool,
    /// The body, between the opening line and the delimiter line.
    pub body: Word,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// Upper-cased keyword.
    pub keyword: String,
    pub keyword_range: TextRange,
    /// From the keyword to the end of its last line (heredocs included),
    /// without the final newline.
    pub range: TextRange,
    pub flags: Vec<Flag>,
    pub args: Args,
    pub heredocs: Vec<Heredoc>,
    /// Maps offsets in the logical line back to the source.
    logical: Logical,
    /// Where the arguments (after the flags) start in the logical line.
    args_start: usize,
    /// `ENV`, `ARG` and `LABEL` pairs (empty for other instructions).
    pairs: Vec<KeyValue>,
}

/// A logical line: text joined from physical pieces, each remembered with
/// the source offset it starts at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Logical {
    text: String,
    /// (offset in `text`, offset in the source), ascending.
    pieces: Vec<(usize, usize)>,
}

impl Logical {
    fn push(&mut self, piece: &str, source_start: usize) {
        if piece.is_empty() {
            return;
        }
        self.pieces.push((self.text.len(), source_start));
        self.text.push_str(piece);
    }

    /// The source offset of a logical offset (`text.len()` maps past the last piece).
    fn source(&self, logical: usize) -> usize {
        let i = self.pieces.partition_point(|&(l, _)| l <= logical);
        if i == 0 {
            return self.pieces.first().map_or(0, |p| p.1);
        }
        let (l, s) = self.pieces[i - 1];
        s + (logical - l)
    }

    /// The source range of a logical range; the end maps from its last byte
    /// so a range never spans a trailing escaped newline.
    fn range(&self, start: usize, end: usize) -> TextRange {
        let s = self.source(start);
        if end <= start {
            return TextRange::empty(s);
        }
        TextRange::new(s, self.source(end - 1) + 1)
    }

    fn word(&self, start: usize, end: usize) -> Word {
        Word {
            text: self.text[start..end].to_string(),
            range: self.range(start, end),
        }
    }
}

/// A physical line: where it starts and where its content ends (before
/// `\r\n` or `\n`).
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
}

/// A here-document as `Dockerfile::heredoc_body` read it.
struct ReadHeredoc {
    heredoc: Heredoc,
    /// Where the line that closes it ends (the end of the file when none does).
    end: usize,
}

fn physical_lines(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    while start < text.len() {
        let nl = text[start..].find('\n').map(|i| start + i);
        let (end, next) = match nl {
            Some(nl) => (nl, nl + 1),
            None => (text.len(), text.len()),
        };
        let end = if end > start && bytes[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        lines.push(Line { start, end });
        start = next;
    }
    lines
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

fn is_comment(s: &str) -> bool {
    s.trim_start().starts_with('#')
}

/// `# name=value` at the top of the file.
fn directive(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix('#')?.trim();
    let (name, value) = rest.split_once('=')?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "syntax" | "escape" | "check").then(|| (name, value.trim().to_string()))
}

impl Dockerfile {
    pub fn parse(text: &str) -> Dockerfile {
        let lines = physical_lines(text);
        let mut file = Dockerfile {
            escape: '\\',
            directives: Vec::new(),
            instructions: Vec::new(),
            errors: Vec::new(),
        };
        let mut i = 0;
        // Parser directives: only before the first comment, blank line or instruction.
        while let Some(line) = lines.get(i) {
            let content = &text[line.start..line.end];
            let Some((name, value)) = directive(content) else {
                break;
            };
            let range = TextRange::new(line.start, line.end);
            if file.directives.iter().any(|d| d.name == name) {
                file.errors.push(SyntaxError {
                    message: format!("only one `{name}` parser directive can be used"),
                    range,
                });
            } else if name == "escape" {
                match value.as_str() {
                    "\\" => file.escape = '\\',
                    "`" => file.escape = '`',
                    _ => file.errors.push(SyntaxError {
                        message: format!(
                            "invalid escape character `{value}`: it must be `\\` or `` ` ``"
                        ),
                        range,
                    }),
                }
            }
            file.directives.push(Directive { name, value, range });
            i += 1;
        }
        // Where the first `FROM` is, well-formed or not.
        let mut first_from = None;
        while i < lines.len() {
            let line = lines[i];
            let content = &text[line.start..line.end];
            if is_blank(content) || is_comment(content) {
                i += 1;
                continue;
            }
            i = file.instruction(text, &lines, i, &mut first_from);
        }
        if file.instructions.is_empty() && file.errors.is_empty() {
            file.errors.push(SyntaxError {
                message: "the file has no instructions".into(),
                range: TextRange::empty(0),
            });
        }
        file.check_order(first_from.unwrap_or(u32::MAX));
        file
    }

    /// Parses the instruction starting on line `i`; returns the next line to read.
    fn instruction(
        &mut self,
        text: &str,
        lines: &[Line],
        mut i: usize,
        first_from: &mut Option<u32>,
    ) -> usize {
        let first = lines[i];
        let indent =
            text[first.start..first.end].len() - text[first.start..first.end].trim_start().len();
        let (logical, last_end) =
            self.join_continuations(text, lines, &mut i, first.start + indent);
        let line_text = logical.text.as_str();
        let keyword_end = line_text
            .find(|c: char| c.is_whitespace())
            .unwrap_or(line_text.len());
        let keyword = line_text[..keyword_end].to_ascii_uppercase();
        let keyword_range = logical.range(0, keyword_end);
        let mut range = TextRange::new(first.start + indent, last_end);
        if !KEYWORDS.contains(&keyword.as_str()) {
            self.errors.push(SyntaxError {
                message: format!("unknown instruction `{}`", &line_text[..keyword_end]),
                range: keyword_range,
            });
            return i;
        }
        if keyword == "FROM" {
            first_from.get_or_insert(keyword_range.start);
        }
        let (flags, args_start) = parse_flags(&logical, keyword_end);
        let rest = &line_text[args_start..];
        let rest_trimmed = rest.trim_end();
        let args_end = args_start + rest_trimmed.len();
        let mut heredocs = Vec::new();
        if HEREDOC_FORM.contains(&keyword.as_str()) {
            for (name, strip_tabs, marker) in heredoc_markers(&line_text[args_start..args_end]) {
                let marker_range = logical.range(
                    args_start + marker.start as usize,
                    args_start + marker.end as usize,
                );
                let heredoc =
                    self.heredoc_body(text, lines, &mut i, name, strip_tabs, marker_range);
                range = range.cover(TextRange::new(heredoc.end, heredoc.end));
                heredocs.push(heredoc.heredoc);
            }
        }
        let json = JSON_FORM.contains(&keyword.as_str()) && rest_trimmed.starts_with('[');
        let args = match json
            .then(|| parse_json_array(&logical, args_start, args_end))
            .flatten()
        {
            Some(words) => Args::Exec(words),
            // Not valid JSON: BuildKit runs it as a shell command.
            None => Args::Shell(logical.word(args_start, args_end)),
        };
        let empty = match &args {
            Args::Shell(w) => w.text.is_empty(),
            Args::Exec(_) => false,
        };
        if empty {
            self.errors.push(SyntaxError {
                message: format!("`{keyword}` requires at least one argument"),
                range: keyword_range,
            });
            return i;
        }
        let instruction = Instruction {
            keyword,
            keyword_range,
            range,
            flags,
            args,
            heredocs,
            logical,
            args_start,
            pairs: Vec::new(),
        };
        let mut instruction = instruction;
        if matches!(instruction.keyword.as_str(), "ENV" | "ARG" | "LABEL") {
            instruction.pairs = instruction.split_pairs();
        }
        if let Some(error) = instruction.shape_error() {
            self.errors.push(error);
            return i;
        }
        self.instructions.push(instruction);
        i
    }

    /// Joins the lines of one instruction that end in the escape character,
    /// starting at byte `piece_start` of line `*i`; leaves `*i` at the line
    /// after it and returns the logical line and where its last line ends.
    fn join_continuations(
        &self,
        text: &str,
        lines: &[Line],
        i: &mut usize,
        mut piece_start: usize,
    ) -> (Logical, usize) {
        let mut logical = Logical::default();
        let mut last_end;
        loop {
            let line = lines[*i];
            let content = &text[piece_start..line.end];
            let trimmed = content.trim_end();
            last_end = line.end;
            *i += 1;
            if let Some(joined) = trimmed.strip_suffix(self.escape) {
                logical.push(joined, piece_start);
                // Comment and blank lines inside a continuation are skipped.
                while let Some(next) = lines.get(*i) {
                    let c = &text[next.start..next.end];
                    if is_blank(c) || is_comment(c) {
                        *i += 1;
                    } else {
                        break;
                    }
                }
                match lines.get(*i) {
                    Some(next) => piece_start = next.start,
                    None => break,
                }
            } else {
                logical.push(content, piece_start);
                break;
            }
        }
        (logical, last_end)
    }

    /// Reads a here-document's body from line `*i` to the line `name` that
    /// closes it (after leading tabs for `<<-`), leaving `*i` after that
    /// line. An unclosed one runs to the end of the file and is an error at
    /// its marker.
    fn heredoc_body(
        &mut self,
        text: &str,
        lines: &[Line],
        i: &mut usize,
        name: String,
        strip_tabs: bool,
        marker_range: TextRange,
    ) -> ReadHeredoc {
        let body_start = lines.get(*i).map_or(text.len(), |l| l.start);
        let mut found = None;
        while let Some(line) = lines.get(*i) {
            let c = &text[line.start..line.end];
            let c = if strip_tabs {
                c.trim_start_matches('\t')
            } else {
                c
            };
            *i += 1;
            if c == name {
                found = Some(*line);
                break;
            }
        }
        let (body_end, end) = match found {
            Some(line) => (line.start, line.end),
            None => {
                self.errors.push(SyntaxError {
                    message: format!("unterminated heredoc: no line `{name}` closes it"),
                    range: marker_range,
                });
                (text.len(), text.len())
            }
        };
        ReadHeredoc {
            heredoc: Heredoc {
                name,
                strip_tabs,
                body: Word {
                    text: text[body_start..body_end].to_string(),
                    range: TextRange::new(body_start, body_end),
                },
            },
            end,
        }
    }

    /// Only `ARG` may come before the first `FROM`.
    fn check_order(&mut self, first_from: u32) {
        if let Some(first) = self
            .instructions
            .iter()
            .take_while(|i| i.keyword_range.start < first_from)
            .find(|i| i.keyword != "ARG")
        {
            self.errors.push(SyntaxError {
                message: format!(
                    "`{}` before the first `FROM`: only `ARG` may come before it (no build stage in current context)",
                    first.keyword
                ),
                range: first.keyword_range,
            });
        }
    }
}

/// Leading `--name[=value]` words after the keyword; returns them and where
/// the arguments start.
fn parse_flags(logical: &Logical, keyword_end: usize) -> (Vec<Flag>, usize) {
    let text = &logical.text;
    let mut flags = Vec::new();
    let mut at = skip_space(text, keyword_end);
    while text[at..].starts_with("--") {
        let end = word_end(text, at);
        let word = &text[at + 2..end];
        if word.is_empty() {
            break;
        }
        let (name, value) = match word.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(unquote(v))),
            None => (word.to_string(), None),
        };
        flags.push(Flag {
            name,
            value,
            range: logical.range(at, end),
        });
        at = skip_space(text, end);
    }
    (flags, at)
}

fn skip_space(text: &str, from: usize) -> usize {
    text[from..]
        .find(|c: char| !c.is_whitespace())
        .map_or(text.len(), |i| from + i)
}

/// Scans a word from `from` as BuildKit splits words: quotes group, and a
/// backslash escapes the next character (outside single quotes). Returns
/// where the word ends (unquoted whitespace, or the end of the text) and
/// the quote still open there.
fn scan_word(text: &str, from: usize) -> (usize, Option<char>) {
    // Byte by byte: quotes, the backslash and ASCII white space are single
    // bytes, and only a non-ASCII character needs decoding (to ask whether
    // it is white space, as `char::is_whitespace` does).
    let bytes = text.as_bytes();
    let char_len = |at: usize| text[at..].chars().next().map_or(1, char::len_utf8);
    let mut quote: Option<u8> = None;
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        if !b.is_ascii() {
            let c = text[i..].chars().next().expect("a character starts here");
            if quote.is_none() && c.is_whitespace() {
                return (i, None);
            }
            i += c.len_utf8();
            continue;
        }
        match (quote, b) {
            (None | Some(b'"'), b'\\') => {
                // The escaped character, whatever its length.
                i += 1;
                if i < bytes.len() {
                    i += char_len(i);
                }
                continue;
            }
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), b) if b == q => quote = None,
            // `char::is_whitespace` in ASCII: tab to carriage return, space.
            (None, b'\t'..=b'\r' | b' ') => return (i, None),
            _ => {}
        }
        i += 1;
    }
    (text.len(), quote.map(char::from))
}

/// The end of a whitespace-separated word starting at `from`.
fn word_end(text: &str, from: usize) -> usize {
    scan_word(text, from).0
}

/// The quote a word opens and never closes (`"video,utility`), which
/// BuildKit refuses: `unexpected end of statement while looking for
/// matching double-quote`. (A word holds no unquoted whitespace, so the
/// scan reaches its end.)
fn unclosed_quote(word: &str) -> Option<char> {
    scan_word(word, 0).1
}

/// A word's value as BuildKit's shell lexer reads it, variables left as
/// written: quotes may open and close anywhere in the word (`a"b c"d` is
/// `ab cd`), single quotes keep everything literal, inside double quotes a
/// backslash escapes only `"`, `$` and itself, and outside quotes it
/// escapes any character. (Like `scan_word`, it takes `\` as the escape
/// character.)
pub(crate) fn unquote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => out.extend(chars.by_ref().take_while(|&c| c != '\'')),
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.peek() {
                            Some('"' | '$' | '\\') => out.extend(chars.next()),
                            None => {}
                            Some(_) => out.push('\\'),
                        },
                        c => out.push(c),
                    }
                }
            }
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// Heredoc openers in an argument string: `<<EOF`, `<<-EOF`, `<<"EOF"`,
/// `3<<'EOF'` (name, strip tabs, range of the marker in `args`).
fn heredoc_markers(args: &str) -> Vec<(String, bool, TextRange)> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < args.len() {
        at = skip_space(args, at);
        if at >= args.len() {
            break;
        }
        let end = word_end(args, at);
        let word = &args[at..end];
        let digits = word.len() - word.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if let Some(rest) = word[digits..].strip_prefix("<<")
            && !rest.starts_with('<')
        {
            let (strip_tabs, rest) = match rest.strip_prefix('-') {
                Some(r) => (true, r),
                None => (false, rest),
            };
            let name = unquote(rest);
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
            {
                found.push((name, strip_tabs, TextRange::new(at, end)));
            }
        }
        at = end;
    }
    found
}

/// A JSON array of strings, with each string's source span; `None` when the
/// text is not one.
fn parse_json_array(logical: &Logical, start: usize, end: usize) -> Option<Vec<Word>> {
    let text = &logical.text[..end];
    let bytes = text.as_bytes();
    let mut at = start;
    let expect = |at: &mut usize, b: u8| -> Option<()> {
        *at = skip_space(text, *at);
        (bytes.get(*at) == Some(&b)).then(|| *at += 1)
    };
    expect(&mut at, b'[')?;
    let mut words = Vec::new();
    at = skip_space(text, at);
    if bytes.get(at) == Some(&b']') {
        at += 1;
    } else {
        loop {
            at = skip_space(text, at);
            if bytes.get(at) != Some(&b'"') {
                return None;
            }
            let open = at;
            at += 1;
            let mut escaped = false;
            loop {
                let &b = bytes.get(at)?;
                at += 1;
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => break,
                    _ => {}
                }
            }
            let value: String = serde_json::from_str(&text[open..at]).ok()?;
            words.push(Word {
                text: value,
                range: logical.range(open, at),
            });
            at = skip_space(text, at);
            match bytes.get(at) {
                Some(b',') => at += 1,
                Some(b']') => {
                    at += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (skip_space(text, at) == end).then_some(words)
}

/// `KEY=value` (or ARG's bare `NAME`) in an `ENV`, `ARG` or `LABEL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    pub key: Word,
    /// Unquoted value, with its span as written (quotes included).
    pub value: Option<Word>,
    /// `KEY=value` as written.
    pub range: TextRange,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scan_word` as it was written first, character by character: the
    /// reference the byte scan must agree with.
    fn scan_word_by_chars(text: &str, from: usize) -> (usize, Option<char>) {
        let mut quote = None;
        let mut escaped = false;
        for (i, c) in text[from..].char_indices() {
            if escaped {
                escaped = false;
                continue;
            }
            match (quote, c) {
                (None | Some('"'), '\\') => escaped = true,
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() => return (from + i, None),
                _ => {}
            }
        }
        (text.len(), quote)
    }

    proptest::proptest! {
        #[test]
        fn the_byte_scan_of_a_word_is_the_character_scan(
            text in "[a\\\\\"' \t\u{b}\u{c}\r\n\u{85}\u{a0}\u{2003}\u{e9}\u{1f600}x=$-]{0,24}"
        ) {
            for (from, _) in text.char_indices() {
                proptest::prop_assert_eq!(scan_word(&text, from), scan_word_by_chars(&text, from));
            }
        }
    }

    fn parse(text: &str) -> Dockerfile {
        Dockerfile::parse(text)
    }

    fn at(text: &str, range: TextRange) -> &str {
        &text[range.as_range()]
    }

    /// Quotes and escapes as BuildKit's lexer removes them from a word.
    #[test]
    fn unquote_reads_words_as_buildkit() {
        assert_eq!(unquote("\"video,utility\""), "video,utility");
        assert_eq!(unquote("'a b'"), "a b");
        // Quotes may close before the word ends.
        assert_eq!(unquote("\"video,utility\"\u{e}"), "video,utility\u{e}");
        assert_eq!(unquote("a\"b c\"d'e f'"), "ab cde f");
        assert_eq!(unquote(r#""a\"b\$c\d""#), r#"a"b$c\d"#);
        assert_eq!(unquote(r"a\ b\\c"), r"a b\c");
        assert_eq!(unquote(r"'a\b'"), r"a\b");
        assert_eq!(unquote("plain"), "plain");
    }

    #[test]
    fn directives_escape_and_continuations() {
        let text = "# syntax=docker/dockerfile:1\n# escape=`\nFROM ubuntu\nRUN apt-get update && `\n    # a comment\n\n    apt-get install -y curl\n";
        let f = parse(text);
        assert!(f.errors.is_empty(), "{:?}", f.errors);
        assert_eq!(f.escape, '`');
        assert_eq!(f.directives.len(), 2);
        let run = &f.instructions[1];
        assert_eq!(
            run.args_text(),
            "apt-get update &&     apt-get install -y curl"
        );
        let words = run.words();
        let curl = words.last().unwrap();
        assert_eq!(at(text, curl.range), "curl");
        assert_eq!(
            at(text, run.range).lines().last().unwrap(),
            "    apt-get install -y curl"
        );
    }

    #[test]
    fn flags_json_and_heredocs() {
        let text = "FROM --platform=$BUILDPLATFORM nvcr.io/nvidia/cuda:12.4.1-devel AS builder\nRUN --mount=type=cache,target=/root/.cache <<EOF\npip install torch\nEOF\nCOPY <<-\"A\" /a\n\thello\n\tA\nCMD [\"python\", \"train.py\"]\n";
        let f = parse(text);
        assert!(f.errors.is_empty(), "{:?}", f.errors);
        let from = &f.instructions[0];
        assert_eq!(
            from.flag("platform").unwrap().value.as_deref(),
            Some("$BUILDPLATFORM")
        );
        let words = from.words();
        assert_eq!(at(text, words[0].range), "nvcr.io/nvidia/cuda:12.4.1-devel");
        assert_eq!(words[2].text, "builder");
        let run = &f.instructions[1];
        assert_eq!(
            run.flag("mount").unwrap().value.as_deref(),
            Some("type=cache,target=/root/.cache")
        );
        assert_eq!(run.heredocs[0].body.text, "pip install torch\n");
        assert_eq!(at(text, run.range).lines().last(), Some("EOF"));
        assert_eq!(f.instructions[2].heredocs[0].name, "A");
        match &f.instructions[3].args {
            Args::Exec(words) => {
                assert_eq!(words[1].text, "train.py");
                assert_eq!(at(text, words[1].range), "\"train.py\"");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn env_pairs_in_both_forms() {
        let text = "FROM x\nENV A=1 B=\"two words\" \\\n    C=3\nENV LEGACY some value\n";
        let f = parse(text);
        assert!(f.errors.is_empty(), "{:?}", f.errors);
        let pairs = f.instructions[1].key_values();
        let keys: Vec<_> = pairs.iter().map(|p| p.key.text.as_str()).collect();
        assert_eq!(keys, ["A", "B", "C"]);
        assert_eq!(pairs[1].value.as_ref().unwrap().text, "two words");
        assert_eq!(at(text, pairs[2].range), "C=3");
        let legacy = f.instructions[2].key_values();
        assert_eq!(legacy[0].key.text, "LEGACY");
        assert_eq!(legacy[0].value.as_ref().unwrap().text, "some value");
        assert_eq!(at(text, legacy[0].range), "LEGACY some value");
    }

    /// Checked with the engine's builder (Engine 20.10): the first file is
    /// refused with `unexpected end of statement while looking for matching
    /// double-quote`, the second builds.
    #[test]
    fn an_unclosed_quote_is_an_error_and_escapes_are_not() {
        let f = parse("FROM scratch\nENV D=\"x\nENV E=ok\n");
        assert_eq!(f.errors.len(), 1, "{:?}", f.errors);
        assert!(
            f.errors[0]
                .message
                .contains("double quote that is never closed")
        );
        assert_eq!(f.instructions.len(), 2, "the ENV is left out of the model");
        let f = parse("FROM scratch\nENV A=\"a\\\"b\" B=x\\ y C='it\"s'\nARG X='y\n");
        assert_eq!(f.errors.len(), 1, "{:?}", f.errors);
        assert!(f.errors[0].message.starts_with("`ARG` has a single quote"));
        let env = &f.instructions[1];
        let values: Vec<_> = env
            .key_values()
            .iter()
            .map(|p| p.value.as_ref().unwrap().text.as_str())
            .collect();
        // `x\ y` is `x y`, as the Dockerfile reference's `MY_DOG=Rex\ The\ Dog`.
        assert_eq!(values, ["a\"b", "x y", "it\"s"]);
    }

    #[test]
    fn errors_are_located_and_parsing_goes_on() {
        let text = "FROM a b\nRUNN echo\nENV KEY\nRUN <<EOF\necho\n";
        let f = parse(text);
        let messages: Vec<(String, &str)> = f
            .errors
            .iter()
            .map(|e| (e.message.clone(), at(text, e.range)))
            .collect();
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert_eq!(messages[0].1, "FROM");
        assert!(messages[1].0.contains("unknown instruction `RUNN`"));
        assert_eq!(messages[2].1, "KEY");
        assert!(messages[3].0.contains("unterminated heredoc"));
        assert_eq!(messages[3].1, "<<EOF");
    }

    #[test]
    fn crlf_tabs_and_instructions_before_from() {
        let text = "ARG BASE=ubuntu\r\nRUN echo\r\nFROM\t${BASE}\r\n";
        let f = parse(text);
        assert_eq!(f.errors.len(), 1);
        assert!(f.errors[0].message.contains("before the first `FROM`"));
        assert_eq!(f.instructions[2].words()[0].text, "${BASE}");
        assert_eq!(at(text, f.instructions[2].range), "FROM\t${BASE}");
    }

    #[test]
    fn invalid_json_is_shell_form_and_empty_files_are_errors() {
        let f = parse("FROM x\nCMD [\"a\", b]\n");
        assert!(matches!(f.instructions[1].args, Args::Shell(_)));
        assert_eq!(parse("# only a comment\n").errors.len(), 1);
    }
}
