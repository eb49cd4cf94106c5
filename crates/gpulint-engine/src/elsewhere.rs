//! Findings gathered for files other than the one being linted: what a
//! compose project's lint finds in a file it extends, or a kustomize build
//! in the base or patch it reads. Several lints reach the same file, so a
//! finding is kept once however many of them report it.

use crate::codes::RuleCode;
use crate::diagnostic::Diagnostic;
use crate::text::SourceFile;
use crate::vfs::normalize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What makes two findings one: the file, the rule, the place and the words.
type Identity = (PathBuf, RuleCode, u32, u32, String);

/// Findings by file (normalized path), each finding once, in path order.
#[derive(Default)]
pub struct FindingsElsewhere {
    by_file: BTreeMap<PathBuf, (Arc<SourceFile>, Vec<Diagnostic>)>,
    seen: foldhash::HashSet<Identity>,
}

impl FindingsElsewhere {
    /// Adds `d`, found in `source`, unless it was added before.
    pub fn add(&mut self, source: &Arc<SourceFile>, d: Diagnostic) {
        let key = normalize(&source.path);
        let identity = (
            key.clone(),
            d.code,
            d.range.start,
            d.range.end,
            d.message.clone(),
        );
        if self.seen.insert(identity) {
            self.by_file
                .entry(key)
                .or_insert_with(|| (source.clone(), Vec::new()))
                .1
                .push(d);
        }
    }

    /// Adds every finding of `other`.
    pub fn merge(&mut self, other: FindingsElsewhere) {
        for (_, (source, diagnostics)) in other.by_file {
            for d in diagnostics {
                self.add(&source, d);
            }
        }
    }

    /// The file read at `path` and what was found in it, if anything was.
    pub fn get(&self, path: &Path) -> Option<&(Arc<SourceFile>, Vec<Diagnostic>)> {
        if self.by_file.is_empty() {
            return None;
        }
        self.by_file.get(&normalize(path))
    }

    /// Whether a finding was gathered in `path`.
    pub fn concerns(&self, path: &Path) -> bool {
        self.get(path).is_some()
    }

    /// Every file with findings, by normalized path, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&PathBuf, &(Arc<SourceFile>, Vec<Diagnostic>))> {
        self.by_file.iter()
    }

    /// Every file with findings, by normalized path, in path order.
    pub fn into_files(self) -> impl Iterator<Item = (PathBuf, (Arc<SourceFile>, Vec<Diagnostic>))> {
        self.by_file.into_iter()
    }
}

/// The findings of `found` that `own` (a file's own lint) lacks: a finding
/// of the same rule at the same place is one finding, whoever words it.
pub fn beyond_own(own: &[Diagnostic], found: &[Diagnostic]) -> Vec<Diagnostic> {
    found
        .iter()
        .filter(|d| !own.iter().any(|o| o.code == d.code && o.range == d.range))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;
    use crate::text::TextRange;

    fn finding(code: RuleCode, start: usize, message: &str) -> Diagnostic {
        Diagnostic {
            code,
            severity: Severity::Warning,
            message: message.to_string(),
            range: TextRange::new(start, start + 1),
            file: None,
            label: None,
            note: None,
            help: None,
            related: Vec::new(),
            fix: None,
        }
    }

    fn source(path: &str) -> Arc<SourceFile> {
        Arc::new(SourceFile::new(PathBuf::from(path), "x: 1\n".to_string()))
    }

    #[test]
    fn a_finding_two_lints_report_is_kept_once_under_its_normalized_path() {
        let mut found = FindingsElsewhere::default();
        found.add(&source("a/../base.yaml"), finding(RuleCode::SHM001, 0, "m"));
        found.add(&source("base.yaml"), finding(RuleCode::SHM001, 0, "m"));
        found.add(
            &source("base.yaml"),
            finding(RuleCode::SHM001, 0, "other words"),
        );
        let files: Vec<_> = found.iter().collect();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, Path::new("base.yaml"));
        assert_eq!(files[0].1.1.len(), 2);
        assert!(found.concerns(Path::new("./base.yaml")));
        assert!(!found.concerns(Path::new("other.yaml")));
    }

    #[test]
    fn beyond_own_drops_what_the_file_reports_itself_at_the_same_place() {
        let own = [finding(RuleCode::SHM001, 0, "own words")];
        let found = [
            finding(RuleCode::SHM001, 0, "build words"),
            finding(RuleCode::SHM001, 3, "m"),
            finding(RuleCode::SHM002, 0, "m"),
        ];
        let beyond = beyond_own(&own, &found);
        assert_eq!(beyond.len(), 2);
        assert!(
            beyond
                .iter()
                .all(|d| d.code != RuleCode::SHM001 || d.range.start == 3)
        );
    }
}
