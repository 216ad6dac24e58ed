//! The layout of `generated/onnx_schemas.json` (what `scripts/gen_schemas.py` writes) and its
//! conversion into [`OpSchema`]s: formal types and attribute defaults are parsed here, once, so
//! the registry and its users never see the file's strings.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{
    normalize_domain, AttrDefault, AttrSchema, AttrType, FormalOption, FormalParam, FormalType, GeneratedFrom,
    OpSchema, TypeConstraint,
};
use crate::onnx::ValueType;

/// What the file holds: the schemas (unsorted), each domain's greatest opset version as the
/// generator recorded it, and the package versions it ran with.
pub(super) struct Loaded {
    pub schemas: Vec<OpSchema>,
    pub max_versions: BTreeMap<String, i64>,
    pub generated_from: GeneratedFrom,
}

pub(super) fn from_json(text: &str) -> Result<Loaded, String> {
    let raw: RawFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let schemas = raw.schemas.into_iter().map(convert_schema).collect::<Result<Vec<_>, _>>()?;
    Ok(Loaded {
        schemas,
        max_versions: raw.header.max_versions,
        generated_from: GeneratedFrom {
            onnx: raw.header.onnx,
            onnxruntime: raw.header.onnxruntime,
            python: raw.header.python,
            ort_onnx_domain_extras: raw.header.ort_onnx_domain_extras,
        },
    })
}

#[derive(Deserialize)]
struct RawFile {
    header: RawHeader,
    schemas: Vec<RawSchema>,
}

#[derive(Deserialize)]
struct RawHeader {
    onnx: String,
    onnxruntime: String,
    python: String,
    max_versions: BTreeMap<String, i64>,
    #[serde(default)]
    ort_onnx_domain_extras: Vec<String>,
}

#[derive(Deserialize)]
struct RawSchema {
    domain: String,
    name: String,
    since_version: i64,
    deprecated: bool,
    has_function: bool,
    #[serde(default)]
    runtime_only: bool,
    min_input: u32,
    max_input: u32,
    min_output: u32,
    max_output: u32,
    inputs: Vec<RawParam>,
    outputs: Vec<RawParam>,
    attributes: Vec<RawAttr>,
    type_constraints: Vec<RawConstraint>,
}

#[derive(Deserialize)]
struct RawParam {
    name: String,
    type_str: String,
    option: String,
    is_homogeneous: bool,
    #[serde(default)]
    min_arity: Option<u32>,
}

#[derive(Deserialize)]
struct RawAttr {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    required: bool,
    /// Absent: no default. Present (even as `null`): `Some`.
    #[serde(default, deserialize_with = "present")]
    default: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawConstraint {
    type_param: String,
    allowed: Vec<String>,
}

/// Deserialises a present field (including `null`) as `Some`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

fn convert_schema(raw: RawSchema) -> Result<OpSchema, String> {
    let ctx = format!("{}::{}@{}", raw.domain, raw.name, raw.since_version);
    let type_constraints: Vec<TypeConstraint> = raw
        .type_constraints
        .into_iter()
        .map(|c| TypeConstraint {
            types: c.allowed.iter().filter_map(|a| ValueType::parse(a)).collect(),
            type_param: c.type_param,
            allowed: c.allowed,
        })
        .collect();
    let formal_type = |type_str: &str| match type_constraints.iter().position(|c| c.type_param == type_str) {
        Some(i) => FormalType::Param(i),
        None => ValueType::parse(type_str).map_or(FormalType::Unknown, FormalType::Concrete),
    };
    let params = |list: Vec<RawParam>| -> Result<Vec<FormalParam>, String> {
        list.into_iter()
            .map(|p| {
                let (option, min_arity) = match p.option.as_str() {
                    "single" => (FormalOption::Single, 1),
                    "optional" => (FormalOption::Optional, 0),
                    "variadic" => (FormalOption::Variadic, p.min_arity.unwrap_or(1)),
                    other => return Err(format!("{ctx}: bad option {other:?}")),
                };
                Ok(FormalParam {
                    name: p.name,
                    ty: formal_type(&p.type_str),
                    type_str: p.type_str,
                    option,
                    is_homogeneous: p.is_homogeneous,
                    min_arity,
                })
            })
            .collect()
    };
    let inputs = params(raw.inputs)?;
    let outputs = params(raw.outputs)?;
    let mut attributes = raw
        .attributes
        .into_iter()
        .map(|a| {
            let ty = AttrType::from_proto_name(&a.ty).ok_or_else(|| format!("{ctx}: bad attribute type {:?}", a.ty))?;
            let default = match a.default {
                None => None,
                Some(v) => {
                    Some(convert_default(ty, &v).ok_or_else(|| format!("{ctx}: bad default for {}: {v}", a.name))?)
                }
            };
            Ok(AttrSchema { name: a.name, ty, required: a.required, default })
        })
        .collect::<Result<Vec<_>, String>>()?;
    attributes.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(OpSchema {
        domain: normalize_domain(&raw.domain).to_string(),
        name: raw.name,
        since_version: raw.since_version,
        deprecated: raw.deprecated,
        has_function: raw.has_function,
        runtime_only: raw.runtime_only,
        min_input: raw.min_input,
        max_input: raw.max_input,
        min_output: raw.min_output,
        max_output: raw.max_output,
        inputs,
        outputs,
        attributes,
        type_constraints,
    })
}

fn convert_default(ty: AttrType, v: &serde_json::Value) -> Option<AttrDefault> {
    use serde_json::Value;
    if v.is_null() {
        return Some(AttrDefault::Other);
    }
    let list = |v: &Value| v.as_array().cloned();
    Some(match ty {
        AttrType::Float => AttrDefault::Float(v.as_f64()?),
        AttrType::Int => AttrDefault::Int(v.as_i64()?),
        AttrType::String => AttrDefault::String(v.as_str()?.to_string()),
        AttrType::Floats => AttrDefault::Floats(list(v)?.iter().map(Value::as_f64).collect::<Option<_>>()?),
        AttrType::Ints => AttrDefault::Ints(list(v)?.iter().map(Value::as_i64).collect::<Option<_>>()?),
        AttrType::Strings => {
            AttrDefault::Strings(list(v)?.iter().map(|s| s.as_str().map(str::to_string)).collect::<Option<_>>()?)
        }
        _ => return None,
    })
}
