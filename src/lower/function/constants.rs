//! Constants that stand for tensors: literals and module constants (`Constant <value = ...>`),
//! attribute parameters (`Constant <value_T = @attr>`), and the element type an op's input
//! needs of them.
//!
//! As in onnxscript, a literal is the tensor `ir.tensor` makes of it (an int list INT64, a
//! float list FLOAT) and an attribute the tensor its `value_T` field makes; both are castable,
//! so autocast gives them the type of the input they share a type variable with (`CastLike`).
//! Where an op's input has one type of its own (`Resize`'s `scales` is FLOAT, `Reshape`'s
//! `shape` INT64, `LSTM`'s `sequence_lens` INT32), there is no other input to be like: a
//! Python number or list of them is then made a constant of that type (`[1, 1, 2, 2]` as
//! `scales` is FLOAT), and an attribute gets a `Cast` to it (`scales: Sequence[int]` as
//! `scales`). Only conversions that keep the value's meaning are made (ints to any number
//! type, floats to float types); anything else is left to the type check (E0601), whose help
//! then says how to write the constant or annotate the attribute.

use super::*;

impl<'a, 'm> Lowerer<'a, 'm> {
    /// A script-time value as a `Constant` of the tensor onnxscript makes of it, castable.
    pub(super) fn emit_const(&mut self, value: &PyValue, hint: Option<&str>, span: Span) -> R<String> {
        let tensor = self.const_tensor(value, None, span)?;
        let hint = hint.map(str::to_string).unwrap_or_else(|| const_hint(value));
        let name = self.emit_tensor(tensor, &hint, span)?;
        self.values.mark_castable(&name);
        Ok(name)
    }

    /// `value` as a tensor, of element type `elem` if given (else as `ir.tensor` infers it);
    /// a value that has no such tensor is reported (E0311, E0115).
    fn const_tensor(&mut self, value: &PyValue, elem: Option<ElemType>, span: Span) -> R<Tensor> {
        match tensor_of_type(value, elem) {
            Ok(t) => Ok(t),
            Err(_) if value.weight() > crate::sema::value::MAX_CONSTANT_ELEMENTS => {
                Err(self.push(eval::too_large(self.file(), span, value.weight())))
            }
            Err(why) => {
                let what = with_article(value.type_name());
                let mut d = match elem {
                    None => Diagnostic::error(
                        codes::BAD_CONSTANT,
                        self.file(),
                        format!("{what} cannot be a tensor constant"),
                    )
                    .primary(span, "not convertible to a tensor"),
                    Some(t) => {
                        let t = t.script_name();
                        Diagnostic::error(
                            codes::BAD_CONSTANT,
                            self.file(),
                            format!("{what} cannot be a tensor constant of element type {t}"),
                        )
                        .primary(span, format!("not convertible to {t}"))
                        .help(format!("the input takes {t}: write values that {t} holds"))
                    }
                };
                d = d.note(why);
                Err(self.push(d))
            }
        }
    }

    /// `Constant <value = tensor>`, named after `hint`.
    fn emit_tensor(&mut self, tensor: Tensor, hint: &str, span: Span) -> R<String> {
        let name = self.fresh(hint);
        let attrs = vec![Attr { name: "value".into(), value: AttrValue::Tensor(tensor) }];
        self.emit_default("Constant", vec![], vec![name.clone()], attrs, span)?;
        Ok(name)
    }

    /// An attribute parameter used as a tensor: `Constant <value_T = @attr>` (a bool also gets
    /// `Cast(to=BOOL)`), castable as a literal is, but for a list of strings, which no number
    /// is like.
    pub(super) fn attr_as_tensor(
        &mut self,
        attr: &str,
        ty: AttrType,
        as_bool: bool,
        hint: &str,
        span: Span,
    ) -> R<String> {
        let name = self.attribute_constant(attr, ty, hint, span)?;
        if as_bool {
            let cast = self.cast_attribute_tensor(name, ElemType::Bool, attr, span)?;
            self.values.mark_castable(&cast);
            return Ok(cast);
        }
        if ty != AttrType::Strings {
            self.values.mark_castable(&name);
        }
        Ok(name)
    }

    /// `Constant <value_T = @attr>`, the attribute (used at `span`) as a tensor, named after
    /// `hint`: there when the attribute is. An attribute type that no `value_T` field carries
    /// (a tensor or a graph) is reported.
    pub(super) fn attribute_constant(&mut self, attr: &str, ty: AttrType, hint: &str, span: Span) -> R<String> {
        let Some(field) = value_field(ty) else {
            let d = Diagnostic::error(
                codes::BAD_CONSTANT,
                self.file(),
                format!("a `{}` attribute cannot be used as a tensor", ty.name()),
            )
            .primary(span, "used as a tensor here")
            .help("only float, int, str and bool attributes, and lists of them, can be used as tensors");
            return Err(self.push(d));
        };
        let name = self.fresh(hint);
        let attrs = vec![Attr { name: field.into(), value: AttrValue::Ref { name: attr.into(), ty } }];
        self.emit_default("Constant", vec![], vec![name.clone()], attrs, span)?;
        self.note_attribute_tensor(&name, attr);
        Ok(name)
    }

    /// `Cast(value, to=elem)` of a tensor made from attribute `attr`: there when it is.
    fn cast_attribute_tensor(&mut self, value: String, elem: ElemType, attr: &str, span: Span) -> R<String> {
        let suffix = if elem == ElemType::Bool { "as_bool".to_string() } else { elem.onnx_name().to_string() };
        let cast = self.fresh(&format!("{value}_{suffix}"));
        let to = vec![Attr { name: "to".into(), value: AttrValue::Int(elem.code() as i64) }];
        self.emit_default("Cast", vec![Some(value)], vec![cast.clone()], to, span)?;
        self.note_attribute_tensor(&cast, attr);
        Ok(cast)
    }

    /// Input `index` of a call of `schema`, written `e`: as any expression, except that a
    /// Python number or list of them, or an attribute parameter, becomes a tensor of the one
    /// element type the input takes, where it takes one and the value converts to it.
    pub(super) fn lower_op_input(&mut self, schema: Option<&OpSchema>, index: usize, e: &Expr) -> R<Option<String>> {
        let Some(need) = schema.and_then(|s| needed_elem(s, index)) else { return self.lower_opt_expr(e) };
        if let Some((value, hint)) = self.python_numbers(e) {
            let value = value?;
            let natural = tensor_of(&value).ok().map(|t| t.elem);
            return match natural {
                Some(have) if have != need && converts(have, need) => {
                    let tensor = self.const_tensor(&value, Some(need), e.span)?;
                    self.emit_tensor(tensor, hint.unwrap_or("const"), e.span).map(Some)
                }
                _ => self.emit_const(&value, hint, e.span).map(Some),
            };
        }
        let ExprKind::Name(n) = &e.kind else { return self.lower_opt_expr(e) };
        let Some(b @ Binding::Attr { .. }) = self.lookup(n).cloned() else { return self.lower_opt_expr(e) };
        self.note(n, e.span, &b);
        let Binding::Attr { name, ty, as_bool } = b else { return self.lower_opt_expr(e) };
        let value = self.attr_as_tensor(&name, ty, as_bool, n, e.span)?;
        match attribute_elem(ty, as_bool) {
            Some(have) if have != need && converts(have, need) => {
                self.cast_attribute_tensor(value, need, &name, e.span).map(Some)
            }
            _ => Ok(Some(value)),
        }
    }

    /// The value of `e` if it is a literal or a module constant that is a Python number or a
    /// list of them (numpy values keep their own type), with the name to give its constant.
    fn python_numbers<'e>(&mut self, e: &'e Expr) -> Option<(R<PyValue>, Option<&'e str>)> {
        let (value, hint) = match &e.kind {
            ExprKind::Name(n) if self.lookup(n).is_none() => match self.names.get(n) {
                Some(Global::Const(v)) => (Ok(v.clone()), Some(n.as_str())),
                _ => return None,
            },
            _ if Self::is_literal(e) => (self.const_value(e), None),
            _ => return None,
        };
        match &value {
            Ok(v) if !is_numbers(v) => None,
            _ => Some((value, hint)),
        }
    }

    /// E0601's help where a call's input `index` (written `e`) is a constant the input cannot
    /// take: how to annotate the attribute, or write the literal, so that it can. `like` is
    /// the type of the input it must agree with, if that is what it contradicts.
    pub(super) fn constant_help(&self, schema: &OpSchema, index: usize, e: &Expr, like: Option<&Ty>) -> Option<String> {
        let formal = match schema.inputs.get(index) {
            Some(f) => f,
            None => schema.inputs.last().filter(|l| l.option == FormalOption::Variadic)?,
        };
        let allowed: Vec<ElemType> = match like {
            Some(Ty::Elem(t)) => vec![*t],
            _ => schema
                .allowed_types(formal)?
                .iter()
                .filter_map(|t| match t {
                    crate::onnx::ValueType::Tensor(e) => Some(*e),
                    _ => None,
                })
                .collect(),
        };
        let python = python_number_type(&allowed)?;
        let takes = match (like, allowed.as_slice()) {
            (Some(t), _) => format!("must be like {}", t.describe()),
            (None, few) if few.len() <= 3 => {
                format!("takes {}", few.iter().map(|t| t.script_name()).collect::<Vec<_>>().join(", "))
            }
            (None, _) => format!("takes {}", if python == "int" || python == "float" { "numbers" } else { python }),
        };
        let place = format!("`{}`'s input `{}` {takes}", schema.name, formal.name);
        if let ExprKind::Name(n) = &e.kind {
            if let Some(Binding::Attr { ty, .. }) = self.lookup(n) {
                let list = ty.element().is_some();
                let annotation = if list { format!("Sequence[{python}]") } else { python.to_string() };
                return Some(format!("{place}: annotate `{n}` as `{annotation}`"));
            }
        }
        // A constant for an input of one type was made of that type where it could be.
        let is_constant = match &e.kind {
            ExprKind::Name(n) => self.lookup(n).is_none() && matches!(self.names.get(n), Some(Global::Const(_))),
            _ => Self::is_literal(e),
        };
        let write = match python {
            "int" => "integers (`2`, not `2.0`)",
            "float" => "numbers (`2.0`)",
            "bool" => "`True` or `False`",
            _ => "strings",
        };
        (is_constant && needed_elem(schema, index).is_some())
            .then(|| format!("{place}: write the constant with {write}"))
    }
}

/// The field of `Constant` that carries an attribute of type `ty` (`value_float = @alpha`).
fn value_field(ty: AttrType) -> Option<&'static str> {
    Some(match ty {
        AttrType::Float => "value_float",
        AttrType::Int => "value_int",
        AttrType::String => "value_string",
        AttrType::Floats => "value_floats",
        AttrType::Ints => "value_ints",
        AttrType::Strings => "value_strings",
        _ => return None,
    })
}

/// The element type of the tensor an attribute of type `ty` becomes ([`Lowerer::attr_as_tensor`]).
fn attribute_elem(ty: AttrType, as_bool: bool) -> Option<ElemType> {
    Some(match ty {
        _ if as_bool => ElemType::Bool,
        AttrType::Float | AttrType::Floats => ElemType::Float,
        AttrType::Int | AttrType::Ints => ElemType::Int64,
        AttrType::String | AttrType::Strings => ElemType::String,
        _ => return None,
    })
}

/// The one element type that input `index` of `schema` takes as a tensor: its own concrete
/// type, or a type variable's only one (`None` where it takes several, or something else).
fn needed_elem(schema: &OpSchema, index: usize) -> Option<ElemType> {
    let formal = match schema.inputs.get(index) {
        Some(f) => f,
        None => schema.inputs.last().filter(|l| l.option == FormalOption::Variadic)?,
    };
    match schema.allowed_types(formal)? {
        [crate::onnx::ValueType::Tensor(t)] => Some(*t),
        _ => None,
    }
}

/// Whether a constant of element type `from` becomes one of `to` without changing what it
/// means: ints become any number type, floats any float type.
fn converts(from: ElemType, to: ElemType) -> bool {
    match from {
        ElemType::Int64 => to.is_float() || to.int_range().is_some(),
        ElemType::Float | ElemType::Double => to.is_float(),
        _ => false,
    }
}

/// Whether `v` is a Python int or float, or a (nested) list of them.
fn is_numbers(v: &PyValue) -> bool {
    match v {
        PyValue::Int(_) | PyValue::Float(_) => true,
        PyValue::List(items) => items.items().iter().all(is_numbers),
        _ => false,
    }
}

/// The Python type whose constants give a tensor of one of `allowed`: ints where an integer
/// type is allowed, else floats, bools or strings.
fn python_number_type(allowed: &[ElemType]) -> Option<&'static str> {
    if allowed.iter().any(|t| t.int_range().is_some()) {
        Some("int")
    } else if allowed.iter().any(|t| t.is_float()) {
        Some("float")
    } else if allowed.contains(&ElemType::Bool) {
        Some("bool")
    } else if allowed.contains(&ElemType::String) {
        Some("str")
    } else {
        None
    }
}
