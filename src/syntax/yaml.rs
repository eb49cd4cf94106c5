//! A YAML tree with byte spans for every node, built from saphyr-parser's events.
//!
//! Nodes live in one arena per file. Aliases stay aliases (they point at the
//! anchored node) instead of being expanded, so an alias bomb costs one node per
//! alias, and every span points at text the user wrote. `<<` merge keys are
//! resolved lazily by [`Yaml::get`] and [`Yaml::entries`].

use crate::text::TextRange;
use saphyr_parser::{Event, Parser, ScalarStyle};
use std::collections::HashMap;

pub type NodeId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

#[derive(Debug, Clone)]
pub enum Value {
    Scalar { text: String, style: Style },
    Sequence(Vec<NodeId>),
    Mapping(Vec<(NodeId, NodeId)>),
    /// An alias and the node its anchor names (`None` for an undefined anchor).
    Alias(Option<NodeId>),
}

#[derive(Debug, Clone)]
pub struct Node {
    pub value: Value,
    /// The node's own text, without its anchor or tag.
    pub range: TextRange,
    /// Where the node's properties (anchor, tag) start; equals `range.start` when it has none.
    pub props_start: u32,
    pub tag: Option<String>,
    pub anchored: bool,
    pub flow: bool,
}

#[derive(Debug, Clone)]
pub struct Document {
    pub root: Option<NodeId>,
}

/// One map entry: where its key and its value are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub key: NodeId,
    pub value: NodeId,
    /// The entry came from a `<<` merge rather than being written in the mapping itself.
    pub merged: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub message: String,
    pub offset: usize,
}

#[derive(Debug, Clone)]
pub struct Yaml {
    pub nodes: Vec<Node>,
    pub documents: Vec<Document>,
    /// Ranges of all scalars in document order; used to tell comments from text.
    scalar_ranges: Vec<TextRange>,
}

/// Guards recursion through aliases and merge chains.
const MAX_MERGE_DEPTH: usize = 32;

impl Yaml {
    pub fn parse(text: &str) -> Result<Yaml, YamlError> {
        Builder::new(text).run()
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// Follows aliases to the node they name.
    pub fn resolve(&self, mut id: NodeId) -> NodeId {
        for _ in 0..MAX_MERGE_DEPTH {
            match self.node(id).value {
                Value::Alias(Some(target)) => id = target,
                _ => return id,
            }
        }
        id
    }

    pub fn value(&self, id: NodeId) -> &Value {
        &self.node(self.resolve(id)).value
    }

    pub fn range(&self, id: NodeId) -> TextRange {
        self.node(id).range
    }

    /// The scalar text of a node (through aliases).
    pub fn str(&self, id: NodeId) -> Option<&str> {
        match self.value(id) {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// A scalar written without quotes, so YAML may read it as a number, bool or null.
    pub fn is_plain(&self, id: NodeId) -> bool {
        matches!(
            self.value(id),
            Value::Scalar {
                style: Style::Plain,
                ..
            }
        )
    }

    pub fn is_null(&self, id: NodeId) -> bool {
        let node = self.node(self.resolve(id));
        node.tag.is_none()
            && matches!(&node.value, Value::Scalar { text, style: Style::Plain } if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    pub fn is_mapping(&self, id: NodeId) -> bool {
        matches!(self.value(id), Value::Mapping(_))
    }

    pub fn items(&self, id: NodeId) -> &[NodeId] {
        match self.value(id) {
            Value::Sequence(items) => items,
            _ => &[],
        }
    }

    /// The entries of a mapping as Compose and Kubernetes see them: its own
    /// entries, then those merged in with `<<` (own keys win; among merge
    /// sources the first listed wins). Entries whose value is tagged `!reset`
    /// are dropped, as Compose does.
    pub fn entries(&self, map: NodeId) -> Vec<Entry> {
        let mut out = Vec::new();
        self.collect_entries(map, false, &mut out, 0);
        out.retain(|e| self.node(e.value).tag.as_deref() != Some("!reset"));
        out
    }

    fn collect_entries(&self, map: NodeId, merged: bool, out: &mut Vec<Entry>, depth: usize) {
        if depth > MAX_MERGE_DEPTH {
            return;
        }
        let Value::Mapping(pairs) = self.value(map) else {
            return;
        };
        let mut merge_sources = Vec::new();
        for &(key, value) in pairs {
            if self.is_merge_key(key) {
                merge_sources.push(value);
                continue;
            }
            let name = self.str(key);
            if let Some(existing) = out.iter_mut().find(|e| self.str(e.key) == name) {
                // A duplicate key written in the same mapping: the last one wins.
                if !merged && !existing.merged {
                    *existing = Entry { key, value, merged };
                }
                continue;
            }
            out.push(Entry { key, value, merged });
        }
        for source in merge_sources {
            match self.value(source) {
                Value::Sequence(items) => {
                    for &item in items {
                        self.collect_entries(item, true, out, depth + 1);
                    }
                }
                _ => self.collect_entries(source, true, out, depth + 1),
            }
        }
    }

    fn is_merge_key(&self, key: NodeId) -> bool {
        let node = self.node(key);
        matches!(&node.value, Value::Scalar { text, style: Style::Plain } if text == "<<")
    }

    /// Looks a key up in a mapping, honouring merges and `!reset`.
    pub fn get(&self, map: NodeId, key: &str) -> Option<Entry> {
        // Fast path without allocating: own entries first.
        if let Value::Mapping(pairs) = self.value(map) {
            let mut own = None;
            let mut has_merge = false;
            for &(k, v) in pairs {
                if self.is_merge_key(k) {
                    has_merge = true;
                } else if self.str(k) == Some(key) {
                    own = Some(Entry {
                        key: k,
                        value: v,
                        merged: false,
                    });
                }
            }
            if let Some(entry) = own {
                return (self.node(entry.value).tag.as_deref() != Some("!reset")).then_some(entry);
            }
            if !has_merge {
                return None;
            }
        } else {
            return None;
        }
        self.entries(map)
            .into_iter()
            .find(|e| self.str(e.key) == Some(key))
    }

    /// Follows a path of keys through nested mappings.
    pub fn get_path(&self, map: NodeId, path: &[&str]) -> Option<Entry> {
        let (first, rest) = path.split_first()?;
        let mut entry = self.get(map, first)?;
        for key in rest {
            entry = self.get(entry.value, key)?;
        }
        Some(entry)
    }

    /// Whether a byte offset lies inside a scalar's text (so a `#` there is not a comment).
    pub fn offset_in_scalar(&self, offset: usize) -> bool {
        let idx = self
            .scalar_ranges
            .partition_point(|r| (r.start as usize) <= offset);
        idx > 0 && self.scalar_ranges[idx - 1].contains(offset)
    }
}

/// Maps saphyr's character indices to byte offsets.
enum OffsetMap {
    Ascii,
    Table(Vec<u32>),
}

impl OffsetMap {
    fn new(text: &str) -> Self {
        if text.is_ascii() {
            return OffsetMap::Ascii;
        }
        let mut table: Vec<u32> = text.char_indices().map(|(b, _)| b as u32).collect();
        table.push(text.len() as u32);
        OffsetMap::Table(table)
    }

    fn byte(&self, char_index: usize) -> usize {
        match self {
            OffsetMap::Ascii => char_index,
            OffsetMap::Table(t) => t.get(char_index).map_or_else(
                || t.last().copied().unwrap_or(0) as usize,
                |&b| b as usize,
            ),
        }
    }
}

enum Frame {
    Seq {
        id: NodeId,
        items: Vec<NodeId>,
    },
    Map {
        id: NodeId,
        pairs: Vec<(NodeId, NodeId)>,
        key: Option<NodeId>,
    },
}

struct Builder<'a> {
    text: &'a str,
    offsets: OffsetMap,
    nodes: Vec<Node>,
    documents: Vec<Document>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, NodeId>,
    root: Option<NodeId>,
    scalar_ranges: Vec<TextRange>,
}

impl<'a> Builder<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            offsets: OffsetMap::new(text),
            nodes: Vec::new(),
            documents: Vec::new(),
            stack: Vec::new(),
            anchors: HashMap::new(),
            root: None,
            scalar_ranges: Vec::new(),
        }
    }

    fn run(mut self) -> Result<Yaml, YamlError> {
        for event in Parser::new_from_str(self.text) {
            let (event, span) = event.map_err(|e| YamlError {
                message: e.info().to_string(),
                offset: self.offsets.byte(e.marker().index()),
            })?;
            let start = self.offsets.byte(span.start.index());
            let end = self.offsets.byte(span.end.index()).max(start);
            match event {
                Event::DocumentStart(_) => {
                    self.root = None;
                    self.anchors.clear();
                }
                Event::DocumentEnd => self.documents.push(Document {
                    root: self.root.take(),
                }),
                Event::Scalar(text, style, anchor, tag) => {
                    let style = match style {
                        ScalarStyle::Plain => Style::Plain,
                        ScalarStyle::SingleQuoted => Style::SingleQuoted,
                        ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                        ScalarStyle::Literal => Style::Literal,
                        ScalarStyle::Folded => Style::Folded,
                    };
                    let (props_start, mut range) = self.skip_properties(start, end);
                    if matches!(style, Style::Literal | Style::Folded) {
                        // Block scalar spans run on to the next token; trim the trailing blank lines.
                        let trimmed = self.text[range.as_range()].trim_end().len();
                        range.end = range.start + trimmed as u32;
                    }
                    self.scalar_ranges.push(range);
                    let id = self.push(Node {
                        value: Value::Scalar {
                            text: text.into_owned(),
                            style,
                        },
                        range,
                        props_start,
                        tag: tag.map(|t| format!("{}{}", t.handle, t.suffix)),
                        anchored: anchor != 0,
                        flow: false,
                    });
                    if anchor != 0 {
                        self.anchors.insert(anchor, id);
                    }
                    self.attach(id);
                }
                Event::Alias(anchor) => {
                    let target = self.anchors.get(&anchor).copied();
                    let id = self.push(Node {
                        value: Value::Alias(target),
                        range: TextRange::new(start, end),
                        props_start: start as u32,
                        tag: None,
                        anchored: false,
                        flow: false,
                    });
                    self.attach(id);
                }
                Event::SequenceStart(anchor, tag) => self.open(false, anchor, tag, start, end),
                Event::MappingStart(anchor, tag) => self.open(true, anchor, tag, start, end),
                Event::SequenceEnd | Event::MappingEnd => {
                    let Some(frame) = self.stack.pop() else {
                        continue;
                    };
                    let (id, value, last) = match frame {
                        Frame::Seq { id, items } => {
                            let last = items.last().copied();
                            (id, Value::Sequence(items), last)
                        }
                        Frame::Map { id, pairs, .. } => {
                            let last = pairs.last().map(|&(_, v)| v);
                            (id, Value::Mapping(pairs), last)
                        }
                    };
                    let node = &mut self.nodes[id as usize];
                    node.value = value;
                    if node.flow {
                        node.range.end = end as u32;
                    } else if let Some(last) = last {
                        let last_end = self.nodes[last as usize].range.end;
                        let node = &mut self.nodes[id as usize];
                        node.range.end = node.range.end.max(last_end);
                    }
                    self.attach(id);
                }
                Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
            }
        }
        Ok(Yaml {
            nodes: self.nodes,
            documents: self.documents,
            scalar_ranges: self.scalar_ranges,
        })
    }

    fn open(
        &mut self,
        mapping: bool,
        anchor: usize,
        tag: Option<std::borrow::Cow<'_, saphyr_parser::Tag>>,
        start: usize,
        end: usize,
    ) {
        let (props_start, range) = self.skip_properties(start, end);
        let flow = matches!(
            self.text.as_bytes().get(range.start as usize),
            Some(b'{' | b'[')
        );
        let id = self.push(Node {
            value: if mapping {
                Value::Mapping(Vec::new())
            } else {
                Value::Sequence(Vec::new())
            },
            range,
            props_start,
            tag: tag.map(|t| format!("{}{}", t.handle, t.suffix)),
            anchored: anchor != 0,
            flow,
        });
        if anchor != 0 {
            self.anchors.insert(anchor, id);
        }
        self.stack.push(if mapping {
            Frame::Map {
                id,
                pairs: Vec::new(),
                key: None,
            }
        } else {
            Frame::Seq {
                id,
                items: Vec::new(),
            }
        });
    }

    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        (self.nodes.len() - 1) as NodeId
    }

    fn attach(&mut self, id: NodeId) {
        match self.stack.last_mut() {
            None => self.root = Some(id),
            Some(Frame::Seq { items, .. }) => items.push(id),
            Some(Frame::Map { pairs, key, .. }) => match key.take() {
                None => *key = Some(id),
                Some(k) => pairs.push((k, id)),
            },
        }
    }

    /// Moves a span's start past `&anchor` and `!tag` properties.
    fn skip_properties(&self, start: usize, end: usize) -> (u32, TextRange) {
        let bytes = self.text.as_bytes();
        let mut pos = start;
        while pos < bytes.len() && matches!(bytes[pos], b'&' | b'!') {
            while pos < bytes.len() && !bytes[pos].is_ascii_whitespace() {
                pos += 1;
            }
            while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
                pos += 1;
            }
        }
        let pos = if pos > end { start } else { pos };
        (start as u32, TextRange::new(pos, end.max(pos)))
    }
}
