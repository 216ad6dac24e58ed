"""Overrides people really write, exported with torch 2.15 and compared with PyTorch.

The translations are our own text (``tests/python/overrides/*.onnxs``), written as torchlib
writes them: parameters in the aten schema's order and optionality, ``Optional[...]`` for
``Tensor?``, optional attributes for ``Scalar?`` and ``int[]?``, ``is None`` tests and a
condition on a string attribute. Each operator is exported for every None/present
combination of its optional arguments, run in ONNX Runtime (``onnx_program(...)``) and
compared with PyTorch by ``torch.testing.assert_close``; the exported graph must come from
our translation (every node of it carries its ``.onnxs`` location) and hold no ``If``: each
call is specialised. Whole models (an MLP, a small CNN with BatchNorm, a
``TransformerEncoderLayer``) use several overrides at once, with dynamic batch and sequence
dimensions, and are run at other sizes than exported.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/test")
import onnxsc  # noqa: E402

import harness  # noqa: E402

OVERRIDES = Path(__file__).parent / "overrides"


pytestmark = pytest.mark.usefixtures("quiet_exporter")


def _register_custom_op():
    """`onnxsc_test::scaled_and_sum`, as custom.onnxs declares it."""

    def scaled_and_sum(x: torch.Tensor, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
        return x * scale, x.sum(-1)

    def fake(x, scale=1.0):
        return torch.empty_like(x), x.new_empty(x.shape[:-1])

    return harness.custom_op("onnxsc_test::scaled_and_sum", scaled_and_sum, fake)


@pytest.fixture(scope="module")
def table():
    _register_custom_op()
    with warnings.catch_warnings():
        warnings.simplefilter("error", onnxsc.OnnxscWarning)
        return onnxsc.translation_table(OVERRIDES)


@pytest.fixture(scope="module")
def definitions(tmp_path_factory):
    """(file name, line of the def, function name) of each translation, sorted."""
    import subprocess

    import onnx

    library = tmp_path_factory.mktemp("overrides") / "library.onnx"
    subprocess.run([onnxsc.find_onnxsc_bin(), "build", str(OVERRIDES), "-o", str(library)], check=True, capture_output=True)
    out = []
    for f in onnx.load(str(library)).functions:
        for e in f.metadata_props:
            if e.key == "onnxsc.source":
                file, line, _ = e.value.rsplit(":", 2)
                out.append((Path(file).name, int(line), f.name))
    return sorted(out)


def translations_used(program, definitions) -> set:
    """The translations whose nodes are in the exported graph, by their `onnxsc.source`."""
    used = set()
    for node in program.model_proto.graph.node:
        for e in node.metadata_props:
            if e.key == "onnxsc.source":
                file, line, _ = e.value.rsplit(":", 2)
                defs = [d for d in definitions if d[0] == Path(file).name and d[1] <= int(line)]
                used.add(defs[-1][2])
    return used


def fx_targets(program) -> set:
    """The operators of the exported FX graph: those the translations were called for."""
    return {str(n.target) for n in program.exported_program.graph.nodes if n.op == "call_function"}


def export(model, inputs, table, dynamic_shapes=None):
    # Unoptimised: the graph is what the translations made (the optimizer rewrites nodes).
    return torch.onnx.export(
        model.eval(),
        inputs,
        dynamo=True,
        custom_translation_table=table,
        dynamic_shapes=dynamic_shapes,
        optimize=False,
        verbose=False,
    )


def check(
    model, inputs, table, definitions, translations, *, runs=(), dynamic_shapes=None, optimize=False, atol=None, rtol=None
):
    """Exports ``model`` with ``inputs``, then compares ONNX Runtime with PyTorch on them and on
    each of ``runs`` (other inputs, e.g. other dynamic sizes); with ``optimize``, again after
    ``onnx_program.optimize()``. The graph must come from ``translations`` (among others) and
    hold no `If`: every condition was decided per call."""
    program = export(model, inputs, table, dynamic_shapes)
    ops = [n.op_type for n in program.model_proto.graph.node]
    assert "If" not in ops, ops
    used = translations_used(program, definitions)
    assert set(translations) <= used, (translations, used)
    tolerance = {} if atol is None else {"atol": atol, "rtol": rtol}
    for optimized in (False, True) if optimize else (False,):
        if optimized:
            program.optimize()
        for args in (inputs, *runs):
            expected = model(*args)
            actual = program(*args)
            if isinstance(expected, torch.Tensor):
                expected = (expected,)
            assert len(actual) == len(expected)
            for a, e in zip(actual, expected):
                torch.testing.assert_close(a, e, **tolerance)
    return program


class Call(torch.nn.Module):
    """Calls ``fn(*inputs, *constant_args, **kwargs)``; parameters are module buffers."""

    def __init__(self, fn, *args, **kwargs):
        super().__init__()
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def forward(self, *inputs):
        return self.fn(*inputs, *self.args, **self.kwargs)


torch.manual_seed(0)


# ---------------------------------------------------------------------------------------------
# Operators, every None/present combination of their optional arguments


@pytest.mark.parametrize("weight", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_native_layer_norm(table, definitions, weight, bias):
    class M(torch.nn.Module):
        def forward(self, x, w, b):
            return torch.ops.aten.native_layer_norm(x, [5], w if weight else None, b if bias else None, 1e-5)

    x, w, b = torch.randn(2, 3, 5), torch.randn(5), torch.randn(5)
    check(M(), (x, w, b), table, definitions, ["native_layer_norm"])


@pytest.mark.parametrize("weight", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_layer_norm(table, definitions, weight, bias):
    class M(torch.nn.Module):
        def forward(self, x, w, b):
            return torch.nn.functional.layer_norm(x, (3, 5), w if weight else None, b if bias else None, eps=1e-4)

    x, w, b = torch.randn(2, 3, 5), torch.randn(3, 5), torch.randn(3, 5)
    # `layer_norm` calls `native_layer_norm`, whose nodes the graph holds.
    program = check(M(), (x, w, b), table, definitions, ["native_layer_norm"])
    assert "aten.layer_norm.default" in fx_targets(program)


@pytest.mark.parametrize("weight", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_batch_norm_no_training(table, definitions, weight, bias):
    class M(torch.nn.Module):
        def forward(self, x, w, b, mean, var):
            return torch.ops.aten._native_batch_norm_legit_no_training(
                x, w if weight else None, b if bias else None, mean, var, 0.1, 1e-5
            )

    x, w, b = torch.randn(2, 3, 4, 4), torch.randn(3), torch.randn(3)
    mean, var = torch.randn(3), torch.rand(3) + 0.5
    check(M(), (x, w, b, mean, var), table, definitions, ["batch_norm_no_training"])


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(
    "transposed, stride, padding, dilation, output_padding, groups",
    [(False, [1, 1], [1, 1], [1, 1], [0, 0], 1), (False, [2, 1], [0, 2], [1, 2], [0, 0], 2), (True, [2, 2], [1, 0], [1, 1], [1, 0], 1)],
)
def test_convolution(table, definitions, bias, transposed, stride, padding, dilation, output_padding, groups):
    class M(torch.nn.Module):
        def forward(self, x, w, b):
            return torch.ops.aten.convolution(
                x, w, b if bias else None, stride, padding, dilation, transposed, output_padding, groups
            )

    x = torch.randn(2, 4, 7, 6)
    w = torch.randn(4, 3, 3, 2) if transposed else torch.randn(6, 4 // groups, 3, 3)
    b = torch.randn(w.shape[1] if transposed else w.shape[0])
    check(M(), (x, w, b), table, definitions, ["convolution"], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(
    "mask, is_causal, scale", [(False, False, None), (True, False, None), (False, True, None), (False, False, 0.3), (True, False, 0.3), (False, True, 0.3)]
)
def test_scaled_dot_product_attention(table, definitions, mask, is_causal, scale):
    class M(torch.nn.Module):
        def forward(self, q, k, v, m):
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=m if mask else None, is_causal=is_causal, scale=scale
            )

    q, k, v = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 4, 8), torch.randn(2, 3, 4, 8)
    m = torch.randn(4, 4)
    check(M(), (q, k, v, m), table, definitions, ["scaled_dot_product_attention"], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("kwargs", [{}, {"beta": 0.5}, {"alpha": 2}, {"beta": 0.25, "alpha": -1.5}])
def test_addmm(table, definitions, kwargs):
    class M(torch.nn.Module):
        def forward(self, c, a, b):
            return torch.addmm(c, a, b, **kwargs)

    check(M(), (torch.randn(3, 5), torch.randn(3, 4), torch.randn(4, 5)), table, definitions, ["addmm"])


@pytest.mark.parametrize("bounds", [{"min": -0.5}, {"max": 0.25}, {"min": -0.5, "max": 0.25}])
def test_clamp(table, definitions, bounds):
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.clamp(x, **bounds)

    check(M(), (torch.randn(4, 6),), table, definitions, ["clamp"])


@pytest.mark.parametrize("keepdim", [False, True])
def test_max_dim(table, definitions, keepdim):
    class M(torch.nn.Module):
        def forward(self, x):
            values, indices = torch.max(x, dim=1, keepdim=keepdim)
            return values, indices

    check(M(), (torch.randn(3, 5, 2),), table, definitions, ["max_dim"])


@pytest.mark.parametrize("dim", [None, [1], [0, 2]])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [None, torch.float64])
def test_sum_dim_int_list(table, definitions, dim, keepdim, dtype):
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten.sum.dim_IntList(x, dim, keepdim, dtype=dtype)

    check(M(), (torch.randn(2, 3, 4),), table, definitions, ["sum_dim"])


@pytest.mark.parametrize("dims", [[1, 0, 2], [2, 0, 1]])
def test_permute(table, definitions, dims):
    check(Call(torch.permute, dims), (torch.randn(2, 3, 4),), table, definitions, ["permute"])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_honours_approximate(table, definitions, approximate):
    check(
        Call(torch.nn.functional.gelu, approximate=approximate), (torch.randn(5, 7),), table, definitions, ["gelu"]
    )


@pytest.mark.parametrize("scale", [None, 2.5])
def test_custom_op_with_two_outputs(table, definitions, scale):
    op = torch.ops.onnxsc_test.scaled_and_sum.default
    kwargs = {} if scale is None else {"scale": scale}
    check(Call(op, **kwargs), (torch.randn(3, 4),), table, definitions, ["scaled_and_sum"])


@pytest.mark.parametrize("resize", [{"scale_factor": 2.0}, {"scale_factor": (2.0, 3.0)}, {"size": (5, 7)}])
def test_upsample_nearest_with_list_attributes_as_resize_inputs(table, definitions, resize):
    """`float[]? scale_factors` and `SymInt[]? output_size` arrive as list attributes, which
    the translation passes as `Resize`'s `scales` and `sizes` inputs."""
    interpolate = Call(torch.nn.functional.interpolate, mode="nearest", **resize)
    program = check(interpolate, (torch.randn(2, 3, 4, 5),), table, definitions, ["upsample_nearest2d_vec"])
    assert "aten.upsample_nearest2d.vec" in fx_targets(program)


def test_view_with_a_dynamic_size(table, definitions):
    """`SymInt[] size` taken as an INT64 input: the dynamic batch arrives as a graph value."""
    class Flatten(torch.nn.Module):
        def forward(self, x):
            return x.view(x.shape[0], -1)

    batch = torch.export.Dim("batch")
    check(
        Flatten(),
        (torch.randn(3, 2, 4),),
        table,
        definitions,
        ["view"],
        runs=[(torch.randn(6, 2, 4),)],
        dynamic_shapes=({0: batch},),
    )


def test_cat_takes_a_sequence(table, definitions):
    check(Call(lambda a, b: torch.cat([a, b, a], 1)), (torch.randn(2, 3), torch.randn(2, 1)), table, definitions, ["cat"])


@pytest.mark.parametrize("dtype", [None, torch.float64])
def test_softmax_with_optional_dtype(table, definitions, dtype):
    check(Call(torch.softmax, -1, dtype=dtype), (torch.randn(2, 5),), table, definitions, ["softmax"])


# ---------------------------------------------------------------------------------------------
# Whole models, several overrides at once, dynamic dimensions


def test_mlp(table, definitions):
    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up = torch.nn.Linear(8, 16)
            self.norm = torch.nn.LayerNorm(16)
            self.down = torch.nn.Linear(16, 4, bias=False)

        def forward(self, x):
            x = torch.nn.functional.gelu(self.norm(self.up(x)), approximate="tanh")
            return self.down(torch.clamp(x, min=-0.1))

    model = MLP()
    batch = torch.export.Dim("batch")
    check(
        model,
        (torch.randn(3, 8),),
        table,
        definitions,
        ["linear", "native_layer_norm", "gelu", "clamp"],
        runs=[(torch.randn(7, 8),), (torch.randn(1, 8),)],
        dynamic_shapes=({0: batch},),
        optimize=True,
        atol=1e-5,
        rtol=1e-4,
    )


def test_cnn_with_batch_norm(table, definitions):
    class CNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(8)
            self.down = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, bias=False)
            self.bn2 = torch.nn.BatchNorm2d(8, affine=False)
            self.fc = torch.nn.Linear(8 * 4 * 4, 5)

        def forward(self, x):
            x = torch.relu(self.bn(self.conv(x)))
            x = torch.relu(self.bn2(self.down(x)))
            return self.fc(torch.flatten(x, 1))

    model = CNN()
    with torch.no_grad():  # running statistics other than 0 and 1
        for bn in (model.bn, model.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
    batch = torch.export.Dim("batch")
    check(
        model,
        (torch.randn(2, 3, 8, 8),),
        table,
        definitions,
        ["conv2d", "batch_norm_no_training", "relu", "linear"],
        runs=[(torch.randn(5, 3, 8, 8),)],
        dynamic_shapes=({0: batch},),
        optimize=True,
        atol=1e-4,
        rtol=1e-4,
    )


def test_transformer_encoder_layer(table, definitions):
    model = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq")
    check(
        model,
        (torch.randn(2, 5, 16),),
        table,
        definitions,
        ["native_layer_norm", "linear", "scaled_dot_product_attention", "relu"],
        runs=[(torch.randn(3, 7, 16),), (torch.randn(1, 2, 16),)],
        dynamic_shapes=({0: batch, 1: seq},),
        optimize=True,
        atol=1e-4,
        rtol=1e-4,
    )
