//! What `gpulint check` prints: the report in each format, the summary
//! line, `--statistics`, and the notes on skipped templates and overlays.

use super::plural;
use crate::diagnostic::Diagnostic;
use crate::engine::fix::FixMode;
use crate::engine::{FileReport, Skip};
use crate::fix::Applicability;
use crate::output::escape::human;
use crate::output::{OutputFormat, Summary, github, text};
use crate::rules::RuleCode;
use std::path::{Path, PathBuf};

/// What `check` does with fixes (the summary says it in its words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FixAction {
    Report,
    Apply,
    Diff,
}

/// What a `check` run found and fixed, to render in any format.
pub(super) struct Outcome<'a> {
    /// The report of standard input when `--fix` prints its fixed text;
    /// empty otherwise (every report is written as its file is done).
    pub reports: &'a [FileReport],
    pub totals: &'a Totals,
    pub action: FixAction,
    pub mode: FixMode,
    /// What fixing did (zero with plain checking).
    pub fixing: &'a FixTally,
    /// Paths that were never linted (not found, bad configuration).
    pub unchecked: usize,
    pub quiet: bool,
    pub statistics: bool,
}

/// What the summary line, `--statistics` and the skip notes need of every
/// report, counted as each file is emitted so that the report itself (its
/// text and findings) can be dropped then.
#[derive(Debug, Default)]
pub(super) struct Totals {
    pub summary: Summary,
    /// The findings by what could fix them without `--unsafe-fixes`, as the
    /// summary line counts them.
    safe_left: Left,
    /// Per rule: findings, and whether one has a fix this run applies.
    by_code: std::collections::BTreeMap<RuleCode, (usize, bool)>,
    /// The templates and patches passed over, for [`skip_notes`].
    skipped: Vec<(PathBuf, Skip)>,
}

impl Totals {
    pub fn add(&mut self, report: &FileReport, mode: FixMode) {
        self.summary.add(report);
        let safe_only = FixMode {
            unsafe_fixes: false,
        };
        self.safe_left.add(Left::of(&report.diagnostics, safe_only));
        for d in &report.diagnostics {
            let entry = self.by_code.entry(d.code).or_default();
            entry.0 += 1;
            entry.1 |= d.fix.as_ref().is_some_and(|f| mode.applies(f));
        }
        if let Some(skip) = &report.skipped {
            self.skipped.push((report.path.clone(), skip.clone()));
        }
    }

    /// One note per Helm chart and per kustomize overlay passed over.
    pub(crate) fn skip_notes(&self) -> Vec<String> {
        skip_notes(self.skipped.iter().map(|(path, skip)| (path, skip)))
    }
}

/// The formats written file by file as each is done, in path order: their
/// output has no header that counts what follows.
#[derive(Debug, Clone, Copy)]
pub(super) enum Streamed {
    /// Each finding in full (`--quiet`: one line each).
    Text {
        style: text::Style,
        quiet: bool,
    },
    Concise,
    Github,
}

impl Streamed {
    /// The way `format` streams, if it does; `--statistics` prints a table
    /// of counts instead of findings.
    pub fn of(
        format: OutputFormat,
        style: text::Style,
        quiet: bool,
        statistics: bool,
    ) -> Option<Streamed> {
        match format {
            OutputFormat::Text if statistics => None,
            OutputFormat::Text => Some(Streamed::Text { style, quiet }),
            OutputFormat::Concise => Some(Streamed::Concise),
            OutputFormat::Github => Some(Streamed::Github),
            OutputFormat::Json
            | OutputFormat::Sarif
            | OutputFormat::Gitlab
            | OutputFormat::Junit => None,
        }
    }

    /// One file's part of the output.
    pub fn render(self, report: &FileReport) -> String {
        let mut out = String::new();
        match self {
            Streamed::Text { style, quiet } => {
                for d in &report.diagnostics {
                    if quiet {
                        out.push_str(&text::concise(report, d));
                    } else {
                        out.push_str(&text::render(report, d, style));
                    }
                    out.push('\n');
                }
            }
            Streamed::Concise => {
                for d in &report.diagnostics {
                    out.push_str(&text::concise(report, d));
                    out.push('\n');
                }
            }
            Streamed::Github => out = github::render(std::slice::from_ref(report)),
        }
        out
    }
}

/// What `--fix` or `--diff` did across the run.
#[derive(Debug, Default)]
pub(super) struct FixTally {
    /// Fixes applied: written with `--fix`, in the patch with `--diff`.
    pub applied: usize,
    /// The files they change.
    pub files: usize,
    /// Fixes that failed verification (each with a warning on stderr).
    pub failed: usize,
    /// Fixes still to apply when the loop stopped after its last pass.
    pub unsettled: usize,
    /// Files whose fixes could not be written (each with an error).
    pub unwritten_files: usize,
    /// Those files' fixes, which were verified but not written.
    pub unwritten: usize,
    /// What is left after the fixes, by what could fix it.
    pub left: Left,
}

/// Findings by what could fix them, under a [`FixMode`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Left {
    /// A fix the mode applies: safe, or unsafe with `--unsafe-fixes`.
    pub fixable: usize,
    /// An unsafe fix, without `--unsafe-fixes`.
    pub needs_unsafe: usize,
    /// A display-only fix: a suggestion to apply by hand.
    pub by_hand: usize,
    /// No fix at all.
    pub no_fix: usize,
}

impl Left {
    pub fn of<'d>(diagnostics: impl IntoIterator<Item = &'d Diagnostic>, mode: FixMode) -> Left {
        let mut left = Left::default();
        for d in diagnostics {
            match &d.fix {
                Some(f) if mode.applies(f) => left.fixable += 1,
                Some(f) if f.applicability == Applicability::Unsafe => left.needs_unsafe += 1,
                Some(_) => left.by_hand += 1,
                None => left.no_fix += 1,
            }
        }
        left
    }

    fn add(&mut self, other: Left) {
        self.fixable += other.fixable;
        self.needs_unsafe += other.needs_unsafe;
        self.by_hand += other.by_hand;
        self.no_fix += other.no_fix;
    }
}

impl FixTally {
    /// Adds what fixing one file did; `remaining` are its findings after.
    pub(crate) fn add_file<'d>(
        &mut self,
        outcome: &crate::engine::fix::FixOutcome,
        changed: bool,
        remaining: impl IntoIterator<Item = &'d Diagnostic>,
        mode: FixMode,
    ) {
        self.applied += outcome.applied.len();
        self.files += usize::from(changed);
        self.failed += outcome.failed.len();
        self.unsettled += outcome.unsettled;
        self.left.add(Left::of(remaining, mode));
    }

    /// Fixes that were not applied though `--fix` was meant to apply them.
    fn not_applied(&self) -> usize {
        self.failed + self.unsettled
    }
}

impl Outcome<'_> {
    /// The end of a report in `format` that was written file by file: the
    /// text footer, or the `--statistics` table and the footer; nothing for
    /// concise and github output, or for a whole-run format, whose document
    /// writes itself ([`crate::output::document`]).
    pub fn tail(&self, format: OutputFormat, style: text::Style) -> String {
        if Streamed::of(format, style, self.quiet, self.statistics).is_some() {
            return match format {
                OutputFormat::Text => self.footer(),
                _ => String::new(),
            };
        }
        match format {
            OutputFormat::Json
            | OutputFormat::Sarif
            | OutputFormat::Gitlab
            | OutputFormat::Junit => String::new(),
            OutputFormat::Text | OutputFormat::Concise | OutputFormat::Github => {
                // Only `--statistics` is not streamed.
                let mut out = statistics(&self.totals.by_code);
                out.push_str(&self.footer());
                out
            }
        }
    }

    /// What fixing did and the summary line; nothing with `--quiet`.
    pub fn footer(&self) -> String {
        let mut out = String::new();
        if self.quiet {
            return out;
        }
        // `--statistics` is a table of findings; it has never said what was fixed.
        if self.action == FixAction::Apply && !self.statistics {
            out.push_str(&applied_line(self.fixing));
            out.push('\n');
        }
        out.push_str(&summary_line(
            self.totals,
            self.mode,
            self.unchecked,
            self.fixing,
        ));
        out.push('\n');
        out
    }
}

/// "1 fix", "2 fixes".
fn fixes(n: usize) -> String {
    format!("{n} {}", if n == 1 { "fix" } else { "fixes" })
}

/// `--fix`'s first line: what was written, and what `--fix` meant to apply
/// but could not.
fn applied_line(t: &FixTally) -> String {
    let mut line = format!(
        "Fixed {} in {}.",
        plural(t.applied, "finding"),
        plural(t.files, "file")
    );
    if t.not_applied() > 0 {
        line.push_str(&format!(
            " {} could not be applied (see the warnings above).",
            fixes(t.not_applied())
        ));
    }
    line
}

/// `--diff`'s line on stderr: what the patch fixes, then what it leaves
/// and why (ruff's "Would fix ...", its hidden fixes counted).
pub(super) fn diff_line(t: &FixTally, mode: FixMode) -> String {
    let mut line = if t.applied > 0 {
        format!(
            "Would fix {} in {}",
            plural(t.applied, "finding"),
            plural(t.files, "file")
        )
    } else {
        "No fixes to apply".to_string()
    };
    let left = t.left;
    let mut parts = Vec::new();
    if left.needs_unsafe > 0 && !mode.unsafe_fixes {
        parts.push((left.needs_unsafe, "fixable with `--unsafe-fixes`"));
    }
    if left.by_hand > 0 {
        parts.push((left.by_hand, "with a suggested fix to apply by hand"));
    }
    if left.no_fix > 0 {
        parts.push((left.no_fix, "without a fix"));
    }
    if let Some(((first, what), rest)) = parts.split_first() {
        // "4 more findings fixable with ..., 1 without a fix".
        let more = if t.applied > 0 { "more " } else { "" };
        let first = format!(
            "{first} {more}{} {what}",
            if *first == 1 { "finding" } else { "findings" }
        );
        let rest: Vec<String> = rest.iter().map(|(n, what)| format!("{n} {what}")).collect();
        line.push_str(&format!(" ({})", [vec![first], rest].concat().join(", ")));
    }
    line.push('.');
    if t.not_applied() > 0 {
        line.push_str(&format!(
            " {} could not be applied (see the warnings above).",
            fixes(t.not_applied())
        ));
    }
    line
}

/// `--statistics`: one line per rule code, most findings first, as
/// `COUNT  CODE  [*] summary` (`[*]`: some have a fix this run's `--fix`
/// applies, as the summary line counts them; not display-only ones, nor
/// unsafe ones without `--unsafe-fixes`).
fn statistics(counts: &std::collections::BTreeMap<RuleCode, (usize, bool)>) -> String {
    let mut rows: Vec<(RuleCode, usize, bool)> = counts
        .iter()
        .map(|(&code, &(n, fixable))| (code, n, fixable))
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

/// `unchecked`: paths that were never linted, besides `s.failed_files`;
/// the files `fixing` could not write are among `s.failed_files` but were
/// checked.
fn summary_line(totals: &Totals, mode: FixMode, unchecked: usize, fixing: &FixTally) -> String {
    let s = &totals.summary;
    let not_linted = s.failed_files - fixing.unwritten_files;
    let failed = not_linted + unchecked;
    let mut line = if s.findings() == 0 && failed == 0 && fixing.unwritten_files == 0 {
        format!("All checks passed ({} checked).", plural(s.files, "file"))
    } else if s.findings() == 0 {
        // Not "all passed": some files were never checked or written.
        format!(
            "No problems found in {}.",
            plural(s.files - not_linted, "file")
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
    // Safe fixes as `fixable`, unsafe ones as `needs_unsafe`.
    let left = totals.safe_left;
    let (safe, unsafe_) = (left.fixable, left.needs_unsafe);
    if unsafe_ > 0 && (safe == 0 || mode.unsafe_fixes) {
        line.push_str(&format!(
            " {} fixable with `--fix --unsafe-fixes`.",
            safe + unsafe_
        ));
    } else if unsafe_ > 0 {
        line.push_str(&format!(
            " {safe} fixable with `--fix` ({unsafe_} more with `--unsafe-fixes`)."
        ));
    } else if safe > 0 {
        line.push_str(&format!(" {safe} fixable with `--fix`."));
    }
    if left.by_hand > 0 {
        line.push_str(&format!(
            " {} a suggested fix to apply by hand.",
            if left.by_hand == 1 {
                "1 has".to_string()
            } else {
                format!("{} have", left.by_hand)
            }
        ));
    }
    if fixing.unwritten_files > 0 {
        line.push_str(&format!(
            " {} could not be written, so {} not applied (see errors above).",
            plural(fixing.unwritten_files, "file"),
            if fixing.unwritten == 1 {
                "its fix was".to_string()
            } else {
                format!("their {} fixes were", fixing.unwritten)
            }
        ));
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
fn skip_notes<'a>(skipped: impl Iterator<Item = (&'a PathBuf, &'a Skip)>) -> Vec<String> {
    use std::collections::BTreeMap;
    let mut charts: BTreeMap<PathBuf, Vec<&PathBuf>> = BTreeMap::new();
    let mut overlays: BTreeMap<PathBuf, (usize, Option<&String>)> = BTreeMap::new();
    for (path, skip) in skipped {
        match skip {
            Skip::HelmTemplate { .. } => charts.entry(chart_root(path)).or_default().push(path),
            Skip::Kustomize { kustomization, why } => {
                let dir = kustomization
                    .parent()
                    .unwrap_or(Path::new("."))
                    .to_path_buf();
                let overlay = overlays.entry(dir).or_default();
                overlay.0 += 1;
                overlay.1 = overlay.1.or(why.as_ref());
            }
        }
    }
    let shown = |p: &Path| {
        let s = crate::output::escape::human_path(p);
        if s.is_empty() { ".".to_string() } else { s }
    };
    let mut notes = Vec::new();
    for (chart, files) in charts {
        let in_chart = chart.join("Chart.yaml").is_file();
        let kind = if in_chart {
            "Helm template"
        } else {
            "Go template"
        };
        let what = if files.len() == 1 {
            format!("the {kind} {}", shown(files[0]))
        } else {
            format!("{} {kind}s in {}", files.len(), shown(&chart))
        };
        notes.push(if in_chart {
            format!(
                "gpulint: note: skipped {what}: templates are not YAML until rendered; lint the output instead: `helm template {} | gpulint check -`",
                shown(&chart)
            )
        } else {
            // An operator's or a script's template (`{{ .Namespace }}`):
            // no chart renders it, so `helm template` is no advice.
            format!(
                "gpulint: note: skipped {what}: `{{{{ ... }}}}` makes it a template, not YAML, and no Chart.yaml is above it, so whatever renders it (an operator, a script) decides the manifest; lint what that renders: `RENDER | gpulint check -`"
            )
        });
    }
    for (dir, (files, why)) in overlays {
        let because = match why {
            Some(why) => format!("gpulint cannot build it ({})", human(why)),
            None => "no kustomization of this run builds its patches".to_string(),
        };
        notes.push(format!(
            "gpulint: note: skipped the kustomize overlay in {} ({}): {because}, and patches alone are partial manifests; lint the built output instead: `kubectl kustomize {} | gpulint check -`",
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

#[cfg(test)]
mod tests {
    use super::*;

    const SAFE: FixMode = FixMode {
        unsafe_fixes: false,
    };

    #[test]
    fn fixes_that_were_not_applied_are_counted_in_both_fix_lines() {
        let tally = FixTally {
            applied: 3,
            files: 1,
            failed: 1,
            unsettled: 1,
            ..FixTally::default()
        };
        assert_eq!(
            applied_line(&tally),
            "Fixed 3 findings in 1 file. 2 fixes could not be applied (see the warnings above)."
        );
        assert_eq!(
            diff_line(&tally, SAFE),
            "Would fix 3 findings in 1 file. 2 fixes could not be applied (see the warnings above)."
        );
        let one = FixTally {
            failed: 1,
            left: Left {
                no_fix: 1,
                ..Left::default()
            },
            ..FixTally::default()
        };
        assert_eq!(
            diff_line(&one, SAFE),
            "No fixes to apply (1 finding without a fix). 1 fix could not be applied (see the warnings above)."
        );
    }
}
