//! Whether a function compiles back the same: the two functions with every value, attribute
//! parameter and the function itself named by position, compared node by node (subgraphs
//! inside their node). What `onnxsc decompile` checks of its own output (W1101).

use crate::onnx::tensor::{elements, Elements};
use crate::proto::onnx::{AttributeProto, FunctionProto, GraphProto, NodeProto, TensorProto};
use crate::schema::normalize_domain;
use std::collections::HashMap;
use std::fmt::Write;

/// The first difference between `expected` and what compiling its decompiled text gave,
/// names aside; `None` when they are the same.
pub fn difference(expected: &FunctionProto, actual: &FunctionProto) -> Option<String> {
    let (e, a) = (Canon::function(expected), Canon::function(actual));
    if e.head != a.head {
        return Some("its parameters, domain or opset imports differ".into());
    }
    for (i, (x, y)) in e.nodes.iter().zip(&a.nodes).enumerate() {
        if x != y {
            return Some(format!("node {i} (`{}`) differs", expected.node.get(i).map_or("", NodeProto::op_type)));
        }
    }
    if e.nodes.len() != a.nodes.len() {
        return Some(format!("it has {} nodes, and {} came back", e.nodes.len(), a.nodes.len()));
    }
    (e.outputs != a.outputs).then(|| "its outputs differ".into())
}

struct Lines {
    head: String,
    nodes: Vec<String>,
    outputs: String,
}

#[derive(Default)]
struct Canon<'a> {
    scopes: Vec<HashMap<&'a str, usize>>,
    next: usize,
    attributes: HashMap<&'a str, usize>,
}

impl<'a> Canon<'a> {
    fn function(f: &'a FunctionProto) -> Lines {
        let mut c = Canon { scopes: vec![HashMap::new()], ..Canon::default() };
        let names = f.attribute.iter().map(String::as_str).chain(f.attribute_proto.iter().map(AttributeProto::name));
        c.attributes = names.enumerate().map(|(i, n)| (n, i)).collect();
        let inputs: Vec<String> = f.input.iter().map(|i| c.define(i)).collect();
        let defaults: Vec<String> = f.attribute_proto.iter().map(|a| c.value(a)).collect();
        let mut imports: Vec<(&str, i64)> =
            f.opset_import.iter().map(|o| (normalize_domain(o.domain()), o.version())).collect();
        imports.sort_unstable();
        let domain = match normalize_domain(f.domain()) {
            "" => "this",
            d => d,
        };
        let head = format!("{domain} {imports:?} {inputs:?} {} {defaults:?}", f.attribute.len());
        let nodes = f.node.iter().map(|n| c.node(n)).collect();
        let outputs = format!("{:?}", f.output.iter().map(|o| c.lookup(o)).collect::<Vec<_>>());
        Lines { head, nodes, outputs }
    }

    fn define(&mut self, name: &'a str) -> String {
        if name.is_empty() {
            return String::new();
        }
        self.next += 1;
        if let Some(top) = self.scopes.last_mut() {
            top.insert(name, self.next);
        }
        format!("v{}", self.next)
    }

    fn lookup(&self, name: &str) -> String {
        match self.scopes.iter().rev().find_map(|s| s.get(name)) {
            Some(n) => format!("v{n}"),
            None if name.is_empty() => String::new(),
            None => format!("?{name}"),
        }
    }

    fn node(&mut self, n: &'a NodeProto) -> String {
        let mut attributes: Vec<&AttributeProto> = n.attribute.iter().collect();
        attributes.sort_by_key(|a| a.name());
        let attributes: Vec<String> =
            attributes.into_iter().map(|a| format!("{}={}", a.name(), self.value(a))).collect();
        let inputs: Vec<String> = n.input.iter().map(|i| self.lookup(i)).collect();
        let outputs: Vec<String> = n.output.iter().map(|o| self.define(o)).collect();
        format!("{outputs:?}={}.{}({inputs:?}){attributes:?}", normalize_domain(n.domain()), n.op_type())
    }

    fn graph(&mut self, g: &'a GraphProto) -> String {
        self.scopes.push(HashMap::new());
        let inputs: Vec<String> = g.input.iter().map(|i| self.define(i.name())).collect();
        let initializers: Vec<String> =
            g.initializer.iter().map(|t| format!("{}={}", self.define(t.name()), tensor(t))).collect();
        let nodes: Vec<String> = g.node.iter().map(|n| self.node(n)).collect();
        let outputs: Vec<String> = g.output.iter().map(|o| self.lookup(o.name())).collect();
        self.scopes.pop();
        format!("graph{inputs:?}{initializers:?}{{{}}}{outputs:?}", nodes.join(";"))
    }

    /// An attribute's type and value (a reference: the position of the parameter it names).
    fn value(&mut self, a: &'a AttributeProto) -> String {
        let ty = a.r#type.unwrap_or(0);
        if let Some(r) = &a.ref_attr_name {
            return format!("{ty}@{:?}", self.attributes.get(r.as_str()));
        }
        let mut out = format!("{ty}:");
        let _ = match () {
            () if a.f.is_some() => write!(out, "{}", float(a.f())),
            () if a.i.is_some() => write!(out, "{}", a.i()),
            () if a.s.is_some() => write!(out, "{:?}", a.s()),
            () => Ok(()),
        };
        let floats: Vec<String> = a.floats.iter().map(|f| float(*f)).collect();
        let _ = write!(out, "{floats:?}{:?}{:?}", a.ints, a.strings);
        for t in a.t.iter().chain(&a.tensors) {
            out.push_str(&tensor(t));
        }
        for g in a.g.iter().chain(&a.graphs) {
            out.push_str(&self.graph(g));
        }
        if a.sparse_tensor.is_some() || !a.sparse_tensors.is_empty() || a.tp.is_some() || !a.type_protos.is_empty() {
            out.push_str("(unsupported)");
        }
        out
    }
}

/// A float32 by its bits, every NaN alike.
fn float(f: f32) -> String {
    if f.is_nan() {
        "nan".into()
    } else {
        f.to_bits().to_string()
    }
}

/// A tensor by its type, shape and values, whatever field holds them and whatever its name.
fn tensor(t: &TensorProto) -> String {
    let values = match elements(t) {
        Some(Elements::Signed(v)) => format!("{:?}", v.iter().map(|x| i128::from(*x)).collect::<Vec<_>>()),
        Some(Elements::Unsigned(v)) => format!("{:?}", v.iter().map(|x| i128::from(*x)).collect::<Vec<_>>()),
        Some(Elements::Float(v)) => format!("{:?}", v.iter().map(|x| float(*x)).collect::<Vec<_>>()),
        Some(Elements::Double(v)) => {
            format!(
                "{:?}",
                v.iter().map(|x| if x.is_nan() { "nan".into() } else { x.to_bits().to_string() }).collect::<Vec<_>>()
            )
        }
        Some(Elements::Bytes(v)) => format!("{v:?}"),
        None => "?".into(),
    };
    format!("tensor({:?},{:?},{values})", t.data_type, t.dims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(value_name: &str, alpha: f32) -> FunctionProto {
        let node = |inputs: &[&str], op: &str, out: &str, attribute: Vec<AttributeProto>| NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![out.into()],
            op_type: Some(op.into()),
            attribute,
            ..Default::default()
        };
        let alpha =
            AttributeProto { name: Some("alpha".into()), r#type: Some(1), f: Some(alpha), ..Default::default() };
        FunctionProto {
            input: vec!["x".into()],
            output: vec!["y".into()],
            node: vec![node(&["x"], "LeakyRelu", value_name, vec![alpha]), node(&[value_name], "Neg", "y", vec![])],
            ..Default::default()
        }
    }

    #[test]
    fn names_aside_values_count() {
        assert_eq!(difference(&f("a", 0.5), &f("b", 0.5)), None);
        assert_eq!(difference(&f("a", 0.5), &f("a", 0.25)).as_deref(), Some("node 0 (`LeakyRelu`) differs"));
        let mut shorter = f("a", 0.5);
        shorter.node.pop();
        assert!(difference(&f("a", 0.5), &shorter).is_some());
    }
}
