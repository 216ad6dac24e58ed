//! Rendering diagnostics with codespan-reporting.

use super::{Diagnostic, Severity};
use crate::source::SourceMap;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::term::{self, termcolor};

/// How the command line colours its output (`--color`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorMode {
    Auto,
    Always,
    Never,
}

fn to_codespan(d: &Diagnostic) -> cs::Diagnostic<usize> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let labels = d
        .labels
        .iter()
        .map(|l| {
            let style = if l.primary { cs::LabelStyle::Primary } else { cs::LabelStyle::Secondary };
            cs::Label::new(style, d.file, l.span.range()).with_message(l.message.clone())
        })
        .collect();
    let mut notes = Vec::new();
    if let Some(help) = &d.help {
        notes.push(format!("help: {help}"));
    }
    notes.extend(d.notes.iter().map(|n| format!("note: {n}")));
    cs::Diagnostic::new(severity)
        .with_code(d.code)
        .with_message(d.message.clone())
        .with_labels(labels)
        .with_notes(notes)
}

fn config() -> term::Config {
    term::Config::default()
}

/// Plain text, as snapshot tests and `--color never` see it.
pub fn render_plain(sources: &SourceMap, d: &Diagnostic) -> String {
    term::emit_into_string(&config(), sources, &to_codespan(d))
        .unwrap_or_else(|_| format!("{}[{}]: {}\n", severity_word(d.severity), d.code, d.message))
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// Writes diagnostics to stderr, coloured as `mode` and `NO_COLOR` say.
impl ColorMode {
    /// Whether stderr gets colour: `auto` colours a terminal unless `NO_COLOR` is set.
    pub fn stderr_colored(self) -> bool {
        match self {
            ColorMode::Always => true,
            ColorMode::Never => false,
            ColorMode::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::IsTerminal::is_terminal(&std::io::stderr())
            }
        }
    }
}

pub fn render_to_stderr(sources: &SourceMap, diags: &[Diagnostic], mode: ColorMode) {
    let choice = if mode.stderr_colored() { termcolor::ColorChoice::Always } else { termcolor::ColorChoice::Never };
    let stream = termcolor::StandardStream::stderr(choice);
    let mut lock = stream.lock();
    for d in diags {
        if term::emit_to_write_style(&mut lock, &config(), sources, &to_codespan(d)).is_err() {
            eprintln!("{}[{}]: {}", severity_word(d.severity), d.code, d.message);
        }
    }
}
