//! ONNX element types and the meaning of type annotations.

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
}

impl ElemType {
    pub const ALL: [ElemType; 23] = [
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
    ];

    /// The onnxscript name of the type (`FLOAT`, `INT64`, ...).
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
        }
    }

    pub fn from_script_name(name: &str) -> Option<ElemType> {
        ElemType::ALL.iter().copied().find(|t| t.script_name() == name)
    }

    pub fn code(self) -> i32 {
        self as i32
    }
}

/// What a parameter annotation makes of a parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamType {
    /// A tensor (or sequence/optional) input. `None` when unannotated or only loosely typed.
    Input { ty: Option<String>, optional: bool },
    /// An attribute of a Python type.
    Attr { ty: AttrKind, optional: bool },
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
    /// The ONNX attribute type that carries it (bool travels as INT).
    pub fn onnx_type(self) -> crate::schema::AttrType {
        use crate::schema::AttrType;
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

    pub fn is_bool(self) -> bool {
        matches!(self, AttrKind::Bool | AttrKind::Bools)
    }
}
