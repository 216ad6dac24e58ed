//! What the checker learned about each name where it occurs, for editors.
//!
//! Lowering records a [`Fact`] for every parameter, assignment target and use of a variable it
//! lowers: whether the name is a tensor input, an attribute or a local value, and the element
//! type inferred for it at that point (after `x = op.Cast(x, to=INT64.dtype)`, `x` is INT64).
//! The language server answers hovers from these facts instead of analysing anything again.

use crate::onnx::AttrType;
use crate::source::{FileId, Span};

/// What a name stands for at one place.
#[derive(Clone, Debug, PartialEq)]
pub enum NameInfo {
    /// A tensor input of the function (a parameter not reassigned before this point).
    Input {
        /// The element type as far as it is known: `FLOAT`, `` `T` `` (a TypeVar),
        /// `Sequence[FLOAT]`.
        ty: Option<String>,
        optional: bool,
    },
    /// An attribute parameter: `python` is its annotation, `onnx` the attribute type that
    /// carries it.
    Attribute { onnx: AttrType, python: Option<&'static str>, default: Option<String> },
    /// A value the function computes.
    Local { ty: Option<String> },
    /// A nested `@graph()` function.
    Graph,
}

/// One occurrence of a name.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    pub file: FileId,
    pub span: Span,
    pub name: String,
    pub info: NameInfo,
    /// Where the name is declared, for a parameter: its declaration.
    pub definition: Option<Span>,
}

impl NameInfo {
    /// One line for a hover: `x: FLOAT — tensor input`.
    pub fn describe(&self, name: &str) -> String {
        match self {
            NameInfo::Input { ty, optional } => {
                let ty = ty.as_deref().unwrap_or("unknown element type");
                let opt = if *optional { "optional " } else { "" };
                format!("{name}: {ty} — {opt}tensor input")
            }
            NameInfo::Attribute { onnx, python, default } => {
                let shown = python.unwrap_or(onnx.name());
                let default = default.as_ref().map(|d| format!(" = {d}")).unwrap_or_default();
                format!("{name}: {shown}{default} — attribute ({})", onnx.proto_name())
            }
            NameInfo::Local { ty } => {
                format!("{name}: {} — value computed by the function", ty.as_deref().unwrap_or("unknown element type"))
            }
            NameInfo::Graph => format!("{name} — nested `@graph()` function, a graph attribute"),
        }
    }
}
