//! Convolution and pooling: `Conv`, `ConvTranspose`, `MaxPool`, `AveragePool`, `LpPool`, the
//! global pools, the region pools (`RoiAlign`, `MaxRoiPool`) and `Col2Im`. Inputs are
//! `[N, C, D1, D2, ...]`.

use super::{differ, dim_text, Cx, Inferred, Violation};
use crate::ir::Dim;

pub(super) fn infer(cx: &Cx) -> Option<Inferred> {
    Some(match cx.op() {
        "Conv" => conv(cx),
        "ConvTranspose" => conv_transpose(cx),
        "MaxPool" | "AveragePool" | "LpPool" => pool(cx),
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => global_pool(cx),
        "RoiAlign" | "MaxRoiPool" => region_pool(cx),
        "Col2Im" => col2im(cx),
        _ => return None,
    })
}

/// The input, which must have a batch, a channel and at least one spatial dimension.
fn image<'a>(cx: &'a Cx) -> Result<Option<&'a [Dim]>, Violation> {
    let Some(x) = cx.dims(0) else { return Ok(None) };
    if x.len() < 3 {
        return Err(cx.violation(
            format!("`{}` needs `X` of rank 3 or more ([N, C, D1, ...]); this call gives {}", cx.op(), cx.gave(0)),
            "add the batch and channel dimensions (`Unsqueeze`)",
        ));
    }
    Ok(Some(x))
}

fn conv(cx: &Cx) -> Inferred {
    let Some(x) = image(cx)? else { return Ok(vec![None]) };
    let Some(w) = cx.dims(1) else { return Ok(vec![Some(unknown_spatial(x, Dim::Unknown))]) };
    if w.len() != x.len() {
        return Err(cx.violation(
            format!("`Conv`'s `W` must have the rank of `X`; this call gives {} and {}", cx.gave(0), cx.gave(1)),
            "give `W` as [M, C / group, k1, ...]",
        ));
    }
    let group = cx.int_attr("group").unwrap_or(1);
    if let (Dim::Known(c), Dim::Known(per_group)) = (&x[1], &w[1]) {
        if Some(*c) != per_group.checked_mul(group) {
            return Err(cx.violation(
                format!(
                    "`Conv` with group {group} needs `X`'s {c} channels to be `W`'s dimension 1 ({per_group}) times the group; this call gives {} and {}",
                    cx.gave(0),
                    cx.gave(1)
                ),
                "check the channel order ([N, C, ...]) and the weight's layout ([M, C / group, ...])",
            ));
        }
    }
    if let Some(b) = cx.dims(2) {
        if b.len() != 1 || differ(&b[0], &w[0]) {
            return Err(cx.violation(
                format!(
                    "`Conv`'s `B` must be 1-D with one bias per output channel ([{}]); this call gives {}",
                    dim_text(&w[0]),
                    cx.gave(2)
                ),
                "give the bias as a 1-D tensor (reshape it to [M])",
            ));
        }
    }
    let kernel: Vec<Dim> = match cx.ints_attr("kernel_shape") {
        Some(k) if k.len() != w.len() - 2 => {
            return Err(cx.violation(
                format!(
                    "`Conv`'s `kernel_shape` {k:?} has {} axes, but {} has {} spatial dimensions",
                    k.len(),
                    cx.gave(1),
                    w.len() - 2
                ),
                "leave `kernel_shape` out: Conv reads it from `W`",
            ))
        }
        Some(k) => {
            for (j, (given, actual)) in k.iter().zip(&w[2..]).enumerate() {
                if differ(&Dim::Known(*given), actual) {
                    return Err(cx.violation(
                        format!(
                            "`Conv`'s `kernel_shape` {k:?} says {given} for spatial axis {j}, but {} has {}",
                            cx.gave(1),
                            dim_text(actual)
                        ),
                        "leave `kernel_shape` out: Conv reads it from `W`",
                    ));
                }
            }
            k.iter().map(|n| Dim::Known(*n)).collect()
        }
        None => w[2..].to_vec(),
    };
    let mut out = vec![x[0].clone(), w[0].clone()];
    out.extend(spatial(cx, &x[2..], &kernel, false)?);
    Ok(vec![Some(out)])
}

/// `ConvTranspose` of `X` `[N, C, D1, ...]` by `W` `[C, M / group, k1, ...]`: `[N, M, O1, ...]`,
/// each `O` from `output_shape`, or from ONNX's formula
/// `stride * (D - 1) + output_padding + (k - 1) * dilation + 1 - pads`.
fn conv_transpose(cx: &Cx) -> Inferred {
    let Some(x) = image(cx)? else { return Ok(vec![None]) };
    let n = x.len() - 2;
    let group = cx.int_attr("group").unwrap_or(1);
    let w = cx.dims(1);
    let mut channels = Dim::Unknown;
    if let Some(w) = w {
        if w.len() != x.len() {
            return Err(cx.violation(
                format!(
                    "`ConvTranspose`'s `W` must have the rank of `X`; this call gives {} and {}",
                    cx.gave(0),
                    cx.gave(1)
                ),
                "give `W` as [C, M / group, k1, ...]",
            ));
        }
        if differ(&x[1], &w[0]) {
            return Err(cx.violation(
                format!(
                    "`ConvTranspose` needs `W`'s dimension 0 to be `X`'s {} channels; this call gives {} and {}",
                    dim_text(&x[1]),
                    cx.gave(0),
                    cx.gave(1)
                ),
                "check the weight's layout: a transposed convolution's is [C, M / group, ...], Conv's transposed",
            ));
        }
        channels = match &w[1] {
            Dim::Known(m) => m.checked_mul(group).map_or(Dim::Unknown, Dim::Known),
            d if group == 1 => d.clone(),
            _ => Dim::Unknown,
        };
    }
    if let Some(b) = cx.dims(2) {
        if b.len() != 1 || differ(&b[0], &channels) {
            return Err(cx.violation(
                format!(
                    "`ConvTranspose`'s `B` must be 1-D with one bias per output channel ([{}]); this call gives {}",
                    dim_text(&channels),
                    cx.gave(2)
                ),
                "give the bias as a 1-D tensor of the output channels",
            ));
        }
    }
    let strides = per_axis(cx, "strides", 1, n, n)?;
    let dilations = per_axis(cx, "dilations", 1, n, n)?;
    let pads = per_axis(cx, "pads", 0, 2 * n, n)?;
    let output_padding = per_axis(cx, "output_padding", 0, n, n)?;
    for (j, p) in output_padding.iter().enumerate() {
        if *p >= strides[j].max(dilations[j]) {
            return Err(cx.violation(
                format!(
                    "`ConvTranspose`'s `output_padding` {output_padding:?} is {p} along spatial axis {j}, not less than its stride or dilation ({})",
                    strides[j].max(dilations[j])
                ),
                "pad the output by less than the stride: the padding picks among the sizes one stride gives",
            ));
        }
    }
    let mut out = vec![x[0].clone(), channels];
    if let Some(shape) = cx.ints_attr("output_shape") {
        if shape.len() != n {
            return Err(cx.violation(
                format!("`ConvTranspose`'s `output_shape` {shape:?} must give the {n} spatial dimensions only"),
                "give the spatial sizes, without the batch and channels",
            ));
        }
        out.extend(shape.iter().map(|s| Dim::Known(*s)));
        return Ok(vec![Some(out)]);
    }
    let kernel: Vec<Dim> = match cx.ints_attr("kernel_shape") {
        Some(k) if k.len() == n => k.iter().map(|k| Dim::Known(*k)).collect(),
        Some(k) => {
            return Err(cx.violation(
                format!(
                    "`ConvTranspose`'s `kernel_shape` {k:?} has {} axes, but `X` has {n} spatial dimensions",
                    k.len()
                ),
                "leave `kernel_shape` out: ConvTranspose reads it from `W`",
            ))
        }
        None => w.map_or(vec![Dim::Unknown; n], |w| w[2..].to_vec()),
    };
    let auto_pad = cx.str_attr("auto_pad").unwrap_or("NOTSET");
    for j in 0..n {
        let (Dim::Known(size), Dim::Known(k)) = (&x[j + 2], &kernel[j]) else {
            out.push(Dim::Unknown);
            continue;
        };
        let (s, d) = (strides[j], dilations[j]);
        let reach = d.saturating_mul(k.saturating_sub(1)).saturating_add(1);
        let padding = match auto_pad {
            // ONNX pads what the kernel reaches past one stride; ONNX Runtime's padding may
            // differ with an output padding, so that case is left unknown.
            "SAME_UPPER" | "SAME_LOWER" if output_padding[j] != 0 => {
                out.push(Dim::Unknown);
                continue;
            }
            "SAME_UPPER" | "SAME_LOWER" => reach.saturating_sub(s).max(0),
            "VALID" => 0,
            _ => pads[j].saturating_add(pads[j + n]),
        };
        let length = s
            .saturating_mul(size.saturating_sub(1))
            .saturating_add(output_padding[j])
            .saturating_add(reach)
            .saturating_sub(padding);
        if length < 1 {
            return Err(cx.violation(
                format!("`ConvTranspose`'s pads along spatial axis {j} crop all of the output of {}", cx.gave(0)),
                "pad less than the kernel reaches",
            ));
        }
        out.push(Dim::Known(length));
    }
    Ok(vec![Some(out)])
}

fn pool(cx: &Cx) -> Inferred {
    let Some(x) = image(cx)? else { return Ok(vec![None, None]) };
    let Some(kernel) = cx.ints_attr("kernel_shape") else { return Ok(vec![None, None]) };
    if kernel.len() != x.len() - 2 {
        return Err(cx.violation(
            format!(
                "`{}`'s `kernel_shape` {kernel:?} has {} axes, but {} has {} spatial dimensions",
                cx.op(),
                kernel.len(),
                cx.gave(0),
                x.len() - 2
            ),
            "give one kernel size per spatial dimension",
        ));
    }
    let kernel: Vec<Dim> = kernel.iter().map(|n| Dim::Known(*n)).collect();
    let ceil = cx.int_attr("ceil_mode").unwrap_or(0) != 0;
    let mut out = vec![x[0].clone(), x[1].clone()];
    out.extend(spatial(cx, &x[2..], &kernel, ceil)?);
    Ok(vec![Some(out.clone()), Some(out)])
}

fn global_pool(cx: &Cx) -> Inferred {
    let Some(x) = image(cx)? else { return Ok(vec![None]) };
    Ok(vec![Some(
        unknown_spatial(x, x[1].clone())
            .into_iter()
            .enumerate()
            .map(|(k, d)| if k >= 2 { Dim::Known(1) } else { d })
            .collect(),
    )])
}

/// `RoiAlign` and `MaxRoiPool` pool each region of `rois` `[num_rois, ...]` of `X` `[N, C, H, W]`
/// to `[num_rois, C, h, w]`: `output_height` and `output_width` (1 each by default), or
/// `pooled_shape`.
fn region_pool(cx: &Cx) -> Inferred {
    let (Some(x), Some(rois)) = (cx.dims(0), cx.dims(1)) else { return Ok(vec![None]) };
    if x.len() != 4 || rois.len() != 2 {
        return Ok(vec![None]);
    }
    let (h, w) = if cx.op() == "MaxRoiPool" {
        match cx.ints_attr("pooled_shape") {
            Some([h, w]) => (Dim::Known(*h), Dim::Known(*w)),
            _ => (Dim::Unknown, Dim::Unknown),
        }
    } else {
        let size = |name: &str| Dim::Known(cx.int_attr(name).unwrap_or(1));
        (size("output_height"), size("output_width"))
    };
    Ok(vec![Some(vec![rois[0].clone(), x[1].clone(), h, w])])
}

/// `Col2Im` folds `[N, C * prod(block_shape), L]` into `[N, C, *image_shape]`.
fn col2im(cx: &Cx) -> Inferred {
    let Some(image) = cx.ints(1) else { return Ok(vec![None]) };
    let Some(x) = cx.dims(0).filter(|d| d.len() == 3) else { return Ok(vec![None]) };
    let block: Option<i64> = cx.ints(2).and_then(|b| b.iter().try_fold(1i64, |p, n| p.checked_mul(*n)));
    let channels = match (&x[1], block) {
        (Dim::Known(c), Some(b)) if b > 0 && c % b == 0 => Dim::Known(c / b),
        _ => Dim::Unknown,
    };
    let mut out = vec![x[0].clone(), channels];
    out.extend(image.iter().map(|n| Dim::Known(*n)));
    Ok(vec![Some(out)])
}

fn unknown_spatial(x: &[Dim], channels: Dim) -> Vec<Dim> {
    let mut out = vec![x[0].clone(), channels];
    out.extend(std::iter::repeat_n(Dim::Unknown, x.len() - 2));
    out
}

/// Attribute `name`, of `len` entries for an input of `n` spatial dimensions, or `default` for
/// each when it is left out.
fn per_axis(cx: &Cx, name: &str, default: i64, len: usize, n: usize) -> Result<Vec<i64>, Violation> {
    match cx.ints_attr(name) {
        None => Ok(vec![default; len]),
        Some(v) if v.len() == len => Ok(v.to_vec()),
        Some(v) => Err(cx.violation(
            format!("`{}`'s `{name}` {v:?} has {} entries, but the input has {n} spatial dimensions", cx.op(), v.len()),
            format!("give `{name}` {len} entries"),
        )),
    }
}

/// The output's spatial dimensions, from ONNX's formula for `auto_pad`, `pads`, `strides` and
/// `dilations`.
fn spatial(cx: &Cx, input: &[Dim], kernel: &[Dim], ceil: bool) -> Result<Vec<Dim>, Violation> {
    let n = input.len();
    let strides = per_axis(cx, "strides", 1, n, n)?;
    let dilations = per_axis(cx, "dilations", 1, n, n)?;
    let pads = per_axis(cx, "pads", 0, 2 * n, n)?;
    let auto_pad = cx.str_attr("auto_pad").unwrap_or("NOTSET");
    let mut out = Vec::with_capacity(n);
    for j in 0..n {
        let (Dim::Known(size), Dim::Known(k)) = (&input[j], &kernel[j]) else {
            out.push(Dim::Unknown);
            continue;
        };
        let (s, d) = (strides[j].max(1), dilations[j].max(1));
        // Saturating: attributes may be any int64, and a result past them is not a size anyway.
        let reach = d.saturating_mul(k.saturating_sub(1)).saturating_add(1);
        let length = match auto_pad {
            "SAME_UPPER" | "SAME_LOWER" => size.saturating_add(s - 1) / s,
            "VALID" => size.saturating_sub(reach).saturating_add(s) / s,
            _ => {
                let padded = size.saturating_add(pads[j]).saturating_add(pads[j + n]).saturating_sub(reach);
                if padded < 0 {
                    -1
                } else if ceil {
                    // A last window that would start in the end padding is dropped.
                    let l = padded.saturating_add(s - 1) / s + 1;
                    if (l - 1).saturating_mul(s) >= size.saturating_add(pads[j]) {
                        l - 1
                    } else {
                        l
                    }
                } else {
                    padded / s + 1
                }
            }
        };
        if length < 1 {
            return Err(cx.violation(
                format!(
                    "`{}`'s kernel reaches {reach} along spatial axis {j}, more than {} (padded) gives",
                    cx.op(),
                    cx.gave(0)
                ),
                "use a smaller kernel or dilation, or pad the input",
            ));
        }
        out.push(Dim::Known(length));
    }
    Ok(out)
}
