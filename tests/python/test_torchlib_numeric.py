"""onnxsc's and onnxscript's compilations of torchlib compute the same values.

Every scripted ``@torch_op`` translation (no ``trace_only=True``) of the installed
onnxscript is extracted from the package source at test time (``torchlib_source``), written
as a self-contained ``.onnxs`` module, and compiled twice: by onnxsc (``onnxsc build FILE
-o OUT``) and by onnxscript 0.7.2 (importing the module, with torchlib's own ``torch_op``
decorator). Each compiled function is wrapped in a one-node model and run in ONNX Runtime
(CPU, graph optimisations off, one thread) on the inputs and attribute values that
``INPUTS`` gives for it; the outputs must be identical: same dtype, same shape, same bytes.

No tolerance is used, because none is needed: for this text both compilers emit the same
ONNX ops on the same values in the same order (they differ only in value names, and in the
order of an ``If``'s outputs where onnxscript's order depends on the string hash seed), and
ONNX Runtime runs them unoptimised on one thread, so they give bit-identical results. (A tolerance would be legitimate only where onnxsc
emitted a different but equivalent sequence of float ops; ``Spec.tol`` exists for that, with
a required reason, and no function uses it.)

Inputs respect the meaning of the aten operator each function translates: batch-matmul
shapes for ``addbmm``, size 3 along ``dim`` for ``cross``, an even size along ``dim`` for
``glu``, indices within range and non-decreasing offsets starting at 0 for
``embedding_bag`` (with empty bags, and with ``per_sample_weights`` of ones except in sum
mode, as PyTorch requires), square matrices for ``det``, and so on; every function with
attributes runs with several attribute settings, including each default. An input set has
the same values under every attribute setting.

Nothing is skipped. The functions the issue allows skipping are all deterministic
functions of real tensors once exported, and are tested as such:

* complex-number functions (``aten_div_complex``, ``aten_mT_complex``, both
  ``complex=True``, and ``aten_polar``, whose output is complex): torchlib represents a
  complex tensor as a real one with a trailing dimension of 2 (real, imaginary), which is
  what they are given and what they return;
* the random ``aten_bernoulli_p``: its output is random for 0 < p < 1, so it runs only at
  ``p = 0`` and ``p = 1``, where ``RandomUniformLike`` in [0, 1) makes every sample 0,
  respectively 1, whatever the random draws.

``SKIPPED`` is where a function that cannot be compared would go, with its reason (only
complex-number or random outputs qualify); it is empty.

``aten_linalg_det`` is compiled from its ``@script()`` variant (``TorchlibFunction.text(
"script")``), by both compilers: torchlib binds it to ``aten::_linalg_det``, which has three
outputs while the function returns one, and onnxsc rejects that binding (E0509, the verified
torchlib defect of ``test_torchlib.KNOWN_DEFECTS``). Without the binding the body is the
same text.

Tests:

* ``test_inputs_cover_every_function``: every scripted function has an ``INPUTS`` entry
  or a ``SKIPPED`` reason (a new torchlib translation without inputs fails here), and no
  entry names a function that does not exist;
* ``test_spec[NAME]``: the entry is well-formed: its input sets name the function's inputs,
  its attribute settings name attributes only, give every required one, and both omit and
  give each defaulted one; at least two runs;
* ``test_agrees[NAME]``: the numeric comparison.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

import harness
import torchlib_source

SCRIPTED = torchlib_source.scripted_functions()
BY_NAME = {r.name: r for r in SCRIPTED}

# Functions compiled from their ``@script()`` variant, with why.
SCRIPT_VARIANT = {
    # onnxsc refuses the @torch_op binding (E0509: aten::_linalg_det has three outputs, the
    # function returns one; a verified torchlib defect, see test_torchlib.KNOWN_DEFECTS).
    "aten_linalg_det": "E0509 on the aten::_linalg_det binding",
}

# Functions not compared, with why (only complex-number or random outputs qualify).
SKIPPED: dict[str, str] = {}


# ---------------------------------------------------------------------------------------
# Input descriptions
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class R:
    """Random values of a dtype and shape, uniform in [lo, hi] (integers: inclusive)."""

    dtype: str
    shape: tuple[int, ...]
    lo: float = -4.0
    hi: float = 4.0

    def make(self, rng: np.random.Generator) -> np.ndarray:
        np_dtype = harness.DTYPES[self.dtype][0]
        if self.dtype == "bool":
            values = rng.random(self.shape) < 0.5
        elif np.issubdtype(np_dtype, np.integer):
            values = rng.integers(int(self.lo), int(self.hi), size=self.shape, endpoint=True)
        else:
            values = rng.uniform(self.lo, self.hi, size=self.shape)
        return np.asarray(values).astype(np_dtype)  # an array also for shape ()


@dataclass(frozen=True)
class V:
    """Explicit values (a nested list or a scalar) of a dtype."""

    dtype: str
    value: Any

    def make(self, rng: np.random.Generator) -> np.ndarray:
        return np.array(self.value, dtype=harness.DTYPES[self.dtype][0])


@dataclass(frozen=True)
class S:
    """An ONNX sequence of tensors (one element type, shapes may differ)."""

    items: tuple[R | V, ...]

    def make(self, rng: np.random.Generator) -> list[np.ndarray]:
        values = [item.make(rng) for item in self.items]
        assert values and len({v.dtype for v in values}) == 1, self
        return values


def ones(dtype: str, n: int) -> V:
    return V(dtype, [1.0] * n)


INF, NAN = math.inf, math.nan


@dataclass
class Spec:
    """What to run one function on.

    ``inputs``: input sets (input name -> description), each run with every attribute
    setting of ``attrs``; ``cases``: further (attributes, input set) pairs, for functions
    whose valid shapes depend on an attribute. ``outputs``: per output, a dtype name or
    ``like:INPUT`` (the input's element type; of a sequence input, its elements'), with a
    ``seq:`` prefix for a sequence output. ``tol``: ``{"rtol", "atol", "why"}`` to compare
    with ``assert_allclose`` instead of bytes (unused).
    """

    outputs: list[str]
    inputs: list[dict[str, R | V | S]] = field(default_factory=list)
    attrs: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    cases: list[tuple[dict[str, Any], dict[str, R | V | S]]] = field(default_factory=list)
    tol: dict[str, Any] | None = None

    def runs(self) -> list[tuple[dict[str, Any], dict[str, R | V | S]]]:
        return list(itertools.product(self.attrs, self.inputs)) + list(self.cases)


def unary(dtypes=("float32", "float64", "float16"), lo=-4.0, hi=4.0, special=None) -> Spec:
    """An elementwise function of ``self``: random values of each dtype and shape, and
    optionally explicit special values."""
    shapes = [(3, 4), (2, 3, 5), (7,)]
    inputs = [{"self": R(d, shapes[i % len(shapes)], lo, hi)} for i, d in enumerate(dtypes)]
    if special is not None:
        inputs += [{"self": V(d, special)} for d in dtypes]
    return Spec(outputs=["like:self"], inputs=inputs)


_NO_FLOAT64 = ("float32", "float16")
_SPECIAL = [0.0, -0.0, 1.5, -2.25, INF, -INF, NAN, 3.0e38, -1.0e-30, 65504.0]
_SPECIAL_F16 = [0.0, -0.0, 1.5, -2.25, INF, -INF, NAN, 65504.0, -6.0e-8, 1000.0]


def special_values(dtypes=("float32", "float64", "float16")) -> Spec:
    """A float classification (isinf, isnan, ...): infinities, NaN, zeros, extremes."""
    inputs: list[dict[str, R | V | S]] = []
    for d in dtypes:
        values = _SPECIAL_F16 if d == "float16" else _SPECIAL
        if d == "float64":
            values = values + [1.0e300, -1.0e300]  # finite in float64, inf in float32
        inputs += [{"self": V(d, values)}, {"self": R(d, (2, 3))}]
    return Spec(outputs=["bool"], inputs=inputs)


def _bag_inputs(dtype: str, indices: list[int], offsets: list[int], rows: int, sum_mode: bool):
    n = len(indices)
    return {
        "weight": R(dtype, (rows, 3)),
        "indices": V("int64", indices),
        "offsets": V("int64", offsets),
        # PyTorch accepts per_sample_weights in sum mode only; otherwise the caller
        # (aten_embedding_bag) passes ones.
        "per_sample_weights": R(dtype, (n,), -2.0, 2.0) if sum_mode else ones(dtype, n),
    }


def embedding_bag_cases(padding: bool) -> list[tuple[dict[str, Any], dict[str, R | V | S]]]:
    """(attributes, inputs) of embedding_bag: modes sum/mean/max, with and without
    include_last_offset, with empty bags; indices in [0, rows)."""
    # (indices, offsets without the last offset, rows)
    layouts = [
        ([3, 1, 4, 1, 5, 9, 2, 6], [0, 2, 5], 10),
        ([0, 7, 7, 2, 5, 3, 1], [0, 3, 3, 6], 8),  # an empty bag in the middle
        ([4, 4, 0, 1, 2, 3], [0, 0, 4], 6),  # an empty first bag
        ([2], [0], 5),  # one bag of one index
    ]
    # padding_idx: present in the indices or not, negative (counted from the end), and
    # making a bag all padding ([2] with padding_idx 2).
    pads = [2, -1, 0, 4] if padding else [None]
    dtypes = ["float32", "float64", "float16"]
    cases = []
    k = 0
    for mode in (0, 1, 2):
        for include_last in (False, True):
            for indices, offsets, rows in layouts:
                dtype = dtypes[k % len(dtypes)]
                pad = pads[(k + k // len(layouts)) % len(pads)]  # each layout gets each pad
                k += 1
                if include_last:
                    offsets = offsets + [len(indices)]
                attrs: dict[str, Any] = {"mode": mode, "include_last_offset": include_last}
                if pad is not None:
                    attrs["padding_idx"] = pad
                cases.append((attrs, _bag_inputs(dtype, indices, offsets, rows, mode == 0)))
    return cases


_EMBEDDING_BAG_OUTPUTS = ["like:weight", "int64", "int64", "int64"]


# ---------------------------------------------------------------------------------------
# The table: inputs for every scripted torchlib function
# ---------------------------------------------------------------------------------------


def rand(dtype: str, lo: float = -4.0, hi: float = 4.0, **shapes: tuple[int, ...]):
    """An input set of random values, one dtype and range: ``rand("float32", x=(2, 3))``."""
    return {name: R(dtype, shape, lo, hi) for name, shape in shapes.items()}


_THREE_TENSORS = S((R("float32", (2,)), R("float32", (3, 2)), R("float32", ())))

INPUTS: dict[str, Spec] = {
    "aten_addbmm": Spec(
        outputs=["like:self"],
        inputs=[
            rand("float32", self=(3, 5), batch1=(4, 3, 2), batch2=(4, 2, 5)),
            rand("float64", self=(5,), batch1=(2, 3, 6), batch2=(2, 6, 5)),  # self broadcast
            rand("int64", self=(1, 4), batch1=(3, 2, 5), batch2=(3, 5, 4)),
            rand("float32", self=(2, 2), batch1=(1, 2, 3), batch2=(1, 3, 2)),  # one batch
        ],
        attrs=[{}, {"beta": 0.5, "alpha": 2.0}, {"beta": 0.0}, {"alpha": -1.5}],
    ),
    "aten_addcdiv": Spec(
        outputs=["like:self"],
        inputs=[  # divisors away from 0
            {**rand("float32", self=(2, 3), tensor1=(2, 3)), "tensor2": R("float32", (2, 3), 0.25)},
            {**rand("float64", self=(3,), tensor1=(2, 3)), "tensor2": R("float64", (2, 1), -4, -1)},
            {**rand("float16", self=(4,), tensor1=(4,)), "tensor2": R("float16", (4,), 0.5, 2.0)},
        ],
        attrs=[{}, {"value": 0.5}, {"value": -2.0}],
    ),
    "aten_addcmul": Spec(
        outputs=["like:self"],
        inputs=[
            rand("float32", self=(2, 3), tensor1=(2, 3), tensor2=(2, 3)),
            rand("float64", self=(3,), tensor1=(2, 3), tensor2=(2, 1)),
            rand("int32", self=(4,), tensor1=(4,), tensor2=(4,)),
            rand("float16", self=(2, 2), tensor1=(2, 2), tensor2=(2, 2)),
        ],
        attrs=[{}, {"value": 0.5}, {"value": -3.0}],
    ),
    "aten_addmv": Spec(
        outputs=["like:self"],
        inputs=[
            rand("float32", self=(4,), mat=(4, 3), vec=(3,)),
            rand("float64", self=(1,), mat=(2, 5), vec=(5,)),
            rand("int64", self=(3,), mat=(3, 3), vec=(3,)),
        ],
        attrs=[{}, {"beta": 0.5, "alpha": 2.0}, {"beta": 0.0}, {"alpha": -1.0}],
    ),
    "aten_allclose": Spec(
        outputs=["bool"],
        inputs=[
            {"self": V("float32", [1.0, 2.0, 3.0]), "other": V("float32", [1.0, 2.000001, 3.0])},
            {"self": V("float32", [1, 2, 3, 4]), "other": V("float32", [1, 2.1, 3, 4.3])},
            rand("float64", self=(3, 4), other=(3, 4)),
            {"self": V("float64", [NAN, 1.0]), "other": V("float64", [NAN, 1.0])},
            {"self": V("int64", [1, 2, 3]), "other": V("int64", [1, 2, 4])},
        ],
        attrs=[
            {},
            {"rtol": 0.1},
            {"atol": 0.5, "equal_nan": True},
            {"rtol": 0.0, "atol": 0.0, "equal_nan": False},
        ],
    ),
    "aten_amax": Spec(
        outputs=["like:self"],
        inputs=[
            {"self": R("float32", (2, 3, 4)), "dim": V("int64", [1])},
            {"self": R("float64", (3, 5)), "dim": V("int64", [-1])},
            {"self": R("int32", (2, 3, 4)), "dim": V("int64", [0, 2])},
            {"self": R("uint8", (4, 3), 0, 255), "dim": V("int64", [])},  # dim=[]: all dims
            {"self": R("int64", (5,)), "dim": V("int64", [0])},
        ],
        attrs=[{}, {"keepdim": True}, {"keepdim": False}],
    ),
    "aten_atleast_1d_sequence": Spec(
        outputs=["seq:like:self"],
        inputs=[  # ranks 0 to 4
            {"self": S(tuple(R("float32", shape) for shape in [(), (3,), (2, 3), (2, 3, 4)]))},
            {"self": S((V("int64", 7), V("int64", [[1, 2]]), R("int64", (1, 2, 1, 2))))},
            {"self": S((R("bool", ()),))},
            {"self": S((R("float64", (4,)), R("float64", (2, 1))))},
        ],
    ),
    # Random for 0 < p < 1; at p = 0 and p = 1 every sample is determined: RandomUniformLike
    # draws from [0, 1), so `sample < p` is always false, respectively always true.
    "aten_bernoulli_p": Spec(
        outputs=["like:self"],
        inputs=[rand("float32", self=(3, 4)), rand("float64", self=(5,)), rand("int64", self=(2,))],
        attrs=[{"p": 0.0}, {"p": 1.0}],
    ),
    "aten_chunk": Spec(
        outputs=["seq:like:self"],
        cases=[  # the chunk sizes in comments
            ({"chunks": 3}, rand("float32", self=(7, 4))),  # 3, 3, 1
            ({"chunks": 2, "dim": 1}, rand("float32", self=(3, 4))),  # 2, 2
            ({"chunks": 4, "dim": -1}, rand("int64", self=(2, 3, 10))),  # 3, 3, 3, 1
            ({"chunks": 5, "dim": 0}, rand("float64", self=(3, 2))),  # 1, 1, 1
            ({"chunks": 1}, rand("bool", self=(4,))),  # 4
            ({"chunks": 3, "dim": 0}, rand("float16", self=(6, 2))),  # 2, 2, 2
        ],
    ),
    "aten_cross": Spec(
        outputs=["like:self"],
        cases=[  # size 3 along dim
            ({}, rand("float32", self=(4, 3), other=(4, 3))),
            ({"dim": 0}, rand("float64", self=(3, 5), other=(3, 5))),
            ({"dim": 1}, rand("float32", self=(2, 3, 4), other=(1, 3, 4))),  # broadcast
            ({"dim": -2}, rand("float32", self=(2, 3, 2), other=(2, 3, 2))),
            ({}, rand("int64", self=(2, 3), other=(2, 3))),
        ],
    ),
    # Complex tensors as torchlib exports them: a trailing dimension (real, imaginary).
    "aten_div_complex": Spec(
        outputs=["like:self"],
        inputs=[
            rand("float32", self=(3, 2), other=(3, 2)),
            rand("float64", self=(2, 4, 2), other=(4, 2)),
            {
                "self": V("float32", [[1.0, 0.0], [0.0, 1.0], [3.0, -4.0]]),
                "other": V("float32", [[0.0, 1.0], [2.0, 0.0], [3.0, 4.0]]),
            },
        ],
    ),
    "_aten_embedding_bag_onnx": Spec(
        outputs=_EMBEDDING_BAG_OUTPUTS, cases=embedding_bag_cases(padding=False)
    ),
    "_aten_embedding_bag_1d_padding_idx_onnx": Spec(
        outputs=_EMBEDDING_BAG_OUTPUTS, cases=embedding_bag_cases(padding=True)
    ),
    "aten_fill": Spec(
        outputs=["like:self"],
        inputs=[  # value: a 0-d tensor of any dtype
            {"self": R("float32", (2, 3)), "value": V("float32", 2.5)},
            {"self": R("int64", (3,)), "value": V("float64", -3.7)},
            {"self": R("bool", (2, 2)), "value": V("int64", 0)},
            {"self": R("float16", (4,)), "value": V("float32", 1.0e-3)},
            {"self": R("float64", (2, 1, 3)), "value": V("int64", 7)},
        ],
    ),
    "aten_getitem": Spec(
        outputs=["like:self"],
        inputs=[
            {"self": _THREE_TENSORS, "i": V("int64", 1)},
            {"self": _THREE_TENSORS, "i": V("int64", -1)},
            {"self": S((R("int64", (4,)), R("int64", (1,)))), "i": V("int64", 0)},
            {"self": S((R("bool", (2, 2)),)), "i": V("int64", 0)},
        ],
    ),
    "aten_is_nonzero": Spec(
        outputs=["bool"],
        inputs=[
            {"self": V("float32", [0.0])},
            {"self": V("float32", 3.5)},
            {"self": V("float64", [[-0.0]])},
            {"self": V("int64", [[0]])},
            {"self": V("int32", [-2])},
            {"self": V("bool", [True])},
            {"self": R("float32", (2, 3))},  # more than one element: False
        ],
    ),
    "aten_isfinite": special_values(("float32", "float64")),  # TFloatHighPrecision
    "aten_isinf": special_values(),
    "aten_isnan": special_values(),
    "aten_isneginf": special_values(),
    "aten_isposinf": special_values(),
    "aten_lerp": Spec(
        outputs=["like:self"],
        inputs=[
            {**rand("float32", self=(2, 3), end=(2, 3)), "weight": R("float32", (2, 3), 0.0, 1.0)},
            {**rand("float64", self=(3,), end=(3,)), "weight": V("float64", 0.25)},  # lerp.Scalar
            {**rand("float16", self=(4,), end=(4,)), "weight": R("float16", (4,), -0.5, 1.5)},
            {**rand("float32", self=(2, 2), end=(2, 2)), "weight": V("float64", 0.75)},
            {**rand("float32", self=(4,), end=(4,)), "weight": V("float32", [0, 0.5, 1, 0.4999])},
        ],
    ),
    "aten_log1p": unary(lo=-0.99, hi=10.0),
    "aten_mH": Spec(
        outputs=["like:self"],
        inputs=[
            rand("float32", self=(3, 4)),
            rand("int64", self=(2, 3, 4)),
            rand("int32", self=(2, 2, 3, 5)),  # (ORT's Einsum has no uint8 kernel)
            rand("float64", self=(5, 2)),
        ],
    ),
    "aten_mT_complex": Spec(
        outputs=["like:self"],
        inputs=[rand("float32", self=(3, 4, 2)), rand("float64", self=(2, 3, 4, 2))],
    ),
    # The output is complex: (real, imaginary) in a new last dimension.
    "aten_polar": Spec(
        outputs=["like:abs"],
        inputs=[
            {"abs": R("float32", (2, 3), 0, 4), "angle": R("float32", (2, 3), -math.pi, math.pi)},
            {"abs": R("float64", (3,), 0, 4), "angle": R("float64", (2, 3), -math.pi, math.pi)},
            {"abs": V("float32", [1.0, 2.0, 0.0]), "angle": V("float32", [0.0, math.pi / 2, 1.0])},
        ],
    ),
    "aten_round_decimals": Spec(
        outputs=["like:self"],
        inputs=[
            rand("float32", -100.0, 100.0, self=(3, 4)),
            rand("float64", -1000.0, 1000.0, self=(5,)),
            rand("float16", -10.0, 10.0, self=(2, 3)),
            {"self": V("float32", [0.5, 1.5, 2.5, -0.5, 0.125, 0.375, 15.0, 25.0])},  # ties
        ],
        attrs=[{}, {"decimals": 2}, {"decimals": -1}, {"decimals": 3}],
    ),
    "aten_selu": unary(),
    # Compiled from the @script() variant: see SCRIPT_VARIANT.
    "aten_linalg_det": Spec(
        outputs=["like:A"],
        inputs=[  # square matrices (ORT's Det has a float32 kernel only)
            rand("float32", A=(3, 3)),
            rand("float32", A=(2, 4, 4)),
            {"A": V("float32", [[1.0, 2.0], [2.0, 4.0]])},  # singular
            rand("float32", A=(1, 1)),
        ],
    ),
    "aten_glu": Spec(
        outputs=["like:self"],
        cases=[  # an even size along dim
            ({}, rand("float32", self=(3, 4))),
            ({"dim": 0}, rand("float64", self=(4, 3))),
            ({"dim": 1}, rand("float32", self=(2, 6, 3))),
            ({"dim": -2}, rand("float16", self=(2, 2, 5))),
            ({"dim": -1}, rand("float64", self=(2,))),
        ],
    ),
    "aten_hardswish": unary(lo=-5.0, hi=5.0),
    "aten_hardtanh": Spec(
        outputs=["like:self"],
        inputs=[
            rand("float32", self=(3, 4)),
            rand("float64", -8.0, 8.0, self=(5,)),
            rand("int64", -9, 9, self=(2, 3)),
            rand("float16", self=(4,)),
        ],
        attrs=[
            {},
            {"min_val": -0.5, "max_val": 2.0},
            {"min_val": 0.0, "max_val": 6.0},  # relu6
            {"max_val": 3.0},
        ],
    ),
    "aten_log_sigmoid": unary(lo=-20.0, hi=20.0),
    "aten_mish": unary(),
    "aten_softplus": Spec(
        outputs=["like:self"],
        inputs=[
            rand("float32", -30.0, 30.0, self=(3, 4)),
            rand("float64", -10.0, 10.0, self=(6,)),
            rand("float16", -10.0, 10.0, self=(2, 3)),
            # self * beta at, below and above each threshold
            {"self": V("float32", [20.0, 20.5, 10.0, 1.0, 0.5, 5.0, 2.5, 0.0, -20.0])},
        ],
        attrs=[{}, {"beta": 2.0}, {"threshold": 1.0}, {"beta": 0.5, "threshold": 5.0}],
    ),
    "prims_device_put": Spec(
        outputs=["like:a"],
        inputs=[rand("float32", a=(2, 3)), rand("int64", a=(4,)), rand("bool", a=())],
        attrs=[{}, {"device": "cpu"}, {"device": "cuda:0"}],
    ),
    # (ORT's Erf has no float64 kernel)
    "aten_special_erf": unary(_NO_FLOAT64),
    "aten_special_erfc": unary(_NO_FLOAT64),
    "aten_special_erfcx": unary(_NO_FLOAT64, lo=-3.0, hi=3.0),  # exp(x^2) stays finite
    "aten_special_expm1": unary(),
    "aten_special_sinc": unary(special=[0.0, -0.0, 1.0, 0.5, -2.0, 1.0e-8]),
    "aten_special_xlogy": Spec(
        outputs=["like:self"],
        inputs=[
            {**rand("float32", -2.0, 2.0, self=(3, 4)), **rand("float32", 0.01, 5.0, other=(3, 4))},
            {  # self 0, other NaN, 0 or negative
                "self": V("float32", [0.0, 0.0, 1.0, 2.0, -1.0, 0.0, 3.0]),
                "other": V("float32", [NAN, 0.0, 0.0, NAN, 2.0, -1.0, -1.0]),
            },
            {**rand("float64", self=(2, 3)), **rand("float64", 0.01, 5.0, other=(3,))},
            {"self": V("float16", 0.5), **rand("float16", 0.01, 5.0, other=(4,))},  # Scalar_Self
        ],
    ),
}

# The same operator with the other reduction, rank or name.
INPUTS["aten_amin"] = INPUTS["aten_amax"]
INPUTS["aten_atleast_2d_sequence"] = INPUTS["aten_atleast_1d_sequence"]
INPUTS["aten_atleast_3d_sequence"] = INPUTS["aten_atleast_1d_sequence"]
INPUTS["aten_mT"] = INPUTS["aten_mH"]


# ---------------------------------------------------------------------------------------
# Compiling, wrapping and running
# ---------------------------------------------------------------------------------------


def _variant(name: str) -> str:
    return "script" if name in SCRIPT_VARIANT else "torch_op"


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    """Directory of the extracted modules (one ``NAME.onnxs`` per function)."""
    return tmp_path_factory.mktemp("torchlib-numeric-src")


@pytest.fixture(scope="module")
def reference_workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("torchlib-numeric-modules")


def _make_feeds(name: str, inputs: dict[str, R | V | S]) -> dict[str, Any]:
    """The values of an input set: the same under every attribute setting."""
    rng = np.random.default_rng(harness.seed_for("torchlib", name, repr(inputs)))
    return {k: desc.make(rng) for k, desc in inputs.items()}


def _elem_type(value: Any) -> int:
    return harness.elem_type_of_array(value[0] if isinstance(value, list) else value)


def _output_types(spec: Spec, feeds: dict[str, Any]) -> list[tuple[int, bool]]:
    """(element type, is a sequence) of each output."""
    result = []
    for out in spec.outputs:
        is_seq = out.startswith("seq:")
        out = out.removeprefix("seq:")
        if out.startswith("like:"):
            result.append((_elem_type(feeds[out.removeprefix("like:")]), is_seq))
        else:
            result.append((harness.elem_type_of_name(out), is_seq))
    return result


def _wrap(
    fp: onnx.FunctionProto,
    callees: list[onnx.FunctionProto],
    feeds: dict[str, Any],
    outputs: list[tuple[int, bool]],
    attrs: dict[str, Any],
    attr_types: dict[str, str],
) -> onnx.ModelProto:
    """harness.wrap_function, with sequence-typed inputs and outputs where needed and the
    scripted callees in the model."""
    inputs = [
        (k, _elem_type(v), None if isinstance(v, list) else v.shape) for k, v in feeds.items()
    ]
    graph_outputs = [(f"output_{i}", t, None) for i, (t, _) in enumerate(outputs)]
    model = harness.wrap_function(fp, inputs, graph_outputs, attrs, attr_types)
    sequences = [isinstance(v, list) for v in feeds.values()] + [s for _, s in outputs]
    for vi, is_seq in zip([*model.graph.input, *model.graph.output], sequences):
        if is_seq:
            elem = vi.type.tensor_type.elem_type
            vi.CopyFrom(helper.make_tensor_sequence_value_info(vi.name, elem, None))
    model.functions.extend(callees)
    return model


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return "seq(" + ", ".join(_describe(v) for v in value) + ")"
    return f"{value.dtype}{list(value.shape)}"


def _assert_same(actual: Any, expected: Any, msg: str, tol: dict | None) -> None:
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{msg}: not a sequence: {_describe(actual)}"
        assert len(actual) == len(expected), f"{msg}: {len(actual)} elements, not {len(expected)}"
        for j, (a, e) in enumerate(zip(actual, expected)):
            _assert_same(a, e, f"{msg}[{j}]", tol)
        return
    assert not isinstance(actual, list), f"{msg}: a sequence, expected a tensor"
    harness.assert_same_output(actual, expected, msg, tol, bits=True)


# ---------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------


def test_inputs_cover_every_function():
    names = [r.name for r in SCRIPTED]
    assert len(names) == len(set(names)), "two scripted functions with the same name"
    missing = [n for n in names if n not in INPUTS and n not in SKIPPED]
    assert not missing, (
        f"scripted torchlib functions without inputs in INPUTS (and not in SKIPPED): {missing}"
    )
    unknown = sorted((set(INPUTS) | set(SKIPPED) | set(SCRIPT_VARIANT)) - set(names))
    assert not unknown, f"entries for functions torchlib does not define (scripted): {unknown}"
    both = sorted(set(INPUTS) & set(SKIPPED))
    assert not both, f"both skipped and given inputs: {both}"
    for name, reason in SKIPPED.items():
        assert "complex" in reason or "random" in reason, (
            f"{name}: only complex-number or random outputs justify a skip, not {reason!r}"
        )


@pytest.mark.parametrize("record", SCRIPTED, ids=[r.name for r in SCRIPTED])
def test_spec(record: torchlib_source.TorchlibFunction, sources: Path):
    if record.name in SKIPPED:
        pytest.skip(SKIPPED[record.name])
    assert record.module_text is not None, record.skip_reason
    spec = INPUTS[record.name]
    path = record.write(sources, _variant(record.name))
    input_names, attr_types = harness.ast_signature(path, record.name)
    defaults = harness.ast_defaults(path, record.name)
    runs = spec.runs()
    assert len(runs) >= 2, "give several runs"
    for attrs, inputs in runs:
        assert list(inputs) == input_names, (
            f"input set names {list(inputs)}, the function's inputs are {input_names}"
        )
        unknown = set(attrs) - set(attr_types)
        assert not unknown, f"attribute setting {attrs} names non-attributes {unknown}"
        required = set(attr_types) - set(defaults)
        assert required <= set(attrs), f"setting {attrs} misses required {required - set(attrs)}"
    settings = [attrs for attrs, _ in runs]
    if attr_types:
        distinct = {tuple(sorted(s.items())) for s in settings}
        assert len(distinct) >= 2, "give several attribute settings"
    for name in set(attr_types) & set(defaults):
        assert any(name not in s for s in settings), f"no setting omits {name!r} (its default)"
        assert any(name in s for s in settings), f"no setting gives {name!r} explicitly"
    for _, inputs in runs:
        _output_types(spec, _make_feeds(record.name, inputs))  # every like: names an input
    if spec.tol is not None:
        assert spec.tol.get("why"), "a tolerance needs a reason"


@pytest.mark.parametrize("record", SCRIPTED, ids=[r.name for r in SCRIPTED])
def test_agrees(
    record: torchlib_source.TorchlibFunction, sources: Path, reference_workdir: Path, onnxsc_builds
):
    if record.name in SKIPPED:
        pytest.skip(SKIPPED[record.name])
    assert record.module_text is not None, record.skip_reason
    spec = INPUTS[record.name]
    path = record.write(sources, _variant(record.name))
    _, attr_types = harness.ast_signature(path, record.name)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # onnxscript's deprecation and converter warnings
        refs = {f.name: f for f in harness.compile_with_onnxscript(path, reference_workdir)}
    ref_fp = refs[record.name].proto
    ref_callees = [refs[n].proto for n in record.dependencies]

    built = onnxsc_builds.functions(path)  # warnings are fine; errors fail here
    assert record.name in built, f"onnxsc's library has no {record.name}: {sorted(built)}"
    fp = built[record.name]
    callees = [built[n] for n in record.dependencies]
    assert len(fp.output) == len(ref_fp.output) == len(spec.outputs), (
        f"outputs: onnxsc {len(fp.output)}, onnxscript {len(ref_fp.output)}, "
        f"INPUTS gives {len(spec.outputs)}"
    )

    for index, (attrs, inputs) in enumerate(spec.runs()):
        feeds = _make_feeds(record.name, inputs)
        outputs = _output_types(spec, feeds)
        where = (
            f"{record.name} ({record.location}) with attributes {attrs}, run {index} ("
            + ", ".join(f"{k}: {_describe(v)}" for k, v in feeds.items())
            + ")"
        )
        ref_model = _wrap(ref_fp, ref_callees, feeds, outputs, attrs, attr_types)
        try:
            expected = harness.run_model(ref_model, feeds)
        except Exception as exc:  # noqa: BLE001
            pytest.fail(
                f"onnxscript's function fails on {where} (a problem of the inputs chosen, "
                f"not of onnxsc): {exc}"
            )
        model = _wrap(fp, callees, feeds, outputs, attrs, attr_types)
        try:
            actual = harness.run_model(model, feeds)
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"ONNX Runtime fails on onnxsc's function, {where}: {exc}")
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            _assert_same(a, e, f"{where}: output {i}", spec.tol)
