//! Finding the files to lint: explicit paths always, directories walked in
//! parallel with `.gitignore` honoured, compose files recognised by name.

use super::config::{CONFIG_FILE_NAME, Config, ConfigError};
use super::{Skip, kustomize};
use crate::model::script::ScriptKind;
use foldhash::{HashMap, HashMapExt, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Compose file names: `compose.yaml`, `docker-compose.gpu.yml`,
/// `compose.cuda.yaml`, `fleet-compose.yml`, `app.compose.yaml`, ...
pub fn is_compose_file_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let Some(stem) = lower
        .strip_suffix(".yml")
        .or_else(|| lower.strip_suffix(".yaml"))
    else {
        return false;
    };
    let stem = stem.strip_prefix("docker-").unwrap_or(stem);
    stem == "compose"
        || ["compose.", "compose-", "compose_"]
            .iter()
            .any(|p| stem.starts_with(p))
        || [".compose", "-compose", "_compose"]
            .iter()
            .any(|s| stem.ends_with(s))
}

/// Dockerfile names: `Dockerfile`, `Containerfile`, `Dockerfile.gpu`,
/// `Dockerfile-cuda`, `train.Dockerfile`, `gpu_Dockerfile`, any case; not the files named
/// after them (`Dockerfile.dockerignore`, `Dockerfile.md`) or templates.
pub fn is_dockerfile_name(name: &str) -> bool {
    const NOT_DOCKERFILES: &[&str] = &[
        "dockerignore",
        "md",
        "txt",
        "rst",
        "sh",
        "py",
        "json",
        "yml",
        "yaml",
        "toml",
        "j2",
        "jinja",
        "jinja2",
        "tmpl",
        "tpl",
        "template",
        "orig",
        "bak",
        "swp",
        "erb",
        "mustache",
    ];
    let lower = name.to_ascii_lowercase();
    let named = ["dockerfile", "containerfile"].iter().any(|base| {
        lower == *base
            || lower
                .strip_prefix(base)
                .is_some_and(|rest| rest.starts_with(['.', '-', '_']))
            || lower
                .strip_suffix(base)
                .is_some_and(|stem| stem.ends_with(['.', '-', '_']) && stem.len() > 1)
    });
    let extension = lower.rsplit_once('.').map(|(_, e)| e);
    named && !extension.is_some_and(|e| NOT_DOCKERFILES.contains(&e))
}

/// Resolves the configuration for each file, caching per directory.
pub struct ConfigResolver {
    fixed: Option<Arc<Config>>,
    /// By directory, as given and as made absolute: keyed by the path's
    /// bytes, which hash faster than a `Path`'s components. Kept for the
    /// whole run: discovery fills it for every walked directory before the
    /// first file is checked, so forgetting it per chunk bounded nothing and
    /// made `check` look for each directory's `gpulint.toml` a second time.
    cache: Mutex<HashMap<std::ffi::OsString, Arc<Config>>>,
    defaults: std::sync::OnceLock<Arc<Config>>,
    select: Option<Vec<String>>,
    ignore: Vec<String>,
    /// The working directory relative paths are resolved against, read once
    /// (`std::path::absolute` asks the kernel for it on every call).
    cwd: Option<PathBuf>,
}

impl ConfigResolver {
    /// `fixed` is the `--config` file, used for everything; `select`/`ignore`
    /// from the command line override every config's selection.
    pub fn new(fixed: Option<Config>, select: Option<Vec<String>>, ignore: Vec<String>) -> Self {
        let fixed = fixed.map(|mut c| {
            Self::override_selection(&mut c, &select, &ignore);
            Arc::new(c)
        });
        Self {
            fixed,
            cache: Mutex::new(HashMap::new()),
            defaults: std::sync::OnceLock::new(),
            select,
            ignore,
            cwd: std::env::current_dir().ok(),
        }
    }

    fn override_selection(config: &mut Config, select: &Option<Vec<String>>, ignore: &[String]) {
        if select.is_some() || !ignore.is_empty() {
            let select = select.clone().unwrap_or_else(|| vec!["ALL".into()]);
            config.set_selection(&select, ignore);
        }
    }

    pub fn for_file(&self, file: &Path) -> Result<Arc<Config>, ConfigError> {
        self.for_file_through(&crate::vfs::Disk, file)
    }

    /// [`Self::for_file`], reading the `gpulint.toml` files through `system`
    /// (an editor's unsaved buffers, for the language server).
    pub fn for_file_through(
        &self,
        system: &dyn crate::vfs::System,
        file: &Path,
    ) -> Result<Arc<Config>, ConfigError> {
        if let Some(c) = &self.fixed {
            return Ok(c.clone());
        }
        let given = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if let Some(c) = self
            .cache
            .lock()
            .expect("config cache")
            .get(given.as_os_str())
        {
            return Ok(c.clone());
        }
        // The directory's ancestors as the user sees them: made absolute and
        // normalized lexically, without a syscall per path component.
        let absolute = match &self.cwd {
            Some(cwd) => cwd.join(given),
            None => given.to_path_buf(),
        };
        let dir = crate::vfs::normalize(&absolute);
        let config = self.for_dir(system, &dir)?;
        self.cache
            .lock()
            .expect("config cache")
            .insert(given.as_os_str().to_os_string(), config.clone());
        Ok(config)
    }

    /// The config of an absolute directory: its own `gpulint.toml`, else its
    /// parent's (so each file is read once per run, and each directory
    /// looked at once), else the defaults, shared by every such directory.
    fn for_dir(
        &self,
        system: &dyn crate::vfs::System,
        dir: &Path,
    ) -> Result<Arc<Config>, ConfigError> {
        if let Some(c) = self
            .cache
            .lock()
            .expect("config cache")
            .get(dir.as_os_str())
        {
            return Ok(c.clone());
        }
        let candidate = dir.join(CONFIG_FILE_NAME);
        let config = if system.is_file(&candidate) {
            let mut config = Config::load_through(system, &candidate)?;
            Self::override_selection(&mut config, &self.select, &self.ignore);
            Arc::new(config)
        } else if let Some(parent) = dir.parent() {
            self.for_dir(system, parent)?
        } else {
            self.defaults
                .get_or_init(|| {
                    // No globs or projects, so no directory to resolve them from.
                    let mut config = Config::default();
                    Self::override_selection(&mut config, &self.select, &self.ignore);
                    Arc::new(config)
                })
                .clone()
        };
        self.cache
            .lock()
            .expect("config cache")
            .insert(dir.as_os_str().to_os_string(), config.clone());
        Ok(config)
    }
}

/// A key whose byte order is `Path`'s order: its components compared in
/// turn, each by its kind (`/`, `.`, `..`, a name) and then its bytes.
/// Each component is written as its kind's rank, its bytes and a 0 byte,
/// which no component holds and which sorts a shorter name first.
fn component_order_key(path: &Path) -> Vec<u8> {
    use std::path::Component;
    let mut key = Vec::with_capacity(path.as_os_str().len() + 8);
    for component in path.components() {
        let rank = match component {
            Component::Prefix(_) => 1,
            Component::RootDir => 2,
            Component::CurDir => 3,
            Component::ParentDir => 4,
            Component::Normal(_) => 5,
        };
        key.push(rank);
        match component {
            Component::Normal(name) => key.extend_from_slice(name.as_encoded_bytes()),
            Component::Prefix(prefix) => {
                key.extend_from_slice(prefix.as_os_str().as_encoded_bytes())
            }
            Component::RootDir | Component::CurDir | Component::ParentDir => {}
        }
        key.push(0);
    }
    key
}

/// One file to lint.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    pub path: PathBuf,
    /// Named on the command line (always linted, whatever its name).
    pub explicit: bool,
    /// Found by walking and named like neither a compose file nor an
    /// `include` glob: linted only if it holds Kubernetes objects.
    pub manifest_only: bool,
    /// Part of a kustomize overlay: skipped, not linted.
    pub skip: Option<Skip>,
}

/// `.yaml` / `.yml`, any case.
pub fn is_yaml_file_name(path: &Path) -> bool {
    let lower = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    lower.ends_with(".yaml") || lower.ends_with(".yml")
}

/// Files that run commands, by name: shell and batch scripts, Makefiles,
/// Markdown, and GitHub Actions workflows (`.github/workflows/*.yml`).
pub fn script_kind(path: &Path) -> Option<ScriptKind> {
    let name = crate::vfs::file_name_text(path);
    let name = name.as_ref();
    if name.is_empty() {
        return None;
    }
    if crate::model::devcontainer::is_devcontainer_name(name) {
        return Some(ScriptKind::DevContainer);
    }
    let lower = name.to_ascii_lowercase();
    let extension = lower.rsplit_once('.').map(|(_, e)| e);
    if matches!(extension, Some("yml" | "yaml")) {
        let mut parents = path.parent()?.components().rev().map(|c| c.as_os_str());
        return (parents.next()? == "workflows" && parents.next()? == ".github")
            .then_some(ScriptKind::Workflow);
    }
    match extension {
        Some("sh" | "bash" | "zsh" | "sbatch" | "slurm") => Some(ScriptKind::Shell),
        Some("mk") => Some(ScriptKind::Makefile),
        // Podman Quadlet units (podman-container.unit(5)).
        Some("container") => Some(ScriptKind::Quadlet),
        Some("md" | "markdown") => Some(ScriptKind::Markdown),
        _ if matches!(name, "Makefile" | "makefile" | "GNUmakefile") => Some(ScriptKind::Makefile),
        _ => None,
    }
}

/// A path that could not be walked.
#[derive(Debug, Clone)]
pub struct DiscoveryError {
    pub path: PathBuf,
    pub message: String,
}

/// One file named twice is one input (`a/compose.yaml ./a/compose.yaml`,
/// a file named and walked, and with `by_identity` a link and its target,
/// or two hard links): the first name is kept, linted as named when any of
/// its names was. Paths are compared normalized; files by device and inode,
/// asked only when several paths were given (one walk meets a file once).
fn dedup_targets(targets: &mut Vec<Target>, by_identity: bool) {
    let mut by_path: HashMap<PathBuf, usize> = HashMap::default();
    let mut by_inode: HashMap<(u64, u64), usize> = HashMap::default();
    let mut kept: Vec<Target> = Vec::with_capacity(targets.len());
    for target in targets.drain(..) {
        let key = crate::vfs::normalize(&target.path);
        let identity = by_identity.then(|| file_identity(&target.path)).flatten();
        let seen = by_path
            .get(&key)
            .or_else(|| identity.and_then(|id| by_inode.get(&id)))
            .copied();
        if let Some(first) = seen {
            let first = &mut kept[first];
            if target.explicit {
                first.explicit = true;
                first.manifest_only = false;
            }
            continue;
        }
        by_path.insert(key, kept.len());
        if let Some(id) = identity {
            by_inode.insert(id, kept.len());
        }
        kept.push(target);
    }
    *targets = kept;
}

/// A file's device and inode, through links.
#[cfg(unix)]
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_identity(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// Expands the command-line paths into files to lint, sorted by path.
pub fn discover(
    paths: &[PathBuf],
    resolver: &ConfigResolver,
) -> (Vec<Target>, Vec<DiscoveryError>) {
    discover_with(&crate::vfs::Disk, paths, resolver)
}

/// [`discover`], reading the files it looks into (kustomizations) through
/// `system`: a session's cache, so the lint that follows does not open
/// them again. (Whether walked YAML is a compose file by its directory's
/// `.env` is asked when it is checked: [`crate::Session::is_read_as_compose`].)
pub fn discover_with(
    system: &dyn crate::vfs::System,
    paths: &[PathBuf],
    resolver: &ConfigResolver,
) -> (Vec<Target>, Vec<DiscoveryError>) {
    let found = Walked::default();
    // Whether each path is a directory, asked on every thread at once: a
    // run given thousands of files would otherwise wait on their `stat`s.
    let is_dir: Vec<bool> = {
        use rayon::prelude::*;
        paths.par_iter().map(|p| p.is_dir()).collect()
    };
    for (path, is_dir) in paths.iter().zip(is_dir) {
        if !is_dir {
            // Files, and paths that do not exist (reported when read).
            found.targets.lock().expect("targets").push(Target {
                path: path.clone(),
                explicit: true,
                manifest_only: false,
                skip: None,
            });
            continue;
        }
        // The walk opens each directory's ignore files with a plain read,
        // which waits forever on a FIFO: a directory with one is not walked
        // (and said so), and neither are ignore files above the root.
        if let Some(file) = blocking_ignore_file(path) {
            found.errors.lock().expect("errors").push(not_walked(file));
            continue;
        }
        found.walk(path, resolver);
    }
    let Walked {
        targets,
        errors,
        kustomized,
        unwalked,
    } = found;
    let mut targets = targets.into_inner().expect("targets");
    // The order of `Target`'s `Ord` (its path's components first), with
    // each path's components flattened once rather than walked again in
    // every comparison.
    targets.sort_by_cached_key(|t| {
        (
            component_order_key(&t.path),
            t.explicit,
            t.manifest_only,
            t.skip.clone(),
        )
    });
    dedup_targets(&mut targets, paths.len() > 1);
    mark_kustomize_overlays(
        system,
        &mut targets,
        &kustomized.into_inner().expect("kustomized"),
    );
    let mut errors = errors.into_inner().expect("errors");
    errors.extend(std::mem::take(&mut *unwalked.lock().expect("unwalked")));
    (targets, errors)
}

/// What the directory walks of one run collect, from every walker thread
/// at once.
#[derive(Default)]
struct Walked {
    targets: Mutex<Vec<Target>>,
    errors: Mutex<Vec<DiscoveryError>>,
    /// Directories the walk saw a kustomization in: only those can hold an
    /// overlay, so no other walked directory needs looking at for one.
    kustomized: Mutex<HashSet<PathBuf>>,
    /// Directories left out for a blocking ignore file, found by the walk's
    /// filter (which must own what it holds).
    unwalked: Arc<Mutex<Vec<DiscoveryError>>>,
}

impl Walked {
    /// Walks the directory `root` on every thread, honouring ignore files.
    fn walk(&self, root: &Path, resolver: &ConfigResolver) {
        let parents_readable = std::path::absolute(root).ok().is_some_and(|p| {
            p.ancestors()
                .skip(1)
                .all(|d| blocking_ignore_file(d).is_none())
        });
        let unwalked = Arc::clone(&self.unwalked);
        let walker = ignore::WalkBuilder::new(root)
            .hidden(false)
            .require_git(false)
            .parents(parents_readable)
            .filter_entry(move |e| {
                if e.file_name() == ".git" {
                    return false;
                }
                if e.file_type().is_some_and(|t| t.is_dir())
                    && let Some(file) = blocking_ignore_file(e.path())
                {
                    unwalked.lock().expect("unwalked").push(not_walked(file));
                    return false;
                }
                true
            })
            .build_parallel();
        walker.run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(entry) => {
                        if entry.file_type().is_some_and(|t| t.is_file()) {
                            self.file(entry.into_path(), resolver);
                        }
                    }
                    Err(err) => {
                        let path = match &err {
                            ignore::Error::WithPath { path, .. } => path.clone(),
                            _ => root.to_path_buf(),
                        };
                        self.errors.lock().expect("errors").push(DiscoveryError {
                            path,
                            message: err.to_string(),
                        });
                    }
                }
                ignore::WalkState::Continue
            })
        });
    }

    /// Takes a walked file as a target when its name, its kind or the
    /// configuration's globs ask for it; any YAML file is read for
    /// manifests.
    fn file(&self, file: PathBuf, resolver: &ConfigResolver) {
        let name = crate::vfs::file_name_text(&file);
        let name = name.as_ref();
        if kustomize::KUSTOMIZATION_NAMES.contains(&name) {
            let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
            self.kustomized.lock().expect("kustomized").insert(dir);
        }
        match resolver.for_file(&file) {
            Ok(config) => {
                // The globs resolve the path themselves, and only when there
                // are globs.
                let kind = script_kind(&file);
                let script = match kind {
                    Some(ScriptKind::Markdown) => config.lint_markdown,
                    kind => kind.is_some(),
                };
                let named = is_compose_file_name(name)
                    || is_dockerfile_name(name)
                    || script
                    || config.is_included(&file);
                let wanted = named || (kind.is_none() && is_yaml_file_name(&file));
                if wanted && !config.is_excluded(&file) {
                    self.targets.lock().expect("targets").push(Target {
                        path: file,
                        explicit: false,
                        manifest_only: !named,
                        skip: None,
                    });
                }
            }
            Err(e) => self.errors.lock().expect("errors").push(DiscoveryError {
                path: file,
                message: e.0,
            }),
        }
    }
}

/// The first of the ignore files a walk reads in `dir` (`.gitignore`,
/// `.ignore`, `.git/info/exclude`) that is there but is neither a file nor
/// a directory: a FIFO, socket or device, whose read could wait forever.
fn blocking_ignore_file(dir: &Path) -> Option<PathBuf> {
    [".gitignore", ".ignore", ".git/info/exclude"]
        .iter()
        .map(|name| dir.join(name))
        .find(|file| std::fs::metadata(file).is_ok_and(|m| !m.is_file() && !m.is_dir()))
}

fn not_walked(file: PathBuf) -> DiscoveryError {
    DiscoveryError {
        path: file,
        message: "not a regular file (a FIFO, socket or device), so its directory is not checked: reading it could wait forever".to_string(),
    }
}

/// Whether a file could be a kustomization or a patch one applies: YAML
/// or JSON, not named as a compose file (gpulint reads one as Compose
/// whatever it holds). A Dockerfile, a shell script, a Makefile, Markdown
/// or a Quadlet unit never is, so the directory of one named on the command
/// line is not probed for a kustomization: three lookups a directory, a
/// sixth of linting 2,000 Dockerfiles named one by one (as pre-commit and
/// editors name files).
fn may_be_kustomized(path: &Path) -> bool {
    use crate::FileKind;
    use crate::model::script::ScriptKind;
    let compose_named = is_compose_file_name(&crate::vfs::file_name_text(path));
    !compose_named
        && !matches!(
            FileKind::of(path),
            FileKind::Dockerfile
                | FileKind::Script(
                    ScriptKind::Shell
                        | ScriptKind::Makefile
                        | ScriptKind::Markdown
                        | ScriptKind::Quadlet
                )
        )
}

/// Marks kustomizations with patches, and the patches they apply, as skipped.
/// `kustomized` holds the walked directories with a kustomization; a
/// directory of an explicitly named file is looked at on disk.
fn mark_kustomize_overlays(
    system: &dyn crate::vfs::System,
    targets: &mut [Target],
    kustomized: &HashSet<PathBuf>,
) {
    use rayon::prelude::*;
    let dir_of = |target: &Target| {
        target
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    };
    // Each directory looked at once, on every thread: files named on the
    // command line are each in a directory of their own as often as not,
    // and three probes for a kustomization each, one after the other,
    // were a tenth of such a run.
    let mut dirs: Vec<PathBuf> = targets
        .iter()
        .map(|t| (t, dir_of(t)))
        .filter(|(t, dir)| (t.explicit && may_be_kustomized(&t.path)) || kustomized.contains(dir))
        .map(|(_, dir)| dir)
        .collect();
    // Every walked kustomization too: its patches may be anywhere under
    // it (`patches/gpu.yaml`) or beside it (`../common/shm.yaml`).
    dirs.extend(kustomized.iter().cloned());
    dirs.sort_unstable();
    dirs.dedup();
    let overlays: HashMap<PathBuf, Option<(PathBuf, Vec<PathBuf>)>> = dirs
        .into_par_iter()
        .map(|dir| {
            let overlay = kustomize::overlay_files(system, &dir);
            (dir, overlay)
        })
        .collect();
    let mut patched_by: HashMap<PathBuf, &PathBuf> = HashMap::new();
    for (kustomization, patches) in overlays.values().flatten() {
        for patch in patches {
            patched_by.insert(crate::vfs::normalize(patch), kustomization);
        }
    }
    for target in targets.iter_mut() {
        let beside = overlays.get(&dir_of(target)).and_then(Option::as_ref);
        let kustomization = beside
            .filter(|(kustomization, patches)| {
                std::iter::once(kustomization)
                    .chain(patches.iter())
                    .any(|f| kustomize::same_file(&target.path, f))
            })
            .map(|(kustomization, _)| kustomization)
            .or_else(|| {
                patched_by
                    .get(&crate::vfs::normalize(&target.path))
                    .copied()
            });
        if let Some(kustomization) = kustomization {
            target.skip = Some(Skip::Kustomize {
                kustomization: kustomization.clone(),
                why: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        ConfigResolver, component_order_key, is_compose_file_name, is_dockerfile_name,
        may_be_kustomized,
    };
    use crate::rules::RuleCode;
    use std::path::Path;
    use std::sync::Arc;

    #[test]
    fn the_sort_key_orders_paths_as_path_does() {
        // Names that sort differently as bytes and as components: a
        // separator against `.`, `-` and `+`, prefixes, `.`, `..`, roots.
        let names = [
            "a", "a.b", "a-b", "a+b", "a/b", "a/b/c", "a//b", "ab", "a/.b", "./a", "../a", "/a",
            "/a/b", "/", ".", "..", "a/../b", "a b", "\u{e9}", "Z", "a/b-c", "a/b/c-d", "a/b.c",
        ];
        let mut by_path: Vec<&str> = names.to_vec();
        by_path.sort_by(|x, y| Path::new(x).cmp(Path::new(y)));
        let mut by_key: Vec<&str> = names.to_vec();
        by_key.sort_by_key(|p| component_order_key(Path::new(p)));
        assert_eq!(by_key, by_path);
    }

    #[test]
    fn one_config_per_directory_however_it_is_spelled() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("gpulint.toml"), "ignore = [\"SHM001\"]\n").unwrap();
        let resolver = ConfigResolver::new(None, None, Vec::new());
        let first = resolver
            .for_file(&dir.path().join("sub/compose.yaml"))
            .unwrap();
        // Another spelling of a directory already resolved is a cache hit too.
        let again = resolver
            .for_file(&dir.path().join("sub/../sub/compose.yaml"))
            .unwrap();
        let same = resolver
            .for_file(&dir.path().join("sub/Dockerfile"))
            .unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert!(Arc::ptr_eq(&first, &same));
        assert!(!first.is_enabled(RuleCode::SHM001));
    }

    #[test]
    fn the_nearest_config_wins_and_directories_without_one_share_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        for sub in ["sub/deeper", "other", "plain/a", "plain/b"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join("gpulint.toml"), "ignore = [\"SHM001\"]\n").unwrap();
        std::fs::write(root.join("sub/gpulint.toml"), "ignore = [\"SHM002\"]\n").unwrap();
        let resolver = ConfigResolver::new(None, None, Vec::new());
        let deeper = resolver
            .for_file(&root.join("sub/deeper/compose.yaml"))
            .unwrap();
        assert!(deeper.is_enabled(RuleCode::SHM001) && !deeper.is_enabled(RuleCode::SHM002));
        let other = resolver.for_file(&root.join("other/compose.yaml")).unwrap();
        assert!(!other.is_enabled(RuleCode::SHM001) && other.is_enabled(RuleCode::SHM002));
        assert!(Arc::ptr_eq(
            &other,
            &resolver.for_file(&root.join("x.yaml")).unwrap()
        ));
        // Outside the repository: the defaults, one copy for every directory.
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join("a")).unwrap();
        let a = resolver
            .for_file(&outside.path().join("a/compose.yaml"))
            .unwrap();
        let b = resolver
            .for_file(&outside.path().join("compose.yaml"))
            .unwrap();
        assert!(a.is_enabled(RuleCode::SHM001) && Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn dockerfile_names() {
        for yes in [
            "Dockerfile",
            "dockerfile",
            "Containerfile",
            "Dockerfile.gpu",
            "Dockerfile-uv-base",
            "Dockerfile.ci.dev",
            "train.Dockerfile",
            "gpu.dockerfile",
            "cuda_Dockerfile",
        ] {
            assert!(is_dockerfile_name(yes), "{yes}");
        }
        for no in [
            "Dockerfile.dockerignore",
            "Dockerfile.md",
            "Dockerfile.j2",
            "dockerfiles",
            ".dockerfile",
            "mydockerfile",
            "Dockerfile.yml",
        ] {
            assert!(!is_dockerfile_name(no), "{no}");
        }
    }

    #[test]
    fn compose_names() {
        for yes in [
            "compose.yml",
            "compose.yaml",
            "docker-compose.yml",
            "docker-compose.gpu.yml",
            "docker-compose-vllm.yml",
            "docker-compose.override.yaml",
            "compose.cuda.yaml",
            "fleet-compose.yml",
            "app.compose.yaml",
            "Docker-Compose.YML",
        ] {
            assert!(is_compose_file_name(yes), "{yes}");
        }
        for no in [
            "values.yaml",
            "deployment.yaml",
            "composer.yml",
            "compose.json",
            "decompose.yml",
        ] {
            assert!(!is_compose_file_name(no), "{no}");
        }
    }

    #[test]
    fn only_yaml_and_json_that_is_not_compose_may_be_kustomized() {
        use std::path::Path;
        for path in [
            "k8s/kustomization.yaml",
            "overlays/prod/Kustomization",
            "overlays/prod/patch.yaml",
            "overlays/prod/patch.json",
            "deploy.yml",
        ] {
            assert!(may_be_kustomized(Path::new(path)), "{path}");
        }
        for path in [
            "svc/Dockerfile",
            "svc/gpu.Dockerfile",
            "run.sh",
            "Makefile",
            "README.md",
            "trainer.container",
            "compose.yaml",
            "docker-compose.override.yml",
        ] {
            assert!(!may_be_kustomized(Path::new(path)), "{path}");
        }
    }
}
