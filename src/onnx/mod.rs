//! The ONNX vocabulary every stage shares:
//!
//! - element types ([`ElemType`]) and the elements a tensor holds ([`tensor`]);
//! - attribute types ([`AttrType`]) and the Python types that make a parameter an attribute
//!   ([`AttrKind`]);
//! - the types of values as operator schemas write them ([`ValueType`]), and as a function's
//!   signature declares them ([`DeclaredType`]);
//! - which IR version a model needs ([`ir_version`]);
//! - what onnxsc records in `metadata_props`, among it every function's typed signature
//!   ([`metadata`]);
//! - the versions of PyTorch, onnxscript, ONNX and ONNX Runtime onnxsc targets ([`pinned`]).
//!
//! It sits just above the generated protobuf types ([`crate::proto`]) and below everything that
//! reads or writes ONNX: schemas, semantic analysis, emission, validation and linking each name
//! a type the same way, from here.

mod attr;
mod declared;
mod elem;
pub mod ir_version;
pub mod metadata;
pub mod pinned;
pub mod tensor;
mod types;

pub use attr::{attribute_kind, AttrKind, AttrType};
pub use declared::DeclaredType;
pub use elem::ElemType;
pub use types::{elem_bit, elems_by_container, Container, ValueType};

/// The longest chain of model-local functions calling each other that onnx.checker (1.23) and
/// ONNX Runtime accept, counted in functions (the main graph not counted): onnx.checker's
/// `kMaxFunctionCallDepth`, "Function call chain depth exceeds limit (100)", and ONNX Runtime's
/// "Model local function call depth 101 exceeds the maximum supported depth of 100". The checker
/// walks the call graph from its functions in hash order, so whether it sees a chain of 101
/// depends on the functions' names; ONNX Runtime always refuses one. `build` refuses a library past it
/// (E0811, at the call); `link` checks it where it keeps functions as functions, and its inline
/// mode expands calls past it into models within it.
pub const MAX_CALL_DEPTH: usize = 100;
