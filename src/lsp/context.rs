//! What the cursor is in, read from the compiler's own tokens ([`crate::syntax::lexer`]): the
//! text being edited is usually half typed and does not parse, but it lexes. Only the tokens
//! around the cursor are read, from the start of its top-level statement.

use crate::syntax::lexer::{lex, LexError, Tok};

/// A token, or text that is not one (kept: an unterminated string is where a name is typed).
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Option<Tok>,
    pub error: Option<LexError>,
    pub start: u32,
    pub end: u32,
}

/// The tokens of the top-level statement around `offset`, up to the end of `offset`'s line
/// (`prefix_only`: up to `offset`).
pub fn tokens_around(text: &str, offset: u32, prefix_only: bool) -> Vec<Token> {
    let offset = (offset as usize).min(text.len());
    let offset = (0..=offset).rev().find(|&o| text.is_char_boundary(o)).unwrap_or(0);
    let start = statement_start(text, offset);
    let end = if prefix_only { offset } else { text[offset..].find('\n').map(|i| offset + i).unwrap_or(text.len()) };
    lex(&text[start..end])
        .into_iter()
        .map(|r| match r {
            Ok(s) => {
                Token { tok: Some(s.tok), error: None, start: (start + s.start) as u32, end: (start + s.end) as u32 }
            }
            Err((e, a, b)) => Token { tok: None, error: Some(e), start: (start + a) as u32, end: (start + b) as u32 },
        })
        .collect()
}

/// The start of the last line at or before `offset` that begins a top-level statement: a name,
/// a keyword or a decorator at column 0.
pub fn statement_start(text: &str, offset: usize) -> usize {
    let mut line_start = text[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0);
    loop {
        let first = text[line_start..].chars().next();
        if first.is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '@') || line_start == 0 {
            return line_start;
        }
        line_start = text[..line_start - 1].rfind('\n').map(|i| i + 1).unwrap_or(0);
    }
}

fn name(t: &Token) -> Option<&str> {
    match &t.tok {
        Some(Tok::Name(n)) => Some(n),
        _ => None,
    }
}

fn is(t: &Token, tok: &Tok) -> bool {
    t.tok.as_ref() == Some(tok)
}

/// `a.b.c` ending just before index `end` of `toks` (exclusive): the names, and the index of the
/// first token.
fn dotted_before(toks: &[Token], end: usize) -> Option<(Vec<String>, usize)> {
    let mut i = end.checked_sub(1)?;
    let mut parts = vec![name(&toks[i])?.to_string()];
    while i >= 2 && is(&toks[i - 1], &Tok::Dot) {
        match name(&toks[i - 2]) {
            Some(n) => parts.push(n.to_string()),
            None => break,
        }
        i -= 2;
    }
    parts.reverse();
    Some((parts, i))
}

/// Where the cursor is, for completion and signature help.
#[derive(Clone, Debug, PartialEq)]
pub enum Cursor {
    /// In a string passed to `torch_op(...)`: `prefix` is its text up to the cursor, which
    /// starts at byte `start`.
    TorchOpName {
        prefix: String,
        start: u32,
    },
    /// `from MODULE import a, b|`.
    ImportFrom {
        module: String,
        prefix: String,
        start: u32,
    },
    /// `a.b|`: after a dot, with `prefix` typed (starting at `start`).
    Member {
        base: Vec<String>,
        prefix: String,
        start: u32,
    },
    /// Inside the arguments of a call.
    Call(CallSite),
    Other,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CallSite {
    /// The callee as written: `["op", "Gemm"]`, `["helpers", "f"]`, `["f"]`.
    pub callee: Vec<String>,
    /// The argument the cursor is in (0-based), counting positional and keyword ones.
    pub active: usize,
    /// The keywords given so far, the active argument's included.
    pub keywords: Vec<String>,
    /// The keyword of the argument the cursor is in.
    pub keyword: Option<String>,
    /// Whether the cursor is where an argument starts (perhaps a name is half typed: `prefix`),
    /// so a keyword can be offered.
    pub at_argument_start: bool,
    pub prefix: String,
    pub start: u32,
}

/// Reads the cursor's context from the text before it.
pub fn cursor(text: &str, offset: u32) -> Cursor {
    let toks = tokens_around(text, offset, true);
    // A half-typed name at the cursor.
    let (prefix, prefix_start, body) = match toks.last() {
        Some(t) if t.end == offset && name(t).is_some() => {
            (name(t).unwrap_or_default().to_string(), t.start, &toks[..toks.len() - 1])
        }
        _ => (String::new(), offset, &toks[..]),
    };
    if let Some(c) = torch_op_string(text, &toks, offset) {
        return c;
    }
    if let Some(c) = import_from(body, &prefix, prefix_start) {
        return c;
    }
    if body.last().is_some_and(|t| is(t, &Tok::Dot)) {
        if let Some((base, _)) = dotted_before(body, body.len() - 1) {
            return Cursor::Member { base, prefix, start: prefix_start };
        }
    }
    match call_site(body, &prefix, prefix_start) {
        Some(c) => Cursor::Call(c),
        None => Cursor::Other,
    }
}

/// Inside an unterminated string (the editor's closing quote is after the cursor) or a string
/// that ends at the line's end, passed to `torch_op(`.
fn torch_op_string(text: &str, toks: &[Token], offset: u32) -> Option<Cursor> {
    let (k, open) = toks.iter().enumerate().rev().find(|(_, t)| t.error == Some(LexError::UnterminatedString))?;
    // The string must be the last thing before the cursor, on its line.
    if text.get(open.start as usize..offset as usize)?.contains('\n') {
        return None;
    }
    let quote_len = text[open.start as usize..].find(['"', '\'']).map(|i| i + 1)?;
    let start = open.start + quote_len as u32;
    // Back over `(`, `,` and complete strings (a tuple of names) to the callee.
    let mut i = k;
    while i > 0 {
        match &toks[i - 1].tok {
            Some(Tok::LParen) | Some(Tok::Comma) | Some(Tok::Str(_)) => i -= 1,
            _ => break,
        }
    }
    if i == k {
        return None;
    }
    let (callee, _) = dotted_before(toks, i)?;
    if callee.last().map(String::as_str) != Some("torch_op") {
        return None;
    }
    Some(Cursor::TorchOpName { prefix: text.get(start as usize..offset as usize)?.to_string(), start })
}

fn import_from(body: &[Token], prefix: &str, start: u32) -> Option<Cursor> {
    let from = body.iter().rposition(|t| is(t, &Tok::From))?;
    let rest = &body[from + 1..];
    let import = rest.iter().position(|t| is(t, &Tok::Import))?;
    let module: Vec<&str> = rest[..import].iter().filter_map(name).collect();
    // After `import`: names, `as` aliases, commas and a parenthesis, nothing else.
    let ok = rest[import + 1..].iter().all(|t| {
        matches!(t.tok, Some(Tok::Name(_)) | Some(Tok::Comma) | Some(Tok::LParen) | Some(Tok::As) | Some(Tok::Newline))
    });
    let after_as = rest.last().is_some_and(|t| is(t, &Tok::As));
    (ok && !after_as).then(|| Cursor::ImportFrom { module: module.join("."), prefix: prefix.to_string(), start })
}

fn call_site(body: &[Token], prefix: &str, start: u32) -> Option<CallSite> {
    let mut depth = 0usize;
    let mut commas = 0;
    let mut keywords = Vec::new();
    let mut current: Option<usize> = None;
    let mut i = body.len();
    while i > 0 {
        i -= 1;
        let t = &body[i];
        match &t.tok {
            Some(Tok::RParen | Tok::RBracket | Tok::RBrace) => depth += 1,
            Some(Tok::LBracket | Tok::LBrace) if depth > 0 => depth -= 1,
            Some(Tok::LParen) if depth > 0 => depth -= 1,
            Some(Tok::LParen) => {
                let (callee, _) = dotted_before(body, i)?;
                let arg_start = current.unwrap_or(i + 1);
                let keyword = match (body.get(arg_start), body.get(arg_start + 1)) {
                    (Some(n), Some(eq)) if name(n).is_some() && is(eq, &Tok::Assign) => name(n).map(String::from),
                    _ => None,
                };
                // Keywords of the arguments (`name=` right after `(` or a comma at this depth).
                let mut inner = 0usize;
                // Between a `lambda` and its `:`, `name=` is a parameter's default.
                let mut in_lambda = false;
                for j in i + 1..body.len() {
                    match &body[j].tok {
                        Some(Tok::LParen | Tok::LBracket | Tok::LBrace) => inner += 1,
                        Some(Tok::RParen | Tok::RBracket | Tok::RBrace) => inner = inner.saturating_sub(1),
                        Some(Tok::Lambda) if inner == 0 => in_lambda = true,
                        Some(Tok::Colon) if inner == 0 => in_lambda = false,
                        _ => {}
                    }
                    let after_sep = j == i + 1 || is(&body[j - 1], &Tok::Comma);
                    if inner == 0
                        && !in_lambda
                        && after_sep
                        && name(&body[j]).is_some()
                        && body.get(j + 1).is_some_and(|t| is(t, &Tok::Assign))
                    {
                        keywords.push(name(&body[j]).unwrap_or_default().to_string());
                    }
                }
                let at_argument_start = arg_start >= body.len();
                return Some(CallSite {
                    callee,
                    active: commas,
                    keywords,
                    keyword,
                    at_argument_start,
                    prefix: prefix.to_string(),
                    start,
                });
            }
            Some(Tok::LBracket | Tok::LBrace) => return None,
            Some(Tok::Comma) if depth == 0 => {
                commas += 1;
                if current.is_none() {
                    current = Some(i + 1);
                }
            }
            Some(Tok::Newline) if depth == 0 => return None,
            // In a lambda's body, an argument: its parameters' commas separate no arguments.
            Some(Tok::Colon) if depth == 0 && lambda_before(body, i).is_some() => {
                i = lambda_before(body, i).unwrap_or(i);
            }
            Some(Tok::Colon | Tok::Def) if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The `lambda` whose parameters the `:` at index `colon` ends, if it ends a lambda's: only
/// names, `,`, `*`, `**`, `/`, `=` and literal defaults lie between them.
fn lambda_before(body: &[Token], colon: usize) -> Option<usize> {
    for k in (0..colon).rev() {
        match &body[k].tok {
            Some(Tok::Lambda) => return Some(k),
            Some(
                Tok::Name(_)
                | Tok::Comma
                | Tok::Star
                | Tok::DoubleStar
                | Tok::Slash
                | Tok::Assign
                | Tok::Minus
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::Str(_)
                | Tok::None
                | Tok::True
                | Tok::False,
            ) => {}
            _ => return None,
        }
    }
    None
}

/// The name token at `offset`, with the dotted names before it (`op.Softmax` at `Softmax`:
/// `["op", "Softmax"]`), and its span; or the string token there.
pub enum AtCursor {
    Name { path: Vec<String>, start: u32, end: u32 },
    Str { value: String, start: u32, end: u32, in_torch_op: bool },
}

pub fn at_cursor(text: &str, offset: u32) -> Option<AtCursor> {
    let toks = tokens_around(text, offset, false);
    let k = toks.iter().position(|t| t.start <= offset && offset <= t.end && (t.tok.is_some()))?;
    // At a boundary between two tokens, prefer the name.
    let k = match toks.get(k + 1) {
        Some(next) if next.start == offset && name(next).is_some() && name(&toks[k]).is_none() => k + 1,
        _ => k,
    };
    let t = &toks[k];
    match &t.tok {
        Some(Tok::Name(_)) => {
            let (path, _) = dotted_before(&toks, k + 1)?;
            Some(AtCursor::Name { path, start: t.start, end: t.end })
        }
        Some(Tok::Str(crate::syntax::lexer::StrLit::Plain(value))) => {
            let mut i = k;
            while i > 0 && matches!(toks[i - 1].tok, Some(Tok::LParen) | Some(Tok::Comma) | Some(Tok::Str(_))) {
                i -= 1;
            }
            let in_torch_op =
                i < k && dotted_before(&toks, i).is_some_and(|(c, _)| c.last().map(String::as_str) == Some("torch_op"));
            Some(AtCursor::Str { value: value.clone(), start: t.start, end: t.end, in_torch_op })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text_with_cursor: &str) -> Cursor {
        let offset = text_with_cursor.find('|').expect("a cursor") as u32;
        let text = text_with_cursor.replacen('|', "", 1);
        cursor(&text, offset)
    }

    #[test]
    fn after_a_dot() {
        assert_eq!(
            at("def f(x):\n    y = op.|"),
            Cursor::Member { base: vec!["op".into()], prefix: "".into(), start: 21 }
        );
        assert!(matches!(at("def f(x):\n    y = op.Sof|"), Cursor::Member { prefix, .. } if prefix == "Sof"));
    }

    #[test]
    fn in_a_call() {
        let Cursor::Call(c) = at("def f(x):\n    y = op.Gemm(a, b, alpha=1.0, |") else { panic!() };
        assert_eq!(c.callee, vec!["op", "Gemm"]);
        assert_eq!(c.active, 3);
        assert_eq!(c.keywords, vec!["alpha"]);
        assert!(c.at_argument_start);
        let Cursor::Call(c) = at("    y = op.Softmax(op.Relu(x), ax|") else { panic!() };
        assert_eq!((c.active, c.prefix.as_str()), (1, "ax"));
        let Cursor::Call(c) = at("    y = op.Softmax(x, axis=|") else { panic!() };
        assert_eq!((c.keyword.as_deref(), c.at_argument_start), (Some("axis"), false));
        let Cursor::Call(c) = at("    y = helpers.scale(op.Relu(x|") else { panic!() };
        assert_eq!(c.callee, vec!["op", "Relu"]);
        let Cursor::Call(c) = at("    y = helpers.scale(op.Relu(x)|") else { panic!() };
        assert_eq!(c.callee, vec!["helpers", "scale"]);
    }

    /// A lambda's body and a generator's clauses are inside the argument they are part of.
    #[test]
    fn in_a_lambda_or_a_generator_argument() {
        let Cursor::Call(c) = at("    y = sorted(xs, key=lambda i, j=1: i + |") else { panic!() };
        assert_eq!((c.callee.clone(), c.active, c.keyword.as_deref()), (vec!["sorted".to_string()], 1, Some("key")));
        assert_eq!(c.keywords, vec!["key"]);
        let Cursor::Call(c) = at("    ok = all(x > 0 for x in |") else { panic!() };
        assert_eq!((c.callee.clone(), c.active), (vec!["all".to_string()], 0));
        assert!(!matches!(at("def f(x: |"), Cursor::Call(_)));
    }

    #[test]
    fn in_a_torch_op_string() {
        assert_eq!(
            at("@torch_op(\"aten::ad|\")\ndef f(x):"),
            Cursor::TorchOpName { prefix: "aten::ad".into(), start: 11 }
        );
        assert!(
            matches!(at("@torch_op((\"aten::div.Tensor\", 'aten::di|"), Cursor::TorchOpName { prefix, .. } if prefix == "aten::di")
        );
        assert!(!matches!(at("@script(\"x|\")"), Cursor::TorchOpName { .. }));
    }

    #[test]
    fn in_an_import() {
        assert!(
            matches!(at("from onnxscript import FLOAT, op|"), Cursor::ImportFrom { module, prefix, .. } if module == "onnxscript" && prefix == "op")
        );
        assert!(matches!(at("from onnxscript import |"), Cursor::ImportFrom { prefix, .. } if prefix.is_empty()));
        assert!(!matches!(at("from onnxscript import opset18 as |"), Cursor::ImportFrom { .. }));
    }

    #[test]
    fn the_name_or_string_under_the_cursor() {
        let text = "@torch_op(\"aten::add.Tensor\")\ndef f(x):\n    return op.Softmax(x)\n";
        let off = text.find("Softmax").unwrap() as u32 + 2;
        assert!(matches!(at_cursor(text, off), Some(AtCursor::Name { path, .. }) if path == vec!["op", "Softmax"]));
        let off = text.find("aten").unwrap() as u32;
        assert!(
            matches!(at_cursor(text, off), Some(AtCursor::Str { value, in_torch_op: true, .. }) if value == "aten::add.Tensor")
        );
    }
}
