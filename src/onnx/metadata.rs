//! What onnxsc records in `metadata_props`: the keys, and the typed signature every compiled
//! function carries as JSON under [`SIGNATURE_KEY`] (the format is documented in
//! docs/signature-format.md). `emit` writes it, `link` reads it, and so does the Python package.

use super::AttrKind;
use crate::proto::onnx::StringStringEntryProto;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// A function's typed signature, as JSON ([`SignatureRecord`]).
pub const SIGNATURE_KEY: &str = "onnxsc.signature";

/// The version of the signature format this onnxsc writes and reads. It changes only when a
/// reader of the previous version would misread the new one; keys that readers may ignore are
/// added without changing it.
pub const SIGNATURE_VERSION: u32 = 1;

/// The source location (`file:line:column`) of a function's `def` and of each node: where an
/// error that the exporter or ONNX Runtime reports about a node comes from (docs/exporter.md).
pub const SOURCE_KEY: &str = "onnxsc.source";

/// The source location a function or a node records under [`SOURCE_KEY`], if it does.
pub fn recorded_source(props: &[StringStringEntryProto]) -> Option<&str> {
    props.iter().find(|e| e.key() == SOURCE_KEY).map(StringStringEntryProto::value)
}

/// The library model's list, as a JSON array, of the custom operators the sources declare with
/// `torch.library.define` (the Python package compares them with PyTorch's registrations).
pub const CUSTOM_OPS_KEY: &str = "onnxsc.custom_ops";

/// The library model's trace-only translations, as JSON ([`TraceRecord`]): their signatures and
/// the sources that run them for each call of the exporter (docs/library-format.md).
pub const TRACE_KEY: &str = "onnxsc.trace";

/// The library model's record, as a JSON array of [`LeftOutRecord`]s, of the functions a
/// `build --skip-invalid` left out for their errors: present only in such a partial library.
pub const LEFT_OUT_KEY: &str = "onnxsc.left_out";

/// A function a library leaves out for errors (docs/library-format.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeftOutRecord {
    pub name: String,
    /// Why: it has errors, its module has errors outside any function, or it calls a function
    /// that is left out.
    pub reason: String,
    /// `file:line:column` of its name.
    pub source: String,
    /// The PyTorch operators it was bound to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub torch_ops: Vec<String>,
}

/// The `onnxsc.trace` JSON. A trace-only translation has no FunctionProto: its nodes depend on
/// each call. The library keeps what a caller needs to call it and what onnxsc needs to run it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Each trace-only translation, in the order of the sources.
    pub functions: Vec<TracedFunctionRecord>,
    /// Every module of the compilation, by the name it was compiled under, with its text.
    pub sources: Vec<SourceRecord>,
    /// The format's version ([`SIGNATURE_VERSION`], shared with the signatures it holds).
    pub version: u32,
}

/// One trace-only translation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracedFunctionRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    pub domain: String,
    pub name: String,
    pub signature: SignatureRecord,
    /// `file:line:column` of its `def`.
    pub source: String,
}

/// One module's text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceRecord {
    pub name: String,
    pub text: String,
}

impl TraceRecord {
    /// The JSON text, as it is recorded.
    pub fn to_json(&self) -> String {
        // Cannot fail: every map key is a string and every value serialises.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The record of this JSON text, if it is one in a version this onnxsc reads.
    pub fn from_json(text: &str) -> Option<TraceRecord> {
        serde_json::from_str(text).ok().filter(|s: &TraceRecord| s.version <= SIGNATURE_VERSION)
    }
}

/// The `onnxsc.signature` JSON: what a caller needs to know to call the function, beyond what the
/// FunctionProto says (which inputs may be omitted, the type of attributes without a default,
/// defaults of inputs, the order of the source's parameters, the operators it translates).
///
/// The fields are declared in alphabetical order, which is the order they are written in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SignatureRecord {
    pub attributes: Vec<AttributeRecord>,
    /// `@torch_op(..., complex=True)`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub complex: bool,
    /// The parameters that receive a backend hint (`cudnn_enabled`, ...): a value passed to one
    /// of them cannot change what the function computes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
    /// The parameters the function's source deletes with `del`: left unread on purpose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
    pub inputs: Vec<InputRecord>,
    /// The warnings suppressed for the translation as a whole (`# noqa` on its decorators or
    /// `def` line, the file's `# onnxsc: noqa` and its configuration's ignores): codes, or
    /// prefixes of codes (`W` is every warning). The Python package does not raise those.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noqa: Vec<String>,
    pub outputs: Vec<OutputRecord>,
    /// Every parameter, inputs and attributes, in source order: how Python calls the function.
    #[serde(default)]
    pub parameters: Vec<String>,
    /// The PyTorch operators the function translates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub torch_ops: Vec<TorchOpRecord>,
    /// The element types each TypeVar named by an input or output type may stand for (empty: any).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub type_vars: BTreeMap<String, Vec<String>>,
    /// The format's version ([`SIGNATURE_VERSION`]); absent (0) in what onnxsc wrote before the
    /// format had one, which version 1 reads unchanged.
    #[serde(default)]
    pub version: u32,
}

/// A tensor input (a tensor, a sequence of tensors, or an optional one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputRecord {
    /// The source's default, passed when the caller omits the input (ONNX inputs have none);
    /// `null` for `= None`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub default: Option<serde_json::Value>,
    pub name: String,
    /// A caller may omit it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub optional: bool,
    /// Its annotation (`FLOAT`, `T`, `Sequence[FLOAT]`, ...); `null` when unannotated.
    #[serde(rename = "type")]
    pub ty: Option<String>,
}

/// An attribute, with the Python type it is annotated with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttributeRecord {
    /// The source's default (`null` for `= None`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub default: Option<serde_json::Value>,
    pub name: String,
    /// It may be None.
    #[serde(default, skip_serializing_if = "is_false")]
    pub optional: bool,
    #[serde(rename = "type")]
    pub ty: AttrKind,
}

/// An output, with its declared type (`null`: undeclared).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputRecord {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: Option<String>,
}

/// A PyTorch operator the function translates, and how many values it returns (`null`: no
/// schema of it is known).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TorchOpRecord {
    pub name: String,
    pub outputs: Option<usize>,
}

impl SignatureRecord {
    /// The JSON text, as it is recorded.
    pub fn to_json(&self) -> String {
        // Cannot fail: every map key is a string and every value serialises.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The signature of this JSON text, if it is one in a version this onnxsc reads.
    pub fn from_json(text: &str) -> Option<SignatureRecord> {
        serde_json::from_str(text).ok().filter(|s: &SignatureRecord| s.version <= SIGNATURE_VERSION)
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A present field as `Some`, even `null` (a default of None); an absent one is `None`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

impl Serialize for AttrKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.python_name())
    }
}

impl<'de> Deserialize<'de> for AttrKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AttrKind, D::Error> {
        let name = String::deserialize(d)?;
        AttrKind::from_python_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("`{name}` is not an attribute type")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_reads_back_as_written() {
        let text = r#"{"attributes":[{"default":null,"name":"dtype","optional":true,"type":"int"},{"name":"axes","type":"list[int]"}],"inputs":[{"name":"x","type":"FLOAT"},{"default":2.0,"name":"y","type":null}],"outputs":[{"name":"out","type":"T"}],"parameters":["x","y","dtype","axes"],"torch_ops":[{"name":"aten::add.Tensor","outputs":1}],"type_vars":{"T":["FLOAT","DOUBLE"]},"version":1}"#;
        let sig = SignatureRecord::from_json(text).expect("a signature");
        assert_eq!(sig.attributes[0].default, Some(serde_json::Value::Null), "a default of None");
        assert_eq!(sig.attributes[1].default, None, "no default");
        assert_eq!(sig.attributes[1].ty, AttrKind::Ints);
        assert!(!sig.inputs[0].optional);
        assert_eq!(sig.to_json(), text);
    }

    #[test]
    fn what_is_not_a_signature() {
        assert_eq!(SignatureRecord::from_json("{}"), None);
        assert_eq!(
            SignatureRecord::from_json(r#"{"attributes":[{"name":"a","type":"complex"}],"inputs":[],"outputs":[]}"#),
            None
        );
        let minimal = SignatureRecord::from_json(r#"{"attributes":[],"inputs":[],"outputs":[]}"#).expect("a signature");
        assert!(minimal.parameters.is_empty() && minimal.torch_ops.is_empty() && !minimal.complex);
        assert_eq!(minimal.version, 0, "written before the format had a version");
        let newer = r#"{"attributes":[],"inputs":[],"outputs":[],"version":2}"#;
        assert_eq!(SignatureRecord::from_json(newer), None, "a version this onnxsc does not know");
    }
}
