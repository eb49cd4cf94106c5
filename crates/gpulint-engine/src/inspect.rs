//! `gpulint inspect`'s engine: the run-time settings of each container a
//! text starts, from the same models the rules read.

use super::classify::{FileKind, Scope, parse_yaml, read_script};
use super::config::Config;
use super::lint::{Document, documents, reading};
use super::session::Session;
use super::{FileError, without_crashing};
use crate::model::adapters;
use crate::model::container::ContainerRuntime;
use crate::redact::{Hidden, REDACTED, looks_like_credential, redact};
use crate::text::SourceFile;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The containers a file starts: each with the file its spans are in
/// (`ContainerRuntime::file` and `Shm::at_file` index `files`) and a key
/// that is the same wherever it is inspected from (a compose service of a
/// project inspected through two of its files is one container).
#[derive(Debug, Default)]
pub struct Inspection {
    pub containers: Vec<ContainerRuntime>,
    pub files: Vec<Arc<SourceFile>>,
    pub keys: Vec<String>,
    /// For each container, the compose projects it is a service of (none
    /// for a Kubernetes or `docker run` container).
    pub projects: Vec<Vec<ProjectOf>>,
}

/// The compose project a container belongs to, as Compose is run for it:
/// where it runs and the files it is given (or discovers), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectOf {
    pub dir: PathBuf,
    pub files: Vec<PathBuf>,
}

/// The run-time settings of every compose service and Kubernetes container
/// in a text (none for a Dockerfile, which runs nothing by itself), reading
/// the files it refers to from disk. Never panics, like
/// [`super::check_text`].
pub fn inspect_text(text: &str, path: &Path, config: &Config) -> Result<Inspection, FileError> {
    Session::on_disk().inspect_text(text, path, config)
}

impl Session {
    /// [`inspect_text`], reading other files through this session.
    pub fn inspect_text(
        &self,
        text: &str,
        path: &Path,
        config: &Config,
    ) -> Result<Inspection, FileError> {
        without_crashing(|| inspect_yaml(self, text, path, config))
    }
}

fn inspect_yaml(
    session: &Session,
    text: &str,
    path: &Path,
    config: &Config,
) -> Result<Inspection, FileError> {
    let here = Arc::new(SourceFile::new(path.to_path_buf(), text.to_string()));
    let mut inspection = Inspection {
        files: vec![here],
        ..Inspection::default()
    };
    let local = |inspection: &mut Inspection, containers: Vec<ContainerRuntime>| {
        for mut c in containers {
            redact_runtime(&mut c, &Hidden::default());
            inspection.keys.push(format!("{}#{}", path.display(), c.id));
            inspection.projects.push(Vec::new());
            inspection.containers.push(c);
        }
    };
    match FileKind::of_text(path, text) {
        FileKind::Yaml => {}
        // Dockerfiles run nothing by themselves.
        FileKind::Dockerfile => return Ok(inspection),
        FileKind::Script(kind) => {
            let merged = (kind == crate::model::script::ScriptKind::Quadlet)
                .then(|| super::quadlet::merged(session, path, text))
                .flatten();
            let read_text = merged.as_ref().map_or(text, |m| m.text.as_str());
            let script = read_script(session, path, read_text, kind)?;
            let mut found = script
                .as_ref()
                .map(|(script, _)| adapters::command_runtimes(script))
                .unwrap_or_default();
            if let Some(merged) = &merged {
                for c in &mut found {
                    c.range = merged.in_unit(c.range);
                    c.scope = merged.in_unit(c.scope);
                    c.shm.at = c.shm.at.map(|at| merged.in_unit(at));
                }
            }
            local(&mut inspection, found);
            // A Compose-backed dev container: the containers of the project
            // its `dockerComposeFile` list makes (`docker compose -f ...`),
            // as the Dev Container CLI starts them.
            let dev = script.as_ref().and_then(|(s, _)| s.devcontainer.as_deref());
            if let Some((dev, spec)) =
                dev.and_then(|d| Some((d, super::devcontainer::devcontainer_project(d, path)?)))
            {
                inspect_project(session, &spec, Some(dev), &mut inspection);
            }
            return Ok(inspection);
        }
    }
    let Some(yaml) = parse_yaml(text, Scope::Any)? else {
        return Ok(inspection);
    };
    let mut compose = false;
    let kserve = super::kserve::scope(session, &yaml, text, path);
    for (index, document) in documents(&yaml) {
        match document {
            Document::Kubernetes(manifest) => local(
                &mut inspection,
                adapters::kubernetes_runtimes(&manifest, index, &kserve),
            ),
            Document::Compose => compose = true,
        }
    }
    if compose {
        let session = reading(session, text, path);
        for spec in session.projects_of(path, config) {
            inspect_project(&session, &spec, None, &mut inspection);
        }
    }
    Ok(inspection)
}

/// Adds the containers of the compose project `spec` to `inspection`: as
/// the dev container `dev` starts them, when it is its project.
fn inspect_project(
    session: &Session,
    spec: &crate::project::discover::ProjectSpec,
    dev: Option<&crate::model::devcontainer::DevContainer>,
    inspection: &mut Inspection,
) {
    let project = session.workspace().project(spec);
    let offset = inspection.files.len() as u32;
    inspection
        .files
        .extend(project.files.iter().map(|f| f.source.clone()));
    let range = |src| project.range(src);
    let name = |file| project.file_name(file);
    let hidden = super::session::hidden_values(&project);
    let started = dev.map(|dev| dev.started_services(&project.services));
    let services = started.as_deref().unwrap_or(&project.services);
    for mut container in adapters::compose_runtimes(services, &range, &name) {
        redact_runtime(&mut container, &hidden);
        container.file += offset;
        container.shm.at_file += offset;
        inspection.keys.push(format!("{spec:?}#{}", container.id));
        inspection.projects.push(vec![ProjectOf {
            dir: spec.run_dir.clone(),
            files: spec.files.clone(),
        }]);
        inspection.containers.push(container);
    }
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
