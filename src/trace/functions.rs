//! Calls of compiled functions at trace time. Trace-only code that calls a script (an
//! `@script` function, or a `@torch_op` translation that is not trace-only) records one node
//! calling it, as the exporter records a call of an `OnnxFunction` (`OpRecorder.eval_function`):
//! its parameters bound in the signature's order, tensors passed as they are, Python constants
//! made `Constant`s of the type the parameter's annotation and the other arguments of the same
//! type variable give, attributes typed as the signature says (None: not given). The function's
//! body reaches the model when the traced function is linked with the library.

use super::builder::{op_error, At, GraphBuilder};
use crate::diagnostics::{codes, Diagnostic};
use crate::ir::Attr;
use crate::onnx::{DeclaredType, ElemType};
use crate::sema::annotations::ParamType;
use crate::sema::calls::Callee;
use crate::sema::env::ModuleEnv;
use crate::sema::eval::FunctionCall;
use crate::sema::ir_values::attr_value;
use crate::sema::signature::{Signature, SignatureParam};
use crate::sema::value::{GraphType, PyValue};
use std::collections::HashMap;

impl GraphBuilder<'_> {
    /// Records `call` of the compiled function `callee` and returns its outputs.
    pub(super) fn record_function(
        &mut self,
        callee: &Callee,
        call: FunctionCall,
    ) -> Result<Vec<PyValue>, Box<Diagnostic>> {
        let at = At { file: call.file, span: call.span, site: call.site };
        let Some(sig) = signature_of(self.envs, call.id) else {
            return Err(op_error(
                codes::TRACE_ERROR,
                at,
                "this function is not in the compilation",
                "call a function of it",
            ));
        };
        let params: Vec<&SignatureParam> = sig.plain().collect();
        let bound = bind(callee, &params, call.args, call.kwargs, at)?;
        let binding = type_binding(&params, &bound);
        let mut inputs = Vec::new();
        let mut attrs = Vec::new();
        for (p, v) in params.iter().zip(bound) {
            match &p.ty {
                Ok(ParamType::Attr { ty, .. }) => {
                    if let Some(v) = v.filter(|v| *v != PyValue::None) {
                        let v = match v {
                            PyValue::DType(t) => PyValue::Int(i128::from(t.code())),
                            other => other,
                        };
                        let value = attr_value(&v, ty.onnx_type()).map_err(|_| {
                            op_error(
                                codes::ATTRIBUTE_TYPE,
                                at,
                                format!(
                                    "`{}` of `{}` takes `{}`, not {}",
                                    p.name(),
                                    callee.name,
                                    ty.python_name(),
                                    v.brief()
                                ),
                                "pass a value of the parameter's type",
                            )
                        })?;
                        attrs.push(Attr { name: p.name().to_string(), value });
                    }
                }
                _ => inputs.push(match v {
                    None | Some(PyValue::None) => None,
                    Some(PyValue::Graph(g)) => Some(g.name.clone()),
                    Some(other) => {
                        let elem = constant_elem(p, &other, &binding);
                        Some(self.constant(&other, elem, at)?)
                    }
                }),
            }
        }
        while inputs.last().is_some_and(Option::is_none) {
            inputs.pop();
        }
        let opset = crate::sema::env::Opset { domain: callee.domain.clone(), version: callee.version };
        let outputs = callee.outputs.unwrap_or(1);
        let outs = self.node(&opset, &callee.name, inputs, attrs, outputs, at)?;
        Ok(outs.into_iter().map(|name| self.value(name, GraphType::Tensor { elem: None, shape: None })).collect())
    }
}

/// The arguments of a call bound to the function's parameters, in their order (`None`: not
/// given). Errors as Python raises them for a call with the wrong arguments.
fn bind(
    callee: &Callee,
    params: &[&SignatureParam],
    args: Vec<PyValue>,
    kwargs: Vec<(String, PyValue)>,
    at: At,
) -> Result<Vec<Option<PyValue>>, Box<Diagnostic>> {
    let wrong = |message: String| {
        op_error(
            codes::TRACE_RAISED,
            at,
            format!("this call raises `TypeError`: {message}"),
            format!("call it with its parameters: {}", callee.signature()),
        )
    };
    if args.len() > params.len() {
        return Err(wrong(format!(
            "{}() takes {} positional arguments but {} were given",
            callee.name,
            params.len(),
            args.len()
        )));
    }
    let mut bound: Vec<Option<PyValue>> = params.iter().map(|_| None).collect();
    for (slot, v) in bound.iter_mut().zip(args) {
        *slot = Some(v);
    }
    for (k, v) in kwargs {
        let Some(i) = params.iter().position(|p| p.name() == k) else {
            return Err(wrong(format!("{}() got an unexpected keyword argument '{k}'", callee.name)));
        };
        if bound[i].replace(v).is_some() {
            return Err(wrong(format!("{}() got multiple values for argument '{k}'", callee.name)));
        }
    }
    for (p, v) in params.iter().zip(&bound) {
        if v.is_none() && !p.has_default() && !p.optional {
            return Err(wrong(format!("{}() missing required argument: '{}'", callee.name, p.name())));
        }
    }
    Ok(bound)
}

/// The element types the tensors passed fix for each type variable of the signature.
fn type_binding(params: &[&SignatureParam], bound: &[Option<PyValue>]) -> HashMap<String, ElemType> {
    let mut out = HashMap::new();
    for (p, v) in params.iter().zip(bound) {
        if let (Some(var), Some(PyValue::Graph(g))) = (&p.type_var, v) {
            if let Some(e) = g.elem() {
                out.entry(var.clone()).or_insert(e);
            }
        }
    }
    out
}

/// The element type of a constant passed for parameter `p`: its type variable's, as the
/// tensors passed bind it; the annotation's only type; else the constant's own.
fn constant_elem(p: &SignatureParam, v: &PyValue, binding: &HashMap<String, ElemType>) -> ElemType {
    if let Some(e) = p.type_var.as_ref().and_then(|var| binding.get(var)) {
        return *e;
    }
    match &p.ty {
        Ok(ParamType::Input { ty: Some(DeclaredType::Tensor(e)), .. }) => *e,
        Ok(ParamType::Input { ty: Some(DeclaredType::Var { allowed, .. }), .. }) if allowed.len() == 1 => allowed[0],
        _ => super::builder::own_elem(v),
    }
}

/// The signature of function `id`, read from its module.
fn signature_of<'a>(envs: &'a [ModuleEnv<'a>], id: usize) -> Option<Signature<'a>> {
    let (env, k) = envs.iter().find_map(|e| e.local_function(id).map(|k| (e, k)))?;
    Some(Signature::of(env, env.functions[k]))
}
