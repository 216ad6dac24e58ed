//! Python's `math` module.

use super::bind::bind;
use super::numbers::{checked, float_arg, float_to_int};
use super::{Args, LibError, LibResult, Member, MATH_UNARY};
use crate::sema::value::PyValue;

/// Calls `math.name` (`path` is its full path, for messages).
pub(super) fn math(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
    if MATH_UNARY.contains(&name) {
        return unary(path, name, args);
    }
    match name {
        "log" => log(path, args),
        "pow" | "atan2" | "hypot" | "copysign" | "fmod" => binary(path, name, args),
        "floor" | "ceil" | "trunc" => to_integer(path, name, args),
        "degrees" | "radians" => angle(path, name, args),
        "isinf" | "isnan" | "isfinite" => classify(path, name, args),
        "isqrt" => isqrt(path, args),
        "gcd" => gcd(args),
        "prod" => prod(path, args),
        _ => Err(LibError::Unsupported(format!("`math.{name}`"))),
    }
}

/// The functions of one float argument ([`MATH_UNARY`]).
fn unary(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
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
    checked(r, &[x]).map(PyValue::Float)
}

/// `math.log(x, base)`.
fn log(path: &str, args: &Args) -> LibResult<PyValue> {
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

/// The functions of two floats: `pow`, `atan2`, `hypot`, `copysign`, `fmod`.
fn binary(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
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

/// `floor`, `ceil` and `trunc`: an int, which an int or bool already is.
fn to_integer(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
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

/// `degrees` and `radians`.
fn angle(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["x"], 1)?;
    let x = float_arg(path, b.required(0)?)?;
    Ok(PyValue::Float(if name == "degrees" {
        x * (180.0 / std::f64::consts::PI)
    } else {
        x * (std::f64::consts::PI / 180.0)
    }))
}

/// `isinf`, `isnan` and `isfinite`.
fn classify(path: &str, name: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["x"], 1)?;
    let x = float_arg(path, b.required(0)?)?;
    Ok(PyValue::Bool(match name {
        "isinf" => x.is_infinite(),
        "isnan" => x.is_nan(),
        _ => x.is_finite(),
    }))
}

/// `math.isqrt(n)`: the integer square root, exact.
fn isqrt(path: &str, args: &Args) -> LibResult<PyValue> {
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

/// `math.gcd(*integers)`: 0 of none.
fn gcd(args: &Args) -> LibResult<PyValue> {
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

/// `math.prod(iterable)`: exact over ints, float64 once a float joins.
fn prod(path: &str, args: &Args) -> LibResult<PyValue> {
    let b = bind(path, args, &["iterable"], 1)?;
    let items = b.required(0)?.items().ok_or_else(|| LibError::Python("TypeError: prod() needs a sequence".into()))?;
    let mut acc = PyValue::Int(1);
    for i in items {
        acc = match (&acc, i) {
            (PyValue::Int(a), PyValue::Int(b)) => {
                PyValue::Int(a.checked_mul(*b).ok_or_else(|| LibError::Unsupported("integers beyond 2**127".into()))?)
            }
            (a, b) => PyValue::Float(float_arg(path, a)? * float_arg(path, b)?),
        };
    }
    Ok(acc)
}
