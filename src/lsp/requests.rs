//! Requests: each on a thread of its own, answered from a snapshot of its document.
//!
//! A request waits (a bounded time) for the analysis of the document's current text, so its
//! answer matches what the user sees; a request for a document that is not open, or with
//! parameters that do not decode, gets an error response; so does one whose handler panics,
//! and the server carries on.

use super::documents::Checked;
use super::features;
use super::snapshot::Snapshot;
use super::Shared;
use lsp_server::{ErrorCode, Request, Response};
use lsp_types::request::{self as req, Request as _};
use lsp_types::Url;
use serde::de::DeserializeOwned;

use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a request waits for the analysis of the current text before it answers from the
/// latest one it has.
const WAIT_FOR_CHECK: Duration = Duration::from_secs(3);

/// Stack for request threads: the syntax tree is walked recursively.
const REQUEST_STACK: usize = 256 << 20;

pub fn spawn(shared: &Arc<Shared>, request: Request) {
    spawn_with(shared, request, handle);
}

/// Answers `request` with `handler` on a thread of its own; a panic becomes an error response.
fn spawn_with(shared: &Arc<Shared>, request: Request, handler: fn(&Shared, &Request) -> Response) {
    let id = request.id.clone();
    let worker = {
        let shared = shared.clone();
        std::thread::Builder::new().name("onnxsc-request".into()).stack_size(REQUEST_STACK).spawn(move || {
            let id = request.id.clone();
            let response = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&shared, &request))) {
                Ok(r) => r,
                Err(panic) => {
                    let why = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    Response::new_err(
                        id,
                        ErrorCode::InternalError as i32,
                        format!("onnxsc failed on this request: {why}"),
                    )
                }
            };
            shared.send(response);
        })
    };
    if worker.is_err() {
        shared.send(Response::new_err(id, ErrorCode::InternalError as i32, "no thread for this request".into()));
    }
}

fn params<P: DeserializeOwned>(r: &Request) -> Result<P, Response> {
    serde_json::from_value(r.params.clone())
        .map_err(|e| Response::new_err(r.id.clone(), ErrorCode::InvalidParams as i32, e.to_string()))
}

fn ok<T: serde::Serialize>(r: &Request, result: T) -> Response {
    Response::new_ok(r.id.clone(), result)
}

fn handle(shared: &Shared, r: &Request) -> Response {
    let answer = || -> Result<Response, Response> {
        Ok(match r.method.as_str() {
            req::HoverRequest::METHOD => {
                let p: lsp_types::HoverParams = params(r)?;
                let s = snapshot(shared, r, &p.text_document_position_params.text_document.uri)?;
                ok(r, features::hover(&s, p.text_document_position_params.position))
            }
            req::Completion::METHOD => {
                let p: lsp_types::CompletionParams = params(r)?;
                let s = snapshot(shared, r, &p.text_document_position.text_document.uri)?;
                ok(r, features::completion(&s, p.text_document_position.position))
            }
            req::SignatureHelpRequest::METHOD => {
                let p: lsp_types::SignatureHelpParams = params(r)?;
                let s = snapshot(shared, r, &p.text_document_position_params.text_document.uri)?;
                ok(r, features::signature_help(&s, p.text_document_position_params.position))
            }
            req::GotoDefinition::METHOD => {
                let p: lsp_types::GotoDefinitionParams = params(r)?;
                let s = snapshot(shared, r, &p.text_document_position_params.text_document.uri)?;
                ok(r, features::definition(&s, p.text_document_position_params.position))
            }
            req::DocumentSymbolRequest::METHOD => {
                let p: lsp_types::DocumentSymbolParams = params(r)?;
                let s = snapshot(shared, r, &p.text_document.uri)?;
                ok(r, features::symbols(&s))
            }
            req::CodeActionRequest::METHOD => {
                let p: lsp_types::CodeActionParams = params(r)?;
                let s = snapshot(shared, r, &p.text_document.uri)?;
                ok(r, features::code_actions(&s, p.range))
            }
            _ => Response::new_err(
                r.id.clone(),
                ErrorCode::MethodNotFound as i32,
                format!("onnxsc does not serve `{}`", r.method),
            ),
        })
    };
    answer().unwrap_or_else(|e| e)
}

/// The document's snapshot, once its current text is analysed (or the wait is over).
fn snapshot(shared: &Shared, r: &Request, uri: &Url) -> Result<Snapshot, Response> {
    let deadline = Instant::now() + WAIT_FOR_CHECK;
    let mut store = shared.lock();
    loop {
        let Some(doc) = store.docs.get(uri) else {
            return Err(Response::new_err(
                r.id.clone(),
                ErrorCode::InvalidParams as i32,
                format!("unknown document {uri}: open it first (textDocument/didOpen)"),
            ));
        };
        // Only `.onnxs` documents are checked (see `checker`): others have no analysis to wait for.
        let done = !uri.path().ends_with(".onnxs")
            || store.checked.get(uri).is_some_and(|c| c.version == doc.version && c.text == doc.text);
        let now = Instant::now();
        if done || now >= deadline {
            break;
        }
        store = match shared.checked.wait_timeout(store, deadline - now) {
            Ok((s, _)) => s,
            Err(e) => e.into_inner().0,
        };
    }
    let doc = store.docs.get(uri).ok_or_else(|| {
        Response::new_err(r.id.clone(), ErrorCode::InvalidParams as i32, format!("unknown document {uri}"))
    })?;
    let text = doc.text.clone();
    let current = store.checked.get(uri).filter(|c| c.text == text).cloned();
    let known = current.clone().filter(Checked::parsed).or_else(|| store.parsed.get(uri).cloned());
    Ok(Snapshot { uri: uri.clone(), text, current, known })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::documents::Store;
    use lsp_server::{Message, RequestId};
    use std::sync::{Condvar, Mutex};

    fn shared() -> (Arc<Shared>, crossbeam_channel::Receiver<Message>) {
        let (sender, receiver) = crossbeam_channel::unbounded();
        (Arc::new(Shared { store: Mutex::new(Store::default()), checked: Condvar::new(), sender }), receiver)
    }

    fn response(rx: &crossbeam_channel::Receiver<Message>) -> Response {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Message::Response(r)) => r,
            other => panic!("expected a response, got {other:?}"),
        }
    }

    #[test]
    fn a_panicking_handler_answers_with_an_error_and_the_server_goes_on() {
        let (shared, rx) = shared();
        let hover = |id: i32, uri: &str| {
            let params = serde_json::json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}});
            Request::new(RequestId::from(id), req::HoverRequest::METHOD.into(), params)
        };
        spawn_with(&shared, hover(1, "file:///a.onnxs"), |_, _| panic!("a bug in a handler"));
        let r = response(&rx);
        let e = r.response_result.expect_err("an error response");
        assert_eq!(e.code, ErrorCode::InternalError as i32);
        assert!(e.message.contains("a bug in a handler"), "{}", e.message);
        // The next request is served as usual: here, a document that is not open.
        spawn(&shared, hover(2, "file:///b.onnxs"));
        let r = response(&rx);
        assert_eq!(r.id, RequestId::from(2));
        let e = r.response_result.expect_err("an error response");
        assert_eq!(e.code, ErrorCode::InvalidParams as i32);
        assert!(e.message.contains("unknown document"), "{}", e.message);
    }
}
