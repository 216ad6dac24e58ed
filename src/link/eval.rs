//! Constant evaluation of the single-element ops that attribute-only conditions are made of:
//! `Constant`, `Identity`, comparisons, `Not`/`And`/`Or`/`Xor`, `Cast` and `CastLike`, and
//! `ai.onnx.ml` `CategoryMapper` from a string (how a string attribute is compared before opset
//! 19).
//!
//! Anything else — more than one element, float16 and the float8 types, strings to or from
//! numbers, external data — is "unknown", and the condition is left alone.

use crate::proto::onnx::{AttributeProto, NodeProto, TensorProto};

// TensorProto.DataType codes.
const FLOAT: i32 = 1;
const UINT8: i32 = 2;
const INT8: i32 = 3;
const UINT16: i32 = 4;
const INT16: i32 = 5;
const INT32: i32 = 6;
const INT64: i32 = 7;
const STRING: i32 = 8;
pub const BOOL: i32 = 9;
const DOUBLE: i32 = 11;
const UINT32: i32 = 12;
const UINT64: i32 = 13;

#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// FLOAT values are kept rounded to f32, so comparing them in f64 is comparing in f32.
    Float(f64),
    Int(i64),
    Bool(bool),
    Str(Vec<u8>),
}

/// A one-element tensor: its data type, its dims (all 1, or none for a scalar) and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    pub dtype: i32,
    pub dims: Vec<i64>,
    pub scalar: Scalar,
}

impl Value {
    fn new(dtype: i32, dims: Vec<i64>, scalar: Scalar) -> Option<Value> {
        let scalar = normalize(dtype, scalar)?;
        Some(Value { dtype, dims, scalar })
    }

    /// The value of a one-element BOOL tensor, as `If` reads its condition.
    pub fn as_bool(&self) -> Option<bool> {
        match self.scalar {
            Scalar::Bool(b) if self.dtype == BOOL => Some(b),
            _ => None,
        }
    }
}

/// Brings a scalar into the range of `dtype` the way a C++ cast does (integers wrap), or `None`
/// for types not evaluated here.
fn normalize(dtype: i32, s: Scalar) -> Option<Scalar> {
    Some(match (dtype, s) {
        (FLOAT, Scalar::Float(f)) => Scalar::Float(f as f32 as f64),
        (DOUBLE, Scalar::Float(f)) => Scalar::Float(f),
        (INT8, Scalar::Int(i)) => Scalar::Int(i as i8 as i64),
        (UINT8, Scalar::Int(i)) => Scalar::Int(i as u8 as i64),
        (INT16, Scalar::Int(i)) => Scalar::Int(i as i16 as i64),
        (UINT16, Scalar::Int(i)) => Scalar::Int(i as u16 as i64),
        (INT32, Scalar::Int(i)) => Scalar::Int(i as i32 as i64),
        (UINT32, Scalar::Int(i)) => Scalar::Int(i as u32 as i64),
        (INT64, Scalar::Int(i)) => Scalar::Int(i),
        // Above i64::MAX a UINT64 is not representable here.
        (UINT64, Scalar::Int(i)) if i >= 0 => Scalar::Int(i),
        (BOOL, Scalar::Bool(b)) => Scalar::Bool(b),
        (STRING, Scalar::Str(s)) => Scalar::Str(s),
        _ => return None,
    })
}

/// The value of a one-element tensor held in the proto (not in external data).
pub fn tensor_value(t: &TensorProto) -> Option<Value> {
    if t.dims.iter().any(|d| *d != 1) || t.data_location == Some(1) || !t.external_data.is_empty() {
        return None;
    }
    let dtype = t.data_type();
    let raw = t.raw_data.as_deref().filter(|r| !r.is_empty());
    let le = |n: usize| -> Option<[u8; 8]> {
        let r = raw?;
        (r.len() == n).then(|| {
            let mut b = [0u8; 8];
            b[..n].copy_from_slice(r);
            b
        })
    };
    let scalar = match dtype {
        FLOAT => Scalar::Float(match raw {
            Some(_) => f32::from_le_bytes(le(4)?[..4].try_into().ok()?) as f64,
            None => *t.float_data.first()? as f64,
        }),
        DOUBLE => Scalar::Float(match raw {
            Some(_) => f64::from_le_bytes(le(8)?),
            None => *t.double_data.first()?,
        }),
        INT64 => Scalar::Int(match raw {
            Some(_) => i64::from_le_bytes(le(8)?),
            None => *t.int64_data.first()?,
        }),
        UINT32 | UINT64 => Scalar::Int(match raw {
            Some(_) => u64::from_le_bytes(le(if dtype == UINT32 { 4 } else { 8 })?) as i64,
            None => *t.uint64_data.first()? as i64,
        }),
        INT8 | UINT8 | INT16 | UINT16 | INT32 | BOOL => {
            let v = match raw {
                Some(_) => {
                    let width = match dtype {
                        INT16 | UINT16 => 2,
                        INT32 => 4,
                        _ => 1,
                    };
                    let b = le(width)?;
                    match dtype {
                        INT8 => b[0] as i8 as i64,
                        INT16 => i16::from_le_bytes([b[0], b[1]]) as i64,
                        INT32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
                        _ => u64::from_le_bytes(b) as i64,
                    }
                }
                None => *t.int32_data.first()? as i64,
            };
            if dtype == BOOL {
                Scalar::Bool(v != 0)
            } else {
                Scalar::Int(v)
            }
        }
        STRING => Scalar::Str(t.string_data.first()?.clone()),
        _ => return None,
    };
    Value::new(dtype, t.dims.clone(), scalar)
}

/// The value a `Constant` node produces, if it is a one-element tensor.
fn constant(node: &NodeProto) -> Option<Value> {
    let [a] = node.attribute.as_slice() else { return None };
    if a.ref_attr_name.is_some() {
        return None;
    }
    let one = |n: usize| (n == 1).then(|| vec![1]);
    match a.name() {
        "value" => tensor_value(a.t.as_ref()?),
        "value_float" => Value::new(FLOAT, vec![], Scalar::Float(a.f? as f64)),
        "value_int" => Value::new(INT64, vec![], Scalar::Int(a.i?)),
        "value_string" => Value::new(STRING, vec![], Scalar::Str(a.s.clone()?)),
        "value_floats" => Value::new(FLOAT, one(a.floats.len())?, Scalar::Float(a.floats[0] as f64)),
        "value_ints" => Value::new(INT64, one(a.ints.len())?, Scalar::Int(a.ints[0])),
        "value_strings" => Value::new(STRING, one(a.strings.len())?, Scalar::Str(a.strings[0].clone())),
        _ => None,
    }
}

/// Whether `op_type` (in the default domain) is one [`evaluate`] knows.
pub fn is_foldable(node: &NodeProto) -> bool {
    if node.domain() == "ai.onnx.ml" {
        return node.op_type() == "CategoryMapper";
    }
    matches!(node.domain(), "" | "ai.onnx")
        && matches!(
            node.op_type(),
            "Constant"
                | "Identity"
                | "Not"
                | "And"
                | "Or"
                | "Xor"
                | "Equal"
                | "Less"
                | "LessOrEqual"
                | "Greater"
                | "GreaterOrEqual"
                | "Cast"
                | "CastLike"
        )
}

/// The single output value of a foldable node whose inputs are all known, or `None`.
pub fn evaluate(node: &NodeProto, inputs: &[&Value]) -> Option<Value> {
    if !is_foldable(node) || node.output.len() != 1 {
        return None;
    }
    let int_attr = |name: &str| {
        node.attribute.iter().find(|a| a.name() == name && a.ref_attr_name.is_none()).and_then(|a: &AttributeProto| a.i)
    };
    match (node.op_type(), inputs) {
        ("Constant", []) => constant(node),
        ("CategoryMapper", [x]) => category(node, x),
        ("Identity", [x]) => Some((*x).clone()),
        ("Not", [x]) => Value::new(BOOL, x.dims.clone(), Scalar::Bool(!x.as_bool()?)),
        ("Cast", [x]) => cast(x, i32::try_from(int_attr("to")?).ok()?),
        ("CastLike", [x, like]) => cast(x, like.dtype),
        (op, [a, b]) => {
            if a.dtype != b.dtype {
                return None;
            }
            let dims = if a.dims.len() >= b.dims.len() { a.dims.clone() } else { b.dims.clone() };
            let result = match (op, &a.scalar, &b.scalar) {
                ("And", Scalar::Bool(x), Scalar::Bool(y)) => *x && *y,
                ("Or", Scalar::Bool(x), Scalar::Bool(y)) => *x || *y,
                ("Xor", Scalar::Bool(x), Scalar::Bool(y)) => *x != *y,
                ("Equal", x, y) => x == y,
                (_, Scalar::Float(x), Scalar::Float(y)) => compare(op, x.partial_cmp(y))?,
                (_, Scalar::Int(x), Scalar::Int(y)) => compare(op, Some(x.cmp(y)))?,
                _ => return None,
            };
            Value::new(BOOL, dims, Scalar::Bool(result))
        }
        _ => None,
    }
}

/// `CategoryMapper` of a string: the integer of its category, else `default_int64` (-1).
fn category(node: &NodeProto, x: &Value) -> Option<Value> {
    let Scalar::Str(s) = &x.scalar else { return None };
    let attr = |name: &str| node.attribute.iter().find(|a| a.name() == name && a.ref_attr_name.is_none());
    let strings = &attr("cats_strings")?.strings;
    let ints = &attr("cats_int64s")?.ints;
    let default = attr("default_int64").and_then(|a| a.i).unwrap_or(-1);
    let mapped = strings.iter().position(|c| c == s).map_or(Some(default), |k| ints.get(k).copied())?;
    Value::new(INT64, x.dims.clone(), Scalar::Int(mapped))
}

/// `Less` & co. on an ordering; NaN (no ordering) compares false.
fn compare(op: &str, ord: Option<std::cmp::Ordering>) -> Option<bool> {
    use std::cmp::Ordering::*;
    let Some(o) = ord else { return Some(false) };
    Some(match op {
        "Less" => o == Less,
        "LessOrEqual" => o != Greater,
        "Greater" => o == Greater,
        "GreaterOrEqual" => o != Less,
        _ => return None,
    })
}

/// ONNX `Cast` between the numeric and boolean types (strings are not converted here).
fn cast(x: &Value, to: i32) -> Option<Value> {
    let scalar = match (&x.scalar, to) {
        (Scalar::Str(_), _) | (_, STRING) => return None,
        (Scalar::Float(f), BOOL) => Scalar::Bool(*f != 0.0),
        (Scalar::Int(i), BOOL) => Scalar::Bool(*i != 0),
        (Scalar::Bool(b), BOOL) => Scalar::Bool(*b),
        (Scalar::Float(f), FLOAT | DOUBLE) => Scalar::Float(*f),
        (Scalar::Int(i), FLOAT | DOUBLE) => Scalar::Float(*i as f64),
        (Scalar::Bool(b), FLOAT | DOUBLE) => Scalar::Float(*b as i64 as f64),
        // Out of range float-to-int casts are undefined in ONNX: leave them to the runtime.
        (Scalar::Float(f), _) => {
            let t = f.trunc();
            if !(t.is_finite() && t >= i64::MIN as f64 && t < i64::MAX as f64) {
                return None;
            }
            let v = Scalar::Int(t as i64);
            if normalize(to, v.clone())? != v {
                return None;
            }
            v
        }
        (Scalar::Int(i), _) => Scalar::Int(*i),
        (Scalar::Bool(b), _) => Scalar::Int(*b as i64),
    };
    Value::new(to, x.dims.clone(), scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(op: &str, attrs: Vec<AttributeProto>) -> NodeProto {
        NodeProto { op_type: Some(op.into()), output: vec!["y".into()], attribute: attrs, ..Default::default() }
    }

    fn attr_f(name: &str, f: f32) -> AttributeProto {
        AttributeProto { name: Some(name.into()), f: Some(f), r#type: Some(1), ..Default::default() }
    }

    fn attr_i(name: &str, i: i64) -> AttributeProto {
        AttributeProto { name: Some(name.into()), i: Some(i), r#type: Some(2), ..Default::default() }
    }

    #[test]
    fn float_comparisons_are_in_f32() {
        let a = evaluate(&node("Constant", vec![attr_f("value_float", 0.1)]), &[]).unwrap();
        let b = Value { dtype: FLOAT, dims: vec![], scalar: Scalar::Float(0.1) };
        assert_eq!(evaluate(&node("Equal", vec![]), &[&a, &b]).unwrap().as_bool(), Some(false));
        let b = Value::new(FLOAT, vec![], Scalar::Float(0.1)).unwrap();
        assert_eq!(evaluate(&node("Equal", vec![]), &[&a, &b]).unwrap().as_bool(), Some(true));
    }

    #[test]
    fn casts_wrap_and_refuse_undefined_ones() {
        let x = Value::new(INT64, vec![], Scalar::Int(300)).unwrap();
        let y = evaluate(&node("Cast", vec![attr_i("to", UINT8 as i64)]), &[&x]).unwrap();
        assert_eq!(y.scalar, Scalar::Int(44));
        let big = Value::new(FLOAT, vec![], Scalar::Float(1e20)).unwrap();
        assert_eq!(evaluate(&node("Cast", vec![attr_i("to", INT32 as i64)]), &[&big]), None);
        let b = evaluate(&node("Cast", vec![attr_i("to", BOOL as i64)]), &[&x]).unwrap();
        assert_eq!(b.as_bool(), Some(true));
    }

    #[test]
    fn raw_data_scalars() {
        let t = TensorProto {
            data_type: Some(INT32),
            raw_data: Some((-5i32).to_le_bytes().to_vec()),
            ..Default::default()
        };
        assert_eq!(tensor_value(&t).unwrap().scalar, Scalar::Int(-5));
        let t = TensorProto { data_type: Some(INT32), raw_data: Some(vec![1, 2]), ..Default::default() };
        assert_eq!(tensor_value(&t), None, "a short raw_data is not a value");
        let t = TensorProto { data_type: Some(FLOAT), dims: vec![2], float_data: vec![1.0, 2.0], ..Default::default() };
        assert_eq!(tensor_value(&t), None, "two elements are not folded");
    }
}
