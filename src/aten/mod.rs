//! PyTorch operator schemas: the `func:` grammar of native_functions.yaml.
//!
//! - [`model`]: [`FunctionSchema`] and its parts; `Display` prints torchgen's canonical
//!   form, so every schema of native_functions.yaml prints back to exactly its text.
//! - [`parse`]: [`parse_schema`], a hand-written parser with byte-span errors.
//! - [`registry`]: [`AtenRegistry`], schemas by qualified name (`aten::add.Tensor`): the
//!   embedded `generated/native_functions.txt` (from the pinned torch wheel by
//!   `scripts/gen_native_functions.py`, indexed at build time) or a user's YAML file, plus
//!   custom ops.
//! - [`yaml`]: [`AtenRegistry::from_yaml`] and locating the active environment's YAML.
//!
//! ```
//! use onnxsc::aten::AtenRegistry;
//! let add = AtenRegistry::embedded().lookup("aten::add.Tensor").unwrap();
//! assert_eq!(add.to_string(), "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
//! ```

pub mod model;
pub mod parse;
pub mod registry;
pub mod schema_query;
pub mod yaml;

pub use model::{Annotation, Argument, BaseType, DefaultValue, FunctionSchema, Return, Type, DEFAULT_NAMESPACE};
pub use parse::{parse_schema, SchemaError};
pub use registry::AtenRegistry;
pub use yaml::YamlSchemaError;

/// The ONNX opset at which the exporter of the targeted torch (2.15, whose native_functions are
/// embedded) builds its graph: `torch.onnx._internal.exporter._constants.TORCHLIB_OPSET`. It
/// inlines every translation there, and inlining refuses a function that imports another
/// version of the ONNX domain, so a bound translation must use this opset (E0513).
pub const EXPORTER_OPSET: i64 = 18;

#[cfg(test)]
mod tests;
