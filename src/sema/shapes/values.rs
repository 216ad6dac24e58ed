//! The values of small integer tensors that shape inference follows: a `Reshape`'s `shape` or
//! a `Squeeze`'s `axes` is usually computed from shapes (`Shape` of a known shape, a `Concat` of
//! known parts, a `Slice` of them, a size plus or times a number), and ONNX's own inference
//! follows the same small arithmetic. The trace and the
//! check of a linked call (`link::shapes`) both follow values this way.

use super::{shape_range, InputFacts, Shape};
use crate::ir::{Attr, AttrValue, Dim};
use crate::onnx::tensor::TensorData;
use crate::onnx::ElemType;

/// Integer tensors longer than this are not followed: shapes and axes are short.
pub const MAX_KNOWN_INTS: usize = 64;

/// The values of an op's first output, when the trace can know them from its inputs: the
/// small arithmetic of shapes that ONNX's own inference also follows.
pub fn propagated(op: &str, inputs: &[Option<InputFacts>], attrs: &[Attr], outputs: &[Shape]) -> Option<Vec<i64>> {
    let ints = |i: usize| inputs.get(i).and_then(Option::as_ref).and_then(|f| f.ints.as_deref());
    let attr = |name: &str| attrs.iter().find(|a| a.name == name).map(|a| &a.value);
    let out: Vec<i64> = match op {
        "Constant" => match attr("value_int").or(attr("value_ints")).or(attr("value"))? {
            AttrValue::Int(i) => vec![*i],
            AttrValue::Ints(v) => v.clone(),
            AttrValue::Tensor(t) if t.elem.is_integer() => match &t.data {
                TensorData::Ints(v) => v.clone(),
                _ => return None,
            },
            _ => return None,
        },
        "Shape" => {
            let dims = outputs.first()?.as_ref().and(inputs.first()?.as_ref()?.dims.as_ref())?;
            let int = |name: &str| match attr(name) {
                Some(AttrValue::Int(i)) => Some(*i),
                _ => None,
            };
            dims.get(shape_range(dims.len(), int("start"), int("end")))?
                .iter()
                .map(|d| if let Dim::Known(n) = d { Some(*n) } else { None })
                .collect::<Option<_>>()?
        }
        "Concat" => {
            let mut out = Vec::new();
            for input in inputs.iter().flatten() {
                out.extend(input.ints.as_deref()?);
            }
            out
        }
        "Identity" | "Squeeze" | "Unsqueeze" | "Reshape" | "Flatten" => ints(0)?.to_vec(),
        "SequenceLength" => vec![i64::try_from(inputs.first()?.as_ref()?.items.as_ref()?.len()).ok()?],
        "Cast" => match attr("to") {
            Some(AttrValue::Int(to)) if ElemType::from_code(*to).is_some_and(ElemType::is_integer) => ints(0)?.to_vec(),
            _ => return None,
        },
        "CastLike" if inputs.get(1)?.as_ref()?.elem.is_some_and(ElemType::is_integer) => ints(0)?.to_vec(),
        "Gather" if inputs.first()?.as_ref()?.dims.as_ref().is_some_and(|d| d.len() == 1) => {
            let data = ints(0)?;
            let n = data.len() as i64;
            ints(1)?
                .iter()
                .map(|i| data.get(usize::try_from(if *i < 0 { i + n } else { *i }).ok()?).copied())
                .collect::<Option<_>>()?
        }
        "Slice" => {
            let data = ints(0)?;
            let one = |i: usize| match inputs.get(i) {
                None | Some(None) => Some(None),
                Some(Some(_)) => match ints(i)? {
                    [v] => Some(Some(*v)),
                    _ => None,
                },
            };
            if inputs.first()?.as_ref()?.dims.as_ref()?.len() != 1 || !matches!(one(3)?, None | Some(0 | -1)) {
                return None;
            }
            let (start, end, step) = (one(1)??, one(2)??, one(4)?.unwrap_or(1));
            if step == 0 {
                return None;
            }
            let (mut at, end) = super::layout::slice_bounds(data.len() as i64, start, end, step);
            let mut out = Vec::new();
            while (step > 0 && at < end) || (step < 0 && at > end) {
                out.push(*data.get(usize::try_from(at).ok()?)?);
                at += step;
            }
            out
        }
        "Add" | "Sub" | "Mul" | "Div" => arithmetic(op, inputs, ints(0)?, ints(1)?)?,
        // The number of elements: `Size(Shape(x))` is how a script asks for a rank.
        "Size" => {
            vec![super::product(inputs.first()?.as_ref()?.dims.as_ref()?)?]
        }
        // Comparisons and logic on those values, as 0 and 1: the conditions of a script's
        // `if` (`if Rank(self) == 0`), which decide the branch a call takes.
        "Equal" | "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual" | "And" | "Or" | "Xor" => {
            elementwise(inputs, ints(0)?, ints(1)?, |x, y| {
                Some(i64::from(match op {
                    "Equal" => x == y,
                    "Less" => x < y,
                    "LessOrEqual" => x <= y,
                    "Greater" => x > y,
                    "GreaterOrEqual" => x >= y,
                    "And" => x != 0 && y != 0,
                    "Or" => x != 0 || y != 0,
                    _ => (x != 0) != (y != 0),
                }))
            })?
        }
        "Not" => ints(0)?.iter().map(|x| i64::from(*x == 0)).collect(),
        _ => return None,
    };
    (out.len() <= MAX_KNOWN_INTS).then_some(out)
}

/// Integer arithmetic on shape values (`Sub(Shape(x)[-1], 1)`, a size times a factor): of a
/// scalar or a 1-D tensor and another of the same length or one element. Exact only: an
/// overflow, or a division with a remainder (whose rounding ONNX leaves to the runtime), is
/// not followed.
fn arithmetic(op: &str, inputs: &[Option<InputFacts>], a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    elementwise(inputs, a, b, |x, y| match op {
        "Add" => x.checked_add(y),
        "Sub" => x.checked_sub(y),
        "Mul" => x.checked_mul(y),
        _ => (y != 0 && x.checked_rem(y) == Some(0)).then(|| x / y),
    })
}

/// `f` of each pair of elements of a scalar or 1-D `a` and `b`, one of which may have one
/// element; `None` where `f` has no exact answer.
fn elementwise(
    inputs: &[Option<InputFacts>],
    a: &[i64],
    b: &[i64],
    f: impl Fn(i64, i64) -> Option<i64>,
) -> Option<Vec<i64>> {
    let low_rank = |i: usize| inputs.get(i)?.as_ref()?.dims.as_ref().map(|d| d.len() <= 1);
    if low_rank(0) != Some(true) || low_rank(1) != Some(true) {
        return None;
    }
    let n = a.len().max(b.len());
    if (a.len() != n && a.len() != 1) || (b.len() != n && b.len() != 1) {
        return None;
    }
    (0..n)
        .map(|k| {
            let (x, y) = (a[if a.len() == 1 { 0 } else { k }], b[if b.len() == 1 { 0 } else { k }]);
            f(x, y)
        })
        .collect()
}
