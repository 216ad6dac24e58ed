//! Hostile inputs at sizes that hung for minutes or aborted at gigabytes before issue 14's fixes:
//! each must now end with a result or a diagnostic (docs/robustness.md lists the limits). No
//! test measures time: a regression shows as a hang or an abort, not as a failed assertion.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::diagnostics::{codes, render_plain, Diagnostic};
use onnxsc::driver::{compile_inputs, compile_sources, Compilation, CompileOptions, SourceInput};
use onnxsc::link;
use onnxsc::proto::onnx::ModelProto;
use prost::Message;

const HEADER: &str = "from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\n\n";

fn compile(text: String) -> Compilation {
    compile_sources(vec![("hostile.onnxs".into(), text)])
}

fn codes_of(c: &Compilation) -> Vec<&'static str> {
    c.diagnostics.iter().map(|d| d.code).collect()
}

/// Renders every diagnostic, as `onnxsc check` does, and returns the longest rendering.
fn rendered(c: &Compilation) -> usize {
    c.diagnostics.iter().map(|d| render_plain(&c.sources, d).len()).max().unwrap_or(0)
}

/// 10,000 branches, 400 KB (over 80 s before): E1001 at the 31st level.
#[test]
fn an_elif_chain_of_ten_thousand_branches() {
    let mut lines = vec!["@script()\ndef f(x: FLOAT, k: int = 0) -> FLOAT:".to_string(), "    if k == 0:".into()];
    lines.push("        y = op.Neg(x)".into());
    for i in 1..10_000 {
        lines.push(format!("    elif k == {i}:\n        y = op.Abs(x)"));
    }
    lines.push("    else:\n        y = x\n    return y\n".into());
    let text = format!("{HEADER}{}", lines.join("\n"));
    assert!(text.len() > 100_000);
    let c = compile(text);
    assert_eq!(codes_of(&c), [codes::NESTING_TOO_DEEP]);
}

/// A 100 KB misspelt name, and 4,000 misspelt names among 4,000 defined ones (each over 20 s).
#[test]
fn misspelt_names_long_and_many() {
    let c = compile(format!(
        "{HEADER}@script()\ndef f(x: FLOAT) -> FLOAT:\n    return op.Add(x, {})\n",
        "v".repeat(100_000)
    ));
    assert_eq!(codes_of(&c), [codes::UNDEFINED_NAME]);
    let defined: String = (0..4000).map(|i| format!("    value_{i} = x\n")).collect();
    let used: String = (0..4000).map(|i| format!("    y{i} = op.Add(x, valeu_{i})\n")).collect();
    let c = compile(format!("{HEADER}@script()\ndef f(x: FLOAT) -> FLOAT:\n{defined}{used}    return x\n"));
    assert_eq!(c.diagnostics.len(), 4000);
    let first = &c.diagnostics[0];
    assert_eq!(first.help.as_deref(), Some("did you mean `value_0`?"));
}

/// A 1 MB op name and a 1 MB `@torch_op` name (each over 20 s): one diagnostic each, rendered
/// with the line cut to a window.
#[test]
fn megabyte_operator_names() {
    let c = compile(format!(
        "{HEADER}@script()\ndef f(x: FLOAT) -> FLOAT:\n    return op.A{}(x, x)\n",
        "d".repeat(1 << 20)
    ));
    assert_eq!(codes_of(&c), [codes::UNKNOWN_OP]);
    assert!(rendered(&c) < 4096);
    let c = compile(format!(
        "{HEADER}@torch_op(\"aten::{}\")\ndef f(self):\n    return op.Abs(self)\n",
        "a".repeat(1 << 20)
    ));
    assert!(!c.diagnostics.is_empty() && rendered(&c) < 4096);
}

/// 1 MB of NUL bytes (or `€`) on one line (a million diagnostics, each printing the line): one.
#[test]
fn a_megabyte_of_invalid_characters() {
    for bad in ["\0", "€", "$ "] {
        let c = compile(format!("x = 1\n{}\n", bad.repeat(1 << 20)));
        assert!(c.diagnostics.len() <= 100, "{} diagnostics", c.diagnostics.len());
        assert!(c.diagnostics.iter().all(|d| d.code == codes::INVALID_CHARACTER));
        assert!(rendered(&c) < 4096);
        let json = onnxsc::diagnostics::json::to_json_lines(&c.sources, &c.diagnostics);
        assert!(json.len() < 100 * 4096);
    }
}

/// A name of a million non-ASCII letters (2 MB): one token, lexed in a loop (logos's state machine
/// recursed once per character in debug builds and overflowed the stack).
#[test]
fn a_megabyte_long_unicode_name() {
    let name = "é".repeat(1_000_000);
    let c = compile(format!("{HEADER}@script()\ndef f(x: FLOAT) -> FLOAT:\n    return op.Abs({name})\n"));
    assert_eq!(codes_of(&c), [codes::UNDEFINED_NAME]);
    assert!(rendered(&c) < 4096);
}

/// A `func:` schema of 100,000 arguments, in a schema file and declared in a module.
#[test]
fn a_schema_with_a_hundred_thousand_arguments() {
    let args: Vec<String> = (0..100_000).map(|i| format!("Tensor a{i}")).collect();
    let schema = onnxsc::aten::parse_schema(&format!("mylib::many({}) -> Tensor", args.join(", "))).expect("parses");
    assert_eq!(schema.arguments.len(), 100_000);
    let yaml = format!("- func: mylib::many({}) -> Tensor\n", args.join(", "));
    assert!(onnxsc::aten::AtenRegistry::from_yaml(&yaml).is_ok());
    let params: Vec<String> = (0..100_000).map(|i| format!("a{i}")).collect();
    let text = format!(
        "import torch\n{HEADER}from onnxscript.function_libs.torch_lib.registration import torch_op\n\n\
         torch.library.define(\"mylib::many\", \"({}) -> Tensor\")\n\n@torch_op(\"mylib::many\")\ndef f({}):\n    return op.Abs(a0)\n",
        args.join(", "),
        params.join(", ")
    );
    let c = compile(text);
    assert!(!c.has_errors(), "{:?}", codes_of(&c));
}

/// `x[0][0]...` 10,000 deep (5.6 GB and a 1.2 GB file before): value names stay short.
/// One call with 50,000 literal operands, each cast like the tensor operand (autocast looked
/// the tensor up again for every literal: 20,000 took 6 s in a release build).
#[test]
fn an_op_call_with_fifty_thousand_literal_operands() {
    let n = 50_000;
    let literals = vec!["1.0"; n].join(", ");
    let c = compile(format!(
        "{HEADER}@script()\ndef f(x: FLOAT[\"N\"]) -> FLOAT[\"N\"]:\n    return op.Concat(x, {literals}, axis=0)\n"
    ));
    assert_eq!(codes_of(&c), Vec::<&str>::new());
    let casts = c.functions[0].nodes.iter().filter(|node| node.op_type == "CastLike").count();
    assert_eq!(casts, n);
}

#[test]
fn ten_thousand_nested_subscripts() {
    let c = compile(format!(
        "{HEADER}@script()\ndef f(x: FLOAT) -> FLOAT:\n    y = op.Identity(x)\n    return y{}\n",
        "[0]".repeat(10_000)
    ));
    assert!(!c.has_errors(), "{:?}", codes_of(&c));
    let longest = c.functions[0].nodes.iter().flat_map(|n| &n.outputs).map(String::len).max().unwrap_or(0);
    assert!(longest < 120, "a value name of {longest} bytes");
}

/// 2,000 modules, each importing the next as a namespace (5 GB before).
/// `n` modules, each importing the next and calling its function.
fn chain_of_modules(n: usize) -> Compilation {
    let inputs: Vec<SourceInput> = (0..n)
        .map(|i| {
            let (import, body) = if i + 1 < n {
                (format!("import m{}\n", i + 1), format!("    return m{}.g{}(x)\n", i + 1, i + 1))
            } else {
                (String::new(), "    return op.Abs(x)\n".to_string())
            };
            let text = format!("{HEADER}{import}\n@script()\ndef g{i}(x: FLOAT) -> FLOAT:\n{body}");
            SourceInput { name: format!("/nonexistent-onnxsc-test/m{i}.onnxs"), bytes: text.into_bytes() }
        })
        .collect();
    compile_inputs(&inputs, &CompileOptions::default()).expect("no files to read")
}

/// 2,000 modules, each calling the next: compiled in linear time, and refused as a library
/// (E0811) at the call that makes the chain one function deeper than onnx.checker accepts.
#[test]
fn a_chain_of_two_thousand_modules() {
    let c = chain_of_modules(2000);
    assert_eq!(codes_of(&c), [codes::CALL_CHAIN_TOO_DEEP]);
    assert_eq!(c.functions.len(), 2000);
    let text = render_plain(&c.sources, &c.diagnostics[0]);
    assert!(text.contains("m99.onnxs:8:12") && text.contains("`g99` calls `g100`"), "{text}");
    // A hundred deep is what onnx.checker and ONNX Runtime accept.
    let c = chain_of_modules(100);
    assert!(!c.has_errors(), "{:?}", codes_of(&c));
}

/// A sum of four million terms (a stack overflow before): E1002, without recursion.
#[test]
fn a_sum_of_four_million_terms() {
    let c =
        compile(format!("{HEADER}@script()\ndef f(x: FLOAT) -> FLOAT:\n    return x{}\n", " + x".repeat(4_000_000)));
    assert_eq!(codes_of(&c), [codes::SYNTAX_TOO_DEEP]);
}

/// 10,001 functions: a library onnx.checker would refuse (E1003).
#[test]
fn more_functions_than_a_model_may_carry() {
    let fs: String =
        (0..10_001).map(|i| format!("@script()\ndef f{i}(x: FLOAT) -> FLOAT:\n    return op.Abs(x)\n\n")).collect();
    let c = compile(format!("{HEADER}{fs}"));
    assert_eq!(codes_of(&c), [codes::TOO_MANY_FUNCTIONS]);
}

/// A source over the limit is refused before it is read (13 MB took 1.1 GB and 11 s).
#[test]
fn sources_over_the_limit_are_not_read() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("big.onnxs");
    let f = std::fs::File::create(&path).expect("created");
    f.set_len(13 << 20).expect("a sparse file");
    let e = onnxsc::driver::compile_paths(&[path], &CompileOptions::default()).err().expect("refused");
    assert!(e.message.contains("too large"), "{}", e.message);
}

// --- link ---------------------------------------------------------------------------------------

fn bytes(len_delimited: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (field, payload) in len_delimited {
        prost::encoding::encode_key(*field, prost::encoding::WireType::LengthDelimited, &mut out);
        prost::encoding::encode_varint(payload.len() as u64, &mut out);
        out.extend_from_slice(payload);
    }
    out
}

fn library() -> ModelProto {
    let c = compile_sources(vec![("tutorial.onnxs".into(), include_str!("../examples/tutorial.onnxs").into())]);
    onnxsc::emit::proto::library_model(&c.functions, c.library_meta())
}

/// 30 MB of empty library functions (6 GB before) and 20 MB of empty nodes (3 GB): E0808.
#[test]
fn protobuf_amplification() {
    let empty_functions = bytes(&vec![(25, Vec::new()); 10_000_000]);
    let e = link::load::library(&empty_functions, "lib.onnx").err().expect("refused");
    assert_eq!(e.code, codes::MODEL_TOO_LARGE_TO_DECODE);
    let empty_nodes = bytes(&[(7, bytes(&vec![(1, Vec::new()); 10_000_000]))]);
    let e = link::load::model(&empty_nodes, "m.onnx").expect_err("refused");
    assert_eq!(e.code, codes::MODEL_TOO_LARGE_TO_DECODE);
}

fn link_inline(model: &ModelProto, libraries: Vec<link::Library>) -> Result<link::Linked, Vec<Diagnostic>> {
    let bytes = model.encode_to_vec();
    let m = link::load::model(&bytes, "m.onnx").map_err(|d| vec![*d])?;
    link::link(
        m,
        libraries,
        &link::LinkOptions { mode: link::Mode::Inline, override_model: false, max_nodes: link::DEFAULT_MAX_NODES },
    )
}

/// A model calling the first of thirty functions, each calling the next twice: 2^30 nodes
/// once inlined.
fn doubling_chain() -> ModelProto {
    use onnxsc::proto::onnx::*;
    let call = |name: String, i: &str, o: &str| NodeProto {
        op_type: Some(name),
        domain: Some("chain".into()),
        input: vec![i.into()],
        output: vec![o.into()],
        ..Default::default()
    };
    let imports = vec![
        OperatorSetIdProto { domain: Some(String::new()), version: Some(18) },
        OperatorSetIdProto { domain: Some("chain".into()), version: Some(1) },
    ];
    let functions = (0..30)
        .map(|i| FunctionProto {
            name: Some(format!("f{i}")),
            domain: Some("chain".into()),
            input: vec!["x".into()],
            output: vec!["y".into()],
            node: if i < 29 {
                vec![call(format!("f{}", i + 1), "x", "t"), call(format!("f{}", i + 1), "t", "y")]
            } else {
                vec![NodeProto {
                    op_type: Some("Abs".into()),
                    domain: Some(String::new()),
                    input: vec!["x".into()],
                    output: vec!["y".into()],
                    ..Default::default()
                }]
            },
            opset_import: imports.clone(),
            ..Default::default()
        })
        .collect();
    let mut model = onnxsc::contract::calling_model(&ModelProto {
        functions: vec![FunctionProto {
            name: Some("f0".into()),
            domain: Some("chain".into()),
            input: vec!["x".into()],
            ..Default::default()
        }],
        ..Default::default()
    });
    model.functions = functions;
    model
}

/// Inlining the chain stops at the limit, naming it (an abort before).
#[test]
fn exponential_inlining_stops_at_the_limit_and_names_the_chain() {
    let diags = link_inline(&doubling_chain(), Vec::new()).err().expect("refused");
    let d = diags.iter().find(|d| d.code == codes::INLINE_TOO_LARGE).expect("E0807");
    assert!(d.notes[0].contains("`chain::f0` -> `chain::f1`"), "{:?}", d.notes);
}

/// Linked in reference mode, the chain is kept as calls; the check of the model's declared
/// types expands each call within the same limit, and leaves the one past it unchecked rather
/// than expanding 2^30 nodes.
#[test]
fn checking_a_reference_model_expands_each_call_within_the_limit() {
    let bytes = doubling_chain().encode_to_vec();
    let model = link::load::model(&bytes, "m.onnx").expect("loads");
    let options =
        link::LinkOptions { mode: link::Mode::Reference, override_model: false, max_nodes: link::DEFAULT_MAX_NODES };
    let linked = link::link(model, Vec::new(), &options).expect("links");
    assert!(link::shapes::check_model(&linked.model).is_ok());
}

/// A library function using a domain it does not import (a model onnx.checker refuses, exit 0
/// before): E0802.
#[test]
fn a_library_function_must_import_its_domains() {
    let mut lib = library();
    let f = &mut lib.functions[1];
    assert!(f.node.iter().any(|n| n.domain() == "com.microsoft"));
    f.opset_import.retain(|o| o.domain() != "com.microsoft");
    let e = link::load::library(&lib.encode_to_vec(), "lib.onnx").err().expect("refused");
    assert_eq!(e.code, codes::INVALID_MODEL);
    assert!(e.message.contains("com.microsoft"), "{}", e.message);
}

/// Ten thousand identical functions: one E0804, not one per duplicate.
#[test]
fn a_duplicate_name_is_reported_once() {
    let lib = library();
    let mut dup = lib.clone();
    let f = dup.functions[0].clone();
    dup.functions = vec![f; 10_000];
    let l = link::load::library(&dup.encode_to_vec(), "dup.onnx").expect("loads");
    let diags = link_inline(&onnxsc::contract::calling_model(&lib), vec![l]).err().expect("refused");
    let dups: Vec<_> = diags.iter().filter(|d| d.code == codes::DUPLICATE_FUNCTION_DEFINITION).collect();
    assert_eq!(dups.len(), 1);
    assert!(dups[0].notes[0].contains("10000 times"), "{:?}", dups[0].notes);
}
