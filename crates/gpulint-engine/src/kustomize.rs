//! Kustomize overlays: a `kustomization.yaml` with patches turns the files
//! it patches with into partial manifests (a Deployment patch that only sets
//! resources has no volumes), which would be linted into false alarms. Those
//! files, and the kustomization itself, are skipped with a note saying how to
//! lint the built output.

use crate::syntax::yaml::{Value, Yaml};
use crate::vfs::System;
use std::path::{Path, PathBuf};

pub const KUSTOMIZATION_NAMES: &[&str] =
    &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The kustomization file in `dir` and the files it applies as patches,
/// when it has patches. Paths are `dir` joined with what the file says.
pub fn overlay_files(system: &dyn System, dir: &Path) -> Option<(PathBuf, Vec<PathBuf>)> {
    let kustomization = KUSTOMIZATION_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| system.is_file(p))?;
    let (text, _) = system.read(&kustomization).ok()?;
    let yaml = Yaml::parse(&text).ok()?;
    let root = yaml.documents.first()?.root?;
    let mut patches = Vec::new();
    let mut has_patches = false;
    for key in ["patches", "patchesStrategicMerge", "patchesJson6902"] {
        let Some(entry) = yaml.get(root, key) else {
            continue;
        };
        for &item in yaml.items(entry.value) {
            has_patches = true;
            let file = match yaml.value(item) {
                // `patchesStrategicMerge: [file.yaml]`; an inline patch has newlines.
                Value::Scalar { text, .. } if !text.contains('\n') => Some(text.as_str()),
                Value::Mapping(_) => yaml.get(item, "path").and_then(|e| yaml.str(e.value)),
                _ => None,
            };
            if let Some(file) = file {
                patches.push(dir.join(file));
            }
        }
    }
    has_patches.then_some((kustomization, patches))
}

/// Whether `file` is `other`, comparing canonical paths where they exist.
pub fn same_file(file: &Path, other: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canonical(file) == canonical(other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::Disk;

    #[test]
    fn patches_of_every_form_are_found() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("kustomization.yaml"),
            "resources: [../base]\npatches:\n- path: gpu.yaml\n  target: {kind: Deployment}\n- patch: |-\n    - op: add\npatchesStrategicMerge:\n- shm.yaml\npatchesJson6902:\n- path: json.yaml\n",
        )
        .unwrap();
        let (kustomization, patches) = overlay_files(&Disk, dir.path()).unwrap();
        assert!(kustomization.ends_with("kustomization.yaml"));
        let names: Vec<_> = patches
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
            .collect();
        assert_eq!(names, ["gpu.yaml", "shm.yaml", "json.yaml"]);
    }

    /// A patch's path compares as the kustomization means it.
    #[test]
    fn paths_compare_as_a_kustomization_means_them() {
        use crate::vfs::normalize;
        assert_eq!(
            normalize(Path::new("./a/overlay/../base/./patches/gpu.yaml")),
            Path::new("a/base/patches/gpu.yaml")
        );
        assert_eq!(normalize(Path::new("../x/../y")), Path::new("../y"));
    }

    #[test]
    fn a_kustomization_without_patches_is_not_an_overlay() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("kustomization.yaml"),
            "resources: [deployment.yaml]\n",
        )
        .unwrap();
        assert!(overlay_files(&Disk, dir.path()).is_none());
        assert!(overlay_files(&Disk, &dir.path().join("missing")).is_none());
    }
}
