//! The typed signature a function carries in its `metadata_props` (the JSON format:
//! docs/signature-format.md), written the same by both emitters ([`super::proto`],
//! [`super::wire`]).

use crate::ir::Function;
use crate::onnx::metadata;

/// The typed signature: what a consumer needs to call the function (attribute types are not
/// otherwise recorded for attributes without a default).
pub fn of(f: &Function) -> metadata::SignatureRecord {
    metadata::SignatureRecord {
        attributes: f
            .attributes
            .iter()
            .map(|a| metadata::AttributeRecord {
                default: a.default_repr.clone(),
                name: a.name.clone(),
                optional: a.optional,
                ty: a.kind,
            })
            .collect(),
        complex: f.complex,
        hints: f.hints.clone(),
        ignored: f.ignored.clone(),
        inputs: f
            .inputs
            .iter()
            .map(|i| metadata::InputRecord {
                default: i.default_repr.clone(),
                name: i.name.clone(),
                optional: i.optional,
                // The signature JSON spells types as the source does.
                ty: i.ty.as_ref().map(ToString::to_string),
            })
            .collect(),
        noqa: f.noqa.clone(),
        outputs: f
            .outputs
            .iter()
            .zip(&f.output_types)
            .map(|(name, ty)| metadata::OutputRecord { name: name.clone(), ty: ty.as_ref().map(ToString::to_string) })
            .collect(),
        parameters: f.parameters.clone(),
        torch_ops: f
            .torch_ops
            .iter()
            .map(|t| metadata::TorchOpRecord { name: t.qualname.clone(), outputs: t.outputs })
            .collect(),
        type_vars: f
            .type_vars
            .iter()
            .map(|(name, allowed)| (name.clone(), allowed.iter().map(|t| t.script_name().to_string()).collect()))
            .collect(),
        version: metadata::SIGNATURE_VERSION,
    }
}
