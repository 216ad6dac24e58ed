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
from onnxsc._signature import Input, Output, Signature, parse
from onnxsc._translation import _with_signature
from onnxsc._variant import variant_function

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
        variant = specializer.traced(proto, signature, call_facts(args, kwargs, pytorch_answer(), tensors))
        try:
            recorder = exporter_recorder()
            if recorder is not None and variant.direct:
                return variant.record(recorder, tensors)
            return variant(*tensors)
        except OnnxscError:
            raise
        except Exception as e:
            raise OnnxscError(f"{where}: the exporter could not build this call: {e}") from e

    def call_facts(args, kwargs, expect, tensors: list) -> dict:
        facts = {
            "function": function_name,
            "args": [describe(a, tensors, where) for a in args],
            "kwargs": {k: describe(v, tensors, where) for k, v in kwargs.items()},
        }
        if expect is not None:
            facts["expect"] = expect
        return facts

    def check_facts(args, kwargs, expect) -> None:
        """Traces one call as the exporter would make it, from its facts alone, against
        PyTorch's answer (``expect``), raising the refusal; nothing is exported."""
        specializer.traced(proto, signature, call_facts(args, kwargs, expect, []))

    # How many times the exporter called it (`python -m onnxsc test` counts on it); a trace-only
    # translation's unread parameters are not known before a call.
    translation.calls = 0
    translation.ignored_values = lambda: 0
    translation.check_facts = check_facts
    return _with_signature(translation, proto, signature, n_outputs)


# The exporter's function that calls a translation for one FX node, with the node in its
# `node` local (torch/onnx/_internal/exporter/_core.py).
_EXPORTER_CALLER = "_handle_call_function_node_with_lowering"


def pytorch_answer():
    """What PyTorch computes for the FX node the exporter is translating, as the ``expect`` of
    a call's facts (trace::facts): the node's operator and each output's element type and
    shape. None outside an export, or where the node's value is not tensors.

    The exporter does not hand the node to a translation; it is a local of the exporter's
    function that calls it, a few frames up."""
    import sys

    frame = sys._getframe(1)
    for _ in range(8):
        frame = frame.f_back
        if frame is None:
            return None
        if frame.f_code.co_name == _EXPORTER_CALLER:
            break
    else:
        return None
    node = frame.f_locals.get("node")
    val = getattr(node, "meta", {}).get("val")
    if val is None:
        return None
    values = list(val) if isinstance(val, (list, tuple)) else [val]
    outputs = [_expected_tensor(v) for v in values]
    # An output the graph never reads cannot make a wrong model: it is not compared (PyTorch's
    # eval-mode batch norm gives empty statistics that torchlib computes in full).
    read = _outputs_read(node) if isinstance(val, (list, tuple)) else None
    if read is not None:
        outputs = [o if k in read else None for k, o in enumerate(outputs)]
    if all(o is None for o in outputs):
        return None
    target = node.target
    name = target.name() if callable(getattr(target, "name", None)) else str(target)
    return {"op": str(name), "outputs": outputs}


def _outputs_read(node):
    """The indices of a multi-output FX node's outputs that its users read (each through
    ``operator.getitem``), or None when a user takes them all."""
    import operator

    read = set()
    for user in node.users:
        if user.target is not operator.getitem or not isinstance(user.args[1], int):
            return None
        read.add(user.args[1])
    return read


def _expected_tensor(value):
    """A FakeTensor's element type and shape (a SymInt by its name, or by its expression), or
    None for what onnxsc does not compare: a value that is not a tensor, or a complex one (the
    exporter makes it a real view)."""
    try:
        import torch
    except ImportError:
        return None
    if not isinstance(value, torch.Tensor) or value.is_complex():
        return None
    dtype = _torch_dtype(value.dtype)
    if dtype is None:
        return None
    return {"dtype": dtype, "shape": [d if isinstance(d, int) else str(d) for d in value.shape]}


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

    # An `ir.DataType` is an int: it is told apart before the plain values.
    if isinstance(value, ir.DataType):
        return {"dtype": value.name}
    if isinstance(value, (list, tuple)):
        tag = "tuple" if isinstance(value, tuple) else "list"
        return {tag: [describe(v, tensors, where) for v in value]}
    if isinstance(value, ir.Value):
        tensors.append(value)
        return {"tensor": _tensor_facts(value)}
    plain = describe_plain(value)
    if plain is not None:
        return plain
    dtype = _torch_dtype(value)
    if dtype is not None:
        return {"dtype": dtype}
    raise OnnxscError(
        f"{where}: the exporter passed {value!r} ({type(value).__name__}), which a trace-only "
        f"translation cannot receive: onnxsc knows tensors, numbers, strings, None, lists and dtypes"
    )


def describe_plain(value):
    """A Python None, bool, int, float or str, or a list or tuple of them, tagged as
    :func:`describe` tags it; None for anything else. Needs no ``onnx_ir``, so that a call
    request of a scripted translation imports nothing the exporter has not."""
    if value is None:
        return {"none": None}
    if isinstance(value, bool):
        return {"bool": value}
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
        items = [describe_plain(v) for v in value]
        if any(i is None for i in items):
            return None
        return {"tuple" if isinstance(value, tuple) else "list": items}
    return None


def tensor_facts(value):
    """An exporter's value tagged as a trace's facts tag it: ``{"tensor": ...}`` (its
    :func:`_tensor_facts`), or ``{"list": [...]}`` of each tensor of a list the exporter will make
    a sequence; None for anything else (a Python value the exporter will make a constant)."""
    try:
        import onnx_ir as ir
    except ImportError:
        return None
    if isinstance(value, ir.Value):
        return {"tensor": _tensor_facts(value)}
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, ir.Value) for v in value):
        return {"list": [{"tensor": _tensor_facts(v)} for v in value]}
    return None


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


class TracedVariant:
    """One call's specialisation of a trace-only translation: the linked graph's nodes, recorded
    straight into the exporter's graph as its own tracing records torchlib's nodes
    (:meth:`record`), or, for an evaluator that is not the exporter's, called as a function."""

    def __init__(self, proto, linked):
        import onnx_ir as ir

        self._proto = proto
        self._linked = linked
        self._function = None
        graph = linked.graph
        index = {value.name: ("input", k) for k, value in enumerate(graph.input)}
        self._nodes = []
        for n, node in enumerate(graph.node):
            inputs = [index[name] if name else None for name in node.input]
            attributes = [ir.serde.deserialize_attribute(a) for a in node.attribute]
            metadata = {e.key: e.value for e in node.metadata_props}
            self._nodes.append((node.domain, node.op_type, inputs, attributes, len(node.output), metadata))
            for k, name in enumerate(node.output):
                index[name] = ("node", n, k)
        self._outputs = [index[value.name] for value in graph.output]
        # A graph output that is a graph input needs an Identity, which only the function path
        # builds; and initializers are not recorded here.
        self.direct = bool(graph.node) and not graph.initializer and all(o[0] == "node" for o in self._outputs)

    def record(self, recorder, tensors: list):
        """Appends the nodes to the exporter's ``recorder`` (``OpRecorder.nodes``), reading the
        call's ``tensors``; the outputs, as the exporter's tracing returns them. A scalar or 1-D
        constant comes from the exporter's own store of constants, which it shares across the
        calls of a graph as it does for torchlib's."""
        import onnx_ir as ir
        from torch.onnx._internal.exporter import _tensors

        made: list = []
        opset = recorder.opset
        for domain, op_type, inputs, attributes, n_outputs, metadata in self._nodes:
            shared = _shared_constant(recorder, domain, op_type, attributes)
            if shared is not None:
                made.append([shared])
                continue
            values = [None if ref is None else tensors[ref[1]] if ref[0] == "input" else made[ref[1]][ref[2]] for ref in inputs]
            while values and values[-1] is None:
                values.pop()
            outputs = [_tensors.SymbolicTensor(opset) for _ in range(n_outputs)]
            node = ir.Node(
                domain,
                op_type,
                inputs=values,
                attributes=[ir.Attr(a.name, a.type, a.value) for a in attributes],
                outputs=outputs,
                metadata_props=dict(metadata),
            )
            recorder.nodes.append(node)
            made.append(outputs)
        results = [made[ref[1]][ref[2]] for ref in self._outputs]
        return results[0] if len(results) == 1 else results

    def __call__(self, *tensors):
        """The variant called as a function (added to the model, inlined by the exporter)."""
        if self._function is None:
            graph = self._linked.graph
            inputs, outputs = [i.name for i in graph.input], [o.name for o in graph.output]
            signature = Signature(
                attributes=(),
                inputs=tuple(Input(name=name, type=None, optional=False) for name in inputs),
                outputs=tuple(Output(name=name, type=None) for name in outputs),
                parameters=tuple(inputs),
            )
            self._function = variant_function(self._proto, self._linked, inputs, outputs, signature, len(outputs))
        return self._function(*tensors)


# The element types whose values NumPy gives back as Python numbers, which make the same tensor
# again (`ir.tensor(value, dtype)`): those of the constants the exporter makes itself.
_SHAREABLE = frozenset(
    ("FLOAT", "DOUBLE", "FLOAT16", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "BOOL")
)


def _shared_constant(recorder, domain: str, op_type: str, attributes: list):
    """The exporter's shared value for a ``Constant`` node of a scalar or a 1-D tensor of numbers
    (its ``constant_farm``, keyed as the exporter keys the constants it makes itself: the Python
    value and the element type), or None for any other node."""
    farm = getattr(recorder, "constant_farm", None)
    if farm is None or op_type != "Constant" or domain not in ("", "ai.onnx") or len(attributes) != 1:
        return None
    attribute = attributes[0]
    if attribute.name != "value":
        return None
    import onnx_ir as ir

    tensor = attribute.value
    dtype = getattr(tensor, "dtype", None)
    if dtype is None or dtype.name not in _SHAREABLE or len(tensor.shape) > 1:
        return None
    try:
        from torch.onnx._internal.exporter._building import _get_or_create_constant
    except ImportError:
        return None
    array = tensor.numpy()
    key = array.item() if array.ndim == 0 else tuple(array.tolist())
    if array.ndim == 1 and not key:
        return None
    return _get_or_create_constant(farm, key, dtype, recorder.opset)
