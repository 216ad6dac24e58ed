//! The `onnxsc` command line: `check`, `build`, `link`, `serve`, `schema`, `trace`, `decompile`,
//! `explain`, `lsp`.
//!
//! Exit codes: 0 clean (warnings allowed), 1 errors in the sources, 2 usage or I/O failure.

use clap::{Parser, Subcommand, ValueEnum};
use onnxsc::diagnostics::{self, render_to_stderr, ColorMode, Severity};
use onnxsc::driver::decompile::{DecompileOutcome, DecompileRequest, Source};
use onnxsc::driver::link::{LinkOutcome, LinkRequest};
use onnxsc::driver::serve::{Ended, Server, Startup};
use onnxsc::driver::{self, Compilation, Keep, Options};
use onnxsc::emit;
use onnxsc::link;
use onnxsc::sema::schema_query;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
struct Cli {
    /// When to colour diagnostics. `auto` colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    color: Color,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

/// Where PyTorch operator schemas come from (for `@torch_op` bindings).
#[derive(clap::Args, Clone)]
struct SchemaArgs {
    /// A native_functions.yaml to check `aten::` bindings against, instead of the embedded one
    /// (from torch 2.15). `auto` finds the one of the torch installed in the active Python
    /// environment ($VIRTUAL_ENV or $CONDA_PREFIX).
    #[arg(long, value_name = "PATH", env = "ONNXSC_NATIVE_FUNCTIONS")]
    native_functions: Option<PathBuf>,
    /// More operator schemas (e.g. custom ops), in native_functions.yaml format:
    /// `- func: mylibrary::my_op(Tensor x, float alpha=1.0) -> Tensor`. Repeatable.
    #[arg(long = "schema", value_name = "FILE")]
    schema_files: Vec<PathBuf>,
    /// The schemas of the operators registered with the PyTorch that will export, in the same
    /// format (the Python package writes them from `torch.ops`): a `torch.library.define` that
    /// differs is an error, and bindings to undeclared operators are checked against them.
    /// Repeatable.
    #[arg(long = "registered", value_name = "FILE")]
    registered_files: Vec<PathBuf>,
    /// Read no configuration: without it, the `[tool.onnxsc]` table of the closest
    /// `pyproject.toml` above each file says which warnings to ignore (`ignore`,
    /// `per-file-ignores`) and which to report on request (`extend-select`), as ruff's does.
    #[arg(long)]
    isolated: bool,
}

impl SchemaArgs {
    fn options(&self) -> Options {
        Options {
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
enum Command {
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
enum Format {
    /// Rendered diagnostics with source excerpts, on stderr.
    Human,
    /// JSON Lines on stdout: code, severity, message, file, line, column, end_line,
    /// end_column, labels, help, notes, fix (ruff's shape: edits with content and
    /// location, or null), and rendered (the text `--color never` prints).
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Emit {
    /// An ONNX model (protobuf) carrying the functions.
    Proto,
    /// ONNX textual syntax, as `onnx.parser.parse_function` reads it.
    Text,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LinkMode {
    /// Add every called function (and those it calls) to the model's functions.
    Reference,
    /// Replace every call by its function's body, specialised to the call's attributes.
    Inline,
}

/// An application-level failure (not a diagnostic in the sources), reported through miette.
#[derive(Debug, miette::Diagnostic)]
#[diagnostic(code(onnxsc::io))]
struct AppError {
    message: String,
    #[help]
    help: Option<String>,
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AppError {}

// mimalloc (`onnxsc::allocator` says why, and why it is entered the way it is).
#[global_allocator]
static ALLOCATOR: onnxsc::allocator::MiMalloc = onnxsc::allocator::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = match cli.color {
        Color::Auto => ColorMode::Auto,
        Color::Always => ColorMode::Always,
        Color::Never => ColorMode::Never,
    };
    let use_color = color.stderr_colored();
    let _ = miette::set_hook(Box::new(move |_| Box::new(miette::MietteHandlerOpts::new().color(use_color).build())));
    let result = match cli.command {
        // These compile on this thread when the sources are shallow (`driver::on_stack_for`):
        // a second thread would be a third of a small `check`. The language server hands each
        // analysis to the compiler's threads itself.
        command @ (Command::Check { .. } | Command::Build { .. } | Command::Lsp { .. }) => run(command, color),
        // The others read models and schema files of any depth: on the compiler's large stack.
        command => driver::on_compiler_stack(|| run(command, color)),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{:?}", miette::Report::new(e));
            ExitCode::from(2)
        }
    }
}

fn compile(paths: &[PathBuf], options: &Options) -> Result<Compilation, AppError> {
    driver::compile_paths(paths, options).map_err(|e| AppError { message: e.to_string(), help: None })
}

fn summary(c: &Compilation) {
    let errors = c.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = c.diagnostics.len() - errors;
    let line = if c.partial {
        format!(
            "onnxsc: {}, {}; {} left out, {} compiled\n",
            plural(errors, "error"),
            plural(warnings, "warning"),
            plural(c.left_out.len(), "function"),
            plural(c.outlines.len() + c.traced.len(), "function"),
        )
    } else if errors > 0 {
        format!("onnxsc: {}, {}\n", plural(errors, "error"), plural(warnings, "warning"))
    } else {
        let traced = match c.traced.len() {
            0 => String::new(),
            n => format!(" and {}", plural(n, "trace-only translation")),
        };
        format!(
            "onnxsc: {}{traced} in {} compiled, {}\n",
            plural(c.outlines.len(), "function"),
            plural(c.sources.len(), "file"),
            if warnings == 0 { "no errors".to_string() } else { plural(warnings, "warning") }
        )
    };
    // Standard error is unbuffered: one write, not one per piece of the format.
    eprint!("{line}");
}

fn run(command: Command, color: ColorMode) -> Result<ExitCode, AppError> {
    match command {
        Command::Check { paths, format, deny_warnings, fix, diff, schemas } if fix || diff => {
            let options = Options { keep: Keep::Outline, ..schemas.options() };
            check_fix(&paths, &options, format, deny_warnings, diff, color)
        }
        Command::Check { paths, format, deny_warnings, schemas, .. } => {
            let options = Options { keep: Keep::Outline, deny_warnings, ..schemas.options() };
            let c = compile(&paths, &options)?;
            let outcome = report(&c, format, color).map(|()| {
                summary(&c);
                if c.has_errors() {
                    ExitCode::from(1)
                } else {
                    ExitCode::SUCCESS
                }
            });
            leave_to_exit(c);
            outcome
        }
        Command::Link { model, libs, output, mode, override_model, max_nodes, schemas } => {
            let mode = match mode {
                LinkMode::Reference => link::Mode::Reference,
                LinkMode::Inline => link::Mode::Inline,
            };
            let request = LinkRequest {
                model: &model,
                libs: &libs,
                output: &output,
                link: &link::Options { mode, override_model, max_nodes },
                schemas: &schemas.options(),
            };
            link_model(&request, color)
        }
        Command::Serve { libs, schemas } => serve(&libs, &schemas.options(), color),
        Command::Schema { qualname, schemas } => schema(&qualname, &schemas.options(), color),
        Command::Explain { code } => explain(&code),
        Command::Decompile { input, function, op, opset, output } => {
            let source = match (&input, &op, opset) {
                (Some(path), _, _) => Source::File { path, function: function.as_deref() },
                (None, Some(name), Some(opset)) => Source::Operator { name, opset },
                _ => {
                    return Err(AppError {
                        message: "`decompile` needs INPUT, or `--op NAME --opset N`".into(),
                        help: None,
                    })
                }
            };
            decompile(&DecompileRequest { source, output: &output }, color)
        }
        Command::Trace { paths, call } => trace(&paths, &call, color),
        Command::Lsp { schemas } => match onnxsc::lsp::run_stdio(schemas.options()) {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(message) => Err(AppError { message: format!("language server: {message}"), help: None }),
        },
        Command::Build { paths, output, emit, format, deny_warnings, skip_invalid, schemas } => {
            if emit == Emit::Proto && output.is_none() {
                return Err(AppError {
                    message: "`build` needs an output file for `--emit proto`".into(),
                    help: Some("pass `-o library.onnx`, or `--emit text` to print the functions".into()),
                });
            }
            if format == Format::Json && output.is_none() {
                return Err(AppError {
                    message: "`build --format json` prints diagnostics on stdout, where `--emit text` would print the functions".into(),
                    help: Some("pass `-o FILE` for the functions".into()),
                });
            }
            let keep = match emit {
                Emit::Proto => Keep::Encoded,
                Emit::Text => Keep::Functions,
            };
            let c = compile(&paths, &Options { keep, deny_warnings, skip_invalid, ..schemas.options() })?;
            let outcome = build_output(&c, emit, output.as_deref(), format, color);
            leave_to_exit(c);
            outcome
        }
    }
}

/// `build`'s diagnostics, then its output unless there are errors.
fn build_output(
    c: &Compilation,
    emit: Emit,
    output: Option<&Path>,
    format: Format,
    color: ColorMode,
) -> Result<ExitCode, AppError> {
    report(c, format, color)?;
    if c.has_errors() && !c.partial {
        summary(c);
        return Ok(ExitCode::from(1));
    }
    // Emission recurses only into subgraphs, which lowering keeps within
    // `sema::liveness::MAX_NESTING` levels (E1001): any thread's stack holds it.
    // `Emit::Proto` compiled with `Keep::Encoded`: the functions are bytes already.
    let head = match emit {
        Emit::Proto => emit::proto::library_header_bytes(&c.outlines, c.library_meta()),
        Emit::Text => {
            let protos: Vec<_> = c.functions.iter().map(emit::proto::function).collect();
            emit::text::functions_to_text(&protos).into_bytes()
        }
    };
    let parts: Vec<&[u8]> = std::iter::once(head.as_slice()).chain(c.encoded.iter().map(Vec::as_slice)).collect();
    match output {
        Some(out) => write_output(out, &parts, &c.files)?,
        None => parts.iter().try_for_each(|part| write_stdout(part))?,
    }
    summary(c);
    // A partial library is written, and its errors still fail the command.
    Ok(if c.has_errors() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The process exits once the command returns: its memory goes back to the system whole, so
/// freeing a compilation node by node first (a twentieth of a large build) is only waiting.
fn leave_to_exit(c: Compilation) {
    std::mem::forget(c);
}

/// The diagnostics, as `--format` says.
/// `check --fix` and `check --diff`.
fn check_fix(
    paths: &[PathBuf],
    options: &Options,
    format: Format,
    deny_warnings: bool,
    diff_only: bool,
    color: ColorMode,
) -> Result<ExitCode, AppError> {
    let mut outcome =
        driver::fix::fix_paths(paths, options).map_err(|e| AppError { message: e.to_string(), help: None })?;
    if diff_only {
        let mut text = String::new();
        for (name, before, after) in &outcome.changed {
            let diff = similar::TextDiff::from_lines(before, after);
            text.push_str(&diff.unified_diff().header(name, name).to_string());
        }
        write_stdout(text.as_bytes())?;
    } else {
        driver::fix::write_fixed(&outcome).map_err(|e| AppError { message: e.message, help: e.help })?;
    }
    if deny_warnings {
        driver::deny_warnings(&mut outcome.compilation.diagnostics);
    }
    let c = &outcome.compilation;
    // With `--diff`, what remains is what the unchanged files would still report once fixed.
    report(c, format, color)?;
    let (errors, warnings) = outcome.found;
    let found = match warnings {
        0 => plural(errors, "error"),
        _ => format!("{} and {}", plural(errors, "error"), plural(warnings, "warning")),
    };
    let remaining = c.diagnostics.len();
    let line = if diff_only {
        format!("Found {found} ({} would be fixed, {remaining} would remain).\n", outcome.fixed)
    } else {
        format!("Found {found} ({} fixed, {remaining} remaining).\n", outcome.fixed)
    };
    eprint!("{line}");
    let failed = c.has_errors() || (diff_only && !outcome.changed.is_empty());
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn report(c: &Compilation, format: Format, color: ColorMode) -> Result<(), AppError> {
    match format {
        Format::Human => render_to_stderr(&c.sources, &c.diagnostics, color),
        Format::Json => write_stdout(diagnostics::json::to_json_lines(&c.sources, &c.diagnostics).as_bytes())?,
    }
    Ok(())
}

fn write_stdout(bytes: &[u8]) -> Result<(), AppError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| AppError { message: format!("cannot write to stdout: {e}"), help: None })
}

/// A link that failed: its diagnostics (exit status 1).
fn link_failed(outcome: &LinkOutcome, color: ColorMode) -> ExitCode {
    match outcome {
        LinkOutcome::SourceErrors(c) => {
            render_to_stderr(&c.sources, &c.diagnostics, color);
            summary(c);
        }
        LinkOutcome::Refused { sources, compiled, diagnostics } => {
            render_to_stderr(sources, compiled, color);
            render_to_stderr(sources, diagnostics, color);
            let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
            eprintln!("onnxsc: {errors} error{}, nothing written", if errors == 1 { "" } else { "s" });
        }
        LinkOutcome::Written { .. } => {}
    }
    ExitCode::from(1)
}

/// `onnxsc link MODEL LIB... -o OUT`.
fn link_model(request: &LinkRequest, color: ColorMode) -> Result<ExitCode, AppError> {
    let outcome = driver::link::link_files(request).map_err(|e| AppError { message: e.message, help: e.help })?;
    let (sources, linked) = match outcome {
        LinkOutcome::Written { sources, compiled, linked } => {
            render_to_stderr(&sources, &compiled, color);
            (sources, linked)
        }
        failed => return Ok(link_failed(&failed, color)),
    };
    render_to_stderr(&sources, &linked.diagnostics, color);
    // The process ends here: freeing a large model node by node would take a tenth of the run.
    let (functions, inlined_calls) = (linked.functions, linked.inlined_calls);
    std::mem::forget(linked);
    let output = request.output.display();
    match request.link.mode {
        link::Mode::Reference => {
            eprintln!("onnxsc: linked, the model carries {}; wrote {output}", plural(functions, "function"));
        }
        link::Mode::Inline => eprintln!(
            "onnxsc: inlined {}, {} left; wrote {output}",
            plural(inlined_calls, "call"),
            plural(functions, "function"),
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// `onnxsc serve LIB...`.
fn serve(libs: &[PathBuf], options: &Options, color: ColorMode) -> Result<ExitCode, AppError> {
    let server = match Server::start(libs, options).map_err(|e| AppError { message: e.message, help: e.help })? {
        Startup::Ready { server, compiled } => {
            render_to_stderr(server.sources(), &compiled, color);
            server
        }
        Startup::Failed(outcome) => return Ok(link_failed(&outcome, color)),
    };
    let io_error = |e: std::io::Error| AppError { message: format!("onnxsc serve: {e}"), help: None };
    match server.serve(&mut std::io::stdin().lock(), &mut std::io::stdout().lock()).map_err(io_error)? {
        Ended::Closed => Ok(ExitCode::SUCCESS),
        Ended::Cut(why) => Err(AppError {
            message: format!("onnxsc serve: {why}"),
            help: Some(
                "each request is a 4-byte little-endian length, then that many bytes of a serialized ModelProto".into(),
            ),
        }),
    }
}

/// `onnxsc schema QUALNAME`.
fn schema(qualname: &str, options: &Options, color: ColorMode) -> Result<ExitCode, AppError> {
    let selected = driver::schemas_for(options).map_err(|e| AppError { message: e.to_string(), help: None })?;
    if !selected.diagnostics.is_empty() {
        render_to_stderr(&selected.sources, &selected.diagnostics, color);
        return Ok(ExitCode::from(1));
    }
    match schema_query::answer(&selected.registry, qualname) {
        Ok(text) => {
            write_stdout(text.as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(AppError { message: e.message, help: Some(e.help) }),
    }
}

/// `onnxsc trace PATHS --call JSON`.
fn trace(paths: &[PathBuf], call: &str, color: ColorMode) -> Result<ExitCode, AppError> {
    let call = onnxsc::trace::CallFacts::from_json(call)
        .map_err(|why| AppError { message: format!("`--call` is not a call: {why}"), help: None })?;
    driver::trace::TraceProgram::scoped_paths(paths, |program| {
        if program.diagnostics.iter().any(|d| d.severity == Severity::Error) {
            render_to_stderr(&program.sources, &program.diagnostics, color);
            return Ok(ExitCode::from(1));
        }
        if !program.has_function(&call.function) {
            let known = program.function_names();
            return Err(AppError {
                message: format!(
                    "`--call` names `{}`, which is no trace-only translation of these sources",
                    call.function
                ),
                help: Some(if known.is_empty() {
                    "the sources define no `@torch_op(..., trace_only=True)` function".into()
                } else {
                    format!("name one as `domain::name`: {}", known.join(", "))
                }),
            });
        }
        let variant = call.function.rsplit("::").next().unwrap_or_default().to_string();
        match program.specialize(&call, &variant) {
            Ok(f) => {
                write_stdout(emit::text::function_to_text(&f).as_bytes())?;
                Ok(ExitCode::SUCCESS)
            }
            Err(d) => {
                render_to_stderr(&program.sources, &[*d], color);
                Ok(ExitCode::from(1))
            }
        }
    })
    .map_err(|e| AppError { message: e.to_string(), help: None })?
}

/// `onnxsc decompile`.
fn decompile(request: &DecompileRequest, color: ColorMode) -> Result<ExitCode, AppError> {
    match driver::decompile::decompile(request).map_err(|e| AppError { message: e.message, help: e.help })? {
        DecompileOutcome::Written { functions, warnings } => {
            render_to_stderr(&onnxsc::source::SourceMap::new(), &warnings, color);
            let differ = match warnings.len() {
                0 => String::new(),
                n => format!(" ({})", plural(n, "warning")),
            };
            eprintln!(
                "onnxsc: decompiled {}{differ}; wrote {}",
                plural(functions, "function"),
                request.output.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        DecompileOutcome::Refused(d) => {
            render_to_stderr(&onnxsc::source::SourceMap::new(), &[*d], color);
            eprintln!("onnxsc: 1 error, nothing written");
            Ok(ExitCode::from(1))
        }
    }
}

/// `onnxsc explain CODE`.
fn explain(code: &str) -> Result<ExitCode, AppError> {
    match diagnostics::explain::explanation(code) {
        Some(text) => {
            write_stdout(text.as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        None => Err(AppError {
            message: format!("`{code}` is not an onnxsc diagnostic code"),
            help: Some(format!(
                "codes look like `E0601` or `W0501`; known codes: {}",
                diagnostics::explain::all_codes().collect::<Vec<_>>().join(", ")
            )),
        }),
    }
}

/// Writes the concatenation of `parts` to an output file: never over an input, atomically for a
/// regular file (see `driver::output`).
fn write_output(path: &Path, parts: &[&[u8]], inputs: &[PathBuf]) -> Result<(), AppError> {
    driver::output::write(path, parts, inputs).map_err(app_error)
}

fn app_error(e: driver::output::OutputError) -> AppError {
    AppError { message: e.message, help: e.help }
}
