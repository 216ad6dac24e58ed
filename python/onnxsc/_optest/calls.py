"""One call of a PyTorch operator, as ``python -m onnxsc test`` makes, exports, shrinks and
prints it.

A :class:`Call` is an operator (what PyTorch calls: an ``OpOverload`` for the samples made from
the schema, the OpInfo's function for PyTorch's own samples), its positional and keyword
arguments with the tensors in place, and where it comes from. Its *facts* are what an export
depends on: the structure of the arguments, each tensor's dtype and shape, every other value.
Calls with the same facts differ only in the tensors' values and share one exported model.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Call:
    """``op(*args, **kwargs)``, tensors inside the arguments (lists of tensors too)."""

    op: Callable
    args: tuple
    kwargs: dict = field(default_factory=dict)
    # What made it: "opinfo", "direct", "schema", "attribute", "shape", "dtype", "value".
    origin: str = "opinfo"

    def tensors(self) -> list:
        """The tensors of the arguments, in order (what the exported model takes)."""
        out: list = []
        _walk((self.args, self.kwargs), out.append)
        return out

    def with_tensors(self, tensors: list, **changes) -> "Call":
        """The same call with ``tensors`` in place of its own, in order."""
        it = iter(tensors)
        args, kwargs = _rebuild((self.args, self.kwargs), lambda _: next(it))
        return dataclasses.replace(self, args=args, kwargs=kwargs, **changes)

    def run(self, *tensors):
        """The call with ``tensors`` in place of its own (what the exported module computes)."""
        call = self.with_tensors(list(tensors)) if tensors else self
        return call.op(*call.args, **call.kwargs)

    def facts(self) -> tuple:
        """What an export of the call depends on: everything but the tensors' values."""
        return (_name(self.op), _facts(self.args), _facts(self.kwargs))

    def sizes_free(self) -> tuple:
        """The facts with every tensor's sizes left out (its rank kept): calls alike in these
        share an export with dynamic dimensions."""
        return (_name(self.op), _facts(self.args, sizes=False), _facts(self.kwargs, sizes=False))

    def describe(self) -> str:
        """``float32[2, 3], approximate='tanh'``: the arguments as the report shows them."""
        parts = [describe(a) for a in self.args] + [f"{k}={describe(v)}" for k, v in self.kwargs.items()]
        return ", ".join(parts)

    def python(self, names: list) -> str:
        """The call as Python source, its tensors named ``names`` in order."""
        it = iter(names)
        args, kwargs = _rebuild((self.args, self.kwargs), lambda _: _Source(next(it)))
        parts = [_source(a) for a in args] + [f"{k}={_source(v)}" for k, v in kwargs.items()]
        return f"{op_source(self.op)}({', '.join(parts)})"


class _Source:
    """A name standing for a tensor in generated source."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _source(value) -> str:
    import torch

    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_source(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


def op_source(op) -> str:
    """How Python names ``op``: ``torch.ops.aten.gelu.default``, ``torch.nn.functional.gelu``."""
    name = getattr(op, "_qualified_op_name", None)
    if hasattr(op, "_schema") and hasattr(op, "_overloadname"):
        namespace, _, base = op._schema.name.partition("::")
        return f"torch.ops.{namespace}.{base}.{op._overloadname}"
    module = getattr(op, "__module__", None) or ""
    qualname = getattr(op, "__qualname__", None) or getattr(op, "__name__", None) or repr(op)
    if module.startswith("torch._C._nn"):
        return f"torch._C._nn.{qualname}"
    if module in ("torch._C._VariableFunctions", "torch._C", "") or module.startswith("torch._C"):
        return f"torch.{getattr(op, '__name__', qualname)}"
    if name:
        return name
    return f"{module}.{qualname}" if module else qualname


def _name(op) -> str:
    return op_source(op)


def _walk(value, visit) -> None:
    import torch

    if isinstance(value, torch.Tensor):
        visit(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _walk(v, visit)
    elif isinstance(value, dict):
        for v in value.values():
            _walk(v, visit)


def _rebuild(value, replace):
    import torch

    if isinstance(value, torch.Tensor):
        return replace(value)
    if isinstance(value, tuple):
        return tuple(_rebuild(v, replace) for v in value)
    if isinstance(value, list):
        return [_rebuild(v, replace) for v in value]
    if isinstance(value, dict):
        return {k: _rebuild(v, replace) for k, v in value.items()}
    return value


def _facts(value, sizes: bool = True):
    import torch

    if isinstance(value, torch.Tensor):
        shape = tuple(value.shape) if sizes else len(value.shape)
        return ("T", str(value.dtype), shape)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_facts(v, sizes) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _facts(v, sizes)) for k, v in value.items()))
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return ("v", type(value).__name__, repr(value))


def describe(value: Any) -> str:
    """A value as the report shows it: a tensor by dtype and shape."""
    import torch

    if isinstance(value, torch.Tensor):
        dims = ", ".join(str(d) for d in value.shape)
        return f"{str(value.dtype).replace('torch.', '')}[{dims}]"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value)


def flatten(value) -> list:
    """The tensors of a result, in order (a tuple of outputs, a list of tensors); a number
    (``_local_scalar_dense``, ``item``) is the 0-d tensor an exported model returns for it."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flatten(v)]
    if isinstance(value, (bool, int, float)):
        return [torch.tensor(value)]
    return []
