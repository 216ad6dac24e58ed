//! What a trace knows of an op call's inputs for shape inference (`sema::shapes`): each graph
//! value's dimensions (the call's facts for its inputs, then what inference gave each node's
//! outputs), and the values of small integer tensors, which a `Reshape`'s `shape` or a
//! `Squeeze`'s `axes` usually is, whether written as Python values or computed from shapes
//! (`op.Shape(x)` of a known shape, a `Concat` of known parts: `sema::shapes::values`).

use crate::ir::Dim;
use crate::onnx::tensor::TensorData;
use crate::sema::shapes::{InputFacts, MAX_KNOWN_INTS};
use crate::sema::value::{GraphType, PyValue};
use std::collections::HashMap;

/// The values of the integer graph values the trace knows, by name.
pub(super) type KnownInts = HashMap<String, Vec<i64>>;

/// What the call knows of one input.
pub(super) fn input_facts(v: &PyValue, known: &KnownInts) -> InputFacts {
    match v {
        PyValue::Graph(g) => InputFacts {
            name: g.name.clone(),
            elem: g.elem(),
            dims: g.shape().map(<[Dim]>::to_vec),
            ints: known.get(&g.name).cloned(),
            items: g.items().map(<[_]>::to_vec),
        },
        PyValue::List(items) => {
            let ints = python_ints(v);
            // A list mixing values and tensors becomes a Concat of 1-element parts.
            let length = items.iter().all(
                |i| !matches!(i, PyValue::Graph(g) if g.shape() != Some(&[]) && g.shape() != Some(&[Dim::Known(1)])),
            );
            InputFacts {
                name: String::new(),
                elem: None,
                dims: length.then(|| vec![Dim::Known(items.len() as i64)]),
                ints: ints.or_else(|| concat_known(items.items(), known)),
                // A list of tensors becomes a sequence where the operator takes one.
                items: items
                    .iter()
                    .map(|i| match i {
                        PyValue::Graph(g) if matches!(g.ty, GraphType::Tensor { .. }) => {
                            Some(g.shape().map(<[Dim]>::to_vec))
                        }
                        _ => None,
                    })
                    .collect(),
            }
        }
        PyValue::Tensor(t) => InputFacts {
            name: String::new(),
            elem: Some(t.elem),
            dims: Some(t.dims.iter().map(|d| Dim::Known(*d)).collect()),
            ints: python_ints(v),
            items: None,
        },
        PyValue::None => InputFacts::default(),
        _ => InputFacts { dims: Some(Vec::new()), ints: python_ints(v), ..InputFacts::default() },
    }
}

/// The integers a Python value (made a constant) holds, flattened.
pub(super) fn python_ints(v: &PyValue) -> Option<Vec<i64>> {
    let out = match v {
        PyValue::Int(i) => vec![i64::try_from(*i).ok()?],
        PyValue::List(items) => items
            .iter()
            .map(|i| if let PyValue::Int(n) = i { i64::try_from(*n).ok() } else { None })
            .collect::<Option<_>>()?,
        PyValue::Tensor(t) if t.elem.is_integer() => match &t.data {
            TensorData::Ints(v) => v.clone(),
            _ => return None,
        },
        _ => return None,
    };
    (out.len() <= MAX_KNOWN_INTS).then_some(out)
}

/// A list of ints and known 1-element tensors, concatenated.
fn concat_known(items: &[PyValue], known: &KnownInts) -> Option<Vec<i64>> {
    let mut out = Vec::new();
    for i in items {
        match i {
            PyValue::Graph(g) => out.extend(known.get(&g.name)?),
            other => out.extend(python_ints(other)?),
        }
    }
    (out.len() <= MAX_KNOWN_INTS).then_some(out)
}
