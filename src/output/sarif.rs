//! SARIF 2.1.0, the format GitHub code scanning and IDE viewers read.
//!
//! One run; every registered rule is a `reportingDescriptor` whose help is
//! its `rules/<CODE>.md` doc. Locations are relative to `%SRCROOT%` (the
//! working directory), regions are 1-based with exclusive end columns
//! counted in code points (`columnKind`), spans in other files (the
//! Dockerfile a compose service builds) are `relatedLocations`, and fixes
//! carry their edits as `replacements`.

use super::{
    Region, encode_uri_path, file_uri, fingerprints, message_with_advice, related_locations,
    shown_path,
};
use crate::diagnostic::{Diagnostic, Severity};
use crate::engine::FileReport;
use crate::fix::Fix;
use crate::text::TextRange;
use serde_json::{Value, json};
use std::path::Path;

const SRCROOT: &str = "%SRCROOT%";

pub fn render(reports: &[FileReport]) -> String {
    super::document::render(&SARIF, reports)
}

/// A file's error as a tool execution notification (section 0) and its
/// findings as results (section 1).
fn part(report: &FileReport) -> super::document::Part {
    use super::document::pretty;
    let mut notifications = Vec::new();
    if let Some(error) = &report.error {
        let region = error
            .offset
            .map(|o| TextRange::new(o, o))
            .map(|range| Region::of(&report.index, &report.text, range));
        let (level, text) = match &report.skipped {
            Some(_) => ("note", format!("skipped: {}", error.message)),
            None => ("error", error.message.clone()),
        };
        notifications.push(pretty(&json!({
            "level": level,
            "message": { "text": text },
            "locations": [location(&report.path, region)],
        })));
    }
    let results = report
        .diagnostics
        .iter()
        .zip(fingerprints(report))
        .map(|(d, fingerprint)| pretty(&result(report, d, d.code.index(), &fingerprint)))
        .collect();
    super::document::Part {
        sections: vec![notifications, results],
        tests: 0,
    }
}

/// The log around its two arrays, for a run's `summary`.
fn frame(summary: &super::Summary) -> String {
    let rules = crate::rules::all_meta();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "gpulint",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules.iter().map(rule).collect::<Vec<_>>(),
            }},
            "originalUriBaseIds": { SRCROOT: { "uri": srcroot_uri() } },
            "columnKind": "unicodeCodePoints",
            "invocations": [{
                "executionSuccessful": summary.failed_files == 0,
                "toolExecutionNotifications": super::document::placeholder(0),
            }],
            "results": super::document::placeholder(1),
        }],
    });
    let mut text = super::document::pretty(&log);
    text.push('\n');
    text
}

fn rule(meta: &crate::rules::RuleMeta) -> Value {
    let body = format!("{}\n\n{}", meta.summary, meta.body);
    json!({
        "id": meta.code,
        "name": meta.name,
        "shortDescription": { "text": meta.summary },
        "fullDescription": { "text": meta.summary },
        "help": { "text": body, "markdown": body },
        "helpUri": crate::rules::doc_url(meta.code),
        "defaultConfiguration": {
            "level": level(meta.severity),
            "enabled": !meta.opt_in,
        },
        "properties": {
            "tags": meta.targets.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
            "fix": meta.fix.as_str(),
        },
    })
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn result(report: &FileReport, d: &Diagnostic, rule_index: usize, fingerprint: &str) -> Value {
    let region = Region::of(&report.index, &report.text, d.range);
    // Viewers (GitHub code scanning among them) show a related location
    // where the message links to it by id: `[text](1)`.
    let mut message = message_with_advice(d);
    let mut related = Vec::new();
    for (i, r) in related_locations(report, d).into_iter().enumerate() {
        let id = i + 1;
        let place = format!(
            "{}:{}:{}",
            shown_path(r.path),
            r.region.start.line,
            r.region.start.column
        );
        message.push_str(&format!(
            "\n[{}]({id}): {}",
            escape_link_text(&place),
            r.message
        ));
        let mut location = location(r.path, Some(r.region));
        location["id"] = json!(id);
        location["message"] = json!({ "text": r.message });
        related.push(location);
    }
    let mut result = json!({
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": level(d.severity),
        "message": { "text": message },
        "locations": [location(&report.path, Some(region))],
        "partialFingerprints": { "gpulintFingerprint/v1": fingerprint },
    });
    if !related.is_empty() {
        result["relatedLocations"] = json!(related);
    }
    if let Some(fix) = &d.fix {
        result["fixes"] = json!([self::fix(report, fix)]);
    }
    result
}

/// SARIF embedded links take `\`, `[` and `]` in their text escaped.
fn escape_link_text(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('[', "\\[")
        .replace(']', "\\]")
}

fn fix(report: &FileReport, fix: &Fix) -> Value {
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let replacements: Vec<Value> = edits
        .iter()
        .map(|edit| {
            json!({
                "deletedRegion": region(Region::of(&report.index, &report.text, edit.range)),
                "insertedContent": { "text": edit.content },
            })
        })
        .collect();
    json!({
        "description": { "text": fix.title },
        "artifactChanges": [{
            "artifactLocation": artifact(&report.path),
            "replacements": replacements,
        }],
        "properties": { "applicability": fix.applicability.as_str() },
    })
}

fn location(path: &Path, region: Option<Region>) -> Value {
    let mut physical = json!({ "artifactLocation": artifact(path) });
    if let Some(r) = region {
        physical["region"] = self::region(r);
    }
    json!({ "physicalLocation": physical })
}

fn region(r: Region) -> Value {
    json!({
        "startLine": r.start.line,
        "startColumn": r.start.column,
        "endLine": r.end.line,
        "endColumn": r.end.column,
    })
}

/// A path under the working directory is relative to `%SRCROOT%`; one
/// outside it is an absolute `file:` URI.
fn artifact(path: &Path) -> Value {
    let shown = shown_path(path);
    if Path::new(&shown).is_absolute() {
        json!({ "uri": file_uri(&shown) })
    } else {
        json!({ "uri": encode_uri_path(&shown), "uriBaseId": SRCROOT })
    }
}

fn srcroot_uri() -> String {
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| "/".to_string());
    let mut uri = file_uri(&cwd);
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// The sarif document, written file by file (`output::document`).
pub struct SarifDocument;

pub const SARIF: SarifDocument = SarifDocument;

impl super::document::WholeRun for SarifDocument {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_text_escapes_brackets_and_backslashes() {
        assert_eq!(escape_link_text(r"a[1]\b"), r"a\[1\]\\b");
    }
}
