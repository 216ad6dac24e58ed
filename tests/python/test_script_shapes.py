"""Scripted translations (without ``trace_only=True``) checked per exporter call, as trace-only
ones are (docs/shapes.md): the body linked for a call is walked with what the exporter knows of
its inputs, and an operator's rule the call breaks (E0907), an element type its schema refuses
(E0601) or a result PyTorch contradicts (E0908) stops the export at the ``.onnxs`` line, where
before it reached ONNX Runtime by node name, or nothing at all. Right translations export as
before and match PyTorch."""

from __future__ import annotations

import textwrap
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/test")

import onnxsc  # noqa: E402

pytestmark = pytest.mark.usefixtures("quiet_exporter")

MISTAKES = textwrap.dedent(
    '''
    from typing import Optional, Sequence

    from onnxscript import FLOAT, opset18 as op
    from onnxscript.function_libs.torch_lib.registration import torch_op
    from onnxscript.function_libs.torch_lib.tensor_typing import TFloat


    @torch_op("aten::linear")
    def aten_linear(input: TFloat, weight: TFloat, bias: Optional[TFloat] = None) -> TFloat:
        return op.Gemm(input, weight, bias, transB=1)


    @torch_op("aten::mean.dim")
    def aten_mean_dim(self: TFloat, dim: Optional[Sequence[int]], keepdim: bool = False, dtype: int = -1) -> TFloat:
        del dtype  # the calls here pass none
        return op.ReduceMean(op.Cast(self, to=FLOAT.dtype), op.Constant(value_ints=dim), keepdims=keepdim)


    @torch_op("aten::mm")
    def aten_mm(self: TFloat, mat2: TFloat) -> TFloat:
        return op.MatMul(self, op.Transpose(mat2, perm=[1, 0]))


    @torch_op("aten::add.Tensor")
    def aten_add(self: TFloat, other: TFloat, alpha: float = 1.0) -> TFloat:
        del alpha  # the calls here pass none
        return op.Add(self, op.Mul(other, op.Constant(value=[1.0])))


    @torch_op("aten::cat")
    def aten_cat(tensors: Sequence[TFloat], dim: int = 0) -> TFloat:
        return op.ConcatFromSequence(tensors, axis=0)


    @torch_op("aten::squeeze.dim")
    def aten_squeeze_dim(self: TFloat, dim: int) -> TFloat:
        del dim  # the mistake: every call squeezes the first axis
        if op.Size(op.Shape(self)) == 0:
            result = op.Identity(self)
        else:
            result = op.Squeeze(self, op.Constant(value_ints=[0]))
        return result


    @torch_op("aten::split.Tensor")
    def aten_split(self: TFloat, split_size: int, dim: int = 0) -> Sequence[TFloat]:
        del dim  # the mistake: every call splits the first axis
        return op.SplitToSequence(self, op.Constant(value_int=split_size), axis=0)
    '''
)


class Mean(torch.nn.Module):
    def forward(self, x):
        return x.mean(dim=1)


class Mm(torch.nn.Module):
    def forward(self, x, y):
        return torch.mm(x, y)


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class Cat(torch.nn.Module):
    def forward(self, x, y):
        return torch.cat([x, y], dim=1)


class Squeeze(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x.squeeze(self.dim)


class Split(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.split(x, 2, dim=self.dim)


class Cat0(torch.nn.Module):
    def forward(self, x, y):
        return torch.cat([x, y], dim=0)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    source = tmp_path_factory.mktemp("script-shapes") / "mistakes.onnxs"
    source.write_text(MISTAKES, encoding="utf-8")
    return onnxsc.translation_table(source)


def export(model, inputs, table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.onnx.export(model, inputs, dynamo=True, custom_translation_table=table)


def onnxsc_error(failed) -> str:
    """The OnnxscError the exporter's own errors wrap."""
    chain, e = [], failed.value
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ or e.__context__
    (ours,) = [e for e in chain if isinstance(e, onnxsc.OnnxscError)]
    return str(ours)


@pytest.mark.parametrize(
    "model, inputs, message, line",
    [
        # Gemm for linear on a 3-D input: the operator's own rule, at the op call's line.
        (torch.nn.Linear(4, 3), (torch.randn(2, 5, 4),), "E0907]: `Gemm` needs a rank-2 `A`; this call gives float32[2, 5, 4] (`input`)", 11),
        # A float16 mean computed and returned as float32: PyTorch's answer is float16.
        (Mean(), (torch.randn(2, 3, dtype=torch.float16),), "E0908]: `aten_mean_dim` returns float32[2] for this call, where PyTorch's `aten::mean.dim` gives float16[2]", 15),
        # A weight transposed twice: the inner dimensions of a non-square product disagree.
        (Mm(), (torch.randn(2, 3), torch.randn(3, 5)), "E0907]: `MatMul`", 22),
        # A float32 constant meeting a float16 input.
        (Add(), (torch.randn(2, dtype=torch.float16), torch.randn(2, dtype=torch.float16)), "E0601]", 28),
        # cat that ignores `dim` (W0512 at check): a shape PyTorch contradicts, where ONNX Runtime would run.
        (Cat(), (torch.randn(2, 2), torch.randn(2, 2)), "E0908]: `aten_cat` returns float32[4, 2] for this call, where PyTorch's `aten::cat` gives float32[2, 4]", 32),
        # A hardcoded squeeze axis, in the `else` branch that a 2-D input takes.
        (Squeeze(1), (torch.randn(3, 1),), "E0907]: `Squeeze` removes axis 0 of float32[3, 1] (`self`), whose size is 3, not 1", 42),
        # A split that ignores `dim`: PyTorch's list of tensors, compared item by item.
        (Split(1), (torch.randn(4, 6),), "E0908]: `aten_split` returns a sequence of 2 tensors for this call, where PyTorch's `aten::split.Tensor` gives 3", 47),
    ],
    ids=["gemm-rank-3", "mean-float32", "mm-transposed", "float32-constant", "cat-ignores-dim", "squeeze-in-a-branch", "split-ignores-dim"],
)
def test_scripted_mistakes_stop_the_export_at_the_onnxs_line(table, model, inputs, message, line):
    with pytest.raises(Exception) as failed:
        export(model, inputs, table)
    text = onnxsc_error(failed)
    assert message in text, text
    assert f"mistakes.onnxs:{line}:" in text, text


@pytest.mark.parametrize(
    "model, inputs",
    [
        (torch.nn.Linear(4, 3), (torch.randn(2, 4),)),
        (Mean(), (torch.randn(2, 3),)),
        (Mm(), (torch.randn(3, 3), torch.randn(3, 3))),
        (Add(), (torch.randn(2), torch.randn(2))),
        (Cat0(), (torch.randn(2, 2), torch.randn(3, 2))),
        (Squeeze(0), (torch.randn(1, 3),)),
        (Split(0), (torch.randn(4, 6),)),
    ],
    ids=["gemm-rank-2", "mean-float32", "mm-square", "add-float32", "cat-dim-0", "squeeze-first-axis", "split-first-axis"],
)
def test_calls_the_mistakes_do_not_reach_export_as_before(table, model, inputs):
    """Where a call does not reach a mistake (a square matrix transposed still multiplies), the
    export goes on: only what this call contradicts is an error."""
    program = export(model, inputs, table)
    assert program is not None
