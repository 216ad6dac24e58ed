"""How `python -m onnxsc test` judges one output against PyTorch's: the rules that keep a right
translation from failing (docs/optest.md, "Judging, and false alarms"), each with the case it
must still fail.

* Values PyTorch leaves unspecified: a random operator (tagged `nondeterministic_seeded`, even
  when OpInfo's wrapper reseeds it so two runs agree) and uninitialised memory (`empty`).
* A complex result, which the exporter gives as its real view.
* A number PyTorch returns (`_local_scalar_dense`), which a model returns as a 0-d tensor.
* Normwise comparison for float16 and for large inputs, elementwise otherwise.
* ONNX's reference implementation: an overflow counts only when a node's exact value is beyond
  float16's range, not when the reference kernel loses it (its LogSoftmax underflows).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/test")
onnx = pytest.importorskip("onnx", reason="onnx is installed by scripts/test")

from onnx import TensorProto, helper  # noqa: E402

from onnxsc._optest.calls import flatten  # noqa: E402
from onnxsc._optest.judge import _first_overflow, compare, unspecified_values  # noqa: E402


def test_random_and_uninitialised_operators_compare_only_dtype_and_shape():
    assert unspecified_values("aten::rand_like")
    assert unspecified_values("aten::normal.Tensor_Tensor")
    assert unspecified_values("aten::empty.memory_format")
    assert unspecified_values("aten::new_empty_strided")
    assert not unspecified_values("aten::relu")
    assert not unspecified_values("aten::embedding")
    ours, pytorchs = [torch.tensor([0.1, 0.7])], [torch.tensor([0.4, 0.2])]
    assert compare(ours, pytorchs, "aten::rand_like").outcome == "passed"
    assert compare(ours, pytorchs, "aten::relu").outcome == "failed"
    # Dtypes and shapes still count.
    assert compare([torch.tensor([0.1])], pytorchs, "aten::rand_like").kind == "shape"


def test_a_complex_result_is_compared_through_its_real_view():
    expected = [torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)]
    right = [torch.tensor([[1.0, 2.0], [3.0, -4.0]])]
    wrong = [torch.tensor([[1.0, 2.0], [3.0, 4.0]])]
    assert compare(right, expected, "aten::complex").outcome == "passed"
    assert compare(wrong, expected, "aten::complex").outcome == "failed"
    assert compare([torch.tensor([1.0, 3.0])], expected, "aten::complex").kind == "dtype"


def test_a_number_pytorch_returns_is_a_0d_tensor():
    assert [t.item() for t in flatten((2.5, [torch.tensor(1.0)], 3))] == [2.5, 1.0, 3]
    assert compare([torch.tensor(2.5)], flatten(2.5), "aten::_local_scalar_dense").outcome == "passed"


def test_float16_and_large_inputs_are_judged_normwise_float32_elementwise():
    # A cross product's small element after cancellation: off by 0.01 where the largest is 160.
    ours = [torch.tensor([160.0, 0.01])]
    pytorchs = [torch.tensor([160.0, 0.0])]
    half = [t.half() for t in ours], [t.half() for t in pytorchs]
    assert compare(*half, "aten::cross").outcome == "passed"
    assert compare(ours, pytorchs, "aten::cross", [torch.tensor([9.0])]).outcome == "failed"
    assert compare(ours, pytorchs, "aten::cross", [torch.tensor([1e4])]).outcome == "passed"
    # Normwise is still a bound: off by 10 where the largest is 160 fails in float16 too.
    assert compare([torch.tensor([160.0, 10.0]).half()], half[1], "aten::cross").outcome == "failed"


def _one_node_model(op: str, **attrs) -> onnx.ModelProto:
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_an_overflow_counts_only_where_the_exact_value_is_beyond_float16():
    large = torch.tensor([[3e4, 3e4, 3e4]], dtype=torch.float16)
    found = _first_overflow(_one_node_model("ReduceSum", keepdims=0), ["x"], [large])
    assert found is not None and "ReduceSum" in found, found
    # LogSoftmax's exact values fit float16; the reference's log of an underflowed exp does not.
    spread = torch.tensor([[-3000.0, 0.0, 900.0]], dtype=torch.float16)
    assert _first_overflow(_one_node_model("LogSoftmax", axis=1), ["x"], [spread]) is None


def test_indices_of_values_tied_in_the_input_may_differ_others_may_not():
    # topk(k=2) of [5, 3, 3]: index 1 or 2 for the second value, which is tied in the input only.
    source = torch.tensor([5.0, 3.0, 3.0])
    values = torch.tensor([5.0, 3.0])
    assert compare([values, torch.tensor([0, 2])], [values, torch.tensor([0, 1])], "aten::topk", [source]).outcome == "passed"
    assert compare([values, torch.tensor([1, 2])], [values, torch.tensor([0, 1])], "aten::topk", [source]).outcome == "failed"


def test_reference_outputs_keep_their_rank_and_may_be_reversed_views():
    import numpy as np

    from onnxsc._optest.judge import _plain

    assert _plain(np.float16(2.0) * np.ones((), np.float16)).shape == ()
    reversed_view = np.arange(4, dtype=np.float32)[::-1]
    assert torch.from_numpy(_plain(reversed_view)).tolist() == [3.0, 2.0, 1.0, 0.0]
