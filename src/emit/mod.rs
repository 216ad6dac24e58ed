//! Emission: the IR as ONNX protobuf messages ([`proto`]) or straight as their bytes ([`wire`]),
//! and as ONNX's textual syntax ([`text`]).

pub mod proto;
pub mod signature_json;
pub mod text;
pub mod wire;
