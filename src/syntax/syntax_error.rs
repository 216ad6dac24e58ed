//! Syntax errors a person can act on.
//!
//! lalrpop reports an unexpected token with the full set of tokens it could have taken; that set
//! is for the machine. [`explain`] turns it into one sentence that names what was expected in the
//! construct being written ("expected `:` after the function signature").

use super::lexer::{Tok, Triple, Word};
use crate::diagnostics::{codes, Diagnostic};
use crate::source::{FileId, Span};
use lalrpop_util::ParseError;

/// The tokens of the logical line that contains token index `at`, up to it.
fn line_before(tokens: &[Triple], at: usize) -> &[Triple] {
    let start = tokens[..at]
        .iter()
        .rposition(|(_, t, _)| matches!(t, Tok::Newline | Tok::Indent | Tok::Dedent))
        .map(|i| i + 1)
        .unwrap_or(0);
    &tokens[start..at]
}

pub(super) fn explain(file: FileId, tokens: &[Triple], err: ParseError<usize, Tok, ()>) -> Diagnostic {
    let (start, tok, end, expected) = match err {
        ParseError::UnrecognizedToken { token: (s, t, e), expected } => (s, Some(t), e, expected),
        ParseError::UnrecognizedEof { location, expected } => (location, None, location, expected),
        ParseError::ExtraToken { token: (s, t, e) } => (s, Some(t), e, vec![]),
        ParseError::InvalidToken { location } => (location, None, location, vec![]),
        ParseError::User { .. } => (0, None, 0, vec![]),
    };
    let span = Span::new(start, end.max(start));
    let at = tokens.iter().position(|(s, _, _)| *s >= start).unwrap_or(tokens.len());
    let line = line_before(tokens, at);
    let expects = |t: &str| expected.iter().any(|e| e.trim_matches('"') == t);
    let found = match &tok {
        Some(t) => t.describe(),
        None => "end of file".to_string(),
    };
    let syntax =
        |msg: String, label: &str| Diagnostic::error(codes::SYNTAX_ERROR, file, msg).primary(span, label.to_string());

    // Python keywords that the language does not have: name the construct.
    if let Some(Tok::ForeignKeyword(Word(k))) = &tok {
        let what = match *k {
            "lambda" => "lambda expressions are",
            "class" => "class definitions are",
            "with" => "`with` statements are",
            "try" | "except" | "finally" => "`try` statements are",
            "raise" => "`raise` statements are",
            "assert" => "`assert` statements are",
            "del" => "`del` statements are",
            "global" | "nonlocal" => "`global` and `nonlocal` declarations are",
            "yield" => "generators (`yield`) are",
            _ => "`async` and `await` are",
        };
        return Diagnostic::error(
            codes::UNSUPPORTED_SYNTAX,
            file,
            format!("{what} not part of the ONNX Script language"),
        )
        .primary(span, format!("`{k}` is not supported"))
        .help("ONNX Script functions are straight-line code with `if`, `for` and `while` over ONNX ops");
    }
    if matches!(tok, Some(Tok::For))
        && line.iter().any(|(_, t, _)| matches!(t, Tok::LBracket | Tok::LParen | Tok::LBrace))
    {
        return Diagnostic::error(
            codes::UNSUPPORTED_SYNTAX,
            file,
            "comprehensions are not part of the ONNX Script language",
        )
        .primary(span, "comprehension `for`")
        .help("write the computation with ONNX ops, or as a `for` loop");
    }
    if matches!(tok, Some(Tok::Walrus)) {
        return Diagnostic::error(
            codes::UNSUPPORTED_SYNTAX,
            file,
            "assignment expressions (`:=`) are not part of the ONNX Script language",
        )
        .primary(span, "`:=` is not supported")
        .help("assign the value in a statement of its own");
    }
    if matches!(tok, Some(Tok::Indent)) {
        return syntax("unexpected indentation".into(), "this line is indented more than the block it is in")
            .help("indent a line only after a line that ends with `:`");
    }
    if expects("INDENT") {
        // The block belongs to the previous logical line (the one ending in `:`).
        let before_newline = tokens[..at].iter().rposition(|(_, t, _)| matches!(t, Tok::Newline)).unwrap_or(0);
        let header = if line.is_empty() { line_before(tokens, before_newline) } else { line };
        let head = header
            .iter()
            .find(|(_, t, _)| matches!(t, Tok::Def | Tok::If | Tok::Elif | Tok::Else | Tok::For | Tok::While))
            .map(|(_, t, _)| format!("`{}`", t.text()))
            .unwrap_or_else(|| "`:`".to_string());
        let span = Span::new(start, start);
        return Diagnostic::error(codes::SYNTAX_ERROR, file, format!("expected an indented block after {head}"))
            .primary(span, "the block should start on this line, indented")
            .help("indent the body of the block, or write `pass` for an empty one");
    }
    if matches!(tok, Some(Tok::Assign)) && line.iter().any(|(_, t, _)| matches!(t, Tok::If | Tok::Elif | Tok::While)) {
        return syntax("`=` is assignment; compare with `==`".into(), "assignment in a condition")
            .help("write `==` to compare");
    }

    let head = line
        .iter()
        .map(|(_, t, _)| t)
        .find(|t| matches!(t, Tok::Def | Tok::If | Tok::Elif | Tok::Else | Tok::For | Tok::While));
    if expects(":") && !expects(")") {
        let after = match head {
            Some(Tok::Def) => "after the function signature",
            Some(Tok::If) | Some(Tok::Elif) => "after the `if` condition",
            Some(Tok::Else) => "after `else`",
            Some(Tok::For) => "after the `for` header",
            Some(Tok::While) => "after the `while` condition",
            _ => "",
        };
        if !after.is_empty() && (matches!(tok, Some(Tok::Newline)) || expected.len() <= 12) {
            let at = line.last().map(|(_, _, e)| Span::new(*e, *e)).unwrap_or(span);
            return Diagnostic::error(codes::SYNTAX_ERROR, file, format!("expected `:` {after}"))
                .primary(at, "add `:` here")
                .note(format!("found {found}"));
        }
    }
    if matches!(head, Some(Tok::Def)) && expects("(") && line.len() == 2 {
        return syntax(format!("expected `(` after the function name, found {found}"), "expected `(`")
            .help("a function definition reads `def name(params):`");
    }
    if matches!(head, Some(Tok::Def)) && line.len() == 1 {
        return syntax(format!("expected a function name after `def`, found {found}"), "expected a name");
    }
    if matches!(tok, Some(Tok::Newline) | None) && expects_expression(&expected) {
        let span = line.last().map(|(_, _, e)| Span::new(*e, *e)).unwrap_or(span);
        let after = line.last().map(|(_, t, _)| t.describe()).unwrap_or_else(|| "this".into());
        return Diagnostic::error(codes::SYNTAX_ERROR, file, format!("expected an expression after {after}"))
            .primary(span, "expected an expression here");
    }
    if matches!(
        tok,
        Some(Tok::Name(_)) | Some(Tok::Int(_)) | Some(Tok::Float(_)) | Some(Tok::Str(_)) | Some(Tok::FString(_))
    ) && !line.is_empty()
        && matches!(
            line.last(),
            Some((
                _,
                Tok::Name(_)
                    | Tok::Int(_)
                    | Tok::Float(_)
                    | Tok::Str(_)
                    | Tok::FString(_)
                    | Tok::RParen
                    | Tok::RBracket,
                _
            ))
        )
    {
        let inside_call = open_bracket(line).is_some();
        let msg = format!("unexpected {found}");
        let d = syntax(msg, "expected an operator or `,` before this");
        return if inside_call {
            d.help("separate arguments with `,`")
        } else {
            d.help("is an operator or a line break missing?")
        };
    }
    if let Some(open) = open_bracket(line) {
        let close = match open.1 {
            Tok::LParen => ")",
            Tok::LBracket => "]",
            _ => "}",
        };
        if expects(close) && expected.len() <= 3 {
            return syntax(format!("expected `{close}` or `,`, found {found}"), "unexpected here")
                .secondary(Span::new(open.0, open.2), "to close this");
        }
    }
    if expects_expression(&expected) && !matches!(tok, Some(Tok::Newline)) {
        return syntax(format!("expected an expression, found {found}"), "expected an expression");
    }
    let short: Vec<String> = expected.iter().map(|e| pretty_expected(e)).collect();
    let msg = if !short.is_empty() && short.len() <= 3 {
        format!("expected {}, found {found}", short.join(" or "))
    } else {
        format!("unexpected {found}")
    };
    syntax(msg, "unexpected here")
}

/// The innermost bracket still open at the end of `line`.
fn open_bracket(line: &[Triple]) -> Option<&Triple> {
    let mut stack = Vec::new();
    for t in line {
        match t.1 {
            Tok::LParen | Tok::LBracket | Tok::LBrace => stack.push(t),
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.pop()
}

fn expects_expression(expected: &[String]) -> bool {
    expected.iter().any(|e| e == "\"name\"") && expected.iter().any(|e| e == "\"int\"")
}

fn pretty_expected(e: &str) -> String {
    match e.trim_matches('"') {
        "NEWLINE" => "end of line".into(),
        "INDENT" => "an indented block".into(),
        "DEDENT" => "end of block".into(),
        "name" => "a name".into(),
        "int" | "float" => "a number".into(),
        "string" => "a string".into(),
        other => format!("`{other}`"),
    }
}
