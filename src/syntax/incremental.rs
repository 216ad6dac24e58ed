//! Reparsing after an edit: only the top-level statements the edit touched.
//!
//! A top-level statement starts at column 0 with a clean lexer state (no open bracket, string or
//! indentation), so the text of a run of whole top-level statements parses on its own to the
//! same statements. After an edit, the statements before and after the changed region keep their
//! syntax trees (those after it moved by the edit's length); only the region is parsed again.
//! When the region does not parse on its own, [`reparse`] gives up and the caller parses the
//! whole text, so every syntax error is the one a full parse reports.

use super::ast::*;
use super::parse;
use crate::source::{FileId, Span};

/// The module for `new_text`, given that `old` is the module of `old_text`; `None` when only a
/// full parse can tell.
pub fn reparse(file: FileId, old_text: &str, old: &Module, new_text: &str) -> Option<Module> {
    let (o, n) = (old_text.as_bytes(), new_text.as_bytes());
    let prefix = o.iter().zip(n).take_while(|(a, b)| a == b).count();
    let room = o.len().min(n.len()) - prefix;
    let suffix = o.iter().rev().zip(n.iter().rev()).take(room).take_while(|(a, b)| a == b).count();
    let (changed_start, changed_end) = (prefix, o.len() - suffix);
    let delta = n.len() as i64 - o.len() as i64;

    // Chunks: each top-level statement from the start of its line to the next one's.
    let line_start = |at: usize| old_text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let starts: Vec<usize> = old.body.iter().map(|s| line_start(s.span.start as usize)).collect();
    let chunk_end = |k: usize| starts[k + 1..].iter().copied().find(|&s| s > starts[k]).unwrap_or(o.len());
    let touched = |k: usize| {
        let start = if k == 0 { 0 } else { starts[k] };
        start <= changed_end && changed_start <= chunk_end(k)
    };
    let first = (0..old.body.len()).find(|&k| touched(k))?;
    let last = (0..old.body.len()).rev().find(|&k| touched(k))?;
    let region_start = if first == 0 { 0 } else { starts[first] };
    // The region runs to the next untouched statement, which must keep its line start.
    let region_end_old = chunk_end(last);
    let region_end_new = usize::try_from(region_end_old as i64 + delta).ok()?;
    let region = new_text.get(region_start..region_end_new)?;
    let clean_end = region_end_new == n.len() || (region.ends_with('\n') && !region.ends_with("\\\n"));
    if !clean_end || (region_start > 0 && n.get(region_start - 1) != Some(&b'\n')) {
        return None;
    }
    let parsed = parse(file, region);
    if !parsed.diagnostics.is_empty() {
        return None;
    }
    let mut body: Vec<Stmt> = old.body[..first].to_vec();
    for mut s in parsed.module?.body {
        Shift(region_start as i64).visit_stmt(&mut s);
        body.push(s);
    }
    for s in &old.body[last + 1..] {
        let mut s = s.clone();
        Shift(delta).visit_stmt(&mut s);
        body.push(s);
    }
    Some(Module { body })
}

/// Moves every span of a statement by `by` bytes.
struct Shift(i64);

impl VisitMut for Shift {
    fn visit_span(&mut self, s: &mut Span) {
        s.start = (s.start as i64 + self.0) as u32;
        s.end = (s.end as i64 + self.0) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTS: [&str; 2] =
        [include_str!("../../examples/tutorial.onnxs"), include_str!("../../examples/language_tour.onnxs")];

    /// Reparsing after an edit gives exactly the module a full parse gives, or nothing.
    fn agrees(old_text: &str, new_text: &str) -> bool {
        let Some(old) = parse(0, old_text).module else { return false };
        let full = parse(0, new_text).module;
        match reparse(0, old_text, &old, new_text) {
            Some(m) => {
                assert_eq!(Some(&m), full.as_ref(), "reparse differs after editing to:\n{new_text}");
                true
            }
            None => false,
        }
    }

    /// Every construct of the syntax tree, so that moving spans reaches each kind of node.
    const EVERY_CONSTRUCT: &str = r#"import a.b as c, d
from ..m import n as o, p
from . import q

X: INT64 = {1: 2}
Y = Z = {1, w}, [*w]
F = f"{X!r:>{W}} and {Y}"

@script(op, default_opset=op)
def f(x: FLOAT["N", 3], *args, k: int = -1, **kw) -> FLOAT:
    """doc"""
    t = x[1:2, ::3, ...]
    u = a if b < c <= d else e
    t += op.Add(x, y, axis=k, *s, **kw)
    v = [a for a, (b, c) in zip(x, y) if a if b for d in [a]], {k: v for k in x}, {k for k in x}
    w = all(k for k in x), (k for k in x), lambda a, *b, c=1, **d: a + c
    assert t, "message"
    if not t:
        raise ValueError(t) from w
    elif t:
        raise
    for i, j in range(3):
        if not i and j or i is None:
            break
        elif i:
            continue
        else:
            pass
    else:
        print(i)
    while t:
        @graph()
        def g(y: FLOAT) -> FLOAT:
            return y.T
    return t, -u
"#;

    #[test]
    fn moving_a_statement_moves_every_span_in_it() {
        let pad = "# a line above\n";
        let (Some(plain), Some(padded)) =
            (parse(0, EVERY_CONSTRUCT).module, parse(0, &format!("{pad}{EVERY_CONSTRUCT}")).module)
        else {
            panic!("the text parses")
        };
        let mut moved = plain.body.clone();
        moved.iter_mut().for_each(|s| Shift(pad.len() as i64).visit_stmt(s));
        assert_ne!(moved, plain.body);
        assert_eq!(moved, padded.body);
    }

    #[test]
    fn edits_anywhere_reparse_as_a_full_parse_does() {
        let mut reparsed = 0;
        for (t, text) in TEXTS.iter().enumerate() {
            // Delete each character, and insert one after each, in turn (in the smaller text).
            for (i, c) in text.char_indices().filter(|_| t == 0) {
                let mut deleted = text.to_string();
                deleted.remove(i);
                reparsed += usize::from(agrees(text, &deleted));
                let mut inserted = text.to_string();
                inserted.insert(i + c.len_utf8(), if c == '\n' { ' ' } else { 'x' });
                reparsed += usize::from(agrees(text, &inserted));
            }
            // Whole lines removed, and duplicated.
            let lines: Vec<&str> = text.split_inclusive('\n').collect();
            for k in 0..lines.len() {
                let mut without = lines.clone();
                without.remove(k);
                reparsed += usize::from(agrees(text, &without.concat()));
                let mut twice = lines.clone();
                twice.insert(k, lines[k]);
                reparsed += usize::from(agrees(text, &twice.concat()));
            }
        }
        assert!(reparsed > 500, "only {reparsed} edits were reparsed incrementally");
    }
}
