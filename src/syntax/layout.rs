//! The layout layer: Python's indentation rules on top of the raw token stream.
//!
//! It turns line structure into NEWLINE, INDENT and DEDENT tokens, as Python's tokenizer does:
//! - newlines inside brackets are ignored, so expressions may span lines;
//! - blank lines and comment-only lines produce nothing;
//! - an indentation must be a prefix-extension of the enclosing one, so a dedent to a column
//!   that was never opened, or a tab/space mix that only lines up at some tab width, is an error.
//!
//! It also parses the replacement fields of f-strings (`syntax::fstring`), so that the grammar
//! sees an f-string as one token with its expressions.

use std::collections::VecDeque;

use super::fstring::fstring;
use super::lexer::{LexError, StrLit, Tok, Triple};
use crate::diagnostics::{codes, Diagnostic};
use crate::source::{FileId, Span};

/// CPython's limit on nested blocks ("too many levels of indentation").
const MAX_INDENT_LEVELS: usize = 100;

/// Lexical errors reported in one file before the rest is left unread: past a hundred, the file
/// is likely not source text at all, and each further one would only repeat the news.
pub const MAX_LEXICAL_ERRORS: usize = 100;

/// The laid-out tokens of a file, and the lexical errors met on the way.
pub struct Layout {
    pub tokens: Vec<Triple>,
    pub diagnostics: Vec<Diagnostic>,
}

pub fn layout(file: FileId, text: &str) -> Layout {
    let mut laying = Laying::new(file, text, 0);
    // Real code has one token per two and a half to four bytes. Reserving one per two bytes
    // spares a large file the copies of a growing vector (and the memory each copy touches
    // afresh); what is reserved but never written costs address space, not memory.
    let mut tokens = Vec::with_capacity(text.len() / 2 + 16);
    tokens.extend(&mut laying);
    Layout { tokens, diagnostics: laying.into_diagnostics() }
}

/// The layout layer as a stream: the laid-out tokens of `text` from a line start on, one at a
/// time, so that the parser can take them as they come and no file's tokens are all in memory
/// at once. The diagnostics are there once the stream has ended ([`Laying::into_diagnostics`]).
pub struct Laying<'t> {
    file: FileId,
    text: &'t str,
    tokens: super::lexer::Tokens<'t>,
    /// Laid-out tokens not yet taken: the DEDENTs and INDENT a line start makes come with it.
    pending: VecDeque<Triple>,
    diags: Vec<Diagnostic>,
    /// Indentation strings of the open blocks; the outermost is "".
    indents: Vec<&'t str>,
    /// Open brackets, for ignoring newlines and for "never closed" errors.
    brackets: Vec<(Tok, usize, usize)>,
    at_line_start: bool,
    /// The run of invalid characters being reported: its start, end and number of characters.
    /// Its diagnostic (the last one) is given the whole run when the run ends.
    run: Option<(usize, usize, usize)>,
    /// No more tokens: the text has ended, or the layer gave up on it.
    done: bool,
}

impl<'t> Laying<'t> {
    /// The layout of `text` from byte `start`, which is the text's start or a line start at
    /// the top level (no block or bracket open); tokens keep their offsets in `text`.
    pub fn new(file: FileId, text: &'t str, start: usize) -> Self {
        Laying {
            file,
            text,
            tokens: super::lexer::tokens_from(text, start),
            pending: VecDeque::new(),
            diags: Vec::new(),
            indents: vec![""],
            brackets: Vec::new(),
            at_line_start: true,
            run: None,
            done: false,
        }
    }

    /// The lexical and indentation errors met; complete once the stream has ended.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diags
    }

    /// Whether an error was met so far.
    pub fn has_errors(&self) -> bool {
        !self.diags.is_empty()
    }

    fn end_run(&mut self) {
        if let (Some((first, end, count)), Some(last)) = (self.run.take(), self.diags.last_mut()) {
            if count > 1 {
                *last = invalid_characters(self.file, self.text, first, end, count);
            }
        }
    }

    /// Lays out one token from the lexer: what comes before it (a line start's INDENT or
    /// DEDENTs) into `pending`, and the token itself returned, unless it makes none (a newline
    /// the layout drops, an error).
    fn step(&mut self, res: Result<Tok, LexError>, start: usize, end: usize) -> Option<Triple> {
        let (file, text) = (self.file, self.text);
        let tok = match res {
            // Most tokens sit inside a line and open or close nothing: they pass as they are.
            Ok(tok) if self.passes_through(&tok) => return Some((start, tok, end)),
            Ok(tok) => tok,
            Err(LexError::InvalidCharacter) if self.run.is_some_and(|(_, e, _)| e == start) => {
                // A run of invalid characters is one mistake, reported once.
                self.run = self.run.map(|(first, _, count)| (first, end, count + 1));
                return None;
            }
            Err(err) => {
                self.end_run();
                if self.diags.len() == MAX_LEXICAL_ERRORS {
                    if let Some(last) = self.diags.last_mut() {
                        last.notes.push(format!(
                            "onnxsc stops after {MAX_LEXICAL_ERRORS} lexical errors in a file; fix these first"
                        ));
                    }
                    self.done = true;
                    return None;
                }
                self.run = (err == LexError::InvalidCharacter).then_some((start, end, 1));
                self.diags.push(lex_error(file, text, err, start, end));
                // Keep going as if the bad text were a name, so parsing can report more.
                self.at_line_start = false;
                return None;
            }
        };
        if self.run.is_some() {
            self.end_run();
        }
        // An f-string's fields are expressions: parse them now.
        let tok = match tok {
            Tok::Str(StrLit::Format(pieces)) => match fstring(file, text, &pieces) {
                Ok(parts) => Tok::FString(parts),
                Err(d) => {
                    self.diags.push(*d);
                    Tok::Str(StrLit::Plain(String::new()))
                }
            },
            other => other,
        };
        match tok {
            Tok::Newline => {
                if self.brackets.is_empty() && !self.at_line_start {
                    self.at_line_start = true;
                    return Some((start, Tok::Newline, end));
                }
                return None;
            }
            _ if self.at_line_start => {
                let line_start = text[..start].rfind(['\n', '\r']).map(|i| i + 1).unwrap_or(0);
                let indent = &text[line_start..start];
                let top = *self.indents.last().unwrap_or(&"");
                if indent == top {
                    // Same block.
                } else if indent.starts_with(top) {
                    if !consistent(indent) {
                        self.diags.push(mixed_indent(file, line_start, start));
                    }
                    if self.indents.len() > MAX_INDENT_LEVELS {
                        self.diags.push(
                            Diagnostic::error(codes::SYNTAX_ERROR, file, "too many levels of indentation")
                                .primary(
                                    Span::new(line_start, start),
                                    format!("more than {MAX_INDENT_LEVELS} nested blocks"),
                                )
                                .help("Python allows at most 100 levels; split the function"),
                        );
                        self.done = true;
                        return None;
                    }
                    self.indents.push(indent);
                    self.pending.push_back((line_start, Tok::Indent, start));
                } else if let Some(pos) = self.indents.iter().position(|i| *i == indent) {
                    while self.indents.len() > pos + 1 {
                        self.indents.pop();
                        self.pending.push_back((start, Tok::Dedent, start));
                    }
                } else {
                    self.diags.push(bad_dedent(file, text, line_start, start, &self.indents));
                    // Recover: treat the line as belonging to the nearest enclosing block.
                    while self.indents.len() > 1 && !indent.starts_with(self.indents[self.indents.len() - 1]) {
                        self.indents.pop();
                        self.pending.push_back((start, Tok::Dedent, start));
                    }
                }
                self.at_line_start = false;
            }
            _ => {}
        }
        match tok {
            Tok::LParen | Tok::LBracket | Tok::LBrace => self.brackets.push((tok.clone(), start, end)),
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                self.brackets.pop();
            }
            _ => {}
        }
        Some((start, tok, end))
    }

    /// Whether `tok`, coming next, is laid out as it is, with nothing else to do: not at a line
    /// start, not after invalid characters, and neither a line end, a bracket nor an f-string.
    fn passes_through(&self, tok: &Tok) -> bool {
        !self.at_line_start
            && self.run.is_none()
            && !matches!(
                tok,
                Tok::Newline
                    | Tok::LParen
                    | Tok::LBracket
                    | Tok::LBrace
                    | Tok::RParen
                    | Tok::RBracket
                    | Tok::RBrace
                    | Tok::Str(StrLit::Format(_))
            )
    }

    /// The end of the text: brackets never closed, the last line's end, the open blocks' ends.
    fn finish(&mut self) {
        self.end_run();
        let eof = self.text.len();
        if let Some((open, start, end)) = self.brackets.first() {
            let close = match open {
                Tok::LParen => ")",
                Tok::LBracket => "]",
                _ => "}",
            };
            self.diags.push(
                Diagnostic::error(
                    codes::UNCLOSED_BRACKET,
                    self.file,
                    format!("this `{}` is never closed", open.text()),
                )
                .primary(Span::new(*start, *end), "opened here")
                .help(format!("add the missing `{close}`")),
            );
        }
        if !self.at_line_start {
            self.pending.push_back((eof, Tok::Newline, eof));
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.pending.push_back((eof, Tok::Dedent, eof));
        }
    }
}

impl Iterator for Laying<'_> {
    type Item = Triple;

    fn next(&mut self) -> Option<Triple> {
        loop {
            if let Some(token) = self.pending.pop_front() {
                return Some(token);
            }
            if self.done {
                return None;
            }
            match self.tokens.next() {
                Some((res, span)) => {
                    // Most tokens come alone: they skip the queue.
                    match self.step(res, span.start, span.end) {
                        Some(token) if self.pending.is_empty() => return Some(token),
                        Some(token) => self.pending.push_back(token),
                        None => {}
                    }
                }
                None => {
                    self.finish();
                    self.done = true;
                }
            }
        }
    }
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
