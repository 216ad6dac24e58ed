"""The pre-commit hooks of `.pre-commit-hooks.yaml`, run by the real `pre-commit` tool in a
temporary git repository that uses this repository (at its current commit) as a hook repository:
a commit of a file with an error fails with the diagnostic, a good file commits, and
`onnxsc-fix` fixes what it can. pre-commit builds and installs onnxsc into an environment of its
own, as it would for a user; the first run takes minutes.
"""

from __future__ import annotations

import os
import sys
import shutil
import subprocess
from pathlib import Path

import pytest

import harness

BAD = "from onnxscript import opset18 as op\nfrom onnxscript import FLOAT, script\n\n\n@script()\ndef f(x: FLOAT) -> FLOAT:\n    return op.Relu(op.Ad(x, x))\n"
GOOD = BAD.replace("op.Ad(", "op.Add(")


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=check, timeout=1800)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    if shutil.which("pre-commit") is None and not (Path(sys.executable).parent / "pre-commit").exists():
        pytest.fail("pre-commit is not installed: it is in requirements-test.txt", pytrace=False)
    rev = git(harness.REPO_ROOT, "rev-parse", "HEAD").stdout.strip()
    repo = tmp_path_factory.mktemp("project")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "test@example.com")
    git(repo, "config", "user.name", "test")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {harness.REPO_ROOT}\n    rev: {rev}\n    hooks:\n      - id: onnxsc-check\n",
        encoding="utf-8",
    )
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-q", "-m", "config")
    pre_commit(repo, "install")
    return repo


def pre_commit(repo: Path, *args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "pre-commit"
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home")}
    return subprocess.run(
        [str(exe) if exe.exists() else "pre-commit", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=1800
    )


def commit(repo: Path, name: str, text: str) -> subprocess.CompletedProcess:
    (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", name)
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home")}
    return subprocess.run(
        ["git", "commit", "-m", f"add {name}"], cwd=repo, capture_output=True, text=True, env=env, timeout=1800
    )


def test_a_file_with_an_error_fails_the_commit_with_its_diagnostic(project: Path):
    done = commit(project, "bad.onnxs", BAD)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "onnxsc check" in output and "Failed" in output, output
    assert "E0402" in output and "did you mean `Add`?" in output, output
    assert "bad.onnxs" in git(project, "diff", "--cached", "--name-only").stdout


def test_a_good_file_commits(project: Path):
    git(project, "reset", "-q")
    (project / "bad.onnxs").unlink(missing_ok=True)
    done = commit(project, "good.onnxs", GOOD)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "onnxsc check" in done.stdout + done.stderr and "Passed" in done.stdout + done.stderr


def test_the_fix_hook_fixes_the_file(project: Path):
    config = project / ".pre-commit-config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("id: onnxsc-check", "id: onnxsc-fix"), encoding="utf-8")
    git(project, "add", ".pre-commit-config.yaml")
    (project / "fixme.onnxs").write_text(BAD, encoding="utf-8")
    # Staged, as a commit would have it: pre-commit sees a hook's changes to tracked files only.
    git(project, "add", "fixme.onnxs")
    done = pre_commit(project, "run", "onnxsc-fix", "--files", "fixme.onnxs")
    output = done.stdout + done.stderr
    # pre-commit fails a hook that changed files, so that the fixed file is looked at.
    assert done.returncode == 1 and "files were modified by this hook" in output, output
    assert (project / "fixme.onnxs").read_text(encoding="utf-8") == GOOD
    again = pre_commit(project, "run", "onnxsc-fix", "--files", "fixme.onnxs")
    assert again.returncode == 0, again.stdout + again.stderr
