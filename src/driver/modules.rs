//! Modules: which `.onnxs` file an import names, and the files that imports bring in.
//!
//! A module `a.b` imported by `dir/main.onnxs` is, in order: the file `dir/a/b.onnxs` (an input,
//! or found on disk and compiled in too); an input file whose path ends in `a/b.onnxs` (several
//! are ambiguous); a directory `dir/a/b` (a package: only its modules can be imported from it).
//! A relative import (`from .a import f`, `from ..a import f`) starts from `dir` (or its
//! parents) and looks nowhere else. The modules onnxsc models (`onnxscript`, `typing`, `torch`)
//! are never looked for, and a standard-library or well-known package name that is not found is
//! not an error (it stays opaque, as before modules existed).
//!
//! Discovery follows the imports of the inputs, in order, then of each discovered module in
//! turn, so the order of the modules (and of the library's functions) depends only on the
//! inputs' order and the files' contents.

use super::parse::{parse_input, PreviousParses};
use crate::diagnostics::{Diagnostics, Reported};
use crate::sema::env;
use crate::sema::imports::{ModuleInterface, ModuleLookup};
use crate::source::{FileId, SourceMap};
use crate::syntax::ast::{Module, StmtKind};
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

/// One module of the compilation: an input, or a file an import brought in.
pub struct Unit {
    /// The name it is reported under: as given, or the importer's directory joined with the
    /// module's path.
    pub name: String,
    /// Its identity: the canonical path when the file exists, else the normalised name.
    pub key: PathBuf,
    /// Its name, normalised (`a/./b` is `a/b`), for matching module paths against it.
    pub normalized: PathBuf,
    pub file: FileId,
    /// `Err` when it did not parse (reported).
    pub module: Result<Module, Reported>,
    /// Brought in by an import rather than given.
    pub discovered: bool,
    /// How many calls deep a recursive walk of its syntax tree goes, at most (`usize::MAX` when
    /// not measured): what decides the stack the later phases need.
    pub nesting: usize,
}

/// Every module of the compilation and what each one's imports resolve to.
#[derive(Default)]
pub struct Modules {
    pub units: Vec<Unit>,
    /// For each unit: (leading dots, dotted name) as written → what it is.
    pub lookups: Vec<HashMap<(usize, String), ModuleLookup>>,
    /// For each unit: the units it imports, in statement order.
    pub deps: Vec<Vec<usize>>,
    /// The bytes of source read so far, against [`super::files::MAX_SOURCE_BYTES`].
    pub source_bytes: u64,
    /// The unit of each [`identity`].
    pub by_identity: HashMap<PathBuf, usize>,
    /// The canonical form of each path met, so that a deep path is resolved once per
    /// component, not once per component for every module under it (see [`Modules::key`]).
    pub canonical: std::cell::RefCell<HashMap<PathBuf, PathBuf>>,
    /// Texts that stand in for files on disk, by [`identity`]: an editor's unsaved documents.
    pub overlay: HashMap<PathBuf, String>,
}

/// What parsing the modules of a compilation reads and writes: an editor's parses of the last
/// analysis (only what an edit touched is parsed again), the files' texts, the diagnostics.
pub struct Parsing<'a> {
    pub previous: &'a PreviousParses,
    pub sources: &'a mut SourceMap,
    pub diags: &'a mut Diagnostics,
}

/// What a module path resolves to, before loading.
enum Resolved {
    Unit(usize),
    NewFile(PathBuf),
    Lookup(ModuleLookup),
}

/// Modules that onnxsc models itself: never looked for as `.onnxs` files.
fn is_modeled(dotted: &str) -> bool {
    let root = dotted.split('.').next().unwrap_or("");
    matches!(root, "onnxscript" | "typing" | "typing_extensions" | "torch" | "__future__")
        || dotted == "collections.abc"
}

/// Python modules whose import, when no `.onnxs` module has the name, stays opaque.
fn is_known_python_module(root: &str) -> bool {
    const PACKAGES: [&str; 8] =
        ["numpy", "onnx", "onnxruntime", "onnx_ir", "onnxscript", "torch", "ml_dtypes", "onnxsc"];
    static STDLIB: &str = include_str!("stdlib_modules.txt");
    PACKAGES.contains(&root)
        || STDLIB.lines().filter(|l| !l.starts_with('#')).flat_map(str::split_whitespace).any(|m| m == root)
}

/// `a/./b/../c` → `a/c`, without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            c => out.push(c),
        }
    }
    out.iter().collect()
}

/// The identity of a file: its canonical path if it exists, else its normalised path.
pub fn identity(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| normalize(path))
}

/// The names a module binds at module level (what `from it import NAME` can find).
fn top_level_names(module: &Module) -> HashSet<&str> {
    let mut out = HashSet::new();
    for stmt in &module.body {
        match &stmt.kind {
            StmtKind::FunctionDef(f) => {
                out.insert(f.name.name.as_str());
            }
            StmtKind::Import(aliases) => {
                for a in aliases {
                    out.insert(a.alias.as_ref().map(|i| i.name.as_str()).unwrap_or(a.name.parts[0].name.as_str()));
                }
            }
            StmtKind::ImportFrom { names, .. } => {
                for a in names {
                    out.insert(a.alias.as_ref().unwrap_or(&a.name.parts[0]).name.as_str());
                }
            }
            StmtKind::Assign { targets, .. } if targets.len() == 1 => {
                if let crate::syntax::ast::ExprKind::Name(n) = &targets[0].kind {
                    out.insert(n.as_str());
                }
            }
            StmtKind::AnnAssign { target, value: Some(_), .. } => {
                if let crate::syntax::ast::ExprKind::Name(n) = &target.kind {
                    out.insert(n.as_str());
                }
            }
            _ => {}
        }
    }
    out
}

/// An import statement's needs: the module, and the names that may be modules of it.
enum Request {
    Import(String),
    From { level: usize, module: String, names: Vec<String> },
}

fn requests(module: &Module) -> Vec<Request> {
    let mut out = Vec::new();
    for stmt in &module.body {
        match &stmt.kind {
            StmtKind::Import(aliases) => out.extend(aliases.iter().map(|a| Request::Import(a.name.dotted()))),
            StmtKind::ImportFrom { level, module, names, .. } => out.push(Request::From {
                level: *level,
                module: module.dotted(),
                names: names.iter().map(|a| a.name.parts[0].name.clone()).collect(),
            }),
            _ => {}
        }
    }
    out
}

impl Modules {
    /// Adds an input (or a discovered file), parsing it; returns its index.
    pub fn add(&mut self, name: String, key: PathBuf, bytes: &[u8], discovered: bool, parsing: &mut Parsing) -> usize {
        self.source_bytes += bytes.len() as u64;
        let previous = parsing.previous.get(&name);
        let (file, module, nesting) = parse_input(&name, bytes, previous, parsing.sources, parsing.diags);
        self.by_identity.entry(key.clone()).or_insert(self.units.len());
        let normalized = normalize(Path::new(&name));
        self.units.push(Unit { name, key, normalized, file, module, discovered, nesting });
        self.lookups.push(HashMap::new());
        self.deps.push(Vec::new());
        self.units.len() - 1
    }

    /// Follows the imports of every unit, loading the `.onnxs` modules they name.
    pub fn discover(&mut self, parsing: &mut Parsing) {
        let mut i = 0;
        while i < self.units.len() {
            let reqs = self.units[i].module.as_ref().map(requests).unwrap_or_default();
            for r in reqs {
                match r {
                    Request::Import(dotted) => {
                        self.lookup(i, 0, &dotted, parsing);
                    }
                    Request::From { level, module, names } => {
                        let found = self.lookup(i, level, &module, parsing);
                        let defined: HashSet<String> = match found {
                            ModuleLookup::Onnxs(j) => self.units[j]
                                .module
                                .as_ref()
                                .map(|m| top_level_names(m).into_iter().map(String::from).collect())
                                .unwrap_or_default(),
                            ModuleLookup::Package => HashSet::new(),
                            _ => continue,
                        };
                        for n in names.iter().filter(|n| !defined.contains(*n)) {
                            let sub = if module.is_empty() { n.clone() } else { format!("{module}.{n}") };
                            self.lookup(i, level, &sub, parsing);
                        }
                    }
                }
            }
            i += 1;
        }
    }

    /// What `(level, dotted)` written in unit `importer` names, loading the file if it is new.
    fn lookup(&mut self, importer: usize, level: usize, dotted: &str, parsing: &mut Parsing) -> ModuleLookup {
        let memo_key = (level, dotted.to_string());
        if let Some(l) = self.lookups[importer].get(&memo_key) {
            return l.clone();
        }
        let result = match self.resolve(importer, level, dotted) {
            Resolved::Unit(j) => ModuleLookup::Onnxs(j),
            Resolved::Lookup(l) => l,
            Resolved::NewFile(path) => match self.read(&path) {
                Ok(bytes) if self.source_bytes + bytes.len() as u64 > super::files::MAX_SOURCE_BYTES => {
                    ModuleLookup::NotFound {
                        tried: vec![format!(
                            "{} (not read: the sources of one compilation may total at most {} bytes)",
                            path.display(),
                            super::files::MAX_SOURCE_BYTES
                        )],
                    }
                }
                Ok(bytes) => {
                    let key = self.key(&path);
                    let j = self.add(path.display().to_string(), key, &bytes, true, parsing);
                    ModuleLookup::Onnxs(j)
                }
                Err(e) => ModuleLookup::NotFound { tried: vec![format!("{} ({e})", path.display())] },
            },
        };
        if let ModuleLookup::Onnxs(j) = result {
            if !self.deps[importer].contains(&j) {
                self.deps[importer].push(j);
            }
        }
        self.lookups[importer].insert(memo_key, result.clone());
        result
    }

    /// A module's bytes: the overlay's text, else the file's (a regular file, within limits).
    fn read(&self, path: &Path) -> Result<Vec<u8>, String> {
        let key = if self.overlay.is_empty() { PathBuf::new() } else { self.key(path) };
        match self.overlay.get(&key) {
            Some(text) => Ok(text.clone().into_bytes()),
            None => super::files::read(path, super::files::Kind::Source).map_err(|e| e.message),
        }
    }

    /// [`identity`], remembering the canonical form of every directory on the way: a module
    /// 1,500 directories deep, importing one a directory deeper, would otherwise make
    /// `realpath` walk every prefix of every path (cubic in the depth).
    pub fn key(&self, path: &Path) -> PathBuf {
        fn canon(cache: &mut HashMap<PathBuf, PathBuf>, p: &Path) -> Option<PathBuf> {
            if let Some(c) = cache.get(p) {
                return Some(c.clone());
            }
            let meta = std::fs::symlink_metadata(p).ok()?;
            let c = match (p.parent(), p.file_name()) {
                (Some(parent), Some(name)) if !meta.file_type().is_symlink() && !parent.as_os_str().is_empty() => {
                    canon(cache, parent)?.join(name)
                }
                _ => p.canonicalize().ok()?,
            };
            cache.insert(p.to_path_buf(), c.clone());
            Some(c)
        }
        canon(&mut self.canonical.borrow_mut(), path).unwrap_or_else(|| normalize(path))
    }

    /// What `(level, dotted)` written in unit `importer` names, without loading anything: a
    /// file not yet loaded is not found.
    pub fn lookup_loaded(&self, importer: usize, level: usize, dotted: &str) -> ModuleLookup {
        if let Some(l) = self.lookups[importer].get(&(level, dotted.to_string())) {
            return l.clone();
        }
        match self.resolve(importer, level, dotted) {
            Resolved::Unit(j) => ModuleLookup::Onnxs(j),
            Resolved::Lookup(l) => l,
            Resolved::NewFile(path) => ModuleLookup::NotFound { tried: vec![path.display().to_string()] },
        }
    }

    fn resolve(&self, importer: usize, level: usize, dotted: &str) -> Resolved {
        if level == 0 && (dotted.is_empty() || is_modeled(dotted)) {
            return Resolved::Lookup(ModuleLookup::External);
        }
        let dir = Path::new(&self.units[importer].name).parent().map(Path::to_path_buf).unwrap_or_default();
        let mut base = dir;
        for _ in 1..level {
            base.push("..");
        }
        let base = normalize(&base);
        let parts: Vec<&str> = dotted.split('.').filter(|p| !p.is_empty()).collect();
        if parts.is_empty() {
            // `from . import helpers`: the importer's directory.
            return Resolved::Lookup(ModuleLookup::Package);
        }
        let mut rel: PathBuf = parts.iter().collect();
        let as_dir = normalize(&base.join(&rel));
        rel.set_extension("onnxs");
        let beside = normalize(&base.join(&rel));
        let key = self.key(&beside);
        if let Some(&j) = self.by_identity.get(&key) {
            return Resolved::Unit(j);
        }
        if beside.is_file() || self.overlay.contains_key(&key) {
            return Resolved::NewFile(beside);
        }
        if level == 0 {
            // An input file of that name elsewhere.
            let matches: Vec<usize> = (0..self.units.len())
                .filter(|&j| !self.units[j].discovered && self.units[j].normalized.ends_with(&rel))
                .collect();
            match matches.as_slice() {
                [j] => return Resolved::Unit(*j),
                [] => {}
                many => {
                    return Resolved::Lookup(ModuleLookup::Ambiguous {
                        candidates: many.iter().map(|j| self.units[*j].name.clone()).collect(),
                    });
                }
            }
        }
        let inputs_inside = self.units.iter().any(|u| u.normalized.starts_with(&as_dir));
        if as_dir.is_dir() || inputs_inside {
            return Resolved::Lookup(ModuleLookup::Package);
        }
        if level == 0 && is_known_python_module(parts[0]) {
            return Resolved::Lookup(ModuleLookup::External);
        }
        Resolved::Lookup(ModuleLookup::NotFound { tried: vec![beside.display().to_string()] })
    }

    /// The order to build the modules' environments in: each after the modules it imports,
    /// except across an import cycle (then the first reached is built last).
    pub fn build_order(&self) -> Vec<usize> {
        let n = self.units.len();
        let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
        let mut order = Vec::with_capacity(n);
        for root in 0..n {
            if state[root] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            state[root] = 1;
            while let Some(&mut (u, ref mut next)) = stack.last_mut() {
                match self.deps[u].get(*next) {
                    Some(&v) => {
                        *next += 1;
                        if state[v] == 0 {
                            state[v] = 1;
                            stack.push((v, 0));
                        }
                    }
                    None => {
                        state[u] = 2;
                        order.push(u);
                        stack.pop();
                    }
                }
            }
        }
        order
    }

    /// The functions of each unit, numbered across the compilation in unit order, and the id
    /// of each unit's first function.
    pub fn interfaces(&self) -> (Vec<ModuleInterface>, Vec<usize>) {
        let mut next = 0;
        let mut firsts = Vec::with_capacity(self.units.len());
        let interfaces = self
            .units
            .iter()
            .map(|u| {
                firsts.push(next);
                match &u.module {
                    Ok(m) => {
                        let functions: Vec<(String, usize)> = env::function_defs(m)
                            .into_iter()
                            .map(|f| {
                                next += 1;
                                (f.name.name.clone(), next - 1)
                            })
                            .collect();
                        ModuleInterface { functions, exports: None, broken: None }
                    }
                    Err(r) => ModuleInterface { functions: Vec::new(), exports: None, broken: Some(*r) },
                }
            })
            .collect();
        (interfaces, firsts)
    }
}
