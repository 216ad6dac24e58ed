//! What trace-time evaluation needs of the graph it builds, and the state of one trace.
//!
//! The evaluator knows Python; the graph knows ONNX. Each operator call a trace-only function
//! makes (`op.Add(x, 1)`, and `x + 1`, which the exporter's tensors turn into `op.Add`) is
//! handed to a [`Graph`], which checks it against the operator's schema, applies the
//! exporter's rules for Python constants among the inputs, records the node and answers with
//! the values it computes. `trace` implements it; at compile time there is none.

use super::Value;
use crate::diagnostics::Diagnostic;
use crate::sema::env::{ModuleEnv, Opset};
use crate::sema::value::PyValue;
use crate::source::{FileId, Span};
use foldhash::HashMap;

/// The host of a trace: the graph it records into (`trace::builder`), as starlark-rust's
/// evaluator talks to its host.
pub trait GraphHost {
    /// Records `call` and returns its outputs (as many as it makes): graph values, or Python
    /// values where the result is known without the model (the graph decides).
    fn op(&mut self, call: OpCall) -> Result<Vec<PyValue>, Box<Diagnostic>>;

    /// Whether a call of function `id` of the compilation is recorded as a node that calls the
    /// compiled function (a script, as the exporter calls an `OnnxFunction`), rather than run as
    /// Python (a trace-only translation or an undecorated helper).
    fn records_function(&self, id: usize) -> bool;

    /// Records a call of function `id` (one that [`Graph::records_function`]) and returns its
    /// outputs.
    fn function(&mut self, call: FunctionCall) -> Result<Vec<PyValue>, Box<Diagnostic>>;
}

/// One call of a compiled function at trace time.
pub struct FunctionCall {
    pub id: usize,
    pub args: Vec<PyValue>,
    pub kwargs: Vec<(String, PyValue)>,
    pub file: FileId,
    pub span: Span,
    pub site: Option<Span>,
}

/// One operator call at trace time.
pub struct OpCall<'a> {
    pub opset: &'a Opset,
    pub op_type: &'a str,
    /// Positional arguments: graph values, Python constants, None, or lists mixing them.
    pub args: Vec<PyValue>,
    pub kwargs: Vec<(String, PyValue)>,
    /// Where the call is written.
    pub file: FileId,
    pub span: Span,
    /// Where in the translation traced the call comes from, when it is written in another
    /// file (a helper of another module): the call of the translation's own code that led to it.
    pub site: Option<Span>,
}

/// How much one trace may do before it is stopped with a located error: a translation that
/// loops forever or builds without end must not hang or exhaust an export.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Statements and expressions evaluated.
    pub steps: u64,
    /// Calls between functions in progress.
    pub depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { steps: 1_000_000, depth: 64 }
    }
}

/// The state of one trace: the graph, the functions it may call, the calls in progress with
/// their local variables, and what it has spent of its [`Limits`].
pub struct Trace<'e, 'm> {
    pub graph: &'e mut dyn GraphHost,
    /// Every module of the compilation: a function of any of them may be called.
    pub envs: &'e [ModuleEnv<'m>],
    pub(super) frames: Vec<Frame>,
    pub(super) steps: u64,
    pub limits: Limits,
    /// The file of the function traced, and the calls of its code in progress that went into
    /// another file (the outermost first).
    pub(super) root_file: Option<FileId>,
    pub(super) sites: Vec<Span>,
}

impl<'e, 'm> Trace<'e, 'm> {
    pub fn new(graph: &'e mut dyn GraphHost, envs: &'e [ModuleEnv<'m>]) -> Trace<'e, 'm> {
        Trace {
            graph,
            envs,
            frames: Vec::new(),
            steps: 0,
            limits: Limits::default(),
            root_file: None,
            sites: Vec::new(),
        }
    }

    /// The module of the compilation that defines function `id`, and its index there.
    pub fn function(&self, id: usize) -> Option<(&'e ModuleEnv<'m>, usize)> {
        let envs: &'e [ModuleEnv<'m>] = self.envs;
        envs.iter().find_map(|env| env.local_function(id).map(|k| (env, k)))
    }
}

/// One call in progress: its local variables, and the names the function assigns anywhere
/// (Python makes them local: read before assignment, they are an error, not a global).
pub(super) struct Frame {
    pub locals: HashMap<String, Value>,
    pub assigned: foldhash::HashSet<String>,
    /// The function running, by id (the lambdas it makes are written in it).
    pub function: usize,
}
