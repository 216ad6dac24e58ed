//! Python values: what module constants, defaults and attribute arguments evaluate to (see
//! `sema::eval`), the constant tensors they become, and at trace time the values a graph
//! computes ([`GraphValue`]), element types read off them, and dimensions a call does not know.
//!
//! Lists and tuples share their items as CPython does: `b = [a, a]` holds `a` twice by
//! reference, so a chain of such constants costs memory linear in its text. Each sequence knows
//! its *weight*, the number of values it would hold if it were copied out; whatever copies a
//! value out (a tensor, an attribute, a string) first checks the weight against
//! [`MAX_CONSTANT_ELEMENTS`].

use crate::onnx::tensor::{Tensor, TensorData};
use crate::onnx::AttrType;
use crate::onnx::ElemType;
use std::sync::Arc;

/// The largest constant onnxsc builds: elements of a tensor or list (nested lists counted out),
/// characters of a string. Far above what a function library needs, far below what exhausts
/// memory. The limit is documented in docs/language.md; E0115 reports it.
pub const MAX_CONSTANT_ELEMENTS: u64 = 1 << 20;

#[derive(Clone, Debug)]
pub enum PyValue {
    /// A Python int. Python's are unbounded; the evaluator computes exactly within 128 bits and
    /// reports anything beyond (E0116), and consumers report a value that does not fit INT64.
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    None,
    /// A list or a tuple ([`Seq::is_tuple`]).
    List(Seq),
    /// A numpy array or scalar, an `onnx.TensorProto` or an `ir.Tensor`: a typed tensor.
    Tensor(Arc<Tensor>),
    /// Trace time: a value the graph computes (a tensor or a sequence of tensors), with what the
    /// call knows of it.
    Graph(Arc<GraphValue>),
    /// Trace time: an element type read off a value (`x.dtype`): an `ir.DataType`, an int enum.
    DType(ElemType),
    /// Trace time: a dimension the call does not know, by its symbol (`s0`).
    SymDim(Arc<str>),
}

/// A value of the graph being traced: its name there and what is known of it.
#[derive(Debug, PartialEq)]
pub struct GraphValue {
    pub name: String,
    pub ty: GraphType,
    /// An input of the call, whose type and shape the exporter knows. torch's recorder types
    /// none of the values a trace computes, so Python code sees `dtype` and `shape` as None on
    /// those ([`GraphValue::visible`]); `ty` still holds what the graph inferred, for its checks.
    pub from_call: bool,
}

/// What a call knows of a graph value: a tensor's element type and shape, or a sequence's
/// element type and, when the call knows how many tensors it holds, each one's shape (`None`:
/// not known).
#[derive(Clone, Debug, PartialEq)]
pub enum GraphType {
    Tensor { elem: Option<ElemType>, shape: Option<Vec<Dim>> },
    Sequence { elem: Option<ElemType>, items: Option<Vec<Option<Vec<Dim>>>> },
}

/// One dimension of a shape, as the IR names it (a trace's facts know each dimension, as a
/// number or a symbol).
pub use crate::ir::Dim;

impl GraphValue {
    pub fn elem(&self) -> Option<ElemType> {
        match &self.ty {
            GraphType::Tensor { elem, .. } | GraphType::Sequence { elem, .. } => *elem,
        }
    }

    /// What Python code sees of the value: its type and shape for an input of the call, nothing
    /// for a value the trace computed (as in the exporter).
    pub fn visible(&self) -> Option<&GraphType> {
        self.from_call.then_some(&self.ty)
    }

    pub fn shape(&self) -> Option<&[Dim]> {
        match &self.ty {
            GraphType::Tensor { shape, .. } => shape.as_deref(),
            GraphType::Sequence { .. } => None,
        }
    }

    /// The shape of each tensor of a sequence the call knows item by item.
    pub fn items(&self) -> Option<&[Option<Vec<Dim>>]> {
        match &self.ty {
            GraphType::Sequence { items, .. } => items.as_deref(),
            GraphType::Tensor { .. } => None,
        }
    }
}

/// The items of a list or tuple, shared between the values that hold them.
#[derive(Clone, Debug)]
pub struct Seq(Arc<SeqData>);

#[derive(Debug)]
struct SeqData {
    items: Vec<PyValue>,
    weight: u64,
    tuple: bool,
}

impl Seq {
    pub fn new(items: Vec<PyValue>, tuple: bool) -> Seq {
        let weight = items.iter().fold(1u64, |w, v| w.saturating_add(v.weight()));
        Seq(Arc::new(SeqData { items, weight, tuple }))
    }

    pub fn items(&self) -> &[PyValue] {
        &self.0.items
    }

    /// A tuple rather than a list.
    pub fn is_tuple(&self) -> bool {
        self.0.tuple
    }

    pub fn ptr_eq(&self, other: &Seq) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for Seq {
    type Target = [PyValue];

    fn deref(&self) -> &[PyValue] {
        &self.0.items
    }
}

impl<'a> IntoIterator for &'a Seq {
    type Item = &'a PyValue;
    type IntoIter = std::slice::Iter<'a, PyValue>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.items.iter()
    }
}

/// Structural equality (not Python's `==`, which `sema::eval` implements); shared items
/// compare equal without being visited.
impl PartialEq for PyValue {
    fn eq(&self, other: &PyValue) -> bool {
        match (self, other) {
            (PyValue::Int(a), PyValue::Int(b)) => a == b,
            (PyValue::Float(a), PyValue::Float(b)) => a.to_bits() == b.to_bits(),
            (PyValue::Bool(a), PyValue::Bool(b)) => a == b,
            (PyValue::Str(a), PyValue::Str(b)) => a == b,
            (PyValue::None, PyValue::None) => true,
            (PyValue::List(a), PyValue::List(b)) => {
                a.ptr_eq(b) || (a.is_tuple() == b.is_tuple() && a.items() == b.items())
            }
            (PyValue::Tensor(a), PyValue::Tensor(b)) => Arc::ptr_eq(a, b) || a == b,
            (PyValue::Graph(a), PyValue::Graph(b)) => Arc::ptr_eq(a, b) || a.name == b.name,
            // `ir.DataType` is an int enum.
            (PyValue::DType(a), PyValue::DType(b)) => a == b,
            (PyValue::DType(t), PyValue::Int(i)) | (PyValue::Int(i), PyValue::DType(t)) => t.code() as i128 == *i,
            (PyValue::SymDim(a), PyValue::SymDim(b)) => a == b,
            _ => false,
        }
    }
}

impl PyValue {
    /// The single element of a one-element tensor `t`, as a Python number (what `float(t)` or
    /// `int(t)` reads). `None` for other types or sizes.
    pub fn scalar_of(t: &Tensor) -> Option<PyValue> {
        if t.len() != 1 {
            return None;
        }
        Some(match &t.data {
            TensorData::Floats(v) if t.elem == ElemType::Float => PyValue::Float(*v.first()? as f64),
            TensorData::Doubles(v) if t.elem == ElemType::Double => PyValue::Float(*v.first()?),
            TensorData::Ints(v) => PyValue::Int(*v.first()? as i128),
            TensorData::Uints(v) => PyValue::Int(*v.first()? as i128),
            TensorData::Bools(v) => PyValue::Bool(*v.first()?),
            TensorData::Strings(v) => PyValue::Str(v.first()?.as_str().into()),
            _ => return None,
        })
    }

    pub fn str(s: &str) -> PyValue {
        PyValue::Str(s.into())
    }

    pub fn list(items: Vec<PyValue>) -> PyValue {
        PyValue::List(Seq::new(items, false))
    }

    pub fn tuple(items: Vec<PyValue>) -> PyValue {
        PyValue::List(Seq::new(items, true))
    }

    /// The items of a list or tuple.
    pub fn items(&self) -> Option<&[PyValue]> {
        match self {
            PyValue::List(s) => Some(s.items()),
            _ => None,
        }
    }

    /// How many values copying it out would produce (see the module docs).
    pub fn weight(&self) -> u64 {
        match self {
            PyValue::List(s) => s.0.weight,
            PyValue::Tensor(t) => t.len().max(1),
            _ => 1,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Bool(_) => "bool",
            PyValue::Str(_) => "str",
            PyValue::None => "None",
            PyValue::List(s) if s.is_tuple() => "tuple",
            PyValue::List(_) => "list",
            PyValue::Tensor(_) => "tensor",
            PyValue::Graph(_) => "Value",
            PyValue::DType(_) => "DataType",
            PyValue::SymDim(_) => "SymbolicDim",
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            PyValue::Int(i) => Some(*i as f64),
            PyValue::Float(f) => Some(*f),
            PyValue::Bool(b) => Some(*b as i64 as f64),
            _ => None,
        }
    }

    /// The value as an INT64, if it is an int (or bool) that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            PyValue::Int(i) => i64::try_from(*i).ok(),
            PyValue::Bool(b) => Some(*b as i64),
            PyValue::DType(t) => Some(i64::from(t.code())),
            _ => None,
        }
    }

    /// The attribute type a value has when no schema says otherwise (onnx_ir's inference).
    pub fn inferred_attr_type(&self) -> Option<AttrType> {
        Some(match self {
            PyValue::Int(_) | PyValue::Bool(_) => AttrType::Int,
            PyValue::Float(_) => AttrType::Float,
            PyValue::Str(_) => AttrType::String,
            PyValue::None | PyValue::Graph(_) | PyValue::SymDim(_) => return None,
            PyValue::DType(_) => AttrType::Int,
            PyValue::Tensor(_) => AttrType::Tensor,
            PyValue::List(_) => {
                let items = self.items()?;
                if items.iter().all(|v| matches!(v, PyValue::Int(_) | PyValue::Bool(_))) && !items.is_empty() {
                    AttrType::Ints
                } else if items.iter().all(|v| matches!(v, PyValue::Float(_))) && !items.is_empty() {
                    AttrType::Floats
                } else if items.iter().all(|v| matches!(v, PyValue::Str(_))) && !items.is_empty() {
                    AttrType::Strings
                } else {
                    return None;
                }
            }
        })
    }

    /// Python's `repr`, for messages, f-strings (`!r`) and the signature metadata. The caller
    /// keeps the value under [`MAX_CONSTANT_ELEMENTS`] (see `eval`).
    pub fn repr(&self) -> String {
        match self {
            PyValue::Int(i) => i.to_string(),
            PyValue::Float(f) => format_float(*f),
            PyValue::Bool(b) => if *b { "True" } else { "False" }.into(),
            PyValue::Str(s) => str_repr(s),
            PyValue::None => "None".into(),
            PyValue::List(s) if !s.is_tuple() => {
                format!("[{}]", s.iter().map(|v| v.repr()).collect::<Vec<_>>().join(", "))
            }
            PyValue::List(s) if s.len() == 1 => format!("({},)", s[0].repr()),
            PyValue::List(s) => format!("({})", s.iter().map(|v| v.repr()).collect::<Vec<_>>().join(", ")),
            PyValue::Tensor(t) => format!("<{} tensor of shape {:?}>", t.elem.script_name(), t.dims),
            PyValue::Graph(v) => format!("Value('{}')", v.name),
            PyValue::DType(t) => t.script_name().to_string(),
            PyValue::SymDim(s) => format!("SymbolicDim({})", str_repr(s)),
        }
    }

    /// A `repr` for messages, cut to about 60 characters; it never writes a large value out.
    pub fn brief(&self) -> String {
        const MAX: usize = 60;
        let text = match self {
            PyValue::List(s) if s.0.weight > 64 => {
                let kind = if s.is_tuple() { "tuple" } else { "list" };
                return format!("<a {kind} of {} items>", s.len());
            }
            PyValue::Str(s) if s.len() > MAX => format!("{}...", str_repr(&s.chars().take(MAX).collect::<String>())),
            other => other.repr(),
        };
        if text.chars().count() > MAX {
            format!("{}...", text.chars().take(MAX).collect::<String>())
        } else {
            text
        }
    }

    /// Python's truth value (`bool(v)`); `Err` with Python's message for an array of several
    /// elements.
    pub fn truth(&self) -> Result<bool, String> {
        Ok(match self {
            PyValue::Int(i) => *i != 0,
            PyValue::Float(f) => *f != 0.0,
            PyValue::Bool(b) => *b,
            PyValue::Str(s) => !s.is_empty(),
            PyValue::None => false,
            PyValue::List(s) => !s.is_empty(),
            PyValue::Tensor(t) => match t.len() {
                0 => return Err("ValueError: The truth value of an empty array is ambiguous".into()),
                1 => match PyValue::scalar_of(t) {
                    Some(v) => v.truth()?,
                    None => true,
                },
                _ => {
                    return Err("ValueError: The truth value of an array with more than one element is ambiguous".into())
                }
            },
            // Known only when the model runs: `sema::eval` reports it where it is tested.
            PyValue::Graph(_) => {
                return Err("TypeError: the truth value of a tensor is known only when the model runs".into())
            }
            PyValue::DType(t) => t.code() != 0,
            PyValue::SymDim(s) => return Err(format!("TypeError: the dimension `{s}` is not known for this call")),
        })
    }

    /// Whether a numpy value or tensor is in it (their text is numpy's, which onnxsc does not
    /// write: formatting one is not evaluated).
    pub fn has_tensor(&self) -> bool {
        match self {
            PyValue::Tensor(_) => true,
            PyValue::List(s) => s.iter().any(|v| v.has_tensor()),
            _ => false,
        }
    }

    /// Python's `str`: a string is itself, everything else its `repr`.
    pub fn to_str(&self) -> String {
        match self {
            PyValue::Str(s) => s.clone(),
            other => other.repr(),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        match self {
            PyValue::Int(i) => match i64::try_from(*i) {
                Ok(i) => i.into(),
                Err(_) => serde_json::Value::Null,
            },
            PyValue::Float(f) => {
                serde_json::Number::from_f64(*f).map(serde_json::Value::Number).unwrap_or(serde_json::Value::Null)
            }
            PyValue::Bool(b) => (*b).into(),
            PyValue::Str(s) => s.clone().into(),
            PyValue::None => serde_json::Value::Null,
            PyValue::List(s) => s.iter().map(|v| v.to_json()).collect::<Vec<_>>().into(),
            PyValue::Tensor(t) => PyValue::scalar_of(t).map(|v| v.to_json()).unwrap_or(serde_json::Value::Null),
            PyValue::DType(t) => i64::from(t.code()).into(),
            PyValue::Graph(_) | PyValue::SymDim(_) => serde_json::Value::Null,
        }
    }
}

/// A string as Python's `repr` writes it: single quotes unless the text has one and no double.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A float as Python's `repr` writes it: the shortest digits that read back to the same value,
/// in positional notation when the exponent is in `[-4, 16)`, scientific otherwise.
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits as `d.ddddde[-]x`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
        };
        format!("{sign}{body}")
    } else {
        let mantissa = if digits.len() == 1 { digits.clone() } else { format!("{}.{}", &digits[..1], &digits[1..]) };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exp_sign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python_repr() {
        for (f, text) in [
            (0.1, "0.1"),
            (1.0, "1.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (std::f64::consts::PI, "3.141592653589793"),
            (-0.0, "-0.0"),
            (1e300, "1e+300"),
        ] {
            assert_eq!(format_float(f), text, "{f:e}");
        }
    }

    #[test]
    fn shared_sequences_weigh_what_copying_them_out_would_produce() {
        let mut v = PyValue::list(vec![PyValue::Int(0)]);
        for _ in 0..40 {
            v = PyValue::list(vec![v.clone(), v]);
        }
        assert!(v.weight() > MAX_CONSTANT_ELEMENTS);
        assert_eq!(v, v.clone());
    }

    #[test]
    fn strings_repr_as_python() {
        assert_eq!(str_repr("a'b"), "\"a'b\"");
        assert_eq!(str_repr("a\"b'"), "'a\"b\\''");
        assert_eq!(str_repr("x\ny"), "'x\\ny'");
    }
}
