//! The fix model (after ruff's): a fix is a set of byte-range edits with an
//! applicability that says whether `--fix` may apply it unasked, plus the
//! paths of the resolved document it means to change, which the engine
//! checks before writing anything.

use crate::text::TextRange;
use foldhash::HashSet;
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Shown to the user, never applied automatically.
    DisplayOnly,
    /// Changes behaviour the user may rely on; needs `--unsafe-fixes`.
    Unsafe,
    /// Keeps the user's intent; applied by `--fix`.
    Safe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::DisplayOnly => "display-only",
            Applicability::Unsafe => "unsafe",
            Applicability::Safe => "safe",
        }
    }
}

/// Replace `range` with `content` (an empty range inserts, empty content deletes).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Edit {
    pub range: TextRange,
    pub content: String,
}

impl Edit {
    pub fn insert(at: u32, content: impl Into<String>) -> Self {
        Edit {
            range: TextRange { start: at, end: at },
            content: content.into(),
        }
    }

    pub fn delete(range: TextRange) -> Self {
        Edit {
            range,
            content: String::new(),
        }
    }
}

/// A path in a document's resolved tree (merges applied, aliases followed):
/// `services.trainer.deploy`. Sequence items are numbered from 0.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModelPath(pub Vec<String>);

impl ModelPath {
    pub fn new<S: Into<String>>(segments: impl IntoIterator<Item = S>) -> Self {
        ModelPath(segments.into_iter().map(Into::into).collect())
    }

    pub fn child(&self, segment: impl Into<String>) -> Self {
        // Sized for the new segment: a clone is exactly full, and pushing
        // onto it would copy it again.
        let mut segments = Vec::with_capacity(self.0.len() + 1);
        segments.extend(self.0.iter().cloned());
        segments.push(segment.into());
        ModelPath(segments)
    }

    /// One path lies under the other (or they are equal).
    pub fn overlaps(&self, other: &ModelPath) -> bool {
        let n = self.0.len().min(other.0.len());
        self.0[..n] == other.0[..n]
    }
}

/// A set of paths that answers "does this path overlap one of them" in time
/// proportional to the path's depth, not to the set's size: a fix on an
/// anchor that hundreds of services merge declares hundreds of paths, and
/// verification asks about every path the fix changes.
#[derive(Default)]
pub struct PathOverlap<'a> {
    /// The paths themselves.
    paths: HashSet<&'a [String]>,
    /// Every prefix of every path, the paths included.
    prefixes: HashSet<&'a [String]>,
}

impl<'a> PathOverlap<'a> {
    pub fn new(paths: impl IntoIterator<Item = &'a ModelPath>) -> Self {
        let mut set = PathOverlap::default();
        set.extend(paths);
        set
    }

    /// Adds paths to the set.
    pub fn extend(&mut self, paths: impl IntoIterator<Item = &'a ModelPath>) {
        for path in paths {
            self.paths.insert(&path.0);
            for end in 0..=path.0.len() {
                self.prefixes.insert(&path.0[..end]);
            }
        }
    }

    /// Whether `path` overlaps (lies under, over or at) a path of the set.
    pub fn overlaps(&self, path: &ModelPath) -> bool {
        self.prefixes.contains(path.0.as_slice())
            || (0..=path.0.len()).any(|end| self.paths.contains(&path.0[..end]))
    }
}

impl std::fmt::Display for ModelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, as an imperative: "Add `shm_size: \"8gb\"`".
    pub title: String,
    pub applicability: Applicability,
    /// Sorted by start, non-overlapping.
    pub edits: Vec<Edit>,
    /// Where the resolved document must change.
    pub changes: Vec<ModelPath>,
    /// Where it may also change: the services that share the edited anchor
    /// (one that sets the key itself is not affected). Shared by the fixes of
    /// every service reaching the anchor, so a fan of them stays linear.
    pub may_change: Arc<[ModelPath]>,
    /// The YAML document (0-based) the paths are in; the others must not change.
    pub document: usize,
}

impl Fix {
    pub fn new(
        title: impl Into<String>,
        applicability: Applicability,
        mut edits: Vec<Edit>,
        changes: Vec<ModelPath>,
    ) -> Self {
        edits.sort_by_key(|e| (e.range.start, e.range.end));
        edits.dedup();
        Fix {
            title: title.into(),
            applicability,
            edits,
            changes,
            may_change: Arc::from([]),
            document: 0,
        }
    }

    pub fn in_document(mut self, document: usize) -> Self {
        self.document = document;
        self
    }
}

/// Applies sorted, non-overlapping edits.
pub fn apply_edits(text: &str, edits: &[Edit]) -> String {
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.content.len()).sum::<usize>());
    let mut last = 0usize;
    for edit in edits {
        let start = edit.range.start as usize;
        out.push_str(&text[last..start]);
        out.push_str(&edit.content);
        last = edit.range.end as usize;
    }
    out.push_str(&text[last..]);
    out
}

/// Whether edits are sorted, in bounds, on character boundaries and disjoint.
pub fn edits_are_well_formed(text: &str, edits: &[Edit]) -> bool {
    let mut last = 0usize;
    for edit in edits {
        let (start, end) = (edit.range.start as usize, edit.range.end as usize);
        if start < last
            || end < start
            || end > text.len()
            || !text.is_char_boundary(start)
            || !text.is_char_boundary(end)
        {
            return false;
        }
        last = end;
    }
    true
}

/// Where the character at `offset` of the text before `edits` lands after
/// them (text inserted at an offset goes before that character). Offsets
/// inside a replaced range map to the start of its replacement.
#[cfg(test)] // the reference the tests hold `OffsetMap` to
pub(crate) fn map_offset(edits: &[Edit], offset: u32) -> u32 {
    let mut delta: i64 = 0;
    for edit in edits {
        if edit.range.end <= offset {
            delta += edit.content.len() as i64 - i64::from(edit.range.end - edit.range.start);
        } else if edit.range.start < offset {
            return (i64::from(edit.range.start) + delta) as u32;
        }
    }
    (i64::from(offset) + delta) as u32
}

/// `map_offset` for many offsets through the same edits, in time
/// logarithmic in the number of edits: the fix loop maps every finding of a
/// file through the edits of hundreds of fixes at once.
pub struct OffsetMap<'a> {
    edits: &'a [Edit],
    /// `shift[i]`: how far the edits before `edits[i]` move what follows them.
    shift: Vec<i64>,
}

impl<'a> OffsetMap<'a> {
    /// `edits` sorted by start and non-overlapping, as [`apply_edits`] takes them.
    pub fn new(edits: &'a [Edit]) -> Self {
        let mut shift = Vec::with_capacity(edits.len() + 1);
        let mut delta = 0i64;
        shift.push(0);
        for edit in edits {
            delta += edit.content.len() as i64 - i64::from(edit.range.end - edit.range.start);
            shift.push(delta);
        }
        OffsetMap { edits, shift }
    }

    /// Where `offset` lands after the edits, as `map_offset` says.
    pub fn map(&self, offset: u32) -> u32 {
        // The edits that end at or before `offset` are a prefix: sorted,
        // non-overlapping edits end in order.
        let before = self.edits.partition_point(|e| e.range.end <= offset);
        let delta = self.shift[before];
        match self.edits.get(before) {
            Some(edit) if edit.range.start < offset => (i64::from(edit.range.start) + delta) as u32,
            _ => (i64::from(offset) + delta) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_and_maps_offsets() {
        let text = "abcdef";
        let edits = vec![
            Edit::insert(1, "XY"),
            Edit {
                range: TextRange::new(3, 5),
                content: "Z".into(),
            },
        ];
        assert!(edits_are_well_formed(text, &edits));
        assert_eq!(apply_edits(text, &edits), "aXYbcZf");
        assert_eq!(map_offset(&edits, 0), 0);
        // Text inserted at an offset goes before the character there.
        assert_eq!(map_offset(&edits, 1), 3);
        assert_eq!(map_offset(&edits, 2), 4);
        assert_eq!(map_offset(&edits, 4), 5);
        assert_eq!(map_offset(&edits, 5), 6);
        assert!(!edits_are_well_formed(text, &[Edit::insert(9, "")]));
        let map = OffsetMap::new(&edits);
        for offset in 0..=6 {
            assert_eq!(map.map(offset), map_offset(&edits, offset), "{offset}");
        }
    }

    #[test]
    fn an_offset_map_agrees_with_map_offset() {
        // Inserts, a replacement, a deletion, an insert where a replacement
        // ends and one at the very end.
        let edits = vec![
            Edit::insert(0, "ab"),
            Edit {
                range: TextRange::new(2, 6),
                content: "x".into(),
            },
            Edit::insert(6, "yz"),
            Edit::delete(TextRange::new(8, 11)),
            Edit::insert(20, "end"),
        ];
        let map = OffsetMap::new(&edits);
        for offset in 0..=20 {
            assert_eq!(map.map(offset), map_offset(&edits, offset), "{offset}");
        }
        assert_eq!(OffsetMap::new(&[]).map(7), 7);
    }

    #[test]
    fn paths_overlap_when_one_contains_the_other() {
        let deploy = ModelPath::new(["services", "t", "deploy"]);
        assert!(deploy.overlaps(&deploy.child("resources")));
        assert!(deploy.child("resources").overlaps(&deploy));
        assert!(!deploy.overlaps(&ModelPath::new(["services", "t", "ipc"])));
        assert_eq!(deploy.to_string(), "services.t.deploy");
    }

    #[test]
    fn a_path_set_finds_overlaps_as_overlaps_does() {
        let declared = [
            ModelPath::new(["services", "a", "shm_size"]),
            ModelPath::new(["services", "b"]),
        ];
        let set = PathOverlap::new(&declared);
        let probes = [
            ModelPath::new(["services", "a", "shm_size"]),
            ModelPath::new(["services", "a", "shm_size", "x"]),
            ModelPath::new(["services", "a"]),
            ModelPath::new(["services"]),
            ModelPath::new(Vec::<String>::new()),
            ModelPath::new(["services", "a", "ipc"]),
            ModelPath::new(["services", "b", "deploy", "resources"]),
            ModelPath::new(["services", "c"]),
            ModelPath::new(["volumes"]),
        ];
        for probe in &probes {
            let expected = declared.iter().any(|d| d.overlaps(probe));
            assert_eq!(set.overlaps(probe), expected, "{probe}");
        }
    }
}
