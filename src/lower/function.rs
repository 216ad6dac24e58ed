//! Lowering one function: AST statements and expressions to ONNX nodes.
//!
//! The meaning of every construct follows onnxscript's converter (see ARCHITECTURE.md and
//! docs/onnx-facts §5): Python operators map to ONNX ops, literals become `Constant`s that are
//! `CastLike`d to the tensor they meet, attribute parameters become attribute references, and
//! `if` becomes `If` with the assigned-and-live variables as outputs, in source order. Loops
//! (`loops`: `for`/`while` to `Loop`), nested `@graph()` functions (`graphs`: graph-valued
//! attributes) and subscripts (`subscripts`: `x[i]`, `x[a:b]` to Gather, Slice, Concat and
//! Squeeze) are lowered in submodules. Values are tensors, sequences (`Sequence[FLOAT]`, the
//! sequence ops) or optional values; `sema::infer` tracks which, and their element types.

use super::ir::*;
use crate::aten::EXPORTER_OPSET;
use crate::diagnostics::suggest::did_you_mean;
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Edit, Reported};
use crate::schema::{self, AttrType, FormalOption, OpSchema, Resolution};
use crate::sema::calls::{self, Calls};
use crate::sema::consteval::{self, eval_const, ConstError};
use crate::sema::constlib;
use crate::sema::decorators::Decoration;
use crate::sema::env::{self, resolve_dotted, Global, ModuleEnv, Opset};
use crate::sema::facts::{Fact, NameInfo};
use crate::sema::infer::{self, AttrFacts, Ty};
use crate::sema::liveness;
use crate::sema::types::{ElemType, ParamType};
use crate::sema::value::PyValue;
use crate::source::{LineIndex, Span};
use crate::syntax::ast::*;
use std::collections::{BTreeMap, HashMap, HashSet};

mod graphs;
mod loops;
mod optional;
mod subscripts;

use optional::Presence;

type R<T> = Result<T, Reported>;

/// The longest value name made from a variable's name (longer ones are cut).
const MAX_VALUE_NAME: usize = 100;

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
    produced: HashSet<String>,
    /// What the `if` around this scope says of optional values (see `optional`).
    facts: HashMap<String, Presence>,
}

pub struct Lowerer<'a, 'm> {
    env: &'a ModuleEnv<'m>,
    diags: &'a mut Diagnostics,
    /// The functions of the compilation, for calls between them.
    calls: &'a Calls,
    used_names: HashSet<String>,
    counter: usize,
    scopes: Vec<Scope>,
    castable: HashSet<String>,
    default_opset: Option<Opset>,
    imports: BTreeMap<String, (i64, Span)>,
    live_out: HashMap<u32, liveness::Live>,
    assigned_anywhere: HashSet<String>,
    lines: &'a LineIndex,
    /// E0109 is reported once per function, not at every constant.
    reported_no_opset: Option<Reported>,
    /// What is known of each value's element type (values are unique across scopes).
    types: HashMap<String, Ty>,
    /// How many loops enclose the statement being lowered (in the current function or graph).
    loop_depth: usize,
    /// Nested graphs already used as an attribute, by definition: a second use gets fresh names.
    graphs_used: HashSet<u32>,
    /// Where to record what each name stands for, for editors (`None`: not recorded).
    facts: Option<&'a mut Vec<Fact>>,
    /// The function's parameters: where each is declared and, for an input, whether it is
    /// optional; for an attribute, its Python type and default.
    params: HashMap<String, ParamNote>,
    /// Values that may be None (optional inputs and what passes them on); others are present.
    presence: HashMap<String, Presence>,
    /// Attribute parameters without a default that may be None.
    optional_attrs: HashSet<String>,
    /// The function translates PyTorch operators for `torch.onnx.export` (see `sema::binding`).
    exporter_bound: bool,
    /// The variable each name expression read (by span), for messages about values.
    names_read: HashMap<(u32, u32), String>,
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
        self.env.file
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

    /// Reports an error found while evaluating a constant (see [`ModuleEnv::report`]).
    fn push_const_error(&mut self, d: Diagnostic) -> Reported {
        self.env.report(self.diags, d)
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
        let mut name = candidate.to_string();
        while self.used_names.contains(&name) {
            name = format!("{candidate}_{}", self.counter);
            self.counter += 1;
        }
        self.used_names.insert(name.clone());
        name
    }

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
                let ty = self.types.get(v).map(Ty::describe);
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
                self.imports.insert(opset.domain.clone(), (opset.version, span));
                Ok(())
            }
        }
    }

    fn emit(
        &mut self,
        opset: &Opset,
        op_type: &str,
        inputs: Vec<Option<String>>,
        outputs: Vec<String>,
        attrs: Vec<Attr>,
        span: Span,
    ) -> R<()> {
        self.use_domain(opset, span)?;
        self.infer_outputs(opset, op_type, &inputs, &outputs, &attrs);
        let source = Some(self.location(span));
        let scope = self.scope();
        scope.produced.extend(outputs.iter().cloned());
        scope.nodes.push(Node {
            domain: opset.domain.clone(),
            op_type: op_type.into(),
            inputs,
            outputs,
            attrs,
            source,
        });
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
    ) {
        let ty = |v: &String| self.types.get(v).cloned();
        let input_types: Vec<Option<Ty>> = inputs.iter().map(|i| i.as_ref().and_then(ty)).collect();
        let attr_facts: Vec<(&str, AttrFacts)> = attrs
            .iter()
            .map(|a| {
                let facts = match &a.value {
                    AttrValue::Int(i) => AttrFacts::Int(*i),
                    AttrValue::Tensor(t) => AttrFacts::Tensor(t.elem),
                    AttrValue::Graph(g) => AttrFacts::Graph(g.outputs.iter().map(ty).collect()),
                    _ => AttrFacts::Other,
                };
                (a.name.as_str(), facts)
            })
            .collect();
        let known =
            infer::node_outputs(&opset.domain, op_type, opset.version, &input_types, &attr_facts, outputs.len());
        for (o, t) in outputs.iter().zip(known) {
            if let Some(t) = t {
                self.types.insert(o.clone(), t);
            }
        }
    }

    /// Reports the first element-type contradiction among a call's inputs (E0601).
    fn check_input_types(&mut self, schema: &OpSchema, inputs: &[Option<String>], spans: &[Span]) -> R<()> {
        self.check_required_inputs(schema, inputs, spans)?;
        let args: Vec<Option<&Ty>> = inputs.iter().map(|v| v.as_ref().and_then(|v| self.types.get(v))).collect();
        let Err(c) = infer::check_call(schema, &args, 0) else { return Ok(()) };
        let span_of = |i: usize| spans.get(i).copied().or(spans.last().copied()).unwrap_or_default();
        let mut d = Diagnostic::error(codes::TYPE_MISMATCH, self.file(), c.message).primary(span_of(c.arg), c.label);
        if let Some(j) = c.other {
            let first = args[j].map(Ty::describe).unwrap_or_default();
            d = d.secondary(span_of(j), format!("{first} here"));
        }
        d =
            d.help(c.help.unwrap_or_else(|| {
                "cast one side with `op.Cast(x, to=FLOAT.dtype)` or `op.CastLike(x, y)`".to_string()
            }));
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

    fn default_opset(&mut self, span: Span) -> R<Opset> {
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
                .primary(span, "lowered to ONNX ops")
                .help("call an ONNX op such as `op.Identity`, or write `@script(default_opset=op)`");
                let r = self.push(d);
                self.reported_no_opset = Some(r);
                Err(r)
            }
        }
    }

    fn emit_default(
        &mut self,
        op_type: &str,
        inputs: Vec<Option<String>>,
        outputs: Vec<String>,
        attrs: Vec<Attr>,
        span: Span,
    ) -> R<()> {
        let opset = self.default_opset(span)?;
        self.emit(&opset, op_type, inputs, outputs, attrs, span)
    }

    // -----------------------------------------------------------------------------------------
    // Constants

    fn emit_const(&mut self, value: &PyValue, hint: Option<&str>, span: Span) -> R<String> {
        let tensor = match tensor_of(value) {
            Ok(t) => t,
            Err(_) if value.weight() > crate::sema::value::MAX_CONSTANT_ELEMENTS => {
                return Err(self.push(consteval::too_large(self.file(), span, value.weight())));
            }
            Err(why) => {
                let d = Diagnostic::error(
                    codes::BAD_CONSTANT,
                    self.file(),
                    format!("{} cannot be a tensor constant", with_article(value.type_name())),
                )
                .primary(span, "not convertible to a tensor")
                .note(why);
                return Err(self.push(d));
            }
        };
        let hint = hint.map(str::to_string).unwrap_or_else(|| const_hint(value));
        let name = self.fresh(&hint);
        self.emit_default(
            "Constant",
            vec![],
            vec![name.clone()],
            vec![Attr { name: "value".into(), value: AttrValue::Tensor(tensor) }],
            span,
        )?;
        self.castable.insert(name.clone());
        Ok(name)
    }

    /// An attribute parameter used as a tensor: `Constant <value_T = @attr>`.
    fn attr_as_tensor(&mut self, attr: &str, ty: AttrType, as_bool: bool, hint: &str, span: Span) -> R<String> {
        let field = match ty {
            AttrType::Float => "value_float",
            AttrType::Int => "value_int",
            AttrType::String => "value_string",
            AttrType::Ints => "value_ints",
            other => {
                let d = Diagnostic::error(
                    codes::BAD_CONSTANT,
                    self.file(),
                    format!("a `{}` attribute cannot be used as a tensor", other.name()),
                )
                .primary(span, "used as a tensor here")
                .help("only float, int, str, bool and list[int] attributes can be used as tensors");
                return Err(self.push(d));
            }
        };
        let name = self.fresh(hint);
        let attrs = vec![Attr { name: field.into(), value: AttrValue::Ref { name: attr.into(), ty } }];
        self.emit_default("Constant", vec![], vec![name.clone()], attrs, span)?;
        self.note_attribute_tensor(&name, attr);
        if as_bool {
            let cast = self.fresh(&format!("{name}_as_bool"));
            let to = vec![Attr { name: "to".into(), value: AttrValue::Int(ElemType::Bool.code() as i64) }];
            self.emit_default("Cast", vec![Some(name)], vec![cast.clone()], to, span)?;
            self.note_attribute_tensor(&cast, attr);
            self.castable.insert(cast.clone());
            return Ok(cast);
        }
        self.castable.insert(name.clone());
        Ok(name)
    }

    fn copy(&mut self, value: &str, hint: &str, span: Span) -> R<String> {
        let name = self.fresh(hint);
        self.emit_default("Identity", vec![Some(value.to_string())], vec![name.clone()], vec![], span)?;
        self.derive_presence(&name, self.presence(value));
        Ok(name)
    }

    // -----------------------------------------------------------------------------------------
    // Expressions

    fn is_literal(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::FString(_) => true,
            ExprKind::List(items) => items.iter().all(Self::is_literal),
            ExprKind::UnaryOp { op: UnaryOp::Neg | UnaryOp::Pos, operand } => {
                matches!(operand.kind, ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_))
            }
            _ => false,
        }
    }

    fn lower_opt_expr(&mut self, e: &Expr) -> R<Option<String>> {
        if matches!(e.kind, ExprKind::None) {
            return Ok(None);
        }
        self.lower_expr(e, None).map(Some)
    }

    fn lower_expr(&mut self, e: &Expr, target: Option<&str>) -> R<String> {
        match &e.kind {
            _ if Self::is_literal(e) => {
                let value = self.const_value(e)?;
                self.emit_const(&value, target, e.span)
            }
            ExprKind::Name(n) => self.lower_name(n, e.span, target),
            ExprKind::Call { func, args } => {
                let out = target.unwrap_or("tmp");
                let name = self.fresh(out);
                self.lower_call(func, args, e.span, vec![name.clone()])?;
                Ok(name)
            }
            ExprKind::BinOp { op, left, right } => self.lower_binop(*op, left, right, e.span, target),
            ExprKind::UnaryOp { op, operand } => self.lower_unary(*op, operand, e.span, target),
            ExprKind::Compare { left, comparisons } => match self.lower_none_test(e, target) {
                Some(tested) => tested,
                None => self.lower_compare(left, comparisons, e.span, target),
            },
            ExprKind::Attribute { value, attr } if attr.name == "dtype" => match resolve_dotted(self.env, value) {
                Some(Global::TensorType(t)) => self.emit_const(&PyValue::Int(t.code() as i128), target, e.span),
                _ => Err(self.not_a_value(e)),
            },
            ExprKind::Attribute { .. } => Err(self.not_a_value(e)),
            ExprKind::None => Err(self.push(
                Diagnostic::error(codes::UNSUPPORTED_EXPR, self.file(), "`None` is not a tensor")
                    .primary(e.span, "`None` here")
                    .help("`None` may only stand for an omitted optional input of an op call"),
            )),
            ExprKind::List(_) => Err(self.push(
                Diagnostic::error(codes::UNSUPPORTED_EXPR, self.file(), "a list of tensors is not a value")
                    .primary(e.span, "list with non-constant items")
                    .help("build the tensor with `op.Concat` or the sequence with `op.SequenceConstruct`"),
            )),
            ExprKind::Subscript { value, index } => self.lower_subscript(e, value, index, target),
            // Conditions on what each call decides (None tests, attributes) are scalars.
            ExprKind::BoolOp { op, values } if self.decided_per_call(e) => {
                self.lower_bool_op(*op, values, e.span, target)
            }
            ExprKind::BoolOp { op, .. } => {
                let (word, sym) = if *op == BoolOp::And { ("and", "&") } else { ("or", "|") };
                Err(self.unsupported(
                    e.span,
                    &format!("`{word}` on tensors is"),
                    &format!(
                        "combine boolean tensors with `{sym}` (ONNX `{}`); `{word}` combines only conditions on attributes and `is None` tests",
                        if sym == "&" { "And" } else { "Or" }
                    ),
                ))
            }
            ExprKind::IfExp { .. } => Err(self.unsupported(
                e.span,
                "conditional expressions (`a if c else b`) are",
                "use an `if` statement, or `op.Where(c, a, b)`",
            )),
            ExprKind::Dict(_) => Err(self.unsupported(e.span, "dictionaries are", "ONNX functions compute on tensors")),
            ExprKind::Set(_) => Err(self.unsupported(e.span, "sets are", "ONNX functions compute on tensors")),
            ExprKind::Tuple(_) => Err(self.unsupported(
                e.span,
                "tuples as values are",
                "return several values with `return a, b`, or unpack them with `a, b = ...`",
            )),
            ExprKind::Starred(_) => {
                Err(self.unsupported(e.span, "starred expressions are", "pass each input explicitly"))
            }
            ExprKind::Slice { .. }
            | ExprKind::Ellipsis
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::FString(_) => Err(self.unsupported(e.span, "this expression is", "")),
        }
    }

    /// The value of a constant expression; a failure is reported (E0311 when part of it is not
    /// constant).
    fn const_value(&mut self, e: &Expr) -> R<PyValue> {
        eval_const(self.env, e).map_err(|err| match err {
            ConstError::NotConstant(s) => self.err(codes::BAD_CONSTANT, s, "invalid constant", "cannot evaluate"),
            ConstError::Poisoned(r) => r,
            ConstError::Failed(d) => self.push_const_error(*d),
        })
    }

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

    fn not_a_value(&mut self, e: &Expr) -> Reported {
        self.err(codes::NOT_A_VALUE, e.span, "this is not a tensor value", "cannot be used as a tensor")
    }

    fn lower_name(&mut self, n: &str, span: Span, target: Option<&str>) -> R<String> {
        self.names_read.insert((span.start, span.end), n.to_string());
        match self.lookup(n).cloned() {
            Some(b) => {
                self.note(n, span, &b);
                self.binding_value(n, b, target.unwrap_or(n), span)
            }
            None => match self.env.get(n).cloned() {
                Some(Global::Const(v)) => self.emit_const(&v, Some(target.unwrap_or(n)), span),
                Some(Global::Poison(r)) => Err(r),
                Some(Global::Deferred(d)) => match self.env.deferred_use(&d, span) {
                    Ok(d) => Err(self.push_const_error(d)),
                    Err(r) => Err(r),
                },
                Some(other) => {
                    let what = describe_global(&other);
                    let d = Diagnostic::error(
                        codes::NOT_A_VALUE,
                        self.file(),
                        format!("`{n}` is {what}, not a tensor value"),
                    )
                    .primary(span, "used as a value here");
                    Err(self.push(d))
                }
                None => Err(self.undefined(n, span)),
            },
        }
    }

    /// The tensor that a variable's binding stands for; an attribute parameter becomes a
    /// `Constant` named after `hint`.
    fn binding_value(&mut self, var: &str, b: Binding, hint: &str, span: Span) -> R<String> {
        match b {
            Binding::Value(v) => Ok(v),
            Binding::Poison(r) => Err(r),
            Binding::Attr { name, ty, as_bool } => self.attr_as_tensor(&name, ty, as_bool, hint, span),
            Binding::Graph(_) => {
                let d = Diagnostic::error(
                    codes::NOT_A_VALUE,
                    self.file(),
                    format!("`{var}` is a nested function, not a tensor value"),
                )
                .primary(span, "used as a value here")
                .help(format!(
                    "a `@graph()` function can only be passed as a graph attribute, e.g. `op.Scan(..., body={var})`"
                ));
                Err(self.push(d))
            }
        }
    }

    fn undefined(&mut self, n: &str, span: Span) -> Reported {
        let candidates = self.scopes.iter().flat_map(|s| s.vars.keys()).chain(self.env.globals.keys());
        let mut d = Diagnostic::error(codes::UNDEFINED_NAME, self.file(), format!("undefined name `{n}`"))
            .primary(span, "not defined");
        if self.assigned_anywhere.contains(n) {
            d = d.help(format!("`{n}` is assigned only later, or only on some paths to this use"));
        } else if let Some(s) = did_you_mean(n, candidates.map(String::as_str)) {
            d = d
                .help(format!("did you mean `{s}`?"))
                .fix(format!("Replace with `{s}`"), vec![Edit::replace(span, &s)]);
        }
        self.push(d)
    }

    fn lower_binop(&mut self, op: BinOp, left: &Expr, right: &Expr, span: Span, target: Option<&str>) -> R<String> {
        let op_type = match op {
            BinOp::Add => "Add",
            BinOp::Sub => "Sub",
            BinOp::Mult => "Mul",
            BinOp::Div => "Div",
            BinOp::Mod => "Mod",
            BinOp::Pow => "Pow",
            BinOp::MatMult => "MatMul",
            BinOp::BitAnd => "And",
            BinOp::BitOr => "Or",
            BinOp::FloorDiv | BinOp::BitXor | BinOp::LShift | BinOp::RShift => {
                let help = match op {
                    BinOp::FloorDiv => "write `op.Floor(a / b)` for floats, or `op.Div` for integers",
                    BinOp::BitXor => "write `op.Xor` for booleans or `op.BitwiseXor` for integers",
                    _ => "write `op.BitShift` with the `direction` attribute",
                };
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_OPERATOR,
                    self.file(),
                    format!("the operator `{}` is not part of the ONNX Script language", op.symbol()),
                )
                .primary(span, "no ONNX mapping")
                .help(help);
                return Err(self.push(d));
            }
        };
        let mut attrs = vec![];
        if op == BinOp::Mod && Self::is_literal(right) {
            if let Ok(PyValue::Float(_)) = eval_const(self.env, right) {
                attrs.push(Attr { name: "fmod".into(), value: AttrValue::Int(1) });
            }
        }
        let l = self.lower_expr(left, None)?;
        let r = self.lower_expr(right, None)?;
        let args = self.autocast_default(op_type, vec![Some(l), Some(r)], &[left.span, right.span], span)?;
        let name = self.fresh(target.unwrap_or("tmp"));
        self.emit_default(op_type, args, vec![name.clone()], attrs, span)?;
        Ok(name)
    }

    fn lower_unary(&mut self, op: UnaryOp, operand: &Expr, span: Span, target: Option<&str>) -> R<String> {
        let op_type = match op {
            UnaryOp::Neg => "Neg",
            UnaryOp::Not => "Not",
            UnaryOp::Pos | UnaryOp::Invert => {
                let sym = if op == UnaryOp::Pos { "+" } else { "~" };
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_OPERATOR,
                    self.file(),
                    format!("the unary operator `{sym}` is not part of the ONNX Script language"),
                )
                .primary(span, "no ONNX mapping")
                .help(if op == UnaryOp::Pos {
                    "drop the `+`"
                } else {
                    "write `op.Not` for booleans or `op.BitwiseNot` for integers"
                });
                return Err(self.push(d));
            }
        };
        let x = self.lower_expr(operand, None)?;
        if let Some(schema) = self.default_schema(op_type) {
            self.check_input_types(schema, &[Some(x.clone())], &[operand.span])?;
        }
        let name = self.fresh(target.unwrap_or("tmp"));
        self.emit_default(op_type, vec![Some(x)], vec![name.clone()], vec![], span)?;
        Ok(name)
    }

    fn lower_compare(
        &mut self,
        left: &Expr,
        comparisons: &[(CmpOp, Expr)],
        span: Span,
        target: Option<&str>,
    ) -> R<String> {
        if comparisons.len() != 1 {
            let d = Diagnostic::error(
                codes::UNSUPPORTED_EXPR,
                self.file(),
                "chained comparisons are not part of the ONNX Script language",
            )
            .primary(span, "more than one comparison")
            .help("compare twice and combine with `&`: `(a < b) & (b < c)`");
            return Err(self.push(d));
        }
        let (op, right) = (&comparisons[0].0, &comparisons[0].1);
        if matches!(op, CmpOp::Eq | CmpOp::NotEq) {
            if let Some(compared) = self.lower_string_attribute_compare(left, right, *op == CmpOp::NotEq, span, target)
            {
                return compared;
            }
        }
        let op_type = match op {
            CmpOp::Eq | CmpOp::NotEq => "Equal",
            CmpOp::Lt => "Less",
            CmpOp::LtE => "LessOrEqual",
            CmpOp::Gt => "Greater",
            CmpOp::GtE => "GreaterOrEqual",
            CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn => {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_OPERATOR,
                    self.file(),
                    format!("the operator `{}` is not part of the ONNX Script language", op.symbol()),
                )
                .primary(span, "no ONNX mapping")
                .help("compare tensors with `==`, `!=`, `<`, `<=`, `>` or `>=`; test optional values with `x is None`");
                return Err(self.push(d));
            }
        };
        let l = self.lower_expr(left, None)?;
        let r = self.lower_expr(right, None)?;
        let args = self.autocast_default(op_type, vec![Some(l), Some(r)], &[left.span, right.span], span)?;
        if *op == CmpOp::NotEq {
            let tmp = self.fresh("tmp");
            self.emit_default("Equal", args, vec![tmp.clone()], vec![], span)?;
            let name = self.fresh(target.unwrap_or("tmp"));
            self.emit_default("Not", vec![Some(tmp)], vec![name.clone()], vec![], span)?;
            return Ok(name);
        }
        let name = self.fresh(target.unwrap_or("tmp"));
        self.emit_default(op_type, args, vec![name.clone()], vec![], span)?;
        Ok(name)
    }

    /// The operands of a Python operator, autocast and type-checked (at `arg_spans`) against
    /// the default opset's `op_type`.
    fn autocast_default(
        &mut self,
        op_type: &str,
        args: Vec<Option<String>>,
        arg_spans: &[Span],
        span: Span,
    ) -> R<Vec<Option<String>>> {
        self.default_opset(span)?;
        let schema = self.default_schema(op_type);
        let args = self.autocast(schema, args, span)?;
        if let Some(schema) = schema {
            self.check_input_types(schema, &args, arg_spans)?;
        }
        Ok(args)
    }

    /// onnxscript's autocast: a literal (or promoted attribute) operand that shares a type
    /// variable with a tensor operand is wrapped in `CastLike(literal, tensor)`.
    fn autocast(&mut self, schema: Option<&OpSchema>, args: Vec<Option<String>>, span: Span) -> R<Vec<Option<String>>> {
        let Some(schema) = schema else { return Ok(args) };
        if schema.inputs.is_empty() {
            return Ok(args);
        }
        let mut bindings: HashMap<String, String> = HashMap::new();
        let mut typevars: Vec<Option<String>> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let formal = match schema.inputs.get(i) {
                Some(f) => f,
                None => {
                    let last = schema.inputs.last().expect("checked non-empty");
                    if last.option != FormalOption::Variadic {
                        typevars.push(None);
                        continue;
                    }
                    if !last.is_homogeneous {
                        typevars.push(None);
                        continue;
                    }
                    last
                }
            };
            if formal.option == FormalOption::Variadic && !formal.is_homogeneous && i >= schema.inputs.len() - 1 {
                typevars.push(None);
                continue;
            }
            let tv = formal.type_str.clone();
            if !tv.contains('(') {
                if let Some(a) = a {
                    if !self.castable.contains(a) {
                        bindings.insert(tv.clone(), a.clone());
                    }
                }
                typevars.push(Some(tv));
            } else {
                typevars.push(None);
            }
        }
        let mut out = Vec::with_capacity(args.len());
        for (a, tv) in args.into_iter().zip(typevars) {
            match (a, tv.and_then(|t| bindings.get(&t).cloned())) {
                (Some(a), Some(like)) if self.castable.contains(&a) => {
                    let cast = self.fresh(&format!("{a}_cast"));
                    let presence = self.presence(&a);
                    self.emit_default("CastLike", vec![Some(a), Some(like)], vec![cast.clone()], vec![], span)?;
                    self.derive_presence(&cast, presence);
                    out.push(Some(cast));
                }
                (a, _) => out.push(a),
            }
        }
        Ok(out)
    }

    // -----------------------------------------------------------------------------------------
    // Calls

    /// Lowers `opset.Op(...)` (or a call to another function of the module) into one node
    /// whose outputs are `outputs`.
    fn lower_call(&mut self, func: &Expr, args: &[Arg], span: Span, outputs: Vec<String>) -> R<()> {
        for a in args {
            if a.kind != ArgKind::Plain {
                let what = if a.kind == ArgKind::Star { "`*args` in calls is" } else { "`**kwargs` in calls is" };
                return Err(self.unsupported(a.span, what, "pass each input and attribute explicitly"));
            }
        }
        if let Some(idx) = self.module_function(func)? {
            return self.lower_function_call(idx, "", args, span, outputs);
        }
        let (opset, op_name, op_span) = match &func.kind {
            ExprKind::Attribute { value, attr } => match value.as_ref() {
                Expr { kind: ExprKind::Name(n), .. } if self.lookup(n).is_none() => match self.env.get(n) {
                    Some(Global::Opset(o)) => (o.clone(), attr.name.clone(), attr.span),
                    Some(Global::Poison(r)) => return Err(*r),
                    Some(Global::Lib(_)) => {
                        // `math.sqrt(2)` as an operand: Python, which runs only at compile time.
                        let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), format!("`{n}.{}` is a Python function, not an op", attr.name))
                            .primary(func.span, "called where a tensor is computed")
                            .help(format!("compute the value in a module constant (`C = {n}.{}(...)`) and use `C`, as onnxscript requires", attr.name));
                        return Err(self.push(d));
                    }
                    Some(_) => {
                        let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), format!("`{n}` is not an opset"))
                            .primary(value.span, "expected an opset such as `op`")
                            .help("call ops through an opset: `from onnxscript import opset18 as op`, then `op.Add(x, y)`");
                        return Err(self.push(d));
                    }
                    None => return Err(self.undefined(n, value.span)),
                },
                _ => {
                    let d = Diagnostic::error(
                        codes::UNKNOWN_CALLEE,
                        self.file(),
                        "ops must be called through an opset name",
                    )
                    .primary(func.span, "not of the form `opset.Op`")
                    .help("import the opset under a name: `from onnxscript import opset18 as op`");
                    return Err(self.push(d));
                }
            },
            ExprKind::Name(n) => match (self.lookup(n), self.env.get(n)) {
                (None, Some(Global::Function(idx))) => {
                    let idx = *idx;
                    return self.lower_function_call(idx, n, args, span, outputs);
                }
                // A bare op name is an op of the default opset, as onnxscript resolves it.
                (None, None) => match self.default_opset.clone() {
                    Some(o) => (o, n.clone(), func.span),
                    None => return Err(self.undefined(n, func.span)),
                },
                // An import that failed (already reported).
                (None, Some(Global::Poison(r))) => return Err(*r),
                (Some(Binding::Graph(_)), _) => {
                    let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), format!("the nested function `{n}` cannot be called"))
                        .primary(func.span, "a `@graph()` function")
                        .help(format!("pass it as a graph attribute of an op, e.g. `op.Scan(..., body={n})`; to reuse code, call a module-level function"));
                    return Err(self.push(d));
                }
                (Some(Binding::Poison(r)), _) => return Err(*r),
                _ => {
                    let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), format!("`{n}` is not callable"))
                        .primary(func.span, "not an op or a function")
                        .help("call ONNX ops through an opset, e.g. `op.Add(x, y)`");
                    return Err(self.push(d));
                }
            },
            _ => {
                let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), "this cannot be called")
                    .primary(func.span, "not an op or a function");
                return Err(self.push(d));
            }
        };
        if opset.domain.is_empty() && self.default_opset.is_none() {
            self.default_opset = Some(opset.clone());
        }
        let registry = schema::registry();
        let schema = match registry.resolve(&opset.domain, &op_name, opset.version) {
            Resolution::Found(s) => Some(s),
            Resolution::NotYet { first_version } => {
                let d = Diagnostic::error(
                    codes::OP_NOT_IN_OPSET,
                    self.file(),
                    format!("`{op_name}` is not available in opset {}", opset.version),
                )
                .primary(op_span, format!("introduced in opset {first_version}"))
                .help(if self.exporter_bound && opset.domain.is_empty() {
                    format!("torch.onnx.export builds translations at opset {EXPORTER_OPSET}: write `{op_name}` with opset-{EXPORTER_OPSET} operators (`onnxsc explain E0513` shows how for `Gelu`)")
                } else {
                    format!("import `opset{first_version}` or later to use `{op_name}`")
                });
                return Err(self.push(d));
            }
            Resolution::Unknown if registry.known_domain(&opset.domain) => {
                let shown = if opset.domain.is_empty() { "ONNX".to_string() } else { format!("`{}`", opset.domain) };
                let mut d =
                    Diagnostic::error(codes::UNKNOWN_OP, self.file(), format!("{shown} has no operator `{op_name}`"))
                        .primary(op_span, "unknown operator");
                if let Some(s) = did_you_mean(&op_name, registry.op_names(&opset.domain)) {
                    d = d
                        .help(format!("did you mean `{s}`?"))
                        .fix(format!("Replace with `{s}`"), vec![Edit::replace(op_span, &s)]);
                }
                return Err(self.push(d));
            }
            Resolution::Unknown => None,
        };
        if let Some(s) = schema {
            if s.runtime_only {
                self.diags.push(
                    Diagnostic::warning(
                        codes::RUNTIME_ONLY_OP,
                        self.file(),
                        format!("`{op_name}` is an ONNX Runtime operator, not an ONNX one"),
                    )
                    .primary(op_span, "defined by ONNX Runtime in the ONNX domain")
                    .help("ONNX Runtime runs it, but onnx.checker and other runtimes do not know it"),
                );
            }
            if s.deprecated {
                // onnx.checker refuses a model that uses it: an error, not a warning.
                self.diags.push(
                    Diagnostic::error(
                        codes::DEPRECATED_OP,
                        self.file(),
                        format!("`{op_name}` is deprecated in opset {}, and ONNX tools refuse it", opset.version),
                    )
                    .primary(op_span, "deprecated operator")
                    .help(format!(
                        "onnx.checker refuses a model that uses a deprecated operator: use its replacement, or an opset in which `{op_name}` is not deprecated"
                    )),
                );
            }
        }

        // Split arguments into inputs and attributes, as onnxscript does with a schema.
        let mut input_exprs: Vec<Option<&Expr>> = Vec::new();
        let mut attr_exprs: Vec<(Ident, &Expr, Option<AttrType>)> = Vec::new();
        self.check_argument_order(args)?;
        let positional: Vec<&Arg> = args.iter().filter(|a| a.keyword.is_none()).collect();
        let input_slots = match schema {
            Some(s) if s.inputs.last().is_some_and(|l| l.option != FormalOption::Variadic) => s.inputs.len(),
            _ => usize::MAX,
        };
        for a in positional.iter().take(input_slots) {
            input_exprs.push(Some(&a.value));
        }
        if let Some(s) = schema {
            // onnxscript binds extra positional arguments to the attributes, in schema order.
            for (a, attr) in positional.iter().skip(input_slots).zip(&s.attributes) {
                attr_exprs.push((Ident { name: attr.name.clone(), span: a.span }, &a.value, Some(attr.ty)));
            }
            if positional.len() > input_slots.saturating_add(s.attributes.len()) {
                let extra = positional[input_slots + s.attributes.len()];
                let d = Diagnostic::error(
                    codes::BAD_ARGUMENT,
                    self.file(),
                    format!(
                        "`{op_name}` takes {} inputs and {} attributes, but {} positional arguments were given",
                        s.inputs.len(),
                        s.attributes.len(),
                        positional.len()
                    ),
                )
                .primary(extra.span, "unexpected argument")
                .help("pass attributes by keyword");
                return Err(self.push(d));
            }
        }
        for a in args.iter().filter(|a| a.keyword.is_some()) {
            let k = a.keyword.as_ref().expect("filtered");
            match schema {
                Some(s) => {
                    if let Some(pos) = s.inputs.iter().position(|f| f.name == k.name) {
                        if input_exprs.len() <= pos {
                            input_exprs.resize(pos + 1, None);
                        }
                        if input_exprs[pos].is_some() {
                            let d = Diagnostic::error(
                                codes::BAD_ARGUMENT,
                                self.file(),
                                format!("input `{}` is given twice", k.name),
                            )
                            .primary(a.span, "given again by name");
                            return Err(self.push(d));
                        }
                        input_exprs[pos] = Some(&a.value);
                    } else if let Some(attr) = s.attribute(&k.name) {
                        attr_exprs.push((k.clone(), &a.value, Some(attr.ty)));
                    } else {
                        let names = s
                            .attributes
                            .iter()
                            .map(|a| a.name.as_str())
                            .chain(s.inputs.iter().map(|i| i.name.as_str()));
                        let mut d = Diagnostic::error(
                            codes::UNKNOWN_ATTRIBUTE,
                            self.file(),
                            format!("`{op_name}` has no attribute `{}`", k.name),
                        )
                        .primary(k.span, "unknown attribute");
                        if let Some(sug) = did_you_mean(&k.name, names) {
                            d = d
                                .help(format!("did you mean `{sug}`?"))
                                .fix(format!("Replace with `{sug}`"), vec![Edit::replace(k.span, &sug)]);
                        } else if s.attributes.is_empty() {
                            d = d.help(format!("`{op_name}` takes no attributes"));
                        } else {
                            let all: Vec<String> = s.attributes.iter().map(|a| format!("`{}`", a.name)).collect();
                            d = d.help(format!("its attributes are {}", all.join(", ")));
                        }
                        return Err(self.push(d));
                    }
                }
                None => attr_exprs.push((k.clone(), &a.value, None)),
            }
        }
        if let Some(s) = schema {
            let max = s.max_input as usize;
            if input_exprs.len() > max {
                let extra = args.iter().filter(|a| a.keyword.is_none()).nth(max).map(|a| a.span).unwrap_or(span);
                let d = Diagnostic::error(
                    codes::BAD_ARGUMENT,
                    self.file(),
                    format!(
                        "`{op_name}` takes at most {max} input{}, but {} were given",
                        if max == 1 { "" } else { "s" },
                        input_exprs.len()
                    ),
                )
                .primary(extra, "unexpected input");
                return Err(self.push(d));
            }
            let given = input_exprs.iter().filter(|e| e.is_some_and(|e| !matches!(e.kind, ExprKind::None))).count();
            if let Some(last) = s.inputs.last().filter(|l| l.option == FormalOption::Variadic) {
                let before = s.inputs.len() - 1;
                let variadic_given = input_exprs.len().saturating_sub(before);
                if variadic_given < last.min_arity as usize {
                    let d = Diagnostic::error(
                        codes::BAD_ARGUMENT,
                        self.file(),
                        format!(
                            "`{op_name}` needs at least {} `{}` input{}, but {variadic_given} were given",
                            last.min_arity,
                            last.name,
                            if last.min_arity == 1 { "" } else { "s" }
                        ),
                    )
                    .primary(span, "too few inputs")
                    .help(format!("`{}` is variadic: pass one or more tensors positionally", last.name));
                    return Err(self.push(d));
                }
            }
            let required: Vec<&str> =
                s.inputs.iter().filter(|f| f.option == FormalOption::Single).map(|f| f.name.as_str()).collect();
            for (i, f) in s.inputs.iter().enumerate() {
                if f.option == FormalOption::Single {
                    let present =
                        input_exprs.get(i).copied().flatten().is_some_and(|e| !matches!(e.kind, ExprKind::None));
                    if !present {
                        let d = Diagnostic::error(
                            codes::BAD_ARGUMENT,
                            self.file(),
                            format!("`{op_name}` is missing its required input `{}`", f.name),
                        )
                        .primary(span, format!("{given} input{} given", if given == 1 { "" } else { "s" }))
                        .help(format!(
                            "`{op_name}` requires {}",
                            required.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
                        ));
                        return Err(self.push(d));
                    }
                }
            }
            for a in &s.attributes {
                if a.required && !attr_exprs.iter().any(|(k, _, _)| k.name == a.name) {
                    let d = Diagnostic::error(
                        codes::MISSING_ATTRIBUTE,
                        self.file(),
                        format!("`{op_name}` requires the attribute `{}`", a.name),
                    )
                    .primary(span, "missing attribute")
                    .help(format!("pass it by keyword: `{}=...`", a.name));
                    return Err(self.push(d));
                }
            }
            if outputs.len() > s.max_output as usize {
                let d = Diagnostic::error(
                    codes::OUTPUT_COUNT,
                    self.file(),
                    format!(
                        "`{op_name}` has at most {} output{}, but {} are unpacked",
                        s.max_output,
                        if s.max_output == 1 { "" } else { "s" },
                        outputs.len()
                    ),
                )
                .primary(span, "too many names on the left");
                return Err(self.push(d));
            }
            if opset.domain.is_empty() && op_name == "Split" {
                self.check_split_outputs(s, &input_exprs, &attr_exprs, outputs.len(), span)?;
            }
        }
        // Inputs are translated before attributes, in argument order, as onnxscript does.
        let mut inputs = Vec::new();
        for e in &input_exprs {
            inputs.push(match e {
                Some(e) => self.lower_opt_expr(e)?,
                None => None,
            });
        }
        let mut attrs = Vec::new();
        for (k, e, ty) in attr_exprs {
            if let Some(a) = self.lower_attr(&op_name, &k, e, ty)? {
                attrs.push(a);
            }
        }
        let inputs = self.autocast(schema, inputs, span)?;
        if let Some(schema) = schema {
            let spans: Vec<Span> = input_exprs.iter().map(|e| e.map(|e| e.span).unwrap_or(span)).collect();
            self.check_input_types(schema, &inputs, &spans)?;
            for a in &attrs {
                let at =
                    args.iter().find(|x| x.keyword.as_ref().is_some_and(|k| k.name == a.name)).map_or(span, |x| x.span);
                self.check_required_attribute(schema, a, at)?;
            }
        }
        // Trailing omitted inputs are dropped, as ONNX allows.
        let mut inputs = inputs;
        while inputs.last().is_some_and(|i| i.is_none()) {
            inputs.pop();
        }
        self.emit(&opset, &op_name, inputs, outputs, attrs, span)
    }

    /// `Split` makes as many outputs as `num_outputs` says, or as its constant `split` input (an
    /// attribute before opset 13) has entries: a call that unpacks another number builds a
    /// model that fails at load (E0408).
    fn check_split_outputs(
        &mut self,
        schema: &OpSchema,
        input_exprs: &[Option<&Expr>],
        attr_exprs: &[(Ident, &Expr, Option<AttrType>)],
        unpacked: usize,
        span: Span,
    ) -> R<()> {
        let attr = |name: &str| attr_exprs.iter().find(|(k, _, _)| k.name == name).map(|(_, e, _)| *e);
        let split_input =
            schema.inputs.iter().position(|f| f.name == "split").and_then(|i| input_exprs.get(i).copied().flatten());
        // Only values known at compile time count; a tensor `split` is checked by ONNX Runtime.
        let constant = |e: &Expr| eval_const(self.env, e).ok();
        let (count, why, at) = if let Some(e) = attr("num_outputs") {
            match constant(e).and_then(|v| v.as_i64()) {
                Some(n) => (n, format!("num_outputs={n}"), e.span),
                None => return Ok(()),
            }
        } else if let Some(e) = split_input.or_else(|| attr("split")).filter(|e| !matches!(e.kind, ExprKind::None)) {
            match constant(e).as_ref().and_then(|v| v.items().map(|i| i.len())) {
                Some(n) => (n as i64, format!("its `split` has {n} entr{}", if n == 1 { "y" } else { "ies" }), e.span),
                None => return Ok(()),
            }
        } else {
            return Ok(());
        };
        if count == unpacked as i64 {
            return Ok(());
        }
        let d = Diagnostic::error(
            codes::OUTPUT_COUNT,
            self.file(),
            format!(
                "`Split` produces {count} output{} ({why}), but {unpacked} {} unpacked",
                if count == 1 { "" } else { "s" },
                if unpacked == 1 { "is" } else { "are" }
            ),
        )
        .primary(span, format!("{unpacked} name{} on the left", if unpacked == 1 { "" } else { "s" }))
        .secondary(at, format!("{count} output{} here", if count == 1 { "" } else { "s" }))
        .help("unpack one name per output; the model would fail to load");
        Err(self.push(d))
    }

    /// Python's own rules: no positional argument after a keyword one, no keyword given twice.
    fn check_argument_order(&mut self, args: &[Arg]) -> R<()> {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut keyword_seen = false;
        for a in args {
            match &a.keyword {
                Some(k) => {
                    keyword_seen = true;
                    if let Some(first) = seen.insert(&k.name, k.span) {
                        let d = Diagnostic::error(
                            codes::BAD_ARGUMENT,
                            self.file(),
                            format!("keyword argument `{}` is repeated", k.name),
                        )
                        .primary(k.span, "given again here")
                        .secondary(first, "first given here");
                        return Err(self.push(d));
                    }
                }
                None if keyword_seen => {
                    let d = Diagnostic::error(
                        codes::BAD_ARGUMENT,
                        self.file(),
                        "positional argument follows keyword argument",
                    )
                    .primary(a.span, "positional argument after a keyword argument")
                    .help("put the inputs first, then the attributes by keyword");
                    return Err(self.push(d));
                }
                None => {}
            }
        }
        Ok(())
    }

    /// `mylib.f` where `mylib` is an imported `.onnxs` module: the id of its function `f`.
    /// `None` when the callee is not of that form (an op, a function named directly).
    fn module_function(&mut self, func: &Expr) -> R<Option<usize>> {
        let ExprKind::Attribute { value, attr } = &func.kind else { return Ok(None) };
        // The root of `a.b.f` must be a global, not a local variable.
        let mut root = value.as_ref();
        while let ExprKind::Attribute { value, .. } = &root.kind {
            root = value;
        }
        match &root.kind {
            ExprKind::Name(n) if self.lookup(n).is_none() => {}
            _ => return Ok(None),
        }
        let Some(Global::Module(key)) = resolve_dotted(self.env, value) else { return Ok(None) };
        let Some(ns) = self.env.namespace(&key) else { return Ok(None) };
        match ns.get(&attr.name) {
            Some(Global::Function(idx)) => Ok(Some(idx)),
            Some(Global::Poison(r)) => Err(r),
            Some(_) => Ok(None),
            None => {
                let mut d = Diagnostic::error(
                    codes::UNDEFINED_NAME,
                    self.file(),
                    format!("module `{}` has no `{}`", ns.display, attr.name),
                )
                .primary(attr.span, "not defined in that module");
                if let Some(s) = did_you_mean(&attr.name, ns.names.keys().map(String::as_str)) {
                    d = d
                        .help(format!("did you mean `{s}`?"))
                        .fix(format!("Replace with `{s}`"), vec![Edit::replace(attr.span, &s)]);
                }
                Err(self.push(d))
            }
        }
    }

    /// A call to a function of the compilation (function id `idx`): a node in the callee's
    /// domain, named as the callee is defined. As onnxscript does with the callee's signature,
    /// arguments bind to parameters by position, then by keyword; those that bind to attribute
    /// parameters become the node's attributes (typed as the parameter), the rest its inputs,
    /// in parameter order. An omitted optional input before a given one is `""` (onnxscript
    /// drops it and shifts the later inputs: not copied). A literal passed for an input typed by
    /// a TypeVar is `CastLike`d to another argument of that TypeVar.
    fn lower_function_call(
        &mut self,
        idx: usize,
        _name: &str,
        args: &[Arg],
        span: Span,
        outputs: Vec<String>,
    ) -> R<()> {
        self.check_argument_order(args)?;
        let Some(callee) = self.calls.callees.get(idx).cloned() else {
            let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), "this function cannot be called")
                .primary(span, "not a function of the compilation");
            return Err(self.push(d));
        };
        if let Some(n) = callee.outputs {
            if n != outputs.len() {
                let used = if outputs.len() == 1 {
                    "it is used as one value".to_string()
                } else {
                    format!("{} are unpacked", outputs.len())
                };
                let d = Diagnostic::error(
                    codes::OUTPUT_COUNT,
                    self.file(),
                    format!("`{}` returns {n} output{}, but {used}", callee.name, if n == 1 { "" } else { "s" }),
                )
                .primary(span, format!("{n} output{}", if n == 1 { "" } else { "s" }))
                .help(format!("assign its outputs to {n} name{}", if n == 1 { "" } else { "s" }));
                return Err(self.push(d));
            }
        }
        // `sema::calls` reported a mismatch when it checked the call; a call it did not check
        // (the callee's name means another function where the call is) is reported here.
        let bound = match calls::bind_arguments(&callee, self.file(), span, args) {
            Ok(bound) => bound,
            Err(d) => return Err(self.calls.reported_mismatch(self.file(), span).unwrap_or_else(|| self.push(*d))),
        };
        let mut inputs: Vec<Option<String>> = Vec::new();
        let mut type_vars: Vec<Option<String>> = Vec::new();
        let mut attrs = Vec::new();
        let mut failed = Ok(());
        for (p, a) in callee.params.iter().zip(&bound) {
            match (p.attr, a) {
                (Some(ty), Some(a)) => {
                    let key =
                        Ident { name: p.name.clone(), span: a.keyword.as_ref().map(|k| k.span).unwrap_or(a.span) };
                    match self.lower_attr(&callee.name, &key, &a.value, Some(ty)) {
                        Ok(Some(at)) => attrs.push(at),
                        Ok(None) => {}
                        Err(r) => failed = Err(r),
                    }
                }
                (Some(_), None) => {}
                (None, a) => {
                    let value = match a {
                        Some(a) => match self.lower_opt_expr(&a.value) {
                            Ok(Some(v)) if !p.optional => {
                                let place = format!("`{}` requires its input `{}`", callee.name, p.name);
                                match self.require_present(&v, a.value.span, &place) {
                                    Ok(()) => Some(v),
                                    Err(r) => {
                                        failed = Err(r);
                                        None
                                    }
                                }
                            }
                            Ok(v) => v,
                            Err(r) => {
                                failed = Err(r);
                                None
                            }
                        },
                        None => None,
                    };
                    inputs.push(value);
                    type_vars.push(p.type_var.clone());
                }
            }
        }
        failed?;
        // Trailing omitted inputs are left out.
        while inputs.last().is_some_and(|i| i.is_none()) {
            inputs.pop();
            type_vars.pop();
        }
        // onnxscript's autocast: the last non-literal argument of each TypeVar is the target.
        let mut targets: HashMap<&str, String> = HashMap::new();
        for (i, tv) in inputs.iter().zip(&type_vars) {
            if let (Some(i), Some(tv)) = (i, tv) {
                if !self.castable.contains(i) {
                    targets.insert(tv.as_str(), i.clone());
                }
            }
        }
        let mut cast_inputs = Vec::with_capacity(inputs.len());
        for (i, tv) in inputs.iter().zip(&type_vars) {
            match (i, tv.as_deref().and_then(|t| targets.get(t))) {
                (Some(i), Some(like)) if self.castable.contains(i) => {
                    let cast = self.fresh(&format!("{i}_cast"));
                    self.emit_default(
                        "CastLike",
                        vec![Some(i.clone()), Some(like.clone())],
                        vec![cast.clone()],
                        vec![],
                        span,
                    )?;
                    cast_inputs.push(Some(cast));
                }
                (i, _) => cast_inputs.push(i.clone()),
            }
        }
        self.emit(
            &Opset { domain: callee.domain.clone(), version: callee.version },
            &callee.name,
            cast_inputs,
            outputs,
            attrs,
            span,
        )
    }

    /// An attribute argument: a reference to an attribute parameter, or a script-time constant.
    fn lower_attr(&mut self, op: &str, key: &Ident, e: &Expr, expected: Option<AttrType>) -> R<Option<Attr>> {
        if let ExprKind::Name(n) = &e.kind {
            if let Some(b) = self.lookup(n).cloned() {
                self.note(n, e.span, &b);
            }
            match self.lookup(n).cloned() {
                Some(Binding::Attr { name, ty, .. }) => {
                    if let Some(exp) = expected {
                        if exp != ty {
                            let d = Diagnostic::error(
                                codes::ATTRIBUTE_TYPE,
                                self.file(),
                                format!(
                                    "attribute `{}` of `{op}` is {}, but `{n}` is {}",
                                    key.name,
                                    exp.name(),
                                    ty.name()
                                ),
                            )
                            .primary(e.span, format!("{} attribute", with_article(ty.name())))
                            .help(format!("annotate `{n}` with a type that ONNX carries as `{}`", exp.name()));
                            return Err(self.push(d));
                        }
                    }
                    return Ok(Some(Attr { name: key.name.clone(), value: AttrValue::Ref { name, ty } }));
                }
                Some(Binding::Poison(r)) => return Err(r),
                Some(Binding::Graph(g)) => return self.graph_attr(op, key, n, *g, e.span, expected).map(Some),
                Some(Binding::Value(_)) => {
                    let d = Diagnostic::error(codes::ATTRIBUTE_TYPE, self.file(), format!("attribute `{}` needs a script-time value, but `{n}` is a tensor", key.name))
                        .primary(e.span, "a tensor computed at run time")
                        .help("attributes are constants or attribute parameters of the function (annotated `float`, `int`, ...)");
                    return Err(self.push(d));
                }
                None => {}
            }
        }
        let value = match eval_const(self.env, e) {
            Ok(v) => v,
            Err(ConstError::NotConstant(span)) => {
                let d = Diagnostic::error(
                    codes::ATTRIBUTE_TYPE,
                    self.file(),
                    format!("attribute `{}` must be a constant or an attribute parameter", key.name),
                )
                .primary(span, "not known when the function is compiled")
                .help("pass a literal, a module constant, `FLOAT.dtype`, or an attribute parameter of the function");
                return Err(self.push(d));
            }
            Err(ConstError::Poisoned(r)) => return Err(r),
            Err(ConstError::Failed(d)) => return Err(self.push_const_error(*d)),
        };
        if value == PyValue::None {
            return Ok(None);
        }
        let ty = match expected.or_else(|| value.inferred_attr_type()) {
            Some(t) => t,
            None => {
                let d = Diagnostic::error(
                    codes::ATTRIBUTE_TYPE,
                    self.file(),
                    format!("cannot tell the type of attribute `{}`", key.name),
                )
                .primary(e.span, "empty or mixed list")
                .help("give the list at least one element, all of one type");
                return Err(self.push(d));
            }
        };
        match attr_value(&value, ty) {
            Ok(v) => Ok(Some(Attr { name: key.name.clone(), value: v })),
            Err(why) => {
                let mut d = Diagnostic::error(
                    codes::ATTRIBUTE_TYPE,
                    self.file(),
                    format!(
                        "attribute `{}` of `{op}` is {}, but the value is {}",
                        key.name,
                        ty.name(),
                        with_article(value.type_name())
                    ),
                )
                .primary(e.span, format!("expected {}", ty.name()));
                if let Some(why) = why {
                    d = d.note(why);
                }
                Err(self.push(d))
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Statements

    fn is_static_if(&self, s: &Stmt) -> Option<bool> {
        let StmtKind::If { test, .. } = &s.kind else { return None };
        if let Some(taken) = self.static_none_test(test) {
            return Some(taken);
        }
        let ExprKind::Name(n) = &test.kind else { return None };
        if self.assigned_anywhere.contains(n) {
            return None;
        }
        match self.env.get(n)? {
            Global::Const(v) => Some(consteval::is_truthy(v)),
            // Lowered as a condition, which reports why the constant has no value.
            Global::Function(_) | Global::Deferred(_) => None,
            _ => Some(true),
        }
    }

    fn lower_block(&mut self, stmts: &[Stmt]) -> R<()> {
        let mut result = Ok(());
        for s in stmts {
            if let Err(e) = self.lower_stmt(s) {
                self.poison_assigned(s, e);
                result = Err(e);
            }
        }
        result
    }

    /// After a statement failed, the names it would have assigned are poisoned, so their later
    /// uses do not report the same mistake again as "undefined name".
    fn poison_assigned(&mut self, s: &Stmt, r: Reported) {
        let mut names = Vec::new();
        liveness::assigned_in_order(std::slice::from_ref(s), &|_| None, &mut names);
        for n in names {
            if !matches!(self.lookup(&n), Some(Binding::Value(_)) | Some(Binding::Attr { .. }))
                || self.scopes.len() == 1
            {
                self.bind(&n, Binding::Poison(r));
            }
        }
    }

    fn lower_stmt(&mut self, s: &Stmt) -> R<()> {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                if targets.len() != 1 {
                    let d = Diagnostic::error(
                        codes::UNSUPPORTED_STMT,
                        self.file(),
                        "chained assignment (`a = b = ...`) is not part of the ONNX Script language",
                    )
                    .primary(s.span, "more than one `=`")
                    .help("assign once, then copy: `b = ...` and `a = b`");
                    return Err(self.push(d));
                }
                self.lower_assign(&targets[0], value)
            }
            StmtKind::AnnAssign { target, annotation, value } => {
                if let Err((span, why)) = env::param_type(self.env, annotation) {
                    let d = Diagnostic::error(
                        codes::BAD_ANNOTATION,
                        self.file(),
                        format!("invalid type annotation: {why}"),
                    )
                    .primary(span, "not a tensor type");
                    return Err(self.push(d));
                }
                match value {
                    Some(v) => self.lower_assign(target, v),
                    None => {
                        let d = Diagnostic::error(
                            codes::UNSUPPORTED_STMT,
                            self.file(),
                            "a declaration without a value is not supported",
                        )
                        .primary(s.span, "no value assigned");
                        Err(self.push(d))
                    }
                }
            }
            StmtKind::AugAssign { target, op, .. } => {
                let t = target.dotted_name().unwrap_or_else(|| "x".into());
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_STMT,
                    self.file(),
                    format!("augmented assignment (`{}=`) is not part of the ONNX Script language", op.symbol()),
                )
                .primary(s.span, "not supported")
                .help(format!("write `{t} = {t} {} ...`", op.symbol()));
                Err(self.push(d))
            }
            StmtKind::If { test, body, orelse } => self.lower_if(s, test, body, orelse),
            StmtKind::Return(_) => {
                let d = Diagnostic::error(
                    codes::MISPLACED_RETURN,
                    self.file(),
                    "`return` inside a control-flow block is not supported",
                )
                .primary(s.span, "return inside a block")
                .help("assign the result to a variable in each branch and return it after the block");
                Err(self.push(d))
            }
            StmtKind::Expr(e) => match &e.kind {
                // A string is a comment; docstrings are taken by the caller.
                ExprKind::Str(_) => Ok(()),
                ExprKind::Call { func, .. } if matches!(&func.kind, ExprKind::Name(n) if n == "print") => Ok(()),
                _ => {
                    let d = Diagnostic::error(
                        codes::UNUSED_EXPRESSION,
                        self.file(),
                        "the value of this expression is never used",
                    )
                    .primary(e.span, "computed and discarded")
                    .help("assign it to a variable, or remove it: ONNX functions have no side effects");
                    Err(self.push(d))
                }
            },
            StmtKind::Pass => Ok(()),
            StmtKind::Break | StmtKind::Continue => {
                let word = if matches!(s.kind, StmtKind::Break) { "break" } else { "continue" };
                if self.loop_depth == 0 {
                    return Err(self.err(
                        codes::BREAK_OUTSIDE_LOOP,
                        s.span,
                        format!("`{word}` outside a loop"),
                        format!("`{word}` must be inside a `for` or `while` loop"),
                    ));
                }
                Err(self.misplaced_loop_exit(s))
            }
            StmtKind::For { target, iter, body, orelse } => self.lower_for(s, target, iter, body, orelse),
            StmtKind::While { test, body, orelse } => self.lower_while(s, test, body, orelse),
            StmtKind::FunctionDef(f) => self.lower_nested_function(f),
            StmtKind::Import(_) | StmtKind::ImportFrom { .. } => {
                let d = Diagnostic::error(codes::UNSUPPORTED_STMT, self.file(), "imports belong at module level")
                    .primary(s.span, "import inside a function")
                    .help("move the import to the top of the file");
                Err(self.push(d))
            }
        }
    }

    fn lower_assign(&mut self, target: &Expr, value: &Expr) -> R<()> {
        match (&target.kind, &value.kind) {
            (ExprKind::Name(n), _) => {
                let v = self.lower_expr(value, Some(n))?;
                self.bind(n, Binding::Value(v.clone()));
                self.note(n, target.span, &Binding::Value(v));
                Ok(())
            }
            (ExprKind::Tuple(ts) | ExprKind::List(ts), ExprKind::Tuple(vs)) => {
                if ts.len() != vs.len() {
                    let d = Diagnostic::error(
                        codes::UNPACK_COUNT,
                        self.file(),
                        format!("{} names on the left but {} values on the right", ts.len(), vs.len()),
                    )
                    .primary(target.span, "unpacked here");
                    return Err(self.push(d));
                }
                for (t, v) in ts.iter().zip(vs) {
                    self.lower_assign(t, v)?;
                }
                Ok(())
            }
            (ExprKind::Tuple(ts) | ExprKind::List(ts), ExprKind::Call { func, args }) => {
                let mut names = Vec::new();
                for t in ts {
                    match &t.kind {
                        ExprKind::Name(n) => names.push(n.clone()),
                        _ => {
                            let d = Diagnostic::error(
                                codes::UNSUPPORTED_STMT,
                                self.file(),
                                "only names can be unpacked into",
                            )
                            .primary(t.span, "not a simple name");
                            return Err(self.push(d));
                        }
                    }
                }
                let outputs: Vec<String> = names.iter().map(|n| self.fresh(n)).collect();
                self.lower_call(func, args, value.span, outputs.clone())?;
                for ((n, o), t) in names.iter().zip(outputs).zip(ts) {
                    self.bind(n, Binding::Value(o.clone()));
                    self.note(n, t.span, &Binding::Value(o));
                }
                Ok(())
            }
            (ExprKind::Tuple(_) | ExprKind::List(_), _) => {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_STMT,
                    self.file(),
                    "only an op call's outputs or a tuple of values can be unpacked",
                )
                .primary(value.span, "cannot be unpacked")
                .help("unpack a multi-output op: `values, indices = op.TopK(x, k)`");
                Err(self.push(d))
            }
            (ExprKind::Subscript { .. }, _) | (ExprKind::Attribute { .. }, _) => {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_STMT,
                    self.file(),
                    "tensors are immutable: only names can be assigned",
                )
                .primary(target.span, "assignment to a part of a value")
                .help("compute a new tensor, e.g. with `op.ScatterND` or `op.Where`, and assign it to a name");
                Err(self.push(d))
            }
            _ => {
                let d = Diagnostic::error(codes::UNSUPPORTED_STMT, self.file(), "cannot assign to this")
                    .primary(target.span, "not a name");
                Err(self.push(d))
            }
        }
    }

    fn lower_if(&mut self, s: &Stmt, test: &Expr, body: &[Stmt], orelse: &[Stmt]) -> R<()> {
        if let Some(taken) = self.is_static_if(s) {
            return self.lower_block(if taken { body } else { orelse });
        }
        let live = self.live_out.get(&s.span.start).cloned().unwrap_or_default();
        let mut assigned = Vec::new();
        let is_static = |st: &Stmt| self.is_static_if(st);
        liveness::assigned_in_order(std::slice::from_ref(s), &is_static, &mut assigned);
        let outputs: Vec<String> = assigned.into_iter().filter(|v| live.contains(v)).collect();
        self.check_nesting(s.span)?;
        let cond = self.lower_expr(test, Some("cond"))?;
        let line = self.line_of(s.span);
        let per_call = self.decided_per_call(test);
        let (then_facts, else_facts) = (self.facts_when(test, true), self.facts_when(test, false));
        let then_graph = self.lower_branch(body, &outputs, &format!("thenGraph_{line}"), s.span, then_facts, per_call);
        let else_graph =
            self.lower_branch(orelse, &outputs, &format!("elseGraph_{line}"), s.span, else_facts, per_call);
        let ((then_graph, then_presence), (else_graph, else_presence)) = (then_graph?, else_graph?);
        if outputs.is_empty() {
            let d = Diagnostic::error(
                codes::IF_WITHOUT_OUTPUT,
                self.file(),
                "this `if` computes nothing that is used afterwards",
            )
            .primary(s.span, "no variable assigned here is used later")
            .help("ONNX `If` must have outputs: use the variables it assigns, or remove the `if`");
            return Err(self.push(d));
        }
        let names: Vec<String> = outputs.iter().map(|o| self.fresh(o)).collect();
        let attrs = vec![
            Attr { name: "then_branch".into(), value: AttrValue::Graph(then_graph) },
            Attr { name: "else_branch".into(), value: AttrValue::Graph(else_graph) },
        ];
        self.emit_default("If", vec![Some(cond)], names.clone(), attrs, s.span)?;
        self.merge_branch_presence(&names, &then_presence, &else_presence);
        for (o, n) in outputs.iter().zip(names) {
            self.bind(o, Binding::Value(n));
        }
        Ok(())
    }

    /// A returned value whose inferred element type contradicts the annotation (W0601). A
    /// warning: ONNX functions carry no types, so the model is still right; the annotation lies.
    fn check_return_type(&mut self, value: &str, declared: &str, span: Span, f: &FunctionDef) -> R<()> {
        let (Some(actual), Some(want)) = (self.types.get(value).cloned(), declared_ty(self.env, declared)) else {
            return Ok(());
        };
        if !infer::contradicts(&actual, &want) {
            return Ok(());
        }
        let help = match (actual.is_tensor(), want.is_tensor(), &want) {
            (true, true, Ty::Elem(t)) => {
                format!("cast the result, e.g. `op.Cast(x, to={}.dtype)`, or fix the annotation", t.script_name())
            }
            (true, true, _) => "cast the result, e.g. `op.Cast(x, to=FLOAT.dtype)`, or fix the annotation".to_string(),
            (false, true, _) => {
                "fix the annotation, or return a tensor, e.g. `op.ConcatFromSequence(seq, axis=0)`".to_string()
            }
            (true, false, _) => "fix the annotation, or return a sequence, e.g. `op.SequenceConstruct(x)`".to_string(),
            (false, false, _) => "fix the annotation".to_string(),
        };
        let d = Diagnostic::warning(
            codes::RETURN_TYPE_MISMATCH,
            self.file(),
            format!("this returns {}, but the function is annotated to return {}", actual.describe(), want.describe()),
        )
        .primary(span, format!("{} here", actual.describe()))
        .secondary(f.returns.as_ref().map(|r| r.span).unwrap_or(f.header_span), "annotated here")
        .help(help);
        self.diags.push(d);
        Ok(())
    }

    /// The line and column (1-based; the column counts bytes) of `span`'s start.
    fn location(&self, span: Span) -> SourceLocation {
        let line = self.lines.line(span.start);
        let start = self.lines.line_start(line).unwrap_or(0);
        SourceLocation { line: line as u32 + 1, column: span.start.saturating_sub(start) + 1 }
    }

    fn line_of(&self, span: Span) -> usize {
        self.lines.line(span.start) + 1
    }

    /// The output of the current subgraph for `var`: its value there, copied with `Identity` when
    /// the subgraph did not compute it (an outer value or a graph input) or when it is already an
    /// output (outputs are distinct names). `None` when `var` has no value at all.
    fn subgraph_output(&mut self, var: &str, span: Span, outs: &[String]) -> R<Option<String>> {
        let local = self.scope().vars.contains_key(var);
        let Some(b) = self.lookup(var).cloned() else { return Ok(None) };
        let v = self.binding_value(var, b, var, span)?;
        if local && self.scope().produced.contains(&v) && !outs.contains(&v) {
            return Ok(Some(v));
        }
        self.copy(&v, var, span).map(Some)
    }

    /// Opens the scope of a subgraph (a branch, a loop body, a nested function), unless it would
    /// nest subgraphs deeper than an ONNX file can hold (E1001).
    fn enter_subgraph(&mut self, span: Span, scope: Scope) -> R<()> {
        self.check_nesting(span)?;
        self.scopes.push(scope);
        Ok(())
    }

    /// E1001 if a subgraph opened here would be nested too deep.
    fn check_nesting(&mut self, span: Span) -> R<()> {
        if self.scopes.len() > liveness::MAX_NESTING {
            let d = Diagnostic::error(
                codes::NESTING_TOO_DEEP,
                self.file(),
                format!("control flow nested more than {} levels deep", liveness::MAX_NESTING),
            )
            .primary(span, format!("level {} starts here", self.scopes.len()))
            .help(format!(
                "ONNX holds each `if` branch and loop body as a graph inside the node that runs it, and protobuf \
                 readers (onnx, ONNX Runtime) refuse messages nested more than 100 deep, which allows {} levels: \
                 flatten the conditions (an `elif` chain nests one level per branch), or move the inner part into \
                 a function of its own",
                liveness::MAX_NESTING
            ));
            return Err(self.push(d));
        }
        Ok(())
    }

    /// One branch of an `if`, knowing `facts` of optional values; with the presence of each
    /// output (`per_call`: the condition is decided by each call, see `optional`).
    fn lower_branch(
        &mut self,
        stmts: &[Stmt],
        outputs: &[String],
        name: &str,
        if_span: Span,
        facts: Vec<(String, Presence)>,
        per_call: bool,
    ) -> R<(Graph, Vec<Presence>)> {
        self.enter_subgraph(if_span, Scope { facts: facts.into_iter().collect(), ..Scope::default() })?;
        let mut result = self.lower_block(stmts);
        let mut outs = Vec::new();
        let mut presence = Vec::new();
        for var in outputs {
            let out = match self.subgraph_output(var, if_span, &outs) {
                Ok(Some(o)) => self.branch_output_presence(&o, var, if_span, per_call).map(|p| {
                    presence.push(p);
                    o
                }),
                Ok(None) => {
                    let d = Diagnostic::error(
                        codes::CONDITIONALLY_DEFINED,
                        self.file(),
                        format!("`{var}` is assigned in only one branch of this `if`"),
                    )
                    .primary(if_span, format!("`{var}` has no value when the other branch runs"))
                    .help(format!("assign `{var}` before the `if`, or in every branch"));
                    Err(self.push(d))
                }
                Err(e) => Err(e),
            };
            match out {
                Ok(o) => outs.push(o),
                Err(e) => result = Err(e),
            }
        }
        let scope = self.scopes.pop().expect("pushed above");
        result?;
        Ok((Graph { name: name.to_string(), nodes: scope.nodes, outputs: outs, ..Default::default() }, presence))
    }
}

impl<'a, 'm> Lowerer<'a, 'm> {
    fn new(
        env: &'a ModuleEnv<'m>,
        diags: &'a mut Diagnostics,
        calls: &'a Calls,
        lines: &'a LineIndex,
        facts: Option<&'a mut Vec<Fact>>,
    ) -> Self {
        Lowerer {
            lines,
            facts,
            params: HashMap::new(),
            reported_no_opset: None,
            types: HashMap::new(),
            env,
            diags,
            calls,
            used_names: HashSet::new(),
            counter: 0,
            scopes: vec![Scope::default()],
            castable: HashSet::new(),
            default_opset: None,
            imports: BTreeMap::new(),
            live_out: HashMap::new(),
            assigned_anywhere: HashSet::new(),
            loop_depth: 0,
            graphs_used: HashSet::new(),
            presence: HashMap::new(),
            optional_attrs: HashSet::new(),
            exporter_bound: false,
            names_read: HashMap::new(),
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

/// A script-time value as the `Constant` tensor onnxscript makes of it (`ir.tensor(value)`):
/// int → INT64, float → FLOAT, bool → BOOL, str → STRING, flat lists of ints or floats →
/// INT64 or FLOAT, other lists as numpy infers them (nested float lists are DOUBLE), tensors as
/// they are. `Err` says why there is none.
pub fn tensor_of(v: &PyValue) -> Result<Tensor, String> {
    if matches!(v, PyValue::None) {
        return Err("`None` has no tensor form".into());
    }
    constlib::ir_tensor(v, None).map_err(|e| match e {
        constlib::LibError::Python(m) | constlib::LibError::Unsupported(m) => m,
        constlib::LibError::TooLarge(n) => format!("{n} elements exceed the constant size limit"),
        constlib::LibError::RunTime => "not known until run time".into(),
    })
}

/// A script-time value as an attribute of type `ty`, as onnx_ir converts it for a schema's
/// attribute (`Err(Some(why))` adds a note to the type mismatch).
pub fn attr_value(v: &PyValue, ty: AttrType) -> Result<AttrValue, Option<String>> {
    // A one-element numpy value reads as its number (`np.float32(0.5)`).
    let scalar = |v: &PyValue| match v {
        PyValue::Tensor(t) if t.is_scalar() => t.scalar(),
        other => Some(other.clone()),
    };
    let float = |v: &PyValue| scalar(v).and_then(|s| s.as_f64()).map(|f| f as f32);
    let int = |v: &PyValue| -> Result<i64, Option<String>> {
        match scalar(v) {
            Some(PyValue::Int(i)) => i64::try_from(i).map_err(|_| Some(format!("{i} does not fit in INT64"))),
            Some(PyValue::Bool(b)) => Ok(b as i64),
            _ => Err(None),
        }
    };
    let string = |v: &PyValue| match scalar(v) {
        Some(PyValue::Str(s)) => Some(s),
        _ => None,
    };
    let items = |v: &PyValue| -> Result<Vec<PyValue>, Option<String>> {
        match v {
            PyValue::List(s) => {
                if s.len() as u64 > crate::sema::value::MAX_CONSTANT_ELEMENTS {
                    return Err(Some("the list exceeds the constant size limit".into()));
                }
                Ok(s.to_vec())
            }
            PyValue::Tensor(t) if t.dims.len() == 1 => constlib::elements(t).map_err(|_| None),
            _ => Err(None),
        }
    };
    Ok(match ty {
        AttrType::Float => AttrValue::Float(float(v).ok_or(None)?),
        AttrType::Int => AttrValue::Int(int(v)?),
        AttrType::String => AttrValue::Str(string(v).ok_or(None)?),
        AttrType::Floats => AttrValue::Floats(items(v)?.iter().map(float).collect::<Option<_>>().ok_or(None)?),
        AttrType::Ints => AttrValue::Ints(items(v)?.iter().map(int).collect::<Result<_, _>>()?),
        AttrType::Strings => AttrValue::Strs(items(v)?.iter().map(string).collect::<Option<_>>().ok_or(None)?),
        AttrType::Tensor => AttrValue::Tensor(tensor_of(v).map_err(Some)?),
        _ => return Err(None),
    })
}

/// Lowers one function of a module; `Err` when it had errors (reported).
pub fn lower_function(
    env: &ModuleEnv,
    f: &FunctionDef,
    deco: &Decoration,
    calls: &Calls,
    lines: &LineIndex,
    diags: &mut Diagnostics,
    facts: Option<&mut Vec<Fact>>,
) -> Result<Function, Reported> {
    let mut l = Lowerer::new(env, diags, calls, lines, facts);
    l.exporter_bound = !deco.torch_ops.is_empty() && !deco.private;
    l.default_opset = deco.default_opset.clone();
    if l.default_opset.is_none() {
        l.default_opset = first_onnx_opset(env, &f.body);
    }
    let mut ok = Ok(());

    // Signature.
    let mut inputs = Vec::new();
    let mut attributes = Vec::new();
    let mut seen: HashMap<&str, Span> = HashMap::new();
    let mut default_seen: Option<(Span, &str)> = None;
    for p in &f.params {
        if p.kind == ParamKind::Normal {
            match (&p.default, default_seen) {
                (Some(d), None) => default_seen = Some((d.span, p.name.name.as_str())),
                (None, Some((first, first_name))) => {
                    // A translation's parameters follow its schema's order: never move them.
                    let help = if deco.torch_ops.is_empty() {
                        "move parameters without defaults before those with defaults".to_string()
                    } else {
                        format!(
                            "keep the schema's order: give `{}` a default too, or remove the default of `{first_name}` (`Optional[...]` alone makes a parameter optional)",
                            p.name.name
                        )
                    };
                    let d = Diagnostic::error(
                        codes::BAD_DEFAULT,
                        env.file,
                        format!("parameter `{}` without a default follows a parameter with one", p.name.name),
                    )
                    .primary(p.name.span, "needs a default")
                    .secondary(first, "first default here")
                    .help(help);
                    ok = Err(l.push(d));
                }
                _ => {}
            }
        }
        if p.kind != ParamKind::Normal {
            ok = Err(l.unsupported(
                p.span,
                unsupported_parameter(p.kind),
                "list each input and attribute as a plain parameter",
            ));
            continue;
        }
        if let Some(first) = seen.insert(&p.name.name, p.name.span) {
            let d = Diagnostic::error(
                codes::DUPLICATE_PARAMETER,
                env.file,
                format!("parameter `{}` is declared twice", p.name.name),
            )
            .primary(p.name.span, "declared again here")
            .secondary(first, "first declared here");
            ok = Err(l.push(d));
            continue;
        }
        let ty = match &p.annotation {
            None => ParamType::Input { ty: None, optional: false },
            Some(a) => match env::param_type(env, a) {
                Ok(t) => t,
                Err((span, why)) => {
                    if let Some(r) = mentions_poison(env, a) {
                        l.bind(&p.name.name, Binding::Poison(r));
                        ok = Err(r);
                        continue;
                    }
                    let mut d = Diagnostic::error(codes::BAD_ANNOTATION, env.file, format!("invalid type annotation for `{}`: {why}", p.name.name))
                        .primary(span, "not a tensor or attribute type")
                        .help("annotate tensors with `FLOAT`, `INT64[...]`, a TypeVar, and attributes with `float`, `int`, `str`, `bool` or `Sequence[int]`");
                    if let ExprKind::Name(n) = &a.kind {
                        if env.get(n).is_none() {
                            d = Diagnostic::error(
                                codes::UNDEFINED_NAME,
                                env.file,
                                format!("undefined name `{n}` in the annotation of `{}`", p.name.name),
                            )
                            .primary(a.span, "not defined");
                            d = match crate::sema::types::ElemType::from_script_name(&n.to_uppercase()) {
                                // `FLOAT` itself: import it; `float32` and the like: the type they mean.
                                Some(t) if t.script_name() == n => {
                                    d.help(format!("import it: `from onnxscript import {n}`")).fix(
                                        format!("Import `{n}` from onnxscript"),
                                        vec![env::import_edit(env, "onnxscript", n)],
                                    )
                                }
                                Some(t) => d.help(format!("import it: `from onnxscript import {}`", t.script_name())),
                                None => d.help("import the type from onnxscript, e.g. `from onnxscript import FLOAT`"),
                            };
                        }
                    }
                    let r = l.push(d);
                    l.bind(&p.name.name, Binding::Poison(r));
                    ok = Err(r);
                    continue;
                }
            },
        };
        match ty {
            ParamType::Input { ty, optional } => {
                l.used_names.insert(p.name.name.clone());
                l.bind(&p.name.name, Binding::Value(p.name.name.clone()));
                if let Some(t) = ty.as_deref().and_then(|t| declared_ty(env, t)) {
                    // `Optional[FLOAT]`: a FLOAT the caller may omit, or an optional value.
                    let t = if optional { Ty::MaybeOpt(Box::new(t)) } else { t };
                    l.types.insert(p.name.name.clone(), t);
                }
                let optional = optional || matches!(p.default.as_ref().map(|d| &d.kind), Some(ExprKind::None));
                let note = ParamNote { declared: p.name.span, optional, python: None, default: None };
                l.params.insert(p.name.name.clone(), note);
                l.note(&p.name.name, p.name.span, &Binding::Value(p.name.name.clone()));
                if optional {
                    l.declare_optional_input(&p.name.name);
                }
                let default_repr =
                    p.default.as_ref().map(|d| eval_const(env, d).map(|v| v.to_json()).unwrap_or_default());
                inputs.push(InputParam { name: p.name.name.clone(), ty, optional, default_repr });
            }
            ParamType::Attr { ty, optional } => {
                let onnx_ty = ty.onnx_type();
                let defaults_to_none = matches!(p.default.as_ref().map(|d| &d.kind), Some(ExprKind::None));
                if (optional && p.default.is_none()) || defaults_to_none {
                    l.declare_optional_attribute(&p.name.name);
                }
                let optional = optional || defaults_to_none;
                let mut default = None;
                let mut default_repr = None;
                if let Some(d) = &p.default {
                    match eval_const(env, d) {
                        Ok(PyValue::None) => default_repr = Some(serde_json::Value::Null),
                        Ok(v) => match attr_value(&v, onnx_ty) {
                            Ok(av)
                                if !(matches!(ty, crate::sema::types::AttrKind::Int)
                                    && matches!(v, PyValue::Float(_))) =>
                            {
                                default_repr = Some(v.to_json());
                                default = Some(av);
                            }
                            _ => {
                                let d = Diagnostic::error(
                                    codes::BAD_DEFAULT,
                                    env.file,
                                    format!(
                                        "the default of `{}` is {}, but its type is `{}`",
                                        p.name.name,
                                        with_article(v.type_name()),
                                        ty.python_name()
                                    ),
                                )
                                .primary(d.span, format!("expected {} value", with_article(ty.python_name())));
                                ok = Err(l.push(d));
                            }
                        },
                        Err(ConstError::NotConstant(span)) => {
                            let d = Diagnostic::error(
                                codes::BAD_DEFAULT,
                                env.file,
                                format!("the default of `{}` must be a constant", p.name.name),
                            )
                            .primary(span, "not a constant");
                            ok = Err(l.push(d));
                        }
                        Err(ConstError::Poisoned(r)) => ok = Err(r),
                        Err(ConstError::Failed(d)) => ok = Err(l.push_const_error(*d)),
                    }
                }
                l.bind(&p.name.name, Binding::Attr { name: p.name.name.clone(), ty: onnx_ty, as_bool: ty.is_bool() });
                let shown = p.default.as_ref().and_then(|d| eval_const(env, d).ok()).map(|v| v.repr());
                let note = ParamNote {
                    declared: p.name.span,
                    optional: false,
                    python: Some(ty.python_name()),
                    default: shown,
                };
                l.params.insert(p.name.name.clone(), note);
                let binding = Binding::Attr { name: p.name.name.clone(), ty: onnx_ty, as_bool: ty.is_bool() };
                l.note(&p.name.name, p.name.span, &binding);
                attributes.push(AttrParam {
                    name: p.name.name.clone(),
                    ty: onnx_ty,
                    kind: ty,
                    default,
                    default_repr,
                    optional,
                });
            }
        }
    }
    let declared_outputs = match &f.returns {
        None => None,
        Some(r) => match env::return_types(env, r) {
            Ok(ts) => Some(ts),
            Err((span, why)) => {
                ok = Err(match mentions_poison(env, r) {
                    Some(poisoned) => poisoned,
                    None => {
                        let mut d = Diagnostic::error(
                            codes::BAD_ANNOTATION,
                            env.file,
                            format!("invalid return annotation: {why}"),
                        )
                        .primary(span, "not a tensor type");
                        if let ExprKind::Name(n) = &r.kind {
                            if env.get(n).is_none() && ElemType::from_script_name(n).is_some() {
                                d = d
                                    .help(format!("`{n}` is not defined: import it, `from onnxscript import {n}`"))
                                    .fix(
                                        format!("Import `{n}` from onnxscript"),
                                        vec![env::import_edit(env, "onnxscript", n)],
                                    );
                            }
                        }
                        l.push(d)
                    }
                });
                None
            }
        },
    };

    // Body analysis.
    let mut assigned = Vec::new();
    liveness::assigned_in_order(&f.body, &|_| None, &mut assigned);
    liveness::bound_in_nested_functions(&f.body, &mut assigned);
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
    let output_types = match declared_outputs {
        Some(ts) if ts.len() == outputs.len() => ts,
        _ => vec![None; outputs.len()],
    };
    let nodes = l.scopes.pop().map(|s| s.nodes).unwrap_or_default();
    let source = Some(l.location(f.name.span));
    let opset_imports = l.imports.into_iter().map(|(d, (v, _))| (d, v)).collect();
    let parameters = f.params.iter().filter(|p| p.kind == ParamKind::Normal).map(|p| p.name.name.clone()).collect();
    let type_vars = inputs
        .iter()
        .filter_map(|i| i.ty.as_deref())
        .chain(output_types.iter().flatten().map(String::as_str))
        .filter_map(|t| match declared_ty(env, t) {
            Some(Ty::Var { name, allowed }) => {
                Some((name, allowed.iter().map(|t| t.script_name().to_string()).collect()))
            }
            _ => None,
        })
        .collect();
    // A private helper is not registered for export (as torchlib does).
    let registered = if deco.private { &[][..] } else { &deco.torch_ops[..] };
    let torch_ops = registered.iter().map(|b| TorchOp { qualname: b.qualname.clone(), outputs: None }).collect();
    Ok(Function {
        name: f.name.name.clone(),
        domain: deco.domain.clone(),
        source_file: String::new(),
        source,
        file: env.file,
        name_span: f.name.span,
        doc,
        inputs,
        attributes,
        outputs,
        output_types,
        nodes,
        opset_imports,
        parameters,
        type_vars,
        torch_ops,
        complex: deco.complex,
    })
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
        declared_outputs: Option<&[Option<String>]>,
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
                    for (k, e) in items.iter().enumerate() {
                        let hint = if multi { format!("return_val{k}") } else { "return_val".to_string() };
                        match self.lower_expr(e, Some(&hint)) {
                            Ok(mut v) => {
                                let declared = declared_outputs.and_then(|d| d.get(k).cloned().flatten());
                                if let Some(declared) = declared {
                                    if let Err(r) = self.check_return_type(&v, &declared, e.span, f) {
                                        ok = Err(r);
                                    }
                                }
                                if let Err(r) = self.check_returned(&v, e.span) {
                                    ok = Err(r);
                                }
                                if !self.scope().produced.contains(&v) {
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

/// How diagnostics name a parameter form outside the language (`*args`, `**kwargs`, `*`, `/`).
fn unsupported_parameter(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::VarArgs => "`*args` parameters are",
        ParamKind::KwArgs => "`**kwargs` parameters are",
        ParamKind::KwOnlyMarker => "keyword-only parameters (`*`) are",
        _ => "positional-only parameters (`/`) are",
    }
}

/// What an annotation's type name says of a value: a tensor type, a TypeVar of the module, or a
/// sequence of either (`Sequence[FLOAT]`, as `env::param_type` spells it).
fn declared_ty(env: &ModuleEnv, name: &str) -> Option<Ty> {
    if let Some(inner) = name.strip_prefix("Sequence[").and_then(|r| r.strip_suffix(']')) {
        return Some(Ty::seq(declared_ty(env, inner).filter(Ty::is_tensor)));
    }
    if let Some(t) = ElemType::from_script_name(name) {
        return Some(Ty::Elem(t));
    }
    match env.get(name) {
        Some(Global::TypeVar { name, allowed }) => Some(Ty::Var { name: name.clone(), allowed: allowed.clone() }),
        _ => None,
    }
}

/// Whether an annotation uses a global whose definition already failed: the proof of its report.
fn mentions_poison(env: &ModuleEnv, e: &Expr) -> Option<Reported> {
    let mut names = liveness::Live::new();
    liveness::used_vars(e, &mut names);
    names.iter().find_map(|n| match env.get(n) {
        Some(Global::Poison(r)) => Some(*r),
        _ => None,
    })
}

/// onnxscript's default opset when the decorator names none: the first ONNX opset whose op the
/// function calls, in source order.
fn first_onnx_opset(env: &ModuleEnv, body: &[Stmt]) -> Option<Opset> {
    fn in_expr(env: &ModuleEnv, e: &Expr) -> Option<Opset> {
        if let ExprKind::Call { func, args } = &e.kind {
            if let ExprKind::Attribute { value, .. } = &func.kind {
                if let ExprKind::Name(n) = &value.kind {
                    if let Some(Global::Opset(o)) = env.get(n) {
                        if o.domain.is_empty() {
                            return Some(o.clone());
                        }
                    }
                }
            }
            if let Some(o) = in_expr(env, func) {
                return Some(o);
            }
            return args.iter().find_map(|a| in_expr(env, &a.value));
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
                children.extend([lower, upper, step].into_iter().flatten().map(|b| b.as_ref()))
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => children.extend(items.iter()),
            _ => {}
        }
        children.into_iter().find_map(|c| in_expr(env, c))
    }
    fn in_stmts(env: &ModuleEnv, stmts: &[Stmt]) -> Option<Opset> {
        stmts.iter().find_map(|s| match &s.kind {
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => in_expr(env, e),
            StmtKind::Assign { targets, value } => {
                targets.iter().find_map(|t| in_expr(env, t)).or_else(|| in_expr(env, value))
            }
            StmtKind::AnnAssign { target, value, .. } => {
                in_expr(env, target).or_else(|| value.as_ref().and_then(|v| in_expr(env, v)))
            }
            StmtKind::AugAssign { target, value, .. } => in_expr(env, target).or_else(|| in_expr(env, value)),
            StmtKind::If { test, body, orelse } | StmtKind::While { test, body, orelse } => {
                in_expr(env, test).or_else(|| in_stmts(env, body)).or_else(|| in_stmts(env, orelse))
            }
            StmtKind::For { target, iter, body, orelse } => in_expr(env, target)
                .or_else(|| in_expr(env, iter))
                .or_else(|| in_stmts(env, body))
                .or_else(|| in_stmts(env, orelse)),
            StmtKind::FunctionDef(nested) => in_stmts(env, &nested.body),
            _ => None,
        })
    }
    in_stmts(env, body)
}
