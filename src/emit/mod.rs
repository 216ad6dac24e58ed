//! Emission: the IR as ONNX protobuf ([`proto`]) and as ONNX's textual syntax ([`text`]).

pub mod proto;
pub mod text;
