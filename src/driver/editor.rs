//! The editor's entry points: [`analyze`] checks documents as `check` does and keeps what the
//! compiler learned ([`Analysis`]); [`analyze_again`] reuses the results of functions that did
//! not change since the last analysis ([`Reuse`]).

use super::analysis::{self, Analysis};
use super::inputs::{InputError, SourceInput};
use super::pipeline::pipeline;
use super::reuse::Reuse;
use super::stack::on_compiler_stack;
use super::CompileOptions;
use std::path::PathBuf;

/// Texts that stand in for files on disk (an editor's unsaved documents), by
/// [`super::identity`] of the path.
pub type Overlay = std::collections::HashMap<PathBuf, String>;

/// Checks inputs the way `check` does, for an editor: the modules they import are read from
/// `overlay` before the disk, and the result keeps what the compiler learned ([`Analysis`]).
pub fn analyze(inputs: Vec<SourceInput>, options: &CompileOptions, overlay: &Overlay) -> Result<Analysis, InputError> {
    analyze_again(inputs, options, overlay, &mut Reuse::default())
}

/// [`analyze`], taking the results of functions that did not change from `reuse` (what the
/// previous analyses of these inputs left there) and leaving this one's for the next.
pub fn analyze_again(
    inputs: Vec<SourceInput>,
    options: &CompileOptions,
    overlay: &Overlay,
    reuse: &mut Reuse,
) -> Result<Analysis, InputError> {
    let mut reuse = Some(reuse);
    on_compiler_stack(move || {
        let (c, known) = pipeline(&inputs, options, overlay, reuse.take())?;
        let analysis::Known { modules, functions, bindings, facts, registry } =
            known.unwrap_or_else(analysis::Known::empty);
        Ok(Analysis { sources: c.sources, diagnostics: c.diagnostics, modules, functions, bindings, facts, registry })
    })
}
