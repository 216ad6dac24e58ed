//! onnxsc: a compiler for ONNX Script translation functions.
//!
//! The pipeline, one module per stage (see ARCHITECTURE.md):
//! [`source`] → [`syntax`] (lexer, layout, grammar, AST) → [`sema`] (names, types) and
//! [`schema`] (operator schemas) → [`lower`] (IR) → [`emit`] (protobuf, text) → [`driver`] and the
//! command line in `main.rs`. [`link`] puts compiled functions into exported models.

pub mod allocator;
pub mod aten;
#[doc(hidden)]
pub mod contract;
pub mod decompile;
pub mod diagnostics;
pub mod digits;
pub mod driver;
pub mod emit;
pub mod ir;
pub mod link;
pub mod lower;
pub mod lsp;
pub mod onnx;
pub mod parallel;
pub mod proto;
pub mod schema;
pub mod sema;
pub mod source;
pub mod syntax;
pub mod trace;
pub mod validate;
