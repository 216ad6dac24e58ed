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
