//! Attribute types: ONNX's (`AttributeProto.AttributeType`) and the Python types that make a
//! parameter of an ONNX Script function an attribute.

use crate::proto::onnx::AttributeProto;

/// The type of an attribute, named like `AttributeProto.AttributeType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttrType {
    /// `FLOAT` (1), text syntax `float`.
    Float,
    /// `INT` (2), text syntax `int`.
    Int,
    /// `STRING` (3), text syntax `string`.
    String,
    /// `TENSOR` (4), text syntax `tensor`.
    Tensor,
    /// `GRAPH` (5), text syntax `graph`.
    Graph,
    /// `SPARSE_TENSOR` (11), text syntax `sparse_tensor`.
    SparseTensor,
    /// `TYPE_PROTO` (13), text syntax `type_proto`.
    TypeProto,
    /// `FLOATS` (6), text syntax `floats`.
    Floats,
    /// `INTS` (7), text syntax `ints`.
    Ints,
    /// `STRINGS` (8), text syntax `strings`.
    Strings,
    /// `TENSORS` (9), text syntax `tensors`.
    Tensors,
    /// `GRAPHS` (10), text syntax `graphs`.
    Graphs,
    /// `SPARSE_TENSORS` (12), text syntax `sparse_tensors`.
    SparseTensors,
    /// `TYPE_PROTOS` (14), text syntax `type_protos`.
    TypeProtos,
}

impl AttrType {
    /// Every attribute type, in `AttributeProto.AttributeType` number order.
    pub const ALL: [AttrType; 14] = [
        AttrType::Float,
        AttrType::Int,
        AttrType::String,
        AttrType::Tensor,
        AttrType::Graph,
        AttrType::Floats,
        AttrType::Ints,
        AttrType::Strings,
        AttrType::Tensors,
        AttrType::Graphs,
        AttrType::SparseTensor,
        AttrType::SparseTensors,
        AttrType::TypeProto,
        AttrType::TypeProtos,
    ];

    /// The `AttributeProto.type` enum number (FLOAT = 1 ... TYPE_PROTOS = 14).
    pub fn proto_code(self) -> i32 {
        match self {
            AttrType::Float => 1,
            AttrType::Int => 2,
            AttrType::String => 3,
            AttrType::Tensor => 4,
            AttrType::Graph => 5,
            AttrType::Floats => 6,
            AttrType::Ints => 7,
            AttrType::Strings => 8,
            AttrType::Tensors => 9,
            AttrType::Graphs => 10,
            AttrType::SparseTensor => 11,
            AttrType::SparseTensors => 12,
            AttrType::TypeProto => 13,
            AttrType::TypeProtos => 14,
        }
    }

    /// The inverse of [`AttrType::proto_code`] (`None` for UNDEFINED = 0 and unknown codes).
    pub fn from_proto_code(code: i32) -> Option<AttrType> {
        AttrType::ALL.into_iter().find(|t| t.proto_code() == code)
    }

    /// The name in the ONNX text syntax: `float`, `int`, `string`, `tensor`, `graph`,
    /// `sparse_tensor`, `type_proto`, `floats`, `ints`, `strings`, `tensors`, `graphs`,
    /// `sparse_tensors`, `type_protos`.
    pub fn name(self) -> &'static str {
        match self {
            AttrType::Float => "float",
            AttrType::Int => "int",
            AttrType::String => "string",
            AttrType::Tensor => "tensor",
            AttrType::Graph => "graph",
            AttrType::SparseTensor => "sparse_tensor",
            AttrType::TypeProto => "type_proto",
            AttrType::Floats => "floats",
            AttrType::Ints => "ints",
            AttrType::Strings => "strings",
            AttrType::Tensors => "tensors",
            AttrType::Graphs => "graphs",
            AttrType::SparseTensors => "sparse_tensors",
            AttrType::TypeProtos => "type_protos",
        }
    }

    /// The inverse of [`AttrType::name`].
    pub fn from_name(name: &str) -> Option<AttrType> {
        AttrType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The `AttributeProto.AttributeType` enum name: `FLOAT`, `INTS`, `SPARSE_TENSOR`, ...
    pub fn proto_name(self) -> &'static str {
        match self {
            AttrType::Float => "FLOAT",
            AttrType::Int => "INT",
            AttrType::String => "STRING",
            AttrType::Tensor => "TENSOR",
            AttrType::Graph => "GRAPH",
            AttrType::SparseTensor => "SPARSE_TENSOR",
            AttrType::TypeProto => "TYPE_PROTO",
            AttrType::Floats => "FLOATS",
            AttrType::Ints => "INTS",
            AttrType::Strings => "STRINGS",
            AttrType::Tensors => "TENSORS",
            AttrType::Graphs => "GRAPHS",
            AttrType::SparseTensors => "SPARSE_TENSORS",
            AttrType::TypeProtos => "TYPE_PROTOS",
        }
    }

    /// The inverse of [`AttrType::proto_name`].
    pub fn from_proto_name(name: &str) -> Option<AttrType> {
        AttrType::ALL.into_iter().find(|t| t.proto_name() == name)
    }

    /// The element type of a list type (`Ints` -> `Int`), `None` for scalar types.
    pub fn element(self) -> Option<AttrType> {
        match self {
            AttrType::Floats => Some(AttrType::Float),
            AttrType::Ints => Some(AttrType::Int),
            AttrType::Strings => Some(AttrType::String),
            AttrType::Tensors => Some(AttrType::Tensor),
            AttrType::Graphs => Some(AttrType::Graph),
            AttrType::SparseTensors => Some(AttrType::SparseTensor),
            AttrType::TypeProtos => Some(AttrType::TypeProto),
            _ => None,
        }
    }
}

/// An attribute's type: its `type` field, or (when that is missing) the one its value fields
/// show. `None` when neither says (and for a reference without a type).
pub fn attribute_kind(a: &AttributeProto) -> Option<AttrType> {
    let declared = a.r#type.and_then(AttrType::from_proto_code);
    if declared.is_some() || a.ref_attr_name.is_some() {
        return declared;
    }
    Some(if a.f.is_some() {
        AttrType::Float
    } else if a.i.is_some() {
        AttrType::Int
    } else if a.s.is_some() {
        AttrType::String
    } else if a.t.is_some() {
        AttrType::Tensor
    } else if a.g.is_some() {
        AttrType::Graph
    } else if a.sparse_tensor.is_some() {
        AttrType::SparseTensor
    } else if a.tp.is_some() {
        AttrType::TypeProto
    } else if !a.floats.is_empty() {
        AttrType::Floats
    } else if !a.ints.is_empty() {
        AttrType::Ints
    } else if !a.strings.is_empty() {
        AttrType::Strings
    } else if !a.tensors.is_empty() {
        AttrType::Tensors
    } else if !a.graphs.is_empty() {
        AttrType::Graphs
    } else if !a.sparse_tensors.is_empty() {
        AttrType::SparseTensors
    } else if !a.type_protos.is_empty() {
        AttrType::TypeProtos
    } else {
        return None;
    })
}

/// The Python types that make a parameter an attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    Float,
    Int,
    Str,
    Bool,
    Floats,
    Ints,
    Strs,
    Bools,
}

impl AttrKind {
    pub const ALL: [AttrKind; 8] = [
        AttrKind::Float,
        AttrKind::Int,
        AttrKind::Str,
        AttrKind::Bool,
        AttrKind::Floats,
        AttrKind::Ints,
        AttrKind::Strs,
        AttrKind::Bools,
    ];

    /// The ONNX attribute type that carries it (bool travels as INT).
    pub fn onnx_type(self) -> AttrType {
        match self {
            AttrKind::Float => AttrType::Float,
            AttrKind::Int | AttrKind::Bool => AttrType::Int,
            AttrKind::Str => AttrType::String,
            AttrKind::Floats => AttrType::Floats,
            AttrKind::Ints | AttrKind::Bools => AttrType::Ints,
            AttrKind::Strs => AttrType::Strings,
        }
    }

    pub fn python_name(self) -> &'static str {
        match self {
            AttrKind::Float => "float",
            AttrKind::Int => "int",
            AttrKind::Str => "str",
            AttrKind::Bool => "bool",
            AttrKind::Floats => "list[float]",
            AttrKind::Ints => "list[int]",
            AttrKind::Strs => "list[str]",
            AttrKind::Bools => "list[bool]",
        }
    }

    /// The inverse of [`AttrKind::python_name`].
    pub fn from_python_name(name: &str) -> Option<AttrKind> {
        AttrKind::ALL.into_iter().find(|k| k.python_name() == name)
    }

    /// The list of this kind (`int` → `list[int]`); `None` for a list.
    pub fn list(self) -> Option<AttrKind> {
        match self {
            AttrKind::Float => Some(AttrKind::Floats),
            AttrKind::Int => Some(AttrKind::Ints),
            AttrKind::Str => Some(AttrKind::Strs),
            AttrKind::Bool => Some(AttrKind::Bools),
            _ => None,
        }
    }

    pub fn is_bool(self) -> bool {
        matches!(self, AttrKind::Bool | AttrKind::Bools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::onnx::attribute_proto::AttributeType;

    #[test]
    fn attr_type_codes_and_names() {
        assert_eq!(AttrType::Float.proto_code(), 1);
        assert_eq!(AttrType::Graph.proto_code(), 5);
        assert_eq!(AttrType::Floats.proto_code(), 6);
        assert_eq!(AttrType::SparseTensor.proto_code(), 11);
        assert_eq!(AttrType::TypeProtos.proto_code(), 14);
        for (i, t) in AttrType::ALL.into_iter().enumerate() {
            assert_eq!(t.proto_code(), i as i32 + 1);
            assert_eq!(AttrType::from_proto_code(t.proto_code()), Some(t));
            assert_eq!(AttrType::from_name(t.name()), Some(t));
            assert_eq!(AttrType::from_proto_name(t.proto_name()), Some(t));
            assert_eq!(t.name().to_uppercase(), t.proto_name());
        }
        assert_eq!(AttrType::from_proto_code(0), None);
        assert_eq!(AttrType::Ints.name(), "ints");
        assert_eq!(AttrType::TypeProto.name(), "type_proto");
        assert_eq!(AttrType::Ints.element(), Some(AttrType::Int));
        assert_eq!(AttrType::Int.element(), None);
    }

    #[test]
    fn codes_and_names_are_those_of_the_protobuf_schema() {
        for t in AttrType::ALL {
            let generated = AttributeType::try_from(t.proto_code()).map(|g| g.as_str_name());
            assert_eq!(generated, Ok(t.proto_name()));
        }
    }

    #[test]
    fn attribute_kind_prefers_the_declared_type() {
        let declared = AttributeProto { r#type: Some(AttrType::Ints.proto_code()), i: Some(1), ..Default::default() };
        assert_eq!(attribute_kind(&declared), Some(AttrType::Ints));
        let guessed = AttributeProto { floats: vec![1.0], ..Default::default() };
        assert_eq!(attribute_kind(&guessed), Some(AttrType::Floats));
        let reference = AttributeProto { ref_attr_name: Some("alpha".into()), f: Some(1.0), ..Default::default() };
        assert_eq!(attribute_kind(&reference), None);
        assert_eq!(attribute_kind(&AttributeProto::default()), None);
    }

    #[test]
    fn python_attribute_types() {
        for k in AttrKind::ALL {
            assert_eq!(AttrKind::from_python_name(k.python_name()), Some(k));
        }
        assert_eq!(AttrKind::Bools.onnx_type(), AttrType::Ints);
    }
}
