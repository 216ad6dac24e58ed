//! Visiting the nodes of a graph or function body, subgraphs included, and saying where a node
//! is in words (for diagnostics).

use crate::proto::onnx::{GraphProto, NodeProto};

/// Where a list of nodes lives: the main graph, a function body, or a subgraph attribute of a
/// node. A linked list on the stack, so walking allocates nothing.
#[derive(Clone, Copy)]
pub enum Scope<'a> {
    Graph,
    Function(&'a str),
    Subgraph { parent: &'a Scope<'a>, node: &'a NodeProto, index: usize, attribute: &'a str },
}

impl Scope<'_> {
    /// "the main graph", "function `d::f`", "`then_branch` of node `If_0` in the main graph".
    pub fn describe(&self) -> String {
        match self {
            Scope::Graph => "the main graph".into(),
            Scope::Function(f) => format!("function `{f}`"),
            Scope::Subgraph { parent, node, index, attribute } => {
                format!("`{attribute}` of {} in {}", node_label(node, *index), parent.describe())
            }
        }
    }
}

/// `node `n3`` for a named node, `unnamed Add node #4` otherwise.
pub fn node_label(node: &NodeProto, index: usize) -> String {
    match node.name.as_deref() {
        Some(n) if !n.is_empty() => format!("node `{n}`"),
        _ => format!("unnamed {} node #{index}", node.op_type()),
    }
}

/// A node and where it is, in words.
pub fn site(node: &NodeProto, index: usize, scope: &Scope) -> String {
    match scope {
        Scope::Graph => node_label(node, index),
        _ => format!("{} in {}", node_label(node, index), scope.describe()),
    }
}

/// Calls `f` on every node of `nodes` and of their subgraphs, parents before children.
pub fn each_node<'a>(nodes: &'a [NodeProto], scope: &Scope<'_>, f: &mut dyn FnMut(&'a NodeProto, usize, &Scope<'_>)) {
    for (index, node) in nodes.iter().enumerate() {
        f(node, index, scope);
        for a in &node.attribute {
            let attribute = a.name();
            for g in a.g.iter().chain(&a.graphs) {
                each_node(&g.node, &Scope::Subgraph { parent: scope, node, index, attribute }, f);
            }
        }
    }
}

/// The subgraphs held by a node's attributes.
pub fn subgraphs_mut(node: &mut NodeProto) -> impl Iterator<Item = &mut GraphProto> {
    node.attribute.iter_mut().flat_map(|a| a.g.iter_mut().chain(a.graphs.iter_mut()))
}

/// Every value name a list of nodes defines or uses, subgraphs included (graph inputs, outputs,
/// initializers and value_info too).
pub fn value_names<'a>(nodes: &'a [NodeProto], out: &mut dyn FnMut(&'a str)) {
    for n in nodes {
        n.input.iter().chain(&n.output).for_each(|s| out(s));
        for a in &n.attribute {
            for g in a.g.iter().chain(&a.graphs) {
                graph_value_names(g, out);
            }
        }
    }
}

pub fn graph_value_names<'a>(g: &'a GraphProto, out: &mut dyn FnMut(&'a str)) {
    for v in g.input.iter().chain(&g.output).chain(&g.value_info) {
        out(v.name());
    }
    for t in &g.initializer {
        out(t.name());
    }
    for s in &g.sparse_initializer {
        if let Some(v) = &s.values {
            out(v.name());
        }
    }
    value_names(&g.node, out);
}

/// Every node name, subgraphs included.
pub fn node_names<'a>(nodes: &'a [NodeProto], out: &mut dyn FnMut(&'a str)) {
    each_node(nodes, &Scope::Graph, &mut |n, _, _| {
        if let Some(name) = n.name.as_deref() {
            out(name);
        }
    });
}

/// The names a list of nodes declares: node outputs, and subgraph inputs and initializers.
pub fn declared_names<'a>(nodes: &'a [NodeProto], out: &mut dyn FnMut(&'a str)) {
    for n in nodes {
        n.output.iter().filter(|s| !s.is_empty()).for_each(|s| out(s));
        for a in &n.attribute {
            for g in a.g.iter().chain(&a.graphs) {
                g.input.iter().for_each(|v| out(v.name()));
                g.initializer.iter().for_each(|t| out(t.name()));
                g.sparse_initializer.iter().filter_map(|s| s.values.as_ref()).for_each(|t| out(t.name()));
                declared_names(&g.node, out);
            }
        }
    }
}
