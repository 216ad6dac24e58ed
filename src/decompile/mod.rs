//! `onnxsc decompile`: ONNX functions back to `.onnxs` source that compiles to the same
//! functions (same nodes, attributes and values; value names kept where they are Python
//! identifiers).
//!
//! [`module`] writes one module for a list of `FunctionProto`s: the header (imports, one alias
//! per opset version, an `Opset` declaration per other domain, the recorded signatures'
//! TypeVars), then each function (`body`, with `control` deciding which `If`s and `Loop`s are
//! Python control flow and `signature` giving back a recorded source signature), with names made
//! Python identifiers (`names`) and values written as literals (`literal`). What `.onnxs` cannot
//! write (a sparse tensor, a graph-list attribute, a string that is not UTF-8, ...) is
//! [`Unsupported`], reported as E1101. The driver (`driver::decompile`) reads the inputs, turns
//! a model's graph ([`graph_function`]) or an operator's body into a function first, and checks
//! the output with [`compare`] (W1101). docs/decompile.md says what the output relies on.

mod body;
pub mod compare;
mod control;
mod literal;
mod names;
mod recorded_signature;

use crate::diagnostics::{codes, Diagnostic};
use crate::onnx::metadata::{InputRecord, OutputRecord, SignatureRecord, SIGNATURE_KEY, SIGNATURE_VERSION};
use crate::proto::onnx::{
    type_proto, FunctionProto, GraphProto, NodeProto, OperatorSetIdProto, StringStringEntryProto, ValueInfoProto,
};
use crate::schema::normalize_domain;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;

/// Something `.onnxs` cannot write.
#[derive(Debug)]
pub struct Unsupported {
    pub message: String,
}

impl Unsupported {
    pub fn new(message: impl Into<String>) -> Self {
        Unsupported { message: message.into() }
    }
}

/// The module-level names: opset aliases, the functions' Python names.
pub struct ModuleNames {
    /// `(domain, version)` → alias.
    aliases: BTreeMap<(String, i64), String>,
    /// `(domain, name)` of each function written → its Python name.
    functions: HashMap<(String, String), String>,
    /// The names the module binds, which no function may rebind.
    idents: names::Idents,
    /// The TypeVars the module declares, from the functions' recorded signatures.
    type_vars: recorded_signature::TypeVars,
}

impl ModuleNames {
    /// The alias of `domain` at `version` (the function's own import), else of the domain's
    /// greatest version in the module.
    fn alias(&self, domain: &str, version: Option<i64>) -> String {
        if let Some(v) = version {
            if let Some(a) = self.aliases.get(&(domain.to_string(), v)) {
                return a.clone();
            }
        }
        let found = self.aliases.iter().rev().find(|((d, _), _)| d == domain);
        found.map_or_else(|| "op".to_string(), |(_, a)| a.clone())
    }
}

/// The domains, and their versions, that `functions` use: their imports, their nodes' domains
/// (version 1 unless something imports them), and the functions' own domains.
fn versions(functions: &[FunctionProto], model_imports: &[OperatorSetIdProto]) -> BTreeMap<String, BTreeSet<i64>> {
    let mut out: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for f in functions {
        for o in &f.opset_import {
            out.entry(normalize_domain(o.domain()).to_string()).or_default().insert(o.version());
        }
    }
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    for f in functions {
        wanted.insert(normalize_domain(f.domain()).to_string());
        each_node(&f.node, &mut |n| {
            wanted.insert(normalize_domain(n.domain()).to_string());
        });
    }
    wanted.remove("this");
    for d in wanted {
        if !out.contains_key(&d) {
            let model =
                model_imports.iter().find(|o| normalize_domain(o.domain()) == d).map(OperatorSetIdProto::version);
            out.entry(d).or_default().insert(model.unwrap_or(1));
        }
    }
    out
}

fn each_node<'a>(nodes: &'a [NodeProto], f: &mut dyn FnMut(&'a NodeProto)) {
    for n in nodes {
        f(n);
        for a in &n.attribute {
            for g in a.g.iter().chain(&a.graphs) {
                each_node(&g.node, f);
            }
        }
    }
}

/// The alias of a domain's version: `op` for ONNX's (`op18` when there are several), `ml` for
/// ai.onnx.ml, the domain's name in identifier form for the others.
fn alias_base(domain: &str, version: i64, several: bool) -> String {
    let base = match domain {
        "" => "op".to_string(),
        "ai.onnx.ml" => "ml".to_string(),
        d => d.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect(),
    };
    if several {
        format!("{base}{version}")
    } else {
        base
    }
}

/// One module holding `functions`; `model_imports` gives the versions of domains no function
/// imports (a model's or library's own imports). `comment` opens the module, one `#` line per
/// line.
pub fn module(
    functions: &[FunctionProto],
    model_imports: &[OperatorSetIdProto],
    comment: &str,
) -> Result<String, Box<Diagnostic>> {
    let mut idents = names::Idents::default();
    for reserved in ["onnxscript", "script", "graph", "helper", "TensorProto", "Sequence", "Tuple", "torch_op"] {
        idents.reserve(reserved);
    }
    for elem in crate::onnx::ElemType::ALL {
        idents.reserve(elem.script_name());
    }
    let type_vars = recorded_signature::type_vars(functions);
    for name in type_vars.keys() {
        idents.reserve(name);
    }
    let versions = versions(functions, model_imports);
    let mut aliases = BTreeMap::new();
    for (domain, vs) in &versions {
        for v in vs {
            let alias = idents.fresh(&alias_base(domain, *v, vs.len() > 1), "opset");
            aliases.insert((domain.clone(), *v), alias);
        }
    }
    let mut python_names = HashMap::new();
    let mut ordered = Vec::new();
    for f in functions {
        let name = idents.fresh(f.name(), "function");
        python_names.insert((normalize_domain(f.domain()).to_string(), f.name().to_string()), name.clone());
        ordered.push(name);
    }
    let module = ModuleNames { aliases, functions: python_names, idents, type_vars };
    let mut needs = body::Needs::default();
    let mut text = String::new();
    for (f, name) in functions.iter().zip(&ordered) {
        let domain = normalize_domain(f.domain());
        let decorator = if domain.is_empty() || domain == "this" {
            "@script()".to_string()
        } else {
            format!("@script({})", module.alias(domain, None))
        };
        let writer = body::FunctionWriter::new(&module, f);
        let (function_text, function_needs) = writer.function(f, name, &decorator).map_err(|u| {
            Box::new(
                Diagnostic::error(
                    codes::CANNOT_DECOMPILE,
                    0,
                    format!("cannot decompile the function `{}`: it has {}", f.name(), u.message),
                )
                .help(HELP),
            )
        })?;
        needs.graph |= function_needs.graph;
        needs.types.elements.extend(function_needs.types.elements);
        needs.types.sequence |= function_needs.types.sequence;
        needs.types.tuple |= function_needs.types.tuple;
        needs.types.torch_op |= function_needs.types.torch_op;
        needs.make_tensor |= function_needs.make_tensor;
        needs.tensor_proto |= function_needs.tensor_proto;
        text.push_str("\n\n");
        text.push_str(&function_text);
    }
    Ok(header(&module, &needs, comment) + &text)
}

/// E1101's help.
const HELP: &str = "`.onnxs` cannot write this (docs/decompile.md lists what it cannot); decompile the other \
functions one by one with `--function NAME`";

/// The newest ONNX opset onnxscript exports (`onnxscript.onnx_opset`); newer ones are declared
/// with `Opset("", VERSION)`.
const MAX_ONNXSCRIPT_OPSET: i64 = 27;

/// The imports and opset declarations.
fn header(module: &ModuleNames, needs: &body::Needs, comment: &str) -> String {
    let mut out: String = comment.lines().map(|l| format!("# {l}\n")).collect();
    let types = &needs.types;
    let mut typing: Vec<&str> = Vec::new();
    if types.sequence {
        typing.push("Sequence");
    }
    if types.tuple {
        typing.push("Tuple");
    }
    if !module.type_vars.is_empty() {
        typing.push("TypeVar");
    }
    if module.type_vars.values().any(|m| m.len() > 1) {
        typing.push("Union");
    }
    if !typing.is_empty() {
        let _ = writeln!(out, "from typing import {}", typing.join(", "));
    }
    let declared_opset = |d: &str, v: i64| (!d.is_empty() && d != "ai.onnx.ml") || v > MAX_ONNXSCRIPT_OPSET;
    let custom = module.aliases.keys().any(|(d, v)| declared_opset(d, *v));
    if custom {
        out.push_str("import onnxscript\n");
    }
    if needs.make_tensor {
        out.push_str("from onnx import TensorProto, helper\n");
    } else if needs.tensor_proto {
        out.push_str("from onnx import TensorProto\n");
    }
    out.push_str(if needs.graph {
        "from onnxscript import graph, script\n"
    } else {
        "from onnxscript import script\n"
    });
    if types.torch_op {
        out.push_str("from onnxscript.function_libs.torch_lib.registration import torch_op\n");
    }
    let mut elements = types.elements.clone();
    for members in module.type_vars.values() {
        elements
            .extend(members.iter().filter_map(|m| crate::onnx::ElemType::from_script_name(m)).map(|e| e.script_name()));
    }
    if !elements.is_empty() {
        let names: Vec<&str> = elements.iter().copied().collect();
        let _ = writeln!(out, "from onnxscript.onnx_types import {}", names.join(", "));
    }
    for ((domain, version), alias) in &module.aliases {
        let _ = match domain.as_str() {
            "" if *version <= 23 => writeln!(out, "from onnxscript import opset{version} as {alias}"),
            "" if *version <= MAX_ONNXSCRIPT_OPSET => {
                writeln!(out, "from onnxscript.onnx_opset import opset{version} as {alias}")
            }
            "ai.onnx.ml" => writeln!(out, "from onnxscript.onnx_opset import opset_ai_onnx_ml{version} as {alias}"),
            _ => Ok(()),
        };
    }
    let mut declared = false;
    for ((domain, version), alias) in &module.aliases {
        if declared_opset(domain, *version) {
            if !declared {
                out.push('\n');
                declared = true;
            }
            let _ = writeln!(out, "{alias} = onnxscript.values.Opset({}, {version})", quoted(domain));
        }
    }
    if !module.type_vars.is_empty() {
        out.push('\n');
        out.push_str(&recorded_signature::type_var_declarations(&module.type_vars));
    }
    out
}

fn quoted(s: &str) -> String {
    literal::string(s.as_bytes()).unwrap_or_else(|_| format!("{s:?}"))
}

/// The element type of a graph input or output of a tensor type onnxscript names.
fn element_type(v: &ValueInfoProto) -> Option<String> {
    match v.r#type.as_ref()?.value.as_ref()? {
        type_proto::Value::TensorType(t) => {
            let elem = crate::onnx::ElemType::from_code(t.elem_type?.into())?;
            elem.has_script_type().then(|| elem.script_name().to_string())
        }
        _ => None,
    }
}

/// A model's main graph as a function of its inputs: its initializers that are not inputs
/// become `Constant` nodes first; the function imports the model's opsets.
pub fn graph_function(g: &GraphProto, imports: &[OperatorSetIdProto]) -> Result<FunctionProto, Box<Diagnostic>> {
    if !g.sparse_initializer.is_empty() {
        return Err(Box::new(
            Diagnostic::error(
                codes::CANNOT_DECOMPILE,
                0,
                "cannot decompile the main graph: it has sparse initializers",
            )
            .help(HELP),
        ));
    }
    let inputs: Vec<String> = g.input.iter().map(|i| i.name().to_string()).collect();
    let mut node = Vec::new();
    for t in g.initializer.iter().filter(|t| !inputs.iter().any(|i| i == t.name())) {
        node.push(NodeProto {
            output: vec![t.name().to_string()],
            op_type: Some("Constant".into()),
            attribute: vec![crate::proto::onnx::AttributeProto {
                name: Some("value".into()),
                r#type: Some(crate::onnx::AttrType::Tensor.proto_code()),
                t: Some(t.clone()),
                ..Default::default()
            }],
            ..Default::default()
        });
    }
    node.extend(g.node.iter().cloned());
    // The graph's element types, as the signature onnxsc would record for `x: FLOAT`.
    let record = SignatureRecord {
        attributes: Vec::new(),
        complex: false,
        hints: Vec::new(),
        ignored: Vec::new(),
        inputs: g
            .input
            .iter()
            .map(|i| InputRecord { default: None, name: i.name().into(), optional: false, ty: element_type(i) })
            .collect(),
        noqa: Vec::new(),
        outputs: g.output.iter().map(|o| OutputRecord { name: o.name().into(), ty: element_type(o) }).collect(),
        parameters: inputs.clone(),
        torch_ops: Vec::new(),
        type_vars: BTreeMap::new(),
        version: SIGNATURE_VERSION,
    };
    let signature = StringStringEntryProto { key: Some(SIGNATURE_KEY.into()), value: Some(record.to_json()) };
    Ok(FunctionProto {
        metadata_props: vec![signature],
        name: Some(g.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "main_graph".into())),
        domain: Some("this".into()),
        input: inputs,
        output: g.output.iter().map(|o| o.name().to_string()).collect(),
        opset_import: imports.to_vec(),
        node,
        doc_string: g.doc_string.clone(),
        ..Default::default()
    })
}
