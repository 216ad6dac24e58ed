//! The constructs with a scope of their own, and the containers only they and trace-time code
//! make: comprehensions (list, set, dict, and generators, which evaluate to lists: every
//! consumer onnxsc knows takes all their items), lambdas (closures over the values of the
//! variables they see when they are made), dictionaries and sets (a set is a list of distinct
//! items, in the order they were first given).
//!
//! A comprehension's targets are its own: they are bound in the evaluation's [`Eval::scope`],
//! which hides locals and globals of the same name and is dropped when the comprehension ends,
//! as Python drops them.

use super::graph::Frame;
use super::pyops::equal;
use super::{ConstError, Eval, Value, R};
use crate::diagnostics::{codes, Diagnostic};
use crate::sema::value::PyValue;
use crate::source::Span;
use crate::syntax::ast::*;
use std::sync::Arc;

/// The most items of comprehensions one compile-time evaluation goes over (at trace time, the
/// trace's step limit counts them).
const MAX_CONSTANT_STEPS: u64 = 1 << 22;

/// A lambda made at trace time: where it is written (in function `function`) and the values of
/// the variables it sees there.
#[derive(Debug)]
pub(super) struct Closure {
    pub function: usize,
    pub span: Span,
    pub captured: Vec<(String, Value)>,
}

/// A dictionary's items, in insertion order.
pub(super) type Dict = Arc<Vec<(PyValue, Value)>>;

impl Eval<'_, '_, '_> {
    /// Counts one item of a comprehension against the limit of the time it runs at.
    fn comprehension_step(&mut self, span: Span) -> R<()> {
        if self.trace.is_some() {
            return self.step(span);
        }
        self.constant_steps += 1;
        if self.constant_steps <= MAX_CONSTANT_STEPS {
            return Ok(());
        }
        Err(ConstError::Failed(Box::new(
            Diagnostic::error(
                codes::CONSTANT_TOO_LARGE,
                self.file(),
                format!("this constant takes more than {MAX_CONSTANT_STEPS} steps of comprehensions to compute"),
            )
            .primary(span, "still going here")
            .help("a module constant must be cheap to compute: iterate over fewer items"),
        )))
    }

    /// `[e for ...]`, `{e for ...}`, `{k: v for ...}`, `(e for ...)`.
    pub(super) fn comprehension(
        &mut self,
        kind: CompKind,
        element: &Expr,
        value: Option<&Expr>,
        generators: &[CompFor],
    ) -> R<Value> {
        let mut out = Vec::new();
        let mark = self.scope.len();
        let made = self.generate(generators, element, value, &mut out);
        self.scope.truncate(mark);
        made?;
        Ok(match kind {
            CompKind::List | CompKind::Generator => Value::Py(PyValue::list(out.into_iter().map(|(k, _)| k).collect())),
            CompKind::Set => Value::Py(distinct(out.into_iter().map(|(k, _)| k))),
            CompKind::Dict => {
                let mut items: Vec<(PyValue, Value)> = Vec::new();
                for (k, v) in out {
                    insert(&mut items, k, v.unwrap_or(Value::Py(PyValue::None)));
                }
                Value::Dict(Arc::new(items))
            }
        })
    }

    /// The items of the generators from `generators[0]` on, each made of `element` (and `value`
    /// for a dict), appended to `out`.
    fn generate(
        &mut self,
        generators: &[CompFor],
        element: &Expr,
        value: Option<&Expr>,
        out: &mut Vec<(PyValue, Option<Value>)>,
    ) -> R<()> {
        let Some((g, rest)) = generators.split_first() else {
            let k = self.py(element)?;
            let v = match value {
                Some(v) => Some(self.eval(v)?),
                None => None,
            };
            out.push((k, v));
            return Ok(());
        };
        let items = self.eval(&g.iter)?;
        let items = self.items_of(items, g.iter.span)?;
        for item in items {
            self.comprehension_step(g.span)?;
            let mark = self.scope.len();
            self.bind_scoped(&g.target, item)?;
            let mut keep = true;
            for test in &g.ifs {
                if !self.test(test)? {
                    keep = false;
                    break;
                }
            }
            if keep {
                self.generate(rest, element, value, out)?;
            }
            self.scope.truncate(mark);
        }
        Ok(())
    }

    /// The items a loop over `v` goes over: a dict's keys, or what [`Eval::iterate`] gives.
    pub(super) fn items_of(&mut self, v: Value, span: Span) -> R<Vec<PyValue>> {
        match v {
            Value::Dict(d) => Ok(d.iter().map(|(k, _)| k.clone()).collect()),
            other => {
                let v = self.to_py(other, span)?;
                self.iterate(&v, span)
            }
        }
    }

    /// Binds a comprehension's target (a name, or a tuple of targets) in its scope.
    fn bind_scoped(&mut self, target: &Expr, v: PyValue) -> R<()> {
        match &target.kind {
            ExprKind::Name(n) => {
                self.scope.push((n.clone(), Value::Py(v)));
                Ok(())
            }
            ExprKind::Tuple(targets) | ExprKind::List(targets) => {
                let items = self.iterate(&v, target.span)?;
                if items.len() != targets.len() {
                    let why =
                        format!("ValueError: cannot unpack {} values into {} targets", items.len(), targets.len());
                    return Err(self.python_error(target.span, &why));
                }
                for (t, item) in targets.iter().zip(items) {
                    self.bind_scoped(t, item)?;
                }
                Ok(())
            }
            _ => Err(self.python_error(target.span, "SyntaxError: cannot assign to this in a comprehension")),
        }
    }

    /// `{k: v, ...}`.
    pub(super) fn dict(&mut self, pairs: &[(Expr, Expr)]) -> R<Value> {
        let mut items = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let k = self.py(k)?;
            let v = self.eval(v)?;
            insert(&mut items, k, v);
        }
        Ok(Value::Dict(Arc::new(items)))
    }

    /// `{a, b, ...}`.
    pub(super) fn set(&mut self, items: &[Expr]) -> R<Value> {
        let mut values = Vec::with_capacity(items.len());
        for item in items {
            values.push(self.py(item)?);
        }
        Ok(Value::Py(distinct(values.into_iter())))
    }

    /// `d[k]`.
    pub(super) fn dict_item(&mut self, d: &Dict, key: &PyValue, span: Span) -> R<Value> {
        match d.iter().find(|(k, _)| equal(k, key).unwrap_or(false)) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(self.python_error(span, &format!("KeyError: {}", key.repr()))),
        }
    }

    /// A method of a dictionary, called: `get`, `items`, `keys`, `values`.
    pub(super) fn dict_method(&mut self, d: &Dict, name: &str, args: Vec<Value>, span: Span) -> R<Value> {
        let mut args = args.into_iter();
        Ok(match name {
            "get" => {
                let key = match args.next() {
                    Some(k) => self.to_py(k, span)?,
                    None => return Err(self.python_error(span, "TypeError: get expected at least 1 argument")),
                };
                let default = args.next().unwrap_or(Value::Py(PyValue::None));
                d.iter().find(|(k, _)| equal(k, &key).unwrap_or(false)).map(|(_, v)| v.clone()).unwrap_or(default)
            }
            "keys" => Value::Py(PyValue::list(d.iter().map(|(k, _)| k.clone()).collect())),
            "values" | "items" => {
                let mut out = Vec::with_capacity(d.len());
                for (k, v) in d.iter() {
                    let v = self.to_py(v.clone(), span)?;
                    out.push(if name == "items" { PyValue::tuple(vec![k.clone(), v]) } else { v });
                }
                Value::Py(PyValue::list(out))
            }
            other => {
                return Err(
                    self.python_error(span, &format!("AttributeError: 'dict' object has no attribute '{other}'"))
                )
            }
        })
    }

    /// `lambda params: body`, made at trace time inside a function: a closure over the
    /// variables it sees.
    pub(super) fn lambda(&mut self, e: &Expr) -> R<Value> {
        let function = self.trace.as_deref().and_then(|t| t.frames.last()).map(|f| f.function);
        let Some(function) = function else {
            return Err(self.unsupported(e.span, "a lambda", None));
        };
        let mut captured: Vec<(String, Value)> = self
            .trace
            .as_deref()
            .and_then(|t| t.frames.last())
            .map(|f| f.locals.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        captured.extend(self.scope.iter().cloned());
        Ok(Value::Lambda(Arc::new(Closure { function, span: e.span, captured })))
    }

    /// Calls a lambda with `args`: its body evaluated with its parameters bound over the
    /// variables it captured.
    pub(super) fn call_lambda(&mut self, closure: &Closure, args: Vec<Value>, span: Span) -> R<Value> {
        let Some(trace) = self.trace.as_deref_mut() else { return Err(ConstError::NotConstant(span)) };
        let Some((env, k)) = trace.function(closure.function) else { return Err(ConstError::NotConstant(span)) };
        let f = env.functions[k];
        let Some(ExprKind::Lambda { params, body }) =
            expr_at(&f.body, closure.span, &|e| matches!(e.kind, ExprKind::Lambda { .. })).map(|e| &e.kind)
        else {
            return Err(ConstError::NotConstant(span));
        };
        if trace.frames.len() >= trace.limits.depth {
            return Err(self.python_error(span, "RecursionError: maximum recursion depth exceeded"));
        }
        let mut locals: foldhash::HashMap<String, Value> = closure.captured.iter().cloned().collect();
        let plain: Vec<&Param> = params.iter().filter(|p| p.kind == ParamKind::Normal).collect();
        if args.len() > plain.len() {
            return Err(self.python_error(
                span,
                &format!(
                    "TypeError: <lambda>() takes {} positional arguments but {} were given",
                    plain.len(),
                    args.len()
                ),
            ));
        }
        let mut args = args.into_iter();
        let mut callee = Eval::new(env.names_for(f), self.trace.as_deref_mut());
        for p in plain {
            let v = match (args.next(), &p.default) {
                (Some(v), _) => v,
                (None, Some(d)) => callee.eval(d)?,
                (None, None) => {
                    return Err(callee.python_error(
                        span,
                        &format!("TypeError: <lambda>() missing required argument: '{}'", p.name.name),
                    ))
                }
            };
            locals.insert(p.name.name.clone(), v);
        }
        let frame = Frame { locals, assigned: Default::default(), function: closure.function };
        if let Some(t) = callee.trace.as_deref_mut() {
            t.frames.push(frame);
        }
        let result = callee.eval(body);
        if let Some(t) = callee.trace.as_deref_mut() {
            t.frames.pop();
        }
        result
    }
}

/// Appends `k: v`, replacing the value of an equal key (Python's dict keeps the first key).
fn insert(items: &mut Vec<(PyValue, Value)>, k: PyValue, v: Value) {
    match items.iter_mut().find(|(key, _)| equal(key, &k).unwrap_or(false)) {
        Some(slot) => slot.1 = v,
        None => items.push((k, v)),
    }
}

/// The distinct values, in the order first met: a set.
fn distinct(values: impl Iterator<Item = PyValue>) -> PyValue {
    let mut out: Vec<PyValue> = Vec::new();
    for v in values {
        if !out.iter().any(|o| equal(o, &v).unwrap_or(false)) {
            out.push(v);
        }
    }
    PyValue::list(out)
}
