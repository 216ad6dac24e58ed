//! Source files and byte spans.
//!
//! Every AST node carries a [`Span`]; a [`SourceMap`] owns the text of every file so that
//! diagnostics can be rendered with line and column numbers long after parsing.

use codespan_reporting::files;
use std::ops::Range;

/// Index of a file in a [`SourceMap`].
pub type FileId = usize;

/// A half-open byte range `start..end` in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    /// An empty span at the end of `self`, for "expected X here" labels.
    pub fn end_point(self) -> Span {
        Span { start: self.end, end: self.end }
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// One file: its name, its text, and where each of its lines starts.
struct SourceFile {
    name: String,
    text: String,
    lines: LineIndex,
}

/// The text of every file that takes part in one compilation, with an index of its lines: a
/// line or column is found by binary search, never by counting newlines from the start.
#[derive(Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file. A lone `\r` is a line end to Python, but not to the diagnostic renderer (and a
    /// terminal would print it as a return to the line's start), so it is stored as `\n`: one byte
    /// for one, so offsets are unchanged, and Python reads both the same way (inside strings too).
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let mut text = text.into();
        // A lone `\r` ends a line, as in the lexer: stored as `\n` (same offsets).
        if text.contains('\r') {
            // `\r` is one byte, so `i + 1` is the start of the next character.
            let lone = |i: usize, c: char| c == '\r' && !text[i + 1..].starts_with('\n');
            if text.char_indices().any(|(i, c)| lone(i, c)) {
                text = text.char_indices().map(|(i, c)| if lone(i, c) { '\n' } else { c }).collect();
            }
        }
        let lines = LineIndex::new(&text);
        self.files.push(SourceFile { name: name.into(), text, lines });
        self.files.len() - 1
    }

    pub fn text(&self, file: FileId) -> &str {
        self.files.get(file).map(|f| f.text.as_str()).unwrap_or("")
    }

    pub fn name(&self, file: FileId) -> &str {
        self.files.get(file).map(|f| f.name.as_str()).unwrap_or("<unknown>")
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// The index of a file's lines.
    pub fn lines(&self, file: FileId) -> Option<&LineIndex> {
        self.files.get(file).map(|f| &f.lines)
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// 0-based index of the line holding a byte offset (offsets past the end are on the last).
    pub fn line_index(&self, file: FileId, offset: usize) -> usize {
        match self.files.get(file) {
            Some(f) => f.lines.line(offset.min(u32::MAX as usize) as u32),
            None => 0,
        }
    }

    /// The byte range of a 0-based line, its line break included.
    pub fn line_range(&self, file: FileId, line: usize) -> Option<Range<usize>> {
        let f = self.files.get(file)?;
        let start = f.lines.line_start(line)? as usize;
        let end = f.lines.line_start(line + 1).map_or(f.text.len(), |e| e as usize);
        Some(start..end)
    }

    /// 1-based line number of a byte offset.
    pub fn line_number(&self, file: FileId, offset: u32) -> usize {
        self.line_index(file, offset as usize) + 1
    }

    /// 1-based line and column of a byte offset (columns count characters).
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let text = self.text(file);
        let offset = floor_char_boundary(text, (offset as usize).min(text.len()));
        let line = self.line_index(file, offset);
        let start = self.line_range(file, line).map_or(0, |r| r.start);
        (line + 1, text[start..offset].chars().count() + 1)
    }
}

/// The files in the form codespan-reporting renders from.
impl<'a> files::Files<'a> for SourceMap {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        self.files.get(id).map(|f| f.name.as_str()).ok_or(files::Error::FileMissing)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        self.files.get(id).map(|f| f.text.as_str()).ok_or(files::Error::FileMissing)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, files::Error> {
        self.files.get(id).ok_or(files::Error::FileMissing)?;
        Ok(SourceMap::line_index(self, id, byte_index))
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, files::Error> {
        let f = self.files.get(id).ok_or(files::Error::FileMissing)?;
        SourceMap::line_range(self, id, line_index)
            .ok_or(files::Error::LineTooLarge { given: line_index, max: f.lines.line_count() - 1 })
    }
}

/// Where each line of a text starts, so a byte offset finds its line in O(log n) rather than by
/// counting newlines from the start of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    /// The byte offset of each line's first character; `starts[0]` is 0.
    starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        // Source lines are a few dozen bytes long.
        let mut starts = Vec::with_capacity(bytes.len() / 32 + 1);
        starts.push(0);
        let mut i = 0;
        while i < bytes.len() {
            // Eight bytes at a time through text without a line break, which is most of it: a
            // large file is indexed before anything else can start.
            if let Some(word) = bytes.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
                let word = u64::from_le_bytes(word);
                let breaks = bytes_equal_to(word, b'\n') | bytes_equal_to(word, b'\r');
                if breaks == 0 {
                    i += 8;
                    continue;
                }
                // Straight to the first `\n` or `\r` of the word.
                i += (breaks.trailing_zeros() / 8) as usize;
            }
            if is_line_break(bytes, i) {
                starts.push(i as u32 + 1);
            }
            i += 1;
        }
        LineIndex { starts, len: text.len() as u32 }
    }

    /// The 0-based line that holds byte `offset` (offsets past the end are on the last line).
    pub fn line(&self, offset: u32) -> usize {
        self.starts.partition_point(|&s| s <= offset.min(self.len)) - 1
    }

    /// [`LineIndex::line`], trying line `near` and the one after it first: a walk through the
    /// text in order asks about the same line or the next one nearly every time.
    pub fn line_near(&self, offset: u32, near: usize) -> usize {
        let offset_on_a_line = offset.min(self.len);
        let holds = |line: usize| {
            self.starts.get(line).is_some_and(|&start| start <= offset_on_a_line)
                && self.starts.get(line + 1).is_none_or(|&next| next > offset_on_a_line)
        };
        if holds(near) {
            near
        } else if holds(near + 1) {
            near + 1
        } else {
            self.line(offset)
        }
    }

    /// The byte offset where 0-based `line` starts, if the text has that line.
    pub fn line_start(&self, line: usize) -> Option<u32> {
        self.starts.get(line).copied()
    }

    /// The byte offset where 0-based `line` ends: its newline, or the end of the text.
    pub fn line_end(&self, line: usize) -> Option<u32> {
        self.starts.get(line)?;
        Some(self.starts.get(line + 1).map(|s| s - 1).unwrap_or(self.len))
    }

    /// How many lines the text has (a text ending in a newline has an empty last line).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }
}

/// Whether byte `i` ends a line: a `\n`, or a `\r` not followed by `\n` (a lone `\r` ends a
/// line, as in Python and in the lexer).
fn is_line_break(bytes: &[u8], i: usize) -> bool {
    match bytes[i] {
        b'\n' => true,
        b'\r' => bytes.get(i + 1) != Some(&b'\n'),
        _ => false,
    }
}

/// The bytes of `word` (little-endian) that equal `byte`, as the high bit of each: the classic
/// zero-byte test on `word` with `byte` cleared. Zero when there is none; otherwise its lowest set
/// bit marks the first such byte exactly (only bytes after a match can be flagged wrongly).
const fn bytes_equal_to(word: u64, byte: u8) -> u64 {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    let x = word ^ (ONES * byte as u64);
    x.wrapping_sub(ONES) & !x & (ONES << 7)
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_index_finds_every_break_a_byte_at_a_time_would() {
        let pieces = ["", "a", "\n", "\r", "\r\n", "\n\r", "abcdefgh", "é", "  x = 1  # ", "\r\r\n\n"];
        let mut texts = Vec::new();
        for (k, a) in pieces.iter().enumerate() {
            for b in &pieces {
                for c in &pieces {
                    texts.push(format!("{}{a}{}{b}{}{c}", "x".repeat(k), "y".repeat(7 - k % 8), "z".repeat(k * 3)));
                }
            }
        }
        for text in texts {
            let bytes = text.as_bytes();
            let expected: Vec<u32> = std::iter::once(0)
                .chain((0..bytes.len()).filter(|&i| is_line_break(bytes, i)).map(|i| i as u32 + 1))
                .collect();
            assert_eq!(LineIndex::new(&text).starts, expected, "{text:?}");
        }
    }

    #[test]
    fn a_line_found_near_a_guess_is_the_line_found_by_search() {
        let text = "ab\n\ncd\r\nefg\rh\n";
        let index = LineIndex::new(text);
        for offset in 0..=text.len() as u32 + 2 {
            for near in 0..index.line_count() + 2 {
                assert_eq!(index.line_near(offset, near), index.line(offset), "offset {offset}, near line {near}");
            }
        }
    }

    #[test]
    fn lines_and_columns() {
        let mut map = SourceMap::new();
        let f = map.add("a.onnxs", "ab\néx\n\nlast");
        assert_eq!(map.line_col(f, 0), (1, 1));
        assert_eq!(map.line_col(f, 2), (1, 3));
        assert_eq!(map.line_col(f, 3), (2, 1));
        assert_eq!(map.line_col(f, 5), (2, 2), "columns count characters");
        assert_eq!(map.line_col(f, 4), (2, 1), "inside a character: its start");
        assert_eq!(map.line_col(f, 7), (3, 1));
        assert_eq!(map.line_col(f, 100), (4, 5), "past the end: the end");
        assert_eq!(map.line_range(f, 1), Some(3..7));
        assert_eq!(map.line_range(f, 3), Some(8..12));
        assert_eq!(map.line_range(f, 4), None);
    }

    /// 200,000 lines, each asked for: a binary search each, not a count from the start.
    #[test]
    fn a_line_of_every_offset_of_a_large_file() {
        let mut map = SourceMap::new();
        let f = map.add("big.onnxs", "x = 1\n".repeat(200_000));
        let total: usize = (0..200_000u32).map(|i| map.line_number(f, i * 6)).sum();
        assert_eq!(total, (1..=200_000).sum::<usize>());
    }

    #[test]
    fn lines_end_at_lf_crlf_and_lone_cr() {
        let text = "a\nb\r\nc\rd";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        assert_eq!((0..4).map(|l| index.line_start(l).unwrap()).collect::<Vec<_>>(), [0, 2, 5, 7]);
        assert_eq!(index.line(7), 3);
        let mut sources = SourceMap::default();
        let file = sources.add("t.onnxs", text);
        assert_eq!(sources.line_col(file, 7), (4, 1));
        assert_eq!(sources.line_col(file, 3), (2, 2));
    }
}
