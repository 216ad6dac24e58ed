//! Trace time: what Python code can do with the graph's values, as the exporter's tensors allow
//! it. `x + y` is `op.Add(x, y)` (and so on for `- * / @ ** %` and the comparisons), `x.shape`,
//! `x.dtype` and `x.rank` are what the call knows of `x`, and an element type answers
//! `is_floating_point()` and the like. The operators go to the graph ([`super::Graph`]).

use super::{ConstError, Eval, Value, R};
use crate::aten::EXPORTER_OPSET;
use crate::diagnostics::{codes, Diagnostic};
use crate::onnx::ElemType;
use crate::sema::constlib;
use crate::sema::env::Opset;
use crate::sema::eval::graph::{FunctionCall, OpCall};
use crate::sema::value::{Dim, GraphValue, PyValue};
use crate::source::Span;
use crate::syntax::ast::{BinOp, CmpOp, UnaryOp};
use std::sync::Arc;

/// The opset the exporter's tensors build their operators in.
fn tensor_opset() -> Opset {
    Opset { domain: String::new(), version: EXPORTER_OPSET }
}

impl Eval<'_, '_, '_> {
    /// Whether `v` is a value of the graph (only at trace time are there any).
    pub(super) fn is_graph(v: &PyValue) -> bool {
        matches!(v, PyValue::Graph(_))
    }

    /// `l op r` where one side is a graph value: the operator the exporter's tensors call.
    pub(super) fn tensor_binop(&mut self, op: BinOp, l: PyValue, r: PyValue, span: Span) -> R<PyValue> {
        let (name, attrs): (&str, Vec<(String, PyValue)>) = match op {
            BinOp::Add => ("Add", vec![]),
            BinOp::Sub => ("Sub", vec![]),
            BinOp::Mult => ("Mul", vec![]),
            BinOp::Div => ("Div", vec![]),
            BinOp::MatMult => ("MatMul", vec![]),
            BinOp::Pow => ("Pow", vec![]),
            BinOp::BitAnd => ("And", vec![]),
            BinOp::BitOr => ("Or", vec![]),
            BinOp::BitXor => ("Xor", vec![]),
            // A float remainder takes the dividend's sign in ONNX only with fmod=1.
            BinOp::Mod => {
                let float = match &l {
                    // The exporter's tensors look at the dtype they know (none, for computed values).
                    PyValue::Graph(g) => g.visible().and_then(|_| g.elem()).is_some_and(ElemType::is_float),
                    PyValue::Float(_) => true,
                    _ => false,
                };
                ("Mod", if float { vec![("fmod".to_string(), PyValue::Int(1))] } else { vec![] })
            }
            BinOp::FloorDiv | BinOp::LShift | BinOp::RShift => {
                return Err(self.trace_error(
                    span,
                    format!("the exporter's tensors have no `{}`", op.symbol()),
                    "not an operator of a tensor",
                    "write the ONNX operator: `op.Div` then `op.Floor` for `//`, `op.BitShift` for shifts",
                ))
            }
        };
        self.single_op(name, vec![l, r], attrs, span)
    }

    /// `op v` for a graph value.
    pub(super) fn tensor_unary(&mut self, op: UnaryOp, v: PyValue, span: Span) -> R<PyValue> {
        match op {
            UnaryOp::Neg => self.single_op("Neg", vec![v], vec![], span),
            UnaryOp::Invert => self.single_op("Not", vec![v], vec![], span),
            UnaryOp::Pos => Ok(v),
            UnaryOp::Not => Err(self.tensor_truth(span)),
        }
    }

    /// `l op r` where one side is a graph value: a comparison operator, or identity (`is`).
    pub(super) fn tensor_compare(&mut self, op: CmpOp, l: PyValue, r: PyValue, span: Span) -> R<PyValue> {
        let name = match op {
            CmpOp::Lt => "Less",
            CmpOp::LtE => "LessOrEqual",
            CmpOp::Gt => "Greater",
            CmpOp::GtE => "GreaterOrEqual",
            CmpOp::Eq => "Equal",
            CmpOp::NotEq => {
                let equal = self.single_op("Equal", vec![l, r], vec![], span)?;
                return self.single_op("Not", vec![equal], vec![], span);
            }
            // Identity is known without the model: a graph value is itself only.
            CmpOp::Is => return Ok(PyValue::Bool(l == r)),
            CmpOp::IsNot => return Ok(PyValue::Bool(l != r)),
            CmpOp::In | CmpOp::NotIn => {
                return Err(self.trace_error(
                    span,
                    "`in` on a tensor is known only when the model runs",
                    "a tensor",
                    "compare with `op.Equal` and reduce with `op.ReduceMax`, or test a static value",
                ))
            }
        };
        self.single_op(name, vec![l, r], vec![], span)
    }

    /// Calls an operator of the tensors' opset that has one output.
    pub(super) fn single_op(
        &mut self,
        name: &str,
        args: Vec<PyValue>,
        kwargs: Vec<(String, PyValue)>,
        span: Span,
    ) -> R<PyValue> {
        let opset = tensor_opset();
        let mut outputs = self.record_op(&opset, name, args, kwargs, span)?;
        Ok(outputs.pop().unwrap_or(PyValue::None))
    }

    /// Records an operator call in the graph; its outputs.
    pub(super) fn record_op(
        &mut self,
        opset: &Opset,
        op_type: &str,
        args: Vec<PyValue>,
        kwargs: Vec<(String, PyValue)>,
        span: Span,
    ) -> R<Vec<PyValue>> {
        let file = self.file();
        let Some(trace) = self.trace.as_deref_mut() else { return Err(ConstError::NotConstant(span)) };
        let site = if trace.root_file == Some(file) { None } else { trace.sites.first().copied() };
        let call = OpCall { opset, op_type, args, kwargs, file, span, site };
        trace.graph.op(call).map_err(ConstError::Failed)
    }

    /// A call of a compiled function, recorded by the graph: one value, or a tuple of them.
    pub(super) fn record_function(
        &mut self,
        id: usize,
        positional: Vec<Value>,
        keywords: Vec<(String, Value)>,
        span: Span,
    ) -> R<Value> {
        let args = positional.into_iter().map(|v| self.to_py(v, span)).collect::<R<Vec<_>>>()?;
        let kwargs = keywords.into_iter().map(|(k, v)| Ok((k, self.to_py(v, span)?))).collect::<R<Vec<_>>>()?;
        let file = self.file();
        let Some(trace) = self.trace.as_deref_mut() else { return Err(ConstError::NotConstant(span)) };
        let site = if trace.root_file == Some(file) { None } else { trace.sites.first().copied() };
        let call = FunctionCall { id, args, kwargs, file, span, site };
        let mut outputs = trace.graph.function(call).map_err(ConstError::Failed)?;
        Ok(Value::Py(if outputs.len() == 1 { outputs.remove(0) } else { PyValue::tuple(outputs) }))
    }

    /// An attribute of a graph value: what the call knows of it.
    pub(super) fn graph_attribute(&mut self, g: &Arc<GraphValue>, attr: &str, span: Span) -> R<Value> {
        Ok(Value::Py(match attr {
            "shape" => match g.visible().and_then(|_| g.shape()) {
                Some(dims) => PyValue::tuple(dims.iter().map(dim_value).collect()),
                None => PyValue::None,
            },
            "rank" => match g.visible().and_then(|_| g.shape()) {
                Some(dims) => PyValue::Int(dims.len() as i128),
                None => PyValue::None,
            },
            "dtype" => match g.visible().and_then(|_| g.elem()) {
                Some(t) => PyValue::DType(t),
                None => PyValue::None,
            },
            "name" => PyValue::str(&g.name),
            other => return Err(self.trace_error(
                span,
                format!("a tensor of the exporter has no attribute `{other}` onnxsc knows"),
                "not `shape`, `dtype`, `rank` or `name`",
                "a tensor's `shape`, `dtype` and `rank` are known at export; compute anything else with ONNX operators",
            )),
        }))
    }

    /// An attribute of an element type (`x.dtype.itemsize`), or a method to call.
    pub(super) fn dtype_attribute(&mut self, t: ElemType, attr: &str, span: Span) -> R<Value> {
        Ok(match attr {
            "itemsize" => Value::Py(PyValue::Int(i128::from(t.bits().div_ceil(8)))),
            "bitwidth" => Value::Py(PyValue::Int(i128::from(t.bits()))),
            "name" => Value::Py(PyValue::str(t.script_name())),
            "value" => Value::Py(PyValue::Int(i128::from(t.code()))),
            "is_floating_point" | "is_integer" | "is_signed" | "is_string" => {
                Value::Method(PyValue::DType(t), attr.to_string())
            }
            "min" | "max" => match constlib::dtype_limit(t, attr) {
                Some(v) => Value::Py(v),
                None => {
                    return Err(self.python_error(
                        span,
                        &format!("TypeError: {attr} is not available for ONNX data type: {}", t.script_name()),
                    ))
                }
            },
            other => {
                return Err(self.trace_error(
                    span,
                    format!("onnxsc does not know the attribute `{other}` of an element type"),
                    "not an attribute onnxsc evaluates",
                    "use `is_floating_point()`, `is_integer()`, `is_signed()`, `itemsize`, `bitwidth`, `min`, `max` or compare with `ir.DataType` members",
                ))
            }
        })
    }

    /// A method of an element type, called: `x.dtype.is_floating_point()`.
    pub(super) fn dtype_method(t: ElemType, name: &str) -> Option<PyValue> {
        Some(PyValue::Bool(match name {
            "is_floating_point" => t.is_float(),
            "is_integer" => t.is_integer(),
            "is_signed" => t.is_signed(),
            "is_string" => t == ElemType::String,
            _ => return None,
        }))
    }

    /// The error of a Python `if` (or `and`, `or`, `not`, `bool()`) on a tensor.
    pub(super) fn tensor_truth(&self, span: Span) -> ConstError {
        ConstError::Failed(Box::new(tensor_condition(self.file(), span)))
    }

    /// A located error of the trace, with its help.
    pub(super) fn trace_error(
        &self,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
        help: impl Into<String>,
    ) -> ConstError {
        ConstError::Failed(Box::new(
            Diagnostic::error(codes::TRACE_ERROR, self.file(), message).primary(span, label).help(help),
        ))
    }
}

/// A dimension as Python sees it: an int, or a symbolic dimension.
pub(super) fn dim_value(d: &Dim) -> PyValue {
    match d {
        Dim::Known(n) => PyValue::Int(i128::from(*n)),
        Dim::Symbolic(s) => PyValue::SymDim(s.clone()),
        // A call's facts name every dimension; one they do not is a symbol of its own.
        Dim::Unknown => PyValue::SymDim("?".into()),
    }
}

/// E0906: a tensor tested as a Python condition (at trace time, or certainly so at check time).
pub fn tensor_condition(file: usize, span: Span) -> Diagnostic {
    Diagnostic::error(codes::TENSOR_CONDITION, file, "a tensor's truth value is known only when the model runs")
        .primary(span, "a tensor, not a static value")
        .help("test a static fact (`x.shape`, `x.dtype`, an attribute, `x is None`), or choose with `op.Where` (elementwise) or `op.If`, or write the function as ONNX Script without `trace_only=True`")
}
