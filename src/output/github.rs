//! GitHub Actions workflow commands (`::warning file=…::message`): the runner
//! turns each line on stdout into an annotation on the pull request's diff.
//! Escaping follows `@actions/core`: data escapes `%`, CR and LF; properties
//! also escape `:` and `,`, which would otherwise end the property. Before
//! that, each part of the message is escaped as for people
//! (`output::escape::human`): the log shows these lines too.

use super::escape::human;
use super::{Region, human_explanation, shown_path};
use crate::diagnostic::{Diagnostic, Severity};
use crate::engine::FileReport;

pub fn render(reports: &[FileReport]) -> String {
    let mut out = String::new();
    for report in reports {
        if let Some(error) = &report.error
            && report.skipped.is_none()
        {
            let mut properties = vec![("file", shown_path(&report.path))];
            if let Some(offset) = error.offset {
                let at = report.index.line_col(offset, &report.text);
                properties.push(("line", at.line.to_string()));
                properties.push(("col", at.column.to_string()));
            }
            properties.push(("title", "gpulint: file not linted".to_string()));
            command(&mut out, "error", &properties, &human(&error.message));
        }
        for d in &report.diagnostics {
            annotation(&mut out, report, d);
        }
    }
    out
}

fn annotation(out: &mut String, report: &FileReport, d: &Diagnostic) {
    let level = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    let region = Region::of(&report.index, &report.text, d.range);
    let name = &crate::rules::meta(d.code).name;
    let message = human_explanation(report, d);
    let properties = [
        ("file", shown_path(&report.path)),
        ("line", region.start.line.to_string()),
        ("col", region.start.column.to_string()),
        ("endLine", region.end.line.to_string()),
        ("endColumn", region.end.column.to_string()),
        ("title", format!("gpulint {} ({name})", d.code)),
    ];
    command(out, level, &properties, &message);
}

/// `message` is already escaped for people (its parts; its own line
/// breaks are kept and become `%0A`).
fn command(out: &mut String, name: &str, properties: &[(&str, String)], message: &str) {
    out.push_str("::");
    out.push_str(name);
    for (i, (key, value)) in properties.iter().enumerate() {
        out.push(if i == 0 { ' ' } else { ',' });
        out.push_str(key);
        out.push('=');
        // The file property must stay the exact path for the annotation to
        // land on it: escape_property alone, which the runner reverses.
        out.push_str(&escape_property(value));
    }
    out.push_str("::");
    out.push_str(&escape_data(message));
    out.push('\n');
}

pub(crate) fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

pub(crate) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_escapes_percent_first_then_line_breaks() {
        assert_eq!(escape_data("50%\r\nnext"), "50%25%0D%0Anext");
        // Already-escaped looking text must not be unescaped by the runner.
        assert_eq!(escape_data("%0A"), "%250A");
        assert_eq!(escape_data("a: b, c"), "a: b, c");
    }

    #[test]
    fn properties_also_escape_colon_and_comma() {
        assert_eq!(escape_property("dir:a,b%\n"), "dir%3Aa%2Cb%25%0A");
    }
}
