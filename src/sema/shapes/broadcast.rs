//! Elementwise operators: those whose output has their input's shape, and those that broadcast
//! their inputs together (numpy's rules: shapes aligned from the right, a dimension of 1
//! stretched).

use super::{Cx, Inferred, Shape, Violation};
use crate::ir::Dim;

/// One input, one output of the same shape.
const UNARY: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "BitwiseNot",
    "Cast",
    "CastLike",
    "Ceil",
    "Celu",
    "Clip",
    "Cos",
    "Cosh",
    "CumSum",
    "Elu",
    "Erf",
    "Exp",
    "Floor",
    "Gelu",
    "HardSigmoid",
    "HardSwish",
    "Identity",
    "IsInf",
    "IsNaN",
    "LeakyRelu",
    "Log",
    "Mish",
    "Neg",
    "Not",
    "Reciprocal",
    "Relu",
    "Round",
    "Selu",
    "Shrink",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Softplus",
    "Softsign",
    "Sqrt",
    "Tan",
    "Tanh",
    "ThresholdedRelu",
    "Trilu",
    "Dropout",
];

/// Operators that broadcast all their inputs.
const BROADCASTING: &[&str] = &[
    "Add",
    "And",
    "BitShift",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "Div",
    "Equal",
    "Greater",
    "GreaterOrEqual",
    "Less",
    "LessOrEqual",
    "Max",
    "Mean",
    "Min",
    "Mod",
    "Mul",
    "Or",
    "Pow",
    "PRelu",
    "Sub",
    "Sum",
    "Where",
    "Xor",
];

/// Operators whose output has their first input's shape, whatever the others hold (a
/// probability, a seed): random tensors shaped like another.
const SHAPED_LIKE_FIRST: &[&str] = &["RandomUniformLike", "RandomNormalLike", "Bernoulli"];

/// Softmax-like operators: one `axis` within the rank, the input's shape out.
const AXIS_PRESERVING: &[&str] = &["Softmax", "LogSoftmax", "Hardmax"];

pub(super) fn infer(cx: &Cx) -> Option<Inferred> {
    let op = cx.op();
    if UNARY.contains(&op) {
        let shape: Shape = cx.dims(0).map(<[Dim]>::to_vec);
        // Dropout's mask has the input's shape too.
        return Some(Ok(vec![shape.clone(), shape]));
    }
    if SHAPED_LIKE_FIRST.contains(&op) {
        return Some(Ok(vec![cx.dims(0).map(<[Dim]>::to_vec)]));
    }
    match op {
        "EyeLike" => return Some(eye_like(cx)),
        "QuantizeLinear" | "DequantizeLinear" => return Some(quantize(cx)),
        _ => {}
    }
    if AXIS_PRESERVING.contains(&op) {
        return Some(axis_preserving(cx));
    }
    if BROADCASTING.contains(&op) {
        return Some(broadcast_all(cx).map(|s| vec![s]));
    }
    None
}

fn axis_preserving(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    // Before opset 13 the axis coerces to 2-D, from -r to r.
    let default = if cx.call.version >= 13 { -1 } else { 1 };
    let axis = cx.int_attr("axis").unwrap_or(default);
    if cx.call.version >= 13 || axis != dims.len() as i64 {
        cx.axis(axis, dims.len().max(1), "axis")?;
    }
    Ok(vec![Some(dims.to_vec())])
}

/// `EyeLike`: a matrix shaped like its input, which must be one.
fn eye_like(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    if dims.len() != 2 {
        return Err(cx.violation(
            format!("`EyeLike` needs a rank-2 input; this call gives {}", cx.gave(0)),
            "give a matrix (`EyeLike` makes no batches of them)",
        ));
    }
    Ok(vec![Some(dims.to_vec())])
}

/// `QuantizeLinear` and `DequantizeLinear` keep `x`'s shape. A 1-D scale of more than one value
/// is per axis, and ONNX Runtime needs one value per element of `x`'s `axis`; a scale of other
/// shapes (one value, or blocks from opset 21) is not checked.
fn quantize(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    if let Some([scales @ Dim::Known(n)]) = cx.dims(1) {
        if *n != 1 {
            let k = cx.axis(cx.int_attr("axis").unwrap_or(1), dims.len(), "axis")?;
            if super::differ(scales, &dims[k]) {
                return Err(cx.violation(
                    format!(
                        "`{}` per axis needs one scale per element of axis {k} of {}; this call gives {}",
                        cx.op(),
                        cx.gave(0),
                        cx.gave(1)
                    ),
                    "give one scale per element of `axis`, or a single scale for the whole tensor",
                ));
            }
        }
    }
    Ok(vec![Some(dims.to_vec())])
}

/// The shape every input broadcasts to, or the pair of dimensions that do not.
fn broadcast_all(cx: &Cx) -> Result<Shape, Violation> {
    let mut out: Vec<Dim> = Vec::new();
    let mut seen: Vec<usize> = Vec::new();
    for i in 0..cx.call.inputs.len() {
        let Some(input) = cx.input(i) else { continue };
        let Some(dims) = &input.dims else { return Ok(None) };
        if !seen.is_empty() {
            out = broadcast_pair(&out, dims).map_err(|(a, b)| {
                let before = match seen[..] {
                    [only] => cx.gave(only),
                    _ => format!("the inputs before it, broadcast to {}", super::dims_text(&out)),
                };
                cx.violation(
                    format!(
                        "`{}` cannot broadcast {before} with {}: dimension {} against {} (shapes align from the right)",
                        cx.op(),
                        cx.gave(i),
                        super::dim_text(&a),
                        super::dim_text(&b),
                    ),
                    "make the shapes broadcastable: equal dimensions, or 1 where one is stretched",
                )
            })?;
        } else {
            out = dims.clone();
        }
        seen.push(i);
    }
    Ok(Some(out))
}

/// Two shapes broadcast together (multidirectional broadcasting), or the first pair of
/// dimensions that cannot be.
pub(super) fn broadcast_pair(a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, (Dim, Dim)> {
    let rank = a.len().max(b.len());
    let one = Dim::Known(1);
    let at = |s: &[Dim], k: usize| -> Dim {
        if k < rank - s.len() {
            one.clone()
        } else {
            s[k - (rank - s.len())].clone()
        }
    };
    (0..rank)
        .map(|k| {
            let (x, y) = (at(a, k), at(b, k));
            match (&x, &y) {
                (Dim::Known(1), _) => Ok(y),
                (_, Dim::Known(1)) => Ok(x),
                (Dim::Known(m), Dim::Known(n)) if m != n => Err((x, y)),
                (Dim::Known(_), _) => Ok(x),
                (_, Dim::Known(_)) => Ok(y),
                (Dim::Symbolic(s), Dim::Symbolic(t)) if s == t => Ok(x),
                // Two different symbols, or an unknown: either may be 1.
                _ => Ok(Dim::Unknown),
            }
        })
        .collect()
}

/// Whether `from` broadcasts to `to` in one direction (`Gemm`'s `C`, `Expand` checks the
/// other way): each dimension of `from`, aligned from the right, is 1 or `to`'s.
pub(super) fn unidirectional(from: &[Dim], to: &[Dim]) -> Result<(), (Dim, Dim)> {
    if from.len() > to.len() {
        return Err((Dim::Known(from.len() as i64), Dim::Known(to.len() as i64)));
    }
    let offset = to.len() - from.len();
    for (k, d) in from.iter().enumerate() {
        let t = &to[offset + k];
        if !matches!(d, Dim::Known(1)) && super::differ(d, t) {
            return Err((d.clone(), t.clone()));
        }
    }
    Ok(())
}
