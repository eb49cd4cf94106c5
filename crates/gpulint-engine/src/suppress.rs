//! Suppression comments:
//!
//! ```yaml
//! services:
//!   # gpulint: ignore[SHM001] single-GPU inference, no DataLoader workers
//!   web:
//!     gpus: all   # gpulint: ignore[GPU005] reason on the same line works too
//! # gpulint: ignore-file[NCCL003] tuning experiments live in this file
//! ```
//!
//! A comment alone on its line covers findings that start on the next line;
//! a trailing comment covers findings on its own line. Every suppression
//! needs a reason. Codes that suppress nothing are reported (SUP001).

use crate::diagnostic::Diagnostic;
use crate::rules::{self, RuleCode};
use crate::syntax::yaml::Yaml;
use crate::text::{LineIndex, TextRange};

/// Where comments can be in a file.
#[derive(Clone, Copy)]
pub enum Comments<'a> {
    /// After a space anywhere outside a scalar.
    Yaml(&'a Yaml),
    /// Only as whole lines (Dockerfiles: `#` elsewhere is an argument).
    WholeLine,
    /// `//` comments of JSON with comments (`devcontainer.json`), at
    /// these ranges.
    Slashes(&'a [TextRange]),
}

#[derive(Debug, Clone)]
pub struct Suppression {
    /// 0-based line whose findings it covers; `None` for the whole file.
    pub line: Option<usize>,
    pub codes: Vec<(RuleCode, TextRange)>,
}

/// Whether `text` may hold a suppression comment: without one, neither
/// [`parse`] nor [`apply`] needs the file's lines.
pub(crate) fn may_have_directives(text: &str) -> bool {
    text.contains("gpulint:")
}

/// Finds `# gpulint:` comments. Returns the valid suppressions and SUP002
/// findings for the malformed ones.
pub fn parse(
    text: &str,
    comments: Comments,
    index: &LineIndex,
) -> (Vec<Suppression>, Vec<Diagnostic>) {
    let mut suppressions = Vec::new();
    let mut invalid = Vec::new();
    if !may_have_directives(text) {
        return (suppressions, invalid);
    }
    for line in 0..index.line_count() {
        let range = index.line_range(line, text);
        let line_text = &text[range.as_range()];
        let Some(hash) = comment_start(line_text, range.start as usize, comments) else {
            continue;
        };
        // After `#`, or after `//`.
        let marker = if matches!(comments, Comments::Slashes(_)) {
            2
        } else {
            1
        };
        let comment = &line_text[hash + marker..];
        let trimmed = comment.trim_start();
        let Some(directive) = trimmed.strip_prefix("gpulint:") else {
            continue;
        };
        let comment_offset = range.start as usize + hash;
        let directive_offset = range.start as usize
            + hash
            + marker
            + (comment.len() - trimmed.len())
            + "gpulint:".len();
        let own_line = line_text[..hash].trim().is_empty();
        let comment_range = TextRange::new(comment_offset, range.end as usize);
        match parse_directive(directive, directive_offset) {
            Err(message) => invalid.push(sup002(comment_range, message)),
            Ok((file_level, codes, reason_empty)) => {
                let mut known = Vec::new();
                for (code, code_range) in codes {
                    match code.parse::<RuleCode>() {
                        Ok(code) => known.push((code, code_range)),
                        Err(unknown) => invalid.push(sup002(code_range, unknown.to_string())),
                    }
                }
                if reason_empty {
                    invalid.push(sup002(
                        comment_range,
                        "suppression gives no reason".to_string(),
                    ));
                }
                if known.is_empty() {
                    continue;
                }
                let target = if file_level {
                    None
                } else if own_line {
                    Some(next_code_line(line, index, text))
                } else {
                    Some(line)
                };
                suppressions.push(Suppression {
                    line: target,
                    codes: known,
                });
            }
        }
    }
    (suppressions, invalid)
}

/// The byte index in `line_text` of a `#` that starts a comment.
fn comment_start(line_text: &str, line_offset: usize, comments: Comments) -> Option<usize> {
    let yaml = match comments {
        Comments::Yaml(yaml) => Some(yaml),
        Comments::Slashes(ranges) => {
            let line_end = line_offset + line_text.len();
            return ranges
                .iter()
                .find(|r| {
                    let start = r.start as usize;
                    (line_offset..line_end).contains(&start)
                        && line_text[start - line_offset..].starts_with("//")
                })
                .map(|r| r.start as usize - line_offset);
        }
        Comments::WholeLine => {
            let indent = line_text.len() - line_text.trim_start().len();
            return line_text[indent..].starts_with('#').then_some(indent);
        }
    };
    let bytes = line_text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'#' {
            continue;
        }
        let at_boundary = i == 0 || bytes[i - 1].is_ascii_whitespace();
        if !at_boundary {
            continue;
        }
        if yaml.is_some_and(|y| y.offset_in_scalar(line_offset + i)) {
            continue;
        }
        return Some(i);
    }
    None
}

type Directive = (bool, Vec<(String, TextRange)>, bool);

fn parse_directive(directive: &str, offset: usize) -> Result<Directive, String> {
    let body = directive.trim_start();
    let mut pos = offset + (directive.len() - body.len());
    let (file_level, rest) = if let Some(r) = body.strip_prefix("ignore-file[") {
        (true, r)
    } else if let Some(r) = body.strip_prefix("ignore[") {
        (false, r)
    } else {
        return Err("expected `gpulint: ignore[CODE, ...] reason` or `gpulint: ignore-file[CODE, ...] reason`".into());
    };
    pos += body.len() - rest.len();
    let close = rest.find(']').ok_or("the code list has no closing `]`")?;
    let mut codes = Vec::new();
    let mut cursor = 0;
    for part in rest[..close].split(',') {
        let code = part.trim();
        let start = pos + cursor + (part.len() - part.trim_start().len());
        cursor += part.len() + 1;
        if !code.is_empty() {
            codes.push((code.to_string(), TextRange::new(start, start + code.len())));
        }
    }
    if codes.is_empty() {
        return Err("the suppression names no rule codes".into());
    }
    let reason = rest[close + 1..]
        .trim()
        .trim_start_matches(['-', ':', '—'])
        .trim();
    Ok((file_level, codes, reason.is_empty()))
}

/// The first line after `line` that is not blank and not only a comment.
fn next_code_line(line: usize, index: &LineIndex, text: &str) -> usize {
    for next in line + 1..index.line_count() {
        let t = text[index.line_range(next, text).as_range()].trim_start();
        if !t.is_empty() && !t.starts_with('#') {
            return next;
        }
    }
    line + 1
}

fn sup002(range: TextRange, message: String) -> Diagnostic {
    Diagnostic {
        code: RuleCode::SUP002,
        severity: rules::meta(RuleCode::SUP002).severity,
        message,
        range,
        file: None,
        label: None,
        note: None,
        help: Some(
            "write `# gpulint: ignore[CODE] reason` (or `ignore-file[...]` for the whole file)"
                .into(),
        ),
        related: Vec::new(),
        fix: None,
    }
}

/// Removes suppressed findings and reports suppression codes that matched
/// nothing (for rules that are enabled).
pub fn apply(
    diagnostics: Vec<Diagnostic>,
    suppressions: &[Suppression],
    index: &LineIndex,
    is_enabled: impl Fn(RuleCode) -> bool,
) -> Vec<Diagnostic> {
    if suppressions.is_empty() {
        return diagnostics;
    }
    let mut used: Vec<Vec<bool>> = suppressions
        .iter()
        .map(|s| vec![false; s.codes.len()])
        .collect();
    let mut kept = Vec::with_capacity(diagnostics.len());
    for diagnostic in diagnostics {
        let line = index.line_of(diagnostic.range.start as usize);
        let mut suppressed = false;
        for (si, s) in suppressions.iter().enumerate() {
            if s.line.is_some_and(|l| l != line) {
                continue;
            }
            for (ci, (code, _)) in s.codes.iter().enumerate() {
                if *code == diagnostic.code {
                    used[si][ci] = true;
                    suppressed = true;
                }
            }
        }
        if !suppressed {
            kept.push(diagnostic);
        }
    }
    for (si, s) in suppressions.iter().enumerate() {
        for (ci, (code, range)) in s.codes.iter().enumerate() {
            if used[si][ci] || !is_enabled(*code) || *code == RuleCode::SUP001 {
                continue;
            }
            kept.push(Diagnostic {
                code: RuleCode::SUP001,
                severity: rules::meta(RuleCode::SUP001).severity,
                message: format!("suppression of {code} matches no finding"),
                range: *range,
                file: None,
                label: Some("nothing to suppress here".into()),
                note: None,
                help: Some("remove the code (or the whole comment)".into()),
                related: Vec::new(),
                fix: None,
            });
        }
    }
    kept
}
