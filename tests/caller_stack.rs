//! Shallow sources compile on the calling thread (`driver::on_stack_for`), deep ones on the
//! compiler's large stack. These tests hold the bounds that choice rests on: the deepest shapes
//! that stay on the caller compile, emit and drop within `CALLER_STACK` in this (unoptimised)
//! build, and anything deeper goes to the large stack whatever the caller has.
//!
//! A stack overflow aborts the test process, so a bound that no longer holds fails the run.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::driver::{compile_sources, Compilation, CALLER_NESTING, CALLER_PARSE_BYTES, CALLER_STACK};
use onnxsc::emit;

const HEADER: &str = "from onnxscript import script, FLOAT\nfrom onnxscript import opset18 as op\n\n";
const SIGNATURE: &str = "@script(default_opset=op)\ndef f(x: FLOAT['N'], a: int = 1) -> FLOAT['N']:\n";

/// A source `n` levels deep in one way, and whether it compiles without errors.
struct Shape {
    name: &'static str,
    source: fn(usize) -> String,
    compiles: bool,
}

fn returning(expr: &str) -> String {
    format!("{HEADER}{SIGNATURE}    return {expr}\n")
}

/// `inner` inside `n` pairs of `open` and `close`.
fn around(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

/// `n` blocks nested in the function, level 1 first, each opened by `header(level)`, around
/// one statement.
fn nested(n: usize, header: fn(usize) -> String) -> String {
    let headers: String = (1..=n).map(|i| format!("{}{}:\n", " ".repeat(4 * i), header(i))).collect();
    format!("{HEADER}{SIGNATURE}{headers}{}x = op.Neg(x)\n    return x\n", " ".repeat(4 * (n + 1)))
}

fn constant(expr: &str) -> String {
    format!("{HEADER}C = {expr}\n{SIGNATURE}    return x\n")
}

/// The recursive phases' dearest shapes: nested calls, subscripts, operators, constants folded
/// at compile time, and statements whose graphs nest.
const SHAPES: &[Shape] = &[
    Shape { name: "nested calls", source: |n| returning(&around("op.Neg(", "x", ")", n)), compiles: true },
    Shape { name: "unary minus", source: |n| returning(&format!("{}x", "-".repeat(n))), compiles: true },
    Shape { name: "sum", source: |n| returning(&format!("x{}", " + x".repeat(n))), compiles: true },
    Shape { name: "subscripts", source: |n| returning(&format!("x{}", "[0]".repeat(n))), compiles: true },
    Shape {
        name: "conditional expressions",
        source: |n| returning(&format!("{}x", "x if a else ".repeat(n))),
        compiles: false,
    },
    Shape { name: "constant list", source: |n| constant(&around("[", "1", "]", n)), compiles: true },
    Shape { name: "constant negation", source: |n| constant(&format!("{}1", "-".repeat(n))), compiles: true },
    Shape { name: "constant sum", source: |n| constant(&format!("1{}", " + 1".repeat(n))), compiles: true },
    Shape { name: "constant tuple", source: |n| constant(&around("(1, ", "1", ")", n)), compiles: true },
    Shape { name: "constant dict", source: |n| constant(&around("{1: ", "1", "}", n)), compiles: true },
    Shape { name: "nested ifs", source: |n| nested(n, |i| format!("if a > {i}")), compiles: true },
    Shape {
        name: "elif chain",
        source: |n| {
            let elifs: String = (1..=n).map(|i| format!("    elif a == {i}:\n        x = op.Neg(x)\n")).collect();
            format!("{HEADER}{SIGNATURE}    if a == 0:\n        x = op.Neg(x)\n{elifs}    return x\n")
        },
        compiles: true,
    },
    Shape { name: "nested loops", source: |n| nested(n, |i| format!("for i{i} in range(2)")), compiles: true },
];

/// How deeply `source` nests, as the driver measures it.
fn nesting(source: &str) -> usize {
    onnxsc::syntax::parse(0, source).nesting.deepest
}

/// The deepest instance of `shape` that still nests at most [`CALLER_NESTING`].
fn deepest_on_the_caller(shape: &Shape) -> (String, Compilation) {
    let mut best = None;
    for n in 1.. {
        let source = (shape.source)(n);
        if nesting(&source) > CALLER_NESTING {
            break;
        }
        let c = compile_sources(vec![("deep.onnxs".into(), source.clone())]);
        best = Some((source, c));
    }
    best.unwrap_or_else(|| panic!("{}: even one level nests more than {CALLER_NESTING} deep", shape.name))
}

/// `work` on a thread with no more stack than [`CALLER_STACK`].
fn on_caller_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new().stack_size(CALLER_STACK).spawn_scoped(s, work).unwrap().join().unwrap()
    })
}

fn compile_and_emit(source: String) -> (Compilation, usize) {
    let c = compile_sources(vec![("deep.onnxs".into(), source)]);
    let proto = emit::proto::library_bytes(&c.functions, c.library_meta()).len();
    let protos: Vec<_> = c.functions.iter().map(emit::proto::function).collect();
    let text = emit::text::functions_to_text(&protos).len();
    (c, proto + text)
}

#[test]
fn the_deepest_shapes_that_stay_on_the_caller_fit_its_stack() {
    for shape in SHAPES {
        let (source, reference) = deepest_on_the_caller(shape);
        assert_eq!(!reference.has_errors(), shape.compiles, "{}: {:?}", shape.name, reference.diagnostics);
        let deepest = nesting(&source);
        assert!(deepest > CALLER_NESTING / 2, "{}: only {deepest} deep", shape.name);
        // Compiled, emitted and dropped (with the syntax trees it holds) with the caller's stack
        // only.
        let name = shape.name;
        let emitted = on_caller_stack(move || {
            let (c, emitted) = compile_and_emit(source);
            assert_eq!(c.diagnostics, reference.diagnostics, "{name}");
            assert_eq!(c.functions, reference.functions, "{name}");
            emitted
        });
        assert!(emitted > 0 || !shape.compiles, "{}", shape.name);
    }
}

#[test]
fn deeper_sources_move_to_the_large_stack_whatever_the_callers_stack() {
    // 90 levels (Python indents at most 100): more than `CALLER_STACK` holds on the dearest
    // paths.
    for shape in SHAPES {
        let source = (shape.source)(90);
        let name = shape.name;
        let reference = compile_sources(vec![("deep.onnxs".into(), source.clone())]);
        let deepest = nesting(&source);
        assert!(deepest > CALLER_NESTING, "{name}: {deepest} deep");
        let (diagnostics, functions) = on_caller_stack(move || {
            let c = compile_sources(vec![("deep.onnxs".into(), source)]);
            (c.diagnostics.len(), c.functions.len())
        });
        assert_eq!((diagnostics, functions), (reference.diagnostics.len(), reference.functions.len()), "{name}");
    }
}

#[test]
fn files_parsed_on_the_caller_may_be_rejected_at_any_depth() {
    // A rejected parse drops its trees recursively: as deep as the file is long.
    let deepest = CALLER_PARSE_BYTES - HEADER.len() - 8;
    let sources = [
        format!("{HEADER}C = {}1\n)\n", "-".repeat(deepest)),
        format!("{HEADER}C = {}1\n)\n", "[".repeat(deepest)),
        format!("{HEADER}C = 1{}\n)\n", "+1".repeat(deepest / 2)),
        format!("{HEADER}C = 1{}\n)\n", "[0]".repeat(deepest / 3)),
    ];
    for source in sources {
        assert!(source.len() <= CALLER_PARSE_BYTES);
        let reported = on_caller_stack(move || compile_sources(vec![("deep.onnxs".into(), source)]).diagnostics.len());
        assert!(reported > 0);
    }
}
