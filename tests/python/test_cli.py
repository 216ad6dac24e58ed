"""The command-line contract of ``onnxsc build`` / ``onnxsc check``.

* ``build PATH... -o OUT.onnx``: exit 0 and a model whose ``functions`` hold every
  compiled function; exit 1 if the sources have errors (no output file written); exit 2 on
  usage or I/O errors.
* ``check PATH...`` only checks: same exit codes, writes nothing.
* The output is deterministic: building twice gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

import harness

BROKEN_SOURCES = {
    # A name that is never defined.
    "undefined_name": (
        "from onnxscript import opset18 as op\n\n\n"
        "def uses_undefined(x):\n"
        "    return op.Relu(y)\n"
    ),
    # Not even Python.
    "syntax_error": (
        "from onnxscript import opset18 as op\n\n\n"
        "def broken(x:\n"
        "    return op.Relu(x)\n"
    ),
}


def test_build_writes_a_model(onnxsc, tmp_path):
    out = tmp_path / "lib.onnx"
    result = onnxsc.build([harness.EXAMPLES_DIR], out)
    model = result.require_model()
    assert len(model.functions) > 0
    assert onnx.load(str(out)) == model


@pytest.mark.parametrize("kind", sorted(BROKEN_SOURCES))
def test_build_rejects_broken_source(kind, onnxsc, tmp_path):
    src = tmp_path / f"{kind}.onnxs"
    src.write_text(BROKEN_SOURCES[kind], encoding="utf-8")
    out = tmp_path / "out.onnx"
    result = onnxsc.build([src], out)
    assert result.returncode == 1, result.describe()
    assert not out.exists(), "no output file may be written when the sources have errors"
    assert result.stderr.strip(), "an error needs a message"


@pytest.mark.parametrize("kind", sorted(BROKEN_SOURCES))
def test_check_rejects_broken_source(kind, onnxsc, tmp_path):
    src = tmp_path / f"{kind}.onnxs"
    src.write_text(BROKEN_SOURCES[kind], encoding="utf-8")
    proc = onnxsc.run("check", src)
    assert proc.returncode == 1, proc.stderr


def test_check_accepts_examples_and_writes_nothing(onnxsc, tmp_path):
    before = set(tmp_path.iterdir())
    proc = onnxsc.run("check", harness.EXAMPLES_DIR, harness.DIFFERENTIAL_DIR)
    assert proc.returncode == 0, proc.stderr
    assert set(tmp_path.iterdir()) == before


def test_missing_input_is_an_io_error(onnxsc, tmp_path):
    out = tmp_path / "out.onnx"
    result = onnxsc.build([tmp_path / "does_not_exist.onnxs"], out)
    assert result.returncode == 2, result.describe()
    assert not out.exists()


def test_unknown_subcommand_is_a_usage_error(onnxsc):
    proc = onnxsc.run("no-such-command")
    assert proc.returncode == 2, proc.stderr


def test_build_is_deterministic(onnxsc, tmp_path):
    """Same sources, same bytes (onnxscript's If output order depends on
    PYTHONHASHSEED; onnxsc's must not depend on anything)."""
    first = onnxsc.build([harness.DIFFERENTIAL_DIR], tmp_path / "a.onnx").require_model()
    second = onnxsc.build([harness.DIFFERENTIAL_DIR], tmp_path / "b.onnx").require_model()
    assert Path(tmp_path / "a.onnx").read_bytes() == Path(tmp_path / "b.onnx").read_bytes()
    assert first == second
