//! Output formats. Each turns file reports into text; none knows about rules.

pub mod json;
pub mod text;

use crate::engine::FileReport;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Findings with a code frame, for people.
    Text,
    /// One line per finding: `path:line:col: severity[CODE] message`.
    Concise,
    /// A stable JSON document (schema version 1, see README).
    Json,
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
            if r.skipped.is_some() {
                s.skipped_files += 1;
                continue;
            }
            s.files += 1;
            if r.error.is_some() {
                s.failed_files += 1;
            }
            if !r.diagnostics.is_empty() {
                s.files_with_findings += 1;
            }
            for d in &r.diagnostics {
                match d.severity {
                    crate::diagnostic::Severity::Error => s.errors += 1,
                    crate::diagnostic::Severity::Warning => s.warnings += 1,
                    crate::diagnostic::Severity::Info => s.infos += 1,
                }
            }
        }
        s
    }

    pub fn findings(&self) -> usize {
        self.errors + self.warnings + self.infos
    }
}
