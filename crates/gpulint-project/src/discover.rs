//! Which files make a Compose project, as Compose finds them
//! (compose-go v2.9.1 `cli/options.go`, docker/compose v2.40.3
//! `cmd/compose/compose.go`), run in the directory of the file linted:
//!
//! - the `.env` of that directory is read first; a `COMPOSE_FILE` there
//!   names the files (split at `COMPOSE_PATH_SEPARATOR`, default `:`,
//!   relative to that directory), and then no override is added;
//! - otherwise the first of `compose.yaml`, `compose.yml`,
//!   `docker-compose.yml`, `docker-compose.yaml` that exists (Compose warns
//!   when there are several), then the first of `compose.override.yml`,
//!   `compose.override.yaml`, `docker-compose.override.yml`,
//!   `docker-compose.override.yaml` merged over it.
//!
//! A compose file Compose would not pick by itself is judged as users run
//! it: merged over the directory's project when it only completes that
//! project's services (an overlay run with `-f base -f overlay`), as part
//! of a project that `extends` or `include`s it, or else on its own. A
//! file that `COMPOSE_FILE` in a directory above names (`sub/compose.yaml`)
//! is judged in that directory's project too, and the project `COMPOSE_FILE`
//! makes in a file's own directory is linted with it even when it does not
//! load the file (it may load nothing that is linted).

use super::Workspace;
use super::env::Environment;
use crate::syntax::tree::Kind;
use std::path::{Path, PathBuf};

/// The base files Compose looks for, in its order of preference.
pub const DEFAULT_FILES: &[&str] = &[
    "compose.yaml",
    "compose.yml",
    "docker-compose.yml",
    "docker-compose.yaml",
];
/// The override files it merges over the base, in its order of preference.
pub const DEFAULT_OVERRIDES: &[&str] = &[
    "compose.override.yml",
    "compose.override.yaml",
    "docker-compose.override.yml",
    "docker-compose.override.yaml",
];

/// Whether `path` has one of the override names Compose looks for.
fn is_default_override(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| DEFAULT_OVERRIDES.contains(&name))
}

/// How Compose is asked to load a project: where it runs and its files.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProjectSpec {
    /// Where `docker compose` runs: its `.env` is read first.
    pub run_dir: PathBuf,
    /// The compose files, in merge order (`-f`, or as discovered).
    pub files: Vec<PathBuf>,
    pub how: Discovery,
}

/// How a project's files were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Discovery {
    /// Compose's own discovery: a default file and its override.
    Default,
    /// `COMPOSE_FILE` in the directory's `.env`.
    ComposeFile,
    /// A `[compose] projects` set in `gpulint.toml`.
    Configured,
    /// A file merged over the directory's project (`-f base -f overlay`).
    Overlay,
    /// A file run on its own (`-f file`).
    Alone,
}

impl ProjectSpec {
    /// A file run on its own.
    pub fn alone(path: &Path) -> ProjectSpec {
        ProjectSpec {
            run_dir: dir_of(path),
            files: vec![path.to_path_buf()],
            how: Discovery::Alone,
        }
    }

    /// Whether `path` is one of the files Compose is given.
    pub fn names(&self, path: &Path) -> bool {
        let wanted = crate::vfs::normalize(path);
        self.files
            .iter()
            .any(|f| crate::vfs::normalize(f) == wanted)
    }
}

/// The directory a file is in (`.` for a bare name).
pub fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The first of `names` that is a file in `dir`.
fn first_existing(ws: &Workspace, dir: &Path, names: &[&str]) -> Option<PathBuf> {
    names
        .iter()
        .map(|n| dir.join(n))
        .find(|p| ws.files.is_file(p))
}

/// The variables of `dir`'s `.env`, as discovery reads them (a `.env`
/// Compose cannot parse refuses the project when it is loaded; discovery
/// takes what could be read).
pub(crate) fn dotenv_of(ws: &Workspace, dir: &Path) -> Environment {
    let path = dir.join(".env");
    let mut env = Environment::default();
    if let Ok(text) = ws.files.read(&path) {
        let _ = env.read_file(&path, &text.source.text);
    }
    env
}

/// The project Compose discovers when run in `dir` (no search of parent
/// directories: a linted directory without a compose file is no project).
pub(crate) fn default_project(ws: &Workspace, dir: &Path) -> Option<ProjectSpec> {
    if let Some(spec) = compose_file_project(ws, dir) {
        return Some(spec);
    }
    let base = first_existing(ws, dir, DEFAULT_FILES)?;
    let mut files = vec![base];
    files.extend(first_existing(ws, dir, DEFAULT_OVERRIDES));
    Some(ProjectSpec {
        run_dir: dir.to_path_buf(),
        files,
        how: Discovery::Default,
    })
}

/// The project `COMPOSE_FILE` in `dir`'s `.env` names, if it names one:
/// what Compose run in `dir` loads before it looks for a `compose.yaml`.
pub fn compose_file_project(ws: &Workspace, dir: &Path) -> Option<ProjectSpec> {
    let env = dotenv_of(ws, dir);
    let list = env.value("COMPOSE_FILE")?;
    let separator = env.value("COMPOSE_PATH_SEPARATOR").unwrap_or(":");
    let separator = if separator.is_empty() { ":" } else { separator };
    // Every entry is a file, even an empty one: Compose makes it
    // absolute (`filepath.Abs("")` is the directory itself) and fails
    // to read it, which the load refuses at the `.env` line.
    let files: Vec<PathBuf> = list
        .split(separator)
        .map(|f| {
            if f.is_empty() {
                dir.join(".")
            } else {
                dir.join(f)
            }
        })
        .collect();
    Some(ProjectSpec {
        run_dir: dir.to_path_buf(),
        files,
        how: Discovery::ComposeFile,
    })
}

/// The projects `path` (a compose file) belongs to, in the order they are
/// judged: sets `configured` in `gpulint.toml` (canonical paths), else the
/// directory's project when it names, extends or includes the file, else
/// the directory's project with the file merged over it (an overlay), else
/// the file alone. `referencing` are projects elsewhere known to extend or
/// include it.
pub fn projects_of(
    ws: &Workspace,
    path: &Path,
    configured: &[Vec<PathBuf>],
    referencing: &[ProjectSpec],
) -> Vec<ProjectSpec> {
    let dir = dir_of(path);
    if !configured.is_empty()
        && let Some(canonical) = ws.files.canonicalize(path)
    {
        let sets: Vec<ProjectSpec> = configured
            .iter()
            .filter(|set| set.contains(&canonical))
            .map(|set| ProjectSpec {
                run_dir: set.first().map_or_else(|| dir.clone(), |f| dir_of(f)),
                files: set
                    .iter()
                    .map(|f| shown_like(f, &canonical, path))
                    .collect(),
                how: Discovery::Configured,
            })
            .collect();
        if !sets.is_empty() {
            return sets;
        }
    }
    // `COMPOSE_FILE` in the `.env` of a directory above names the file
    // (`COMPOSE_FILE=sub/compose.yaml`): Compose run there loads it, with
    // that directory's `.env` first.
    let named_above: Vec<ProjectSpec> = ancestors(&dir)
        .filter_map(|above| ws.default_project(&above))
        .filter(|spec| spec.how == Discovery::ComposeFile && spec.names(path))
        .collect();
    let mut found = Vec::new();
    let add = |found: &mut Vec<ProjectSpec>, spec: ProjectSpec| {
        if !found.contains(&spec) {
            found.push(spec);
        }
    };
    if let Some(default) = ws.default_project(&dir) {
        if default.names(path) {
            found.push(default);
            for spec in named_above {
                add(&mut found, spec);
            }
            return found;
        }
        let project = ws.project(&default);
        if project
            .file_index(path)
            .is_some_and(|i| project.file(i).role != super::FileRole::Env)
        {
            found.push(default);
        } else if is_default_override(path)
            && (default.how == Discovery::ComposeFile
                || default
                    .files
                    .iter()
                    .any(|f| is_default_override(f) && dir_of(f) == dir))
        {
            // Compose adds a default override only when `COMPOSE_FILE` is
            // unset, and only the first of their names it finds
            // (compose-go `WithDefaultConfigPath`): this file is in no
            // project run here, and judging it merged over the project (or
            // alone) would show a container Compose never makes.
            found.push(default);
        } else if is_overlay(ws, path, &project) {
            let mut files = default.files.clone();
            files.push(path.to_path_buf());
            return vec![ProjectSpec {
                run_dir: default.run_dir,
                files,
                how: Discovery::Overlay,
            }];
        } else if default.how == Discovery::ComposeFile {
            // The project `docker compose` runs in this directory is
            // linted with any compose file of it, even one it does not
            // load: it may load nothing that is linted (a `COMPOSE_FILE`
            // naming a missing file refuses every command run here).
            found.push(ProjectSpec::alone(path));
            found.push(default);
        }
    }
    for spec in named_above.into_iter().chain(referencing.iter().cloned()) {
        add(&mut found, spec);
    }
    if found.is_empty() {
        found.push(named_base(ws, path).unwrap_or_else(|| ProjectSpec::alone(path)));
    }
    found
}

/// The parts of a compose file's name between `compose.` (or
/// `docker-compose.`) and its extension: `compose.x.ollama.gpu.yml` has
/// `x`, `ollama` and `gpu`.
fn name_parts(name: &str) -> Option<Vec<&str>> {
    Some(
        after_compose_prefix(name)?
            .split('.')
            .filter(|part| !part.is_empty())
            .collect(),
    )
}

/// A compose file's name between `compose.` (or `docker-compose.`) and
/// `.yaml` (or `.yml`), if it is named so.
fn after_compose_prefix(name: &str) -> Option<&str> {
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))?;
    stem.strip_prefix("docker-compose.")
        .or_else(|| stem.strip_prefix("compose."))
}

/// The project an overlay named after another compose file of its
/// directory is run over (`-f compose.ollama.yml -f
/// compose.x.ollama.gpu.yml`): the one sibling whose name's parts are all
/// in the overlay's, fewer than its own, and whose services the overlay
/// completes. Judged alone, the overlay's services lack what their base
/// sets (an `ipc: host`, an image).
fn named_base(ws: &Workspace, path: &Path) -> Option<ProjectSpec> {
    let name = crate::vfs::file_name_text(path);
    let parts = name_parts(&name)?;
    let dir = dir_of(path);
    let mut bases = ws.files.list_files(&dir).into_iter().filter_map(|sibling| {
        let sibling = sibling.to_str()?.to_string();
        let base_parts = name_parts(&sibling)?;
        let named_after = sibling != name
            && !base_parts.is_empty()
            && base_parts.len() < parts.len()
            && base_parts.iter().all(|part| parts.contains(part));
        named_after.then(|| dir.join(&sibling))
    });
    let base = bases.next()?;
    if bases.next().is_some() {
        return None;
    }
    let project = ws.project(&ProjectSpec::alone(&base));
    is_overlay(ws, path, &project).then(|| ProjectSpec {
        run_dir: dir,
        files: vec![base, path.to_path_buf()],
        how: Discovery::Overlay,
    })
}

/// The directories above `dir`, nearest first, as written (`sub` has `.`
/// above it; an absolute path goes up to the root).
pub fn ancestors(dir: &Path) -> impl Iterator<Item = PathBuf> {
    let mut current = Some(crate::vfs::normalize(dir));
    std::iter::from_fn(move || {
        let dir = current.take()?;
        let above = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            // A relative directory has `.` above it, and `.` nothing.
            Some(_) if dir != Path::new(".") => PathBuf::from("."),
            _ => return None,
        };
        current = Some(above.clone());
        Some(above)
    })
}

/// The project `path` is merged over as an overlay (`-f base -f path`),
/// whatever its name: its directory's project, which it completes.
pub fn overlay_of(ws: &Workspace, path: &Path) -> Option<ProjectSpec> {
    if !may_have_services(ws, path) {
        return None;
    }
    let default = ws.default_project(&dir_of(path))?;
    if default.names(path) {
        return None;
    }
    let project = ws.project(&default);
    if project.file_index(path).is_some() || !is_overlay(ws, path, &project) {
        return None;
    }
    Some(default)
}

/// Whether `path`'s text could have a top-level `services` key at all.
/// Every walked YAML file beside a compose file (a Kubernetes manifest, a
/// CI config) asks whether it is an overlay; most answer no here without
/// a parse and without loading the directory's project. The key can only
/// be spelled without the word `services` through a double-quoted escape
/// (`"\x73ervices"`), which needs a backslash.
fn may_have_services(ws: &Workspace, path: &Path) -> bool {
    ws.files
        .read(path)
        .is_ok_and(|t| t.source.text.contains("services") || t.source.text.contains('\\'))
}

/// A configured file, shown next to the linted one when they share a
/// directory (so paths in messages are the ones the user gave).
fn shown_like(file: &Path, canonical: &Path, linted: &Path) -> PathBuf {
    match (file.parent(), file.file_name()) {
        (Some(dir), Some(name)) if Some(dir) == canonical.parent() => linted.with_file_name(name),
        _ => file.to_path_buf(),
    }
}

/// `docker-compose.gpu.yml`, `compose.cuda.yaml`: named like a compose file
/// with one more part, which is how projects name the files users add with
/// `-f` (`docker compose -f docker-compose.yml -f docker-compose.gpu.yml up`).
fn is_overlay_name(name: &str) -> bool {
    after_compose_prefix(name).is_some_and(|part| !part.is_empty())
}

/// Whether `path` is run merged over `project` (`-f base -f path`): its
/// services complete the project's (one of them names neither an `image`
/// nor a `build`, nor `extends` another, and the project defines it), or
/// it is named as an overlay of the base and adds to one of its services.
/// A file whose services `extends` another file is a project of its own
/// (speaches' `compose.cuda.yaml` extends `compose.yaml` and is run alone).
fn is_overlay(ws: &Workspace, path: &Path, project: &super::Project) -> bool {
    let Ok(text) = ws.files.read(path) else {
        return false;
    };
    let parsed = ws.yaml(&text.source);
    let Ok(yaml) = parsed.as_ref() else {
        return false;
    };
    let Some(root) = yaml.documents.first().and_then(|d| d.root) else {
        return false;
    };
    let keep = |t: &str| crate::model::variables::interpolate_alone(t);
    let Ok(tree) =
        crate::syntax::tree::Builder::new(yaml, 0, Default::default(), &keep).build(root)
    else {
        return false;
    };
    let Some(services) = tree.get("services") else {
        return false;
    };
    if !matches!(services.kind, Kind::Mapping(_)) {
        return false;
    }
    let entries = services.entries();
    if entries.iter().any(|s| s.value.get("extends").is_some()) {
        return false;
    }
    let shared = |name: &str| project.service(name).is_some();
    let completes = entries.iter().any(|s| {
        s.value.is_mapping()
            && s.value.get("image").is_none()
            && s.value.get("build").is_none()
            && shared(&s.key)
    });
    let named = is_overlay_name(&crate::vfs::file_name_text(path));
    completes || (named && entries.iter().any(|s| shared(&s.key)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::{Files, MemoryFs};

    fn workspace(files: &[(&str, &str)]) -> Workspace {
        Workspace::new(Files::snapshot(MemoryFs::new(
            files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())),
        )))
    }

    fn names(spec: &ProjectSpec) -> Vec<String> {
        spec.files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().to_string())
            .collect()
    }

    #[test]
    fn compose_picks_its_files_in_its_order() {
        let ws = workspace(&[
            ("/p/docker-compose.yaml", "services: {}\n"),
            ("/p/docker-compose.yml", "services: {}\n"),
            ("/p/compose.override.yaml", "services: {}\n"),
            ("/p/compose.override.yml", "services: {}\n"),
        ]);
        let spec = default_project(&ws, Path::new("/p")).unwrap();
        // `.yml` before `.yaml` for docker-compose and for overrides.
        assert_eq!(names(&spec), ["docker-compose.yml", "compose.override.yml"]);
        let ws = workspace(&[
            ("/p/compose.yaml", "services: {}\n"),
            ("/p/docker-compose.yml", "services: {}\n"),
        ]);
        assert_eq!(
            names(&default_project(&ws, Path::new("/p")).unwrap()),
            ["compose.yaml"]
        );
    }

    #[test]
    fn compose_file_in_dotenv_names_the_files_and_turns_the_override_off() {
        let ws = workspace(&[
            (
                "/p/.env",
                "COMPOSE_FILE=base.yaml;sub/gpu.yaml\nCOMPOSE_PATH_SEPARATOR=;\n",
            ),
            ("/p/compose.yaml", "services: {}\n"),
            ("/p/compose.override.yaml", "services: {}\n"),
            ("/p/base.yaml", "services: {}\n"),
            ("/p/sub/gpu.yaml", "services: {}\n"),
        ]);
        let spec = default_project(&ws, Path::new("/p")).unwrap();
        assert_eq!(spec.how, Discovery::ComposeFile);
        assert_eq!(
            spec.files,
            [
                PathBuf::from("/p/base.yaml"),
                PathBuf::from("/p/sub/gpu.yaml")
            ]
        );
        let ws = workspace(&[
            ("/p/.env", "COMPOSE_FILE=compose.yaml\n"),
            ("/p/compose.yaml", "services: {}\n"),
            ("/p/compose.override.yaml", "services: {}\n"),
        ]);
        assert_eq!(
            names(&default_project(&ws, Path::new("/p")).unwrap()),
            ["compose.yaml"]
        );
    }

    #[test]
    fn an_override_compose_file_leaves_out_is_in_no_project_of_its_own() {
        let override_text = "services:\n  t:\n    shm_size: 32g\n";
        let files = [
            ("/p/compose.yaml", "services:\n  t:\n    image: busybox\n"),
            ("/p/compose.override.yaml", override_text),
        ];
        let override_path = Path::new("/p/compose.override.yaml");
        let mut with_env = files.to_vec();
        with_env.push(("/p/.env", "COMPOSE_FILE=compose.yaml\n"));
        let ws = workspace(&with_env);
        let specs = projects_of(&ws, override_path, &[], &[]);
        let views: Vec<Vec<String>> = specs.iter().map(names).collect();
        assert_eq!(views, [["compose.yaml"]]);
        // Without `COMPOSE_FILE` Compose merges it over the base itself.
        let ws = workspace(&files);
        let specs = projects_of(&ws, override_path, &[], &[]);
        let views: Vec<Vec<String>> = specs.iter().map(names).collect();
        assert_eq!(views, [["compose.yaml", "compose.override.yaml"]]);
        // Unless an override name it prefers is there too.
        let mut with_yml = files.to_vec();
        with_yml.push(("/p/compose.override.yml", override_text));
        let ws = workspace(&with_yml);
        let specs = projects_of(&ws, override_path, &[], &[]);
        let views: Vec<Vec<String>> = specs.iter().map(names).collect();
        assert_eq!(views, [["compose.yaml", "compose.override.yml"]]);
    }

    #[test]
    fn an_overlay_named_after_a_sibling_is_run_over_it() {
        let overlay = "services:\n  ollama:\n    gpus: all\n";
        let ws = workspace(&[
            (
                "/p/compose.ollama.yml",
                "services:\n  ollama:\n    image: ollama/ollama\n    ipc: host\n",
            ),
            ("/p/compose.x.ollama.gpu.yml", overlay),
            (
                "/p/compose.webui.yml",
                "services:\n  webui:\n    image: w\n",
            ),
        ]);
        let specs = projects_of(&ws, Path::new("/p/compose.x.ollama.gpu.yml"), &[], &[]);
        let views: Vec<Vec<String>> = specs.iter().map(names).collect();
        assert_eq!(views, [["compose.ollama.yml", "compose.x.ollama.gpu.yml"]]);
        // A file that only shares a word with a sibling, and defines its
        // own services, is judged alone.
        let ws = workspace(&[
            (
                "/p/compose.ollama.yml",
                "services:\n  ollama:\n    image: ollama/ollama\n",
            ),
            (
                "/p/compose.ollama.gpu.yml",
                "services:\n  other:\n    image: x\n",
            ),
        ]);
        let specs = projects_of(&ws, Path::new("/p/compose.ollama.gpu.yml"), &[], &[]);
        let views: Vec<Vec<String>> = specs.iter().map(names).collect();
        assert_eq!(views, [["compose.ollama.gpu.yml"]]);
    }
}
