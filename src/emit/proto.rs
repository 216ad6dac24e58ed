//! Emission: IR functions to ONNX FunctionProtos, and a library model that carries them.

use crate::ir::*;
use crate::onnx::metadata::{
    LeftOutRecord, SourceRecord, TraceRecord, TracedFunctionRecord, CUSTOM_OPS_KEY, LEFT_OUT_KEY, SIGNATURE_KEY,
    SIGNATURE_VERSION, SOURCE_KEY, TRACE_KEY,
};
use crate::onnx::tensor::{Tensor, TensorData};
use crate::onnx::{ir_version, ElemType};
use crate::proto::onnx;
use prost::Message;
use std::collections::BTreeMap;

fn entry(key: &str, value: String) -> onnx::StringStringEntryProto {
    onnx::StringStringEntryProto { key: Some(key.into()), value: Some(value) }
}

fn location(file: &str, at: &SourceLocation) -> String {
    format!("{file}:{}:{}", at.line, at.column)
}

fn tensor(t: &Tensor) -> onnx::TensorProto {
    let mut p = onnx::TensorProto { dims: t.dims.clone(), data_type: Some(t.elem.code()), ..Default::default() };
    // The typed field of each element type (onnx-facts §1), as onnx.helper.make_tensor fills it.
    match &t.data {
        TensorData::Floats(v) => p.float_data = v.clone(),
        TensorData::Doubles(v) => p.double_data = v.clone(),
        TensorData::Ints(v) => {
            if t.elem == ElemType::Int64 {
                p.int64_data = v.clone();
            } else {
                p.int32_data = v.iter().map(|x| *x as i32).collect();
            }
        }
        TensorData::Uints(v) => p.uint64_data = v.clone(),
        TensorData::Bools(v) => p.int32_data = v.iter().map(|b| *b as i32).collect(),
        TensorData::Strings(v) => p.string_data = v.iter().map(|s| s.as_bytes().to_vec()).collect(),
        TensorData::Raw(bytes) => p.raw_data = Some(bytes.clone()),
    }
    p
}

fn attribute(a: &Attr, file: &str) -> onnx::AttributeProto {
    let mut p = onnx::AttributeProto {
        name: Some(a.name.clone()),
        r#type: Some(a.value.attr_type().proto_code()),
        ..Default::default()
    };
    match &a.value {
        AttrValue::Float(f) => p.f = Some(*f),
        AttrValue::Int(i) => p.i = Some(*i),
        AttrValue::Str(s) => p.s = Some(s.as_bytes().to_vec()),
        AttrValue::Floats(v) => p.floats = v.clone(),
        AttrValue::Ints(v) => p.ints = v.clone(),
        AttrValue::Strs(v) => p.strings = v.iter().map(|s| s.as_bytes().to_vec()).collect(),
        AttrValue::Tensor(t) => p.t = Some(tensor(t)),
        AttrValue::Graph(g) => p.g = Some(graph(g, file)),
        AttrValue::Ref { name, .. } => p.ref_attr_name = Some(name.clone()),
    }
    p
}

fn node(n: &Node, file: &str) -> onnx::NodeProto {
    onnx::NodeProto {
        input: n.inputs.iter().map(|i| i.clone().unwrap_or_default()).collect(),
        output: n.outputs.clone(),
        op_type: Some(n.op_type.to_string()),
        domain: Some(n.domain.clone()),
        attribute: n.attrs.iter().map(|a| attribute(a, file)).collect(),
        metadata_props: n.source.iter().map(|at| entry(SOURCE_KEY, location(file, at))).collect(),
        ..Default::default()
    }
}

fn graph(g: &Graph, file: &str) -> onnx::GraphProto {
    onnx::GraphProto {
        name: Some(g.name.clone()),
        doc_string: g.doc.clone(),
        input: g.inputs.iter().map(graph_input).collect(),
        node: g.nodes.iter().map(|n| node(n, file)).collect(),
        output: g
            .outputs
            .iter()
            .map(|o| onnx::ValueInfoProto { name: Some(o.clone()), ..Default::default() })
            .collect(),
        ..Default::default()
    }
}

/// A subgraph input, typed where its type is known.
fn graph_input(i: &GraphInput) -> onnx::ValueInfoProto {
    let r#type = i.ty.as_ref().map(|t| onnx::TypeProto {
        value: Some(onnx::type_proto::Value::TensorType(onnx::type_proto::Tensor {
            elem_type: Some(t.elem.code()),
            shape: t.shape.as_ref().map(|dims| onnx::TensorShapeProto { dim: dims.iter().map(dimension).collect() }),
        })),
        ..Default::default()
    });
    onnx::ValueInfoProto { name: Some(i.name.clone()), r#type, ..Default::default() }
}

fn dimension(d: &Dim) -> onnx::tensor_shape_proto::Dimension {
    use onnx::tensor_shape_proto::dimension::Value;
    let value = match d {
        Dim::Known(v) => Some(Value::DimValue(*v)),
        Dim::Symbolic(p) => Some(Value::DimParam(p.to_string())),
        Dim::Unknown => None,
    };
    onnx::tensor_shape_proto::Dimension { value, ..Default::default() }
}

pub fn function(f: &Function) -> onnx::FunctionProto {
    let no_default: Vec<String> = f.attributes.iter().filter(|a| a.default.is_none()).map(|a| a.name.clone()).collect();
    let attribute_proto = f
        .attributes
        .iter()
        .filter_map(|a| a.default.as_ref().map(|d| attribute(&Attr { name: a.name.clone(), value: d.clone() }, "")))
        .collect();
    onnx::FunctionProto {
        name: Some(f.name.clone()),
        domain: Some(f.domain.clone()),
        input: f.inputs.iter().map(|i| i.name.clone()).collect(),
        output: f.outputs.clone(),
        attribute: no_default,
        attribute_proto,
        node: f.nodes.iter().map(|n| node(n, &f.source_file)).collect(),
        doc_string: f.doc.clone(),
        opset_import: f
            .opset_imports
            .iter()
            .map(|(d, v)| onnx::OperatorSetIdProto { domain: Some(d.clone()), version: Some(*v) })
            .collect(),
        metadata_props: std::iter::once(entry(SIGNATURE_KEY, super::signature_json::of(f).to_json()))
            .chain(f.source.iter().map(|at| entry(SOURCE_KEY, location(&f.source_file, at))))
            .collect(),
        ..Default::default()
    }
}

/// What a library's model records besides its functions: the custom operators the sources
/// declare, and the trace-only translations (their signatures, as functions without bodies) with
/// the sources that run them.
#[derive(Clone, Copy, Default)]
pub struct LibraryMeta<'a> {
    pub custom_ops: &'a [String],
    pub traced: &'a [Function],
    /// Every module's name and text (empty without trace-only translations).
    pub sources: &'a [(String, String)],
    /// The functions a `build --skip-invalid` left out for their errors.
    pub left_out: &'a [LeftOutRecord],
}

/// A model whose `functions` are the library; its graph is empty. Opset imports are the union of
/// the functions' (the highest version of each domain) plus each function's own domain. The
/// declared custom operators are listed in its metadata when there are any, and so are the
/// trace-only translations ([`TRACE_KEY`]).
pub fn library_model<'f>(functions: &'f [Function], meta: LibraryMeta<'f>) -> onnx::ModelProto {
    let protos: Vec<onnx::FunctionProto> = functions.iter().map(function).collect();
    let ir = protos.iter().map(ir_version::for_function_fields).fold(ir_version::FUNCTION_METADATA, i64::max);
    let opsets = functions.iter().map(|f| (&f.domain, &f.opset_imports));
    onnx::ModelProto { functions: protos, ..library_header(opsets, meta, ir) }
}

/// The bytes of [`library_model`], with no `FunctionProto` built: each function is written
/// straight to bytes ([`super::wire`]), on every core.
pub fn library_bytes<'f>(functions: &'f [Function], meta: LibraryMeta<'f>) -> Vec<u8> {
    library_parts(functions, meta).concat()
}

/// The bytes of [`library_bytes`] in pieces, to be written one after the other: a model's header,
/// then the functions each core wrote. A large library is megabytes, and joining the pieces
/// would copy it once more into fresh memory.
pub fn library_parts<'f>(functions: &'f [Function], meta: LibraryMeta<'f>) -> Vec<Vec<u8>> {
    let bodies = crate::parallel::map_chunks(functions, |chunk| {
        let mut fields = FunctionFields::for_count(chunk.len());
        chunk.iter().for_each(|f| fields.push(f));
        fields.into_bytes()
    });
    assembled(functions.iter().map(|f| (&f.domain, &f.opset_imports)), bodies, meta)
}

/// The first part of [`library_parts`] for functions that were encoded as they were lowered
/// ([`FunctionFields`]), from their outlines: their fields follow it.
pub fn library_header_bytes<'f>(outlines: &'f [Outline], meta: LibraryMeta<'f>) -> Vec<u8> {
    header_bytes(outlines.iter().map(|f| (&f.domain, &f.opset_imports)), meta)
}

/// A library's header and then its functions' fields; `functions` are each function's domain
/// and opset imports.
fn assembled<'f>(
    functions: impl Iterator<Item = (&'f String, &'f BTreeMap<String, i64>)> + Clone,
    bodies: Vec<Vec<u8>>,
    meta: LibraryMeta<'f>,
) -> Vec<Vec<u8>> {
    let mut parts = vec![header_bytes(functions, meta)];
    parts.extend(bodies);
    parts
}

fn header_bytes<'f>(
    functions: impl Iterator<Item = (&'f String, &'f BTreeMap<String, i64>)> + Clone,
    meta: LibraryMeta<'f>,
) -> Vec<u8> {
    let header = library_header(functions, meta, super::wire::FUNCTION_FIELDS_IR);
    // prost writes a message's fields in field-number order, and `functions` (25) is followed
    // only by `configuration` (26), which a library leaves empty: the header's bytes and then the
    // functions' are the whole model's.
    debug_assert!(header.functions.is_empty() && header.configuration.is_empty());
    header.encode_to_vec()
}

/// `ModelProto.functions` fields, one function after another: a piece of a library's bytes.
pub struct FunctionFields {
    bytes: Vec<u8>,
    /// How many functions the piece is expected to hold.
    count: usize,
}

impl FunctionFields {
    pub fn for_count(count: usize) -> FunctionFields {
        FunctionFields { bytes: Vec::new(), count }
    }

    pub fn push(&mut self, f: &Function) {
        let first = self.bytes.is_empty();
        super::wire::function_field(&mut self.bytes, MODEL_FUNCTIONS_FIELD, f);
        // The functions of one library are alike in size: room for the rest of the piece at the
        // first one's, so that the buffer is not grown (and copied) a dozen times, and a
        // sixteenth more, as later names and line numbers have more digits (growing once at the
        // end copied the whole piece); room never written is never touched.
        if first {
            let rest = self.bytes.len() * self.count;
            self.bytes.reserve(rest + rest / 16);
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// The library model's `metadata_props`: the custom operators and the trace-only translations,
/// when there are any.
fn library_metadata(meta: LibraryMeta) -> Vec<onnx::StringStringEntryProto> {
    let mut out = Vec::new();
    if !meta.custom_ops.is_empty() {
        out.push(entry(CUSTOM_OPS_KEY, serde_json::json!(meta.custom_ops).to_string()));
    }
    if !meta.left_out.is_empty() {
        out.push(entry(LEFT_OUT_KEY, serde_json::json!(meta.left_out).to_string()));
    }
    if let Some(record) = trace_record(meta) {
        out.push(entry(TRACE_KEY, record.to_json()));
    }
    out
}

/// The record of a library's trace-only translations, when it has any.
pub fn trace_record(meta: LibraryMeta) -> Option<TraceRecord> {
    if meta.traced.is_empty() {
        return None;
    }
    Some(TraceRecord {
        functions: meta
            .traced
            .iter()
            .map(|f| TracedFunctionRecord {
                doc: f.doc.clone(),
                domain: f.domain.clone(),
                name: f.name.clone(),
                signature: super::signature_json::of(f),
                source: f.source.as_ref().map(|at| location(&f.source_file, at)).unwrap_or_default(),
            })
            .collect(),
        sources: meta
            .sources
            .iter()
            .map(|(name, text)| SourceRecord { name: name.clone(), text: text.clone() })
            .collect(),
        version: SIGNATURE_VERSION,
    })
}

/// `ModelProto.functions`.
const MODEL_FUNCTIONS_FIELD: u32 = 25;

/// The library model without its functions, at IR version `function_ir` or what its opsets need.
fn library_header<'f>(
    functions: impl Iterator<Item = (&'f String, &'f BTreeMap<String, i64>)> + Clone,
    meta: LibraryMeta<'f>,
    function_ir: i64,
) -> onnx::ModelProto {
    let mut imports: BTreeMap<String, i64> = BTreeMap::new();
    let functions = functions.chain(meta.traced.iter().map(|f| (&f.domain, &f.opset_imports)));
    for (_, opsets) in functions.clone() {
        for (d, v) in opsets {
            let e = imports.entry(d.clone()).or_insert(*v);
            *e = (*e).max(*v);
        }
    }
    for (domain, _) in functions {
        imports.entry(domain.clone()).or_insert(1);
    }
    imports.entry(String::new()).or_insert(18);
    // What the functions' fields need (at least IR 10, as an empty library has always had), and
    // the library's ai.onnx opset.
    let ir = function_ir.max(ir_version::for_onnx_opset(imports[""]));
    onnx::ModelProto {
        ir_version: Some(ir),
        producer_name: Some("onnxsc".into()),
        producer_version: Some(env!("CARGO_PKG_VERSION").into()),
        graph: Some(onnx::GraphProto { name: Some("onnxsc_library".into()), ..Default::default() }),
        opset_import: imports
            .into_iter()
            .map(|(d, v)| onnx::OperatorSetIdProto { domain: Some(d), version: Some(v) })
            .collect(),
        metadata_props: library_metadata(meta),
        ..Default::default()
    }
}
