//! Compose projects, loaded the way Compose loads them (compose-go v2.9.1,
//! which Compose 2.40 links), once per run:
//!
//! 1. [`discover`]: which files make the project (`compose.yaml` and its
//!    override, `COMPOSE_FILE`, a `[compose]` set, an overlay);
//! 2. [`env`](mod@env): the `.env` files that interpolate it;
//! 3. `load`: each file parsed and interpolated, its `include:`s
//!    imported, its `!reset`s applied, its services' `extends` resolved,
//!    then merged over the files before it (`merge`);
//! 4. `validate`: what Compose refuses;
//! 5. the services read from the merged model ([`crate::model::compose`]),
//!    their `env_file`s and the images they build attached.
//!
//! Each step is a function over immutable trees, and every value keeps the
//! file and node that decided it ([`crate::syntax::tree::Src`]), so a
//! finding about a value is reported where that value is written, once.
//! A [`Workspace`] holds what one run has read: every file is read and
//! parsed once, and every project loaded once, however many of its files
//! are linted.

// The layers below, by the names this crate's paths use (`crate::text`).
use gpulint_base::codes::RuleCode;
use gpulint_base::text;
use gpulint_model as model;
use gpulint_schema as schema;
use gpulint_syntax as syntax;
use gpulint_vfs as vfs;

pub mod discover;
pub mod env;
pub mod kustomize;
mod load;
mod merge;
mod ports;
mod validate;

use crate::model::compose::Service;
use crate::model::dockerfile::DockerfileModel;
use crate::syntax::tree::Src;
use crate::syntax::yaml::{Yaml, YamlError};
use crate::text::{SourceFile, TextRange};
use crate::vfs::Files;
pub use discover::{Discovery, ProjectSpec};
use foldhash::{HashMap, HashMapExt};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// Limits that keep a hostile project linear and bounded; past one, the
/// project is refused with a located error.
mod limits {
    /// Files one project may read (its own, extended and included ones).
    pub(crate) const MAX_FILES: usize = 256;
    /// `extends` chains longer than this are refused rather than followed.
    pub(crate) const MAX_EXTENDS_DEPTH: usize = 64;
    /// `include:` nests at most this deep.
    pub(crate) const MAX_INCLUDE_DEPTH: usize = 32;
}

/// How a file came into a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileRole {
    /// One of the files Compose is given (`-f`, discovered, `COMPOSE_FILE`).
    Project,
    /// A file `extends: {file: ...}` names.
    Extended,
    /// A file `include:` names (or one it extends).
    Included,
    /// A `.env`, or an `env_file` a service or an `include` names.
    Env,
}

/// A file the project read.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    pub source: Arc<SourceFile>,
    /// Its syntax, for a compose file (an env file has none).
    pub parsed: Option<Arc<Result<Yaml, YamlError>>>,
    pub role: FileRole,
    /// Where relative paths written in it are resolved from: the project
    /// directory for the project's files, its own directory for an extended
    /// file, the included project's directory for an included one.
    pub base_dir: PathBuf,
}

impl ProjectFile {
    pub fn path(&self) -> &Path {
        &self.source.path
    }

    /// Its syntax, when it is a compose file that parses.
    pub fn yaml(&self) -> Option<&Yaml> {
        self.parsed.as_deref()?.as_ref().ok()
    }
}

/// Where something is written: a node of a compose file, or a span of
/// another file (a line of a `.env`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Node(Src),
    Text { file: u32, range: TextRange },
}

impl Place {
    pub fn file(&self) -> u32 {
        match self {
            Place::Node(src) => src.file,
            Place::Text { file, .. } => *file,
        }
    }
}

/// Why Compose would not load the project, or would not create a service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub at: Place,
    pub kind: RefusalKind,
    /// The service it concerns, when it is one service's.
    pub service: Option<String>,
}

impl Refusal {
    /// It names a volume, network, secret, config or service the project
    /// does not define (Compose's words: "refers to undefined", "depends on
    /// undefined"): what a file merged with another's base may leave to it.
    pub fn names_undefined(&self) -> bool {
        self.message.contains("undefined")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// A mistake in the config: Compose refuses it anywhere.
    Config,
    /// A mistake in the config that a dedicated rule reports with more to
    /// say and a fix (GPU002 for a device request without `capabilities`):
    /// PROJ001 leaves it to that rule instead of saying it twice.
    ConfigReportedBy(RuleCode),
    /// A file the project names is not in this checkout (a gitignored
    /// `.env`, a base not copied with the file): refused here, but the
    /// config may be right where the file exists.
    MissingFile,
    /// Refused unless the shell that runs Compose sets a variable the
    /// project does not (`${VAR?}`, an empty `shm_size`).
    UnlessShellSets,
    /// Refused unless a file merged with the project at run time declares
    /// what it names: a network, when no file of it declares any network.
    /// App stores merge each app with a base of their own that declares
    /// the network every app joins (`-f base.yml -f app.yml`); which files
    /// are merged is chosen where Compose runs, not in the checkout.
    UnlessMerged,
}

/// A loaded project: its files, variables, merged services and refusals.
#[derive(Debug)]
pub struct Project {
    pub spec: ProjectSpec,
    /// Every file it read; a [`Src`]'s `file` indexes this.
    pub files: Vec<ProjectFile>,
    /// The variables that interpolate it.
    pub env: env::Environment,
    /// Its services, as Compose runs them, in the merged model's order.
    pub services: Vec<Service>,
    pub refusals: Vec<Refusal>,
    /// The profiles `COMPOSE_PROFILES` enables (`*` for all).
    pub profiles: Vec<String>,
    /// Where each service is in `services`, by name: set once they are
    /// final (see [`Project::service`]).
    pub(crate) service_index: HashMap<String, usize>,
    /// The services in which the compose-spec schema finds a value it
    /// refuses (Compose prints only the first: see `refusals`).
    pub refused_by_schema: Vec<String>,
}

impl Project {
    pub fn file(&self, index: u32) -> &ProjectFile {
        &self.files[index as usize]
    }

    /// A file's name, for messages (`base.yml`).
    pub fn file_name(&self, index: u32) -> String {
        self.file(index)
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default()
    }

    /// The text span of a node.
    pub fn range(&self, src: Src) -> TextRange {
        match self.file(src.file).yaml() {
            Some(yaml) => yaml.range(src.node),
            None => TextRange::default(),
        }
    }

    /// The index of the file at `path` (made lexically normal), if the
    /// project read it.
    pub fn file_index(&self, path: &Path) -> Option<u32> {
        let wanted = crate::vfs::normalize(path);
        self.files
            .iter()
            .position(|f| crate::vfs::normalize(f.path()) == wanted)
            .map(|i| i as u32)
    }

    /// The service named `name`. Rules ask it for every service they fix:
    /// a scan made a file of n GPU services cost n² in `check`.
    pub fn service(&self, name: &str) -> Option<&Service> {
        if self.service_index.len() == self.services.len() {
            return self
                .service_index
                .get(name)
                .map(|&i| &self.services[i])
                .filter(|s| s.name == name);
        }
        // While the project is being loaded and validated.
        self.services.iter().find(|s| s.name == name)
    }

    /// The same project with `services` in place of its own: the services
    /// a tool that starts only some of them (the Dev Container CLI's
    /// `runServices`) creates, with what it adds to them.
    pub fn with_services(&self, services: Vec<Service>) -> Project {
        let mut project = Project {
            spec: self.spec.clone(),
            files: self.files.clone(),
            env: self.env.clone(),
            services,
            refusals: self.refusals.clone(),
            profiles: self.profiles.clone(),
            service_index: HashMap::new(),
            refused_by_schema: self.refused_by_schema.clone(),
        };
        project.index_services();
        project
    }

    /// Indexes the services by name, once they are final.
    pub(crate) fn index_services(&mut self) {
        let mut index = HashMap::with_capacity(self.services.len());
        for (i, service) in self.services.iter().enumerate() {
            index.entry(service.name.clone()).or_insert(i);
        }
        self.service_index = index;
    }

    /// The compose files it reads (not `.env`s).
    pub fn compose_files(&self) -> impl Iterator<Item = (u32, &ProjectFile)> {
        self.files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.role != FileRole::Env)
            .map(|(i, f)| (i as u32, f))
    }

    /// Whether `service` runs with the profiles the project enables.
    pub fn is_active(&self, service: &Service) -> bool {
        service.profiles.is_empty()
            || self
                .profiles
                .iter()
                .any(|p| p == "*" || service.profiles.contains(p))
    }
}

/// A parse kept with the text it was made from.
type Parsed<T> = (Arc<SourceFile>, Arc<T>);

/// What one run has read and loaded (see the module docs). Safe to share
/// between threads: every cache hands out a value computed once.
pub struct Workspace {
    pub files: Files,
    yaml: RwLock<HashMap<OsString, Parsed<Result<Yaml, YamlError>>>>,
    dockerfiles: RwLock<HashMap<OsString, Parsed<DockerfileModel>>>,
    projects: Mutex<HashMap<ProjectSpec, Arc<OnceLock<Arc<Project>>>>>,
    /// The project Compose discovers in each directory.
    default_projects: Mutex<HashMap<OsString, Arc<OnceLock<Option<ProjectSpec>>>>>,
}

impl Workspace {
    pub fn new(files: Files) -> Self {
        Workspace {
            files,
            yaml: RwLock::default(),
            dockerfiles: RwLock::default(),
            projects: Mutex::default(),
            default_projects: Mutex::default(),
        }
    }

    /// The next generation of a long-lived workspace (the language
    /// server's, after an edit): files revalidated by stamp over `system`,
    /// the parses of unchanged files kept, projects loaded again (any file
    /// of one may have changed, or appeared).
    pub fn renewed(&self, system: impl crate::vfs::System + 'static) -> Workspace {
        fn copy<T: Clone>(cache: &RwLock<T>) -> RwLock<T> {
            RwLock::new(cache.read().unwrap_or_else(|p| p.into_inner()).clone())
        }
        Workspace {
            files: self.files.renewed(system),
            yaml: copy(&self.yaml),
            dockerfiles: copy(&self.dockerfiles),
            projects: Mutex::default(),
            default_projects: Mutex::default(),
        }
    }

    /// Forgets every text, parse and project loaded so far: `check` does
    /// this after each chunk of files, so that what a run holds does not
    /// grow with the tree. What is asked for again is loaded again, the
    /// same way.
    ///
    /// Which project Compose finds in each directory above `keep_above`
    /// (the next chunk's directory) is kept: every file below them asks
    /// (`COMPOSE_FILE` in the `.env` of a directory above may name it), so
    /// without it each chunk probed the same ancestors again, a few dozen
    /// failed `stat`s and opens each time. They are one small entry per
    /// level, however large the tree.
    ///
    /// Returns what was forgotten, for the caller to drop where freeing it
    /// costs least: dropping a chunk's parses and projects is a fifth of
    /// the chunk's work, and done on the thread that emits the report it
    /// kept the other threads waiting.
    pub fn forget_loaded(&self, keep_above: Option<&Path>) -> crate::vfs::Forgotten {
        fn take<T: Default>(lock: &RwLock<T>) -> T {
            std::mem::take(&mut *lock.write().unwrap_or_else(|p| p.into_inner()))
        }
        fn take_locked<T: Default>(lock: &Mutex<T>) -> T {
            std::mem::take(&mut *lock.lock().unwrap_or_else(|p| p.into_inner()))
        }
        let mut default_projects = self
            .default_projects
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let keep_above = keep_above.map(crate::vfs::normalized);
        let forgotten_default_projects: HashMap<_, _> = default_projects
            .extract_if(|dir, _| {
                !keep_above
                    .as_deref()
                    .is_some_and(|below| below.starts_with(Path::new(dir)))
            })
            .collect();
        drop(default_projects);
        Box::new((
            self.files.forget(),
            take(&self.yaml),
            take(&self.dockerfiles),
            take_locked(&self.projects),
            forgotten_default_projects,
        ))
    }

    /// `text`'s YAML, parsed once per text.
    pub fn yaml(&self, source: &Arc<SourceFile>) -> Arc<Result<Yaml, YamlError>> {
        cached(&self.yaml, source, || Yaml::parse(&source.text))
    }

    /// `text` as a Dockerfile, parsed once per text.
    pub fn dockerfile(&self, source: &Arc<SourceFile>) -> Arc<DockerfileModel> {
        cached(&self.dockerfiles, source, || {
            DockerfileModel::parse(&source.text)
        })
    }

    /// Keeps `parsed`, a parse of `source`'s text made elsewhere (the lint
    /// of that file), as this text's YAML: a project that reads the file
    /// then does not parse it again.
    pub fn share_yaml(&self, source: &Arc<SourceFile>, parsed: Arc<Result<Yaml, YamlError>>) {
        share(&self.yaml, source, parsed);
    }

    /// [`Self::share_yaml`] for a Dockerfile's model.
    pub fn share_dockerfile(&self, source: &Arc<SourceFile>, model: Arc<DockerfileModel>) {
        share(&self.dockerfiles, source, model);
    }

    /// The parses already made of `source`'s text (by a project that read
    /// it, or shared), without parsing it.
    pub fn parsed_dockerfile(&self, source: &Arc<SourceFile>) -> Option<Arc<DockerfileModel>> {
        lookup(&self.dockerfiles, source)
    }

    /// The project `spec` names, loaded once.
    pub fn project(&self, spec: &ProjectSpec) -> Arc<Project> {
        let slot = self
            .projects
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(spec.clone())
            .or_default()
            .clone();
        slot.get_or_init(|| Arc::new(load::load(self, spec)))
            .clone()
    }

    /// The project Compose discovers when run in `dir`, found once.
    pub(crate) fn default_project(&self, dir: &Path) -> Option<ProjectSpec> {
        let key = crate::vfs::normalized(dir);
        let mut slots = self
            .default_projects
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let slot = match slots.get(key.as_os_str()) {
            Some(slot) => slot.clone(),
            None => slots
                .entry(key.as_os_str().to_os_string())
                .or_default()
                .clone(),
        };
        drop(slots);
        slot.get_or_init(|| discover::default_project(self, dir))
            .clone()
    }
}

/// The value `make` computes for `source`, kept while the file's text is
/// the same [`SourceFile`].
fn cached<T>(
    cache: &RwLock<HashMap<OsString, Parsed<T>>>,
    source: &Arc<SourceFile>,
    make: impl FnOnce() -> T,
) -> Arc<T> {
    if let Some(value) = lookup(cache, source) {
        return value;
    }
    let value = Arc::new(make());
    share(cache, source, value.clone());
    value
}

/// The value kept for `source`, when it was made from this same text.
fn lookup<T>(
    cache: &RwLock<HashMap<OsString, Parsed<T>>>,
    source: &Arc<SourceFile>,
) -> Option<Arc<T>> {
    let key = crate::vfs::normalized(&source.path);
    cache
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(key.as_os_str())
        .filter(|(text, _)| Arc::ptr_eq(text, source))
        .map(|(_, value)| value.clone())
}

fn share<T>(cache: &RwLock<HashMap<OsString, Parsed<T>>>, source: &Arc<SourceFile>, value: Arc<T>) {
    let key = crate::vfs::normalize(&source.path).into_os_string();
    cache
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, (source.clone(), value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::MemoryFs;

    #[test]
    fn a_service_is_found_by_name_through_the_index_as_by_a_scan() {
        // Merged over a base, with one service only in the override: the
        // index is built on the final list, in its order.
        let ws = Workspace::new(Files::snapshot(MemoryFs::new([
            (
                PathBuf::from("/p/compose.yaml"),
                "services:\n  b: {image: x}\n  a: {image: x}\n".to_string(),
            ),
            (
                PathBuf::from("/p/compose.override.yaml"),
                "services:\n  c: {image: y}\n  a: {shm_size: 1g}\n".to_string(),
            ),
        ])));
        let spec = ws.default_project(Path::new("/p")).unwrap();
        let project = ws.project(&spec);
        assert_eq!(project.service_index.len(), project.services.len());
        for service in &project.services {
            let found = project.service(&service.name).unwrap();
            assert!(std::ptr::eq(found, service), "{}", service.name);
        }
        assert_eq!(project.services.len(), 3);
        assert!(project.service("d").is_none());
    }

    #[test]
    fn forgetting_a_chunk_keeps_the_projects_of_the_next_chunks_ancestors() {
        let ws = Workspace::new(Files::snapshot(MemoryFs::new([
            (PathBuf::from("/top/.env"), "A=1\n".to_string()),
            (PathBuf::from("/top/next/.env"), "B=1\n".to_string()),
            (PathBuf::from("/top/done/.env"), "C=1\n".to_string()),
        ])));
        let dirs = ["/top", "/top/next", "/top/done"].map(Path::new);
        for dir in dirs {
            assert!(ws.default_project(dir).is_none());
        }
        assert_eq!(ws.files.reads(), 3);
        // The next chunk is in /top/next/deeper: /top and /top/next are
        // not probed again, /top/done is.
        drop(ws.forget_loaded(Some(Path::new("/top/next/deeper"))));
        for dir in dirs {
            assert!(ws.default_project(dir).is_none());
        }
        assert_eq!(ws.files.reads(), 4);
        // With no next chunk, everything goes.
        drop(ws.forget_loaded(None));
        for dir in dirs {
            assert!(ws.default_project(dir).is_none());
        }
        assert_eq!(ws.files.reads(), 7);
    }
}
