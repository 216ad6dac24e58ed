//! `build --skip-invalid`: a library of what compiles, without the functions that have errors.
//!
//! A function is left out when an error lies inside it (from its first decorator to the end of
//! its body), when it calls a function that is left out (the library could not hold its callee),
//! and every function of a module is when an error lies outside every function of it (an import,
//! a module constant: the names its functions were written against are not what they say). The
//! errors are reported as ever; the library records what it left out (`onnxsc.left_out`,
//! docs/library-format.md), so a consumer knows the library is partial.

use crate::diagnostics::{Diagnostic, Severity};
use crate::onnx::metadata::LeftOutRecord;
use crate::sema::calls::{CalleeKind, Calls};
use crate::sema::decorators::Decoration;
use crate::sema::env::ModuleEnv;
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::ast::FunctionDef;
use std::collections::HashSet;

/// What a compilation leaves out of its library.
#[derive(Default)]
pub struct LeftOut {
    /// The functions left out, by file and the span of their name (as lowered functions and
    /// outlines carry them).
    pub functions: HashSet<(FileId, Span)>,
    /// Those the library would have held (compiled functions and trace-only translations; not
    /// the Python helpers of trace-time code), in source order, as the library records them.
    pub records: Vec<LeftOutRecord>,
}

/// Why a function is left out.
enum Why {
    Errors,
    ModuleErrors,
    Calls(usize),
}

/// The functions to leave out for the errors among `diagnostics`; `None` when an error lies in
/// no module (a schema file's): then nothing can be built. `modules` are the files of the
/// compilation's modules; one that did not parse has no environment and no functions.
pub(super) fn find(
    modules: &HashSet<FileId>,
    envs: &[ModuleEnv],
    decorations: &[Vec<Option<Decoration>>],
    calls: &Calls,
    diagnostics: &[Diagnostic],
    sources: &SourceMap,
) -> Option<LeftOut> {
    let total = envs.iter().map(|e| e.first_function + e.functions.len()).max().unwrap_or(0);
    let mut why: Vec<Option<Why>> = (0..total).map(|_| None).collect();
    for d in diagnostics.iter().filter(|d| d.severity == Severity::Error) {
        if !modules.contains(&d.file) {
            return None;
        }
        let Some(env) = envs.iter().find(|e| e.file == d.file) else { continue };
        let at = d.primary_span().map_or(0, |s| s.start);
        match env.functions.iter().position(|f| contains(extent(f), at)) {
            Some(k) => why[env.first_function + k] = Some(Why::Errors),
            None => {
                for k in 0..env.functions.len() {
                    why[env.first_function + k].get_or_insert(Why::ModuleErrors);
                }
            }
        }
    }
    // Their callers, and theirs.
    let mut pending: Vec<usize> = (0..total).filter(|&id| why[id].is_some()).collect();
    while let Some(id) = pending.pop() {
        for &caller in calls.called_by.get(id).map(Vec::as_slice).unwrap_or_default() {
            if why[caller].is_none() {
                why[caller] = Some(Why::Calls(id));
                pending.push(caller);
            }
        }
    }
    let mut out = LeftOut::default();
    // The records in the order of the files as given, then of their text.
    let mut order: Vec<usize> = (0..envs.len()).collect();
    order.sort_by_key(|&m| envs[m].file);
    for (env, decos) in order.into_iter().map(|m| (&envs[m], &decorations[m])) {
        for (k, f) in env.functions.iter().enumerate() {
            let id = env.first_function + k;
            let Some(reason) = &why[id] else { continue };
            out.functions.insert((env.file, f.name.span));
            let callee = calls.callees.get(id);
            if callee.is_some_and(|c| c.python && c.kind != CalleeKind::TraceOnly) {
                continue;
            }
            let (line, column) = sources.line_col(env.file, f.name.span.start);
            let reason = match reason {
                Why::Errors => "it has errors".to_string(),
                Why::ModuleErrors => "its module has errors outside any function".to_string(),
                Why::Calls(callee) => {
                    let name = calls.callees.get(*callee).map_or("?", |c| c.name.as_str());
                    format!("it calls `{name}`, which is left out")
                }
            };
            let torch_ops = decos.get(k).and_then(Option::as_ref).map(|d| d.torch_ops.as_slice()).unwrap_or_default();
            out.records.push(LeftOutRecord {
                name: f.name.name.clone(),
                reason,
                source: format!("{}:{line}:{column}", sources.name(env.file)),
                torch_ops: torch_ops.iter().map(|b| b.qualname.clone()).collect(),
            });
        }
    }
    Some(out)
}

/// A function's text: from its first decorator to the end of its body.
fn extent(f: &FunctionDef) -> Span {
    let start = f.decorators.iter().map(|d| d.span.start).chain([f.header_span.start]).min().unwrap_or(0);
    let end = f.body.last().map_or(f.header_span.end, |s| s.span.end).max(f.header_span.end);
    Span { start, end }
}

fn contains(span: Span, at: u32) -> bool {
    span.start <= at && at < span.end
}
