//! Indexing and slicing (`x[i]`, `x[a:b:c]`, `x[i, 1:3]`), lowered as onnxscript's converter
//! lowers them.
//!
//! Each item of the index is classified by its syntax, as onnxscript does, without looking at
//! what names stand for: a slice `a:b:c` (a bare `:` is skipped), a *scalar* (a literal integer
//! such as `0` or `-1`), or a *tensor* (anything else: a name, a call, `i + 1`, a module
//! constant, a literal list), computed at run time. Then:
//!
//! - with no slice and at most one scalar, each tensor item and then the scalar are `Gather`ed
//!   along their axis (numbered as in the source), one `Gather` after the other;
//! - otherwise one `Slice(x, starts, ends, axes, steps)` covers the slices and the scalars, a
//!   scalar `i` being the slice `i:i+1` whose axis a `Squeeze` then removes; with several axes
//!   the 1-D starts, ends, axes and steps are joined with `Concat(axis=0)`. Open bounds are
//!   INT64 max and min (swapped for a negative step), a bound computed at run time is
//!   `Reshape`d to 1-D, and the 1-D integer constants are shared within the subscript. The
//!   tensor items are then `Gather`ed from the result.
//!
//! Forms with no ONNX lowering are diagnostics: `...`, `None` (a new axis), a non-integer
//! constant index or bound, a zero step, and a step computed at run time with an open bound
//! (its direction, hence the default bounds, is unknown).

use super::*;

/// One item of an index, classified.
enum Part<'e> {
    Slice(SliceSpec<'e>),
    /// A literal integer.
    Scalar(i64),
    /// A value computed at run time (or a constant list of indices).
    Tensor(&'e Expr),
}

/// A bound or step of a slice.
#[derive(Clone, Copy)]
enum Bound<'e> {
    Absent,
    Const(i64),
    Dynamic(&'e Expr),
}

#[derive(Clone, Copy)]
struct SliceSpec<'e> {
    axis: usize,
    lower: Bound<'e>,
    upper: Bound<'e>,
    step: Bound<'e>,
}

/// onnxscript's `_is_constant_expr`: literals, unary operators on them and lists of them. Names
/// (module constants included) are not constant here: they are looked up as values.
fn is_constant_expr(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Ellipsis => true,
        ExprKind::UnaryOp { operand, .. } => is_constant_expr(operand),
        ExprKind::List(items) => items.iter().all(is_constant_expr),
        _ => false,
    }
}

impl<'a, 'm> Lowerer<'a, 'm> {
    /// Lowers `value[index]`; the result is named after `target`, or `{value}_subscripted`.
    pub(super) fn lower_subscript(&mut self, e: &Expr, value: &Expr, index: &Expr, target: Option<&str>) -> R<String> {
        let var = self.lower_expr(value, None)?;
        if let Some(t) = self.values.ty(&var).filter(|t| t.is_not_tensor()).cloned() {
            let help = match t {
                Ty::Seq(_) => "take one tensor of a sequence with `op.SequenceAt(seq, i)`",
                _ => "take the value out first with `op.OptionalGetElement(o)`",
            };
            let d = Diagnostic::error(
                codes::TYPE_MISMATCH,
                self.file(),
                format!("only tensors can be indexed, but this is {}", t.describe()),
            )
            .primary(value.span, format!("{} here", t.describe()))
            .help(help);
            return Err(self.push(d));
        }
        let target = match target {
            Some(t) => self.fresh(t),
            None => self.fresh(&format!("{var}_subscripted")),
        };
        let items: Vec<&Expr> = match &index.kind {
            ExprKind::Tuple(items) => items.iter().collect(),
            _ => vec![index],
        };
        let mut sliced: Vec<SliceSpec> = Vec::new();
        let mut scalars: Vec<(usize, i64, &Expr)> = Vec::new();
        let mut gathers: Vec<(usize, &Expr)> = Vec::new();
        for (axis, item) in items.iter().copied().enumerate() {
            match self.index_part(item, axis)? {
                None => {}
                Some(Part::Slice(s)) => sliced.push(s),
                Some(Part::Scalar(i)) => scalars.push((axis, i, item)),
                Some(Part::Tensor(t)) => gathers.push((axis, t)),
            }
        }
        let span = index.span;
        if sliced.is_empty() && scalars.is_empty() && gathers.is_empty() {
            // `x[:]`: the whole tensor (onnxscript fails here).
            self.emit_default("Identity", vec![Some(var)], vec![target.clone()], vec![], e.span)?;
            return Ok(target);
        }

        let mut result = var.clone();
        if !sliced.is_empty() || scalars.len() > 1 {
            let squeezed: Vec<PyValue> = scalars.iter().map(|(axis, _, _)| PyValue::Int(*axis as i128)).collect();
            for &(axis, i, item) in &scalars {
                // `i:i+1`, except that `-1:0` would be empty: the last element is `-1:`.
                let end = match i {
                    -1 => i64::MAX,
                    _ => match i.checked_add(1) {
                        Some(end) => end,
                        None => {
                            return Err(self.err(
                                codes::BAD_CONSTANT,
                                item.span,
                                "this index is out of the INT64 range",
                                "too large",
                            ))
                        }
                    },
                };
                sliced.push(SliceSpec {
                    axis,
                    lower: Bound::Const(i),
                    upper: Bound::Const(end),
                    step: Bound::Const(1),
                });
            }
            let mut cache: HashMap<i64, String> = HashMap::new();
            let (mut starts, mut ends, mut axes, mut steps) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for s in &sliced {
                axes.push(self.const_1d(&mut cache, s.axis as i64, span)?);
                let (start, end, step) = self.slice_inputs(&mut cache, s, span)?;
                starts.push(start);
                ends.push(end);
                steps.push(step);
            }
            let [start, end, axis, step] = if starts.len() > 1 {
                let mut joined = Vec::new();
                for (parts, suffix) in [(starts, "start"), (ends, "end"), (axes, "axis"), (steps, "step")] {
                    let name = self.fresh(&format!("{var}_{suffix}"));
                    let inputs = parts.into_iter().map(Some).collect();
                    self.emit_default(
                        "Concat",
                        inputs,
                        vec![name.clone()],
                        vec![Attr { name: "axis".into(), value: AttrValue::Int(0) }],
                        span,
                    )?;
                    joined.push(name);
                }
                let mut it = joined.into_iter();
                let mut next = || it.next().unwrap_or_default();
                [next(), next(), next(), next()]
            } else {
                let first = |v: Vec<String>| v.into_iter().next().unwrap_or_default();
                [first(starts), first(ends), first(axes), first(steps)]
            };
            let slice_inputs = vec![Some(result), Some(start), Some(end), Some(axis), Some(step)];
            let more = !gathers.is_empty();
            if squeezed.is_empty() {
                let out = if more { self.fresh(&format!("{var}_sliced")) } else { target.clone() };
                self.emit_default("Slice", slice_inputs, vec![out.clone()], vec![], e.span)?;
                result = out;
            } else {
                let sliced_name = self.fresh(&format!("{var}_sliced"));
                self.emit_default("Slice", slice_inputs, vec![sliced_name.clone()], vec![], e.span)?;
                let axes = self.emit_const(&PyValue::list(squeezed), Some("squeezed_axes"), span)?;
                let out = if more { self.fresh(&format!("{var}_squeezed")) } else { target.clone() };
                self.emit_default("Squeeze", vec![Some(sliced_name), Some(axes)], vec![out.clone()], vec![], e.span)?;
                result = out;
            }
        } else {
            gathers.extend(scalars.iter().map(|&(axis, _, item)| (axis, item)));
        }

        let last = gathers.last().map(|(axis, _)| *axis);
        for (axis, item) in gathers {
            let index_value = self.lower_expr(item, None)?;
            let out = if Some(axis) == last { target.clone() } else { self.fresh(&format!("{var}_axis_{axis}")) };
            let inputs = vec![Some(result), Some(index_value)];
            if let Some(schema) = self.default_schema("Gather") {
                self.checked_outputs = Some(self.check_input_types(schema, &inputs, &[value.span, item.span], 1)?);
            }
            self.emit_default(
                "Gather",
                inputs,
                vec![out.clone()],
                vec![Attr { name: "axis".into(), value: AttrValue::Int(axis as i64) }],
                e.span,
            )?;
            result = out;
        }
        Ok(result)
    }

    /// Classifies one item of an index (`None` for a bare `:`), reporting forms with no lowering.
    fn index_part<'e>(&mut self, item: &'e Expr, axis: usize) -> R<Option<Part<'e>>> {
        match &item.kind {
            ExprKind::Slice { lower, upper, step } => {
                if lower.is_none() && upper.is_none() && step.is_none() {
                    return Ok(None);
                }
                let lower = self.slice_bound(lower.as_deref(), "start")?;
                let upper = self.slice_bound(upper.as_deref(), "stop")?;
                let step_bound = self.slice_bound(step.as_deref(), "step")?;
                match (step_bound, step.as_deref()) {
                    (Bound::Const(0), Some(s)) => {
                        let d = Diagnostic::error(codes::BAD_CONSTANT, self.file(), "a slice step cannot be zero")
                            .primary(s.span, "step 0")
                            .help("use a positive step, or a negative one to go backwards (`x[::-1]`)");
                        return Err(self.push(d));
                    }
                    (Bound::Dynamic(_), Some(s))
                        if matches!(lower, Bound::Absent) || matches!(upper, Bound::Absent) =>
                    {
                        let d = Diagnostic::error(
                            codes::UNSUPPORTED_EXPR,
                            self.file(),
                            "a slice whose step is computed at run time needs an explicit start and stop",
                        )
                        .primary(item.span, "open bound")
                        .secondary(s.span, "the direction of this step is unknown when compiling")
                        .help(
                            "the default bounds depend on the sign of the step: write both, e.g. `x[start:stop:step]`",
                        );
                        return Err(self.push(d));
                    }
                    _ => {}
                }
                Ok(Some(Part::Slice(SliceSpec { axis, lower, upper, step: step_bound })))
            }
            ExprKind::Ellipsis => {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_EXPR,
                    self.file(),
                    "`...` (Ellipsis) in an index is not part of the ONNX Script language",
                )
                .primary(item.span, "not supported")
                .help("index every axis explicitly, e.g. `x[:, :, 0]`");
                Err(self.push(d))
            }
            ExprKind::None => {
                let d = Diagnostic::error(
                    codes::UNSUPPORTED_EXPR,
                    self.file(),
                    "`None` (a new axis) in an index is not part of the ONNX Script language",
                )
                .primary(item.span, "not supported")
                .help("insert the axis with `op.Unsqueeze(x, [axis])`");
                Err(self.push(d))
            }
            _ if is_constant_expr(item) => match eval_const(self.names, item) {
                Ok(PyValue::Int(i)) => Ok(Some(Part::Scalar(self.index_int(i, item.span)?))),
                // A constant list of indices is gathered like a tensor.
                Ok(PyValue::List(_)) => Ok(Some(Part::Tensor(item))),
                Ok(v) => {
                    let d = Diagnostic::error(
                        codes::BAD_CONSTANT,
                        self.file(),
                        format!("an index must be an integer, not {}", with_article(v.type_name())),
                    )
                    .primary(item.span, format!("{} index", with_article(v.type_name())))
                    .help("index with an integer literal, an integer tensor, or a slice `a:b`");
                    Err(self.push(d))
                }
                // Not evaluable here (e.g. `~0`): lowering it reports why.
                Err(_) => Ok(Some(Part::Tensor(item))),
            },
            _ => Ok(Some(Part::Tensor(item))),
        }
    }

    /// A start, stop or step, as written.
    fn slice_bound<'e>(&mut self, e: Option<&'e Expr>, what: &str) -> R<Bound<'e>> {
        let Some(e) = e else { return Ok(Bound::Absent) };
        if !is_constant_expr(e) {
            return Ok(Bound::Dynamic(e));
        }
        match eval_const(self.names, e) {
            Ok(PyValue::Int(v)) => Ok(Bound::Const(self.index_int(v, e.span)?)),
            Ok(v) => {
                let d = Diagnostic::error(
                    codes::BAD_CONSTANT,
                    self.file(),
                    format!("a slice {what} must be an integer, not {}", with_article(v.type_name())),
                )
                .primary(e.span, format!("{} {what}", with_article(v.type_name())))
                .help("slice with integer literals or integer tensors");
                Err(self.push(d))
            }
            Err(_) => Ok(Bound::Dynamic(e)),
        }
    }

    /// A constant index or bound, which becomes an INT64 tensor.
    fn index_int(&mut self, v: i128, span: Span) -> R<i64> {
        i64::try_from(v).map_err(|_| {
            let d = Diagnostic::error(codes::BAD_CONSTANT, self.file(), format!("the index {v} does not fit in INT64"))
                .primary(span, "out of INT64's range")
                .help("indices become INT64 tensors; onnxscript fails on this one too");
            self.push(d)
        })
    }

    /// A 1-D INT64 constant `[v]`, shared within one subscript.
    fn const_1d(&mut self, cache: &mut HashMap<i64, String>, v: i64, span: Span) -> R<String> {
        if let Some(name) = cache.get(&v) {
            return Ok(name.clone());
        }
        let name = self.emit_const(&PyValue::list(vec![PyValue::Int(v as i128)]), None, span)?;
        cache.insert(v, name.clone());
        Ok(name)
    }

    /// The start, end and step inputs of one slice: the step first, whose sign decides the
    /// default bounds.
    fn slice_inputs(
        &mut self,
        cache: &mut HashMap<i64, String>,
        s: &SliceSpec,
        span: Span,
    ) -> R<(String, String, String)> {
        let (step, step_value) = self.slice_component(cache, s.step, Some(1), span)?;
        let (lower_default, upper_default) = match step_value {
            None => (None, None),
            Some(v) if v > 0 => (Some(0), Some(i64::MAX)),
            Some(_) => (Some(i64::MAX), Some(i64::MIN)),
        };
        let (start, _) = self.slice_component(cache, s.lower, lower_default, span)?;
        let (end, _) = self.slice_component(cache, s.upper, upper_default, span)?;
        Ok((start, end, step))
    }

    fn slice_component(
        &mut self,
        cache: &mut HashMap<i64, String>,
        b: Bound,
        default: Option<i64>,
        span: Span,
    ) -> R<(String, Option<i64>)> {
        match (b, default) {
            (Bound::Const(v), _) | (Bound::Absent, Some(v)) => Ok((self.const_1d(cache, v, span)?, Some(v))),
            // Ruled out when the index was classified.
            (Bound::Absent, None) => Err(self.err(
                codes::UNSUPPORTED_EXPR,
                span,
                "a slice whose step is computed at run time needs an explicit start and stop",
                "open bound",
            )),
            (Bound::Dynamic(e), _) => {
                let v = self.lower_expr(e, None)?;
                self.check_slice_bound(&v, e.span)?;
                let reshaped = self.fresh(&format!("{v}_reshaped"));
                let one = self.const_1d(cache, 1, span)?;
                self.emit_default("Reshape", vec![Some(v), Some(one)], vec![reshaped.clone()], vec![], e.span)?;
                Ok((reshaped, None))
            }
        }
    }

    /// A bound computed at run time joins INT64 constants in one `Slice` (or `Concat`), so it
    /// must be an INT64 tensor.
    fn check_slice_bound(&mut self, v: &str, span: Span) -> R<()> {
        let Some(t) = self.values.ty(v).cloned() else { return Ok(()) };
        if t.could_be(ElemType::Int64) {
            return Ok(());
        }
        let help = if t.is_tensor() { "cast it: `op.Cast(i, to=INT64.dtype)`" } else { "slice with an INT64 tensor" };
        let d = Diagnostic::error(
            codes::TYPE_MISMATCH,
            self.file(),
            format!("a slice bound must be an INT64 tensor, but this is {}", t.describe()),
        )
        .primary(span, format!("{} here", t.describe()))
        .help(help);
        Err(self.push(d))
    }
}
