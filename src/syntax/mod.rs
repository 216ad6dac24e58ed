//! Syntax: text to AST.
//!
//! `lexer` (logos) → `layout` (INDENT/DEDENT/NEWLINE; f-string fields through `fstring`) →
//! `parser` (the lalrpop grammar of `grammar/onnxs.lalrpop`, generated into `grammar`; syntax
//! errors explained by `syntax_error`) → `ast`.

pub mod ast;
pub mod depth;
mod fstring;
mod grammar;
pub mod incremental;
pub mod layout;
pub mod lexer;
pub mod noqa;
pub mod parser;
mod syntax_error;

pub use parser::{parse, ParsedFile};
