//! The command line's definitions (clap): the commands, their arguments and help. `main.rs`
//! runs them.

use clap::{Parser, Subcommand, ValueEnum};
use onnxsc::driver::{CompileOptions, Keep};
use onnxsc::link;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "onnxsc",
    version,
    about = "Compile ONNX Script translation functions (.onnxs) into ONNX functions",
    long_about = "onnxsc checks and compiles `.onnxs` files — the ONNX Script subset of Python that \
onnxscript's @script accepts — into ONNX FunctionProtos, for PyTorch's ONNX exporter \
(`torch.onnx.export(..., custom_translation_table=...)`) and for ONNX Runtime.\n\n\
Exit status: 0 when there are no errors (warnings allowed), 1 when the sources have errors, \
2 on a usage or I/O failure (for `link`: 1 when the model or libraries cannot be linked)."
)]
pub(crate) struct Cli {
    /// When to colour diagnostics. `auto` colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    pub(crate) color: Color,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Color {
    Auto,
    Always,
    Never,
}

/// Where PyTorch operator schemas come from (for `@torch_op` bindings).
#[derive(clap::Args, Clone)]
pub(crate) struct SchemaArgs {
    /// A native_functions.yaml to check `aten::` bindings against, instead of the embedded one
    /// (from torch 2.15). `auto` finds the one of the torch installed in the active Python
    /// environment ($VIRTUAL_ENV or $CONDA_PREFIX).
    #[arg(long, value_name = "PATH", env = "ONNXSC_NATIVE_FUNCTIONS")]
    pub(crate) native_functions: Option<PathBuf>,
    /// More operator schemas (e.g. custom ops), in native_functions.yaml format:
    /// `- func: mylibrary::my_op(Tensor x, float alpha=1.0) -> Tensor`. Repeatable.
    #[arg(long = "schema", value_name = "FILE")]
    pub(crate) schema_files: Vec<PathBuf>,
    /// The schemas of the operators registered with the PyTorch that will export, in the same
    /// format (the Python package writes them from `torch.ops`): a `torch.library.define` that
    /// differs is an error, and bindings to undeclared operators are checked against them.
    /// Repeatable.
    #[arg(long = "registered", value_name = "FILE")]
    pub(crate) registered_files: Vec<PathBuf>,
    /// Read no configuration: without it, the `[tool.onnxsc]` table of the closest
    /// `pyproject.toml` above each file says which warnings to ignore (`ignore`,
    /// `per-file-ignores`) and which to report on request (`extend-select`), as ruff's does.
    #[arg(long)]
    pub(crate) isolated: bool,
}

impl SchemaArgs {
    pub(crate) fn options(&self) -> CompileOptions {
        CompileOptions {
            native_functions: self.native_functions.clone(),
            schema_files: self.schema_files.clone(),
            registered_files: self.registered_files.clone(),
            keep: Keep::Functions,
            isolated: self.isolated,
            deny_warnings: false,
            skip_invalid: false,
        }
    }
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Check `.onnxs` files and report every problem, without writing anything.
    ///
    /// Checks syntax, names, op calls against the ONNX and ONNX Runtime schemas of the declared
    /// opsets, element types, and each `@torch_op` binding against its PyTorch schema.
    Check {
        /// `.onnxs` files, or directories searched recursively for them.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// How to print diagnostics: `human` (to stderr) or `json` (one object per line, to
        /// stdout, for editors and CI).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Treat warnings as errors (exit status 1).
        #[arg(long)]
        deny_warnings: bool,
        /// Apply the machine-applicable fixes (round after round, until none applies), write
        /// the changed files atomically, and report what remains. A file with a syntax error
        /// is left as it is.
        #[arg(long)]
        fix: bool,
        /// Print the changes `--fix` would make, as a unified diff, without writing them (exit
        /// status 1 if there are any).
        #[arg(long)]
        diff: bool,
        #[command(flatten)]
        schemas: SchemaArgs,
    },
    /// Compile `.onnxs` files into a function library.
    ///
    /// With `--emit proto` (the default) the output is an ONNX model file whose `functions` hold
    /// every compiled function. With `--emit text` it is the functions in ONNX's textual syntax,
    /// printed to stdout unless `-o` is given. Nothing is written when there are errors; the
    /// output file is replaced atomically.
    Build {
        /// `.onnxs` files, or directories searched recursively for them.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Where to write the library (required for `--emit proto`).
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
        /// The output format.
        #[arg(long, value_enum, default_value_t = Emit::Proto)]
        emit: Emit,
        /// How to print diagnostics: `human` (to stderr) or `json` (one object per line, to
        /// stdout, as `check --format json` prints them; needs `-o` with `--emit text`).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Treat warnings as errors: nothing is written when there are any.
        #[arg(long)]
        deny_warnings: bool,
        /// Write a library of the functions without errors when others have some: each function
        /// with an error (or calling one, or in a module with an error outside its functions) is
        /// left out, every error is still reported, the library records what it left out, and
        /// the exit status is still 1.
        #[arg(long)]
        skip_invalid: bool,
        #[command(flatten)]
        schemas: SchemaArgs,
    },
    /// Link an exported model with function libraries: resolve its calls to functions.
    ///
    /// Every call in the model (main graph, subgraphs, and the functions it calls) must resolve
    /// to a function of the model or of a library, and match its signature. `--mode reference`
    /// (the default) adds the called functions to the model; `--mode inline` replaces every call
    /// by the function's body, specialised to the call's attributes. Nothing is written when
    /// linking fails (exit status 1); the output file is replaced atomically, and external data
    /// files stay valid wherever it is written.
    Link {
        /// The exported ONNX model.
        #[arg(value_name = "MODEL")]
        model: PathBuf,
        /// Function libraries: `onnxsc build` outputs, or `.onnxs` files and directories, which
        /// are compiled first.
        #[arg(value_name = "LIB")]
        libs: Vec<PathBuf>,
        /// Where to write the linked model.
        #[arg(short, long, value_name = "OUT", required = true)]
        output: PathBuf,
        /// How calls are resolved.
        #[arg(long, value_enum, default_value_t = LinkMode::Reference)]
        mode: LinkMode,
        /// Replace functions the model already carries with the libraries' definitions of the
        /// same (domain, name).
        #[arg(long = "override")]
        override_model: bool,
        /// Inline mode: the most nodes inlining may make (it grows exponentially when functions
        /// call others several times).
        #[arg(long, value_name = "N", default_value_t = link::DEFAULT_MAX_NODES)]
        max_nodes: usize,
        #[command(flatten)]
        schemas: SchemaArgs,
    },
    /// Link models against libraries loaded once: one inline link per request, on stdin and
    /// stdout, until stdin closes.
    ///
    /// Each message is a 4-byte little-endian length, then that many bytes. A request is an ONNX
    /// model (serialized `ModelProto`); its response is a status byte, then the linked model
    /// (0: what `link --mode inline` would write for it) or the diagnostics as text (1). A
    /// malformed request gets a response with status 1 and the server goes on. Exit status: 0
    /// when stdin closes between requests, 1 when the libraries cannot be linked against, 2 on
    /// an I/O failure or a request cut short by the end of the input.
    Serve {
        /// Function libraries: `onnxsc build` outputs, or `.onnxs` files and directories, which
        /// are compiled first.
        #[arg(value_name = "LIB", required = true)]
        libs: Vec<PathBuf>,
        #[command(flatten)]
        schemas: SchemaArgs,
    },
    /// Print a PyTorch operator schema and how each argument maps to ONNX.
    ///
    /// The first line is the schema exactly as native_functions.yaml writes it; then each
    /// argument with its type and how a translation receives it (tensor input or attribute).
    Schema {
        /// The operator, e.g. `aten::add.Tensor`, or `aten::gelu` for the default overload; FX
        /// graphs' spelling (`aten.layer_norm.default`) is understood too. A name without its
        /// overload (`aten::add`) lists every overload.
        #[arg(value_name = "QUALNAME")]
        qualname: String,
        #[command(flatten)]
        schemas: SchemaArgs,
    },
    /// Run the language server (LSP over stdin and stdout) for editors.
    ///
    /// It publishes `check`'s diagnostics as you type (with their fixes as quick fixes) and
    /// answers hover, completion, signature help, go to definition and document symbols from
    /// the operator schemas and PyTorch bindings. See the README for editor setup.
    Lsp {
        #[command(flatten)]
        schemas: SchemaArgs,
    },
    /// Run a trace-only translation for one call and print the nodes it records.
    ///
    /// The call is JSON, as the Python package writes it for the exporter's calls, e.g.
    /// `{"function": "pkg.onnxscript.torch_lib::aten_softmax", "args": [{"tensor": {"dtype":
    /// "FLOAT", "shape": [2, 3]}}, {"int": -1}]}` (docs/exporter.md lists the tags). The
    /// function is printed in ONNX's textual syntax.
    Trace {
        /// `.onnxs` files, or directories searched recursively for them.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// The call, as JSON.
        #[arg(long, value_name = "JSON")]
        call: String,
    },
    /// Write `.onnxs` source for ONNX functions: a model's or library's functions (and its main
    /// graph, as a function of the graph's inputs), or an ONNX operator's function body.
    ///
    /// Compiling the output with `onnxsc build` gives back the same functions (the same nodes,
    /// attributes and values; names that are not Python identifiers are renamed). `If` becomes
    /// Python's `if` and `Loop` `for`/`while` where that compiles back to the same node, other
    /// subgraphs `@graph()` functions. The command compiles what it wrote and warns (W1101) for
    /// each function that does not come back the same. A function holding what `.onnxs` cannot
    /// write is an error (E1101), and nothing is written; the output file is replaced
    /// atomically. docs/decompile.md has the details.
    Decompile {
        /// The model or library (`onnxsc build` output) to decompile.
        #[arg(value_name = "INPUT", required_unless_present = "op", conflicts_with = "op")]
        input: Option<PathBuf>,
        /// Only this function (with the functions it calls), or the main graph by its name.
        #[arg(long, value_name = "NAME", requires = "input")]
        function: Option<String>,
        /// An ONNX operator with a function body (`LayerNormalization`, `Gelu`, ...), instead of
        /// INPUT; needs `--opset`.
        #[arg(long, value_name = "NAME", requires = "opset")]
        op: Option<String>,
        /// The ONNX opset whose `--op` body to write.
        #[arg(long, value_name = "N", requires = "op")]
        opset: Option<i64>,
        /// Where to write the `.onnxs` module.
        #[arg(short, long, value_name = "FILE.onnxs", required = true)]
        output: PathBuf,
    },
    /// Explain a diagnostic code, with an example, e.g. `onnxsc explain E0601`.
    Explain {
        /// The code, as printed in brackets: `E0601`, `W0501`.
        #[arg(value_name = "CODE")]
        code: String,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Rendered diagnostics with source excerpts, on stderr.
    Human,
    /// JSON Lines on stdout: code, severity, message, file, line, column, end_line,
    /// end_column, labels, help, notes, fix (ruff's shape: edits with content and
    /// location, or null), and rendered (the text `--color never` prints).
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Emit {
    /// An ONNX model (protobuf) carrying the functions.
    Proto,
    /// ONNX textual syntax, as `onnx.parser.parse_function` reads it.
    Text,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LinkMode {
    /// Add every called function (and those it calls) to the model's functions.
    Reference,
    /// Replace every call by its function's body, specialised to the call's attributes.
    Inline,
}
