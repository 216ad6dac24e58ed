//! What a request sees of its document: its text and the analyses to answer from, taken when
//! the request arrives ([`Snapshot`]). Requests take one; features answer from it.

use super::documents::Checked;
use lsp_types::Url;
use std::sync::Arc;

/// What a request sees of its document.
pub struct Snapshot {
    pub uri: Url,
    pub text: Arc<String>,
    /// The analysis of exactly this text, if it is done.
    pub current: Option<Checked>,
    /// The analysis to take global names and schemas from: the current one if the text parsed,
    /// else the latest in which it did.
    pub known: Option<Checked>,
}

impl Snapshot {
    pub fn analysis(&self) -> Option<&crate::driver::Analysis> {
        self.known.as_ref().map(|c| c.analysis.as_ref())
    }
}
