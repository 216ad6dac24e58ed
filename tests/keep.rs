//! What a compilation keeps of its functions (`driver::Keep`) changes nothing else: the same
//! diagnostics and outlines whatever it keeps, and with `Keep::Encoded` (what `build` uses) the
//! bytes that encoding the kept functions gives. Over every test case and example, and over a
//! module large enough to be lowered in pieces on several threads.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::driver::{compile_inputs, Compilation, CompileOptions, Keep, SourceInput};
use onnxsc::emit;
use onnxsc::ir::Outline;
use std::path::{Path, PathBuf};

fn compile(inputs: &[SourceInput], keep: Keep) -> Compilation {
    compile_inputs(inputs, &CompileOptions { keep, ..CompileOptions::default() }).expect("no schema files to read")
}

/// What `build` writes: the header, then the functions' fields as the lowering threads wrote them.
fn written(c: &Compilation) -> Vec<u8> {
    c.encoded_library().to_bytes()
}

fn assert_keeping_changes_nothing_else(name: &str, inputs: &[SourceInput]) {
    let functions = compile(inputs, Keep::Functions);
    let encoded = compile(inputs, Keep::Encoded);
    let outlined = compile(inputs, Keep::Outline);
    let outlines: Vec<Outline> = functions.functions.iter().map(Outline::of).collect();
    assert_eq!(functions.outlines, outlines, "{name}: the outlines are not those of the functions");
    for (what, other) in [("encoded", &encoded), ("outlined", &outlined)] {
        assert_eq!(other.diagnostics, functions.diagnostics, "{name}: the diagnostics differ when {what}");
        assert_eq!(other.outlines, functions.outlines, "{name}: the outlines differ when {what}");
        assert_eq!(other.dropped, functions.dropped, "{name}: the dropped functions differ when {what}");
        assert!(other.functions.is_empty(), "{name}: functions kept when {what}");
    }
    assert!(functions.encoded.is_empty() && outlined.encoded.is_empty(), "{name}: bytes kept unasked");
    if !functions.has_errors() {
        let expected = emit::proto::library_bytes(&functions.functions, functions.library_meta());
        assert_eq!(written(&encoded), expected, "{name}: the encoded library differs");
    }
}

fn onnxs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            onnxs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "onnxs") {
            out.push(path);
        }
    }
}

#[test]
fn every_case_and_example_compiles_the_same_whatever_is_kept() {
    let mut files = Vec::new();
    onnxs_files(Path::new("tests/cases"), &mut files);
    onnxs_files(Path::new("examples"), &mut files);
    files.sort();
    assert!(files.len() > 400, "only {} files found", files.len());
    for path in files {
        let bytes = std::fs::read(&path).expect("a readable case");
        let name = path.display().to_string();
        assert_keeping_changes_nothing_else(&name, &[SourceInput { name: name.clone(), bytes }]);
    }
}

#[test]
fn a_module_lowered_in_pieces_is_encoded_in_order() {
    let mut text = String::from("from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\n");
    for i in 0..300 {
        text.push_str(&format!(
            "\n@script()\ndef f{i}(x: FLOAT[\"N\"], alpha: float = {i}.5) -> FLOAT[\"N\"]:\n    if alpha != 1.0:\n        x = op.Mul(x, alpha)\n    return op.Add(x, 1.0)\n"
        ));
    }
    let inputs = [SourceInput { name: "large.onnxs".into(), bytes: text.into_bytes() }];
    assert_keeping_changes_nothing_else("large.onnxs", &inputs);
    let encoded = compile(&inputs, Keep::Encoded);
    assert_eq!(encoded.outlines.len(), 300);
    // One part per piece the module was lowered in: more than one where there are cores to share.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert!(cores == 1 || encoded.encoded.len() > 1, "{} parts on {cores} cores", encoded.encoded.len());
}
