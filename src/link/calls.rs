//! Which nodes are calls, and what they call: each call resolved to a function (the model's or a
//! library's), checked against its signature, and the functions reachable from the roots found,
//! callees before callers; unresolved calls and cycles are errors. And the deepest chain of
//! calls among functions, which onnx.checker and ONNX Runtime limit.

use super::interface::check_call;
use super::library::{qualname, Table};
use super::walk::{each_node, site, Scope};
use crate::diagnostics::{codes, Diagnostic};
use crate::proto::onnx::NodeProto;
use crate::schema;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Function(usize),
    Operator,
    Unresolved,
}

/// What a node is. An operator of a known domain wins over a function of the same name, as in
/// ONNX Runtime (the table knows which functions such operators shadow); any other node must be
/// a call.
pub fn target(table: &Table, node: &NodeProto) -> Target {
    let (domain, op) = (node.domain(), node.op_type());
    match table.lookup(domain, op, node.overload()) {
        Some(id) if !table.def(id).shadowed => Target::Function(id),
        Some(_) => Target::Operator,
        None if schema::registry().knows_operator(domain, op) => Target::Operator,
        None => Target::Unresolved,
    }
}

/// How many diagnostics of one kind are shown before the rest are summed up.
const SHOWN: usize = 20;

/// The functions reachable from the main graph and from `roots`, callees first. Reports
/// unresolved calls, calls that contradict their function's signature, and recursion.
pub fn reachable(table: &Table, graph: &[NodeProto], roots: &[usize], diags: &mut Vec<Diagnostic>) -> Vec<usize> {
    let mut r = Reach {
        table,
        state: HashMap::new(),
        order: Vec::new(),
        stack: Vec::new(),
        unresolved: Vec::new(),
        unresolved_index: HashMap::new(),
        bad_calls: Vec::new(),
        cycles: Vec::new(),
    };
    let mut callees = Vec::new();
    r.scan(graph, &Scope::Graph, &mut callees);
    for id in callees.into_iter().chain(roots.iter().copied()) {
        r.visit(id);
    }
    let Reach { order, unresolved, bad_calls, cycles, .. } = r;
    for ((domain, name, overload), sites) in unresolved {
        let count = sites.len();
        let callers = if count == 1 { "a node calls it".to_string() } else { format!("{count} nodes call it") };
        let mut d = Diagnostic::error(
            codes::UNRESOLVED_CALL,
            0,
            format!("no function `{}` is defined, but {callers}", qualname(&domain, &name, &overload)),
        );
        for s in sites.iter().take(SHOWN) {
            d = d.note(format!("called by {s}"));
        }
        if count > SHOWN {
            d = d.note(format!("and {} more", count - SHOWN));
        }
        diags.push(d.help("link a library that defines it: an `onnxsc build` output or the `.onnxs` sources"));
    }
    let extra = bad_calls.len().saturating_sub(SHOWN);
    for (i, (callee, s, problems)) in bad_calls.into_iter().take(SHOWN).enumerate() {
        let mut d = Diagnostic::error(
            codes::CALL_SIGNATURE_MISMATCH,
            0,
            format!("{s} does not match the signature of `{callee}`"),
        );
        for p in problems {
            d = d.note(p);
        }
        if i + 1 == SHOWN && extra > 0 {
            d = d.note(format!("{extra} more calls do not match their function"));
        }
        diags.push(d.help("link the library the model was exported against, or export the model again"));
    }
    for cycle in cycles {
        let path: Vec<String> = cycle.iter().map(|id| format!("`{}`", table.def(*id).qualname())).collect();
        diags.push(
            Diagnostic::error(
                codes::RECURSIVE_FUNCTIONS,
                0,
                format!("`{}` calls itself", table.def(cycle[0]).qualname()),
            )
            .note(format!("through {}", path.join(" -> ")))
            .help("ONNX functions cannot be recursive: a call cycle can be neither inlined nor run"),
        );
    }
    order
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    New,
    Active,
    Done,
}

type Key = (String, String, String);

struct Reach<'t> {
    table: &'t Table<'t>,
    /// Per function visited: the libraries may hold many more than a link reaches.
    state: HashMap<usize, State>,
    order: Vec<usize>,
    stack: Vec<usize>,
    unresolved: Vec<(Key, Vec<String>)>,
    unresolved_index: HashMap<Key, usize>,
    bad_calls: Vec<(String, String, Vec<String>)>,
    cycles: Vec<Vec<usize>>,
}

impl Reach<'_> {
    /// Resolves and checks the calls in `nodes`, collecting their callees.
    fn scan(&mut self, nodes: &[NodeProto], scope: &Scope, callees: &mut Vec<usize>) {
        each_node(nodes, scope, &mut |node, index, scope| match target(self.table, node) {
            Target::Operator => {}
            Target::Function(id) => {
                let problems = check_call(&self.table.def(id).signature, node);
                if !problems.is_empty() {
                    self.bad_calls.push((self.table.def(id).qualname(), site(node, index, scope), problems));
                }
                callees.push(id);
            }
            Target::Unresolved => {
                let key = (node.domain().to_string(), node.op_type().to_string(), node.overload().to_string());
                let next = self.unresolved.len();
                let slot = *self.unresolved_index.entry(key.clone()).or_insert(next);
                if slot == next {
                    self.unresolved.push((key, Vec::new()));
                }
                self.unresolved[slot].1.push(site(node, index, scope));
            }
        });
    }

    fn visit(&mut self, id: usize) {
        match self.state.get(&id).copied().unwrap_or(State::New) {
            State::Done => {}
            State::Active => {
                let start = self.stack.iter().position(|s| *s == id).unwrap_or(0);
                let mut cycle = self.stack[start..].to_vec();
                cycle.push(id);
                self.cycles.push(cycle);
            }
            State::New => {
                self.state.insert(id, State::Active);
                self.stack.push(id);
                let mut callees = Vec::new();
                let table = self.table;
                let name = table.def(id).qualname();
                self.scan(&table.def(id).proto.node, &Scope::Function(&name), &mut callees);
                for c in callees {
                    self.visit(c);
                }
                self.stack.pop();
                self.state.insert(id, State::Done);
                self.order.push(id);
            }
        }
    }
}

/// The longest chain of calls among the functions of `order` (callees before callers, as
/// [`reachable`] orders them), outermost first: each function on it calls the next (in its body
/// or a subgraph of it). The first of the longest in `order`, so the same every time.
pub fn deepest_chain(table: &Table, order: &[usize]) -> Vec<usize> {
    // Per function: the length of the longest chain it starts, and the next function on it.
    let mut depth: HashMap<usize, (usize, Option<usize>)> = HashMap::new();
    let mut deepest: Option<(usize, usize)> = None;
    for &id in order {
        let mut best = (1, None);
        each_node(&table.def(id).proto.node, &Scope::Graph, &mut |n, _, _| {
            if let Target::Function(callee) = target(table, n) {
                if let Some(&(d, _)) = depth.get(&callee) {
                    if d + 1 > best.0 {
                        best = (d + 1, Some(callee));
                    }
                }
            }
        });
        depth.insert(id, best);
        if deepest.is_none_or(|(d, _)| best.0 > d) {
            deepest = Some((best.0, id));
        }
    }
    let mut chain = Vec::new();
    let mut next = deepest.map(|(_, id)| id);
    while let Some(id) = next {
        chain.push(id);
        next = depth.get(&id).and_then(|(_, n)| *n);
    }
    chain
}

/// E0811: a chain of calls deeper than onnx.checker and ONNX Runtime accept, shortened in the
/// middle, with the node of the main graph that starts it.
pub fn too_deep(table: &Table, chain: &[usize], graph: &[NodeProto]) -> Diagnostic {
    let name = |id: &usize| format!("`{}`", table.def(*id).qualname());
    let shown: Vec<String> = if chain.len() <= 8 {
        chain.iter().map(name).collect()
    } else {
        let (head, tail) = (&chain[..4], &chain[chain.len() - 3..]);
        let middle = format!("({} more)", chain.len() - 7);
        head.iter().map(name).chain(std::iter::once(middle)).chain(tail.iter().map(name)).collect()
    };
    let mut d = Diagnostic::error(
        codes::CALL_CHAIN_TOO_DEEP,
        0,
        format!(
            "functions call each other {} deep, more than the {} onnx.checker and ONNX Runtime accept",
            chain.len(),
            crate::validate::MAX_CALL_DEPTH
        ),
    )
    .note(format!("through {}", shown.join(" -> ")));
    let mut start = None;
    each_node(graph, &Scope::Graph, &mut |n, index, scope| {
        if start.is_none() && chain.first().is_some_and(|c| target(table, n) == Target::Function(*c)) {
            start = Some(site(n, index, scope));
        }
    });
    if let Some(s) = start {
        d = d.note(format!("the chain starts at {s}"));
    }
    d.help(format!(
        "link with `--mode inline`, which expands the calls instead of nesting them; or make the library's calls nest at most {} deep",
        crate::validate::MAX_CALL_DEPTH
    ))
}
