//! Between gpulint's byte offsets and the protocol's UTF-16 positions.

use crate::diagnostic::{Diagnostic, Severity};
use crate::engine::FileReport;
use crate::output::{file_uri, message_with_advice};
use crate::text::{LineIndex, TextRange};
use lsp_types::{self as lsp, Uri};
use std::str::FromStr;

pub fn position(index: &LineIndex, text: &str, offset: usize) -> lsp::Position {
    let (line, character) = index.line_col_utf16(offset, text);
    lsp::Position { line, character }
}

pub fn range(index: &LineIndex, text: &str, range: TextRange) -> lsp::Range {
    lsp::Range {
        start: position(index, text, range.start as usize),
        end: position(index, text, range.end as usize),
    }
}

pub fn offset(index: &LineIndex, text: &str, position: lsp::Position) -> usize {
    index.offset_of_utf16(position.line, position.character, text)
}

/// Applies one `didChange` content change: a whole new text, or a range
/// (in UTF-16 positions of the current text) replaced.
pub(crate) fn apply_change(text: &mut String, change: lsp::TextDocumentContentChangeEvent) {
    match change.range {
        None => *text = change.text,
        Some(range) => {
            let index = LineIndex::new(text);
            let start = offset(&index, text, range.start);
            let end = offset(&index, text, range.end).max(start);
            text.replace_range(start..end, &change.text);
        }
    }
}

pub(crate) fn uri_of(path: &std::path::Path) -> Option<Uri> {
    let absolute = std::path::absolute(path).ok()?;
    Uri::from_str(&file_uri(&absolute.to_string_lossy().replace('\\', "/"))).ok()
}

/// The document's findings as LSP diagnostics; a file that could not be
/// linted gets one diagnostic at the problem when `show_errors` (a syntax
/// error while typing a compose file is worth seeing; one in a CI workflow
/// is another tool's business).
pub fn diagnostics(report: &FileReport, show_errors: bool) -> Vec<lsp::Diagnostic> {
    let mut out: Vec<lsp::Diagnostic> = report
        .diagnostics
        .iter()
        .map(|d| diagnostic(report, d))
        .collect();
    if let Some(error) = &report.error
        && report.skipped.is_none()
        && show_errors
    {
        let at = error.offset.unwrap_or(0);
        out.push(lsp::Diagnostic {
            range: range(&report.index, &report.text, TextRange::empty(at)),
            severity: Some(lsp::DiagnosticSeverity::ERROR),
            source: Some("gpulint".to_string()),
            message: error.message.clone(),
            ..Default::default()
        });
    }
    out
}

pub fn diagnostic(report: &FileReport, d: &Diagnostic) -> lsp::Diagnostic {
    let related = d
        .related
        .iter()
        .filter_map(|label| {
            let (uri, range) = match &label.file {
                Some(file) => (
                    uri_of(&file.path)?,
                    range(file.index(), &file.text, label.range),
                ),
                None => (
                    uri_of(&report.path)?,
                    range(&report.index, &report.text, label.range),
                ),
            };
            Some(lsp::DiagnosticRelatedInformation {
                location: lsp::Location { uri, range },
                message: label.message.clone(),
            })
        })
        .collect::<Vec<_>>();
    let href = crate::rules::doc_url(d.code);
    lsp::Diagnostic {
        range: range(&report.index, &report.text, d.range),
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            Severity::Info => lsp::DiagnosticSeverity::INFORMATION,
        }),
        code: Some(lsp::NumberOrString::String(d.code.to_string())),
        code_description: Uri::from_str(&href)
            .ok()
            .map(|href| lsp::CodeDescription { href }),
        source: Some("gpulint".to_string()),
        message: message_with_advice(d),
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(
        range: Option<((u32, u32), (u32, u32))>,
        text: &str,
    ) -> lsp::TextDocumentContentChangeEvent {
        lsp::TextDocumentContentChangeEvent {
            range: range.map(|((l1, c1), (l2, c2))| lsp::Range {
                start: lsp::Position::new(l1, c1),
                end: lsp::Position::new(l2, c2),
            }),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn incremental_changes_use_utf16_columns() {
        let mut text = "name: 😀é\r\nnext: 1\n".to_string();
        // Replace `é` (UTF-16 column 8, after the two-unit emoji).
        apply_change(&mut text, change(Some(((0, 8), (0, 9))), "e"));
        assert_eq!(text, "name: 😀e\r\nnext: 1\n");
        // Insert a line at the start of line 1, then delete across lines.
        apply_change(&mut text, change(Some(((1, 0), (1, 0))), "gpus: all\n"));
        assert_eq!(text, "name: 😀e\r\ngpus: all\nnext: 1\n");
        apply_change(&mut text, change(Some(((0, 9), (2, 0))), "\n"));
        assert_eq!(text, "name: 😀e\nnext: 1\n");
        apply_change(&mut text, change(None, "all new"));
        assert_eq!(text, "all new");
    }
}
