//! Machine-applicable fixes: applying one removes its diagnostic and introduces no other.
//!
//! `tests/cases/fixes/` holds one fixable mistake per file; the snapshot shows each fix and the
//! file after it. Every error and warning case's fixes must keep the same promise.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::diagnostics::Diagnostic;
use onnxsc::driver::compile_sources;
use std::collections::BTreeMap;
use std::path::Path;

fn codes(diags: &[Diagnostic]) -> BTreeMap<&'static str, usize> {
    let mut out = BTreeMap::new();
    for d in diags {
        *out.entry(d.code).or_default() += 1;
    }
    out
}

/// Applies each fix of the file on its own; returns (fix message, fixed text) per fix.
fn check_fixes(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).expect("case is readable");
    // Named from the crate's root, as the golden tests name cases: the directory's
    // `pyproject.toml` applies (it selects the warnings reported only on request).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = path.strip_prefix(root).unwrap_or(path).display().to_string();
    let before = compile_sources(vec![(name.clone(), text.clone())]);
    let before_codes = codes(&before.diagnostics);
    let mut out = Vec::new();
    for d in &before.diagnostics {
        let Some(fix) = &d.fix else { continue };
        let fixed = fix.apply(&text);
        let after = compile_sources(vec![(name.clone(), fixed.clone())]);
        let after_codes = codes(&after.diagnostics);
        assert!(
            after_codes.get(d.code).copied().unwrap_or(0) < before_codes[d.code],
            "{}: fix `{}` leaves {} in place:\n{fixed}",
            path.display(),
            fix.message,
            d.code
        );
        for code in after_codes.keys() {
            // Adding the parameter an argument needs (the fix of E0502 and E0503) cannot write what
            // computes with it: W0512 then asks for that, the rest of the fix.
            let rest_of_the_fix = matches!(d.code, "E0502" | "E0503") && *code == "W0512";
            assert!(
                before_codes.contains_key(code) || rest_of_the_fix,
                "{}: fix `{}` introduces {code}:\n{fixed}",
                path.display(),
                fix.message
            );
        }
        out.push((fix.message.clone(), fixed));
    }
    out
}

#[test]
fn fix_cases_are_fixed() {
    insta::glob!("cases/fixes/*.onnxs", |path| {
        let fixes = check_fixes(path);
        assert!(!fixes.is_empty(), "{} offers no fix", path.display());
        let shown: String = fixes.iter().map(|(m, t)| format!("── {m}\n{t}")).collect();
        insta::assert_snapshot!(shown);
    });
}

#[test]
fn every_fix_of_the_error_and_warning_cases_removes_its_diagnostic() {
    let mut fixed = 0;
    for dir in ["errors", "warnings"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases").join(dir);
        let mut paths: Vec<_> = std::fs::read_dir(&dir).expect("cases").flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "onnxs")) {
            if std::fs::read_to_string(&p).is_ok() {
                fixed += check_fixes(&p).len();
            }
        }
    }
    assert!(fixed > 0, "no error or warning case offers a fix");
}
