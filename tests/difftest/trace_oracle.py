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

import json
import struct
import subprocess
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


def serve(binary: Path, path: Path, calls: list[dict], timeout: float) -> tuple[list[tuple[int, bytes]], int, str]:
    """onnxsc's answers to trace requests for `calls`, from one `onnxsc serve` of the program:
    (status, payload) per call answered, the server's exit status and its stderr. Fewer
    answers than calls means the server refused the program (exit 1, no answer) or died."""
    from onnxsc._server import HELLO, PROTOCOL, TRACE

    requests = [bytes([HELLO]) + struct.pack("<I", PROTOCOL) + b"difftest"]
    requests += [bytes([TRACE]) + json.dumps(c).encode() for c in calls]
    frames = b"".join(struct.pack("<I", len(r)) + r for r in requests)
    proc = subprocess.run([str(binary), "--color", "never", "serve", str(path)], input=frames,
                          capture_output=True, timeout=timeout, check=False)
    answers, data = [], proc.stdout
    # The answer to the handshake first.
    if len(data) >= 4:
        (length,) = struct.unpack("<I", data[:4])
        data = data[4 + length:]
    while len(data) >= 4 and len(answers) < len(calls):
        (length,) = struct.unpack("<I", data[:4])
        if length == 0 or len(data) < 4 + length:
            break
        answers.append((data[4], data[5:4 + length]))
        data = data[4 + length:]
    return answers, proc.returncode, proc.stderr.decode("utf-8", errors="replace")


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
    declared = [inferred(value) for value in graph.output]
    for value in graph.output:
        value.ClearField("type")
    return model, "", declared


def inferred(value) -> tuple:
    """(element type or 0, dimensions or None) an answer declares on an output: each dimension a
    number, a symbol, or None. An unknown element type with no dimension is onnxsc's
    placeholder for an output it knows nothing of."""
    t = value.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
    if t.elem_type == 0 and not dims:
        return 0, None
    return t.elem_type, dims


def contradiction(declared: list, got: list) -> str:
    """Where what onnxsc inferred contradicts what ONNX Runtime returns (less specific is
    allowed), or ""."""
    for k, ((elem, dims), array) in enumerate(zip(declared, got)):
        array = np.asarray(array)
        if elem and onnx.helper.tensor_dtype_to_np_dtype(elem) != array.dtype:
            return f"output {k}: onnxsc infers {onnx.TensorProto.DataType.Name(elem)}, ONNX Runtime returns {array.dtype}"
        if dims is None:
            continue
        if len(dims) != array.ndim or any(isinstance(d, int) and d != n for d, n in zip(dims, array.shape)):
            return f"output {k}: onnxsc infers dimensions {dims}, ONNX Runtime returns {list(array.shape)}"
    return ""


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
        answers, status, stderr = serve(the_oracle.onnxsc.binary, path, [t[1] for t in traced], the_oracle.onnxsc.timeout)
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
        difference = oracle.compare(got, expected) or contradiction(declared, got)
        outcomes[label] = Outcome(DISAGREE if difference else AGREE, label, difference or "")
    order = [f"{name}#{n}" for name, calls in meta["calls"].items() for n in range(len(calls))]
    return Result([outcomes[label] for label in order])
