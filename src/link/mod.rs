//! `onnxsc link`: resolving an exported model's calls to functions against compiled libraries.
//!
//! An exported model calls translation functions by (domain, name, overload). Linking either adds
//! the called functions, and the functions they call, to the model (reference mode) or replaces
//! every call by the function's body (inline mode), correctly where onnx's inliners are not (see
//! the shared facts §4): defaults apply, function-only domains are imported, functions still
//! called are kept, subgraphs and nested calls are expanded.
//!
//! Reference mode writes only models ONNX Runtime loads: a call that leaves out an input (or an
//! attribute without a default that the body needs) calls a variant of its function without it
//! (`variants`), and a chain of calls deeper than onnx.checker and ONNX Runtime accept (100
//! functions, `validate::MAX_CALL_DEPTH`) is refused (E0811), as inline mode expands it.
//!
//! | module | job |
//! |---|---|
//! | `load` | bytes to a model or a library, rejecting corrupt and truncated files |
//! | `library` | the function table: model and library functions, duplicates, `--override` |
//! | `signature` | a function's signature (metadata or proto) and a call checked against it |
//! | `calls` | call or operator; reachable functions, unresolved calls, recursion, call depth |
//! | `opsets` | merged opset imports, schema-version conflicts, the IR version |
//! | `specialize` | a function bound to a call's attributes and inputs, conditions on them folded |
//! | `eval` | constant evaluation of the scalar ops those conditions use |
//! | `inline` | templates per (function, attributes, inputs given) and their instantiation at call sites |
//! | `variants` | reference mode: a variant per (function, inputs given, attributes left out) |
//! | `names`, `walk` | fresh names; walking nodes and subgraphs |
//! | `external` | external data kept valid wherever the output is written |
//!
//! Diagnostics are E08xx (W0801); they carry no source labels, as models have no source text.

mod calls;
pub mod external;
mod inline;
mod library;
pub use library::{Libraries, Library};
pub mod interface;
pub mod load;
mod names;
mod opsets;
pub mod shapes;
pub mod specialize;
mod variants;
pub mod walk;

pub mod eval;

use crate::diagnostics::{codes, Diagnostic, Severity};
use crate::proto::onnx::{GraphProto, ModelProto};
use std::collections::HashSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Add the called functions to `model.functions`.
    Reference,
    /// Expand every call.
    Inline,
}

#[derive(Clone, Copy, Debug)]
pub struct LinkOptions {
    pub mode: Mode,
    /// Library functions replace the model's own functions of the same (domain, name, overload).
    pub override_model: bool,
    /// Inline mode: the most nodes expansion may make ([`DEFAULT_MAX_NODES`]; E0807 past it).
    pub max_nodes: usize,
}

/// How many nodes inline mode makes at most unless told otherwise: far more than any exported
/// model (a large language model has tens of thousands), and a few hundred MB of memory.
pub const DEFAULT_MAX_NODES: usize = 500_000;

pub struct Linked {
    pub model: ModelProto,
    /// Warnings (W0801).
    pub diagnostics: Vec<Diagnostic>,
    /// Functions the output carries.
    pub functions: usize,
    /// Call sites expanded (inline mode).
    pub inlined_calls: usize,
}

/// Links `model` against `libraries`. On errors nothing is produced: all the diagnostics found
/// are returned (warnings included).
pub fn link(model: ModelProto, libraries: Vec<Library>, options: &LinkOptions) -> Result<Linked, Vec<Diagnostic>> {
    link_against(model, &Libraries::new(libraries), options)
}

/// [`link`] against libraries indexed once for many links: the work is the model's and what it
/// calls, whatever the size of the libraries.
pub fn link_against(
    mut model: ModelProto,
    libraries: &Libraries,
    options: &LinkOptions,
) -> Result<Linked, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut table =
        library::Table::build(std::mem::take(&mut model.functions), libraries, options.override_model, &mut diags);
    let mut graph = model.graph.take().unwrap_or_default();
    // Reference mode keeps all the model's functions, so their calls must resolve too.
    let roots = match options.mode {
        Mode::Reference => table.model_functions.clone(),
        Mode::Inline => Vec::new(),
    };
    let reachable = calls::reachable(&table, &graph.node, &roots, &mut diags);
    opsets::merge(&mut model, &table, &reachable, &mut diags);
    if diags.iter().any(|d| d.severity == Severity::Error) {
        return Err(diags);
    }

    let (kept, inlined_calls) = match options.mode {
        Mode::Reference => match reference(&mut table, &mut graph, &reachable, &mut diags) {
            Some(kept) => (kept, 0),
            None => return Err(diags),
        },
        Mode::Inline => {
            let mut inliner = inline::Inliner::new(&table);
            inliner.max_nodes = options.max_nodes;
            inliner.know_tensors(&graph);
            let mut names = inline::FreshNames::of_graph(&graph);
            inliner.expand_graph(&mut graph, &mut names);
            if let Some(chain) = inliner.overflow {
                diags.push(too_large(&table, &chain, options.max_nodes));
                return Err(diags);
            }
            // Calls that could not be expanded keep their functions (and their callees).
            let kept = calls::reachable(&table, &[], &inliner.kept, &mut Vec::new());
            (kept, inliner.calls)
        }
    };
    model.functions = table.into_protos(&kept);
    model.graph = Some(graph);
    model.ir_version = Some(opsets::ir_version(&model));
    // The inputs were checked; this catches what linking itself breaks (nesting too deep for
    // protobuf readers, more functions than onnx.checker accepts).
    let problems = crate::validate::model(&model);
    if !problems.is_empty() {
        diags.push(invalid_output(&problems));
        return Err(diags);
    }
    Ok(Linked { functions: model.functions.len(), model, diagnostics: diags, inlined_calls })
}

/// Reference mode: the model's functions and those reachable, calls that leave values out
/// pointed at variants (added to the table). `None` when that or the depth of the calls is
/// refused (the diagnostics are in `diags`).
fn reference(
    table: &mut library::Table,
    graph: &mut GraphProto,
    reachable: &[usize],
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<usize>> {
    let refused = variants::redirect(table, graph, reachable);
    if !refused.is_empty() {
        diags.extend(refused);
        return None;
    }
    // Again, now that calls may call variants (and a function only called without some input
    // no longer is).
    let reachable = calls::reachable(table, &graph.node, &table.model_functions, diags);
    if diags.iter().any(|d| d.severity == Severity::Error) {
        return None;
    }
    let chain = calls::deepest_chain(table, &reachable);
    if chain.len() > crate::validate::MAX_CALL_DEPTH {
        diags.push(calls::too_deep(table, &chain, &graph.node));
        return None;
    }
    let mut kept = table.model_functions.clone();
    let carried: HashSet<usize> = kept.iter().copied().collect();
    kept.extend(reachable.iter().filter(|id| !carried.contains(id)));
    Some(kept)
}

/// E0807: inlining would make more nodes than allowed, through this chain of calls.
fn too_large(table: &library::Table, chain: &[usize], max_nodes: usize) -> Diagnostic {
    let path: Vec<String> = chain.iter().map(|id| format!("`{}`", table.def(*id).qualname())).collect();
    Diagnostic::error(
        codes::INLINE_TOO_LARGE,
        0,
        format!("inlining would make more than {max_nodes} nodes"),
    )
    .note(format!("the limit was reached expanding {}", path.join(" -> ")))
    .note("each call copies the whole body of its function: functions that call others several times grow exponentially when inlined")
    .help(format!("link with `--mode reference`, which adds the functions instead of copying them, or raise the limit with `--max-nodes {}`", max_nodes.saturating_mul(4)))
}

/// E0809: the linked model would break a rule of onnx.checker.
fn invalid_output(problems: &[crate::validate::Problem]) -> Diagnostic {
    let mut d = Diagnostic::error(
        codes::LINKED_MODEL_INVALID,
        0,
        format!("the linked model would break ONNX's rules: {}", problems[0]),
    );
    for p in problems.iter().skip(1).take(4) {
        d = d.note(p.to_string());
    }
    d.help("nothing is written; onnx.checker would refuse the model (docs/robustness.md lists the rules)")
}
