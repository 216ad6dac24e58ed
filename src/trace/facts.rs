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
    /// What PyTorch says the call returns, when the exporter's FX node is known.
    pub expect: Option<Expected>,
}

/// PyTorch's answer for a call: the operator the FX node calls and each of its outputs' element
/// type and dimensions (`None` where PyTorch's value is not a tensor onnxsc compares, such as a
/// complex one, which the exporter turns into a real view).
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// `aten::mean.dim`.
    pub op: String,
    pub outputs: Vec<Option<ExpectedTensor>>,
}

/// One output PyTorch computes: its element type and dimensions, each `None` when not given.
pub type ExpectedTensor = (Option<ElemType>, Option<Vec<Dim>>);

impl CallFacts {
    /// The facts of the call's tensors, in the order its function takes them as inputs:
    /// positional arguments, then keyword ones, each list item by item.
    pub fn tensors(&self) -> Vec<ArgFact> {
        fn walk(fact: &ArgFact, out: &mut Vec<ArgFact>) {
            match fact {
                ArgFact::Tensor { .. } => out.push(fact.clone()),
                ArgFact::List { items, .. } => items.iter().for_each(|i| walk(i, out)),
                ArgFact::Value(_) => {}
            }
        }
        let mut out = Vec::new();
        self.args.iter().chain(self.kwargs.iter().map(|(_, a)| a)).for_each(|a| walk(a, &mut out));
        out
    }

    /// The called function's domain and name: `function` split at its last `::`
    /// (`pkg.onnxscript.torch_lib::aten_gelu`), the domain empty when it has none.
    pub fn domain_and_name(&self) -> (&str, &str) {
        split_qualified(&self.function)
    }

    /// The call a JSON text describes, or why it is not one.
    pub fn from_json(text: &str) -> Result<CallFacts, String> {
        let json: Json = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let function = json.get("function").and_then(Json::as_str).ok_or("no `function`")?.to_string();
        let args = match json.get("args") {
            Some(Json::Array(items)) => items.iter().map(tagged_value).collect::<Result<_, _>>()?,
            None => Vec::new(),
            Some(_) => return Err("`args` is not an array".into()),
        };
        let kwargs = tagged_values_by_name(&json, "kwargs")?;
        let expect = expected_in(&json)?;
        Ok(CallFacts { function, args, kwargs, expect })
    }
}

/// The object `key` of `json` (absent: empty), each value tagged as [`tagged_value`] reads it:
/// a call's keyword arguments, a call request's attributes.
pub fn tagged_values_by_name(json: &Json, key: &str) -> Result<Vec<(String, ArgFact)>, String> {
    match json.get(key) {
        Some(Json::Object(map)) => map.iter().map(|(k, v)| Ok((k.clone(), tagged_value(v)?))).collect(),
        None => Ok(Vec::new()),
        Some(_) => Err(format!("`{key}` is not an object")),
    }
}

/// A function's `domain::name` split at its last `::` (`pkg.onnxscript.torch_lib::aten_gelu`),
/// the domain empty when it has none: the one reading of a qualified name in a request.
pub fn split_qualified(function: &str) -> (&str, &str) {
    function.rsplit_once("::").unwrap_or(("", function))
}

/// The `expect` of a request's JSON, if it has one: PyTorch's answer for the call.
pub fn expected_in(json: &Json) -> Result<Option<Expected>, String> {
    match json.get("expect") {
        None | Some(Json::Null) => Ok(None),
        Some(e) => expected(e).map(Some),
    }
}

/// `{"op": "aten::mean.dim", "outputs": [{"dtype": "FLOAT16", "shape": [2, "s0"]}, null]}`.
fn expected(e: &Json) -> Result<Expected, String> {
    let op = e.get("op").and_then(Json::as_str).ok_or("`expect` has no `op`")?.to_string();
    let Some(Json::Array(items)) = e.get("outputs") else { return Err("`expect` has no `outputs` array".into()) };
    let outputs = items
        .iter()
        .map(|o| match o {
            Json::Null => Ok(None),
            o => match tagged_value(&serde_json::json!({ "tensor": o }))? {
                ArgFact::Tensor { elem, shape, .. } => Ok(Some((elem, shape))),
                _ => Err(format!("{o} is not an expected tensor")),
            },
        })
        .collect::<Result<_, String>>()?;
    Ok(Expected { op, outputs })
}

/// The name of the function a trace-only translation `name` specialises to for one call: the
/// `ordinal`-th specialisation made for a model (0 for a call answered alone). One rule, so
/// that `link`, `serve` and `onnxsc trace` name a variant alike.
pub fn variant_name(name: &str, ordinal: usize) -> String {
    format!("{name}__t{ordinal}")
}

/// A call's facts as a cache key: two keys are equal when their facts are, with floats compared
/// by their bits, so that `0.0` and `-0.0` (which a translation may tell apart) are two calls
/// and a NaN is the same call as itself.
#[derive(Clone, Debug)]
pub struct CallKey(pub CallFacts);

/// One piece of a call's facts, in the order [`CallKey::atoms`] walks them.
#[derive(PartialEq, Eq, Hash)]
enum Atom<'a> {
    /// Where a kind of fact, or a list, begins; lists end with [`Atom::End`].
    Open(&'static str),
    End,
    Int(i128),
    Float(u64),
    Bool(bool),
    Text(&'a str),
    Elem(Option<ElemType>),
    /// A value no JSON call can hold (a tensor constant, a graph value): by its Debug text.
    Other(String),
}

impl CallKey {
    fn atoms(&self) -> Vec<Atom<'_>> {
        let mut out = vec![Atom::Text(&self.0.function)];
        for a in &self.0.args {
            arg_atoms(a, &mut out);
        }
        out.push(Atom::Open("kwargs"));
        for (name, a) in &self.0.kwargs {
            out.push(Atom::Text(name));
            arg_atoms(a, &mut out);
        }
        if let Some(e) = &self.0.expect {
            out.push(Atom::Open("expect"));
            out.push(Atom::Text(&e.op));
            for o in &e.outputs {
                match o {
                    None => out.push(Atom::Open("none")),
                    Some((elem, shape)) => {
                        out.push(Atom::Elem(*elem));
                        out.push(Atom::Other(format!("{shape:?}")));
                    }
                }
            }
        }
        out
    }
}

fn arg_atoms<'a>(a: &'a ArgFact, out: &mut Vec<Atom<'a>>) {
    match a {
        ArgFact::Tensor { elem, shape, sequence } => {
            out.push(Atom::Open(if *sequence { "sequence" } else { "tensor" }));
            out.push(Atom::Elem(*elem));
            match shape {
                None => out.push(Atom::Open("unranked")),
                Some(dims) => {
                    out.push(Atom::Open("shape"));
                    for d in dims {
                        out.push(match d {
                            Dim::Known(n) => Atom::Int(i128::from(*n)),
                            Dim::Symbolic(s) => Atom::Text(s),
                            Dim::Unknown => Atom::Open("?"),
                        });
                    }
                    out.push(Atom::End);
                }
            }
        }
        ArgFact::Value(v) => value_atoms(v, out),
        ArgFact::List { items, tuple } => {
            out.push(Atom::Open(if *tuple { "tuple" } else { "list" }));
            items.iter().for_each(|i| arg_atoms(i, out));
            out.push(Atom::End);
        }
    }
}

fn value_atoms<'a>(v: &'a PyValue, out: &mut Vec<Atom<'a>>) {
    match v {
        PyValue::Int(i) => out.push(Atom::Int(*i)),
        PyValue::Float(f) => out.push(Atom::Float(f.to_bits())),
        PyValue::Bool(b) => out.push(Atom::Bool(*b)),
        PyValue::Str(s) => {
            out.push(Atom::Open("str"));
            out.push(Atom::Text(s));
        }
        PyValue::None => out.push(Atom::Open("None")),
        PyValue::DType(e) => {
            out.push(Atom::Open("dtype"));
            out.push(Atom::Elem(Some(*e)));
        }
        PyValue::SymDim(s) => {
            out.push(Atom::Open("symbol"));
            out.push(Atom::Text(s));
        }
        PyValue::List(seq) => {
            out.push(Atom::Open(if seq.is_tuple() { "tuple" } else { "list" }));
            seq.items().iter().for_each(|i| value_atoms(i, out));
            out.push(Atom::End);
        }
        PyValue::Tensor(_) | PyValue::Graph(_) => out.push(Atom::Other(format!("{v:?}"))),
    }
}

impl PartialEq for CallKey {
    fn eq(&self, other: &CallKey) -> bool {
        self.atoms() == other.atoms()
    }
}

impl Eq for CallKey {}

impl std::hash::Hash for CallKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.atoms().hash(state);
    }
}

/// One tagged value.
pub fn tagged_value(v: &Json) -> Result<ArgFact, String> {
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
            let items = items.iter().map(tagged_value).collect::<Result<Vec<_>, _>>()?;
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

    fn key(args: &str) -> CallKey {
        CallKey(CallFacts::from_json(&format!(r#"{{"function": "d::f", "args": [{args}]}}"#)).expect("a call"))
    }

    #[test]
    fn a_call_key_tells_apart_what_a_translation_can() {
        use std::collections::HashSet;
        let same = [r#"{"float": 1.5}, {"tensor": {"dtype": "FLOAT", "shape": [2, "s0"]}}"#, r#"{"float": "nan"}"#];
        for args in same {
            assert_eq!(key(args), key(args), "{args}");
        }
        let different = [
            r#"{"float": 0.0}"#,
            r#"{"float": -0.0}"#,
            r#"{"int": 1}"#,
            r#"{"float": 1}"#,
            r#"{"bool": true}"#,
            r#"{"str": "1"}"#,
            r#"{"list": [{"int": 1}]}"#,
            r#"{"tuple": [{"int": 1}]}"#,
            r#"{"list": [{"int": 1}]}, {"int": 2}"#,
            r#"{"list": [{"int": 1}, {"int": 2}]}"#,
            r#"{"tensor": {"dtype": "FLOAT", "shape": [2]}}"#,
            r#"{"tensor": {"dtype": "FLOAT", "shape": ["s0"]}}"#,
            r#"{"tensor": {"dtype": "FLOAT", "shape": null}}"#,
            r#"{"tensor": {"dtype": "FLOAT", "shape": null, "sequence": true}}"#,
            r#"{"tensor": {"dtype": null, "shape": null}}"#,
            r#"{"dtype": "FLOAT"}"#,
            r#"{"none": null}"#,
        ];
        let keys: HashSet<CallKey> = different.iter().map(|a| key(a)).collect();
        assert_eq!(keys.len(), different.len());
        let by_name = CallKey(CallFacts::from_json(r#"{"function": "d::f", "kwargs": {"x": {"int": 1}}}"#).unwrap());
        assert!(!keys.contains(&by_name));
    }
}
