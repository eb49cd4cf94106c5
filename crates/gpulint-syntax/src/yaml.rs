//! A YAML tree with byte spans for every node, built from saphyr-parser's events.
//!
//! Nodes live in one arena per file. Aliases stay aliases (they point at the
//! anchored node) instead of being expanded, so an alias bomb costs one node per
//! alias, and every span points at text the user wrote. `<<` merge keys are
//! resolved lazily by [`Yaml::get`] and [`Yaml::entries`].

use crate::text::TextRange;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use saphyr_parser::{Event, Parser, ScalarStyle};

mod builder;
use builder::*;

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
    Scalar {
        text: String,
        style: Style,
    },
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
    /// For each mapping with many entries, the index in its pairs of each
    /// scalar key: [`Yaml::get`] is then one hash lookup, not a scan, so a
    /// rule looking up each of 100k services by name stays linear.
    key_index: HashMap<NodeId, HashMap<String, u32>>,
    /// Where each alias starts, sorted: which documents have aliases is
    /// asked once per document, and scanning every node each time made a
    /// stream of n documents cost n².
    alias_starts: Vec<u32>,
}

/// Mappings with at least this many entries get a [`Yaml::key_index`]
/// entry; a scan of fewer is as fast as hashing.
const INDEXED_MAPPING: usize = 16;

/// Guards recursion through aliases and merge chains. Merges are walked
/// once per mapping (see `collect_entries`), so this bounds only the stack,
/// not the work; Compose itself has no limit.
const MAX_MERGE_DEPTH: usize = 256;

impl Yaml {
    pub fn parse(text: &str) -> Result<Yaml, YamlError> {
        Self::parse_counting(text, &mut 0)
    }

    /// [`Yaml::parse`], counting the parses of the (repaired) text in
    /// `parses`: each one reads the whole text, so their number is bounded.
    fn parse_counting(text: &str, parses: &mut usize) -> Result<Yaml, YamlError> {
        // Go's yaml.v3, which Docker Compose uses, accepts flow collections whose
        // continuation lines (often the closing `]`) sit at the parent's
        // indentation; saphyr rejects them. For exactly that error we re-parse
        // with a space inserted at the start of the line and map every span
        // back, so the user's text and offsets are untouched.
        //
        // It also takes a tab as the separator after a mapping's `:`
        // (`image:<TAB>x`), which saphyr refuses before a plain scalar. For
        // that error every `:` + tab is given a space instead (the same
        // length: no span moves); a tab that turns out to be inside a scalar
        // (a block scalar's text, a quoted string) is put back.
        let mut patched = std::borrow::Cow::Borrowed(text);
        let mut inserted: Vec<usize> = Vec::new();
        // The tabs given a space, when they were (offsets in `patched`).
        let mut tabs: Option<Vec<usize>> = None;
        // The lines given a space (their offsets in `text`).
        let mut repaired_lines: Vec<usize> = Vec::new();
        loop {
            *parses += 1;
            match Builder::new(&patched).run() {
                Ok(mut yaml) => {
                    if let Some(replaced) = &mut tabs {
                        let inside: Vec<usize> = replaced
                            .iter()
                            .copied()
                            .filter(|&at| yaml.offset_in_scalar(at))
                            .collect();
                        if !inside.is_empty() {
                            let mut owned = patched.into_owned();
                            for &at in &inside {
                                owned.replace_range(at..=at, "\t");
                            }
                            replaced.retain(|at| !inside.contains(at));
                            patched = std::borrow::Cow::Owned(owned);
                            continue;
                        }
                    }
                    if !inserted.is_empty() {
                        yaml.remap(&inserted);
                    }
                    yaml.index_aliases();
                    return Ok(yaml);
                }
                Err(mut e) => {
                    if tabs.is_none()
                        && e.message
                            .starts_with("':' must be followed by a valid YAML whitespace")
                    {
                        let (spaced, at) = space_tabs_after_colons(&patched);
                        patched = std::borrow::Cow::Owned(spaced);
                        tabs = Some(at);
                        continue;
                    }
                    let repairable = inserted.len() < MAX_INDENT_REPAIRS
                        && e.message.starts_with("invalid indentation")
                        && is_flow_continuation(&patched, e.offset);
                    if !repairable {
                        e.offset = to_original(&inserted, e.offset);
                        return Err(e);
                    }
                    let line_start = patched[..e.offset].rfind('\n').map_or(0, |i| i + 1);
                    // A line given a space before that is deeper than the
                    // line above it now, and still refused, is refused for
                    // another reason (a quoted scalar left open runs on):
                    // more spaces would only re-parse the text again.
                    let original_line = to_original(&inserted, line_start);
                    if repaired_lines.contains(&original_line)
                        && indentation(&patched[line_start..])
                            > previous_indentation(&patched[..line_start])
                    {
                        e.offset = to_original(&inserted, e.offset);
                        return Err(e);
                    }
                    repaired_lines.push(original_line);
                    for pos in inserted.iter_mut().chain(tabs.iter_mut().flatten()) {
                        if *pos >= line_start {
                            *pos += 1;
                        }
                    }
                    inserted.push(line_start);
                    inserted.sort_unstable();
                    let mut owned = patched.into_owned();
                    owned.insert(line_start, ' ');
                    patched = std::borrow::Cow::Owned(owned);
                }
            }
        }
    }

    /// Records where each alias starts, for [`Yaml::has_alias_in`].
    fn index_aliases(&mut self) {
        self.alias_starts = self
            .nodes
            .iter()
            .filter(|n| matches!(n.value, Value::Alias(_)))
            .map(|n| n.range.start)
            .collect();
        self.alias_starts.sort_unstable();
    }

    /// Maps offsets of a repaired text back to the original.
    fn remap(&mut self, inserted: &[usize]) {
        let map = |r: TextRange| TextRange {
            start: to_original(inserted, r.start as usize) as u32,
            end: to_original(inserted, r.end as usize) as u32,
        };
        for node in &mut self.nodes {
            node.range = map(node.range);
            node.props_start = to_original(inserted, node.props_start as usize) as u32;
        }
        for r in &mut self.scalar_ranges {
            *r = map(*r);
        }
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
        self.collect_entries(
            map,
            false,
            &mut out,
            &mut KeySet::default(),
            &mut HashSet::new(),
            0,
        );
        out.retain(|e| self.node(e.value).tag.as_deref() != Some("!reset"));
        out
    }

    /// `visited` holds the mappings already collected: a mapping merged in a
    /// second time (`<<: [*a, *a]`, or twice down a chain) adds nothing, as
    /// its keys are all in `out` by then, and walking it again would make a
    /// chain of such merges cost 2^depth.
    fn collect_entries<'s>(
        &'s self,
        map: NodeId,
        merged: bool,
        out: &mut Vec<Entry>,
        seen: &mut KeySet<'s>,
        visited: &mut HashSet<NodeId>,
        depth: usize,
    ) {
        let map = self.resolve(map);
        if depth > MAX_MERGE_DEPTH || !visited.insert(map) {
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
            // A key the mapping already has (its own, or from an earlier merge
            // source) wins; a mapping never repeats its own keys (see
            // `refuse_invalid_keys`).
            if !seen.insert(self.str(key)) {
                continue;
            }
            out.push(Entry { key, value, merged });
        }
        for source in merge_sources {
            match self.value(source) {
                Value::Sequence(items) => {
                    for &item in items {
                        self.collect_entries(item, true, out, seen, visited, depth + 1);
                    }
                }
                _ => self.collect_entries(source, true, out, seen, visited, depth + 1),
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
        let resolved = self.resolve(map);
        if let Value::Mapping(pairs) = &self.node(resolved).value {
            let mut own = None;
            let mut has_merge = false;
            if let Some(index) = self.key_index.get(&resolved) {
                // A large mapping: its keys are indexed (merge keys too).
                has_merge =
                    index.contains_key("<<") && pairs.iter().any(|&(k, _)| self.is_merge_key(k));
                own = index
                    .get(key)
                    .map(|&at| pairs[at as usize])
                    .filter(|&(k, _)| !self.is_merge_key(k))
                    .map(|(k, v)| Entry {
                        key: k,
                        value: v,
                        merged: false,
                    });
            } else {
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

    /// The entry `key` would have in `map` without its own: the one its
    /// `<<` merges bring (the first source listed that has it wins), which
    /// removing the mapping's own entry would reveal.
    pub fn merged_entry(&self, map: NodeId, key: &str) -> Option<Entry> {
        let Value::Mapping(pairs) = self.value(map) else {
            return None;
        };
        let sources = pairs
            .iter()
            .filter(|&&(k, _)| self.is_merge_key(k))
            .flat_map(|&(_, source)| match self.value(source) {
                Value::Sequence(items) => items.clone(),
                _ => vec![source],
            });
        for source in sources {
            if let Some(entry) = self.get(self.resolve(source), key) {
                return Some(Entry {
                    merged: true,
                    ..entry
                });
            }
        }
        None
    }

    /// Whether `map` is `target` or merges it in (through `<<`, transitively),
    /// so that a key added to `target` may show up in `map`.
    #[cfg(test)] // only the tests ask
    pub(crate) fn merges_from(&self, map: NodeId, target: NodeId) -> bool {
        self.merged_into(map).contains(&self.resolve(target))
    }

    /// Every mapping that `map` is or merges in (through `<<`,
    /// transitively): the `target`s `Yaml::merges_from` is true for.
    /// Asking once per mapping and indexing the answer lets a caller find
    /// which of n mappings reach a node in O(n) instead of O(n) per node.
    pub fn merged_into(&self, map: NodeId) -> Vec<NodeId> {
        let mut found = Vec::new();
        self.collect_merged(self.resolve(map), &mut found, &mut HashSet::new(), 0);
        found.sort_unstable();
        found.dedup();
        found
    }

    /// `visited` holds the mappings already searched, so a mapping reached
    /// twice through merges is searched once; one at the depth limit is
    /// found but not searched.
    fn collect_merged(
        &self,
        map: NodeId,
        found: &mut Vec<NodeId>,
        visited: &mut HashSet<NodeId>,
        depth: usize,
    ) {
        found.push(map);
        if depth > MAX_MERGE_DEPTH || !visited.insert(map) {
            return;
        }
        let Value::Mapping(pairs) = &self.node(map).value else {
            return;
        };
        for &(key, source) in pairs {
            if !self.is_merge_key(key) {
                continue;
            }
            match self.value(source) {
                Value::Sequence(items) => {
                    for &item in items {
                        self.collect_merged(self.resolve(item), found, visited, depth + 1);
                    }
                }
                _ => self.collect_merged(self.resolve(source), found, visited, depth + 1),
            }
        }
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

    /// The resolved tree under `node` as path → leaf pairs (merges applied,
    /// `!reset` dropped, aliases followed), which is what Compose and
    /// Kubernetes act on. Leaves are scalars (`p:` plain, `s:` quoted or block,
    /// so `1` and `"1"` differ), `{}` and `[]`. `None` when the expansion
    /// exceeds `limit` leaves (an alias bomb).
    pub fn leaves(&self, node: NodeId, limit: usize) -> Option<Vec<(Vec<String>, String)>> {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.collect_leaves(node, &mut path, &mut out, limit, 0)?;
        Some(out)
    }

    fn collect_leaves(
        &self,
        node: NodeId,
        path: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, String)>,
        limit: usize,
        depth: usize,
    ) -> Option<()> {
        if out.len() > limit || depth > 256 {
            return None;
        }
        let resolved = self.node(self.resolve(node));
        match &resolved.value {
            Value::Scalar { text, style } => {
                let kind = if *style == Style::Plain { "p" } else { "s" };
                let tag = resolved.tag.as_deref().unwrap_or("");
                out.push((path.clone(), format!("{kind}{tag}:{text}")));
            }
            Value::Sequence(items) if items.is_empty() => out.push((path.clone(), "[]".into())),
            Value::Sequence(items) => {
                for (i, &item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    self.collect_leaves(item, path, out, limit, depth + 1)?;
                    path.pop();
                }
            }
            Value::Mapping(_) => {
                let entries = self.entries(self.resolve(node));
                if entries.is_empty() {
                    out.push((path.clone(), "{}".into()));
                }
                for entry in entries {
                    path.push(self.str(entry.key).unwrap_or("?").to_string());
                    self.collect_leaves(entry.value, path, out, limit, depth + 1)?;
                    path.pop();
                }
            }
            Value::Alias(None) => out.push((path.clone(), "*undefined".into())),
            Value::Alias(Some(_)) => return None,
        }
        Some(())
    }

    /// Whether an alias starts inside `range` (a document's span).
    pub fn has_alias_in(&self, range: TextRange) -> bool {
        let first = self.alias_starts.partition_point(|&s| s < range.start);
        self.alias_starts
            .get(first)
            .is_some_and(|&start| start < range.end)
    }

    /// Whether a byte offset lies inside a scalar's text (so a `#` there is not a comment).
    pub fn offset_in_scalar(&self, offset: usize) -> bool {
        let idx = self
            .scalar_ranges
            .partition_point(|r| (r.start as usize) <= offset);
        idx > 0 && self.scalar_ranges[idx - 1].contains(offset)
    }
}

/// The key names a mapping's entries have so far, as [`Yaml::entries`]
/// collects them: a list while short (most mappings), a hash set once long,
/// so that the `services:` of a file with thousands of services is
/// collected in linear time.
#[derive(Default)]
struct KeySet<'s> {
    list: Vec<Option<&'s str>>,
    set: HashSet<Option<&'s str>>,
}

impl<'s> KeySet<'s> {
    /// Past this many keys, lookups go through the hash set.
    const LIST_MAX: usize = 16;

    /// Adds `name`; false when it was there already.
    fn insert(&mut self, name: Option<&'s str>) -> bool {
        if self.list.len() < Self::LIST_MAX {
            if self.list.contains(&name) {
                return false;
            }
            self.list.push(name);
            return true;
        }
        if self.set.is_empty() {
            self.set.extend(self.list.iter().copied());
        }
        self.set.insert(name)
    }
}

/// How many lines of one file may be re-indented by [`Yaml::parse`].
const MAX_INDENT_REPAIRS: usize = 64;

/// `text` with a space for each tab right after a `:` (the same length: no
/// span moves), and where those tabs were.
fn space_tabs_after_colons(text: &str) -> (String, Vec<usize>) {
    let bytes = text.as_bytes();
    let at: Vec<usize> = (1..bytes.len())
        .filter(|&i| bytes[i] == b'\t' && bytes[i - 1] == b':')
        .collect();
    let mut owned = text.to_string();
    for &i in &at {
        owned.replace_range(i..=i, " ");
    }
    (owned, at)
}

/// Offset in the original text of an offset in a text with single spaces
/// inserted at the (sorted) positions `inserted`.
fn to_original(inserted: &[usize], offset: usize) -> usize {
    offset - inserted.partition_point(|&p| p < offset)
}

/// The spaces a line starts with.
fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// The indentation of the last line of `before` that holds something.
fn previous_indentation(before: &str) -> usize {
    before
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map_or(0, indentation)
}

/// Whether the line at `offset` continues a flow collection: it starts with a
/// closing bracket, or the line before ends inside `[`/`{` or after a comma.
fn is_flow_continuation(text: &str, offset: usize) -> bool {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("").trim_start();
    if line.starts_with([']', '}']) {
        return true;
    }
    let previous = text[..line_start]
        .lines()
        .rev()
        .map(|l| l.split(" #").next().unwrap_or(l).trim_end())
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    previous.is_some_and(|l| l.ends_with(['[', '{', ',']))
}

/// The offset just past the quote that closes the scalar opening at `start`.
fn closing_quote(text: &str, start: usize, style: Style) -> Option<usize> {
    let bytes = text.as_bytes();
    let quote = if style == Style::DoubleQuoted {
        b'"'
    } else {
        b'\''
    };
    if bytes.get(start) != Some(&quote) {
        return None;
    }
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
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
            OffsetMap::Table(t) => t
                .get(char_index)
                .map_or_else(|| t.last().copied().unwrap_or(0) as usize, |&b| b as usize),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(yaml: &Yaml) -> NodeId {
        yaml.documents[0].root.unwrap()
    }

    #[test]
    fn a_quoted_scalar_left_open_in_a_flow_sequence_is_parsed_a_few_times() {
        // The line that closes the flow sequence sits inside the open
        // quote: it was given a space per parse, up to the repair limit,
        // each parse reading the whole text again.
        let text = "a:\n  args: [\n    \"serve --x\n  ]\n  ports: 1\n";
        let mut parses = 0;
        let error = Yaml::parse_counting(text, &mut parses).unwrap_err();
        assert!(error.message.contains("quoted scalar"), "{error:?}");
        assert!(parses <= 4, "{parses} parses");
        // A flow sequence closed at the parent's indentation, the repair's
        // purpose, still parses, however shallow its closing line.
        for closing in ["]", " ]", "  ]"] {
            let text = format!("a:\n    b: [\n      1,\n{closing}\n");
            let mut parses = 0;
            assert!(Yaml::parse_counting(&text, &mut parses).is_ok(), "{text:?}");
        }
    }

    #[test]
    fn a_repeated_key_is_refused_at_the_repeat() {
        let text = "a:\n  x: 1\n  y: 2\n  x: 3\n";
        let error = Yaml::parse(text).unwrap_err();
        assert_eq!(error.offset, text.rfind("x: 3").unwrap());
        assert!(error.message.contains("`x` is already defined at line 2"));
        // In a flow mapping, and with one of the two quoted.
        assert!(Yaml::parse("{a: 1, \"a\": 2}").is_err());
        // yaml.v3 refuses a repeated merge key too; a merged key may be overridden.
        assert!(Yaml::parse("b: &b {x: 1}\nd:\n  <<: *b\n  <<: *b\n").is_err());
        let merged = "b: &b {x: 1}\nc: &c {y: 1}\nd:\n  <<: [*b, *c]\n  x: 2\n";
        let yaml = Yaml::parse(merged).unwrap();
        let d = yaml.get(root(&yaml), "d").unwrap().value;
        assert_eq!(yaml.str(yaml.get(d, "x").unwrap().value), Some("2"));
    }

    /// yaml.v3 (Compose) refuses a list or mapping as a key: "invalid map
    /// key". A scalar key written with `? `, or an alias to one, is a key.
    #[test]
    fn a_list_or_mapping_key_is_refused() {
        let text = "services:\n  a:\n    ? [x, y]\n    : 1\n";
        let error = Yaml::parse(text).unwrap_err();
        assert_eq!(error.offset, text.find("[x, y]").unwrap());
        assert!(error.message.contains("not a list"), "{}", error.message);
        let text = "deploy:\n  ? resources:\n    reservations: 1\n";
        assert!(
            Yaml::parse(text)
                .unwrap_err()
                .message
                .contains("not a mapping")
        );
        assert!(Yaml::parse("a: &m {x: 1}\nb: {*m : 2}\n").is_err());
        assert!(Yaml::parse("? plain\n: 1\na: &k key\nb: {*k : 2}\n").is_ok());
    }

    #[test]
    fn spans_are_bytes_and_exact() {
        let text = "# é☕\nservices:\n  web:\n    image: \"nginx\"  # c\n    ports: [\"80:80\"]\n";
        let yaml = Yaml::parse(text).unwrap();
        let image = yaml
            .get_path(root(&yaml), &["services", "web", "image"])
            .unwrap();
        assert_eq!(&text[yaml.range(image.key).as_range()], "image");
        assert_eq!(&text[yaml.range(image.value).as_range()], "\"nginx\"");
        let web = yaml.get_path(root(&yaml), &["services", "web"]).unwrap();
        assert_eq!(
            &text[yaml.range(web.value).as_range()],
            "image: \"nginx\"  # c\n    ports: [\"80:80\"]"
        );
        assert!(yaml.offset_in_scalar(text.find("nginx").unwrap()));
        assert!(!yaml.offset_in_scalar(text.find("# c").unwrap()));
    }

    #[test]
    fn anchors_aliases_merges_and_reset() {
        let text = "base: &b\n  a: 1\n  c: 3\nx:\n  <<: *b\n  a: 2\n  c: !reset null\ny: *b\n";
        let yaml = Yaml::parse(text).unwrap();
        let x = yaml.get(root(&yaml), "x").unwrap().value;
        assert_eq!(yaml.str(yaml.get(x, "a").unwrap().value), Some("2"));
        assert!(yaml.get(x, "c").is_none());
        let y = yaml.get(root(&yaml), "y").unwrap().value;
        let a = yaml.get(y, "a").unwrap();
        // Through the alias, the span is where the anchored value was written.
        assert_eq!(yaml.range(a.value).start as usize, text.find("1").unwrap());
    }

    #[test]
    fn alias_bombs_stay_small() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        assert!(
            !Yaml::parse(&text)
                .unwrap()
                .has_alias_in(TextRange::new(0, text.len()))
        );
        for i in 0..20 {
            let prev = if i == 0 {
                "a".to_string()
            } else {
                format!("l{}", i - 1)
            };
            text.push_str(&format!("l{i}: &l{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        let yaml = Yaml::parse(&text).unwrap();
        assert!(yaml.nodes.len() < 1000);
        let first_alias = text.find('*').unwrap();
        assert!(yaml.has_alias_in(TextRange::new(first_alias, first_alias + 1)));
        assert!(!yaml.has_alias_in(TextRange::new(0, first_alias)));
    }

    #[test]
    fn a_long_mapping_keeps_its_own_keys_over_merged_ones() {
        // Past the short list, keys are told apart by a hash set: the own
        // keys still win over the merged ones, and merged keys are added once.
        let own: String = (0..40).map(|i| format!("  k{i}: own\n")).collect();
        let text = format!(
            "a: &a {{k5: merged, k30: merged, extra: merged}}\nb: &b {{extra: second, more: second}}\nm:\n  <<: [*a, *b]\n{own}"
        );
        let yaml = Yaml::parse(&text).unwrap();
        let m = yaml.get(root(&yaml), "m").unwrap().value;
        let entries = yaml.entries(m);
        assert_eq!(entries.len(), 42);
        let value = |key: &str| yaml.str(yaml.get(m, key).unwrap().value).unwrap();
        assert_eq!(value("k5"), "own");
        assert_eq!(value("k30"), "own");
        assert_eq!(value("extra"), "merged");
        assert_eq!(value("more"), "second");
    }

    #[test]
    fn a_merged_entry_is_what_removing_the_own_one_reveals() {
        let text =
            "a: &a {x: 1}\nb: &b {x: 2, y: 3}\nm:\n  <<: [*a, *b]\n  x: 0\n  z: 4\nn: {z: 5}\n";
        let yaml = Yaml::parse(text).unwrap();
        let at = |key: &str| yaml.get(root(&yaml), key).unwrap().value;
        let value = |e: Option<Entry>| e.and_then(|e| yaml.str(e.value));
        assert_eq!(value(yaml.merged_entry(at("m"), "x")), Some("1"));
        assert_eq!(value(yaml.merged_entry(at("m"), "y")), Some("3"));
        assert_eq!(value(yaml.merged_entry(at("m"), "z")), None);
        assert_eq!(value(yaml.merged_entry(at("n"), "z")), None);
    }

    #[test]
    fn aliases_are_found_by_document() {
        let text = "a: &a 1\n---\nb: *a\n---\nc: 2\n";
        let yaml = Yaml::parse(text).unwrap();
        let span = |i: usize| yaml.range(yaml.documents[i].root.unwrap());
        assert!(!yaml.has_alias_in(span(0)));
        assert!(yaml.has_alias_in(span(1)));
        assert!(!yaml.has_alias_in(span(2)));
    }

    #[test]
    fn merge_cycles_terminate() {
        let yaml = Yaml::parse("a: &a\n  <<: *a\n  k: 1\n").unwrap();
        let a = yaml.get(root(&yaml), "a").unwrap().value;
        assert!(yaml.get(a, "missing").is_none());
    }

    #[test]
    fn merge_chains_are_resolved_once_per_mapping() {
        // Each level merges the one before twice: walked naively, level 60
        // costs 2^60 visits (the test would never finish).
        let mut text = String::from("m0: &m0 {a: 1}\n");
        for i in 1..60 {
            text.push_str(&format!(
                "m{i}: &m{i}\n  <<: [*m{}, *m{}]\n  k{i}: v\n",
                i - 1,
                i - 1
            ));
        }
        let yaml = Yaml::parse(&text).unwrap();
        let last = yaml.get(root(&yaml), "m59").unwrap().value;
        let first = yaml.get(root(&yaml), "m0").unwrap().value;
        let entries = yaml.entries(last);
        assert_eq!(entries.len(), 60);
        assert_eq!(yaml.str(yaml.get(last, "a").unwrap().value), Some("1"));
        assert_eq!(yaml.str(yaml.get(last, "k1").unwrap().value), Some("v"));
        assert!(yaml.get(last, "missing").is_none());
        assert!(yaml.merges_from(last, first));
        assert!(!yaml.merges_from(first, last));
        assert!(!yaml.merges_from(last, root(&yaml)));
        // Every level, each once, and nothing else.
        let levels: Vec<NodeId> = (0..60)
            .map(|i| yaml.get(root(&yaml), &format!("m{i}")).unwrap().value)
            .collect();
        let mut merged = yaml.merged_into(last);
        merged.sort_unstable();
        let mut expected = levels.clone();
        expected.sort_unstable();
        assert_eq!(merged, expected);
        assert_eq!(yaml.merged_into(first), vec![first]);
        let leaves = yaml.leaves(last, 1000).unwrap();
        assert_eq!(leaves.len(), 60);
    }

    #[test]
    fn large_mappings_are_looked_up_as_small_ones_are() {
        // The same lookups on a mapping below and above INDEXED_MAPPING:
        // own keys, an alias as a key, merged keys, `!reset`, missing keys.
        for filler in [0, 2 * INDEXED_MAPPING] {
            let mut text = String::from("k: &k aliased\nb: &b {m: merged, x: base, r: 1}\nd:\n");
            for i in 0..filler {
                text.push_str(&format!("  f{i}: {i}\n"));
            }
            text.push_str("  <<: *b\n  x: own\n  *k : via-alias\n  r: !reset null\n");
            let yaml = Yaml::parse(&text).unwrap();
            let d = yaml.get(root(&yaml), "d").unwrap().value;
            assert_eq!(yaml.key_index.contains_key(&d), filler > 0, "{filler}");
            let value = |key: &str| yaml.get(d, key).map(|e| (yaml.str(e.value), e.merged));
            assert_eq!(value("x"), Some((Some("own"), false)), "{filler}");
            assert_eq!(value("m"), Some((Some("merged"), true)), "{filler}");
            assert_eq!(value("<<"), None, "{filler}");
            assert_eq!(
                value("aliased"),
                Some((Some("via-alias"), false)),
                "{filler}"
            );
            assert_eq!(value("r"), None, "{filler}");
            assert_eq!(value("missing"), None, "{filler}");
            // f*, x, aliased, then m from the merge (r is reset).
            assert_eq!(yaml.entries(d).len(), filler + 3, "{filler}");
        }
    }

    #[test]
    fn a_tab_after_a_colon_separates_as_in_go_yaml() {
        let text = "services:\n  t:\n    image:\tnvcr.io/x:1\n    run: |\n      a:\tb\n    q: \"c:\td\"\n    f: {k:\tv}\n    # c:\tcomment\n";
        let yaml = Yaml::parse(text).unwrap();
        let root = yaml.documents[0].root.unwrap();
        let service = yaml
            .get(yaml.get(root, "services").unwrap().value, "t")
            .unwrap()
            .value;
        let str_of = |key: &str| {
            yaml.str(yaml.get(service, key).unwrap().value)
                .unwrap()
                .to_string()
        };
        assert_eq!(str_of("image"), "nvcr.io/x:1");
        // Tabs inside scalars are the scalars' own.
        assert_eq!(str_of("run"), "a:\tb\n");
        assert_eq!(str_of("q"), "c:\td");
        let flow = yaml.get(service, "f").unwrap().value;
        assert_eq!(yaml.str(yaml.get(flow, "k").unwrap().value), Some("v"));
        // Spans are the text's own.
        let image = yaml.get(service, "image").unwrap().value;
        assert_eq!(&text[yaml.range(image).as_range()], "nvcr.io/x:1");
    }

    #[test]
    fn multi_document_tags_bom_crlf_tabs() {
        let text = "\u{feff}a: 1\r\n---\r\nb: !override\r\n  - x\t# tab\r\n";
        let yaml = Yaml::parse(text).unwrap();
        assert_eq!(yaml.documents.len(), 2);
        let b = yaml.get(yaml.documents[1].root.unwrap(), "b").unwrap();
        assert_eq!(yaml.node(b.value).tag.as_deref(), Some("!override"));
        assert_eq!(&text[yaml.range(yaml.items(b.value)[0]).as_range()], "x");
    }

    #[test]
    fn flow_sequence_closed_at_parent_indentation_parses_like_compose() {
        let text = "h:\n  test: [\n      \"CMD\",\n      \"x\",\n  ]\n  interval: 30s\n";
        let yaml = Yaml::parse(text).unwrap();
        let h = yaml.get(root(&yaml), "h").unwrap().value;
        let test = yaml.get(h, "test").unwrap().value;
        assert_eq!(yaml.items(test).len(), 2);
        let interval = yaml.get(h, "interval").unwrap();
        assert_eq!(&text[yaml.range(interval.value).as_range()], "30s");
        assert_eq!(
            &text[yaml.range(test).as_range()],
            "[\n      \"CMD\",\n      \"x\",\n  ]"
        );
    }

    #[test]
    fn real_errors_keep_their_location() {
        let err = Yaml::parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(err.offset > 0);
        let err = Yaml::parse("a:\n  b: 1\n c: 2\n").unwrap_err();
        assert!(err.message.contains("indentation") || !err.message.is_empty());
    }
}
