//! Python numbers to tensor elements, as numpy, ml_dtypes and onnx convert them.
//!
//! One job: given the flat elements of a constant (Python ints, floats, bools, strings) and an
//! element type, produce the tensor data onnxscript would produce, bit for bit, or say why
//! Python would raise. Rounding to the small float types (FLOAT16, BFLOAT16, the FLOAT8s,
//! FLOAT4E2M1) is round-to-nearest-even from the float64 value, which is what numpy and
//! ml_dtypes do; out-of-range integers are errors, as numpy 2 makes them.

use super::value::PyValue;
use crate::onnx::tensor::TensorData;
use crate::onnx::ElemType;

/// How values outside a small float type's range are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// numpy/ml_dtypes `astype`: to infinity, or NaN for types without one.
    Ieee,
    /// `onnx.helper.make_tensor` for the FLOAT8 types: clipped to the largest finite value first.
    Saturate,
}

/// The layout of a small binary float: exponent and mantissa widths, exponent bias, and which
/// special values it has.
#[derive(Clone, Copy, Debug)]
struct MiniFloat {
    exp_bits: u32,
    man_bits: u32,
    bias: i32,
    kind: Specials,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Specials {
    /// IEEE 754: the top exponent is infinity and NaN (FLOAT16, BFLOAT16, FLOAT8E5M2).
    Ieee,
    /// `fn`: no infinity; all-ones exponent and mantissa is NaN (FLOAT8E4M3FN).
    FiniteNan,
    /// `fnuz`: no infinity, no negative zero; NaN is the negative-zero pattern 0x80.
    FiniteUnsignedZero,
    /// Neither infinity nor NaN (FLOAT4E2M1).
    Finite,
}

impl MiniFloat {
    fn of(elem: ElemType) -> Option<MiniFloat> {
        let (exp_bits, man_bits, bias, kind) = match elem {
            ElemType::Float16 => (5, 10, 15, Specials::Ieee),
            ElemType::Bfloat16 => (8, 7, 127, Specials::Ieee),
            ElemType::Float8e4m3fn => (4, 3, 7, Specials::FiniteNan),
            ElemType::Float8e4m3fnuz => (4, 3, 8, Specials::FiniteUnsignedZero),
            ElemType::Float8e5m2 => (5, 2, 15, Specials::Ieee),
            ElemType::Float8e5m2fnuz => (5, 2, 16, Specials::FiniteUnsignedZero),
            ElemType::Float4e2m1 => (2, 1, 1, Specials::Finite),
            _ => return None,
        };
        Some(MiniFloat { exp_bits, man_bits, bias, kind })
    }

    fn sign_bit(&self) -> u32 {
        1 << (self.exp_bits + self.man_bits)
    }

    /// The largest finite value and its bit pattern.
    fn max_finite(&self) -> (f64, u32) {
        let top_exp = (1u32 << self.exp_bits) - 1;
        let full_man = (1u32 << self.man_bits) - 1;
        let (exp_field, man_field) = match self.kind {
            Specials::Ieee => (top_exp - 1, full_man),
            Specials::FiniteNan => (top_exp, full_man - 1),
            Specials::FiniteUnsignedZero | Specials::Finite => (top_exp, full_man),
        };
        let value = (1.0 + man_field as f64 / (1u64 << self.man_bits) as f64) * pow2(exp_field as i32 - self.bias);
        (value, (exp_field << self.man_bits) | man_field)
    }

    fn nan(&self, negative: bool) -> Option<u32> {
        let top_exp = (1u32 << self.exp_bits) - 1;
        let full_man = (1u32 << self.man_bits) - 1;
        let sign = if negative { self.sign_bit() } else { 0 };
        match self.kind {
            Specials::Ieee => Some(sign | (top_exp << self.man_bits) | (1 << (self.man_bits - 1))),
            Specials::FiniteNan => Some(sign | (top_exp << self.man_bits) | full_man),
            Specials::FiniteUnsignedZero => Some(self.sign_bit()),
            Specials::Finite => None,
        }
    }

    fn infinity(&self, negative: bool) -> Option<u32> {
        let sign = if negative { self.sign_bit() } else { 0 };
        match self.kind {
            Specials::Ieee => Some(sign | (((1u32 << self.exp_bits) - 1) << self.man_bits)),
            _ => None,
        }
    }

    /// The bit pattern of `x`, rounded to nearest even.
    fn encode(&self, x: f64, overflow: Overflow) -> Result<u32, String> {
        let negative = x.is_sign_negative();
        let sign = if negative { self.sign_bit() } else { 0 };
        if x.is_nan() {
            return self.nan(negative).ok_or_else(|| "NaN has no representation in this type".to_string());
        }
        let (max, max_bits) = self.max_finite();
        let mut a = x.abs();
        if overflow == Overflow::Saturate && a > max {
            a = max;
        }
        if a.is_infinite() {
            return self
                .infinity(negative)
                .or_else(|| self.nan(negative))
                .ok_or_else(|| "infinity has no representation in this type".to_string());
        }
        if a == 0.0 {
            return Ok(if self.kind == Specials::FiniteUnsignedZero { 0 } else { sign });
        }
        let min_exp = 1 - self.bias;
        let exp = exponent_of(a).max(min_exp);
        let quantum = pow2(exp - self.man_bits as i32);
        let rounded = round_half_even(a / quantum) * quantum;
        if rounded > max {
            return self
                .infinity(negative)
                .or_else(|| self.nan(negative))
                .ok_or_else(|| format!("{} is out of range for this type", crate::sema::value::format_float(x)));
        }
        if rounded == max {
            return Ok(sign | max_bits);
        }
        if rounded == 0.0 {
            return Ok(if self.kind == Specials::FiniteUnsignedZero { 0 } else { sign });
        }
        let e = exponent_of(rounded);
        let bits = if e < min_exp {
            // Subnormal: the exponent field is 0.
            (rounded / pow2(min_exp - self.man_bits as i32)) as u32
        } else {
            let man = ((rounded / pow2(e) - 1.0) * (1u64 << self.man_bits) as f64) as u32;
            (((e + self.bias) as u32) << self.man_bits) | man
        };
        Ok(sign | bits)
    }
}

/// The value of a 16-bit float's bits (FLOAT16 or BFLOAT16), exactly.
fn value_16(elem: ElemType, bits: u16) -> f64 {
    match elem {
        ElemType::Bfloat16 => f32::from_bits((bits as u32) << 16) as f64,
        _ => {
            let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
            let exp = ((bits >> 10) & 0x1f) as i32;
            let man = (bits & 0x3ff) as f64;
            sign * match exp {
                0 => man * pow2(-24),
                0x1f if man == 0.0 => f64::INFINITY,
                0x1f => f64::NAN,
                e => (1.0 + man / 1024.0) * pow2(e - 15),
            }
        }
    }
}

/// The elements of a FLOAT16 or BFLOAT16 tensor as exact doubles.
pub fn decode_16(t: &crate::onnx::tensor::Tensor) -> Option<Vec<f64>> {
    let TensorData::Raw(bytes) = &t.data else { return None };
    if !matches!(t.elem, ElemType::Float16 | ElemType::Bfloat16) {
        return None;
    }
    Some(bytes.chunks_exact(2).map(|c| value_16(t.elem, u16::from_le_bytes([c[0], c[1]]))).collect())
}

/// `x` rounded to the float type `elem` (to nearest even), as a double.
pub fn round_to(elem: ElemType, x: f64) -> f64 {
    match elem {
        ElemType::Float => x as f32 as f64,
        ElemType::Float16 | ElemType::Bfloat16 => match MiniFloat::of(elem).map(|f| f.encode(x, Overflow::Ieee)) {
            Some(Ok(bits)) => value_16(elem, bits as u16),
            _ => f64::NAN,
        },
        _ => x,
    }
}

/// 2^e as an f64 (exact for the exponents used here).
fn pow2(e: i32) -> f64 {
    2f64.powi(e)
}

/// The binary exponent of a finite nonzero number: `a` is in `[2^e, 2^(e+1))`.
fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal f64.
        -1074 + (63 - (bits & ((1u64 << 52) - 1)).leading_zeros() as i32)
    } else {
        biased - 1023
    }
}

fn round_half_even(x: f64) -> f64 {
    let floor = x.floor();
    let diff = x - floor;
    if diff > 0.5 || (diff == 0.5 && floor % 2.0 != 0.0) {
        floor + 1.0
    } else {
        floor
    }
}

/// What went wrong converting one element, for messages.
pub type ConvertError = String;

/// Whether a value is a number numpy converts to a numeric element (bool, int or float).
fn number(v: &PyValue) -> Option<f64> {
    v.as_f64()
}

/// Whether [`encode`] builds tensors of this element type (all but FLOAT8E8M0 and the 6-bit
/// floats).
pub fn supported(elem: ElemType) -> bool {
    MiniFloat::of(elem).is_some() || !elem.is_float() || matches!(elem, ElemType::Float | ElemType::Double)
}

/// Converts flat Python elements to `elem`, as `np.array(elements, dtype=elem)` does (or, with
/// [`Overflow::Saturate`], as `onnx.helper.make_tensor` does for the FLOAT8 types).
pub fn encode(elem: ElemType, items: &[PyValue], overflow: Overflow) -> Result<TensorData, ConvertError> {
    let name = elem.numpy_name();
    let not_a_number = |v: &PyValue| format!("TypeError: {} cannot be converted to {name}", describe(v));
    match elem {
        ElemType::Float | ElemType::Complex64 => {
            let mut out = Vec::with_capacity(items.len());
            for v in items {
                out.push(match v {
                    PyValue::Int(i) => *i as f32,
                    PyValue::Float(f) => *f as f32,
                    PyValue::Bool(b) => *b as u8 as f32,
                    other => return Err(not_a_number(other)),
                });
                if elem == ElemType::Complex64 {
                    out.push(0.0);
                }
            }
            Ok(TensorData::Floats(out))
        }
        ElemType::Double | ElemType::Complex128 => {
            let mut out = Vec::with_capacity(items.len());
            for v in items {
                out.push(match v {
                    PyValue::Int(i) => *i as f64,
                    PyValue::Float(f) => *f,
                    PyValue::Bool(b) => *b as u8 as f64,
                    other => return Err(not_a_number(other)),
                });
                if elem == ElemType::Complex128 {
                    out.push(0.0);
                }
            }
            Ok(TensorData::Doubles(out))
        }
        ElemType::Bool => items
            .iter()
            .map(|v| match v {
                PyValue::Bool(b) => Ok(*b),
                PyValue::Int(i) => Ok(*i != 0),
                PyValue::Float(f) => Ok(*f != 0.0),
                other => Err(not_a_number(other)),
            })
            .collect::<Result<_, _>>()
            .map(TensorData::Bools),
        ElemType::String => items
            .iter()
            .map(|v| match v {
                PyValue::Str(s) => Ok(s.clone()),
                other => Err(format!("TypeError: {} is not a string", describe(other))),
            })
            .collect::<Result<_, _>>()
            .map(TensorData::Strings),
        ElemType::Uint32 | ElemType::Uint64 => {
            let values = integers(elem, items)?;
            Ok(TensorData::Uints(values.into_iter().map(|v| v as u64).collect()))
        }
        ElemType::Int8 | ElemType::Int16 | ElemType::Int32 | ElemType::Int64 | ElemType::Uint8 | ElemType::Uint16 => {
            let values = integers(elem, items)?;
            Ok(TensorData::Ints(values.into_iter().map(|v| v as i64).collect()))
        }
        ElemType::Int4 | ElemType::Uint4 | ElemType::Int2 | ElemType::Uint2 => {
            let values = integers(elem, items)?;
            let codes: Vec<u8> = values.into_iter().map(|v| (v as i64 as u8) & ((1u8 << elem.bits()) - 1)).collect();
            Ok(TensorData::Raw(pack(&codes, elem.bits())))
        }
        _ => {
            let Some(format) = MiniFloat::of(elem) else {
                return Err(format!("constants of type {} are not supported", elem.script_name()));
            };
            let mut codes = Vec::with_capacity(items.len());
            for v in items {
                let x = number(v).ok_or_else(|| not_a_number(v))?;
                codes.push(format.encode(x, overflow).map_err(|e| format!("ValueError: {e} ({name})"))?);
            }
            Ok(TensorData::Raw(match elem.bits() {
                16 => codes.iter().flat_map(|c| (*c as u16).to_le_bytes()).collect(),
                8 => codes.iter().map(|c| *c as u8).collect(),
                bits => pack(&codes.iter().map(|c| *c as u8).collect::<Vec<_>>(), bits),
            }))
        }
    }
}

/// The elements as integers of `elem`: ints in range (numpy 2 raises on others), floats
/// truncated toward zero (numpy's cast), bools as 0 and 1.
fn integers(elem: ElemType, items: &[PyValue]) -> Result<Vec<i128>, ConvertError> {
    let (min, max) = elem.int_range().unwrap_or((i64::MIN as i128, i64::MAX as i128));
    let name = elem.numpy_name();
    items
        .iter()
        .map(|v| {
            let i = match v {
                PyValue::Int(i) => *i,
                PyValue::Bool(b) => *b as i128,
                PyValue::Float(f) if f.is_finite() && f.trunc() >= min as f64 && f.trunc() <= max as f64 => {
                    f.trunc() as i128
                }
                PyValue::Float(f) => {
                    return Err(format!(
                        "OverflowError: {} cannot be converted to {name} (out of range)",
                        crate::sema::value::format_float(*f)
                    ))
                }
                other => return Err(format!("TypeError: {} cannot be converted to {name}", describe(other))),
            };
            if i < min || i > max {
                return Err(format!("OverflowError: Python integer {i} out of bounds for {name}"));
            }
            Ok(i)
        })
        .collect()
}

/// Packs sub-byte codes little end first, as `onnx.numpy_helper` packs INT4 and INT2.
fn pack(codes: &[u8], bits: u32) -> Vec<u8> {
    let per_byte = (8 / bits) as usize;
    codes
        .chunks(per_byte)
        .map(|chunk| chunk.iter().enumerate().fold(0u8, |b, (i, c)| b | (c << (i as u32 * bits))))
        .collect()
}

fn describe(v: &PyValue) -> String {
    match v {
        PyValue::Str(_) | PyValue::Int(_) | PyValue::Float(_) | PyValue::Bool(_) | PyValue::None => v.repr(),
        other => format!("a {}", other.type_name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(elem: ElemType, x: f64, overflow: Overflow) -> u32 {
        MiniFloat::of(elem).expect("a small float").encode(x, overflow).expect("encodable")
    }

    #[test]
    fn float16_rounds_from_double_to_nearest_even() {
        assert_eq!(code(ElemType::Float16, 1.0, Overflow::Ieee), 0x3C00);
        assert_eq!(code(ElemType::Float16, 1.5, Overflow::Ieee), 0x3E00);
        assert_eq!(code(ElemType::Float16, -2.0, Overflow::Ieee), 0xC000);
        assert_eq!(code(ElemType::Float16, 65504.0, Overflow::Ieee), 0x7BFF);
        assert_eq!(code(ElemType::Float16, 65520.0, Overflow::Ieee), 0x7C00);
        assert_eq!(code(ElemType::Float16, 5.960464477539063e-08, Overflow::Ieee), 0x0001);
        // 1 + 2^-11 is a tie: to even (1.0).
        assert_eq!(code(ElemType::Float16, 1.0 + 2f64.powi(-11), Overflow::Ieee), 0x3C00);
        assert_eq!(code(ElemType::Float16, 1.0 + 3.0 * 2f64.powi(-11), Overflow::Ieee), 0x3C02);
    }

    #[test]
    fn float8_saturates_for_make_tensor_and_overflows_for_astype() {
        assert_eq!(code(ElemType::Float8e4m3fn, 448.0, Overflow::Ieee), 0x7E);
        assert_eq!(code(ElemType::Float8e4m3fn, 1000.0, Overflow::Saturate), 0x7E);
        assert_eq!(code(ElemType::Float8e4m3fn, 1000.0, Overflow::Ieee), 0x7F);
        assert_eq!(code(ElemType::Float8e5m2, 1e6, Overflow::Ieee), 0x7C);
        assert_eq!(code(ElemType::Float8e4m3fnuz, -0.0, Overflow::Ieee), 0x00);
        assert_eq!(code(ElemType::Float8e4m3fnuz, f64::NAN, Overflow::Ieee), 0x80);
        assert_eq!(code(ElemType::Float4e2m1, 6.0, Overflow::Ieee), 0x7);
        assert_eq!(code(ElemType::Float4e2m1, -0.5, Overflow::Ieee), 0x9);
    }

    #[test]
    fn sub_byte_integers_pack_low_nibble_first() {
        let items: Vec<PyValue> = [1, -2, 3].iter().map(|i| PyValue::Int(*i)).collect();
        assert_eq!(encode(ElemType::Int4, &items, Overflow::Ieee), Ok(TensorData::Raw(vec![0xE1, 0x03])));
        assert!(encode(ElemType::Int4, &[PyValue::Int(8)], Overflow::Ieee).is_err());
    }
}
