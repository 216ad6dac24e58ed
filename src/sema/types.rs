//! The meaning of type annotations.
//!
//! Element and attribute types are the ONNX vocabulary's ([`crate::onnx`]); they are re-exported
//! here for the code that still names them by this path.

pub use crate::onnx::{AttrKind, ElemType};

/// What a parameter annotation makes of a parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamType {
    /// A tensor (or sequence/optional) input. `None` when unannotated or only loosely typed.
    Input { ty: Option<String>, optional: bool },
    /// An attribute of a Python type.
    Attr { ty: AttrKind, optional: bool },
}
