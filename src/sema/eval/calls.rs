//! Trace time: calls. An operator of an opset records a node; a function of the compilation
//! runs; the methods of lists, tuples, strings and element types compute; and the builtins
//! that Python code over shapes and lists needs (`isinstance`, `enumerate`, `zip`, `sorted`,
//! `reversed`, `all`, `any`) join those of the constant library, which the rest go to.

use super::{Eval, Value, R};
use crate::sema::constlib::{self, Args, Member};
use crate::sema::env::Global;
use crate::sema::eval::pyops::compare;
use crate::sema::value::PyValue;
use crate::source::Span;
use crate::syntax::ast::*;
use std::cmp::Ordering;

/// Arguments as evaluated: positional (stars spread), then keyword.
pub(super) type Arguments = (Vec<Value>, Vec<(String, Value)>);

/// The methods of a list that change it: called on a local variable, which is re-bound.
const MUTATING_LIST_METHODS: [&str; 8] = ["append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort"];

impl Eval<'_, '_, '_> {
    /// Whether `v.name` is a method onnxsc calls at trace time.
    pub(super) fn has_method(v: &PyValue, name: &str) -> bool {
        match v {
            PyValue::List(s) if s.is_tuple() => matches!(name, "index" | "count"),
            PyValue::List(_) => matches!(name, "index" | "count" | "copy"),
            PyValue::Str(_) => {
                matches!(name, "join" | "startswith" | "endswith" | "lower" | "upper" | "strip" | "split" | "replace")
            }
            _ => false,
        }
    }

    /// Evaluates a call's arguments.
    pub(super) fn arguments(&mut self, args: &[Arg]) -> R<Arguments> {
        let (mut positional, mut keywords) = (Vec::new(), Vec::new());
        for a in args {
            match (a.kind, &a.keyword) {
                (ArgKind::Plain, None) => positional.push(self.eval(&a.value)?),
                (ArgKind::Plain, Some(k)) => keywords.push((k.name.clone(), self.eval(&a.value)?)),
                (ArgKind::Star, _) => {
                    let v = self.py(&a.value)?;
                    let items = self.iterate(&v, a.value.span)?;
                    positional.extend(items.into_iter().map(Value::Py));
                }
                (ArgKind::DoubleStar, _) => {
                    return Err(self.trace_error(
                        a.span,
                        "onnxsc does not evaluate `**` arguments",
                        "not evaluated at trace time",
                        "pass the keyword arguments by name",
                    ))
                }
            }
        }
        Ok((positional, keywords))
    }

    /// A call at trace time of `callee`, evaluated; `None` when it is a library call for the
    /// constant library to make.
    pub(super) fn trace_call(&mut self, e: &Expr, callee: Value, args: &[Arg]) -> R<Option<Value>> {
        Ok(Some(match callee {
            Value::Op(opset, op_type) => {
                let (positional, keywords) = self.arguments(args)?;
                let args = positional.into_iter().map(|v| self.to_py(v, e.span)).collect::<R<Vec<_>>>()?;
                let kwargs =
                    keywords.into_iter().map(|(k, v)| Ok((k, self.to_py(v, e.span)?))).collect::<R<Vec<_>>>()?;
                let mut outputs = self.record_op(&opset, &op_type, args, kwargs, e.span)?;
                if outputs.len() == 1 {
                    Value::Py(outputs.pop().unwrap_or(PyValue::None))
                } else {
                    Value::Py(PyValue::tuple(outputs))
                }
            }
            Value::Function(id) => {
                let (positional, keywords) = self.arguments(args)?;
                self.call_function(id, positional, keywords, e.span)?
            }
            Value::Lambda(closure) => {
                let (positional, _) = self.arguments(args)?;
                self.call_lambda(&closure, positional, e.span)?
            }
            Value::DictMethod(d, m) => {
                let (positional, _) = self.arguments(args)?;
                self.dict_method(&d, &m, positional, e.span)?
            }
            Value::Method(PyValue::DType(t), m) => {
                if !args.is_empty() {
                    return Err(self.python_error(e.span, &format!("TypeError: {m}() takes no arguments")));
                }
                Value::Py(Self::dtype_method(t, &m).unwrap_or(PyValue::None))
            }
            Value::Method(v, m) if Self::has_method(&v, &m) => {
                let (positional, _) = self.arguments(args)?;
                let positional = positional.into_iter().map(|v| self.to_py(v, e.span)).collect::<R<Vec<_>>>()?;
                Value::Py(self.method(&v, &m, &positional, e.span)?)
            }
            Value::Lib(p) => match self.builtin(&p, e, args)? {
                Some(v) => Value::Py(v),
                None => return Ok(None),
            },
            _ => return Ok(None),
        }))
    }

    /// `xs.append(v)` and the other list methods that change a list, on a local variable: the
    /// name is bound to the changed list. `None` when the call is not one.
    pub(super) fn call_list_method(&mut self, func: &Expr, args: &[Arg], span: Span) -> R<Option<Value>> {
        let ExprKind::Attribute { value, attr } = &func.kind else { return Ok(None) };
        let ExprKind::Name(n) = &value.kind else { return Ok(None) };
        if !MUTATING_LIST_METHODS.contains(&attr.name.as_str()) {
            return Ok(None);
        }
        let Some(Ok(Value::Py(PyValue::List(list)))) = self.local(n, value.span) else { return Ok(None) };
        if list.is_tuple() {
            return Ok(None);
        }
        let (positional, _) = self.arguments(args)?;
        let positional = positional.into_iter().map(|v| self.to_py(v, span)).collect::<R<Vec<_>>>()?;
        let mut items = list.items().to_vec();
        let arg = |i: usize| positional.get(i).cloned();
        let mut result = PyValue::None;
        match attr.name.as_str() {
            "append" => items.push(arg(0).unwrap_or(PyValue::None)),
            "extend" => {
                let more = self.iterate(&arg(0).unwrap_or(PyValue::None), span)?;
                items.extend(more);
            }
            "insert" => {
                let at = arg(0).and_then(|v| v.as_i64()).unwrap_or(0);
                let len = items.len() as i64;
                let at = if at < 0 { (at + len).max(0) } else { at.min(len) };
                items.insert(at as usize, arg(1).unwrap_or(PyValue::None));
            }
            "pop" => {
                let at = arg(0).and_then(|v| v.as_i64()).unwrap_or(-1);
                let len = items.len() as i64;
                let at = if at < 0 { at + len } else { at };
                if at < 0 || at >= len {
                    return Err(self.python_error(span, "IndexError: pop index out of range"));
                }
                result = items.remove(at as usize);
            }
            "remove" => {
                let target = arg(0).unwrap_or(PyValue::None);
                let Some(at) = items.iter().position(|v| *v == target) else {
                    return Err(self.python_error(span, "ValueError: list.remove(x): x not in list"));
                };
                items.remove(at);
            }
            "clear" => items.clear(),
            "reverse" => items.reverse(),
            _ => items = self.sorted(items, false, span)?,
        }
        self.bind(n, Value::Py(PyValue::list(items)));
        Ok(Some(Value::Py(result)))
    }

    /// A non-mutating method of a list, tuple or string.
    fn method(&self, v: &PyValue, name: &str, args: &[PyValue], span: Span) -> R<PyValue> {
        let arg = |i: usize| args.get(i).cloned().unwrap_or(PyValue::None);
        Ok(match (v, name) {
            (PyValue::List(s), "index") => match s.iter().position(|x| *x == arg(0)) {
                Some(i) => PyValue::Int(i as i128),
                None => return Err(self.python_error(span, "ValueError: value is not in list")),
            },
            (PyValue::List(s), "count") => PyValue::Int(s.iter().filter(|x| **x == arg(0)).count() as i128),
            (PyValue::List(s), "copy") => PyValue::list(s.items().to_vec()),
            (PyValue::Str(s), "join") => {
                let parts = self.iterate(&arg(0), span)?;
                let mut texts = Vec::with_capacity(parts.len());
                for p in parts {
                    match p {
                        PyValue::Str(t) => texts.push(t),
                        other => {
                            return Err(self.python_error(
                                span,
                                &format!(
                                    "TypeError: sequence item: expected str instance, {} found",
                                    other.type_name()
                                ),
                            ))
                        }
                    }
                }
                PyValue::str(&texts.join(s))
            }
            (PyValue::Str(s), "startswith") => PyValue::Bool(matches!(arg(0), PyValue::Str(p) if s.starts_with(&*p))),
            (PyValue::Str(s), "endswith") => PyValue::Bool(matches!(arg(0), PyValue::Str(p) if s.ends_with(&*p))),
            (PyValue::Str(s), "lower") => PyValue::str(&s.to_lowercase()),
            (PyValue::Str(s), "upper") => PyValue::str(&s.to_uppercase()),
            (PyValue::Str(s), "strip") => PyValue::str(s.trim()),
            (PyValue::Str(s), "split") => match arg(0) {
                PyValue::Str(sep) if !sep.is_empty() => PyValue::list(s.split(&*sep).map(PyValue::str).collect()),
                _ => PyValue::list(s.split_whitespace().map(PyValue::str).collect()),
            },
            (PyValue::Str(s), "replace") => match (arg(0), arg(1)) {
                (PyValue::Str(a), PyValue::Str(b)) => PyValue::str(&s.replace(&*a, &b)),
                _ => return Err(self.python_error(span, "TypeError: replace() arguments must be str")),
            },
            _ => return Err(self.python_error(span, &format!("AttributeError: no method '{name}'"))),
        })
    }

    /// A builtin onnxsc evaluates at trace time beyond the constant library's, or one of the
    /// library's with a trace-time value among its arguments; `None` for the library to call.
    fn builtin(&mut self, path: &str, e: &Expr, args: &[Arg]) -> R<Option<PyValue>> {
        if let Some(name) = constlib::torchlib_common_member(path) {
            return self.torchlib_common(name, e, args);
        }
        let name = path.strip_prefix("builtins.").unwrap_or("");
        Ok(Some(match name {
            "isinstance" => self.isinstance(e, args)?,
            "set" => {
                let (positional, _) = self.arguments(args)?;
                let items = match positional.into_iter().next() {
                    Some(v) => self.items_of(v, e.span)?,
                    None => Vec::new(),
                };
                let mut out: Vec<PyValue> = Vec::new();
                for v in items {
                    if !out.iter().any(|o| super::pyops::equal(o, &v).unwrap_or(false)) {
                        out.push(v);
                    }
                }
                PyValue::list(out)
            }
            "enumerate" | "zip" | "sorted" | "reversed" | "all" | "any" => {
                let (positional, keywords) = self.arguments(args)?;
                let positional = positional.into_iter().map(|v| self.to_py(v, e.span)).collect::<R<Vec<_>>>()?;
                self.sequence_builtin(name, &positional, &keywords, e.span)?
            }
            "len" => {
                let (positional, _) = self.arguments(args)?;
                match positional.as_slice() {
                    [Value::Py(PyValue::Graph(_))] => {
                        return Err(self.trace_error(
                            e.span,
                            "the length of a tensor is known only when the model runs",
                            "`len` of a tensor",
                            "for its rank write `len(x.shape)`; for its first dimension `x.shape[0]`",
                        ))
                    }
                    [Value::Dict(d)] => PyValue::Int(d.len() as i128),
                    [Value::Py(PyValue::None)] => {
                        return Err(self.python_error(e.span, "TypeError: object of type 'NoneType' has no len() (is the rank of a tensor unknown for this call?)"))
                    }
                    _ => return Ok(None),
                }
            }
            _ => return Ok(None),
        }))
    }

    /// `enumerate`, `zip`, `sorted`, `reversed`, `all`, `any` over static lists.
    fn sequence_builtin(
        &mut self,
        name: &str,
        args: &[PyValue],
        keywords: &[(String, Value)],
        span: Span,
    ) -> R<PyValue> {
        let first = args.first().cloned().unwrap_or(PyValue::None);
        let items = self.iterate(&first, span)?;
        Ok(match name {
            "enumerate" => {
                let start = args.get(1).and_then(|v| v.as_i64()).unwrap_or(0) as i128;
                PyValue::list(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| PyValue::tuple(vec![PyValue::Int(start + i as i128), v]))
                        .collect(),
                )
            }
            "zip" => {
                let mut columns = vec![items];
                for a in &args[1..] {
                    columns.push(self.iterate(a, span)?);
                }
                let n = columns.iter().map(Vec::len).min().unwrap_or(0);
                PyValue::list((0..n).map(|i| PyValue::tuple(columns.iter().map(|c| c[i].clone()).collect())).collect())
            }
            "sorted" => {
                let reverse =
                    keywords.iter().any(|(k, v)| k == "reverse" && matches!(v, Value::Py(PyValue::Bool(true))));
                match keywords.iter().find(|(k, _)| k == "key") {
                    Some((_, key)) if !matches!(key, Value::Py(PyValue::None)) => {
                        PyValue::list(self.sorted_by_key(items, key, reverse, span)?)
                    }
                    _ => PyValue::list(self.sorted(items, reverse, span)?),
                }
            }
            "reversed" => PyValue::list(items.into_iter().rev().collect()),
            "all" | "any" => {
                let want = name == "any";
                for v in &items {
                    if self.truth_of(v, span)? == want {
                        return Ok(PyValue::Bool(want));
                    }
                }
                PyValue::Bool(!want)
            }
            _ => PyValue::None,
        })
    }

    /// The items in the order of their keys (`key(item)`), stable.
    fn sorted_by_key(&mut self, items: Vec<PyValue>, key: &Value, reverse: bool, span: Span) -> R<Vec<PyValue>> {
        let mut keyed = Vec::with_capacity(items.len());
        for item in items {
            let k = self.call_value(key.clone(), vec![Value::Py(item.clone())], span)?;
            let k = self.to_py(k, span)?;
            keyed.push(PyValue::tuple(vec![k, item]));
        }
        // Pairs compare by key first; equal keys keep their order (the sort is stable and the
        // index breaks no tie: compare only the keys).
        let mut indexed: Vec<(usize, PyValue)> = keyed.into_iter().enumerate().collect();
        let mut failed = None;
        indexed.sort_by(|(_, a), (_, b)| {
            let (ka, kb) = (&a.items().unwrap_or_default()[0], &b.items().unwrap_or_default()[0]);
            python_order(ka, kb, &mut failed)
        });
        if let Some(err) = failed {
            return Err(self.op_error(span, err));
        }
        let mut out: Vec<PyValue> =
            indexed.into_iter().map(|(_, pair)| pair.items().map(|p| p[1].clone()).unwrap_or(PyValue::None)).collect();
        if reverse {
            out.reverse();
        }
        Ok(out)
    }

    /// Calls a callable value (a function of the compilation, a lambda) with `args`.
    fn call_value(&mut self, callee: Value, args: Vec<Value>, span: Span) -> R<Value> {
        match callee {
            Value::Function(id) => self.call_function(id, args, Vec::new(), span),
            Value::Lambda(closure) => self.call_lambda(&closure, args, span),
            _ => Err(self.trace_error(
                span,
                "onnxsc calls only functions of the module and lambdas here",
                "not callable at trace time",
                "pass a lambda or a function of the module",
            )),
        }
    }

    /// The items in Python's order (`<`), stable.
    fn sorted(&self, mut items: Vec<PyValue>, reverse: bool, span: Span) -> R<Vec<PyValue>> {
        let mut failed = None;
        items.sort_by(|a, b| python_order(a, b, &mut failed));
        if let Some(err) = failed {
            return Err(self.op_error(span, err));
        }
        if reverse {
            items.reverse();
        }
        Ok(items)
    }

    /// `isinstance(v, T)` for the types Python code over static values tests: `int`, `float`,
    /// `bool`, `str`, `list`, `tuple`, `Sequence`, a tensor (`ir.Value`), or a tuple of them.
    fn isinstance(&mut self, e: &Expr, args: &[Arg]) -> R<PyValue> {
        let [value, types] = args else {
            return Err(self.python_error(e.span, "TypeError: isinstance expected 2 arguments"));
        };
        let v = self.py(&value.value)?;
        let names: Vec<&Expr> = match &types.value.kind {
            ExprKind::Tuple(items) => items.iter().collect(),
            _ => vec![&types.value],
        };
        for t in names {
            let shown = t.dotted_name().unwrap_or_default();
            let last = shown.rsplit('.').next().unwrap_or_default();
            let typing = matches!(self.names.get(last), Some(Global::Typing(_)));
            let is = match last {
                "int" => matches!(v, PyValue::Int(_) | PyValue::Bool(_) | PyValue::DType(_)),
                "float" => matches!(v, PyValue::Float(_)),
                "bool" => matches!(v, PyValue::Bool(_)),
                "str" => matches!(v, PyValue::Str(_)),
                "list" | "List" => matches!(&v, PyValue::List(s) if !s.is_tuple()),
                "tuple" | "Tuple" => matches!(&v, PyValue::List(s) if s.is_tuple()),
                "Sequence" if typing || shown.contains("abc") => matches!(v, PyValue::List(_) | PyValue::Str(_)),
                "Value" | "TensorType" | "SymbolicTensor" => matches!(v, PyValue::Graph(_)),
                "SymbolicDim" => matches!(v, PyValue::SymDim(_)),
                "DataType" => matches!(v, PyValue::DType(_)),
                _ => {
                    return Err(self.trace_error(
                        t.span,
                        format!("onnxsc does not know the type `{shown}` for `isinstance`"),
                        "not a type onnxsc tests",
                        "test against `int`, `float`, `bool`, `str`, `list`, `tuple`, `Sequence` or `ir.Value`",
                    ))
                }
            };
            if is {
                return Ok(PyValue::Bool(true));
            }
        }
        Ok(PyValue::Bool(false))
    }

    /// The arguments of a constant-library call.
    pub(super) fn members(&mut self, args: &[Arg]) -> R<Args> {
        let mut bound = Args { positional: Vec::new(), keywords: Vec::new() };
        let (positional, keywords) = self.arguments(args)?;
        let member = |ev: &mut Self, v: Value| -> R<Member> {
            Ok(match v {
                Value::Py(PyValue::DType(t)) => Member::Value(PyValue::Int(i128::from(t.code()))),
                Value::Py(v) => Member::Value(v),
                Value::Lib(p) => Member::Object(p),
                other => Member::Value(ev.to_py(other, Span::default())?),
            })
        };
        for v in positional {
            bound.positional.push(member(self, v)?);
        }
        for (k, v) in keywords {
            bound.keywords.push((k, member(self, v)?));
        }
        Ok(bound)
    }
}

/// How Python's `sorted` orders `a` and `b`: by `<` alone. The first comparison Python would
/// raise for (`1 < "a"`) is kept in `failed`, and the pair then counts as equal.
fn python_order(a: &PyValue, b: &PyValue, failed: &mut Option<super::pyops::OpError>) -> Ordering {
    match compare(CmpOp::Lt, a, b) {
        Ok(true) => Ordering::Less,
        Ok(false) if compare(CmpOp::Lt, b, a).unwrap_or(false) => Ordering::Greater,
        Ok(false) => Ordering::Equal,
        Err(e) => {
            failed.get_or_insert(e);
            Ordering::Equal
        }
    }
}
