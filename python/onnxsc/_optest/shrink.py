"""Shrinking a failing call to the smallest one that still fails the same way, and writing it as
a runnable snippet.

A candidate is kept when the translation still fails on it with the same kind of failure. In
turn, until neither helps: the structure (an argument back at its schema default, a dimension
fewer, a size halved where it occurs, keeping the values that remain), then the values (zeros,
small integers, every element the largest one, rounded; infinities and NaN kept where they are).
The value steps reuse the exported model; the others export again, within a budget.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Optional

from onnxsc._optest.calls import Call


def shrink(call: Call, still_fails: Callable, budget: int = 40) -> Call:
    """The smallest call found from ``call`` for which ``still_fails(candidate, same_facts)`` holds
    (``same_facts``: only the values changed, the last export may judge it). Structure and values
    are simplified in turn until neither gives a smaller failing call; at most ``budget``
    candidates that need an export are tried."""
    best = call
    spent = 0
    while spent < budget:
        found = None
        for candidate in _structural(best):
            if spent >= budget:
                break
            spent += 1
            if still_fails(candidate, False):
                found = candidate
                break
        if found is None:
            for candidate in _simpler_values(best):
                # Strictly simpler only, or two value steps could undo each other for ever.
                if _complexity(candidate) < _complexity(best) and still_fails(candidate, True):
                    spent += 1
                    found = candidate
                    break
        if found is None:
            break
        best = found
    return best


def _complexity(call: Call) -> tuple:
    """How complex a call's values are: how many distinct ones, then their total magnitude
    (infinities and NaN aside)."""
    import torch

    distinct, magnitude = 0, 0.0
    for t in call.tensors():
        if t.numel() == 0:
            continue
        wide = t.to(torch.float64) if not t.dtype.is_complex else torch.view_as_real(t.to(torch.complex128))
        finite = wide[torch.isfinite(wide)]
        distinct += int(torch.unique(finite).numel())
        magnitude += float(finite.abs().sum())
    return (distinct, magnitude)


def _structural(call: Call) -> list:
    return [c for c in _defaults(call) + _fewer_dims(call) + _fewer_elements(call) if c is not None]


def _defaults(call: Call) -> list:
    """The call with one argument back at its schema default."""
    schema = getattr(call.op, "_schema", None)
    if schema is None:
        return []
    out = []
    positional = [a for a in schema.arguments if not a.kwarg_only]
    for k, argument in enumerate(positional):
        if k >= len(call.args) or not argument.has_default_value() or "Tensor" in str(argument.type):
            continue
        default = argument.default_value
        if _equal(call.args[k], default):
            continue
        args = list(call.args)
        if k == len(args) - 1:
            args.pop()
        else:
            args[k] = default
        out.append(dataclasses.replace(call, args=tuple(args)))
    for name, value in call.kwargs.items():
        argument = next((a for a in schema.arguments if a.name == name), None)
        if argument is None or not argument.has_default_value() or _equal(value, argument.default_value):
            continue
        kwargs = {k: v for k, v in call.kwargs.items() if k != name}
        out.append(dataclasses.replace(call, kwargs=kwargs))
    return out


def _equal(a, b) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def _fewer_dims(call: Call) -> list:
    """The call with the leading dimension of its highest-rank tensors dropped."""
    tensors = call.tensors()
    top = max((t.dim() for t in tensors), default=0)
    if top <= 1 or any(t.dim() == top and t.shape[0] == 0 for t in tensors):
        return []
    return [call.with_tensors([t[0] if t.dim() == top else t for t in tensors])]


def _fewer_elements(call: Call) -> list:
    """The call with one size halved (or set to 1) wherever it occurs."""
    tensors = call.tensors()
    sizes = sorted({s for t in tensors for s in t.shape if s > 1}, reverse=True)
    out = []
    for s in sizes:
        for new in sorted({max(1, s // 2), 1}, reverse=True):
            out.append(call.with_tensors([_narrowed(t, s, new) for t in tensors]))
    return out


def _narrowed(t, size: int, new: int):
    for d, s in enumerate(t.shape):
        if s == size:
            t = t.narrow(d, 0, new)
    return t.contiguous()


def _simpler_values(call: Call) -> list:
    """The call with simpler values (the same facts): rounded, then small integers, then zeros,
    infinities and NaN kept where they are."""
    import torch

    tensors = call.tensors()

    def simpler(transform) -> Call:
        out = []
        for t in tensors:
            if t.dtype.is_floating_point and t.numel():
                special = ~torch.isfinite(t)
                out.append(torch.where(special, t, transform(t.to(torch.float64)).to(t.dtype)))
            else:
                out.append(t)
        return call.with_tensors(out)

    def extreme(t):
        finite = t[torch.isfinite(t)]
        if not finite.numel():
            return t
        return torch.full_like(t, float(finite[finite.abs().argmax()]))

    return [
        simpler(lambda t: torch.zeros_like(t)),
        simpler(lambda t: t.round().clamp(-2, 2)),
        simpler(extreme),
        simpler(lambda t: t.round()),
    ]


def snippet(call: Call, source: str, qualname: str, runtime: str = "onnxruntime", exported_from: Optional[Call] = None) -> str:
    """Python that reproduces the judgement of ``call`` with torch and onnxsc: the table of
    ``source`` (the file under test), the call's tensors written out, the export of the call
    through the table, and the comparison with PyTorch; ``runtime`` runs the model (ONNX
    Runtime, or ONNX's reference implementation). With ``exported_from``, the model is exported
    from that call with dynamic dimensions, and run on ``call``."""
    names = [f"x{k}" for k in range(len(call.tensors()))]
    lines = ["import torch", "", "import onnxsc", "", f"table = onnxsc.translation_table({source!r})"]
    for name, t in zip(names, call.tensors()):
        lines.append(f"{name} = {_tensor_source(t)}")
    if exported_from is not None:
        for name, t in zip(names, exported_from.tensors()):
            lines.append(f"{name}_exported = {_tensor_source(t)}")
    params = ", ".join(["self", *names])
    lines += [
        "",
        "",
        "class Call(torch.nn.Module):",
        f"    def forward({params}):",
        f"        return {call.python(names)}",
        "",
        "",
        f"args = ({', '.join(names)}{',' if len(names) == 1 else ''})",
    ]
    if exported_from is None:
        lines.append("program = torch.onnx.export(Call(), args, dynamo=True, custom_translation_table=table, optimize=False)")
    else:
        exported_args = ", ".join(f"{n}_exported" for n in names) + ("," if len(names) == 1 else "")
        dims = ", ".join("{" + ", ".join(f"{d}: torch.export.Dim.AUTO" for d in range(t.dim())) + "}" for t in exported_from.tensors())
        lines += [
            "# Exported with dynamic dimensions from other tensors, run on these.",
            f"program = torch.onnx.export(Call(), ({exported_args}), dynamo=True, custom_translation_table=table, optimize=False, dynamic_shapes=({dims},))",
        ]
    if runtime == "reference":
        lines += [
            f"# {qualname}: ONNX's reference implementation (each node in the model's dtype) against PyTorch",
            "import ml_dtypes",
            "import numpy",
            "from onnx.reference import ReferenceEvaluator",
            "",
            "names = [i.name for i in program.model_proto.graph.input]",
            "# bfloat16 reaches NumPy through ml_dtypes, as ONNX's reference implementation reads it.",
            "feeds = {n: a.float().numpy().astype(ml_dtypes.bfloat16) if a.dtype == torch.bfloat16 else a.numpy() for n, a in zip(names, args)}",
            "outputs = ReferenceEvaluator(program.model_proto).run(None, feeds)",
            "for actual, expected in zip(outputs, torch.utils._pytree.tree_leaves(Call()(*args))):",
            "    # A copy torch can wrap (contiguous; bfloat16 as float32, exactly).",
            "    actual = numpy.array(actual, dtype=numpy.float32 if actual.dtype.name == 'bfloat16' else actual.dtype)",
            "    torch.testing.assert_close(torch.from_numpy(actual).to(expected.dtype), expected, equal_nan=True)",
        ]
    else:
        lines += [
            f"# {qualname}: ONNX Runtime's outputs against PyTorch's",
            "for actual, expected in zip(program(*args), torch.utils._pytree.tree_leaves(Call()(*args))):",
            "    torch.testing.assert_close(actual, expected, equal_nan=True)",
        ]
    return "\n".join(lines)


# Tensors with more elements than this are made from a seed in a reproducer, not written out.
WRITTEN_OUT = 256


def _tensor_source(t) -> str:
    dtype = str(t.dtype)
    if t.numel() == 0:
        return f"torch.empty({list(t.shape)}, dtype={dtype})"
    if t.numel() > WRITTEN_OUT:
        # The failure was shrunk as far as it goes and still needs this many elements; their
        # values are made again (a failure that depends on them is shrunk to fewer).
        made = "torch.rand({}, generator=torch.Generator().manual_seed(0))".format(list(t.shape))
        if t.dtype == torch_bool():
            return f"{made} > 0.5"
        return f"({made} * 6 - 3).to({dtype})"
    return f"torch.tensor({_values(t.tolist())}, dtype={dtype})"


def torch_bool():
    import torch

    return torch.bool


def _values(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_values(v) for v in value) + "]"
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "-float('inf')"
    return repr(value)


def failure_of(verdict) -> Optional[str]:
    """The kind of a failed verdict (what a shrunk call must still give)."""
    return verdict.kind if verdict.outcome == "failed" else None
