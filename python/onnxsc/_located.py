"""A node that ONNX Runtime or onnx.checker names, mapped back to the ``.onnxs`` line it was
compiled or traced from: onnxsc writes each node's line in its ``onnxsc.source`` metadata, and
the exporter keeps it when it inlines a translation."""

from __future__ import annotations

import re

SOURCE_KEY = "onnxsc.source"

# How ONNX Runtime and onnx.checker name a node in their messages.
_NODE_NAMES = (
    re.compile(r"Name:'([^']+)'"),  # ORT: "... running Reshape node. Name:'node_view' Status Message: ..."
    re.compile(r"Node \(([^)]+)\)"),  # ORT and onnx: "Node (node_view) Op (Reshape) ..."
    re.compile(r"name: (\S+) OpType"),  # ORT: "... name: node_view OpType: Reshape ..."
    re.compile(r"node ([^\s,]+) with op_type"),  # onnx.checker: "Bad node spec for node node_view with op_type ..."
)


def node_sources(model) -> dict:
    """Each named node's ``.onnxs`` location in ``model`` (a ModelProto), subgraphs and
    functions included."""
    out: dict = {}

    def visit(nodes):
        for node in nodes:
            for entry in node.metadata_props:
                if entry.key == SOURCE_KEY and node.name:
                    out.setdefault(node.name, entry.value)
            for attribute in node.attribute:
                if attribute.HasField("g"):
                    visit(attribute.g.node)
                for graph in attribute.graphs:
                    visit(graph.node)

    visit(model.graph.node)
    for function in model.functions:
        visit(function.node)
    return out


def located(message: str, model) -> str:
    """``message`` with the ``.onnxs`` line of the node it names added, when onnxsc made that
    node: ``... (node `node_view`, from lib/core.onnxs:8581:5)``."""
    if model is None:
        return message
    for pattern in _NODE_NAMES:
        match = pattern.search(message)
        if match is None:
            continue
        source = node_sources(model).get(match.group(1))
        if source:
            return f"{message} (node `{match.group(1)}`, from {source})"
    return message
