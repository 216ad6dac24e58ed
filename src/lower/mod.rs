//! Lowering: checked AST to the IR of ONNX nodes ([`crate::ir`]).

pub mod exporter;
pub mod function;

pub use function::{lower_function, FunctionContext};
