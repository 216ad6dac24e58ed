//! One file's parse: its text (E0009 when it is not UTF-8) to a syntax tree, how deeply the tree
//! nests, and only the statements an edit touched when the file's previous parse is known.

use super::stack::{on_compiler_stack, CALLER_PARSE_BYTES};
use crate::diagnostics::{codes, Diagnostic, Diagnostics, Reported};
use crate::source::{FileId, SourceMap, Span};
use crate::syntax;
use std::collections::HashMap;
use std::sync::Arc;

/// A module's text and the syntax tree it parsed to, kept from an editor's last analysis.
pub struct PreviousParse {
    pub text: String,
    pub module: Arc<syntax::ast::Module>,
}

/// Each module's [`PreviousParse`], by name.
pub type PreviousParses = HashMap<String, PreviousParse>;

/// Reads one file's text (E0009 if it is not UTF-8) and parses it; only the statements an
/// edit touched when the `previous` text and module of the file are known. Also how deeply the
/// module nests ([`modules::Unit::nesting`]).
pub(super) fn parse_input(
    name: &str,
    bytes: &[u8],
    previous: Option<&PreviousParse>,
    sources: &mut SourceMap,
    diags: &mut Diagnostics,
) -> (FileId, Result<syntax::ast::Module, Reported>, usize) {
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
