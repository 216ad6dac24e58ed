//! Checking a translation against the PyTorch schema of each operator it is bound to.
//!
//! `@torch_op("aten::add.Tensor")` promises that the function can stand in for that operator in
//! `torch.onnx.export`. The exporter checks nothing: it calls the translation with the aten
//! arguments — positional ones by position, keyword-only ones by name, trailing defaults
//! omitted — so any disagreement silently yields a wrong model. This pass compares the two
//! signatures the way the exporter will use them (see docs/onnx-facts §6).

use crate::aten::{Argument, AtenRegistry, BaseType, DefaultValue, FunctionSchema, Type};
use crate::diagnostics::suggest::did_you_mean;
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Edit};
use crate::onnx::AttrKind;
use crate::sema::annotations::ParamType;
use crate::sema::decorators::TorchBinding;
use crate::sema::env::{Global, ModuleEnv};
use crate::sema::eval::eval_const;
use crate::sema::liveness;
use crate::sema::signature::Signature;
use crate::sema::value::PyValue;
use crate::source::Span;
use crate::syntax::ast::*;

/// A translation parameter as the exporter sees it.
struct TParam<'f> {
    name: &'f str,
    span: Span,
    kind: Kind,
    /// The tensor type an input is annotated with (`FLOAT`, `TReal`), for help texts.
    input_type: Option<String>,
    /// The default, when there is one and it is a constant (`None` included).
    default: Option<PyValue>,
    has_default: bool,
    default_span: Option<Span>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// A tensor input; `optional` when annotated `Optional[...]` or defaulting to `None`.
    Input { optional: bool },
    /// An attribute; `optional` when annotated `Optional[...]` or defaulting to `None`.
    Attr(AttrKind, bool),
    /// The annotation is invalid; already reported elsewhere.
    Unknown,
}

/// The translation's parameters, from its signature.
fn translation_params<'f>(env: &ModuleEnv, sig: &Signature<'f>) -> Vec<TParam<'f>> {
    sig.plain()
        .map(|p| {
            let mut input_type = None;
            let kind = match &p.ty {
                Ok(ParamType::Input { ty, .. }) => {
                    input_type = ty.as_ref().map(ToString::to_string);
                    Kind::Input { optional: p.optional }
                }
                Ok(ParamType::Attr { ty, .. }) => Kind::Attr(*ty, p.optional),
                Err(_) => Kind::Unknown,
            };
            TParam {
                name: p.name(),
                span: p.def.name.span,
                kind,
                input_type,
                default: p.def.default.as_ref().and_then(|d| eval_const(env.names(), d).ok()),
                has_default: p.has_default(),
                default_span: p.def.default.as_ref().map(|d| d.span),
            }
        })
        .collect()
}

/// How many outputs the translation has: its return annotation, else its final `return`.
fn translation_outputs(sig: &Signature) -> Option<(usize, Span)> {
    let f = sig.def;
    if let Some(r) = &f.returns {
        return sig.declared_outputs().map(|n| (n, r.span));
    }
    f.body.iter().rev().find_map(|s| match &s.kind {
        StmtKind::Return(Some(v)) => Some(match &v.kind {
            ExprKind::Tuple(items) => (items.len(), v.span),
            _ => (1, v.span),
        }),
        _ => None,
    })
}

/// Arguments that never change the computed values, so a translation may leave them out, and
/// its default for them does not matter: memory placement and layout, whether autograd records
/// the result (`requires_grad`), whether a copy waits (`non_blocking`).
fn may_be_omitted(a: &Argument) -> bool {
    a.is_out()
        || matches!(a.name.as_str(), "pin_memory" | "requires_grad" | "non_blocking")
        || matches!(
            a.ty.base_type(),
            BaseType::Layout | BaseType::Device | BaseType::MemoryFormat | BaseType::Generator
        )
}

/// ONNX's FLOAT, the element type of torch's default dtype (float32).
const FLOAT_DTYPE: i128 = 1;

/// Whether `schema` creates a tensor from tensor options (`ones`, `zeros`, `rand`, the windows):
/// it takes a `Layout? layout`. Its `dtype=None` means torch's default dtype, float32, so a
/// translation that defaults `dtype` to FLOAT computes the same.
fn is_factory(schema: &FunctionSchema) -> bool {
    schema.arguments.iter().any(|a| a.name == "layout" && a.ty.strip_optional().base_type() == BaseType::Layout)
}

/// Arguments that only tell the kernel a size it could compute, and must agree with it:
/// `repeat_interleave`'s `output_size` (the sum of `repeats`, to spare a device sync), and
/// `native_group_norm`'s `N`, `C` and `HxW` (the input's own sizes).
fn is_size_hint(schema: &FunctionSchema, a: &Argument) -> bool {
    match schema.name.as_str() {
        "repeat_interleave" => a.name == "output_size",
        "native_group_norm" => matches!(a.name.as_str(), "N" | "C" | "HxW"),
        _ => false,
    }
}

/// Arguments that change what autograd or the allocator does, never a forward value: sparse or
/// scaled gradients, `expand`'s `implicit`, `embedding`'s `padding_idx` (it only zeroes that
/// row's gradient), the momentum of a batch norm that does not train, the strides of an
/// uninitialised tensor, and `einsum`'s contraction order.
fn is_backward_or_memory_only(schema: &FunctionSchema, a: &Argument) -> bool {
    matches!(a.name.as_str(), "sparse" | "scale_grad_by_freq" | "sparse_grad" | "implicit")
        || match schema.name.as_str() {
            "embedding" => a.name == "padding_idx",
            "_native_batch_norm_legit_no_training" => a.name == "momentum",
            "empty_strided" | "new_empty_strided" => a.name == "stride",
            "einsum" => a.name == "path",
            _ => false,
        }
}

/// `float alpha=1`, the way the help line suggests a parameter for it: `alpha: float = 1.0`;
/// an optional argument is `Optional[...]` (a tensor `Optional[FLOAT]` unless it defaults to
/// None, when `bias = None` says it), with `= None` only if the schema has that default.
fn suggested_parameter(a: &Argument) -> String {
    let ty = a.ty.strip_optional();
    let optional_tensor_without_default = a.ty.is_optional() && ty.is_tensor_like() && a.default.is_none();
    let py = if optional_tensor_without_default && ty.is_single_tensor() {
        Some("FLOAT")
    } else if ty.is_tensor_like() {
        None
    } else {
        match ty {
            Type::Base(BaseType::Float) => Some("float"),
            Type::Base(BaseType::Scalar) => Some("float"),
            Type::Base(BaseType::Int | BaseType::SymInt | BaseType::ScalarType) => Some("int"),
            Type::Base(BaseType::Bool) => Some("bool"),
            Type::Base(BaseType::Str) => Some("str"),
            Type::List(..) if matches!(ty.base_type(), BaseType::Int | BaseType::SymInt) => Some("Sequence[int]"),
            Type::List(..) if ty.base_type() == BaseType::Float => Some("Sequence[float]"),
            _ => None,
        }
    };
    let default = a.default.as_deref().map(|d| match (py, DefaultValue::parse(d)) {
        // `float alpha=1` is `alpha: float = 1.0` in Python.
        (Some("float"), Some(DefaultValue::Int(i))) => format!("{i}.0"),
        _ => python_default(d),
    });
    let wrapped;
    let py = match py {
        Some(t) if a.ty.is_optional() => {
            wrapped = format!("Optional[{t}]");
            Some(wrapped.as_str())
        }
        other => other,
    };
    match (py, default) {
        (Some(t), Some(d)) => format!("{}: {t} = {d}", a.name),
        (Some(t), None) => format!("{}: {t}", a.name),
        (None, Some(d)) => format!("{} = {d}", a.name),
        (None, None) => a.name.clone(),
    }
}

/// An aten default as Python source.
fn python_default(text: &str) -> String {
    match DefaultValue::parse(text) {
        Some(DefaultValue::Name(n)) => match named_default(&n) {
            Some(v) => v.to_string(),
            None => format!("\"{n}\""),
        },
        Some(DefaultValue::Str(s)) => format!("\"{s}\""),
        _ => text.to_string(),
    }
}

/// Enum-like aten defaults as the integers the exporter passes: reductions, and scalar types as
/// ONNX data types.
fn named_default(name: &str) -> Option<i64> {
    Some(match name {
        "Mean" => 1,
        "Sum" => 2,
        "float" => 1,
        "long" => 7,
        "int" => 6,
        "bool" => 9,
        "double" => 11,
        "half" => 10,
        _ => return None,
    })
}

/// Whether an aten default and a translation default mean the same value.
fn same_default(aten: &DefaultValue, py: &PyValue) -> bool {
    fn num(v: &PyValue) -> Option<f64> {
        match v {
            PyValue::Int(i) => Some(*i as f64),
            PyValue::Float(f) => Some(*f),
            PyValue::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }
    let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
    match aten {
        DefaultValue::None => matches!(py, PyValue::None),
        DefaultValue::Bool(b) => num(py).is_some_and(|n| close(n, f64::from(u8::from(*b)))),
        DefaultValue::Int(i) => match py {
            // A sized list accepts a scalar default: `int[2] padding=0`.
            PyValue::List(items) => !items.is_empty() && items.iter().all(|v| same_default(aten, v)),
            _ => num(py).is_some_and(|n| close(n, *i as f64)),
        },
        DefaultValue::Float(f) => num(py).is_some_and(|n| close(n, *f)),
        DefaultValue::Str(s) => matches!(py, PyValue::Str(p) if p == s),
        DefaultValue::List(items) => match py {
            PyValue::List(p) => p.len() == items.len() && items.iter().zip(p).all(|(a, b)| same_default(a, b)),
            _ => false,
        },
        DefaultValue::Name(n) => match (named_default(n), py) {
            (Some(v), _) => num(py).is_some_and(|x| close(x, v as f64)),
            (None, PyValue::Str(s)) => s == n,
            _ => false,
        },
    }
}

/// Whether an attribute of Python type `kind` can hold every value of aten type `ty`.
fn attribute_holds(kind: AttrKind, ty: &Type) -> bool {
    let ty = ty.strip_optional();
    match ty {
        Type::Base(b) => match b {
            BaseType::Int | BaseType::SymInt | BaseType::ScalarType | BaseType::DeviceIndex => kind == AttrKind::Int,
            BaseType::Float => kind == AttrKind::Float,
            BaseType::Scalar => matches!(kind, AttrKind::Float | AttrKind::Int),
            BaseType::Bool | BaseType::SymBool => matches!(kind, AttrKind::Bool | AttrKind::Int),
            BaseType::Str => kind == AttrKind::Str,
            // Passed as strings or opaque values; translations ignore them.
            BaseType::Layout | BaseType::Device | BaseType::MemoryFormat | BaseType::Generator => true,
            _ => true,
        },
        Type::List(elem, _) => match elem.strip_optional().base_type() {
            BaseType::Int | BaseType::SymInt => kind == AttrKind::Ints,
            BaseType::Float => kind == AttrKind::Floats,
            BaseType::Bool => matches!(kind, AttrKind::Bools | AttrKind::Ints),
            BaseType::Scalar => matches!(kind, AttrKind::Floats | AttrKind::Ints),
            BaseType::Str => kind == AttrKind::Strs,
            _ => true,
        },
        Type::Optional(_) => true,
    }
}

/// Checks one function against every operator its `@torch_op` names.
///
/// `invalid` names custom operators whose declaration failed (already reported).
pub fn check_function(
    env: &ModuleEnv,
    sig: &Signature,
    bindings: &[TorchBinding],
    registry: &AtenRegistry,
    invalid: &[String],
    diags: &mut Diagnostics,
) {
    if bindings.is_empty() {
        return;
    }
    let f = sig.def;
    let params = translation_params(env, sig);
    let outputs = translation_outputs(sig);
    for b in bindings {
        match registry.lookup(&b.qualname) {
            Some(schema) => check_against(env, f, &params, outputs, b, schema, diags),
            None if invalid.contains(&b.qualname) => {}
            None => unknown_op(env, b, registry, diags),
        }
    }
    unread_parameters(env, f, &params, bindings, registry, diags);
}

/// Warns of each parameter that the body never reads (W0512) and that receives an argument
/// able to change the values (not a [`value_neutral`] one) from an operator the function is
/// bound to: every call is translated as if that argument had one value. `del name` at the top
/// of the body says the translation ignores it on purpose.
fn unread_parameters(
    env: &ModuleEnv,
    f: &FunctionDef,
    params: &[TParam],
    bindings: &[TorchBinding],
    registry: &AtenRegistry,
    diags: &mut Diagnostics,
) {
    let deleted = liveness::deleted_parameters(f);
    let unread: Vec<usize> = (0..params.len())
        .filter(|k| !deleted.contains(params[*k].name) && liveness::never_read(f, params[*k].name))
        .collect();
    if unread.is_empty() {
        return;
    }
    // For each unread parameter, the first binding that gives it an argument that matters.
    let mut receiving: Vec<Option<(&TorchBinding, &Argument)>> = vec![None; params.len()];
    for b in bindings {
        let Some(schema) = registry.lookup(&b.qualname) else { continue };
        for (a, receiver) in match_arguments(params, schema).0 {
            if let Receiver::Param(k) = receiver {
                if unread.contains(&k) && receiving[k].is_none() && !value_neutral(schema, a) {
                    receiving[k] = Some((b, a));
                }
            }
        }
    }
    for (k, found) in receiving.into_iter().enumerate() {
        let Some((b, a)) = found else { continue };
        let p = &params[k];
        diags.push(
            Diagnostic::warning(
                codes::UNREAD_PARAMETER,
                env.file,
                format!(
                    "parameter `{}` is never read: a call of `{}` is translated the same whatever its `{}`",
                    p.name, b.qualname, a.name
                ),
            )
            .primary(p.span, "never read")
            .secondary(b.span, "bound here")
            .help(format!(
                "compute with `{0}`; if the translation ignores it on purpose, write `del {0}` at the top of the body",
                p.name
            )),
        );
    }
}

/// Arguments whose value a translation may ignore without computing anything else: those
/// [`may_be_omitted`], the [`BACKEND_HINTS`], size hints ([`is_size_hint`]) and what only
/// autograd or the allocator reads ([`is_backward_or_memory_only`]).
fn value_neutral(schema: &FunctionSchema, a: &Argument) -> bool {
    may_be_omitted(a)
        || BACKEND_HINTS.contains(&a.name.as_str())
        || is_size_hint(schema, a)
        || is_backward_or_memory_only(schema, a)
}

/// Namespaces whose "operators" are Python's own functions, which FX graphs call and the
/// exporter keys by the function (`_operator::add` is `operator.add`): they have no schema to
/// check against, and the Python package finds each one in Python.
pub const PYTHON_NAMESPACES: [&str; 2] = ["_operator", "math"];

/// Whether the exporter ignores the name `qualname` when it reads a translation: torch's
/// exporter skips unknown `*getitem` names on purpose (torchlib registered `aten::getitem` by
/// mistake and keeps it for compatibility). Such a binding binds nothing.
pub fn exporter_ignores(qualname: &str, registry: &AtenRegistry) -> bool {
    let (ns, rest) = qualname.split_once("::").unwrap_or(("aten", qualname));
    rest == "getitem" && registry.has_namespace(ns) && registry.lookup(qualname).is_none()
}

fn unknown_op(env: &ModuleEnv, b: &TorchBinding, registry: &AtenRegistry, diags: &mut Diagnostics) {
    let (ns, rest) = b.qualname.split_once("::").unwrap_or(("aten", &b.qualname));
    if PYTHON_NAMESPACES.contains(&ns) {
        return;
    }
    if exporter_ignores(&b.qualname, registry) {
        diags.push(
            Diagnostic::warning(
                codes::LEGACY_GETITEM_NAME,
                env.file,
                format!("`{}` is not a PyTorch operator; the exporter ignores this name", b.qualname),
            )
            .primary(b.span, "never looked up")
            .help("`x[i]` on a tuple reaches translations as `_operator::getitem`"),
        );
        return;
    }
    if !registry.has_namespace(ns) {
        diags.push(
            Diagnostic::warning(codes::UNCHECKED_NAMESPACE, env.file, format!("no schema is known for `{}`; its signature is not checked", b.qualname))
                .primary(b.span, format!("no operator of namespace `{ns}` is declared"))
                .help(format!("where PyTorch or a library registers the operator (torch registers `prims`, torchvision `torchvision`), the Python package checks the translation against the registration, and `check` does with `--registered FILE`; for an operator of your own, declare it with `torch.library.define(\"{}\", \"(...) -> ...\")`", b.qualname)),
        );
        return;
    }
    let (name, overload) = rest.split_once('.').unwrap_or((rest, ""));
    let base = format!("{ns}::{name}");
    let overloads = registry.overloads(&base);
    if let Some(d) = outside_native_functions(env, b, registry, (ns, name, overload), &overloads) {
        diags.push(d);
        return;
    }
    let mut d;
    if !overloads.is_empty() {
        let shown = if overload.is_empty() { "default overload".to_string() } else { format!("overload `{overload}`") };
        d = Diagnostic::error(codes::UNKNOWN_ATEN_OP, env.file, format!("`{base}` has no {shown}"))
            .primary(b.span, "unknown overload");
        let list: Vec<String> = overloads
            .iter()
            .map(|o| if o.is_empty() { format!("`{base}`") } else { format!("`{base}.{o}`") })
            .collect();
        d = match did_you_mean(overload, overloads.iter().copied()) {
            Some(s) if !s.is_empty() => d
                .help(format!("did you mean `{base}.{s}`?"))
                .fix(format!("Replace with `{base}.{s}`"), vec![Edit::replace(b.span, format!("\"{base}.{s}\""))]),
            _ => d.help(format!("its overloads are {}", list.join(", "))),
        };
    } else {
        d = Diagnostic::error(codes::UNKNOWN_ATEN_OP, env.file, format!("there is no operator `{}`", b.qualname))
            .primary(b.span, "unknown operator");
        let candidates = registry.names().filter(|(n, _)| *n == ns).map(|(_, name)| name);
        if let Some(s) = did_you_mean(name, candidates) {
            // Keep the overload when the suggested operator has it.
            let s = match format!("{s}.{overload}") {
                with if !overload.is_empty() && registry.lookup(&format!("{ns}::{with}")).is_some() => with,
                _ => s,
            };
            d = d
                .help(format!("did you mean `{ns}::{s}`?"))
                .fix(format!("Replace with `{ns}::{s}`"), vec![Edit::replace(b.span, format!("\"{ns}::{s}\""))]);
        } else if ns != "aten" {
            d = d.help(format!("declare it with `torch.library.define(\"{}\", \"(...) -> ...\")`", b.qualname));
        }
    }
    diags.push(d);
}

/// The warning for a name that PyTorch registers outside `native_functions.yaml`, where the
/// schemas onnxsc embeds cannot say whether it exists: the exporter binds the translation to
/// the running PyTorch's operator of that name, or skips the name (with a log line) if there
/// is none. Such names are
/// - a name without an overload whose operator has overloads but no default one in the YAML
///   (`aten::mul`: torch 2.15 registers `aten::mul(Scalar a, Scalar b) -> Scalar` for
///   TorchScript's scalar arithmetic);
/// - an operator the YAML does not have and onnxsc knows no near spelling of
///   (`aten::tensor.bool`, `aten::_native_batch_norm_legit_functional`), or whose near spelling
///   is its in-place variant (`aten::embedding_renorm`, the functional variant PyTorch generates
///   for `aten::embedding_renorm_`).
///
/// A misspelt overload of a known operator, a near spelling of another one, and a name in a
/// custom namespace (whose operators the module declares) stay errors.
fn outside_native_functions(
    env: &ModuleEnv,
    b: &TorchBinding,
    registry: &AtenRegistry,
    (ns, name, overload): (&str, &str, &str),
    overloads: &[&str],
) -> Option<Diagnostic> {
    // A custom namespace holds what the module declares: a name it lacks is a mistake.
    if !AtenRegistry::embedded().has_namespace(ns) {
        return None;
    }
    let warning = |label: &str, help: String| {
        Diagnostic::warning(
            codes::OUTSIDE_NATIVE_FUNCTIONS,
            env.file,
            format!("`{}` is not in native_functions.yaml; its signature is not checked", b.qualname),
        )
        .primary(b.span, label.to_string())
        .help(help)
    };
    let registered = "the exporter binds the translation to the operator the running PyTorch registers under this name, or skips the name if there is none";
    if !overloads.is_empty() {
        if !overload.is_empty() {
            return None;
        }
        let list: Vec<String> = overloads.iter().map(|o| format!("`{ns}::{name}.{o}`")).collect();
        return Some(warning(
            "no default overload in the YAML",
            format!("{registered}; to translate the YAML's operators, name their overloads: {}", list.join(", ")),
        ));
    }
    let candidates = registry.names().filter(|(n, _)| *n == ns).map(|(_, name)| name);
    match did_you_mean(name, candidates) {
        Some(s) if s != format!("{name}_") => None,
        _ => Some(warning("not in the YAML", registered.to_string())),
    }
}

/// Which parameter receives an aten argument.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Receiver {
    /// The parameter at this index: in the argument's position, or (keyword-only) by name.
    Param(usize),
    /// A keyword-only argument whose place is taken by a parameter of another name, which the
    /// exporter's keyword would miss.
    Renamed(usize),
    /// No parameter receives it.
    Missing,
    /// A keyword-only `out=` argument the translation does not take: the exporter never passes it.
    OutArgument,
}

/// Matches the aten arguments to the translation's parameters as the exporter passes them:
/// positional ones by position, keyword-only ones by name. Returns each argument (positional
/// first, then keyword-only) with its receiver, and which parameters receive one.
fn match_arguments<'s>(params: &[TParam], schema: &'s FunctionSchema) -> (Vec<(&'s Argument, Receiver)>, Vec<bool>) {
    let mut used = vec![false; params.len()];
    let mut out = Vec::new();
    let positional: Vec<&Argument> = schema.positional_arguments().collect();
    for (i, a) in positional.iter().enumerate() {
        match params.get(i) {
            Some(_) if !a.is_out() => {
                used[i] = true;
                out.push((*a, Receiver::Param(i)));
            }
            _ => out.push((*a, Receiver::Missing)),
        }
    }
    for (k, a) in schema.kwarg_only_arguments().enumerate() {
        if let Some(i) = params.iter().enumerate().position(|(i, p)| !used[i] && p.name == a.name) {
            used[i] = true;
            out.push((a, Receiver::Param(i)));
            continue;
        }
        if a.is_out() {
            out.push((a, Receiver::OutArgument));
            continue;
        }
        // The parameter in the keyword argument's place, if it answers to no other aten name.
        let slot = positional.len() + k;
        match params.get(slot).filter(|p| !used[slot] && schema.argument(p.name).is_none()) {
            Some(_) => {
                used[slot] = true;
                out.push((a, Receiver::Renamed(slot)));
            }
            None => out.push((a, Receiver::Missing)),
        }
    }
    (out, used)
}

/// Each aten argument of `schema` and the parameter of `f` that receives it, when `f` is bound
/// to it (for editors: how the exporter's call reaches the translation).
pub fn receiving_parameters(
    env: &ModuleEnv,
    f: &FunctionDef,
    schema: &FunctionSchema,
) -> Vec<(String, Option<String>)> {
    let sig = Signature::of(env, f);
    let params = translation_params(env, &sig);
    let (receivers, _) = match_arguments(&params, schema);
    receivers
        .into_iter()
        .map(|(a, r)| {
            let p = match r {
                Receiver::Param(i) => Some(params[i].name.to_string()),
                _ => None,
            };
            (a.name.clone(), p)
        })
        .collect()
}

/// Arguments that tell a backend how to compute, never what: a translation may leave them unread
/// without changing the values it computes (cuDNN switches, benchmark and determinism modes).
pub const BACKEND_HINTS: [&str; 5] = ["cudnn_enable", "cudnn_enabled", "benchmark", "deterministic", "allow_tf32"];

/// The parameters of `sig` that receive one of the [`BACKEND_HINTS`] of `schema`, in order.
pub fn hint_parameters(env: &ModuleEnv, sig: &Signature, schema: &FunctionSchema) -> Vec<String> {
    let params = translation_params(env, sig);
    let (receivers, _) = match_arguments(&params, schema);
    receivers
        .into_iter()
        .filter(|(a, _)| BACKEND_HINTS.contains(&a.name.as_str()))
        .filter_map(|(_, r)| match r {
            Receiver::Param(i) => Some(params[i].name.to_string()),
            _ => None,
        })
        .collect()
}

/// Compares `f` (its parameters `params` and `outputs`) with the `schema` of the operator its
/// binding `b` names, as the exporter will call it: the name of each parameter that receives an
/// argument, the arguments no parameter receives, the type and default of each parameter that
/// receives one, the parameters that receive none, and the number of outputs.
fn check_against(
    env: &ModuleEnv,
    f: &FunctionDef,
    params: &[TParam],
    outputs: Option<(usize, Span)>,
    b: &TorchBinding,
    schema: &FunctionSchema,
    diags: &mut Diagnostics,
) {
    let pair = Pair { env, f, params, b, schema };
    let (receivers, used) = match_arguments(params, schema);
    let mut matched: Vec<(&Argument, usize)> = Vec::new();
    let mut missing: Vec<&Argument> = Vec::new();
    for (i, (a, receiver)) in receivers.into_iter().enumerate() {
        match receiver {
            Receiver::Param(k) => {
                matched.push((a, k));
                diags.extend(pair.swapped_parameter(i, a, k).or_else(|| pair.positional_name_mismatch(i, a, k)));
            }
            Receiver::Renamed(k) => diags.push(pair.keyword_name_mismatch(a, k)),
            Receiver::Missing => missing.push(a),
            Receiver::OutArgument => {}
        }
    }
    for a in missing {
        diags.extend(pair.missing_argument(a).or_else(|| pair.ignored_argument(a)));
    }
    for (a, k) in matched {
        // The default of a parameter of the wrong type is not compared.
        let wrong_type = pair
            .tensor_as_attribute(a, k)
            .or_else(|| pair.attribute_cannot_hold(a, k))
            .or_else(|| pair.optional_required(a, k));
        diags.extend(wrong_type.or_else(|| pair.default_required(a, k)).or_else(|| pair.default_differs(a, k)));
    }
    for (k, _) in used.iter().enumerate().filter(|(_, used)| !**used) {
        diags.extend(pair.extra_parameter(k));
    }
    if let Some((n, span)) = outputs {
        diags.extend(pair.output_count(n, span));
    }
}

/// A translation and one operator it is bound to, as [`check_against`] compares them. Each
/// check below reports one kind of disagreement, and returns `None` when there is none.
struct Pair<'c, 'm> {
    env: &'c ModuleEnv<'m>,
    f: &'c FunctionDef,
    params: &'c [TParam<'c>],
    /// The binding (`@torch_op("aten::add.Tensor")`), which every diagnostic points at.
    b: &'c TorchBinding,
    schema: &'c FunctionSchema,
}

impl Pair<'_, '_> {
    /// Parameter `k`, receiving positional argument `a` (at `i`), is named after another argument
    /// of the schema: the parameters are in another order than the schema's, and that argument's
    /// value would arrive here.
    fn swapped_parameter(&self, i: usize, a: &Argument, k: usize) -> Option<Diagnostic> {
        let (q, p) = (&self.b.qualname, &self.params[k]);
        if a.kwarg_only || p.name == a.name || self.schema.argument(p.name).is_none() {
            return None;
        }
        let order: Vec<&str> = self.schema.positional_arguments().map(|a| a.name.as_str()).collect();
        Some(
            Diagnostic::error(
                codes::SWAPPED_PARAMETERS,
                self.env.file,
                format!("parameter `{}` receives `{q}`'s argument `{}`, not its `{}`", p.name, a.name, p.name),
            )
            .primary(p.span, format!("position {} is `{}` in the schema", i + 1, a.name))
            .secondary(self.b.span, "bound here")
            .help(format!(
                "the exporter passes positional arguments by position: order the parameters as the schema does ({})",
                order.join(", ")
            )),
        )
    }

    /// Parameter `k` receives positional argument `a` (at `i`) under another name.
    fn positional_name_mismatch(&self, i: usize, a: &Argument, k: usize) -> Option<Diagnostic> {
        let (q, p) = (&self.b.qualname, &self.params[k]);
        if a.kwarg_only || p.name == a.name {
            return None;
        }
        Some(
            Diagnostic::warning(
                codes::POSITIONAL_NAME_MISMATCH,
                self.env.file,
                format!("parameter `{}` receives `{q}`'s argument `{}`", p.name, a.name),
            )
            .primary(p.span, format!("position {} is `{}` in the schema", i + 1, a.name))
            .secondary(self.b.span, "bound here")
            .help(format!("rename the parameter to `{}` to match the schema", a.name))
            .fix(format!("Rename `{}` to `{}`", p.name, a.name), rename(self.f, p.name, &a.name)),
        )
    }

    /// Parameter `k` stands where keyword-only argument `a` goes, under another name: the
    /// exporter's keyword misses it.
    fn keyword_name_mismatch(&self, a: &Argument, k: usize) -> Diagnostic {
        let (q, p) = (&self.b.qualname, &self.params[k]);
        Diagnostic::error(
            codes::KEYWORD_NAME_MISMATCH,
            self.env.file,
            format!(
                "`{q}` passes its keyword-only argument `{}` by name, but the parameter is called `{}`",
                a.name, p.name
            ),
        )
        .primary(p.span, format!("should be `{}`", a.name))
        .secondary(self.b.span, "bound here")
        .help(format!("rename the parameter to `{}`", a.name))
        .fix(format!("Rename `{}` to `{}`", p.name, a.name), rename(self.f, p.name, &a.name))
    }

    /// No parameter receives `a`, which has no default: the exporter always passes it.
    fn missing_argument(&self, a: &Argument) -> Option<Diagnostic> {
        if a.default.is_some() || a.is_out() {
            return None;
        }
        let message =
            format!("the translation of `{}` has no parameter for its argument `{}`", self.b.qualname, a.name);
        let help = format!("add the parameter `{}`", suggested_parameter(a));
        Some(self.lacks(codes::MISSING_ATEN_ARGUMENT, message, a, help))
    }

    /// No parameter receives `a`, which has a default and changes the computed values: a call
    /// that gives it another value is translated wrongly.
    fn ignored_argument(&self, a: &Argument) -> Option<Diagnostic> {
        if a.default.is_none() || may_be_omitted(a) || is_size_hint(self.schema, a) {
            return None;
        }
        let message = format!("the translation of `{}` ignores its argument `{}`", self.b.qualname, a.name);
        let help = format!(
            "a call with a non-default `{}` would be translated wrongly; add the parameter `{}`",
            a.name,
            suggested_parameter(a)
        );
        Some(self.lacks(codes::IGNORED_ATEN_ARGUMENT, message, a, help))
    }

    /// The error at the function's name for an argument `a` that no parameter receives, with
    /// the fix that adds a parameter for it.
    fn lacks(&self, code: &'static str, message: String, a: &Argument, help: String) -> Diagnostic {
        Diagnostic::error(code, self.env.file, message)
            .primary(self.f.name.span, format!("lacks `{a}`"))
            .secondary(self.b.span, "bound here")
            .help(help)
            .fix(
                format!("Add the parameter `{}`", suggested_parameter(a)),
                add_parameter(self.env, self.f, self.schema, a),
            )
    }

    /// Parameter `k`, an attribute, receives the tensor argument `a`.
    fn tensor_as_attribute(&self, a: &Argument, k: usize) -> Option<Diagnostic> {
        let (q, p) = (&self.b.qualname, &self.params[k]);
        let Kind::Attr(kind, _) = p.kind else { return None };
        if !a.ty.is_tensor_like() {
            return None;
        }
        Some(
            Diagnostic::error(codes::TENSOR_AS_ATTRIBUTE, self.env.file, format!("`{}` is `{}` in `{q}`, but the translation takes it as a `{}` attribute", a.name, a.ty, kind.python_name()))
                .primary(p.span, "an attribute parameter")
                .secondary(self.b.span, "bound here")
                .help("tensors reach the translation as inputs: annotate the parameter with a tensor type such as `FLOAT` or a TypeVar"),
        )
    }

    /// Parameter `k`, an attribute, is of a type that cannot hold every value of argument `a`.
    fn attribute_cannot_hold(&self, a: &Argument, k: usize) -> Option<Diagnostic> {
        let (q, p) = (&self.b.qualname, &self.params[k]);
        let Kind::Attr(kind, _) = p.kind else { return None };
        // A trace-only translation receives the Python value whatever its annotation: torchlib
        // writes `dim: Optional[int]` for `int[1]? dim` and accepts an int or a list.
        let traced_list = self.b.trace_only && kind.list().is_some_and(|list| attribute_holds(list, &a.ty));
        if attribute_holds(kind, &a.ty) || traced_list {
            return None;
        }
        Some(
            Diagnostic::error(
                codes::ATTRIBUTE_CANNOT_HOLD,
                self.env.file,
                format!(
                    "{} `{}` attribute cannot hold `{q}`'s `{} {}`",
                    if kind.python_name().starts_with('i') { "an" } else { "a" },
                    kind.python_name(),
                    a.ty,
                    a.name
                ),
            )
            .primary(p.span, format!("declared `{}`", kind.python_name()))
            .secondary(self.b.span, "bound here")
            .help(format!("declare it as `{}`", suggested_parameter(a).split(" = ").next().unwrap_or(&a.name))),
        )
    }

    /// Parameter `k` is required, but argument `a` may be None.
    fn optional_required(&self, a: &Argument, k: usize) -> Option<Diagnostic> {
        let (q, p) = (&self.b.qualname, &self.params[k]);
        // `Tensor?`, and `int[1]?` or `Scalar?` as an input or an attribute: None omits it.
        let required = matches!(p.kind, Kind::Input { optional: false } | Kind::Attr(_, false));
        if !required || !a.ty.is_optional() || p.has_default {
            return None;
        }
        if self.b.trace_only {
            return Some(self.traced_none(a, p));
        }
        let (code, what, ty, test) = match p.kind {
            Kind::Attr(kind, _) => {
                let suggested = suggested_parameter(a);
                let ty = suggested.split(": ").nth(1).map(|t| t.split(" = ").next().unwrap_or(t).to_string());
                let test = format!(", and test `if {} is None:`", p.name);
                let ty = ty.unwrap_or(format!("Optional[{}]", kind.python_name()));
                (codes::OPTIONAL_ATTRIBUTE_REQUIRED, "attribute", ty, test)
            }
            _ => {
                let ty = format!("Optional[{}]", p.input_type.as_deref().unwrap_or("FLOAT"));
                (codes::OPTIONAL_TENSOR_REQUIRED, "input", ty, String::new())
            }
        };
        Some(
            Diagnostic::error(
                code,
                self.env.file,
                format!("`{}` is `{}` in `{q}` and may be None, but the translation requires it", a.name, a.ty),
            )
            .primary(p.span, format!("a required {what}"))
            .secondary(self.b.span, "bound here")
            .help(format!(
                "make it optional, keeping the schema's default: `{}: {ty}{}`{test}",
                p.name,
                if a.default.is_some() { " = None" } else { "" },
            )),
        )
    }

    /// Trace-only parameter `p` is required, but argument `a` may be None: the exporter passes
    /// None to the Python as it is, and only the body tells whether it copes (torchlib's
    /// `upsample_bicubic2d.vec` reads `output_size` only when `scale_factors` is None).
    fn traced_none(&self, a: &Argument, p: &TParam) -> Diagnostic {
        Diagnostic::warning(
            codes::TRACED_MAY_BE_NONE,
            self.env.file,
            format!(
                "`{}` is `{}` in `{}` and may be None, which the trace-only translation receives as it is",
                a.name, a.ty, self.b.qualname
            ),
        )
        .primary(p.span, "not annotated `Optional`")
        .secondary(self.b.span, "bound here")
        .help(format!(
            "if the body handles None, say so with `{}: Optional[...]`; if not, test `if {} is None:`",
            p.name, p.name
        ))
    }

    /// Argument `a` has a default, but parameter `k` has none: the exporter omits trailing
    /// defaults, and the translation would miss a value.
    fn default_required(&self, a: &Argument, k: usize) -> Option<Diagnostic> {
        let (q, p) = (&self.b.qualname, &self.params[k]);
        let text = a.default.as_ref()?;
        // An optional parameter's default is None whatever the source says: the Python package
        // passes None for an omitted optional argument.
        let none_default = matches!(p.kind, Kind::Input { optional: true } | Kind::Attr(_, true))
            && a.default.as_deref().and_then(DefaultValue::parse) == Some(DefaultValue::None);
        if p.has_default || none_default {
            return None;
        }
        let later_required: Vec<&str> =
            self.params[k + 1..].iter().filter(|q| !q.has_default).map(|q| q.name).collect();
        Some(
            Diagnostic::warning(
                codes::ATEN_DEFAULT_REQUIRED,
                self.env.file,
                format!("`{q}` gives `{}` the default `{text}`, but the translation requires a value", a.name),
            )
            .primary(p.span, "no default")
            .secondary(self.b.span, "bound here")
            .help(if later_required.is_empty() {
                format!("the exporter omits trailing defaults: declare `{}`", suggested_parameter(a))
            } else {
                format!(
                    "the exporter omits trailing defaults: declare `{}`, and give {} the schema's default{} too",
                    suggested_parameter(a),
                    later_required.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
                    if later_required.len() == 1 { "" } else { "s" }
                )
            }),
        )
    }

    /// Parameter `k`'s default differs from argument `a`'s: the exporter omits an argument equal
    /// to the schema's default, and the translation's is used instead.
    fn default_differs(&self, a: &Argument, k: usize) -> Option<Diagnostic> {
        let (q, p) = (&self.b.qualname, &self.params[k]);
        let text = a.default.as_ref()?;
        if !p.has_default || may_be_omitted(a) {
            return None;
        }
        let same = match (DefaultValue::parse(text), &p.default) {
            // The exporter passes a `dtype=None` as -1 (onnx-facts §6), which torchlib's
            // translations write as their default: both stand for "no dtype".
            (Some(DefaultValue::None), Some(PyValue::Int(d)))
                if a.ty.strip_optional().base_type() == BaseType::ScalarType =>
            {
                *d == -1 || (*d == FLOAT_DTYPE && is_factory(self.schema))
            }
            (Some(aten), Some(py)) => same_default(&aten, py),
            // A default that is not a plain constant cannot be compared.
            _ => true,
        };
        if same {
            return None;
        }
        Some(
            Diagnostic::warning(codes::DEFAULT_MISMATCH, self.env.file, format!("the default of `{}` differs from `{q}`'s `{text}`", a.name))
                .primary(p.default_span.unwrap_or(p.span), "differs from the schema")
                .secondary(self.b.span, "bound here")
                .help(match DefaultValue::parse(text) {
                    Some(DefaultValue::None) => format!(
                        "the exporter passes None when the program gives no value, and this default would stand for it: write `{}: Optional[{}] = None` and test `if {} is None:`",
                        p.name,
                        match p.kind { Kind::Attr(k, _) => k.python_name(), _ => "FLOAT" },
                        p.name
                    ),
                    _ => format!("the exporter omits arguments equal to the default, so this default is used instead: write `{}`", python_default(text)),
                }),
        )
    }

    /// Parameter `k` receives no argument and has no default: the exporter never passes it.
    fn extra_parameter(&self, k: usize) -> Option<Diagnostic> {
        let (q, p) = (&self.b.qualname, &self.params[k]);
        if p.has_default || p.kind == Kind::Unknown {
            return None;
        }
        Some(
            Diagnostic::error(
                codes::EXTRA_PARAMETER,
                self.env.file,
                format!("parameter `{}` matches no argument of `{q}`", p.name),
            )
            .primary(p.span, "the exporter never passes this")
            .secondary(self.b.span, "bound here")
            .help(format!("give it a default, or remove it; `{q}` takes {}", argument_list(self.schema))),
        )
    }

    /// The translation returns `n` outputs (counted at `span`), the schema another number.
    fn output_count(&self, n: usize, span: Span) -> Option<Diagnostic> {
        let q = &self.b.qualname;
        let want = self.schema.returns.len();
        if n == want || want == 0 {
            return None;
        }
        Some(
            Diagnostic::error(
                codes::ATEN_OUTPUT_COUNT,
                self.env.file,
                format!(
                    "`{q}` returns {want} value{}, but the translation returns {n}",
                    if want == 1 { "" } else { "s" }
                ),
            )
            .primary(span, format!("{n} output{}", if n == 1 { "" } else { "s" }))
            .secondary(self.b.span, "bound here")
            .help(format!("the schema returns `{}`", returns_text(self.schema))),
        )
    }
}

/// The edits that rename `f`'s parameter `from` to `to` throughout the function; none when `to`
/// already names something there, or the rename cannot be followed.
fn rename(f: &FunctionDef, from: &str, to: &str) -> Vec<Edit> {
    match (liveness::local_name_spans(f, from), liveness::local_name_spans(f, to)) {
        (Some(spans), Some(taken)) if taken.is_empty() && f.params.iter().all(|p| p.name.name != to) => {
            spans.into_iter().map(|s| Edit::replace(s, to)).collect()
        }
        _ => Vec::new(),
    }
}

/// The edit that appends a parameter for aten argument `a` to `f`'s signature, when appending
/// gives a valid signature that receives it: a positional argument must come next in order, a
/// parameter without a default cannot follow one with a default, and the annotation's names
/// must mean what they say in the module.
fn add_parameter(env: &ModuleEnv, f: &FunctionDef, schema: &FunctionSchema, a: &Argument) -> Vec<Edit> {
    let Some(last) = f.params.last() else { return Vec::new() };
    if f.params.iter().any(|p| p.kind != ParamKind::Normal) {
        return Vec::new();
    }
    let in_order =
        a.kwarg_only || schema.positional_arguments().position(|p| std::ptr::eq(p, a)) == Some(f.params.len());
    let text = suggested_parameter(a);
    let ordered = text.contains(" = ") || f.params.iter().all(|p| p.default.is_none());
    let names_resolve =
        ["float", "int", "bool", "str"].iter().all(|t| !text.contains(t) || env.names().get(t).is_none())
            && (!text.contains("Sequence[")
                || matches!(env.names().get("Sequence"), Some(Global::Typing(t)) if t == "Sequence"));
    if in_order && ordered && names_resolve {
        vec![Edit::insert(last.span.end, format!(", {text}"))]
    } else {
        Vec::new()
    }
}

fn argument_list(schema: &FunctionSchema) -> String {
    let names: Vec<String> = schema.arguments.iter().filter(|a| !a.is_out()).map(|a| format!("`{}`", a.name)).collect();
    if names.is_empty() {
        "no arguments".into()
    } else {
        names.join(", ")
    }
}

fn returns_text(schema: &FunctionSchema) -> String {
    let text = schema.to_string();
    text.rsplit_once(" -> ").map(|(_, r)| r.to_string()).unwrap_or_default()
}
