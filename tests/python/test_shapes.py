"""onnxsc's shape rules (``sema::shapes``) against ONNX Runtime and ONNX's own inference, per
operator family.

Each case is one op call with input shapes (symbolic dimensions by name), constant integer
inputs and attributes. onnxsc traces it (``onnxsc trace``, whose ``# returns:`` line gives the
inferred output shapes, or an E0907 error); the same node runs in ONNX Runtime with the symbols
bound to numbers, and goes through ``onnx.shape_inference`` in strict mode.

* onnxsc reports a violation exactly when the node is invalid: ONNX Runtime fails on it, or
  ONNX's strict inference refuses it (a call ONNX Runtime runs "leniently" into a wrong shape).
* Where both run, every dimension onnxsc knows is the one ONNX Runtime returns (a symbol, the
  number it was bound to); onnxsc may know less, never something else.
"""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import harness  # noqa: E402

# The numbers the symbols stand for when ONNX Runtime runs a case.
BINDING = {"s0": 5, "s1": 7}


def t(*dims):
    """A FLOAT input of these dimensions."""
    return ("tensor", list(dims))


def c(*values):
    """A constant INT64 input holding these values."""
    return ("const", list(values))


def scalar(value):
    """A constant INT64 scalar (rank 0), as a Python int makes one."""
    return ("scalar", value)


# An optional input left out.
NONE = ("none", None)

# The kinds of graph inputs (not constants), by their element type.
DTYPES = {"tensor": "FLOAT", "index": "INT64", "bool": "BOOL", "uint8": "UINT8"}


# (id, op, inputs, attributes, outputs)
CASES = [
    # Elementwise and broadcasting.
    ("relu", "Relu", [t("s0", 3)], {}, 1),
    ("clip", "Clip", [t(2, "s0")], {}, 1),
    ("add-broadcast", "Add", [t(2, 1, "s0"), t(3, "s0")], {}, 1),
    ("add-mismatch", "Add", [t(2, 3), t(4)], {}, 1),
    ("where", "Where", [("bool", [4, 1]), t(1, 5), t()], {}, 1),
    ("softmax-axis", "Softmax", [t(2, 3)], {"axis": 1}, 1),
    ("softmax-bad-axis", "Softmax", [t(2, 3)], {"axis": 2}, 1),
    # MatMul and Gemm.
    ("matmul-batch", "MatMul", [t("s0", 2, 3), t(3, 5)], {}, 1),
    ("matmul-vector", "MatMul", [t(3), t(4, 3, 5)], {}, 1),
    ("matmul-inner", "MatMul", [t(2, 3), t(4, 5)], {}, 1),
    ("matmul-batch-mismatch", "MatMul", [t(2, 2, 3), t(3, 3, 5)], {}, 1),
    ("gemm", "Gemm", [t(2, 4), t(5, 4), t(5)], {"transB": 1}, 1),
    ("gemm-rank-3", "Gemm", [t(2, 5, 4), t(3, 4)], {"transB": 1}, 1),
    ("gemm-untransposed", "Gemm", [t(2, 4), t(5, 4)], {}, 1),
    ("gemm-bad-c", "Gemm", [t(2, 4), t(4, 5), t(3)], {}, 1),
    # Layout.
    ("transpose", "Transpose", [t(2, 3, "s0")], {"perm": [2, 0, 1]}, 1),
    ("transpose-default", "Transpose", [t(2, 3, 4)], {}, 1),
    ("transpose-rank-4-perm", "Transpose", [t(2, 3, 4)], {"perm": [0, 2, 3, 1]}, 1),
    ("concat", "Concat", [t(2, 3), t(2, 5)], {"axis": 1}, 1),
    ("concat-mismatch", "Concat", [t(4, 2), t(3, 3)], {"axis": 0}, 1),
    ("concat-negative-axis", "Concat", [t(2, "s0"), t(3, "s0")], {"axis": -2}, 1),
    ("split", "Split", [t(2, 6)], {"axis": 1, "num_outputs": 2}, 2),
    ("split-sizes-and-count", "Split", [t(2, 7), c(3, 4)], {"axis": 1, "num_outputs": 2}, 2),
    ("split-even", "Split", [t(6, 3)], {"axis": 0, "num_outputs": 3}, 3),
    ("split-uneven", "Split", [t(7, 3)], {"axis": 0, "num_outputs": 3}, 3),
    ("squeeze", "Squeeze", [t(1, "s0", 1), c(0)], {}, 1),
    ("squeeze-not-one", "Squeeze", [t(2, 3), c(1)], {}, 1),
    ("squeeze-all", "Squeeze", [t(1, 3, 1)], {}, 1),
    ("unsqueeze", "Unsqueeze", [t(2, 3), c(0, -1)], {}, 1),
    ("unsqueeze-out-of-range", "Unsqueeze", [t(2, 3), c(4)], {}, 1),
    ("reshape-copy", "Reshape", [t("s0", 3, 4), c(0, -1)], {}, 1),
    ("reshape-symbol", "Reshape", [t("s0", 3, 4), c(12, -1)], {}, 1),
    ("reshape-count", "Reshape", [t(2, 3, 4), c(5, -1)], {}, 1),
    ("reshape-two-inferred", "Reshape", [t(2, 3, 4), c(-1, -1)], {}, 1),
    ("reshape-exact", "Reshape", [t(2, 3, 4), c(4, 6)], {}, 1),
    ("expand", "Expand", [t(3, 1), c(2, 3, 4)], {}, 1),
    ("expand-mismatch", "Expand", [t(3, 2), c(4, 4)], {}, 1),
    ("expand-minus-one", "Expand", [t(3, 1), c(-1, 4)], {}, 1),
    ("transpose-twice", "Transpose", [t(2, 3, 4)], {"perm": [0, 0, 1]}, 1),
    ("slice-step-zero", "Slice", [t(10, 4), c(0), c(5), c(0), c(0)], {}, 1),
    ("flatten", "Flatten", [t(2, 3, 4)], {"axis": 2}, 1),
    ("flatten-symbol", "Flatten", [t("s0", 3, 4)], {"axis": 1}, 1),
    ("gather", "Gather", [t(5, "s0"), ("index", [2, 3])], {"axis": 0}, 1),
    ("gather-axis", "Gather", [t(5, 4), ("index", [2])], {"axis": 2}, 1),
    ("slice", "Slice", [t(10, "s0"), c(1), c(-1), c(0), c(2)], {}, 1),
    ("slice-backwards", "Slice", [t(10, 4), c(-1), c(-100), c(0), c(-3)], {}, 1),
    ("slice-clamped", "Slice", [t(6, 4), c(2), c(1000), c(1)], {}, 1),
    ("tile", "Tile", [t(2, 3), c(2, 1)], {}, 1),
    ("tile-length", "Tile", [t(2, 3), c(2)], {}, 1),
    ("shape", "Shape", [t(2, 3, 4)], {"start": 1}, 1),
    # Convolution and pooling.
    ("conv", "Conv", [t(1, 3, 8, 8), t(6, 3, 3, 3), t(6)], {"pads": [1, 1, 1, 1]}, 1),
    ("conv-group-stride", "Conv", [t(2, 3, 9, 9), t(6, 1, 3, 3)], {"group": 3, "strides": [2, 2]}, 1),
    ("conv-dilated-valid", "Conv", [t(1, 2, 10, 10), t(4, 2, 3, 3)], {"dilations": [2, 2], "auto_pad": "VALID"}, 1),
    ("conv-same", "Conv", [t(1, 2, 7, 7), t(4, 2, 3, 3)], {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, 1),
    ("conv-bias-4d", "Conv", [t(2, 3, 8, 8), t(3, 3, 1, 1), t(3, 1, 1, 1)], {}, 1),
    ("conv-channels-last", "Conv", [t(1, 8, 8, 3), t(6, 3, 3, 3)], {}, 1),
    ("maxpool", "MaxPool", [t(1, 3, 8, 8)], {"kernel_shape": [2, 2], "strides": [2, 2]}, 2),
    ("maxpool-ceil", "MaxPool", [t(1, 3, 7, 7)], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, 2),
    ("averagepool-pads", "AveragePool", [t(1, 3, 7, 7)], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, 1),
    ("globalaveragepool", "GlobalAveragePool", [t(1, 3, 8, 8)], {}, 1),
    # Reductions.
    ("reducemean", "ReduceMean", [t(2, "s0", 4), c(1)], {"keepdims": 0}, 1),
    ("reducesum-all", "ReduceSum", [t(2, 3, 4)], {}, 1),
    ("reducemax-axis", "ReduceMax", [t(2, 3), c(2)], {}, 1),
    ("argmax", "ArgMax", [t(2, 3)], {"axis": 1}, 1),
    ("topk", "TopK", [t(2, 5), c(3)], {"axis": 1}, 2),
    ("gatherelements", "GatherElements", [t(5), c(0, 4, 2)], {"axis": 0}, 1),
    ("topk-scalar", "TopK", [t(), c(1)], {}, 2),
    ("argmax-scalar", "ArgMax", [t()], {}, 1),
    ("layernorm", "LayerNormalization", [t(2, 3, 4), t(4)], {}, 3),
    # Generators, indexing and padding.
    ("range", "Range", [scalar(0), scalar(10), scalar(3)], {}, 1),
    ("range-backwards", "Range", [scalar(10), scalar(0), scalar(-3)], {}, 1),
    ("range-empty", "Range", [scalar(10), scalar(0), scalar(3)], {}, 1),
    ("range-zero-delta", "Range", [scalar(0), scalar(10), scalar(0)], {}, 1),
    ("range-not-scalar", "Range", [c(0, 1), scalar(10), scalar(1)], {}, 1),
    ("nonzero", "NonZero", [t(3, "s0")], {}, 1),
    ("unique", "Unique", [t(2, 3)], {}, 4),
    ("unique-axis", "Unique", [t(2, "s0", 3)], {"axis": 1}, 4),
    ("unique-bad-axis", "Unique", [t(2, 3)], {"axis": 2}, 4),
    ("nms", "NonMaxSuppression", [t(1, 6, 4), t(1, 2, 6)], {}, 1),
    ("dft", "DFT", [t(2, 8, 1)], {"axis": 1}, 1),
    ("dft-onesided", "DFT", [t(2, 8, "s0", 1)], {"axis": 1, "onesided": 1}, 1),
    ("dft-length", "DFT", [t(2, 8, 2), scalar(5)], {"axis": 1}, 1),
    ("dft-symbol", "DFT", [t(3, "s0", 2)], {"axis": 1, "inverse": 1}, 1),
    ("stft", "STFT", [t(2, 32, 1), scalar(4), NONE, scalar(8)], {}, 1),
    ("stft-window", "STFT", [t(1, "s0", 1), scalar(2), t(4)], {"onesided": 0}, 1),
    ("compress", "Compress", [t(3, 4), ("bool", [3])], {"axis": 0}, 1),
    ("compress-axis", "Compress", [t(3, 4), ("bool", [3])], {"axis": 2}, 1),
    ("gathernd", "GatherND", [t(4, "s0"), ("index", [2, 1])], {}, 1),
    ("gathernd-batch", "GatherND", [t(2, 4, 3), ("index", [2, 1])], {"batch_dims": 1}, 1),
    ("gathernd-long-index", "GatherND", [t(4, 3), ("index", [2, 3])], {}, 1),
    ("scatterelements", "ScatterElements", [t(3, "s0"), ("index", [2, 2]), t(2, 2)], {"axis": 0}, 1),
    ("scatterelements-updates", "ScatterElements", [t(3, 3), ("index", [2, 2]), t(2, 3)], {}, 1),
    ("scatterelements-wide", "ScatterElements", [t(3, 3), ("index", [1, 4]), t(1, 4)], {}, 1),
    ("scatternd", "ScatterND", [t(4, 3), ("index", [2, 1]), t(2, 3)], {}, 1),
    ("scatternd-updates", "ScatterND", [t(4, 3), ("index", [2, 1]), t(2, 4)], {}, 1),
    ("pad", "Pad", [t(2, "s0"), c(1, 0, 2, 0)], {}, 1),
    ("pad-axes", "Pad", [t(2, 3), c(1, -1), NONE, c(-1)], {}, 1),
    ("pad-reflect", "Pad", [t(3, 4), c(2, 1, 0, 3)], {"mode": "reflect"}, 1),
    ("pad-count", "Pad", [t(2, 3), c(1, 1, 1)], {}, 1),
    ("pad-repeated-axis", "Pad", [t(2, 3), c(1, 1, 1, 1), NONE, c(1, -1)], {}, 1),
    ("pad-crop-too-much", "Pad", [t(2, 3), c(-3, 0, 0, 0)], {}, 1),
    ("pad-reflect-too-far", "Pad", [t(1, 3), c(1, 0, 1, 0)], {"mode": "reflect"}, 1),
    ("pad-reflect-empty", "Pad", [t(0, 3), c(0, 1, 0, 2)], {"mode": "reflect"}, 1),
    ("depthtospace", "DepthToSpace", [t(1, 8, 2, 3)], {"blocksize": 2}, 1),
    ("depthtospace-depth", "DepthToSpace", [t(1, 6, 2, 3)], {"blocksize": 2}, 1),
    ("spacetodepth", "SpaceToDepth", [t(1, 2, 4, 6)], {"blocksize": 2}, 1),
    ("spacetodepth-height", "SpaceToDepth", [t(1, 2, 5, 6)], {"blocksize": 2}, 1),
    ("resize-sizes", "Resize", [t(1, 2, 4, 6), NONE, NONE, c(1, 2, 8, 3)], {}, 1),
    ("resize-axes", "Resize", [t("s0", 2, 4, 6), NONE, NONE, c(8, 3)], {"axes": [2, 3]}, 1),
    ("resize-sizes-length", "Resize", [t(1, 2, 4, 6), NONE, NONE, c(8, 3)], {}, 1),
    ("gridsample", "GridSample", [t(2, 3, 4, 5), t(2, 6, 7, 2)], {}, 1),
    ("gridsample-batch", "GridSample", [t(2, 3, 4, 5), t(1, 6, 7, 2)], {}, 1),
    ("gridsample-rank", "GridSample", [t(2, 3, 4, 5), t(2, 6, 7)], {}, 1),
    # Same-shape operators.
    ("randomuniformlike", "RandomUniformLike", [t(3, "s0")], {}, 1),
    ("bernoulli", "Bernoulli", [t(3, 4)], {}, 1),
    ("eyelike", "EyeLike", [t(2, 3)], {}, 1),
    ("eyelike-rank-3", "EyeLike", [t(2, 3, 4)], {}, 1),
    ("quantizelinear", "QuantizeLinear", [t(3, 4), t(4)], {"axis": 1}, 1),
    ("quantizelinear-scale", "QuantizeLinear", [t(3, 4), t(3)], {"axis": 1}, 1),
    ("dequantizelinear", "DequantizeLinear", [("uint8", [3, 4]), t()], {}, 1),
    ("dequantizelinear-scale", "DequantizeLinear", [("uint8", [3, 4]), t(3)], {"axis": 1}, 1),
    # Linear algebra.
    ("einsum", "Einsum", [t(2, 3), t(3, 4)], {"equation": "ij,jk->ik"}, 1),
    ("einsum-implicit", "Einsum", [t(2, 3), t(3, "s0")], {"equation": "ij,jk"}, 1),
    ("einsum-broadcast-label", "Einsum", [t(2, 3), t(1, 4)], {"equation": "ij,jk->ik"}, 1),
    ("einsum-ellipsis", "Einsum", [t(5, 2, 3), t(1, 3, 4)], {"equation": "...ij,...jk->...ik"}, 1),
    ("einsum-implicit-ellipsis", "Einsum", [t(2, 3, 4)], {"equation": "i...j"}, 1),
    ("einsum-transpose", "Einsum", [t(2, 3, 4)], {"equation": "i...j->ij..."}, 1),
    ("einsum-diagonal", "Einsum", [t(3, 3)], {"equation": "ii->i"}, 1),
    ("einsum-label-mismatch", "Einsum", [t(2, 3), t(2, 4)], {"equation": "ij,jk->ik"}, 1),
    ("einsum-ellipsis-mismatch", "Einsum", [t(5, 2, 3), t(7, 3, 4)], {"equation": "...ij,...jk->...ik"}, 1),
    ("einsum-rank", "Einsum", [t(2, 3, 4)], {"equation": "ij->ij"}, 1),
    ("einsum-operands", "Einsum", [t(2, 3), t(3, 4)], {"equation": "ij,jk,kl->il"}, 1),
    ("det", "Det", [t("s0", 3, 3)], {}, 1),
    ("det-not-square", "Det", [t(2, 3, 4)], {}, 1),
    # ConvTranspose.
    ("convtranspose", "ConvTranspose", [t(1, 3, 4, 4), t(3, 2, 3, 3)], {}, 1),
    ("convtranspose-stride-pads", "ConvTranspose", [t(1, 3, 4, 4), t(3, 2, 3, 3), t(2)], {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, 1),
    ("convtranspose-group", "ConvTranspose", [t(1, 4, 4, 5), t(4, 2, 3, 3), t(4)], {"group": 2}, 1),
    ("convtranspose-same", "ConvTranspose", [t(1, 3, 4, 4), t(3, 2, 3, 3)], {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, 1),
    ("convtranspose-same-small-kernel", "ConvTranspose", [t(1, 3, 4, 4), t(3, 2, 1, 1)], {"strides": [3, 3], "auto_pad": "SAME_LOWER"}, 1),
    ("convtranspose-output-shape", "ConvTranspose", [t(1, 3, 4, 4), t(3, 2, 3, 3)], {"strides": [2, 2], "output_shape": [9, 10]}, 1),
    ("convtranspose-dilated", "ConvTranspose", [t(1, 3, 5), t(3, 2, 3)], {"dilations": [2], "strides": [3]}, 1),
    ("convtranspose-channels", "ConvTranspose", [t(1, 3, 4, 4), t(4, 2, 3, 3)], {}, 1),
    ("convtranspose-bias", "ConvTranspose", [t(1, 4, 4, 4), t(4, 2, 3, 3), t(3)], {"group": 2}, 1),
    ("convtranspose-output-padding", "ConvTranspose", [t(1, 3, 4, 4), t(3, 2, 3, 3)], {"strides": [2, 2], "output_padding": [2, 2]}, 1),
    ("convtranspose-cropped", "ConvTranspose", [t(1, 3, 4, 4), t(3, 2, 3, 3)], {"pads": [3, 3, 3, 3]}, 1),
    ("convtranspose-full-output-shape", "ConvTranspose", [t(1, 3, 4, 4), t(3, 2, 3, 3)], {"output_shape": [1, 2, 9, 10]}, 1),
    # Recurrent.
    ("lstm", "LSTM", [t("s0", 2, 4), t(1, 12, 4), t(1, 12, 3)], {"hidden_size": 3}, 3),
    ("lstm-bidirectional", "LSTM", [t(5, 2, 4), t(2, 12, 4), t(2, 12, 3)], {"hidden_size": 3, "direction": "bidirectional"}, 3),
    ("lstm-directions", "LSTM", [t(5, 2, 4), t(1, 12, 4), t(1, 12, 3)], {"hidden_size": 3, "direction": "bidirectional"}, 3),
    ("lstm-input-size", "LSTM", [t(5, 2, 4), t(1, 12, 5), t(1, 12, 3)], {"hidden_size": 3}, 3),
    ("gru", "GRU", [t(5, 2, 4), t(1, 9, 4), t(1, 9, 3)], {"hidden_size": 3}, 2),
    ("gru-rank", "GRU", [t(5, 4), t(1, 9, 4), t(1, 9, 3)], {"hidden_size": 3}, 2),
    ("gru-reverse", "GRU", [t(5, 2, 4), t(1, 9, 4), t(1, 9, 3)], {"hidden_size": 3, "direction": "reverse"}, 2),
    ("lstm-recurrence-size", "LSTM", [t(5, 2, 4), t(1, 12, 4), t(1, 12, 2)], {"hidden_size": 3}, 3),
    ("rnn", "RNN", [t(5, "s0", 4), t(1, 3, 4), t(1, 3, 3)], {"hidden_size": 3}, 2),
    ("rnn-input-size", "RNN", [t(5, 2, 4), t(1, 3, 5), t(1, 3, 3)], {"hidden_size": 3}, 2),
    # Losses, windows, region pools.
    ("nll-none", "NegativeLogLikelihoodLoss", [t(3, 5), ("index", [3])], {"reduction": "none"}, 1),
    ("nll-mean", "NegativeLogLikelihoodLoss", [t(3, 5), ("index", [3])], {}, 1),
    ("softmax-cross-entropy", "SoftmaxCrossEntropyLoss", [t("s0", 5, 2), ("index", ["s0", 2])], {}, 2),
    ("hannwindow", "HannWindow", [scalar(8)], {}, 1),
    ("multinomial", "Multinomial", [t(2, 5)], {"sample_size": 3}, 1),
    ("col2im", "Col2Im", [t(1, 12, 16), c(5, 5), c(2, 2)], {}, 1),
]


def source() -> str:
    lines = [
        "from onnxscript import opset18 as op",
        "from onnxscript.function_libs.torch_lib.registration import torch_op",
        "from onnxscript.function_libs.torch_lib.tensor_typing import TTensor",
        "",
    ]
    for k, (_, op, inputs, attrs, outputs) in enumerate(CASES):
        params = [f"x{i}: TTensor" for i, (kind, _) in enumerate(inputs) if kind in DTYPES]
        args = [f"x{i}" if kind in DTYPES else repr(v) for i, (kind, v) in enumerate(inputs)]
        args += [f"{name}={value!r}" for name, value in attrs.items()]
        results = ", ".join(f"r{j}" for j in range(outputs))
        lines += [
            "",
            f'@torch_op("test::case{k}", trace_only=True)',
            f"def case{k}({', '.join(params)}) -> TTensor:",
            f"    {results} = op.{op}({', '.join(args)})",
            f"    return {results}",
        ]
    return "\n".join(lines) + "\n"


def facts(k: int) -> str:
    _, _, inputs, _, _ = CASES[k]
    args = []
    for kind, v in inputs:
        if kind in DTYPES:
            args.append({"tensor": {"dtype": DTYPES[kind], "shape": v}})
    return json.dumps({"function": f"pkg.onnxscript.torch_lib::case{k}", "args": args})


def traced_returns(path, call: str):
    """What ``onnxsc trace`` says the call returns (its ``# returns:`` text), or the E-code
    of its refusal; and all it said."""
    cmd = [str(harness.default_onnxsc_binary()), "--color", "never", "trace", str(path), "--call", call]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        codes = re.findall(r"error\[(E\d+)\]", proc.stderr)
        assert codes, proc.stderr
        return None, codes[0], proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("# returns: ")]
    return line[len("# returns: ") :], None, proc.stdout


def dims_of(text: str) -> list:
    """``"2, s0"`` as ``["2", "s0"]``."""
    return [d.strip() for d in text.split(",")] if text else []


def onnxsc_answer(path, k: int):
    """(the inferred output dimensions, or None) and the E-code of a refusal."""
    returned, code, said = traced_returns(path, facts(k))
    if code is not None:
        return None, code, said
    # An element type the call does not know (a `dtype` attribute left out) is `?`.
    return [dims_of(s) for s in re.findall(r"[\w?]+\[([^\]]*)\]", returned)], None, said


def run_model(model, feeds: dict):
    """ONNX Runtime's outputs for the model, or why it failed; and whether ONNX's strict
    inference accepts it."""
    try:
        onnx.shape_inference.infer_shapes(model, strict_mode=True)
        strict = None
    except Exception as e:  # noqa: BLE001 - any refusal of the model is the answer
        strict = str(e)
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, feeds), None, strict
    except Exception as e:  # noqa: BLE001
        return None, str(e), strict


def assert_agree(inferred, code, said, actual, failure, strict):
    """onnxsc refuses exactly the invalid calls, and every dimension it infers (of each
    output, a list of dimensions; `["..."]` for an unknown rank) is ONNX Runtime's."""
    invalid = failure is not None or strict is not None
    if code is not None:
        assert code == "E0907", said
        assert invalid, f"onnxsc refuses a call ONNX Runtime runs and ONNX accepts:\n{said}"
        return
    assert not invalid, f"onnxsc accepts an invalid call (runtime: {failure}; strict inference: {strict})"
    assert len(inferred) == len(actual), (inferred, actual)
    for ours, theirs in zip(inferred, actual):
        if ours == ["..."]:
            continue
        assert len(ours) == len(theirs), (ours, theirs)
        for d, n in zip(ours, theirs):
            if d == "?":
                continue
            assert int(BINDING.get(d, d)) == n, f"onnxsc infers {ours}, ONNX Runtime gives {theirs}"


def runtime_answer(k: int):
    """ONNX Runtime's output shapes for the node with the symbols bound, or why it failed;
    and whether ONNX's strict inference accepts the model."""
    _, op, inputs, attrs, outputs = CASES[k]
    rng = np.random.default_rng(k)
    graph_inputs, initializers, feeds, names = [], [], {}, []
    for i, (kind, v) in enumerate(inputs):
        name = f"x{i}"
        names.append(name if kind != "none" else "")
        if kind == "none":
            continue
        if kind in ("const", "scalar"):
            initializers.append(onnx.numpy_helper.from_array(np.array(v, dtype=np.int64), name))
            continue
        dims = [BINDING.get(d, d) for d in v]
        if kind == "index":
            feeds[name] = rng.integers(0, 2, size=dims).astype(np.int64)
            graph_inputs.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT64, dims))
        elif kind == "bool":
            feeds[name] = rng.integers(0, 2, size=dims).astype(bool)
            graph_inputs.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.BOOL, dims))
        elif kind == "uint8":
            feeds[name] = rng.integers(0, 255, size=dims).astype(np.uint8)
            graph_inputs.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.UINT8, dims))
        else:
            feeds[name] = rng.standard_normal(dims).astype(np.float32)
            graph_inputs.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, dims))
    outs = [f"y{j}" for j in range(outputs)]
    node = onnx.helper.make_node(op, names, outs, **attrs)
    graph = onnx.helper.make_graph(
        [node], "case", graph_inputs, [onnx.ValueInfoProto(name=o) for o in outs], initializers
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)], ir_version=10)
    results, failure, strict = run_model(model, feeds)
    return results and [list(r.shape) for r in results], failure, strict


def written(tmp_path_factory, name: str, text: str):
    path = tmp_path_factory.mktemp(name) / f"{name}.onnxs"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cases_file(tmp_path_factory):
    return written(tmp_path_factory, "cases", source())


@pytest.mark.parametrize("k", range(len(CASES)), ids=[c[0] for c in CASES])
def test_inferred_shapes_agree_with_onnx_runtime(cases_file, k):
    assert_agree(*onnxsc_answer(cases_file, k), *runtime_answer(k))


def test_every_family_has_cases_onnxsc_refuses_and_cases_it_infers_fully(cases_file):
    """The table is not vacuous: some cases are violations, and most shapes are fully known."""
    refused = known = 0
    for k in range(len(CASES)):
        inferred, code, _ = onnxsc_answer(cases_file, k)
        refused += code is not None
        known += inferred is not None and all("?" not in s and s != ["..."] for s in inferred)
    assert refused >= 15 and known >= 35, (refused, known)


# Sequence operators, as chains of calls: a sequence is made, then read or changed. Each step is
# (output, op, arguments, attributes); an argument names an input (`x0`), an earlier output, or
# is a constant (`c`, `scalar`). The last step's output is returned: a tensor, or a sequence
# whose tensors are compared one by one.
SEQUENCE_CASES = [
    ("split-sizes", [t(5, 7)], [("q", "SplitToSequence", ["x0", c(3, 4)], {"axis": 1})]),
    ("split-sizes-sum", [t(5, 7)], [("q", "SplitToSequence", ["x0", c(3, 3)], {"axis": 1})]),
    ("split-sizes-negative", [t(5, 7)], [("q", "SplitToSequence", ["x0", c(8, -1)], {"axis": 1})]),
    ("split-chunk", [t(5, 7)], [("q", "SplitToSequence", ["x0", scalar(3)], {"axis": 1})]),
    ("split-chunk-zero", [t(5, 7)], [("q", "SplitToSequence", ["x0", scalar(0)], {"axis": 1})]),
    ("split-ones", [t(5, 7)], [("q", "SplitToSequence", ["x0"], {"axis": 0, "keepdims": 0})]),
    ("split-symbolic", [t("s0", 7)], [("q", "SplitToSequence", ["x0"], {})]),
    ("split-axis", [t(5, 7)], [("q", "SplitToSequence", ["x0"], {"axis": 2})]),
    ("split-empty", [t(0, 7)], [("q", "SplitToSequence", ["x0", scalar(2)], {})]),
    (
        "at",
        [t(5, 7)],
        [("q", "SplitToSequence", ["x0", c(3, 4)], {"axis": 1}), ("y", "SequenceAt", ["q", scalar(-1)], {})],
    ),
    (
        "at-past-the-end",
        [t(5, 7)],
        [("q", "SplitToSequence", ["x0", c(3, 4)], {"axis": 1}), ("y", "SequenceAt", ["q", scalar(2)], {})],
    ),
    ("at-empty", [], [("q", "SequenceEmpty", [], {}), ("y", "SequenceAt", ["q", scalar(0)], {})]),
    (
        "insert",
        [t(5, 7)],
        [("q", "SplitToSequence", ["x0", c(3, 4)], {"axis": 1}), ("y", "SequenceInsert", ["q", "x0", scalar(-2)], {})],
    ),
    (
        "insert-past-the-end",
        [t(5, 7)],
        [("q", "SplitToSequence", ["x0", c(3, 4)], {"axis": 1}), ("y", "SequenceInsert", ["q", "x0", scalar(3)], {})],
    ),
    (
        "erase",
        [t(5, 7)],
        [("q", "SplitToSequence", ["x0", c(3, 4)], {"axis": 1}), ("y", "SequenceErase", ["q"], {})],
    ),
    ("erase-empty", [], [("q", "SequenceEmpty", [], {}), ("y", "SequenceErase", ["q"], {})]),
    (
        "construct-concat",
        [t(2, 3), t(4, 3)],
        [("q", "SequenceConstruct", ["x0", "x1"], {}), ("y", "ConcatFromSequence", ["q"], {"axis": 0})],
    ),
    (
        "construct-stack-mismatch",
        [t(2, 3), t(4, 3)],
        [("q", "SequenceConstruct", ["x0", "x1"], {}), ("y", "ConcatFromSequence", ["q"], {"axis": 0, "new_axis": 1})],
    ),
    (
        "length-reshape",
        [t(6)],
        [
            ("q", "SplitToSequence", ["x0", scalar(2)], {}),
            ("n", "SequenceLength", ["q"], {}),
            ("m", "Unsqueeze", ["n", c(0)], {}),
            ("s", "Concat", ["m", c(-1)], {"axis": 0}),
            ("y", "Reshape", ["x0", "s"], {}),
        ],
    ),
]


def sequence_source() -> str:
    lines = [
        "from onnxscript import opset18 as op",
        "from onnxscript.function_libs.torch_lib.registration import torch_op",
        "from onnxscript.function_libs.torch_lib.tensor_typing import TTensor",
        "",
    ]
    for k, (_, inputs, steps) in enumerate(SEQUENCE_CASES):
        params = [f"x{i}: TTensor" for i in range(len(inputs))]
        lines += ["", f'@torch_op("test::seq{k}", trace_only=True)', f"def seq{k}({', '.join(params)}) -> TTensor:"]
        for out, op, args, attrs in steps:
            written = [a if isinstance(a, str) else repr(a[1]) for a in args]
            written += [f"{name}={value!r}" for name, value in attrs.items()]
            lines.append(f"    {out} = op.{op}({', '.join(written)})")
        lines.append(f"    return {steps[-1][0]}")
    return "\n".join(lines) + "\n"


def sequence_onnxsc_answer(path, k: int):
    """The returned value's shapes, as ``onnxsc_answer`` gives them: a tensor's, or each tensor
    of a sequence (None where the sequence's tensors are unknown); or the E-code of a refusal."""
    _, inputs, _ = SEQUENCE_CASES[k]
    args = [{"tensor": {"dtype": "FLOAT", "shape": v}} for _, v in inputs]
    call = json.dumps({"function": f"pkg.onnxscript.torch_lib::seq{k}", "args": args})
    returned, code, said = traced_returns(path, call)
    if code is not None:
        return None, code, said
    if returned.startswith("sequence["):
        if ":" not in returned:
            return None, None, said
        return [dims_of(s) for s in re.findall(r"\[([^\[\]]*)\]", returned.split(":", 1)[1])], None, said
    return [dims_of(s) for s in re.findall(r"[\w?]+\[([^\]]*)\]", returned)], None, said


def sequence_runtime_answer(k: int):
    """ONNX Runtime's returned shapes (a tensor's, or each tensor of a sequence), or why it
    failed; and whether ONNX's strict inference accepts the model."""
    _, inputs, steps = SEQUENCE_CASES[k]
    rng = np.random.default_rng(k)
    graph_inputs, initializers, feeds, nodes = [], [], {}, []
    for i, (_, v) in enumerate(inputs):
        dims = [BINDING.get(d, d) for d in v]
        feeds[f"x{i}"] = rng.standard_normal(dims).astype(np.float32)
        graph_inputs.append(onnx.helper.make_tensor_value_info(f"x{i}", onnx.TensorProto.FLOAT, dims))
    for j, (out, op, args, attrs) in enumerate(steps):
        names = []
        for a, arg in enumerate(args):
            if isinstance(arg, str):
                names.append(arg)
                continue
            name = f"c{j}_{a}"
            initializers.append(onnx.numpy_helper.from_array(np.array(arg[1], dtype=np.int64), name))
            names.append(name)
        nodes.append(onnx.helper.make_node(op, names, [out], **attrs))
    result = steps[-1][0]
    graph = onnx.helper.make_graph(nodes, "case", graph_inputs, [onnx.ValueInfoProto(name=result)], initializers)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)], ir_version=10)
    results, failure, strict = run_model(model, feeds)
    if results is None:
        return None, failure, strict
    (value,) = results
    return [list(v.shape) for v in (value if isinstance(value, list) else [value])], None, strict


@pytest.fixture(scope="module")
def sequence_file(tmp_path_factory):
    return written(tmp_path_factory, "sequences", sequence_source())


@pytest.mark.parametrize("k", range(len(SEQUENCE_CASES)), ids=[c[0] for c in SEQUENCE_CASES])
def test_sequences_agree_with_onnx_runtime(sequence_file, k):
    inferred, code, said = sequence_onnxsc_answer(sequence_file, k)
    actual, failure, strict = sequence_runtime_answer(k)
    if inferred is None and code is None:
        # A sequence whose tensors the call does not know: only its validity is compared.
        assert failure is None and strict is None, (failure, strict)
        return
    assert_agree(inferred, code, said, actual, failure, strict)


def test_sequence_cases_refuse_and_infer(sequence_file):
    """The sequence table is not vacuous: its violations are refused, and most of what it
    returns is known in full."""
    refused = known = 0
    for k in range(len(SEQUENCE_CASES)):
        inferred, code, _ = sequence_onnxsc_answer(sequence_file, k)
        refused += code is not None
        known += inferred is not None and "?" not in str(inferred)
    assert refused >= 8 and known >= 9, (refused, known)
