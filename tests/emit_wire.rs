//! `emit::wire` against prost: what `build` writes straight from the IR must be, byte for byte,
//! what prost encodes for the `FunctionProto` that `emit::proto::function` builds.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::emit::{proto, wire};
use onnxsc::ir::*;
use onnxsc::onnx::tensor::{Tensor, TensorData};
use onnxsc::onnx::AttrType;
use onnxsc::onnx::{ir_version, ElemType};
use prost::Message;

fn prost_bytes(f: &Function) -> Vec<u8> {
    proto::function(f).encode_to_vec()
}

fn wire_bytes(f: &Function) -> Vec<u8> {
    let mut out = Vec::new();
    wire::function(&mut out, f);
    out
}

fn corpus() -> Vec<Function> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs = Vec::new();
    for dir in ["examples", "tests/cases/ok", "tests/cases/warnings", "tests/python/differential"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "onnxs")) {
            let text = std::fs::read_to_string(&p).expect("a readable case");
            inputs.push((p.display().to_string(), text));
        }
    }
    // One at a time: a case may define what another does.
    inputs.into_iter().flat_map(|input| onnxsc::driver::compile_sources(vec![input]).functions).collect()
}

#[test]
fn every_function_of_the_corpus_is_written_as_prost_writes_it() {
    let functions = corpus();
    assert!(functions.len() > 200, "only {} functions", functions.len());
    for f in &functions {
        assert_eq!(wire_bytes(f), prost_bytes(f), "{}", f.name);
        assert_eq!(ir_version::for_function_fields(&proto::function(f)), wire::FUNCTION_FIELDS_IR);
    }
}

fn tensor_of(elem: ElemType, dims: Vec<i64>, data: TensorData) -> AttrValue {
    AttrValue::Tensor(Tensor { elem, dims, data })
}

/// Every attribute value and tensor representation, values that need long varints, and
/// a graph with typed inputs: what the corpus may not hold.
#[test]
fn every_kind_of_value_is_written_as_prost_writes_it() {
    let long = "n".repeat(300);
    let values = vec![
        AttrValue::Float(-0.0),
        AttrValue::Float(f32::NAN),
        AttrValue::Int(-1),
        AttrValue::Int(i64::MIN),
        AttrValue::Str(String::new()),
        AttrValue::Str(long.clone()),
        AttrValue::Floats(vec![]),
        AttrValue::Floats(vec![1.5, -2.0]),
        AttrValue::Ints(vec![0, -5, 1 << 40]),
        AttrValue::Strs(vec![String::new(), "a".into()]),
        AttrValue::Ref { name: "alpha".into(), ty: AttrType::Float },
        tensor_of(ElemType::Float, vec![2], TensorData::Floats(vec![1.0, f32::INFINITY])),
        tensor_of(ElemType::Float, vec![0], TensorData::Floats(vec![])),
        tensor_of(ElemType::Double, vec![], TensorData::Doubles(vec![0.1])),
        tensor_of(ElemType::Int64, vec![3], TensorData::Ints(vec![-1, 0, i64::MAX])),
        tensor_of(ElemType::Int32, vec![2], TensorData::Ints(vec![-7, 300])),
        tensor_of(ElemType::Uint8, vec![1], TensorData::Ints(vec![255])),
        tensor_of(ElemType::Uint64, vec![1], TensorData::Uints(vec![u64::MAX])),
        tensor_of(ElemType::Bool, vec![2], TensorData::Bools(vec![true, false])),
        tensor_of(ElemType::String, vec![2], TensorData::Strings(vec![long.clone(), String::new()])),
        tensor_of(ElemType::Float16, vec![1], TensorData::Raw(vec![0, 60])),
        tensor_of(ElemType::Float16, vec![0], TensorData::Raw(vec![])),
    ];
    let typed = |elem, shape| GraphInput { name: "i".into(), ty: Some(TensorType { elem, shape }) };
    let inner = Graph {
        name: "inner".into(),
        doc: Some("the body".into()),
        inputs: vec![
            GraphInput { name: "untyped".into(), ty: None },
            typed(ElemType::Int64, None),
            typed(ElemType::Float, Some(vec![])),
            typed(ElemType::Bool, Some(vec![Dim::Known(3), Dim::Symbolic("N".into()), Dim::Unknown])),
        ],
        nodes: vec![Node {
            domain: String::new(),
            op_type: "Identity".into(),
            inputs: vec![Some("i".into())],
            outputs: vec!["o".into()],
            attrs: vec![],
            source: None,
        }],
        outputs: vec!["o".into()],
    };
    let mut attrs: Vec<Attr> =
        values.iter().enumerate().map(|(k, v)| Attr { name: format!("a{k}"), value: v.clone() }).collect();
    attrs.push(Attr { name: "body".into(), value: AttrValue::Graph(inner) });
    let node = Node {
        domain: "com.example".into(),
        op_type: long.clone().into(),
        inputs: vec![None, Some("x".into()), Some(String::new())],
        outputs: vec!["y".into()],
        attrs,
        source: Some(SourceLocation { line: 1_000_000, column: 0 }),
    };
    let mut f = corpus().into_iter().find(|f| !f.attributes.is_empty()).expect("a function with attributes");
    f.nodes.push(node);
    f.doc = Some(long);
    f.source = Some(SourceLocation { line: 7, column: 4_294_967_295 });
    f.opset_imports.insert("com.example".into(), 1 << 35);
    assert_eq!(wire_bytes(&f), prost_bytes(&f));
}
