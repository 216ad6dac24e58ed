//! The constant library: the modules, classes, functions and constants of Python's `math` and
//! builtins, numpy, onnx and onnx_ir that onnxsc evaluates at compile time, and nothing else.
//!
//! onnxscript evaluates attribute arguments, parameter defaults and module constants as Python,
//! in the module's globals. onnxsc evaluates the same expressions over this named set, with the
//! types and bytes onnxscript's value would have (see docs/language.md for the list). A member
//! outside the set is an error that names it (E0112); a value that is different at every run,
//! such as `np.random.rand(3)`, is an error that says so (E0113).
//!
//! Objects of the library are named by canonical dotted paths (`numpy.float32`,
//! `onnx.helper.make_tensor`); [`canonical_module`] maps the spellings of an import to them.

use super::convert::{self, Overflow};
use super::value::{PyValue, Tensor, TensorData, MAX_CONSTANT_ELEMENTS};
use crate::onnx::ElemType;
use std::sync::Arc;

/// What a member of a library object is: a value, or another object (a module, class or
/// function) named by its canonical path.
#[derive(Clone, Debug, PartialEq)]
pub enum Member {
    Value(PyValue),
    Object(String),
}

/// Why a library call has no value.
#[derive(Clone, Debug, PartialEq)]
pub enum LibError {
    /// Python raises: the exception's message (`TypeError: ...`).
    Python(String),
    /// onnxsc does not evaluate this (a function or an argument form outside the set).
    Unsupported(String),
    /// The value differs from run to run.
    RunTime,
    /// The result would exceed [`MAX_CONSTANT_ELEMENTS`] (it would have this many).
    TooLarge(u64),
}

type LibResult<T> = Result<T, LibError>;

/// The arguments of a call: positional, then keyword.
pub struct Args {
    pub positional: Vec<Member>,
    pub keywords: Vec<(String, Member)>,
}

/// The modules whose members run only at run time (random numbers, clocks, the environment):
/// a constant computed from them is different at every import.
const RUN_TIME_MODULES: [&str; 7] = ["random", "numpy.random", "time", "datetime", "os", "uuid", "secrets"];

/// The canonical path of a module as an import names it, if the library models it.
pub fn canonical_module(path: &str) -> Option<&'static str> {
    Some(match path {
        "math" => "math",
        "builtins" => "builtins",
        "numpy" => "numpy",
        "onnx" | "onnx.onnx_pb" | "onnx.onnx_ml_pb2" | "onnx.onnx_ml_pb" => "onnx",
        "onnx.helper" => "onnx.helper",
        "onnx.numpy_helper" => "onnx.numpy_helper",
        "onnx_ir" | "onnxscript.ir" => "onnx_ir",
        "onnxscript.function_libs" => "onnxscript.function_libs",
        "onnxscript.function_libs.torch_lib" => "onnxscript.function_libs.torch_lib",
        "onnxscript.function_libs.torch_lib._constants" => TORCHLIB_CONSTANTS,
        other => return RUN_TIME_MODULES.iter().copied().find(|m| *m == other),
    })
}

const TORCHLIB_CONSTANTS: &str = "onnxscript.function_libs.torch_lib._constants";

/// Whether a path is (inside) a module of run-time values.
pub fn is_run_time(path: &str) -> bool {
    RUN_TIME_MODULES.iter().any(|m| path == *m || path.starts_with(&format!("{m}.")))
}

const MATH_CONSTANTS: [(&str, f64); 5] = [
    ("pi", std::f64::consts::PI),
    ("e", std::f64::consts::E),
    ("tau", std::f64::consts::TAU),
    ("inf", f64::INFINITY),
    ("nan", f64::NAN),
];

/// `math` functions of one float argument, with whether a finite argument may overflow.
const MATH_UNARY: [&str; 19] = [
    "sqrt", "exp", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh", "fabs",
];

const MATH_OTHER: [&str; 17] = [
    "log", "pow", "atan2", "hypot", "copysign", "fmod", "floor", "ceil", "trunc", "degrees", "radians", "isinf",
    "isnan", "isfinite", "isqrt", "gcd", "prod",
];

const NUMPY_CONSTANTS: [(&str, f64); 4] =
    [("pi", std::f64::consts::PI), ("e", std::f64::consts::E), ("inf", f64::INFINITY), ("nan", f64::NAN)];

/// numpy's scalar types and the element types they hold.
const NUMPY_TYPES: [(&str, ElemType); 19] = [
    ("float16", ElemType::Float16),
    ("half", ElemType::Float16),
    ("float32", ElemType::Float),
    ("single", ElemType::Float),
    ("float64", ElemType::Double),
    ("double", ElemType::Double),
    ("int8", ElemType::Int8),
    ("int16", ElemType::Int16),
    ("int32", ElemType::Int32),
    ("int64", ElemType::Int64),
    ("uint8", ElemType::Uint8),
    ("uint16", ElemType::Uint16),
    ("uint32", ElemType::Uint32),
    ("uint64", ElemType::Uint64),
    ("bool_", ElemType::Bool),
    ("bool", ElemType::Bool),
    ("complex64", ElemType::Complex64),
    ("complex128", ElemType::Complex128),
    ("str_", ElemType::String),
];

const NUMPY_FUNCTIONS: [&str; 14] = [
    "array", "asarray", "zeros", "ones", "full", "arange", "eye", "linspace", "sqrt", "abs", "absolute", "dtype",
    "finfo", "iinfo",
];

const BUILTINS: [&str; 14] =
    ["int", "float", "bool", "str", "len", "abs", "min", "max", "round", "list", "tuple", "range", "pow", "sum"];

/// The builtin of this name, when the module does not define the name.
pub fn builtin(name: &str) -> Option<String> {
    BUILTINS.contains(&name).then(|| format!("builtins.{name}"))
}

/// The element type of a numpy scalar type path (`numpy.float32`).
fn numpy_type(path: &str) -> Option<ElemType> {
    let name = path.strip_prefix("numpy.")?;
    NUMPY_TYPES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The member `name` of the library object `path`.
pub fn member(path: &str, name: &str) -> Option<Member> {
    let object = |p: &str| Some(Member::Object(p.to_string()));
    let value = |v: PyValue| Some(Member::Value(v));
    if is_run_time(path) {
        return object(&format!("{path}.{name}"));
    }
    match path {
        "math" => {
            if let Some((_, v)) = MATH_CONSTANTS.iter().find(|(n, _)| *n == name) {
                return value(PyValue::Float(*v));
            }
            (MATH_UNARY.contains(&name) || MATH_OTHER.contains(&name)).then(|| Member::Object(format!("math.{name}")))
        }
        "numpy" => {
            if let Some((_, v)) = NUMPY_CONSTANTS.iter().find(|(n, _)| *n == name) {
                return value(PyValue::Float(*v));
            }
            match name {
                "newaxis" => value(PyValue::None),
                "random" => object("numpy.random"),
                _ if NUMPY_TYPES.iter().any(|(n, _)| *n == name) || NUMPY_FUNCTIONS.contains(&name) => {
                    object(&format!("numpy.{name}"))
                }
                _ => None,
            }
        }
        "onnx" => match name {
            "TensorProto" => object("onnx.TensorProto"),
            "helper" => object("onnx.helper"),
            "numpy_helper" => object("onnx.numpy_helper"),
            _ => None,
        },
        "onnx.TensorProto" => match name {
            "DataType" => object("onnx.TensorProto"),
            _ => ElemType::from_data_type_name(name).map(|t| Member::Value(PyValue::Int(t.code() as i128))),
        },
        "onnx.helper" => matches!(name, "make_tensor").then(|| Member::Object(format!("onnx.helper.{name}"))),
        "onnx.numpy_helper" => {
            matches!(name, "from_array").then(|| Member::Object(format!("onnx.numpy_helper.{name}")))
        }
        "onnx_ir" => {
            matches!(name, "tensor" | "DataType" | "Tensor").then(|| Member::Object(format!("onnx_ir.{name}")))
        }
        "onnx_ir.DataType" => {
            ElemType::from_data_type_name(name).map(|t| Member::Value(PyValue::Int(t.code() as i128)))
        }
        "onnxscript.function_libs" => (name == "torch_lib").then(|| Member::Object(format!("{path}.{name}"))),
        "onnxscript.function_libs.torch_lib" => {
            (name == "_constants").then(|| Member::Object(TORCHLIB_CONSTANTS.into()))
        }
        TORCHLIB_CONSTANTS => (name == "DOMAIN").then(|| Member::Value(PyValue::str("pkg.onnxscript.torch_lib"))),
        _ => {
            // `np.finfo(np.float32).max`, `np.iinfo(np.int32).min`.
            let (kind, ty) = path
                .strip_prefix("numpy.finfo:")
                .map(|t| ("finfo", t))
                .or_else(|| path.strip_prefix("numpy.iinfo:").map(|t| ("iinfo", t)))?;
            let elem = numpy_type(&format!("numpy.{ty}"))?;
            info_member(kind, elem, name).map(Member::Value)
        }
    }
}

/// `np.finfo(t).max` and friends, as numpy gives them (values of type `t`).
fn info_member(kind: &str, elem: ElemType, name: &str) -> Option<PyValue> {
    if kind == "iinfo" {
        let (min, max) = elem.int_range()?;
        return match name {
            "min" => Some(PyValue::Int(min)),
            "max" => Some(PyValue::Int(max)),
            "bits" => Some(PyValue::Int(elem.bits() as i128)),
            _ => None,
        };
    }
    let (max, eps, tiny): (f64, f64, f64) = match elem {
        ElemType::Float16 => (65504.0, 2f64.powi(-10), 2f64.powi(-14)),
        ElemType::Float => (f32::MAX as f64, f32::EPSILON as f64, f32::MIN_POSITIVE as f64),
        ElemType::Double => (f64::MAX, f64::EPSILON, f64::MIN_POSITIVE),
        _ => return None,
    };
    let v = match name {
        "max" => max,
        "min" => -max,
        "eps" => eps,
        "tiny" | "smallest_normal" => tiny,
        "bits" => return Some(PyValue::Int(elem.bits() as i128)),
        _ => return None,
    };
    // The attributes are numpy scalars of the type itself.
    Some(PyValue::Tensor(Arc::new(scalar_tensor(elem, &PyValue::Float(v)).ok()?)))
}

/// The names of a library object's members, for the help of E0112.
pub fn members(path: &str) -> Vec<String> {
    let mut out: Vec<String> = match path {
        "math" => MATH_CONSTANTS
            .iter()
            .map(|(n, _)| *n)
            .chain(MATH_UNARY.iter().copied())
            .chain(MATH_OTHER.iter().copied())
            .map(String::from)
            .collect(),
        "numpy" => NUMPY_CONSTANTS
            .iter()
            .map(|(n, _)| *n)
            .chain(["newaxis"])
            .chain(NUMPY_TYPES.iter().map(|(n, _)| *n))
            .chain(NUMPY_FUNCTIONS.iter().copied())
            .map(String::from)
            .collect(),
        "onnx" => vec!["TensorProto".into(), "helper".into(), "numpy_helper".into()],
        "onnx.TensorProto" | "onnx_ir.DataType" => ElemType::ALL.iter().map(|t| t.script_name().to_string()).collect(),
        "onnx.helper" => vec!["make_tensor".into()],
        "onnx.numpy_helper" => vec!["from_array".into()],
        "onnx_ir" => vec!["tensor".into(), "DataType".into(), "Tensor".into()],
        "builtins" => BUILTINS.iter().map(|s| s.to_string()).collect(),
        TORCHLIB_CONSTANTS => vec!["DOMAIN".into()],
        _ => Vec::new(),
    };
    out.dedup();
    out
}

/// How a library path reads in messages: `numpy.float32` → `np.float32` is left to the caller;
/// this strips the `builtins.` of Python's builtins.
pub fn display(path: &str) -> &str {
    path.strip_prefix("builtins.").unwrap_or(path)
}

// -------------------------------------------------------------------------------------------------
// Calls

struct Bound<'a> {
    function: &'a str,
    values: Vec<Option<&'a Member>>,
}

impl<'a> Bound<'a> {
    fn get(&self, i: usize) -> Option<&'a Member> {
        self.values.get(i).copied().flatten()
    }

    fn value(&self, i: usize) -> LibResult<Option<&'a PyValue>> {
        match self.get(i) {
            None => Ok(None),
            Some(Member::Value(v)) => Ok(Some(v)),
            Some(Member::Object(o)) => {
                Err(LibError::Unsupported(format!("`{}` as an argument of `{}`", display(o), display(self.function))))
            }
        }
    }

    fn required(&self, i: usize) -> LibResult<&'a PyValue> {
        self.value(i)?.ok_or_else(|| LibError::Python(format!("{}() is missing an argument", display(self.function))))
    }
}

/// Binds arguments to parameters as Python does: positions first, then keywords.
fn bind<'a>(function: &'a str, args: &'a Args, params: &[&str], required: usize) -> LibResult<Bound<'a>> {
    let name = display(function);
    if args.positional.len() > params.len() {
        return Err(LibError::Python(format!(
            "TypeError: {name}() takes at most {} positional arguments ({} given)",
            params.len(),
            args.positional.len()
        )));
    }
    let mut values: Vec<Option<&Member>> = vec![None; params.len()];
    for (i, a) in args.positional.iter().enumerate() {
        values[i] = Some(a);
    }
    for (k, v) in &args.keywords {
        let Some(i) = params.iter().position(|p| p == k) else {
            return Err(LibError::Python(format!("TypeError: {name}() got an unexpected keyword argument '{k}'")));
        };
        if values[i].is_some() {
            return Err(LibError::Python(format!("TypeError: {name}() got multiple values for argument '{k}'")));
        }
        values[i] = Some(v);
    }
    if let Some(missing) = (0..required).find(|i| values[*i].is_none()) {
        return Err(LibError::Python(format!("TypeError: {name}() missing required argument '{}'", params[missing])));
    }
    Ok(Bound { function, values })
}

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
        // `np.float32(0.5)`: a numpy scalar (or, given a list, an array).
        let b = bind(path, args, &["value"], 0)?;
        let v = b.value(0)?.cloned().unwrap_or(PyValue::Int(0));
        let t = if v.items().is_some() { np_array(&v, Some(elem))? } else { scalar_tensor(elem, &v)? };
        return Ok(Member::Value(PyValue::Tensor(Arc::new(t))));
    }
    let tensor = |t: Tensor| Ok(Member::Value(PyValue::Tensor(Arc::new(t))));
    match path {
        "numpy.array" | "numpy.asarray" => {
            let b = bind(path, args, &["object", "dtype"], 1)?;
            let dtype = b.get(1).map(|d| numpy_dtype(path, d)).transpose()?;
            tensor(np_array(b.required(0)?, dtype)?)
        }
        "numpy.zeros" | "numpy.ones" => {
            let b = bind(path, args, &["shape", "dtype"], 1)?;
            let dtype = b.get(1).map(|d| numpy_dtype(path, d)).transpose()?.unwrap_or(ElemType::Double);
            let fill = PyValue::Int(if path == "numpy.zeros" { 0 } else { 1 });
            tensor(full(&shape_of(b.required(0)?)?, &fill, dtype)?)
        }
        "numpy.full" => {
            let b = bind(path, args, &["shape", "fill_value", "dtype"], 2)?;
            let fill = b.required(1)?;
            let dtype = match b.get(2) {
                Some(d) => numpy_dtype(path, d)?,
                None => infer_numpy(std::slice::from_ref(fill))?,
            };
            tensor(full(&shape_of(b.required(0)?)?, fill, dtype)?)
        }
        "numpy.arange" => {
            let b = bind(path, args, &["start", "stop", "step", "dtype"], 1)?;
            let dtype = b.get(3).map(|d| numpy_dtype(path, d)).transpose()?;
            tensor(arange(b.required(0)?, b.value(1)?, b.value(2)?, dtype)?)
        }
        "numpy.eye" => {
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
            tensor(Tensor { elem: dtype, dims: vec![rows as i64, cols as i64], data })
        }
        "numpy.linspace" => {
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
            // numpy's algorithm, in float64: y = arange(num) * step + start, the end point exact.
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
            let items: Vec<PyValue> = values.into_iter().map(PyValue::Float).collect();
            let dtype = b.get(5).map(|d| numpy_dtype(path, d)).transpose()?.unwrap_or(ElemType::Double);
            let data = encode(dtype, &items, Overflow::Ieee)?;
            tensor(Tensor { elem: dtype, dims: vec![num as i64], data })
        }
        "numpy.sqrt" | "numpy.abs" | "numpy.absolute" => {
            let b = bind(path, args, &["x"], 1)?;
            tensor(unary_ufunc(path, b.required(0)?)?)
        }
        "numpy.dtype" => {
            let b = bind(path, args, &["dtype"], 1)?;
            let elem = numpy_dtype(path, b.get(0).ok_or_else(|| LibError::Python("dtype() needs a type".into()))?)?;
            Ok(Member::Object(numpy_type_path(elem)?))
        }
        "numpy.finfo" | "numpy.iinfo" => {
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
        "onnx.helper.make_tensor" => {
            let b = bind(path, args, &["name", "data_type", "dims", "vals", "raw"], 4)?;
            if !matches!(b.required(0)?, PyValue::Str(_)) {
                return Err(LibError::Python("TypeError: the tensor name must be a string".into()));
            }
            let elem = data_type_arg(b.required(1)?)?;
            let raw = b.value(4)?.map(|v| v.truth()).transpose().map_err(LibError::Python)?.unwrap_or(false);
            if raw {
                return Err(LibError::Unsupported("`make_tensor(..., raw=True)` (raw bytes)".into()));
            }
            tensor(make_tensor(elem, b.required(2)?, b.required(3)?)?)
        }
        "onnx.numpy_helper.from_array" => {
            let b = bind(path, args, &["array", "name"], 1)?;
            match b.required(0)? {
                PyValue::Tensor(t) => tensor((**t).clone()),
                other => Err(LibError::Python(format!(
                    "TypeError: from_array expects a numpy array, not {}",
                    other.type_name()
                ))),
            }
        }
        "onnx_ir.tensor" => {
            let b = bind(path, args, &["value", "dtype", "name", "doc_string"], 1)?;
            let dtype = b.value(1)?.filter(|d| !matches!(d, PyValue::None)).map(data_type_arg).transpose()?;
            tensor(ir_tensor(b.required(0)?, dtype)?)
        }
        "onnx_ir.Tensor" => {
            let b = bind(path, args, &["value", "dtype", "shape", "name", "doc_string"], 1)?;
            match b.required(0)? {
                PyValue::Tensor(t) => tensor((**t).clone()),
                other => Err(LibError::Python(format!(
                    "TypeError: ir.Tensor expects a numpy array, not {}",
                    other.type_name()
                ))),
            }
        }
        "onnx_ir.DataType" | "onnx.TensorProto" => {
            let b = bind(path, args, &["value"], 1)?;
            let elem = data_type_arg(b.required(0)?)?;
            Ok(Member::Value(PyValue::Int(elem.code() as i128)))
        }
        _ => Err(LibError::Unsupported(format!("`{}`", display(path)))),
    }
}

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
            Ok(Member::Value(PyValue::Tensor(Arc::new(Tensor { elem, dims: t.dims.clone(), data }))))
        }
        "tolist" => {
            bind(&function, args, &[], 0)?;
            let items = elements(t)?;
            Ok(Member::Value(nest(&items, &t.dims)))
        }
        "reshape" => {
            // `a.reshape(2, 3)` or `a.reshape((2, 3))`, one dimension may be -1.
            let dims: Vec<PyValue> = match args.positional.as_slice() {
                [Member::Value(v)] if v.items().is_some() => v.items().unwrap_or(&[]).to_vec(),
                many => many
                    .iter()
                    .map(|m| match m {
                        Member::Value(v) => Ok(v.clone()),
                        Member::Object(o) => Err(LibError::Unsupported(format!("`{}` as a dimension", display(o)))),
                    })
                    .collect::<LibResult<_>>()?,
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
            let bad =
                || LibError::Python(format!("ValueError: cannot reshape array of size {n} into shape {wanted:?}"));
            if free > 1
                || wanted.iter().any(|d| *d < -1)
                || (free == 0 && known != n)
                || (free == 1 && (known == 0 || n % known != 0))
            {
                return Err(bad());
            }
            let dims = wanted.iter().map(|d| if *d == -1 { (n / known) as i64 } else { *d as i64 }).collect();
            Ok(Member::Value(PyValue::Tensor(Arc::new(Tensor { elem: t.elem, dims, data: t.data.clone() }))))
        }
        "flatten" | "ravel" | "copy" => {
            bind(&function, args, &[], 0)?;
            let dims = if name == "copy" { t.dims.clone() } else { vec![t.len() as i64] };
            Ok(Member::Value(PyValue::Tensor(Arc::new(Tensor { elem: t.elem, dims, data: t.data.clone() }))))
        }
        "transpose" => {
            bind(&function, args, &[], 0)?;
            Ok(Member::Value(PyValue::Tensor(Arc::new(transpose(t)?))))
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

/// The elements as tensor data of `elem`, or why Python raises (or onnxsc cannot build it).
fn encode(elem: ElemType, items: &[PyValue], overflow: Overflow) -> LibResult<TensorData> {
    if !convert::supported(elem) {
        return Err(LibError::Unsupported(format!("constants of type {}", elem.script_name())));
    }
    convert::encode(elem, items, overflow).map_err(LibError::Python)
}

/// `np.sqrt(x)` and `np.abs(x)`: exact operations (the square root is correctly rounded), on a
/// number (a float64 result, or int64 for `abs` of an int) or an array of its own type.
fn unary_ufunc(path: &str, v: &PyValue) -> LibResult<Tensor> {
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
fn numpy_type_path(elem: ElemType) -> LibResult<String> {
    NUMPY_TYPES
        .iter()
        .find(|(_, t)| *t == elem)
        .map(|(n, _)| format!("numpy.{n}"))
        .ok_or_else(|| LibError::Unsupported(format!("the numpy type of {}", elem.script_name())))
}

/// A `dtype=` argument of numpy: a scalar type (`np.float32`), a Python type (`float` is
/// float64), or a name (`"float32"`).
fn numpy_dtype(function: &str, d: &Member) -> LibResult<ElemType> {
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
            .ok_or_else(|| bad(format!("the dtype name {}", super::value::str_repr(s)))),
        Member::Value(PyValue::None) => Err(bad("`None`".into())),
        Member::Value(v) => Err(bad(v.brief())),
    }
}

/// A `TensorProto.DataType` code, as `make_tensor` and `ir.tensor` take it.
fn data_type_arg(v: &PyValue) -> LibResult<ElemType> {
    match v {
        PyValue::Int(code) => ElemType::from_code(i64::try_from(*code).unwrap_or(-1))
            .ok_or_else(|| LibError::Python(format!("ValueError: {code} is not a valid TensorProto data type"))),
        other => Err(LibError::Python(format!(
            "TypeError: the data type must be a `TensorProto` or `ir.DataType` member, not {}",
            other.brief()
        ))),
    }
}

/// A shape argument: an int or a sequence of ints.
fn shape_of(v: &PyValue) -> LibResult<Vec<i64>> {
    let dim = |v: &PyValue| match v {
        PyValue::Int(i) if *i >= 0 => i64::try_from(*i).map_err(|_| LibError::TooLarge(u64::MAX)),
        PyValue::Int(_) => Err(LibError::Python("ValueError: negative dimensions are not allowed".into())),
        PyValue::Tensor(t) => match t.scalar() {
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

fn check_size(dims: &[i64]) -> LibResult<u64> {
    let n = dims.iter().try_fold(1u64, |n, d| n.checked_mul(*d as u64)).unwrap_or(u64::MAX);
    if n > MAX_CONSTANT_ELEMENTS {
        return Err(LibError::TooLarge(n));
    }
    Ok(n)
}

fn full(dims: &[i64], fill: &PyValue, elem: ElemType) -> LibResult<Tensor> {
    let n = check_size(dims)?;
    let fill = match fill {
        PyValue::Tensor(t) => t.scalar().ok_or_else(|| LibError::Unsupported("an array as a fill value".into()))?,
        other => other.clone(),
    };
    let items = vec![fill; n as usize];
    let data = encode(elem, &items, Overflow::Ieee)?;
    Ok(Tensor { elem, dims: dims.to_vec(), data })
}

fn arange(a: &PyValue, b: Option<&PyValue>, step: Option<&PyValue>, dtype: Option<ElemType>) -> LibResult<Tensor> {
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
fn nest(items: &[PyValue], dims: &[i64]) -> PyValue {
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
                    PyValue::Tensor(t) if t.is_scalar() => t
                        .scalar()
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
fn infer_numpy(items: &[PyValue]) -> LibResult<ElemType> {
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
fn scalar_tensor(elem: ElemType, v: &PyValue) -> LibResult<Tensor> {
    let v = match v {
        PyValue::Tensor(t) => t.scalar().ok_or_else(|| LibError::Unsupported("converting this array".into()))?,
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
fn make_tensor(elem: ElemType, dims: &PyValue, vals: &PyValue) -> LibResult<Tensor> {
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

// -------------------------------------------------------------------------------------------------
// math and builtins

fn float_arg(function: &str, v: &PyValue) -> LibResult<f64> {
    match v {
        PyValue::Tensor(t) => t.scalar().and_then(|s| s.as_f64()),
        other => other.as_f64(),
    }
    .ok_or_else(|| {
        LibError::Python(format!("TypeError: {}() needs a number, not {}", display(function), v.type_name()))
    })
}

/// A `math` result as CPython checks it: NaN from a non-NaN argument is a domain error, an
/// infinity from finite arguments an overflow.
fn checked(result: f64, inputs: &[f64]) -> LibResult<f64> {
    if result.is_nan() && !inputs.iter().any(|x| x.is_nan()) {
        return Err(LibError::Python("ValueError: math domain error".into()));
    }
    if result.is_infinite() && inputs.iter().all(|x| x.is_finite()) {
        return Err(LibError::Python("OverflowError: math range error".into()));
    }
    Ok(result)
}

fn float_to_int(f: f64) -> LibResult<PyValue> {
    if f.is_nan() {
        return Err(LibError::Python("ValueError: cannot convert float NaN to integer".into()));
    }
    if f.is_infinite() {
        return Err(LibError::Python("OverflowError: cannot convert float infinity to integer".into()));
    }
    if f.abs() >= 2f64.powi(127) {
        return Err(LibError::Unsupported("integers beyond 2**127".into()));
    }
    Ok(PyValue::Int(f as i128))
}

fn math(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
    if MATH_UNARY.contains(&name) {
        let b = bind(path, args, &["x"], 1)?;
        let x = float_arg(path, b.required(0)?)?;
        let r = match name {
            "sqrt" => x.sqrt(),
            "exp" => x.exp(),
            "expm1" => x.exp_m1(),
            "log2" => x.log2(),
            "log10" => x.log10(),
            "log1p" => x.ln_1p(),
            "sin" => x.sin(),
            "cos" => x.cos(),
            "tan" => x.tan(),
            "asin" => x.asin(),
            "acos" => x.acos(),
            "atan" => x.atan(),
            "sinh" => x.sinh(),
            "cosh" => x.cosh(),
            "tanh" => x.tanh(),
            "asinh" => x.asinh(),
            "acosh" => x.acosh(),
            "atanh" => x.atanh(),
            _ => x.abs(),
        };
        // log(0) is -inf from a finite argument: CPython reports it as a domain error.
        if r.is_infinite() && x.is_finite() && matches!(name, "log2" | "log10" | "log1p" | "atanh") {
            return Err(LibError::Python("ValueError: math domain error".into()));
        }
        return checked(r, &[x]).map(PyValue::Float);
    }
    match name {
        "log" => {
            let b = bind(path, args, &["x", "base"], 1)?;
            let x = float_arg(path, b.required(0)?)?;
            if x <= 0.0 {
                return Err(LibError::Python("ValueError: math domain error".into()));
            }
            let num = x.ln();
            match b.value(1)? {
                None => checked(num, &[x]).map(PyValue::Float),
                Some(base) => {
                    let base = float_arg(path, base)?;
                    if base <= 0.0 {
                        return Err(LibError::Python("ValueError: math domain error".into()));
                    }
                    let den = base.ln();
                    if den == 0.0 {
                        return Err(LibError::Python("ZeroDivisionError: float division by zero".into()));
                    }
                    Ok(PyValue::Float(num / den))
                }
            }
        }
        "pow" | "atan2" | "hypot" | "copysign" | "fmod" => {
            let b = bind(path, args, &["x", "y"], 2)?;
            let (x, y) = (float_arg(path, b.required(0)?)?, float_arg(path, b.required(1)?)?);
            let r = match name {
                "pow" => x.powf(y),
                "atan2" => x.atan2(y),
                "hypot" => x.hypot(y),
                "copysign" => x.copysign(y),
                _ => {
                    if y == 0.0 || x.is_infinite() {
                        return Err(LibError::Python("ValueError: math domain error".into()));
                    }
                    x % y
                }
            };
            checked(r, &[x, y]).map(PyValue::Float)
        }
        "floor" | "ceil" | "trunc" => {
            let b = bind(path, args, &["x"], 1)?;
            match b.required(0)? {
                PyValue::Int(i) => Ok(PyValue::Int(*i)),
                PyValue::Bool(v) => Ok(PyValue::Int(*v as i128)),
                v => {
                    let x = float_arg(path, v)?;
                    float_to_int(match name {
                        "floor" => x.floor(),
                        "ceil" => x.ceil(),
                        _ => x.trunc(),
                    })
                }
            }
        }
        "degrees" | "radians" => {
            let b = bind(path, args, &["x"], 1)?;
            let x = float_arg(path, b.required(0)?)?;
            Ok(PyValue::Float(if name == "degrees" {
                x * (180.0 / std::f64::consts::PI)
            } else {
                x * (std::f64::consts::PI / 180.0)
            }))
        }
        "isinf" | "isnan" | "isfinite" => {
            let b = bind(path, args, &["x"], 1)?;
            let x = float_arg(path, b.required(0)?)?;
            Ok(PyValue::Bool(match name {
                "isinf" => x.is_infinite(),
                "isnan" => x.is_nan(),
                _ => x.is_finite(),
            }))
        }
        "isqrt" => {
            let b = bind(path, args, &["n"], 1)?;
            match b.required(0)? {
                PyValue::Int(n) if *n >= 0 => {
                    // Start from the float root and correct it, without overflow.
                    let square_at_most = |r: i128| r.checked_mul(r).is_some_and(|sq| sq <= *n);
                    let mut r = (*n as f64).sqrt() as i128;
                    while r > 0 && !square_at_most(r) {
                        r -= 1;
                    }
                    while square_at_most(r + 1) {
                        r += 1;
                    }
                    Ok(PyValue::Int(r))
                }
                PyValue::Int(_) => Err(LibError::Python("ValueError: isqrt() argument must be nonnegative".into())),
                other => Err(LibError::Python(format!("TypeError: isqrt() needs an int, not {}", other.type_name()))),
            }
        }
        "gcd" => {
            let mut g: i128 = 0;
            for a in &args.positional {
                match a {
                    Member::Value(PyValue::Int(i)) => {
                        let (mut x, mut y) = (g.abs(), i.abs());
                        while y != 0 {
                            (x, y) = (y, x % y);
                        }
                        g = x;
                    }
                    _ => return Err(LibError::Python("TypeError: gcd() takes integers".into())),
                }
            }
            Ok(PyValue::Int(g))
        }
        "prod" => {
            let b = bind(path, args, &["iterable"], 1)?;
            let items =
                b.required(0)?.items().ok_or_else(|| LibError::Python("TypeError: prod() needs a sequence".into()))?;
            let mut acc = PyValue::Int(1);
            for i in items {
                acc = match (&acc, i) {
                    (PyValue::Int(a), PyValue::Int(b)) => PyValue::Int(
                        a.checked_mul(*b).ok_or_else(|| LibError::Unsupported("integers beyond 2**127".into()))?,
                    ),
                    (a, b) => PyValue::Float(float_arg(path, a)? * float_arg(path, b)?),
                };
            }
            Ok(acc)
        }
        _ => Err(LibError::Unsupported(format!("`math.{name}`"))),
    }
}

fn builtin_call(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
    match name {
        "float" => {
            let b = bind(path, args, &["x"], 0)?;
            Ok(PyValue::Float(match b.value(0)? {
                None => 0.0,
                Some(PyValue::Str(s)) => parse_float(s)?,
                Some(PyValue::Int(i)) => *i as f64,
                Some(v) => float_arg(path, v)?,
            }))
        }
        "int" => {
            let b = bind(path, args, &["x"], 0)?;
            match b.value(0)? {
                None => Ok(PyValue::Int(0)),
                Some(PyValue::Int(i)) => Ok(PyValue::Int(*i)),
                Some(PyValue::Bool(v)) => Ok(PyValue::Int(*v as i128)),
                Some(PyValue::Str(s)) => s.trim().replace('_', "").parse::<i128>().map(PyValue::Int).map_err(|_| {
                    LibError::Python(format!("ValueError: invalid literal for int(): {}", super::value::str_repr(s)))
                }),
                Some(PyValue::Tensor(t)) => match t.scalar() {
                    Some(PyValue::Float(f)) => float_to_int(f.trunc()),
                    Some(PyValue::Int(i)) => Ok(PyValue::Int(i)),
                    Some(PyValue::Bool(v)) => Ok(PyValue::Int(v as i128)),
                    _ => Err(LibError::Python("TypeError: only size-1 arrays can be converted".into())),
                },
                Some(v) => float_to_int(float_arg(path, v)?.trunc()),
            }
        }
        "bool" => {
            let b = bind(path, args, &["x"], 0)?;
            Ok(PyValue::Bool(b.value(0)?.map(|v| v.truth()).transpose().map_err(LibError::Python)?.unwrap_or(false)))
        }
        "str" => {
            let b = bind(path, args, &["object"], 0)?;
            let v = b.value(0)?.cloned().unwrap_or(PyValue::str(""));
            if v.weight() > MAX_CONSTANT_ELEMENTS {
                return Err(LibError::TooLarge(v.weight()));
            }
            if v.has_tensor() {
                return Err(LibError::Unsupported("`str` of a numpy value or tensor".into()));
            }
            Ok(PyValue::str(&v.to_str()))
        }
        "len" => {
            let b = bind(path, args, &["obj"], 1)?;
            match b.required(0)? {
                PyValue::Str(s) => Ok(PyValue::Int(s.chars().count() as i128)),
                PyValue::List(s) => Ok(PyValue::Int(s.len() as i128)),
                PyValue::Tensor(t) if !t.is_scalar() => Ok(PyValue::Int(t.dims[0] as i128)),
                other => {
                    Err(LibError::Python(format!("TypeError: object of type '{}' has no len()", other.type_name())))
                }
            }
        }
        "abs" => {
            let b = bind(path, args, &["x"], 1)?;
            match b.required(0)? {
                PyValue::Int(i) => Ok(PyValue::Int(i.abs())),
                PyValue::Bool(v) => Ok(PyValue::Int(*v as i128)),
                PyValue::Float(f) => Ok(PyValue::Float(f.abs())),
                other => {
                    Err(LibError::Python(format!("TypeError: bad operand type for abs(): '{}'", other.type_name())))
                }
            }
        }
        "min" | "max" => {
            let items: Vec<PyValue> = match args.positional.as_slice() {
                [Member::Value(one)] => one
                    .items()
                    .map(|s| s.to_vec())
                    .ok_or_else(|| LibError::Python(format!("TypeError: {name}() needs a sequence")))?,
                many => many
                    .iter()
                    .map(|m| match m {
                        Member::Value(v) => Ok(v.clone()),
                        Member::Object(o) => Err(LibError::Unsupported(format!("`{}` in {name}()", display(o)))),
                    })
                    .collect::<LibResult<_>>()?,
            };
            let mut best: Option<PyValue> = None;
            for v in items {
                let x = float_arg(path, &v)?;
                let better = match &best {
                    None => true,
                    Some(b) => {
                        let y = float_arg(path, b)?;
                        if name == "min" {
                            x < y
                        } else {
                            x > y
                        }
                    }
                };
                if better {
                    best = Some(v);
                }
            }
            best.ok_or_else(|| LibError::Python(format!("ValueError: {name}() arg is an empty sequence")))
        }
        "round" => {
            let b = bind(path, args, &["number", "ndigits"], 1)?;
            let x = b.required(0)?;
            match (x, b.value(1)?) {
                (PyValue::Int(i), _) => Ok(PyValue::Int(*i)),
                (v, None) => float_to_int(round_half_even(float_arg(path, v)?)),
                (_, Some(_)) => Err(LibError::Unsupported("`round` with `ndigits`".into())),
            }
        }
        "list" | "tuple" => {
            let b = bind(path, args, &["iterable"], 0)?;
            let items: Vec<PyValue> = match b.value(0)? {
                None => Vec::new(),
                Some(PyValue::Str(s)) => s.chars().map(|c| PyValue::str(&c.to_string())).collect(),
                Some(PyValue::Tensor(t)) => elements(t)?,
                Some(v) => v.items().map(|s| s.to_vec()).ok_or_else(|| {
                    LibError::Python(format!("TypeError: '{}' object is not iterable", v.type_name()))
                })?,
            };
            Ok(if name == "list" { PyValue::list(items) } else { PyValue::tuple(items) })
        }
        "range" => {
            let b = bind(path, args, &["start", "stop", "step"], 1)?;
            let int = |v: &PyValue| match v {
                PyValue::Int(i) => Ok(*i),
                PyValue::Bool(v) => Ok(*v as i128),
                other => Err(LibError::Python(format!(
                    "TypeError: '{}' object cannot be interpreted as an integer",
                    other.type_name()
                ))),
            };
            let first = int(b.required(0)?)?;
            let (start, stop) = match b.value(1)? {
                Some(s) => (first, int(s)?),
                None => (0, first),
            };
            let step = b.value(2)?.map(int).transpose()?.unwrap_or(1);
            if step == 0 {
                return Err(LibError::Python("ValueError: range() arg 3 must not be zero".into()));
            }
            let n = range_len(start, stop, step)?;
            if n as u128 > MAX_CONSTANT_ELEMENTS as u128 {
                return Err(LibError::TooLarge(n.min(u64::MAX as i128) as u64));
            }
            Ok(PyValue::tuple((0..n).map(|i| PyValue::Int(start + i * step)).collect()))
        }
        "pow" => {
            let b = bind(path, args, &["base", "exp"], 2)?;
            let (x, y) = (float_arg(path, b.required(0)?)?, float_arg(path, b.required(1)?)?);
            match (b.required(0)?, b.required(1)?) {
                (PyValue::Int(a), PyValue::Int(e)) if *e >= 0 => u32::try_from(*e)
                    .ok()
                    .and_then(|e| a.checked_pow(e))
                    .map(PyValue::Int)
                    .ok_or_else(|| LibError::Unsupported("integers beyond 2**127".into())),
                _ => checked(x.powf(y), &[x, y]).map(PyValue::Float),
            }
        }
        "sum" => {
            let b = bind(path, args, &["iterable", "start"], 1)?;
            let items =
                b.required(0)?.items().ok_or_else(|| LibError::Python("TypeError: sum() needs a sequence".into()))?;
            let mut acc = b.value(1)?.cloned().unwrap_or(PyValue::Int(0));
            for i in items {
                acc = match (&acc, i) {
                    (PyValue::Int(a), PyValue::Int(b)) => PyValue::Int(
                        a.checked_add(*b).ok_or_else(|| LibError::Unsupported("integers beyond 2**127".into()))?,
                    ),
                    (a, b) => PyValue::Float(float_arg(path, a)? + float_arg(path, b)?),
                };
            }
            Ok(acc)
        }
        _ => Err(LibError::Unsupported(format!("`{name}`"))),
    }
}

/// The length of `range(start, stop, step)` (step not 0), without overflow.
fn range_len(start: i128, stop: i128, step: i128) -> LibResult<i128> {
    if !((step > 0 && stop > start) || (step < 0 && stop < start)) {
        return Ok(0);
    }
    let span = stop.abs_diff(start);
    let step = step.unsigned_abs();
    let n = span / step + u128::from(span % step != 0);
    i128::try_from(n).map_err(|_| LibError::TooLarge(u64::MAX))
}

/// `float("inf")`, `float("-1.5")`: Python's float literals in strings.
fn parse_float(s: &str) -> LibResult<f64> {
    let t = s.trim().to_ascii_lowercase().replace('_', "");
    let (sign, body) = match t.strip_prefix('-') {
        Some(rest) => (-1.0, rest.to_string()),
        None => (1.0, t.trim_start_matches('+').to_string()),
    };
    let v = match body.as_str() {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ if body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-')) => {
            body.parse::<f64>().map_err(|_| {
                LibError::Python(format!(
                    "ValueError: could not convert string to float: {}",
                    super::value::str_repr(s)
                ))
            })?
        }
        _ => {
            return Err(LibError::Python(format!(
                "ValueError: could not convert string to float: {}",
                super::value::str_repr(s)
            )))
        }
    };
    Ok(sign * v)
}

fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}
