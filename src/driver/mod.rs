//! The driver: files in, functions and diagnostics out. The command line, the language server
//! and tests call this.
//!
//! One job per file: `inputs` (the command line's paths to files read), `stack` (which thread's
//! stack the recursive phases run on), `pipeline` (the phases in order), `parse` (one file's
//! parse), `modules` (the files imports bring in), `schemas` (the PyTorch schemas in force),
//! `heads` and `lowering` (a module's functions, `pieces` of a large one on the compiler's
//! threads), `editor`, `analysis` and `reuse` (what an editor asks for and keeps), `link` (the
//! `link` command's pipeline), `serve` (the libraries loaded once, a link per request), `trace`
//! (trace-only translations specialised call by call), `files` and `output` (reading and
//! writing files).

pub mod analysis;
pub mod call;
mod config;
pub mod decompile;
mod editor;
pub mod files;
pub mod fix;
mod heads;
mod inputs;
mod left_out;
pub mod link;
mod lowering;
mod modules;
pub mod output;
mod parse;
mod pieces;
mod pipeline;
mod reuse;
mod schemas;
pub mod serve;
mod stack;
pub mod summary;
mod suppress;
pub mod trace;
pub mod traced_calls;

pub use analysis::Analysis;
pub use editor::{analyze, analyze_again, Overlay};
pub use heads::MAX_LIBRARY_FUNCTIONS;
pub use inputs::{collect_inputs, io_message, InputError, SourceInput};
pub use modules::identity;
pub use pipeline::deny_warnings;
pub use reuse::Reuse;
pub use stack::{on_compiler_stack, CALLER_NESTING, CALLER_PARSE_BYTES, CALLER_STACK};

use crate::aten::AtenRegistry;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::ir::{Function, Outline};
use crate::source::SourceMap;
use crate::syntax;
use std::path::PathBuf;

/// Everything one compilation produced.
pub struct Compilation {
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
    /// The functions compiled, when the options keep them ([`Keep::Functions`]).
    pub functions: Vec<Function>,
    /// An outline of every function compiled, in order, whatever the options keep.
    pub outlines: Vec<Outline>,
    /// With [`Keep::Encoded`]: the functions' `ModelProto.functions` fields, in order, in the
    /// pieces the threads that lowered them wrote ([`FunctionFields`]).
    pub encoded: Vec<Vec<u8>>,
    /// How many functions were not compiled because of their errors (reported).
    pub dropped: usize,
    /// The trace-only translations, as their signatures (functions without bodies), and when
    /// there are any, every module's name and text: the library carries them, to run them for
    /// each call of the exporter.
    pub traced: Vec<Function>,
    pub trace_sources: Vec<(String, String)>,
    /// Every file the compilation read (sources, imported modules, schema files): an output
    /// must not replace any of them.
    pub files: Vec<PathBuf>,
    /// The custom operators the modules declare with `torch.library.define`, sorted.
    pub custom_ops: Vec<String>,
    /// With [`CompileOptions::skip_invalid`]: the functions left out for their errors, in source order.
    /// The functions, outlines and encoded fields hold the others only.
    pub left_out: Vec<crate::onnx::metadata::LeftOutRecord>,
    /// With [`CompileOptions::skip_invalid`]: whether the functions without errors make a library
    /// (every error lies in a module, not in a schema file).
    pub partial: bool,
    /// The syntax trees the phases are done with, held rather than freed at the end of the
    /// compilation: a process that exits next leaves them to the exit, where freeing a large
    /// module's trees node by node costs a twentieth of its build. Only trees shallow enough to
    /// drop on any thread ([`CALLER_NESTING`]) are held; deeper ones are freed on the compiler's
    /// stack.
    syntax: Vec<syntax::ast::Module>,
}

impl Compilation {
    /// What its library's model records besides the functions.
    pub fn library_meta(&self) -> crate::emit::proto::LibraryMeta<'_> {
        crate::emit::proto::LibraryMeta {
            custom_ops: &self.custom_ops,
            traced: &self.traced,
            sources: &self.trace_sources,
            left_out: &self.left_out,
        }
    }

    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == crate::diagnostics::Severity::Error)
    }

    /// The library of a compilation that kept [`Keep::Encoded`], as `build` writes it: the
    /// model's header (from the outlines), then each function's fields as lowering encoded them.
    pub fn encoded_library(&self) -> EncodedLibrary<'_> {
        EncodedLibrary {
            header: crate::emit::proto::library_header_bytes(&self.outlines, self.library_meta()),
            functions: &self.encoded,
        }
    }
}

/// A library's model in pieces whose concatenation is its encoding ([`Compilation::encoded_library`]).
pub struct EncodedLibrary<'c> {
    header: Vec<u8>,
    functions: &'c [Vec<u8>],
}

impl EncodedLibrary<'_> {
    /// The pieces, in order: written one after another, they are the model.
    pub fn parts(&self) -> Vec<&[u8]> {
        std::iter::once(self.header.as_slice()).chain(self.functions.iter().map(Vec::as_slice)).collect()
    }

    /// The model's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.parts().concat()
    }
}

/// Where the PyTorch operator schemas come from, and what to keep of the functions compiled.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// A native_functions.yaml to use instead of the embedded one.
    pub native_functions: Option<PathBuf>,
    /// More schemas (custom operators), in native_functions.yaml format.
    pub schema_files: Vec<PathBuf>,
    /// The operators registered with the PyTorch that will export, in the same format: declared
    /// custom operators are compared with them, and bindings to undeclared ones checked.
    pub registered_files: Vec<PathBuf>,
    /// What to keep of each function compiled.
    pub keep: Keep,
    /// Read no configuration file (`pyproject.toml`'s `[tool.onnxsc]`): `--isolated`.
    pub isolated: bool,
    /// Warnings are errors (`--deny-warnings`), each with a note saying so.
    pub deny_warnings: bool,
    /// Keep the functions without errors when others have some (`build --skip-invalid`):
    /// [`Compilation::left_out`] lists the others.
    pub skip_invalid: bool,
}

/// What a compilation keeps of each function it compiles, besides its [`Outline`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Keep {
    /// The function ([`Compilation::functions`]).
    #[default]
    Functions,
    /// Its `ModelProto.functions` field ([`Compilation::encoded`]), written by the thread that
    /// lowered it, right after lowering: the functions' nodes are never all in memory at once,
    /// and the memory one function held is the next one's, already mapped and in the cache.
    /// What `build` writes.
    Encoded,
    /// Nothing: what `check` needs.
    Outline,
}

impl CompileOptions {
    /// Whether any schema comes from a file rather than the embedded tables.
    pub fn names_files(&self) -> bool {
        self.native_functions.is_some() || !self.schema_files.is_empty() || !self.registered_files.is_empty()
    }
}

/// Reads and compiles the given files.
pub fn compile_paths(paths: &[PathBuf], options: &CompileOptions) -> Result<Compilation, InputError> {
    compile_inputs(&inputs::read_inputs(paths)?, options)
}

/// Compiles in-memory sources (name, text) with the embedded schemas; used by tests.
pub fn compile_sources(inputs: Vec<(String, String)>) -> Compilation {
    let inputs: Vec<SourceInput> =
        inputs.into_iter().map(|(name, text)| SourceInput { name, bytes: text.into_bytes() }).collect();
    compile_embedded(&inputs)
}

/// Compiles inputs whose bytes are already read, with the embedded schemas (the default options).
#[allow(
    clippy::expect_used,
    reason = "schema files are the only input that can fail, and the default options name none"
)]
pub fn compile_embedded(inputs: &[SourceInput]) -> Compilation {
    compile_inputs(inputs, &CompileOptions::default()).expect("the default options read no files")
}

/// The operator schemas the options select, without the modules' custom operators, with the
/// diagnostics of malformed schema files (and those files, to render them).
pub struct SelectedSchemas {
    pub registry: std::borrow::Cow<'static, AtenRegistry>,
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

pub fn schemas_for(options: &CompileOptions) -> Result<SelectedSchemas, InputError> {
    let (mut sources, mut diags) = (SourceMap::new(), Diagnostics::new());
    let registry = schemas::load(options, &mut sources, &mut diags)?;
    Ok(SelectedSchemas { registry, sources, diagnostics: diags.into_sorted() })
}

/// Compiles inputs whose bytes are already read. Fails only when a schema file cannot be read.
///
/// Shallow sources are compiled on the calling thread, which needs [`CALLER_STACK`] for it; the
/// phases that could recurse deeper move to a thread with [`crate::parallel::COMPILER_STACK`].
pub fn compile_inputs(inputs: &[SourceInput], options: &CompileOptions) -> Result<Compilation, InputError> {
    // Schema files are parsed before any source is measured: on the large stack, as before.
    // A compilation large enough to be split runs on a thread of the pool from the start: each
    // parallel phase then starts and ends there, that thread taking pieces too, instead of on
    // a thread that sleeps while the pieces run and must be woken after each phase.
    let splits = inputs.iter().any(|i| syntax::parser::parses_in_pieces(i.bytes.len()));
    if !options.names_files() && !splits {
        return pipeline::compile_on_this_thread(inputs, options);
    }
    on_compiler_stack(|| pipeline::compile_on_this_thread(inputs, options))
}

#[cfg(test)]
mod tests {
    use super::compile_sources;

    fn compile(text: &str) -> (Vec<&'static str>, Vec<String>) {
        let c = compile_sources(vec![("m.onnxs".into(), text.into())]);
        (c.diagnostics.iter().map(|d| d.code).collect(), c.outlines.iter().map(|o| o.name.clone()).collect())
    }

    /// A module-level `if` onnxsc does not decide is reported once; the module's other functions
    /// are compiled.
    #[test]
    fn a_module_level_if_leaves_the_rest_of_the_module_compiled() {
        let text = include_str!("../../tests/cases/errors/module_if_defines_functions.onnxs");
        assert_eq!(compile(text), (vec!["E0102"], vec!["g".to_string()]));
    }

    /// A name a comprehension or a lambda binds is its own: a call through it is no call of the
    /// module's function of that name (which would not bind these arguments).
    #[test]
    fn calls_through_a_comprehension_or_lambda_variable_call_no_module_function() {
        let head =
            "from onnxscript import FLOAT, opset18 as op\n\n\ndef f(x: FLOAT) -> FLOAT:\n    return op.Relu(x)\n\n\n";
        let shadowed = "def g(x: FLOAT) -> FLOAT:\n    y = [f(x, x) for f in (op.Add,)]\n    return op.Identity(x)\n";
        assert_eq!(compile(&format!("{head}{shadowed}")).0, ["E0302"]);
        let lambda = "def g(x: FLOAT) -> FLOAT:\n    y = (lambda f: f(x, x))(op.Add)\n    return op.Identity(x)\n";
        assert_eq!(compile(&format!("{head}{lambda}")).0, ["E0302"]);
        let global = "def g(x: FLOAT) -> FLOAT:\n    y = [f(x, x) for d in (1,)]\n    return op.Identity(x)\n";
        assert_eq!(compile(&format!("{head}{global}")).0, ["E0302", "E0409"]);
    }
}
