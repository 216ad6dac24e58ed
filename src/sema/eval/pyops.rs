//! Python's operators on values: truth, unary and binary operators with Python's numeric
//! tower (exact ints, CPython's float cases), comparisons, sequence arithmetic, and format specs.

use crate::sema::ndarray;
use crate::sema::value::{format_float, PyValue, MAX_CONSTANT_ELEMENTS};
use crate::syntax::ast::*;

/// A failed operation, before it is located.
pub(crate) enum OpError {
    Python(String),
    Unsupported(String),
    Overflow,
    TooLarge(u64),
    /// Arithmetic on a dimension the call knows only by name (`SymbolicDim`): its value exists
    /// only when the model runs.
    Symbolic(String),
}

/// Python's truth value (`bool(v)`).
pub(super) fn truth(v: &PyValue) -> Result<bool, OpError> {
    v.truth().map_err(OpError::Python)
}

/// A number as Python's numeric tower sees it.
enum Num {
    Int(i128),
    Float(f64),
}

fn num(v: &PyValue) -> Option<Num> {
    match v {
        PyValue::Int(i) => Some(Num::Int(*i)),
        PyValue::Bool(b) => Some(Num::Int(*b as i128)),
        PyValue::Float(f) => Some(Num::Float(*f)),
        // An element type (`ir.DataType`) is an int enum.
        PyValue::DType(t) => Some(Num::Int(i128::from(t.code()))),
        _ => None,
    }
}

fn numpy_error(e: ndarray::NumpyError) -> OpError {
    match e {
        ndarray::NumpyError::Python(m) => OpError::Python(m),
        ndarray::NumpyError::Unsupported(m) => OpError::Unsupported(m),
    }
}

pub(super) fn unary(op: UnaryOp, v: &PyValue) -> Result<PyValue, OpError> {
    if let (UnaryOp::Neg, PyValue::Tensor(t)) = (op, v) {
        return ndarray::negate(t).map_err(numpy_error);
    }
    match (op, num(v)) {
        (UnaryOp::Not, _) => Ok(PyValue::Bool(!truth(v)?)),
        (UnaryOp::Neg, Some(Num::Int(i))) => i.checked_neg().map(PyValue::Int).ok_or(OpError::Overflow),
        (UnaryOp::Neg, Some(Num::Float(f))) => Ok(PyValue::Float(-f)),
        (UnaryOp::Pos, Some(Num::Int(i))) => Ok(PyValue::Int(i)),
        (UnaryOp::Pos, Some(Num::Float(f))) => Ok(PyValue::Float(f)),
        (UnaryOp::Invert, Some(Num::Int(i))) => Ok(PyValue::Int(!i)),
        (op, _) => Err(OpError::Python(format!(
            "TypeError: bad operand type for unary {}: '{}'",
            match op {
                UnaryOp::Neg => "-",
                UnaryOp::Pos => "+",
                _ => "~",
            },
            v.type_name()
        ))),
    }
}

fn type_error(op: BinOp, l: &PyValue, r: &PyValue) -> OpError {
    OpError::Python(format!(
        "TypeError: unsupported operand type(s) for {}: '{}' and '{}'",
        op.symbol(),
        l.type_name(),
        r.type_name()
    ))
}

pub(super) fn binop(op: BinOp, l: &PyValue, r: &PyValue) -> Result<PyValue, OpError> {
    use PyValue as P;
    if let P::SymDim(name) = l {
        return Err(OpError::Symbolic(name.to_string()));
    }
    if let P::SymDim(name) = r {
        return Err(OpError::Symbolic(name.to_string()));
    }
    if matches!(l, P::Tensor(_)) || matches!(r, P::Tensor(_)) {
        return ndarray::binop(op, l, r).map_err(numpy_error);
    }
    // bool & | ^ bool stays a bool.
    if let (P::Bool(a), P::Bool(b)) = (l, r) {
        match op {
            BinOp::BitAnd => return Ok(P::Bool(a & b)),
            BinOp::BitOr => return Ok(P::Bool(a | b)),
            BinOp::BitXor => return Ok(P::Bool(a ^ b)),
            _ => {}
        }
    }
    match (num(l), num(r)) {
        (Some(Num::Int(a)), Some(Num::Int(b))) => int_op(op, a, b),
        (Some(a), Some(b)) => {
            let to_f = |n: Num| match n {
                Num::Int(i) => i as f64,
                Num::Float(f) => f,
            };
            float_op(op, to_f(a), to_f(b), l, r)
        }
        _ => sequence_op(op, l, r),
    }
}

fn int_op(op: BinOp, a: i128, b: i128) -> Result<PyValue, OpError> {
    let zero = || OpError::Python("ZeroDivisionError: integer division or modulo by zero".into());
    let v = match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mult => a.checked_mul(b),
        BinOp::FloorDiv => {
            if b == 0 {
                return Err(zero());
            }
            let q = a.checked_div(b).ok_or(OpError::Overflow)?;
            Some(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
        }
        BinOp::Mod => {
            if b == 0 {
                return Err(zero());
            }
            let m = a.checked_rem(b).unwrap_or(0);
            Some(if m != 0 && ((m < 0) != (b < 0)) { m + b } else { m })
        }
        BinOp::Div => {
            if b == 0 {
                return Err(OpError::Python("ZeroDivisionError: division by zero".into()));
            }
            // Exact operands give a correctly rounded quotient, as CPython's.
            const EXACT: i128 = 1 << 53;
            if a.abs() > EXACT || b.abs() > EXACT {
                return Err(OpError::Unsupported("`/` on integers beyond 2**53 (use `//`)".into()));
            }
            return Ok(PyValue::Float(a as f64 / b as f64));
        }
        BinOp::Pow => {
            if b < 0 {
                if a == 0 {
                    return Err(OpError::Python("ZeroDivisionError: 0.0 cannot be raised to a negative power".into()));
                }
                return Ok(PyValue::Float((a as f64).powf(b as f64)));
            }
            match a {
                0 | 1 => Some(if b == 0 { 1 } else { a }),
                -1 => Some(if b % 2 == 0 { 1 } else { -1 }),
                _ => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
            }
        }
        BinOp::BitAnd => Some(a & b),
        BinOp::BitOr => Some(a | b),
        BinOp::BitXor => Some(a ^ b),
        BinOp::LShift => {
            if b < 0 {
                return Err(OpError::Python("ValueError: negative shift count".into()));
            }
            if a == 0 {
                Some(0)
            } else if b >= 127 {
                None
            } else {
                a.checked_mul(1i128 << b)
            }
        }
        BinOp::RShift => {
            if b < 0 {
                return Err(OpError::Python("ValueError: negative shift count".into()));
            }
            Some(if b >= 127 {
                if a < 0 {
                    -1
                } else {
                    0
                }
            } else {
                a >> b
            })
        }
        BinOp::MatMult => return Err(type_error(op, &PyValue::Int(a), &PyValue::Int(b))),
    };
    v.map(PyValue::Int).ok_or(OpError::Overflow)
}

fn float_op(op: BinOp, a: f64, b: f64, l: &PyValue, r: &PyValue) -> Result<PyValue, OpError> {
    let zero = |what: &str| OpError::Python(format!("ZeroDivisionError: {what}"));
    let v = match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mult => a * b,
        BinOp::Div => {
            if b == 0.0 {
                return Err(zero("float division by zero"));
            }
            a / b
        }
        BinOp::FloorDiv | BinOp::Mod => {
            if b == 0.0 {
                return Err(zero("float floor division by zero"));
            }
            let (div, m) = float_divmod(a, b);
            if op == BinOp::FloorDiv {
                div
            } else {
                m
            }
        }
        BinOp::Pow => {
            if a == 0.0 && b < 0.0 {
                return Err(zero("0.0 cannot be raised to a negative power"));
            }
            if a < 0.0 && a.is_finite() && b.is_finite() && b.fract() != 0.0 {
                return Err(OpError::Unsupported(
                    "a negative number to a fractional power (a complex number in Python)".into(),
                ));
            }
            let v = a.powf(b);
            if v.is_infinite() && a.is_finite() && b.is_finite() {
                return Err(OpError::Python("OverflowError: (34, 'Numerical result out of range')".into()));
            }
            v
        }
        _ => return Err(type_error(op, l, r)),
    };
    Ok(PyValue::Float(v))
}

/// CPython's `float_divmod`: floor division and modulo with the sign of the divisor.
fn float_divmod(vx: f64, wx: f64) -> (f64, f64) {
    let mut m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = 0f64.copysign(wx);
    }
    let floordiv = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0f64.copysign(vx / wx)
    };
    (floordiv, m)
}

fn sequence_op(op: BinOp, l: &PyValue, r: &PyValue) -> Result<PyValue, OpError> {
    use PyValue as P;
    let repeat = |n: i128| -> Result<usize, OpError> { Ok(n.max(0) as usize) };
    match (op, l, r) {
        (BinOp::Add, P::Str(a), P::Str(b)) => {
            let len = (a.len() + b.len()) as u64;
            if len > MAX_CONSTANT_ELEMENTS {
                return Err(OpError::TooLarge(len));
            }
            Ok(P::str(&format!("{a}{b}")))
        }
        (BinOp::Add, P::List(a), P::List(b)) if a.is_tuple() == b.is_tuple() => {
            let len = (a.len() + b.len()) as u64;
            if len > MAX_CONSTANT_ELEMENTS {
                return Err(OpError::TooLarge(len));
            }
            let items: Vec<PyValue> = a.items().iter().chain(b.items()).cloned().collect();
            Ok(if a.is_tuple() { P::tuple(items) } else { P::list(items) })
        }
        (BinOp::Mult, P::Str(s), n @ (P::Int(_) | P::Bool(_)))
        | (BinOp::Mult, n @ (P::Int(_) | P::Bool(_)), P::Str(s)) => {
            let n = repeat(n.as_f64().unwrap_or(0.0) as i128)?;
            let len = (s.len() as u64).saturating_mul(n as u64);
            if len > MAX_CONSTANT_ELEMENTS {
                return Err(OpError::TooLarge(len));
            }
            Ok(P::str(&s.repeat(n)))
        }
        (BinOp::Mult, seq @ P::List(_), n @ (P::Int(_) | P::Bool(_)))
        | (BinOp::Mult, n @ (P::Int(_) | P::Bool(_)), seq @ P::List(_)) => {
            let count = match n {
                P::Int(i) => *i,
                P::Bool(b) => *b as i128,
                _ => 0,
            };
            let items = seq.items().unwrap_or(&[]);
            let len = (items.len() as u128).saturating_mul(count.max(0) as u128);
            if len > MAX_CONSTANT_ELEMENTS as u128 {
                return Err(OpError::TooLarge(len.min(u64::MAX as u128) as u64));
            }
            let out: Vec<PyValue> = (0..count.max(0)).flat_map(|_| items.iter().cloned()).collect();
            Ok(if matches!(seq, P::List(s) if s.is_tuple()) { P::tuple(out) } else { P::list(out) })
        }
        (BinOp::Mod, P::Str(_), _) => Err(OpError::Unsupported("`%`-formatting of strings (use an f-string)".into())),
        _ => Err(type_error(op, l, r)),
    }
}

/// Python's `==` on two values.
pub(super) fn equal(l: &PyValue, r: &PyValue) -> Result<bool, OpError> {
    use PyValue as P;
    Ok(match (l, r) {
        (P::Tensor(_), _) | (_, P::Tensor(_)) => {
            return Err(OpError::Unsupported("comparing numpy arrays or tensors".into()))
        }
        (P::Str(a), P::Str(b)) => a == b,
        (P::None, P::None) => true,
        (P::Graph(_) | P::SymDim(_), _) | (_, P::Graph(_) | P::SymDim(_)) => l == r,
        (P::List(a), P::List(b)) if a.is_tuple() == b.is_tuple() => {
            if a.ptr_eq(b) {
                return Ok(true);
            }
            if a.len() != b.len() {
                return Ok(false);
            }
            for (x, y) in a.items().iter().zip(b.items()) {
                if !equal(x, y)? {
                    return Ok(false);
                }
            }
            true
        }
        _ => match (num(l), num(r)) {
            (Some(a), Some(b)) => num_cmp(&a, &b) == Some(std::cmp::Ordering::Equal),
            _ => false,
        },
    })
}

/// Exact comparison of two numbers, as Python compares an int with a float (not through a
/// rounding conversion). `None` when a NaN is involved.
fn num_cmp(a: &Num, b: &Num) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(y),
        (Num::Int(i), Num::Float(f)) => int_float_cmp(*i, *f),
        (Num::Float(f), Num::Int(i)) => int_float_cmp(*i, *f).map(|o| o.reverse()),
    }
}

fn int_float_cmp(i: i128, f: f64) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 { Ordering::Less } else { Ordering::Greater });
    }
    if f.fract() == 0.0 {
        if f.abs() < 2f64.powi(127) {
            return Some(i.cmp(&(f as i128)));
        }
        return Some(if f > 0.0 { Ordering::Less } else { Ordering::Greater });
    }
    // A float with a fraction is below 2**53 in magnitude; `i as f64` keeps the order.
    (i as f64).partial_cmp(&f)
}

/// Python's order of two values (`None` when unordered, as NaN is): numbers, strings, and
/// lists or tuples (of the same kind) item by item.
fn order(l: &PyValue, r: &PyValue) -> Result<Option<std::cmp::Ordering>, OpError> {
    match (l, r) {
        (PyValue::Str(a), PyValue::Str(b)) => Ok(Some(a.cmp(b))),
        (PyValue::List(a), PyValue::List(b)) if a.is_tuple() == b.is_tuple() => {
            for (x, y) in a.items().iter().zip(b.items()) {
                if equal(x, y)? {
                    continue;
                }
                return order(x, y);
            }
            Ok(Some(a.len().cmp(&b.len())))
        }
        _ => match (num(l), num(r)) {
            (Some(a), Some(b)) => Ok(num_cmp(&a, &b)),
            _ => Err(OpError::Python(format!(
                "TypeError: '{}' not supported between instances of '{}' and '{}'",
                "<",
                l.type_name(),
                r.type_name()
            ))),
        },
    }
}

pub(super) fn compare(op: CmpOp, l: &PyValue, r: &PyValue) -> Result<bool, OpError> {
    use std::cmp::Ordering;
    Ok(match op {
        CmpOp::Eq => equal(l, r)?,
        CmpOp::NotEq => !equal(l, r)?,
        CmpOp::Lt => order(l, r)? == Some(Ordering::Less),
        CmpOp::LtE => matches!(order(l, r)?, Some(Ordering::Less | Ordering::Equal)),
        CmpOp::Gt => order(l, r)? == Some(Ordering::Greater),
        CmpOp::GtE => matches!(order(l, r)?, Some(Ordering::Greater | Ordering::Equal)),
        CmpOp::Is | CmpOp::IsNot => {
            let same = match (l, r) {
                (PyValue::None, PyValue::None) => true,
                (PyValue::Bool(a), PyValue::Bool(b)) => a == b,
                (PyValue::None, _) | (_, PyValue::None) | (PyValue::Bool(_), _) | (_, PyValue::Bool(_)) => false,
                _ => {
                    return Err(OpError::Unsupported(
                        "`is` between values other than `None`, `True` and `False`".into(),
                    ))
                }
            };
            same == (op == CmpOp::Is)
        }
        CmpOp::In | CmpOp::NotIn => {
            let found = match r {
                PyValue::Str(hay) => match l {
                    PyValue::Str(needle) => hay.contains(&**needle),
                    other => {
                        return Err(OpError::Python(format!(
                            "TypeError: 'in <string>' requires string as left operand, not {}",
                            other.type_name()
                        )))
                    }
                },
                PyValue::List(s) => {
                    let mut found = false;
                    for item in s.items() {
                        if equal(l, item)? {
                            found = true;
                            break;
                        }
                    }
                    found
                }
                other => {
                    return Err(OpError::Python(format!(
                        "TypeError: argument of type '{}' is not iterable",
                        other.type_name()
                    )))
                }
            };
            found == (op == CmpOp::In)
        }
    })
}

/// `format(value, spec)` for the format specifications constants use: empty, a type among
/// `d s f e g %`, with an optional sign, width, `,`/`_` grouping is not supported.
pub(super) fn format_value(v: &PyValue, spec: &str) -> Result<String, OpError> {
    if spec.is_empty() {
        return Ok(v.to_str());
    }
    let unsupported = || OpError::Unsupported(format!("the format specification `{spec}`"));
    // [[fill]align][sign][0][width][.precision][type]
    let mut rest = spec;
    let mut fill = ' ';
    let mut align = None;
    let chars: Vec<char> = rest.chars().collect();
    if chars.len() >= 2 && matches!(chars[1], '<' | '>' | '^' | '=') {
        fill = chars[0];
        align = Some(chars[1]);
        rest = &rest[chars[0].len_utf8() + 1..];
    } else if chars.first().is_some_and(|c| matches!(c, '<' | '>' | '^' | '=')) {
        align = chars.first().copied();
        rest = &rest[1..];
    }
    let mut sign = '-';
    if let Some(c) = rest.chars().next().filter(|c| matches!(c, '+' | '-' | ' ')) {
        sign = c;
        rest = &rest[1..];
    }
    if let Some(r) = rest.strip_prefix('0') {
        fill = '0';
        align = align.or(Some('='));
        rest = r;
    }
    let width_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let width: usize = if width_end > 0 { rest[..width_end].parse().map_err(|_| unsupported())? } else { 0 };
    rest = &rest[width_end..];
    let mut precision = None;
    if let Some(r) = rest.strip_prefix('.') {
        let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        let p = r[..end].parse::<usize>().map_err(|_| unsupported())?;
        if p as u64 > MAX_CONSTANT_ELEMENTS {
            return Err(OpError::TooLarge(p as u64));
        }
        precision = Some(p);
        rest = &r[end..];
    }
    let ty = match rest {
        "" => None,
        t if t.len() == 1 => t.chars().next(),
        _ => return Err(unsupported()),
    };
    let number = |f: f64| -> Result<(bool, String), OpError> {
        let neg = f.is_sign_negative() && !(f == 0.0 && ty != Some('f'));
        let a = f.abs();
        let body = match ty {
            Some('f') | Some('F') => format!("{:.*}", precision.unwrap_or(6), a),
            Some('e') | Some('E') => {
                let s = format!("{:.*e}", precision.unwrap_or(6), a);
                let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                let e: i32 = e.parse().unwrap_or(0);
                format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
            }
            Some('%') => format!("{:.*}%", precision.unwrap_or(6), a * 100.0),
            None if precision.is_none() => format_float(a),
            _ => return Err(unsupported()),
        };
        Ok((neg, body))
    };
    let (negative, body, numeric) = match (v, ty) {
        (PyValue::Str(s), None | Some('s')) => {
            let s: String = match precision {
                Some(p) => s.chars().take(p).collect(),
                None => s.clone(),
            };
            (false, s, false)
        }
        (PyValue::Int(i), None | Some('d')) if precision.is_none() => (*i < 0, i.unsigned_abs().to_string(), true),
        (PyValue::Bool(b), None) if precision.is_none() => {
            (false, if *b { "True" } else { "False" }.to_string(), false)
        }
        (PyValue::Int(i), Some('f' | 'F' | 'e' | 'E' | '%')) => {
            let (n, b) = number(*i as f64)?;
            (n, b, true)
        }
        (PyValue::Float(f), _) => {
            let (n, b) = number(*f)?;
            (n, b, true)
        }
        _ => return Err(unsupported()),
    };
    let sign_text = match (negative, sign) {
        (true, _) => "-",
        (false, '+') if numeric => "+",
        (false, ' ') if numeric => " ",
        _ => "",
    };
    let content_len = sign_text.chars().count() + body.chars().count();
    let pad = width.saturating_sub(content_len);
    if pad as u64 > MAX_CONSTANT_ELEMENTS {
        return Err(OpError::TooLarge(pad as u64));
    }
    let fill_str = |n: usize| fill.to_string().repeat(n);
    let align = align.unwrap_or(if numeric { '>' } else { '<' });
    Ok(match align {
        '<' => format!("{sign_text}{body}{}", fill_str(pad)),
        '^' => format!("{}{sign_text}{body}{}", fill_str(pad / 2), fill_str(pad - pad / 2)),
        '=' => format!("{sign_text}{}{body}", fill_str(pad)),
        _ => format!("{}{sign_text}{body}", fill_str(pad)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(op: BinOp, a: i128, b: i128) -> Result<PyValue, OpError> {
        int_op(op, a, b)
    }

    #[test]
    fn integer_division_floors_and_reports_overflow_as_python_does() {
        let min = i64::MIN as i128;
        assert!(matches!(int(BinOp::FloorDiv, min, -1), Ok(PyValue::Int(v)) if v == -min));
        assert!(matches!(int(BinOp::Mod, min, -1), Ok(PyValue::Int(0))));
        assert!(matches!(int(BinOp::Mod, 5, i64::MAX as i128), Ok(PyValue::Int(5))));
        assert!(matches!(int(BinOp::Mod, -7, 3), Ok(PyValue::Int(2))));
        assert!(matches!(int(BinOp::FloorDiv, -7, 2), Ok(PyValue::Int(-4))));
        assert!(matches!(int(BinOp::FloorDiv, i128::MIN, -1), Err(OpError::Overflow)));
        assert!(matches!(int(BinOp::Mod, 1, 0), Err(OpError::Python(_))));
        assert!(matches!(int(BinOp::Pow, 2, 200), Err(OpError::Overflow)));
        assert!(matches!(int(BinOp::Pow, -1, 1 << 40), Ok(PyValue::Int(1))));
    }

    #[test]
    fn float_modulo_takes_the_sign_of_the_divisor() {
        assert_eq!(float_divmod(-7.5, 2.0), (-4.0, 0.5));
        assert_eq!(float_divmod(7.5, -2.0), (-4.0, -0.5));
        assert_eq!(float_divmod(1.0, 0.1).0, 9.0);
    }

    #[test]
    fn ints_and_floats_compare_exactly() {
        let big = (1i128 << 53) + 1;
        assert_eq!(int_float_cmp(big, 2f64.powi(53)), Some(std::cmp::Ordering::Greater));
        assert_eq!(int_float_cmp(3, 2.5), Some(std::cmp::Ordering::Greater));
    }

    #[test]
    fn format_specs_follow_python() {
        let f = |v: PyValue, s: &str| format_value(&v, s).ok().unwrap_or_default();
        assert_eq!(f(PyValue::Float(1.23456), ".2f"), "1.23");
        assert_eq!(f(PyValue::Int(42), "05d"), "00042");
        assert_eq!(f(PyValue::Int(-42), ">6"), "   -42");
        assert_eq!(f(PyValue::str("ab"), "^6"), "  ab  ");
        assert_eq!(f(PyValue::Float(1e-5), ".3e"), "1.000e-05");
    }
}
