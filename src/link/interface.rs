//! What a call must look like: a function's inputs, outputs and typed attributes, read from its
//! `onnxsc.signature` metadata when present (it knows which inputs are optional and the type of
//! attributes without a default), else from the FunctionProto itself.

use crate::onnx::metadata::{self, SIGNATURE_KEY};
use crate::onnx::{attribute_kind, AttrType};
use crate::proto::onnx::{FunctionProto, NodeProto};
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct CallSignature {
    pub inputs: Vec<CallInput>,
    pub outputs: usize,
    pub attributes: Vec<CallAttribute>,
    /// Whether input optionality is known (from the metadata); a bare FunctionProto does not
    /// say which inputs may be left out.
    pub knows_optional: bool,
}

#[derive(Clone, Debug)]
pub struct CallInput {
    pub name: String,
    pub optional: bool,
}

#[derive(Clone, Debug)]
pub struct CallAttribute {
    pub name: String,
    /// Its type, when known.
    pub ty: Option<AttrType>,
}

impl CallSignature {
    pub fn of(f: &FunctionProto) -> CallSignature {
        let metadata =
            f.metadata_props.iter().find(|m| m.key() == SIGNATURE_KEY).and_then(|m| from_metadata(f, m.value()));
        metadata.unwrap_or_else(|| from_proto(f))
    }
}

/// The metadata's signature, if it parses and agrees with the proto (same inputs and outputs,
/// same attribute names); a stale or foreign one is ignored.
fn from_metadata(f: &FunctionProto, json: &str) -> Option<CallSignature> {
    let recorded = metadata::SignatureRecord::from_json(json)?;
    let inputs: Vec<CallInput> =
        recorded.inputs.into_iter().map(|i| CallInput { name: i.name, optional: i.optional }).collect();
    let attributes: Vec<CallAttribute> =
        recorded.attributes.into_iter().map(|a| CallAttribute { name: a.name, ty: Some(a.ty.onnx_type()) }).collect();
    let outputs = recorded.outputs.len();
    let same_inputs = inputs.iter().map(|i| &i.name).eq(f.input.iter());
    let mut declared: Vec<&str> =
        f.attribute.iter().map(String::as_str).chain(f.attribute_proto.iter().map(|a| a.name())).collect();
    let mut listed: Vec<&str> = attributes.iter().map(|a| a.name.as_str()).collect();
    declared.sort_unstable();
    listed.sort_unstable();
    (same_inputs && outputs == f.output.len() && declared == listed).then_some(CallSignature {
        inputs,
        outputs,
        attributes,
        knows_optional: true,
    })
}

/// From the proto alone: defaults carry their type; an attribute without one is typed by the
/// attributes in the body that reference it, if any.
fn from_proto(f: &FunctionProto) -> CallSignature {
    let mut referenced: HashMap<&str, AttrType> = HashMap::new();
    super::walk::each_node(&f.node, &super::walk::Scope::Graph, &mut |n, _, _| {
        for a in &n.attribute {
            if let (Some(r), Some(t)) = (a.ref_attr_name.as_deref(), a.r#type.and_then(AttrType::from_proto_code)) {
                referenced.entry(r).or_insert(t);
            }
        }
    });
    let attributes = f
        .attribute
        .iter()
        .map(|name| CallAttribute { name: name.clone(), ty: referenced.get(name.as_str()).copied() })
        .chain(f.attribute_proto.iter().map(|a| CallAttribute {
            name: a.name().to_string(),
            ty: attribute_kind(a).or_else(|| referenced.get(a.name()).copied()),
        }))
        .collect();
    CallSignature {
        inputs: f.input.iter().map(|name| CallInput { name: name.clone(), optional: true }).collect(),
        outputs: f.output.len(),
        attributes,
        knows_optional: false,
    }
}

/// What is wrong with `call` as a call of a function with this signature, one sentence each.
pub fn check_call(sig: &CallSignature, call: &NodeProto) -> Vec<String> {
    let mut problems = Vec::new();
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if call.input.len() > sig.inputs.len() {
        problems.push(format!(
            "it passes {} but the function takes {}",
            plural(call.input.len(), "input"),
            sig.inputs.len()
        ));
    } else if sig.knows_optional {
        let missing: Vec<&str> = sig
            .inputs
            .iter()
            .enumerate()
            .filter(|(i, f)| !f.optional && call.input.get(*i).is_none_or(|a| a.is_empty()))
            .map(|(_, f)| f.name.as_str())
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "it leaves out the required input{} {}",
                if missing.len() == 1 { "" } else { "s" },
                quoted(&missing)
            ));
        }
    }
    if call.output.len() > sig.outputs {
        problems.push(format!(
            "it takes {} but the function returns {}",
            plural(call.output.len(), "output"),
            sig.outputs
        ));
    }
    for a in &call.attribute {
        match sig.attributes.iter().find(|s| s.name == a.name()) {
            None => {
                let known: Vec<&str> = sig.attributes.iter().map(|s| s.name.as_str()).collect();
                let has =
                    if known.is_empty() { "has no attributes".to_string() } else { format!("has {}", quoted(&known)) };
                problems.push(format!(
                    "it passes the attribute `{}`, which the function does not declare (it {has})",
                    a.name()
                ));
            }
            Some(s) => {
                if let (Some(expected), Some(given)) = (s.ty, attribute_kind(a)) {
                    if expected != given {
                        problems.push(format!(
                            "its attribute `{}` is {} but the function declares {}",
                            a.name(),
                            given.proto_name(),
                            expected.proto_name()
                        ));
                    }
                }
            }
        }
    }
    problems
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}
