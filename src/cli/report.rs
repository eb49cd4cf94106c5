//! What `gpulint check` prints: the report in each format, the summary
//! line, `--statistics`, and the notes on skipped templates and overlays.

use super::check::FixAction;
use super::plural;
use crate::engine::fix::FixMode;
use crate::engine::{FileReport, Skip};
use crate::fix::Applicability;
use crate::output::{OutputFormat, Summary, github, gitlab, json, junit, sarif, text};
use crate::rules::RuleCode;
use std::path::{Path, PathBuf};

/// What a `check` run found and fixed, to render in any format.
pub(super) struct Outcome<'a> {
    pub reports: &'a [FileReport],
    pub summary: &'a Summary,
    pub action: FixAction,
    pub mode: FixMode,
    pub applied: usize,
    pub fixed_files: usize,
    /// Paths that were never linted (not found, bad configuration).
    pub unchecked: usize,
    pub quiet: bool,
    pub statistics: bool,
}

impl Outcome<'_> {
    pub fn render(&self, format: OutputFormat, style: text::Style) -> String {
        let reports = self.reports;
        match format {
            OutputFormat::Json => json::render(reports),
            OutputFormat::Github => github::render(reports),
            OutputFormat::Sarif => sarif::render(reports),
            OutputFormat::Gitlab => gitlab::render(reports),
            OutputFormat::Junit => junit::render(reports),
            OutputFormat::Concise => reports
                .iter()
                .flat_map(|r| {
                    r.diagnostics
                        .iter()
                        .map(move |d| text::concise(r, d) + "\n")
                })
                .collect(),
            OutputFormat::Text => {
                let mut out = if self.statistics {
                    statistics(reports)
                } else {
                    self.findings(style)
                };
                out.push_str(&self.footer());
                out
            }
        }
    }

    /// Each finding in full, or one line each with `--quiet`.
    fn findings(&self, style: text::Style) -> String {
        let mut out = String::new();
        for report in self.reports {
            for d in &report.diagnostics {
                if self.quiet {
                    out.push_str(&text::concise(report, d));
                } else {
                    out.push_str(&text::render(report, d, style));
                }
                out.push('\n');
            }
        }
        out
    }

    /// What fixing did and the summary line; nothing with `--quiet`.
    fn footer(&self) -> String {
        let mut out = String::new();
        if self.quiet {
            return out;
        }
        // `--statistics` is a table of findings; it has never said what was fixed.
        if self.action == FixAction::Apply && !self.statistics {
            out.push_str(&format!(
                "Fixed {} in {}.\n",
                plural(self.applied, "finding"),
                plural(self.fixed_files, "file")
            ));
        }
        out.push_str(&summary_line(
            self.summary,
            self.reports,
            self.mode,
            self.unchecked,
        ));
        out.push('\n');
        out
    }
}

/// `--statistics`: one line per rule code, most findings first, as
/// `COUNT  CODE  [*] summary` (`[*]`: some are fixable with `--fix`).
fn statistics(reports: &[FileReport]) -> String {
    use std::collections::BTreeMap;
    let mut counts: BTreeMap<RuleCode, (usize, bool)> = BTreeMap::new();
    for d in reports.iter().flat_map(|r| &r.diagnostics) {
        let entry = counts.entry(d.code).or_default();
        entry.0 += 1;
        entry.1 |= d.fix.is_some();
    }
    let mut rows: Vec<(RuleCode, usize, bool)> = counts
        .into_iter()
        .map(|(code, (n, fixable))| (code, n, fixable))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let width = rows
        .iter()
        .map(|r| r.1.to_string().len())
        .max()
        .unwrap_or(1);
    let code_width = rows.iter().map(|r| r.0.as_str().len()).max().unwrap_or(0);
    let mut out = String::new();
    for (code, n, fixable) in rows {
        let marker = if fixable { "[*]" } else { "[ ]" };
        let summary = &crate::rules::meta(code).summary;
        out.push_str(&format!(
            "{n:>width$}\t{code:<code_width$}\t{marker} {summary}\n"
        ));
    }
    out
}

/// `unchecked`: paths that were never linted, besides `s.failed_files`.
fn summary_line(s: &Summary, reports: &[FileReport], mode: FixMode, unchecked: usize) -> String {
    let failed = s.failed_files + unchecked;
    let mut line = if s.findings() == 0 && failed == 0 {
        format!("All checks passed ({} checked).", plural(s.files, "file"))
    } else if s.findings() == 0 {
        // Not "all passed": some files were never checked.
        format!(
            "No problems found in {}.",
            plural(s.files - s.failed_files, "file")
        )
    } else {
        format!(
            "Found {} ({} error{}, {}, {} info) in {} of {} checked.",
            plural(s.findings(), "problem"),
            s.errors,
            if s.errors == 1 { "" } else { "s" },
            plural(s.warnings, "warning"),
            s.infos,
            plural(s.files_with_findings, "file"),
            s.files
        )
    };
    let fixes = |applicability| {
        reports
            .iter()
            .flat_map(|r| &r.diagnostics)
            .filter(|d| {
                d.fix
                    .as_ref()
                    .is_some_and(|f| f.applicability == applicability)
            })
            .count()
    };
    let (safe, unsafe_) = (fixes(Applicability::Safe), fixes(Applicability::Unsafe));
    if safe > 0 || unsafe_ > 0 {
        if mode.unsafe_fixes {
            line.push_str(&format!(" {} fixable with `--fix`.", safe + unsafe_));
        } else if safe == 0 {
            line.push_str(&format!(" {unsafe_} fixable with `--fix --unsafe-fixes`."));
        } else if unsafe_ == 0 {
            line.push_str(&format!(" {safe} fixable with `--fix`."));
        } else {
            line.push_str(&format!(
                " {safe} fixable with `--fix` ({unsafe_} more with `--unsafe-fixes`)."
            ));
        }
    }
    if failed > 0 {
        line.push_str(&format!(
            " {} could not be checked (see errors above).",
            plural(failed, "file")
        ));
    }
    if s.skipped_files > 0 {
        line.push_str(&format!(
            " {} skipped (see notes above).",
            plural(s.skipped_files, "template or patch file")
        ));
    }
    line
}

/// One note per Helm chart and per kustomize overlay that was skipped,
/// saying how to lint what it renders to.
pub(super) fn skip_notes<'a>(reports: impl Iterator<Item = &'a FileReport>) -> Vec<String> {
    use std::collections::BTreeMap;
    let mut charts: BTreeMap<PathBuf, Vec<&PathBuf>> = BTreeMap::new();
    let mut overlays: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for report in reports {
        match &report.skipped {
            Some(Skip::HelmTemplate { .. }) => charts
                .entry(chart_root(&report.path))
                .or_default()
                .push(&report.path),
            Some(Skip::Kustomize { kustomization }) => {
                let dir = kustomization
                    .parent()
                    .unwrap_or(Path::new("."))
                    .to_path_buf();
                *overlays.entry(dir).or_default() += 1;
            }
            None => {}
        }
    }
    let shown = |p: &Path| {
        let s = crate::output::escape::human_path(p);
        if s.is_empty() { ".".to_string() } else { s }
    };
    let mut notes = Vec::new();
    for (chart, files) in charts {
        let what = if files.len() == 1 {
            format!("the Helm template {}", shown(files[0]))
        } else {
            format!("{} Helm templates in {}", files.len(), shown(&chart))
        };
        let source = if chart.join("Chart.yaml").is_file() {
            shown(&chart)
        } else {
            "<chart>".to_string()
        };
        notes.push(format!(
            "gpulint: note: skipped {what}: templates are not YAML until rendered; lint the output instead: `helm template {source} | gpulint check -`"
        ));
    }
    for (dir, files) in overlays {
        notes.push(format!(
            "gpulint: note: skipped the kustomize overlay in {} ({}): patches are partial manifests; lint the built output instead: `kubectl kustomize {} | gpulint check -`",
            shown(&dir),
            plural(files, "file"),
            shown(&dir)
        ));
    }
    notes
}

/// The chart a template belongs to: the nearest directory above it with a
/// `Chart.yaml`, else its own directory.
fn chart_root(template: &Path) -> PathBuf {
    let dir = template.parent().unwrap_or(Path::new("."));
    dir.ancestors()
        .find(|d| d.join("Chart.yaml").is_file())
        .unwrap_or(dir)
        .to_path_buf()
}
