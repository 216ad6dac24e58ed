//! `MatMul` (numpy's matmul: 1-D operands promoted, batch dimensions broadcast) and `Gemm`
//! (rank-2 operands, optionally transposed, and a `C` broadcast to the product).

use super::broadcast::{broadcast_pair, unidirectional};
use super::{differ, dim_text, Cx, Inferred};

pub(super) fn infer(cx: &Cx) -> Option<Inferred> {
    match cx.op() {
        "MatMul" => Some(matmul(cx)),
        "Gemm" => Some(gemm(cx)),
        _ => None,
    }
}

fn matmul(cx: &Cx) -> Inferred {
    let (Some(a), Some(b)) = (cx.dims(0), cx.dims(1)) else { return Ok(vec![None]) };
    for (i, dims, name) in [(0, a, "A"), (1, b, "B")] {
        if dims.is_empty() {
            return Err(cx.violation(
                format!("`MatMul` needs `{name}` of rank 1 or more; this call gives {}", cx.gave(i)),
                "multiply a scalar with `Mul`",
            ));
        }
    }
    // A 1-D operand is a row (A) or a column (B), whose added dimension is removed after.
    let (a_rows, a_k) = if a.len() == 1 { (None, &a[0]) } else { (Some(&a[a.len() - 2]), &a[a.len() - 1]) };
    let (b_k, b_cols) = if b.len() == 1 { (&b[0], None) } else { (&b[b.len() - 2], Some(&b[b.len() - 1])) };
    if differ(a_k, b_k) {
        return Err(cx.violation(
            format!(
                "`MatMul` multiplies {} by {}: `A` has {} columns, `B` {} rows",
                cx.gave(0),
                cx.gave(1),
                dim_text(a_k),
                dim_text(b_k)
            ),
            "transpose an operand, or multiply the right ones",
        ));
    }
    let batch_a = &a[..a.len().saturating_sub(2)];
    let batch_b = &b[..b.len().saturating_sub(2)];
    let mut out = broadcast_pair(batch_a, batch_b).map_err(|(x, y)| {
        cx.violation(
            format!(
                "`MatMul` cannot broadcast the batch dimensions of {} and {}: {} against {}",
                cx.gave(0),
                cx.gave(1),
                dim_text(&x),
                dim_text(&y)
            ),
            "make the batch dimensions broadcastable: equal, or 1",
        )
    })?;
    out.extend(a_rows.cloned());
    out.extend(b_cols.cloned());
    Ok(vec![Some(out)])
}

fn gemm(cx: &Cx) -> Inferred {
    let (Some(a), Some(b)) = (cx.dims(0), cx.dims(1)) else { return Ok(vec![None]) };
    for (i, dims, name) in [(0, a, "A"), (1, b, "B")] {
        if dims.len() != 2 {
            return Err(cx.violation(
                format!("`Gemm` needs a rank-2 `{name}`; this call gives {}", cx.gave(i)),
                "use `MatMul`, which takes batches and 1-D operands, or reshape to 2-D",
            ));
        }
    }
    let trans_a = cx.int_attr("transA").unwrap_or(0) != 0;
    let trans_b = cx.int_attr("transB").unwrap_or(0) != 0;
    let (m, k_a) = if trans_a { (&a[1], &a[0]) } else { (&a[0], &a[1]) };
    let (k_b, n) = if trans_b { (&b[1], &b[0]) } else { (&b[0], &b[1]) };
    if differ(k_a, k_b) {
        return Err(cx.violation(
            format!(
                "`Gemm` multiplies {}{} by {}{}: {} against {} in the inner dimension",
                cx.gave(0),
                if trans_a { " transposed" } else { "" },
                cx.gave(1),
                if trans_b { " transposed" } else { "" },
                dim_text(k_a),
                dim_text(k_b)
            ),
            "set `transA`/`transB` to say which operand is transposed",
        ));
    }
    let out = vec![m.clone(), n.clone()];
    if let Some(c) = cx.dims(2) {
        unidirectional(c, &out).map_err(|(x, y)| {
            cx.violation(
                format!(
                    "`Gemm`'s `C` must broadcast to the product's {}; this call gives {}: {} against {}",
                    super::dims_text(&out),
                    cx.gave(2),
                    dim_text(&x),
                    dim_text(&y)
                ),
                "give `C` the product's shape, or 1 where it is stretched",
            )
        })?;
    }
    Ok(vec![Some(out)])
}
