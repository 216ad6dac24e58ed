//! Recurrent operators: `LSTM`, `GRU` and `RNN`. `X` is `[seq, batch, input]` (`[batch, seq,
//! input]` with `layout` 1); the outputs are the hidden state at every step, `Y`, and at the
//! last, `Y_h` (and `LSTM`'s last cell state, `Y_c`), per direction.

use super::{dims_text, Cx, Inferred};
use crate::ir::Dim;

pub(super) fn infer(cx: &Cx) -> Option<Inferred> {
    // The gates whose weights `W` and `R` stack along their dimension 1.
    let gates = match cx.op() {
        "LSTM" => 4,
        "GRU" => 3,
        "RNN" => 1,
        _ => return None,
    };
    Some(recurrent(cx, gates))
}

fn recurrent(cx: &Cx, gates: i64) -> Inferred {
    let Some(x) = cx.dims(0) else { return Ok(vec![None; 3]) };
    let op = cx.op();
    if x.len() != 3 {
        return Err(cx.violation(
            format!("`{op}` needs `X` of rank 3 ([seq, batch, input]); this call gives {}", cx.gave(0)),
            "reshape the input to [seq, batch, input] (or [batch, seq, input] with `layout=1`)",
        ));
    }
    let batch_first = cx.int_attr("layout").unwrap_or(0) != 0;
    let (seq, batch, input) = if batch_first { (&x[1], &x[0], &x[2]) } else { (&x[0], &x[1], &x[2]) };
    let directions = Dim::Known(if cx.str_attr("direction") == Some("bidirectional") { 2 } else { 1 });
    let hidden_size = cx.int_attr("hidden_size");
    // Without the attribute, the hidden size is `R`'s last dimension.
    let hidden = match hidden_size {
        Some(h) => Dim::Known(h),
        None => cx.dims(2).filter(|r| r.len() == 3).map_or(Dim::Unknown, |r| r[2].clone()),
    };
    if let Some(h) = hidden_size {
        let stacked = Dim::Known(gates.saturating_mul(h));
        for (i, name, last) in [(1, "W", input.clone()), (2, "R", Dim::Known(h))] {
            let Some(given) = cx.dims(i) else { continue };
            let expected = [directions.clone(), stacked.clone(), last];
            if given.len() != 3 || given.iter().zip(&expected).any(|(g, e)| super::differ(g, e)) {
                return Err(cx.violation(
                    format!(
                        "`{op}` with `hidden_size` {h} needs `{name}` {} ([directions, {gates} * hidden_size, {}]); this call gives {}",
                        dims_text(&expected),
                        if i == 1 { "input" } else { "hidden_size" },
                        cx.gave(i)
                    ),
                    "check `hidden_size` and `direction` against the weights",
                ));
            }
        }
    }
    let (y, last) = if batch_first {
        (vec![batch.clone(), seq.clone(), directions.clone(), hidden.clone()], vec![batch.clone(), directions, hidden])
    } else {
        (vec![seq.clone(), directions.clone(), batch.clone(), hidden.clone()], vec![directions, batch.clone(), hidden])
    };
    Ok(vec![Some(y), Some(last.clone()), Some(last)])
}
