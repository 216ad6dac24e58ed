//! `onnxsc serve LIB...`: the libraries loaded once (compiled or read as `link` loads them) and
//! indexed once (`link::Libraries`), then one inline link per request, on standard input and
//! output, until the input ends. A client that specialises many calls (the Python package, one
//! variant per distinct call of a translation) pays for a process, for reading the libraries
//! and for files once, not per call.
//!
//! Every message is a 4-byte little-endian length, then that many bytes. A request is a kind
//! byte, then its body:
//!
//! - [`kind::HELLO`]: the protocol version the client speaks (4 bytes, little-endian), then its
//!   own version as text. It must come first, as rust-analyzer's proc-macro clients ask their
//!   server's version first: a package and a binary of different versions then fail with a
//!   message that says so, not on a frame one of them misreads. Answered with [`LINKED`] and
//!   `{"protocol": N, "onnxsc": "VERSION"}`, or refused when the versions differ.
//! - [`kind::LINK`]: a serialized `ModelProto`, answered with that model linked in inline mode
//!   (what `onnxsc link --mode inline` writes for it).
//! - [`kind::TRACE`]: the JSON facts of one call of a trace-only translation (`trace::facts`),
//!   answered with the linked model of one call of the translation specialised to them.
//! - [`kind::CALL`]: the JSON of one call of a library function (`call::CallRequest`): the
//!   inputs it gives and its attributes, answered with the linked model of that call
//!   (`call::call_model`), whose graph is the function's body for it.
//!
//! A response is one status byte, then the payload: [`LINKED`] and the bytes, or [`REFUSED`]
//! and the diagnostics as UTF-8 text (as `link --color never` renders them). A request before
//! the handshake, of an unknown kind, not a model, or longer than a model may be, is a refusal
//! and the server goes on; a frame the input ends inside is refused, and ends the server.

use super::call::{self, call_model, CallRequest};
use super::link::{load_libraries, LinkIoError, LinkOutcome, Loaded};
use super::trace::TraceAnswer;
use super::traced_calls::TracedLibraries;
use super::{files, CompileOptions};
use crate::diagnostics::{codes, render_plain, Diagnostic};
use crate::link::shapes::CallTypes;
use crate::link::{self, Libraries, Mode};
use crate::onnx::metadata::recorded_source;
use crate::sema::value::GraphType;
use crate::source::SourceMap;
use crate::trace::{variant_name, ArgFact, CallFacts};
use prost::Message;
use std::io::{self, Read, Write};
use std::path::PathBuf;

/// The version of this protocol, which a client names in its [`kind::HELLO`]. Version 1 had no
/// handshake and no kinds (a model, or JSON facts told by their `{`); version 2 had no
/// [`kind::CALL`] (a client built the model of a call itself).
pub const PROTOCOL: u32 = 3;

/// The first byte of a request: what its body is.
pub mod kind {
    /// The handshake: the client's protocol version and its own version.
    pub const HELLO: u8 = 0;
    /// A model to link.
    pub const LINK: u8 = 1;
    /// The facts of a call of a trace-only translation.
    pub const TRACE: u8 = 2;
    /// A call of a library function: the inputs it gives and its attributes.
    pub const CALL: u8 = 3;
}

/// The status byte of a linked model (or of the answer to the handshake).
pub const LINKED: u8 = 0;
/// The status byte of diagnostics: the request cannot be linked.
pub const REFUSED: u8 = 1;

/// What the requests' diagnostics call the request model.
const REQUEST: &str = "the request";

/// How every request is linked: inline, as `link --mode inline` links with its defaults.
pub const OPTIONS: link::LinkOptions =
    link::LinkOptions { mode: Mode::Inline, override_model: false, max_nodes: link::DEFAULT_MAX_NODES };

/// The libraries, indexed, answering requests.
pub struct Server {
    libraries: Libraries,
    /// The compiled sources' files, which diagnostics may point into.
    sources: SourceMap,
    /// The libraries' trace-only translations.
    traced: TracedLibraries,
}

/// How starting a server ended.
pub enum Startup {
    /// Ready to serve; the warnings of the compiled sources, to report first.
    Ready { server: Server, compiled: Vec<Diagnostic> },
    /// The libraries cannot be linked against (source errors, a refused library), as `link`
    /// would report it.
    Failed(LinkOutcome),
}

/// A response: the status byte, then the payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u8,
    pub payload: Vec<u8>,
}

/// How serving ended without an I/O failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The input ended between requests.
    Closed,
    /// The input ended inside a request (answered with a refusal saying so).
    Cut(String),
}

impl Server {
    /// Loads `libs` as `link` does, and indexes their functions.
    pub fn start(libs: &[PathBuf], schemas: &CompileOptions) -> Result<Startup, LinkIoError> {
        Ok(match load_libraries(libs, schemas)? {
            Ok(Loaded { mut libraries, sources, compiled, .. }) => {
                let traced = TracedLibraries::take(&mut libraries);
                let server = Server { libraries: Libraries::new(libraries), sources, traced };
                Startup::Ready { server, compiled }
            }
            Err(outcome) => Startup::Failed(outcome),
        })
    }

    /// A server for libraries loaded already.
    pub fn new(libraries: Libraries, sources: SourceMap) -> Server {
        Server { libraries, sources, traced: TracedLibraries::default() }
    }

    /// The compiled sources' files, which the diagnostics of the libraries point into.
    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    /// The response to one request of a client that has greeted the server (its kind byte, then
    /// its body).
    pub fn respond(&self, request: &[u8]) -> Response {
        match request.split_first() {
            Some((&kind::LINK, model)) => self.respond_to_model(model),
            Some((&kind::TRACE, facts)) => self.respond_to_trace(facts),
            Some((&kind::CALL, call)) => self.respond_to_call(call),
            Some((&kind::HELLO, hello)) => hello_response(hello),
            Some((other, _)) => refusal(&format!(
                "error: the request's kind byte is {other}, which serve protocol {PROTOCOL} does not have\n"
            )),
            None => refusal("error: the request is empty: it has no kind byte\n"),
        }
    }

    /// A linked model for the model of a [`kind::LINK`] request.
    fn respond_to_model(&self, request: &[u8]) -> Response {
        let mut model = match link::load::model(request, REQUEST) {
            Ok(m) => m,
            Err(d) => return self.refused(&[*d]),
        };
        if let Some(location) = link::external::locations(&model).into_iter().next() {
            return self.refused(&[external_data(&location)]);
        }
        let mut traces = SourceMap::new();
        if let Err(diags) = self.traced.specialize_model_calls(&mut model, &mut traces) {
            return refused_in(&traces, &diags);
        }
        self.link(model)
    }

    /// A trace request: the call's facts as JSON (`trace::facts`), answered with the linked
    /// model of one call of the translation specialised to them.
    fn respond_to_trace(&self, request: &[u8]) -> Response {
        let text = String::from_utf8_lossy(request);
        let call = match CallFacts::from_json(&text) {
            Ok(call) => call,
            Err(why) => return refusal(&format!("error: the trace request is not a call: {why}\n")),
        };
        let variant = variant_name(call.domain_and_name().1, 0);
        match self.traced.specialize(&call, &variant) {
            Ok(TraceAnswer { function, returns }) => {
                let inputs: Vec<(String, ArgFact)> = function.input.iter().cloned().zip(call.tensors()).collect();
                let defined_at = recorded_source(&function.metadata_props).map(str::to_string);
                let mut model = call_model(&function, &function.input, Vec::new());
                model.functions.push(function);
                let mut linked = match self.linked(model) {
                    Ok(linked) => linked,
                    Err(refusal) => return refusal,
                };
                // The trace checked its own op calls; the linked body also holds the nodes of
                // the scripted functions the trace calls, which only a walk of it reaches.
                let types = CallTypes {
                    inputs: &inputs,
                    expect: call.expect.as_ref(),
                    function: call.domain_and_name().1,
                    defined_at: defined_at.as_deref(),
                };
                match link::shapes::check(&linked, &types) {
                    Ok(walked) => call::declare_outputs(&mut linked, &more_specific(returns, walked)),
                    Err(d) => return self.refused(&[*d]),
                }
                Response { status: LINKED, payload: linked.encode_to_vec() }
            }
            Err(failure) => {
                let mut traces = SourceMap::new();
                let d = failure.into_diagnostic(&mut traces);
                refused_in(&traces, &[d])
            }
        }
    }

    /// A call request: the JSON of a call of a library function, answered with the linked model
    /// of that one call.
    fn respond_to_call(&self, request: &[u8]) -> Response {
        let text = String::from_utf8_lossy(request);
        let call = match CallRequest::from_json(&text) {
            Ok(call) => call,
            Err(why) => return refusal(&format!("error: the call request is not a call: {why}\n")),
        };
        let (domain, name) = call.domain_and_name();
        let Some(def) = self.libraries.find(domain, name, &call.overload) else {
            return self.refused(&[call::unresolved(&call)]);
        };
        let model = match call.model(&def.proto, &def.signature) {
            Ok(model) => model,
            Err(d) => return self.refused(&[*d]),
        };
        let mut linked = match self.linked(model) {
            Ok(linked) => linked,
            Err(refusal) => return refusal,
        };
        if call.is_typed() {
            let types = CallTypes {
                inputs: &call.types,
                expect: call.expect.as_ref(),
                function: def.proto.name(),
                defined_at: recorded_source(&def.proto.metadata_props),
            };
            match link::shapes::check(&linked, &types) {
                Ok(returns) => call::declare_outputs(&mut linked, &returns),
                Err(d) => return self.refused(&[*d]),
            }
        }
        Response { status: LINKED, payload: linked.encode_to_vec() }
    }

    fn link(&self, model: crate::proto::onnx::ModelProto) -> Response {
        match self.linked(model) {
            Ok(linked) => Response { status: LINKED, payload: linked.encode_to_vec() },
            Err(refusal) => refusal,
        }
    }

    /// `model` linked in inline mode against the libraries, or the refusal that says why not.
    fn linked(&self, model: crate::proto::onnx::ModelProto) -> Result<crate::proto::onnx::ModelProto, Response> {
        link::link_against(model, &self.libraries, &OPTIONS).map(|l| l.model).map_err(|diags| self.refused(&diags))
    }

    fn refused(&self, diags: &[Diagnostic]) -> Response {
        refused_in(&self.sources, diags)
    }

    /// Answers the requests of `input` on `output` until `input` ends. An error is a failure to
    /// read or write, saying which.
    pub fn serve(&self, input: &mut impl Read, output: &mut impl Write) -> io::Result<Ended> {
        let reading = |e: io::Error| io::Error::new(e.kind(), format!("cannot read a request: {e}"));
        let writing = |e: io::Error| io::Error::new(e.kind(), format!("cannot write a response: {e}"));
        let mut greeted = false;
        loop {
            let response = match read_frame(input).map_err(reading)? {
                Frame::End => return Ok(Ended::Closed),
                Frame::Request(bytes) if greeted => self.respond(&bytes),
                Frame::Request(bytes) => {
                    let response = first_response(&bytes);
                    greeted = response.status == LINKED;
                    response
                }
                Frame::TooLarge(len) => refusal(&format!(
                    "error: the request is {len} bytes, more than the {} a model may be\n",
                    files::MAX_MODEL_BYTES
                )),
                Frame::Cut(why) => {
                    write_response(output, &refusal(&format!("error: {why}\n"))).map_err(writing)?;
                    return Ok(Ended::Cut(why));
                }
            };
            write_response(output, &response).map_err(writing)?;
        }
    }
}

/// Why a client and this server disagree on the protocol, and what to do.
const OTHER_RELEASES: &str = "the onnxsc Python package and the onnxsc binary are of different versions\n\
     help: install the package and the binary of one release (`pip install onnxsc` installs both; \
     ONNXSC_BIN may point at another binary)\n";

/// The response to a client's first request, which must be a [`kind::HELLO`] of this protocol.
/// Output by output, the trace's type where it knows the shape, else the walk's.
fn more_specific(traced: Vec<GraphType>, walked: Vec<GraphType>) -> Vec<GraphType> {
    let knows = |t: &GraphType| matches!(t, GraphType::Tensor { shape: Some(_), .. });
    let mut walked = walked.into_iter();
    traced
        .into_iter()
        .map(|t| match walked.next() {
            Some(w) if !knows(&t) && knows(&w) => w,
            _ => t,
        })
        .collect()
}

fn first_response(request: &[u8]) -> Response {
    match request.split_first() {
        Some((&kind::HELLO, hello)) => hello_response(hello),
        _ => refusal(&format!(
            "error: the client did not begin with the handshake of serve protocol {PROTOCOL}, which onnxsc {} speaks: \
             {OTHER_RELEASES}",
            env!("CARGO_PKG_VERSION")
        )),
    }
}

/// The answer to a handshake: this server's versions, or a refusal naming both protocols.
fn hello_response(hello: &[u8]) -> Response {
    let Some((version, client)) = hello.split_first_chunk::<4>() else {
        return refusal("error: the handshake is shorter than its 4-byte protocol version\n");
    };
    let version = u32::from_le_bytes(*version);
    let client = String::from_utf8_lossy(client);
    if version != PROTOCOL {
        return refusal(&format!(
            "error: the client ({client}) speaks serve protocol {version}, and onnxsc {} speaks {PROTOCOL}: \
             {OTHER_RELEASES}",
            env!("CARGO_PKG_VERSION")
        ));
    }
    let answer = serde_json::json!({ "protocol": PROTOCOL, "onnxsc": env!("CARGO_PKG_VERSION") });
    Response { status: LINKED, payload: answer.to_string().into_bytes() }
}

/// E0802 for a request that keeps tensors in external data: there is no directory to find
/// them in.
fn external_data(location: &str) -> Diagnostic {
    Diagnostic::error(
        codes::INVALID_MODEL,
        0,
        format!("{REQUEST} keeps tensors in external data (`{location}`), which a request cannot carry"),
    )
    .help("send the tensors in the model, or link the model file with `onnxsc link`, which finds the data beside it")
}

fn refused_in(sources: &SourceMap, diags: &[Diagnostic]) -> Response {
    let text: String = diags.iter().map(|d| render_plain(sources, d)).collect();
    Response { status: REFUSED, payload: text.into_bytes() }
}

fn refusal(text: &str) -> Response {
    Response { status: REFUSED, payload: text.as_bytes().to_vec() }
}

/// One message of the input.
enum Frame {
    Request(Vec<u8>),
    /// Longer than a model may be: its bytes were read and dropped.
    TooLarge(u64),
    /// The input ended where a message was expected.
    End,
    /// The input ended inside a message: why, in words.
    Cut(String),
}

fn read_frame(input: &mut impl Read) -> io::Result<Frame> {
    let mut header = [0u8; 4];
    let got = read_full(input, &mut header)?;
    if got == 0 {
        return Ok(Frame::End);
    }
    if got < header.len() {
        return Ok(Frame::Cut(format!("the input ended inside a request's length ({got} of its 4 bytes)")));
    }
    let len = u64::from(u32::from_le_bytes(header));
    let cut =
        |came: u64| Frame::Cut(format!("the input ended inside a request: its length says {len} bytes, {came} came"));
    if len > files::MAX_MODEL_BYTES {
        let came = io::copy(&mut input.take(len), &mut io::sink())?;
        return Ok(if came < len { cut(came) } else { Frame::TooLarge(len) });
    }
    // Grown as the bytes come, so that a length the input does not keep costs nothing.
    let mut bytes = Vec::new();
    input.take(len).read_to_end(&mut bytes)?;
    Ok(if (bytes.len() as u64) < len { cut(bytes.len() as u64) } else { Frame::Request(bytes) })
}

/// Reads until `buf` is full or the input ends: how many bytes came.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// One message: the length, the status byte and the payload, in one write.
fn write_response(output: &mut impl Write, response: &Response) -> io::Result<()> {
    let Ok(len) = u32::try_from(response.payload.len() + 1) else {
        return write_response(
            output,
            &refusal("error: the linked model is larger than a response can carry (4 GiB)\n"),
        );
    };
    let mut message = Vec::with_capacity(response.payload.len() + 5);
    message.extend_from_slice(&len.to_le_bytes());
    message.push(response.status);
    message.extend_from_slice(&response.payload);
    output.write_all(&message)?;
    output.flush()
}
