//! The source's signature, where onnxsc recorded it (`onnxsc.signature`,
//! docs/signature-format.md): a function onnxsc compiled comes back with its parameters in their
//! source order, inputs typed with element types, `bool` attributes, the defaults as written,
//! the parameters it deleted (`del`), and its `@torch_op` binding. What may be None comes back
//! as a plain parameter (`body::recorded_parameters` says why). Without a record (or
//! with one that does not describe the FunctionProto) the function's own lists are written.

use super::literal;
use crate::onnx::metadata::{SignatureRecord, SIGNATURE_KEY};
use crate::onnx::ElemType;
use crate::proto::onnx::FunctionProto;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// torchlib's domain, where `@torch_op` puts a translation.
pub const TORCH_LIB_DOMAIN: &str = "pkg.onnxscript.torch_lib";

/// The recorded signature of `f`, when it names exactly `f`'s inputs and attributes.
pub fn recorded(f: &FunctionProto) -> Option<SignatureRecord> {
    let entry = f.metadata_props.iter().find(|e| e.key.as_deref() == Some(SIGNATURE_KEY))?;
    let record = SignatureRecord::from_json(entry.value.as_deref()?)?;
    let inputs: Vec<&str> = record.inputs.iter().map(|i| i.name.as_str()).collect();
    let attributes: HashSet<&str> = record.attributes.iter().map(|a| a.name.as_str()).collect();
    let declared: HashSet<&str> =
        f.attribute.iter().map(String::as_str).chain(f.attribute_proto.iter().map(|a| a.name())).collect();
    if inputs != f.input.iter().map(String::as_str).collect::<Vec<_>>() || attributes != declared {
        return None;
    }
    let all: BTreeSet<&str> = inputs.iter().copied().chain(attributes.iter().copied()).collect();
    let order: BTreeSet<&str> = record.parameters.iter().map(String::as_str).collect();
    let complete =
        record.parameters.is_empty() || (order == all && record.parameters.len() == inputs.len() + attributes.len());
    complete.then_some(record)
}

/// What annotations and decorators need imported.
#[derive(Default)]
pub struct TypeNeeds {
    /// Element types (`FLOAT`), from `onnxscript.onnx_types`.
    pub elements: BTreeSet<&'static str>,
    pub sequence: bool,
    /// `Tuple[...]` for several outputs.
    pub tuple: bool,
    pub torch_op: bool,
}

/// The TypeVars the module declares: name → element types (empty: any), the first
/// declaration of each name among the functions' records.
pub type TypeVars = BTreeMap<String, Vec<String>>;

/// The TypeVars of the records of `functions` that the module can declare: identifiers whose
/// element types onnxscript names; the first record of a name decides it.
pub fn type_vars(functions: &[FunctionProto]) -> TypeVars {
    let mut out = TypeVars::new();
    for r in functions.iter().filter_map(recorded) {
        for (name, members) in r.type_vars {
            let known = members.iter().all(|m| ElemType::from_script_name(m).is_some());
            if super::names::is_identifier(&name) && known {
                out.entry(name).or_insert(members);
            }
        }
    }
    out
}

/// An input's annotation: an element type, a TypeVar the module declares as the record does,
/// or a sequence of either (union aliases are not declared: such inputs are left unannotated).
pub fn input_annotation(
    ty: Option<&str>,
    record: &SignatureRecord,
    declared: &TypeVars,
    needs: &mut TypeNeeds,
) -> Option<String> {
    let ty = ty?;
    let (inner, sequence) = match ty.strip_prefix("Sequence[").and_then(|t| t.strip_suffix(']')) {
        Some(inner) => (inner, true),
        None => (ty, false),
    };
    if let Some(elem) = ElemType::from_script_name(inner) {
        needs.elements.insert(elem.script_name());
    } else if record.type_vars.get(inner).is_none_or(|m| declared.get(inner) != Some(m)) {
        return None;
    }
    needs.sequence |= sequence;
    Some(ty.to_string())
}

/// The return annotation, when every output's recorded type can be written: `FLOAT`, or
/// `Tuple[FLOAT, INT64]` for several outputs.
pub fn return_annotation(record: &SignatureRecord, declared: &TypeVars, needs: &mut TypeNeeds) -> Option<String> {
    let mut scratch = TypeNeeds::default();
    let types = record
        .outputs
        .iter()
        .map(|o| input_annotation(o.ty.as_deref(), record, declared, &mut scratch))
        .collect::<Option<Vec<_>>>()?;
    needs.elements.extend(scratch.elements);
    needs.sequence |= scratch.sequence;
    match types.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        many => {
            needs.tuple = true;
            Some(format!("Tuple[{}]", many.join(", ")))
        }
    }
}

/// `T = TypeVar("T", bound=Union[FLOAT, DOUBLE])` for each TypeVar.
pub fn type_var_declarations(declared: &TypeVars) -> String {
    let mut out = String::new();
    for (name, members) in declared {
        let bound = match members.as_slice() {
            [] => String::new(),
            [one] => format!(", bound={one}"),
            many => format!(", bound=Union[{}]", many.join(", ")),
        };
        out.push_str(&format!("{name} = TypeVar(\"{name}\"{bound})\n"));
    }
    out
}

/// A recorded default as a Python literal (`None` for JSON that is not a default's).
pub fn default_literal(v: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    Some(match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => literal::float64(f),
            _ => return None,
        },
        Value::String(s) => literal::string(s.as_bytes()).ok()?,
        Value::Array(items) => {
            let parts = items.iter().map(default_literal).collect::<Option<Vec<_>>>()?;
            format!("[{}]", parts.join(", "))
        }
        Value::Object(_) => return None,
    })
}

/// `@torch_op("aten::x")` (or a tuple of names) for a translation in torchlib's domain.
pub fn torch_op_decorator(record: &SignatureRecord, domain: &str, needs: &mut TypeNeeds) -> Option<String> {
    // A binding checks that what may be None in PyTorch may be None here: with optional
    // parameters written as plain ones, the function stays a `@script` one.
    let optional = record.inputs.iter().any(|i| i.optional) || record.attributes.iter().any(|a| a.optional);
    if record.torch_ops.is_empty() || domain != TORCH_LIB_DOMAIN || optional {
        return None;
    }
    let names = record.torch_ops.iter().map(|t| literal::string(t.name.as_bytes()).ok()).collect::<Option<Vec<_>>>()?;
    needs.torch_op = true;
    let ops = if names.len() == 1 { names[0].clone() } else { format!("({})", names.join(", ")) };
    let complex = if record.complex { ", complex=True" } else { "" };
    Some(format!("@torch_op({ops}{complex})"))
}
