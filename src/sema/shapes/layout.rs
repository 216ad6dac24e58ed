//! Operators that move, join, split or resize dimensions: `Transpose`, `Concat`, `Split`,
//! `Squeeze`, `Unsqueeze`, `Reshape`, `Expand`, `Flatten`, `Gather`, `GatherElements`,
//! `GatherND`, `ScatterElements`, `ScatterND`, `Compress`,
//! `NonZero`, `Slice`, `Tile`, `Pad`, `DepthToSpace`, `SpaceToDepth`, `Resize`, `GridSample`,
//! `Shape`, `Size`, `Range`, the window functions, `Multinomial`, `ConstantOfShape` and
//! `Constant`.

use super::broadcast::broadcast_pair;
use super::{differ, dim_text, product, unify, Cx, Inferred};
use crate::ir::{AttrValue, Dim};

pub(super) fn infer(cx: &Cx) -> Option<Inferred> {
    Some(match cx.op() {
        "Transpose" => transpose(cx),
        "Concat" => concat(cx),
        "Split" => split(cx),
        "Squeeze" => squeeze(cx),
        "Unsqueeze" => unsqueeze(cx),
        "Reshape" => reshape(cx),
        "Expand" => expand(cx),
        "Flatten" => flatten(cx),
        "Gather" => gather(cx),
        "Slice" => slice(cx),
        // The output has the indices' shape.
        "GatherElements" => Ok(vec![cx.dims(1).map(<[Dim]>::to_vec)]),
        "GatherND" => gather_nd(cx),
        "ScatterElements" => scatter_elements(cx),
        "ScatterND" => scatter_nd(cx),
        "Compress" => compress(cx),
        "NonZero" => non_zero(cx),
        "Tile" => tile(cx),
        "Pad" => pad(cx),
        "DepthToSpace" | "SpaceToDepth" => depth_space(cx),
        "Resize" => resize(cx),
        "GridSample" => grid_sample(cx),
        "Range" => range(cx),
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => window(cx),
        "DFT" => dft(cx),
        "STFT" => stft(cx),
        "Unique" => unique(cx),
        // One row (batch, class, box) per box kept: how many only the scores say.
        "NonMaxSuppression" => Ok(vec![Some(vec![Dim::Unknown, Dim::Known(3)])]),
        "Multinomial" => multinomial(cx),
        "Shape" => shape(cx),
        "Size" => Ok(vec![Some(Vec::new())]),
        "ConstantOfShape" => Ok(vec![cx.ints(0).map(|v| v.iter().map(|n| Dim::Known(*n)).collect())]),
        "Constant" => Ok(vec![constant(cx)]),
        _ => return None,
    })
}

/// A `Constant`'s dimensions: its tensor's, none for a single value, one for a list.
fn constant(cx: &Cx) -> Option<Vec<Dim>> {
    let [only] = cx.call.attrs else { return None };
    let length = |n: usize| Some(vec![Dim::Known(n as i64)]);
    match &only.value {
        AttrValue::Tensor(t) => Some(t.dims.iter().map(|d| Dim::Known(*d)).collect()),
        AttrValue::Int(_) | AttrValue::Float(_) | AttrValue::Str(_) => Some(Vec::new()),
        AttrValue::Ints(v) => length(v.len()),
        AttrValue::Floats(v) => length(v.len()),
        AttrValue::Strs(v) => length(v.len()),
        AttrValue::Graph(_) | AttrValue::Ref { .. } => None,
    }
}

/// A list of axes given as an attribute (older opsets) or as a constant input `input`.
fn axes_of<'a>(cx: &'a Cx, attribute_until: i64, input: usize) -> Option<&'a [i64]> {
    if cx.call.version < attribute_until {
        cx.ints_attr("axes")
    } else {
        cx.ints(input)
    }
}

fn transpose(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else {
        // Whatever the rank, a permutation names each axis once.
        if let Some(perm) = cx.ints_attr("perm") {
            if let Some(twice) = perm.iter().enumerate().find(|(k, a)| perm[..*k].contains(a)).map(|(_, a)| a) {
                return Err(cx.violation(
                    format!("`Transpose`'s `perm` {perm:?} names axis {twice} twice"),
                    "name each axis of the input once",
                ));
            }
        }
        return Ok(vec![None]);
    };
    let rank = dims.len();
    let perm: Vec<usize> = match cx.ints_attr("perm") {
        None => (0..rank).rev().collect(),
        Some(perm) => {
            if perm.len() != rank {
                return Err(cx.violation(
                    format!(
                        "`Transpose`'s `perm` {perm:?} has {} axes, but this call's `data` is {}, of rank {rank}",
                        perm.len(),
                        cx.gave(0)
                    ),
                    "give `perm` one entry per dimension of the input",
                ));
            }
            cx.axes(perm, rank, "perm")?
        }
    };
    Ok(vec![Some(perm.iter().map(|k| dims[*k].clone()).collect())])
}

fn concat(cx: &Cx) -> Inferred {
    let present: Vec<usize> = (0..cx.call.inputs.len()).filter(|i| cx.input(*i).is_some()).collect();
    let Some(axis) = cx.int_attr("axis") else { return Ok(vec![None]) };
    let Some(ranked) = present.iter().find(|i| cx.dims(**i).is_some()) else { return Ok(vec![None]) };
    let rank = cx.dims(*ranked).map_or(0, <[Dim]>::len);
    let k = cx.axis(axis, rank.max(1), "axis")?;
    if rank == 0 {
        return Err(cx.violation(
            format!("`Concat` cannot join scalars; this call gives {}", cx.gave(*ranked)),
            "make each input 1-D first (`Unsqueeze` or `Reshape`)",
        ));
    }
    let mut out: Vec<Dim> = cx.dims(*ranked).map(<[Dim]>::to_vec).unwrap_or_default();
    let mut total = Some(0i64);
    for i in &present {
        let Some(dims) = cx.dims(*i) else {
            total = None;
            continue;
        };
        if dims.len() != rank {
            return Err(cx.violation(
                format!("`Concat` joins tensors of one rank; this call gives {} and {}", cx.gave(*ranked), cx.gave(*i)),
                "give every input the same rank",
            ));
        }
        for (j, d) in dims.iter().enumerate() {
            if j == k {
                total = match (total, d) {
                    (Some(t), Dim::Known(n)) => t.checked_add(*n),
                    _ => None,
                };
            } else if differ(&out[j], d) {
                return Err(cx.violation(
                    format!(
                        "`Concat` along axis {axis} needs equal sizes elsewhere; this call gives {} and {}: dimension {j} is {} against {}",
                        cx.gave(*ranked),
                        cx.gave(*i),
                        dim_text(&out[j]),
                        dim_text(d)
                    ),
                    "concatenate along the axis where the inputs differ",
                ));
            } else {
                out[j] = unify(&out[j], d);
            }
        }
    }
    out[k] = match (total, present.len()) {
        (Some(t), _) => Dim::Known(t),
        (None, 1) => out[k].clone(),
        _ => Dim::Unknown,
    };
    Ok(vec![Some(out)])
}

fn split(cx: &Cx) -> Inferred {
    let n = cx.call.outputs;
    if cx.call.version >= 18 && cx.int_attr("num_outputs").is_some() && cx.input(1).is_some() {
        return Err(cx.violation(
            "`Split` takes `split` sizes or `num_outputs`, not both".into(),
            "to split by sizes when traced, make a sequence with `op.SplitToSequence(x, sizes, axis=...)`, as torchlib does",
        ));
    }
    let Some(dims) = cx.dims(0) else { return Ok(vec![None; n]) };
    let k = cx.axis(cx.int_attr("axis").unwrap_or(0), dims.len().max(1), "axis")?;
    if dims.is_empty() {
        return Err(
            cx.violation(format!("`Split` cannot split a scalar; this call gives {}", cx.gave(0)), "split a tensor")
        );
    }
    let sizes: Option<Vec<i64>> =
        if cx.call.version < 13 { cx.ints_attr("split").map(<[i64]>::to_vec) } else { cx.ints(1).map(<[i64]>::to_vec) };
    let along = &dims[k];
    let sizes: Vec<Dim> = match sizes {
        Some(sizes) => {
            if sizes.len() != n {
                return Err(cx.violation(
                    format!("`Split`'s `split` {sizes:?} has {} sizes, but the call takes {n} outputs", sizes.len()),
                    "give one size per output",
                ));
            }
            if let (Dim::Known(d), sum) = (along, sizes.iter().sum::<i64>()) {
                if sum != *d || sizes.iter().any(|s| *s < 0) {
                    return Err(cx.violation(
                        format!("`Split`'s sizes {sizes:?} add up to {sum}, but axis {k} of {} has {d}", cx.gave(0)),
                        "give sizes that add up to the dimension split",
                    ));
                }
            }
            sizes.into_iter().map(Dim::Known).collect()
        }
        None => match along {
            Dim::Known(d) if n > 0 => {
                let equal = cx.call.version < 18 || cx.int_attr("num_outputs").is_none();
                if equal && d % n as i64 != 0 {
                    return Err(cx.violation(
                        format!(
                            "`Split` into {n} equal parts of axis {k} of {}: {d} is not a multiple of {n}",
                            cx.gave(0)
                        ),
                        "give `split` sizes, or split a dimension divisible by the outputs",
                    ));
                }
                // `num_outputs` makes the last part smaller when it does not divide.
                let part = d / n as i64 + i64::from(d % n as i64 != 0);
                (0..n as i64).map(|i| Dim::Known(part.min(d.saturating_sub(part.saturating_mul(i))).max(0))).collect()
            }
            _ => vec![Dim::Unknown; n],
        },
    };
    Ok(sizes
        .into_iter()
        .map(|s| {
            let mut out = dims.to_vec();
            out[k] = s;
            Some(out)
        })
        .collect())
}

fn squeeze(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let Some(axes) = axes_of(cx, 13, 1) else {
        // Every dimension of 1 goes: known only when every dimension is.
        return Ok(vec![product(dims).map(|_| dims.iter().filter(|d| **d != Dim::Known(1)).cloned().collect())]);
    };
    let axes = cx.axes(axes, dims.len(), "axes")?;
    for k in &axes {
        if let Dim::Known(n) = dims[*k] {
            if n != 1 {
                return Err(cx.violation(
                    format!("`Squeeze` removes axis {k} of {}, whose size is {n}, not 1", cx.gave(0)),
                    "squeeze only dimensions of size 1 (check the axis, or `Reshape`)",
                ));
            }
        }
    }
    Ok(vec![Some(dims.iter().enumerate().filter(|(k, _)| !axes.contains(k)).map(|(_, d)| d.clone()).collect())])
}

fn unsqueeze(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let Some(axes) = axes_of(cx, 13, 1) else {
        let rank = cx.input(1).and_then(|f| f.dims.as_ref()).and_then(|d| match d.as_slice() {
            [Dim::Known(n)] => Some(dims.len() + rank_of(*n)?),
            _ => None,
        });
        return Ok(vec![rank.map(|r| vec![Dim::Unknown; r])]);
    };
    let rank = dims.len() + axes.len();
    let axes = cx.axes(axes, rank, "axes")?;
    let mut rest = dims.iter();
    Ok(vec![Some(
        (0..rank)
            .map(|k| if axes.contains(&k) { Dim::Known(1) } else { rest.next().cloned().unwrap_or(Dim::Unknown) })
            .collect(),
    )])
}

fn reshape(cx: &Cx) -> Inferred {
    let Some(target) = cx.ints(1) else {
        // The rank is the shape's length, when that is known.
        let rank = cx.dims(1).and_then(|d| match d {
            [Dim::Known(n)] => rank_of(*n),
            _ => None,
        });
        return Ok(vec![rank.map(|r| vec![Dim::Unknown; r])]);
    };
    let allow_zero = cx.int_attr("allowzero").unwrap_or(0) != 0;
    if target.iter().filter(|v| **v == -1).count() > 1 || target.iter().any(|v| *v < -1) {
        return Err(cx.violation(
            format!("`Reshape`'s `shape` {target:?} may hold one -1 and no other negative size"),
            "infer at most one dimension with -1",
        ));
    }
    let input = cx.dims(0);
    let mut out: Vec<Dim> = Vec::with_capacity(target.len());
    for (k, v) in target.iter().enumerate() {
        out.push(match *v {
            0 if !allow_zero => match input {
                Some(dims) if k < dims.len() => dims[k].clone(),
                Some(_) => {
                    return Err(cx.violation(
                        format!(
                            "`Reshape`'s `shape` {target:?} copies dimension {k} (a 0), which {} does not have",
                            cx.gave(0)
                        ),
                        "copy only dimensions the input has, or give the size",
                    ))
                }
                None => Dim::Unknown,
            },
            -1 => Dim::Unknown,
            n => Dim::Known(n),
        });
    }
    let Some(dims) = input else { return Ok(vec![Some(out)]) };
    let inferred = target.iter().position(|v| *v == -1);
    let known_out =
        out.iter().enumerate().filter(|(k, _)| Some(*k) != inferred).map(|(_, d)| d.clone()).collect::<Vec<_>>();
    let (total, left) = (product(dims), product(&known_out));
    match (inferred, total, left) {
        (Some(k), Some(t), Some(l)) => {
            if l == 0 || t % l != 0 {
                return Err(cx.violation(
                    format!("`Reshape` cannot make the {} of {} into {target:?}", elements(t), cx.gave(0)),
                    "give a shape whose sizes multiply to the input's",
                ));
            }
            out[k] = Dim::Known(t / l);
        }
        (None, Some(t), Some(l)) if t != l => {
            return Err(cx.violation(
                format!(
                    "`Reshape` cannot make the {} of {} into {target:?} ({})",
                    elements(t),
                    cx.gave(0),
                    elements(l)
                ),
                "give a shape whose sizes multiply to the input's, or -1 for one of them",
            ))
        }
        (Some(k), _, _) => out[k] = what_is_left(dims, &known_out).unwrap_or(Dim::Unknown),
        _ => {}
    }
    Ok(vec![Some(out)])
}

/// A count of dimensions a value gives (the length of a shape), when it is one a tensor can have.
fn rank_of(n: i64) -> Option<usize> {
    usize::try_from(n).ok().filter(|r| *r <= MAX_RANK)
}

/// More dimensions than any tensor has: a length past it is not taken as a rank.
const MAX_RANK: usize = 1024;

fn elements(n: i64) -> String {
    if n == 1 {
        "1 element".into()
    } else {
        format!("{n} elements")
    }
}

/// What a -1 stands for when the symbols cancel: `[s0, 3, 4]` into `[12, -1]` leaves `s0`, and
/// into `[0, -1]` (`[s0, -1]`) leaves 12.
fn what_is_left(input: &[Dim], others: &[Dim]) -> Option<Dim> {
    let mut symbols: Vec<&Dim> = input.iter().filter(|d| matches!(d, Dim::Symbolic(_))).collect();
    for d in others.iter().filter(|d| matches!(d, Dim::Symbolic(_))) {
        let at = symbols.iter().position(|s| *s == d)?;
        symbols.remove(at);
    }
    let known =
        |ds: &[Dim]| ds.iter().filter_map(|d| if let Dim::Known(n) = d { Some(*n) } else { None }).product::<i64>();
    let unknown = input.iter().chain(others).any(|d| *d == Dim::Unknown);
    let (ki, ko) = (known(input), known(others));
    match symbols[..] {
        _ if unknown => None,
        [] if ko != 0 && ki % ko == 0 => Some(Dim::Known(ki / ko)),
        [only] if ki == ko => Some(only.clone()),
        _ => None,
    }
}

fn expand(cx: &Cx) -> Inferred {
    let Some(shape) = cx.ints(1) else { return Ok(vec![None]) };
    if let Some(bad) = shape.iter().find(|v| **v < 0) {
        return Err(cx.violation(
            format!("`Expand`'s `shape` {shape:?} holds {bad}; Expand takes sizes, not `Reshape`'s -1"),
            "give 1 where a dimension is kept as it is: Expand broadcasts, so 1 keeps the input's size",
        ));
    }
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let target: Vec<Dim> = shape.iter().map(|n| Dim::Known(*n)).collect();
    let out = broadcast_pair(dims, &target).map_err(|(a, b)| {
        cx.violation(
            format!(
                "`Expand` cannot broadcast {} to {shape:?}: dimension {} against {}",
                cx.gave(0),
                dim_text(&a),
                dim_text(&b)
            ),
            "give sizes equal to the input's, or expand dimensions of size 1",
        )
    })?;
    Ok(vec![Some(out)])
}

fn flatten(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let rank = dims.len() as i64;
    let axis = cx.int_attr("axis").unwrap_or(1);
    if axis < -rank || axis > rank {
        return Err(cx.violation(
            format!("`Flatten`'s `axis` is {axis}, outside [{}, {rank}] for {}", -rank, cx.gave(0)),
            format!("give an axis between {} and {rank}", -rank),
        ));
    }
    let k = if axis < 0 { axis + rank } else { axis } as usize;
    let side = |ds: &[Dim]| match ds {
        [] => Dim::Known(1),
        [only] => only.clone(),
        _ => product(ds).map_or(Dim::Unknown, Dim::Known),
    };
    Ok(vec![Some(vec![side(&dims[..k]), side(&dims[k..])])])
}

fn gather(cx: &Cx) -> Inferred {
    let Some(data) = cx.dims(0) else { return Ok(vec![None]) };
    if data.is_empty() {
        return Err(cx.violation(
            format!("`Gather` needs `data` of rank 1 or more; this call gives {}", cx.gave(0)),
            "gather from a tensor",
        ));
    }
    let k = cx.axis(cx.int_attr("axis").unwrap_or(0), data.len(), "axis")?;
    if let (Some(values), Dim::Known(n)) = (cx.ints(1), &data[k]) {
        if let Some(bad) = values.iter().find(|v| **v < -n || **v >= *n) {
            return Err(cx.violation(
                format!("`Gather`'s index {bad} is outside axis {k} of {}, which has {n}", cx.gave(0)),
                format!("give indices between {} and {}", -n, n - 1),
            ));
        }
    }
    let Some(indices) = cx.dims(1) else { return Ok(vec![None]) };
    let mut out = data[..k].to_vec();
    out.extend(indices.iter().cloned());
    out.extend(data[k + 1..].iter().cloned());
    Ok(vec![Some(out)])
}

fn slice(cx: &Cx) -> Inferred {
    if let Some(steps) = cx.ints(4).filter(|s| s.contains(&0)) {
        return Err(cx.violation(format!("`Slice`'s steps {steps:?} hold a 0"), "step by 1 or more (or -1 backwards)"));
    }
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let rank = dims.len();
    let (Some(starts), Some(ends)) = (cx.ints(1), cx.ints(2)) else {
        return Ok(vec![Some(vec![Dim::Unknown; rank])]);
    };
    let default_axes: Vec<i64> = (0..starts.len() as i64).collect();
    let axes = match cx.input(3) {
        None => &default_axes[..],
        Some(_) => match cx.ints(3) {
            Some(a) => a,
            None => return Ok(vec![Some(vec![Dim::Unknown; rank])]),
        },
    };
    let ones = vec![1; starts.len()];
    let steps = match cx.input(4) {
        None => &ones[..],
        Some(_) => match cx.ints(4) {
            Some(s) => s,
            None => return Ok(vec![Some(vec![Dim::Unknown; rank])]),
        },
    };
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(cx.violation(
            format!("`Slice`'s starts {starts:?}, ends {ends:?}, axes {axes:?} and steps {steps:?} differ in length"),
            "give one start, end, axis and step per axis sliced",
        ));
    }
    if steps.contains(&0) {
        return Err(cx.violation(format!("`Slice`'s steps {steps:?} hold a 0"), "step by 1 or more (or -1 backwards)"));
    }
    let axes = cx.axes(axes, rank, "axes")?;
    let mut out = dims.to_vec();
    for (j, k) in axes.iter().enumerate() {
        out[*k] = match &dims[*k] {
            Dim::Known(n) => Dim::Known(sliced(*n, starts[j], ends[j], steps[j])),
            whole if starts[j] == 0 && ends[j] >= i64::from(i32::MAX) && steps[j] == 1 => whole.clone(),
            _ => Dim::Unknown,
        };
    }
    Ok(vec![Some(out)])
}

/// The first index `Slice` takes from a dimension of `n` and the bound it stops before, with
/// ONNX's clamping (the bound is -1 for a slice backwards to the start).
pub(super) fn slice_bounds(n: i64, start: i64, end: i64, step: i64) -> (i64, i64) {
    let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi);
    let norm = |v: i64| if v < 0 { v.saturating_add(n) } else { v };
    if step > 0 {
        (clamp(norm(start), 0, n), clamp(norm(end), 0, n))
    } else {
        (clamp(norm(start), 0, n - 1), clamp(norm(end), -1, n - 1))
    }
}

/// How many elements `Slice` takes from a dimension of `n`, with ONNX's clamping.
fn sliced(n: i64, start: i64, end: i64, step: i64) -> i64 {
    let (start, end) = slice_bounds(n, start, end, step);
    let span = end - start;
    if (step > 0 && span <= 0) || (step < 0 && span >= 0) {
        return 0;
    }
    span.saturating_add(step).saturating_sub(step.signum()) / step
}

fn tile(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let Some(repeats) = cx.ints(1) else { return Ok(vec![Some(vec![Dim::Unknown; dims.len()])]) };
    if repeats.len() != dims.len() {
        return Err(cx.violation(
            format!(
                "`Tile`'s `repeats` {repeats:?} has {} entries, but {} has rank {}",
                repeats.len(),
                cx.gave(0),
                dims.len()
            ),
            "give one repeat count per dimension",
        ));
    }
    Ok(vec![Some(
        dims.iter()
            .zip(repeats)
            .map(|(d, r)| match (d, r) {
                (Dim::Known(n), r) => n.checked_mul(*r).map_or(Dim::Unknown, Dim::Known),
                (d, 1) => d.clone(),
                _ => Dim::Unknown,
            })
            .collect(),
    )])
}

fn shape(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![Some(vec![Dim::Unknown])]) };
    let taken = shape_range(dims.len(), cx.int_attr("start"), cx.int_attr("end"));
    Ok(vec![Some(vec![Dim::Known(taken.len() as i64)])])
}

/// The dimensions `Shape` gives of a rank-`rank` input, from its `start` and `end` (negative
/// ones counted from the end, both clamped to the rank).
pub fn shape_range(rank: usize, start: Option<i64>, end: Option<i64>) -> std::ops::Range<usize> {
    let r = rank as i64;
    let bound = |v: i64| if v < 0 { (v + r).max(0) } else { v.min(r) } as usize;
    let (start, end) = (bound(start.unwrap_or(0)), bound(end.unwrap_or(r)));
    start..end.max(start)
}

/// `GatherND`: each row along `indices`' last dimension addresses a slice of `data` past the
/// `batch_dims` both share, so the output is `indices.shape[:-1] + data.shape[batch_dims + k:]`.
fn gather_nd(cx: &Cx) -> Inferred {
    let (Some(data), Some(indices)) = (cx.dims(0), cx.dims(1)) else { return Ok(vec![None]) };
    let Some(Dim::Known(k)) = indices.last() else { return Ok(vec![None]) };
    let batch = cx.int_attr("batch_dims").unwrap_or(0);
    let (Ok(k), Ok(batch)) = (usize::try_from(*k), usize::try_from(batch)) else { return Ok(vec![None]) };
    if batch >= data.len().min(indices.len()) {
        return Ok(vec![None]);
    }
    if batch + k > data.len() {
        return Err(cx.violation(
            format!(
                "`GatherND`'s `indices` {} address {k} dimensions, but {} has {}{}",
                cx.gave(1),
                cx.gave(0),
                data.len() - batch,
                if batch > 0 { format!(" past its {batch} batch dimensions") } else { String::new() }
            ),
            "give each index row at most as many entries as `data` has dimensions",
        ));
    }
    let mut out = indices[..indices.len() - 1].to_vec();
    out.extend(data[batch + k..].iter().cloned());
    Ok(vec![Some(out)])
}

/// `ScatterElements` writes `updates` into a copy of `data` at `indices`, which ONNX Runtime
/// needs of `data`'s rank, shaped as `updates`, and no larger than `data` off the axis.
fn scatter_elements(cx: &Cx) -> Inferred {
    let Some(data) = cx.dims(0) else { return Ok(vec![None]) };
    let out = Ok(vec![Some(data.to_vec())]);
    if data.is_empty() {
        return out;
    }
    let k = cx.axis(cx.int_attr("axis").unwrap_or(0), data.len(), "axis")?;
    let Some(indices) = cx.dims(1) else { return out };
    if indices.len() != data.len() {
        return Err(cx.violation(
            format!(
                "`ScatterElements` needs `indices` of `data`'s rank; this call gives {} and {}",
                cx.gave(0),
                cx.gave(1)
            ),
            "give `indices` one dimension per dimension of `data`",
        ));
    }
    for (j, (i, d)) in indices.iter().zip(data).enumerate() {
        if let (Dim::Known(i), Dim::Known(d)) = (i, d) {
            if j != k && i > d {
                return Err(cx.violation(
                    format!(
                        "`ScatterElements` along axis {k}: `indices` {} is larger than `data` {} in dimension {j}",
                        cx.gave(1),
                        cx.gave(0)
                    ),
                    "give indices no larger than `data` off the axis scattered along",
                ));
            }
        }
    }
    if let Some(updates) = cx.dims(2) {
        if updates.len() != indices.len() || updates.iter().zip(indices).any(|(u, i)| differ(u, i)) {
            return Err(cx.violation(
                format!(
                    "`ScatterElements` needs `updates` shaped as `indices`; this call gives {} and {}",
                    cx.gave(2),
                    cx.gave(1)
                ),
                "give one update per index",
            ));
        }
    }
    out
}

/// `ScatterND` writes slices of `data` addressed by the rows along `indices`' last dimension;
/// `updates` must be `indices.shape[:-1] + data.shape[k:]`.
fn scatter_nd(cx: &Cx) -> Inferred {
    let Some(data) = cx.dims(0) else { return Ok(vec![None]) };
    let out = Ok(vec![Some(data.to_vec())]);
    let Some(indices) = cx.dims(1) else { return out };
    let Some(Dim::Known(k)) = indices.last() else { return out };
    let Ok(k) = usize::try_from(*k) else { return out };
    if k > data.len() {
        return Err(cx.violation(
            format!(
                "`ScatterND`'s `indices` {} address {k} dimensions, but {} has {}",
                cx.gave(1),
                cx.gave(0),
                data.len()
            ),
            "give each index row at most as many entries as `data` has dimensions",
        ));
    }
    let mut expected = indices[..indices.len() - 1].to_vec();
    expected.extend(data[k..].iter().cloned());
    if let Some(updates) = cx.dims(2) {
        if updates.len() != expected.len() || updates.iter().zip(&expected).any(|(u, e)| differ(u, e)) {
            return Err(cx.violation(
                format!(
                    "`ScatterND`'s `updates` must be `indices.shape[:-1] + data.shape[{k}:]`, {}; this call gives {}",
                    super::dims_text(&expected),
                    cx.gave(2)
                ),
                "give one slice of `data` per index row",
            ));
        }
    }
    out
}

/// `Compress` keeps the slices its condition selects: along `axis`, of a number only the values
/// say; without it, of the flattened input.
fn compress(cx: &Cx) -> Inferred {
    let Some(axis) = cx.int_attr("axis") else { return Ok(vec![Some(vec![Dim::Unknown])]) };
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let k = cx.axis(axis, dims.len(), "axis")?;
    let mut out = dims.to_vec();
    out[k] = Dim::Unknown;
    Ok(vec![Some(out)])
}

/// `NonZero`: one row per input dimension, one column per non-zero element. ONNX Runtime
/// gives a scalar's one row where ONNX's inference says none, so a scalar's is left unknown.
fn non_zero(cx: &Cx) -> Inferred {
    Ok(vec![cx.dims(0).map(|d| match d.len() {
        0 => vec![Dim::Unknown, Dim::Unknown],
        r => vec![Dim::Known(r as i64), Dim::Unknown],
    })])
}

/// `Pad` grows each padded axis by its two pads (negative ones crop). The pads are an input from
/// opset 11, an attribute before; from opset 18 an `axes` input may say which axes they pad.
fn pad(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let rank = dims.len();
    let unknown = Ok(vec![Some(vec![Dim::Unknown; rank])]);
    let pads = if cx.call.version < 11 { cx.ints_attr("pads") } else { cx.ints(1) };
    let Some(pads) = pads else { return unknown };
    let axes: Vec<usize> = match cx.input(3).filter(|_| cx.call.version >= 18) {
        None => (0..rank).collect(),
        Some(_) => match cx.ints(3) {
            Some(a) => cx.axes(a, rank, "axes")?,
            None => return unknown,
        },
    };
    let n = axes.len();
    if pads.len() != 2 * n {
        return Err(cx.violation(
            format!(
                "`Pad`'s `pads` {pads:?} has {} values, but pads {n} axes of {} (a start and an end each)",
                pads.len(),
                cx.gave(0)
            ),
            format!("give {} pads: every start, then every end", 2 * n),
        ));
    }
    let mode = cx.str_attr("mode").unwrap_or("constant");
    let mut out = dims.to_vec();
    for (j, k) in axes.iter().enumerate() {
        let (start, end) = (pads[j], pads[j + n]);
        out[*k] = match &dims[*k] {
            Dim::Known(d) => {
                // `reflect` mirrors without the edge, so it has at most d - 1 values to give; no
                // pad at all is always possible.
                let most = match mode {
                    "reflect" => d.saturating_sub(1),
                    "edge" if *d == 0 => 0,
                    _ => i64::MAX,
                };
                if start.max(end) > most.max(0) {
                    return Err(cx.violation(
                        format!(
                            "`Pad` in `{mode}` mode pads axis {k} of {} by {}, more than a dimension of {d} can give",
                            cx.gave(0),
                            start.max(end)
                        ),
                        "pad by less than the dimension (in `reflect` mode, less than it minus one), or pad with a constant",
                    ));
                }
                match d.checked_add(start).and_then(|v| v.checked_add(end)) {
                    Some(size) if size < 0 => {
                        return Err(cx.violation(
                            format!("`Pad`'s `pads` {pads:?} crop axis {k} of {} to {size} values", cx.gave(0)),
                            "crop at most the values the dimension has",
                        ))
                    }
                    size => size.map_or(Dim::Unknown, Dim::Known),
                }
            }
            kept if start == 0 && end == 0 => kept.clone(),
            _ => Dim::Unknown,
        };
    }
    Ok(vec![Some(out)])
}

/// `DepthToSpace` moves channels into `blocksize`-square blocks of height and width;
/// `SpaceToDepth` the other way. Both need `[N, C, H, W]`, and the sizes divided must divide.
fn depth_space(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let op = cx.op();
    if dims.len() != 4 {
        return Err(cx.violation(
            format!("`{op}` needs an input of rank 4 ([N, C, H, W]); this call gives {}", cx.gave(0)),
            "reshape the input to [N, C, H, W]",
        ));
    }
    let Some(b) = cx.int_attr("blocksize").filter(|b| *b > 0) else { return Ok(vec![Some(vec![Dim::Unknown; 4])]) };
    let square = b.saturating_mul(b);
    let to_space = op == "DepthToSpace";
    let mut out = vec![dims[0].clone()];
    for (j, d) in dims.iter().enumerate().skip(1) {
        let channels = j == 1;
        // The channels divide in DepthToSpace, height and width in SpaceToDepth.
        let (divisor, factor) = match (channels, to_space) {
            (true, true) => (square, 1),
            (true, false) => (1, square),
            (false, true) => (1, b),
            (false, false) => (b, 1),
        };
        out.push(match d {
            Dim::Known(n) if n % divisor != 0 => {
                return Err(cx.violation(
                    format!(
                        "`{op}` with `blocksize` {b} divides dimension {j} of {} by {divisor}, which {n} is not a multiple of",
                        cx.gave(0)
                    ),
                    "give a block size that divides the dimension",
                ))
            }
            Dim::Known(n) => (n / divisor).checked_mul(factor).map_or(Dim::Unknown, Dim::Known),
            kept if b == 1 => kept.clone(),
            _ => Dim::Unknown,
        });
    }
    Ok(vec![Some(out)])
}

/// `Resize` keeps the input's rank and the dimensions outside its `axes` (opset 18); the ones it
/// resizes are its `sizes` when they are known integers (`scales` are floats it does not follow).
fn resize(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let rank = dims.len();
    let axes: Vec<usize> = match cx.ints_attr("axes").filter(|_| cx.call.version >= 18) {
        Some(a) => cx.axes(a, rank, "axes")?,
        None => (0..rank).collect(),
    };
    let mut out = dims.to_vec();
    for k in &axes {
        out[*k] = Dim::Unknown;
    }
    let stretch = cx.str_attr("keep_aspect_ratio_policy").unwrap_or("stretch") == "stretch";
    if let Some(sizes) = cx.ints(3).filter(|_| cx.call.version >= 11) {
        if sizes.len() != axes.len() {
            return Err(cx.violation(
                format!(
                    "`Resize`'s `sizes` {sizes:?} has {} values, for {} axes of {}",
                    sizes.len(),
                    axes.len(),
                    cx.gave(0)
                ),
                "give one size per axis resized (every axis, without `axes`)",
            ));
        }
        if stretch {
            for (k, n) in axes.iter().zip(sizes) {
                out[*k] = Dim::Known(*n);
            }
        }
    }
    Ok(vec![Some(out)])
}

/// `GridSample` samples `X` `[N, C, D1, ...]` at the points of `grid` `[N, D1_out, ..., r]`
/// (one coordinate per spatial dimension): `[N, C, D1_out, ...]`.
fn grid_sample(cx: &Cx) -> Inferred {
    let (Some(x), Some(grid)) = (cx.dims(0), cx.dims(1)) else { return Ok(vec![None]) };
    if x.len() != grid.len() {
        return Err(cx.violation(
            format!("`GridSample` needs `grid` of `X`'s rank; this call gives {} and {}", cx.gave(0), cx.gave(1)),
            "give `grid` as [N, H_out, W_out, 2] for a 4-D `X`",
        ));
    }
    if x.len() < 3 {
        return Ok(vec![None]);
    }
    let spatial = x.len() as i64 - 2;
    if differ(&grid[grid.len() - 1], &Dim::Known(spatial)) || differ(&x[0], &grid[0]) {
        return Err(cx.violation(
            format!(
                "`GridSample` needs `grid` [N, D1_out, ..., {spatial}] for `X` [N, C, ...]; this call gives {} and {}",
                cx.gave(0),
                cx.gave(1)
            ),
            "give the grid the input's batch, and one coordinate per spatial dimension last",
        ));
    }
    let mut out = vec![unify(&x[0], &grid[0]), x[1].clone()];
    out.extend(grid[1..grid.len() - 1].iter().cloned());
    Ok(vec![Some(out)])
}

/// `Range` gives `max(ceil((limit - start) / delta), 0)` values, counted when the three scalars
/// are known integers.
fn range(cx: &Cx) -> Inferred {
    for (i, name) in [(0, "start"), (1, "limit"), (2, "delta")] {
        if cx.dims(i).and_then(product).is_some_and(|n| n != 1) {
            return Err(cx.violation(
                format!("`Range`'s `{name}` must be a scalar; this call gives {}", cx.gave(i)),
                "give a single value (`op.Squeeze` or `op.Reshape(x, [])` of a 1-element tensor)",
            ));
        }
    }
    let scalar = |i: usize| match cx.ints(i) {
        Some([v]) => Some(i128::from(*v)),
        _ => None,
    };
    if scalar(2) == Some(0) {
        return Err(
            cx.violation("`Range`'s `delta` is 0: it would never reach `limit`".into(), "step by a non-zero delta")
        );
    }
    let (Some(start), Some(limit), Some(delta)) = (scalar(0), scalar(1), scalar(2)) else {
        return Ok(vec![Some(vec![Dim::Unknown])]);
    };
    let span = limit - start;
    // Division truncates toward zero, which is the ceiling of a negative quotient already.
    let mut count = span / delta;
    if span % delta != 0 && (span > 0) == (delta > 0) {
        count += 1;
    }
    Ok(vec![Some(vec![i64::try_from(count.max(0)).map_or(Dim::Unknown, Dim::Known)])])
}

/// `Multinomial` draws `sample_size` classes for each row of `[batch, classes]`.
fn multinomial(cx: &Cx) -> Inferred {
    let Some(batch) = cx.dims(0).filter(|d| d.len() == 2).map(|d| d[0].clone()) else { return Ok(vec![None]) };
    let samples = cx.int_attr("sample_size").unwrap_or(1);
    Ok(vec![Some(vec![batch, count(Some(samples))])])
}

/// A window function gives `size` values, when the scalar is a known integer.
fn window(cx: &Cx) -> Inferred {
    Ok(vec![Some(vec![count(match cx.ints(0) {
        Some([n]) => Some(*n),
        _ => None,
    })])])
}

/// A known number of elements, or an unknown dimension.
fn count(n: Option<i64>) -> Dim {
    n.filter(|n| *n >= 0).map_or(Dim::Unknown, Dim::Known)
}

/// `DFT` keeps its input's shape but the transformed axis, `dft_length` long (or as long as
/// the input), `n/2 + 1` one-sided; its last axis holds the real and imaginary parts. The axis
/// is an attribute (default 1) before opset 20, an input (default -2) from it.
fn dft(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let rank = dims.len();
    let unknown = Ok(vec![Some(vec![Dim::Unknown; rank])]);
    let axis = if cx.call.version >= 20 {
        match cx.input(2) {
            None => Some(-2),
            Some(_) => match cx.ints(2) {
                Some([a]) => Some(*a),
                _ => None,
            },
        }
    } else {
        Some(cx.int_attr("axis").unwrap_or(1))
    };
    // The axis may not be the last, which holds the parts.
    let Some(axis) = axis.and_then(|a| usize::try_from(if a < 0 { a + rank as i64 } else { a }).ok()) else {
        return unknown;
    };
    if rank < 2 || axis >= rank - 1 {
        return unknown;
    }
    let length = match cx.input(1) {
        None => match &dims[axis] {
            Dim::Known(n) => Some(*n),
            _ => None,
        },
        Some(_) => match cx.ints(1) {
            Some([n]) => Some(*n),
            _ => None,
        },
    };
    let mut out = dims.to_vec();
    let onesided = cx.int_attr("onesided") == Some(1);
    out[axis] = match (length, onesided, cx.int_attr("inverse") == Some(1)) {
        (Some(n), false, _) => count(Some(n)),
        (Some(n), true, false) => count(Some(n / 2 + 1)),
        (None, false, _) if cx.input(1).is_none() => dims[axis].clone(),
        _ => Dim::Unknown,
    };
    out[rank - 1] = Dim::Known(2);
    Ok(vec![Some(out)])
}

/// `STFT` of `[batch, length, 1 or 2]` gives `[batch, frames, bins, 2]`: a frame every
/// `frame_step` samples, `frame_length` long (or the window's length), and as many bins as the
/// frame has samples, `n/2 + 1` one-sided (the default).
fn stft(cx: &Cx) -> Inferred {
    let Some(signal) = cx.dims(0).filter(|d| d.len() == 3) else { return Ok(vec![Some(vec![Dim::Unknown; 4])]) };
    let scalar = |i: usize| match cx.ints(i) {
        Some([v]) => Some(*v),
        _ => None,
    };
    let frame = scalar(3).or_else(|| match cx.dims(2) {
        Some([Dim::Known(n)]) => Some(*n),
        _ => None,
    });
    let frames = match (&signal[1], frame, scalar(1)) {
        (Dim::Known(length), Some(frame), Some(step)) if step > 0 && *length >= frame => {
            Some((length - frame) / step + 1)
        }
        _ => None,
    };
    let bins = frame.map(|n| if cx.int_attr("onesided").unwrap_or(1) == 1 { n / 2 + 1 } else { n });
    Ok(vec![Some(vec![signal[0].clone(), count(frames), count(bins), Dim::Known(2)])])
}

/// `Unique` keeps what is unique: along `axis`, the other dimensions stay and that one is as
/// long as the data says; without one, a flat list. The inverse indices have an entry per
/// element (per slice along the axis).
fn unique(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else {
        return Ok(vec![None, Some(vec![Dim::Unknown]), None, Some(vec![Dim::Unknown])]);
    };
    let (values, inverse) = match cx.int_attr("axis") {
        Some(axis) => {
            let axis = cx.axis(axis, dims.len(), "axis")?;
            let mut values = dims.to_vec();
            values[axis] = Dim::Unknown;
            (values, dims[axis].clone())
        }
        None => (vec![Dim::Unknown], count(product(dims))),
    };
    Ok(vec![Some(values), Some(vec![Dim::Unknown]), Some(vec![inverse]), Some(vec![Dim::Unknown])])
}
