//! Finding the files to lint: explicit paths always, directories walked in
//! parallel with `.gitignore` honoured, compose files recognised by name.

use super::config::{Config, ConfigError, find_config};
use super::{Skip, kustomize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Compose file names: `compose.yaml`, `docker-compose.gpu.yml`,
/// `compose.cuda.yaml`, `fleet-compose.yml`, `app.compose.yaml`, ...
pub fn is_compose_file_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let Some(stem) = lower
        .strip_suffix(".yml")
        .or_else(|| lower.strip_suffix(".yaml"))
    else {
        return false;
    };
    let stem = stem.strip_prefix("docker-").unwrap_or(stem);
    stem == "compose"
        || ["compose.", "compose-", "compose_"]
            .iter()
            .any(|p| stem.starts_with(p))
        || [".compose", "-compose", "_compose"]
            .iter()
            .any(|s| stem.ends_with(s))
}

/// Dockerfile names: `Dockerfile`, `Containerfile`, `Dockerfile.gpu`,
/// `Dockerfile-cuda`, `train.Dockerfile`, `gpu_Dockerfile`, any case; not the files named
/// after them (`Dockerfile.dockerignore`, `Dockerfile.md`) or templates.
pub fn is_dockerfile_name(name: &str) -> bool {
    const NOT_DOCKERFILES: &[&str] = &[
        "dockerignore",
        "md",
        "txt",
        "rst",
        "sh",
        "py",
        "json",
        "yml",
        "yaml",
        "toml",
        "j2",
        "jinja",
        "jinja2",
        "tmpl",
        "tpl",
        "template",
        "orig",
        "bak",
        "swp",
        "erb",
        "mustache",
    ];
    let lower = name.to_ascii_lowercase();
    let named = ["dockerfile", "containerfile"].iter().any(|base| {
        lower == *base
            || lower
                .strip_prefix(base)
                .is_some_and(|rest| rest.starts_with(['.', '-', '_']))
            || lower
                .strip_suffix(base)
                .is_some_and(|stem| stem.ends_with(['.', '-', '_']) && stem.len() > 1)
    });
    let extension = lower.rsplit_once('.').map(|(_, e)| e);
    named && !extension.is_some_and(|e| NOT_DOCKERFILES.contains(&e))
}

/// Resolves the configuration for each file, caching per directory.
pub struct ConfigResolver {
    fixed: Option<Arc<Config>>,
    cache: Mutex<HashMap<PathBuf, Arc<Config>>>,
    select: Option<Vec<String>>,
    ignore: Vec<String>,
}

impl ConfigResolver {
    /// `fixed` is the `--config` file, used for everything; `select`/`ignore`
    /// from the command line override every config's selection.
    pub fn new(fixed: Option<Config>, select: Option<Vec<String>>, ignore: Vec<String>) -> Self {
        let fixed = fixed.map(|mut c| {
            Self::override_selection(&mut c, &select, &ignore);
            Arc::new(c)
        });
        Self {
            fixed,
            cache: Mutex::new(HashMap::new()),
            select,
            ignore,
        }
    }

    fn override_selection(config: &mut Config, select: &Option<Vec<String>>, ignore: &[String]) {
        if select.is_some() || !ignore.is_empty() {
            let select = select.clone().unwrap_or_else(|| vec!["ALL".into()]);
            config.set_selection(&select, ignore);
        }
    }

    pub fn for_file(&self, file: &Path) -> Result<Arc<Config>, ConfigError> {
        if let Some(c) = &self.fixed {
            return Ok(c.clone());
        }
        let dir = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if let Some(c) = self.cache.lock().expect("config cache").get(&dir) {
            return Ok(c.clone());
        }
        let mut config = match find_config(&dir) {
            Some(path) => Config::load(&path)?,
            None => Config::default(),
        };
        // Globs in a config are relative to its directory; files are matched by
        // their canonical path.
        if config.path.is_none() {
            config.root = dir.clone();
        }
        Self::override_selection(&mut config, &self.select, &self.ignore);
        let config = Arc::new(config);
        self.cache
            .lock()
            .expect("config cache")
            .insert(dir, config.clone());
        Ok(config)
    }
}

/// One file to lint.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    pub path: PathBuf,
    /// Named on the command line (always linted, whatever its name).
    pub explicit: bool,
    /// Found by walking and named like neither a compose file nor an
    /// `include` glob: linted only if it holds Kubernetes objects.
    pub manifest_only: bool,
    /// Part of a kustomize overlay: skipped, not linted.
    pub skip: Option<Skip>,
}

/// `.yaml` / `.yml`, any case.
fn is_yaml_file_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".yaml") || lower.ends_with(".yml")
}

/// A path that could not be walked.
#[derive(Debug, Clone)]
pub struct DiscoveryError {
    pub path: PathBuf,
    pub message: String,
}

/// Expands the command-line paths into files to lint, sorted by path.
pub fn discover(
    paths: &[PathBuf],
    resolver: &ConfigResolver,
) -> (Vec<Target>, Vec<DiscoveryError>) {
    let targets = Mutex::new(Vec::new());
    let errors = Mutex::new(Vec::new());
    for path in paths {
        if !path.is_dir() {
            // Files, and paths that do not exist (reported when read).
            targets.lock().expect("targets").push(Target {
                path: path.clone(),
                explicit: true,
                manifest_only: false,
                skip: None,
            });
            continue;
        }
        let walker = ignore::WalkBuilder::new(path)
            .hidden(false)
            .require_git(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build_parallel();
        walker.run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(entry) => {
                        if entry.file_type().is_some_and(|t| t.is_file()) {
                            let file = entry.into_path();
                            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
                            match resolver.for_file(&file) {
                                Ok(config) => {
                                    let canonical = std::fs::canonicalize(&file)
                                        .unwrap_or_else(|_| file.clone());
                                    let named = is_compose_file_name(name)
                                        || is_dockerfile_name(name)
                                        || config.is_included(&canonical);
                                    let wanted = named || is_yaml_file_name(name);
                                    if wanted && !config.is_excluded(&canonical) {
                                        targets.lock().expect("targets").push(Target {
                                            path: file,
                                            explicit: false,
                                            manifest_only: !named,
                                            skip: None,
                                        });
                                    }
                                }
                                Err(e) => errors.lock().expect("errors").push(DiscoveryError {
                                    path: file,
                                    message: e.0,
                                }),
                            }
                        }
                    }
                    Err(err) => {
                        let path = match &err {
                            ignore::Error::WithPath { path, .. } => path.clone(),
                            _ => path.clone(),
                        };
                        errors.lock().expect("errors").push(DiscoveryError {
                            path,
                            message: err.to_string(),
                        });
                    }
                }
                ignore::WalkState::Continue
            })
        });
    }
    let mut targets = targets.into_inner().expect("targets");
    targets.sort();
    targets.dedup_by(|a, b| a.path == b.path);
    mark_kustomize_overlays(&mut targets);
    (targets, errors.into_inner().expect("errors"))
}

/// Marks kustomizations with patches, and the patches they apply, as skipped.
fn mark_kustomize_overlays(targets: &mut [Target]) {
    let mut overlays: HashMap<PathBuf, Option<(PathBuf, Vec<PathBuf>)>> = HashMap::new();
    for target in targets.iter_mut() {
        let dir = target
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let overlay = overlays
            .entry(dir.clone())
            .or_insert_with(|| kustomize::overlay_files(&dir));
        if let Some((kustomization, patches)) = overlay
            && std::iter::once(&*kustomization)
                .chain(patches.iter())
                .any(|f| kustomize::same_file(&target.path, f))
        {
            target.skip = Some(Skip::Kustomize {
                kustomization: kustomization.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_compose_file_name, is_dockerfile_name};

    #[test]
    fn dockerfile_names() {
        for yes in [
            "Dockerfile",
            "dockerfile",
            "Containerfile",
            "Dockerfile.gpu",
            "Dockerfile-uv-base",
            "Dockerfile.ci.dev",
            "train.Dockerfile",
            "gpu.dockerfile",
            "cuda_Dockerfile",
        ] {
            assert!(is_dockerfile_name(yes), "{yes}");
        }
        for no in [
            "Dockerfile.dockerignore",
            "Dockerfile.md",
            "Dockerfile.j2",
            "dockerfiles",
            ".dockerfile",
            "mydockerfile",
            "Dockerfile.yml",
        ] {
            assert!(!is_dockerfile_name(no), "{no}");
        }
    }

    #[test]
    fn compose_names() {
        for yes in [
            "compose.yml",
            "compose.yaml",
            "docker-compose.yml",
            "docker-compose.gpu.yml",
            "docker-compose-vllm.yml",
            "docker-compose.override.yaml",
            "compose.cuda.yaml",
            "fleet-compose.yml",
            "app.compose.yaml",
            "Docker-Compose.YML",
        ] {
            assert!(is_compose_file_name(yes), "{yes}");
        }
        for no in [
            "values.yaml",
            "deployment.yaml",
            "composer.yml",
            "compose.json",
            "decompose.yml",
        ] {
            assert!(!is_compose_file_name(no), "{no}");
        }
    }
}
