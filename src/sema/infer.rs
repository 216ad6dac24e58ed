//! Element-type inference for one op call.
//!
//! The lowerer tracks what it knows about each value's element type ([`Ty`]) and asks
//! [`check_call`] whether an op's inputs fit its schema: each type variable of the schema
//! (`T` in `Add(A: T, B: T)`) must take one element type within its allowed set. What nobody can
//! know statically (a TypeVar of the signature, an unannotated input) is never an error: only
//! contradictions between facts are reported, so real translations check without false errors.

use crate::schema::{FormalOption, FormalParam, OpSchema};
use crate::sema::types::ElemType;

/// What is known about a tensor value's element type.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// Exactly this element type.
    Elem(ElemType),
    /// A type variable of the function's signature: fixed but unknown, within `allowed`
    /// (empty: any type).
    Var { name: String, allowed: Vec<ElemType> },
}

impl Ty {
    pub fn describe(&self) -> String {
        match self {
            Ty::Elem(t) => t.script_name().to_string(),
            Ty::Var { name, .. } => format!("`{name}`"),
        }
    }

    /// Whether a value of this type could have element type `t`.
    fn admits(&self, t: ElemType) -> bool {
        match self {
            Ty::Elem(e) => *e == t,
            Ty::Var { allowed, .. } => allowed.is_empty() || allowed.contains(&t),
        }
    }
}

/// The element type named by an ONNX type string such as `tensor(float)`.
pub fn tensor_elem(type_str: &str) -> Option<ElemType> {
    let inner = type_str.strip_prefix("tensor(")?.strip_suffix(')')?;
    ElemType::ALL.iter().copied().find(|t| t.script_name().eq_ignore_ascii_case(inner))
}

/// An argument that contradicts the schema or another argument.
#[derive(Debug, PartialEq)]
pub struct Conflict {
    /// Index of the offending input.
    pub arg: usize,
    /// The earlier input it contradicts, if any.
    pub other: Option<usize>,
    pub message: String,
    pub label: String,
}

/// The formal parameter that input `i` binds to, if any.
fn formal_of(schema: &OpSchema, i: usize) -> Option<&FormalParam> {
    match schema.inputs.get(i) {
        Some(f) => Some(f),
        None => schema.inputs.last().filter(|l| l.option == FormalOption::Variadic),
    }
}

/// The tensor element types a formal type string allows, or `None` when it is not a tensor type
/// this checker reasons about (sequences, optionals, types we do not model).
fn allowed_types(schema: &OpSchema, type_str: &str) -> Option<Vec<ElemType>> {
    if let Some(t) = tensor_elem(type_str) {
        return Some(vec![t]);
    }
    let constraint = schema.type_constraint(type_str)?;
    if constraint.allowed.iter().any(|a| !a.starts_with("tensor(")) {
        return None;
    }
    Some(constraint.allowed.iter().filter_map(|a| tensor_elem(a)).collect())
}

fn list(types: &[ElemType]) -> String {
    let names: Vec<&str> = types.iter().map(|t| t.script_name()).collect();
    if names.len() > 6 {
        format!("{}, ... ({} types)", names[..6].join(", "), names.len())
    } else {
        names.join(", ")
    }
}

/// Checks the inputs of one call and infers its outputs' types.
///
/// `args[i]` is what is known of input `i` (`None`: unknown or omitted).
pub fn check_call(schema: &OpSchema, args: &[Option<&Ty>], n_outputs: usize) -> Result<Vec<Option<Ty>>, Conflict> {
    // The first argument that fixed each type variable.
    let mut bound: Vec<(String, Ty, usize)> = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let (Some(formal), Some(ty)) = (formal_of(schema, i), arg) else { continue };
        let Some(allowed) = allowed_types(schema, &formal.type_str) else { continue };
        let is_var = schema.type_constraint(&formal.type_str).is_some();
        let op = &schema.name;
        // The argument must be able to have one of the allowed types.
        if !allowed.is_empty() && !allowed.iter().any(|t| ty.admits(*t)) {
            let (message, label) = match ty {
                Ty::Elem(t) => (
                    format!("`{op}` does not accept {} for its input `{}`", t.script_name(), formal.name),
                    format!("{} here; `{}` allows {}", t.script_name(), formal.name, list(&allowed)),
                ),
                Ty::Var { name, allowed: own } => (
                    format!("`{op}` accepts none of the types of `{name}` for its input `{}`", formal.name),
                    format!("`{name}` is one of {}; `{}` allows {}", list(own), formal.name, list(&allowed)),
                ),
            };
            return Err(Conflict { arg: i, other: None, message, label });
        }
        // Homogeneous uses of one type variable must agree.
        if !is_var || (formal.option == FormalOption::Variadic && !formal.is_homogeneous) {
            continue;
        }
        match bound.iter().find(|(v, _, _)| *v == formal.type_str) {
            None => bound.push((formal.type_str.clone(), (*ty).clone(), i)),
            Some((_, first, j)) => {
                let clash = match (first, *ty) {
                    (Ty::Elem(a), Ty::Elem(b)) => a != b,
                    (Ty::Elem(a), v @ Ty::Var { .. }) | (v @ Ty::Var { .. }, Ty::Elem(a)) => !v.admits(*a),
                    (Ty::Var { allowed: a, .. }, Ty::Var { allowed: b, .. }) => {
                        !a.is_empty() && !b.is_empty() && !a.iter().any(|t| b.contains(t))
                    }
                };
                if clash {
                    let first_formal = formal_of(schema, *j).map(|f| f.name.as_str()).unwrap_or("?");
                    let which = if first_formal == formal.name {
                        format!("all its `{first_formal}`")
                    } else {
                        format!("`{first_formal}` and `{}`", formal.name)
                    };
                    return Err(Conflict {
                        arg: i,
                        other: Some(*j),
                        message: format!("`{op}` needs {which} to have the same element type, but they are {} and {}", first.describe(), ty.describe()),
                        label: format!("{} here", ty.describe()),
                    });
                }
                // A concrete type is the better fact to carry to the outputs.
                if matches!(first, Ty::Var { .. }) && matches!(ty, Ty::Elem(_)) {
                    let k = bound.iter().position(|(v, _, _)| *v == formal.type_str).expect("found above");
                    bound[k].1 = (*ty).clone();
                }
            }
        }
    }
    let mut outputs = Vec::new();
    for k in 0..n_outputs {
        let formal = match schema.outputs.get(k) {
            Some(f) => f,
            None => match schema.outputs.last().filter(|l| l.option == FormalOption::Variadic) {
                Some(f) => f,
                None => {
                    outputs.push(None);
                    continue;
                }
            },
        };
        let ty = if let Some(t) = tensor_elem(&formal.type_str) {
            Some(Ty::Elem(t))
        } else if let Some((_, t, _)) = bound.iter().find(|(v, _, _)| *v == formal.type_str) {
            Some(t.clone())
        } else {
            match allowed_types(schema, &formal.type_str) {
                Some(a) if a.len() == 1 => Some(Ty::Elem(a[0])),
                _ => None,
            }
        };
        outputs.push(ty);
    }
    Ok(outputs)
}
