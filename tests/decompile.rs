//! `onnxsc decompile`: snapshots of the text it writes for small functions (`If`, loops,
//! constants, attributes with defaults, a custom domain, a model's graph, an operator's body),
//! each compiled back and compared with the function it came from, names aside; and the
//! command's errors, exit codes and output rules.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::proto::onnx::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, SparseTensorProto,
    TensorProto, ValueInfoProto,
};
use prost::Message;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn onnxsc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnxsc"))
        .args(args)
        .arg("--color=never")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// Standard error with miette's line wrapping undone: words separated by single spaces.
fn stderr(o: &Output) -> String {
    let text = String::from_utf8_lossy(&o.stderr);
    text.split(|c: char| c.is_whitespace() || c == '│').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("onnxsc-decompile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn build(src: &Path, out: &Path) -> Vec<FunctionProto> {
    let o = onnxsc(&["build", s(src), "-o", s(out)]);
    assert_eq!(o.status.code(), Some(0), "build {}: {}", src.display(), stderr(&o));
    ModelProto::decode(std::fs::read(out).unwrap().as_slice()).unwrap().functions
}

fn decompile(args: &[&str], out: &Path) -> String {
    let mut all = vec!["decompile"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", s(out)]);
    let o = onnxsc(&all);
    assert_eq!(o.status.code(), Some(0), "decompile {args:?}: {}", stderr(&o));
    // The command checks its own output: every function came back the same.
    assert!(!stderr(&o).contains("W1101"), "decompile {args:?}: {}", stderr(&o));
    std::fs::read_to_string(out).unwrap()
}

// A function with its values and attribute parameters named by their order of definition.

struct Canon {
    scopes: Vec<HashMap<String, String>>,
    next: usize,
    attributes: HashMap<String, String>,
}

impl Canon {
    fn define(&mut self, name: &str) -> String {
        if name.is_empty() {
            return String::new();
        }
        self.next += 1;
        let id = format!("v{}", self.next);
        self.scopes.last_mut().unwrap().insert(name.to_string(), id.clone());
        id
    }

    fn lookup(&self, name: &str) -> String {
        if name.is_empty() {
            return String::new();
        }
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned()).unwrap_or_else(|| format!("?{name}"))
    }

    fn attribute(&mut self, a: &AttributeProto) -> String {
        if let Some(r) = &a.ref_attr_name {
            return format!("{}:{:?}=@{}", a.name(), a.r#type, self.attributes.get(r).cloned().unwrap_or_default());
        }
        let value = match (&a.g, &a.t) {
            (Some(g), _) => self.graph(g),
            // A tensor by its values: the encoding (raw or typed fields) and name aside.
            (None, Some(t)) => format!("{:?} {:?} {}", t.data_type, t.dims, elements(t)),
            (None, None) => format!("{a:?}"),
        };
        format!("{}={value}", a.name())
    }

    fn graph(&mut self, g: &GraphProto) -> String {
        self.scopes.push(HashMap::new());
        let inputs: Vec<String> = g.input.iter().map(|i| self.define(i.name())).collect();
        let nodes: Vec<String> = g.node.iter().map(|n| self.node(n)).collect();
        let outputs: Vec<String> = g.output.iter().map(|o| self.lookup(o.name())).collect();
        self.scopes.pop();
        format!("graph({inputs:?}) {{ {} }} => {outputs:?}", nodes.join("; "))
    }

    fn node(&mut self, n: &NodeProto) -> String {
        let mut attributes: Vec<&AttributeProto> = n.attribute.iter().collect();
        attributes.sort_by_key(|a| a.name().to_string());
        let attributes: Vec<String> = attributes.into_iter().map(|a| self.attribute(a)).collect();
        let inputs: Vec<String> = n.input.iter().map(|i| self.lookup(i)).collect();
        let outputs: Vec<String> = n.output.iter().map(|o| self.define(o)).collect();
        format!("{outputs:?} = {}.{}({inputs:?}, {attributes:?})", n.domain(), n.op_type())
    }
}

/// A tensor's elements, integers whichever field holds them.
fn elements(t: &TensorProto) -> String {
    use onnxsc::onnx::tensor::Elements;
    match onnxsc::onnx::tensor::elements(t) {
        Some(Elements::Signed(v)) => format!("{:?}", v.iter().map(|x| i128::from(*x)).collect::<Vec<_>>()),
        Some(Elements::Unsigned(v)) => format!("{:?}", v.iter().map(|x| i128::from(*x)).collect::<Vec<_>>()),
        other => format!("{other:?}"),
    }
}

fn canonical(f: &FunctionProto) -> String {
    let names = f.attribute.iter().map(String::as_str).chain(f.attribute_proto.iter().map(AttributeProto::name));
    let attributes = names.enumerate().map(|(i, a)| (a.to_string(), format!("a{i}"))).collect();
    let mut c = Canon { scopes: vec![HashMap::new()], next: 0, attributes };
    let inputs: Vec<String> = f.input.iter().map(|i| c.define(i)).collect();
    let protos: Vec<String> =
        f.attribute_proto.iter().map(|a| c.attribute(&AttributeProto { name: None, ..a.clone() })).collect();
    let nodes: Vec<String> = f.node.iter().map(|n| c.node(n)).collect();
    let outputs: Vec<String> = f.output.iter().map(|o| c.lookup(o)).collect();
    let mut imports: Vec<(String, i64)> =
        f.opset_import.iter().map(|o| (o.domain().to_string(), o.version())).collect();
    imports.sort();
    format!(
        "{} {imports:?} ({inputs:?}) <{} {protos:?}> {{\n{}\n}} => {outputs:?}",
        f.domain(),
        f.attribute.len(),
        nodes.join("\n")
    )
}

fn assert_same_functions(expected: &[FunctionProto], actual: &[FunctionProto]) {
    assert_eq!(expected.len(), actual.len());
    for (e, a) in expected.iter().zip(actual) {
        assert_eq!(canonical(e), canonical(a), "{} came back different", e.name());
    }
}

#[test]
fn the_canonical_form_tells_functions_apart() {
    let node = |alpha: f32| NodeProto {
        input: vec!["x".into()],
        output: vec!["y".into()],
        op_type: Some("LeakyRelu".into()),
        attribute: vec![AttributeProto {
            name: Some("alpha".into()),
            f: Some(alpha),
            r#type: Some(1),
            ..Default::default()
        }],
        ..Default::default()
    };
    let f = |alpha, out: &str| FunctionProto {
        input: vec!["x".into()],
        output: vec![out.into()],
        node: vec![NodeProto { output: vec![out.into()], ..node(alpha) }],
        ..Default::default()
    };
    assert_eq!(canonical(&f(0.5, "y")), canonical(&f(0.5, "z")));
    assert_ne!(canonical(&f(0.5, "y")), canonical(&f(0.25, "y")));
}

/// Each case: built, decompiled (snapshot), built again: the same functions, names aside.
#[test]
fn cases_round_trip() {
    let dir = scratch("cases");
    let mut cases: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/decompile"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "onnxs"))
            .collect();
    cases.sort();
    assert!(cases.len() >= 5);
    for case in cases {
        let stem = case.file_stem().unwrap().to_str().unwrap().to_string();
        let library = dir.join(format!("{stem}.onnx"));
        let original = build(&case, &library);
        let text = decompile(&[s(&library)], &dir.join(format!("{stem}.onnxs")));
        insta::with_settings!({ snapshot_suffix => stem.clone() }, {
            insta::assert_snapshot!("decompiled", text);
        });
        let again = build(&dir.join(format!("{stem}.onnxs")), &dir.join(format!("{stem}_again.onnx")));
        assert_same_functions(&original, &again);
    }
}

/// Every function the compiler's own cases and the examples compile to comes back the same.
#[test]
fn every_compiled_case_and_example_round_trips() {
    let dir = scratch("ok");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources: Vec<PathBuf> = Vec::new();
    for folder in ["tests/cases/ok", "examples"] {
        for e in std::fs::read_dir(root.join(folder)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "onnxs") {
                sources.push(p);
            }
        }
    }
    sources.sort();
    let mut functions = 0;
    for (i, src) in sources.iter().enumerate() {
        let original = build(src, &dir.join(format!("{i}.onnx")));
        decompile(&[s(&dir.join(format!("{i}.onnx")))], &dir.join(format!("{i}.onnxs")));
        let again = build(&dir.join(format!("{i}.onnxs")), &dir.join(format!("{i}_again.onnx")));
        assert_same_functions(&original, &again);
        functions += original.len();
    }
    assert!(functions >= 90, "{functions} functions");
}

/// The README's example is what the command writes.
#[test]
fn the_readme_example_is_real_output() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let command = "onnxsc decompile --op Shrink --opset 18 -o shrink.onnxs";
    let after = &readme[readme.find(command).expect("the README shows the command")..];
    let block = after.split("```python\n").nth(1).and_then(|b| b.split("\n```").next()).expect("an example block");
    let dir = scratch("readme");
    let text = decompile(&["--op", "Shrink", "--opset", "18"], &dir.join("shrink.onnxs"));
    assert_eq!(block, text.trim_end(), "the README's decompile example is out of date");
}

#[test]
fn an_operator_body_round_trips_with_the_schema_defaults() {
    let dir = scratch("op");
    let out = dir.join("layer_norm.onnxs");
    let text = decompile(&["--op", "LayerNormalization", "--opset", "18"], &out);
    insta::assert_snapshot!("layer_normalization_18", text);
    let f = build(&out, &dir.join("layer_norm.onnx"));
    assert_eq!(f.len(), 1);
    let defaults: Vec<&str> = f[0].attribute_proto.iter().map(AttributeProto::name).collect();
    assert_eq!(defaults, ["stash_type", "epsilon", "axis"]);
    assert!(f[0].node.iter().any(|n| n.op_type() == "ReduceMean"));
}

fn tensor(name: &str, values: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        data_type: Some(1),
        dims: vec![values.len() as i64],
        float_data: values.to_vec(),
        ..Default::default()
    }
}

fn value(name: &str) -> ValueInfoProto {
    ValueInfoProto { name: Some(name.into()), ..Default::default() }
}

fn typed_value(name: &str, elem_type: i32) -> ValueInfoProto {
    use onnxsc::proto::onnx::{type_proto, TypeProto};
    let tensor = type_proto::Tensor { elem_type: Some(elem_type), shape: None };
    ValueInfoProto {
        r#type: Some(TypeProto { value: Some(type_proto::Value::TensorType(tensor)), denotation: None }),
        ..value(name)
    }
}

/// An exported model's graph: names that are not identifiers, an initializer, an ai.onnx.ml
/// operator, a typed input.
fn exported_model() -> ModelProto {
    let node = |op: &str, inputs: &[&str], output: &str| NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        op_type: Some(op.into()),
        name: Some(format!("/{op}")),
        ..Default::default()
    };
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![
            OperatorSetIdProto { domain: Some(String::new()), version: Some(18) },
            OperatorSetIdProto { domain: Some("ai.onnx.ml".into()), version: Some(3) },
        ],
        graph: Some(GraphProto {
            name: Some("main_graph".into()),
            node: vec![
                node("Add", &["input.1", "/w"], "/add/Add_output_0"),
                node("Relu", &["/add/Add_output_0"], "/relu"),
                NodeProto { domain: Some("ai.onnx.ml".into()), ..node("Normalizer", &["/relu"], "class") },
            ],
            initializer: vec![tensor("/w", &[0.5, -1.5])],
            input: vec![typed_value("input.1", 1)],
            output: vec![value("class")],
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn a_models_graph_becomes_a_function_of_its_inputs() {
    let dir = scratch("graph");
    let model = dir.join("model.onnx");
    std::fs::write(&model, exported_model().encode_to_vec()).unwrap();
    let out = dir.join("model.onnxs");
    let text = decompile(&[s(&model)], &out);
    insta::assert_snapshot!("exported_graph", text);
    let f = build(&out, &dir.join("rebuilt.onnx"));
    let ops: Vec<&str> = f[0].node.iter().map(NodeProto::op_type).collect();
    assert_eq!(ops, ["Constant", "Add", "Relu", "Normalizer"]);
    // Byte-identical on a second run.
    let second = dir.join("second.onnxs");
    assert_eq!(decompile(&[s(&model)], &second), text);
}

#[test]
fn a_named_function_comes_with_the_functions_it_calls() {
    let dir = scratch("function");
    let lib = dir.join("lib.onnx");
    build(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/decompile/custom_domain.onnxs"), &lib);
    let text = decompile(&[s(&lib), "--function", "gelu_of_scaled"], &dir.join("one.onnxs"));
    assert!(text.contains("def gelu_of_scaled(") && text.contains("def scaled("), "{text}");
    let text = decompile(&[s(&lib), "--function", "scaled"], &dir.join("two.onnxs"));
    assert!(!text.contains("gelu_of_scaled"), "{text}");

    let o = onnxsc(&["decompile", s(&lib), "--function", "scaledd", "-o", s(&dir.join("x.onnxs"))]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("no function or graph named `scaledd`")
            && err.contains("did you mean `scaled`? name one of: scaled, gelu_of_scaled"),
        "{err}"
    );
    assert!(!dir.join("x.onnxs").exists());
}

/// onnx's Bernoulli body refers to `seed` without the type ONNX asks for: the function comes back
/// with it, and the command says so (W1101), writing the module all the same.
#[test]
fn a_function_that_does_not_come_back_the_same_is_w1101() {
    let dir = scratch("w1101");
    let out = dir.join("bernoulli.onnxs");
    let o = onnxsc(&["decompile", "--op", "Bernoulli", "--opset", "22", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("warning[W1101]: the function `Bernoulli` does not compile back the same: node 0 (`RandomUniformLike`) differs"), "{err}");
    assert!(err.contains("(1 warning)"), "{err}");
    assert!(std::fs::read_to_string(&out).unwrap().contains("def Bernoulli("));
    insta::assert_snapshot!("w1101", err.replace(s(&dir), "[DIR]"));
}

#[test]
fn operators_without_a_body_are_usage_errors() {
    let dir = scratch("no-body");
    let out = dir.join("x.onnxs");
    for (args, expected) in [
        (vec!["--op", "Add", "--opset", "18"], "has no function body: it is a primitive operator"),
        (vec!["--op", "LayerNormalisation", "--opset", "18"], "did you mean `LayerNormalization`?"),
        (vec!["--op", "Gelu", "--opset", "18"], "exists from opset 20 on"),
        (vec!["--op", "GroupNormalization", "--opset", "18"], "per call, and onnxsc does not embed it"),
    ] {
        let mut all = vec!["decompile"];
        all.extend(args.iter().copied());
        all.extend(["-o", s(&out)]);
        let o = onnxsc(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
        assert!(!out.exists());
    }
    for args in [vec!["decompile", "-o", s(&out)], vec!["decompile", "--op", "Celu", "-o", s(&out)]] {
        assert_eq!(onnxsc(&args).status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn what_cannot_be_written_is_e1101_and_nothing_is_written() {
    let dir = scratch("unsupported");
    let sparse = NodeProto {
        output: vec!["y".into()],
        op_type: Some("Constant".into()),
        attribute: vec![AttributeProto {
            name: Some("sparse_value".into()),
            r#type: Some(11),
            sparse_tensor: Some(SparseTensorProto::default()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: Some(10),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(18) }],
        functions: vec![FunctionProto {
            name: Some("f".into()),
            domain: Some("d".into()),
            output: vec!["y".into()],
            node: vec![sparse],
            opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(18) }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let path = dir.join("sparse.onnx");
    std::fs::write(&path, model.encode_to_vec()).unwrap();
    let out = dir.join("out.onnxs");
    std::fs::write(&out, "previous").unwrap();
    let o = onnxsc(&["decompile", s(&path), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("error[E1101]") && stderr(&o).contains("SPARSE_TENSOR"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");
    insta::assert_snapshot!("e1101", stderr(&o).replace(s(&dir), "[DIR]"));

    let garbage = dir.join("garbage.onnx");
    std::fs::write(&garbage, b"\xff\xff\xff not a model").unwrap();
    let o = onnxsc(&["decompile", s(&garbage), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("error[E0802]"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");

    let o = onnxsc(&["decompile", s(&path), "-o", s(&path)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = onnxsc(&["decompile", s(&dir.join("missing.onnx")), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

// Hostile and unusual functions, straight through the library.

fn attr(name: &str, ty: i32, set: impl FnOnce(&mut AttributeProto)) -> AttributeProto {
    let mut a = AttributeProto { name: Some(name.into()), r#type: Some(ty), ..Default::default() };
    set(&mut a);
    a
}

fn call(domain: &str, op: &str, inputs: &[&str], outputs: &[&str], attribute: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        op_type: Some(op.into()),
        domain: Some(domain.into()),
        attribute,
        ..Default::default()
    }
}

fn function(name: &str, inputs: &[&str], outputs: &[&str], node: Vec<NodeProto>) -> FunctionProto {
    FunctionProto {
        name: Some(name.into()),
        domain: Some("my.lib".into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        node,
        opset_import: vec![
            OperatorSetIdProto { domain: Some(String::new()), version: Some(18) },
            OperatorSetIdProto { domain: Some("my.ops".into()), version: Some(1) },
        ],
        ..Default::default()
    }
}

fn typed(data_type: i32, dims: &[i64], set: impl FnOnce(&mut TensorProto)) -> TensorProto {
    let mut t =
        TensorProto { data_type: Some(data_type), dims: dims.to_vec(), name: Some("t".into()), ..Default::default() };
    set(&mut t);
    t
}

fn tensor_attr(name: &str, t: TensorProto) -> AttributeProto {
    attr(name, 4, |a| a.t = Some(t))
}

/// Every attribute type the language writes, with values at the edges, on an operator of a
/// domain without schemas (so the values' own types decide), and names that are not
/// identifiers: compiled back to the same function.
#[test]
fn edge_values_and_names_round_trip() {
    let values = call(
        "my.ops",
        "Op",
        &["in.put"],
        &["1st", ""],
        vec![
            attr("f", 1, |a| a.f = Some(f32::MIN_POSITIVE / 4.0)),
            attr("g", 1, |a| a.f = Some(f32::MAX)),
            attr("h", 1, |a| a.f = Some(f32::NEG_INFINITY)),
            attr("z", 1, |a| a.f = Some(-0.0)),
            attr("i", 2, |a| a.i = Some(i64::MIN)),
            attr("s", 3, |a| a.s = Some("quote \" back\\slash\nline\ttab \u{7f} é".as_bytes().to_vec())),
            attr("fs", 6, |a| a.floats = vec![0.1, 1e-30, 3.0]),
            attr("ints", 7, |a| a.ints = vec![i64::MAX, -1]),
            attr("ss", 8, |a| a.strings = vec![Vec::new(), b"a".to_vec()]),
            tensor_attr(
                "t_raw",
                typed(1, &[2], |t| t.raw_data = Some([1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat())),
            ),
            tensor_attr("t_f16", typed(10, &[3], |t| t.int32_data = vec![0x3c00, 0x0001, 0xfbff])),
            tensor_attr("t_bf16", typed(16, &[1], |t| t.raw_data = Some(0x3f80u16.to_le_bytes().to_vec()))),
            tensor_attr("t_f64", typed(11, &[2], |t| t.double_data = vec![0.1, -1e300])),
            tensor_attr("t_i8", typed(3, &[2, 1], |t| t.int32_data = vec![-128, 127])),
            tensor_attr("t_u64", typed(13, &[1], |t| t.uint64_data = vec![u64::MAX])),
            tensor_attr("t_bool", typed(9, &[2], |t| t.int32_data = vec![1, 0])),
            tensor_attr("t_str", typed(8, &[], |t| t.string_data = vec![b"x\"y".to_vec()])),
            tensor_attr("t_empty", typed(7, &[0], |_| {})),
        ],
    );
    let constants = [
        typed(7, &[], |t| t.int64_data = vec![-3]),
        typed(1, &[2], |t| t.float_data = vec![0.25, 1e-9]),
        typed(8, &[], |t| t.string_data = vec![b"s".to_vec()]),
        typed(9, &[], |t| t.int32_data = vec![1]),
        typed(1, &[1, 1], |t| t.float_data = vec![2.0]),
    ];
    let mut node = vec![values];
    for (i, t) in constants.into_iter().enumerate() {
        node.push(call("", "Constant", &[], &[&format!("lambda.{i}")], vec![tensor_attr("value", t)]));
    }
    node.push(call("", "Identity", &["1st"], &["range"], vec![]));
    node.push(call("", "Identity", &["range"], &["op"], vec![]));
    let f =
        function("value-edges", &["in.put"], &["op", "lambda.0", "lambda.1", "lambda.2", "lambda.3", "lambda.4"], node);
    let dir = scratch("edges");
    let model = ModelProto { ir_version: Some(10), functions: vec![f.clone()], ..Default::default() };
    std::fs::write(dir.join("edges.onnx"), model.encode_to_vec()).unwrap();
    let o = onnxsc(&["decompile", s(&dir.join("edges.onnx")), "-o", s(&dir.join("edges.onnxs"))]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The empty output name between outputs cannot come back, and the command says so.
    assert!(
        stderr(&o).contains("`value-edges` does not compile back the same: node 0 (`Op`) differs"),
        "{}",
        stderr(&o)
    );
    let again = build(&dir.join("edges.onnxs"), &dir.join("again.onnx"));
    assert_eq!(again.len(), 1);
    // Compared without it, the node is the same.
    let mut expected = f;
    expected.node[0].output.pop();
    let mut actual = again[0].clone();
    actual.node[0].output.truncate(1);
    actual.domain.clone_from(&expected.domain);
    assert_same_functions(&[expected], &[actual]);
}

#[test]
fn broken_functions_are_e1101_never_a_panic() {
    let ok = |node: Vec<NodeProto>| function("f", &["x"], &["y"], node);
    let cases = [
        ("undefined", ok(vec![call("", "Neg", &["nowhere"], &["y"], vec![])]), "a use of `nowhere`"),
        ("no outputs", ok(vec![call("", "Neg", &["x"], &[], vec![])]), "node without outputs"),
        ("op name", ok(vec![call("my.ops", "a-b", &["x"], &["y"], vec![])]), "operator named `a-b`"),
        (
            "keyword attribute",
            ok(vec![call("my.ops", "Op", &["x"], &["y"], vec![attr("is", 2, |a| a.i = Some(1))])]),
            "attribute named `is`",
        ),
        (
            "reference",
            ok(vec![call(
                "",
                "Elu",
                &["x"],
                &["y"],
                vec![attr("alpha", 1, |a| a.ref_attr_name = Some("nope".into()))],
            )]),
            "a reference to `nope`",
        ),
        (
            "raw data",
            ok(vec![call(
                "",
                "Constant",
                &[],
                &["y"],
                vec![tensor_attr("value", typed(1, &[1], |t| t.raw_data = Some(vec![0; 3])))],
            )]),
            "data does not decode",
        ),
        (
            "float8",
            ok(vec![call(
                "",
                "Constant",
                &[],
                &["y"],
                vec![tensor_attr("value", typed(17, &[1], |t| t.raw_data = Some(vec![0])))],
            )]),
            "FLOAT8E4M3FN",
        ),
        (
            "string",
            ok(vec![call("", "Constant", &[], &["y"], vec![attr("value_string", 3, |a| a.s = Some(vec![0xff]))])]),
            "not UTF-8",
        ),
        ("no output", function("f", &["x"], &[], vec![]), "no outputs"),
    ];
    for (what, f, expected) in cases {
        match onnxsc::decompile::module(&[f], &[], "test") {
            Ok(text) => panic!("{what}: decompiled\n{text}"),
            Err(d) => {
                assert_eq!(d.code, "E1101", "{what}");
                assert!(d.message.contains(expected), "{what}: {}", d.message);
            }
        }
    }
    // Deep nesting decompiles (the compiler's limit, E1001, is the compiler's to report).
    let mut inner = call("", "Neg", &["x"], &["y"], vec![]);
    for _ in 0..60 {
        let g = GraphProto { node: vec![inner], output: vec![value("y")], ..Default::default() };
        inner = call("", "Loop", &["x", "", "x"], &["y"], vec![attr("body", 5, |a| a.g = Some(g))]);
    }
    assert!(onnxsc::decompile::module(&[ok(vec![inner])], &[], "test").is_ok());
}

/// Models cut and mutated byte by byte (a small deterministic fuzz): whatever still decodes
/// decompiles or is E1101, and never panics.
#[test]
fn mutated_models_never_panic() {
    let dir = scratch("mutated");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds = vec![exported_model().encode_to_vec()];
    for case in ["if_else", "loops", "constants", "custom_domain"] {
        let lib = dir.join(format!("{case}.onnx"));
        build(&root.join(format!("tests/cases/decompile/{case}.onnxs")), &lib);
        seeds.push(std::fs::read(&lib).unwrap());
    }
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut decoded, mut written) = (0, 0);
    for seed in &seeds {
        for _ in 0..1000 {
            let mut bytes = seed.clone();
            let at = (next() % bytes.len() as u64) as usize;
            match next() % 3 {
                0 => bytes[at] = (next() & 0xff) as u8,
                1 => bytes.truncate(at),
                _ => bytes[at] ^= 1 << (next() % 8),
            }
            let Ok(model) = ModelProto::decode(bytes.as_slice()) else { continue };
            decoded += 1;
            let mut functions = model.functions.clone();
            if let Some(g) = &model.graph {
                if let Ok(f) = onnxsc::decompile::graph_function(g, &model.opset_import) {
                    functions.push(f);
                }
            }
            match onnxsc::decompile::module(&functions, &model.opset_import, "mutated") {
                Ok(_) => written += 1,
                Err(d) => assert_eq!(d.code, "E1101", "{}", d.message),
            }
        }
    }
    assert!(decoded > 1000 && written > 100, "{decoded} decoded, {written} written");
}

#[test]
fn a_library_of_trace_only_translations_is_a_usage_error_saying_why() {
    let dir = scratch("traced");
    let src = dir.join("traced.onnxs");
    std::fs::write(
        &src,
        "from onnxscript.function_libs.torch_lib.registration import torch_op\n\
         from onnxscript.function_libs.torch_lib.tensor_typing import TReal\n\
         from onnxscript import opset18 as op\n\n\n\
         @torch_op(\"aten::relu\", trace_only=True)\n\
         def my_relu(self: TReal) -> TReal:\n    return op.Relu(self)\n",
    )
    .unwrap();
    let lib = dir.join("traced.onnx");
    assert!(build(&src, &lib).is_empty());
    let out = dir.join("out.onnxs");
    let o = onnxsc(&["decompile", s(&lib), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("trace-only translations have no FunctionProto"), "{}", stderr(&o));
    assert!(!out.exists());
}
