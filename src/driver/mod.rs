//! The driver: files in, functions and diagnostics out. The command line and tests call this.

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lower::{self, ir::Function};
use crate::sema::env;
use crate::source::SourceMap;
use crate::syntax;
use std::path::{Path, PathBuf};

/// A failure to read the input, as opposed to errors in it (exit code 2, not 1).
#[derive(Debug)]
pub struct InputError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for InputError {}

/// Expands the command-line paths: files as given, directories to their `.onnxs` files
/// (recursively, sorted, so output does not depend on directory order).
pub fn collect_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| InputError { path: p.clone(), message: io_message(&e) })?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            if found.is_empty() {
                return Err(InputError { path: p.clone(), message: "directory contains no `.onnxs` files".into() });
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.canonicalize().unwrap_or_else(|_| p.clone())));
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let entries = std::fs::read_dir(dir).map_err(|e| InputError { path: dir.to_path_buf(), message: io_message(&e) })?;
    for entry in entries {
        let entry = entry.map_err(|e| InputError { path: dir.to_path_buf(), message: io_message(&e) })?;
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "onnxs") {
            out.push(path);
        }
    }
    Ok(())
}

pub fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Everything one compilation produced.
pub struct Compilation {
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
    pub functions: Vec<Function>,
}

impl Compilation {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == crate::diagnostics::Severity::Error)
    }
}

/// Reads and compiles the given files.
pub fn compile_paths(paths: &[PathBuf]) -> Result<Compilation, InputError> {
    let files = collect_inputs(paths)?;
    let mut texts = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).map_err(|e| InputError { path: f.clone(), message: io_message(&e) })?;
        let text = String::from_utf8(bytes).map_err(|_| InputError { path: f.clone(), message: "not valid UTF-8 text".into() })?;
        texts.push((f.display().to_string(), text));
    }
    Ok(compile_sources(texts))
}

/// Stack for the compiler thread: the AST is walked recursively, and a pathological input (a
/// sum of 100,000 terms is a tree that deep) must get diagnostics, not a stack overflow.
const COMPILER_STACK: usize = 1 << 30;

/// Compiles in-memory sources (name, text); used by tests and the command line alike.
pub fn compile_sources(inputs: Vec<(String, String)>) -> Compilation {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new().stack_size(COMPILER_STACK).spawn_scoped(scope, || compile_on_this_thread(&inputs));
        match worker {
            Ok(handle) => handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: compile here, with the stack we have.
            Err(_) => compile_on_this_thread(&inputs),
        }
    })
}

fn compile_on_this_thread(inputs: &[(String, String)]) -> Compilation {
    let mut sources = SourceMap::new();
    let mut diags = Diagnostics::new();
    let mut functions = Vec::new();
    for (name, text) in inputs {
        // Python accepts a UTF-8 byte-order mark at the start of a file.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let file = sources.add(name.clone(), text.to_string());
        let text = sources.text(file).to_string();
        functions.extend(compile_file(file, &text, &mut diags));
    }
    Compilation { sources, diagnostics: diags.into_sorted(), functions }
}

/// Compiles the functions of one file.
pub fn compile_file(file: usize, text: &str, diags: &mut Diagnostics) -> Vec<Function> {
    let parsed = syntax::parse(file, text);
    diags.extend(parsed.diagnostics);
    let Some(module) = parsed.module else { return Vec::new() };
    let env = env::build(file, &module, diags);
    // Decorators first: a call to another function needs the callee's domain.
    let decorations: Vec<_> = env.functions.iter().map(|f| lower::function::decoration(&env, f, diags).ok()).collect();
    let domains: Vec<String> = decorations
        .iter()
        .map(|d| d.as_ref().map(|d| d.domain.clone()).unwrap_or_else(|| lower::DEFAULT_FUNCTION_DOMAIN.into()))
        .collect();
    env.functions
        .iter()
        .zip(&decorations)
        .filter_map(|(f, deco)| lower::lower_function(&env, f, deco.as_ref()?, &domains, text, diags))
        .collect()
}
