//! Human output: the finding, a code frame with the span underlined, then
//! what breaks (note) and what to do (help).

//!
//! Everything taken from a file (names, values, paths, the source lines of
//! code frames) goes through `escape::human`: it cannot act on the
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
    let gutter = gutter_width(report, d);
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
    footer(&mut out, d, &pad, style);
    out
}

/// A finding's note, help and fix, under its frames.
fn footer(out: &mut String, d: &Diagnostic, pad: &str, style: Style) {
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
}

/// The columns of the line-number gutter: enough for the last line any of
/// the finding's frames shows.
fn gutter_width(report: &FileReport, d: &Diagnostic) -> usize {
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
    (widest + 1).to_string().len()
}

/// The most columns of a source line a frame shows: a longer line is cut
/// around the span (`…` where it is cut), and so is the underline.
pub(crate) const FRAME_WIDTH: usize = 320;
/// How many columns before the span a cut line keeps.
const FRAME_CONTEXT: usize = 60;
/// How many bytes of a line around the span are read for its frame
/// (escaping writes a byte as at most 10 columns: enough for FRAME_WIDTH).
const WINDOW_BYTES: usize = 4 * FRAME_WIDTH;
/// How far a window's edge moves out of a word to end between words, so
/// that credential masking sees the word whole.
const WORD_REACH: usize = 1024;

/// The bytes of a line a frame is made of: around the span, ending
/// between words where it cuts the line.
struct Window {
    start: usize,
    end: usize,
    /// The window begins (ends) inside a word longer than [`WORD_REACH`]:
    /// that part is masked, since it cannot be told a credential or not.
    cut_word_before: bool,
    cut_word_after: bool,
}

impl Window {
    fn around(text: &str, line_start: usize, line_end: usize, start: usize) -> Window {
        let bytes = text.as_bytes();
        let in_word =
            |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-' | b'=');
        let mut from = start.saturating_sub(WINDOW_BYTES).max(line_start);
        let mut to = (start + WINDOW_BYTES).min(line_end);
        let reach_from = from.saturating_sub(WORD_REACH).max(line_start);
        while from > reach_from
            && from < line_end
            && in_word(bytes[from - 1])
            && in_word(bytes[from])
        {
            from -= 1;
        }
        let reach_to = (to + WORD_REACH).min(line_end);
        while to < reach_to && in_word(bytes[to - 1]) && in_word(bytes[to]) {
            to += 1;
        }
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        while !text.is_char_boundary(to) {
            to += 1;
        }
        Window {
            start: from,
            end: to,
            cut_word_before: from > line_start
                && from < line_end
                && in_word(bytes[from - 1])
                && in_word(bytes[from]),
            cut_word_after: to < line_end
                && to > from
                && in_word(bytes[to - 1])
                && in_word(bytes[to]),
        }
    }

    /// `masked` (the window's text) with a word cut at either edge masked.
    fn mask_cut_words(&self, mut masked: String) -> String {
        let in_word = |c: char| c.is_ascii_alphanumeric() || "+/_-=".contains(c);
        if self.cut_word_before {
            let n = masked.find(|c: char| !in_word(c)).unwrap_or(masked.len());
            masked.replace_range(..n, &"*".repeat(n));
        }
        if self.cut_word_after {
            let n = masked.len() - masked.rfind(|c: char| !in_word(c)).map_or(0, |i| i + 1);
            let at = masked.len() - n;
            masked.replace_range(at.., &"*".repeat(n));
        }
        masked
    }
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
    let line_end = line_range.end as usize;
    let bom = if text[line_start..line_end].starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let start = (range.start as usize).clamp(line_start + bom, line_end);
    let end = (range.end as usize).min(line_end).max(start);
    let window = Window::around(text, line_start + bom, line_end, start);
    // A span longer than the window is underlined to its edge.
    let end = end.min(window.end);
    // Credentials are masked (in the window, which ends between words),
    // tabs are shown as one space (the underline counts one column for
    // them), everything else a file holds is escaped, and the underline is
    // measured on the escaped text.
    let masked = crate::redact::mask(&text[window.start..window.end], &Default::default());
    let masked = window.mask_cut_words(masked.into_owned());
    let shown_part = |from: usize, to: usize| -> String {
        let part = &masked[from - window.start..to - window.start];
        human(&part.replace('\t', " ")).into_owned()
    };
    let escaped = shown_part(window.start, window.end);
    let start_col = shown_part(window.start, start).chars().count();
    let end_col = start_col + shown_part(start, end).chars().count();
    // At most FRAME_WIDTH columns of it, from a little before the span.
    let total = escaped.chars().count();
    let from = if total > FRAME_WIDTH {
        start_col
            .saturating_sub(FRAME_CONTEXT)
            .min(total - FRAME_WIDTH)
    } else {
        0
    };
    let to = total.min(from + FRAME_WIDTH);
    let cut_before = from > 0 || window.start > line_start + bom;
    let cut_after = to < total || window.end < line_end;
    let mut shown: String = escaped.chars().skip(from).take(to - from).collect();
    if cut_before {
        shown.insert(0, '…');
    }
    if cut_after {
        shown.push('…');
    }
    let lead = usize::from(cut_before);
    let start_col = start_col.clamp(from, to) - from + lead;
    let end_col = end_col.clamp(from, to) - from + lead;
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
