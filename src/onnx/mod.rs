//! The ONNX vocabulary every stage shares: element types ([`ElemType`]), attribute types
//! ([`AttrType`], and the Python types [`AttrKind`] that make a parameter an attribute), and the
//! elements a tensor holds ([`tensor`]), the types of values as schemas write them
//! ([`ValueType`]).
//!
//! It sits just above the generated protobuf types ([`crate::proto`]) and below everything that
//! reads or writes ONNX: schemas, semantic analysis, emission, validation and linking each name
//! a type the same way, from here.

mod attr;
mod elem;
pub mod tensor;
mod types;

pub use attr::{attribute_kind, AttrKind, AttrType};
pub use elem::ElemType;
pub use types::ValueType;
