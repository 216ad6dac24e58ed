"""Trace-only translations: run by onnxsc for each call of the exporter.

A trace-only translation (``@torch_op(..., trace_only=True)``) has no compiled function: its
nodes depend on what each call knows. The library records its signature and the sources
(``onnxsc.trace``, docs/library-format.md). For each call the exporter makes, the translation
here describes the call (:func:`call_facts`: attribute values, None-ness, each tensor's element
type and dimensions, symbolic ones included, and the tensors of a list) and asks onnxsc's server
for the nodes that call records (the server runs the source's Python in onnxsc's own evaluator,
never as Python here). The answer, a model whose graph takes the call's tensors in order, becomes
a function the exporter calls and inlines. Answers are cached per distinct facts.
"""

from __future__ import annotations

import json
import math
from typing import Callable

from onnxsc._errors import OnnxscError
from onnxsc._signature import Signature, parse
from onnxsc._translation import _with_signature

# The library model's record of its trace-only translations (onnx::metadata::TRACE_KEY).
TRACE_KEY = "onnxsc.trace"


def traced_functions(model) -> list:
    """``(proto, signature)`` for each trace-only translation a library model records: ``proto``
    is a FunctionProto without nodes that names it and carries its source location and
    signature, as a compiled function's does (for messages and warnings)."""
    import onnx

    for entry in model.metadata_props:
        if entry.key != TRACE_KEY:
            continue
        try:
            record = json.loads(entry.value)
            functions = record["functions"]
        except (ValueError, KeyError, TypeError) as e:
            raise OnnxscError(f"the library's {TRACE_KEY} record is not valid: {e}") from None
        out = []
        for f in functions:
            proto = onnx.FunctionProto(name=f["name"], domain=f["domain"], doc_string=f.get("doc") or "")
            proto.metadata_props.add(key="onnxsc.source", value=f.get("source", ""))
            signature_json = json.dumps(f["signature"])
            proto.metadata_props.add(key="onnxsc.signature", value=signature_json)
            out.append((proto, parse(signature_json, f"{f['domain']}::{f['name']}")))
        return out
    return []


def make_trace_translation(proto, signature: Signature, op, specializer, where: str, usage, newer=None) -> Callable:
    """The translation of one operator by the trace-only ``proto``: each call described,
    specialised by the server (cached per description), and the resulting function called with
    the call's tensors. It carries the source's signature, as a compiled translation does.
    ``newer`` (a ``_newer.NewerOpset``) may hand the call to the exporter's own translation."""
    n_outputs = op.outputs or len(signature.outputs) or 1
    function_name = f"{proto.domain}::{proto.name}"

    def translation(*args, **kwargs):
        instead = newer.at_this_call() if newer is not None else None
        if instead is not None:
            return instead(*args, **kwargs)
        translation.calls += 1
        usage.observe()
        tensors: list = []
        facts = {
            "function": function_name,
            "args": [describe(a, tensors, where) for a in args],
            "kwargs": {k: describe(v, tensors, where) for k, v in kwargs.items()},
        }
        variant = specializer.traced(proto, signature, facts)
        try:
            recorder = exporter_recorder()
            if recorder is not None and variant.direct:
                return variant.record(recorder, tensors)
            return variant(*tensors)
        except OnnxscError:
            raise
        except Exception as e:
            raise OnnxscError(f"{where}: the exporter could not build this call: {e}") from e

    # How many times the exporter called it (`python -m onnxsc test` counts on it); a trace-only
    # translation's unread parameters are not known before a call.
    translation.calls = 0
    translation.ignored_values = lambda: 0
    return _with_signature(translation, proto, signature, n_outputs)


def exporter_recorder():
    """The exporter's graph recorder when the exporter is tracing (its ``OpRecorder``, the
    evaluator torchlib's trace-only functions record into), else None."""
    from onnxscript import evaluator

    current = evaluator.default()
    return current if hasattr(current, "nodes") and hasattr(current, "constant_farm") else None


def describe(value, tensors: list, where: str):
    """One argument as the tagged JSON the compiler reads (trace::facts); each tensor met is
    appended to ``tensors``, in the order the server's function takes them."""
    import onnx_ir as ir

    if value is None:
        return {"none": None}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, ir.DataType):
        return {"dtype": value.name}
    if isinstance(value, int):
        return {"int": int(value)}
    if isinstance(value, float):
        if math.isnan(value):
            return {"float": "nan"}
        if math.isinf(value):
            return {"float": "inf" if value > 0 else "-inf"}
        return {"float": value}
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, (list, tuple)):
        tag = "tuple" if isinstance(value, tuple) else "list"
        return {tag: [describe(v, tensors, where) for v in value]}
    if isinstance(value, ir.Value):
        tensors.append(value)
        return {"tensor": _tensor_facts(value)}
    dtype = _torch_dtype(value)
    if dtype is not None:
        return {"dtype": dtype}
    raise OnnxscError(
        f"{where}: the exporter passed {value!r} ({type(value).__name__}), which a trace-only "
        f"translation cannot receive: onnxsc knows tensors, numbers, strings, None, lists and dtypes"
    )


def _tensor_facts(value) -> dict:
    """What the call knows of a tensor: its element type and shape (symbolic dimensions by
    name; an unnamed one is given a name of its own, so that it equals only itself)."""
    import onnx_ir as ir

    facts: dict = {"dtype": None, "shape": None}
    ty = value.type
    if isinstance(ty, (ir.SequenceType,)):
        facts["sequence"] = True
        element = getattr(ty, "elem_type", None)
        dtype = getattr(element, "dtype", None)
        facts["dtype"] = dtype.name if dtype is not None else None
        return facts
    if value.dtype is not None:
        facts["dtype"] = value.dtype.name
    if value.shape is not None:
        dims = []
        for k, d in enumerate(value.shape):
            if isinstance(d, int):
                dims.append(d)
            elif getattr(d, "value", None) is not None:
                dims.append(str(d.value))
            else:
                dims.append(f"?{id(value)}.{k}")
        facts["shape"] = dims
    return facts


def _torch_dtype(value):
    """A ``torch.dtype`` as its ONNX element type's name (as the exporter converts it before a
    call), or None if ``value`` is not one."""
    try:
        import torch
    except ImportError:
        return None
    if not isinstance(value, torch.dtype):
        return None
    from torch.onnx._internal.exporter._core import torch_dtype_to_onnx_dtype

    return torch_dtype_to_onnx_dtype(value).name
