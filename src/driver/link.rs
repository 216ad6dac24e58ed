//! The `link` command's pipeline: read the exported model, compile the libraries given as
//! `.onnxs` sources (through the compiler's own pipeline) and load those given as built
//! libraries, link (`crate::link`), keep the model's external data valid where the output goes,
//! and write the output atomically, never over an input. The command line renders what it
//! returns.

use super::output::{self, OutputError};
use super::traced_calls::TracedLibraries;
use super::{compile_paths, files, Compilation, CompileOptions};
use crate::diagnostics::Diagnostic;
use crate::emit;
use crate::link::{self, Library, Linked};
use crate::source::SourceMap;
use prost::Message;
use std::path::{Path, PathBuf};

/// What to link, and where to write it.
pub struct LinkRequest<'a> {
    /// The exported model.
    pub model: &'a Path,
    /// Built libraries, or `.onnxs` files and directories to compile.
    pub libs: &'a [PathBuf],
    pub output: &'a Path,
    pub link: &'a link::LinkOptions,
    /// Where the PyTorch schemas of the compiled sources come from.
    pub schemas: &'a CompileOptions,
}

/// A failure to read or write a file, as opposed to a model or library that cannot be linked
/// (exit code 2, not 1).
#[derive(Debug)]
pub struct LinkIoError {
    pub message: String,
    pub help: Option<String>,
}

impl From<OutputError> for LinkIoError {
    fn from(e: OutputError) -> Self {
        LinkIoError { message: e.message, help: e.help }
    }
}

/// How a link ended. Nothing is written unless it is [`LinkOutcome::Written`].
pub enum LinkOutcome {
    /// A library's sources have errors: the compilation, to report.
    SourceErrors(Box<Compilation>),
    /// The model or a library cannot be linked.
    Refused {
        /// The compiled sources' files, which the diagnostics may point into.
        sources: SourceMap,
        /// The warnings of the compiled sources, reported before the diagnostics.
        compiled: Vec<Diagnostic>,
        diagnostics: Vec<Diagnostic>,
    },
    /// The output is written.
    Written {
        sources: SourceMap,
        /// The warnings of the compiled sources, reported before the link's warnings.
        compiled: Vec<Diagnostic>,
        /// The linked model, with the link's warnings: a process about to exit may leave it to
        /// the exit rather than free it (a tenth of a large link).
        linked: Box<Linked>,
    },
}

/// Links the model against the libraries and writes the output.
pub fn link_files(request: &LinkRequest) -> Result<LinkOutcome, LinkIoError> {
    let LinkRequest { model, libs, output, link: options, schemas } = *request;
    let mut inputs: Vec<PathBuf> = std::iter::once(model.to_path_buf()).chain(libs.iter().cloned()).collect();
    inputs.extend(schemas.native_functions.iter().chain(&schemas.schema_files).cloned());
    // Refused before any work; checked again once compiled sources bring their imports.
    output::refuse_inputs(output, &inputs)?;
    let refused = |sources: SourceMap, compiled: Vec<Diagnostic>, diagnostics: Vec<Diagnostic>| {
        Ok(LinkOutcome::Refused { sources, compiled, diagnostics })
    };
    let bytes = read(model)?;
    let mut model_proto = match link::load::model(&bytes, &model.display().to_string()) {
        Ok(m) => m,
        Err(d) => return refused(SourceMap::new(), Vec::new(), vec![*d]),
    };
    drop(bytes);
    let Loaded { mut libraries, mut sources, compiled, files } = match load_libraries(libs, schemas)? {
        Ok(loaded) => loaded,
        Err(outcome) => return Ok(outcome),
    };
    inputs.extend(files);
    // Calls of trace-only translations become calls of their specialisations first.
    let traced = TracedLibraries::take(&mut libraries);
    if let Err(diagnostics) = traced.specialize_model_calls(&mut model_proto, &mut sources) {
        return refused(sources, compiled, diagnostics);
    }

    let linked = match link::link(model_proto, libraries, options) {
        Ok(l) => l,
        Err(diagnostics) => return refused(sources, compiled, diagnostics),
    };
    // The translations' nodes meet the types and shapes the model declares.
    if let Err(d) = link::shapes::check_model(&linked.model) {
        return refused(sources, compiled, vec![*d]);
    }
    write_linked(model, output, &linked, &inputs)?;
    Ok(LinkOutcome::Written { sources, compiled, linked: Box::new(linked) })
}

/// The libraries of a link, ready to link against.
pub struct Loaded {
    pub libraries: Vec<Library>,
    /// The compiled sources' files, which diagnostics may point into (empty without sources).
    pub sources: SourceMap,
    /// The warnings of the compiled sources.
    pub compiled: Vec<Diagnostic>,
    /// Every file the compilation read.
    pub files: Vec<PathBuf>,
}

/// The libraries `libs` name: `.onnxs` files and directories compiled together into one
/// library (named after them), then the built libraries read and checked, in order. `Ok(Err)`
/// is what makes them impossible to link against: source errors, or a refused library.
pub fn load_libraries(libs: &[PathBuf], schemas: &CompileOptions) -> Result<Result<Loaded, LinkOutcome>, LinkIoError> {
    let (source_libs, file_libs): (Vec<&PathBuf>, Vec<&PathBuf>) =
        libs.iter().partition(|p| p.is_dir() || p.extension().is_some_and(|e| e == "onnxs"));
    // Link diagnostics have no source text; compiled libraries bring theirs.
    let mut loaded =
        Loaded { libraries: Vec::new(), sources: SourceMap::new(), compiled: Vec::new(), files: Vec::new() };
    if !source_libs.is_empty() {
        let paths: Vec<PathBuf> = source_libs.iter().map(|&p| p.clone()).collect();
        let c = compile_paths(&paths, schemas).map_err(|e| LinkIoError { message: e.to_string(), help: None })?;
        if c.has_errors() {
            return Ok(Err(LinkOutcome::SourceErrors(Box::new(c))));
        }
        let name = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        let functions = c.functions.iter().map(emit::proto::function).collect();
        let traced = emit::proto::trace_record(c.library_meta());
        loaded.libraries.push(Library { name, functions, traced });
        (loaded.sources, loaded.compiled, loaded.files) = (c.sources, c.diagnostics, c.files);
    }
    for lib in file_libs {
        match link::load::library(&read(lib)?, &lib.display().to_string()) {
            Ok(l) => loaded.libraries.push(l),
            Err(d) => {
                let Loaded { sources, compiled, .. } = loaded;
                return Ok(Err(LinkOutcome::Refused { sources, compiled, diagnostics: vec![*d] }));
            }
        }
    }
    Ok(Ok(loaded))
}

/// Writes the linked model to `output`, with its external data placed beside the file written
/// (which a symbolic link may put elsewhere); on failure, the placed data is taken back.
fn write_linked(model: &Path, output: &Path, linked: &Linked, inputs: &[PathBuf]) -> Result<(), LinkIoError> {
    output::refuse_inputs(output, inputs)?;
    let target = output::resolve(output)?;
    output::check_dir(&target)?;
    let placed = link::external::place(&linked.model, &output::dir_of(model), &output::dir_of(&target))
        .map_err(|e| LinkIoError { message: e.message, help: e.help })?;
    if let Err(e) = output::write(output, &[&linked.model.encode_to_vec()], inputs) {
        placed.undo();
        return Err(e.into());
    }
    Ok(())
}

/// A model or built library, read within the limits of `driver::files`.
fn read(path: &Path) -> Result<Vec<u8>, LinkIoError> {
    files::read(path, files::Kind::Model)
        .map_err(|e| LinkIoError { message: format!("cannot read {}: {}", path.display(), e.message), help: None })
}
