//! Python values as the IR's constants and attributes: what onnxscript makes of a value with
//! `ir.tensor(value)` and what onnx_ir makes of one for a schema's attribute. Lowering (script
//! time) and `trace` (trace time) convert the same way, from here.

use crate::ir::AttrValue;
use crate::onnx::tensor::Tensor;
use crate::onnx::{AttrType, ElemType};
use crate::sema::constlib;
use crate::sema::value::PyValue;

/// A script-time value as the `Constant` tensor onnxscript makes of it (`ir.tensor(value)`):
/// int → INT64, float → FLOAT, bool → BOOL, str → STRING, flat lists of ints or floats →
/// INT64 or FLOAT, other lists as numpy infers them (nested float lists are DOUBLE), tensors as
/// they are. `Err` says why there is none.
pub fn tensor_of(v: &PyValue) -> Result<Tensor, String> {
    tensor_of_type(v, None)
}

/// [`tensor_of`], of element type `elem` if given (`ir.tensor(value, dtype)`).
pub fn tensor_of_type(v: &PyValue, elem: Option<ElemType>) -> Result<Tensor, String> {
    if matches!(v, PyValue::None) {
        return Err("`None` has no tensor form".into());
    }
    constlib::ir_tensor(v, elem).map_err(|e| match e {
        constlib::LibError::Python(m) | constlib::LibError::Unsupported(m) => m,
        constlib::LibError::TooLarge(n) => format!("{n} elements exceed the constant size limit"),
        constlib::LibError::RunTime => "not known until run time".into(),
    })
}

/// A script-time value as an attribute of type `ty`, as onnx_ir converts it for a schema's
/// attribute (`Err(Some(why))` adds a note to the type mismatch).
pub fn attr_value(v: &PyValue, ty: AttrType) -> Result<AttrValue, Option<String>> {
    // A one-element numpy value reads as its number (`np.float32(0.5)`).
    let scalar = |v: &PyValue| match v {
        PyValue::Tensor(t) if t.is_scalar() => PyValue::scalar_of(t),
        other => Some(other.clone()),
    };
    let float = |v: &PyValue| scalar(v).and_then(|s| s.as_f64()).map(|f| f as f32);
    let int = |v: &PyValue| -> Result<i64, Option<String>> {
        match scalar(v) {
            Some(PyValue::Int(i)) => i64::try_from(i).map_err(|_| Some(format!("{i} does not fit in INT64"))),
            Some(PyValue::Bool(b)) => Ok(b as i64),
            _ => Err(None),
        }
    };
    let string = |v: &PyValue| match scalar(v) {
        Some(PyValue::Str(s)) => Some(s),
        _ => None,
    };
    let items = |v: &PyValue| -> Result<Vec<PyValue>, Option<String>> {
        match v {
            PyValue::List(s) => {
                if s.len() as u64 > crate::sema::value::MAX_CONSTANT_ELEMENTS {
                    return Err(Some("the list exceeds the constant size limit".into()));
                }
                Ok(s.to_vec())
            }
            PyValue::Tensor(t) if t.dims.len() == 1 => constlib::elements(t).map_err(|_| None),
            _ => Err(None),
        }
    };
    Ok(match ty {
        AttrType::Float => AttrValue::Float(float(v).ok_or(None)?),
        AttrType::Int => AttrValue::Int(int(v)?),
        AttrType::String => AttrValue::Str(string(v).ok_or(None)?),
        AttrType::Floats => AttrValue::Floats(items(v)?.iter().map(float).collect::<Option<_>>().ok_or(None)?),
        AttrType::Ints => AttrValue::Ints(items(v)?.iter().map(int).collect::<Result<_, _>>()?),
        AttrType::Strings => AttrValue::Strs(items(v)?.iter().map(string).collect::<Option<_>>().ok_or(None)?),
        AttrType::Tensor => AttrValue::Tensor(tensor_of(v).map_err(Some)?),
        _ => return Err(None),
    })
}
