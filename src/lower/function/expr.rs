//! Expressions: names, literals, Python operators (`+`, `==`, `not`...) and the `CastLike` of
//! literals that meet a tensor (autocast), as onnxscript lowers them.

use super::*;

impl<'a, 'm> Lowerer<'a, 'm> {
    pub(super) fn is_literal(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::FString(_) => true,
            ExprKind::List(items) => items.iter().all(Self::is_literal),
            ExprKind::UnaryOp { op: UnaryOp::Neg | UnaryOp::Pos, operand } => {
                matches!(operand.kind, ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_))
            }
            _ => false,
        }
    }

    pub(super) fn lower_opt_expr(&mut self, e: &Expr) -> R<Option<String>> {
        if matches!(e.kind, ExprKind::None) {
            return Ok(None);
        }
        self.lower_expr(e, None).map(Some)
    }

    pub(super) fn lower_expr(&mut self, e: &Expr, target: Option<&str>) -> R<String> {
        match &e.kind {
            _ if Self::is_literal(e) => {
                let value = self.const_value(e)?;
                self.emit_const(&value, target, e.span)
            }
            ExprKind::Name(n) => self.lower_name(n, e.span, target),
            ExprKind::Call { func, args } => {
                let out = target.unwrap_or("tmp");
                let name = self.fresh(out);
                self.lower_call(func, args, e.span, vec![name.clone()])?;
                Ok(name)
            }
            ExprKind::BinOp { op, left, right } => self.lower_binop(*op, left, right, e.span, target),
            ExprKind::UnaryOp { op, operand } => self.lower_unary(*op, operand, e.span, target),
            ExprKind::Compare { left, comparisons } => match self.lower_none_test(e, target) {
                Some(tested) => tested,
                None => self.lower_compare(left, comparisons, e.span, target),
            },
            ExprKind::Attribute { value, attr } if attr.name == "dtype" => match resolve_dotted(self.names, value) {
                Some(Global::TensorType(t)) => self.emit_const(&PyValue::Int(t.code() as i128), target, e.span),
                _ => Err(self.not_a_value(e)),
            },
            ExprKind::Attribute { .. } => Err(self.not_a_value(e)),
            ExprKind::None => Err(self.push(
                Diagnostic::error(codes::UNSUPPORTED_EXPR, self.file(), "`None` is not a tensor")
                    .primary(e.span, "`None` here")
                    .help("`None` may only stand for an omitted optional input of an op call"),
            )),
            ExprKind::List(_) => Err(self.push(
                Diagnostic::error(codes::UNSUPPORTED_EXPR, self.file(), "a list of tensors is not a value")
                    .primary(e.span, "list with non-constant items")
                    .help("build the tensor with `op.Concat` or the sequence with `op.SequenceConstruct`"),
            )),
            ExprKind::Subscript { value, index } => self.lower_subscript(e, value, index, target),
            // Conditions on what each call decides (None tests, attributes) are scalars.
            ExprKind::BoolOp { op, values } if self.decided_per_call(e) => {
                self.lower_bool_op(*op, values, e.span, target)
            }
            ExprKind::BoolOp { op, .. } => {
                let (word, sym) = if *op == BoolOp::And { ("and", "&") } else { ("or", "|") };
                Err(self.unsupported(
                    e.span,
                    &format!("`{word}` on tensors is"),
                    &format!(
                        "combine boolean tensors with `{sym}` (ONNX `{}`); `{word}` combines only conditions on attributes and `is None` tests",
                        if sym == "&" { "And" } else { "Or" }
                    ),
                ))
            }
            ExprKind::IfExp { .. } => Err(self.unsupported(
                e.span,
                "conditional expressions (`a if c else b`) are",
                "use an `if` statement, or `op.Where(c, a, b)`",
            )),
            ExprKind::Lambda { .. } | ExprKind::Comprehension { .. } => Err(self.python_only(e)),
            ExprKind::Dict(_) => Err(self.unsupported(e.span, "dictionaries are", "ONNX functions compute on tensors")),
            ExprKind::Set(_) => Err(self.unsupported(e.span, "sets are", "ONNX functions compute on tensors")),
            ExprKind::Tuple(_) => Err(self.unsupported(
                e.span,
                "tuples as values are",
                "return several values with `return a, b`, or unpack them with `a, b = ...`",
            )),
            ExprKind::Starred(_) => {
                Err(self.unsupported(e.span, "starred expressions are", "pass each input explicitly"))
            }
            ExprKind::Slice { .. }
            | ExprKind::Ellipsis
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::FString(_) => Err(self.unsupported(e.span, "this expression is", "")),
        }
    }

    /// The first lambda or comprehension in `e`, `e` included, in source order.
    pub(super) fn first_python_only(e: &Expr) -> Option<&Expr> {
        if matches!(e.kind, ExprKind::Lambda { .. } | ExprKind::Comprehension { .. }) {
            return Some(e);
        }
        let mut found = None;
        e.for_each_child(&mut |c| {
            if found.is_none() {
                found = Self::first_python_only(c);
            }
        });
        found
    }

    /// E0302 for a lambda or a comprehension: Python that only trace-only translations run.
    pub(super) fn python_only(&mut self, e: &Expr) -> Reported {
        let (what, instead) = match &e.kind {
            ExprKind::Lambda { .. } => (
                "lambda expressions are",
                "define a nested function with `def` (`@graph()` for an op's graph attribute)",
            ),
            ExprKind::Comprehension { kind, .. } => (
                match kind {
                    CompKind::List => "list comprehensions are",
                    CompKind::Set => "set comprehensions are",
                    CompKind::Dict => "dict comprehensions are",
                    CompKind::Generator => "generator expressions are",
                },
                "compute the values with ONNX ops, or in a `for` loop over `range(n)`",
            ),
            _ => ("this expression is", "write it with ONNX ops"),
        };
        self.unsupported(e.span, what, &format!("{instead}; {TRACE_ONLY}"))
    }

    /// The value of a constant expression; a failure is reported (E0311 when part of it is not
    /// constant).
    pub(super) fn const_value(&mut self, e: &Expr) -> R<PyValue> {
        eval_const(self.names, e).map_err(|error| match self.report_const_error(error) {
            Ok(reported) => reported,
            Err(s) => self.err(codes::BAD_CONSTANT, s, "invalid constant", "cannot evaluate"),
        })
    }

    /// E0107 for `e`, which is no tensor, used as one; the help says what to write instead.
    pub(super) fn not_a_value(&mut self, e: &Expr) -> Reported {
        let help = self.value_help(e);
        self.not_a_value_because(e, help)
    }

    /// E0107 for `e`, with `help`.
    pub(super) fn not_a_value_because(&mut self, e: &Expr, help: String) -> Reported {
        let d = Diagnostic::error(codes::NOT_A_VALUE, self.file(), "this is not a tensor value")
            .primary(e.span, "cannot be used as a tensor")
            .help(help);
        self.push(d)
    }

    /// What to write instead of `e` where a tensor is wanted: a member of a tensor (`x.shape`,
    /// `x.dtype`) is an op, or an attribute parameter in a scripted function, where the element
    /// type is not known; a member of a module (`math.pi`) a module constant.
    fn value_help(&self, e: &Expr) -> String {
        let ExprKind::Attribute { value, attr } = &e.kind else {
            return "only parameters, variables, constants and what ops compute from them are values".to_string();
        };
        let local = match &value.kind {
            ExprKind::Name(n) => self.lookup(n).map(|_| n.as_str()),
            _ => Some("x"),
        };
        let Some(x) = local else {
            let text = dotted(e).unwrap_or_else(|| "...".to_string());
            return format!("a tensor operand is a literal or a name, as in onnxscript: compute the value in a module constant (`C = {text}` at the top of the file) and use `C`");
        };
        match attr.name.as_str() {
            "dtype" => format!(
                "a scripted function does not know the element type of `{x}` when it is compiled: take the type as an attribute parameter (`dtype: int`, compared with `FLOAT16.dtype`), or make a value of `{x}`'s type with `op.CastLike(value, {x})`"
            ),
            "shape" => format!("write `op.Shape({x})`"),
            "T" => format!("write `op.Transpose({x})`"),
            "ndim" => format!("write `op.Size(op.Shape({x}))`"),
            "size" => format!("write `op.Size({x})`"),
            other => format!("a tensor has no Python members in ONNX Script: compute `{x}.{other}` with ONNX ops"),
        }
    }

    pub(super) fn lower_name(&mut self, n: &str, span: Span, target: Option<&str>) -> R<String> {
        match self.lookup(n).cloned() {
            Some(b) => {
                self.note(n, span, &b);
                self.binding_value(n, b, target.unwrap_or(n), span)
            }
            // A deleted parameter is a local of the function: no global stands in for it.
            None if self.deleted.iter().any(|(name, _)| name == n) => Err(self.undefined(n, span)),
            None => match self.names.get(n).cloned() {
                Some(Global::Const(v)) => self.emit_const(&v, Some(target.unwrap_or(n)), span),
                Some(Global::Poison(r)) => Err(r),
                Some(Global::Deferred(d)) => {
                    let used = deferred_use(&d, self.file(), span);
                    Err(self.reports.report_deferred_use(self.diags, used))
                }
                Some(other) => {
                    let what = describe_global(&other);
                    let d = Diagnostic::error(
                        codes::NOT_A_VALUE,
                        self.file(),
                        format!("`{n}` is {what}, not a tensor value"),
                    )
                    .primary(span, "used as a value here")
                    .help(global_value_help(n, &other));
                    Err(self.push(d))
                }
                None => Err(self.undefined(n, span)),
            },
        }
    }

    /// The tensor that a variable's binding stands for; an attribute parameter becomes a
    /// `Constant` named after `hint`.
    pub(super) fn binding_value(&mut self, var: &str, b: Binding, hint: &str, span: Span) -> R<String> {
        match b {
            Binding::Value(v) => Ok(v),
            Binding::Poison(r) => Err(r),
            Binding::Attr { name, ty, as_bool } => self.attr_as_tensor(&name, ty, as_bool, hint, span),
            Binding::Graph(_) => {
                let d = Diagnostic::error(
                    codes::NOT_A_VALUE,
                    self.file(),
                    format!("`{var}` is a nested function, not a tensor value"),
                )
                .primary(span, "used as a value here")
                .help(format!(
                    "a `@graph()` function can only be passed as a graph attribute, e.g. `op.Scan(..., body={var})`"
                ));
                Err(self.push(d))
            }
        }
    }

    pub(super) fn undefined(&mut self, n: &str, span: Span) -> Reported {
        let candidates = self.scopes.iter().flat_map(|s| s.vars.keys()).chain(self.names.env.globals.keys());
        let mut d = Diagnostic::error(codes::UNDEFINED_NAME, self.file(), format!("undefined name `{n}`"))
            .primary(span, "not defined");
        if let Some(&(_, at)) = self.deleted.iter().find(|(name, _)| name == n) {
            d = d
                .secondary(at, "deleted here")
                .help(format!("`del {n}` says the parameter is left unread: remove the `del` to read it"));
        } else if self.assigned_anywhere.contains(n) {
            d = d.help(format!("`{n}` is assigned only later, or only on some paths to this use"));
        } else if let Some(s) = did_you_mean(n, candidates.map(String::as_str)) {
            d = d
                .help(format!("did you mean `{s}`?"))
                .fix(format!("Replace with `{s}`"), vec![Edit::replace(span, &s)]);
        }
        self.push(d)
    }

    fn lower_binop(&mut self, op: BinOp, left: &Expr, right: &Expr, span: Span, target: Option<&str>) -> R<String> {
        let op_type = match op {
            BinOp::Add => "Add",
            BinOp::Sub => "Sub",
            BinOp::Mult => "Mul",
            BinOp::Div => "Div",
            BinOp::Mod => "Mod",
            BinOp::Pow => "Pow",
            BinOp::MatMult => "MatMul",
            BinOp::BitAnd => "And",
            BinOp::BitOr => "Or",
            BinOp::FloorDiv | BinOp::BitXor | BinOp::LShift | BinOp::RShift => {
                let help = match op {
                    BinOp::FloorDiv => "write `op.Floor(a / b)` for floats, or `op.Div` for integers",
                    BinOp::BitXor => "write `op.Xor` for booleans or `op.BitwiseXor` for integers",
                    _ => "write `op.BitShift` with the `direction` attribute",
                };
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_OPERATOR,
                    self.file(),
                    format!("the operator `{}` is not part of the ONNX Script language", op.symbol()),
                )
                .primary(span, "no ONNX mapping")
                .help(help);
                return Err(self.push(d));
            }
        };
        let mut attrs = vec![];
        if op == BinOp::Mod && Self::is_literal(right) {
            if let Ok(PyValue::Float(_)) = eval_const(self.names, right) {
                attrs.push(Attr { name: "fmod".into(), value: AttrValue::Int(1) });
            }
        }
        let l = self.lower_expr(left, None)?;
        let r = self.lower_expr(right, None)?;
        let args = self.autocast_default(op_type, vec![Some(l), Some(r)], &[left.span, right.span], span)?;
        let name = self.fresh(target.unwrap_or("tmp"));
        self.emit_default(op_type, args, vec![name.clone()], attrs, span)?;
        Ok(name)
    }

    fn lower_unary(&mut self, op: UnaryOp, operand: &Expr, span: Span, target: Option<&str>) -> R<String> {
        let op_type = match op {
            UnaryOp::Neg => "Neg",
            UnaryOp::Not => "Not",
            UnaryOp::Pos | UnaryOp::Invert => {
                let sym = if op == UnaryOp::Pos { "+" } else { "~" };
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_OPERATOR,
                    self.file(),
                    format!("the unary operator `{sym}` is not part of the ONNX Script language"),
                )
                .primary(span, "no ONNX mapping")
                .help(if op == UnaryOp::Pos {
                    "drop the `+`"
                } else {
                    "write `op.Not` for booleans or `op.BitwiseNot` for integers"
                });
                return Err(self.push(d));
            }
        };
        let x = self.lower_expr(operand, None)?;
        let checked = match self.default_schema(op_type) {
            Some(schema) => Some(self.check_input_types(schema, &[Some(x.clone())], &[operand.span], 1)?),
            None => None,
        };
        let name = self.fresh(target.unwrap_or("tmp"));
        self.checked_outputs = checked;
        self.emit_default(op_type, vec![Some(x)], vec![name.clone()], vec![], span)?;
        Ok(name)
    }

    fn lower_compare(
        &mut self,
        left: &Expr,
        comparisons: &[(CmpOp, Expr)],
        span: Span,
        target: Option<&str>,
    ) -> R<String> {
        if comparisons.len() != 1 {
            let d = Diagnostic::error(
                codes::UNSUPPORTED_EXPR,
                self.file(),
                "chained comparisons are not part of the ONNX Script language",
            )
            .primary(span, "more than one comparison")
            .help("compare twice and combine with `&`: `(a < b) & (b < c)`");
            return Err(self.push(d));
        }
        let (op, right) = (&comparisons[0].0, &comparisons[0].1);
        if matches!(op, CmpOp::Eq | CmpOp::NotEq) {
            if let Some(compared) = self.lower_string_attribute_compare(left, right, *op == CmpOp::NotEq, span, target)
            {
                return compared;
            }
        }
        let op_type = match op {
            CmpOp::Eq | CmpOp::NotEq => "Equal",
            CmpOp::Lt => "Less",
            CmpOp::LtE => "LessOrEqual",
            CmpOp::Gt => "Greater",
            CmpOp::GtE => "GreaterOrEqual",
            CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn => {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_OPERATOR,
                    self.file(),
                    format!("the operator `{}` is not part of the ONNX Script language", op.symbol()),
                )
                .primary(span, "no ONNX mapping")
                .help("compare tensors with `==`, `!=`, `<`, `<=`, `>` or `>=`; test optional values with `x is None`");
                return Err(self.push(d));
            }
        };
        let l = self.lower_expr(left, None)?;
        let r = self.lower_expr(right, None)?;
        let args = self.autocast_default(op_type, vec![Some(l), Some(r)], &[left.span, right.span], span)?;
        if *op == CmpOp::NotEq {
            let tmp = self.fresh("tmp");
            self.emit_default("Equal", args, vec![tmp.clone()], vec![], span)?;
            let name = self.fresh(target.unwrap_or("tmp"));
            self.emit_default("Not", vec![Some(tmp)], vec![name.clone()], vec![], span)?;
            return Ok(name);
        }
        let name = self.fresh(target.unwrap_or("tmp"));
        self.emit_default(op_type, args, vec![name.clone()], vec![], span)?;
        Ok(name)
    }

    /// The operands of a Python operator, autocast and type-checked (at `arg_spans`) against
    /// the default opset's `op_type`; what the check found of its one output is kept for the
    /// emission of that node, which must come next.
    pub(super) fn autocast_default(
        &mut self,
        op_type: &str,
        args: Vec<Option<String>>,
        arg_spans: &[Span],
        span: Span,
    ) -> R<Vec<Option<String>>> {
        self.default_opset(span, op_type)?;
        let schema = self.default_schema(op_type);
        let args = self.autocast(schema, args, span)?;
        if let Some(schema) = schema {
            self.checked_outputs = Some(self.check_input_types(schema, &args, arg_spans, 1)?);
        }
        Ok(args)
    }

    /// onnxscript's autocast: a literal (or promoted attribute) operand that shares a type
    /// variable with a tensor operand is wrapped in `CastLike(literal, tensor)`.
    pub(super) fn autocast(
        &mut self,
        schema: Option<&OpSchema>,
        args: Vec<Option<String>>,
        span: Span,
    ) -> R<Vec<Option<String>>> {
        let Some(schema) = schema else { return Ok(args) };
        let Some(last) = schema.inputs.last() else { return Ok(args) };
        // Most calls have no literal operand: nothing to cast.
        if !args.iter().flatten().any(|a| self.values.is_castable(a)) {
            return Ok(args);
        }
        // The type variable operand `i` binds, where it is a plain one.
        let typevar = |i: usize| -> Option<&str> {
            let formal = match schema.inputs.get(i) {
                Some(f) => f,
                None if last.option == FormalOption::Variadic && last.is_homogeneous => last,
                None => return None,
            };
            let mixed = formal.option == FormalOption::Variadic && !formal.is_homogeneous;
            let tv = formal.type_str.as_str();
            // A variadic input of mixed types, or a concrete type, binds no variable.
            if (mixed && i >= schema.inputs.len() - 1) || tv.contains('(') {
                None
            } else {
                Some(tv)
            }
        };
        // The tensor operand that gives each type variable its type: the last one not castable.
        // A schema has a few type variables, so a list, in one pass over the operands.
        let mut bound: Vec<(&str, usize)> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let (Some(tv), Some(a)) = (typevar(i), a) else { continue };
            if self.values.is_castable(a) {
                continue;
            }
            match bound.iter_mut().find(|(t, _)| *t == tv) {
                Some(b) => b.1 = i,
                None => bound.push((tv, i)),
            }
        }
        // Each castable operand is replaced by its cast, in place: the operands that give the
        // types are not castable, so none of them is replaced.
        let mut args = args;
        for i in 0..args.len() {
            let Some(tv) = typevar(i) else { continue };
            let Some(&(_, like)) = bound.iter().find(|(t, _)| *t == tv) else { continue };
            if !args[i].as_ref().is_some_and(|a| self.values.is_castable(a)) {
                continue;
            }
            let Some(like) = args[like].clone() else { continue };
            let Some(a) = args[i].take() else { continue };
            let cast = self.fresh(&[a.as_str(), "_cast"].concat());
            let presence = self.presence(&a);
            self.emit_default("CastLike", vec![Some(a), Some(like)], vec![cast.clone()], vec![], span)?;
            self.derive_presence(&cast, presence);
            args[i] = Some(cast);
        }
        Ok(args)
    }

    // -----------------------------------------------------------------------------------------
    // Calls
}

/// What to write instead of the global `n` (`g`, which is not a value) where a tensor is wanted.
fn global_value_help(n: &str, g: &Global) -> String {
    match g {
        Global::TensorType(_) => format!(
            "a tensor type is no value: its element type is `{n}.dtype` (`op.Cast(x, to={n}.dtype)`); to make a value of another's type, `op.CastLike(value, other)`"
        ),
        Global::Function(_) => format!("call it: `{n}(...)`"),
        Global::Opset(_) => format!("an opset names operators: call one, e.g. `{n}.Identity(x)`"),
        Global::Module(_) | Global::Lib(_) => format!(
            "a module is no value: compute what the function needs of it in a module constant (`C = {n}.member` at the top of the file) and use `C`"
        ),
        Global::TypeVar { .. } | Global::TypeUnion(_) | Global::Typing(_) => {
            "types annotate parameters and outputs; they are not values".to_string()
        }
        _ => "only parameters, variables, constants and what ops compute from them are values".to_string(),
    }
}

/// `a.b.c` as written, if `e` is a dotted name.
fn dotted(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Name(n) => Some(n.clone()),
        ExprKind::Attribute { value, attr } => Some(format!("{}.{}", dotted(value)?, attr.name)),
        _ => None,
    }
}
