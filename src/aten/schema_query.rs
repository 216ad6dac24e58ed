//! The schema query: what `onnxsc schema QUALNAME` prints and the language server's hover on a
//! `@torch_op` operator shows. A PyTorch operator's schema exactly as native_functions.yaml
//! writes it, then how each argument and return reaches a translation; a name without its
//! overload lists every overload; FX graphs' and Python's spellings are understood.

use crate::aten::{Argument, AtenRegistry, BaseType, FunctionSchema, Type};
use crate::diagnostics::suggest::did_you_mean;

/// Why a query has no answer, and what to do instead.
#[derive(Debug, PartialEq)]
pub struct NoSchema {
    pub message: String,
    pub help: String,
}

/// The answer to a query for `qualname` (any spelling [`normalize_qualname`] understands).
pub fn answer(registry: &AtenRegistry, qualname: &str) -> Result<String, NoSchema> {
    let qualname = normalize_qualname(qualname);
    let qualname = qualname.as_str();
    if let Some(s) = registry.lookup(qualname) {
        return Ok(describe_schema(s));
    }
    // A name without its overload: every overload.
    let overloads = registry.overloads(qualname);
    if !qualname.contains('.') && !overloads.is_empty() {
        let mut out = format!("`{qualname}` has {} overloads:\n", overloads.len());
        for o in &overloads {
            if let Some(s) = registry.lookup(&format!("{qualname}.{o}")) {
                out.push('\n');
                out.push_str(&describe_schema(s));
            }
        }
        return Ok(out);
    }
    Err(NoSchema { message: format!("no operator schema `{qualname}`"), help: schema_hint(qualname, registry) })
}

/// The spellings of an operator that FX graphs and Python print, as `namespace::name.overload`:
/// `aten.layer_norm.default`, `torch.ops.aten.add.Tensor`, `aten::gelu.default`.
pub fn normalize_qualname(qualname: &str) -> String {
    let q = qualname.trim();
    let q = q.strip_prefix("torch.ops.").unwrap_or(q);
    let q = match q.split_once("::") {
        Some(_) => q.to_string(),
        None => match q.split_once('.') {
            Some((ns, rest)) => format!("{ns}::{rest}"),
            None => q.to_string(),
        },
    };
    q.strip_suffix(".default").map(str::to_string).unwrap_or(q)
}

fn schema_hint(qualname: &str, registry: &AtenRegistry) -> String {
    let (ns, rest) = qualname.split_once("::").unwrap_or(("aten", qualname));
    let (name, _) = rest.split_once('.').unwrap_or((rest, ""));
    let overloads = registry.overloads(&format!("{ns}::{name}"));
    if !overloads.is_empty() {
        let list: Vec<String> = overloads
            .iter()
            .map(|o| if o.is_empty() { format!("{ns}::{name}") } else { format!("{ns}::{name}.{o}") })
            .collect();
        return format!("its overloads are {}", list.join(", "));
    }
    let candidates = registry.names().filter(|(n, _)| *n == ns).map(|(_, n)| n);
    match did_you_mean(name, candidates) {
        Some(s) => format!("did you mean `{ns}::{s}`?"),
        None => {
            "write it as `namespace::name.overload`, e.g. `aten::add.Tensor`, or `aten::gelu` for the default overload"
                .into()
        }
    }
}

/// How an aten argument reaches a translation, for `onnxsc schema`.
fn onnx_mapping(a: &Argument) -> String {
    if a.is_out() {
        return "not passed: the exporter translates the functional overload".into();
    }
    let ty = a.ty.strip_optional();
    let optional = a.ty.is_optional();
    let mapping = match ty {
        Type::Base(BaseType::Tensor) if optional => "optional tensor input (None when absent)".to_string(),
        Type::Base(BaseType::Tensor) => "tensor input".to_string(),
        Type::List(elem, _) if elem.base_type() == BaseType::Tensor => if elem.is_optional() {
            "input: a sequence of optional tensors"
        } else {
            "input: a sequence of tensors (Sequence[...])"
        }
        .to_string(),
        Type::Base(b) => match b {
            BaseType::Int | BaseType::SymInt => "attribute `int` (INT), or an INT64 tensor input".into(),
            BaseType::Float => "attribute `float` (FLOAT)".into(),
            BaseType::Scalar => "attribute `float` or `int`, or a tensor input".into(),
            BaseType::Bool | BaseType::SymBool => "attribute `bool` or `int` (INT)".into(),
            BaseType::Str => "attribute `str` (STRING)".into(),
            BaseType::ScalarType => "attribute `int`: an ONNX data type such as `INT64.dtype`".into(),
            BaseType::Layout | BaseType::Device | BaseType::MemoryFormat | BaseType::Generator => {
                "unused by translations; may be left out".into()
            }
            other => format!("no ONNX counterpart (`{}`)", other.as_str()),
        },
        Type::List(elem, _) => match elem.strip_optional().base_type() {
            BaseType::Int | BaseType::SymInt => "attribute `Sequence[int]` (INTS), or an INT64 tensor input".into(),
            BaseType::Float => "attribute `Sequence[float]` (FLOATS)".into(),
            BaseType::Bool => "attribute `Sequence[bool]` (INTS)".into(),
            BaseType::Scalar => "attribute `Sequence[float]` or `Sequence[int]`".into(),
            BaseType::Str => "attribute `Sequence[str]` (STRINGS)".into(),
            other => format!("no ONNX counterpart (`{}[]`)", other.as_str()),
        },
        Type::Optional(_) => "optional value".into(),
    };
    let mut notes = Vec::new();
    if optional && !ty.is_tensor_like() {
        notes.push("may be None".to_string());
    }
    if a.kwarg_only {
        notes.push("keyword-only: passed by name".to_string());
    }
    if let Some(d) = &a.default {
        notes.push(format!("default {d}"));
    }
    if notes.is_empty() {
        mapping
    } else {
        format!("{mapping}; {}", notes.join("; "))
    }
}

/// `onnxsc schema`: the schema exactly as native_functions.yaml writes it, then how each argument
/// and return maps to ONNX.
pub fn describe_schema(schema: &FunctionSchema) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "{schema}");
    let _ = writeln!(out);
    let rows: Vec<(String, String, String)> =
        schema.arguments.iter().map(|a| (a.name.clone(), a.ty.to_string(), onnx_mapping(a))).collect();
    let name_w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(8);
    let ty_w = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max(4);
    let _ = writeln!(out, "{:name_w$}  {:ty_w$}  onnx", "argument", "type");
    for (n, t, m) in &rows {
        let _ = writeln!(out, "{n:name_w$}  {t:ty_w$}  {m}");
    }
    let _ = writeln!(out);
    let _ =
        writeln!(out, "returns: {} output{}", schema.returns.len(), if schema.returns.len() == 1 { "" } else { "s" });
    for (i, r) in schema.returns.iter().enumerate() {
        let name = r.name.clone().unwrap_or_else(|| format!("#{i}"));
        let _ = writeln!(out, "  {name}: {}", r.ty);
    }
    out
}
