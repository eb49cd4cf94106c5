//! Shell command lines, as far as linting needs them: simple commands made
//! of words with their quotes removed and their byte ranges. Commands end at
//! newlines, `;`, `&`, `|`, `&&`, `||`, `(` and `)`; a backslash-newline
//! continues a line; comments and here-document bodies are skipped (`lex`
//! also returns the here-documents, with their bodies' ranges, and the
//! operators between commands, which `shell_script` reads control flow
//! and nested scripts from). Nothing is
//! expanded: a word that holds `$`, `${…}`, `$(…)` or backticks is marked
//! `dynamic`, and rules treat its value as unknown. The commands inside a
//! command substitution (`CID=$(docker run …)`, `` `docker run …` ``) are
//! commands too, listed before the one that holds them (they run first).
//!
//! Shell text is often embedded in another file (a Makefile recipe, a
//! Markdown code block, a workflow's `run:`). A [`Snippet`] is that text
//! with a map from its offsets back to the host file's, so every range this
//! module returns is already in the host file.

use crate::text::TextRange;

/// Shell text taken from a host file, with where each piece came from.
#[derive(Debug, Clone)]
pub struct Snippet {
    pub text: String,
    /// `(offset in text, offset in the host file)`, sorted: text from each
    /// start on is the host's text from the matching offset on.
    pieces: Vec<(usize, usize)>,
    /// `(offset in text, host offset)`, sorted: where a range ending at that
    /// offset ends in the host, when it is not one past its last byte's
    /// host offset (a character written as an escape, `\"`).
    ends: Vec<(usize, usize)>,
    /// The YAML path of the scalar it came from (a workflow's `run:`).
    pub yaml_path: Option<Vec<String>>,
    /// The YAML document `yaml_path` is in.
    pub yaml_document: usize,
    /// A Makefile recipe, where `$(NAME)` is a make variable, not a
    /// command substitution.
    pub make_variables: bool,
}

impl Snippet {
    /// A whole file, or a contiguous part of one starting at `offset`.
    pub fn verbatim(text: &str, offset: usize) -> Self {
        Snippet {
            text: text.to_string(),
            pieces: vec![(0, offset)],
            ends: Vec::new(),
            yaml_path: None,
            yaml_document: 0,
            make_variables: false,
        }
    }

    /// Text whose pieces come from anywhere in the host: `pieces` are
    /// `(offset in text, host offset)`, sorted.
    /// `ends` as in `Snippet::ends`.
    pub fn mapped(text: String, pieces: Vec<(usize, usize)>, ends: Vec<(usize, usize)>) -> Self {
        Snippet {
            text,
            pieces,
            ends,
            yaml_path: None,
            yaml_document: 0,
            make_variables: false,
        }
    }

    /// Built line by line: each `(line, host offset)` is appended with a
    /// newline after it. A range that takes in that newline (a quote left
    /// open runs to the end of the text) ends where the line's text does:
    /// the host's line may end in `\r\n`, or, the last, in nothing at all.
    pub fn from_lines<'a>(lines: impl IntoIterator<Item = (&'a str, usize)>) -> Self {
        let mut snippet = Snippet {
            text: String::new(),
            pieces: Vec::new(),
            ends: Vec::new(),
            yaml_path: None,
            yaml_document: 0,
            make_variables: false,
        };
        for (line, offset) in lines {
            snippet.pieces.push((snippet.text.len(), offset));
            snippet.text.push_str(line);
            snippet.text.push('\n');
            snippet.ends.push((snippet.text.len(), offset + line.len()));
        }
        snippet
    }

    /// The host offset of an offset in the snippet's text.
    pub(crate) fn host_offset(&self, offset: usize) -> usize {
        let i = self.pieces.partition_point(|&(start, _)| start <= offset);
        match i.checked_sub(1).map(|i| self.pieces[i]) {
            Some((start, host)) => host + (offset - start),
            None => offset,
        }
    }

    pub(crate) fn host_range(&self, start: usize, end: usize) -> TextRange {
        let host_start = self.host_offset(start);
        // The end is mapped from the last byte in, so that a range ending at
        // a line end does not jump to the next piece.
        let host_end = if let Ok(i) = self.ends.binary_search_by_key(&end, |e| e.0) {
            self.ends[i].1
        } else if end > start {
            self.host_offset(end - 1) + 1
        } else {
            host_start
        };
        TextRange::new(host_start, host_end.max(host_start))
    }
}

/// A word of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Quotes and escapes removed; expansions kept as written.
    pub text: String,
    /// In the host file.
    pub range: TextRange,
    /// Holds an expansion, so its value is only known at run time.
    pub dynamic: bool,
}

impl Word {
    /// The variable a word assigns (`NAME=value`, `export`'s argument too).
    pub fn assigned_name(&self) -> Option<&str> {
        let (name, _) = self.text.split_once('=')?;
        (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            .then_some(name)
    }
}

/// A simple command: its words, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub words: Vec<Word>,
}

impl Command {
    /// From its first word to its last, in the host file.
    pub fn range(&self) -> TextRange {
        match (self.words.first(), self.words.last()) {
            (Some(a), Some(b)) => a.range.cover(b.range),
            _ => TextRange::default(),
        }
    }
}

/// A here-document: `<<EOF` and the lines after it up to the delimiter,
/// which are the standard input of the command that holds the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HereDoc {
    /// The delimiter, quotes removed.
    pub delimiter: String,
    /// `<<'EOF'`, `<<"EOF"`, `<<\EOF`: the body is passed on as written.
    /// Unquoted, the shell first expands `$…` and backquotes in it (and
    /// removes the backslash of `\$`, `` \` `` and `\\`).
    pub quoted: bool,
    /// `<<-`: leading tabs are removed from every body line.
    pub strip_tabs: bool,
    /// The operator with its delimiter, in the host.
    pub operator: TextRange,
    /// The body lines, each with its newline, in the host: from the line
    /// after the operator's to the delimiter line (left out).
    pub body: TextRange,
    /// Whether the delimiter line was found; if not, the body runs to the
    /// end of the text, as the shell reads it (with a warning).
    pub terminated: bool,
    /// The simple command (its index in [`Lexed::commands`]) whose
    /// standard input the body is.
    pub command: usize,
}

/// An operator between simple commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Newline,
    /// `;`
    Semi,
    /// `;;`, `;&` or `;;&`: the end of a `case` arm.
    CaseEnd,
    /// `&`
    Background,
    /// `|` or `|&`
    Pipe,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `(`
    Open,
    /// `)`
    Close,
}

/// A step of a command list as written: a simple command or an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// The index of the command in [`Lexed::commands`].
    Command(usize),
    /// An operator and where it is written in the host.
    Op(Op, TextRange),
}

/// Everything the lexer reads from a snippet.
#[derive(Debug, Clone, Default)]
pub struct Lexed {
    /// Every simple command, those in command substitutions first.
    pub commands: Vec<Command>,
    /// The here-documents, in the order their operators are written.
    pub heredocs: Vec<HereDoc>,
    /// The commands outside substitutions and the operators between them,
    /// in order: the shape control flow is read from.
    pub tokens: Vec<Token>,
}

/// Whether every quote, `` `…` ``, `$(…)` and `${…}` that `text` (a word,
/// an option or a command as written) opens is closed in it. One left open runs to the end
/// of the host text (or to the next such quote), so deleting the word
/// would delete, or re-join, what follows it.
pub fn quotes_close(text: &str) -> bool {
    #[derive(PartialEq)]
    enum Open {
        Single,
        Double,
        Backtick,
        Paren,
        Brace,
    }
    let mut open: Vec<Open> = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if open.last() == Some(&Open::Single) {
            if c == '\'' {
                open.pop();
            }
            continue;
        }
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if open.last() != Some(&Open::Double) => open.push(Open::Single),
            '"' if open.last() == Some(&Open::Double) => {
                open.pop();
            }
            '"' => open.push(Open::Double),
            '`' if open.last() == Some(&Open::Backtick) => {
                open.pop();
            }
            '`' => open.push(Open::Backtick),
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                open.push(Open::Paren);
            }
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                open.push(Open::Brace);
            }
            '}' if open.last() == Some(&Open::Brace) => {
                open.pop();
            }
            ')' if open.last() == Some(&Open::Paren) => {
                open.pop();
            }
            _ => {}
        }
    }
    open.is_empty()
}

/// The simple commands of a snippet, in order.
pub fn commands(snippet: &Snippet) -> Vec<Command> {
    lex(snippet).commands
}

/// The commands, here-documents and operators of a snippet.
pub(crate) fn lex(snippet: &Snippet) -> Lexed {
    Lexer {
        text: snippet.text.as_bytes(),
        source: &snippet.text,
        snippet,
        at: 0,
        commands: Vec::new(),
        words: Vec::new(),
        heredocs: Vec::new(),
        heredoc_operator: None,
        depth: 0,
        found: Vec::new(),
        tokens: Vec::new(),
    }
    .run()
}

/// Command substitutions nest at most this deep (deeper ones stay words).
const MAX_SUBSTITUTION_DEPTH: usize = 8;

struct Lexer<'a> {
    text: &'a [u8],
    source: &'a str,
    snippet: &'a Snippet,
    at: usize,
    commands: Vec<Command>,
    words: Vec<Word>,
    /// Here-documents (indices in `found`) whose bodies start on the next
    /// line.
    heredocs: Vec<usize>,
    /// A `<<` (true: `<<-`) written apart from its delimiter (`<< EOF`),
    /// with where it starts: the next word is the delimiter.
    heredoc_operator: Option<(bool, usize)>,
    /// How many command substitutions this lexer is inside.
    depth: usize,
    /// Every here-document read; `command` is `usize::MAX` until the
    /// command holding it ends.
    found: Vec<HereDoc>,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    fn run(mut self) -> Lexed {
        while self.at < self.text.len() {
            let c = self.text[self.at];
            match c {
                b' ' | b'\t' | b'\r' => self.at += 1,
                b'\\' if self.peek(1) == Some(b'\n') => self.at += 2,
                b'\n' => {
                    self.operator(Op::Newline, 1);
                    self.skip_heredoc_bodies();
                }
                b'#' => {
                    while self.at < self.text.len() && self.text[self.at] != b'\n' {
                        self.at += 1;
                    }
                }
                // `&>file` redirects; any other `&` ends a command.
                b'&' if self.peek(1) == Some(b'>') => self.word(),
                b';' => match (self.peek(1), self.peek(2)) {
                    (Some(b';'), Some(b'&')) => self.operator(Op::CaseEnd, 3),
                    (Some(b';' | b'&'), _) => self.operator(Op::CaseEnd, 2),
                    _ => self.operator(Op::Semi, 1),
                },
                b'&' if self.peek(1) == Some(b'&') => self.operator(Op::And, 2),
                b'&' => self.operator(Op::Background, 1),
                b'|' if self.peek(1) == Some(b'|') => self.operator(Op::Or, 2),
                b'|' if self.peek(1) == Some(b'&') => self.operator(Op::Pipe, 2),
                b'|' => self.operator(Op::Pipe, 1),
                b'(' => self.operator(Op::Open, 1),
                b')' => self.operator(Op::Close, 1),
                _ => self.word(),
            }
        }
        self.end_command();
        // A here-document opened on the last line (or inside a command
        // substitution, which has no newline of its own) has an empty,
        // unterminated body at the end, not the placeholder at offset 0.
        self.skip_heredoc_bodies();
        // A here-document whose command never ended (cannot happen: the
        // operator is a word of it) would keep its placeholder.
        let last = self.commands.len().saturating_sub(1);
        for heredoc in &mut self.found {
            heredoc.command = heredoc.command.min(last);
        }
        Lexed {
            commands: self.commands,
            heredocs: self.found,
            tokens: self.tokens,
        }
    }

    /// Ends the command at the operator at the cursor, `len` bytes long.
    fn operator(&mut self, op: Op, len: usize) {
        let start = self.at;
        self.at += len;
        self.end_command();
        let range = self.snippet.host_range(start, self.at);
        self.tokens.push(Token::Op(op, range));
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.text.get(self.at + ahead).copied()
    }

    fn end_command(&mut self) {
        if !self.words.is_empty() {
            let words = std::mem::take(&mut self.words);
            let n = self.commands.len();
            self.commands.push(Command { words });
            self.tokens.push(Token::Command(n));
            for heredoc in self.found.iter_mut().rev() {
                if heredoc.command != usize::MAX {
                    break;
                }
                heredoc.command = n;
            }
        }
    }

    /// Reads one word starting at a non-blank, non-operator byte.
    fn word(&mut self) {
        let start = self.at;
        let mut text = String::new();
        let mut dynamic = false;
        while self.at < self.text.len() {
            let c = self.text[self.at];
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'|' | b'(' | b')' => break,
                // `2>&1`, `&>file`: part of a redirection, not a separator.
                b'&' if !(text.ends_with(['>', '<']) || self.peek(1) == Some(b'>')) => break,
                // `cat<<EOF`: the here-document operator starts a word of
                // its own (a file descriptor before it, `0<<EOF`, stays).
                b'<' if self.at > start
                    && self.peek(1) == Some(b'<')
                    && self.text[self.at - 1] != b'<'
                    && !self.source[start..self.at]
                        .bytes()
                        .all(|b| b.is_ascii_digit()) =>
                {
                    break;
                }
                b'\\' => match self.peek(1) {
                    Some(b'\n') => self.at += 2,
                    Some(_) => {
                        let next = self.char_len(self.at + 1);
                        text.push_str(&self.source[self.at + 1..self.at + 1 + next]);
                        self.at += 1 + next;
                    }
                    None => {
                        text.push('\\');
                        self.at += 1;
                    }
                },
                b'\'' => {
                    self.at += 1;
                    let end = self.find(b'\'');
                    text.push_str(&self.source[self.at..end]);
                    self.at = (end + 1).min(self.text.len());
                }
                b'"' => {
                    self.at += 1;
                    while self.at < self.text.len() && self.text[self.at] != b'"' {
                        match self.text[self.at] {
                            b'\\' if matches!(self.peek(1), Some(b'"' | b'\\' | b'$' | b'`')) => {
                                text.push(self.text[self.at + 1] as char);
                                self.at += 2;
                            }
                            b'\\' if self.peek(1) == Some(b'\n') => self.at += 2,
                            b'$' | b'`' => {
                                dynamic = true;
                                self.expansion(&mut text);
                            }
                            _ => self.copy_char(&mut text),
                        }
                    }
                    self.at = (self.at + 1).min(self.text.len());
                }
                b'$' | b'`' => {
                    dynamic = true;
                    self.expansion(&mut text);
                }
                _ => self.copy_char(&mut text),
            }
        }
        self.heredoc_word(start, &text);
        self.words.push(Word {
            text,
            range: self.snippet.host_range(start, self.at),
            dynamic,
        });
    }

    /// Notes a here-document the word starts or names: `<<EOF`, `<<'EOF'`,
    /// `<<"EOF"`, `<<-EOF`, or the word after a `<<` written apart
    /// (`<< EOF`). Quotes only stop expansion in the body; the delimiter is
    /// the word without them. `<<<` is a here-string, which has no body.
    fn heredoc_word(&mut self, start: usize, text: &str) {
        let raw = &self.source[start..self.at];
        // Any quoting in the delimiter word leaves the body unexpanded.
        let quoted = |delimiter: &str| delimiter.contains(['\'', '"', '\\']);
        if let Some((strip_tabs, operator)) = self.heredoc_operator.take() {
            if !text.is_empty() {
                self.heredoc(text, quoted(raw), strip_tabs, operator);
            }
            return;
        }
        // The operator itself is never quoted (a quoted `'<<'` is a word).
        let digits = raw.len() - raw.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let Some(rest) = raw[digits..].strip_prefix("<<") else {
            return;
        };
        if rest.starts_with('<') {
            return;
        }
        let strip_tabs = rest.starts_with('-');
        let operator = digits + 2 + usize::from(strip_tabs);
        if raw.len() == operator {
            self.heredoc_operator = Some((strip_tabs, start));
            return;
        }
        // The unquoted text keeps the operator's characters at its start.
        let delimiter = text.get(operator..).unwrap_or("");
        if !delimiter.is_empty() {
            let quoted = quoted(&raw[operator..]);
            self.heredoc(delimiter, quoted, strip_tabs, start);
        }
    }

    /// A here-document whose operator starts at `start` and whose
    /// delimiter word ends at the cursor; its body starts on the next line.
    fn heredoc(&mut self, delimiter: &str, quoted: bool, strip_tabs: bool, start: usize) {
        self.heredocs.push(self.found.len());
        self.found.push(HereDoc {
            delimiter: delimiter.to_string(),
            quoted,
            strip_tabs,
            operator: self.snippet.host_range(start, self.at),
            body: TextRange::default(),
            terminated: false,
            command: usize::MAX,
        });
    }

    /// Copies `$name`, `${…}`, `$(…)` or `` `…` `` as written.
    fn expansion(&mut self, text: &mut String) {
        let start = self.at;
        let c = self.text[self.at];
        self.at += 1;
        if c == b'`' {
            self.at = (self.find(b'`') + 1).min(self.text.len());
        } else {
            match self.peek(0) {
                Some(open @ (b'(' | b'{')) => {
                    let close = if open == b'(' { b')' } else { b'}' };
                    let mut depth = 0usize;
                    while self.at < self.text.len() {
                        let b = self.text[self.at];
                        self.at += 1;
                        if b == open {
                            depth += 1;
                        } else if b == close {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                    }
                }
                Some(b) if b.is_ascii_alphabetic() || b == b'_' => {
                    while self
                        .peek(0)
                        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                    {
                        self.at += 1;
                    }
                }
                // `$1`, `$@`, `$?` and the other one-character parameters.
                Some(b) if b.is_ascii_digit() || b"@*#?$!-".contains(&b) => self.at += 1,
                _ => {}
            }
        }
        text.push_str(&self.source[start..self.at]);
        // `$(…)` and `` `…` `` run commands of their own (not `$((…))`,
        // arithmetic); the closing `)` or `` ` `` is not part of them.
        let inner = match (c, self.text.get(start + 1)) {
            (b'`', _) => Some(start + 1),
            (b'$', Some(b'('))
                if self.text.get(start + 2) != Some(&b'(') && !self.snippet.make_variables =>
            {
                Some(start + 2)
            }
            _ => None,
        };
        if let Some(inner) = inner {
            let closed = self.at > inner && matches!(self.text[self.at - 1], b')' | b'`');
            let end = if closed { self.at - 1 } else { self.at };
            self.substitution(inner, end);
        }
    }

    /// Lexes `start..end`, the inside of a command substitution, into
    /// commands of their own (ranges stay in the host file).
    fn substitution(&mut self, start: usize, end: usize) {
        if self.depth >= MAX_SUBSTITUTION_DEPTH || start >= end {
            return;
        }
        let inner = Lexer {
            text: &self.text[..end],
            source: &self.source[..end],
            snippet: self.snippet,
            at: start,
            commands: Vec::new(),
            words: Vec::new(),
            heredocs: Vec::new(),
            heredoc_operator: None,
            depth: self.depth + 1,
            found: Vec::new(),
            tokens: Vec::new(),
        };
        let inner = inner.run();
        let base = self.commands.len();
        self.commands.extend(inner.commands);
        self.found
            .extend(inner.heredocs.into_iter().map(|mut heredoc| {
                heredoc.command += base;
                heredoc
            }));
    }

    /// The offset of the next `byte`, or the end of the text.
    fn find(&self, byte: u8) -> usize {
        self.text[self.at..]
            .iter()
            .position(|&b| b == byte)
            .map_or(self.text.len(), |p| self.at + p)
    }

    /// Copies the character at the cursor into `text` and moves past it.
    fn copy_char(&mut self, text: &mut String) {
        let n = self.char_len(self.at);
        text.push_str(&self.source[self.at..self.at + n]);
        self.at += n;
    }

    fn char_len(&self, at: usize) -> usize {
        self.source[at..].chars().next().map_or(1, char::len_utf8)
    }

    /// After a newline: skips the bodies of pending here-documents.
    fn skip_heredoc_bodies(&mut self) {
        for index in std::mem::take(&mut self.heredocs) {
            let body_start = self.at;
            let mut body_end = self.text.len();
            let mut terminated = false;
            let strip_tabs = self.found[index].strip_tabs;
            while self.at < self.text.len() {
                let line_start = self.at;
                let end = self.find(b'\n');
                let line = &self.source[self.at..end];
                self.at = (end + 1).min(self.text.len());
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                if line.trim_end_matches('\r') == self.found[index].delimiter {
                    (body_end, terminated) = (line_start, true);
                    break;
                }
            }
            let body = self.snippet.host_range(body_start, body_end);
            let heredoc = &mut self.found[index];
            (heredoc.body, heredoc.terminated) = (body, terminated);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        commands(&Snippet::verbatim(text, 0))
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn splits_commands_and_removes_quotes() {
        assert_eq!(
            words("docker run --gpus all -e 'A=b c' \"x y\" img\necho hi; ls | wc && true"),
            vec![
                vec![
                    "docker", "run", "--gpus", "all", "-e", "A=b c", "x y", "img"
                ],
                vec!["echo", "hi"],
                vec!["ls"],
                vec!["wc"],
                vec!["true"],
            ]
        );
    }

    #[test]
    fn quotes_close_as_the_shell_pairs_them() {
        for closed in [
            "-e A=1",
            "-e 'A=it\"s'",
            "-e \"A=$(date \"+%s\")\"",
            "-e A=`x`",
            "-e A=\\`",
            "-e \"A='\"",
            "-e A=${B:-x}",
        ] {
            assert!(quotes_close(closed), "{closed:?}");
        }
        for open in [
            "-e A=d`x",
            "-e 'A",
            "-e \"A=\\\"",
            "-e A=$(x",
            "-e \"A=`x\"",
        ] {
            assert!(!quotes_close(open), "{open:?}");
        }
    }

    #[test]
    fn heredocs_are_skipped_however_their_delimiter_is_written() {
        // An apostrophe in the body once opened a quote that swallowed the
        // `docker run` after it; the body's `docker run` is no command.
        for operator in [
            "<<'EOF'",
            "<<\"EOF\"",
            "<< EOF",
            "<<EOF",
            "<<-EOF",
            "<<- 'EOF'",
            "<<\\EOF",
        ] {
            for cat in ["cat ", "cat", "0"] {
                let text = format!(
                    "{cat}{operator} > notes.txt\nit's docker run --gpus all body\n\tEOF\nEOF\ndocker run --gpus all img\n"
                );
                let words = words(&text);
                assert_eq!(
                    words.last().unwrap(),
                    &["docker", "run", "--gpus", "all", "img"],
                    "{text:?}: {words:?}"
                );
                // `<<-` ends at the tab-indented delimiter; the next
                // `EOF` line is then a command of its own.
                let expected = if operator.starts_with("<<-") { 3 } else { 2 };
                assert_eq!(words.len(), expected, "{text:?}: {words:?}");
            }
        }
        // `<<<` is a here-string, `'<<'` a word: no body to skip.
        assert_eq!(words("cat <<< word\ndocker run x").len(), 2);
        assert_eq!(words("echo '<<' EOF\ndocker run x").len(), 2);
    }

    #[test]
    fn continues_lines_and_skips_comments_and_heredocs() {
        let text = "docker run \\\n  --shm-size=8g \\\n  img # a comment\ncat <<EOF\ndocker run x\nEOF\nnext 2>&1 &>/dev/null";
        assert_eq!(
            words(text),
            vec![
                vec!["docker", "run", "--shm-size=8g", "img"],
                vec!["cat", "<<EOF"],
                vec!["next", "2>&1", "&>/dev/null"],
            ]
        );
    }

    #[test]
    fn marks_expansions_dynamic_and_keeps_ranges() {
        let text = "run --shm-size=$SHM \"${A:-1}\" $(date +%s) plain";
        // The last: `date +%s` in the substitution comes first.
        let command = commands(&Snippet::verbatim(text, 10)).pop().unwrap();
        let dynamic: Vec<bool> = command.words.iter().map(|w| w.dynamic).collect();
        assert_eq!(dynamic, [false, true, true, true, false]);
        assert_eq!(command.words[3].text, "$(date +%s)");
        let plain = &command.words[4];
        assert_eq!(
            &text[plain.range.start as usize - 10..plain.range.end as usize - 10],
            "plain"
        );
    }

    #[test]
    fn command_substitutions_are_commands_too() {
        let text = "CID=$(docker run -d --gpus all img)\nX=\"`podman run b`\" && echo $((1+2))";
        let all = commands(&Snippet::verbatim(text, 0));
        let listed: Vec<Vec<&str>> = all
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.as_str()).collect())
            .collect();
        assert_eq!(
            listed,
            vec![
                vec!["docker", "run", "-d", "--gpus", "all", "img"],
                vec!["CID=$(docker run -d --gpus all img)"],
                vec!["podman", "run", "b"],
                vec!["X=`podman run b`"],
                vec!["echo", "$((1+2))"],
            ]
        );
        let img = &all[0].words[5];
        assert_eq!(&text[img.range.as_range()], "img");
        let b = &all[2].words[2];
        assert_eq!(&text[b.range.as_range()], "b");
    }

    #[test]
    fn a_quote_left_open_ends_where_the_host_text_does() {
        // The last line has no newline in the host, the first ends in CRLF.
        let host = "```\r\ndocker run -eA=1 \"x\r\ndocker run -eNCCL_ALGO=`";
        let lines = [
            ("docker run -eA=1 \"x", 5),
            ("docker run -eNCCL_ALGO=`", 26),
        ];
        let snippet = Snippet::from_lines(lines);
        for command in commands(&snippet) {
            for word in &command.words {
                let range = word.range.as_range();
                assert!(range.end <= host.len(), "{range:?} past {}", host.len());
                assert!(!host[range].ends_with(['\r', '\n']));
            }
        }
    }

    #[test]
    fn maps_snippet_lines_back_to_the_host() {
        let host = "x:\n    docker run \\\n      img\n";
        let lines = [("docker run \\", 7), ("  img", 24)];
        let snippet = Snippet::from_lines(lines);
        let command = &commands(&snippet)[0];
        let img = &command.words[2];
        assert_eq!(&host[img.range.as_range()], "img");
        assert_eq!(&host[command.words[1].range.as_range()], "run");
    }
}
