//! Parsing: a file's laid-out tokens to its syntax tree, through the generated parser
//! (`syntax::grammar`); a large file in pieces on the compiler's threads. Syntax errors are
//! explained by `syntax::syntax_error`.

use super::ast::Module;
use super::depth::{self, Nesting};
use super::grammar::generated;
use super::layout::{layout, Laying};
use super::lexer::{Tok, Triple};
use super::syntax_error::explain;
use crate::diagnostics::Diagnostic;
use crate::source::FileId;
use lalrpop_util::ParseError;

/// The result of parsing one file: an AST when the syntax was valid, how deeply it nests
/// (measured on the thread that parsed it, each half of a large file on its own), and the
/// diagnostics.
pub struct ParsedFile {
    pub module: Option<Module>,
    pub nesting: Nesting,
    pub diagnostics: Vec<Diagnostic>,
}

/// Whether a text of `len` bytes is parsed in pieces, on several threads.
pub fn parses_in_pieces(len: usize) -> bool {
    crate::parallel::pieces(len, MIN_BYTES_PER_PIECE) > 1
}

pub fn parse(file: FileId, text: &str) -> ParsedFile {
    let pieces = crate::parallel::pieces(text.len(), MIN_BYTES_PER_PIECE);
    let cuts = if pieces > 1 { split_points(text, pieces) } else { Vec::new() };
    match (!cuts.is_empty()).then(|| parse_pieces(file, text, &cuts)).flatten() {
        Some((module, nesting)) => ParsedFile { module: Some(module), nesting, diagnostics: Vec::new() },
        None => parse_whole(file, text),
    }
}

/// [`parse`] in one piece, on this thread.
fn parse_whole(file: FileId, text: &str) -> ParsedFile {
    // One parse, taking the tokens as they are laid out: the names move from the tokens into
    // the AST, and no file's tokens are ever all in memory.
    let mut laying = Laying::new(file, text, 0);
    let result = parse_tokens(&mut laying);
    // A syntax error stops the parser; the rest of the file may still have lexical errors.
    laying.by_ref().for_each(drop);
    let mut diagnostics = laying.into_diagnostics();
    if !diagnostics.is_empty() {
        // Lexical and indentation errors make the token stream unreliable: report them alone.
        return ParsedFile { module: None, nesting: Nesting::default(), diagnostics };
    }
    match result {
        Ok(module) => ParsedFile { nesting: depth::nesting(&module), module: Some(module), diagnostics },
        Err(err) => {
            // Only a syntax error needs the tokens again, to say what was expected.
            let tokens = layout(file, text).tokens;
            diagnostics.push(explain(file, &tokens, err));
            ParsedFile { module: None, nesting: Nesting::default(), diagnostics }
        }
    }
}

fn parse_tokens(tokens: impl IntoIterator<Item = Triple>) -> Result<Module, ParseError<usize, Tok, ()>> {
    generated::ModuleParser::new().parse(tokens.into_iter().map(Ok::<Triple, ()>))
}

/// Below this many bytes a piece (a file of about 64 KB makes two), a file is parsed on one
/// thread: sharing it costs more than it saves.
const MIN_BYTES_PER_PIECE: usize = 1 << 15;

/// Where a large file can be cut into `pieces` for [`parse_pieces`], in order: for each of the
/// points that divide it evenly, the first line at or past it (and past the previous cut) that
/// starts with `@` in its first column and follows a blank line or a comment, the way a
/// decorated top-level function starts. Such a line is a top-level statement's start unless it
/// is inside a string or brackets, or the line before ends in a backslash; the blank or comment
/// line rules the last out, and in the others the piece before ends inside a string or with a
/// bracket open, an error that sends the file to one parse. Fewer cuts when the file has too
/// few such lines; none when it has none past its middle or `pieces` is 1.
fn split_points(text: &str, pieces: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts: Vec<usize> = Vec::new();
    for i in 1..pieces {
        let from = (text.len() / pieces * i).max(cuts.last().map_or(0, |c| c + 1));
        match cut_at_or_after(bytes, from) {
            Some(at) => cuts.push(at),
            None => break,
        }
    }
    cuts
}

/// The first cut ([`split_points`]) at or past byte `from`.
fn cut_at_or_after(bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(found) = bytes.get(from..)?.windows(2).position(|w| w == b"\n@") {
        let at = from + found + 1;
        let line_end = if bytes[..at - 1].ends_with(b"\r") { at - 2 } else { at - 1 };
        let line_start = bytes[..line_end].iter().rposition(|b| matches!(b, b'\n' | b'\r')).map_or(0, |i| i + 1);
        let before = &bytes[line_start..line_end];
        if before.iter().all(u8::is_ascii_whitespace) || before.first() == Some(&b'#') {
            return Some(at);
        }
        from = at;
    }
    None
}

/// The module of `text` parsed in pieces, cut at the bytes `cuts` ([`split_points`]), on the
/// compiler's threads, each laying out its own piece; `None` when a piece has an error of any
/// kind (the file then goes through one parse, which reports it as always) or no thread can be
/// had.
fn parse_pieces(file: FileId, text: &str, cuts: &[usize]) -> Option<(Module, Nesting)> {
    let bounds: Vec<usize> = std::iter::once(0).chain(cuts.iter().copied()).chain([text.len()]).collect();
    let piece = |i: usize| {
        let mut laying = Laying::new(file, &text[..bounds[i + 1]], bounds[i]);
        let module = parse_tokens(&mut laying).ok()?;
        // The parser took the stream to its end, so its errors are all known.
        (!laying.has_errors()).then(|| {
            let nesting = depth::nesting(&module);
            (module, nesting)
        })
    };
    // On the compiler's stack: a syntax error drops the half-built trees, recursively.
    let parsed = crate::parallel::each_piece(bounds.len() - 1, piece)?;
    let mut parsed = parsed.into_iter();
    let (mut module, mut nesting) = parsed.next()??;
    for next in parsed {
        let (rest, more) = next?;
        module.body.extend(rest.body);
        nesting = nesting.then(more);
    }
    Some((module, nesting))
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::codes;

    /// Top-level functions with decorators over several lines, nested decorated functions, a
    /// module-level `if`/`else`, comments and a string holding a decorator-like line: only the
    /// first decorator of a top-level function may start the second half.
    fn library(functions: usize) -> String {
        let mut text =
            String::from("from onnxscript import FLOAT, script, graph\nfrom onnxscript import opset18 as op\n\n");
        text.push_str("if True:\n    X = 1\nelse:\n    X = 2\n\n");
        for i in 0..functions {
            text.push_str(&format!(
                "# function {i}\n@script(\n    default_opset=op,\n)\n@torch_op(\"aten::f{i}\")\ndef f{i}(x: FLOAT) -> FLOAT:\n    \"\"\"Doc\n@script()\n\"\"\"\n    @graph()\n    def body(y):\n        return op.Neg(y)\n    return op.Add(x, [1, 2][0])\n\n"
            ));
        }
        text
    }

    /// The module as one parse of all the tokens sees it.
    fn whole(text: &str) -> Module {
        parse_tokens(layout(0, text).tokens).expect("the library parses")
    }

    #[test]
    fn pieces_parse_to_the_whole_module() {
        for functions in [2, 3, 7, 20] {
            let text = library(functions);
            for pieces in [2, 3, 5] {
                let cuts = split_points(&text, pieces);
                assert!(!cuts.is_empty() && cuts.len() < pieces, "{functions} functions, {pieces} pieces: {cuts:?}");
                assert!(cuts.windows(2).all(|w| w[0] < w[1]), "{cuts:?}");
                for &at in &cuts {
                    assert_eq!(&text[at..at + 8], "@script(", "{functions}: not at a function's first decorator");
                }
                let (module, nesting) = parse_pieces(0, &text, &cuts).expect("each piece parses");
                assert_eq!(module, whole(&text), "{functions} functions, {pieces} pieces");
                assert_eq!(nesting, depth::nesting(&module), "{functions} functions, {pieces} pieces");
            }
        }
    }

    #[test]
    fn no_cut_inside_a_function_or_between_its_decorators() {
        let text = library(9);
        let cuts = split_points(&text, 4);
        assert_eq!(cuts.len(), 3, "{cuts:?}");
        // Not the `@script()` line inside the docstring, nor the second decorator.
        let first_decorators: Vec<usize> = text.match_indices("\n@script(\n").map(|(i, _)| i + 1).collect();
        for (i, at) in cuts.iter().enumerate() {
            assert!(*at >= text.len() / 4 * (i + 1), "cut {i} at byte {at} is before its quarter");
            assert!(first_decorators.contains(at), "cut at byte {at} is not a function's first decorator");
        }
        assert!(split_points(&text, 1).is_empty(), "one piece has no cut");
    }

    #[test]
    fn a_syntax_error_in_a_piece_sends_the_file_to_one_parse() {
        let mut text = library(6);
        let bad = text.rfind("return op.Add").unwrap();
        text.insert_str(bad, "return )\n    ");
        let cuts = split_points(&text, 2);
        assert!(cuts[0] < bad, "the error is in the second piece");
        assert_eq!(parse_pieces(0, &text, &cuts), None);
    }

    /// A cut that is not a statement boundary leaves the piece before inside a string or with a
    /// bracket open: an error, so the file is parsed in one piece, to the same module.
    #[test]
    fn a_cut_inside_a_string_or_brackets_is_refused() {
        for (open, close) in [("\"\"\"", "\"\"\""), ("[", "]")] {
            let mut text = library(4);
            text.push_str(&format!("X = {open}\n\n@script()\n{close}\n"));
            let at = text.rfind("\n@script()").unwrap() + 1;
            assert_eq!(parse_pieces(0, &text, &[at]), None, "{open}");
            // ParsedFile in one piece, as if never cut.
            assert_eq!(parse(0, &text).module, parse_tokens(layout(0, &text).tokens).ok(), "{open}");
        }
    }

    /// Files large enough to be cut, clean and with errors on either side of the middle: what
    /// `parse` gives (in pieces where it can) is what one parse gives.
    #[test]
    fn large_files_parse_as_one_parse_would() {
        let clean = library(400);
        assert!(clean.len() > 2 * MIN_BYTES_PER_PIECE);
        let middle = clean[clean.len() / 2..].find("\n# function").unwrap() + clean.len() / 2 + 1;
        let quarter = clean[clean.len() / 4..].find("\n# function").unwrap() + clean.len() / 4 + 1;
        let with = |at: usize, insert: &str| format!("{}{insert}{}", &clean[..at], &clean[at..]);
        // Nested more than the compiler walks: `nesting` must find the same node in pieces.
        let too_deep = format!("Y = x{}\n", " + x".repeat(depth::MAX_DEPTH));
        let cases = [
            ("deep in the first half", with(quarter, &format!("Y = {}x\n", "-".repeat(500)))),
            ("too deep in the first half", with(quarter, &too_deep)),
            ("too deep in both halves", format!("{}{too_deep}", with(quarter, &too_deep))),
            ("clean", clean.clone()),
            ("string open across the middle", with(middle, "X = '''\n\n")),
            ("bracket open across the middle", with(middle, "X = [\n\n")),
            ("syntax error in the first half", with(quarter, "def )\n")),
            ("syntax error in the second half", with(clean.len(), "def )\n")),
            ("lexical error in the first half", with(quarter, "X = $\n")),
        ];
        for (what, text) in cases {
            let (split, whole) = (parse(0, &text), parse_whole(0, &text));
            // Comparing trees too deep for a walk would overflow this thread's stack.
            if !what.contains("too deep") {
                assert_eq!(split.module, whole.module, "{what}");
            }
            let reports =
                |p: &ParsedFile| p.diagnostics.iter().map(|d| (d.code, d.message.clone())).collect::<Vec<_>>();
            let (split_reports, whole_reports) = (reports(&split), reports(&whole));
            let parsed = whole.module.is_some();
            // Taken apart before any assertion: unwinding would drop them recursively.
            for m in [split.module, whole.module].into_iter().flatten() {
                depth::dismantle(m);
            }
            assert_eq!(split.nesting, whole.nesting, "{what}");
            assert_eq!(split_reports, whole_reports, "{what}");
            assert_eq!(parsed, what == "clean" || what.contains("deep"), "{what}");
            assert_eq!(whole.nesting.too_deep.is_some(), what.contains("too deep"), "{what}");
        }
    }

    #[test]
    fn the_stream_reports_lexical_errors_alone_even_after_a_syntax_error() {
        // The syntax error comes first; the lexical error after it is what the file reports.
        let parsed = parse(0, "def f:\n    return 1\nx = $\n");
        assert!(parsed.module.is_none());
        let codes: Vec<&str> = parsed.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [codes::INVALID_CHARACTER]);
    }
}
