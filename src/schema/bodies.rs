//! The function bodies of ONNX's function-bodied operators (`onnxsc decompile --op`), from
//! `generated/onnx_functions.json`, which `scripts/gen_schemas.py` writes from the pinned onnx:
//! per schema version, the body of each opset it defines one for. A context-dependent body
//! (built by onnx per call) is recorded for one representative call: every input given, of
//! `float` where the constraint allows it, no attribute given; those onnx cannot build that
//! way are listed with why. The file is read only when a body is asked for.

use super::{registry, Resolution};
use crate::proto::onnx::FunctionProto;
use prost::Message;
use serde::Deserialize;

const DATA: &str = include_str!("generated/onnx_functions.json");

#[derive(Deserialize)]
struct File {
    header: Header,
    bodies: Vec<Entry>,
}

#[derive(Deserialize)]
struct Header {
    onnx: String,
    left_out: Vec<LeftOut>,
}

#[derive(Deserialize)]
struct LeftOut {
    domain: String,
    name: String,
    since_version: i64,
    why: String,
}

#[derive(Deserialize)]
struct Entry {
    domain: String,
    name: String,
    since_version: i64,
    opset: i64,
    context_dependent: bool,
    #[serde(default)]
    input_types: Vec<String>,
    function: String,
}

/// An operator's body at an opset.
pub struct Body {
    /// The `since_version` of the schema in force.
    pub since_version: i64,
    /// The opset the body was written for (its nodes' ONNX opset).
    pub opset: i64,
    /// For a context-dependent body, the input types it was built for.
    pub built_for: Option<Vec<String>>,
    pub function: FunctionProto,
}

/// Why there is no body.
pub enum NoBody {
    /// No such operator at that opset (the schema lookup's answer).
    Unknown,
    NotYet {
        first_version: i64,
    },
    /// The operator has no function body at that opset (`with_bodies` lists those that have).
    NoFunction {
        since_version: i64,
        with_bodies: Vec<String>,
    },
    /// onnx builds the body per call, and not for the representative call.
    LeftOut {
        why: String,
    },
    /// The embedded data does not read (a build from a broken regeneration).
    Corrupt(String),
}

fn file() -> Result<File, NoBody> {
    serde_json::from_str(DATA).map_err(|e| NoBody::Corrupt(e.to_string()))
}

/// The onnx version the bodies come from.
pub fn onnx_version() -> String {
    file().map(|f| f.header.onnx).unwrap_or_default()
}

/// The body of `domain::name` at `opset`: the schema in force there, and of its bodies the one
/// of the greatest opset not above `opset`.
pub fn function_body(domain: &str, name: &str, opset: i64) -> Result<Body, NoBody> {
    let since_version = match registry().resolve(domain, name, opset) {
        Resolution::Found(s) => s.since_version,
        Resolution::NotYet { first_version } => return Err(NoBody::NotYet { first_version }),
        Resolution::Unknown => return Err(NoBody::Unknown),
    };
    let file = file()?;
    let entry = file
        .bodies
        .iter()
        .filter(|e| e.domain == domain && e.name == name && e.since_version == since_version && e.opset <= opset)
        .max_by_key(|e| e.opset);
    let Some(entry) = entry else {
        if let Some(l) = file
            .header
            .left_out
            .iter()
            .find(|l| l.domain == domain && l.name == name && l.since_version == since_version)
        {
            return Err(NoBody::LeftOut { why: l.why.clone() });
        }
        let mut with_bodies: Vec<String> =
            file.bodies.iter().filter(|e| e.domain == domain && e.name == name).map(|e| e.opset.to_string()).collect();
        with_bodies.dedup();
        return Err(NoBody::NoFunction { since_version, with_bodies });
    };
    let bytes = hex(&entry.function).ok_or_else(|| NoBody::Corrupt("a body is not hexadecimal".into()))?;
    let function = FunctionProto::decode(bytes.as_slice()).map_err(|e| NoBody::Corrupt(e.to_string()))?;
    Ok(Body {
        since_version,
        opset: entry.opset,
        built_for: entry.context_dependent.then(|| entry.input_types.clone()),
        function,
    })
}

/// Every operator with a body: `(domain, name)`, sorted.
pub fn operators() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        file().map(|f| f.bodies.into_iter().map(|e| (e.domain, e.name)).collect()).unwrap_or_default();
    out.dedup();
    out
}

fn hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_normalization_has_a_body_per_opset() {
        let Ok(b) = function_body("", "LayerNormalization", 18) else { panic!("no body") };
        assert_eq!(b.since_version, 17);
        assert!(b.built_for.is_some());
        assert!(b.function.node.iter().any(|n| n.op_type() == "ReduceMean"));
        assert!(matches!(function_body("", "Add", 18), Err(NoBody::NoFunction { .. })));
        assert!(matches!(function_body("", "NoSuchOp", 18), Err(NoBody::Unknown)));
        assert!(operators().len() > 30);
    }
}
