//! Which IR version a model needs: for its ai.onnx opset, and for the fields its functions use
//! (onnx-facts §1). `emit` writes the smallest that satisfies both; `link` raises a model's to it.

use crate::proto::onnx::FunctionProto;

/// Local functions.
pub const FUNCTIONS: i64 = 8;
/// A function's attribute defaults (`attribute_proto`).
pub const FUNCTION_ATTRIBUTE_DEFAULTS: i64 = 9;
/// A function's `value_info`, `overload` and `metadata_props`.
pub const FUNCTION_METADATA: i64 = 10;

/// The lowest IR version that can carry an ai.onnx opset (8 for anything before opset 18).
pub fn for_onnx_opset(version: i64) -> i64 {
    match version {
        ..=18 => 8,
        19 | 20 => 9,
        21 | 22 => 10,
        23 => 11,
        24 => 12,
        25..=27 => 13,
        _ => 14,
    }
}

/// The lowest IR version that can carry this function's fields (not counting its opsets).
pub fn for_function_fields(f: &FunctionProto) -> i64 {
    if !f.value_info.is_empty() || !f.overload().is_empty() || !f.metadata_props.is_empty() {
        FUNCTION_METADATA
    } else if !f.attribute_proto.is_empty() {
        FUNCTION_ATTRIBUTE_DEFAULTS
    } else {
        FUNCTIONS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_onnx_facts() {
        let table =
            [(13, 8), (18, 8), (19, 9), (20, 9), (21, 10), (22, 10), (23, 11), (24, 12), (25, 13), (27, 13), (28, 14)];
        for (opset, ir) in table {
            assert_eq!(for_onnx_opset(opset), ir, "opset {opset}");
        }
    }
}
