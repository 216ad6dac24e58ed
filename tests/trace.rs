//! Golden tests of trace-only translations specialised per call.
//!
//! Each `.onnxs` file under `tests/cases/trace/` names the calls to make in `# call: JSON`
//! header lines (the JSON the Python package writes for an exporter call, docs/exporter.md).
//! The snapshot holds, for each call, the function it specialises to in ONNX's textual
//! syntax, or the rendered diagnostic that stopped it; a file that does not compile holds its
//! diagnostics instead.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking, in helpers too")]

use onnxsc::diagnostics::{render_plain, Severity};
use onnxsc::driver::trace::{TraceAnswerError, TraceProgram};
use onnxsc::driver::SourceInput;
use onnxsc::trace::CallFacts;
use std::path::Path;

fn traced(path: &Path) -> String {
    let name = format!("tests/cases/trace/{}", path.file_name().unwrap().to_string_lossy());
    let text = std::fs::read_to_string(path).expect("case file is readable");
    let calls: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("# call: ")).collect();
    assert!(!calls.is_empty(), "{} names no `# call:`", path.display());
    TraceProgram::scoped(&[SourceInput { name, bytes: text.clone().into_bytes() }], |program| {
        let mut out: String = program.diagnostics.iter().map(|d| render_plain(&program.sources, d)).collect();
        if program.diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return out;
        }
        for call in &calls {
            out.push_str(&format!("── call: {call}\n"));
            let facts = CallFacts::from_json(call).unwrap_or_else(|why| panic!("{}: bad call: {why}", path.display()));
            // As `onnxsc trace` answers it.
            match program.answer(&facts) {
                Ok(answer) => out.push_str(&answer.to_text()),
                Err(TraceAnswerError::Failed(d)) => out.push_str(&render_plain(&program.sources, &d)),
                Err(unknown) => out.push_str(&format!("{unknown}\n")),
            }
            out.push('\n');
        }
        out
    })
}

#[test]
fn specialised_calls() {
    insta::glob!("cases/trace/*.onnxs", |path| {
        insta::assert_snapshot!(traced(path));
    });
}
