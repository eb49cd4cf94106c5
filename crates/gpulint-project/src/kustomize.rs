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
mod render;
mod replacements;
mod strategic;

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
            for item in k.get(field).map(|v| v.items()).unwrap_or_default() {
                let entry = item
                    .str()
                    .ok_or_else(|| BuildError::new(format!("a `{field}` entry is not a path")))?;
                self.resource(dir, entry, acc)?;
            }
        }
        for item in k.get("components").map(|v| v.items()).unwrap_or_default() {
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
        for item in k.get("replacements").map(|v| v.items()).unwrap_or_default() {
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
            for item in k.get(field).map(|v| v.items()).unwrap_or_default() {
                named.extend(item.str().map(|p| (field, p)));
            }
        }
        if let Some(path) = k.get_path(&["openapi", "path"]).and_then(|n| n.str()) {
            named.push(("openapi", path));
        }
        for field in ["configMapGenerator", "secretGenerator"] {
            for generator in k.get(field).map(|v| v.items()).unwrap_or_default() {
                for source in ["files", "envs"] {
                    for item in generator.get(source).map(|v| v.items()).unwrap_or_default() {
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
            acc.extend(built);
            return Ok(());
        }
        if !self.files.is_file(&path) {
            return Err(BuildError::new(format!(
                "its resource {} is not there",
                shown(&path)
            )));
        }
        let file = self.read(&within(dir, path)?)?;
        for document in self.documents(file)? {
            add_objects(document, acc)?;
        }
        Ok(())
    }

    fn strategic_merge_patches(
        &mut self,
        dir: &Path,
        k: &Node,
        acc: &mut Vec<Resource>,
    ) -> Result<(), BuildError> {
        for item in k
            .get("patchesStrategicMerge")
            .map(|v| v.items())
            .unwrap_or_default()
        {
            for patch in self.patch_documents(dir, item)? {
                merge_by_name(&patch, acc)?;
            }
        }
        Ok(())
    }

    fn patches(&mut self, dir: &Path, k: &Node, acc: &mut Vec<Resource>) -> Result<(), BuildError> {
        for item in k.get("patches").map(|v| v.items()).unwrap_or_default() {
            let text = item
                .get("patch")
                .or_else(|| item.get("path"))
                .ok_or_else(|| {
                    BuildError::new("a `patches` entry has neither `path` nor `patch`")
                })?;
            let documents = self.patch_documents(dir, text)?;
            let target = item.get("target").map(|t| Selector::of(t)).transpose()?;
            for document in documents {
                match (document.is_sequence(), &target) {
                    (true, Some(target)) => {
                        for r in acc.iter_mut().filter(|r| target.selects(r)) {
                            r.node =
                                json_patch::apply(&r.node, &document).map_err(BuildError::new)?;
                        }
                    }
                    (true, None) => {
                        return Err(BuildError::new(
                            "a JSON 6902 patch has no `target` to apply to",
                        ));
                    }
                    (false, Some(target)) => {
                        // The patch's own name is ignored: the target chose.
                        let mut deleted = Vec::new();
                        for (i, r) in acc
                            .iter_mut()
                            .enumerate()
                            .filter(|(_, r)| target.selects(r))
                        {
                            let patch = keep_name(&document, &r.node);
                            match strategic::merge_object(&r.node, &patch) {
                                Some(node) => r.node = node,
                                None => deleted.push(i),
                            }
                        }
                        remove_all(acc, &deleted);
                    }
                    (false, None) => merge_by_name(&document, acc)?,
                }
            }
        }
        Ok(())
    }

    fn json_6902_patches(
        &mut self,
        dir: &Path,
        k: &Node,
        acc: &mut [Resource],
    ) -> Result<(), BuildError> {
        for item in k
            .get("patchesJson6902")
            .map(|v| v.items())
            .unwrap_or_default()
        {
            let text = item
                .get("patch")
                .or_else(|| item.get("path"))
                .ok_or_else(|| {
                    BuildError::new("a `patchesJson6902` entry has neither `path` nor `patch`")
                })?;
            let target = item
                .get("target")
                .map(|t| Selector::of(t))
                .transpose()?
                .ok_or_else(|| BuildError::new("a `patchesJson6902` entry has no `target`"))?;
            for document in self.patch_documents(dir, text)? {
                for r in acc.iter_mut().filter(|r| target.selects(r)) {
                    r.node = json_patch::apply(&r.node, &document).map_err(BuildError::new)?;
                }
            }
        }
        Ok(())
    }
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

fn str_at<'n>(node: &'n Node, path: &[&str]) -> Option<&'n str> {
    node.get_path(path).and_then(|n| n.str())
}

/// `group`, `version` of an `apiVersion`.
fn group_version(node: &Node) -> (&str, &str) {
    let api_version = str_at(node, &["apiVersion"]).unwrap_or_default();
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// Applies a strategic-merge patch to the object it names (by kind and
/// name, and namespace where the patch gives one), as kustomize does when
/// a patch has no `target`.
fn merge_by_name(patch: &Arc<Node>, acc: &mut Vec<Resource>) -> Result<(), BuildError> {
    let kind = str_at(patch, &["kind"]).unwrap_or_default();
    let name = str_at(patch, &["metadata", "name"]).unwrap_or_default();
    let namespace = str_at(patch, &["metadata", "namespace"]);
    let mut matched = false;
    let mut deleted = Vec::new();
    for (i, r) in acc.iter_mut().enumerate() {
        let selected = str_at(&r.node, &["kind"]) == Some(kind)
            && r.named(name)
            && namespace.is_none_or(|ns| namespace_of(&r.node) == ns);
        if selected {
            matched = true;
            // The patch keeps the object's name: it was matched by any.
            let patch = keep_name(patch, &r.node);
            match strategic::merge_object(&r.node, &patch) {
                Some(node) => r.node = node,
                None => deleted.push(i),
            }
        }
    }
    remove_all(acc, &deleted);
    if !matched {
        return Err(BuildError::new(format!(
            "a patch names {kind} `{name}`, which the build does not have"
        )));
    }
    Ok(())
}

/// Removes the resources at `indexes` (ascending).
fn remove_all(acc: &mut Vec<Resource>, indexes: &[usize]) {
    for &i in indexes.iter().rev() {
        acc.remove(i);
    }
}

fn namespace_of(node: &Node) -> &str {
    str_at(node, &["metadata", "namespace"]).unwrap_or("default")
}

/// The patch without a `metadata.name` that differs from the object's.
fn keep_name(patch: &Arc<Node>, object: &Node) -> Arc<Node> {
    let object_name = str_at(object, &["metadata", "name"]);
    if str_at(patch, &["metadata", "name"]) == object_name {
        return patch.clone();
    }
    let Some(metadata) = patch.get("metadata") else {
        return patch.clone();
    };
    let entries = metadata
        .entries()
        .iter()
        .filter(|e| e.key != "name")
        .cloned()
        .collect();
    with_entry(
        patch,
        "metadata",
        Arc::new(metadata.with_kind(Kind::Mapping(entries))),
        None,
    )
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

/// Kinds kustomize's namespace transformer leaves alone.
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "ClusterIssuer",
    "ClusterRole",
    "ClusterRoleBinding",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PodSecurityPolicy",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

fn set_namespace(namespace: &Arc<Node>, acc: &mut [Resource]) {
    for r in acc.iter_mut() {
        let kind = str_at(&r.node, &["kind"]).unwrap_or_default();
        if !CLUSTER_SCOPED.contains(&kind) {
            r.node = with_path(&r.node, &["metadata", "namespace"], namespace.clone());
        }
    }
}

/// `namePrefix` and `nameSuffix`, which kustomize gives every object but
/// these kinds.
fn rename(k: &Node, acc: &mut [Resource]) {
    const NOT_RENAMED: &[&str] = &["CustomResourceDefinition", "APIService", "Namespace"];
    let prefix = k
        .get("namePrefix")
        .and_then(|n| n.str())
        .unwrap_or_default();
    let suffix = k
        .get("nameSuffix")
        .and_then(|n| n.str())
        .unwrap_or_default();
    if prefix.is_empty() && suffix.is_empty() {
        return;
    }
    for r in acc.iter_mut() {
        let kind = str_at(&r.node, &["kind"]).unwrap_or_default();
        let Some(name) = r.node.get_path(&["metadata", "name"]).cloned() else {
            continue;
        };
        if NOT_RENAMED.contains(&kind) {
            continue;
        }
        let Some(text) = name.str() else { continue };
        let renamed = format!("{prefix}{text}{suffix}");
        r.names.push(renamed.clone());
        r.node = with_path(&r.node, &["metadata", "name"], scalar(renamed, name.src));
    }
}

/// `replicas`: kustomize scales these kinds, and refuses an entry that
/// names none of them.
fn set_replicas(k: &Node, acc: &mut [Resource]) -> Result<(), BuildError> {
    const SCALED: &[&str] = &[
        "Deployment",
        "ReplicaSet",
        "ReplicationController",
        "StatefulSet",
    ];
    for item in k.get("replicas").map(|v| v.items()).unwrap_or_default() {
        let (Some(name), Some(count)) = (item.get("name").and_then(|n| n.str()), item.get("count"))
        else {
            continue;
        };
        let mut scaled = false;
        for r in acc.iter_mut().filter(|r| r.named(name)) {
            let kind = str_at(&r.node, &["kind"]).unwrap_or_default();
            if SCALED.contains(&kind) {
                r.node = with_path(&r.node, &["spec", "replicas"], count.clone());
                scaled = true;
            }
        }
        if !scaled {
            return Err(BuildError::new(format!(
                "its `replicas` entry `{name}` names no Deployment, ReplicaSet, ReplicationController or StatefulSet"
            )));
        }
    }
    Ok(())
}

/// `images`: every `image` of a `containers` or `initContainers` list
/// anywhere in an object whose name the entry gives.
fn set_images(k: &Node, acc: &mut [Resource]) {
    let images = k.get("images").map(|v| v.items()).unwrap_or_default();
    if images.is_empty() {
        return;
    }
    for r in acc.iter_mut() {
        r.node = retag(&r.node, images, false);
    }
}

fn retag(node: &Arc<Node>, images: &[Arc<Node>], in_containers: bool) -> Arc<Node> {
    match &node.kind {
        Kind::Mapping(entries) => {
            let mut changed = false;
            let entries: Vec<Entry> = entries
                .iter()
                .map(|e| {
                    let value = if in_containers && e.key == "image" {
                        new_image(&e.value, images)
                    } else {
                        let containers = matches!(e.key.as_str(), "containers" | "initContainers")
                            && e.value.is_sequence();
                        retag(&e.value, images, containers)
                    };
                    changed |= !Arc::ptr_eq(&value, &e.value);
                    Entry { value, ..e.clone() }
                })
                .collect();
            if changed {
                Arc::new(node.with_kind(Kind::Mapping(entries)))
            } else {
                node.clone()
            }
        }
        Kind::Sequence(items) => {
            let retagged: Vec<Arc<Node>> = items
                .iter()
                .map(|i| {
                    if in_containers && i.is_mapping() {
                        retag_container(i, images)
                    } else {
                        retag(i, images, false)
                    }
                })
                .collect();
            if retagged.iter().zip(items).all(|(a, b)| Arc::ptr_eq(a, b)) {
                node.clone()
            } else {
                Arc::new(node.with_kind(Kind::Sequence(retagged)))
            }
        }
        Kind::Scalar { .. } => node.clone(),
    }
}

fn retag_container(container: &Arc<Node>, images: &[Arc<Node>]) -> Arc<Node> {
    let Some(image) = container.get("image") else {
        return retag(container, images, false);
    };
    let new = new_image(image, images);
    if Arc::ptr_eq(&new, image) {
        container.clone()
    } else {
        with_entry(container, "image", new, None)
    }
}

/// The image an `images` entry makes of `image`, placed at the entry.
fn new_image(image: &Arc<Node>, images: &[Arc<Node>]) -> Arc<Node> {
    let Some(text) = image.str() else {
        return image.clone();
    };
    let (name, tag) = split_image(text);
    for entry in images {
        if entry.get("name").and_then(|n| n.str()) != Some(name) {
            continue;
        }
        let field = |f: &str| {
            entry
                .get(f)
                .and_then(|n| n.str().map(|s| (s.to_string(), n.src)))
        };
        let new_name = field("newName");
        let new_tag = field("newTag");
        let digest = field("digest");
        let src = [&digest, &new_tag, &new_name]
            .into_iter()
            .flatten()
            .map(|(_, src)| *src)
            .next()
            .unwrap_or(entry.src);
        let name = new_name.map(|(n, _)| n).unwrap_or_else(|| name.to_string());
        let tag = match (digest, new_tag) {
            (Some((d, _)), _) => format!("@{d}"),
            (None, Some((t, _))) => format!(":{t}"),
            (None, None) => tag.to_string(),
        };
        return scalar(format!("{name}{tag}"), src);
    }
    image.clone()
}

/// `registry/name:tag@digest` → (`registry/name`, `:tag@digest`).
fn split_image(image: &str) -> (&str, &str) {
    let end_of_name = image.find('@').unwrap_or(image.len());
    let name = &image[..end_of_name];
    let tag_start = name
        .rfind(':')
        .filter(|&colon| !name[colon..].contains('/'))
        .unwrap_or(end_of_name);
    (&image[..tag_start], &image[tag_start..])
}

/// A patch's `target`: kustomize's selector, whose names are patterns.
struct Selector {
    group: Option<regex::Regex>,
    version: Option<regex::Regex>,
    kind: Option<regex::Regex>,
    name: Option<regex::Regex>,
    namespace: Option<regex::Regex>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

/// One term of a label selector.
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

impl Selector {
    fn of(target: &Node) -> Result<Selector, BuildError> {
        let pattern = |field: &str| -> Result<Option<regex::Regex>, BuildError> {
            let Some(text) = target.get(field).and_then(|n| n.str()) else {
                return Ok(None);
            };
            regex::Regex::new(&format!("^(?:{text})$"))
                .map(Some)
                .map_err(|_| {
                    BuildError::new(format!(
                        "a patch target's {field} `{text}` is not a pattern"
                    ))
                })
        };
        let requirements = |field: &str| -> Result<Vec<Requirement>, BuildError> {
            match target.get(field).and_then(|n| n.str()) {
                Some(text) => parse_selector(text),
                None => Ok(Vec::new()),
            }
        };
        Ok(Selector {
            group: pattern("group")?,
            version: pattern("version")?,
            kind: pattern("kind")?,
            name: pattern("name")?,
            namespace: pattern("namespace")?,
            labels: requirements("labelSelector")?,
            annotations: requirements("annotationSelector")?,
        })
    }

    fn selects(&self, r: &Resource) -> bool {
        let node = &r.node;
        let (group, version) = group_version(node);
        let is = |pattern: &Option<regex::Regex>, text: &str| {
            pattern.as_ref().is_none_or(|p| p.is_match(text))
        };
        is(&self.group, group)
            && is(&self.version, version)
            && is(&self.kind, str_at(node, &["kind"]).unwrap_or_default())
            && self
                .name
                .as_ref()
                .is_none_or(|p| r.names.iter().any(|n| p.is_match(n)))
            && is(
                &self.namespace,
                str_at(node, &["metadata", "namespace"]).unwrap_or_default(),
            )
            && satisfied(&self.labels, node.get_path(&["metadata", "labels"]))
            && satisfied(
                &self.annotations,
                node.get_path(&["metadata", "annotations"]),
            )
    }
}

fn parse_selector(text: &str) -> Result<Vec<Requirement>, BuildError> {
    let mut requirements = Vec::new();
    for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if term.contains(" in ") || term.contains(" notin ") || term.contains('(') {
            return Err(BuildError::new(format!(
                "a patch target's selector `{text}` uses set terms, which gpulint does not read"
            )));
        }
        let requirement = if let Some((k, v)) = term.split_once("!=") {
            Requirement::NotEquals(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
            Requirement::Equals(k.trim().into(), v.trim().into())
        } else if let Some(k) = term.strip_prefix('!') {
            Requirement::Absent(k.trim().into())
        } else {
            Requirement::Exists(term.into())
        };
        requirements.push(requirement);
    }
    Ok(requirements)
}

fn satisfied(requirements: &[Requirement], map: Option<&Arc<Node>>) -> bool {
    let value = |k: &str| map.and_then(|m| m.get(k)).and_then(|n| n.str());
    requirements.iter().all(|r| match r {
        Requirement::Equals(k, v) => value(k) == Some(v),
        Requirement::NotEquals(k, v) => value(k) != Some(v),
        Requirement::Exists(k) => value(k).is_some(),
        Requirement::Absent(k) => value(k).is_none(),
    })
}

#[cfg(test)]
mod tests;
