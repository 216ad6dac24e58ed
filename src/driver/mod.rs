//! The driver: files in, functions and diagnostics out. The command line and tests call this.

pub mod analysis;
pub mod files;
mod modules;
pub mod output;
mod reuse;
mod schemas;

pub use analysis::Analysis;
pub use modules::identity;
pub use reuse::Reuse;

use crate::aten::AtenRegistry;
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Reported};
use crate::emit::proto::FunctionFields;
use crate::lower::{
    self,
    ir::{Function, Outline},
};
use crate::parallel;
use crate::sema::binding;
use crate::sema::calls::{self, Callee, Calls};
use crate::sema::decorators::{self, Decoration};
use crate::sema::env::{self, ModuleEnv, ModuleKey};
use crate::sema::imports;
use crate::sema::signature::Signature;
use crate::source::{LineIndex, SourceMap, Span};
use crate::syntax;
use std::path::{Path, PathBuf};

/// A failure to read the input, as opposed to errors in it (exit code 2, not 1).
#[derive(Debug)]
pub struct InputError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for InputError {}

/// Expands the command-line paths: files as given, directories to their `.onnxs` files
/// (recursively, sorted, so output does not depend on directory order).
pub fn collect_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| InputError { path: p.clone(), message: io_message(&e) })?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            if found.is_empty() {
                return Err(InputError { path: p.clone(), message: "directory contains no `.onnxs` files".into() });
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(identity(p)));
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| InputError { path: dir.to_path_buf(), message: io_message(&e) })?;
    for entry in entries {
        let entry = entry.map_err(|e| InputError { path: dir.to_path_buf(), message: io_message(&e) })?;
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "onnxs") {
            out.push(path);
        }
    }
    Ok(())
}

pub fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Everything one compilation produced.
pub struct Compilation {
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
    /// The functions compiled, when the options keep them ([`Keep::Functions`]).
    pub functions: Vec<Function>,
    /// An outline of every function compiled, in order, whatever the options keep.
    pub outlines: Vec<Outline>,
    /// With [`Keep::Encoded`]: the functions' `ModelProto.functions` fields, in order, in the
    /// pieces the threads that lowered them wrote ([`FunctionFields`]).
    pub encoded: Vec<Vec<u8>>,
    /// How many functions were not compiled because of their errors (reported).
    pub dropped: usize,
    /// Every file the compilation read (sources, imported modules, schema files): an output
    /// must not replace any of them.
    pub files: Vec<PathBuf>,
    /// The custom operators the modules declare with `torch.library.define`, sorted.
    pub custom_ops: Vec<String>,
    /// The syntax trees the phases are done with, held rather than freed at the end of the
    /// compilation: a process that exits next leaves them to the exit, where freeing a large
    /// module's trees node by node costs a twentieth of its build. Only trees shallow enough to
    /// drop on any thread ([`CALLER_NESTING`]) are held; deeper ones are freed on the compiler's
    /// stack.
    syntax: Vec<syntax::ast::Module>,
}

impl Compilation {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == crate::diagnostics::Severity::Error)
    }
}

/// Where the PyTorch operator schemas come from, and what to keep of the functions compiled.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// A native_functions.yaml to use instead of the embedded one.
    pub native_functions: Option<PathBuf>,
    /// More schemas (custom operators), in native_functions.yaml format.
    pub schema_files: Vec<PathBuf>,
    /// The operators registered with the PyTorch that will export, in the same format: declared
    /// custom operators are compared with them, and bindings to undeclared ones checked.
    pub registered_files: Vec<PathBuf>,
    /// What to keep of each function compiled.
    pub keep: Keep,
}

/// What a compilation keeps of each function it compiles, besides its [`Outline`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Keep {
    /// The function ([`Compilation::functions`]).
    #[default]
    Functions,
    /// Its `ModelProto.functions` field ([`Compilation::encoded`]), written by the thread that
    /// lowered it, right after lowering: the functions' nodes are never all in memory at once,
    /// and the memory one function held is the next one's, already mapped and in the cache.
    /// What `build` writes.
    Encoded,
    /// Nothing: what `check` needs.
    Outline,
}

impl Options {
    /// Whether any schema comes from a file rather than the embedded tables.
    pub fn names_files(&self) -> bool {
        self.native_functions.is_some() || !self.schema_files.is_empty() || !self.registered_files.is_empty()
    }
}

/// One input file: its name and bytes as read.
#[derive(Clone)]
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Reads and compiles the given files.
pub fn compile_paths(paths: &[PathBuf], options: &Options) -> Result<Compilation, InputError> {
    let files = collect_inputs(paths)?;
    let mut inputs = Vec::new();
    let mut total = 0u64;
    for f in &files {
        let bytes = files::read(f, files::Kind::Source)?;
        total += bytes.len() as u64;
        if total > files::MAX_SOURCE_BYTES {
            return Err(InputError {
                path: f.clone(),
                message: format!(
                    "the sources of one compilation may total at most {} bytes, and with this file they reach {total} \
                     (compile the modules in several runs)",
                    files::MAX_SOURCE_BYTES
                ),
            });
        }
        inputs.push(Input { name: f.display().to_string(), bytes });
    }
    compile_inputs(&inputs, options)
}

/// Compiles in-memory sources (name, text) with the embedded schemas; used by tests.
pub fn compile_sources(inputs: Vec<(String, String)>) -> Compilation {
    let inputs: Vec<Input> = inputs.into_iter().map(|(name, text)| Input { name, bytes: text.into_bytes() }).collect();
    compile_embedded(&inputs)
}

/// Compiles inputs whose bytes are already read, with the embedded schemas (the default options).
#[allow(
    clippy::expect_used,
    reason = "schema files are the only input that can fail, and the default options name none"
)]
pub fn compile_embedded(inputs: &[Input]) -> Compilation {
    compile_inputs(inputs, &Options::default()).expect("the default options read no files")
}

/// The operator schemas the options select, without the modules' custom operators, with the
/// diagnostics of malformed schema files (and those files, to render them).
pub struct SelectedSchemas {
    pub registry: std::borrow::Cow<'static, AtenRegistry>,
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

pub fn schemas_for(options: &Options) -> Result<SelectedSchemas, InputError> {
    let (mut sources, mut diags) = (SourceMap::new(), Diagnostics::new());
    let registry = schemas::load(options, &mut sources, &mut diags)?;
    Ok(SelectedSchemas { registry, sources, diagnostics: diags.into_sorted() })
}

/// Compiles inputs whose bytes are already read. Fails only when a schema file cannot be read.
///
/// Shallow sources are compiled on the calling thread, which needs [`CALLER_STACK`] for it; the
/// phases that could recurse deeper move to a thread with [`parallel::COMPILER_STACK`].
pub fn compile_inputs(inputs: &[Input], options: &Options) -> Result<Compilation, InputError> {
    // Schema files are parsed before any source is measured: on the large stack, as before.
    // A compilation large enough to be split runs on a thread of the pool from the start: each
    // parallel phase then starts and ends there, that thread taking pieces too, instead of on
    // a thread that sleeps while the pieces run and must be woken after each phase.
    let splits = inputs.iter().any(|i| syntax::parser::parses_in_pieces(i.bytes.len()));
    if !options.names_files() && !splits {
        return compile_on_this_thread(inputs, options);
    }
    on_compiler_stack(|| compile_on_this_thread(inputs, options))
}

/// Texts that stand in for files on disk (an editor's unsaved documents), by
/// [`identity`] of the path.
pub type Overlay = std::collections::HashMap<PathBuf, String>;

/// Checks inputs the way `check` does, for an editor: the modules they import are read from
/// `overlay` before the disk, and the result keeps what the compiler learned ([`Analysis`]).
pub fn analyze(inputs: Vec<Input>, options: &Options, overlay: &Overlay) -> Result<Analysis, InputError> {
    analyze_again(inputs, options, overlay, &mut Reuse::default())
}

/// [`analyze`], taking the results of functions that did not change from `reuse` (what the
/// previous analyses of these inputs left there) and leaving this one's for the next.
pub fn analyze_again(
    inputs: Vec<Input>,
    options: &Options,
    overlay: &Overlay,
    reuse: &mut Reuse,
) -> Result<Analysis, InputError> {
    let mut reuse = Some(reuse);
    on_compiler_stack(move || {
        let (c, known) = pipeline(&inputs, options, overlay, reuse.take())?;
        let analysis::Known { modules, functions, bindings, facts, registry } =
            known.unwrap_or_else(analysis::Known::empty);
        Ok(Analysis { sources: c.sources, diagnostics: c.diagnostics, modules, functions, bindings, facts, registry })
    })
}

/// The stack a thread needs to compile shallow sources itself (see [`on_stack_for`]): what a
/// process's main thread and Rust's spawned threads (2 MB) have. `tests/caller_stack.rs` compiles
/// the deepest shapes that stay on the caller, in an unoptimised build, on a thread with this
/// much.
pub const CALLER_STACK: usize = 1 << 20;

/// Sources nested at most this deep ([`syntax::depth::nesting`]) are compiled on the calling
/// thread. A nesting level costs the recursive phases at most about 16 KB of stack in an
/// unoptimised build (4 KB optimised; a nested call, `op.Neg(op.Neg(...))`, is the dearest),
/// and the 420 files of `tests/cases` nest 5 or 6 deep, 13 at most. Starting a thread with a
/// large stack costs about a third of a small `check`.
pub const CALLER_NESTING: usize = 32;

/// Files up to this many bytes are parsed on the calling thread. Parsing recurses only to drop
/// the syntax trees of code it rejects, under 100 bytes of stack a level in any build, and each
/// level takes at least a byte of source.
pub const CALLER_PARSE_BYTES: usize = 8 << 10;

/// Runs `work` here when sources `nesting` deep fit the caller's stack ([`CALLER_NESTING`]) or
/// this thread has the compiler's; otherwise on a thread with [`parallel::COMPILER_STACK`].
fn on_stack_for<T: Send>(nesting: usize, work: impl FnOnce() -> T + Send) -> T {
    if nesting <= CALLER_NESTING {
        return work();
    }
    on_compiler_stack(work)
}

/// Runs `work` on a thread with [`parallel::COMPILER_STACK`]: here when this thread is one
/// already, or when no thread can be had.
pub fn on_compiler_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    // Lent to the pool, so that it is still here should no thread start.
    let mut slot = Some(work);
    let lent = &mut slot;
    let outcome = parallel::on_pool(move || lent.take().map(|work| work()));
    match (outcome.flatten(), slot) {
        (Some(done), _) => done,
        // No thread to be had: work here, with the stack we have.
        (None, Some(work)) => work(),
        (None, None) => unreachable!("the compiler thread took the work and returned its result"),
    }
}

fn compile_on_this_thread(inputs: &[Input], options: &Options) -> Result<Compilation, InputError> {
    pipeline(inputs, options, &Overlay::new(), None).map(|(c, _)| c)
}

/// The compiler's phases over the inputs; for an editor (`reuse` given), lowering also records
/// facts, functions that did not change are not lowered again, no function is kept, and the
/// result includes an [`Analysis`].
fn pipeline(
    inputs: &[Input],
    options: &Options,
    overlay: &Overlay,
    mut reuse: Option<&mut Reuse>,
) -> Result<(Compilation, Option<analysis::Known>), InputError> {
    let mut sources = SourceMap::new();
    let mut diags = Diagnostics::new();
    let base = schemas::load(options, &mut sources, &mut diags)?;
    let registered = schemas::load_registered(options, &mut sources, &mut diags)?;

    // Parse every file first: custom operators declared in one module bind functions in all.
    // Then follow the imports of other `.onnxs` modules, compiling those in too.
    let previous = reuse.as_deref_mut().map(|r| std::mem::take(&mut r.parsed)).unwrap_or_default();
    let mut mods = modules::Modules { overlay: overlay.clone(), previous, ..Default::default() };
    for input in inputs {
        let key = identity(Path::new(&input.name));
        mods.add(input.name.clone(), key, &input.bytes, false, &mut sources, &mut diags);
    }
    mods.discover(&mut sources, &mut diags);

    // The later phases recurse over the syntax trees; drop the trees there too.
    let nesting = mods.units.iter().map(|u| u.nesting).max().unwrap_or(0);
    let parsed = Parsed { sources, diags, mods, base, registered };
    Ok(on_stack_for(nesting, move || compile_parsed(parsed, options, reuse)))
}

/// What the parse phase hands on to the rest.
struct Parsed {
    sources: SourceMap,
    diags: Diagnostics,
    mods: modules::Modules,
    base: std::borrow::Cow<'static, AtenRegistry>,
    registered: Option<AtenRegistry>,
}

/// The phases after parsing: names, calls, lowering, and what an editor keeps.
fn compile_parsed(
    parsed: Parsed,
    options: &Options,
    mut reuse: Option<&mut Reuse>,
) -> (Compilation, Option<analysis::Known>) {
    let Parsed { sources, mut diags, mut mods, base, registered } = parsed;
    let for_editor = reuse.is_some();

    // Environments, each after the modules it imports (their names must be known).
    let (mut interfaces, firsts) = mods.interfaces();
    let keys: Vec<ModuleKey> = mods.units.iter().map(|u| ModuleKey::Onnxs(u.name.clone())).collect();
    let linked = env::Linked::default();
    let mut built: Vec<Option<ModuleEnv>> = (0..mods.units.len()).map(|_| None).collect();
    let order = mods.build_order();
    for (k, &u) in order.iter().enumerate() {
        let unit = &mods.units[u];
        let Ok(module) = &unit.module else { continue };
        let resolve = |level: usize, dotted: &str| mods.lookup_loaded(u, level, dotted);
        let ctx = imports::ImportContext {
            first_function: firsts[u],
            resolve: &resolve,
            modules: &interfaces,
            keys: &keys,
            linked: &linked,
        };
        let e = env::build_in(unit.file, module, &ctx, &mut diags);
        // Only modules built later read a module's exports: the last one's would go unread
        // (a copy of its globals, sorted; for a 1,000-function library, half a millisecond).
        if k + 1 < order.len() {
            interfaces[u].exports = Some(imports::Exports::of(&e));
        }
        built[u] = Some(e);
    }
    let envs: Vec<ModuleEnv> = built.into_iter().flatten().collect();
    let (registry, invalid) = schemas::with_custom_ops(base, &envs, registered.as_ref(), &mut diags);
    let mut custom_ops: Vec<String> =
        envs.iter().flat_map(|e| e.custom_ops.iter().map(|d| d.qualname.clone())).collect();
    custom_ops.sort();
    custom_ops.dedup();

    // Decorators first: a call to another function needs the callee's domain and signature.
    let mut decorations: Vec<Vec<Option<Decoration>>> = Vec::with_capacity(envs.len());
    let mut signatures: Vec<Vec<Signature>> = Vec::with_capacity(envs.len());
    let mut callees: Vec<Callee> = Vec::with_capacity(envs.iter().map(|e| e.functions.len()).sum());
    let mut found = Vec::with_capacity(envs.len());
    for env in &envs {
        let heads = function_heads(env, &mut diags);
        decorations.push(heads.decorations);
        signatures.push(heads.signatures);
        callees.extend(heads.callees);
        found.push(heads.calls);
    }
    report_duplicate_functions(&envs, &decorations, &callees, &sources, &mut diags);
    report_too_many_functions(&envs, &decorations, &mut diags);
    let calls = calls::check_calls(&envs, callees, found, &mut diags);

    let mut lowered = Lowered::default();
    let mut facts = Vec::new();
    let compilation_context = reuse.is_some().then(|| reuse::compilation_fingerprint(&envs, &calls.callees, &invalid));
    for ((env, decos), sigs) in envs.iter().zip(&decorations).zip(&signatures) {
        let Some(lines) = sources.lines(env.file) else { continue };
        let (Some(reuse), Some(context)) = (reuse.as_deref_mut(), compilation_context) else {
            let inputs = LoweringInputs {
                decorations: decos,
                signatures: sigs,
                calls: &calls,
                lines,
                registry: &registry,
                invalid: &invalid,
                source_file: sources.name(env.file),
                keep: options.keep,
            };
            lowered.append(compile_module(env, inputs, &mut diags));
            continue;
        };
        let name = mods.units.iter().find(|u| u.file == env.file).map(|u| u.name.as_str()).unwrap_or_default();
        let mut check = |f: &syntax::ast::FunctionDef, deco: &Decoration, d: &mut Diagnostics, learned: &mut Vec<_>| {
            // An editor keeps no function: what checking it reported is all it needs.
            let sig = Signature::of(env, f);
            let _ = compile_function(env, &sig, deco, &calls, lines, &registry, &invalid, d, Some(learned));
        };
        let context = reuse::module_fingerprint(context, env);
        let text = sources.text(env.file);
        reuse::check_module(reuse, name, text, context, env, decos, &mut check, &mut diags, &mut facts);
    }
    // Only compiled functions (not the editor's re-checks) are known here.
    lower::exporter::check_translation_callees(&lowered.outlines, &mut diags);
    let Lowered { functions, outlines, encoded, dropped } = lowered;
    let collected =
        for_editor.then(|| analysis::collect(&mods, &envs, &decorations, &calls.callees, &registry, &sources));
    drop(envs);
    let files = mods
        .units
        .iter()
        .map(|u| PathBuf::from(&u.name))
        .chain(options.native_functions.iter().cloned())
        .chain(options.schema_files.iter().cloned())
        .collect();
    debug_assert!(dropped == 0 || diags.has_errors(), "{dropped} functions were dropped without an error");
    let mut compilation = Compilation {
        sources,
        diagnostics: diags.into_sorted(),
        functions,
        outlines,
        encoded,
        dropped,
        custom_ops,
        files,
        syntax: Vec::new(),
    };
    let Some(collected) = collected else {
        let shallow = mods.units.into_iter().filter(|u| u.nesting <= CALLER_NESTING);
        compilation.syntax = shallow.filter_map(|u| u.module.ok()).collect();
        return (compilation, None);
    };
    let analysis::Collected { globals, namespaces, functions: infos, bindings } = collected;
    // A module that does not parse now keeps its last syntax tree for the next edit.
    let mut parsed = std::mem::take(&mut mods.previous);
    let modules = mods
        .units
        .into_iter()
        .zip(mods.deps)
        .zip(globals.into_iter().zip(namespaces))
        .map(|((u, imports), (globals, namespaces))| {
            let ast = u.module.ok().map(std::sync::Arc::new);
            if let Some(module) = &ast {
                let text = compilation.sources.text(u.file).to_string();
                parsed.insert(u.name.clone(), reuse::Parsed { text, module: module.clone() });
            }
            analysis::ModuleInfo { name: u.name, key: u.key, file: u.file, ast, globals, namespaces, imports }
        })
        .collect();
    if let Some(r) = reuse {
        r.parsed = parsed;
    }
    let known = analysis::Known { modules, functions: infos, bindings, facts, registry };
    (compilation, Some(known))
}

/// Reads one file's text (E0009 if it is not UTF-8) and parses it; only the statements an
/// edit touched when the `previous` text and module of the file are known. Also how deeply the
/// module nests ([`modules::Unit::nesting`]).
fn parse_input(
    name: &str,
    bytes: &[u8],
    previous: Option<&reuse::Parsed>,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> (crate::source::FileId, Result<syntax::ast::Module, Reported>, usize) {
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            // Python accepts a UTF-8 byte-order mark at the start of a file.
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            let file = sources.add(name.to_string(), text.to_string());
            let text = sources.text(file);
            if let Some(p) = previous {
                let again = if p.text == text {
                    Some(p.module.as_ref().clone())
                } else {
                    syntax::incremental::reparse(file, &p.text, &p.module, text)
                };
                if let Some(module) = again {
                    // An editor's, compiled on the large stack: not measured.
                    return (file, Ok(module), usize::MAX);
                }
            }
            let result = if text.len() <= CALLER_PARSE_BYTES {
                syntax::parse(file, text)
            } else {
                on_compiler_stack(|| syntax::parse(file, text))
            };
            let reported = diags.extend(result.diagnostics);
            let (module, nesting) = match result.module {
                Some(m) => match result.nesting.too_deep {
                    None => (Ok(m), result.nesting.deepest),
                    Some(span) => {
                        syntax::depth::dismantle(m);
                        (Err(diags.push_error(too_deep(file, span))), 0)
                    }
                },
                // The parser reports why it has no module; should it not, this says it.
                None => {
                    let reported = reported.unwrap_or_else(|| {
                        let d = Diagnostic::error(codes::SYNTAX_ERROR, file, "this file does not parse")
                            .primary(Span::default(), "here");
                        diags.push_error(d)
                    });
                    (Err(reported), 0)
                }
            };
            (file, module, nesting)
        }
        Err(e) => {
            let file = sources.add(name.to_string(), String::from_utf8_lossy(bytes).into_owned());
            (file, Err(diags.push_error(invalid_utf8(file, bytes, e))), 0)
        }
    }
}

/// E0104 across files: two functions of the library with the same domain and name, which ONNX
/// cannot tell apart (onnx.checker rejects a model that holds both, and the library is one).
fn report_duplicate_functions(
    envs: &[ModuleEnv],
    decorations: &[Vec<Option<Decoration>>],
    callees: &[Callee],
    sources: &SourceMap,
    diags: &mut Diagnostics,
) {
    let mut seen: std::collections::HashMap<(&str, &str), usize> = std::collections::HashMap::new();
    for (env, decos) in envs.iter().zip(decorations) {
        for (k, deco) in decos.iter().enumerate() {
            if deco.is_none() {
                continue;
            }
            let Some(c) = callees.get(env.first_function + k) else { continue };
            match seen.get(&(c.domain.as_str(), c.name.as_str())) {
                Some(&first) if callees[first].file != c.file => {
                    let other = sources.name(callees[first].file);
                    diags.push(
                        Diagnostic::error(codes::DUPLICATE_FUNCTION, env.file, format!("function `{}` in domain `{}` is also defined in `{other}`", c.name, c.domain))
                            .primary(c.name_span, "defined again here")
                            .help("ONNX tells functions apart by domain and name, so a model cannot hold both (onnx.checker rejects it): rename one, or give one a domain of its own with `@script(Opset(\"my.domain\", 1))`"),
                    );
                }
                Some(_) => {}
                None => {
                    seen.insert((c.domain.as_str(), c.name.as_str()), env.first_function + k);
                }
            }
        }
    }
}

/// The most functions a model may carry: onnx.checker refuses more ("the model may be
/// malformed or malicious"), and so every tool that checks the library it loads.
pub const MAX_LIBRARY_FUNCTIONS: usize = 10_000;

/// E1003 at the first function past [`MAX_LIBRARY_FUNCTIONS`]: the library would be refused.
fn report_too_many_functions(envs: &[ModuleEnv], decorations: &[Vec<Option<Decoration>>], diags: &mut Diagnostics) {
    let compiled = envs.iter().zip(decorations).flat_map(|(env, decos)| {
        env.functions.iter().zip(decos).filter(|(_, d)| d.is_some()).map(move |(f, _)| (env.file, *f))
    });
    let count = compiled.clone().count();
    if let Some((file, f)) = compiled.clone().nth(MAX_LIBRARY_FUNCTIONS) {
        diags.push(
            Diagnostic::error(
                codes::TOO_MANY_FUNCTIONS,
                file,
                format!("the library would hold {count} functions, and ONNX tools refuse more than {MAX_LIBRARY_FUNCTIONS}"),
            )
            .primary(f.name.span, format!("function {} of the library", MAX_LIBRARY_FUNCTIONS + 1))
            .help("onnx.checker refuses a model with more than 10,000 local functions: compile the modules into several libraries, in separate runs"),
        );
    }
}

/// E1002: a module nested deeper than the compiler walks.
fn too_deep(file: usize, span: Span) -> Diagnostic {
    let max = syntax::depth::MAX_DEPTH;
    Diagnostic::error(codes::SYNTAX_TOO_DEEP, file, format!("this code is nested more than {max} levels deep"))
        .primary(span, format!("level {} starts here", max + 1))
        .help(
            "CPython itself refuses expressions nested about 3,000 deep: split the expression into \
             assignments, e.g. `s = a + b` then `s = s + c`",
        )
}

/// The first invalid byte of a file that is not UTF-8 (E0009).
fn invalid_utf8(file: usize, bytes: &[u8], e: std::str::Utf8Error) -> Diagnostic {
    let at = e.valid_up_to();
    // The lossy text replaces the bad bytes with U+FFFD (3 bytes) at the same offset.
    let bad = e.error_len().unwrap_or(bytes.len() - at);
    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    Diagnostic::error(codes::INVALID_UTF8, file, "this file is not valid UTF-8")
        .primary(Span::new(at, at + 3), format!("invalid byte{} here", if bad == 1 { "" } else { "s" }))
        .help(format!(
            "save the file as UTF-8 (Python source files are UTF-8); the first invalid byte is 0x{:02X} on line {line}",
            bytes[at]
        ))
}

/// Compiles the functions of one module and checks their PyTorch bindings. A function whose
/// decorators were read is compiled, or has errors: the proof of their report.
///
/// A large module is cut into pieces of consecutive functions ([`parallel::pieces`]), compiled
/// on the compiler's threads, each with its own copy of the environment. A function's
/// diagnostics depend only on the environment and the function, except for one thing compiling
/// in order shares: which uses of a deferred constant were already reported (only the first
/// is). So when any piece reported such a use, the module is compiled again in order, with the
/// environment no piece touched, and only that result counts; otherwise the pieces'
/// diagnostics, one after the other, are those of the walk in order.
fn compile_module(env: &ModuleEnv, inputs: LoweringInputs, diags: &mut Diagnostics) -> Lowered {
    let all = 0..env.functions.len();
    let ranges = parallel::piece_ranges(all.len(), MIN_FUNCTIONS_PER_PIECE);
    if ranges.len() < 2 {
        return compile_functions(env, all, inputs, diags);
    }
    let compiled = on_copies(env, ranges.len(), |i, copy| {
        let mut reports = Diagnostics::new();
        let compiled = compile_functions(copy, ranges[i].clone(), inputs, &mut reports);
        Some((compiled, reports))
    });
    match compiled {
        Some(pieces) => {
            let mut lowered = Lowered::default();
            for (compiled, reports) in pieces {
                diags.append(reports);
                lowered.append(compiled);
            }
            lowered
        }
        // A use of a deferred constant reported, or no thread to be had: in order.
        None => compile_functions(env, all, inputs, diags),
    }
}

/// `work(i, copy)` for each piece `i` of `count`, on the compiler's threads, each piece with a
/// copy of `env` of its own; the results in order. `None` when no thread can be had, when a
/// piece gives up, or when a piece reported a use of a deferred constant: the copies do not know
/// of each other's reports, so the caller runs the work in order instead, and what the pieces
/// reported is dropped with them (nothing a piece marks as reported silences the run in order).
fn on_copies<'m, R: Send>(
    env: &ModuleEnv<'m>,
    count: usize,
    work: impl Fn(usize, &ModuleEnv<'m>) -> Option<R> + Sync,
) -> Option<Vec<R>> {
    // An environment is for one thread at a time; each piece takes its copy out of its slot.
    let copies: Vec<std::sync::Mutex<Option<ModuleEnv>>> =
        (0..count).map(|_| std::sync::Mutex::new(Some(env.for_another_thread()))).collect();
    let results = parallel::each_piece(count, |i| {
        let copy = copies[i].lock().ok()?.take()?;
        let result = work(i, &copy)?;
        (!copy.reported_a_deferred_use()).then_some(result)
    })?;
    results.into_iter().collect()
}

/// What the phases after naming need of each function of a module, in order: its decoration
/// (`None`: reported), its signature (which lowering reads too), how its callers see it, and
/// the calls it makes to other functions.
struct FunctionHeads<'m> {
    decorations: Vec<Option<Decoration>>,
    signatures: Vec<Signature<'m>>,
    callees: Vec<Callee>,
    calls: Vec<calls::FunctionCalls<'m>>,
}

/// [`FunctionHeads`] of a module's functions, a large module's in pieces on the compiler's
/// threads: each function's are independent of the others', and at 1,000 functions they were
/// a tenth of a build's time, on one core.
fn function_heads<'m>(env: &ModuleEnv<'m>, diags: &mut Diagnostics) -> FunctionHeads<'m> {
    let all = 0..env.functions.len();
    let ranges = parallel::piece_ranges(all.len(), MIN_FUNCTIONS_PER_PIECE);
    if ranges.len() >= 2 {
        let pieces = on_copies(env, ranges.len(), |i, copy| {
            let mut reports = Diagnostics::new();
            let heads = heads_of(copy, ranges[i].clone(), &mut reports);
            Some((heads, reports))
        });
        if let Some(pieces) = pieces {
            let n = all.len();
            let mut heads = FunctionHeads {
                decorations: Vec::with_capacity(n),
                signatures: Vec::with_capacity(n),
                callees: Vec::with_capacity(n),
                calls: Vec::with_capacity(n),
            };
            for (piece, reports) in pieces {
                diags.append(reports);
                heads.decorations.extend(piece.decorations);
                heads.signatures.extend(piece.signatures);
                heads.callees.extend(piece.callees);
                heads.calls.extend(piece.calls);
            }
            return heads;
        }
    }
    heads_of(env, all, diags)
}

/// [`FunctionHeads`] of the functions `range` of a module, in order.
fn heads_of<'m>(env: &ModuleEnv<'m>, range: std::ops::Range<usize>, diags: &mut Diagnostics) -> FunctionHeads<'m> {
    let functions = &env.functions[range];
    let decorations: Vec<Option<Decoration>> =
        functions.iter().map(|f| decorators::decoration(env, f, diags).ok()).collect();
    let signatures: Vec<Signature<'m>> = functions.iter().map(|f| Signature::of(env, f)).collect();
    let callees = signatures
        .iter()
        .zip(&decorations)
        .map(|(sig, deco)| {
            let (domain, version) = match deco {
                Some(d) => (d.domain.clone(), d.domain_version),
                None => (decorators::DEFAULT_FUNCTION_DOMAIN.to_string(), 1),
            };
            Callee::new(env.file, sig, domain, version)
        })
        .collect();
    let calls = functions.iter().map(|f| calls::calls_in(env, f)).collect();
    FunctionHeads { decorations, signatures, callees, calls }
}

/// Below this many functions in a piece, a copy of the module's environment and the sharing
/// cost more than they save.
const MIN_FUNCTIONS_PER_PIECE: usize = 64;

/// What lowering a module's functions reads besides its environment, shared by the threads that
/// lower it.
#[derive(Clone, Copy)]
struct LoweringInputs<'a> {
    /// By function of the module.
    decorations: &'a [Option<Decoration>],
    /// By function of the module.
    signatures: &'a [Signature<'a>],
    calls: &'a Calls,
    lines: &'a LineIndex,
    registry: &'a AtenRegistry,
    invalid: &'a [String],
    /// The module's file, as named on the command line.
    source_file: &'a str,
    keep: Keep,
}

/// What lowering functions gave, as [`Options::keep`] says.
#[derive(Default)]
struct Lowered {
    functions: Vec<Function>,
    outlines: Vec<Outline>,
    encoded: Vec<Vec<u8>>,
    /// Functions not compiled because of their errors.
    dropped: usize,
}

impl Lowered {
    /// What lowering the functions after these gave.
    fn append(&mut self, next: Lowered) {
        let dropped = self.dropped + next.dropped;
        if self.outlines.is_empty() {
            // Nothing compiled before: take the vectors whole rather than copy them.
            *self = next;
        } else {
            self.functions.extend(next.functions);
            self.outlines.extend(next.outlines);
            self.encoded.extend(next.encoded);
        }
        self.dropped = dropped;
    }
}

/// [`compile_module`] for the functions `range` of the module, in order.
fn compile_functions(
    env: &ModuleEnv,
    range: std::ops::Range<usize>,
    inputs: LoweringInputs,
    diags: &mut Diagnostics,
) -> Lowered {
    let LoweringInputs { decorations, signatures, calls, lines, registry, invalid, source_file, keep } = inputs;
    let mut lowered = Lowered { outlines: Vec::with_capacity(range.len()), ..Lowered::default() };
    if keep == Keep::Functions {
        lowered.functions.reserve(range.len());
    }
    let mut fields = FunctionFields::for_count(range.len());
    for (sig, deco) in signatures[range.clone()].iter().zip(&decorations[range]) {
        let Some(deco) = deco else { continue };
        let Ok(f) = compile_function(env, sig, deco, calls, lines, registry, invalid, diags, None) else {
            lowered.dropped += 1;
            continue;
        };
        let f = Function { source_file: source_file.to_string(), ..f };
        lowered.outlines.push(Outline::of(&f));
        match keep {
            Keep::Functions => lowered.functions.push(f),
            Keep::Encoded => fields.push(&f),
            Keep::Outline => {}
        }
    }
    let bytes = fields.into_bytes();
    if !bytes.is_empty() {
        lowered.encoded.push(bytes);
    }
    lowered
}

/// Checks one function's PyTorch bindings and compiles it (recording facts into `facts`).
#[allow(clippy::too_many_arguments, reason = "what one function needs from each phase before lowering")]
fn compile_function(
    env: &ModuleEnv,
    sig: &Signature,
    deco: &Decoration,
    calls: &Calls,
    lines: &LineIndex,
    registry: &AtenRegistry,
    invalid: &[String],
    diags: &mut Diagnostics,
    facts: Option<&mut Vec<crate::sema::facts::Fact>>,
) -> Result<Function, Reported> {
    // Private helpers are compiled but not registered for export: no binding to check.
    if !deco.private {
        binding::check_function(env, sig, &deco.torch_ops, registry, invalid, diags);
    }
    // A decorated function is compiled with the globals of the moment its decorator runs.
    let previous = env.view_at(ModuleEnv::definition_view(sig.def));
    let lowered = lower::lower_function(env, sig, deco, calls, lines, diags, facts);
    env.view_at(previous);
    let mut function = lowered?;
    // The exporter needs each bound operator's output count, annotation or not.
    for op in &mut function.torch_ops {
        op.outputs = registry.lookup(&op.qualname).map(|s| s.returns.len());
    }
    Ok(function)
}
