//! The pipeline's shape, checked from the source: the top-level modules of `src/` use only
//! modules of their own layer or of the layers below, and never each other in a circle.
//! ARCHITECTURE.md describes the layers; this file is where their order is written down.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom first. A module may use the modules of its own layer and of the layers
/// below it (the generated protobuf types are `proto`, the shared ONNX vocabulary `onnx`;
/// `main` is the command line, `src/main.rs`).
const LAYERS: &[&[&str]] = &[
    &["source", "diagnostics", "parallel", "digits", "allocator"],
    &["syntax"],
    &["proto", "onnx"],
    &["schema", "aten"],
    &["sema"],
    &["lower"],
    &["emit"],
    &["validate", "link"],
    &["driver"],
    &["lsp"],
    &["contract"],
    &["main"],
];

/// Edges against the order that exist today, each with the work that removes it. Whoever
/// removes an edge deletes its line here: the test fails on an allowance that is no longer
/// needed.
const ALLOWED: &[(&str, &str)] = &[];

/// Edges the layers would allow but that must not exist, and why.
const FORBIDDEN: &[(&str, &str, &str)] = &[(
    "link",
    "emit",
    "link reads libraries as protobuf; what it shares with emit (metadata keys, the signature JSON, IR versions) is in onnx",
)];

/// Modules whose own parts (the files directly in their folder) must not use each other in a
/// circle either.
const ACYCLIC_INSIDE: &[&str] = &["emit", "link", "onnx", "schema"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The Rust files of a module: `src/NAME.rs`, or everything under `src/NAME/`.
fn files_of(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).expect("a readable source folder") {
            let p = entry.expect("a readable entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The top-level modules: every folder and `.rs` file of `src/` but the crate roots.
fn modules() -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(src()).expect("src/") {
        let p = entry.expect("an entry").path();
        let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        let rust = p.is_dir() || p.extension().is_some_and(|e| e == "rs");
        if rust && name != "lib" && !name.is_empty() {
            out.insert(name, p);
        }
    }
    out
}

/// The code of a file without its comments (doc links name modules without using them).
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("a readable source file");
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The first segment of every path that starts with `root::` (`crate::sema::env` gives `sema`;
/// `use crate::{a, b::c}` gives `a` and `b`).
fn used(code: &str, root: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut out = BTreeSet::new();
    let prefix = format!("{root}::");
    let mut rest = code;
    while let Some(at) = rest.find(&prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        out.insert(ident(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// module -> the modules it uses -> a file that does.
fn graph() -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let modules = modules();
    let mut edges: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for (name, path) in &modules {
        let root = if name == "main" { "onnxsc" } else { "crate" };
        let entry = edges.entry(name.clone()).or_default();
        for file in files_of(path) {
            for dep in used(&code(&file), root) {
                if dep != *name && modules.contains_key(&dep) {
                    entry.entry(dep).or_insert_with(|| file.clone());
                }
            }
        }
    }
    edges
}

/// A circle in `edges`, if there is one.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|s| s == n) {
            let mut circle = stack[at..].to_vec();
            circle.push(n.to_string());
            return Some(circle);
        }
        if !done.insert(n.to_string()) {
            return None;
        }
        stack.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, done, stack) {
                return Some(c);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|n| visit(n, edges, &mut done, &mut Vec::new()))
}

fn layer(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&name))
}

#[test]
fn every_module_has_a_layer() {
    let unplaced: Vec<String> = modules().into_keys().filter(|m| layer(m).is_none()).collect();
    assert!(unplaced.is_empty(), "place {unplaced:?} in a layer of tests/architecture.rs (and in ARCHITECTURE.md)");
    let listed: Vec<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
    let known = modules();
    let gone: Vec<&&str> = listed.iter().filter(|m| !known.contains_key(**m)).collect();
    assert!(gone.is_empty(), "{gone:?} are listed in LAYERS but are no module of src/");
}

#[test]
fn dependencies_point_downward() {
    let mut upward = Vec::new();
    let mut used_allowances = BTreeSet::new();
    for (from, deps) in graph() {
        for (to, file) in deps {
            if layer(&to) <= layer(&from) {
                continue;
            }
            if ALLOWED.contains(&(from.as_str(), to.as_str())) {
                used_allowances.insert((from.clone(), to.clone()));
                continue;
            }
            upward.push(format!("{from} uses {to} (in {}), which is above it", file.display()));
        }
    }
    assert!(upward.is_empty(), "dependencies must point downward:\n{}", upward.join("\n"));
    let edges = graph();
    for (from, to, why) in FORBIDDEN {
        if let Some(file) = edges.get(*from).and_then(|deps| deps.get(*to)) {
            panic!("{from} uses {to} (in {}): {why}", file.display());
        }
    }
    for (from, to) in ALLOWED {
        assert!(
            used_allowances.contains(&(from.to_string(), to.to_string())),
            "{from} no longer uses {to}: delete its allowance from ALLOWED"
        );
    }
}

#[test]
fn modules_use_each_other_in_no_circle() {
    let edges: BTreeMap<String, BTreeSet<String>> = graph()
        .into_iter()
        .map(|(from, deps)| {
            let kept = deps.into_keys().filter(|to| !ALLOWED.contains(&(from.as_str(), to.as_str()))).collect();
            (from, kept)
        })
        .collect();
    assert_eq!(cycle(&edges), None, "top-level modules use each other in a circle");
}

#[test]
fn the_parts_of_some_modules_use_each_other_in_no_circle() {
    for module in ACYCLIC_INSIDE {
        let dir = src().join(module);
        let parts: BTreeSet<String> = fs::read_dir(&dir)
            .expect("a module folder")
            .filter_map(|e| {
                let p = e.ok()?.path();
                let stem = p.file_stem()?.to_str()?.to_string();
                (stem != "mod" && (p.is_dir() || p.extension().is_some_and(|e| e == "rs"))).then_some(stem)
            })
            .collect();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for part in &parts {
            let path = if dir.join(part).is_dir() { dir.join(part) } else { dir.join(format!("{part}.rs")) };
            let deps = edges.entry(part.clone()).or_default();
            for file in files_of(&path) {
                let text = code(&file);
                let named = used(&text, "super").into_iter().chain(used(&text, &format!("crate::{module}")));
                deps.extend(named.filter(|d| d != part && parts.contains(d)));
            }
        }
        assert_eq!(cycle(&edges), None, "the parts of `{module}` use each other in a circle");
    }
}

#[test]
fn the_scanner_sees_every_form_of_use() {
    let code = "use crate::{a::b, c};\nuse crate::d::{e, f};\nfn g() -> crate::h::I { $crate::j::k(); xcrate::l }";
    let found: Vec<String> = used(code, "crate").into_iter().collect();
    assert_eq!(found, ["a", "c", "d", "h"]);
    let mut circle = BTreeMap::new();
    circle.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    circle.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycle(&circle), Some(vec!["a".to_string(), "b".to_string(), "a".to_string()]));
}

/// `unsafe` is denied crate-wide (Cargo.toml), and one item may lift that: the allocator's
/// entry, `allocator.rs`. Any other `allow(unsafe_code)` widens what must be trusted.
#[test]
fn only_the_allocator_allows_unsafe_code() {
    // `modules` holds main.rs; lib.rs is the other crate root.
    let files: Vec<PathBuf> =
        modules().into_values().flat_map(|p| files_of(&p)).chain([src().join("lib.rs")]).collect();
    let mut allowed: Vec<String> = Vec::new();
    for file in &files {
        let text = code(file);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, line) in lines.iter().enumerate() {
            if line.contains("allow(unsafe_code") {
                let name = file.strip_prefix(src()).unwrap_or(file).display();
                allowed.push(format!("{name}: {}", lines.get(i + 1).unwrap_or(&"")));
            }
        }
    }
    assert_eq!(allowed, ["allocator.rs: unsafe impl std::alloc::GlobalAlloc for MiMalloc {"]);
}
