//! Which variables are live after each `if`, and which an `if` assigns, in source order.
//!
//! This mirrors onnxscript's own analysis (so that the same variables become `If` outputs), but
//! keeps the order of first assignment so that output is deterministic.

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
        ExprKind::Tuple(items) | ExprKind::List(items) | ExprKind::Set(items) => items.iter().for_each(|v| used_vars(v, out)),
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
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::Bool(_) | ExprKind::None | ExprKind::Ellipsis => {}
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

/// The variables live after each `if` statement, keyed by the statement's span start.
pub fn live_out_of_ifs(body: &[Stmt], is_static: &dyn Fn(&Stmt) -> Option<bool>) -> HashMap<u32, Live> {
    let mut map = HashMap::new();
    block(body, Live::new(), is_static, &mut map);
    map
}

fn block(stmts: &[Stmt], mut live: Live, is_static: &dyn Fn(&Stmt) -> Option<bool>, map: &mut HashMap<u32, Live>) -> Live {
    for s in stmts.iter().rev() {
        live = stmt(s, live, is_static, map);
    }
    live
}

fn stmt(s: &Stmt, live_out: Live, is_static: &dyn Fn(&Stmt) -> Option<bool>, map: &mut HashMap<u32, Live>) -> Live {
    match &s.kind {
        StmtKind::Assign { targets, value } => {
            let mut live = live_out;
            let mut names = Vec::new();
            targets.iter().for_each(|t| target_names(t, &mut names));
            for n in names {
                live.remove(&n);
            }
            used_vars(value, &mut live);
            live
        }
        StmtKind::AnnAssign { target, value, .. } => {
            let mut live = live_out;
            let mut names = Vec::new();
            target_names(target, &mut names);
            for n in names {
                live.remove(&n);
            }
            if let Some(v) = value {
                used_vars(v, &mut live);
            }
            live
        }
        StmtKind::AugAssign { target, value, .. } => {
            let mut live = live_out;
            used_vars(target, &mut live);
            used_vars(value, &mut live);
            live
        }
        StmtKind::Return(v) => {
            let mut live = Live::new();
            if let Some(v) = v {
                used_vars(v, &mut live);
            }
            live
        }
        StmtKind::If { test, body, orelse } => {
            map.insert(s.span.start, live_out.clone());
            match is_static(s) {
                Some(true) => block(body, live_out, is_static, map),
                Some(false) => block(orelse, live_out, is_static, map),
                None => {
                    let mut live = block(body, live_out.clone(), is_static, map);
                    live.extend(block(orelse, live_out, is_static, map));
                    used_vars(test, &mut live);
                    live
                }
            }
        }
        StmtKind::For { target, iter, body, .. } => {
            let mut loop_vars = Vec::new();
            target_names(target, &mut loop_vars);
            let mut prev: Option<Live> = None;
            let mut curr = live_out;
            while prev.as_ref() != Some(&curr) {
                prev = Some(curr.clone());
                let mut next = block(body, curr.clone(), is_static, map);
                for v in &loop_vars {
                    next.remove(v);
                }
                curr = next;
            }
            used_vars(iter, &mut curr);
            curr
        }
        StmtKind::While { test, body, .. } => {
            let mut cond = Live::new();
            used_vars(test, &mut cond);
            let mut prev: Option<Live> = None;
            let mut curr: Live = live_out.union(&cond).cloned().collect();
            while prev.as_ref() != Some(&curr) {
                prev = Some(curr.clone());
                let next = block(body, curr.clone(), is_static, map);
                curr = next.union(&cond).cloned().collect();
            }
            curr
        }
        StmtKind::Expr(e) => {
            let mut live = live_out;
            used_vars(e, &mut live);
            live
        }
        _ => live_out,
    }
}
