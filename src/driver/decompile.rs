//! The `decompile` command's pipeline: what to decompile (a model's or library's functions, its
//! main graph, or an ONNX operator's function body), `decompile::module`, then the output
//! written atomically. A usage or I/O problem is a [`DecompileError`] (exit status 2); a model
//! that does not decode or a function `.onnxs` cannot write is a diagnostic (exit status 1).

use super::files::{self, Kind};
use super::output;
use crate::decompile;
use crate::diagnostics::{codes, Diagnostic};
use crate::proto::onnx::{AttributeProto, FunctionProto, ModelProto};
use crate::schema::{bodies, registry, AttrDefault, Resolution};
use prost::Message;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// What to decompile, and where to write it.
pub struct DecompileRequest<'a> {
    pub source: Source<'a>,
    pub output: &'a Path,
}

/// Where the functions come from.
pub enum Source<'a> {
    /// A model or library file; `function` selects one of its functions (with those it calls)
    /// or its main graph by name.
    File { path: &'a Path, function: Option<&'a str> },
    /// An ONNX operator's function body at an opset.
    Operator { name: &'a str, opset: i64 },
}

#[derive(Debug)]
pub struct DecompileError {
    pub message: String,
    pub help: Option<String>,
}

fn usage(message: impl Into<String>, help: impl Into<String>) -> DecompileError {
    DecompileError { message: message.into(), help: Some(help.into()) }
}

/// What a decompilation did.
pub enum DecompileOutcome {
    /// The module was written; it holds this many functions. `warnings` says which of them do
    /// not compile back the same (W1101).
    Written { functions: usize, warnings: Vec<Diagnostic> },
    /// Nothing was written.
    Refused(Box<Diagnostic>),
}

/// Runs one decompilation.
pub fn decompile(request: &DecompileRequest) -> Result<DecompileOutcome, DecompileError> {
    let io = |e: output::OutputError| DecompileError { message: e.message, help: e.help };
    output::check_dir(request.output).map_err(io)?;
    if let Source::File { path, .. } = request.source {
        output::refuse_inputs(request.output, &[path.to_path_buf()]).map_err(io)?;
    }
    let (functions, imports, origin, inputs) = match request.source {
        Source::File { path, function } => {
            let bytes = files::read(path, Kind::Model).map_err(|e| DecompileError {
                message: format!("cannot read {}: {}", path.display(), e.message),
                help: None,
            })?;
            let model = match decode(&bytes, &path.display().to_string()) {
                Ok(m) => m,
                Err(d) => return Ok(DecompileOutcome::Refused(d)),
            };
            let functions = match select(&model, function, path) {
                Ok(Ok(f)) => f,
                Ok(Err(d)) => return Ok(DecompileOutcome::Refused(d)),
                Err(e) => return Err(e),
            };
            let origin = match function {
                Some(name) => format!("Decompiled by onnxsc from `{name}` of {}.", file_name(path)),
                None => format!("Decompiled by onnxsc from {}.", file_name(path)),
            };
            (functions, model.opset_import, origin, vec![path.to_path_buf()])
        }
        Source::Operator { name, opset } => {
            let (f, origin) = operator(name, opset)?;
            (vec![f], Vec::new(), origin, Vec::new())
        }
    };
    let text = match decompile::module(&functions, &imports, &origin) {
        Ok(t) => t,
        Err(d) => return Ok(DecompileOutcome::Refused(d)),
    };
    output::write(request.output, &[text.as_bytes()], &inputs)
        .map_err(|e| DecompileError { message: e.message, help: e.help })?;
    let warnings = verify(&functions, &text, &file_name(request.output));
    Ok(DecompileOutcome::Written { functions: functions.len(), warnings })
}

/// Compiles the written module and compares each function with the one it came from, names
/// aside: W1101 for each that does not come back the same (docs/decompile.md says what
/// cannot), or once when the module does not compile.
fn verify(functions: &[FunctionProto], text: &str, name: &str) -> Vec<Diagnostic> {
    let warn = |message: String, help: &str| Diagnostic::warning(codes::DECOMPILED_DIFFERS, 0, message).help(help);
    let c = super::compile_sources(vec![(name.to_string(), text.to_string())]);
    let errors = c.diagnostics.iter().filter(|d| d.severity == crate::diagnostics::Severity::Error).count();
    if errors > 0 {
        return vec![warn(
            format!(
                "{name} was written, but it does not compile: {errors} error{}",
                if errors == 1 { "" } else { "s" }
            ),
            "`onnxsc check` on it shows them; please report the function that decompiles so",
        )];
    }
    let compiled: Vec<FunctionProto> = c.functions.iter().map(crate::emit::proto::function).collect();
    if compiled.len() != functions.len() {
        return vec![warn(
            format!("{name} compiles to {} functions, not {}", compiled.len(), functions.len()),
            "please report the model that decompiles so",
        )];
    }
    let mut out = Vec::new();
    for (f, g) in functions.iter().zip(&compiled) {
        if let Some(why) = decompile::compare::difference(f, g) {
            out.push(warn(
                format!("the function `{}` does not compile back the same: {why}", f.name()),
                "docs/decompile.md lists what cannot come back exactly; the written function may still compute the same",
            ));
        }
    }
    out
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// The model, decoded within the limits `link` keeps (E0808), or E0802.
fn decode(bytes: &[u8], name: &str) -> Result<ModelProto, Box<Diagnostic>> {
    crate::link::load::check_decode_size(bytes, name)?;
    ModelProto::decode(bytes).map_err(|e| {
        Box::new(
            Diagnostic::error(codes::INVALID_MODEL, 0, format!("{name} is not a usable ONNX model: {e}"))
                .help("the file may be truncated or corrupt, or not an ONNX model at all"),
        )
    })
}

/// The functions to write: all of the model's (and its main graph when it has nodes), or the
/// one named with the functions it calls, transitively.
fn select(
    model: &ModelProto,
    function: Option<&str>,
    path: &Path,
) -> Result<Result<Vec<FunctionProto>, Box<Diagnostic>>, DecompileError> {
    let graph = model.graph.as_ref().filter(|g| !g.node.is_empty());
    let graph_name = graph.map(|g| g.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "main_graph".into()));
    let graph_function = || graph.map(|g| decompile::graph_function(g, &model.opset_import)).transpose();
    let Some(name) = function else {
        let mut all = model.functions.clone();
        match graph_function() {
            Ok(g) => all.extend(g),
            Err(d) => return Ok(Err(d)),
        }
        if all.is_empty() {
            let traced =
                model.metadata_props.iter().any(|e| e.key.as_deref() == Some(crate::onnx::metadata::TRACE_KEY));
            return Err(usage(
                format!("{} has no function and no graph nodes to decompile", path.display()),
                if traced {
                    "its trace-only translations have no FunctionProto: the library carries their sources whole (its `onnxsc.trace` record)"
                } else {
                    "pass a model, or a library that `onnxsc build` wrote"
                },
            ));
        }
        return Ok(Ok(all));
    };
    let by_key: HashMap<(&str, &str), &FunctionProto> =
        model.functions.iter().map(|f| ((crate::schema::normalize_domain(f.domain()), f.name()), f)).collect();
    let roots: Vec<FunctionProto> =
        match model.functions.iter().filter(|f| f.name() == name).cloned().collect::<Vec<_>>() {
            found if !found.is_empty() => found,
            _ if graph_name.as_deref() == Some(name) => match graph_function() {
                Ok(g) => g.into_iter().collect(),
                Err(d) => return Ok(Err(d)),
            },
            _ => {
                let mut known: Vec<&str> = model.functions.iter().map(FunctionProto::name).collect();
                known.extend(graph_name.as_deref());
                let help = if known.is_empty() {
                    "it has no functions and no graph nodes".to_string()
                } else {
                    let hint = crate::diagnostics::suggest::did_you_mean(name, known.iter().copied());
                    let hint = hint.map(|h| format!("did you mean `{h}`? ")).unwrap_or_default();
                    format!("{hint}name one of: {}", known.join(", "))
                };
                return Err(usage(format!("{} has no function or graph named `{name}`", path.display()), help));
            }
        };
    Ok(Ok(with_callees(roots, &by_key)))
}

/// `roots` then every model function they call, transitively, each once.
fn with_callees(roots: Vec<FunctionProto>, by_key: &HashMap<(&str, &str), &FunctionProto>) -> Vec<FunctionProto> {
    let mut seen: HashSet<(String, String)> =
        roots.iter().map(|f| (crate::schema::normalize_domain(f.domain()).to_string(), f.name().to_string())).collect();
    let mut out = roots;
    let mut i = 0;
    while i < out.len() {
        let mut called = Vec::new();
        each_call(&out[i].node, &mut |domain, name| {
            if let Some(f) = by_key.get(&(domain, name)) {
                if seen.insert((domain.to_string(), name.to_string())) {
                    called.push((*f).clone());
                }
            }
        });
        out.extend(called);
        i += 1;
    }
    out
}

fn each_call(nodes: &[crate::proto::onnx::NodeProto], f: &mut dyn FnMut(&str, &str)) {
    for n in nodes {
        f(crate::schema::normalize_domain(n.domain()), n.op_type());
        for a in &n.attribute {
            for g in a.g.iter().chain(&a.graphs) {
                each_call(&g.node, f);
            }
        }
    }
}

/// An ONNX operator's body as a function named after the operator, its attributes with the
/// schema's defaults as defaults.
fn operator(name: &str, opset: i64) -> Result<(FunctionProto, String), DecompileError> {
    let body = bodies::function_body("", name, opset).map_err(|why| no_body(name, opset, why))?;
    let mut f = body.function;
    f.name = Some(name.to_string());
    f.domain = Some(String::new());
    if let Resolution::Found(schema) = registry().resolve("", name, opset) {
        let mut without = Vec::new();
        for attr in std::mem::take(&mut f.attribute) {
            match schema.attribute(&attr).and_then(|a| a.default.as_ref()).and_then(|d| default_proto(&attr, d)) {
                Some(p) => f.attribute_proto.push(p),
                None => without.push(attr),
            }
        }
        f.attribute = without;
    }
    let mut origin = format!(
        "Decompiled by onnxsc from the function body of ONNX's {name}-{} at opset {} (onnx {}).",
        body.since_version,
        body.opset,
        bodies::onnx_version()
    );
    if let Some(types) = &body.built_for {
        origin.push_str(&format!(
            "\nonnx builds this body per call; this one is for inputs of {},\n\
             with every attribute at its default, built in: the attribute parameters are not read.",
            types.join(", ")
        ));
    }
    Ok((f, origin))
}

/// A schema default as the `attribute_proto` entry a function declares it with.
fn default_proto(name: &str, d: &AttrDefault) -> Option<AttributeProto> {
    use crate::onnx::AttrType;
    let mut p = AttributeProto { name: Some(name.to_string()), ..Default::default() };
    #[allow(clippy::cast_possible_truncation, reason = "schema float defaults are float32 values written as doubles")]
    let ty = match d {
        AttrDefault::Float(v) => {
            p.f = Some(*v as f32);
            AttrType::Float
        }
        AttrDefault::Int(v) => {
            p.i = Some(*v);
            AttrType::Int
        }
        AttrDefault::String(s) => {
            p.s = Some(s.clone().into_bytes());
            AttrType::String
        }
        AttrDefault::Floats(v) => {
            p.floats = v.iter().map(|x| *x as f32).collect();
            AttrType::Floats
        }
        AttrDefault::Ints(v) => {
            p.ints.clone_from(v);
            AttrType::Ints
        }
        AttrDefault::Strings(v) => {
            p.strings = v.iter().map(|s| s.clone().into_bytes()).collect();
            AttrType::Strings
        }
        AttrDefault::Other => return None,
    };
    p.r#type = Some(ty.proto_code());
    Some(p)
}

fn no_body(name: &str, opset: i64, why: bodies::NoBody) -> DecompileError {
    let listed = || {
        let ops: Vec<String> = bodies::operators().into_iter().filter(|(d, _)| d.is_empty()).map(|(_, n)| n).collect();
        format!("the ONNX operators with a function body: {}", ops.join(", "))
    };
    match why {
        bodies::NoBody::Unknown => {
            let hint = crate::diagnostics::suggest::did_you_mean(name, bodies::operators().iter().map(|(_, n)| n.as_str()));
            usage(format!("ONNX has no operator `{name}`"), hint.map_or_else(listed, |h| format!("did you mean `{h}`?")))
        }
        bodies::NoBody::NotYet { first_version } => usage(
            format!("ONNX's `{name}` does not exist at opset {opset}"),
            format!("it exists from opset {first_version} on: pass `--opset {first_version}` or later"),
        ),
        bodies::NoBody::NoFunction { since_version, with_bodies } if with_bodies.is_empty() => usage(
            format!("ONNX's {name}-{since_version} (in force at opset {opset}) has no function body: it is a primitive operator"),
            listed(),
        ),
        bodies::NoBody::NoFunction { since_version, with_bodies } => usage(
            format!("ONNX's {name}-{since_version} (in force at opset {opset}) has no function body"),
            format!("{name} has one at opsets {}", with_bodies.join(", ")),
        ),
        bodies::NoBody::LeftOut { why } => usage(
            format!("ONNX builds the body of {name} at opset {opset} per call, and onnxsc does not embed it: {why}"),
            "decompile a model that calls it instead (its function, or its graph once inlined by onnx)",
        ),
        bodies::NoBody::Corrupt(why) => usage(
            format!("the embedded function bodies do not read: {why}"),
            "regenerate them with scripts/regenerate and build onnxsc again",
        ),
    }
}
