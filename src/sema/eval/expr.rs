//! Expressions: names, literals, operators, attributes, calls, subscripts and f-strings.

use super::pyops::{binop, compare, format_value, truth, unary};
use super::{ConstError, Eval, Value, R};
use crate::diagnostics::{codes, Diagnostic};
use crate::sema::constlib::{self, Args, Member};
use crate::sema::env::{deferred_use, Global};
use crate::sema::resolve::resolve_dotted;
use crate::sema::value::{PyValue, MAX_CONSTANT_ELEMENTS};
use crate::source::Span;
use crate::syntax::ast::*;

impl Eval<'_, '_, '_> {
    /// `l op r`, with Python's meaning, or the exporter's tensors' when one side is a tensor.
    pub(super) fn apply_binop(&mut self, op: BinOp, l: PyValue, r: PyValue, span: Span) -> R<PyValue> {
        if Self::is_graph(&l) || Self::is_graph(&r) {
            return self.tensor_binop(op, l, r, span);
        }
        binop(op, &l, &r).map_err(|err| self.op_error(span, err))
    }

    /// Python's truth value; a tensor's is known only when the model runs.
    pub(super) fn truth_of(&self, v: &PyValue, span: Span) -> R<bool> {
        if Self::is_graph(v) {
            return Err(self.tensor_truth(span));
        }
        truth(v).map_err(|err| self.op_error(span, err))
    }

    /// Whether the name a dotted expression starts with is a local variable of the trace.
    fn is_local_root(&self, e: &Expr) -> bool {
        let mut root = e;
        while let ExprKind::Attribute { value, .. } = &root.kind {
            root = value;
        }
        match (&root.kind, self.trace.as_deref().and_then(|t| t.frames.last())) {
            (ExprKind::Name(n), Some(frame)) => frame.locals.contains_key(n) || frame.assigned.contains(n),
            _ => false,
        }
    }

    /// A name neither local, global nor builtin, at trace time.
    fn undefined(&self, name: &str, span: Span) -> ConstError {
        if constlib::is_python_builtin(name) {
            return self.report(unevaluated_builtin(self.file(), name, span));
        }
        self.python_error(span, &format!("NameError: name '{name}' is not defined"))
    }

    /// The value of a finished evaluation, or why it is not one.
    #[allow(clippy::wrong_self_convention, reason = "it converts the value, not the evaluation")]
    pub(super) fn to_py(&mut self, v: Value, span: Span) -> R<PyValue> {
        match v {
            Value::Py(v) => Ok(v),
            Value::Lib(p) if constlib::is_run_time(&p) => Err(self.run_time(span, &p)),
            Value::Lib(p) => Err(self.unsupported(span, &format!("`{}` as a value", constlib::display(&p)), None)),
            Value::Method(_, m) => Err(self.unsupported(span, &format!("the method `{m}` as a value"), None)),
            Value::TensorType(_) | Value::Other => Err(ConstError::NotConstant(span)),
            Value::Opset(_) | Value::Op(..) | Value::Function(_) if self.trace.is_none() => {
                Err(ConstError::NotConstant(span))
            }
            Value::Opset(_) | Value::Op(..) | Value::Function(_) | Value::Lambda(_) | Value::DictMethod(..) => {
                Err(self.trace_error(
                    span,
                    "an opset, operator or function is not a value here",
                    "not a value",
                    "call it, or pass what it computes",
                ))
            }
            Value::Dict(_) => Err(self.python_error(
                span,
                "TypeError: onnxsc passes a dict only to `len`, `in`, `for`, subscripts and its methods",
            )),
        }
    }

    pub(super) fn py(&mut self, e: &Expr) -> R<PyValue> {
        let v = self.eval(e)?;
        self.to_py(v, e.span)
    }

    fn global(&mut self, g: Global, span: Span) -> R<Value> {
        Ok(match g {
            Global::Const(v) => Value::Py(v),
            Global::Lib(p) => Value::Lib(p),
            Global::TensorType(t) => Value::TensorType(t),
            Global::Poison(r) => return Err(ConstError::Poisoned(r)),
            Global::Deferred(d) => {
                return Err(ConstError::DeferredUse(Box::new(deferred_use(&d, self.file(), span))))
            }
            Global::Opaque(path) => {
                return Err(self.unsupported(
                    span,
                    &format!("`{path}`"),
                    Some("onnxsc evaluates `math`, numpy, `onnx.helper`, `onnx.numpy_helper`, `onnx.TensorProto`, `onnx_ir` (`ir.tensor`, `ir.DataType`) and Python's builtins; see docs/language.md".into()),
                ))
            }
            Global::Opset(o) if self.trace.is_some() => Value::Opset(o),
            Global::Function(id) if self.trace.is_some() => Value::Function(id),
            _ => Value::Other,
        })
    }

    pub(super) fn eval(&mut self, e: &Expr) -> R<Value> {
        let py = |v: PyValue| Ok(Value::Py(v));
        match &e.kind {
            ExprKind::Int(i) => py(PyValue::Int(i.get())),
            ExprKind::Float(f) => py(PyValue::Float(*f)),
            ExprKind::Bool(b) => py(PyValue::Bool(*b)),
            ExprKind::Str(s) => py(PyValue::str(s)),
            ExprKind::None => py(PyValue::None),
            ExprKind::Ellipsis => Err(self.unsupported(e.span, "`...`", None)),
            ExprKind::FString(parts) => py(PyValue::str(&self.fstring(parts)?)),
            ExprKind::Name(n) => {
                if let Some(local) = self.local(n, e.span) {
                    return local;
                }
                match self.names.get(n) {
                    Some(g) => self.global(g.clone(), e.span),
                    None => match constlib::builtin(n) {
                        Some(p) => Ok(Value::Lib(p)),
                        None if self.trace.is_some() => Err(self.undefined(n, e.span)),
                        None => Err(ConstError::NotConstant(e.span)),
                    },
                }
            }
            ExprKind::Attribute { value, attr } => self.attribute(e, value, attr),
            ExprKind::Call { func, args } => self.call(e, func, args),
            ExprKind::List(items) | ExprKind::Tuple(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match &item.kind {
                        ExprKind::Starred(inner) => {
                            let v = self.py(inner)?;
                            let spread = v.items().ok_or_else(|| {
                                self.python_error(inner.span, &format!("TypeError: {} is not iterable", v.type_name()))
                            })?;
                            out.extend(spread.iter().cloned());
                        }
                        _ => out.push(self.py(item)?),
                    }
                    if out.len() as u64 > MAX_CONSTANT_ELEMENTS {
                        return Err(self.too_large(e.span, out.len() as u64));
                    }
                }
                py(if matches!(e.kind, ExprKind::List(_)) { PyValue::list(out) } else { PyValue::tuple(out) })
            }
            ExprKind::UnaryOp { op, operand } => {
                let v = self.py(operand)?;
                if Self::is_graph(&v) {
                    return self.tensor_unary(*op, v, e.span).map(Value::Py);
                }
                unary(*op, &v).map(Value::Py).map_err(|err| self.op_error(e.span, err))
            }
            ExprKind::BinOp { op, left, right } => {
                let l = self.py(left)?;
                let r = self.py(right)?;
                self.apply_binop(*op, l, r, e.span).map(Value::Py)
            }
            ExprKind::BoolOp { op, values } => {
                let mut last = PyValue::None;
                for v in values {
                    last = self.py(v)?;
                    let t = self.truth_of(&last, v.span)?;
                    if (*op == BoolOp::And && !t) || (*op == BoolOp::Or && t) {
                        break;
                    }
                }
                py(last)
            }
            ExprKind::Compare { left, comparisons } => {
                let mut l = self.py(left)?;
                for (op, right) in comparisons {
                    let r = match self.eval(right)? {
                        // `k in d`: among the keys.
                        Value::Dict(d) if matches!(op, CmpOp::In | CmpOp::NotIn) => {
                            PyValue::list(d.iter().map(|(k, _)| k.clone()).collect())
                        }
                        other => self.to_py(other, right.span)?,
                    };
                    if Self::is_graph(&l) || Self::is_graph(&r) {
                        // A tensor comparison is a tensor: only one of them is a value.
                        if comparisons.len() > 1 && !matches!(op, CmpOp::Is | CmpOp::IsNot) {
                            return Err(self.tensor_truth(e.span));
                        }
                        return self.tensor_compare(*op, l, r, e.span).map(Value::Py);
                    }
                    let holds = compare(*op, &l, &r).map_err(|err| self.op_error(e.span, err))?;
                    if !holds {
                        return py(PyValue::Bool(false));
                    }
                    l = r;
                }
                py(PyValue::Bool(true))
            }
            ExprKind::IfExp { test, body, orelse } => {
                let t = self.py(test)?;
                if self.truth_of(&t, test.span)? {
                    self.eval(body)
                } else {
                    self.eval(orelse)
                }
            }
            ExprKind::Subscript { value, index } => {
                let v = self.eval(value)?;
                if let Value::Dict(d) = &v {
                    let key = self.py(index)?;
                    return self.dict_item(d, &key, e.span);
                }
                let v = self.to_py(v, value.span)?;
                self.subscript(e, &v, index).map(Value::Py)
            }
            ExprKind::Dict(pairs) => self.dict(pairs),
            ExprKind::Set(items) => self.set(items),
            ExprKind::Lambda { .. } => self.lambda(e),
            ExprKind::Comprehension { kind, element, value, generators } => {
                self.comprehension(*kind, element, value.as_deref(), generators)
            }
            ExprKind::Starred(_) => Err(self.unsupported(e.span, "a starred expression here", None)),
            ExprKind::Slice { .. } => Err(self.unsupported(e.span, "a slice outside a subscript", None)),
        }
    }

    fn attribute(&mut self, e: &Expr, value: &Expr, attr: &Ident) -> R<Value> {
        // Names and modules: `np.pi`, `onnx.TensorProto.FLOAT`, `mylib.SCALE`, `FLOAT.dtype`;
        // a local variable hides the global of its name.
        if e.dotted_name().is_some() && !self.is_local_root(e) {
            if let Some(g) = resolve_dotted(self.names, e) {
                return self.global(g, e.span);
            }
        }
        let base = self.eval(value)?;
        match base {
            Value::Opset(o) => Ok(Value::Op(o, attr.name.clone())),
            Value::Dict(d) => Ok(Value::DictMethod(d, attr.name.clone())),
            Value::Py(PyValue::Graph(g)) => self.graph_attribute(&g, &attr.name, attr.span),
            Value::Py(PyValue::DType(t)) => self.dtype_attribute(t, &attr.name, attr.span),
            Value::Py(v) if self.trace.is_some() && Self::has_method(&v, &attr.name) => {
                Ok(Value::Method(v, attr.name.clone()))
            }
            Value::Op(..) | Value::Function(_) => Err(self.trace_error(
                attr.span,
                format!("onnxsc does not know the attribute `{}` of a function", attr.name),
                "not evaluated at trace time",
                "call the function",
            )),
            Value::TensorType(t) if attr.name == "dtype" => Ok(Value::Py(PyValue::Int(t.code() as i128))),
            Value::Lib(p) => match constlib::member(&p, &attr.name) {
                Some(Member::Value(v)) => Ok(Value::Py(v)),
                Some(Member::Object(o)) => Ok(Value::Lib(o)),
                None => {
                    let shown = format!(
                        "{}.{}",
                        e.dotted_name()
                            .unwrap_or_else(|| constlib::display(&p).to_string())
                            .rsplit_once('.')
                            .map(|(a, _)| a.to_string())
                            .unwrap_or_default(),
                        attr.name
                    );
                    let known = constlib::members(&p);
                    let help = if known.is_empty() {
                        None
                    } else {
                        Some(format!(
                            "onnxsc evaluates these members of `{}`: {}",
                            constlib::display(&p),
                            known.join(", ")
                        ))
                    };
                    Err(self.unsupported(attr.span, &format!("`{shown}`"), help))
                }
            },
            Value::Py(PyValue::Tensor(t)) => match attr.name.as_str() {
                "shape" => Ok(Value::Py(PyValue::tuple(t.dims.iter().map(|d| PyValue::Int(*d as i128)).collect()))),
                "ndim" => Ok(Value::Py(PyValue::Int(t.dims.len() as i128))),
                "size" => Ok(Value::Py(PyValue::Int(t.len() as i128))),
                "T" => constlib::transpose(&t)
                    .map(|t| Value::Py(PyValue::Tensor(std::sync::Arc::new(t))))
                    .map_err(|err| self.lib_error(attr.span, "ndarray.T", err)),
                "astype" | "tolist" | "item" | "reshape" | "flatten" | "ravel" | "transpose" | "copy" => {
                    Ok(Value::Method(PyValue::Tensor(t), attr.name.clone()))
                }
                other => Err(self.unsupported(attr.span, &format!("the array attribute `{other}`"), None)),
            },
            Value::Py(v) => {
                Err(self.unsupported(attr.span, &format!("the attribute `{}` of a {}", attr.name, v.type_name()), None))
            }
            Value::Method(..) | Value::DictMethod(..) | Value::Lambda(_) => {
                Err(self.unsupported(attr.span, "an attribute of a function", None))
            }
            // `op.Constant`: an op, computed at run time (the caller decides).
            Value::Other => Ok(Value::Other),
            Value::TensorType(_) => Err(ConstError::NotConstant(e.span)),
        }
    }

    fn call(&mut self, e: &Expr, func: &Expr, args: &[Arg]) -> R<Value> {
        if self.trace.is_some() {
            if let Some(done) = self.call_list_method(func, args, e.span)? {
                return Ok(done);
            }
        }
        let shown = func.dotted_name().unwrap_or_else(|| "this call".to_string());
        let callee = match self.eval(func) {
            // `np.linalg.norm(...)`: name the function called, not the first unknown part.
            Err(ConstError::Failed(d)) if d.code == codes::UNSUPPORTED_CONSTANT && func.dotted_name().is_some() => {
                let mut d = *d;
                d.message = format!("onnxsc cannot evaluate `{shown}` at compile time");
                d.labels = vec![crate::diagnostics::Label {
                    span: func.span,
                    message: "not in onnxsc's constant library".into(),
                    primary: true,
                }];
                return Err(self.report(d));
            }
            other => other?,
        };
        if let Value::Lib(p) = &callee {
            // Checked before the arguments: `np.random.rand(n)` is reported as such.
            if constlib::is_run_time(p) {
                return Err(self.run_time(e.span, &shown));
            }
        }
        let bound = if self.trace.is_some() {
            if let Some(done) = self.trace_call(e, callee.clone(), args)? {
                return Ok(done);
            }
            self.members(args)?
        } else {
            self.constant_arguments(args)?
        };
        let result = match callee {
            Value::Lib(p) => constlib::call(&p, &bound),
            Value::Method(receiver, m) => constlib::call_method(&receiver, &m, &bound),
            Value::Py(v) => {
                return Err(
                    self.python_error(func.span, &format!("TypeError: '{}' object is not callable", v.type_name()))
                )
            }
            Value::TensorType(t) => {
                return Err(self.unsupported(
                    func.span,
                    &format!("calling the tensor type `{}`", t.script_name()),
                    None,
                ))
            }
            // An op call or a function of the module: computed at run time.
            Value::Other | Value::Opset(_) | Value::Op(..) | Value::Function(_) => {
                return Err(ConstError::NotConstant(e.span))
            }
            Value::Lambda(_) | Value::DictMethod(..) | Value::Dict(_) => return Err(ConstError::NotConstant(e.span)),
        };
        match result {
            Ok(Member::Value(v)) => Ok(Value::Py(v)),
            Ok(Member::Object(o)) => Ok(Value::Lib(o)),
            Err(err) => Err(self.lib_error(e.span, &shown, err)),
        }
    }

    /// The arguments of a call at compile time.
    fn constant_arguments(&mut self, args: &[Arg]) -> R<Args> {
        let mut bound = Args { positional: Vec::new(), keywords: Vec::new() };
        for a in args {
            match (a.kind, &a.keyword) {
                (ArgKind::Plain, None) => bound.positional.push(self.argument(&a.value)?),
                (ArgKind::Plain, Some(k)) => bound.keywords.push((k.name.clone(), self.argument(&a.value)?)),
                (ArgKind::Star, _) => {
                    let v = self.py(&a.value)?;
                    let items = v.items().ok_or_else(|| {
                        self.python_error(
                            a.value.span,
                            &format!("TypeError: argument after * must be an iterable, not {}", v.type_name()),
                        )
                    })?;
                    bound.positional.extend(items.iter().cloned().map(Member::Value));
                }
                (ArgKind::DoubleStar, _) => return Err(self.unsupported(a.span, "`**` arguments", None)),
            }
        }
        Ok(bound)
    }

    fn argument(&mut self, e: &Expr) -> R<Member> {
        Ok(match self.eval(e)? {
            Value::Py(v) => Member::Value(v),
            Value::Lib(p) => Member::Object(p),
            other => Member::Value(self.to_py(other, e.span)?),
        })
    }

    fn fstring(&mut self, parts: &[FStringPart]) -> R<String> {
        let mut out = String::new();
        for part in parts {
            match part {
                FStringPart::Literal(s) => out.push_str(s),
                FStringPart::Field { value, conversion, spec } => {
                    let v = self.py(value)?;
                    if v.weight() > MAX_CONSTANT_ELEMENTS {
                        return Err(self.too_large(value.span, v.weight()));
                    }
                    if v.has_tensor() {
                        return Err(self.unsupported(value.span, "formatting a numpy value or tensor", None));
                    }
                    let spec = match spec {
                        Some(parts) => self.fstring(parts)?,
                        None => String::new(),
                    };
                    let text = match conversion {
                        Some('r') | Some('a') => PyValue::str(&v.repr()),
                        Some(_) => PyValue::str(&v.to_str()),
                        None => v,
                    };
                    out.push_str(&format_value(&text, &spec).map_err(|err| self.op_error(value.span, err))?);
                }
            }
            if out.len() as u64 > MAX_CONSTANT_ELEMENTS {
                return Err(self.too_large(Span::default(), out.len() as u64));
            }
        }
        Ok(out)
    }

    fn subscript(&mut self, e: &Expr, v: &PyValue, index: &Expr) -> R<PyValue> {
        if Self::is_graph(v) {
            return Err(self.trace_error(
                e.span,
                "the exporter's tensors cannot be indexed with `[]`",
                "indexing a tensor",
                "use `op.Gather` or `op.Slice`",
            ));
        }
        let len = match v {
            PyValue::Str(s) => s.chars().count(),
            PyValue::List(s) => s.len(),
            other => {
                return Err(self.unsupported(e.span, &format!("indexing a {}", other.type_name()), None));
            }
        };
        if let ExprKind::Slice { lower, upper, step } = &index.kind {
            let mut bound = |b: &Option<Box<Expr>>| -> R<Option<i128>> {
                match b {
                    None => Ok(None),
                    Some(b) => match self.py(b)? {
                        PyValue::None => Ok(None),
                        PyValue::Int(i) => Ok(Some(i)),
                        PyValue::Bool(x) => Ok(Some(x as i128)),
                        other => Err(self.python_error(
                            b.span,
                            &format!("TypeError: slice indices must be integers or None, not {}", other.type_name()),
                        )),
                    },
                }
            };
            let (lo, hi, st) = (bound(lower)?, bound(upper)?, bound(step)?);
            let step = st.unwrap_or(1);
            if step == 0 {
                return Err(self.python_error(index.span, "ValueError: slice step cannot be zero"));
            }
            // Python's `slice.indices`.
            let n = len as i128;
            let (lower_limit, upper_limit) = if step > 0 { (0, n) } else { (-1, n - 1) };
            let clamp = |i: i128| if i < 0 { (i + n).max(lower_limit) } else { i.min(upper_limit) };
            let start = lo.map(clamp).unwrap_or(if step > 0 { lower_limit } else { upper_limit });
            let stop = hi.map(clamp).unwrap_or(if step > 0 { upper_limit } else { lower_limit });
            let mut picks = Vec::new();
            let mut i = start;
            while (step > 0 && i < stop) || (step < 0 && i > stop) {
                picks.push(i as usize);
                i += step;
            }
            return Ok(match &v {
                PyValue::Str(s) => {
                    let chars: Vec<char> = s.chars().collect();
                    PyValue::str(&picks.iter().map(|i| chars[*i]).collect::<String>())
                }
                PyValue::List(s) => {
                    let items = picks.iter().map(|i| s[*i].clone()).collect();
                    if s.is_tuple() {
                        PyValue::tuple(items)
                    } else {
                        PyValue::list(items)
                    }
                }
                _ => unreachable!("checked above"),
            });
        }
        let i = match self.py(index)? {
            PyValue::Int(i) => i,
            PyValue::Bool(b) => b as i128,
            other => {
                return Err(self.python_error(
                    index.span,
                    &format!("TypeError: indices must be integers, not {}", other.type_name()),
                ))
            }
        };
        let at = if i < 0 { i + len as i128 } else { i };
        if at < 0 || at >= len as i128 {
            return Err(self.python_error(index.span, &format!("IndexError: index {i} is out of range")));
        }
        Ok(match &v {
            PyValue::Str(s) => PyValue::str(&s.chars().nth(at as usize).map(String::from).unwrap_or_default()),
            PyValue::List(s) => s.items()[at as usize].clone(),
            _ => unreachable!("checked above"),
        })
    }
}

/// E0901: a Python builtin that onnxsc's evaluator does not run, at trace time or (called
/// directly) at check time.
pub fn unevaluated_builtin(file: usize, name: &str, span: Span) -> Diagnostic {
    Diagnostic::error(codes::TRACE_ERROR, file, format!("onnxsc does not evaluate Python's `{name}`"))
        .primary(span, "a builtin outside onnxsc's evaluator")
        .help(format!(
            "trace-time code may use {} (docs/trace.md); compute the value with them",
            constlib::evaluated_builtins().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ")
        ))
}
