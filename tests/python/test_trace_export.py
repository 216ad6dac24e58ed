"""Trace-only translations (``@torch_op(..., trace_only=True)``) through the Python package and
the linker: specialised per exporter call, recorded into the exporter's graph, computing what
PyTorch computes in ONNX Runtime.

* ``translation_table`` over sources, and ``load_library`` over a built library (which records
  the translations in ``onnxsc.trace``), export a model whose nodes carry their ``.onnxs``
  lines, with no local function left, and match PyTorch;
* different facts (a bias or none, another dtype) give different variants, each right;
* a call whose facts break an ``assert`` stops the export with the ``.onnxs`` line named;
* ``onnxsc link`` specialises a model's call of a trace-only translation from the types and
  shapes the model declares, and the linked model runs in ONNX Runtime.
"""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/test")
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

import onnxsc  # noqa: E402

import harness  # noqa: E402

pytestmark = pytest.mark.usefixtures("quiet_exporter")

SOURCE = textwrap.dedent(
    '''
    from typing import Optional

    import onnx_ir as ir
    from onnxscript import opset18 as op
    from onnxscript.function_libs.torch_lib.registration import torch_op
    from onnxscript.function_libs.torch_lib.tensor_typing import TFloat, TReal


    @torch_op("aten::linear", trace_only=True)
    def aten_linear(input: TFloat, weight: TFloat, bias: Optional[TFloat] = None) -> TFloat:
        """linear, as torchlib writes it: Gemm for 2-D inputs, MatMul otherwise."""
        if len(input.shape) == 2 and bias is not None:
            return op.Gemm(input, weight, bias, transB=True)
        out = op.MatMul(input, op.Transpose(weight, perm=[1, 0]))
        if bias is None:
            return out
        return op.Add(out, bias)


    @torch_op("aten::gelu", trace_only=True)
    def aten_gelu(self: TReal, approximate: str = "none") -> TReal:
        assert approximate in ("none", "tanh"), f"unknown approximation {approximate}"
        if approximate == "tanh":
            cubed = op.Pow(self, ir.tensor(3, dtype=self.dtype))
            inner = op.Add(self, op.Mul(ir.tensor(0.044715, dtype=self.dtype), cubed))
            inner = op.Tanh(op.Mul(ir.tensor(0.7978845608028654, dtype=self.dtype), inner))
        else:
            inner = op.Erf(op.Div(self, ir.tensor(1.4142135623730951, dtype=self.dtype)))
        inner = op.Add(inner, ir.tensor(1, dtype=self.dtype))
        return op.Mul(self, op.Mul(ir.tensor(0.5, dtype=self.dtype), inner))
    '''
)


class Model(torch.nn.Module):
    def __init__(self, bias: bool, approximate: str = "none"):
        super().__init__()
        self.first = torch.nn.Linear(4, 8, bias=bias)
        self.second = torch.nn.Linear(8, 3)
        self.approximate = approximate

    def forward(self, x):
        return self.second(torch.nn.functional.gelu(self.first(x), approximate=self.approximate))


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("trace") / "traced.onnxs"
    path.write_text(SOURCE, encoding="utf-8")
    return path


def export(model, inputs, table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.onnx.export(model, inputs, dynamo=True, custom_translation_table=table)


def assert_matches_torch(model, inputs, program):
    expected = model(*inputs)
    (actual,) = program(*inputs)
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


def assert_recorded_from(program, path: Path, op_types: set):
    """The exported graph holds the translation's nodes, inlined, with their `.onnxs` lines."""
    model = program.model_proto
    assert not model.functions, [f.name for f in model.functions]
    located = {
        n.op_type for n in model.graph.node for e in n.metadata_props if e.key == "onnxsc.source" and path.name in e.value
    }
    assert op_types <= located, (op_types, located)


@pytest.mark.parametrize(
    "bias, approximate, x_shape",
    [(True, "none", (2, 4)), (False, "none", (2, 4)), (True, "tanh", (3, 5, 4)), (False, "tanh", (5, 4))],
)
def test_the_table_exports_each_call_specialised(source, bias, approximate, x_shape):
    torch.manual_seed(0)
    model = Model(bias, approximate)
    inputs = (torch.randn(*x_shape),)
    program = export(model, inputs, onnxsc.translation_table(source))
    assert_matches_torch(model, inputs, program)
    expected_ops = {"Erf"} if approximate == "none" else {"Tanh", "Pow"}
    expected_ops |= {"Gemm"} if len(x_shape) == 2 else {"MatMul"}
    assert_recorded_from(program, source, expected_ops)
    onnx.checker.check_model(program.model_proto, full_check=True)


def test_a_failing_assert_stops_the_export_naming_the_line(source):
    model = Model(True, approximate="none")
    model.approximate = "exact"
    with pytest.raises(Exception) as caught:
        # PyTorch itself refuses the approximation: the call never reaches the translation.
        export(model, (torch.randn(2, 4),), onnxsc.translation_table(source))
    assert "approximate" in str(caught.value)

    table = onnxsc.translation_table(source)
    gelu = next(t for op, t in table.items() if "gelu" in str(op))
    with pytest.raises(onnxsc.OnnxscError) as failed:
        program_recorder_call(gelu, approximate="exact")
    assert "traced.onnxs:" in str(failed.value) and "unknown approximation exact" in str(failed.value)


def program_recorder_call(translation, **kwargs):
    """Calls a translation as the exporter does, with one FLOAT tensor of shape [2, 3]."""
    import onnx_ir as ir
    from onnxscript import evaluator
    from torch.onnx._internal.exporter import _building, _tensors
    import onnxscript

    opset = onnxscript.values.Opset("", 18)
    recorder = _building.OpRecorder(opset, {})
    x = _tensors.SymbolicTensor(opset, name="x", shape=ir.Shape([2, 3]), type=ir.TensorType(ir.DataType.FLOAT))
    with evaluator.default_as(recorder):
        return translation(x, **kwargs), recorder


def test_a_library_exports_as_its_sources_do(source, onnxsc_bin, tmp_path):
    library = tmp_path / "traced.onnx"
    harness.Onnxsc(onnxsc_bin).build([source], library).require_model()
    meta = {e.key for e in onnx.load(library).metadata_props}
    assert "onnxsc.trace" in meta, meta
    torch.manual_seed(1)
    model = Model(True, "tanh")
    inputs = (torch.randn(3, 4),)
    program = export(model, inputs, onnxsc.load_library(library))
    assert_matches_torch(model, inputs, program)
    assert_recorded_from(program, source, {"Tanh", "Gemm"})


def test_link_specialises_a_models_call_from_its_declared_types(source, onnxsc_bin, tmp_path):
    compiler = harness.Onnxsc(onnxsc_bin)
    library = tmp_path / "traced.onnx"
    compiler.build([source], library).require_model()
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.DOUBLE, [2, 3])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, [2, 3])
    call = onnx.helper.make_node(
        "aten_gelu", ["x"], ["y"], domain="pkg.onnxscript.torch_lib", approximate="tanh"
    )
    graph = onnx.helper.make_graph([call], "calls_gelu", [x], [y])
    model = onnx.helper.make_model(
        graph,
        opset_imports=[onnx.helper.make_opsetid("", 18), onnx.helper.make_opsetid("pkg.onnxscript.torch_lib", 1)],
    )
    model_path = tmp_path / "model.onnx"
    onnx.save(model, model_path)
    linked_path = tmp_path / "linked.onnx"
    done = compiler.run("link", str(model_path), str(library), "-o", str(linked_path), "--mode", "inline")
    assert done.returncode == 0, done.stdout + done.stderr
    linked = onnx.load(linked_path)
    onnx.checker.check_model(linked, full_check=True)
    assert "Tanh" in {n.op_type for n in linked.graph.node}
    data = np.linspace(-3, 3, 6).reshape(2, 3)
    (out,) = ort.InferenceSession(linked_path.as_posix()).run(None, {"x": data})
    expected = torch.nn.functional.gelu(torch.from_numpy(data), approximate="tanh").numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


MISTAKES = textwrap.dedent(
    '''
    from typing import Optional

    from onnxscript import opset18 as op
    from onnxscript.function_libs.torch_lib.registration import torch_op
    from onnxscript.function_libs.torch_lib.tensor_typing import TFloat, TTensor


    @torch_op("aten::linear", trace_only=True)
    def aten_linear(input: TFloat, weight: TFloat, bias: TFloat = None) -> TFloat:
        return op.Gemm(input, weight, bias, transB=True)


    @torch_op("aten::mean.dim", trace_only=True)
    def aten_mean_dim(self: TFloat, dim: list[int], keepdim: bool = False, dtype: Optional[int] = None) -> TFloat:
        del dtype  # the calls here pass none
        return op.ReduceMean(op.Cast(self, to=1), dim, keepdims=keepdim)


    @torch_op("aten::cat", trace_only=True)
    def aten_cat(tensors: TTensor, dim: int = 0) -> TTensor:
        return op.Concat(*tensors, axis=0)
    '''
)


class Mean(torch.nn.Module):
    def forward(self, x):
        return x.mean(dim=1)


class Cat(torch.nn.Module):
    def forward(self, x, y):
        return torch.cat([x, y], dim=1)


@pytest.mark.parametrize(
    "model, inputs, message",
    [
        # Gemm for linear on a 3-D input: the operator's own rule, at the op call's line.
        (torch.nn.Linear(4, 3), (torch.randn(2, 5, 4),), "E0907]: `Gemm` needs a rank-2 `A`; this call gives float32[2, 5, 4]"),
        # A float16 mean computed and returned as float32: PyTorch's answer is float16.
        (Mean(), (torch.randn(2, 3, dtype=torch.float16),), "E0908]: `aten_mean_dim` returns float32[2] for this call, where PyTorch's `aten::mean.dim` gives float16[2]"),
        # cat that ignores `dim`: a shape PyTorch contradicts, where ONNX Runtime would run.
        (Cat(), (torch.randn(2, 2), torch.randn(2, 2)), "E0908]: `aten_cat` returns float32[4, 2] for this call, where PyTorch's `aten::cat` gives float32[2, 4]"),
    ],
    ids=["gemm-rank-3", "mean-float32", "cat-ignores-dim"],
)
def test_shape_and_dtype_mistakes_stop_the_export_at_the_onnxs_line(tmp_path, model, inputs, message):
    source = tmp_path / "mistakes.onnxs"
    source.write_text(MISTAKES, encoding="utf-8")
    with pytest.raises(Exception) as failed:
        export(model, inputs, onnxsc.translation_table(source))
    # The exporter wraps the translation's OnnxscError in its own errors.
    chain, e = [], failed.value
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ or e.__context__
    (ours,) = [e for e in chain if isinstance(e, onnxsc.OnnxscError)]
    text = str(ours)
    assert message in text, text
    assert "mistakes.onnxs:" in text, text
