//! Decoding models and libraries: one prost pass over the bytes, then the checks that catch a
//! file that is not a model, or a truncated one whose prefix still happens to decode.

use super::Library;
use crate::diagnostics::{codes, Diagnostic};
use crate::proto::onnx::{ModelProto, NodeProto, TensorProto};
use crate::schema::normalize_domain;
use prost::Message;
use std::collections::HashSet;

fn invalid(name: &str, why: impl std::fmt::Display) -> Box<Diagnostic> {
    let d = Diagnostic::error(codes::INVALID_MODEL, 0, format!("{name} is not a usable ONNX model: {why}"))
        .help("the file may be truncated or corrupt, or not an ONNX model at all: export or build it again");
    Box::new(d)
}

/// The model to link: it must have a graph, an IR version and opset imports.
pub fn model(bytes: &[u8], name: &str) -> Result<ModelProto, Box<Diagnostic>> {
    let m = ModelProto::decode(bytes).map_err(|e| invalid(name, e))?;
    if m.ir_version.is_none() {
        return Err(invalid(name, "it has no IR version"));
    }
    if m.graph.is_none() {
        return Err(invalid(name, "it has no graph"));
    }
    if m.opset_import.is_empty() {
        return Err(invalid(name, "it imports no opset"));
    }
    // The imports follow the graph in the file: a model cut among them can still decode.
    let imported: HashSet<&str> = m.opset_import.iter().map(|o| normalize_domain(o.domain())).collect();
    let mut missing = None;
    super::walk::each_node(
        m.graph.as_ref().map_or(&[][..], |g| &g.node),
        &super::walk::Scope::Graph,
        &mut |n, _, _| {
            if missing.is_none() && !imported.contains(normalize_domain(n.domain())) {
                missing = Some(n.domain().to_string());
            }
        },
    );
    if let Some(d) = missing {
        return Err(invalid(name, format!("its nodes use the domain `{d}`, which it does not import")));
    }
    Ok(m)
}

/// A library: a model (such as `onnxsc build` writes) whose `functions` are the library.
pub fn library(bytes: &[u8], name: &str) -> Result<Library, Box<Diagnostic>> {
    let m = ModelProto::decode(bytes).map_err(|e| invalid(name, e))?;
    if m.functions.is_empty() {
        return Err(invalid(name, "it defines no functions, so it is not a function library"));
    }
    // External data would be relative to the library's directory, not the output's.
    let mut external = false;
    for f in &m.functions {
        each_tensor(&f.node, &mut |t| external |= is_external(t));
    }
    if external {
        return Err(invalid(name, "its functions keep tensors in external data, which a library cannot carry"));
    }
    Ok(Library { name: name.to_string(), functions: m.functions })
}

pub fn is_external(t: &TensorProto) -> bool {
    t.data_location == Some(1) || !t.external_data.is_empty()
}

/// Every tensor held by the nodes' attributes, subgraphs (and their initializers) included.
pub fn each_tensor<'a>(nodes: &'a [NodeProto], f: &mut dyn FnMut(&'a TensorProto)) {
    for n in nodes {
        for a in &n.attribute {
            a.t.iter().chain(&a.tensors).for_each(&mut *f);
            for s in a.sparse_tensor.iter().chain(&a.sparse_tensors) {
                s.values.iter().chain(&s.indices).for_each(&mut *f);
            }
            for g in a.g.iter().chain(&a.graphs) {
                g.initializer.iter().for_each(&mut *f);
                for s in &g.sparse_initializer {
                    s.values.iter().chain(&s.indices).for_each(&mut *f);
                }
                each_tensor(&g.node, f);
            }
        }
    }
}
