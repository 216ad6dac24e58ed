//! `onnxsc lsp`: a Language Server Protocol server over stdio.
//!
//! The protocol is rust-analyzer's `lsp-server` (framing, handshake) and `lsp-types`; the
//! analysis is the compiler's own ([`crate::driver::analyze`]): the same diagnostics as
//! `check`, and the facts the compiler learned on the way, which the features read.
//!
//! Threads: the main loop reads messages and keeps the documents ([`documents`]); one checker
//! thread re-checks documents after changes, debounced ([`checker`]); each request runs on a
//! thread of its own with a large stack, so a slow one never holds up the others, and a panic in
//! it becomes an error response ([`requests`]). Positions are UTF-16, as LSP counts them
//! ([`position`]).

mod checker;
mod context;
mod documents;
mod explain;
mod features;
mod position;
mod requests;
mod snapshot;
#[cfg(test)]
mod tests;

use crate::driver::CompileOptions;
use documents::{Document, Store};
use lsp_server::{Connection, Message, Notification};
use lsp_types::notification::{self as notif, Notification as _};
use lsp_types::*;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The state the main loop, the checker and the requests share.
pub struct Shared {
    pub store: Mutex<Store>,
    /// Signalled whenever an analysis is stored.
    pub checked: Condvar,
    pub sender: crossbeam_channel::Sender<Message>,
}

impl Shared {
    /// The store, even if a thread panicked while holding it (the data stays consistent: every
    /// update is one assignment).
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn send(&self, m: impl Into<Message>) {
        let _ = self.sender.send(m.into());
    }
}

/// How long a burst of changes must pause before it is checked (changes after a pause are
/// checked at once).
const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(30);

/// Runs the server on stdin and stdout until the client says `exit`.
pub fn run_stdio(options: CompileOptions) -> Result<(), String> {
    let (connection, io_threads) = Connection::stdio();
    serve(connection, options)?;
    io_threads.join().map_err(|e| e.to_string())
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..Default::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "(".into(), ",".into(), "\"".into(), "'".into(), " ".into()]),
            ..Default::default()
        }),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec!["(".into(), ",".into()]),
            retrigger_characters: Some(vec![",".into()]),
            ..Default::default()
        }),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..Default::default()
        })),
        ..Default::default()
    }
}

/// Serves one client on `connection`: the handshake, then messages until `exit`.
#[allow(
    clippy::needless_pass_by_value,
    reason = "dropping the connection at the end closes its channels: the caller's I/O threads end"
)]
pub fn serve(connection: Connection, options: CompileOptions) -> Result<(), String> {
    let (id, params) = connection.initialize_start().map_err(|e| e.to_string())?;
    let init: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let setting = |name: &str| init.initialization_options.as_ref().and_then(|o| o.get(name)).cloned();
    let debounce =
        setting("debounceMs").and_then(|v| v.as_u64()).map(Duration::from_millis).unwrap_or(DEFAULT_DEBOUNCE);
    let mut options = options;
    if let Some(path) = setting("nativeFunctions").and_then(|v| v.as_str().map(std::path::PathBuf::from)) {
        options.native_functions = Some(path);
    }
    if let Some(files) = setting("schemaFiles").and_then(|v| v.as_array().cloned()) {
        options.schema_files.extend(files.iter().filter_map(|f| f.as_str().map(std::path::PathBuf::from)));
    }
    let result = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": {"name": "onnxsc", "version": env!("CARGO_PKG_VERSION")},
    });
    connection.initialize_finish(id, result).map_err(|e| e.to_string())?;

    let shared = Arc::new(Shared {
        store: Mutex::new(Store::default()),
        checked: Condvar::new(),
        sender: connection.sender.clone(),
    });
    let explain = explain::pages();
    let checker = checker::Checker::start(shared.clone(), options, explain);
    let mut schedule = checker::Schedule::new(debounce);
    enum Event {
        Message(Message),
        Disconnected,
        Checked,
        Tick,
    }
    loop {
        let event = match schedule.wait() {
            None => crossbeam_channel::select! {
                recv(connection.receiver) -> m => m.map_or(Event::Disconnected, Event::Message),
                recv(checker.done) -> _ => Event::Checked,
            },
            Some(t) => crossbeam_channel::select! {
                recv(connection.receiver) -> m => m.map_or(Event::Disconnected, Event::Message),
                recv(checker.done) -> _ => Event::Checked,
                default(t) => Event::Tick,
            },
        };
        match event {
            Event::Message(Message::Request(req)) => {
                if connection.handle_shutdown(&req).map_err(|e| e.to_string())? {
                    return Ok(());
                }
                requests::spawn(&shared, req);
            }
            Event::Message(Message::Notification(n)) => {
                if n.method == notif::Exit::METHOD {
                    return Ok(());
                }
                notification(&shared, &mut schedule, n);
            }
            Event::Message(Message::Response(_)) | Event::Tick => {}
            Event::Checked => schedule.finished(),
            Event::Disconnected => return Ok(()),
        }
        if let Some(job) = schedule.due(Instant::now()) {
            checker.check(job);
        }
    }
}

fn notification(shared: &Shared, schedule: &mut checker::Schedule, n: Notification) {
    match n.method.as_str() {
        notif::DidOpenTextDocument::METHOD => {
            if let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) {
                let d = p.text_document;
                let doc = Document::new(&d.uri, d.version, d.text);
                shared.lock().docs.insert(d.uri.clone(), doc);
                schedule.changed(shared, &d.uri);
            }
        }
        notif::DidChangeTextDocument::METHOD => {
            if let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) {
                let uri = p.text_document.uri;
                let known = match shared.lock().docs.get_mut(&uri) {
                    Some(doc) => {
                        doc.apply(p.text_document.version, p.content_changes);
                        true
                    }
                    None => false,
                };
                if known {
                    schedule.changed(shared, &uri);
                }
            }
        }
        notif::DidSaveTextDocument::METHOD => {
            if let Ok(p) = serde_json::from_value::<DidSaveTextDocumentParams>(n.params) {
                // Files on disk changed: every open document may see another module now.
                schedule.changed(shared, &p.text_document.uri);
                schedule.everything(shared);
            }
        }
        notif::DidCloseTextDocument::METHOD => {
            if let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) {
                let uri = p.text_document.uri;
                {
                    let mut store = shared.lock();
                    store.docs.remove(&uri);
                    store.checked.remove(&uri);
                    store.parsed.remove(&uri);
                }
                schedule.closed(&uri);
                // Modules that import it now read it from disk.
                schedule.dependents_of(shared, &uri);
                let params = PublishDiagnosticsParams { uri, diagnostics: Vec::new(), version: None };
                shared.send(Notification::new(notif::PublishDiagnostics::METHOD.into(), params));
            }
        }
        _ => {}
    }
}
