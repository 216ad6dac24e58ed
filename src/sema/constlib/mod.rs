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
//!
//! This file holds the paths and members. Its parts use each other in one direction only:
//! `call` (the dispatcher) uses all the others; `builtins` uses `tensors`, `numbers` and `bind`;
//! `math` uses `numbers` and `bind`; `tensors` uses `numbers`.

mod bind;
mod builtins;
mod call;
mod math;
mod numbers;
mod tensors;

pub use call::{call, call_method};
pub use tensors::{elements, ir_tensor, np_array, transpose};

use super::value::PyValue;
use crate::onnx::ElemType;
use std::sync::Arc;
use tensors::scalar_tensor;

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
        "onnxscript.function_libs.torch_lib.ops" => TORCHLIB_OPS,
        "onnxscript.function_libs.torch_lib.ops.common" => TORCHLIB_COMMON,
        other => return RUN_TIME_MODULES.iter().copied().find(|m| *m == other),
    })
}

const TORCHLIB_CONSTANTS: &str = "onnxscript.function_libs.torch_lib._constants";
const TORCHLIB_OPS: &str = "onnxscript.function_libs.torch_lib.ops";
/// torchlib's `common` module: its helpers run at trace time (`sema::eval::torchlib_common`).
const TORCHLIB_COMMON: &str = "onnxscript.function_libs.torch_lib.ops.common";
const TORCHLIB_COMMON_FUNCTIONS: [&str; 5] = ["merge_dims", "constant", "cast_to", "Rank", "IsScalar"];

/// The name of a function of torchlib's `common` module, from its library path.
pub fn torchlib_common_member(path: &str) -> Option<&str> {
    path.strip_prefix(TORCHLIB_COMMON)?.strip_prefix('.').filter(|n| TORCHLIB_COMMON_FUNCTIONS.contains(n))
}

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

const BUILTINS: [&str; 23] = [
    "int",
    "float",
    "bool",
    "str",
    "len",
    "abs",
    "min",
    "max",
    "round",
    "list",
    "tuple",
    "range",
    "pow",
    "sum",
    // Evaluated at trace time (`sema::eval::calls`).
    "isinstance",
    "enumerate",
    "zip",
    "sorted",
    "reversed",
    "all",
    "any",
    "set",
    "divmod",
];

/// Every name of Python's `builtins` module that code may read without defining it (functions,
/// types, exceptions and constants): trace-time code may name one onnxsc does not evaluate, which
/// is an error where it runs, not an undefined name.
const PYTHON_BUILTINS: [&str; 98] = [
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "NotImplemented",
    "Ellipsis",
    "__name__",
    "__file__",
    "BaseException",
    "Exception",
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "IndexError",
    "KeyError",
    "LookupError",
    "NameError",
    "NotImplementedError",
    "OverflowError",
    "RecursionError",
    "RuntimeError",
    "StopIteration",
    "TypeError",
    "ValueError",
    "ZeroDivisionError",
    "UserWarning",
    "Warning",
    "DeprecationWarning",
    "RuntimeWarning",
    "OSError",
    "ImportError",
    "ModuleNotFoundError",
];

/// Whether `name` is one of Python's builtins (evaluated by onnxsc or not).
pub fn is_python_builtin(name: &str) -> bool {
    PYTHON_BUILTINS.contains(&name)
}

/// The builtins onnxsc evaluates.
pub fn evaluated_builtins() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().copied()
}

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
        "onnxscript.function_libs.torch_lib" => match name {
            "_constants" => object(TORCHLIB_CONSTANTS),
            "ops" => object(TORCHLIB_OPS),
            _ => None,
        },
        TORCHLIB_CONSTANTS => (name == "DOMAIN").then(|| Member::Value(PyValue::str("pkg.onnxscript.torch_lib"))),
        TORCHLIB_OPS => (name == "common").then(|| Member::Object(TORCHLIB_COMMON.into())),
        TORCHLIB_COMMON => match name {
            "COMPLEX64_TYPE" => value(PyValue::DType(ElemType::Complex64)),
            "COMPLEX128_TYPE" => value(PyValue::DType(ElemType::Complex128)),
            "DOMAIN" => value(PyValue::str("pkg.onnxscript.torch_lib.common")),
            _ if TORCHLIB_COMMON_FUNCTIONS.contains(&name) => object(&format!("{TORCHLIB_COMMON}.{name}")),
            _ => None,
        },
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

/// `ir.DataType.X.min` and `.max`: a Python int for an integer type, a scalar of the type for a
/// floating-point one (as onnx_ir gives them); `None` for a type without limits (`BOOL`).
pub fn dtype_limit(elem: ElemType, name: &str) -> Option<PyValue> {
    if elem.int_range().is_some() {
        return info_member("iinfo", elem, name);
    }
    info_member("finfo", elem, name)
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
        ElemType::Bfloat16 => (3.3895313892515355e38, 2f64.powi(-7), 2f64.powi(-126)),
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
        TORCHLIB_OPS => vec!["common".into()],
        TORCHLIB_COMMON => ["COMPLEX64_TYPE", "COMPLEX128_TYPE", "DOMAIN"]
            .into_iter()
            .chain(TORCHLIB_COMMON_FUNCTIONS)
            .map(String::from)
            .collect(),
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
