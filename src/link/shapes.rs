//! One call of a scripted translation, checked node by node: the body linked for the call
//! (`serve`'s answer to a call request) is walked in order with what the exporter knows of
//! each given input (element type and dimensions, symbolic ones by name), and each ONNX node
//! is checked as a trace checks its op calls: its inputs' element types against its schema
//! (E0601), its shapes against its operator's rules (`sema::shapes`, E0907). What the call
//! returns is then compared with what PyTorch computes for it, when that is known (E0908).
//!
//! A linked body has no spans: its nodes carry their `.onnxs` line in `onnxsc.source`, and a
//! diagnostic names it in a note. Subgraphs are not entered: `If` and `Loop` give outputs of
//! unknown shape, as any operator without a rule does, and an unknown is never an error.

use crate::diagnostics::{codes, Diagnostic};
use crate::ir::{Attr, AttrValue};
use crate::onnx::metadata::recorded_source;
use crate::onnx::tensor::{elements, Elements, Tensor, TensorData};
use crate::onnx::{attribute_kind, AttrType, ElemType};
use crate::proto::onnx::{type_proto, AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto};
use crate::schema::{normalize_domain, registry, Resolution};
use crate::sema::infer::{self, AttrFacts, NodeFacts, Ty};
use crate::sema::shapes::{self, InputFacts, Shape, ShapeCall, MAX_KNOWN_INTS};
use crate::sema::value::{Dim, GraphType};
use crate::trace::facts::{ArgFact, Expected};
use crate::trace::reference;
use std::collections::HashMap;

/// What a call of a linked body gives and expects.
pub struct CallTypes<'a> {
    /// Each given input of the body's graph, by name, as the exporter describes it (an
    /// `ArgFact::Tensor`; an input not named here is unknown).
    pub inputs: &'a [(String, ArgFact)],
    /// What PyTorch computes for the call.
    pub expect: Option<&'a Expected>,
    /// The translation's name and where it is defined (`file:line:column`), for messages.
    pub function: &'a str,
    pub defined_at: Option<&'a str>,
}

/// What the body returns for the call, output by output; or the first contradiction, as a
/// diagnostic whose note says where in the source it is.
pub fn check(model: &ModelProto, call: &CallTypes) -> Result<Vec<GraphType>, Box<Diagnostic>> {
    let Some(graph) = model.graph.as_ref() else { return Ok(Vec::new()) };
    let versions: HashMap<&str, i64> =
        model.opset_import.iter().map(|o| (normalize_domain(o.domain()), o.version.unwrap_or(1))).collect();
    let mut values = Values::default();
    for (name, fact) in call.inputs {
        match fact {
            ArgFact::Tensor { elem, shape, sequence } => {
                let ty = elem.map(Ty::Elem).map(|t| if *sequence { Ty::seq(Some(t)) } else { t });
                let dims = if *sequence { None } else { shape.clone() };
                values.known.insert(name.clone(), Known { ty, dims, ..Known::default() });
            }
            // A sequence the exporter makes of a list of tensors, known item by item.
            ArgFact::List { items, .. } => {
                let tensors: Option<Vec<(Option<ElemType>, Shape)>> = items
                    .iter()
                    .map(|i| match i {
                        ArgFact::Tensor { elem, shape, sequence: false } => Some((*elem, shape.clone())),
                        _ => None,
                    })
                    .collect();
                let Some(tensors) = tensors else { continue };
                let elem =
                    tensors.first().and_then(|(e, _)| *e).filter(|e| tensors.iter().all(|(t, _)| *t == Some(*e)));
                let known = Known {
                    ty: Some(Ty::seq(elem.map(Ty::Elem))),
                    items: Some(tensors.into_iter().map(|(_, s)| s).collect()),
                    ..Known::default()
                };
                values.known.insert(name.clone(), known);
            }
            ArgFact::Value(_) => {}
        }
    }
    for t in &graph.initializer {
        values.known.insert(t.name().to_string(), initializer(t));
    }
    for node in &graph.node {
        let version = versions.get(normalize_domain(node.domain())).copied().unwrap_or(1);
        values
            .node(node, version)
            .map_err(|d| Box::new(located(*d, recorded_source(&node.metadata_props), call.function)))?;
    }
    let returns: Vec<GraphType> = graph.output.iter().map(|o| values.graph_type(o.name())).collect();
    if let Some(d) = call.expect.and_then(|e| reference::mismatch(call.function, &returns, e)) {
        return Err(Box::new(located(d, call.defined_at, call.function)));
    }
    Ok(returns)
}

/// What the walk knows of one value.
#[derive(Default)]
struct Known {
    ty: Option<Ty>,
    dims: Shape,
    /// Its values, when it is a small integer tensor the walk can follow.
    ints: Option<Vec<i64>>,
    /// Each tensor's dimensions, when it is a sequence the call gives item by item.
    items: Option<Vec<Shape>>,
}

#[derive(Default)]
struct Values {
    known: HashMap<String, Known>,
}

impl Values {
    /// Checks one node and records what it computes.
    fn node(&mut self, node: &NodeProto, version: i64) -> Result<(), Box<Diagnostic>> {
        let domain = node.domain();
        let op = node.op_type();
        let outputs = node.output.len();
        let types: Vec<Option<&Ty>> =
            node.input.iter().map(|i| self.known.get(i).and_then(|k| k.ty.as_ref())).collect();
        let checked = match registry().resolve(domain, op, version) {
            Resolution::Found(schema) => Some(
                infer::check_call(schema, &types, outputs)
                    .map_err(|c| Diagnostic::error(codes::TYPE_MISMATCH, 0, c.message.clone()).help(c.help_text()))?,
            ),
            _ => None,
        };
        let facts = ProtoNode { node, types: &types };
        let tys = infer::node_outputs(domain, op, version, &facts, outputs, checked);
        let (shapes, mut ints) = if normalize_domain(domain).is_empty() {
            let inputs = self.shape_facts(node);
            let attrs: Vec<Attr> = node.attribute.iter().filter_map(attr).collect();
            let call = ShapeCall { op, domain: "", version, inputs: &inputs, attrs: &attrs, outputs };
            let shapes = shapes::infer(&call)
                .map_err(|v| Box::new(Diagnostic::error(codes::SHAPE_MISMATCH, 0, v.message).help(v.help)))?;
            let ints = shapes::propagated(op, &inputs, &attrs, &shapes);
            (shapes, ints)
        } else {
            (vec![None; outputs], None)
        };
        for (k, name) in node.output.iter().enumerate() {
            let known = Known {
                ty: tys.get(k).cloned().flatten(),
                dims: shapes.get(k).cloned().flatten(),
                ints: if k == 0 { ints.take() } else { None },
                items: None,
            };
            self.known.insert(name.clone(), known);
        }
        Ok(())
    }

    /// What shape inference knows of each of a node's inputs, in order.
    fn shape_facts(&self, node: &NodeProto) -> Vec<Option<InputFacts>> {
        let mut out: Vec<Option<InputFacts>> = node
            .input
            .iter()
            .map(|name| {
                (!name.is_empty()).then(|| {
                    let known = self.known.get(name);
                    InputFacts {
                        name: name.clone(),
                        elem: known.and_then(|k| elem_of(k.ty.as_ref())),
                        dims: known.and_then(|k| k.dims.clone()),
                        ints: known.and_then(|k| k.ints.clone()),
                        items: known.and_then(|k| k.items.clone()),
                    }
                })
            })
            .collect();
        while out.last().is_some_and(Option::is_none) {
            out.pop();
        }
        out
    }

    /// What the walk knows of a graph output.
    fn graph_type(&self, name: &str) -> GraphType {
        match self.known.get(name) {
            Some(Known { ty: Some(Ty::Seq(inner)), .. }) => GraphType::Sequence { elem: elem_of(inner.as_deref()) },
            Some(k) => GraphType::Tensor { elem: elem_of(k.ty.as_ref()), shape: k.dims.clone() },
            None => GraphType::Tensor { elem: None, shape: None },
        }
    }
}

/// A node, as `infer::node_outputs` asks about it.
struct ProtoNode<'a> {
    node: &'a NodeProto,
    types: &'a [Option<&'a Ty>],
}

impl NodeFacts for ProtoNode<'_> {
    fn input(&self, i: usize) -> Option<&Ty> {
        self.types.get(i).copied().flatten()
    }

    fn input_count(&self) -> usize {
        self.types.len()
    }

    fn attr(&self, name: &str) -> Option<AttrFacts> {
        let a = self.node.attribute.iter().find(|a| a.name() == name)?;
        Some(match attribute_kind(a) {
            Some(AttrType::Int) => AttrFacts::Int(a.i()),
            Some(AttrType::Tensor) => match a.t.as_ref().and_then(|t| ElemType::from_code(t.data_type().into())) {
                Some(elem) => AttrFacts::Tensor(elem),
                None => AttrFacts::Other,
            },
            Some(AttrType::Graph) => AttrFacts::Graph(a.g.as_ref().map(declared_outputs).unwrap_or_default()),
            _ => AttrFacts::Other,
        })
    }

    fn first_attr(&self) -> Option<&str> {
        self.node.attribute.first().map(AttributeProto::name)
    }
}

/// The element types a subgraph declares for its outputs.
fn declared_outputs(g: &GraphProto) -> Vec<Option<Ty>> {
    g.output
        .iter()
        .map(|o| match o.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(type_proto::Value::TensorType(t)) => ElemType::from_code(t.elem_type().into()).map(Ty::Elem),
            _ => None,
        })
        .collect()
}

fn elem_of(ty: Option<&Ty>) -> Option<ElemType> {
    match ty {
        Some(Ty::Elem(e)) => Some(*e),
        _ => None,
    }
}

/// An initializer: its type and dimensions, and its values when it is a short integer list.
fn initializer(t: &TensorProto) -> Known {
    let tensor = tensor(t);
    Known {
        ty: tensor.as_ref().map(|t| Ty::Elem(t.elem)),
        dims: Some(t.dims.iter().map(|d| Dim::Known(*d)).collect()),
        ints: tensor.and_then(|t| match t.data {
            TensorData::Ints(v) if v.len() <= MAX_KNOWN_INTS => Some(v),
            _ => None,
        }),
        items: None,
    }
}

/// An attribute as the shape rules read it; `None` for a kind they do not (graphs).
fn attr(a: &AttributeProto) -> Option<Attr> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let value = match attribute_kind(a)? {
        AttrType::Int => AttrValue::Int(a.i()),
        AttrType::Float => AttrValue::Float(a.f()),
        AttrType::String => AttrValue::Str(text(a.s())),
        AttrType::Ints => AttrValue::Ints(a.ints.clone()),
        AttrType::Floats => AttrValue::Floats(a.floats.clone()),
        AttrType::Strings => AttrValue::Strs(a.strings.iter().map(|s| text(s)).collect()),
        AttrType::Tensor => AttrValue::Tensor(tensor(a.t.as_ref()?)?),
        _ => return None,
    };
    Some(Attr { name: a.name().to_string(), value })
}

/// A tensor's type and dimensions, with its elements where they are integers or floats (what
/// the shape rules and the values followed read); other elements are left out.
fn tensor(t: &TensorProto) -> Option<Tensor> {
    let elem = ElemType::from_code(t.data_type().into())?;
    let data = match elements(t) {
        Some(Elements::Signed(v)) if elem.is_integer() => TensorData::Ints(v),
        Some(Elements::Float(v)) if elem == ElemType::Float => TensorData::Floats(v),
        Some(Elements::Double(v)) if elem == ElemType::Double => TensorData::Doubles(v),
        _ => TensorData::Raw(Vec::new()),
    };
    Some(Tensor { elem, dims: t.dims.clone(), data })
}

/// `d` with a note of where it is in the source, and of the translation it is in.
fn located(d: Diagnostic, at: Option<&str>, function: &str) -> Diagnostic {
    match at {
        Some(at) => d.note(format!("at {at}, in `{function}`")),
        None => d.note(format!("in `{function}`")),
    }
}
