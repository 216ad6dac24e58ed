"""Judging a call by its facts alone (``python -m onnxsc test --facts-only``): what each input
is and what PyTorch returns, checked through the translation with onnxsc's inference, without
an export or ONNX Runtime.

The call runs once in eager PyTorch, recording each call of the operator under test with its
arguments as the dispatcher passes them, which is what the exporter's FX node holds: a composite
operator (CompositeImplicitAutograd) is caught before it decomposes, through a Python kernel
the Python dispatcher runs in its place; any other, under a dispatch mode. Each recorded call
is then made as the exporter makes it (``_core._convert_fx_arg_to_onnx_arg``): tensors become
values that know only their element type and shape, dtypes become ONNX element types,
devices, layouts and memory formats their names, and a keyword ``dtype`` of None is -1. PyTorch's
answer is the recorded outputs that the rest of the call reads, as at export, where an output
no node reads is not compared.

The translation's ``check_facts`` then does what it does for the exporter, short of building a
function: a scripted one links its body for the call and walks it (element types, shape rules,
PyTorch's answer); a trace-only one is traced for the call. A refusal is the call's failure, with
the ``.onnxs`` line the server names.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Optional

from onnxsc._optest.calls import Call, flatten
from onnxsc._optest.judge import DROPPED, PASSED, Verdict, failed, first_line, quiet, skipped


# What a request that met a crash of the server says (``_server.Server``).
_CRASHED = "the onnxsc server of this library"


@dataclass
class Reached:
    """One call of the operator under test, as the dispatcher passed it, and PyTorch's answer."""

    args: tuple
    kwargs: dict
    # What the exporter's FX node says the call returns (``_trace.pytorch_answer``), or None.
    expect: Optional[dict]


def judge(entry, call: Call) -> Verdict:
    """The call judged by its facts: passed when the translation accepts every call of the
    operator it makes, failed with the first refusal; skipped when the call never reaches the
    operator (with what it reaches instead) or sets an argument the translation deletes."""
    from onnxsc._errors import OnnxscError
    from onnxsc._usage import never_in_a_graph

    never = never_in_a_graph(entry.overload)
    if never is not None:
        return skipped(never)
    recorded = record(call, entry.overload)
    if recorded is None:
        return DROPPED
    if recorded is _UNTRACEABLE:
        return skipped("the export fails before it reaches the translation (PyTorch's fake tensors refuse the call)")
    reached, others = recorded
    if not reached:
        where = f" (it calls {', '.join(sorted(others)[:6])})" if others else ""
        return skipped(f"PyTorch does not call this operator for it{where}")
    translation = entry.translation
    ignored_before = translation.ignored_values()
    for one in reached:
        try:
            args = exporter_argument(list(one.args))
            kwargs = {k: exporter_argument(v, keyword=k) for k, v in one.kwargs.items()}
        except _Unrepresentable as e:
            return skipped(str(e))
        try:
            with quiet():
                translation.check_facts(args, kwargs, one.expect)
        except OnnxscError as e:
            # A crash of onnxsc itself is its own kind: the shrinker never trades a refusal for one.
            kind = "crash" if _CRASHED in str(e) else "export"
            return failed(kind, f"the export fails (by the facts alone): {first_line(e)}")
    if translation.ignored_values() != ignored_before:
        return skipped("it sets an argument the translation deletes (`del`): the default's result on purpose")
    return PASSED


# What `record` returns for a call eager PyTorch runs but torch.export cannot trace.
_UNTRACEABLE = object()


def record(call: Call, overload):
    """``([Reached], {other operators called})`` for one eager run of ``call``; None when PyTorch
    rejects the call, ``_UNTRACEABLE`` when only its fake tensors do."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    found: list = []
    # Python objects of the tensors later operators read: an output of the operator under test
    # is compared only when something reads it. The objects are kept alive, so that no id is
    # reused by an output nobody reads.
    read: set = set()
    alive: list = []
    others: set = set()

    def reached(args, kwargs, outputs) -> None:
        found.append((args, kwargs, outputs))

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            for t in _tensors((args, kwargs)):
                read.add(id(t))
                alive.append(t)
            outputs = func(*args, **kwargs)
            if func is overload:
                reached(args, kwargs, outputs)
            elif hasattr(func, "name"):
                others.add(func.name())
            return outputs

    try:
        with torch.no_grad(), torch.random.fork_rng(), quiet(), _composite_caught(overload, reached):
            torch.manual_seed(0)
            with Recorder():
                result = call.run()
    except Exception:
        return None
    if not _traceable(call):
        return _UNTRACEABLE
    from onnxsc._trace import _expected_tensor

    final = {id(t) for t in flatten(result)}
    name = overload.name()
    out = []
    for args, kwargs, outputs in found:
        values = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        expected = [_expected_tensor(v) if (id(v) in read or id(v) in final) else None for v in values]
        expect = None if all(e is None for e in expected) else {"op": name, "outputs": expected}
        out.append(Reached(args, kwargs, expect))
    return out, others


def _traceable(call: Call) -> bool:
    """Whether PyTorch's fake tensors, which torch.export traces with, take the call too: a
    kernel may accept in eager what its meta function refuses (a batch norm weight of the wrong
    size), and such a call never reaches a translation at export."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    try:
        with torch.no_grad(), quiet(), FakeTensorMode() as mode:
            call.run(*[mode.from_tensor(t) for t in call.tensors()])
    except Exception:
        return False
    return True


@contextlib.contextmanager
def _composite_caught(overload, reached):
    """While it lasts, a composite ``overload`` reports each call (``reached(args, kwargs,
    outputs)``) before it decomposes: a Python kernel in place of its CompositeImplicitAutograd
    one, which the Python dispatcher runs. An operator with kernels of its own is left alone
    (the dispatch mode sees it)."""
    import torch
    from torch._dispatch.python import enable_python_dispatcher

    key = torch._C.DispatchKey.CompositeImplicitAutograd
    if not torch._C._dispatch_has_kernel_for_dispatch_key(overload.name(), key):
        yield
        return
    saved = dict(overload.py_kernels)
    original = saved.get(key) or (lambda *args, **kwargs: overload._op_dk(key, *args, **kwargs))

    def kernel(*args, **kwargs):
        outputs = original(*args, **kwargs)
        reached(args, kwargs, outputs)
        return outputs

    overload.py_kernels.pop(key, None)
    overload.py_impl(key)(kernel)
    overload._dispatch_cache.clear()
    try:
        with enable_python_dispatcher():
            yield
    finally:
        overload.py_kernels.clear()
        overload.py_kernels.update(saved)
        overload._dispatch_cache.clear()


def _tensors(value) -> list:
    return Call(None, (value,)).tensors()


class _Unrepresentable(Exception):
    """An argument the facts cannot stand for (a complex tensor, which the exporter views as
    real)."""


def exporter_argument(value, keyword: Optional[str] = None):
    """An eager argument as the exporter passes it to a translation: a tensor as a value that
    knows its element type and shape, a dtype as its ONNX element type, a device, layout or
    memory format as its name, a keyword ``dtype`` of None as -1."""
    import onnx_ir as ir
    import torch
    from torch.onnx._internal.exporter._core import torch_dtype_to_onnx_dtype

    def onnx_type(dtype):
        try:
            return torch_dtype_to_onnx_dtype(dtype)
        except KeyError:
            raise _Unrepresentable(f"the exporter has no ONNX type for {dtype}") from None

    if keyword == "dtype" and value is None:
        return -1
    if isinstance(value, torch.Tensor):
        if value.is_complex():
            raise _Unrepresentable("a complex tensor, which the exporter views as real")
        return ir.Value(type=ir.TensorType(onnx_type(value.dtype)), shape=ir.Shape(list(value.shape)))
    if isinstance(value, (list, tuple)):
        return [exporter_argument(v) for v in value]
    if isinstance(value, (torch.device, torch.memory_format, torch.layout)):
        return str(value)
    if isinstance(value, torch.dtype):
        return onnx_type(value)
    return value
