//! The built objects written as one YAML stream, which the manifest rules
//! read as they read any other, with a table from each written part back
//! to the node that decided it ([`Rendered::origin`]).

use super::{Kind, Node, Src};
use crate::syntax::yaml::Style;
use crate::text::TextRange;
use std::sync::Arc;

/// Where a part of the rendered stream was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A key, a scalar or a collection.
    Node(Src),
    /// A `key: value` entry: from its key to its value.
    Entry { key: Src, value: Src },
}

/// The stream, and the origin of every key, value and entry in it.
#[derive(Debug)]
pub struct Rendered {
    pub text: String,
    /// Sorted by start, then by end, longest first: a part comes before
    /// the parts inside it.
    parts: Vec<(TextRange, Origin)>,
}

impl Rendered {
    /// The origin of the innermost part that holds `range`.
    pub fn origin(&self, range: TextRange) -> Option<Origin> {
        let after = self.parts.partition_point(|(r, _)| r.start <= range.start);
        self.parts[..after]
            .iter()
            .rev()
            .find(|(r, _)| r.end >= range.end)
            .map(|&(_, origin)| origin)
    }
}

/// Nodes a rendered build may hold, as a file's tree may
/// ([`crate::syntax::tree::Budget`]).
const MAX_NODES: usize = 4_000_000;

pub(super) fn render(objects: &[Arc<Node>]) -> Result<Rendered, super::BuildError> {
    let mut writer = Writer::default();
    let mut left = MAX_NODES;
    for object in objects {
        // Counted before it is written: shared subtrees count each time.
        let size = object.size(left);
        if size > left {
            return Err(super::BuildError::new(format!(
                "the build expands past what gpulint reads ({} million nodes)",
                MAX_NODES / 1_000_000
            )));
        }
        left -= size;
        writer.text.push_str("---");
        writer.node(object, 0);
        writer.text.push('\n');
    }
    let mut parts = writer.parts;
    parts.sort_by_key(|(r, _)| (r.start, std::cmp::Reverse(r.end)));
    Ok(Rendered {
        text: writer.text,
        parts,
    })
}

#[derive(Default)]
struct Writer {
    text: String,
    parts: Vec<(TextRange, Origin)>,
}

impl Writer {
    fn part(&mut self, start: usize, origin: Origin) {
        self.parts
            .push((TextRange::new(start, self.text.len()), origin));
    }

    fn line(&mut self, indent: usize) {
        self.text.push('\n');
        self.text.extend(std::iter::repeat_n(' ', indent));
    }

    /// Writes `node` as the value after a `key:` or a `-`.
    fn node(&mut self, node: &Node, indent: usize) {
        match &node.kind {
            Kind::Scalar { .. } => {
                self.text.push(' ');
                let start = self.text.len();
                write_scalar(&mut self.text, node);
                self.part(start, Origin::Node(node.src));
            }
            Kind::Mapping(entries) if entries.is_empty() => self.empty(" {}", node.src),
            Kind::Sequence(items) if items.is_empty() => self.empty(" []", node.src),
            Kind::Mapping(entries) => {
                let mut first = None;
                for entry in entries {
                    self.line(indent);
                    let start = self.text.len();
                    first.get_or_insert(start);
                    write_key(&mut self.text, &entry.key);
                    // YAML reads an implicit key of at most 1024
                    // characters; a longer one is written explicit
                    // (`? KEY` then `: VALUE` on the next line). The key
                    // is the end of the text, so the marker moves only it.
                    let explicit = self.text.len() - start > MAX_IMPLICIT_KEY;
                    if explicit {
                        self.text.insert_str(start, "? ");
                    }
                    let key_start = if explicit { start + 2 } else { start };
                    self.part(key_start, Origin::Node(entry.key_src));
                    if explicit {
                        self.line(indent);
                    }
                    self.text.push(':');
                    self.node(&entry.value, indent + 2);
                    self.part(
                        start,
                        Origin::Entry {
                            key: entry.key_src,
                            value: entry.value.src,
                        },
                    );
                }
                self.part(first.unwrap_or(self.text.len()), Origin::Node(node.src));
            }
            Kind::Sequence(items) => {
                let mut first = None;
                for item in items {
                    self.line(indent);
                    first.get_or_insert(self.text.len());
                    self.text.push('-');
                    self.node(item, indent + 2);
                }
                self.part(first.unwrap_or(self.text.len()), Origin::Node(node.src));
            }
        }
    }

    fn empty(&mut self, text: &str, src: Src) {
        self.text.push_str(text);
        self.part(self.text.len() - 2, Origin::Node(src));
    }
}

/// The longest key, in bytes, written implicit: YAML reads an implicit key
/// of up to 1024 characters, counted to its `:` (a character is at least
/// a byte; the margin leaves room for the quotes and the colon).
const MAX_IMPLICIT_KEY: usize = 1000;

/// A scalar as YAML reads it back with the same value and type: plain
/// text as written, anything else double-quoted.
fn write_scalar(out: &mut String, node: &Node) {
    let Kind::Scalar { raw, style, .. } = &node.kind else {
        return;
    };
    let typed_as_string = node.tag.as_deref().is_some_and(|t| t.ends_with("str"));
    match style {
        // An empty plain scalar is null, written as nothing as it was.
        Style::Plain if raw.is_empty() => {}
        Style::Plain if !typed_as_string && plain_in_block(raw) => out.push_str(raw),
        _ => quote(out, raw),
    }
}

/// Whether `raw`, read plain in a flow collection, reads back as the same
/// scalar when written plain after `key: ` or `- `. A block plain scalar
/// may not start with an indicator nor hold `: ` or ` #`; a lenient
/// reader takes some of those in a flow (`[>./c]`). Any plain scalar this
/// refuses is a string, so quoting it keeps its value and its type.
fn plain_in_block(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    let second_is_safe = bytes.get(1).is_some_and(|b| !b" \t".contains(b));
    let starts_well = match first {
        b'-' | b'?' | b':' => second_is_safe,
        b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
        | b'"' | b'%' | b'@' | b'`' | b' ' | b'\t' => false,
        _ => true,
    };
    starts_well
        && !raw.ends_with([' ', '\t', ':'])
        && !raw.contains(": ")
        && !raw.contains(":\t")
        && !raw.contains(" #")
        && !raw.contains("\t#")
        && !raw.contains(['\n', '\r'])
        && !raw.contains("{{")
}

fn write_key(out: &mut String, key: &str) {
    let simple = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'));
    if simple && !key.contains("{{") {
        out.push_str(key);
    } else {
        quote(out, key);
    }
}

/// A double-quoted YAML scalar (JSON's escapes are YAML's). A `{{` in a
/// value (a config map holding a template) is written `\u007b{`, the same
/// value, so that the stream does not read as a Go template.
fn quote(out: &mut String, text: &str) {
    let quoted = serde_json::to_string(text).expect("a string serialises");
    out.push_str(&quoted.replace("{{", "\\u007b{"));
}
