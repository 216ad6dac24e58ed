//! Tensors: a constant tensor as the compiler holds it ([`Tensor`]: element type, shape and
//! data, from the constant evaluator to the IR and emission), and the elements a `TensorProto`
//! holds, decoded in one place for everyone who reads them: the text printer (`emit::text`) and
//! the linker's constant evaluator (`link::eval`).
//!
//! A tensor keeps its data either in `raw_data` (little-endian, as `numpy.tobytes` writes it) or
//! in the typed field of its data type (`float_data`, `int32_data`, ...: onnx-facts §1). As
//! `onnx.numpy_helper.to_array` does, `raw_data` wins when it is present (even empty), and
//! strings are always read from `string_data`. The elements come out in the representation of
//! the typed field the data type uses, which is also what ONNX's textual syntax writes: the
//! 16-bit floats and the 8-, 4- and 2-bit types as their bits (sub-byte types one packed byte per
//! value), complex numbers as their real and imaginary parts in turn.

use super::ElemType;
use crate::proto::onnx::TensorProto;

/// A constant tensor: its element type, shape, and data.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub elem: ElemType,
    pub dims: Vec<i64>,
    pub data: TensorData,
}

/// A tensor's elements, in the representation of its element type.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    /// FLOAT; COMPLEX64 as (real, imaginary) pairs.
    Floats(Vec<f32>),
    /// DOUBLE; COMPLEX128 as (real, imaginary) pairs.
    Doubles(Vec<f64>),
    /// The signed integer types, and UINT8 and UINT16.
    Ints(Vec<i64>),
    /// UINT32 and UINT64.
    Uints(Vec<u64>),
    Bools(Vec<bool>),
    Strings(Vec<String>),
    /// FLOAT16, BFLOAT16, the 8-, 6-, 4- and 2-bit types: the little-endian bytes of
    /// `TensorProto.raw_data`, sub-byte types packed as ONNX packs them.
    Raw(Vec<u8>),
}

impl Tensor {
    /// The number of elements (the product of the dimensions).
    pub fn len(&self) -> u64 {
        self.dims.iter().fold(1u64, |n, d| n.saturating_mul(u64::try_from(*d).unwrap_or(0)))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_scalar(&self) -> bool {
        self.dims.is_empty()
    }
}

/// A tensor's elements.
#[derive(Clone, Debug, PartialEq)]
pub enum Elements<'a> {
    /// INT8, INT16, INT32, INT64; from `int32_data` also every type stored there (UINT8, UINT16,
    /// BOOL and the bits of the small floats).
    Signed(Vec<i64>),
    /// UINT32 and UINT64; from `raw_data` also UINT8, UINT16, BOOL, and the bits of the 16-bit
    /// floats and of the 8-, 4- and 2-bit types.
    Unsigned(Vec<u64>),
    /// FLOAT and COMPLEX64.
    Float(Vec<f32>),
    /// DOUBLE and COMPLEX128.
    Double(Vec<f64>),
    /// STRING.
    Bytes(&'a [Vec<u8>]),
}

impl Elements<'_> {
    pub fn len(&self) -> usize {
        match self {
            Elements::Signed(v) => v.len(),
            Elements::Unsigned(v) => v.len(),
            Elements::Float(v) => v.len(),
            Elements::Double(v) => v.len(),
            Elements::Bytes(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The elements held in the proto, or `None` when there is nothing to decode: an undefined or
/// unknown data type, `raw_data` that is not a whole number of elements. (Data held in an
/// external file is not read: the typed fields and `raw_data` are then empty.)
pub fn elements(t: &TensorProto) -> Option<Elements<'_>> {
    let elem = ElemType::from_code(t.data_type.unwrap_or(0).into())?;
    if elem == ElemType::String {
        return Some(Elements::Bytes(&t.string_data));
    }
    match &t.raw_data {
        Some(raw) => raw_elements(elem, raw),
        None => Some(typed_elements(elem, t)),
    }
}

/// The typed field the data type uses.
fn typed_elements(elem: ElemType, t: &TensorProto) -> Elements<'_> {
    match elem {
        ElemType::Int64 => Elements::Signed(t.int64_data.clone()),
        ElemType::Uint32 | ElemType::Uint64 => Elements::Unsigned(t.uint64_data.clone()),
        ElemType::Float | ElemType::Complex64 => Elements::Float(t.float_data.clone()),
        ElemType::Double | ElemType::Complex128 => Elements::Double(t.double_data.clone()),
        ElemType::String => Elements::Bytes(&t.string_data),
        _ => Elements::Signed(t.int32_data.iter().map(|v| i64::from(*v)).collect()),
    }
}

/// Little-endian `raw_data`, one value per element (per packed byte for sub-byte types).
fn raw_elements(elem: ElemType, raw: &[u8]) -> Option<Elements<'static>> {
    fn each<const N: usize, T>(raw: &[u8], f: impl Fn([u8; N]) -> T) -> Option<Vec<T>> {
        if raw.len() % N != 0 {
            return None;
        }
        Some(raw.chunks_exact(N).map(|c| f(c.try_into().unwrap_or([0; N]))).collect())
    }
    Some(match elem {
        ElemType::Float | ElemType::Complex64 => Elements::Float(each(raw, f32::from_le_bytes)?),
        ElemType::Double | ElemType::Complex128 => Elements::Double(each(raw, f64::from_le_bytes)?),
        ElemType::Int8 => Elements::Signed(each(raw, |b| i64::from(i8::from_le_bytes(b)))?),
        ElemType::Int16 => Elements::Signed(each(raw, |b| i64::from(i16::from_le_bytes(b)))?),
        ElemType::Int32 => Elements::Signed(each(raw, |b| i64::from(i32::from_le_bytes(b)))?),
        ElemType::Int64 => Elements::Signed(each(raw, i64::from_le_bytes)?),
        ElemType::Uint16 | ElemType::Float16 | ElemType::Bfloat16 => {
            Elements::Unsigned(each(raw, |b| u64::from(u16::from_le_bytes(b)))?)
        }
        ElemType::Uint32 => Elements::Unsigned(each(raw, |b| u64::from(u32::from_le_bytes(b)))?),
        ElemType::Uint64 => Elements::Unsigned(each(raw, u64::from_le_bytes)?),
        ElemType::String => return None,
        // UINT8, BOOL, the 8-bit floats, and the packed sub-byte types: one value per byte.
        _ => Elements::Unsigned(raw.iter().map(|b| u64::from(*b)).collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(elem: ElemType) -> TensorProto {
        TensorProto { data_type: Some(elem.code()), ..Default::default() }
    }

    #[test]
    fn raw_data_wins_over_the_typed_field() {
        let mut t = tensor(ElemType::Float);
        t.float_data = vec![1.0];
        t.raw_data = Some([2.5f32, -1.0].iter().flat_map(|v| v.to_le_bytes()).collect());
        assert_eq!(elements(&t), Some(Elements::Float(vec![2.5, -1.0])));
        t.raw_data = Some(Vec::new());
        assert_eq!(elements(&t), Some(Elements::Float(vec![])));
        t.raw_data = None;
        assert_eq!(elements(&t), Some(Elements::Float(vec![1.0])));
    }

    #[test]
    fn each_type_in_its_typed_representation() {
        let mut t = tensor(ElemType::Int8);
        t.raw_data = Some(vec![0xff, 1]);
        assert_eq!(elements(&t), Some(Elements::Signed(vec![-1, 1])));
        let mut t = tensor(ElemType::Uint8);
        t.raw_data = Some(vec![0xff]);
        assert_eq!(elements(&t), Some(Elements::Unsigned(vec![255])));
        let mut t = tensor(ElemType::Float16);
        t.raw_data = Some(vec![0x00, 0x3c]);
        assert_eq!(elements(&t), Some(Elements::Unsigned(vec![0x3c00])), "the bits of 1.0");
        let mut t = tensor(ElemType::Bool);
        t.int32_data = vec![1, 0];
        assert_eq!(elements(&t), Some(Elements::Signed(vec![1, 0])));
        let mut t = tensor(ElemType::Uint32);
        t.raw_data = Some(u32::MAX.to_le_bytes().to_vec());
        assert_eq!(elements(&t), Some(Elements::Unsigned(vec![u64::from(u32::MAX)])));
        let mut t = tensor(ElemType::Int4);
        t.raw_data = Some(vec![0x21]);
        assert_eq!(elements(&t), Some(Elements::Unsigned(vec![0x21])), "one packed byte per value");
        let mut t = tensor(ElemType::String);
        t.string_data = vec![b"a".to_vec()];
        t.raw_data = Some(vec![1, 2, 3]);
        assert_eq!(elements(&t).map(|e| e.len()), Some(1), "strings are never raw");
    }

    #[test]
    fn nothing_to_decode() {
        assert_eq!(elements(&TensorProto::default()), None, "no data type");
        let mut t = tensor(ElemType::Int32);
        t.data_type = Some(99);
        assert_eq!(elements(&t), None, "an unknown data type");
        let mut t = tensor(ElemType::Int32);
        t.raw_data = Some(vec![1, 2, 3, 4, 5]);
        assert_eq!(elements(&t), None, "a partial element");
    }
}
