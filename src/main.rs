//! The `onnxsc` command line: `check`, `build`, `link`, `serve`, `schema`, `trace`, `decompile`,
//! `explain`, `lsp`.
//!
//! Exit codes: 0 clean (warnings allowed), 1 errors in the sources, 2 usage or I/O failure.

mod args;

use args::{Cli, Color, Command, Emit, Format, LinkMode};
use clap::Parser;
use onnxsc::aten::schema_query;
use onnxsc::diagnostics::{self, render_to_stderr, ColorMode, Severity};
use onnxsc::driver::decompile::{DecompileOutcome, DecompileRequest, Source};
use onnxsc::driver::link::{LinkOutcome, LinkRequest};
use onnxsc::driver::serve::{Ended, Server, Startup};
use onnxsc::driver::summary::plural;
use onnxsc::driver::trace::TraceAnswerError;
use onnxsc::driver::{self, Compilation, CompileOptions, Keep};
use onnxsc::emit;
use onnxsc::link;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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

fn compile(paths: &[PathBuf], options: &CompileOptions) -> Result<Compilation, AppError> {
    driver::compile_paths(paths, options).map_err(|e| AppError { message: e.to_string(), help: None })
}

fn summary(c: &Compilation) {
    // Standard error is unbuffered: one write, not one per piece of the format.
    eprint!("{}", driver::summary::compilation(c));
}

fn run(command: Command, color: ColorMode) -> Result<ExitCode, AppError> {
    match command {
        Command::Check { paths, format, deny_warnings, fix, diff, schemas } if fix || diff => {
            let options = CompileOptions { keep: Keep::Outline, ..schemas.options() };
            check_fix(&paths, &options, format, deny_warnings, diff, color)
        }
        Command::Check { paths, format, deny_warnings, schemas, .. } => {
            let options = CompileOptions { keep: Keep::Outline, deny_warnings, ..schemas.options() };
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
                link: &link::LinkOptions { mode, override_model, max_nodes },
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
            let c = compile(&paths, &CompileOptions { keep, deny_warnings, skip_invalid, ..schemas.options() })?;
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
    let (library, text);
    let parts: Vec<&[u8]> = match emit {
        Emit::Proto => {
            library = c.encoded_library();
            library.parts()
        }
        Emit::Text => {
            let protos: Vec<_> = c.functions.iter().map(emit::proto::function).collect();
            text = emit::text::functions_to_text(&protos).into_bytes();
            vec![text.as_slice()]
        }
    };
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

/// `check --fix` and `check --diff`.
fn check_fix(
    paths: &[PathBuf],
    options: &CompileOptions,
    format: Format,
    deny_warnings: bool,
    diff_only: bool,
    color: ColorMode,
) -> Result<ExitCode, AppError> {
    let mut outcome =
        driver::fix::fix_paths(paths, options).map_err(|e| AppError { message: e.to_string(), help: None })?;
    if diff_only {
        write_stdout(driver::fix::unified_diff(&outcome).as_bytes())?;
    } else {
        driver::fix::write_fixed(&outcome).map_err(|e| AppError { message: e.message, help: e.help })?;
    }
    if deny_warnings {
        driver::deny_warnings(&mut outcome.compilation.diagnostics);
    }
    let c = &outcome.compilation;
    // With `--diff`, what remains is what the unchanged files would still report once fixed.
    report(c, format, color)?;
    eprint!("{}", driver::summary::fixes(&outcome, diff_only));
    let failed = c.has_errors() || (diff_only && !outcome.changed.is_empty());
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The diagnostics, as `--format` says.
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
fn serve(libs: &[PathBuf], options: &CompileOptions, color: ColorMode) -> Result<ExitCode, AppError> {
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
fn schema(qualname: &str, options: &CompileOptions, color: ColorMode) -> Result<ExitCode, AppError> {
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
        match program.answer(&call) {
            Ok(answer) => {
                write_stdout(answer.to_text().as_bytes())?;
                Ok(ExitCode::SUCCESS)
            }
            Err(TraceAnswerError::Failed(d)) => {
                render_to_stderr(&program.sources, &[*d], color);
                Ok(ExitCode::from(1))
            }
            Err(unknown) => Err(AppError { message: unknown.to_string(), help: unknown.help() }),
        }
    })
    .map_err(|e| AppError { message: e.to_string(), help: None })?
}

/// `onnxsc decompile`.
fn decompile(request: &DecompileRequest, color: ColorMode) -> Result<ExitCode, AppError> {
    match driver::decompile::decompile(request).map_err(|e| AppError { message: e.message, help: e.help })? {
        DecompileOutcome::Written { functions, warnings } => {
            render_to_stderr(&onnxsc::source::SourceMap::new(), &warnings, color);
            eprint!("{}", driver::summary::decompiled(functions, warnings.len(), request.output));
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
