//! The type a signature declares for a tensor value (an input or an output), as the source
//! names it: what annotations mean (`sema::annotations`), what the IR carries, and what the
//! signature JSON records (`emit::signature_json`).

use super::ElemType;
use std::fmt;

/// The type an annotation gives a tensor value (an input or an output).
#[derive(Clone, Debug, PartialEq)]
pub enum DeclaredType {
    /// A tensor type: `FLOAT`, `INT64[N]`.
    Tensor(ElemType),
    /// A TypeVar of the module (`TReal`), with the element types it allows (empty: any).
    Var { name: String, allowed: Vec<ElemType> },
    /// A named union of tensor types (`RealType = Union[FLOAT, DOUBLE]`), by its name.
    Union(String),
    /// A sequence of values (`Sequence[FLOAT]`); `None` when the item type is only loosely given.
    Sequence(Option<Box<DeclaredType>>),
}

/// As the source spells it, and as the signature JSON records it: `FLOAT`, `TReal`,
/// `Sequence[FLOAT]` (`Sequence[?]` for a loosely typed item).
impl fmt::Display for DeclaredType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclaredType::Tensor(t) => f.write_str(t.script_name()),
            DeclaredType::Var { name, .. } | DeclaredType::Union(name) => f.write_str(name),
            DeclaredType::Sequence(Some(item)) => write!(f, "Sequence[{item}]"),
            DeclaredType::Sequence(None) => f.write_str("Sequence[?]"),
        }
    }
}
