//! Loops: `for i in range(n)` and `while cond` become ONNX `Loop`, as onnxscript lowers them.
//!
//! The body becomes a subgraph with inputs (iteration number, condition, carried values...) and
//! outputs (condition, carried values...). The carried values are the variables the body assigns
//! that it reads before assigning them or that are used after the loop, in first-assignment
//! order. A trailing `if c: break` makes the body's condition `Not(c)`.

use super::*;

/// What drives a loop.
#[derive(Clone, Copy)]
enum LoopKind<'s> {
    /// `for var in range(count)`.
    Range { var: &'s str, var_span: Span, count: &'s Expr },
    /// `while cond:`, `cond` being a variable that the body updates.
    While { cond: &'s str, cond_span: Span },
}

/// The condition `c` of a trailing `if c: break`, and its span.
type Exit<'s> = Option<(&'s str, Span)>;

/// A loop statement, checked for the forms ONNX `Loop` can express.
struct LoopForm<'s> {
    stmt: &'s Stmt,
    kind: LoopKind<'s>,
    /// The whole body, trailing `if c: break` included.
    all: &'s [Stmt],
    /// The body without the trailing `if c: break`.
    body: &'s [Stmt],
    exit: Exit<'s>,
    /// The `for ...` or `while ...` header, for labels.
    header: Span,
}

impl<'a, 'm> Lowerer<'a, 'm> {
    pub(super) fn lower_for(&mut self, s: &Stmt, target: &Expr, iter: &Expr, body: &[Stmt], orelse: &[Stmt]) -> R<()> {
        self.reject_loop_else(orelse)?;
        let ExprKind::Name(var) = &target.kind else {
            let d = Diagnostic::error(
                codes::UNSUPPORTED_STMT,
                self.file(),
                "the target of a `for` loop must be a single name",
            )
            .primary(target.span, "not a simple name")
            .help("write `for i in range(n):`; the loop variable is the iteration number");
            return Err(self.push(d));
        };
        let count = self.range_count(iter)?;
        let (body_only, exit) = self.split_exit(body)?;
        let kind = LoopKind::Range { var, var_span: target.span, count };
        let header = Span { start: s.span.start, end: iter.span.end };
        self.lower_loop(&LoopForm { stmt: s, kind, all: body, body: body_only, exit, header })
    }

    pub(super) fn lower_while(&mut self, s: &Stmt, test: &Expr, body: &[Stmt], orelse: &[Stmt]) -> R<()> {
        self.reject_loop_else(orelse)?;
        let ExprKind::Name(cond) = &test.kind else {
            let d = Diagnostic::error(codes::UNSUPPORTED_EXPR, self.file(), "the condition of a `while` loop must be a variable")
                .primary(test.span, "an expression")
                .help("compute the condition into a variable before the loop and again at the end of its body: `cond = ...`, `while cond:`, ..., `cond = ...`");
            return Err(self.push(d));
        };
        let (body_only, exit) = self.split_exit(body)?;
        if let Some((_, span)) = exit {
            // onnxscript would end the loop on the `break` condition alone and ignore `cond`.
            let d =
                Diagnostic::error(codes::UNSUPPORTED_STMT, self.file(), "a `while` loop cannot also end with `break`")
                    .primary(span, "`break` condition")
                    .secondary(test.span, "the loop's own condition")
                    .help(format!("fold the exit into the loop condition: `{cond} = op.And({cond}, op.Not(...))`"));
            return Err(self.push(d));
        }
        let kind = LoopKind::While { cond, cond_span: test.span };
        let header = Span { start: s.span.start, end: test.span.end };
        self.lower_loop(&LoopForm { stmt: s, kind, all: body, body: body_only, exit, header })
    }

    /// `break` or `continue` anywhere but as the trailing `if c: break` of a loop body.
    pub(super) fn misplaced_loop_exit(&mut self, s: &Stmt) -> Reported {
        let d = if matches!(s.kind, StmtKind::Break) {
            Diagnostic::error(
                codes::UNSUPPORTED_STMT,
                self.file(),
                "`break` is supported only as the last statement of a loop body, as `if cond: break`",
            )
            .primary(s.span, "`break` here")
            .help("compute the exit condition into a variable and end the loop body with `if cond: break`")
        } else {
            Diagnostic::error(
                codes::UNSUPPORTED_STMT,
                self.file(),
                "`continue` is not part of the ONNX Script language",
            )
            .primary(s.span, "not supported")
            .help("guard the rest of the loop body with an `if` instead")
        };
        self.push(d)
    }

    fn reject_loop_else(&mut self, orelse: &[Stmt]) -> R<()> {
        let Some(first) = orelse.first() else { return Ok(()) };
        let d = Diagnostic::error(
            codes::UNSUPPORTED_STMT,
            self.file(),
            "`else` on a loop is not part of the ONNX Script language",
        )
        .primary(first.span, "in the `else` block of a loop")
        .help("put these statements after the loop");
        Err(self.push(d))
    }

    /// The trip count `n` of `range(n)`.
    fn range_count<'s>(&mut self, iter: &'s Expr) -> R<&'s Expr> {
        let is_range = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == "range" && self.lookup(n).is_none() && self.names.get(n).is_none());
        let args = match &iter.kind {
            ExprKind::Call { func, args } if is_range(func) => args,
            _ => {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_STMT,
                    self.file(),
                    "a `for` loop can only iterate over `range(n)`",
                )
                .primary(iter.span, "not `range(...)`")
                .help("ONNX `Loop` counts iterations: loop over `range(n)` and pick items with `op.Gather(xs, i)`");
                return Err(self.push(d));
            }
        };
        match args.as_slice() {
            [a] if a.keyword.is_none() && a.kind == ArgKind::Plain => Ok(&a.value),
            _ => {
                let label = match args.len() {
                    1 => "not a plain argument".to_string(),
                    n => format!("{n} arguments"),
                };
                let d = Diagnostic::error(codes::UNSUPPORTED_EXPR, self.file(), "`range` takes one argument here, the number of iterations")
                    .primary(iter.span, label)
                    .help("ONNX `Loop` counts from 0 in steps of 1: for `range(a, b)`, loop over `range(b - a)` and add `a` to the loop variable");
                Err(self.push(d))
            }
        }
    }

    /// Splits a trailing `if c: break` off a loop body.
    fn split_exit<'s>(&mut self, body: &'s [Stmt]) -> R<(&'s [Stmt], Exit<'s>)> {
        let Some((last, rest)) = body.split_last() else { return Ok((body, None)) };
        let StmtKind::If { test, body: then, orelse } = &last.kind else { return Ok((body, None)) };
        if !matches!(then.as_slice(), [Stmt { kind: StmtKind::Break, .. }]) {
            return Ok((body, None));
        }
        if let Some(first) = orelse.first() {
            let d = Diagnostic::error(
                codes::UNSUPPORTED_STMT,
                self.file(),
                "the `if ...: break` that ends a loop cannot have an `else`",
            )
            .primary(first.span, "in the `else` block")
            .help("move these statements before the `if ...: break`");
            return Err(self.push(d));
        }
        let ExprKind::Name(c) = &test.kind else {
            let d = Diagnostic::error(
                codes::UNSUPPORTED_EXPR,
                self.file(),
                "the condition of a `break` must be a variable",
            )
            .primary(test.span, "an expression")
            .help("compute it into a variable first: `stop = ...`, then `if stop: break`");
            return Err(self.push(d));
        };
        Ok((rest, Some((c.as_str(), test.span))))
    }

    fn lower_loop(&mut self, form: &LoopForm) -> R<()> {
        let state = self.loop_state(form)?;
        let count = match form.kind {
            LoopKind::Range { count, .. } => {
                let hint = if matches!(count.kind, ExprKind::Name(_)) { None } else { Some("loop_bound") };
                let n = self.lower_expr(count, hint)?;
                self.require_type(&n, ElemType::Int64, count.span, "the number of iterations")?;
                Some(n)
            }
            LoopKind::While { .. } => None,
        };
        let cond = match form.kind {
            LoopKind::While { cond, cond_span } => {
                let c = self.lower_name(cond, cond_span, None)?;
                self.require_type(&c, ElemType::Bool, cond_span, "a loop condition")?;
                Some(c)
            }
            LoopKind::Range { .. } => None,
        };
        let initial = self.initial_state(&state, form.header)?;
        let body = self.lower_loop_body(form, &state, &initial)?;
        self.check_carried_types(&state, &initial, &body, form.header)?;
        if state.is_empty() {
            let d = Diagnostic::error(
                codes::IF_WITHOUT_OUTPUT,
                self.file(),
                "this loop computes nothing that is used afterwards",
            )
            .primary(form.header, "no variable assigned in the loop is used later")
            .help("ONNX `Loop` must have outputs: use the variables it assigns, or remove the loop");
            return Err(self.push(d));
        }
        let outputs: Vec<String> = state.iter().map(|v| self.fresh(v)).collect();
        let mut inputs = vec![count, cond];
        inputs.extend(initial.into_iter().map(Some));
        let attrs = vec![Attr { name: "body".into(), value: AttrValue::Graph(body) }];
        self.emit_default("Loop", inputs, outputs.clone(), attrs, form.header)?;
        for (v, o) in state.iter().zip(outputs) {
            self.bind(v, Binding::Value(o));
        }
        Ok(())
    }

    /// The loop-carried variables, after checking how the loop variable and the conditions are
    /// assigned.
    fn loop_state(&mut self, form: &LoopForm) -> R<Vec<String>> {
        let (assigned, assigned_before_exit, exposed) = {
            let is_static = |s: &Stmt| self.is_static_if(s);
            let mut all = Vec::new();
            liveness::assigned_in_order(form.all, &is_static, &mut all);
            let mut before_exit = Vec::new();
            liveness::assigned_in_order(form.body, &is_static, &mut before_exit);
            (all, before_exit, liveness::exposed_uses(form.all, &is_static))
        };
        let live = self.live_out.get(&form.stmt.span.start).cloned().unwrap_or_default();
        match form.kind {
            LoopKind::Range { var, var_span, .. } => {
                if assigned.iter().any(|v| v == var) {
                    let at = first_assignment(form.all, var).unwrap_or(form.header);
                    let d = Diagnostic::error(
                        codes::UNSUPPORTED_STMT,
                        self.file(),
                        format!("the loop variable `{var}` is assigned in the loop body"),
                    )
                    .primary(at, "assigned here")
                    .secondary(var_span, "the loop variable")
                    .help("ONNX `Loop` sets the iteration number itself: assign the new value to another variable");
                    return Err(self.push(d));
                }
                if live.contains(var) {
                    let d = Diagnostic::error(codes::UNSUPPORTED_STMT, self.file(), format!("the loop variable `{var}` is used after the loop"))
                        .primary(var_span, "has no value after the loop")
                        .help(format!("ONNX `Loop` does not return its iteration number: to keep it, give a variable a value before the loop and assign `{var}` to it in the body"));
                    return Err(self.push(d));
                }
            }
            LoopKind::While { cond, cond_span } => {
                if !assigned.iter().any(|v| v == cond) {
                    let d = Diagnostic::error(
                        codes::UNSUPPORTED_EXPR,
                        self.file(),
                        format!("the condition `{cond}` of this `while` loop is never updated in its body"),
                    )
                    .primary(cond_span, "not assigned in the loop")
                    .help(format!("assign `{cond}` in the loop body, typically as its last statement"));
                    return Err(self.push(d));
                }
            }
        }
        if let Some((c, span)) = form.exit {
            if !assigned_before_exit.iter().any(|v| v == c) {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_EXPR,
                    self.file(),
                    format!("the `break` condition `{c}` must be computed in the loop body"),
                )
                .primary(span, "not assigned in the loop")
                .help(format!("assign `{c}` in the loop body, before `if {c}: break`"));
                return Err(self.push(d));
            }
        }
        Ok(assigned.into_iter().filter(|v| exposed.contains(v.as_str()) || live.contains(v.as_str())).collect())
    }

    /// The values the carried variables enter the loop with.
    fn initial_state(&mut self, state: &[String], header: Span) -> R<Vec<String>> {
        let mut values = Vec::new();
        let mut result = Ok(());
        for v in state {
            let value = match self.lookup(v).cloned() {
                Some(b) => self.binding_value(v, b, v, header),
                None => {
                    let d = Diagnostic::error(
                        codes::CONDITIONALLY_DEFINED,
                        self.file(),
                        format!("`{v}` is carried by this loop but has no value before it"),
                    )
                    .primary(header, format!("`{v}` has no value if the loop runs zero times"))
                    .help(format!("give `{v}` a value before the loop"));
                    Err(self.push(d))
                }
            };
            match value {
                Ok(x) => values.push(x),
                Err(e) => result = Err(e),
            }
        }
        result.map(|()| values)
    }

    fn lower_loop_body(&mut self, form: &LoopForm, state: &[String], initial: &[String]) -> R<Graph> {
        self.enter_subgraph(form.header, Scope::default())?;
        self.loop_depth += 1;
        let result = self.loop_body_in_scope(form, state, initial);
        self.loop_depth -= 1;
        let scope = self.leave_subgraph();
        let (inputs, outputs) = result?;
        Ok(Graph { name: "loop_body".into(), doc: None, inputs, nodes: scope.nodes, outputs })
    }

    /// The body's inputs (iteration number, condition, carried values) and outputs (condition,
    /// carried values), lowering its statements in between.
    fn loop_body_in_scope(
        &mut self,
        form: &LoopForm,
        state: &[String],
        initial: &[String],
    ) -> R<(Vec<GraphInput>, Vec<String>)> {
        let (iter_hint, cond_hint) = match form.kind {
            LoopKind::Range { var, .. } => (var, "cond_in"),
            LoopKind::While { cond, .. } => ("infinite_loop", cond),
        };
        let iter = self.fresh(iter_hint);
        let cond_in = self.fresh(cond_hint);
        self.values.set_ty(&iter, Ty::Elem(ElemType::Int64));
        self.values.set_ty(&cond_in, Ty::Elem(ElemType::Bool));
        let mut inputs = vec![
            GraphInput { name: iter.clone(), ty: Some(TensorType::scalar(ElemType::Int64)) },
            GraphInput { name: cond_in.clone(), ty: Some(TensorType::scalar(ElemType::Bool)) },
        ];
        if let LoopKind::Range { var, .. } = form.kind {
            self.bind(var, Binding::Value(iter));
        }
        for (v, init) in state.iter().zip(initial) {
            let p = self.fresh(v);
            if let Some(t) = self.values.ty(init).cloned() {
                self.values.set_ty(&p, t);
            }
            self.bind(v, Binding::Value(p.clone()));
            inputs.push(GraphInput { name: p, ty: None });
        }
        self.lower_block(form.body)?;

        let (op_type, cond) = match (form.exit, form.kind) {
            (Some((c, span)), _) => ("Not", self.lower_name(c, span, None)?),
            (None, LoopKind::While { cond, cond_span }) => ("Identity", self.lower_name(cond, cond_span, None)?),
            (None, LoopKind::Range { .. }) => ("Identity", cond_in),
        };
        if let Some((_, span)) = form.exit {
            self.require_type(&cond, ElemType::Bool, span, "a `break` condition")?;
        } else if let LoopKind::While { cond_span, .. } = form.kind {
            self.require_type(&cond, ElemType::Bool, cond_span, "a loop condition")?;
        }
        let cond_out = self.fresh("cond_out");
        self.emit_default(op_type, vec![Some(cond)], vec![cond_out.clone()], vec![], form.header)?;

        let mut outputs = vec![cond_out];
        for v in state {
            match self.subgraph_output(v, form.header, &outputs)? {
                Some(o) => outputs.push(o),
                None => return Err(self.undefined(v, form.header)),
            }
        }
        Ok((inputs, outputs))
    }

    /// A carried value keeps one element type across iterations.
    fn check_carried_types(&mut self, state: &[String], initial: &[String], body: &Graph, header: Span) -> R<()> {
        for ((v, init), out) in state.iter().zip(initial).zip(body.outputs.iter().skip(1)) {
            if let (Some(Ty::Elem(before)), Some(Ty::Elem(after))) =
                (self.values.ty(init).cloned(), self.values.ty(out).cloned())
            {
                if before != after {
                    let d = Diagnostic::error(codes::TYPE_MISMATCH, self.file(), format!("`{v}` enters the loop as {} but the body makes it {}", before.script_name(), after.script_name()))
                        .primary(header, format!("`{v}` is carried by this loop"))
                        .help(format!("a loop-carried value keeps its element type: cast the new value, e.g. `{v} = op.CastLike(..., {v})`"));
                    return Err(self.push(d));
                }
            }
        }
        Ok(())
    }

    /// Reports a value whose known element type is not `want`.
    fn require_type(&mut self, value: &str, want: ElemType, span: Span, what: &str) -> R<()> {
        let Some(Ty::Elem(actual)) = self.values.ty(value).cloned() else { return Ok(()) };
        if actual == want {
            return Ok(());
        }
        let help = match want {
            ElemType::Bool => "compare to get a boolean, e.g. `x > 0`".to_string(),
            _ => format!("cast it: `op.Cast(x, to={}.dtype)`", want.script_name()),
        };
        let d = Diagnostic::error(
            codes::TYPE_MISMATCH,
            self.file(),
            format!("{what} must be {}, but this is {}", want.script_name(), actual.script_name()),
        )
        .primary(span, format!("{} here", actual.script_name()))
        .help(help);
        Err(self.push(d))
    }
}

/// Where a block first assigns `name`, looking into nested blocks.
fn first_assignment(stmts: &[Stmt], name: &str) -> Option<Span> {
    assignment(stmts, name, false)
}

/// Where a block last assigns `name` (the value it leaves `name` with, when that assignment
/// runs), looking into nested blocks.
pub(super) fn last_assignment(stmts: &[Stmt], name: &str) -> Option<Span> {
    assignment(stmts, name, true)
}

fn assignment(stmts: &[Stmt], name: &str, last: bool) -> Option<Span> {
    let at = |s: &Stmt| {
        let mut names = Vec::new();
        liveness::assigned_in_order(std::slice::from_ref(s), &|_| None, &mut names);
        if !names.iter().any(|n| n == name) {
            return None;
        }
        let inner = match &s.kind {
            StmtKind::If { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                assignment(body, name, last).or_else(|| assignment(orelse, name, last))
            }
            StmtKind::For { target, body, .. } => assignment(body, name, last).or(Some(target.span)),
            _ => None,
        };
        Some(inner.unwrap_or(s.span))
    };
    if last {
        stmts.iter().rev().find_map(at)
    } else {
        stmts.iter().find_map(at)
    }
}
