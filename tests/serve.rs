//! End-to-end tests of `onnxsc serve`: requests and responses framed on stdin and stdout, each
//! response the bytes `onnxsc link --mode inline` writes for the same model, refusals that let
//! the server go on, and the ends of the input (closed, cut inside a request).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::proto::onnx::{
    type_proto, AttributeProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use prost::Message;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const TUTORIAL: &str = "examples/tutorial.onnxs";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("onnxsc-serve-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn onnxsc(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_onnxsc"));
    cmd.args(["--color", "never"]).args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// `onnxsc serve LIBS` given `input` on stdin, to its end.
fn serve(libs: &[&str], input: &[u8]) -> Output {
    let mut child = onnxsc(&[&["serve"], libs].concat())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // Written from another thread: the server answers while the requests come.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("the server ends");
    writer.join().expect("written");
    out
}

fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut f = u32::try_from(bytes.len()).unwrap().to_le_bytes().to_vec();
    f.extend_from_slice(bytes);
    f
}

/// The kind bytes of a request (`driver::serve::kind`) and the protocol's version.
const HELLO: u8 = 0;
const LINK: u8 = 1;
const CALL: u8 = 3;
const PROTOCOL: u32 = 3;

/// A handshake of protocol `version`.
fn hello(version: u32) -> Vec<u8> {
    frame(&[&[HELLO][..], &version.to_le_bytes(), b"serve tests"].concat())
}

/// A request to link `model`.
fn request(model: &[u8]) -> Vec<u8> {
    frame(&[&[LINK][..], model].concat())
}

/// `onnxsc serve LIBS` given the handshake and then `input`; its output without the answer to
/// the handshake.
fn session(libs: &[&str], input: &[u8]) -> Output {
    let mut o = serve(libs, &[hello(PROTOCOL), input.to_vec()].concat());
    if let Some(len) = o.stdout.first_chunk::<4>() {
        let answered = 4 + u32::from_le_bytes(*len) as usize;
        assert_eq!(o.stdout.get(4), Some(&0), "the handshake is answered");
        o.stdout.drain(..answered.min(o.stdout.len()));
    }
    o
}

/// The responses on stdout: (status, payload) each; every byte belongs to one.
fn responses(stdout: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = stdout;
    while !rest.is_empty() {
        let (len, tail) = rest.split_first_chunk::<4>().expect("a whole length");
        let len = u32::from_le_bytes(*len) as usize;
        assert!(len >= 1 && tail.len() >= len, "a response cut short");
        out.push((tail[0], tail[1..len].to_vec()));
        rest = &tail[len..];
    }
    out
}

fn text(payload: &[u8]) -> String {
    String::from_utf8(payload.to_vec()).expect("diagnostics are UTF-8")
}

fn tensor(name: &str) -> ValueInfoProto {
    let t = type_proto::Tensor { elem_type: Some(1), shape: Some(TensorShapeProto::default()) };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto { value: Some(type_proto::Value::TensorType(t)), ..Default::default() }),
        ..Default::default()
    }
}

/// A model of one call of the tutorial's `name`,
/// with `inputs` and float attributes, as the Python package asks.
fn call(name: &str, inputs: &[&str], attributes: &[(&str, f32)]) -> Vec<u8> {
    let node = NodeProto {
        op_type: Some(name.into()),
        domain: Some(DOMAIN.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec!["out0".into()],
        attribute: attributes
            .iter()
            .map(|(n, f)| AttributeProto {
                name: Some((*n).into()),
                f: Some(*f),
                r#type: Some(1),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let opset = |d: &str, v: i64| OperatorSetIdProto { domain: Some(d.into()), version: Some(v) };
    ModelProto {
        ir_version: Some(10),
        opset_import: vec![opset(DOMAIN, 1), opset("", 18), opset("com.microsoft", 1)],
        graph: Some(onnxsc::proto::onnx::GraphProto {
            name: Some("call".into()),
            node: vec![node],
            input: inputs.iter().map(|n| tensor(n)).collect(),
            output: vec![tensor("out0")],
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

/// The domain the tutorial's functions are compiled into.
const DOMAIN: &str = "pkg.onnxscript.torch_lib";

/// What `onnxsc link --mode inline` writes for `request`.
fn linked_by_link(dir: &Path, request: &[u8], libs: &[&str], name: &str) -> Vec<u8> {
    let model = dir.join(format!("{name}.onnx"));
    std::fs::write(&model, request).unwrap();
    let out = dir.join(format!("{name}.linked.onnx"));
    let args = [&["link", model.to_str().unwrap()], libs, &["-o", out.to_str().unwrap(), "--mode", "inline"]].concat();
    let o = onnxsc(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).unwrap()
}

fn built_tutorial(dir: &Path) -> String {
    let lib = dir.join("tutorial.onnx");
    let o = onnxsc(&["build", TUTORIAL, "-o", lib.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    lib.to_str().unwrap().to_string()
}

fn requests() -> Vec<Vec<u8>> {
    vec![
        call("custom_aten_add", &["self", "other"], &[]),
        call("custom_aten_add", &["self", "other"], &[("alpha", 2.0)]),
        call("custom_aten_gelu", &["self"], &[]),
        call("onnx_add_and_round", &["input"], &[]),
        call("custom_aten_add", &["self", "other"], &[]),
    ]
}

#[test]
fn several_requests_in_one_session_give_what_link_inline_writes() {
    let dir = scratch("session");
    let built = built_tutorial(&dir);
    let requests = requests();
    let input: Vec<u8> = requests.iter().flat_map(|r| request(r)).collect();
    // A built library, and the sources compiled as `link` compiles them.
    for lib in [built.as_str(), TUTORIAL] {
        let o = session(&[lib], &input);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let got = responses(&o.stdout);
        assert_eq!(got.len(), requests.len(), "one response per request");
        for (i, ((status, payload), request)) in got.iter().zip(&requests).enumerate() {
            assert_eq!(*status, 0, "request {i}: {}", text(payload));
            let expected = linked_by_link(&dir, request, &[lib], &format!("r{i}"));
            assert!(*payload == expected, "request {i}: not the bytes `link --mode inline` writes");
        }
        assert_eq!(got[0], got[4], "the same request, the same bytes");
        assert_ne!(got[0], got[1], "attributes make another variant");
        // Deterministic across sessions too.
        assert_eq!(session(&[lib], &input).stdout, o.stdout);
    }
}

#[test]
fn a_refused_request_is_answered_and_the_next_one_linked() {
    let dir = scratch("refused");
    let built = built_tutorial(&dir);
    let good = call("custom_aten_gelu", &["self"], &[]);
    let unknown = call("no_such_function", &["x"], &[]);
    let input = [request(b"not a model at all"), request(&unknown), request(&[]), request(&good)].concat();
    let o = session(&[&built], &input);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let got = responses(&o.stdout);
    assert_eq!(got.len(), 4);
    let garbage = text(&got[0].1);
    assert_eq!(got[0].0, 1);
    assert!(garbage.starts_with("error[E0802]: the request is not a usable ONNX model"), "{garbage}");
    let unresolved = text(&got[1].1);
    assert_eq!(got[1].0, 1);
    assert!(unresolved.contains("error[E0801]") && unresolved.contains("no_such_function"), "{unresolved}");
    assert!(!unresolved.contains("\u{1b}["), "no colour: {unresolved}");
    assert_eq!(got[2].0, 1, "an empty request is no model");
    assert!(text(&got[2].1).contains("it has no IR version"));
    assert_eq!(got[3], (0, linked_by_link(&dir, &good, &[&built], "good")));
}

#[test]
fn a_frame_cut_short_is_refused_and_ends_the_server() {
    let dir = scratch("cut");
    let built = built_tutorial(&dir);
    let good = call("custom_aten_gelu", &["self"], &[]);
    // The payload cut short.
    let mut input = request(&good);
    input.extend(&request(&good)[..20]);
    let o = session(&[&built], &input);
    assert_eq!(o.status.code(), Some(2));
    let got = responses(&o.stdout);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, 0);
    assert_eq!(got[1].0, 1);
    let why = text(&got[1].1);
    assert!(why.contains(&format!("its length says {} bytes, 16 came", good.len() + 1)), "{why}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("the input ended inside a request"));
    // The length cut short.
    let o = session(&[&built], &[7, 0]);
    assert_eq!(o.status.code(), Some(2));
    let got = responses(&o.stdout);
    assert_eq!(got.len(), 1);
    assert!(text(&got[0].1).contains("2 of its 4 bytes"));
    // A length no model has, and too few bytes: the bytes are skipped, not kept.
    let mut huge = u32::MAX.to_le_bytes().to_vec();
    huge.extend([0u8; 100]);
    let o = session(&[&built], &huge);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&responses(&o.stdout)[0].1).contains("100 came"));
}

#[test]
fn empty_input_ends_the_server_cleanly() {
    let dir = scratch("empty");
    let built = built_tutorial(&dir);
    let o = session(&[&built], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
}

#[test]
fn libraries_that_cannot_be_served_exit_as_link_does() {
    let dir = scratch("libs");
    // No library file: an I/O failure.
    let o = session(&["no/such/library.onnx"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no/such/library.onnx"));
    // Sources with errors: their diagnostics, exit 1, before any request.
    let bad = dir.join("bad.onnxs");
    std::fs::write(&bad, "from onnxscript import opset18 as op\n\ndef f(x):\n    return op.Ad(x, x)\n").unwrap();
    let o = session(&[bad.to_str().unwrap()], &request(&call("f", &["x"], &[])));
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("error[E0402]"));
    assert!(o.stdout.is_empty());
    // A file that is no library.
    let not = dir.join("not.onnx");
    std::fs::write(&not, b"junk").unwrap();
    let o = session(&[not.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("error[E0802]"));
    // A library is required.
    assert_eq!(onnxsc(&["serve"]).output().unwrap().status.code(), Some(2));
}

#[test]
fn a_closed_stdout_ends_the_server_with_exit_2() {
    let dir = scratch("closed");
    let built = built_tutorial(&dir);
    let mut child = onnxsc(&["serve", &built])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // Nobody reads the responses.
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(&[hello(PROTOCOL), request(&call("custom_aten_gelu", &["self"], &[]))].concat());
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot write a response"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_request_with_external_data_is_refused() {
    use onnxsc::proto::onnx::{StringStringEntryProto, TensorProto};
    let dir = scratch("external");
    let built = built_tutorial(&dir);
    let mut model = ModelProto::decode(call("custom_aten_gelu", &["self"], &[]).as_slice()).unwrap();
    let entry = |k: &str, v: &str| StringStringEntryProto { key: Some(k.into()), value: Some(v.into()) };
    let weight = TensorProto {
        name: Some("w".into()),
        data_type: Some(1),
        dims: vec![4],
        data_location: Some(1),
        external_data: vec![entry("location", "weights.bin"), entry("offset", "0"), entry("length", "16")],
        ..Default::default()
    };
    model.graph.as_mut().unwrap().initializer.push(weight);
    let o = session(&[&built], &request(&model.encode_to_vec()));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let got = responses(&o.stdout);
    assert_eq!(got[0].0, 1);
    let why = text(&got[0].1);
    assert!(why.contains("external data (`weights.bin`)"), "{why}");
}

#[test]
fn the_handshake_comes_first_and_names_both_protocols_when_they_differ() {
    let dir = scratch("hello");
    let built = built_tutorial(&dir);
    let good = call("custom_aten_gelu", &["self"], &[]);
    // The answer to a handshake is the server's versions.
    let o = serve(&[&built], &hello(PROTOCOL));
    let got = responses(&o.stdout);
    assert_eq!(got[0].0, 0);
    assert!(
        text(&got[0].1).starts_with(&format!("{{\"onnxsc\":\"{}\",\"protocol\":3}}", env!("CARGO_PKG_VERSION"))),
        "{}",
        text(&got[0].1)
    );
    // A client of another protocol is refused with both versions, until it greets as this one.
    let o = serve(&[&built], &[hello(1), request(&good), hello(PROTOCOL), request(&good)].concat());
    assert_eq!(o.status.code(), Some(0));
    let got = responses(&o.stdout);
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 1, 0, 0]);
    let refused = text(&got[0].1);
    assert!(refused.contains("speaks serve protocol 1, and onnxsc") && refused.contains("speaks 3"), "{refused}");
    assert!(refused.contains("different versions") && refused.contains("help: install"), "{refused}");
    // A client of protocol 1 sends a model with no kind byte and no handshake.
    let o = serve(&[&built], &frame(&good));
    let refused = text(&responses(&o.stdout)[0].1);
    assert!(refused.contains("did not begin with the handshake of serve protocol 3"), "{refused}");
    // After the handshake, an unknown kind is refused and the server goes on.
    let o = session(&[&built], &[frame(&[9, 1, 2]), request(&good)].concat());
    let got = responses(&o.stdout);
    assert_eq!(got[0].0, 1);
    assert!(text(&got[0].1).contains("kind byte is 9"), "{}", text(&got[0].1));
    assert_eq!(got[1], (0, linked_by_link(&dir, &good, &[&built], "good")));
}

/// A call request (`driver::call::CallRequest`).
fn call_request(json: &str) -> Vec<u8> {
    frame(&[&[CALL][..], json.as_bytes()].concat())
}

#[test]
fn a_call_request_is_answered_with_the_body_link_gives_for_that_call() {
    let dir = scratch("call");
    let built = built_tutorial(&dir);
    let calls = [
        (
            r#"{"function": "pkg.onnxscript.torch_lib::custom_aten_add", "inputs": ["self", "other"]}"#,
            call("custom_aten_add", &["self", "other"], &[]),
        ),
        (
            r#"{"function": "pkg.onnxscript.torch_lib::custom_aten_add", "inputs": ["self", "other"], "attributes": {"alpha": {"float": 2.0}}}"#,
            call("custom_aten_add", &["self", "other"], &[("alpha", 2.0)]),
        ),
        // An int for a float attribute is that float, as Python's call would be.
        (
            r#"{"function": "pkg.onnxscript.torch_lib::custom_aten_add", "inputs": ["self", "other"], "attributes": {"alpha": {"int": 2}}}"#,
            call("custom_aten_add", &["self", "other"], &[("alpha", 2.0)]),
        ),
        (
            r#"{"function": "pkg.onnxscript.torch_lib::custom_aten_gelu", "inputs": ["self"]}"#,
            call("custom_aten_gelu", &["self"], &[]),
        ),
    ];
    let input: Vec<u8> = calls.iter().flat_map(|(json, _)| call_request(json)).collect();
    let o = session(&[&built], &input);
    let got = responses(&o.stdout);
    assert_eq!(got.len(), calls.len());
    for ((status, payload), (json, model)) in got.iter().zip(&calls) {
        assert_eq!(*status, 0, "{json}: {}", text(payload));
        let by_call = ModelProto::decode(payload.as_slice()).unwrap();
        let by_link = ModelProto::decode(linked_by_link(&dir, model, &[&built], "call").as_slice()).unwrap();
        // The nodes: this test's model types its inputs FLOAT, the call's leaves them unknown.
        let (by_call, by_link) = (by_call.graph.unwrap(), by_link.graph.unwrap());
        assert_eq!(by_call.node, by_link.node, "{json}: the body `link --mode inline` gives the same call");
        let names = |g: &onnxsc::proto::onnx::GraphProto| g.input.iter().map(|i| i.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&by_call), names(&by_link));
    }
    assert_ne!(got[0], got[1], "attributes make another body");
    assert_eq!(got[1], got[2]);
}

#[test]
fn a_call_that_does_not_fit_the_signature_is_refused_and_the_server_goes_on() {
    let dir = scratch("bad-call");
    let built = built_tutorial(&dir);
    let add = "pkg.onnxscript.torch_lib::custom_aten_add";
    let cases = [
        (
            r#"{"function": "pkg.onnxscript.torch_lib::no_such", "inputs": []}"#.to_string(),
            "error[E0801]: no library of this server defines `pkg.onnxscript.torch_lib::no_such`",
        ),
        (format!(r#"{{"function": "{add}", "inputs": ["x"]}}"#), "error[E0803]: `custom_aten_add` has no input `x`"),
        (
            format!(r#"{{"function": "{add}", "inputs": ["self"], "attributes": {{"beta": {{"float": 1.0}}}}}}"#),
            "has no attribute `beta`",
        ),
        (
            format!(r#"{{"function": "{add}", "inputs": ["self"], "attributes": {{"alpha": {{"str": "two"}}}}}}"#),
            "attribute `alpha` is a `float`",
        ),
        ("[1]".to_string(), "the call request is not a call"),
    ];
    let mut input: Vec<u8> = cases.iter().flat_map(|(json, _)| call_request(json)).collect();
    input.extend(call_request(&format!(r#"{{"function": "{add}", "inputs": ["self", "other"]}}"#)));
    let o = session(&[&built], &input);
    assert_eq!(o.status.code(), Some(0));
    let got = responses(&o.stdout);
    assert_eq!(got.len(), cases.len() + 1);
    for ((status, payload), (json, expected)) in got.iter().zip(&cases) {
        assert_eq!(*status, 1, "{json}");
        assert!(text(payload).contains(expected), "{json}: {}", text(payload));
    }
    assert_eq!(got[cases.len()].0, 0, "{}", text(&got[cases.len()].1));
}

/// Scripted translations with a call-dependent mistake each: checked per call when a call
/// request says what its inputs are (`link::shapes`).
const SCRIPTED: &str = r#"
from typing import Optional, Sequence

from onnxscript import FLOAT, opset18 as op
from onnxscript.function_libs.torch_lib.registration import torch_op
from onnxscript.function_libs.torch_lib.tensor_typing import TFloat


@torch_op("aten::linear")
def aten_linear(input: TFloat, weight: TFloat, bias: Optional[TFloat] = None) -> TFloat:
    return op.Gemm(input, weight, bias, transB=1)


@torch_op("aten::mean.dim")
def aten_mean_dim(self: TFloat, dim: Optional[Sequence[int]], keepdim: bool = False, dtype: int = -1) -> TFloat:
    del dtype
    return op.ReduceMean(op.Cast(self, to=FLOAT.dtype), op.Constant(value_ints=dim), keepdims=keepdim)
"#;

/// `source` written as `NAME.onnxs` in `dir` and built into `NAME.onnx`, which is returned.
fn built(dir: &Path, name: &str, source: &str) -> PathBuf {
    let path = dir.join(format!("{name}.onnxs"));
    std::fs::write(&path, source).unwrap();
    let lib = dir.join(format!("{name}.onnx"));
    let o = onnxsc(&["build", path.to_str().unwrap(), "-o", lib.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    lib
}

#[test]
fn a_typed_call_request_is_checked_node_by_node_and_against_pytorch() {
    let lib = built(&scratch("typed-call"), "scripted", SCRIPTED);
    let linear = |shape: &str| {
        format!(
            r#"{{"function": "pkg.onnxscript.torch_lib::aten_linear", "inputs": ["input", "weight", "bias"],
                "types": {{"input": {{"tensor": {{"dtype": "FLOAT", "shape": {shape}}}}},
                          "weight": {{"tensor": {{"dtype": "FLOAT", "shape": [3, 4]}}}},
                          "bias": {{"tensor": {{"dtype": "FLOAT", "shape": [3]}}}}}}}}"#
        )
    };
    let mean = |expected: &str| {
        format!(
            r#"{{"function": "pkg.onnxscript.torch_lib::aten_mean_dim", "inputs": ["self"],
                "attributes": {{"dim": {{"list": [{{"int": 1}}]}}}},
                "types": {{"self": {{"tensor": {{"dtype": "FLOAT16", "shape": [2, "s0"]}}}}}},
                "expect": {{"op": "aten::mean.dim", "outputs": [{{"dtype": "{expected}", "shape": [2]}}]}}}}"#
        )
    };
    let input: Vec<u8> = [linear("[2, 5, 4]"), linear("[\"s0\", 4]"), mean("FLOAT16"), mean("FLOAT")]
        .iter()
        .flat_map(|json| call_request(json))
        .collect();
    let o = session(&[lib.to_str().unwrap()], &input);
    let got = responses(&o.stdout);
    assert_eq!(got.len(), 4);
    // The operator's rule, broken by this call, at the op call's line.
    assert_eq!(got[0].0, 1);
    let refused = text(&got[0].1);
    assert!(
        refused.contains("error[E0907]: `Gemm` needs a rank-2 `A`; this call gives float32[2, 5, 4] (`input`)"),
        "{refused}"
    );
    assert!(refused.contains("scripted.onnxs:11:12, in `aten_linear`"), "{refused}");
    // A 2-D input fits, and the answer declares what the call returns.
    assert_eq!(got[1].0, 0, "{}", text(&got[1].1));
    let answer = ModelProto::decode(got[1].1.as_slice()).unwrap();
    let declared = answer.graph.unwrap().output[0].r#type.clone().unwrap();
    let Some(type_proto::Value::TensorType(t)) = declared.value else { panic!("{declared:?}") };
    let dims: Vec<String> = t.shape.unwrap().dim.iter().map(|d| format!("{:?}", d.value)).collect();
    assert_eq!((t.elem_type, dims.len()), (Some(1), 2));
    assert!(dims[0].contains("s0") && dims[1].contains("3"), "{dims:?}");
    // The float32 mean of a float16 input, which PyTorch computes in float16.
    assert_eq!(got[2].0, 1);
    let refused = text(&got[2].1);
    assert!(
        refused.contains("error[E0908]: `aten_mean_dim` returns float32[2] for this call, where PyTorch's `aten::mean.dim` gives float16[2]"),
        "{refused}"
    );
    assert!(refused.contains("scripted.onnxs:15:5, in `aten_mean_dim`"), "{refused}");
    assert_eq!(got[3].0, 0, "{}", text(&got[3].1));
}

const TRACED_WITH_HELPER: &str = r#"
from typing import Optional

from onnxscript import opset18 as op
from onnxscript.function_libs.torch_lib.registration import torch_op
from onnxscript.function_libs.torch_lib.tensor_typing import TFloat


@torch_op("aten::linear", private=True)
def _gemm_linear(input: TFloat, weight: TFloat) -> TFloat:
    return op.Gemm(input, weight, transB=1)


@torch_op("aten::linear", trace_only=True)
def aten_linear(input: TFloat, weight: TFloat, bias: Optional[TFloat] = None) -> TFloat:
    result = _gemm_linear(input, weight)
    if bias is not None:
        result = op.Add(result, bias)
    return result
"#;

/// A trace request (`trace::facts`).
fn trace_request(json: &str) -> Vec<u8> {
    frame(&[&[2][..], json.as_bytes()].concat())
}

#[test]
fn a_trace_request_checks_the_scripted_functions_its_trace_calls() {
    let lib = built(&scratch("traced-helper"), "traced", TRACED_WITH_HELPER);
    let linear = |shape: &str| {
        format!(
            r#"{{"function": "pkg.onnxscript.torch_lib::aten_linear",
                "args": [{{"tensor": {{"dtype": "FLOAT", "shape": {shape}}}}},
                         {{"tensor": {{"dtype": "FLOAT", "shape": [3, 4]}}}}],
                "kwargs": {{}}}}"#
        )
    };
    let input: Vec<u8> = [linear("[2, 5, 4]"), linear("[2, 4]")].iter().flat_map(|json| trace_request(json)).collect();
    let o = session(&[lib.to_str().unwrap()], &input);
    let got = responses(&o.stdout);
    assert_eq!(got.len(), 2);
    // The helper's `Gemm` breaks its rule for this call: found in the linked body, at its line.
    assert_eq!(got[0].0, 1);
    let refused = text(&got[0].1);
    assert!(refused.contains("error[E0907]: `Gemm` needs a rank-2 `A`; this call gives float32[2, 5, 4]"), "{refused}");
    assert!(refused.contains("traced.onnxs:11:12"), "{refused}");
    // A 2-D input fits, and the answer declares the shape the helper computes.
    assert_eq!(got[1].0, 0, "{}", text(&got[1].1));
    let answer = ModelProto::decode(got[1].1.as_slice()).unwrap();
    let declared = answer.graph.unwrap().output[0].r#type.clone().unwrap();
    let Some(type_proto::Value::TensorType(t)) = declared.value else { panic!("{declared:?}") };
    let dims: Vec<String> = t.shape.unwrap().dim.iter().map(|d| format!("{:?}", d.value)).collect();
    assert_eq!(dims, ["Some(DimValue(2))", "Some(DimValue(3))"]);
}

const CONTROL_FLOW: &str = r#"
from typing import Sequence

from onnxscript import FLOAT, graph, opset18 as op
from onnxscript.function_libs.torch_lib.registration import torch_op
from onnxscript.function_libs.torch_lib.tensor_typing import TFloat, TTensor


@torch_op("aten::squeeze.dims")
def aten_squeeze_dims(self: TTensor, dim: Sequence[int]) -> TTensor:
    if op.Size(op.Shape(self)) == 0:
        result = self
    else:
        result = op.Squeeze(self, op.Constant(value_ints=dim))
    return result


@torch_op("aten::relu")
def aten_relu(self: TFloat) -> TFloat:
    if op.ReduceMax(self) > 0.0:
        result = op.Relu(self)
    else:
        result = op.Squeeze(self, op.Constant(value_ints=[0]))
    return result


@torch_op("aten::mm")
def aten_mm(self: TFloat, mat2: TFloat) -> TFloat:
    acc = op.MatMul(self, mat2)
    for i in range(2):
        acc = op.Add(acc, op.Gemm(self, mat2))
    return acc


@torch_op("aten::t")
def aten_t(self: TFloat) -> TFloat:
    @graph()
    def add_row(total: FLOAT[4], row: FLOAT[4]):
        total = op.Add(total, row)
        return total, total

    zeros = op.CastLike(op.ConstantOfShape([4]), self)
    last, sums = op.Scan(zeros, self, body=add_row, num_scan_inputs=1)
    return sums
"#;

/// The dimensions an answer declares for its first output, as `Debug` text; `None` where it
/// leaves the placeholder type (element type 0), which says nothing.
fn declared_dims(answer: &[u8]) -> Option<Vec<String>> {
    let answer = ModelProto::decode(answer).unwrap();
    let declared = answer.graph.unwrap().output[0].r#type.clone().unwrap();
    let Some(type_proto::Value::TensorType(t)) = declared.value else { panic!("{declared:?}") };
    (t.elem_type != Some(0)).then(|| t.shape.unwrap().dim.iter().map(|d| format!("{:?}", d.value)).collect())
}

#[test]
fn a_call_request_enters_the_branches_loop_and_scan_bodies_it_runs() {
    let lib = built(&scratch("control-flow"), "flow", CONTROL_FLOW);
    let call = |function: &str, inputs: &[(&str, &str)], dim: Option<i64>| {
        let names: Vec<String> = inputs.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        let types: Vec<String> = inputs
            .iter()
            .map(|(n, shape)| format!(r#""{n}": {{"tensor": {{"dtype": "FLOAT", "shape": {shape}}}}}"#))
            .collect();
        let attributes =
            dim.map_or(String::new(), |d| format!(r#""attributes": {{"dim": {{"list": [{{"int": {d}}}]}}}},"#));
        call_request(&format!(
            r#"{{"function": "pkg.onnxscript.torch_lib::{function}", "inputs": [{}], {attributes}
                "types": {{{}}}}}"#,
            names.join(", "),
            types.join(", ")
        ))
    };
    let input: Vec<u8> = [
        // A rank-2 input takes the `else` branch, whose `Squeeze` of a dimension 3 breaks its rule.
        call("aten_squeeze_dims", &[("self", "[2, 3]")], Some(1)),
        // A 0-d input takes the `then` branch; the `else` one, which would break it, never runs.
        call("aten_squeeze_dims", &[("self", "[]")], Some(0)),
        // A condition computed from data: either branch may run, and neither stops the call.
        call("aten_relu", &[("self", "[4, 3]")], None),
        // The loop runs twice, and its body's `Gemm` is given a rank-3 `A`.
        call("aten_mm", &[("self", "[2, 5, 4]"), ("mat2", "[4, 3]")], None),
        call("aten_mm", &[("self", "[5, 4]"), ("mat2", "[4, \"s0\"]")], None),
        // Each step of the scan adds a row of 5 to a total of 4.
        call("aten_t", &[("self", "[3, 5]")], None),
        call("aten_t", &[("self", "[3, 4]")], None),
    ]
    .concat();
    let o = session(&[lib.to_str().unwrap()], &input);
    let got = responses(&o.stdout);
    assert_eq!(got.len(), 7, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(got[0].0, 1);
    let refused = text(&got[0].1);
    assert!(
        refused.contains("error[E0907]: `Squeeze` removes axis 1 of float32[2, 3] (`self`), whose size is 3, not 1"),
        "{refused}"
    );
    assert!(refused.contains("flow.onnxs:14:18, in `aten_squeeze_dims`"), "{refused}");
    assert_eq!(got[1].0, 0, "{}", text(&got[1].1));
    assert_eq!(declared_dims(&got[1].1), Some(Vec::new()), "the branch taken gives the output's shape");
    assert_eq!(got[2].0, 0, "{}", text(&got[2].1));
    // The branches disagree on the rank ([4, 3] against [3]), so the output's shape is unknown.
    assert_eq!(declared_dims(&got[2].1), None);
    assert_eq!(got[3].0, 1);
    let refused = text(&got[3].1);
    assert!(refused.contains("error[E0907]: `Gemm` needs a rank-2 `A`; this call gives float32[2, 5, 4]"), "{refused}");
    assert!(refused.contains("flow.onnxs:31:27, in `aten_mm`"), "{refused}");
    assert_eq!(got[4].0, 0, "{}", text(&got[4].1));
    // What the loop carries keeps its shape through the body, so the output's is known.
    assert_eq!(declared_dims(&got[4].1).unwrap(), ["Some(DimValue(5))", "Some(DimParam(\"s0\"))"]);
    assert_eq!(got[5].0, 1);
    let refused = text(&got[5].1);
    assert!(refused.contains("error[E0907]: `Add` cannot broadcast"), "{refused}");
    assert!(refused.contains("flow.onnxs:39:17, in `aten_t`"), "{refused}");
    assert_eq!(got[6].0, 0, "{}", text(&got[6].1));
    // The scanned rows, stacked again along the scan axis.
    assert_eq!(declared_dims(&got[6].1).unwrap(), ["Some(DimValue(3))", "Some(DimValue(4))"]);
}
