//! JUnit XML, for CI systems that only show test reports: a `<testsuite>`
//! per file, a failing `<testcase>` per finding, one passing case for a
//! clean file, `<error>` for a file that could not be linted and
//! `<skipped>` for a template passed over.

use super::escape::{human, human_path};
use super::{human_explanation, shown_path};
use crate::engine::{FileReport, Skip};
use std::fmt::Write;

pub fn render(reports: &[FileReport]) -> String {
    super::document::render(&JUNIT, reports)
}

/// The document around its suites, for a run's `summary` and `tests`.
fn frame(summary: &super::Summary, tests: usize) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gpulint\" tests=\"{tests}\" failures=\"{}\" errors=\"{}\">\n{}</testsuites>\n",
        summary.findings(),
        summary.failed_files,
        super::document::placeholder(0)
    )
}

/// A file's `<testsuite>`, and how many test cases it holds.
fn part(report: &FileReport) -> super::document::Part {
    let path = shown_path(&report.path);
    let mut cases = String::new();
    let (mut failures, mut errors, mut skipped) = (0, 0, 0);
    if let Some(skip) = &report.skipped {
        // A file passed over is neither a pass nor a failure: a CI test
        // report shows it as skipped, saying how to lint what it renders to.
        // (A skipped file's report holds no error: `FileReport::failed`.)
        skipped += 1;
        let (message, line) = match skip {
            Skip::HelmTemplate { offset } => (
                "a Helm/Go template ({{ ... }}), not plain YAML: lint the rendered output instead (`helm template CHART | gpulint check -` for a chart's template; for another, the output of what renders it)".to_string(),
                (!report.text.is_empty()).then(|| report.index.line_col(*offset, &report.text).line),
            ),
            Skip::Kustomize { kustomization, .. } => (
                format!(
                    "part of the kustomize overlay of {}: patches are partial manifests; lint the built output instead (`kubectl kustomize DIR | gpulint check -`)",
                    human_path(std::path::Path::new(&shown_path(kustomization)))
                ),
                None,
            ),
        };
        let inner = format!("<skipped message=\"{}\"/>", attr(&message));
        case(&mut cases, "lint", &path, line, Some(&inner));
    } else if let Some(error) = &report.error {
        errors += 1;
        let at = error.offset.map(|o| report.index.line_col(o, &report.text));
        let place = at.map_or(String::new(), |at| format!(":{}:{}", at.line, at.column));
        let inner = format!(
            "<error message=\"{}\">{}</error>",
            attr(&error.message),
            body(&format!(
                "{}{place}: {}",
                human_path(std::path::Path::new(&path)),
                human(&error.message)
            ))
        );
        case(
            &mut cases,
            "lint",
            &path,
            at.map(|at| at.line),
            Some(&inner),
        );
    }
    for d in &report.diagnostics {
        failures += 1;
        let at = report.index.line_col(d.range.start as usize, &report.text);
        // The text is shown as lines in CI logs and test reports: each part
        // escaped for people, so that a name read from a file cannot start
        // a line (a `::` workflow command), and the path cannot either.
        let text = format!(
            "{}:{}:{}: {}",
            human_path(std::path::Path::new(&path)),
            at.line,
            at.column,
            human_explanation(report, d)
        );
        let inner = format!(
            "<failure message=\"{}\" type=\"{}\">{}</failure>",
            attr(&d.message),
            d.severity,
            body(&text)
        );
        let name = format!("{} at {}:{}", d.code, at.line, at.column);
        case(&mut cases, &name, &path, Some(at.line), Some(&inner));
    }
    let mut count = failures + errors + skipped;
    if count == 0 {
        count = 1;
        case(&mut cases, "lint", &path, None, None);
    }
    let mut suite = String::new();
    let _ = write!(
        suite,
        "  <testsuite name=\"{}\" tests=\"{count}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n{cases}  </testsuite>\n",
        attr(&path)
    );
    super::document::Part {
        sections: vec![vec![suite]],
        tests: count,
    }
}

/// One `<testcase>` of the file at `path`, holding `inner` (a failure, an
/// error, a skip) or nothing when it passed.
fn case(out: &mut String, name: &str, path: &str, line: Option<usize>, inner: Option<&str>) {
    let line = line.map_or(String::new(), |l| format!(" line=\"{l}\""));
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\"{line}",
        attr(name),
        attr(path),
        attr(path)
    );
    match inner {
        Some(inner) => {
            let _ = writeln!(out, ">\n      {inner}\n    </testcase>");
        }
        None => out.push_str("/>\n"),
    }
}

/// Text as XML 1.0 allows it: markup escaped, and characters XML cannot
/// hold at all (most C0 controls) replaced.
fn body(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// An attribute value: as `body`, plus quotes, and line breaks kept as
/// character references (a literal one would be normalized to a space).
fn attr(text: &str) -> String {
    body(text)
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

/// The junit document, written file by file (`output::document`).
pub struct JunitDocument;

pub const JUNIT: JunitDocument = JunitDocument;

impl super::document::WholeRun for JunitDocument {
    fn sections(&self) -> usize {
        1
    }

    fn part(&self, report: &FileReport) -> super::document::Part {
        part(report)
    }

    fn frame(&self, summary: &super::Summary, tests: usize) -> String {
        frame(summary, tests)
    }

    fn is_json(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_controls() {
        assert_eq!(body("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(attr("say \"hi\"\nnow"), "say &quot;hi&quot;&#10;now");
        assert_eq!(body("bell\u{7}"), "bell\u{FFFD}");
    }
}
