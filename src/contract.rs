//! The contracts every input must keep, as the fuzz targets (`fuzz/`) and the regression test
//! (`tests/fuzz_regressions.rs`) assert them. Each function takes arbitrary bytes and panics
//! when a contract is broken; a panic anywhere in onnxsc is a broken contract too.
//!
//! - [`source`]: one or more `.onnxs` modules through `check` and `build`;
//! - [`aten`]: a native_functions `func:` schema, or a schema YAML file;
//! - [`link`]: model or library bytes through `link`, in reference and inline mode;
//! - [`serve`]: the input of `onnxsc serve`, framed requests, against the tutorial's library;
//! - [`trace`]: a module of trace-only translations and one exporter call of them, specialised.
//!
//! The contracts: every diagnostic has a stable code with an explanation, and (for source
//! diagnostics) a primary label whose span lies inside its file; rendering them (human and JSON)
//! succeeds; a successful output passes onnx's structural rules ([`crate::validate`]) and
//! survives an encode/decode round trip, and `build` (which encodes each function as soon as it
//! is lowered) writes it as prost encodes it; and the same input gives the same output, byte for
//! byte, and the same diagnostics. `serve` answers each request as `link --mode inline` would,
//! in a response framed as the protocol says.

use crate::diagnostics::{self, Diagnostic};
use crate::driver::call::CallRequest;
use crate::driver::serve::{self, Ended, Server};
use crate::driver::{self, Compilation, SourceInput};
use crate::emit;
use crate::link;
use crate::proto::onnx::{FunctionProto, ModelProto};
use crate::source::SourceMap;
use prost::Message;
use std::sync::OnceLock;

/// Separates the modules of a multi-module input (`source`).
pub const MODULE_SEPARATOR: &str = "\n#---\n";
/// A directory that does not exist, so that a module import never finds a file on disk.
const NOWHERE: &str = "/nonexistent-onnxsc-fuzz";

/// `.onnxs` source: the bytes are split at [`MODULE_SEPARATOR`] into up to four modules,
/// `m0.onnxs`, `m1.onnxs`, ... (which may import each other), compiled together twice.
pub fn source(data: &[u8]) {
    let inputs = || -> Vec<SourceInput> {
        split(data, MODULE_SEPARATOR.as_bytes())
            .into_iter()
            .take(4)
            .enumerate()
            .map(|(i, bytes)| SourceInput { name: format!("{NOWHERE}/m{i}.onnxs"), bytes: bytes.to_vec() })
            .collect()
    };
    let first = driver::compile_embedded(&inputs());
    check_source_diagnostics(&first);
    let library = (!first.has_errors()).then(|| built(&first));
    // The second run as `build` runs it: each function encoded as soon as it is lowered.
    let options = driver::CompileOptions { keep: driver::Keep::Encoded, ..driver::CompileOptions::default() };
    let Ok(second) = driver::compile_inputs(&inputs(), &options) else { panic!("the default options read no files") };
    assert_eq!(first.diagnostics, second.diagnostics, "diagnostics differ between two runs");
    assert_eq!(first.outlines, second.outlines, "the functions compiled differ between two runs");
    if let Some((bytes, _)) = library {
        assert!(
            second.encoded_library().to_bytes() == bytes,
            "what `build` writes differs from the library model's encoding"
        );
    }
}

fn split<'a>(data: &'a [u8], separator: &[u8]) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(at) = rest.windows(separator.len()).position(|w| w == separator) {
        parts.push(&rest[..at]);
        rest = &rest[at + separator.len()..];
    }
    parts.push(rest);
    parts
}

/// Every diagnostic coded, explained and located inside its file; rendering them succeeds.
fn check_source_diagnostics(c: &Compilation) {
    for d in &c.diagnostics {
        check_code(d);
        assert!(d.file < c.sources.len(), "{}: no file {}", d.code, d.file);
        let len = c.sources.text(d.file).len();
        let primary = d.primary_span().unwrap_or_else(|| panic!("{} has no primary label: {}", d.code, d.message));
        for l in &d.labels {
            assert!(
                l.span.start <= l.span.end && l.span.end as usize <= len,
                "{}: label {} outside its file of {len} bytes ({})",
                d.code,
                l.span,
                d.message
            );
        }
        assert!(primary.end as usize <= len);
        let rendered = diagnostics::render_plain(&c.sources, d);
        assert!(rendered.contains(d.code), "{}: rendered without its code", d.code);
    }
    let json = diagnostics::json::to_json_lines(&c.sources, &c.diagnostics);
    assert_eq!(json.lines().count(), c.diagnostics.len());
}

fn check_code(d: &Diagnostic) {
    assert!(
        diagnostics::explain::explanation(d.code).is_some(),
        "diagnostic code {:?} has no explanation ({})",
        d.code,
        d.message
    );
    assert!(!d.message.is_empty(), "{}: empty message", d.code);
}

/// The library model and the text form of a clean compilation, checked; what `build` writes
/// (straight from the IR, `emit::wire`) must be that model's bytes as prost encodes them.
fn built(c: &Compilation) -> (Vec<u8>, String) {
    let model = emit::proto::library_model(&c.functions, c.library_meta());
    check_model(&model, "the built library");
    let bytes = model.encode_to_vec();
    assert!(
        emit::proto::library_bytes(&c.functions, c.library_meta()) == bytes,
        "the library `build` writes is not the library model's encoding"
    );
    let protos: Vec<FunctionProto> = c.functions.iter().map(emit::proto::function).collect();
    (bytes, emit::text::functions_to_text(&protos))
}

/// An output model: onnx's structural rules, and a lossless round trip through the wire format.
fn check_model(model: &ModelProto, what: &str) {
    let problems = crate::validate::model(model);
    assert!(problems.is_empty(), "{what} breaks onnx's rules: {problems:?}");
    let bytes = model.encode_to_vec();
    let back = ModelProto::decode(bytes.as_slice()).unwrap_or_else(|e| panic!("{what} does not decode: {e}"));
    assert_eq!(&back, model, "{what} changes in an encode/decode round trip");
}

/// PyTorch schemas: the first byte chooses a `func:` schema (even) or a YAML file (odd).
pub fn aten(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    if which % 2 == 0 {
        match crate::aten::parse_schema(text) {
            Ok(schema) => {
                let printed = schema.to_string();
                let again = crate::aten::parse_schema(&printed)
                    .unwrap_or_else(|e| panic!("`{printed}` (printed from `{text}`) does not parse: {}", e.message));
                assert_eq!(again, schema, "`{text}` does not survive printing as `{printed}`");
                assert_eq!(again.to_string(), printed);
            }
            Err(e) => {
                assert!(e.span.start <= e.span.end && e.span.end <= text.len(), "error span {:?} outside", e.span);
                assert!(text.is_char_boundary(e.span.start) && text.is_char_boundary(e.span.end));
            }
        }
    } else {
        match crate::aten::AtenRegistry::from_yaml(text) {
            Ok(registry) => {
                for s in registry.schemas() {
                    let printed = s.to_string();
                    let again =
                        crate::aten::parse_schema(&printed).unwrap_or_else(|e| panic!("{printed}: {}", e.message));
                    assert_eq!(&again, s);
                }
            }
            Err(errors) => {
                assert!(!errors.is_empty());
                for e in errors {
                    assert!(e.span.start <= e.span.end && e.span.end <= text.len(), "error span {:?} outside", e.span);
                }
            }
        }
    }
}

/// The library the `link` target links models against, and the model it links libraries into:
/// the tutorial's translations, and a model that calls each of them once.
fn fixtures() -> &'static (Vec<u8>, Vec<u8>) {
    static FIXTURES: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let text = include_str!("../examples/tutorial.onnxs");
        let c = driver::compile_sources(vec![("tutorial.onnxs".into(), text.into())]);
        assert!(!c.has_errors(), "the tutorial compiles");
        let library = emit::proto::library_model(&c.functions, c.library_meta());
        (library.encode_to_vec(), calling_model(&library).encode_to_vec())
    })
}

/// A model whose graph calls every function of `library` once, in a chain.
pub fn calling_model(library: &ModelProto) -> ModelProto {
    use crate::proto::onnx::*;
    let tensor = |name: &str| ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(TensorShapeProto::default()),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut nodes = Vec::new();
    let mut last = "x".to_string();
    for (i, f) in library.functions.iter().enumerate() {
        let out = format!("v{i}");
        let mut input = vec![last.clone()];
        input.resize(f.input.len().max(1), last.clone());
        nodes.push(NodeProto {
            name: Some(format!("call{i}")),
            op_type: f.name.clone(),
            domain: f.domain.clone(),
            input,
            output: vec![out.clone()],
            ..Default::default()
        });
        last = out;
    }
    let mut imports = vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(18) }];
    for f in &library.functions {
        if !imports.iter().any(|o| o.domain() == f.domain()) {
            imports.push(OperatorSetIdProto { domain: f.domain.clone(), version: Some(1) });
        }
    }
    ModelProto {
        ir_version: Some(10),
        graph: Some(GraphProto {
            name: Some("calls".into()),
            node: nodes,
            input: vec![tensor("x")],
            output: vec![tensor(&last)],
            ..Default::default()
        }),
        opset_import: imports,
        ..Default::default()
    }
}

/// `link`: the first byte chooses whether the rest is the model (even; linked against the
/// tutorial's library) or a library (odd; linked into a model calling the tutorial's
/// functions). Each is linked in reference and in inline mode, twice.
pub fn link(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else { return };
    let (library, model) = fixtures();
    let (model_bytes, library_bytes) = if which % 2 == 0 { (rest, &library[..]) } else { (&model[..], rest) };
    for mode in [link::Mode::Reference, link::Mode::Inline] {
        let once = link_once(model_bytes, library_bytes, mode);
        let again = link_once(model_bytes, library_bytes, mode);
        assert_eq!(once, again, "linking differs between two runs");
    }
}

/// The linked model's bytes, or the codes and messages of the diagnostics.
fn link_once(model: &[u8], library: &[u8], mode: link::Mode) -> Result<Vec<u8>, Vec<(String, String)>> {
    let summary = |ds: &[Diagnostic]| {
        for d in ds {
            check_code(d);
            // Link diagnostics have no source text, and render without one.
            assert!(diagnostics::render_plain(&SourceMap::new(), d).contains(d.code));
        }
        ds.iter().map(|d| (d.code.to_string(), d.message.clone())).collect::<Vec<_>>()
    };
    let m = link::load::model(model, "model.onnx").map_err(|d| summary(&[*d]))?;
    let l = link::load::library(library, "library.onnx").map_err(|d| summary(&[*d]))?;
    let options = link::LinkOptions { mode, override_model: false, max_nodes: 20_000 };
    let linked = link::link(m, vec![l], &options).map_err(|ds| summary(&ds))?;
    summary(&linked.diagnostics);
    check_model(&linked.model, "the linked model");
    Ok(linked.model.encode_to_vec())
}

/// `serve`: the bytes are the server's input after the handshake, framed requests (a length of 4
/// bytes, little endian, then a kind byte and a body), answered against the tutorial's library.
/// Every request gets one response, framed; a linked model is what `link --mode inline` makes of
/// a [`serve::kind::LINK`] request's model (or of the model of a [`serve::kind::CALL`]'s call), a refusal is text, and a model link accepts is
/// refused only for its external data; the input cut inside a request ends serving, with a
/// refusal; the same input gives the same output.
pub fn serve(data: &[u8]) {
    static SERVER: OnceLock<Server> = OnceLock::new();
    let server = SERVER.get_or_init(|| {
        let library = link::load::library(&fixtures().0, "library.onnx").unwrap_or_else(|d| panic!("{}", d.message));
        Server::new(link::Libraries::new(vec![library]), SourceMap::new())
    });
    let mut input = hello_frame();
    input.extend_from_slice(data);
    let run = || {
        let mut out = Vec::new();
        let ended =
            server.serve(&mut &input[..], &mut out).unwrap_or_else(|e| panic!("serving from memory failed: {e}"));
        (ended, out)
    };
    let (ended, out) = run();
    assert!(run() == (ended.clone(), out.clone()), "serving the same input twice differs");
    let (requests, cut) = frames(data);
    let (mut responses, response_cut) = frames(&out);
    assert!(!response_cut, "a response is cut short");
    assert_eq!(responses.first().map(|r| r.first()), Some(Some(&serve::LINKED)), "the handshake is answered");
    responses.remove(0);
    let responses = (responses, response_cut);
    assert_eq!(responses.0.len(), requests.len() + usize::from(cut), "one response per request");
    assert_eq!(matches!(ended, Ended::Cut(_)), cut, "serving ends as the input does");
    for (i, response) in responses.0.iter().enumerate() {
        let Some((&status, payload)) = response.split_first() else { panic!("response {i} has no status") };
        let Some(request) = requests.get(i) else {
            assert_eq!(status, serve::REFUSED, "the request cut short is refused");
            continue;
        };
        let fresh = || {
            let l = link::load::library(&fixtures().0, "library.onnx").map_err(|_| ())?;
            let m = match request.split_first() {
                Some((&serve::kind::LINK, model)) => link::load::model(model, "the request").map_err(|_| ())?,
                Some((&serve::kind::CALL, body)) => called_model(&l, body).ok_or(())?,
                _ => return Err(()),
            };
            let linked = link::link(m, vec![l], &serve::OPTIONS).map_err(|_| ())?;
            Ok::<_, ()>(linked.model)
        };
        match status {
            // A handshake again: the server's versions.
            serve::LINKED if request.first() == Some(&serve::kind::HELLO) => {}
            serve::LINKED => {
                let model = fresh().unwrap_or_else(|()| panic!("request {i}: linked by the server only"));
                check_model(&model, "the linked model");
                assert!(model.encode_to_vec() == payload, "request {i}: the server's model is not link's");
            }
            serve::REFUSED => {
                let text =
                    std::str::from_utf8(payload).unwrap_or_else(|e| panic!("request {i}: refusal not UTF-8: {e}"));
                assert!(text.contains("error"), "request {i}: the refusal names no error: {text}");
                if let Ok(model) = fresh() {
                    assert!(!link::external::locations(&model).is_empty(), "request {i}: refused, but link links it");
                }
            }
            other => panic!("request {i}: status {other}"),
        }
    }
}

/// The model of a [`serve::kind::CALL`] request's call, made from the library's function by
/// the request's own rules (`driver::call`); `None` when the request is not a call of it.
fn called_model(library: &link::Library, body: &[u8]) -> Option<ModelProto> {
    let call = CallRequest::from_json(&String::from_utf8_lossy(body)).ok()?;
    let (domain, name) = call.domain_and_name();
    let f = library.functions.iter().find(|f| {
        crate::schema::normalize_domain(f.domain()) == crate::schema::normalize_domain(domain)
            && f.name() == name
            && f.overload() == call.overload
    })?;
    call.model(f, &link::interface::CallSignature::of(f)).ok()
}

/// The framed handshake of this protocol.
fn hello_frame() -> Vec<u8> {
    let body = [&[serve::kind::HELLO][..], &serve::PROTOCOL.to_le_bytes(), b"contract"].concat();
    let mut framed = u32::try_from(body.len()).unwrap_or(0).to_le_bytes().to_vec();
    framed.extend(body);
    framed
}

/// The messages of a framed stream, and whether it ends inside one.
fn frames(mut data: &[u8]) -> (Vec<&[u8]>, bool) {
    let mut out = Vec::new();
    while !data.is_empty() {
        let Some((len, rest)) = data.split_first_chunk::<4>() else { return (out, true) };
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return (out, true);
        }
        out.push(&rest[..len]);
        data = &rest[len..];
    }
    (out, false)
}

/// Separates the module from the call in a [`trace`] input.
pub const CALL_SEPARATOR: &str = "\n#call\n";

/// `trace`: the bytes are a module, [`CALL_SEPARATOR`], and a call as JSON (the Python package's
/// form, `trace::CallFacts`). The module is compiled as the exporter's server compiles it and,
/// without errors, the call is specialised twice: the same function or the same diagnostic each
/// time (coded, explained, located inside the module), and a function that keeps onnx's
/// structural rules. The evaluator's limits bound the time and memory any input takes.
pub fn trace(data: &[u8]) {
    let parts = split(data, CALL_SEPARATOR.as_bytes());
    let (Some(module), Some(call)) = (parts.first(), parts.get(1)) else { return };
    let input = SourceInput { name: format!("{NOWHERE}/t.onnxs"), bytes: module.to_vec() };
    driver::trace::TraceProgram::scoped(&[input], |program| check_trace(program, call));
}

fn check_trace(program: &driver::trace::TraceProgram<'_>, call: &[u8]) {
    for d in &program.diagnostics {
        check_code(d);
    }
    if program.diagnostics.iter().any(|d| d.severity == diagnostics::Severity::Error) {
        return;
    }
    let Ok(call) =
        std::str::from_utf8(call).map_err(|_| ()).and_then(|c| crate::trace::CallFacts::from_json(c).map_err(|_| ()))
    else {
        return;
    };
    if !program.has_function(&call.function) {
        return;
    }
    let first = program.specialize(&call, "variant").map(|a| (a.function, a.returns));
    let again = program.specialize(&call, "variant").map(|a| (a.function, a.returns));
    assert!(first == again, "the same call specialises differently twice");
    match first.map(|(f, _)| f) {
        Ok(f) => {
            let problems = crate::validate::function(&f);
            assert!(problems.is_empty(), "the specialised function breaks onnx's rules: {problems:?}");
            let back = FunctionProto::decode(f.encode_to_vec().as_slice())
                .unwrap_or_else(|e| panic!("the specialised function does not decode: {e}"));
            assert_eq!(back, f, "the function changes in an encode/decode round trip");
        }
        Err(d) => {
            check_code(&d);
            let len = program.sources.text(d.file).len();
            let primary = d.primary_span().unwrap_or_else(|| panic!("{} has no primary label: {}", d.code, d.message));
            assert!(primary.start <= primary.end && primary.end as usize <= len, "{}: label outside its file", d.code);
            assert!(d.help.is_some(), "{} has no help: {}", d.code, d.message);
            diagnostics::render_plain(&program.sources, &d);
        }
    }
}
