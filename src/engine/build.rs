//! Cross-file reasoning: the image a compose service builds. `build:` is
//! resolved as Compose does (the context relative to the compose file, the
//! Dockerfile relative to the context, `dockerfile_inline`, `target`,
//! `args`) and the Dockerfile's base image is attached to the service, so a
//! service that builds on a CUDA image counts as a GPU service.

use super::session::Session;
use crate::model::compose::{BuildSpec, ComposeFile};
use crate::model::dockerfile::BuiltImage;
use crate::text::SourceFile;
use crate::vfs::normalize;
use std::path::Path;
use std::sync::Arc;

/// Attaches the built image to every service with a readable `build:`,
/// and decides which of them that makes GPU services.
/// `compose_path` is the compose file's path as the user gave it.
pub fn attach_built_images(session: &Session, file: &mut ComposeFile, compose_path: &Path) {
    for service in &mut file.services {
        if let Some(build) = &service.build {
            service.built_image = resolve(session, build, compose_path).map(Arc::new);
        }
    }
    file.settle_build_evidence();
}

fn resolve(session: &Session, build: &BuildSpec, compose_path: &Path) -> Option<BuiltImage> {
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
    let (text, model) = match session.recalled_unchanged(&shown) {
        Some((text, model)) => (text, Some(model)),
        None => {
            let (text, _) = session.system().read(&shown).ok()?;
            let model = session.recalled(&shown, &text);
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

#[cfg(test)]
mod tests {
    use crate::engine::config::Config;
    use crate::engine::{Overlay, Session};
    use crate::rules::RuleCode;
    use std::path::Path;

    const COMPOSE: &str = "services:\n  trainer:\n    build: .\n    command: python train.py\n";
    const CUDA: &str = "FROM nvcr.io/nvidia/pytorch:24.01-py3\n";
    const CPU: &str = "FROM python:3.12-slim\n";

    /// The codes the compose file gets in `session`, with its Dockerfile as
    /// the session sees it now.
    fn compose_codes(session: &Session, dir: &Path) -> Vec<RuleCode> {
        let report = session.check_file(dir.join("compose.yaml"), &Config::default());
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
        let session = Session::on_disk();

        // Linted from disk, then reused as it is: a CUDA build, so a GPU service.
        assert!(
            session
                .check_file(dockerfile.clone(), &config)
                .error
                .is_none()
        );
        assert!(compose_codes(&session, dir.path()).contains(&RuleCode::SHM001));

        // Changed on disk after it was linted: the compose file reads it again.
        assert!(
            session
                .check_file(dockerfile.clone(), &config)
                .error
                .is_none()
        );
        std::fs::write(&dockerfile, CPU).unwrap();
        assert!(!compose_codes(&session, dir.path()).contains(&RuleCode::SHM001));
    }

    #[test]
    fn a_text_not_read_from_disk_never_stands_in_for_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("compose.yaml"), COMPOSE).unwrap();
        let dockerfile = dir.path().join("Dockerfile");
        std::fs::write(&dockerfile, CPU).unwrap();
        let session = Session::on_disk();
        // A text that is not the file (stdin, a fix being verified), here on
        // a CUDA base, is linted...
        session
            .lint_text(CUDA, &dockerfile, &Config::default())
            .unwrap();
        // ...but the compose file builds what is on disk.
        assert!(!compose_codes(&session, dir.path()).contains(&RuleCode::SHM001));
    }

    #[test]
    fn an_open_buffer_is_what_a_compose_file_builds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("compose.yaml"), COMPOSE).unwrap();
        let dockerfile = dir.path().join("Dockerfile");
        std::fs::write(&dockerfile, CPU).unwrap();
        let session = Session::on_disk();
        // Linted from disk first: remembered with the disk's stamp.
        session.check_file(dockerfile.clone(), &Config::default());
        assert!(!compose_codes(&session, dir.path()).contains(&RuleCode::SHM001));
        // An editor's unsaved buffer on a CUDA base is what it builds there.
        let editor = Session::new(Overlay::new([(dockerfile, CUDA.to_string())]));
        assert!(compose_codes(&editor, dir.path()).contains(&RuleCode::SHM001));
    }
}
