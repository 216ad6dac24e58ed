"""`python -m onnxsc test`: each translation judged against PyTorch, on PyTorch's OpInfo samples
and on the samples made to find what they miss.

* The examples pass, and the report of a wrong formula (the tanh gelu for every call) names the
  operator, shrinks the failing call, and gives a reproducer that fails when run.
* Twins: for each kind of mistake a translation makes (`optest/bugs/*_wrong.onnxs`), the wrong
  translation fails, found by the kind of sample made for it and not by OpInfo's own, and its
  right twin (`*_right.onnxs`) passes: channel order (shapes), an attribute left at its default
  (attributes), overflow and NaN (values), the dtype returned (dtypes), a float16 sum (the large
  float16 sample, judged by ONNX's reference implementation), a shape computed from numbers
  (dynamic dimensions), an untransposed weight.
* An operator whose translation never runs is untested: exit 1, unless --allow-untested.
* Model reuse, seeds, shards and workers.
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
EXAMPLES = Path(__file__).parent.parent.parent / "examples"

# The kind of sample that must find each wrong twin (`FAILED N (k kind, ...)` of its report), and
# whether PyTorch's own samples miss it (they do reach float16, and non-square weights).
FOUND_BY = {
    "pixel_shuffle": ("shape", True),
    "leaky_relu": ("attribute", True),
    "softmax": ("value", True),
    "addmm": ("value", True),
    "sigmoid": ("dtype", False),
    "mean": ("value", True),
    "slice": ("dynamic", True),
    "linear": ("opinfo", False),
}


def run(*args: str, cwd: Path = HERE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "onnxsc", "test", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=900,
    )


def failures_by_kind(report: str) -> dict:
    """`aten::x: FAILED 5 (2 attribute, 3 value); first: ...` -> {"attribute": 2, "value": 3}."""
    m = re.search(r": FAILED \d+ \(([^)]*)\)", report)
    if not m:
        return {}
    return {kind: int(n) for n, kind in (part.split(" ", 1) for part in m.group(1).split(", "))}


def test_the_examples_pass():
    done = run(str(EXAMPLES), "--import", "register_add_and_round")
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"onnxsc test: 3 operators, \d+ calls passed, 0 failed, 0 untested: ok", last), done.stdout
    assert re.search(r"mylibrary::add_and_round_op\s+\d{2,}\s+0\s+\d+", done.stdout), done.stdout


def test_a_wrong_formula_fails_shrunk_with_a_reproducer_that_fails(tmp_path):
    done = run("wrong_gelu.onnxs", "--jobs", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "aten::gelu: FAILED" in done.stdout and "approximate='none'" in done.stdout, done.stdout
    smallest = re.search(r"smallest failing call found: (float32\[[^\]]*\])", done.stdout)
    assert smallest and smallest.group(1) in ("float32[1]", "float32[]"), done.stdout
    lines = done.stdout.splitlines()
    start = lines.index("  reproduce:") + 1
    snippet = []
    for line in lines[start:]:
        if line and not line.startswith("    "):
            break
        snippet.append(line[4:])
    (tmp_path / "repro.py").write_text("\n".join(snippet) + "\n", encoding="utf-8")
    (tmp_path / "wrong_gelu.onnxs").write_bytes((HERE / "wrong_gelu.onnxs").read_bytes())
    repro = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert repro.returncode != 0 and "AssertionError" in repro.stderr and "not close" in repro.stderr, repro.stderr


@pytest.mark.parametrize("name", sorted(FOUND_BY))
def test_a_wrong_translation_fails_and_its_right_twin_passes(name):
    wrong = run(str(BUGS / f"{name}_wrong.onnxs"), "--jobs", "1", "--no-shrink")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    kinds = failures_by_kind(wrong.stdout)
    kind, opinfo_misses = FOUND_BY[name]
    assert kind in kinds, wrong.stdout
    if opinfo_misses:
        # PyTorch's own samples do not reach the mistake: the samples made for it do.
        assert "opinfo" not in kinds and "direct" not in kinds, wrong.stdout
    right = run(str(BUGS / f"{name}_right.onnxs"), "--jobs", "1")
    assert right.returncode == 0, right.stdout + right.stderr
    assert right.stdout.strip().splitlines()[-1].endswith(" 0 failed, 0 untested: ok"), right.stdout


def test_an_operator_whose_translation_never_runs_is_untested():
    done = run("untested_batch_norm.onnxs", "--jobs", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "aten::batch_norm: UNTESTED: its translation ran on 0 calls, fewer than 10" in done.stdout, done.stdout
    assert "its graph calls aten::_native_batch_norm_legit_no_training" in done.stdout, done.stdout
    assert done.stdout.strip().endswith("1 untested: FAILED"), done.stdout
    allowed = run("untested_batch_norm.onnxs", "--jobs", "1", "--allow-untested")
    assert allowed.returncode == 0 and allowed.stdout.strip().endswith("1 untested: ok"), allowed.stdout


def test_calls_that_differ_only_in_values_share_one_exported_model():
    done = run(str(BUGS / "softmax_right.onnxs"), "--jobs", "1")
    m = re.search(r"ran (\d+) calls \(.*\) on (\d+) exported models", done.stdout)
    assert m, done.stdout
    calls, models = int(m.group(1)), int(m.group(2))
    assert models <= 31 and calls >= 3 * models, done.stdout


def test_a_seed_reproduces_a_run_and_another_seed_draws_other_samples():
    first = run(str(BUGS / "addmm_right.onnxs"), "--jobs", "1", "--seed", "7")
    again = run(str(BUGS / "addmm_right.onnxs"), "--jobs", "1", "--seed", "7")
    assert first.stdout == again.stdout, first.stdout + again.stdout
    other = run(str(BUGS / "addmm_right.onnxs"), "--jobs", "1", "--seed", "8")
    assert first.stdout.splitlines()[1] != other.stdout.splitlines()[1], first.stdout + other.stdout


def test_shards_split_the_operators_and_workers_give_the_report_one_process_gives():
    args = (str(EXAMPLES), "--import", "register_add_and_round")
    whole = run(*args, "--jobs", "1")
    workers = run(*args, "--jobs", "2")
    assert whole.returncode == 0 and workers.stdout == whole.stdout, whole.stdout + workers.stdout
    shards = [run(*args, "--jobs", "1", "--shard", f"{k}/2") for k in (1, 2)]
    names = [re.findall(r"^(\S+::\S+)\s+\d+\s+\d+", s.stdout, re.M) for s in shards]
    assert sorted(names[0] + names[1]) == sorted(re.findall(r"^(\S+::\S+)\s+\d+\s+\d+", whole.stdout, re.M))
    assert names[0] and names[1] and not set(names[0]) & set(names[1]), names
    bad = run(*args, "--shard", "3/2")
    assert bad.returncode == 2 and "--shard takes K/N" in bad.stderr, bad.stderr


def test_an_unregistered_custom_operator_is_untested_with_the_reason():
    done = run(str(EXAMPLES), "--op", "mylibrary::add_and_round_op", "--jobs", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not registered with this PyTorch" in done.stdout and "UNTESTED" in done.stdout, done.stdout
