//! Lowering a module's functions, after their heads: each function's PyTorch bindings checked,
//! then the function lowered (`lower::lower_function`) and kept as [`CompileOptions::keep`] says; a
//! large module in pieces on the compiler's threads.

use super::pieces::{each_range, function_ranges};
use super::Keep;
use crate::aten::AtenRegistry;
use crate::diagnostics::suppression::FileRules;
use crate::diagnostics::{Diagnostics, Reported};
use crate::emit::proto::FunctionFields;
use crate::ir::{Function, Outline};
use crate::lower::{self, FunctionContext};
use crate::sema::binding;
use crate::sema::calls::{CalleeKind, Calls};
use crate::sema::decorators::Decoration;
use crate::sema::env::{ConstReports, ModuleEnv};
use crate::sema::facts::Fact;
use crate::sema::signature::Signature;
use crate::sema::trace_check;
use crate::source::{FileId, LineIndex, Span};
use std::collections::HashSet;
use std::ops::Range;

#[cfg(doc)]
use super::CompileOptions;

/// What lowering a module's functions reads besides its environment, shared by the threads that
/// lower it.
#[derive(Clone, Copy)]
pub(super) struct LoweringInputs<'a> {
    /// By function of the module.
    pub decorations: &'a [Option<Decoration>],
    /// By function of the module.
    pub signatures: &'a [Signature<'a>],
    pub calls: &'a Calls,
    pub lines: &'a LineIndex,
    pub registry: &'a AtenRegistry,
    /// The custom operators whose declarations are invalid (reported): bindings to them are not
    /// checked again.
    pub invalid: &'a [String],
    /// The module's file, as named on the command line.
    pub source_file: &'a str,
    pub keep: Keep,
    /// Which warnings the module suppresses: a translation records those that hold for it as a
    /// whole, for the warnings the Python package raises.
    pub rules: Option<&'a FileRules>,
}

/// What lowering functions gave, as [`CompileOptions::keep`] says.
#[derive(Default)]
pub(super) struct Lowered {
    pub functions: Vec<Function>,
    /// The trace-only translations' signatures, as functions without bodies.
    pub traced: Vec<Function>,
    pub outlines: Vec<Outline>,
    pub encoded: Vec<Vec<u8>>,
    /// Functions not compiled because of their errors.
    pub dropped: usize,
}

impl Lowered {
    /// Drops the functions `left_out` names (by file and name span), then keeps the rest as
    /// `keep` says (they were lowered with [`Keep::Functions`], to be chosen from).
    pub fn leave_out(&mut self, left_out: &HashSet<(FileId, Span)>, keep: Keep) {
        let kept = |file: FileId, name: Span| !left_out.contains(&(file, name));
        self.functions.retain(|f| kept(f.file, f.name_span));
        self.outlines.retain(|o| kept(o.file, o.name_span));
        self.traced.retain(|f| kept(f.file, f.name_span));
        match keep {
            Keep::Functions => {}
            Keep::Encoded => {
                let mut fields = FunctionFields::for_count(self.functions.len());
                for f in std::mem::take(&mut self.functions) {
                    fields.push(&f);
                }
                self.encoded = vec![fields.into_bytes()];
            }
            Keep::Outline => self.functions.clear(),
        }
    }

    /// What lowering the functions after these gave.
    pub fn append(&mut self, mut next: Lowered) {
        let dropped = self.dropped + next.dropped;
        let mut traced = std::mem::take(&mut self.traced);
        traced.append(&mut next.traced);
        if self.outlines.is_empty() {
            // Nothing compiled before: take the vectors whole rather than copy them.
            *self = next;
        } else {
            self.functions.extend(next.functions);
            self.outlines.extend(next.outlines);
            self.encoded.extend(next.encoded);
        }
        self.traced = traced;
        self.dropped = dropped;
    }
}

/// Compiles the functions of one module and checks their PyTorch bindings. A function whose
/// decorators were read is compiled, or has errors: the proof of their report.
///
/// A large module is cut into pieces of consecutive functions, compiled on the compiler's
/// threads, all reading the module's environment. A function's diagnostics depend only on the
/// environment and the function, except for one thing compiling in order shares: which uses of
/// a deferred constant were already reported (only the first is; [`ConstReports`]). So each
/// piece starts with no reports, and when any piece reported a constant error, the module is
/// compiled again in order and only that result counts; otherwise the pieces' diagnostics, one
/// after the other, are those of the walk in order.
pub(super) fn compile_module(env: &ModuleEnv, inputs: LoweringInputs, diags: &mut Diagnostics) -> Lowered {
    let all = 0..env.functions.len();
    let ranges = function_ranges(env);
    if ranges.len() >= 2 {
        let compiled = each_range(&ranges, |range| {
            let mut found = Diagnostics::new();
            let mut reports = ConstReports::default();
            let compiled = compile_functions(env, range, inputs, &mut reports, &mut found);
            // The pieces do not know of each other's reports: then the walk in order decides.
            (!reports.any()).then_some((compiled, found))
        });
        if let Some(pieces) = compiled {
            let mut lowered = Lowered::default();
            for (compiled, found) in pieces {
                diags.append(found);
                lowered.append(compiled);
            }
            return lowered;
        }
    }
    // One piece, a constant error reported in a piece, or no thread to be had: in order.
    let mut reports = env.reported_while_built.clone();
    compile_functions(env, all, inputs, &mut reports, diags)
}

/// [`compile_module`] for the functions `range` of the module, in order.
fn compile_functions(
    env: &ModuleEnv,
    range: Range<usize>,
    inputs: LoweringInputs,
    reports: &mut ConstReports,
    diags: &mut Diagnostics,
) -> Lowered {
    let LoweringInputs { decorations, signatures, calls, lines, registry, invalid, source_file, keep, rules } = inputs;
    let cx = FunctionContext { env, calls, lines, source_file, registry };
    let mut lowered = Lowered { outlines: Vec::with_capacity(range.len()), ..Lowered::default() };
    if keep == Keep::Functions {
        lowered.functions.reserve(range.len());
    }
    let mut fields = FunctionFields::for_count(range.len());
    for (sig, deco) in signatures[range.clone()].iter().zip(&decorations[range]) {
        let Some(deco) = deco else { continue };
        let header = || rules.map(|r| r.translation_selectors(header_lines(sig.def, lines))).unwrap_or_default();
        let f = match compile_function(&cx, sig, deco, invalid, reports, diags, None) {
            Ok(Compiled::Function(mut f)) => {
                if !f.torch_ops.is_empty() {
                    f.noqa = header();
                }
                f
            }
            // A trace-only translation is run for each call of the exporter, not compiled: the
            // library records its signature.
            Ok(Compiled::TraceOnly(mut declaration)) => {
                declaration.noqa = header();
                lowered.traced.push(declaration);
                continue;
            }
            Ok(Compiled::Python) => continue,
            Err(_) => {
                lowered.dropped += 1;
                continue;
            }
        };
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

/// The lines (0-based) of a function's header: its decorators and its `def` line.
fn header_lines(f: &crate::syntax::ast::FunctionDef, lines: &LineIndex) -> std::ops::RangeInclusive<u32> {
    let start = f.decorators.iter().map(|d| d.span.start).chain([f.header_span.start]).min().unwrap_or(0);
    lines.line(start) as u32..=lines.line(f.name.span.end) as u32
}

/// What compiling one function gives.
pub(super) enum Compiled {
    Function(Function),
    /// A trace-only translation, run as Python for each call of the exporter: its signature.
    TraceOnly(Function),
    /// A helper only trace-time code calls: Python, with nothing to compile.
    Python,
}

/// Checks one function's PyTorch bindings and compiles it (recording facts into `facts`).
/// A function that runs only as Python (a trace-only translation, or a helper only trace-time
/// code calls) is checked, then run for each call of the exporter rather than compiled.
pub(super) fn compile_function(
    cx: &FunctionContext,
    sig: &Signature,
    deco: &Decoration,
    invalid: &[String],
    reports: &mut ConstReports,
    diags: &mut Diagnostics,
    facts: Option<&mut Vec<Fact>>,
) -> Result<Compiled, Reported> {
    // Private helpers are compiled but not registered for export: no binding to check.
    if !deco.private {
        binding::check_function(cx.env, sig, &deco.torch_ops, cx.registry, invalid, diags);
    }
    let id = cx.env.functions.iter().position(|f| std::ptr::eq(*f, sig.def)).map(|k| cx.env.first_function + k);
    match id.and_then(|id| cx.calls.callees.get(id)) {
        Some(c) if c.kind == CalleeKind::TraceOnly => {
            trace_check::check_function(cx.env, sig, true, diags);
            lower::function::lower_declaration(cx, sig, deco, reports, diags).map(Compiled::TraceOnly)
        }
        Some(c) if c.python => {
            // A helper nobody calls never runs: Python does not look into it either.
            if c.called {
                trace_check::check_function(cx.env, sig, false, diags);
            }
            Ok(Compiled::Python)
        }
        _ => lower::lower_function(cx, sig, deco, reports, diags, facts).map(Compiled::Function),
    }
}
