//! Script-time Python values: what module constants, defaults and attribute arguments evaluate to.

use crate::schema::AttrType;

#[derive(Clone, Debug, PartialEq)]
pub enum PyValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    None,
    List(Vec<PyValue>),
}

impl PyValue {
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Bool(_) => "bool",
            PyValue::Str(_) => "str",
            PyValue::None => "None",
            PyValue::List(_) => "list",
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

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            PyValue::Int(i) => Some(*i),
            PyValue::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }

    /// The attribute type a value has when no schema says otherwise (onnx_ir's inference).
    pub fn inferred_attr_type(&self) -> Option<AttrType> {
        Some(match self {
            PyValue::Int(_) | PyValue::Bool(_) => AttrType::Int,
            PyValue::Float(_) => AttrType::Float,
            PyValue::Str(_) => AttrType::String,
            PyValue::None => return None,
            PyValue::List(items) => {
                let first = items.first()?;
                match first {
                    PyValue::Int(_) | PyValue::Bool(_)
                        if items.iter().all(|v| matches!(v, PyValue::Int(_) | PyValue::Bool(_))) =>
                    {
                        AttrType::Ints
                    }
                    PyValue::Int(_) | PyValue::Float(_) | PyValue::Bool(_)
                        if items.iter().all(|v| v.as_f64().is_some()) =>
                    {
                        AttrType::Floats
                    }
                    PyValue::Str(_) if items.iter().all(|v| matches!(v, PyValue::Str(_))) => AttrType::Strings,
                    _ => return None,
                }
            }
        })
    }

    /// Python's `repr`, for messages and the signature metadata.
    pub fn repr(&self) -> String {
        match self {
            PyValue::Int(i) => i.to_string(),
            PyValue::Float(f) => format_float(*f),
            PyValue::Bool(b) => {
                if *b {
                    "True".into()
                } else {
                    "False".into()
                }
            }
            PyValue::Str(s) => format!("{s:?}"),
            PyValue::None => "None".into(),
            PyValue::List(items) => format!("[{}]", items.iter().map(|v| v.repr()).collect::<Vec<_>>().join(", ")),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        match self {
            PyValue::Int(i) => (*i).into(),
            PyValue::Float(f) => {
                serde_json::Number::from_f64(*f).map(serde_json::Value::Number).unwrap_or(serde_json::Value::Null)
            }
            PyValue::Bool(b) => (*b).into(),
            PyValue::Str(s) => s.clone().into(),
            PyValue::None => serde_json::Value::Null,
            PyValue::List(items) => items.iter().map(|v| v.to_json()).collect::<Vec<_>>().into(),
        }
    }
}

/// A float as Python prints it: always with a `.` or exponent.
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else if f == f.trunc() && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}
