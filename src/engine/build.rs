//! Cross-file reasoning: the image a compose service builds. `build:` is
//! resolved as Compose does (the context relative to the compose file, the
//! Dockerfile relative to the context, `dockerfile_inline`, `target`,
//! `args`) and the Dockerfile's base image is attached to the service, so a
//! service that builds on a CUDA image counts as a GPU service.

use super::read_source;
use crate::model::compose::{BuildSpec, ComposeFile};
use crate::model::dockerfile::{BuiltImage, DockerfileModel};
use crate::text::SourceFile;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Attaches the built image to every service with a readable `build:`,
/// and decides which of them that makes GPU services.
/// `compose_path` is the compose file's path as the user gave it.
pub fn attach_built_images(file: &mut ComposeFile, compose_path: &Path) {
    for service in &mut file.services {
        if let Some(build) = &service.build {
            service.built_image = resolve(build, compose_path).map(Arc::new);
        }
    }
    file.settle_build_evidence();
}

fn resolve(build: &BuildSpec, compose_path: &Path) -> Option<BuiltImage> {
    if let Some(inline) = &build.dockerfile_inline {
        return BuiltImage::from_dockerfile(
            None,
            &inline.value,
            build.target.as_deref(),
            &build.args,
        );
    }
    let context = build.context.as_deref().unwrap_or(".");
    // Remote contexts (git URLs, tarballs) are not read.
    if context.contains("://") || context.starts_with("git@") || context.starts_with("github.com/")
    {
        return None;
    }
    let compose_dir = compose_path.parent().unwrap_or(Path::new(""));
    let context_dir = compose_dir.join(context);
    let dockerfile = context_dir.join(build.dockerfile.as_deref().unwrap_or("Dockerfile"));
    let shown = normalize(&dockerfile);
    let (text, model) = match recalled_unchanged(&shown) {
        Some((text, model)) => (text, Some(model)),
        None => {
            let text = read_source(&shown).ok()?;
            let model = recalled(&shown, &text);
            (text, model)
        }
    };
    let source = Arc::new(SourceFile::new(shown, text));
    match model {
        Some(model) => {
            BuiltImage::from_model(Some(source), &model, build.target.as_deref(), &build.args)
        }
        None => BuiltImage::from_dockerfile(
            Some(source.clone()),
            &source.text,
            build.target.as_deref(),
            &build.args,
        ),
    }
}

/// What a file on disk was when it was read: its identity, size and
/// modification and change times. Equal stamps mean the same contents
/// unless the file was rewritten to the same size within one tick of the
/// file system's clock, the race any two reads of a changing file have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    identity: (u64, u64, i64, i64),
}

impl DiskStamp {
    pub fn of(metadata: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        DiskStamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            identity: (
                metadata.dev(),
                metadata.ino(),
                metadata.ctime(),
                metadata.ctime_nsec(),
            ),
        }
    }
}

thread_local! {
    /// The stamp of the file whose text this thread is linting, when that
    /// text was read from disk (see [`linting_text_read_from_disk`]).
    static LINTING_FROM_DISK: Cell<Option<DiskStamp>> = const { Cell::new(None) };
}

/// Runs `lint` knowing that the text it lints is what the file held at
/// `stamp`: a Dockerfile linted so can then be reused by the compose files
/// that build it without reading it again, as long as its stamp is the
/// same. Text from anywhere else (an editor's buffer, stdin) is never
/// reused without a read.
pub fn linting_text_read_from_disk<T>(stamp: DiskStamp, lint: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            LINTING_FROM_DISK.set(None);
        }
    }
    LINTING_FROM_DISK.set(Some(stamp));
    let _reset = Reset;
    lint()
}

/// How many Dockerfiles each thread remembers.
const RECENT_DOCKERFILES: usize = 16;

/// A Dockerfile this thread parsed.
struct Remembered {
    path: PathBuf,
    text: String,
    /// Set when `text` was read from disk.
    stamp: Option<DiskStamp>,
    model: Arc<DockerfileModel>,
}

thread_local! {
    /// The Dockerfiles this thread parsed last, with the text they were
    /// parsed from. Files are linted in path order, so a compose file is
    /// usually linted right after the Dockerfile next to it that it builds:
    /// its `build:` then reuses that parse. Bounded, and an entry is used only
    /// when the file on disk still holds the same text.
    static RECENT: RefCell<VecDeque<Remembered>> = const { RefCell::new(VecDeque::new()) };
}

/// Keeps a Dockerfile's parse for a compose file that builds it.
pub fn remember_dockerfile(path: &Path, text: &str, model: Arc<DockerfileModel>) {
    let stamp = LINTING_FROM_DISK.get();
    RECENT.with_borrow_mut(|recent| {
        if recent.len() == RECENT_DOCKERFILES {
            recent.pop_front();
        }
        recent.push_back(Remembered {
            path: normalize(path),
            text: text.to_string(),
            stamp,
            model,
        });
    });
}

/// The remembered parse of `path`, if it was parsed from `text`.
fn recalled(path: &Path, text: &str) -> Option<Arc<DockerfileModel>> {
    RECENT.with_borrow(|recent| {
        recent
            .iter()
            .rev()
            .find(|r| r.path == path && r.text == text)
            .map(|r| r.model.clone())
    })
}

/// The remembered text and parse of `path`, without reading it, when it was
/// read from disk and its stamp has not changed since: one `stat` instead
/// of an open, reads and a close.
fn recalled_unchanged(path: &Path) -> Option<(String, Arc<DockerfileModel>)> {
    let (stamp, text, model) = RECENT.with_borrow(|recent| {
        let r = recent.iter().rev().find(|r| r.path == path)?;
        Some((r.stamp?, r.text.clone(), r.model.clone()))
    })?;
    let now = DiskStamp::of(&std::fs::metadata(path).ok()?);
    (now == stamp).then_some((text, model))
}

/// `a/./b/../c` → `a/c`, lexically (symlinks are not resolved, so the path
/// stays the one users see).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize;
    use crate::engine::config::Config;
    use crate::engine::{check_file, lint_text};
    use crate::rules::RuleCode;
    use std::path::Path;

    const COMPOSE: &str = "services:\n  trainer:\n    build: .\n    command: python train.py\n";
    const CUDA: &str = "FROM nvcr.io/nvidia/pytorch:24.01-py3\n";
    const CPU: &str = "FROM python:3.12-slim\n";

    /// The codes the compose file gets, with its Dockerfile as it is now.
    fn compose_codes(dir: &Path) -> Vec<RuleCode> {
        let report = check_file(dir.join("compose.yaml"), &Config::default());
        assert!(report.error.is_none(), "{:?}", report.error);
        report.diagnostics.iter().map(|d| d.code).collect()
    }

    #[test]
    fn a_built_dockerfile_is_reused_only_while_it_is_unchanged_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("compose.yaml"), COMPOSE).unwrap();
        let dockerfile = dir.path().join("Dockerfile");
        std::fs::write(&dockerfile, CUDA).unwrap();
        let config = Config::default();

        // Linted from disk, then reused as it is: a CUDA build, so a GPU service.
        assert!(check_file(dockerfile.clone(), &config).error.is_none());
        assert!(compose_codes(dir.path()).contains(&RuleCode::SHM001));

        // Changed on disk after it was linted: the compose file reads it again.
        assert!(check_file(dockerfile.clone(), &config).error.is_none());
        std::fs::write(&dockerfile, CPU).unwrap();
        assert!(!compose_codes(dir.path()).contains(&RuleCode::SHM001));
    }

    #[test]
    fn a_text_not_read_from_disk_never_stands_in_for_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("compose.yaml"), COMPOSE).unwrap();
        let dockerfile = dir.path().join("Dockerfile");
        std::fs::write(&dockerfile, CPU).unwrap();
        // An editor's unsaved buffer, here on a CUDA base, is linted...
        lint_text(CUDA, &dockerfile, &Config::default()).unwrap();
        // ...but the compose file builds what is on disk.
        assert!(!compose_codes(dir.path()).contains(&RuleCode::SHM001));
    }

    #[test]
    fn paths_are_normalized_lexically() {
        assert_eq!(
            normalize(Path::new("fixtures/x/./trainer/Dockerfile")),
            Path::new("fixtures/x/trainer/Dockerfile")
        );
        assert_eq!(
            normalize(Path::new("a/b/../../c/Dockerfile")),
            Path::new("c/Dockerfile")
        );
        assert_eq!(
            normalize(Path::new("../up/Dockerfile")),
            Path::new("../up/Dockerfile")
        );
    }
}
