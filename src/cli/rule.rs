//! `gpulint rule`: one rule's doc, or the table of every rule.

use super::{ListFormat, usage_error};
use crate::rules::RuleCode;
use crate::rules::RuleMeta;

/// Rows as text columns, each padded to its widest cell in characters (a
/// `Display` value's own formatting may ignore `{:<8}`); the last is not padded.
fn aligned_columns<const N: usize>(rows: &[[String; N]]) -> String {
    let width = |column: usize| {
        rows.iter()
            .map(|r| r[column].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..N).map(width).collect();
    let mut out = String::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if i + 1 < N {
                let pad = widths[i] - cell.chars().count() + 1;
                out.push_str(&" ".repeat(pad));
            }
        }
        out.push('\n');
    }
    out
}

/// The rule a user names: by its code (`SHM001`) or its name
/// (`default-shm-on-gpu-service`), in any case.
fn find(query: &str) -> Option<RuleCode> {
    let query = query.trim();
    query.parse::<RuleCode>().ok().or_else(|| {
        crate::rules::all_meta()
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(query))
            .map(|m| m.code)
    })
}

/// A rule's metadata (its doc's front matter) and its doc, as JSON.
fn json(meta: &RuleMeta) -> serde_json::Value {
    serde_json::json!({
        "code": meta.code,
        "name": meta.name,
        "summary": meta.summary,
        "severity": meta.severity.as_str(),
        "fix": meta.fix.as_str(),
        "opt_in": meta.opt_in,
        "targets": meta.targets.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
        "sources": meta.sources,
        "doc": meta.body,
    })
}

pub(super) fn rule(code: Option<String>, all: bool, format: ListFormat) -> u8 {
    let mut out = String::new();
    match code {
        Some(query) if !all => {
            let Some(code) = find(&query) else {
                return usage_error(format!(
                    "unknown rule `{query}`: name a rule by its code (SHM001) or its name (default-shm-on-gpu-service); `gpulint rule --all` lists them"
                ));
            };
            let meta = crate::rules::meta(code);
            match format {
                ListFormat::Json => {
                    out = serde_json::to_string_pretty(&json(meta)).expect("JSON") + "\n";
                }
                ListFormat::Text => out.push_str(&format!(
                    "{} ({}) — {} by default, fix: {}\n\n{}",
                    meta.name,
                    meta.code,
                    meta.severity,
                    meta.fix.as_str(),
                    meta.body
                )),
            }
        }
        _ if format == ListFormat::Json => {
            let rules: Vec<serde_json::Value> = crate::rules::all_meta().iter().map(json).collect();
            out = serde_json::to_string_pretty(&rules).expect("JSON") + "\n";
        }
        _ => {
            let rows: Vec<[String; 4]> = crate::rules::all_meta()
                .iter()
                .map(|m| {
                    [
                        m.code.to_string(),
                        m.severity.to_string(),
                        m.name.to_string(),
                        m.summary.to_string(),
                    ]
                })
                .collect();
            out.push_str(&aligned_columns(&rows));
        }
    }
    super::print_stdout(out.as_bytes())
}
