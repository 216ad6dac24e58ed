"""PyTorch's OpInfo database as samples of one aten operator.

The database names an OpInfo as Python spells the function (``nn.functional.pixel_shuffle``,
``special.erfcx``, ``linalg.det``), not as the aten operator it reaches (``aten::pixel_shuffle``,
``aten::special_erfcx``, ``aten::linalg_det``), and one operator may be reached by another's
samples (``F.softmax`` reaches ``aten::_softmax``, ``F.layer_norm`` ``aten::native_layer_norm``).
So the map is derived from the database itself, not kept by hand:

1. an OpInfo is a candidate for ``aten::NAME`` when one of the names it goes by (its name, its
   ``aten_name``, its function's ``__name__``, its aliases, each also as ``special_erfcx`` and as
   its last dotted part) is ``NAME``, or ``NAME`` without leading underscores or ``native_``;
   failing that, when one of them begins ``NAME``'s words (``batch_norm`` for
   ``_native_batch_norm_legit_no_training``);
2. each candidate's samples are run once in eager mode under a dispatch mode that records the aten
   calls they make: a call of the operator itself becomes a sample of it (a *direct* sample, the
   operator called with exactly the arguments PyTorch passes it), beside the OpInfo's own call
   (the only way to an operator that PyTorch decomposes before it dispatches, such as
   ``aten::linear``: the exporter keeps those whole);
3. when no OpInfo goes by the operator's name, every OpInfo of the database is run the same way,
   once per process, to find those whose calls reach it.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from onnxsc._optest.calls import Call

# Samples taken from one OpInfo, per dtype, before variants are made of them.
PER_OPINFO = 8


def base_names(qualname: str) -> set:
    """The names an OpInfo may go by for ``aten::_native_batch_norm_legit.no_stats``."""
    name = qualname.split("::", 1)[-1].split(".")[0]
    out = {name}
    stripped = name.lstrip("_")
    out.add(stripped)
    if stripped.startswith("native_"):
        out.add(stripped[len("native_") :])
    return out


def _names_of(opinfo) -> set:
    names = {opinfo.name, getattr(opinfo, "aten_name", None) or opinfo.name}
    op = getattr(opinfo, "op", None)
    if getattr(op, "__name__", None):
        names.add(op.__name__)
    names.update(a.name for a in getattr(opinfo, "aliases", ()) or ())
    out = set()
    for n in names:
        out.add(n)
        out.add(n.split(".")[-1])
        out.add(re.sub(r"^(nn\.functional|special|linalg|fft)\.", lambda m: "" if m.group(1) == "nn.functional" else m.group(1) + "_", n))
    return out


@functools.lru_cache(maxsize=None)
def _database() -> tuple:
    from torch.testing._internal.common_methods_invocations import op_db

    return tuple(op_db)


def candidates(qualname: str) -> list:
    """The OpInfos whose names say they may reach ``qualname``: named after it, else after the
    operator it is a variant of (``batch_norm`` for ``_native_batch_norm_legit_no_training``,
    which torch.export makes of ``F.batch_norm``)."""
    wanted = base_names(qualname)
    named = [o for o in _database() if _names_of(o) & wanted]
    if named:
        return named
    stem = min(wanted, key=len)
    return [o for o in _database() if any(len(n) >= 4 and stem.startswith(n + "_") for n in _names_of(o))]


def samples(qualname: str, overload, dtype, limit: int = PER_OPINFO) -> list:
    """The OpInfo samples of ``dtype`` for ``qualname``: each candidate's own calls, and each call
    of ``overload`` they make, as direct calls of it. Searches the whole database when the
    candidates never reach the operator."""
    from onnxsc._optest.judge import quiet

    with quiet():
        return _samples(qualname, overload, dtype, limit)


def _samples(qualname: str, overload, dtype, limit: int) -> list:
    named = candidates(qualname)
    found = _from(named, overload, dtype, limit)
    # Only PyTorch's own operators can be reached by its database's samples.
    if not named and overload is not None and qualname.split("::")[0] in ("aten", "prims"):
        reaching = [o for o in _database() if qualname in _reached_by(o)]
        found += _from(reaching, overload, dtype, limit)
    return found


def _from(opinfos: list, overload, dtype, limit: int) -> list:
    import torch

    out: list = []
    for opinfo in opinfos:
        if dtype not in opinfo.supported_dtypes("cpu"):
            continue
        try:
            sample_inputs = list(_take(opinfo.sample_inputs("cpu", dtype, requires_grad=False), limit))
        except Exception:  # a generator PyTorch's own tests skip on this platform
            continue
        for s in sample_inputs:
            own = Call(opinfo.op, (s.input, *s.args), dict(s.kwargs), origin="opinfo")
            out.append(own)
            if overload is None:
                continue
            for func, args, kwargs in _dispatched(own):
                if func is overload:
                    out.append(Call(overload, _clone(args), _clone(kwargs), origin="direct"))
    return out


def _take(iterable, n: int):
    for k, item in enumerate(iterable):
        if k >= n:
            return
        yield item


def _clone(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(_clone(v) for v in value)
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _dispatched(call: Call) -> list:
    """The aten calls ``call`` makes in eager mode, as the dispatcher passes their arguments."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.calls.append((func, args, kwargs))
            return func(*args, **kwargs)

    recorder = Recorder()
    try:
        with recorder:
            call.run()
    except Exception:
        return []
    return recorder.calls


@functools.lru_cache(maxsize=None)
def _reached() -> dict:
    """``{opinfo name: {aten qualname it reaches}}`` for the whole database, float32, a few
    samples each: once per process, for operators no OpInfo is named after."""
    import torch

    out: dict = {}
    for opinfo in _database():
        reached: set = set()
        if torch.float32 in opinfo.supported_dtypes("cpu"):
            try:
                for s in _take(opinfo.sample_inputs("cpu", torch.float32, requires_grad=False), 2):
                    own = Call(opinfo.op, (s.input, *s.args), dict(s.kwargs))
                    reached.update(_qualname(func) for func, _, _ in _dispatched(own))
            except Exception:
                pass
        out[(opinfo.name, opinfo.variant_test_name)] = reached
    return out


def _reached_by(opinfo) -> set:
    return _reached().get((opinfo.name, opinfo.variant_test_name), set())


def _qualname(func) -> Optional[str]:
    name = getattr(func, "name", None)
    return name() if callable(name) else None
