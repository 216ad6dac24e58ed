//! Diagnostics as JSON objects, one per line (`onnxsc check --format json`, `onnxsc build
//! --format json`), for editors, CI and the Python package.
//!
//! `rendered` is the diagnostic exactly as `--color never` prints it on stderr (as rustc's JSON
//! diagnostics carry theirs), so a tool can show it without rendering it again.
//!
//! Lines and columns are 1-based; columns count characters (Unicode scalar values). The end
//! position is exclusive, as in LSP ranges.
//!
//! A diagnostic with a machine-applicable fix carries it as ruff's JSON output does:
//! `"fix": {"applicability": "safe", "message": ..., "edits": [{"content": ..., "location":
//! {"row": ..., "column": ...}, "end_location": {...}}]}` (the same 1-based rows and columns);
//! `"fix": null` otherwise. Apply the edits from last to first so earlier positions stay valid.

use super::{render_plain, Diagnostic, Fix, Severity};
use crate::source::{SourceMap, Span};
use serde_json::{json, Value};

fn position(sources: &SourceMap, file: usize, span: Span) -> (usize, usize, usize, usize) {
    let (line, column) = sources.line_col(file, span.start);
    let (end_line, end_column) = sources.line_col(file, span.end);
    (line, column, end_line, end_column)
}

fn fix_to_json(sources: &SourceMap, file: usize, fix: &Fix) -> Value {
    let edits: Vec<Value> = fix
        .edits
        .iter()
        .map(|e| {
            let (row, column, end_row, end_column) = position(sources, file, e.span);
            json!({
                "content": e.replacement,
                "location": {"row": row, "column": column},
                "end_location": {"row": end_row, "column": end_column},
            })
        })
        .collect();
    json!({"applicability": "safe", "message": fix.message, "edits": edits})
}

/// One diagnostic as a JSON object: code, severity, message, the primary location, every label,
/// help, notes, the fix, and the rendered text.
pub fn to_json(sources: &SourceMap, d: &Diagnostic) -> Value {
    let primary = d.labels.iter().find(|l| l.primary).or(d.labels.first());
    let (line, column, end_line, end_column) = match primary {
        Some(l) => position(sources, d.file, l.span),
        None => (1, 1, 1, 1),
    };
    let labels: Vec<Value> = d
        .labels
        .iter()
        .map(|l| {
            let (line, column, end_line, end_column) = position(sources, d.file, l.span);
            json!({
                "primary": l.primary,
                "message": l.message,
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
            })
        })
        .collect();
    json!({
        "code": d.code,
        "severity": match d.severity { Severity::Error => "error", Severity::Warning => "warning" },
        "message": d.message,
        "file": sources.name(d.file),
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
        "labels": labels,
        "help": d.help,
        "notes": d.notes,
        "fix": d.fix.as_ref().map(|f| fix_to_json(sources, d.file, f)),
        "rendered": render_plain(sources, d),
    })
}

/// JSON Lines: one compact object per diagnostic, each followed by a newline.
pub fn to_json_lines(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&to_json(sources, d).to_string());
        out.push('\n');
    }
    out
}
