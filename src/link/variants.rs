//! Reference mode's variants: a function as one kind of call leaves it.
//!
//! ONNX function inputs have no optional marker. A call that leaves an input out (`""`, or
//! fewer inputs than formals) makes ONNX Runtime bind the formal to `""` wherever the body uses
//! it, and refuse the model where that is a required input of an operator, even in a branch the
//! call never takes ("input 1 is marked single but has an empty string"). An attribute without
//! a default that the call does not give leaves a `Constant` referencing it without a value,
//! which ONNX Runtime and onnx.checker refuse too. Inline mode specialises each call; reference
//! mode, which keeps functions as functions, gives such calls a *variant* instead.
//!
//! A variant is made once per (function, inputs given, attributes left out): its inputs are the
//! given ones, its body the function's with what is left out absent ([`leave_out`]: `is None`
//! tests on it folded, what only it fed removed), and its attributes still references, since
//! the call keeps its attributes. It is named after the function and what is left out
//! (`affine__without_bias`), a name no function or operator has (`names`). The call then calls
//! it without its `""` inputs. Calls in a variant's body are redirected the same way, so
//! variants may call variants; calls that give everything stay as they are. Only attributes
//! whose absence matters count: those a `Constant` or a required operator attribute refers
//! to, directly or through the calls the body makes.
//!
//! A variant that would still miss a value (the value reaches a function output, a required
//! operator input, or a branch decided at run time) is not made: the link is refused (E0810),
//! naming the calls, and inline mode, which also binds the attributes, is suggested.

use super::calls::{target, Target};
use super::library::{LinkableFunction, Table};
use super::names::Namer;
use super::specialize::{leave_out, Actual};
use super::walk::{each_node, node_label, site, Scope};
use crate::diagnostics::{codes, Diagnostic};
use crate::proto::onnx::{FunctionProto, GraphProto, NodeProto};
use crate::schema::{self, normalize_domain, FormalOption, Resolution};
use std::collections::{HashMap, HashSet};

/// How many call sites a diagnostic lists before summing up the rest.
const SHOWN: usize = 20;

/// A function, which of its formal inputs a call gives, and the attributes it leaves out.
type Key = (usize, Vec<bool>, Vec<String>);

/// A variant that cannot be made.
struct Failure {
    /// "`d::f` without `bias`".
    what: String,
    /// "`bias`".
    omitted: String,
    /// Why, in words.
    problem: String,
    /// The calls outside variants that need it.
    sites: Vec<String>,
}

struct Variants<'t, 'l> {
    table: &'t mut Table<'l>,
    made: HashMap<Key, Result<usize, usize>>,
    failures: Vec<Failure>,
    names: Namer,
    /// Per function, the attributes without a default whose absence changes its body.
    needs: HashMap<usize, Vec<String>>,
    /// Variants being built: calls in their bodies are not listed as sites.
    building: usize,
}

/// Redirects every call of the main graph and of the bodies of `functions` that leaves out an
/// input, or an attribute its function needs, to a variant added to `table`. Returns the
/// variants that cannot be made, as diagnostics.
pub fn redirect(table: &mut Table, graph: &mut GraphProto, functions: &[usize]) -> Vec<Diagnostic> {
    let names = Namer::new(table.defs().map(|d| d.proto.name()));
    let mut v =
        Variants { table, made: HashMap::new(), failures: Vec::new(), names, needs: HashMap::new(), building: 0 };
    v.rewrite(&mut graph.node, None);
    // Variants are made from the functions as they are: their new bodies go in at the end.
    let mut bodies = Vec::with_capacity(functions.len());
    for &id in functions {
        let mut body = v.table.def(id).proto.node.clone();
        let scope = format!("function `{}`", v.table.def(id).qualname());
        v.rewrite(&mut body, Some(&scope));
        bodies.push((id, body));
    }
    for (id, body) in bodies {
        v.table.set_body(id, body);
    }
    v.failures.into_iter().filter(|f| !f.sites.is_empty()).map(|f| refused(&f)).collect()
}

impl Variants<'_, '_> {
    /// Redirects the calls in `nodes` and their subgraphs; `scope` says where they are (`None`:
    /// the main graph). Returns the first call that cannot be redirected: where, and why.
    fn rewrite(&mut self, nodes: &mut [NodeProto], scope: Option<&str>) -> Option<(String, usize)> {
        let mut first = None;
        for (index, node) in nodes.iter_mut().enumerate() {
            if node.attribute.iter().any(|a| a.g.is_some() || !a.graphs.is_empty()) {
                let label = node_label(node, index);
                for a in &mut node.attribute {
                    let inner = format!("`{}` of {label} in {}", a.name(), scope.unwrap_or("the main graph"));
                    for g in a.g.iter_mut().chain(a.graphs.iter_mut()) {
                        let failed = self.rewrite(&mut g.node, Some(&inner));
                        first = first.or(failed);
                    }
                }
            }
            if let Err(failure) = self.redirect_call(node) {
                let label = node_label(node, index);
                let at = scope.map_or_else(|| label.clone(), |s| format!("{label} in {s}"));
                if self.building == 0 {
                    self.failures[failure].sites.push(at.clone());
                }
                first = first.or(Some((at, failure)));
            }
        }
        first
    }

    /// Points a call that leaves something out at its variant, without its `""` inputs.
    fn redirect_call(&mut self, node: &mut NodeProto) -> Result<(), usize> {
        let Target::Function(id) = target(self.table, node) else { return Ok(()) };
        let formals = self.table.def(id).proto.input.len();
        let given: Vec<bool> = (0..formals).map(|i| node.input.get(i).is_some_and(|s| !s.is_empty())).collect();
        let left_out: Vec<String> =
            self.needs(id).into_iter().filter(|a| !node.attribute.iter().any(|g| g.name() == a)).collect();
        if left_out.is_empty() && given.iter().all(|g| *g) {
            return Ok(());
        }
        let variant = self.variant((id, given, left_out))?;
        node.op_type = Some(self.table.def(variant).proto.name().to_string());
        node.input.retain(|i| !i.is_empty());
        Ok(())
    }

    /// The variant of `key`, made the first time it is asked for.
    fn variant(&mut self, key: Key) -> Result<usize, usize> {
        if let Some(made) = self.made.get(&key) {
            return *made;
        }
        let (id, given, left_out) = &key;
        let def = self.table.def(*id);
        let mut omitted: Vec<&str> =
            def.proto.input.iter().zip(given).filter(|(_, g)| !**g).map(|(n, _)| n.as_str()).collect();
        omitted.extend(left_out.iter().map(String::as_str));
        let what = format!("`{}` without {}", def.qualname(), quoted(&omitted));
        let omitted_list = quoted(&omitted);
        let base = format!("{}__without_{}", def.proto.name(), omitted.join("_"));
        let actuals: Vec<Actual> = given.iter().map(|g| if *g { Actual::Unknown } else { Actual::Absent }).collect();
        let mut f = leave_out(&def.proto, &actuals, left_out);
        let library = def.library.clone();
        let scope = format!("function `{}`", def.qualname());
        self.building += 1;
        let nested = self.rewrite(&mut f.node, Some(&scope));
        self.building -= 1;
        let problem = match nested {
            Some((at, inner)) => {
                let inner = &self.failures[inner];
                Some(format!("calls {} at {at}, which {}", inner.what, inner.problem))
            }
            None => self.missing_value(&f),
        };
        let made = match problem {
            Some(problem) => {
                self.failures.push(Failure { what, omitted: omitted_list, problem, sites: Vec::new() });
                Err(self.failures.len() - 1)
            }
            None => {
                f.name = Some(self.fresh_name(f.domain(), &base));
                Ok(self.table.insert(LinkableFunction::new(f, library)))
            }
        };
        self.made.insert(key, made);
        made
    }

    /// A name for a variant that no function and no operator of its domain has.
    fn fresh_name(&mut self, domain: &str, base: &str) -> String {
        loop {
            let name = self.names.fresh(base.to_string());
            if !schema::registry().knows_operator(domain, &name) {
                return name;
            }
        }
    }

    /// Where a variant's body still needs a value it does not have, in words.
    fn missing_value(&self, f: &FunctionProto) -> Option<String> {
        let mut defined: HashSet<&str> = f.input.iter().map(String::as_str).collect();
        defined.extend(f.node.iter().flat_map(|n| n.output.iter().map(String::as_str)));
        if let Some(o) = f.output.iter().find(|o| !defined.contains(o.as_str())) {
            return Some(format!("would leave its output `{o}` without a value"));
        }
        let name = super::library::qualname(f.domain(), f.name(), f.overload());
        let imports: HashMap<&str, i64> =
            f.opset_import.iter().map(|o| (normalize_domain(o.domain()), o.version())).collect();
        let mut found = None;
        // Omitted inputs are `""`, or gone when they were the last.
        each_node(&f.node, &Scope::Function(&name), &mut |n, index, scope| {
            let Some(&version) = imports.get(normalize_domain(n.domain())) else { return };
            let Resolution::Found(s) = schema::registry().resolve(n.domain(), n.op_type(), version) else { return };
            let missing = s.inputs.iter().enumerate().find(|(i, formal)| {
                formal.option == FormalOption::Single && n.input.get(*i).is_none_or(String::is_empty)
            });
            if let (None, Some((i, formal))) = (&found, missing) {
                let at = site(n, index, scope);
                found = Some(format!("leaves {at} without its required input {i} (`{}`)", formal.name));
            }
        });
        found.or_else(|| {
            crate::validate::function(f).first().map(|p| format!("would break a rule of onnx.checker: {p}"))
        })
    }

    /// The attributes of function `id` without a default whose absence changes its body: those
    /// a `Constant` or a required operator attribute refers to, and those it passes to a call
    /// whose function needs them.
    fn needs(&mut self, id: usize) -> Vec<String> {
        if let Some(n) = self.needs.get(&id) {
            return n.clone();
        }
        // A cycle (refused before linking) would find nothing more.
        self.needs.insert(id, Vec::new());
        let f = &self.table.def(id).proto;
        if f.attribute.is_empty() {
            return Vec::new();
        }
        let imports: HashMap<&str, i64> =
            f.opset_import.iter().map(|o| (normalize_domain(o.domain()), o.version())).collect();
        let mut direct: HashSet<String> = HashSet::new();
        let mut passed: Vec<(usize, String, String)> = Vec::new();
        let table = &*self.table;
        each_node(&f.node, &Scope::Graph, &mut |n, _, _| {
            let callee = match target(table, n) {
                Target::Function(c) => Some(c),
                _ => None,
            };
            for a in &n.attribute {
                let Some(r) = a.ref_attr_name.as_deref() else { continue };
                match callee {
                    Some(c) => passed.push((c, a.name().to_string(), r.to_string())),
                    None if needs_value(n, a.name(), &imports) => {
                        direct.insert(r.to_string());
                    }
                    None => {}
                }
            }
        });
        for (callee, name, r) in passed {
            if self.needs(callee).contains(&name) {
                direct.insert(r);
            }
        }
        let f = &self.table.def(id).proto;
        let needs: Vec<String> = f.attribute.iter().filter(|a| direct.contains(*a)).cloned().collect();
        self.needs.insert(id, needs.clone());
        needs
    }
}

/// Whether the operator node cannot do without its attribute `name`: a `Constant`'s value, or
/// an attribute its schema requires.
fn needs_value(n: &NodeProto, name: &str, imports: &HashMap<&str, i64>) -> bool {
    let domain = normalize_domain(n.domain());
    if domain.is_empty() && n.op_type() == "Constant" {
        return true;
    }
    let Some(&version) = imports.get(domain) else { return false };
    match schema::registry().resolve(domain, n.op_type(), version) {
        Resolution::Found(s) => s.attribute(name).is_some_and(|a| a.required),
        _ => false,
    }
}

/// E0810: a variant that cannot be made, with the calls that need it.
fn refused(f: &Failure) -> Diagnostic {
    let mut d = Diagnostic::error(
        codes::VARIANT_IMPOSSIBLE,
        0,
        format!("reference mode cannot call {}: the body needs what the call leaves out", f.what),
    );
    let count = f.sites.len();
    for s in f.sites.iter().take(SHOWN) {
        d = d.note(format!("called so by {s}"));
    }
    if count > SHOWN {
        d = d.note(format!("and {} more", count - SHOWN));
    }
    d.note(format!("without {}, the function {}", f.omitted, f.problem)).help(
        "link with `--mode inline`, which also binds the call's attributes, so that conditions on them fold; \
         if the body needs the value whatever they are, the call must give it",
    )
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}
