//! Calls between functions, in one module or across the modules of a compilation: arguments
//! against the callee's signature, and recursion, which ONNX functions cannot express (a
//! function body is expanded, not called).
//!
//! Functions are numbered across the compilation (see [`Global::Function`]); [`Callee`] is what
//! a call needs to know of the function it calls, whichever module defines it.

use crate::diagnostics::{codes, Diagnostic, Diagnostics, Reported};
use crate::onnx::{AttrType, MAX_CALL_DEPTH};
use crate::sema::env::{Global, ModuleEnv};
use crate::sema::resolve::resolve_dotted;
use crate::sema::signature::Signature;
use crate::source::{FileId, Span};
use crate::syntax::ast::*;
use std::collections::HashMap;

/// A function as its callers see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Callee {
    /// The name it is defined with: the call node's `op_type`, whatever name the caller uses.
    pub name: String,
    pub domain: String,
    /// The version of the callee's opset, at which the caller imports its domain: onnxscript
    /// takes the version of the `Opset` given to `@script(...)` (1 for `@script()`'s `this`).
    pub version: i64,
    pub params: Vec<CalleeParam>,
    /// How many outputs it has, when the source says (return annotation or final `return`).
    pub outputs: Option<usize>,
    /// Where it is defined, for labels in the same file.
    pub file: FileId,
    pub name_span: Span,
    pub kind: CalleeKind,
    /// It takes `*args` or `**kwargs`: Python binds more than its plain parameters.
    pub variadic: bool,
    /// Whether it runs only as Python, when the exporter calls a trace-only translation, and is
    /// never compiled into a function: trace-only translations, and the undecorated functions
    /// that only trace-time code calls (set by [`check_calls`]).
    pub python: bool,
    /// Whether another function of the compilation calls it (set by [`check_calls`]): an
    /// undecorated Python function nobody calls never runs.
    pub called: bool,
}

/// What a function's decorators make of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalleeKind {
    /// `@script(...)`, or a `@torch_op` translation: compiled into a function, which trace-time
    /// code calls as a node (as the exporter calls an `OnnxFunction`).
    Script,
    /// `@torch_op(..., traceable=True)`: compiled, but trace-time code runs it as Python.
    TraceableScript,
    /// `@torch_op(..., trace_only=True)`: Python, run for each call of the exporter.
    TraceOnly,
    /// No decorator: compiled when a script calls it (or nothing does), else a Python helper of
    /// trace-time code.
    Undecorated,
}

/// One parameter of a callee, in declaration order (inputs and attributes interleaved).
#[derive(Clone, Debug, PartialEq)]
pub struct CalleeParam {
    pub name: String,
    pub span: Span,
    /// The attribute type, for an attribute parameter; `None` for an input.
    pub attr: Option<AttrType>,
    pub has_default: bool,
    /// May be None: `Optional[...]`, or a default of `None`.
    pub optional: bool,
    /// The TypeVar annotating an input: onnxscript casts a literal argument (`CastLike`) to
    /// another argument of the same TypeVar.
    pub type_var: Option<String>,
}

impl Callee {
    /// The callee view of the function of signature `sig` (in file `file`), in `domain` at
    /// `version`.
    pub fn new(file: FileId, sig: &Signature, domain: String, version: i64, kind: CalleeKind) -> Callee {
        let f = sig.def;
        let params = sig
            .plain()
            .map(|p| CalleeParam {
                name: p.name().to_string(),
                span: p.def.name.span,
                attr: p.attr_kind().map(|k| k.onnx_type()),
                has_default: p.has_default(),
                optional: p.optional,
                type_var: p.type_var.clone(),
            })
            .collect();
        let declared = sig.declared_outputs();
        let returned = match f.body.last().map(|s| &s.kind) {
            Some(StmtKind::Return(Some(Expr { kind: ExprKind::Tuple(items), .. }))) => Some(items.len()),
            Some(StmtKind::Return(Some(_))) => Some(1),
            _ => None,
        };
        Callee {
            name: f.name.name.clone(),
            domain,
            version,
            params,
            outputs: declared.or(returned),
            file,
            name_span: f.name.span,
            kind,
            variadic: f.params.iter().any(|p| matches!(p.kind, ParamKind::VarArgs | ParamKind::KwArgs)),
            python: kind == CalleeKind::TraceOnly,
            called: false,
        }
    }

    /// Whether trace-time code calls it as a node of the compiled function, rather than running
    /// its Python.
    pub fn called_as_node(&self) -> bool {
        self.kind == CalleeKind::Script && !self.python
    }

    /// `name(a, b)`, for messages.
    pub fn signature(&self) -> String {
        let ps: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        format!("`{}({})`", self.name, ps.join(", "))
    }
}

/// The function id a call expression's callee names, if it names a function: `f` (a function
/// of the module or imported with `from mylib import f`) or `mylib.f` (`import mylib`).
pub fn callee_of(env: &ModuleEnv, func: &Expr) -> Option<usize> {
    match &func.kind {
        ExprKind::Name(n) => match env.names().get(n) {
            Some(Global::Function(id)) => Some(*id),
            _ => None,
        },
        ExprKind::Attribute { .. } => match resolve_dotted(env.names(), func) {
            Some(Global::Function(id)) => Some(id),
            _ => None,
        },
        _ => None,
    }
}

/// A call to a function: callee id and the call's spans.
struct Call<'a> {
    callee: usize,
    span: Span,
    func_span: Span,
    args: &'a [Arg],
}

/// The calls to functions in `e`; `shadowed` holds the names that enclosing lambdas and
/// comprehensions bind (`[f(x) for f in fs]` calls no global `f`).
fn calls_in_expr<'a>(env: &ModuleEnv, e: &'a Expr, shadowed: &mut Vec<&'a str>, out: &mut Vec<Call<'a>>) {
    if let ExprKind::Call { func, args } = &e.kind {
        let mut root = func.as_ref();
        while let ExprKind::Attribute { value, .. } = &root.kind {
            root = value;
        }
        let local = matches!(&root.kind, ExprKind::Name(n) if shadowed.contains(&n.as_str()));
        if let Some(callee) = callee_of(env, func).filter(|_| !local) {
            out.push(Call { callee, span: e.span, func_span: func.span, args });
        }
    }
    let own = e.scope_names();
    e.for_each_child_scoped(&mut |c, scoped| {
        let before = shadowed.len();
        if scoped {
            shadowed.extend(&own);
        }
        calls_in_expr(env, c, shadowed, out);
        shadowed.truncate(before);
    });
}

fn calls_in_stmts<'a>(env: &ModuleEnv, stmts: &'a [Stmt], out: &mut Vec<Call<'a>>) {
    for s in stmts {
        s.for_each_expr(&mut |e| calls_in_expr(env, e, &mut Vec::new(), out));
        s.for_each_block(&mut |b| calls_in_stmts(env, b, out));
    }
}

/// The functions of a compilation as their callers see them, and the calls between them that
/// were reported as not matching their callee's signature.
#[derive(Default)]
pub struct Calls {
    /// `callees[id]` describes the function with that id.
    pub callees: Vec<Callee>,
    /// `called_by[id]`: the ids of the functions whose bodies call function `id` (Python ones
    /// included), each once, in order.
    pub called_by: Vec<Vec<usize>>,
    /// The calls (by file and span) whose arguments do not bind, with the proof of the report.
    mismatched: HashMap<(FileId, Span), Reported>,
}

impl Calls {
    /// The proof that the call at `span` of `file` was reported as not binding, if it was.
    pub fn reported_mismatch(&self, file: FileId, span: Span) -> Option<Reported> {
        self.mismatched.get(&(file, span)).copied()
    }
}

/// The calls to other functions that one function's body makes, as [`calls_in`] found them.
pub struct FunctionCalls<'a> {
    calls: Vec<Call<'a>>,
}

/// The calls to functions in the body of `f`, with their callees as `env` resolves them. Each
/// function's walk is independent of the others', so a large module's run on several threads.
pub fn calls_in<'a>(env: &ModuleEnv, f: &'a FunctionDef) -> FunctionCalls<'a> {
    let mut calls = Vec::new();
    calls_in_stmts(env, &f.body, &mut calls);
    FunctionCalls { calls }
}

/// Checks every call between the functions of the compilation against its callee's signature,
/// and reports recursion, within a module or across modules. `callees[id]` describes the
/// function with that id; `found[m][k]` holds the calls of function `k` of module `envs[m]`.
///
/// It also decides which functions run only as Python at trace time ([`Callee::python`]), and
/// reports a compiled function that calls a trace-only translation (E0905): its nodes depend on
/// the exporter's call, which a compiled function does not have.
pub fn check_calls(
    envs: &[ModuleEnv],
    mut callees: Vec<Callee>,
    found: Vec<Vec<FunctionCalls>>,
    diags: &mut Diagnostics,
) -> Calls {
    // The calls of each function, by id, with the module it is in.
    let total = envs.iter().map(|e| e.first_function + e.functions.len()).max().unwrap_or(0);
    let mut calls: Vec<Vec<Call>> = (0..total).map(|_| Vec::new()).collect();
    let mut owner: Vec<Option<usize>> = vec![None; total];
    for (m, (env, module_calls)) in envs.iter().zip(found).enumerate() {
        for (k, FunctionCalls { calls: out }) in module_calls.into_iter().enumerate() {
            let id = env.first_function + k;
            if let Some(slot) = calls.get_mut(id) {
                *slot = out;
                owner[id] = Some(m);
            }
        }
    }
    mark_python(&mut callees, &calls);
    let mut called_by: Vec<Vec<usize>> = vec![Vec::new(); total];
    for (caller, out) in calls.iter().enumerate() {
        for c in out {
            if let Some(slot) = called_by.get_mut(c.callee).filter(|s| s.last() != Some(&caller)) {
                slot.push(caller);
            }
        }
    }
    let mut mismatched = HashMap::new();
    for (id, out) in calls.iter().enumerate() {
        let Some(env) = owner[id].and_then(|m| envs.get(m)) else { continue };
        let caller_is_python = callees.get(id).is_some_and(|c| c.python);
        for c in out {
            let Some(callee) = callees.get(c.callee) else { continue };
            if !caller_is_python && callee.kind == CalleeKind::TraceOnly {
                let caller = callees.get(id).map(|c| c.name.as_str()).unwrap_or("?");
                let d = script_calls_trace_only(env.file, caller, callee, c);
                mismatched.insert((env.file, c.span), diags.push_error(d));
                continue;
            }
            if callee.python && callee.variadic {
                continue;
            }
            if let Err(d) = bind_arguments(callee, env.file, c.span, c.args) {
                mismatched.insert((env.file, c.span), diags.push_error(*d));
            }
        }
    }
    // Python may recurse (within the trace's limits); a compiled function may not.
    for (id, out) in calls.iter_mut().enumerate() {
        if callees.get(id).is_some_and(|c| c.python) {
            out.clear();
        }
        out.retain(|c| callees.get(c.callee).is_some_and(|c| !c.python));
    }
    if !report_cycles(envs, &owner, &calls, &callees, diags) {
        report_deep_chain(envs, &owner, &calls, &callees, diags);
    }
    Calls { callees, called_by, mismatched }
}

/// Which functions run only as Python: trace-only translations, and the undecorated functions
/// that no compiled function calls (through undecorated ones). An undecorated function that
/// nothing calls is compiled, as a script (onnxsc's convention), unless its module has
/// trace-only translations: then the module is Python, as torchlib's are, and its undecorated
/// functions are its helpers and stubs.
fn mark_python(callees: &mut [Callee], calls: &[Vec<Call>]) {
    let n = callees.len().min(calls.len());
    let mut called = vec![false; n];
    for c in calls.iter().flatten() {
        if let Some(slot) = called.get_mut(c.callee) {
            *slot = true;
        }
    }
    let traced_files: std::collections::HashSet<FileId> =
        callees.iter().filter(|c| c.kind == CalleeKind::TraceOnly).map(|c| c.file).collect();
    let mut stack: Vec<usize> = (0..n)
        .filter(|&id| match callees[id].kind {
            CalleeKind::Script | CalleeKind::TraceableScript => true,
            CalleeKind::Undecorated => !called[id] && !traced_files.contains(&callees[id].file),
            CalleeKind::TraceOnly => false,
        })
        .collect();
    let mut compiled = vec![false; n];
    for &id in &stack {
        compiled[id] = true;
    }
    while let Some(id) = stack.pop() {
        for c in &calls[id] {
            if c.callee < n && !compiled[c.callee] && callees[c.callee].kind == CalleeKind::Undecorated {
                compiled[c.callee] = true;
                stack.push(c.callee);
            }
        }
    }
    for (id, callee) in callees.iter_mut().enumerate().take(n) {
        callee.called = called[id];
        callee.python =
            callee.kind == CalleeKind::TraceOnly || (callee.kind == CalleeKind::Undecorated && !compiled[id]);
    }
}

/// E0905: a compiled function calls a trace-only translation.
fn script_calls_trace_only(file: FileId, caller: &str, callee: &Callee, call: &Call) -> Diagnostic {
    let mut d = Diagnostic::error(
        codes::SCRIPT_CALLS_TRACE_ONLY,
        file,
        format!("`{caller}` is compiled into a function, but `{}` is trace-only", callee.name),
    )
    .primary(call.func_span, "a trace-only translation, called from a script");
    if callee.file == file {
        d = d.secondary(callee.name_span, "trace-only: its nodes depend on each exporter call");
    }
    d.help(format!(
        "make `{caller}` trace-only too (`@torch_op(..., trace_only=True)`), or call a script version of `{}`",
        callee.name
    ))
}

/// Python's binding of arguments to parameters, as onnxscript applies it to a function's
/// signature: positional arguments fill the parameters in order, keywords by name. For each
/// parameter, the argument it receives; `Err` is what does not bind (E0409), in file `file`.
pub fn bind_arguments<'a>(
    callee: &Callee,
    file: FileId,
    call_span: Span,
    args: &'a [Arg],
) -> Result<Vec<Option<&'a Arg>>, Box<Diagnostic>> {
    let same_file = callee.file == file;
    let params = &callee.params;
    let name = &callee.name;
    let defined_here = |d: Diagnostic| if same_file { d.secondary(callee.name_span, "defined here") } else { d };
    let positional: Vec<&Arg> = args.iter().filter(|a| a.keyword.is_none() && a.kind == ArgKind::Plain).collect();
    if positional.len() > params.len() {
        let extra = positional[params.len()];
        let d = Diagnostic::error(
            codes::FUNCTION_CALL_ARGUMENTS,
            file,
            format!(
                "`{name}` takes {} argument{}, but {} were given",
                params.len(),
                if params.len() == 1 { "" } else { "s" },
                positional.len()
            ),
        )
        .primary(extra.span, "unexpected argument");
        return Err(Box::new(defined_here(d).help(format!("its signature is {}", callee.signature()))));
    }
    let mut bound: Vec<Option<&Arg>> = vec![None; params.len()];
    for (slot, a) in bound.iter_mut().zip(&positional) {
        *slot = Some(a);
    }
    for a in args.iter().filter(|a| a.keyword.is_some()) {
        let Some(k) = a.keyword.as_ref() else { continue };
        match params.iter().position(|p| p.name == k.name) {
            Some(i) if bound[i].is_some() && i < positional.len() => {
                let d = Diagnostic::error(
                    codes::FUNCTION_CALL_ARGUMENTS,
                    file,
                    format!("`{name}` is given `{}` twice", k.name),
                )
                .primary(k.span, "given again by keyword")
                .secondary(positional[i].span, "given here by position");
                return Err(Box::new(d.help(format!("its signature is {}", callee.signature()))));
            }
            Some(i) => bound[i] = Some(a),
            None => {
                let mut d = Diagnostic::error(
                    codes::FUNCTION_CALL_ARGUMENTS,
                    file,
                    format!("`{name}` has no parameter `{}`", k.name),
                )
                .primary(k.span, "unknown keyword");
                d = defined_here(d);
                d = match crate::diagnostics::suggest::did_you_mean(&k.name, params.iter().map(|p| p.name.as_str())) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(format!("its signature is {}", callee.signature())),
                };
                return Err(Box::new(d));
            }
        }
    }
    for (p, a) in params.iter().zip(&bound) {
        if a.is_some() || p.has_default {
            continue;
        }
        let what = if p.attr.is_some() { "attribute" } else { "input" };
        let mut d = Diagnostic::error(
            codes::FUNCTION_CALL_ARGUMENTS,
            file,
            format!("call to `{name}` is missing its {what} `{}`", p.name),
        )
        .primary(call_span, format!("`{}` not given", p.name));
        if same_file {
            d = d.secondary(p.span, "declared here");
        }
        return Err(Box::new(d.help(format!("its signature is {}", callee.signature()))));
    }
    Ok(bound)
}

/// Finds each cycle in the call graph once and reports it at the call that closes it.
/// Reports every cycle of calls among compiled functions; whether there was one.
fn report_cycles(
    envs: &[ModuleEnv],
    owner: &[Option<usize>],
    calls: &[Vec<Call>],
    callees: &[Callee],
    diags: &mut Diagnostics,
) -> bool {
    let before = diags.error_count();
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Active,
        Done,
    }
    let n = calls.len();
    let mut state = vec![State::New; n];
    let name = |id: usize| callees.get(id).map(|c| c.name.as_str()).unwrap_or("?");
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
            if c.callee >= n {
                continue;
            }
            match state[c.callee] {
                State::New => {
                    state[c.callee] = State::Active;
                    stack.push((c.callee, 0));
                }
                State::Active => {
                    let start = stack.iter().position(|(g, _)| *g == c.callee).unwrap_or(0);
                    let cycle: Vec<&str> = stack[start..].iter().map(|(g, _)| name(*g)).collect();
                    if let Some(env) = owner[f].and_then(|m| envs.get(m)) {
                        diags.push(cycle_diagnostic(env.file, &cycle, name(c.callee), c));
                    }
                }
                State::Done => {}
            }
        }
    }
    diags.error_count() > before
}

/// E0811: compiled functions that call each other more than [`MAX_CALL_DEPTH`] deep, which
/// onnx.checker and ONNX Runtime refuse in a library; located at the call on the deepest chain
/// that makes it one function too deep. The calls form no cycle ([`report_cycles`] said so).
fn report_deep_chain(
    envs: &[ModuleEnv],
    owner: &[Option<usize>],
    calls: &[Vec<Call>],
    callees: &[Callee],
    diags: &mut Diagnostics,
) {
    let n = calls.len();
    // Per function: the functions on the longest chain it starts (itself counted), and the
    // call that goes on along it. Iterative: a chain may be thousands of modules long.
    let mut depth: Vec<Option<(usize, Option<usize>)>> = vec![None; n];
    for root in 0..n {
        let mut stack = vec![root];
        while let Some(&f) = stack.last() {
            if depth[f].is_some() {
                stack.pop();
                continue;
            }
            let pending: Vec<usize> =
                calls[f].iter().map(|c| c.callee).filter(|&c| c < n && depth[c].is_none()).collect();
            if pending.is_empty() {
                let best = calls[f]
                    .iter()
                    .enumerate()
                    .filter_map(|(k, c)| depth.get(c.callee).copied().flatten().map(|(d, _)| (d, k)))
                    .max_by_key(|&(d, k)| (d, std::cmp::Reverse(k)));
                depth[f] = Some(best.map_or((1, None), |(d, k)| (d + 1, Some(k))));
                stack.pop();
            } else {
                stack.extend(pending);
            }
        }
    }
    let deepest = (0..n).filter_map(|f| depth[f].map(|(d, _)| (d, f))).max_by_key(|&(d, f)| (d, std::cmp::Reverse(f)));
    let Some((total, first)) = deepest.filter(|&(d, _)| d > MAX_CALL_DEPTH) else { return };
    // Walk the chain to the call from its MAX_CALL_DEPTH-th function to the next.
    let mut chain = vec![first];
    let mut f = first;
    while let Some((_, Some(k))) = depth[f] {
        let call = &calls[f][k];
        if chain.len() == MAX_CALL_DEPTH {
            let Some(env) = owner[f].and_then(|m| envs.get(m)) else { return };
            let name = |id: usize| callees.get(id).map(|c| format!("`{}`", c.name)).unwrap_or_default();
            let d = Diagnostic::error(
                codes::CALL_CHAIN_TOO_DEEP,
                env.file,
                format!(
                    "functions call each other {total} deep, more than the {MAX_CALL_DEPTH} onnx.checker and ONNX Runtime accept"
                ),
            )
            .primary(call.func_span, format!("the call {} deep: {} calls {}", MAX_CALL_DEPTH + 1, name(f), name(call.callee)))
            .note(format!("the chain starts at {}", name(first)))
            .help(format!(
                "call fewer functions one inside another (at most {MAX_CALL_DEPTH}): let a caller call the functions of a chain side by side, or write a helper's nodes into its caller"
            ));
            diags.push(d);
            return;
        }
        chain.push(call.callee);
        f = call.callee;
    }
}

fn cycle_diagnostic(file: FileId, cycle: &[&str], callee: &str, closing: &Call) -> Diagnostic {
    let (message, label) = if cycle.len() == 1 {
        (format!("function `{callee}` calls itself"), "recursive call".to_string())
    } else {
        let mut path: Vec<String> = cycle.iter().map(|f| format!("`{f}`")).collect();
        path.push(format!("`{callee}`"));
        (
            format!("functions call each other in a cycle: {}", path.join(" → ")),
            format!("closes the cycle back to `{callee}`"),
        )
    };
    Diagnostic::error(codes::RECURSION, file, message).primary(closing.func_span, label).help(
        "ONNX functions are expanded where they are called, so they cannot recurse; use `op.Loop` or a `for` loop",
    )
}
