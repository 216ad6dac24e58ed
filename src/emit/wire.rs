//! IR functions written straight to protobuf bytes: the bytes prost writes for the message
//! `emit::proto::function` builds, without building it. Building and then encoding every
//! function's `FunctionProto` (a string copied for each name, a `Vec` for each list) was a tenth
//! of a large build.
//!
//! Fields go in the order prost writes them (as the generated structs declare them), with its
//! rules: an optional field is written when it is set, even to an empty string; a repeated one
//! element by element, or as one packed run where `onnx.proto` says `packed = true`.
//! `tests/emit_wire.rs` holds every function of the test corpus, and one with every kind of
//! attribute and tensor, to prost's bytes.

use crate::ir::*;
use crate::onnx::metadata::{SIGNATURE_KEY, SOURCE_KEY};
use crate::onnx::tensor::{Tensor, TensorData};
use crate::onnx::{ir_version, ElemType};

/// The IR version a function's fields need: every function carries its signature in
/// `metadata_props`, the newest of the fields [`ir_version::for_function_fields`] weighs.
pub const FUNCTION_FIELDS_IR: i64 = ir_version::FUNCTION_METADATA;

// Wire types.
const VARINT: u32 = 0;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

/// `f` as the field `field` of an enclosing message (a `ModelProto`'s `functions`, 25).
pub fn function_field(out: &mut Vec<u8>, field: u32, f: &Function) {
    delimited(out, field, |out| function(out, f));
}

/// The fields of `f`'s `FunctionProto`.
pub fn function(out: &mut Vec<u8>, f: &Function) {
    string(out, 1, &f.name);
    for i in &f.inputs {
        string(out, 4, &i.name);
    }
    for o in &f.outputs {
        string(out, 5, o);
    }
    for a in f.attributes.iter().filter(|a| a.default.is_none()) {
        string(out, 6, &a.name);
    }
    for n in &f.nodes {
        delimited(out, 7, |out| node(out, n, &f.source_file));
    }
    if let Some(doc) = &f.doc {
        string(out, 8, doc);
    }
    for (domain, version) in &f.opset_imports {
        delimited(out, 9, |out| {
            string(out, 1, domain);
            int(out, 2, *version);
        });
    }
    string(out, 10, &f.domain);
    for a in &f.attributes {
        if let Some(default) = &a.default {
            delimited(out, 11, |out| attribute(out, &a.name, default, ""));
        }
    }
    let json = super::signature_json::of(f).to_json();
    delimited(out, 14, |out| entry(out, SIGNATURE_KEY, |out| out.extend_from_slice(json.as_bytes())));
    if let Some(at) = &f.source {
        delimited(out, 14, |out| entry(out, SOURCE_KEY, |out| location(out, &f.source_file, at)));
    }
}

fn node(out: &mut Vec<u8>, n: &Node, file: &str) {
    for i in &n.inputs {
        string(out, 1, i.as_deref().unwrap_or_default());
    }
    for o in &n.outputs {
        string(out, 2, o);
    }
    string(out, 4, &n.op_type);
    for a in &n.attrs {
        delimited(out, 5, |out| attribute(out, &a.name, &a.value, file));
    }
    string(out, 7, &n.domain);
    if let Some(at) = &n.source {
        delimited(out, 9, |out| entry(out, SOURCE_KEY, |out| location(out, file, at)));
    }
}

fn attribute(out: &mut Vec<u8>, name: &str, value: &AttrValue, file: &str) {
    string(out, 1, name);
    match value {
        AttrValue::Float(f) => float(out, 2, *f),
        AttrValue::Int(i) => int(out, 3, *i),
        AttrValue::Str(s) => string(out, 4, s),
        AttrValue::Tensor(t) => delimited(out, 5, |out| tensor(out, t)),
        AttrValue::Graph(g) => delimited(out, 6, |out| graph(out, g, file)),
        AttrValue::Floats(v) => v.iter().for_each(|f| float(out, 7, *f)),
        AttrValue::Ints(v) => v.iter().for_each(|i| int(out, 8, *i)),
        AttrValue::Strs(v) => v.iter().for_each(|s| string(out, 9, s)),
        AttrValue::Ref { .. } => {}
    }
    int(out, 20, i64::from(value.attr_type().proto_code()));
    if let AttrValue::Ref { name, .. } = value {
        string(out, 21, name);
    }
}

fn tensor(out: &mut Vec<u8>, t: &Tensor) {
    for d in &t.dims {
        int(out, 1, *d);
    }
    int(out, 2, i64::from(t.elem.code()));
    // The typed field of each element type, as `proto::tensor` fills it.
    match &t.data {
        TensorData::Floats(v) => packed(out, 4, v, |out, f| out.extend_from_slice(&f.to_le_bytes())),
        TensorData::Ints(v) if t.elem == ElemType::Int64 => packed(out, 7, v, |out, i| varint(out, *i as u64)),
        // int32_data holds each as an int32, sign-extended on the wire.
        TensorData::Ints(v) => packed(out, 5, v, |out, i| varint(out, i64::from(*i as i32) as u64)),
        TensorData::Bools(v) => packed(out, 5, v, |out, b| varint(out, u64::from(*b))),
        TensorData::Strings(v) => v.iter().for_each(|s| string(out, 6, s)),
        TensorData::Raw(bytes) => field_bytes(out, 9, bytes),
        TensorData::Doubles(v) => packed(out, 10, v, |out, d| out.extend_from_slice(&d.to_le_bytes())),
        TensorData::Uints(v) => packed(out, 11, v, |out, u| varint(out, *u)),
    }
}

fn graph(out: &mut Vec<u8>, g: &Graph, file: &str) {
    for n in &g.nodes {
        delimited(out, 1, |out| node(out, n, file));
    }
    string(out, 2, &g.name);
    if let Some(doc) = &g.doc {
        string(out, 10, doc);
    }
    for i in &g.inputs {
        delimited(out, 11, |out| graph_input(out, i));
    }
    for o in &g.outputs {
        delimited(out, 12, |out| string(out, 1, o));
    }
}

/// A `ValueInfoProto`, typed where the type is known.
fn graph_input(out: &mut Vec<u8>, i: &GraphInput) {
    string(out, 1, &i.name);
    let Some(t) = &i.ty else { return };
    // TypeProto.tensor_type: the element type, and the shape when the rank is known.
    delimited(out, 2, |out| {
        delimited(out, 1, |out| {
            int(out, 1, i64::from(t.elem.code()));
            if let Some(dims) = &t.shape {
                delimited(out, 2, |out| {
                    for d in dims {
                        delimited(out, 1, |out| dimension(out, d));
                    }
                });
            }
        });
    });
}

fn dimension(out: &mut Vec<u8>, d: &Dim) {
    match d {
        Dim::Known(v) => int(out, 1, *v),
        Dim::Symbolic(p) => string(out, 2, p),
        Dim::Unknown => {}
    }
}

/// A `StringStringEntryProto` whose value `value` writes.
fn entry(out: &mut Vec<u8>, key: &str, value: impl FnOnce(&mut Vec<u8>)) {
    string(out, 1, key);
    delimited(out, 2, value);
}

/// `file:line:column`, as `proto::location` formats it.
fn location(out: &mut Vec<u8>, file: &str, at: &SourceLocation) {
    out.extend_from_slice(file.as_bytes());
    out.push(b':');
    decimal(out, at.line);
    out.push(b':');
    decimal(out, at.column);
}

fn decimal(out: &mut Vec<u8>, n: u32) {
    let (digits, start) = crate::digits::decimal(u64::from(n));
    out.extend_from_slice(&digits[start..]);
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire_type: u32) {
    varint(out, u64::from(field << 3 | wire_type));
}

/// An `int64` or `int32` field (negative values take ten bytes, as protobuf says).
fn int(out: &mut Vec<u8>, field: u32, v: i64) {
    key(out, field, VARINT);
    varint(out, v as u64);
}

fn float(out: &mut Vec<u8>, field: u32, f: f32) {
    key(out, field, FIXED32);
    out.extend_from_slice(&f.to_le_bytes());
}

fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    field_bytes(out, field, s.as_bytes());
}

fn field_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, LEN);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A packed repeated field: nothing when empty, else one run of the elements.
fn packed<T>(out: &mut Vec<u8>, field: u32, items: &[T], each: impl Fn(&mut Vec<u8>, &T)) {
    if !items.is_empty() {
        delimited(out, field, |out| items.iter().for_each(|x| each(out, x)));
    }
}

/// A length-delimited field (a message, or bytes written in pieces) whose body `body` writes.
/// The length goes before the body but is known after it: a byte is kept for it, enough for
/// most nodes and attributes, and a longer body is moved along to make room.
fn delimited(out: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    key(out, field, LEN);
    let at = out.len();
    out.push(0);
    body(out);
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        let mut prefix = Vec::with_capacity(10);
        varint(&mut prefix, len as u64);
        out.splice(at..=at, prefix);
    }
}
