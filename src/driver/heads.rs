//! Function heads: what the phases after naming need of each function of a module, read before
//! any function is lowered: its decoration, its signature (which lowering reads too), how its
//! callers see it and the calls it makes; and the checks across all functions of the
//! compilation that need only heads (E0104 across files, E1003).

use super::pieces::{each_range, function_ranges};
use crate::diagnostics::{codes, Diagnostic, Diagnostics};
use crate::sema::calls::{self, Callee, CalleeKind};
use crate::sema::decorators::{self, Decoration};
use crate::sema::env::ModuleEnv;
use crate::sema::signature::Signature;
use crate::source::{FileId, SourceMap, Span};
use std::collections::HashMap;
use std::ops::Range;

/// What the phases after naming need of each function of a module, in order: its decoration
/// (`None`: reported), its signature (which lowering reads too), how its callers see it, and
/// the calls it makes to other functions.
pub(super) struct FunctionHeads<'m> {
    pub decorations: Vec<Option<Decoration>>,
    pub signatures: Vec<Signature<'m>>,
    pub callees: Vec<Callee>,
    pub calls: Vec<calls::FunctionCalls<'m>>,
}

/// [`FunctionHeads`] of a module's functions, a large module's in pieces on the compiler's
/// threads: each function's are independent of the others', and at 1,000 functions they were
/// a tenth of a build's time, on one core.
pub(super) fn function_heads<'m>(env: &ModuleEnv<'m>, diags: &mut Diagnostics) -> FunctionHeads<'m> {
    let ranges = function_ranges(env);
    if ranges.len() >= 2 {
        let pieces = each_range(&ranges, |range| {
            let mut reports = Diagnostics::new();
            let heads = heads_of(env, range, &mut reports);
            Some((heads, reports))
        });
        if let Some(pieces) = pieces {
            let n = env.functions.len();
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
    heads_of(env, 0..env.functions.len(), diags)
}

/// [`FunctionHeads`] of the functions `range` of a module, in order.
fn heads_of<'m>(env: &ModuleEnv<'m>, range: Range<usize>, diags: &mut Diagnostics) -> FunctionHeads<'m> {
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
            let kind = match deco {
                Some(d) if d.trace_only => CalleeKind::TraceOnly,
                Some(d) if d.traceable => CalleeKind::TraceableScript,
                Some(d) if !d.decorated => CalleeKind::Undecorated,
                _ => CalleeKind::Script,
            };
            Callee::new(env.file, sig, domain, version, kind)
        })
        .collect();
    let calls = functions.iter().map(|f| calls::calls_in(env, f)).collect();
    FunctionHeads { decorations, signatures, callees, calls }
}

/// E0104 across files: two functions of the library with the same domain and name, which ONNX
/// cannot tell apart (onnx.checker rejects a model that holds both, and the library is one).
pub(super) fn report_duplicate_functions(
    envs: &[ModuleEnv],
    decorations: &[Vec<Option<Decoration>>],
    callees: &[Callee],
    sources: &SourceMap,
    diags: &mut Diagnostics,
) {
    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
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

/// E0516: two translations of one PyTorch operator overload, in one file or across files. The
/// exporter's table holds one translation per overload (`@torch_op` never names the default one
/// with `.default`: E0510), so one of them would never be called.
/// Private helpers and complex-valued translations are not registered, so they never collide.
pub(super) fn report_duplicate_translations(
    envs: &[ModuleEnv],
    decorations: &[Vec<Option<Decoration>>],
    sources: &SourceMap,
    diags: &mut Diagnostics,
) {
    // The first binding of each overload: its file, span and function.
    let mut first: HashMap<String, (FileId, Span, &str)> = HashMap::new();
    for (env, decos) in envs.iter().zip(decorations) {
        for (f, deco) in env.functions.iter().zip(decos) {
            let Some(deco) = deco.as_ref().filter(|d| !d.private && !d.complex) else { continue };
            for binding in &deco.torch_ops {
                let overload = binding.qualname.clone();
                let Some(&(file, span, by)) = first.get(&overload) else {
                    first.insert(overload, (env.file, binding.span, f.name.name.as_str()));
                    continue;
                };
                let message = format!("`{overload}` is already translated by `{by}`");
                let mut d = Diagnostic::error(codes::DUPLICATE_TRANSLATION, env.file, message)
                    .primary(binding.span, "translated again here");
                if file == env.file {
                    d = d.secondary(span, format!("first translated by `{by}` here"));
                } else {
                    let (line, column) = sources.line_col(file, span.start);
                    d = d.note(format!("first translated by `{by}` at {}:{line}:{column}", sources.name(file)));
                }
                let help = "the exporter's table holds one translation per operator overload: remove one binding, \
                            or mark a helper `@torch_op(..., private=True)`";
                diags.push(d.help(help));
            }
        }
    }
}

/// The most functions a model may carry: onnx.checker refuses more ("the model may be
/// malformed or malicious"), and so every tool that checks the library it loads.
pub const MAX_LIBRARY_FUNCTIONS: usize = 10_000;

/// E1003 at the first function past [`MAX_LIBRARY_FUNCTIONS`]: the library would be refused.
pub(super) fn report_too_many_functions(
    envs: &[ModuleEnv],
    decorations: &[Vec<Option<Decoration>>],
    diags: &mut Diagnostics,
) {
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
