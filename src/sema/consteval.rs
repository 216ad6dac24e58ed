//! The constant evaluator: the Python expressions that onnxscript evaluates when it compiles a
//! function — attribute arguments, parameter defaults, module constants — evaluated at compile
//! time, with Python's meaning.
//!
//! Arithmetic follows Python exactly: ints are exact (within 128 bits; beyond is E0116, never a
//! wrapped value), `//` and `%` floor, `/` is true division, float operations are IEEE doubles
//! with CPython's error cases (division by zero, a negative number to a fractional power). Names
//! are module globals; calls and attributes go to the named set of `sema::constlib`. Whatever
//! Python would raise is reported (E0114), with the exception's message.

use super::constlib::{self, Args, LibError, Member};
use super::env::{deferred_use, Global, Names};
use super::ndarray;
use super::resolve::resolve_dotted;
use super::value::{format_float, PyValue, MAX_CONSTANT_ELEMENTS};
use crate::diagnostics::{codes, Diagnostic, Reported};
use crate::onnx::ElemType;
use crate::source::Span;
use crate::syntax::ast::*;

/// Why an expression has no compile-time value.
#[derive(Debug)]
pub enum ConstError {
    /// It is not a compile-time value (a local variable, a tensor, an op call); the caller says
    /// what it needed there. The span is of the part that is not constant.
    NotConstant(Span),
    /// It uses a name whose definition failed (already reported).
    Poisoned(Reported),
    /// It cannot be evaluated (an unsupported call, a Python error, a limit): a complete error,
    /// for the caller to report as it is (with [`super::env::ConstReports::report`]).
    Failed(Box<Diagnostic>),
    /// It uses a module constant that Python computes but onnxsc cannot ([`Global::Deferred`]):
    /// that constant's error, marked where it is used, for the caller to report unless a use
    /// of it was reported already ([`super::env::ConstReports::report_deferred_use`]).
    DeferredUse(Box<Diagnostic>),
}

impl ConstError {
    /// The span of a non-constant part, if that is the failure.
    pub fn not_constant(&self) -> Option<Span> {
        match self {
            ConstError::NotConstant(s) => Some(*s),
            _ => None,
        }
    }
}

type R<T> = Result<T, ConstError>;

/// Evaluates a compile-time constant expression to a value.
pub fn eval_const(names: Names, e: &Expr) -> R<PyValue> {
    let ev = Eval { names };
    let v = ev.eval(e)?;
    ev.to_py(v, e.span)
}

/// Evaluates the right-hand side of a module-level assignment: a value, or an alias of a library
/// object (`F32 = np.float32`) or a tensor type.
pub fn eval_global(names: Names, e: &Expr) -> R<Global> {
    let ev = Eval { names };
    match ev.eval(e)? {
        Value::Py(v) => Ok(Global::Const(v)),
        Value::Lib(p) => Ok(Global::Lib(p)),
        Value::TensorType(t) => Ok(Global::TensorType(t)),
        Value::Method(..) => Err(ev.unsupported(e.span, "a bound method as a value", None)),
        Value::Other => Err(ConstError::NotConstant(e.span)),
    }
}

/// What an expression evaluates to: a Python value, or one of the objects that only appear on
/// the way to one (a module, a function, a method, a type).
#[derive(Clone, Debug)]
enum Value {
    Py(PyValue),
    /// A module, class or function of the constant library, by canonical path.
    Lib(String),
    /// A method of a value, not yet called (`arr.astype`).
    Method(PyValue, String),
    /// An onnxscript tensor type (`FLOAT`), whose `dtype` is a value.
    TensorType(ElemType),
    /// A global that is not a value (an opset, a function, a decorator).
    Other,
}

/// A failed operation, before it is located.
enum OpError {
    Python(String),
    Unsupported(String),
    Overflow,
    TooLarge(u64),
}

struct Eval<'e, 'm> {
    names: Names<'e, 'm>,
}

impl Eval<'_, '_> {
    fn file(&self) -> usize {
        self.names.file()
    }

    fn report(&self, d: Diagnostic) -> ConstError {
        ConstError::Failed(Box::new(d))
    }

    /// E0112: a construct or a library member outside what onnxsc evaluates.
    fn unsupported(&self, span: Span, what: &str, help: Option<String>) -> ConstError {
        let d = Diagnostic::error(
            codes::UNSUPPORTED_CONSTANT,
            self.file(),
            format!("onnxsc cannot evaluate {what} at compile time"),
        )
        .primary(span, "outside onnxsc's constant evaluator");
        let d = d.help(help.unwrap_or_else(|| {
            "constants may use literals, arithmetic, lists, tuples, indexing, f-strings, `math`, numpy constructors, `onnx.helper.make_tensor`, `TensorProto` and `ir.DataType` members, and `ir.tensor` (see docs/language.md)".to_string()
        }));
        self.report(d)
    }

    fn python_error(&self, span: Span, message: &str) -> ConstError {
        let (kind, text) = message.split_once(": ").filter(|(k, _)| k.ends_with("Error")).unwrap_or(("", message));
        let what = if kind.is_empty() { "an error".to_string() } else { format!("`{kind}`") };
        self.report(
            Diagnostic::error(
                codes::CONSTANT_ERROR,
                self.file(),
                format!("this constant raises {what} in Python: {text}"),
            )
            .primary(span, "evaluated when the module is imported")
            .help("fix the expression: onnxscript cannot compile a function whose constants raise"),
        )
    }

    fn too_large(&self, span: Span, n: u64) -> ConstError {
        self.report(too_large(self.file(), span, n))
    }

    fn overflow(&self, span: Span) -> ConstError {
        self.report(
            Diagnostic::error(codes::INTEGER_OVERFLOW, self.file(), "integer overflow in a constant")
                .primary(span, "the exact result does not fit in 128 bits")
                .help("onnxsc computes Python ints exactly up to 128 bits; ONNX integers have at most 64"),
        )
    }

    fn op_error(&self, span: Span, e: OpError) -> ConstError {
        match e {
            OpError::Python(m) => self.python_error(span, &m),
            OpError::Unsupported(m) => self.unsupported(span, &m, None),
            OpError::Overflow => self.overflow(span),
            OpError::TooLarge(n) => self.too_large(span, n),
        }
    }

    fn lib_error(&self, span: Span, shown: &str, e: LibError) -> ConstError {
        match e {
            LibError::Python(m) => self.python_error(span, &m),
            LibError::Unsupported(m) => self.unsupported(span, &format!("{m} (in `{shown}`)"), None),
            LibError::TooLarge(n) => self.too_large(span, n),
            LibError::RunTime => self.run_time(span, shown),
        }
    }

    /// E0113: a value that is different at every run.
    fn run_time(&self, span: Span, shown: &str) -> ConstError {
        self.report(
            Diagnostic::error(codes::RUN_TIME_VALUE, self.file(), format!("`{shown}` is not known until the code runs"))
                .primary(span, "a different value at every run")
                .help("onnxscript would bake the value of one import into the function; make it an input, or compute it with an ONNX op such as `op.RandomUniform`"),
        )
    }

    /// The value of a finished evaluation, or why it is not one.
    fn to_py(&self, v: Value, span: Span) -> R<PyValue> {
        match v {
            Value::Py(v) => Ok(v),
            Value::Lib(p) if constlib::is_run_time(&p) => Err(self.run_time(span, &p)),
            Value::Lib(p) => Err(self.unsupported(span, &format!("`{}` as a value", constlib::display(&p)), None)),
            Value::Method(_, m) => Err(self.unsupported(span, &format!("the method `{m}` as a value"), None)),
            Value::TensorType(_) | Value::Other => Err(ConstError::NotConstant(span)),
        }
    }

    fn py(&self, e: &Expr) -> R<PyValue> {
        let v = self.eval(e)?;
        self.to_py(v, e.span)
    }

    fn global(&self, g: Global, span: Span) -> R<Value> {
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
            _ => Value::Other,
        })
    }

    fn eval(&self, e: &Expr) -> R<Value> {
        let py = |v: PyValue| Ok(Value::Py(v));
        match &e.kind {
            ExprKind::Int(i) => py(PyValue::Int(i.get())),
            ExprKind::Float(f) => py(PyValue::Float(*f)),
            ExprKind::Bool(b) => py(PyValue::Bool(*b)),
            ExprKind::Str(s) => py(PyValue::str(s)),
            ExprKind::None => py(PyValue::None),
            ExprKind::Ellipsis => Err(self.unsupported(e.span, "`...`", None)),
            ExprKind::FString(parts) => py(PyValue::str(&self.fstring(parts)?)),
            ExprKind::Name(n) => match self.names.get(n) {
                Some(g) => self.global(g.clone(), e.span),
                None => match constlib::builtin(n) {
                    Some(p) => Ok(Value::Lib(p)),
                    None => Err(ConstError::NotConstant(e.span)),
                },
            },
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
                unary(*op, &v).map(Value::Py).map_err(|err| self.op_error(e.span, err))
            }
            ExprKind::BinOp { op, left, right } => {
                let l = self.py(left)?;
                let r = self.py(right)?;
                binop(*op, &l, &r).map(Value::Py).map_err(|err| self.op_error(e.span, err))
            }
            ExprKind::BoolOp { op, values } => {
                let mut last = PyValue::None;
                for v in values {
                    last = self.py(v)?;
                    let t = truth(&last).map_err(|err| self.op_error(v.span, err))?;
                    if (*op == BoolOp::And && !t) || (*op == BoolOp::Or && t) {
                        break;
                    }
                }
                py(last)
            }
            ExprKind::Compare { left, comparisons } => {
                let mut l = self.py(left)?;
                for (op, right) in comparisons {
                    let r = self.py(right)?;
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
                if truth(&t).map_err(|err| self.op_error(test.span, err))? {
                    self.eval(body)
                } else {
                    self.eval(orelse)
                }
            }
            ExprKind::Subscript { value, index } => {
                let v = self.py(value)?;
                self.subscript(e, &v, index).map(Value::Py)
            }
            ExprKind::Dict(_) => Err(self.unsupported(e.span, "a dictionary", None)),
            ExprKind::Set(_) => Err(self.unsupported(e.span, "a set", None)),
            ExprKind::Lambda { .. } => Err(self.unsupported(e.span, "a lambda", None)),
            ExprKind::Comprehension { .. } => Err(self.unsupported(e.span, "a comprehension", None)),
            ExprKind::Starred(_) => Err(self.unsupported(e.span, "a starred expression here", None)),
            ExprKind::Slice { .. } => Err(self.unsupported(e.span, "a slice outside a subscript", None)),
        }
    }

    fn attribute(&self, e: &Expr, value: &Expr, attr: &Ident) -> R<Value> {
        // Names and modules: `np.pi`, `onnx.TensorProto.FLOAT`, `mylib.SCALE`, `FLOAT.dtype`.
        if e.dotted_name().is_some() {
            if let Some(g) = resolve_dotted(self.names, e) {
                return self.global(g, e.span);
            }
        }
        let base = self.eval(value)?;
        match base {
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
            Value::Method(..) => Err(self.unsupported(attr.span, "an attribute of a method", None)),
            // `op.Constant`: an op, computed at run time (the caller decides).
            Value::Other => Ok(Value::Other),
            Value::TensorType(_) => Err(ConstError::NotConstant(e.span)),
        }
    }

    fn call(&self, e: &Expr, func: &Expr, args: &[Arg]) -> R<Value> {
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
            Value::Other => return Err(ConstError::NotConstant(e.span)),
        };
        match result {
            Ok(Member::Value(v)) => Ok(Value::Py(v)),
            Ok(Member::Object(o)) => Ok(Value::Lib(o)),
            Err(err) => Err(self.lib_error(e.span, &shown, err)),
        }
    }

    fn argument(&self, e: &Expr) -> R<Member> {
        Ok(match self.eval(e)? {
            Value::Py(v) => Member::Value(v),
            Value::Lib(p) => Member::Object(p),
            other => Member::Value(self.to_py(other, e.span)?),
        })
    }

    fn fstring(&self, parts: &[FStringPart]) -> R<String> {
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

    fn subscript(&self, e: &Expr, v: &PyValue, index: &Expr) -> R<PyValue> {
        let len = match v {
            PyValue::Str(s) => s.chars().count(),
            PyValue::List(s) => s.len(),
            other => {
                return Err(self.unsupported(e.span, &format!("indexing a {}", other.type_name()), None));
            }
        };
        if let ExprKind::Slice { lower, upper, step } = &index.kind {
            let bound = |b: &Option<Box<Expr>>| -> R<Option<i128>> {
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

// -------------------------------------------------------------------------------------------------
// Python's operators

/// Python's truth value (`bool(v)`).
fn truth(v: &PyValue) -> Result<bool, OpError> {
    v.truth().map_err(OpError::Python)
}

/// A number as Python's numeric tower sees it.
enum Num {
    Int(i128),
    Float(f64),
}

fn num(v: &PyValue) -> Option<Num> {
    match v {
        PyValue::Int(i) => Some(Num::Int(*i)),
        PyValue::Bool(b) => Some(Num::Int(*b as i128)),
        PyValue::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

fn numpy_error(e: ndarray::NumpyError) -> OpError {
    match e {
        ndarray::NumpyError::Python(m) => OpError::Python(m),
        ndarray::NumpyError::Unsupported(m) => OpError::Unsupported(m),
    }
}

fn unary(op: UnaryOp, v: &PyValue) -> Result<PyValue, OpError> {
    if let (UnaryOp::Neg, PyValue::Tensor(t)) = (op, v) {
        return ndarray::negate(t).map_err(numpy_error);
    }
    match (op, num(v)) {
        (UnaryOp::Not, _) => Ok(PyValue::Bool(!truth(v)?)),
        (UnaryOp::Neg, Some(Num::Int(i))) => i.checked_neg().map(PyValue::Int).ok_or(OpError::Overflow),
        (UnaryOp::Neg, Some(Num::Float(f))) => Ok(PyValue::Float(-f)),
        (UnaryOp::Pos, Some(Num::Int(i))) => Ok(PyValue::Int(i)),
        (UnaryOp::Pos, Some(Num::Float(f))) => Ok(PyValue::Float(f)),
        (UnaryOp::Invert, Some(Num::Int(i))) => Ok(PyValue::Int(!i)),
        (op, _) => Err(OpError::Python(format!(
            "TypeError: bad operand type for unary {}: '{}'",
            match op {
                UnaryOp::Neg => "-",
                UnaryOp::Pos => "+",
                _ => "~",
            },
            v.type_name()
        ))),
    }
}

fn type_error(op: BinOp, l: &PyValue, r: &PyValue) -> OpError {
    OpError::Python(format!(
        "TypeError: unsupported operand type(s) for {}: '{}' and '{}'",
        op.symbol(),
        l.type_name(),
        r.type_name()
    ))
}

fn binop(op: BinOp, l: &PyValue, r: &PyValue) -> Result<PyValue, OpError> {
    use PyValue as P;
    if matches!(l, P::Tensor(_)) || matches!(r, P::Tensor(_)) {
        return ndarray::binop(op, l, r).map_err(numpy_error);
    }
    // bool & | ^ bool stays a bool.
    if let (P::Bool(a), P::Bool(b)) = (l, r) {
        match op {
            BinOp::BitAnd => return Ok(P::Bool(a & b)),
            BinOp::BitOr => return Ok(P::Bool(a | b)),
            BinOp::BitXor => return Ok(P::Bool(a ^ b)),
            _ => {}
        }
    }
    match (num(l), num(r)) {
        (Some(Num::Int(a)), Some(Num::Int(b))) => int_op(op, a, b),
        (Some(a), Some(b)) => {
            let to_f = |n: Num| match n {
                Num::Int(i) => i as f64,
                Num::Float(f) => f,
            };
            float_op(op, to_f(a), to_f(b), l, r)
        }
        _ => sequence_op(op, l, r),
    }
}

fn int_op(op: BinOp, a: i128, b: i128) -> Result<PyValue, OpError> {
    let zero = || OpError::Python("ZeroDivisionError: integer division or modulo by zero".into());
    let v = match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mult => a.checked_mul(b),
        BinOp::FloorDiv => {
            if b == 0 {
                return Err(zero());
            }
            let q = a.checked_div(b).ok_or(OpError::Overflow)?;
            Some(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
        }
        BinOp::Mod => {
            if b == 0 {
                return Err(zero());
            }
            let m = a.checked_rem(b).unwrap_or(0);
            Some(if m != 0 && ((m < 0) != (b < 0)) { m + b } else { m })
        }
        BinOp::Div => {
            if b == 0 {
                return Err(OpError::Python("ZeroDivisionError: division by zero".into()));
            }
            // Exact operands give a correctly rounded quotient, as CPython's.
            const EXACT: i128 = 1 << 53;
            if a.abs() > EXACT || b.abs() > EXACT {
                return Err(OpError::Unsupported("`/` on integers beyond 2**53 (use `//`)".into()));
            }
            return Ok(PyValue::Float(a as f64 / b as f64));
        }
        BinOp::Pow => {
            if b < 0 {
                if a == 0 {
                    return Err(OpError::Python("ZeroDivisionError: 0.0 cannot be raised to a negative power".into()));
                }
                return Ok(PyValue::Float((a as f64).powf(b as f64)));
            }
            match a {
                0 | 1 => Some(if b == 0 { 1 } else { a }),
                -1 => Some(if b % 2 == 0 { 1 } else { -1 }),
                _ => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
            }
        }
        BinOp::BitAnd => Some(a & b),
        BinOp::BitOr => Some(a | b),
        BinOp::BitXor => Some(a ^ b),
        BinOp::LShift => {
            if b < 0 {
                return Err(OpError::Python("ValueError: negative shift count".into()));
            }
            if a == 0 {
                Some(0)
            } else if b >= 127 {
                None
            } else {
                a.checked_mul(1i128 << b)
            }
        }
        BinOp::RShift => {
            if b < 0 {
                return Err(OpError::Python("ValueError: negative shift count".into()));
            }
            Some(if b >= 127 {
                if a < 0 {
                    -1
                } else {
                    0
                }
            } else {
                a >> b
            })
        }
        BinOp::MatMult => return Err(type_error(op, &PyValue::Int(a), &PyValue::Int(b))),
    };
    v.map(PyValue::Int).ok_or(OpError::Overflow)
}

fn float_op(op: BinOp, a: f64, b: f64, l: &PyValue, r: &PyValue) -> Result<PyValue, OpError> {
    let zero = |what: &str| OpError::Python(format!("ZeroDivisionError: {what}"));
    let v = match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mult => a * b,
        BinOp::Div => {
            if b == 0.0 {
                return Err(zero("float division by zero"));
            }
            a / b
        }
        BinOp::FloorDiv | BinOp::Mod => {
            if b == 0.0 {
                return Err(zero("float floor division by zero"));
            }
            let (div, m) = float_divmod(a, b);
            if op == BinOp::FloorDiv {
                div
            } else {
                m
            }
        }
        BinOp::Pow => {
            if a == 0.0 && b < 0.0 {
                return Err(zero("0.0 cannot be raised to a negative power"));
            }
            if a < 0.0 && a.is_finite() && b.is_finite() && b.fract() != 0.0 {
                return Err(OpError::Unsupported(
                    "a negative number to a fractional power (a complex number in Python)".into(),
                ));
            }
            let v = a.powf(b);
            if v.is_infinite() && a.is_finite() && b.is_finite() {
                return Err(OpError::Python("OverflowError: (34, 'Numerical result out of range')".into()));
            }
            v
        }
        _ => return Err(type_error(op, l, r)),
    };
    Ok(PyValue::Float(v))
}

/// CPython's `float_divmod`: floor division and modulo with the sign of the divisor.
fn float_divmod(vx: f64, wx: f64) -> (f64, f64) {
    let mut m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = 0f64.copysign(wx);
    }
    let floordiv = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0f64.copysign(vx / wx)
    };
    (floordiv, m)
}

fn sequence_op(op: BinOp, l: &PyValue, r: &PyValue) -> Result<PyValue, OpError> {
    use PyValue as P;
    let repeat = |n: i128| -> Result<usize, OpError> { Ok(n.max(0) as usize) };
    match (op, l, r) {
        (BinOp::Add, P::Str(a), P::Str(b)) => {
            let len = (a.len() + b.len()) as u64;
            if len > MAX_CONSTANT_ELEMENTS {
                return Err(OpError::TooLarge(len));
            }
            Ok(P::str(&format!("{a}{b}")))
        }
        (BinOp::Add, P::List(a), P::List(b)) if a.is_tuple() == b.is_tuple() => {
            let len = (a.len() + b.len()) as u64;
            if len > MAX_CONSTANT_ELEMENTS {
                return Err(OpError::TooLarge(len));
            }
            let items: Vec<PyValue> = a.items().iter().chain(b.items()).cloned().collect();
            Ok(if a.is_tuple() { P::tuple(items) } else { P::list(items) })
        }
        (BinOp::Mult, P::Str(s), n @ (P::Int(_) | P::Bool(_)))
        | (BinOp::Mult, n @ (P::Int(_) | P::Bool(_)), P::Str(s)) => {
            let n = repeat(n.as_f64().unwrap_or(0.0) as i128)?;
            let len = (s.len() as u64).saturating_mul(n as u64);
            if len > MAX_CONSTANT_ELEMENTS {
                return Err(OpError::TooLarge(len));
            }
            Ok(P::str(&s.repeat(n)))
        }
        (BinOp::Mult, seq @ P::List(_), n @ (P::Int(_) | P::Bool(_)))
        | (BinOp::Mult, n @ (P::Int(_) | P::Bool(_)), seq @ P::List(_)) => {
            let count = match n {
                P::Int(i) => *i,
                P::Bool(b) => *b as i128,
                _ => 0,
            };
            let items = seq.items().unwrap_or(&[]);
            let len = (items.len() as u128).saturating_mul(count.max(0) as u128);
            if len > MAX_CONSTANT_ELEMENTS as u128 {
                return Err(OpError::TooLarge(len.min(u64::MAX as u128) as u64));
            }
            let out: Vec<PyValue> = (0..count.max(0)).flat_map(|_| items.iter().cloned()).collect();
            Ok(if matches!(seq, P::List(s) if s.is_tuple()) { P::tuple(out) } else { P::list(out) })
        }
        (BinOp::Mod, P::Str(_), _) => Err(OpError::Unsupported("`%`-formatting of strings (use an f-string)".into())),
        _ => Err(type_error(op, l, r)),
    }
}

/// Python's `==` on two values.
fn equal(l: &PyValue, r: &PyValue) -> Result<bool, OpError> {
    use PyValue as P;
    Ok(match (l, r) {
        (P::Tensor(_), _) | (_, P::Tensor(_)) => {
            return Err(OpError::Unsupported("comparing numpy arrays or tensors".into()))
        }
        (P::Str(a), P::Str(b)) => a == b,
        (P::None, P::None) => true,
        (P::List(a), P::List(b)) if a.is_tuple() == b.is_tuple() => {
            if a.ptr_eq(b) {
                return Ok(true);
            }
            if a.len() != b.len() {
                return Ok(false);
            }
            for (x, y) in a.items().iter().zip(b.items()) {
                if !equal(x, y)? {
                    return Ok(false);
                }
            }
            true
        }
        _ => match (num(l), num(r)) {
            (Some(a), Some(b)) => num_cmp(&a, &b) == Some(std::cmp::Ordering::Equal),
            _ => false,
        },
    })
}

/// Exact comparison of two numbers, as Python compares an int with a float (not through a
/// rounding conversion). `None` when a NaN is involved.
fn num_cmp(a: &Num, b: &Num) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(y),
        (Num::Int(i), Num::Float(f)) => int_float_cmp(*i, *f),
        (Num::Float(f), Num::Int(i)) => int_float_cmp(*i, *f).map(|o| o.reverse()),
    }
}

fn int_float_cmp(i: i128, f: f64) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 { Ordering::Less } else { Ordering::Greater });
    }
    if f.fract() == 0.0 {
        if f.abs() < 2f64.powi(127) {
            return Some(i.cmp(&(f as i128)));
        }
        return Some(if f > 0.0 { Ordering::Less } else { Ordering::Greater });
    }
    // A float with a fraction is below 2**53 in magnitude; `i as f64` keeps the order.
    (i as f64).partial_cmp(&f)
}

fn compare(op: CmpOp, l: &PyValue, r: &PyValue) -> Result<bool, OpError> {
    use std::cmp::Ordering;
    let order = |l: &PyValue, r: &PyValue| -> Result<Option<Ordering>, OpError> {
        match (l, r) {
            (PyValue::Str(a), PyValue::Str(b)) => Ok(Some(a.cmp(b))),
            _ => match (num(l), num(r)) {
                (Some(a), Some(b)) => Ok(num_cmp(&a, &b)),
                _ => Err(OpError::Python(format!(
                    "TypeError: '{}' not supported between instances of '{}' and '{}'",
                    "<",
                    l.type_name(),
                    r.type_name()
                ))),
            },
        }
    };
    Ok(match op {
        CmpOp::Eq => equal(l, r)?,
        CmpOp::NotEq => !equal(l, r)?,
        CmpOp::Lt => order(l, r)? == Some(Ordering::Less),
        CmpOp::LtE => matches!(order(l, r)?, Some(Ordering::Less | Ordering::Equal)),
        CmpOp::Gt => order(l, r)? == Some(Ordering::Greater),
        CmpOp::GtE => matches!(order(l, r)?, Some(Ordering::Greater | Ordering::Equal)),
        CmpOp::Is | CmpOp::IsNot => {
            let same = match (l, r) {
                (PyValue::None, PyValue::None) => true,
                (PyValue::Bool(a), PyValue::Bool(b)) => a == b,
                (PyValue::None, _) | (_, PyValue::None) | (PyValue::Bool(_), _) | (_, PyValue::Bool(_)) => false,
                _ => {
                    return Err(OpError::Unsupported(
                        "`is` between values other than `None`, `True` and `False`".into(),
                    ))
                }
            };
            same == (op == CmpOp::Is)
        }
        CmpOp::In | CmpOp::NotIn => {
            let found = match r {
                PyValue::Str(hay) => match l {
                    PyValue::Str(needle) => hay.contains(&**needle),
                    other => {
                        return Err(OpError::Python(format!(
                            "TypeError: 'in <string>' requires string as left operand, not {}",
                            other.type_name()
                        )))
                    }
                },
                PyValue::List(s) => {
                    let mut found = false;
                    for item in s.items() {
                        if equal(l, item)? {
                            found = true;
                            break;
                        }
                    }
                    found
                }
                other => {
                    return Err(OpError::Python(format!(
                        "TypeError: argument of type '{}' is not iterable",
                        other.type_name()
                    )))
                }
            };
            found == (op == CmpOp::In)
        }
    })
}

/// `format(value, spec)` for the format specifications constants use: empty, a type among
/// `d s f e g %`, with an optional sign, width, `,`/`_` grouping is not supported.
fn format_value(v: &PyValue, spec: &str) -> Result<String, OpError> {
    if spec.is_empty() {
        return Ok(v.to_str());
    }
    let unsupported = || OpError::Unsupported(format!("the format specification `{spec}`"));
    // [[fill]align][sign][0][width][.precision][type]
    let mut rest = spec;
    let mut fill = ' ';
    let mut align = None;
    let chars: Vec<char> = rest.chars().collect();
    if chars.len() >= 2 && matches!(chars[1], '<' | '>' | '^' | '=') {
        fill = chars[0];
        align = Some(chars[1]);
        rest = &rest[chars[0].len_utf8() + 1..];
    } else if chars.first().is_some_and(|c| matches!(c, '<' | '>' | '^' | '=')) {
        align = chars.first().copied();
        rest = &rest[1..];
    }
    let mut sign = '-';
    if let Some(c) = rest.chars().next().filter(|c| matches!(c, '+' | '-' | ' ')) {
        sign = c;
        rest = &rest[1..];
    }
    if let Some(r) = rest.strip_prefix('0') {
        fill = '0';
        align = align.or(Some('='));
        rest = r;
    }
    let width_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let width: usize = if width_end > 0 { rest[..width_end].parse().map_err(|_| unsupported())? } else { 0 };
    rest = &rest[width_end..];
    let mut precision = None;
    if let Some(r) = rest.strip_prefix('.') {
        let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        let p = r[..end].parse::<usize>().map_err(|_| unsupported())?;
        if p as u64 > MAX_CONSTANT_ELEMENTS {
            return Err(OpError::TooLarge(p as u64));
        }
        precision = Some(p);
        rest = &r[end..];
    }
    let ty = match rest {
        "" => None,
        t if t.len() == 1 => t.chars().next(),
        _ => return Err(unsupported()),
    };
    let number = |f: f64| -> Result<(bool, String), OpError> {
        let neg = f.is_sign_negative() && !(f == 0.0 && ty != Some('f'));
        let a = f.abs();
        let body = match ty {
            Some('f') | Some('F') => format!("{:.*}", precision.unwrap_or(6), a),
            Some('e') | Some('E') => {
                let s = format!("{:.*e}", precision.unwrap_or(6), a);
                let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                let e: i32 = e.parse().unwrap_or(0);
                format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
            }
            Some('%') => format!("{:.*}%", precision.unwrap_or(6), a * 100.0),
            None if precision.is_none() => format_float(a),
            _ => return Err(unsupported()),
        };
        Ok((neg, body))
    };
    let (negative, body, numeric) = match (v, ty) {
        (PyValue::Str(s), None | Some('s')) => {
            let s: String = match precision {
                Some(p) => s.chars().take(p).collect(),
                None => s.clone(),
            };
            (false, s, false)
        }
        (PyValue::Int(i), None | Some('d')) if precision.is_none() => (*i < 0, i.unsigned_abs().to_string(), true),
        (PyValue::Bool(b), None) if precision.is_none() => {
            (false, if *b { "True" } else { "False" }.to_string(), false)
        }
        (PyValue::Int(i), Some('f' | 'F' | 'e' | 'E' | '%')) => {
            let (n, b) = number(*i as f64)?;
            (n, b, true)
        }
        (PyValue::Float(f), _) => {
            let (n, b) = number(*f)?;
            (n, b, true)
        }
        _ => return Err(unsupported()),
    };
    let sign_text = match (negative, sign) {
        (true, _) => "-",
        (false, '+') if numeric => "+",
        (false, ' ') if numeric => " ",
        _ => "",
    };
    let content_len = sign_text.chars().count() + body.chars().count();
    let pad = width.saturating_sub(content_len);
    if pad as u64 > MAX_CONSTANT_ELEMENTS {
        return Err(OpError::TooLarge(pad as u64));
    }
    let fill_str = |n: usize| fill.to_string().repeat(n);
    let align = align.unwrap_or(if numeric { '>' } else { '<' });
    Ok(match align {
        '<' => format!("{sign_text}{body}{}", fill_str(pad)),
        '^' => format!("{}{sign_text}{body}{}", fill_str(pad / 2), fill_str(pad - pad / 2)),
        '=' => format!("{sign_text}{}{body}", fill_str(pad)),
        _ => format!("{}{sign_text}{body}", fill_str(pad)),
    })
}

/// E0115: a constant of `n` elements, over [`MAX_CONSTANT_ELEMENTS`].
pub fn too_large(file: usize, span: Span, n: u64) -> Diagnostic {
    let shown = if n == u64::MAX { "too many".to_string() } else { n.to_string() };
    Diagnostic::error(
        codes::CONSTANT_TOO_LARGE,
        file,
        format!(
            "this constant has {shown} elements, more than onnxsc's constant size limit of {MAX_CONSTANT_ELEMENTS}"
        ),
    )
    .primary(span, "too large to build at compile time")
    .help("large weights belong in model initializers or inputs, not in function constants")
}

/// Python's `bool(value)` for the module's static `if`s; a failure reads as true (the value
/// is reported where it is evaluated).
pub fn is_truthy(v: &PyValue) -> bool {
    truth(v).unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(op: BinOp, a: i128, b: i128) -> Result<PyValue, OpError> {
        int_op(op, a, b)
    }

    #[test]
    fn integer_division_floors_and_reports_overflow_as_python_does() {
        let min = i64::MIN as i128;
        assert!(matches!(int(BinOp::FloorDiv, min, -1), Ok(PyValue::Int(v)) if v == -min));
        assert!(matches!(int(BinOp::Mod, min, -1), Ok(PyValue::Int(0))));
        assert!(matches!(int(BinOp::Mod, 5, i64::MAX as i128), Ok(PyValue::Int(5))));
        assert!(matches!(int(BinOp::Mod, -7, 3), Ok(PyValue::Int(2))));
        assert!(matches!(int(BinOp::FloorDiv, -7, 2), Ok(PyValue::Int(-4))));
        assert!(matches!(int(BinOp::FloorDiv, i128::MIN, -1), Err(OpError::Overflow)));
        assert!(matches!(int(BinOp::Mod, 1, 0), Err(OpError::Python(_))));
        assert!(matches!(int(BinOp::Pow, 2, 200), Err(OpError::Overflow)));
        assert!(matches!(int(BinOp::Pow, -1, 1 << 40), Ok(PyValue::Int(1))));
    }

    #[test]
    fn float_modulo_takes_the_sign_of_the_divisor() {
        assert_eq!(float_divmod(-7.5, 2.0), (-4.0, 0.5));
        assert_eq!(float_divmod(7.5, -2.0), (-4.0, -0.5));
        assert_eq!(float_divmod(1.0, 0.1).0, 9.0);
    }

    #[test]
    fn ints_and_floats_compare_exactly() {
        let big = (1i128 << 53) + 1;
        assert_eq!(int_float_cmp(big, 2f64.powi(53)), Some(std::cmp::Ordering::Greater));
        assert_eq!(int_float_cmp(3, 2.5), Some(std::cmp::Ordering::Greater));
    }

    #[test]
    fn format_specs_follow_python() {
        let f = |v: PyValue, s: &str| format_value(&v, s).ok().unwrap_or_default();
        assert_eq!(f(PyValue::Float(1.23456), ".2f"), "1.23");
        assert_eq!(f(PyValue::Int(42), "05d"), "00042");
        assert_eq!(f(PyValue::Int(-42), ">6"), "   -42");
        assert_eq!(f(PyValue::str("ab"), "^6"), "  ab  ");
        assert_eq!(f(PyValue::Float(1e-5), ".3e"), "1.000e-05");
    }
}
