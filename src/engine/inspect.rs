//! `gpulint inspect`'s engine: the run-time settings of each container a
//! text starts, from the same documents the rules read.

use super::classify::{FileKind, Scope, parse_yaml, read_script};
use super::config::Config;
use super::lint::{Document, documents};
use super::session::Session;
use super::{FileError, without_crashing};
use crate::model::container::ContainerRuntime;
use crate::model::runtime;
use std::path::Path;

/// The run-time settings of every compose service and Kubernetes container
/// in a text (none for a Dockerfile, which runs nothing by itself), reading
/// the files it refers to from disk. Never panics, like
/// [`super::check_text`].
pub fn inspect_text(
    text: &str,
    path: &Path,
    config: &Config,
) -> Result<Vec<ContainerRuntime>, FileError> {
    Session::on_disk().inspect_text(text, path, config)
}

impl Session {
    /// [`inspect_text`], reading other files through this session.
    pub fn inspect_text(
        &self,
        text: &str,
        path: &Path,
        config: &Config,
    ) -> Result<Vec<ContainerRuntime>, FileError> {
        without_crashing(|| inspect_yaml(self, text, path, config))
    }
}

fn inspect_yaml(
    session: &Session,
    text: &str,
    path: &Path,
    config: &Config,
) -> Result<Vec<ContainerRuntime>, FileError> {
    match FileKind::of_text(path, text) {
        FileKind::Yaml => {}
        // Dockerfiles run nothing by themselves.
        FileKind::Dockerfile => return Ok(Vec::new()),
        FileKind::Script(kind) => {
            return Ok(read_script(text, kind)
                .map(|(script, _)| runtime::command_runtimes(&script))
                .unwrap_or_default());
        }
    }
    let Some(yaml) = parse_yaml(text, Scope::Any)? else {
        return Ok(Vec::new());
    };
    let mut containers = Vec::new();
    let kserve = super::kserve::scope(session, &yaml, text, path);
    for (index, document) in documents(session, &yaml, text, path, config) {
        containers.extend(match document {
            Document::Kubernetes(manifest) => {
                runtime::kubernetes_runtimes(&manifest, index, &kserve)
            }
            Document::Compose(file) => runtime::compose_runtimes(&file),
        });
    }
    Ok(containers)
}
