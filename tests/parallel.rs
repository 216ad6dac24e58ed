//! A large module's functions are read (`driver::heads`: decorators, signatures, calls) and
//! lowered (`driver::lowering`) in pieces on the compiler's threads. What comes
//! out must not show it: each function as it would be compiled alone, and the diagnostics of a
//! module with something to report exactly those of compiling it in order. (On a machine with
//! one core nothing is split, and these hold as they would anyway.)

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::diagnostics::Severity;
use onnxsc::driver::{compile_sources, Compilation};
use onnxsc::emit;
use prost::Message;

/// More functions than one thread takes alone, so the module is cut (into three pieces of at
/// least 64 functions).
const FUNCTIONS: usize = 200;

const HEADER: &str = "from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\n\n";

/// Function `i`: an attribute `if`, literals and a few ops, so that names, constants and types
/// are all in play; `body` is what it adds to `x`.
fn function(i: usize, body: &str) -> String {
    format!(
        "@script()\ndef f{i}(x: FLOAT[\"N\"], alpha: float = 1.0) -> FLOAT[\"N\"]:\n    if alpha != 1.0:\n        x = op.Mul(x, alpha)\n    y = op.Add(x, {body})\n    return op.Where(op.Greater(y, 0.0), y, y * 0.5)\n\n\n"
    )
}

fn compile(text: &str) -> Compilation {
    compile_sources(vec![("library.onnxs".into(), text.to_string())])
}

/// The same file with every function but `i` blanked out (each character but line ends made a
/// space): the same byte offsets, lines and columns, so the same spans and source locations, and
/// far too small to split.
fn alone(functions: &[String], i: usize) -> Compilation {
    keeping(functions, &[i])
}

/// [`alone`], keeping the functions `kept` (a caller with its callee).
fn keeping(functions: &[String], kept: &[usize]) -> Compilation {
    let blank = |f: &String| f.chars().map(|c| if c == '\n' { c } else { ' ' }).collect::<String>();
    let blanked: String =
        functions.iter().enumerate().map(|(k, f)| if kept.contains(&k) { f.clone() } else { blank(f) }).collect();
    compile(&format!("{HEADER}{blanked}"))
}

#[test]
fn each_function_comes_out_as_compiled_alone() {
    let functions: Vec<String> = (0..FUNCTIONS).map(|i| function(i, "x")).collect();
    let whole = compile(&format!("{HEADER}{}", functions.concat()));
    assert!(whole.diagnostics.is_empty(), "{:?}", whole.diagnostics);
    assert_eq!(whole.functions.len(), FUNCTIONS);
    for (i, compiled) in whole.functions.iter().enumerate() {
        let alone = alone(&functions, i);
        assert_eq!(alone.functions.len(), 1, "{:?}", alone.diagnostics);
        assert_eq!(
            emit::proto::function(compiled).encode_to_vec(),
            emit::proto::function(&alone.functions[0]).encode_to_vec(),
            "f{i} differs from its compilation alone"
        );
    }
}

#[test]
fn a_constant_that_fails_is_reported_once_across_the_pieces() {
    // A constant onnxsc cannot evaluate is an error at its first use only: the first, middle
    // and last pieces each use it once.
    let uses = [10, FUNCTIONS / 2, FUNCTIONS - 10];
    let body = |i: usize| if uses.contains(&i) { "TABLE" } else { "x" };
    let text =
        format!("{HEADER}TABLE = {{\"a\": 1}}\n\n{}", (0..FUNCTIONS).map(|i| function(i, body(i))).collect::<String>());
    let c = compile(&text);
    let errors: Vec<_> = c.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let line_of = |offset: usize| text[..offset].lines().count();
    let first_use = text.find("op.Add(x, TABLE)").unwrap();
    let labelled: Vec<usize> = errors[0].labels.iter().map(|l| line_of(l.span.start as usize)).collect();
    assert!(labelled.contains(&line_of(first_use + "op.Add(x, ".len())), "{:#?}", errors[0]);
    // Both functions that read it fail; the others compile.
    assert_eq!(c.functions.len(), FUNCTIONS - uses.len());
    assert_eq!(c.dropped, uses.len());
}

#[test]
fn errors_in_every_piece_are_each_reported_as_alone() {
    let wrong = [10, FUNCTIONS / 2, FUNCTIONS - 10];
    let functions: Vec<String> =
        (0..FUNCTIONS).map(|i| function(i, if wrong.contains(&i) { "op.Addd(x, x)" } else { "x" })).collect();
    let whole = compile(&format!("{HEADER}{}", functions.concat()));
    let expected: Vec<_> = wrong.iter().flat_map(|&i| alone(&functions, i).diagnostics).collect();
    assert_eq!(expected.len(), wrong.len(), "{expected:#?}");
    assert_eq!(whole.diagnostics, expected);
    assert_eq!(whole.functions.len(), FUNCTIONS - wrong.len());
}

#[test]
fn decorator_and_call_errors_in_every_piece_are_each_reported_as_alone() {
    // Decorators, signatures and the calls between functions are read in pieces as well.
    let undecorated = [12, FUNCTIONS / 2 + 2, FUNCTIONS - 12];
    let miscalling = [14, FUNCTIONS / 2 + 4, FUNCTIONS - 14];
    let functions: Vec<String> = (0..FUNCTIONS)
        .map(|i| {
            let f = function(i, if miscalling.contains(&i) { "f0(x, beta=1.0)" } else { "x" });
            if undecorated.contains(&i) {
                f.replacen("@script()", "@script", 1)
            } else {
                f
            }
        })
        .collect();
    let whole = compile(&format!("{HEADER}{}", functions.concat()));
    let mut expected: Vec<_> = undecorated
        .iter()
        .flat_map(|&i| alone(&functions, i).diagnostics)
        .chain(miscalling.iter().flat_map(|&i| keeping(&functions, &[0, i]).diagnostics))
        .collect();
    // A compilation's diagnostics come in source order.
    expected.sort_by_key(|d| d.labels.iter().find(|l| l.primary).map(|l| l.span.start));
    assert_eq!(expected.len(), undecorated.len() + miscalling.len(), "{expected:#?}");
    assert_eq!(whole.diagnostics, expected);
}
