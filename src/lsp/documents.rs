//! The open documents: their text as the editor has it, and the analyses made of them.

use super::position::LineMap;
use crate::driver::{identity, Analysis};
use lsp_types::{TextDocumentContentChangeEvent, Url};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

pub struct Document {
    pub version: i32,
    pub text: Arc<String>,
    /// The file's identity, as the driver keys modules.
    pub key: PathBuf,
    /// The name diagnostics and the compiler use for it.
    pub name: String,
}

/// An analysis of one document, made from its text at `version`.
#[derive(Clone)]
pub struct Checked {
    pub version: i32,
    pub text: Arc<String>,
    pub analysis: Arc<Analysis>,
}

impl Checked {
    /// Whether the document itself parsed (so its syntax tree and globals are current).
    pub fn parsed(&self) -> bool {
        self.analysis.modules.first().is_some_and(|m| m.ast.is_some())
    }
}

/// Everything the server knows, shared between the main loop, the checker and requests.
#[derive(Default)]
pub struct Store {
    pub docs: HashMap<Url, Document>,
    /// The latest analysis of each document.
    pub checked: HashMap<Url, Checked>,
    /// The latest analysis of each document in which it parsed: completion and hover need its
    /// global names while the text is half typed.
    pub parsed: HashMap<Url, Checked>,
}

/// The file path of a `file:` URI, and the name the compiler reports it under.
pub fn path_of(uri: &Url) -> (PathBuf, String) {
    match uri.to_file_path() {
        Ok(p) => {
            let name = p.display().to_string();
            (identity(&p), name)
        }
        // Not a file (an untitled buffer): its URI stands for the path.
        Err(()) => (PathBuf::from(uri.path()), uri.to_string()),
    }
}

impl Document {
    pub fn new(uri: &Url, version: i32, text: String) -> Document {
        let (key, name) = path_of(uri);
        Document { version, text: Arc::new(text), key, name }
    }

    /// Applies the editor's changes in order: a change with a range replaces that range, one
    /// without replaces the whole text.
    pub fn apply(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        let mut text = self.text.as_str().to_string();
        for c in changes {
            match c.range {
                Some(r) => {
                    let span = LineMap::new(&text).span(r);
                    text.replace_range(span.range(), &c.text);
                }
                None => text = c.text,
            }
        }
        self.text = Arc::new(text);
        self.version = version;
    }
}
