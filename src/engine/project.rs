//! Finding the other files of a compose project and reading them: the
//! default override file Compose loads next to the base file, or a set
//! named in `gpulint.toml` (`[compose] projects`).

use super::build;
use super::config::Config;
use super::session::Session;
use super::system::System;
use crate::model::compose::ComposeFile;
use crate::model::project::{Layer, merge};
use crate::syntax::yaml::Yaml;
use crate::text::SourceFile;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The base files Compose looks for, in its order of preference.
const BASE_FILES: &[&str] = &[
    "compose.yaml",
    "compose.yml",
    "docker-compose.yaml",
    "docker-compose.yml",
];
/// The override files it merges over the base, in its order of preference.
const OVERRIDE_FILES: &[&str] = &[
    "compose.override.yaml",
    "compose.override.yml",
    "docker-compose.override.yaml",
    "docker-compose.override.yml",
];

/// The files of the project `path` belongs to, in merge order, and its
/// position among them; `None` when it is linted alone.
pub fn project_files(
    system: &dyn System,
    path: &Path,
    config: &Config,
) -> Option<(Vec<PathBuf>, usize)> {
    if !config.compose_projects.is_empty() {
        let canonical = system.canonicalize(path)?;
        if let Some(found) = configured_project(path, &canonical, config) {
            return Some(found);
        }
    }
    // A path that does not exist cannot be its own base or override below.
    let name = path.file_name()?.to_str()?;
    let first_existing = |names: &[&str]| {
        names
            .iter()
            .map(|n| path.with_file_name(n))
            .find(|p| system.is_file(p))
    };
    if BASE_FILES.contains(&name) {
        // Compose uses the first base file it finds; another one is not its base.
        let base = first_existing(BASE_FILES)?;
        if base.file_name() != path.file_name() {
            return None;
        }
        return Some((vec![path.to_path_buf(), first_existing(OVERRIDE_FILES)?], 0));
    }
    if OVERRIDE_FILES.contains(&name) {
        let chosen = first_existing(OVERRIDE_FILES)?;
        if chosen.file_name() != path.file_name() {
            return None;
        }
        return Some((vec![first_existing(BASE_FILES)?, path.to_path_buf()], 1));
    }
    None
}

/// The project `config` names that holds `path` (`canonical`), if any.
fn configured_project(
    path: &Path,
    canonical: &Path,
    config: &Config,
) -> Option<(Vec<PathBuf>, usize)> {
    for set in &config.compose_projects {
        // The set's paths are canonical (see `Config::compose_projects`).
        if let Some(here) = set.iter().position(|f| f == canonical) {
            // Shown next to the linted file when they share a directory.
            let shown = set
                .iter()
                .map(|f| match (f.parent(), f.file_name()) {
                    (Some(dir), Some(name)) if Some(dir) == canonical.parent() => {
                        path.with_file_name(name)
                    }
                    _ => f.clone(),
                })
                .collect();
            return Some((shown, here));
        }
    }
    None
}

/// Merges what the project's other files say about `file`'s services.
/// Other files that cannot be read or parsed are left out.
pub fn merge_project(session: &Session, file: &mut ComposeFile, path: &Path, config: &Config) {
    let Some((files, here)) = project_files(session.system(), path, config) else {
        return;
    };
    let sources: Vec<(usize, Arc<SourceFile>, Yaml)> = files
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != here)
        .filter_map(|(i, f)| {
            let (text, _) = session.system().read(f).ok()?;
            let yaml = Yaml::parse(&text).ok()?;
            Some((i, Arc::new(SourceFile::new(f.clone(), text)), yaml))
        })
        .collect();
    let parsed: Vec<(usize, Arc<SourceFile>, ComposeFile)> = sources
        .iter()
        .filter_map(|(i, source, yaml)| {
            let root = yaml.documents.first()?.root?;
            let mut other = ComposeFile::from_document(yaml, root)?;
            build::attach_built_images(session, &mut other, &source.path);
            Some((*i, source.clone(), other))
        })
        .collect();
    let layers: Vec<(usize, Layer)> = parsed
        .iter()
        .map(|(i, source, other)| {
            (
                *i,
                Layer {
                    source: source.clone(),
                    file: other,
                },
            )
        })
        .collect();
    merge(file, here, &layers);
}
