//! The variables a Compose project is interpolated with, read as
//! compose-go reads them: `.env` files by its `dotenv` parser, values by
//! its `template` substitution (compose-go v2.9.1, which Compose 2.40
//! links: `dotenv/parser.go`, `template/template.go`).
//!
//! The shell's environment is deliberately not consulted, so what gpulint
//! says does not depend on who runs it: a variable nothing in the project
//! sets is unknown (Compose would take the shell's value, or a blank).
//!
//! Both are bounded (see [`interpolate`]): a value longer than
//! [`MAX_VALUE_LEN`] or nested deeper than [`MAX_DEPTH`] is an error with
//! its place, where Compose would keep growing (`A2=${A1}${A1}` doubles a
//! line's text per line).

use crate::text::TextRange;
use crate::vfs::ReadError;
use foldhash::{HashMap, HashMapExt};
use std::path::{Path, PathBuf};

pub use crate::model::variables::{Interpolated, MAX_DEPTH, MAX_VALUE_LEN, interpolate};

/// A variable's value, when the project decides it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Known(String),
    /// It depends on a variable the project does not set: its name.
    Unknown(String),
}

/// One variable and the line that sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    pub value: Value,
    /// The `.env` (or include `env_file`) that sets it.
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    /// The whole `KEY=value` statement.
    pub range: TextRange,
}

/// The variables a project (or an included project) is interpolated with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    vars: HashMap<String, Var>,
}

impl Environment {
    pub fn get(&self, name: &str) -> Option<&Var> {
        self.vars.get(name)
    }

    /// The known value of `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        match &self.vars.get(name)?.value {
            Value::Known(v) => Some(v),
            Value::Unknown(_) => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// A text that is the same for the same variables and values (what an
    /// included project is loaded with decides what it is).
    pub fn fingerprint(&self) -> String {
        let mut names: Vec<(&String, &Var)> = self.vars.iter().collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        let mut out = String::new();
        for (name, var) in names {
            out.push_str(name);
            out.push('=');
            match &var.value {
                Value::Known(v) => out.push_str(v),
                Value::Unknown(on) => {
                    out.push_str("${");
                    out.push_str(on);
                    out.push('}');
                }
            }
            out.push('\0');
        }
        out
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Var)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Adds what `other` sets and this does not (compose-go's
    /// `Mapping.Merge`: what is set first wins).
    pub(crate) fn merge_under(&mut self, other: &Environment) {
        for (name, var) in &other.vars {
            self.vars.entry(name.clone()).or_insert_with(|| var.clone());
        }
    }

    /// Reads one env file's text over these variables: each line may refer
    /// to what is set already (these win, as compose-go's lookup asks the
    /// current environment first) and to the file's earlier lines; what the
    /// file sets is added where these do not set it. Errors are those
    /// compose-go refuses the file with, at their line.
    pub(crate) fn read_file(&mut self, path: &Path, text: &str) -> Result<(), EnvError> {
        let read = parse_dotenv(path, text, self)?;
        for (name, var) in read {
            self.vars.entry(name).or_insert(var);
        }
        Ok(())
    }

    /// What one env file sets, in its order, its `${...}` looked up in
    /// these variables first (a service's `env_file`).
    pub(crate) fn parse_file(
        &self,
        path: &Path,
        text: &str,
    ) -> Result<Vec<(String, Var)>, EnvError> {
        parse_dotenv(path, text, self)
    }

    /// Sets (or replaces) one variable.
    pub fn set(&mut self, name: &str, var: Var) {
        self.vars.insert(name.to_string(), var);
    }

    /// Reads one of a list of env files read into one map (compose-go's
    /// `GetEnvFromFile`: an include's `env_file`s): what it sets replaces
    /// what an earlier file of the list set.
    pub(crate) fn read_file_over(&mut self, path: &Path, text: &str) -> Result<(), EnvError> {
        let read = parse_dotenv(path, text, self)?;
        self.vars.extend(read);
        Ok(())
    }

    /// Substitutes variables in `template` as Compose does (see the module
    /// docs for what stays unknown).
    pub fn interpolate(&self, template: &str) -> Interpolated {
        interpolate(template, &|name| {
            self.vars.get(name).map(|v| match &v.value {
                Value::Known(text) => Ok(text.as_str()),
                Value::Unknown(on) => Err(on.as_str()),
            })
        })
    }
}

/// Why an env file is refused, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvError {
    pub message: String,
    pub file: PathBuf,
    pub line: usize,
    pub range: TextRange,
}

impl From<(PathBuf, ReadError)> for EnvError {
    fn from((file, error): (PathBuf, ReadError)) -> Self {
        EnvError {
            message: error.message,
            file,
            line: 1,
            range: TextRange::default(),
        }
    }
}

/// Reads an env file as compose-go's `dotenv` parser does, its `${...}`
/// looked up first in `env`, then in the file's own earlier lines.
fn parse_dotenv(
    path: &Path,
    text: &str,
    env: &Environment,
) -> Result<Vec<(String, Var)>, EnvError> {
    // compose-go skips a UTF-8 byte order mark.
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut parser = Dotenv {
        path,
        text,
        at: bom,
        line: 1,
        counted: 0,
        read: Vec::new(),
        index: HashMap::new(),
        env,
    };
    parser.run()?;
    Ok(parser.read)
}

struct Dotenv<'a> {
    path: &'a Path,
    text: &'a str,
    at: usize,
    /// The line of the last statement, and where it starts.
    line: usize,
    counted: usize,
    read: Vec<(String, Var)>,
    index: HashMap<String, usize>,
    env: &'a Environment,
}

/// compose-go's `isSpace`: a space that is not a line break.
fn is_inline_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    )
}

impl Dotenv<'_> {
    fn error(&self, message: String, start: usize) -> EnvError {
        let end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |n| start + n);
        // The statement's own line (compose-go counts to where it stopped
        // reading, which for an unterminated quote is the end of the file).
        let line = self.text[..start].matches('\n').count() + 1;
        EnvError {
            message: format!("line {line}: {message}"),
            file: self.path.to_path_buf(),
            line,
            range: TextRange::new(start, end),
        }
    }

    fn run(&mut self) -> Result<(), EnvError> {
        loop {
            // The next statement: skip white space and comment lines.
            loop {
                let rest = &self.text[self.at..];
                let Some(offset) = rest.find(|c: char| !c.is_whitespace()) else {
                    return Ok(());
                };
                self.at += offset;
                if !self.text[self.at..].starts_with('#') {
                    break;
                }
                match self.text[self.at..].find('\n') {
                    Some(n) => self.at += n,
                    None => return Ok(()),
                }
            }
            self.statement()?;
        }
    }

    fn statement(&mut self) -> Result<(), EnvError> {
        let start = self.at;
        // Counted from the last statement's start: linear in the file.
        self.line += self.text[self.counted..start].matches('\n').count();
        self.counted = start;
        let line = self.line;
        let mut src = &self.text[self.at..];
        // `export KEY=...`: the prefix and the spaces after it.
        if let Some(after) = src.strip_prefix("export")
            && after.starts_with(|c: char| c.is_whitespace())
        {
            src = after.trim_start_matches(is_inline_space);
        }
        let key_start = self.text.len() - src.len();
        let mut key_end = None;
        let mut inherited = false;
        for (i, c) in src.char_indices() {
            if is_inline_space(c) {
                continue;
            }
            match c {
                '=' | ':' | '\n' => {
                    key_end = Some(i);
                    inherited = c == '\n';
                    break;
                }
                '_' | '.' | '-' | '[' | ']' => {}
                c if c.is_alphanumeric() => {}
                c => {
                    // compose-go quotes the whole line here, its value too,
                    // which may be a secret: the error's place says which.
                    return Err(self.error(
                        format!("unexpected character {c:?} in variable name"),
                        start,
                    ));
                }
            }
        }
        let Some(key_end) = key_end else {
            // A name alone on the last line, with no line break after it:
            // compose-go reads an empty key and the name as its value.
            let value = self.expand(src.trim_end(), start)?;
            self.set("", value, line, start, self.text.len());
            self.at = self.text.len();
            return Ok(());
        };
        let key = src[..key_end].trim_end();
        if key.contains(' ') {
            return Err(self.error("key cannot contain a space".into(), start));
        }
        let mut rest_at = key_start + key_end + 1;
        if inherited {
            // `KEY` alone takes the value the environment gives it.
            if let Some(var) = self.env.get(key).cloned() {
                self.set(key, var.value, line, start, rest_at);
            }
            self.at = rest_at;
            return Ok(());
        }
        rest_at += self.text[rest_at..]
            .find(|c: char| !is_inline_space(c))
            .unwrap_or(self.text.len() - rest_at);
        let (value, end) = self.value(rest_at, start)?;
        self.set(key, value, line, start, end);
        self.at = end;
        Ok(())
    }

    fn set(&mut self, key: &str, value: Value, line: usize, start: usize, end: usize) {
        let statement_end = self.text[start..end].trim_end_matches(['\n', '\r']).len() + start;
        let var = Var {
            value,
            file: self.path.to_path_buf(),
            line,
            range: TextRange::new(start, statement_end),
        };
        match self.index.get(key) {
            Some(&i) => self.read[i].1 = var,
            None => {
                self.index.insert(key.to_string(), self.read.len());
                self.read.push((key.to_string(), var));
            }
        }
    }

    /// The value starting at `at`, and where the statement ends.
    fn value(&mut self, at: usize, start: usize) -> Result<(Value, usize), EnvError> {
        let src = &self.text[at..];
        let quote = match src.as_bytes().first() {
            Some(&q @ (b'"' | b'\'')) => q,
            _ => {
                // Unquoted: to the end of the line, before ` #`, trimmed.
                let (value, end) = match src.find('\n') {
                    Some(n) => (&src[..n], at + n + 1),
                    None => (src, self.text.len()),
                };
                let value = value.split(" #").next().unwrap_or("");
                let value = value.trim_end();
                return Ok((self.expand(value, start)?, end));
            }
        };
        let mut chars: Vec<u8> = Vec::new();
        let mut escaped = false;
        let bytes = src.as_bytes();
        let mut i = 1;
        while i < bytes.len() {
            let c = bytes[i];
            if c != quote {
                if !escaped && c == b'\\' {
                    escaped = true;
                    i += 1;
                    continue;
                }
                if escaped {
                    escaped = false;
                    chars.push(b'\\');
                }
                chars.push(c);
                i += 1;
                continue;
            }
            if escaped {
                escaped = false;
                chars.push(c);
                i += 1;
                continue;
            }
            let value = String::from_utf8_lossy(&chars).into_owned();
            let value = if quote == b'"' {
                self.expand(&expand_escapes(&value), start)?
            } else {
                Value::Known(value)
            };
            return Ok((value, at + i + 1));
        }
        let first_line = src.split('\n').next().unwrap_or("");
        Err(self.error(format!("unterminated quoted value {first_line}"), start))
    }

    /// `${...}` in a value: the environment first, then the file's own
    /// earlier lines.
    fn expand(&self, value: &str, start: usize) -> Result<Value, EnvError> {
        let lookup = |name: &str| {
            let var = self
                .env
                .get(name)
                .or_else(|| self.index.get(name).map(|&i| &self.read[i].1))?;
            Some(match &var.value {
                Value::Known(v) => Ok(v.as_str()),
                Value::Unknown(on) => Err(on.as_str()),
            })
        };
        match interpolate(value, &lookup) {
            Interpolated::Text(text) => Ok(Value::Known(text)),
            Interpolated::Unknown(name) => Ok(Value::Unknown(name)),
            Interpolated::Invalid(why) => Err(self.error(why, start)),
        }
    }
}

/// Every value text an env file writes, as written, with the name it is
/// written under: what follows the `=` (or `:`) of each line, trimmed,
/// also without its quotes and without a ` #` comment, and every line of a
/// quoted value that spans lines. Read line by line, whether or not the
/// file parses (a line Compose refuses holds a value too; a line without
/// a separator is all value). What the redaction hides
/// ([`gpulint_base::redact::Hidden`]) where a message or a frame could quote it.
pub fn raw_values(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut push = |name: &str, value: &str| {
        let value = value.trim();
        if !value.is_empty() && !out.iter().any(|(_, v)| v == value) {
            out.push((name.to_string(), value.to_string()));
        }
    };
    // The quote a value opened and has not closed, and its variable.
    let mut open: Option<(char, String)> = None;
    for line in text.lines() {
        let line = line.trim_start_matches('\u{feff}');
        if let Some((quote, name)) = &open {
            push(name, line);
            let name = name.clone();
            let quote = *quote;
            if let Some(end) = line.find(quote) {
                push(&name, &line[..end]);
                open = None;
            }
            continue;
        }
        let statement = line.trim_start();
        if statement.is_empty() || statement.starts_with('#') {
            continue;
        }
        let statement = statement
            .strip_prefix("export")
            .filter(|rest| rest.starts_with(char::is_whitespace))
            .map_or(statement, str::trim_start);
        let Some(sep) = statement.find(['=', ':']) else {
            // No name: the line itself must not name its placeholder.
            push("", statement);
            continue;
        };
        let name = statement[..sep].trim();
        let value = statement[sep + 1..].trim();
        push(name, value);
        push(name, value.split(" #").next().unwrap_or(""));
        let Some(quote) = value.chars().next().filter(|c| matches!(c, '"' | '\'')) else {
            continue;
        };
        let inner = &value[1..];
        match inner.find(quote) {
            Some(end) => push(name, &inner[..end]),
            None => {
                push(name, inner);
                open = Some((quote, name.to_string()));
            }
        }
    }
    out
}

/// compose-go's `expandEscapes` for double-quoted values: `\n`, `\t` and
/// the other C escapes, `\"`, `\\`, `\0` octal; `\$` stays an escaped `$`.
fn expand_escapes(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('c') => {
                // `\c` matches compose-go's pattern but is no Go escape: kept.
                chars.next();
                out.push_str("\\c");
            }
            Some(e @ ('a' | 'b' | 'f' | 'n' | 'r' | 't' | 'v' | '"' | '\\')) => {
                chars.next();
                out.push(match e {
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'v' => '\u{b}',
                    other => other,
                });
            }
            Some('$') => {
                chars.next();
                out.push_str("$$");
            }
            Some('0') => {
                chars.next();
                let mut digits = String::new();
                while digits.len() < 3
                    && let Some(d) = chars.peek().copied().filter(char::is_ascii_digit)
                {
                    digits.push(d);
                    chars.next();
                }
                match u32::from_str_radix(&digits, 8)
                    .ok()
                    .and_then(char::from_u32)
                {
                    Some(c) if digits.len() == 3 => out.push(c),
                    _ => {
                        out.push_str("\\0");
                        out.push_str(&digits);
                    }
                }
            }
            _ => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(text: &str) -> Environment {
        let mut env = Environment::default();
        env.read_file(Path::new(".env"), text).unwrap();
        env
    }

    fn error(text: &str) -> EnvError {
        let mut env = Environment::default();
        env.read_file(Path::new(".env"), text).unwrap_err()
    }

    /// compose-go quotes the line; its value may be a secret.
    #[test]
    fn a_malformed_name_is_refused_without_its_value() {
        let e = error("S=8g\nAPI*KEY=hunter2-secret\n");
        assert_eq!(
            e.message,
            "line 2: unexpected character '*' in variable name"
        );
        assert_eq!(e.line, 2);
        assert!(!e.message.contains("hunter2"));
    }

    #[test]
    fn dotenv_lines_as_compose_go_reads_them() {
        let e = env(
            "\u{feff}SHM_SIZE=256m\n# comment\nexport GPU=nvidia.com/gpu=all\nQUOTED=\"a b\\n\" # c\nSINGLE='${X}'\nPLAIN=x # comment\nREF=${SHM_SIZE}\nEMPTY=\nYAML: style\nMULTI=\"one\ntwo\"\nAFTER=1\n",
        );
        assert_eq!(e.value("SHM_SIZE"), Some("256m"), "the BOM is skipped");
        assert_eq!(e.get("SHM_SIZE").unwrap().line, 1);
        assert_eq!(e.value("GPU"), Some("nvidia.com/gpu=all"));
        assert_eq!(e.value("QUOTED"), Some("a b\n"));
        assert_eq!(e.value("SINGLE"), Some("${X}"));
        assert_eq!(e.value("PLAIN"), Some("x"));
        assert_eq!(e.value("REF"), Some("256m"));
        assert_eq!(e.value("EMPTY"), Some(""));
        assert_eq!(e.value("YAML"), Some("style"));
        assert_eq!(e.value("MULTI"), Some("one\ntwo"));
        assert_eq!(e.get("AFTER").unwrap().line, 12);
        // A reference to what nothing here sets is unknown, not blank.
        assert_eq!(
            env("A=${NOPE}/x\n").get("A").unwrap().value,
            Value::Unknown("NOPE".into())
        );
    }

    #[test]
    fn lines_compose_go_refuses_are_errors_at_their_line() {
        let e = error("A=1\nB=\"unterminated\nC=3\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("unterminated quoted value"), "{e:?}");
        let e = error("A=1\nBAD KEY=2\n");
        assert!(e.message.contains("key cannot contain a space"), "{e:?}");
        let e = error("A=1\nB$=2\n");
        assert!(e.message.contains("unexpected character"), "{e:?}");
        let e = error("A=${B:?is needed}\n");
        assert!(e.message.contains("required variable B"), "{e:?}");
    }

    #[test]
    fn raw_values_are_read_whether_or_not_the_file_parses() {
        let values = raw_values(
            "A=plain # note\nexport B='q v'\nC=\"Tr0ub4dor&3 horse\nnext line\"\n# D=skip\nLONE\nE: yaml\n",
        );
        let has = |name: &str, value: &str| values.iter().any(|(n, v)| n == name && v == value);
        assert!(has("A", "plain # note") && has("A", "plain"), "{values:?}");
        assert!(has("B", "'q v'") && has("B", "q v"), "{values:?}");
        assert!(
            has("C", "\"Tr0ub4dor&3 horse") && has("C", "Tr0ub4dor&3 horse"),
            "{values:?}"
        );
        assert!(
            has("C", "next line\"") && has("C", "next line"),
            "{values:?}"
        );
        // A line without a separator is all value, and names nothing.
        assert!(has("", "LONE") && has("E", "yaml"), "{values:?}");
        assert!(
            !values.iter().any(|(_, v)| v.contains("skip")),
            "{values:?}"
        );
    }

    #[test]
    fn interpolation_as_compose_go_substitutes() {
        let e = env("SHM_SIZE=256m\nE=\n");
        let i = |t: &str| e.interpolate(t);
        let text = |t: &str| Interpolated::Text(t.to_string());
        assert_eq!(i("${SHM_SIZE:-8g}"), text("256m"));
        assert_eq!(i("$SHM_SIZE"), text("256m"));
        assert_eq!(i("${E:-1g}"), text("1g"));
        assert_eq!(i("${E-1g}"), text(""));
        assert_eq!(i("${SHM_SIZE:+set}"), text("set"));
        assert_eq!(i("${NOPE:-${SHM_SIZE}}x"), text("256mx"));
        assert_eq!(i("$$x ${SHM_SIZE}}"), text("$x 256m}"));
        assert_eq!(i("a$1 $-"), text("a$1 $-"));
        assert_eq!(i("${OTHER}"), Interpolated::Unknown("OTHER".into()));
        assert!(matches!(i("${}"), Interpolated::Invalid(_)));
        assert!(matches!(i("${A:x}"), Interpolated::Invalid(_)));
        assert!(matches!(i("${A"), Interpolated::Invalid(_)));
        assert!(matches!(i("${NOPE?needed}"), Interpolated::Invalid(m) if m.contains("needed")));
    }

    #[test]
    fn expansion_bombs_are_bounded_errors() {
        // Each line doubles the previous one: 2^40 bytes unbounded.
        let mut text = String::from("A0=xxxxxxxxxxxxxxxx\n");
        for i in 1..40 {
            text.push_str(&format!("A{i}=${{A{p}}}${{A{p}}}\n", p = i - 1));
        }
        let e = error(&text);
        assert!(e.message.contains("expands past"), "{e:?}");
        assert_eq!(e.line, 18);
        // Defaults nested 30,000 deep.
        let deep = format!("{}x{}", "${a:-".repeat(30_000), "}".repeat(30_000));
        let found = Environment::default().interpolate(&deep);
        assert!(matches!(found, Interpolated::Invalid(m) if m.contains("nests deeper")));
    }
}
