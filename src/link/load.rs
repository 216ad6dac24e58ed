//! Decoding models and libraries: one prost pass over the bytes, then the checks that catch a
//! file that is not a model, or a truncated one whose prefix still happens to decode. Each
//! reason to refuse a file (E0802) has its own help: only a file that does not decode may be
//! corrupt; one that breaks a rule of onnx.checker is told how to fix that rule.

use super::library::Library;
use crate::diagnostics::{codes, Diagnostic};
use crate::onnx::metadata::{TraceRecord, TRACE_KEY};
use crate::proto::onnx::{ModelProto, NodeProto, TensorProto};
use crate::schema::normalize_domain;
use prost::Message;
use std::collections::HashSet;

/// E0802 for a file that does not decode: all there is to say.
fn invalid(name: &str, why: impl std::fmt::Display) -> Box<Diagnostic> {
    refused(name, why, "the file may be truncated or corrupt, or not an ONNX model at all: export or build it again")
}

/// E0802 for a file that decodes but cannot be linked, with how to fix that reason.
fn refused(name: &str, why: impl std::fmt::Display, help: &str) -> Box<Diagnostic> {
    let d = Diagnostic::error(codes::INVALID_MODEL, 0, format!("{name} is not a usable ONNX model: {why}")).help(help);
    Box::new(d)
}

/// E0802 for a file that breaks a rule of onnx.checker: the rule says how to fix it.
fn breaks_rule(name: &str, p: &crate::validate::Problem) -> Box<Diagnostic> {
    refused(name, format!("{p}, which onnx.checker refuses"), p.rule.help())
}

/// Exporters always write these: a file without them is not an exported model, or is cut short.
const NOT_EXPORTED: &str =
    "ONNX exporters always write the IR version and the opset imports: the file was cut short, or is not an exported model; export it again";

/// The model to link: it must have a graph, an IR version and opset imports.
pub fn model(bytes: &[u8], name: &str) -> Result<ModelProto, Box<Diagnostic>> {
    check_decode_size(bytes, name)?;
    let m = ModelProto::decode(bytes).map_err(|e| invalid(name, e))?;
    if m.ir_version.is_none() {
        return Err(refused(name, "it has no IR version", NOT_EXPORTED));
    }
    if m.graph.is_none() {
        return Err(refused(
            name,
            "it has no graph",
            "a file without a graph is a library, not a model: pass the exported model first, then the libraries",
        ));
    }
    if m.opset_import.is_empty() {
        return Err(refused(name, "it imports no opset", NOT_EXPORTED));
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
        return Err(refused(
            name,
            format!("its nodes use the domain `{d}`, which it does not import"),
            "the opset imports follow the graph in the file, so a file cut short looks like this: export it again; if it is whole, add the import (`onnx.helper.make_opsetid`)",
        ));
    }
    // A model onnx.checker refuses would make an output it refuses too.
    if let Some(p) = crate::validate::model(&m).first() {
        return Err(breaks_rule(name, p));
    }
    Ok(m)
}

/// A library: a model (such as `onnxsc build` writes) whose `functions` are the library.
pub fn library(bytes: &[u8], name: &str) -> Result<Library, Box<Diagnostic>> {
    check_decode_size(bytes, name)?;
    let m = ModelProto::decode(bytes).map_err(|e| invalid(name, e))?;
    let traced = traced(&m, name)?;
    if m.functions.is_empty() && traced.is_none() {
        return Err(refused(
            name,
            "it defines no functions, so it is not a function library",
            "a library is an `onnxsc build` output, or `.onnxs` sources: pass the model first, then the libraries",
        ));
    }
    // External data would be relative to the library's directory, not the output's.
    let mut external = false;
    for f in &m.functions {
        each_tensor(&f.node, &mut |t| external |= is_external(t));
    }
    if external {
        return Err(refused(
            name,
            "its functions keep tensors in external data, which a library cannot carry",
            "build the library again with `onnxsc build`, which keeps its tensors in the file",
        ));
    }
    // A function onnx.checker refuses would make every model it is linked into refused too.
    for f in &m.functions {
        if let Some(p) = crate::validate::function(f).first() {
            return Err(breaks_rule(name, p));
        }
    }
    Ok(Library { name: name.to_string(), functions: m.functions, traced })
}

/// The library's trace-only translations, when its metadata records some.
fn traced(m: &ModelProto, name: &str) -> Result<Option<TraceRecord>, Box<Diagnostic>> {
    let Some(entry) = m.metadata_props.iter().find(|e| e.key.as_deref() == Some(TRACE_KEY)) else {
        return Ok(None);
    };
    match TraceRecord::from_json(entry.value.as_deref().unwrap_or_default()) {
        Some(record) => Ok(Some(record)),
        None => Err(refused(
            name,
            format!("its `{TRACE_KEY}` record is not one this onnxsc reads"),
            "build the library again with this onnxsc",
        )),
    }
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

/// The most memory decoding may take beyond the file's own size (E0808).
pub const MAX_DECODE_OVERHEAD: u64 = 1 << 30;

/// E0808 when decoding `bytes` would take more than [`MAX_DECODE_OVERHEAD`] beyond their size:
/// protobuf stores an empty message in two bytes, and prost makes a structure of hundreds.
pub fn check_decode_size(bytes: &[u8], name: &str) -> Result<(), Box<Diagnostic>> {
    let decoded = wire::decoded_size(bytes);
    if decoded <= bytes.len() as u64 + MAX_DECODE_OVERHEAD {
        return Ok(());
    }
    let d = Diagnostic::error(
        codes::MODEL_TOO_LARGE_TO_DECODE,
        0,
        format!(
            "{name} would take about {} MB of memory to decode, {} MB more than its size",
            decoded >> 20,
            (decoded - bytes.len() as u64) >> 20
        ),
    )
    .note(format!("onnxsc decodes a file only if it takes at most {} MB more than its size", MAX_DECODE_OVERHEAD >> 20))
    .help("the file holds millions of (mostly empty) messages: it is corrupt, or not an exported model; export or build it again");
    Err(Box::new(d))
}

/// An estimate of the memory prost takes to decode a `ModelProto`, from one pass over the
/// wire format: the size of each message's structure, and of each string and number list.
mod wire {
    use crate::proto::onnx::*;
    use std::mem::size_of;

    #[derive(Clone, Copy)]
    enum Kind {
        Model,
        Graph,
        Node,
        Attribute,
        Tensor,
        SparseTensor,
        ValueInfo,
        Type,
        TypeTensor,
        TypeNested,
        TypeMap,
        Shape,
        Function,
        Opset,
        Entry,
        Training,
        /// A message the estimate does not look into (its bytes count once).
        Other,
    }

    /// What a length-delimited field holds.
    enum Field {
        Message(Kind),
        /// A string or bytes; `true` when repeated (each element is a `String` or `Vec`).
        Bytes(bool),
        /// Packed numbers, decoded to this many bytes per byte of input at most.
        Packed(u64),
    }

    fn struct_size(k: Kind) -> u64 {
        (match k {
            Kind::Model => size_of::<ModelProto>(),
            Kind::Graph => size_of::<GraphProto>(),
            Kind::Node => size_of::<NodeProto>(),
            Kind::Attribute => size_of::<AttributeProto>(),
            Kind::Tensor => size_of::<TensorProto>(),
            Kind::SparseTensor => size_of::<SparseTensorProto>(),
            Kind::ValueInfo => size_of::<ValueInfoProto>(),
            Kind::Type | Kind::TypeNested | Kind::TypeMap => size_of::<TypeProto>(),
            Kind::TypeTensor => size_of::<type_proto::Tensor>(),
            Kind::Shape => size_of::<TensorShapeProto>(),
            Kind::Function => size_of::<FunctionProto>(),
            Kind::Opset => size_of::<OperatorSetIdProto>(),
            Kind::Entry => size_of::<StringStringEntryProto>(),
            Kind::Training | Kind::Other => 64,
        }) as u64
    }

    fn field(k: Kind, number: u64) -> Field {
        use Field::*;
        use Kind::*;
        match (k, number) {
            (Model, 7) => Message(Graph),
            (Model, 8) => Message(Opset),
            (Model, 14) => Message(Entry),
            (Model, 20) => Message(Training),
            (Model, 25) => Message(Function),
            (Graph, 1) => Message(Node),
            (Graph, 5) => Message(Tensor),
            (Graph, 11..=13) => Message(ValueInfo),
            (Graph, 15) => Message(SparseTensor),
            (Graph, 16) => Message(Entry),
            (Node, 1 | 2) => Bytes(true),
            (Node, 5) => Message(Attribute),
            (Node, 9) => Message(Entry),
            (Attribute, 5 | 10) => Message(Tensor),
            (Attribute, 6 | 11) => Message(Graph),
            (Attribute, 14 | 15) => Message(Type),
            (Attribute, 22 | 23) => Message(SparseTensor),
            (Attribute, 8) => Packed(8),
            (Attribute, 9) => Bytes(true),
            (Tensor, 1 | 5 | 7 | 11) => Packed(8),
            (Tensor, 6) => Bytes(true),
            (Tensor, 13 | 16) => Message(Entry),
            (SparseTensor, 1 | 2) => Message(Tensor),
            (SparseTensor, 3) => Packed(8),
            (ValueInfo, 2) => Message(Type),
            (ValueInfo, 4) => Message(Entry),
            (Type, 1 | 8) => Message(TypeTensor),
            (Type, 4 | 9) => Message(TypeNested),
            (Type, 5) => Message(TypeMap),
            (TypeTensor, 2) => Message(Shape),
            (TypeNested, 1) | (TypeMap, 2) => Message(Type),
            (Shape, 1) => Message(Other),
            (Function, 4..=6) => Bytes(true),
            (Function, 7) => Message(Node),
            (Function, 9) => Message(Opset),
            (Function, 11) => Message(Attribute),
            (Function, 12) => Message(ValueInfo),
            (Function, 14) => Message(Entry),
            (Training, 1 | 3) => Message(Graph),
            (Training, 2 | 4) => Message(Entry),
            (_, _) => Bytes(false),
        }
    }

    fn varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *bytes.get(*pos)?;
            *pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(value);
            }
        }
        None
    }

    /// The estimate for a whole `ModelProto`; a malformed file counts what was read (prost
    /// then reports it).
    pub fn decoded_size(bytes: &[u8]) -> u64 {
        let mut total = struct_size(Kind::Model);
        message(bytes, Kind::Model, 0, &mut total);
        total
    }

    fn message(bytes: &[u8], kind: Kind, depth: usize, total: &mut u64) -> Option<()> {
        // prost refuses deeper messages anyway.
        if depth > 100 {
            return None;
        }
        let mut pos = 0;
        while pos < bytes.len() {
            let key = varint(bytes, &mut pos)?;
            let (number, wire_type) = (key >> 3, key & 7);
            match wire_type {
                0 => {
                    varint(bytes, &mut pos)?;
                    *total += 8;
                }
                1 => {
                    pos += 8;
                    *total += 8;
                }
                5 => {
                    pos += 4;
                    *total += 8;
                }
                2 => {
                    let len = usize::try_from(varint(bytes, &mut pos)?).ok()?;
                    let body = bytes.get(pos..pos.checked_add(len)?)?;
                    pos += len;
                    match field(kind, number) {
                        Field::Message(Kind::Other) => *total += struct_size(Kind::Other) + len as u64,
                        Field::Message(k) => {
                            *total += struct_size(k);
                            message(body, k, depth + 1, total);
                        }
                        Field::Bytes(repeated) => *total += len as u64 + if repeated { 24 } else { 0 },
                        Field::Packed(per_byte) => *total += per_byte * len as u64,
                    }
                }
                _ => return None,
            }
        }
        Some(())
    }
}
