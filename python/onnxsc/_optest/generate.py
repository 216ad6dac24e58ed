"""Samples beyond PyTorch's: the mistakes translations make are not the ones OpInfo's samples
probe (they test PyTorch's kernels). From each valid call this makes others, and PyTorch decides
which are valid: a call PyTorch rejects is dropped, never counted as a failure.

* **attributes**: each non-tensor argument of the schema at other values than the sample's (a
  float at 0, negative, between 0 and 1, above 1; an int one more, one less, 0, 1, 2, -1; a bool
  flipped; an optional one left out or given; a list reversed or shortened), arguments left at
  their default included;
* **shapes**: a size grown, doubled (more channels or groups where there was one), set to 1 and
  to 0 (the same size everywhere it occurs, so that the call stays consistent), a leading dimension added (up to rank 5), one input of a pair made
  a broadcast partner; for float16 and bfloat16, more than 65504 elements (a count or a sum in
  the input's dtype overflows);
* **dtypes**: every floating point or integer dtype the translation's annotations accept;
* **values** (:func:`value_regimes`, which share the export of the call they change): ±inf and
  NaN mixed in, large magnitudes (±1e2 to ±1e4), all large and negative (an attention mask),
  tiny ones; for integers their extremes.

Everything is drawn from a seeded generator (``--seed``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

from onnxsc._optest.calls import Call

# Ranks up to which a leading dimension is added.
MAX_RANK = 5

FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")

# The element count of the large float16 sample: above 65504, the largest float16.
LARGE_COUNT = 70_000
INT_DTYPES = ("int64", "int32")


def attribute_variants(call: Call, seen: dict) -> list:
    """Calls of ``call``'s operator (an ``OpOverload`` called with its schema's arguments) with
    each non-tensor argument at other values; ``seen`` holds, by argument name, the values other
    calls gave it (the only source of a string's other values)."""
    schema = getattr(call.op, "_schema", None)
    if schema is None or call.origin not in ("direct", "schema"):
        return []
    out = []
    positional = [a for a in schema.arguments if not a.kwarg_only]
    for k, argument in enumerate(schema.arguments):
        kind = kind_of(argument)
        if "Tensor" in kind or kind.rstrip("?") in _NEVER_VARIED or argument.name in _NEVER_VARIED:
            continue
        given = not argument.kwarg_only and k < len(call.args)
        current = call.args[k] if given else call.kwargs.get(argument.name, _default(argument))
        values = _other_values(kind, current)
        values += [v for v in seen.get(argument.name, ()) if not _same(v, current) and v not in values]
        for value in values:
            args, kwargs = list(call.args), dict(call.kwargs)
            if not argument.kwarg_only:
                # Positional: the ones before it at their defaults, as Python would fill them.
                while len(args) < k:
                    args.append(_default(positional[len(args)]))
                if len(args) == k:
                    args.append(value)
                else:
                    args[k] = value
            else:
                kwargs[argument.name] = value
            out.append(dataclasses.replace(call, args=tuple(args), kwargs=kwargs, origin="attribute"))
    return out


# Arguments whose value never changes what a translation computes, or that the dtype variants
# vary: not varied.
_NEVER_VARIED = {
    "Layout", "Device", "MemoryFormat", "Generator", "ScalarType", "Storage", "Stream",
    "pin_memory", "non_blocking", "requires_grad", "memory_format", "layout", "device", "dtype",
}  # fmt: skip


def seen_values(calls: list) -> dict:
    """The values each named non-tensor argument has in ``calls`` (those of an ``OpOverload``)."""
    import torch

    out: dict = {}
    for call in calls:
        schema = getattr(call.op, "_schema", None)
        if schema is None:
            continue
        positional = [a for a in schema.arguments if not a.kwarg_only]
        named = list(zip((a.name for a in positional), call.args)) + list(call.kwargs.items())
        for name, value in named:
            if isinstance(value, (str, bool, int, float)) and not isinstance(value, torch.Tensor):
                found = out.setdefault(name, [])
                if value not in found:
                    found.append(value)
    return out


def kind_of(argument) -> str:
    """An argument's type as native_functions.yaml writes it (``Scalar?``, ``int[]``), from the
    TorchScript type a live schema carries (``Optional[number]``, ``List[int]``)."""
    return _kind(str(argument.type))


def _kind(text: str) -> str:
    if text.startswith("Optional[") and text.endswith("]"):
        return _kind(text[len("Optional[") : -1]) + "?"
    if text.startswith("List[") and text.endswith("]"):
        return _kind(text[len("List[") : -1]) + "[]"
    return {"number": "Scalar"}.get(text, text)


def _default(argument):
    if argument.has_default_value():
        return argument.default_value
    return None


def _other_values(kind: str, current) -> list:
    optional = kind.endswith("?")
    base = kind[:-1] if optional else kind
    out: list = []
    if base == "bool":
        out = [not current] if isinstance(current, bool) else [True, False]
    elif base in ("float", "Scalar"):
        out = [0.0, -1.5, 0.5, 2.5]
        if isinstance(current, (int, float)) and not isinstance(current, bool) and current not in (0, 1):
            out.append(-float(current))
    elif base in ("int", "SymInt"):
        c = current if isinstance(current, int) and not isinstance(current, bool) else 0
        out = [c + 1, c - 1, 0, 1, 2, -1]
    elif base == "str":
        out = []
    elif base.startswith(("int[", "SymInt[")):
        if isinstance(current, (list, tuple)) and len(current) > 1:
            out = [list(reversed(current)), list(current[:-1])]
        elif isinstance(current, (list, tuple)) and len(current) == 1:
            out = [[-1], [0]]
    elif base.startswith("float["):
        if isinstance(current, (list, tuple)) and current:
            out = [[2.0 * float(v) for v in current]]
    if optional:
        out.append(None)
    return [v for v in out if not _same(v, current)]


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(a) == list(b)
    return type(a) is type(b) and a == b


def shape_variants(call: Call, rng) -> list:
    """Calls with other shapes, the most telling first: a size doubled (more channels or groups
    where there was one: it stays a multiple of what it was), a leading dimension added, a size
    set to 1 and to 0, a broadcast partner, a size grown by 2."""
    tensors = call.tensors()
    shaped = [t for t in tensors if t.dim() > 0]
    if not shaped:
        return []
    sizes = sorted({s for t in shaped for s in t.shape})
    out = []
    for s in sorted((s for s in sizes if s >= 2), reverse=True)[:2]:
        out.append(_resized(call, {s: 2 * s}, rng))
    top = max(t.dim() for t in shaped)
    if top < MAX_RANK:
        out.append(call.with_tensors([_new(rng, (2, *t.shape), t) if t.dim() == top else t for t in tensors], origin="shape"))
    if max(sizes) > 1:
        out.append(_resized(call, {max(sizes): 1}, rng))
        out.append(_resized(call, {max(sizes): 0}, rng))
    same = [k for k, t in enumerate(tensors) if t.dim() > 0 and t.shape == shaped[0].shape]
    if len(same) >= 2 and shaped[0].shape[-1] > 1:
        k = same[1]
        partner = list(tensors)
        shape = list(partner[k].shape)
        shape[-1] = 1
        partner[k] = _new(rng, tuple(shape), partner[k])
        out.append(call.with_tensors(partner, origin="shape"))
    for s in [s for s in sizes if s >= 1][:2]:
        out.append(_resized(call, {s: s + 2}, rng))
    return [c for c in out if c is not None and c.facts() != call.facts()]


def large_count(call: Call, rng) -> Optional[Call]:
    """The call in float16 with more elements than float16 counts (65504 is the largest): an
    element count, or a sum, made in the input's dtype overflows. OpInfo's tensors have dozens.
    One dimension of the largest tensor grows (and the same dimension of the tensors of its rank
    and size there), so that the call stays consistent."""
    import torch

    tensors = call.tensors()
    floats = [t for t in tensors if t.dtype.is_floating_point and t.dim() > 0 and t.numel() > 0]
    if not floats:
        return None
    biggest = max(floats, key=lambda t: t.numel())
    d = max(range(biggest.dim()), key=lambda k: biggest.shape[k])
    s = biggest.shape[d]
    new = -(-LARGE_COUNT // max(1, biggest.numel() // s))

    def grown(t):
        if t.dim() != biggest.dim() or t.shape[d] != s:
            return t
        shape = list(t.shape)
        shape[d] = new
        return _new(rng, tuple(shape), t)

    half = [grown(t).to(torch.float16) if t.dtype.is_floating_point else grown(t) for t in tensors]
    return call.with_tensors(half, origin="shape")


def _resized(call: Call, sizes: dict, rng) -> Optional[Call]:
    tensors = [
        _new(rng, tuple(sizes.get(s, s) for s in t.shape), t) if any(s in sizes for s in t.shape) else t
        for t in call.tensors()
    ]
    return call.with_tensors(tensors, origin="shape")


def _new(rng, shape: tuple, like):
    """A tensor of ``like``'s dtype and kind of values, of ``shape``."""
    import torch

    if like.dtype == torch.bool:
        return torch.rand(shape, generator=rng) > 0.5
    if like.dtype.is_floating_point or like.dtype.is_complex:
        return (torch.rand(shape, generator=rng) * 6 - 3).to(like.dtype)
    low = int(like.min()) if like.numel() else 0
    high = int(like.max()) + 1 if like.numel() else 3
    return torch.randint(low, max(high, low + 1), shape, generator=rng, dtype=like.dtype)


def dtype_variants(call: Call, accepted: Optional[set]) -> list:
    """The call with its floating point (or integer) tensors in each other dtype the translation
    accepts (every one, without annotations)."""
    import torch

    from onnxsc._optest.judge import ONNX_NAMES, short

    def is_int(t) -> bool:
        return not t.dtype.is_floating_point and t.dtype != torch.bool

    tensors = call.tensors()
    out = []
    # The floating point tensors if there are any, else the integer ones.
    for names, kind in ((FLOAT_DTYPES, lambda t: t.dtype.is_floating_point), (INT_DTYPES, is_int)):
        group = [t for t in tensors if kind(t)]
        if not group:
            continue
        current = short(group[0].dtype)
        for name in names:
            if name == current or (accepted is not None and ONNX_NAMES[name] not in accepted):
                continue
            dtype = getattr(torch, name)
            out.append(call.with_tensors([t.to(dtype) if kind(t) else t for t in tensors], origin="dtype"))
        break
    return out


def value_regimes(call: Call, rng) -> list:
    """``(name, call)`` for each regime of values the call's tensors can be given without changing
    its facts (the same export judges them): special values mixed in, large magnitudes, large
    and negative, tiny ones; integers at their extremes."""
    import torch

    tensors = call.tensors()
    floats = [k for k, t in enumerate(tensors) if t.dtype.is_floating_point and t.numel() > 0]
    ints = [k for k, t in enumerate(tensors) if t.dtype in (torch.int32, torch.int64) and t.numel() > 0]
    out = []

    def regime(name: str, make, which: list):
        changed = list(tensors)
        for k in which:
            changed[k] = make(tensors[k])
        out.append((name, call.with_tensors(changed, origin="value")))

    if floats:
        regime("±inf and NaN among the values", lambda t: _specials(t, rng), floats[:1])
        regime("large magnitudes (±1e2 to ±1e4)", lambda t: _large(t, rng), floats)
        regime("large negative values (-1e4 to -1e2)", lambda t: -_large(t, rng).abs(), floats[:1])
        regime("tiny magnitudes (about 1e-6)", lambda t: (_new(rng, tuple(t.shape), t).to(torch.float64) * 1e-6).to(t.dtype), floats)
    if ints:
        regime("integer extremes", lambda t: _extremes(t, rng), ints[:1])
    return out


def _specials(t, rng):
    import torch

    out = t.clone()
    flat = out.view(-1) if out.is_contiguous() else out.reshape(-1)
    n = flat.numel()
    picks = torch.randperm(n, generator=rng)[: max(1, n // 4)]
    specials = torch.tensor([math.inf, -math.inf, math.nan], dtype=t.dtype)
    for j, p in enumerate(picks.tolist()):
        flat[p] = specials[j % 3]
    return flat.view(t.shape)


def _large(t, rng):
    import torch

    magnitude = 10 ** (2 + 2 * torch.rand(tuple(t.shape), generator=rng, dtype=torch.float64))
    sign = torch.where(torch.rand(tuple(t.shape), generator=rng) > 0.5, 1.0, -1.0).to(torch.float64)
    return (magnitude * sign).to(t.dtype)


def _extremes(t, rng):
    import torch

    info = torch.iinfo(t.dtype)
    choice = torch.randint(0, 3, tuple(t.shape), generator=rng)
    values = torch.tensor([info.min, info.max, 0], dtype=t.dtype)
    return values[choice]
