//! Loading a project as compose-go's `loader` does (v2.9.1,
//! `loader/loader.go` `loadYamlFile`): for each file, in order, each YAML
//! document is interpolated, its `include:`s imported, its `!reset`s and
//! `!override`s applied to what the files before it set, its services'
//! `extends` resolved, and the result merged over the files before it
//! (sequences made unique by key, then the canonical form). Then the
//! services are read from the merged model, with their `env_file`s and
//! the images they build, and what Compose refuses is collected.
//!
//! Nothing here stops at the first problem: Compose refuses the project,
//! but gpulint still judges what it can and says where each refusal is.

use super::env::{EnvError, Environment, Interpolated};
use super::merge::{apply_resets, canonical, enforce_unicity, merge, merge_mappings, take_resets};
use super::{
    FileRole, Place, Project, ProjectFile, ProjectSpec, Refusal, RefusalKind, Workspace, limits,
};
use crate::model::compose::{ComposeEnv, Definition, Reading, Role, Service};
use crate::model::dockerfile::BuiltImage;
use crate::schema::DecidedBy;
use crate::syntax::tree::{Budget, Builder, Entry, KeyIndex, Kind, Node, Src};
use crate::text::TextRange;
use foldhash::{HashMap, HashMapExt};
use gpulint_base::codes::RuleCode;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod include;
mod services;

/// A merged model and what was merged into each of its services.
#[derive(Clone, Default)]
struct Model {
    root: Option<Arc<Node>>,
    /// Each service's definitions, in merge order.
    definitions: HashMap<String, Vec<Definition>>,
    /// What later files removed from each service, by dotted path.
    resets: HashMap<String, Vec<(String, Src)>>,
}

/// A file being read into the project: its index and where its relative
/// paths resolve from.
#[derive(Clone)]
struct FileContext {
    index: u32,
    path: PathBuf,
    base_dir: PathBuf,
    role: FileRole,
}

/// One load in progress.
struct Loading<'w> {
    ws: &'w Workspace,
    files: Vec<ProjectFile>,
    by_path: HashMap<(PathBuf, FileRole), u32>,
    refusals: Vec<Refusal>,
    /// Included projects already loaded, by what decides them.
    included: HashMap<String, Model>,
    /// Refusals of a file no entry names (the project's `.env`, which
    /// Compose cannot read): placed at the project's first compose file.
    unplaced: Vec<String>,
    /// What the schema refuses, every error of its tree (see
    /// `validate`, which tells which a rule reports instead).
    schema_leaves: Vec<crate::schema::Leaf>,
}

pub fn load(ws: &Workspace, spec: &ProjectSpec) -> Project {
    let mut loading = Loading {
        ws,
        files: Vec::new(),
        by_path: HashMap::new(),
        refusals: Vec::new(),
        included: HashMap::new(),
        unplaced: Vec::new(),
        schema_leaves: Vec::new(),
    };
    // The directory of the first file (Compose's working directory); an
    // empty `COMPOSE_FILE` entry is the run directory itself.
    let project_dir = match spec.files.first() {
        Some(f) if crate::vfs::normalize(f) == crate::vfs::normalize(&spec.run_dir) => {
            spec.run_dir.clone()
        }
        Some(f) => super::discover::dir_of(f),
        None => spec.run_dir.clone(),
    };
    let env = loading.environment(&spec.run_dir, &project_dir);
    // Files `COMPOSE_FILE` names are refused at its line when Compose
    // cannot read them (missing, or an empty entry: the directory).
    let named_at = (spec.how == super::Discovery::ComposeFile)
        .then(|| env.get("COMPOSE_FILE"))
        .flatten()
        .and_then(|var| {
            let key = (crate::vfs::normalize(&var.file), FileRole::Env);
            let file = *loading.by_path.get(&key)?;
            Some(Place::Text {
                file,
                range: var.range,
            })
        });
    let mut model = Model::default();
    for path in &spec.files {
        if named_at.is_some() && crate::vfs::normalize(path) == crate::vfs::normalize(&spec.run_dir)
        {
            loading.refuse(
                "`COMPOSE_FILE` has an empty entry, which Compose reads as the directory itself (it refuses: is a directory)",
                named_at.unwrap_or(Place::Text {
                    file: 0,
                    range: TextRange::default(),
                }),
                RefusalKind::Config,
            );
            break;
        }
        // Compose stops at the first file it cannot load: one refusal, not
        // one per file after it (a `COMPOSE_FILE` of thousands of missing
        // names is one finding).
        let Some(file) = loading.open(path, FileRole::Project, &project_dir, named_at) else {
            break;
        };
        loading.merge_file(&file, &env, &project_dir, &mut model, &mut Vec::new(), 0);
    }
    loading.place_unplaced_refusals();
    let profiles = active_profiles(&env);
    let services = loading.services(&model, &env);
    let mut project = Project {
        spec: spec.clone(),
        files: loading.files,
        env,
        services,
        refusals: loading.refusals,
        profiles,
        service_index: HashMap::new(),
        refused_by_schema: Vec::new(),
    };
    let model_root = model.root.clone();
    super::validate::validate(&mut project, model_root.as_deref(), &loading.schema_leaves);
    project.index_services();
    project
}

/// The profiles `COMPOSE_PROFILES` turns on (a comma-separated list).
fn active_profiles(env: &Environment) -> Vec<String> {
    env.value("COMPOSE_PROFILES")
        .map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl Loading<'_> {
    /// A `.env` Compose cannot read refuses the project before any compose
    /// file is read: said at the first one's first line, as a `.env` it
    /// cannot parse is.
    fn place_unplaced_refusals(&mut self) {
        let first_compose_file = self.files.iter().position(|f| f.role == FileRole::Project);
        let Some(index) = first_compose_file else {
            return;
        };
        let text = &self.files[index].source.text;
        let first_line = TextRange::new(0, text.find('\n').unwrap_or(text.len()));
        let refusals = std::mem::take(&mut self.unplaced)
            .into_iter()
            .map(|message| Refusal {
                message,
                at: Place::Text {
                    file: index as u32,
                    range: first_line,
                },
                kind: RefusalKind::Config,
                service: None,
            });
        self.refusals.splice(0..0, refusals);
    }

    fn refuse(&mut self, message: impl Into<String>, at: Place, kind: RefusalKind) {
        let refusal = Refusal {
            message: message.into(),
            at,
            kind,
            service: None,
        };
        if !self.refusals.contains(&refusal) {
            self.refusals.push(refusal);
        }
    }

    /// Adds a file to the project (once per path and role), read through
    /// the workspace; `None` when it cannot be read, refused at `named_at`.
    fn open(
        &mut self,
        path: &Path,
        role: FileRole,
        base_dir: &Path,
        named_at: Option<Place>,
    ) -> Option<FileContext> {
        let key = (crate::vfs::normalize(path), role);
        if let Some(&index) = self.by_path.get(&key) {
            return Some(FileContext {
                index,
                path: path.to_path_buf(),
                base_dir: self.files[index as usize].base_dir.clone(),
                role,
            });
        }
        if self.files.len() >= limits::MAX_FILES {
            let at = named_at.unwrap_or(Place::Text {
                file: 0,
                range: TextRange::default(),
            });
            self.refuse(
                format!(
                    "the project reads more than {} files (gpulint's limit)",
                    limits::MAX_FILES
                ),
                at,
                RefusalKind::Config,
            );
            return None;
        }
        let text = match self.ws.files.read(path) {
            Ok(text) => text,
            Err(failure) => {
                let (message, kind) = self.why_unread(path, role, &failure.0);
                match named_at {
                    Some(at) => self.refuse(message, at, kind),
                    // The project's `.env`: placed once the project's
                    // first compose file is read.
                    None if kind == RefusalKind::Config => self.unplaced.push(message),
                    None => {}
                }
                return None;
            }
        };
        let yaml = (role != FileRole::Env).then(|| self.ws.yaml(&text.source));
        let index = self.files.len() as u32;
        self.files.push(ProjectFile {
            source: text.source.clone(),
            parsed: yaml.clone(),
            role,
            base_dir: base_dir.to_path_buf(),
        });
        self.by_path.insert(key, index);
        if let Some(parsed) = yaml
            && let Err(error) = parsed.as_ref()
        {
            self.refuse(
                format!("{} is not valid YAML: {}", path.display(), error.message),
                Place::Text {
                    file: index,
                    range: TextRange::empty(error.offset),
                },
                RefusalKind::Config,
            );
        }
        Some(FileContext {
            index,
            path: path.to_path_buf(),
            base_dir: base_dir.to_path_buf(),
            role,
        })
    }

    /// Why the file at `path` could not be read, as the refusal says it.
    /// A file that is not there is missing from this checkout (a gitignored
    /// `.env`, a base not copied with the file), which the config may be
    /// right about; one that is there and cannot be read (permission
    /// denied, a directory) makes Compose refuse the project here, in its
    /// words (Go's `open PATH: permission denied`, `read PATH: is a
    /// directory`).
    fn why_unread(
        &self,
        path: &Path,
        role: FileRole,
        error: &crate::vfs::ReadError,
    ) -> (String, RefusalKind) {
        use crate::vfs::ReadErrorKind;
        let missing = !self.ws.files.is_file(path) && self.ws.files.canonicalize(path).is_none();
        let shown = path.display();
        // A file `include:`, `-f` or `COMPOSE_FILE` names is part of the
        // config; an env file or an extended file left out of a checkout
        // is not a mistake in it.
        let named_by_config = matches!(role, FileRole::Included | FileRole::Project);
        if missing {
            let kind = if named_by_config {
                RefusalKind::Config
            } else {
                RefusalKind::MissingFile
            };
            return (format!("{shown} is missing"), kind);
        }
        match error.kind {
            ReadErrorKind::Unreadable => (
                format!("open {shown}: {}", error.reason()),
                RefusalKind::Config,
            ),
            ReadErrorKind::Directory if named_by_config => {
                (format!("{shown} is not a file"), RefusalKind::Config)
            }
            ReadErrorKind::Directory => {
                (format!("read {shown}: is a directory"), RefusalKind::Config)
            }
            _ if named_by_config && !self.ws.files.is_file(path) => {
                (format!("{shown} is not a file"), RefusalKind::Config)
            }
            // A FIFO or device (not read: it could wait forever), or a file
            // too large or not text for gpulint: Compose may read it.
            _ => (
                format!("cannot read {shown} ({})", error.message),
                RefusalKind::MissingFile,
            ),
        }
    }

    /// The project's variables: the `.env` where Compose runs, then the
    /// project directory's (what is set first wins, as compose-go's
    /// `WithDotEnv` merges them).
    fn environment(&mut self, run_dir: &Path, project_dir: &Path) -> Environment {
        let mut env = Environment::default();
        let mut dirs = vec![run_dir.to_path_buf()];
        if crate::vfs::normalize(project_dir) != crate::vfs::normalize(run_dir) {
            dirs.push(project_dir.to_path_buf());
        }
        for dir in dirs {
            let path = dir.join(".env");
            if !self.ws.files.is_file(&path) {
                continue;
            }
            if let Some(file) = self.open(&path, FileRole::Env, &dir, None) {
                self.read_env_file(&mut env, &file);
            }
        }
        env
    }

    /// Reads an env file into `env`; what Compose refuses in it is refused
    /// at its line.
    fn read_env_file(&mut self, env: &mut Environment, file: &FileContext) {
        let source = self.files[file.index as usize].source.clone();
        if let Err(EnvError { message, range, .. }) = env.read_file(&file.path, &source.text) {
            self.refuse(
                format!("Compose cannot read {}: {message}", file.path.display()),
                Place::Text {
                    file: file.index,
                    range,
                },
                RefusalKind::Config,
            );
        }
    }

    /// The documents of a compose file as trees, interpolated with `env`;
    /// what cannot be interpolated is refused where it is written.
    fn documents(&mut self, file: &FileContext, env: &Environment) -> Vec<Arc<Node>> {
        let Some(parsed) = self.files[file.index as usize].parsed.clone() else {
            return Vec::new();
        };
        let Ok(yaml) = parsed.as_ref() else {
            return Vec::new();
        };
        let interpolate = |text: &str| env.interpolate(text);
        let mut trees = Vec::new();
        for document in &yaml.documents {
            let Some(root) = document.root else { continue };
            let built = Builder::new(yaml, file.index, Budget::default(), &interpolate).build(root);
            match built {
                Ok(tree) => {
                    self.refuse_uninterpolated(&tree);
                    if !tree.is_mapping() {
                        self.refuse(
                            "the top level of a compose file must be a mapping",
                            Place::Node(tree.src),
                            RefusalKind::Config,
                        );
                        continue;
                    }
                    trees.push(tree);
                }
                Err(error) => self.refuse(
                    format!("{}: {}", file.path.display(), error.message),
                    Place::Node(error.src),
                    RefusalKind::Config,
                ),
            }
        }
        trees
    }

    /// What the compose-spec schema refuses in the model merged so far, in
    /// Compose's words, at the value (or unknown key) that causes it; true
    /// when it accepts the model.
    fn validate_schema(&mut self, merged: &Node) -> bool {
        let Err(error) = crate::schema::compose::validate_leaving(merged, &left_to_rules) else {
            return true;
        };
        match error.decided_by {
            // Refused at the interpolation already, where it is written.
            DecidedBy::FailedInterpolation => return false,
            // A value that depends on a variable nothing here sets is not
            // known, so neither is what the schema says of it: the text
            // checked (`$HEALTHCHECK_RETRIES`) is not the value Compose
            // checks, and guessing would be a finding without evidence.
            DecidedBy::Shell => return false,
            DecidedBy::Text => {}
        }
        self.schema_leaves.extend(error.leaves);
        // Every error is one a rule reports with its own fix: the project
        // is refused, and that rule says why.
        let kind = match error.reported_by {
            Some(rule) => RefusalKind::ConfigReportedBy(rule),
            None => RefusalKind::Config,
        };
        let refusal = Refusal {
            message: error.message,
            at: Place::Node(error.at),
            kind,
            service: error.services.first().cloned(),
        };
        if !self.refusals.contains(&refusal) {
            self.refusals.push(refusal);
        }
        false
    }

    /// A list item compose-go's unicity step refuses, for its service.
    fn refuse_item(&mut self, refused: crate::merge::UnicityRefusal) {
        let refusal = Refusal {
            message: refused.message,
            at: Place::Node(refused.at),
            kind: RefusalKind::Config,
            service: refused.service,
        };
        if !self.refusals.contains(&refusal) {
            self.refusals.push(refusal);
        }
    }

    /// Values compose-go's interpolation refuses (a malformed `${`, a
    /// `${VAR?}` the project does not set), each once where it is written.
    fn refuse_uninterpolated(&mut self, tree: &Arc<Node>) {
        let mut seen = foldhash::HashSet::default();
        let mut stack: Vec<&Arc<Node>> = vec![tree];
        while let Some(node) = stack.pop() {
            // Only a node held in more than one place (an alias's target)
            // can be reached twice: the others are not remembered.
            if Arc::strong_count(node) > 1 && !seen.insert(Arc::as_ptr(node)) {
                continue;
            }
            match &node.kind {
                Kind::Scalar {
                    value: Interpolated::Invalid(why),
                    ..
                } => {
                    let kind = if why.starts_with("required variable") {
                        RefusalKind::UnlessShellSets
                    } else {
                        RefusalKind::Config
                    };
                    let message = if kind == RefusalKind::UnlessShellSets {
                        format!("{why} (unless the shell that runs Compose sets it)")
                    } else {
                        why.clone()
                    };
                    self.refuse(message, Place::Node(node.src), kind);
                }
                Kind::Scalar { .. } => {}
                Kind::Sequence(items) => stack.extend(items.iter()),
                Kind::Mapping(entries) => stack.extend(entries.iter().map(|e| &e.value)),
            }
        }
    }

    /// Merges one compose file (each of its documents) over `model`, as
    /// `loadYamlFile` does. `working_dir` is where its relative paths
    /// resolve from; `included` the files being included, for cycles.
    fn merge_file(
        &mut self,
        file: &FileContext,
        env: &Environment,
        working_dir: &Path,
        model: &mut Model,
        included: &mut Vec<PathBuf>,
        depth: usize,
    ) {
        for document in self.documents(file, env) {
            // compose-go v2.9.1's order: this document's `extends` (which
            // sees only its own services), its `!reset`s applied to what
            // the files before it set, its `include:`s imported, then the
            // merge.
            let (stripped, resets) = take_resets(&document);
            let mut cfg = stripped;
            let include = cfg.entry("include").cloned();
            cfg = without_key(&cfg, "include");
            let role = match file.role {
                FileRole::Included => Role::Included,
                _ => Role::Project,
            };
            let (extended, mut definitions) = self.apply_extends(file, &cfg, env, &resets, role);
            cfg = extended;
            if let Some(root) = &model.root {
                model.root = Some(apply_resets(root, &resets));
            }
            if let Some(include) = include {
                included.push(crate::vfs::normalize(&file.path));
                let imported = self.include(&include, env, working_dir, included, depth);
                included.pop();
                // What the include brings in is part of this document: a
                // service both define is a conflict Compose refuses,
                // unless the two are the same.
                cfg = self.import_at(&imported, &cfg, &mut definitions, include.key_src);
                for (name, found) in &imported.resets {
                    model
                        .resets
                        .entry(name.clone())
                        .or_default()
                        .extend(found.iter().cloned());
                }
            }
            for ((service, path), src) in resets_by_service(&resets, &cfg) {
                model.resets.entry(service).or_default().push((path, src));
            }
            let merged = match &model.root {
                None => Ok(cfg.clone()),
                Some(root) => merge_mappings(root, &cfg, &mut Vec::new()),
            };
            match merged {
                Ok(merged) => {
                    // compose-go tells list items apart before it
                    // validates, and an item it cannot key stops the load
                    // there: its words, not the schema's, are the error.
                    let refused = crate::merge::unicity_refusal(&merged);
                    let merged = enforce_unicity(&merged);
                    match refused {
                        Some(refusal) => self.refuse_item(refusal),
                        // compose-go validates here, each time a file is
                        // merged in, before the canonical form, which
                        // refuses what the schema lets by in `ports:`.
                        None => {
                            if self.validate_schema(&merged)
                                && let Some(refusal) = crate::ports::port_refusal(&merged)
                            {
                                self.refuse_item(refusal);
                            }
                        }
                    }
                    model.root = Some(canonical(&merged));
                }
                Err(error) => self.refuse(
                    format!(
                        "Compose cannot merge {}: {}",
                        file.path.display(),
                        error.message
                    ),
                    Place::Node(error.node.src),
                    RefusalKind::Config,
                ),
            }
            for (name, defs) in definitions {
                model.definitions.entry(name).or_default().extend(defs);
            }
        }
    }
}

/// One file's services, for resolving `extends` within it.
struct Scope {
    file: FileContext,
    services: Arc<Node>,
    resets: Vec<Vec<String>>,
}

/// A service with its `extends` resolved.
#[derive(Clone)]
struct Resolved {
    node: Arc<Node>,
    definitions: Vec<Definition>,
    /// How many `extends` links lead to it (0 for a service without one),
    /// whatever order the services were resolved in.
    depth: usize,
}

/// Where a service's findings about what it lacks go: the project file
/// (not an extended or included one) that gives it GPUs, else the first
/// project file that defines it, else its last definition.
fn home_definition(service: &Service, definitions: &[Definition]) -> usize {
    let project = |d: &&Definition| d.role == Role::Project;
    if let Some(evidence) = service.gpu.evidence
        && let Some(i) = definitions
            .iter()
            .rposition(|d| d.role == Role::Project && d.key.file == evidence.file)
    {
        return i;
    }
    definitions
        .iter()
        .position(|d| project(&d))
        .unwrap_or(definitions.len().saturating_sub(1))
}

/// The service-level part of reset paths (`services.x.shm_size` →
/// (`x`, `shm_size`)), with where the service is in `cfg`.
fn resets_by_service(resets: &[Vec<String>], cfg: &Arc<Node>) -> Vec<((String, String), Src)> {
    resets
        .iter()
        .filter(|p| p.len() > 2 && p[0] == "services")
        .map(|p| {
            let at = cfg
                .get_path(&["services", &p[1]])
                .map_or(cfg.src, |s| s.src);
            ((p[1].clone(), p[2..].join(".")), at)
        })
        .collect()
}

/// A mapping without one of its keys.
fn without_key(node: &Arc<Node>, key: &str) -> Arc<Node> {
    if node.entry(key).is_none() {
        return node.clone();
    }
    Arc::new(
        node.with_kind(Kind::Mapping(
            node.entries()
                .iter()
                .filter(|e| e.key != key)
                .cloned()
                .collect(),
        )),
    )
}

fn empty_mapping(src: Src) -> Arc<Node> {
    Arc::new(Node {
        kind: Kind::Mapping(Vec::new()),
        tag: None,
        src,
        entry_key: None,
        keys: KeyIndex::default(),
    })
}

/// Whether two values are the same, wherever they are written (compose-go
/// compares imported resources with `reflect.DeepEqual`).
fn same_value(a: &Node, b: &Node) -> bool {
    if std::ptr::eq(a, b) {
        return true;
    }
    match (&a.kind, &b.kind) {
        (
            Kind::Scalar {
                value: x, raw: rx, ..
            },
            Kind::Scalar {
                value: y, raw: ry, ..
            },
        ) => x == y && (x.text().is_some() || rx == ry),
        (Kind::Sequence(x), Kind::Sequence(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Kind::Mapping(x), Kind::Mapping(y)) => {
            x.len() == y.len()
                && x.iter().all(|e| {
                    y.iter()
                        .find(|f| f.key == e.key)
                        .is_some_and(|f| same_value(&e.value, &f.value))
                })
        }
        _ => false,
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string()
}

/// A file's source, by index.
#[cfg(test)] // only the tests ask
pub(crate) fn source_of(project: &Project, index: u32) -> &Arc<crate::text::SourceFile> {
    &project.files[index as usize].source
}

/// The schema's errors that a rule reports with its own fix, and that
/// rule: a device request without `capabilities` (GPU002), a GPU resource
/// name under `deploy.resources.reservations` or `limits` (GPU011, which
/// reads the same keys). Another refusal is reported before them.
fn left_to_rules(path: &[String], kind: &crate::schema::LeafKind) -> Option<RuleCode> {
    use crate::schema::LeafKind;
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    match (kind, path.as_slice()) {
        (
            LeafKind::Missing(missing),
            [
                "services",
                _,
                "deploy",
                "resources",
                "reservations",
                "devices",
                _,
            ],
        ) if missing == &["capabilities"] => Some(RuleCode::GPU002),
        (
            LeafKind::Unknown(keys),
            [
                "services",
                _,
                "deploy",
                "resources",
                "reservations" | "limits",
            ],
        ) if keys
            .iter()
            .all(|key| crate::model::compose::is_gpu_resource_name(key)) =>
        {
            Some(RuleCode::GPU011)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::{Files, MemoryFs};

    /// The default project of `/p`, its files read from memory, with
    /// `unreadable` there but refused to every read (a mode-000 file).
    fn project(files: &[(&str, &str)], unreadable: &[&str]) -> Arc<Project> {
        let fs = MemoryFs::new(files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())));
        for path in unreadable {
            fs.make_unreadable(Path::new(path));
        }
        let ws = Workspace::new(Files::snapshot(fs));
        let spec = ws.default_project(Path::new("/p")).expect("a project");
        ws.project(&spec)
    }

    /// The text each refusal is placed at, with its message and kind.
    fn refusals(project: &Project) -> Vec<(String, String, RefusalKind)> {
        project
            .refusals
            .iter()
            .map(|r| {
                let (file, range) = match r.at {
                    Place::Node(src) => (src.file, project.range(src)),
                    Place::Text { file, range } => (file, range),
                };
                let text = &source_of(project, file).text[range.start as usize..range.end as usize];
                (text.to_string(), r.message.clone(), r.kind)
            })
            .collect()
    }

    const SIZED: &str = "services:\n  t:\n    image: x\n    shm_size: ${S:-1g}\n";

    #[test]
    fn a_gpu_resource_name_is_refused_once_and_by_the_rule_that_reads_it() {
        let compose = |resources: &str| {
            format!("services:\n  t:\n    image: x\n    deploy:\n      resources:\n{resources}")
        };
        // Under `reservations`, GPU011 reads the key and says why Compose
        // refuses it: PROJ001 has nothing of its own to say.
        let text = compose("        reservations:\n          nvidia.com/gpu: 4\n");
        let found = refusals(&project(&[("/p/compose.yaml", &text)], &[]));
        assert!(!found.is_empty());
        assert!(
            found
                .iter()
                .all(|(_, _, kind)| *kind == RefusalKind::ConfigReportedBy(RuleCode::GPU011)),
            "{found:?}"
        );
        // Directly under `deploy.resources` no rule reads it: the schema's
        // refusal is the project's, at the key.
        let text = compose("        nvidia.com/gpu: 4\n");
        assert_eq!(
            refusals(&project(&[("/p/compose.yaml", &text)], &[])),
            [(
                "nvidia.com/gpu".to_string(),
                "services.t.deploy.resources additional properties 'nvidia.com/gpu' not allowed"
                    .to_string(),
                RefusalKind::Config
            )]
        );
    }

    #[test]
    fn an_unreadable_dotenv_refuses_the_project_at_its_first_compose_file() {
        let files = [("/p/compose.yaml", SIZED), ("/p/.env", "S=8g\n")];
        let project = project(&files, &["/p/.env"]);
        assert_eq!(
            refusals(&project),
            [(
                "services:".to_string(),
                "open /p/.env: permission denied".to_string(),
                RefusalKind::Config
            )]
        );
        // A `.env` that is not there is no mistake (a gitignored one).
        let project = self::project(&files[..1], &[]);
        assert_eq!(refusals(&project), []);
    }

    #[test]
    fn an_unreadable_file_a_reference_names_is_refused_at_the_reference() {
        let files = [
            (
                "/p/compose.yaml",
                "include:\n  - inc.yaml\nservices:\n  t:\n    image: x\n    extends:\n      file: base.yaml\n      service: b\n    env_file: vars.env\n",
            ),
            ("/p/inc.yaml", "services:\n  i:\n    image: x\n"),
            ("/p/base.yaml", "services:\n  b:\n    shm_size: 8g\n"),
            ("/p/vars.env", "A=1\n"),
        ];
        let project = project(&files, &["/p/inc.yaml", "/p/base.yaml", "/p/vars.env"]);
        let mut found = refusals(&project);
        found.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            found,
            [
                (
                    "extends".to_string(),
                    "open /p/base.yaml: permission denied".to_string(),
                    RefusalKind::Config
                ),
                (
                    "inc.yaml".to_string(),
                    "open /p/inc.yaml: permission denied".to_string(),
                    RefusalKind::Config
                ),
                (
                    "vars.env".to_string(),
                    "open /p/vars.env: permission denied".to_string(),
                    RefusalKind::Config
                ),
            ]
        );
        let t = project.service("t").expect("t");
        assert!(t.refused.is_some(), "its container is refused");
        // Missing, the extended file and the env file are only not in this
        // checkout; an `include` is refused either way.
        let project = self::project(&files[..1], &[]);
        let kinds: Vec<_> = refusals(&project)
            .into_iter()
            .map(|(at, _, kind)| (at, kind))
            .collect();
        assert!(
            kinds.contains(&("inc.yaml".to_string(), RefusalKind::Config))
                && kinds.contains(&("extends".to_string(), RefusalKind::MissingFile))
                && kinds.contains(&("vars.env".to_string(), RefusalKind::MissingFile)),
            "{kinds:?}"
        );
    }

    #[test]
    fn a_directory_named_as_a_file_is_refused() {
        let files = [
            (
                "/p/compose.yaml",
                "services:\n  t:\n    image: x\n    extends:\n      file: base\n      service: b\n    env_file: vars\n",
            ),
            ("/p/base/compose.yaml", "services: {}\n"),
            ("/p/vars/a.env", "A=1\n"),
        ];
        let mut found = refusals(&project(&files, &[]));
        found.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            found,
            [
                (
                    "extends".to_string(),
                    "read /p/base: is a directory".to_string(),
                    RefusalKind::Config
                ),
                (
                    "vars".to_string(),
                    "`env_file`: read /p/vars: is a directory (Compose refuses the project)"
                        .to_string(),
                    RefusalKind::Config
                ),
            ]
        );
    }
}
