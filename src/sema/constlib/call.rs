//! Calls into the library: the dispatcher from a function's path to what evaluates it, one
//! function a library function (numpy, onnx.helper, onnx_ir), and the methods of arrays.

use super::bind::{bind, positional_values};
use super::builtins::builtin_call;
use super::math::math;
use super::numbers::float_arg;
use super::tensors::{
    arange, check_size, data_type_arg, elements, encode, full, infer_numpy, ir_tensor, make_tensor, nest, np_array,
    numpy_dtype, numpy_type_path, scalar_tensor, shape_of, transpose, unary_ufunc,
};
use super::{display, is_run_time, numpy_type, Args, LibError, LibResult, Member};
use crate::onnx::tensor::Tensor;
use crate::onnx::ElemType;
use crate::sema::convert::Overflow;
use crate::sema::value::PyValue;
use std::sync::Arc;

/// Calls the library function (or class) `path`.
pub fn call(path: &str, args: &Args) -> LibResult<Member> {
    if is_run_time(path) {
        return Err(LibError::RunTime);
    }
    if let Some(name) = path.strip_prefix("math.") {
        return math(path, name, args).map(Member::Value);
    }
    if let Some(name) = path.strip_prefix("builtins.") {
        return builtin_call(path, name, args).map(Member::Value);
    }
    if let Some(elem) = numpy_type(path) {
        return call_np_scalar_type(path, elem, args).map(tensor_member);
    }
    match path {
        "numpy.array" | "numpy.asarray" => call_np_array(path, args).map(tensor_member),
        "numpy.zeros" | "numpy.ones" => call_np_zeros_or_ones(path, args).map(tensor_member),
        "numpy.full" => call_np_full(path, args).map(tensor_member),
        "numpy.arange" => call_np_arange(path, args).map(tensor_member),
        "numpy.eye" => call_np_eye(path, args).map(tensor_member),
        "numpy.linspace" => call_np_linspace(path, args).map(tensor_member),
        "numpy.sqrt" | "numpy.abs" | "numpy.absolute" => {
            let b = bind(path, args, &["x"], 1)?;
            unary_ufunc(path, b.required(0)?).map(tensor_member)
        }
        "numpy.dtype" => call_np_dtype(path, args),
        "numpy.finfo" | "numpy.iinfo" => call_np_info(path, args),
        "onnx.helper.make_tensor" => call_make_tensor(path, args).map(tensor_member),
        "onnx.numpy_helper.from_array" => call_from_array(path, args).map(tensor_member),
        "onnx_ir.tensor" => call_ir_tensor(path, args).map(tensor_member),
        "onnx_ir.Tensor" => call_ir_tensor_class(path, args).map(tensor_member),
        "onnx_ir.DataType" | "onnx.TensorProto" => call_data_type(path, args),
        _ => Err(LibError::Unsupported(format!("`{}`", display(path)))),
    }
}

/// A tensor as the value of a call.
fn tensor_member(t: Tensor) -> Member {
    Member::Value(PyValue::Tensor(Arc::new(t)))
}

// -------------------------------------------------------------------------------------------------
// numpy

/// `np.float32(0.5)`: a numpy scalar (or, given a list, an array).
fn call_np_scalar_type(path: &str, elem: ElemType, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["value"], 0)?;
    let v = b.value(0)?.cloned().unwrap_or(PyValue::Int(0));
    if v.items().is_some() {
        np_array(&v, Some(elem))
    } else {
        scalar_tensor(elem, &v)
    }
}

/// `np.array(object, dtype)` and `np.asarray`.
fn call_np_array(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["object", "dtype"], 1)?;
    let dtype = b.get(1).map(|d| numpy_dtype(path, d)).transpose()?;
    np_array(b.required(0)?, dtype)
}

/// `np.zeros(shape, dtype)` and `np.ones`: float64 unless told.
fn call_np_zeros_or_ones(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["shape", "dtype"], 1)?;
    let dtype = b.get(1).map(|d| numpy_dtype(path, d)).transpose()?.unwrap_or(ElemType::Double);
    let fill = PyValue::Int(if path == "numpy.zeros" { 0 } else { 1 });
    full(&shape_of(b.required(0)?)?, &fill, dtype)
}

/// `np.full(shape, fill_value, dtype)`: the fill value's type unless told.
fn call_np_full(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["shape", "fill_value", "dtype"], 2)?;
    let fill = b.required(1)?;
    let dtype = match b.get(2) {
        Some(d) => numpy_dtype(path, d)?,
        None => infer_numpy(std::slice::from_ref(fill))?,
    };
    full(&shape_of(b.required(0)?)?, fill, dtype)
}

/// `np.arange(start, stop, step, dtype)`.
fn call_np_arange(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["start", "stop", "step", "dtype"], 1)?;
    let dtype = b.get(3).map(|d| numpy_dtype(path, d)).transpose()?;
    arange(b.required(0)?, b.value(1)?, b.value(2)?, dtype)
}

/// `np.eye(N, M, k, dtype)`: ones on the `k`th diagonal.
fn call_np_eye(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["N", "M", "k", "dtype"], 1)?;
    let int = |v: Option<&PyValue>, default: i128| match v {
        None | Some(PyValue::None) => Ok(default),
        Some(PyValue::Int(i)) => Ok(*i),
        Some(other) => Err(LibError::Python(format!("TypeError: {} is not an integer", other.brief()))),
    };
    let rows = int(b.value(0)?, 0)?;
    let cols = int(b.value(1)?, rows)?;
    let k = int(b.value(2)?, 0)?;
    let dtype = b.get(3).map(|d| numpy_dtype(path, d)).transpose()?.unwrap_or(ElemType::Double);
    if rows < 0 || cols < 0 {
        return Err(LibError::Python("ValueError: negative dimensions are not allowed".into()));
    }
    check_size(&[rows.min(i64::MAX as i128) as i64, cols.min(i64::MAX as i128) as i64])?;
    let items: Vec<PyValue> =
        (0..rows).flat_map(|r| (0..cols).map(move |c| PyValue::Int((c - r == k) as i128))).collect();
    let data = encode(dtype, &items, Overflow::Ieee)?;
    Ok(Tensor { elem: dtype, dims: vec![rows as i64, cols as i64], data })
}

/// `np.linspace(start, stop, num, endpoint, retstep, dtype)` (without `retstep`).
fn call_np_linspace(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["start", "stop", "num", "endpoint", "retstep", "dtype"], 2)?;
    let start = float_arg(path, b.required(0)?)?;
    let stop = float_arg(path, b.required(1)?)?;
    let num = match b.value(2)? {
        None => 50,
        Some(PyValue::Int(n)) if *n >= 0 => *n,
        Some(other) => {
            return Err(LibError::Python(format!(
                "ValueError: Number of samples, {}, must be non-negative.",
                other.brief()
            )))
        }
    };
    let endpoint = b.value(3)?.map(|v| v.truth()).transpose().map_err(LibError::Python)?.unwrap_or(true);
    if b.value(4)?.is_some_and(|v| v.truth().unwrap_or(true)) {
        return Err(LibError::Unsupported("`np.linspace(..., retstep=True)`".into()));
    }
    check_size(&[num.min(i64::MAX as i128) as i64])?;
    let items: Vec<PyValue> = linspace(start, stop, num, endpoint).into_iter().map(PyValue::Float).collect();
    let dtype = b.get(5).map(|d| numpy_dtype(path, d)).transpose()?.unwrap_or(ElemType::Double);
    let data = encode(dtype, &items, Overflow::Ieee)?;
    Ok(Tensor { elem: dtype, dims: vec![num as i64], data })
}

/// The values of `np.linspace`, by numpy's algorithm in float64: y = arange(num) * step +
/// start, the end point exact.
fn linspace(start: f64, stop: f64, num: i128, endpoint: bool) -> Vec<f64> {
    let div = if endpoint { num - 1 } else { num };
    let delta = stop - start;
    let mut values: Vec<f64> = (0..num).map(|i| i as f64).collect();
    if div > 0 {
        let step = delta / div as f64;
        for y in &mut values {
            *y = if step == 0.0 { *y / div as f64 * delta } else { *y * step };
        }
    } else {
        for y in &mut values {
            *y *= delta;
        }
    }
    for y in &mut values {
        *y += start;
    }
    if endpoint && num > 1 {
        if let Some(last) = values.last_mut() {
            *last = stop;
        }
    }
    values
}

/// `np.dtype(t)`: the scalar type itself.
fn call_np_dtype(path: &str, args: &Args) -> LibResult<Member> {
    let b = bind(path, args, &["dtype"], 1)?;
    let elem = numpy_dtype(path, b.get(0).ok_or_else(|| LibError::Python("dtype() needs a type".into()))?)?;
    Ok(Member::Object(numpy_type_path(elem)?))
}

/// `np.finfo(t)` and `np.iinfo(t)`: an object whose members `member` reads from its path.
fn call_np_info(path: &str, args: &Args) -> LibResult<Member> {
    let b = bind(path, args, &["dtype"], 1)?;
    let elem = numpy_dtype(path, b.get(0).ok_or_else(|| LibError::Python("needs a type".into()))?)?;
    let name = numpy_type_path(elem)?;
    let kind = path.trim_start_matches("numpy.");
    let valid = if kind == "finfo" { elem.is_float() } else { elem.int_range().is_some() };
    if !valid {
        return Err(LibError::Python(format!("ValueError: data type {} not inexact", elem.numpy_name())));
    }
    Ok(Member::Object(format!("numpy.{kind}:{}", name.trim_start_matches("numpy."))))
}

// -------------------------------------------------------------------------------------------------
// onnx.helper and onnx.numpy_helper

/// `onnx.helper.make_tensor(name, data_type, dims, vals, raw)`.
fn call_make_tensor(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["name", "data_type", "dims", "vals", "raw"], 4)?;
    if !matches!(b.required(0)?, PyValue::Str(_)) {
        return Err(LibError::Python("TypeError: the tensor name must be a string".into()));
    }
    let elem = data_type_arg(b.required(1)?)?;
    let raw = b.value(4)?.map(|v| v.truth()).transpose().map_err(LibError::Python)?.unwrap_or(false);
    if raw {
        return Err(LibError::Unsupported("`make_tensor(..., raw=True)` (raw bytes)".into()));
    }
    make_tensor(elem, b.required(2)?, b.required(3)?)
}

/// `onnx.numpy_helper.from_array(array, name)`.
fn call_from_array(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["array", "name"], 1)?;
    match b.required(0)? {
        PyValue::Tensor(t) => Ok((**t).clone()),
        other => {
            Err(LibError::Python(format!("TypeError: from_array expects a numpy array, not {}", other.type_name())))
        }
    }
}

// -------------------------------------------------------------------------------------------------
// onnx_ir

/// `ir.tensor(value, dtype, name, doc_string)`.
fn call_ir_tensor(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["value", "dtype", "name", "doc_string"], 1)?;
    let dtype = b.value(1)?.filter(|d| !matches!(d, PyValue::None)).map(data_type_arg).transpose()?;
    ir_tensor(b.required(0)?, dtype)
}

/// `ir.Tensor(value, dtype, shape, name, doc_string)`: of a numpy array only.
fn call_ir_tensor_class(path: &str, args: &Args) -> LibResult<Tensor> {
    let b = bind(path, args, &["value", "dtype", "shape", "name", "doc_string"], 1)?;
    match b.required(0)? {
        PyValue::Tensor(t) => Ok((**t).clone()),
        other => {
            Err(LibError::Python(format!("TypeError: ir.Tensor expects a numpy array, not {}", other.type_name())))
        }
    }
}

/// `ir.DataType(code)` and `TensorProto(code)`: the code, checked.
fn call_data_type(path: &str, args: &Args) -> LibResult<Member> {
    let b = bind(path, args, &["value"], 1)?;
    let elem = data_type_arg(b.required(0)?)?;
    Ok(Member::Value(PyValue::Int(elem.code() as i128)))
}

// -------------------------------------------------------------------------------------------------
// Methods of arrays

/// Calls the method `name` of a value (`arr.astype(np.float32)`).
pub fn call_method(receiver: &PyValue, name: &str, args: &Args) -> LibResult<Member> {
    let PyValue::Tensor(t) = receiver else {
        return Err(LibError::Unsupported(format!("the method `{}.{name}`", receiver.type_name())));
    };
    let function = format!("ndarray.{name}");
    match name {
        "astype" => {
            let b = bind(&function, args, &["dtype"], 1)?;
            let elem = numpy_dtype(&function, b.get(0).ok_or_else(|| LibError::Python("astype needs a type".into()))?)?;
            let items = elements(t)?;
            let data = encode(elem, &items, Overflow::Ieee)?;
            Ok(tensor_member(Tensor { elem, dims: t.dims.clone(), data }))
        }
        "tolist" => {
            bind(&function, args, &[], 0)?;
            let items = elements(t)?;
            Ok(Member::Value(nest(&items, &t.dims)))
        }
        "reshape" => reshape(t, args).map(tensor_member),
        "flatten" | "ravel" | "copy" => {
            bind(&function, args, &[], 0)?;
            let dims = if name == "copy" { t.dims.clone() } else { vec![t.len() as i64] };
            Ok(tensor_member(Tensor { elem: t.elem, dims, data: t.data.clone() }))
        }
        "transpose" => {
            bind(&function, args, &[], 0)?;
            Ok(tensor_member(transpose(t)?))
        }
        "item" => {
            bind(&function, args, &[], 0)?;
            let items = elements(t)?;
            match items.as_slice() {
                [one] => Ok(Member::Value(one.clone())),
                _ => Err(LibError::Python("ValueError: can only convert an array of size 1 to a Python scalar".into())),
            }
        }
        _ => Err(LibError::Unsupported(format!("the array method `{name}`"))),
    }
}

/// `a.reshape(2, 3)` or `a.reshape((2, 3))`, one dimension may be -1.
fn reshape(t: &Tensor, args: &Args) -> LibResult<Tensor> {
    let dims: Vec<PyValue> = match args.positional.as_slice() {
        [Member::Value(v)] if v.items().is_some() => v.items().unwrap_or(&[]).to_vec(),
        _ => positional_values(args, "as a dimension")?,
    };
    let wanted: Vec<i128> = dims
        .iter()
        .map(|d| match d {
            PyValue::Int(i) => Ok(*i),
            other => Err(LibError::Python(format!("TypeError: {} cannot be a dimension", other.brief()))),
        })
        .collect::<LibResult<_>>()?;
    let n = t.len() as i128;
    let known: i128 = wanted.iter().filter(|d| **d != -1).product();
    let free = wanted.iter().filter(|d| **d == -1).count();
    let bad = || LibError::Python(format!("ValueError: cannot reshape array of size {n} into shape {wanted:?}"));
    if free > 1
        || wanted.iter().any(|d| *d < -1)
        || (free == 0 && known != n)
        || (free == 1 && (known == 0 || n % known != 0))
    {
        return Err(bad());
    }
    let dims = wanted.iter().map(|d| if *d == -1 { (n / known) as i64 } else { *d as i64 }).collect();
    Ok(Tensor { elem: t.elem, dims, data: t.data.clone() })
}
