//! What one call of the exporter knows, as it reaches a trace-only translation: each argument a
//! tensor (its element type and shape, symbolic dimensions included, where known), a Python
//! value, or a list of them. The Python package writes a call as JSON; this reads it.
//!
//! ```json
//! {"function": "pkg.onnxscript.torch_lib::aten_softmax",
//!  "args": [{"tensor": {"dtype": "FLOAT", "shape": [2, "s0"]}}, {"int": -1}],
//!  "kwargs": {"dtype": {"none": null}}}
//! ```
//!
//! Each value is tagged, so that `1` and `1.0`, a list and a tuple stay apart: `int`, `float`,
//! `bool`, `str`, `none`, `dtype` (an element type's name), `list`, `tuple`, and `tensor` (with
//! `dtype` and `shape`, each `null` when unknown, and `"sequence": true` for a sequence).

use crate::onnx::ElemType;
use crate::sema::value::{Dim, PyValue};
use serde_json::Value as Json;
use std::sync::Arc;

/// One argument of a call.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgFact {
    /// A tensor (or sequence) of the exporter's graph, with what the call knows of it.
    Tensor { elem: Option<ElemType>, shape: Option<Vec<Dim>>, sequence: bool },
    /// A Python value.
    Value(PyValue),
    /// A list (or tuple) whose items may be tensors.
    List { items: Vec<ArgFact>, tuple: bool },
}

/// A call of the exporter: the function, and its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct CallFacts {
    /// `domain::name` of the function called.
    pub function: String,
    pub args: Vec<ArgFact>,
    pub kwargs: Vec<(String, ArgFact)>,
}

impl CallFacts {
    /// The called function's domain and name: `function` split at its last `::`
    /// (`pkg.onnxscript.torch_lib::aten_gelu`), the domain empty when it has none.
    pub fn domain_and_name(&self) -> (&str, &str) {
        self.function.rsplit_once("::").unwrap_or(("", &self.function))
    }

    /// The call a JSON text describes, or why it is not one.
    pub fn from_json(text: &str) -> Result<CallFacts, String> {
        let json: Json = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let function = json.get("function").and_then(Json::as_str).ok_or("no `function`")?.to_string();
        let args = match json.get("args") {
            Some(Json::Array(items)) => items.iter().map(fact).collect::<Result<_, _>>()?,
            None => Vec::new(),
            Some(_) => return Err("`args` is not an array".into()),
        };
        let kwargs = match json.get("kwargs") {
            Some(Json::Object(map)) => {
                map.iter().map(|(k, v)| Ok((k.clone(), fact(v)?))).collect::<Result<_, String>>()?
            }
            None => Vec::new(),
            Some(_) => return Err("`kwargs` is not an object".into()),
        };
        Ok(CallFacts { function, args, kwargs })
    }
}

/// One tagged value.
fn fact(v: &Json) -> Result<ArgFact, String> {
    let Json::Object(map) = v else { return Err(format!("{v} is not a tagged value")) };
    let Some((tag, value)) = map.iter().next().filter(|_| map.len() == 1) else {
        return Err(format!("{v} is not a tagged value"));
    };
    let bad = || format!("`{tag}` does not hold {value}");
    Ok(match tag.as_str() {
        "int" => ArgFact::Value(PyValue::Int(i128::from(value.as_i64().ok_or_else(bad)?))),
        "float" => ArgFact::Value(PyValue::Float(float(value).ok_or_else(bad)?)),
        "bool" => ArgFact::Value(PyValue::Bool(value.as_bool().ok_or_else(bad)?)),
        "str" => ArgFact::Value(PyValue::str(value.as_str().ok_or_else(bad)?)),
        "none" => ArgFact::Value(PyValue::None),
        "dtype" => ArgFact::Value(PyValue::DType(elem(value).ok_or_else(bad)?)),
        "list" | "tuple" => {
            let Json::Array(items) = value else { return Err(bad()) };
            let items = items.iter().map(fact).collect::<Result<Vec<_>, _>>()?;
            ArgFact::List { items, tuple: tag == "tuple" }
        }
        "tensor" => {
            let elem = match value.get("dtype") {
                None | Some(Json::Null) => None,
                Some(d) => Some(elem(d).ok_or_else(bad)?),
            };
            let shape = match value.get("shape") {
                None | Some(Json::Null) => None,
                Some(Json::Array(dims)) => Some(dims.iter().map(dim).collect::<Option<Vec<_>>>().ok_or_else(bad)?),
                Some(_) => return Err(bad()),
            };
            let sequence = value.get("sequence").and_then(Json::as_bool).unwrap_or(false);
            ArgFact::Tensor { elem, shape, sequence }
        }
        other => return Err(format!("unknown tag `{other}`")),
    })
}

/// A float, written as JSON's number, or as `"inf"`, `"-inf"` or `"nan"`.
fn float(v: &Json) -> Option<f64> {
    match v {
        Json::String(s) => match s.as_str() {
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            "nan" => Some(f64::NAN),
            _ => None,
        },
        other => other.as_f64(),
    }
}

fn elem(v: &Json) -> Option<ElemType> {
    ElemType::from_script_name(v.as_str()?)
}

fn dim(v: &Json) -> Option<Dim> {
    match v {
        Json::String(s) => Some(Dim::Symbolic(Arc::from(s.as_str()))),
        other => Some(Dim::Known(other.as_i64()?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_reads_with_its_tags() {
        let text = r#"{"function": "d::f", "args": [{"tensor": {"dtype": "FLOAT", "shape": [2, "s0"]}},
            {"float": 1}, {"list": [{"int": 1}, {"tensor": {"dtype": null, "shape": null}}]}],
            "kwargs": {"k": {"none": null}, "t": {"dtype": "INT64"}}}"#;
        let call = CallFacts::from_json(text).expect("a call");
        assert_eq!(call.function, "d::f");
        assert_eq!(
            call.args[0],
            ArgFact::Tensor {
                elem: Some(ElemType::Float),
                shape: Some(vec![Dim::Known(2), Dim::Symbolic(Arc::from("s0"))]),
                sequence: false
            }
        );
        assert_eq!(call.args[1], ArgFact::Value(PyValue::Float(1.0)));
        assert!(matches!(&call.args[2], ArgFact::List { items, tuple: false } if items.len() == 2));
        assert_eq!(call.kwargs[1], ("t".to_string(), ArgFact::Value(PyValue::DType(ElemType::Int64))));
        assert!(CallFacts::from_json(r#"{"function": "f", "args": [3]}"#).is_err());
    }
}
