"""onnxsc checks the scripted torchlib translations of the installed onnxscript.

The translations are read from the package at test time (``torchlib_source``), one
self-contained ``.onnxs`` module per scripted ``@torch_op`` function (no
``trace_only=True``), with the type variables, constants and scripted callees it uses.

* ``test_onnxsc_checks[NAME]``: ``onnxsc check`` reports no error on the module, except the
  verified torchlib defects listed in ``KNOWN_DEFECTS``, which it must report.
* ``test_onnxscript_compiles[NAME]``: the module is valid ONNX Script: onnxscript 0.7.2
  compiles it (the real ``torch_op`` decorator, which scripts with torchlib's opset and does
  not import torch), so a failure of the first test is onnxsc's, not the extractor's.
* ``test_extractor_finds_scripted_functions``: the suite cannot silently become empty.
* ``test_extractor_brings_scripted_callees``: a caller's module carries its scripted
  private helper first (no translation of this onnxscript version calls one).
"""

from __future__ import annotations

import re
import textwrap
import warnings
from pathlib import Path

import pytest

import harness
import torchlib_source

MIN_SCRIPTED = 40

SCRIPTED = torchlib_source.scripted_functions()

_ERROR_LINE = re.compile(r"^\s*error\b", re.IGNORECASE | re.MULTILINE)


def _require_module(record: torchlib_source.TorchlibFunction) -> None:
    if record.module_text is None:
        pytest.fail(
            f"{record.name} ({record.location}) could not be made self-contained: "
            f"{record.skip_reason}",
            pytrace=False,
        )


def _describe(record: torchlib_source.TorchlibFunction, path: Path, proc) -> str:
    where = f"{record.name} ({record.location}; ops {', '.join(record.op_names)})"
    if record.condition:
        where += f", defined only if {record.condition}"
    return (
        f"onnxsc check failed on {where}\n"
        f"exit code: {proc.returncode}\n"
        f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}\n"
        f"--- {path} ---\n{path.read_text(encoding='utf-8')}"
    )


# Real defects in onnxscript 0.7.2's torchlib that onnxsc reports, each verified by hand.
# The test insists on exactly these errors, so a checker that stops finding them fails too.
KNOWN_DEFECTS = {
    # Bound to `aten::_linalg_det(Tensor A) -> (Tensor result, Tensor LU, Tensor pivots)` but
    # returns only the determinant: torch.linalg.det exports (the exporter takes output 0), yet
    # any use of LU or pivots from `_linalg_det` cannot be translated.
    "aten_linalg_det": {"E0509"},
}

_ERROR_CODE = re.compile(r"^error\[(E\d{4})\]", re.MULTILINE)


@pytest.mark.parametrize("record", SCRIPTED, ids=[r.name for r in SCRIPTED])
def test_onnxsc_checks(record, onnxsc: harness.Onnxsc, tmp_path: Path):
    _require_module(record)
    path = record.write(tmp_path)
    proc = onnxsc.run("--color", "never", "check", path)
    output = proc.stdout + proc.stderr
    expected = KNOWN_DEFECTS.get(record.name)
    if expected is None:
        assert proc.returncode == 0 and not _ERROR_LINE.search(output), _describe(record, path, proc)
    else:
        assert proc.returncode == 1, _describe(record, path, proc)
        assert set(_ERROR_CODE.findall(output)) == expected, _describe(record, path, proc)


@pytest.mark.parametrize("record", SCRIPTED, ids=[r.name for r in SCRIPTED])
def test_onnxscript_compiles(record, tmp_path: Path):
    _require_module(record)
    path = record.write(tmp_path / "src")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # onnxscript's deprecation and converter warnings
        compiled = harness.compile_with_onnxscript(path, tmp_path / "modules")
    names = [f.name for f in compiled]
    assert names == [*record.dependencies, record.name], names
    assert compiled[-1].proto.name == record.name


def test_extractor_finds_scripted_functions():
    names = [r.name for r in SCRIPTED]
    assert len(SCRIPTED) >= MIN_SCRIPTED, (
        f"only {len(SCRIPTED)} scripted @torch_op functions found in "
        f"{torchlib_source.torch_lib_dir()}: {names}"
    )
    assert torchlib_source.torch_op_count() > len(SCRIPTED)  # traced ones are left out
    for record in SCRIPTED:
        assert record.op_names and all("::" in n for n in record.op_names), record


def test_extractor_brings_scripted_callees(tmp_path: Path):
    source = tmp_path / "synthetic_ops.py"
    source.write_text(
        textwrap.dedent(
            '''\
            from __future__ import annotations

            import math

            from onnxscript.function_libs.torch_lib.registration import torch_op
            from onnxscript.function_libs.torch_lib.tensor_typing import TFloat
            from onnxscript.onnx_opset import opset18 as op

            _SCALE = math.pi / 2
            _UNUSED = 3


            @torch_op("aten::helper", private=True)
            def _helper(x: TFloat) -> TFloat:
                return op.Mul(x, _SCALE)


            @torch_op("aten::traced", trace_only=True)
            def traced(x: TFloat) -> TFloat:
                return op.Identity(x)


            @torch_op(("aten::caller", "aten::caller.Tensor"))
            def caller(x: TFloat) -> TFloat:
                """Calls the helper."""
                return _helper(op.Abs(x))


            @torch_op("aten::calls_traced")
            def calls_traced(x: TFloat) -> TFloat:
                return traced(x)
            '''
        ),
        encoding="utf-8",
    )
    records = {r.name: r for r in torchlib_source.extract_file(source)}
    assert sorted(records) == ["_helper", "caller", "calls_traced"]

    caller = records["caller"]
    assert caller.skip_reason is None
    assert caller.op_names == ("aten::caller", "aten::caller.Tensor")
    assert caller.dependencies == ("_helper",)
    text = caller.module_text
    assert text.index("def _helper") < text.index("def caller")
    assert '@torch_op("aten::helper", private=True)' in text
    assert "_SCALE = 1.5707963267948966  # math.pi / 2" in text
    assert "_UNUSED" not in text
    assert 'TFloat = TypeVar("TFloat", bound=_FloatType)' in text
    assert text.index("_FloatType = Union[") < text.index("TFloat = TypeVar(")
    assert torchlib_source.TORCH_OP_IMPORT in text

    script_text = caller.text("script")
    assert "torch_op" not in script_text
    assert script_text.count("@script()") == 2

    assert "not a scripted function" in records["calls_traced"].skip_reason
    assert records["calls_traced"].module_text is None

    compiled = harness.compile_with_onnxscript(caller.write(tmp_path / "out"), tmp_path / "mods")
    assert [f.name for f in compiled] == ["_helper", "caller"]
