//! The exporter's opset (E0513): `torch.onnx.export` builds translations into an ONNX graph at
//! one opset ([`EXPORTER_OPSET`]) and inlines them there, with every function they call, so a
//! translation, and each function it reaches, must import that opset.

use crate::aten::EXPORTER_OPSET;
use crate::diagnostics::{codes, Diagnostic, Diagnostics};
use crate::ir::Outline;
use crate::sema::decorators::TorchBinding;
use crate::source::{FileId, Span};
use foldhash::HashMap;

/// E0513: a translation that imports another ONNX opset than the one the exporter builds at.
pub fn opset_mismatch(file: FileId, version: i64, span: Span, ops: &[TorchBinding]) -> Diagnostic {
    let mut d = Diagnostic::error(
        codes::EXPORTER_OPSET,
        file,
        format!("this translation uses opset {version}, but torch.onnx.export builds translations at opset {EXPORTER_OPSET}"),
    )
    .primary(span, format!("opset {version} here"));
    if let Some(b) = ops.first() {
        d = d.secondary(b.span, "translated for the exporter");
    }
    d.help(format!(
        "the exporter inlines translations into an opset-{EXPORTER_OPSET} graph and refuses other versions: import `opset{EXPORTER_OPSET}` (`from onnxscript import opset{EXPORTER_OPSET} as op`) and write newer operators with opset-{EXPORTER_OPSET} ones"
    ))
}

/// E0513 for a translation that calls (directly or not) a function of another ONNX opset than
/// the exporter's: the exporter inlines the callee into its opset-18 graph too.
pub fn check_translation_callees(functions: &[Outline], diags: &mut Diagnostics) {
    let by_name: HashMap<(&str, &str), &Outline> =
        functions.iter().map(|f| ((f.domain.as_str(), f.name.as_str()), f)).collect();
    for f in functions.iter().filter(|f| f.translates) {
        if f.opset_imports.get("").is_some_and(|v| *v != EXPORTER_OPSET) {
            continue; // reported at the translation itself
        }
        let mut seen = vec![(f.domain.as_str(), f.name.as_str())];
        let mut queue = vec![f];
        while let Some(g) = queue.pop() {
            for (domain, op_type) in &g.ops {
                let Some(callee) = by_name.get(&(domain.as_str(), op_type.as_str())) else { continue };
                if seen.contains(&(callee.domain.as_str(), callee.name.as_str())) {
                    continue;
                }
                seen.push((callee.domain.as_str(), callee.name.as_str()));
                if let Some(v) = callee.opset_imports.get("").filter(|v| **v != EXPORTER_OPSET) {
                    diags.push(
                        Diagnostic::error(
                            codes::EXPORTER_OPSET,
                            f.file,
                            format!(
                                "this translation calls `{}`, which uses opset {v}, but torch.onnx.export builds translations at opset {}",
                                callee.name,
                                EXPORTER_OPSET
                            ),
                        )
                        .primary(f.name_span, format!("calls `{}`", callee.name))
                        .help(format!(
                            "the exporter inlines `{name}` into an opset-{opset} graph too: make it import `opset{opset}`",
                            name = callee.name,
                            opset = EXPORTER_OPSET
                        )),
                    );
                    queue.clear();
                    break;
                }
                queue.push(callee);
            }
        }
    }
}
