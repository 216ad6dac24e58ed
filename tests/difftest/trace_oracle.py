"""The oracle for trace-time translations: each call traced as the exporter traces it.

The reference is PyTorch's exporter's own machinery: the translation, imported as Python with
onnxscript's `torch_op`, is called on symbolic tensors of the call's element types and shapes
(`_tensors.SymbolicTensor`) with an `OpRecorder` as onnxscript's evaluator, as
`torch/onnx/_internal/exporter/_core.py` calls torchlib; the nodes it records make a model.
onnxsc specialises the same calls as the Python package has it specialise an exporter's: trace
requests to one `onnxsc serve FILE` process per program, each answered with the call's model,
linked. Both run in ONNX Runtime on the same inputs. A call the reference cannot trace is not
compared.
"""

from __future__ import annotations

import warnings
import zlib
from pathlib import Path

import numpy as np
import onnx

from . import oracle
from .oracle import AGREE, DISAGREE, INVALID, VALID_REJECTED, Outcome, Result
from .trace_generator import IR_TYPES

NUMPY_TYPES = {ir_name: dtype for dtype, ir_name in IR_TYPES.items()}


def _argument(fact: dict, make_tensor):
    (tag, value), = fact.items()
    if tag == "tensor":
        return make_tensor(value["dtype"], value["shape"])
    if tag == "none":
        return None
    return value


def reference_model(function, call: dict, opset_version: int) -> tuple[onnx.ModelProto, list[str]]:
    """The call traced by the exporter's recorder: a model, and its inputs' element types."""
    import onnx_ir as ir
    import onnxscript
    from onnxscript import onnx_opset
    from torch.onnx._internal.exporter import _building, _tensors

    opset = getattr(onnx_opset, f"opset{opset_version}")
    inputs: list = []
    types: list[str] = []

    def make_tensor(dtype: str, shape: list[int]):
        value = _tensors.SymbolicTensor(opset, name=f"in{len(inputs)}", shape=ir.Shape(shape),
                                        type=ir.TensorType(ir.DataType[dtype]))
        inputs.append(value)
        types.append(NUMPY_TYPES[dtype])
        return value

    args = [_argument(a, make_tensor) for a in call["args"]]
    kwargs = {k: _argument(v, make_tensor) for k, v in call.get("kwargs", {}).items()}
    tracer = _building.OpRecorder(opset, {})
    with onnxscript.evaluator.default_as(tracer):
        result = function(*args, **kwargs)
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    nodes = list(tracer.nodes)
    for i, out in enumerate(outputs):
        if out in inputs:  # a graph output cannot be a graph input
            node = ir.Node("", "Identity", [out], num_outputs=1)
            nodes.append(node)
            outputs[i] = node.outputs[0]
    for i, out in enumerate(outputs):
        out.name = f"out{i}"
    graph = ir.Graph(inputs, outputs, nodes=nodes, opset_imports={"": opset_version})
    model = ir.serde.serialize_model(ir.Model(graph, ir_version=10))
    model.ir_version = oracle.harness.model_ir_version({"": opset_version})
    return model, types


def onnxsc_model(answer: tuple[int, bytes], inputs) -> tuple[onnx.ModelProto | None, str, list]:
    """onnxsc's model of a call (its answer to the trace request) with typed graph inputs: the
    reference's, the same tensors in the same order; and what onnxsc inferred of each output
    (``inferred``), which the model then stops declaring."""
    status, payload = answer
    if status != 0:
        return None, payload.decode("utf-8", errors="replace"), []
    model = onnx.load_from_string(payload)
    graph = model.graph
    if len(graph.input) != len(inputs):
        return None, f"onnxsc's model takes {len(graph.input)} tensors, the call passes {len(inputs)}", []
    for value, typed in zip(graph.input, inputs):
        value.type.CopyFrom(typed.type)
    declared = [oracle.inferred(value) for value in graph.output]
    for value in graph.output:
        value.ClearField("type")
    return model, "", declared


def _feeds(model: onnx.ModelProto, types: list[str], seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for value, dtype in zip(model.graph.input, types):
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        if np.dtype(dtype).kind == "f":
            feeds[value.name] = rng.uniform(-4, 4, size=shape).astype(dtype)
        else:
            feeds[value.name] = rng.integers(-9, 9, size=shape, endpoint=True).astype(dtype)
    return feeds


def _import(path: Path, workdir: Path):
    """The module as Python, its translations left out of torchlib's default registry: `torch_op`
    registers each there, and the exporter would then look for `torch.ops.difftest.*`."""
    from onnxscript.function_libs.torch_lib import registration

    registry = registration.default_registry
    before = set(registry)
    try:
        with warnings.catch_warnings():  # each program registers its f0 again
            warnings.simplefilter("ignore")
            return oracle.harness.import_as_module(path, workdir, prefix="difftest_")
    finally:
        for name in set(registry) - before:
            del registry._registry[name]


def run_trace(the_oracle: "oracle.Oracle", path: Path, meta: dict) -> Result:
    try:
        module = _import(path, the_oracle.workdir)
    except Exception as exc:  # noqa: BLE001
        return Result([Outcome(INVALID, name, f"import: {type(exc).__name__}: {exc}") for name in meta["calls"]])
    opset_version = next(v.version for v in vars(module).values()
                         if type(v).__name__.startswith("Opset") and getattr(v, "domain", None) == "")
    outcomes: dict[str, Outcome] = {}
    traced: list[tuple[str, dict, onnx.ModelProto, dict, list]] = []
    for name, calls in meta["calls"].items():
        for n, call in enumerate(calls):
            label = f"{name}#{n}"
            try:
                reference, types = reference_model(getattr(module, name), call, opset_version)
                feeds = _feeds(reference, types, zlib.crc32(f"{meta['seed']}:{label}".encode()))
                expected = oracle.run_model(reference, feeds)
            except Exception as exc:  # noqa: BLE001 - the reference cannot trace or run it
                outcomes[label] = Outcome(INVALID, label, f"reference: {type(exc).__name__}: {exc}")
                continue
            traced.append((label, call, reference, feeds, expected))
    if traced:
        from onnxsc._server import TRACE

        answers, status, stderr = oracle.serve(the_oracle.onnxsc.binary, path, TRACE, [t[1] for t in traced],
                                               the_oracle.onnxsc.timeout)
    for k, (label, call, reference, feeds, expected) in enumerate(traced):
        if k >= len(answers):
            kind = VALID_REJECTED if status == 1 and not answers else DISAGREE
            outcomes[label] = Outcome(kind, label, f"onnxsc serve exit {status}, no answer:\n{stderr}")
            continue
        ours, error, declared = onnxsc_model(answers[k], reference.graph.input)
        if ours is None:
            kind = VALID_REJECTED if answers[k][0] == 1 else DISAGREE
            outcomes[label] = Outcome(kind, label, error)
            continue
        try:
            got = oracle.run_model(ours, {o.name: v for o, v in zip(ours.graph.input, feeds.values())})
        except Exception as exc:  # noqa: BLE001
            outcomes[label] = Outcome(DISAGREE, label, f"ONNX Runtime refuses onnxsc's model: {exc}")
            continue
        difference = oracle.compare(got, expected) or oracle.contradiction(declared, got)
        outcomes[label] = Outcome(DISAGREE if difference else AGREE, label, difference or "")
    order = [f"{name}#{n}" for name, calls in meta["calls"].items() for n in range(len(calls))]
    return Result([outcomes[label] for label in order])
