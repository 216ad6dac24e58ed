//! The `onnxsc` command line: `check`, `build`.
//!
//! Exit codes: 0 clean (warnings allowed), 1 errors in the sources, 2 usage or I/O failure.

use clap::{Parser, Subcommand, ValueEnum};
use onnxsc::diagnostics::{render_to_stderr, ColorMode};
use onnxsc::driver::{self, Compilation};
use onnxsc::emit;
use prost::Message;
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
2 on a usage or I/O failure."
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

#[derive(Subcommand)]
enum Command {
    /// Check `.onnxs` files and report every problem, without writing anything.
    Check {
        /// `.onnxs` files, or directories searched recursively for them.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
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
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Emit {
    /// An ONNX model (protobuf) carrying the functions.
    Proto,
    /// ONNX textual syntax, as `onnx.parser.parse_function` reads it.
    Text,
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = match cli.color {
        Color::Auto => ColorMode::Auto,
        Color::Always => ColorMode::Always,
        Color::Never => ColorMode::Never,
    };
    let use_color = color.stderr_colored();
    let _ = miette::set_hook(Box::new(move |_| Box::new(miette::MietteHandlerOpts::new().color(use_color).build())));
    // Emission walks nested `If` graphs recursively: give it the compiler's large stack too.
    let worker = std::thread::Builder::new().stack_size(1 << 30).spawn(move || run(cli.command, color));
    let result = match worker {
        Ok(handle) => handle.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        Err(e) => Err(AppError { message: format!("cannot start the compiler thread: {e}"), help: None }),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{:?}", miette::Report::new(e));
            ExitCode::from(2)
        }
    }
}

fn compile(paths: &[PathBuf], color: ColorMode) -> Result<Compilation, AppError> {
    let c = driver::compile_paths(paths).map_err(|e| AppError { message: e.to_string(), help: None })?;
    render_to_stderr(&c.sources, &c.diagnostics, color);
    Ok(c)
}

fn summary(c: &Compilation) {
    let errors = c.diagnostics.iter().filter(|d| d.severity == onnxsc::diagnostics::Severity::Error).count();
    let warnings = c.diagnostics.len() - errors;
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if errors > 0 {
        eprintln!("onnxsc: {}, {}", plural(errors, "error"), plural(warnings, "warning"));
    } else {
        eprintln!(
            "onnxsc: {} in {} compiled, {}",
            plural(c.functions.len(), "function"),
            plural(c.sources.len(), "file"),
            if warnings == 0 { "no errors".to_string() } else { plural(warnings, "warning") }
        );
    }
}

fn run(command: Command, color: ColorMode) -> Result<ExitCode, AppError> {
    match command {
        Command::Check { paths } => {
            let c = compile(&paths, color)?;
            summary(&c);
            Ok(if c.has_errors() { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        Command::Build { paths, output, emit } => {
            if emit == Emit::Proto && output.is_none() {
                return Err(AppError {
                    message: "`build` needs an output file for `--emit proto`".into(),
                    help: Some("pass `-o library.onnx`, or `--emit text` to print the functions".into()),
                });
            }
            let c = compile(&paths, color)?;
            if c.has_errors() {
                summary(&c);
                return Ok(ExitCode::from(1));
            }
            let bytes = match emit {
                Emit::Proto => emit::proto::library_model(&c.functions).encode_to_vec(),
                Emit::Text => {
                    let protos: Vec<_> = c.functions.iter().map(emit::proto::function).collect();
                    emit::text::functions_to_text(&protos).into_bytes()
                }
            };
            match &output {
                Some(out) => write_atomically(out, &bytes)?,
                None => {
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(&bytes).and_then(|_| stdout.flush()).map_err(|e| AppError {
                        message: format!("cannot write to stdout: {e}"),
                        help: None,
                    })?;
                }
            }
            summary(&c);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes through a temporary file in the same directory, renamed into place: a reader never
/// sees a partial file, and a failure leaves any previous output untouched.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), AppError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| AppError { message: format!("cannot {what} {}: {e}", path.display()), help: None };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(AppError {
            message: format!("cannot write {}: directory {} does not exist", path.display(), dir.display()),
            help: Some("create the directory first".into()),
        });
    }
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| fail("write", &e))?;
    tmp.write_all(bytes).map_err(|e| fail("write", &e))?;
    tmp.as_file().sync_all().map_err(|e| fail("write", &e))?;
    tmp.persist(path).map_err(|e| fail("write", &e.error))?;
    Ok(())
}
