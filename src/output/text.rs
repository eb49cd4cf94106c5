//! Human output: the finding, a code frame with the span underlined, then
//! what breaks (note) and what to do (help).

use crate::diagnostic::{Diagnostic, Severity};
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
    format!("{}:{}:{}", report.path.display(), lc.line, lc.column)
}

/// The one-line form of a file error: `path:line:col: error: message`.
pub fn file_error_line(report: &FileReport, error: &FileError) -> String {
    match error.offset {
        Some(offset) => format!("{}: error: {}", location(report, offset), error.message),
        None => format!("{}: error: {}", report.path.display(), error.message),
    }
}

pub fn concise(report: &FileReport, d: &Diagnostic) -> String {
    format!(
        "{}: {}[{}] {}",
        location(report, d.range.start as usize),
        d.severity,
        d.code,
        d.message
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
        style.paint("1", &d.message)
    );
    let mut lines: Vec<usize> = vec![report.index.line_of(d.range.start as usize)];
    lines.extend(
        d.related
            .iter()
            .map(|l| report.index.line_of(l.range.start as usize)),
    );
    let gutter = lines.iter().max().map_or(1, |l| (l + 1).to_string().len());
    let pad = " ".repeat(gutter);
    let _ = writeln!(
        out,
        "{pad}{} {}",
        style.paint("34", "-->"),
        location(report, d.range.start as usize)
    );
    let bar = style.paint("34", "|");
    let _ = writeln!(out, "{pad} {bar}");
    frame(
        &mut out,
        report,
        d.range,
        d.label.as_deref(),
        '^',
        gutter,
        style,
        d.severity,
    );
    for label in &d.related {
        frame(
            &mut out,
            report,
            label.range,
            Some(&label.message),
            '-',
            gutter,
            style,
            Severity::Info,
        );
    }
    let _ = writeln!(out, "{pad} {bar}");
    if let Some(note) = &d.note {
        let _ = writeln!(out, "{pad} {} {note}", style.paint("34", "= note:"));
    }
    if let Some(help) = &d.help {
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
            fix.title
        );
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn frame(
    out: &mut String,
    report: &FileReport,
    range: TextRange,
    label: Option<&str>,
    marker: char,
    gutter: usize,
    style: Style,
    severity: Severity,
) {
    let index: &LineIndex = &report.index;
    let text = &report.text;
    let line = index.line_of(range.start as usize);
    let line_range = index.line_range(line, text);
    let line_text = text[line_range.as_range()].trim_start_matches('\u{feff}');
    let shown: String = line_text
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let start_col = index.line_col(range.start as usize, text).column - 1;
    let end = (range.end as usize)
        .min(line_range.end as usize)
        .max(range.start as usize);
    let end_col = index.line_col(end, text).column - 1;
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
            label.map(|l| format!(" {l}")).unwrap_or_default()
        ),
    );
    let _ = writeln!(
        out,
        "{} {bar} {}{painted}",
        " ".repeat(gutter),
        " ".repeat(start_col)
    );
}
