#!/usr/bin/env python3
"""Benchmark: how long `onnxsc lsp` takes to re-check after a one-character edit, beside the time
of a full `onnxsc build` of the same file. A measurement, not a test: run it on a quiet machine.

    python3 scripts/bench_lsp.py [--functions 1000] [--edits 40]

For a typical file (examples/tutorial.onnxs) and a generated file of N functions, it reports:
  - `onnxsc build FILE -o OUT` (release build, a fresh process each run), wall time;
  - the language server's re-check latency: from sending a one-character `didChange` (an edit
    inside one function's body, alternately breaking and repairing an op name) to receiving the
    `publishDiagnostics` for that version, over stdio, as an editor sees it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_check import row  # the same table rows as bench_check.py

REPO = Path(__file__).resolve().parents[1]


def generated(n: int) -> str:
    head = "from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\n\nEPS = 1e-5\n"
    body = []
    for i in range(n):
        body.append(
            f'''

@script()
def f{i}(x: FLOAT, y: FLOAT, alpha: float = 1.0) -> FLOAT:
    """Function {i}."""
    z = op.Add(x, y)
    w = op.Mul(z, op.CastLike(alpha, z))
    if alpha > 0.5:
        r = op.Relu(w)
    else:
        r = op.Sigmoid(w + EPS)
    return op.Softmax(r, axis=-1)
'''
        )
    return head + "".join(body)


class Server:
    """A minimal LSP client over the server's stdin and stdout."""

    def __init__(self, binary: Path, cache: str):
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        self.proc = subprocess.Popen([str(binary), "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.next_id = 0

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict:
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit("the server exited")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            m = self.read()
            if m.get("id") == self.next_id and "method" not in m:
                return m

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics_for(self, uri: str, version: int) -> list:
        while True:
            m = self.read()
            p = m.get("params", {})
            if m.get("method") == "textDocument/publishDiagnostics" and p.get("uri") == uri and p.get("version") == version:
                return p["diagnostics"]

    def close(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait(timeout=30)


def recheck_latencies(binary: Path, path: Path, edits: int, cache: str) -> tuple[float, list[float]]:
    text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    server = Server(binary, cache)
    server.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}})
    server.notify("initialized", {})
    start = time.perf_counter()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    server.diagnostics_for(uri, 1)
    first = time.perf_counter() - start
    # The edit: the last letter of the file's last `op.Name(` becomes `q` and back.
    call = list(re.finditer(r"op\.[A-Z][A-Za-z]*\(", text))[-1]
    index = call.end() - 2
    original = text[index]
    line = text.count("\n", 0, index)
    character = index - (text.rfind("\n", 0, index) + 1)
    times = []
    for k in range(edits):
        time.sleep(0.15)  # a pause between keystrokes, as when typing
        version = k + 2
        change = {
            "range": {"start": {"line": line, "character": character}, "end": {"line": line, "character": character + 1}},
            "text": "q" if k % 2 == 0 else original,
        }
        t = time.perf_counter()
        server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        )
        diags = server.diagnostics_for(uri, version)
        times.append(time.perf_counter() - t)
        expected_error = k % 2 == 0
        if any(d["code"] == "E0402" for d in diags) != expected_error:
            sys.exit(f"unexpected diagnostics after edit {k}: {diags}")
    server.close()
    return first, times


def build_times(binary: Path, path: Path, runs: int, out: Path) -> list[float]:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([str(binary), "build", str(path), "-o", str(out)], check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--builds", type=int, default=10)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=REPO, check=True)
    binary = REPO / "target" / "release" / "onnxsc"
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / f"generated_{args.functions}.onnxs"
        big.write_text(generated(args.functions), encoding="utf-8")
        cases = [(REPO / "examples" / "tutorial.onnxs", "typical file (tutorial.onnxs)"), (big, f"{args.functions} functions")]
        for path, label in cases:
            lines = path.read_text(encoding="utf-8").count("\n")
            print(f"{label}: {lines} lines")
            print(row("onnxsc build (fresh process)", build_times(binary, path, args.builds, Path(tmp) / "out.onnx")))
            first, times = recheck_latencies(binary, path, args.edits, tmp)
            print(f"  {'lsp: first check after didOpen':<34} {first * 1000:7.1f} ms")
            print(row("lsp: re-check after a 1-char edit", times))


if __name__ == "__main__":
    main()
