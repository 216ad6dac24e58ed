//! PyTorch's answer as the reference: when the exporter's FX node is known, the call's facts
//! say what PyTorch computes for it (each output's element type and dimensions), and what the
//! translation returns for the call must not contradict it. A contradiction would give a wrong
//! model: the exporter declares PyTorch's type on the value the translation computes, so a
//! float32 mean where PyTorch gives float16 is a model that says float16 and computes float32.
//!
//! Only certain contradictions are errors: an element type or a rank both sides know, and a
//! dimension both know as a number. A symbol is never compared (PyTorch may have proved two
//! symbols equal where the trace keeps both), nor is anything the trace does not know.

use super::facts::Expected;
use crate::diagnostics::{codes, Diagnostic};
use crate::sema::shapes::{differ, dim_text, type_text};
use crate::sema::value::GraphType;
use crate::source::{FileId, Span};

/// The first contradiction between what the translation `name` returns and `expected`,
/// located at the translation.
pub(super) fn compare(
    returns: &[GraphType],
    expected: &Expected,
    file: FileId,
    span: Span,
    name: &str,
) -> Result<(), Box<Diagnostic>> {
    match mismatch(name, returns, expected) {
        Some(d) => Err(Box::new(Diagnostic { file, ..d }.primary(span, "this translation"))),
        None => Ok(()),
    }
}

/// The first contradiction between what the translation `name` returns for a call and what
/// PyTorch computes for it (`expected`), as a diagnostic without a location.
pub fn mismatch(name: &str, returns: &[GraphType], expected: &Expected) -> Option<Diagnostic> {
    let what = contradiction(returns, expected)?;
    Some(Diagnostic::error(codes::REFERENCE_MISMATCH, 0, format!("`{name}` returns {what}")).help(format!(
        "return what `{}` computes for this call: cast or reshape the result, or fix the operation that changes it",
        expected.op
    )))
}

/// The first output whose element type, rank or a known dimension differs from PyTorch's, in
/// words: "float32[2] for this call, where PyTorch's `aten::mean.dim` gives float16[2]".
fn contradiction(returns: &[GraphType], expected: &Expected) -> Option<String> {
    // A translation may return PyTorch's list of tensors as one sequence: its tensors are
    // compared one by one, when the call knows them.
    if let [GraphType::Sequence { elem, items: Some(items) }] = returns {
        if items.len() != expected.outputs.len() {
            return Some(format!(
                "a sequence of {} tensors for this call, where PyTorch's `{}` gives {}",
                items.len(),
                expected.op,
                expected.outputs.len()
            ));
        }
        let tensors: Vec<GraphType> =
            items.iter().map(|shape| GraphType::Tensor { elem: *elem, shape: shape.clone() }).collect();
        return differing(&tensors, expected, "item");
    }
    differing(returns, expected, "output")
}

/// The first of `returns`' tensors that contradicts PyTorch's, in words; `what` names them in
/// a message ("output 1", "item 1").
fn differing(returns: &[GraphType], expected: &Expected, what: &str) -> Option<String> {
    for (k, (got, want)) in returns.iter().zip(&expected.outputs).enumerate() {
        let (GraphType::Tensor { elem, shape }, Some((want_elem, want_shape))) = (got, want) else { continue };
        let which = if expected.outputs.len() > 1 { format!(" ({what} {k})") } else { String::new() };
        let got = type_text(*elem, shape.as_deref());
        let wanted = type_text(*want_elem, want_shape.as_deref());
        let detail = match (elem.zip(*want_elem), shape.as_deref().zip(want_shape.as_deref())) {
            (Some((e, w)), _) if e != w => Some(String::new()),
            (_, Some((s, w))) if s.len() != w.len() => Some(format!(": rank {} against {}", s.len(), w.len())),
            (_, Some((s, w))) => s
                .iter()
                .zip(w)
                .position(|(a, b)| differ(a, b))
                .map(|j| format!(": dimension {j} is {} against {}", dim_text(&s[j]), dim_text(&w[j]))),
            _ => None,
        };
        if let Some(d) = detail {
            return Some(format!("{got}{which} for this call, where PyTorch's `{}` gives {wanted}{d}", expected.op));
        }
    }
    None
}
