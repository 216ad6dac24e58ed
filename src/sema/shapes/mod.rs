//! Shape inference for one op call, with ONNX's semantics: from what the call knows of each
//! input (its dimensions, symbolic ones by name, and the values of small constant integer
//! inputs such as a `Reshape`'s `shape`), the dimensions of each output; or the operator's own
//! constraint that this call violates, said in terms of what it gave ("`Gemm` needs a rank-2
//! `A`; this call gives float32[2, 5, 4] (`self`)").
//!
//! Only contradictions between facts are violations. A dimension nobody knows stays unknown,
//! a symbolic dimension is compared as a symbol (`s0` equals only `s0`), and an operator without
//! a rule here gives outputs of unknown shape: an unknown is never an error, so that a right
//! translation never fails for lack of a rule. docs/shapes.md lists the operators covered.
//!
//! The rules are split by family: [`broadcast`] (elementwise and broadcasting operators),
//! [`layout`] (operators that move, index or resize dimensions), [`linalg`] (`MatMul`, `Gemm`,
//! `Einsum`, `Det`), [`conv`] (convolution and pooling), [`reduce`] (reductions),
//! [`recurrent`] (`LSTM`, `GRU`, `RNN`) and [`sequence`] (the sequence operators).

mod broadcast;
mod conv;
mod layout;
pub use layout::shape_range;
mod linalg;
mod recurrent;
mod reduce;
mod sequence;
pub use sequence::sequence_items;
mod values;
pub use values::{propagated, MAX_KNOWN_INTS};
#[cfg(test)]
mod tests;

use crate::ir::{Attr, AttrValue, Dim};
use crate::onnx::ElemType;

/// The dimensions of a value: `None` when not even its rank is known.
pub type Shape = Option<Vec<Dim>>;

/// What a call knows of one of its inputs.
#[derive(Clone, Debug, Default)]
pub struct InputFacts {
    /// Its name in the translation (`self`, `tmp_3`), for messages.
    pub name: String,
    pub elem: Option<ElemType>,
    pub dims: Shape,
    /// Its values, flattened, when it is a constant integer tensor (a shape, axes, sizes).
    pub ints: Option<Vec<i64>>,
    /// The dimensions of each tensor, when it is a sequence the call knows item by item.
    pub items: Option<Vec<Shape>>,
}

/// One op call, as far as its shapes go.
pub struct ShapeCall<'a> {
    pub op: &'a str,
    /// `""` for ONNX's own operators; the rules cover only those.
    pub domain: &'a str,
    /// The opset version the call's operator comes from.
    pub version: i64,
    /// Each formal input of the schema in order (variadic ones each in turn); `None` where the
    /// call leaves an optional input out.
    pub inputs: &'a [Option<InputFacts>],
    pub attrs: &'a [Attr],
    pub outputs: usize,
}

/// An operator's constraint that a call violates.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub message: String,
    pub help: String,
}

pub type Inferred = Result<Vec<Shape>, Violation>;

/// The shape of each output of `call`, or the constraint it violates.
pub fn infer(call: &ShapeCall) -> Inferred {
    if !call.domain.is_empty() {
        return Ok(unknown(call.outputs));
    }
    let cx = Cx { call };
    let shapes = broadcast::infer(&cx)
        .or_else(|| layout::infer(&cx))
        .or_else(|| linalg::infer(&cx))
        .or_else(|| conv::infer(&cx))
        .or_else(|| reduce::infer(&cx))
        .or_else(|| recurrent::infer(&cx))
        .or_else(|| sequence::infer(&cx))
        .unwrap_or_else(|| Ok(unknown(call.outputs)))?;
    // A rule may say less than the call has outputs (an optional output it does not cover).
    let mut shapes = shapes;
    shapes.resize(call.outputs, None);
    shapes.truncate(call.outputs);
    Ok(shapes)
}

fn unknown(n: usize) -> Vec<Shape> {
    vec![None; n]
}

/// A rule's view of the call.
struct Cx<'a> {
    call: &'a ShapeCall<'a>,
}

impl Cx<'_> {
    fn op(&self) -> &str {
        self.call.op
    }

    fn input(&self, i: usize) -> Option<&InputFacts> {
        self.call.inputs.get(i).and_then(Option::as_ref)
    }

    fn dims(&self, i: usize) -> Option<&[Dim]> {
        self.input(i).and_then(|f| f.dims.as_deref())
    }

    /// The values of constant integer input `i`.
    fn ints(&self, i: usize) -> Option<&[i64]> {
        self.input(i).and_then(|f| f.ints.as_deref())
    }

    fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.call.attrs.iter().find(|a| a.name == name).map(|a| &a.value)
    }

    fn int_attr(&self, name: &str) -> Option<i64> {
        match self.attr(name) {
            Some(AttrValue::Int(i)) => Some(*i),
            _ => None,
        }
    }

    fn ints_attr(&self, name: &str) -> Option<&[i64]> {
        match self.attr(name) {
            Some(AttrValue::Ints(v)) => Some(v),
            _ => None,
        }
    }

    fn str_attr(&self, name: &str) -> Option<&str> {
        match self.attr(name) {
            Some(AttrValue::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// Input `i` in words: "float32[2, 5, 4] (`self`)".
    fn gave(&self, i: usize) -> String {
        self.input(i).map(describe).unwrap_or_else(|| "nothing".into())
    }

    fn violation(&self, message: String, help: impl Into<String>) -> Violation {
        Violation { message, help: help.into() }
    }

    /// `axis` of a tensor of rank `rank` made non-negative, or the violation of its range
    /// (`what` names the attribute or input that holds it).
    fn axis(&self, axis: i64, rank: usize, what: &str) -> Result<usize, Violation> {
        let r = rank as i64;
        if axis < -r || axis >= r {
            return Err(self.violation(
                format!("`{}`'s `{what}` is {axis}, outside [{}, {}] for rank {rank}", self.op(), -r, r - 1),
                format!("give an axis between {} and {}", -r, r - 1),
            ));
        }
        Ok(if axis < 0 { (axis + r) as usize } else { axis as usize })
    }

    /// [`Cx::axis`] for each of `axes`, which must not repeat.
    fn axes(&self, axes: &[i64], rank: usize, what: &str) -> Result<Vec<usize>, Violation> {
        let mut out = Vec::with_capacity(axes.len());
        for a in axes {
            let k = self.axis(*a, rank, what)?;
            if out.contains(&k) {
                return Err(self.violation(
                    format!("`{}`'s `{what}` names axis {k} twice ({axes:?})", self.op()),
                    "name each axis once",
                ));
            }
            out.push(k);
        }
        Ok(out)
    }
}

/// A value in words: its element type and dimensions, and its name.
pub fn describe(f: &InputFacts) -> String {
    let ty = type_text(f.elem, f.dims.as_deref());
    if f.name.is_empty() {
        ty
    } else {
        format!("{ty} (`{}`)", f.name)
    }
}

/// `float32[2, s0]`; `tensor` for an unknown element type, `[...]` for an unknown rank.
pub fn type_text(elem: Option<ElemType>, dims: Option<&[Dim]>) -> String {
    format!("{}{}", elem.map_or("tensor", ElemType::numpy_name), dims.map_or("[...]".into(), dims_text))
}

/// `[2, s0, ?]`.
pub fn dims_text(dims: &[Dim]) -> String {
    let items: Vec<String> = dims.iter().map(dim_text).collect();
    format!("[{}]", items.join(", "))
}

pub fn dim_text(d: &Dim) -> String {
    match d {
        Dim::Known(n) => n.to_string(),
        Dim::Symbolic(s) => s.to_string(),
        Dim::Unknown => "?".into(),
    }
}

/// Whether two dimensions are certainly different: only two known numbers are (two symbols may
/// name one number).
pub fn differ(a: &Dim, b: &Dim) -> bool {
    matches!((a, b), (Dim::Known(x), Dim::Known(y)) if x != y)
}

/// The product of dimensions, when each is known.
fn product(dims: &[Dim]) -> Option<i64> {
    dims.iter().try_fold(1i64, |p, d| match d {
        Dim::Known(n) => p.checked_mul(*n),
        _ => None,
    })
}

/// The dimension two dimensions that must be equal have: the known one, or the shared symbol.
fn unify(a: &Dim, b: &Dim) -> Dim {
    match (a, b) {
        (Dim::Known(_), _) => a.clone(),
        (_, Dim::Known(_)) => b.clone(),
        (Dim::Symbolic(x), Dim::Symbolic(y)) if x == y => a.clone(),
        (Dim::Symbolic(_), Dim::Unknown) => a.clone(),
        (Dim::Unknown, Dim::Symbolic(_)) => b.clone(),
        _ => Dim::Unknown,
    }
}
