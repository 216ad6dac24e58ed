//! Sequence operators: `SequenceConstruct`, `SequenceEmpty`, `SequenceInsert`, `SequenceErase`,
//! `SplitToSequence` make sequences; `SequenceAt`, `SequenceLength` and `ConcatFromSequence`
//! read them. A sequence is known item by item ([`InputFacts::items`]) when the call knows how
//! many tensors it holds; each item's dimensions may still be unknown. `SequenceMap`'s body is
//! not entered: its outputs are unknown.
//!
//! Where ONNX's text and ONNX Runtime part ways (`keepdims=0` with a `split` given, which ONNX
//! says is ignored and ONNX Runtime applies), the items are left unknown.

use super::{differ, dim_text, unify, Cx, Inferred, Shape, ShapeCall, Violation};
use crate::ir::Dim;

/// A sequence of more tensors than this is not followed item by item: real ones are a layer's
/// few outputs, and a split into a million slices would only cost memory.
const MAX_ITEMS: usize = 1024;

/// The rules for a call of a sequence operator (`None` for another operator). A sequence
/// output has no dimensions of its own: its items come from [`sequence_items`].
pub(super) fn infer(cx: &Cx) -> Option<Inferred> {
    Some(match cx.op() {
        "SequenceAt" => sequence_at(cx).map(|s| vec![s]),
        "SequenceLength" => Ok(vec![Some(Vec::new())]),
        "ConcatFromSequence" => concat_from_sequence(cx),
        "SequenceConstruct" | "SequenceEmpty" | "SequenceInsert" | "SequenceErase" | "SplitToSequence" => {
            made(cx).map(|_| vec![None])
        }
        _ => return None,
    })
}

/// The dimensions of each tensor of the sequence `call` makes, when the call knows how many it
/// holds; `None` for a call that violates its operator's constraints (which [`super::infer`]
/// reports) or makes no sequence.
pub fn sequence_items(call: &ShapeCall) -> Option<Vec<Shape>> {
    if !call.domain.is_empty() {
        return None;
    }
    made(&Cx { call }).ok().flatten().filter(|items| items.len() <= MAX_ITEMS)
}

/// The items of the sequence a call makes.
fn made(cx: &Cx) -> Result<Option<Vec<Shape>>, Violation> {
    match cx.op() {
        "SequenceEmpty" => Ok(Some(Vec::new())),
        "SequenceConstruct" => Ok(Some((0..cx.call.inputs.len()).map(|i| cx.dims(i).map(<[Dim]>::to_vec)).collect())),
        "SequenceInsert" => insert(cx),
        "SequenceErase" => erase(cx),
        "SplitToSequence" => split_to_sequence(cx),
        _ => Ok(None),
    }
}

/// The tensors of sequence input `i`, when the call knows them.
fn items<'a>(cx: &'a Cx, i: usize) -> Option<&'a [Shape]> {
    cx.input(i).and_then(|f| f.items.as_deref())
}

/// The position input `i` holds, made non-negative for a sequence of `n` tensors; `end`
/// allows `n` itself (an insertion after the last). `None` when the call does not know it.
fn position(cx: &Cx, i: usize, n: usize, end: bool) -> Result<Option<usize>, Violation> {
    // ONNX Runtime reads the first value of a longer position; only one value is followed.
    let Some(&[p]) = cx.ints(i) else { return Ok(None) };
    let len = n as i64;
    let last = if end { len } else { len - 1 };
    if p < -len || p > last {
        let op = cx.op();
        if n == 0 && !end {
            return Err(cx.violation(
                format!("`{op}` at position {p} of an empty sequence: this call's sequence holds no tensor"),
                "make sure the sequence holds a tensor first, or do not read it",
            ));
        }
        return Err(cx.violation(
            format!("`{op}`'s `position` is {p}, outside [{}, {last}] for this call's sequence of {n} tensors", -len),
            format!("give a position between {} and {last}", -len),
        ));
    }
    Ok(Some(if p < 0 { (p + len) as usize } else { p as usize }))
}

/// `SequenceAt`: the tensor at a known position, or what all the tensors share.
fn sequence_at(cx: &Cx) -> Result<Shape, Violation> {
    let Some(items) = items(cx, 0) else { return Ok(None) };
    Ok(match position(cx, 1, items.len(), false)? {
        Some(p) => items[p].clone(),
        None => shared(items),
    })
}

/// The dimensions every tensor of a sequence has: a dimension where they differ is unknown.
fn shared(items: &[Shape]) -> Shape {
    let (first, rest) = items.split_first()?;
    let mut out = first.clone()?;
    for item in rest {
        let dims = item.as_deref().filter(|d| d.len() == out.len())?;
        for (a, b) in out.iter_mut().zip(dims) {
            if a != b {
                *a = Dim::Unknown;
            }
        }
    }
    Some(out)
}

/// `SequenceInsert`: the tensor at `position`, or at the end when none is given.
fn insert(cx: &Cx) -> Result<Option<Vec<Shape>>, Violation> {
    let Some(items) = items(cx, 0) else { return Ok(None) };
    let at = if cx.input(2).is_some() { position(cx, 2, items.len(), true)? } else { Some(items.len()) };
    Ok(at.map(|p| {
        let mut out = items.to_vec();
        out.insert(p, cx.dims(1).map(<[Dim]>::to_vec));
        out
    }))
}

/// `SequenceErase`: the tensor at `position` taken out, or the last when none is given.
fn erase(cx: &Cx) -> Result<Option<Vec<Shape>>, Violation> {
    let Some(items) = items(cx, 0) else { return Ok(None) };
    let at = if cx.input(1).is_some() {
        position(cx, 1, items.len(), false)?
    } else if items.is_empty() {
        return Err(cx.violation(
            "`SequenceErase` of an empty sequence: this call's sequence holds no tensor".into(),
            "erase only from a sequence that holds a tensor",
        ));
    } else {
        Some(items.len() - 1)
    };
    Ok(at.map(|p| {
        let mut out = items.to_vec();
        out.remove(p);
        out
    }))
}

/// `SplitToSequence`: pieces of `split`'s sizes, of `split` each when it is a scalar (the last
/// smaller), or of 1 each when it is left out (the axis dropped with `keepdims=0`).
fn split_to_sequence(cx: &Cx) -> Result<Option<Vec<Shape>>, Violation> {
    let Some(x) = cx.dims(0) else { return Ok(None) };
    let axis = cx.axis(cx.int_attr("axis").unwrap_or(0), x.len(), "axis")?;
    let keepdims = cx.int_attr("keepdims").unwrap_or(1) != 0;
    let sizes = match cx.input(1) {
        None => {
            let Dim::Known(length) = x[axis] else { return Ok(None) };
            let piece: Vec<Dim> = if keepdims {
                with_length(x, axis, 1)
            } else {
                x.iter().enumerate().filter(|(k, _)| *k != axis).map(|(_, d)| d.clone()).collect()
            };
            return Ok(usize::try_from(length).ok().filter(|n| *n <= MAX_ITEMS).map(|n| vec![Some(piece); n]));
        }
        Some(split) => match (split.dims.as_deref(), split.ints.as_deref()) {
            (Some([]), Some(&[chunk])) => chunks(cx, x, axis, chunk)?,
            (Some([_, ..]), Some(sizes)) => listed(cx, x, axis, sizes)?,
            _ => return Ok(None),
        },
    };
    // ONNX ignores `keepdims` when `split` is given; ONNX Runtime drops the axis of a
    // chunk of 1 and fails on others. What the model computes is not followed.
    if !keepdims && cx.input(1).is_some() {
        return Ok(None);
    }
    Ok(sizes.map(|sizes| sizes.into_iter().map(|n| Some(with_length(x, axis, n))).collect()))
}

/// The sizes of the pieces of a scalar `split`: `chunk` each, the last smaller.
fn chunks(cx: &Cx, x: &[Dim], axis: usize, chunk: i64) -> Result<Option<Vec<i64>>, Violation> {
    if chunk <= 0 {
        return Err(cx.violation(
            format!("`SplitToSequence` needs a scalar `split` greater than zero; this call gives {chunk}"),
            "give the size of each piece, at least 1",
        ));
    }
    let Dim::Known(length @ 0..) = x[axis] else { return Ok(None) };
    let pieces = length / chunk + i64::from(length % chunk != 0);
    if pieces > MAX_ITEMS as i64 {
        return Ok(None);
    }
    Ok(Some((0..pieces).map(|k| chunk.min(length - k * chunk)).collect()))
}

/// The sizes a 1-D `split` lists, which must not be negative and must add up to the axis.
fn listed(cx: &Cx, x: &[Dim], axis: usize, sizes: &[i64]) -> Result<Option<Vec<i64>>, Violation> {
    if let Some(n) = sizes.iter().find(|n| **n < 0) {
        return Err(cx.violation(
            format!("`SplitToSequence`'s `split` sizes must not be negative; this call gives {n} in {sizes:?}"),
            "give the size of each piece, 0 or more",
        ));
    }
    let total = sizes.iter().try_fold(0i64, |t, n| t.checked_add(*n));
    if let (Dim::Known(length), Some(total)) = (&x[axis], total) {
        if total != *length {
            return Err(cx.violation(
                format!(
                    "`SplitToSequence`'s `split` sizes {sizes:?} add up to {total}, but axis {axis} of {} is {length}",
                    cx.gave(0)
                ),
                format!("give sizes that add up to {length}, the length of the axis split"),
            ));
        }
    }
    Ok(Some(sizes.to_vec()))
}

/// `x`'s dimensions with `axis` made `n` long.
fn with_length(x: &[Dim], axis: usize, n: i64) -> Vec<Dim> {
    let mut out = x.to_vec();
    out[axis] = Dim::Known(n);
    out
}

/// `ConcatFromSequence` of a sequence whose tensors the call knows: `Concat` of them, or, with
/// `new_axis=1`, their stack along a new axis.
fn concat_from_sequence(cx: &Cx) -> Inferred {
    let Some(items) = items(cx, 0) else { return Ok(vec![None]) };
    let Some(axis) = cx.int_attr("axis") else { return Ok(vec![None]) };
    let stack = cx.int_attr("new_axis") == Some(1);
    let known: Vec<&[Dim]> = items.iter().filter_map(|i| i.as_deref()).collect();
    let Some(first) = known.first().filter(|_| known.len() == items.len()) else { return Ok(vec![None]) };
    let rank = first.len();
    if let Some(other) = known.iter().find(|d| d.len() != rank) {
        return Err(cx.violation(
            format!(
                "`ConcatFromSequence` joins tensors of one rank; this call's sequence has {} and {}",
                super::dims_text(first),
                super::dims_text(other)
            ),
            "join tensors of the same rank",
        ));
    }
    let k = cx.axis(axis, if stack { rank + 1 } else { rank }, "axis")?;
    let mut out: Vec<Dim> = first.to_vec();
    for d in &known[1..] {
        for (j, (a, b)) in out.iter_mut().zip(d.iter()).enumerate() {
            if !stack && j == k {
                continue;
            }
            if differ(a, b) {
                return Err(cx.violation(
                    format!(
                        "`ConcatFromSequence` along axis {axis} needs its tensors equal outside it; this call's are {} and {}: dimension {j} is {} against {}",
                        super::dims_text(first),
                        super::dims_text(d),
                        dim_text(a),
                        dim_text(b)
                    ),
                    "concatenate along the axis where the tensors differ",
                ));
            }
            *a = unify(a, b);
        }
    }
    if stack {
        out.insert(k, Dim::Known(items.len() as i64));
    } else {
        out[k] = known
            .iter()
            .map(|d| &d[k])
            .try_fold(0i64, |n, d| match d {
                Dim::Known(x) => n.checked_add(*x),
                _ => None,
            })
            .map_or(Dim::Unknown, Dim::Known);
    }
    Ok(vec![Some(out)])
}
