"""A variant: a compiled translation's body for one call (linked by ``onnxsc serve``), made into
a function the exporter calls. Scripted variants (``_specialize``) and trace-only ones called as
functions (``_trace.TracedVariant``) are made here, one way.
"""

from __future__ import annotations

import itertools

from onnxsc._signature import Signature
from onnxsc._translation import SOURCE_KEY, compiled_function

# Variant names are unique in the process: tables may be merged into one export.
_VARIANTS = itertools.count()


def variant_function(proto, linked, inputs: list, outputs: list, signature: Signature, n_outputs: int):
    """The linked model's graph as a function named after ``proto`` (with its documentation and
    source), computing ``outputs`` from ``inputs``, called as ``signature`` says."""
    import onnx

    body = onnx.helper.make_function(
        proto.domain,
        f"{proto.name}__{next(_VARIANTS)}",
        list(inputs),
        list(outputs),
        list(linked.graph.node),
        [o for o in linked.opset_import if o.domain in _domains(linked.graph.node)],
    )
    body.doc_string = proto.doc_string
    body.metadata_props.extend(e for e in proto.metadata_props if e.key == SOURCE_KEY)
    return compiled_function(body, signature, n_outputs)


def _domains(nodes) -> set:
    """The domains the nodes use, subgraphs included (folded conditions may leave some unused)."""
    out = {""}
    for n in nodes:
        out.add(n.domain)
        for a in n.attribute:
            for g in [a.g] if a.HasField("g") else a.graphs:
                out |= _domains(g.node)
    return out
