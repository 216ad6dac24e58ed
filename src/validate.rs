//! onnx's structural rules for models and functions, as checks of onnxsc's own.
//!
//! `onnx.checker.check_model` refuses a model that breaks any of these rules, each of which was
//! observed with onnx 1.23 (docs/robustness.md lists them). `onnxsc link` checks every model and
//! library it reads, and the model it writes, against them, so that it never writes a model the
//! checker refuses; the fuzz targets check every output of `build` and `link` against them too.
//! The rules are those the checker applies without shape inference: IR version and opset
//! imports; each node's domain imported by the model or function that holds it; operators of the
//! ONNX domains known at the imported version, not deprecated, with input and output counts in
//! range, no empty name for a required input, and attributes known, typed, of the right type,
//! unique and present when required; graphs and function bodies in single static assignment
//! form and topologically sorted (subgraphs see the names of the graphs around them); graph
//! outputs computed; main-graph inputs and outputs typed; functions named, without duplicate
//! inputs or attributes, unique by (domain, name, overload), at most 10,000; and protobuf
//! nesting no deeper than the 100 levels protobuf readers accept.

use crate::onnx::{attribute_kind, AttrType};
use crate::proto::onnx::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
};
use crate::schema::{self, normalize_domain, FormalOption, Resolution};
use std::collections::{HashMap, HashSet};

/// The most local functions onnx.checker accepts in a model.
pub const MAX_FUNCTIONS: usize = 10_000;
/// The deepest message nesting protobuf readers (onnx's, ONNX Runtime's, prost) accept.
pub const MAX_MESSAGE_DEPTH: usize = 100;
pub use crate::onnx::MAX_CALL_DEPTH;
/// Problems reported at most; the first one is usually enough.
const SHOWN: usize = 20;

/// One broken rule: where, what, and which kind of rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub location: String,
    pub message: String,
    pub rule: Rule,
}

/// The kinds of rules, each fixed its own way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// How the model, its functions and its nodes are put together.
    Structure,
    /// A main-graph input or output without a complete type.
    Untyped,
    /// A value computed twice, or used before it is computed.
    Order,
    /// A node's domain not imported where it is used.
    Import,
    /// A node that does not fit its operator at the imported version.
    Operator,
    /// More functions, or deeper nesting, than ONNX's readers accept.
    Limit,
}

impl Rule {
    /// How a file that breaks the rule is fixed, as a diagnostic's help line.
    pub fn help(self) -> &'static str {
        match self {
            Rule::Structure => {
                "the file decodes, but is not put together as onnx.checker requires (docs/robustness.md lists the rules): export or build it again"
            }
            Rule::Untyped => {
                "onnx.checker requires an element type and a shape on every input and output of the main graph: export the model again with `torch.onnx.export`, which writes them, or add the type (`onnx.helper.make_tensor_value_info`)"
            }
            Rule::Order => {
                "each value must be computed once, by a node before the nodes that use it: sort the graph's nodes in that order, or export the model again"
            }
            Rule::Import => {
                "add an opset import for the domain (`onnx.helper.make_opsetid`) to the model or function that uses it"
            }
            Rule::Operator => {
                "the node does not fit its operator at the opset version imported: import the version it was written for, or export it again for this one"
            }
            Rule::Limit => {
                "the file is past one of ONNX's limits (docs/robustness.md): split its functions among several libraries, or nest its graphs less deeply"
            }
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// The domains whose operators onnx.checker knows and checks; nodes of other domains are
/// custom operators or function calls, which it does not check.
fn checked_domain(domain: &str) -> bool {
    matches!(normalize_domain(domain), "" | "ai.onnx.ml" | "ai.onnx.training" | "ai.onnx.preview.training")
}

struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn report(&mut self, location: &str, message: String) {
        self.report_as(Rule::Structure, location, message);
    }

    fn report_as(&mut self, rule: Rule, location: &str, message: String) {
        if self.problems.len() < SHOWN {
            self.problems.push(Problem { location: location.to_string(), message, rule });
        }
    }
}

/// The broken rules of a model (empty when onnx.checker would accept its structure).
pub fn model(m: &ModelProto) -> Vec<Problem> {
    let mut c = Checker { problems: Vec::new() };
    if m.ir_version() < 1 {
        c.report("the model", "it has no IR version".into());
    }
    if m.opset_import.is_empty() {
        c.report("the model", "it imports no opset".into());
    }
    let imports = imports_of(&m.opset_import);
    match &m.graph {
        Some(g) => {
            let mut scope = Scope::default();
            c.graph(g, "the main graph", &imports, &mut scope, true, false, 2);
        }
        None => c.report("the model", "it has no graph".into()),
    }
    if m.functions.len() > MAX_FUNCTIONS {
        c.report_as(
            Rule::Limit,
            "the model",
            format!("it carries {} local functions; onnx.checker accepts at most {MAX_FUNCTIONS}", m.functions.len()),
        );
    }
    let mut seen = HashSet::new();
    for f in &m.functions {
        let id = (f.domain().to_string(), f.name().to_string(), f.overload().to_string());
        if !seen.insert(id) {
            c.report(&function_location(f), "the model carries two functions of this domain and name".into());
        }
        c.function(f, 2);
    }
    c.problems
}

/// The broken rules of one function on its own (a library's, checked where it is read).
pub fn function(f: &FunctionProto) -> Vec<Problem> {
    let mut c = Checker { problems: Vec::new() };
    c.function(f, 2);
    c.problems
}

fn function_location(f: &FunctionProto) -> String {
    let domain = if f.domain().is_empty() { "ai.onnx" } else { f.domain() };
    format!("function `{domain}::{}`", f.name())
}

fn imports_of(opsets: &[OperatorSetIdProto]) -> HashMap<&str, i64> {
    let mut out = HashMap::new();
    for o in opsets {
        out.entry(normalize_domain(o.domain())).or_insert(o.version());
    }
    out
}

/// A type as onnx.checker requires it of main-graph inputs and outputs: its kind set, a tensor
/// with an element type and a shape (perhaps of unknown rank), containers with complete types.
fn complete_type(ty: &crate::proto::onnx::TypeProto) -> bool {
    use crate::proto::onnx::type_proto::Value;
    match &ty.value {
        None => false,
        Some(Value::TensorType(t)) => t.elem_type.is_some() && t.shape.is_some(),
        Some(Value::SparseTensorType(t)) => t.elem_type.is_some() && t.shape.is_some(),
        Some(Value::SequenceType(s)) => s.elem_type.as_deref().is_some_and(complete_type),
        Some(Value::OptionalType(o)) => o.elem_type.as_deref().is_some_and(complete_type),
        Some(Value::MapType(m)) => m.key_type.is_some() && m.value_type.as_deref().is_some_and(complete_type),
        Some(Value::OpaqueType(_)) => true,
    }
}

/// The names visible in a graph: those of the graphs around it, then its own.
#[derive(Default)]
struct Scope<'a> {
    names: Vec<HashSet<&'a str>>,
}

impl<'a> Scope<'a> {
    fn defined(&self, name: &str) -> bool {
        self.names.iter().any(|s| s.contains(name))
    }
}

impl Checker {
    fn function(&mut self, f: &FunctionProto, depth: usize) {
        let here = function_location(f);
        if f.name().is_empty() {
            self.report(&here, "it has no name".into());
        }
        let mut inputs = HashSet::new();
        for i in &f.input {
            if !inputs.insert(i.as_str()) {
                self.report(&here, format!("its input `{i}` is listed twice"));
            }
        }
        let mut attributes = HashSet::new();
        for a in f.attribute.iter().map(String::as_str).chain(f.attribute_proto.iter().map(|a| a.name())) {
            if !attributes.insert(a) {
                self.report(&here, format!("its attribute `{a}` is declared twice"));
            }
        }
        let imports = imports_of(&f.opset_import);
        let mut scope = Scope { names: vec![inputs] };
        self.nodes(&f.node, &here, &imports, &mut scope, true, depth + 1);
    }

    /// A graph's nodes and outputs. `main`: the model's graph (typed inputs and outputs).
    #[allow(clippy::too_many_arguments, reason = "the state of the walk where this graph is")]
    fn graph<'a>(
        &mut self,
        g: &'a GraphProto,
        here: &str,
        imports: &HashMap<&str, i64>,
        scope: &mut Scope<'a>,
        main: bool,
        in_function: bool,
        depth: usize,
    ) {
        if depth + 5 > MAX_MESSAGE_DEPTH {
            self.report_as(
                Rule::Limit,
                here,
                format!("graphs are nested deeper than the {MAX_MESSAGE_DEPTH} protobuf levels readers accept"),
            );
            return;
        }
        let mut own: HashSet<&str> = HashSet::new();
        for v in &g.input {
            if main {
                self.typed(v, here, "input");
            }
            own.insert(v.name());
        }
        for t in &g.initializer {
            own.insert(t.name());
        }
        for s in &g.sparse_initializer {
            if let Some(v) = &s.values {
                own.insert(v.name());
            }
        }
        scope.names.push(own);
        self.nodes(&g.node, here, imports, scope, in_function, depth + 1);
        for v in &g.output {
            if main {
                self.typed(v, here, "output");
            }
            if !scope.defined(v.name()) {
                self.report_as(
                    Rule::Order,
                    here,
                    format!("its output `{}` is computed by none of its nodes", v.name()),
                );
            }
        }
        scope.names.pop();
    }

    /// What onnx.checker requires of a main-graph input or output: a type, and for a tensor an
    /// element type and a shape (possibly of unknown rank).
    fn typed(&mut self, v: &ValueInfoProto, here: &str, what: &str) {
        if !v.r#type.as_ref().is_some_and(complete_type) {
            self.report_as(
                Rule::Untyped,
                here,
                format!("its {what} `{}` has no complete type (a tensor needs an element type and a shape)", v.name()),
            );
        }
    }

    /// Nodes in order: each input defined before, each output new in this graph.
    fn nodes<'a>(
        &mut self,
        nodes: &'a [NodeProto],
        here: &str,
        imports: &HashMap<&str, i64>,
        scope: &mut Scope<'a>,
        in_function: bool,
        depth: usize,
    ) {
        let mut outputs: HashSet<&str> = HashSet::new();
        for (index, n) in nodes.iter().enumerate() {
            let at = || match n.name() {
                "" => format!("unnamed {} node #{index} in {here}", n.op_type()),
                name => format!("node `{name}` in {here}"),
            };
            for i in n.input.iter().filter(|i| !i.is_empty()) {
                if !scope.defined(i) {
                    self.report_as(Rule::Order, &at(), format!("its input `{i}` is computed by no earlier node"));
                }
            }
            self.node(n, &at(), imports, scope, in_function, depth);
            for o in n.output.iter().filter(|o| !o.is_empty()) {
                if !outputs.insert(o) {
                    self.report_as(
                        Rule::Order,
                        &at(),
                        format!("its output `{o}` is computed twice (the graph must be in SSA form)"),
                    );
                }
                if let Some(own) = scope.names.last_mut() {
                    own.insert(o);
                }
            }
        }
    }

    fn node<'a>(
        &mut self,
        n: &'a NodeProto,
        at: &str,
        imports: &HashMap<&str, i64>,
        scope: &mut Scope<'a>,
        in_function: bool,
        depth: usize,
    ) {
        if n.op_type().is_empty() {
            self.report(at, "it has no operator type".into());
        }
        let domain = normalize_domain(n.domain());
        let Some(&version) = imports.get(domain) else {
            let shown = if domain.is_empty() { "ai.onnx" } else { domain };
            self.report_as(Rule::Import, at, format!("its domain `{shown}` is not imported where it is used"));
            return;
        };
        let mut names = HashSet::new();
        for a in &n.attribute {
            if a.name().is_empty() {
                self.report(at, "it has an attribute without a name".into());
            }
            if !names.insert(a.name()) {
                self.report(at, format!("its attribute `{}` is given twice", a.name()));
            }
            self.attribute(a, at);
            for g in a.g.iter().chain(&a.graphs) {
                let inner = format!("`{}` of {at}", a.name());
                self.graph(g, &inner, imports, scope, false, in_function, depth + 2);
            }
        }
        if checked_domain(domain) {
            self.schema(n, at, domain, version);
        }
    }

    fn attribute(&mut self, a: &AttributeProto, at: &str) {
        let Some(declared) = a.r#type.and_then(AttrType::from_proto_code) else {
            self.report(at, format!("its attribute `{}` has no type", a.name()));
            return;
        };
        // A reference takes its value at the call (onnx.checker accepts one anywhere).
        if a.ref_attr_name.is_some() {
            return;
        }
        let mut probe = a.clone();
        probe.r#type = None;
        if attribute_kind(&probe).is_some_and(|held| held != declared) {
            self.report(at, format!("its attribute `{}` declares one type and holds another", a.name()));
        }
    }

    /// The operator's schema at the imported version: known, current, and the node fits it.
    fn schema(&mut self, n: &NodeProto, at: &str, domain: &str, version: i64) {
        let Resolution::Found(s) = schema::registry().resolve(domain, n.op_type(), version) else {
            self.report_as(
                Rule::Operator,
                at,
                format!("no operator `{}` exists at version {version} of its domain", n.op_type()),
            );
            return;
        };
        if s.deprecated {
            self.report_as(Rule::Operator, at, format!("`{}` is deprecated at version {version}", n.op_type()));
        }
        let (ins, outs) = (n.input.len() as u32, n.output.len() as u32);
        if ins < s.min_input || ins > s.max_input {
            self.report_as(
                Rule::Operator,
                at,
                format!("it has {ins} inputs; `{}` takes {} to {}", n.op_type(), s.min_input, s.max_input),
            );
        }
        if outs < s.min_output || outs > s.max_output {
            self.report_as(
                Rule::Operator,
                at,
                format!("it has {outs} outputs; `{}` gives {} to {}", n.op_type(), s.min_output, s.max_output),
            );
        }
        for (i, formal) in s.inputs.iter().enumerate() {
            if formal.option == FormalOption::Single && n.input.get(i).is_some_and(|x| x.is_empty()) {
                self.report_as(
                    Rule::Operator,
                    at,
                    format!("its required input {i} (`{}`) has an empty name", formal.name),
                );
            }
        }
        for a in &n.attribute {
            match s.attribute(a.name()) {
                None => {
                    self.report_as(Rule::Operator, at, format!("`{}` has no attribute `{}`", n.op_type(), a.name()));
                }
                Some(expected) => {
                    if a.r#type.and_then(AttrType::from_proto_code) != Some(expected.ty) {
                        self.report_as(
                            Rule::Operator,
                            at,
                            format!("its attribute `{}` is not of type {}", a.name(), expected.ty.proto_name()),
                        );
                    }
                }
            }
        }
        for required in s.attributes.iter().filter(|a| a.required) {
            if !n.attribute.iter().any(|a| a.name() == required.name) {
                self.report_as(Rule::Operator, at, format!("it lacks the required attribute `{}`", required.name));
            }
        }
    }
}
