//! What a dotted name means: `op.Add`'s opset, `onnxscript.values.Opset`, `np.float32`, a name
//! of an imported `.onnxs` module, against a module's globals as one point sees them.

use super::constlib;
use super::env::{Global, ModuleEnv, ModuleKey, Names};
use super::known_names::imported;
use crate::syntax::ast::*;

/// Resolves `a.b.c` against the globals: modules, opset attributes of modules, type names.
pub fn resolve_dotted(names: Names, expr: &Expr) -> Option<Global> {
    match &expr.kind {
        ExprKind::Name(n) => names.get(n).cloned(),
        ExprKind::Attribute { value, attr } => {
            // A name's global by reference: resolving `op.Add` must not copy the opset `op` only
            // to find that this lookup has nothing for it.
            let resolved;
            let base = match &value.kind {
                ExprKind::Name(n) => names.get(n)?,
                _ => {
                    resolved = resolve_dotted(names, value)?;
                    &resolved
                }
            };
            resolve_attribute(names.env, base, attr)
        }
        _ => None,
    }
}

/// `base.attr`, for a `base` [`resolve_dotted`] resolved.
fn resolve_attribute(env: &ModuleEnv, base: &Global, attr: &Ident) -> Option<Global> {
    match base {
        Global::Module(key @ (ModuleKey::Onnxs(_) | ModuleKey::Package(_))) => env.namespace(key)?.get(&attr.name),
        Global::Module(ModuleKey::Known(m)) => {
            let full = format!("{m}.{}", attr.name);
            match full.as_str() {
                "onnxscript.values" | "onnxscript.onnx_opset" | "onnxscript.onnx_types" => {
                    Some(Global::Module(ModuleKey::Known(full)))
                }
                "onnxscript.script" => Some(Global::ScriptDecorator),
                "onnxscript.graph" => Some(Global::GraphDecorator),
                "onnxscript.values.Opset" | "onnxscript.Opset" => Some(Global::OpsetClass),
                _ if m == "typing" => Some(Global::Typing(attr.name.clone())),
                _ => imported(m, &attr.name).ok(),
            }
        }
        Global::Lib(path) => match constlib::member(path, &attr.name)? {
            constlib::Member::Value(v) => Some(Global::Const(v)),
            constlib::Member::Object(p) => Some(Global::Lib(p)),
        },
        _ => None,
    }
}
