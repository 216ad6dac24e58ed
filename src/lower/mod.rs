//! Lowering: checked AST to the IR of ONNX nodes ([`ir`]).

pub mod exporter;
pub mod function;
pub mod ir;

pub use function::{lower_function, FunctionContext};
