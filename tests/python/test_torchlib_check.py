"""onnxsc checks torchlib's translation modules as they are, copied verbatim.

``test_torchlib.py`` checks each scripted translation alone, in a module made for it. This suite
takes the installed onnxscript's eight torchlib modules whole (``core``, ``nn``, ``prims``,
``special``, ``linalg``, ``fft``, ``vision``, ``quantized_decomposed``), top level included
(imports of torch, numpy and functools, ``common_ops``, constants, a module-level ``if`` on the
torch version, a memoised helper), copies each to ``NAME.onnxs`` byte for byte, and runs
``onnxsc check --format json`` on all of them together.

* ``test_torchlib_modules_check_clean``: at least ``MIN_CLEAN`` of the ``@torch_op``
  translations (scripted and trace-only) have no error within their lines (decorators to the
  end of the body), counted with :mod:`ast`; the fraction is printed so it can be recorded.
* ``test_every_failing_translation_is_located``: every error lies inside a translation or a
  helper (none fails a module's top level), and each failing translation has at least one error
  whose location and primary label are inside it.
"""

from __future__ import annotations

import ast
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

import harness
import torchlib_source

MODULES = ("core", "nn", "prims", "special", "linalg", "fft", "vision", "quantized_decomposed")

MIN_CLEAN = 0.90


@dataclass(frozen=True)
class Translation:
    file: str
    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Checked:
    translations: list
    errors: list
    functions: dict  # file -> [(start, end)] of every module-level function


def _is_torch_op(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "") == "torch_op"


def _functions(tree: ast.Module):
    """Every function Python defines at module level, those in a module-level ``if`` too."""
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.FunctionDef):
            yield node
        elif isinstance(node, ast.If):
            pending.extend(node.body + node.orelse)


def _span(node: ast.FunctionDef) -> tuple:
    return min([d.lineno for d in node.decorator_list] + [node.lineno]), node.end_lineno


@pytest.fixture(scope="module")
def checked(onnxsc: harness.Onnxsc, tmp_path_factory) -> Checked:
    ops = torchlib_source.torch_lib_dir() / "ops"
    work = tmp_path_factory.mktemp("torchlib-modules")
    translations, functions = [], {}
    for m in MODULES:
        target = work / f"{m}.onnxs"
        shutil.copyfile(ops / f"{m}.py", target)
        tree = ast.parse(target.read_text(encoding="utf-8"))
        functions[target.name] = [_span(node) for node in _functions(tree)]
        # The translations at module level: those in the branches of a module-level `if` are
        # left out of the fraction.
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(_is_torch_op(d) for d in node.decorator_list):
                translations.append(Translation(target.name, node.name, *_span(node)))
    proc = onnxsc.run("check", "--format", "json", *(work / f"{m}.onnxs" for m in MODULES))
    assert proc.returncode in (0, 1), proc.stderr
    diagnostics = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    errors = [d for d in diagnostics if d["code"].startswith("E")]
    for d in errors:
        d["file"] = Path(d["file"]).name
    return Checked(translations, errors, functions)


def _inside(d: dict, file: str, start: int, end: int) -> bool:
    return d["file"] == file and start <= d["line"] <= end


def test_torchlib_modules_check_clean(checked: Checked):
    assert len(checked.translations) >= 400, f"only {len(checked.translations)} translations found"
    failing = [
        t for t in checked.translations if any(_inside(e, t.file, t.start, t.end) for e in checked.errors)
    ]
    total = len(checked.translations)
    clean = total - len(failing)
    print(f"\ntorchlib translations checking clean: {clean}/{total} = {100 * clean / total:.1f}%")
    for t in failing:
        codes = sorted({e["code"] for e in checked.errors if _inside(e, t.file, t.start, t.end)})
        print(f"  {t.file}:{t.start} {t.name}: {', '.join(codes)}")
    assert clean / total >= MIN_CLEAN, f"{clean}/{total} translations check clean"


def test_every_failing_translation_is_located(checked: Checked):
    outside = [
        e
        for e in checked.errors
        if not any(start <= e["line"] <= end for start, end in checked.functions.get(e["file"], []))
    ]
    assert not outside, "errors outside every function (a module's top level failed):\n" + "\n".join(
        f"{e['file']}:{e['line']} {e['code']} {e['message']}" for e in outside
    )
    for t in checked.translations:
        mine = [e for e in checked.errors if _inside(e, t.file, t.start, t.end)]
        for e in mine:
            primary = [label for label in e["labels"] if label["primary"]]
            assert primary, f"{t.file}:{e['line']} {e['code']} has no primary label"
            assert all(t.start <= label["line"] <= t.end for label in primary), (
                f"{t.file}:{e['line']} {e['code']}: the primary label is outside `{t.name}`"
            )
            assert e["help"], f"{t.file}:{e['line']} {e['code']} has no help line"


def test_a_name_this_torch_lacks_is_left_out_of_the_table_with_a_warning(onnxsc_bin, tmp_path: Path, monkeypatch):
    """torchlib binds names such as `aten::pow` (no default overload in torch 2.15); the
    exporter skips them when it reads torchlib, and so does the table, saying which."""
    pytest.importorskip("torch", reason="torch is installed by scripts/test")
    import onnxsc

    monkeypatch.setenv("ONNXSC_BIN", str(onnxsc_bin))
    source = tmp_path / "lib.onnxs"
    source.write_text(
        "from onnxscript import FLOAT, opset18 as op\n"
        "from onnxscript.function_libs.torch_lib.registration import torch_op\n\n\n"
        '@torch_op("aten::pow")\n'
        "def pow_(self: FLOAT, exponent: FLOAT) -> FLOAT:\n"
        "    return op.Pow(self, exponent)\n\n\n"
        '@torch_op("aten::relu")\n'
        "def relu(self: FLOAT) -> FLOAT:\n"
        "    return op.Relu(self)\n",
        encoding="utf-8",
    )
    with pytest.warns(onnxsc.OnnxscWarning) as caught:
        table = onnxsc.translation_table(source)
    import torch

    assert list(table) == [torch.ops.aten.relu.default]
    # Once: the table's W0511 (the compiler's W0506 would repeat the finding).
    found = [w.message for w in caught if "aten::pow" in str(w.message)]
    assert [w.code for w in found] == ["W0511"], [str(w) for w in found]
    assert "aten::pow names no overload" in str(found[0]) and "left out of the table" in str(found[0])
