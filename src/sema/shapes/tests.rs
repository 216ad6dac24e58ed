//! One test per operator family: the shapes a rule gives, and a violation it finds. Each fails
//! without its rule (an operator without one gives unknown shapes and no violation).
//! `tests/python/test_shapes.py` compares the rules with ONNX Runtime on generated calls.

use super::*;
use crate::ir::{Attr, AttrValue, Dim};
use std::sync::Arc;

/// A shape written `"2,s0,?"`; `"*"` for an unknown rank, `""` for a scalar.
fn dims(text: &str) -> Shape {
    if text == "*" {
        return None;
    }
    Some(
        text.split(',')
            .filter(|t| !t.is_empty())
            .map(|t| match t.trim() {
                "?" => Dim::Unknown,
                t => t.parse().map(Dim::Known).unwrap_or_else(|_| Dim::Symbolic(Arc::from(t))),
            })
            .collect(),
    )
}

fn tensor(name: &str, shape: &str) -> Option<InputFacts> {
    Some(InputFacts { name: name.into(), elem: Some(ElemType::Float), dims: dims(shape), ints: None, items: None })
}

fn ints(values: &[i64]) -> Option<InputFacts> {
    Some(InputFacts {
        name: String::new(),
        elem: Some(ElemType::Int64),
        dims: Some(vec![Dim::Known(values.len() as i64)]),
        ints: Some(values.to_vec()),
        items: None,
    })
}

/// A constant integer scalar (rank 0), as a Python int makes one.
fn scalar(v: i64) -> Option<InputFacts> {
    Some(InputFacts { dims: Some(Vec::new()), ..ints(&[v]).unwrap_or_default() })
}

fn text(name: &str, v: &str) -> Attr {
    Attr { name: name.into(), value: AttrValue::Str(v.into()) }
}

fn int(name: &str, v: i64) -> Attr {
    Attr { name: name.into(), value: AttrValue::Int(v) }
}

fn list(name: &str, v: &[i64]) -> Attr {
    Attr { name: name.into(), value: AttrValue::Ints(v.to_vec()) }
}

fn run(op: &str, inputs: &[Option<InputFacts>], attrs: &[Attr], outputs: usize) -> Inferred {
    infer(&ShapeCall { op, domain: "", version: 18, inputs, attrs, outputs })
}

/// The single output's shape, as text.
fn shape_of(op: &str, inputs: &[Option<InputFacts>], attrs: &[Attr]) -> String {
    match run(op, inputs, attrs, 1) {
        Ok(shapes) => shapes[0].as_deref().map_or("*".into(), dims_text),
        Err(v) => panic!("{op}: {}", v.message),
    }
}

fn violation(op: &str, inputs: &[Option<InputFacts>], attrs: &[Attr], outputs: usize) -> String {
    match run(op, inputs, attrs, outputs) {
        Ok(shapes) => panic!("{op}: no violation, shapes {shapes:?}"),
        Err(v) => v.message,
    }
}

#[test]
fn broadcasting_aligns_from_the_right_and_keeps_symbols() {
    assert_eq!(shape_of("Add", &[tensor("a", "2,1,s0"), tensor("b", "3,s0")], &[]), "[2, 3, s0]");
    assert_eq!(shape_of("Where", &[tensor("c", "4,1"), tensor("a", "1,5"), tensor("b", "")], &[]), "[4, 5]");
    assert_eq!(shape_of("Relu", &[tensor("x", "s0,3")], &[]), "[s0, 3]");
    // Two different symbols may be 1: nothing is known, nothing is wrong.
    assert_eq!(shape_of("Mul", &[tensor("a", "s0"), tensor("b", "s1")], &[]), "[?]");
    let v = violation("Add", &[tensor("self", "2,3"), tensor("other", "4")], &[], 1);
    assert_eq!(v, "`Add` cannot broadcast float32[2, 3] (`self`) with float32[4] (`other`): dimension 3 against 4 (shapes align from the right)");
    assert!(violation("Softmax", &[tensor("x", "2,3")], &[int("axis", 2)], 1).contains("`axis` is 2, outside [-2, 1]"));
}

#[test]
fn matmul_and_gemm_check_inner_dimensions_and_ranks() {
    assert_eq!(shape_of("MatMul", &[tensor("a", "s0,2,3"), tensor("b", "3,5")], &[]), "[s0, 2, 5]");
    assert_eq!(shape_of("MatMul", &[tensor("a", "3"), tensor("b", "4,3,5")], &[]), "[4, 5]");
    assert!(violation("MatMul", &[tensor("a", "2,3"), tensor("b", "4,5")], &[], 1)
        .contains("`A` has 3 columns, `B` 4 rows"));
    assert_eq!(
        shape_of("Gemm", &[tensor("a", "2,4"), tensor("w", "5,4"), tensor("c", "5")], &[int("transB", 1)]),
        "[2, 5]"
    );
    let v = violation("Gemm", &[tensor("self", "2,5,4"), tensor("w", "4,3")], &[], 1);
    assert_eq!(v, "`Gemm` needs a rank-2 `A`; this call gives float32[2, 5, 4] (`self`)");
    // The weight not transposed.
    assert!(violation("Gemm", &[tensor("x", "2,4"), tensor("w", "5,4")], &[], 1).contains("4 against 5"));
    assert!(violation("Gemm", &[tensor("x", "2,4"), tensor("w", "4,5"), tensor("c", "3")], &[], 1)
        .contains("`C` must broadcast"));
}

#[test]
fn layout_operators_move_and_check_dimensions() {
    assert_eq!(shape_of("Transpose", &[tensor("x", "2,3,s0")], &[list("perm", &[2, 0, 1])]), "[s0, 2, 3]");
    assert!(
        violation("Transpose", &[tensor("x", "2,3,4")], &[list("perm", &[0, 2, 3, 1])], 1).contains("has 4 axes, but")
    );
    assert_eq!(shape_of("Concat", &[tensor("a", "2,3"), tensor("b", "2,5")], &[int("axis", 1)]), "[2, 8]");
    assert!(violation("Concat", &[tensor("a", "4,2"), tensor("b", "3,3")], &[int("axis", 0)], 1)
        .contains("dimension 1 is 2 against 3"));
    let split = run("Split", &[tensor("x", "2,6"), ints(&[2, 4])], &[int("axis", 1)], 2).expect("splits");
    assert_eq!(split, vec![dims("2,2"), dims("2,4")]);
    assert!(violation("Split", &[tensor("x", "2,6"), ints(&[2, 3])], &[int("axis", 1)], 2)
        .contains("add up to 5, but axis 1"));
    let uneven = run("Split", &[tensor("x", "7,3")], &[int("num_outputs", 3)], 3).expect("splits");
    assert_eq!(uneven, vec![dims("3,3"), dims("3,3"), dims("1,3")]);
    let both = [tensor("x", "2,6"), ints(&[2, 4])];
    assert!(violation("Split", &both, &[int("axis", 1), int("num_outputs", 2)], 2).contains("not both"));
    assert_eq!(shape_of("Squeeze", &[tensor("x", "1,s0,1"), ints(&[0])], &[]), "[s0, 1]");
    assert!(violation("Squeeze", &[tensor("x", "2,3"), ints(&[1])], &[], 1).contains("whose size is 3, not 1"));
    assert_eq!(shape_of("Unsqueeze", &[tensor("x", "2,3"), ints(&[0, -1])], &[]), "[1, 2, 3, 1]");
    assert_eq!(shape_of("Reshape", &[tensor("x", "s0,3,4"), ints(&[0, -1])], &[]), "[s0, 12]");
    assert_eq!(shape_of("Reshape", &[tensor("x", "s0,3,4"), ints(&[12, -1])], &[]), "[12, s0]");
    assert!(violation("Reshape", &[tensor("x", "2,3,4"), ints(&[5, -1])], &[], 1).contains("24 elements"));
    assert_eq!(shape_of("Expand", &[tensor("x", "3,1"), ints(&[2, 3, 4])], &[]), "[2, 3, 4]");
    assert!(violation("Expand", &[tensor("x", "3,1"), ints(&[-1, 4])], &[], 1).contains("holds -1"));
    assert_eq!(shape_of("Flatten", &[tensor("x", "2,3,4")], &[int("axis", 2)]), "[6, 4]");
    assert_eq!(shape_of("Gather", &[tensor("x", "5,s0"), tensor("i", "2,3")], &[int("axis", 0)]), "[2, 3, s0]");
    let slice = [tensor("x", "10,s0"), ints(&[1]), ints(&[-1]), ints(&[0]), ints(&[2])];
    assert_eq!(shape_of("Slice", &slice, &[]), "[4, s0]");
    assert_eq!(shape_of("Tile", &[tensor("x", "2,3"), ints(&[2, 1])], &[]), "[4, 3]");
    assert_eq!(shape_of("Shape", &[tensor("x", "2,3,4")], &[int("start", 1)]), "[2]");
}

#[test]
fn convolution_and_pooling_compute_spatial_sizes() {
    let x = tensor("input", "1,3,8,8");
    assert_eq!(
        shape_of("Conv", &[x.clone(), tensor("w", "6,3,3,3"), tensor("b", "6")], &[list("pads", &[1, 1, 1, 1])]),
        "[1, 6, 8, 8]"
    );
    assert_eq!(
        shape_of("Conv", &[x.clone(), tensor("w", "6,1,3,3")], &[int("group", 3), list("strides", &[2, 2])]),
        "[1, 6, 3, 3]"
    );
    let v = violation("Conv", &[x.clone(), tensor("w", "3,3,1,1"), tensor("bias", "3,1,1,1")], &[], 1);
    assert!(v.contains("`B` must be 1-D") && v.contains("float32[3, 1, 1, 1] (`bias`)"), "{v}");
    assert!(violation("Conv", &[tensor("x", "1,8,8,3"), tensor("w", "6,3,3,3")], &[], 1).contains("channel"));
    assert_eq!(
        shape_of("MaxPool", std::slice::from_ref(&x), &[list("kernel_shape", &[2, 2]), list("strides", &[2, 2])]),
        "[1, 3, 4, 4]"
    );
    assert_eq!(shape_of("GlobalAveragePool", &[x], &[]), "[1, 3, 1, 1]");
    assert!(
        violation("AveragePool", &[tensor("x", "3,8")], &[list("kernel_shape", &[2])], 1).contains("rank 3 or more")
    );
}

#[test]
fn reductions_drop_or_keep_their_axes() {
    assert_eq!(shape_of("ReduceMean", &[tensor("x", "2,s0,4"), ints(&[1])], &[int("keepdims", 0)]), "[2, 4]");
    assert_eq!(shape_of("ReduceSum", &[tensor("x", "2,3,4")], &[]), "[1, 1, 1]");
    assert_eq!(shape_of("ArgMax", &[tensor("x", "2,3")], &[int("axis", 1)]), "[2, 1]");
    assert!(violation("ReduceMax", &[tensor("x", "2,3"), ints(&[2])], &[], 1).contains("`axes` is 2"));
    // A scalar has no axis: refused, as ONNX Runtime refuses it (TopK's rule once indexed it).
    assert!(violation("TopK", &[tensor("x", ""), ints(&[1])], &[], 2).contains("gives a scalar, float32[]"));
    assert!(violation("ArgMax", &[tensor("x", "")], &[], 1).contains("gives a scalar"));
    let norm = run("LayerNormalization", &[tensor("x", "2,3,4"), tensor("g", "4")], &[], 3).expect("normalises");
    assert_eq!(norm[1], dims("2,3,1"));
}

#[test]
fn unknown_operators_and_ranks_are_never_violations() {
    assert_eq!(run("StringNormalizer", &[tensor("a", "2,3")], &[], 1), Ok(vec![None]));
    assert_eq!(shape_of("Gemm", &[tensor("a", "*"), tensor("b", "2,3")], &[]), "*");
    assert_eq!(
        infer(&ShapeCall {
            op: "Gemm",
            domain: "com.microsoft",
            version: 1,
            inputs: &[tensor("a", "2,3,4")],
            attrs: &[],
            outputs: 1
        }),
        Ok(vec![None])
    );
}

#[test]
fn extreme_sizes_and_attributes_give_an_answer_not_a_panic() {
    let huge = i64::MAX;
    let big = tensor("x", &format!("{huge},{huge},{huge},{huge}"));
    let negative = tensor("x", "-3,2,-1,4");
    let attrs = [
        list("pads", &[huge, huge, huge, huge]),
        list("strides", &[huge, i64::MIN]),
        list("dilations", &[huge, huge]),
        list("kernel_shape", &[huge, huge]),
        list("perm", &[huge, i64::MIN, 0, 1]),
        int("axis", i64::MIN),
        int("group", 0),
        int("num_outputs", 3),
        int("blocksize", huge),
        int("hidden_size", huge),
        text("mode", "reflect"),
        list("output_padding", &[i64::MIN, i64::MIN]),
    ];
    let extreme = [huge, i64::MIN, 0, -1];
    for op in [
        "Conv",
        "MaxPool",
        "Split",
        "Transpose",
        "Tile",
        "Slice",
        "Reshape",
        "Expand",
        "Unsqueeze",
        "Concat",
        "Gather",
        "Flatten",
        "ConvTranspose",
        "Pad",
        "DepthToSpace",
        "SpaceToDepth",
        "GatherND",
        "ScatterND",
        "Resize",
        "Range",
        "LSTM",
    ] {
        for x in [&big, &negative] {
            let inputs = [x.clone(), ints(&extreme), ints(&extreme), ints(&[0, 1]), ints(&[i64::MIN, huge])];
            let _ = run(op, &inputs, &attrs, 3);
            let _ = run(op, &inputs[..1], &[], 1);
        }
    }
    // A rank read off a shape's length is believed only when a tensor can have it.
    let wide = [tensor("x", "2"), Some(InputFacts { dims: dims(&huge.to_string()), ..InputFacts::default() })];
    assert_eq!(run("Reshape", &wide, &[], 1), Ok(vec![None]));
}

#[test]
fn a_constant_has_its_values_shape() {
    let tensor = crate::onnx::tensor::Tensor {
        elem: ElemType::Int64,
        dims: vec![2, 3],
        data: crate::onnx::tensor::TensorData::Ints(vec![0; 6]),
    };
    let value = Attr { name: "value".into(), value: AttrValue::Tensor(tensor) };
    assert_eq!(shape_of("Constant", &[], &[value]), "[2, 3]");
    assert_eq!(shape_of("Constant", &[], &[list("value_ints", &[1, 2, 3])]), "[3]");
    assert_eq!(shape_of("Constant", &[], &[int("value_int", 7)]), "[]");
}

#[test]
fn concat_from_sequence_joins_or_stacks_the_tensors_it_knows() {
    let seq = |shapes: &[&str]| {
        Some(InputFacts { items: Some(shapes.iter().map(|s| dims(s)).collect()), ..InputFacts::default() })
    };
    let two = seq(&["2,3", "2,s0"]);
    assert_eq!(shape_of("ConcatFromSequence", std::slice::from_ref(&two), &[int("axis", 0)]), "[4, 3]");
    assert_eq!(shape_of("ConcatFromSequence", std::slice::from_ref(&two), &[int("axis", 1)]), "[2, ?]");
    let stacked = [seq(&["2,3", "2,3", "2,3"])];
    assert_eq!(shape_of("ConcatFromSequence", &stacked, &[int("axis", -1), int("new_axis", 1)]), "[2, 3, 3]");
    let v = violation("ConcatFromSequence", &[seq(&["2,3", "4,3"])], &[int("axis", 1)], 1);
    assert!(v.contains("dimension 0 is 2 against 4"), "{v}");
    // Items the call does not know: nothing known, nothing wrong.
    assert_eq!(shape_of("ConcatFromSequence", &[seq(&["2,3", "*"])], &[int("axis", 0)]), "*");
}

#[test]
fn sequences_are_followed_item_by_item_and_positions_checked() {
    let seq = |shapes: &[&str]| {
        Some(InputFacts { items: Some(shapes.iter().map(|s| dims(s)).collect()), ..InputFacts::default() })
    };
    let made = |op: &str, inputs: &[Option<InputFacts>], attrs: &[Attr]| -> String {
        assert_eq!(run(op, inputs, attrs, 1), Ok(vec![None]), "{op}: a sequence has no dimensions of its own");
        let call = ShapeCall { op, domain: "", version: 18, inputs, attrs, outputs: 1 };
        match sequence_items(&call) {
            Some(items) => {
                items.iter().map(|s| s.as_deref().map_or("*".into(), dims_text)).collect::<Vec<_>>().join(" ")
            }
            None => "unknown".into(),
        }
    };
    let x = tensor("self", "5,7");
    // `SplitToSequence`: listed sizes, a scalar chunk (the last piece smaller), or pieces of 1.
    assert_eq!(made("SplitToSequence", &[x.clone(), ints(&[3, 4])], &[int("axis", 1)]), "[5, 3] [5, 4]");
    assert_eq!(made("SplitToSequence", &[x.clone(), scalar(3)], &[int("axis", -1)]), "[5, 3] [5, 3] [5, 1]");
    assert_eq!(made("SplitToSequence", std::slice::from_ref(&x), &[int("keepdims", 0)]), "[7] [7] [7] [7] [7]");
    assert_eq!(made("SplitToSequence", &[tensor("self", "0,7")], &[]), "");
    assert_eq!(made("SplitToSequence", &[tensor("self", "s0,7")], &[]), "unknown");
    // ONNX ignores `keepdims` with a `split`; ONNX Runtime does not: not followed.
    assert_eq!(made("SplitToSequence", &[x.clone(), scalar(1)], &[int("keepdims", 0)]), "unknown");
    let v = violation("SplitToSequence", &[x.clone(), ints(&[3, 3])], &[int("axis", 1)], 1);
    assert!(v.contains("add up to 6, but axis 1 of float32[5, 7] (`self`) is 7"), "{v}");
    assert!(violation("SplitToSequence", &[x.clone(), scalar(0)], &[], 1).contains("greater than zero"));
    assert!(violation("SplitToSequence", &[x.clone(), ints(&[8, -1])], &[int("axis", 1)], 1).contains("negative"));
    assert!(violation("SplitToSequence", std::slice::from_ref(&x), &[int("axis", 2)], 1).contains("outside [-2, 1]"));
    // Construction, insertion and erasure keep count.
    assert_eq!(made("SequenceConstruct", &[x.clone(), tensor("b", "2")], &[]), "[5, 7] [2]");
    assert_eq!(made("SequenceEmpty", &[], &[]), "");
    let two = seq(&["5,3", "5,4"]);
    assert_eq!(made("SequenceInsert", &[two.clone(), tensor("t", "1")], &[]), "[5, 3] [5, 4] [1]");
    assert_eq!(made("SequenceInsert", &[two.clone(), tensor("t", "1"), scalar(-2)], &[]), "[1] [5, 3] [5, 4]");
    assert_eq!(made("SequenceErase", std::slice::from_ref(&two), &[]), "[5, 3]");
    assert_eq!(made("SequenceErase", &[two.clone(), scalar(0)], &[]), "[5, 4]");
    assert!(
        violation("SequenceInsert", &[two.clone(), tensor("t", "1"), scalar(3)], &[], 1).contains("outside [-2, 2]")
    );
    assert!(violation("SequenceErase", &[two.clone(), scalar(-3)], &[], 1).contains("outside [-2, 1]"));
    assert!(violation("SequenceErase", &[seq(&[])], &[], 1).contains("empty sequence"));
    // Reading: the tensor at a known position, or what all share; the length as a value.
    assert_eq!(shape_of("SequenceAt", &[two.clone(), scalar(-1)], &[]), "[5, 4]");
    assert_eq!(shape_of("SequenceAt", &[two.clone(), tensor("p", "")], &[]), "[5, ?]");
    assert_eq!(shape_of("SequenceAt", &[seq(&["5,3", "4"]), tensor("p", "")], &[]), "*");
    let v = violation("SequenceAt", &[two.clone(), scalar(2)], &[], 1);
    assert!(v.contains("`position` is 2, outside [-2, 1] for this call's sequence of 2 tensors"), "{v}");
    assert!(violation("SequenceAt", &[seq(&[]), scalar(0)], &[], 1).contains("empty sequence"));
    assert_eq!(shape_of("SequenceLength", std::slice::from_ref(&two), &[]), "[]");
    assert_eq!(propagated("SequenceLength", std::slice::from_ref(&two), &[], &[Some(Vec::new())]), Some(vec![2]));
    // Edge values never panic, and a split into more pieces than are followed is unknown.
    for chunk in [i64::MIN, -1, 1, i64::MAX] {
        for length in ["0", "1", "9223372036854775807", "?"] {
            let x = tensor("x", &format!("{length},2"));
            let inputs = [x.clone(), scalar(chunk)];
            let _ = run("SplitToSequence", &inputs, &[], 1);
            let _ = sequence_items(&ShapeCall {
                op: "SplitToSequence",
                domain: "",
                version: 18,
                inputs: &inputs,
                attrs: &[],
                outputs: 1,
            });
            let _ = run("SplitToSequence", &[x.clone(), ints(&[chunk, chunk])], &[], 1);
            let _ = run("SequenceAt", &[seq(&["1", "2"]), scalar(chunk)], &[], 1);
            let _ = run("SequenceInsert", &[seq(&[]), x.clone(), scalar(chunk)], &[], 1);
        }
    }
    assert_eq!(made("SplitToSequence", &[tensor("x", "100000,2")], &[]), "unknown");
}

/// Every operator with a rule, at every rank from 0 to 3 of each input, with integer inputs and
/// attributes at edge values: the rules answer or refuse, never panic (a facts-only run of
/// torchlib found `TopK` of a scalar indexing an empty shape).
#[test]
fn no_rule_panics_at_any_rank_or_edge_value() {
    const OPS: &[&str] = &[
        "Relu",
        "Cast",
        "Add",
        "Where",
        "Max",
        "Sum",
        "PRelu",
        "Softmax",
        "LogSoftmax",
        "Hardmax",
        "MatMul",
        "Gemm",
        "Transpose",
        "Concat",
        "Split",
        "Squeeze",
        "Unsqueeze",
        "Reshape",
        "Expand",
        "Flatten",
        "Gather",
        "Slice",
        "Tile",
        "Shape",
        "Size",
        "ConstantOfShape",
        "Conv",
        "MaxPool",
        "AveragePool",
        "LpPool",
        "GlobalAveragePool",
        "ReduceSum",
        "ReduceMean",
        "ReduceMax",
        "ArgMax",
        "ArgMin",
        "TopK",
        "LayerNormalization",
        "BatchNormalization",
        "Trilu",
        "Dropout",
        "ConcatFromSequence",
        "Identity",
        "GatherND",
        "ScatterElements",
        "ScatterND",
        "Compress",
        "NonZero",
        "Pad",
        "DepthToSpace",
        "SpaceToDepth",
        "Resize",
        "GridSample",
        "Range",
        "RandomUniformLike",
        "Bernoulli",
        "EyeLike",
        "QuantizeLinear",
        "DequantizeLinear",
        "Einsum",
        "Det",
        "ConvTranspose",
        "LSTM",
        "GRU",
        "RNN",
        "NegativeLogLikelihoodLoss",
        "SoftmaxCrossEntropyLoss",
        "HannWindow",
        "Multinomial",
        "RoiAlign",
        "MaxRoiPool",
        "Col2Im",
        "DFT",
        "STFT",
        "Unique",
        "NonMaxSuppression",
        "SequenceConstruct",
        "SequenceInsert",
        "SequenceErase",
        "SequenceAt",
        "SequenceLength",
        "SplitToSequence",
    ];
    let shapes = ["", "0", "2", "1,s0", "2,0,3", "?,2,1"];
    let values: [&[i64]; 6] = [&[], &[0], &[-1], &[5], &[-1, -1], &[0, 1, 2, 3]];
    let attrs: Vec<Vec<Attr>> = vec![
        vec![],
        vec![int("axis", -1), int("keepdims", 0)],
        vec![int("axis", 3)],
        vec![list("perm", &[1, 0]), list("axes", &[0, 0]), int("num_outputs", 2)],
        vec![list("kernel_shape", &[2]), list("pads", &[1, 1]), list("strides", &[0])],
        vec![int("blocksize", 0), int("batch_dims", 1), list("output_padding", &[-1]), list("axes", &[-1])],
        vec![int("blocksize", i64::MAX), int("hidden_size", -1), text("mode", "reflect"), list("output_shape", &[0])],
        vec![text("equation", "...ii,...->i..."), int("batch_dims", -1), text("direction", "bidirectional")],
        vec![text("equation", "ab"), text("auto_pad", "SAME_UPPER"), list("strides", &[i64::MAX])],
    ];
    for op in OPS {
        for a in &shapes {
            for b in &shapes {
                for v in &values {
                    for attr in &attrs {
                        for outputs in [1, 2] {
                            let inputs = [tensor("a", a), tensor("b", b), ints(v)];
                            let _ = run(op, &inputs, attr, outputs);
                            let _ = run(op, &[tensor("a", a), ints(v)], attr, outputs);
                            let _ = run(op, &[tensor("a", a)], attr, outputs);
                        }
                    }
                }
            }
        }
    }
}

/// The values followed through `Slice` and integer arithmetic, as torchlib computes shapes:
/// `Slice(Shape(x), -2, -1)`, a size minus one, a size divided by a factor.
#[test]
fn shape_values_follow_slices_and_exact_arithmetic() {
    use super::propagated;
    let value = |v: &[i64]| ints(v);
    let scalar = |v: i64| {
        let mut f = ints(&[v]);
        if let Some(f) = f.as_mut() {
            f.dims = Some(Vec::new());
        }
        f
    };
    let out = |n: usize| vec![Some(vec![Dim::Known(n as i64)])];
    let shape = [2, 3, 5, 7];
    assert_eq!(propagated("Slice", &[value(&shape), value(&[-2]), value(&[-1])], &[], &out(1)), Some(vec![5]));
    assert_eq!(
        propagated(
            "Slice",
            &[value(&shape), value(&[i64::MAX]), value(&[i64::MIN]), value(&[0]), value(&[-2])],
            &[],
            &out(2)
        ),
        Some(vec![7, 3])
    );
    assert_eq!(propagated("Slice", &[value(&shape), value(&[1]), value(&[9])], &[], &out(3)), Some(vec![3, 5, 7]));
    // An axis other than the only one, or a step of 0, is not followed.
    assert_eq!(propagated("Slice", &[value(&shape), value(&[0]), value(&[2]), value(&[1])], &[], &out(2)), None);
    assert_eq!(propagated("Sub", &[value(&[5, 7]), scalar(1)], &[], &out(2)), Some(vec![4, 6]));
    // `CastLike` to an integer type keeps them (torchlib's `CastLike(1, shape)`); to a float, not.
    assert_eq!(propagated("CastLike", &[scalar(1), value(&[5, 7])], &[], &out(1)), Some(vec![1]));
    assert_eq!(propagated("CastLike", &[scalar(1), tensor("x", "2")], &[], &out(1)), None);
    assert_eq!(propagated("Mul", &[scalar(3), value(&[2, 4])], &[], &out(2)), Some(vec![6, 12]));
    assert_eq!(propagated("Div", &[value(&[12, 8]), scalar(4)], &[], &out(2)), Some(vec![3, 2]));
    // A remainder (rounded as the runtime rounds) or an overflow is not followed.
    assert_eq!(propagated("Div", &[value(&[7]), scalar(2)], &[], &out(1)), None);
    assert_eq!(propagated("Add", &[value(&[i64::MAX]), scalar(1)], &[], &out(1)), None);
    assert_eq!(propagated("Add", &[value(&[1, 2]), value(&[1, 2, 3])], &[], &out(3)), None);
}

/// The conditions of a script's `if`, followed as 0 and 1: `Size(Shape(x)) == 0` (torchlib's
/// `IsScalar`), comparisons and logic, so that a linked call walks only the branch it takes.
#[test]
fn conditions_on_shapes_are_followed_as_booleans() {
    use super::propagated;
    let scalar = |v: i64| {
        let mut f = ints(&[v]);
        if let Some(f) = f.as_mut() {
            f.dims = Some(Vec::new());
        }
        f
    };
    let rank_0 = vec![Some(Vec::new())];
    // `Size` of a shape the call knows is its rank; of data, the product of its dimensions.
    assert_eq!(propagated("Size", &[ints(&[2, 3])], &[], &rank_0), Some(vec![2]));
    assert_eq!(propagated("Size", &[tensor("x", "2, 3")], &[], &rank_0), Some(vec![6]));
    assert_eq!(propagated("Size", &[tensor("x", "2, s0")], &[], &rank_0), None);
    assert_eq!(propagated("Equal", &[scalar(2), scalar(0)], &[], &rank_0), Some(vec![0]));
    assert_eq!(propagated("Equal", &[scalar(0), scalar(0)], &[], &rank_0), Some(vec![1]));
    assert_eq!(propagated("Less", &[scalar(1), scalar(2)], &[], &rank_0), Some(vec![1]));
    assert_eq!(propagated("GreaterOrEqual", &[scalar(1), scalar(2)], &[], &rank_0), Some(vec![0]));
    assert_eq!(propagated("Not", &[scalar(0)], &[], &rank_0), Some(vec![1]));
    assert_eq!(propagated("And", &[scalar(1), scalar(0)], &[], &rank_0), Some(vec![0]));
    assert_eq!(propagated("Or", &[scalar(1), scalar(0)], &[], &rank_0), Some(vec![1]));
    // Data the call does not know as values decides nothing.
    assert_eq!(propagated("Equal", &[tensor("x", ""), scalar(0)], &[], &rank_0), None);
}

#[test]
fn generators_indexing_and_padding_follow_their_values() {
    assert_eq!(shape_of("Range", &[scalar(0), scalar(10), scalar(3)], &[]), "[4]");
    assert_eq!(shape_of("Range", &[scalar(10), scalar(0), scalar(-3)], &[]), "[4]");
    assert_eq!(shape_of("Range", &[scalar(10), scalar(0), scalar(3)], &[]), "[0]");
    assert_eq!(shape_of("Range", &[scalar(i64::MIN), scalar(i64::MAX), scalar(1)], &[]), "[?]");
    assert_eq!(shape_of("Range", &[scalar(0), tensor("n", ""), scalar(1)], &[]), "[?]");
    assert!(violation("Range", &[scalar(0), scalar(10), scalar(0)], &[], 1).contains("`delta` is 0"));
    assert!(violation("Range", &[ints(&[0, 1]), scalar(10), scalar(1)], &[], 1).contains("`start` must be a scalar"));
    assert_eq!(shape_of("NonZero", &[tensor("x", "3,s0")], &[]), "[2, ?]");
    assert_eq!(shape_of("Compress", &[tensor("x", "3,4"), tensor("c", "3")], &[int("axis", -1)]), "[3, ?]");
    assert_eq!(shape_of("GatherND", &[tensor("x", "4,s0,5"), tensor("i", "2,1")], &[]), "[2, s0, 5]");
    assert!(violation("GatherND", &[tensor("x", "4,3"), tensor("i", "2,3")], &[], 1).contains("address 3 dimensions"));
    let scatter = [tensor("x", "3,3"), tensor("i", "2,2"), tensor("u", "2,3")];
    assert!(violation("ScatterElements", &scatter, &[], 1).contains("`updates` shaped as `indices`"));
    assert_eq!(shape_of("ScatterND", &[tensor("x", "4,3"), tensor("i", "2,1"), tensor("u", "2,3")], &[]), "[4, 3]");
    assert!(violation("ScatterND", &[tensor("x", "4,3"), tensor("i", "2,1"), tensor("u", "2,4")], &[], 1)
        .contains("[2, 3]"));
    assert_eq!(shape_of("Pad", &[tensor("x", "2,s0"), ints(&[1, 0, 2, 0])], &[]), "[5, s0]");
    assert_eq!(shape_of("Pad", &[tensor("x", "2,3"), ints(&[1, -1]), None, ints(&[-1])], &[]), "[2, 3]");
    assert!(violation("Pad", &[tensor("x", "2,3"), ints(&[1, 1, 1])], &[], 1).contains("has 3 values"));
    assert!(violation("Pad", &[tensor("x", "2,3"), ints(&[-3, 0, 0, 0])], &[], 1).contains("to -1 values"));
    let reflect = [text("mode", "reflect")];
    assert!(violation("Pad", &[tensor("x", "1,3"), ints(&[1, 0, 1, 0])], &reflect, 1).contains("`reflect` mode"));
    // An empty dimension not padded is no reflection (torchlib's `reflection_pad1d` of a batch of 0).
    assert_eq!(shape_of("Pad", &[tensor("x", "0,3"), ints(&[0, 1, 0, 2])], &reflect), "[0, 6]");
    assert_eq!(shape_of("DepthToSpace", &[tensor("x", "1,8,2,3")], &[int("blocksize", 2)]), "[1, 2, 4, 6]");
    assert_eq!(shape_of("SpaceToDepth", &[tensor("x", "s0,2,4,6")], &[int("blocksize", 2)]), "[s0, 8, 2, 3]");
    assert!(violation("DepthToSpace", &[tensor("x", "1,6,2,3")], &[int("blocksize", 2)], 1).contains("multiple"));
    let sizes = [tensor("x", "s0,2,4,6"), None, None, ints(&[8, 3])];
    assert_eq!(shape_of("Resize", &sizes, &[list("axes", &[2, -1])]), "[s0, 2, 8, 3]");
    assert_eq!(shape_of("Resize", &[tensor("x", "1,2,4,6"), None, tensor("scales", "4")], &[]), "[?, ?, ?, ?]");
    assert!(violation("Resize", &sizes, &[], 1).contains("has 2 values, for 4 axes"));
    assert_eq!(shape_of("GridSample", &[tensor("x", "2,3,4,5"), tensor("g", "2,6,7,2")], &[]), "[2, 3, 6, 7]");
    assert!(violation("GridSample", &[tensor("x", "2,3,4,5"), tensor("g", "2,6,7,3")], &[], 1).contains("[N, D1_out"));
}

#[test]
fn random_eye_and_quantize_keep_their_input_shape() {
    assert_eq!(shape_of("RandomNormalLike", &[tensor("x", "s0,3")], &[]), "[s0, 3]");
    assert_eq!(shape_of("Bernoulli", &[tensor("p", "2,3")], &[]), "[2, 3]");
    assert_eq!(shape_of("EyeLike", &[tensor("x", "2,3")], &[]), "[2, 3]");
    assert!(violation("EyeLike", &[tensor("x", "2,3,4")], &[], 1).contains("rank-2"));
    assert_eq!(shape_of("QuantizeLinear", &[tensor("x", "3,4"), tensor("scale", "4")], &[int("axis", 1)]), "[3, 4]");
    // One scale is for the whole tensor, whatever the axis.
    assert_eq!(shape_of("DequantizeLinear", &[tensor("x", "3,4"), tensor("scale", "1")], &[int("axis", 5)]), "[3, 4]");
    let v = violation("QuantizeLinear", &[tensor("x", "3,4"), tensor("scale", "3")], &[int("axis", 1)], 1);
    assert!(v.contains("one scale per element of axis 1"), "{v}");
}

#[test]
fn einsum_follows_its_labels_and_det_its_matrices() {
    let eq = |e: &str| [text("equation", e)];
    assert_eq!(shape_of("Einsum", &[tensor("a", "2,3"), tensor("b", "3,s0")], &eq("ij,jk->ik")), "[2, s0]");
    assert_eq!(shape_of("Einsum", &[tensor("a", "2,3"), tensor("b", "3,4")], &eq("ij, jk")), "[2, 4]");
    assert_eq!(shape_of("Einsum", &[tensor("a", "2,3"), tensor("b", "1,4")], &eq("ij,jk->ik")), "[2, 4]");
    assert_eq!(
        shape_of("Einsum", &[tensor("a", "5,2,3"), tensor("b", "1,3,4")], &eq("...ij,...jk->...ik")),
        "[5, 2, 4]"
    );
    assert_eq!(shape_of("Einsum", &[tensor("a", "2,3,4")], &eq("i...j")), "[3, 2, 4]");
    assert_eq!(shape_of("Einsum", &[tensor("a", "2,3,4")], &eq("bAa")), "[3, 4, 2]");
    assert_eq!(shape_of("Einsum", &[tensor("a", "3,3")], &eq("ii")), "[]");
    assert_eq!(shape_of("Einsum", &[tensor("a", "*")], &eq("...i->i")), "[?]");
    assert!(violation("Einsum", &[tensor("a", "2,3"), tensor("b", "2,4")], &eq("ij,jk->ik"), 1)
        .contains("label `j` in `ij,jk->ik` is 3 in one place and 2"));
    assert!(violation("Einsum", &[tensor("a", "2,3,4")], &eq("ij->ij"), 1).contains("names 2 dimensions"));
    assert!(violation("Einsum", &[tensor("a", "2,3"), tensor("b", "3,4")], &eq("ij,jk,kl"), 1).contains("3 operands"));
    assert!(violation("Einsum", &[tensor("a", "5,2,3"), tensor("b", "7,3,4")], &eq("...ij,...jk"), 1)
        .contains("5 against 7"));
    assert_eq!(shape_of("Det", &[tensor("x", "s0,3,3")], &[]), "[s0]");
    assert!(violation("Det", &[tensor("x", "2,3,4")], &[], 1).contains("square"));
    assert!(violation("Det", &[tensor("x", "3")], &[], 1).contains("square"));
}

#[test]
fn conv_transpose_grows_by_its_strides_and_kernel() {
    let (x, w) = (tensor("x", "1,3,4,4"), tensor("w", "3,2,3,3"));
    assert_eq!(shape_of("ConvTranspose", &[x.clone(), w.clone()], &[]), "[1, 2, 6, 6]");
    let strided = [list("strides", &[2, 2]), list("pads", &[1, 1, 1, 1]), list("output_padding", &[1, 1])];
    assert_eq!(shape_of("ConvTranspose", &[x.clone(), w.clone(), tensor("b", "2")], &strided), "[1, 2, 8, 8]");
    let grouped = [tensor("x", "s0,4,4,5"), tensor("w", "4,2,3,3")];
    assert_eq!(shape_of("ConvTranspose", &grouped, &[int("group", 2)]), "[s0, 4, 6, 7]");
    let same = [list("strides", &[3, 3]), text("auto_pad", "SAME_UPPER")];
    assert_eq!(shape_of("ConvTranspose", &[x.clone(), tensor("w", "3,2,1,1")], &same), "[1, 2, 10, 10]");
    let output_shape = [list("strides", &[2, 2]), list("output_shape", &[9, 10])];
    assert_eq!(shape_of("ConvTranspose", &[x.clone(), w.clone()], &output_shape), "[1, 2, 9, 10]");
    assert!(violation("ConvTranspose", &[x.clone(), tensor("w", "4,2,3,3")], &[], 1).contains("3 channels"));
    let bias = [tensor("x", "1,4,4,4"), tensor("w", "4,2,3,3"), tensor("b", "3")];
    assert!(violation("ConvTranspose", &bias, &[int("group", 2)], 1).contains("one bias per output channel ([4])"));
    let too_much = [list("strides", &[2, 2]), list("output_padding", &[2, 2])];
    assert!(violation("ConvTranspose", &[x.clone(), w.clone()], &too_much, 1).contains("not less than its stride"));
    assert!(violation("ConvTranspose", &[x.clone(), w.clone()], &[list("pads", &[3, 3, 3, 3])], 1).contains("crop"));
    assert!(violation("ConvTranspose", &[x, w], &[list("output_shape", &[1, 2, 9, 10])], 1).contains("spatial"));
}

#[test]
fn recurrent_outputs_follow_layout_and_direction() {
    let lstm = [tensor("x", "s0,2,4"), tensor("w", "2,12,4"), tensor("r", "2,12,3")];
    let both = [int("hidden_size", 3), text("direction", "bidirectional")];
    let out = run("LSTM", &lstm, &both, 3).expect("infers");
    assert_eq!(out, vec![dims("s0,2,2,3"), dims("2,2,3"), dims("2,2,3")]);
    let batch_first = [tensor("x", "2,5,4"), tensor("w", "1,9,4"), tensor("r", "1,9,3")];
    let out = run("GRU", &batch_first, &[int("hidden_size", 3), int("layout", 1)], 2).expect("infers");
    assert_eq!(out, vec![dims("2,5,1,3"), dims("2,1,3")]);
    // The hidden size read off `R` when the attribute is left out.
    let out = run("GRU", &batch_first[..], &[], 2).expect("infers");
    assert_eq!(out[1], dims("1,5,3"));
    let v = violation("LSTM", &lstm, &[int("hidden_size", 3)], 3);
    assert!(v.contains("needs `W` [1, 12, 4]"), "{v}");
    assert!(violation("GRU", &[tensor("x", "5,4")], &[], 2).contains("rank 3"));
}

#[test]
fn losses_windows_and_region_pools_have_their_sizes() {
    let scores = [tensor("scores", "s0,5,2"), tensor("labels", "s0,2")];
    let none = [text("reduction", "none")];
    assert_eq!(shape_of("NegativeLogLikelihoodLoss", &scores, &none), "[s0, 2]");
    let out = run("SoftmaxCrossEntropyLoss", &scores, &[], 2).expect("infers");
    assert_eq!(out, vec![dims(""), dims("s0,5,2")]);
    assert_eq!(shape_of("HannWindow", &[scalar(8)], &[]), "[8]");
    assert_eq!(shape_of("Multinomial", &[tensor("x", "2,5")], &[int("sample_size", 3)]), "[2, 3]");
    let rois = [tensor("x", "2,3,8,8"), tensor("rois", "s0,4"), tensor("i", "s0")];
    assert_eq!(shape_of("RoiAlign", &rois, &[int("output_height", 2)]), "[s0, 3, 2, 1]");
    let pooled = [tensor("x", "2,3,8,8"), tensor("rois", "4,5")];
    assert_eq!(shape_of("MaxRoiPool", &pooled, &[list("pooled_shape", &[2, 3])]), "[4, 3, 2, 3]");
    assert_eq!(shape_of("Col2Im", &[tensor("x", "1,12,16"), ints(&[5, 5]), ints(&[2, 2])], &[]), "[1, 3, 5, 5]");
}

/// The spectral operators keep what they do not transform, and `Unique` what it does not
/// deduplicate; what the data decides is unknown.
#[test]
fn spectra_and_unique_values_keep_the_dimensions_they_do_not_decide() {
    assert_eq!(shape_of("DFT", &[tensor("x", "2,8,1")], &[int("axis", 1)]), "[2, 8, 2]");
    assert_eq!(shape_of("DFT", &[tensor("x", "2,8,s0,1")], &[int("axis", 1), int("onesided", 1)]), "[2, 5, s0, 2]");
    assert_eq!(shape_of("DFT", &[tensor("x", "2,8,2"), scalar(5)], &[int("axis", 1)]), "[2, 5, 2]");
    assert_eq!(shape_of("DFT", &[tensor("x", "3,s0,2")], &[int("axis", 1), int("inverse", 1)]), "[3, s0, 2]");
    let stft = [tensor("x", "2,32,1"), scalar(4), None, scalar(8)];
    assert_eq!(shape_of("STFT", &stft, &[]), "[2, 7, 5, 2]");
    assert_eq!(shape_of("STFT", &[tensor("x", "1,s0,1"), scalar(2), tensor("w", "4")], &[]), "[1, ?, 3, 2]");
    let unique = |input, attrs: &[Attr]| match run("Unique", &[input], attrs, 4) {
        Ok(shapes) => shapes.iter().map(|s| s.as_deref().map_or("*".into(), dims_text)).collect::<Vec<_>>().join(" "),
        Err(v) => v.message,
    };
    assert_eq!(unique(tensor("x", "2,3"), &[]), "[?] [?] [6] [?]");
    assert_eq!(unique(tensor("x", "2,s0,3"), &[int("axis", 1)]), "[2, ?, 3] [?] [s0] [?]");
    assert!(unique(tensor("x", "2,3"), &[int("axis", 2)]).contains("outside [-2, 1]"));
    assert_eq!(shape_of("NonMaxSuppression", &[tensor("b", "1,6,4"), tensor("s", "1,2,6")], &[]), "[?, 3]");
}
