//! `gpulint check --add-noqa`: suppress every current finding with a
//! suppression comment (see `suppress`), to adopt gpulint on a
//! codebase and fix its findings later.
//!
//! A finding gets a comment alone on the line above it, indented like it:
//!
//! ```yaml
//! services:
//!   # gpulint: ignore[SHM001] TODO: say why this is safe, or fix it
//!   trainer:
//! ```
//!
//! A finding on a line that such a comment cannot cover (a continued shell
//! or Dockerfile line, a comment, a blank line) is covered by one
//! `ignore-file[...]` comment at the top instead. Every edit is verified by
//! linting the new text: it must still parse, report nothing it suppressed,
//! report the same findings as before once suppressions are ignored (so the
//! comments changed nothing else), and add no SUP001/SUP002 findings;
//! otherwise the whole file falls back to `ignore-file`, and failing that
//! is left unchanged with an error. Findings about suppression comments
//! themselves (SUP001, SUP002) cannot be suppressed and stay reported.

use super::config::Config;
use super::session::Session;
use crate::diagnostic::Diagnostic;
use crate::rules::RuleCode;
use crate::text::LineIndex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The reason every added comment gives unless `--add-noqa=REASON` says
/// one, for a person to replace.
pub const REASON: &str = "TODO: say why this is safe, or fix it";

/// Why `reason` cannot follow a suppression comment, if it cannot: it
/// must be one line of text (a line break would end the comment and put
/// the rest in the file as content), and must not end with `\`, which
/// continues a comment onto the next line in a Makefile.
pub fn check_reason(reason: &str) -> Result<(), String> {
    if reason.trim().is_empty() {
        return Err("the reason is empty: every suppression needs one".into());
    }
    if reason.chars().any(char::is_control) {
        return Err(
            "the reason must be one line of text, without line breaks or control characters".into(),
        );
    }
    if reason.trim_end().ends_with('\\') {
        return Err("the reason must not end with `\\` (a line continuation)".into());
    }
    Ok(())
}

/// What adding suppressions did to one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    pub text: String,
    /// Suppression comments added.
    pub comments: usize,
    /// Findings they suppress.
    pub findings: usize,
}

/// The text with a suppression for each finding, giving `reason` (see
/// [`check_reason`]; [`REASON`] by default) after each comment in the
/// file's own comment syntax, `Ok(None)` when there is nothing to
/// suppress, or why it could not be done safely.
pub fn add_noqa(
    session: &Session,
    text: &str,
    path: &Path,
    config: &Config,
    reason: &str,
) -> Result<Option<Added>, String> {
    check_reason(reason)?;
    let reason = reason.trim();
    let before = session
        .lint_text(text, path, config)
        .map_err(|e| e.message)?;
    let targets: Vec<&Diagnostic> = before.iter().filter(|d| suppressible(d.code)).collect();
    if targets.is_empty() {
        return Ok(None);
    }
    let raw_before = codes(
        &session
            .lint_text_unsuppressed(text, path, config)
            .map_err(|e| e.message)?,
    );
    let kept_before = codes(before.iter().filter(|d| !suppressible(d.code)));
    let verify = |candidate: &str| -> Result<(), String> {
        let after = session
            .lint_text(candidate, path, config)
            .map_err(|e| format!("the file would no longer parse: {}", e.message))?;
        if codes(&after) != kept_before {
            return Err("the comments would not suppress exactly these findings".into());
        }
        let raw_after = session
            .lint_text_unsuppressed(candidate, path, config)
            .map_err(|e| format!("the file would no longer parse: {}", e.message))?;
        if codes(&raw_after) != raw_before {
            return Err("the comments would change what the file means".into());
        }
        Ok(())
    };

    // Each syntax's own comments: `//` in JSON with comments (a
    // `devcontainer.json`, where `#` is no comment and breaks the file),
    // `#` everywhere else gpulint reads.
    let marker = match super::classify::FileKind::of(path) {
        super::classify::FileKind::Script(crate::model::script::ScriptKind::DevContainer) => "//",
        _ => "#",
    };
    let index = LineIndex::new(text);
    let line_text = |line: usize| &text[index.line_range(line, text).as_range()];
    let mut by_line: BTreeMap<usize, BTreeSet<RuleCode>> = BTreeMap::new();
    let mut whole_file: BTreeSet<RuleCode> = BTreeSet::new();
    for d in &targets {
        let line = index.line_of(d.range.start as usize);
        let own = line_text(line).trim_start();
        let continued = line > 0 && line_text(line - 1).trim_end().ends_with('\\');
        if own.is_empty() || own.starts_with(marker) || continued {
            whole_file.insert(d.code);
        } else {
            by_line.entry(line).or_default().insert(d.code);
        }
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };

    let per_line = insert(text, &index, &by_line, &whole_file, newline, marker, reason);
    let (candidate, comments) = match verify(&per_line.0) {
        Ok(()) => per_line,
        Err(_) => {
            let all: BTreeSet<RuleCode> = targets.iter().map(|d| d.code).collect();
            let fallback = insert(
                text,
                &index,
                &BTreeMap::new(),
                &all,
                newline,
                marker,
                reason,
            );
            verify(&fallback.0).map_err(|e| format!("cannot add suppression comments: {e}"))?;
            fallback
        }
    };
    Ok(Some(Added {
        text: candidate,
        comments,
        findings: targets.len(),
    }))
}

/// Whether a finding can be suppressed by a comment.
fn suppressible(code: RuleCode) -> bool {
    !code.as_str().starts_with("SUP")
}

fn codes<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> BTreeMap<RuleCode, usize> {
    let mut counts = BTreeMap::new();
    for d in diagnostics {
        *counts.entry(d.code).or_insert(0) += 1;
    }
    counts
}

/// `text` with a comment above each line of `by_line` and one for the
/// whole file; returns it and how many comments were added.
fn insert(
    text: &str,
    index: &LineIndex,
    by_line: &BTreeMap<usize, BTreeSet<RuleCode>>,
    whole_file: &BTreeSet<RuleCode>,
    newline: &str,
    marker: &str,
    reason: &str,
) -> (String, usize) {
    let list = |codes: &BTreeSet<RuleCode>| {
        codes
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::with_capacity(text.len() + 64 * (by_line.len() + 1));
    let mut comments = 0;
    let header_end = if marker == "#" {
        header_lines(text, index)
    } else {
        0
    };
    for line in 0..index.line_count() {
        if line == header_end && !whole_file.is_empty() {
            out.push_str(&format!(
                "{marker} gpulint: ignore-file[{}] {reason}{newline}",
                list(whole_file)
            ));
            comments += 1;
        }
        let range = index.line_range(line, text);
        let own = &text[range.as_range()];
        if let Some(codes) = by_line.get(&line) {
            let indent = &own[..own.len() - own.trim_start().len()];
            out.push_str(&format!(
                "{indent}{marker} gpulint: ignore[{}] {reason}{newline}",
                list(codes)
            ));
            comments += 1;
        }
        let next = if line + 1 < index.line_count() {
            index.line_range(line + 1, text).start as usize
        } else {
            text.len()
        };
        out.push_str(&text[range.start as usize..next]);
    }
    if header_end >= index.line_count() && !whole_file.is_empty() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(newline);
        }
        out.push_str(&format!(
            "{marker} gpulint: ignore-file[{}] {reason}{newline}",
            list(whole_file)
        ));
        comments += 1;
    }
    (out, comments)
}

/// How many first lines must stay first: a `#!` line, and the parser
/// directives (`# syntax=...`, `# escape=...`) a Dockerfile may start with.
fn header_lines(text: &str, index: &LineIndex) -> usize {
    let mut line = 0;
    while line < index.line_count() {
        let t = text[index.line_range(line, text).as_range()].trim();
        let directive = t.strip_prefix('#').is_some_and(|rest| {
            let rest = rest.trim_start();
            (line == 0 && t.starts_with("#!"))
                || rest
                    .split_once('=')
                    .is_some_and(|(key, _)| is_parser_directive(key.trim()))
        });
        if !directive {
            break;
        }
        line += 1;
    }
    line
}

fn is_parser_directive(key: &str) -> bool {
    ["syntax", "escape", "check"]
        .iter()
        .any(|k| key.eq_ignore_ascii_case(k))
}
