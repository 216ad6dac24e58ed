//! Calls of trace-only translations, for `link` and `serve`. A library records its trace-only
//! translations with the sources that run them (`onnxsc.trace`); a call of one is specialised
//! before linking: the call's facts (its attributes, which inputs it gives, and their element
//! types and shapes as the model declares them) run the translation ([`TraceProgram`]), and
//! the call becomes a call of the function that gives, added to the model. Each library's
//! program is compiled the first time one of its translations is called.

use super::trace::{TraceAnswer, TraceProgram};
use crate::diagnostics::{codes, Diagnostic};
use crate::link::shapes::declared_fact;
use crate::link::walk;
use crate::link::Library;
use crate::onnx::metadata::{AttributeRecord, TraceRecord, TracedFunctionRecord};
use crate::onnx::{AttrKind, ElemType};
use crate::proto::onnx::{
    attribute_proto::AttributeType, AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
};
use crate::schema::normalize_domain;
use crate::sema::value::{Dim, PyValue};
use crate::source::SourceMap;
use crate::trace::{variant_name, ArgFact, CallFacts, CallKey};
use std::collections::HashMap;
use std::sync::OnceLock;

/// The trace-only translations of the libraries of a link or a server.
#[derive(Default)]
pub struct TracedLibraries {
    entries: Vec<Entry>,
}

struct Entry {
    record: TraceRecord,
    program: OnceLock<TraceProgram<'static>>,
}

/// A trace that failed: the diagnostic, located in the program's sources.
pub struct TraceFailure<'p> {
    pub diagnostic: Box<Diagnostic>,
    pub sources: Option<&'p SourceMap>,
}

impl TraceFailure<'_> {
    /// The diagnostic, its file added to `sources` so that it renders there.
    pub fn into_diagnostic(self, sources: &mut SourceMap) -> Diagnostic {
        let mut d = *self.diagnostic;
        if let Some(from) = self.sources.filter(|s| d.file < s.len() && !d.labels.is_empty()) {
            d.file = sources.add(from.name(d.file), from.text(d.file));
        } else {
            d.labels.clear();
        }
        d
    }
}

impl TracedLibraries {
    /// The trace-only translations the libraries record, taken out of them.
    pub fn take(libraries: &mut [Library]) -> TracedLibraries {
        let entries = libraries
            .iter_mut()
            .filter_map(|l| l.traced.take())
            .map(|record| Entry { record, program: OnceLock::new() })
            .collect();
        TracedLibraries { entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The library recording the trace-only translation `domain::name`, and its record of it.
    fn find(&self, domain: &str, name: &str) -> Option<(&Entry, &TracedFunctionRecord)> {
        let domain = normalize_domain(domain);
        self.entries.iter().find_map(|e| {
            let f = e.record.functions.iter().find(|f| normalize_domain(&f.domain) == domain && f.name == name)?;
            Some((e, f))
        })
    }

    /// The function `call` names, specialised to its facts and named `variant`, with what the
    /// trace inferred of each output.
    pub fn specialize(&self, call: &CallFacts, variant: &str) -> Result<TraceAnswer, TraceFailure<'_>> {
        let (domain, name) = call.domain_and_name();
        let Some((entry, _)) = self.find(domain, name) else {
            return Err(TraceFailure {
                diagnostic: Box::new(Diagnostic::error(
                    codes::TRACE_ERROR,
                    0,
                    format!("no library records a trace-only translation `{}`", call.function),
                )),
                sources: None,
            });
        };
        let program = entry.program.get_or_init(|| TraceProgram::from_record(&entry.record));
        program.specialize(call, variant).map_err(|d| TraceFailure { diagnostic: d, sources: Some(&program.sources) })
    }

    /// Replaces each call of a trace-only translation in the model's graph (and the graphs
    /// nested in it) by a call of its specialisation to that call's facts, added to the model's
    /// functions; equal facts share one. The diagnostics of the calls that cannot be
    /// specialised, with their sources added to `sources`.
    pub fn specialize_model_calls(
        &self,
        model: &mut ModelProto,
        sources: &mut SourceMap,
    ) -> Result<(), Vec<Diagnostic>> {
        if self.is_empty() {
            return Ok(());
        }
        let Some(mut graph) = model.graph.take() else { return Ok(()) };
        let mut made = Made::default();
        let mut diags = Vec::new();
        self.specialize_graph(&mut graph, &HashMap::new(), &mut made, sources, &mut diags);
        model.graph = Some(graph);
        for f in made.functions {
            for import in &f.opset_import {
                let domain = import.domain.clone().unwrap_or_default();
                if !model.opset_import.iter().any(|o| o.domain.clone().unwrap_or_default() == domain) {
                    model.opset_import.push(OperatorSetIdProto { domain: Some(domain), version: import.version });
                }
            }
            model.functions.push(f);
        }
        if diags.is_empty() {
            Ok(())
        } else {
            Err(diags)
        }
    }

    fn specialize_graph(
        &self,
        graph: &mut GraphProto,
        outer: &HashMap<String, ArgFact>,
        made: &mut Made,
        sources: &mut SourceMap,
        diags: &mut Vec<Diagnostic>,
    ) {
        let mut types = outer.clone();
        let infos = graph.input.iter().chain(&graph.value_info).chain(&graph.output);
        for v in infos {
            if let Some(name) = &v.name {
                types.insert(name.clone(), declared_fact(v.r#type.as_ref()));
            }
        }
        for t in &graph.initializer {
            let elem = t.data_type.and_then(|c| ElemType::from_code(i64::from(c)));
            let shape = Some(t.dims.iter().map(|d| Dim::Known(*d)).collect());
            types.insert(t.name.clone().unwrap_or_default(), ArgFact::Tensor { elem, shape, sequence: false });
        }
        for node in &mut graph.node {
            for g in walk::subgraphs_mut(node) {
                self.specialize_graph(g, &types, made, sources, diags);
            }
            let domain = node.domain.clone().unwrap_or_default();
            let op_type = node.op_type.clone().unwrap_or_default();
            let Some((_, record)) = self.find(&domain, &op_type) else { continue };
            match self.specialize_node(node, record, &types, made) {
                Ok(()) => {}
                Err(failure) => diags.push(failure.into_diagnostic(sources)),
            }
        }
    }

    /// Makes `node` call the specialisation of `record` to its facts.
    fn specialize_node(
        &self,
        node: &mut NodeProto,
        record: &TracedFunctionRecord,
        types: &HashMap<String, ArgFact>,
        made: &mut Made,
    ) -> Result<(), TraceFailure<'_>> {
        let call = node_facts(node, record, types).map_err(|message| TraceFailure {
            diagnostic: Box::new(Diagnostic::error(codes::CALL_SIGNATURE_MISMATCH, 0, message).help(format!(
                "call `{}` with its parameters: {}",
                record.name,
                record.signature.parameters.join(", ")
            ))),
            sources: None,
        })?;
        let key = CallKey(call);
        let variant = match made.variants.get(&key) {
            Some(v) => v.clone(),
            None => {
                let call = &key.0;
                let variant = variant_name(&record.name, made.functions.len());
                let f = self.specialize(call, &variant)?.function;
                if f.output.len() != node.output.len() {
                    return Err(TraceFailure {
                        diagnostic: Box::new(Diagnostic::error(
                            codes::OUTPUT_COUNT,
                            0,
                            format!(
                                "`{}` returns {} values for this call, but the node takes {}",
                                record.name,
                                f.output.len(),
                                node.output.len()
                            ),
                        )),
                        sources: None,
                    });
                }
                made.functions.push(f);
                made.variants.insert(key, variant.clone());
                variant
            }
        };
        node.op_type = Some(variant);
        node.input.retain(|i| !i.is_empty());
        node.attribute.clear();
        Ok(())
    }
}

/// The specialisations made for one model, by the facts of their calls.
#[derive(Default)]
struct Made {
    functions: Vec<crate::proto::onnx::FunctionProto>,
    variants: HashMap<CallKey, String>,
}

/// What a node's call knows, as the facts of a call by name: its inputs (as the model types
/// them), then its attributes; what it leaves out takes the translation's default.
fn node_facts(
    node: &NodeProto,
    record: &TracedFunctionRecord,
    types: &HashMap<String, ArgFact>,
) -> Result<CallFacts, String> {
    let sig = &record.signature;
    let mut kwargs = Vec::new();
    if node.input.len() > sig.inputs.len() {
        return Err(format!(
            "the node gives `{}` {} inputs, but it takes {}",
            record.name,
            node.input.len(),
            sig.inputs.len()
        ));
    }
    for (formal, actual) in sig.inputs.iter().zip(&node.input) {
        if actual.is_empty() {
            continue;
        }
        let fact = types.get(actual).cloned().unwrap_or(ArgFact::Tensor { elem: None, shape: None, sequence: false });
        kwargs.push((formal.name.clone(), fact));
    }
    for a in &node.attribute {
        let name = a.name.clone().unwrap_or_default();
        let Some(formal) = sig.attributes.iter().find(|f| f.name == name) else {
            return Err(format!("`{}` has no attribute `{name}`", record.name));
        };
        kwargs.push((name, ArgFact::Value(attribute_value(a, formal)?)));
    }
    Ok(CallFacts { function: format!("{}::{}", record.domain, record.name), args: Vec::new(), kwargs, expect: None })
}

/// An attribute's value, as the Python value of the parameter's type.
fn attribute_value(a: &AttributeProto, formal: &AttributeRecord) -> Result<PyValue, String> {
    let ty = a.r#type.and_then(|t| AttributeType::try_from(t).ok());
    let text = |b: &[u8]| PyValue::str(&String::from_utf8_lossy(b));
    Ok(match (formal.ty, ty) {
        (AttrKind::Int, Some(AttributeType::Int)) => PyValue::Int(i128::from(a.i.unwrap_or(0))),
        (AttrKind::Bool, Some(AttributeType::Int)) => PyValue::Bool(a.i.unwrap_or(0) != 0),
        (AttrKind::Float, Some(AttributeType::Float)) => PyValue::Float(f64::from(a.f.unwrap_or(0.0))),
        (AttrKind::Float, Some(AttributeType::Int)) => PyValue::Float(a.i.unwrap_or(0) as f64),
        (AttrKind::Str, Some(AttributeType::String)) => text(a.s.as_deref().unwrap_or_default()),
        (AttrKind::Ints, Some(AttributeType::Ints)) => {
            PyValue::list(a.ints.iter().map(|i| PyValue::Int(i128::from(*i))).collect())
        }
        (AttrKind::Bools, Some(AttributeType::Ints)) => {
            PyValue::list(a.ints.iter().map(|i| PyValue::Bool(*i != 0)).collect())
        }
        (AttrKind::Floats, Some(AttributeType::Floats)) => {
            PyValue::list(a.floats.iter().map(|f| PyValue::Float(f64::from(*f))).collect())
        }
        (AttrKind::Strs, Some(AttributeType::Strings)) => PyValue::list(a.strings.iter().map(|s| text(s)).collect()),
        _ => {
            return Err(format!(
                "attribute `{}` is not a `{}`, as the translation takes it",
                formal.name,
                formal.ty.python_name()
            ))
        }
    })
}
