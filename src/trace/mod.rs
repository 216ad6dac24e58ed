//! Trace-only translations (`@torch_op(..., trace_only=True)`): Python run for one call of the
//! exporter over what the call knows, recording that call's ONNX nodes.
//!
//! The Python is `sema::eval`'s: the one evaluator, at trace time. This room gives it a graph:
//! `builder` records each operator call as torch's exporter records it (schemas checked, Python
//! constants made `Constant`s of the type the operator needs, lists made sequences or
//! `Concat`s), `facts` reads what a call knows (the Python package writes it), and `specialize`
//! runs a translation for one call and returns the function of nodes it recorded.

mod builder;
pub mod facts;
mod functions;
pub mod reference;
mod shape_facts;
mod specialize;

pub use builder::MAX_NODES;
pub use facts::{variant_name, ArgFact, CallFacts, CallKey};
pub use specialize::{specialize, Specialized, TraceContext};
