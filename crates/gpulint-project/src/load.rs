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
use crate::text::{SourceFile, TextRange};
use foldhash::{HashMap, HashMapExt};
use gpulint_base::codes::RuleCode;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    // A `.env` Compose cannot read refuses the project before any compose
    // file is read: said at the first one's first line, as a `.env` it
    // cannot parse is.
    let first_compose_file = loading
        .files
        .iter()
        .position(|f| f.role == FileRole::Project);
    if let Some(index) = first_compose_file {
        let text = &loading.files[index].source.text;
        let first_line = TextRange::new(0, text.find('\n').unwrap_or(text.len()));
        let refusals = std::mem::take(&mut loading.unplaced)
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
        loading.refusals.splice(0..0, refusals);
    }
    let profiles: Vec<String> = env
        .value("COMPOSE_PROFILES")
        .map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
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

impl Loading<'_> {
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

    /// Imports what `include:` names into a file's model (compose-go's
    /// `ApplyInclude`): each entry is loaded as a project of its own, with
    /// the including project's variables over its own `env_file`s (or its
    /// directory's `.env`), and its services, volumes, networks, secrets
    /// and configs brought in.
    fn include(
        &mut self,
        entry: &Entry,
        env: &Environment,
        working_dir: &Path,
        included: &mut Vec<PathBuf>,
        depth: usize,
    ) -> Model {
        let mut model = Model::default();
        let items: Vec<Arc<Node>> = match &entry.value.kind {
            Kind::Sequence(items) => items.clone(),
            // `include:` with nothing under it includes nothing.
            _ if entry.value.is_null() => return model,
            _ => {
                self.refuse(
                    "`include` must be a list",
                    Place::Node(entry.value.src),
                    RefusalKind::Config,
                );
                return model;
            }
        };
        if depth >= limits::MAX_INCLUDE_DEPTH {
            self.refuse(
                format!(
                    "`include` nests deeper than {} files (gpulint's limit)",
                    limits::MAX_INCLUDE_DEPTH
                ),
                Place::Node(entry.value.src),
                RefusalKind::Config,
            );
            return model;
        }
        for item in items {
            let (paths, project_directory, env_files) = match &item.kind {
                Kind::Scalar { .. } => (vec![item.clone()], None, Vec::new()),
                Kind::Mapping(_) => {
                    // compose-go includes each of an entry's paths, and
                    // an entry without one includes nothing (the schema is
                    // applied after `include:` is taken out of the model).
                    let Some(path) = item.get("path") else {
                        continue;
                    };
                    let list = |node: &Arc<Node>| -> Vec<Arc<Node>> {
                        match &node.kind {
                            Kind::Sequence(items) => items.clone(),
                            _ => vec![node.clone()],
                        }
                    };
                    (
                        list(path),
                        item.get("project_directory")
                            .and_then(|d| d.str().map(str::to_string)),
                        item.get("env_file").map(list).unwrap_or_default(),
                    )
                }
                Kind::Sequence(_) => {
                    self.refuse(
                        "an `include` entry is a path or a mapping",
                        Place::Node(item.src),
                        RefusalKind::Config,
                    );
                    continue;
                }
            };
            let Some(first) = paths
                .first()
                .and_then(|p| p.str())
                .map(|p| working_dir.join(p))
            else {
                continue;
            };
            let project_dir = match &project_directory {
                None => super::discover::dir_of(&first),
                Some(dir) => working_dir.join(dir),
            };
            if included.contains(&crate::vfs::normalize(&first)) {
                let chain: Vec<String> = included
                    .iter()
                    .chain(std::iter::once(&first))
                    .map(|p| p.display().to_string())
                    .collect();
                self.refuse(
                    format!("include cycle detected: {}", chain.join(" includes ")),
                    Place::Node(item.src),
                    RefusalKind::Config,
                );
                continue;
            }
            // The included project's own variables, under the including
            // project's (which win).
            let mut own = Environment::default();
            let env_paths: Vec<(PathBuf, Src)> = if env_files.is_empty() {
                let dotenv = project_dir.join(".env");
                if self.ws.files.is_file(&dotenv) {
                    vec![(dotenv, item.src)]
                } else {
                    Vec::new()
                }
            } else {
                env_files
                    .iter()
                    .filter_map(|f| Some((working_dir.join(f.str()?), f.src)))
                    .collect()
            };
            for (path, at) in env_paths {
                // An include's `env_file` that is not there refuses the
                // project (compose-go stats it): a mistake in the config.
                if !self.ws.files.is_file(&path) {
                    self.refuse(
                        format!(
                            "`include`: env_file {} cannot be read (Compose refuses the project: no such file)",
                            path.display()
                        ),
                        Place::Node(at),
                        RefusalKind::Config,
                    );
                    continue;
                }
                if let Some(file) =
                    self.open(&path, FileRole::Env, &project_dir, Some(Place::Node(at)))
                {
                    let source = self.files[file.index as usize].source.clone();
                    // Read over the including project's variables (which
                    // its `${...}` see first), later files of the list
                    // winning.
                    let mut lookup = env.clone();
                    lookup.merge_under(&own);
                    let before = lookup.clone();
                    match lookup.read_file_over(&file.path, &source.text) {
                        Ok(()) => {
                            for (name, var) in lookup.iter() {
                                if before.get(name) != Some(var) {
                                    own.set(name, var.clone());
                                }
                            }
                        }
                        Err(EnvError { message, range, .. }) => self.refuse(
                            format!("Compose cannot read {}: {message}", file.path.display()),
                            Place::Text {
                                file: file.index,
                                range,
                            },
                            RefusalKind::Config,
                        ),
                    }
                }
            }
            let mut included_env = env.clone();
            included_env.merge_under(&own);
            let key = format!(
                "{:?}|{}|{}",
                paths
                    .iter()
                    .map(|p| p.str().unwrap_or(""))
                    .collect::<Vec<_>>(),
                crate::vfs::normalize(&project_dir).display(),
                included_env.fingerprint()
            );
            let loaded = match self.included.get(&key) {
                // An include diamond: the same project is read once.
                Some(done) => done.clone(),
                None => {
                    let mut sub = Model::default();
                    for path in &paths {
                        let Some(name) = path.str() else { continue };
                        let full = working_dir.join(name);
                        let Some(file) = self.open(
                            &full,
                            FileRole::Included,
                            &project_dir,
                            Some(Place::Node(path.src)),
                        ) else {
                            continue;
                        };
                        self.merge_file(
                            &file,
                            &included_env,
                            &project_dir,
                            &mut sub,
                            included,
                            depth + 1,
                        );
                    }
                    self.included.insert(key, sub.clone());
                    sub
                }
            };
            // Entries of one `include:` import into each other too.
            let mut definitions = HashMap::new();
            let current = model
                .root
                .clone()
                .unwrap_or_else(|| empty_mapping(item.src));
            let root = self.import_at(&loaded, &current, &mut definitions, item.src);
            model.root = Some(root);
            for (name, defs) in loaded.definitions {
                model.definitions.entry(name).or_insert(defs);
            }
            for (name, found) in loaded.resets {
                model.resets.entry(name).or_default().extend(found);
            }
        }
        model
    }

    /// compose-go's `importResources`: each service, volume, network,
    /// secret and config of `imported` is added to `target`; one `target`
    /// already has, and differently, is a conflict refused at `at`.
    fn import_at(
        &mut self,
        imported: &Model,
        target: &Arc<Node>,
        definitions: &mut HashMap<String, Vec<Definition>>,
        at: Src,
    ) -> Arc<Node> {
        let Some(source) = &imported.root else {
            return target.clone();
        };
        let mut entries = target.entries().to_vec();
        for section in [
            "services", "volumes", "networks", "secrets", "configs", "models",
        ] {
            let Some(from) = source.entry(section) else {
                continue;
            };
            let position = entries.iter().position(|e| e.key == section);
            let mut to: Vec<Entry> = position
                .map(|i| entries[i].value.entries().to_vec())
                .unwrap_or_default();
            for resource in from.value.entries() {
                match to.iter().find(|e| e.key == resource.key) {
                    Some(existing) if !same_value(&existing.value, &resource.value) => {
                        let conflict = Refusal {
                            message: format!(
                                "{section}.{} conflicts with imported resource",
                                resource.key
                            ),
                            at: Place::Node(existing.key_src),
                            kind: RefusalKind::Config,
                            service: (section == "services").then(|| resource.key.clone()),
                        };
                        if !self.refusals.contains(&conflict) {
                            self.refusals.push(conflict);
                        }
                        let _ = at;
                    }
                    Some(_) => {}
                    None => {
                        to.push(resource.clone());
                        if section == "services"
                            && let Some(defs) = imported.definitions.get(&resource.key)
                        {
                            definitions.insert(resource.key.clone(), defs.clone());
                        }
                    }
                }
            }
            let kind = Kind::Mapping(to);
            let value = Arc::new(Node {
                keys: KeyIndex::of(&kind),
                kind,
                tag: None,
                src: from.value.src,
                entry_key: None,
            });
            match position {
                Some(i) => {
                    entries[i] = Entry {
                        value,
                        ..entries[i].clone()
                    }
                }
                None => entries.push(Entry {
                    key: section.to_string(),
                    key_src: from.key_src,
                    value,
                }),
            }
        }
        Arc::new(target.with_kind(Kind::Mapping(entries)))
    }

    /// Resolves `extends` for every service of one file's model (compose-go
    /// `ApplyExtends`): the base (in this file, or another one `file:`
    /// names) is resolved first, this file's `!reset`s applied to it, then
    /// the service merged over it. Returns the model and each service's
    /// definitions.
    fn apply_extends(
        &mut self,
        file: &FileContext,
        cfg: &Arc<Node>,
        env: &Environment,
        resets: &[Vec<String>],
        role: Role,
    ) -> (Arc<Node>, HashMap<String, Vec<Definition>>) {
        let mut definitions = HashMap::new();
        let Some(services) = cfg.entry("services") else {
            return (cfg.clone(), definitions);
        };
        if !services.value.is_mapping() {
            // `services:` with nothing under it too (compose-go's
            // `ApplyExtends`: services must be a mapping).
            self.refuse(
                "`services` must be a mapping (Compose refuses `services:` with no service under it)",
                Place::Node(services.value.src),
                RefusalKind::Config,
            );
            return (cfg.clone(), definitions);
        }
        let scope = Scope {
            file: file.clone(),
            services: services.value.clone(),
            resets: resets.to_vec(),
        };
        let mut resolved: HashMap<String, Resolved> = HashMap::new();
        let mut entries = Vec::new();
        for entry in services.value.entries() {
            let result = self.resolve_service(
                &scope,
                &entry.key,
                env,
                role,
                &mut resolved,
                &mut Vec::new(),
            );
            match result {
                Some(done) => {
                    definitions.insert(entry.key.clone(), done.definitions.clone());
                    entries.push(Entry {
                        value: done.node.clone(),
                        ..entry.clone()
                    });
                }
                None => {
                    definitions.insert(
                        entry.key.clone(),
                        vec![Definition {
                            key: entry.key_src,
                            map: entry.value.src,
                            role,
                        }],
                    );
                    entries.push(entry.clone());
                }
            }
        }
        let services = Arc::new(services.value.with_kind(Kind::Mapping(entries)));
        let root = Arc::new(
            cfg.with_kind(Kind::Mapping(
                cfg.entries()
                    .iter()
                    .map(|e| {
                        if e.key == "services" {
                            Entry {
                                value: services.clone(),
                                ..e.clone()
                            }
                        } else {
                            e.clone()
                        }
                    })
                    .collect(),
            )),
        );
        (root, definitions)
    }

    /// One service with its `extends` resolved (`None` when it has no
    /// usable definition: not a mapping). A base that cannot be found,
    /// or a cycle, is refused at the `extends` key, and the service is
    /// kept as written.
    fn resolve_service(
        &mut self,
        scope: &Scope,
        name: &str,
        env: &Environment,
        role: Role,
        resolved: &mut HashMap<String, Resolved>,
        chain: &mut Vec<(PathBuf, String)>,
    ) -> Option<Resolved> {
        if let Some(done) = resolved.get(name) {
            return Some(done.clone());
        }
        let entry = scope.services.entry(name)?.clone();
        let own = Definition {
            key: entry.key_src,
            map: entry.value.src,
            role,
        };
        if !entry.value.is_mapping() {
            return None;
        }
        let Some(extends) = entry.value.entry("extends").cloned() else {
            let done = Resolved {
                depth: 0,
                node: entry.value.clone(),
                definitions: vec![own],
            };
            resolved.insert(name.to_string(), done.clone());
            return Some(done);
        };
        let kept = |this: &mut Self, message: String, kind: RefusalKind| {
            this.refusals.push(Refusal {
                message,
                at: Place::Node(extends.key_src),
                kind,
                service: Some(name.to_string()),
            });
            Resolved {
                depth: 0,
                node: without_key(&entry.value, "extends"),
                definitions: vec![own.clone()],
            }
        };
        let (base_name, base_file) = match &extends.value.kind {
            Kind::Scalar { .. } => (extends.value.str().map(str::to_string), None),
            Kind::Mapping(_) => (
                extends
                    .value
                    .get("service")
                    .and_then(|s| s.str().map(str::to_string)),
                extends
                    .value
                    .get("file")
                    .and_then(|f| f.str().map(str::to_string)),
            ),
            Kind::Sequence(_) => (None, None),
        };
        let Some(base_name) = base_name else {
            let done = kept(
                self,
                format!("extends.{name}.service is required"),
                RefusalKind::Config,
            );
            resolved.insert(name.to_string(), done.clone());
            return Some(done);
        };
        let link = (crate::vfs::normalize(&scope.file.path), name.to_string());
        if chain.contains(&link) || chain.len() >= limits::MAX_EXTENDS_DEPTH {
            let names: Vec<&str> = chain.iter().map(|(_, n)| n.as_str()).collect();
            let message = if chain.contains(&link) {
                format!(
                    "`extends` makes a cycle: {} -> {name} (Compose refuses it: circular reference)",
                    names.join(" -> ")
                )
            } else {
                format!(
                    "`extends` chain deeper than {} services (gpulint's limit)",
                    limits::MAX_EXTENDS_DEPTH
                )
            };
            return Some(kept(self, message, RefusalKind::Config));
        }
        chain.push(link);
        let base = match &base_file {
            None => {
                if scope.services.entry(&base_name).is_none() {
                    chain.pop();
                    let done = kept(
                        self,
                        format!(
                            "`extends`: no service `{base_name}` in {} (Compose refuses it: service \"{base_name}\" not found)",
                            file_name(&scope.file.path)
                        ),
                        RefusalKind::Config,
                    );
                    resolved.insert(name.to_string(), done.clone());
                    return Some(done);
                }
                self.resolve_service(scope, &base_name, env, role, resolved, chain)
            }
            Some(file) => {
                let path = scope.file.base_dir.join(file);
                let other_role = match scope.file.role {
                    FileRole::Included => FileRole::Included,
                    _ => FileRole::Extended,
                };
                let base_dir = super::discover::dir_of(&path);
                match self.open(
                    &path,
                    other_role,
                    &base_dir,
                    Some(Place::Node(extends.key_src)),
                ) {
                    None => {
                        chain.pop();
                        let done = Resolved {
                            depth: 0,
                            node: without_key(&entry.value, "extends"),
                            definitions: vec![own],
                        };
                        if let Some(last) = self.refusals.last_mut() {
                            last.service.get_or_insert_with(|| name.to_string());
                        }
                        resolved.insert(name.to_string(), done.clone());
                        return Some(done);
                    }
                    Some(other) => {
                        // The extended file: interpolated with the same
                        // variables; its own `include` and validation are
                        // not processed.
                        let docs = self.documents(&other, env);
                        let mut base_model = None;
                        for doc in docs {
                            let (stripped, resets) = take_resets(&doc);
                            // compose-go loads it as a file of its own
                            // (`loadYamlFile`): its sequences made unique and
                            // put in the canonical form before the service
                            // that extends it is merged over them, so a
                            // `gpus: all` there is a list that a later list
                            // is appended to (and a string cannot override).
                            base_model = Some((canonical(&enforce_unicity(&stripped)), resets));
                        }
                        match base_model.and_then(|(doc, resets)| {
                            let services = doc.get("services")?.clone();
                            Some((services, resets))
                        }) {
                            Some((services, resets)) if services.get(&base_name).is_some() => {
                                let other_scope = Scope {
                                    file: other.clone(),
                                    services,
                                    resets,
                                };
                                let other_role = if other_role == FileRole::Included {
                                    Role::Included
                                } else {
                                    Role::Extended
                                };
                                let mut other_resolved = HashMap::new();
                                self.resolve_service(
                                    &other_scope,
                                    &base_name,
                                    env,
                                    other_role,
                                    &mut other_resolved,
                                    chain,
                                )
                            }
                            _ => {
                                chain.pop();
                                let done = kept(
                                    self,
                                    format!(
                                        "`extends`: no service `{base_name}` in {file} (Compose refuses it: service \"{base_name}\" not found)"
                                    ),
                                    RefusalKind::Config,
                                );
                                resolved.insert(name.to_string(), done.clone());
                                return Some(done);
                            }
                        }
                    }
                }
            }
        };
        chain.pop();
        let Some(base) = base else {
            let done = Resolved {
                depth: 0,
                node: without_key(&entry.value, "extends"),
                definitions: vec![own],
            };
            resolved.insert(name.to_string(), done.clone());
            return Some(done);
        };
        // This file's resets of the service apply to the base copy.
        let own_resets: Vec<Vec<String>> = scope
            .resets
            .iter()
            .filter(|p| p.len() > 2 && p[0] == "services" && p[1] == name)
            .map(|p| p[2..].to_vec())
            .collect();
        let source = apply_resets(&base.node, &own_resets);
        let service = without_key(&entry.value, "extends");
        let mut path = vec!["services".to_string(), "x".to_string()];
        let merged = match &source.kind {
            Kind::Mapping(_) => super::merge::merge_mappings(&source, &service, &mut path),
            _ => merge(&source, &service, &mut path),
        };
        let node = match merged {
            Ok(node) => node,
            Err(error) => {
                self.refuse(
                    format!("Compose cannot extend `{name}`: {}", error.message),
                    Place::Node(error.node.src),
                    RefusalKind::Config,
                );
                service
            }
        };
        let mut definitions = base.definitions;
        for d in &mut definitions {
            if d.role == Role::Project {
                d.role = Role::Extended;
            }
        }
        definitions.push(own.clone());
        let depth = base.depth + 1;
        if depth > limits::MAX_EXTENDS_DEPTH {
            let done = kept(
                self,
                format!(
                    "`extends` chain deeper than {} services (gpulint's limit)",
                    limits::MAX_EXTENDS_DEPTH
                ),
                RefusalKind::Config,
            );
            resolved.insert(name.to_string(), done.clone());
            return Some(done);
        }
        let done = Resolved {
            node,
            definitions,
            depth,
        };
        resolved.insert(name.to_string(), done.clone());
        Some(done)
    }

    /// The services of the merged model, read with their environment,
    /// definitions and built images.
    fn services(&mut self, model: &Model, env: &Environment) -> Vec<Service> {
        let Some(root) = &model.root else {
            return Vec::new();
        };
        let Some(services) = root.get("services") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in services.entries() {
            // A service with nothing under it, or not a mapping: the
            // schema refuses it (`services.x must be a mapping`).
            if !entry.value.is_mapping() {
                continue;
            }
            let definitions = model
                .definitions
                .get(&entry.key)
                .cloned()
                .unwrap_or_else(|| {
                    vec![Definition {
                        key: entry.key_src,
                        map: entry.value.src,
                        role: Role::Project,
                    }]
                });
            let from_env_files = self.env_file_vars(&entry.key, &entry.value, env);
            let env_lookup = |name: &str| env.value(name).map(str::to_string);
            let mut service = Service::read(
                &entry.key,
                &entry.value,
                definitions.clone(),
                0,
                Reading {
                    env: &env_lookup,
                    from_env_files,
                    named_volumes: root.get("volumes").map(|v| &**v),
                },
            );
            let home = home_definition(&service, &definitions);
            service.key = definitions[home].key;
            service.map = definitions[home].map;
            service.resets = model.resets.get(&entry.key).cloned().unwrap_or_default();
            if let Some(build) = &service.build {
                service.built_image = self.built_image(build, &entry.value).map(Arc::new);
            }
            out.push(service);
        }
        crate::model::compose::settle_build_evidence(&mut out);
        // A refusal about one service is what its container gets.
        for refusal in &self.refusals {
            if let Some(name) = &refusal.service
                && let Some(service) = out.iter_mut().find(|s| s.name == *name)
            {
                service
                    .refused
                    .get_or_insert_with(|| refusal.message.clone());
            }
        }
        out
    }

    /// The variables a service's `env_file`s set, each reported at its
    /// entry. A required one that is missing makes Compose refuse the
    /// service (the file is not in this checkout).
    fn env_file_vars(&mut self, name: &str, service: &Node, env: &Environment) -> Vec<ComposeEnv> {
        let Some(entries) = service.get("env_file") else {
            return Vec::new();
        };
        let items: Vec<Arc<Node>> = match &entries.kind {
            Kind::Sequence(items) => items.clone(),
            _ if entries.is_null() => Vec::new(),
            _ => vec![entries.clone()],
        };
        let mut vars: Vec<ComposeEnv> = Vec::new();
        for item in items {
            let (path, required) = match &item.kind {
                Kind::Mapping(_) => (
                    item.get("path").and_then(|p| p.str().map(str::to_string)),
                    item.get("required").and_then(|r| r.str()) != Some("false"),
                ),
                _ => (item.str().map(str::to_string), true),
            };
            let Some(path) = path else { continue };
            let base = self.files[item.src.file as usize].base_dir.clone();
            let full = base.join(&path);
            if !self.ws.files.is_file(&full) {
                if required {
                    // Something that is there but is no file (a device, a
                    // FIFO) is refused without being read or waited on.
                    // A directory is a mistake in the config wherever it
                    // is checked out: Compose cannot read it.
                    let (why, kind) = if self.ws.files.is_dir(&full) {
                        (
                            format!("read {}: is a directory", full.display()),
                            RefusalKind::Config,
                        )
                    } else if self.ws.files.canonicalize(&full).is_some() {
                        (
                            format!("{path} cannot be read here (not a regular file)"),
                            RefusalKind::MissingFile,
                        )
                    } else {
                        (format!("{path} is missing"), RefusalKind::MissingFile)
                    };
                    self.refusals.push(Refusal {
                        message: format!("`env_file`: {why} (Compose refuses the project)"),
                        at: Place::Node(item.src),
                        kind,
                        service: Some(name.to_string()),
                    });
                }
                continue;
            }
            let Some(file) = self.open(&full, FileRole::Env, &base, Some(Place::Node(item.src)))
            else {
                // There and unreadable (required or not, Compose refuses):
                // the service's container is refused.
                if let Some(last) = self.refusals.last_mut()
                    && last.at == Place::Node(item.src)
                {
                    last.service.get_or_insert_with(|| name.to_string());
                }
                continue;
            };
            // Each env file is read on its own, its `${VAR}` looked up in
            // the project's variables.
            let source = self.files[file.index as usize].source.clone();
            let read = match env.parse_file(&full, &source.text) {
                Ok(read) => read,
                Err(error) => {
                    self.refusals.push(Refusal {
                        message: format!(
                            "Compose cannot read {}: {}",
                            full.display(),
                            error.message
                        ),
                        at: Place::Text {
                            file: file.index,
                            range: error.range,
                        },
                        kind: RefusalKind::Config,
                        service: Some(name.to_string()),
                    });
                    continue;
                }
            };
            for (var_name, var) in read {
                vars.retain(|v| v.name != var_name);
                vars.push(ComposeEnv {
                    name: var_name.clone(),
                    value: match &var.value {
                        super::env::Value::Known(v) => Some(v.clone()),
                        super::env::Value::Unknown(_) => None,
                    },
                    at: item.src,
                    key: None,
                    from_file: Some((file.index, var.range)),
                });
            }
        }
        vars
    }

    /// The image a service's `build:` produces, when its Dockerfile can be
    /// read: the context relative to the file that writes it, the
    /// Dockerfile relative to the context (or `dockerfile_inline`).
    fn built_image(
        &mut self,
        build: &crate::model::compose::BuildSpec,
        service: &Node,
    ) -> Option<BuiltImage> {
        if let Some(inline) = &build.dockerfile_inline {
            return BuiltImage::from_dockerfile(
                None,
                &inline.value,
                build.target.as_deref(),
                &build.args,
            );
        }
        let (context, base) = match &build.context {
            Some(context) => (
                context.value.clone(),
                self.files[context.node.file as usize].base_dir.clone(),
            ),
            None => (
                ".".to_string(),
                self.files[service.src.file as usize].base_dir.clone(),
            ),
        };
        // Remote contexts (git URLs, tarballs) are not read.
        if context.contains("://")
            || context.starts_with("git@")
            || context.starts_with("github.com/")
        {
            return None;
        }
        let dockerfile = crate::vfs::normalize(
            &base
                .join(&context)
                .join(build.dockerfile.as_deref().unwrap_or("Dockerfile")),
        );
        let text = self.ws.files.read(&dockerfile).ok()?;
        let model = self.ws.dockerfile(&text.source);
        BuiltImage::from_model(
            Some(text.source),
            &model,
            build.target.as_deref(),
            &build.args,
        )
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

/// A file's source, for tests and callers that need it by index.
pub fn source_of(project: &Project, index: u32) -> &Arc<SourceFile> {
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
