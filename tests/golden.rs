//! Golden (snapshot) tests: tokens, ASTs, diagnostics and emitted functions.
//!
//! Each `.onnxs` file under `tests/cases/` is one case; its snapshot lives in
//! `tests/snapshots/`. Review changes with `INSTA_UPDATE=always cargo test` and `git diff`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::diagnostics::{render_plain, Severity};
use onnxsc::driver::{compile_inputs, compile_sources, Compilation, CompileOptions, SourceInput};
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
    compile_inputs(&[SourceInput { name: case_name(path), bytes }], &CompileOptions::default())
        .expect("no schema files to read")
}

/// The layout tokens of a file, one per line, with their source text.
fn tokens_of(text: &str) -> String {
    let laid = layout(0, text);
    let mut out = String::new();
    for (s, t, e) in &laid.tokens {
        out.push_str(&format!(
            "{s:>4}..{e:<4} {:<14} {:?}\n",
            format!("{t:?}").split('(').next().unwrap_or(""),
            &text[*s..*e]
        ));
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

/// Every error case starts with a header comment naming the code and line of its first error,
/// `# expect: E0406 at line 8`: the suite's contract, independent of how diagnostics are worded.
#[test]
fn error_cases_report_their_expected_code_and_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/errors");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("errors dir") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|e| e != "onnxs") {
            continue;
        }
        let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).expect("case file is readable");
        let header = String::from_utf8_lossy(bytes.split(|&b| b == b'\n').next().unwrap_or_default()).into_owned();
        let (code, line_no) = parse_expect_header(&header)
            .unwrap_or_else(|| panic!("{name}: the first line must be `# expect: CODE at line N`, not {header:?}"));
        let c = compile_case(&path);
        let first =
            c.diagnostics.iter().find(|d| d.severity == Severity::Error).unwrap_or_else(|| panic!("{name}: no error"));
        let span = first.labels.iter().find(|l| l.primary).map(|l| l.span).expect("a primary label");
        let (got_line, _) = c.sources.line_col(first.file, span.start);
        assert_eq!((first.code, got_line), (code.as_str(), line_no), "{name}: first error");
        checked += 1;
    }
    assert!(checked > 0, "no error cases found in {}", dir.display());
}

/// A function that is not compiled was dropped for errors, which were reported: no case drops
/// a function silently (the driver also asserts it in debug builds), and a case that compiles
/// drops none.
#[test]
fn a_compilation_that_drops_a_function_has_errors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut dropped = 0;
    for dir in ["errors", "warnings", "ok"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("a cases directory") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_none_or(|e| e != "onnxs") {
                continue;
            }
            let c = compile_case(&path);
            assert!(c.dropped == 0 || c.has_errors(), "{}: a function was dropped without an error", path.display());
            assert!(dir == "errors" || c.dropped == 0, "{}: a function was dropped", path.display());
            dropped += c.dropped;
        }
    }
    assert!(dropped > 100, "only {dropped} functions were dropped by the error cases");
}

/// `# expect: E0406 at line 8` → (`E0406`, 8).
fn parse_expect_header(line: &str) -> Option<(String, usize)> {
    let rest = line.trim_end().strip_prefix("# expect: ")?;
    let (code, line_no) = rest.split_once(" at line ")?;
    Some((code.to_string(), line_no.parse().ok()?))
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

/// Suppression as ruff users write it (`tests/cases/suppression`, with its `pyproject.toml`):
/// `# noqa` comments, file-wide ones, the configuration's `ignore`, `per-file-ignores` and
/// `extend-select`. The snapshot is what is still reported.
#[test]
fn suppression() {
    insta::glob!("cases/suppression/*.onnxs", |path| {
        let c = compile_case(path);
        assert!(!c.has_errors(), "{} should compile", path.display());
        let rendered: String = c.diagnostics.iter().map(|d| render_plain(&c.sources, d)).collect();
        insta::assert_snapshot!(rendered);
    });
}

/// Declared custom operators against the ones registered with PyTorch (`--registered`, which the
/// Python package writes): a different declaration is E0515, and undeclared operators are
/// checked against their registration.
#[test]
fn registered_schemas() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/registered");
    let bytes = std::fs::read(dir.join("declared.onnxs")).expect("case file is readable");
    let options = CompileOptions { registered_files: vec![dir.join("registered.yaml")], ..CompileOptions::default() };
    let input = SourceInput { name: "tests/cases/registered/declared.onnxs".into(), bytes };
    let c = compile_inputs(std::slice::from_ref(&input), &options).expect("the registered schemas are readable");
    let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0515", "E0503", "W0512", "E0504"]);
    let rendered: String = c.diagnostics.iter().map(|d| render_plain(&c.sources, d)).collect();
    insta::assert_snapshot!(rendered);
    // Without the registrations, the declarations are all there is: `twice` is unknown.
    let alone = compile_inputs(&[input], &CompileOptions::default()).expect("no schema files");
    assert_eq!(alone.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(), ["W0512", "E0501"]);
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

/// The inputs of a multi-module scenario (`tests/cases/modules/{ok,errors}/NAME/`): the files its
/// `inputs.txt` lists, else its `main*.onnxs` files. The other modules of the directory are
/// found through imports, as `onnxsc build main.onnxs` finds them.
/// The build's streamed, parallel encoding is the library model's encoding, byte for byte: on
/// every example and on a library large enough to be split over threads.
#[test]
fn library_bytes_are_the_library_models_encoding() {
    use prost::Message;
    let mut sources: Vec<(String, String)> = Vec::new();
    for entry in std::fs::read_dir("examples").expect("examples/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "onnxs") {
            sources.push(read(&path));
        }
    }
    let mut large = String::from("from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\n");
    for i in 0..500 {
        large.push_str(&format!(
            "\n@script()\ndef f{i}(x: FLOAT[\"N\"], alpha: float = {i}.5) -> FLOAT[\"N\"]:\n    if alpha != 1.0:\n        x = op.Mul(x, alpha)\n    return op.Add(x, 1.0)\n"
        ));
    }
    sources.push(("large.onnxs".into(), large));
    for (name, text) in sources {
        let c = compile_sources(vec![(name.clone(), text)]);
        assert!(!c.has_errors(), "{name} should compile");
        let expected = emit::proto::library_model(&c.functions, c.library_meta()).encode_to_vec();
        assert_eq!(emit::proto::library_bytes(&c.functions, c.library_meta()), expected, "{name}");
    }
}

fn scenario_inputs(dir: &Path) -> Vec<SourceInput> {
    let listed = std::fs::read_to_string(dir.join("inputs.txt")).ok();
    let mut files: Vec<std::path::PathBuf> = match listed {
        Some(list) => {
            list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(|l| dir.join(l)).collect()
        }
        None => {
            let mut found: Vec<_> = std::fs::read_dir(dir)
                .expect("scenario directory")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension().is_some_and(|e| e == "onnxs")
                        && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("main"))
                })
                .collect();
            found.sort();
            found
        }
    };
    assert!(!files.is_empty(), "{}: no inputs (add main.onnxs or inputs.txt)", dir.display());
    files.dedup();
    files
        .into_iter()
        .map(|p| SourceInput { name: case_name(&p), bytes: std::fs::read(&p).expect("scenario file is readable") })
        .collect()
}

/// The files a compilation read, in order (inputs, then modules found through imports),
/// relative to the scenario directory.
fn files_read(c: &Compilation, dir: &Path) -> String {
    let prefix = format!("{}/", case_name(dir));
    let names: Vec<String> =
        (0..c.sources.len()).map(|f| c.sources.name(f).trim_start_matches(&prefix).to_string()).collect();
    format!("# files: {}\n", names.join(", "))
}

/// Multi-module scenarios that compile: the files read, the warnings, and every function of the
/// library in order.
#[test]
fn modules_ok() {
    insta::glob!("cases/modules/ok/*", |dir| {
        if !dir.is_dir() {
            return;
        }
        let c = compile_inputs(&scenario_inputs(dir), &CompileOptions::default()).expect("no schema files to read");
        let rendered: String = c.diagnostics.iter().map(|d| render_plain(&c.sources, d)).collect();
        assert!(!c.has_errors(), "{} should compile:\n{rendered}", dir.display());
        let protos: Vec<_> = c.functions.iter().map(emit::proto::function).collect();
        insta::assert_snapshot!(format!("{}{rendered}{}", files_read(&c, dir), emit::text::functions_to_text(&protos)));
    });
}

/// Multi-module scenarios that fail: the files read and the diagnostics.
#[test]
fn modules_errors() {
    insta::glob!("cases/modules/errors/*", |dir| {
        if !dir.is_dir() {
            return;
        }
        let c = compile_inputs(&scenario_inputs(dir), &CompileOptions::default()).expect("no schema files to read");
        assert!(c.has_errors(), "{} should fail to compile", dir.display());
        let rendered: String = c.diagnostics.iter().map(|d| render_plain(&c.sources, d)).collect();
        insta::assert_snapshot!(format!("{}{rendered}", files_read(&c, dir)));
    });
}

/// A module's library does not depend on which of its files are given: giving every file of a
/// scenario, in any order, builds the same functions as giving its entry point (each once).
#[test]
fn modules_found_or_given_build_the_same_functions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/modules/ok");
    for entry in std::fs::read_dir(&root).expect("modules/ok") {
        let dir = entry.expect("entry").path();
        if !dir.is_dir() || dir.join("inputs.txt").exists() {
            continue;
        }
        let found = compile_inputs(&scenario_inputs(&dir), &CompileOptions::default()).expect("no schema files");
        let mut all = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("dir") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|e| e == "onnxs") {
                    all.push(p);
                }
            }
        }
        all.sort();
        all.reverse();
        let given = compile_inputs(
            &all.iter()
                .map(|p| SourceInput { name: case_name(p), bytes: std::fs::read(p).expect("readable") })
                .collect::<Vec<_>>(),
            &CompileOptions::default(),
        )
        .expect("no schema files");
        assert!(!given.has_errors(), "{}", dir.display());
        let key = |c: &Compilation| {
            let mut v: Vec<String> =
                c.functions.iter().map(|f| emit::text::functions_to_text(&[emit::proto::function(f)])).collect();
            v.sort();
            v
        };
        assert_eq!(key(&found), key(&given), "{}", dir.display());
    }
}

/// No panic whatever the modules contain: each file of each scenario cut at every few
/// characters (the others intact, the scenario copied to a scratch directory so that imports
/// still find its modules) compiles or reports.
#[test]
fn modules_cut_anywhere_compile_or_report() {
    fn files_of(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).expect("dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                files_of(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/modules");
    let scratch = std::env::temp_dir().join(format!("onnxsc-modules-cut-{}", std::process::id()));
    for group in ["ok", "errors"] {
        for entry in std::fs::read_dir(root.join(group)).expect("group") {
            let dir = entry.expect("entry").path();
            if !dir.is_dir() {
                continue;
            }
            let mut files = Vec::new();
            files_of(&dir, &mut files);
            files.sort();
            let inputs: Vec<String> = scenario_inputs(&dir).iter().map(|i| i.name.clone()).collect();
            for cut in files.iter().filter(|f| f.extension().is_some_and(|e| e == "onnxs")) {
                let text = std::fs::read_to_string(cut).expect("readable");
                let ends: Vec<usize> = text.char_indices().map(|(i, _)| i).step_by(5).collect();
                for end in ends {
                    let _ = std::fs::remove_dir_all(&scratch);
                    for f in &files {
                        let rel = f.strip_prefix(&dir).expect("inside");
                        let to = scratch.join(rel);
                        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
                        let bytes = std::fs::read(f).expect("readable");
                        std::fs::write(&to, if f == cut { &bytes[..end] } else { &bytes[..] }).expect("write");
                    }
                    let scenario_inputs: Vec<SourceInput> = inputs
                        .iter()
                        .map(|name| {
                            let rel = Path::new(name).strip_prefix(case_name(&dir)).expect("inside");
                            let p = scratch.join(rel);
                            SourceInput { name: p.display().to_string(), bytes: std::fs::read(&p).expect("readable") }
                        })
                        .collect();
                    let c = compile_inputs(&scenario_inputs, &CompileOptions::default()).expect("no schema files");
                    for d in &c.diagnostics {
                        let _ = render_plain(&c.sources, d);
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
