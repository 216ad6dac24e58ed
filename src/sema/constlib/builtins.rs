//! Python's builtins (`int`, `len`, `min`, `range`, ...).

use super::bind::{bind, positional_values};
use super::numbers::{checked, float_arg, float_to_int, range_len};
use super::tensors::elements;
use super::{Args, LibError, LibResult, Member};
use crate::sema::value::{str_repr, PyValue, MAX_CONSTANT_ELEMENTS};

/// Calls the builtin `name` (`path` is `builtins.name`, for messages).
pub(super) fn builtin_call(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
    match name {
        "float" => to_float(path, args),
        "int" => to_int(path, args),
        "bool" => to_bool(path, args),
        "str" => to_str(path, args),
        "len" => len(path, args),
        "abs" => abs(path, args),
        "min" | "max" => min_or_max(path, name, args),
        "round" => round(path, args),
        "list" | "tuple" => list_or_tuple(path, name, args),
        "range" => range(path, args),
        "pow" => pow(path, args),
        "sum" => sum(path, args),
        _ => Err(LibError::Unsupported(format!("`{name}`"))),
    }
}

/// `float(x)`.
fn to_float(path: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["x"], 0)?;
    Ok(PyValue::Float(match b.value(0)? {
        None => 0.0,
        Some(PyValue::Str(s)) => parse_float(s)?,
        Some(PyValue::Int(i)) => *i as f64,
        Some(v) => float_arg(path, v)?,
    }))
}

/// `int(x)`: floats truncate; strings are decimal.
fn to_int(path: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["x"], 0)?;
    match b.value(0)? {
        None => Ok(PyValue::Int(0)),
        Some(PyValue::Int(i)) => Ok(PyValue::Int(*i)),
        Some(PyValue::Bool(v)) => Ok(PyValue::Int(*v as i128)),
        Some(PyValue::Str(s)) => s
            .trim()
            .replace('_', "")
            .parse::<i128>()
            .map(PyValue::Int)
            .map_err(|_| LibError::Python(format!("ValueError: invalid literal for int(): {}", str_repr(s)))),
        Some(PyValue::Tensor(t)) => match PyValue::scalar_of(t) {
            Some(PyValue::Float(f)) => float_to_int(f.trunc()),
            Some(PyValue::Int(i)) => Ok(PyValue::Int(i)),
            Some(PyValue::Bool(v)) => Ok(PyValue::Int(v as i128)),
            _ => Err(LibError::Python("TypeError: only size-1 arrays can be converted".into())),
        },
        Some(v) => float_to_int(float_arg(path, v)?.trunc()),
    }
}

/// `bool(x)`.
fn to_bool(path: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["x"], 0)?;
    Ok(PyValue::Bool(b.value(0)?.map(|v| v.truth()).transpose().map_err(LibError::Python)?.unwrap_or(false)))
}

/// `str(object)`, of Python values only.
fn to_str(path: &str, args: &Args) -> LibResult<PyValue> {
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

/// `len(obj)`.
fn len(path: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["obj"], 1)?;
    match b.required(0)? {
        PyValue::Str(s) => Ok(PyValue::Int(s.chars().count() as i128)),
        PyValue::List(s) => Ok(PyValue::Int(s.len() as i128)),
        PyValue::Tensor(t) if !t.is_scalar() => Ok(PyValue::Int(t.dims[0] as i128)),
        other => Err(LibError::Python(format!("TypeError: object of type '{}' has no len()", other.type_name()))),
    }
}

/// `abs(x)`.
fn abs(path: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["x"], 1)?;
    match b.required(0)? {
        PyValue::Int(i) => Ok(PyValue::Int(i.abs())),
        PyValue::Bool(v) => Ok(PyValue::Int(*v as i128)),
        PyValue::Float(f) => Ok(PyValue::Float(f.abs())),
        other => Err(LibError::Python(format!("TypeError: bad operand type for abs(): '{}'", other.type_name()))),
    }
}

/// `min` and `max`, of one sequence or of several arguments: the first of the smallest (largest).
fn min_or_max(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
    let items: Vec<PyValue> = match args.positional.as_slice() {
        [Member::Value(one)] => one
            .items()
            .map(|s| s.to_vec())
            .ok_or_else(|| LibError::Python(format!("TypeError: {name}() needs a sequence")))?,
        _ => positional_values(args, &format!("in {name}()"))?,
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

/// `round(number)`: half to even (with `ndigits`, not evaluated).
fn round(path: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["number", "ndigits"], 1)?;
    let x = b.required(0)?;
    match (x, b.value(1)?) {
        (PyValue::Int(i), _) => Ok(PyValue::Int(*i)),
        (v, None) => float_to_int(round_half_even(float_arg(path, v)?)),
        (_, Some(_)) => Err(LibError::Unsupported("`round` with `ndigits`".into())),
    }
}

/// `list(iterable)` and `tuple(iterable)`.
fn list_or_tuple(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["iterable"], 0)?;
    let items: Vec<PyValue> = match b.value(0)? {
        None => Vec::new(),
        Some(PyValue::Str(s)) => s.chars().map(|c| PyValue::str(&c.to_string())).collect(),
        Some(PyValue::Tensor(t)) => elements(t)?,
        Some(v) => v
            .items()
            .map(|s| s.to_vec())
            .ok_or_else(|| LibError::Python(format!("TypeError: '{}' object is not iterable", v.type_name())))?,
    };
    Ok(if name == "list" { PyValue::list(items) } else { PyValue::tuple(items) })
}

/// `range(start, stop, step)`, as the tuple of its values.
fn range(path: &str, args: &Args) -> LibResult<PyValue> {
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

/// `pow(base, exp)`: exact for ints and a non-negative exponent.
fn pow(path: &str, args: &Args) -> LibResult<PyValue> {
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

/// `sum(iterable, start)`: exact over ints, float64 once a float joins.
fn sum(path: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["iterable", "start"], 1)?;
    let items = b.required(0)?.items().ok_or_else(|| LibError::Python("TypeError: sum() needs a sequence".into()))?;
    let mut acc = b.value(1)?.cloned().unwrap_or(PyValue::Int(0));
    for i in items {
        acc = match (&acc, i) {
            (PyValue::Int(a), PyValue::Int(b)) => {
                PyValue::Int(a.checked_add(*b).ok_or_else(|| LibError::Unsupported("integers beyond 2**127".into()))?)
            }
            (a, b) => PyValue::Float(float_arg(path, a)? + float_arg(path, b)?),
        };
    }
    Ok(acc)
}

/// `float("inf")`, `float("-1.5")`: Python's float literals in strings.
fn parse_float(s: &str) -> LibResult<f64> {
    let t = s.trim().to_ascii_lowercase().replace('_', "");
    let (sign, body) = match t.strip_prefix('-') {
        Some(rest) => (-1.0, rest.to_string()),
        None => (1.0, t.trim_start_matches('+').to_string()),
    };
    let invalid = || LibError::Python(format!("ValueError: could not convert string to float: {}", str_repr(s)));
    let v = match body.as_str() {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ if body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-')) => {
            body.parse::<f64>().map_err(|_| invalid())?
        }
        _ => return Err(invalid()),
    };
    Ok(sign * v)
}

/// Python's `round(x)`: a half goes to the even neighbour.
fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}
