//! The names onnxsc knows without reading their modules: what `onnxscript` (its opsets, tensor
//! types, decorators), `typing`, torchlib's registration and tensor typing, and the modules of
//! the constant library (`sema::constlib`) define.

use super::constlib;
use super::env::{Global, ModuleKey, Opset};
use crate::onnx::ElemType;

pub(super) fn module_global(dotted: &str) -> Global {
    match dotted {
        "onnxscript" | "onnxscript.values" | "onnxscript.onnx_opset" | "onnxscript.onnx_types" | "typing" | "torch" => {
            Global::Module(ModuleKey::Known(dotted.to_string()))
        }
        "onnxscript._internal.values" => Global::Module(ModuleKey::Known("onnxscript.values".into())),
        other => match constlib::canonical_module(other) {
            Some(canonical) => Global::Lib(canonical.to_string()),
            None => Global::Opaque(other.to_string()),
        },
    }
}

/// `opset18` → the ai.onnx opset 18; `opset_ai_onnx_ml3` → ai.onnx.ml version 3.
pub fn opset_by_name(name: &str) -> Option<Opset> {
    if let Some(v) = name.strip_prefix("opset_ai_onnx_ml") {
        return v.parse().ok().map(|version| Opset { domain: "ai.onnx.ml".into(), version });
    }
    let v = name.strip_prefix("opset")?;
    let version: i64 = v.parse().ok()?;
    (1..=99).contains(&version).then(|| Opset { domain: String::new(), version })
}

/// What `from MODULE import NAME` binds.
pub(super) fn imported(module: &str, name: &str) -> Result<Global, String> {
    let onnxscript_like =
        matches!(module, "onnxscript" | "onnxscript.onnx_opset" | "onnxscript.onnx_types" | "onnxscript.values");
    if onnxscript_like {
        if let Some(op) = opset_by_name(name) {
            if module == "onnxscript.onnx_types" || module == "onnxscript.values" {
                return Err(format!("`{module}` has no `{name}`"));
            }
            let max = crate::schema::registry().max_version(&op.domain).unwrap_or(i64::MAX);
            if op.version > max {
                let shown = if op.domain.is_empty() { "ONNX" } else { op.domain.as_str() };
                return Err(format!("`{name}` does not exist: {shown} opsets go up to {max}"));
            }
            // onnxscript 0.7.2 defines ONNX opsets 1 to 27 in `onnxscript.onnx_opset`, and
            // re-exports 1 to 23 from `onnxscript`.
            let exported = if module == "onnxscript" { 23 } else { 27 };
            if op.domain.is_empty() && op.version > exported {
                let hint = if op.version <= 27 {
                    format!("import it from `onnxscript.onnx_opset`: `from onnxscript.onnx_opset import {name}`")
                } else {
                    "onnxscript 0.7.2 defines ONNX opsets up to 27; declare a newer one with `Opset(\"\", VERSION)`"
                        .to_string()
                };
                return Err(format!("`{module}` has no `{name}`: {hint}"));
            }
            return Ok(Global::Opset(op));
        }
        if let Some(t) = ElemType::from_script_name(name) {
            if module != "onnxscript.onnx_types" && !t.exported_by_onnxscript() {
                return Err(format!(
                    "`{module}` has no `{name}`: import it from `onnxscript.onnx_types`, as onnxscript 0.7.2 requires"
                ));
            }
            return Ok(Global::TensorType(t));
        }
        if module == "onnxscript.onnx_types" && name == ANY_TENSOR_TYPE {
            return Ok(any_tensor_type());
        }
        return match (module, name) {
            ("onnxscript", "script") => Ok(Global::ScriptDecorator),
            ("onnxscript", "graph") => Ok(Global::GraphDecorator),
            ("onnxscript", "values") => Ok(Global::Module(ModuleKey::Known("onnxscript.values".into()))),
            ("onnxscript", "onnx_opset") => Ok(Global::Module(ModuleKey::Known("onnxscript.onnx_opset".into()))),
            ("onnxscript", "onnx_types") => Ok(Global::Module(ModuleKey::Known("onnxscript.onnx_types".into()))),
            ("onnxscript.values", "Opset") | ("onnxscript", "Opset") => Ok(Global::OpsetClass),
            ("onnxscript", "ir") => Ok(Global::Lib("onnx_ir".into())),
            _ => Ok(Global::Opaque(format!("{module}.{name}"))),
        };
    }
    // `from onnxscript import values` and `from onnxscript._internal import values`.
    if module == "onnxscript._internal" && name == "values" {
        return Ok(Global::Module(ModuleKey::Known("onnxscript.values".into())));
    }
    if let Some(canonical) = constlib::canonical_module(module) {
        return Ok(match constlib::member(canonical, name) {
            Some(constlib::Member::Value(v)) => Global::Const(v),
            Some(constlib::Member::Object(path)) => Global::Lib(path),
            None => Global::Opaque(format!("{module}.{name}")),
        });
    }
    if module == TORCHLIB_REGISTRATION && name == "torch_op" {
        return Ok(Global::TorchOpDecorator);
    }
    if module == TORCHLIB_TYPING {
        return torchlib_type_var(name).ok_or_else(|| format!("`{module}` has no TypeVar or type alias `{name}`"));
    }
    if module == "typing" || module == "collections.abc" || module == "typing_extensions" {
        return Ok(Global::Typing(name.to_string()));
    }
    Ok(Global::Opaque(format!("{module}.{name}")))
}

/// `onnxscript.onnx_types.TensorType`, the base class of every tensor type: as an annotation, a
/// tensor of any element type (torchlib annotates trace-only translations with it). onnxscript
/// 0.7.2 defines it only in `onnx_types`, not in `onnxscript` or torchlib's `tensor_typing`.
const ANY_TENSOR_TYPE: &str = "TensorType";

/// What `TensorType` means: a named union of every element type onnxscript has a type for, so
/// that each use is independent (unlike a TypeVar) and the signature records it by name.
fn any_tensor_type() -> Global {
    Global::TypeUnion(ElemType::ALL.into_iter().filter(|t| t.has_script_type()).collect())
}

const TORCHLIB_REGISTRATION: &str = "onnxscript.function_libs.torch_lib.registration";

const TORCHLIB_TYPING: &str = "onnxscript.function_libs.torch_lib.tensor_typing";

/// The TypeVars and Union aliases of torchlib's `tensor_typing` (generated by
/// `scripts/gen_schemas.py`).
static TORCHLIB_TYPING_DATA: &str = include_str!("generated/torchlib_typing.txt");

fn torchlib_type_var(name: &str) -> Option<Global> {
    let mut fields = TORCHLIB_TYPING_DATA
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' '))
        .find(|f| f.clone().nth(1) == Some(name))?;
    let kind = fields.next()?;
    let allowed: Vec<ElemType> = fields.skip(1).filter_map(ElemType::from_script_name).collect();
    Some(match kind {
        "union" => Global::TypeUnion(allowed),
        _ => Global::TypeVar { name: name.to_string(), allowed },
    })
}
