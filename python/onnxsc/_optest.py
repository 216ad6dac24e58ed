"""``python -m onnxsc test PATHS``: every ``@torch_op`` translation judged against PyTorch.

For each operator a translation is bound to, the samples of PyTorch's own OpInfo database
(``torch.testing._internal.common_methods_invocations.op_db``, the samples PyTorch tests its
operators with; hand-made ones for a few operators without, and for an operator whose
arguments are all tensors, such as most custom operators, tensors of two shapes) are exported through that
translation alone (``torch.onnx.export(..., custom_translation_table={op: translation})``),
run in ONNX Runtime and compared with PyTorch eager. A sample counts for an operator only if
the export called its translation. Samples of a dtype the translation's annotations do not
accept, that PyTorch itself rejects, or that ONNX Runtime has no CPU kernel for are skipped,
with the reason counted.

The report is a table per operator: samples passed, failed and skipped, the worst difference
and the first failing sample. Exit status 0 when no sample failed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import logging
import math
import os
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from onnxsc._errors import OnnxscError

# The dtypes tried, in this order, where the operator and the translation take them.
_DTYPES = ("float32", "float64", "float16", "int64", "int32", "bool")

# Tolerances by dtype: ONNX Runtime and PyTorch's kernels may round differently (a fused kernel,
# another order of summation), never by more than this for a right translation.
_TOLERANCES = {
    "float32": (1e-4, 1e-5),
    "float64": (1e-7, 1e-7),
    "float16": (1e-2, 1e-3),
}

# ONNX element types by torch dtype name (the signature's element type names).
_ONNX_NAMES = {
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "float16": "FLOAT16",
    "int64": "INT64",
    "int32": "INT32",
    "bool": "BOOL",
}


@dataclass
class Sample:
    """One call of an operator: ``call(*tensors)`` computes it from the tensors, the description
    names its arguments for the report."""

    call: Callable
    tensors: list
    description: str


@dataclass
class Tally:
    """What the samples of one operator gave."""

    operator: str
    passed: int = 0
    failed: int = 0
    skipped: dict = field(default_factory=dict)
    worst: Optional[tuple] = None
    first_failure: Optional[str] = None

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def fail(self, description: str, why: str) -> None:
        self.failed += 1
        if self.first_failure is None:
            self.first_failure = f"{description}: {why}"

    def note_error(self, abs_err: float, rel_err: float) -> None:
        if self.worst is None or abs_err > self.worst[0]:
            self.worst = (abs_err, rel_err)


# ---------------------------------------------------------------------------------------------
# Samples


def _opinfos(name: str) -> list:
    """The OpInfos of the operator named ``name`` (``gelu`` for ``aten::gelu``)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return [o for o in op_db if o.aten_name == name or o.name == name]


def _describe(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        dims = ", ".join(str(d) for d in value.shape)
        return f"{str(value.dtype).replace('torch.', '')}[{dims}]"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value)


def _opinfo_samples(opinfo, dtype, limit: int) -> list:
    """The OpInfo's samples of ``dtype`` as :class:`Sample`s, at most ``limit``."""
    import torch

    out = []
    for s in opinfo.sample_inputs("cpu", dtype, requires_grad=False):
        if len(out) >= limit:
            break
        tensors: list = []

        def lift(value):
            if isinstance(value, torch.Tensor):
                tensors.append(value)
                return ("tensor", len(tensors) - 1)
            if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
                return (type(value), [lift(v) for v in value])
            return ("value", value)

        structure = (lift(s.input), [lift(a) for a in s.args], {k: lift(v) for k, v in s.kwargs.items()})

        def lower(lifted, given):
            kind, value = lifted
            if kind == "tensor":
                return given[value]
            if kind == "value":
                return value
            return kind(lower(v, given) for v in value)

        def call(*given, _structure=structure, _op=opinfo.op):
            first, args, kwargs = _structure
            return _op(lower(first, given), *[lower(a, given) for a in args], **{k: lower(v, given) for k, v in kwargs.items()})

        parts = [_describe(s.input)] + [_describe(a) for a in s.args] + [f"{k}={_describe(v)}" for k, v in s.kwargs.items()]
        out.append(Sample(call, tensors, ", ".join(parts)))
    return out


def _hand_made_samples(qualname: str, dtype, limit: int) -> list:
    """Samples for operators without an OpInfo that translations commonly override."""
    import torch

    aten = torch.ops.aten
    if dtype not in (torch.float32, torch.float64, torch.float16):
        return []
    x = torch.randn(2, 3, 4, 4, dtype=dtype)
    stats = [torch.randn(3, dtype=dtype) for _ in range(3)] + [torch.rand(3, dtype=dtype) + 0.5]
    samples = {
        "aten::_native_batch_norm_legit_no_training": [
            Sample(
                lambda i, w, b, m, v: aten._native_batch_norm_legit_no_training(i, w, b, m, v, 0.1, 1e-5),
                [x, *stats],
                f"{_describe(x)}, weight, bias, running_mean, running_var, momentum=0.1, eps=1e-05",
            )
        ],
        "aten::_softmax": [
            Sample(lambda i, d=d: aten._softmax(i, d, False), [x], f"{_describe(x)}, dim={d}, half_to_float=False")
            for d in (-1, 1)
        ],
        "aten::_log_softmax": [
            Sample(lambda i, d=d: aten._log_softmax(i, d, False), [x], f"{_describe(x)}, dim={d}, half_to_float=False")
            for d in (-1, 1)
        ],
    }
    return samples.get(qualname, [])[:limit]


def _schema_samples(overload, dtype, limit: int) -> list:
    """Samples made from the schema of an operator whose arguments are all tensors (or have
    defaults): a custom operator, typically. Tensors of two shapes, the defaults left out."""
    import torch

    schema = getattr(overload, "_schema", None)
    if schema is None:
        return []
    tensors = [a for a in schema.arguments if not a.has_default_value()]
    if not tensors or any(str(a.type) != "Tensor" for a in tensors):
        return []
    out = []
    for shape in ((3, 4), (2, 3, 4))[:limit]:
        if dtype.is_floating_point:
            given = [torch.randn(*shape, dtype=dtype) for _ in tensors]
        elif dtype == torch.bool:
            given = [torch.rand(*shape) > 0.5 for _ in tensors]
        else:
            given = [torch.randint(-10, 10, shape, dtype=dtype) for _ in tensors]
        out.append(Sample(lambda *t: overload(*t), given, ", ".join(_describe(t) for t in given)))
    return out


def samples_of(entry, dtype, limit: int) -> list:
    """The samples of the entry's operator (``aten::add.Tensor``) of ``dtype``: PyTorch's
    OpInfo samples, else hand-made ones, else ones made from its schema."""
    qualname = entry.qualname
    base = qualname.split("::", 1)[-1].split(".")[0]
    found = []
    if qualname.startswith("aten::"):
        for opinfo in _opinfos(base):
            if dtype in opinfo.supported_dtypes("cpu"):
                found.extend(_opinfo_samples(opinfo, dtype, limit))
    if found:
        return found[:limit]
    return _hand_made_samples(qualname, dtype, limit) or _schema_samples(entry.overload, dtype, limit)


# ---------------------------------------------------------------------------------------------
# Judging


def accepted_dtypes(signature) -> Optional[set]:
    """The element types the translation's first tensor input accepts (None: any)."""
    from onnxsc._signature import ElementType, TypeVarType

    for i in signature.inputs:
        if isinstance(i.type, ElementType):
            return {i.type.name}
        if isinstance(i.type, TypeVarType) and i.type.bound:
            return set(i.type.bound)
        return None
    return None


def _flatten(value) -> list:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flatten(v)]
    return []


class _Module:
    """A ``torch.nn.Module`` whose forward is one sample's call."""

    def __new__(cls, call):
        import torch

        class Call(torch.nn.Module):
            def forward(self, *tensors):
                return call(*tensors)

        return Call()


def judge(entry, sample: Sample, tally: Tally, dtype_name: str) -> None:
    """Exports ``sample`` through the entry's translation alone, runs it in ONNX Runtime and
    compares with PyTorch; the verdict goes to ``tally``."""
    import torch

    try:
        expected = _flatten(sample.call(*sample.tensors))
    except Exception:
        tally.skip("PyTorch rejects the sample")
        return
    if not expected:
        tally.skip("no tensor result")
        return
    calls_before = entry.translation.calls
    ignored_before = entry.translation.ignored_values()
    try:
        with _quiet():
            program = torch.onnx.export(
                _Module(sample.call),
                tuple(sample.tensors),
                dynamo=True,
                custom_translation_table={entry.overload: entry.translation},
                verbose=False,
            )
    except Exception as e:
        if entry.translation.calls == calls_before:
            tally.skip("the export fails before it reaches the translation")
        else:
            tally.fail(sample.description, f"the export fails: {_first_line(e)}")
        return
    if entry.translation.calls == calls_before:
        tally.skip("the export does not call this translation for this sample")
        return
    if entry.translation.ignored_values() != ignored_before:
        tally.skip("it sets an argument the translation deletes (`del`): the default's result on purpose")
        return
    try:
        with _quiet():
            actual = _flatten(program(*sample.tensors))
    except Exception as e:
        message = str(e)
        if "NOT_IMPLEMENTED" in message or "Could not find an implementation" in message:
            tally.skip("ONNX Runtime has no CPU kernel for it")
        else:
            tally.fail(sample.description, f"ONNX Runtime fails: {_first_line(e)}")
        return
    _compare(actual, expected, sample.description, tally, dtype_name)


def _compare(actual: list, expected: list, description: str, tally: Tally, dtype_name: str) -> None:
    import torch

    if len(actual) != len(expected):
        tally.fail(description, f"{len(actual)} outputs, PyTorch gives {len(expected)}")
        return
    rtol, atol = _TOLERANCES.get(dtype_name, (0.0, 0.0))
    worst_abs, worst_rel = 0.0, 0.0
    for k, (a, e) in enumerate(zip(actual, expected)):
        name = f"output {k}: " if len(expected) > 1 else ""
        if a.dtype != e.dtype:
            tally.fail(description, f"{name}dtype {_short(a.dtype)}, PyTorch gives {_short(e.dtype)}")
            return
        if tuple(a.shape) != tuple(e.shape):
            tally.fail(description, f"{name}shape {list(a.shape)}, PyTorch gives {list(e.shape)}")
            return
        if a.numel() == 0:
            continue
        ad, ed = a.double(), e.double()
        both_nan = torch.isnan(ad) & torch.isnan(ed)
        same_inf = torch.isinf(ed) & (ad == ed)
        diff = torch.where(both_nan | same_inf, torch.zeros_like(ad), (ad - ed).abs())
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
        rel = diff / ed.abs().clamp_min(1e-30)
        worst_abs = max(worst_abs, float(diff.max()))
        worst_rel = max(worst_rel, float(torch.where(diff == 0, torch.zeros_like(rel), rel).max()))
        if bool((diff > atol + rtol * ed.abs()).any()):
            tally.note_error(worst_abs, worst_rel)
            tally.fail(description, f"{name}differs by up to {_g(worst_abs)} (relative {_g(worst_rel)})")
            return
    tally.note_error(worst_abs, worst_rel)
    tally.passed += 1


def _short(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _g(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.2g}"


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else type(e).__name__


@contextlib.contextmanager
def _quiet():
    """The exporter's progress messages and warnings are not the report's."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)


# ---------------------------------------------------------------------------------------------
# The command


def run(paths: list, only: Optional[list], dtypes: list, limit: int, out=sys.stdout) -> int:
    """Judges the translations of ``paths``; prints the report to ``out``; the exit status."""
    import torch

    from onnxsc._table import compile_library, entries

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data, model = compile_library(paths)
        unresolved: list = []
        found = entries(model, data, unresolved)
    if only:
        found = [e for e in found if e.qualname in only]
        unresolved = [u for u in unresolved if u[0] in only]
    tallies = []
    for qualname, _ in unresolved:
        tally = Tally(qualname)
        tally.skip("not registered with this PyTorch: nothing to compare with (register it with --import MODULE)")
        tallies.append(tally)
    for entry in found:
        tally = Tally(entry.qualname)
        accepted = accepted_dtypes(entry.signature)
        any_samples = False
        for dtype_name in dtypes:
            dtype = getattr(torch, dtype_name)
            samples = samples_of(entry, dtype, limit)
            any_samples = any_samples or bool(samples)
            for sample in samples:
                if accepted is not None and _ONNX_NAMES[dtype_name] not in accepted:
                    tally.skip(f"{dtype_name} is not among the translation's types")
                    continue
                judge(entry, sample, tally, dtype_name)
        if not any_samples:
            tally.skip("no samples (no OpInfo, and arguments other than tensors)")
        tallies.append(tally)
    out.write(report(tallies))
    return 1 if any(t.failed for t in tallies) else 0


def report(tallies: list) -> str:
    """The table: one row per operator, then the first failure and the skips of each."""
    rows = [("operator", "passed", "failed", "skipped", "worst difference")]
    for t in tallies:
        worst = f"{_g(t.worst[0])} (relative {_g(t.worst[1])})" if t.worst else "-"
        rows.append((t.operator, str(t.passed), str(t.failed), str(sum(t.skipped.values())), worst))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:4], widths[1:4])] + [r[4]]
        lines.append("  ".join(cells).rstrip())
    for t in tallies:
        if t.first_failure:
            lines.append(f"{t.operator}: first failure: {t.first_failure}")
    for t in tallies:
        for reason, n in sorted(t.skipped.items()):
            lines.append(f"{t.operator}: skipped {n}: {reason}")
    failed = sum(t.failed for t in tallies)
    passed = sum(t.passed for t in tallies)
    verdict = "FAILED" if failed else "ok"
    lines.append(f"onnxsc test: {len(tallies)} operators, {passed} samples passed, {failed} failed: {verdict}")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m onnxsc test",
        description="Judge every @torch_op translation in PATHS against PyTorch, on PyTorch's OpInfo samples.",
    )
    parser.add_argument("paths", nargs="+", help=".onnxs files or directories")
    parser.add_argument("--op", action="append", help="only this operator (aten::gelu); repeatable")
    parser.add_argument("--dtype", action="append", choices=_DTYPES, help="only this dtype; repeatable")
    parser.add_argument("--max-samples", type=int, default=12, help="samples per operator and dtype (default 12)")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import this module first (one that registers custom operators); repeatable",
    )
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
        import expecttest  # noqa: F401  (torch's OpInfo database needs it)
    except ImportError as e:
        print(f"onnxsc test needs torch and expecttest: pip install torch expecttest ({e})", file=sys.stderr)
        return 2
    sys.path.insert(0, os.getcwd())
    for module in args.imports:
        importlib.import_module(module)
    torch.manual_seed(0)
    try:
        return run(args.paths, args.op, args.dtype or list(_DTYPES), args.max_samples)
    except OnnxscError as e:
        print(str(e), file=sys.stderr)
        return 1
