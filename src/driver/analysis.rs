//! What one compilation knew, kept for an editor: the diagnostics, each module's syntax tree
//! and global names (with where each is defined, through imports), every function's signature,
//! every `@torch_op` binding with how the aten arguments reach the parameters, the facts
//! lowering recorded about names, and the PyTorch schemas in force. The language server answers
//! every request from an [`Analysis`]; nothing is analysed twice.

use super::modules::Modules;
use super::parse::{PreviousParse, PreviousParses};
use crate::aten::AtenRegistry;
use crate::diagnostics::Diagnostic;
use crate::sema::binding;
use crate::sema::calls::Callee;
use crate::sema::decorators::Decoration;
use crate::sema::env::{Global, ModuleEnv, ModuleKey, Namespace};
use crate::sema::facts::Fact;
use crate::sema::imports::ModuleLookup;
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::ast::{ExprKind, Module, StmtKind};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

pub struct Analysis {
    pub sources: SourceMap,
    /// Sorted as `check` prints them.
    pub diagnostics: Vec<Diagnostic>,
    /// Every module of the compilation: the inputs, then the modules their imports brought in.
    pub modules: Vec<ModuleInfo>,
    /// Every function, by compilation-wide id ([`Global::Function`]).
    pub functions: Vec<FunctionInfo>,
    pub bindings: Vec<BindingInfo>,
    pub facts: Vec<Fact>,
    /// The PyTorch schemas, the modules' custom operators included.
    pub registry: Cow<'static, AtenRegistry>,
}

/// A place in a file of the compilation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: FileId,
    pub span: Span,
}

pub struct ModuleInfo {
    /// As given, or as its importer found it.
    pub name: String,
    /// Its identity: the canonical path, or the normalised name of a file not on disk.
    pub key: PathBuf,
    pub file: FileId,
    /// `None` when it did not parse.
    pub ast: Option<std::sync::Arc<Module>>,
    /// Its global names; empty when it did not parse.
    pub globals: BTreeMap<String, Symbol>,
    /// The `.onnxs` modules its globals refer to ([`Global::Module`] keys).
    pub namespaces: HashMap<ModuleKey, Namespace>,
    /// The modules it imports, by index into [`Analysis::modules`].
    pub imports: Vec<usize>,
}

/// A global name: what it means and where it is defined (an imported name: in the module that
/// defines it, when that is a module of the compilation).
#[derive(Clone, Debug, PartialEq)]
pub struct Symbol {
    pub value: Global,
    pub defined: Location,
}

pub struct FunctionInfo {
    pub name: String,
    pub name_span: Span,
    /// The whole definition, decorators and body included.
    pub extent: Span,
    /// `name(x: FLOAT, alpha: float = 1.0) -> FLOAT`, as written.
    pub label: String,
    /// Each parameter as written (`alpha: float = 1.0`).
    pub params: Vec<String>,
    pub doc: Option<String>,
    pub callee: Callee,
}

/// `@torch_op("aten::add.Tensor")` on a function.
pub struct BindingInfo {
    pub file: FileId,
    /// The string literal.
    pub span: Span,
    pub qualname: String,
    /// The function's id.
    pub function: usize,
    /// Each aten argument and the parameter that receives it (`None`: none does).
    pub parameters: Vec<(String, Option<String>)>,
}

impl Analysis {
    /// The module whose text is file `file`.
    pub fn module_of(&self, file: FileId) -> Option<&ModuleInfo> {
        self.modules.iter().find(|m| m.file == file)
    }

    /// The module compiled from `key` ([`super::modules::identity`] of its path).
    pub fn module_by_key(&self, key: &std::path::Path) -> Option<&ModuleInfo> {
        self.modules.iter().find(|m| m.key == key)
    }

    /// The module whose namespace key is `key` (`Global::Module(key)`), if it is a module of
    /// the compilation.
    pub fn module_by_namespace(&self, key: &ModuleKey) -> Option<&ModuleInfo> {
        let ModuleKey::Onnxs(name) = key else { return None };
        self.modules.iter().find(|m| &m.name == name)
    }
}

/// An [`Analysis`] less what a [`super::Compilation`] has.
pub(super) struct Known {
    pub modules: Vec<ModuleInfo>,
    pub functions: Vec<FunctionInfo>,
    pub bindings: Vec<BindingInfo>,
    pub facts: Vec<Fact>,
    pub registry: Cow<'static, AtenRegistry>,
}

impl Known {
    pub fn empty() -> Known {
        Known {
            modules: Vec::new(),
            functions: Vec::new(),
            bindings: Vec::new(),
            facts: Vec::new(),
            registry: Cow::Borrowed(AtenRegistry::embedded()),
        }
    }
}

/// The facts of one compilation, before the modules' syntax trees are moved into it.
pub(super) struct Collected {
    /// Each module's global names and the namespaces they refer to, by unit.
    pub modules: Vec<(BTreeMap<String, Symbol>, HashMap<ModuleKey, Namespace>)>,
    pub functions: Vec<FunctionInfo>,
    pub bindings: Vec<BindingInfo>,
}

/// Each module with its syntax tree, and every module's parse for the next analysis: a module
/// that does not parse now keeps its last tree (from `previous`).
pub(super) fn modules_with_trees(
    mods: Modules,
    sources: &SourceMap,
    mut previous: PreviousParses,
    collected: Vec<(BTreeMap<String, Symbol>, HashMap<ModuleKey, Namespace>)>,
) -> (Vec<ModuleInfo>, PreviousParses) {
    let modules = mods
        .units
        .into_iter()
        .zip(mods.deps)
        .zip(collected)
        .map(|((u, imports), (globals, namespaces))| {
            let ast = u.module.ok().map(std::sync::Arc::new);
            if let Some(module) = &ast {
                let text = sources.text(u.file).to_string();
                previous.insert(u.name.clone(), PreviousParse { text, module: module.clone() });
            }
            ModuleInfo { name: u.name, key: u.key, file: u.file, ast, globals, namespaces, imports }
        })
        .collect();
    (modules, previous)
}

/// Reads what an editor needs out of the environments, while they still borrow the modules.
pub(super) fn collect(
    mods: &Modules,
    envs: &[ModuleEnv],
    decorations: &[Vec<Option<Decoration>>],
    callees: &[Callee],
    registry: &AtenRegistry,
    sources: &SourceMap,
) -> Collected {
    let env_of = |u: usize| envs.iter().find(|e| e.file == mods.units[u].file);
    let mut modules = Vec::with_capacity(mods.units.len());
    for u in 0..mods.units.len() {
        let Some(env) = env_of(u) else {
            modules.push((BTreeMap::new(), HashMap::new()));
            continue;
        };
        let symbols = env
            .globals
            .iter()
            .map(|(name, g)| {
                let here = Location { file: env.file, span: g.span };
                let defined = origin(mods, envs, u, name, 0).unwrap_or(here);
                (name.clone(), Symbol { value: g.value.clone(), defined })
            })
            .collect();
        let namespaces = env.namespaces.iter().map(|(k, ns)| (k.clone(), Namespace::clone(ns))).collect();
        modules.push((symbols, namespaces));
    }
    let mut functions = Vec::new();
    let mut bindings = Vec::new();
    for (env, decos) in envs.iter().zip(decorations) {
        let text = sources.text(env.file);
        let slice = |s: Span| text.get(s.range()).unwrap_or("").to_string();
        let extents = function_extents(env);
        for (k, (f, &extent)) in env.functions.iter().zip(&extents).enumerate() {
            let id = env.first_function + k;
            let Some(callee) = callees.get(id) else { continue };
            let params: Vec<String> = f.params.iter().map(|p| slice(p.span)).collect();
            let returns = f.returns.as_ref().map(|r| format!(" -> {}", slice(r.span))).unwrap_or_default();
            let doc = match f.body.first().map(|s| &s.kind) {
                Some(StmtKind::Expr(e)) => match &e.kind {
                    ExprKind::Str(d) => Some(d.clone()),
                    _ => None,
                },
                _ => None,
            };
            functions.push(FunctionInfo {
                name: f.name.name.clone(),
                name_span: f.name.span,
                extent,
                label: format!("{}({}){returns}", f.name.name, params.join(", ")),
                params,
                doc,
                callee: callee.clone(),
            });
            for b in decos.get(k).and_then(Option::as_ref).map(|d| d.torch_ops.as_slice()).unwrap_or_default() {
                let parameters = registry.lookup(&b.qualname).map(|s| binding::receiving_parameters(env, f, s));
                bindings.push(BindingInfo {
                    file: env.file,
                    span: b.span,
                    qualname: b.qualname.clone(),
                    function: id,
                    parameters: parameters.unwrap_or_default(),
                });
            }
        }
    }
    Collected { modules, functions, bindings }
}

/// The whole definition of each of the module's functions ([`ModuleEnv::functions`]), from its
/// first decorator to its last statement.
pub(super) fn function_extents(env: &ModuleEnv) -> Vec<Span> {
    let extents: HashMap<*const crate::syntax::ast::FunctionDef, Span> = env
        .module
        .body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::FunctionDef(d) => Some((d as *const _, s.extent())),
            _ => None,
        })
        .collect();
    env.functions.iter().map(|f| extents.get(&(*f as *const _)).copied().unwrap_or(f.header_span)).collect()
}

/// Where global `name` of unit `u` is defined, following `from MODULE import name` into the
/// modules of the compilation (a few levels deep, so import cycles end).
fn origin(mods: &Modules, envs: &[ModuleEnv], u: usize, name: &str, depth: usize) -> Option<Location> {
    let env = envs.iter().find(|e| e.file == mods.units[u].file)?;
    let def = env.globals.get(name)?;
    let here = Location { file: env.file, span: def.span };
    if depth > 8 {
        return Some(here);
    }
    for stmt in &env.module.body {
        if let StmtKind::Import(aliases) = &stmt.kind {
            // `import helpers`: the module itself.
            for a in aliases.iter().filter(|a| a.alias.as_ref().unwrap_or(&a.name.parts[0]).span == def.span) {
                if let ModuleLookup::Onnxs(j) = mods.lookup_loaded(u, 0, &a.name.dotted()) {
                    return Some(Location { file: mods.units[j].file, span: Span::default() });
                }
            }
        }
        let StmtKind::ImportFrom { level, module, names, .. } = &stmt.kind else { continue };
        let Some(alias) = names.iter().find(|a| a.alias.as_ref().unwrap_or(&a.name.parts[0]).span == def.span) else {
            continue;
        };
        let imported = &alias.name.parts[0].name;
        if let ModuleLookup::Onnxs(j) = mods.lookup_loaded(u, *level, &module.dotted()) {
            return origin(mods, envs, j, imported, depth + 1).or(Some(here));
        }
        // `from . import helpers` and `from pkg import mod`: the module itself.
        let sub = if module.parts.is_empty() { imported.clone() } else { format!("{}.{imported}", module.dotted()) };
        if let ModuleLookup::Onnxs(j) = mods.lookup_loaded(u, *level, &sub) {
            return Some(Location { file: mods.units[j].file, span: Span::default() });
        }
    }
    Some(here)
}
