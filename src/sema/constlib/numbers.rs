//! Python's number rules that the library's functions share: reading a number argument,
//! CPython's `math` result checks, float to int, and the length of a range.

use super::{display, LibError, LibResult};
use crate::sema::value::PyValue;

pub(super) fn float_arg(function: &str, v: &PyValue) -> LibResult<f64> {
    match v {
        PyValue::Tensor(t) => PyValue::scalar_of(t).and_then(|s| s.as_f64()),
        other => other.as_f64(),
    }
    .ok_or_else(|| {
        LibError::Python(format!("TypeError: {}() needs a number, not {}", display(function), v.type_name()))
    })
}

/// A `math` result as CPython checks it: NaN from a non-NaN argument is a domain error, an
/// infinity from finite arguments an overflow.
pub(super) fn checked(result: f64, inputs: &[f64]) -> LibResult<f64> {
    if result.is_nan() && !inputs.iter().any(|x| x.is_nan()) {
        return Err(LibError::Python("ValueError: math domain error".into()));
    }
    if result.is_infinite() && inputs.iter().all(|x| x.is_finite()) {
        return Err(LibError::Python("OverflowError: math range error".into()));
    }
    Ok(result)
}

pub(super) fn float_to_int(f: f64) -> LibResult<PyValue> {
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

/// The length of `range(start, stop, step)` (step not 0), without overflow.
pub(super) fn range_len(start: i128, stop: i128, step: i128) -> LibResult<i128> {
    if !((step > 0 && stop > start) || (step < 0 && stop < start)) {
        return Ok(0);
    }
    let span = stop.abs_diff(start);
    let step = step.unsigned_abs();
    let n = span / step + u128::from(span % step != 0);
    i128::try_from(n).map_err(|_| LibError::TooLarge(u64::MAX))
}
