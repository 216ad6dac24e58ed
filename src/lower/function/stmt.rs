//! Statements: assignments, `if` (static, or `If` with its branches as subgraphs), and the
//! blocks and scopes of branches and bodies.

use super::loops::last_assignment;
use super::*;

impl<'a, 'm> Lowerer<'a, 'm> {
    pub(super) fn is_static_if(&self, s: &Stmt) -> Option<bool> {
        let StmtKind::If { test, .. } = &s.kind else { return None };
        if let Some(taken) = self.static_none_test(test) {
            return Some(taken);
        }
        let ExprKind::Name(n) = &test.kind else { return None };
        if self.assigned_anywhere.contains(n.as_str()) {
            return None;
        }
        match self.names.get(n)? {
            Global::Const(v) => Some(eval::is_truthy(v)),
            // Lowered as a condition, which reports why the constant has no value.
            Global::Function(_) | Global::Deferred(_) => None,
            _ => Some(true),
        }
    }

    pub(super) fn lower_block(&mut self, stmts: &[Stmt]) -> R<()> {
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
    pub(super) fn poison_assigned(&mut self, s: &Stmt, r: Reported) {
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

    /// `del x, y` at the top of the function's body: parameters left unread on purpose. The
    /// names are unbound (a later use is an error, as Python's would be) and the function's
    /// signature records them, so an export never warns that their values are ignored.
    fn lower_delete(&mut self, s: &Stmt, targets: &[Expr]) -> R<()> {
        let help = "`del` says that parameters are left unread on purpose: write `del name` for a parameter, \
                    at the function's top level, before any other use of it";
        if self.scopes.len() > 1 || self.loop_depth > 0 {
            let d = Diagnostic::error(codes::UNSUPPORTED_STMT, self.file(), "`del` inside a block is not supported")
                .primary(s.span, "inside an `if` or a loop")
                .help(help);
            return Err(self.push(d));
        }
        for t in targets {
            let ExprKind::Name(n) = &t.kind else {
                let d = Diagnostic::error(codes::UNSUPPORTED_STMT, self.file(), "`del` takes names of parameters")
                    .primary(t.span, "not a name")
                    .help(help);
                return Err(self.push(d));
            };
            let is_parameter = self.def.params.iter().any(|p| &p.name.name == n);
            let still_bound = match self.lookup(n) {
                Some(Binding::Value(v)) => v == n,
                Some(Binding::Attr { name, .. }) => name == n,
                _ => false,
            };
            if !is_parameter || !still_bound {
                let what = if is_parameter { "a parameter already reassigned" } else { "not a parameter" };
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_STMT,
                    self.file(),
                    format!("`del {n}`: only parameters of the function can be deleted"),
                )
                .primary(t.span, what)
                .help(help);
                return Err(self.push(d));
            }
            self.scope().vars.remove(n.as_str());
            self.deleted.push((n.clone(), t.span));
        }
        Ok(())
    }

    /// E0301 for `raise` and `assert`: Python that only trace-only translations run.
    fn python_only_stmt(&mut self, s: &Stmt) -> Reported {
        let (word, instead) = match &s.kind {
            StmtKind::Raise { .. } => ("raise", "an ONNX graph cannot raise an exception"),
            _ => ("assert", "an ONNX graph cannot stop on a failed check"),
        };
        let d = Diagnostic::error(
            codes::UNSUPPORTED_STMT,
            self.file(),
            format!("`{word}` statements are not part of the ONNX Script language"),
        )
        .primary(s.span, format!("`{word}` in a scripted function"))
        .help(format!("{instead}; {TRACE_ONLY}"));
        self.push(d)
    }

    /// `raise` and `assert`, and the first lambda or comprehension in the expressions of `s`
    /// itself (not of its nested blocks), reported: wherever such an expression is (an
    /// attribute, an index, a condition), the report names it. A `print(...)` call is dropped
    /// whole, as onnxscript does.
    pub(super) fn reject_python_only(&mut self, s: &Stmt) -> R<()> {
        match &s.kind {
            StmtKind::Raise { .. } | StmtKind::Assert { .. } => return Err(self.python_only_stmt(s)),
            StmtKind::Expr(Expr { kind: ExprKind::Call { func, .. }, .. }) if matches!(&func.kind, ExprKind::Name(n) if n == "print") =>
            {
                return Ok(());
            }
            _ => {}
        }
        let mut found: Option<&Expr> = None;
        s.for_each_expr(&mut |e| {
            if found.is_none() {
                found = Self::first_python_only(e);
            }
        });
        match found {
            Some(e) => Err(self.python_only(e)),
            None => Ok(()),
        }
    }

    pub(super) fn lower_stmt(&mut self, s: &Stmt) -> R<()> {
        self.reject_python_only(s)?;
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
                if let Err((span, why)) = annotations::param_type(self.names, annotation) {
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
            StmtKind::Delete(targets) => self.lower_delete(s, targets),
            StmtKind::Raise { .. } | StmtKind::Assert { .. } => Err(self.python_only_stmt(s)),
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
        let outputs: Vec<String> = assigned.into_iter().filter(|v| live.contains(v.as_str())).collect();
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
        self.check_branch_types(&outputs, (&then_graph, body), (&else_graph, orelse), s.span)?;
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

    /// A variable an `if` assigns has one element type whichever branch runs: an ONNX `If`
    /// has one type per output, and ONNX Runtime refuses a model whose branches differ.
    fn check_branch_types(
        &mut self,
        outputs: &[String],
        (then_graph, then_block): (&Graph, &[Stmt]),
        (else_graph, else_block): (&Graph, &[Stmt]),
        if_span: Span,
    ) -> R<()> {
        for ((v, then_out), else_out) in outputs.iter().zip(&then_graph.outputs).zip(&else_graph.outputs) {
            let (Some(Ty::Elem(taken)), Some(Ty::Elem(not_taken))) =
                (self.values.ty(then_out).cloned(), self.values.ty(else_out).cloned())
            else {
                continue;
            };
            if taken == not_taken {
                continue;
            }
            let (then_at, else_at) = (last_assignment(then_block, v), last_assignment(else_block, v));
            let label = |t: ElemType| format!("`{v}` is {} here", t.script_name());
            let d = Diagnostic::error(
                codes::TYPE_MISMATCH,
                self.file(),
                format!(
                    "`{v}` is {} when this `if` is taken, but {} when it is not",
                    taken.script_name(),
                    not_taken.script_name()
                ),
            );
            // The primary label is on the branch whose value the help casts to the other's type.
            let keeps = |t: ElemType, taken: &str| {
                format!("`{v}` keeps its {} value when the `if` is {taken}", t.script_name())
            };
            let (d, cast_to) = match (then_at, else_at) {
                (Some(t), Some(e)) => (d.primary(t, label(taken)).secondary(e, label(not_taken)), not_taken),
                (Some(t), None) => {
                    (d.primary(t, label(taken)).secondary(if_span, keeps(not_taken, "not taken")), not_taken)
                }
                (None, Some(e)) => (d.primary(e, label(not_taken)).secondary(if_span, keeps(taken, "taken")), taken),
                (None, None) => (d.primary(if_span, "the branches disagree"), not_taken),
            };
            let d = d.help(format!(
                "a variable keeps one element type across an `if`: cast the value, e.g. `{v} = op.Cast(..., to={}.dtype)`",
                cast_to.script_name()
            ));
            return Err(self.push(d));
        }
        Ok(())
    }

    /// A returned value whose inferred element type contradicts the annotation (W0601). A
    /// warning: ONNX functions carry no types, so the model is still right; the annotation lies.
    /// The outputs of one `return` that contradict the annotation the same way are one finding
    /// ([`Self::report_return_types`]).
    pub(super) fn return_type_mismatch(
        &self,
        value: &str,
        declared: &DeclaredType,
        span: Span,
        f: &FunctionDef,
    ) -> Option<Diagnostic> {
        let (Some(actual), Some(want)) = (self.values.ty(value).cloned(), Ty::declared(declared)) else {
            return None;
        };
        if !infer::contradicts(&actual, &want) {
            return None;
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
        Some(d)
    }

    /// Reports the return type mismatches of one `return`: those with the same message (the
    /// same returned type against the same annotated one) as one diagnostic, labelled at each
    /// output.
    pub(super) fn report_return_types(&mut self, found: Vec<Diagnostic>) {
        let mut merged: Vec<Diagnostic> = Vec::new();
        for d in found {
            match merged.iter_mut().find(|m| m.message == d.message) {
                Some(first) => {
                    let places = d.labels.into_iter().filter(|l| l.primary);
                    first.labels.extend(places.map(|l| crate::diagnostics::Label { primary: false, ..l }));
                }
                None => merged.push(d),
            }
        }
        for d in merged {
            self.diags.push(d);
        }
    }

    /// The output of the current subgraph for `var`: its value there, copied with `Identity` when
    /// the subgraph did not compute it (an outer value or a graph input) or when it is already an
    /// output (outputs are distinct names). `None` when `var` has no value at all.
    pub(super) fn subgraph_output(&mut self, var: &str, span: Span, outs: &[String]) -> R<Option<String>> {
        let local = self.scope().vars.contains_key(var);
        let Some(b) = self.lookup(var).cloned() else { return Ok(None) };
        let v = self.binding_value(var, b, var, span)?;
        if local && self.scope().produced(&v) && !outs.contains(&v) {
            return Ok(Some(v));
        }
        self.copy(&v, var, span).map(Some)
    }

    /// Opens the scope of a subgraph (a branch, a loop body, a nested function), unless it would
    /// nest subgraphs deeper than an ONNX file can hold (E1001).
    pub(super) fn enter_subgraph(&mut self, span: Span, scope: Scope) -> R<()> {
        self.check_nesting(span)?;
        self.scopes.push(scope);
        Ok(())
    }

    /// Closes the scope [`enter_subgraph`](Self::enter_subgraph) opened, and returns it.
    #[allow(clippy::expect_used, reason = "each caller pops only the scope its `enter_subgraph` pushed")]
    pub(super) fn leave_subgraph(&mut self) -> Scope {
        self.scopes.pop().expect("a subgraph's scope is open")
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
        let scope = self.leave_subgraph();
        result?;
        Ok((Graph { name: name.to_string(), nodes: scope.nodes, outputs: outs, ..Default::default() }, presence))
    }
}
