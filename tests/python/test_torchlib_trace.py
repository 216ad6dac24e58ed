"""torchlib's own translations, copied verbatim, exported through onnxsc: the same text the
exporter runs as Python (its default registry is torchlib) against onnxsc's evaluation of it,
on PyTorch's OpInfo samples, for the operators of common models.

The copies: torchlib's ``core.py``, ``nn.py``, ``special.py`` and ``prims.py`` of the installed
onnxscript, as ``.onnxs`` files, unchanged. The few ``@torch_op`` translations onnxsc rejects
(each a verified torchlib defect: those ``onnxsc check`` finds are listed in ``REJECTED``, and
the table's check against torch's registrations finds ``prims_var`` too) are left out of the
table with ``skip_invalid=True``, as a library author builds it.

For every sample of each operator (``onnxsc._optest`` finds them, as ``python -m onnxsc test``
does), the sample is exported twice, with the default registry (torchlib traced by Python)
and with the table of the copies (torchlib evaluated by onnxsc), and both run in ONNX Runtime:

* differential: both exports fail, or both succeed with the same outputs (within the dtype's
  tolerance); a difference is onnxsc's, whatever PyTorch says;
* against PyTorch eager: where torchlib's own export matches PyTorch, onnxsc's does too. A
  sample torchlib itself gets wrong is counted, not held against onnxsc.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/test")
pytest.importorskip("expecttest", reason="expecttest is installed by scripts/test")

from onnxsc._optest import judge as _judge  # noqa: E402
from onnxsc._optest import opinfo as _opinfo  # noqa: E402
from onnxsc._optest.calls import flatten as _flatten  # noqa: E402
from onnxsc._optest.run import accepted_dtypes  # noqa: E402
from onnxsc._optest.tolerance import tolerance  # noqa: E402
from onnxsc._table import compile_library, entries  # noqa: E402

MODULES = ("core", "nn", "special", "prims")

# Translations `onnxsc check` rejects, each for a defect of torchlib itself.
REJECTED = {
    # `if input_numel == 0:` tests a tensor: always true in the exporter's tracing.
    "aten__unique": {"E0906"},
    "aten__unique2": {"E0906"},
    # Ignores `align_to_window`, and tests `n_win < n_fft` (a tensor) with Python's `if`.
    "aten_stft": {"E0503", "E0906"},
}

# The operators of common models: linear algebra, convolution and pooling, normalisation,
# softmax and attention, shape and indexing operators, reductions, padding, activations.
COMMON_OPS = [
    "aten::linear", "aten::matmul", "aten::addmm", "aten::mm", "aten::bmm", "aten::conv2d",
    "aten::max_pool2d", "aten::avg_pool2d", "aten::layer_norm", "aten::native_layer_norm",
    "aten::group_norm", "aten::_native_batch_norm_legit_no_training", "aten::softmax.int",
    "aten::_softmax", "aten::log_softmax.int", "aten::_log_softmax",
    "aten::scaled_dot_product_attention", "aten::view", "aten::permute", "aten::transpose.int",
    "aten::t", "aten::cat", "aten::unsqueeze", "aten::squeeze.dim", "aten::expand",
    "aten::slice.Tensor", "aten::select.int", "aten::split.Tensor", "aten::index_select",
    "aten::gather", "aten::mean.dim", "aten::sum.dim_IntList", "aten::amax", "aten::argmax",
    "aten::cumsum", "aten::constant_pad_nd", "aten::gelu", "aten::relu", "aten::silu",
    "aten::sigmoid", "aten::tanh", "aten::rsqrt", "aten::add.Tensor", "aten::sub.Tensor",
    "aten::mul.Tensor", "aten::div.Tensor", "aten::masked_fill.Scalar", "aten::clone",
    "aten::topk", "aten::sort",
]  # fmt: skip

DTYPES = ("float32", "float16", "int64")


@dataclass
class Sample:
    """One call: ``call(*tensors)`` computes it; the description names its arguments."""

    call: object
    tensors: list
    description: str


def samples_of(entry, dtype, limit: int) -> list:
    """PyTorch's OpInfo samples of the entry's operator, as `python -m onnxsc test` finds them:
    the database's own calls, and the operator called as they call it (``F.softmax`` reaches
    ``aten::_softmax`` only so: the exporter keeps ``aten::softmax.int``)."""
    found = _opinfo.samples(entry.qualname, entry.overload, dtype)
    own = [c for c in found if c.origin == "opinfo"][:limit] + [c for c in found if c.origin == "direct"][:limit]
    return [Sample(c.run, c.tensors(), c.describe()) for c in own]


class _Module(torch.nn.Module):
    def __init__(self, call):
        super().__init__()
        self.call = call

    def forward(self, *tensors):
        return self.call(*tensors)


def _attention_samples(dtype) -> list:
    """4-D attention, as models call it (torchlib's translation takes 4-D inputs only, and
    OpInfo's samples are smaller): plain, causal, with a boolean mask, with a float mask."""
    if dtype is not torch.float32:
        return []
    F = torch.nn.functional
    q, k, v = (torch.randn(2, 3, 5, 8) for _ in range(3))
    bool_mask = torch.rand(5, 5) > 0.3
    float_mask = torch.randn(2, 3, 5, 5)
    return [
        Sample(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [q, k, v], "q, k, v [2, 3, 5, 8]"),
        Sample(
            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [q, k, v], "causal"
        ),
        Sample(
            lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), [q, k, v, bool_mask], "bool mask"
        ),
        Sample(
            lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), [q, k, v, float_mask], "float mask"
        ),
    ]


# Operators whose samples here torchlib's own export never gets right (so neither does the copy):
# amax's fails to export for every sample; avg_pool2d's differ from PyTorch's.
TORCHLIB_NEVER_RIGHT = {"aten::amax", "aten::avg_pool2d"}

# Outputs compared with PyTorch eager, where torchlib returns others by design: the batch norm's
# saved statistics have CUDA's shapes, not the CPU's empty ones (its comment says so).
EAGER_OUTPUTS = {"aten::_native_batch_norm_legit_no_training": 1}

# Samples beside OpInfo's, by operator.
EXTRA_SAMPLES = {"aten::scaled_dot_product_attention": _attention_samples}
SAMPLES = 3

def _translation_ranges(text: str) -> dict:
    """Each module-level `@torch_op` function's name and line range, decorators included."""
    import ast

    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and any(
            isinstance(d, ast.Call) and getattr(d.func, "id", "") == "torch_op" for d in node.decorator_list
        ):
            out[node.name] = (min([d.lineno for d in node.decorator_list] + [node.lineno]), node.end_lineno)
    return out


@pytest.fixture(scope="module")
def copies(onnxsc_bin, tmp_path_factory) -> list:
    import onnxscript

    ops_dir = Path(onnxscript.__file__).parent / "function_libs" / "torch_lib" / "ops"
    out = tmp_path_factory.mktemp("torchlib")
    paths = []
    for m in MODULES:
        shutil.copy(ops_dir / f"{m}.py", out / f"{m}.onnxs")
        paths.append(out / f"{m}.onnxs")
    checked = subprocess.run(
        [str(onnxsc_bin), "check", "--format", "json", *map(str, paths)], capture_output=True, text=True, timeout=300
    )
    errors = [d for d in map(json.loads, checked.stdout.splitlines()) if d["code"].startswith("E")]
    rejected: dict = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        mine = [e for e in errors if Path(e["file"]).name == path.name]
        for name, (start, end) in _translation_ranges(text).items():
            codes = {e["code"] for e in mine if start <= e["line"] <= end}
            if codes:
                rejected[name] = codes
    assert rejected == REJECTED, rejected
    assert len(errors) == sum(len(c) for c in REJECTED.values()), errors
    return paths


@pytest.fixture(scope="module")
def table(copies) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data, model = compile_library(copies, skip_invalid=True)
        return {e.qualname: e for e in entries(model, data)}


def _export_and_run(sample, table):
    """The sample exported (with the table, or the default registry for None) and run in ONNX
    Runtime: its outputs, or the exception that stopped it."""
    try:
        with _judge.quiet():
            program = torch.onnx.export(
                _Module(sample.call), tuple(sample.tensors), dynamo=True, custom_translation_table=table
            )
            return _flatten(program(*sample.tensors))
    except Exception as e:  # a failure is a result: both ways must agree on it
        return e


def _contradicts_pytorch(result) -> bool:
    """Whether an export stopped at onnxsc's E0908: the translation returns, for this call,
    what PyTorch's own result contradicts (docs/shapes.md)."""
    chain, e = [], result if isinstance(result, Exception) else None
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ or e.__context__
    return any("error[E0908]" in str(e) for e in chain)


def _close(actual: list, expected: list, dtype_name: str) -> bool:
    if len(actual) != len(expected):
        return False
    rtol, atol = tolerance("elementwise", dtype_name) if dtype_name.startswith("float") else (0, 0)
    for a, e in zip(actual, expected):
        if a.shape != e.shape or a.dtype != e.dtype:
            return False
        if not torch.allclose(a.to(torch.float64), e.detach().to(torch.float64), rtol=rtol, atol=atol, equal_nan=True):
            return False
    return True


@pytest.mark.parametrize("op", COMMON_OPS)
def test_torchlib_translation_exports_as_torchlib_does(op, table):
    entry = table.get(op)
    assert entry is not None, f"{op} has no translation in the copies"
    compared = matched_eager = 0
    torchlib_wrong: list = []
    improved: list = []
    for dtype_name in DTYPES:
        accepted = accepted_dtypes(entry.signature)
        if accepted is not None and _judge.ONNX_NAMES[dtype_name] not in accepted:
            continue
        torch.manual_seed(0)
        dtype = getattr(torch, dtype_name)
        extra = EXTRA_SAMPLES.get(op, lambda _: [])(dtype)
        for sample in samples_of(entry, dtype, SAMPLES) + extra:
            try:
                expected = _flatten(sample.call(*sample.tensors))
            except Exception:
                continue  # PyTorch itself rejects the sample
            every_output = expected
            n = EAGER_OUTPUTS.get(op, len(expected))
            expected = expected[:n]
            calls = entry.translation.calls
            ours = _export_and_run(sample, {entry.overload: entry.translation})
            if entry.translation.calls == calls:
                continue  # the export never called the translation for this sample
            theirs = _export_and_run(sample, None)
            where = f"{op} on {sample.description}"
            if isinstance(theirs, Exception):
                compared += 1
                if not isinstance(ours, Exception):
                    # onnxsc types a Python constant from the op's other inputs where their
                    # types are known, computed values' included; the exporter's tracing knows
                    # only the call's own tensors' types and makes a FLOAT constant, which
                    # ONNX Runtime may refuse (docs/trace.md). Then onnxsc must be right.
                    assert _close(ours[:n], expected, dtype_name), f"{where}: torchlib's export fails ({theirs}), onnxsc's is wrong"
                    improved.append(sample.description)
                continue
            if _contradicts_pytorch(ours) and not _close(theirs, every_output, dtype_name):
                # onnxsc refuses (E0908) a model whose outputs contradict PyTorch's for the call,
                # which torchlib's export writes: the batch norm's statistics, by design.
                compared += 1
                improved.append(sample.description)
                continue
            assert not isinstance(ours, Exception), f"{where}: onnxsc's export fails: {ours}"
            assert _close(ours, theirs, dtype_name), f"{where}: onnxsc's outputs differ from torchlib's"
            compared += 1
            if _close(theirs[:n], expected, dtype_name):
                assert _close(ours[:n], expected, dtype_name), f"{where}: torchlib matches PyTorch, onnxsc does not"
                matched_eager += 1
            else:
                torchlib_wrong.append(sample.description)
    assert compared > 0, f"{op}: no sample reached the translation"
    if op not in TORCHLIB_NEVER_RIGHT:
        assert matched_eager > 0, f"{op}: no sample matched PyTorch"
    print(
        f"{op}: {compared} samples compared with torchlib; {matched_eager} match PyTorch; torchlib itself "
        f"differs from PyTorch on {len(torchlib_wrong)}; onnxsc right where torchlib's model fails on {len(improved)}"
    )
