//! Inline mode: each call replaced by its function's body.
//!
//! A call's function is first specialised to the call's attributes and to which of its inputs
//! it omits (references bound, attribute-only and None conditions folded) and its own calls
//! expanded: the result, a *template*, is cached per (function, attributes, inputs given), since exported models call the same function the same way
//! many times. Each call site then copies its template, binding the formal inputs and outputs to
//! the call's and giving every other value and node a fresh name (`<call>/<name>`, unique in the
//! whole graph, subgraphs included). Outer-scope names are never renamed: a body only refers to
//! its formals and its own values.

use super::calls::{target, Target};
use super::library::Table;
use super::names::Namer;
use super::specialize::{drop_references, specialize_call, Actual};
use super::walk::{declared_names, graph_value_names, node_names, subgraphs_mut, value_names};
use crate::proto::onnx::{AttributeProto, GraphProto, NodeProto, SparseTensorProto, TensorProto, ValueInfoProto};
use prost::Message;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The names already used in a graph (or function body), and the fresh ones handed out.
pub struct FreshNames {
    values: Namer,
    nodes: Namer,
    /// Call-site prefixes, kept distinct so that instances rarely need a numeric suffix.
    prefixes: Namer,
}

impl FreshNames {
    pub fn of_graph(g: &GraphProto) -> FreshNames {
        let mut values = Vec::new();
        graph_value_names(g, &mut |n| values.push(n));
        let mut nodes = Vec::new();
        node_names(&g.node, &mut |n| nodes.push(n));
        FreshNames { values: Namer::new(values), nodes: Namer::new(nodes), prefixes: Namer::default() }
    }

    fn of_body(formals: &[String], body: &[NodeProto]) -> FreshNames {
        let mut values: Vec<&str> = formals.iter().map(String::as_str).collect();
        value_names(body, &mut |n| values.push(n));
        let mut nodes = Vec::new();
        node_names(body, &mut |n| nodes.push(n));
        FreshNames { values: Namer::new(values), nodes: Namer::new(nodes), prefixes: Namer::default() }
    }
}

/// How a template name is bound at a call site.
#[derive(Clone, Copy)]
enum Slot {
    Input(usize),
    Output(usize),
    Internal(usize),
}

struct Template {
    function: String,
    nodes: Vec<NodeProto>,
    outputs: Vec<String>,
    slots: HashMap<String, Slot>,
    /// Number of internal names (the `Slot::Internal` indices).
    internal: Vec<String>,
    value_info: Vec<ValueInfoProto>,
    /// Its nodes, those of subgraphs included: what each call site adds to the output.
    size: usize,
}

pub struct Inliner<'t> {
    table: &'t Table<'t>,
    templates: HashMap<(usize, Vec<u8>, Vec<Actual>), Rc<Template>>,
    /// Values known to be tensors (typed inputs, initializers, value_info of the graph; then,
    /// for each template being built, its formals that the call gives tensors for).
    tensors: Vec<HashSet<String>>,
    /// Functions whose template is being built: a call back into one stays a call.
    active: Vec<usize>,
    /// Call sites expanded in the graph (nested calls not counted).
    pub calls: usize,
    /// Functions still called after expansion, by the graph or by a template.
    pub kept: Vec<usize>,
    /// The most nodes expansion may make (templates and the graph together): inlining is
    /// exponential when each function calls the next twice.
    pub max_nodes: usize,
    /// Nodes made so far.
    made: usize,
    /// The calls being expanded when the limit was reached, outermost first; expansion stops.
    pub overflow: Option<Vec<usize>>,
}

impl<'t> Inliner<'t> {
    pub fn new(table: &'t Table) -> Inliner<'t> {
        Inliner {
            table,
            templates: HashMap::new(),
            tensors: vec![HashSet::new()],
            active: Vec::new(),
            calls: 0,
            kept: Vec::new(),
            max_nodes: usize::MAX,
            made: 0,
            overflow: None,
        }
    }

    /// A fresh budget of [`Inliner::max_nodes`] for what is expanded next, the templates
    /// kept: for expanding calls one at a time, each within the limit.
    pub fn renew_budget(&mut self) {
        self.made = 0;
        self.overflow = None;
    }

    /// Records the values of `g` that are tensors, so that calls passing them can fold
    /// `x is None` tests on them.
    pub fn know_tensors(&mut self, g: &GraphProto) {
        use crate::proto::onnx::type_proto::Value;
        let tensor =
            |v: &ValueInfoProto| matches!(v.r#type.as_ref().and_then(|t| t.value.as_ref()), Some(Value::TensorType(_)));
        let typed = g.input.iter().chain(&g.value_info).filter(|v| tensor(v)).map(|v| v.name().to_string());
        if let Some(top) = self.tensors.first_mut() {
            top.extend(typed.chain(g.initializer.iter().map(|t| t.name().to_string())));
        }
    }

    /// Expands every call in the graph and its subgraphs.
    pub fn expand_graph(&mut self, g: &mut GraphProto, names: &mut FreshNames) {
        let nodes = std::mem::take(&mut g.node);
        let mut out = Vec::with_capacity(nodes.len());
        for mut node in nodes {
            if self.overflow.is_some() {
                out.push(node);
                continue;
            }
            for sub in subgraphs_mut(&mut node) {
                self.expand_graph(sub, names);
            }
            match self.template_for(&node) {
                Some(t) if self.made.saturating_add(t.size) > self.max_nodes => {
                    let mut chain = self.active.clone();
                    chain.extend(target_id(self.table, &node));
                    self.overflow = Some(chain);
                    out.push(node);
                }
                Some(t) => {
                    if self.active.is_empty() {
                        self.calls += 1;
                    }
                    self.made += t.size;
                    instantiate(&t, &node, names, &mut out, &mut g.value_info);
                }
                None => out.push(node),
            }
        }
        g.node = out;
    }

    fn template_for(&mut self, call: &NodeProto) -> Option<Rc<Template>> {
        let Target::Function(id) = target(self.table, call) else { return None };
        // A graph passed as an attribute would be renamed with the body: such calls stay calls.
        if self.active.contains(&id) || call.attribute.iter().any(|a| a.g.is_some() || !a.graphs.is_empty()) {
            self.kept.push(id);
            return None;
        }
        let mut attrs: Vec<&AttributeProto> = call.attribute.iter().filter(|a| a.ref_attr_name.is_none()).collect();
        attrs.sort_by(|a, b| a.name().cmp(b.name()));
        let mut key = Vec::new();
        for a in &attrs {
            key.extend(a.encode_length_delimited_to_vec());
        }
        // Inside a template body, the names are the function's own: the known ones are its formals.
        let tensors = self.tensors.last();
        let actuals: Vec<Actual> = (0..self.table.def(id).proto.input.len())
            .map(|i| match call.input.get(i).map(String::as_str) {
                None | Some("") => Actual::Absent,
                Some(v) if tensors.is_some_and(|t| t.contains(v)) => Actual::Tensor,
                Some(_) => Actual::Unknown,
            })
            .collect();
        let key = (id, key, actuals);
        if let Some(t) = self.templates.get(&key) {
            return Some(t.clone());
        }
        self.active.push(id);
        let t = Rc::new(self.build(id, &attrs.into_iter().cloned().collect::<Vec<_>>(), &key.2));
        self.active.pop();
        self.templates.insert(key, t.clone());
        Some(t)
    }

    /// The function specialised to `attrs` and the inputs given, its own calls expanded.
    fn build(&mut self, id: usize, attrs: &[AttributeProto], actuals: &[Actual]) -> Template {
        let table = self.table;
        let mut f = specialize_call(&table.def(id).proto, attrs, actuals);
        drop_references(&mut f.node);
        let mut body = GraphProto {
            node: std::mem::take(&mut f.node),
            value_info: std::mem::take(&mut f.value_info),
            ..Default::default()
        };
        let mut names = FreshNames::of_body(&f.input, &body.node);
        let given: HashSet<String> =
            f.input.iter().zip(actuals).filter(|(_, a)| **a == Actual::Tensor).map(|(n, _)| n.clone()).collect();
        self.tensors.push(given);
        self.expand_graph(&mut body, &mut names);
        self.tensors.pop();

        let mut slots = HashMap::new();
        for (i, n) in f.input.iter().enumerate() {
            slots.entry(n.clone()).or_insert(Slot::Input(i));
        }
        for (j, n) in f.output.iter().enumerate() {
            slots.entry(n.clone()).or_insert(Slot::Output(j));
        }
        let mut size = 0;
        super::walk::each_node(&body.node, &super::walk::Scope::Graph, &mut |_, _, _| size += 1);
        let mut internal = Vec::new();
        declared_names(&body.node, &mut |n| {
            if !slots.contains_key(n) {
                slots.insert(n.to_string(), Slot::Internal(internal.len()));
                internal.push(n.to_string());
            }
        });
        Template {
            function: f.name().to_string(),
            nodes: body.node,
            outputs: f.output,
            slots,
            internal,
            value_info: body.value_info,
            size,
        }
    }
}

/// The function a call node calls, if it is one.
fn target_id(table: &Table, call: &NodeProto) -> Option<usize> {
    match target(table, call) {
        Target::Function(id) => Some(id),
        _ => None,
    }
}

/// One call site: the template's nodes with formals bound and everything else renamed.
fn instantiate(
    t: &Template,
    call: &NodeProto,
    names: &mut FreshNames,
    out: &mut Vec<NodeProto>,
    value_info: &mut Vec<ValueInfoProto>,
) {
    let base = call.name.as_deref().filter(|n| !n.is_empty()).unwrap_or(&t.function);
    let prefix = names.prefixes.fresh(base.to_string());
    // A formal output bound to an input, or listed twice, is copied by an Identity instead.
    let copied = |j: usize, formal: &String| !matches!(t.slots.get(formal), Some(Slot::Output(k)) if *k == j);
    let outputs: Vec<String> = t
        .outputs
        .iter()
        .enumerate()
        .map(|(j, formal)| match call.output.get(j).filter(|o| !o.is_empty()) {
            _ if copied(j, formal) => String::new(),
            Some(actual) => actual.clone(),
            None => names.values.fresh(format!("{prefix}/{formal}")),
        })
        .collect();
    let internal: Vec<String> = t.internal.iter().map(|n| names.values.fresh(format!("{prefix}/{n}"))).collect();
    let bind = Binding { slots: &t.slots, inputs: &call.input, outputs: &outputs, internal: &internal };
    let mut node_name = |n: &NodeProto| {
        let base = n.name.as_deref().filter(|s| !s.is_empty()).unwrap_or(n.op_type());
        names.nodes.fresh(format!("{prefix}/{base}"))
    };
    out.extend(t.nodes.iter().map(|n| bind.node(n, &mut node_name)));
    for (j, formal) in t.outputs.iter().enumerate() {
        match call.output.get(j) {
            Some(actual) if !actual.is_empty() && copied(j, formal) => {
                let identity =
                    NodeProto { op_type: Some("Identity".into()), domain: Some(String::new()), ..Default::default() };
                out.push(NodeProto {
                    name: Some(node_name(&identity)),
                    input: vec![bind.name(formal)],
                    output: vec![actual.clone()],
                    ..identity
                });
            }
            _ => {}
        }
    }
    for v in &t.value_info {
        if let Some(Slot::Internal(k)) = t.slots.get(v.name()) {
            value_info.push(ValueInfoProto { name: Some(internal[*k].clone()), ..v.clone() });
        }
    }
}

/// The names of one call site.
struct Binding<'a> {
    slots: &'a HashMap<String, Slot>,
    inputs: &'a [String],
    outputs: &'a [String],
    internal: &'a [String],
}

impl Binding<'_> {
    fn name(&self, s: &str) -> String {
        match self.slots.get(s) {
            // A missing optional input is the empty name.
            Some(Slot::Input(i)) => self.inputs.get(*i).cloned().unwrap_or_default(),
            Some(Slot::Output(j)) => self.outputs[*j].clone(),
            Some(Slot::Internal(k)) => self.internal[*k].clone(),
            None => s.to_string(),
        }
    }

    fn node(&self, n: &NodeProto, node_name: &mut dyn FnMut(&NodeProto) -> String) -> NodeProto {
        let attribute = n
            .attribute
            .iter()
            .map(|a| {
                if a.g.is_none() && a.graphs.is_empty() {
                    return a.clone();
                }
                AttributeProto {
                    name: a.name.clone(),
                    doc_string: a.doc_string.clone(),
                    r#type: a.r#type,
                    g: a.g.as_ref().map(|g| self.graph(g, node_name)),
                    graphs: a.graphs.iter().map(|g| self.graph(g, node_name)).collect(),
                    ..Default::default()
                }
            })
            .collect();
        NodeProto {
            input: n.input.iter().map(|s| self.name(s)).collect(),
            output: n.output.iter().map(|s| self.name(s)).collect(),
            name: Some(node_name(n)),
            op_type: n.op_type.clone(),
            attribute,
            doc_string: n.doc_string.clone(),
            domain: n.domain.clone(),
            overload: n.overload.clone(),
            metadata_props: n.metadata_props.clone(),
            device_configurations: n.device_configurations.clone(),
        }
    }

    fn graph(&self, g: &GraphProto, node_name: &mut dyn FnMut(&NodeProto) -> String) -> GraphProto {
        let info = |v: &ValueInfoProto| ValueInfoProto { name: Some(self.name(v.name())), ..v.clone() };
        let tensor = |t: &TensorProto| TensorProto { name: Some(self.name(t.name())), ..t.clone() };
        GraphProto {
            node: g.node.iter().map(|n| self.node(n, node_name)).collect(),
            name: g.name.clone(),
            doc_string: g.doc_string.clone(),
            input: g.input.iter().map(info).collect(),
            output: g.output.iter().map(info).collect(),
            value_info: g.value_info.iter().map(info).collect(),
            initializer: g.initializer.iter().map(tensor).collect(),
            sparse_initializer: g
                .sparse_initializer
                .iter()
                .map(|s| SparseTensorProto { values: s.values.as_ref().map(tensor), ..s.clone() })
                .collect(),
            quantization_annotation: g.quantization_annotation.clone(),
            metadata_props: g.metadata_props.clone(),
        }
    }
}
