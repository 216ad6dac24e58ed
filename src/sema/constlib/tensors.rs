//! Tensors as numpy, onnx and onnx_ir build them: from Python values (`np.array`, `ir.tensor`,
//! `make_tensor`), filled (`np.full`, `np.arange`), converted, transposed, read back, and the
//! dtype and shape arguments those functions take.

use super::numbers::range_len;
use super::{display, numpy_type, LibError, LibResult, Member, NUMPY_TYPES};
use crate::onnx::tensor::{Tensor, TensorData};
use crate::onnx::ElemType;
use crate::sema::convert::{self, Overflow};
use crate::sema::value::{str_repr, PyValue, MAX_CONSTANT_ELEMENTS};

/// The elements as tensor data of `elem`, or why Python raises (or onnxsc cannot build it).
pub(super) fn encode(elem: ElemType, items: &[PyValue], overflow: Overflow) -> LibResult<TensorData> {
    if !convert::supported(elem) {
        return Err(LibError::Unsupported(format!("constants of type {}", elem.script_name())));
    }
    convert::encode(elem, items, overflow).map_err(LibError::Python)
}

/// `np.sqrt(x)` and `np.abs(x)`: exact operations (the square root is correctly rounded), on a
/// number (a float64 result, or int64 for `abs` of an int) or an array of its own type.
pub(super) fn unary_ufunc(path: &str, v: &PyValue) -> LibResult<Tensor> {
    let sqrt = path == "numpy.sqrt";
    let (elem, dims, items) = match v {
        PyValue::Tensor(t) => (t.elem, t.dims.clone(), elements(t)?),
        PyValue::Int(_) | PyValue::Bool(_) => (ElemType::Int64, Vec::new(), vec![v.clone()]),
        PyValue::Float(_) => (ElemType::Double, Vec::new(), vec![v.clone()]),
        other => {
            return Err(LibError::Python(format!(
                "TypeError: {}() needs numbers, not {}",
                display(path),
                other.type_name()
            )))
        }
    };
    // sqrt of ints and bools is float64; abs keeps the type (not of unsigned or bool arrays).
    let out = if sqrt && !matches!(elem, ElemType::Float | ElemType::Double) { ElemType::Double } else { elem };
    if !matches!(
        out,
        ElemType::Float | ElemType::Double | ElemType::Int8 | ElemType::Int16 | ElemType::Int32 | ElemType::Int64
    ) {
        return Err(LibError::Unsupported(format!("`{}` of a {} value", display(path), elem.numpy_name())));
    }
    let mut results = Vec::with_capacity(items.len());
    for item in items {
        results.push(match (item, out) {
            (PyValue::Int(i), ElemType::Double) if sqrt => PyValue::Float((i as f64).sqrt()),
            (PyValue::Bool(b), ElemType::Double) if sqrt => PyValue::Float((b as u8 as f64).sqrt()),
            (PyValue::Float(f), ElemType::Float) if sqrt => PyValue::Float((f as f32).sqrt() as f64),
            (PyValue::Float(f), _) if sqrt => PyValue::Float(f.sqrt()),
            (PyValue::Float(f), _) => PyValue::Float(f.abs()),
            (PyValue::Int(i), _) => {
                let (min, _) = out.int_range().unwrap_or((0, 0));
                if i == min {
                    return Err(LibError::Unsupported("`np.abs` of the smallest integer (numpy wraps around)".into()));
                }
                PyValue::Int(i.abs())
            }
            (other, _) => other,
        });
    }
    let data = encode(out, &results, Overflow::Ieee)?;
    Ok(Tensor { elem: out, dims, data })
}

/// `a.T`: the axes reversed.
pub fn transpose(t: &Tensor) -> LibResult<Tensor> {
    if t.dims.len() < 2 {
        return Ok(t.clone());
    }
    let dims: Vec<i64> = t.dims.iter().rev().copied().collect();
    let n = t.len() as usize;
    // The source index of each element of the result.
    let strides: Vec<usize> = t
        .dims
        .iter()
        .rev()
        .scan(1usize, |acc, d| {
            let s = *acc;
            *acc *= *d as usize;
            Some(s)
        })
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let order: Vec<usize> = (0..n)
        .map(|mut k| {
            let mut src = 0;
            for (axis, d) in dims.iter().enumerate().rev() {
                let i = k % *d as usize;
                k /= *d as usize;
                src += i * strides[t.dims.len() - 1 - axis];
            }
            src
        })
        .collect();
    let data = match &t.data {
        TensorData::Floats(v) if t.elem == ElemType::Float => TensorData::Floats(order.iter().map(|i| v[*i]).collect()),
        TensorData::Doubles(v) if t.elem == ElemType::Double => {
            TensorData::Doubles(order.iter().map(|i| v[*i]).collect())
        }
        TensorData::Ints(v) => TensorData::Ints(order.iter().map(|i| v[*i]).collect()),
        TensorData::Uints(v) => TensorData::Uints(order.iter().map(|i| v[*i]).collect()),
        TensorData::Bools(v) => TensorData::Bools(order.iter().map(|i| v[*i]).collect()),
        TensorData::Strings(v) => TensorData::Strings(order.iter().map(|i| v[*i].clone()).collect()),
        TensorData::Raw(bytes) if t.elem.bits() % 8 == 0 => {
            let size = t.elem.bits() as usize / 8;
            TensorData::Raw(order.iter().flat_map(|i| bytes[i * size..(i + 1) * size].iter().copied()).collect())
        }
        _ => return Err(LibError::Unsupported(format!("transposing a {} array", t.elem.script_name()))),
    };
    Ok(Tensor { elem: t.elem, dims, data })
}

/// The path of numpy's scalar type for an element type.
pub(super) fn numpy_type_path(elem: ElemType) -> LibResult<String> {
    NUMPY_TYPES
        .iter()
        .find(|(_, t)| *t == elem)
        .map(|(n, _)| format!("numpy.{n}"))
        .ok_or_else(|| LibError::Unsupported(format!("the numpy type of {}", elem.script_name())))
}

/// A `dtype=` argument of numpy: a scalar type (`np.float32`), a Python type (`float` is
/// float64), or a name (`"float32"`).
pub(super) fn numpy_dtype(function: &str, d: &Member) -> LibResult<ElemType> {
    let bad = |what: String| {
        LibError::Unsupported(format!(
            "{what} as the dtype of `{}`; write a numpy type such as `np.float32`",
            display(function)
        ))
    };
    match d {
        Member::Object(p) => match p.as_str() {
            "builtins.float" => Ok(ElemType::Double),
            "builtins.int" => Ok(ElemType::Int64),
            "builtins.bool" => Ok(ElemType::Bool),
            "builtins.str" => Ok(ElemType::String),
            other => numpy_type(other).ok_or_else(|| bad(format!("`{}`", display(other)))),
        },
        Member::Value(PyValue::Str(s)) => NUMPY_TYPES
            .iter()
            .find(|(n, _)| *n == &**s)
            .map(|(_, t)| *t)
            .ok_or_else(|| bad(format!("the dtype name {}", str_repr(s)))),
        Member::Value(PyValue::None) => Err(bad("`None`".into())),
        Member::Value(v) => Err(bad(v.brief())),
    }
}

/// A `TensorProto.DataType` code, as `make_tensor` and `ir.tensor` take it.
pub(super) fn data_type_arg(v: &PyValue) -> LibResult<ElemType> {
    match v {
        PyValue::Int(code) => ElemType::from_code(i64::try_from(*code).unwrap_or(-1))
            .ok_or_else(|| LibError::Python(format!("ValueError: {code} is not a valid TensorProto data type"))),
        // `x.dtype`, an `ir.DataType` (an int enum), as `ir.DataType(x.dtype)` leaves it.
        PyValue::DType(t) => Ok(*t),
        other => Err(LibError::Python(format!(
            "TypeError: the data type must be a `TensorProto` or `ir.DataType` member, not {}",
            other.brief()
        ))),
    }
}

/// A shape argument: an int or a sequence of ints.
pub(super) fn shape_of(v: &PyValue) -> LibResult<Vec<i64>> {
    let dim = |v: &PyValue| match v {
        PyValue::Int(i) if *i >= 0 => i64::try_from(*i).map_err(|_| LibError::TooLarge(u64::MAX)),
        PyValue::Int(_) => Err(LibError::Python("ValueError: negative dimensions are not allowed".into())),
        PyValue::Tensor(t) => match PyValue::scalar_of(t) {
            Some(PyValue::Int(i)) if i >= 0 => Ok(i as i64),
            _ => Err(LibError::Python("TypeError: a dimension must be a non-negative integer".into())),
        },
        other => Err(LibError::Python(format!("TypeError: {} cannot be a dimension", other.brief()))),
    };
    match v {
        PyValue::Tensor(t) if !t.is_scalar() => elements(t)?.iter().map(dim).collect(),
        _ => match v.items() {
            Some(items) => items.iter().map(dim).collect(),
            None => Ok(vec![dim(v)?]),
        },
    }
}

pub(super) fn check_size(dims: &[i64]) -> LibResult<u64> {
    let n = dims.iter().try_fold(1u64, |n, d| n.checked_mul(*d as u64)).unwrap_or(u64::MAX);
    if n > MAX_CONSTANT_ELEMENTS {
        return Err(LibError::TooLarge(n));
    }
    Ok(n)
}

pub(super) fn full(dims: &[i64], fill: &PyValue, elem: ElemType) -> LibResult<Tensor> {
    let n = check_size(dims)?;
    let fill = match fill {
        PyValue::Tensor(t) => {
            PyValue::scalar_of(t).ok_or_else(|| LibError::Unsupported("an array as a fill value".into()))?
        }
        other => other.clone(),
    };
    let items = vec![fill; n as usize];
    let data = encode(elem, &items, Overflow::Ieee)?;
    Ok(Tensor { elem, dims: dims.to_vec(), data })
}

pub(super) fn arange(
    a: &PyValue,
    b: Option<&PyValue>,
    step: Option<&PyValue>,
    dtype: Option<ElemType>,
) -> LibResult<Tensor> {
    let (start, stop) = match b {
        Some(stop) => (a.clone(), stop.clone()),
        None => (PyValue::Int(0), a.clone()),
    };
    let step = step.cloned().unwrap_or(PyValue::Int(1));
    let args = [start.clone(), stop.clone(), step.clone()];
    if let (PyValue::Int(s), PyValue::Int(e), PyValue::Int(d)) = (&start, &stop, &step) {
        if *d == 0 {
            return Err(LibError::Python("ZeroDivisionError: division by zero".into()));
        }
        let n = range_len(*s, *e, *d)?;
        check_size(&[n.min(i64::MAX as i128) as i64])?;
        let items: Vec<PyValue> = (0..n).map(|i| PyValue::Int(s + i * d)).collect();
        let elem = dtype.unwrap_or(ElemType::Int64);
        let data = encode(elem, &items, Overflow::Ieee)?;
        return Ok(Tensor { elem, dims: vec![items.len() as i64], data });
    }
    if args.iter().any(|v| v.as_f64().is_none()) {
        return Err(LibError::Python("TypeError: arange takes numbers".into()));
    }
    Err(LibError::Unsupported("`np.arange` with float arguments (its length depends on rounding)".into()))
}

/// The flat elements of a tensor as Python values (what `tolist()` gives).
pub fn elements(t: &Tensor) -> LibResult<Vec<PyValue>> {
    Ok(match &t.data {
        TensorData::Floats(v) if t.elem == ElemType::Float => v.iter().map(|f| PyValue::Float(*f as f64)).collect(),
        TensorData::Doubles(v) if t.elem == ElemType::Double => v.iter().map(|f| PyValue::Float(*f)).collect(),
        TensorData::Ints(v) => v.iter().map(|i| PyValue::Int(*i as i128)).collect(),
        TensorData::Uints(v) => v.iter().map(|i| PyValue::Int(*i as i128)).collect(),
        TensorData::Bools(v) => v.iter().map(|b| PyValue::Bool(*b)).collect(),
        TensorData::Strings(v) => v.iter().map(|s| PyValue::str(s)).collect(),
        _ => return Err(LibError::Unsupported(format!("reading the elements of a {} tensor", t.elem.script_name()))),
    })
}

/// Flat elements as nested lists of shape `dims`.
pub(super) fn nest(items: &[PyValue], dims: &[i64]) -> PyValue {
    match dims.split_first() {
        None => items.first().cloned().unwrap_or(PyValue::None),
        Some((d, rest)) => {
            let chunk = rest.iter().product::<i64>().max(0) as usize;
            let parts = (0..*d as usize).map(|i| nest(&items[i * chunk..(i + 1) * chunk], rest)).collect();
            PyValue::list(parts)
        }
    }
}

/// Flattens nested lists and tuples into elements and a shape, as numpy reads them. A 0-d
/// tensor inside a list counts as its element.
fn flatten(v: &PyValue) -> LibResult<(Vec<PyValue>, Vec<i64>)> {
    if v.weight() > MAX_CONSTANT_ELEMENTS {
        return Err(LibError::TooLarge(v.weight()));
    }
    fn shape(v: &PyValue, dims: &mut Vec<i64>) {
        if let Some(items) = v.items() {
            dims.push(items.len() as i64);
            if let Some(first) = items.first() {
                shape(first, dims);
            }
        }
    }
    fn walk(v: &PyValue, dims: &[i64], out: &mut Vec<PyValue>) -> LibResult<()> {
        match (v.items(), dims.split_first()) {
            (Some(items), Some((d, rest))) if items.len() as i64 == *d => {
                items.iter().try_for_each(|i| walk(i, rest, out))
            }
            (None, None) => {
                out.push(match v {
                    PyValue::Tensor(t) if t.is_scalar() => PyValue::scalar_of(t)
                        .ok_or_else(|| LibError::Unsupported("a numpy scalar of this type inside a list".into()))?,
                    PyValue::Tensor(_) => {
                        return Err(LibError::Unsupported("arrays inside lists (use one nested list)".into()))
                    }
                    other => other.clone(),
                });
                Ok(())
            }
            _ => Err(LibError::Python(
                "ValueError: setting an array element with a sequence: the nested lists are not rectangular".into(),
            )),
        }
    }
    let mut dims = Vec::new();
    shape(v, &mut dims);
    let mut out = Vec::new();
    walk(v, &dims, &mut out)?;
    Ok((out, dims))
}

/// The dtype numpy infers for Python elements: bool, int64 (uint64 when needed), float64, str.
pub(super) fn infer_numpy(items: &[PyValue]) -> LibResult<ElemType> {
    if items.iter().all(|v| matches!(v, PyValue::Str(_))) && !items.is_empty() {
        return Ok(ElemType::String);
    }
    if items.iter().any(|v| matches!(v, PyValue::Str(_) | PyValue::None | PyValue::Tensor(_))) {
        let odd = items.iter().find(|v| !matches!(v, PyValue::Int(_) | PyValue::Float(_) | PyValue::Bool(_)));
        return Err(LibError::Unsupported(format!(
            "an array of mixed or non-numeric elements ({})",
            odd.map(|v| v.brief()).unwrap_or_default()
        )));
    }
    if items.iter().any(|v| matches!(v, PyValue::Float(_))) || items.is_empty() {
        return Ok(ElemType::Double);
    }
    if items.iter().all(|v| matches!(v, PyValue::Bool(_))) {
        return Ok(ElemType::Bool);
    }
    let ints = items.iter().filter_map(|v| if let PyValue::Int(i) = v { Some(*i) } else { None });
    let (min, max) = ints.fold((0i128, 0i128), |(lo, hi), i| (lo.min(i), hi.max(i)));
    if min >= i64::MIN as i128 && max <= i64::MAX as i128 {
        Ok(ElemType::Int64)
    } else if min >= 0 && max <= u64::MAX as i128 {
        Ok(ElemType::Uint64)
    } else {
        Err(LibError::Python("OverflowError: Python int too large to convert to C long".into()))
    }
}

/// `np.array(value, dtype=dtype)`.
pub fn np_array(v: &PyValue, dtype: Option<ElemType>) -> LibResult<Tensor> {
    if let PyValue::Tensor(t) = v {
        return match dtype {
            None => Ok((**t).clone()),
            Some(elem) if elem == t.elem => Ok((**t).clone()),
            Some(elem) => {
                let items = elements(t)?;
                let data = encode(elem, &items, Overflow::Ieee)?;
                Ok(Tensor { elem, dims: t.dims.clone(), data })
            }
        };
    }
    // A Python scalar is its own one element, of no dimensions (what `flatten` finds for it):
    // most constants are scalars, and need no list of their elements.
    let (items, dims) = match v.items() {
        None => (std::borrow::Cow::Borrowed(std::slice::from_ref(v)), Vec::new()),
        Some(_) => {
            let (items, dims) = flatten(v)?;
            (std::borrow::Cow::Owned(items), dims)
        }
    };
    let elem = match dtype {
        Some(e) => e,
        None => infer_numpy(&items)?,
    };
    let data = encode(elem, &items, Overflow::Ieee)?;
    Ok(Tensor { elem, dims, data })
}

/// A 0-d tensor of `elem` holding one Python number (a numpy scalar).
pub(super) fn scalar_tensor(elem: ElemType, v: &PyValue) -> LibResult<Tensor> {
    let v = match v {
        PyValue::Tensor(t) => {
            PyValue::scalar_of(t).ok_or_else(|| LibError::Unsupported("converting this array".into()))?
        }
        PyValue::Str(_) if elem != ElemType::String => {
            return Err(LibError::Unsupported("numbers parsed from strings".into()))
        }
        other => other.clone(),
    };
    let data = encode(elem, std::slice::from_ref(&v), Overflow::Ieee)?;
    Ok(Tensor { elem, dims: vec![], data })
}

/// `ir.tensor(value, dtype)` (onnx_ir 1.1): a tensor passes through; a Python int is INT64, a
/// float FLOAT, a flat list of ints INT64 and of floats FLOAT; anything else takes numpy's
/// inference (nested lists of floats are DOUBLE); strings are STRING.
pub fn ir_tensor(v: &PyValue, dtype: Option<ElemType>) -> LibResult<Tensor> {
    if let PyValue::Tensor(t) = v {
        if let Some(d) = dtype.filter(|d| *d != t.elem) {
            return Err(LibError::Python(format!(
                "ValueError: The dtype must match the value when value is a Tensor. dtype={}, value.dtype={}",
                d.script_name(),
                t.elem.script_name()
            )));
        }
        return Ok((**t).clone());
    }
    let elem = match dtype {
        Some(d) => Some(d),
        None => match v {
            PyValue::Int(_) => Some(ElemType::Int64),
            PyValue::Float(_) => Some(ElemType::Float),
            PyValue::List(s) if s.is_empty() => {
                return Err(LibError::Python(
                    "ValueError: dtype must be specified when value is an empty sequence.".into(),
                ))
            }
            PyValue::List(s) if s.items().iter().all(|i| matches!(i, PyValue::Int(_))) => Some(ElemType::Int64),
            PyValue::List(s) if s.items().iter().all(|i| matches!(i, PyValue::Float(_))) => Some(ElemType::Float),
            _ => None,
        },
    };
    if matches!(v, PyValue::None) {
        return Err(LibError::Python("TypeError: None is not a tensor".into()));
    }
    np_array(v, elem)
}

/// `onnx.helper.make_tensor(name, data_type, dims, vals)` (without `raw`).
pub(super) fn make_tensor(elem: ElemType, dims: &PyValue, vals: &PyValue) -> LibResult<Tensor> {
    let dims = shape_of(dims)?;
    check_size(&dims)?;
    let items = match vals {
        PyValue::Tensor(t) => elements(t)?,
        other => match other.items() {
            Some(_) => flatten(other)?.0,
            None => vec![other.clone()],
        },
    };
    let expected = dims.iter().product::<i64>();
    if items.len() as i64 != expected {
        return Err(LibError::Python(format!(
            "ValueError: Number of values ({}) does not match tensor dimensions requiring {expected} elements.",
            items.len()
        )));
    }
    // make_tensor clips the FLOAT8 types to their range; ints must fit (numpy raises).
    let overflow = if matches!(
        elem,
        ElemType::Float8e4m3fn | ElemType::Float8e4m3fnuz | ElemType::Float8e5m2 | ElemType::Float8e5m2fnuz
    ) {
        Overflow::Saturate
    } else {
        Overflow::Ieee
    };
    let data = encode(elem, &items, overflow)?;
    Ok(Tensor { elem, dims, data })
}
