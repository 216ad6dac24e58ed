"""The Python package with torch.onnx.export: the seed tutorial's three scenarios, end to end.

The ``onnxsc`` package under test is the one ``pip install .`` put into the test environment
(``scripts/test`` does that), with its own binary. Each exported model runs in ONNX Runtime
through ``onnx_program(*inputs)`` and is compared with PyTorch by ``torch.testing.assert_close``.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/test")
import onnxsc  # noqa: E402  (after torch, which the table's keys need)

import harness  # noqa: E402

TUTORIAL = harness.REPO_ROOT / "examples" / "tutorial.onnxs"


pytestmark = pytest.mark.usefixtures("quiet_exporter")


@pytest.fixture(scope="module")
def add_and_round_op():
    """Scenario 3's custom operator, registered as the tutorial does."""

    def add_and_round_op(input: torch.Tensor) -> torch.Tensor:
        return torch.round(input + input)

    return harness.custom_op("mylibrary::add_and_round_op", add_and_round_op, lambda tensor_x: torch.empty_like(tensor_x))


@pytest.fixture(scope="module")
def table(add_and_round_op):
    return onnxsc.translation_table(TUTORIAL)


def export(model, inputs, table):
    program = torch.onnx.export(model.eval(), inputs, dynamo=True, custom_translation_table=table, verbose=False)
    program.optimize()
    return program


def nodes(program):
    return [(n.domain, n.op_type, list(n.input)) for n in program.model_proto.graph.node]


def test_table_keys_are_the_bound_overloads(table, add_and_round_op):
    assert set(table) == {torch.ops.aten.add.Tensor, torch.ops.aten.gelu.default, add_and_round_op}
    assert all(isinstance(k, torch._ops.OpOverload) for k in table)


class AddModel(torch.nn.Module):
    def forward(self, input_x, input_y):
        return torch.ops.aten.add.Tensor(input_x, input_y)


def test_scenario_1_add_override_is_one_swapped_add(table):
    x, y = torch.tensor([1.0]), torch.tensor([2.0])
    program = export(AddModel(), (x, y), table)
    assert nodes(program) == [("", "Add", ["input_y", "input_x"])]
    torch.testing.assert_close(program(x, y)[0], torch.tensor([3.0]))


class AddAlphaModel(torch.nn.Module):
    def forward(self, input_x, input_y):
        return torch.add(input_x, input_y, alpha=2.5)


def test_scenario_1_add_with_alpha_takes_the_other_branch(table):
    x, y = torch.tensor([1.0, -2.0]), torch.tensor([2.0, 4.0])
    program = export(AddAlphaModel(), (x, y), table)
    assert "Mul" in [n[1] for n in nodes(program)], nodes(program)
    torch.testing.assert_close(program(x, y)[0], x + 2.5 * y)


class GeluModel(torch.nn.Module):
    def forward(self, input_x):
        return torch.ops.aten.gelu(input_x)


def test_scenario_2_gelu_maps_to_com_microsoft(table):
    x = torch.randn(4, 3)
    program = export(GeluModel(), (x,), table)
    assert nodes(program) == [("com.microsoft", "Gelu", ["input_x"])]
    imports = {o.domain: o.version for o in program.model_proto.opset_import}
    assert imports.get("com.microsoft") == 1, imports
    torch.testing.assert_close(program(x)[0], torch.ops.aten.gelu(x))


class TanhGeluModel(torch.nn.Module):
    def forward(self, input_x):
        return torch.nn.functional.gelu(input_x, approximate="tanh")


KERNEL_GELU = """\
    import onnxscript
    from onnxscript import FLOAT
    from onnxscript.function_libs.torch_lib.registration import torch_op

    microsoft_op = onnxscript.values.Opset(domain="com.microsoft", version=1)


    @torch_op("aten::gelu")  # noqa: W0510 (replaces the exporter's ONNX Gelu on purpose)
    def kernel_gelu(self: FLOAT, approximate: str = "none") -> FLOAT:  # noqa: W0512 (warned per call)
        return microsoft_op.Gelu(self)
    """


@pytest.fixture(scope="module")
def kernel_gelu_source(tmp_path_factory):
    return write(tmp_path_factory.mktemp("kernel"), "kernel_gelu.onnxs", KERNEL_GELU)


def test_an_argument_the_translation_never_reads_is_reported_when_a_call_sets_it(kernel_gelu_source):
    """The original tutorial's scenario 2 maps gelu to the erf kernel and ignores
    `approximate`: a call with approximate="tanh" exports the erf gelu. That is a warning at
    export, naming the argument; the default is silent."""
    table = onnxsc.translation_table(kernel_gelu_source)
    x = torch.randn(4, 3)
    with pytest.warns(onnxsc.OnnxscWarning, match=r"approximate='tanh'.*never reads `approximate`") as caught:
        export(TanhGeluModel(), (x,), table)
    assert any("kernel_gelu.onnxs" in str(w.message) for w in caught), [str(w.message) for w in caught]
    with warnings.catch_warnings():
        warnings.simplefilter("error", onnxsc.OnnxscWarning)
        export(GeluModel(), (x,), table)


def test_an_export_time_warning_points_at_the_onnxs_line_and_honours_deny_warnings(kernel_gelu_source):
    """The warning is attributed to the translation's `.onnxs` file and `def` line, not to the
    package's own code; with deny_warnings=True the same call is an error."""
    table = onnxsc.translation_table(kernel_gelu_source)
    x = torch.randn(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        export(TanhGeluModel(), (x,), table)
    ours = [w for w in caught if issubclass(w.category, onnxsc.OnnxscWarning)]
    assert ours, [str(w.message) for w in caught]
    assert {(Path(w.filename).name, w.lineno) for w in ours} == {("kernel_gelu.onnxs", 9)}
    strict = onnxsc.translation_table(kernel_gelu_source, deny_warnings=True)
    with pytest.raises(Exception, match=r"never reads `approximate`[\s\S]*deny_warnings=True"):
        export(TanhGeluModel(), (x,), strict)


def test_scenario_2_leaves_approximate_unread_on_purpose(table):
    """The tutorial's gelu deletes `approximate`: a tanh-gelu model exports the erf kernel,
    silently, as the source says."""
    x = torch.randn(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", onnxsc.OnnxscWarning)
        program = export(TanhGeluModel(), (x,), table)
    assert [n[1] for n in nodes(program)] == ["Gelu"]
    torch.testing.assert_close(program(x)[0], torch.ops.aten.gelu(x))


UNREAD_ON_PURPOSE = """\
    from onnxscript import FLOAT
    from onnxscript import opset18 as op
    from onnxscript.function_libs.torch_lib.registration import torch_op


    @torch_op("aten::layer_norm")
    def layer_norm(
        input: FLOAT,
        normalized_shape: list[int],
        weight: FLOAT = None,
        bias: FLOAT = None,
        eps: float = 1e-05,
        cudnn_enable: bool = True,
    ) -> FLOAT:
        del normalized_shape  # the models here normalize their last dimension
        if weight is None:
            weight = op.Expand(op.CastLike(1.0, input), op.Shape(input, start=-1))
        return op.LayerNormalization(input, weight, bias, axis=-1, epsilon=eps)


    @torch_op("aten::gelu")  # noqa: W0510
    def gelu(self: FLOAT, approximate: str = "none") -> FLOAT:
        del approximate
        return op.Mul(op.Mul(self, 0.5), op.Add(op.Erf(op.Div(self, 1.4142135623730951)), 1.0))
    """


class NormAndTanhGelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(3)

    def forward(self, x):
        return torch.nn.functional.gelu(self.norm(x), approximate="tanh")


def test_backend_hints_and_deleted_parameters_never_warn(tmp_path):
    """torch.export passes cudnn_enable=False to every layer_norm: a backend hint, which cannot
    change the values, so a translation that leaves it unread is silent even in strict mode. A
    parameter the source deletes with `del` is left unread on purpose: silent too."""
    src = write(tmp_path, "unread.onnxs", UNREAD_ON_PURPOSE)
    table = onnxsc.translation_table(src, deny_warnings=True)
    x = torch.randn(2, 5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", onnxsc.OnnxscWarning)
        program = export(NormAndTanhGelu(), (x,), table)
    want = NormAndTanhGelu()(x)
    torch.testing.assert_close(program(x)[0], want, rtol=1e-3, atol=2e-3)


class CustomOpModel(torch.nn.Module):
    def forward(self, input):
        return torch.ops.mylibrary.add_and_round_op.default(input)


def test_scenario_3_custom_op_is_add_then_round(table, add_and_round_op):
    x = torch.tensor([0.2, 1.4, -2.6])
    program = export(CustomOpModel(), (x,), table)
    assert [n[1] for n in nodes(program)] == ["Add", "Round"]
    torch.testing.assert_close(program(x)[0], add_and_round_op(x))


def test_library_built_by_the_cli_gives_the_same_table(tmp_path, add_and_round_op):
    library = tmp_path / "tutorial.onnx"
    subprocess.run([onnxsc.find_onnxsc_bin(), "build", str(TUTORIAL), "-o", str(library)], check=True, capture_output=True)
    loaded = onnxsc.load_library(library)
    assert set(loaded) == {torch.ops.aten.add.Tensor, torch.ops.aten.gelu.default, add_and_round_op}
    x, y = torch.tensor([1.0]), torch.tensor([2.0])
    program = export(AddModel(), (x, y), loaded)
    assert nodes(program) == [("", "Add", ["input_y", "input_x"])]


def test_signature_error_raises_before_any_export(tmp_path, monkeypatch):
    bad = tmp_path / "bad.onnxs"
    bad.write_text(
        textwrap.dedent(
            """\
            from onnxscript import opset18 as op


            @torch_op("aten::add.Tensor")
            def custom_aten_add(self, other):
                return op.Add(other, self)
            """
        ),
        encoding="utf-8",
    )
    exports = []
    monkeypatch.setattr(torch.onnx, "export", lambda *a, **k: exports.append(a))
    with pytest.raises(onnxsc.CompileError) as info:
        table = onnxsc.translation_table(bad)
        torch.onnx.export(AddModel(), (torch.ones(1), torch.ones(1)), dynamo=True, custom_translation_table=table)
    assert exports == []
    report = info.value.diagnostics
    assert "error[E0503]" in report, report
    assert f"{bad}:5:5" in report, report
    assert "alpha" in report


def test_unregistered_custom_op_is_named(tmp_path):
    src = tmp_path / "unregistered.onnxs"
    src.write_text(
        textwrap.dedent(
            """\
            from onnxscript import opset18 as op

            torch.library.define("notregistered::twice", "(Tensor x) -> Tensor")


            @torch_op("notregistered::twice")
            def twice(x):
                return op.Add(x, x)
            """
        ),
        encoding="utf-8",
    )
    with pytest.raises(onnxsc.OnnxscError, match=r"notregistered::twice is not registered with PyTorch.*custom_op"):
        onnxsc.translation_table(src)


def test_output_count_comes_from_the_aten_schema(tmp_path):
    """`aten::max.dim` returns (values, indices): the exporter must see two outputs even
    though the translation has no return annotation."""
    src = tmp_path / "max.onnxs"
    src.write_text(
        textwrap.dedent(
            """\
            from onnxscript import INT64, opset18 as op


            @torch_op("aten::max.dim")
            def max_dim(self, dim: int, keepdim: bool = False):
                axes = op.Reshape(op.Constant(value_int=dim), op.Constant(value_ints=[-1]))
                values = op.ReduceMax(self, axes, keepdims=keepdim)
                indices = op.ArgMax(self, axis=dim, keepdims=keepdim)
                return values, indices
            """
        ),
        encoding="utf-8",
    )
    table = onnxsc.translation_table(src)

    class MaxModel(torch.nn.Module):
        def forward(self, x):
            values, indices = torch.max(x, dim=1)
            return values, indices

    x = torch.randn(3, 5)
    program = export(MaxModel(), (x,), table)
    values, indices = program(x)
    expected = torch.max(x, dim=1)
    torch.testing.assert_close(values, expected.values)
    torch.testing.assert_close(indices, expected.indices)


def test_attribute_without_default_gets_its_type(tmp_path):
    """An attribute with no default has no type in the FunctionProto: the signature metadata
    must give the exporter `float`, or 0.2 would be passed as the wrong attribute type."""
    src = tmp_path / "leaky.onnxs"
    src.write_text(
        textwrap.dedent(
            """\
            from onnxscript import FLOAT, opset18 as op


            @torch_op("aten::leaky_relu")
            def leaky_relu(self: FLOAT, negative_slope: float) -> FLOAT:
                return op.LeakyRelu(self, alpha=negative_slope)
            """
        ),
        encoding="utf-8",
    )
    table = onnxsc.translation_table(src)

    class Leaky(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.leaky_relu(x, negative_slope=0.2)

    x = torch.randn(6)
    program = export(Leaky(), (x,), table)
    assert [n[1] for n in nodes(program)] == ["LeakyRelu"]
    torch.testing.assert_close(program(x)[0], torch.nn.functional.leaky_relu(x, 0.2))


def test_the_installed_binary_is_found(monkeypatch):
    monkeypatch.delenv("ONNXSC_BIN", raising=False)
    path = onnxsc.find_onnxsc_bin()
    assert Path(path).is_file()
    version = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("onnxsc "), version


def test_readme_example_exports_and_matches(tmp_path):
    """The README's "Use with torch.onnx.export" section: its first .onnxs block is the
    tutorial example file, and its Python block runs as written (in a fresh process, which
    registers the custom operator itself); the optional-argument override, saved as the
    README says, exports with the Python block after it."""
    readme = (harness.REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use with torch.onnx.export", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    assert len(blocks) == 4, "the tutorial's .onnxs file and Python, then an override with optional arguments and its Python"
    assert blocks[0] == TUTORIAL.read_text(encoding="utf-8")
    (tmp_path / "translations.onnxs").write_text(blocks[2], encoding="utf-8")
    for code, cwd in [(blocks[1], harness.REPO_ROOT), (blocks[3], tmp_path)]:
        proc = subprocess.run(
            [os.environ.get("PYTHON", __import__("sys").executable), "-c", code],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("model, expected_ops", [(AddModel(), ["Add"]), (AddAlphaModel(), ["Mul", "Add"])])
def test_attribute_condition_is_specialised_without_the_optimizer(table, model, expected_ops):
    """`if alpha != 1.0` depends on an attribute only: the exporter receives the translation
    specialised to the call's alpha (by onnxsc's linker), so even the unoptimised model has no
    `If` and only the taken branch, for the default and for another value."""
    x, y = torch.tensor([1.0, -2.0]), torch.tensor([2.0, 4.0])
    program = torch.onnx.export(model.eval(), (x, y), dynamo=True, custom_translation_table=table, verbose=False)
    ops = [n.op_type for n in program.model_proto.graph.node]
    assert "If" not in ops, ops
    assert [op for op in ops if op not in ("Constant", "CastLike")] == expected_ops, ops
    torch.testing.assert_close(program(x, y)[0], model(x, y))


NESTED_CONDITIONS = """\
    from onnxscript import FLOAT
    from onnxscript import opset18 as op


    @torch_op("aten::add.Tensor")
    def add_in_loop(self: FLOAT, other: FLOAT, alpha: float = 1.0) -> FLOAT:
        acc = op.Identity(self)
        for i in range(1):
            if alpha != 1.0:
                acc = op.Add(acc, op.Mul(other, op.CastLike(alpha, other)))
            else:
                acc = op.Add(acc, other)
        return acc


    @torch_op("aten::sub.Tensor")
    def sub_in_loop_in_if(self: FLOAT, other: FLOAT, alpha: float = 1.0) -> FLOAT:
        if alpha > 0.0:
            acc = op.Identity(self)
            for i in range(1):
                if alpha != 1.0:
                    acc = op.Sub(acc, op.Mul(other, op.CastLike(alpha, other)))
                else:
                    acc = op.Sub(acc, other)
            result = op.Identity(acc)
        else:
            result = op.Sub(self, op.Mul(other, op.CastLike(alpha, other)))
        return result
    """


def all_op_types(graph) -> list:
    """The op types of a graph's nodes and of every subgraph's, at any depth."""
    out = []
    for node in graph.node:
        out.append(node.op_type)
        for attribute in node.attribute:
            for subgraph in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                out += all_op_types(subgraph)
    return out


class NestedModel(torch.nn.Module):
    def __init__(self, op, alpha):
        super().__init__()
        self.op, self.alpha = op, alpha

    def forward(self, input_x, input_y):
        return self.op(input_x, input_y, alpha=self.alpha)


@pytest.mark.parametrize("op", [torch.add, torch.sub], ids=["If in Loop", "If in Loop in If"])
@pytest.mark.parametrize("alpha", [1.0, 2.5])
def test_attribute_conditions_nested_in_loops_are_specialised(tmp_path, op, alpha):
    """An attribute-only condition inside a `Loop` body, and one in a `Loop` inside an `If`,
    is folded like one at the top: the unoptimised model has no `If` at any depth, and
    computes what PyTorch does for the default alpha and for another."""
    table = onnxsc.translation_table(write(tmp_path, "nested.onnxs", NESTED_CONDITIONS))
    x, y = torch.tensor([1.0, -2.0]), torch.tensor([2.0, 4.0])
    model = NestedModel(op, alpha)
    program = torch.onnx.export(model.eval(), (x, y), dynamo=True, custom_translation_table=table, verbose=False)
    ops = all_op_types(program.model_proto.graph)
    assert "Loop" in ops, ops
    assert "If" not in ops, ops
    torch.testing.assert_close(program(x, y)[0], model(x, y))


# ---------------------------------------------------------------------------------------------
# What check reports reaches Python; what it accepts exports


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


DEFAULTED = """\
    from onnxscript import opset18 as op


    @torch_op("aten::add.Tensor")
    def add(self, other, alpha: float = 2.0):
        return op.Add(self, op.Mul(other, op.CastLike(alpha, other)))
    """


def test_warnings_are_python_warnings_with_the_rendered_diagnostic(tmp_path):
    src = write(tmp_path, "defaulted.onnxs", DEFAULTED)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = onnxsc.translation_table(src)
    ours = [w for w in caught if issubclass(w.category, onnxsc.OnnxscWarning)]
    assert [w.message.code for w in ours] == ["W0502"], [str(w.message) for w in caught]
    first = ours[0]
    assert (Path(first.filename), first.lineno) == (src, 5)
    assert str(first.message).startswith("warning[W0502]: the default of `alpha` differs"), str(first.message)
    assert f"{src}:5:37" in str(first.message) and "write `1`" in str(first.message)
    assert torch.ops.aten.add.Tensor in table


def test_diagnostics_reach_python_as_the_command_line_renders_them(tmp_path):
    """The package reads ``onnxsc build --format json``: each warning's message and the
    errors' report are the text ``onnxsc check --color never`` prints (without its summary),
    and a warning's code and position are the JSON's."""
    src = write(tmp_path, "defaulted.onnxs", DEFAULTED)
    check = subprocess.run(
        [onnxsc.find_onnxsc_bin(), "--color", "never", "check", str(src)], capture_output=True, text=True, check=True
    )
    rendered = check.stderr[: check.stderr.rindex("onnxsc: ")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        onnxsc.translation_table(src)
    ours = [w.message for w in caught if issubclass(w.category, onnxsc.OnnxscWarning)]
    assert "".join(w.rendered + "\n\n" for w in ours) == rendered
    assert [(w.code, w.file, w.line, w.column) for w in ours] == [("W0502", str(src), 5, 37)]
    with pytest.raises(onnxsc.CompileError) as info:
        onnxsc.translation_table(src, deny_warnings=True)
    denied = subprocess.run(
        [onnxsc.find_onnxsc_bin(), "--color", "never", "check", "--deny-warnings", str(src)], capture_output=True, text=True
    )
    # The errors as `check` renders them, then the counts.
    errors = denied.stderr[: denied.stderr.rindex("onnxsc: ")].rstrip("\n")
    assert info.value.diagnostics == f"{errors}\n\nonnxsc: 1 error, 0 warnings\n"


def test_deny_warnings_makes_them_errors(tmp_path):
    src = write(tmp_path, "defaulted.onnxs", DEFAULTED)
    with pytest.raises(onnxsc.CompileError) as info:
        onnxsc.translation_table(src, deny_warnings=True)
    assert "error[W0502]" in info.value.diagnostics


def test_swapped_parameters_are_an_error(tmp_path):
    src = write(
        tmp_path,
        "swapped.onnxs",
        """\
        from onnxscript import opset18 as op


        @torch_op("aten::sub.Tensor")
        def sub(other, self, alpha: float = 1.0):
            return op.Sub(self, op.Mul(other, op.CastLike(alpha, other)))
        """,
    )
    with pytest.raises(onnxsc.CompileError) as info:
        onnxsc.translation_table(src)
    assert "error[E0512]" in info.value.diagnostics and f"{src}:5:9" in info.value.diagnostics


def test_the_exporter_opset_is_checked_before_export(tmp_path):
    """torch 2.15 builds at opset 18 and inlines translations: opset 20 would fail inside the
    export ("Opset mismatch when inlining function"), so check refuses it."""
    from torch.onnx._internal.exporter import _constants

    assert _constants.TORCHLIB_OPSET == 18, "onnxsc's aten::EXPORTER_OPSET is torch 2.15's"
    src = write(
        tmp_path,
        "gelu20.onnxs",
        """\
        from onnxscript import FLOAT, opset20 as op


        @torch_op("aten::gelu")
        def gelu(self: FLOAT, approximate: str = "none") -> FLOAT:
            return op.Gelu(self, approximate=approximate)
        """,
    )
    with pytest.raises(onnxsc.CompileError) as info:
        onnxsc.translation_table(src)
    assert "error[E0513]" in info.value.diagnostics, info.value.diagnostics


def test_optional_value_into_a_required_input_is_reported(tmp_path):
    src = write(
        tmp_path,
        "clamp.onnxs",
        """\
        from typing import Optional

        from onnxscript import FLOAT, opset18 as op


        @torch_op("aten::clamp.Tensor")
        def clamp(self: FLOAT, min: Optional[FLOAT] = None, max: Optional[FLOAT] = None) -> FLOAT:
            return op.Min(op.Max(self, min), max)
        """,
    )
    with pytest.raises(onnxsc.CompileError) as info:
        onnxsc.translation_table(src)
    assert "error[E0602]" in info.value.diagnostics and f"{src}:8:32" in info.value.diagnostics


class SumModel(torch.nn.Module):
    def __init__(self, dim, dtype):
        super().__init__()
        self.dim, self.dtype = dim, dtype

    def forward(self, x):
        return torch.sum(x, dim=self.dim, dtype=self.dtype)


@pytest.mark.parametrize("dim", [None, [1]])
@pytest.mark.parametrize("dtype", [None, torch.float64])
def test_none_defaults_as_the_issue_writes_them(tmp_path, dim, dtype):
    """`dim: Optional[Sequence[int]] = None` and `dtype: int = None` (what E0503's help used to
    recommend) build a table, and `torch.sum(x, dim=None)` exports."""
    src = write(
        tmp_path,
        "sum.onnxs",
        """\
        from typing import Optional, Sequence

        from onnxscript import FLOAT, opset18 as op


        @torch_op("aten::sum.dim_IntList")
        def sum_dim(self: FLOAT, dim: Optional[Sequence[int]] = None, keepdim: bool = False, dtype: int = None) -> FLOAT:
            if dtype is not None:
                x = op.Cast(self, to=dtype)
            else:
                x = op.Identity(self)
            if dim is None:
                result = op.ReduceSum(x, keepdims=keepdim)
            else:
                result = op.ReduceSum(x, op.Constant(value_ints=dim), keepdims=keepdim)
            return result
        """,
    )
    table = onnxsc.translation_table(src)
    x = torch.randn(3, 4)
    program = torch.onnx.export(SumModel(dim, dtype), (x,), dynamo=True, custom_translation_table=table, verbose=False)
    assert [n.op_type for n in program.model_proto.graph.node if n.op_type != "Constant"][-1] == "ReduceSum"
    torch.testing.assert_close(program(x)[0], SumModel(dim, dtype)(x))


def _scale_op():
    def scale_op(input: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        return input * scale

    return harness.custom_op("onnxsc_drift::scale_op", scale_op, lambda input, scale=1.0: torch.empty_like(input))


def exception_text(e: BaseException) -> str:
    """An exception and every exception it was raised from, one per line."""
    chain = []
    while e is not None:
        chain.append(str(e))
        e = e.__cause__ or e.__context__
    return "\n".join(chain)


def test_a_declaration_that_differs_from_the_registration_is_located(tmp_path):
    _scale_op()
    src = write(
        tmp_path,
        "drift.onnxs",
        """\
        from onnxscript import opset18 as op

        torch.library.define("onnxsc_drift::scale_op", "(Tensor input) -> Tensor")


        @torch_op("onnxsc_drift::scale_op")
        def scale_op(input):
            return op.Identity(input)
        """,
    )
    with pytest.raises(onnxsc.CompileError) as info:
        onnxsc.translation_table(src)
    report = info.value.diagnostics
    assert "error[E0515]" in report and f"{src}:3:48" in report, report
    assert "declared: onnxsc_drift::scale_op(Tensor input) -> Tensor" in report, report
    assert "registered: onnxsc_drift::scale_op(Tensor input, float scale=1.) -> Tensor" in report, report


def test_an_undeclared_custom_op_is_checked_against_its_registration(tmp_path):
    _scale_op()
    src = write(
        tmp_path,
        "undeclared.onnxs",
        """\
        from onnxscript import opset18 as op


        @torch_op("onnxsc_drift::scale_op")
        def scale_op(input):
            return op.Identity(input)
        """,
    )
    with pytest.raises(onnxsc.CompileError) as info:
        onnxsc.translation_table(src)
    assert "error[E0503]" in info.value.diagnostics and "`scale`" in info.value.diagnostics
    # Translating every argument, it builds (and W0504, no schema known, is gone).
    good = write(
        tmp_path,
        "good.onnxs",
        """\
        from onnxscript import opset18 as op


        @torch_op("onnxsc_drift::scale_op")
        def scale_op(input, scale: float = 1.0):
            return op.Mul(input, op.CastLike(scale, input))
        """,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", onnxsc.OnnxscWarning)
        table = onnxsc.translation_table(good)

    class Scale(torch.nn.Module):
        def forward(self, x):
            return torch.ops.onnxsc_drift.scale_op.default(x, 3.0)

    x = torch.randn(4)
    program = torch.onnx.export(Scale(), (x,), dynamo=True, custom_translation_table=table, verbose=False)
    torch.testing.assert_close(program(x)[0], x * 3.0)


def test_native_functions_auto_is_this_interpreters_torch(tmp_path, monkeypatch):
    import torchgen

    expected = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    assert Path(onnxsc._table._native_functions_path("auto")) == expected
    # Whatever the environment variables say.
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "elsewhere"))
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    src = write(tmp_path, "relu.onnxs", 'from onnxscript import opset18 as op\n\n\n@torch_op("aten::relu")\ndef relu(self):\n    return op.Relu(self)\n')
    table = onnxsc.translation_table(src, native_functions="auto")
    assert set(table) == {torch.ops.aten.relu.default}


def test_a_type_mistake_stops_the_export_at_the_onnxs_line(tmp_path):
    """An unannotated translation that ONNX Runtime would refuse (an INT64 constant added to a
    float): the call's body is checked with the exporter's types, and the export stops at the
    op call's line (E0601) before a model is made."""
    src = write(
        tmp_path,
        "bad_type.onnxs",
        """\
        from onnxscript import opset18 as op


        @torch_op("aten::relu")
        def relu(self):
            shifted = op.Add(self, op.Constant(value_int=1))
            return op.Relu(shifted)
        """,
    )
    table = onnxsc.translation_table(src)

    class Relu(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x)

    with pytest.raises(Exception) as info:
        torch.onnx.export(Relu(), (torch.randn(3),), dynamo=True, custom_translation_table=table, optimize=False, verbose=False)
    chain, e = [], info.value
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ or e.__context__
    text = "\n".join(str(e) for e in chain if isinstance(e, onnxsc.OnnxscError))
    assert "error[E0601]: `Add` needs `A` and `B` to have the same element type, but they are FLOAT and INT64" in text, text
    assert f"at {src}:6:15, in `relu`" in text, text


def test_a_dynamic_value_for_an_attribute_is_located(tmp_path):
    src = write(
        tmp_path,
        "view.onnxs",
        """\
        from typing import Sequence

        from onnxscript import opset18 as op


        @torch_op("aten::view")
        def view(self, size: Sequence[int]):
            return op.Reshape(self, op.Constant(value_ints=size))
        """,
    )
    table = onnxsc.translation_table(src)

    class Flatten(torch.nn.Module):
        def forward(self, x):
            return x.view(x.shape[0], -1)

    batch = torch.export.Dim("batch")
    with pytest.raises(Exception) as info:
        torch.onnx.export(Flatten(), (torch.randn(2, 3, 4),), dynamo=True, custom_translation_table=table, dynamic_shapes=({0: batch},), verbose=False)
    message = exception_text(info.value)
    assert f"{src}:7:5: `view`, translating aten::view" in message, message
    assert "`size` is computed when the model runs" in message, message


def test_complex_and_private_translations_are_not_registered(tmp_path):
    src = write(
        tmp_path,
        "variants.onnxs",
        """\
        from onnxscript import opset18 as op


        @torch_op("aten::relu")
        def relu(self):
            return op.Relu(self)


        @torch_op("aten::relu", complex=True)
        def relu_complex(self):
            return op.Relu(self)


        @torch_op("aten::neg", private=True)
        def neg_helper(self):
            return op.Neg(self)
        """,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = onnxsc.translation_table(src)
    # A table registers real-valued entries only, and the exporter's own complex translations
    # stay in force: the complex one is left out, silently (docs/exporter.md).
    assert set(table) == {torch.ops.aten.relu.default}
    messages = [str(w.message) for w in caught if issubclass(w.category, onnxsc.OnnxscWarning)]
    assert messages == []


def test_a_fractional_scalar_is_not_truncated_into_an_int_attribute(tmp_path):
    src = write(
        tmp_path,
        "leaky_int.onnxs",
        """\
        from onnxscript import opset18 as op


        @torch_op("aten::leaky_relu")
        def leaky_relu(self, negative_slope: int = 0):
            return op.Mul(self, op.CastLike(negative_slope, self))
        """,
    )
    table = onnxsc.translation_table(src)

    class Leaky(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.leaky_relu(x, 0.5)

    with pytest.raises(Exception) as info:
        torch.onnx.export(Leaky(), (torch.randn(3),), dynamo=True, custom_translation_table=table, verbose=False)
    message = exception_text(info.value)
    assert f"{src}:5:5" in message and "`negative_slope` = 0.5 does not fit its `int` attribute" in message, message
