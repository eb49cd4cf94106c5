//! Which format a run writes, and the counts every format reports.

use crate::engine::FileReport;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    /// Findings with a code frame, for people.
    Text,
    /// One line per finding: `path:line:col: severity[CODE] message`.
    Concise,
    /// A stable JSON document (schema version 1, see README).
    Json,
    /// GitHub Actions workflow commands: annotations on the pull request.
    Github,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// GitLab Code Quality JSON, with fingerprints that survive line moves.
    Gitlab,
    /// JUnit XML: a test suite per file, a failing test case per finding.
    Junit,
}

impl OutputFormat {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Text => "text",
            OutputFormat::Concise => "concise",
            OutputFormat::Json => "json",
            OutputFormat::Github => "github",
            OutputFormat::Sarif => "sarif",
            OutputFormat::Gitlab => "gitlab",
            OutputFormat::Junit => "junit",
        }
    }

    pub fn parse(name: &str) -> Option<OutputFormat> {
        use clap::ValueEnum;
        OutputFormat::value_variants()
            .iter()
            .copied()
            .find(|f| f.name() == name)
    }
}

/// Totals over a run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Summary {
    pub files: usize,
    pub files_with_findings: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub failed_files: usize,
    /// Templates and kustomize patches passed over (not in `files`).
    pub skipped_files: usize,
}

impl Summary {
    pub fn of(reports: &[FileReport]) -> Summary {
        let mut s = Summary::default();
        for r in reports {
            s.add(r);
        }
        s
    }

    /// Counts one more file's report.
    pub fn add(&mut self, r: &FileReport) {
        if r.skipped.is_some() {
            self.skipped_files += 1;
            return;
        }
        self.files += 1;
        if r.error.is_some() {
            self.failed_files += 1;
        }
        if !r.diagnostics.is_empty() {
            self.files_with_findings += 1;
        }
        for d in &r.diagnostics {
            match d.severity {
                crate::diagnostic::Severity::Error => self.errors += 1,
                crate::diagnostic::Severity::Warning => self.warnings += 1,
                crate::diagnostic::Severity::Info => self.infos += 1,
            }
        }
    }

    pub fn findings(&self) -> usize {
        self.errors + self.warnings + self.infos
    }
}
