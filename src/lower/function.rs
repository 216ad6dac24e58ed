//! Lowering one function: AST statements and expressions to ONNX nodes.
//!
//! The meaning of every construct follows onnxscript's converter (see ARCHITECTURE.md and
//! docs/onnx-facts §5): Python operators map to ONNX ops, literals become `Constant`s that are
//! `CastLike`d to the tensor they meet, attribute parameters become attribute references, and
//! `if` becomes `If` with the assigned-and-live variables as outputs, in source order. This file
//! holds the lowerer's state, what every construct uses (scopes, fresh names, node emission)
//! and [`lower_function`]; each construct is lowered in a submodule: `signature` (parameters
//! and declared outputs), `constants` (literals, module constants and attribute parameters as
//! tensors, of the type an op's input takes), `stmt` (statements, `if`), `expr` (expressions,
//! autocast), `call` (op and function calls; op arguments bound by the pure
//! `bind_op_arguments`), `loops` (`for`/`while` to `Loop`), `graphs` (nested `@graph()`
//! functions as graph-valued attributes), `subscripts` (`x[i]`, `x[a:b]` to Gather, Slice,
//! Concat and Squeeze) and `optional` (values
//! that may be None). Values are tensors, sequences (`Sequence[FLOAT]`, the sequence ops) or
//! optional values; `sema::infer` tracks which, and their element types.

use crate::aten::{AtenRegistry, EXPORTER_OPSET};
use crate::diagnostics::suggest::did_you_mean;
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Edit, Reported};
use crate::ir::*;
use crate::onnx::tensor::Tensor;
use crate::onnx::AttrType;
use crate::onnx::DeclaredType;
use crate::onnx::ElemType;
use crate::schema::{self, FormalOption, OpSchema, Resolution};
use crate::sema::annotations::{self, ParamType};
use crate::sema::binding;
use crate::sema::calls::{self, Calls};
use crate::sema::decorators::Decoration;
use crate::sema::env::{deferred_use, ConstReports, Global, ModuleEnv, Names, Opset};
use crate::sema::eval::{self, eval_const, ConstError};
use crate::sema::facts::{Fact, NameInfo};
use crate::sema::imports;
use crate::sema::infer::{self, AttrFacts, NodeFacts, Ty};
pub(crate) use crate::sema::ir_values::{attr_value, tensor_of, tensor_of_type};
use crate::sema::liveness;
use crate::sema::op_arguments::{argument_order_error, bind_op_arguments, OpArguments};
use crate::sema::resolve::resolve_dotted;
use crate::sema::signature::{Signature, SignatureParam};
use crate::sema::value::PyValue;
use crate::source::{LineIndex, Span};
use crate::syntax::ast::*;
// Seeded foldhash rather than SipHash: lowering hashes every value name several times, and a
// per-process seed still keeps crafted names from colliding on purpose.
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::borrow::Cow;
use std::collections::BTreeMap;

mod call;
mod constants;
mod expr;
mod graphs;
mod loops;
mod optional;
mod parameters;
mod stmt;
mod subscripts;
mod values;

use optional::Presence;
use parameters::{mentions_poison, unsupported_parameter, LoweredSignature};
use values::Values;

type R<T> = Result<T, Reported>;

/// The longest value name made from a variable's name (longer ones are cut).
const MAX_VALUE_NAME: usize = 100;

/// What the help for Python outside the language (`raise`, `assert`, `lambda`, comprehensions)
/// adds: where such Python runs.
const TRACE_ONLY: &str = "trace-only translations (`@torch_op(..., trace_only=True)`) run Python at export time";

#[derive(Clone, Debug, PartialEq)]
enum Binding {
    Value(String),
    /// A name whose definition failed (already reported): uses stay silent.
    Poison(Reported),
    Attr {
        name: String,
        ty: AttrType,
        as_bool: bool,
    },
    /// A nested `@graph()` function, usable only as a graph-valued attribute.
    Graph(Box<NestedGraph>),
}

/// A nested function, lowered where it is defined.
#[derive(Clone, Debug, PartialEq)]
struct NestedGraph {
    graph: Graph,
    /// The outer variables it reads, with the binding each had at the definition: a use where one
    /// has changed would not compute what the source says.
    captures: Vec<(String, Binding)>,
    header: Span,
}

#[derive(Default)]
struct Scope {
    vars: HashMap<String, Binding>,
    nodes: Vec<Node>,
    /// The outputs of `nodes[..indexed]`, built only for a scope too large to search (see
    /// [`Scope::produced`]).
    produced: HashSet<String>,
    indexed: usize,
    /// What the `if` around this scope says of optional values (see `optional`).
    facts: HashMap<String, Presence>,
}

impl Scope {
    /// A function's own scope, with room for a typical translation's variables and values.
    fn for_function() -> Scope {
        Scope {
            vars: HashMap::with_capacity(VARIABLES_PER_FUNCTION),
            nodes: Vec::with_capacity(NODES_PER_FUNCTION),
            ..Scope::default()
        }
    }

    /// Whether a node of this scope computes `value`. Few values are asked about (what a scope
    /// returns or passes out), so a typical scope's nodes are searched, not indexed as they come;
    /// a large one is indexed once, and then only its new nodes, so that asking about each of
    /// thousands of values stays linear.
    fn produced(&mut self, value: &str) -> bool {
        if self.nodes.len() <= SEARCHED_NODES {
            return self.nodes.iter().any(|n| n.outputs.iter().any(|o| o == value));
        }
        for n in &self.nodes[self.indexed..] {
            self.produced.extend(n.outputs.iter().cloned());
        }
        self.indexed = self.nodes.len();
        self.produced.contains(value)
    }
}

/// Up to this many nodes, [`Scope::produced`] searches a scope rather than index it.
const SEARCHED_NODES: usize = 64;

pub struct Lowerer<'a, 'm> {
    /// The module's global names as the function sees them ([`ModuleEnv::names_for`]).
    names: Names<'a, 'm>,
    diags: &'a mut Diagnostics,
    /// The constant errors this walk over the module has reported ([`ConstReports`]).
    reports: &'a mut ConstReports,
    /// The functions of the compilation, for calls between them.
    calls: &'a Calls,
    counter: usize,
    scopes: Vec<Scope>,
    default_opset: Option<Opset>,
    imports: BTreeMap<String, (i64, Span)>,
    /// The ONNX-domain version in `imports`, if any: nearly every node checks it, and a map
    /// lookup compares strings.
    onnx_version: Option<i64>,
    live_out: liveness::LiveOut<'m>,
    assigned_anywhere: HashSet<&'a str>,
    lines: &'a LineIndex,
    /// The line of the last node's source location ([`Lowerer::location`]).
    last_line: std::cell::Cell<usize>,
    /// E0109 is reported once per function, not at every constant.
    reported_no_opset: Option<Reported>,
    /// The value names taken, and what is known of each value.
    values: Values,
    /// How many loops enclose the statement being lowered (in the current function or graph).
    loop_depth: usize,
    /// Nested graphs already used as an attribute, by definition: a second use gets fresh names.
    graphs_used: HashSet<u32>,
    /// Where to record what each name stands for, for editors (`None`: not recorded).
    facts: Option<&'a mut Vec<Fact>>,
    /// The function's parameters: where each is declared and, for an input, whether it is
    /// optional; for an attribute, its Python type and default. Kept only with `facts`.
    params: HashMap<String, ParamNote>,
    /// Values that may be None (optional inputs and what passes them on); others are present.
    presence: HashMap<String, Presence>,
    /// Attribute parameters without a default that may be None.
    optional_attrs: HashSet<String>,
    /// The function translates PyTorch operators for `torch.onnx.export` (see `sema::binding`).
    exporter_bound: bool,
    /// The function being lowered, for messages that name what the source wrote at a span.
    def: &'a FunctionDef,
    /// The parameters `del` left unread on purpose, with where.
    deleted: Vec<(String, Span)>,
    /// The output types that checking the next node's inputs found ([`Lowerer::check_input_types`]),
    /// set just before that node is emitted, which takes them rather than check its inputs again.
    checked_outputs: Option<Vec<Option<Ty>>>,
}

/// Better help for an input of a call that contradicts its schema: `help(lowerer, i, like)` for
/// input `i`, where `like` is the type it must agree with, if another input's.
type InputHelp<'h, L> = dyn Fn(&L, usize, Option<&Ty>) -> Option<String> + 'h;

/// A node about to be emitted, as output typing asks about it ([`infer::NodeFacts`]).
struct EmittedNode<'n> {
    inputs: &'n [Option<String>],
    attrs: &'n [Attr],
    values: &'n Values,
}

impl NodeFacts for EmittedNode<'_> {
    fn input(&self, i: usize) -> Option<&Ty> {
        self.inputs.get(i)?.as_ref().and_then(|v| self.values.ty(v))
    }

    fn input_count(&self) -> usize {
        self.inputs.len()
    }

    fn attr(&self, name: &str) -> Option<AttrFacts> {
        let a = self.attrs.iter().find(|a| a.name == name)?;
        Some(AttrFacts::of(&a.value, |g| g.outputs.iter().map(|o| self.values.ty(o).cloned()).collect()))
    }

    fn first_attr(&self) -> Option<&str> {
        self.attrs.first().map(|a| a.name.as_str())
    }
}

/// What a [`Fact`] says of a parameter besides its binding.
struct ParamNote {
    declared: Span,
    optional: bool,
    python: Option<&'static str>,
    default: Option<String>,
}

impl<'a, 'm> Lowerer<'a, 'm> {
    fn file(&self) -> usize {
        self.names.file()
    }

    fn err(
        &mut self,
        code: &'static str,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Reported {
        let d = Diagnostic::error(code, self.file(), message).primary(span, label);
        self.diags.push_error(d)
    }

    /// Reports an error.
    fn push(&mut self, d: Diagnostic) -> Reported {
        self.diags.push_error(d)
    }

    /// Reports an error found while evaluating a constant (see [`ConstReports::report`]).
    fn push_const_error(&mut self, d: Diagnostic) -> Reported {
        self.reports.report(self.diags, d)
    }

    /// Reports why a constant could not be evaluated, unless it was reported already; `None`
    /// when it is simply not a constant (the caller says what it needed there).
    fn report_const_error(&mut self, error: ConstError) -> Result<Reported, Span> {
        match error {
            ConstError::NotConstant(span) => Err(span),
            ConstError::Poisoned(r) => Ok(r),
            ConstError::Failed(d) => Ok(self.push_const_error(*d)),
            ConstError::DeferredUse(d) => Ok(self.reports.report_deferred_use(self.diags, *d)),
        }
    }

    /// A new value name, `candidate` or `candidate_N`. Derived names grow (`x_subscripted`,
    /// then `x_subscripted_subscripted`...), so a candidate is cut to [`MAX_VALUE_NAME`] bytes:
    /// a chain of 10,000 subscripts must not make 10,000 names of 10,000 parts.
    fn fresh(&mut self, candidate: &str) -> String {
        let mut cut = candidate.len().min(MAX_VALUE_NAME);
        while !candidate.is_char_boundary(cut) {
            cut -= 1;
        }
        let candidate = &candidate[..cut];
        let name = if self.values.is_taken(candidate) {
            // Most temporaries are numbered: built in one buffer, not formatted afresh each try.
            let mut numbered = String::with_capacity(candidate.len() + 8);
            numbered.push_str(candidate);
            numbered.push('_');
            loop {
                numbered.truncate(candidate.len() + 1);
                let (digits, start) = crate::digits::decimal(self.counter as u64);
                numbered.extend(digits[start..].iter().map(|&d| char::from(d)));
                self.counter += 1;
                if !self.values.is_taken(&numbered) {
                    break numbered;
                }
            }
        } else {
            candidate.to_string()
        };
        self.values.take(name.clone());
        name
    }

    #[allow(clippy::expect_used, reason = "the function's own scope is pushed first and popped last, after lowering")]
    fn scope(&mut self) -> &mut Scope {
        self.scopes.last_mut().expect("a function always has a scope")
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.vars.get(name))
    }

    fn bind(&mut self, name: &str, b: Binding) {
        self.scope().vars.insert(name.to_string(), b);
    }

    /// Records what the name at `span` stands for, if facts are recorded.
    fn note(&mut self, name: &str, span: Span, b: &Binding) {
        if self.facts.is_none() {
            return;
        }
        let param = self.params.get(name);
        let info = match b {
            Binding::Value(v) => {
                let ty = self.values.ty(v).map(Ty::describe);
                match param {
                    // A parameter's value is named after it until the name is reassigned.
                    Some(p) if v == name && p.python.is_none() => NameInfo::Input { ty, optional: p.optional },
                    _ => NameInfo::Local { ty },
                }
            }
            Binding::Attr { ty, .. } => NameInfo::Attribute {
                onnx: *ty,
                python: param.and_then(|p| p.python),
                default: param.and_then(|p| p.default.clone()),
            },
            Binding::Graph(_) => NameInfo::Graph,
            Binding::Poison(_) => return,
        };
        let definition = match info {
            NameInfo::Input { .. } | NameInfo::Attribute { .. } => param.map(|p| p.declared),
            _ => None,
        };
        let fact = Fact { file: self.file(), span, name: name.to_string(), info, definition };
        if let Some(facts) = self.facts.as_mut() {
            facts.push(fact);
        }
    }

    fn use_domain(&mut self, opset: &Opset, span: Span) -> R<()> {
        if opset.domain.is_empty() && self.onnx_version == Some(opset.version) {
            return Ok(());
        }
        match self.imports.get(&opset.domain) {
            Some((v, first)) if *v != opset.version => {
                let shown = if opset.domain.is_empty() {
                    "the ONNX domain".to_string()
                } else {
                    format!("domain `{}`", opset.domain)
                };
                let d = Diagnostic::error(
                    codes::OPSET_CONFLICT,
                    self.file(),
                    format!("{shown} is used at two versions, {v} and {}", opset.version),
                )
                .primary(span, format!("version {} here", opset.version))
                .secondary(*first, format!("version {v} here"))
                .help("a function imports one version of each domain; use one opset throughout");
                Err(self.push(d))
            }
            Some(_) => Ok(()),
            None => {
                if opset.domain.is_empty() {
                    self.onnx_version = Some(opset.version);
                }
                self.imports.insert(opset.domain.clone(), (opset.version, span));
                Ok(())
            }
        }
    }

    /// Emits a node. Its op type is borrowed when it is a literal or a schema's name (most
    /// nodes), and owned only for a call of a function.
    fn emit(
        &mut self,
        opset: &Opset,
        op_type: impl Into<Cow<'static, str>>,
        inputs: Vec<Option<String>>,
        outputs: Vec<String>,
        attrs: Vec<Attr>,
        span: Span,
    ) -> R<()> {
        let op_type = op_type.into();
        let checked = self.checked_outputs.take();
        self.use_domain(opset, span)?;
        self.infer_outputs(opset, &op_type, &inputs, &outputs, &attrs, checked);
        let source = Some(self.location(span));
        self.scope().nodes.push(Node { domain: opset.domain.clone(), op_type, inputs, outputs, attrs, source });
        Ok(())
    }

    /// Records the element types of a node's outputs, where they follow from what is known.
    fn infer_outputs(
        &mut self,
        opset: &Opset,
        op_type: &str,
        inputs: &[Option<String>],
        outputs: &[String],
        attrs: &[Attr],
        checked: Option<Vec<Option<Ty>>>,
    ) {
        let facts = EmittedNode { inputs, attrs, values: &self.values };
        let known = infer::node_outputs(&opset.domain, op_type, opset.version, &facts, outputs.len(), checked);
        for (o, t) in outputs.iter().zip(known) {
            if let Some(t) = t {
                self.values.set_ty(o, t);
            }
        }
    }

    /// Reports the first element-type contradiction among a call's inputs (E0601); otherwise the
    /// types of the call's `outputs` outputs, as far as its inputs' types tell them.
    fn check_input_types(
        &mut self,
        schema: &OpSchema,
        inputs: &[Option<String>],
        spans: &[Span],
        outputs: usize,
    ) -> R<Vec<Option<Ty>>> {
        self.check_input_types_with(schema, inputs, spans, outputs, &|_, _, _| None)
    }

    /// [`Lowerer::check_input_types`], where `help(self, i, like)` may say better than the usual
    /// help how to fix input `i` (`like`: the type of the input it contradicts, if another).
    fn check_input_types_with(
        &mut self,
        schema: &OpSchema,
        inputs: &[Option<String>],
        spans: &[Span],
        outputs: usize,
        help: &InputHelp<'_, Self>,
    ) -> R<Vec<Option<Ty>>> {
        self.check_required_inputs(schema, inputs, spans)?;
        let args: Vec<Option<&Ty>> = inputs.iter().map(|v| v.as_ref().and_then(|v| self.values.ty(v))).collect();
        let span_of = |i: usize| spans.get(i).copied().or(spans.last().copied()).unwrap_or_default();
        let c = match infer::check_call(schema, &args, outputs) {
            Ok(types) => {
                if let Some((fixed, variable, message)) = infer::type_variable_meets_fixed(schema, &args) {
                    if let (Some(f), Some(v)) = (args[fixed], args[variable]) {
                        let file = self.file();
                        let d = infer::fixed_meets_variable_warning(
                            file,
                            message,
                            (span_of(fixed), f),
                            (span_of(variable), v),
                        );
                        self.diags.push(d);
                    }
                }
                return Ok(types);
            }
            Err(c) => c,
        };
        let mut d = Diagnostic::error(codes::TYPE_MISMATCH, self.file(), c.message).primary(span_of(c.arg), c.label);
        if let Some(j) = c.other {
            let first = args[j].map(Ty::describe).unwrap_or_default();
            d = d.secondary(span_of(j), format!("{first} here"));
        }
        // The type an input must agree with: the one it contradicts, or a known one of its type
        // variable's.
        let like = |i: usize| match c.other {
            Some(j) => args.get(if j == i { c.arg } else { j }).copied().flatten(),
            None => infer::peer_type(schema, &args, i),
        };
        let better = c
            .help
            .is_none()
            .then(|| help(self, c.arg, like(c.arg)).or_else(|| c.other.and_then(|j| help(self, j, like(j)))));
        d = d.help(c.help.or(better.flatten()).unwrap_or_else(|| infer::CAST_HELP.to_string()));
        Err(self.push(d))
    }

    /// The schema of a default-opset op, for checks.
    fn default_schema(&self, op_type: &str) -> Option<&'static OpSchema> {
        let opset = self.default_opset.as_ref()?;
        match schema::registry().resolve(&opset.domain, op_type, opset.version) {
            Resolution::Found(s) => Some(s),
            _ => None,
        }
    }

    /// The function's default ONNX opset, which `op_type` (at `span`) needs; E0109, once, when
    /// there is none.
    fn default_opset(&mut self, span: Span, op_type: &str) -> R<Opset> {
        match &self.default_opset {
            Some(o) => Ok(o.clone()),
            None => {
                if let Some(r) = self.reported_no_opset {
                    return Err(r);
                }
                let d = Diagnostic::error(
                    codes::NO_DEFAULT_OPSET,
                    self.file(),
                    "this needs an ONNX opset, but the function uses none",
                )
                .primary(span, format!("lowered to ONNX's `{op_type}`"))
                .help(self.no_opset_help(op_type));
                let r = self.push(d);
                self.reported_no_opset = Some(r);
                Err(r)
            }
        }
    }

    /// How to give the function the default opset that `op_type` needs: name an ONNX opset
    /// with `default_opset=` (a translation's must be the exporter's, E0513).
    fn no_opset_help(&self, op_type: &str) -> String {
        let wanted = self.exporter_bound.then_some(EXPORTER_OPSET);
        // An ONNX opset the module imports, first by name.
        let globals = &self.names.env.globals;
        let mut imported: Vec<(&str, i64)> = (globals.keys())
            .filter_map(|n| match self.names.get(n) {
                Some(Global::Opset(o)) if o.domain.is_empty() && wanted.is_none_or(|v| v == o.version) => {
                    Some((n.as_str(), o.version))
                }
                _ => None,
            })
            .collect();
        imported.sort_unstable();
        let name = imported.first().map_or("op", |(n, _)| *n);
        let scripted = self.def.decorators.iter().any(|d| {
            let func = match &d.kind {
                ExprKind::Call { func, .. } => func,
                _ => d,
            };
            matches!(resolve_dotted(self.names, func), Some(Global::ScriptDecorator))
        });
        let has_script = scripted || globals.keys().any(|n| matches!(self.names.get(n), Some(Global::ScriptDecorator)));
        let mut missing = Vec::new();
        if !has_script {
            missing.push("script".to_string());
        }
        if imported.is_empty() {
            missing.push(format!("opset{} as op", wanted.unwrap_or(EXPORTER_OPSET)));
        }
        let import = if missing.is_empty() {
            String::new()
        } else {
            format!("import `from onnxscript import {}` and ", missing.join(", "))
        };
        let decorator = match (self.exporter_bound, scripted) {
            (true, false) => format!("add `@script(default_opset={name})` under `@torch_op(...)`"),
            (false, false) => format!("decorate the function with `@script(default_opset={name})`"),
            (_, true) => format!("pass `default_opset={name}` to `@script`"),
        };
        format!("`{op_type}` is an ONNX operator: {import}{decorator}")
    }

    fn emit_default(
        &mut self,
        op_type: impl Into<Cow<'static, str>>,
        inputs: Vec<Option<String>>,
        outputs: Vec<String>,
        attrs: Vec<Attr>,
        span: Span,
    ) -> R<()> {
        // Taken before anything can fail: a node not emitted leaves nothing for the next one.
        let checked = self.checked_outputs.take();
        let op_type = op_type.into();
        let opset = self.default_opset(span, &op_type)?;
        self.checked_outputs = checked;
        self.emit(&opset, op_type, inputs, outputs, attrs, span)
    }

    fn copy(&mut self, value: &str, hint: &str, span: Span) -> R<String> {
        let name = self.fresh(hint);
        self.emit_default("Identity", vec![Some(value.to_string())], vec![name.clone()], vec![], span)?;
        self.derive_presence(&name, self.presence(value));
        Ok(name)
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    fn unsupported(&mut self, span: Span, what: &str, help: &str) -> Reported {
        let mut d = Diagnostic::error(
            codes::UNSUPPORTED_EXPR,
            self.file(),
            format!("{what} not part of the ONNX Script language"),
        )
        .primary(span, "not supported");
        if !help.is_empty() {
            d = d.help(help);
        }
        self.push(d)
    }

    /// The line and column (1-based; the column counts bytes) of `span`'s start.
    fn location(&self, span: Span) -> SourceLocation {
        // Nodes come in source order, mostly: the line of the last one is the first guess.
        let line = self.lines.line_near(span.start, self.last_line.get());
        self.last_line.set(line);
        let start = self.lines.line_start(line).unwrap_or(0);
        SourceLocation { line: line as u32 + 1, column: span.start.saturating_sub(start) + 1 }
    }

    fn line_of(&self, span: Span) -> usize {
        self.lines.line(span.start) + 1
    }
}

/// Room for this many nodes in a function's body: a typical translation has one or two dozen,
/// and the list grew from empty three or four times, each time copying nodes into fresh memory.
const NODES_PER_FUNCTION: usize = 32;

/// Room for this many values in the tables every value enters: a typical translation has a
/// few dozen, and growing the tables from empty rehashed them five times over.
const VALUES_PER_FUNCTION: usize = 64;

/// Room for this many variables in the function's scope.
const VARIABLES_PER_FUNCTION: usize = 16;

impl<'a, 'm> Lowerer<'a, 'm> {
    fn new(
        cx: &FunctionContext<'a, 'm>,
        reports: &'a mut ConstReports,
        diags: &'a mut Diagnostics,
        facts: Option<&'a mut Vec<Fact>>,
        def: &'a FunctionDef,
    ) -> Self {
        let FunctionContext { env, calls, lines, .. } = *cx;
        Lowerer {
            def,
            lines,
            last_line: std::cell::Cell::new(0),
            facts,
            params: HashMap::new(),
            reported_no_opset: None,
            values: Values::with_capacity(VALUES_PER_FUNCTION),
            names: env.names_for(def),
            diags,
            reports,
            calls,
            counter: 0,
            scopes: vec![Scope::for_function()],
            default_opset: None,
            imports: BTreeMap::new(),
            onnx_version: None,
            live_out: liveness::LiveOut::default(),
            assigned_anywhere: HashSet::new(),
            loop_depth: 0,
            graphs_used: HashSet::new(),
            presence: HashMap::new(),
            optional_attrs: HashSet::new(),
            exporter_bound: false,
            checked_outputs: None,
            deleted: Vec::new(),
        }
    }
}

/// "an int", "a float", "None".
fn with_article(word: &str) -> String {
    match word.chars().next() {
        Some('N') if word == "None" => word.to_string(),
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {word}"),
        _ => format!("a {word}"),
    }
}

fn describe_global(g: &Global) -> &'static str {
    match g {
        Global::Module(_) => "a module",
        Global::Opset(_) => "an opset",
        Global::OpsetClass => "the `Opset` class",
        Global::TensorType(_) => "a tensor type",
        Global::TypeVar { .. } => "a type variable",
        Global::TypeUnion(_) => "a union of tensor types",
        Global::ScriptDecorator | Global::GraphDecorator | Global::TorchOpDecorator => "a decorator",
        Global::Typing(_) => "a typing construct",
        Global::Const(_) => "a constant",
        Global::Lib(_) => "a module, class or function of Python's libraries",
        Global::Function(_) => "a function",
        Global::Opaque(_) => "an import onnxsc does not model",
        Global::Poison(_) | Global::Deferred(_) => "an invalid definition",
    }
}

fn const_hint(v: &PyValue) -> String {
    match v {
        PyValue::Int(i) if *i >= 0 => format!("int64_{i}"),
        PyValue::Int(i) => format!("int64_m{}", i.unsigned_abs()),
        PyValue::List(items) if items.len() == 1 => match items[0] {
            PyValue::Int(i) if i >= 0 => format!("int64_{i}_1d"),
            PyValue::Int(i) => format!("int64_m{}_1d", i.unsigned_abs()),
            _ => "const".into(),
        },
        _ => "const".into(),
    }
}

/// The parameters of a translation that receive a backend hint of an operator it translates
/// (`sema::binding::BACKEND_HINTS`), which cannot change the values, in parameter order.
fn hint_parameters(cx: &FunctionContext, sig: &Signature, deco: &Decoration, parameters: &[String]) -> Vec<String> {
    let mut hints: HashSet<String> = HashSet::new();
    if !deco.private {
        for b in &deco.torch_ops {
            if let Some(schema) = cx.registry.lookup(&b.qualname) {
                hints.extend(binding::hint_parameters(cx.env, sig, schema));
            }
        }
    }
    parameters.iter().filter(|p| hints.contains(p.as_str())).cloned().collect()
}

/// What lowering a function of a module reads besides its own signature and decoration.
#[derive(Clone, Copy)]
pub struct FunctionContext<'a, 'm> {
    pub env: &'a ModuleEnv<'m>,
    /// The functions of the compilation, for calls between them.
    pub calls: &'a Calls,
    /// The lines of the module's file, for the source location of every node.
    pub lines: &'a LineIndex,
    /// The module's file as named on the command line (a function's `source_file`).
    pub source_file: &'a str,
    /// The PyTorch schemas: the exporter needs each bound operator's output count.
    pub registry: &'a AtenRegistry,
}

/// Lowers one function of a module; `Err` when it had errors (reported). `reports` is what the
/// walk over the module this function is part of has reported of its constants.
pub fn lower_function(
    cx: &FunctionContext,
    sig: &Signature,
    deco: &Decoration,
    reports: &mut ConstReports,
    diags: &mut Diagnostics,
    facts: Option<&mut Vec<Fact>>,
) -> Result<Function, Reported> {
    let f = sig.def;
    let env = cx.env;
    let mut l = Lowerer::new(cx, reports, diags, facts, f);
    l.exporter_bound = !deco.torch_ops.is_empty() && !deco.private;
    l.default_opset = deco.default_opset.clone();
    if l.default_opset.is_none() {
        l.default_opset = first_onnx_opset(l.names, &f.body);
    }
    let LoweredSignature { inputs, attributes, declared_outputs, ok } = l.lower_signature(f, sig, deco);

    // Body analysis.
    let mut assigned = Vec::new();
    liveness::assigned_anywhere(&f.body, &mut assigned);
    l.assigned_anywhere = assigned.into_iter().collect();
    let live = {
        let is_static = |s: &Stmt| l.is_static_if(s);
        liveness::live_out_of_control_flow(&f.body, &is_static)
    };
    l.live_out = live;

    let Body { doc, outputs, mut ok } = l.lower_body(f, declared_outputs.as_deref(), ok);
    if l.exporter_bound {
        if let Some((version, span)) = l.imports.get("").copied().filter(|(v, _)| *v != EXPORTER_OPSET) {
            ok = Err(l.push(super::exporter::opset_mismatch(env.file, version, span, &deco.torch_ops)));
        }
    }
    ok?;
    let output_types: Vec<Option<DeclaredType>> = match declared_outputs {
        Some(ts) if ts.len() == outputs.len() => ts,
        _ => vec![None; outputs.len()],
    };
    let nodes = l.scopes.pop().map(|s| s.nodes).unwrap_or_default();
    let source = Some(l.location(f.name.span));
    let opset_imports = l.imports.into_iter().map(|(d, (v, _))| (d, v)).collect();
    let deleted: liveness::Live = l.deleted.iter().map(|(n, _)| n.as_str()).collect();
    let header = Header { source, doc, inputs, attributes, outputs, output_types, deleted };
    let mut function = function_of(cx, sig, deco, header);
    function.nodes = nodes;
    function.opset_imports = opset_imports;
    Ok(function)
}

/// A trace-only translation's signature as a function without a body: what the library records
/// of it, since its body runs as Python for each call of the exporter. Its outputs are named
/// `out0`, `out1`..., as many as its return annotation says, else as its PyTorch operator
/// returns, else one.
pub fn lower_declaration(
    cx: &FunctionContext,
    sig: &Signature,
    deco: &Decoration,
    reports: &mut ConstReports,
    diags: &mut Diagnostics,
) -> Result<Function, Reported> {
    let f = sig.def;
    let mut l = Lowerer::new(cx, reports, diags, None, f);
    let LoweredSignature { inputs, attributes, declared_outputs, ok } = l.lower_signature(f, sig, deco);
    ok?;
    let returned = || deco.torch_ops.first().and_then(|b| cx.registry.lookup(&b.qualname)).map(|s| s.returns.len());
    let count = declared_outputs.as_ref().map(Vec::len).or_else(returned).unwrap_or(1);
    let output_types = declared_outputs.unwrap_or_else(|| vec![None; count]);
    let source = Some(l.location(f.name.span));
    let doc = match f.body.first().map(|s| &s.kind) {
        Some(StmtKind::Expr(Expr { kind: ExprKind::Str(text), .. })) => Some(text.clone()),
        _ => None,
    };
    let deleted = liveness::deleted_parameters(f);
    let outputs = (0..count).map(|k| format!("out{k}")).collect();
    let header = Header { source, doc, inputs, attributes, outputs, output_types, deleted };
    Ok(function_of(cx, sig, deco, header))
}

/// What a function's record takes from its lowering besides its body.
struct Header<'f> {
    source: Option<SourceLocation>,
    doc: Option<String>,
    inputs: Vec<InputParam>,
    attributes: Vec<AttrParam>,
    outputs: Vec<String>,
    output_types: Vec<Option<DeclaredType>>,
    /// The parameters `del` leaves unread.
    deleted: liveness::Live<'f>,
}

/// The function of `sig`, decorated `deco`, without nodes or opset imports yet.
fn function_of(cx: &FunctionContext, sig: &Signature, deco: &Decoration, header: Header) -> Function {
    let f = sig.def;
    let Header { source, doc, inputs, attributes, outputs, output_types, deleted } = header;
    let parameters: Vec<String> = sig.plain().map(|p| p.name().to_string()).collect();
    let ignored = parameters.iter().filter(|p| deleted.contains(p.as_str())).cloned().collect();
    let hints = hint_parameters(cx, sig, deco, &parameters);
    let input_types = sig.plain().filter_map(|p| match &p.ty {
        Ok(ParamType::Input { ty, .. }) => ty.as_ref(),
        _ => None,
    });
    let type_vars = input_types
        .chain(output_types.iter().flatten())
        .filter_map(|t| match t {
            DeclaredType::Var { name, allowed } => Some((name.clone(), allowed.clone())),
            _ => None,
        })
        .collect();
    // A private helper is not registered for export (as torchlib does).
    let registered = if deco.private { &[][..] } else { &deco.torch_ops[..] };
    // The exporter needs each bound operator's output count, annotation or not.
    let torch_ops = registered
        .iter()
        .filter(|b| !binding::exporter_ignores(&b.qualname, cx.registry))
        .map(|b| TorchOp {
            qualname: b.qualname.clone(),
            outputs: cx.registry.lookup(&b.qualname).map(|s| s.returns.len()),
        })
        .collect();
    Function {
        name: f.name.name.clone(),
        domain: deco.domain.clone(),
        source_file: cx.source_file.to_string(),
        source,
        file: cx.env.file,
        name_span: f.name.span,
        doc,
        inputs,
        attributes,
        outputs,
        output_types,
        nodes: Vec::new(),
        opset_imports: BTreeMap::new(),
        parameters,
        ignored,
        hints,
        type_vars,
        torch_ops,
        complex: deco.complex,
        noqa: Vec::new(),
    }
}

/// What lowering a function body gives.
struct Body {
    doc: Option<String>,
    outputs: Vec<String>,
    /// No errors, in the body or (as passed in) before it.
    ok: Result<(), Reported>,
}

impl<'a, 'm> Lowerer<'a, 'm> {
    /// Lowers the statements of a function, module-level or nested, through its final `return`.
    /// `ok` is false when the signature had errors; a return count mismatch is then not reported.
    fn lower_body(
        &mut self,
        f: &FunctionDef,
        declared_outputs: Option<&[Option<DeclaredType>]>,
        mut ok: Result<(), Reported>,
    ) -> Body {
        let mut doc = None;
        let mut outputs: Vec<String> = Vec::new();
        let mut returned = false;
        for (i, s) in f.body.iter().enumerate() {
            if returned {
                let d = Diagnostic::error(codes::UNREACHABLE, self.file(), "code after `return` never runs")
                    .primary(s.span, "unreachable")
                    .help("remove it, or move the `return` to the end");
                ok = Err(self.push(d));
                break;
            }
            match &s.kind {
                StmtKind::Expr(Expr { kind: ExprKind::Str(text), .. }) if i == 0 => doc = Some(text.clone()),
                StmtKind::Return(value) => {
                    returned = true;
                    if let Err(r) = self.reject_python_only(s) {
                        ok = Err(r);
                        continue;
                    }
                    let items: Vec<&Expr> = match value.as_ref().map(|v| &v.kind) {
                        None => vec![],
                        Some(ExprKind::Tuple(items)) => items.iter().collect(),
                        Some(_) => value.iter().collect(),
                    };
                    let Some(value) = value.as_ref().filter(|_| !items.is_empty()) else {
                        let (message, span, label) = match value {
                            None => ("`return` without a value", s.span, "returns nothing"),
                            Some(v) => ("`return ()` returns no tensor", v.span, "empty tuple"),
                        };
                        let d = Diagnostic::error(codes::NO_RETURN_VALUE, self.file(), message)
                            .primary(span, label)
                            .help("an ONNX function must return at least one tensor");
                        ok = Err(self.push(d));
                        continue;
                    };
                    let multi = items.len() > 1 || matches!(value.kind, ExprKind::Tuple(_));
                    let mut mismatched = Vec::new();
                    for (k, e) in items.iter().enumerate() {
                        let hint = if multi { format!("return_val{k}") } else { "return_val".to_string() };
                        match self.lower_expr(e, Some(&hint)) {
                            Ok(mut v) => {
                                let declared = declared_outputs.and_then(|d| d.get(k).cloned().flatten());
                                if let Some(declared) = declared {
                                    mismatched.extend(self.return_type_mismatch(&v, &declared, e.span, f));
                                }
                                if let Err(r) = self.check_returned(&v, e.span) {
                                    ok = Err(r);
                                }
                                if !self.scope().produced(&v) {
                                    // An input or outer value cannot also be an output (it breaks ORT and inliners).
                                    match self.copy(&v, &hint, e.span) {
                                        Ok(c) => v = c,
                                        Err(r) => ok = Err(r),
                                    }
                                } else if outputs.contains(&v) {
                                    match self.copy(&v, &format!("{v}_copy"), e.span) {
                                        Ok(c) => v = c,
                                        Err(r) => ok = Err(r),
                                    }
                                }
                                outputs.push(v);
                            }
                            Err(r) => ok = Err(r),
                        }
                    }
                    self.report_return_types(mismatched);
                    if let Some(declared) = declared_outputs {
                        if declared.len() != items.len() && ok.is_ok() {
                            let d = Diagnostic::error(
                                codes::RETURN_COUNT,
                                self.file(),
                                format!(
                                    "the function is annotated with {} output{}, but returns {}",
                                    declared.len(),
                                    if declared.len() == 1 { "" } else { "s" },
                                    items.len()
                                ),
                            )
                            .primary(
                                value.span,
                                format!("{} value{} returned", items.len(), if items.len() == 1 { "" } else { "s" }),
                            )
                            .secondary(f.returns.as_ref().map(|r| r.span).unwrap_or(f.header_span), "annotated here");
                            ok = Err(self.push(d));
                        }
                    }
                }
                _ => {
                    if let Err(r) = self.lower_stmt(s) {
                        self.poison_assigned(s, r);
                        ok = Err(r);
                    }
                }
            }
        }
        if !returned && ok.is_ok() {
            let d = Diagnostic::error(
                codes::NO_RETURN_VALUE,
                self.file(),
                format!("function `{}` returns nothing", f.name.name),
            )
            .primary(f.name.span, "no `return` at the end of this function")
            .help("an ONNX function must return at least one tensor: end it with `return ...`");
            ok = Err(self.push(d));
        }
        Body { doc, outputs, ok }
    }
}

/// onnxscript's default opset when the decorator names none: the first ONNX opset whose op the
/// function calls, in source order.
fn first_onnx_opset(names: Names, body: &[Stmt]) -> Option<Opset> {
    fn in_expr(names: Names, e: &Expr) -> Option<Opset> {
        if let ExprKind::Call { func, args } = &e.kind {
            if let ExprKind::Attribute { value, .. } = &func.kind {
                if let ExprKind::Name(n) = &value.kind {
                    if let Some(Global::Opset(o)) = names.get(n) {
                        if o.domain.is_empty() {
                            return Some(o.clone());
                        }
                    }
                }
            }
            if let Some(o) = in_expr(names, func) {
                return Some(o);
            }
            return args.iter().find_map(|a| in_expr(names, &a.value));
        }
        let mut children: Vec<&Expr> = Vec::new();
        match &e.kind {
            ExprKind::Attribute { value, .. } => children.push(value),
            ExprKind::BinOp { left, right, .. } => children.extend([left.as_ref(), right.as_ref()]),
            ExprKind::UnaryOp { operand, .. } => children.push(operand),
            ExprKind::BoolOp { values, .. } => children.extend(values.iter()),
            ExprKind::Compare { left, comparisons } => {
                children.push(left);
                children.extend(comparisons.iter().map(|(_, c)| c));
            }
            ExprKind::Subscript { value, index } => children.extend([value.as_ref(), index.as_ref()]),
            ExprKind::Slice { lower, upper, step } => {
                children.extend([lower, upper, step].into_iter().flatten().map(|b| b.as_ref()));
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => children.extend(items.iter()),
            _ => {}
        }
        children.into_iter().find_map(|c| in_expr(names, c))
    }
    fn in_stmts(names: Names, stmts: &[Stmt]) -> Option<Opset> {
        stmts.iter().find_map(|s| match &s.kind {
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => in_expr(names, e),
            StmtKind::Assign { targets, value } => {
                targets.iter().find_map(|t| in_expr(names, t)).or_else(|| in_expr(names, value))
            }
            StmtKind::AnnAssign { target, value, .. } => {
                in_expr(names, target).or_else(|| value.as_ref().and_then(|v| in_expr(names, v)))
            }
            StmtKind::AugAssign { target, value, .. } => in_expr(names, target).or_else(|| in_expr(names, value)),
            StmtKind::If { test, body, orelse } | StmtKind::While { test, body, orelse } => {
                in_expr(names, test).or_else(|| in_stmts(names, body)).or_else(|| in_stmts(names, orelse))
            }
            StmtKind::For { target, iter, body, orelse } => in_expr(names, target)
                .or_else(|| in_expr(names, iter))
                .or_else(|| in_stmts(names, body))
                .or_else(|| in_stmts(names, orelse)),
            StmtKind::FunctionDef(nested) => in_stmts(names, &nested.body),
            _ => None,
        })
    }
    in_stmts(names, body)
}
