//! numpy's arithmetic on constant arrays and numpy scalars: `np.float32(0.5) * 2`,
//! `np.array([1.0, 2.0]) / 3`.
//!
//! One job: the result type and bits numpy 2 gives for `+ - * /` and unary `-`, with NEP 50's
//! promotion (a Python number takes the array's type; two arrays promote as `np.result_type`).
//! Float16 and bfloat16 compute in float32 and round back, as numpy and ml_dtypes do. What numpy
//! computes differently from Python (integer overflow wraps, `//` and `%` by zero give 0) and
//! the other operators are not evaluated: the caller reports them.

use super::constlib;
use super::convert::{self, Overflow};
use super::value::PyValue;
use crate::onnx::tensor::Tensor;
use crate::onnx::ElemType;
use crate::syntax::ast::BinOp;

/// Why numpy arithmetic has no value here.
pub enum NumpyError {
    /// numpy raises (an int out of the array type's range).
    Python(String),
    /// onnxsc does not evaluate it.
    Unsupported(String),
}

type R<T> = Result<T, NumpyError>;

fn unsupported(what: impl Into<String>) -> NumpyError {
    NumpyError::Unsupported(what.into())
}

/// An operand: an array (or numpy scalar), or a Python number.
enum Operand<'a> {
    Array(&'a Tensor),
    Python(&'a PyValue),
}

fn operand(v: &PyValue) -> R<Operand<'_>> {
    match v {
        PyValue::Tensor(t) => Ok(Operand::Array(t)),
        PyValue::Int(_) | PyValue::Float(_) | PyValue::Bool(_) => Ok(Operand::Python(v)),
        other => Err(unsupported(format!("numpy arithmetic with a {}", other.type_name()))),
    }
}

fn is_int(t: ElemType) -> bool {
    t.int_range().is_some() && !matches!(t, ElemType::Int4 | ElemType::Uint4 | ElemType::Int2 | ElemType::Uint2)
}

fn is_signed(t: ElemType) -> bool {
    matches!(t, ElemType::Int8 | ElemType::Int16 | ElemType::Int32 | ElemType::Int64)
}

fn is_float(t: ElemType) -> bool {
    matches!(t, ElemType::Float16 | ElemType::Bfloat16 | ElemType::Float | ElemType::Double)
}

fn signed_of_bits(bits: u32) -> Option<ElemType> {
    Some(match bits {
        8 => ElemType::Int8,
        16 => ElemType::Int16,
        32 => ElemType::Int32,
        64 => ElemType::Int64,
        _ => return None,
    })
}

/// `np.result_type(a, b)` for the types numpy arithmetic here supports.
fn promote(a: ElemType, b: ElemType) -> Option<ElemType> {
    use ElemType::*;
    if a == b {
        return Some(a);
    }
    if a == Bool {
        return Some(b);
    }
    if b == Bool {
        return Some(a);
    }
    let (fa, fb) = (is_float(a), is_float(b));
    if fa && fb {
        return Some(match (a, b) {
            (Float16, Bfloat16) | (Bfloat16, Float16) => Float,
            _ if a.bits() >= b.bits() => a,
            _ => b,
        });
    }
    if fa || fb {
        let (f, i) = if fa { (a, b) } else { (b, a) };
        let needed = match i.bits() {
            8 => Float16,
            16 => Float,
            _ => Double,
        };
        if f == Bfloat16 {
            return None;
        }
        return Some(if f.bits() >= needed.bits() { f } else { needed });
    }
    if is_signed(a) == is_signed(b) {
        return Some(if a.bits() >= b.bits() { a } else { b });
    }
    let (s, u) = if is_signed(a) { (a, b) } else { (b, a) };
    if u.bits() < s.bits() {
        Some(s)
    } else {
        signed_of_bits(u.bits() * 2).or(Some(Double))
    }
}

/// The type of a Python number meeting an array of type `t` (NEP 50).
fn weak(t: ElemType, v: &PyValue) -> ElemType {
    match v {
        PyValue::Bool(_) => t,
        PyValue::Int(_) if t == ElemType::Bool => ElemType::Int64,
        PyValue::Float(_) if !is_float(t) => ElemType::Double,
        _ => t,
    }
}

/// The elements of an operand as exact numbers: ints as `i128`, floats as `f64`.
#[derive(Clone, Copy)]
enum Num {
    I(i128),
    F(f64),
}

fn numbers(t: &Tensor) -> R<Vec<Num>> {
    let items = match t.elem {
        ElemType::Float16 | ElemType::Bfloat16 => {
            let values = convert::decode_16(t).ok_or_else(|| unsupported("this array"))?;
            return Ok(values.into_iter().map(Num::F).collect());
        }
        _ => {
            constlib::elements(t).map_err(|_| unsupported(format!("arithmetic on {} arrays", t.elem.script_name())))?
        }
    };
    items
        .into_iter()
        .map(|v| match v {
            PyValue::Int(i) => Ok(Num::I(i)),
            PyValue::Bool(b) => Ok(Num::I(b as i128)),
            PyValue::Float(f) => Ok(Num::F(f)),
            _ => Err(unsupported("arithmetic on strings")),
        })
        .collect()
}

fn python_number(v: &PyValue) -> Num {
    match v {
        PyValue::Int(i) => Num::I(*i),
        PyValue::Bool(b) => Num::I(*b as i128),
        PyValue::Float(f) => Num::F(*f),
        _ => Num::I(0),
    }
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::I(i) => i as f64,
        Num::F(f) => f,
    }
}

/// One element operation in type `t`: floats in their own precision (float16 and bfloat16
/// through float32), ints exactly (an overflow is numpy's wraparound: not evaluated).
fn apply(op: BinOp, t: ElemType, a: Num, b: Num) -> R<PyValue> {
    if is_float(t) {
        // Each operand is first a value of the result type (numpy casts a Python number to the
        // array's type), then float16 and bfloat16 compute in float32.
        let (a, b) = (Num::F(convert::round_to(t, as_f64(a))), Num::F(convert::round_to(t, as_f64(b))));
        let v = match t {
            ElemType::Double => {
                let (x, y) = (as_f64(a), as_f64(b));
                match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mult => x * y,
                    _ => x / y,
                }
            }
            _ => {
                let (x, y) = (as_f64(a) as f32, as_f64(b) as f32);
                (match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mult => x * y,
                    _ => x / y,
                }) as f64
            }
        };
        return Ok(PyValue::Float(v));
    }
    let (Num::I(x), Num::I(y)) = (a, b) else {
        return Err(unsupported("mixing floats into integer arrays"));
    };
    let v = match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        _ => x.checked_mul(y),
    };
    let (lo, hi) = t.int_range().unwrap_or((i64::MIN as i128, i64::MAX as i128));
    match v {
        Some(v) if (lo..=hi).contains(&v) => Ok(PyValue::Int(v)),
        _ => Err(unsupported(format!("an integer overflow in {} arithmetic (numpy wraps around)", t.numpy_name()))),
    }
}

/// `l op r` where one side is an array or numpy scalar.
pub fn binop(op: BinOp, l: &PyValue, r: &PyValue) -> R<PyValue> {
    if !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mult | BinOp::Div) {
        return Err(unsupported(format!("`{}` on numpy arrays or tensors", op.symbol())));
    }
    let (lo, ro) = (operand(l)?, operand(r)?);
    let elem_of = |o: &Operand| match o {
        Operand::Array(t) => Some(t.elem),
        Operand::Python(_) => None,
    };
    let mut result = match (&lo, &ro) {
        (Operand::Array(a), Operand::Array(b)) => promote(a.elem, b.elem),
        (Operand::Array(a), Operand::Python(v)) | (Operand::Python(v), Operand::Array(a)) => Some(weak(a.elem, v)),
        _ => None,
    }
    .filter(|t| is_float(*t) || is_int(*t) || *t == ElemType::Bool)
    .ok_or_else(|| unsupported("numpy arithmetic between these types"))?;
    if op == BinOp::Div && !is_float(result) {
        result = ElemType::Double;
    }
    if result == ElemType::Bool {
        return Err(unsupported("numpy arithmetic on booleans"));
    }
    // A Python int must fit the array's integer type (numpy 2 raises).
    for (o, other) in [(&lo, &ro), (&ro, &lo)] {
        if let (Operand::Python(PyValue::Int(i)), Some(t)) = (o, elem_of(other)) {
            if is_int(t) && weak(t, &PyValue::Int(*i)) == t {
                let (min, max) = t.int_range().unwrap_or((0, 0));
                if *i < min || *i > max {
                    return Err(NumpyError::Python(format!(
                        "OverflowError: Python integer {i} out of bounds for {}",
                        t.numpy_name()
                    )));
                }
            }
        }
    }
    let values = |o: &Operand| -> R<(Vec<Num>, Option<Vec<i64>>)> {
        match o {
            Operand::Array(t) => Ok((numbers(t)?, Some(t.dims.clone()))),
            Operand::Python(v) => Ok((vec![python_number(v)], None)),
        }
    };
    let ((a, adims), (b, bdims)) = (values(&lo)?, values(&ro)?);
    let dims = match (adims, bdims) {
        (Some(x), Some(y)) if x == y => x,
        (Some(x), Some(y)) if y.is_empty() => x,
        (Some(x), Some(y)) if x.is_empty() => y,
        (Some(_), Some(_)) => return Err(unsupported("broadcasting arrays of different shapes")),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => Vec::new(),
    };
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let x = a[if a.len() == 1 { 0 } else { k }];
        let y = b[if b.len() == 1 { 0 } else { k }];
        out.push(apply(op, result, x, y)?);
    }
    tensor(result, dims, &out)
}

/// `-array`.
pub fn negate(t: &Tensor) -> R<PyValue> {
    let zero = PyValue::Tensor(std::sync::Arc::new(Tensor {
        elem: t.elem,
        dims: Vec::new(),
        data: convert::encode(t.elem, &[PyValue::Int(0)], Overflow::Ieee).map_err(NumpyError::Python)?,
    }));
    if is_float(t.elem) {
        // -x is exact, and keeps the sign of zero: 0 - x would not.
        let values: Vec<PyValue> = numbers(t)?.into_iter().map(|n| PyValue::Float(-as_f64(n))).collect();
        return tensor(t.elem, t.dims.clone(), &values);
    }
    binop(BinOp::Sub, &zero, &PyValue::Tensor(std::sync::Arc::new(t.clone())))
}

fn tensor(elem: ElemType, dims: Vec<i64>, values: &[PyValue]) -> R<PyValue> {
    let data = convert::encode(elem, values, Overflow::Ieee).map_err(NumpyError::Python)?;
    Ok(PyValue::Tensor(std::sync::Arc::new(Tensor { elem, dims, data })))
}
