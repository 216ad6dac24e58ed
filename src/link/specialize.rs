//! Specialising a function to concrete attribute values.
//!
//! ONNX Script compiles `if alpha != 1.0:` on an attribute into an `If` whose condition is
//! computed from `Constant <value_float = @alpha>`: exact for every value of `alpha`, but the
//! runtime evaluates the condition and carries both branches. Given the values, the condition is
//! a constant: [`specialize`] binds the attribute references, folds such conditions and keeps
//! only the branch taken. The linker's inline mode uses it at every call site.
//!
//! A call also decides which optional values are None ([`specialize_call`]): an omitted input,
//! and a `Constant` whose value references an attribute the call does not give, have no value.
//! `OptionalHasElement` of such a value is false (of a known tensor, true), values copied or
//! cast from it (`Identity`, `Cast`, `CastLike`) have no value either, and where it reaches an
//! op's input the input is omitted (`""`). That is how `x is None` tests fold (see the compiler's
//! `lower::function::optional` and docs/exporter.md).
//!
//! Reference mode keeps each call's attributes on the call, so it binds none: [`leave_out`]
//! only decides what the call leaves out (omitted inputs, and attributes without a default it
//! does not give), which makes the body of a *variant* (see `variants`).

use super::eval::{self, Value};
use super::walk::subgraphs_mut;
use crate::onnx::metadata::SIGNATURE_KEY;
use crate::onnx::ElemType;
use crate::proto::onnx::{AttributeProto, FunctionProto, GraphProto, NodeProto};
use std::collections::{HashMap, HashSet, VecDeque};

/// What a call passes for one formal input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Actual {
    /// Nothing (`""`, or fewer inputs than formals).
    Absent,
    /// A tensor (a typed graph input, an initializer).
    Tensor,
    /// A value of unknown kind.
    Unknown,
}

/// `function` with its attributes bound: each attribute given in `attributes` (by name; values
/// that are themselves references are ignored), else its default, replaces the references to it,
/// and `If`s whose condition is then computed only from constants are replaced by the branch
/// they take. Bound attributes leave the signature; attributes with neither a value nor a default
/// stay references. The `onnxsc.signature` metadata is dropped, as it no longer describes the
/// function.
pub fn specialize(function: &FunctionProto, attributes: &[AttributeProto]) -> FunctionProto {
    bind(function, attributes, Folder::default())
}

/// [`specialize`] for the whole of one call that passes `inputs` (formals beyond them are
/// unknown): absent inputs are `""` in the body, an attribute the call does not give (and that
/// has no default) has no value, and what that decides is folded.
pub fn specialize_call(function: &FunctionProto, attributes: &[AttributeProto], inputs: &[Actual]) -> FunctionProto {
    bind(function, attributes, Folder::for_inputs(function, inputs, Unset::Unbound))
}

/// `function` as a call leaves it that gives the formals `inputs` marks as given and not the
/// attributes `left_out` (which have no default): absent inputs leave the signature and are `""`
/// in the body, `Constant`s referencing a left-out attribute have no value, what that decides
/// is folded, and the references to the left-out attributes are dropped (as ONNX Runtime drops
/// them) and the attributes leave the signature. Every other reference stays a reference: the
/// call keeps its attributes. The `onnxsc.signature` metadata is dropped.
pub fn leave_out(function: &FunctionProto, inputs: &[Actual], left_out: &[String]) -> FunctionProto {
    let unset: HashSet<String> = left_out.iter().cloned().collect();
    let mut f = function.clone();
    Folder::for_inputs(function, inputs, Unset::Named(unset.clone())).run(&mut f.node, &f.output);
    drop_references_where(&mut f.node, &|r| unset.contains(r));
    f.attribute.retain(|a| !unset.contains(a));
    let mut given = inputs.iter().map(|a| *a != Actual::Absent);
    f.input.retain(|_| given.next().unwrap_or(true));
    f.metadata_props.retain(|m| m.key() != SIGNATURE_KEY);
    f
}

fn bind(function: &FunctionProto, attributes: &[AttributeProto], folder: Folder) -> FunctionProto {
    let mut values: HashMap<&str, &AttributeProto> = function.attribute_proto.iter().map(|a| (a.name(), a)).collect();
    values.extend(attributes.iter().filter(|a| a.ref_attr_name.is_none()).map(|a| (a.name(), a)));
    let mut f = function.clone();
    bind_references(&mut f.node, &values);
    // For a whole call, the attributes it does not give are decided too: not given.
    let call = matches!(folder.unset, Unset::Unbound);
    folder.run(&mut f.node, &f.output);
    f.attribute.retain(|a| !call && !values.contains_key(a.as_str()));
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
    drop_references_where(nodes, &|_| true);
}

/// Removes the attributes that reference an attribute `dropped` says has no value.
fn drop_references_where(nodes: &mut [NodeProto], dropped: &dyn Fn(&str) -> bool) {
    for node in nodes {
        node.attribute.retain(|a| !a.ref_attr_name.as_deref().is_some_and(dropped));
        for g in subgraphs_mut(node) {
            drop_references_where(&mut g.node, dropped);
        }
    }
}

/// Folds every `If` whose condition is a constant, in `nodes` and their subgraphs, splicing in
/// the branch taken; then removes the constant computations nothing uses any more. `outputs` are
/// the names the caller still reads (a function's outputs).
pub fn fold_conditions(nodes: &mut Vec<NodeProto>, outputs: &[String]) {
    Folder::default().run(nodes, outputs);
}

#[derive(Default)]
struct Folder {
    known: HashMap<String, Value>,
    /// Outputs of the nodes evaluated: pure, so removable once unused.
    evaluated: HashSet<String>,
    spliced: bool,
    /// Values that this call leaves out: omitted inputs and what only copies them.
    absent: HashSet<String>,
    /// Values known to be tensors (not optional values), so `OptionalHasElement` of them is true.
    tensors: HashSet<String>,
    /// The attributes whose references have no value.
    unset: Unset,
    /// Outputs of nodes computed from absent values: removed once unused.
    fed_by_absent: HashSet<String>,
}

/// Which attribute references have no value (the call does not give the attribute).
#[derive(Default)]
enum Unset {
    /// None: the references are still to be bound ([`specialize`]).
    #[default]
    Nothing,
    /// Every one left unbound: the call's attributes are all bound ([`specialize_call`]).
    Unbound,
    /// These: the call keeps its attributes, as references stay ([`leave_out`]).
    Named(HashSet<String>),
}

impl Unset {
    fn covers(&self, attribute: &str) -> bool {
        match self {
            Unset::Nothing => false,
            Unset::Unbound => true,
            Unset::Named(names) => names.contains(attribute),
        }
    }
}

impl Folder {
    /// A folder for a call that passes `inputs` (formals beyond them are unknown).
    fn for_inputs(function: &FunctionProto, inputs: &[Actual], unset: Unset) -> Folder {
        let mut folder = Folder { unset, ..Folder::default() };
        for (formal, actual) in function.input.iter().zip(inputs) {
            match actual {
                Actual::Absent => folder.absent.insert(formal.clone()),
                Actual::Tensor => folder.tensors.insert(formal.clone()),
                Actual::Unknown => false,
            };
        }
        folder
    }

    fn run(mut self, nodes: &mut Vec<NodeProto>, outputs: &[String]) {
        *nodes = self.fold(std::mem::take(nodes));
        if self.spliced || !self.fed_by_absent.is_empty() {
            let mut uses: HashMap<String, usize> = HashMap::new();
            count_uses(nodes, &mut uses);
            for o in outputs {
                *uses.entry(o.clone()).or_default() += 1;
            }
            sweep(nodes, &self.evaluated, &mut uses);
        }
    }

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
            if self.passes_on_absent(&node) {
                self.absent.extend(node.output.iter().cloned());
                continue;
            }
            self.omit_absent_inputs(&mut node);
            if is_constant(&node) {
                self.tensors.extend(node.output.iter().cloned());
            }
            if let Some(v) = self.has_element(&node).or_else(|| self.short_circuit(&node)) {
                let v = Value { dtype: ElemType::Bool, dims: Vec::new(), scalar: eval::Scalar::Bool(v) };
                self.evaluated.insert(node.output[0].clone());
                self.known.insert(node.output[0].clone(), v);
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

    /// Whether the node only has a value if its first input has, and that input is absent (or
    /// it is a `Constant` whose value references an attribute the call does not give).
    fn passes_on_absent(&self, node: &NodeProto) -> bool {
        if !matches!(node.domain(), "" | "ai.onnx") || node.output.len() != 1 {
            return false;
        }
        match node.op_type() {
            "Constant" => {
                node.attribute.iter().any(|a| a.ref_attr_name.as_deref().is_some_and(|r| self.unset.covers(r)))
            }
            "Identity" | "Cast" | "CastLike" => {
                node.input.first().is_some_and(|i| i.is_empty() || self.absent.contains(i))
            }
            _ => false,
        }
    }

    /// `And` with a known false input is false, `Or` with a known true one true, whatever the
    /// other (`x is not None and x != 1.0`, where `x` is omitted, reads a value that is not there).
    fn short_circuit(&self, node: &NodeProto) -> Option<bool> {
        let decisive = match (node.domain(), node.op_type()) {
            ("" | "ai.onnx", "And") => false,
            ("" | "ai.onnx", "Or") => true,
            _ => return None,
        };
        let scalar = |i: &String| self.known.get(i).is_some_and(|v| v.dims.iter().all(|d| *d == 1));
        let hit = node.input.iter().any(|i| scalar(i) && self.known[i].as_bool() == Some(decisive));
        (hit && node.output.len() == 1).then_some(decisive)
    }

    /// Absent values reach an op as omitted inputs; trailing ones are dropped. What the node
    /// computes may be removed once unused (it could not run anyway).
    fn omit_absent_inputs(&mut self, node: &mut NodeProto) {
        if self.absent.is_empty() {
            return;
        }
        let mut fed = false;
        for i in &mut node.input {
            if self.absent.contains(i.as_str()) {
                i.clear();
                fed = true;
            } else if self.fed_by_absent.contains(i.as_str()) {
                fed = true;
            }
        }
        if fed {
            self.fed_by_absent.extend(node.output.iter().cloned());
            self.evaluated.extend(node.output.iter().cloned());
        }
        while node.input.last().is_some_and(String::is_empty) {
            node.input.pop();
        }
    }

    /// `OptionalHasElement` of an omitted value (false) or of a known tensor (true).
    fn has_element(&self, node: &NodeProto) -> Option<bool> {
        if !(matches!(node.domain(), "" | "ai.onnx")
            && node.op_type() == "OptionalHasElement"
            && node.output.len() == 1)
        {
            return None;
        }
        match node.input.first().map(String::as_str) {
            None | Some("") => Some(false),
            Some(i) if self.absent.contains(i) => Some(false),
            Some(i) if self.tensors.contains(i) || self.known.contains_key(i) => Some(true),
            _ => None,
        }
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

/// A `Constant` whose value is in the node (not a reference): a tensor, of any size.
fn is_constant(node: &NodeProto) -> bool {
    matches!(node.domain(), "" | "ai.onnx")
        && node.op_type() == "Constant"
        && node.attribute.iter().all(|a| a.ref_attr_name.is_none())
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
