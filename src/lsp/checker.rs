//! Checking documents: when (debounced) and how (the compiler, on a thread of its own).
//!
//! A change schedules its document and every open document whose last analysis imported it.
//! A change after a pause is checked at once, so a keystroke's diagnostics arrive within the
//! check's own time; changes in a burst (typing, a paste split in pieces) are checked once the
//! burst pauses for the debounce time. One check runs at a time; changes made meanwhile wait for
//! it and are then checked together. Requests never wait on this thread for longer than their
//! own timeout (see [`super::requests`]).

use super::documents::{path_of, Checked};
use super::explain;
use super::position::LineMap;
use super::Shared;
use crate::diagnostics::{Diagnostic, Severity};
use crate::driver::{self, Analysis, CompileOptions, Overlay, Reuse, SourceInput};
use crossbeam_channel::{Receiver, Sender};
use lsp_server::Notification;
use lsp_types::notification::{Notification as _, PublishDiagnostics};
use lsp_types::{self as lsp, NumberOrString, PublishDiagnosticsParams, Url};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which documents need checking, and when.
pub struct Schedule {
    debounce: Duration,
    dirty: BTreeSet<Url>,
    last_change: Option<Instant>,
    deadline: Option<Instant>,
    busy: bool,
}

impl Schedule {
    pub fn new(debounce: Duration) -> Schedule {
        Schedule { debounce, dirty: BTreeSet::new(), last_change: None, deadline: None, busy: false }
    }

    /// `uri` changed: check it, and the documents that import it.
    pub fn changed(&mut self, shared: &Shared, uri: &Url) {
        self.dirty.insert(uri.clone());
        self.dependents_of(shared, uri);
        let now = Instant::now();
        let in_burst = self.last_change.is_some_and(|t| now.duration_since(t) < self.debounce);
        self.deadline = Some(if in_burst { now + self.debounce } else { now });
        self.last_change = Some(now);
    }

    /// Schedules the open documents whose last analysis compiled `uri` in as a module.
    pub fn dependents_of(&mut self, shared: &Shared, uri: &Url) {
        let (key, _) = path_of(uri);
        let store = shared.lock();
        for (other, checked) in &store.checked {
            if other != uri && checked.analysis.modules.iter().skip(1).any(|m| m.key == key) {
                self.dirty.insert(other.clone());
            }
        }
        self.deadline.get_or_insert_with(Instant::now);
    }

    /// Schedules every open document (files on disk changed).
    pub fn everything(&mut self, shared: &Shared) {
        self.dirty.extend(shared.lock().docs.keys().cloned());
        self.deadline.get_or_insert_with(Instant::now);
    }

    pub fn closed(&mut self, uri: &Url) {
        self.dirty.remove(uri);
    }

    /// How long the main loop may block before a check is due (`None`: until a message).
    pub fn wait(&self) -> Option<Duration> {
        if self.busy || self.dirty.is_empty() {
            return None;
        }
        Some(self.deadline.map(|d| d.saturating_duration_since(Instant::now())).unwrap_or_default())
    }

    /// The documents to check now, if a check is due and none is running.
    pub fn due(&mut self, now: Instant) -> Option<Vec<Url>> {
        if self.busy || self.dirty.is_empty() || self.deadline.is_some_and(|d| d > now) {
            return None;
        }
        self.busy = true;
        self.deadline = None;
        Some(std::mem::take(&mut self.dirty).into_iter().collect())
    }

    /// The running check ended.
    pub fn finished(&mut self) {
        self.busy = false;
    }
}

/// The checker thread's ends: jobs in, one message out per finished job.
pub struct Checker {
    jobs: Sender<Vec<Url>>,
    pub done: Receiver<()>,
}

impl Checker {
    pub fn start(shared: Arc<Shared>, options: CompileOptions, explain: Option<PathBuf>) -> Checker {
        let (jobs, job_rx) = crossbeam_channel::unbounded::<Vec<Url>>();
        let (done_tx, done) = crossbeam_channel::unbounded();
        let spawned = std::thread::Builder::new().name("onnxsc-checker".into()).spawn(move || {
            // What the previous check of each document left for the next.
            let mut reuse: HashMap<Url, Reuse> = HashMap::new();
            for job in job_rx {
                reuse.retain(|uri, _| shared.lock().docs.contains_key(uri));
                for uri in job {
                    let open = shared.lock().docs.contains_key(&uri);
                    if !open {
                        reuse.remove(&uri);
                        continue;
                    }
                    check(&shared, &options, explain.as_deref(), &uri, reuse.entry(uri.clone()).or_default());
                }
                if done_tx.send(()).is_err() {
                    break;
                }
            }
        });
        if spawned.is_err() {
            eprintln!("onnxsc lsp: cannot start the checker thread; no diagnostics will be published");
        }
        Checker { jobs, done }
    }

    pub fn check(&self, uris: Vec<Url>) {
        let _ = self.jobs.send(uris);
    }
}

/// Checks one document as `onnxsc check FILE` would, reading the other open documents instead
/// of their files, then stores the analysis and publishes its diagnostics.
fn check(shared: &Shared, options: &CompileOptions, explain: Option<&std::path::Path>, uri: &Url, reuse: &mut Reuse) {
    // An editor may send every Python file to the server (`.onnxs` is Python to it): only
    // `.onnxs` documents are checked.
    if !uri.path().ends_with(".onnxs") {
        return;
    }
    let (version, text, name, overlay) = {
        let store = shared.lock();
        let Some(doc) = store.docs.get(uri) else { return };
        let overlay: Overlay = store.docs.values().map(|d| (d.key.clone(), d.text.as_str().to_string())).collect();
        (doc.version, doc.text.clone(), doc.name.clone(), overlay)
    };
    let input = SourceInput { name, bytes: text.as_bytes().to_vec() };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        driver::analyze_again(vec![input], options, &overlay, reuse)
    }));
    let mut replaced = Vec::new();
    let diagnostics = match result {
        Ok(Ok(analysis)) => {
            let diagnostics = to_lsp(&analysis, uri, explain);
            // A document that has not parsed since it was opened: its global names for
            // completion and hover come from its text before the line of the syntax error.
            let never_parsed = !shared.lock().parsed.contains_key(uri);
            let fallback = before_syntax_error(&analysis)
                .filter(|_| never_parsed)
                .and_then(|before| parsed_prefix(options, &overlay, uri, version, before));
            let checked = Checked { version, text, analysis: Arc::new(analysis) };
            let mut store = shared.lock();
            if store.docs.contains_key(uri) {
                if let Some(known) = fallback.or_else(|| checked.parsed().then(|| checked.clone())) {
                    replaced.extend(store.parsed.insert(uri.clone(), known));
                }
                replaced.extend(store.checked.insert(uri.clone(), checked));
            }
            diagnostics
        }
        Ok(Err(e)) => vec![whole_file_error(format!("onnxsc cannot check this file: {e}"))],
        Err(_) => vec![whole_file_error(
            "onnxsc crashed while checking this file; please report it with the file's text".into(),
        )],
    };
    shared.checked.notify_all();
    let params = PublishDiagnosticsParams { uri: uri.clone(), diagnostics, version: Some(version) };
    shared.send(Notification::new(PublishDiagnostics::METHOD.into(), params));
    // The analyses replaced are freed after the diagnostics are out.
    drop(replaced);
}

/// The analysis of `before`, a document's text up to its syntax error, if that parses.
fn parsed_prefix(
    options: &CompileOptions,
    overlay: &Overlay,
    uri: &Url,
    version: i32,
    before: String,
) -> Option<Checked> {
    let (_, name) = path_of(uri);
    let input = SourceInput { name, bytes: before.as_bytes().to_vec() };
    let analysis =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| driver::analyze(vec![input], options, overlay)))
            .ok()?
            .ok()?;
    Some(Checked { version, text: Arc::new(before), analysis: Arc::new(analysis) }).filter(Checked::parsed)
}

/// The document's text before the top-level statement that holds its syntax error (from its
/// decorators on), if it has one.
fn before_syntax_error(analysis: &Analysis) -> Option<String> {
    let root = analysis.modules.first()?;
    if root.ast.is_some() {
        return None;
    }
    let text = analysis.sources.text(root.file);
    let d = analysis.diagnostics.iter().find(|d| d.file == root.file && d.code.starts_with("E000"))?;
    let at = (d.primary_span()?.start as usize).min(text.len());
    let mut start = super::context::statement_start(text, at);
    // A decorated definition starts at its first decorator.
    while start > 0 {
        let above = text[..start - 1].rfind('\n').map(|i| i + 1).unwrap_or(0);
        if !text[above..start].starts_with('@') {
            break;
        }
        start = above;
    }
    Some(text[..start].to_string())
}

fn whole_file_error(message: String) -> lsp::Diagnostic {
    lsp::Diagnostic {
        range: lsp::Range::default(),
        severity: Some(lsp::DiagnosticSeverity::ERROR),
        source: Some("onnxsc".into()),
        message,
        ..Default::default()
    }
}

/// The diagnostics of the document itself (the analysis's first module), as LSP has them: the
/// primary label's range, the code linked to its explanation, help and notes in the message,
/// secondary labels as related information.
pub fn to_lsp(analysis: &Analysis, uri: &Url, explain: Option<&std::path::Path>) -> Vec<lsp::Diagnostic> {
    let Some(root) = analysis.modules.first().map(|m| m.file) else { return Vec::new() };
    let text = analysis.sources.text(root);
    let map = LineMap::new(text);
    analysis.diagnostics.iter().filter(|d| d.file == root).map(|d| one(d, &map, uri, explain)).collect()
}

/// One diagnostic as [`to_lsp`] gives it, without the link (for a code action's context).
pub fn to_lsp_one(d: &Diagnostic, map: &LineMap, uri: &Url) -> lsp::Diagnostic {
    one(d, map, uri, None)
}

fn one(d: &Diagnostic, map: &LineMap, uri: &Url, explain: Option<&std::path::Path>) -> lsp::Diagnostic {
    let primary = d.labels.iter().find(|l| l.primary).or(d.labels.first());
    let range = primary.map(|l| map.range(l.span)).unwrap_or_default();
    let mut message = d.message.clone();
    if let Some(l) = primary.filter(|l| !l.message.is_empty()) {
        message.push_str(&format!(": {}", l.message));
    }
    if let Some(h) = &d.help {
        message.push_str(&format!("\nhelp: {h}"));
    }
    for n in &d.notes {
        message.push_str(&format!("\nnote: {n}"));
    }
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|l| !l.primary)
        .map(|l| lsp::DiagnosticRelatedInformation {
            location: lsp::Location { uri: uri.clone(), range: map.range(l.span) },
            message: l.message.clone(),
        })
        .collect();
    lsp::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: explain.and_then(|dir| explain::href(dir, d.code)).map(|href| lsp::CodeDescription { href }),
        source: Some("onnxsc".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}
