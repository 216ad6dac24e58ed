//! The types of ONNX values as operator schemas write them: `tensor(float)`,
//! `seq(tensor(int64))`, `optional(seq(tensor(float)))`, `sparse_tensor(float)`,
//! `map(int64, float)`. Schemas are parsed into these once, when they are loaded (`schema`).

use super::ElemType;
use std::fmt;

/// The type of a value: what `TypeProto` describes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    Tensor(ElemType),
    SparseTensor(ElemType),
    Seq(Box<ValueType>),
    Optional(Box<ValueType>),
    /// A map from keys of one element type to values. The ONNX-ML schemas write a tensor value by
    /// its element type alone (`map(int64, float)`); it is read as `tensor(float)`.
    Map(ElemType, Box<ValueType>),
}

/// How a value holds its tensors, for the shapes that type checking reasons about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    Tensor,
    Seq,
    OptTensor,
    OptSeq,
}

/// The element types a list of value types allows in each [`Container`], indexed by it, as bits
/// ([`elem_bit`]); `None` when one of the types has another shape (a map, a sparse tensor, a
/// sequence of sequences). Schemas compute it once per type constraint, when they are loaded.
pub fn elems_by_container(types: &[ValueType]) -> Option<[u32; 4]> {
    let mut set = [0; 4];
    for t in types {
        let (container, elem) = t.container()?;
        set[container as usize] |= elem_bit(elem);
    }
    Some(set)
}

/// An element type as a bit of a set of them.
pub fn elem_bit(e: ElemType) -> u32 {
    1 << e.code()
}

impl ValueType {
    /// Its container and element type: `tensor(T)`, `seq(tensor(T))`, `optional(tensor(T))` or
    /// `optional(seq(tensor(T)))`; `None` for any other shape.
    pub fn container(&self) -> Option<(Container, ElemType)> {
        let tensor = |t: &ValueType| match t {
            ValueType::Tensor(e) => Some(*e),
            _ => None,
        };
        Some(match self {
            ValueType::Tensor(e) => (Container::Tensor, *e),
            ValueType::Seq(inner) => (Container::Seq, tensor(inner)?),
            ValueType::Optional(inner) => match inner.as_ref() {
                ValueType::Seq(s) => (Container::OptSeq, tensor(s)?),
                other => (Container::OptTensor, tensor(other)?),
            },
            _ => return None,
        })
    }

    /// Parses a type in the schemas' syntax; `None` for anything else (including an element type
    /// this version of onnxsc does not know).
    pub fn parse(text: &str) -> Option<ValueType> {
        let (ty, rest) = Self::parse_prefix(text.trim())?;
        rest.trim().is_empty().then_some(ty)
    }

    fn parse_prefix(text: &str) -> Option<(ValueType, &str)> {
        let (head, rest) = text.split_once('(')?;
        fn elem(rest: &str) -> Option<(ElemType, &str)> {
            let (name, rest) = rest.split_once(')')?;
            Some((ElemType::from_onnx_name(name.trim())?, rest))
        }
        fn inner(rest: &str) -> Option<(ValueType, &str)> {
            let (ty, rest) = ValueType::parse_prefix(rest.trim_start())?;
            Some((ty, rest.trim_start().strip_prefix(')')?))
        }
        match head.trim() {
            "tensor" => elem(rest).map(|(e, rest)| (ValueType::Tensor(e), rest)),
            "sparse_tensor" => elem(rest).map(|(e, rest)| (ValueType::SparseTensor(e), rest)),
            "seq" => inner(rest).map(|(t, rest)| (ValueType::Seq(Box::new(t)), rest)),
            "optional" => inner(rest).map(|(t, rest)| (ValueType::Optional(Box::new(t)), rest)),
            "map" => {
                let (key, rest) = rest.split_once(',')?;
                let key = ElemType::from_onnx_name(key.trim())?;
                let rest = rest.trim_start();
                let (value, rest) = match Self::parse_prefix(rest) {
                    Some(parsed) => parsed,
                    None => {
                        let end = rest.find(')')?;
                        (ValueType::Tensor(ElemType::from_onnx_name(rest[..end].trim())?), &rest[end..])
                    }
                };
                Some((ValueType::Map(key, Box::new(value)), rest.trim_start().strip_prefix(')')?))
            }
            _ => None,
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueType::Tensor(e) => write!(f, "tensor({})", e.onnx_name()),
            ValueType::SparseTensor(e) => write!(f, "sparse_tensor({})", e.onnx_name()),
            ValueType::Seq(t) => write!(f, "seq({t})"),
            ValueType::Optional(t) => write!(f, "optional({t})"),
            ValueType::Map(k, v) => write!(f, "map({}, {v})", k.onnx_name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(e: ElemType) -> Box<ValueType> {
        Box::new(ValueType::Tensor(e))
    }

    #[test]
    fn every_form_of_the_schemas() {
        assert_eq!(ValueType::parse("tensor(float)"), Some(ValueType::Tensor(ElemType::Float)));
        assert_eq!(ValueType::parse("tensor(float8e4m3fn)"), Some(ValueType::Tensor(ElemType::Float8e4m3fn)));
        assert_eq!(ValueType::parse("sparse_tensor(int64)"), Some(ValueType::SparseTensor(ElemType::Int64)));
        assert_eq!(ValueType::parse("seq(tensor(int64))"), Some(ValueType::Seq(tensor(ElemType::Int64))));
        let opt_seq = ValueType::Optional(Box::new(ValueType::Seq(tensor(ElemType::Bool))));
        assert_eq!(ValueType::parse("optional(seq(tensor(bool)))"), Some(opt_seq));
        let map = ValueType::Map(ElemType::String, tensor(ElemType::Double));
        assert_eq!(ValueType::parse("map(string, double)"), Some(map.clone()));
        assert_eq!(ValueType::parse("map(string,tensor(double))"), Some(map));
        let seq_map = ValueType::Seq(Box::new(ValueType::Map(ElemType::Int64, tensor(ElemType::Float))));
        assert_eq!(ValueType::parse("seq(map(int64, float))"), Some(seq_map));
    }

    #[test]
    fn anything_else_is_not_a_type() {
        for text in
            ["T", "", "tensor(float", "tensor(float))", "tensor(quaternion)", "seq(float)", "list(tensor(float))"]
        {
            assert_eq!(ValueType::parse(text), None, "{text}");
        }
    }

    #[test]
    fn printing_parses_back() {
        for text in ["tensor(uint4)", "optional(tensor(string))", "seq(map(string, tensor(float)))"] {
            let ty = ValueType::parse(text).unwrap();
            assert_eq!(ty.to_string(), text);
            assert_eq!(ValueType::parse(&ty.to_string()), Some(ty));
        }
    }

    #[test]
    fn element_types_are_gathered_by_container() {
        let types: Vec<ValueType> = [
            "tensor(float)",
            "tensor(int64)",
            "seq(tensor(int64))",
            "optional(tensor(bool))",
            "optional(seq(tensor(float)))",
        ]
        .iter()
        .filter_map(|t| ValueType::parse(t))
        .collect();
        let bit = elem_bit;
        let expected = [
            bit(ElemType::Float) | bit(ElemType::Int64),
            bit(ElemType::Int64),
            bit(ElemType::Bool),
            bit(ElemType::Float),
        ];
        assert_eq!(elems_by_container(&types), Some(expected));
        for other in ["map(int64, float)", "sparse_tensor(float)", "seq(seq(tensor(float)))"] {
            let mut with = types.clone();
            with.extend(ValueType::parse(other));
            assert_eq!(elems_by_container(&with), None, "{other}");
        }
    }
}
