"""Specialising a compiled translation to one call of the exporter, with onnxsc's linker.

A call fixes which optional inputs are given and the value of every attribute (None: not
given). The server makes a one-node model calling the function that way (``driver::call`` in
the compiler, from the library's own signature) and links it in inline mode, as
``onnxsc link --mode inline`` would; its graph is the function's body for that call: attribute references bound, ``is None`` tests and attribute-only conditions
folded, omitted values left out. It becomes a function of the given inputs only, which the
exporter calls (and later inlines). Variants are cached per (function, inputs given,
attribute values): one link per distinct call.

The links are requests to one ``onnxsc serve`` process per library (``_server.Server``),
started on the first variant: the library is read and indexed once, and a request costs what
linking its one call costs, not a process and three files.
"""

from __future__ import annotations

import json
import threading
from typing import Optional

from onnxsc._errors import OnnxscError
from onnxsc._server import CALL, LINKED, TRACE, Server
from onnxsc._signature import Signature
from onnxsc._trace import TracedVariant, describe_plain
from onnxsc._translation import source_of
from onnxsc._variant import variant_function


class Specializer:
    """The variants of the functions of one compiled library. Safe to use from several
    threads; its server ends when it is garbage-collected, or when the interpreter exits."""

    def __init__(self, library: bytes):
        self.library = library
        self.cache: dict = {}
        self.bodies: dict = {}
        # The typed call requests checked already.
        self.checked: set = set()
        self._server = None
        self._starting = threading.Lock()

    def variant(
        self,
        proto,
        signature: Signature,
        given: list,
        attributes: dict,
        n_outputs: int,
        types: Optional[dict] = None,
        expect: Optional[dict] = None,
    ):
        """The function specialised to a call that gives the inputs named in ``given`` and the
        ``attributes`` (name -> value, typed as the signature says; the others not given),
        as a callable taking the given inputs in order. With the given inputs' ``types`` or
        PyTorch's answer (``expect``), the call's body is first checked against them, once per
        distinct call: a shape, type or result PyTorch contradicts is an error at its line."""
        key = variant_key(proto, given, attributes)
        if types or expect:
            self._check(proto, key, call_request(proto, given, attributes, types, expect))
        if key in self.cache:
            return self.cache[key]
        linked = self.linked(proto, signature, given, attributes)
        if linked.functions:
            raise OnnxscError(
                f"{source_of(proto)}: `{proto.name}` calls functions that cannot be expanded "
                f"({', '.join(f.name for f in linked.functions)}); the exporter needs one body"
            )
        variant_signature = signature.replace(
            inputs=tuple(i for name in given for i in signature.inputs if i.name == name),
            attributes=(),
            parameters=tuple(given),
            torch_ops=(),
        )
        outputs = [f"out{k}" for k in range(len(proto.output))]
        self.cache[key] = variant_function(proto, linked, given, outputs, variant_signature, n_outputs)
        return self.cache[key]

    def check(self, proto, given: list, attributes: dict, types: dict, expect: Optional[dict]) -> None:
        """Checks a call of ``proto`` that gives the inputs ``given`` (their ``types``) and the
        ``attributes`` against them and PyTorch's answer, raising the refusal, without making
        the call's function (``python -m onnxsc test --facts-only``)."""
        key = variant_key(proto, given, attributes)
        self._check(proto, key, call_request(proto, given, attributes, types, expect))

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

        status, payload = self._respond(TRACE, request.encode("utf-8"))
        if status != LINKED:
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

    def _check(self, proto, key: tuple, request: bytes) -> None:
        """Checks one typed call request; its answer is also the body of the call's variant."""
        if request in self.checked:
            return
        import onnx

        status, payload = self._respond(CALL, request)
        if status != LINKED:
            raise OnnxscError(
                f"{source_of(proto)}: `{proto.name}` cannot translate this call:\n"
                f"{payload.decode('utf-8', errors='replace').strip()}"
            )
        self.checked.add(request)
        self.bodies.setdefault(key, onnx.load_from_string(payload))

    def linked(self, proto, signature: Signature, given: list, attributes: dict):
        """The one-call model linked in inline mode: its graph is the function's body for a call
        that gives the inputs ``given`` and the ``attributes``, computing ``out0``, ``out1``..."""
        key = variant_key(proto, given, attributes)
        if key not in self.bodies:
            self.bodies[key] = self._link(proto, signature, given, attributes)
        return self.bodies[key]

    def _link(self, proto, signature: Signature, given: list, attributes: dict):
        import onnx

        status, payload = self._respond(CALL, call_request(proto, given, attributes))
        if status != LINKED:
            raise OnnxscError(
                f"{source_of(proto)}: cannot specialise `{proto.name}` to inputs {given} and "
                f"attributes {attributes}:\n{payload.decode('utf-8', errors='replace').strip()}"
            )
        return onnx.load_from_string(payload)

    def _respond(self, kind: int, request: bytes) -> tuple:
        """The server's response to a request: (status, payload). A server that ended (a crash,
        reported to the request that met it) is replaced, so that one call's crash does not
        fail every later call of the export."""
        with self._starting:
            if self._server is not None and self._server.ended:
                self._server.close()
                self._server = None
            if self._server is None:
                self._server = Server(self.library)
        return self._server.request(kind, request)

    def close(self) -> None:
        """Ends the server now (a later variant starts another)."""
        with self._starting:
            server, self._server = self._server, None
        if server is not None:
            server.close()


def variant_key(proto, given: list, attributes: dict) -> tuple:
    """What tells one call's variant of ``proto`` from another's: the inputs given and the
    attribute values."""
    return (proto.domain, proto.name, tuple(given), json.dumps(attributes, sort_keys=True))


def call_request(proto, given: list, attributes: dict, types: Optional[dict] = None, expect=None) -> bytes:
    """The body of a call request (``driver::call`` in the compiler): the function, the inputs
    given by their formal names, and the attributes' values tagged as a trace's facts are. The
    server builds the model of the call from the library's own signature of the function.
    ``types`` (what the exporter knows of given inputs) and ``expect`` (PyTorch's answer) make
    the server check the call's body against them."""
    request = {
        "function": f"{proto.domain}::{proto.name}",
        "overload": proto.overload,
        "inputs": list(given),
        "attributes": {name: describe_plain(value) for name, value in attributes.items()},
    }
    if types:
        request["types"] = types
    if expect is not None:
        request["expect"] = expect
    return json.dumps(request).encode("utf-8")
