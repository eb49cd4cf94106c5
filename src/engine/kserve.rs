//! The KServe runtimes and InferenceService predictors a manifest is merged
//! with (`model::kserve`): those of the file itself, and, when it holds a
//! KServe object, those of the other YAML files of its directory and of the
//! files its directory's kustomization lists. Files are read through the
//! session's `System` (open editor buffers win); [`sibling_files`] is the
//! one place that decides which files are looked at.

use super::kustomize::KUSTOMIZATION_NAMES;
use super::session::Session;
use crate::model::k8s::Manifest;
use crate::model::kserve::{KServe, Origin};
use crate::syntax::yaml::{Value, Yaml};
use std::path::{Path, PathBuf};

/// Sibling files read at most, a bound for directories of thousands of
/// manifests.
const MAX_SIBLINGS: usize = 64;

/// The KServe objects of `yaml` (the file at `path`) and of its siblings.
pub fn scope(session: &Session, yaml: &Yaml, path: &Path) -> KServe {
    let mut kserve = KServe::default();
    for (index, document) in yaml.documents.iter().enumerate() {
        if let Some(root) = document.root
            && let Some(manifest) = Manifest::from_document(yaml, root)
        {
            kserve.add(&manifest, Origin::Document(index));
        }
    }
    if kserve.runtimes.is_empty() && kserve.predictors.is_empty() {
        return kserve;
    }
    for sibling in sibling_files(session, path) {
        let Ok((text, _)) = session.system().read(&sibling) else {
            continue;
        };
        if !text.contains("serving.kserve.io") {
            continue;
        }
        let Ok(other) = Yaml::parse(&text) else {
            continue;
        };
        for document in &other.documents {
            if let Some(root) = document.root
                && let Some(manifest) = Manifest::from_document(&other, root)
            {
                kserve.add(&manifest, Origin::File(sibling.clone()));
            }
        }
    }
    kserve
}

/// The other `*.yaml`/`*.yml` files of `path`'s directory, and the files
/// the directory's kustomization lists as `resources` (a directory listed
/// there is not followed), at most [`MAX_SIBLINGS`], in name order.
pub fn sibling_files(session: &Session, path: &Path) -> Vec<PathBuf> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let is_yaml = |p: &Path| {
        matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
            && !KUSTOMIZATION_NAMES
                .iter()
                .any(|k| p.file_name().is_some_and(|n| n == *k))
    };
    let this = session.system().canonicalize(path);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| is_yaml(p) && session.system().is_file(p))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if let Some(kustomization) = KUSTOMIZATION_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| session.system().is_file(p))
        && let Ok((text, _)) = session.system().read(&kustomization)
        && let Ok(yaml) = Yaml::parse(&text)
        && let Some(root) = yaml.documents.first().and_then(|d| d.root)
        && let Some(entry) = yaml.get(root, "resources")
    {
        for &item in yaml.items(entry.value) {
            if let Value::Scalar { text, .. } = yaml.value(item) {
                let file = dir.join(text);
                if is_yaml(&file) && session.system().is_file(&file) && !files.contains(&file) {
                    files.push(file);
                }
            }
        }
    }
    files.retain(|f| f != path && (this.is_none() || session.system().canonicalize(f) != this));
    files.truncate(MAX_SIBLINGS);
    files
}
