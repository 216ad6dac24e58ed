//! The pipeline's shape, checked from the source: the top-level modules of `src/` use only
//! modules of their own layer or of the layers below, and never each other in a circle.
//! ARCHITECTURE.md describes the layers; this file is where their order is written down.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom first. A module may use the modules of its own layer and of the layers
/// below it (the generated protobuf types are `proto`, the shared ONNX vocabulary `onnx`;
/// `main` and `args` are the command line, `src/main.rs` and its clap definitions).
const LAYERS: &[&[&str]] = &[
    &["source", "diagnostics", "parallel", "digits", "allocator"],
    &["syntax"],
    &["proto", "onnx"],
    &["ir"],
    &["schema", "aten"],
    &["sema"],
    &["lower", "trace"],
    &["emit"],
    &["validate", "link", "decompile"],
    &["driver"],
    &["lsp"],
    &["contract"],
    &["main", "args"],
];

/// The modules of the binary, not of the library: they reach the library as `onnxsc::`.
const BINARY: &[&str] = &["main", "args"];

/// Edges against the order that exist today, each with the work that removes it. Whoever
/// removes an edge deletes its line here: the test fails on an allowance that is no longer
/// needed.
const ALLOWED: &[(&str, &str)] = &[];

/// Edges the layers would allow but that must not exist, and why.
const FORBIDDEN: &[(&str, &str, &str)] = &[
    (
        "link",
        "emit",
        "link reads libraries as protobuf; what it shares with emit (metadata keys, the signature JSON, IR versions) is in onnx",
    ),
    (
        "decompile",
        "sema",
        "decompile reads protobuf and writes text; whether the text compiles back is for the compiler to say, not for it to predict",
    ),
    (
        "trace",
        "lower",
        "a trace records into the IR (ir) and converts values as lowering does (sema::ir_values): it does not run the lowerer",
    ),
    (
        "emit",
        "sema",
        "emission reads the IR (ir), whose vocabulary is onnx's: it must not know what the source meant",
    ),
];

/// The longest hand-written source file, in lines.
const MAX_FILE_LINES: usize = 1200;

/// The longest function, in lines, unless a comment line starting `// Long:` just above it says
/// why it is longer.
const MAX_FUNCTION_LINES: usize = 150;

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

/// module -> the modules it uses -> a file that does.
fn graph() -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let modules = modules();
    let mut edges: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for (name, path) in &modules {
        let root = if BINARY.contains(&name.as_str()) { "onnxsc" } else { "crate" };
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

/// A file's module path under `src/`: `sema/env.rs` is `[sema, env]`, `driver/mod.rs` is
/// `[driver]`, the crate roots are `[]`.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("a file under src/").with_extension("");
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

/// Every path that starts with `root::`, segment by segment (`crate::sema::env::Global` gives
/// `[sema, env, Global]`; `use crate::{a, b::{c, d}}` gives `[a]`, `[b, c]` and `[b, d]`).
fn paths(code: &str, root: &str) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let prefix = format!("{root}::");
    let mut rest = code;
    while let Some(at) = rest.find(&prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == ':') {
            continue;
        }
        use_tree(rest, Vec::new(), &mut out);
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The paths of a use tree at the start of `text` (after its `root::`), each prefixed by
/// `prefix`; returns how much of `text` the tree spans.
fn use_tree(text: &str, prefix: Vec<String>, out: &mut BTreeSet<Vec<String>>) -> usize {
    let mut path = prefix;
    let mut at = 0;
    loop {
        let rest = &text[at..];
        let trimmed = rest.trim_start();
        at += rest.len() - trimmed.len();
        if let Some(group) = trimmed.strip_prefix('{') {
            at += 1;
            let mut inner = group;
            loop {
                let skipped = inner.len() - inner.trim_start().len();
                at += skipped;
                inner = &inner[skipped..];
                if let Some(after) = inner.strip_prefix('}') {
                    return at + 1 + (inner.len() - after.len() - 1);
                }
                if inner.is_empty() {
                    return at;
                }
                let used = use_tree(inner, path.clone(), out);
                at += used;
                inner = &inner[used..];
                if let Some(after) = inner.strip_prefix(',') {
                    at += 1;
                    inner = after;
                } else if used == 0 {
                    return at;
                }
            }
        }
        let name: String = trimmed.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            out.insert(path);
            return at;
        }
        at += name.len();
        path.push(name);
        match text[at..].strip_prefix("::") {
            Some(_) => at += 2,
            None => {
                out.insert(path);
                return at;
            }
        }
    }
}

/// The first segment of every path that starts with `root::` (`crate::sema::env` gives `sema`).
fn used(code: &str, root: &str) -> BTreeSet<String> {
    paths(code, root).into_iter().filter_map(|p| p.into_iter().next()).collect()
}

/// The module paths a file uses, made absolute (`crate::a::b`, `super::b` from the file's parent
/// module, `super::super::c`, `self::d`) and resolved to the module they name: the longest
/// prefix that is a module of `known` (`crate::sema::env::Global` is `[sema, env]`).
fn absolute_uses(here: &[String], text: &str, known: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for root in ["crate", "self", "super", "super::super", "super::super::super"] {
        let base: Vec<String> = match root {
            "crate" => Vec::new(),
            "self" => here.to_vec(),
            _ => {
                let up = root.matches("super").count();
                here[..here.len().saturating_sub(up)].to_vec()
            }
        };
        for tail in paths(text, root) {
            if tail.first().is_some_and(|s| s == "super") {
                continue;
            }
            let full: Vec<String> = base.iter().cloned().chain(tail).collect();
            let module = (1..=full.len()).rev().map(|n| full[..n].to_vec()).find(|p| known.contains(p));
            out.insert(module.unwrap_or(full));
        }
    }
    out
}

/// Source files: each one's module path with its code.
type Files = Vec<(Vec<String>, String)>;

/// Every file of `src/`: its module path and its code.
fn sources() -> Files {
    files_of(&src()).iter().map(|f| (module_path(f), code(f))).collect()
}

/// Every folder (as a module path) with its parts, the files and folders directly in it (a
/// part's own files, deeper ones too, belong to it).
fn folders(files: &[(Vec<String>, String)]) -> BTreeMap<Vec<String>, BTreeSet<String>> {
    let mut out: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for (path, _) in files {
        for depth in 1..path.len() {
            out.entry(path[..depth].to_vec()).or_default().insert(path[depth].clone());
        }
    }
    out
}

/// For each folder, the edges between its parts: part -> the parts it uses -> through which file.
fn folder_edges(files: &[(Vec<String>, String)]) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let mut known: BTreeSet<Vec<String>> = BTreeSet::new();
    for (path, _) in files {
        for n in 1..=path.len() {
            known.insert(path[..n].to_vec());
        }
    }
    let uses: Vec<(&Vec<String>, BTreeSet<Vec<String>>)> =
        files.iter().map(|(p, text)| (p, absolute_uses(p, text, &known))).collect();
    let mut out = BTreeMap::new();
    for (folder, parts) in folders(files) {
        let mut edges: BTreeMap<String, BTreeSet<String>> =
            parts.iter().map(|p| (p.clone(), BTreeSet::new())).collect();
        for (path, used) in &uses {
            if path.len() <= folder.len() || path[..folder.len()] != folder[..] {
                continue;
            }
            let part = &path[folder.len()];
            for u in used {
                if u.len() > folder.len() && u[..folder.len()] == folder[..] && &u[folder.len()] != part {
                    let to = &u[folder.len()];
                    if parts.contains(to) {
                        edges.entry(part.clone()).or_default().insert(to.clone());
                    }
                }
            }
        }
        out.insert(folder, edges);
    }
    out
}

/// The circles inside folders, as `folder: a -> b -> a`.
fn folder_circles(files: &[(Vec<String>, String)]) -> Vec<String> {
    folder_edges(files)
        .into_iter()
        .filter_map(|(folder, edges)| cycle(&edges).map(|c| format!("{}: {}", folder.join("/"), c.join(" -> "))))
        .collect()
}

#[test]
fn no_folder_has_a_circle_inside() {
    let files = sources();
    let circles = folder_circles(&files);
    assert!(circles.is_empty(), "the parts of these folders use each other in a circle:\n{}", circles.join("\n"));
}

fn synthetic(files: &[(&str, &str)]) -> Files {
    files.iter().map(|(p, text)| (p.split('/').map(String::from).collect(), text.to_string())).collect()
}

#[test]
fn the_folder_check_sees_paths_to_a_file_and_finds_a_circle_written_with_them() {
    // `crate::x::b::f` names the file x/b.rs, not the folder x: a circle between two files of x.
    let circle = synthetic(&[
        ("x/a", "use crate::x::b::f;\nfn g() { f() }"),
        ("x/b", "pub fn f() { crate::x::a::h() }"),
        ("x/c", "use crate::{x::{a::h, b}, y};"),
        ("y", ""),
    ]);
    assert_eq!(folder_circles(&circle), vec!["x: a -> b -> a".to_string()]);
    let edges = &folder_edges(&circle)[&vec!["x".to_string()]];
    assert_eq!(edges["c"], BTreeSet::from(["a".to_string(), "b".to_string()]), "a grouped use names both files");
    let downward = synthetic(&[("x/a", "use crate::x::b::f;"), ("x/b", "use super::super::y;"), ("y", "")]);
    assert!(folder_circles(&downward).is_empty());
}

#[test]
fn the_folder_check_sees_every_edge_of_sema() {
    // The edges a first-segment reading missed (`use crate::sema::env::Global` inside sema).
    let files = sources();
    let sema = &folder_edges(&files)[&vec!["sema".to_string()]];
    let seen: usize = sema.values().map(BTreeSet::len).sum();
    assert!(sema.get("binding").is_some_and(|d| !d.is_empty()), "binding's edges are seen: {sema:?}");
    assert!(seen > 42, "sema has more file-to-file edges than the 42 a first-segment reading saw: {seen}");
}

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let long: Vec<String> = files_of(&src())
        .into_iter()
        .map(|f| (fs::read_to_string(&f).expect("readable").lines().count(), f))
        .filter(|(n, _)| *n > MAX_FILE_LINES)
        .map(|(n, f)| format!("{}: {n} lines", f.display()))
        .collect();
    assert!(long.is_empty(), "split these files by job (at most {MAX_FILE_LINES} lines):\n{}", long.join("\n"));
}

/// The functions of a text longer than `limit` lines without a `// Long:` comment above them,
/// as (name, first line, length). Braces are counted outside strings, characters and comments.
fn long_functions(text: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = function_name(line) else { continue };
        let Some(length) = body_length(&lines[i..]) else { continue };
        let explained = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .take_while(|l| l.starts_with("//") || l.starts_with("#["))
            .any(|l| l.starts_with("// Long:"));
        if length > limit && !explained {
            out.push((name, i + 1, length));
        }
    }
    out
}

/// The name of the function a line declares, if it declares one.
fn function_name(line: &str) -> Option<String> {
    let mut rest = line.trim_start();
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe ", "extern \"C\" "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// How many lines a function spans, from its first line to the line of its closing brace;
/// `None` for a declaration without a body.
fn body_length(lines: &[&str]) -> Option<usize> {
    let mut depth = 0usize;
    let mut opened = false;
    for (n, line) in lines.iter().enumerate() {
        let mut chars = line.chars().peekable();
        let mut in_str = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' if in_str => {
                    chars.next();
                }
                '"' => in_str = !in_str,
                '/' if !in_str && chars.peek() == Some(&'/') => break,
                '\'' if !in_str => {
                    // A character literal ('{', '\'') or a lifetime ('a): skip a literal whole.
                    let ahead: String = chars.clone().take(3).collect();
                    if ahead.starts_with('\\') {
                        chars.next();
                        chars.next();
                        chars.next();
                    } else if ahead.chars().nth(1) == Some('\'') {
                        chars.next();
                        chars.next();
                    }
                }
                '{' if !in_str => {
                    depth += 1;
                    opened = true;
                }
                '}' if !in_str => {
                    depth = depth.saturating_sub(1);
                    if opened && depth == 0 {
                        return Some(n + 1);
                    }
                }
                ';' if !in_str && !opened => return None,
                _ => {}
            }
        }
    }
    None
}

#[test]
fn no_function_is_longer_than_the_limit_without_a_reason() {
    let mut long = Vec::new();
    for file in files_of(&src()) {
        let text = fs::read_to_string(&file).expect("readable");
        for (name, line, length) in long_functions(&text, MAX_FUNCTION_LINES) {
            long.push(format!("{}:{line}: `{name}` is {length} lines", file.display()));
        }
    }
    assert!(
        long.is_empty(),
        "make these a dispatcher over per-case helpers, or say why not in a `// Long:` comment above them \
         (at most {MAX_FUNCTION_LINES} lines):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_length_checks_can_fail() {
    let body = "    let a = '{';\n    let s = \"}}\";\n".repeat(3);
    let text = format!("fn short() {{\n{body}}}\n\n// Long: one table.\nfn explained() {{\n{body}}}\n");
    assert_eq!(long_functions(&text, 3), [("short".to_string(), 1, 8)]);
    assert_eq!(long_functions(&text, 8), []);
    assert_eq!(body_length(&["fn f();"]), None);
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
