//! A Compose-backed dev container's findings, reported on the
//! `devcontainer.json` a user opens: its compose project's findings as the
//! Dev Container CLI starts it (only `runServices`, `service` and what
//! they depend on; the GPUs `hostRequirements.gpu` adds), each placed on
//! the `service` the configuration names, with the compose file's place
//! beside it.

use super::config::Config;
use super::session::{Session, lint_project};
use crate::diagnostic::{Diagnostic, Label};
use crate::model::devcontainer::DevContainer;
use crate::project::discover::{Discovery, ProjectSpec, dir_of};
use crate::text::{SourceFile, TextRange};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The compose project a dev container at `path` names, as the Dev
/// Container CLI gives it to Compose (`docker compose -f ...`): its files
/// relative to the `devcontainer.json`, run from the first one's folder.
pub(crate) fn devcontainer_project(dev: &DevContainer, path: &Path) -> Option<ProjectSpec> {
    let compose = dev.compose.as_ref().filter(|c| !c.files.is_empty())?;
    let dir = dir_of(path);
    let files: Vec<PathBuf> = compose
        .files
        .iter()
        .map(|(file, _)| crate::vfs::normalize(&dir.join(file)))
        .collect();
    Some(ProjectSpec {
        run_dir: dir_of(&files[0]),
        files,
        how: Discovery::Configured,
    })
}

/// The findings of the dev container's compose project, as it starts it,
/// each placed on `devcontainer.json` (`service`, else the first
/// `dockerComposeFile` entry). Each compose file's suppression comments
/// and configuration apply first; the fixes are left to the compose file.
pub(crate) fn compose_findings(
    session: &Session,
    dev: &DevContainer,
    path: &Path,
    config: &Config,
) -> Vec<Diagnostic> {
    let Some(compose) = &dev.compose else {
        return Vec::new();
    };
    let Some(spec) = devcontainer_project(dev, path) else {
        return Vec::new();
    };
    let Some(at) = compose
        .service
        .as_ref()
        .or(compose.files.first())
        .map(|(_, range)| *range)
    else {
        return Vec::new();
    };
    let project = session.workspace().project(&spec);
    let started = project.with_services(dev.started_services(&project.services));
    let mut by_file: BTreeMap<PathBuf, (Arc<SourceFile>, Vec<Diagnostic>)> = BTreeMap::new();
    for mut d in lint_project(&started, config) {
        let Some(file) = d.file.take() else { continue };
        by_file
            .entry(file.path.clone())
            .or_insert_with(|| (file.clone(), Vec::new()))
            .1
            .push(d);
    }
    let mut found = Vec::new();
    for (source, mut diagnostics) in by_file.into_values() {
        // A compose file the run checks itself reports its own findings:
        // only what the dev container's view adds or changes is repeated.
        if session.checks_itself(&source.path) {
            let own = own_findings(session, &source.path, config);
            diagnostics.retain(|d| !own.contains(&(d.code, d.range, d.severity)));
        }
        for d in session.finish_elsewhere(&source, diagnostics, config) {
            found.push(mirrored(d, &source, at));
        }
    }
    found
}

/// What the compose file at `path` reports when it is checked itself (in
/// every project it is judged in), by rule, span and severity.
fn own_findings(
    session: &Session,
    path: &Path,
    config: &Config,
) -> foldhash::HashSet<(
    crate::codes::RuleCode,
    TextRange,
    crate::diagnostic::Severity,
)> {
    let mut own = foldhash::HashSet::default();
    session.for_each_finding_in(path, config, |d| {
        own.insert((d.code, d.range, d.severity));
    });
    own
}

/// A compose file's finding `d` as the dev container reports it: at `at`,
/// with the compose file's span first among its labels.
fn mirrored(d: Diagnostic, source: &Arc<SourceFile>, at: TextRange) -> Diagnostic {
    let name = source
        .path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut related = vec![Label {
        range: d.range,
        message: d.label.clone().map_or_else(
            || format!("where {name} decides it"),
            |label| label.to_string(),
        ),
        file: Some(source.clone()),
    }];
    related.extend(d.related.into_iter().map(|label| Label {
        file: label.file.or_else(|| Some(source.clone())),
        ..label
    }));
    let fixable = d.fix.is_some();
    Diagnostic {
        message: format!("{} (in {name}, which this dev container starts)", d.message),
        range: at,
        file: None,
        label: Some(format!("the Dev Container CLI starts this service from {name}").into()),
        help: d.help.map(|help| {
            if fixable {
                format!("{help}, in {name} (`--fix` applies it when {name} is checked)").into()
            } else {
                format!("{help}, in {name}").into()
            }
        }),
        related,
        fix: None,
        ..d
    }
}
