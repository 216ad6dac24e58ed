//! torchlib's `common` module (`from onnxscript.function_libs.torch_lib.ops import common as
//! common_ops`), which onnxsc provides as it provides onnxscript: the helpers torchlib's
//! trace-only translations call, run at trace time with the meaning onnxscript 0.7.2 gives them.
//!
//! * `merge_dims(dims)`: the ints and 1-element INT64 tensors of `dims` as one 1-D INT64 tensor
//!   (a `Constant` per int, a `Reshape` to `[-1]` per tensor, one `Concat`);
//! * `constant(array, dtype)`: a `Constant` holding `ir.tensor(array, dtype=dtype)`;
//! * `cast_to(a, dtype)`: `Cast(a, to=dtype)` (the complex dtypes are refused);
//! * `Rank(x)` and `IsScalar(x)`: `Size(Shape(x))`, and whether it is 0.
//!
//! The constants (`COMPLEX64_TYPE`, `DOMAIN`, ...) are members of the constant library.

use super::{Eval, Value, R};
use crate::onnx::ElemType;
use crate::sema::constlib::{self, Args, Member};
use crate::sema::value::PyValue;
use crate::source::Span;
use crate::syntax::ast::*;

/// The helpers the module defines: a module of the compilation that defines them all is a copy
/// of torchlib's `common.py`, which onnxsc provides itself and does not compile (W0101).
pub const HELPERS: [&str; 5] = ["merge_dims", "constant", "cast_to", "Rank", "IsScalar"];

/// Whether a module whose functions have these names is a copy of torchlib's `common` module.
pub fn is_copy<'a>(function_names: impl IntoIterator<Item = &'a str>) -> bool {
    let names: Vec<&str> = function_names.into_iter().collect();
    HELPERS.iter().all(|h| names.contains(h))
}

impl Eval<'_, '_, '_> {
    /// A call of `common.NAME`; `None` for a name the module does not define.
    pub(super) fn torchlib_common(&mut self, name: &str, e: &Expr, args: &[Arg]) -> R<Option<PyValue>> {
        let params: &[&str] = match name {
            "merge_dims" => &["dims"],
            "constant" => &["array", "dtype"],
            "cast_to" => &["a", "dtype"],
            "Rank" | "IsScalar" => &["input"],
            _ => return Ok(None),
        };
        let (positional, keywords) = self.arguments(args)?;
        let mut bound: Vec<Option<Value>> = positional.into_iter().map(Some).collect();
        bound.resize(params.len().max(bound.len()), None);
        for (k, v) in keywords {
            match params.iter().position(|p| *p == k) {
                Some(i) => bound[i] = Some(v),
                None => {
                    return Err(self.python_error(
                        e.span,
                        &format!("TypeError: {name}() got an unexpected keyword argument '{k}'"),
                    ))
                }
            }
        }
        if bound.len() > params.len() || bound.iter().any(Option::is_none) {
            return Err(self.python_error(
                e.span,
                &format!("TypeError: {name}() takes {} arguments ({})", params.len(), params.join(", ")),
            ));
        }
        let mut values = Vec::with_capacity(params.len());
        for v in bound.into_iter().flatten() {
            values.push(self.to_py(v, e.span)?);
        }
        let span = e.span;
        Ok(Some(match (name, values.as_slice()) {
            ("merge_dims", [dims]) => self.merge_dims(dims.clone(), span)?,
            ("constant", [array, dtype]) => {
                let args = Args {
                    positional: vec![Member::Value(array.clone())],
                    keywords: vec![("dtype".into(), Member::Value(dtype.clone()))],
                };
                let tensor = match constlib::call("onnx_ir.tensor", &args) {
                    Ok(Member::Value(t)) => t,
                    Ok(Member::Object(_)) => return Err(self.unsupported(span, "this constant", None)),
                    Err(err) => return Err(self.lib_error(span, "common_ops.constant", err)),
                };
                self.single_op("Constant", vec![], vec![("value".into(), tensor)], span)?
            }
            ("cast_to", [a, dtype]) => {
                let complex = matches!(dtype, PyValue::DType(ElemType::Complex64 | ElemType::Complex128))
                    || matches!(dtype, PyValue::Int(c) if *c == i128::from(ElemType::Complex64.code()) || *c == i128::from(ElemType::Complex128.code()));
                if complex {
                    return Err(self.trace_error(
                        span,
                        "onnxsc does not cast to a complex type at trace time",
                        "`cast_to` a complex dtype",
                        "cast to the real type and build the real and imaginary parts with `op.Concat`, as torchlib's complex translations do",
                    ));
                }
                self.single_op("Cast", vec![a.clone()], vec![("to".into(), dtype.clone())], span)?
            }
            ("Rank", [x]) => self.rank(x.clone(), span)?,
            ("IsScalar", [x]) => {
                let rank = self.rank(x.clone(), span)?;
                let zero = self.single_op("Constant", vec![], vec![("value_int".into(), PyValue::Int(0))], span)?;
                self.single_op("Equal", vec![rank, zero], vec![], span)?
            }
            _ => return Ok(None),
        }))
    }

    fn rank(&mut self, x: PyValue, span: Span) -> R<PyValue> {
        let shape = self.single_op("Shape", vec![x], vec![], span)?;
        self.single_op("Size", vec![shape], vec![], span)
    }

    /// `merge_dims`: each int a 1-element constant, each tensor reshaped to 1-D, concatenated.
    fn merge_dims(&mut self, dims: PyValue, span: Span) -> R<PyValue> {
        let items = self.items_of(Value::Py(dims), span)?;
        if items.is_empty() {
            return self.single_op("Constant", vec![], vec![("value_ints".into(), PyValue::list(vec![]))], span);
        }
        let mut pieces = Vec::with_capacity(items.len());
        for d in items {
            let piece = match d {
                PyValue::Int(_) => {
                    self.single_op("Constant", vec![], vec![("value_ints".into(), PyValue::list(vec![d]))], span)?
                }
                PyValue::Graph(_) => {
                    let flat = PyValue::list(vec![PyValue::Int(-1)]);
                    self.single_op("Reshape", vec![d, flat], vec![], span)?
                }
                PyValue::SymDim(name) => {
                    return Err(self.trace_error(
                        span,
                        format!("`merge_dims` is given the dimension `{name}`, which this call knows only by name"),
                        "a symbolic dimension among the dims",
                        "pass the dimension as a tensor: `op.Shape(x, start=i, end=i + 1)`",
                    ))
                }
                other => {
                    return Err(self.python_error(
                        span,
                        &format!("TypeError: merge_dims takes ints and INT64 tensors, not {}", other.type_name()),
                    ))
                }
            };
            pieces.push(piece);
        }
        self.single_op("Concat", pieces, vec![("axis".into(), PyValue::Int(0))], span)
    }
}
