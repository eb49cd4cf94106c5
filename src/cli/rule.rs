//! `gpulint rule`: one rule's doc, or the table of every rule.

use super::{EXIT_CLEAN, usage_error};
use crate::rules::RuleCode;
use std::io::Write;

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

pub(super) fn rule(code: Option<String>, all: bool) -> u8 {
    let mut out = String::new();
    match code {
        Some(code) if !all => {
            let Ok(code) = code.parse::<RuleCode>() else {
                return usage_error(format!("unknown rule `{code}` (see `gpulint rule --all`)"));
            };
            let meta = crate::rules::meta(code);
            out.push_str(&format!(
                "{} ({}) — {} by default, fix: {}\n\n{}",
                meta.name,
                meta.code,
                meta.severity,
                meta.fix.as_str(),
                meta.body
            ));
        }
        _ => {
            let rows: Vec<[String; 4]> = crate::rules::all_meta()
                .iter()
                .map(|m| {
                    [
                        m.code.to_string(),
                        m.severity.to_string(),
                        m.name.clone(),
                        m.summary.clone(),
                    ]
                })
                .collect();
            out.push_str(&aligned_columns(&rows));
        }
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    EXIT_CLEAN
}
