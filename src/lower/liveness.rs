//! Which variables are live after each `if` and loop, which a block assigns (in source order),
//! and which it reads before assigning them.
//!
//! This follows onnxscript's own analysis (so that the same variables become `If` outputs and
//! loop-carried state), but keeps the order of first assignment so that output is
//! deterministic, and treats loops as possibly running zero times (onnxscript's liveness does not,
//! and then forgets values a loop needs).

use crate::syntax::ast::*;
use std::collections::{BTreeSet, HashMap};

pub type Live = BTreeSet<String>;

/// Variables read by an expression. As in onnxscript, the callee of a call is not a use, and of
/// keyword arguments only bare names count (other keyword values are script-time constants).
pub fn used_vars(e: &Expr, out: &mut Live) {
    match &e.kind {
        ExprKind::Name(n) => {
            out.insert(n.clone());
        }
        ExprKind::Call { args, .. } => {
            for a in args {
                match (&a.keyword, &a.value.kind) {
                    (None, _) => used_vars(&a.value, out),
                    (Some(_), ExprKind::Name(n)) => {
                        out.insert(n.clone());
                    }
                    _ => {}
                }
            }
        }
        ExprKind::Attribute { value, .. } => used_vars(value, out),
        ExprKind::BinOp { left, right, .. } => {
            used_vars(left, out);
            used_vars(right, out);
        }
        ExprKind::UnaryOp { operand, .. } => used_vars(operand, out),
        ExprKind::BoolOp { values, .. } => values.iter().for_each(|v| used_vars(v, out)),
        ExprKind::Compare { left, comparisons } => {
            used_vars(left, out);
            comparisons.iter().for_each(|(_, c)| used_vars(c, out));
        }
        ExprKind::Subscript { value, index } => {
            used_vars(value, out);
            used_vars(index, out);
        }
        ExprKind::Slice { lower, upper, step } => {
            for p in [lower, upper, step].into_iter().flatten() {
                used_vars(p, out);
            }
        }
        ExprKind::Tuple(items) | ExprKind::List(items) | ExprKind::Set(items) => {
            items.iter().for_each(|v| used_vars(v, out))
        }
        ExprKind::Dict(pairs) => pairs.iter().for_each(|(k, v)| {
            used_vars(k, out);
            used_vars(v, out);
        }),
        ExprKind::Starred(v) => used_vars(v, out),
        ExprKind::IfExp { test, body, orelse } => {
            used_vars(test, out);
            used_vars(body, out);
            used_vars(orelse, out);
        }
        ExprKind::FString(_) => e.for_each_child(&mut |field| used_vars(field, out)),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Ellipsis => {}
    }
}

/// Names bound by an assignment target.
pub fn target_names(t: &Expr, out: &mut Vec<String>) {
    match &t.kind {
        ExprKind::Name(n) => out.push(n.clone()),
        ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().for_each(|i| target_names(i, out)),
        _ => {}
    }
}

/// Variables a statement list may assign, in order of first assignment.
pub fn assigned_in_order(stmts: &[Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>, out: &mut Vec<String>) {
    for s in stmts {
        let mut names = Vec::new();
        match &s.kind {
            StmtKind::Assign { targets, .. } => targets.iter().for_each(|t| target_names(t, &mut names)),
            StmtKind::AnnAssign { target, .. } | StmtKind::AugAssign { target, .. } => target_names(target, &mut names),
            StmtKind::If { body, orelse, .. } => match is_static(s) {
                Some(true) => assigned_in_order(body, is_static, &mut names),
                Some(false) => assigned_in_order(orelse, is_static, &mut names),
                None => {
                    assigned_in_order(body, is_static, &mut names);
                    assigned_in_order(orelse, is_static, &mut names);
                }
            },
            StmtKind::For { target, body, .. } => {
                assigned_in_order(body, is_static, &mut names);
                target_names(target, &mut names);
            }
            StmtKind::While { body, .. } => assigned_in_order(body, is_static, &mut names),
            _ => {}
        }
        for n in names {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
}

/// The variables live after each `if` and loop statement (those of nested functions included),
/// keyed by the statement's span start.
pub fn live_out_of_control_flow(body: &[Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>) -> HashMap<u32, Live> {
    let mut map = HashMap::new();
    record_block(body, Live::new(), is_static, &mut map);
    map
}

/// The variables a block reads before assigning them: its inputs.
pub fn exposed_uses(stmts: &[Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>) -> Live {
    block_effect(stmts, is_static).gen
}

/// The variables of enclosing scopes that a nested function reads.
pub fn captured(f: &FunctionDef, is_static: &dyn Fn(&Stmt) -> Option<bool>) -> Live {
    let mut used = exposed_uses(&f.body, is_static);
    for p in &f.params {
        used.remove(&p.name.name);
    }
    used
}

/// Every name that nested functions bind: their parameters and the variables they assign.
pub fn bound_in_nested_functions(stmts: &[Stmt], out: &mut Vec<String>) {
    for s in stmts {
        match &s.kind {
            StmtKind::FunctionDef(f) => {
                out.extend(f.params.iter().map(|p| p.name.name.clone()));
                assigned_in_order(&f.body, &|_| None, out);
                bound_in_nested_functions(&f.body, out);
            }
            StmtKind::If { body, orelse, .. }
            | StmtKind::For { body, orelse, .. }
            | StmtKind::While { body, orelse, .. } => {
                bound_in_nested_functions(body, out);
                bound_in_nested_functions(orelse, out);
            }
            _ => {}
        }
    }
}

/// What a statement or block does to liveness: the variables live before it are
/// `gen ∪ (after − kill)`, or only `gen` when it always returns. Loops are summarised in closed
/// form (a body may run zero or more times), so each statement is analysed a bounded number of
/// times however deeply loops nest.
struct Effect {
    gen: Live,
    kill: Live,
    returns: bool,
}

impl Effect {
    fn reads(gen: Live) -> Effect {
        Effect { gen, kill: Live::new(), returns: false }
    }

    fn live_in(&self, after: &Live) -> Live {
        let mut live = self.gen.clone();
        if !self.returns {
            live.extend(after.difference(&self.kill).cloned());
        }
        live
    }

    /// `self`, then `next`.
    fn then(mut self, next: Effect) -> Effect {
        if self.returns {
            return self;
        }
        self.gen.extend(next.gen.difference(&self.kill).cloned());
        self.kill.extend(next.kill);
        self.returns = next.returns;
        self
    }

    /// `self` or `other`, whichever path runs.
    fn or(mut self, other: Effect) -> Effect {
        self.gen.extend(other.gen);
        self.kill = match (self.returns, other.returns) {
            (true, true) | (false, true) => self.kill,
            (true, false) => other.kill,
            (false, false) => self.kill.intersection(&other.kill).cloned().collect(),
        };
        self.returns = self.returns && other.returns;
        self
    }
}

fn used_in(e: &Expr) -> Live {
    let mut live = Live::new();
    used_vars(e, &mut live);
    live
}

fn names_of(t: &Expr) -> Live {
    let mut names = Vec::new();
    target_names(t, &mut names);
    names.into_iter().collect()
}

fn block_effect(stmts: &[Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>) -> Effect {
    stmts.iter().fold(Effect::reads(Live::new()), |e, s| e.then(effect(s, is_static)))
}

fn effect(s: &Stmt, is_static: &dyn Fn(&Stmt) -> Option<bool>) -> Effect {
    match &s.kind {
        StmtKind::Assign { targets, value } => {
            Effect { gen: used_in(value), kill: targets.iter().flat_map(names_of).collect(), returns: false }
        }
        StmtKind::AnnAssign { target, value, .. } => {
            Effect { gen: value.as_ref().map(used_in).unwrap_or_default(), kill: names_of(target), returns: false }
        }
        StmtKind::AugAssign { target, value, .. } => {
            Effect::reads(used_in(target).union(&used_in(value)).cloned().collect())
        }
        StmtKind::Return(v) => {
            Effect { gen: v.as_ref().map(used_in).unwrap_or_default(), kill: Live::new(), returns: true }
        }
        StmtKind::If { test, body, orelse } => match is_static(s) {
            Some(true) => block_effect(body, is_static),
            Some(false) => block_effect(orelse, is_static),
            None => {
                Effect::reads(used_in(test)).then(block_effect(body, is_static).or(block_effect(orelse, is_static)))
            }
        },
        // Live before a loop: what is live after it (it may run zero times), what its body reads
        // before assigning, and its header.
        StmtKind::For { target, iter, body, .. } => {
            let mut gen: Live = block_effect(body, is_static).gen.difference(&names_of(target)).cloned().collect();
            gen.extend(used_in(iter));
            Effect::reads(gen)
        }
        StmtKind::While { test, body, .. } => {
            let mut gen = block_effect(body, is_static).gen;
            gen.extend(used_in(test));
            Effect::reads(gen)
        }
        // The graph is built where the function is defined, from the values its captured
        // variables have there.
        StmtKind::FunctionDef(f) => {
            Effect { gen: captured(f, is_static), kill: Live::from([f.name.name.clone()]), returns: false }
        }
        StmtKind::Expr(e) => Effect::reads(used_in(e)),
        _ => Effect::reads(Live::new()),
    }
}

/// Walks a block backwards from what is live after it, recording what is live after each `if`
/// and loop.
fn record_block(
    stmts: &[Stmt],
    mut live: Live,
    is_static: &dyn Fn(&Stmt) -> Option<bool>,
    map: &mut HashMap<u32, Live>,
) {
    for s in stmts.iter().rev() {
        record_stmt(s, &live, is_static, map);
        live = effect(s, is_static).live_in(&live);
    }
}

fn record_stmt(s: &Stmt, live_out: &Live, is_static: &dyn Fn(&Stmt) -> Option<bool>, map: &mut HashMap<u32, Live>) {
    match &s.kind {
        StmtKind::If { body, orelse, .. } => {
            map.insert(s.span.start, live_out.clone());
            if is_static(s) != Some(false) {
                record_block(body, live_out.clone(), is_static, map);
            }
            if is_static(s) != Some(true) {
                record_block(orelse, live_out.clone(), is_static, map);
            }
        }
        // At the end of an iteration, what the loop needs afterwards and what the next iteration
        // reads are live.
        StmtKind::For { target, body, .. } => {
            map.insert(s.span.start, live_out.clone());
            let mut end = live_out.clone();
            end.extend(block_effect(body, is_static).gen.difference(&names_of(target)).cloned());
            record_block(body, end, is_static, map);
        }
        StmtKind::While { test, body, .. } => {
            map.insert(s.span.start, live_out.clone());
            let mut end = live_out.clone();
            end.extend(used_in(test));
            end.extend(block_effect(body, is_static).gen);
            record_block(body, end, is_static, map);
        }
        StmtKind::FunctionDef(f) => record_block(&f.body, Live::new(), is_static, map),
        _ => {}
    }
}

/// Every place where `name` is `f`'s own local variable: its parameter, and the names in its
/// body, nested functions included except where they bind `name` themselves (parameters and
/// annotations and defaults of `f` belong to the enclosing scope). `None` when a nested function
/// is itself called `name`, which a rename could not follow. For renames.
pub fn local_name_spans(f: &FunctionDef, name: &str) -> Option<Vec<crate::source::Span>> {
    let mut out: Vec<_> = f.params.iter().filter(|p| p.name.name == name).map(|p| p.name.span).collect();
    names_in_block(&f.body, name, &mut out)?;
    Some(out)
}

fn names_in_expr(e: &Expr, name: &str, out: &mut Vec<crate::source::Span>) {
    if matches!(&e.kind, ExprKind::Name(n) if n == name) {
        out.push(e.span);
    }
    e.for_each_child(&mut |c| names_in_expr(c, name, out));
}

fn names_in_block(stmts: &[Stmt], name: &str, out: &mut Vec<crate::source::Span>) -> Option<()> {
    for s in stmts {
        if let StmtKind::FunctionDef(f) = &s.kind {
            if f.name.name == name {
                return None;
            }
            f.decorators.iter().for_each(|d| names_in_expr(d, name, out));
            for p in &f.params {
                p.annotation.iter().chain(&p.default).for_each(|e| names_in_expr(e, name, out));
            }
            // A nested function that binds the name has a variable of its own.
            let mut bound: Vec<String> = f.params.iter().map(|p| p.name.name.clone()).collect();
            assigned_in_order(&f.body, &|_| None, &mut bound);
            if !bound.iter().any(|n| n == name) {
                names_in_block(&f.body, name, out)?;
            }
            continue;
        }
        s.for_each_expr(&mut |e| names_in_expr(e, name, out));
        let mut result = Some(());
        s.for_each_block(&mut |b| {
            if result.is_some() {
                result = names_in_block(b, name, out);
            }
        });
        result?;
    }
    Some(())
}
