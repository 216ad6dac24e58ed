//! Building a module's environment ([`ModuleEnv`]) from its module-level statements: imports
//! (`sema::imports`), `Opset(...)` and `TypeVar(...)` declarations, constants (evaluated by
//! `sema::eval`), functions and `torch.library.define` declarations; anything else at
//! module level is an error.

use super::annotations::tensor_types;
use super::env::{
    function_defs, module_statements, ConstReports, CustomOpDecl, Global, ModuleEnv, Names, Opset, SharedNamespaces,
};
use super::eval::{eval_const, eval_global, ConstError};
use super::imports::{import_modules, import_names, ImportContext, ModuleLookup};
use super::resolve::resolve_dotted;
use super::value::PyValue;
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Reported};
use crate::source::{FileId, Span};
use crate::syntax::ast::*;

/// Builds the environment of a module compiled on its own: imports of other `.onnxs` modules
/// are not resolved (they are opaque).
pub fn build<'m>(file: FileId, module: &'m Module, diags: &mut Diagnostics) -> ModuleEnv<'m> {
    let linked = SharedNamespaces::default();
    let ctx = ImportContext {
        first_function: 0,
        resolve: &|_, _| ModuleLookup::External,
        modules: &[],
        keys: &[],
        linked: &linked,
    };
    build_in(file, module, &ctx, diags)
}

/// Builds the environment of a module, reporting module-level statements outside the language;
/// `ctx` resolves its imports of other `.onnxs` modules.
pub fn build_in<'m>(file: FileId, module: &'m Module, ctx: &ImportContext, diags: &mut Diagnostics) -> ModuleEnv<'m> {
    let mut env = ModuleEnv::empty(file, module, ctx.first_function, ctx.linked.clone());
    // What reading the module-level statements reports; a walk over the functions starts here.
    let mut reports = ConstReports::default();
    // By address: a redefinition is another `def` of the same name.
    let accepted: foldhash::HashSet<*const FunctionDef> =
        function_defs(module).into_iter().map(|f| f as *const _).collect();
    for stmt in module_statements(module) {
        match &stmt.kind {
            StmtKind::Import(aliases) => import_modules(&mut env, ctx, aliases, diags),
            StmtKind::ImportFrom { level, module: m, names, star } => {
                import_names(&mut env, ctx, stmt.span, *level, m, names, *star, diags);
            }
            // `A = B = value` binds each name to the same value.
            StmtKind::Assign { targets, value } if targets.len() > 1 => {
                let names: Option<Vec<Ident>> = targets
                    .iter()
                    .map(|t| match &t.kind {
                        ExprKind::Name(name) => Some(Ident { name: name.clone(), span: t.span }),
                        _ => None,
                    })
                    .collect();
                let Some(names) = names else {
                    diags.push(module_stmt_error(file, stmt.span));
                    continue;
                };
                let g = global_from_assignment(&env, value, &mut reports, diags).unwrap_or_else(Global::Poison);
                for ident in &names {
                    env.define(ident, g.clone());
                }
            }
            StmtKind::Assign { targets, value } if targets.len() == 1 => {
                if let ExprKind::Tuple(names) | ExprKind::List(names) = &targets[0].kind {
                    // `LOW, HIGH = -1.0, 1.0`: constants unpacked from a sequence of values.
                    unpack_constants(&mut env, names, value, stmt.span, &mut reports, diags);
                    continue;
                }
                let ExprKind::Name(name) = &targets[0].kind else {
                    diags.push(module_stmt_error(file, stmt.span));
                    continue;
                };
                let ident = Ident { name: name.clone(), span: targets[0].span };
                let g = global_from_assignment(&env, value, &mut reports, diags).unwrap_or_else(Global::Poison);
                env.define(&ident, g);
            }
            StmtKind::AnnAssign { target, value: Some(value), .. } => {
                if let ExprKind::Name(name) = &target.kind {
                    let ident = Ident { name: name.clone(), span: target.span };
                    let g = global_from_assignment(&env, value, &mut reports, diags).unwrap_or_else(Global::Poison);
                    env.define(&ident, g);
                } else {
                    diags.push(module_stmt_error(file, stmt.span));
                }
            }
            StmtKind::FunctionDef(f) => {
                // A `def` that redefines one of the module's functions (an imported function
                // may be shadowed, as in Python).
                if !accepted.contains(&(f as *const FunctionDef)) {
                    let mut d = Diagnostic::error(
                        codes::DUPLICATE_FUNCTION,
                        file,
                        format!("function `{}` is defined twice", f.name.name),
                    )
                    .primary(f.name.span, "defined again here")
                    .help("rename one of the functions");
                    if let Some(prev) = env.globals.get(&f.name.name) {
                        d = d.secondary(prev.span, "first defined here");
                    }
                    diags.push(d);
                    continue;
                }
                let id = env.first_function + env.functions.len();
                env.functions.push(f);
                env.define(&f.name, Global::Function(id));
            }
            // A module docstring, or a bare string used as a comment.
            StmtKind::Expr(Expr { kind: ExprKind::Str(_), .. }) => {}
            StmtKind::Expr(e) if is_library_define(env.names(), e) => {
                if let Some(decl) = custom_op_declaration(file, e, diags) {
                    env.custom_ops.push(decl);
                }
            }
            StmtKind::Pass => {}
            StmtKind::If { .. } => diags.push(module_if_error(file, stmt)),
            _ => diags.push(module_stmt_error(file, stmt.span)),
        }
    }
    env.reported_while_built = reports;
    env
}

/// `torch.library.define(...)`, with or without `import torch`.
fn is_library_define(names: Names, e: &Expr) -> bool {
    let ExprKind::Call { func, .. } = &e.kind else { return false };
    let mut parts = Vec::new();
    let mut cur = func.as_ref();
    while let ExprKind::Attribute { value, attr } = &cur.kind {
        parts.push(attr.name.as_str());
        cur = value;
    }
    let ExprKind::Name(root) = &cur.kind else { return false };
    parts.push(root);
    parts.reverse();
    match parts.as_slice() {
        ["torch", "library", "define"] => {
            matches!(names.get("torch"), None | Some(Global::Module(_) | Global::Opaque(_)))
        }
        ["library", "define"] => matches!(names.get("library"), Some(Global::Opaque(m)) if m == "torch.library"),
        _ => false,
    }
}

fn custom_op_declaration(file: FileId, e: &Expr, diags: &mut Diagnostics) -> Option<CustomOpDecl> {
    let ExprKind::Call { args, .. } = &e.kind else { return None };
    let positional: Vec<&Arg> = args.iter().filter(|a| a.keyword.is_none()).collect();
    let keyword = |name: &str| args.iter().find(|a| a.keyword.as_ref().is_some_and(|k| k.name == name));
    let qualname = positional.first().map(|a| &a.value).or(keyword("qualname").map(|a| &a.value));
    let schema = positional.get(1).map(|a| &a.value).or(keyword("schema").map(|a| &a.value));
    let bad = |span: Span, label: &str| {
        Diagnostic::error(
            codes::BAD_CUSTOM_SCHEMA,
            file,
            "`torch.library.define` needs the operator's name and schema as strings",
        )
        .primary(span, label)
        .help("write `torch.library.define(\"mylibrary::my_op\", \"(Tensor x) -> Tensor\")`")
    };
    let (Some(q), Some(sch)) = (qualname, schema) else {
        diags.push(bad(e.span, "missing the name or the schema"));
        return None;
    };
    let (ExprKind::Str(qtext), ExprKind::Str(stext)) = (&q.kind, &sch.kind) else {
        let which = if matches!(q.kind, ExprKind::Str(_)) { sch } else { q };
        diags.push(bad(which.span, "not a string literal"));
        return None;
    };
    if !qtext.contains("::") {
        diags.push(
            Diagnostic::error(
                codes::BAD_CUSTOM_SCHEMA,
                file,
                format!("custom operator name `{qtext}` has no namespace"),
            )
            .primary(q.span, "expected `namespace::name`")
            .help(format!("write it as `mylibrary::{qtext}`, as `torch.library.custom_op` does")),
        );
        return None;
    }
    Some(CustomOpDecl {
        qualname: qtext.clone(),
        qualname_span: q.span,
        schema: stext.clone(),
        schema_span: sch.span,
        schema_is_verbatim: (sch.span.end - sch.span.start) as usize == stext.len() + 2,
    })
}

fn module_stmt_error(file: FileId, span: Span) -> Diagnostic {
    Diagnostic::error(codes::UNSUPPORTED_MODULE_STMT, file, "this statement is not allowed at module level")
        .primary(span, "not an import, opset declaration, type variable, constant or function")
        .help("module-level code may only import, declare `Opset`s, `TypeVar`s and constants, and define functions")
}

/// A module-level `if` onnxsc does not decide (it decides torchlib's tests of a pinned tool's
/// version, `env::decided_branch`): Python decides it when it imports the module, onnxsc does
/// not, so the functions defined in its branches are not compiled. The rest of the module is.
fn module_if_error(file: FileId, stmt: &Stmt) -> Diagnostic {
    let mut defined: Vec<&str> = Vec::new();
    let mut blocks = vec![std::slice::from_ref(stmt)];
    while let Some(block) = blocks.pop() {
        for s in block {
            match &s.kind {
                StmtKind::FunctionDef(f) if !defined.contains(&f.name.name.as_str()) => defined.push(&f.name.name),
                StmtKind::If { .. } => s.for_each_block(&mut |b| blocks.push(b)),
                _ => {}
            }
        }
    }
    let help = match defined.as_slice() {
        [] => "module-level code may only import, declare `Opset`s, `TypeVar`s and constants, and define functions: move the statements out of the `if`".to_string(),
        names => format!(
            "the functions defined in it are not compiled ({}): define each once at module level, or each version in a module of its own",
            names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
        ),
    };
    Diagnostic::error(codes::UNSUPPORTED_MODULE_STMT, file, "onnxsc does not decide a module-level `if`")
        .primary(stmt.span, "decided only when Python imports the module")
        .help(help)
}

/// `A, B = value` at module level: each name a constant from the evaluated sequence.
fn unpack_constants(
    env: &mut ModuleEnv,
    names: &[Expr],
    value: &Expr,
    span: Span,
    reports: &mut ConstReports,
    diags: &mut Diagnostics,
) {
    let idents: Option<Vec<Ident>> = names
        .iter()
        .map(|n| match &n.kind {
            ExprKind::Name(name) => Some(Ident { name: name.clone(), span: n.span }),
            _ => None,
        })
        .collect();
    let Some(idents) = idents else {
        diags.push(module_stmt_error(env.file, span));
        return;
    };
    let values = match global_from_assignment(env, value, reports, diags) {
        Ok(Global::Const(v)) => match v.items().map(|items| items.to_vec()) {
            Some(items) if items.len() == idents.len() => Ok(items),
            Some(items) => Err(diags.push_error(
                Diagnostic::error(
                    codes::CONSTANT_ERROR,
                    env.file,
                    format!(
                        "this constant raises `ValueError` in Python: {} values to unpack into {} names",
                        items.len(),
                        idents.len()
                    ),
                )
                .primary(value.span, format!("{} values", items.len()))
                .help("unpack as many names as the sequence has values"),
            )),
            None => Err(diags.push_error(
                Diagnostic::error(
                    codes::CONSTANT_ERROR,
                    env.file,
                    format!("this constant raises `TypeError` in Python: cannot unpack a {}", v.type_name()),
                )
                .primary(value.span, "not a sequence"),
            )),
        },
        Ok(Global::Deferred(d)) => {
            for ident in &idents {
                env.define(ident, Global::Deferred(d.clone()));
            }
            return;
        }
        Ok(_) => Err(diags.push_error(module_stmt_error(env.file, span))),
        Err(r) => Err(r),
    };
    match values {
        Ok(values) => {
            for (ident, v) in idents.iter().zip(values) {
                env.define(ident, Global::Const(v));
            }
        }
        Err(r) => {
            for ident in &idents {
                env.define(ident, Global::Poison(r));
            }
        }
    }
}

/// The meaning of `NAME = value` at module level.
fn global_from_assignment(
    env: &ModuleEnv,
    value: &Expr,
    reports: &mut ConstReports,
    diags: &mut Diagnostics,
) -> Result<Global, Reported> {
    let names = env.names();
    let file = env.file;
    if let ExprKind::Call { func, args } = &value.kind {
        match resolve_dotted(names, func) {
            Some(Global::OpsetClass) => return opset_declaration(env, value.span, args, diags).map(Global::Opset),
            Some(Global::Typing(t)) if t == "TypeVar" => return type_var(env, value.span, args, diags),
            _ => {}
        }
    }
    let is_union = match &value.kind {
        ExprKind::Subscript { value: head, .. } => {
            matches!(resolve_dotted(names, head), Some(Global::Typing(t)) if t == "Union")
        }
        ExprKind::BinOp { op: BinOp::BitOr, .. } => true,
        _ => false,
    };
    if is_union {
        if let Some(mut types) = tensor_types(names, value) {
            types.sort();
            types.dedup();
            return Ok(Global::TypeUnion(types));
        }
    }
    if let Some(g) = resolve_dotted(names, value) {
        // An alias such as `op = opset18` or `F = FLOAT`.
        if !matches!(g, Global::Function(_)) {
            return Ok(g);
        }
    }
    let error = match eval_global(names, value) {
        Ok(g) => return Ok(g),
        Err(ConstError::NotConstant(span)) => return Err(diags.push_error(
            Diagnostic::error(codes::UNSUPPORTED_MODULE_STMT, file, "module-level values must be constants")
                .primary(span, "not a compile-time constant")
                .help("module constants are computed when the module is compiled: numbers, strings, lists, tensors (`np.array`, `make_tensor`, `ir.tensor`) and arithmetic on them; an op call computes at run time"),
        )),
        Err(ConstError::Poisoned(r)) => return Err(r),
        // A use of another deferred constant: silent when a use of it was reported already.
        Err(ConstError::DeferredUse(d)) => match reports.reported(&d) {
            Some(r) => return Err(r),
            None => d,
        },
        Err(ConstError::Failed(d)) => d,
    };
    // Python computes it: an error only if a function reads it.
    let deferred = matches!(
        error.code,
        codes::UNSUPPORTED_CONSTANT | codes::RUN_TIME_VALUE | codes::CONSTANT_TOO_LARGE | codes::INTEGER_OVERFLOW
    );
    if deferred {
        Ok(Global::Deferred(error))
    } else {
        Err(reports.report(diags, *error))
    }
}

fn opset_declaration(env: &ModuleEnv, span: Span, args: &[Arg], diags: &mut Diagnostics) -> Result<Opset, Reported> {
    let file = env.file;
    let mut domain = None;
    let mut version = None;
    for (i, arg) in args.iter().enumerate() {
        let slot = match (&arg.keyword, i) {
            (Some(k), _) if k.name == "domain" => 0,
            (Some(k), _) if k.name == "version" => 1,
            (None, 0) => 0,
            (None, 1) => 1,
            _ => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_OPSET, file, "unexpected argument to `Opset`")
                        .primary(arg.span, "`Opset` takes a domain and a version")
                        .help("write `Opset(domain=\"com.microsoft\", version=1)`"),
                ));
            }
        };
        let v = eval_const(env.names(), &arg.value).ok();
        match (slot, v) {
            (0, Some(PyValue::Str(s))) => domain = Some(s),
            (1, Some(PyValue::Int(n))) if i64::try_from(n).is_ok() => version = i64::try_from(n).ok(),
            (0, _) => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_OPSET, file, "the opset domain must be a string")
                        .primary(arg.value.span, "expected a string"),
                ));
            }
            _ => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_OPSET, file, "the opset version must be an integer")
                        .primary(arg.value.span, "expected an integer"),
                ));
            }
        }
    }
    match (domain, version) {
        (Some(domain), Some(version)) => {
            let domain = if domain == "ai.onnx" { String::new() } else { domain };
            Ok(Opset { domain, version })
        }
        _ => Err(diags.push_error(
            Diagnostic::error(codes::BAD_OPSET, file, "`Opset` needs both a domain and a version")
                .primary(span, "incomplete opset declaration")
                .help("write `Opset(domain=\"com.microsoft\", version=1)`"),
        )),
    }
}

fn type_var(env: &ModuleEnv, span: Span, args: &[Arg], diags: &mut Diagnostics) -> Result<Global, Reported> {
    let file = env.file;
    let name = match args.first().map(|a| &a.value.kind) {
        Some(ExprKind::Str(s)) => s.clone(),
        _ => {
            return Err(diags.push_error(
                Diagnostic::error(codes::BAD_ANNOTATION, file, "`TypeVar` needs its name as the first argument")
                    .primary(span, "expected `TypeVar(\"T\", ...)`"),
            ));
        }
    };
    let mut allowed = Vec::new();
    for arg in &args[1..] {
        let is_bound = arg.keyword.as_ref().is_some_and(|k| k.name == "bound");
        if arg.keyword.is_some() && !is_bound {
            continue;
        }
        match tensor_types(env.names(), &arg.value) {
            Some(ts) => allowed.extend(ts),
            None => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_ANNOTATION, file, "a `TypeVar` bound must be tensor types")
                        .primary(arg.value.span, "not a tensor type or a union of tensor types")
                        .help("write `TypeVar(\"T\", bound=Union[FLOAT, DOUBLE])`"),
                ));
            }
        }
    }
    allowed.sort();
    allowed.dedup();
    Ok(Global::TypeVar { name, allowed })
}
