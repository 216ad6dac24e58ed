//! One function's text: the signature (the recorded one, `signature`, else inputs, then
//! attributes without and with defaults), the nodes as statements, `If` as Python's `if`/`else`
//! and `Loop` as `for`/`while` where onnxsc lowers them back to the same node (`control`), every
//! other subgraph as a nested `@graph()` function, and the `return`.

use super::control::{self, After, LoopKind, LoopShape, Reads};
use super::literal;
use super::names::{is_identifier, is_plain, Idents, Scopes};
use super::recorded_signature;
use super::{ModuleNames, Unsupported};
use crate::onnx::metadata::SignatureRecord;
use crate::onnx::{attribute_kind, AttrType, ElemType};
use crate::proto::onnx::{AttributeProto, FunctionProto, GraphProto, NodeProto};
use crate::schema::normalize_domain;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// What writing a function learned that the module header must provide.
#[derive(Default)]
pub struct Needs {
    pub graph: bool,
    /// Annotations and `@torch_op`.
    pub types: recorded_signature::TypeNeeds,
    /// `helper.make_tensor` (which names `TensorProto` too).
    pub make_tensor: bool,
    /// `TensorProto.FLOAT` as a data type.
    pub tensor_proto: bool,
}

/// Writes one function.
pub struct FunctionWriter<'m> {
    module: &'m ModuleNames,
    /// The function's own opset versions, by domain.
    imports: HashMap<String, i64>,
    idents: Idents,
    scopes: Scopes,
    attributes: HashMap<String, String>,
    /// Branch outputs written as the `If`'s output variable (`if_statement`).
    renames: HashMap<String, String>,
    out: String,
    pub needs: Needs,
}

const INDENT: &str = "    ";

/// A Python loop's first line: `for` with the trip count, `while` with the condition.
enum Head {
    For(String),
    While(String),
}

impl<'m> FunctionWriter<'m> {
    pub fn new(module: &'m ModuleNames, f: &FunctionProto) -> Self {
        let imports = f.opset_import.iter().map(|o| (normalize_domain(o.domain()).to_string(), o.version())).collect();
        FunctionWriter {
            module,
            imports,
            idents: module.idents.clone(),
            scopes: Scopes::default(),
            attributes: HashMap::new(),
            renames: HashMap::new(),
            out: String::new(),
            needs: Needs::default(),
        }
    }

    /// The function, from its decorator to its `return`.
    pub fn function(
        mut self,
        f: &FunctionProto,
        python_name: &str,
        decorator: &str,
    ) -> Result<(String, Needs), Unsupported> {
        self.scopes.push();
        let inputs: Vec<String> = f.input.iter().map(|i| self.scopes.define(&mut self.idents, i)).collect();
        let names: Vec<&str> =
            f.attribute.iter().map(String::as_str).chain(f.attribute_proto.iter().map(|a| a.name())).collect();
        let attributes: Vec<String> = names.iter().map(|n| self.attribute_ident(n)).collect();
        let record = recorded_signature::recorded(f).filter(|r| !r.parameters.is_empty());
        let recorded = match &record {
            Some(r) => self.recorded_parameters(r)?,
            None => None,
        };
        let (params, decorator, returns) = match (recorded, &record) {
            (Some(params), Some(r)) => {
                let torch_op = recorded_signature::torch_op_decorator(r, f.domain(), &mut self.needs.types);
                let returns = recorded_signature::return_annotation(r, &self.module.type_vars, &mut self.needs.types);
                (params, torch_op.unwrap_or_else(|| decorator.to_string()), returns)
            }
            _ => (self.parameters(f, inputs, &attributes)?, decorator.to_string(), None),
        };
        let returns = returns.map(|r| format!(" -> {r}")).unwrap_or_default();
        let _ = writeln!(self.out, "{decorator}\ndef {python_name}({}){returns}:", params.join(", "));
        if let Some(doc) = f.doc_string.as_deref().filter(|d| !d.trim().is_empty()) {
            let _ = writeln!(self.out, "{INDENT}{}", docstring(doc));
        }
        if let Some(r) = record.as_ref().filter(|r| !r.ignored.is_empty()) {
            let deleted = r.ignored.iter().map(|n| self.parameter_ident(n)).collect::<Result<Vec<_>, _>>()?;
            let _ = writeln!(self.out, "{INDENT}del {}", deleted.join(", "));
        }
        let live: HashSet<&str> = f.output.iter().map(String::as_str).collect();
        self.nodes(&f.node, 1, &live)?;
        let outputs = f.output.iter().map(|o| self.value(o)).collect::<Result<Vec<_>, _>>()?;
        if outputs.is_empty() {
            return Err(Unsupported::new("no outputs"));
        }
        let _ = writeln!(self.out, "{INDENT}return {}", outputs.join(", "));
        Ok((self.out, self.needs))
    }

    /// The parameters from the FunctionProto alone: the inputs, then the attributes without a
    /// default (typed as the references to them say), then those with one.
    fn parameters(
        &mut self,
        f: &FunctionProto,
        inputs: Vec<String>,
        attributes: &[String],
    ) -> Result<Vec<String>, Unsupported> {
        let mut params = inputs;
        let referenced = referenced_attribute_types(&f.node, &self.imports);
        for (name, ident) in f.attribute.iter().zip(attributes) {
            let ty = referenced.get(name.as_str()).copied().unwrap_or(AttrType::Int);
            params.push(format!("{ident}: {}", annotation(ty)?));
        }
        for (a, ident) in f.attribute_proto.iter().zip(&attributes[f.attribute.len()..]) {
            let ty = attribute_kind(a)
                .ok_or_else(|| Unsupported::new(format!("an attribute `{}` without a type", a.name())))?;
            let default = self.attribute_value(a, false)?;
            params.push(format!("{ident}: {} = {default}", annotation(ty)?));
        }
        Ok(params)
    }

    /// The parameters as the recorded signature has them, in source order, with their types and
    /// defaults; `None` when that order is not valid Python once the `= None` defaults are left
    /// out. Inputs and attributes that may be None are written as plain ones: the uses the
    /// source guarded with `if x is not None:` come back as an `If` on `OptionalHasElement`,
    /// which does not tell the compiler that the value is there.
    fn recorded_parameters(&mut self, r: &SignatureRecord) -> Result<Option<Vec<String>>, Unsupported> {
        let mut params = Vec::new();
        let mut defaults_started = false;
        for name in &r.parameters {
            let ident = self.parameter_ident(name)?;
            let needs = &mut self.needs.types;
            let (text, has_default) = if let Some(input) = r.inputs.iter().find(|i| &i.name == name) {
                match recorded_signature::input_annotation(input.ty.as_deref(), r, &self.module.type_vars, needs) {
                    Some(a) => (format!("{ident}: {a}"), false),
                    None => (ident, false),
                }
            } else if let Some(a) = r.attributes.iter().find(|a| &a.name == name) {
                let ann = a.ty.python_name();
                match a.default.as_ref().filter(|v| !v.is_null()) {
                    Some(v) => {
                        let literal = recorded_signature::default_literal(v).ok_or_else(|| {
                            Unsupported::new(format!("a default of `{name}` that is not a Python value"))
                        })?;
                        (format!("{ident}: {ann} = {literal}"), true)
                    }
                    None => (format!("{ident}: {ann}"), false),
                }
            } else {
                continue;
            };
            if defaults_started && !has_default {
                return Ok(None);
            }
            defaults_started |= has_default;
            params.push(text);
        }
        Ok(Some(params))
    }

    /// The identifier of a parameter, input or attribute.
    fn parameter_ident(&self, name: &str) -> Result<String, Unsupported> {
        match self.attributes.get(name) {
            Some(ident) => Ok(ident.clone()),
            None => self.value(name),
        }
    }

    fn attribute_ident(&mut self, name: &str) -> String {
        let ident = self.idents.fresh(name, "attribute");
        self.attributes.insert(name.to_string(), ident.clone());
        ident
    }

    /// The identifier of a value in scope.
    fn value(&self, name: &str) -> Result<String, Unsupported> {
        self.scopes
            .lookup(name)
            .map(str::to_string)
            .ok_or_else(|| Unsupported::new(format!("a use of `{name}` where nothing defines it")))
    }

    /// The statements of `nodes` at `depth`; `live` holds the names read after them.
    fn nodes(&mut self, nodes: &[NodeProto], depth: usize, live: &HashSet<&str>) -> Result<(), Unsupported> {
        let reads = Reads::of(nodes, live);
        for (i, n) in nodes.iter().enumerate() {
            if let Some((then_g, else_g)) = control::python_if(n, &reads.after(i)) {
                self.if_statement(n, then_g, else_g, depth)?;
            } else if let Some(shape) = control::python_loop(n, &reads.after(i)) {
                self.loop_statement(n, &shape, &reads.after(i), depth)?;
            } else {
                self.node(n, depth)?;
            }
        }
        Ok(())
    }

    /// `if cond:` with each branch's nodes, then its outputs assigned to the `If`'s, in order.
    fn if_statement(
        &mut self,
        n: &NodeProto,
        then_g: &GraphProto,
        else_g: &GraphProto,
        depth: usize,
    ) -> Result<(), Unsupported> {
        let pad = INDENT.repeat(depth);
        let cond = self.value(&n.input[0])?;
        let _ = writeln!(self.out, "{pad}if {cond}:");
        // When both branches compute the outputs in the `If`'s order, each output is one
        // variable assigned in both branches; else each branch assigns them at its end, in order.
        let direct = control::in_output_order(then_g) && control::in_output_order(else_g);
        // An output that is itself an enclosing branch's output keeps that branch's variable.
        let mut pending = std::mem::take(&mut self.renames);
        let outer: Vec<String> = n
            .output
            .iter()
            .zip(&then_g.output)
            .map(|(o, t)| match pending.remove(o.as_str()) {
                Some(ident) => ident,
                None => self.idents.fresh(if direct { t.name() } else { o }, "value"),
            })
            .collect();
        for (i, g) in [then_g, else_g].into_iter().enumerate() {
            if i == 1 {
                let _ = writeln!(self.out, "{pad}else:");
            }
            self.scopes.push();
            let outputs: Vec<&str> = g.output.iter().map(|o| o.name()).collect();
            self.block(&g.node, &outputs, &outer, direct, depth)?;
            self.scopes.pop();
        }
        self.renames = pending;
        self.bind_outputs(&n.output, outer);
        Ok(())
    }

    /// The statements of a branch or loop body whose `outputs` end in the variables `targets`:
    /// computed straight into them when `direct`, else assigned at the block's end, in order.
    fn block(
        &mut self,
        nodes: &[NodeProto],
        outputs: &[&str],
        targets: &[String],
        direct: bool,
        depth: usize,
    ) -> Result<(), Unsupported> {
        if direct {
            self.renames = outputs.iter().map(|o| o.to_string()).zip(targets.iter().cloned()).collect();
        }
        let live: HashSet<&str> = outputs.iter().copied().collect();
        self.nodes(nodes, depth + 1, &live)?;
        if !direct {
            let pad = INDENT.repeat(depth + 1);
            for (target, out) in targets.iter().zip(outputs) {
                let inner = self.value(out)?;
                let _ = writeln!(self.out, "{pad}{target} = {inner}");
            }
        }
        Ok(())
    }

    /// Binds a node's outputs to the variables that hold them after its statement.
    fn bind_outputs(&mut self, names: &[String], idents: Vec<String>) {
        for (name, ident) in names.iter().zip(idents) {
            self.scopes.bind(name, ident);
        }
    }

    /// `for i in range(n):` or `while c:` for a `Loop` that onnxsc lowers that back to
    /// (`control::python_loop`): each carried value (and a `while` condition) is one variable,
    /// given its first value before the loop unless the variable holding it can be reused, and
    /// its next value in the body: by the node that computes it when the body allows
    /// (`control::in_carried_order`), else at the body's end, in order, the condition last.
    fn loop_statement(
        &mut self,
        n: &NodeProto,
        shape: &LoopShape,
        after: &After,
        depth: usize,
    ) -> Result<(), Unsupported> {
        let (body, pad) = (shape.body, INDENT.repeat(depth));
        let params = &body.input[2..];
        // An output that is an enclosing branch's output is carried in that branch's variable.
        let mut pending = std::mem::take(&mut self.renames);
        let mut carried = Vec::new();
        for (j, p) in params.iter().enumerate() {
            let renamed = pending.remove(n.output[j].as_str());
            carried.push(self.loop_variable(n, body, 2 + j, renamed, p.name(), after, depth)?);
        }
        // The body's outputs and the variables they go to; a `while` condition that is not
        // carried comes last.
        let mut outputs: Vec<&str> = body.output[1..].iter().map(|o| o.name()).collect();
        let mut targets = carried.clone();
        let head = match shape.kind {
            LoopKind::For => Head::For(self.value(&n.input[0])?),
            LoopKind::While { state: Some(j), .. } => Head::While(carried[j].clone()),
            LoopKind::While { next, state: None } => {
                let cond = self.loop_variable(n, body, 1, None, "cond", after, depth)?;
                outputs.push(next);
                targets.push(cond.clone());
                Head::While(cond)
            }
        };
        self.scopes.push();
        let index = self.scopes.define(&mut self.idents, body.input[0].name());
        let _ = match head {
            Head::For(count) => writeln!(self.out, "{pad}for {index} in range({count}):"),
            Head::While(cond) => writeln!(self.out, "{pad}while {cond}:"),
        };
        for (p, ident) in params.iter().zip(&carried) {
            self.scopes.bind(p.name(), ident.clone());
        }
        // A value passed on unchanged (`a = b`) is the other variable's previous value.
        for (j, m) in &shape.passes {
            self.scopes.bind(body.output[1 + j].name(), carried[*m].clone());
        }
        let direct = control::in_carried_order(shape);
        self.block(shape.steps, &outputs, &targets, direct, depth)?;
        self.scopes.pop();
        self.renames = pending;
        self.bind_outputs(&n.output, carried);
        Ok(())
    }

    /// The variable that carries the loop's input `i` (`renamed` when an enclosing branch
    /// decides it): the one holding the input when it can be reused, else a fresh one assigned
    /// before the loop.
    #[allow(clippy::too_many_arguments, reason = "one loop's context, read in one place")]
    fn loop_variable(
        &mut self,
        n: &NodeProto,
        body: &GraphProto,
        i: usize,
        renamed: Option<String>,
        hint: &str,
        after: &After,
        depth: usize,
    ) -> Result<String, Unsupported> {
        let init = n.input[i].as_str();
        // A variable of an enclosing scope is not reassigned: an `if` would make it an output.
        let reusable = control::reusable_input(n, body, i, after) && self.scopes.defined_here(init);
        if let (None, Some(ident), true) = (&renamed, self.scopes.lookup(init), reusable) {
            return Ok(ident.to_string());
        }
        let ident = renamed.unwrap_or_else(|| self.idents.fresh(hint, "state"));
        let value = self.value(init)?;
        if value != ident {
            let _ = writeln!(self.out, "{}{ident} = {value}", INDENT.repeat(depth));
        }
        Ok(ident)
    }

    /// One node: its graph attributes as `@graph()` functions, then the call.
    fn node(&mut self, n: &NodeProto, depth: usize) -> Result<(), Unsupported> {
        let mut graphs = HashMap::new();
        for a in &n.attribute {
            if a.ref_attr_name.is_none() && attribute_kind(a) == Some(AttrType::Graph) {
                if let Some(g) = &a.g {
                    let name = self.graph_function(g, a.name(), depth)?;
                    graphs.insert(a.name().to_string(), name);
                }
            }
        }
        let callee = self.callee(n)?;
        let mut inputs = n.input.as_slice();
        while let Some((last, rest)) = inputs.split_last() {
            if !last.is_empty() {
                break;
            }
            inputs = rest;
        }
        let mut args = Vec::new();
        for i in inputs {
            args.push(if i.is_empty() { "None".to_string() } else { self.value(i)? });
        }
        for a in &n.attribute {
            if !is_plain(a.name()) {
                return Err(Unsupported::new(format!("an attribute named `{}`, which is not a Python name", a.name())));
            }
            let value = match (graphs.get(a.name()), data_type(n, a)) {
                (Some(g), _) => g.clone(),
                (None, Some(elem)) => {
                    self.needs.tensor_proto = true;
                    format!("TensorProto.{}", elem.script_name())
                }
                (None, None) => self.attribute_value(a, n.op_type() == "Constant" && a.name() == "value")?,
            };
            args.push(format!("{}={value}", a.name()));
        }
        let mut outputs = n.output.as_slice();
        while let Some((last, rest)) = outputs.split_last() {
            if !last.is_empty() {
                break;
            }
            outputs = rest;
        }
        if outputs.is_empty() {
            return Err(Unsupported::new(format!("a `{}` node without outputs", n.op_type())));
        }
        let mut targets = Vec::new();
        for o in outputs {
            targets.push(if o.is_empty() {
                self.idents.fresh("unused", "unused")
            } else if let Some(ident) = self.renames.remove(o.as_str()) {
                self.scopes.bind(o, ident.clone());
                ident
            } else {
                self.scopes.define(&mut self.idents, o)
            });
        }
        let pad = INDENT.repeat(depth);
        let _ = writeln!(self.out, "{pad}{} = {callee}({})", targets.join(", "), args.join(", "));
        Ok(())
    }

    /// `alias.Op` for an operator, the Python name of a function of the module.
    fn callee(&self, n: &NodeProto) -> Result<String, Unsupported> {
        let domain = normalize_domain(n.domain());
        if let Some(name) = self.module.functions.get(&(domain.to_string(), n.op_type().to_string())) {
            return Ok(name.clone());
        }
        if !is_identifier(n.op_type()) {
            return Err(Unsupported::new(format!("an operator named `{}`, which is not a Python name", n.op_type())));
        }
        let version = self.imports.get(domain).copied();
        Ok(format!("{}.{}", self.module.alias(domain, version), n.op_type()))
    }

    /// A nested `@graph()` function for a subgraph; returns its name.
    fn graph_function(&mut self, g: &GraphProto, attribute: &str, depth: usize) -> Result<String, Unsupported> {
        if !g.sparse_initializer.is_empty() {
            return Err(Unsupported::new("a subgraph with sparse initializers"));
        }
        self.needs.graph = true;
        // The enclosing branch's outputs are not the subgraph's.
        let pending = std::mem::take(&mut self.renames);
        let name = self.idents.fresh(g.name.as_deref().unwrap_or(attribute), attribute);
        let pad = INDENT.repeat(depth);
        self.scopes.push();
        let params: Vec<String> = g.input.iter().map(|i| self.scopes.define(&mut self.idents, i.name())).collect();
        // A blank line sets the nested function apart, but for one that opens a block.
        if !self.out.ends_with(":\n") && !self.out.ends_with("\"\"\"\n") {
            self.out.push('\n');
        }
        let _ = writeln!(self.out, "{pad}@graph()\n{pad}def {name}({}):", params.join(", "));
        for t in &g.initializer {
            let value = literal::constant_value(t)?;
            self.needs.make_tensor |= value.starts_with("helper.");
            let ident = self.scopes.define(&mut self.idents, t.name());
            let _ = writeln!(
                self.out,
                "{pad}{INDENT}{ident} = {}.Constant(value={value})",
                self.module.alias("", self.imports.get("").copied())
            );
        }
        let live: HashSet<&str> = g.output.iter().map(|o| o.name()).collect();
        self.nodes(&g.node, depth + 1, &live)?;
        let outputs = g.output.iter().map(|o| self.value(o.name())).collect::<Result<Vec<_>, _>>()?;
        let _ = writeln!(self.out, "{pad}{INDENT}return {}\n", outputs.join(", "));
        self.scopes.pop();
        self.renames = pending;
        Ok(name)
    }

    /// An attribute's value as a Python expression (a reference: the parameter's name).
    fn attribute_value(&mut self, a: &AttributeProto, constant_value: bool) -> Result<String, Unsupported> {
        if let Some(r) = &a.ref_attr_name {
            return self
                .attributes
                .get(r)
                .cloned()
                .ok_or_else(|| Unsupported::new(format!("a reference to `{r}`, which the function does not declare")));
        }
        let kind = attribute_kind(a)
            .ok_or_else(|| Unsupported::new(format!("an attribute `{}` without a value", a.name())))?;
        let text = match kind {
            AttrType::Float => literal::float32(a.f()),
            AttrType::Int => a.i().to_string(),
            AttrType::String => literal::string(a.s())?,
            AttrType::Floats => literal::list(&a.floats, |v| literal::float32(*v)),
            AttrType::Ints => literal::list(&a.ints, i64::to_string),
            AttrType::Strings => literal::strings(&a.strings)?,
            AttrType::Tensor => {
                let t = a.t.as_ref().ok_or_else(|| Unsupported::new("a tensor attribute without a tensor"))?;
                if constant_value {
                    literal::constant_value(t)?
                } else {
                    literal::make_tensor(t)?
                }
            }
            other => return Err(Unsupported::new(format!("a {} attribute (`{}`)", other.proto_name(), a.name()))),
        };
        self.needs.make_tensor |= text.starts_with("helper.");
        Ok(text)
    }
}

/// The element type an ONNX operator's `to` or `dtype` attribute names (`Cast`'s `to=1` is
/// written `to=TensorProto.FLOAT`).
fn data_type(n: &NodeProto, a: &AttributeProto) -> Option<ElemType> {
    let named = matches!(a.name(), "to" | "dtype");
    if !named
        || a.ref_attr_name.is_some()
        || !normalize_domain(n.domain()).is_empty()
        || attribute_kind(a) != Some(AttrType::Int)
    {
        return None;
    }
    ElemType::from_code(a.i())
}

/// The Python annotation of an attribute parameter.
fn annotation(ty: AttrType) -> Result<&'static str, Unsupported> {
    Ok(match ty {
        AttrType::Float => "float",
        AttrType::Int => "int",
        AttrType::String => "str",
        AttrType::Floats => "list[float]",
        AttrType::Ints => "list[int]",
        AttrType::Strings => "list[str]",
        other => return Err(Unsupported::new(format!("a {} attribute parameter", other.proto_name()))),
    })
}

/// The type of each attribute the nodes refer to (first reference wins), subgraphs included:
/// the reference's own type, else the type the operator's schema gives the attribute set.
fn referenced_attribute_types<'a>(
    nodes: &'a [NodeProto],
    imports: &HashMap<String, i64>,
) -> HashMap<&'a str, AttrType> {
    let mut out = HashMap::new();
    let mut stack: Vec<&[NodeProto]> = vec![nodes];
    while let Some(nodes) = stack.pop() {
        for n in nodes {
            for a in &n.attribute {
                let Some(r) = a.ref_attr_name.as_deref() else { continue };
                let declared = a.r#type.and_then(AttrType::from_proto_code);
                if let Some(ty) = declared.or_else(|| schema_attribute_type(n, a.name(), imports)) {
                    out.entry(r).or_insert(ty);
                }
            }
            for a in &n.attribute {
                stack.extend(a.g.iter().chain(&a.graphs).map(|g| g.node.as_slice()));
            }
        }
    }
    out
}

/// The type the schema of `n`'s operator (at the function's import of its domain) gives its
/// attribute `name`.
fn schema_attribute_type(n: &NodeProto, name: &str, imports: &HashMap<String, i64>) -> Option<AttrType> {
    let domain = normalize_domain(n.domain());
    let version = imports.get(domain).copied()?;
    match crate::schema::registry().resolve(domain, n.op_type(), version) {
        crate::schema::Resolution::Found(s) => s.attribute(name).map(|a| a.ty),
        _ => None,
    }
}

/// A docstring: triple-quoted, dedented, with what would end or escape it escaped.
fn docstring(doc: &str) -> String {
    let text = dedent(doc);
    let mut escaped = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            // A quote that could close the string: one before another, or the last.
            '"' if chars.peek().is_none_or(|n| *n == '"') => escaped.push_str("\\\""),
            '\n' | '\t' => escaped.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(escaped, "\\x{:02x}", c as u32);
            }
            c => escaped.push(c),
        }
    }
    if !escaped.contains('\n') {
        return format!("\"\"\"{escaped}\"\"\"");
    }
    let body: Vec<String> =
        escaped.lines().map(|l| if l.is_empty() { String::new() } else { format!("{INDENT}{l}") }).collect();
    format!("\"\"\"\n{}\n{INDENT}\"\"\"", body.join("\n"))
}

/// The text without its blank first and last lines and without the indentation all its other
/// lines share (as `inspect.cleandoc` does).
fn dedent(doc: &str) -> String {
    let lines: Vec<&str> = doc.lines().map(str::trim_end).collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        out.push(if i == 0 { l.trim_start() } else { l.get(indent..).unwrap_or("") });
    }
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}
