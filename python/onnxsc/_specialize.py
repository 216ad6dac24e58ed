"""Specialising a compiled translation to one call of the exporter, with onnxsc's linker.

A call fixes which optional inputs are given and the value of every attribute (None: not
given). A one-node model calling the function that way, linked in inline mode
(``onnxsc link --mode inline``, ``link::specialize`` in the compiler), is the function's body
for that call: attribute references bound, ``is None`` tests and attribute-only conditions
folded, omitted values left out. It becomes a function of the given inputs only, which the
exporter calls (and later inlines). Variants are cached per (function, inputs given,
attribute values): one link per distinct call.

The links are requests to one ``onnxsc serve`` process per library (:class:`_Server`), started
on the first variant: the library is read and indexed once, and a request costs what linking
its one call costs, not a process and three files.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import weakref
from pathlib import Path

from onnxsc._binary import find_onnxsc_bin
from onnxsc._errors import OnnxscError
from onnxsc._signature import ATTRIBUTE_PROTO_TYPES, Input, Output, Signature
from onnxsc._translation import SOURCE_KEY, compiled_function, source_of

# Variant names are unique in the process: tables may be merged into one export.
_VARIANTS = itertools.count()

# The status byte of a response of `onnxsc serve` (driver::serve).
_LINKED = 0


class Specializer:
    """The variants of the functions of one compiled library. Safe to use from several
    threads; its server ends when it is garbage-collected, or when the interpreter exits."""

    def __init__(self, library: bytes):
        self.library = library
        self.cache: dict = {}
        self.bodies: dict = {}
        self._server = None
        self._starting = threading.Lock()

    def variant(self, proto, signature: Signature, given: list, attributes: dict, n_outputs: int):
        """The function specialised to a call that gives the inputs named in ``given`` and the
        ``attributes`` (name -> value, typed as the signature says; the others not given),
        as a callable taking the given inputs in order."""
        key = (proto.domain, proto.name, tuple(given), json.dumps(attributes, sort_keys=True))
        if key in self.cache:
            return self.cache[key]
        linked = self.linked(proto, signature, given, attributes)
        if linked.functions:
            raise OnnxscError(
                f"{source_of(proto)}: `{proto.name}` calls functions that cannot be expanded "
                f"({', '.join(f.name for f in linked.functions)}); the exporter needs one body"
            )
        import onnx

        outputs = [f"out{k}" for k in range(len(proto.output))]
        body = onnx.helper.make_function(
            proto.domain,
            f"{proto.name}__{next(_VARIANTS)}",
            list(given),
            outputs,
            list(linked.graph.node),
            [o for o in linked.opset_import if o.domain in _domains(linked.graph.node)],
        )
        body.doc_string = proto.doc_string
        body.metadata_props.extend(e for e in proto.metadata_props if e.key == SOURCE_KEY)
        variant_signature = signature.replace(
            inputs=tuple(i for name in given for i in signature.inputs if i.name == name),
            attributes=(),
            parameters=tuple(given),
            torch_ops=(),
        )
        self.cache[key] = compiled_function(body, variant_signature, n_outputs)
        return self.cache[key]

    def traced(self, proto, signature: Signature, facts: dict):
        """The trace-only translation ``proto`` specialised to a call's ``facts`` (``_trace``): a
        :class:`TracedVariant` taking the call's tensors in the order the facts list them. One
        request to the server per distinct facts."""
        # The facts' JSON is the request and the cache's key: the same call describes itself
        # the same way (its arguments in order), so no sorting is needed.
        request = json.dumps(facts)
        key = ("trace", request)
        if key in self.cache:
            return self.cache[key]
        import onnx

        status, payload = self._respond(request.encode("utf-8"))
        if status != _LINKED:
            raise OnnxscError(
                f"{source_of(proto)}: `{proto.name}` cannot translate this call:\n"
                f"{payload.decode('utf-8', errors='replace').strip()}"
            )
        linked = onnx.load_from_string(payload)
        if linked.functions:
            raise OnnxscError(
                f"{source_of(proto)}: `{proto.name}` calls functions that cannot be expanded "
                f"({', '.join(f.name for f in linked.functions)}); the exporter needs one body"
            )
        self.cache[key] = TracedVariant(proto, linked)
        return self.cache[key]

    def linked(self, proto, signature: Signature, given: list, attributes: dict):
        """The one-call model linked in inline mode: its graph is the function's body for a call
        that gives the inputs ``given`` and the ``attributes``, computing ``out0``, ``out1``..."""
        key = (proto.domain, proto.name, tuple(given), json.dumps(attributes, sort_keys=True))
        if key not in self.bodies:
            self.bodies[key] = self._link(proto, signature, given, attributes)
        return self.bodies[key]

    def _link(self, proto, signature: Signature, given: list, attributes: dict):
        import onnx

        request = call_model(proto, signature, given, attributes).SerializeToString()
        status, payload = self._respond(request)
        if status != _LINKED:
            raise OnnxscError(
                f"{source_of(proto)}: cannot specialise `{proto.name}` to inputs {given} and "
                f"attributes {attributes}:\n{payload.decode('utf-8', errors='replace').strip()}"
            )
        return onnx.load_from_string(payload)

    def _respond(self, request: bytes) -> tuple:
        """The server's response to a request: (status, payload)."""
        with self._starting:
            if self._server is None:
                self._server = _Server(self.library)
        return self._server.request(request)

    def close(self) -> None:
        """Ends the server now (a later variant starts another)."""
        with self._starting:
            server, self._server = self._server, None
        if server is not None:
            server.close()


def call_model(proto, signature: Signature, given: list, attributes: dict):
    """A model of one call of ``proto`` that gives the inputs named in ``given`` and the
    ``attributes``, computing ``out0``, ``out1``...: what the linker specialises."""
    import onnx

    formals = [i.name for i in signature.inputs]
    actuals = [name if name in given else "" for name in formals]
    while actuals and not actuals[-1]:
        actuals.pop()
    outputs = [f"out{k}" for k in range(len(proto.output))]
    node = onnx.helper.make_node(proto.name, actuals, outputs, domain=proto.domain)
    types = {a.name: a.type for a in signature.attributes}
    for name, value in attributes.items():
        node.attribute.append(onnx.helper.make_attribute(name, value, attr_type=ATTRIBUTE_PROTO_TYPES[types[name]]))
    # Given inputs are tensors: the linker folds `x is None` on them. Inputs and outputs
    # carry a shape (of unknown rank), as onnx.checker requires and so the linker.
    tensor = onnx.helper.make_tensor_type_proto(onnx.TensorProto.UNDEFINED, None)
    tensor.tensor_type.shape.SetInParent()
    graph = onnx.helper.make_graph(
        [node],
        "call",
        [onnx.helper.make_value_info(n, tensor) for n in given],
        [onnx.helper.make_value_info(n, tensor) for n in outputs],
    )
    imports = [onnx.helper.make_opsetid(proto.domain, 1), *proto.opset_import]
    return onnx.helper.make_model(graph, opset_imports=_unique_imports(imports), ir_version=10)


class _Server:
    """One ``onnxsc serve`` process: the library in a temporary file that lives as long as the
    process, requests framed on its stdin (a 4-byte little-endian length, then the bytes),
    responses on its stdout (the same framing: a status byte, then the linked model or the
    diagnostics), its stderr in a temporary file, read when it dies. One request at a time."""

    def __init__(self, library: bytes):
        directory = tempfile.mkdtemp(prefix="onnxsc-serve-")
        stderr = tempfile.TemporaryFile(prefix="onnxsc-serve-")
        try:
            path = Path(directory) / "library.onnx"
            path.write_bytes(library)
            cmd = [find_onnxsc_bin(), "--color", "never", "serve", str(path)]
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        except BaseException:
            stderr.close()
            shutil.rmtree(directory, ignore_errors=True)
            raise
        self._stderr = stderr
        self._responses = _Responses(self._proc.stdout)
        self._lock = threading.Lock()
        self._failure = None
        self.close = weakref.finalize(self, _close, self._proc, directory, stderr)

    def request(self, data: bytes) -> tuple:
        with self._lock:
            if self._failure is None:
                try:
                    return self._exchange(data)
                except (OSError, ValueError, EOFError):
                    self._failure = self._died()
            raise OnnxscError(self._failure)

    def _exchange(self, data: bytes) -> tuple:
        proc = self._proc
        proc.stdin.write(struct.pack("<I", len(data)) + data)
        proc.stdin.flush()
        (length,) = struct.unpack("<I", self._responses.read(4))
        response = self._responses.read(length)
        if not response:
            raise EOFError
        return response[0], response[1:]

    def _died(self) -> str:
        """What to say of a server that stopped answering: its exit and its stderr."""
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        how = f"was killed by signal {-code}" if code < 0 else f"ended with exit status {code}"
        self._stderr.seek(0)
        err = self._stderr.read().decode("utf-8", errors="replace").strip()
        return f"the onnxsc server of this library {how}" + (f":\n{err}" if err else ", saying nothing")


class _Responses:
    """The server's stdout, read by waiting actively for a short while before sleeping. The
    answer to a request comes within tens of microseconds; a reader that sleeps meanwhile has
    its core go idle, and waking it costs about as much again (more on a virtual machine). Where
    the pipe cannot be made non-blocking (or outside POSIX systems), reads simply block."""

    # How long a read polls before it blocks: far longer than an answer takes, far shorter
    # than anything a user would notice.
    SPIN_SECONDS = 0.002

    def __init__(self, stream):
        self._stream = stream
        self._buffer = bytearray()
        self._fd = None
        if os.name != "posix":  # `select` waits on sockets only, elsewhere
            return
        try:
            fd = stream.fileno()
            os.set_blocking(fd, False)
            self._fd = fd
        except (OSError, AttributeError, ValueError):
            pass

    def read(self, n: int) -> bytes:
        if self._fd is None:
            return _read(self._stream, n)
        deadline = None
        while len(self._buffer) < n:
            try:
                chunk = os.read(self._fd, max(n - len(self._buffer), 1 << 16))
            except BlockingIOError:
                now = time.perf_counter()
                if deadline is None:
                    deadline = now + self.SPIN_SECONDS
                elif now > deadline:
                    select.select([self._fd], [], [])
                continue
            if not chunk:
                raise EOFError
            self._buffer += chunk
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data


def _read(stream, n: int) -> bytes:
    data = stream.read(n)
    if len(data) < n:
        raise EOFError
    return data


def _close(proc, directory: str, stderr) -> None:
    """Ends a server: its input closed (it exits at the end of its input), then its files."""
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()
    stderr.close()
    shutil.rmtree(directory, ignore_errors=True)


def _domains(nodes) -> set:
    """The domains the nodes use, subgraphs included (folded conditions may leave some unused)."""
    out = {""}
    for n in nodes:
        out.add(n.domain)
        for a in n.attribute:
            for g in [a.g] if a.HasField("g") else a.graphs:
                out |= _domains(g.node)
    return out


def _unique_imports(imports):
    seen, out = set(), []
    for o in imports:
        if o.domain not in seen:
            seen.add(o.domain)
            out.append(o)
    return out



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
            self._function = _variant_function(self._proto, self._linked)
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


def _variant_function(proto, linked):
    import onnx

    inputs = [i.name for i in linked.graph.input]
    outputs = [o.name for o in linked.graph.output]
    body = onnx.helper.make_function(
        proto.domain,
        f"{proto.name}__{next(_VARIANTS)}",
        inputs,
        outputs,
        list(linked.graph.node),
        [o for o in linked.opset_import if o.domain in _domains(linked.graph.node)],
    )
    body.doc_string = proto.doc_string
    body.metadata_props.extend(e for e in proto.metadata_props if e.key == SOURCE_KEY)
    variant_signature = Signature(
        attributes=(),
        inputs=tuple(Input(name=name, type=None, optional=False) for name in inputs),
        outputs=tuple(Output(name=name, type=None) for name in outputs),
        parameters=tuple(inputs),
    )
    return compiled_function(body, variant_signature, len(outputs))
