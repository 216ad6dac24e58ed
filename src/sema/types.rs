//! The meaning of type annotations.
//!
//! Element and attribute types are the ONNX vocabulary's ([`crate::onnx`]); they are re-exported
//! here for the code that still names them by this path.

pub use crate::onnx::{AttrKind, ElemType};
