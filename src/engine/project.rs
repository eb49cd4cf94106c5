//! Finding the other files of a compose project and reading them: the
//! default override file Compose loads next to the base file, an overlay
//! users run with `-f base -f overlay` (`docker-compose.gpu.yml` next to a
//! base that defines the same services), the files `COMPOSE_FILE` names in
//! the project's `.env`, or a set named in `gpulint.toml` (`[compose]
//! projects`); the files `extends:` names; and the `.env` that interpolates
//! them all.

use super::config::Config;
use super::session::Session;
use super::{FileError, build};
use crate::model::compose::{ComposeFile, Service};
use crate::model::project::{Definition, Layer, merge_definitions};
use crate::model::variables::Variables;
use crate::syntax::yaml::{NodeId, Yaml};
use crate::text::SourceFile;
use crate::vfs::System;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// At most this many files are read for one project (its files and what
/// their `extends:` name, transitively).
const MAX_PROJECT_FILES: usize = 64;
/// An `extends:` chain longer than this is refused rather than followed.
const MAX_EXTENDS_DEPTH: usize = 64;

/// The base files Compose looks for, in its order of preference.
const BASE_FILES: &[&str] = &[
    "compose.yaml",
    "compose.yml",
    "docker-compose.yaml",
    "docker-compose.yml",
];
/// The override files it merges over the base, in its order of preference.
const OVERRIDE_FILES: &[&str] = &[
    "compose.override.yaml",
    "compose.override.yml",
    "docker-compose.override.yaml",
    "docker-compose.override.yml",
];

/// A file's text as the session's file system has it (an open editor
/// buffer over the disk for the language server).
fn read_text(system: &dyn System, path: &Path) -> Result<String, (FileError, String)> {
    system
        .read(path)
        .map(|(text, _)| text)
        .map_err(|(e, text)| (e.into(), text))
}

/// The files of the project `path` belongs to, in merge order, and its
/// position among them; `None` when it is linted alone.
pub fn project_files(
    system: &dyn System,
    path: &Path,
    config: &Config,
) -> Option<(Vec<PathBuf>, usize)> {
    if !config.compose_projects.is_empty() {
        let canonical = system.canonicalize(path)?;
        if let Some(found) = configured_project(path, &canonical, config) {
            return Some(found);
        }
    }
    if let Some(found) = compose_file_variable(system, path) {
        return Some(found);
    }
    // A path that does not exist cannot be its own base or override below.
    let name = path.file_name()?.to_str()?;
    let first_existing = |names: &[&str]| {
        names
            .iter()
            .map(|n| path.with_file_name(n))
            .find(|p| system.is_file(p))
    };
    if BASE_FILES.contains(&name) {
        // Compose uses the first base file it finds; another one is not its base.
        let base = first_existing(BASE_FILES)?;
        if base.file_name() != path.file_name() {
            return None;
        }
        return Some((vec![path.to_path_buf(), first_existing(OVERRIDE_FILES)?], 0));
    }
    if OVERRIDE_FILES.contains(&name) {
        let chosen = first_existing(OVERRIDE_FILES)?;
        if chosen.file_name() != path.file_name() {
            return None;
        }
        return Some((vec![first_existing(BASE_FILES)?, path.to_path_buf()], 1));
    }
    if is_overlay_name(name) {
        let base = first_existing(BASE_FILES)?;
        if shares_a_service(system, &base, path) {
            return Some((vec![base, path.to_path_buf()], 1));
        }
    }
    // `docker-compose-gpu.yml` is as often a whole second project, run on
    // its own with `-f` (SuperAGI's), as an overlay of the base (azimuth's,
    // run with `-f docker-compose.yml -f docker-compose-gpu.yml`): it is
    // merged only when a service it shares with the base cannot run
    // without the base's definition (it names neither `image` nor `build`).
    if is_hyphenated_overlay_name(name) {
        let base = first_existing(BASE_FILES)?;
        if shares_a_service(system, &base, path) && completes_a_base_service(system, &base, path) {
            return Some((vec![base, path.to_path_buf()], 1));
        }
    }
    None
}

/// `docker-compose-gpu.yml`, `compose-cuda.yaml`: a compose file's name
/// with a part added after a hyphen.
fn is_hyphenated_overlay_name(name: &str) -> bool {
    let Some(stem) = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
    else {
        return false;
    };
    stem.strip_prefix("docker-compose-")
        .or_else(|| stem.strip_prefix("compose-"))
        .is_some_and(|part| !part.is_empty() && part != "override")
}

/// Some service `overlay` shares with `base` names neither an `image` nor a
/// `build`: Compose cannot run it without the base's definition.
fn completes_a_base_service(system: &dyn System, base: &Path, overlay: &Path) -> bool {
    let base = service_names(system, base);
    services_of(system, overlay)
        .into_iter()
        .any(|(name, runs_alone)| !runs_alone && base.contains(&name))
}

/// `docker-compose.gpu.yml`, `compose.cuda.yaml`: named like a compose file
/// with one more part, which is how projects name the files users add with
/// `-f` (`docker compose -f docker-compose.yml -f docker-compose.gpu.yml up`).
fn is_overlay_name(name: &str) -> bool {
    let Some(stem) = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
    else {
        return false;
    };
    let Some(part) = stem
        .strip_prefix("docker-compose.")
        .or_else(|| stem.strip_prefix("compose."))
    else {
        return false;
    };
    !part.is_empty() && part != "override"
}

/// The service names of a compose file's first document.
fn service_names(system: &dyn System, path: &Path) -> Vec<String> {
    services_of(system, path)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// The services of a compose file's first document: each name, and whether
/// it could run on its own (it names an `image` or a `build`).
fn services_of(system: &dyn System, path: &Path) -> Vec<(String, bool)> {
    let Ok(text) = read_text(system, path) else {
        return Vec::new();
    };
    let Ok(yaml) = Yaml::parse(&text) else {
        return Vec::new();
    };
    let Some(root) = yaml.documents.first().and_then(|d| d.root) else {
        return Vec::new();
    };
    let Some(services) = yaml.get(root, "services") else {
        return Vec::new();
    };
    yaml.entries(services.value)
        .iter()
        .filter_map(|e| {
            let name = yaml.str(e.key)?.to_string();
            let service = yaml.resolve(e.value);
            let runs_alone = ["image", "build"]
                .iter()
                .any(|key| yaml.get(service, key).is_some());
            Some((name, runs_alone))
        })
        .collect()
}

/// An overlay is merged over the base only when it adds to the base's
/// services; a file of other services next to it is a project of its own,
/// and so is one whose services `extends:` another file (speaches'
/// `compose.cuda.yaml` extends `compose.yaml` and is run alone with `-f`).
fn shares_a_service(system: &dyn System, base: &Path, overlay: &Path) -> bool {
    let extends_a_file = read_text(system, overlay)
        .ok()
        .and_then(|text| Yaml::parse(&text).ok())
        .is_some_and(|yaml| {
            yaml.documents
                .first()
                .and_then(|d| d.root)
                // Which files it extends does not depend on the `.env`
                // here: only whether it names one.
                .is_some_and(|root| !extends_files(&yaml, root, None).is_empty())
        });
    if extends_a_file {
        return false;
    }
    let base = service_names(system, base);
    service_names(system, overlay)
        .iter()
        .any(|n| base.contains(n))
}

/// The project `COMPOSE_FILE` in the `.env` next to `path` names, when it
/// names `path` (Compose reads `COMPOSE_FILE` from the project's `.env`).
fn compose_file_variable(system: &dyn System, path: &Path) -> Option<(Vec<PathBuf>, usize)> {
    let dir = path.parent()?;
    let vars = read_dotenv(system, dir)?;
    let list = vars.get("COMPOSE_FILE")?;
    let separator = vars.get("COMPOSE_PATH_SEPARATOR").unwrap_or(":");
    let files: Vec<PathBuf> = list
        .split(separator)
        .filter(|f| !f.is_empty())
        .map(|f| dir.join(f))
        .collect();
    let name = path.file_name()?;
    let here = files.iter().position(|f| {
        f.file_name() == Some(name)
            && f.parent().and_then(|p| system.canonicalize(p)) == system.canonicalize(dir)
    })?;
    (files.len() > 1).then_some((files, here))
}

/// The `.env` of the project directory `dir`, if it has one.
pub fn read_dotenv(system: &dyn System, dir: &Path) -> Option<Variables> {
    let path = dir.join(".env");
    // Read as any linted file is: a FIFO or a device is refused, not waited on.
    let text = read_text(system, &path).ok()?;
    Some(Variables::parse(&path, &text))
}

/// The project `config` names that holds `path` (`canonical`), if any.
fn configured_project(
    path: &Path,
    canonical: &Path,
    config: &Config,
) -> Option<(Vec<PathBuf>, usize)> {
    for set in &config.compose_projects {
        // The set's paths are canonical (see `Config::compose_projects`).
        if let Some(here) = set.iter().position(|f| f == canonical) {
            // Shown next to the linted file when they share a directory.
            let shown = set
                .iter()
                .map(|f| match (f.parent(), f.file_name()) {
                    (Some(dir), Some(name)) if Some(dir) == canonical.parent() => {
                        path.with_file_name(name)
                    }
                    _ => f.clone(),
                })
                .collect();
            return Some((shown, here));
        }
    }
    None
}

/// Reads a compose document as Compose sees it in its project: with the
/// project's `.env` interpolating it, the images its services build, and
/// what the project's other files and the services it extends say about
/// each service merged in.
pub fn read_compose_document<'y>(
    session: &Session,
    yaml: &'y Yaml,
    root: NodeId,
    text: &str,
    path: &Path,
    config: &Config,
) -> Option<ComposeFile<'y>> {
    let system = session.system();
    let project = project_files(system, path, config);
    let vars = read_dotenv(system, &project_directory(path, project.as_ref()));
    let vars = vars.as_ref();
    let mut file = ComposeFile::from_document(yaml, root, vars)?;
    build::attach_built_images(session, &mut file, path);
    merge_project(session, &mut file, yaml, root, text, path, project, vars);
    attach_env_files(system, &mut file, path);
    attach_included(session, &mut file, path, vars);
    // Reservations merged from an override count too.
    file.settle_build_evidence();
    Some(file)
}

/// The project directory: where its first file is (Compose's default).
fn project_directory(path: &Path, project: Option<&(Vec<PathBuf>, usize)>) -> PathBuf {
    let dir = project
        .and_then(|(files, _)| files.first())
        .map_or(path, |f| f.as_path())
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    }
}

/// The project's `.env`, read once per compose document for what findings
/// say about it: the line that decides an interpolated value, and the
/// profiles `COMPOSE_PROFILES` enables.
pub struct DotEnv {
    pub vars: Variables,
    source: Arc<SourceFile>,
}

impl DotEnv {
    /// The `.env` of the project `path` belongs to, if it has one.
    pub fn of_project(system: &dyn System, path: &Path, config: &Config) -> Option<DotEnv> {
        let project = project_files(system, path, config);
        let vars = read_dotenv(system, &project_directory(path, project.as_ref()))?;
        let text = read_text(system, &vars.path).ok()?;
        let source = Arc::new(SourceFile::new(vars.path.clone(), text));
        Some(DotEnv { vars, source })
    }

    /// A related span at the line that sets `name`, saying `message`.
    fn label(&self, name: &str, message: String) -> Option<crate::diagnostic::Label> {
        let line = self.vars.line(name)?;
        let text = &self.source.text;
        let start = match line {
            0 | 1 => 0,
            _ => text
                .match_indices('\n')
                .nth(line - 2)
                .map_or(0, |(i, _)| i + 1),
        };
        let end = text[start..].find('\n').map_or(text.len(), |e| start + e);
        Some(crate::diagnostic::Label {
            range: crate::text::TextRange::new(start, end),
            message,
            file: Some(self.source.clone()),
        })
    }

    /// The profiles `COMPOSE_PROFILES` enables (comma-separated, as Compose
    /// reads it from the `.env` as from the shell; `*` enables every one).
    fn enables(&self, profile: &str) -> bool {
        self.vars.get("COMPOSE_PROFILES").is_some_and(|list| {
            list.split(',')
                .map(str::trim)
                .any(|p| p == "*" || p == profile)
        })
    }
}

/// A finding whose value is interpolated from the project's `.env` points
/// at the line of `.env` that decides it.
pub fn point_at_dotenv(
    dotenv: Option<&DotEnv>,
    text: &str,
    diagnostics: &mut [crate::diagnostic::Diagnostic],
) {
    let Some(dotenv) = dotenv else {
        return;
    };
    for d in diagnostics.iter_mut() {
        let Some(written) = text.get(d.range.start as usize..d.range.end as usize) else {
            continue;
        };
        let mut rest = written;
        let mut named: Vec<&str> = Vec::new();
        while let Some(at) = rest.find('$') {
            let after = rest[at + 1..].trim_start_matches('{');
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if len > 0 && !named.contains(&&after[..len]) {
                named.push(&after[..len]);
            }
            rest = &after[len..];
        }
        for name in named {
            let Some(value) = dotenv.vars.get(name) else {
                continue;
            };
            d.related.extend(dotenv.label(
                name,
                format!("`{name}={value}` in the project's .env decides this value"),
            ));
        }
    }
}

/// A file of the project, or one `extends:` names, as read.
struct Loaded {
    /// Where `extends: {file: ...}` in it is resolved from.
    path: PathBuf,
    key: PathBuf,
    source: Arc<SourceFile>,
    yaml: Option<Yaml>,
}

/// How a path is known among the loaded files.
fn file_key(system: &dyn System, path: &Path) -> PathBuf {
    system
        .canonicalize(path)
        .unwrap_or_else(|| path.to_path_buf())
}

/// The file an `extends: {file: ...}` in `from` names.
fn extends_target(from: &Path, file: &str) -> PathBuf {
    from.parent().unwrap_or(Path::new("")).join(file)
}

/// Merges what the project's other files, and the services each of its
/// services extends, say about `file`'s services. Files that cannot be read
/// or parsed are left out; a service whose `extends:` cannot be resolved
/// (a cycle, a missing service or file) is refused, as Compose refuses it.
/// Every file is interpolated with the project's variables `vars`.
#[allow(clippy::too_many_arguments)]
fn merge_project(
    session: &Session,
    file: &mut ComposeFile,
    yaml: &Yaml,
    root: NodeId,
    text: &str,
    path: &Path,
    project: Option<(Vec<PathBuf>, usize)>,
    vars: Option<&Variables>,
) {
    let system = session.system();
    let (files, here) = project.unwrap_or_else(|| (vec![path.to_path_buf()], 0));
    let any_extends = file.services.iter().any(|s| s.extends.is_some());
    if files.len() == 1 && !any_extends {
        return;
    }
    // Every file the project reaches: its own, then what `extends:` names.
    let mut loaded: Vec<Loaded> = vec![Loaded {
        path: path.to_path_buf(),
        key: file_key(system, path),
        source: Arc::new(SourceFile::new(path.to_path_buf(), text.to_string())),
        yaml: None,
    }];
    let mut index_of: HashMap<PathBuf, usize> = HashMap::new();
    index_of.insert(loaded[0].key.clone(), 0);
    let mut load = |loaded: &mut Vec<Loaded>, p: PathBuf| -> Option<usize> {
        let key = file_key(system, &p);
        if let Some(&i) = index_of.get(&key) {
            return Some(i);
        }
        if loaded.len() >= MAX_PROJECT_FILES {
            return None;
        }
        let text = read_text(system, &p).ok()?;
        let parsed = Yaml::parse(&text).ok()?;
        loaded.push(Loaded {
            path: p.clone(),
            key: key.clone(),
            source: Arc::new(SourceFile::new(p, text)),
            yaml: Some(parsed),
        });
        index_of.insert(key, loaded.len() - 1);
        Some(loaded.len() - 1)
    };
    let mut positions: Vec<Option<usize>> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        positions.push(if i == here {
            Some(0)
        } else {
            load(&mut loaded, f.clone())
        });
    }
    // Follow `extends: {file: ...}` from every loaded file, breadth first.
    let mut next = 0;
    while next < loaded.len() {
        let targets: Vec<PathBuf> = {
            let l = &loaded[next];
            let (y, r) = match &l.yaml {
                Some(y) => match y.documents.first().and_then(|d| d.root) {
                    Some(r) => (y, r),
                    None => {
                        next += 1;
                        continue;
                    }
                },
                None => (yaml, root),
            };
            extends_files(y, r, vars)
                .into_iter()
                .map(|f| extends_target(&l.path, &f))
                .collect()
        };
        for t in targets {
            load(&mut loaded, t);
        }
        next += 1;
    }
    let models: Vec<Option<ComposeFile>> = loaded
        .iter()
        .map(|l| {
            let (y, r) = match &l.yaml {
                Some(y) => (y, y.documents.first()?.root?),
                None => (yaml, root),
            };
            let mut model = ComposeFile::from_document(y, r, vars)?;
            build::attach_built_images(session, &mut model, &l.path);
            Some(model)
        })
        .collect();
    let layers: Vec<Option<Layer>> = loaded
        .iter()
        .zip(&models)
        .map(|(l, m)| {
            m.as_ref().map(|file| Layer {
                source: l.source.clone(),
                file,
            })
        })
        .collect();
    let resolver = Resolver {
        system,
        loaded: &loaded,
        layers: &layers,
    };
    for service in &mut file.services {
        let local = service.clone();
        let mut definitions: Vec<Definition> = Vec::new();
        let mut error = None;
        for (position, &index) in positions.iter().enumerate() {
            let Some(index) = index else { continue };
            let Some(layer) = &layers[index] else {
                continue;
            };
            if layer.file.service(&local.name).is_none() {
                continue;
            }
            match resolver.chain(index, &local.name) {
                Ok(chain) => {
                    for (i, s) in chain {
                        let is_local = position == here && i == 0 && s.name == local.name;
                        definitions.push(if is_local {
                            (None, &local)
                        } else {
                            (layers[i].as_ref(), s)
                        });
                    }
                }
                Err((why, missing_file)) => {
                    error.get_or_insert((why, missing_file));
                }
            }
        }
        if definitions.len() > 1 {
            merge_definitions(service, &definitions);
        }
        if let Some((why, missing_file)) = error {
            service.inherited.error = Some(why);
            service.inherited.error_is_missing_file = missing_file;
        }
    }
}

/// The `file:` of every `extends:` in a compose document.
fn extends_files(yaml: &Yaml, root: NodeId, vars: Option<&Variables>) -> Vec<String> {
    ComposeFile::from_document(yaml, root, vars)
        .map(|f| {
            f.services
                .iter()
                .filter_map(|s| s.extends.as_ref()?.file.clone())
                .collect()
        })
        .unwrap_or_default()
}

struct Resolver<'a> {
    system: &'a dyn System,
    loaded: &'a [Loaded],
    layers: &'a [Option<Layer<'a>>],
}

impl<'a> Resolver<'a> {
    /// The definitions of service `name` of loaded file `index`, base first:
    /// what it extends (transitively), then itself.
    /// `Err` says why, and whether it is only a file that is not here.
    #[allow(clippy::type_complexity)]
    fn chain(&self, index: usize, name: &str) -> Result<Vec<(usize, &'a Service)>, (String, bool)> {
        let mut chain = Vec::new();
        let mut seen: Vec<(usize, String)> = Vec::new();
        let (mut index, mut name) = (index, name.to_string());
        loop {
            let file_name = self.loaded[index]
                .path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            let Some(layer) = &self.layers[index] else {
                return Err((
                    format!("`extends`: {file_name} is not a compose file"),
                    false,
                ));
            };
            let Some(service) = layer.file.service(&name) else {
                return Err((
                    format!(
                        "`extends`: no service `{name}` in {file_name} (Compose refuses the project)"
                    ),
                    false,
                ));
            };
            if seen.iter().any(|(i, n)| *i == index && *n == name) {
                let path: Vec<&str> = seen.iter().map(|(_, n)| n.as_str()).collect();
                return Err((
                    format!(
                        "`extends` makes a cycle: {} -> {name} (Compose refuses the project)",
                        path.join(" -> ")
                    ),
                    false,
                ));
            }
            if seen.len() >= MAX_EXTENDS_DEPTH {
                return Err((
                    format!("`extends` chain deeper than {MAX_EXTENDS_DEPTH} services"),
                    false,
                ));
            }
            seen.push((index, name.clone()));
            chain.push((index, service));
            let Some(extends) = &service.extends else {
                break;
            };
            if let Some(target) = &extends.file {
                let key = file_key(
                    self.system,
                    &extends_target(&self.loaded[index].path, target),
                );
                match self.loaded.iter().position(|l| l.key == key) {
                    Some(i) => index = i,
                    None => {
                        return Err((
                            format!(
                                "`extends`: cannot read {target} (Compose refuses the project)"
                            ),
                            true,
                        ));
                    }
                }
            }
            name = extends.service.clone();
        }
        chain.reverse();
        Ok(chain)
    }
}

/// Walked YAML that a compose file names with `extends: {file: ...}` or
/// `include:` is a compose file whatever its name (`base.yml`,
/// `common/gpu.yaml`): it is linted as one, so the findings left to the
/// base (a GPU base with no /dev/shm) are reported there.
pub fn promote_referenced_compose_files(
    system: &dyn System,
    targets: &mut [super::discover::Target],
) {
    // A promoted file may name more (a chain across files): each round
    // reads only the files the one before promoted.
    let mut round: Vec<PathBuf> = targets
        .iter()
        .filter(|t| !t.manifest_only && t.skip.is_none())
        .map(|t| t.path.clone())
        .collect();
    while !round.is_empty() {
        round = promote_named_by(system, &round, targets);
    }
}

/// Promotes the walked YAML that `files` name; returns what it promoted.
fn promote_named_by(
    system: &dyn System,
    files: &[PathBuf],
    targets: &mut [super::discover::Target],
) -> Vec<PathBuf> {
    let mut referenced: Vec<PathBuf> = Vec::new();
    for path in files {
        let Ok(text) = read_text(system, path) else {
            continue;
        };
        if !text.contains("extends") && !text.contains("include") {
            continue;
        }
        let Ok(yaml) = Yaml::parse(&text) else {
            continue;
        };
        let Some(root) = yaml.documents.first().and_then(|d| d.root) else {
            continue;
        };
        // Promotion reads the names with their written defaults only, as
        // it always has: it runs over walked files, before any project.
        let mut names = extends_files(&yaml, root, None);
        let dir = path.parent().unwrap_or(Path::new(""));
        for entry in include_entries(&yaml, root, None) {
            names.extend(entry.paths.iter().cloned());
            // What the included files include is resolved from the entry's
            // project_directory (the next round would take their own
            // directory, which Compose does not use then).
            let Some(project_directory) = &entry.project_directory else {
                continue;
            };
            for included in &entry.paths {
                let Ok(text) = read_text(system, &dir.join(included)) else {
                    continue;
                };
                let Ok(inner) = Yaml::parse(&text) else {
                    continue;
                };
                let Some(inner_root) = inner.documents.first().and_then(|d| d.root) else {
                    continue;
                };
                for nested in include_entries(&inner, inner_root, None) {
                    names.extend(nested.paths.iter().map(|n| {
                        Path::new(project_directory)
                            .join(n)
                            .to_string_lossy()
                            .into_owned()
                    }));
                }
            }
        }
        referenced.extend(
            names
                .iter()
                .map(|n| file_key(system, &extends_target(path, n))),
        );
    }
    let mut promoted = Vec::new();
    if referenced.is_empty() {
        return promoted;
    }
    for target in targets.iter_mut().filter(|t| t.manifest_only) {
        if referenced.contains(&file_key(system, &target.path)) {
            target.manifest_only = false;
            promoted.push(target.path.clone());
        }
    }
    promoted
}

/// Adds what the service's `env_file:` entries set (and no `environment:`
/// of its project does) to the container's environment, as Compose does,
/// with the line that sets it: its own entries and, merged in the
/// project's order, those of its other definitions (an override, an
/// extended base); a required file that is missing makes Compose refuse
/// the project. Paths are relative to the compose file that names them.
fn attach_env_files(system: &dyn System, file: &mut ComposeFile, path: &Path) {
    for service in &mut file.services {
        // `environment:` from any definition (an override, an extended
        // base) wins over every `env_file`, as Compose resolves them.
        let from_definitions: Vec<String> = service.inherited.environment.keys().cloned().collect();
        let entries = env_file_entries(file.yaml, service.map);
        let merged = service.inherited.env_files.clone().unwrap_or_else(|| {
            service
                .env_files
                .iter()
                .map(|(name, required)| (None, name.clone(), *required))
                .collect()
        });
        // The position of each of this file's own entries among its entries.
        let mut own_index = 0;
        for (named_by, name, required) in merged {
            let entry = match &named_by {
                None => {
                    own_index += 1;
                    entries.get(own_index - 1).copied()
                }
                Some(_) => None,
            };
            let named_by = named_by.as_deref().unwrap_or(path);
            let env_path = named_by.parent().unwrap_or(Path::new("")).join(&name);
            let text = match read_text(system, &env_path) {
                Ok(text) => text,
                Err((error, _)) => {
                    if required && service.inherited.error.is_none() {
                        let why = if system.canonicalize(&env_path).is_some() {
                            format!("cannot be read here ({})", error.message)
                        } else {
                            "is missing".to_string()
                        };
                        service.inherited.error = Some(format!(
                            "`env_file`: {name} {why} (Compose refuses the project)"
                        ));
                        service.inherited.error_is_missing_file = true;
                    }
                    continue;
                }
            };
            let vars = Variables::parse(&env_path, &text);
            let source = Arc::new(SourceFile::new(env_path.clone(), text.clone()));
            let line_starts: Vec<usize> = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            for (var, value) in vars.iter() {
                if service.env(var).is_some() || from_definitions.iter().any(|d| d == var) {
                    continue;
                }
                let line = vars.line(var).unwrap_or(1);
                let start = line_starts.get(line - 1).copied().unwrap_or(0);
                let end = text[start..].find('\n').map_or(text.len(), |e| start + e);
                if var.starts_with("NCCL_") || var.starts_with("TORCH_NCCL_") {
                    service.gpu.nccl_env = true;
                }
                if crate::model::workload::selects_rdma(var, Some(value)) {
                    service.gpu.rdma = true;
                }
                service.inherited.environment.insert(
                    var.to_string(),
                    (
                        Some(value.to_string()),
                        crate::model::compose::Origin {
                            source: source.clone(),
                            range: crate::text::TextRange::new(start, end),
                            what: format!("`{var}` in {name}"),
                        },
                    ),
                );
                match entry {
                    Some(entry) => service
                        .inherited
                        .env_file_entries
                        .insert(var.to_string(), entry),
                    None => service.inherited.env_file_entries.remove(var),
                };
            }
        }
    }
}

/// The nodes of a service's `env_file:` entries, in the order
/// `Service::env_files` lists them (a string, or a mapping with a `path`).
fn env_file_entries(yaml: &Yaml, map: NodeId) -> Vec<NodeId> {
    let Some(entry) = yaml.get(map, "env_file") else {
        return Vec::new();
    };
    let items: Vec<NodeId> = match yaml.value(entry.value) {
        crate::syntax::yaml::Value::Sequence(items) => items.clone(),
        _ => vec![entry.value],
    };
    items
        .into_iter()
        .filter(|&item| {
            yaml.str(item).is_some()
                || yaml
                    .get(item, "path")
                    .is_some_and(|p| !yaml.is_null(p.value) && yaml.str(p.value).is_some())
        })
        .collect()
}

/// A finding about a service behind `profiles:` says so: the service is
/// linted like any other, but runs only with `--profile` (or
/// `COMPOSE_PROFILES`) naming one of them. When `COMPOSE_PROFILES` in the
/// project's `.env` enables one, a plain `docker compose up` starts it:
/// the note says that instead, with the `.env` line as a related span.
pub fn note_profiles(
    file: &ComposeFile,
    dotenv: Option<&DotEnv>,
    diagnostics: &mut [crate::diagnostic::Diagnostic],
) {
    for service in file.services.iter().filter(|s| !s.profiles.is_empty()) {
        let scope = file
            .yaml
            .range(service.key)
            .cover(file.yaml.range(service.map));
        let profiles = service
            .profiles
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let plural = if service.profiles.len() == 1 { "" } else { "s" };
        let enabled = dotenv.and_then(|d| {
            let profile = service.profiles.iter().find(|p| d.enables(p))?;
            let list = d.vars.get("COMPOSE_PROFILES")?;
            Some((d, profile, list))
        });
        let (said, related) = match enabled {
            Some((dotenv, profile, list)) => (
                format!(
                    "`{}` is in profile{plural} {profiles}: `COMPOSE_PROFILES={list}` in the project's .env enables `{profile}`, so `docker compose up` starts it",
                    service.name
                ),
                dotenv.label(
                    "COMPOSE_PROFILES",
                    format!("`COMPOSE_PROFILES={list}` enables profile `{profile}`"),
                ),
            ),
            None => (
                format!(
                    "`{}` is in profile{plural} {profiles}: it runs with `docker compose --profile {}`",
                    service.name, service.profiles[0]
                ),
                None,
            ),
        };
        for d in diagnostics
            .iter_mut()
            .filter(|d| d.range.start >= scope.start && d.range.end <= scope.end)
        {
            d.note = Some(match d.note.take() {
                Some(note) => format!("{note}; {said}"),
                None => said.clone(),
            });
            d.related.extend(related.clone());
        }
    }
}

/// Included files are followed this deep at most.
const MAX_INCLUDE_DEPTH: usize = 16;

/// One `include:` entry: `- other.yaml`, or the long form `- path: a.yaml`
/// / `- path: [a.yaml, b.yaml]` (merged as one included project; their
/// services are what it brings in) with its `project_directory` and
/// `env_file` (interpolated, as written).
struct IncludeEntry {
    node: NodeId,
    paths: Vec<String>,
    project_directory: Option<String>,
    env_files: Vec<String>,
}

fn include_entries(yaml: &Yaml, root: NodeId, vars: Option<&Variables>) -> Vec<IncludeEntry> {
    let Some(include) = yaml.get(root, "include") else {
        return Vec::new();
    };
    let known = |t: &str| match crate::model::variables::interpolate(t, vars) {
        crate::model::variables::Interpolated::Text(t) => t,
        _ => t.to_string(),
    };
    // A string or a list of strings.
    let strings = |node: NodeId| -> Vec<String> {
        match yaml.str(node) {
            Some(text) => vec![known(text)],
            None => yaml
                .items(node)
                .iter()
                .filter_map(|&i| yaml.str(i).map(known))
                .collect(),
        }
    };
    yaml.items(include.value)
        .iter()
        .filter_map(|&item| {
            if let Some(text) = yaml.str(item) {
                return Some(IncludeEntry {
                    node: item,
                    paths: vec![known(text)],
                    project_directory: None,
                    env_files: Vec::new(),
                });
            }
            let entry = yaml.get(item, "path")?;
            Some(IncludeEntry {
                node: item,
                paths: strings(entry.value),
                project_directory: yaml
                    .get(item, "project_directory")
                    .and_then(|e| yaml.str(e.value))
                    .map(known),
                env_files: yaml
                    .get(item, "env_file")
                    .map(|e| strings(e.value))
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// Reads the services the files `include:` names bring into the project
/// (transitively), as compose-go's `ApplyInclude` imports them: a service
/// this file also defines is a conflict Compose refuses, and so is an
/// include cycle, a file it cannot read or a missing `env_file`.
fn attach_included(
    session: &Session,
    file: &mut ComposeFile,
    path: &Path,
    vars: Option<&Variables>,
) {
    let entries = include_entries(file.yaml, file.root, vars);
    if entries.is_empty() {
        return;
    }
    let mut stack = vec![file_key(session.system(), path)];
    let mut included: Vec<(Service, String)> = Vec::new();
    let working_dir = path.parent().unwrap_or(Path::new(""));
    for entry in &entries {
        if let Err(why) = include_entry(
            session,
            entry,
            working_dir,
            vars,
            &mut stack,
            &mut included,
            0,
        ) {
            file.include_error.get_or_insert((entry.node, why));
        }
    }
    for service in &mut file.services {
        if let Some((_, from)) = included.iter().find(|(s, _)| s.name == service.name)
            && service.inherited.error.is_none()
        {
            service.inherited.error = Some(format!(
                "`include`: {from} also defines service `{}` (Compose refuses it: it conflicts with the imported resource)",
                service.name
            ));
        }
    }
    file.included = included.into_iter().map(|(s, _)| s).collect();
}

/// Imports one `include:` entry of a project whose working directory is
/// `working_dir` and whose variables are `vars`, as compose-go's
/// `ApplyInclude` does (measured with Compose 2.26.1):
/// - `path` and a relative `project_directory` and `env_file` are relative
///   to `working_dir`; `project_directory` defaults to the directory of the
///   first path;
/// - the included project is interpolated with the including project's
///   variables, and, for names those do not set, its `env_file`s (a later
///   one wins; a missing one is refused) or else the `.env` of its project
///   directory;
/// - the included files' own includes are relative to its project directory.
#[allow(clippy::too_many_arguments)]
fn include_entry(
    session: &Session,
    entry: &IncludeEntry,
    working_dir: &Path,
    vars: Option<&Variables>,
    stack: &mut Vec<PathBuf>,
    included: &mut Vec<(Service, String)>,
    depth: usize,
) -> Result<(), String> {
    let system = session.system();
    let Some(first) = entry.paths.first() else {
        return Ok(());
    };
    let project_directory = match &entry.project_directory {
        Some(dir) => working_dir.join(dir),
        None => working_dir
            .join(first)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    // A missing env_file refuses the project; its services are still
    // imported (with the files that are there), so that what refers to
    // them is not reported as dangling on top of the refusal.
    let mut refusal = None;
    let own = if entry.env_files.is_empty() {
        read_dotenv(system, &project_directory)
    } else {
        let mut own: Option<Variables> = None;
        for name in &entry.env_files {
            let env_path = working_dir.join(name);
            let Ok(text) = read_text(system, &env_path) else {
                refusal.get_or_insert(format!(
                    "`include`: env_file {name} cannot be read (Compose refuses the project)"
                ));
                continue;
            };
            let read = Variables::parse(&env_path, &text);
            own = Some(match own {
                Some(earlier) => read.over(&earlier),
                None => read,
            });
        }
        own
    };
    let included_vars = match (own, vars) {
        (Some(own), Some(parent)) => Some(parent.over(&own)),
        (Some(own), None) => Some(own),
        (None, parent) => parent.cloned(),
    };
    for name in &entry.paths {
        include_file(
            session,
            &working_dir.join(name),
            &project_directory,
            included_vars.as_ref(),
            stack,
            included,
            depth,
        )?;
    }
    refusal.map_or(Ok(()), Err)
}

fn include_file(
    session: &Session,
    path: &Path,
    project_directory: &Path,
    vars: Option<&Variables>,
    stack: &mut Vec<PathBuf>,
    included: &mut Vec<(Service, String)>,
    depth: usize,
) -> Result<(), String> {
    let shown = path.display().to_string();
    let system = session.system();
    let key = file_key(system, path);
    if stack.contains(&key) {
        return Err(format!("`include` makes a cycle through {shown}"));
    }
    if depth >= MAX_INCLUDE_DEPTH || included.len() > 10_000 {
        return Err(format!(
            "`include` nests deeper than {MAX_INCLUDE_DEPTH} files"
        ));
    }
    // A file that is not here is not a mistake in the config (see PROJ001).
    let Ok(text) = read_text(system, path) else {
        return Ok(());
    };
    let yaml = Yaml::parse(&text).map_err(|_| format!("`include`: {shown} is not valid YAML"))?;
    let Some(root) = yaml.documents.first().and_then(|d| d.root) else {
        return Ok(());
    };
    let services = ComposeFile::from_document(&yaml, root, vars)
        .map(|mut f| {
            build::attach_built_images(session, &mut f, path);
            f.services
        })
        .unwrap_or_default();
    let nested = include_entries(&yaml, root, vars);
    let file_name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    included.extend(services.into_iter().map(|s| (s, file_name.clone())));
    stack.push(key);
    for entry in &nested {
        include_entry(
            session,
            entry,
            project_directory,
            vars,
            stack,
            included,
            depth + 1,
        )?;
    }
    stack.pop();
    Ok(())
}
