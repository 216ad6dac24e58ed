//! One call of a scripted translation, checked node by node: the body linked for the call
//! (`serve`'s answer to a call request) is walked in order with what the exporter knows of
//! each given input (element type and dimensions, symbolic ones by name), and each ONNX node
//! is checked as a trace checks its op calls: its inputs' element types against its schema
//! (E0601), its shapes against its operator's rules (`sema::shapes`, E0907). What the call
//! returns is then compared with what PyTorch computes for it, when that is known (E0908).
//!
//! A linked body has no spans: its nodes carry their `.onnxs` line in `onnxsc.source`, and a
//! diagnostic names it in a note.
//!
//! Subgraphs are entered. An `If` whose condition the walk knows (`Rank(self) == 0` of a
//! call's input) is the branch it takes: only that branch is checked, and its outputs are the
//! `If`'s. Otherwise both branches are walked without stopping at a contradiction, since
//! either may not run for this call, and the `If`'s outputs are what both agree on. A `Loop`'s
//! or `Scan`'s first trip is checked with what the node is given, when the call certainly
//! runs one; the body is then walked until what it carries stops changing (a dimension a trip
//! changes becomes unknown), for the node's outputs. An unknown is never an error.

use super::inline::{FreshNames, Inliner};
use super::library::{Libraries, Table};
use super::DEFAULT_MAX_NODES;
use crate::diagnostics::{codes, Diagnostic};
use crate::ir::{Attr, AttrValue};
use crate::onnx::metadata::recorded_source;
use crate::onnx::tensor::{elements, Elements, Tensor, TensorData};
use crate::onnx::{attribute_kind, AttrType, ElemType};
use crate::proto::onnx::{
    tensor_shape_proto::dimension::Value as DimValue, type_proto, AttributeProto, GraphProto, ModelProto, NodeProto,
    TensorProto, TypeProto,
};
use crate::schema::{normalize_domain, registry, Resolution};
use crate::sema::infer::{self, AttrFacts, NodeFacts, Ty};
use crate::sema::shapes::{self, InputFacts, Shape, ShapeCall, MAX_KNOWN_INTS};
use crate::sema::value::{Dim, GraphType};
use crate::trace::facts::{ArgFact, Expected};
use crate::trace::reference;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

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
    walk_model(model, call, Translations::All, None)
}

/// A model `onnxsc link` wrote, walked as a call is, with its graph inputs typed as the model
/// declares them: the nodes of the translations it calls (scripted ones, and the helpers of
/// trace-only ones) meet the types and shapes the model gives them. Only a node of a
/// translation, which carries its `.onnxs` line, stops the link: the exporter's own nodes are
/// the exporter's to get right, and one the rules refuse only loses what it computes.
///
/// A model linked in reference mode still calls its functions: each call is expanded as inline
/// mode would expand it and its body walked with what the call gives, once for each distinct
/// function, attributes and input facts (an exported model repeats the same layer many times).
pub fn check_model(model: &ModelProto) -> Result<(), Box<Diagnostic>> {
    let inputs: Vec<(String, ArgFact)> = model
        .graph
        .iter()
        .flat_map(|g| &g.input)
        .map(|i| (i.name().to_string(), declared_fact(i.r#type.as_ref())))
        .collect();
    let call = CallTypes { inputs: &inputs, expect: None, function: "", defined_at: None };
    let libraries = Libraries::new(Vec::new());
    let table = Table::build(model.functions.clone(), &libraries, false, &mut Vec::new());
    let mut inliner = Inliner::new(&table);
    inliner.max_nodes = DEFAULT_MAX_NODES;
    if let Some(graph) = &model.graph {
        inliner.know_tensors(graph);
    }
    let functions = FunctionCalls { inliner: RefCell::new(inliner), summaries: RefCell::default() };
    walk_model(model, &call, Translations::Sourced, Some(&functions)).map(drop)
}

/// The calls of a model's functions, expanded to be walked, and what each distinct call was
/// found to compute.
struct FunctionCalls<'t> {
    inliner: RefCell<Inliner<'t>>,
    summaries: RefCell<HashMap<String, Vec<Known>>>,
}

impl FunctionCalls<'_> {
    /// The nodes `node` expands to, when it calls one of the model's functions and its
    /// expansion stays within inline mode's limit on nodes (a call past it, which inline mode
    /// refuses with E0807, is left unchecked).
    fn expanded(&self, node: &NodeProto) -> Option<Vec<NodeProto>> {
        let mut graph = GraphProto { node: vec![node.clone()], ..GraphProto::default() };
        let mut names = FreshNames::of_graph(&graph);
        let mut inliner = self.inliner.borrow_mut();
        inliner.renew_budget();
        let before = inliner.calls;
        inliner.expand_graph(&mut graph, &mut names);
        (inliner.calls > before && inliner.overflow.is_none()).then_some(graph.node)
    }
}

/// Which nodes' contradictions stop a walk.
#[derive(Clone, Copy, PartialEq)]
enum Translations {
    /// Every node is a translation's (a linked call's body).
    All,
    /// Only nodes with an `onnxsc.source` are (a whole model).
    Sourced,
}

fn walk_model(
    model: &ModelProto,
    call: &CallTypes,
    stops: Translations,
    functions: Option<&FunctionCalls>,
) -> Result<Vec<GraphType>, Box<Diagnostic>> {
    let Some(graph) = model.graph.as_ref() else { return Ok(Vec::new()) };
    let versions: HashMap<&str, i64> =
        model.opset_import.iter().map(|o| (normalize_domain(o.domain()), o.version.unwrap_or(1))).collect();
    let walk = Walk { versions: &versions, function: call.function, stops, functions };
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
    values.graph(&graph.node, &walk, Runs::Certainly)?;
    let returns: Vec<GraphType> = graph.output.iter().map(|o| values.graph_type(o.name())).collect();
    if let Some(d) = call.expect.and_then(|e| reference::mismatch(call.function, &returns, e)) {
        return Err(Box::new(located(d, call.defined_at, call.function)));
    }
    Ok(returns)
}

/// What the walk knows of one value.
#[derive(Clone, Debug, Default, PartialEq)]
struct Known {
    ty: Option<Ty>,
    dims: Shape,
    /// Its values, when it is a small integer tensor the walk can follow (a boolean's as 0
    /// and 1).
    ints: Option<Vec<i64>>,
    /// Each tensor's dimensions, when it is a sequence the call gives item by item.
    items: Option<Vec<Shape>>,
}

impl Known {
    /// What holds of both `self` and `other`: a value that may be either.
    fn merge(&self, other: &Known) -> Known {
        let dims = match (&self.dims, &other.dims) {
            (Some(a), Some(b)) if a.len() == b.len() => {
                Some(a.iter().zip(b).map(|(x, y)| if x == y { x.clone() } else { Dim::Unknown }).collect())
            }
            _ => None,
        };
        Known {
            ty: same(&self.ty, &other.ty),
            dims,
            ints: same(&self.ints, &other.ints),
            items: same(&self.items, &other.items),
        }
    }
}

/// `a` when it is `b`: what two values both have.
fn same<T: Clone + PartialEq>(a: &Option<T>, b: &Option<T>) -> Option<T> {
    if a == b {
        a.clone()
    } else {
        None
    }
}

/// What every node of a walk shares.
struct Walk<'a, 'f> {
    versions: &'a HashMap<&'a str, i64>,
    /// The translation's name, for messages (empty for a whole model).
    function: &'a str,
    stops: Translations,
    /// A model's functions, whose calls are walked through (a reference-mode model).
    functions: Option<&'a FunctionCalls<'f>>,
}

/// Whether a walk's nodes certainly run for this call: a contradiction stops the check only
/// where they do. A branch the call may not take, or a loop body it may run no time, only
/// loses what its nodes would compute.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Runs {
    Certainly,
    Maybe,
}

/// A `Loop` body is walked at most this many times before what it carries is given up as
/// unknown; each round only forgets, so real bodies settle in two or three.
const LOOP_ROUNDS: usize = 8;

#[derive(Default)]
struct Values {
    known: HashMap<String, Known>,
}

impl Values {
    /// Checks a graph's nodes in order and records what they compute.
    fn graph(&mut self, nodes: &[NodeProto], walk: &Walk, runs: Runs) -> Result<(), Box<Diagnostic>> {
        for node in nodes {
            self.located_node(node, walk, runs)?;
        }
        Ok(())
    }

    /// One node, with what its subgraphs and the function it calls compute. A contradiction
    /// stops the walk where the node certainly runs and is a translation's, located at the
    /// `.onnxs` line of the node it is in, however deeply nested; elsewhere the node's outputs
    /// are only unknown.
    fn located_node(&mut self, node: &NodeProto, walk: &Walk, runs: Runs) -> Result<(), Box<Diagnostic>> {
        let version = walk.versions.get(normalize_domain(node.domain())).copied().unwrap_or(1);
        if let Err(d) = self.node(node, version) {
            let source = recorded_source(&node.metadata_props);
            if runs == Runs::Certainly && (walk.stops == Translations::All || source.is_some()) {
                return Err(Box::new(located(*d, source, walk.function)));
            }
            for name in &node.output {
                self.known.insert(name.clone(), Known::default());
            }
            return Ok(());
        }
        if normalize_domain(node.domain()).is_empty() {
            match node.op_type() {
                "If" => self.branches(node, walk, runs)?,
                "Loop" => self.loop_body(node, walk, runs)?,
                // Opset 8's `Scan` has a batch axis and sequence lengths, and is not entered.
                "Scan" if version >= 9 => self.scan_body(node, walk, runs)?,
                _ => {}
            }
        } else if let Some(functions) = walk.functions {
            self.function_call(node, functions, walk, runs)?;
        }
        Ok(())
    }

    /// A call of one of the model's functions: its expanded body walked with what the call
    /// gives, or what the same call was found to compute before.
    fn function_call(
        &mut self,
        node: &NodeProto,
        functions: &FunctionCalls,
        walk: &Walk,
        runs: Runs,
    ) -> Result<(), Box<Diagnostic>> {
        let given: Vec<Known> = node.input.iter().map(|n| self.known.get(n).cloned().unwrap_or_default()).collect();
        // Whether the call certainly runs is part of it: a walk that may not run forgives.
        let key = format!("{:?}", (node.domain(), node.op_type(), node.overload(), &node.attribute, &given, runs));
        let summary = functions.summaries.borrow().get(&key).cloned();
        let results = match summary {
            Some(results) => results,
            None => {
                let Some(body) = functions.expanded(node) else { return Ok(()) };
                // A function sees only what its call gives it.
                let mut inner = Values::default();
                for (name, known) in node.input.iter().zip(given) {
                    inner.known.insert(name.clone(), known);
                }
                inner.graph(&body, walk, runs)?;
                let results: Vec<Known> =
                    node.output.iter().map(|o| inner.known.get(o).cloned().unwrap_or_default()).collect();
                functions.summaries.borrow_mut().insert(key, results.clone());
                results
            }
        };
        self.results(node, &results);
        Ok(())
    }

    /// An `If`: the branch its condition takes, when the walk knows it; else both, merged.
    fn branches(&mut self, node: &NodeProto, walk: &Walk, runs: Runs) -> Result<(), Box<Diagnostic>> {
        let (Some(then), Some(otherwise)) = (subgraph(node, "then_branch"), subgraph(node, "else_branch")) else {
            return Ok(());
        };
        let condition = node.input.first().and_then(|c| self.known.get(c)).and_then(|k| k.ints.as_deref());
        let results = match condition {
            Some([c]) => self.branch(if *c != 0 { then } else { otherwise }, &[], walk, runs)?,
            _ => {
                let a = self.branch(then, &[], walk, Runs::Maybe)?;
                let b = self.branch(otherwise, &[], walk, Runs::Maybe)?;
                a.iter().zip(&b).map(|(x, y)| x.merge(y)).collect()
            }
        };
        self.results(node, &results);
        Ok(())
    }

    /// A `Loop`: its first trip checked when the call certainly runs it, and its body walked
    /// until what it carries settles, for what the loop computes.
    fn loop_body(&mut self, node: &NodeProto, walk: &Walk, runs: Runs) -> Result<(), Box<Diagnostic>> {
        let Some(body) = subgraph(node, "body") else { return Ok(()) };
        let given = |i: usize| node.input.get(i).filter(|n| !n.is_empty()).map(|n| self.known.get(n));
        let value = |i: usize| match given(i) {
            None => Some(None),
            Some(known) => match known.and_then(|k| k.ints.as_deref()) {
                Some([v]) => Some(Some(*v)),
                _ => None,
            },
        };
        // At least one trip: a trip count of at least one (or none given), and a first
        // condition that holds (or none given).
        let once = matches!(value(0), Some(None) | Some(Some(1..))) && matches!(value(1), Some(None) | Some(Some(1..)));
        let carried = node.input.len().saturating_sub(2);
        let initial: Vec<Known> = (0..carried).map(|k| given(2 + k).flatten().cloned().unwrap_or_default()).collect();
        // The body takes the trip's number and condition first, and gives its condition first.
        let scalar = |elem| Known { ty: Some(Ty::Elem(elem)), dims: Some(Vec::new()), ..Known::default() };
        let prefix = [scalar(ElemType::Int64), scalar(ElemType::Bool)];
        let body_inputs = |state: &[Known]| prefix.iter().chain(state).cloned().collect::<Vec<_>>();
        // The first trip sees exactly what the loop is given: checked there when it runs.
        if once {
            self.branch(body, &body_inputs(&initial), walk, runs)?;
        }
        let state = self.settled(body, initial, &body_inputs, 1, walk)?;
        let outputs = self.branch(body, &body_inputs(&state), walk, Runs::Maybe)?;
        // The loop's outputs: what it carries out, then each scan output stacked along a new
        // first axis, one row per trip.
        let mut results = state;
        for scanned in outputs.iter().skip(1 + carried) {
            let dims = scanned.dims.as_ref().map(|d| std::iter::once(Dim::Unknown).chain(d.iter().cloned()).collect());
            results.push(Known { ty: scanned.ty.clone(), dims, ..Known::default() });
        }
        self.results(node, &results);
        Ok(())
    }

    /// A `Scan` (opset 9 on): its first step checked when the scan has one, and its body
    /// walked with a slice of each scanned input until what it carries settles.
    fn scan_body(&mut self, node: &NodeProto, walk: &Walk, runs: Runs) -> Result<(), Box<Diagnostic>> {
        let Some(body) = subgraph(node, "body") else { return Ok(()) };
        let int = |name: &str| node.attribute.iter().find(|a| a.name() == name).and_then(|a| a.i);
        let ints = |name: &str| node.attribute.iter().find(|a| a.name() == name).map(|a| a.ints.clone());
        let scanned = usize::try_from(int("num_scan_inputs").unwrap_or(0)).unwrap_or(0).min(node.input.len());
        let carried = node.input.len() - scanned;
        let known = |i: usize| node.input.get(i).and_then(|n| self.known.get(n)).cloned().unwrap_or_default();
        let initial: Vec<Known> = (0..carried).map(known).collect();
        let input_axes = ints("scan_input_axes").unwrap_or_default();
        // Each step sees one slice of each scanned input: its scan axis taken away.
        let mut length = Dim::Unknown;
        let slices: Vec<Known> = (0..scanned)
            .map(|j| {
                let whole = known(carried + j);
                let axis = input_axes.get(j).copied().unwrap_or(0);
                let dims = whole.dims.as_ref().and_then(|d| {
                    let axis = normalized_axis(axis, d.len())?;
                    if j == 0 {
                        length = d[axis].clone();
                    }
                    Some(d.iter().enumerate().filter(|(k, _)| *k != axis).map(|(_, d)| d.clone()).collect())
                });
                Known { ty: whole.ty, dims, ..Known::default() }
            })
            .collect();
        let body_inputs = |state: &[Known]| state.iter().chain(&slices).cloned().collect::<Vec<_>>();
        // The first step sees exactly what the scan is given: checked there when it runs.
        if matches!(length, Dim::Known(1..)) {
            self.branch(body, &body_inputs(&initial), walk, runs)?;
        }
        let state = self.settled(body, initial, &body_inputs, 0, walk)?;
        let outputs = self.branch(body, &body_inputs(&state), walk, Runs::Maybe)?;
        // Each scan output stacks a step's output along its own axis, one per step.
        let output_axes = ints("scan_output_axes").unwrap_or_default();
        let mut results = state;
        for (j, step) in outputs.iter().skip(carried).enumerate() {
            let dims = step.dims.as_ref().and_then(|d| {
                let axis = normalized_axis(output_axes.get(j).copied().unwrap_or(0), d.len() + 1)?;
                let mut dims = d.clone();
                dims.insert(axis, length.clone());
                Some(dims)
            });
            results.push(Known { ty: step.ty.clone(), dims, ..Known::default() });
        }
        self.results(node, &results);
        Ok(())
    }

    /// What a body carries, once it settles: `state` walked through `body` (given as
    /// `inputs(state)`, its carried outputs from `offset` on) and merged with what comes out,
    /// until a round changes nothing; each round only forgets. Past [`LOOP_ROUNDS`], nothing
    /// carried is known.
    fn settled(
        &mut self,
        body: &GraphProto,
        mut state: Vec<Known>,
        inputs: &dyn Fn(&[Known]) -> Vec<Known>,
        offset: usize,
        walk: &Walk,
    ) -> Result<Vec<Known>, Box<Diagnostic>> {
        for _ in 0..LOOP_ROUNDS {
            let outputs = self.branch(body, &inputs(&state), walk, Runs::Maybe)?;
            let next: Vec<Known> = state
                .iter()
                .enumerate()
                .map(|(k, s)| s.merge(outputs.get(offset + k).unwrap_or(&Known::default())))
                .collect();
            if next == state {
                return Ok(state);
            }
            state = next;
        }
        Ok(vec![Known::default(); state.len()])
    }

    /// What a subgraph's outputs are, walked with `inputs` for its graph inputs in order; the
    /// outer scope's values stay visible, and the subgraph's own stay inside it.
    fn branch(
        &mut self,
        g: &GraphProto,
        inputs: &[Known],
        walk: &Walk,
        runs: Runs,
    ) -> Result<Vec<Known>, Box<Diagnostic>> {
        // The names the subgraph defines, and what they held outside it (a model that shadows
        // an outer name gets it back): a scope, not a copy of everything the walk knows.
        let defined: Vec<&str> = g
            .input
            .iter()
            .map(|i| i.name())
            .chain(g.node.iter().flat_map(|n| n.output.iter().map(String::as_str)))
            .collect();
        let outer: Vec<Option<Known>> = defined.iter().map(|name| self.known.remove(*name)).collect();
        for (input, known) in g.input.iter().zip(inputs) {
            self.known.insert(input.name().to_string(), known.clone());
        }
        let walked = self.graph(&g.node, walk, runs);
        let results = g.output.iter().map(|o| self.known.get(o.name()).cloned().unwrap_or_default()).collect();
        for (name, before) in defined.iter().zip(outer) {
            self.known.remove(*name);
            if let Some(before) = before {
                self.known.insert(name.to_string(), before);
            }
        }
        walked.map(|()| results)
    }

    /// A control-flow node's outputs made what its subgraphs compute; the element type its
    /// schema and declared subgraph outputs give comes first.
    fn results(&mut self, node: &NodeProto, results: &[Known]) {
        for (name, result) in node.output.iter().zip(results) {
            let known = self.known.entry(name.clone()).or_default();
            let ty = known.ty.take().or_else(|| result.ty.clone());
            *known = Known { ty, ..result.clone() };
        }
    }

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
        let (shapes, mut ints, mut items) = if normalize_domain(domain).is_empty() {
            let inputs = self.shape_facts(node);
            let attrs: Vec<Attr> = node.attribute.iter().filter_map(attr).collect();
            let call = ShapeCall { op, domain: "", version, inputs: &inputs, attrs: &attrs, outputs };
            let shapes = shapes::infer(&call)
                .map_err(|v| Box::new(Diagnostic::error(codes::SHAPE_MISMATCH, 0, v.message).help(v.help)))?;
            let ints = shapes::propagated(op, &inputs, &attrs, &shapes);
            (shapes, ints, shapes::sequence_items(&call))
        } else {
            (vec![None; outputs], None, None)
        };
        for (k, name) in node.output.iter().enumerate() {
            let known = Known {
                ty: tys.get(k).cloned().flatten(),
                dims: shapes.get(k).cloned().flatten(),
                ints: if k == 0 { ints.take() } else { None },
                items: if k == 0 { items.take() } else { None },
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
            Some(Known { ty: Some(Ty::Seq(inner)), items, .. }) => {
                GraphType::Sequence { elem: elem_of(inner.as_deref()), items: items.clone() }
            }
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

/// `axis` of a rank-`rank` tensor made non-negative, when it is in range.
fn normalized_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    usize::try_from(if axis < 0 { axis + r } else { axis }).ok().filter(|a| *a < rank)
}

/// A node's graph attribute `name`.
fn subgraph<'a>(node: &'a NodeProto, name: &str) -> Option<&'a GraphProto> {
    node.attribute.iter().find(|a| a.name() == name).and_then(|a| a.g.as_ref())
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
    match (at, function) {
        (Some(at), "") => d.note(format!("at {at}")),
        (Some(at), _) => d.note(format!("at {at}, in `{function}`")),
        (None, "") => d,
        (None, _) => d.note(format!("in `{function}`")),
    }
}

/// What a declared type says of a value: its element type and shape, or a sequence. A
/// dimension declared with neither a number nor a name is a symbol of its own (`?0`).
pub fn declared_fact(ty: Option<&TypeProto>) -> ArgFact {
    let unknown = ArgFact::Tensor { elem: None, shape: None, sequence: false };
    let Some(value) = ty.and_then(|t| t.value.as_ref()) else { return unknown };
    match value {
        type_proto::Value::TensorType(t) => {
            let elem = t.elem_type.and_then(|c| ElemType::from_code(i64::from(c)));
            let shape = t.shape.as_ref().map(|s| {
                s.dim
                    .iter()
                    .enumerate()
                    .map(|(k, d)| match &d.value {
                        Some(DimValue::DimValue(n)) => Dim::Known(*n),
                        Some(DimValue::DimParam(p)) => Dim::Symbolic(Arc::from(p.as_str())),
                        None => Dim::Symbolic(Arc::from(format!("?{k}").as_str())),
                    })
                    .collect()
            });
            ArgFact::Tensor { elem, shape, sequence: false }
        }
        type_proto::Value::SequenceType(s) => {
            let elem = s.elem_type.as_ref().and_then(|t| match &t.value {
                Some(type_proto::Value::TensorType(t)) => t.elem_type.and_then(|c| ElemType::from_code(i64::from(c))),
                _ => None,
            });
            ArgFact::Tensor { elem, shape: None, sequence: true }
        }
        _ => unknown,
    }
}
