//! The answers to requests, from a [`Snapshot`]: hover, completion, signature help, go to
//! definition, document symbols and quick fixes. Every fact comes from the compiler: the
//! analysis of the document, the operator schemas ([`crate::schema`]) and the PyTorch schemas
//! of the compilation.

use super::context::{at_cursor, cursor, AtCursor, CallSite, Cursor};
use super::position::LineMap;
use super::snapshot::Snapshot;
use crate::driver::analysis::{Location as Loc, ModuleInfo};
use crate::driver::Analysis;
use crate::onnx::ElemType;
use crate::schema::{self, AttrDefault, FormalOption, OpSchema, Resolution};
use crate::sema::env::{Global, Opset};
use crate::sema::known_names::opset_by_name;
use crate::source::{FileId, Span};
use crate::syntax::ast::{ExprKind, Stmt, StmtKind};
use lsp_types::*;
use std::collections::HashMap;

// ---------------------------------------------------------------------------------------------
// Names

/// The document's own module in an analysis.
fn root(a: &Analysis) -> Option<&ModuleInfo> {
    a.modules.first()
}

/// What `a.b.c` means in `module`: a global, or a name of an imported `.onnxs` module, or an
/// opset of `onnxscript` (`onnxscript.opset18`).
fn resolve(a: &Analysis, module: &ModuleInfo, path: &[String]) -> Option<(Global, Option<Loc>)> {
    let first = module.globals.get(path.first()?)?;
    let mut current = (first.value.clone(), Some(first.defined));
    for part in &path[1..] {
        current = match &current.0 {
            Global::Module(key) => {
                if let Some(m) = a.module_by_namespace(key) {
                    let s = m.globals.get(part)?;
                    (s.value.clone(), Some(s.defined))
                } else if let Some(ns) = module.namespaces.get(key) {
                    (ns.get(part)?, None)
                } else {
                    (Global::Opset(opset_by_name(part)?), None)
                }
            }
            _ => return None,
        };
    }
    Some(current)
}

/// `op.Softmax`: the opset `op` names and the op's name.
fn op_call<'p>(a: &Analysis, module: &ModuleInfo, path: &'p [String]) -> Option<(Opset, &'p str)> {
    let (op, base) = path.split_last()?;
    match resolve(a, module, base)? {
        (Global::Opset(o), _) if !base.is_empty() => Some((o, op)),
        _ => None,
    }
}

fn op_schema(o: &Opset, name: &str) -> Option<&'static OpSchema> {
    match schema::registry().resolve(&o.domain, name, o.version) {
        Resolution::Found(s) => Some(s),
        _ => None,
    }
}

fn domain_name(domain: &str) -> &str {
    if domain.is_empty() {
        "ai.onnx"
    } else {
        domain
    }
}

fn default_text(d: &AttrDefault) -> String {
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    match d {
        AttrDefault::Float(f) => crate::sema::value::format_float(*f),
        AttrDefault::Int(i) => i.to_string(),
        AttrDefault::String(s) => format!("{s:?}"),
        AttrDefault::Floats(v) => list(v.iter().map(|f| crate::sema::value::format_float(*f)).collect()),
        AttrDefault::Ints(v) => list(v.iter().map(i64::to_string).collect()),
        AttrDefault::Strings(v) => list(v.iter().map(|s| format!("{s:?}")).collect()),
        AttrDefault::Other => "…".into(),
    }
}

/// `axis: int = -1`, `to: int` (required).
fn attribute_text(a: &schema::AttrSchema) -> String {
    match (&a.default, a.required) {
        (Some(d), _) => format!("{}: {} = {}", a.name, a.ty.name(), default_text(d)),
        (None, true) => format!("{}: {} (required)", a.name, a.ty.name()),
        (None, false) => format!("{}: {} (optional)", a.name, a.ty.name()),
    }
}

fn formal_text(f: &schema::FormalParam) -> String {
    match f.option {
        FormalOption::Single => format!("{}: {}", f.name, f.type_str),
        FormalOption::Optional => format!("{}: {} = None", f.name, f.type_str),
        FormalOption::Variadic => format!("*{}: {}", f.name, f.type_str),
    }
}

/// An op's call signature, onnxscript style: inputs, then `*`, then attributes.
fn op_signature(s: &OpSchema) -> (String, Vec<[u32; 2]>, Vec<String>) {
    let mut label = format!("{}(", s.name);
    let mut offsets = Vec::new();
    let mut names = Vec::new();
    let parts = s.inputs.iter().map(|i| (i.name.clone(), formal_text(i))).chain(
        s.attributes
            .iter()
            .map(|a| (a.name.clone(), attribute_text(a).replace(" (required)", "").replace(" (optional)", " = None"))),
    );
    for (k, (name, text)) in parts.enumerate() {
        if k > 0 {
            label.push_str(", ");
        }
        if k == s.inputs.len() && !s.attributes.is_empty() && k > 0 {
            label.push_str("*, ");
        }
        let start = label.encode_utf16().count() as u32;
        label.push_str(&text);
        offsets.push([start, label.encode_utf16().count() as u32]);
        names.push(name);
    }
    label.push(')');
    (label, offsets, names)
}

/// The hover of an op at the version its opset declares.
fn op_markdown(o: &Opset, var: &str, s: &OpSchema) -> String {
    let mut out = format!(
        "**{}** — `{}` operator, since version {} (`{var}` is {} version {})\n\n",
        s.name,
        domain_name(&s.domain),
        s.since_version,
        domain_name(&o.domain),
        o.version
    );
    if s.deprecated {
        out.push_str("**Deprecated** at this version.\n\n");
    }
    if let Some(summary) = schema::docs::summary(&s.domain, &s.name, s.since_version) {
        out.push_str(summary);
        out.push_str("\n\n");
    }
    let section = |title: &str, rows: Vec<String>, out: &mut String| {
        if !rows.is_empty() {
            out.push_str(&format!("{title}:\n"));
            for r in rows {
                out.push_str(&format!("- {r}\n"));
            }
            out.push('\n');
        }
    };
    let constraint =
        |t: &str| s.type_constraint(t).map(|c| format!(" ∈ {{{}}}", c.allowed.join(", "))).unwrap_or_default();
    let formal = |f: &schema::FormalParam| {
        let opt = match f.option {
            FormalOption::Single => "",
            FormalOption::Optional => " (optional)",
            FormalOption::Variadic => " (variadic)",
        };
        format!("`{}`: `{}`{opt}", f.name, f.type_str)
    };
    section("Inputs", s.inputs.iter().map(formal).collect(), &mut out);
    section("Outputs", s.outputs.iter().map(formal).collect(), &mut out);
    section("Attributes", s.attributes.iter().map(|a| format!("`{}`", attribute_text(a))).collect(), &mut out);
    section(
        "Type constraints",
        s.type_constraints.iter().map(|c| format!("`{}`{}", c.type_param, constraint(&c.type_param))).collect(),
        &mut out,
    );
    out.trim_end().to_string()
}

fn markdown(value: String, range: Option<Range>) -> Hover {
    Hover { contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }), range }
}

fn global_markdown(a: &Analysis, name: &str, g: &Global) -> Option<String> {
    Some(match g {
        Global::Opset(o) => format!("`{name}`: opset `{}` version {}", domain_name(&o.domain), o.version),
        Global::Function(id) => {
            let f = a.functions.get(*id)?;
            let mut s = format!("```python\ndef {}\n```", f.label);
            s.push_str(&format!("\n\nONNX function `{}` in domain `{}`", f.callee.name, f.callee.domain));
            if let Some(d) = &f.doc {
                s.push_str(&format!("\n\n{}", d.trim()));
            }
            s
        }
        Global::Const(v) => format!("`{name} = {}`: module constant", v.repr()),
        Global::TensorType(t) => format!("`{name}`: tensor type `{}` (ONNX data type {})", t.script_name(), t.code()),
        Global::TypeVar { name: n, allowed } => format!(
            "`{name}`: type variable `{n}` over {}",
            if allowed.is_empty() {
                "any tensor type".to_string()
            } else {
                allowed.iter().map(|t| t.script_name()).collect::<Vec<_>>().join(", ")
            }
        ),
        Global::TypeUnion(ts) => {
            format!("`{name}`: Union[{}]", ts.iter().map(|t| t.script_name()).collect::<Vec<_>>().join(", "))
        }
        Global::Module(key) => {
            format!("`{name}`: module `{}`", key.name())
        }
        _ => return None,
    })
}

fn torch_op_markdown(a: &Analysis, qualname: &str, start: u32) -> Option<String> {
    let s = a.registry.lookup(qualname)?;
    let mut out = format!("```text\n{}```", crate::aten::schema_query::describe_schema(s));
    let binding = a.bindings.iter().find(|b| b.span.start == start && b.qualname == qualname);
    if let Some(b) = binding.filter(|b| !b.parameters.is_empty()) {
        let f = a.functions.get(b.function).map(|f| f.name.as_str()).unwrap_or("the translation");
        out.push_str(&format!("\n\nHow the exporter calls `{f}`:\n"));
        for (arg, param) in &b.parameters {
            match param {
                Some(p) if p == arg => out.push_str(&format!("- `{arg}` → parameter `{p}`\n")),
                Some(p) => out.push_str(&format!("- `{arg}` → parameter `{p}` (renamed)\n")),
                None => out.push_str(&format!("- `{arg}` → no parameter\n")),
            }
        }
    }
    Some(out.trim_end().to_string())
}

pub fn hover(s: &Snapshot, pos: Position) -> Option<Hover> {
    let map = LineMap::new(&s.text);
    let offset = map.offset(pos);
    let a = s.analysis()?;
    match at_cursor(&s.text, offset)? {
        AtCursor::Str { value, start, end, in_torch_op: true } => {
            let current = s.current.as_ref().map(|c| c.analysis.as_ref()).unwrap_or(a);
            let md = torch_op_markdown(current, &value, start).or_else(|| torch_op_markdown(a, &value, start))?;
            Some(markdown(md, Some(map.range(Span { start, end }))))
        }
        AtCursor::Str { .. } => None,
        AtCursor::Name { path, start, end } => {
            let range = Some(map.range(Span { start, end }));
            // What lowering learned about this very occurrence.
            if let Some(c) = &s.current {
                let file = root(&c.analysis)?.file;
                let fact =
                    c.analysis.facts.iter().find(|f| f.file == file && f.span.start == start && f.span.end == end);
                if let Some(f) = fact {
                    return Some(markdown(format!("```python\n{}\n```", f.info.describe(&f.name)), range));
                }
            }
            let module = root(a)?;
            if let Some((o, op)) = op_call(a, module, &path) {
                let sch = op_schema(&o, op)?;
                return Some(markdown(op_markdown(&o, &path[..path.len() - 1].join("."), sch), range));
            }
            let (g, _) = resolve(a, module, &path)?;
            Some(markdown(global_markdown(a, path.last()?, &g)?, range))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Completion

fn item(
    label: String,
    kind: CompletionItemKind,
    detail: Option<String>,
    edit: Option<(Range, String)>,
) -> CompletionItem {
    CompletionItem {
        label,
        kind: Some(kind),
        detail,
        text_edit: edit.map(|(range, new_text)| CompletionTextEdit::Edit(TextEdit { range, new_text })),
        ..Default::default()
    }
}

/// At most this many aten names are listed at once; typing narrows them.
const MAX_ATEN_ITEMS: usize = 400;

pub fn completion(s: &Snapshot, pos: Position) -> Option<CompletionResponse> {
    let map = LineMap::new(&s.text);
    let offset = map.offset(pos);
    let a = s.analysis();
    let replace = |start: u32| map.range(Span { start, end: offset });
    let mut incomplete = false;
    let items: Vec<CompletionItem> = match cursor(&s.text, offset) {
        Cursor::TorchOpName { prefix, start } => {
            let registry = a.map(|a| &a.registry)?;
            let mut out = Vec::new();
            for (ns, name) in registry.names() {
                let base = format!("{ns}::{name}");
                if !base.starts_with(&prefix) && !prefix.starts_with(&base) {
                    continue;
                }
                for o in registry.overloads(&base) {
                    let label = if o.is_empty() { base.clone() } else { format!("{base}.{o}") };
                    if !label.starts_with(&prefix) {
                        continue;
                    }
                    let detail = registry.lookup(&label).map(|sch| sch.to_string());
                    out.push(item(label.clone(), CompletionItemKind::FUNCTION, detail, Some((replace(start), label))));
                }
                if out.len() >= MAX_ATEN_ITEMS {
                    incomplete = true;
                    break;
                }
            }
            out
        }
        Cursor::ImportFrom { module, prefix, start } => {
            let mut names: Vec<(String, CompletionItemKind, String)> = Vec::new();
            let opsets = module == "onnxscript" || module == "onnxscript.onnx_opset";
            let types = module == "onnxscript" || module == "onnxscript.onnx_types";
            if opsets {
                let registry = schema::registry();
                for (domain, prefix_name) in [("", "opset"), ("ai.onnx.ml", "opset_ai_onnx_ml")] {
                    for v in 1..=registry.max_version(domain).unwrap_or(0) {
                        names.push((
                            format!("{prefix_name}{v}"),
                            CompletionItemKind::MODULE,
                            format!("opset {} version {v}", domain_name(domain)),
                        ));
                    }
                }
            }
            if types {
                for t in ElemType::ALL {
                    names.push((
                        t.script_name().to_string(),
                        CompletionItemKind::CLASS,
                        format!("tensor type, ONNX data type {}", t.code()),
                    ));
                }
            }
            if module == "onnxscript" {
                names.push(("script".into(), CompletionItemKind::FUNCTION, "decorator: an ONNX function".into()));
                names.push((
                    "graph".into(),
                    CompletionItemKind::FUNCTION,
                    "decorator: a nested graph attribute".into(),
                ));
            }
            if module == "onnxscript.values" || module == "onnxscript" {
                names.push((
                    "Opset".into(),
                    CompletionItemKind::CLASS,
                    "a custom opset: Opset(domain, version)".into(),
                ));
            }
            names
                .into_iter()
                .filter(|(n, _, _)| n.starts_with(&prefix))
                .map(|(n, k, d)| item(n.clone(), k, Some(d), Some((replace(start), n))))
                .collect()
        }
        Cursor::Member { base, prefix, start } => {
            let a = a?;
            let module = root(a)?;
            match resolve(a, module, &base)?.0 {
                Global::Opset(o) => {
                    let registry = schema::registry();
                    registry
                        .op_names(&o.domain)
                        .into_iter()
                        .filter(|n| n.starts_with(&prefix))
                        .filter_map(|n| op_schema(&o, n))
                        .map(|sch| {
                            let mut it = item(
                                sch.name.clone(),
                                CompletionItemKind::FUNCTION,
                                Some(format!("{} since version {}", domain_name(&sch.domain), sch.since_version)),
                                Some((replace(start), sch.name.clone())),
                            );
                            it.deprecated = Some(sch.deprecated);
                            it
                        })
                        .collect()
                }
                Global::Module(key) => {
                    let names: Vec<(String, Global)> = match a.module_by_namespace(&key) {
                        Some(m) => m.globals.iter().map(|(n, s)| (n.clone(), s.value.clone())).collect(),
                        None => module
                            .namespaces
                            .get(&key)
                            .map(|ns| ns.names.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                            .unwrap_or_default(),
                    };
                    names
                        .into_iter()
                        .filter(|(n, _)| n.starts_with(&prefix))
                        .map(|(n, g)| {
                            let kind = if matches!(g, Global::Function(_)) {
                                CompletionItemKind::FUNCTION
                            } else {
                                CompletionItemKind::CONSTANT
                            };
                            item(n.clone(), kind, global_markdown(a, &n, &g), Some((replace(start), n)))
                        })
                        .collect()
                }
                _ => Vec::new(),
            }
        }
        Cursor::Call(c) if c.at_argument_start => keyword_items(s, &c, replace(c.start)).unwrap_or_default(),
        Cursor::Call(_) | Cursor::Other => Vec::new(),
    };
    Some(CompletionResponse::List(CompletionList { is_incomplete: incomplete, items }))
}

/// Inside `op.X(`: the attributes not given yet, as `name=`; inside `f(`, the attribute
/// parameters of the function.
fn keyword_items(s: &Snapshot, c: &CallSite, range: Range) -> Option<Vec<CompletionItem>> {
    let a = s.analysis()?;
    let module = root(a)?;
    let fresh = |n: &str| n.starts_with(&c.prefix) && !c.keywords.iter().any(|k| k == n);
    let items = match resolve(a, module, &c.callee).map(|r| r.0) {
        Some(Global::Function(id)) => {
            let f = a.functions.get(id)?;
            f.callee
                .params
                .iter()
                .zip(&f.params)
                .filter(|(p, _)| p.attr.is_some() && fresh(&p.name))
                .map(|(p, text)| {
                    item(
                        format!("{}=", p.name),
                        CompletionItemKind::PROPERTY,
                        Some(text.clone()),
                        Some((range, format!("{}=", p.name))),
                    )
                })
                .collect()
        }
        _ => {
            let (o, op) = op_call(a, module, &c.callee)?;
            let sch = op_schema(&o, op)?;
            sch.attributes
                .iter()
                .filter(|at| fresh(&at.name))
                .map(|at| {
                    item(
                        format!("{}=", at.name),
                        CompletionItemKind::PROPERTY,
                        Some(attribute_text(at)),
                        Some((range, format!("{}=", at.name))),
                    )
                })
                .collect()
        }
    };
    Some(items)
}

// ---------------------------------------------------------------------------------------------
// Signature help

pub fn signature_help(s: &Snapshot, pos: Position) -> Option<SignatureHelp> {
    let map = LineMap::new(&s.text);
    let Cursor::Call(c) = cursor(&s.text, map.offset(pos)) else { return None };
    let a = s.analysis()?;
    let module = root(a)?;
    let (label, offsets, names, documentation, inputs) = match resolve(a, module, &c.callee) {
        Some((Global::Function(id), _)) => {
            let f = a.functions.get(id)?;
            let mut label = format!("{}(", f.name);
            let mut offsets = Vec::new();
            for (k, p) in f.params.iter().enumerate() {
                if k > 0 {
                    label.push_str(", ");
                }
                let start = label.encode_utf16().count() as u32;
                label.push_str(p);
                offsets.push([start, label.encode_utf16().count() as u32]);
            }
            label.push(')');
            let names: Vec<String> = f.callee.params.iter().map(|p| p.name.clone()).collect();
            let n = names.len();
            (label, offsets, names, f.doc.clone(), n)
        }
        _ => {
            let (o, op) = op_call(a, module, &c.callee)?;
            let sch = op_schema(&o, op)?;
            let (label, offsets, names) = op_signature(sch);
            let doc = schema::docs::summary(&sch.domain, &sch.name, sch.since_version).map(String::from);
            let inputs = if sch.inputs.last().is_some_and(|i| i.option == FormalOption::Variadic) {
                usize::MAX
            } else {
                sch.inputs.len()
            };
            (label, offsets, names, doc, inputs)
        }
    };
    let active = match &c.keyword {
        Some(k) => names.iter().position(|n| n == k),
        // A variadic input takes every positional argument from its position on.
        None if inputs == usize::MAX => Some(c.active.min(names.len().saturating_sub(1))),
        None => Some(c.active).filter(|i| *i < names.len()),
    };
    let parameters = offsets
        .iter()
        .map(|o| ParameterInformation { label: ParameterLabel::LabelOffsets(*o), documentation: None })
        .collect();
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label,
            documentation: documentation
                .map(|d| Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: d })),
            parameters: Some(parameters),
            active_parameter: active.map(|i| i as u32),
        }],
        active_signature: Some(0),
        active_parameter: active.map(|i| i as u32),
    })
}

// ---------------------------------------------------------------------------------------------
// Navigation

/// The URI and text of a file of the analysis.
fn file_uri(s: &Snapshot, a: &Analysis, file: FileId) -> Option<Url> {
    if root(a).is_some_and(|m| m.file == file) {
        return Some(s.uri.clone());
    }
    Url::from_file_path(&a.module_of(file)?.key).ok()
}

fn location(s: &Snapshot, a: &Analysis, l: Loc) -> Option<Location> {
    let uri = file_uri(s, a, l.file)?;
    let text = if uri == s.uri { s.text.as_str() } else { a.sources.text(l.file) };
    Some(Location { uri, range: LineMap::new(text).range(l.span) })
}

pub fn definition(s: &Snapshot, pos: Position) -> Option<GotoDefinitionResponse> {
    let offset = LineMap::new(&s.text).offset(pos);
    let AtCursor::Name { path, start, end } = at_cursor(&s.text, offset)? else { return None };
    if let Some(c) = &s.current {
        let a = &c.analysis;
        let file = root(a)?.file;
        let fact = a.facts.iter().find(|f| f.file == file && f.span.start == start && f.span.end == end);
        if let Some(def) = fact.and_then(|f| f.definition) {
            return Some(GotoDefinitionResponse::Scalar(location(s, a, Loc { file, span: def })?));
        }
        if fact.is_some() {
            return None;
        }
    }
    let a = s.analysis()?;
    let (g, defined) = resolve(a, root(a)?, &path)?;
    let target = match g {
        Global::Function(id) => {
            let f = a.functions.get(id)?;
            Loc { file: f.callee.file, span: f.name_span }
        }
        _ => defined?,
    };
    Some(GotoDefinitionResponse::Scalar(location(s, a, target)?))
}

#[allow(deprecated, reason = "`DocumentSymbol::deprecated` is deprecated but has to be set")]
fn symbol(name: String, detail: Option<String>, kind: SymbolKind, range: Range, selection: Range) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range: selection,
        children: None,
    }
}

pub fn symbols(s: &Snapshot) -> Option<DocumentSymbolResponse> {
    let checked = s.known.as_ref()?;
    let a = &checked.analysis;
    let module = root(a)?;
    let ast = module.ast.as_ref()?;
    let map = LineMap::new(&checked.text);
    let by_span: HashMap<Span, &crate::driver::analysis::FunctionInfo> =
        a.functions.iter().filter(|f| f.callee.file == module.file).map(|f| (f.name_span, f)).collect();
    let mut out = Vec::new();
    // The module's statements, and those of its module-level `if`s (which may define functions).
    let mut stmts: Vec<&Stmt> = Vec::new();
    let mut pending: Vec<&Stmt> = ast.body.iter().rev().collect();
    while let Some(stmt) = pending.pop() {
        stmts.push(stmt);
        if let StmtKind::If { body, orelse, .. } = &stmt.kind {
            pending.extend(body.iter().chain(orelse).rev());
        }
    }
    for stmt in stmts {
        match &stmt.kind {
            StmtKind::FunctionDef(def) => {
                let detail = by_span.get(&def.name.span).map(|f| f.label.clone());
                out.push(symbol(
                    def.name.name.clone(),
                    detail,
                    SymbolKind::FUNCTION,
                    map.range(stmt.extent()),
                    map.range(def.name.span),
                ));
            }
            StmtKind::Assign { .. } | StmtKind::AnnAssign { value: Some(_), .. } => {
                for t in targets_of(stmt) {
                    let ExprKind::Name(n) = &t.kind else { continue };
                    let Some(g) = module.globals.get(n) else { continue };
                    let kind = match g.value {
                        Global::Opset(_) => SymbolKind::NAMESPACE,
                        Global::Const(_) => SymbolKind::CONSTANT,
                        Global::TypeVar { .. } | Global::TypeUnion(_) => SymbolKind::TYPE_PARAMETER,
                        _ => SymbolKind::VARIABLE,
                    };
                    out.push(symbol(
                        n.clone(),
                        global_markdown(a, n, &g.value),
                        kind,
                        map.range(stmt.span),
                        map.range(t.span),
                    ));
                }
            }
            StmtKind::ImportFrom { names, .. } => {
                // Opsets imported under a name (`from onnxscript import opset18 as op`).
                for alias in names {
                    let bound = alias.alias.as_ref().unwrap_or(&alias.name.parts[0]);
                    if let Some(g @ Global::Opset(_)) = module.globals.get(&bound.name).map(|g| &g.value) {
                        out.push(symbol(
                            bound.name.clone(),
                            global_markdown(a, &bound.name, g),
                            SymbolKind::NAMESPACE,
                            map.range(stmt.span),
                            map.range(bound.span),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    Some(DocumentSymbolResponse::Nested(out))
}

fn targets_of(stmt: &Stmt) -> Vec<&crate::syntax::ast::Expr> {
    match &stmt.kind {
        StmtKind::Assign { targets, .. } => targets.iter().collect(),
        StmtKind::AnnAssign { target, value: Some(_), .. } => vec![target],
        _ => Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Quick fixes

pub fn code_actions(s: &Snapshot, range: Range) -> Option<CodeActionResponse> {
    let c = s.current.as_ref()?;
    let a = &c.analysis;
    let file = root(a)?.file;
    let map = LineMap::new(&c.text);
    let wanted = map.span(range);
    let mut out = Vec::new();
    for d in a.diagnostics.iter().filter(|d| d.file == file) {
        let Some(fix) = &d.fix else { continue };
        let at = d.primary_span().unwrap_or_default();
        if at.end < wanted.start || at.start > wanted.end {
            continue;
        }
        let edits =
            fix.edits.iter().map(|e| TextEdit { range: map.range(e.span), new_text: e.replacement.clone() }).collect();
        let diagnostic = super::checker::to_lsp_one(d, &map, &s.uri);
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: fix.message.clone(),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diagnostic]),
            edit: Some(WorkspaceEdit { changes: Some(HashMap::from([(s.uri.clone(), edits)])), ..Default::default() }),
            is_preferred: Some(true),
            ..Default::default()
        }));
    }
    Some(out)
}
