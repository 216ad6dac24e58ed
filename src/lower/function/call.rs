//! Calls: ops through an opset (arguments bound to the schema's inputs and attributes by
//! [`bind_op_arguments`]), functions of the compilation, and attribute arguments.

use super::*;
use crate::sema::literal_shapes;

impl<'a, 'm> Lowerer<'a, 'm> {
    /// Lowers `opset.Op(...)` (or a call to another function of the module) into one node
    /// whose outputs are `outputs`.
    pub(super) fn lower_call(&mut self, func: &Expr, args: &[Arg], span: Span, outputs: Vec<String>) -> R<()> {
        self.reject_unpacked_arguments(args)?;
        if let Some(idx) = self.module_function(func)? {
            return self.lower_function_call(idx, "", args, span, outputs);
        }
        let (opset, op_name, op_span) = match self.callee(func)? {
            Callee::Op { opset, name, span: name_span } => (opset, name, name_span),
            Callee::Function { idx, name } => return self.lower_function_call(idx, name, args, span, outputs),
        };
        if opset.domain.is_empty() && self.default_opset.is_none() {
            self.default_opset = Some(opset.clone());
        }
        let schema = self.op_schema(&opset, op_name, op_span)?;
        if let Some(s) = schema {
            self.report_op_status(s, &opset, op_name, op_span);
        }

        // Split arguments into inputs and attributes, as onnxscript does with a schema.
        let OpArguments { inputs: input_exprs, attributes: attr_exprs } =
            bind_op_arguments(self.file(), op_name, schema, args, span).map_err(|d| self.push(*d))?;
        if let Some(s) = schema {
            let bound = (&input_exprs[..], &attr_exprs[..]);
            if let Some(d) = literal_shapes::violation(self.file(), s, opset.version, bound, outputs.len(), span) {
                return Err(self.push(d));
            }
            self.check_output_count(s, op_name, outputs.len(), span)?;
            if opset.domain.is_empty() && op_name == "Split" {
                self.check_split_outputs(s, &input_exprs, &attr_exprs, outputs.len(), span)?;
            }
        }
        let (inputs, attrs) = self.lower_op_arguments(op_name, schema, &input_exprs, attr_exprs)?;
        let mut inputs = self.autocast(schema, inputs, span)?;
        let mut checked = None;
        if let Some(schema) = schema {
            let spans: Vec<Span> = input_exprs.iter().map(|e| e.map(|e| e.span).unwrap_or(span)).collect();
            // A constant the input cannot take: say how to write it so that it can.
            let help = |l: &Self, i: usize, like: Option<&Ty>| {
                input_exprs.get(i).copied().flatten().and_then(|e| l.constant_help(schema, i, e, like))
            };
            checked = Some(self.check_input_types_with(schema, &inputs, &spans, outputs.len(), &help)?);
            self.check_attributes_present(schema, &attrs, args, span)?;
        }
        // Trailing omitted inputs are dropped, as ONNX allows.
        while inputs.last().is_some_and(|i| i.is_none()) {
            inputs.pop();
        }
        // Omitted inputs type nothing: what the check found holds without them.
        self.checked_outputs = checked;
        // The schema's name is the op's (it was found by it), and lives as long as the program.
        let op_type: Cow<'static, str> = match schema {
            Some(s) => Cow::Borrowed(s.name.as_str()),
            None => Cow::Owned(op_name.to_string()),
        };
        self.emit(&opset, op_type, inputs, outputs, attrs, span)
    }

    /// `f(*args)` and `f(**kwargs)`: each input and attribute must be passed on its own.
    fn reject_unpacked_arguments(&mut self, args: &[Arg]) -> R<()> {
        for a in args {
            if a.kind != ArgKind::Plain {
                let what = if a.kind == ArgKind::Star { "`*args` in calls is" } else { "`**kwargs` in calls is" };
                return Err(self.unsupported(a.span, what, "pass each input and attribute explicitly"));
            }
        }
        Ok(())
    }

    /// What the callee `func` of a call names: an op of an opset, or a function of the
    /// compilation; anything else is reported.
    fn callee<'e>(&mut self, func: &'e Expr) -> R<Callee<'e>> {
        match &func.kind {
            ExprKind::Attribute { value, attr } => self.opset_callee(func, value, attr),
            ExprKind::Name(n) => self.named_callee(func, n),
            _ => {
                let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), "this cannot be called")
                    .primary(func.span, "not an op or a function");
                Err(self.push(d))
            }
        }
    }

    /// `value.attr` as a callee (`func`): `op.Add`, where `value` is a global naming an opset.
    fn opset_callee<'e>(&mut self, func: &Expr, value: &Expr, attr: &'e Ident) -> R<Callee<'e>> {
        let n = match &value.kind {
            ExprKind::Name(n) if self.lookup(n).is_none() => n,
            _ => {
                let d =
                    Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), "ops must be called through an opset name")
                        .primary(func.span, "not of the form `opset.Op`")
                        .help("import the opset under a name: `from onnxscript import opset18 as op`");
                return Err(self.push(d));
            }
        };
        match self.names.get(n) {
            Some(Global::Opset(o)) => Ok(Callee::Op { opset: o.clone(), name: attr.name.as_str(), span: attr.span }),
            Some(Global::Poison(r)) => Err(*r),
            Some(Global::Lib(_)) => {
                // `math.sqrt(2)` as an operand: Python, which runs only at compile time.
                let d = Diagnostic::error(
                    codes::UNKNOWN_CALLEE,
                    self.file(),
                    format!("`{n}.{}` is a Python function, not an op", attr.name),
                )
                .primary(func.span, "called where a tensor is computed")
                .help(format!(
                    "compute the value in a module constant (`C = {n}.{}(...)`) and use `C`, as onnxscript requires",
                    attr.name
                ));
                Err(self.push(d))
            }
            Some(_) => {
                let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), format!("`{n}` is not an opset"))
                    .primary(value.span, "expected an opset such as `op`")
                    .help("call ops through an opset: `from onnxscript import opset18 as op`, then `op.Add(x, y)`");
                Err(self.push(d))
            }
            None => Err(self.undefined(n, value.span)),
        }
    }

    /// A bare name `n` as a callee (`func`): a function of the module, or an op of the default
    /// opset.
    fn named_callee<'e>(&mut self, func: &Expr, n: &'e str) -> R<Callee<'e>> {
        match (self.lookup(n), self.names.get(n)) {
            (None, Some(Global::Function(idx))) => Ok(Callee::Function { idx: *idx, name: n }),
            // A bare op name is an op of the default opset, as onnxscript resolves it.
            (None, None) => match self.default_opset.clone() {
                Some(o) => Ok(Callee::Op { opset: o, name: n, span: func.span }),
                None => Err(self.undefined(n, func.span)),
            },
            // An import that failed (already reported).
            (None, Some(Global::Poison(r))) => Err(*r),
            (Some(Binding::Graph(_)), _) => {
                let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), format!("the nested function `{n}` cannot be called"))
                    .primary(func.span, "a `@graph()` function")
                    .help(format!("pass it as a graph attribute of an op, e.g. `op.Scan(..., body={n})`; to reuse code, call a module-level function"));
                Err(self.push(d))
            }
            (Some(Binding::Poison(r)), _) => Err(*r),
            _ => {
                let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), format!("`{n}` is not callable"))
                    .primary(func.span, "not an op or a function")
                    .help("call ONNX ops through an opset, e.g. `op.Add(x, y)`");
                Err(self.push(d))
            }
        }
    }

    /// The schema of `op_name` (named at `op_span`) in `opset`; `None` for an op of a domain
    /// whose schemas are not known. An op the opset does not have (yet) is reported.
    fn op_schema(&mut self, opset: &Opset, op_name: &str, op_span: Span) -> R<Option<&'static OpSchema>> {
        crate::sema::op_arguments::op_schema(self.file(), opset, op_name, op_span, self.exporter_bound)
            .map_err(|d| self.push(*d))
    }

    /// Warns of an op that ONNX Runtime alone defines, and reports one deprecated in `opset`;
    /// the call is lowered either way.
    fn report_op_status(&mut self, s: &OpSchema, opset: &Opset, op_name: &str, op_span: Span) {
        if s.runtime_only {
            self.diags.push(
                Diagnostic::warning(
                    codes::RUNTIME_ONLY_OP,
                    self.file(),
                    format!("`{op_name}` is an ONNX Runtime operator, not an ONNX one"),
                )
                .primary(op_span, "defined by ONNX Runtime in the ONNX domain")
                .help("ONNX Runtime runs it, but onnx.checker and other runtimes do not know it"),
            );
        }
        if s.deprecated {
            // onnx.checker refuses a model that uses it: an error, not a warning.
            self.diags.push(
                Diagnostic::error(
                    codes::DEPRECATED_OP,
                    self.file(),
                    format!("`{op_name}` is deprecated in opset {}, and ONNX tools refuse it", opset.version),
                )
                .primary(op_span, "deprecated operator")
                .help(self.deprecated_help(opset, op_name)),
            );
        }
    }

    /// How to do without `op_name`, deprecated in `opset`. A translation cannot move to another
    /// opset (torch.onnx.export builds at opset 18, E0513): it is told the replacement there, or
    /// what to write with opset-18 operators where the replacement is newer.
    fn deprecated_help(&self, opset: &Opset, op_name: &str) -> String {
        let anywhere = format!(
            "onnx.checker refuses a model that uses a deprecated operator: use its replacement, or an opset in which `{op_name}` is not deprecated"
        );
        if !(self.exporter_bound && opset.domain.is_empty()) {
            return anywhere;
        }
        let at_exporter = format!("torch.onnx.export builds translations at opset {EXPORTER_OPSET}");
        let Some(replacement) = deprecated_replacement(op_name) else {
            return format!("{at_exporter}: write `{op_name}` with other opset-{EXPORTER_OPSET} operators");
        };
        match schema::registry().resolve("", replacement, opset.version) {
            Resolution::Found(s) if !s.deprecated => {
                format!("{at_exporter}: use `{replacement}`, which replaces `{op_name}` in that opset")
            }
            _ if op_name == "GroupNormalization" => format!(
                "{at_exporter}, and `GroupNormalization`'s replacement is in opset 21: reshape `X` to (N, num_groups, -1), subtract its `op.ReduceMean` over the last axis, divide by `op.Sqrt` of the variance plus `epsilon`, reshape back and apply `scale` and `bias`"
            ),
            _ => format!(
                "{at_exporter}, and `{replacement}` is not in it: write `{op_name}` with opset-{EXPORTER_OPSET} operators"
            ),
        }
    }

    /// A call that unpacks more names (`unpacked`) than op `s` has outputs.
    fn check_output_count(&mut self, s: &OpSchema, op_name: &str, unpacked: usize, span: Span) -> R<()> {
        if unpacked <= s.max_output as usize {
            return Ok(());
        }
        let d = Diagnostic::error(
            codes::OUTPUT_COUNT,
            self.file(),
            format!(
                "`{op_name}` has at most {} output{}, but {} are unpacked",
                s.max_output,
                if s.max_output == 1 { "" } else { "s" },
                unpacked
            ),
        )
        .primary(span, "too many names on the left");
        Err(self.push(d))
    }

    /// Lowers an op call's bound arguments: its inputs (`None` where omitted), then its
    /// attributes (an attribute whose value is None is left out).
    fn lower_op_arguments(
        &mut self,
        op_name: &str,
        schema: Option<&OpSchema>,
        input_exprs: &[Option<&Expr>],
        attr_exprs: Vec<(Ident, &Expr, Option<AttrType>)>,
    ) -> R<(Vec<Option<String>>, Vec<Attr>)> {
        // Inputs are translated before attributes, in argument order, as onnxscript does.
        let mut inputs = Vec::with_capacity(input_exprs.len());
        for (i, e) in input_exprs.iter().enumerate() {
            inputs.push(match e {
                Some(e) => self.lower_op_input(schema, i, e)?,
                None => None,
            });
        }
        let mut attrs = Vec::with_capacity(attr_exprs.len());
        for (k, e, ty) in attr_exprs {
            if let Some(a) = self.lower_attr(op_name, &k, e, ty)? {
                attrs.push(a);
            }
        }
        Ok((inputs, attrs))
    }

    /// E0602 for each attribute of the call (`attrs`) that refers to an attribute parameter that
    /// may be None where `schema` requires it: at the keyword argument that gives it, else at the
    /// call (`span`).
    fn check_attributes_present(&mut self, schema: &OpSchema, attrs: &[Attr], args: &[Arg], span: Span) -> R<()> {
        for a in attrs {
            let at =
                args.iter().find(|x| x.keyword.as_ref().is_some_and(|k| k.name == a.name)).map_or(span, |x| x.span);
            self.check_required_attribute(schema, a, at)?;
        }
        Ok(())
    }

    /// `Split` makes as many outputs as `num_outputs` says, or as its constant `split` input (an
    /// attribute before opset 13) has entries: a call that unpacks another number builds a
    /// model that fails at load (E0408).
    fn check_split_outputs(
        &mut self,
        schema: &OpSchema,
        input_exprs: &[Option<&Expr>],
        attr_exprs: &[(Ident, &Expr, Option<AttrType>)],
        unpacked: usize,
        span: Span,
    ) -> R<()> {
        let attr = |name: &str| attr_exprs.iter().find(|(k, _, _)| k.name == name).map(|(_, e, _)| *e);
        let split_input =
            schema.inputs.iter().position(|f| f.name == "split").and_then(|i| input_exprs.get(i).copied().flatten());
        // Only values known at compile time count; a tensor `split` is checked by ONNX Runtime.
        let constant = |e: &Expr| eval_const(self.names, e).ok();
        let (count, why, at) = if let Some(e) = attr("num_outputs") {
            match constant(e).and_then(|v| v.as_i64()) {
                Some(n) => (n, format!("num_outputs={n}"), e.span),
                None => return Ok(()),
            }
        } else if let Some(e) = split_input.or_else(|| attr("split")).filter(|e| !matches!(e.kind, ExprKind::None)) {
            match self.split_entries(e) {
                Some(n) => (n as i64, format!("its `split` has {n} entr{}", if n == 1 { "y" } else { "ies" }), e.span),
                None => return Ok(()),
            }
        } else {
            return Ok(());
        };
        if count == unpacked as i64 {
            return Ok(());
        }
        let d = Diagnostic::error(
            codes::OUTPUT_COUNT,
            self.file(),
            format!(
                "`Split` produces {count} output{} ({why}), but {unpacked} {} unpacked",
                if count == 1 { "" } else { "s" },
                if unpacked == 1 { "is" } else { "are" }
            ),
        )
        .primary(span, format!("{unpacked} name{} on the left", if unpacked == 1 { "" } else { "s" }))
        .secondary(at, format!("{count} output{} here", if count == 1 { "" } else { "s" }))
        .help("unpack one name per output; the model would fail to load");
        Err(self.push(d))
    }

    /// How many entries a `split` argument known at compile time has: a constant list or 1-D
    /// tensor, or an ONNX `Constant` op of one (`op.Constant(value_ints=[1, 1, 2])`).
    fn split_entries(&self, e: &Expr) -> Option<usize> {
        let entries = |v: PyValue| match v {
            PyValue::Tensor(t) if t.dims.len() == 1 => usize::try_from(t.dims[0]).ok(),
            v => v.items().map(<[PyValue]>::len),
        };
        if let Ok(v) = eval_const(self.names, e) {
            return entries(v);
        }
        let ExprKind::Call { func, args } = &e.kind else { return None };
        let ExprKind::Attribute { value, attr } = &func.kind else { return None };
        let ExprKind::Name(opset) = &value.kind else { return None };
        let onnx = self.lookup(opset).is_none()
            && matches!(self.names.get(opset), Some(Global::Opset(o)) if o.domain.is_empty());
        let [arg] = args.as_slice() else { return None };
        let keyword = arg.keyword.as_ref()?.name.as_str();
        if !onnx
            || attr.name != "Constant"
            || !matches!(keyword, "value" | "value_ints" | "value_floats" | "value_strings")
        {
            return None;
        }
        entries(eval_const(self.names, &arg.value).ok()?)
    }

    /// Python's own rules for the arguments of a call (see [`argument_order_error`]).
    fn check_argument_order(&mut self, args: &[Arg]) -> R<()> {
        match argument_order_error(self.file(), args) {
            Some(d) => Err(self.push(d)),
            None => Ok(()),
        }
    }

    /// `mylib.f` where `mylib` is an imported `.onnxs` module: the id of its function `f`.
    /// `None` when the callee is not of that form (an op, a function named directly).
    fn module_function(&mut self, func: &Expr) -> R<Option<usize>> {
        let ExprKind::Attribute { value, attr } = &func.kind else { return Ok(None) };
        // The root of `a.b.f` must be a global, not a local variable.
        let mut root = value.as_ref();
        while let ExprKind::Attribute { value, .. } = &root.kind {
            root = value;
        }
        match &root.kind {
            ExprKind::Name(n) if self.lookup(n).is_none() => {}
            _ => return Ok(None),
        }
        let Some(Global::Module(key)) = resolve_dotted(self.names, value) else { return Ok(None) };
        let Some(ns) = self.names.env.namespace(&key) else { return Ok(None) };
        match ns.get(&attr.name) {
            Some(Global::Function(idx)) => Ok(Some(idx)),
            Some(Global::Poison(r)) => Err(r),
            Some(_) => Ok(None),
            None => {
                let mut d = Diagnostic::error(
                    codes::UNDEFINED_NAME,
                    self.file(),
                    format!("module `{}` has no `{}`", ns.display, attr.name),
                )
                .primary(attr.span, "not defined in that module");
                if let Some(s) = did_you_mean(&attr.name, ns.names.keys().map(String::as_str)) {
                    d = d
                        .help(format!("did you mean `{s}`?"))
                        .fix(format!("Replace with `{s}`"), vec![Edit::replace(attr.span, &s)]);
                }
                Err(self.push(d))
            }
        }
    }

    /// A call to a function of the compilation (function id `idx`): a node in the callee's
    /// domain, named as the callee is defined. As onnxscript does with the callee's signature,
    /// arguments bind to parameters by position, then by keyword; those that bind to attribute
    /// parameters become the node's attributes (typed as the parameter), the rest its inputs,
    /// in parameter order. An omitted optional input before a given one is `""` (onnxscript
    /// drops it and shifts the later inputs: not copied). A literal passed for an input typed by
    /// a TypeVar is `CastLike`d to another argument of that TypeVar.
    fn lower_function_call(
        &mut self,
        idx: usize,
        _name: &str,
        args: &[Arg],
        span: Span,
        outputs: Vec<String>,
    ) -> R<()> {
        self.check_argument_order(args)?;
        let Some(callee) = self.calls.callees.get(idx).cloned() else {
            let d = Diagnostic::error(codes::UNKNOWN_CALLEE, self.file(), "this function cannot be called")
                .primary(span, "not a function of the compilation");
            return Err(self.push(d));
        };
        if let Some(n) = callee.outputs {
            if n != outputs.len() {
                let used = if outputs.len() == 1 {
                    "it is used as one value".to_string()
                } else {
                    format!("{} are unpacked", outputs.len())
                };
                let d = Diagnostic::error(
                    codes::OUTPUT_COUNT,
                    self.file(),
                    format!("`{}` returns {n} output{}, but {used}", callee.name, if n == 1 { "" } else { "s" }),
                )
                .primary(span, format!("{n} output{}", if n == 1 { "" } else { "s" }))
                .help(format!("assign its outputs to {n} name{}", if n == 1 { "" } else { "s" }));
                return Err(self.push(d));
            }
        }
        // `sema::calls` reported a mismatch when it checked the call; a call it did not check
        // (the callee's name means another function where the call is) is reported here.
        let bound = match calls::bind_arguments(&callee, self.file(), span, args) {
            Ok(bound) => bound,
            Err(d) => return Err(self.calls.reported_mismatch(self.file(), span).unwrap_or_else(|| self.push(*d))),
        };
        let mut inputs: Vec<Option<String>> = Vec::new();
        let mut type_vars: Vec<Option<String>> = Vec::new();
        let mut attrs = Vec::new();
        let mut failed = Ok(());
        for (p, a) in callee.params.iter().zip(&bound) {
            match (p.attr, a) {
                (Some(ty), Some(a)) => {
                    let key =
                        Ident { name: p.name.clone(), span: a.keyword.as_ref().map(|k| k.span).unwrap_or(a.span) };
                    match self.lower_attr(&callee.name, &key, &a.value, Some(ty)) {
                        Ok(Some(at)) => attrs.push(at),
                        Ok(None) => {}
                        Err(r) => failed = Err(r),
                    }
                }
                (Some(_), None) => {}
                (None, a) => {
                    let value = match a {
                        Some(a) => match self.lower_opt_expr(&a.value) {
                            Ok(Some(v)) if !p.optional => {
                                let place = || format!("`{}` requires its input `{}`", callee.name, p.name);
                                match self.require_present(&v, a.value.span, place) {
                                    Ok(()) => Some(v),
                                    Err(r) => {
                                        failed = Err(r);
                                        None
                                    }
                                }
                            }
                            Ok(v) => v,
                            Err(r) => {
                                failed = Err(r);
                                None
                            }
                        },
                        None => None,
                    };
                    inputs.push(value);
                    type_vars.push(p.type_var.clone());
                }
            }
        }
        failed?;
        // Trailing omitted inputs are left out.
        while inputs.last().is_some_and(|i| i.is_none()) {
            inputs.pop();
            type_vars.pop();
        }
        // onnxscript's autocast: the last non-literal argument of each TypeVar is the target.
        let mut targets: HashMap<&str, String> = HashMap::new();
        for (i, tv) in inputs.iter().zip(&type_vars) {
            if let (Some(i), Some(tv)) = (i, tv) {
                if !self.values.is_castable(i) {
                    targets.insert(tv.as_str(), i.clone());
                }
            }
        }
        let mut cast_inputs = Vec::with_capacity(inputs.len());
        for (i, tv) in inputs.iter().zip(&type_vars) {
            match (i, tv.as_deref().and_then(|t| targets.get(t))) {
                (Some(i), Some(like)) if self.values.is_castable(i) => {
                    let cast = self.fresh(&[i.as_str(), "_cast"].concat());
                    self.emit_default(
                        "CastLike",
                        vec![Some(i.clone()), Some(like.clone())],
                        vec![cast.clone()],
                        vec![],
                        span,
                    )?;
                    cast_inputs.push(Some(cast));
                }
                (i, _) => cast_inputs.push(i.clone()),
            }
        }
        self.emit(
            &Opset { domain: callee.domain.clone(), version: callee.version },
            callee.name,
            cast_inputs,
            outputs,
            attrs,
            span,
        )
    }

    /// An attribute argument: a reference to an attribute parameter, or a script-time constant.
    fn lower_attr(&mut self, op: &str, key: &Ident, e: &Expr, expected: Option<AttrType>) -> R<Option<Attr>> {
        if let ExprKind::Name(n) = &e.kind {
            if let Some(b) = self.lookup(n).cloned() {
                self.note(n, e.span, &b);
            }
            match self.lookup(n).cloned() {
                Some(Binding::Attr { name, ty, .. }) => {
                    if let Some(exp) = expected {
                        if exp != ty {
                            let d = Diagnostic::error(
                                codes::ATTRIBUTE_TYPE,
                                self.file(),
                                format!(
                                    "attribute `{}` of `{op}` is {}, but `{n}` is {}",
                                    key.name,
                                    exp.name(),
                                    ty.name()
                                ),
                            )
                            .primary(e.span, format!("{} attribute", with_article(ty.name())))
                            .help(format!("annotate `{n}` with a type that ONNX carries as `{}`", exp.name()));
                            return Err(self.push(d));
                        }
                    }
                    return Ok(Some(Attr { name: key.name.clone(), value: AttrValue::Ref { name, ty } }));
                }
                Some(Binding::Poison(r)) => return Err(r),
                Some(Binding::Graph(g)) => return self.graph_attr(op, key, n, *g, e.span, expected).map(Some),
                Some(Binding::Value(_)) => {
                    let d = Diagnostic::error(codes::ATTRIBUTE_TYPE, self.file(), format!("attribute `{}` needs a script-time value, but `{n}` is a tensor", key.name))
                        .primary(e.span, "a tensor computed at run time")
                        .help("attributes are constants or attribute parameters of the function (annotated `float`, `int`, ...)");
                    return Err(self.push(d));
                }
                None => {}
            }
        }
        let value = match eval_const(self.names, e).map_err(|error| self.report_const_error(error)) {
            Ok(v) => v,
            Err(Ok(reported)) => return Err(reported),
            Err(Err(span)) => {
                let d = Diagnostic::error(
                    codes::ATTRIBUTE_TYPE,
                    self.file(),
                    format!("attribute `{}` must be a constant or an attribute parameter", key.name),
                )
                .primary(span, "not known when the function is compiled")
                .help("pass a literal, a module constant, `FLOAT.dtype`, or an attribute parameter of the function");
                return Err(self.push(d));
            }
        };
        if value == PyValue::None {
            return Ok(None);
        }
        let Some(ty) = expected.or_else(|| value.inferred_attr_type()) else {
            let d = Diagnostic::error(
                codes::ATTRIBUTE_TYPE,
                self.file(),
                format!("cannot tell the type of attribute `{}`", key.name),
            )
            .primary(e.span, "empty or mixed list")
            .help("give the list at least one element, all of one type");
            return Err(self.push(d));
        };
        match attr_value(&value, ty) {
            Ok(v) => Ok(Some(Attr { name: key.name.clone(), value: v })),
            Err(why) => {
                let mut d = Diagnostic::error(
                    codes::ATTRIBUTE_TYPE,
                    self.file(),
                    format!(
                        "attribute `{}` of `{op}` is {}, but the value is {}",
                        key.name,
                        ty.name(),
                        with_article(value.type_name())
                    ),
                )
                .primary(e.span, format!("expected {}", ty.name()));
                if let Some(why) = why {
                    d = d.note(why);
                }
                Err(self.push(d))
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Statements
}

/// The ONNX operator that replaces the deprecated `op_name`, as ONNX's documentation names it.
fn deprecated_replacement(op_name: &str) -> Option<&'static str> {
    Some(match op_name {
        "Upsample" => "Resize",
        "Scatter" => "ScatterElements",
        // Version 21 takes a scale and a bias per channel, where 18 took them per group.
        "GroupNormalization" => "GroupNormalization",
        _ => return None,
    })
}

/// What the callee of a call names.
enum Callee<'e> {
    /// Op `name` (named at `span`) of `opset`.
    Op { opset: Opset, name: &'e str, span: Span },
    /// The function of the compilation of id `idx`, called by `name`.
    Function { idx: usize, name: &'e str },
}
