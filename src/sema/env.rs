//! The module environment: what each global name of a `.onnxs` module means ([`Global`]), and
//! how a point of the module sees them ([`Names`]).
//!
//! This is the data model only. `sema::env_builder` fills it from the module-level statements
//! (imports through `sema::imports`, constants through `sema::eval`, annotations through
//! `sema::annotations`); `sema::resolve` gives dotted names (`op.Add`, `onnx.TensorProto`) their
//! meaning. Names of Python's libraries (`np`, `TensorProto`) are `Global::Lib`.

use super::value::PyValue;
use crate::diagnostics::{Diagnostic, Diagnostics, Reported};
use crate::onnx::ElemType;
use crate::source::{FileId, Span};
use crate::syntax::ast::*;
use std::collections::{BTreeMap, HashMap};
// Every name a function reads is looked up here: seeded foldhash rather than SipHash.
use foldhash::{HashMap as FastMap, HashMapExt, HashSetExt};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// An opset: a domain and its version. The default ONNX domain is `""`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opset {
    pub domain: String,
    pub version: i64,
}

/// Which module a [`Global::Module`] names.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModuleKey {
    /// A module onnxsc knows by its dotted name (`onnxscript.values`, `typing`, `torch`).
    Known(String),
    /// A `.onnxs` module of the compilation, by its name there (unique in the compilation).
    Onnxs(String),
    /// A directory of `.onnxs` modules (`pkg` of `import pkg.mod`), by its dotted name as the
    /// importer writes it.
    Package(String),
}

impl ModuleKey {
    /// The name messages show: `onnxscript`, `mylib`, `pkg`.
    pub fn name(&self) -> &str {
        match self {
            ModuleKey::Known(n) | ModuleKey::Onnxs(n) | ModuleKey::Package(n) => n,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Global {
    /// An imported module such as `onnxscript` or `onnxscript.values`, or another `.onnxs`
    /// module (`import mylib`), whose names are in [`ModuleEnv::namespaces`] under this key.
    Module(ModuleKey),
    Opset(Opset),
    /// `onnxscript.values.Opset`, the opset constructor.
    OpsetClass,
    /// A tensor type such as `FLOAT`.
    TensorType(ElemType),
    /// `TypeVar("T", bound=Union[FLOAT, DOUBLE])`: the allowed element types (empty: any).
    TypeVar {
        name: String,
        allowed: Vec<ElemType>,
    },
    /// A type alias such as `RealType = Union[FLOAT, DOUBLE, INT64]`.
    TypeUnion(Vec<ElemType>),
    /// The `script` decorator, `graph`, or another onnxscript helper.
    ScriptDecorator,
    GraphDecorator,
    /// torchlib's `torch_op("aten::name.overload")`, which binds a translation to operators.
    TorchOpDecorator,
    /// A name from `typing` (`Union`, `Optional`, `Sequence`, `TypeVar`, ...).
    Typing(String),
    Const(PyValue),
    /// A module, class or function of the constant library (`np`, `onnx.TensorProto`,
    /// `make_tensor`), by canonical path: see `sema::constlib`.
    Lib(String),
    /// A function of the compilation, by its compilation-wide id: this module's own functions
    /// are [`ModuleEnv::functions`], numbered from [`ModuleEnv::first_function`]; an imported
    /// function has the id its own module gave it.
    Function(usize),
    /// Something imported from a module onnxsc does not model (e.g. `torch`).
    Opaque(String),
    /// A module constant onnxsc cannot evaluate although Python can (a function outside the
    /// constant library, a run-time value, a limit): reported where it is used, so that a
    /// module whose functions never read it still compiles.
    Deferred(Box<Diagnostic>),
    /// A global whose definition failed (already reported): uses stay silent.
    Poison(Reported),
}

#[derive(Clone)]
pub struct GlobalDef {
    pub value: Global,
    pub span: Span,
}

pub struct ModuleEnv<'m> {
    pub file: FileId,
    /// The module's statements, for edits that a fix makes at module level.
    pub module: &'m Module,
    /// Shared with the exports other modules read ([`crate::sema::imports::Exports`]): a large
    /// library's names are copied by reference.
    pub globals: Arc<FastMap<String, GlobalDef>>,
    /// The module's own functions, in source order.
    pub functions: Vec<&'m FunctionDef>,
    /// The compilation-wide id of `functions[0]`; `functions[i]` is `first_function + i`.
    pub first_function: usize,
    /// The names of the `.onnxs` modules imported as modules (`import mylib`, `from . import
    /// helpers`), by the key of their [`Global::Module`].
    pub namespaces: HashMap<ModuleKey, Arc<Namespace>>,
    /// The namespaces of every module of the compilation, shared by all their environments:
    /// `a.b.f` may reach a module that this one does not import itself. One table, not a copy
    /// per module, so a chain of 2,000 modules takes linear memory.
    pub linked: SharedNamespaces,
    /// Custom operators declared with `torch.library.define(NAME, SCHEMA)`, in source order.
    pub custom_ops: Vec<CustomOpDecl>,
    /// The earlier meanings of names the module binds more than once, with the offset where each
    /// binding ends, in source order (the last one is in `globals`).
    pub rebound: FastMap<String, Vec<(u32, Global)>>,
    /// The constant errors reported while the module-level statements were read: where a walk
    /// over the module's functions in order starts ([`ConstReports`]).
    pub reported_while_built: ConstReports,
}

/// The namespaces of the modules of a compilation, by key (see [`ModuleEnv::linked`]).
pub type SharedNamespaces = Arc<Mutex<HashMap<ModuleKey, Arc<Namespace>>>>;

/// The namespaces of `linked`, however another thread that held them ended.
pub(crate) fn namespaces_of(linked: &SharedNamespaces) -> MutexGuard<'_, HashMap<ModuleKey, Arc<Namespace>>> {
    linked.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The names of an imported `.onnxs` module, or of a directory of them (`import pkg.mod`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Namespace {
    /// How messages name it: `mylib`, `.helpers`.
    pub display: String,
    /// Shared with the module's exports: importing a module does not copy its names.
    pub names: Arc<BTreeMap<String, Global>>,
    /// The module did not parse (already reported): every name of it is poison.
    pub broken: Option<Reported>,
}

/// `torch.library.define("mylibrary::add_and_round_op", "(Tensor input) -> Tensor")`.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomOpDecl {
    pub qualname: String,
    pub qualname_span: Span,
    pub schema: String,
    pub schema_span: Span,
    /// Whether the schema literal's text is exactly its value, so offsets map one to one.
    pub schema_is_verbatim: bool,
}

impl<'m> ModuleEnv<'m> {
    /// An empty environment of `module`, whose functions are numbered from `first_function`.
    pub fn empty(file: FileId, module: &'m Module, first_function: usize, linked: SharedNamespaces) -> ModuleEnv<'m> {
        ModuleEnv {
            file,
            module,
            // A module's statements are mostly its functions and imports, each binding one name:
            // a large library would otherwise rehash its globals a dozen times.
            globals: Arc::new(FastMap::with_capacity(module.body.len())),
            functions: Vec::new(),
            first_function,
            namespaces: HashMap::new(),
            linked,
            custom_ops: Vec::new(),
            rebound: FastMap::new(),
            reported_while_built: ConstReports::default(),
        }
    }

    /// The names as the end of the module sees them: every binding done.
    pub fn names(&self) -> Names<'_, 'm> {
        Names { env: self, at: u32::MAX }
    }

    /// The names as byte offset `at` of the module sees them: `@script()` compiles the function
    /// when the module runs the decorator, with the globals of that moment, so a constant rebound
    /// further down does not change it.
    pub fn names_at(&self, at: u32) -> Names<'_, 'm> {
        Names { env: self, at }
    }

    /// The names `f` is compiled with: a decorated function sees the globals bound before its
    /// decorator runs, an undecorated one all of them.
    pub fn names_for(&self, f: &FunctionDef) -> Names<'_, 'm> {
        if self.undecorated(f) {
            self.names()
        } else {
            self.names_at(f.header_span.start.min(f.name.span.start))
        }
    }

    /// Whether `f` is a plain Python function: no decorator, or only `@functools.lru_cache`
    /// (called or not) and `@functools.cache`, which memoise a helper without changing what it
    /// computes (torchlib caches a question about the installed torch this way).
    pub fn undecorated(&self, f: &FunctionDef) -> bool {
        f.decorators.iter().all(|d| self.is_memoizing(d))
    }

    fn is_memoizing(&self, d: &Expr) -> bool {
        let func = match &d.kind {
            ExprKind::Call { func, .. } => func.as_ref(),
            _ => d,
        };
        let path = match &func.kind {
            ExprKind::Name(n) => match self.names().get(n) {
                Some(Global::Opaque(path)) => path.clone(),
                _ => return false,
            },
            ExprKind::Attribute { value, attr } => match &value.kind {
                ExprKind::Name(m) => match self.names().get(m) {
                    Some(Global::Opaque(module)) => format!("{module}.{}", attr.name),
                    _ => return false,
                },
                _ => return false,
            },
            _ => return false,
        };
        matches!(path.as_str(), "functools.lru_cache" | "functools.cache")
    }

    /// Binds `name` at module level; an earlier binding of it is kept for the points of the
    /// module that still see it ([`ModuleEnv::rebound`]).
    pub fn define(&mut self, name: &Ident, value: Global) {
        // The map is shared only once the environment is built: here it is copied at no cost.
        let previous = Arc::make_mut(&mut self.globals).insert(name.name.clone(), GlobalDef { value, span: name.span });
        if let Some(previous) = previous {
            self.rebound.entry(name.name.clone()).or_default().push((previous.span.end, previous.value));
        }
    }

    /// The namespace a [`Global::Module`] key names: one this module imports, else one of the
    /// compilation's.
    pub fn namespace(&self, key: &ModuleKey) -> Option<Arc<Namespace>> {
        self.namespaces.get(key).cloned().or_else(|| namespaces_of(&self.linked).get(key).cloned())
    }

    /// The index into [`ModuleEnv::functions`] of a function id, if the function is this module's.
    pub fn local_function(&self, id: usize) -> Option<usize> {
        id.checked_sub(self.first_function).filter(|i| *i < self.functions.len())
    }
}

/// The global names of a module as one point of it sees them ([`ModuleEnv::names_at`]).
#[derive(Clone, Copy)]
pub struct Names<'e, 'm> {
    pub env: &'e ModuleEnv<'m>,
    /// The byte offset of the point; `u32::MAX` is the end of the module.
    at: u32,
}

impl<'e, 'm> Names<'e, 'm> {
    /// The meaning of a global name at this point.
    pub fn get(self, name: &str) -> Option<&'e Global> {
        let env = self.env;
        if self.at != u32::MAX {
            if let Some(history) = env.rebound.get(name) {
                let final_def = env.globals.get(name)?;
                if final_def.span.start >= self.at {
                    // The last binding before `at`, if any (else the name is bound only later).
                    if let Some((_, g)) = history.iter().rev().find(|(end, _)| *end <= self.at) {
                        return Some(g);
                    }
                }
            }
        }
        env.globals.get(name).map(|g| &g.value)
    }

    /// The module's file.
    pub fn file(self) -> FileId {
        self.env.file
    }
}

/// Which constant errors a walk over a module has reported, so that the later uses of a
/// [`Global::Deferred`] constant stay silent once one use is reported. A walk holds its own:
/// the one over a module's functions in order starts from [`ModuleEnv::reported_while_built`],
/// and each piece of a module lowered on another thread from none (see `driver::lowering`).
#[derive(Clone, Debug, Default)]
pub struct ConstReports {
    reported: HashMap<(FileId, u32), Reported>,
}

impl ConstReports {
    /// Whether this walk reported any constant error (and so may have silenced a later use).
    pub fn any(&self) -> bool {
        !self.reported.is_empty()
    }

    /// Reports an error found while evaluating a constant; when it is the error of a
    /// [`Global::Deferred`] constant, its later uses stay silent.
    pub fn report(&mut self, diags: &mut Diagnostics, d: Diagnostic) -> Reported {
        let key = deferred_key(&d);
        let r = diags.push_error(d);
        self.reported.entry(key).or_insert(r);
        r
    }

    /// Reports a use of a [`Global::Deferred`] constant (its error, as
    /// [`deferred_use`] gives it), unless a use of it was reported already: then the proof of
    /// that report.
    pub fn report_deferred_use(&mut self, diags: &mut Diagnostics, d: Diagnostic) -> Reported {
        match self.reported.get(&deferred_key(&d)) {
            Some(r) => *r,
            None => self.report(diags, d),
        }
    }

    /// The proof of an earlier report of this deferred constant's error, if there was one.
    pub fn reported(&self, d: &Diagnostic) -> Option<Reported> {
        self.reported.get(&deferred_key(d)).copied()
    }
}

/// What identifies the error of a [`Global::Deferred`] constant, at each of its uses.
fn deferred_key(d: &Diagnostic) -> (FileId, u32) {
    (d.file, d.primary_span().map(|s| s.start).unwrap_or(0))
}

/// The error of a [`Global::Deferred`] constant `d` used at `span` in `file`: the use is marked
/// when it is in the constant's own file.
pub fn deferred_use(d: &Diagnostic, file: FileId, span: Span) -> Diagnostic {
    if d.file == file {
        Diagnostic::secondary(d.clone(), span, "used here")
    } else {
        d.clone()
    }
}

impl Namespace {
    /// The meaning of `module.name`.
    pub fn get(&self, name: &str) -> Option<Global> {
        if let Some(r) = self.broken {
            return Some(Global::Poison(r));
        }
        self.names.get(name).cloned()
    }
}

/// The module's functions, in source order: the `def`s at module level, less those that
/// redefine a function defined earlier in the module (E0104, reported by [`build`]).
pub fn function_defs(module: &Module) -> Vec<&FunctionDef> {
    let body = module_statements(module);
    // Whether each name is bound, at this point of the module, to one of its own functions.
    let mut local: foldhash::HashSet<&str> = foldhash::HashSet::with_capacity(body.len());
    let mut out = Vec::with_capacity(body.len());
    for stmt in body {
        match &stmt.kind {
            StmtKind::FunctionDef(f) => {
                let first = local.insert(&f.name.name);
                if first {
                    out.push(f);
                }
            }
            StmtKind::Import(aliases) => {
                for a in aliases {
                    let bound = a.alias.as_ref().map(|i| i.name.as_str()).unwrap_or(a.name.parts[0].name.as_str());
                    local.remove(bound);
                }
            }
            StmtKind::ImportFrom { names, .. } => {
                for a in names {
                    local.remove(a.alias.as_ref().unwrap_or(&a.name.parts[0]).name.as_str());
                }
            }
            StmtKind::Assign { targets, .. } if targets.len() == 1 => {
                if let ExprKind::Name(n) = &targets[0].kind {
                    local.remove(n.as_str());
                }
            }
            StmtKind::AnnAssign { target: Expr { kind: ExprKind::Name(n), .. }, value: Some(_), .. } => {
                local.remove(n.as_str());
            }
            _ => {}
        }
    }
    out
}

/// The module-level statements Python runs when it imports the module, in order: each `if`
/// onnxsc decides ([`decided_branch`]) replaced by the statements of the branch taken; an `if`
/// it does not decide stays, for `sema::env_builder` to report.
pub fn module_statements(module: &Module) -> Vec<&Stmt> {
    let mut out = Vec::with_capacity(module.body.len());
    let mut pending: Vec<&Stmt> = module.body.iter().rev().collect();
    while let Some(stmt) = pending.pop() {
        match decided_branch(stmt) {
            Some(branch) => pending.extend(branch.iter().rev()),
            None => out.push(stmt),
        }
    }
    out
}

/// The branch a module-level `if` takes, where its test compares a pinned tool's version the
/// way torchlib does (`if version_utils.torch_older_than("2.7.0"):`, or its `not`), decided
/// against the versions onnxsc targets (`onnx::pinned`). The test is read by its spelling: the
/// name `version_utils` (from `onnxscript._internal`) or the bare function, imported or not.
pub fn decided_branch(stmt: &Stmt) -> Option<&[Stmt]> {
    let StmtKind::If { test, body, orelse } = &stmt.kind else { return None };
    Some(if version_test(test)? { body } else { orelse })
}

/// The value of `PACKAGE_older_than("X")`, `version_utils.PACKAGE_older_than("X")`, or `not`
/// of one, where PACKAGE is pinned.
fn version_test(e: &Expr) -> Option<bool> {
    match &e.kind {
        ExprKind::UnaryOp { op: UnaryOp::Not, operand } => version_test(operand).map(|v| !v),
        ExprKind::Call { func, args } => {
            let name = match &func.kind {
                ExprKind::Name(n) => n.as_str(),
                ExprKind::Attribute { value, attr } if matches!(&value.kind, ExprKind::Name(m) if m == "version_utils") => {
                    attr.name.as_str()
                }
                _ => return None,
            };
            let package = name.strip_suffix("_older_than")?;
            let [Arg { keyword: None, kind: ArgKind::Plain, value: Expr { kind: ExprKind::Str(version), .. }, .. }] =
                args.as_slice()
            else {
                return None;
            };
            crate::onnx::pinned::older_than(package, version)
        }
        _ => None,
    }
}
