//! Cross-file reasoning: the image a compose service builds. `build:` is
//! resolved as Compose does (the context relative to the compose file, the
//! Dockerfile relative to the context, `dockerfile_inline`, `target`,
//! `args`) and the Dockerfile's base image is attached to the service, so a
//! service that builds on a CUDA image counts as a GPU service.

use super::read_source;
use crate::model::compose::{BuildSpec, ComposeFile};
use crate::model::dockerfile::{BuiltImage, DockerfileModel};
use crate::text::SourceFile;
use std::cell::RefCell;
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
    let text = read_source(&shown).ok()?;
    let model = recalled(&shown, &text);
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

/// How many Dockerfiles each thread remembers.
const RECENT_DOCKERFILES: usize = 16;

thread_local! {
    /// The Dockerfiles this thread parsed last, with the text they were
    /// parsed from. Files are linted in path order, so a compose file is
    /// usually linted right after the Dockerfile next to it that it builds:
    /// its `build:` then reuses that parse. Bounded, and an entry is used only
    /// when the file on disk still holds the same text.
    static RECENT: RefCell<VecDeque<(PathBuf, String, Arc<DockerfileModel>)>> =
        const { RefCell::new(VecDeque::new()) };
}

/// Keeps a Dockerfile's parse for a compose file that builds it.
pub fn remember_dockerfile(path: &Path, text: &str, model: Arc<DockerfileModel>) {
    RECENT.with_borrow_mut(|recent| {
        if recent.len() == RECENT_DOCKERFILES {
            recent.pop_front();
        }
        recent.push_back((normalize(path), text.to_string(), model));
    });
}

/// The remembered parse of `path`, if it was parsed from `text`.
fn recalled(path: &Path, text: &str) -> Option<Arc<DockerfileModel>> {
    RECENT.with_borrow(|recent| {
        recent
            .iter()
            .rev()
            .find(|(p, t, _)| p == path && t == text)
            .map(|(_, _, model)| model.clone())
    })
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
    use std::path::Path;

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
