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

/// Where parsing stopped: the token found there, what could have come instead, and the logical
/// line up to it. Each explanation below reads one case from it.
struct Stop<'t> {
    file: FileId,
    tokens: &'t [Triple],
    /// Where the unexpected token (or the end of the file) starts.
    start: usize,
    span: Span,
    /// `None` at the end of the file.
    tok: Option<Tok>,
    /// The tokens lalrpop could have taken, as it spells them (`"name"`, `":"`).
    expected: Vec<String>,
    /// The index in `tokens` of the first token at or after `start`.
    at: usize,
    line: &'t [Triple],
    /// How messages name the token found.
    found: String,
}

impl<'t> Stop<'t> {
    fn new(file: FileId, tokens: &'t [Triple], err: ParseError<usize, Tok, ()>) -> Self {
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
        let found = match &tok {
            Some(t) => t.describe(),
            None => "end of file".to_string(),
        };
        Stop { file, tokens, start, span, tok, expected, at, line, found }
    }

    fn expects(&self, t: &str) -> bool {
        self.expected.iter().any(|e| e.trim_matches('"') == t)
    }

    /// The keyword that opens the line (`def`, `if`, `for`, ...), if one does.
    fn head(&self) -> Option<&Tok> {
        self.line.iter().map(|(_, t, _)| t).find(|t| opens_block(t))
    }

    /// An error for Python syntax that the language does not have (`what` names it, as in
    /// "lambda expressions are"), at the token found.
    fn unsupported(&self, what: &str, label: impl Into<String>, help: &str) -> Diagnostic {
        Diagnostic::error(codes::UNSUPPORTED_SYNTAX, self.file, format!("{what} not part of the ONNX Script language"))
            .primary(self.span, label)
            .help(help)
    }

    /// A syntax error at the token found.
    fn syntax(&self, msg: String, label: &str) -> Diagnostic {
        Diagnostic::error(codes::SYNTAX_ERROR, self.file, msg).primary(self.span, label.to_string())
    }
}

/// One sentence for a syntax error: the first explanation that fits, from the most specific to
/// the most general, else what was expected and what was found.
pub(super) fn explain(file: FileId, tokens: &[Triple], err: ParseError<usize, Tok, ()>) -> Diagnostic {
    let stop = Stop::new(file, tokens, err);
    let explanations: [fn(&Stop) -> Option<Diagnostic>; 16] = [
        foreign_keyword,
        unmatched_close,
        misplaced_comprehension,
        raise_without_exception,
        lambda_parameters,
        assignment_expression,
        unexpected_indent,
        missing_block,
        assignment_in_condition,
        missing_colon,
        missing_open_paren,
        missing_function_name,
        missing_expression_at_line_end,
        missing_separator,
        unclosed_bracket,
        missing_expression,
    ];
    explanations.iter().find_map(|explanation| explanation(&stop)).unwrap_or_else(|| unexpected(&stop))
}

/// A Python keyword that the language does not have (`class`, `try`, `yield`, ...): names the
/// construct.
fn foreign_keyword(stop: &Stop) -> Option<Diagnostic> {
    let Some(Tok::ForeignKeyword(Word(k))) = &stop.tok else { return None };
    let what = match *k {
        "class" => "class definitions are",
        "with" => "`with` statements are",
        "try" | "except" | "finally" => "`try` statements are",
        "global" | "nonlocal" => "`global` and `nonlocal` declarations are",
        "yield" => "generators (`yield`) are",
        _ => "`async` and `await` are",
    };
    Some(stop.unsupported(
        what,
        format!("`{k}` is not supported"),
        "ONNX Script functions are straight-line code with `if`, `for` and `while` over ONNX ops",
    ))
}

/// A `for` inside brackets where a comprehension cannot start: after several items, a starred
/// item, or an argument of a call with others.
fn misplaced_comprehension(stop: &Stop) -> Option<Diagnostic> {
    if !matches!(stop.tok, Some(Tok::For)) {
        return None;
    }
    let open = open_bracket(stop.line)?;
    let at = stop.line.iter().position(|t| std::ptr::eq(t, open))?;
    let inside = &stop.line[at + 1..];
    let mut depth = 0usize;
    let (mut commas, mut starred, mut keyword) = (0, false, false);
    for (i, (_, t, _)) in inside.iter().enumerate() {
        match t {
            Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
            Tok::RParen | Tok::RBracket | Tok::RBrace => depth = depth.saturating_sub(1),
            Tok::Comma if depth == 0 => commas += 1,
            Tok::Assign if depth == 0 => keyword = true,
            Tok::Star | Tok::DoubleStar if depth == 0 && (i == 0 || matches!(inside[i - 1].1, Tok::Comma)) => {
                starred = true;
            }
            _ => {}
        }
    }
    let call = matches!(open.1, Tok::LParen)
        && at > 0
        && matches!(stop.line[at - 1].1, Tok::Name(_) | Tok::RParen | Tok::RBracket);
    let (l, r) = match open.1 {
        Tok::LBracket => ("[", "]"),
        Tok::LBrace => ("{", "}"),
        _ => ("(", ")"),
    };
    let (msg, help) = if starred {
        (
            "a comprehension's element cannot be unpacked with `*`",
            "build the items with a loop, or concatenate the lists".into(),
        )
    } else if call && keyword && commas == 0 {
        ("a generator expression passed by keyword needs parentheses of its own", "write `f(k=(x for x in xs))`".into())
    } else if call && commas > 0 {
        (
            "a generator expression must be the only argument of a call, or in parentheses",
            "put it in parentheses of its own: `f(a, (x for x in xs))`".into(),
        )
    } else if commas > 0 {
        (
            "a comprehension has one element before `for`",
            format!("put a tuple element in parentheses: `{l}(a, b) for ...{r}`"),
        )
    } else {
        return None;
    };
    Some(stop.syntax(msg.into(), "unexpected `for`").help(help))
}

/// `raise from cause`: the exception is missing.
fn raise_without_exception(stop: &Stop) -> Option<Diagnostic> {
    let after_raise = matches!(stop.line.last(), Some((_, Tok::Raise, _)));
    (after_raise && matches!(stop.tok, Some(Tok::From))).then(|| {
        stop.syntax("expected the exception to raise before `from`".into(), "expected an expression")
            .help("write `raise Error(...) from cause`, or `raise` alone to raise again")
    })
}

/// A token that cannot come among the parameters of a `lambda` (before its `:`).
fn lambda_parameters(stop: &Stop) -> Option<Diagnostic> {
    let lambda = stop.line.iter().rposition(|(_, t, _)| matches!(t, Tok::Lambda))?;
    if stop.line[lambda..].iter().any(|(_, t, _)| matches!(t, Tok::Colon)) {
        return None;
    }
    let at_line_end = matches!(stop.tok, Some(Tok::Newline) | None);
    let end = stop.line.last().map(|(_, _, e)| Span::new(*e, *e)).unwrap_or(stop.span);
    let at = if at_line_end { end } else { stop.span };
    // Right after `lambda` or a `,`, a parameter (or the `:`) comes next.
    let param_next = matches!(stop.line.last(), Some((_, Tok::Lambda | Tok::Comma, _)));
    let msg = if param_next && !at_line_end {
        format!("expected a parameter name or `:`, found {}", stop.found)
    } else if stop.expects(":") {
        format!("expected `:` after the parameters of `lambda`, found {}", stop.found)
    } else {
        format!("expected a parameter name, found {}", stop.found)
    };
    Some(
        Diagnostic::error(codes::SYNTAX_ERROR, stop.file, msg)
            .primary(at, "in the parameters of this `lambda`")
            .secondary(Span::new(stop.line[lambda].0, stop.line[lambda].2), "the `lambda`")
            .help("a lambda reads `lambda a, b=1: expression`; its parameters take no annotations"),
    )
}

/// A closing bracket when no bracket is open on the line.
fn unmatched_close(stop: &Stop) -> Option<Diagnostic> {
    let open = match stop.tok {
        Some(Tok::RParen) => "(",
        Some(Tok::RBracket) => "[",
        Some(Tok::RBrace) => "{",
        _ => return None,
    };
    open_bracket(stop.line).is_none().then(|| {
        stop.syntax(format!("unmatched {}", stop.found), &format!("no `{open}` is open here"))
            .help(format!("remove it, or add the `{open}` it closes"))
    })
}

/// `:=`, an assignment expression.
fn assignment_expression(stop: &Stop) -> Option<Diagnostic> {
    matches!(stop.tok, Some(Tok::Walrus)).then(|| {
        stop.unsupported(
            "assignment expressions (`:=`) are",
            "`:=` is not supported",
            "assign the value in a statement of its own",
        )
    })
}

/// A line indented more than its block, not after a `:`.
fn unexpected_indent(stop: &Stop) -> Option<Diagnostic> {
    matches!(stop.tok, Some(Tok::Indent)).then(|| {
        stop.syntax("unexpected indentation".into(), "this line is indented more than the block it is in")
            .help("indent a line only after a line that ends with `:`")
    })
}

/// A line ending in `:` not followed by an indented block: names the statement it belongs to.
fn missing_block(stop: &Stop) -> Option<Diagnostic> {
    if !stop.expects("INDENT") {
        return None;
    }
    // The block belongs to the previous logical line (the one ending in `:`).
    let before_newline = stop.tokens[..stop.at].iter().rposition(|(_, t, _)| matches!(t, Tok::Newline)).unwrap_or(0);
    let header = if stop.line.is_empty() { line_before(stop.tokens, before_newline) } else { stop.line };
    let head = header
        .iter()
        .find(|(_, t, _)| opens_block(t))
        .map(|(_, t, _)| format!("`{}`", t.text()))
        .unwrap_or_else(|| "`:`".to_string());
    let span = Span::new(stop.start, stop.start);
    Some(
        Diagnostic::error(codes::SYNTAX_ERROR, stop.file, format!("expected an indented block after {head}"))
            .primary(span, "the block should start on this line, indented")
            .help("indent the body of the block, or write `pass` for an empty one"),
    )
}

/// `=` in the condition of an `if`, `elif` or `while`, where `==` was meant.
fn assignment_in_condition(stop: &Stop) -> Option<Diagnostic> {
    let in_condition = stop.line.iter().any(|(_, t, _)| matches!(t, Tok::If | Tok::Elif | Tok::While));
    (matches!(stop.tok, Some(Tok::Assign)) && in_condition).then(|| {
        stop.syntax("`=` is assignment; compare with `==`".into(), "assignment in a condition")
            .help("write `==` to compare")
    })
}

/// The `:` that ends a `def`, `if`, `else`, `for` or `while` header is missing.
fn missing_colon(stop: &Stop) -> Option<Diagnostic> {
    if !stop.expects(":") || stop.expects(")") {
        return None;
    }
    let after = match stop.head() {
        Some(Tok::Def) => "after the function signature",
        Some(Tok::If) | Some(Tok::Elif) => "after the `if` condition",
        Some(Tok::Else) => "after `else`",
        Some(Tok::For) => "after the `for` header",
        Some(Tok::While) => "after the `while` condition",
        _ => "",
    };
    // Where many tokens could come, `:` is only one of them: name it at a line end or among a few.
    let fits = !after.is_empty() && (matches!(stop.tok, Some(Tok::Newline)) || stop.expected.len() <= 12);
    if !fits {
        return None;
    }
    let at = stop.line.last().map(|(_, _, e)| Span::new(*e, *e)).unwrap_or(stop.span);
    Some(
        Diagnostic::error(codes::SYNTAX_ERROR, stop.file, format!("expected `:` {after}"))
            .primary(at, "add `:` here")
            .note(format!("found {}", stop.found)),
    )
}

/// `def name` not followed by `(`.
fn missing_open_paren(stop: &Stop) -> Option<Diagnostic> {
    (matches!(stop.head(), Some(Tok::Def)) && stop.expects("(") && stop.line.len() == 2).then(|| {
        stop.syntax(format!("expected `(` after the function name, found {}", stop.found), "expected `(`")
            .help("a function definition reads `def name(params):`")
    })
}

/// `def` not followed by a name.
fn missing_function_name(stop: &Stop) -> Option<Diagnostic> {
    (matches!(stop.head(), Some(Tok::Def)) && stop.line.len() == 1)
        .then(|| stop.syntax(format!("expected a function name after `def`, found {}", stop.found), "expected a name"))
}

/// A line (or the file) that ends where an expression should follow, as after `x = `.
fn missing_expression_at_line_end(stop: &Stop) -> Option<Diagnostic> {
    if !(matches!(stop.tok, Some(Tok::Newline) | None) && expects_expression(&stop.expected)) {
        return None;
    }
    let span = stop.line.last().map(|(_, _, e)| Span::new(*e, *e)).unwrap_or(stop.span);
    let after = stop.line.last().map(|(_, t, _)| t.describe()).unwrap_or_else(|| "this".into());
    Some(
        Diagnostic::error(codes::SYNTAX_ERROR, stop.file, format!("expected an expression after {after}"))
            .primary(span, "expected an expression here"),
    )
}

/// Two operands in a row (`a b`, `f(x y)`): an operator, or a `,` between arguments, is missing.
fn missing_separator(stop: &Stop) -> Option<Diagnostic> {
    let operand_found = matches!(
        stop.tok,
        Some(Tok::Name(_)) | Some(Tok::Int(_)) | Some(Tok::Float(_)) | Some(Tok::Str(_)) | Some(Tok::FString(_))
    );
    let after_operand = !stop.line.is_empty()
        && matches!(
            stop.line.last(),
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
        );
    if !(operand_found && after_operand) {
        return None;
    }
    let inside_call = open_bracket(stop.line).is_some();
    let msg = format!("unexpected {}", stop.found);
    let d = stop.syntax(msg, "expected an operator or `,` before this");
    Some(if inside_call {
        d.help("separate arguments with `,`")
    } else {
        d.help("is an operator or a line break missing?")
    })
}

/// A bracket left open where only its closing bracket (or a `,`) could come.
fn unclosed_bracket(stop: &Stop) -> Option<Diagnostic> {
    let open = open_bracket(stop.line)?;
    let close = match open.1 {
        Tok::LParen => ")",
        Tok::LBracket => "]",
        _ => "}",
    };
    (stop.expects(close) && stop.expected.len() <= 3).then(|| {
        stop.syntax(format!("expected `{close}` or `,`, found {}", stop.found), "unexpected here")
            .secondary(Span::new(open.0, open.2), "to close this")
    })
}

/// Something other than an expression where one must come, within a line.
fn missing_expression(stop: &Stop) -> Option<Diagnostic> {
    (expects_expression(&stop.expected) && !matches!(stop.tok, Some(Tok::Newline)))
        .then(|| stop.syntax(format!("expected an expression, found {}", stop.found), "expected an expression"))
}

/// Any other error: what could have come, when that is a short list, and what was found.
fn unexpected(stop: &Stop) -> Diagnostic {
    let found = &stop.found;
    let short: Vec<String> = stop.expected.iter().map(|e| pretty_expected(e)).collect();
    let msg = if !short.is_empty() && short.len() <= 3 {
        format!("expected {}, found {found}", short.join(" or "))
    } else {
        format!("unexpected {found}")
    };
    stop.syntax(msg, "unexpected here")
}

/// Whether `t` is a keyword that opens a statement with a block (`def`, `if`, `for`, ...).
fn opens_block(t: &Tok) -> bool {
    matches!(t, Tok::Def | Tok::If | Tok::Elif | Tok::Else | Tok::For | Tok::While)
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
