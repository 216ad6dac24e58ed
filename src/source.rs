//! Source files and byte spans.
//!
//! Every AST node carries a [`Span`]; a [`SourceMap`] owns the text of every file so that
//! diagnostics can be rendered with line and column numbers long after parsing.

use codespan_reporting::files::SimpleFiles;
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

/// The text of every file that takes part in one compilation.
#[derive(Default)]
pub struct SourceMap {
    files: SimpleFiles<String, String>,
    count: usize,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file. A lone `\r` is a line end to Python, but not to the diagnostic renderer (and a
    /// terminal would print it as a return to the line's start), so it is stored as `\n`: one byte
    /// for one, so offsets are unchanged, and Python reads both the same way (inside strings too).
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.count += 1;
        let mut text = text.into();
        if text.contains('\r') {
            let bytes: Vec<u8> = text.bytes().collect();
            let lone = |i: usize| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n');
            if (0..bytes.len()).any(lone) {
                let fixed = (0..bytes.len()).map(|i| if lone(i) { b'\n' } else { bytes[i] }).collect();
                text = String::from_utf8(fixed).expect("replacing an ASCII byte keeps UTF-8");
            }
        }
        self.files.add(name.into(), text)
    }

    pub fn text(&self, file: FileId) -> &str {
        self.files.get(file).map(|f| f.source().as_str()).unwrap_or("")
    }

    pub fn name(&self, file: FileId) -> &str {
        self.files.get(file).map(|f| f.name().as_str()).unwrap_or("<unknown>")
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The files in the form codespan-reporting renders from.
    pub fn files(&self) -> &SimpleFiles<String, String> {
        &self.files
    }

    /// 1-based line and column of a byte offset (columns count characters).
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let text = self.text(file);
        let offset = (offset as usize).min(text.len());
        let before = &text[..floor_char_boundary(text, offset)];
        let breaks = || line_breaks(text).take_while(|&i| i < before.len());
        let line = breaks().count() + 1;
        let line_start = breaks().last().map(|i| i + 1).unwrap_or(0);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
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
        let starts = std::iter::once(0).chain(line_breaks(text).map(|i| i as u32 + 1)).collect();
        LineIndex { starts, len: text.len() as u32 }
    }

    /// The 0-based line that holds byte `offset` (offsets past the end are on the last line).
    pub fn line(&self, offset: u32) -> usize {
        self.starts.partition_point(|&s| s <= offset.min(self.len)) - 1
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

/// The byte offset of each line's last character: every `\n`, and every `\r` not followed by
/// `\n` (a lone `\r` ends a line, as in Python and in the lexer).
fn line_breaks(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    bytes
        .iter()
        .enumerate()
        .filter_map(move |(i, &b)| (b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))).then_some(i))
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
