"""A node that ONNX Runtime refuses, named back to its `.onnxs` line: through `onnxsc.functions`,
and in `python -m onnxsc test`'s verdicts (``_located.located``)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onnxsc  # noqa: E402
from onnxsc._located import located, node_sources  # noqa: E402


def reshape_model(source: str = "lib/views.onnxs:7:12"):
    node = onnx.helper.make_node("Reshape", ["x", "shape"], ["y"], name="node_view")
    node.metadata_props.add(key="onnxsc.source", value=source)
    graph = onnx.helper.make_graph(
        [node],
        "g",
        [
            onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3]),
            onnx.helper.make_tensor_value_info("shape", onnx.TensorProto.INT64, [2]),
        ],
        [onnx.ValueInfoProto(name="y")],
    )
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)], ir_version=10)


def runtime_error(model) -> str:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception) as caught:
        session.run(None, {"x": np.zeros((2, 3), np.float32), "shape": np.array([4, 4], np.int64)})
    return str(caught.value)


def test_the_node_onnx_runtime_names_is_given_its_onnxs_line():
    model = reshape_model()
    message = runtime_error(model)
    assert "node_view" in message, message
    assert located(message, model) == f"{message} (node `node_view`, from lib/views.onnxs:7:12)"


def test_a_message_naming_no_node_of_onnxsc_is_left_as_it_is():
    model = reshape_model()
    del model.graph.node[0].metadata_props[:]
    message = runtime_error(model)
    assert located(message, model) == message
    assert located("Node (elsewhere) Op (Add) failed", reshape_model()) == "Node (elsewhere) Op (Add) failed"
    assert node_sources(reshape_model()) == {"node_view": "lib/views.onnxs:7:12"}


def test_a_compiled_function_that_fails_in_onnx_runtime_names_its_line(tmp_path):
    source = tmp_path / "views.onnxs"
    source.write_text(
        textwrap.dedent(
            """
            from onnxscript import FLOAT, INT64, script
            from onnxscript import opset18 as op


            @script()
            def view(x: FLOAT[...], shape: INT64[...]) -> FLOAT[...]:
                return op.Reshape(x, shape)
            """
        ),
        encoding="utf-8",
    )
    fns = onnxsc.functions(source)
    np.testing.assert_array_equal(fns.view(np.zeros((2, 3), np.float32), np.array([3, 2])), np.zeros((3, 2)))
    with pytest.raises(onnxsc.OnnxscError) as caught:
        fns.view(np.zeros((2, 3), np.float32), np.array([4, 4]))
    message = str(caught.value)
    assert "ONNX Runtime fails on `view`" in message and "views.onnxs:8:" in message, message
