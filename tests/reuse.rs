//! An editor's re-check (`driver::analyze_again`, reusing the previous check's parse and
//! per-function results) must find exactly what a fresh analysis finds, after any edit.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::driver::{analyze, analyze_again, Analysis, CompileOptions, Overlay, Reuse, SourceInput};
use std::path::Path;

fn input(text: &str) -> Vec<SourceInput> {
    vec![SourceInput { name: "edited.onnxs".into(), bytes: text.as_bytes().to_vec() }]
}

/// What an analysis says, in a comparable form.
fn summary(a: &Analysis) -> String {
    let mut out = format!("{:#?}\n{:#?}\n", a.diagnostics, a.facts);
    for m in &a.modules {
        out.push_str(&format!("{:#?}\n", m.ast));
    }
    for f in &a.functions {
        out.push_str(&format!("{} {:?} {:?} {}\n", f.name, f.name_span, f.extent, f.label));
    }
    out
}

fn check_sequence(texts: &[String]) {
    let mut reuse = Reuse::default();
    for text in texts {
        let again = analyze_again(input(text), &CompileOptions::default(), &Overlay::new(), &mut reuse)
            .expect("no schema files");
        let fresh = analyze(input(text), &CompileOptions::default(), &Overlay::new()).expect("no schema files");
        assert_eq!(summary(&again), summary(&fresh), "after the edit to:\n{text}");
    }
}

fn cases() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("examples/tutorial.onnxs"), root.join("examples/language_tour.onnxs")];
    for dir in ["tests/cases/warnings", "tests/cases/fixes"] {
        let mut found: Vec<_> = std::fs::read_dir(root.join(dir)).expect("cases").flatten().map(|e| e.path()).collect();
        found.sort();
        paths.extend(found.into_iter().filter(|p| p.extension().is_some_and(|e| e == "onnxs")));
    }
    paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect()
}

#[test]
fn line_edits_reanalyse_as_a_fresh_analysis() {
    for text in cases() {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut texts = vec![text.clone()];
        // Each line removed in turn (what follows moves up), then each line duplicated (down),
        // each time from the original, so every step is an edit of the previous text.
        for k in 0..lines.len() {
            let mut without = lines.clone();
            without.remove(k);
            texts.push(without.concat());
            texts.push(text.clone());
            let mut twice = lines.clone();
            twice.insert(k, lines[k]);
            texts.push(twice.concat());
            texts.push(text.clone());
        }
        check_sequence(&texts);
    }
}

#[test]
fn typing_a_file_reanalyses_as_a_fresh_analysis() {
    // The tour typed line by line, and a character at a time in its last function.
    let text = include_str!("../examples/language_tour.onnxs");
    let mut texts: Vec<String> = text.match_indices('\n').map(|(i, _)| text[..=i].to_string()).collect();
    let last = text.rfind("\n@").unwrap_or(0);
    texts.extend(text.char_indices().filter(|(i, _)| *i > last).map(|(i, _)| text[..i].to_string()));
    check_sequence(&texts);
}
