//! Re-checking for editors without lowering again what did not change.
//!
//! After a keystroke, most functions of a module have the same text, and everything they are
//! checked against (the module's global names, every function's signature, the PyTorch schemas)
//! is the same. [`Reuse`] keeps, per module, the diagnostics and facts that checking each
//! function produced, keyed by the function's text, with a fingerprint of that context. The next
//! analysis takes a function's results from it, moved to where the function now is, when both
//! its text and the fingerprint match; it checks the others. A result that points outside its
//! function is never kept, so moving it is exact.

use super::parse::PreviousParses;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::sema::calls::Callee;
use crate::sema::decorators::Decoration;
use crate::sema::env::ModuleEnv;
use crate::sema::facts::Fact;
use crate::source::Span;
use crate::syntax::ast::FunctionDef;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// What earlier analyses of a set of documents learned, per module.
#[derive(Default)]
pub struct Reuse {
    modules: HashMap<String, ModuleResults>,
    /// Each module's text and syntax tree, by name.
    parsed: PreviousParses,
}

impl Reuse {
    /// The modules' parses of the last analysis, for this one to start from.
    pub(super) fn take_parses(&mut self) -> PreviousParses {
        std::mem::take(&mut self.parsed)
    }

    /// The modules' parses of this analysis, for the next one.
    pub(super) fn keep_parses(&mut self, parses: PreviousParses) {
        self.parsed = parses;
    }
}

struct ModuleResults {
    context: u64,
    /// By the function's text, decorators to last statement.
    functions: HashMap<String, FunctionResults>,
}

struct FunctionResults {
    extent: Span,
    diagnostics: Vec<Diagnostic>,
    facts: Vec<Fact>,
}

fn hash_debug(h: &mut DefaultHasher, value: &impl std::fmt::Debug) {
    format!("{value:?}").hash(h);
}

/// What checking any function of the compilation depends on besides its module: every
/// function's signature as callers see it, and the custom operators the modules declare.
pub(super) fn compilation_fingerprint(envs: &[ModuleEnv], callees: &[Callee], invalid: &[String]) -> u64 {
    let mut h = DefaultHasher::new();
    for c in callees {
        (&c.name, &c.domain, c.version, c.outputs).hash(&mut h);
        for p in &c.params {
            (&p.name, p.has_default, &p.type_var).hash(&mut h);
            hash_debug(&mut h, &p.attr);
        }
    }
    for env in envs {
        for op in &env.custom_ops {
            (&op.qualname, &op.schema).hash(&mut h);
        }
    }
    invalid.hash(&mut h);
    h.finish()
}

/// The fingerprint of one module's context: the compilation's, and what its global names mean.
pub(super) fn module_fingerprint(compilation: u64, env: &ModuleEnv) -> u64 {
    let mut h = DefaultHasher::new();
    compilation.hash(&mut h);
    let mut globals: Vec<_> = env.globals.iter().collect();
    globals.sort_by(|a, b| a.0.cmp(b.0));
    for (name, g) in globals {
        name.hash(&mut h);
        hash_debug(&mut h, &g.value);
    }
    let mut namespaces: Vec<_> = env.namespaces.iter().collect();
    namespaces.sort_by(|a, b| a.0.cmp(b.0));
    hash_debug(&mut h, &namespaces);
    h.finish()
}

fn spans_of_diagnostic(d: &mut Diagnostic) -> impl Iterator<Item = &mut Span> {
    let fix = d.fix.iter_mut().flat_map(|f| f.edits.iter_mut().map(|e| &mut e.span));
    d.labels.iter_mut().map(|l| &mut l.span).chain(fix)
}

fn spans_of_fact(f: &mut Fact) -> impl Iterator<Item = &mut Span> {
    std::iter::once(&mut f.span).chain(f.definition.as_mut())
}

fn within(s: Span, extent: Span) -> bool {
    extent.start <= s.start && s.end <= extent.end
}

fn moved(s: &mut Span, from: Span, to: Span) {
    s.start = s.start - from.start + to.start;
    s.end = s.end - from.start + to.start;
}

/// Checks one function: its diagnostics into the sink, its facts into the list.
pub(super) type CheckFunction<'c> = dyn FnMut(&FunctionDef, &Decoration, &mut Diagnostics, &mut Vec<Fact>) + 'c;

/// Checks the functions of one module with `check`, or takes their results from `reuse`;
/// either way their diagnostics go to `diags` and their facts to `facts`.
#[allow(clippy::too_many_arguments, reason = "what the reuse decision reads, and where the results go")]
pub(super) fn check_module(
    reuse: &mut Reuse,
    name: &str,
    text: &str,
    context: u64,
    env: &ModuleEnv,
    decorations: &[Option<Decoration>],
    check: &mut CheckFunction,
    diags: &mut Diagnostics,
    facts: &mut Vec<Fact>,
) {
    let mut before =
        reuse.modules.remove(name).filter(|m| m.context == context).map(|m| m.functions).unwrap_or_default();
    let extents = super::analysis::function_extents(env);
    let mut now = HashMap::new();
    for ((f, deco), &extent) in env.functions.iter().zip(decorations).zip(&extents) {
        let Some(deco) = deco else { continue };
        let Some(source) = text.get(extent.range()) else { continue };
        let results = match before.remove(source) {
            Some(mut r) => {
                for d in &mut r.diagnostics {
                    d.file = env.file;
                    spans_of_diagnostic(d).for_each(|s| moved(s, r.extent, extent));
                }
                for fact in &mut r.facts {
                    fact.file = env.file;
                    spans_of_fact(fact).for_each(|s| moved(s, r.extent, extent));
                }
                r.extent = extent;
                r
            }
            None => {
                let mut found = Diagnostics::new();
                let mut learned = Vec::new();
                check(f, deco, &mut found, &mut learned);
                let mut r = FunctionResults { extent, diagnostics: found.into_sorted(), facts: learned };
                let inside = r
                    .diagnostics
                    .iter_mut()
                    .all(|d| d.file == env.file && spans_of_diagnostic(d).all(|s| within(*s, extent)))
                    && r.facts.iter_mut().all(|f| spans_of_fact(f).all(|s| within(*s, extent)));
                if !inside {
                    diags.extend(r.diagnostics);
                    facts.extend(r.facts);
                    continue;
                }
                r
            }
        };
        diags.extend(results.diagnostics.iter().cloned());
        facts.extend(results.facts.iter().cloned());
        now.insert(source.to_string(), results);
    }
    reuse.modules.insert(name.to_string(), ModuleResults { context, functions: now });
}
