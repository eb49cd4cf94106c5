//! A YAML value as a program reads it, with where each part was written.
//!
//! [`super::yaml::Yaml`] is the text's syntax: aliases stay aliases and
//! `<<` merge keys stay keys, so every span is text the user wrote. A
//! [`Node`] tree is the value those resolve to (aliases followed, merge keys
//! applied, scalars interpolated), built from one or more files, where
//! every node keeps its [`Src`]: the file and the syntax node it came from.
//! Compose merges several files into one such tree per service; findings
//! and fixes then point at the file and node that decided each value.
//!
//! Trees are immutable and share subtrees ([`Arc`]): an anchor read by a
//! thousand aliases is one subtree. Building one is bounded by a
//! [`Budget`], so an alias or merge-key bomb is an error, not an abort.

use super::yaml::{NodeId, Style, Value, Yaml};
use foldhash::{HashMap, HashMapExt, HashSet};
use std::sync::Arc;

/// Where a node was written: which file (an index the caller assigns) and
/// which node of that file's syntax tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Src {
    pub file: u32,
    pub node: NodeId,
}

/// What a scalar's text becomes once variables are substituted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interpolated {
    /// The value, known.
    Text(String),
    /// It depends on a variable nothing here sets (the shell may): its name.
    Unknown(String),
    /// The value cannot be interpolated (a malformed `${`, a required
    /// variable that is unset): why.
    Invalid(String),
}

impl Interpolated {
    pub fn text(&self) -> Option<&str> {
        match self {
            Interpolated::Text(t) => Some(t),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Scalar {
        /// The text as written (after YAML's own unescaping).
        raw: String,
        style: Style,
        /// The interpolated value.
        value: Interpolated,
    },
    Sequence(Vec<Arc<Node>>),
    Mapping(Vec<Entry>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub kind: Kind,
    /// `!reset`, `!override`, `!!str`, ...
    pub tag: Option<String>,
    pub src: Src,
    /// For a `KEY=value` item Compose makes of a mapping entry when it
    /// merges (`environment: {KEY: value}`): where the key is written.
    pub entry_key: Option<Src>,
    /// For a mapping of many entries, where each key is (see [`KeyIndex`]).
    pub keys: KeyIndex,
}

/// Where each key of a large mapping is among its entries, so that
/// [`Node::entry`] is a hash lookup: the `services:` of a project of
/// thousands of services is looked up once per service, and scanning it
/// each time made loading, validating and fixing quadratic. Not part of
/// a node's value: two nodes are equal whatever their indexes.
#[derive(Clone, Default)]
pub struct KeyIndex(Option<Arc<foldhash::HashMap<String, u32>>>);

impl KeyIndex {
    /// Mappings with fewer entries are scanned: as fast as hashing.
    const FROM: usize = 16;

    pub fn of(kind: &Kind) -> KeyIndex {
        match kind {
            Kind::Mapping(entries) if entries.len() >= Self::FROM => {
                let mut index =
                    <foldhash::HashMap<_, _> as foldhash::HashMapExt>::with_capacity(entries.len());
                for (i, entry) in entries.iter().enumerate() {
                    // The first of repeated keys, as a scan finds.
                    index.entry(entry.key.clone()).or_insert(i as u32);
                }
                KeyIndex(Some(Arc::new(index)))
            }
            _ => KeyIndex(None),
        }
    }
}

impl PartialEq for KeyIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for KeyIndex {}

impl std::fmt::Debug for KeyIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyIndex")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    /// Where the key is written.
    pub key_src: Src,
    pub value: Arc<Node>,
}

impl Node {
    /// A node with the same source and tag and another value.
    pub fn with_kind(&self, kind: Kind) -> Node {
        Node {
            keys: KeyIndex::of(&kind),
            kind,
            tag: self.tag.clone(),
            src: self.src,
            entry_key: self.entry_key,
        }
    }

    pub fn entries(&self) -> &[Entry] {
        match &self.kind {
            Kind::Mapping(entries) => entries,
            _ => &[],
        }
    }

    pub fn items(&self) -> &[Arc<Node>] {
        match &self.kind {
            Kind::Sequence(items) => items,
            _ => &[],
        }
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        match &self.keys.0 {
            Some(index) => index.get(key).map(|&i| &self.entries()[i as usize]),
            None => self.entries().iter().find(|e| e.key == key),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Arc<Node>> {
        self.entry(key).map(|e| &e.value)
    }

    /// Follows a path of keys through nested mappings.
    pub fn get_path(&self, path: &[&str]) -> Option<&Arc<Node>> {
        let (first, rest) = path.split_first()?;
        let mut node = self.get(first)?;
        for key in rest {
            node = node.get(key)?;
        }
        Some(node)
    }

    pub fn is_mapping(&self) -> bool {
        matches!(self.kind, Kind::Mapping(_))
    }

    pub fn is_sequence(&self) -> bool {
        matches!(self.kind, Kind::Sequence(_))
    }

    /// A plain `null`, `~` or empty scalar with no tag.
    pub fn is_null(&self) -> bool {
        self.tag.is_none()
            && matches!(&self.kind, Kind::Scalar { raw, style: Style::Plain, .. } if matches!(raw.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// The interpolated text of a scalar whose value is known.
    pub fn str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar { value, .. } => value.text(),
            _ => None,
        }
    }

    /// The scalar's text as written.
    pub fn raw(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar { raw, .. } => Some(raw),
            _ => None,
        }
    }

    /// The scalar's interpolated value.
    pub fn interpolated(&self) -> Option<&Interpolated> {
        match &self.kind {
            Kind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Written without quotes, so YAML types it (a number, a bool, null).
    pub fn is_plain(&self) -> bool {
        matches!(
            self.kind,
            Kind::Scalar {
                style: Style::Plain,
                ..
            }
        )
    }

    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    /// The strings of a sequence of scalars, or of one scalar.
    pub fn strings(&self) -> Vec<&str> {
        match &self.kind {
            Kind::Sequence(items) => items.iter().filter_map(|i| i.str()).collect(),
            Kind::Scalar { .. } => self.str().into_iter().collect(),
            Kind::Mapping(_) => Vec::new(),
        }
    }

    /// How many nodes the tree has, counting a shared subtree each time it
    /// is reached; stops counting past `limit`.
    pub fn size(&self, limit: usize) -> usize {
        let mut count = 0;
        let mut stack: Vec<&Node> = vec![self];
        while let Some(node) = stack.pop() {
            count += 1;
            if count > limit {
                return count;
            }
            match &node.kind {
                Kind::Scalar { .. } => {}
                Kind::Sequence(items) => stack.extend(items.iter().map(|i| &**i)),
                Kind::Mapping(entries) => stack.extend(entries.iter().map(|e| &*e.value)),
            }
        }
        count
    }
}

/// How much a file's tree may hold: the nodes built, counting each merged
/// mapping's entries. A file past it is refused, with where.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub nodes: usize,
}

impl Default for Budget {
    /// Far above any real compose file (the biggest seen have a few
    /// thousand nodes), far below what would exhaust memory.
    fn default() -> Self {
        Budget { nodes: 4_000_000 }
    }
}

/// Why a tree could not be built, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeError {
    pub message: String,
    pub src: Src,
}

/// How deep aliases, merge keys and nesting may go while building.
const MAX_DEPTH: usize = 256;

/// Builds trees from one file's syntax: aliases followed (each anchored
/// node built once and shared), `<<` merge keys applied as go-yaml applies
/// them, `!reset` entries kept with their tag (a later file's reset is the
/// merge's business), scalars interpolated by `interpolate`.
pub struct Builder<'a> {
    yaml: &'a Yaml,
    file: u32,
    interpolate: &'a dyn Fn(&str) -> Interpolated,
    built: HashMap<NodeId, Arc<Node>>,
    budget: usize,
}

impl<'a> Builder<'a> {
    pub fn new(
        yaml: &'a Yaml,
        file: u32,
        budget: Budget,
        interpolate: &'a dyn Fn(&str) -> Interpolated,
    ) -> Self {
        Builder {
            yaml,
            file,
            interpolate,
            built: HashMap::new(),
            budget: budget.nodes,
        }
    }

    fn src(&self, node: NodeId) -> Src {
        Src {
            file: self.file,
            node,
        }
    }

    fn spend(&mut self, n: usize, at: NodeId) -> Result<(), TreeError> {
        if n > self.budget {
            return Err(TreeError {
                message: "the file's aliases and merge keys expand past what gpulint reads (4 million nodes)".into(),
                src: self.src(at),
            });
        }
        self.budget -= n;
        Ok(())
    }

    /// The tree of `node`.
    pub fn build(&mut self, node: NodeId) -> Result<Arc<Node>, TreeError> {
        self.build_at(node, 0)
    }

    fn build_at(&mut self, node: NodeId, depth: usize) -> Result<Arc<Node>, TreeError> {
        if let Some(done) = self.built.get(&node) {
            return Ok(done.clone());
        }
        if depth > MAX_DEPTH {
            return Err(TreeError {
                message: format!("nesting deeper than {MAX_DEPTH} levels"),
                src: self.src(node),
            });
        }
        self.spend(1, node)?;
        let syntax = self.yaml.node(node);
        let built = match &syntax.value {
            Value::Alias(Some(target)) => self.build_at(*target, depth + 1)?,
            Value::Alias(None) => {
                return Err(TreeError {
                    message: "an alias names an anchor that is not defined".into(),
                    src: self.src(node),
                });
            }
            Value::Scalar { text, style } => Arc::new(Node {
                kind: Kind::Scalar {
                    raw: text.clone(),
                    style: *style,
                    // Tagged values (`!reset`, `!!int`) are interpolated
                    // too: compose-go interpolates the decoded value; the
                    // tag says how it is typed.
                    value: (self.interpolate)(text),
                },
                tag: syntax.tag.clone(),
                src: self.src(node),
                entry_key: None,
                keys: KeyIndex::default(),
            }),
            Value::Sequence(items) => {
                let mut built = Vec::with_capacity(items.len());
                for &item in items {
                    built.push(self.build_at(item, depth + 1)?);
                }
                Arc::new(Node {
                    kind: Kind::Sequence(built),
                    tag: syntax.tag.clone(),
                    src: self.src(node),
                    entry_key: None,
                    keys: KeyIndex::default(),
                })
            }
            Value::Mapping(_) => {
                let entries = self.mapping_entries(node, depth)?;
                let kind = Kind::Mapping(entries);
                Arc::new(Node {
                    keys: KeyIndex::of(&kind),
                    kind,
                    tag: syntax.tag.clone(),
                    src: self.src(node),
                    entry_key: None,
                })
            }
        };
        // Only an anchored node can be reached again (through an alias or
        // a merge key): every other node has one parent and is built once,
        // so remembering it would only cost a hash insert per node.
        if syntax.anchored {
            self.built.insert(node, built.clone());
        }
        Ok(built)
    }

    /// A mapping's entries as go-yaml decodes them: its own keys, then the
    /// keys of its `<<` sources that it does not have (the first source
    /// listed wins among them).
    fn mapping_entries(&mut self, map: NodeId, depth: usize) -> Result<Vec<Entry>, TreeError> {
        let Value::Mapping(pairs) = &self.yaml.node(map).value else {
            return Ok(Vec::new());
        };
        let mut entries: Vec<Entry> = Vec::with_capacity(pairs.len());
        let mut keys = KeysSeen::default();
        let mut sources: Vec<NodeId> = Vec::new();
        for &(key, value) in pairs {
            let key_node = self.yaml.node(key);
            let key_text = match &key_node.value {
                Value::Scalar { text, style } => {
                    if *style == Style::Plain && text == "<<" {
                        sources.push(value);
                        continue;
                    }
                    text.clone()
                }
                // A key that is itself a collection or an alias: not a
                // name Compose or Kubernetes reads.
                _ => continue,
            };
            let built = self.build_at(value, depth + 1)?;
            // The syntax tree refuses duplicate keys; keep the first.
            if keys.insert(&entries, &key_text) {
                entries.push(Entry {
                    key: key_text,
                    key_src: self.src(key),
                    value: built,
                });
            }
        }
        for source in sources {
            let targets: Vec<NodeId> = match &self.yaml.node(self.yaml.resolve(source)).value {
                Value::Sequence(items) => items.clone(),
                _ => vec![source],
            };
            for target in targets {
                let merged = self.build_at(target, depth + 1)?;
                let Kind::Mapping(from) = &merged.kind else {
                    continue;
                };
                self.spend(from.len(), map)?;
                for entry in from {
                    if keys.insert(&entries, &entry.key) {
                        entries.push(entry.clone());
                    }
                }
            }
        }
        Ok(entries)
    }
}

/// The keys of a mapping being built, to keep the first of each: small
/// mappings (most of them) are scanned, large ones hashed.
#[derive(Default)]
struct KeysSeen(Option<HashSet<String>>);

impl KeysSeen {
    const HASHED_FROM: usize = 16;

    /// Whether `key` is new among `entries` (the keys kept so far), and
    /// remembers it when it is.
    fn insert(&mut self, entries: &[Entry], key: &str) -> bool {
        if self.0.is_none() && entries.len() >= Self::HASHED_FROM {
            self.0 = Some(entries.iter().map(|e| e.key.clone()).collect());
        }
        match &mut self.0 {
            Some(seen) => seen.insert(key.to_string()),
            None => !entries.iter().any(|e| e.key == key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep(text: &str) -> Interpolated {
        Interpolated::Text(text.to_string())
    }

    fn tree(text: &str) -> Arc<Node> {
        let yaml = Yaml::parse(text).unwrap();
        let root = yaml.documents[0].root.unwrap();
        let mut builder = Builder::new(&yaml, 7, Budget::default(), &keep);
        builder.build(root).unwrap()
    }

    #[test]
    fn aliases_and_merge_keys_resolve_with_their_sources() {
        let text = "x: &base\n  shm_size: 1g\n  ipc: host\nservices:\n  a:\n    <<: *base\n    ipc: private\n  b: *base\n";
        let root = tree(text);
        let a = root.get_path(&["services", "a"]).unwrap();
        assert_eq!(a.get("ipc").unwrap().str(), Some("private"));
        assert_eq!(a.get("shm_size").unwrap().str(), Some("1g"));
        let keys: Vec<&str> = a.entries().iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["ipc", "shm_size"]);
        // The merged value is the anchored one, in the same file.
        let b = root.get_path(&["services", "b"]).unwrap();
        assert!(Arc::ptr_eq(b, root.get("x").unwrap()));
        assert_eq!(a.get("shm_size").unwrap().src.file, 7);
    }

    #[test]
    fn the_first_merge_source_wins() {
        let root = tree("a: &a {k: 1}\nb: &b {k: 2, j: 3}\nc:\n  <<: [*a, *b]\n");
        let c = root.get("c").unwrap();
        assert_eq!(c.get("k").unwrap().str(), Some("1"));
        assert_eq!(c.get("j").unwrap().str(), Some("3"));
    }

    #[test]
    fn an_alias_bomb_is_an_error_not_an_abort() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..40 {
            text.push_str(&format!(
                "a{i}: &a{i}\n  <<: [{{k{i}: 1}}]\n  v: [*a{p}, *a{p}, *a{p}, *a{p}]\n",
                p = i - 1
            ));
        }
        // Shared subtrees: linear to build, however large the value.
        let root = tree(&text);
        assert!(root.size(1000) > 1000);
        // A merge chain that copies ever more keys runs into the budget.
        let mut text = String::from("m0: &m0 {k0: 1}\n");
        for i in 1..3000 {
            text.push_str(&format!("m{i}: &m{i}\n  <<: *m{p}\n  k{i}: 1\n", p = i - 1));
        }
        let yaml = Yaml::parse(&text).unwrap();
        let root = yaml.documents[0].root.unwrap();
        let mut builder = Builder::new(&yaml, 0, Budget { nodes: 100_000 }, &keep);
        let error = builder.build(root).unwrap_err();
        assert!(error.message.contains("expand past"), "{error:?}");
    }
}
