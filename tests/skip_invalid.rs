//! `build --skip-invalid`: the functions with errors are left out, with those that call them and
//! the functions of a module with an error outside them; the rest is the library those sources
//! give without the functions left out, byte for byte.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::driver::{compile_inputs, Compilation, CompileOptions, Keep, SourceInput};
use onnxsc::emit;

const HEAD: &str = "from onnxscript import FLOAT, opset18 as op\nfrom onnxscript.function_libs.torch_lib.registration import torch_op\n\n\n";

const GOOD: &str = "@torch_op(\"aten::relu\")\ndef relu(self: FLOAT) -> FLOAT:\n    return op.Relu(self)\n\n\n";
/// E0402 inside the body.
const BAD_BODY: &str =
    "@torch_op(\"aten::sigmoid\")\ndef sigmoid(self: FLOAT) -> FLOAT:\n    return op.Sigmod(self)\n\n\n";
/// E0503 at the binding: the translation ignores `approximate`.
const BAD_BINDING: &str = "@torch_op(\"aten::gelu\")\ndef gelu(self: FLOAT) -> FLOAT:\n    return op.Relu(self)\n\n\n";
/// A helper with an error, and a translation that calls it.
const BAD_HELPER: &str = "def helper(x: FLOAT) -> FLOAT:\n    return op.Tanhh(x)\n\n\n@torch_op(\"aten::tanh\")\ndef tanh(self: FLOAT) -> FLOAT:\n    return helper(self)\n\n\n";
/// A trace-only translation with an error (a Python `if` on a tensor).
const BAD_TRACED: &str = "@torch_op(\"aten::abs\", trace_only=True)\ndef abs_(self: FLOAT) -> FLOAT:\n    if self:\n        return op.Abs(self)\n    return self\n\n\n";
const GOOD_TRACED: &str =
    "@torch_op(\"aten::neg\", trace_only=True)\ndef neg(self: FLOAT) -> FLOAT:\n    return op.Neg(self)\n";

fn compile(files: &[(&str, String)], skip_invalid: bool) -> Compilation {
    let inputs: Vec<SourceInput> = files
        .iter()
        .map(|(name, text)| SourceInput { name: name.to_string(), bytes: text.clone().into_bytes() })
        .collect();
    let options = CompileOptions { keep: Keep::Encoded, skip_invalid, isolated: true, ..CompileOptions::default() };
    compile_inputs(&inputs, &options).expect("no schema files")
}

fn library(c: &Compilation) -> Vec<u8> {
    c.encoded_library().to_bytes()
}

#[test]
fn functions_with_errors_their_callers_and_a_failing_module_are_left_out() {
    let main = format!("{HEAD}{GOOD}{BAD_BODY}{BAD_BINDING}{BAD_HELPER}{BAD_TRACED}{GOOD_TRACED}");
    // An import that does not resolve: the module's functions are all left out.
    let broken = format!("{HEAD}from nowhere import thing\n\n\n@torch_op(\"aten::exp\")\ndef exp(self: FLOAT) -> FLOAT:\n    return op.Exp(self)\n");
    let c = compile(&[("main.onnxs", main.clone()), ("broken.onnxs", broken)], true);
    assert!(c.has_errors() && c.partial);
    let left: Vec<(&str, &str)> = c.left_out.iter().map(|r| (r.name.as_str(), r.reason.as_str())).collect();
    assert_eq!(
        left,
        [
            ("sigmoid", "it has errors"),
            ("gelu", "it has errors"),
            ("helper", "it has errors"),
            ("tanh", "it calls `helper`, which is left out"),
            ("abs_", "it has errors"),
            ("exp", "its module has errors outside any function"),
        ]
    );
    assert_eq!(c.left_out[0].source, "main.onnxs:11:5");
    assert_eq!(c.left_out[1].torch_ops, ["aten::gelu"]);

    // What is kept is the library of the sources without what was left out.
    let clean = format!("{HEAD}{GOOD}{GOOD_TRACED}");
    let expected = compile(&[("main.onnxs", clean)], false);
    assert!(!expected.has_errors(), "{:?}", expected.diagnostics);
    let names = |c: &Compilation| -> Vec<String> {
        c.outlines.iter().map(|o| o.name.clone()).chain(c.traced.iter().map(|f| f.name.clone())).collect()
    };
    assert_eq!(names(&c), names(&expected));
    assert_eq!(names(&c), ["relu", "neg"]);
}

#[test]
fn without_the_option_or_without_errors_nothing_is_left_out() {
    let main = format!("{HEAD}{GOOD}{BAD_BODY}");
    let strict = compile(&[("main.onnxs", main)], false);
    assert!(strict.has_errors() && !strict.partial && strict.left_out.is_empty());
    let clean = format!("{HEAD}{GOOD}{GOOD_TRACED}");
    let (skipping, plain) = (compile(&[("m.onnxs", clean.clone())], true), compile(&[("m.onnxs", clean)], false));
    assert!(!skipping.partial && skipping.left_out.is_empty());
    assert_eq!(library(&skipping), library(&plain), "the option changes nothing in a library without errors");
}

#[test]
fn the_partial_library_is_the_clean_one_plus_its_record() {
    let with_errors = compile(&[("m.onnxs", format!("{HEAD}{GOOD}{BAD_BODY}{GOOD_TRACED}"))], true);
    let clean = compile(&[("m.onnxs", format!("{HEAD}{GOOD}{GOOD_TRACED}"))], false);
    let (a, b) = (
        emit::proto::library_model(&[], with_errors.library_meta()),
        emit::proto::library_model(&[], clean.library_meta()),
    );
    let keys = |m: &onnxsc::proto::onnx::ModelProto| -> Vec<String> {
        m.metadata_props.iter().map(|e| e.key.clone().unwrap_or_default()).collect()
    };
    assert_eq!(keys(&a), ["onnxsc.left_out", "onnxsc.trace"]);
    assert_eq!(keys(&b), ["onnxsc.trace"]);
    // The functions' bytes are those of the clean compilation.
    assert_eq!(with_errors.encoded.concat(), clean.encoded.concat());
}
