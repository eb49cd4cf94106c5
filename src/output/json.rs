//! The JSON report. Its shape is a public interface (schema version 1,
//! documented in the README): fields may be added, never renamed or removed.

use super::Summary;
use crate::diagnostic::Diagnostic;
use crate::engine::FileReport;
use crate::rules::RuleCode;
use crate::text::TextRange;
use serde::Serialize;

pub(crate) const SCHEMA_VERSION: u32 = 1;

/// The document around its two arrays (see [`super::document`]).
#[derive(Serialize)]
struct Frame {
    version: u32,
    tool: &'static str,
    tool_version: &'static str,
    summary: JsonSummary,
    diagnostics: String,
    errors: String,
}

#[derive(Serialize)]
struct JsonSummary {
    files: usize,
    findings: usize,
    errors: usize,
    warnings: usize,
    infos: usize,
    failed_files: usize,
}

#[derive(Serialize)]
pub(crate) struct Position {
    line: usize,
    column: usize,
    offset: usize,
}

#[derive(Serialize)]
pub(crate) struct Span {
    start: Position,
    end: Position,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: RuleCode,
    name: &'a str,
    severity: &'static str,
    message: &'a str,
    label: Option<&'a str>,
    note: Option<&'a str>,
    help: Option<&'a str>,
    path: String,
    #[serde(flatten)]
    span: Span,
    related: Vec<JsonRelated<'a>>,
    fixable: bool,
    fix: Option<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonRelated<'a> {
    path: String,
    message: &'a str,
    #[serde(flatten)]
    span: Span,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    title: &'a str,
    applicability: crate::fix::Applicability,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    #[serde(flatten)]
    span: Span,
    content: &'a str,
}

#[derive(Serialize)]
struct JsonError<'a> {
    path: String,
    message: &'a str,
    line: Option<usize>,
    column: Option<usize>,
    offset: Option<usize>,
}

fn span(report: &FileReport, range: TextRange) -> Span {
    span_in(&report.index, &report.text, range)
}

pub(crate) fn span_in(index: &crate::text::LineIndex, text: &str, range: TextRange) -> Span {
    let pos = |offset: usize| {
        let lc = index.line_col(offset, text);
        Position {
            line: lc.line,
            column: lc.column,
            offset,
        }
    };
    Span {
        start: pos(range.start as usize),
        end: pos(range.end as usize),
    }
}

fn diagnostic<'a>(report: &'a FileReport, d: &'a Diagnostic) -> JsonDiagnostic<'a> {
    let path = report.path.display().to_string();
    JsonDiagnostic {
        code: d.code,
        name: crate::rules::meta(d.code).name,
        severity: d.severity.as_str(),
        message: &d.message,
        label: d.label.as_deref(),
        note: d.note.as_deref(),
        help: d.help.as_deref(),
        path: path.clone(),
        span: span(report, d.range),
        related: d
            .related
            .iter()
            .map(|l| match &l.file {
                Some(file) => JsonRelated {
                    path: file.path.display().to_string(),
                    message: &l.message,
                    span: span_in(file.index(), &file.text, l.range),
                },
                None => JsonRelated {
                    path: path.clone(),
                    message: &l.message,
                    span: span(report, l.range),
                },
            })
            .collect(),
        // A display-only fix is advice, not something `--fix` applies.
        fixable: d
            .fix
            .as_ref()
            .is_some_and(|f| f.applicability != crate::fix::Applicability::DisplayOnly),
        fix: d.fix.as_ref().map(|f| JsonFix {
            title: &f.title,
            applicability: f.applicability,
            edits: f
                .edits
                .iter()
                .map(|e| JsonEdit {
                    span: span(report, e.range),
                    content: &e.content,
                })
                .collect(),
        }),
    }
}

pub fn render(reports: &[FileReport]) -> String {
    super::document::render(&JSON, reports)
}

/// The document's frame for a run's `summary`, its arrays' places held.
fn frame(summary: &Summary) -> String {
    let frame = Frame {
        version: SCHEMA_VERSION,
        tool: "gpulint",
        tool_version: env!("CARGO_PKG_VERSION"),
        summary: JsonSummary {
            files: summary.files,
            findings: summary.findings(),
            errors: summary.errors,
            warnings: summary.warnings,
            infos: summary.infos,
            failed_files: summary.failed_files,
        },
        diagnostics: super::document::placeholder(0),
        errors: super::document::placeholder(1),
    };
    let mut text = super::document::pretty(&frame);
    text.push('\n');
    text
}

/// A file's findings (section 0) and its error (section 1).
fn part(r: &FileReport) -> super::document::Part {
    use super::document::pretty;
    let diagnostics = r
        .diagnostics
        .iter()
        .map(|d| pretty(&diagnostic(r, d)))
        .collect();
    let errors = r
        .error
        .as_ref()
        .map(|e| {
            let lc = e.offset.map(|o| r.index.line_col(o, &r.text));
            pretty(&JsonError {
                path: r.path.display().to_string(),
                message: &e.message,
                line: lc.map(|l| l.line),
                column: lc.map(|l| l.column),
                offset: e.offset,
            })
        })
        .into_iter()
        .collect();
    super::document::Part {
        sections: vec![diagnostics, errors],
        tests: 0,
    }
}

/// The json document, written file by file (`output::document`).
pub struct JsonDocument;

pub const JSON: JsonDocument = JsonDocument;

impl super::document::WholeRun for JsonDocument {
    fn sections(&self) -> usize {
        2
    }

    fn part(&self, report: &FileReport) -> super::document::Part {
        part(report)
    }

    fn frame(&self, summary: &super::Summary, _tests: usize) -> String {
        frame(summary)
    }
}
