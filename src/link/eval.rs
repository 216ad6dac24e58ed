//! Constant evaluation of the single-element ops that attribute-only conditions are made of:
//! `Constant`, `Identity`, comparisons, `Not`/`And`/`Or`/`Xor`, `Cast` and `CastLike`, and
//! `ai.onnx.ml` `CategoryMapper` from a string (how a string attribute is compared before opset
//! 19).
//!
//! Anything else — more than one element, float16 and the float8 types, strings to or from
//! numbers, external data — is "unknown", and the condition is left alone.

use crate::onnx::tensor::{elements, Elements};
use crate::onnx::ElemType;
use crate::proto::onnx::{AttributeProto, NodeProto, TensorProto};

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
    pub dtype: ElemType,
    pub dims: Vec<i64>,
    pub scalar: Scalar,
}

impl Value {
    fn new(dtype: ElemType, dims: Vec<i64>, scalar: Scalar) -> Option<Value> {
        let scalar = normalize(dtype, scalar)?;
        Some(Value { dtype, dims, scalar })
    }

    /// The value of a one-element BOOL tensor, as `If` reads its condition.
    pub fn as_bool(&self) -> Option<bool> {
        match self.scalar {
            Scalar::Bool(b) if self.dtype == ElemType::Bool => Some(b),
            _ => None,
        }
    }
}

/// Brings a scalar into the range of `dtype` the way a C++ cast does (integers wrap), or `None`
/// for types not evaluated here.
fn normalize(dtype: ElemType, s: Scalar) -> Option<Scalar> {
    use ElemType::*;
    Some(match (dtype, s) {
        (Float, Scalar::Float(f)) => Scalar::Float(f as f32 as f64),
        (Double, Scalar::Float(f)) => Scalar::Float(f),
        (Int8, Scalar::Int(i)) => Scalar::Int(i as i8 as i64),
        (Uint8, Scalar::Int(i)) => Scalar::Int(i as u8 as i64),
        (Int16, Scalar::Int(i)) => Scalar::Int(i as i16 as i64),
        (Uint16, Scalar::Int(i)) => Scalar::Int(i as u16 as i64),
        (Int32, Scalar::Int(i)) => Scalar::Int(i as i32 as i64),
        (Uint32, Scalar::Int(i)) => Scalar::Int(i as u32 as i64),
        (Int64, Scalar::Int(i)) => Scalar::Int(i),
        // Above i64::MAX a UINT64 is not representable here.
        (Uint64, Scalar::Int(i)) if i >= 0 => Scalar::Int(i),
        (Bool, Scalar::Bool(b)) => Scalar::Bool(b),
        (String, Scalar::Str(s)) => Scalar::Str(s),
        _ => return None,
    })
}

/// The value of a one-element tensor held in the proto (not in external data).
pub fn tensor_value(t: &TensorProto) -> Option<Value> {
    if t.dims.iter().any(|d| *d != 1) || t.data_location == Some(1) || !t.external_data.is_empty() {
        return None;
    }
    let dtype = ElemType::from_code(t.data_type.unwrap_or(0).into())?;
    let data = elements(t)?;
    if data.len() != 1 {
        return None;
    }
    let int = match &data {
        Elements::Signed(v) => Some(v[0]),
        Elements::Unsigned(v) => Some(v[0] as i64),
        _ => None,
    };
    let scalar = match (dtype, &data) {
        (ElemType::Float, Elements::Float(v)) => Scalar::Float(v[0] as f64),
        (ElemType::Double, Elements::Double(v)) => Scalar::Float(v[0]),
        (ElemType::String, Elements::Bytes(v)) => Scalar::Str(v[0].clone()),
        (ElemType::Bool, _) => Scalar::Bool(int? != 0),
        (
            ElemType::Int8
            | ElemType::Uint8
            | ElemType::Int16
            | ElemType::Uint16
            | ElemType::Int32
            | ElemType::Uint32
            | ElemType::Int64
            | ElemType::Uint64,
            _,
        ) => Scalar::Int(int?),
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
        "value_float" => Value::new(ElemType::Float, vec![], Scalar::Float(a.f? as f64)),
        "value_int" => Value::new(ElemType::Int64, vec![], Scalar::Int(a.i?)),
        "value_string" => Value::new(ElemType::String, vec![], Scalar::Str(a.s.clone()?)),
        "value_floats" => Value::new(ElemType::Float, one(a.floats.len())?, Scalar::Float(a.floats[0] as f64)),
        "value_ints" => Value::new(ElemType::Int64, one(a.ints.len())?, Scalar::Int(a.ints[0])),
        "value_strings" => Value::new(ElemType::String, one(a.strings.len())?, Scalar::Str(a.strings[0].clone())),
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
        ("Not", [x]) => Value::new(ElemType::Bool, x.dims.clone(), Scalar::Bool(!x.as_bool()?)),
        ("Cast", [x]) => cast(x, ElemType::from_code(int_attr("to")?)?),
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
            Value::new(ElemType::Bool, dims, Scalar::Bool(result))
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
    Value::new(ElemType::Int64, x.dims.clone(), Scalar::Int(mapped))
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
fn cast(x: &Value, to: ElemType) -> Option<Value> {
    use ElemType::{Bool, Double, Float, String};
    let scalar = match (&x.scalar, to) {
        (Scalar::Str(_), _) | (_, String) => return None,
        (Scalar::Float(f), Bool) => Scalar::Bool(*f != 0.0),
        (Scalar::Int(i), Bool) => Scalar::Bool(*i != 0),
        (Scalar::Bool(b), Bool) => Scalar::Bool(*b),
        (Scalar::Float(f), Float | Double) => Scalar::Float(*f),
        (Scalar::Int(i), Float | Double) => Scalar::Float(*i as f64),
        (Scalar::Bool(b), Float | Double) => Scalar::Float(*b as i64 as f64),
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
        let b = Value { dtype: ElemType::Float, dims: vec![], scalar: Scalar::Float(0.1) };
        assert_eq!(evaluate(&node("Equal", vec![]), &[&a, &b]).unwrap().as_bool(), Some(false));
        let b = Value::new(ElemType::Float, vec![], Scalar::Float(0.1)).unwrap();
        assert_eq!(evaluate(&node("Equal", vec![]), &[&a, &b]).unwrap().as_bool(), Some(true));
    }

    #[test]
    fn casts_wrap_and_refuse_undefined_ones() {
        let x = Value::new(ElemType::Int64, vec![], Scalar::Int(300)).unwrap();
        let y = evaluate(&node("Cast", vec![attr_i("to", ElemType::Uint8.code().into())]), &[&x]).unwrap();
        assert_eq!(y.scalar, Scalar::Int(44));
        let big = Value::new(ElemType::Float, vec![], Scalar::Float(1e20)).unwrap();
        assert_eq!(evaluate(&node("Cast", vec![attr_i("to", ElemType::Int32.code().into())]), &[&big]), None);
        let b = evaluate(&node("Cast", vec![attr_i("to", ElemType::Bool.code().into())]), &[&x]).unwrap();
        assert_eq!(b.as_bool(), Some(true));
    }

    #[test]
    fn raw_data_scalars() {
        let t = TensorProto {
            data_type: Some(ElemType::Int32.code()),
            raw_data: Some((-5i32).to_le_bytes().to_vec()),
            ..Default::default()
        };
        assert_eq!(tensor_value(&t).unwrap().scalar, Scalar::Int(-5));
        let t =
            TensorProto { data_type: Some(ElemType::Int32.code()), raw_data: Some(vec![1, 2]), ..Default::default() };
        assert_eq!(tensor_value(&t), None, "a short raw_data is not a value");
        let t = TensorProto {
            data_type: Some(ElemType::Float.code()),
            dims: vec![2],
            float_data: vec![1.0, 2.0],
            ..Default::default()
        };
        assert_eq!(tensor_value(&t), None, "two elements are not folded");
    }
}
