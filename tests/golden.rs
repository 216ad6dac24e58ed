//! Golden (snapshot) tests: tokens, ASTs, diagnostics and emitted functions.
//!
//! Each `.onnxs` file under `tests/cases/` is one case; its snapshot lives in
//! `tests/snapshots/`. Review changes with `INSTA_UPDATE=always cargo test` and `git diff`.

use onnxsc::diagnostics::{render_plain, Severity};
use onnxsc::driver::compile_sources;
use onnxsc::emit;
use onnxsc::syntax::{layout::layout, parse};
use std::path::Path;

fn read(path: &Path) -> (String, String) {
    let text = std::fs::read_to_string(path).expect("case file is readable");
    let name = format!("tests/cases/{}", path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).display())
        .replace("tests/cases/tests/cases/", "tests/cases/");
    (name, text)
}

/// The layout tokens of a file, one per line, with their source text.
fn tokens_of(text: &str) -> String {
    let laid = layout(0, text);
    let mut out = String::new();
    for (s, t, e) in &laid.tokens {
        out.push_str(&format!("{s:>4}..{e:<4} {:<14} {:?}\n", format!("{t:?}").split('(').next().unwrap_or(""), &text[*s..*e]));
    }
    for d in &laid.diagnostics {
        out.push_str(&format!("error[{}]: {}\n", d.code, d.message));
    }
    out
}

#[test]
fn tokens() {
    insta::glob!("cases/syntax/*.onnxs", |path| {
        let (_, text) = read(path);
        insta::assert_snapshot!(tokens_of(&text));
    });
}

#[test]
fn ast() {
    insta::glob!("cases/syntax/*.onnxs", |path| {
        let (_, text) = read(path);
        let parsed = parse(0, &text);
        assert!(parsed.diagnostics.is_empty(), "syntax case {} has errors", path.display());
        insta::assert_debug_snapshot!(parsed.module.expect("parsed"));
    });
}

/// Every error case must produce at least one error, and the rendering is the snapshot.
#[test]
fn diagnostics() {
    insta::glob!("cases/errors/*.onnxs", |path| {
        let (name, text) = read(path);
        let c = compile_sources(vec![(name, text)]);
        assert!(
            c.diagnostics.iter().any(|d| d.severity == Severity::Error),
            "{} should fail to compile",
            path.display()
        );
        let rendered: String = c.diagnostics.iter().map(|d| render_plain(&c.sources, d)).collect();
        insta::assert_snapshot!(rendered);
    });
}

fn emitted(path: &Path) -> String {
    let (name, text) = read(path);
    let c = compile_sources(vec![(name, text)]);
    let errors: Vec<String> = c.diagnostics.iter().map(|d| render_plain(&c.sources, d)).collect();
    assert!(!c.has_errors(), "{} should compile:\n{}", path.display(), errors.join(""));
    let protos: Vec<_> = c.functions.iter().map(emit::proto::function).collect();
    let mut out = errors.join("");
    out.push_str(&emit::text::functions_to_text(&protos));
    out
}

#[test]
fn emitted_functions() {
    insta::glob!("cases/ok/*.onnxs", |path| {
        insta::assert_snapshot!(emitted(path));
    });
}

#[test]
fn emitted_examples() {
    insta::glob!(concat!(env!("CARGO_MANIFEST_DIR"), "/examples"), "*.onnxs", |path| {
        insta::assert_snapshot!(emitted(path));
    });
}
