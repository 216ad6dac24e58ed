//! Trace-only translations for the exporter: the sources compiled once into a [`TraceProgram`]
//! (syntax trees, environments, decorations), then each call of the exporter specialised to the
//! function of ONNX nodes its facts give (`trace::specialize`), as a `FunctionProto`.
//!
//! A program that serves the exporter's calls lives as long as its process: its syntax trees
//! are kept for the whole process (leaked, which the process's exit frees), so that the
//! environments borrowing them are built once, not for every call. [`TraceProgram::scoped`]
//! builds one that lives only as long as a closure runs, for one-shot uses (the `trace` command,
//! tests, the fuzz target), and frees everything after.

use super::inputs::{InputError, SourceInput};
use super::modules::{identity, Modules, Parsing};
use super::parse::PreviousParses;
use super::pipeline::{build_environments, read_heads};
use crate::diagnostics::{codes, Diagnostic, Diagnostics};
use crate::emit;
use crate::onnx::metadata::TraceRecord;
use crate::onnx::ElemType;
use crate::proto::onnx::FunctionProto;
use crate::sema::calls::{Callee, CalleeKind};
use crate::sema::env::ModuleEnv;
use crate::sema::shapes;
use crate::sema::value::GraphType;
use crate::source::SourceMap;
use crate::trace::{self, CallFacts, Specialized, TraceContext};
use std::collections::HashMap;
use std::path::Path;

/// The trace-only translations of some sources, ready to be specialised call by call; `'m` is
/// how long the syntax trees its environments borrow live.
pub struct TraceProgram<'m> {
    pub sources: SourceMap,
    envs: Vec<ModuleEnv<'m>>,
    /// Each trace-only function by `domain::name`, with its id.
    functions: HashMap<String, usize>,
    /// The functions compiled as scripts, by id: a trace calls them as nodes.
    scripts: HashMap<usize, Callee>,
    /// What compiling the sources reported.
    pub diagnostics: Vec<Diagnostic>,
}

impl TraceProgram<'static> {
    /// Parses the sources (and the modules they import) and reads their functions' heads, for
    /// the rest of the process.
    pub fn compile(inputs: &[SourceInput]) -> TraceProgram<'static> {
        let (mods, sources, diags) = parse_modules(inputs, Modules::default());
        // The environments borrow the trees for as long as the program serves calls.
        let mods: &'static Modules = Box::leak(Box::new(mods));
        TraceProgram::from_modules(mods, sources, diags)
    }

    /// The program of a library's trace-only translations, from the sources it records. Their
    /// imports of each other resolve among them, whatever the file system holds now.
    pub fn from_record(record: &TraceRecord) -> TraceProgram<'static> {
        let inputs: Vec<SourceInput> = record
            .sources
            .iter()
            .map(|s| SourceInput { name: s.name.clone(), bytes: s.text.clone().into_bytes() })
            .collect();
        let mut mods = Modules::default();
        for s in &record.sources {
            let key = mods.key(Path::new(&s.name));
            mods.overlay.insert(key, s.text.clone());
        }
        let (mods, sources, diags) = parse_modules(&inputs, mods);
        let mods: &'static Modules = Box::leak(Box::new(mods));
        TraceProgram::from_modules(mods, sources, diags)
    }
}

impl<'m> TraceProgram<'m> {
    /// The program of `inputs`, alive while `run` runs; everything is freed after.
    pub fn scoped<R>(inputs: &[SourceInput], run: impl FnOnce(&TraceProgram<'_>) -> R) -> R {
        let (mods, sources, diags) = parse_modules(inputs, Modules::default());
        run(&TraceProgram::from_modules(&mods, sources, diags))
    }

    /// [`TraceProgram::scoped`] for the sources at `paths` (read as `check` reads them).
    pub fn scoped_paths<R>(
        paths: &[std::path::PathBuf],
        run: impl FnOnce(&TraceProgram<'_>) -> R,
    ) -> Result<R, InputError> {
        Ok(TraceProgram::scoped(&super::inputs::read_inputs(paths)?, run))
    }

    /// The environments and functions of parsed modules.
    fn from_modules(mods: &'m Modules, sources: SourceMap, mut diags: Diagnostics) -> TraceProgram<'m> {
        let envs = build_environments(mods, &mut diags);
        let heads = read_heads(&envs, &sources, &mut diags);
        let mut functions = HashMap::new();
        let mut scripts = HashMap::new();
        for (id, callee) in heads.calls.callees.iter().enumerate() {
            if callee.kind == CalleeKind::TraceOnly {
                functions.insert(format!("{}::{}", callee.domain, callee.name), id);
            } else if callee.called_as_node() {
                scripts.insert(id, callee.clone());
            }
        }
        TraceProgram { sources, envs, functions, scripts, diagnostics: diags.into_sorted() }
    }

    /// Whether the sources define the trace-only translation `domain::name`.
    pub fn has_function(&self, qualified: &str) -> bool {
        self.functions.contains_key(qualified)
    }

    /// The trace-only translations of the sources, as `domain::name`, sorted.
    pub fn function_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.functions.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// The function `call` names, specialised to its facts, as a `FunctionProto` named
    /// `variant`, with what the trace inferred of each output; or the error that stopped the
    /// trace (located in [`TraceProgram::sources`]).
    pub fn specialize(&self, call: &CallFacts, variant: &str) -> Result<TraceAnswer, Box<Diagnostic>> {
        let Some(&id) = self.functions.get(&call.function) else {
            return Err(Box::new(Diagnostic::error(
                codes::TRACE_ERROR,
                0,
                format!("no trace-only translation `{}` in these sources", call.function),
            )));
        };
        let (domain, _) = call.domain_and_name();
        let cx = TraceContext { sources: &self.sources, envs: &self.envs, scripts: &self.scripts };
        let Specialized { function, returns } = trace::specialize(&cx, id, domain, variant, call)?;
        Ok(TraceAnswer { function: emit::proto::function(&function), returns })
    }
}

/// Why `onnxsc trace` has no function for a call.
pub enum TraceAnswerError {
    /// The sources have no trace-only translation of that name; these are the ones they have.
    Unknown { function: String, known: Vec<String> },
    /// The trace stopped at this error (located in [`TraceProgram::sources`]).
    Failed(Box<Diagnostic>),
}

impl std::fmt::Display for TraceAnswerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceAnswerError::Unknown { function, .. } => {
                write!(f, "`--call` names `{function}`, which is no trace-only translation of these sources")
            }
            TraceAnswerError::Failed(d) => f.write_str(&d.message),
        }
    }
}

impl TraceAnswerError {
    /// What to name instead.
    pub fn help(&self) -> Option<String> {
        match self {
            TraceAnswerError::Unknown { known, .. } if known.is_empty() => {
                Some("the sources define no `@torch_op(..., trace_only=True)` function".into())
            }
            TraceAnswerError::Unknown { known, .. } => {
                Some(format!("name one as `domain::name`: {}", known.join(", ")))
            }
            TraceAnswerError::Failed(d) => d.help.clone(),
        }
    }
}

impl TraceProgram<'_> {
    /// What `onnxsc trace` prints for a call: the function it names specialised to its facts,
    /// named as a call answered alone is ([`trace::variant_name`]), and what it returns.
    pub fn answer(&self, call: &CallFacts) -> Result<TraceAnswer, TraceAnswerError> {
        if !self.has_function(&call.function) {
            let known = self.function_names().into_iter().map(String::from).collect();
            return Err(TraceAnswerError::Unknown { function: call.function.clone(), known });
        }
        let (_, name) = call.domain_and_name();
        self.specialize(call, &trace::variant_name(name, 0)).map_err(TraceAnswerError::Failed)
    }
}

/// A call specialised: the function, and what the trace inferred of each output.
pub struct TraceAnswer {
    pub function: FunctionProto,
    pub returns: Vec<GraphType>,
}

impl TraceAnswer {
    /// The function in ONNX's textual syntax, then a `# returns:` line with each output's
    /// element type and shape (`float32[2, s0]`; `?` where unknown, `[...]` for an unknown rank),
    /// a sequence's with its tensors' shapes when known (`sequence[float32: [2, 3], [1, 3]]`).
    pub fn to_text(&self) -> String {
        let returns: Vec<String> = self
            .returns
            .iter()
            .map(|t| match t {
                GraphType::Tensor { elem, shape } => format!(
                    "{}{}",
                    elem.map_or("?", ElemType::numpy_name),
                    shape.as_deref().map_or("[...]".into(), shapes::dims_text)
                ),
                GraphType::Sequence { elem, items } => {
                    let elem = elem.map_or("?", ElemType::numpy_name);
                    match items {
                        Some(items) => {
                            let items: Vec<String> =
                                items.iter().map(|s| s.as_deref().map_or("[...]".into(), shapes::dims_text)).collect();
                            format!("sequence[{elem}: {}]", items.join(", "))
                        }
                        None => format!("sequence[{elem}]"),
                    }
                }
            })
            .collect();
        format!("{}# returns: {}\n", emit::text::function_to_text(&self.function), returns.join(", "))
    }
}

/// Parses `inputs` into `mods`, with the modules they import.
fn parse_modules(inputs: &[SourceInput], mut mods: Modules) -> (Modules, SourceMap, Diagnostics) {
    let (mut sources, mut diags) = (SourceMap::new(), Diagnostics::new());
    let previous = PreviousParses::default();
    let mut parsing = Parsing { previous: &previous, sources: &mut sources, diags: &mut diags };
    for input in inputs {
        let key = identity(Path::new(&input.name));
        mods.add(input.name.clone(), key, &input.bytes, false, &mut parsing);
    }
    mods.discover(&mut parsing);
    (mods, sources, diags)
}
