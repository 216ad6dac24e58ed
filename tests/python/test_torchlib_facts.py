"""`python -m onnxsc test --facts-only` over torchlib's eight verbatim modules
(`scripts/optest-torchlib`): every call of every operator judged by its facts, in about two
minutes, as a regression test of the shape rules, PyTorch's answer and the scripted check over a
whole real library.

* No call meets a crash of onnxsc (a failure of kind `crash`: the server ended).
* Each operator's verdict is the recorded one (`torchlib_facts.txt`): `ok`, `untested`, or
  `FAILED` with the code of its first failure. A change is a rule that changed what it says of a
  real translation: a fix, or a regression; the record is rewritten with
  `ONNXSC_RECORD_TORCHLIB_FACTS=1` and the difference reviewed in the commit.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="torch is installed by scripts/test")
pytest.importorskip("expecttest", reason="expecttest is installed by scripts/test")

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).parent / "torchlib_facts.txt"


def verdicts(report: str) -> dict:
    """``{operator: "ok" | "untested" | "FAILED E0907"}`` from a report."""
    out = {}
    for line in report.splitlines():
        m = re.match(r"^(\S+)\s+\d+\s+\d+\s+\d+\s+\S", line)
        if m and "::" in m.group(1):
            out[m.group(1)] = "ok"
    for line in report.splitlines():
        m = re.match(r"^(\S+): FAILED \d+ .*?; first: (.*)$", line)
        if m:
            code = re.search(r"error\[(E\d+)\]", m.group(2))
            out[m.group(1)] = f"FAILED {code.group(1) if code else 'refused'}"
        m = re.match(r"^(\S+): UNTESTED", line)
        if m and not out.get(m.group(1), "").startswith("FAILED"):
            out[m.group(1)] = "untested"
    return out


def test_torchlib_by_its_facts_alone_is_as_recorded():
    done = subprocess.run(
        ["./scripts/optest-torchlib", "--facts-only", "--no-shrink", "--allow-untested", "--jobs", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=1800,
    )
    report = done.stdout
    assert report.strip().splitlines()[-1].startswith("onnxsc test: 486 operators"), report[-2000:] + done.stderr[-2000:]
    assert "the onnxsc server of this library" not in report, "onnxsc crashed on a call:\n" + report
    found = verdicts(report)
    text = "".join(f"{name} {verdict}\n" for name, verdict in sorted(found.items()))
    if os.environ.get("ONNXSC_RECORD_TORCHLIB_FACTS"):
        RECORD.write_text(text, encoding="utf-8")
    recorded = dict(line.split(" ", 1) for line in RECORD.read_text(encoding="utf-8").splitlines())
    changed = [
        f"{name}: recorded {recorded.get(name, '-')}, now {found.get(name, '-')}"
        for name in sorted(set(recorded) | set(found))
        if recorded.get(name) != found.get(name)
    ]
    assert not changed, "verdicts by the facts that changed (ONNXSC_RECORD_TORCHLIB_FACTS=1 records them):\n" + "\n".join(changed)
