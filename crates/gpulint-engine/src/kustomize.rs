//! Kustomize overlays. Each kustomization is built as `kubectl kustomize`
//! builds it ([`crate::project::kustomize`]) and the built objects are
//! linted as manifests; each finding is then reported where the value that
//! decided it is written (a patch, or the base it patches), without a fix
//! (an edit there changes every overlay that shares the file).
//!
//! The files a kustomization applies as patches are partial manifests (a
//! Deployment patch that only sets resources has no volumes): linted
//! alone they would be false alarms, so they are only ever reported
//! through a build. A build gpulint cannot make (a remote base, a Helm
//! chart) leaves them skipped, with a note saying how to lint the output.

use crate::config::Config;
use crate::diagnostic::Diagnostic;
use crate::project::kustomize::{self as build, BuildError};
use crate::session::Session;
use crate::syntax::yaml::{Value, Yaml};
use crate::text::SourceFile;
use crate::vfs::System;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use build::KUSTOMIZATION_NAMES;

/// What linting one overlay's build found.
#[derive(Debug)]
pub struct OverlayLint {
    /// Every file the build read.
    pub files: Vec<Arc<SourceFile>>,
    /// The findings, by the file each is in.
    pub findings: Vec<(Arc<SourceFile>, Vec<Diagnostic>)>,
}

impl Session {
    /// Builds the kustomization `kustomization` and lints what it builds.
    /// The findings are as the rules report them: the caller applies each
    /// file's suppressions and configuration ([`Session::finish_elsewhere`]).
    pub fn lint_overlay(
        &self,
        kustomization: &Path,
        config: &Config,
    ) -> Result<OverlayLint, BuildError> {
        let dir = kustomization
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let overlay = build::build(&self.workspace().files, dir)?;
        if overlay.objects.is_empty() {
            return Ok(OverlayLint {
                files: overlay.files,
                findings: Vec::new(),
            });
        }
        let rendered = overlay.render()?;
        let diagnostics = self
            .lint_text_unsuppressed(&rendered.text, kustomization, config)
            .map_err(|e| BuildError {
                message: format!("the build is not what gpulint reads: {}", e.message),
            })?;
        // The directory as given, with nothing a terminal would act on.
        let shown: String = dir
            .display()
            .to_string()
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        let built = format!("Found in what `kubectl kustomize {shown}` builds.");
        let mut by_file: Vec<Vec<Diagnostic>> = vec![Vec::new(); overlay.files.len()];
        for mut d in diagnostics {
            let Some(origin) = rendered.origin(d.range) else {
                continue;
            };
            let (file, range) = overlay.place(origin);
            d.range = range;
            d.fix = None;
            d.file = None;
            for label in &mut d.related {
                if label.file.is_some() {
                    continue;
                }
                if let Some(origin) = rendered.origin(label.range) {
                    let (at, range) = overlay.place(origin);
                    label.range = range;
                    label.file = (at != file).then(|| overlay.files[at as usize].clone());
                }
            }
            d.note = Some(Arc::from(match &d.note {
                Some(note) if note.ends_with('.') => format!("{note} {built}"),
                Some(note) => format!("{note}. {built}"),
                None => built.clone(),
            }));
            by_file[file as usize].push(d);
        }
        let findings = overlay
            .files
            .iter()
            .cloned()
            .zip(by_file)
            .filter(|(_, found)| !found.is_empty())
            .collect();
        Ok(OverlayLint {
            files: overlay.files,
            findings,
        })
    }
}

impl Session {
    /// What `inspect` shows for a kustomization: the containers of its
    /// build, each placed where the value that decided it is written.
    pub fn inspect_overlay(
        &self,
        kustomization: &Path,
        config: &Config,
    ) -> Result<crate::Inspection, crate::FileError> {
        let dir = kustomization
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let overlay = build::build(&self.workspace().files, dir).map_err(|e| {
            crate::FileError::new(format!("gpulint cannot build this kustomization: {e}"))
        })?;
        let rendered = overlay.render().map_err(|e| {
            crate::FileError::new(format!("gpulint cannot build this kustomization: {e}"))
        })?;
        let mut inspection = self.inspect_text(&rendered.text, kustomization, config)?;
        let place = |range| rendered.origin(range).map(|o| overlay.place(o));
        for c in &mut inspection.containers {
            if c.file != 0 {
                continue;
            }
            if let Some((file, range)) = place(c.range) {
                c.file = file;
                c.range = range;
            }
            c.scope = place(c.scope)
                .filter(|&(file, _)| file == c.file)
                .map_or(c.range, |(_, range)| range);
            if c.shm.at_file == 0
                && let Some((file, range)) = c.shm.at.and_then(place)
            {
                c.shm.at = Some(range);
                c.shm.at_file = file;
            }
        }
        inspection.files = overlay.files;
        Ok(inspection)
    }
}

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
