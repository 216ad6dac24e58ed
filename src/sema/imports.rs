//! Imports: what `import` and `from ... import` bind in a module. A module onnxsc knows by name
//! (onnxscript, typing, torch, the constant library: `sema::known_names`) binds what that module
//! defines; a `.onnxs` module of the compilation (or a directory of them) binds a namespace
//! shared with the other modules' environments, resolved by the driver ([`ImportContext`]).

use super::env::{namespaces_of, Global, ModuleEnv, ModuleKey, Namespace, SharedNamespaces};
use super::known_names::{imported, module_global};
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Edit, Reported};
use crate::source::{FileId, Span};
use crate::syntax::ast::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// What a module named by an import is, as the driver resolved it.
#[derive(Clone, Debug, PartialEq)]
pub enum ModuleLookup {
    /// A `.onnxs` module of the compilation: an index into [`ImportContext::modules`].
    Onnxs(usize),
    /// A directory with no `.onnxs` file of its name: only its modules can be imported from it.
    Package,
    /// A module that is not compiled: onnxscript, typing, torch, the standard library.
    External,
    /// No such module; the paths tried, for the message.
    NotFound { tried: Vec<String> },
    /// Several input files could be the module.
    Ambiguous { candidates: Vec<String> },
}

/// A `.onnxs` module as the modules that import it see it.
#[derive(Clone, Debug, Default)]
pub struct ModuleInterface {
    /// Its functions with their compilation-wide ids, known before any environment is built.
    pub functions: Vec<(String, usize)>,
    /// Its global names once its environment is built; `None` while it is being built (the
    /// importer is part of an import cycle with it): then only its functions are visible.
    pub exports: Option<Exports>,
    /// The file did not parse (already reported): every name imported from it is poison.
    pub broken: Option<Reported>,
}

/// The global names of a built module, and the namespaces they refer to.
#[derive(Clone, Debug, Default)]
pub struct Exports {
    pub globals: Arc<BTreeMap<String, Global>>,
    /// The namespaces the module imports itself.
    pub namespaces: HashMap<ModuleKey, Arc<Namespace>>,
}

impl Exports {
    pub fn of(env: &ModuleEnv) -> Exports {
        Exports {
            globals: Arc::new(env.globals.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect()),
            namespaces: env.namespaces.clone(),
        }
    }
}

/// What a module's imports of other `.onnxs` modules resolve to.
pub struct ImportContext<'c> {
    /// The compilation-wide id of the module's first function.
    pub first_function: usize,
    /// Resolves a module as written in this module: (number of leading dots, dotted name).
    pub resolve: &'c dyn Fn(usize, &str) -> ModuleLookup,
    pub modules: &'c [ModuleInterface],
    /// The key of each module's namespace ([`Global::Module`]), unique in the compilation.
    pub keys: &'c [ModuleKey],
    /// The namespaces of the compilation, filled as modules are built.
    pub linked: &'c SharedNamespaces,
}

/// `import a.b.c` and `import a.b.c as m`: a module onnxsc knows by name, or a `.onnxs`
/// module (or directory) of the compilation.
pub(super) fn import_modules(
    env: &mut ModuleEnv,
    ctx: &ImportContext,
    aliases: &[ImportAlias],
    diags: &mut Diagnostics,
) {
    let file = env.file;
    for a in aliases {
        let dotted = a.name.dotted();
        match (ctx.resolve)(0, &dotted) {
            ModuleLookup::External => match &a.alias {
                Some(alias) => env.define(alias, module_global(&dotted)),
                None => {
                    let top = &a.name.parts[0];
                    env.define(top, module_global(&top.name));
                }
            },
            found @ (ModuleLookup::Onnxs(_) | ModuleLookup::Package) => {
                let key = bind_module(env, ctx, &found, &dotted);
                match &a.alias {
                    Some(alias) => env.define(alias, Global::Module(key)),
                    None => {
                        // `import a.b.c` binds `a`, whose `b` is `a.b`, whose `c` is the module.
                        let mut child = Global::Module(key);
                        for depth in (1..a.name.parts.len()).rev() {
                            let prefix: Vec<&str> = a.name.parts[..depth].iter().map(|p| p.name.as_str()).collect();
                            let prefix = prefix.join(".");
                            let ns_key = ModuleKey::Package(prefix.clone());
                            let ns = env.namespaces.entry(ns_key.clone()).or_insert_with(|| {
                                Arc::new(Namespace { display: prefix.clone(), ..Default::default() })
                            });
                            Arc::make_mut(&mut Arc::make_mut(ns).names).insert(a.name.parts[depth].name.clone(), child);
                            child = Global::Module(ns_key);
                        }
                        env.define(&a.name.parts[0], child);
                    }
                }
            }
            missing => {
                let r = diags.push_error(module_not_found(file, &dotted, a.name.span, &missing));
                let bound = a.alias.as_ref().unwrap_or(&a.name.parts[0]);
                env.define(bound, Global::Poison(r));
            }
        }
    }
}

/// `from MODULE import a, b as c`.
#[allow(clippy::too_many_arguments, reason = "the parts of the statement and the context it is resolved in")]
pub(super) fn import_names(
    env: &mut ModuleEnv,
    ctx: &ImportContext,
    stmt_span: Span,
    level: usize,
    m: &DottedName,
    names: &[ImportAlias],
    star: bool,
    diags: &mut Diagnostics,
) {
    let file = env.file;
    let module_name = m.dotted();
    let lookup = (ctx.resolve)(level, &module_name);
    if lookup != ModuleLookup::External {
        import_from_onnxs(env, ctx, stmt_span, level, m, names, star, &lookup, diags);
        return;
    }
    if star {
        diags.push(
            Diagnostic::error(codes::UNSUPPORTED_IMPORT, file, "`import *` is not supported")
                .primary(stmt_span, "star import")
                .help(format!("import the names you use: `from {module_name} import FLOAT, script`")),
        );
    }
    for a in names {
        let name = &a.name.parts[0];
        let bound = a.alias.as_ref().unwrap_or(name);
        match imported(&module_name, &name.name) {
            Ok(g) => env.define(bound, g),
            Err(msg) => {
                let r = diags.push_error(
                    Diagnostic::error(codes::UNSUPPORTED_IMPORT, file, msg)
                        .primary(name.span, "not found in this module"),
                );
                env.define(bound, Global::Poison(r));
            }
        }
    }
}

/// Binds the namespace of an imported `.onnxs` module (or directory) in `env`; returns its key.
fn bind_module(env: &mut ModuleEnv, ctx: &ImportContext, lookup: &ModuleLookup, shown: &str) -> ModuleKey {
    match lookup {
        ModuleLookup::Onnxs(i) => {
            let key = ctx.keys.get(*i).cloned().unwrap_or_else(|| ModuleKey::Onnxs(shown.to_string()));
            let none = ModuleInterface::default();
            let iface = ctx.modules.get(*i).unwrap_or(&none);
            let names = match &iface.exports {
                _ if iface.broken.is_some() => Arc::default(),
                Some(ex) => {
                    link_namespaces(env, &ex.namespaces);
                    ex.globals.clone()
                }
                // The module imports this one, directly or not, and is not built yet.
                None => Arc::new(iface.functions.iter().map(|(n, id)| (n.clone(), Global::Function(*id))).collect()),
            };
            let ns = Namespace { display: shown.to_string(), names, broken: None };
            let ns = Arc::new(match iface.broken {
                Some(r) => poisoned(ns, r),
                None => ns,
            });
            merge_namespace(&mut env.namespaces, &key, &ns);
            merge_namespace(&mut namespaces_of(&env.linked), &key, &ns);
            key
        }
        _ => {
            let key = ModuleKey::Package(shown.to_string());
            env.namespaces
                .entry(key.clone())
                .or_insert_with(|| Arc::new(Namespace { display: shown.to_string(), ..Default::default() }));
            key
        }
    }
}

/// Makes the namespaces another module imports, which its globals refer to, known to the
/// compilation (and so to `env`).
fn link_namespaces(env: &ModuleEnv, from: &HashMap<ModuleKey, Arc<Namespace>>) {
    let mut linked = namespaces_of(&env.linked);
    for (k, ns) in from {
        merge_namespace(&mut linked, k, ns);
    }
}

/// Adds a namespace to a table. The same module may be known twice, once complete and once as
/// the functions-only view of a module still being built (an import cycle): the fuller view
/// wins, whatever the order.
fn merge_namespace(table: &mut HashMap<ModuleKey, Arc<Namespace>>, key: &ModuleKey, ns: &Arc<Namespace>) {
    match table.get(key) {
        Some(have) if have.names.len() >= ns.names.len() => {}
        _ => {
            table.insert(key.clone(), ns.clone());
        }
    }
}

/// A namespace whose module did not parse: its names are unknown, and their uses stay silent.
fn poisoned(mut ns: Namespace, r: Reported) -> Namespace {
    ns.names = Arc::default();
    ns.broken = Some(r);
    ns
}

/// `from MODULE import a, b` where MODULE is a `.onnxs` module or a directory of them (or was
/// looked for as one and not found).
#[allow(clippy::too_many_arguments, reason = "the parts of the statement and the context it is resolved in")]
fn import_from_onnxs(
    env: &mut ModuleEnv,
    ctx: &ImportContext,
    stmt_span: Span,
    level: usize,
    m: &DottedName,
    names: &[ImportAlias],
    star: bool,
    lookup: &ModuleLookup,
    diags: &mut Diagnostics,
) {
    let file = env.file;
    let module_name = m.dotted();
    let dots = ".".repeat(level);
    let shown = format!("{dots}{module_name}");
    let module_span = if m.parts.is_empty() { stmt_span } else { m.span };
    if star {
        diags.push(
            Diagnostic::error(codes::UNSUPPORTED_IMPORT, file, "`import *` is not supported")
                .primary(stmt_span, "star import")
                .help(format!("import the names you use: `from {shown} import f, g`")),
        );
    }
    if !matches!(lookup, ModuleLookup::Onnxs(_) | ModuleLookup::Package) {
        let r = diags.push_error(module_not_found(file, &shown, module_span, lookup));
        for a in names {
            env.define(a.alias.as_ref().unwrap_or(&a.name.parts[0]), Global::Poison(r));
        }
        return;
    }
    for a in names {
        let name = &a.name.parts[0];
        let bound = a.alias.as_ref().unwrap_or(name);
        // A name the module defines.
        if let ModuleLookup::Onnxs(i) = *lookup {
            let none = ModuleInterface::default();
            let iface = ctx.modules.get(i).unwrap_or(&none);
            if let Some(r) = iface.broken {
                env.define(bound, Global::Poison(r));
                continue;
            }
            let found = match &iface.exports {
                Some(ex) => ex.globals.get(&name.name).cloned().inspect(|g| {
                    if matches!(g, Global::Module(_)) {
                        link_namespaces(env, &ex.namespaces);
                    }
                }),
                None => iface.functions.iter().find(|(n, _)| *n == name.name).map(|(_, id)| Global::Function(*id)),
            };
            if let Some(g) = found {
                env.define(bound, g);
                continue;
            }
        }
        // A module of the package: `from pkg import mod`, `from . import helpers`.
        let sub = if module_name.is_empty() { name.name.clone() } else { format!("{module_name}.{}", name.name) };
        let sub_lookup = (ctx.resolve)(level, &sub);
        if matches!(sub_lookup, ModuleLookup::Onnxs(_)) {
            let key = bind_module(env, ctx, &sub_lookup, &format!("{dots}{sub}"));
            env.define(bound, Global::Module(key));
            continue;
        }
        let d = match *lookup {
            ModuleLookup::Onnxs(i) => match ctx.modules.get(i).and_then(|m| m.exports.as_ref()) {
                Some(ex) => {
                    let mut d = Diagnostic::error(codes::UNDEFINED_NAME, file, format!("module `{shown}` has no `{}`", name.name))
                        .primary(name.span, "not defined in that module");
                    d = match crate::diagnostics::suggest::did_you_mean(&name.name, ex.globals.keys().map(String::as_str)) {
                        Some(s) => d.help(format!("did you mean `{s}`?")),
                        None => d.help(format!("`{shown}` defines no function, constant, opset or type named `{}`", name.name)),
                    };
                    d
                }
                None => Diagnostic::error(codes::UNSUPPORTED_IMPORT, file, format!("cannot import `{}` from `{shown}`, which imports this module", name.name))
                    .primary(name.span, "not a function of that module")
                    .help("across an import cycle only functions can be imported; move the constant, opset or type to a module that both import"),
            },
            _ => module_not_found(file, &format!("{dots}{sub}"), name.span, &sub_lookup),
        };
        let r = diags.push_error(d);
        env.define(bound, Global::Poison(r));
    }
}

/// E0111: an imported module is not a `.onnxs` file of the compilation or beside the importer.
fn module_not_found(file: FileId, shown: &str, span: Span, lookup: &ModuleLookup) -> Diagnostic {
    match lookup {
        ModuleLookup::Ambiguous { candidates } => {
            Diagnostic::error(codes::MODULE_NOT_FOUND, file, format!("module `{shown}` is ambiguous"))
                .primary(span, "several input files could be this module")
                .help(format!(
                    "it could be {}; import it relatively (`from .{} import ...`), or give only one of them",
                    candidates.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(" or "),
                    shown.trim_start_matches('.')
                ))
        }
        ModuleLookup::NotFound { tried } if !tried.is_empty() => {
            Diagnostic::error(codes::MODULE_NOT_FOUND, file, format!("module `{shown}` not found"))
                .primary(span, "no such `.onnxs` module")
                .help(format!(
                    "looked for {}; give the module's file as an input, or put it next to the file that imports it",
                    tried.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(" and ")
                ))
        }
        _ => Diagnostic::error(codes::MODULE_NOT_FOUND, file, format!("module `{shown}` not found"))
            .primary(span, "no such `.onnxs` module")
            .help("give the module's file as an input, or put it next to the file that imports it"),
    }
}

/// The edit that imports `name` from `module` (`from onnxscript import FLOAT`): appended to the
/// module's last `from MODULE import ...`, else a new line before its first import (or its
/// first statement after the docstring).
pub fn import_edit(env: &ModuleEnv, module: &str, name: &str) -> Edit {
    let body = &env.module.body;
    fn imports_from<'a>(s: &'a Stmt, module: &str) -> Option<&'a Vec<ImportAlias>> {
        match &s.kind {
            StmtKind::ImportFrom { level: 0, module: m, names, star: false } if m.dotted() == module => Some(names),
            _ => None,
        }
    }
    // Beside plain names (`from onnxscript import FLOAT, script`) rather than an alias
    // (`opset18 as op`), when there is such a statement.
    let existing = body
        .iter()
        .filter_map(|s| imports_from(s, module))
        .find(|names| names.iter().all(|a| a.alias.is_none()))
        .or_else(|| body.iter().rev().find_map(|s| imports_from(s, module)))
        .and_then(|names| names.last());
    if let Some(last) = existing {
        return Edit::insert(last.span.end, format!(", {name}"));
    }
    let first_import = body.iter().find(|s| matches!(s.kind, StmtKind::Import(_) | StmtKind::ImportFrom { .. }));
    let docstring = |s: &&Stmt| matches!(s.kind, StmtKind::Expr(Expr { kind: ExprKind::Str(_), .. }));
    let at = match first_import {
        Some(s) => s.span.start,
        None => match body.iter().position(|s| !docstring(&s)) {
            Some(i) => body[i].span.start,
            None => body.last().map(|s| s.span.end).unwrap_or(0),
        },
    };
    let line = format!("from {module} import {name}");
    if first_import.is_none() && body.iter().all(|s| docstring(&s)) && !body.is_empty() {
        Edit::insert(at, format!("\n{line}"))
    } else {
        Edit::insert(at, format!("{line}\n"))
    }
}
