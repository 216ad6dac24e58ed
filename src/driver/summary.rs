//! The one-line summaries the commands end with on stderr, as ruff ends its own: what was
//! compiled and found, what `check --fix` fixed.

use super::fix::FixOutcome;
use super::Compilation;
use crate::diagnostics::Severity;

/// `onnxsc: 3 functions in 1 file compiled, no errors`, or the errors and warnings counted.
pub fn compilation(c: &Compilation) -> String {
    let errors = c.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = c.diagnostics.len() - errors;
    if c.partial {
        format!(
            "onnxsc: {}, {}; {} left out, {} compiled\n",
            plural(errors, "error"),
            plural(warnings, "warning"),
            plural(c.left_out.len(), "function"),
            plural(c.outlines.len() + c.traced.len(), "function"),
        )
    } else if errors > 0 {
        format!("onnxsc: {}, {}\n", plural(errors, "error"), plural(warnings, "warning"))
    } else {
        let traced = match c.traced.len() {
            0 => String::new(),
            n => format!(" and {}", plural(n, "trace-only translation")),
        };
        format!(
            "onnxsc: {}{traced} in {} compiled, {}\n",
            plural(c.outlines.len(), "function"),
            plural(c.sources.len(), "file"),
            if warnings == 0 { "no errors".to_string() } else { plural(warnings, "warning") }
        )
    }
}

/// `Found 2 errors (1 fixed, 1 remaining).`; with `--diff`, what would be.
pub fn fixes(outcome: &FixOutcome, diff_only: bool) -> String {
    let (errors, warnings) = outcome.found;
    let found = match warnings {
        0 => plural(errors, "error"),
        _ => format!("{} and {}", plural(errors, "error"), plural(warnings, "warning")),
    };
    let remaining = outcome.compilation.diagnostics.len();
    if diff_only {
        format!("Found {found} ({} would be fixed, {remaining} would remain).\n", outcome.fixed)
    } else {
        format!("Found {found} ({} fixed, {remaining} remaining).\n", outcome.fixed)
    }
}

/// `onnxsc: decompiled 2 functions (1 warning); wrote OUT`.
pub fn decompiled(functions: usize, warnings: usize, output: &std::path::Path) -> String {
    let differ = match warnings {
        0 => String::new(),
        n => format!(" ({})", plural(n, "warning")),
    };
    format!("onnxsc: decompiled {}{differ}; wrote {}\n", plural(functions, "function"), output.display())
}

/// `1 function`, `2 functions`.
pub fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
