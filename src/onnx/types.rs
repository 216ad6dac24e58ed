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

impl ValueType {
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
}
