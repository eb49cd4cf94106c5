//! Byte ranges and the conversion from byte offsets to human positions.
//!
//! Everything inside gpulint speaks in byte offsets; only output formats and the
//! LSP convert them to 1-based line/column (columns counted in characters, as
//! editors and terminals show them).

use std::ops::Range;

/// A half-open byte range `start..end` into a source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TextRange {
    pub start: u32,
    pub end: u32,
}

impl TextRange {
    pub fn new(start: usize, end: usize) -> Self {
        debug_assert!(start <= end, "inverted range {start}..{end}");
        Self {
            start: start as u32,
            end: end as u32,
        }
    }

    pub fn empty(at: usize) -> Self {
        Self::new(at, at)
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    pub fn as_range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn contains(self, offset: usize) -> bool {
        (self.start as usize) <= offset && offset < self.end as usize
    }

    /// The smallest range covering both.
    pub fn cover(self, other: TextRange) -> TextRange {
        TextRange {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A 1-based line and column; the column counts characters, not bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// Offsets of line starts, for turning byte offsets into line/column.
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<u32>,
    has_bom: bool,
    /// `None` for ASCII text, where a column is a byte distance.
    wide: Option<WideCounts>,
}

/// Counts of the bytes that are not a character of their own, kept every
/// [`WideCounts::STRIDE`] bytes so that a column on a very long line costs
/// at most one stride of counting, not the whole line: a report of many
/// findings on one minified line stays linear.
#[derive(Debug, Clone)]
struct WideCounts {
    /// Before each multiple of the stride: continuation bytes (the bytes of
    /// a character after its first) and four-byte leads (two UTF-16 units).
    before: Vec<(u32, u32)>,
}

impl WideCounts {
    const STRIDE: usize = 512;

    fn new(bytes: &[u8]) -> Self {
        let mut before = Vec::with_capacity(bytes.len() / Self::STRIDE + 1);
        let (mut continuations, mut four_byte) = (0u32, 0u32);
        for chunk in bytes.chunks(Self::STRIDE) {
            before.push((continuations, four_byte));
            let (c, f) = Self::count(chunk);
            continuations += c;
            four_byte += f;
        }
        before.push((continuations, four_byte));
        Self { before }
    }

    fn count(bytes: &[u8]) -> (u32, u32) {
        bytes.iter().fold((0, 0), |(c, f), &b| {
            (c + u32::from(b & 0xC0 == 0x80), f + u32::from(b >= 0xF0))
        })
    }

    /// Continuation bytes and four-byte leads in `bytes[..offset]`.
    fn before(&self, bytes: &[u8], offset: usize) -> (u32, u32) {
        let block = offset / Self::STRIDE;
        let (c, f) = self.before[block];
        let (dc, df) = Self::count(&bytes[block * Self::STRIDE..offset]);
        (c + dc, f + df)
    }

    /// Characters and UTF-16 units in `bytes[start..end]`.
    fn between(&self, bytes: &[u8], start: usize, end: usize) -> (usize, usize) {
        let (c0, f0) = self.before(bytes, start);
        let (c1, f1) = self.before(bytes, end);
        let chars = (end - start) - (c1 - c0) as usize;
        (chars, chars + (f1 - f0) as usize)
    }
}

const BOM: &str = "\u{feff}";

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0u32];
        let bytes = text.as_bytes();
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            // `\r\n`, `\n` and a lone `\r` end a line: YAML reads all three
            // as line breaks, and so do editors and the LSP, whose positions
            // these are.
            if bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n') {
                line_starts.push((i + 1) as u32);
            }
        }
        Self {
            line_starts,
            has_bom: text.starts_with(BOM),
            wide: (!text.is_ascii()).then(|| WideCounts::new(bytes)),
        }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// 0-based line number containing `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&(offset as u32)) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// Byte range of 0-based line `line`, without its line terminator.
    pub fn line_range(&self, line: usize, text: &str) -> TextRange {
        let start = self.line_starts[line] as usize;
        let mut end = self
            .line_starts
            .get(line + 1)
            .map_or(text.len(), |&s| s as usize);
        let bytes = text.as_bytes();
        if end > start && bytes[end - 1] == b'\n' {
            end -= 1;
        }
        // Before a `\n`, or alone.
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        TextRange::new(start, end)
    }

    /// 1-based line and character column of a byte offset. A byte order mark
    /// does not count as a column.
    pub fn line_col(&self, offset: usize, text: &str) -> LineCol {
        let offset = offset.min(text.len());
        let line = self.line_of(offset);
        let mut start = self.line_starts[line] as usize;
        if line == 0 && self.has_bom && offset >= BOM.len() {
            start = BOM.len();
        }
        let column = match &self.wide {
            Some(wide) if text.is_char_boundary(offset) => {
                wide.between(text.as_bytes(), start, offset).0
            }
            _ => offset - start,
        };
        LineCol {
            line: line + 1,
            column: column + 1,
        }
    }

    /// The byte offset of a 0-based line and UTF-16 column (an LSP
    /// position). Positions past a line's end clamp to it, lines past the
    /// end to the end of the text, and a column inside a surrogate pair to
    /// the character's start, as the protocol asks.
    pub fn offset_of_utf16(&self, line: u32, column: u32, text: &str) -> usize {
        let Some(&start) = self.line_starts.get(line as usize) else {
            return text.len();
        };
        let line_text = &text[self.line_range(line as usize, text).as_range()];
        let mut units = 0u32;
        for (i, c) in line_text.char_indices() {
            units += c.len_utf16() as u32;
            if units > column {
                return start as usize + i;
            }
        }
        start as usize + line_text.len()
    }

    /// 0-based line and UTF-16 column, as the Language Server Protocol wants.
    pub fn line_col_utf16(&self, offset: usize, text: &str) -> (u32, u32) {
        let offset = offset.min(text.len());
        let line = self.line_of(offset);
        let start = self.line_starts[line] as usize;
        let column = match &self.wide {
            None => offset - start,
            Some(wide) if text.is_char_boundary(offset) => {
                wide.between(text.as_bytes(), start, offset).1
            }
            Some(_) => 0,
        };
        (line as u32, column as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_positions_round_trip_and_clamp() {
        let text = "a: é😀x\r\nb: 1\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        // é is one UTF-16 unit, 😀 two.
        assert_eq!(index.line_col_utf16(x, text), (0, 6));
        assert_eq!(index.offset_of_utf16(0, 6, text), x);
        // Inside the surrogate pair: the emoji's start.
        assert_eq!(index.offset_of_utf16(0, 5, text), text.find('😀').unwrap());
        // Past the end of the line: before its CRLF.
        assert_eq!(index.offset_of_utf16(0, 99, text), text.find('\r').unwrap());
        assert_eq!(index.offset_of_utf16(1, 0, text), text.find('b').unwrap());
        assert_eq!(index.offset_of_utf16(7, 0, text), text.len());
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let text = "a: é☕x\nb: 1\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.line_col(x, text), LineCol { line: 1, column: 6 });
        let b = text.find('b').unwrap();
        assert_eq!(index.line_col(b, text), LineCol { line: 2, column: 1 });
    }

    #[test]
    fn bom_is_not_a_column_and_crlf_is_one_break() {
        let text = "\u{feff}a: 1\r\nb: 2\r\n";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(3, text), LineCol { line: 1, column: 1 });
        let b = text.find('b').unwrap();
        assert_eq!(index.line_col(b, text), LineCol { line: 2, column: 1 });
        assert_eq!(&text[index.line_range(0, text).as_range()], "\u{feff}a: 1");
    }

    #[test]
    fn a_lone_cr_ends_a_line() {
        let text = "a: 1\rb: 2\r\nc: 3\rd";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        for (name, line) in [("b", 2), ("c", 3), ("d", 4)] {
            let at = text.find(name).unwrap();
            assert_eq!(index.line_col(at, text), LineCol { line, column: 1 });
            assert_eq!(index.line_col_utf16(at, text), (line as u32 - 1, 0));
            assert_eq!(index.offset_of_utf16(line as u32 - 1, 0, text), at);
        }
        assert_eq!(&text[index.line_range(0, text).as_range()], "a: 1");
        assert_eq!(&text[index.line_range(1, text).as_range()], "b: 2");
        assert_eq!(&text[index.line_range(2, text).as_range()], "c: 3");
    }

    #[test]
    fn utf16_columns_for_lsp() {
        let text = "x: 😀y";
        let index = LineIndex::new(text);
        let y = text.find('y').unwrap();
        assert_eq!(index.line_col_utf16(y, text), (0, 5));
    }

    /// The counted checkpoints agree with counting each line from its start,
    /// at every offset of text whose long lines cross many checkpoints and
    /// mix one- to four-byte characters.
    #[test]
    fn checkpointed_columns_agree_with_counting_the_line() {
        let pieces = ["a", "é", "€", "😀", "\n", "\r\n", "\r", "xyz"];
        let mut text = String::from(BOM);
        let mut state = 7u32;
        for _ in 0..6000 {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let pick = (state >> 16) as usize % 64;
            // Mostly characters, so that lines run past several strides.
            text.push_str(pieces[if pick < 60 { pick % 4 } else { pick % 8 }]);
        }
        let index = LineIndex::new(&text);
        for offset in 0..=text.len() {
            let line = index.line_of(offset);
            let mut start = index.line_starts[line] as usize;
            let units: usize = text
                .get(start..offset)
                .map_or(0, |s| s.chars().map(char::len_utf16).sum());
            assert_eq!(
                index.line_col_utf16(offset, &text),
                (line as u32, units as u32)
            );
            if line == 0 && offset >= BOM.len() {
                start = BOM.len();
            }
            let chars = text
                .get(start..offset)
                .map_or(offset - start, |s| s.chars().count());
            assert_eq!(
                index.line_col(offset, &text).column,
                chars + 1,
                "at {offset}"
            );
        }
    }
}

/// Another file a finding points into (the Dockerfile a compose service
/// builds): its path as shown to the user, its text and line index.
#[derive(Debug)]
pub struct SourceFile {
    pub path: std::path::PathBuf,
    pub text: String,
    /// Built when first asked for: most files read in a run have no
    /// finding to place.
    index: std::sync::OnceLock<LineIndex>,
}

impl SourceFile {
    pub fn new(path: std::path::PathBuf, text: String) -> Self {
        SourceFile {
            path,
            text,
            index: std::sync::OnceLock::new(),
        }
    }

    /// Where the lines of the text start.
    pub fn index(&self) -> &LineIndex {
        self.index.get_or_init(|| LineIndex::new(&self.text))
    }
}

/// Two files are the same when their path and text are.
impl PartialEq for SourceFile {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.text == other.text
    }
}

impl Eq for SourceFile {}
