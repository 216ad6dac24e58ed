//! Positions: LSP counts lines from 0 and columns in UTF-16 code units; the compiler counts
//! bytes. A [`LineMap`] converts between the two for one text.

use crate::source::{LineIndex, Span};
use lsp_types::{Position, Range};

pub struct LineMap<'t> {
    text: &'t str,
    lines: LineIndex,
}

impl<'t> LineMap<'t> {
    pub fn new(text: &'t str) -> LineMap<'t> {
        LineMap { text, lines: LineIndex::new(text) }
    }

    /// The LSP position of byte `offset` (clamped to the text, and back to a character
    /// boundary).
    pub fn position(&self, offset: u32) -> Position {
        let mut offset = (offset as usize).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.lines.line(offset as u32);
        let start = self.lines.line_start(line).unwrap_or(0) as usize;
        let character = self.text[start..offset].encode_utf16().count();
        Position { line: line as u32, character: character as u32 }
    }

    pub fn range(&self, span: Span) -> Range {
        Range { start: self.position(span.start), end: self.position(span.end) }
    }

    /// The byte offset of an LSP position. A line past the end is the end of the text; a
    /// character past the end of its line is the line's end (before its newline), as the
    /// protocol asks; a position inside a surrogate pair is the character's start.
    pub fn offset(&self, p: Position) -> u32 {
        let line = p.line as usize;
        let (Some(start), Some(end)) = (self.lines.line_start(line), self.lines.line_end(line)) else {
            return self.text.len() as u32;
        };
        let line_text = &self.text[start as usize..end as usize];
        let line_text = line_text.strip_suffix('\r').unwrap_or(line_text);
        let mut units = 0u32;
        for (i, c) in line_text.char_indices() {
            let next = units + c.len_utf16() as u32;
            if next > p.character {
                return start + i as u32;
            }
            units = next;
        }
        start + line_text.len() as u32
    }

    pub fn span(&self, r: Range) -> Span {
        let (a, b) = (self.offset(r.start), self.offset(r.end));
        Span { start: a.min(b), end: a.max(b) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn ascii_offsets_and_positions_agree() {
        let text = "ab\ncd\n";
        let m = LineMap::new(text);
        assert_eq!(m.position(0), pos(0, 0));
        assert_eq!(m.position(2), pos(0, 2));
        assert_eq!(m.position(3), pos(1, 0));
        assert_eq!(m.position(6), pos(2, 0));
        for offset in 0..=text.len() as u32 {
            assert_eq!(m.offset(m.position(offset)), offset);
        }
    }

    #[test]
    fn columns_count_utf16_code_units() {
        // `é` is 2 bytes and 1 unit; `€` 3 bytes, 1 unit; `𝔽` (U+1D53D) 4 bytes, 2 units.
        let text = "x = \"é€𝔽\" # ünïcode\ny = op.Relu(x)\n";
        let m = LineMap::new(text);
        let close = text.find("\" #").unwrap() as u32;
        assert_eq!(m.position(close), pos(0, 5 + 1 + 1 + 2));
        assert_eq!(m.offset(pos(0, 9)), close);
        let relu = text.find("Relu").unwrap() as u32;
        assert_eq!(m.position(relu), pos(1, 7));
        assert_eq!(m.offset(pos(1, 7)), relu);
        // Every character boundary round-trips.
        for (offset, _) in text.char_indices() {
            assert_eq!(m.offset(m.position(offset as u32)), offset as u32, "at byte {offset}");
        }
    }

    #[test]
    fn positions_inside_a_character_or_past_a_line_are_clamped() {
        let text = "𝔽x\nab";
        let m = LineMap::new(text);
        // Between the two UTF-16 units of `𝔽`: the character's start.
        assert_eq!(m.offset(pos(0, 1)), 0);
        assert_eq!(m.offset(pos(0, 2)), 4);
        // Past the end of line 0: its end, before the newline.
        assert_eq!(m.offset(pos(0, 99)), 5);
        // Past the last line: the end of the text.
        assert_eq!(m.offset(pos(7, 0)), text.len() as u32);
        // A byte inside `𝔽` maps to its start.
        assert_eq!(m.position(2), pos(0, 0));
    }

    #[test]
    fn windows_line_ends_do_not_count_as_columns() {
        let text = "ab\r\nçd\r\n";
        let m = LineMap::new(text);
        assert_eq!(m.offset(pos(0, 9)), 2);
        assert_eq!(m.position(text.find('d').unwrap() as u32), pos(1, 1));
    }
}
