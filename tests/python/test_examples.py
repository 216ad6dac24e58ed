"""Conformance of the example translation functions (``examples/*.onnxs``).

For every function of every example: build the file with onnxsc, wrap the compiled
function in a one-node model, check the model with ``onnx.checker`` (full check), run it in
ONNX Runtime, and compare with a numpy reference written by hand from the source's meaning.

Every example function must have an entry in ``REFERENCES``: a new example without one
fails ``test_example_function[...]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import onnx
import pytest

import harness

EXAMPLE_FILES = sorted(harness.EXAMPLES_DIR.glob("*.onnxs"))
EXAMPLE_FUNCTIONS = [
    (path, name) for path in EXAMPLE_FILES for name in harness.top_level_functions(path)
]

RNG = np.random.default_rng(20240611)


def f32(x: float) -> np.float32:
    """Float attributes are stored as 32-bit floats: what the function sees."""
    return np.float32(x)


def randn(shape, dtype=np.float32, scale=3.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(dtype)


@dataclass
class Reference:
    """A numpy reference for one example function.

    ``compute(**inputs, **attrs)`` returns the tuple of expected outputs; its keyword
    defaults are the attribute defaults the source declares, so a call that omits an
    attribute checks the compiled default. ``rtol``/``atol`` of 0 mean exact equality.
    """

    compute: Callable[..., tuple[np.ndarray, ...]]
    inputs: list[dict[str, np.ndarray]]
    attrs: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    rtol: float = 0.0
    atol: float = 0.0
    tolerance_reason: str = ""


# ---------------------------------------------------------------------------------------
# tutorial.onnxs, scenario 3
# ---------------------------------------------------------------------------------------


def ref_onnx_add_and_round(input):
    # Round is round-half-to-even, like np.round; x + x is exact, so this is bit-exact.
    return (np.round(input + input),)


_quarters = np.arange(-12, 13, dtype=np.float64) / 4.0  # 2x hits every .5 tie


# ---------------------------------------------------------------------------------------
# tutorial.onnxs, scenario 1
# ---------------------------------------------------------------------------------------


def ref_custom_aten_add(self, other, alpha=1.0):
    a = f32(alpha)
    if a != 1.0:
        # CastLike(alpha, other): float32 -> other's dtype (truncation for integers)
        other = other * np.asarray(a).astype(other.dtype)
    return (other + self,)


# ---------------------------------------------------------------------------------------
# tutorial.onnxs, scenario 2
# ---------------------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def ref_custom_aten_gelu(self, approximate="none"):
    # The translation always calls com.microsoft::Gelu (the exact, erf-based GELU) and
    # leaves `approximate` unread on purpose (`del`), so the reference ignores it too.
    x = self.astype(np.float64)
    return ((0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(np.float32),)


# ---------------------------------------------------------------------------------------
# language_tour.onnxs
# ---------------------------------------------------------------------------------------


def ref_leaky_or_clamp(x, mode="leaky", alpha=0.01):
    if mode == "leaky":
        return (np.where(x >= 0, x, x * f32(alpha).astype(x.dtype)),)
    if mode == "relu6":
        return (np.clip(x, x.dtype.type(0.0), x.dtype.type(6.0)),)
    return (x.copy(),)


def ref_normalize(x):
    # Computed in float64 from the float32 input; EPSILON is the float32 literal 1e-5.
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    centered = x64 - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return ((centered / np.sqrt(var + np.float64(f32(1e-5)))).astype(np.float32),)


def ref_top2(x):
    # TopK(largest=1, sorted): descending values; equal values keep the lower index first.
    idx = np.argsort(-x, kind="stable")[:2].astype(np.int64)
    return (x[idx], idx)


def ref_positive_mask(x, threshold=0.0):
    mask = x > f32(threshold)
    return (mask.astype(np.float32) * x,)


def ref_clip_above(x, high):
    return (np.minimum(x, high),)


REFERENCES: dict[str, Reference] = {
    "onnx_add_and_round": Reference(
        ref_onnx_add_and_round,
        inputs=[
            {"input": _quarters.astype(np.float32)},
            {"input": _quarters.reshape(5, 5).astype(np.float64)},
            {"input": randn((2, 3, 4))},
            {"input": np.array(1.25, dtype=np.float32)},
        ],
    ),
    "custom_aten_add": Reference(
        ref_custom_aten_add,
        inputs=[
            {"self": randn((2, 3)), "other": randn((2, 3))},
            {"self": randn((2, 3)), "other": randn((3,))},  # broadcasting
            {"self": randn((4,), np.float64), "other": randn((4,), np.float64)},
            {
                "self": RNG.integers(-50, 50, (3, 2)).astype(np.int64),
                "other": RNG.integers(-50, 50, (3, 2)).astype(np.int64),
            },
        ],
        # alpha 0.1 is not exact in float32: with float64 inputs the product shows that the
        # attribute was cast from float32. 2.5 truncates to 2 for integer inputs.
        attrs=[{}, {"alpha": 1.0}, {"alpha": 2.0}, {"alpha": -0.5}, {"alpha": 0.1}, {"alpha": 2.5}],
    ),
    "custom_aten_gelu": Reference(
        ref_custom_aten_gelu,
        inputs=[
            {"self": randn((2, 5))},
            {"self": np.linspace(-6, 6, 25, dtype=np.float32)},
        ],
        attrs=[{}, {"approximate": "none"}, {"approximate": "tanh"}],
        rtol=1e-5,
        atol=1e-6,
        tolerance_reason="erf is evaluated by ONNX Runtime's float32 kernel, by Python's "
        "math.erf in float64 here",
    ),
    "leaky_or_clamp": Reference(
        ref_leaky_or_clamp,
        # float32 only: TReal allows DOUBLE, but ONNX Runtime has no double LeakyRelu kernel
        # (the session cannot even be created, whatever the mode).
        inputs=[
            {"x": randn((3, 4), scale=5.0)},
            {"x": np.array([-7.0, -1.0, 0.0, 0.5, 5.9, 6.0, 6.5, 100.0], dtype=np.float32)},
        ],
        attrs=[
            {},
            {"mode": "leaky"},
            {"alpha": 0.5},
            {"mode": "leaky", "alpha": 0.2},
            {"mode": "relu6"},
            {"mode": "relu6", "alpha": 3.0},
            {"mode": "identity"},
        ],
    ),
    "normalize": Reference(
        ref_normalize,
        inputs=[
            {"x": randn((2, 5))},
            {"x": randn((3, 2, 8), scale=10.0)},
            {"x": np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)},
        ],
        rtol=1e-5,
        atol=1e-5,
        tolerance_reason="the reference is computed in float64; ONNX Runtime reduces and "
        "divides in float32",
    ),
    "top2": Reference(
        ref_top2,
        inputs=[
            {"x": randn((7,))},
            {"x": np.array([1.0, 3.0, 3.0, 2.0], dtype=np.float32)},  # tie
            {"x": np.array([-1.0, -2.0], dtype=np.float32)},
        ],
    ),
    "positive_mask": Reference(
        ref_positive_mask,
        inputs=[
            {"x": randn((3, 4))},
            {"x": np.array([-1.0, 0.0, 0.25, 0.5, 0.75, 2.0], dtype=np.float32)},
        ],
        attrs=[{}, {"threshold": 0.0}, {"threshold": 0.5}, {"threshold": -1.0}],
    ),
    "clip_above": Reference(
        ref_clip_above,
        inputs=[
            {"x": randn((3, 4)), "high": np.array(0.5, dtype=np.float32)},
            {"x": randn((5,)), "high": np.array(-1.0, dtype=np.float32)},
            {"x": randn((2, 2)), "high": np.array(100.0, dtype=np.float32)},
        ],
    ),
}


def _id(item) -> str:
    path, name = item
    return f"{path.stem}::{name}"


def test_examples_exist():
    assert EXAMPLE_FILES, f"no examples found in {harness.EXAMPLES_DIR}"
    assert EXAMPLE_FUNCTIONS, "the examples define no functions"


def test_no_stale_references():
    """A reference for a function that no longer exists is a sign the table is stale."""
    names = {name for _, name in EXAMPLE_FUNCTIONS}
    stale = sorted(set(REFERENCES) - names)
    assert not stale, f"references for functions that no example defines: {stale}"


def test_example_names_are_unique():
    names = [name for _, name in EXAMPLE_FUNCTIONS]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"example functions defined twice: {dupes}"


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_example_builds_in_source_order(path: Path, onnxsc_builds):
    """``onnxsc build FILE`` compiles every function of the file, in source order."""
    model = onnxsc_builds.build(path).require_model()
    assert [f.name for f in model.functions] == harness.top_level_functions(path)


def test_examples_directory_builds(onnxsc, tmp_path):
    """Building the whole directory gives every example function, each file's functions
    in source order."""
    result = onnxsc.build([harness.EXAMPLES_DIR], tmp_path / "examples.onnx")
    model = result.require_model()
    built = [f.name for f in model.functions]
    assert sorted(built) == sorted(name for _, name in EXAMPLE_FUNCTIONS)
    for path in EXAMPLE_FILES:
        expected = harness.top_level_functions(path)
        assert [n for n in built if n in expected] == expected, path.name


@pytest.mark.parametrize("item", EXAMPLE_FUNCTIONS, ids=_id)
def test_example_domain(item, onnxsc_builds):
    """The domain is the one of the opset given to ``@script(opset)``, else "this"."""
    path, name = item
    expected = harness.ast_expected_domain(path, name)
    assert expected is not None, f"the test cannot tell {name}'s domain from its source"
    assert onnxsc_builds.functions(path)[name].domain == expected


@pytest.mark.parametrize("item", EXAMPLE_FUNCTIONS, ids=_id)
def test_example_signature_metadata(item, onnxsc_builds):
    """The ``onnxsc.signature`` metadata names the inputs, and the attributes with their
    types and defaults."""
    path, name = item
    fp = onnxsc_builds.functions(path)[name]
    sig = harness.metadata_signature(fp)
    assert sig is not None, f"{name}: no {harness.SIGNATURE_KEY!r} metadata entry"
    assert sig.get("version") == 1, "the format version of docs/signature-format.md"
    inputs, attr_types = harness.ast_signature(path, name)
    assert [i["name"] for i in sig["inputs"]] == inputs
    assert {a["name"]: a["type"] for a in sig["attributes"]} == attr_types
    assert list(fp.input) == inputs
    defaults = harness.ast_defaults(path, name)
    for entry in sig["attributes"]:
        attr = entry["name"]
        if attr in defaults:
            assert "default" in entry, f"attribute {attr!r} has a default"
            assert harness.same_default(defaults[attr], entry["default"], entry["type"]), (
                f"default of {attr!r}: {entry['default']!r} != {defaults[attr]!r}"
            )
        else:
            assert entry.get("default") is None, f"attribute {attr!r} has no default"


@pytest.mark.parametrize("item", EXAMPLE_FUNCTIONS, ids=_id)
def test_example_function(item, onnxsc_builds):
    path, name = item
    ref = REFERENCES.get(name)
    assert ref is not None, (
        f"example function {name!r} ({path.name}) has no numpy reference: add one to "
        f"REFERENCES in {Path(__file__).name}"
    )
    fp = onnxsc_builds.functions(path).get(name)
    assert fp is not None, f"onnxsc did not compile {name!r} from {path.name}"
    input_names, attr_types = harness.ast_signature(path, name)

    # The reference table itself must exercise the function properly.
    for feeds in ref.inputs:
        assert list(feeds) == input_names, f"reference inputs {list(feeds)} != {input_names}"
    if attr_types:
        assert {} in ref.attrs, "the reference must include a call that omits every attribute"
        assert len(ref.attrs) >= 3, "test several attribute values"
    assert len(ref.inputs) >= 2, "test several inputs"

    checked = 0
    for attrs in ref.attrs:
        for feeds in ref.inputs:
            expected = ref.compute(**feeds, **attrs)
            model = harness.wrap_function(
                fp,
                [(n, harness.elem_type_of_array(a), a.shape) for n, a in feeds.items()],
                [
                    (f"output_{i}", harness.elem_type_of_array(e), e.shape)
                    for i, e in enumerate(expected)
                ],
                attrs,
                attr_types,
            )
            where = f"{name} with attributes {attrs} on inputs " + ", ".join(
                f"{k}: {v.dtype}{list(v.shape)}" for k, v in feeds.items()
            )
            try:
                onnx.checker.check_model(model, full_check=True)
            except Exception as exc:  # noqa: BLE001 - report which call failed
                pytest.fail(f"onnx.checker rejects {where}: {exc}")
            try:
                actual = harness.run_model(model, feeds)
            except Exception as exc:  # noqa: BLE001
                pytest.fail(f"ONNX Runtime fails on {where}: {exc}")
            assert len(actual) == len(expected)
            for i, (a, e) in enumerate(zip(actual, expected)):
                assert a.dtype == e.dtype, f"{where}: output {i} dtype {a.dtype} != {e.dtype}"
                assert a.shape == e.shape, f"{where}: output {i} shape {a.shape} != {e.shape}"
                msg = f"{where}: output {i}"
                if ref.rtol or ref.atol:
                    np.testing.assert_allclose(a, e, rtol=ref.rtol, atol=ref.atol, err_msg=msg)
                else:
                    np.testing.assert_array_equal(a, e, err_msg=msg)
            checked += 1
    assert checked > 0
