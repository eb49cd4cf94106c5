//! `gpulint inspect`'s engine: the run-time settings of each container a
//! text starts, from the same documents the rules read.

use super::classify::{FileKind, Scope, parse_yaml, read_script};
use super::config::Config;
use super::lint::{Document, documents};
use super::session::Session;
use super::{FileError, without_crashing};
use crate::model::container::ContainerRuntime;
use crate::model::runtime;
use crate::redact::{Hidden, REDACTED, looks_like_credential, redact};
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
    let mut hidden = None;
    for (_, document) in documents(session, &yaml, text, path, config) {
        match document {
            Document::Kubernetes(manifest) => {
                containers.extend(runtime::kubernetes_runtimes(&manifest));
            }
            Document::Compose(file) => {
                let hidden = hidden.get_or_insert_with(|| {
                    super::project::DotEnv::of_project(session.system(), path, config)
                        .map(|dotenv| Hidden::values_not_in(dotenv.vars.iter(), text))
                        .unwrap_or_default()
                });
                let start = containers.len();
                containers.extend(runtime::compose_runtimes(&file));
                for container in &mut containers[start..] {
                    redact_runtime(container, hidden);
                }
            }
        }
    }
    for container in &mut containers {
        redact_runtime(container, &Hidden::default());
    }
    Ok(containers)
}

/// What `inspect` says in words (where /dev/shm comes from, why the
/// container is refused) quotes no `.env` value that is not in the file,
/// no credential and no long value (see [`crate::redact`]); an environment
/// value is the variable's own, shown unless it looks like a credential.
fn redact_runtime(container: &mut ContainerRuntime, hidden: &Hidden) {
    let apply = |text: &mut String, hidden: &Hidden| {
        if let std::borrow::Cow::Owned(redacted) = redact(text, hidden) {
            *text = redacted;
        }
    };
    apply(&mut container.shm.from, hidden);
    if let Some(refused) = &mut container.refused {
        apply(refused, hidden);
    }
    for value in container.env.values_mut().flatten() {
        if looks_like_credential(value) || redact(value, &Hidden::default()) != value.as_str() {
            *value = REDACTED.to_string();
        }
    }
}
