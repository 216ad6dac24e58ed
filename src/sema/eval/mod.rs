//! The evaluator: Python expressions with Python's meaning, for the two times onnxsc runs Python
//! code. At compile time, the expressions onnxscript evaluates when it compiles a function
//! (attribute arguments, parameter defaults, module constants). At trace time, the bodies of
//! trace-only translations, run for one call of the exporter (`stmt`, `calls`), over static
//! values and the tensors of a graph (`graph`).
//!
//! Arithmetic follows Python exactly: ints are exact (within 128 bits; beyond is E0116, never a
//! wrapped value), `//` and `%` floor, `/` is true division, float operations are IEEE doubles
//! with CPython's error cases (division by zero, a negative number to a fractional power). Names
//! are module globals; calls and attributes go to the named set of `sema::constlib`. Whatever
//! Python would raise is reported (E0114), with the exception's message.

use super::constlib::LibError;
use super::env::{Global, Names, Opset};
use super::value::{PyValue, MAX_CONSTANT_ELEMENTS};
use crate::diagnostics::{codes, Diagnostic, Reported};
use crate::onnx::ElemType;
use crate::source::Span;
use crate::syntax::ast::*;
use pyops::truth;
use std::sync::Arc;

mod calls;
mod expr;
mod graph;
mod pyops;
mod scopes;
mod stmt;
mod tensors;
pub mod torchlib_common;

pub use expr::unevaluated_builtin;
pub use graph::{FunctionCall, GraphHost, Limits, OpCall, Trace};
pub use tensors::tensor_condition;

pub(crate) use pyops::OpError;

/// Why an expression has no compile-time value.
#[derive(Debug)]
pub enum ConstError {
    /// It is not a compile-time value (a local variable, a tensor, an op call); the caller says
    /// what it needed there. The span is of the part that is not constant.
    NotConstant(Span),
    /// It uses a name whose definition failed (already reported).
    Poisoned(Reported),
    /// It cannot be evaluated (an unsupported call, a Python error, a limit): a complete error,
    /// for the caller to report as it is (with [`super::env::ConstReports::report`]).
    Failed(Box<Diagnostic>),
    /// It uses a module constant that Python computes but onnxsc cannot ([`Global::Deferred`]):
    /// that constant's error, marked where it is used, for the caller to report unless a use
    /// of it was reported already ([`super::env::ConstReports::report_deferred_use`]).
    DeferredUse(Box<Diagnostic>),
}

impl ConstError {
    /// The span of a non-constant part, if that is the failure.
    pub fn not_constant(&self) -> Option<Span> {
        match self {
            ConstError::NotConstant(s) => Some(*s),
            _ => None,
        }
    }
}

type R<T> = Result<T, ConstError>;

/// Evaluates a compile-time constant expression to a value.
pub fn eval_const(names: Names, e: &Expr) -> R<PyValue> {
    let mut ev = Eval::new(names, None);
    let v = ev.eval(e)?;
    ev.to_py(v, e.span)
}

/// Evaluates the right-hand side of a module-level assignment: a value, or an alias of a library
/// object (`F32 = np.float32`) or a tensor type.
pub fn eval_global(names: Names, e: &Expr) -> R<Global> {
    let mut ev = Eval::new(names, None);
    match ev.eval(e)? {
        Value::Py(v) => Ok(Global::Const(v)),
        Value::Lib(p) => Ok(Global::Lib(p)),
        Value::TensorType(t) => Ok(Global::TensorType(t)),
        Value::Method(..) | Value::DictMethod(..) => Err(ev.unsupported(e.span, "a bound method as a value", None)),
        Value::Dict(_) => Err(ev.unsupported(e.span, "a dictionary as a module constant", None)),
        Value::Lambda(_) => Err(ev.unsupported(e.span, "a lambda as a module constant", None)),
        Value::Other | Value::Opset(_) | Value::Op(..) | Value::Function(_) => Err(ConstError::NotConstant(e.span)),
    }
}

/// Runs function `id` of the compilation at trace time, called with `args` and `kwargs` (at
/// `span` of the file it is called from); what it returns.
pub fn trace_call(
    trace: &mut Trace,
    id: usize,
    args: Vec<PyValue>,
    kwargs: Vec<(String, PyValue)>,
    span: Span,
) -> R<PyValue> {
    let Some((env, _)) = trace.function(id) else { return Err(ConstError::NotConstant(span)) };
    let mut ev = Eval::new(env.names(), Some(trace));
    let args = args.into_iter().map(Value::Py).collect();
    let kwargs = kwargs.into_iter().map(|(k, v)| (k, Value::Py(v))).collect();
    let v = ev.call_function(id, args, kwargs, span)?;
    ev.to_py(v, span)
}

/// What an expression evaluates to: a Python value, or one of the objects that only appear on
/// the way to one (a module, a function, a method, a type).
#[derive(Clone, Debug)]
enum Value {
    Py(PyValue),
    /// A module, class or function of the constant library, by canonical path.
    Lib(String),
    /// A method of a value, not yet called (`arr.astype`).
    Method(PyValue, String),
    /// An onnxscript tensor type (`FLOAT`), whose `dtype` is a value.
    TensorType(ElemType),
    /// Trace time: an opset (`op`), whose attributes are its operators.
    Opset(Opset),
    /// Trace time: an operator of an opset (`op.Add`), to call.
    Op(Opset, String),
    /// Trace time: a function of the compilation, by id, to call.
    Function(usize),
    /// Trace time: a lambda, to call.
    Lambda(Arc<scopes::Closure>),
    /// A dictionary (a local value: module constants and attributes take no dicts).
    Dict(scopes::Dict),
    /// A method of a dictionary, not yet called.
    DictMethod(scopes::Dict, String),
    /// A global that is not a value (an opset, a function, a decorator).
    Other,
}

/// An evaluation: the globals names mean (as the point of the module being evaluated sees
/// them), and at trace time the trace (locals, the graph, the functions to call).
struct Eval<'t, 'e, 'm> {
    names: Names<'e, 'm>,
    trace: Option<&'t mut Trace<'e, 'm>>,
    /// The variables of the comprehensions being evaluated, innermost last: they hide locals
    /// and globals.
    scope: Vec<(String, Value)>,
    /// Items of comprehensions gone over at compile time (see `scopes`).
    constant_steps: u64,
}

impl<'t, 'e, 'm> Eval<'t, 'e, 'm> {
    fn new(names: Names<'e, 'm>, trace: Option<&'t mut Trace<'e, 'm>>) -> Eval<'t, 'e, 'm> {
        Eval { names, trace, scope: Vec::new(), constant_steps: 0 }
    }
}

impl Eval<'_, '_, '_> {
    fn file(&self) -> usize {
        self.names.file()
    }

    fn report(&self, d: Diagnostic) -> ConstError {
        ConstError::Failed(Box::new(d))
    }

    /// E0112: a construct or a library member outside what onnxsc evaluates.
    fn unsupported(&self, span: Span, what: &str, help: Option<String>) -> ConstError {
        let d = Diagnostic::error(
            codes::UNSUPPORTED_CONSTANT,
            self.file(),
            format!("onnxsc cannot evaluate {what} at compile time"),
        )
        .primary(span, "outside onnxsc's constant evaluator");
        let d = d.help(help.unwrap_or_else(|| {
            "constants may use literals, arithmetic, lists, tuples, indexing, f-strings, `math`, numpy constructors, `onnx.helper.make_tensor`, `TensorProto` and `ir.DataType` members, and `ir.tensor` (see docs/language.md)".to_string()
        }));
        self.report(d)
    }

    fn python_error(&self, span: Span, message: &str) -> ConstError {
        let (kind, text) = message.split_once(": ").filter(|(k, _)| k.ends_with("Error")).unwrap_or(("", message));
        let what = if kind.is_empty() { "an error".to_string() } else { format!("`{kind}`") };
        if self.trace.is_some() {
            return self.report(
                Diagnostic::error(codes::TRACE_RAISED, self.file(), format!("this call raises {what}: {text}"))
                    .primary(span, "raised when the exporter calls the translation")
                    .help("fix the code for this call's facts (the static values and the tensors' types and shapes)"),
            );
        }
        self.report(
            Diagnostic::error(
                codes::CONSTANT_ERROR,
                self.file(),
                format!("this constant raises {what} in Python: {text}"),
            )
            .primary(span, "evaluated when the module is imported")
            .help("fix the expression: onnxscript cannot compile a function whose constants raise"),
        )
    }

    fn too_large(&self, span: Span, n: u64) -> ConstError {
        self.report(too_large(self.file(), span, n))
    }

    fn overflow(&self, span: Span) -> ConstError {
        self.report(
            Diagnostic::error(codes::INTEGER_OVERFLOW, self.file(), "integer overflow in a constant")
                .primary(span, "the exact result does not fit in 128 bits")
                .help("onnxsc computes Python ints exactly up to 128 bits; ONNX integers have at most 64"),
        )
    }

    fn op_error(&self, span: Span, e: OpError) -> ConstError {
        match e {
            OpError::Python(m) => self.python_error(span, &m),
            OpError::Unsupported(m) => self.unsupported(span, &m, None),
            OpError::Overflow => self.overflow(span),
            OpError::TooLarge(n) => self.too_large(span, n),
            OpError::Symbolic(name) => self.report(
                Diagnostic::error(
                    codes::TRACE_UNKNOWN_FACT,
                    self.file(),
                    format!("this call knows the dimension `{name}` only by name: Python arithmetic on it has no value"),
                )
                .primary(span, "computed from a symbolic dimension")
                .help("a symbolic dimension is known only when the model runs: take it with `op.Shape(x, start=i, end=i + 1)` and compute with ONNX ops"),
            ),
        }
    }

    fn lib_error(&self, span: Span, shown: &str, e: LibError) -> ConstError {
        match e {
            LibError::Python(m) => self.python_error(span, &m),
            LibError::Unsupported(m) => self.unsupported(span, &format!("{m} (in `{shown}`)"), None),
            LibError::TooLarge(n) => self.too_large(span, n),
            LibError::RunTime => self.run_time(span, shown),
        }
    }

    /// E0113: a value that is different at every run.
    fn run_time(&self, span: Span, shown: &str) -> ConstError {
        self.report(
            Diagnostic::error(codes::RUN_TIME_VALUE, self.file(), format!("`{shown}` is not known until the code runs"))
                .primary(span, "a different value at every run")
                .help("onnxscript would bake the value of one import into the function; make it an input, or compute it with an ONNX op such as `op.RandomUniform`"),
        )
    }
}

/// E0115: a constant of `n` elements, over [`MAX_CONSTANT_ELEMENTS`].
pub fn too_large(file: usize, span: Span, n: u64) -> Diagnostic {
    let shown = if n == u64::MAX { "too many".to_string() } else { n.to_string() };
    Diagnostic::error(
        codes::CONSTANT_TOO_LARGE,
        file,
        format!(
            "this constant has {shown} elements, more than onnxsc's constant size limit of {MAX_CONSTANT_ELEMENTS}"
        ),
    )
    .primary(span, "too large to build at compile time")
    .help("large weights belong in model initializers or inputs, not in function constants")
}

/// Python's `bool(value)` for the module's static `if`s; a failure reads as true (the value
/// is reported where it is evaluated).
pub fn is_truthy(v: &PyValue) -> bool {
    truth(v).unwrap_or(true)
}
