//! Format-preserving YAML edits: each primitive returns byte-range [`Edit`]s
//! that touch only the text they must, so comments, quoting, key order, blank
//! lines, line endings, a BOM and the final newline stay as the user wrote them.
//!
//! New text follows the file's own conventions: its line ending, its
//! indentation step, whether it indents block sequences under their key, and
//! its preferred quote character.

use crate::fix::Edit;
use crate::text::TextRange;
use crate::yaml::{NodeId, Style, Value, Yaml};

/// A value to write, built by the caller. Scalars are YAML source text
/// (already quoted where needed; see [`YamlEditor::quoted`]), so a short flow
/// collection such as `[gpu]` can be written as a scalar too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewNode {
    Scalar(String),
    Map(Vec<(String, NewNode)>),
    Seq(Vec<NewNode>),
}

impl NewNode {
    pub fn scalar(text: impl Into<String>) -> Self {
        NewNode::Scalar(text.into())
    }

    pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, NewNode)>) -> Self {
        NewNode::Map(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// Nests `leaf` under `path`: `["a", "b"]` → `a: {b: leaf}`.
    fn nest(path: &[&str], leaf: NewNode) -> (String, NewNode) {
        let (last, parents) = path.split_last().expect("a non-empty path");
        let mut entry = (last.to_string(), leaf);
        for key in parents.iter().rev() {
            entry = (key.to_string(), NewNode::Map(vec![entry]));
        }
        entry
    }
}

/// Where a new key goes among a block mapping's existing keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrder {
    /// After the last key.
    Append,
    /// Where dclint's `service-keys-order` expects it, so a fix does not
    /// trade a gpulint finding for a dclint warning.
    ComposeService,
}

/// Why an edit cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError(pub String);

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The edit for a nested insertion, and whether it had to write into an
/// anchored node that other places may share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEdit {
    pub edit: Edit,
    /// The anchor (`&name`) the edit writes into, when the path ran through an
    /// alias or a `<<` merge.
    pub through_anchor: Option<String>,
    /// The mapping the new entry was written into, and its path under the map.
    pub target: NodeId,
    pub target_path: Vec<String>,
}

/// A node found by [`YamlEditor::locate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The node itself (aliases resolved).
    pub node: NodeId,
    /// The anchor (`&name`) the path entered through an alias or a `<<` merge.
    pub through_anchor: Option<String>,
}

/// Conventions of the file being edited, learned from its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStyle {
    pub newline: &'static str,
    pub indent: usize,
    /// Block sequences are indented under their key (`key:\n  - x`), not flush (`key:\n- x`).
    pub indent_sequences: bool,
    pub quote: char,
}

impl FileStyle {
    pub fn detect(yaml: &Yaml, text: &str) -> Self {
        let newline = newline_of(text);
        let mut steps = [0usize; 9];
        let (mut indented, mut flush) = (0usize, 0usize);
        let (mut single, mut double) = (0usize, 0usize);
        for node in &yaml.nodes {
            match &node.value {
                Value::Scalar {
                    style: Style::SingleQuoted,
                    ..
                } => single += 1,
                Value::Scalar {
                    style: Style::DoubleQuoted,
                    ..
                } => double += 1,
                Value::Mapping(pairs) if !node.flow => {
                    for &(key, value) in pairs {
                        let value_node = yaml.node(value);
                        if value_node.flow {
                            continue;
                        }
                        let key_col = column(text, yaml.range(key).start as usize);
                        let key_line = line_start(text, yaml.range(key).start as usize);
                        match &value_node.value {
                            Value::Mapping(children) => {
                                if let Some(&(first, _)) = children.first() {
                                    let start = yaml.range(first).start as usize;
                                    if line_start(text, start) != key_line {
                                        let col = column(text, start);
                                        if let Some(step) =
                                            col.checked_sub(key_col).filter(|s| (1..9).contains(s))
                                        {
                                            steps[step] += 1;
                                        }
                                    }
                                }
                            }
                            Value::Sequence(items) => {
                                if let Some(&first) = items.first()
                                    && let Some(dash) =
                                        dash_before(text, yaml.node(first).props_start as usize)
                                    && line_start(text, dash) != key_line
                                {
                                    if column(text, dash) > key_col {
                                        indented += 1;
                                    } else {
                                        flush += 1;
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        let indent = (1..9)
            .max_by_key(|&s| (steps[s], s == 2))
            .filter(|&s| steps[s] > 0)
            .unwrap_or(2);
        FileStyle {
            newline,
            indent,
            indent_sequences: indented >= flush,
            quote: if single > double { '\'' } else { '"' },
        }
    }
}

/// Builds edits for one parsed file.
pub struct YamlEditor<'a> {
    pub yaml: &'a Yaml,
    pub text: &'a str,
    /// Detected on the first edit: most files linted need none.
    style: std::cell::OnceCell<FileStyle>,
}

impl<'a> YamlEditor<'a> {
    pub fn new(yaml: &'a Yaml, text: &'a str) -> Self {
        Self {
            yaml,
            text,
            style: std::cell::OnceCell::new(),
        }
    }

    /// The file's indentation, quotes and line endings.
    pub fn style(&self) -> &FileStyle {
        self.style
            .get_or_init(|| FileStyle::detect(self.yaml, self.text))
    }

    /// `value` as a quoted scalar in the file's preferred quotes.
    pub fn quoted(&self, value: &str) -> String {
        quote(value, self.style().quote)
    }

    /// `value` written the way `like` was written: same quotes, or plain
    /// when `like` was plain and `value` needs no quotes.
    pub fn scalar_like(&self, like: NodeId, value: &str) -> String {
        match self.yaml.node(like).value {
            Value::Scalar {
                style: Style::SingleQuoted,
                ..
            } => quote(value, '\''),
            Value::Scalar {
                style: Style::DoubleQuoted,
                ..
            } => quote(value, '"'),
            _ if is_safe_plain(value) => value.to_string(),
            _ => self.quoted(value),
        }
    }

    /// Replaces a scalar's text (quotes included) with `source`.
    pub fn replace(&self, node: NodeId, source: impl Into<String>) -> Edit {
        Edit {
            range: self.yaml.range(node),
            content: source.into(),
        }
    }

    /// Inserts `key: value` into a mapping (block or flow), at the siblings'
    /// indentation. Fails on aliases: the caller decides whether to edit the anchor.
    pub(crate) fn insert_entry(
        &self,
        map: NodeId,
        key: &str,
        value: &NewNode,
        order: KeyOrder,
    ) -> Result<Edit, EditError> {
        let node = self.yaml.node(map);
        let Value::Mapping(pairs) = &node.value else {
            return Err(EditError("not a mapping".into()));
        };
        if pairs.iter().any(|&(k, _)| self.yaml.str(k) == Some(key)) {
            return Err(EditError(format!("`{key}` is already set")));
        }
        if node.flow {
            let mut rendered = String::new();
            render_flow_entry(&mut rendered, key, value);
            // Insert just before the closing `}`, after the last entry's last
            // character: the spans of a key with no value (`{gpus: all,1t}`)
            // do not say where the entry ends, the brace does.
            let close = node.range.end as usize - 1;
            let inner = self
                .text
                .get(node.range.start as usize..close)
                .unwrap_or("#");
            if pairs.is_empty()
                || self.text.as_bytes().get(close) != Some(&b'}')
                || inner.contains('#')
            {
                return Ok(match pairs.last() {
                    Some(&(_, last)) => {
                        Edit::insert(self.yaml.range(last).end, format!(", {rendered}"))
                    }
                    None => Edit::insert(node.range.start + 1, rendered),
                });
            }
            let before = self.text[..close].trim_end();
            let separator = if before.ends_with(',') { " " } else { ", " };
            return Ok(Edit::insert(
                before.len() as u32,
                format!("{separator}{rendered}"),
            ));
        }
        let Some(&(first_key, _)) = pairs.first() else {
            return Err(EditError("empty block mapping".into()));
        };
        // Where the first key's properties start (`&a deploy:`): the
        // mapping's indentation, and the place a new first entry takes.
        let first_start = self.yaml.node(first_key).props_start;
        let col = column(self.text, first_start as usize);
        let mut rendered = String::new();
        self.render_block_entry(&mut rendered, key, value, col);
        let at = match order {
            KeyOrder::Append => pairs.len(),
            KeyOrder::ComposeService => {
                let names: Vec<&str> = pairs
                    .iter()
                    .map(|&(k, _)| self.yaml.str(k).unwrap_or(""))
                    .collect();
                compose_service_position(&names, key)
            }
        };
        Ok(if at == 0 {
            // Take the first key's place (which may follow a `- `) and move it down.
            Edit::insert(
                first_start,
                format!("{rendered}{}{}", self.style().newline, " ".repeat(col)),
            )
        } else {
            let (k, v) = pairs[at - 1];
            let end = self.entry_end(k, v);
            Edit::insert(
                line_end(self.text, end) as u32,
                format!("{}{}{rendered}", self.style().newline, " ".repeat(col)),
            )
        })
    }

    /// Finds the node at `path` under `map` (mapping keys, or sequence
    /// indices for numeric segments), following aliases and merges.
    pub fn locate(&self, map: NodeId, path: &[&str]) -> Option<Located> {
        let mut current = map;
        let mut through_anchor = None;
        for key in path {
            current = self.enter(current, &mut through_anchor);
            current = match self.yaml.value(current) {
                Value::Sequence(items) => *items.get(key.parse::<usize>().ok()?)?,
                Value::Mapping(_) => {
                    let entry = self.yaml.get(current, key)?;
                    if entry.merged {
                        through_anchor.get_or_insert_with(|| {
                            self.anchor_name(self.owner_of(entry.key, current))
                        });
                    }
                    entry.value
                }
                _ => return None,
            };
        }
        let node = self.enter(current, &mut through_anchor);
        Some(Located {
            node,
            through_anchor,
        })
    }

    /// Follows an alias, remembering the anchor it leads into.
    fn enter(&self, node: NodeId, through_anchor: &mut Option<String>) -> NodeId {
        let resolved = self.yaml.resolve(node);
        if resolved != node {
            through_anchor.get_or_insert_with(|| self.anchor_name(resolved));
        }
        resolved
    }

    /// Makes sure `path` exists under `map` and ends in `leaf`, creating the
    /// missing mappings (`deploy.resources.reservations.devices`). Follows
    /// existing keys, through aliases and merges (reported in `through_anchor`).
    pub fn insert_path(
        &self,
        map: NodeId,
        path: &[&str],
        leaf: NewNode,
        order: KeyOrder,
    ) -> Result<PathEdit, EditError> {
        if path.is_empty() {
            return Err(EditError("empty path".into()));
        }
        // The longest prefix that is a mapping, then what is missing below it.
        let mut depth = path.len() - 1;
        let found = loop {
            if let Some(found) = self.locate(map, &path[..depth])
                && self.yaml.is_mapping(found.node)
            {
                break found;
            }
            if depth == 0 {
                return Err(EditError("the service is not a mapping".into()));
            }
            depth -= 1;
        };
        let order = if depth == 0 { order } else { KeyOrder::Append };
        let target_path: Vec<String> = path[..depth].iter().map(|s| s.to_string()).collect();
        let parent = found.node;
        let edit = match self.yaml.get(parent, path[depth]) {
            None => {
                let (k, v) = NewNode::nest(&path[depth..], leaf);
                self.insert_entry(parent, &k, &v, order)?
            }
            Some(entry) if depth + 1 < path.len() && self.yaml.is_null(entry.value) => {
                if entry.merged {
                    return Err(EditError(format!("`{}` comes from a merge", path[depth])));
                }
                let (k, v) = NewNode::nest(&path[depth + 1..], leaf);
                self.fill_null(entry.key, entry.value, &NewNode::Map(vec![(k, v)]))?
            }
            Some(_) if depth + 1 == path.len() => {
                return Err(EditError(format!("`{}` is already set", path.join("."))));
            }
            Some(_) => return Err(EditError(format!("`{}` is not a mapping", path[depth]))),
        };
        Ok(PathEdit {
            edit,
            through_anchor: found.through_anchor,
            target: parent,
            target_path,
        })
    }

    /// Gives `key:` (whose value is null, written or empty) a block value.
    fn fill_null(&self, key: NodeId, value: NodeId, new: &NewNode) -> Result<Edit, EditError> {
        let col = column(self.text, self.yaml.node(key).props_start as usize);
        let mut rendered = String::new();
        // Render as the value of a key at `col`, then drop the `key:` prefix.
        self.render_block_entry(&mut rendered, "", new, col);
        let body = rendered.trim_start_matches(':');
        let value_range = self.yaml.range(value);
        if value_range.is_empty() {
            // `key:` or `key:  # comment`: the block goes after the line.
            return Ok(Edit::insert(
                line_end(self.text, self.yaml.range(key).end as usize) as u32,
                body.to_string(),
            ));
        }
        // `key: null` / `key: ~`: replace the word, keep any comment after it.
        let line_rest =
            &self.text[value_range.end as usize..line_end(self.text, value_range.end as usize)];
        if !line_rest.trim().is_empty() {
            return Err(EditError("a comment follows the null value".into()));
        }
        let colon_end = self.text[..value_range.start as usize].trim_end().len();
        Ok(Edit {
            range: TextRange::new(colon_end, value_range.end as usize),
            content: body.to_string(),
        })
    }

    /// Appends an item to a sequence (block or flow).
    pub fn append_item(&self, seq: NodeId, item: &NewNode) -> Result<Edit, EditError> {
        let node = self.yaml.node(seq);
        let Value::Sequence(items) = &node.value else {
            return Err(EditError("not a sequence".into()));
        };
        if node.flow {
            let mut rendered = String::new();
            render_flow(&mut rendered, item);
            return Ok(match items.last() {
                Some(&last) => Edit::insert(self.yaml.range(last).end, format!(", {rendered}")),
                None => Edit::insert(node.range.start + 1, rendered),
            });
        }
        let &last = items
            .last()
            .ok_or_else(|| EditError("empty block sequence".into()))?;
        let dash = dash_before(self.text, self.yaml.node(last).props_start as usize)
            .ok_or_else(|| EditError("no `-` before the last item".into()))?;
        let col = column(self.text, dash);
        let mut rendered = String::new();
        self.render_block_item(&mut rendered, item, col + 2);
        let last_end = self.keep_chomped_end(last, self.yaml.range(last).end as usize);
        Ok(Edit::insert(
            line_end(self.text, last_end) as u32,
            format!("{}{}- {rendered}", self.style().newline, " ".repeat(col)),
        ))
    }

    /// Removes `key: value` from the mapping that holds it, with its trailing
    /// comment. Removing the only entry of a block mapping is refused (it
    /// would turn the mapping into null); remove its parent instead.
    pub fn remove_entry(&self, map: NodeId, key: NodeId) -> Result<Edit, EditError> {
        let node = self.yaml.node(map);
        let Value::Mapping(pairs) = &node.value else {
            return Err(EditError("not a mapping".into()));
        };
        let index = pairs
            .iter()
            .position(|&(k, _)| k == key)
            .ok_or_else(|| EditError("the key is not in this mapping".into()))?;
        let ranges: Vec<(usize, usize)> = pairs
            .iter()
            .map(|&(k, v)| (self.yaml.node(k).props_start as usize, self.entry_end(k, v)))
            .collect();
        self.remove_member(node.flow, &ranges, index)
    }

    /// Removes one item from a sequence.
    pub fn remove_item(&self, seq: NodeId, item: NodeId) -> Result<Edit, EditError> {
        let node = self.yaml.node(seq);
        let Value::Sequence(items) = &node.value else {
            return Err(EditError("not a sequence".into()));
        };
        let index = items
            .iter()
            .position(|&i| i == item)
            .ok_or_else(|| EditError("the item is not in this sequence".into()))?;
        let ranges: Vec<(usize, usize)> = items
            .iter()
            .map(|&i| {
                let start = self.yaml.node(i).props_start as usize;
                let start = if node.flow {
                    start
                } else {
                    dash_before(self.text, start).unwrap_or(start)
                };
                (start, self.yaml.range(i).end as usize)
            })
            .collect();
        self.remove_member(node.flow, &ranges, index)
    }

    fn remove_member(
        &self,
        flow: bool,
        ranges: &[(usize, usize)],
        index: usize,
    ) -> Result<Edit, EditError> {
        let (start, end) = ranges[index];
        if flow {
            // Take the separator on one side along with the member.
            let range = if let Some(&(next_start, _)) = ranges.get(index + 1) {
                TextRange::new(start, next_start)
            } else if index > 0 {
                TextRange::new(ranges[index - 1].1, end)
            } else {
                TextRange::new(start, end)
            };
            return Ok(Edit::delete(range));
        }
        if ranges.len() == 1 {
            return Err(EditError(
                "removing the only entry would leave null behind".into(),
            ));
        }
        let own_line = self.text[line_start(self.text, start)..start]
            .trim()
            .is_empty()
            || self.text[line_start(self.text, start)..start].trim() == "-";
        let starts_line = self.text[line_start(self.text, start)..start]
            .trim()
            .is_empty();
        if starts_line {
            // Whole lines: from the line start through the newline after the member.
            let from = line_start(self.text, start);
            let to = after_newline(self.text, line_end(self.text, end));
            return Ok(Edit::delete(TextRange::new(from, to)));
        }
        if own_line && let Some(&(next_start, _)) = ranges.get(index + 1) {
            // `- first: x` in a sequence item: the next key moves up behind the dash.
            return Ok(Edit::delete(TextRange::new(start, next_start)));
        }
        Err(EditError(
            "the entry shares its line with other content".into(),
        ))
    }

    /// Where an entry's text ends: its value's end, or its key's for an empty value.
    fn entry_end(&self, key: NodeId, value: NodeId) -> usize {
        let end = self.yaml.range(key).end.max(self.yaml.range(value).end) as usize;
        self.keep_chomped_end(value, end)
    }

    /// Where the text of `node`, whose span ends at `end`, really ends. The
    /// span of a block scalar stops at its last non-blank line, but with
    /// keep chomping (`|+`, `>+`) the blank lines after it are part of its
    /// value: text inserted after `end` must go after them, or they would
    /// leave the scalar. Follows the last entry or item down to the scalar
    /// the node ends with.
    fn keep_chomped_end(&self, mut node: NodeId, end: usize) -> usize {
        loop {
            match &self.yaml.node(node).value {
                Value::Mapping(pairs) if !self.yaml.node(node).flow => match pairs.last() {
                    Some(&(_, v)) => node = v,
                    None => return end,
                },
                Value::Sequence(items) if !self.yaml.node(node).flow => match items.last() {
                    Some(&i) => node = i,
                    None => return end,
                },
                Value::Scalar {
                    style: Style::Literal | Style::Folded,
                    ..
                } => break,
                _ => return end,
            }
        }
        // The span starts at the content; the header (`|+ # note`) ends the
        // last non-blank line before it.
        let range = self.yaml.range(node);
        let header_line = self.text[..line_start(self.text, range.start as usize)]
            .trim_end()
            .rsplit(['\n', '\r'])
            .next()
            .unwrap_or("");
        let header = header_line
            .split(" #")
            .next()
            .and_then(|l| l.split_whitespace().last())
            .unwrap_or("");
        if range.end as usize != end || !header.starts_with(['|', '>']) || !header.contains('+') {
            return end;
        }
        // Take in every following whitespace-only line.
        let mut end = line_end(self.text, end);
        loop {
            let next = after_newline(self.text, end);
            if next == end || next == self.text.len() {
                return end;
            }
            let next_end = line_end(self.text, next);
            if !self.text[next..next_end].trim().is_empty() {
                return end;
            }
            end = next_end;
        }
    }

    fn anchor_name(&self, node: NodeId) -> String {
        let n = self.yaml.node(node);
        let props = &self.text[n.props_start as usize..n.range.start as usize];
        props
            .split_whitespace()
            .find_map(|p| p.strip_prefix('&'))
            .map_or_else(|| "an anchor".to_string(), |name| format!("&{name}"))
    }

    /// The mapping (reached through `<<` from `map`) that holds `key`.
    fn owner_of(&self, key: NodeId, map: NodeId) -> NodeId {
        let mut stack = vec![map];
        let mut seen = 0;
        while let Some(m) = stack.pop() {
            seen += 1;
            if seen > 64 {
                break;
            }
            let m = self.yaml.resolve(m);
            let Value::Mapping(pairs) = &self.yaml.node(m).value else {
                continue;
            };
            for &(k, v) in pairs {
                if k == key {
                    return m;
                }
                if self.yaml.str(k) == Some("<<") {
                    match self.yaml.value(v) {
                        Value::Sequence(items) => stack.extend(items.iter().copied()),
                        _ => stack.push(v),
                    }
                }
            }
        }
        map
    }

    fn render_block_entry(&self, out: &mut String, key: &str, value: &NewNode, col: usize) {
        out.push_str(key);
        out.push(':');
        match value {
            NewNode::Scalar(s) => {
                out.push(' ');
                out.push_str(s);
            }
            NewNode::Map(entries) => {
                let child = col + self.style().indent;
                for (k, v) in entries {
                    out.push_str(self.style().newline);
                    out.push_str(&" ".repeat(child));
                    self.render_block_entry(out, k, v, child);
                }
            }
            NewNode::Seq(items) => {
                let dash = if self.style().indent_sequences {
                    col + self.style().indent
                } else {
                    col
                };
                for item in items {
                    out.push_str(self.style().newline);
                    out.push_str(&" ".repeat(dash));
                    out.push_str("- ");
                    self.render_block_item(out, item, dash + 2);
                }
            }
        }
    }

    /// An item after its `- `, whose content sits at `col`.
    fn render_block_item(&self, out: &mut String, item: &NewNode, col: usize) {
        match item {
            NewNode::Scalar(s) => out.push_str(s),
            NewNode::Map(entries) => {
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(self.style().newline);
                        out.push_str(&" ".repeat(col));
                    }
                    self.render_block_entry(out, k, v, col);
                }
            }
            NewNode::Seq(_) => render_flow(out, item),
        }
    }
}

/// One edit that turns `old` into `new`: everything between their common
/// prefix and suffix. Lets a fix be built in steps (remove, re-parse, insert)
/// and still be applied, diffed and verified as one edit.
pub fn combine(old: &str, new: &str) -> Edit {
    let mut prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    Edit {
        range: TextRange::new(prefix, old.len() - suffix),
        content: new[prefix..new.len() - suffix].to_string(),
    }
}

fn render_flow_entry(out: &mut String, key: &str, value: &NewNode) {
    out.push_str(key);
    out.push_str(": ");
    render_flow(out, value);
}

fn render_flow(out: &mut String, value: &NewNode) {
    match value {
        NewNode::Scalar(s) => out.push_str(s),
        NewNode::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render_flow_entry(out, k, v);
            }
            out.push('}');
        }
        NewNode::Seq(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render_flow(out, v);
            }
            out.push(']');
        }
    }
}

/// dclint's default `service-keys-order` groups, in order; other keys follow
/// them alphabetically.
const COMPOSE_KEY_GROUPS: &[&str] = &[
    "image",
    "build",
    "container_name",
    "depends_on",
    "volumes",
    "volumes_from",
    "configs",
    "secrets",
    "environment",
    "env_file",
    "ports",
    "networks",
    "network_mode",
    "extra_hosts",
    "command",
    "entrypoint",
    "working_dir",
    "restart",
    "healthcheck",
    "logging",
    "labels",
    "user",
    "isolation",
];

fn compose_rank(key: &str) -> (usize, String) {
    match COMPOSE_KEY_GROUPS.iter().position(|k| *k == key) {
        Some(i) => (i, String::new()),
        None => (COMPOSE_KEY_GROUPS.len(), key.to_ascii_lowercase()),
    }
}

/// The index to insert `key` at among `keys` so that dclint reports no new
/// `service-keys-order` warning (it compares each key with the one before it).
/// Among equally good places the last wins; never before a `<<` merge key.
fn compose_service_position(keys: &[&str], key: &str) -> usize {
    let rank = compose_rank(key);
    let ranks: Vec<_> = keys.iter().map(|k| compose_rank(k)).collect();
    let first_allowed = keys.iter().rposition(|k| *k == "<<").map_or(0, |i| i + 1);
    let cost = |at: usize| {
        let before = at.checked_sub(1).map(|i| &ranks[i]);
        let after = ranks.get(at);
        let mut cost = 0i32;
        if before.is_some_and(|b| *b > rank) {
            cost += 1;
        }
        if after.is_some_and(|a| *a < rank) {
            cost += 1;
        }
        if let (Some(b), Some(a)) = (before, after)
            && b > a
        {
            cost -= 1;
        }
        cost
    };
    (first_allowed..=keys.len())
        .rev()
        .min_by_key(|&at| cost(at))
        .unwrap_or(keys.len())
}

fn quote(value: &str, quote: char) -> String {
    if quote == '\'' {
        format!("'{}'", value.replace('\'', "''"))
    } else {
        format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// A plain scalar that reads back as the same string.
fn is_safe_plain(value: &str) -> bool {
    !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !value.starts_with(['-', '.'])
}

/// The line break a file uses most: `\n`, `\r\n` or a lone `\r` (old Mac
/// files; YAML reads all three), so edits match the lines around them.
fn newline_of(text: &str) -> &'static str {
    let bytes = text.as_bytes();
    let (mut lf, mut crlf, mut cr) = (0usize, 0usize, 0usize);
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\n' if i > 0 && bytes[i - 1] == b'\r' => crlf += 1,
            b'\n' => lf += 1,
            b'\r' if bytes.get(i + 1) != Some(&b'\n') => cr += 1,
            _ => {}
        }
    }
    if cr > lf.max(crlf) {
        "\r"
    } else if crlf > 0 && crlf >= lf {
        "\r\n"
    } else {
        "\n"
    }
}

/// Where the line holding `offset` starts: after a `\n` or a lone `\r`.
fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind(['\n', '\r']).map_or(0, |i| i + 1)
}

/// The column of `offset` in bytes (indentation is ASCII).
fn column(text: &str, offset: usize) -> usize {
    offset - line_start(text, offset)
}

/// The end of the line holding `offset`, before its `\n`, `\r\n` or `\r`.
fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find(['\n', '\r'])
        .map_or(text.len(), |i| offset + i)
}

fn after_newline(text: &str, line_end: usize) -> usize {
    let rest = &text[line_end..];
    if rest.starts_with("\r\n") {
        line_end + 2
    } else if rest.starts_with(['\n', '\r']) {
        line_end + 1
    } else {
        line_end
    }
}

/// The `-` indicator of the block sequence item starting at `offset`.
fn dash_before(text: &str, offset: usize) -> Option<usize> {
    let before = text[..offset].trim_end_matches([' ', '\t']);
    before.ends_with('-').then(|| before.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::apply_edits;

    fn root(yaml: &Yaml) -> NodeId {
        yaml.documents[0].root.unwrap()
    }

    fn edit_with(text: &str, f: impl Fn(&YamlEditor, NodeId) -> Edit) -> String {
        let yaml = Yaml::parse(text).unwrap();
        let editor = YamlEditor::new(&yaml, text);
        let edit = f(&editor, root(&yaml));
        let out = apply_edits(text, &[edit]);
        Yaml::parse(&out).unwrap_or_else(|e| panic!("{out}\n{e:?}"));
        out
    }

    fn at(yaml: &Yaml, map: NodeId, path: &[&str]) -> NodeId {
        yaml.get_path(map, path).unwrap().value
    }

    #[test]
    fn inserts_at_sibling_indentation_keeping_comments_and_crlf() {
        let text = "services:\r\n   gpu:   # the trainer\r\n      image: x   # pinned\r\n\r\n      command: [a]\r\n";
        let out = edit_with(text, |e, r| {
            let gpu = at(e.yaml, r, &["services", "gpu"]);
            e.insert_entry(
                gpu,
                "shm_size",
                &NewNode::scalar("\"8gb\""),
                KeyOrder::ComposeService,
            )
            .unwrap()
        });
        assert_eq!(
            out,
            "services:\r\n   gpu:   # the trainer\r\n      image: x   # pinned\r\n\r\n      command: [a]\r\n      shm_size: \"8gb\"\r\n"
        );
    }

    #[test]
    fn inserts_after_the_blank_lines_a_keep_chomped_block_scalar_keeps() {
        // The blank lines after `|+` / `>+` are part of the value; a key
        // inserted before them would take them away from it.
        for (text, expected) in [
            (
                "s:\n  c: |+\n    x\n\n\nv: 1\n",
                "s:\n  c: |+\n    x\n\n\n  k: 1\nv: 1\n",
            ),
            (
                "s:\n  l:\n    a: >2+ # c\n      x\n  \n\n# after\n",
                "s:\n  l:\n    a: >2+ # c\n      x\n  \n\n  k: 1\n# after\n",
            ),
            ("s:\n  c: |+\n    x\n\n", "s:\n  c: |+\n    x\n\n  k: 1\n"),
            (
                "s:\n  c: |\n    x\n\nv: 1\n",
                "s:\n  c: |\n    x\n  k: 1\n\nv: 1\n",
            ),
        ] {
            let out = edit_with(text, |e, r| {
                let s = at(e.yaml, r, &["s"]);
                e.insert_entry(s, "k", &NewNode::scalar("1"), KeyOrder::Append)
                    .unwrap()
            });
            assert_eq!(out, expected, "{text:?}");
            let before = Yaml::parse(text).unwrap();
            let after = Yaml::parse(&out).unwrap();
            let leaves = |y: &Yaml| {
                let mut l = y.leaves(root(y), 100).unwrap();
                l.retain(|(p, _)| p.last().is_none_or(|k| k != "k"));
                l
            };
            assert_eq!(leaves(&before), leaves(&after), "{text:?}");
        }
        let text = "e:\n  - a: |+\n      x\n\nv: 1\n";
        let out = edit_with(text, |e, r| {
            e.append_item(at(e.yaml, r, &["e"]), &NewNode::scalar("y"))
                .unwrap()
        });
        assert_eq!(out, "e:\n  - a: |+\n      x\n\n  - y\nv: 1\n");
    }

    #[test]
    fn compose_order_puts_new_keys_among_trailing_ungrouped_keys() {
        assert_eq!(
            compose_service_position(&["image", "deploy", "ulimits"], "shm_size"),
            2
        );
        assert_eq!(
            compose_service_position(&["image", "command", "deploy"], "shm_size"),
            3
        );
        assert_eq!(
            compose_service_position(&["image", "ipc", "volumes"], "shm_size"),
            3
        );
        assert_eq!(compose_service_position(&["<<", "image"], "deploy"), 2);
        assert_eq!(compose_service_position(&["zzz", "image"], "deploy"), 2);
    }

    #[test]
    fn inserting_first_key_of_a_sequence_item_keeps_the_dash() {
        let text = "s:\n  - command: y  # c\n    user: z\n";
        let out = edit_with(text, |e, r| {
            let item = e.yaml.items(at(e.yaml, r, &["s"]))[0];
            e.insert_entry(
                item,
                "image",
                &NewNode::scalar("x"),
                KeyOrder::ComposeService,
            )
            .unwrap()
        });
        assert_eq!(out, "s:\n  - image: x\n    command: y  # c\n    user: z\n");
        let text = "d:\n  - driver: nvidia\n    count: 1\n";
        let out = edit_with(text, |e, r| {
            let item = e.yaml.items(at(e.yaml, r, &["d"]))[0];
            e.insert_entry(
                item,
                "capabilities",
                &NewNode::scalar("[gpu]"),
                KeyOrder::Append,
            )
            .unwrap()
        });
        assert_eq!(
            out,
            "d:\n  - driver: nvidia\n    count: 1\n    capabilities: [gpu]\n"
        );
    }

    #[test]
    fn creates_nested_paths_in_the_files_style() {
        let text = "s:\n    t:\n        image: x\n        devices:\n        - /dev/a\n";
        let out = edit_with(text, |e, r| {
            let t = at(e.yaml, r, &["s", "t"]);
            let device = NewNode::map([
                ("driver", NewNode::scalar("nvidia")),
                ("capabilities", NewNode::scalar("[gpu]")),
            ]);
            e.insert_path(
                t,
                &["deploy", "resources", "reservations", "devices"],
                NewNode::Seq(vec![device]),
                KeyOrder::Append,
            )
            .unwrap()
            .edit
        });
        assert_eq!(
            out,
            "s:\n    t:\n        image: x\n        devices:\n        - /dev/a\n        deploy:\n            resources:\n                reservations:\n                    devices:\n                    - driver: nvidia\n                      capabilities: [gpu]\n"
        );
    }

    #[test]
    fn fills_null_and_commented_parents() {
        let text = "t:\n  deploy:   # later\n  image: x\n";
        let out = edit_with(text, |e, r| {
            let t = at(e.yaml, r, &["t"]);
            e.insert_path(
                t,
                &["deploy", "resources"],
                NewNode::scalar("{}"),
                KeyOrder::Append,
            )
            .unwrap()
            .edit
        });
        assert_eq!(
            out,
            "t:\n  deploy:   # later\n    resources: {}\n  image: x\n"
        );
        let text = "t:\n  deploy: ~\n";
        let out = edit_with(text, |e, r| {
            let t = at(e.yaml, r, &["t"]);
            e.insert_path(t, &["deploy", "x"], NewNode::scalar("1"), KeyOrder::Append)
                .unwrap()
                .edit
        });
        assert_eq!(out, "t:\n  deploy:\n    x: 1\n");
    }

    #[test]
    fn flow_collections_stay_flow() {
        let text = "t: {image: x, deploy: {}}\nc: [a]\n";
        let out = edit_with(text, |e, r| {
            let t = at(e.yaml, r, &["t"]);
            e.insert_entry(
                t,
                "shm_size",
                &NewNode::scalar("'8gb'"),
                KeyOrder::ComposeService,
            )
            .unwrap()
        });
        assert_eq!(out, "t: {image: x, deploy: {}, shm_size: '8gb'}\nc: [a]\n");
        let out = edit_with(text, |e, r| {
            let t = at(e.yaml, r, &["t"]);
            e.insert_path(
                t,
                &["deploy", "resources"],
                NewNode::map([("a", NewNode::scalar("1"))]),
                KeyOrder::Append,
            )
            .unwrap()
            .edit
        });
        assert_eq!(out, "t: {image: x, deploy: {resources: {a: 1}}}\nc: [a]\n");
        let out = edit_with(text, |e, r| {
            e.append_item(at(e.yaml, r, &["c"]), &NewNode::scalar("b"))
                .unwrap()
        });
        assert_eq!(out, "t: {image: x, deploy: {}}\nc: [a, b]\n");
    }

    #[test]
    fn appends_and_removes_block_sequence_items() {
        let text = "e:\n  - A=1  # one\n  - B=2\n";
        let out = edit_with(text, |e, r| {
            e.append_item(at(e.yaml, r, &["e"]), &NewNode::scalar("C=3"))
                .unwrap()
        });
        assert_eq!(out, "e:\n  - A=1  # one\n  - B=2\n  - C=3\n");
        let out = edit_with(text, |e, r| {
            let seq = at(e.yaml, r, &["e"]);
            e.remove_item(seq, e.yaml.items(seq)[0]).unwrap()
        });
        assert_eq!(out, "e:\n  - B=2\n");
    }

    #[test]
    fn removes_entries_whole_lines_or_behind_a_dash() {
        let text = "s:\n  a: 1\n  b: |\n    x\n    y\n  c: 3\n";
        let out = edit_with(text, |e, r| {
            let s = at(e.yaml, r, &["s"]);
            let b = e.yaml.get(s, "b").unwrap().key;
            e.remove_entry(s, b).unwrap()
        });
        assert_eq!(out, "s:\n  a: 1\n  c: 3\n");
        let text = "d:\n  - count: 1\n    device_ids: ['0']\n";
        let out = edit_with(text, |e, r| {
            let item = e.yaml.items(at(e.yaml, r, &["d"]))[0];
            let count = e.yaml.get(item, "count").unwrap().key;
            e.remove_entry(item, count).unwrap()
        });
        assert_eq!(out, "d:\n  - device_ids: ['0']\n");
        let text = "m: {a: 1, b: 2}\n";
        let out = edit_with(text, |e, r| {
            let m = at(e.yaml, r, &["m"]);
            let b = e.yaml.get(m, "b").unwrap().key;
            e.remove_entry(m, b).unwrap()
        });
        assert_eq!(out, "m: {a: 1}\n");
    }

    #[test]
    fn paths_through_merges_name_the_anchor() {
        let text = "x: &gpu\n  deploy:\n    resources: {}\ns:\n  <<: *gpu\n  image: y\n";
        let yaml = Yaml::parse(text).unwrap();
        let editor = YamlEditor::new(&yaml, text);
        let s = at(&yaml, root(&yaml), &["s"]);
        let plan = editor
            .insert_path(
                s,
                &["deploy", "resources", "reservations"],
                NewNode::scalar("{}"),
                KeyOrder::Append,
            )
            .unwrap();
        assert_eq!(plan.through_anchor.as_deref(), Some("&gpu"));
        let plan = editor
            .insert_path(s, &["shm_size"], NewNode::scalar("1g"), KeyOrder::Append)
            .unwrap();
        assert_eq!(plan.through_anchor, None);
    }

    #[test]
    fn combine_finds_the_smallest_single_edit() {
        for (old, new) in [
            ("abcdef", "abXYef"),
            ("aaa", "aaaa"),
            ("é1é", "é2é"),
            ("x", ""),
            ("", "y"),
            ("ab", "ab"),
        ] {
            let edit = combine(old, new);
            assert_eq!(apply_edits(old, &[edit]), new, "{old} -> {new}");
        }
        assert_eq!(combine("abcdef", "abXYef").range, TextRange::new(2, 4));
    }

    #[test]
    fn detects_style() {
        let yaml_text = "a:\n    b:\n        - x\n    c: 'q'\n";
        let yaml = Yaml::parse(yaml_text).unwrap();
        let style = FileStyle::detect(&yaml, yaml_text);
        assert_eq!(
            style,
            FileStyle {
                newline: "\n",
                indent: 4,
                indent_sequences: true,
                quote: '\''
            }
        );
        let yaml_text = "a:\n  b:\n  - x\n";
        let yaml = Yaml::parse(yaml_text).unwrap();
        assert!(!FileStyle::detect(&yaml, yaml_text).indent_sequences);
    }
}
