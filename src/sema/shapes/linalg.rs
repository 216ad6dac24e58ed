//! `MatMul` (numpy's matmul: 1-D operands promoted, batch dimensions broadcast), `Gemm`
//! (rank-2 operands, optionally transposed, and a `C` broadcast to the product), `Einsum` (its
//! equation's labels) and `Det` (of a batch of square matrices).

use super::broadcast::{broadcast_pair, unidirectional};
use super::{differ, dim_text, Cx, Inferred};
use crate::ir::Dim;

pub(super) fn infer(cx: &Cx) -> Option<Inferred> {
    match cx.op() {
        "MatMul" => Some(matmul(cx)),
        "Gemm" => Some(gemm(cx)),
        "Einsum" => Some(einsum(cx)),
        "Det" => Some(det(cx)),
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

/// One subscript of an `Einsum` term: a letter, or the `...` of the dimensions it leaves unnamed.
#[derive(Clone, Copy, PartialEq)]
enum Label {
    Letter(char),
    Ellipsis,
}

/// The labels of a term (`"b...ij"`), or `None` for text that is not one (left to ONNX).
fn labels(term: &str) -> Option<Vec<Label>> {
    let mut out = Vec::new();
    let mut rest = term;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("...") {
            if out.contains(&Label::Ellipsis) {
                return None;
            }
            out.push(Label::Ellipsis);
            rest = after;
        } else if c.is_ascii_alphabetic() {
            out.push(Label::Letter(c));
            rest = &rest[1..];
        } else {
            return None;
        }
    }
    Some(out)
}

/// `Einsum`: each output dimension is its label's size, and the dimensions under `...` broadcast
/// together. Without `->` the output is the `...` dimensions, then the letters used once, in
/// ASCII order (ONNX's and numpy's). A label's sizes must agree, or be 1 (ONNX Runtime
/// broadcasts those).
fn einsum(cx: &Cx) -> Inferred {
    let Some(equation) = cx.str_attr("equation") else { return Ok(vec![None]) };
    let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation.as_str(), None),
    };
    let Some(terms) = lhs.split(',').map(labels).collect::<Option<Vec<_>>>() else { return Ok(vec![None]) };
    if terms.len() != cx.call.inputs.len() {
        return Err(cx.violation(
            format!(
                "`Einsum`'s equation `{equation}` has {} operands, but this call gives {} inputs",
                terms.len(),
                cx.call.inputs.len()
            ),
            "give one input per comma-separated term of the equation",
        ));
    }
    // Every size each letter is given, and the dimensions under `...` broadcast (`None`: some
    // input's rank is not known).
    let mut sizes: Vec<(char, Vec<Dim>)> = Vec::new();
    let mut ellipsis: Option<Vec<Dim>> = Some(Vec::new());
    for (i, term) in terms.iter().enumerate() {
        let letters = term.iter().filter(|l| **l != Label::Ellipsis).count();
        let dims = cx.dims(i);
        let under = match dims {
            Some(d) if d.len() < letters || (d.len() != letters && !term.contains(&Label::Ellipsis)) => {
                return Err(cx.violation(
                    format!(
                        "`Einsum`'s term `{}` names {letters} dimensions, but input {i} is {}",
                        lhs.split(',').nth(i).unwrap_or_default(),
                        cx.gave(i)
                    ),
                    "give the term one letter per dimension of its input, or `...` for the rest",
                ));
            }
            Some(d) => d.len() - letters,
            None => 0,
        };
        let mut at = 0;
        for label in term {
            match label {
                Label::Letter(c) => {
                    let d = dims.map_or(Dim::Unknown, |d| d[at].clone());
                    match sizes.iter_mut().find(|(l, _)| l == c) {
                        Some((_, seen)) => seen.push(d),
                        None => sizes.push((*c, vec![d])),
                    }
                    at += 1;
                }
                Label::Ellipsis => {
                    let (from, to) = (at, at + under);
                    at = to;
                    let (Some(d), Some(sofar)) = (dims, &ellipsis) else {
                        ellipsis = None;
                        continue;
                    };
                    ellipsis = Some(broadcast_pair(sofar, &d[from..to]).map_err(|(a, b)| {
                        cx.violation(
                            format!(
                                "`Einsum` cannot broadcast the `...` dimensions of {}: {} against {}",
                                cx.gave(i),
                                dim_text(&a),
                                dim_text(&b)
                            ),
                            "make the dimensions under `...` broadcastable: equal, or 1",
                        )
                    })?);
                }
            }
        }
    }
    let mut size_of = Vec::with_capacity(sizes.len());
    for (c, seen) in &sizes {
        let stretched = seen.iter().filter(|d| !matches!(d, Dim::Known(1))).collect::<Vec<_>>();
        if let Some((a, b)) = stretched.iter().zip(stretched.iter().skip(1)).find(|(a, b)| differ(a, b)) {
            return Err(cx.violation(
                format!(
                    "`Einsum`'s label `{c}` in `{equation}` is {} in one place and {} in another",
                    dim_text(a),
                    dim_text(b)
                ),
                "give a label one size wherever it appears (or 1, which broadcasts)",
            ));
        }
        let size = match stretched.iter().find(|d| matches!(d, Dim::Known(_))) {
            Some(known) => (*known).clone(),
            None if seen.iter().all(|d| *d == seen[0]) => seen[0].clone(),
            None => Dim::Unknown,
        };
        size_of.push((*c, size, seen.len()));
    }
    let output: Vec<Label> = match rhs {
        Some(r) => match labels(r) {
            Some(o) => o,
            None => return Ok(vec![None]),
        },
        None => {
            let mut once: Vec<char> = size_of.iter().filter(|(_, _, n)| *n == 1).map(|(c, _, _)| *c).collect();
            once.sort_unstable();
            let any_ellipsis = terms.iter().any(|t| t.contains(&Label::Ellipsis));
            any_ellipsis.then_some(Label::Ellipsis).into_iter().chain(once.into_iter().map(Label::Letter)).collect()
        }
    };
    let mut out = Vec::new();
    for label in output {
        match label {
            Label::Ellipsis => match &ellipsis {
                Some(d) => out.extend(d.iter().cloned()),
                None => return Ok(vec![None]),
            },
            Label::Letter(c) => match size_of.iter().find(|(l, _, _)| *l == c) {
                Some((_, size, _)) => out.push(size.clone()),
                None => return Ok(vec![None]),
            },
        }
    }
    Ok(vec![Some(out)])
}

/// `Det` of `[..., M, M]`: one determinant per matrix, `[...]`.
fn det(cx: &Cx) -> Inferred {
    let Some(dims) = cx.dims(0) else { return Ok(vec![None]) };
    let r = dims.len();
    if r < 2 || differ(&dims[r - 2], &dims[r - 1]) {
        return Err(cx.violation(
            format!("`Det` needs square matrices, [..., M, M]; this call gives {}", cx.gave(0)),
            "give a batch of square matrices",
        ));
    }
    Ok(vec![Some(dims[..r - 2].to_vec())])
}
