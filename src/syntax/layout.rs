//! The layout layer: Python's indentation rules on top of the raw token stream.
//!
//! It turns line structure into NEWLINE, INDENT and DEDENT tokens, as Python's tokenizer does:
//! - newlines inside brackets are ignored, so expressions may span lines;
//! - blank lines and comment-only lines produce nothing;
//! - an indentation must be a prefix-extension of the enclosing one, so a dedent to a column
//!   that was never opened, or a tab/space mix that only lines up at some tab width, is an error.
//!
//! It also parses the replacement fields of f-strings (`parser::fstring`), so that the grammar
//! sees an f-string as one token with its expressions.

use super::lexer::{LexError, Spanned, StrLit, Tok};
use crate::diagnostics::{codes, Diagnostic};
use crate::source::{FileId, Span};

/// CPython's limit on nested blocks ("too many levels of indentation").
const MAX_INDENT_LEVELS: usize = 100;

/// Lexical errors reported in one file before the rest is left unread: past a hundred, the file
/// is likely not source text at all, and each further one would only repeat the news.
pub const MAX_LEXICAL_ERRORS: usize = 100;

/// A token in the form lalrpop's external-lexer interface takes.
pub type Triple = (usize, Tok, usize);

/// The laid-out tokens of a file, and the lexical errors met on the way.
pub struct Layout {
    pub tokens: Vec<Triple>,
    pub diagnostics: Vec<Diagnostic>,
}

pub fn layout(file: FileId, text: &str) -> Layout {
    // Real code has one token per two and a half to four bytes. Reserving one per two bytes
    // spares a large file the copies of a growing vector (and the memory each copy touches
    // afresh); what is reserved but never written costs address space, not memory.
    let mut out = Vec::with_capacity(text.len() / 2 + 16);
    let mut diags = Vec::new();
    // Indentation strings of the open blocks; the outermost is "".
    let mut indents: Vec<&str> = vec![""];
    // Open brackets, for ignoring newlines and for "never closed" errors.
    let mut brackets: Vec<(Tok, usize, usize)> = Vec::new();
    let mut at_line_start = true;

    // The run of invalid characters being reported: its start, end and number of characters.
    // Its diagnostic (the last one) is given the whole run when the run ends.
    let mut run: Option<(usize, usize, usize)> = None;
    let end_run = |run: &mut Option<(usize, usize, usize)>, diags: &mut Vec<Diagnostic>| {
        if let (Some((first, end, count)), Some(last)) = (run.take(), diags.last_mut()) {
            if count > 1 {
                *last = invalid_characters(file, text, first, end, count);
            }
        }
    };
    // The tokens as the lexer finds them: never all of them in memory at once.
    let tokens = super::lexer::tokens(text).map(|(res, span)| match res {
        Ok(tok) => Ok(Spanned { tok, start: span.start, end: span.end }),
        Err(e) => Err((e, span.start, span.end)),
    });
    for item in tokens {
        let Spanned { tok, start, end } = match item {
            Ok(s) => s,
            Err((LexError::InvalidCharacter, start, end)) if run.is_some_and(|(_, e, _)| e == start) => {
                // A run of invalid characters is one mistake, reported once.
                run = run.map(|(first, _, count)| (first, end, count + 1));
                continue;
            }
            Err((err, start, end)) => {
                end_run(&mut run, &mut diags);
                if diags.len() == MAX_LEXICAL_ERRORS {
                    if let Some(last) = diags.last_mut() {
                        last.notes.push(format!(
                            "onnxsc stops after {MAX_LEXICAL_ERRORS} lexical errors in a file; fix these first"
                        ));
                    }
                    return Layout { tokens: out, diagnostics: diags };
                }
                run = (err == LexError::InvalidCharacter).then_some((start, end, 1));
                diags.push(lex_error(file, text, err, start, end));
                // Keep going as if the bad text were a name, so parsing can report more.
                at_line_start = false;
                continue;
            }
        };
        end_run(&mut run, &mut diags);
        // An f-string's fields are expressions: parse them now.
        let tok = match tok {
            Tok::Str(StrLit::Format(pieces)) => match super::parser::fstring(file, text, &pieces) {
                Ok(parts) => Tok::FString(parts),
                Err(d) => {
                    diags.push(*d);
                    Tok::Str(StrLit::Plain(String::new()))
                }
            },
            other => other,
        };
        match tok {
            Tok::Newline => {
                if brackets.is_empty() && !at_line_start {
                    out.push((start, Tok::Newline, end));
                    at_line_start = true;
                }
                continue;
            }
            _ if at_line_start => {
                let line_start = text[..start].rfind(['\n', '\r']).map(|i| i + 1).unwrap_or(0);
                let indent = &text[line_start..start];
                let top = *indents.last().unwrap_or(&"");
                if indent == top {
                    // Same block.
                } else if indent.starts_with(top) {
                    if !consistent(indent) {
                        diags.push(mixed_indent(file, line_start, start));
                    }
                    if indents.len() > MAX_INDENT_LEVELS {
                        diags.push(
                            Diagnostic::error(codes::SYNTAX_ERROR, file, "too many levels of indentation")
                                .primary(
                                    Span::new(line_start, start),
                                    format!("more than {MAX_INDENT_LEVELS} nested blocks"),
                                )
                                .help("Python allows at most 100 levels; split the function"),
                        );
                        return Layout { tokens: out, diagnostics: diags };
                    }
                    indents.push(indent);
                    out.push((line_start, Tok::Indent, start));
                } else if let Some(pos) = indents.iter().position(|i| *i == indent) {
                    while indents.len() > pos + 1 {
                        indents.pop();
                        out.push((start, Tok::Dedent, start));
                    }
                } else {
                    diags.push(bad_dedent(file, text, line_start, start, &indents));
                    // Recover: treat the line as belonging to the nearest enclosing block.
                    while indents.len() > 1 && !indent.starts_with(indents[indents.len() - 1]) {
                        indents.pop();
                        out.push((start, Tok::Dedent, start));
                    }
                }
                at_line_start = false;
            }
            _ => {}
        }
        match tok {
            Tok::LParen | Tok::LBracket | Tok::LBrace => brackets.push((tok.clone(), start, end)),
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                brackets.pop();
            }
            _ => {}
        }
        out.push((start, tok, end));
    }

    end_run(&mut run, &mut diags);
    let eof = text.len();
    if let Some((open, start, end)) = brackets.first() {
        let close = match open {
            Tok::LParen => ")",
            Tok::LBracket => "]",
            _ => "}",
        };
        diags.push(
            Diagnostic::error(codes::UNCLOSED_BRACKET, file, format!("this `{}` is never closed", open.text()))
                .primary(Span::new(*start, *end), "opened here")
                .help(format!("add the missing `{close}`")),
        );
    }
    if !at_line_start {
        out.push((eof, Tok::Newline, eof));
    }
    while indents.len() > 1 {
        indents.pop();
        out.push((eof, Tok::Dedent, eof));
    }
    Layout { tokens: out, diagnostics: diags }
}

/// An indentation made of one kind of whitespace only.
fn consistent(indent: &str) -> bool {
    !(indent.contains(' ') && indent.contains('\t'))
}

fn mixed_indent(file: FileId, start: usize, end: usize) -> Diagnostic {
    Diagnostic::error(codes::MIXED_INDENT, file, "indentation mixes tabs and spaces")
        .primary(Span::new(start, end), "tabs and spaces in one indentation")
        .help("indent with spaces only (4 per level is the Python convention)")
}

fn bad_dedent(file: FileId, text: &str, start: usize, end: usize, indents: &[&str]) -> Diagnostic {
    let indent = &text[start..end];
    let width = |s: &str| s.chars().count();
    let mut levels: Vec<String> = indents.iter().map(|i| width(i).to_string()).collect();
    levels.dedup();
    let mixed = indents.iter().any(|i| i.contains('\t')) != indent.contains('\t') || !consistent(indent);
    if mixed {
        return mixed_indent(file, start, end);
    }
    Diagnostic::error(codes::INCONSISTENT_DEDENT, file, "unindent does not match any outer indentation level")
        .primary(Span::new(start, end), format!("indented by {} here", width(indent)))
        .help(format!("the enclosing blocks are indented by {}", levels.join(", ")))
}

/// A run of `count` invalid characters (E0001), reported as one.
fn invalid_characters(file: FileId, text: &str, start: usize, end: usize, count: usize) -> Diagnostic {
    let mut d = lex_error(file, text, LexError::InvalidCharacter, start, end);
    let first = text[start..].chars().next().unwrap_or('?');
    let same = text[start..end].chars().all(|c| c == first);
    d.message = if same {
        format!("{count} unexpected characters `{}`", first.escape_default())
    } else {
        format!("{count} unexpected characters, the first `{}`", first.escape_default())
    };
    if let Some(label) = d.labels.first_mut() {
        label.message = "not part of any token".into();
    }
    d
}

fn lex_error(file: FileId, text: &str, err: LexError, start: usize, end: usize) -> Diagnostic {
    let span = Span::new(start, end);
    match err {
        LexError::InvalidCharacter => {
            let ch = text[start..].chars().next().unwrap_or('?');
            let d = Diagnostic::error(
                codes::INVALID_CHARACTER,
                file,
                format!("unexpected character `{}`", ch.escape_default()),
            )
            .primary(span, "not part of any token");
            match ch {
                '$' | '?' | '`' => d.help("this character has no meaning in Python"),
                '\'' | '"' => d,
                c if !c.is_ascii() => {
                    d.help("names and operators must be ASCII; check for a pasted look-alike character")
                }
                _ => d,
            }
        }
        LexError::UnterminatedString => {
            Diagnostic::error(codes::UNTERMINATED_STRING, file, "unterminated string literal")
                .primary(span, "this string is never closed")
                .help("add the closing quote on the same line, or use a triple-quoted string")
        }
        LexError::InvalidEscape => {
            Diagnostic::error(codes::UNTERMINATED_STRING, file, "invalid escape sequence in string")
                .primary(span, "bad `\\x`, `\\u` or `\\U` escape")
        }
        LexError::FString => Diagnostic::error(codes::SYNTAX_ERROR, file, "invalid f-string")
            .primary(span, "a replacement field is empty, unclosed, or has a backslash, `#`, a lone `}` or a bad `!` conversion")
            .help("write fields as `{expression}`, `{expression!r}` or `{expression:spec}`; double a brace to print it: `{{`"),
        LexError::BytesLiteral => Diagnostic::error(
            codes::UNSUPPORTED_SYNTAX,
            file,
            "bytes literals are not part of the ONNX Script language",
        )
        .primary(span, "bytes literal")
        .help("use a plain string literal"),
        LexError::IntegerTooLarge => {
            Diagnostic::error(codes::INVALID_NUMBER, file, "integer literal does not fit in 128 bits")
                .primary(span, "too large for onnxsc's constant integers")
                .help("onnxsc evaluates Python ints exactly up to 128 bits; ONNX integers have at most 64")
        }
        LexError::InvalidNumber => Diagnostic::error(codes::INVALID_NUMBER, file, "invalid number literal")
            .primary(span, "not a valid number")
            .help("leading zeros are not allowed in decimal integers; write `0o17` for octal"),
        LexError::ComplexLiteral => Diagnostic::error(
            codes::UNSUPPORTED_SYNTAX,
            file,
            "complex literals are not part of the ONNX Script language",
        )
        .primary(span, "complex literal"),
    }
}
