//! Kustomize overlays built as `kubectl kustomize` (kustomize v5) builds
//! them, for everything that decides a container's GPUs, `/dev/shm` and
//! environment: `resources` (files and directories, recursively),
//! `components`, strategic-merge and JSON 6902 patches with their targets,
//! `namespace`, `namePrefix`/`nameSuffix`, `images` and `replicas`, in
//! kustomize's order (resources, components, then the transformers).
//!
//! Every value of the result keeps the file and node that wrote it
//! ([`Src`]): a patch's value points into the patch, a base's into the
//! base, so a finding about the built objects is reported where the
//! setting is written. What gpulint does not build (remote bases, Helm
//! charts, generator and transformer plugins, `vars`) is an error
//! that says so, and the overlay is then not checked, rather than checked
//! as something kustomize would not build.

use crate::syntax::tree::{Budget, Builder, Entry, Interpolated, KeyIndex, Kind, Node, Src};
use crate::syntax::yaml::{Style, Yaml};
use crate::text::{SourceFile, TextRange};
use crate::vfs::{Files, normalize};
use foldhash::{HashMap, HashMapExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod json_patch;
mod patches;
mod render;
mod replacements;
mod selector;
mod strategic;
mod transformers;

use selector::Selector;
use transformers::{rename, set_images, set_namespace, set_replicas};

pub use render::{Origin, Rendered};

/// The names kustomize looks for in a directory, in its order.
pub const KUSTOMIZATION_NAMES: &[&str] =
    &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Kustomizations one build may nest (bases of bases, components).
const MAX_NESTING: usize = 32;
/// Files one build may read.
const MAX_FILES: usize = 1024;
/// Kustomizations one build may run: bases shared by many kustomizations
/// (a diamond, nested) are built once per use, as kustomize builds them,
/// and a nest of them would otherwise grow exponentially.
const MAX_RUNS: usize = 1024;

/// Fields of a kustomization that change what is built in ways gpulint
/// does not follow: a build that uses one is refused, not guessed.
const NOT_BUILT: &[(&str, &str)] = &[
    ("helmCharts", "renders a Helm chart"),
    ("helmChartInflationGenerator", "renders a Helm chart"),
    ("generators", "runs generator plugins"),
    ("transformers", "runs transformer plugins"),
    ("validators", "runs validator plugins"),
    ("vars", "substitutes `vars`"),
];

/// Why an overlay could not be built: what kustomize would refuse, or what
/// gpulint does not build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    pub message: String,
}

impl BuildError {
    fn new(message: impl Into<String>) -> Self {
        BuildError {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A built overlay: its objects, and the files their values come from.
#[derive(Debug)]
pub struct Overlay {
    /// The kustomization file that was built.
    pub kustomization: PathBuf,
    /// The files the build read, by [`Src::file`].
    pub files: Vec<Arc<SourceFile>>,
    yamls: Vec<Arc<Yaml>>,
    /// The objects, in kustomize's output order (the order they were added).
    pub objects: Vec<Arc<Node>>,
}

/// The kustomization file in `dir`, if it has one.
pub fn kustomization_in(files: &Files, dir: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| files.is_file(p))
}

/// Whether `path` is named as kustomize names a kustomization.
pub fn is_kustomization_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| KUSTOMIZATION_NAMES.contains(&n))
}

/// Builds the kustomization in directory `dir`, as `kubectl kustomize DIR`.
pub fn build(files: &Files, dir: &Path) -> Result<Overlay, BuildError> {
    let mut build = Build {
        files,
        sources: Vec::new(),
        yamls: Vec::new(),
        by_path: HashMap::new(),
        stack: Vec::new(),
        runs: 0,
    };
    let dir = normalize(dir);
    let kustomization = kustomization_in(files, &dir)
        .ok_or_else(|| BuildError::new(format!("{} has no kustomization", dir.display())))?;
    let mut objects = Vec::new();
    build.run(&dir, &mut objects, false)?;
    Ok(Overlay {
        kustomization,
        files: build.sources,
        yamls: build.yamls,
        objects: objects.into_iter().map(|r| r.node).collect(),
    })
}

/// A YAML stream written again as [`Overlay::render`] writes a build:
/// the same objects and values (a Go template in a value no longer reads
/// as one). For output of another tool that builds overlays.
pub fn restream(text: &str) -> Result<String, BuildError> {
    let yaml =
        Yaml::parse(text).map_err(|e| BuildError::new(format!("not YAML: {}", e.message)))?;
    let mut objects = Vec::new();
    for document in &yaml.documents {
        let Some(root) = document.root else { continue };
        let node = Builder::new(&yaml, 0, Budget::default(), &as_written)
            .build(root)
            .map_err(|e| BuildError::new(e.message))?;
        if !node.is_null() {
            objects.push(node);
        }
    }
    Ok(render::render(&objects)?.text)
}

impl Overlay {
    /// The objects as one YAML stream, with where each part came from; an
    /// error past what gpulint reads (a JSON patch that copies a subtree
    /// into itself, again and again, doubles it each time).
    pub fn render(&self) -> Result<Rendered, BuildError> {
        render::render(&self.objects)
    }

    /// The file and byte range an [`Origin`] names.
    pub fn place(&self, origin: Origin) -> (u32, TextRange) {
        let range = |src: Src| self.yamls[src.file as usize].range(src.node);
        match origin {
            Origin::Node(src) => (src.file, range(src)),
            Origin::Entry { key, value } if key.file == value.file => {
                let (k, v) = (range(key), range(value));
                if k.start <= v.end {
                    (key.file, TextRange::new(k.start as usize, v.end as usize))
                } else {
                    (value.file, v)
                }
            }
            Origin::Entry { value, .. } => (value.file, range(value)),
        }
    }
}

/// One object of the build, with every name it has had: a patch may name
/// it as its base does, before a prefix.
struct Resource {
    node: Arc<Node>,
    names: Vec<String>,
}

impl Resource {
    fn named(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

struct Build<'f> {
    files: &'f Files,
    sources: Vec<Arc<SourceFile>>,
    yamls: Vec<Arc<Yaml>>,
    by_path: HashMap<PathBuf, u32>,
    /// The kustomizations being built, outermost first: a cycle is an error.
    stack: Vec<PathBuf>,
    /// Kustomizations built so far.
    runs: usize,
}

/// Scalars as written: kustomize does not interpolate.
fn as_written(text: &str) -> Interpolated {
    Interpolated::Text(text.to_string())
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

impl Build<'_> {
    fn read(&mut self, path: &Path) -> Result<u32, BuildError> {
        let key = normalize(path);
        if let Some(&file) = self.by_path.get(&key) {
            return Ok(file);
        }
        if self.sources.len() >= MAX_FILES {
            return Err(BuildError::new(format!(
                "the build reads more than {MAX_FILES} files"
            )));
        }
        let text = self.files.read(&key).map_err(|failure| {
            BuildError::new(format!(
                "{} cannot be read: {}",
                shown(&key),
                failure.0.message
            ))
        })?;
        let yaml = Yaml::parse(&text.source.text)
            .map_err(|e| BuildError::new(format!("{} is not YAML: {}", shown(&key), e.message)))?;
        let file = self.sources.len() as u32;
        self.sources.push(text.source);
        self.yamls.push(Arc::new(yaml));
        self.by_path.insert(key, file);
        Ok(file)
    }

    /// Each document of a file that has one.
    fn documents(&self, file: u32) -> Result<Vec<Arc<Node>>, BuildError> {
        let yaml = &self.yamls[file as usize];
        let mut documents = Vec::new();
        for document in &yaml.documents {
            let Some(root) = document.root else { continue };
            let node = Builder::new(yaml, file, Budget::default(), &as_written)
                .build(root)
                .map_err(|e| {
                    BuildError::new(format!(
                        "{}: {}",
                        shown(&self.sources[file as usize].path),
                        e.message
                    ))
                })?;
            if !node.is_null() {
                documents.push(node);
            }
        }
        Ok(documents)
    }

    /// A patch: a file the kustomization names, or text written in it
    /// (whose every value is then placed at that text).
    fn patch_documents(&mut self, dir: &Path, entry: &Node) -> Result<Vec<Arc<Node>>, BuildError> {
        let text = entry
            .str()
            .ok_or_else(|| BuildError::new("a patch is not a file name or a patch's text"))?;
        if text.contains('\n') || text.trim_start().starts_with(['{', '[']) {
            let yaml = Yaml::parse(text)
                .map_err(|e| BuildError::new(format!("a patch is not YAML: {}", e.message)))?;
            let mut documents = Vec::new();
            for document in &yaml.documents {
                let Some(root) = document.root else { continue };
                let node = Builder::new(&yaml, 0, Budget::default(), &as_written)
                    .build(root)
                    .map_err(|e| BuildError::new(format!("a patch: {}", e.message)))?;
                if !node.is_null() {
                    documents.push(placed_at(&node, entry.src));
                }
            }
            return Ok(documents);
        }
        let path = within(dir, local_path(dir, text, "patch")?)?;
        let file = self.read(&path)?;
        self.documents(file)
    }

    /// Adds what the kustomization in `dir` builds to `acc`, then applies
    /// its transformers to all of `acc`. A component works on what the
    /// kustomization that names it has built so far; a base builds alone.
    fn run(
        &mut self,
        dir: &Path,
        acc: &mut Vec<Resource>,
        component: bool,
    ) -> Result<(), BuildError> {
        let dir = normalize(dir);
        if self.stack.contains(&dir) {
            return Err(BuildError::new(format!(
                "{} includes itself through its resources",
                shown(&dir)
            )));
        }
        self.runs += 1;
        if self.runs > MAX_RUNS {
            return Err(BuildError::new(format!(
                "the build runs more than {MAX_RUNS} kustomizations"
            )));
        }
        if self.stack.len() >= MAX_NESTING {
            return Err(BuildError::new(format!(
                "kustomizations nest deeper than {MAX_NESTING}"
            )));
        }
        self.stack.push(dir.clone());
        let result = self.run_in(&dir, acc, component);
        self.stack.pop();
        // Say which kustomization a field of "its" is in.
        result.map_err(|e| match e.message.strip_prefix("its ") {
            Some(rest) => {
                let kustomization = kustomization_in(self.files, &dir).unwrap_or(dir);
                BuildError::new(format!("{}: {rest}", shown(&kustomization)))
            }
            None => e,
        })
    }

    fn run_in(
        &mut self,
        dir: &Path,
        acc: &mut Vec<Resource>,
        component: bool,
    ) -> Result<(), BuildError> {
        let path = kustomization_in(self.files, dir)
            .ok_or_else(|| BuildError::new(format!("{} has no kustomization", shown(dir))))?;
        let file = self.read(&path)?;
        let Some(k) = self.documents(file)?.into_iter().next() else {
            return Ok(());
        };
        if !k.is_mapping() {
            return Err(BuildError::new(format!(
                "{} is not a mapping",
                shown(&path)
            )));
        }
        let kind = k
            .get("kind")
            .and_then(|n| n.str())
            .unwrap_or("Kustomization");
        // kustomize builds a Component on its own too, but not one named
        // as a resource, nor a Kustomization named as a component.
        let top = self.stack.len() == 1;
        if (component && kind != "Component") || (!component && !top && kind == "Component") {
            return Err(BuildError::new(format!(
                "{} is a {kind}, named as a {}",
                shown(&path),
                if component { "component" } else { "resource" }
            )));
        }
        for (field, what) in NOT_BUILT {
            if k.get(field).is_some_and(|v| !v.is_null() && !is_empty(v)) {
                return Err(BuildError::new(format!(
                    "{} {what}, which gpulint does not build",
                    shown(&path)
                )));
            }
        }
        self.files_it_reads(dir, &k)?;
        for field in ["resources", "bases"] {
            for item in field_items(&k, field) {
                let entry = item
                    .str()
                    .ok_or_else(|| BuildError::new(format!("a `{field}` entry is not a path")))?;
                self.resource(dir, entry, acc)?;
            }
        }
        for item in field_items(&k, "components") {
            let entry = item
                .str()
                .ok_or_else(|| BuildError::new("a `components` entry is not a path"))?;
            let path = local_path(dir, entry, "component")?;
            self.run(&path, acc, true)?;
        }
        self.strategic_merge_patches(dir, &k, acc)?;
        self.patches(dir, &k, acc)?;
        if let Some(namespace) = k.get("namespace").filter(|n| n.str().is_some()) {
            set_namespace(namespace, acc);
        }
        rename(&k, acc);
        self.json_6902_patches(dir, &k, acc)?;
        set_replicas(&k, acc)?;
        set_images(&k, acc);
        self.replacements(dir, &k, acc)
    }

    /// `replacements`, written in the kustomization or in files it names.
    fn replacements(
        &mut self,
        dir: &Path,
        k: &Node,
        acc: &mut [Resource],
    ) -> Result<(), BuildError> {
        for item in field_items(k, "replacements") {
            let Some(path) = item.get("path").and_then(|n| n.str()) else {
                replacements::apply(item, acc)?;
                continue;
            };
            let file = self.read(&within(dir, local_path(dir, path, "replacement")?)?)?;
            for document in self.documents(file)? {
                if document.is_sequence() {
                    for replacement in document.items() {
                        replacements::apply(replacement, acc)?;
                    }
                } else {
                    replacements::apply(&document, acc)?;
                }
            }
        }
        Ok(())
    }

    /// The files a kustomization reads beside its resources and patches
    /// (generators' sources, transformer configurations, schemas): gpulint
    /// does not use what they hold, but kustomize refuses to build without
    /// them.
    fn files_it_reads(&self, dir: &Path, k: &Node) -> Result<(), BuildError> {
        let mut named: Vec<(&str, &str)> = Vec::new();
        for field in ["configurations", "crds"] {
            for item in field_items(k, field) {
                named.extend(item.str().map(|p| (field, p)));
            }
        }
        if let Some(path) = k.get_path(&["openapi", "path"]).and_then(|n| n.str()) {
            named.push(("openapi", path));
        }
        for field in ["configMapGenerator", "secretGenerator"] {
            for generator in field_items(k, field) {
                for source in ["files", "envs"] {
                    for item in field_items(generator, source) {
                        // `files: [key=path]` names the key the file becomes.
                        let path = item.str().map(|p| p.split_once('=').map_or(p, |(_, p)| p));
                        named.extend(path.map(|p| (field, p)));
                    }
                }
                if let Some(env) = generator.get("env").and_then(|n| n.str()) {
                    named.push((field, env));
                }
            }
        }
        for (field, entry) in named {
            let path = within(dir, local_path(dir, entry, field)?)?;
            if !self.files.is_file(&path) {
                return Err(BuildError::new(format!(
                    "its `{field}` names {}, which is not there",
                    shown(&path)
                )));
            }
        }
        Ok(())
    }

    fn resource(
        &mut self,
        dir: &Path,
        entry: &str,
        acc: &mut Vec<Resource>,
    ) -> Result<(), BuildError> {
        let path = local_path(dir, entry, "resource")?;
        if self.files.is_dir(&path) {
            let mut built = Vec::new();
            self.run(&path, &mut built, false)?;
            return append_all(acc, built);
        }
        if !self.files.is_file(&path) {
            return Err(BuildError::new(format!(
                "its resource {} is not there",
                shown(&path)
            )));
        }
        let file = self.read(&within(dir, path)?)?;
        let mut objects = Vec::new();
        for document in self.documents(file)? {
            add_objects(document, &mut objects)?;
        }
        append_all(acc, objects)
    }
}

/// The entries of a list field of `node`: none when it is missing or is
/// not a list.
fn field_items<'n>(node: &'n Node, field: &str) -> &'n [Arc<Node>] {
    node.get(field).map(|v| v.items()).unwrap_or_default()
}

fn is_empty(node: &Node) -> bool {
    match &node.kind {
        Kind::Sequence(items) => items.is_empty(),
        Kind::Mapping(entries) => entries.is_empty(),
        Kind::Scalar { .. } => node.is_null(),
    }
}

/// A local path a kustomization names; kustomize fetches the others.
fn local_path(dir: &Path, entry: &str, what: &str) -> Result<PathBuf, BuildError> {
    let remote = entry.contains("://")
        || entry.contains("?ref=")
        || entry.starts_with("git@")
        || ["github.com/", "gitlab.com/", "bitbucket.org/"]
            .iter()
            .any(|host| entry.starts_with(host));
    if remote {
        return Err(BuildError::new(format!(
            "its {what} `{entry}` is fetched from a remote repository, which gpulint does not do"
        )));
    }
    Ok(normalize(&dir.join(entry)))
}

/// `path`, if it is in or below `dir`: kustomize reads no file above the
/// kustomization that names it (`kubectl kustomize`'s default
/// `--load-restrictor LoadRestrictionsRootOnly`); a directory of a base
/// may be anywhere.
fn within(dir: &Path, path: PathBuf) -> Result<PathBuf, BuildError> {
    // Compared as absolute paths: `.` holds `gpu.yaml`, `..` does not
    // hold `../../x.yaml`.
    let absolute = |p: &Path| std::path::absolute(p).map(|p| normalize(&p)).ok();
    let inside = match (absolute(dir), absolute(&path)) {
        (Some(dir), Some(file)) => file.starts_with(dir),
        _ => path.starts_with(dir),
    };
    if inside {
        Ok(path)
    } else {
        Err(BuildError::new(format!(
            "its file {} is outside {}, and kustomize reads no file above a kustomization",
            shown(&path),
            shown(dir)
        )))
    }
}

/// The node with every value placed at `src`.
fn placed_at(node: &Node, src: Src) -> Arc<Node> {
    let kind = match &node.kind {
        Kind::Scalar { .. } => node.kind.clone(),
        Kind::Sequence(items) => Kind::Sequence(items.iter().map(|i| placed_at(i, src)).collect()),
        Kind::Mapping(entries) => Kind::Mapping(
            entries
                .iter()
                .map(|e| Entry {
                    key: e.key.clone(),
                    key_src: src,
                    value: placed_at(&e.value, src),
                })
                .collect(),
        ),
    };
    Arc::new(Node {
        keys: KeyIndex::of(&kind),
        kind,
        tag: node.tag.clone(),
        src,
        entry_key: None,
    })
}

/// A document's objects: itself, or the items of a `List`.
fn add_objects(document: Arc<Node>, acc: &mut Vec<Resource>) -> Result<(), BuildError> {
    if !document.is_mapping() {
        return Err(BuildError::new("a resource is not a Kubernetes object"));
    }
    let kind = str_at(&document, &["kind"]).unwrap_or_default();
    if kind.ends_with("List")
        && let Some(items) = document.get("items")
    {
        for item in items.items() {
            add_objects(item.clone(), acc)?;
        }
        return Ok(());
    }
    let names = str_at(&document, &["metadata", "name"])
        .map(str::to_string)
        .into_iter()
        .collect();
    acc.push(Resource {
        node: document,
        names,
    });
    Ok(())
}

/// An object's id as kustomize keys its resources: group and version,
/// kind, name, and the namespace it is in (none for a cluster-scoped kind,
/// `default` for an object that names none).
fn current_id(node: &Node) -> (&str, &str, &str, &str) {
    let kind = str_at(node, &["kind"]).unwrap_or_default();
    let namespace = if transformers::is_cluster_scoped(kind) {
        ""
    } else {
        namespace_of(node)
    };
    let api_version = str_at(node, &["apiVersion"]).unwrap_or_default();
    let name = str_at(node, &["metadata", "name"]).unwrap_or_default();
    (api_version, kind, name, namespace)
}

/// Adds `objects` to what is built so far, refusing an object whose id is
/// there already, as kustomize refuses a resource added twice (two bases
/// that both hold it, or one file that lists it twice).
fn append_all(acc: &mut Vec<Resource>, objects: Vec<Resource>) -> Result<(), BuildError> {
    {
        let mut ids: foldhash::HashSet<(&str, &str, &str, &str)> =
            acc.iter().map(|r| current_id(&r.node)).collect();
        for r in &objects {
            let id = current_id(&r.node);
            if !ids.insert(id) {
                let (_, kind, name, _) = id;
                return Err(BuildError::new(format!(
                    "it adds {kind} `{name}` twice (kustomize refuses an object whose id is registered already)"
                )));
            }
        }
    }
    acc.extend(objects);
    Ok(())
}

fn str_at<'n>(node: &'n Node, path: &[&str]) -> Option<&'n str> {
    node.get_path(path).and_then(|n| n.str())
}

/// `group`, `version` of an `apiVersion`.
fn group_version(node: &Node) -> (&str, &str) {
    let api_version = str_at(node, &["apiVersion"]).unwrap_or_default();
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

fn namespace_of(node: &Node) -> &str {
    str_at(node, &["metadata", "namespace"]).unwrap_or("default")
}

/// `node` (a mapping) with `key` set to `value`, in place if it has the
/// key, else added last with its key written at `key_src` (or the value).
fn with_entry(node: &Arc<Node>, key: &str, value: Arc<Node>, key_src: Option<Src>) -> Arc<Node> {
    let mut entries = node.entries().to_vec();
    match entries.iter_mut().find(|e| e.key == key) {
        Some(entry) => entry.value = value,
        None => entries.push(Entry {
            key: key.to_string(),
            key_src: key_src.unwrap_or(value.src),
            value,
        }),
    }
    Arc::new(node.with_kind(Kind::Mapping(entries)))
}

/// `node` with the value at `path` set, making the mappings on the way.
fn with_path(node: &Arc<Node>, path: &[&str], value: Arc<Node>) -> Arc<Node> {
    let Some((first, rest)) = path.split_first() else {
        return value;
    };
    let inner = match (rest.is_empty(), node.get(first)) {
        (true, _) => value,
        (false, Some(child)) if child.is_mapping() => with_path(child, rest, value),
        (false, _) => {
            let empty = Arc::new(Node {
                kind: Kind::Mapping(Vec::new()),
                tag: None,
                src: value.src,
                entry_key: None,
                keys: KeyIndex::default(),
            });
            with_path(&empty, rest, value)
        }
    };
    with_entry(node, first, inner, None)
}

/// A scalar of the given text, written at `src`.
fn scalar(text: String, src: Src) -> Arc<Node> {
    Arc::new(Node {
        kind: Kind::Scalar {
            value: Interpolated::Text(text.clone()),
            raw: text,
            style: Style::DoubleQuoted,
        },
        tag: None,
        src,
        entry_key: None,
        keys: KeyIndex::default(),
    })
}

#[cfg(test)]
mod tests;
