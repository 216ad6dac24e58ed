//! Trace time: statements, and calling a function of the compilation.
//!
//! A function called at trace time runs as Python runs it: its parameters bound as Python binds
//! a call (positions, names, then the defaults, evaluated where the function is defined), its
//! body's statements in order, with the names it assigns anywhere local to the call. `raise` and
//! a failing `assert` end the trace with an error located at the statement (E0902); a trace that
//! runs too long or calls too deep ends with E0903.

use super::graph::Frame;
use super::{ConstError, Eval, Value, R};
use crate::diagnostics::{codes, Diagnostic};
use crate::sema::liveness;
use crate::sema::value::PyValue;
use crate::source::Span;
use crate::syntax::ast::*;

/// What a statement leaves to the ones after it.
pub(super) enum Flow {
    Next,
    Return(Value),
    Break,
    Continue,
}

impl Eval<'_, '_, '_> {
    /// Counts one step of the trace against its limit.
    pub(super) fn step(&mut self, span: Span) -> R<()> {
        let file = self.file();
        let Some(trace) = self.trace.as_deref_mut() else { return Ok(()) };
        trace.steps += 1;
        if trace.steps <= trace.limits.steps {
            return Ok(());
        }
        let limit = trace.limits.steps;
        Err(ConstError::Failed(Box::new(
            Diagnostic::error(codes::TRACE_LIMIT, file, format!("the trace did not finish within {limit} steps"))
                .primary(span, "still running here")
                .help("a loop that never ends, or one over far too many items: bound it by a static value"),
        )))
    }

    /// Runs a block of statements.
    pub(super) fn exec_block(&mut self, stmts: &[Stmt]) -> R<Flow> {
        for s in stmts {
            match self.exec(s)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    fn exec(&mut self, s: &Stmt) -> R<Flow> {
        self.step(s.span)?;
        match &s.kind {
            StmtKind::Expr(e) => {
                self.eval(e)?;
            }
            StmtKind::Assign { targets, value } => {
                let v = self.eval(value)?;
                for t in targets {
                    self.assign(t, v.clone())?;
                }
            }
            StmtKind::AnnAssign { target, value, .. } => {
                if let Some(value) = value {
                    let v = self.eval(value)?;
                    self.assign(target, v)?;
                }
            }
            StmtKind::AugAssign { target, op, value } => {
                let current = self.py(target)?;
                let right = self.py(value)?;
                let v = self.apply_binop(*op, current, right, s.span)?;
                self.assign(target, Value::Py(v))?;
            }
            StmtKind::Return(value) => {
                let v = match value {
                    Some(e) => self.eval(e)?,
                    None => Value::Py(PyValue::None),
                };
                return Ok(Flow::Return(v));
            }
            StmtKind::Pass => {}
            StmtKind::Break => return Ok(Flow::Break),
            StmtKind::Continue => return Ok(Flow::Continue),
            StmtKind::If { test, body, orelse } => {
                let branch = if self.test(test)? { body } else { orelse };
                return self.exec_block(branch);
            }
            StmtKind::While { test, body, orelse } => return self.exec_while(test, body, orelse),
            StmtKind::For { target, iter, body, orelse } => return self.exec_for(target, iter, body, orelse),
            StmtKind::Delete(targets) => {
                for t in targets {
                    if let ExprKind::Name(n) = &t.kind {
                        self.unbind(n);
                    }
                }
            }
            StmtKind::Raise { exc, .. } => return Err(self.raised(exc.as_ref(), s.span)),
            StmtKind::Assert { test, msg } => {
                if !self.test(test)? {
                    let message = match msg {
                        Some(m) => self.message(m),
                        None => String::new(),
                    };
                    return Err(self.raise_error("AssertionError", &message, s.span));
                }
            }
            StmtKind::FunctionDef(_) | StmtKind::Import(_) | StmtKind::ImportFrom { .. } => {
                return Err(self.trace_error(
                    s.span,
                    "onnxsc does not run this statement in a trace-only translation",
                    "not evaluated at trace time",
                    "define helpers and import modules at module level",
                ));
            }
        }
        Ok(Flow::Next)
    }

    /// `raise E(message)`: the exception, as an error located at the statement.
    fn raised(&mut self, exc: Option<&Expr>, span: Span) -> ConstError {
        let Some(exc) = exc else {
            return self.raise_error("RuntimeError", "No active exception to reraise", span);
        };
        let (class, args) = match &exc.kind {
            ExprKind::Call { func, args } => (func.as_ref(), args.as_slice()),
            _ => (exc, &[][..]),
        };
        let name = class.dotted_name().unwrap_or_else(|| "Exception".to_string());
        let name = name.rsplit('.').next().unwrap_or("Exception").to_string();
        let message = match args.first() {
            Some(a) => self.message(&a.value),
            None => String::new(),
        };
        self.raise_error(&name, &message, span)
    }

    /// The text of an exception's message, as `str()` gives it; the source's text when onnxsc
    /// cannot evaluate it.
    fn message(&mut self, e: &Expr) -> String {
        match self.py(e) {
            Ok(PyValue::Str(s)) => s,
            Ok(other) => other.repr(),
            Err(_) => "(a message onnxsc cannot evaluate)".to_string(),
        }
    }

    /// E0902: the translation raises `class` for this call.
    fn raise_error(&self, class: &str, message: &str, span: Span) -> ConstError {
        let text = if message.is_empty() { String::new() } else { format!(": {message}") };
        ConstError::Failed(Box::new(
            Diagnostic::error(codes::TRACE_RAISED, self.file(), format!("this call raises `{class}`{text}"))
                .primary(span, "raised when the exporter calls the translation")
                .help("the translation does not handle this call's facts (its static values, and its tensors' types and shapes): handle them, or leave this operator to the exporter's own translation"),
        ))
    }

    /// Python's truth value of a condition; a tensor's is an error.
    pub(super) fn test(&mut self, e: &Expr) -> R<bool> {
        let v = self.py(e)?;
        if Self::is_graph(&v) {
            return Err(self.tensor_truth(e.span));
        }
        self.truth_of(&v, e.span)
    }

    fn exec_while(&mut self, test: &Expr, body: &[Stmt], orelse: &[Stmt]) -> R<Flow> {
        while self.test(test)? {
            self.step(test.span)?;
            match self.exec_block(body)? {
                Flow::Break => return Ok(Flow::Next),
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Next | Flow::Continue => {}
            }
        }
        self.exec_block(orelse)
    }

    fn exec_for(&mut self, target: &Expr, iter: &Expr, body: &[Stmt], orelse: &[Stmt]) -> R<Flow> {
        let items = self.eval(iter)?;
        let items = self.items_of(items, iter.span)?;
        for item in items {
            self.step(iter.span)?;
            self.assign(target, Value::Py(item))?;
            match self.exec_block(body)? {
                Flow::Break => return Ok(Flow::Next),
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Next | Flow::Continue => {}
            }
        }
        self.exec_block(orelse)
    }

    /// The items a `for` loop (or a comprehension, `list()`, unpacking) goes over.
    pub(super) fn iterate(&self, v: &PyValue, span: Span) -> R<Vec<PyValue>> {
        match v {
            PyValue::List(s) => Ok(s.items().to_vec()),
            PyValue::Str(s) => Ok(s.chars().map(|c| PyValue::str(&c.to_string())).collect()),
            PyValue::Graph(_) => Err(self.trace_error(
                span,
                "iterating over a tensor needs its length, known only when the model runs",
                "a tensor",
                "loop over a static range (`range(len(x.shape))`), or use `op.SplitToSequence`",
            )),
            other => {
                Err(self.python_error(span, &format!("TypeError: '{}' object is not iterable", other.type_name())))
            }
        }
    }

    /// Binds `target` (a name, a tuple or list of targets, `name[i]`) to `v`.
    pub(super) fn assign(&mut self, target: &Expr, v: Value) -> R<()> {
        match &target.kind {
            ExprKind::Name(n) => {
                self.bind(n, v);
                Ok(())
            }
            ExprKind::Tuple(targets) | ExprKind::List(targets) => {
                let v = self.to_py(v, target.span)?;
                let items = self.iterate(&v, target.span)?;
                if items.len() != targets.len() {
                    let (want, got) = (targets.len(), items.len());
                    let why = if got > want {
                        format!("ValueError: too many values to unpack (expected {want})")
                    } else {
                        format!("ValueError: not enough values to unpack (expected {want}, got {got})")
                    };
                    return Err(self.python_error(target.span, &why));
                }
                for (t, item) in targets.iter().zip(items) {
                    self.assign(t, Value::Py(item))?;
                }
                Ok(())
            }
            ExprKind::Subscript { value, index } => {
                let ExprKind::Name(n) = &value.kind else {
                    return Err(self.unassignable(target.span));
                };
                let list = self.py(value)?;
                let i = self.py(index)?;
                let item = self.to_py(v, target.span)?;
                let updated = self.set_item(&list, &i, item, target.span)?;
                self.bind(n, Value::Py(updated));
                Ok(())
            }
            _ => Err(self.unassignable(target.span)),
        }
    }

    fn unassignable(&self, span: Span) -> ConstError {
        self.trace_error(
            span,
            "onnxsc assigns to names, tuples of them and items of a local list",
            "not assignable at trace time",
            "assign to a local variable",
        )
    }

    /// `list[i] = item`: the list with its item replaced (the name is bound to the new list).
    fn set_item(&self, list: &PyValue, i: &PyValue, item: PyValue, span: Span) -> R<PyValue> {
        let (PyValue::List(items), Some(index)) = (list, i.as_i64()) else {
            return Err(self.python_error(
                span,
                &format!("TypeError: '{}' object does not support item assignment", list.type_name()),
            ));
        };
        if items.is_tuple() {
            return Err(self.python_error(span, "TypeError: 'tuple' object does not support item assignment"));
        }
        let len = items.len() as i64;
        let at = if index < 0 { index + len } else { index };
        if at < 0 || at >= len {
            return Err(self.python_error(span, "IndexError: list assignment index out of range"));
        }
        let mut out = items.items().to_vec();
        out[at as usize] = item;
        Ok(PyValue::list(out))
    }

    /// Binds a local variable of the current call.
    pub(super) fn bind(&mut self, name: &str, v: Value) {
        if let Some(frame) = self.trace.as_deref_mut().and_then(|t| t.frames.last_mut()) {
            frame.locals.insert(name.to_string(), v);
        }
    }

    fn unbind(&mut self, name: &str) {
        if let Some(frame) = self.trace.as_deref_mut().and_then(|t| t.frames.last_mut()) {
            frame.locals.remove(name);
        }
    }

    /// The value of a local variable: `Some(Ok)` when bound, `Some(Err)` when the function
    /// assigns it but not yet (Python's UnboundLocalError), `None` when it is not local.
    pub(super) fn local(&self, name: &str, span: Span) -> Option<R<Value>> {
        if let Some((_, v)) = self.scope.iter().rev().find(|(n, _)| n == name) {
            return Some(Ok(v.clone()));
        }
        let frame = self.trace.as_deref()?.frames.last()?;
        if let Some(v) = frame.locals.get(name) {
            return Some(Ok(v.clone()));
        }
        frame.assigned.contains(name).then(|| {
            Err(self.python_error(
                span,
                &format!(
                    "UnboundLocalError: cannot access local variable '{name}' where it is not associated with a value"
                ),
            ))
        })
    }

    /// Calls function `id` of the compilation at trace time with the arguments given.
    pub(super) fn call_function(
        &mut self,
        id: usize,
        positional: Vec<Value>,
        keywords: Vec<(String, Value)>,
        span: Span,
    ) -> R<Value> {
        let caller_file = self.file();
        if self.trace.as_deref().is_some_and(|t| t.graph.records_function(id)) {
            return self.record_function(id, positional, keywords, span);
        }
        let Some(trace) = self.trace.as_deref_mut() else { return Err(ConstError::NotConstant(span)) };
        let Some((env, k)) = trace.function(id) else { return Err(ConstError::NotConstant(span)) };
        let f = env.functions[k];
        if trace.frames.len() >= trace.limits.depth {
            let depth = trace.limits.depth;
            return Err(ConstError::Failed(Box::new(
                Diagnostic::error(codes::TRACE_LIMIT, caller_file, format!("calls nest more than {depth} deep"))
                    .primary(span, "this call")
                    .help("a function that calls itself without end: stop the recursion on a static value"),
            )));
        }
        // The root file is the first function's; a call from it into another file is a site.
        let root = *trace.root_file.get_or_insert(env.file);
        let into_another_file = caller_file == root && env.file != root && !trace.frames.is_empty();
        if into_another_file {
            trace.sites.push(span);
        }
        let mut callee = Eval::new(env.names_for(f), self.trace.as_deref_mut());
        let locals = callee.bind_parameters(f, positional, keywords, span, caller_file)?;
        let mut assigned = Vec::new();
        liveness::assigned_anywhere(&f.body, &mut assigned);
        let frame = Frame { locals, assigned: assigned.into_iter().map(str::to_string).collect(), function: id };
        if let Some(t) = callee.trace.as_deref_mut() {
            t.frames.push(frame);
        }
        let flow = callee.exec_block(&f.body);
        if let Some(t) = callee.trace.as_deref_mut() {
            t.frames.pop();
            if into_another_file {
                t.sites.pop();
            }
        }
        Ok(match flow? {
            Flow::Return(v) => v,
            _ => Value::Py(PyValue::None),
        })
    }

    /// The local variables a call of `f` starts with: its parameters bound to the arguments as
    /// Python binds them. Errors are located at the call (`span` in `caller_file`).
    fn bind_parameters(
        &mut self,
        f: &FunctionDef,
        positional: Vec<Value>,
        keywords: Vec<(String, Value)>,
        span: Span,
        caller_file: usize,
    ) -> R<foldhash::HashMap<String, Value>> {
        let fail = |message: String| {
            ConstError::Failed(Box::new(
                Diagnostic::error(codes::TRACE_RAISED, caller_file, format!("this call raises `TypeError`: {message}"))
                    .primary(span, "called here")
                    .help(format!("call `{}` with its parameters: {}", f.name.name, parameter_list(f))),
            ))
        };
        let name = &f.name.name;
        let mut locals = foldhash::HashMap::default();
        let plain: Vec<&Param> = f.params.iter().filter(|p| p.kind == ParamKind::Normal).collect();
        let star = f.params.iter().find(|p| p.kind == ParamKind::VarArgs);
        let mut positional = positional.into_iter();
        for p in &plain {
            match positional.next() {
                Some(v) => {
                    locals.insert(p.name.name.clone(), v);
                }
                None => break,
            }
        }
        let rest: Vec<Value> = positional.collect();
        match star {
            Some(s) => {
                let items = rest.into_iter().map(|v| self.to_py(v, span)).collect::<R<Vec<_>>>()?;
                locals.insert(s.name.name.clone(), Value::Py(PyValue::tuple(items)));
            }
            None if !rest.is_empty() => {
                return Err(fail(format!(
                    "{name}() takes {} positional arguments but {} were given",
                    plain.len(),
                    plain.len() + rest.len()
                )))
            }
            None => {}
        }
        for (k, v) in keywords {
            if !plain.iter().any(|p| p.name.name == k) {
                return Err(fail(format!("{name}() got an unexpected keyword argument '{k}'")));
            }
            if locals.insert(k.clone(), v).is_some() {
                return Err(fail(format!("{name}() got multiple values for argument '{k}'")));
            }
        }
        for p in &plain {
            if locals.contains_key(&p.name.name) {
                continue;
            }
            let Some(default) = &p.default else {
                return Err(fail(format!("{name}() missing required argument: '{}'", p.name.name)));
            };
            let v = self.eval(default)?;
            locals.insert(p.name.name.clone(), v);
        }
        Ok(locals)
    }
}

/// `x, dim=0`: a function's parameters, for messages.
fn parameter_list(f: &FunctionDef) -> String {
    f.params.iter().map(|p| p.name.name.as_str()).collect::<Vec<_>>().join(", ")
}
