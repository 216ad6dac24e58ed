//! One typed signature per function: its parameters as its `def` line declares them (what each
//! annotation means, which ones a caller may omit or pass None for) and its declared outputs.
//!
//! It is read once per function, here, and every pass that needs a parameter's type or
//! optionality takes it from here: calls between functions (`sema::calls`), `@torch_op`
//! bindings (`sema::binding`), lowering (`lower::function`) and, through lowering, emission.

use super::annotations::{param_type, return_types, AnnotationError, ParamType};
use super::env::{Global, ModuleEnv, Names};
use super::eval::eval_const;
use super::resolve::resolve_dotted;
use super::value::PyValue;
use crate::onnx::DeclaredType;
use crate::syntax::ast::{self, Expr, FunctionDef, ParamKind};

/// A function's signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature<'f> {
    /// The function as written.
    pub def: &'f FunctionDef,
    /// Every parameter of the `def` line, in order (`*args` and the like included, for the
    /// passes that report them: [`SignatureParam::is_plain`] says which ones callers bind).
    pub params: Vec<SignatureParam<'f>>,
    /// The return annotation's output types (`None`: no annotation; `Err`: an invalid one, with
    /// its span and why).
    pub outputs: Option<Result<Vec<Option<DeclaredType>>, AnnotationError>>,
}

/// One parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct SignatureParam<'f> {
    /// The parameter as written (name, default, annotation, spans).
    pub def: &'f ast::Param,
    /// What its annotation makes of it (an unannotated parameter is an input of unknown type);
    /// `Err` with the span and why when the annotation is invalid.
    pub ty: Result<ParamType, AnnotationError>,
    /// A caller may omit it or pass None: annotated `Optional[...]` (or `Union[..., None]`), or
    /// defaulting to None.
    pub optional: bool,
    /// The default is None (`= None`, or a constant whose value is None).
    pub defaults_to_none: bool,
    /// The TypeVar an input's annotation names directly (`x: T`): onnxscript casts a literal
    /// argument for it to another argument of that TypeVar.
    pub type_var: Option<String>,
}

impl<'f> Signature<'f> {
    /// The signature of `f`, a module-level function of `env`: names in annotations mean what
    /// they mean where `f` is compiled ([`ModuleEnv::names_for`]).
    pub fn of(env: &ModuleEnv, f: &'f FunctionDef) -> Signature<'f> {
        Signature::with_names(env.names_for(f), f)
    }

    /// The signature of `f` with names as `names` sees them (a nested function: as the function
    /// around it sees them).
    pub fn with_names(names: Names, f: &'f FunctionDef) -> Signature<'f> {
        let params = f.params.iter().map(|p| SignatureParam::of(names, p)).collect();
        let outputs = f.returns.as_ref().map(|r| return_types(names, r));
        Signature { def: f, params, outputs }
    }

    /// The parameters callers bind, in order.
    pub fn plain(&self) -> impl Iterator<Item = &SignatureParam<'f>> {
        self.params.iter().filter(|p| p.is_plain())
    }

    /// How many outputs the return annotation declares (`None`: none, or an invalid one).
    pub fn declared_outputs(&self) -> Option<usize> {
        match &self.outputs {
            Some(Ok(ts)) => Some(ts.len()),
            _ => None,
        }
    }
}

impl<'f> SignatureParam<'f> {
    fn of(names: Names, p: &'f ast::Param) -> SignatureParam<'f> {
        let ty = match &p.annotation {
            None => Ok(ParamType::Input { ty: None, optional: false }),
            Some(a) => param_type(names, a),
        };
        let defaults_to_none = p.default.as_ref().is_some_and(|d| is_none(names, d));
        let annotated_optional =
            matches!(ty, Ok(ParamType::Input { optional: true, .. } | ParamType::Attr { optional: true, .. }));
        let type_var = match (&ty, p.annotation.as_ref().and_then(|a| resolve_dotted(names, a))) {
            (Ok(ParamType::Input { .. }), Some(Global::TypeVar { name, .. })) => Some(name),
            _ => None,
        };
        SignatureParam { def: p, ty, optional: annotated_optional || defaults_to_none, defaults_to_none, type_var }
    }

    pub fn name(&self) -> &'f str {
        &self.def.name.name
    }

    /// A plain parameter (not `*args`, `**kwargs`, `*` or `/`).
    pub fn is_plain(&self) -> bool {
        self.def.kind == ParamKind::Normal
    }

    pub fn has_default(&self) -> bool {
        self.def.default.is_some()
    }

    /// The attribute type of an attribute parameter.
    pub fn attr_kind(&self) -> Option<crate::onnx::AttrKind> {
        match self.ty {
            Ok(ParamType::Attr { ty, .. }) => Some(ty),
            _ => None,
        }
    }
}

/// A default whose value is None.
fn is_none(names: Names, default: &Expr) -> bool {
    matches!(default.kind, ast::ExprKind::None) || matches!(eval_const(names, default), Ok(PyValue::None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Diagnostics;
    use crate::onnx::{AttrKind, ElemType};
    use crate::sema::env_builder;
    use crate::syntax::parser::parse;

    const SOURCE: &str = "\
from typing import Optional, Sequence, TypeVar
from onnxscript import DOUBLE, FLOAT, script
from onnxscript import opset18 as op
NOTHING = None
T = TypeVar(\"T\", FLOAT, DOUBLE)

@script()
def f(x: T, s: Sequence[FLOAT], o: Optional[FLOAT], d: FLOAT = None, k: int = NOTHING, n=None) -> Sequence[T]:
    return s
";

    #[test]
    fn annotations_give_structured_types_and_one_optional_rule() {
        let module = parse(0, SOURCE).module.expect("valid source");
        let mut diags = Diagnostics::default();
        let env = env_builder::build(0, &module, &mut diags);
        let f = env.functions.first().expect("one function");
        let sig = Signature::of(&env, f);
        let row = |p: &SignatureParam| {
            let ty = match &p.ty {
                Ok(ParamType::Input { ty, .. }) => ty.as_ref().map_or("input".to_string(), ToString::to_string),
                Ok(ParamType::Attr { ty, .. }) => ty.python_name().to_string(),
                Err((_, why)) => why.clone(),
            };
            format!("{} {ty} optional={} var={:?}", p.name(), p.optional, p.type_var)
        };
        let rows: Vec<String> = sig.plain().map(row).collect();
        assert_eq!(
            rows,
            [
                "x T optional=false var=Some(\"T\")",
                "s Sequence[FLOAT] optional=false var=None",
                "o FLOAT optional=true var=None",
                "d FLOAT optional=true var=None",
                "k int optional=true var=None",
                "n input optional=true var=None",
            ]
        );
        let var = DeclaredType::Var { name: "T".into(), allowed: vec![ElemType::Float, ElemType::Double] };
        assert_eq!(sig.outputs, Some(Ok(vec![Some(DeclaredType::Sequence(Some(Box::new(var))))])));
        assert_eq!(sig.params[4].attr_kind(), Some(AttrKind::Int));
        assert_eq!(DeclaredType::Sequence(None).to_string(), "Sequence[?]");
    }
}
