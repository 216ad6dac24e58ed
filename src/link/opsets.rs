//! Opset imports: the model's, merged with those of the functions it calls; and the IR version
//! the output needs.
//!
//! A function may import another version of a domain than the model only if every operator it
//! uses resolves to the same schema at both versions (what onnx.checker requires, and what makes
//! inlined nodes mean the same in the model's opset). Anything else is a conflict.

use super::calls::{target, Target};
use super::library::Table;
use super::walk::{each_node, Scope};
use crate::diagnostics::{codes, Diagnostic};
use crate::onnx::ir_version;
use crate::proto::onnx::{ModelProto, OperatorSetIdProto};
use crate::schema::{self, normalize_domain, Resolution};
use std::collections::BTreeMap;

/// Adds the domains the functions import and the model does not (at the highest version any of
/// them imports), and reports each function whose operators would change meaning.
pub fn merge(model: &mut ModelProto, table: &Table, functions: &[usize], diags: &mut Vec<Diagnostic>) {
    let model_versions: BTreeMap<String, i64> =
        model.opset_import.iter().map(|o| (normalize_domain(o.domain()).to_string(), o.version())).collect();
    let mut added: BTreeMap<String, i64> = BTreeMap::new();
    for &id in functions {
        for o in &table.def(id).proto.opset_import {
            let d = normalize_domain(o.domain());
            if !model_versions.contains_key(d) {
                let v = added.entry(d.to_string()).or_insert(o.version());
                *v = (*v).max(o.version());
            }
        }
    }
    let merged = |d: &str| model_versions.get(d).or_else(|| added.get(d)).copied();
    for &id in functions {
        let def = table.def(id);
        for o in &def.proto.opset_import {
            let d = normalize_domain(o.domain());
            let (theirs, ours) = (o.version(), merged(d).unwrap_or(o.version()));
            if theirs == ours {
                continue;
            }
            if let Some(op) = changed_operator(table, id, d, theirs, ours) {
                let whose =
                    if model_versions.contains_key(d) { "the model imports" } else { "another function imports" };
                let domain = if d.is_empty() { "ai.onnx" } else { d };
                diags.push(
                    Diagnostic::error(
                        codes::OPSET_VERSION_CONFLICT,
                        0,
                        format!("`{}` imports {domain} version {theirs}, but {whose} version {ours}", def.qualname()),
                    )
                    .note(format!("`{op}` means something else in version {theirs} than in version {ours}"))
                    .help(format!(
                        "build the library for {domain} version {ours}, or export the model with version {theirs}"
                    )),
                );
            }
        }
    }
    for (d, v) in added {
        model.opset_import.push(OperatorSetIdProto { domain: Some(d), version: Some(v) });
    }
}

/// The first operator of `domain` in the function whose schema differs between the versions.
fn changed_operator(table: &Table, id: usize, domain: &str, a: i64, b: i64) -> Option<String> {
    let registry = schema::registry();
    let mut changed = None;
    each_node(&table.def(id).proto.node, &Scope::Graph, &mut |node, _, _| {
        if changed.is_some() || normalize_domain(node.domain()) != domain || target(table, node) != Target::Operator {
            return;
        }
        let since = |v| match registry.resolve(domain, node.op_type(), v) {
            Resolution::Found(s) => Some(s.since_version),
            _ => None,
        };
        if since(a) != since(b) {
            changed = Some(node.op_type().to_string());
        }
    });
    changed
}

/// The IR version the output needs: the model's, raised for its ai.onnx opset and for what the
/// functions it carries use (functions: 8; attribute defaults: 9; function value_info,
/// overloads and metadata: 10).
pub fn ir_version(model: &ModelProto) -> i64 {
    let onnx = model.opset_import.iter().filter(|o| normalize_domain(o.domain()).is_empty()).map(|o| o.version()).max();
    // The table says 8 for anything older than opset 18: leave older models alone.
    let ir = model.ir_version().max(onnx.filter(|v| *v >= 18).map(ir_version::for_onnx_opset).unwrap_or(0));
    model.functions.iter().map(ir_version::for_function_fields).fold(ir, i64::max)
}
