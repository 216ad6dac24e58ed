//! Tensor element types: `TensorProto.DataType`, with every name the formats around ONNX give
//! them.

/// ONNX tensor element types, with the `TensorProto.DataType` codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElemType {
    Float = 1,
    Uint8 = 2,
    Int8 = 3,
    Uint16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Double = 11,
    Uint32 = 12,
    Uint64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    Bfloat16 = 16,
    Float8e4m3fn = 17,
    Float8e4m3fnuz = 18,
    Float8e5m2 = 19,
    Float8e5m2fnuz = 20,
    Uint4 = 21,
    Int4 = 22,
    Float4e2m1 = 23,
    Float8e8m0 = 24,
    Uint2 = 25,
    Int2 = 26,
    /// The 6-bit floats have a `TensorProto.DataType` but no onnxscript tensor type.
    Float6e2m3 = 27,
    Float6e3m2 = 28,
}

impl ElemType {
    pub const ALL: [ElemType; 28] = [
        ElemType::Float,
        ElemType::Uint8,
        ElemType::Int8,
        ElemType::Uint16,
        ElemType::Int16,
        ElemType::Int32,
        ElemType::Int64,
        ElemType::String,
        ElemType::Bool,
        ElemType::Float16,
        ElemType::Double,
        ElemType::Uint32,
        ElemType::Uint64,
        ElemType::Complex64,
        ElemType::Complex128,
        ElemType::Bfloat16,
        ElemType::Float8e4m3fn,
        ElemType::Float8e4m3fnuz,
        ElemType::Float8e5m2,
        ElemType::Float8e5m2fnuz,
        ElemType::Uint4,
        ElemType::Int4,
        ElemType::Float4e2m1,
        ElemType::Float8e8m0,
        ElemType::Uint2,
        ElemType::Int2,
        ElemType::Float6e2m3,
        ElemType::Float6e3m2,
    ];

    /// The `TensorProto.DataType` name of the type (`FLOAT`, `INT64`, ...), which is also its
    /// onnxscript tensor type's name where onnxscript has one.
    pub fn script_name(self) -> &'static str {
        match self {
            ElemType::Float => "FLOAT",
            ElemType::Uint8 => "UINT8",
            ElemType::Int8 => "INT8",
            ElemType::Uint16 => "UINT16",
            ElemType::Int16 => "INT16",
            ElemType::Int32 => "INT32",
            ElemType::Int64 => "INT64",
            ElemType::String => "STRING",
            ElemType::Bool => "BOOL",
            ElemType::Float16 => "FLOAT16",
            ElemType::Double => "DOUBLE",
            ElemType::Uint32 => "UINT32",
            ElemType::Uint64 => "UINT64",
            ElemType::Complex64 => "COMPLEX64",
            ElemType::Complex128 => "COMPLEX128",
            ElemType::Bfloat16 => "BFLOAT16",
            ElemType::Float8e4m3fn => "FLOAT8E4M3FN",
            ElemType::Float8e4m3fnuz => "FLOAT8E4M3FNUZ",
            ElemType::Float8e5m2 => "FLOAT8E5M2",
            ElemType::Float8e5m2fnuz => "FLOAT8E5M2FNUZ",
            ElemType::Uint4 => "UINT4",
            ElemType::Int4 => "INT4",
            ElemType::Float4e2m1 => "FLOAT4E2M1",
            ElemType::Float8e8m0 => "FLOAT8E8M0",
            ElemType::Uint2 => "UINT2",
            ElemType::Int2 => "INT2",
            ElemType::Float6e2m3 => "FLOAT6E2M3",
            ElemType::Float6e3m2 => "FLOAT6E3M2",
        }
    }

    /// The name in ONNX's type syntax (`float`, `int64`, `float8e4m3fn`): the schemas'
    /// `tensor(float)` strings and the textual format's `float[N]` both use it.
    pub fn onnx_name(self) -> &'static str {
        match self {
            ElemType::Float => "float",
            ElemType::Uint8 => "uint8",
            ElemType::Int8 => "int8",
            ElemType::Uint16 => "uint16",
            ElemType::Int16 => "int16",
            ElemType::Int32 => "int32",
            ElemType::Int64 => "int64",
            ElemType::String => "string",
            ElemType::Bool => "bool",
            ElemType::Float16 => "float16",
            ElemType::Double => "double",
            ElemType::Uint32 => "uint32",
            ElemType::Uint64 => "uint64",
            ElemType::Complex64 => "complex64",
            ElemType::Complex128 => "complex128",
            ElemType::Bfloat16 => "bfloat16",
            ElemType::Float8e4m3fn => "float8e4m3fn",
            ElemType::Float8e4m3fnuz => "float8e4m3fnuz",
            ElemType::Float8e5m2 => "float8e5m2",
            ElemType::Float8e5m2fnuz => "float8e5m2fnuz",
            ElemType::Uint4 => "uint4",
            ElemType::Int4 => "int4",
            ElemType::Float4e2m1 => "float4e2m1",
            ElemType::Float8e8m0 => "float8e8m0",
            ElemType::Uint2 => "uint2",
            ElemType::Int2 => "int2",
            ElemType::Float6e2m3 => "float6e2m3",
            ElemType::Float6e3m2 => "float6e3m2",
        }
    }

    /// The inverse of [`ElemType::onnx_name`].
    pub fn from_onnx_name(name: &str) -> Option<ElemType> {
        ElemType::ALL.iter().copied().find(|t| t.onnx_name() == name)
    }

    /// The onnxscript tensor type of this name (`onnxscript.FLOAT`, ...): every element type of
    /// onnxscript 0.7.2's `onnx_types`.
    pub fn from_script_name(name: &str) -> Option<ElemType> {
        ElemType::from_data_type_name(name).filter(|t| t.has_script_type())
    }

    /// The element type of a `TensorProto.DataType` / `ir.DataType` member name.
    pub fn from_data_type_name(name: &str) -> Option<ElemType> {
        ElemType::ALL.iter().copied().find(|t| t.script_name() == name)
    }

    /// Whether onnxscript 0.7.2 has a tensor type for it (all but the 6-bit floats).
    pub fn has_script_type(self) -> bool {
        !matches!(self, ElemType::Float6e2m3 | ElemType::Float6e3m2)
    }

    /// Whether `onnxscript` itself exports the type (`from onnxscript import FLOAT`); the
    /// newest are only in `onnxscript.onnx_types`.
    pub fn exported_by_onnxscript(self) -> bool {
        self.has_script_type()
            && !matches!(
                self,
                ElemType::Float4e2m1
                    | ElemType::Float8e8m0
                    | ElemType::Int2
                    | ElemType::Int4
                    | ElemType::Uint2
                    | ElemType::Uint4
            )
    }

    /// The `TensorProto.DataType` code.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The element type of a `TensorProto.DataType` code.
    pub fn from_code(code: i64) -> Option<ElemType> {
        ElemType::ALL.iter().copied().find(|t| t.code() as i64 == code)
    }

    /// numpy's name of the dtype that holds it (`float32`, `int64`, `bfloat16`, ...), as messages
    /// and `str(np.dtype)` spell it.
    pub fn numpy_name(self) -> &'static str {
        match self {
            ElemType::Float => "float32",
            ElemType::Uint8 => "uint8",
            ElemType::Int8 => "int8",
            ElemType::Uint16 => "uint16",
            ElemType::Int16 => "int16",
            ElemType::Int32 => "int32",
            ElemType::Int64 => "int64",
            ElemType::String => "object",
            ElemType::Bool => "bool",
            ElemType::Float16 => "float16",
            ElemType::Double => "float64",
            ElemType::Uint32 => "uint32",
            ElemType::Uint64 => "uint64",
            ElemType::Complex64 => "complex64",
            ElemType::Complex128 => "complex128",
            ElemType::Bfloat16 => "bfloat16",
            ElemType::Float8e4m3fn => "float8_e4m3fn",
            ElemType::Float8e4m3fnuz => "float8_e4m3fnuz",
            ElemType::Float8e5m2 => "float8_e5m2",
            ElemType::Float8e5m2fnuz => "float8_e5m2fnuz",
            ElemType::Uint4 => "uint4",
            ElemType::Int4 => "int4",
            ElemType::Float4e2m1 => "float4_e2m1fn",
            ElemType::Float8e8m0 => "float8_e8m0fnu",
            ElemType::Uint2 => "uint2",
            ElemType::Int2 => "int2",
            ElemType::Float6e2m3 => "float6_e2m3fn",
            ElemType::Float6e3m2 => "float6_e3m2fn",
        }
    }

    /// Bits per element in a tensor's `raw_data` (sub-byte types are packed).
    pub fn bits(self) -> u32 {
        match self {
            ElemType::Bool | ElemType::Uint8 | ElemType::Int8 => 8,
            ElemType::Uint16 | ElemType::Int16 | ElemType::Float16 | ElemType::Bfloat16 => 16,
            ElemType::Int32 | ElemType::Uint32 | ElemType::Float => 32,
            ElemType::Int64 | ElemType::Uint64 | ElemType::Double | ElemType::Complex64 => 64,
            ElemType::Complex128 => 128,
            ElemType::Float8e4m3fn
            | ElemType::Float8e4m3fnuz
            | ElemType::Float8e5m2
            | ElemType::Float8e5m2fnuz
            | ElemType::Float8e8m0 => 8,
            ElemType::Float6e2m3 | ElemType::Float6e3m2 => 6,
            ElemType::Uint4 | ElemType::Int4 | ElemType::Float4e2m1 => 4,
            ElemType::Uint2 | ElemType::Int2 => 2,
            ElemType::String => 0,
        }
    }

    /// The range of an integer type, as `(min, max)`.
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            ElemType::Int8 => (i8::MIN as i128, i8::MAX as i128),
            ElemType::Int16 => (i16::MIN as i128, i16::MAX as i128),
            ElemType::Int32 => (i32::MIN as i128, i32::MAX as i128),
            ElemType::Int64 => (i64::MIN as i128, i64::MAX as i128),
            ElemType::Uint8 => (0, u8::MAX as i128),
            ElemType::Uint16 => (0, u16::MAX as i128),
            ElemType::Uint32 => (0, u32::MAX as i128),
            ElemType::Uint64 => (0, u64::MAX as i128),
            ElemType::Int4 => (-8, 7),
            ElemType::Uint4 => (0, 15),
            ElemType::Int2 => (-2, 1),
            ElemType::Uint2 => (0, 3),
            _ => return None,
        })
    }

    /// An integer type (signed or not; BOOL is not one).
    pub fn is_integer(self) -> bool {
        self.int_range().is_some()
    }

    /// A type whose values may be negative: the signed integers and the floats.
    pub fn is_signed(self) -> bool {
        self.is_float() || self.int_range().is_some_and(|(min, _)| min < 0)
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::Float
                | ElemType::Double
                | ElemType::Float16
                | ElemType::Bfloat16
                | ElemType::Float8e4m3fn
                | ElemType::Float8e4m3fnuz
                | ElemType::Float8e5m2
                | ElemType::Float8e5m2fnuz
                | ElemType::Float8e8m0
                | ElemType::Float4e2m1
                | ElemType::Float6e2m3
                | ElemType::Float6e3m2
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::onnx::tensor_proto::DataType;

    #[test]
    fn codes_and_names_are_those_of_the_protobuf_schema() {
        for t in ElemType::ALL {
            let generated = DataType::try_from(t.code()).map(|g| g.as_str_name());
            assert_eq!(generated, Ok(t.script_name()));
            assert_eq!(ElemType::from_code(t.code() as i64), Some(t));
            assert_eq!(t.onnx_name(), t.script_name().to_lowercase());
            assert_eq!(ElemType::from_onnx_name(t.onnx_name()), Some(t));
        }
        assert_eq!(ElemType::from_code(0), None);
        assert_eq!(ElemType::ALL.len(), DataType::Float6e3m2 as usize);
    }
}
