//! Semantic analysis: the meaning of module-level names, annotations and constants.

pub mod env;
pub mod infer;
pub mod types;
pub mod value;
