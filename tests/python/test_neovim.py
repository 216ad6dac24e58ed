"""A headless Neovim attaches `onnxsc lsp` to a buffer and receives its diagnostics.

`scripts/test` installs Debian's `neovim`; the editor runs `tests/python/neovim/smoke.lua`
(`nvim --headless --clean`), which starts the server the way the README tells Neovim users
to, waits for the diagnostics of the buffer and writes them out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import harness

SMOKE = Path(__file__).parent / "neovim" / "smoke.lua"

SOURCE = '''from onnxscript import FLOAT, script
from onnxscript import opset18 as op


@script()
def f(x: FLOAT) -> FLOAT:
    # é𝔽: columns are counted by the editor, not in bytes.
    "é𝔽"; y = op.Softmaxx(x, axis=-1)
    return y
'''


def test_neovim_receives_the_diagnostics(onnxsc_bin: Path, tmp_path: Path):
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.fail("Neovim is not installed: `apt-get install neovim` (scripts/test does)", pytrace=False)
    src = tmp_path / "bad.onnxs"
    src.write_text(SOURCE, encoding="utf-8")
    out = tmp_path / "diagnostics.jsonl"
    env = {
        **os.environ,
        "ONNXSC_BIN": str(onnxsc_bin),
        "ONNXSC_FILE": str(src),
        "ONNXSC_OUT": str(out),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-c", f"luafile {SMOKE}"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=True,
    )
    diags = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert diags and "timeout" not in diags[0], diags
    [d] = diags
    assert d["code"] == "E0402"
    assert d["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert "no operator `Softmaxx`" in d["message"] and "did you mean `Softmax`?" in d["message"]
    # Neovim's columns are byte offsets in the line, converted from the server's UTF-16 ones.
    line = SOURCE.splitlines()[7]
    start = len(line[: line.index("Softmaxx")].encode("utf-8"))
    assert (d["line"], d["col"], d["end_line"], d["end_col"]) == (7, start, 7, start + len("Softmaxx"))
