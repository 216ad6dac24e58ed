//! The graph of one trace: each operator call of a trace-only translation checked against its
//! schema and recorded as a node, as torch's exporter records it (`_building.OpRecorder`).
//!
//! The exporter's rules for what a call passes an operator's input:
//! - a tensor is itself;
//! - a Python constant (or a list of them) becomes a `Constant` whose element type is, in
//!   order: that of a tensor passed for the same type parameter; the type parameter's only
//!   type; the constant's own (`bool` BOOL, `float` FLOAT, `int` INT64, `str` STRING; for a list,
//!   a tensor's among it, else FLOAT if any float, else INT64; an empty list INT64). Equal
//!   constants are made once;
//! - a list of values for a sequence input becomes `SequenceConstruct`; for a variadic input,
//!   its constants each become a `Constant`; for any other input, a list that holds a tensor
//!   becomes `Concat` of its items made 1-D (tensors reshaped to `[-1]`, constants as 1-element
//!   tensors, None left out);
//! - trailing omitted inputs are dropped, attributes given None are not given.
//!
//! Two simplifications the issue asks for and the exporter's optimizer would make anyway: a
//! `CastLike` to the element type its input already has records nothing, and an operator's
//! output count is the schema's (`Split` takes `num_outputs`, `BatchNormalization` without
//! `training_mode` one output), as the exporter counts them.

use super::shape_facts::{self, KnownInts};
use crate::diagnostics::{codes, Diagnostic};
use crate::ir::{Attr, AttrValue, Node, SourceLocation};
use crate::onnx::{AttrType, ElemType, ValueType};
use crate::schema::{self, FormalOption, FormalType, OpSchema, Resolution};
use crate::sema::calls::Callee;
use crate::sema::env::ModuleEnv;
use crate::sema::env::Opset;
use crate::sema::eval::{FunctionCall, GraphHost, OpCall};
use crate::sema::infer::{self, Ty};
use crate::sema::ir_values::{attr_value, tensor_of_type};
use crate::sema::shapes::{self, InputFacts, Shape, ShapeCall};
use crate::sema::value::{GraphType, GraphValue, PyValue};
use crate::source::{FileId, SourceMap, Span};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// The most nodes one trace may record (E0903 past it).
pub const MAX_NODES: usize = 100_000;
/// The largest tensor constant (in elements) that equal constants share one node for.
const MAX_SHARED_TENSOR: u64 = 64;

/// The graph of one trace.
pub struct GraphBuilder<'a> {
    sources: &'a SourceMap,
    /// Every module of the compilation, and its functions compiled as scripts (by id): trace-only
    /// code calls those as nodes.
    pub(super) envs: &'a [ModuleEnv<'a>],
    scripts: &'a HashMap<usize, Callee>,
    /// The file of the translation traced: nodes recorded by code of other files are located
    /// at the call in this file that led to them (`site`).
    root_file: FileId,
    pub(super) nodes: Vec<Node>,
    counter: usize,
    pub(super) taken: HashSet<String>,
    /// The constants made, by their value's text and element type.
    constants: HashMap<(String, ElemType), String>,
    /// Every domain the nodes use, with its version.
    pub(super) imports: BTreeMap<String, i64>,
    /// The values of the small integer tensors recorded (shapes, axes), for shape inference.
    known_ints: KnownInts,
}

/// Where an operator call is: its file and span, and its site in the translation traced when
/// it is written in another file.
#[derive(Clone, Copy)]
pub(super) struct At {
    pub file: FileId,
    pub span: Span,
    pub site: Option<Span>,
}

/// An input of a node as made: its name, and what is known of its type (`None`: omitted).
type MadeInput = Option<(String, Option<Ty>)>;

/// A call's arguments bound to an operator's schema: by input formal, and the attributes.
type BoundCall = (Vec<Option<Bound>>, Vec<(String, PyValue)>);

/// An input formal's arguments, as bound: one value, or several for a variadic input.
enum Bound {
    One(PyValue),
    Many(Vec<PyValue>),
}

impl<'a> GraphBuilder<'a> {
    pub fn new(
        sources: &'a SourceMap,
        envs: &'a [ModuleEnv<'a>],
        scripts: &'a HashMap<usize, Callee>,
        root_file: FileId,
    ) -> GraphBuilder<'a> {
        GraphBuilder {
            sources,
            envs,
            scripts,
            root_file,
            nodes: Vec::new(),
            counter: 0,
            taken: HashSet::new(),
            constants: HashMap::new(),
            imports: BTreeMap::new(),
            known_ints: KnownInts::new(),
        }
    }

    /// A value name not yet used: `base`, else `base_1`, `base_2`...
    pub(super) fn fresh(&mut self, base: &str) -> String {
        if self.taken.insert(base.to_string()) {
            return base.to_string();
        }
        loop {
            self.counter += 1;
            let name = format!("{base}_{}", self.counter);
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }

    fn location(&self, at: At) -> Option<SourceLocation> {
        let span = if at.file == self.root_file { at.span } else { at.site? };
        let (line, column) = self.sources.line_col(self.root_file, span.start);
        Some(SourceLocation { line: line as u32, column: column as u32 })
    }

    /// Records a node and returns its outputs' names.
    pub(super) fn node(
        &mut self,
        opset: &Opset,
        op_type: &str,
        inputs: Vec<Option<String>>,
        attrs: Vec<Attr>,
        outputs: usize,
        at: At,
    ) -> Result<Vec<String>, Box<Diagnostic>> {
        if self.nodes.len() >= MAX_NODES {
            return Err(Box::new(
                Diagnostic::error(
                    codes::TRACE_LIMIT,
                    at.file,
                    format!("the trace records more than {MAX_NODES} nodes"),
                )
                .primary(at.span, "recording this one")
                .help("a loop that records a node at every step over far too many items: bound it by a static value"),
            ));
        }
        let base = op_type.to_lowercase();
        let outs: Vec<String> = (0..outputs).map(|_| self.fresh(&base)).collect();
        let version = self.imports.entry(opset.domain.clone()).or_insert(opset.version);
        *version = (*version).max(opset.version);
        let source = self.location(at);
        self.nodes.push(Node {
            domain: opset.domain.clone(),
            op_type: Cow::Owned(op_type.to_string()),
            inputs,
            outputs: outs.clone(),
            attrs,
            source,
        });
        Ok(outs)
    }

    /// A `Constant` holding `value` as `elem` (made once per value and type).
    pub(super) fn constant(&mut self, value: &PyValue, elem: ElemType, at: At) -> Result<String, Box<Diagnostic>> {
        // Equal constants share one node. A tensor's `repr` names only its type and shape, so
        // its key is its contents, written out for small tensors; a large one is never shared.
        let key = match value {
            PyValue::Tensor(t) if t.len() > MAX_SHARED_TENSOR => None,
            PyValue::Tensor(t) => Some((format!("{t:?}"), elem)),
            other => Some((other.repr(), elem)),
        };
        if let Some(name) = key.as_ref().and_then(|key| self.constants.get(key)) {
            return Ok(name.clone());
        }
        let tensor = match value {
            PyValue::Tensor(t) => (**t).clone(),
            other => tensor_of_type(other, Some(elem)).map_err(|why| {
                Box::new(
                    Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        at.file,
                        format!("{} cannot be a constant of type {}: {why}", other.brief(), elem.script_name()),
                    )
                    .primary(at.span, "passed to an input of this type")
                    .help("pass a value of the input's type, or a tensor"),
                )
            })?,
        };
        let onnx = Opset { domain: String::new(), version: crate::aten::EXPORTER_OPSET };
        let attr = Attr { name: "value".into(), value: AttrValue::Tensor(tensor) };
        let out = self.node(&onnx, "Constant", vec![], vec![attr], 1, at)?.remove(0);
        if let Some(ints) = shape_facts::python_ints(value).filter(|_| elem.is_integer()) {
            self.known_ints.insert(out.clone(), ints);
        }
        if let Some(key) = key {
            self.constants.insert(key, out.clone());
        }
        Ok(out)
    }

    /// A graph value of this builder.
    pub(super) fn value(&self, name: String, ty: GraphType) -> PyValue {
        PyValue::Graph(Arc::new(GraphValue { name, ty, from_call: false }))
    }
}

impl GraphHost for GraphBuilder<'_> {
    fn op(&mut self, call: OpCall) -> Result<Vec<PyValue>, Box<Diagnostic>> {
        let at = At { file: call.file, span: call.span, site: call.site };
        let schema = match schema::registry().resolve(&call.opset.domain, call.op_type, call.opset.version) {
            Resolution::Found(s) => s,
            Resolution::NotYet { first_version } => {
                return Err(op_error(
                    codes::OP_NOT_IN_OPSET,
                    at,
                    format!("`{}` exists from opset {first_version}, not {}", call.op_type, call.opset.version),
                    "import an opset that has it",
                ))
            }
            Resolution::Unknown => {
                let domain = if call.opset.domain.is_empty() { "ONNX" } else { &call.opset.domain };
                return Err(op_error(
                    codes::UNKNOWN_OP,
                    at,
                    format!("{domain} has no operator `{}`", call.op_type),
                    "check the operator's name in the ONNX operator list",
                ));
            }
        };
        if schema.deprecated {
            return Err(op_error(
                codes::DEPRECATED_OP,
                at,
                format!("`{}` is deprecated at opset {}", call.op_type, call.opset.version),
                "use the operator that replaces it",
            ));
        }
        let (inputs, attributes) = bind(schema, call.args, call.kwargs, at)?;
        if let Some(same) = castlike_to_itself(schema, &inputs) {
            return Ok(vec![same]);
        }
        self.record(schema, call.opset, inputs, attributes, at)
    }

    fn records_function(&self, id: usize) -> bool {
        self.scripts.contains_key(&id)
    }

    fn function(&mut self, call: FunctionCall) -> Result<Vec<PyValue>, Box<Diagnostic>> {
        let scripts = self.scripts;
        match scripts.get(&call.id) {
            Some(callee) => self.record_function(callee, call),
            None => Err(op_error(
                codes::TRACE_ERROR,
                At { file: call.file, span: call.span, site: call.site },
                "this function is not compiled",
                "call a script function",
            )),
        }
    }
}

impl GraphBuilder<'_> {
    /// Records a call of `schema` whose arguments are bound: its inputs made into values as the
    /// exporter makes them, its attributes typed, its outputs typed by the schema.
    fn record(
        &mut self,
        schema: &OpSchema,
        opset: &Opset,
        inputs: Vec<Option<Bound>>,
        attributes: Vec<(String, PyValue)>,
        at: At,
    ) -> Result<Vec<PyValue>, Box<Diagnostic>> {
        let binding = type_binding(schema, &inputs);
        // Only ONNX's own operators have shape rules: others need no facts gathered.
        let facts = if schema.domain.is_empty() { self.shape_facts(&inputs) } else { Vec::new() };
        let mut names: Vec<Option<String>> = Vec::new();
        let mut tys: Vec<Option<Ty>> = Vec::new();
        for (formal, arg) in schema.inputs.iter().zip(inputs) {
            let made = match arg {
                None => vec![None],
                Some(Bound::One(v)) => vec![self.input(schema, formal, v, &binding, opset, at)?],
                Some(Bound::Many(vs)) => self.variadic(schema, formal, vs, &binding, at)?,
            };
            for m in made {
                tys.push(m.as_ref().and_then(|(_, t)| t.clone()));
                names.push(m.map(|(n, _)| n));
            }
        }
        while names.last().is_some_and(Option::is_none) {
            names.pop();
            tys.pop();
        }
        let mut attrs = Vec::new();
        for (name, v) in attributes {
            if let Some(a) = self.attribute(schema, &name, &v, at)? {
                attrs.push(a);
            }
        }
        let outputs = output_count(schema, &attrs);
        if schema.domain.is_empty() && schema.name == "Split" && !attrs.iter().any(|a| a.name == "num_outputs") {
            // The exporter's recorder raises here: it tells a Split's outputs only by this.
            return Err(op_error(
                codes::TRACE_ERROR,
                at,
                "`Split` needs `num_outputs` when traced: the exporter cannot tell how many outputs it makes",
                "pass `num_outputs=`, the number of equal parts; to split by sizes, make a sequence with `op.SplitToSequence(x, sizes, axis=...)`",
            ));
        }
        let checked = infer::check_call(schema, &tys.iter().map(Option::as_ref).collect::<Vec<_>>(), outputs)
            .map_err(|c| op_error(codes::TYPE_MISMATCH, at, c.message.clone(), c.help_text()))?;
        // `Constant`, `Cast` and the others whose schemas cannot type their outputs are typed
        // as a compiled function's nodes are: a float constant meets a float16 input typed.
        let recorded = RecordedNode { inputs: &tys, attrs: &attrs };
        let typed = infer::node_outputs(&schema.domain, &schema.name, opset.version, &recorded, outputs, Some(checked));
        let call = ShapeCall {
            op: &schema.name,
            domain: &schema.domain,
            version: opset.version,
            inputs: &facts,
            attrs: &attrs,
            outputs,
        };
        let shapes = shapes::infer(&call).map_err(|v| op_error(codes::SHAPE_MISMATCH, at, v.message, v.help))?;
        let values = shapes::propagated(&schema.name, &facts, &attrs, &shapes).filter(|_| schema.domain.is_empty());
        let mut items = shapes::sequence_items(&call);
        let outs = self.node(opset, &schema.name, names, attrs, outputs, at)?;
        if let (Some(values), Some(first)) = (values, outs.first()) {
            self.known_ints.insert(first.clone(), values);
        }
        Ok(outs
            .into_iter()
            .zip(shapes)
            .enumerate()
            .map(|(i, (name, shape))| {
                self.value(name, graph_type(typed.get(i).cloned().flatten(), shape, items.take()))
            })
            .collect())
    }

    /// What shape inference knows of each input of a call, in the order of the node's inputs
    /// (a variadic input's values each in turn).
    fn shape_facts(&self, inputs: &[Option<Bound>]) -> Vec<Option<InputFacts>> {
        let mut out = Vec::with_capacity(inputs.len());
        for arg in inputs {
            match arg {
                None | Some(Bound::One(PyValue::None)) => out.push(None),
                Some(Bound::One(v)) => out.push(Some(shape_facts::input_facts(v, &self.known_ints))),
                Some(Bound::Many(vs)) => {
                    out.extend(vs.iter().map(|v| Some(shape_facts::input_facts(v, &self.known_ints))));
                }
            }
        }
        while out.last().is_some_and(Option::is_none) {
            out.pop();
        }
        out
    }

    /// One input: a tensor as it is, a Python value made a constant, a list made a sequence or
    /// a `Concat`. `None` for an omitted optional input.
    fn input(
        &mut self,
        schema: &OpSchema,
        formal: &schema::FormalParam,
        v: PyValue,
        binding: &HashMap<String, ElemType>,
        opset: &Opset,
        at: At,
    ) -> Result<MadeInput, Box<Diagnostic>> {
        Ok(Some(match v {
            PyValue::None => return Ok(None),
            PyValue::Graph(g) => (g.name.clone(), ty_of(&g.ty)),
            PyValue::List(items) if items.iter().any(|i| matches!(i, PyValue::Graph(_))) => {
                if is_sequence(schema, formal) {
                    let seq = self.sequence_construct(opset, items.items().to_vec(), at)?;
                    return Ok(Some(seq));
                }
                let elem = input_elem(schema, formal, &PyValue::List(items.clone()), binding);
                return self.concat(items.items(), elem, at).map(Some);
            }
            other => {
                let elem = input_elem(schema, formal, &other, binding);
                (self.constant(&other, elem, at)?, Some(Ty::Elem(elem)))
            }
        }))
    }

    /// The actuals of a variadic input: tensors as they are, constants each made a `Constant`.
    fn variadic(
        &mut self,
        schema: &OpSchema,
        formal: &schema::FormalParam,
        vs: Vec<PyValue>,
        binding: &HashMap<String, ElemType>,
        at: At,
    ) -> Result<Vec<MadeInput>, Box<Diagnostic>> {
        let elem = input_elem(schema, formal, &PyValue::list(vs.clone()), binding);
        let mut out = Vec::with_capacity(vs.len());
        for v in vs {
            out.push(Some(match v {
                PyValue::Graph(g) => (g.name.clone(), ty_of(&g.ty)),
                PyValue::None => {
                    return Err(op_error(
                        codes::BAD_ARGUMENT,
                        at,
                        "None among a variadic input's values",
                        "leave it out",
                    ))
                }
                other => (self.constant(&other, elem, at)?, Some(Ty::Elem(elem))),
            }));
        }
        Ok(out)
    }

    /// `Concat` of a list's items made 1-D, for an input that takes one tensor.
    fn concat(&mut self, items: &[PyValue], elem: ElemType, at: At) -> Result<(String, Option<Ty>), Box<Diagnostic>> {
        let onnx = Opset { domain: String::new(), version: crate::aten::EXPORTER_OPSET };
        let minus_one = self.constant(&PyValue::list(vec![PyValue::Int(-1)]), ElemType::Int64, at)?;
        let mut parts = Vec::with_capacity(items.len());
        for item in items {
            match item {
                PyValue::None => {}
                PyValue::Graph(g) => {
                    let reshaped = self.node(
                        &onnx,
                        "Reshape",
                        vec![Some(g.name.clone()), Some(minus_one.clone())],
                        vec![],
                        1,
                        at,
                    )?;
                    parts.push(Some(reshaped[0].clone()));
                }
                other => parts.push(Some(self.constant(&PyValue::list(vec![other.clone()]), elem, at)?)),
            }
        }
        let axis = Attr { name: "axis".into(), value: AttrValue::Int(0) };
        let out = self.node(&onnx, "Concat", parts, vec![axis], 1, at)?;
        Ok((out[0].clone(), Some(Ty::Elem(elem))))
    }

    /// `SequenceConstruct` of a list's tensors.
    fn sequence_construct(
        &mut self,
        opset: &Opset,
        items: Vec<PyValue>,
        at: At,
    ) -> Result<(String, Option<Ty>), Box<Diagnostic>> {
        let onnx = if opset.domain.is_empty() {
            opset.clone()
        } else {
            Opset { domain: String::new(), version: crate::aten::EXPORTER_OPSET }
        };
        let call = OpCall {
            opset: &onnx,
            op_type: "SequenceConstruct",
            args: items,
            kwargs: vec![],
            file: at.file,
            span: at.span,
            site: at.site,
        };
        let out = self.op(call)?;
        match out.into_iter().next() {
            Some(PyValue::Graph(g)) => Ok((g.name.clone(), ty_of(&g.ty))),
            _ => Err(op_error(codes::BAD_ARGUMENT, at, "this list cannot be a sequence", "pass tensors")),
        }
    }

    /// An attribute, typed as the schema says; `None` when given None (not given).
    fn attribute(
        &mut self,
        schema: &OpSchema,
        name: &str,
        v: &PyValue,
        at: At,
    ) -> Result<Option<Attr>, Box<Diagnostic>> {
        let Some(a) = schema.attribute(name) else {
            return Err(op_error(
                codes::UNKNOWN_ATTRIBUTE,
                at,
                format!("`{}` has no attribute `{name}`", schema.name),
                "check the operator's attributes",
            ));
        };
        match v {
            PyValue::None => return Ok(None),
            PyValue::Graph(_) => {
                return Err(op_error(
                    codes::ATTRIBUTE_TYPE,
                    at,
                    format!("attribute `{name}` needs a static value, but a tensor is passed"),
                    "attributes are fixed at export: pass a Python value, or use an operator that takes it as an input",
                ))
            }
            other if has_unknown_dim(other) => {
                return Err(op_error(
                    codes::TRACE_UNKNOWN_FACT,
                    at,
                    format!("attribute `{name}` depends on a dimension this call does not know"),
                    "a symbolic dimension is known only when the model runs: compute it with `op.Shape` and pass it to an input",
                ))
            }
            _ => {}
        }
        let v = match v {
            PyValue::DType(t) => PyValue::Int(i128::from(t.code())),
            other => other.clone(),
        };
        match attr_value(&v, a.ty) {
            Ok(value) => Ok(Some(Attr { name: name.to_string(), value })),
            Err(why) => Err(op_error(
                codes::ATTRIBUTE_TYPE,
                at,
                format!(
                    "attribute `{name}` of `{}` takes {}, not {}{}",
                    schema.name,
                    attr_type_name(a.ty),
                    v.brief(),
                    why.map(|w| format!(" ({w})")).unwrap_or_default()
                ),
                "pass a value of the attribute's type",
            )),
        }
    }
}

/// Binds a call's arguments to the schema's inputs and attributes as onnxscript does: positions
/// fill the inputs (a variadic last input takes the rest), then the attributes in schema order;
/// keywords name an input or an attribute.
fn bind(
    schema: &OpSchema,
    args: Vec<PyValue>,
    kwargs: Vec<(String, PyValue)>,
    at: At,
) -> Result<BoundCall, Box<Diagnostic>> {
    let mut inputs: Vec<Option<Bound>> = schema.inputs.iter().map(|_| None).collect();
    let mut attributes = Vec::new();
    let variadic_last = schema.inputs.last().is_some_and(|f| f.option == FormalOption::Variadic);
    let mut args = args.into_iter();
    for (i, formal) in schema.inputs.iter().enumerate() {
        if formal.option == FormalOption::Variadic {
            inputs[i] = Some(Bound::Many(args.by_ref().collect()));
            break;
        }
        match args.next() {
            Some(v) => inputs[i] = Some(Bound::One(v)),
            None => break,
        }
    }
    let rest: Vec<PyValue> = args.collect();
    if !rest.is_empty() {
        if variadic_last || rest.len() > schema.attributes.len() {
            return Err(op_error(
                codes::BAD_ARGUMENT,
                at,
                format!("too many arguments for `{}`", schema.name),
                "pass the attributes by name",
            ));
        }
        for (a, v) in schema.attributes.iter().zip(rest) {
            attributes.push((a.name.clone(), v));
        }
    }
    for (k, v) in kwargs {
        if let Some(i) = schema.inputs.iter().position(|f| f.name == k) {
            inputs[i] = Some(Bound::One(v));
        } else if schema.attribute(&k).is_some() {
            attributes.push((k, v));
        } else {
            return Err(op_error(
                codes::UNKNOWN_ATTRIBUTE,
                at,
                format!("`{}` has no input or attribute `{k}`", schema.name),
                "check the operator's inputs and attributes",
            ));
        }
    }
    for (formal, arg) in schema.inputs.iter().zip(&inputs) {
        let missing = matches!(arg, None | Some(Bound::One(PyValue::None)));
        if formal.option == FormalOption::Single && missing {
            return Err(op_error(
                codes::BAD_ARGUMENT,
                at,
                format!("`{}` is missing its required input `{}`", schema.name, formal.name),
                "pass it",
            ));
        }
    }
    for a in schema.attributes.iter().filter(|a| a.required) {
        if !attributes.iter().any(|(n, v)| *n == a.name && *v != PyValue::None) {
            return Err(op_error(
                codes::MISSING_ATTRIBUTE,
                at,
                format!("`{}` needs its attribute `{}`", schema.name, a.name),
                "pass it by name",
            ));
        }
    }
    Ok((inputs, attributes))
}

/// The element types the tensors passed fix for each type parameter.
fn type_binding(schema: &OpSchema, inputs: &[Option<Bound>]) -> HashMap<String, ElemType> {
    let mut out = HashMap::new();
    for (formal, arg) in schema.inputs.iter().zip(inputs) {
        let values: Vec<&PyValue> = match arg {
            Some(Bound::One(v)) => vec![v],
            Some(Bound::Many(vs)) => vs.iter().collect(),
            None => vec![],
        };
        for v in values {
            if let PyValue::Graph(g) = v {
                if let (Some(e), FormalType::Param(_)) = (g.elem(), &formal.ty) {
                    out.entry(formal.type_str.clone()).or_insert(e);
                }
            }
        }
    }
    out
}

/// The element type a constant for `formal` takes (`_determine_input_dtype`).
fn input_elem(
    schema: &OpSchema,
    formal: &schema::FormalParam,
    v: &PyValue,
    binding: &HashMap<String, ElemType>,
) -> ElemType {
    if let Some(e) = binding.get(&formal.type_str) {
        return *e;
    }
    if let Some([ValueType::Tensor(only)]) = schema.allowed_types(formal) {
        return *only;
    }
    own_elem(v)
}

/// A Python value's own element type, as the exporter infers it.
pub(super) fn own_elem(v: &PyValue) -> ElemType {
    match v {
        PyValue::Bool(_) => ElemType::Bool,
        PyValue::Float(_) => ElemType::Float,
        PyValue::Str(_) => ElemType::String,
        PyValue::Tensor(t) => t.elem,
        PyValue::List(items) => {
            if let Some(e) = items.iter().find_map(|i| match i {
                PyValue::Graph(g) => g.elem(),
                _ => None,
            }) {
                return e;
            }
            if items.iter().any(|i| matches!(i, PyValue::Float(_))) {
                ElemType::Float
            } else {
                ElemType::Int64
            }
        }
        _ => ElemType::Int64,
    }
}

/// Whether every type `formal` allows is a sequence.
fn is_sequence(schema: &OpSchema, formal: &schema::FormalParam) -> bool {
    schema.allowed_types(formal).is_some_and(|ts| !ts.is_empty() && ts.iter().all(|t| matches!(t, ValueType::Seq(_))))
}

/// `CastLike(x, y)` where `x` already has `y`'s element type: `x` itself.
fn castlike_to_itself(schema: &OpSchema, inputs: &[Option<Bound>]) -> Option<PyValue> {
    if !schema.domain.is_empty() || schema.name != "CastLike" {
        return None;
    }
    let (Some(Some(Bound::One(PyValue::Graph(x)))), Some(Some(Bound::One(PyValue::Graph(y))))) =
        (inputs.first(), inputs.get(1))
    else {
        return None;
    };
    (x.elem().is_some() && x.elem() == y.elem()).then(|| PyValue::Graph(x.clone()))
}

/// The element type a `Cast` makes: its `to`.
/// A node a trace records, as output typing asks about it ([`infer::NodeFacts`]).
struct RecordedNode<'n> {
    inputs: &'n [Option<Ty>],
    attrs: &'n [Attr],
}

impl infer::NodeFacts for RecordedNode<'_> {
    fn input(&self, i: usize) -> Option<&Ty> {
        self.inputs.get(i)?.as_ref()
    }

    fn input_count(&self) -> usize {
        self.inputs.len()
    }

    fn attr(&self, name: &str) -> Option<infer::AttrFacts> {
        // A trace records no subgraph.
        let a = self.attrs.iter().find(|a| a.name == name)?;
        Some(infer::AttrFacts::of(&a.value, |_| Vec::new()))
    }

    fn first_attr(&self) -> Option<&str> {
        self.attrs.first().map(|a| a.name.as_str())
    }
}

/// How many outputs the exporter gives a node of `schema`.
fn output_count(schema: &OpSchema, attrs: &[Attr]) -> usize {
    let attr_int = |name: &str| {
        attrs.iter().find(|a| a.name == name).and_then(|a| match a.value {
            AttrValue::Int(i) => Some(i),
            _ => None,
        })
    };
    if schema.domain.is_empty() {
        if schema.name == "BatchNormalization" && attr_int("training_mode").unwrap_or(0) == 0 {
            return 1;
        }
        if schema.name == "Split" {
            if let Some(n) = attr_int("num_outputs") {
                return usize::try_from(n).unwrap_or(1);
            }
        }
    }
    schema.outputs.len()
}

fn ty_of(t: &GraphType) -> Option<Ty> {
    match t {
        GraphType::Tensor { elem, .. } => elem.map(Ty::Elem),
        GraphType::Sequence { elem, .. } => Some(Ty::seq(elem.map(Ty::Elem))),
    }
}

/// An output's type: a tensor's element type and shape, or a sequence's element type and items.
fn graph_type(t: Option<Ty>, shape: Shape, items: Option<Vec<Shape>>) -> GraphType {
    match t {
        Some(Ty::Elem(e)) => GraphType::Tensor { elem: Some(e), shape },
        Some(Ty::Seq(item)) => GraphType::Sequence {
            elem: item.and_then(|i| match *i {
                Ty::Elem(e) => Some(e),
                _ => None,
            }),
            items,
        },
        _ => GraphType::Tensor { elem: None, shape },
    }
}

fn has_unknown_dim(v: &PyValue) -> bool {
    match v {
        PyValue::SymDim(_) => true,
        PyValue::List(items) => items.iter().any(has_unknown_dim),
        _ => false,
    }
}

fn attr_type_name(t: AttrType) -> &'static str {
    match t {
        AttrType::Float => "a float",
        AttrType::Int => "an int",
        AttrType::String => "a string",
        AttrType::Floats => "a list of floats",
        AttrType::Ints => "a list of ints",
        AttrType::Strings => "a list of strings",
        AttrType::Tensor => "a tensor",
        _ => "a value of its type",
    }
}

/// An error at an operator call of the trace.
pub(super) fn op_error(
    code: &'static str,
    at: At,
    message: impl Into<String>,
    help: impl Into<String>,
) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(code, at.file, message).primary(at.span, "in this call").help(help))
}
