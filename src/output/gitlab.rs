//! GitLab Code Quality (a Code Climate subset): a JSON array of issues that
//! GitLab shows in merge requests. GitLab matches issues between the branch
//! and its target by `fingerprint`, so it must not change when unrelated
//! lines move: it hashes the code, the path and the flagged text.

use super::{Region, explanation, fingerprints, shown_path};
use crate::diagnostic::Severity;
use crate::engine::FileReport;
use serde_json::{Value, json};

pub fn render(reports: &[FileReport]) -> String {
    super::document::render(&GITLAB, reports)
}

/// The document: one array.
fn frame() -> String {
    let mut text = serde_json::to_string(&super::document::placeholder(0)).expect("a string");
    text.push('\n');
    text
}

/// A file's issues.
fn part(report: &FileReport) -> super::document::Part {
    let mut issues: Vec<Value> = Vec::new();
    let path = shown_path(&report.path);
    if let Some(error) = &report.error
        && report.skipped.is_none()
    {
        let line = error
            .offset
            .map_or(1, |o| report.index.line_col(o, &report.text).line);
        issues.push(json!({
            "type": "issue",
            "check_name": "gpulint/file-error",
            "description": format!("gpulint could not lint this file: {}", error.message),
            "categories": ["Bug Risk"],
            "severity": "blocker",
            "fingerprint": super::stable_hash(&["file-error", &path, &error.message]),
            "location": { "path": path, "lines": { "begin": line, "end": line } },
        }));
    }
    for (d, fingerprint) in report.diagnostics.iter().zip(fingerprints(report)) {
        let region = Region::of(&report.index, &report.text, d.range);
        issues.push(json!({
            "type": "issue",
            "check_name": d.code,
            "description": format!("{}: {}", d.code, d.message),
            "content": { "body": explanation(report, d) },
            "categories": ["Bug Risk"],
            "severity": match d.severity {
                Severity::Error => "critical",
                Severity::Warning => "major",
                Severity::Info => "info",
            },
            "fingerprint": fingerprint,
            "location": {
                "path": path,
                "positions": {
                    "begin": { "line": region.start.line, "column": region.start.column },
                    "end": { "line": region.end.line, "column": region.end.column },
                },
            },
        }));
    }
    super::document::Part {
        sections: vec![issues.iter().map(super::document::pretty).collect()],
        tests: 0,
    }
}

/// The gitlab document, written file by file (`output::document`).
pub struct GitlabDocument;

pub const GITLAB: GitlabDocument = GitlabDocument;

impl super::document::WholeRun for GitlabDocument {
    fn sections(&self) -> usize {
        1
    }

    fn part(&self, report: &FileReport) -> super::document::Part {
        part(report)
    }

    fn frame(&self, _summary: &super::Summary, _tests: usize) -> String {
        frame()
    }
}
