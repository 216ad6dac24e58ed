//! Reductions (`ReduceSum`, `ReduceMean`... with `axes` and `keepdims`), `ArgMax`/`ArgMin`,
//! `TopK`, the normalisations whose statistics are reductions, and the losses that reduce
//! (`NegativeLogLikelihoodLoss`, `SoftmaxCrossEntropyLoss`).

use super::{Cx, Inferred, Violation};
use crate::ir::Dim;

pub(super) fn infer(cx: &Cx) -> Option<Inferred> {
    let op = cx.op();
    Some(match op {
        _ if op.starts_with("Reduce") => reduce(cx),
        "ArgMax" | "ArgMin" => arg(cx),
        "TopK" => top_k(cx),
        "LayerNormalization" => layer_norm(cx),
        "NegativeLogLikelihoodLoss" | "SoftmaxCrossEntropyLoss" => loss(cx),
        "BatchNormalization" | "InstanceNormalization" | "GroupNormalization" => {
            Ok(vec![cx.dims(0).map(<[Dim]>::to_vec)])
        }
        _ => return None,
    })
}

/// The opset from which a reduction takes its axes as an input, not an attribute.
fn axes_input_from(op: &str) -> i64 {
    if op == "ReduceSum" {
        13
    } else {
        18
    }
}

fn reduce(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let keep = cx.int_attr("keepdims").unwrap_or(1) != 0;
    let from_input = cx.call.version >= axes_input_from(cx.op());
    let axes = if from_input { cx.ints(1) } else { cx.ints_attr("axes") };
    let given = if from_input { cx.input(1).is_some() } else { axes.is_some() };
    let axes: Vec<usize> = match axes {
        Some(a) if !a.is_empty() => cx.axes(a, dims.len().max(1), "axes")?,
        // Axes the model computes: the rank is known only when kept.
        None if given => return Ok(vec![keep.then(|| vec![Dim::Unknown; dims.len()])]),
        _ if cx.int_attr("noop_with_empty_axes").unwrap_or(0) != 0 => return Ok(vec![Some(dims.to_vec())]),
        _ => (0..dims.len()).collect(),
    };
    Ok(vec![Some(reduced(dims, &axes, keep))])
}

fn reduced(dims: &[Dim], axes: &[usize], keep: bool) -> Vec<Dim> {
    dims.iter()
        .enumerate()
        .filter_map(|(k, d)| match (axes.contains(&k), keep) {
            (false, _) => Some(d.clone()),
            (true, true) => Some(Dim::Known(1)),
            (true, false) => None,
        })
        .collect()
}

fn arg(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let k = cx.axis(cx.int_attr("axis").unwrap_or(0), axed(cx, dims)?, "axis")?;
    let keep = cx.int_attr("keepdims").unwrap_or(1) != 0;
    Ok(vec![Some(reduced(dims, &[k], keep))])
}

/// The rank of an input that an operator works along one axis of: a scalar has none, and
/// ONNX Runtime refuses it (`ArgMax`, `TopK`).
fn axed(cx: &Cx, dims: &[Dim]) -> Result<usize, Violation> {
    if dims.is_empty() {
        return Err(cx.violation(
            format!("`{}` works along an axis, but this call gives a scalar, {}", cx.op(), cx.gave(0)),
            "make the scalar 1-D first (`op.Reshape(x, [1])`), as PyTorch treats it",
        ));
    }
    Ok(dims.len())
}

fn top_k(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None, None]) };
    let k = cx.axis(cx.int_attr("axis").unwrap_or(-1), axed(cx, dims)?, "axis")?;
    let mut out = dims.to_vec();
    out[k] = match cx.ints(1) {
        Some([n]) => {
            if let Dim::Known(size) = dims[k] {
                if *n > size {
                    return Err(cx.violation(
                        format!("`TopK` takes the top {n} of axis {k} of {}, which has {size}", cx.gave(0)),
                        "take at most as many as the axis has",
                    ));
                }
            }
            Dim::Known(*n)
        }
        _ => Dim::Unknown,
    };
    Ok(vec![Some(out.clone()), Some(out)])
}

fn layer_norm(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None, None, None]) };
    let k = cx.axis(cx.int_attr("axis").unwrap_or(-1), dims.len().max(1), "axis")?;
    let stats: Vec<Dim> = dims.iter().enumerate().map(|(j, d)| if j < k { d.clone() } else { Dim::Known(1) }).collect();
    Ok(vec![Some(dims.to_vec()), Some(stats.clone()), Some(stats)])
}

/// A loss of scores `[N, C, d1, ...]`: one value per sample, `[N, d1, ...]`, with
/// `reduction="none"`, else a scalar (the default is a mean). `SoftmaxCrossEntropyLoss`'s second
/// output, the log probabilities, has the scores' shape.
fn loss(cx: &Cx) -> Inferred {
    let scores = cx.dims(0);
    let per_sample = match scores {
        Some(d) if d.len() >= 2 => Some([&d[..1], &d[2..]].concat()),
        _ => None,
    };
    let loss = if cx.str_attr("reduction").unwrap_or("mean") == "none" { per_sample } else { Some(Vec::new()) };
    Ok(vec![loss, scores.map(<[Dim]>::to_vec)])
}
