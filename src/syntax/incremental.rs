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
        s.shift(region_start as i64);
        body.push(s);
    }
    for s in &old.body[last + 1..] {
        let mut s = s.clone();
        s.shift(delta);
        body.push(s);
    }
    Some(Module { body })
}

fn shift_span(s: &mut Span, by: i64) {
    s.start = (s.start as i64 + by) as u32;
    s.end = (s.end as i64 + by) as u32;
}

impl Ident {
    fn shift(&mut self, by: i64) {
        let Ident { name: _, span } = self;
        shift_span(span, by);
    }
}

impl DottedName {
    fn shift(&mut self, by: i64) {
        let DottedName { parts, span } = self;
        parts.iter_mut().for_each(|p| p.shift(by));
        shift_span(span, by);
    }
}

impl ImportAlias {
    fn shift(&mut self, by: i64) {
        let ImportAlias { name, alias, span } = self;
        name.shift(by);
        alias.iter_mut().for_each(|a| a.shift(by));
        shift_span(span, by);
    }
}

impl Param {
    fn shift(&mut self, by: i64) {
        let Param { name, kind: _, annotation, default, span } = self;
        name.shift(by);
        annotation.iter_mut().chain(default.iter_mut()).for_each(|e| e.shift(by));
        shift_span(span, by);
    }
}

impl Arg {
    fn shift(&mut self, by: i64) {
        let Arg { keyword, value, kind: _, span } = self;
        keyword.iter_mut().for_each(|k| k.shift(by));
        value.shift(by);
        shift_span(span, by);
    }
}

fn shift_block(stmts: &mut [Stmt], by: i64) {
    stmts.iter_mut().for_each(|s| s.shift(by));
}

impl Stmt {
    /// Moves every span of the statement by `by` bytes.
    pub fn shift(&mut self, by: i64) {
        let Stmt { kind, span } = self;
        shift_span(span, by);
        match kind {
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => e.shift(by),
            StmtKind::Assign { targets, value } => {
                targets.iter_mut().for_each(|t| t.shift(by));
                value.shift(by);
            }
            StmtKind::AnnAssign { target, annotation, value } => {
                target.shift(by);
                annotation.shift(by);
                value.iter_mut().for_each(|v| v.shift(by));
            }
            StmtKind::AugAssign { target, op: _, value } => {
                target.shift(by);
                value.shift(by);
            }
            StmtKind::If { test, body, orelse } | StmtKind::While { test, body, orelse } => {
                test.shift(by);
                shift_block(body, by);
                shift_block(orelse, by);
            }
            StmtKind::For { target, iter, body, orelse } => {
                target.shift(by);
                iter.shift(by);
                shift_block(body, by);
                shift_block(orelse, by);
            }
            StmtKind::FunctionDef(FunctionDef { name, decorators, params, returns, body, header_span }) => {
                name.shift(by);
                decorators.iter_mut().for_each(|d| d.shift(by));
                params.iter_mut().for_each(|p| p.shift(by));
                returns.iter_mut().for_each(|r| r.shift(by));
                shift_block(body, by);
                shift_span(header_span, by);
            }
            StmtKind::Import(aliases) => aliases.iter_mut().for_each(|a| a.shift(by)),
            StmtKind::ImportFrom { level: _, module, names, star: _ } => {
                module.shift(by);
                names.iter_mut().for_each(|a| a.shift(by));
            }
            StmtKind::Return(None) | StmtKind::Pass | StmtKind::Break | StmtKind::Continue => {}
        }
    }
}

/// Shifts the replacement fields of an f-string, format specifications included.
fn shift_fstring(parts: &mut [FStringPart], by: i64) {
    for part in parts {
        if let FStringPart::Field { value, spec, .. } = part {
            value.shift(by);
            if let Some(spec) = spec {
                shift_fstring(spec, by);
            }
        }
    }
}

impl Expr {
    fn shift(&mut self, by: i64) {
        let Expr { kind, span } = self;
        shift_span(span, by);
        match kind {
            ExprKind::Attribute { value, attr } => {
                value.shift(by);
                attr.shift(by);
            }
            ExprKind::Call { func, args } => {
                func.shift(by);
                args.iter_mut().for_each(|a| a.shift(by));
            }
            ExprKind::BinOp { op: _, left, right } => {
                left.shift(by);
                right.shift(by);
            }
            ExprKind::UnaryOp { op: _, operand } | ExprKind::Starred(operand) => operand.shift(by),
            ExprKind::BoolOp { op: _, values: items }
            | ExprKind::Tuple(items)
            | ExprKind::List(items)
            | ExprKind::Set(items) => items.iter_mut().for_each(|i| i.shift(by)),
            ExprKind::Compare { left, comparisons } => {
                left.shift(by);
                comparisons.iter_mut().for_each(|(_, c)| c.shift(by));
            }
            ExprKind::Subscript { value, index } => {
                value.shift(by);
                index.shift(by);
            }
            ExprKind::Slice { lower, upper, step } => {
                [lower, upper, step].into_iter().flatten().for_each(|e| e.shift(by));
            }
            ExprKind::Dict(pairs) => pairs.iter_mut().for_each(|(k, v)| {
                k.shift(by);
                v.shift(by);
            }),
            ExprKind::IfExp { test, body, orelse } => {
                test.shift(by);
                body.shift(by);
                orelse.shift(by);
            }
            ExprKind::FString(parts) => shift_fstring(parts, by),
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Ellipsis => {}
        }
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
