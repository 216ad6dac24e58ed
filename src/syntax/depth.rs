//! How deeply a module's syntax tree nests, measured (and, when too deep, taken apart) without
//! recursion.
//!
//! Every later phase walks the tree recursively, on a large stack. A 16 MB file can hold a sum of
//! four million terms, a tree that deep, which no stack survives; CPython itself refuses to
//! compile expressions nested about 3,000 deep. So a module nested deeper than [`MAX_DEPTH`]
//! (statements and expressions counted together) is reported (E1002) and not compiled.

use super::ast::{Expr, FStringPart, FunctionDef};
use super::ast::{ExprKind, Module, Stmt, StmtKind};
use crate::source::Span;

/// The deepest nesting of statements and expressions a module may have: far above what CPython
/// compiles, and well below what the compiler's stack holds (a level takes at most a few
/// kilobytes of its 1 GB).
pub const MAX_DEPTH: usize = 100_000;

#[derive(Clone, Copy)]
enum Node<'a> {
    Stmt(&'a Stmt),
    Expr(&'a Expr),
}

/// How deeply a module nests, as [`nesting`] measures it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Nesting {
    /// The deepest level reached (at most [`MAX_DEPTH`] + 1: the walk stops there).
    pub deepest: usize,
    /// The span of the first node nested deeper than [`MAX_DEPTH`] that the walk meets, if any.
    pub too_deep: Option<Span>,
}

impl Nesting {
    /// The nesting of a module whose statements are `self`'s and then `later`'s: what
    /// [`nesting`] finds on the whole, which walks later statements first.
    pub fn then(self, later: Nesting) -> Nesting {
        Nesting { deepest: self.deepest.max(later.deepest), too_deep: later.too_deep.or(self.too_deep) }
    }
}

/// How deeply `module` nests: its statements are level 1, what each node holds one level
/// deeper than the node. A recursive walk of the tree goes about as many calls deep.
pub fn nesting<'a>(module: &'a Module) -> Nesting {
    let mut stack: Vec<(Node<'a>, usize)> = module.body.iter().map(|s| (Node::Stmt(s), 1)).collect();
    let mut deepest = 0;
    while let Some((node, depth)) = stack.pop() {
        let span = match node {
            Node::Stmt(s) => s.span,
            Node::Expr(e) => e.span,
        };
        deepest = deepest.max(depth);
        if depth > MAX_DEPTH {
            return Nesting { deepest, too_deep: Some(span) };
        }
        let mut push = |n: Node<'a>| stack.push((n, depth + 1));
        match node {
            Node::Stmt(s) => {
                s.for_each_expr(&mut |e| push(Node::Expr(e)));
                if let StmtKind::FunctionDef(f) = &s.kind {
                    // The signature's expressions, which `for_each_expr` leaves out.
                    let params = f.params.iter().flat_map(|p| p.annotation.iter().chain(&p.default));
                    params.chain(&f.returns).for_each(|e| push(Node::Expr(e)));
                }
                s.for_each_block(&mut |b| b.iter().for_each(|s| push(Node::Stmt(s))));
            }
            Node::Expr(e) => e.for_each_child(&mut |c| push(Node::Expr(c))),
        }
    }
    Nesting { deepest, too_deep: None }
}

/// Drops a module node by node: dropping a tree too deep for the stack recursively would
/// overflow it.
pub fn dismantle(module: Module) {
    let mut stmts: Vec<Stmt> = module.body;
    let mut exprs: Vec<Expr> = Vec::new();
    let take_function = |f: FunctionDef, stmts: &mut Vec<Stmt>, exprs: &mut Vec<Expr>| {
        exprs.extend(f.decorators);
        exprs.extend(f.params.into_iter().flat_map(|p| p.annotation.into_iter().chain(p.default)));
        exprs.extend(f.returns);
        stmts.extend(f.body);
    };
    loop {
        if let Some(s) = stmts.pop() {
            match s.kind {
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => exprs.push(e),
                StmtKind::Assign { targets, value } => exprs.extend(targets.into_iter().chain([value])),
                StmtKind::Delete(targets) => exprs.extend(targets),
                StmtKind::Raise { exc, cause } => exprs.extend(exc.into_iter().chain(cause)),
                StmtKind::Assert { test, msg } => exprs.extend([test].into_iter().chain(msg)),
                StmtKind::AnnAssign { target, annotation, value } => {
                    exprs.extend([target, annotation].into_iter().chain(value));
                }
                StmtKind::AugAssign { target, value, .. } => exprs.extend([target, value]),
                StmtKind::If { test, body, orelse } | StmtKind::While { test, body, orelse } => {
                    exprs.push(test);
                    stmts.extend(body.into_iter().chain(orelse));
                }
                StmtKind::For { target, iter, body, orelse } => {
                    exprs.extend([target, iter]);
                    stmts.extend(body.into_iter().chain(orelse));
                }
                StmtKind::FunctionDef(f) => take_function(f, &mut stmts, &mut exprs),
                StmtKind::Return(None)
                | StmtKind::Pass
                | StmtKind::Break
                | StmtKind::Continue
                | StmtKind::Import(_)
                | StmtKind::ImportFrom { .. } => {}
            }
        } else if let Some(e) = exprs.pop() {
            match e.kind {
                ExprKind::Name(_)
                | ExprKind::Int(_)
                | ExprKind::Float(_)
                | ExprKind::Str(_)
                | ExprKind::Bool(_)
                | ExprKind::None
                | ExprKind::Ellipsis => {}
                ExprKind::Attribute { value, .. }
                | ExprKind::UnaryOp { operand: value, .. }
                | ExprKind::Starred(value) => exprs.push(*value),
                ExprKind::Call { func, args } => {
                    exprs.push(*func);
                    exprs.extend(args.into_iter().map(|a| a.value));
                }
                ExprKind::BinOp { left, right, .. } | ExprKind::Subscript { value: left, index: right } => {
                    exprs.extend([*left, *right]);
                }
                ExprKind::BoolOp { values: items, .. }
                | ExprKind::Tuple(items)
                | ExprKind::List(items)
                | ExprKind::Set(items) => exprs.extend(items),
                ExprKind::Compare { left, comparisons } => {
                    exprs.push(*left);
                    exprs.extend(comparisons.into_iter().map(|(_, c)| c));
                }
                ExprKind::Slice { lower, upper, step } => {
                    exprs.extend([lower, upper, step].into_iter().flatten().map(|b| *b));
                }
                ExprKind::Dict(pairs) => exprs.extend(pairs.into_iter().flat_map(|(k, v)| [k, v])),
                ExprKind::IfExp { test, body, orelse } => exprs.extend([*test, *body, *orelse]),
                ExprKind::FString(parts) => take_fields(parts, &mut exprs),
                ExprKind::Lambda { params, body } => {
                    exprs.extend(params.into_iter().flat_map(|p| p.annotation.into_iter().chain(p.default)));
                    exprs.push(*body);
                }
                ExprKind::Comprehension { element, value, generators, .. } => {
                    exprs.extend([*element].into_iter().chain(value.map(|v| *v)));
                    for g in generators {
                        exprs.extend([g.target, g.iter].into_iter().chain(g.ifs));
                    }
                }
            }
        } else {
            return;
        }
    }
}

/// The values of an f-string's replacement fields, format specs included (their nesting is
/// Python's, a few levels).
fn take_fields(parts: Vec<FStringPart>, exprs: &mut Vec<Expr>) {
    for part in parts {
        if let FStringPart::Field { value, spec, .. } = part {
            exprs.push(*value);
            take_fields(spec.unwrap_or_default(), exprs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Module {
        crate::syntax::parse(0, text).module.expect("valid syntax")
    }

    #[test]
    fn shallow_modules_pass() {
        let m = parse("def f(x):\n    if x:\n        return x + (x * -x)[0]\n    return [x, (x,)]\n");
        assert_eq!(nesting(&m).too_deep, None);
        dismantle(m);
    }

    #[test]
    fn lambdas_comprehensions_raise_and_assert_nest_their_parts() {
        // `assert` 1, the call 2, the lambda 3, its body (the comprehension) 4, its condition 5,
        // `y` 6.
        let m = parse("assert (lambda x=1: [y for y in x if -y])(), 'm'\n");
        assert_eq!(nesting(&m), Nesting { deepest: 6, too_deep: None });
        dismantle(m);
        // `raise` 1, the call 2, the generator 3, its iterable (the dict comprehension) 4, its
        // key 5.
        let m = parse("raise E(-y for y in {k: v for k in x}) from c\n");
        assert_eq!(nesting(&m), Nesting { deepest: 5, too_deep: None });
        dismantle(m);
    }

    /// Millions of nested lambdas: measured and dropped on the test thread's ordinary stack.
    #[test]
    fn lambdas_nested_millions_deep_are_too_deep_and_are_dropped_without_recursion() {
        let text = format!("y = {}x\n", "lambda: ".repeat(1_000_000));
        let m = parse(&text);
        assert!(nesting(&m).too_deep.is_some());
        dismantle(m);
    }

    /// Four million levels: measured and dropped on the test thread's ordinary stack.
    #[test]
    fn a_sum_of_millions_of_terms_is_too_deep_and_is_dropped_without_recursion() {
        let text = format!("y = x{}\n", " + x".repeat(4_000_000));
        let m = parse(&text);
        let span = nesting(&m).too_deep.expect("too deep");
        assert!((span.end as usize) < text.len());
        dismantle(m);
    }

    #[test]
    fn nesting_counts_statements_and_expressions_together() {
        // `def` 1, `if` 2, `return` 3, the sum 4, the subscript 5, the product 6, `-x` 7, `x` 8.
        let m = parse("def f(x):\n    if x:\n        return x + (x * -x)[0]\n    return x\n");
        assert_eq!(nesting(&m), Nesting { deepest: 8, too_deep: None });
        assert_eq!(nesting(&parse("")).deepest, 0);
        dismantle(m);
    }

    #[test]
    fn the_limit_is_exact() {
        // The statement is level 1, the sum's top level 2, its n-th nested level n + 1.
        let at = |terms: usize| {
            let m = parse(&format!("y = x{}\n", " + x".repeat(terms)));
            let found = nesting(&m).too_deep;
            dismantle(m);
            found
        };
        assert_eq!(at(MAX_DEPTH - 2), None);
        assert!(at(MAX_DEPTH - 1).is_some());
    }
}
