//! Rendering diagnostics with codespan-reporting.

use super::{Diagnostic, Severity};
use crate::source::{FileId, SourceMap, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{self, Files};
use codespan_reporting::term::{self, termcolor};
use std::collections::HashMap;
use std::ops::Range;

/// How the command line colours its output (`--color`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorMode {
    Auto,
    Always,
    Never,
}

/// Lines longer than this (in bytes) are shown in part: a window around the labels.
pub const MAX_SHOWN_LINE: usize = 200;
/// How much of a long line is shown before the first label on it.
const SHOWN_BEFORE: usize = 40;

/// The files as a diagnostic shows them: each line longer than [`MAX_SHOWN_LINE`] cut to a
/// window (around its labels, else its start), so that rendering a diagnostic costs the same
/// on a 1 MB line as on a short one. Line and column numbers stay those of the whole file.
struct Clipped<'a> {
    map: &'a SourceMap,
    windows: HashMap<(FileId, usize), Range<usize>>,
}

impl Clipped<'_> {
    /// A line's range without its line break.
    fn bare_line(&self, file: FileId, line: usize) -> Range<usize> {
        let r = self.map.line_range(file, line).unwrap_or(0..0);
        let text = &self.map.text(file)[r.clone()];
        r.start..r.start + text.trim_end_matches(['\n', '\r']).len()
    }

    /// The window shown of a long line that holds a label starting at `at`.
    fn window(&mut self, file: FileId, line: usize, at: usize) -> Range<usize> {
        let full = self.bare_line(file, line);
        let text = self.map.text(file);
        self.windows
            .entry((file, line))
            .or_insert_with(|| {
                let start = floor_char_boundary(text, at.saturating_sub(SHOWN_BEFORE).max(full.start));
                start..floor_char_boundary(text, (start + MAX_SHOWN_LINE).min(full.end))
            })
            .clone()
    }

    /// A label's range as shown: inside the window of its line when that line is long, and on
    /// one line when it would end on a long one.
    fn label_range(&mut self, file: FileId, span: Span) -> Range<usize> {
        let text = self.map.text(file);
        let start = floor_char_boundary(text, (span.start as usize).min(text.len()));
        let end = floor_char_boundary(text, (span.end as usize).min(text.len())).max(start);
        let line = self.map.line_index(file, start);
        let first = self.bare_line(file, line);
        if first.len() > MAX_SHOWN_LINE {
            let w = self.window(file, line, start);
            let s = start.clamp(w.start, w.end);
            return s..end.clamp(s, w.end);
        }
        let last = self.map.line_index(file, end);
        if last != line && self.bare_line(file, last).len() > MAX_SHOWN_LINE {
            return start..first.end.max(start);
        }
        start..end
    }
}

impl<'a> Files<'a> for Clipped<'a> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        Files::name(self.map, id)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        self.map.source(id)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, files::Error> {
        Files::line_index(self.map, id, byte_index)
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, files::Error> {
        if let Some(w) = self.windows.get(&(id, line_index)) {
            return Ok(w.clone());
        }
        let r = Files::line_range(self.map, id, line_index)?;
        if r.len() <= MAX_SHOWN_LINE {
            return Ok(r);
        }
        Ok(r.start..floor_char_boundary(self.map.text(id), r.start + MAX_SHOWN_LINE))
    }

    fn column_number(&'a self, id: FileId, _line: usize, byte_index: usize) -> Result<usize, files::Error> {
        Ok(self.map.line_col(id, byte_index as u32).1)
    }
}

/// The longest message shown in full; longer ones (which quote a huge name from the input) keep
/// their start and end.
const MAX_SHOWN_MESSAGE: usize = 400;

fn shorten(text: &str) -> String {
    if text.len() <= MAX_SHOWN_MESSAGE {
        return text.to_string();
    }
    let head = floor_char_boundary(text, MAX_SHOWN_MESSAGE / 2);
    let mut tail = text.len() - MAX_SHOWN_MESSAGE / 4;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}…({} bytes)…{}", &text[..head], tail - head, &text[tail..])
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn to_codespan<'a>(sources: &'a SourceMap, d: &Diagnostic) -> (cs::Diagnostic<usize>, Clipped<'a>) {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let mut clipped = Clipped { map: sources, windows: HashMap::new() };
    let labels = d
        .labels
        .iter()
        .map(|l| {
            let style = if l.primary { cs::LabelStyle::Primary } else { cs::LabelStyle::Secondary };
            cs::Label::new(style, d.file, clipped.label_range(d.file, l.span)).with_message(shorten(&l.message))
        })
        .collect();
    let mut notes = Vec::new();
    if let Some(help) = &d.help {
        notes.push(format!("help: {}", shorten(help)));
    }
    notes.extend(d.notes.iter().map(|n| format!("note: {}", shorten(n))));
    let mut long: Vec<usize> = clipped.windows.keys().map(|(_, line)| *line).collect();
    long.sort_unstable();
    for line in long {
        let bytes = clipped.bare_line(d.file, line).len();
        notes.push(format!("note: line {} is {bytes} bytes long; {MAX_SHOWN_LINE} of them are shown", line + 1));
    }
    let diagnostic = cs::Diagnostic::new(severity)
        .with_code(d.code)
        .with_message(shorten(&d.message))
        .with_labels(labels)
        .with_notes(notes);
    (diagnostic, clipped)
}

fn config() -> term::Config {
    term::Config::default()
}

/// Plain text, as snapshot tests and `--color never` see it.
pub fn render_plain(sources: &SourceMap, d: &Diagnostic) -> String {
    let (diagnostic, files) = to_codespan(sources, d);
    term::emit_into_string(&config(), &files, &diagnostic)
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
        let (diagnostic, files) = to_codespan(sources, d);
        if term::emit_to_write_style(&mut lock, &config(), &files, &diagnostic).is_err() {
            eprintln!("{}[{}]: {}", severity_word(d.severity), d.code, d.message);
        }
    }
}
