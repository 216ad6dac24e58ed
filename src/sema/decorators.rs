//! What a function's decorators say: `@script(...)` (the function's domain and its version,
//! the default opset) and torchlib's `@torch_op(...)` (the PyTorch operators it translates, and
//! its options). The driver reads every function's decorators before anything else: a call to
//! a function needs the callee's domain, and a translation's binding its operators.

use super::env::{Global, ModuleEnv, Opset};
use super::eval::eval_const;
use super::resolve::resolve_dotted;
use super::value::PyValue;
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Reported};
use crate::source::Span;
use crate::syntax::ast::*;

type R<T> = Result<T, Reported>;

/// The private domain of functions that name no opset of their own (onnxscript's default).
pub const DEFAULT_FUNCTION_DOMAIN: &str = "this";

/// The domain torchlib's `torch_op` gives its translations.
pub const TORCHLIB_DOMAIN: &str = "pkg.onnxscript.torch_lib";

/// What a function's decorators say.
pub struct Decoration {
    pub domain: String,
    /// The version of the function's opset (`@script(Opset("my.lib", 3))`: 3; otherwise 1):
    /// callers import the domain at this version, as onnxscript does.
    pub domain_version: i64,
    pub default_opset: Option<Opset>,
    /// The PyTorch operators that `@torch_op(...)` binds the function to.
    pub torch_ops: Vec<TorchBinding>,
    /// `@torch_op(..., complex=True)`: the translation of the complex-valued variant.
    pub complex: bool,
    /// `@torch_op(..., private=True)`: a helper that torchlib does not register for export.
    pub private: bool,
    /// `@torch_op(..., trace_only=True)`: Python run for each call of the exporter (`trace`),
    /// not compiled into a function.
    pub trace_only: bool,
    /// `@torch_op(..., traceable=True)`: a script that trace-only code runs as Python (the
    /// exporter traces it) instead of calling the compiled function.
    pub traceable: bool,
    /// Whether any decorator was written: an undecorated function is a script only when scripts
    /// call it (or nothing does); trace-time code runs it as Python.
    pub decorated: bool,
}

/// One operator named in `@torch_op`, e.g. `aten::add.Tensor`.
#[derive(Clone, Debug, PartialEq)]
pub struct TorchBinding {
    pub qualname: String,
    pub span: Span,
    /// The translation is `trace_only`: the exporter passes its Python values as they are (a
    /// list to an `int` parameter, None to a required one), and the body runs as Python.
    pub trace_only: bool,
}

/// Whether a decorator expression names torchlib's `torch_op`, imported or not.
fn is_torch_op(env: &ModuleEnv, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(n) if n == "torch_op" && env.names().get(n).is_none() => true,
        _ => matches!(resolve_dotted(env.names(), e), Some(Global::TorchOpDecorator)),
    }
}

/// Reads `@torch_op("aten::add.Tensor")` or `@torch_op(("aten::div.Tensor", "aten::div.Scalar"), ...)`.
fn torch_op_decoration(
    env: &ModuleEnv,
    d: &Expr,
    args: &[Arg],
    out: &mut Decoration,
    diags: &mut Diagnostics,
) -> R<()> {
    let file = env.file;
    let bad = |span: Span, message: &str, label: &str| {
        Diagnostic::error(codes::BAD_TORCH_OP, file, message.to_string())
            .primary(span, label.to_string())
            .help("name the operators as `@torch_op(\"aten::add.Tensor\")` or `@torch_op((\"aten::div.Tensor\", \"aten::div.Scalar\"))`")
    };
    let positional: Vec<&Arg> = args.iter().filter(|a| a.keyword.is_none()).collect();
    let Some(first) = positional.first() else {
        return Err(diags.push_error(bad(
            d.span,
            "`@torch_op` needs the name of the operator it translates",
            "no operator named",
        )));
    };
    if let Some(extra) = positional.get(1) {
        return Err(diags.push_error(bad(
            extra.span,
            "`@torch_op` takes one positional argument",
            "unexpected argument",
        )));
    }
    let names: Vec<&Expr> = match &first.value.kind {
        ExprKind::Tuple(items) => items.iter().collect(),
        ExprKind::List(_) => {
            return Err(diags.push_error(bad(
                first.value.span,
                "several operator names must be a tuple, as torchlib requires",
                "a list",
            )));
        }
        _ => vec![&first.value],
    };
    if names.is_empty() {
        return Err(diags.push_error(bad(first.value.span, "`@torch_op` needs at least one operator name", "empty")));
    }
    for n in names {
        let ExprKind::Str(text) = &n.kind else {
            return Err(diags.push_error(bad(
                n.span,
                "operator names in `@torch_op` must be string literals",
                "not a string",
            )));
        };
        let well_formed = text.split_once("::").is_some_and(|(ns, rest)| {
            let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let (name, overload) = rest.split_once('.').unwrap_or((rest, "x"));
            ident(ns) && ident(name) && ident(overload)
        });
        if let Some(base) = text.strip_suffix(".default").filter(|_| well_formed) {
            return Err(diags.push_error(
                Diagnostic::error(
                    codes::BAD_TORCH_OP,
                    file,
                    format!("`{text}` names the default overload with `.default`"),
                )
                .primary(n.span, "torchlib rejects `.default`")
                .help(format!("write `{base}`")),
            ));
        }
        if !well_formed {
            return Err(diags.push_error(
                Diagnostic::error(codes::BAD_TORCH_OP, file, format!("`{text}` is not a qualified operator name"))
                    .primary(n.span, "expected `namespace::name` or `namespace::name.overload`")
                    .help("for example `aten::gelu` (the default overload) or `aten::add.Tensor`"),
            ));
        }
        out.torch_ops.push(TorchBinding { qualname: text.clone(), span: n.span, trace_only: false });
    }
    for (a, k) in args.iter().filter_map(|a| a.keyword.as_ref().map(|k| (a, k))) {
        let value = match eval_const(env.names(), &a.value) {
            Ok(PyValue::Bool(b)) => b,
            _ if k.name == "registry" => continue,
            _ => {
                return Err(diags.push_error(bad(
                    a.value.span,
                    &format!("`{}` must be `True` or `False`", k.name),
                    "not a boolean constant",
                )));
            }
        };
        match k.name.as_str() {
            "trace_only" => out.trace_only = value,
            "complex" => out.complex = value,
            "private" => out.private = value,
            "traceable" => out.traceable = value,
            other => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_TORCH_OP, file, format!("`@torch_op` has no option `{other}`"))
                        .primary(k.span, "unknown option")
                        .help("its options are `trace_only`, `private`, `complex` and `traceable`"),
                ));
            }
        }
    }
    for b in &mut out.torch_ops {
        b.trace_only = out.trace_only;
    }
    Ok(())
}

/// Reads the `@script(...)` decorator of a function.
pub fn decoration(env: &ModuleEnv, f: &FunctionDef, diags: &mut Diagnostics) -> R<Decoration> {
    let file = env.file;
    let mut out = Decoration {
        domain: DEFAULT_FUNCTION_DOMAIN.into(),
        domain_version: 1,
        default_opset: None,
        torch_ops: Vec::new(),
        complex: false,
        private: false,
        trace_only: false,
        traceable: false,
        decorated: !env.undecorated(f),
    };
    if !out.decorated {
        return Ok(out);
    }
    let mut script_seen = false;
    for d in &f.decorators {
        let (func, args) = match &d.kind {
            ExprKind::Call { func, args } => (func.as_ref(), args.as_slice()),
            _ => {
                if is_torch_op(env, d) {
                    return Err(diags.push_error(
                        Diagnostic::error(
                            codes::BAD_TORCH_OP,
                            file,
                            "`@torch_op` must be called with the operator it translates",
                        )
                        .primary(d.span, "missing the operator name")
                        .help("write `@torch_op(\"aten::add.Tensor\")`"),
                    ));
                }
                if matches!(resolve_dotted(env.names(), d), Some(Global::ScriptDecorator)) {
                    return Err(diags.push_error(
                        Diagnostic::error(codes::BAD_DECORATOR, file, "`@script` must be called")
                            .primary(d.span, "missing `()`")
                            .help("write `@script()`, or `@script(my_opset)` to put the function in a domain"),
                    ));
                }
                (d, &[][..])
            }
        };
        if is_torch_op(env, func) {
            torch_op_decoration(env, d, args, &mut out, diags)?;
            if !script_seen {
                out.domain = TORCHLIB_DOMAIN.into();
            }
            continue;
        }
        match resolve_dotted(env.names(), func) {
            Some(Global::ScriptDecorator) => script_seen = true,
            _ => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_DECORATOR, file, "unknown decorator")
                        .primary(func.span, "not an onnxscript decorator")
                        .help("translation functions take `@script()`, `@script(opset)`, `@script(opset, default_opset=op)` or `@torch_op(\"aten::op.overload\")`"),
                ));
            }
        }
        for (i, a) in args.iter().enumerate() {
            let which = match (&a.keyword, i) {
                (None, 0) => "opset",
                (None, 1) => "default_opset",
                (Some(k), _) if k.name == "opset" || k.name == "default_opset" => k.name.as_str(),
                (Some(_), _) => continue,
                (None, _) => {
                    return Err(diags.push_error(
                        Diagnostic::error(codes::BAD_DECORATOR, file, "too many arguments to `@script`")
                            .primary(a.span, "unexpected argument")
                            .help("pass the default opset by keyword: `default_opset=op`"),
                    ));
                }
            };
            let opset = match resolve_dotted(env.names(), &a.value) {
                Some(Global::Opset(o)) => o,
                Some(Global::Poison(r)) => return Err(r),
                _ => {
                    return Err(diags.push_error(
                        Diagnostic::error(codes::BAD_DECORATOR, file, format!("`{which}` must be an opset"))
                            .primary(a.value.span, "not an opset")
                            .help("declare one with `name = onnxscript.values.Opset(domain=\"my.domain\", version=1)`"),
                    ));
                }
            };
            if which == "opset" {
                if opset.domain.is_empty() {
                    return Err(diags.push_error(
                        Diagnostic::error(codes::BAD_DECORATOR, file, "a function cannot live in the default ONNX domain")
                            .primary(a.value.span, "this is an ONNX operator set")
                            .help("give the function a domain of its own, e.g. `Opset(\"my.domain\", 1)`; pass ONNX ops with `default_opset=`"),
                    ));
                }
                out.domain = opset.domain;
                out.domain_version = opset.version;
            } else {
                if !opset.domain.is_empty() {
                    return Err(diags.push_error(
                        Diagnostic::error(codes::BAD_DECORATOR, file, "`default_opset` must be an ONNX opset")
                            .primary(a.value.span, format!("this is the `{}` domain", opset.domain))
                            .help("write `default_opset=op` with `from onnxscript import opset18 as op`"),
                    ));
                }
                out.default_opset = Some(opset);
            }
        }
    }
    Ok(out)
}
