//! f-strings: the replacement fields of an f-string literal, parsed as expressions. The layout
//! layer calls this, so that the grammar sees an f-string as one token with its expressions.

use super::ast::{Expr, FStringPart};
use super::grammar::generated;
use super::lexer::{lex, FPiece, StrLit, Tok, Triple};
use super::syntax_error::explain;
use crate::diagnostics::{codes, Diagnostic};
use crate::source::{FileId, Span};

/// The pieces of an f-string with their replacement fields parsed (`text` is the whole file:
/// the pieces carry byte offsets into it).
pub(crate) fn fstring(file: FileId, text: &str, pieces: &[FPiece]) -> Result<Vec<FStringPart>, Box<Diagnostic>> {
    let mut out = Vec::new();
    for piece in pieces {
        match piece {
            FPiece::Literal(s) => out.push(FStringPart::Literal(s.clone())),
            FPiece::Field { start, end, debug, conversion, spec } => {
                if let Some(d) = debug {
                    out.push(FStringPart::Literal(d.clone()));
                }
                let value = field_expression(file, text, *start, *end)?;
                let spec = spec.as_ref().map(|s| fstring(file, text, s)).transpose()?;
                out.push(FStringPart::Field { value: Box::new(value), conversion: *conversion, spec });
            }
        }
    }
    Ok(out)
}

/// Parses the expression of a replacement field, `text[start..end]`, with spans in the file.
fn field_expression(file: FileId, text: &str, start: usize, end: usize) -> Result<Expr, Box<Diagnostic>> {
    let mut tokens: Vec<Triple> = Vec::new();
    for item in lex(&text[start..end]) {
        match item {
            Ok(t) if t.tok == Tok::Newline => {}
            Ok(t) => {
                let tok = match t.tok {
                    Tok::Str(StrLit::Format(pieces)) => {
                        Tok::FString(fstring(file, text, &shift_pieces(&pieces, start))?)
                    }
                    other => other,
                };
                tokens.push((t.start + start, tok, t.end + start));
            }
            Err(_) => {
                return Err(Box::new(
                    Diagnostic::error(codes::SYNTAX_ERROR, file, "invalid expression in an f-string")
                        .primary(Span::new(start, end), "not a valid expression"),
                ))
            }
        }
    }
    let stream = tokens.iter().cloned().map(Ok::<Triple, ()>);
    generated::FieldParser::new().parse(stream).map_err(|err| Box::new(explain(file, &tokens, err)))
}

/// Moves the byte offsets of f-string pieces lexed from a slice starting at `by`.
fn shift_pieces(pieces: &[FPiece], by: usize) -> Vec<FPiece> {
    pieces
        .iter()
        .map(|p| match p {
            FPiece::Literal(s) => FPiece::Literal(s.clone()),
            FPiece::Field { start, end, debug, conversion, spec } => FPiece::Field {
                start: start + by,
                end: end + by,
                debug: debug.clone(),
                conversion: *conversion,
                spec: spec.as_ref().map(|s| shift_pieces(s, by)),
            },
        })
        .collect()
}
