//! Which variables are live after each `if` and loop, which a block assigns (in source order),
//! and which it reads before assigning them.
//!
//! This follows onnxscript's own analysis (so that the same variables become `If` outputs and
//! loop-carried state), but keeps the order of first assignment so that output is
//! deterministic, and treats loops as possibly running zero times (onnxscript's liveness does not,
//! and then forgets values a loop needs).

use crate::syntax::ast::*;
use std::collections::BTreeSet;

/// A set of variables, borrowed from the syntax tree: the analyses build and merge a set for
/// every statement, and owned names made that a third of their cost.
pub type Live<'a> = BTreeSet<&'a str>;

/// What is live after each control-flow statement, by the statement's start offset.
pub type LiveOut<'a> = foldhash::HashMap<u32, Live<'a>>;

/// The deepest nesting of subgraphs (`if` branches, loop bodies, nested functions) that lowering
/// accepts (E1001): each level is three protobuf messages (node, attribute, graph), and protobuf
/// readers refuse a file nested more than 100 deep. The analyses below look no deeper either, so
/// their cost stays linear even in a chain of 10,000 `elif`s (each nests one level).
pub const MAX_NESTING: usize = 30;

/// Variables read by an expression. As in onnxscript, the callee of a call is not a use, and of
/// keyword arguments only bare names count (other keyword values are script-time constants).
pub fn used_vars<'a>(e: &'a Expr, out: &mut Live<'a>) {
    match &e.kind {
        ExprKind::Name(n) => {
            out.insert(n);
        }
        ExprKind::Call { args, .. } => {
            for a in args {
                match (&a.keyword, &a.value.kind) {
                    (None, _) => used_vars(&a.value, out),
                    (Some(_), ExprKind::Name(n)) => {
                        out.insert(n);
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
            items.iter().for_each(|v| used_vars(v, out));
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
        ExprKind::Lambda { .. } | ExprKind::Comprehension { .. } => {
            // Its parameters or `for` targets are its own variables, not the enclosing scope's.
            let own = e.scope_names();
            let mut inner = Live::new();
            e.for_each_child_scoped(&mut |c, scoped| used_vars(c, if scoped { &mut inner } else { &mut *out }));
            out.extend(inner.into_iter().filter(|n| !own.contains(n)));
        }
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Ellipsis => {}
    }
}

/// Variables a statement list may assign, in order of first assignment (appended to `out`, each
/// once).
pub fn assigned_in_order(stmts: &[Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>, out: &mut Vec<String>) {
    let mut names = Vec::new();
    assigned_at(stmts, is_static, 0, &mut names);
    let first: Vec<&str> = {
        let mut seen: foldhash::HashSet<&str> = out.iter().map(String::as_str).collect();
        names.into_iter().filter(|n| seen.insert(n)).collect()
    };
    out.extend(first.into_iter().map(str::to_string));
}

/// Every variable a statement list may assign, its nested functions' included (their
/// parameters too), borrowed from the tree, repeats and all: what a name lookup asks when it
/// finds nothing bound (only later, or only on some paths).
pub fn assigned_anywhere<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a str>) {
    assigned_at(stmts, &|_| None, 0, out);
    bound_in_nested_functions(stmts, out);
}

/// Every assignment in source order, repeats included; `depth` counts enclosing subgraphs.
fn assigned_at<'a>(stmts: &'a [Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>, depth: usize, out: &mut Vec<&'a str>) {
    if depth > MAX_NESTING {
        return;
    }
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, .. } => {
                targets.iter().for_each(|t| t.for_each_target_name(&mut |n| out.push(n)));
            }
            StmtKind::AnnAssign { target, .. } | StmtKind::AugAssign { target, .. } => {
                target.for_each_target_name(&mut |n| out.push(n));
            }
            StmtKind::If { body, orelse, .. } => match is_static(s) {
                Some(true) => assigned_at(body, is_static, depth, out),
                Some(false) => assigned_at(orelse, is_static, depth, out),
                None => {
                    assigned_at(body, is_static, depth + 1, out);
                    assigned_at(orelse, is_static, depth + 1, out);
                }
            },
            StmtKind::For { target, body, .. } => {
                assigned_at(body, is_static, depth + 1, out);
                target.for_each_target_name(&mut |n| out.push(n));
            }
            StmtKind::While { body, .. } => assigned_at(body, is_static, depth + 1, out),
            _ => {}
        }
    }
}

/// The variables live after each `if` and loop statement (those of nested functions included)
/// that the statement assigns (the only ones lowering asks about), keyed by the statement's
/// span start.
pub fn live_out_of_control_flow<'a>(body: &'a [Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>) -> LiveOut<'a> {
    let mut map = LiveOut::default();
    record_block(body, Live::new(), is_static, 0, &mut map);
    map
}

/// The variables a block reads before assigning them: its inputs.
pub fn exposed_uses<'a>(stmts: &'a [Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>) -> Live<'a> {
    block_effect(stmts, is_static, 0).gen
}

/// The variables of enclosing scopes that a nested function reads.
pub fn captured<'a>(f: &'a FunctionDef, is_static: &dyn Fn(&Stmt) -> Option<bool>) -> Live<'a> {
    let mut used = exposed_uses(&f.body, is_static);
    for p in &f.params {
        used.remove(p.name.name.as_str());
    }
    used
}

/// Every name that nested functions bind: their parameters and the variables they assign.
fn bound_in_nested_functions<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a str>) {
    for s in stmts {
        match &s.kind {
            StmtKind::FunctionDef(f) => {
                out.extend(f.params.iter().map(|p| p.name.name.as_str()));
                assigned_at(&f.body, &|_| None, 0, out);
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
struct Effect<'a> {
    gen: Live<'a>,
    kill: Live<'a>,
    returns: bool,
}

impl<'a> Effect<'a> {
    fn reads(gen: Live<'a>) -> Effect<'a> {
        Effect { gen, kill: Live::new(), returns: false }
    }

    /// What is live before, from what is live after, updated in place: a straight-line block
    /// of thousands of statements with thousands of live variables must not copy the set at
    /// every statement.
    fn apply(&self, live: &mut Live<'a>) {
        if self.returns {
            live.clone_from(&self.gen);
            return;
        }
        for k in &self.kill {
            live.remove(k);
        }
        live.extend(self.gen.iter().copied());
    }

    /// `self`, then `next`.
    fn then(mut self, next: Effect<'a>) -> Effect<'a> {
        if self.returns {
            return self;
        }
        self.gen.extend(next.gen.difference(&self.kill).copied());
        self.kill.extend(next.kill);
        self.returns = next.returns;
        self
    }

    /// `self` or `other`, whichever path runs.
    fn or(mut self, other: Effect<'a>) -> Effect<'a> {
        self.gen.extend(other.gen);
        self.kill = match (self.returns, other.returns) {
            (true, true) | (false, true) => self.kill,
            (true, false) => other.kill,
            (false, false) => self.kill.intersection(&other.kill).copied().collect(),
        };
        self.returns = self.returns && other.returns;
        self
    }
}

fn used_in(e: &Expr) -> Live<'_> {
    let mut live = Live::new();
    used_vars(e, &mut live);
    live
}

fn names_of(t: &Expr) -> Live<'_> {
    let mut names = Live::new();
    t.for_each_target_name(&mut |n| {
        names.insert(n);
    });
    names
}

/// The effect of a block nested in `depth` subgraphs. Deeper than [`MAX_NESTING`] it is taken
/// to do nothing: lowering refuses it anyway.
fn block_effect<'a>(stmts: &'a [Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>, depth: usize) -> Effect<'a> {
    if depth > MAX_NESTING {
        return Effect::reads(Live::new());
    }
    stmts.iter().fold(Effect::reads(Live::new()), |e, s| e.then(effect(s, is_static, depth)))
}

fn effect<'a>(s: &'a Stmt, is_static: &dyn Fn(&Stmt) -> Option<bool>, depth: usize) -> Effect<'a> {
    let inner = depth + 1;
    match &s.kind {
        StmtKind::Assign { targets, value } => {
            Effect { gen: used_in(value), kill: targets.iter().flat_map(names_of).collect(), returns: false }
        }
        StmtKind::AnnAssign { target, value, .. } => {
            Effect { gen: value.as_ref().map(used_in).unwrap_or_default(), kill: names_of(target), returns: false }
        }
        StmtKind::AugAssign { target, value, .. } => {
            Effect::reads(used_in(target).union(&used_in(value)).copied().collect())
        }
        StmtKind::Return(v) => {
            Effect { gen: v.as_ref().map(used_in).unwrap_or_default(), kill: Live::new(), returns: true }
        }
        // Like `return`, `raise` ends the path: nothing after it is read.
        StmtKind::Raise { exc, cause } => {
            Effect { gen: exc.iter().chain(cause).flat_map(used_in).collect(), kill: Live::new(), returns: true }
        }
        StmtKind::Assert { test, msg } => Effect::reads([test].into_iter().chain(msg).flat_map(used_in).collect()),
        StmtKind::If { test, body, orelse } => match is_static(s) {
            Some(true) => block_effect(body, is_static, depth),
            Some(false) => block_effect(orelse, is_static, depth),
            None => Effect::reads(used_in(test))
                .then(block_effect(body, is_static, inner).or(block_effect(orelse, is_static, inner))),
        },
        // Live before a loop: what is live after it (it may run zero times), what its body reads
        // before assigning, and its header.
        StmtKind::For { target, iter, body, .. } => {
            let mut gen: Live =
                block_effect(body, is_static, inner).gen.difference(&names_of(target)).copied().collect();
            gen.extend(used_in(iter));
            Effect::reads(gen)
        }
        StmtKind::While { test, body, .. } => {
            let mut gen = block_effect(body, is_static, inner).gen;
            gen.extend(used_in(test));
            Effect::reads(gen)
        }
        // The graph is built where the function is defined, from the values its captured
        // variables have there.
        StmtKind::FunctionDef(f) => {
            Effect { gen: captured(f, is_static), kill: Live::from([f.name.name.as_str()]), returns: false }
        }
        StmtKind::Expr(e) => Effect::reads(used_in(e)),
        _ => Effect::reads(Live::new()),
    }
}

/// Walks a block backwards from what is live after it, recording what is live after each `if`
/// and loop.
fn record_block<'a>(
    stmts: &'a [Stmt],
    mut live: Live<'a>,
    is_static: &dyn Fn(&Stmt) -> Option<bool>,
    depth: usize,
    map: &mut LiveOut<'a>,
) {
    if depth > MAX_NESTING {
        return;
    }
    for s in stmts.iter().rev() {
        record_stmt(s, &live, is_static, depth, map);
        apply_effect(s, is_static, depth, &mut live);
    }
}

/// What is live before `s`, from what is live after it, updated in place: [`effect`] then
/// [`Effect::apply`], but a simple statement (most of a function) changes the set directly,
/// rather than build its two sets first.
fn apply_effect<'a>(s: &'a Stmt, is_static: &dyn Fn(&Stmt) -> Option<bool>, depth: usize, live: &mut Live<'a>) {
    let kill = |t: &'a Expr, live: &mut Live<'a>| {
        t.for_each_target_name(&mut |n| {
            live.remove(n);
        });
    };
    match &s.kind {
        StmtKind::Assign { targets, value } => {
            targets.iter().for_each(|t| kill(t, live));
            used_vars(value, live);
        }
        StmtKind::AnnAssign { target, value, .. } => {
            kill(target, live);
            if let Some(v) = value {
                used_vars(v, live);
            }
        }
        StmtKind::AugAssign { target, value, .. } => {
            used_vars(target, live);
            used_vars(value, live);
        }
        StmtKind::Return(v) => {
            live.clear();
            if let Some(v) = v {
                used_vars(v, live);
            }
        }
        StmtKind::Raise { exc, cause } => {
            live.clear();
            exc.iter().chain(cause).for_each(|e| used_vars(e, live));
        }
        StmtKind::Assert { test, msg } => [test].into_iter().chain(msg).for_each(|e| used_vars(e, live)),
        StmtKind::Expr(e) => used_vars(e, live),
        StmtKind::If { .. } | StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::FunctionDef(_) => {
            effect(s, is_static, depth).apply(live);
        }
        _ => {}
    }
}

fn record_stmt<'a>(
    s: &'a Stmt,
    live_out: &Live<'a>,
    is_static: &dyn Fn(&Stmt) -> Option<bool>,
    depth: usize,
    map: &mut LiveOut<'a>,
) {
    let inner = depth + 1;
    if !matches!(s.kind, StmtKind::If { .. } | StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::FunctionDef(_))
    {
        return;
    }
    // Inside the statement, only what it assigns is asked about: the rest of what is live after
    // it need not be carried in (nor copied) into its blocks.
    let mut assigned = Vec::new();
    assigned_at(std::slice::from_ref(s), is_static, depth, &mut assigned);
    let live_out: &Live = &assigned.iter().filter_map(|v| live_out.get(v).copied()).collect();
    match &s.kind {
        StmtKind::If { body, orelse, .. } => {
            map.insert(s.span.start, live_out.clone());
            let branch = if is_static(s).is_some() { depth } else { inner };
            if is_static(s) != Some(false) {
                record_block(body, live_out.clone(), is_static, branch, map);
            }
            if is_static(s) != Some(true) {
                record_block(orelse, live_out.clone(), is_static, branch, map);
            }
        }
        // At the end of an iteration, what the loop needs afterwards and what the next iteration
        // reads are live.
        StmtKind::For { target, body, .. } => {
            map.insert(s.span.start, live_out.clone());
            let mut end = live_out.clone();
            end.extend(block_effect(body, is_static, inner).gen.difference(&names_of(target)).copied());
            record_block(body, end, is_static, inner, map);
        }
        StmtKind::While { test, body, .. } => {
            map.insert(s.span.start, live_out.clone());
            let mut end = live_out.clone();
            end.extend(used_in(test));
            end.extend(block_effect(body, is_static, inner).gen);
            record_block(body, end, is_static, inner, map);
        }
        StmtKind::FunctionDef(f) => record_block(&f.body, Live::new(), is_static, inner, map),
        _ => {}
    }
}

/// The parameters that `del name` at the top of `f`'s body leaves unread on purpose, as in a
/// script (lowering refuses a `del` anywhere else).
pub fn deleted_parameters(f: &FunctionDef) -> Live<'_> {
    f.body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Delete(targets) => Some(targets),
            _ => None,
        })
        .flatten()
        .filter_map(|t| match &t.kind {
            ExprKind::Name(n) => Some(n.as_str()),
            _ => None,
        })
        .collect()
}

/// Whether `f`'s body never names its parameter `name`: every call computes what it would with
/// any other value. `false` when a nested function is itself called `name`, and when a `del`
/// names it (on purpose, [`deleted_parameters`]).
pub fn never_read(f: &FunctionDef, name: &str) -> bool {
    local_name_spans(f, name).is_some_and(|spans| spans.iter().all(|s| f.params.iter().any(|p| p.name.span == *s)))
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
    // A lambda or a comprehension that binds the name has a variable of its own.
    let own = e.scope_names().contains(&name);
    e.for_each_child_scoped(&mut |c, scoped| {
        if !(scoped && own) {
            names_in_expr(c, name, out);
        }
    });
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
        // `del name` names the variable too (a rename renames it), without reading it.
        if let StmtKind::Delete(targets) = &s.kind {
            targets.iter().for_each(|t| names_in_expr(t, name, out));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A lambda's parameters and a comprehension's targets are its own variables; its defaults
    /// and its first iterable are read in the enclosing scope.
    #[test]
    fn lambdas_and_comprehensions_read_only_their_free_names() {
        let uses = |text: &str| {
            let parsed = crate::syntax::parse(0, &format!("y = {text}\n"));
            let module = parsed.module.expect("the test source parses");
            let StmtKind::Assign { value, .. } = &module.body[0].kind else { panic!("an assignment") };
            let mut live = Live::new();
            used_vars(value, &mut live);
            live.into_iter().map(str::to_string).collect::<Vec<_>>()
        };
        assert_eq!(uses("lambda x, y=d: x + y + z"), ["d", "z"]);
        assert_eq!(uses("[a + i for i in xs if i > k]"), ["a", "k", "xs"]);
        // The first iterable is the enclosing scope's `i`, the second the comprehension's.
        assert_eq!(uses("[j for i in i for j in i]"), ["i"]);
        assert_eq!(uses("{k: v for k, (v, w) in items if w}"), ["items"]);
        assert_eq!(uses("all(x > t for x in xs)"), ["t", "xs"]);
    }

    /// The shortcut for simple statements changes the set exactly as their effect would.
    #[test]
    fn a_simple_statement_changes_the_live_set_as_its_effect_does() {
        let text = "def f(a, b):\n    x = a + y\n    x, (y, z) = op.Split(a, b)\n    w: FLOAT = z * x\n    v: FLOAT\n    x += w\n    op.Identity(q)\n    pass\n    return a, x\n    return\n    x = y = a\n    assert x, [v for v in w if v]\n    raise E(lambda a: a + z) from b\n    raise\n";
        let parsed = crate::syntax::parse(0, text);
        let module = parsed.module.expect("the test source parses");
        let StmtKind::FunctionDef(f) = &module.body[0].kind else { panic!("a function") };
        let after = ["a", "b", "q", "v", "w", "x", "y", "z", "other"];
        for s in &f.body {
            for drop in 0..after.len() {
                let live: Live = after.iter().copied().filter(|n| *n != after[drop]).collect();
                let (mut direct, mut through_effect) = (live.clone(), live);
                apply_effect(s, &|_| None, 0, &mut direct);
                effect(s, &|_| None, 0).apply(&mut through_effect);
                assert_eq!(direct, through_effect, "at {:?}", s.span);
            }
        }
    }
}
