//! Python's builtins (`int`, `len`, `min`, `range`, ...).

use super::bind::bind;
use super::numbers::{checked, float_arg, float_to_int, range_len};
use super::tensors::elements;
use super::{display, Args, LibError, LibResult, Member};
use crate::sema::value::{str_repr, PyValue, MAX_CONSTANT_ELEMENTS};

pub(super) fn builtin_call(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
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
                Some(PyValue::Str(s)) => {
                    s.trim().replace('_', "").parse::<i128>().map(PyValue::Int).map_err(|_| {
                        LibError::Python(format!("ValueError: invalid literal for int(): {}", str_repr(s)))
                    })
                }
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
        _ if body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-')) => body
            .parse::<f64>()
            .map_err(|_| LibError::Python(format!("ValueError: could not convert string to float: {}", str_repr(s))))?,
        _ => return Err(LibError::Python(format!("ValueError: could not convert string to float: {}", str_repr(s)))),
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
