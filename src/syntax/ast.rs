//! The abstract syntax tree of a `.onnxs` module.
//!
//! It is a faithful, spanned subset of Python's own AST: the parser accepts a little more than
//! the language (for example `*args`, dict displays, chained comparisons) so that semantic
//! analysis can name the unsupported construct instead of reporting a bare syntax error. It also
//! holds the Python that trace-only translations (`@torch_op(..., trace_only=True)`) run at
//! export time: `raise`, `assert`, `lambda` and comprehensions, which lowering rejects in
//! scripted functions.

use crate::source::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub body: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Expr(Expr),
    /// `a = b = value` has two targets.
    Assign {
        targets: Vec<Expr>,
        value: Expr,
    },
    AnnAssign {
        target: Expr,
        annotation: Expr,
        value: Option<Expr>,
    },
    AugAssign {
        target: Expr,
        op: BinOp,
        value: Expr,
    },
    Return(Option<Expr>),
    Pass,
    Break,
    Continue,
    /// `del a, b`: in a function body, says that parameters are left unread on purpose.
    Delete(Vec<Expr>),
    /// `raise`, `raise E(...)`, `raise E(...) from cause`.
    Raise {
        exc: Option<Expr>,
        cause: Option<Expr>,
    },
    /// `assert test` or `assert test, msg`.
    Assert {
        test: Expr,
        msg: Option<Expr>,
    },
    /// `elif` is an `If` alone in the `orelse` of the enclosing `If`.
    If {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    For {
        target: Expr,
        iter: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    While {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    FunctionDef(FunctionDef),
    /// `import a.b as c, d`
    Import(Vec<ImportAlias>),
    /// `from a.b import c as d, e`; `names` is empty for `import *`. `level` counts the leading
    /// dots of a relative import (`from ..a import b` has level 2; `from . import b` has level 1
    /// and an empty `module`).
    ImportFrom {
        level: usize,
        module: DottedName,
        names: Vec<ImportAlias>,
        star: bool,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct DottedName {
    pub parts: Vec<Ident>,
    pub span: Span,
}

impl DottedName {
    pub fn dotted(&self) -> String {
        self.parts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(".")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ImportAlias {
    pub name: DottedName,
    pub alias: Option<Ident>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDef {
    pub name: Ident,
    pub decorators: Vec<Expr>,
    pub params: Vec<Param>,
    pub returns: Option<Expr>,
    pub body: Vec<Stmt>,
    /// The `def ...:` line, for labels that point at the signature.
    pub header_span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    Normal,
    /// `*args`
    VarArgs,
    /// `**kwargs`
    KwArgs,
    /// A bare `*`: the parameters after it are keyword-only.
    KwOnlyMarker,
    /// A bare `/`: the parameters before it are positional-only.
    PosOnlyMarker,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub kind: ParamKind,
    pub annotation: Option<Expr>,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Name(String),
    /// An int literal: Python's are unbounded, onnxsc's literals go up to `i128::MAX`.
    Int(Int128),
    Float(f64),
    Str(String),
    /// An f-string (or a string concatenation with one), evaluated at compile time.
    FString(Vec<FStringPart>),
    Bool(bool),
    None,
    Ellipsis,
    Attribute {
        value: Box<Expr>,
        attr: Ident,
    },
    Call {
        func: Box<Expr>,
        args: Vec<Arg>,
    },
    BinOp {
        op: BinOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    UnaryOp {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    BoolOp {
        op: BoolOp,
        values: Vec<Expr>,
    },
    /// `a < b` has one comparison; `a < b < c` (not in the language) has two.
    Compare {
        left: Box<Expr>,
        comparisons: Vec<(CmpOp, Expr)>,
    },
    Subscript {
        value: Box<Expr>,
        index: Box<Expr>,
    },
    Slice {
        lower: Option<Box<Expr>>,
        upper: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    /// Kept only to be reported as unsupported.
    Dict(Vec<(Expr, Expr)>),
    Set(Vec<Expr>),
    Starred(Box<Expr>),
    /// `a if c else b`, kept only to be reported as unsupported.
    IfExp {
        test: Box<Expr>,
        body: Box<Expr>,
        orelse: Box<Expr>,
    },
    /// `lambda a, b=1: body`.
    Lambda {
        params: Vec<Param>,
        body: Box<Expr>,
    },
    /// `[e for ...]`, `{e for ...}`, `{k: v for ...}`, `(e for ...)` (also the bare generator
    /// argument of a call: `all(x > 0 for x in xs)`).
    Comprehension {
        kind: CompKind,
        element: Box<Expr>,
        value: Option<Box<Expr>>,
        generators: Vec<CompFor>,
    },
}

/// What a comprehension builds: `[...]`, `{...}`, `{k: v ...}` or `(...)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompKind {
    List,
    Set,
    Dict,
    Generator,
}

/// One `for target in iter if cond ...` clause of a comprehension.
#[derive(Clone, Debug, PartialEq)]
pub struct CompFor {
    pub target: Expr,
    pub iter: Expr,
    pub ifs: Vec<Expr>,
    pub span: Span,
}

/// A piece of an f-string: literal text, or a replacement field `{value!r:spec}`.
#[derive(Clone, Debug, PartialEq)]
pub enum FStringPart {
    Literal(String),
    Field {
        value: Box<Expr>,
        /// `!r`, `!s` or `!a`.
        conversion: Option<char>,
        /// The format specification after `:`, itself an f-string.
        spec: Option<Vec<FStringPart>>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// `Some` for a keyword argument.
    pub keyword: Option<Ident>,
    pub value: Expr,
    pub kind: ArgKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    Plain,
    /// `*xs`
    Star,
    /// `**kw`
    DoubleStar,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mult,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMult,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mult => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::MatMult => "@",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::LShift => "<<",
            BinOp::RShift => ">>",
        }
    }

    pub fn from_symbol(s: &str) -> Option<BinOp> {
        Some(match s {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mult,
            "/" => BinOp::Div,
            "//" => BinOp::FloorDiv,
            "%" => BinOp::Mod,
            "**" => BinOp::Pow,
            "@" => BinOp::MatMult,
            "&" => BinOp::BitAnd,
            "|" => BinOp::BitOr,
            "^" => BinOp::BitXor,
            "<<" => BinOp::LShift,
            ">>" => BinOp::RShift,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Pos,
    Not,
    Invert,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
    Is,
    IsNot,
    In,
    NotIn,
}

impl CmpOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::NotEq => "!=",
            CmpOp::Lt => "<",
            CmpOp::LtE => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtE => ">=",
            CmpOp::Is => "is",
            CmpOp::IsNot => "is not",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// `a.b.c` as a dotted string, if the expression is only names and attributes.
    pub fn dotted_name(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Name(n) => Some(n.clone()),
            ExprKind::Attribute { value, attr } => Some(format!("{}.{}", value.dotted_name()?, attr.name)),
            _ => None,
        }
    }
}

impl Expr {
    /// Calls `f` on each direct subexpression, in source order.
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Attribute { value, .. } | ExprKind::UnaryOp { operand: value, .. } | ExprKind::Starred(value) => {
                f(value);
            }
            ExprKind::Call { func, args } => {
                f(func);
                args.iter().for_each(|a| f(&a.value));
            }
            ExprKind::BinOp { left, right, .. } => {
                f(left);
                f(right);
            }
            ExprKind::BoolOp { values: items, .. }
            | ExprKind::Tuple(items)
            | ExprKind::List(items)
            | ExprKind::Set(items) => items.iter().for_each(f),
            ExprKind::Compare { left, comparisons } => {
                f(left);
                comparisons.iter().for_each(|(_, c)| f(c));
            }
            ExprKind::Subscript { value, index } => {
                f(value);
                f(index);
            }
            ExprKind::Slice { lower, upper, step } => [lower, upper, step].into_iter().flatten().for_each(|e| f(e)),
            ExprKind::Dict(pairs) => pairs.iter().for_each(|(k, v)| {
                f(k);
                f(v);
            }),
            ExprKind::IfExp { test, body, orelse } => {
                f(test);
                f(body);
                f(orelse);
            }
            ExprKind::FString(parts) => for_each_field(parts, f),
            ExprKind::Lambda { .. } | ExprKind::Comprehension { .. } => {
                self.for_each_child_scoped(&mut |c, _| f(c));
            }
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Ellipsis => {}
        }
    }

    /// Calls `f` on each direct subexpression, in source order, with whether it is evaluated in
    /// a scope of the expression's own: a lambda's body, and every part of a comprehension but
    /// its first iterable (which Python evaluates in the enclosing scope). A lambda's defaults,
    /// and the children of every other expression, are in the enclosing scope.
    pub fn for_each_child_scoped<'a>(&'a self, f: &mut dyn FnMut(&'a Expr, bool)) {
        match &self.kind {
            ExprKind::Lambda { params, body } => {
                params.iter().flat_map(|p| p.annotation.iter().chain(&p.default)).for_each(|e| f(e, false));
                f(body, true);
            }
            ExprKind::Comprehension { element, value, generators, .. } => {
                f(element, true);
                if let Some(v) = value {
                    f(v, true);
                }
                for (i, g) in generators.iter().enumerate() {
                    f(&g.target, true);
                    f(&g.iter, i > 0);
                    g.ifs.iter().for_each(|c| f(c, true));
                }
            }
            _ => self.for_each_child(&mut |c| f(c, false)),
        }
    }

    /// The names a lambda (its parameters) or a comprehension (its `for` targets) binds in its
    /// own scope, in source order; none for any other expression.
    pub fn scope_names(&self) -> Vec<&str> {
        let mut names = Vec::new();
        match &self.kind {
            ExprKind::Lambda { params, .. } => names.extend(
                params
                    .iter()
                    .filter(|p| !matches!(p.kind, ParamKind::KwOnlyMarker | ParamKind::PosOnlyMarker))
                    .map(|p| p.name.name.as_str()),
            ),
            ExprKind::Comprehension { generators, .. } => {
                generators.iter().for_each(|g| g.target.for_each_target_name(&mut |n| names.push(n)));
            }
            _ => {}
        }
        names
    }

    /// Each name that assigning to this target binds: `a`, `a, (b, c)`, `[a, b]`.
    pub fn for_each_target_name<'a>(&'a self, each: &mut dyn FnMut(&'a str)) {
        match &self.kind {
            ExprKind::Name(n) => each(n),
            ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().for_each(|i| i.for_each_target_name(each)),
            _ => {}
        }
    }
}

/// Calls `f` on the value of each replacement field of an f-string, format specs included.
fn for_each_field<'a>(parts: &'a [FStringPart], f: &mut dyn FnMut(&'a Expr)) {
    for part in parts {
        if let FStringPart::Field { value, spec, .. } = part {
            f(value);
            if let Some(spec) = spec {
                for_each_field(spec, f);
            }
        }
    }
}

/// The expression written at exactly `span` in `stmts` (nested blocks and functions included)
/// for which `wanted` holds: found when it is needed (a message, a lambda's body), rather than
/// recorded for every expression. Only expressions whose text contains `span` are searched.
pub fn expr_at<'a>(stmts: &'a [Stmt], span: Span, wanted: &dyn Fn(&Expr) -> bool) -> Option<&'a Expr> {
    fn in_expr<'a>(e: &'a Expr, span: Span, wanted: &dyn Fn(&Expr) -> bool) -> Option<&'a Expr> {
        if e.span == span && wanted(e) {
            return Some(e);
        }
        if !(e.span.start <= span.start && span.end <= e.span.end) {
            return None;
        }
        let mut found = None;
        e.for_each_child(&mut |c| {
            if found.is_none() {
                found = in_expr(c, span, wanted);
            }
        });
        found
    }
    let mut found = None;
    for s in stmts {
        s.for_each_expr(&mut |e| {
            if found.is_none() {
                found = in_expr(e, span, wanted);
            }
        });
        s.for_each_block(&mut |b| {
            if found.is_none() {
                found = expr_at(b, span, wanted);
            }
        });
        if found.is_some() {
            break;
        }
    }
    found
}

impl Stmt {
    /// Calls `f` on each expression of the statement itself (not of nested blocks).
    pub fn for_each_expr<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match &self.kind {
            StmtKind::Expr(e) => f(e),
            StmtKind::Assign { targets, value } => {
                targets.iter().for_each(&mut *f);
                f(value);
            }
            StmtKind::AnnAssign { target, annotation, value } => {
                f(target);
                f(annotation);
                if let Some(v) = value {
                    f(v);
                }
            }
            StmtKind::AugAssign { target, value, .. } => {
                f(target);
                f(value);
            }
            StmtKind::Return(Some(v)) => f(v),
            StmtKind::If { test, .. } | StmtKind::While { test, .. } => f(test),
            StmtKind::For { target, iter, .. } => {
                f(target);
                f(iter);
            }
            StmtKind::FunctionDef(def) => def.decorators.iter().for_each(f),
            StmtKind::Raise { exc, cause } => exc.iter().chain(cause).for_each(f),
            StmtKind::Assert { test, msg } => {
                f(test);
                msg.iter().for_each(f);
            }
            // `del x` unbinds `x`; it does not read its value.
            StmtKind::Delete(_)
            | StmtKind::Return(None)
            | StmtKind::Pass
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Import(_)
            | StmtKind::ImportFrom { .. } => {}
        }
    }

    /// Calls `f` on each nested block: branches, loop bodies, nested function bodies.
    pub fn for_each_block<'a>(&'a self, f: &mut dyn FnMut(&'a [Stmt])) {
        match &self.kind {
            StmtKind::If { body, orelse, .. }
            | StmtKind::For { body, orelse, .. }
            | StmtKind::While { body, orelse, .. } => {
                f(body);
                f(orelse);
            }
            StmtKind::FunctionDef(def) => f(&def.body),
            _ => {}
        }
    }
}

impl Stmt {
    /// The statement with everything nested in it: a compound statement's own span covers only
    /// its header (`def f(x):`, `if c:`), this covers its last block too.
    pub fn extent(&self) -> Span {
        let mut last: Option<&Stmt> = None;
        self.for_each_block(&mut |b| {
            if let Some(s) = b.last() {
                last = Some(s);
            }
        });
        match last {
            Some(s) => self.span.to(s.extent()),
            None => self.span,
        }
    }
}

/// A walk over a tree that may change it, in source order. Each method is called on every node
/// of its kind and, by default, walks on into the node's parts; a visitor that overrides only
/// [`VisitMut::visit_span`] reaches every span of the tree (what an edit that moves text needs).
pub trait VisitMut {
    fn visit_span(&mut self, _span: &mut Span) {}

    fn visit_ident(&mut self, ident: &mut Ident) {
        self.visit_span(&mut ident.span);
    }

    fn visit_expr(&mut self, e: &mut Expr) {
        walk_expr_mut(self, e);
    }

    fn visit_stmt(&mut self, s: &mut Stmt) {
        walk_stmt_mut(self, s);
    }
}

/// The parts of an expression, for [`VisitMut::visit_expr`]: its span, names and subexpressions.
pub fn walk_expr_mut<V: VisitMut + ?Sized>(v: &mut V, e: &mut Expr) {
    let Expr { kind, span } = e;
    v.visit_span(span);
    match kind {
        ExprKind::Attribute { value, attr } => {
            v.visit_expr(value);
            v.visit_ident(attr);
        }
        ExprKind::Call { func, args } => {
            v.visit_expr(func);
            for Arg { keyword, value, kind: _, span } in args {
                if let Some(k) = keyword {
                    v.visit_ident(k);
                }
                v.visit_expr(value);
                v.visit_span(span);
            }
        }
        ExprKind::BinOp { op: _, left, right } => {
            v.visit_expr(left);
            v.visit_expr(right);
        }
        ExprKind::UnaryOp { op: _, operand } | ExprKind::Starred(operand) => v.visit_expr(operand),
        ExprKind::BoolOp { op: _, values: items }
        | ExprKind::Tuple(items)
        | ExprKind::List(items)
        | ExprKind::Set(items) => items.iter_mut().for_each(|i| v.visit_expr(i)),
        ExprKind::Compare { left, comparisons } => {
            v.visit_expr(left);
            comparisons.iter_mut().for_each(|(_, c)| v.visit_expr(c));
        }
        ExprKind::Subscript { value, index } => {
            v.visit_expr(value);
            v.visit_expr(index);
        }
        ExprKind::Slice { lower, upper, step } => {
            [lower, upper, step].into_iter().flatten().for_each(|e| v.visit_expr(e));
        }
        ExprKind::Dict(pairs) => pairs.iter_mut().for_each(|(k, value)| {
            v.visit_expr(k);
            v.visit_expr(value);
        }),
        ExprKind::IfExp { test, body, orelse } => {
            v.visit_expr(test);
            v.visit_expr(body);
            v.visit_expr(orelse);
        }
        ExprKind::FString(parts) => walk_fstring_mut(v, parts),
        ExprKind::Lambda { params, body } => {
            params.iter_mut().for_each(|p| walk_param_mut(v, p));
            v.visit_expr(body);
        }
        ExprKind::Comprehension { kind: _, element, value, generators } => {
            v.visit_expr(element);
            if let Some(value) = value {
                v.visit_expr(value);
            }
            for CompFor { target, iter, ifs, span } in generators {
                v.visit_expr(target);
                v.visit_expr(iter);
                ifs.iter_mut().for_each(|c| v.visit_expr(c));
                v.visit_span(span);
            }
        }
        ExprKind::Name(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Ellipsis => {}
    }
}

/// The replacement fields of an f-string, format specifications included.
fn walk_fstring_mut<V: VisitMut + ?Sized>(v: &mut V, parts: &mut [FStringPart]) {
    for part in parts {
        if let FStringPart::Field { value, conversion: _, spec } = part {
            v.visit_expr(value);
            if let Some(spec) = spec {
                walk_fstring_mut(v, spec);
            }
        }
    }
}

/// The parts of a statement, for [`VisitMut::visit_stmt`]: its span, names, expressions and
/// nested blocks (a nested function's decorators, parameters and annotations included).
pub fn walk_stmt_mut<V: VisitMut + ?Sized>(v: &mut V, s: &mut Stmt) {
    let Stmt { kind, span } = s;
    v.visit_span(span);
    let block = |v: &mut V, stmts: &mut [Stmt]| stmts.iter_mut().for_each(|s| v.visit_stmt(s));
    match kind {
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => v.visit_expr(e),
        StmtKind::Delete(targets) => targets.iter_mut().for_each(|t| v.visit_expr(t)),
        StmtKind::Assign { targets, value } => {
            targets.iter_mut().for_each(|t| v.visit_expr(t));
            v.visit_expr(value);
        }
        StmtKind::AnnAssign { target, annotation, value } => {
            v.visit_expr(target);
            v.visit_expr(annotation);
            if let Some(value) = value {
                v.visit_expr(value);
            }
        }
        StmtKind::AugAssign { target, op: _, value } => {
            v.visit_expr(target);
            v.visit_expr(value);
        }
        StmtKind::If { test, body, orelse } | StmtKind::While { test, body, orelse } => {
            v.visit_expr(test);
            block(v, body);
            block(v, orelse);
        }
        StmtKind::For { target, iter, body, orelse } => {
            v.visit_expr(target);
            v.visit_expr(iter);
            block(v, body);
            block(v, orelse);
        }
        StmtKind::FunctionDef(FunctionDef { name, decorators, params, returns, body, header_span }) => {
            v.visit_ident(name);
            decorators.iter_mut().for_each(|d| v.visit_expr(d));
            params.iter_mut().for_each(|p| walk_param_mut(v, p));
            if let Some(r) = returns {
                v.visit_expr(r);
            }
            block(v, body);
            v.visit_span(header_span);
        }
        StmtKind::Import(aliases) => aliases.iter_mut().for_each(|a| walk_import_alias_mut(v, a)),
        StmtKind::ImportFrom { level: _, module, names, star: _ } => {
            walk_dotted_mut(v, module);
            names.iter_mut().for_each(|a| walk_import_alias_mut(v, a));
        }
        StmtKind::Raise { exc, cause } => exc.iter_mut().chain(cause.iter_mut()).for_each(|e| v.visit_expr(e)),
        StmtKind::Assert { test, msg } => {
            v.visit_expr(test);
            if let Some(msg) = msg {
                v.visit_expr(msg);
            }
        }
        StmtKind::Return(None) | StmtKind::Pass | StmtKind::Break | StmtKind::Continue => {}
    }
}

/// A parameter of a function or a lambda: its name, annotation, default and span.
fn walk_param_mut<V: VisitMut + ?Sized>(v: &mut V, p: &mut Param) {
    let Param { name, kind: _, annotation, default, span } = p;
    v.visit_ident(name);
    annotation.iter_mut().chain(default.iter_mut()).for_each(|e| v.visit_expr(e));
    v.visit_span(span);
}

fn walk_dotted_mut<V: VisitMut + ?Sized>(v: &mut V, d: &mut DottedName) {
    let DottedName { parts, span } = d;
    parts.iter_mut().for_each(|p| v.visit_ident(p));
    v.visit_span(span);
}

fn walk_import_alias_mut<V: VisitMut + ?Sized>(v: &mut V, a: &mut ImportAlias) {
    let ImportAlias { name, alias, span } = a;
    walk_dotted_mut(v, name);
    if let Some(alias) = alias {
        v.visit_ident(alias);
    }
    v.visit_span(span);
}

/// An int literal's value, stored without `i128`'s 16-byte alignment: that alignment padded
/// every expression node (and every value on the parser's stack) from 48 bytes to 64.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Int128([u8; 16]);

impl Int128 {
    pub fn get(self) -> i128 {
        i128::from_le_bytes(self.0)
    }
}

impl From<i128> for Int128 {
    fn from(v: i128) -> Self {
        Int128(v.to_le_bytes())
    }
}

impl std::fmt::Debug for Int128 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.get())
    }
}
