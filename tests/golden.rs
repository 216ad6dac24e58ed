//! Golden (snapshot) tests: tokens, ASTs, diagnostics and emitted functions.
//!
//! Each `.onnxs` file under `tests/cases/` is one case; its snapshot lives in
//! `tests/snapshots/`. Review changes with `INSTA_UPDATE=always cargo test` and `git diff`.

use onnxsc::diagnostics::{render_plain, Severity};
use onnxsc::driver::{compile_inputs, compile_sources, Compilation, Input, Options};
use onnxsc::emit;
use onnxsc::syntax::{layout::layout, parse};
use std::path::Path;

fn case_name(path: &Path) -> String {
    format!("tests/cases/{}", path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).display())
        .replace("tests/cases/tests/cases/", "tests/cases/")
}

fn read(path: &Path) -> (String, String) {
    let text = std::fs::read_to_string(path).expect("case file is readable");
    (case_name(path), text)
}

/// Compiles one case from its bytes (some error cases are deliberately not UTF-8).
fn compile_case(path: &Path) -> Compilation {
    let bytes = std::fs::read(path).expect("case file is readable");
    compile_inputs(vec![Input { name: case_name(path), bytes }], &Options::default()).expect("no schema files to read")
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
        let c = compile_case(path);
        assert!(
            c.diagnostics.iter().any(|d| d.severity == Severity::Error),
            "{} should fail to compile",
            path.display()
        );
        let rendered: String = c.diagnostics.iter().map(|d| render_plain(&c.sources, d)).collect();
        insta::assert_snapshot!(rendered);
    });
}

/// `tests/cases/errors/expected.txt` names, for every error case, the code and line of its first
/// error: the suite's contract, independent of how diagnostics are worded.
#[test]
fn error_cases_report_their_expected_code_and_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/errors");
    let manifest = std::fs::read_to_string(dir.join("expected.txt")).expect("expected.txt");
    let mut listed = std::collections::BTreeSet::new();
    for line in manifest.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [file, code, line_no] = parts[..] else { panic!("malformed line in expected.txt: {line}") };
        let line_no: usize = line_no.parse().expect("a line number");
        listed.insert(file.to_string());
        let c = compile_case(&dir.join(file));
        let first = c.diagnostics.iter().find(|d| d.severity == Severity::Error).unwrap_or_else(|| panic!("{file}: no error"));
        let span = first.labels.iter().find(|l| l.primary).map(|l| l.span).expect("a primary label");
        let (got_line, _) = c.sources.line_col(first.file, span.start);
        assert_eq!((first.code, got_line), (code, line_no), "{file}: first error");
    }
    let on_disk: std::collections::BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("errors dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".onnxs"))
        .collect();
    let unlisted: Vec<_> = on_disk.difference(&listed).collect();
    let missing: Vec<_> = listed.difference(&on_disk).collect();
    assert!(unlisted.is_empty() && missing.is_empty(), "expected.txt out of date: unlisted {unlisted:?}, missing {missing:?}");
}

/// Warning cases compile (exit 0) but must warn; the rendering is the snapshot.
#[test]
fn warnings() {
    insta::glob!("cases/warnings/*.onnxs", |path| {
        let c = compile_case(path);
        assert!(!c.has_errors(), "{} should compile", path.display());
        assert!(c.diagnostics.iter().any(|d| d.severity == Severity::Warning), "{} should warn", path.display());
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
