//! The run's kustomize overlays: every kustomization among the files to
//! check is built and its build linted before the files are checked, and
//! what a build finds is reported with the file that writes it. Patches,
//! partial manifests, are checked only through the builds that read them.

use super::{Checked, Emitter, Plan};
use crate::engine::config::Config;
use crate::engine::discover::Target;
use crate::engine::{FileReport, FindingsElsewhere, Skip, beyond_own};
use crate::project::kustomize::is_kustomization_name;
use crate::vfs::normalize;
use foldhash::{HashMap, HashSet};
use rayon::prelude::*;
use std::path::PathBuf;

#[derive(Default)]
pub(super) struct Overlays {
    /// What the builds found, by file, each finding once however many
    /// builds share the file.
    found: FindingsElsewhere,
    /// Every file a build read: a patch among them was checked by it.
    read: HashSet<PathBuf>,
    /// The kustomizations that could not be built, and why.
    pub(super) failed: HashMap<PathBuf, String>,
}

impl Overlays {
    /// Builds every kustomization among `targets`, and the kustomization
    /// of every patch among them (pre-commit passes a changed patch alone).
    pub(super) fn build(plan: &Plan, targets: &[Target]) -> Overlays {
        let mut kustomizations: Vec<(PathBuf, bool)> = targets
            .iter()
            .filter(|t| is_kustomization_name(&t.path))
            .map(|t| (t.path.clone(), true))
            .collect();
        let walked: HashSet<PathBuf> = kustomizations.iter().map(|(k, _)| normalize(k)).collect();
        let mut named: Vec<PathBuf> = targets
            .iter()
            .filter_map(|t| match &t.skip {
                Some(Skip::Kustomize { kustomization, .. }) => Some(kustomization.clone()),
                _ => None,
            })
            .filter(|k| !walked.contains(&normalize(k)))
            .collect();
        named.sort();
        named.dedup();
        kustomizations.extend(named.into_iter().map(|k| (k, false)));
        let built: Vec<_> = kustomizations
            .par_iter()
            .filter_map(|(path, walked)| {
                let config = plan.resolver.for_file(path).ok()?;
                Some((path, *walked, plan.session.lint_overlay(path, &config)))
            })
            .collect();
        let mut overlays = Overlays::default();
        let checked: HashSet<PathBuf> = targets.iter().map(|t| normalize(&t.path)).collect();
        for (kustomization, walked, result) in built {
            let lint = match result {
                Ok(lint) => lint,
                Err(e) => {
                    overlays.failed.insert(normalize(kustomization), e.message);
                    continue;
                }
            };
            overlays
                .read
                .extend(lint.files.iter().map(|f| normalize(&f.path)));
            for (source, diagnostics) in lint.findings {
                // A build only a patch of the run asked for reports in the
                // run's files, not in its base's.
                if !walked && !checked.contains(&normalize(&source.path)) {
                    continue;
                }
                for d in diagnostics {
                    overlays.found.add(&source, d);
                }
            }
        }
        overlays
    }

    /// A patch, or a kustomization with patches, that a build read: its
    /// report is what the builds found in it.
    pub(super) fn check_patch(&self, t: &Target, plan: &Plan) -> Result<Option<Checked>, String> {
        let key = normalize(&t.path);
        if !self.read.contains(&key) {
            return Ok(None);
        }
        let config = plan.resolver.for_file(&t.path).map_err(|e| e.to_string())?;
        let (text, diagnostics) = match self.found.get(&key) {
            Some((source, found)) => {
                let diagnostics = plan
                    .session
                    .finish_elsewhere(source, found.clone(), &config);
                // A report with no findings needs no text to show them in.
                let text = if diagnostics.is_empty() {
                    String::new()
                } else {
                    source.text.clone()
                };
                (text, diagnostics)
            }
            None => (String::new(), Vec::new()),
        };
        Ok(Some(Checked {
            report: FileReport::new(t.path.clone(), text, diagnostics),
            fixing: None,
        }))
    }

    /// A file checked on its own, with what the builds found in it beyond
    /// that: a finding of the same rule at the same place is one finding.
    pub(super) fn add_to(&self, mut checked: Checked, plan: &Plan, config: &Config) -> Checked {
        let Some((source, found)) = self.found.get(&checked.report.path) else {
            return checked;
        };
        let report = &checked.report;
        // A file that does not read as the builds read it (fixed since, or
        // not lintable) keeps its own report.
        let same_text = report.text.is_empty() || report.text == source.text;
        let unfixed = checked
            .fixing
            .as_ref()
            .is_none_or(|f| f.original == source.text);
        if report.error.is_some() || !same_text || !unfixed {
            return checked;
        }
        let beyond = beyond_own(&report.diagnostics, found);
        let beyond = plan.session.finish_elsewhere(source, beyond, config);
        if beyond.is_empty() {
            return checked;
        }
        let mut diagnostics = std::mem::take(&mut checked.report.diagnostics);
        diagnostics.extend(beyond);
        diagnostics.sort_by_key(|d| (d.range.start, d.range.end));
        checked.report = FileReport::new(
            std::mem::take(&mut checked.report.path),
            source.text.clone(),
            diagnostics,
        );
        checked
    }

    /// What the builds found in files that are not among the run's: a base
    /// outside the paths given. Reported after the others, in path order.
    pub(super) fn emit_elsewhere(&self, plan: &Plan, targets: &[Target], emitter: &mut Emitter) {
        let checked: HashSet<PathBuf> = targets.iter().map(|t| normalize(&t.path)).collect();
        let elsewhere = self
            .found
            .iter()
            .filter(|(path, _)| !checked.contains(*path));
        for (path, (source, found)) in elsewhere {
            let config = match plan.resolver.for_file(&source.path) {
                Ok(config) => config,
                Err(e) => {
                    emitter.problem(format!("gpulint: error: {e}"));
                    continue;
                }
            };
            let diagnostics = plan
                .session
                .finish_elsewhere(source, found.clone(), &config);
            if diagnostics.is_empty() {
                continue;
            }
            emitter.file(Checked {
                report: FileReport::new(path.clone(), source.text.clone(), diagnostics),
                fixing: None,
            });
        }
    }
}
