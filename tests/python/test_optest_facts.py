"""`python -m onnxsc test --facts-only`: every call judged by its facts alone (what each input is,
what PyTorch returns), through the translation and onnxsc's inference, without an export or
ONNX Runtime.

* The twins whose mistake is a shape or a dtype (`optest/bugs/linear_wrong`: an untransposed
  weight; `sigmoid_wrong`: float32 returned for float16) fail at their `.onnxs` line; their right
  twins pass.
* A mistake in values only (channel order, an attribute ignored) is not a fact: it passes, and
  the verdict says that values were not judged.
* A composite operator (`aten::linear`, which decomposes before a dispatch mode sees it) is
  reached; one torch.export always decomposes is untested, with the reason.
* Nothing is exported: the run holds with the exporter taken away.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="torch is installed by scripts/test")
pytest.importorskip("expecttest", reason="expecttest is installed by scripts/test")

HERE = Path(__file__).parent / "optest"
BUGS = HERE / "bugs"

# The twins with a mistake in facts: the diagnostic their failure names.
FACT_MISTAKES = {
    "linear": ("E0907", "linear_wrong.onnxs:9:5"),
    "sigmoid": ("E0908", "sigmoid_wrong.onnxs:10:5"),
}
# The twins with a mistake in values only.
VALUE_MISTAKES = ("pixel_shuffle", "leaky_relu")


def run(*args: str, cwd: Path = HERE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "onnxsc", "test", "--facts-only", "--jobs", "1", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=900,
    )


@pytest.mark.parametrize("name", sorted(FACT_MISTAKES))
def test_a_shape_or_dtype_mistake_fails_at_its_line_and_its_right_twin_passes(name):
    code, where = FACT_MISTAKES[name]
    wrong = run(str(BUGS / f"{name}_wrong.onnxs"))
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    first = re.search(r": FAILED \d+ \([^)]*\); first: (.*)", wrong.stdout)
    assert first and f"error[{code}]" in first.group(1) and where in first.group(1), wrong.stdout
    assert "smallest failing call found" in wrong.stdout, wrong.stdout
    right = run(str(BUGS / f"{name}_right.onnxs"))
    assert right.returncode == 0, right.stdout + right.stderr
    last = right.stdout.strip().splitlines()[-1]
    assert re.fullmatch(
        r"onnxsc test: 1 operator, \d+ calls passed by their facts alone \(values not judged\), 0 failed, 0 untested: ok", last
    ), right.stdout


@pytest.mark.parametrize("name", VALUE_MISTAKES)
def test_a_mistake_in_values_only_is_not_a_fact(name):
    done = run(str(BUGS / f"{name}_wrong.onnxs"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(values not judged)" in done.stdout.strip().splitlines()[-1], done.stdout


def test_a_composite_operator_is_reached_and_one_export_decomposes_is_untested():
    linear = run(str(BUGS / "linear_right.onnxs"))
    m = re.search(r"aten::linear: ran (\d+) calls \((.*)\) by their facts alone", linear.stdout)
    assert m and int(m.group(1)) >= 10 and "opinfo" in m.group(2), linear.stdout
    decomposed = run("untested_batch_norm.onnxs")
    assert decomposed.returncode == 1, decomposed.stdout + decomposed.stderr
    assert "aten::batch_norm: UNTESTED: its translation ran on 0 calls" in decomposed.stdout, decomposed.stdout
    assert "torch.export always decomposes `aten::batch_norm`" in decomposed.stdout, decomposed.stdout


def test_nothing_is_exported(monkeypatch):
    import torch

    from onnxsc._optest import cli, judge, run as optest_run

    def no_export(*args, **kwargs):
        raise AssertionError("a facts-only run exported a model")

    monkeypatch.setattr(judge, "export", no_export)
    monkeypatch.setattr(optest_run, "export", no_export)
    monkeypatch.setattr(torch.onnx, "export", no_export)
    monkeypatch.chdir(HERE)
    options = optest_run.Options(facts_only=True, shrink=False)
    tallies = cli.run([str(BUGS / "sigmoid_wrong.onnxs")], None, options, jobs=1)
    [tally] = tallies
    assert tally.failed and tally.passed and tally.exports == 0, tally
    assert "error[E0908]" in tally.first_failure, tally.first_failure
