//! `None`: optional inputs and attributes, the tests `x is None` / `x is not None`, and where a
//! value that may be None may go.
//!
//! A translation's `Tensor?` argument arrives as a tensor or as None (an omitted input, `""`),
//! and a `Scalar?` or `int[]?` one as a value or as None (an attribute the call does not give).
//! Both are decided per call, so a test on them is lowered to a condition that `onnxsc link`
//! and the Python package fold for each call (see docs/exporter.md):
//!
//! - `x is not None` on an optional input is `OptionalHasElement(x)`: exact in ONNX (opset 18
//!   and later), false for an omitted input;
//! - on an attribute without a default it is `OptionalHasElement(Constant <value_T = @x>)`: true
//!   whenever the call gives `x`. A call that omits `x` has a `Constant` without a value, which
//!   ONNX Runtime refuses; the linker reads it as "no value", folds the test to false and drops
//!   the `Constant`;
//! - on a parameter that cannot be None (a required input, an attribute with a default) it is
//!   decided at compile time: only the branch taken is lowered.
//!
//! Each value has a [`Presence`]: optional parameters may be absent, and an `if` on a None test
//! tells its branches which. A value that may be absent can only go where ONNX allows an omitted
//! value (an optional input of an op) or pass through a branch that the call decides; anything
//! else is E0602. Comparing a string attribute with a string (`approximate == "tanh"`) before
//! opset 19, whose `Equal` takes no strings, is lowered to `ai.onnx.ml` `CategoryMapper`, which
//! the linker folds too.

use super::*;

/// Whether a value is there at a point of the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Presence {
    Present,
    /// Known to be None here (the branch of an `if x is None:` that runs when it is).
    Absent,
    /// An optional input or attribute, or a value computed from one, not yet tested.
    Maybe,
}

impl Presence {
    fn merge(self, other: Presence) -> Presence {
        if self == other {
            self
        } else {
            Presence::Maybe
        }
    }
}

/// `x is None` (true) or `x is not None` (false), with `x`.
fn none_test(e: &Expr) -> Option<(&Expr, bool)> {
    let ExprKind::Compare { left, comparisons } = &e.kind else { return None };
    let [(op @ (CmpOp::Is | CmpOp::IsNot), right)] = comparisons.as_slice() else { return None };
    let operand = match (&left.kind, &right.kind) {
        (_, ExprKind::None) => left.as_ref(),
        (ExprKind::None, _) => right,
        _ => return None,
    };
    Some((operand, *op == CmpOp::Is))
}

/// The fact key of an attribute (values are keyed by their own names).
fn attr_key(name: &str) -> String {
    format!("@{name}")
}

impl<'a, 'm> Lowerer<'a, 'm> {
    /// A signature's optional input: absent when the caller omits it.
    pub(super) fn declare_optional_input(&mut self, name: &str) {
        self.presence.insert(name.to_string(), Presence::Maybe);
    }

    /// A signature's attribute that has no default and may be None.
    pub(super) fn declare_optional_attribute(&mut self, name: &str) {
        self.optional_attrs.insert(name.to_string());
    }

    fn fact(&self, key: &str) -> Option<Presence> {
        self.scopes.iter().rev().find_map(|s| s.facts.get(key).copied())
    }

    pub(super) fn presence(&self, value: &str) -> Presence {
        self.fact(value).or_else(|| self.presence.get(value).copied()).unwrap_or(Presence::Present)
    }

    fn attr_presence(&self, attr: &str) -> Presence {
        // The key is made only when some `if` around says something: most code has no facts.
        let known = self.scopes.iter().any(|s| !s.facts.is_empty());
        match known.then(|| self.fact(&attr_key(attr))).flatten() {
            Some(p) => p,
            None if self.optional_attrs.contains(attr) => Presence::Maybe,
            None => Presence::Present,
        }
    }

    /// A value computed from `source` alone (a copy, a cast, an attribute made a tensor) is there
    /// exactly when `source` is.
    pub(super) fn derive_presence(&mut self, value: &str, source: Presence) {
        if source != Presence::Present {
            self.presence.insert(value.to_string(), source);
        }
    }

    /// The tensor an attribute parameter becomes is there when the attribute is.
    pub(super) fn note_attribute_tensor(&mut self, value: &str, attr: &str) {
        let p = self.attr_presence(attr);
        self.derive_presence(value, p);
    }

    /// The fact key of the variable `n` names: its value, or its attribute.
    fn key_of(&self, n: &str) -> Option<String> {
        match self.lookup(n)? {
            Binding::Value(v) => Some(v.clone()),
            Binding::Attr { name, .. } => Some(attr_key(name)),
            _ => None,
        }
    }

    /// The outcome of a None test known when the function is compiled: a parameter, never
    /// reassigned, that cannot be None (a required input, an attribute with a default).
    pub(super) fn static_none_test(&self, e: &Expr) -> Option<bool> {
        if let ExprKind::UnaryOp { op: UnaryOp::Not, operand } = &e.kind {
            return self.static_none_test(operand).map(|b| !b);
        }
        let (operand, is_none) = none_test(e)?;
        let ExprKind::Name(n) = &operand.kind else { return None };
        if self.assigned_anywhere.contains(n.as_str()) {
            return None;
        }
        let never_none = match self.lookup(n)? {
            Binding::Value(v) => !self.presence.contains_key(v),
            Binding::Attr { name, .. } => !self.optional_attrs.contains(name),
            _ => return None,
        };
        never_none.then_some(!is_none)
    }

    /// Lowers `x is None` (`is_none`) or `x is not None` to a BOOL scalar, if `e` is such a test.
    pub(super) fn lower_none_test(&mut self, e: &Expr, target: Option<&str>) -> Option<R<String>> {
        let (operand, is_none) = none_test(e)?;
        Some(self.none_test_value(operand, is_none, e.span, target))
    }

    fn none_test_value(&mut self, operand: &Expr, is_none: bool, span: Span, target: Option<&str>) -> R<String> {
        let ExprKind::Name(n) = &operand.kind else {
            let d = Diagnostic::error(
                codes::UNSUPPORTED_EXPR,
                self.file(),
                "only a parameter or a variable can be tested for None",
            )
            .primary(operand.span, "not a name")
            .help("`x is None` tests whether the optional input or attribute `x` was given for this call");
            return Err(self.push(d));
        };
        let tested = match self.lookup(n).cloned() {
            Some(Binding::Value(v)) => match self.presence(&v) {
                Presence::Present => None,
                Presence::Absent => Some(Err(true)),
                Presence::Maybe => Some(Ok(v)),
            },
            Some(Binding::Attr { name, ty, .. }) => match self.attr_presence(&name) {
                Presence::Present => None,
                Presence::Absent => Some(Err(true)),
                Presence::Maybe => Some(Ok(self.attribute_constant(&name, ty, n, operand.span)?)),
            },
            Some(Binding::Poison(r)) => return Err(r),
            Some(Binding::Graph(_)) => return Err(self.not_testable(operand, n)),
            None => match self.names.get(n) {
                Some(Global::Const(v)) => Some(Err(*v == PyValue::None)),
                Some(Global::Poison(r)) => return Err(*r),
                Some(_) => return Err(self.not_testable(operand, n)),
                None => return Err(self.undefined(n, operand.span)),
            },
        };
        let hint = target.unwrap_or("cond");
        let has = match tested {
            // Known here: a constant, which the `if` folds at once.
            None => return self.emit_const(&PyValue::Bool(!is_none), Some(hint), span),
            Some(Err(none)) => return self.emit_const(&PyValue::Bool(none == is_none), Some(hint), span),
            Some(Ok(value)) => value,
        };
        let opset = self.default_opset(span, "OptionalHasElement")?;
        if opset.domain.is_empty() && opset.version < 18 {
            let d = Diagnostic::error(
                codes::NONE_TEST_OPSET,
                self.file(),
                format!("testing for None needs opset 18, but the function uses opset {}", opset.version),
            )
            .primary(span, "lowered to `OptionalHasElement`")
            .help("import `opset18` (`from onnxscript import opset18 as op`): its `OptionalHasElement` takes tensors and omitted inputs");
            return Err(self.push(d));
        }
        let out = if is_none { self.fresh(&format!("{n}_given")) } else { self.fresh(hint) };
        self.emit_default("OptionalHasElement", vec![Some(has)], vec![out.clone()], vec![], span)?;
        if !is_none {
            return Ok(out);
        }
        let negated = self.fresh(hint);
        self.emit_default("Not", vec![Some(out)], vec![negated.clone()], vec![], span)?;
        Ok(negated)
    }

    /// E0107 for `n is None` where `n` (`operand`) is a nested function or a global that is no
    /// value: known at compile time, never None.
    fn not_testable(&mut self, operand: &Expr, n: &str) -> Reported {
        let help = format!(
            "`x is None` tests whether the optional input or attribute `x` was given for this call; `{n}` is never None: drop the test"
        );
        self.not_a_value_because(operand, help)
    }

    /// A test of whether a value is there: `x is None` / `x is not None`, or the run-time guard
    /// real code writes, `op.OptionalHasElement(x)` on an ONNX opset (which is what
    /// `x is not None` lowers to). The operand and whether the test is true when `x` is None.
    fn presence_test<'e>(&self, e: &'e Expr) -> Option<(&'e Expr, bool)> {
        if let Some(test) = none_test(e) {
            return Some(test);
        }
        let ExprKind::Call { func, args } = &e.kind else { return None };
        let ExprKind::Attribute { value, attr } = &func.kind else { return None };
        let [arg] = args.as_slice() else { return None };
        let ExprKind::Name(opset) = &value.kind else { return None };
        let onnx_opset = self.lookup(opset).is_none()
            && matches!(self.names.get(opset), Some(Global::Opset(o)) if o.domain.is_empty());
        (onnx_opset && attr.name == "OptionalHasElement" && arg.keyword.is_none()).then_some((&arg.value, false))
    }

    /// What a condition says about optional values when it is `truth`: `x is None` true makes
    /// `x` absent, false present; `not`, `and` (when true) and `or` (when false) combine them.
    pub(super) fn facts_when(&self, test: &Expr, truth: bool) -> Vec<(String, Presence)> {
        if let Some((operand, is_none)) = self.presence_test(test) {
            let ExprKind::Name(n) = &operand.kind else { return Vec::new() };
            let Some(key) = self.key_of(n) else { return Vec::new() };
            let p = if is_none == truth { Presence::Absent } else { Presence::Present };
            return vec![(key, p)];
        }
        match &test.kind {
            ExprKind::UnaryOp { op: UnaryOp::Not, operand } => self.facts_when(operand, !truth),
            ExprKind::BoolOp { op, values } if (*op == BoolOp::And) == truth => {
                values.iter().flat_map(|v| self.facts_when(v, truth)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// `a and b`, `a or b` on conditions each call decides: `And`/`Or` of their scalars.
    pub(super) fn lower_bool_op(&mut self, op: BoolOp, values: &[Expr], span: Span, target: Option<&str>) -> R<String> {
        let op_type = if op == BoolOp::And { "And" } else { "Or" };
        let Some((first, rest)) = values.split_first() else {
            return Err(self.unsupported(span, "an empty boolean operation is", ""));
        };
        let mut acc = self.lower_expr(first, None)?;
        let mut acc_span = first.span;
        for (k, v) in rest.iter().enumerate() {
            // As in Python, `x is not None and x != 1.0` reads `x` only where it is given.
            let x = self.with_facts_of(&values[..=k], op == BoolOp::And, |l| l.lower_expr(v, None))?;
            let args = self.autocast_default(op_type, vec![Some(acc), Some(x)], &[acc_span, v.span], span)?;
            let name = if k + 1 == rest.len() { self.fresh(target.unwrap_or("tmp")) } else { self.fresh("tmp") };
            self.emit_default(op_type, args, vec![name.clone()], vec![], span)?;
            acc = name;
            acc_span = first.span.to(v.span);
        }
        Ok(acc)
    }

    /// Runs `f` knowing what `conditions` say when each is `truth` (the operands of an `and`
    /// before the one being lowered are true there; of an `or`, false).
    pub(super) fn with_facts_of<T>(&mut self, conditions: &[Expr], truth: bool, f: impl FnOnce(&mut Self) -> T) -> T {
        let facts: Vec<(String, Presence)> = conditions.iter().flat_map(|c| self.facts_when(c, truth)).collect();
        let saved: Vec<(String, Option<Presence>)> =
            facts.iter().map(|(k, _)| (k.clone(), self.scope().facts.get(k).copied())).collect();
        self.scope().facts.extend(facts);
        let result = f(self);
        for (k, old) in saved {
            match old {
                Some(p) => self.scope().facts.insert(k, p),
                None => self.scope().facts.remove(&k),
            };
        }
        result
    }

    /// Whether a condition depends only on what each call fixes (attributes, None tests,
    /// constants): specialisation then always folds it, so a branch may pass on a value that is
    /// absent for the calls that take it.
    pub(super) fn decided_per_call(&self, test: &Expr) -> bool {
        if none_test(test).is_some() {
            return true;
        }
        if let Some((operand, _)) = self.presence_test(test) {
            // `OptionalHasElement` of a parameter that may be omitted is a None test; of a
            // computed optional value (`op.Optional(...)`), it is decided at run time.
            return match &operand.kind {
                ExprKind::Name(n) => {
                    self.key_of(n).is_some_and(|k| self.presence(&k) != Presence::Present)
                        || matches!(self.lookup(n), Some(Binding::Attr { .. }))
                }
                _ => false,
            };
        }
        match &test.kind {
            ExprKind::Name(n) => match self.lookup(n) {
                Some(Binding::Attr { .. }) => true,
                Some(_) => false,
                None => matches!(self.names.get(n), Some(Global::Const(_))),
            },
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::None => true,
            ExprKind::List(items) | ExprKind::Tuple(items) => items.iter().all(|i| self.decided_per_call(i)),
            ExprKind::UnaryOp { operand, .. } => self.decided_per_call(operand),
            ExprKind::BinOp { left, right, .. } => self.decided_per_call(left) && self.decided_per_call(right),
            ExprKind::BoolOp { values, .. } => values.iter().all(|v| self.decided_per_call(v)),
            ExprKind::Compare { left, comparisons } => {
                self.decided_per_call(left) && comparisons.iter().all(|(_, c)| self.decided_per_call(c))
            }
            _ => false,
        }
    }

    /// E0602 when `value`, at `span`, may be None here.
    /// `place` says what needs the value; it is written only for the diagnostic.
    pub(super) fn require_present(&mut self, value: &str, span: Span, place: impl FnOnce() -> String) -> R<()> {
        if self.presence(value) == Presence::Present {
            return Ok(());
        }
        // Only a variable may be None, so the value at `span` is a name or it is unnamed.
        let text = name_at(&self.def.body, span).unwrap_or_default();
        self.require_present_named(value, text, span, &place())
    }

    /// E0602 for `value`, which the source calls `text`.
    fn require_present_named(&mut self, value: &str, text: &str, span: Span, place: &str) -> R<()> {
        let p = self.presence(value);
        if p == Presence::Present {
            return Ok(());
        }
        let shown = if text.is_empty() { "this value".to_string() } else { format!("`{text}`") };
        let (message, label) = match p {
            Presence::Absent => (format!("{shown} is None here, but {place}"), "None here"),
            _ => (format!("{shown} may be None here, but {place}"), "may be None"),
        };
        let var = if text.is_empty() { "x" } else { text };
        let d = Diagnostic::error(codes::MAYBE_NONE, self.file(), message).primary(span, label).help(format!(
            "use it under `if {var} is not None:`; where it may be None, only an optional input of an op can take it"
        ));
        Err(self.push(d))
    }

    /// E0602 for the inputs of an op call that its schema requires.
    pub(super) fn check_required_inputs(
        &mut self,
        schema: &OpSchema,
        inputs: &[Option<String>],
        spans: &[Span],
    ) -> R<()> {
        for (i, v) in inputs.iter().enumerate() {
            let Some(v) = v else { continue };
            let formal = match schema.inputs.get(i) {
                Some(f) => f,
                None => match schema.inputs.last() {
                    Some(l) if l.option == FormalOption::Variadic => l,
                    _ => continue,
                },
            };
            if formal.option == FormalOption::Optional || self.presence(v) == Presence::Present {
                continue;
            }
            // An op that takes optional values (`OptionalGetElement`) may be given one.
            let takes_optional = schema
                .type_constraint(&formal.type_str)
                .is_some_and(|c| c.allowed.iter().any(|t| t.starts_with("optional(")));
            if takes_optional {
                continue;
            }
            let span = spans.get(i).or(spans.last()).copied().unwrap_or_default();
            self.require_present(v, span, || format!("`{}` requires its input `{}`", schema.name, formal.name))?;
        }
        Ok(())
    }

    /// E0602 for an attribute of an op call that references an attribute that may be None,
    /// where the op requires it (an optional one just takes the op's default).
    pub(super) fn check_required_attribute(&mut self, schema: &OpSchema, a: &Attr, span: Span) -> R<()> {
        let AttrValue::Ref { name, .. } = &a.value else { return Ok(()) };
        if self.attr_presence(name) == Presence::Present || !schema.attribute(&a.name).is_some_and(|f| f.required) {
            return Ok(());
        }
        let d = Diagnostic::error(
            codes::MAYBE_NONE,
            self.file(),
            format!("`{name}` may be None here, but `{}` requires its attribute `{}`", schema.name, a.name),
        )
        .primary(span, "may be None")
        .help(format!("test it first: `if {name} is not None:`, or give `{name}` a default"));
        Err(self.push(d))
    }

    /// E0602 for a function output that may be None.
    pub(super) fn check_returned(&mut self, value: &str, span: Span) -> R<()> {
        self.require_present(value, span, || "a function must return a value".into())
    }

    /// The presence of a branch output; E0602 when a value that may be None passes through a
    /// branch of an `if` decided at run time (ONNX has no omitted value to pass on).
    pub(super) fn branch_output_presence(&mut self, value: &str, var: &str, span: Span, per_call: bool) -> R<Presence> {
        let p = self.presence(value);
        if p != Presence::Present && !per_call {
            let place = "this `if` is decided at run time, and its outputs must be values";
            self.require_present_named(value, var, span, place)?;
        }
        Ok(p)
    }

    /// Records the presence of an `If`'s outputs, from both branches.
    pub(super) fn merge_branch_presence(&mut self, outputs: &[String], then: &[Presence], els: &[Presence]) {
        for ((o, t), e) in outputs.iter().zip(then).zip(els) {
            let p = t.merge(*e);
            self.derive_presence(o, p);
        }
    }

    /// `attr == "s"` or `attr != "s"` on a string attribute before opset 19 (whose `Equal` takes
    /// no strings): `CategoryMapper` maps the attribute to 1 when it is `s`, 0 otherwise.
    pub(super) fn lower_string_attribute_compare(
        &mut self,
        left: &Expr,
        right: &Expr,
        negate: bool,
        span: Span,
        target: Option<&str>,
    ) -> Option<R<String>> {
        let opset = self.default_opset.clone()?;
        if !opset.domain.is_empty() || opset.version >= 19 {
            return None;
        }
        let attr_of = |e: &Expr| match &e.kind {
            ExprKind::Name(n) => match self.lookup(n) {
                Some(Binding::Attr { name, ty: AttrType::String, .. }) => Some((n.clone(), name.clone())),
                _ => None,
            },
            _ => None,
        };
        let string_of = |e: &Expr| match eval_const(self.names, e) {
            Ok(PyValue::Str(s)) => Some(s),
            _ => None,
        };
        let ((var, attr), text) = match (attr_of(left), attr_of(right)) {
            (Some(a), None) => (a, string_of(right)?),
            (None, Some(a)) => (a, string_of(left)?),
            _ => return None,
        };
        Some(self.category_compare(&var, &attr, &text, negate, span, target))
    }

    fn category_compare(
        &mut self,
        var: &str,
        attr: &str,
        text: &str,
        negate: bool,
        span: Span,
        target: Option<&str>,
    ) -> R<String> {
        let value = self.attribute_constant(attr, AttrType::String, var, span)?;
        self.require_present(&value, span, || "comparing it needs a value".into())?;
        let ml = Opset { domain: ML_DOMAIN.into(), version: self.imports.get(ML_DOMAIN).map(|(v, _)| *v).unwrap_or(1) };
        let mapped = self
            .fresh(&format!("{var}_is_{}", if text.chars().all(|c| c.is_ascii_alphanumeric()) { text } else { "s" }));
        let attrs = vec![
            Attr { name: "cats_int64s".into(), value: AttrValue::Ints(vec![1]) },
            Attr { name: "cats_strings".into(), value: AttrValue::Strs(vec![text.to_string()]) },
            Attr { name: "default_int64".into(), value: AttrValue::Int(0) },
        ];
        self.emit(&ml, "CategoryMapper", vec![Some(value.clone())], vec![mapped.clone()], attrs, span)?;
        let hint = target.unwrap_or("cond");
        let equal = if negate { self.fresh("tmp") } else { self.fresh(hint) };
        let to = vec![Attr { name: "to".into(), value: AttrValue::Int(ElemType::Bool.code() as i64) }];
        self.emit_default("Cast", vec![Some(mapped)], vec![equal.clone()], to, span)?;
        if !negate {
            return Ok(equal);
        }
        let out = self.fresh(hint);
        self.emit_default("Not", vec![Some(equal)], vec![out.clone()], vec![], span)?;
        Ok(out)
    }
}

/// ONNX's classical machine-learning domain, home of `CategoryMapper`.
const ML_DOMAIN: &str = "ai.onnx.ml";

/// The name written at exactly `span` in `stmts` (nested blocks and functions included), if a
/// name expression is there: found when a message needs it, rather than recorded at every read.
fn name_at(stmts: &[Stmt], span: Span) -> Option<&str> {
    match &expr_at(stmts, span, &|e| matches!(e.kind, ExprKind::Name(_)))?.kind {
        ExprKind::Name(n) => Some(n),
        _ => None,
    }
}
