//! Building a `Yaml` from the parser's events: nodes, spans, anchors and the
//! keys Compose refuses.

use super::*;

pub(super) enum Frame {
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

pub(super) struct Builder<'a> {
    text: &'a str,
    offsets: OffsetMap,
    nodes: Vec<Node>,
    documents: Vec<Document>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, NodeId>,
    root: Option<NodeId>,
    scalar_ranges: Vec<TextRange>,
    key_index: HashMap<NodeId, HashMap<String, u32>>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        // Most lines of a config hold a key and its value: sized for that,
        // the node list is not copied over and over as it grows (a tenth
        // of a tree's parse was that copying, on arenas that grow by
        // `mprotect`); what is left over is given back at the end.
        // Bounded by the length, so a file of blank lines reserves nothing
        // much.
        let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
        let expected = (2 * lines).min(text.len() / 16 + 8);
        Self {
            text,
            offsets: OffsetMap::new(text),
            nodes: Vec::with_capacity(expected),
            documents: Vec::new(),
            stack: Vec::new(),
            anchors: HashMap::new(),
            root: None,
            scalar_ranges: Vec::with_capacity(expected),
            key_index: HashMap::new(),
        }
    }

    pub(super) fn run(mut self) -> Result<Yaml, YamlError> {
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
                    self.scalar(text.into_owned(), style, anchor, tag, start, end)
                }
                Event::Alias(anchor) => self.alias(anchor, start, end),
                Event::SequenceStart(anchor, tag) => self.open(false, anchor, tag, start, end),
                Event::MappingStart(anchor, tag) => self.open(true, anchor, tag, start, end),
                Event::SequenceEnd | Event::MappingEnd => self.close(end)?,
                Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
            }
        }
        self.nodes.shrink_to_fit();
        self.scalar_ranges.shrink_to_fit();
        Ok(Yaml {
            nodes: self.nodes,
            documents: self.documents,
            scalar_ranges: self.scalar_ranges,
            key_index: self.key_index,
            // Set by `parse` once spans are final.
            alias_starts: Vec::new(),
        })
    }

    /// A scalar's node, its span trimmed to what a fix may replace.
    fn scalar(
        &mut self,
        text: String,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<std::borrow::Cow<'_, saphyr_parser::Tag>>,
        start: usize,
        end: usize,
    ) {
        let style = match style {
            ScalarStyle::Plain => Style::Plain,
            ScalarStyle::SingleQuoted => Style::SingleQuoted,
            ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
            ScalarStyle::Literal => Style::Literal,
            ScalarStyle::Folded => Style::Folded,
        };
        let (mut props_start, mut range) = self.skip_properties(start, end);
        if matches!(style, Style::SingleQuoted | Style::DoubleQuoted) {
            // Quoted scalar spans run on over trailing blanks and comments.
            if let Some(end) = closing_quote(self.text, range.start as usize, style) {
                range.end = range.end.min(end as u32);
            }
        } else if matches!(style, Style::Literal | Style::Folded) {
            // Block scalar spans run on to the next token; trim the trailing blank lines.
            let trimmed = self.text[range.as_range()].trim_end().len();
            range.end = range.start + trimmed as u32;
            // An empty one (`- |` and then a line less indented)
            // starts at that next token: it ends with its header
            // instead, or text inserted after it would land
            // past the next line.
            if trimmed == 0 {
                let header_end = self.text[..range.start as usize].trim_end().len();
                range = TextRange::new(header_end, header_end);
                props_start = header_end as u32;
            }
        }
        self.scalar_ranges.push(range);
        let id = self.push(Node {
            value: Value::Scalar { text, style },
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

    /// An alias's node, pointing at the node its anchor names (none for an
    /// undefined anchor).
    fn alias(&mut self, anchor: usize, start: usize, end: usize) {
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

    /// Closes the innermost collection at byte `end`: its items become its
    /// value, and its span runs to its last item (or its closing bracket).
    fn close(&mut self, end: usize) -> Result<(), YamlError> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        let (id, value, last) = match frame {
            Frame::Seq { id, items } => {
                let last = items.last().copied();
                (id, Value::Sequence(items), last)
            }
            Frame::Map { id, pairs, .. } => {
                self.refuse_invalid_keys(&pairs)?;
                if pairs.len() >= INDEXED_MAPPING {
                    let index = self.key_index_of(&pairs);
                    self.key_index.insert(id, index);
                }
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
        Ok(())
    }

    /// Where each scalar key of a mapping (an alias of one too) is among
    /// its pairs; of keys with the same text, the last, as a scan finds.
    pub(super) fn key_index_of(&self, pairs: &[(NodeId, NodeId)]) -> HashMap<String, u32> {
        let text_of = |mut id: NodeId| {
            for _ in 0..MAX_MERGE_DEPTH {
                match &self.nodes[id as usize].value {
                    Value::Scalar { text, .. } => return Some(text.clone()),
                    Value::Alias(Some(target)) => id = *target,
                    _ => return None,
                }
            }
            None
        };
        pairs
            .iter()
            .enumerate()
            .filter_map(|(at, &(key, _))| Some((text_of(key)?, at as u32)))
            .collect()
    }

    /// Docker Compose (yaml.v3) and kubectl refuse a mapping that repeats a
    /// key, rather than letting the last one win; so does gpulint, at the
    /// repeated key. A linter that took the last value would judge a file
    /// the engine never runs, and a fix removing the last would reveal the first.
    ///
    /// Nor do they take a list or a mapping as a key (`? [a, b]`, or a
    /// `? ` whose mapping got a line break): yaml.v3 says "invalid map key",
    /// and the rest of the file would be judged on a key gpulint cannot name.
    pub(super) fn refuse_invalid_keys(&self, pairs: &[(NodeId, NodeId)]) -> Result<(), YamlError> {
        let text_of = |key: NodeId| match &self.nodes[key as usize].value {
            Value::Scalar { text, .. } => Some(text.as_str()),
            _ => None,
        };
        // Most mappings are small: comparing each key with the ones before
        // costs less than hashing them all.
        let mut seen: HashMap<&str, NodeId> = HashMap::new();
        let hashed = pairs.len() > 16;
        for (at, &(key, _)) in pairs.iter().enumerate() {
            // yaml.v3 compares the key's text whatever its style, `<<` too.
            let Some(text) = text_of(key) else {
                self.refuse_collection_key(key)?;
                continue;
            };
            let earlier = if hashed {
                seen.get(text).copied()
            } else {
                pairs[..at]
                    .iter()
                    .map(|&(k, _)| k)
                    .find(|&k| text_of(k) == Some(text))
            };
            if let Some(first) = earlier {
                let first_start = self.nodes[first as usize].range.start as usize;
                let line = self.text[..first_start].matches('\n').count() + 1;
                return Err(YamlError {
                    message: format!(
                        "mapping key `{text}` is already defined at line {line} (Docker Compose and kubectl refuse a repeated key)"
                    ),
                    offset: self.nodes[key as usize].range.start as usize,
                });
            }
            if hashed {
                seen.insert(text, key);
            }
        }
        Ok(())
    }

    /// A key that is a list or a mapping, written or through an alias.
    pub(super) fn refuse_collection_key(&self, key: NodeId) -> Result<(), YamlError> {
        let node = &self.nodes[key as usize];
        let target = match node.value {
            Value::Alias(Some(target)) => &self.nodes[target as usize],
            _ => node,
        };
        let what = match target.value {
            Value::Sequence(_) => "a list",
            Value::Mapping(_) => "a mapping",
            _ => return Ok(()),
        };
        Err(YamlError {
            message: format!(
                "a mapping key must be a plain value, not {what} (Docker Compose and kubectl refuse it: invalid map key)"
            ),
            offset: node.props_start as usize,
        })
    }

    pub(super) fn open(
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

    pub(super) fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        (self.nodes.len() - 1) as NodeId
    }

    pub(super) fn attach(&mut self, id: NodeId) {
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
    pub(super) fn skip_properties(&self, start: usize, end: usize) -> (u32, TextRange) {
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
