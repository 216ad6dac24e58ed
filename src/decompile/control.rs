//! When a control-flow node is written as Python control flow: the shapes of `If` and `Loop`
//! that onnxsc lowers `if`/`else` and `for i in range(n):` back into, node for node
//! (docs/decompile.md). Any other shape is written as an explicit call with `@graph()` bodies.

use crate::proto::onnx::{GraphProto, NodeProto};
use crate::schema::normalize_domain;
use std::collections::{HashMap, HashSet};

/// For a list of nodes, the last node reading each name (subgraphs included); the names read
/// after the list count as read after every node.
pub struct Reads<'a> {
    last: HashMap<&'a str, usize>,
}

impl<'a> Reads<'a> {
    pub fn of(nodes: &'a [NodeProto], live: &HashSet<&'a str>) -> Self {
        let mut last = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            let mut names = HashSet::new();
            reads(n, &mut names);
            for name in names {
                last.insert(name, i);
            }
        }
        for name in live {
            last.insert(*name, usize::MAX);
        }
        Reads { last }
    }

    /// What is read after node `i`.
    pub fn after(&self, i: usize) -> After<'_, 'a> {
        After { reads: self, index: i }
    }
}

/// The names read after one node.
pub struct After<'r, 'a> {
    reads: &'r Reads<'a>,
    index: usize,
}

impl After<'_, '_> {
    pub fn contains(&self, name: &str) -> bool {
        self.reads.last.get(name).is_some_and(|last| *last > self.index)
    }
}

/// Adds every name `n` reads, in its subgraphs too (a subgraph's outputs included).
pub fn reads<'a>(n: &'a NodeProto, acc: &mut HashSet<&'a str>) {
    acc.extend(n.input.iter().map(String::as_str));
    for a in &n.attribute {
        for g in a.g.iter().chain(&a.graphs) {
            acc.extend(g.output.iter().map(|o| o.name()));
            for inner in &g.node {
                reads(inner, acc);
            }
        }
    }
}

/// Every name the nodes of `g` read, nested subgraphs included.
fn graph_reads(g: &GraphProto) -> HashSet<&str> {
    let mut acc = HashSet::new();
    for n in &g.node {
        reads(n, &mut acc);
    }
    acc
}

/// The names the top-level nodes of `nodes` compute.
fn computed(nodes: &[NodeProto]) -> HashSet<&str> {
    nodes.iter().flat_map(|m| m.output.iter().map(String::as_str)).collect()
}

/// The graph attribute `name` of `n`, when `n` has only graph attributes named in `names`.
fn graph_attribute<'a>(n: &'a NodeProto, name: &str) -> Option<&'a GraphProto> {
    n.attribute.iter().find(|a| a.name() == name && a.ref_attr_name.is_none())?.g.as_ref()
}

/// Whether `n`'s outputs are distinct, named, and each read after it.
fn outputs_all_read(n: &NodeProto, after: &After) -> bool {
    let distinct: HashSet<&str> = n.output.iter().map(String::as_str).collect();
    !n.output.is_empty()
        && distinct.len() == n.output.len()
        && n.output.iter().all(|o| !o.is_empty() && after.contains(o))
}

/// The branches of an `If` that Python's `if` gives back: each branch without inputs computes
/// its outputs itself (distinct values), and every output of the node is read afterwards
/// (onnxsc makes an `If` output of each variable assigned in a branch and used later).
pub fn python_if<'a>(n: &'a NodeProto, after: &After) -> Option<(&'a GraphProto, &'a GraphProto)> {
    if n.op_type() != "If" || !normalize_domain(n.domain()).is_empty() || n.input.len() != 1 || n.input[0].is_empty() {
        return None;
    }
    let (then_g, else_g) = (graph_attribute(n, "then_branch")?, graph_attribute(n, "else_branch")?);
    if n.attribute.len() != 2 || !outputs_all_read(n, after) {
        return None;
    }
    for g in [then_g, else_g] {
        let made = computed(&g.node);
        let outs: HashSet<&str> = g.output.iter().map(|o| o.name()).collect();
        if !g.input.is_empty()
            || !g.initializer.is_empty()
            || !g.sparse_initializer.is_empty()
            || g.output.len() != n.output.len()
            || outs.len() != g.output.len()
            || !outs.iter().all(|o| made.contains(o))
        {
            return None;
        }
    }
    Some((then_g, else_g))
}

/// Whether a branch computes its outputs in their order, each by a node of its own top level.
pub fn in_output_order(g: &GraphProto) -> bool {
    let mut position = HashMap::new();
    for (i, n) in g.node.iter().enumerate() {
        for (j, o) in n.output.iter().enumerate() {
            position.insert(o.as_str(), (i, j));
        }
    }
    let positions: Option<Vec<(usize, usize)>> = g.output.iter().map(|o| position.get(o.name()).copied()).collect();
    positions.is_some_and(|p| p.windows(2).all(|w| w[0] < w[1]))
}

/// A `Loop` that Python's `for` or `while` gives back.
pub struct LoopShape<'a> {
    pub body: &'a GraphProto,
    /// The body's statements: its nodes before `cond_out = Identity(...)`.
    pub steps: &'a [NodeProto],
    /// The carried values whose next value is another's previous one (`a = b`, which onnxsc
    /// writes as an `Identity` after the condition's): `(j, m)`, value `j` takes value `m`'s.
    pub passes: Vec<(usize, usize)>,
    pub kind: LoopKind<'a>,
}

pub enum LoopKind<'a> {
    /// `for i in range(n):`.
    For,
    /// `while c:`: the body's last value of the condition, and the carried value that is the
    /// condition itself (carried when it is read after the loop).
    While { next: &'a str, state: Option<usize> },
}

/// The shape of a `Loop` that `for i in range(n):` or `while c:` gives back: a trip count and no
/// condition (`for`), or a condition and no trip count (`while`); no scan outputs; a body with
/// a node `cond_out = Identity(...)` (where onnxsc puts it, after the body's statements) of the
/// incoming condition (`for`) or of a condition the body computes (`while`), followed only by
/// the `Identity`s of carried values passed on unchanged to later ones (`a = b` before `b` is
/// reassigned), whose other nodes read neither the incoming condition nor (`while`) the
/// iteration number; every carried value computed by the body (distinct values) and either
/// read in the body or after the loop (onnxsc carries the variables read before they are
/// assigned in the body, or used after it).
pub fn python_loop<'a>(n: &'a NodeProto, after: &After) -> Option<LoopShape<'a>> {
    if n.op_type() != "Loop" || !normalize_domain(n.domain()).is_empty() || n.input.len() < 3 {
        return None;
    }
    let is_for = !n.input[0].is_empty() && n.input[1].is_empty();
    let is_while = n.input[0].is_empty() && !n.input[1].is_empty();
    if !(is_for || is_while) || n.attribute.len() != 1 {
        return None;
    }
    let body = graph_attribute(n, "body")?;
    let k = n.input.len() - 2;
    if n.output.len() != k || body.input.len() != k + 2 || body.output.len() != k + 1 {
        return None;
    }
    if !body.initializer.is_empty() || !body.sparse_initializer.is_empty() {
        return None;
    }
    let (index, cond_in, cond_out) = (body.input[0].name(), body.input[1].name(), body.output[0].name());
    let at = body.node.iter().position(|m| m.output.iter().any(|o| o == cond_out))?;
    let (steps, rest) = body.node.split_at(at);
    let (cond, trailing) = rest.split_first()?;
    if !is_identity(cond) || cond.output[0] != cond_out {
        return None;
    }
    let next = cond.input[0].as_str();
    let params: Vec<&str> = body.input[2..].iter().map(|p| p.name()).collect();
    let nexts: Vec<&str> = body.output[1..].iter().map(|o| o.name()).collect();
    let passes = passes(trailing, &params, &nexts)?;
    let mut read = HashSet::new();
    for s in body.node.iter().filter(|m| !std::ptr::eq(*m, cond)) {
        reads(s, &mut read);
    }
    let mut made = computed(steps);
    made.extend(passes.iter().map(|(j, _)| nexts[*j]));
    let distinct: HashSet<&str> = nexts.iter().copied().collect();
    if read.contains(cond_in) || distinct.len() != k || !nexts.iter().all(|q| made.contains(q)) {
        return None;
    }
    let kind = if is_for {
        if next != cond_in {
            return None;
        }
        LoopKind::For
    } else {
        // The condition carried as a value is the condition variable: it starts as the condition.
        let state = nexts.iter().position(|q| *q == next);
        let computed_here = computed(steps).contains(next);
        if read.contains(index) || !computed_here || state.is_some_and(|j| n.input[2 + j] != n.input[1]) {
            return None;
        }
        LoopKind::While { next, state }
    };
    let names: Vec<&str> = n.output.iter().map(String::as_str).collect();
    let distinct_out: HashSet<&str> = names.iter().copied().collect();
    if distinct_out.len() != k || names.iter().any(|o| o.is_empty()) {
        return None;
    }
    let carried = params.iter().zip(&names).all(|(p, o)| read.contains(p) || after.contains(o));
    carried.then_some(LoopShape { body, steps, passes, kind })
}

/// `Identity` with one input and one output, no attributes.
fn is_identity(m: &NodeProto) -> bool {
    m.op_type() == "Identity"
        && normalize_domain(m.domain()).is_empty()
        && m.input.len() == 1
        && m.output.len() == 1
        && m.attribute.is_empty()
}

/// The nodes after the condition's as `(j, m)`: each an `Identity` giving carried value `j` the
/// previous value of a later carried value `m`, in the order of `j` (the order onnxsc writes
/// them, and the order in which `v_j = v_m` reads `v_m` before it changes).
fn passes(trailing: &[NodeProto], params: &[&str], nexts: &[&str]) -> Option<Vec<(usize, usize)>> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for t in trailing {
        if !is_identity(t) {
            return None;
        }
        let m = params.iter().position(|p| *p == t.input[0])?;
        let j = nexts.iter().position(|q| *q == t.output[0])?;
        if m <= j || out.last().is_some_and(|(previous, _)| *previous >= j) {
            return None;
        }
        out.push((j, m));
    }
    Some(out)
}

/// Whether a loop body can compute each carried value straight into its variable: none is
/// passed on unchanged, the nodes computing them come in the carried order (onnxsc orders
/// carried variables by first assignment), and no node after the one computing a value reads
/// the value it replaces.
pub fn in_carried_order(shape: &LoopShape) -> bool {
    if !shape.passes.is_empty() {
        return false;
    }
    let steps = shape.steps;
    let mut position = HashMap::new();
    for (i, n) in steps.iter().enumerate() {
        for (j, o) in n.output.iter().enumerate() {
            position.insert(o.as_str(), (i, j));
        }
    }
    let mut previous = None;
    for (p, q) in shape.body.input.iter().skip(2).zip(shape.body.output.iter().skip(1)) {
        let Some(&at) = position.get(q.name()) else { return false };
        if previous.is_some_and(|before| before >= at) {
            return false;
        }
        previous = Some(at);
        let mut later = HashSet::new();
        for n in &steps[at.0 + 1..] {
            reads(n, &mut later);
        }
        if later.contains(p.name()) {
            return false;
        }
    }
    true
}

/// Whether the variable holding the loop's input `i` (a carried value's first value, or a
/// `while` condition) may carry it: nothing reads that value after the loop or inside it, and
/// no other input of the loop is it.
pub fn reusable_input(n: &NodeProto, body: &GraphProto, i: usize, after: &After) -> bool {
    let init = n.input[i].as_str();
    let uses = n.input.iter().filter(|i| i.as_str() == init).count();
    !init.is_empty() && uses == 1 && !after.contains(init) && !graph_reads(body).contains(init)
}
