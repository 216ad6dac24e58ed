//! What `check` can tell of an op call's shapes from its text alone: the shape rules
//! (`sema::shapes`) run with every input of unknown shape, and the values of the integer
//! literals the call writes (`op.Reshape(x, [-1, -1])`, `op.Expand(x, [-1, 4])`,
//! `transB=2`). A rule broken then is broken at every rank, for every call: E0907 before any
//! call is made. Script and trace-only translations alike.

use super::op_arguments::BoundAttribute;
use super::shapes::{self, InputFacts, ShapeCall};
use crate::diagnostics::{codes, Diagnostic};
use crate::ir::{Attr, AttrValue};
use crate::schema::OpSchema;
use crate::source::{FileId, Span};
use crate::syntax::ast::{Expr, ExprKind, UnaryOp};

/// The rule the call at `span` breaks whatever its inputs' shapes, as its diagnostic.
pub fn violation(
    file: FileId,
    schema: &OpSchema,
    version: i64,
    bound: (&[Option<&Expr>], &[BoundAttribute]),
    outputs: usize,
    span: Span,
) -> Option<Diagnostic> {
    let (bound_inputs, bound_attributes) = bound;
    if !schema.domain.is_empty() {
        return None;
    }
    let inputs: Vec<Option<InputFacts>> =
        bound_inputs.iter().map(|e| e.map(|e| InputFacts { ints: ints(e), ..InputFacts::default() })).collect();
    let attrs: Vec<Attr> = bound_attributes
        .iter()
        .filter_map(|(name, e, _)| Some(Attr { name: name.name.clone(), value: attribute(e)? }))
        .collect();
    let call = ShapeCall { op: &schema.name, domain: "", version, inputs: &inputs, attrs: &attrs, outputs };
    let v = shapes::infer(&call).err()?;
    Some(Diagnostic::error(codes::SHAPE_MISMATCH, file, v.message).primary(span, "for every call").help(v.help))
}

/// An integer literal, or a list or tuple of them, as the constant a call makes of it.
fn ints(e: &Expr) -> Option<Vec<i64>> {
    match &e.kind {
        ExprKind::List(items) | ExprKind::Tuple(items) => items.iter().map(int).collect(),
        _ => int(e).map(|i| vec![i]),
    }
}

fn int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(i) => i64::try_from(i.get()).ok(),
        ExprKind::UnaryOp { op: UnaryOp::Neg, operand } => int(operand).map(|i| -i),
        _ => None,
    }
}

/// An attribute written as a literal: an int, a list of ints, or a string.
fn attribute(e: &Expr) -> Option<AttrValue> {
    match &e.kind {
        ExprKind::List(_) | ExprKind::Tuple(_) => ints(e).map(AttrValue::Ints),
        ExprKind::Str(s) => Some(AttrValue::Str(s.clone())),
        _ => int(e).map(AttrValue::Int),
    }
}
