//! The lowered form of a function: ONNX nodes over SSA value names, ready to emit.

use crate::onnx::tensor::Tensor;
use crate::onnx::{AttrKind, AttrType, DeclaredType, ElemType};
use std::borrow::Cow;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Float(f32),
    Int(i64),
    Str(String),
    Floats(Vec<f32>),
    Ints(Vec<i64>),
    Strs(Vec<String>),
    Tensor(Tensor),
    Graph(Graph),
    /// A reference to an attribute of the enclosing function (`ref_attr_name`).
    Ref {
        name: String,
        ty: AttrType,
    },
}

impl AttrValue {
    pub fn attr_type(&self) -> AttrType {
        match self {
            AttrValue::Float(_) => AttrType::Float,
            AttrValue::Int(_) => AttrType::Int,
            AttrValue::Str(_) => AttrType::String,
            AttrValue::Floats(_) => AttrType::Floats,
            AttrValue::Ints(_) => AttrType::Ints,
            AttrValue::Strs(_) => AttrType::Strings,
            AttrValue::Tensor(_) => AttrType::Tensor,
            AttrValue::Graph(_) => AttrType::Graph,
            AttrValue::Ref { ty, .. } => *ty,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub name: String,
    pub value: AttrValue,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub domain: String,
    /// Borrowed for an op named by a literal or a schema, owned for a call of a function.
    pub op_type: Cow<'static, str>,
    /// `None` is an omitted optional input.
    pub inputs: Vec<Option<String>>,
    pub outputs: Vec<String>,
    pub attrs: Vec<Attr>,
    /// The source construct the node was lowered from.
    pub source: Option<SourceLocation>,
}

/// A line and column (1-based, columns in bytes, as docs/exporter.md says) of the function's source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLocation {
    pub line: u32,
    pub column: u32,
}

/// A subgraph: an `If` branch, a `Loop` body or a nested `@graph()` function. It may read values
/// of the enclosing graphs by name (captures).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Graph {
    pub name: String,
    pub doc: Option<String>,
    pub inputs: Vec<GraphInput>,
    pub nodes: Vec<Node>,
    pub outputs: Vec<String>,
}

/// A subgraph input: a loop's iteration number, condition and carried values, or a parameter of
/// a nested function.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphInput {
    pub name: String,
    /// Its tensor type where it is known; otherwise the runtime takes the type of what is bound.
    pub ty: Option<TensorType>,
}

/// A tensor type: element type and shape (`None`: unknown rank; no dimensions: a scalar).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorType {
    pub elem: ElemType,
    pub shape: Option<Vec<Dim>>,
}

impl TensorType {
    pub fn scalar(elem: ElemType) -> TensorType {
        TensorType { elem, shape: Some(Vec::new()) }
    }
}

/// One dimension of a shape: a number, a symbol for a number not known until the model runs
/// (ONNX's `dim_param`, the exporter's `s0`), or nothing known at all.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Known(i64),
    Symbolic(std::sync::Arc<str>),
    Unknown,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AttrParam {
    pub name: String,
    pub ty: AttrType,
    /// The Python type it is annotated with.
    pub kind: AttrKind,
    pub default: Option<AttrValue>,
    /// The default as JSON (`null` for a default of `None`).
    pub default_repr: Option<serde_json::Value>,
    /// May be None: annotated `Optional[...]`, or defaulting to `None`.
    pub optional: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InputParam {
    pub name: String,
    /// Its annotation (`None`: unannotated, or only loosely typed).
    pub ty: Option<DeclaredType>,
    pub optional: bool,
    /// The source's default, as JSON (`null` for `None`): the Python package passes it when
    /// the exporter omits the argument (ONNX has no input defaults).
    pub default_repr: Option<serde_json::Value>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub domain: String,
    /// The file it is defined in (as named on the command line) and where its `def` is; nodes
    /// carry their own locations in it.
    pub source_file: String,
    pub source: Option<SourceLocation>,
    /// The file and the span of its name, for diagnostics about the function as a whole.
    pub file: crate::source::FileId,
    pub name_span: crate::source::Span,
    pub doc: Option<String>,
    pub inputs: Vec<InputParam>,
    pub attributes: Vec<AttrParam>,
    pub outputs: Vec<String>,
    /// Each output's declared type (`None`: undeclared).
    pub output_types: Vec<Option<DeclaredType>>,
    pub nodes: Vec<Node>,
    /// Every domain the body uses (subgraphs and callees included), with its version.
    pub opset_imports: BTreeMap<String, i64>,
    /// Every parameter (inputs and attributes) in source order: how Python calls the function.
    pub parameters: Vec<String>,
    /// The parameters its source deletes with `del`: left unread on purpose, in parameter order.
    pub ignored: Vec<String>,
    /// The parameters that receive a backend hint (`cudnn_enable`, ...), which cannot change
    /// the values it computes, in parameter order.
    pub hints: Vec<String>,
    /// The allowed element types of each TypeVar named in the signature (empty: any).
    pub type_vars: BTreeMap<String, Vec<ElemType>>,
    /// The PyTorch operators `@torch_op` binds the function to.
    pub torch_ops: Vec<TorchOp>,
    /// `@torch_op(..., complex=True)`.
    pub complex: bool,
    /// The warnings suppressed for it as a whole, as the signature records them
    /// (`onnx::metadata::SignatureRecord::noqa`).
    pub noqa: Vec<String>,
}

/// What the library's header and the checks across functions need of a lowered function, kept
/// when its body is not: a large build encodes each function as soon as it is lowered and drops
/// its nodes there, on the thread that lowered it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outline {
    pub name: String,
    pub domain: String,
    pub file: crate::source::FileId,
    pub name_span: crate::source::Span,
    pub opset_imports: BTreeMap<String, i64>,
    /// It binds PyTorch operators: a translation for the exporter.
    pub translates: bool,
    /// The domain and op type of its nodes outside the ONNX domain, the only ones that can call
    /// a function (no function lives in the ONNX domain: E0105), subgraphs' included, each once,
    /// in the order the nodes come (a subgraph's before the nodes after its node).
    pub ops: Vec<(String, String)>,
}

impl Outline {
    pub fn of(f: &Function) -> Outline {
        let mut ops = Vec::new();
        ops_in(&f.nodes, &mut foldhash::HashSet::default(), &mut ops);
        Outline {
            name: f.name.clone(),
            domain: f.domain.clone(),
            file: f.file,
            name_span: f.name_span,
            opset_imports: f.opset_imports.clone(),
            translates: !f.torch_ops.is_empty(),
            ops: ops.into_iter().map(|(d, o)| (d.to_string(), o.to_string())).collect(),
        }
    }
}

fn ops_in<'f>(nodes: &'f [Node], seen: &mut foldhash::HashSet<(&'f str, &'f str)>, out: &mut Vec<(&'f str, &'f str)>) {
    for n in nodes {
        let op = (n.domain.as_str(), n.op_type.as_ref());
        if !n.domain.is_empty() && seen.insert(op) {
            out.push(op);
        }
        for a in &n.attrs {
            if let AttrValue::Graph(g) = &a.value {
                ops_in(&g.nodes, seen, out);
            }
        }
    }
}

/// A PyTorch operator a function translates, with the number of values the operator returns
/// (from its schema; `None` when no schema is known).
#[derive(Clone, Debug, PartialEq)]
pub struct TorchOp {
    pub qualname: String,
    pub outputs: Option<usize>,
}
