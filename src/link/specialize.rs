//! Specialising a function to concrete attribute values.
//!
//! ONNX Script compiles `if alpha != 1.0:` on an attribute into an `If` whose condition is
//! computed from `Constant <value_float = @alpha>`: exact for every value of `alpha`, but the
//! runtime evaluates the condition and carries both branches. Given the values, the condition is
//! a constant: [`specialize`] binds the attribute references, folds such conditions and keeps
//! only the branch taken. The linker's inline mode uses it at every call site.

use super::eval::{self, Value};
use super::walk::subgraphs_mut;
use crate::emit::proto::SIGNATURE_KEY;
use crate::proto::onnx::{AttributeProto, FunctionProto, GraphProto, NodeProto};
use std::collections::{HashMap, HashSet, VecDeque};

/// `function` with its attributes bound: each attribute given in `attributes` (by name; values
/// that are themselves references are ignored), else its default, replaces the references to it,
/// and `If`s whose condition is then computed only from constants are replaced by the branch
/// they take. Bound attributes leave the signature; attributes with neither a value nor a default
/// stay references. The `onnxsc.signature` metadata is dropped, as it no longer describes the
/// function.
pub fn specialize(function: &FunctionProto, attributes: &[AttributeProto]) -> FunctionProto {
    let mut values: HashMap<&str, &AttributeProto> = function.attribute_proto.iter().map(|a| (a.name(), a)).collect();
    values.extend(attributes.iter().filter(|a| a.ref_attr_name.is_none()).map(|a| (a.name(), a)));
    let mut f = function.clone();
    bind_references(&mut f.node, &values);
    fold_conditions(&mut f.node, &f.output);
    f.attribute.retain(|a| !values.contains_key(a.as_str()));
    f.attribute_proto.retain(|a| !values.contains_key(a.name()));
    f.metadata_props.retain(|m| m.key() != SIGNATURE_KEY);
    f
}

/// Replaces each attribute that references one of `values` (`alpha = @alpha`), in the nodes and
/// their subgraphs, by that value under the referencing attribute's name.
pub fn bind_references(nodes: &mut [NodeProto], values: &HashMap<&str, &AttributeProto>) {
    for node in nodes {
        for a in &mut node.attribute {
            if let Some(v) = a.ref_attr_name.as_deref().and_then(|r| values.get(r)) {
                let mut bound = (*v).clone();
                bound.name = a.name.take();
                bound.doc_string = a.doc_string.take();
                bound.r#type = bound.r#type.or(a.r#type);
                *a = bound;
            }
        }
        for g in subgraphs_mut(node) {
            bind_references(&mut g.node, values);
        }
    }
}

/// Removes the attributes that still reference an attribute of the enclosing function: with no
/// value and no default, the operator's own default applies.
pub fn drop_references(nodes: &mut [NodeProto]) {
    for node in nodes {
        node.attribute.retain(|a| a.ref_attr_name.is_none());
        for g in subgraphs_mut(node) {
            drop_references(&mut g.node);
        }
    }
}

/// Folds every `If` whose condition is a constant, in `nodes` and their subgraphs, splicing in
/// the branch taken; then removes the constant computations nothing uses any more. `outputs` are
/// the names the caller still reads (a function's outputs).
pub fn fold_conditions(nodes: &mut Vec<NodeProto>, outputs: &[String]) {
    let mut folder = Folder::default();
    *nodes = folder.fold(std::mem::take(nodes));
    if folder.spliced {
        let mut uses: HashMap<String, usize> = HashMap::new();
        count_uses(nodes, &mut uses);
        for o in outputs {
            *uses.entry(o.clone()).or_default() += 1;
        }
        sweep(nodes, &folder.evaluated, &mut uses);
    }
}

#[derive(Default)]
struct Folder {
    known: HashMap<String, Value>,
    /// Outputs of the nodes evaluated: pure, so removable once unused.
    evaluated: HashSet<String>,
    spliced: bool,
}

impl Folder {
    fn fold(&mut self, nodes: Vec<NodeProto>) -> Vec<NodeProto> {
        let mut queue: VecDeque<NodeProto> = nodes.into();
        let mut out = Vec::with_capacity(queue.len());
        while let Some(mut node) = queue.pop_front() {
            if let Some(branch) = self.taken_branch(&node) {
                // The branch's own Ifs may fold too: it goes back on the queue.
                for n in splice(&node, branch).into_iter().rev() {
                    queue.push_front(n);
                }
                self.spliced = true;
                continue;
            }
            let inputs: Option<Vec<&Value>> = node.input.iter().map(|i| self.known.get(i)).collect();
            if let Some(v) = inputs.and_then(|inputs| eval::evaluate(&node, &inputs)) {
                self.evaluated.insert(node.output[0].clone());
                self.known.insert(node.output[0].clone(), v);
            }
            for g in subgraphs_mut(&mut node) {
                g.node = self.fold(std::mem::take(&mut g.node));
            }
            out.push(node);
        }
        out
    }

    /// The branch an `If` with a known condition takes, if it can be spliced in.
    fn taken_branch(&self, node: &NodeProto) -> Option<GraphProto> {
        if !(matches!(node.domain(), "" | "ai.onnx") && node.op_type() == "If" && node.input.len() == 1) {
            return None;
        }
        let cond = self.known.get(&node.input[0])?.as_bool()?;
        let name = if cond { "then_branch" } else { "else_branch" };
        let g = node.attribute.iter().find(|a| a.name() == name)?.g.as_ref()?;
        let plain = g.input.is_empty() && g.initializer.is_empty() && g.sparse_initializer.is_empty();
        (plain && g.output.len() == node.output.len()).then(|| g.clone())
    }
}

/// The branch's nodes in place of the `If`: each branch output a branch node produces is renamed
/// to the If's output; other outputs (outer values, repeated outputs) are copied by `Identity`.
fn splice(node: &NodeProto, mut branch: GraphProto) -> Vec<NodeProto> {
    let produced: HashSet<&str> = branch.node.iter().flat_map(|n| n.output.iter().map(String::as_str)).collect();
    let mut rename: HashMap<String, String> = HashMap::new();
    let mut copies = Vec::new();
    for (b, o) in branch.output.iter().map(|v| v.name()).zip(&node.output) {
        if o.is_empty() {
            continue;
        }
        if produced.contains(b) && !rename.contains_key(b) {
            rename.insert(b.to_string(), o.clone());
        } else {
            let source = rename.get(b).cloned().unwrap_or_else(|| b.to_string());
            copies.push(NodeProto {
                op_type: Some("Identity".into()),
                domain: Some(String::new()),
                input: vec![source],
                output: vec![o.clone()],
                ..Default::default()
            });
        }
    }
    rename_values(&mut branch.node, &rename);
    branch.node.extend(copies);
    branch.node
}

/// Renames value names in nodes and their subgraphs.
fn rename_values(nodes: &mut [NodeProto], map: &HashMap<String, String>) {
    if map.is_empty() {
        return;
    }
    let apply = |s: &mut String| {
        if let Some(n) = map.get(s.as_str()) {
            *s = n.clone();
        }
    };
    for node in nodes {
        node.input.iter_mut().chain(node.output.iter_mut()).for_each(apply);
        for g in subgraphs_mut(node) {
            for v in g.input.iter_mut().chain(g.output.iter_mut()).chain(g.value_info.iter_mut()) {
                if let Some(n) = v.name.as_mut() {
                    apply(n);
                }
            }
            rename_values(&mut g.node, map);
        }
    }
}

fn count_uses(nodes: &[NodeProto], uses: &mut HashMap<String, usize>) {
    for n in nodes {
        for i in &n.input {
            *uses.entry(i.clone()).or_default() += 1;
        }
        for a in &n.attribute {
            for g in a.g.iter().chain(&a.graphs) {
                for o in &g.output {
                    *uses.entry(o.name().to_string()).or_default() += 1;
                }
                count_uses(&g.node, uses);
            }
        }
    }
}

/// Removes evaluated nodes whose outputs nobody uses, last first, so that a chain of constants
/// feeding only a folded condition goes in one pass.
fn sweep(nodes: &mut Vec<NodeProto>, evaluated: &HashSet<String>, uses: &mut HashMap<String, usize>) {
    let mut keep = vec![true; nodes.len()];
    for (i, node) in nodes.iter_mut().enumerate().rev() {
        for g in subgraphs_mut(node) {
            sweep(&mut g.node, evaluated, uses);
        }
        let dead = !node.output.is_empty()
            && node.output.iter().all(|o| evaluated.contains(o) && uses.get(o).copied().unwrap_or(0) == 0);
        if dead {
            keep[i] = false;
            for input in &node.input {
                if let Some(u) = uses.get_mut(input) {
                    *u = u.saturating_sub(1);
                }
            }
        }
    }
    let mut k = keep.into_iter();
    nodes.retain(|_| k.next().unwrap_or(true));
}
