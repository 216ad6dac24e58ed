//! A recursive-descent parser for the `func:` schema grammar.
//!
//! ```text
//! schema     := [ident "::"] ident ["." overload] "(" [params] ")" "->" returns
//! params     := param ("," param)*            param := "*" | type ident ["=" default]
//! type       := ident [annotation] ("?" | "[" [digits] "]")*
//! annotation := "(" aliases ["!"] ["->" aliases] ")"       aliases := alias ("|" alias)*
//! returns    := "(" [ret ("," ret)*] ")" | ret                ret := type [ident]
//! ```
//!
//! Whitespace between tokens is free (as in `torch.library.define`); printing gives the
//! canonical spacing. Errors carry the byte range of the offending token. Every loop
//! consumes a byte per turn and no rule recurses, so no input can make it loop or overflow
//! the stack; bytes are read with `get`, and text is sliced only at ASCII positions.

use std::fmt;
use std::ops::Range;

use super::model::{Annotation, Argument, BaseType, FunctionSchema, Return, Type, DEFAULT_NAMESPACE};

/// Why a schema text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// Byte range in the parsed text; empty at the end of the text for "expected ..." errors.
    pub span: Range<usize>,
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SchemaError {}

/// Parses one schema, e.g. `add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`.
pub fn parse_schema(text: &str) -> Result<FunctionSchema, SchemaError> {
    let mut p = Parser { text, bytes: text.as_bytes(), pos: 0 };
    p.schema()
}

type PResult<T> = Result<T, SchemaError>;

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<u8> {
        self.bytes.get(self.pos + offset).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_arrow(&mut self) -> bool {
        if self.peek() == Some(b'-') && self.peek_at(1) == Some(b'>') {
            self.pos += 2;
            true
        } else {
            false
        }
    }

    /// Consumes an identifier (`[A-Za-z_][A-Za-z0-9_]*`) and returns its range.
    fn ident(&mut self) -> Option<Range<usize>> {
        if !self.peek().is_some_and(is_ident_start) {
            return None;
        }
        let start = self.pos;
        while self.peek().is_some_and(is_ident_char) {
            self.pos += 1;
        }
        Some(start..self.pos)
    }

    /// The token at the current position: a whole word, one character, or the empty
    /// range at the end. Always on character boundaries.
    fn current_token(&self) -> Range<usize> {
        let start = self.pos;
        let Some(b) = self.peek() else { return start..start };
        if is_ident_char(b) {
            let len = self.bytes[start..].iter().take_while(|&&b| is_ident_char(b)).count();
            return start..start + len;
        }
        if b == b'-' && self.peek_at(1) == Some(b'>') {
            return start..start + 2;
        }
        let len = self.text.get(start..).and_then(|s| s.chars().next()).map_or(1, char::len_utf8);
        start..start + len
    }

    /// "expected X, found Y" at the current token.
    fn expected(&self, what: &str) -> SchemaError {
        let span = self.current_token();
        let found = if span.is_empty() {
            "the end of the schema".to_string()
        } else {
            format!("`{}`", &self.text[span.clone()])
        };
        SchemaError { span, message: format!("expected {what}, found {found}") }
    }

    fn error(span: Range<usize>, message: impl Into<String>) -> SchemaError {
        SchemaError { span, message: message.into() }
    }

    fn schema(&mut self) -> PResult<FunctionSchema> {
        self.skip_ws();
        let first = self.ident().ok_or_else(|| self.expected("an operator name"))?;
        let (namespace, name) = if self.peek() == Some(b':') && self.peek_at(1) == Some(b':') {
            self.pos += 2;
            let name = self.ident().ok_or_else(|| self.expected("an operator name after `::`"))?;
            (self.text[first].to_string(), name)
        } else {
            (DEFAULT_NAMESPACE.to_string(), first)
        };
        let mut overload = String::new();
        if self.eat(b'.') {
            let start = self.pos;
            while self.peek().is_some_and(is_ident_char) {
                self.pos += 1;
            }
            if start == self.pos {
                return Err(self.expected("an overload name after `.`"));
            }
            overload = self.text[start..self.pos].to_string();
        }
        self.skip_ws();
        if !self.eat(b'(') {
            return Err(self.expected("`(` after the operator name"));
        }
        let arguments = self.arguments()?;
        self.skip_ws();
        if !self.eat_arrow() {
            return Err(self.expected("`->` and the return types after the arguments"));
        }
        self.skip_ws();
        let returns = self.returns()?;
        self.skip_ws();
        if self.pos < self.bytes.len() {
            let span = self.pos..self.bytes.len();
            return Err(Self::error(span, "unexpected text after the return types"));
        }
        Ok(FunctionSchema { namespace, name: self.text[name].to_string(), overload, arguments, returns })
    }

    /// The arguments after `(`, through the closing `)`.
    fn arguments(&mut self) -> PResult<Vec<Argument>> {
        let mut args: Vec<Argument> = Vec::new();
        self.skip_ws();
        if self.eat(b')') {
            return Ok(args);
        }
        let mut star: Option<Range<usize>> = None;
        // Names seen, for the duplicate check: a set, as schemas can be long.
        let mut names = std::collections::HashSet::new();
        loop {
            self.skip_ws();
            let after;
            if self.peek() == Some(b'*') {
                let span = self.pos..self.pos + 1;
                if star.is_some() {
                    return Err(Self::error(span, "a second `*`: keyword-only arguments start at the first one"));
                }
                self.pos += 1;
                star = Some(span);
                after = "`*`".to_string();
            } else {
                let (arg, name_span) = self.argument(star.is_some())?;
                if !names.insert(arg.name.clone()) {
                    return Err(Self::error(name_span, format!("duplicate argument name `{}`", arg.name)));
                }
                after = format!("argument `{}`", arg.name);
                args.push(arg);
            }
            self.skip_ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b')') {
                break;
            }
            return Err(self.expected(&format!("`,` or `)` after {after}")));
        }
        if let Some(span) = star {
            // Torchgen would print `f(Tensor a, *)` as `f(Tensor a)`: not a round trip.
            if !args.iter().any(|a| a.kwarg_only) {
                return Err(Self::error(span, "`*` must be followed by keyword-only arguments"));
            }
        }
        Ok(args)
    }

    /// `Type[(alias)] name[=default]`; also returns the name's span.
    fn argument(&mut self, kwarg_only: bool) -> PResult<(Argument, Range<usize>)> {
        let type_start = self.pos;
        let (ty, annotation) = self.annotated_type("an argument type")?;
        let type_end = self.pos;
        self.skip_ws();
        let Some(name) = self.ident() else {
            let written = self.text[type_start..type_end].to_string();
            return Err(self.expected(&format!("an argument name after the type `{written}`")));
        };
        self.skip_ws();
        let default = if self.eat(b'=') {
            self.skip_ws();
            Some(self.default_text()?)
        } else {
            None
        };
        let arg = Argument { ty, name: self.text[name.clone()].to_string(), default, kwarg_only, annotation };
        Ok((arg, name))
    }

    /// A base type, its optional alias annotation, then `?` and `[N]` suffixes.
    fn annotated_type(&mut self, what: &str) -> PResult<(Type, Option<Annotation>)> {
        let Some(word) = self.ident() else {
            return Err(self.expected(what));
        };
        let written = &self.text[word.clone()];
        let base = BaseType::from_name(written).ok_or_else(|| {
            let mut message = format!("unknown type `{written}`");
            if let Some(s) = suggest_type(written) {
                message.push_str(&format!("; did you mean `{s}`?"));
            }
            Self::error(word.clone(), message)
        })?;
        let mut ty = Type::Base(base);
        // Whitespace is only consumed when a suffix follows, so that `end` is the
        // end of the type as written.
        let mut end = self.pos;
        self.skip_ws();
        let annotation = if self.peek() == Some(b'(') {
            let a = self.annotation()?;
            end = self.pos;
            Some(a)
        } else {
            None
        };
        loop {
            self.skip_ws();
            if self.eat(b'?') {
                ty = Type::Optional(Box::new(ty));
            } else if self.peek() == Some(b'[') {
                let open = self.pos;
                self.pos += 1;
                self.skip_ws();
                let digits = self.pos;
                while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.pos += 1;
                }
                let size = if digits == self.pos {
                    None
                } else {
                    let text = &self.text[digits..self.pos];
                    Some(
                        text.parse::<u32>()
                            .map_err(|_| Self::error(digits..self.pos, format!("list size `{text}` is too large")))?,
                    )
                };
                self.skip_ws();
                if !self.eat(b']') {
                    if self.pos >= self.bytes.len() {
                        return Err(Self::error(open..open + 1, "unclosed `[` in the type"));
                    }
                    return Err(self.expected("`]` after the list size"));
                }
                ty = Type::List(Box::new(ty), size);
            } else {
                break;
            }
            end = self.pos;
        }
        if annotation.is_none() && self.peek() == Some(b'(') {
            let span = self.current_token();
            return Err(Self::error(
                span,
                format!("the alias annotation goes right after the base type, as in `{base}(a)[]`"),
            ));
        }
        self.pos = end;
        Ok((ty, annotation))
    }

    /// `(a)`, `(a!)`, `(a|b)`, `(a -> *)`, starting at `(`.
    fn annotation(&mut self) -> PResult<Annotation> {
        let open = self.pos;
        self.pos += 1;
        self.skip_ws();
        let alias_set = self.alias_sets()?;
        self.skip_ws();
        let is_write = self.eat(b'!');
        self.skip_ws();
        let mut alias_set_after = Vec::new();
        if self.eat_arrow() {
            self.skip_ws();
            alias_set_after = self.alias_sets()?;
            self.skip_ws();
        }
        if !self.eat(b')') {
            if self.pos >= self.bytes.len() {
                return Err(Self::error(open..open + 1, "unclosed `(` of an alias annotation"));
            }
            return Err(self.expected("`)` to close the alias annotation"));
        }
        Ok(Annotation { alias_set, is_write, alias_set_after })
    }

    /// `a`, `a|b`, `*`.
    fn alias_sets(&mut self) -> PResult<Vec<String>> {
        let mut sets = Vec::new();
        loop {
            if self.eat(b'*') {
                sets.push("*".to_string());
            } else if let Some(r) = self.ident() {
                sets.push(self.text[r].to_string());
            } else {
                return Err(self.expected("an alias set name like `a` or `*`"));
            }
            self.skip_ws();
            if !self.eat(b'|') {
                return Ok(sets);
            }
            self.skip_ws();
        }
    }

    /// The text of a default: one token, where brackets and quoted strings may hold
    /// anything (`[0, 1]`, `'a, b'`). Ends before `,`, `)` or whitespace outside them.
    fn default_text(&mut self) -> PResult<String> {
        let start = self.pos;
        let mut open: Vec<(u8, usize)> = Vec::new();
        while let Some(b) = self.peek() {
            match b {
                b'[' | b'(' => open.push((b, self.pos)),
                b']' | b')' => match open.pop() {
                    None => break, // the `)` closing the argument list
                    Some((o, _)) if (o == b'[') == (b == b']') => {}
                    Some((o, _)) => {
                        let close = if o == b'[' { ']' } else { ')' };
                        let message = format!("expected `{close}` in the default value, found `{}`", b as char);
                        return Err(Self::error(self.pos..self.pos + 1, message));
                    }
                },
                b',' if open.is_empty() => break,
                b if b.is_ascii_whitespace() && open.is_empty() => break,
                b'\'' | b'"' => {
                    self.skip_string(b)?;
                    continue;
                }
                _ => {}
            }
            self.pos += 1;
        }
        if let Some(&(o, at)) = open.last() {
            return Err(Self::error(at..at + 1, format!("unclosed `{}` in the default value", o as char)));
        }
        if start == self.pos {
            return Err(self.expected("a default value after `=`"));
        }
        Ok(self.text[start..self.pos].to_string())
    }

    /// Moves past a quoted string with backslash escapes, starting at its quote.
    fn skip_string(&mut self, quote: u8) -> PResult<()> {
        let start = self.pos;
        self.pos += 1;
        while let Some(b) = self.peek() {
            self.pos += 1;
            if b == b'\\' {
                // The escaped byte may start a multi-byte character; its continuation
                // bytes are never quotes, so skipping one byte is enough.
                self.pos = (self.pos + 1).min(self.bytes.len());
            } else if b == quote {
                return Ok(());
            }
        }
        Err(Self::error(start..self.bytes.len(), "unterminated string in the default value"))
    }

    /// `()`, `T`, `T name` or `(T [name], ...)`.
    fn returns(&mut self) -> PResult<Vec<Return>> {
        if !self.eat(b'(') {
            return Ok(vec![self.single_return()?]);
        }
        let mut returns = Vec::new();
        self.skip_ws();
        if self.eat(b')') {
            return Ok(returns);
        }
        loop {
            self.skip_ws();
            returns.push(self.single_return()?);
            self.skip_ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b')') {
                return Ok(returns);
            }
            return Err(self.expected("`,` or `)` after a return value"));
        }
    }

    fn single_return(&mut self) -> PResult<Return> {
        let (ty, annotation) = self.annotated_type("a return type")?;
        self.skip_ws();
        let name = self.ident().map(|r| self.text[r].to_string());
        Ok(Return { ty, name, annotation })
    }
}

/// The base type `written` most likely means: same spelling in another case, or within
/// two edits.
fn suggest_type(written: &str) -> Option<&'static str> {
    let lower = written.to_ascii_lowercase();
    let aliases = [("integer", "int"), ("long", "int"), ("double", "float"), ("string", "str"), ("boolean", "bool")];
    if let Some((_, to)) = aliases.iter().find(|(from, _)| *from == lower) {
        return Some(to);
    }
    let names = BaseType::ALL.map(BaseType::as_str);
    if let Some(n) = names.iter().find(|n| n.to_ascii_lowercase() == lower) {
        return Some(n);
    }
    crate::diagnostics::suggest::closest_within(&lower, names, 2)
}
