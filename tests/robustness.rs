//! No input may crash the compiler: every prefix of every example, and every example with one
//! character removed, must come back as functions or diagnostics — never a panic.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::driver::compile_sources;

fn examples() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

fn boundaries(text: &str) -> Vec<usize> {
    (0..=text.len()).filter(|i| text.is_char_boundary(*i)).collect()
}

#[test]
fn every_prefix_compiles_or_reports() {
    for text in examples() {
        for i in boundaries(&text) {
            let c = compile_sources(vec![("prefix.onnxs".into(), text[..i].to_string())]);
            for d in &c.diagnostics {
                assert!(!d.labels.is_empty(), "diagnostic {} has no label", d.code);
                let s = d.primary_span().expect("a primary label");
                assert!(s.end as usize <= i && s.start <= s.end, "span {s} out of range for prefix {i}");
            }
        }
    }
}

#[test]
fn every_single_deletion_compiles_or_reports() {
    for text in examples() {
        let b = boundaries(&text);
        for w in b.windows(2) {
            let mutated = format!("{}{}", &text[..w[0]], &text[w[1]..]);
            let _ = compile_sources(vec![("deleted.onnxs".into(), mutated)]);
        }
    }
}

#[test]
fn pathological_inputs() {
    let deep = format!("x = {}1{}\n", "(".repeat(3000), ")".repeat(3000));
    let cases = [
        "\0".to_string(),
        "\r".to_string(),
        "\t\tdef".to_string(),
        "\"\"\"never closed".to_string(),
        "def f(x):\n\treturn x\n        return x\n".to_string(),
        deep,
        "@\n".repeat(100),
        "def f(x):\n    if x:\n".to_string(),
        format!("from onnxscript import opset18 as op\ndef f(x):\n    return x{}\n", " + x".repeat(100_000)),
        format!("def f(x):\n    return {}x\n", "-".repeat(100_000)),
    ];
    for text in cases {
        let c = compile_sources(vec![("weird.onnxs".into(), text)]);
        assert!(c.has_errors() || c.functions.is_empty());
    }
}
