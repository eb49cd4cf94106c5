//! A finding's words beyond its message (advice, explanation), where its
//! secondary spans are, and the fingerprints CI systems key findings by.

use super::*;
use crate::diagnostic::Diagnostic;
use crate::engine::FileReport;
use crate::rules::RuleCode;
use crate::text::{LineCol, LineIndex, TextRange};
use std::path::Path;

/// A span as lines and columns: 1-based, columns in characters, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    pub start: LineCol,
    pub end: LineCol,
}

impl Region {
    pub fn of(index: &LineIndex, text: &str, range: TextRange) -> Region {
        Region {
            start: index.line_col(range.start as usize, text),
            end: index.line_col(range.end as usize, text),
        }
    }
}

/// A finding's secondary span, resolved in whichever file it lies.
pub(crate) struct RelatedLocation<'a> {
    pub path: &'a Path,
    pub region: Region,
    pub message: &'a str,
}

/// The finding's secondary spans, in this file or in others, in the order
/// the rule gave them.
pub(crate) fn related_locations<'a>(
    report: &'a FileReport,
    d: &'a Diagnostic,
) -> Vec<RelatedLocation<'a>> {
    d.related
        .iter()
        .map(|label| {
            let (path, text, index) = match &label.file {
                Some(file) => (file.path.as_path(), file.text.as_str(), file.index()),
                None => (report.path.as_path(), report.text.as_str(), &report.index),
            };
            RelatedLocation {
                path,
                region: Region::of(index, text, label.range),
                message: &label.message,
            }
        })
        .collect()
}

/// A fingerprint per finding of `report`, in order: a hash of the code, the
/// path and the text the span covers (whitespace collapsed), so it survives
/// lines moving above it; equal findings are told apart by their order.
pub fn fingerprints(report: &FileReport) -> Vec<String> {
    let path = shown_path(&report.path);
    let mut seen: foldhash::HashMap<(RuleCode, String), usize> = Default::default();
    report
        .diagnostics
        .iter()
        .map(|d| {
            let snippet = report
                .text
                .get(d.range.start as usize..d.range.end as usize)
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let occurrence = seen.entry((d.code, snippet.clone())).or_default();
            *occurrence += 1;
            stable_hash(&[d.code.as_str(), &path, &snippet, &occurrence.to_string()])
        })
        .collect()
}

/// A finding's message, then what breaks (`note:`) and what to do (`help:`).
pub(crate) fn message_with_advice(d: &Diagnostic) -> String {
    advice_with(d, &|text| std::borrow::Cow::Borrowed(text))
}

/// [`message_with_advice`] with each part passed through `escape` (the
/// line breaks between them are kept).
fn advice_with(d: &Diagnostic, escape: &dyn Fn(&str) -> std::borrow::Cow<'_, str>) -> String {
    let mut out = escape(&d.message).into_owned();
    if let Some(note) = &d.note {
        out.push_str("\nnote: ");
        out.push_str(&escape(note));
    }
    if let Some(help) = &d.help {
        out.push_str("\nhelp: ");
        out.push_str(&escape(help));
    }
    out
}

/// A finding as plain text for formats without code frames: the message
/// with its advice, then its other spans as `path:line:col: label`.
pub(crate) fn explanation(report: &FileReport, d: &Diagnostic) -> String {
    explanation_with(
        report,
        d,
        &|text| std::borrow::Cow::Borrowed(text),
        &shown_path,
    )
}

/// [`explanation`] for a log: each part escaped with [`escape::human`],
/// lines joined with `\n`; a related path that starts a line is written
/// as [`escape::human_path`] writes it (never starting with `::`).
pub(crate) fn human_explanation(report: &FileReport, d: &Diagnostic) -> String {
    explanation_with(report, d, &escape::human, &|p| {
        escape::human_path(Path::new(&shown_path(p)))
    })
}

fn explanation_with(
    report: &FileReport,
    d: &Diagnostic,
    escape: &dyn Fn(&str) -> std::borrow::Cow<'_, str>,
    path: &dyn Fn(&Path) -> String,
) -> String {
    let mut out = advice_with(d, escape);
    for related in related_locations(report, d) {
        out.push_str(&format!(
            "\n{}:{}:{}: {}",
            path(related.path),
            related.region.start.line,
            related.region.start.column,
            escape(related.message)
        ));
    }
    out
}

/// A 128-bit FNV-1a hash as 32 hex digits. Written out (not `DefaultHasher`)
/// because fingerprints are compared across releases and machines.
pub(crate) fn stable_hash(parts: &[&str]) -> String {
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut hash: u128 = 0x6c62272e07bb014262b821756295c58d;
    for part in parts {
        for byte in part.bytes().chain(std::iter::once(0xff)) {
            hash ^= u128::from(byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    format!("{hash:032x}")
}
