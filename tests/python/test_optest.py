"""`python -m onnxsc test`: each translation judged against PyTorch on its OpInfo samples.

The examples pass; a deliberately wrong translation (the tanh gelu for every call) fails with
its operator named and the first failing sample shown; its report is a snapshot
(`optest/wrong_gelu.expected`; samples and ONNX Runtime are deterministic).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="torch is installed by scripts/test")
pytest.importorskip("expecttest", reason="expecttest is installed by scripts/test")

HERE = Path(__file__).parent / "optest"
EXAMPLES = Path(__file__).parent.parent.parent / "examples"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "onnxsc", "test", *args],
        cwd=HERE,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=900,
    )


def test_the_examples_pass():
    done = run(str(EXAMPLES), "--import", "register_add_and_round")
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("onnxsc test: 3 operators,") and last.endswith(" 0 failed: ok"), done.stdout
    assert "mylibrary::add_and_round_op       2       0" in done.stdout, done.stdout


def test_a_wrong_formula_fails_with_the_operator_named():
    done = run("wrong_gelu.onnxs")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == (HERE / "wrong_gelu.expected").read_text(), done.stdout


def test_an_unregistered_custom_operator_is_skipped_with_the_reason():
    done = run(str(EXAMPLES), "--op", "mylibrary::add_and_round_op")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not registered with this PyTorch" in done.stdout, done.stdout
