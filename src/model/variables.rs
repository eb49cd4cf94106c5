//! The variables Compose interpolates a project with: the project's `.env`
//! file (compose-go `dotenv`), read next to the project's first compose
//! file. The shell environment is deliberately not consulted, so what
//! gpulint says does not depend on who runs it; a variable that `.env` does
//! not set is unknown unless the file gives it a default.
//!
//! The variables are passed explicitly to whatever interpolates (the
//! compose readers, [`interpolate`]) as an
//! `Option<&Variables>`: `None` when the project has no `.env`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A project's `.env`: each variable's value and the line that sets it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables {
    /// The `.env` file they were read from.
    pub path: PathBuf,
    values: BTreeMap<String, (String, usize)>,
}

impl Variables {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(|(v, _)| v.as_str())
    }

    /// The 1-based line of `.env` that sets `name`.
    pub fn line(&self, name: &str) -> Option<usize> {
        self.values.get(name).map(|(_, l)| *l)
    }

    /// Each variable and its value, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values
            .iter()
            .map(|(k, (v, _))| (k.as_str(), v.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// These variables over `under`: a name both set keeps this value (an
    /// including project's variables over what an included project's own
    /// `.env` or `env_file` says, as compose-go's `Mapping.Merge` keeps
    /// them). It is for interpolation: its `path` is `under`'s, so it is
    /// no guide to which file a line number belongs to.
    pub fn over(&self, under: &Variables) -> Variables {
        let mut merged = under.clone();
        for (name, value) in &self.values {
            merged.values.insert(name.clone(), value.clone());
        }
        merged
    }

    /// Reads `.env` text as compose-go's dotenv does: `KEY=value` lines
    /// (optionally `export KEY=value`), `#` comments, single quotes kept
    /// literally, double quotes with `\n`, `\t`, `\"` and `\\` escapes, an
    /// unquoted value ending at ` #` and trimmed. Unquoted and double-quoted
    /// values have `${VAR}` of earlier lines expanded.
    pub fn parse(path: &Path, text: &str) -> Variables {
        let mut vars = Variables {
            path: path.to_path_buf(),
            values: BTreeMap::new(),
        };
        let mut lines = text.lines().enumerate().peekable();
        while let Some((number, line)) = lines.next() {
            let line = line.trim_start();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
            let Some(split) = line.find(['=', ':']) else {
                continue;
            };
            let name = line[..split].trim();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            {
                continue;
            }
            let raw = line[split + 1..].trim_start();
            let value = if let Some(body) = raw.strip_prefix('\'') {
                let mut body = body.to_string();
                // A quoted value may go on over several lines.
                while !body.contains('\'') {
                    match lines.next() {
                        Some((_, more)) => {
                            body.push('\n');
                            body.push_str(more);
                        }
                        None => break,
                    }
                }
                body.split('\'').next().unwrap_or("").to_string()
            } else if let Some(body) = raw.strip_prefix('"') {
                let mut body = body.to_string();
                while closing_quote(&body).is_none() {
                    match lines.next() {
                        Some((_, more)) => {
                            body.push('\n');
                            body.push_str(more);
                        }
                        None => break,
                    }
                }
                let end = closing_quote(&body).unwrap_or(body.len());
                vars.expand(&unescape(&body[..end]))
            } else {
                let end = raw.find(" #").unwrap_or(raw.len());
                vars.expand(raw[..end].trim())
            };
            vars.values.insert(name.to_string(), (value, number + 1));
        }
        vars
    }

    /// `${VAR}`, `${VAR:-default}` and `$VAR` from the lines read so far;
    /// what is not known stays as written.
    fn expand(&self, value: &str) -> String {
        if !value.contains('$') {
            return value.to_string();
        }
        match interpolate(value, Some(self)) {
            Interpolated::Text(t) => t,
            _ => value.to_string(),
        }
    }
}

fn closing_quote(body: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
pub enum Interpolated {
    Text(String),
    /// The first variable that has no default.
    Unknown(String),
    Invalid(String),
}

/// Resolves Compose interpolation with the project's `.env` variables
/// `vars` (see [`Variables`]; `None` when there is no `.env`) and
/// what the file itself says: `${VAR:-default}`
/// takes the default when VAR is unset or empty, `${VAR-default}` when it is
/// unset, `${VAR:+alt}` gives `alt` when VAR is set and not empty, `$$` is a
/// literal `$`, and a variable `.env` does not set and that has no default
/// makes the value unknown. The shell environment is deliberately not
/// consulted, so results do not depend on who runs the linter.
pub fn interpolate(raw: &str, vars: Option<&Variables>) -> Interpolated {
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
            let value = vars.and_then(|v| v.get(name)).map(str::to_string);
            let set_nonempty = value.as_deref().is_some_and(|v| !v.is_empty());
            let nested = |text: &str| interpolate(text, vars);
            if op.is_empty() {
                match value {
                    Some(v) => out.push_str(&v),
                    None => return Interpolated::Unknown(name.to_string()),
                }
            } else if let Some(default) = op.strip_prefix(":-") {
                if set_nonempty {
                    out.push_str(value.as_deref().unwrap_or_default());
                } else {
                    match nested(default) {
                        Interpolated::Text(t) => out.push_str(&t),
                        other => return other,
                    }
                }
            } else if let Some(default) = op.strip_prefix('-') {
                match value {
                    Some(v) => out.push_str(&v),
                    None => match nested(default) {
                        Interpolated::Text(t) => out.push_str(&t),
                        other => return other,
                    },
                }
            } else if op.starts_with(":?") || op.starts_with('?') {
                // Compose refuses the file when the variable is missing.
                match value {
                    Some(v) if set_nonempty || op.starts_with('?') => out.push_str(&v),
                    _ => return Interpolated::Unknown(name.to_string()),
                }
            } else if let Some(alternative) = op.strip_prefix(":+").or_else(|| op.strip_prefix('+'))
            {
                let set = if op.starts_with(":+") {
                    set_nonempty
                } else {
                    value.is_some()
                };
                if set {
                    match nested(alternative) {
                        Interpolated::Text(t) => out.push_str(&t),
                        other => return other,
                    }
                } else if value.is_none() {
                    // Unset here, but the shell could set it.
                    return Interpolated::Unknown(name.to_string());
                }
            } else {
                return Interpolated::Invalid(format!("invalid interpolation `${{{expr}}}`"));
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
                match vars.and_then(|v| v.get(&after[..name_len])) {
                    Some(v) => {
                        out.push_str(v);
                        rest = &after[name_len..];
                    }
                    None => return Interpolated::Unknown(after[..name_len].to_string()),
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotenv_lines_as_compose_reads_them() {
        let vars = Variables::parse(
            Path::new(".env"),
            "# comment\nSHM_SIZE=256m\nexport GPU=nvidia.com/gpu=all\nQUOTED=\"a b\\n\" # c\nSINGLE='${X}'\nPLAIN=x # comment\nREF=${SHM_SIZE}\nEMPTY=\n",
        );
        assert_eq!(vars.get("SHM_SIZE"), Some("256m"));
        assert_eq!(vars.line("SHM_SIZE"), Some(2));
        assert_eq!(vars.get("GPU"), Some("nvidia.com/gpu=all"));
        assert_eq!(vars.get("QUOTED"), Some("a b\n"));
        assert_eq!(vars.get("SINGLE"), Some("${X}"));
        assert_eq!(vars.get("PLAIN"), Some("x"));
        assert_eq!(vars.get("REF"), Some("256m"));
        assert_eq!(vars.get("EMPTY"), Some(""));
    }

    #[test]
    fn interpolation_uses_the_variables_it_is_given_only() {
        let vars = Variables::parse(Path::new(".env"), "SHM_SIZE=256m\nE=\n");
        let with = |text: &str| interpolate(text, Some(&vars));
        assert_eq!(with("${SHM_SIZE:-8g}"), Interpolated::Text("256m".into()));
        assert_eq!(with("$SHM_SIZE"), Interpolated::Text("256m".into()));
        // `:-` also replaces an empty value; `-` only an unset one.
        assert_eq!(with("${E:-1g}"), Interpolated::Text("1g".into()));
        assert_eq!(with("${E-1g}"), Interpolated::Text("".into()));
        assert_eq!(with("${SHM_SIZE:+set}"), Interpolated::Text("set".into()));
        assert_eq!(with("${OTHER}"), Interpolated::Unknown("OTHER".into()));
        assert_eq!(
            interpolate("${SHM_SIZE:-8g}", None),
            Interpolated::Text("8g".into())
        );
    }
}
