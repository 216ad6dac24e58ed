"""The Python package with torch.onnx.export: the seed tutorial's three scenarios, end to end.

The ``onnxsc`` package under test is the one ``pip install .`` put into the test environment
(``scripts/test`` does that), with its own binary. Each exported model runs in ONNX Runtime
through ``onnx_program(*inputs)`` and is compared with PyTorch by ``torch.testing.assert_close``.
"""

from __future__ import annotations

import logging
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


@pytest.fixture(autouse=True)
def quiet_exporter():
    """The exporter logs and warns at length; the assertions say what matters."""
    logging.disable(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    logging.disable(logging.NOTSET)


@pytest.fixture(scope="module")
def add_and_round_op():
    """Scenario 3's custom operator, registered as the tutorial does."""
    try:
        return torch.ops.mylibrary.add_and_round_op.default
    except AttributeError:
        pass

    @torch.library.custom_op("mylibrary::add_and_round_op", mutates_args=())
    def add_and_round_op(input: torch.Tensor) -> torch.Tensor:
        return torch.round(input + input)

    @add_and_round_op.register_fake
    def _(tensor_x):
        return torch.empty_like(tensor_x)

    return torch.ops.mylibrary.add_and_round_op.default


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


def test_readme_example_exports_and_matches():
    """The README's "Use with torch.onnx.export" section: its .onnxs block is the tutorial
    example file, and its Python block runs as written (in a fresh process, which registers
    the custom operator itself)."""
    readme = (harness.REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use with torch.onnx.export", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    assert len(blocks) == 2, "the section shows the .onnxs file, then the Python"
    assert blocks[0] == TUTORIAL.read_text(encoding="utf-8")
    proc = subprocess.run(
        [os.environ.get("PYTHON", __import__("sys").executable), "-c", blocks[1]],
        cwd=harness.REPO_ROOT,
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
