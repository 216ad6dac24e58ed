//! The signature of a module-level function: its parameters (annotations to inputs or
//! attributes, defaults, optionality) and declared outputs, bound in the lowerer's scope.

use super::*;

/// What a function's signature gives lowering.
pub(super) struct LoweredSignature {
    pub(super) inputs: Vec<InputParam>,
    pub(super) attributes: Vec<AttrParam>,
    pub(super) declared_outputs: Option<Vec<Option<DeclaredType>>>,
    /// No errors in the signature.
    pub(super) ok: Result<(), Reported>,
}

impl<'a, 'm> Lowerer<'a, 'm> {
    /// Binds the parameters of `f` (of signature `sig`) and reports what is wrong with them.
    pub(super) fn lower_signature(&mut self, f: &FunctionDef, sig: &Signature, deco: &Decoration) -> LoweredSignature {
        let mut ok = Ok(());
        let mut inputs = Vec::new();
        let mut attributes = Vec::new();
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut default_seen: Option<(Span, &str)> = None;
        for param in &sig.params {
            let p = param.def;
            if p.kind != ParamKind::Normal {
                ok = Err(self.unsupported(
                    p.span,
                    unsupported_parameter(p.kind),
                    "list each input and attribute as a plain parameter",
                ));
                continue;
            }
            if let Err(r) = self.check_default_order(p, &mut default_seen, deco) {
                ok = Err(r);
            }
            if let Some(first) = seen.insert(&p.name.name, p.name.span) {
                ok = Err(self.duplicate_parameter(p, first));
                continue;
            }
            let ty = match &param.ty {
                Ok(t) => t.clone(),
                Err((span, why)) => {
                    ok = Err(self.invalid_annotation(p, *span, why));
                    continue;
                }
            };
            match ty {
                ParamType::Input { ty, optional } => inputs.push(self.lower_input_param(param, ty, optional)),
                ParamType::Attr { ty, optional } => {
                    attributes.push(self.lower_attr_param(param, ty, optional, &mut ok));
                }
            }
        }
        let declared_outputs = self.declared_outputs(f, sig, &mut ok);
        LoweredSignature { inputs, attributes, declared_outputs, ok }
    }

    /// A parameter without a default after one with a default (`default_seen`, the first such
    /// one, which this sets when `p` is it).
    fn check_default_order<'p>(
        &mut self,
        p: &'p Param,
        default_seen: &mut Option<(Span, &'p str)>,
        deco: &Decoration,
    ) -> Result<(), Reported> {
        match (&p.default, *default_seen) {
            (Some(d), None) => *default_seen = Some((d.span, p.name.name.as_str())),
            (None, Some((first, first_name))) => {
                // A translation's parameters follow its schema's order: never move them.
                let help = if deco.torch_ops.is_empty() {
                    "move parameters without defaults before those with defaults".to_string()
                } else {
                    format!(
                        "keep the schema's order: give `{}` a default too, or remove the default of `{first_name}` (`Optional[...]` alone makes a parameter optional)",
                        p.name.name
                    )
                };
                let d = Diagnostic::error(
                    codes::BAD_DEFAULT,
                    self.names.file(),
                    format!("parameter `{}` without a default follows a parameter with one", p.name.name),
                )
                .primary(p.name.span, "needs a default")
                .secondary(first, "first default here")
                .help(help);
                return Err(self.push(d));
            }
            _ => {}
        }
        Ok(())
    }

    /// A parameter declared again (`first` is where it was first declared).
    fn duplicate_parameter(&mut self, p: &Param, first: Span) -> Reported {
        let d = Diagnostic::error(
            codes::DUPLICATE_PARAMETER,
            self.names.file(),
            format!("parameter `{}` is declared twice", p.name.name),
        )
        .primary(p.name.span, "declared again here")
        .secondary(first, "first declared here");
        self.push(d)
    }

    /// A parameter whose annotation is invalid (at `span`, for the reason `why`): reported, with
    /// the import that an undefined type name lacks, unless it uses a global whose definition
    /// already failed. The parameter is bound as poisoned either way.
    fn invalid_annotation(&mut self, p: &Param, span: Span, why: &str) -> Reported {
        let annotation = &p.annotation;
        if let Some(r) = annotation.as_ref().and_then(|a| mentions_poison(self.names, a)) {
            self.bind(&p.name.name, Binding::Poison(r));
            return r;
        }
        let mut d = Diagnostic::error(codes::BAD_ANNOTATION, self.names.file(), format!("invalid type annotation for `{}`: {why}", p.name.name))
            .primary(span, "not a tensor or attribute type")
            .help("annotate tensors with `FLOAT`, `INT64[...]`, a TypeVar, and attributes with `float`, `int`, `str`, `bool` or `Sequence[int]`");
        if let Some(a @ Expr { kind: ExprKind::Name(n), .. }) = annotation {
            if self.names.get(n).is_none() {
                d = Diagnostic::error(
                    codes::UNDEFINED_NAME,
                    self.names.file(),
                    format!("undefined name `{n}` in the annotation of `{}`", p.name.name),
                )
                .primary(a.span, "not defined");
                d = match ElemType::from_script_name(&n.to_uppercase()) {
                    // `FLOAT` itself: import it; `float32` and the like: the type they mean.
                    Some(t) if t.script_name() == n => d.help(format!("import it: `from onnxscript import {n}`")).fix(
                        format!("Import `{n}` from onnxscript"),
                        vec![imports::import_edit(self.names.env, "onnxscript", n)],
                    ),
                    Some(t) => d.help(format!("import it: `from onnxscript import {}`", t.script_name())),
                    None => d.help("import the type from onnxscript, e.g. `from onnxscript import FLOAT`"),
                };
            }
        }
        let r = self.push(d);
        self.bind(&p.name.name, Binding::Poison(r));
        r
    }

    /// A tensor input parameter, annotated `ty` (`optional`: `Optional[...]`): bound as a value.
    fn lower_input_param(&mut self, param: &SignatureParam, ty: Option<DeclaredType>, optional: bool) -> InputParam {
        let p = param.def;
        self.values.take(p.name.name.clone());
        self.bind(&p.name.name, Binding::Value(p.name.name.clone()));
        if let Some(t) = ty.as_ref().and_then(Ty::declared) {
            // `Optional[FLOAT]`: a FLOAT the caller may omit, or an optional value.
            let t = if optional { Ty::MaybeOpt(Box::new(t)) } else { t };
            self.values.set_ty(&p.name.name, t);
        }
        let optional = param.optional;
        // What a parameter is, for an editor's facts only.
        if self.facts.is_some() {
            let note = ParamNote { declared: p.name.span, optional, python: None, default: None };
            self.params.insert(p.name.name.clone(), note);
            self.note(&p.name.name, p.name.span, &Binding::Value(p.name.name.clone()));
        }
        if optional {
            self.declare_optional_input(&p.name.name);
        }
        let default_repr =
            p.default.as_ref().map(|d| eval_const(self.names, d).map(|v| v.to_json()).unwrap_or_default());
        InputParam { name: p.name.name.clone(), ty, optional, default_repr }
    }

    /// An attribute parameter of Python type `ty` (`optional`: `Optional[...]`): bound as an
    /// attribute reference; an invalid default fails `ok`.
    fn lower_attr_param(
        &mut self,
        param: &SignatureParam,
        ty: crate::onnx::AttrKind,
        optional: bool,
        ok: &mut Result<(), Reported>,
    ) -> AttrParam {
        let p = param.def;
        let onnx_ty = ty.onnx_type();
        if (optional && p.default.is_none()) || param.defaults_to_none {
            self.declare_optional_attribute(&p.name.name);
        }
        let optional = param.optional;
        let (default, default_repr) = match &p.default {
            Some(d) => self.attr_default(p, d, ty, ok),
            None => (None, None),
        };
        self.bind(&p.name.name, Binding::Attr { name: p.name.name.clone(), ty: onnx_ty, as_bool: ty.is_bool() });
        // What a parameter is, for an editor's facts only: a build would evaluate
        // and print each default again for nothing.
        if self.facts.is_some() {
            let shown = p.default.as_ref().and_then(|d| eval_const(self.names, d).ok()).map(|v| v.repr());
            let note =
                ParamNote { declared: p.name.span, optional: false, python: Some(ty.python_name()), default: shown };
            self.params.insert(p.name.name.clone(), note);
            let binding = Binding::Attr { name: p.name.name.clone(), ty: onnx_ty, as_bool: ty.is_bool() };
            self.note(&p.name.name, p.name.span, &binding);
        }
        AttrParam { name: p.name.name.clone(), ty: onnx_ty, kind: ty, default, default_repr, optional }
    }

    /// The default `d` of attribute parameter `p` (of Python type `ty`), as an attribute value
    /// and as JSON (`null` for `None`); one that is not a constant of that type is reported and
    /// fails `ok`.
    fn attr_default(
        &mut self,
        p: &Param,
        d: &Expr,
        ty: crate::onnx::AttrKind,
        ok: &mut Result<(), Reported>,
    ) -> (Option<AttrValue>, Option<serde_json::Value>) {
        let (mut default, mut default_repr) = (None, None);
        match eval_const(self.names, d).map_err(|error| self.report_const_error(error)) {
            Ok(PyValue::None) => default_repr = Some(serde_json::Value::Null),
            Ok(v) => match attr_value(&v, ty.onnx_type()) {
                Ok(av) if !(matches!(ty, crate::onnx::AttrKind::Int) && matches!(v, PyValue::Float(_))) => {
                    default_repr = Some(v.to_json());
                    default = Some(av);
                }
                _ => {
                    let d = Diagnostic::error(
                        codes::BAD_DEFAULT,
                        self.names.file(),
                        format!(
                            "the default of `{}` is {}, but its type is `{}`",
                            p.name.name,
                            with_article(v.type_name()),
                            ty.python_name()
                        ),
                    )
                    .primary(d.span, format!("expected {} value", with_article(ty.python_name())));
                    *ok = Err(self.push(d));
                }
            },
            Err(Err(span)) => {
                let d = Diagnostic::error(
                    codes::BAD_DEFAULT,
                    self.names.file(),
                    format!("the default of `{}` must be a constant", p.name.name),
                )
                .primary(span, "not a constant");
                *ok = Err(self.push(d));
            }
            Err(Ok(reported)) => *ok = Err(reported),
        }
        (default, default_repr)
    }

    /// The output types of `f`'s return annotation, `None` when it has none; an invalid one is
    /// reported (with the import that makes an undefined type name valid) and fails `ok`. One
    /// home for top-level functions and nested graphs alike.
    pub(super) fn declared_outputs(
        &mut self,
        f: &FunctionDef,
        sig: &Signature,
        ok: &mut Result<(), Reported>,
    ) -> Option<Vec<Option<DeclaredType>>> {
        let (Some(r), Some(outputs)) = (&f.returns, &sig.outputs) else { return None };
        let (span, why) = match outputs {
            Ok(types) => return Some(types.clone()),
            Err((span, why)) => (*span, why),
        };
        *ok = Err(match mentions_poison(self.names, r) {
            Some(poisoned) => poisoned,
            None => {
                let mut d = Diagnostic::error(
                    codes::BAD_ANNOTATION,
                    self.names.file(),
                    format!("invalid return annotation: {why}"),
                )
                .primary(span, "not a tensor type");
                if let ExprKind::Name(n) = &r.kind {
                    if self.names.get(n).is_none() && ElemType::from_script_name(n).is_some() {
                        d = d.help(format!("`{n}` is not defined: import it, `from onnxscript import {n}`")).fix(
                            format!("Import `{n}` from onnxscript"),
                            vec![imports::import_edit(self.names.env, "onnxscript", n)],
                        );
                    }
                }
                self.push(d)
            }
        });
        None
    }
}

/// How diagnostics name a parameter form outside the language (`*args`, `**kwargs`, `*`, `/`).
pub(super) fn unsupported_parameter(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::VarArgs => "`*args` parameters are",
        ParamKind::KwArgs => "`**kwargs` parameters are",
        ParamKind::KwOnlyMarker => "keyword-only parameters (`*`) are",
        _ => "positional-only parameters (`/`) are",
    }
}

/// Whether an annotation uses a global whose definition already failed: the proof of its report.
pub(super) fn mentions_poison(globals: Names, e: &Expr) -> Option<Reported> {
    let mut names = liveness::Live::new();
    liveness::used_vars(e, &mut names);
    names.iter().find_map(|n| match globals.get(n) {
        Some(Global::Poison(r)) => Some(*r),
        _ => None,
    })
}
