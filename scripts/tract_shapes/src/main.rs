//! tract's shape inference on ONNX models, for `scripts/bench_inference.py --tract`.
//!
//!     tract_shapes [--repeat N] PATH...
//!
//! Each PATH is an `.onnx` file or a directory of them (taken in name order). For each model,
//! one JSON line on stdout:
//!
//!     {"path": ..., "outputs": [dims-or-null, ...], "error": null-or-string,
//!      "micros": analysis, "parse_micros": parse}
//!
//! `dims` lists the output's dimensions, each an integer or a string (a symbol, named by tract
//! after the model's `dim_param`s, or an expression of symbols); null when tract does not know
//! the whole shape (its rank, or any dimension). A model tract refuses (to parse or to
//! analyse, or by panicking) has `error` set and no outputs. `micros` is the median time of
//! `InferenceModel::analyse(false)` over `--repeat` runs (each on a fresh copy of the parsed
//! model), `parse_micros` the time of `model_for_path` (reading and translating the file).

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::Factoid;

/// What tract knows of one model's outputs.
struct Analysed {
    outputs: Vec<Value>,
    micros: u128,
    parse_micros: u128,
}

/// A dimension as JSON: its value when it is a number, else its expression (a symbol's name).
fn dim_json(d: &TDim) -> Value {
    match d.to_i64() {
        Ok(n) => json!(n),
        Err(_) => json!(d.to_string()),
    }
}

fn analyse(onnx: &tract_onnx::Onnx, path: &Path, repeat: usize) -> TractResult<Analysed> {
    let start = Instant::now();
    // The graph inputs' facts come from their declared types; dim_params become symbols.
    let parsed = onnx.model_for_path(path)?;
    let parse_micros = start.elapsed().as_micros();

    let mut times = Vec::with_capacity(repeat);
    let mut model = parsed.clone();
    for i in 0..repeat {
        if i > 0 {
            // Analysis refines the model's facts in place: each run starts from the parse.
            model = parsed.clone();
        }
        let start = Instant::now();
        model.analyse(false)?;
        times.push(start.elapsed().as_micros());
    }
    times.sort_unstable();

    let mut outputs = Vec::new();
    for &outlet in model.output_outlets()? {
        // `concretize` is None unless the rank and every dimension are known.
        let shape = model.outlet_fact(outlet)?.shape.concretize();
        outputs.push(match shape {
            Some(dims) => Value::Array(dims.iter().map(dim_json).collect()),
            None => Value::Null,
        });
    }
    Ok(Analysed { outputs, micros: times[times.len() / 2], parse_micros })
}

/// The `.onnx` files a path names: itself, or those in it when it is a directory.
fn models(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(path)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    found.retain(|p| p.extension().is_some_and(|e| e == "onnx"));
    found.sort();
    Ok(found)
}

fn main() {
    let mut repeat = 1;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--repeat" {
            repeat = args.next().and_then(|n| n.parse().ok()).filter(|&n| n > 0).unwrap_or_else(|| {
                eprintln!("--repeat takes a positive number");
                std::process::exit(2)
            });
        } else {
            paths.push(PathBuf::from(arg));
        }
    }
    if paths.is_empty() {
        eprintln!("usage: tract_shapes [--repeat N] PATH...  (.onnx files or directories of them)");
        std::process::exit(2);
    }

    // A panic is reported as that model's error: silence the default hook's message.
    panic::set_hook(Box::new(|_| {}));
    let onnx = tract_onnx::onnx();
    for path in paths.iter().flat_map(|p| {
        models(p).unwrap_or_else(|e| {
            eprintln!("{}: {e}", p.display());
            std::process::exit(1)
        })
    }) {
        let result = panic::catch_unwind(AssertUnwindSafe(|| analyse(&onnx, &path, repeat)));
        let line = match result {
            Ok(Ok(a)) => json!({
                "path": path.display().to_string(),
                "outputs": a.outputs,
                "error": null,
                "micros": a.micros,
                "parse_micros": a.parse_micros,
            }),
            Ok(Err(e)) => failed(&path, format!("{e:#}")),
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                failed(&path, format!("panic: {message}"))
            }
        };
        println!("{line}");
    }
}

/// The line of a model tract refused.
fn failed(path: &Path, error: String) -> Value {
    json!({
        "path": path.display().to_string(),
        "outputs": [],
        "error": error,
        "micros": null,
        "parse_micros": null,
    })
}
