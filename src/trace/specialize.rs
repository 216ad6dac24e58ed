//! One call of the exporter: a trace-only translation run with the call's facts, and the
//! function of ONNX nodes it records (`ir::Function`), with the call's tensors as its inputs and
//! what the translation returns as its outputs.

use super::builder::GraphBuilder;
use super::facts::{ArgFact, CallFacts};
use crate::diagnostics::{codes, Diagnostic};
use crate::ir::{Attr, AttrValue, Function, InputParam, Node, SourceLocation};
use crate::onnx::DeclaredType;
use crate::onnx::ElemType;
use crate::sema::annotations::ParamType;
use crate::sema::calls::Callee;
use crate::sema::env::{ModuleEnv, Opset};
use crate::sema::eval::{self, ConstError, Trace};
use crate::sema::signature::{Signature, SignatureParam};
use crate::sema::value::{Dim, GraphType, GraphValue, PyValue};
use crate::source::SourceMap;
use crate::syntax::ast::{FunctionDef, ParamKind};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// What a specialisation needs of the compilation: its files and every module.
pub struct TraceContext<'a> {
    pub sources: &'a SourceMap,
    pub envs: &'a [ModuleEnv<'a>],
    /// The functions of the compilation compiled as scripts, by id: a trace calls them as nodes.
    pub scripts: &'a HashMap<usize, Callee>,
}

/// A translation specialised to one call: its function, and what each output is known to be.
pub struct Specialized {
    pub function: Function,
    /// Each output's element type and shape, as the trace inferred them (`sema::shapes`).
    pub returns: Vec<GraphType>,
}

/// The function `id` (of `domain`) specialised to `call`: its nodes for this call, named
/// `name`. The error, located in the translation's source, when the trace fails, or when what
/// it returns contradicts PyTorch's answer for the call (`reference`).
pub fn specialize(
    cx: &TraceContext,
    id: usize,
    domain: &str,
    name: &str,
    call: &CallFacts,
) -> Result<Specialized, Box<Diagnostic>> {
    let Some((env, k)) = cx.envs.iter().find_map(|e| e.local_function(id).map(|k| (e, k))) else {
        return Err(Box::new(Diagnostic::error(codes::TRACE_ERROR, 0, format!("no function `{domain}::{name}`"))));
    };
    let f = env.functions[k];
    check_annotations(env, f, call)?;
    let mut builder = GraphBuilder::new(cx.sources, cx.envs, cx.scripts, env.file);
    let plain: Vec<&str> =
        f.params.iter().filter(|p| p.kind == ParamKind::Normal).map(|p| p.name.name.as_str()).collect();
    let mut inputs = Vec::new();
    let args: Vec<PyValue> = call
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| graph_inputs(&mut builder, a, plain.get(i).copied().unwrap_or("input"), &mut inputs))
        .collect();
    let kwargs: Vec<(String, PyValue)> =
        call.kwargs.iter().map(|(k, a)| (k.clone(), graph_inputs(&mut builder, a, k, &mut inputs))).collect();
    let result = {
        let mut trace = Trace::new(&mut builder, cx.envs);
        eval::trace_call(&mut trace, id, args, kwargs, f.name.span)
    };
    let result = result.map_err(|e| trace_failure(e, env.file, f.name.span))?;
    let (outputs, returns): (Vec<String>, Vec<GraphType>) =
        outputs(&mut builder, result, env.file, f.name.span, &inputs)?.into_iter().unzip();
    if let Some(expected) = &call.expect {
        super::reference::compare(&returns, expected, env.file, f.name.span, &f.name.name)?;
    }
    let (line, column) = cx.sources.line_col(env.file, f.name.span.start);
    let mut imports = std::mem::take(&mut builder.imports);
    imports.entry(String::new()).or_insert(crate::aten::EXPORTER_OPSET);
    let function = Function {
        name: name.to_string(),
        domain: domain.to_string(),
        source_file: cx.sources.name(env.file).to_string(),
        source: Some(SourceLocation { line: line as u32, column: column as u32 }),
        file: env.file,
        name_span: f.name.span,
        doc: None,
        inputs: inputs
            .iter()
            .map(|(name, _)| InputParam { name: name.clone(), ty: None, optional: false, default_repr: None })
            .collect(),
        attributes: Vec::new(),
        output_types: outputs.iter().map(|_| None::<DeclaredType>).collect(),
        outputs,
        nodes: std::mem::take(&mut builder.nodes),
        opset_imports: imports,
        parameters: inputs.iter().map(|(name, _)| name.clone()).collect(),
        ignored: Vec::new(),
        hints: Vec::new(),
        type_vars: BTreeMap::new(),
        torch_ops: Vec::new(),
        complex: false,
        noqa: Vec::new(),
    };
    Ok(Specialized { function, returns })
}

/// The call's arguments against the translation's annotations: a tensor of an element type its
/// parameter does not allow, or a tensor for a parameter annotated as a Python value, is an
/// error at the parameter (the exporter would build a graph ONNX Runtime refuses, or worse).
fn check_annotations(env: &ModuleEnv, f: &FunctionDef, call: &CallFacts) -> Result<(), Box<Diagnostic>> {
    let sig = Signature::of(env, f);
    let params: Vec<&SignatureParam> = sig.plain().collect();
    let positional = call.args.iter().zip(params.iter().copied());
    let by_name = call.kwargs.iter().filter_map(|(k, fact)| Some((fact, *params.iter().find(|p| p.name() == k)?)));
    for (fact, p) in positional.chain(by_name) {
        let mismatch = |what: String, expected: String| {
            Box::new(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    env.file,
                    format!("this call passes {what} to `{}`, which takes {expected}", p.name()),
                )
                .primary(p.def.span, "the parameter")
                .help("the exporter passes what the PyTorch operator receives: annotate the parameter with a type that allows it"),
            )
        };
        match &p.ty {
            Ok(ParamType::Attr { ty, .. }) if holds_tensor(fact) => {
                return Err(mismatch("a tensor".into(), format!("a `{}`", ty.python_name())));
            }
            Ok(ParamType::Input { ty: Some(declared), .. }) => {
                for elem in tensor_elems(fact) {
                    if let Some(allowed) = allowed_elems(declared) {
                        if !allowed.contains(&elem) {
                            let names: Vec<&str> = allowed.iter().map(|t| t.script_name()).collect();
                            return Err(mismatch(
                                format!("a tensor of {}", elem.script_name()),
                                format!("`{declared}` ({})", names.join(", ")),
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn holds_tensor(fact: &ArgFact) -> bool {
    match fact {
        ArgFact::Tensor { .. } => true,
        ArgFact::List { items, .. } => items.iter().any(holds_tensor),
        ArgFact::Value(_) => false,
    }
}

/// The known element types of the tensors a fact holds.
fn tensor_elems(fact: &ArgFact) -> Vec<ElemType> {
    match fact {
        ArgFact::Tensor { elem, .. } => elem.iter().copied().collect(),
        ArgFact::List { items, .. } => items.iter().flat_map(tensor_elems).collect(),
        ArgFact::Value(_) => Vec::new(),
    }
}

/// The element types a declared type allows, when it limits them.
fn allowed_elems(t: &DeclaredType) -> Option<Vec<ElemType>> {
    match t {
        DeclaredType::Tensor(e) => Some(vec![*e]),
        DeclaredType::Var { allowed, .. } if !allowed.is_empty() => Some(allowed.clone()),
        DeclaredType::Sequence(Some(item)) => allowed_elems(item),
        _ => None,
    }
}

/// The value an argument's fact stands for; its tensors become inputs of the function
/// (`base`, `base_1`... for the items of a list), in the order the call gives them.
fn graph_inputs(
    builder: &mut GraphBuilder,
    fact: &ArgFact,
    base: &str,
    inputs: &mut Vec<(String, GraphType)>,
) -> PyValue {
    match fact {
        ArgFact::Value(v) => v.clone(),
        ArgFact::Tensor { elem, shape, sequence } => {
            let name = builder.fresh(base);
            let ty = if *sequence {
                GraphType::Sequence { elem: *elem, items: None }
            } else {
                GraphType::Tensor { elem: *elem, shape: shape.clone() }
            };
            inputs.push((name.clone(), ty.clone()));
            PyValue::Graph(Arc::new(GraphValue { name, ty, from_call: true }))
        }
        ArgFact::List { items, tuple } => {
            let values = items.iter().map(|i| graph_inputs(builder, i, base, inputs)).collect();
            if *tuple {
                PyValue::tuple(values)
            } else {
                PyValue::list(values)
            }
        }
    }
}

/// The function's outputs, from what the translation returns: a tensor, or a tuple or list of
/// them. An input or a value returned twice gets an `Identity` (a function cannot return an
/// input as is).
fn outputs(
    builder: &mut GraphBuilder,
    result: PyValue,
    file: usize,
    span: crate::source::Span,
    inputs: &[(String, GraphType)],
) -> Result<Vec<(String, GraphType)>, Box<Diagnostic>> {
    let items = match result {
        PyValue::List(s) if s.is_tuple() => s.items().to_vec(),
        // A list of tensors (`unbind`'s `Tensor[]`): the exporter takes any sequence of values
        // as the node's outputs, and its `getitem` users index them.
        PyValue::List(s) if !s.items().is_empty() && s.items().iter().all(|v| matches!(v, PyValue::Graph(_))) => {
            s.items().to_vec()
        }
        PyValue::List(s) if s.items().is_empty() => {
            return Err(Box::new(
                Diagnostic::error(codes::TRACE_ERROR, file, "the translation returns an empty list for this call")
                    .primary(span, "this translation")
                    .help("an ONNX function has at least one output: where the list may be empty (a dimension of size 0), return one sequence value instead, such as `op.SplitToSequence(self, axis=dim, keepdims=False)`"),
            ))
        }
        other => vec![other],
    };
    let onnx = Opset { domain: String::new(), version: crate::aten::EXPORTER_OPSET };
    let mut names = Vec::new();
    let mut seen = HashSet::new();
    for item in items {
        let ty = match &item {
            PyValue::Graph(g) => g.ty.clone(),
            other => match crate::sema::ir_values::tensor_of(other) {
                Ok(t) => GraphType::Tensor {
                    elem: Some(t.elem),
                    shape: Some(t.dims.iter().map(|d| Dim::Known(*d)).collect()),
                },
                Err(_) => GraphType::Tensor { elem: None, shape: None },
            },
        };
        let name = match item {
            PyValue::Graph(g) => g.name.clone(),
            PyValue::None => {
                return Err(Box::new(
                    Diagnostic::error(codes::TRACE_ERROR, file, "the translation returns None for this call")
                        .primary(span, "this translation")
                        .help("return the tensors the operator computes"),
                ))
            }
            other => {
                let tensor = crate::sema::ir_values::tensor_of(&other).map_err(|why| {
                    Box::new(
                        Diagnostic::error(
                            codes::TRACE_ERROR,
                            file,
                            format!("the translation returns {}: {why}", other.brief()),
                        )
                        .primary(span, "this translation")
                        .help("return tensors"),
                    )
                })?;
                let out = builder.fresh("constant");
                builder.nodes.push(Node {
                    domain: String::new(),
                    op_type: Cow::Borrowed("Constant"),
                    inputs: vec![],
                    outputs: vec![out.clone()],
                    attrs: vec![Attr { name: "value".into(), value: AttrValue::Tensor(tensor) }],
                    source: None,
                });
                out
            }
        };
        let is_input = inputs.iter().any(|(n, _)| *n == name);
        let name = if is_input || !seen.insert(name.clone()) {
            let copy = builder.fresh(&format!("{name}_out"));
            builder.nodes.push(Node {
                domain: onnx.domain.clone(),
                op_type: Cow::Borrowed("Identity"),
                inputs: vec![Some(name)],
                outputs: vec![copy.clone()],
                attrs: vec![],
                source: None,
            });
            seen.insert(copy.clone());
            copy
        } else {
            name
        };
        names.push((name, ty));
    }
    Ok(names)
}

/// A trace's failure as the diagnostic to report.
fn trace_failure(e: ConstError, file: usize, span: crate::source::Span) -> Box<Diagnostic> {
    match e {
        ConstError::Failed(d) | ConstError::DeferredUse(d) => d,
        ConstError::NotConstant(at) => Box::new(
            Diagnostic::error(codes::TRACE_ERROR, file, "onnxsc cannot evaluate this at trace time")
                .primary(at, "not evaluated")
                .help("see docs/language.md for what trace-only translations may do"),
        ),
        ConstError::Poisoned(_) => Box::new(
            Diagnostic::error(codes::TRACE_ERROR, file, "the translation uses a name whose definition has errors")
                .primary(span, "this translation")
                .help("fix the errors `onnxsc check` reports"),
        ),
    }
}
