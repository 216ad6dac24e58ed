//! The module environment: what each global name of a `.onnxs` module means.
//!
//! Module-level statements are imports, opset declarations, type variables, constants and
//! functions. This pass gives each global a meaning ([`Global`]) so that function lowering can
//! resolve `op.Add`, `FLOAT`, `TReal` or `EPSILON`. Imports are bound by `sema::imports` (what
//! the names of known modules mean is `sema::known_names`), constants are computed by
//! `sema::consteval`, `TypeVar` bounds and other annotations read by `sema::annotations`; names
//! of Python's libraries (`np`, `TensorProto`) are `Global::Lib`.

use super::annotations::tensor_types;
use super::constlib;
use super::imports::{import_modules, import_names, ImportContext, ModuleLookup};
use super::known_names::imported;
use super::types::ElemType;
use super::value::PyValue;

/// Constants are evaluated by `sema::consteval`; re-exported for the passes that read defaults.
pub use super::consteval::eval_const;
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Reported};
use crate::source::{FileId, Span};
use crate::syntax::ast::*;
use std::cell::RefCell;
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
    /// Shared with the copies made for other threads ([`ModuleEnv::for_another_thread`]): a
    /// large library's names are copied by reference, not name by name for every piece.
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
    pub linked: Linked,
    /// Custom operators declared with `torch.library.define(NAME, SCHEMA)`, in source order.
    pub custom_ops: Vec<CustomOpDecl>,
    /// The earlier meanings of names the module binds more than once, with the offset where each
    /// binding ends, in source order (the last one is in `globals`).
    pub rebound: FastMap<String, Vec<(u32, Global)>>,
    /// Where in the module names are looked up (see [`ModuleEnv::view_at`]); `u32::MAX` is the
    /// end of the module.
    view: std::cell::Cell<u32>,
    /// The [`Global::Deferred`] constants already reported at a use (by their error's span).
    deferred_reported: RefCell<HashMap<(usize, u32), Reported>>,
}

/// The namespaces of the modules of a compilation, by key (see [`ModuleEnv::linked`]).
pub type Linked = Arc<Mutex<HashMap<ModuleKey, Arc<Namespace>>>>;

/// The namespaces of `linked`, however another thread that held them ended.
pub(crate) fn namespaces_of(linked: &Linked) -> MutexGuard<'_, HashMap<ModuleKey, Arc<Namespace>>> {
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

/// What identifies the error of a [`Global::Deferred`] constant, at each of its uses.
fn deferred_key(d: &Diagnostic) -> (usize, u32) {
    (d.file, d.primary_span().map(|s| s.start).unwrap_or(0))
}

impl<'m> ModuleEnv<'m> {
    /// The meaning of a global name, as seen from the current view (by default, the end of the
    /// module).
    pub fn get(&self, name: &str) -> Option<&Global> {
        let at = self.view.get();
        if at != u32::MAX {
            if let Some(history) = self.rebound.get(name) {
                let final_def = self.globals.get(name)?;
                if final_def.span.start >= at {
                    // The last binding before `at`, if any (else the name is bound only later).
                    if let Some((_, g)) = history.iter().rev().find(|(end, _)| *end <= at) {
                        return Some(g);
                    }
                }
            }
        }
        self.globals.get(name).map(|g| &g.value)
    }

    /// The namespace a [`Global::Module`] key names: one this module imports, else one of the
    /// compilation's.
    pub fn namespace(&self, key: &ModuleKey) -> Option<Arc<Namespace>> {
        self.namespaces.get(key).cloned().or_else(|| namespaces_of(&self.linked).get(key).cloned())
    }

    /// A copy of this environment for lowering some of its functions on another thread: the
    /// same names, a view of its own, and no deferred constant reported yet (the copies do not
    /// know of each other's reports: see [`ModuleEnv::reported_a_deferred_use`]).
    pub fn for_another_thread(&self) -> ModuleEnv<'m> {
        ModuleEnv {
            file: self.file,
            module: self.module,
            globals: Arc::clone(&self.globals),
            functions: self.functions.clone(),
            first_function: self.first_function,
            namespaces: self.namespaces.clone(),
            linked: Arc::clone(&self.linked),
            custom_ops: self.custom_ops.clone(),
            rebound: self.rebound.clone(),
            view: std::cell::Cell::new(self.view.get()),
            deferred_reported: RefCell::default(),
        }
    }

    /// Whether a use of a [`Global::Deferred`] constant was reported through this environment
    /// (and later uses are silent for it).
    pub fn reported_a_deferred_use(&self) -> bool {
        !self.deferred_reported.borrow().is_empty()
    }

    /// The error of a [`Global::Deferred`] constant used at `span`, until one of its uses is
    /// reported ([`ModuleEnv::report`]); then the proof of that report, and the later uses stay
    /// silent.
    pub fn deferred_use(&self, d: &Diagnostic, span: Span) -> Result<Diagnostic, Reported> {
        if let Some(r) = self.deferred_reported.borrow().get(&deferred_key(d)) {
            return Err(*r);
        }
        let used = Diagnostic::secondary(d.clone(), span, "used here");
        Ok(if d.file == self.file { used } else { d.clone() })
    }

    /// Reports an error found while evaluating a constant; when it is the error of a
    /// [`Global::Deferred`] constant, its later uses stay silent.
    pub fn report(&self, diags: &mut Diagnostics, d: Diagnostic) -> Reported {
        let key = deferred_key(&d);
        let r = diags.push_error(d);
        self.deferred_reported.borrow_mut().entry(key).or_insert(r);
        r
    }

    /// Looks names up as a decorated function at byte offset `at` sees them: `@script()`
    /// compiles the function when the module runs the decorator, with the globals of that
    /// moment, so a constant rebound further down does not change it. Returns the previous view.
    pub fn view_at(&self, at: u32) -> u32 {
        self.view.replace(at)
    }

    /// The view [`ModuleEnv::view_at`] in which `f` is compiled: a decorated function sees the
    /// globals bound before its decorator runs, an undecorated one all of them.
    pub fn definition_view(f: &FunctionDef) -> u32 {
        if f.decorators.is_empty() {
            u32::MAX
        } else {
            f.header_span.start.min(f.name.span.start)
        }
    }

    /// The index into [`ModuleEnv::functions`] of a function id, if the function is this module's.
    pub fn local_function(&self, id: usize) -> Option<usize> {
        id.checked_sub(self.first_function).filter(|i| *i < self.functions.len())
    }
}

/// The module's functions, in source order: the `def`s at module level, less those that
/// redefine a function defined earlier in the module (E0104, reported by [`build`]).
pub fn function_defs(module: &Module) -> Vec<&FunctionDef> {
    // Whether each name is bound, at this point of the module, to one of its own functions.
    let mut local: foldhash::HashSet<&str> = foldhash::HashSet::with_capacity(module.body.len());
    let mut out = Vec::with_capacity(module.body.len());
    for stmt in &module.body {
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

/// Builds the environment of a module compiled on its own: imports of other `.onnxs` modules
/// are not resolved (they are opaque).
pub fn build<'m>(file: FileId, module: &'m Module, diags: &mut Diagnostics) -> ModuleEnv<'m> {
    let linked = Linked::default();
    let ctx = ImportContext {
        first_function: 0,
        resolve: &|_, _| ModuleLookup::External,
        modules: &[],
        keys: &[],
        linked: &linked,
    };
    build_in(file, module, &ctx, diags)
}

/// Builds the environment of a module, reporting module-level statements outside the language;
/// `ctx` resolves its imports of other `.onnxs` modules.
pub fn build_in<'m>(file: FileId, module: &'m Module, ctx: &ImportContext, diags: &mut Diagnostics) -> ModuleEnv<'m> {
    let mut env = ModuleEnv {
        file,
        module,
        // A module's statements are mostly its functions and imports, each binding one name:
        // a large library would otherwise rehash its globals a dozen times.
        globals: Arc::new(FastMap::with_capacity(module.body.len())),
        functions: Vec::new(),
        first_function: ctx.first_function,
        namespaces: HashMap::new(),
        linked: ctx.linked.clone(),
        custom_ops: Vec::new(),
        rebound: FastMap::new(),
        view: std::cell::Cell::new(u32::MAX),
        deferred_reported: Default::default(),
    };
    // By address: a redefinition is another `def` of the same name.
    let accepted: foldhash::HashSet<*const FunctionDef> =
        function_defs(module).into_iter().map(|f| f as *const _).collect();
    for stmt in &module.body {
        match &stmt.kind {
            StmtKind::Import(aliases) => import_modules(&mut env, ctx, aliases, diags),
            StmtKind::ImportFrom { level, module: m, names, star } => {
                import_names(&mut env, ctx, stmt.span, *level, m, names, *star, diags);
            }
            // `A = B = value` binds each name to the same value.
            StmtKind::Assign { targets, value } if targets.len() > 1 => {
                let names: Option<Vec<Ident>> = targets
                    .iter()
                    .map(|t| match &t.kind {
                        ExprKind::Name(name) => Some(Ident { name: name.clone(), span: t.span }),
                        _ => None,
                    })
                    .collect();
                let Some(names) = names else {
                    diags.push(module_stmt_error(file, stmt.span));
                    continue;
                };
                let g = global_from_assignment(&env, value, diags).unwrap_or_else(Global::Poison);
                for ident in &names {
                    define(&mut env, ident, g.clone());
                }
            }
            StmtKind::Assign { targets, value } if targets.len() == 1 => {
                if let ExprKind::Tuple(names) | ExprKind::List(names) = &targets[0].kind {
                    // `LOW, HIGH = -1.0, 1.0`: constants unpacked from a sequence of values.
                    unpack_constants(&mut env, names, value, stmt.span, diags);
                    continue;
                }
                let ExprKind::Name(name) = &targets[0].kind else {
                    diags.push(module_stmt_error(file, stmt.span));
                    continue;
                };
                let ident = Ident { name: name.clone(), span: targets[0].span };
                let g = global_from_assignment(&env, value, diags).unwrap_or_else(Global::Poison);
                define(&mut env, &ident, g);
            }
            StmtKind::AnnAssign { target, value: Some(value), .. } => {
                if let ExprKind::Name(name) = &target.kind {
                    let ident = Ident { name: name.clone(), span: target.span };
                    let g = global_from_assignment(&env, value, diags).unwrap_or_else(Global::Poison);
                    define(&mut env, &ident, g);
                } else {
                    diags.push(module_stmt_error(file, stmt.span));
                }
            }
            StmtKind::FunctionDef(f) => {
                // A `def` that redefines one of the module's functions (an imported function
                // may be shadowed, as in Python).
                if !accepted.contains(&(f as *const FunctionDef)) {
                    let mut d = Diagnostic::error(
                        codes::DUPLICATE_FUNCTION,
                        file,
                        format!("function `{}` is defined twice", f.name.name),
                    )
                    .primary(f.name.span, "defined again here")
                    .help("rename one of the functions");
                    if let Some(prev) = env.globals.get(&f.name.name) {
                        d = d.secondary(prev.span, "first defined here");
                    }
                    diags.push(d);
                    continue;
                }
                let id = env.first_function + env.functions.len();
                env.functions.push(f);
                define(&mut env, &f.name, Global::Function(id));
            }
            // A module docstring, or a bare string used as a comment.
            StmtKind::Expr(Expr { kind: ExprKind::Str(_), .. }) => {}
            StmtKind::Expr(e) if is_library_define(&env, e) => {
                if let Some(decl) = custom_op_declaration(file, e, diags) {
                    env.custom_ops.push(decl);
                }
            }
            StmtKind::Pass => {}
            _ => diags.push(module_stmt_error(file, stmt.span)),
        }
    }
    env
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

/// `torch.library.define(...)`, with or without `import torch`.
fn is_library_define(env: &ModuleEnv, e: &Expr) -> bool {
    let ExprKind::Call { func, .. } = &e.kind else { return false };
    let mut parts = Vec::new();
    let mut cur = func.as_ref();
    while let ExprKind::Attribute { value, attr } = &cur.kind {
        parts.push(attr.name.as_str());
        cur = value;
    }
    let ExprKind::Name(root) = &cur.kind else { return false };
    parts.push(root);
    parts.reverse();
    match parts.as_slice() {
        ["torch", "library", "define"] => {
            matches!(env.get("torch"), None | Some(Global::Module(_) | Global::Opaque(_)))
        }
        ["library", "define"] => matches!(env.get("library"), Some(Global::Opaque(m)) if m == "torch.library"),
        _ => false,
    }
}

fn custom_op_declaration(file: FileId, e: &Expr, diags: &mut Diagnostics) -> Option<CustomOpDecl> {
    let ExprKind::Call { args, .. } = &e.kind else { return None };
    let positional: Vec<&Arg> = args.iter().filter(|a| a.keyword.is_none()).collect();
    let keyword = |name: &str| args.iter().find(|a| a.keyword.as_ref().is_some_and(|k| k.name == name));
    let qualname = positional.first().map(|a| &a.value).or(keyword("qualname").map(|a| &a.value));
    let schema = positional.get(1).map(|a| &a.value).or(keyword("schema").map(|a| &a.value));
    let bad = |span: Span, label: &str| {
        Diagnostic::error(
            codes::BAD_CUSTOM_SCHEMA,
            file,
            "`torch.library.define` needs the operator's name and schema as strings",
        )
        .primary(span, label)
        .help("write `torch.library.define(\"mylibrary::my_op\", \"(Tensor x) -> Tensor\")`")
    };
    let (Some(q), Some(sch)) = (qualname, schema) else {
        diags.push(bad(e.span, "missing the name or the schema"));
        return None;
    };
    let (ExprKind::Str(qtext), ExprKind::Str(stext)) = (&q.kind, &sch.kind) else {
        let which = if matches!(q.kind, ExprKind::Str(_)) { sch } else { q };
        diags.push(bad(which.span, "not a string literal"));
        return None;
    };
    if !qtext.contains("::") {
        diags.push(
            Diagnostic::error(
                codes::BAD_CUSTOM_SCHEMA,
                file,
                format!("custom operator name `{qtext}` has no namespace"),
            )
            .primary(q.span, "expected `namespace::name`")
            .help(format!("write it as `mylibrary::{qtext}`, as `torch.library.custom_op` does")),
        );
        return None;
    }
    Some(CustomOpDecl {
        qualname: qtext.clone(),
        qualname_span: q.span,
        schema: stext.clone(),
        schema_span: sch.span,
        schema_is_verbatim: (sch.span.end - sch.span.start) as usize == stext.len() + 2,
    })
}

pub(super) fn define(env: &mut ModuleEnv, name: &Ident, value: Global) {
    // The map is shared only once the environment is built: here it is copied at no cost.
    let previous = Arc::make_mut(&mut env.globals).insert(name.name.clone(), GlobalDef { value, span: name.span });
    if let Some(previous) = previous {
        env.rebound.entry(name.name.clone()).or_default().push((previous.span.end, previous.value));
    }
}

fn module_stmt_error(file: FileId, span: Span) -> Diagnostic {
    Diagnostic::error(codes::UNSUPPORTED_MODULE_STMT, file, "this statement is not allowed at module level")
        .primary(span, "not an import, opset declaration, type variable, constant or function")
        .help("module-level code may only import, declare `Opset`s, `TypeVar`s and constants, and define functions")
}

/// Resolves `a.b.c` against the globals: modules, opset attributes of modules, type names.
pub fn resolve_dotted(env: &ModuleEnv, expr: &Expr) -> Option<Global> {
    match &expr.kind {
        ExprKind::Name(n) => env.get(n).cloned(),
        ExprKind::Attribute { value, attr } => {
            // A name's global by reference: resolving `op.Add` must not copy the opset `op` only
            // to find that this lookup has nothing for it.
            let resolved;
            let base = match &value.kind {
                ExprKind::Name(n) => env.get(n)?,
                _ => {
                    resolved = resolve_dotted(env, value)?;
                    &resolved
                }
            };
            resolve_attribute(env, base, attr)
        }
        _ => None,
    }
}

/// `base.attr`, for a `base` [`resolve_dotted`] resolved.
fn resolve_attribute(env: &ModuleEnv, base: &Global, attr: &Ident) -> Option<Global> {
    match base {
        Global::Module(key @ (ModuleKey::Onnxs(_) | ModuleKey::Package(_))) => env.namespace(key)?.get(&attr.name),
        Global::Module(ModuleKey::Known(m)) => {
            let full = format!("{m}.{}", attr.name);
            match full.as_str() {
                "onnxscript.values" | "onnxscript.onnx_opset" | "onnxscript.onnx_types" => {
                    Some(Global::Module(ModuleKey::Known(full)))
                }
                "onnxscript.script" => Some(Global::ScriptDecorator),
                "onnxscript.graph" => Some(Global::GraphDecorator),
                "onnxscript.values.Opset" | "onnxscript.Opset" => Some(Global::OpsetClass),
                _ if m == "typing" => Some(Global::Typing(attr.name.clone())),
                _ => imported(m, &attr.name).ok(),
            }
        }
        Global::Lib(path) => match constlib::member(path, &attr.name)? {
            constlib::Member::Value(v) => Some(Global::Const(v)),
            constlib::Member::Object(p) => Some(Global::Lib(p)),
        },
        _ => None,
    }
}

/// `A, B = value` at module level: each name a constant from the evaluated sequence.
fn unpack_constants(env: &mut ModuleEnv, names: &[Expr], value: &Expr, span: Span, diags: &mut Diagnostics) {
    let idents: Option<Vec<Ident>> = names
        .iter()
        .map(|n| match &n.kind {
            ExprKind::Name(name) => Some(Ident { name: name.clone(), span: n.span }),
            _ => None,
        })
        .collect();
    let Some(idents) = idents else {
        diags.push(module_stmt_error(env.file, span));
        return;
    };
    let values = match global_from_assignment(env, value, diags) {
        Ok(Global::Const(v)) => match v.items().map(|items| items.to_vec()) {
            Some(items) if items.len() == idents.len() => Ok(items),
            Some(items) => Err(diags.push_error(
                Diagnostic::error(
                    codes::CONSTANT_ERROR,
                    env.file,
                    format!(
                        "this constant raises `ValueError` in Python: {} values to unpack into {} names",
                        items.len(),
                        idents.len()
                    ),
                )
                .primary(value.span, format!("{} values", items.len()))
                .help("unpack as many names as the sequence has values"),
            )),
            None => Err(diags.push_error(
                Diagnostic::error(
                    codes::CONSTANT_ERROR,
                    env.file,
                    format!("this constant raises `TypeError` in Python: cannot unpack a {}", v.type_name()),
                )
                .primary(value.span, "not a sequence"),
            )),
        },
        Ok(Global::Deferred(d)) => {
            for ident in &idents {
                define(env, ident, Global::Deferred(d.clone()));
            }
            return;
        }
        Ok(_) => Err(diags.push_error(module_stmt_error(env.file, span))),
        Err(r) => Err(r),
    };
    match values {
        Ok(values) => {
            for (ident, v) in idents.iter().zip(values) {
                define(env, ident, Global::Const(v));
            }
        }
        Err(r) => {
            for ident in &idents {
                define(env, ident, Global::Poison(r));
            }
        }
    }
}

/// The meaning of `NAME = value` at module level.
fn global_from_assignment(env: &ModuleEnv, value: &Expr, diags: &mut Diagnostics) -> Result<Global, Reported> {
    let file = env.file;
    if let ExprKind::Call { func, args } = &value.kind {
        match resolve_dotted(env, func) {
            Some(Global::OpsetClass) => return opset_declaration(env, value.span, args, diags).map(Global::Opset),
            Some(Global::Typing(t)) if t == "TypeVar" => return type_var(env, value.span, args, diags),
            _ => {}
        }
    }
    let is_union = match &value.kind {
        ExprKind::Subscript { value: head, .. } => {
            matches!(resolve_dotted(env, head), Some(Global::Typing(t)) if t == "Union")
        }
        ExprKind::BinOp { op: BinOp::BitOr, .. } => true,
        _ => false,
    };
    if is_union {
        if let Some(mut types) = tensor_types(env, value) {
            types.sort();
            types.dedup();
            return Ok(Global::TypeUnion(types));
        }
    }
    if let Some(g) = resolve_dotted(env, value) {
        // An alias such as `op = opset18` or `F = FLOAT`.
        if !matches!(g, Global::Function(_)) {
            return Ok(g);
        }
    }
    match super::consteval::eval_global(env, value) {
        Ok(g) => Ok(g),
        Err(super::consteval::ConstError::NotConstant(span)) => Err(diags.push_error(
            Diagnostic::error(codes::UNSUPPORTED_MODULE_STMT, file, "module-level values must be constants")
                .primary(span, "not a compile-time constant")
                .help("module constants are computed when the module is compiled: numbers, strings, lists, tensors (`np.array`, `make_tensor`, `ir.tensor`) and arithmetic on them; an op call computes at run time"),
        )),
        Err(super::consteval::ConstError::Poisoned(r)) => Err(r),
        // Python computes it: an error only if a function reads it.
        Err(super::consteval::ConstError::Failed(d))
            if matches!(
                d.code,
                codes::UNSUPPORTED_CONSTANT
                    | codes::RUN_TIME_VALUE
                    | codes::CONSTANT_TOO_LARGE
                    | codes::INTEGER_OVERFLOW
            ) =>
        {
            Ok(Global::Deferred(d))
        }
        Err(super::consteval::ConstError::Failed(d)) => Err(env.report(diags, *d)),
    }
}

fn opset_declaration(env: &ModuleEnv, span: Span, args: &[Arg], diags: &mut Diagnostics) -> Result<Opset, Reported> {
    let file = env.file;
    let mut domain = None;
    let mut version = None;
    for (i, arg) in args.iter().enumerate() {
        let slot = match (&arg.keyword, i) {
            (Some(k), _) if k.name == "domain" => 0,
            (Some(k), _) if k.name == "version" => 1,
            (None, 0) => 0,
            (None, 1) => 1,
            _ => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_OPSET, file, "unexpected argument to `Opset`")
                        .primary(arg.span, "`Opset` takes a domain and a version")
                        .help("write `Opset(domain=\"com.microsoft\", version=1)`"),
                ));
            }
        };
        let v = eval_const(env, &arg.value).ok();
        match (slot, v) {
            (0, Some(PyValue::Str(s))) => domain = Some(s),
            (1, Some(PyValue::Int(n))) if i64::try_from(n).is_ok() => version = i64::try_from(n).ok(),
            (0, _) => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_OPSET, file, "the opset domain must be a string")
                        .primary(arg.value.span, "expected a string"),
                ));
            }
            _ => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_OPSET, file, "the opset version must be an integer")
                        .primary(arg.value.span, "expected an integer"),
                ));
            }
        }
    }
    match (domain, version) {
        (Some(domain), Some(version)) => {
            let domain = if domain == "ai.onnx" { String::new() } else { domain };
            Ok(Opset { domain, version })
        }
        _ => Err(diags.push_error(
            Diagnostic::error(codes::BAD_OPSET, file, "`Opset` needs both a domain and a version")
                .primary(span, "incomplete opset declaration")
                .help("write `Opset(domain=\"com.microsoft\", version=1)`"),
        )),
    }
}

fn type_var(env: &ModuleEnv, span: Span, args: &[Arg], diags: &mut Diagnostics) -> Result<Global, Reported> {
    let file = env.file;
    let name = match args.first().map(|a| &a.value.kind) {
        Some(ExprKind::Str(s)) => s.clone(),
        _ => {
            return Err(diags.push_error(
                Diagnostic::error(codes::BAD_ANNOTATION, file, "`TypeVar` needs its name as the first argument")
                    .primary(span, "expected `TypeVar(\"T\", ...)`"),
            ));
        }
    };
    let mut allowed = Vec::new();
    for arg in &args[1..] {
        let is_bound = arg.keyword.as_ref().is_some_and(|k| k.name == "bound");
        if arg.keyword.is_some() && !is_bound {
            continue;
        }
        match tensor_types(env, &arg.value) {
            Some(ts) => allowed.extend(ts),
            None => {
                return Err(diags.push_error(
                    Diagnostic::error(codes::BAD_ANNOTATION, file, "a `TypeVar` bound must be tensor types")
                        .primary(arg.value.span, "not a tensor type or a union of tensor types")
                        .help("write `TypeVar(\"T\", bound=Union[FLOAT, DOUBLE])`"),
                ));
            }
        }
    }
    allowed.sort();
    allowed.dedup();
    Ok(Global::TypeVar { name, allowed })
}
