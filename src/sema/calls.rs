//! Calls between the functions of a module: arguments against the callee's signature, and
//! recursion, which ONNX functions cannot express (a function body is expanded, not called).

use crate::diagnostics::{codes, Diagnostic, Diagnostics};
use crate::sema::env::{self, Global, ModuleEnv};
use crate::sema::types::ParamType;
use crate::source::Span;
use crate::syntax::ast::*;

/// A call to a function of the module: callee index and the call's spans.
struct Call<'a> {
    callee: usize,
    span: Span,
    func_span: Span,
    args: &'a [Arg],
}

fn calls_in_expr<'a>(env: &ModuleEnv, e: &'a Expr, out: &mut Vec<Call<'a>>) {
    if let ExprKind::Call { func, args } = &e.kind {
        if let ExprKind::Name(n) = &func.kind {
            if let Some(Global::Function(idx)) = env.get(n) {
                out.push(Call { callee: *idx, span: e.span, func_span: func.span, args });
            }
        }
    }
    e.for_each_child(&mut |c| calls_in_expr(env, c, out));
}

fn calls_in_stmts<'a>(env: &ModuleEnv, stmts: &'a [Stmt], out: &mut Vec<Call<'a>>) {
    for s in stmts {
        s.for_each_expr(&mut |e| calls_in_expr(env, e, out));
        s.for_each_block(&mut |b| calls_in_stmts(env, b, out));
    }
}

/// Checks every call between the module's functions, and reports recursion.
pub fn check_module(env: &ModuleEnv, diags: &mut Diagnostics) {
    let calls: Vec<Vec<Call>> = env
        .functions
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            calls_in_stmts(env, &f.body, &mut out);
            out
        })
        .collect();
    for (caller, cs) in calls.iter().enumerate() {
        for c in cs {
            check_arguments(env, env.functions[caller], env.functions[c.callee], c, diags);
        }
    }
    report_cycles(env, &calls, diags);
}

fn check_arguments(env: &ModuleEnv, _caller: &FunctionDef, callee: &FunctionDef, call: &Call, diags: &mut Diagnostics) {
    let file = env.file;
    let params: Vec<&Param> = callee.params.iter().filter(|p| p.kind == ParamKind::Normal).collect();
    let name = &callee.name.name;
    let positional: Vec<&Arg> = call.args.iter().filter(|a| a.keyword.is_none() && a.kind == ArgKind::Plain).collect();
    let signature = || {
        let ps: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
        format!("`{name}({})`", ps.join(", "))
    };
    if positional.len() > params.len() {
        let extra = positional[params.len()];
        diags.push(
            Diagnostic::error(codes::FUNCTION_CALL_ARGUMENTS, file, format!("`{name}` takes {} argument{}, but {} were given", params.len(), if params.len() == 1 { "" } else { "s" }, positional.len()))
                .primary(extra.span, "unexpected argument")
                .secondary(callee.name.span, "defined here")
                .help(format!("its signature is {}", signature())),
        );
        return;
    }
    let mut given: Vec<bool> = vec![false; params.len()];
    for g in given.iter_mut().take(positional.len()) {
        *g = true;
    }
    for a in call.args.iter().filter(|a| a.keyword.is_some()) {
        let k = a.keyword.as_ref().expect("filtered");
        match params.iter().position(|p| p.name.name == k.name) {
            Some(i) => given[i] = true,
            None => {
                let mut d = Diagnostic::error(codes::FUNCTION_CALL_ARGUMENTS, file, format!("`{name}` has no parameter `{}`", k.name))
                    .primary(k.span, "unknown keyword")
                    .secondary(callee.name.span, "defined here");
                d = match crate::lower::function::did_you_mean(&k.name, params.iter().map(|p| p.name.name.as_str())) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(format!("its signature is {}", signature())),
                };
                diags.push(d);
                return;
            }
        }
    }
    for (i, p) in params.iter().enumerate() {
        if given[i] || p.default.is_some() {
            continue;
        }
        let is_attr = p.annotation.as_ref().is_some_and(|a| matches!(env::param_type(env, a), Ok(ParamType::Attr { .. })));
        let what = if is_attr { "attribute" } else { "input" };
        diags.push(
            Diagnostic::error(codes::FUNCTION_CALL_ARGUMENTS, file, format!("call to `{name}` is missing its {what} `{}`", p.name.name))
                .primary(call.span, format!("`{}` not given", p.name.name))
                .secondary(p.name.span, "declared here")
                .help(format!("its signature is {}", signature())),
        );
        return;
    }
}

/// Finds each cycle in the call graph once and reports it at the call that closes it.
fn report_cycles(env: &ModuleEnv, calls: &[Vec<Call>], diags: &mut Diagnostics) {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Active,
        Done,
    }
    let n = calls.len();
    let mut state = vec![State::New; n];
    // Iterative depth-first search: (function, index of the next call to follow).
    for root in 0..n {
        if state[root] != State::New {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = State::Active;
        while let Some(&mut (f, ref mut next)) = stack.last_mut() {
            let Some(c) = calls[f].get(*next) else {
                state[f] = State::Done;
                stack.pop();
                continue;
            };
            *next += 1;
            match state[c.callee] {
                State::New => {
                    state[c.callee] = State::Active;
                    stack.push((c.callee, 0));
                }
                State::Active => {
                    let start = stack.iter().position(|(g, _)| *g == c.callee).unwrap_or(0);
                    let cycle: Vec<&str> = stack[start..].iter().map(|(g, _)| env.functions[*g].name.name.as_str()).collect();
                    diags.push(cycle_diagnostic(env, &cycle, c));
                }
                State::Done => {}
            }
        }
    }
}

fn cycle_diagnostic(env: &ModuleEnv, cycle: &[&str], closing: &Call) -> Diagnostic {
    let callee = env.functions[closing.callee].name.name.as_str();
    let (message, label) = if cycle.len() == 1 {
        (format!("function `{callee}` calls itself"), "recursive call".to_string())
    } else {
        let mut path: Vec<String> = cycle.iter().map(|f| format!("`{f}`")).collect();
        path.push(format!("`{callee}`"));
        (format!("functions call each other in a cycle: {}", path.join(" → ")), format!("closes the cycle back to `{callee}`"))
    };
    Diagnostic::error(codes::RECURSION, env.file, message)
        .primary(closing.func_span, label)
        .help("ONNX functions are expanded where they are called, so they cannot recurse; use `op.Loop` or a `for` loop")
}
