//! Syntax: text to AST.
//!
//! `lexer` (logos) → `layout` (INDENT/DEDENT/NEWLINE) → `parser` (lalrpop grammar in
//! `grammar/onnxs.lalrpop`) → `ast`.

pub mod ast;
pub mod depth;
pub mod incremental;
pub mod layout;
pub mod lexer;
pub mod parser;

pub use parser::{parse, Parsed};
