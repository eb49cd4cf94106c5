//! Human output: the finding, a code frame with the span underlined, then
//! what breaks (note) and what to do (help).

//!
//! Everything taken from a file (names, values, paths, the source lines of
//! code frames) goes through [`human`]: it cannot act on the
//! terminal or a CI log.

use super::escape::{human, human_path};
use crate::diagnostic::{Diagnostic, Label, Severity};
use crate::engine::{FileError, FileReport};
use crate::text::{LineIndex, TextRange};
use std::fmt::Write;

#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn severity(self, severity: Severity) -> String {
        let code = match severity {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "1;36",
        };
        self.paint(code, severity.as_str())
    }
}

/// `path:line:col` of an offset.
pub fn location(report: &FileReport, offset: usize) -> String {
    let lc = report.index.line_col(offset, &report.text);
    format!("{}:{}:{}", human_path(&report.path), lc.line, lc.column)
}

/// The one-line form of a file error: `path:line:col: error: message`.
pub fn file_error_line(report: &FileReport, error: &FileError) -> String {
    match error.offset {
        Some(offset) => format!(
            "{}: error: {}",
            location(report, offset),
            human(&error.message)
        ),
        None => format!(
            "{}: error: {}",
            human_path(&report.path),
            human(&error.message)
        ),
    }
}

pub fn concise(report: &FileReport, d: &Diagnostic) -> String {
    format!(
        "{}: {}[{}] {}",
        location(report, d.range.start as usize),
        d.severity,
        d.code,
        human(&d.message)
    )
}

/// The full rendering of one finding.
pub fn render(report: &FileReport, d: &Diagnostic, style: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}{} {}",
        style.severity(d.severity),
        style.paint("1", &format!("[{}]:", d.code)),
        style.paint("1", &human(&d.message))
    );
    let here = Source {
        text: &report.text,
        index: &report.index,
    };
    // Labels in this file come in line order with the primary span; labels
    // in other files follow, each under its `--> path:line:col` header (not
    // rustc's `:::`, which would start a line with a workflow command).
    let (mut local, elsewhere): (Vec<&Label>, Vec<&Label>) =
        d.related.iter().partition(|l| l.file.is_none());
    local.sort_by_key(|l| l.range.start);
    let line_of = |l: &Label| match &l.file {
        Some(f) => f.index().line_of(l.range.start as usize),
        None => report.index.line_of(l.range.start as usize),
    };
    let widest = d
        .related
        .iter()
        .map(line_of)
        .chain([report.index.line_of(d.range.start as usize)])
        .max()
        .unwrap_or(0);
    let gutter = (widest + 1).to_string().len();
    let pad = " ".repeat(gutter);
    let _ = writeln!(
        out,
        "{pad}{} {}",
        style.paint("34", "-->"),
        location(report, d.range.start as usize)
    );
    let bar = style.paint("34", "|");
    let _ = writeln!(out, "{pad} {bar}");
    let primary_line = report.index.line_of(d.range.start as usize);
    let (before, after): (Vec<&Label>, Vec<&Label>) = local
        .into_iter()
        .partition(|l| report.index.line_of(l.range.start as usize) < primary_line);
    let related = |out: &mut String, source: Source, label: &Label| {
        frame(
            out,
            source,
            label.range,
            Some(&label.message),
            '-',
            gutter,
            style,
            Severity::Info,
        );
    };
    for label in before {
        related(&mut out, here, label);
    }
    frame(
        &mut out,
        here,
        d.range,
        d.label.as_deref(),
        '^',
        gutter,
        style,
        d.severity,
    );
    for label in after {
        related(&mut out, here, label);
    }
    for label in elsewhere {
        let file = label.file.as_ref().expect("partitioned on file");
        let lc = file
            .index()
            .line_col(label.range.start as usize, &file.text);
        let _ = writeln!(out, "{pad} {bar}");
        let _ = writeln!(
            out,
            "{pad}{} {}:{}:{}",
            style.paint("34", "-->"),
            human_path(&file.path),
            lc.line,
            lc.column
        );
        let _ = writeln!(out, "{pad} {bar}");
        let source = Source {
            text: &file.text,
            index: file.index(),
        };
        related(&mut out, source, label);
    }
    let _ = writeln!(out, "{pad} {bar}");
    if let Some(note) = &d.note {
        let note = human(note);
        let _ = writeln!(out, "{pad} {} {note}", style.paint("34", "= note:"));
    }
    if let Some(help) = &d.help {
        let help = human(help);
        let _ = writeln!(out, "{pad} {} {help}", style.paint("34", "= help:"));
    }
    if let Some(fix) = &d.fix {
        let how = match fix.applicability {
            crate::fix::Applicability::Safe => "safe: `--fix` applies it",
            crate::fix::Applicability::Unsafe => "unsafe: needs `--fix --unsafe-fixes`",
            crate::fix::Applicability::DisplayOnly => "suggestion: review and apply by hand",
        };
        let _ = writeln!(
            out,
            "{pad} {} {} ({how})",
            style.paint("34", "= fix:"),
            human(&fix.title)
        );
    }
    out
}

/// The text a frame is cut from.
#[derive(Clone, Copy)]
struct Source<'a> {
    text: &'a str,
    index: &'a LineIndex,
}

#[allow(clippy::too_many_arguments)]
fn frame(
    out: &mut String,
    source: Source,
    range: TextRange,
    label: Option<&str>,
    marker: char,
    gutter: usize,
    style: Style,
    severity: Severity,
) {
    let (index, text) = (source.index, source.text);
    let line = index.line_of(range.start as usize);
    let line_range = index.line_range(line, text);
    let line_start = line_range.start as usize;
    let line_text = &text[line_range.as_range()];
    let bom = if line_text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    // Tabs are shown as one space (the underline counts one column for
    // them), credentials are masked, everything else a file holds is
    // escaped, and the underline is measured on the escaped text.
    let shown_part = |from: usize, to: usize| -> String {
        let part = text.get(from.max(line_start + bom)..to).unwrap_or_default();
        let part = crate::redact::mask(part, &Default::default());
        human(&part.replace('\t', " ")).into_owned()
    };
    let shown = shown_part(line_start, line_range.end as usize);
    let start = (range.start as usize).clamp(line_start, line_range.end as usize);
    let end = (range.end as usize).min(line_range.end as usize).max(start);
    let start_col = shown_part(line_start, start).chars().count();
    let end_col = start_col + shown_part(start, end).chars().count();
    let width = end_col.saturating_sub(start_col).max(1);
    let bar = style.paint("34", "|");
    let _ = writeln!(
        out,
        "{} {bar} {}",
        style.paint("34", &format!("{:>gutter$}", line + 1)),
        shown.trim_end()
    );
    let underline: String = std::iter::repeat_n(marker, width).collect();
    let color = match (marker, severity) {
        ('-', _) => "34",
        (_, Severity::Error) => "1;31",
        (_, Severity::Warning) => "1;33",
        (_, Severity::Info) => "1;36",
    };
    let painted = style.paint(
        color,
        &format!(
            "{underline}{}",
            label.map(|l| format!(" {}", human(l))).unwrap_or_default()
        ),
    );
    let _ = writeln!(
        out,
        "{} {bar} {}{painted}",
        " ".repeat(gutter),
        " ".repeat(start_col)
    );
}
