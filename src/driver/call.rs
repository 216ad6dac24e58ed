//! One call of a function as a model: a graph of one node that calls it, computing `out0`,
//! `out1`... `serve` links such a model in inline mode to answer a call (a [`CallRequest`] of
//! a library function, or a trace-only translation specialised to a call's facts); the graph
//! of what it returns is the function's body for that call.

use crate::diagnostics::{codes, Diagnostic};
use crate::ir::Dim;
use crate::link::interface::CallSignature;
use crate::onnx::AttrType;
use crate::onnx::ElemType;
use crate::proto::onnx::{
    tensor_shape_proto, type_proto, AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto,
    OperatorSetIdProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use crate::sema::value::GraphType;
use crate::sema::value::PyValue;
use crate::trace::facts::{expected_in, split_qualified, tagged_values_by_name, ArgFact, Expected};
use serde_json::Value as Json;

/// A call of a library function, as a client asks for it: which inputs it gives and the
/// values of its attributes.
///
/// ```json
/// {"function": "pkg.custom::custom_aten_add", "overload": "",
///  "inputs": ["self", "other"], "attributes": {"alpha": {"float": 2.0}}}
/// ```
///
/// Inputs are named by their formal names; attribute values are tagged as a trace's facts are
/// (`trace::facts`), and must be of the type the function's signature gives the attribute.
///
/// A request may also say what the exporter knows of the given inputs and what PyTorch
/// computes for the call, as a trace's facts say it; the linked body is then checked for that
/// call (`link::shapes`):
///
/// ```json
/// {"types": {"self": {"tensor": {"dtype": "FLOAT16", "shape": [2, "s0"]}}},
///  "expect": {"op": "aten::add.Tensor", "outputs": [{"dtype": "FLOAT16", "shape": [2, "s0"]}]}}
/// ```
#[derive(Debug)]
pub struct CallRequest {
    /// `domain::name`.
    pub function: String,
    pub overload: String,
    pub inputs: Vec<String>,
    pub attributes: Vec<(String, ArgFact)>,
    /// What the exporter knows of given inputs, by formal name (each an `ArgFact::Tensor`).
    pub types: Vec<(String, ArgFact)>,
    /// What PyTorch computes for the call.
    pub expect: Option<Expected>,
}

impl CallRequest {
    /// The call a JSON text describes, or why it is not one.
    pub fn from_json(text: &str) -> Result<CallRequest, String> {
        let json: Json = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let function = json.get("function").and_then(Json::as_str).ok_or("no `function`")?.to_string();
        let overload = json.get("overload").and_then(Json::as_str).unwrap_or_default().to_string();
        let inputs = match json.get("inputs") {
            Some(Json::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(String::from).ok_or_else(|| format!("input {i} is not a name")))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
            Some(_) => return Err("`inputs` is not an array of names".into()),
        };
        let attributes = tagged_values_by_name(&json, "attributes")?;
        let types = tagged_values_by_name(&json, "types")?;
        if let Some((name, _)) = types.iter().find(|(name, _)| !inputs.contains(name)) {
            return Err(format!("`types` describes `{name}`, which the call does not give"));
        }
        let expect = expected_in(&json)?;
        Ok(CallRequest { function, overload, inputs, attributes, types, expect })
    }

    /// Whether the call says enough to be checked beyond its signature: its inputs' types, or
    /// PyTorch's answer.
    pub fn is_typed(&self) -> bool {
        !self.types.is_empty() || self.expect.is_some()
    }

    /// The called function's domain and name: `function` split at its last `::`.
    pub fn domain_and_name(&self) -> (&str, &str) {
        split_qualified(&self.function)
    }

    /// The model of this call of `f`, or the diagnostic of what in it does not fit `f`'s
    /// signature.
    pub fn model(&self, f: &FunctionProto, signature: &CallSignature) -> Result<ModelProto, Box<Diagnostic>> {
        let mismatch = |message: String| {
            let attributes: Vec<&str> = signature.attributes.iter().map(|a| a.name.as_str()).collect();
            Box::new(Diagnostic::error(codes::CALL_SIGNATURE_MISMATCH, 0, message).help(format!(
                "call `{}` with its inputs ({}) and attributes ({})",
                f.name(),
                f.input.join(", "),
                attributes.join(", ")
            )))
        };
        if let Some(unknown) = self.inputs.iter().find(|i| !f.input.contains(i)) {
            return Err(mismatch(format!("`{}` has no input `{unknown}`", f.name())));
        }
        let attributes = self
            .attributes
            .iter()
            .map(|(name, value)| {
                let ty = signature.attributes.iter().find(|a| &a.name == name).map(|a| a.ty);
                match ty {
                    None => Err(format!("`{}` has no attribute `{name}`", f.name())),
                    Some(None) => Err(format!("the type of `{}`'s attribute `{name}` is not known", f.name())),
                    Some(Some(ty)) => attribute(name, value, ty),
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(mismatch)?;
        Ok(call_model(f, &self.inputs, attributes))
    }
}

/// The diagnostic for a call of a function no library defines.
pub fn unresolved(call: &CallRequest) -> Diagnostic {
    Diagnostic::error(codes::UNRESOLVED_CALL, 0, format!("no library of this server defines `{}`", call.function))
        .help("call a function of the libraries the server was started with, by its domain and name")
}

/// The attribute `name` of type `ty` holding a tagged value, or why the value is not of it.
fn attribute(name: &str, value: &ArgFact, ty: AttrType) -> Result<AttributeProto, String> {
    let mut a = AttributeProto { name: Some(name.to_string()), r#type: Some(ty.proto_code()), ..Default::default() };
    let wrong = || format!("attribute `{name}` is a `{}`, which the value {value:?} is not", ty.name());
    let items = || match value {
        ArgFact::List { items, .. } => {
            items.iter().map(|i| if let ArgFact::Value(v) = i { Some(v) } else { None }).collect::<Option<Vec<_>>>()
        }
        _ => None,
    };
    let int = |v: &PyValue| match v {
        PyValue::Int(i) => i64::try_from(*i).ok(),
        PyValue::Bool(b) => Some(i64::from(*b)),
        _ => None,
    };
    let float = |v: &PyValue| match v {
        PyValue::Float(x) => Some(*x as f32),
        PyValue::Int(i) => Some(*i as f32),
        _ => None,
    };
    let text = |v: &PyValue| match v {
        PyValue::Str(s) => Some(s.as_bytes().to_vec()),
        _ => None,
    };
    let scalar = match value {
        ArgFact::Value(v) => Some(v),
        _ => None,
    };
    match ty {
        AttrType::Int => a.i = Some(scalar.and_then(int).ok_or_else(wrong)?),
        AttrType::Float => a.f = Some(scalar.and_then(float).ok_or_else(wrong)?),
        AttrType::String => a.s = Some(scalar.and_then(text).ok_or_else(wrong)?),
        AttrType::Ints => a.ints = items().and_then(|v| v.into_iter().map(int).collect()).ok_or_else(wrong)?,
        AttrType::Floats => a.floats = items().and_then(|v| v.into_iter().map(float).collect()).ok_or_else(wrong)?,
        AttrType::Strings => a.strings = items().and_then(|v| v.into_iter().map(text).collect()).ok_or_else(wrong)?,
        _ => return Err(format!("attribute `{name}` is a `{}`, which a call cannot give", ty.name())),
    }
    Ok(a)
}

/// A model of one call of `f` that gives the inputs named in `given` (the others left out)
/// and `attributes`, computing `out0`, `out1`... The function itself is not in the model: the
/// caller adds it, or the libraries it is linked against define it.
pub fn call_model(f: &FunctionProto, given: &[String], attributes: Vec<AttributeProto>) -> ModelProto {
    // Given inputs and outputs are tensors of unknown element type: the linker folds `x is
    // None` on them. Each carries a shape, as onnx.checker requires.
    let unknown = || TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(0),
            shape: Some(Default::default()),
        })),
        ..Default::default()
    };
    let value =
        |name: &str| ValueInfoProto { name: Some(name.to_string()), r#type: Some(unknown()), ..Default::default() };
    let mut actuals: Vec<String> =
        f.input.iter().map(|formal| if given.contains(formal) { formal.clone() } else { String::new() }).collect();
    while actuals.last().is_some_and(String::is_empty) {
        actuals.pop();
    }
    let outputs: Vec<String> = (0..f.output.len()).map(|k| format!("out{k}")).collect();
    let node = NodeProto {
        input: actuals,
        output: outputs.clone(),
        op_type: f.name.clone(),
        domain: f.domain.clone(),
        overload: f.overload.clone().filter(|o| !o.is_empty()),
        attribute: attributes,
        ..Default::default()
    };
    let graph = GraphProto {
        node: vec![node],
        name: Some("call".into()),
        input: given.iter().map(|i| value(i)).collect(),
        output: outputs.iter().map(|o| value(o)).collect(),
        ..Default::default()
    };
    // The function's own domain first, then what its body imports.
    let own = OperatorSetIdProto { domain: Some(f.domain().to_string()), version: Some(1) };
    let mut opset_import: Vec<OperatorSetIdProto> = Vec::new();
    for o in std::iter::once(own).chain(f.opset_import.iter().cloned()) {
        if !opset_import.iter().any(|seen| seen.domain() == o.domain()) {
            opset_import.push(o);
        }
    }
    ModelProto { ir_version: Some(10), graph: Some(graph), opset_import, ..Default::default() }
}

/// Declares on the outputs of a call's model what a trace inferred of them: each tensor's
/// element type and dimensions (a symbol as a `dim_param`, an unknown dimension as neither),
/// so that a client sees what onnxsc knows of the result. An output of unknown rank keeps its
/// placeholder type.
pub fn declare_outputs(model: &mut ModelProto, returns: &[GraphType]) {
    let Some(graph) = model.graph.as_mut() else { return };
    for (value, ty) in graph.output.iter_mut().zip(returns) {
        let GraphType::Tensor { elem, shape: Some(dims) } = ty else { continue };
        let dim = |d: &Dim| tensor_shape_proto::Dimension {
            value: match d {
                Dim::Known(n) => Some(tensor_shape_proto::dimension::Value::DimValue(*n)),
                Dim::Symbolic(s) => Some(tensor_shape_proto::dimension::Value::DimParam(s.to_string())),
                Dim::Unknown => None,
            },
            ..Default::default()
        };
        value.r#type = Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem.map_or(0, ElemType::code)),
                shape: Some(TensorShapeProto { dim: dims.iter().map(dim).collect() }),
            })),
            ..Default::default()
        });
    }
}
