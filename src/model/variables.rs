//! The variables Compose interpolates a project with: the project's `.env`
//! file (compose-go `dotenv`), read next to the project's first compose
//! file. The shell environment is deliberately not consulted, so what
//! gpulint says does not depend on who runs it; a variable that `.env` does
//! not set is unknown unless the file gives it a default.
//!
//! The variables are passed explicitly to whatever interpolates (the
//! compose readers, [`super::size::interpolate`]) as an
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
        match super::size::interpolate(value, Some(self)) {
            super::size::Interpolated::Text(t) => t,
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
        use super::super::size::{Interpolated, interpolate};
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
