//! The checks of trace-time code that hold for every call: a trace-only translation, or a helper
//! only trace-time code calls, is Python run for each call of the exporter, so `onnxsc check`
//! cannot run it; it checks what does not depend on the call.
//!
//! * every name read is bound: a parameter, a local, a name of a comprehension or lambda, a
//!   global of the module, or a Python builtin (E0106, with a did-you-mean);
//! * every op call `op.Name(...)`, on every path, names an operator of its opset, with
//!   arguments its schema can bind (the lookup and the binding lowering uses);
//! * no `if`, `while`, `assert`, `not`, `and`/`or` or conditional expression tests a value that
//!   is certainly a tensor: an op call's result, a comparison with one, a name only ever
//!   assigned one, a required tensor parameter (E0906; Python would test the object, always
//!   true, and the graph would silently take one branch);
//! * an `assert False` or `raise` on the function's straight path fails every call (E0902);
//! * a Python builtin the evaluator does not run, called directly, is E0901;
//! * an op attribute computed from a dimension (`x.shape[i]`) warns (W0901): a call with
//!   dynamic shapes knows the dimension only by name.
//!
//! What depends on the call (shapes, dtypes, attribute values) is checked when the exporter
//! calls the function, by `sema::eval` over the call's facts.

use super::annotations::ParamType;
use super::constlib;
use super::env::{Global, ModuleEnv, Names};
use super::eval::{tensor_condition, unevaluated_builtin};
use super::infer::{self, Ty};
use super::literal_shapes;
use super::liveness::assigned_anywhere;
use super::op_arguments::{bind_op_arguments, op_schema};
use super::resolve::resolve_dotted;
use super::signature::Signature;
use crate::diagnostics::{codes, suggest::did_you_mean, Diagnostic, Diagnostics, Edit};
use crate::onnx::DeclaredType;
use crate::source::Span;
use crate::syntax::ast::*;
use std::collections::{HashMap, HashSet};

/// Rounds of finding the locals that hold a tensor (each round reads the names found before).
const MAX_TENSOR_ROUNDS: usize = 8;

/// Checks the body of `sig`'s function, run as Python at trace time. `exporter_bound` says it
/// is a translation (the exporter builds its ops at its own opset).
pub fn check_function(env: &ModuleEnv, sig: &Signature, exporter_bound: bool, diags: &mut Diagnostics) {
    let def = sig.def;
    let mut locals: HashSet<&str> = def.params.iter().map(|p| p.name.name.as_str()).collect();
    let mut assigned = Vec::new();
    assigned_anywhere(&def.body, &mut assigned);
    locals.extend(assigned.iter().copied());
    imported_and_defined(&def.body, &mut locals);
    let variables = type_variable_parameters(sig, &assigned);
    let mut checker = Checker {
        names: env.names(),
        file: env.file,
        locals,
        scopes: Vec::new(),
        tensors: certain_tensors(sig),
        variables,
        exporter_bound,
        diags,
    };
    checker.find_tensor_names(def);
    checker.block(&def.body);
    if exporter_bound {
        checker.straight_path_failure(&def.body);
    }
}

struct Checker<'c, 'e, 'm> {
    names: Names<'e, 'm>,
    file: usize,
    /// The names the function binds anywhere: parameters, assignments, loop targets, imports
    /// and nested definitions.
    locals: HashSet<&'e str>,
    /// The names bound by the comprehensions and lambdas around the expression being checked.
    scopes: Vec<Vec<&'e str>>,
    /// Names that hold a tensor whenever they hold anything.
    tensors: HashSet<String>,
    /// The parameters annotated with a type variable (`self: TFloat`) that the body never
    /// reassigns: whatever element type a call gives.
    variables: HashMap<String, Ty>,
    exporter_bound: bool,
    diags: &'c mut Diagnostics,
}

impl<'e> Checker<'_, 'e, '_> {
    fn block(&mut self, stmts: &'e [Stmt]) {
        for s in stmts {
            match &s.kind {
                StmtKind::If { test, .. } | StmtKind::While { test, .. } | StmtKind::Assert { test, .. } => {
                    self.condition(test);
                }
                _ => {}
            }
            // A nested function is Python too, but runs when it is called: its body is left to
            // the evaluation, as its names may be bound later.
            if let StmtKind::FunctionDef(def) = &s.kind {
                def.decorators.iter().for_each(|d| self.expr(d));
                continue;
            }
            s.for_each_expr(&mut |e| self.expr(e));
            s.for_each_block(&mut |b| self.block(b));
        }
    }

    fn expr(&mut self, e: &'e Expr) {
        match &e.kind {
            ExprKind::Name(n) => self.name(n, e.span),
            ExprKind::Call { func, args } => self.op_call(func, args, e.span),
            ExprKind::BoolOp { values, .. } => values.iter().for_each(|v| self.condition(v)),
            ExprKind::UnaryOp { op: UnaryOp::Not, operand } => self.condition(operand),
            ExprKind::IfExp { test, .. } => self.condition(test),
            _ => {}
        }
        let own = e.scope_names();
        let mut children = Vec::new();
        e.for_each_child_scoped(&mut |c, scoped| children.push((c, scoped)));
        for (child, scoped) in children {
            if scoped && !own.is_empty() {
                self.scopes.push(own.clone());
                self.expr(child);
                self.scopes.pop();
            } else {
                self.expr(child);
            }
        }
    }

    /// Whether the function, a scope around the expression, or the module binds `name`.
    fn is_bound(&self, name: &str) -> bool {
        self.locals.contains(name) || self.scopes.iter().any(|s| s.contains(&name)) || self.names.get(name).is_some()
    }

    /// E0106 for a name bound nowhere: not in the function, its scopes, the module or Python's
    /// builtins.
    fn name(&mut self, name: &str, span: Span) {
        if self.is_bound(name) || constlib::builtin(name).is_some() || constlib::is_python_builtin(name) {
            return;
        }
        let candidates = self
            .locals
            .iter()
            .copied()
            .chain(self.scopes.iter().flatten().copied())
            .chain(self.names.env.globals.keys().map(String::as_str));
        let mut d = Diagnostic::error(codes::UNDEFINED_NAME, self.file, format!("undefined name `{name}`"))
            .primary(span, "not defined in this function or its module");
        d = match did_you_mean(name, candidates) {
            Some(s) => {
                d.help(format!("did you mean `{s}`?")).fix(format!("Replace with `{s}`"), vec![Edit::replace(span, &s)])
            }
            None => d.help("define it before the function runs: assign it, import it, or make it a parameter"),
        };
        self.diags.push(d);
    }

    /// An `op.Name(...)` call checked against the opset's schema, as far as its arguments are
    /// visible (a `*args` or `**kwargs` argument hides the binding).
    fn op_call(&mut self, func: &'e Expr, args: &'e [Arg], span: Span) {
        if let ExprKind::Name(n) = &func.kind {
            return self.builtin_call(n, func.span);
        }
        let ExprKind::Attribute { value, attr } = &func.kind else { return };
        let Some(Global::Opset(opset)) = resolve_dotted(self.names, value) else { return };
        let schema = match op_schema(self.file, &opset, &attr.name, attr.span, self.exporter_bound) {
            Ok(schema) => schema,
            Err(d) => return self.diags.push(*d),
        };
        if args
            .iter()
            .any(|a| matches!(a.value.kind, ExprKind::Starred(_)) || a.keyword.as_ref().is_some_and(|k| k.name == "**"))
        {
            return;
        }
        if let Some(s) = schema {
            match bind_op_arguments(self.file, &attr.name, Some(s), args, span) {
                Ok(bound) => {
                    // Traced at the exporter's opset, whatever the module imports.
                    let version = crate::aten::EXPORTER_OPSET.max(opset.version);
                    let outputs = s.outputs.len();
                    self.fixed_meets_variable(s, &bound.inputs);
                    self.diags.extend(literal_shapes::violation(
                        self.file,
                        s,
                        version,
                        (&bound.inputs, &bound.attributes),
                        outputs,
                        span,
                    ));
                    for (name, value, _) in &bound.attributes {
                        if let Some(dim) = dimension_read(value) {
                            self.diags.push(attribute_from_dimension(self.file, &name.name, dim));
                        }
                    }
                }
                Err(d) => self.diags.push(*d),
            }
        }
    }

    /// A fixed element type meeting a parameter's type variable under one type parameter of
    /// the schema (W0602), as a compiled function's check says it: visible from the text when
    /// the two are written in the call (`op.Add(self, op.Constant(value_float=1.0))`).
    fn fixed_meets_variable(&mut self, schema: &crate::schema::OpSchema, inputs: &[Option<&'e Expr>]) {
        let types: Vec<Option<Ty>> = inputs.iter().map(|e| e.and_then(|e| self.written_type(e))).collect();
        let args: Vec<Option<&Ty>> = types.iter().map(Option::as_ref).collect();
        let Some((fixed, variable, message)) = infer::type_variable_meets_fixed(schema, &args) else { return };
        let (Some(f), Some(v), Some(fe), Some(ve)) = (args[fixed], args[variable], inputs[fixed], inputs[variable])
        else {
            return;
        };
        self.diags.push(infer::fixed_meets_variable_warning(self.file, message, (fe.span, f), (ve.span, v)));
    }

    /// The element type an op call's input has whatever the call: a parameter's type variable,
    /// or a `Constant` of a float or int attribute.
    fn written_type(&self, e: &'e Expr) -> Option<Ty> {
        match &e.kind {
            ExprKind::Name(n) if !self.scopes.iter().any(|s| s.contains(&n.as_str())) => self.variables.get(n).cloned(),
            ExprKind::Call { func, args } => {
                let ExprKind::Attribute { value, attr } = &func.kind else { return None };
                if attr.name != "Constant" || !matches!(resolve_dotted(self.names, value), Some(Global::Opset(_))) {
                    return None;
                }
                let [Arg { keyword: Some(k), .. }] = args.as_slice() else { return None };
                // Typed as a compiled function's `Constant` is, by its attribute's name.
                let written = WrittenConstant { attribute: &k.name };
                infer::node_outputs("", "Constant", crate::aten::EXPORTER_OPSET, &written, 1, None).pop().flatten()
            }
            _ => None,
        }
    }

    /// Adds to `tensors` each local that every assignment of the function makes a tensor, until
    /// no more are found (one name's assignments may read another's). A parameter that is not
    /// certainly a tensor stays unknown: its first value is the caller's.
    fn find_tensor_names(&mut self, def: &'e FunctionDef) {
        let mut assignments: Vec<(&'e str, Option<&'e Expr>)> = Vec::new();
        collect_assignments(&def.body, &mut assignments);
        let params: HashSet<&str> = def.params.iter().map(|p| p.name.name.as_str()).collect();
        let mut by_name: HashMap<&'e str, Vec<Option<&'e Expr>>> = HashMap::new();
        for (name, value) in assignments {
            if !params.contains(name) {
                by_name.entry(name).or_default().push(value);
            }
        }
        // A name found in one round may make another a tensor in the next; a few rounds find
        // what real functions hold, and a longer chain left out is only a check not made.
        for _ in 0..MAX_TENSOR_ROUNDS {
            let found: Vec<&str> = by_name
                .iter()
                .filter(|(name, values)| {
                    !self.tensors.contains(**name) && values.iter().all(|v| v.is_some_and(|v| self.is_tensor(v)))
                })
                .map(|(name, _)| *name)
                .collect();
            if found.is_empty() {
                return;
            }
            self.tensors.extend(found.into_iter().map(str::to_string));
        }
    }

    /// E0901 for a call of a Python builtin the evaluator does not run (an exception's
    /// constructor, for `raise`, is run).
    fn builtin_call(&mut self, name: &str, span: Span) {
        let bound = self.is_bound(name);
        let exception = ["Error", "Exception", "Warning"].iter().any(|end| name.ends_with(end));
        if !bound && !exception && constlib::builtin(name).is_none() && constlib::is_python_builtin(name) {
            self.diags.push(unevaluated_builtin(self.file, name, span));
        }
    }

    /// E0906 for a test whose value is certainly a tensor.
    fn condition(&mut self, test: &Expr) {
        if self.is_tensor(test) {
            self.diags.push(tensor_condition(self.file, test.span));
        }
    }

    /// Whether `e` is certainly a tensor when evaluated: an op call, a name only ever assigned
    /// one (or a required tensor parameter), Python arithmetic or a comparison on one.
    fn is_tensor(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call { func, .. } => match &func.kind {
                ExprKind::Attribute { value, .. } => {
                    matches!(resolve_dotted(self.names, value), Some(Global::Opset(_)))
                }
                _ => false,
            },
            ExprKind::Name(n) => self.tensors.contains(n.as_str()),
            ExprKind::BinOp { left, right, .. } => self.is_tensor(left) || self.is_tensor(right),
            ExprKind::UnaryOp { op: UnaryOp::Neg | UnaryOp::Invert, operand } => self.is_tensor(operand),
            ExprKind::Compare { left, comparisons } => {
                // `x is None` and `x in [...]` are Python's own tests, whatever `x` is.
                comparisons.iter().all(|(op, _)| !matches!(op, CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn))
                    && (self.is_tensor(left) || comparisons.iter().any(|(_, r)| self.is_tensor(r)))
            }
            _ => false,
        }
    }

    /// E0902 for an `assert False` or a `raise` that every call reaches: the first statement of
    /// the body's straight path that fails.
    fn straight_path_failure(&mut self, body: &[Stmt]) {
        for s in body {
            let failing = match &s.kind {
                StmtKind::Raise { .. } => true,
                StmtKind::Assert { test, .. } => {
                    matches!(test.kind, ExprKind::Bool(false) | ExprKind::None)
                        || matches!(&test.kind, ExprKind::Int(i) if i.get() == 0)
                }
                // Past a branch or a loop, a call may have returned.
                StmtKind::Return(_) | StmtKind::If { .. } | StmtKind::For { .. } | StmtKind::While { .. } => return,
                _ => false,
            };
            if failing {
                self.diags.push(
                    Diagnostic::error(codes::TRACE_RAISED, self.file, "every call of this function fails here")
                        .primary(s.span, "reached by every call, before any return")
                        .help("a translation that cannot translate any call should not be registered: remove its `@torch_op`, or handle the calls it is for"),
                );
                return;
            }
        }
    }
}

/// The first `x.shape[i]` (a dimension, not the rank) that `e` reads outside `len(...)`.
fn dimension_read(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Subscript { value, index }
            if matches!(&value.kind, ExprKind::Attribute { attr, .. } if attr.name == "shape")
                && !matches!(index.kind, ExprKind::Slice { .. }) =>
        {
            return Some(e);
        }
        ExprKind::Call { func, .. } if matches!(&func.kind, ExprKind::Name(n) if n == "len") => return None,
        // Names in a lambda or comprehension are read in its own scope: left to the call.
        ExprKind::Lambda { .. } => return None,
        _ => {}
    }
    let mut found = None;
    e.for_each_child(&mut |c| {
        if found.is_none() {
            found = dimension_read(c);
        }
    });
    found
}

/// W0901: attribute `name` computed from the dimension read at `dim`.
fn attribute_from_dimension(file: usize, name: &str, dim: &Expr) -> Diagnostic {
    Diagnostic::warning(
        codes::ATTRIBUTE_FROM_DIMENSION,
        file,
        format!("attribute `{name}` is computed from a tensor's dimension, which a call with dynamic shapes knows only by name"),
    )
    .primary(dim.span, "a number only for calls with a static dimension here")
    .help("such a call fails at export (E0904): where shapes are dynamic, read the dimension with `op.Shape(x, start=i, end=i + 1)` and pass it to an input")
}

/// The names `import` statements and nested `def`s bind in `stmts`, at any depth.
fn imported_and_defined<'a>(stmts: &'a [Stmt], out: &mut HashSet<&'a str>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Import(aliases) | StmtKind::ImportFrom { names: aliases, .. } => {
                for a in aliases {
                    match &a.alias {
                        Some(alias) => out.insert(alias.name.as_str()),
                        None => out.insert(a.name.parts.first().map_or("", |p| p.name.as_str())),
                    };
                }
            }
            StmtKind::FunctionDef(def) => {
                out.insert(def.name.name.as_str());
            }
            _ => {}
        }
        s.for_each_block(&mut |b| imported_and_defined(b, out));
    }
}

/// An `op.Constant(...)` written with one attribute, as output typing asks about it.
struct WrittenConstant<'a> {
    attribute: &'a str,
}

impl infer::NodeFacts for WrittenConstant<'_> {
    fn input(&self, _: usize) -> Option<&Ty> {
        None
    }

    fn input_count(&self) -> usize {
        0
    }

    fn attr(&self, name: &str) -> Option<infer::AttrFacts> {
        // Its value is not read: a `value=` tensor's type depends on what the call gives.
        (name == self.attribute).then_some(infer::AttrFacts::Other)
    }

    fn first_attr(&self) -> Option<&str> {
        Some(self.attribute)
    }
}

/// The parameters annotated with a type variable and never reassigned, with their variable.
fn type_variable_parameters(sig: &Signature, assigned: &[&str]) -> HashMap<String, Ty> {
    sig.params
        .iter()
        .filter(|p| !p.optional && !assigned.contains(&p.def.name.name.as_str()))
        .filter_map(|p| match &p.ty {
            Ok(ParamType::Input { ty: Some(t @ DeclaredType::Var { .. }), .. }) => {
                Some((p.def.name.name.clone(), Ty::declared(t)?))
            }
            _ => None,
        })
        .collect()
}

/// The parameters that are tensors whenever the function is called: annotated with a tensor
/// type, not optional and without a `None` default.
fn certain_tensors(sig: &Signature) -> HashSet<String> {
    sig.params
        .iter()
        .filter(|p| {
            !p.optional
                && matches!(
                    &p.ty,
                    Ok(ParamType::Input {
                        ty: Some(DeclaredType::Tensor(_) | DeclaredType::Var { .. } | DeclaredType::Union(_)),
                        ..
                    })
                )
        })
        .map(|p| p.def.name.name.clone())
        .collect()
}

/// Each assignment to a plain name in `stmts` (nested functions aside): the name and the value
/// assigned, `None` where it is not one expression's value (a loop target, an unpacking, an
/// augmented assignment, an import).
fn collect_assignments<'a>(stmts: &'a [Stmt], out: &mut Vec<(&'a str, Option<&'a Expr>)>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                for t in targets {
                    match &t.kind {
                        ExprKind::Name(n) => out.push((n, Some(value))),
                        _ => t.for_each_target_name(&mut |n| out.push((n, None))),
                    }
                }
            }
            StmtKind::AnnAssign { target, value, .. } => {
                target.for_each_target_name(&mut |n| out.push((n, value.as_ref())));
            }
            StmtKind::AugAssign { target, .. } | StmtKind::For { target, .. } => {
                target.for_each_target_name(&mut |n| out.push((n, None)));
            }
            StmtKind::FunctionDef(_) => continue,
            _ => {}
        }
        s.for_each_block(&mut |b| collect_assignments(b, out));
    }
}
