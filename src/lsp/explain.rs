//! Where a diagnostic's code leads: its `onnxsc explain CODE` page, written once per version of
//! onnxsc as Markdown files under the user's cache directory
//! (`$XDG_CACHE_HOME/onnxsc/VERSION/explain/CODE.md`, else `~/.cache/...`), so that the
//! `codeDescription` of each diagnostic is a `file:` link an editor opens beside the source.

use crate::diagnostics::explain::{all_codes, explanation};
use lsp_types::Url;
use std::path::{Path, PathBuf};

/// The directory holding one page per code, written if it is not there yet; `None` when no
/// cache directory can be written (diagnostics then carry no link).
pub fn pages() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    let dir = cache.join("onnxsc").join(env!("CARGO_PKG_VERSION")).join("explain");
    std::fs::create_dir_all(&dir).ok()?;
    for code in all_codes() {
        let path = dir.join(format!("{code}.md"));
        let text = explanation(code)?;
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text) {
            continue;
        }
        // Written beside and renamed into place: a reader never sees half a page.
        let tmp = dir.join(format!(".{code}.md.{}", std::process::id()));
        std::fs::write(&tmp, text).ok()?;
        std::fs::rename(&tmp, &path).ok()?;
    }
    Some(dir)
}

/// The link to `code`'s page.
pub fn href(dir: &Path, code: &str) -> Option<Url> {
    Url::from_file_path(dir.join(format!("{code}.md"))).ok()
}
