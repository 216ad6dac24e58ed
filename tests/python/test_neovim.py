"""A headless Neovim, configured with the documented `init.lua`, attaches `onnxsc lsp` to a
buffer and receives its diagnostics.

`scripts/test` installs Debian's `neovim` (0.7). The test copies docs/editors.md's Neovim
block as it is into `init.lua`, puts the binary under test first on `PATH` as `onnxsc`, opens the file,
and runs `tests/python/neovim/smoke.lua`, which waits for the diagnostics of the buffer and
writes them out: the configuration users copy is the one tested.
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


def documented_init_lua() -> str:
    """docs/editors.md's Neovim configuration: the first ```lua block after "## Neovim"."""
    text = (harness.REPO_ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    after = text[text.index("## Neovim") :]
    start = after.index("```lua\n") + len("```lua\n")
    return after[start : after.index("```", start)]

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
    init = tmp_path / "init.lua"
    init.write_text(documented_init_lua(), encoding="utf-8")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "onnxsc").symlink_to(onnxsc_bin)
    env = {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "ONNXSC_OUT": str(out),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    subprocess.run(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", str(init), "-c", f"luafile {SMOKE}", str(src)],
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
