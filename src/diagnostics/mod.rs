//! Located diagnostics: what every phase reports, and how it is rendered.
//!
//! Phases push [`Diagnostic`]s into a [`Diagnostics`] sink instead of failing fast, so one run
//! reports every independent error. Each diagnostic has a stable code (see [`codes`]), a primary
//! label at the exact span, and a help line where one is possible. A diagnostic whose help can
//! be carried out mechanically also carries it as a [`Fix`]: the edits that make the help
//! line true, which `check --format json` prints and the language server offers as a quick fix.

pub mod codes;
pub mod explain;
pub mod json;
mod render;
pub mod suggest;
pub mod suppression;

pub use render::{render_plain, render_to_stderr, ColorMode};

use crate::source::{FileId, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    pub primary: bool,
}

/// One replacement in the diagnostic's file: the text at `span` becomes `replacement` (an empty
/// span inserts, an empty replacement deletes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

impl Edit {
    pub fn replace(span: Span, replacement: impl Into<String>) -> Edit {
        Edit { span, replacement: replacement.into() }
    }

    pub fn insert(at: u32, text: impl Into<String>) -> Edit {
        Edit { span: Span { start: at, end: at }, replacement: text.into() }
    }
}

/// A machine-applicable fix: applying all its edits (they never overlap) leaves a file in which
/// this diagnostic is gone, without changing what the rest of the file means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What applying it does, as an editor's menu shows it: "Rename `x` to `self`".
    pub message: String,
    pub edits: Vec<Edit>,
}

impl Fix {
    /// `text` with the edits applied.
    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for e in self.edits.iter().rev() {
            let (start, end) = (e.span.start as usize, e.span.end as usize);
            if start <= end && end <= out.len() && out.is_char_boundary(start) && out.is_char_boundary(end) {
                out.replace_range(start..end, &e.replacement);
            }
        }
        out
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub file: FileId,
    pub labels: Vec<Label>,
    pub help: Option<String>,
    pub notes: Vec<String>,
    pub fix: Option<Fix>,
}

impl Diagnostic {
    pub fn error(code: &'static str, file: FileId, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            file,
            labels: Vec::new(),
            help: None,
            notes: Vec::new(),
            fix: None,
        }
    }

    pub fn warning(code: &'static str, file: FileId, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(code, file, message) }
    }

    /// The label that points at the mistake itself.
    pub fn primary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label { span, message: message.into(), primary: true });
        self
    }

    /// A label that gives context, such as where a name was defined.
    pub fn secondary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label { span, message: message.into(), primary: false });
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The help line as edits; `edits` must not overlap. An empty list adds no fix.
    pub fn fix(mut self, message: impl Into<String>, mut edits: Vec<Edit>) -> Self {
        if !edits.is_empty() {
            edits.sort_by_key(|e| (e.span.start, e.span.end));
            self.fix = Some(Fix { message: message.into(), edits });
        }
        self
    }

    pub fn primary_span(&self) -> Option<Span> {
        self.labels.iter().find(|l| l.primary).map(|l| l.span)
    }
}

/// Proof that an error was reported. The only way to get one is to push an error diagnostic
/// ([`Diagnostics::push_error`]), as with rustc's `ErrorGuaranteed`: a phase that abandons a
/// construct returns `Err(Reported)`, and values that stand for a failed definition (a poisoned
/// name) carry the proof, so no construct is dropped without an error saying why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reported(());

/// The diagnostics of one compilation, in the order they were found.
#[derive(Default, Debug)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    /// Pushes an error, and returns the proof that it was reported.
    pub fn push_error(&mut self, d: Diagnostic) -> Reported {
        debug_assert_eq!(d.severity, Severity::Error, "only an error is proof of a failure: {}", d.message);
        self.items.push(d);
        Reported(())
    }

    /// Pushes diagnostics found elsewhere (by a phase with a sink of its own); the proof that an
    /// error was reported, if one of them is an error.
    pub fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) -> Option<Reported> {
        let mut reported = None;
        for d in ds {
            if d.severity == Severity::Error {
                reported = Some(Reported(()));
            }
            self.items.push(d);
        }
        reported
    }

    /// Adds the diagnostics another sink collected, in their order.
    pub fn append(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.severity == Severity::Error).count()
    }

    pub fn warning_count(&self) -> usize {
        self.items.iter().filter(|d| d.severity == Severity::Warning).count()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    /// Sorted by file and position so output does not depend on the order phases ran in, each
    /// finding once ([`one_report_per_finding`]).
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items.sort_by_key(|d| (d.file, d.primary_span().map(|s| (s.start, s.end))));
        one_report_per_finding(self.items)
    }
}

/// Each finding reported once: two phases that meet the same mistake (or one phase that meets
/// it twice, as the checks of several calls of a callee can) report it once. `items` are sorted
/// by position, so a repeat follows its first report among those at the same place.
fn one_report_per_finding(mut items: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut kept = 0;
    for k in 0..items.len() {
        let same_place = |d: &Diagnostic| d.file == items[k].file && d.primary_span() == items[k].primary_span();
        let repeat = items[..kept].iter().rev().take_while(|d| same_place(d)).any(|d| *d == items[k]);
        if !repeat {
            items.swap(kept, k);
            kept += 1;
        }
    }
    items.truncate(kept);
    items
}
