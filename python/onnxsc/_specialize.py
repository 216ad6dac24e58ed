"""Specialising a compiled translation to one call of the exporter, with onnxsc's linker.

A call fixes which optional inputs are given and the value of every attribute (None: not
given). A one-node model calling the function that way, linked in inline mode
(``onnxsc link --mode inline``, ``link::specialize`` in the compiler), is the function's body
for that call: attribute references bound, ``is None`` tests and attribute-only conditions
folded, omitted values left out. It becomes a function of the given inputs only, which the
exporter calls (and later inlines). Variants are cached per (function, inputs given,
attribute values): one linker run per distinct call.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import tempfile
from pathlib import Path

from onnxsc._binary import find_onnxsc_bin
from onnxsc._errors import OnnxscError
from onnxsc._signature import ATTRIBUTE_PROTO_TYPES, Signature
from onnxsc._translation import SOURCE_KEY, compiled_function, source_of

# Variant names are unique in the process: tables may be merged into one export.
_VARIANTS = itertools.count()


class Specializer:
    """The variants of the functions of one compiled library."""

    def __init__(self, library: bytes):
        self.library = library
        self.cache: dict = {}
        self.bodies: dict = {}

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

    def linked(self, proto, signature: Signature, given: list, attributes: dict):
        """The one-call model linked in inline mode: its graph is the function's body for a call
        that gives the inputs ``given`` and the ``attributes``, computing ``out0``, ``out1``..."""
        key = (proto.domain, proto.name, tuple(given), json.dumps(attributes, sort_keys=True))
        if key not in self.bodies:
            self.bodies[key] = self._link(proto, signature, given, attributes)
        return self.bodies[key]

    def _link(self, proto, signature: Signature, given: list, attributes: dict):
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
        model = onnx.helper.make_model(graph, opset_imports=_unique_imports(imports), ir_version=10)
        with tempfile.TemporaryDirectory(prefix="onnxsc-") as tmp:
            call, library, linked = (Path(tmp) / n for n in ("call.onnx", "library.onnx", "linked.onnx"))
            call.write_bytes(model.SerializeToString())
            library.write_bytes(self.library)
            cmd = [find_onnxsc_bin(), "--color", "never", "link", str(call), str(library), "-o", str(linked), "--mode", "inline"]
            proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace")
            if proc.returncode != 0:
                raise OnnxscError(
                    f"{source_of(proto)}: cannot specialise `{proto.name}` to inputs {given} and "
                    f"attributes {attributes}:\n{proc.stderr.strip()}"
                )
            return onnx.load_from_string(linked.read_bytes())


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

