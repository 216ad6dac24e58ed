//! What a type annotation means: a tensor type ([`DeclaredType`]) for an input or output, or a
//! Python type for an attribute ([`ParamType`]). `sema::signature` reads a function's
//! annotations with these; the meaning of the names they use is the environment's (`sema::env`), as the point of the
//! module that reads them sees it.

use super::env::{Global, Names};
use super::resolve::resolve_dotted;
use crate::onnx::{AttrKind, DeclaredType, ElemType};
use crate::source::Span;
use crate::syntax::ast::*;

/// What a parameter annotation makes of a parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamType {
    /// A tensor (or sequence/optional) input. `None` when unannotated or only loosely typed.
    Input { ty: Option<DeclaredType>, optional: bool },
    /// An attribute of a Python type.
    Attr { ty: AttrKind, optional: bool },
}

/// What is wrong with an annotation: where, and why.
pub type AnnotationError = (Span, String);

const PY_BUILTIN_TYPES: [&str; 4] = ["float", "int", "str", "bool"];

/// The meaning of a parameter annotation. `Err` carries the span and a reason.
pub fn param_type(names: Names, e: &Expr) -> Result<ParamType, AnnotationError> {
    let bad = |why: &str| Err((e.span, why.to_string()));
    // Builtin Python types, unless shadowed by a global.
    if let ExprKind::Name(n) = &e.kind {
        if PY_BUILTIN_TYPES.contains(&n.as_str()) && names.get(n).is_none() {
            let kind = match n.as_str() {
                "float" => AttrKind::Float,
                "int" => AttrKind::Int,
                "str" => AttrKind::Str,
                _ => AttrKind::Bool,
            };
            return Ok(ParamType::Attr { ty: kind, optional: false });
        }
    }
    if let ExprKind::Subscript { value, index } = &e.kind {
        let head = match &value.kind {
            ExprKind::Name(n) if (n == "list" || n == "tuple") && names.get(n).is_none() => {
                Some(Global::Typing(n.clone()))
            }
            _ => resolve_dotted(names, value),
        };
        match head {
            Some(Global::TensorType(t)) => {
                return Ok(ParamType::Input { ty: Some(DeclaredType::Tensor(t)), optional: false })
            }
            Some(Global::Typing(t)) => match t.as_str() {
                "Sequence" | "List" | "list" => {
                    return match param_type(names, index)? {
                        ParamType::Attr { ty, optional: false } => match ty.list() {
                            Some(list) => Ok(ParamType::Attr { ty: list, optional: false }),
                            None => bad("nested lists are not attribute types"),
                        },
                        ParamType::Attr { .. } => bad("a list of optional values is not an attribute type"),
                        ParamType::Input { ty, .. } => {
                            Ok(ParamType::Input { ty: Some(DeclaredType::Sequence(ty.map(Box::new))), optional: false })
                        }
                    };
                }
                "Optional" => {
                    return Ok(match param_type(names, index)? {
                        ParamType::Attr { ty, .. } => ParamType::Attr { ty, optional: true },
                        ParamType::Input { ty, .. } => ParamType::Input { ty, optional: true },
                    });
                }
                "Union" => {
                    let items: Vec<&Expr> = match &index.kind {
                        ExprKind::Tuple(items) => items.iter().collect(),
                        _ => vec![index.as_ref()],
                    };
                    let non_none: Vec<&Expr> =
                        items.iter().copied().filter(|i| !matches!(i.kind, ExprKind::None)).collect();
                    let optional = non_none.len() != items.len();
                    if non_none.len() == 1 {
                        return Ok(match param_type(names, non_none[0])? {
                            ParamType::Attr { ty, .. } => ParamType::Attr { ty, optional },
                            ParamType::Input { ty, .. } => ParamType::Input { ty, optional },
                        });
                    }
                    for i in &non_none {
                        if let ParamType::Attr { .. } = param_type(names, i)? {
                            return Err((i.span, "a union may not mix attribute types".into()));
                        }
                    }
                    return Ok(ParamType::Input { ty: None, optional });
                }
                "Annotated" => {
                    let first = match &index.kind {
                        ExprKind::Tuple(items) => items.first(),
                        _ => Some(index.as_ref()),
                    };
                    return match first {
                        Some(f) => param_type(names, f),
                        None => bad("empty `Annotated`"),
                    };
                }
                _ => return bad("not a tensor or attribute type"),
            },
            _ => return bad("not a tensor or attribute type"),
        }
    }
    match resolve_dotted(names, e) {
        Some(Global::TensorType(t)) => Ok(ParamType::Input { ty: Some(DeclaredType::Tensor(t)), optional: false }),
        Some(Global::TypeVar { name, allowed }) => {
            Ok(ParamType::Input { ty: Some(DeclaredType::Var { name, allowed }), optional: false })
        }
        // A named union (`RealType`): the signature names it, as it names a TypeVar.
        Some(Global::TypeUnion(_)) => Ok(ParamType::Input {
            ty: e.dotted_name().map(|n| DeclaredType::Union(n.rsplit('.').next().unwrap_or(&n).to_string())),
            optional: false,
        }),
        _ => bad("not a tensor or attribute type"),
    }
}

/// The declared outputs of a return annotation: one type, or a tuple of them (`Tuple[A, B]`,
/// `tuple[A, B]`, or `(A, B)` as onnxscript's own exporter writes it).
pub fn return_types(names: Names, e: &Expr) -> Result<Vec<Option<DeclaredType>>, AnnotationError> {
    if let ExprKind::Tuple(items) = &e.kind {
        if items.is_empty() {
            return Err((e.span, "a function returns at least one tensor".into()));
        }
        return items.iter().map(|i| one_return(names, i)).collect();
    }
    if let ExprKind::Subscript { value, index } = &e.kind {
        let is_tuple = match &value.kind {
            ExprKind::Name(n) if n == "tuple" && names.get(n).is_none() => true,
            _ => matches!(resolve_dotted(names, value), Some(Global::Typing(t)) if t == "Tuple"),
        };
        if is_tuple {
            let items: Vec<&Expr> = match &index.kind {
                ExprKind::Tuple(items) => items.iter().collect(),
                _ => vec![index.as_ref()],
            };
            return items.into_iter().map(|i| one_return(names, i)).collect();
        }
    }
    Ok(vec![one_return(names, e)?])
}

fn one_return(names: Names, e: &Expr) -> Result<Option<DeclaredType>, AnnotationError> {
    match param_type(names, e)? {
        ParamType::Input { ty, .. } => Ok(ty),
        ParamType::Attr { .. } => Err((e.span, "a function returns tensors, not attribute values".into())),
    }
}

/// `FLOAT`, `FLOAT[...]`, `Union[FLOAT, DOUBLE]`, or a TypeVar: the element types allowed.
pub(super) fn tensor_types(names: Names, e: &Expr) -> Option<Vec<ElemType>> {
    match &e.kind {
        ExprKind::Subscript { value, index } => match resolve_dotted(names, value)? {
            Global::TensorType(t) => Some(vec![t]),
            Global::Typing(t) if t == "Union" => {
                let items = match &index.kind {
                    ExprKind::Tuple(items) => items.iter().collect::<Vec<_>>(),
                    _ => vec![index.as_ref()],
                };
                let mut out = Vec::new();
                for item in items {
                    out.extend(tensor_types(names, item)?);
                }
                Some(out)
            }
            _ => None,
        },
        ExprKind::BinOp { op: BinOp::BitOr, left, right } => {
            let mut l = tensor_types(names, left)?;
            l.extend(tensor_types(names, right)?);
            Some(l)
        }
        _ => match resolve_dotted(names, e)? {
            Global::TensorType(t) => Some(vec![t]),
            Global::TypeVar { allowed, .. } => Some(allowed),
            Global::TypeUnion(ts) => Some(ts),
            _ => None,
        },
    }
}
