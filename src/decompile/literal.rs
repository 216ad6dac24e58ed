//! Python literals for ONNX values: numbers written so that onnxsc's conversion gives back the
//! same bits, strings with Python's escapes, and tensors as `op.Constant(value=...)` literals or
//! `helper.make_tensor(...)` calls.

use super::Unsupported;
use crate::onnx::tensor::{elements, Elements};
use crate::onnx::ElemType;
use crate::proto::onnx::TensorProto;
use std::fmt::Write;

/// The most elements a constant may hold in `.onnxs` (`sema::value::MAX_CONSTANT_ELEMENTS`, E0115):
/// a larger tensor would be written, and then refused when compiled.
const MAX_ELEMENTS: usize = 1 << 20;

/// A float32 as a Python float literal that converts back to the same float32: the shortest
/// decimal when the double it denotes rounds to it, else the double's own digits.
pub fn float32(v: f32) -> String {
    if !v.is_finite() {
        return non_finite(f64::from(v));
    }
    let short = format!("{v:?}");
    match short.parse::<f64>() {
        #[allow(clippy::cast_possible_truncation, reason = "the conversion checked is onnxsc's own, double to float32")]
        Ok(d) if (d as f32).to_bits() == v.to_bits() => short,
        _ => float64(f64::from(v)),
    }
}

/// A double as a Python float literal (Rust's shortest round-trip digits, which Python reads).
pub fn float64(v: f64) -> String {
    if v.is_finite() {
        format!("{v:?}")
    } else {
        non_finite(v)
    }
}

fn non_finite(v: f64) -> String {
    if v.is_nan() {
        "float(\"nan\")".into()
    } else if v > 0.0 {
        "float(\"inf\")".into()
    } else {
        "float(\"-inf\")".into()
    }
}

/// A Python string literal for UTF-8 bytes (`Unsupported` for other bytes: `.onnxs` strings are
/// text).
pub fn string(bytes: &[u8]) -> Result<String, Unsupported> {
    let text = std::str::from_utf8(bytes).map_err(|_| Unsupported::new("a string that is not UTF-8"))?;
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

/// `[a, b, c]`.
pub fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    let parts: Vec<String> = items.iter().map(f).collect();
    format!("[{}]", parts.join(", "))
}

/// `[a, b]` of strings.
pub fn strings(items: &[Vec<u8>]) -> Result<String, Unsupported> {
    let parts = items.iter().map(|s| string(s)).collect::<Result<Vec<_>, _>>()?;
    Ok(format!("[{}]", parts.join(", ")))
}

/// The elements of a tensor as Python values.
fn values(t: &TensorProto, elem: ElemType) -> Result<Vec<String>, Unsupported> {
    if crate::link::load::is_external(t) {
        return Err(Unsupported::new("a tensor kept in external data"));
    }
    let Some(elems) = elements(t) else {
        return Err(Unsupported::new("a tensor whose data does not decode"));
    };
    if elems.len() > MAX_ELEMENTS {
        return Err(Unsupported::new(format!(
            "a tensor of {} elements, more than the {MAX_ELEMENTS} a constant of the language may hold",
            elems.len()
        )));
    }
    let bits = |v: u64| u16::try_from(v).ok();
    Ok(match (elem, elems) {
        (ElemType::String, Elements::Bytes(b)) => b.iter().map(|s| string(s)).collect::<Result<_, _>>()?,
        (ElemType::Float, Elements::Float(v)) => v.iter().map(|x| float32(*x)).collect(),
        (ElemType::Double, Elements::Double(v)) => v.iter().map(|x| float64(*x)).collect(),
        (ElemType::Bool, Elements::Signed(v)) => v.iter().map(|x| bool_literal(*x != 0)).collect(),
        (ElemType::Bool, Elements::Unsigned(v)) => v.iter().map(|x| bool_literal(*x != 0)).collect(),
        (ElemType::Float16 | ElemType::Bfloat16, Elements::Signed(v)) => {
            v.iter().map(|x| half(elem, u16::try_from(*x).ok())).collect::<Result<_, _>>()?
        }
        (ElemType::Float16 | ElemType::Bfloat16, Elements::Unsigned(v)) => {
            v.iter().map(|x| half(elem, bits(*x))).collect::<Result<_, _>>()?
        }
        (
            ElemType::Int8
            | ElemType::Int16
            | ElemType::Int32
            | ElemType::Int64
            | ElemType::Uint8
            | ElemType::Uint16
            | ElemType::Uint32
            | ElemType::Uint64,
            Elements::Signed(v),
        ) => v.iter().map(i64::to_string).collect(),
        (
            ElemType::Uint8 | ElemType::Uint16 | ElemType::Uint32 | ElemType::Uint64 | ElemType::Int64,
            Elements::Unsigned(v),
        ) => v.iter().map(u64::to_string).collect(),
        (elem, _) => {
            return Err(Unsupported::new(format!("a tensor of {} elements", elem.script_name())));
        }
    })
}

fn bool_literal(b: bool) -> String {
    if b { "True" } else { "False" }.into()
}

/// A float16 or bfloat16 (given by its bits) as the exact double it denotes.
fn half(elem: ElemType, bits: Option<u16>) -> Result<String, Unsupported> {
    let bits = bits.ok_or_else(|| Unsupported::new("a 16-bit float tensor with out-of-range data"))?;
    let value = if elem == ElemType::Bfloat16 { f32::from_bits(u32::from(bits) << 16) } else { f16_to_f32(bits) };
    Ok(float64(f64::from(value)))
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 == 0 { 1.0 } else { -1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f32::from(h & 0x3ff);
    match exp {
        0 => sign * frac * 2f32.powi(-24),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => sign * (1.0 + frac / 1024.0) * 2f32.powi(e - 15),
    }
}

/// A tensor as the shortest expression onnxsc turns back into it as a `Constant`'s `value`:
/// `1`, `2.5`, `[1, 2]`, `"s"`, `True` where `op.Constant(value=...)` makes that tensor from a
/// literal (INT64 and FLOAT scalars and non-empty vectors, STRING and BOOL scalars), else
/// [`make_tensor`].
pub fn constant_value(t: &TensorProto) -> Result<String, Unsupported> {
    let elem = elem_of(t)?;
    let vals = values(t, elem)?;
    let scalar = t.dims.is_empty() && vals.len() == 1;
    let vector = t.dims.len() == 1 && !vals.is_empty();
    match elem {
        ElemType::Int64 | ElemType::Float if scalar => Ok(vals[0].clone()),
        ElemType::String | ElemType::Bool if scalar => Ok(vals[0].clone()),
        ElemType::Int64 if vector => Ok(format!("[{}]", vals.join(", "))),
        ElemType::Float if vector && vals.iter().all(|v| !v.starts_with("float(")) => {
            Ok(format!("[{}]", vals.join(", ")))
        }
        _ => make_tensor(t),
    }
}

fn elem_of(t: &TensorProto) -> Result<ElemType, Unsupported> {
    ElemType::from_code(t.data_type.unwrap_or(0).into())
        .ok_or_else(|| Unsupported::new(format!("a tensor of data type {}", t.data_type.unwrap_or(0))))
}

/// `helper.make_tensor("name", TensorProto.FLOAT, [dims], [values])`.
pub fn make_tensor(t: &TensorProto) -> Result<String, Unsupported> {
    if t.segment.is_some() {
        return Err(Unsupported::new("a tensor in segments"));
    }
    let elem = elem_of(t)?;
    let vals = values(t, elem)?;
    let name = string(t.name.as_deref().unwrap_or("").as_bytes())?;
    Ok(format!(
        "helper.make_tensor({name}, TensorProto.{}, {}, [{}])",
        elem.script_name(),
        list(&t.dims, i64::to_string),
        vals.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_trip_through_doubles() {
        assert_eq!(float32(0.5), "0.5");
        assert_eq!(float32(1e-9), "1e-9");
        assert_eq!(float32(f32::MAX), "3.4028235e38");
        for v in [0.1f32, 1.0 / 3.0, f32::MIN_POSITIVE, 16_777_217.0, -2.5e-38] {
            #[allow(clippy::cast_possible_truncation, reason = "the round trip under test")]
            let back = float32(v).parse::<f64>().map(|d| d as f32);
            assert_eq!(back.map(f32::to_bits), Ok(v.to_bits()), "{v}");
        }
        assert_eq!(float32(f32::NEG_INFINITY), "float(\"-inf\")");
    }

    #[test]
    fn strings_escape_what_python_needs() {
        assert_eq!(string(b"a\"b\\c\n\x01").ok().as_deref(), Some("\"a\\\"b\\\\c\\n\\x01\""));
        assert!(string(&[0xff]).is_err());
    }

    #[test]
    fn halves_are_exact() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0x3800), 0.5);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
    }
}
