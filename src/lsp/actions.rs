//! Code actions (a quick fix per fixable finding, "suppress with a
//! comment", "fix all safe fixes") and hover (the rule's doc).

use super::convert::{self, offset};
use super::{Document, lint_with};
use crate::diagnostic::Diagnostic;
use crate::engine::config::Config;
use crate::engine::fix::{FixMode, fix_text_in, verify_fix};
use crate::engine::{FileReport, Session};
use crate::fix::{Applicability, Edit};
use crate::rules::RuleCode;
use crate::text::TextRange;
use lsp_types::{self as lsp, CodeActionKind};
use std::collections::HashMap;

/// Applies every safe fix, as `gpulint check --fix` would.
pub(crate) const FIX_ALL: CodeActionKind = CodeActionKind::new("source.fixAll.gpulint");

/// The findings of one code-action request that get quick fixes and
/// suppressions (each costs a lint of the edited text).
pub const MAX_VERIFIED_FINDINGS: usize = 16;

/// Whether the client asked for actions of `kind` (kinds are hierarchical:
/// asking for `source` includes `source.fixAll.gpulint`).
fn wanted(params: &lsp::CodeActionParams, kind: &CodeActionKind) -> bool {
    params.context.only.as_ref().is_none_or(|only| {
        only.iter().any(|k| {
            kind.as_str() == k.as_str() || kind.as_str().starts_with(&format!("{}.", k.as_str()))
        })
    })
}

pub fn code_actions(
    session: &Session,
    document: &Document,
    report: &FileReport,
    params: &lsp::CodeActionParams,
) -> Vec<lsp::CodeActionOrCommand> {
    let Ok(config) = super::config_for(session, document) else {
        return Vec::new();
    };
    let text = &document.text;
    let start = offset(&report.index, text, params.range.start);
    let end = offset(&report.index, text, params.range.end);
    let mut actions = Vec::new();
    if wanted(params, &CodeActionKind::QUICKFIX) {
        // Each quick fix and suppression is verified by linting the edited
        // text once: a request over the whole of a file with thousands of
        // findings (a YAML file opened as a Dockerfile: one per line) would
        // lint it thousands of times. The first findings of the range get
        // their actions; editors ask for the cursor's line, well under it.
        let in_range = report
            .diagnostics
            .iter()
            .filter(|d| d.range.end >= start as u32 && d.range.start <= end as u32);
        for d in in_range.take(MAX_VERIFIED_FINDINGS) {
            let shown = convert::diagnostic(report, d);
            if let Some(action) = quick_fix(session, document, report, &config, d, &shown) {
                actions.push(action);
            }
            if let Some(action) = suppression(session, document, report, &config, d, &shown) {
                actions.push(action);
            }
        }
    }
    if wanted(params, &FIX_ALL)
        && let Ok(outcome) = fix_text_in(
            session,
            text,
            &document.path,
            &config,
            FixMode {
                unsafe_fixes: false,
            },
        )
        && outcome.changed(text)
    {
        actions.push(action(
            format!("Fix all safe gpulint findings ({})", outcome.applied.len()),
            FIX_ALL,
            Vec::new(),
            document,
            report,
            vec![whole_change(text, &outcome.fixed_text)],
            false,
        ));
    }
    actions
}

fn action(
    title: String,
    kind: CodeActionKind,
    diagnostics: Vec<lsp::Diagnostic>,
    document: &Document,
    report: &FileReport,
    edits: Vec<Edit>,
    preferred: bool,
) -> lsp::CodeActionOrCommand {
    let edits = edits
        .iter()
        .map(|e| lsp::TextEdit {
            range: convert::range(&report.index, &document.text, e.range),
            new_text: e.content.clone(),
        })
        .collect();
    lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
        title,
        kind: Some(kind),
        diagnostics: (!diagnostics.is_empty()).then_some(diagnostics),
        edit: Some(lsp::WorkspaceEdit {
            changes: Some(HashMap::from([(document.uri.clone(), edits)])),
            ..Default::default()
        }),
        is_preferred: preferred.then_some(true),
        ..Default::default()
    })
}

/// The rule's fix, if it passes `--fix`'s verification on this text.
fn quick_fix(
    session: &Session,
    document: &Document,
    report: &FileReport,
    config: &Config,
    d: &Diagnostic,
    shown: &lsp::Diagnostic,
) -> Option<lsp::CodeActionOrCommand> {
    let fix = d.fix.as_ref()?;
    if fix.applicability == Applicability::DisplayOnly {
        return None;
    }
    verify_fix(
        session,
        &document.text,
        &document.path,
        config,
        &report.diagnostics,
        d,
    )
    .ok()?;
    let safe = fix.applicability == Applicability::Safe;
    let title = if safe {
        fix.title.clone()
    } else {
        format!("{} (unsafe: review the change)", fix.title)
    };
    Some(action(
        title,
        CodeActionKind::QUICKFIX,
        vec![shown.clone()],
        document,
        report,
        fix.edits.clone(),
        safe,
    ))
}

/// A `# gpulint: ignore[CODE] reason` line above the finding, indented like
/// its line, offered only if it really silences the finding (not inside a
/// block scalar or a heredoc, where a `#` line is text) and adds no other.
fn suppression(
    session: &Session,
    document: &Document,
    report: &FileReport,
    config: &Config,
    d: &Diagnostic,
    shown: &lsp::Diagnostic,
) -> Option<lsp::CodeActionOrCommand> {
    let text = &document.text;
    let line = report.index.line_of(d.range.start as usize);
    let line_range = report.index.line_range(line, text);
    let line_text = &text[line_range.as_range()];
    let indent = &line_text[..line_text.len() - line_text.trim_start().len()];
    let newline = if text[line_range.end as usize..].starts_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let comment = format!(
        "{indent}# gpulint: ignore[{}] TODO: say why this is intended{newline}",
        d.code
    );
    let edit = Edit::insert(line_range.start, comment.clone());
    let mut suppressed = text.clone();
    suppressed.insert_str(line_range.start as usize, &comment);
    let after = lint_with(session, &document_with_text(document, suppressed), config);
    let moved = d.range.start as usize + comment.len();
    let still_there = after
        .diagnostics
        .iter()
        .any(|a| a.code == d.code && a.range.start as usize == moved);
    let count =
        |r: &FileReport, code: RuleCode| r.diagnostics.iter().filter(|x| x.code == code).count();
    let silenced = after.error.is_none()
        && !still_there
        && count(&after, d.code) + 1 == count(report, d.code)
        && after.diagnostics.len() + 1 == report.diagnostics.len();
    if !silenced {
        return None;
    }
    Some(action(
        format!("Suppress {} on this line with a comment", d.code),
        CodeActionKind::QUICKFIX,
        vec![shown.clone()],
        document,
        report,
        vec![edit],
        false,
    ))
}

fn document_with_text(document: &Document, text: String) -> Document {
    Document {
        uri: document.uri.clone(),
        version: document.version,
        text,
        path: document.path.clone(),
        language: document.language.clone(),
        report: None,
    }
}

/// One edit that turns `old` into `new`: the span between their common
/// prefix and suffix, so the editor keeps the cursor and folds elsewhere.
fn whole_change(old: &str, new: &str) -> Edit {
    let prefix = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((i, _), _)| i);
    let suffix = old[prefix..]
        .chars()
        .rev()
        .zip(new[prefix..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    Edit {
        range: TextRange::new(prefix, old.len() - suffix),
        content: new[prefix..new.len() - suffix].to_string(),
    }
}

/// The doc of the rule whose code is under the cursor in a
/// `gpulint: ignore[...]` comment, or whose finding is under it.
pub fn hover(
    document: &Document,
    report: &FileReport,
    position: lsp::Position,
) -> Option<lsp::Hover> {
    let text = &document.text;
    let at = offset(&report.index, text, position);
    // A code in a suppression comment means that rule, even where the
    // comment has a finding of its own (an unused suppression).
    let (code, range) = suppression_code_at(text, &report.index, at).or_else(|| {
        report
            .diagnostics
            .iter()
            .find(|d| d.range.start as usize <= at && at <= d.range.end as usize)
            .map(|d| (d.code.to_string(), d.range))
    })?;
    let meta = crate::rules::meta(code.parse().ok()?);
    Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: format!(
                "{}\n\n---\ngpulint {} · {} by default · fix: {}",
                meta.body,
                meta.code,
                meta.severity,
                meta.fix.as_str()
            ),
        }),
        range: Some(convert::range(&report.index, text, range)),
    })
}

/// The rule code under `at` inside a `gpulint: ignore[...]` or
/// `ignore-file[...]` comment.
fn suppression_code_at(
    text: &str,
    index: &crate::text::LineIndex,
    at: usize,
) -> Option<(String, TextRange)> {
    let line = index.line_range(index.line_of(at), text);
    let line_text = &text[line.as_range()];
    let marker = line_text.find("gpulint:")?;
    let open = marker + line_text[marker..].find('[')? + 1;
    let close = open + line_text[open..].find(']')?;
    let mut start = open;
    for code in line_text[open..close].split(',') {
        let lead = code.len() - code.trim_start().len();
        let token = code.trim();
        let token_start = line.start as usize + start + lead;
        if token_start <= at && at <= token_start + token.len() {
            return Some((
                token.to_string(),
                TextRange::new(token_start, token_start + token.len()),
            ));
        }
        start += code.len() + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_change_is_the_span_between_common_prefix_and_suffix() {
        let edit = whole_change("a: 1\nb: 2\n", "a: 1\nx: 9\nb: 2\n");
        assert_eq!(edit.range, TextRange::new(5, 5));
        assert_eq!(edit.content, "x: 9\n");
        let edit = whole_change("same", "same");
        assert!(edit.range.is_empty() && edit.content.is_empty());
        let edit = whole_change("é1é", "é2é");
        assert_eq!(
            (edit.range, edit.content.as_str()),
            (TextRange::new(2, 3), "2")
        );
    }

    #[test]
    fn finds_the_code_under_the_cursor_in_a_suppression() {
        let text = "a: 1  # gpulint: ignore[SHM001, GPU005] reason\n";
        let index = crate::text::LineIndex::new(text);
        let at = text.find("GPU005").unwrap() + 2;
        let (code, range) = suppression_code_at(text, &index, at).unwrap();
        assert_eq!(code, "GPU005");
        assert_eq!(&text[range.as_range()], "GPU005");
        assert!(suppression_code_at(text, &index, 1).is_none());
    }
}
