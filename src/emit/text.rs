//! Printing FunctionProtos in ONNX's textual syntax: the syntax read by `onnx.parser.parse_function`
//! (C++ `OnnxParser`) and written by `onnx.printer.to_text`.
//!
//! The output is meant to parse back, with `onnx.parser.parse_function`, into the same
//! FunctionProto. What the syntax cannot carry (checked against onnx 1.23.2):
//!
//! - function `metadata_props`: printed as `#` comments before the header (the parser skips them);
//! - node `doc_string`: printed as a `#` comment line before the node; graph `doc_string`: as a
//!   comment line at the top of the graph body; node `metadata_props` and
//!   `device_configurations`, attribute `doc_string`, value-info `doc_string`/`metadata_props`,
//!   type `denotation`, dimension `denotation`, graph `quantization_annotation`,
//!   `sparse_initializer` and `metadata_props`, tensor `segment`/`doc_string`/`metadata_props`:
//!   not printed;
//! - presence of empty strings: the parser always sets `NodeProto.domain` (to `""` when there is
//!   no prefix) and `TensorProto.name` (to `""` when unnamed); a node name is printed only when it
//!   is non-empty; an opset import without a domain is printed as `""`;
//! - `raw_data` is printed as the values it encodes, so it parses back into the typed field
//!   (`float_data`, `int32_data`, ...) that the parser uses for that data type;
//! - a tensor name inside an attribute value that is not a plain identifier is dropped (the parser
//!   only accepts a bare identifier there); a subgraph name that is not a plain identifier (or is a
//!   type keyword, or starts like `inf`/`nan`) is printed with a `_` prefix and other characters
//!   replaced by `_`, because that position does not accept a quoted name;
//! - attribute kinds the parser cannot read back: TENSORS, GRAPHS, TYPE_PROTOS (list elements are
//!   dropped by the parser), SPARSE_TENSOR and SPARSE_TENSORS (no syntax at all). They are printed
//!   in a readable form anyway;
//! - byte strings that are not UTF-8 are printed lossily (U+FFFD).
//!
//! The output is deterministic: it follows the order of the repeated fields.

use std::fmt::Write as _;

use crate::onnx::tensor::{elements, Elements};
use crate::onnx::{attribute_kind, AttrType, ElemType};
use crate::proto::onnx;
use onnx::tensor_proto::DataLocation;

/// Indentation unit (the same as `onnx.printer`).
const INDENT: &str = "   ";

/// One function in ONNX textual syntax, ending with a newline.
pub fn function_to_text(f: &onnx::FunctionProto) -> String {
    let mut out = String::new();
    write_function(&mut out, f);
    out
}

/// Several functions separated by a blank line.
pub fn functions_to_text(fs: &[onnx::FunctionProto]) -> String {
    fs.iter().map(function_to_text).collect::<Vec<_>>().join("\n")
}

// -------------------------------------------------------------------------------------------------
// Functions
// -------------------------------------------------------------------------------------------------

fn write_function(out: &mut String, f: &onnx::FunctionProto) {
    for md in &f.metadata_props {
        let key = md.key.as_deref().unwrap_or("");
        let value = md.value.as_deref().unwrap_or("");
        let _ = writeln!(out, "# metadata_props: {}: {}", comment_safe(&quoted(key)), comment_safe(&quoted(value)));
    }

    let mut header: Vec<String> = Vec::new();
    if let Some(domain) = &f.domain {
        header.push(format!("domain: {}", quoted(domain)));
    }
    if let Some(overload) = &f.overload {
        header.push(format!("overload: {}", quoted(overload)));
    }
    if !f.opset_import.is_empty() {
        let imports: Vec<String> = f
            .opset_import
            .iter()
            .map(|op| format!("{} : {}", quoted(op.domain.as_deref().unwrap_or("")), op.version.unwrap_or(0)))
            .collect();
        header.push(format!("opset_import: [{}]", imports.join(", ")));
    }
    if let Some(doc) = &f.doc_string {
        header.push(format!("doc_string: {}", quoted(doc)));
    }
    if !header.is_empty() {
        out.push_str("<\n");
        let lines: Vec<String> = header.iter().map(|h| format!("  {h}")).collect();
        out.push_str(&lines.join(",\n"));
        out.push_str("\n>\n");
    }

    out.push_str(&id(f.name.as_deref().unwrap_or("")));

    let mut attrs: Vec<String> = f.attribute.iter().map(|a| id(a)).collect();
    attrs.extend(f.attribute_proto.iter().map(|a| attribute_text(a, 0, true, true)));
    if !attrs.is_empty() {
        let _ = write!(out, " <{}>", attrs.join(", "));
    }

    let _ = write!(out, " ({}) => ({})", id_list(&f.input), id_list(&f.output));
    if !f.value_info.is_empty() {
        let vis: Vec<String> = f.value_info.iter().map(value_info_text).collect();
        let _ = write!(out, " <{}>", vis.join(", "));
    }
    out.push_str("\n{\n");
    for node in &f.node {
        write_node(out, node, 1);
    }
    out.push_str("}\n");
}

// -------------------------------------------------------------------------------------------------
// Nodes and graphs
// -------------------------------------------------------------------------------------------------

fn write_node(out: &mut String, n: &onnx::NodeProto, depth: usize) {
    let indent = INDENT.repeat(depth);
    if let Some(doc) = n.doc_string.as_deref().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "{indent}# {}", comment_safe(doc));
    }
    out.push_str(&indent);
    if let Some(name) = n.name.as_deref().filter(|s| !s.is_empty()) {
        let _ = write!(out, "[{}] ", id(name));
    }
    if n.output.is_empty() {
        out.push_str("= ");
    } else {
        let _ = write!(out, "{} = ", id_list(&n.output));
    }
    if let Some(domain) = n.domain.as_deref().filter(|d| !d.is_empty()) {
        let _ = write!(out, "{domain}.");
    }
    out.push_str(n.op_type.as_deref().unwrap_or(""));
    if let Some(overload) = n.overload.as_deref().filter(|o| !o.is_empty()) {
        let _ = write!(out, ":{overload}");
    }

    let has_subgraph = n.attribute.iter().any(|a| {
        matches!(attribute_kind(a), Some(AttrType::Graph | AttrType::Graphs)) || a.g.is_some() || !a.graphs.is_empty()
    });
    if has_subgraph {
        // Attributes after the inputs (the parser accepts that when none came before), one per
        // line, with the subgraph bodies indented below them.
        let _ = writeln!(out, " ({}) <", id_list(&n.input));
        let inner = INDENT.repeat(depth + 1);
        let attrs: Vec<String> =
            n.attribute.iter().map(|a| format!("{inner}{}", attribute_text(a, depth + 1, false, false))).collect();
        out.push_str(&attrs.join(",\n"));
        let _ = writeln!(out, "\n{indent}>");
    } else {
        if !n.attribute.is_empty() {
            let attrs: Vec<String> = n.attribute.iter().map(|a| attribute_text(a, depth, false, false)).collect();
            let _ = write!(out, " <{}>", attrs.join(", "));
        }
        let _ = writeln!(out, " ({})", id_list(&n.input));
    }
}

/// A graph as an attribute value: `name (inputs) => (outputs) <initializers, value_info> { ... }`.
/// `depth` is the indentation level of the line holding the attribute; the closing brace is
/// printed at that level and the nodes one level deeper.
fn graph_text(g: &onnx::GraphProto, depth: usize) -> String {
    let mut out = String::new();
    out.push_str(&graph_name(g.name.as_deref().unwrap_or("")));
    let inputs: Vec<String> = g.input.iter().map(value_info_text).collect();
    let outputs: Vec<String> = g.output.iter().map(value_info_text).collect();
    let _ = write!(out, " ({}) => ({})", inputs.join(", "), outputs.join(", "));
    if !g.initializer.is_empty() || !g.value_info.is_empty() {
        let mut items: Vec<String> = g.initializer.iter().map(initializer_text).collect();
        items.extend(g.value_info.iter().map(value_info_text));
        let _ = write!(out, " <{}>", items.join(", "));
    }
    out.push_str(" {\n");
    if let Some(doc) = g.doc_string.as_deref().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "{}# {}", INDENT.repeat(depth + 1), comment_safe(doc));
    }
    for node in &g.node {
        write_node(&mut out, node, depth + 1);
    }
    out.push_str(&INDENT.repeat(depth));
    out.push('}');
    out
}

/// A subgraph's name sits where the parser only accepts a bare identifier that is neither a type
/// keyword nor a special float (`inf`, `infinity`, `nan`, case-insensitive, as the leading run of
/// letters). Anything else is made into such an identifier.
fn graph_name(name: &str) -> String {
    if is_identifier(name) && !is_type_keyword(name) && !starts_like_float_word(name) {
        return name.to_string();
    }
    let mut s = String::from("_");
    s.extend(name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }));
    s
}

fn starts_like_float_word(name: &str) -> bool {
    // Mirrors the parser's look-ahead: it reads up to 9 letters; if a digit follows it is not a
    // float word; otherwise the letters (lower-cased) are compared to inf/infinity/nan.
    let bytes = name.as_bytes();
    let run = bytes.iter().take(9).take_while(|b| b.is_ascii_alphabetic()).count();
    if run == 0 || bytes.get(run).is_some_and(|b| b.is_ascii_digit()) {
        return false;
    }
    let word = name[..run].to_ascii_lowercase();
    word == "inf" || word == "infinity" || word == "nan"
}

fn initializer_text(t: &onnx::TensorProto) -> String {
    format!("{} {} = {}", tensor_type_text(t), id(t.name.as_deref().unwrap_or("")), tensor_data_text(t))
}

fn value_info_text(vi: &onnx::ValueInfoProto) -> String {
    let name = id(vi.name.as_deref().unwrap_or(""));
    match vi.r#type.as_ref().and_then(type_text) {
        Some(ty) => format!("{ty} {name}"),
        None => name,
    }
}

// -------------------------------------------------------------------------------------------------
// Attributes
// -------------------------------------------------------------------------------------------------

/// `name = value`, or `name: type = value` when the type cannot be inferred from the value (an
/// attribute reference, an empty list, kinds the parser does not infer) or when `annotate` is
/// set (function attribute defaults). `quotable_name`: the position accepts a quoted name (the
/// function signature does, a node's attribute list does not).
fn attribute_text(a: &onnx::AttributeProto, depth: usize, annotate: bool, quotable_name: bool) -> String {
    let raw_name = a.name.as_deref().unwrap_or("");
    let name = if quotable_name { id(raw_name) } else { raw_name.to_string() };
    let Some(kind) = attribute_kind(a) else {
        return match &a.ref_attr_name {
            Some(r) => format!("{name} = @{}", id(r)),
            None => format!("{name}: undefined = ?"),
        };
    };

    if let Some(r) = &a.ref_attr_name {
        return format!("{name}: {} = @{}", kind.name(), id(r));
    }

    let (value, needs_type) = match kind {
        AttrType::Float => (fmt_f32(a.f.unwrap_or(0.0)), false),
        AttrType::Int => (a.i.unwrap_or(0).to_string(), false),
        AttrType::String => (quoted_bytes(a.s.as_deref().unwrap_or(&[])), false),
        AttrType::Tensor => (attr_tensor_text(a.t.as_ref().unwrap_or(&onnx::TensorProto::default())), false),
        AttrType::Graph => (graph_text(a.g.as_ref().unwrap_or(&onnx::GraphProto::default()), depth), false),
        AttrType::TypeProto => (a.tp.as_ref().and_then(type_text).unwrap_or_else(|| "?".to_string()), false),
        AttrType::Floats => (list(a.floats.iter().map(|&f| fmt_f32(f))), a.floats.is_empty()),
        AttrType::Ints => (list(a.ints.iter().map(|i| i.to_string())), a.ints.is_empty()),
        AttrType::Strings => (list(a.strings.iter().map(|s| quoted_bytes(s))), a.strings.is_empty()),
        AttrType::Tensors => (list(a.tensors.iter().map(attr_tensor_text)), true),
        AttrType::Graphs => (list(a.graphs.iter().map(|g| graph_text(g, depth))), true),
        AttrType::TypeProtos => {
            (list(a.type_protos.iter().map(|t| type_text(t).unwrap_or_else(|| "?".to_string()))), true)
        }
        AttrType::SparseTensor => {
            (sparse_tensor_text(a.sparse_tensor.as_ref().unwrap_or(&onnx::SparseTensorProto::default())), true)
        }
        AttrType::SparseTensors => (list(a.sparse_tensors.iter().map(sparse_tensor_text)), true),
    };
    if annotate || needs_type {
        format!("{name}: {} = {value}", kind.name())
    } else {
        format!("{name} = {value}")
    }
}

fn list(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(", "))
}

// -------------------------------------------------------------------------------------------------
// Tensors
// -------------------------------------------------------------------------------------------------

/// A tensor as an attribute value: `float {1.5}`, `int64[2] {1, 2}`, `float[2] name {1.0, 2.0}`.
fn attr_tensor_text(t: &onnx::TensorProto) -> String {
    let mut s = tensor_type_text(t);
    // Only a bare identifier is accepted as the tensor's name in this position.
    if let Some(name) = t.name.as_deref().filter(|n| is_identifier(n)) {
        let _ = write!(s, " {name}");
    }
    s.push(' ');
    s.push_str(&tensor_data_text(t));
    s
}

/// `float`, `int64[2, 3]`: element type and (numeric) dimensions.
fn tensor_type_text(t: &onnx::TensorProto) -> String {
    let mut s = elem_type_name(t.data_type.unwrap_or(0)).to_string();
    if !t.dims.is_empty() {
        let dims: Vec<String> = t.dims.iter().map(|d| d.to_string()).collect();
        let _ = write!(s, "[{}]", dims.join(", "));
    }
    s
}

/// `{v1, v2}` in the representation the parser reads for the tensor's data type, or
/// `["key": "value", ...]` for external data.
fn tensor_data_text(t: &onnx::TensorProto) -> String {
    if t.data_location == Some(DataLocation::External as i32) {
        let entries: Vec<String> = t
            .external_data
            .iter()
            .map(|e| {
                format!("{}: {}", quoted(e.key.as_deref().unwrap_or("")), quoted(e.value.as_deref().unwrap_or("")))
            })
            .collect();
        return format!("[{}]", entries.join(", "));
    }
    let values: Vec<String> = match elements(t) {
        Some(Elements::Signed(v)) => v.iter().map(i64::to_string).collect(),
        Some(Elements::Unsigned(v)) => v.iter().map(u64::to_string).collect(),
        Some(Elements::Float(v)) => v.iter().map(|&v| fmt_f32(v)).collect(),
        Some(Elements::Double(v)) => v.iter().map(|&v| fmt_f64(v)).collect(),
        Some(Elements::Bytes(v)) => v.iter().map(|s| quoted_bytes(s)).collect(),
        None => Vec::new(),
    };
    format!("{{{}}}", values.join(", "))
}

fn sparse_tensor_text(s: &onnx::SparseTensorProto) -> String {
    let dims: Vec<String> = s.dims.iter().map(|d| d.to_string()).collect();
    let default = onnx::TensorProto::default();
    format!(
        "sparse_tensor(values: {}, indices: {}, dims: [{}])",
        attr_tensor_text(s.values.as_ref().unwrap_or(&default)),
        attr_tensor_text(s.indices.as_ref().unwrap_or(&default)),
        dims.join(", ")
    )
}

// -------------------------------------------------------------------------------------------------
// Types
// -------------------------------------------------------------------------------------------------

/// The parser's name for a tensor element type.
fn elem_type_name(data_type: i32) -> &'static str {
    ElemType::from_code(data_type.into()).map_or("undefined", ElemType::onnx_name)
}

fn is_type_keyword(s: &str) -> bool {
    matches!(s, "seq" | "map" | "optional" | "sparse_tensor" | "opaque") || ElemType::from_onnx_name(s).is_some()
}

/// `float[N, 3]`, `float` (rank 0), `float[]` (unknown rank), `seq(float[])`, `map(int64, float)`,
/// `optional(...)`, `sparse_tensor(float[2])`, `opaque(domain, name)`. `None` when the type has
/// nothing printable (no value, or an undefined element type).
fn type_text(t: &onnx::TypeProto) -> Option<String> {
    use onnx::type_proto::Value;
    match t.value.as_ref()? {
        Value::TensorType(tt) => tensor_type_with_shape(tt.elem_type, tt.shape.as_ref()),
        Value::SparseTensorType(st) => {
            Some(format!("sparse_tensor({})", tensor_type_with_shape(st.elem_type, st.shape.as_ref())?))
        }
        Value::SequenceType(s) => Some(format!("seq({})", type_text(s.elem_type.as_deref()?)?)),
        Value::OptionalType(o) => Some(format!("optional({})", type_text(o.elem_type.as_deref()?)?)),
        Value::MapType(m) => {
            let key = elem_type_name(m.key_type.unwrap_or(0));
            if key == "undefined" {
                return None;
            }
            Some(format!("map({key}, {})", type_text(m.value_type.as_deref()?)?))
        }
        Value::OpaqueType(o) => {
            let domain = o.domain.as_deref().unwrap_or("");
            let name = o.name.as_deref().unwrap_or("");
            Some(if domain.is_empty() { format!("opaque({name})") } else { format!("opaque({domain}, {name})") })
        }
    }
}

fn tensor_type_with_shape(elem_type: Option<i32>, shape: Option<&onnx::TensorShapeProto>) -> Option<String> {
    let name = elem_type_name(elem_type.unwrap_or(0));
    if name == "undefined" {
        return None;
    }
    Some(match shape {
        None => format!("{name}[]"),
        Some(s) if s.dim.is_empty() => name.to_string(),
        Some(s) => {
            let dims: Vec<String> = s.dim.iter().map(dim_text).collect();
            format!("{name}[{}]", dims.join(", "))
        }
    })
}

fn dim_text(d: &onnx::tensor_shape_proto::Dimension) -> String {
    use onnx::tensor_shape_proto::dimension::Value;
    match &d.value {
        Some(Value::DimValue(v)) => v.to_string(),
        Some(Value::DimParam(p)) if is_identifier(p) => p.clone(),
        Some(Value::DimParam(p)) => quoted(p),
        None => "?".to_string(),
    }
}

// -------------------------------------------------------------------------------------------------
// Lexical helpers
// -------------------------------------------------------------------------------------------------

/// `[A-Za-z_][A-Za-z0-9_]*`, the parser's identifier.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value/function/attribute name where the parser accepts a quoted identifier: bare when it is
/// an identifier that cannot be mistaken for a type, quoted otherwise (including the empty name).
fn id(s: &str) -> String {
    if is_identifier(s) && !is_type_keyword(s) {
        s.to_string()
    } else {
        quoted(s)
    }
}

fn id_list(names: &[String]) -> String {
    names.iter().map(|n| id(n)).collect::<Vec<_>>().join(", ")
}

/// A string literal: the parser's only escape is a backslash before any character.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn quoted_bytes(b: &[u8]) -> String {
    quoted(&String::from_utf8_lossy(b))
}

/// Text inside a `#` comment must stay on one line.
fn comment_safe(s: &str) -> String {
    s.replace('\r', "\\r").replace('\n', "\\n")
}

/// Shortest text that parses back to the same `f32` and always reads as a float literal
/// (`1.0`, `1e-5`, `-0.0`, `inf`, `-inf`, `nan`; a NaN keeps only its sign).
fn fmt_f32(v: f32) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    // Debug prints the shortest round-tripping digits, always with `.` or an exponent.
    format!("{v:?}")
}

fn fmt_f64(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    format!("{v:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    fn strings(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    fn node(op: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<onnx::AttributeProto>) -> onnx::NodeProto {
        onnx::NodeProto {
            input: strings(inputs),
            output: strings(outputs),
            op_type: s(op),
            domain: s(""),
            attribute: attrs,
            ..Default::default()
        }
    }

    fn attr(name: &str, kind: AttrType) -> onnx::AttributeProto {
        onnx::AttributeProto { name: s(name), r#type: Some(kind.proto_code()), ..Default::default() }
    }

    fn opset(domain: &str, version: i64) -> onnx::OperatorSetIdProto {
        onnx::OperatorSetIdProto { domain: s(domain), version: Some(version) }
    }

    fn tensor_type(elem: ElemType, dims: Option<Vec<onnx::tensor_shape_proto::Dimension>>) -> onnx::TypeProto {
        onnx::TypeProto {
            value: Some(onnx::type_proto::Value::TensorType(onnx::type_proto::Tensor {
                elem_type: Some(elem.code()),
                shape: dims.map(|dim| onnx::TensorShapeProto { dim }),
            })),
            denotation: None,
        }
    }

    fn dim_param(p: &str) -> onnx::tensor_shape_proto::Dimension {
        onnx::tensor_shape_proto::Dimension {
            value: Some(onnx::tensor_shape_proto::dimension::Value::DimParam(p.to_string())),
            denotation: None,
        }
    }

    fn dim_value(v: i64) -> onnx::tensor_shape_proto::Dimension {
        onnx::tensor_shape_proto::Dimension {
            value: Some(onnx::tensor_shape_proto::dimension::Value::DimValue(v)),
            denotation: None,
        }
    }

    fn vi(name: &str, ty: Option<onnx::TypeProto>) -> onnx::ValueInfoProto {
        onnx::ValueInfoProto { name: s(name), r#type: ty, ..Default::default() }
    }

    fn function(name: &str, inputs: &[&str], outputs: &[&str], nodes: Vec<onnx::NodeProto>) -> onnx::FunctionProto {
        onnx::FunctionProto {
            name: s(name),
            domain: s("this"),
            input: strings(inputs),
            output: strings(outputs),
            node: nodes,
            opset_import: vec![opset("", 18)],
            ..Default::default()
        }
    }

    #[test]
    fn minimal_function() {
        let f = function("F", &["x", "y"], &["z"], vec![node("Add", &["x", "y"], &["z"], vec![])]);
        assert_eq!(
            function_to_text(&f),
            "<\n  domain: \"this\",\n  opset_import: [\"\" : 18]\n>\n\
             F (x, y) => (z)\n{\n   z = Add (x, y)\n}\n"
        );
    }

    #[test]
    fn header_with_overload_doc_and_metadata() {
        let mut f = function("F", &["x"], &["y"], vec![node("Identity", &["x"], &["y"], vec![])]);
        f.overload = s("v2");
        f.doc_string = s("Says \"hi\".\nSecond line \\ done.");
        f.opset_import.push(opset("com.microsoft", 1));
        f.metadata_props
            .push(onnx::StringStringEntryProto { key: s("onnxsc.signature"), value: s("F(x: T) -> T\nwhere T") });
        assert_eq!(
            function_to_text(&f),
            "# metadata_props: \"onnxsc.signature\": \"F(x: T) -> T\\nwhere T\"\n\
             <\n  domain: \"this\",\n  overload: \"v2\",\n  opset_import: [\"\" : 18, \"com.microsoft\" : 1],\n\
             \x20 doc_string: \"Says \\\"hi\\\".\nSecond line \\\\ done.\"\n>\n\
             F (x) => (y)\n{\n   y = Identity (x)\n}\n"
        );
    }

    #[test]
    fn signature_attributes_with_and_without_defaults() {
        let mut f = function("F", &["x"], &["y"], vec![node("Identity", &["x"], &["y"], vec![])]);
        f.attribute = strings(&["alpha", "beta"]);
        let mut gamma = attr("gamma", AttrType::Float);
        gamma.f = Some(1.0);
        let mut mode = attr("mode", AttrType::String);
        mode.s = Some(b"none".to_vec());
        let mut axes = attr("axes", AttrType::Ints);
        axes.ints = vec![1, 2];
        let empty = attr("empty", AttrType::Floats);
        let mut eps = attr("eps", AttrType::Float);
        eps.f = Some(1e-5);
        f.attribute_proto = vec![gamma, mode, axes, empty, eps];
        let text = function_to_text(&f);
        assert_eq!(
            text.lines().nth(4).unwrap(),
            "F <alpha, beta, gamma: float = 1.0, mode: string = \"none\", axes: ints = [1, 2], \
             empty: floats = [], eps: float = 1e-5> (x) => (y)"
        );
    }

    #[test]
    fn node_forms() {
        let mut named = node("Clip", &["x", "", "hi"], &["y", ""], vec![]);
        named.name = s("clip 1");
        let mut ms = node("Gelu", &["y"], &["g"], vec![]);
        ms.domain = s("com.microsoft");
        let mut ov = node("Helper", &["g"], &["h"], vec![]);
        ov.domain = s("this");
        ov.overload = s("fast");
        let no_out = node("Print", &["h"], &[], vec![]);
        let odd = node("Identity", &["x.1", "float"], &["onnx::Out_0"], vec![]);
        let f = function("F", &["x", "hi"], &["h"], vec![named, ms, ov, no_out, odd]);
        let text = function_to_text(&f);
        let body: Vec<&str> = text.lines().skip(6).collect();
        assert_eq!(
            body,
            vec![
                "   [\"clip 1\"] y, \"\" = Clip (x, \"\", hi)",
                "   g = com.microsoft.Gelu (y)",
                "   h = this.Helper:fast (g)",
                "   = Print (h)",
                "   \"onnx::Out_0\" = Identity (\"x.1\", \"float\")",
                "}",
            ]
        );
    }

    #[test]
    fn scalar_attributes_and_lists() {
        let mut f32a = attr("alpha", AttrType::Float);
        f32a.f = Some(0.1);
        let mut inta = attr("axis", AttrType::Int);
        inta.i = Some(-1);
        let mut stra = attr("mode", AttrType::String);
        stra.s = Some(b"a\"b\\c".to_vec());
        let mut floats = attr("scales", AttrType::Floats);
        floats.floats = vec![1.0, -2.5, f32::INFINITY, f32::NEG_INFINITY, 1e-7, 3e38, -0.0];
        let mut ints = attr("pads", AttrType::Ints);
        ints.ints = vec![i64::MIN, 0, i64::MAX];
        let mut strs = attr("names", AttrType::Strings);
        strs.strings = vec![b"x".to_vec(), Vec::new()];
        let empty_ints = attr("none", AttrType::Ints);
        let n = node("Foo", &["x"], &["y"], vec![f32a, inta, stra, floats, ints, strs, empty_ints]);
        let f = function("F", &["x"], &["y"], vec![n]);
        let text = function_to_text(&f);
        assert_eq!(
            text.lines().nth(6).unwrap(),
            "   y = Foo <alpha = 0.1, axis = -1, mode = \"a\\\"b\\\\c\", \
             scales = [1.0, -2.5, inf, -inf, 1e-7, 3e38, -0.0], \
             pads = [-9223372036854775808, 0, 9223372036854775807], names = [\"x\", \"\"], \
             none: ints = []> (x)"
        );
    }

    #[test]
    fn float_formatting() {
        assert_eq!(fmt_f32(1.0), "1.0");
        assert_eq!(fmt_f32(1e-5), "1e-5");
        assert_eq!(fmt_f32(0.1), "0.1");
        assert_eq!(fmt_f32(1e16), "1e16");
        assert_eq!(fmt_f32(f32::NAN), "nan");
        assert_eq!(fmt_f32(-f32::NAN), "-nan");
        assert_eq!(fmt_f32(f32::from_bits(1)), "1e-45");
        assert_eq!(fmt_f64(1e-300), "1e-300");
        assert_eq!(fmt_f64(2.0), "2.0");
    }

    #[test]
    fn attribute_references() {
        let mut r = attr("value_float", AttrType::Float);
        r.ref_attr_name = s("alpha");
        let mut r2 = attr("to", AttrType::Int);
        r2.ref_attr_name = s("dtype");
        let mut f = function(
            "F",
            &[],
            &["y", "z"],
            vec![node("Constant", &[], &["y"], vec![r]), node("Cast", &["y"], &["z"], vec![r2])],
        );
        f.attribute = strings(&["alpha", "dtype"]);
        let text = function_to_text(&f);
        assert_eq!(
            text.lines().skip(4).collect::<Vec<_>>(),
            vec![
                "F <alpha, dtype> () => (y, z)",
                "{",
                "   y = Constant <value_float: float = @alpha> ()",
                "   z = Cast <to: int = @dtype> (y)",
                "}",
            ]
        );
    }

    #[test]
    fn tensor_attributes() {
        let mut scalar = attr("value", AttrType::Tensor);
        scalar.t = Some(onnx::TensorProto {
            data_type: Some(ElemType::Float.code()),
            float_data: vec![1.5],
            ..Default::default()
        });
        let mut vec_i64 = attr("value", AttrType::Tensor);
        vec_i64.t = Some(onnx::TensorProto {
            dims: vec![2],
            data_type: Some(ElemType::Int64.code()),
            int64_data: vec![1, 2],
            name: s("shape"),
            ..Default::default()
        });
        let mut raw = attr("value", AttrType::Tensor);
        let mut bytes = Vec::new();
        for v in [1.0f32, -0.5] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        raw.t = Some(onnx::TensorProto {
            dims: vec![1, 2],
            data_type: Some(ElemType::Float.code()),
            raw_data: Some(bytes),
            ..Default::default()
        });
        let mut b = attr("value", AttrType::Tensor);
        b.t = Some(onnx::TensorProto { dims: vec![0], data_type: Some(ElemType::Bool.code()), ..Default::default() });
        let mut st = attr("value", AttrType::Tensor);
        st.t = Some(onnx::TensorProto {
            data_type: Some(ElemType::String.code()),
            string_data: vec![b"hi \"you\"".to_vec()],
            name: s("not an identifier"),
            ..Default::default()
        });
        let mut d = attr("value", AttrType::Tensor);
        d.t = Some(onnx::TensorProto {
            dims: vec![2],
            data_type: Some(ElemType::Double.code()),
            double_data: vec![0.1, 1e300],
            ..Default::default()
        });
        let f = function(
            "F",
            &[],
            &["a"],
            vec![
                node("Constant", &[], &["a"], vec![scalar]),
                node("Constant", &[], &["b"], vec![vec_i64]),
                node("Constant", &[], &["c"], vec![raw]),
                node("Constant", &[], &["d"], vec![b]),
                node("Constant", &[], &["e"], vec![st]),
                node("Constant", &[], &["g"], vec![d]),
            ],
        );
        let text = function_to_text(&f);
        assert_eq!(
            text.lines().skip(6).collect::<Vec<_>>(),
            vec![
                "   a = Constant <value = float {1.5}> ()",
                "   b = Constant <value = int64[2] shape {1, 2}> ()",
                "   c = Constant <value = float[1, 2] {1.0, -0.5}> ()",
                "   d = Constant <value = bool[0] {}> ()",
                "   e = Constant <value = string {\"hi \\\"you\\\"\"}> ()",
                "   g = Constant <value = double[2] {0.1, 1e300}> ()",
                "}",
            ]
        );
    }

    #[test]
    fn if_with_subgraphs() {
        let mut then_g = attr("then_branch", AttrType::Graph);
        then_g.g = Some(onnx::GraphProto {
            name: s("then_graph"),
            node: vec![node("Identity", &["x"], &["y_then"], vec![])],
            output: vec![vi("y_then", Some(tensor_type(ElemType::Float, None)))],
            ..Default::default()
        });
        let mut else_g = attr("else_branch", AttrType::Graph);
        else_g.g = Some(onnx::GraphProto {
            name: s("else.graph"),
            node: vec![node("Neg", &["x"], &["y_else"], vec![])],
            output: vec![vi("y_else", None)],
            doc_string: s("the else branch"),
            ..Default::default()
        });
        let f = function("F", &["c", "x"], &["y"], vec![node("If", &["c"], &["y"], vec![then_g, else_g])]);
        assert_eq!(
            function_to_text(&f),
            "<\n  domain: \"this\",\n  opset_import: [\"\" : 18]\n>\n\
             F (c, x) => (y)\n\
             {\n\
             \x20  y = If (c) <\n\
             \x20     then_branch = then_graph () => (float[] y_then) {\n\
             \x20        y_then = Identity (x)\n\
             \x20     },\n\
             \x20     else_branch = _else_graph () => (y_else) {\n\
             \x20        # the else branch\n\
             \x20        y_else = Neg (x)\n\
             \x20     }\n\
             \x20  >\n\
             }\n"
        );
    }

    #[test]
    fn loop_body_with_typed_inputs_and_nested_if() {
        let mut inner_then = attr("then_branch", AttrType::Graph);
        inner_then.g = Some(onnx::GraphProto {
            name: s("t"),
            node: vec![node("Identity", &["s"], &["r1"], vec![])],
            output: vec![vi("r1", None)],
            ..Default::default()
        });
        let mut inner_else = attr("else_branch", AttrType::Graph);
        inner_else.g = Some(onnx::GraphProto {
            name: s("e"),
            node: vec![node("Neg", &["s"], &["r2"], vec![])],
            output: vec![vi("r2", None)],
            ..Default::default()
        });
        let mut body = attr("body", AttrType::Graph);
        body.g = Some(onnx::GraphProto {
            name: s("body"),
            input: vec![
                vi("i", Some(tensor_type(ElemType::Int64, Some(vec![])))),
                vi("cond", Some(tensor_type(ElemType::Bool, Some(vec![])))),
                vi("s", Some(tensor_type(ElemType::Float, Some(vec![dim_param("N"), dim_value(3)])))),
            ],
            output: vec![
                vi("cond_out", Some(tensor_type(ElemType::Bool, Some(vec![])))),
                vi("s_out", Some(tensor_type(ElemType::Float, Some(vec![dim_param("N"), Default::default()])))),
            ],
            node: vec![
                node("Identity", &["cond"], &["cond_out"], vec![]),
                node("If", &["cond"], &["s_out"], vec![inner_then, inner_else]),
            ],
            ..Default::default()
        });
        let f = function("F", &["n", "s0"], &["s"], vec![node("Loop", &["n", "", "s0"], &["s"], vec![body])]);
        let text = function_to_text(&f);
        assert_eq!(
            text.lines().skip(4).collect::<Vec<_>>(),
            vec![
                "F (n, s0) => (s)",
                "{",
                "   s = Loop (n, \"\", s0) <",
                "      body = body (int64 i, bool cond, float[N, 3] s) => (bool cond_out, float[N, ?] s_out) {",
                "         cond_out = Identity (cond)",
                "         s_out = If (cond) <",
                "            then_branch = t () => (r1) {",
                "               r1 = Identity (s)",
                "            },",
                "            else_branch = e () => (r2) {",
                "               r2 = Neg (s)",
                "            }",
                "         >",
                "      }",
                "   >",
                "}",
            ]
        );
    }

    #[test]
    fn graph_names_that_the_parser_would_misread() {
        assert_eq!(graph_name("then_branch"), "then_branch");
        assert_eq!(graph_name("float"), "_float");
        assert_eq!(graph_name("inf_branch"), "_inf_branch");
        assert_eq!(graph_name("nan"), "_nan");
        assert_eq!(graph_name("nan1"), "nan1");
        assert_eq!(graph_name("infinityx"), "infinityx");
        assert_eq!(graph_name(""), "_");
        assert_eq!(graph_name("a-b"), "_a_b");
    }

    #[test]
    fn value_info_initializers_and_types() {
        let mut f = function("F", &["x"], &["y"], vec![node("Identity", &["x"], &["y"], vec![])]);
        let seq = onnx::TypeProto {
            value: Some(onnx::type_proto::Value::SequenceType(Box::new(onnx::type_proto::Sequence {
                elem_type: Some(Box::new(tensor_type(ElemType::Float, None))),
            }))),
            denotation: None,
        };
        let map = onnx::TypeProto {
            value: Some(onnx::type_proto::Value::MapType(Box::new(onnx::type_proto::Map {
                key_type: Some(ElemType::Int64.code()),
                value_type: Some(Box::new(tensor_type(ElemType::Float, Some(vec![])))),
            }))),
            denotation: None,
        };
        let opt = onnx::TypeProto {
            value: Some(onnx::type_proto::Value::OptionalType(Box::new(onnx::type_proto::Optional {
                elem_type: Some(Box::new(seq.clone())),
            }))),
            denotation: None,
        };
        f.value_info = vec![
            vi("x", Some(tensor_type(ElemType::Float16, Some(vec![dim_param("batch size")])))),
            vi("s", Some(seq)),
            vi("m", Some(map)),
            vi("o", Some(opt)),
            vi("u", None),
        ];
        let mut g = attr("body", AttrType::Graph);
        g.g = Some(onnx::GraphProto {
            name: s("g"),
            initializer: vec![onnx::TensorProto {
                dims: vec![2],
                data_type: Some(ElemType::Int32.code()),
                int32_data: vec![7, -7],
                name: s("w"),
                ..Default::default()
            }],
            value_info: vec![vi("v", Some(tensor_type(ElemType::Int32, Some(vec![dim_value(2)]))))],
            output: vec![vi("w", None)],
            ..Default::default()
        });
        let mut tp = attr("dtype", AttrType::TypeProto);
        tp.tp = Some(tensor_type(ElemType::Uint8, Some(vec![dim_value(2)])));
        f.node.push(node("Foo", &[], &["q"], vec![tp, g]));
        let text = function_to_text(&f);
        assert_eq!(
            text.lines().skip(4).collect::<Vec<_>>(),
            vec![
                "F (x) => (y) <float16[\"batch size\"] x, seq(float[]) s, map(int64, float) m, \
                 optional(seq(float[])) o, u>",
                "{",
                "   y = Identity (x)",
                "   q = Foo () <",
                "      dtype = uint8[2],",
                "      body = g () => (w) <int32[2] w = {7, -7}, int32[2] v> {",
                "      }",
                "   >",
                "}",
            ]
        );
    }

    #[test]
    fn several_functions_are_separated_by_a_blank_line() {
        let f = function("F", &["x"], &["y"], vec![node("Identity", &["x"], &["y"], vec![])]);
        let mut g = f.clone();
        g.name = s("G");
        let text = functions_to_text(&[f.clone(), g.clone()]);
        assert_eq!(text, format!("{}\n{}", function_to_text(&f), function_to_text(&g)));
        assert!(text.contains("}\n\n<\n"));
        assert_eq!(functions_to_text(&[]), "");
    }

    #[test]
    fn header_is_omitted_when_empty() {
        let f = onnx::FunctionProto {
            name: s("F"),
            input: strings(&["x"]),
            output: strings(&["x2"]),
            node: vec![node("Identity", &["x"], &["x2"], vec![])],
            ..Default::default()
        };
        assert_eq!(function_to_text(&f), "F (x) => (x2)\n{\n   x2 = Identity (x)\n}\n");
    }
}
