//! The compiler's phases over a compilation's inputs, in order: schemas, every file parsed (and
//! the modules their imports bring in), environments (each after the modules it imports),
//! function heads and the calls between functions, then lowering (or, for an editor, checking
//! with the results of unchanged functions reused), and what the compilation keeps.

use super::analysis::{self, Known};
use super::heads::{
    function_heads, report_duplicate_functions, report_duplicate_translations, report_too_many_functions,
};
use super::inputs::{InputError, SourceInput};
use super::left_out;
use super::lowering::{compile_function, compile_module, Lowered, LoweringInputs};
use super::modules::{identity, Modules, Parsing};
use super::parse::PreviousParses;
use super::reuse::{self, Reuse};
use super::stack::{on_stack_for, CALLER_NESTING};
use super::suppress::Rules;
use super::{schemas, Compilation, CompileOptions, Keep, Overlay};
use crate::aten::AtenRegistry;
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Severity};
use crate::lower::{self, FunctionContext};
use crate::sema::calls::{self, Callee, Calls};
use crate::sema::decorators::Decoration;
use crate::sema::env::{ModuleEnv, ModuleKey, SharedNamespaces};
use crate::sema::env_builder;
use crate::sema::eval::torchlib_common;
use crate::sema::facts::Fact;
use crate::sema::imports;
use crate::sema::signature::Signature;
use crate::source::{FileId, SourceMap, Span};
use crate::syntax;
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Compiles the inputs on this thread (the phases that recurse move to the compiler's stack
/// when the sources need it).
pub(super) fn compile_on_this_thread(
    inputs: &[SourceInput],
    options: &CompileOptions,
) -> Result<Compilation, InputError> {
    pipeline(inputs, options, &Overlay::new(), None).map(|(c, _)| c)
}

/// The compiler's phases over the inputs; for an editor (`reuse` given), lowering also records
/// facts, functions that did not change are not lowered again, no function is kept, and the
/// result includes what the editor keeps ([`Known`]).
pub(super) fn pipeline(
    inputs: &[SourceInput],
    options: &CompileOptions,
    overlay: &Overlay,
    mut reuse: Option<&mut Reuse>,
) -> Result<(Compilation, Option<Known>), InputError> {
    let mut sources = SourceMap::new();
    let mut diags = Diagnostics::new();
    let base = schemas::load(options, &mut sources, &mut diags)?;
    let registered = schemas::load_registered(options, &mut sources, &mut diags)?;

    // Parse every file first: custom operators declared in one module bind functions in all.
    // Then follow the imports of other `.onnxs` modules, compiling those in too.
    let previous = reuse.as_deref_mut().map(Reuse::take_parses).unwrap_or_default();
    let mut mods = Modules { overlay: overlay.clone(), ..Default::default() };
    let mut parsing = Parsing { previous: &previous, sources: &mut sources, diags: &mut diags };
    for input in inputs {
        let key = identity(Path::new(&input.name));
        mods.add(input.name.clone(), key, &input.bytes, false, &mut parsing);
    }
    mods.discover(&mut parsing);
    let rules = Rules::read(&mods, &sources, options.isolated)?;

    // The later phases recurse over the syntax trees; drop the trees there too.
    let nesting = mods.units.iter().map(|u| u.nesting).max().unwrap_or(0);
    let parsed = ParsedInputs { sources, diags, mods, previous, base, registered, rules };
    Ok(on_stack_for(nesting, move || compile_parsed(parsed, options, reuse)))
}

/// What the parse phase hands on to the rest.
struct ParsedInputs {
    sources: SourceMap,
    diags: Diagnostics,
    mods: Modules,
    /// An editor's parses of the modules before this analysis.
    previous: PreviousParses,
    base: Cow<'static, AtenRegistry>,
    registered: Option<AtenRegistry>,
    /// Which warnings each module suppresses.
    rules: Rules,
}

/// The phases after parsing: names, calls, lowering, and what an editor keeps.
fn compile_parsed(
    parsed: ParsedInputs,
    options: &CompileOptions,
    mut reuse: Option<&mut Reuse>,
) -> (Compilation, Option<Known>) {
    let ParsedInputs { sources, mut diags, mods, previous, base, registered, rules } = parsed;
    let envs = build_environments(&mods, &mut diags);
    let (registry, invalid) = schemas::with_custom_ops(base, &envs, registered.as_ref(), &mut diags);
    let custom_ops = declared_custom_ops(&envs);
    let heads = read_heads(&envs, &sources, &mut diags);
    let copies = torchlib_common_copies(&envs, &mut diags);

    let mut lowered = Lowered::default();
    let mut facts = Vec::new();
    match reuse.as_deref_mut() {
        None => {
            for ((env, decorations), signatures) in envs.iter().zip(&heads.decorations).zip(&heads.signatures) {
                let Some(lines) = sources.lines(env.file).filter(|_| !copies.contains(&env.file)) else { continue };
                let inputs = LoweringInputs {
                    decorations,
                    signatures,
                    calls: &heads.calls,
                    lines,
                    registry: &registry,
                    invalid: &invalid,
                    source_file: sources.name(env.file),
                    // What to leave out is known only at the end: keep the functions till then.
                    keep: if options.skip_invalid { Keep::Functions } else { options.keep },
                    rules: rules.of(env.file),
                };
                lowered.append(compile_module(env, inputs, &mut diags));
            }
        }
        Some(reuse) => {
            let editor =
                EditorCheck { envs: &envs, heads: &heads, registry: &registry, invalid: &invalid, copies: &copies };
            editor.check_modules(reuse, &mods, &sources, &mut diags, &mut facts);
        }
    }
    // Only compiled functions (not the editor's re-checks) are known here.
    lower::exporter::check_translation_callees(&lowered.outlines, &mut diags);
    let collected = reuse
        .is_some()
        .then(|| analysis::collect(&mods, &envs, &heads.decorations, &heads.calls.callees, &registry, &sources));
    debug_assert!(
        lowered.dropped == 0 || diags.has_errors(),
        "{} functions were dropped without an error",
        lowered.dropped
    );
    rules.report_misused_comments(&mut diags);
    let mut diagnostics = diags.into_sorted();
    rules.apply(&mut diagnostics, &sources);
    // A copy of torchlib's `common` module is not compiled: its one diagnostic says so.
    diagnostics.retain(|d| !copies.contains(&d.file) || d.code == codes::TORCHLIB_COMMON_COPY);
    if options.deny_warnings {
        deny_warnings(&mut diagnostics);
    }
    let left_out = (options.skip_invalid && diagnostics.iter().any(|d| d.severity == Severity::Error)).then(|| {
        let modules = mods.units.iter().map(|u| u.file).collect();
        left_out::find(&modules, &envs, &heads.decorations, &heads.calls, &diagnostics, &sources)
    });
    drop(envs);
    let files = mods
        .units
        .iter()
        .map(|u| PathBuf::from(&u.name))
        .chain(options.native_functions.iter().cloned())
        .chain(options.schema_files.iter().cloned())
        .collect();
    let partial = matches!(left_out, Some(Some(_)));
    let mut left_out_records = Vec::new();
    if options.skip_invalid {
        let found = left_out.flatten().unwrap_or_default();
        lowered.leave_out(&found.functions, options.keep);
        left_out_records = found.records;
    }
    let Lowered { functions, traced, outlines, encoded, dropped } = lowered;
    let trace_sources = if traced.is_empty() {
        Vec::new()
    } else {
        mods.units.iter().map(|u| (u.name.clone(), sources.text(u.file).to_string())).collect()
    };
    let mut compilation = Compilation {
        sources,
        diagnostics,
        functions,
        outlines,
        encoded,
        dropped,
        traced,
        trace_sources,
        custom_ops,
        left_out: left_out_records,
        partial,
        files,
        syntax: Vec::new(),
    };
    let (Some(collected), Some(reuse)) = (collected, reuse) else {
        let shallow = mods.units.into_iter().filter(|u| u.nesting <= CALLER_NESTING);
        compilation.syntax = shallow.filter_map(|u| u.module.ok()).collect();
        return (compilation, None);
    };
    let (modules, parses) = analysis::modules_with_trees(mods, &compilation.sources, previous, collected.modules);
    reuse.keep_parses(parses);
    let known = Known { modules, functions: collected.functions, bindings: collected.bindings, facts, registry };
    (compilation, Some(known))
}

/// The modules that are copies of torchlib's `common` module (`common.py` copied beside the
/// translations), each reported once (W0101): onnxsc provides that module itself, and does not
/// compile them.
fn torchlib_common_copies(envs: &[ModuleEnv], diags: &mut Diagnostics) -> HashSet<FileId> {
    let mut copies = HashSet::new();
    for env in envs {
        if !torchlib_common::is_copy(env.functions.iter().map(|f| f.name.name.as_str())) {
            continue;
        }
        let first = env.module.body.first().map_or(Span::new(0, 0), |s| s.span);
        diags.push(
            Diagnostic::warning(codes::TORCHLIB_COMMON_COPY, env.file, "this is a copy of torchlib's `common` module, which onnxsc provides itself: it is not compiled")
                .primary(first, "torchlib's `common.py`")
                .help("delete this file: `from onnxscript.function_libs.torch_lib.ops import common` gives onnxsc's own, with the meaning onnxscript gives it"),
        );
        copies.insert(env.file);
    }
    copies
}

/// `--deny-warnings`: every warning becomes an error, saying why.
pub fn deny_warnings(diagnostics: &mut [Diagnostic]) {
    for d in diagnostics {
        if d.severity == Severity::Warning {
            d.severity = Severity::Error;
            d.notes.push("`--deny-warnings` makes this warning an error".into());
        }
    }
}

/// Every module's environment, each built after the modules it imports (their names must be
/// known); a module that did not parse has none.
pub(super) fn build_environments<'m>(mods: &'m Modules, diags: &mut Diagnostics) -> Vec<ModuleEnv<'m>> {
    let (mut interfaces, firsts) = mods.interfaces();
    let keys: Vec<ModuleKey> = mods.units.iter().map(|u| ModuleKey::Onnxs(u.name.clone())).collect();
    let linked = SharedNamespaces::default();
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
        let env = env_builder::build_in(unit.file, module, &ctx, diags);
        // Only modules built later read a module's exports: the last one's would go unread
        // (a copy of its globals, sorted; for a 1,000-function library, half a millisecond).
        if k + 1 < order.len() {
            interfaces[u].exports = Some(imports::Exports::of(&env));
        }
        built[u] = Some(env);
    }
    built.into_iter().flatten().collect()
}

/// The custom operators the modules declare with `torch.library.define`, sorted, each once.
fn declared_custom_ops(envs: &[ModuleEnv]) -> Vec<String> {
    let mut custom_ops: Vec<String> =
        envs.iter().flat_map(|e| e.custom_ops.iter().map(|d| d.qualname.clone())).collect();
    custom_ops.sort();
    custom_ops.dedup();
    custom_ops
}

/// Every module's function heads, by module, and the calls between functions checked.
pub(super) struct Heads<'m> {
    pub decorations: Vec<Vec<Option<Decoration>>>,
    pub signatures: Vec<Vec<Signature<'m>>>,
    pub calls: Calls,
}

/// Reads every function's head (decorators first: a call to another function needs the
/// callee's domain and signature), then checks what needs all of them: functions defined twice
/// across files, the library's size, and the calls between functions.
pub(super) fn read_heads<'m>(envs: &[ModuleEnv<'m>], sources: &SourceMap, diags: &mut Diagnostics) -> Heads<'m> {
    let mut decorations: Vec<Vec<Option<Decoration>>> = Vec::with_capacity(envs.len());
    let mut signatures: Vec<Vec<Signature>> = Vec::with_capacity(envs.len());
    let mut callees: Vec<Callee> = Vec::with_capacity(envs.iter().map(|e| e.functions.len()).sum());
    let mut found = Vec::with_capacity(envs.len());
    for env in envs {
        let heads = function_heads(env, diags);
        decorations.push(heads.decorations);
        signatures.push(heads.signatures);
        callees.extend(heads.callees);
        found.push(heads.calls);
    }
    report_duplicate_functions(envs, &decorations, &callees, sources, diags);
    report_duplicate_translations(envs, &decorations, sources, diags);
    report_too_many_functions(envs, &decorations, diags);
    let calls = calls::check_calls(envs, callees, found, diags);
    Heads { decorations, signatures, calls }
}

/// What checking the modules for an editor reads: everything lowering reads.
struct EditorCheck<'a, 'm> {
    envs: &'a [ModuleEnv<'m>],
    heads: &'a Heads<'m>,
    registry: &'a AtenRegistry,
    invalid: &'a [String],
    /// Copies of torchlib's `common` module, not checked.
    copies: &'a HashSet<FileId>,
}

impl EditorCheck<'_, '_> {
    /// Checks every module's functions, taking from `reuse` the results of those whose text and
    /// context did not change; diagnostics to `diags`, facts to `facts`. No function is kept.
    fn check_modules(
        &self,
        reuse: &mut Reuse,
        mods: &Modules,
        sources: &SourceMap,
        diags: &mut Diagnostics,
        facts: &mut Vec<Fact>,
    ) {
        let context = reuse::compilation_fingerprint(self.envs, &self.heads.calls.callees, self.invalid);
        for (env, decorations) in self.envs.iter().zip(&self.heads.decorations) {
            let Some(lines) = sources.lines(env.file).filter(|_| !self.copies.contains(&env.file)) else { continue };
            let name = mods.units.iter().find(|u| u.file == env.file).map(|u| u.name.as_str()).unwrap_or_default();
            let cx = FunctionContext {
                env,
                calls: &self.heads.calls,
                lines,
                source_file: sources.name(env.file),
                registry: self.registry,
            };
            let mut reports = env.reported_while_built.clone();
            let mut check =
                |f: &syntax::ast::FunctionDef, deco: &Decoration, d: &mut Diagnostics, learned: &mut Vec<Fact>| {
                    // An editor keeps no function: what checking it reported is all it needs.
                    let sig = Signature::of(env, f);
                    let _ = compile_function(&cx, &sig, deco, self.invalid, &mut reports, d, Some(learned));
                };
            let context = reuse::module_fingerprint(context, env);
            let text = sources.text(env.file);
            reuse::check_module(reuse, name, text, context, env, decorations, &mut check, diags, facts);
        }
    }
}
