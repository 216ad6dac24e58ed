#!/usr/bin/env python3
"""Hostile inputs against the `onnxsc` binary, and the contract each must keep.

Every case is generated into a fresh temporary directory and run once. The contract
(docs/robustness.md):

- the run ends with exit status 0, 1 or 2 (no panic, no signal) within 10 seconds;
- its peak resident memory stays under 2 GB;
- every input is left as it was: same bytes, same kind of file (a FIFO stays a FIFO, a symlink
  stays a symlink to the same target);
- an output it writes passes `onnx.checker.check_model`.

A test of the product, not a benchmark: run it against a release build,

    cargo build --release
    .venv/bin/python scripts/hostile.py [--bin target/release/onnxsc] [-k NAME] [--keep DIR]

It prints one line per case and exits 1 when any case breaks the contract. The cases follow the
classes of issue 14 (super-linear time and memory, outputs that are inputs, special files,
protobuf amplification, exponential inlining); the fuzz targets in `fuzz/` cover the rest.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TIME_LIMIT = 10.0
MEMORY_LIMIT = 2 * 1024**3

HEADER = "from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\n\n"


@dataclass
class Case:
    name: str
    args: list[str]
    # Files the run must leave as they were (besides every file the case created before the run).
    outputs: list[str] = field(default_factory=list)
    # Exit statuses the case may end with; all of 0, 1, 2 by default.
    allowed: tuple[int, ...] = (0, 1, 2)
    # Seconds the generator may take before the run (not counted).
    stdin: bytes | None = None


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def write(d: Path, name: str, text: str | bytes) -> str:
    p = d / name
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        p.write_text(text)
    else:
        p.write_bytes(text)
    return str(p)


def function(name: str, body: str) -> str:
    return f"@script()\ndef {name}(x: FLOAT) -> FLOAT:\n{body}"


# --- protobuf by hand (so the script needs onnx only to check outputs) -------------------------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def field_int(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def value_info(name: bytes) -> bytes:
    """A float tensor of unknown shape."""
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, field_int(1, 1) + field_bytes(2, b"")))


def opset(domain: str, version: int) -> bytes:
    return field_bytes(1, domain.encode()) + field_int(2, version)


# --- the cases ----------------------------------------------------------------------------------


@case
def if_elif_chain(d: Path) -> Case:
    """10,000 branches (80 s before): time linear in the chain."""
    lines = ["    y = x", "    if op.ReduceSum(x) > 0.0:", "        y = op.Neg(x)"]
    for i in range(10_000):
        lines += [f"    elif op.ReduceSum(x) > {float(i)}:", f"        y = op.Add(x, x)"]
    lines += ["    else:", "        y = op.Abs(x)", "    return y", ""]
    src = write(d, "chain.onnxs", HEADER + function("f", "\n".join(lines) + "\n"))
    return Case("if_elif_chain", ["check", src])


@case
def long_misspelt_name(d: Path) -> Case:
    name = "v" * 100_000
    src = write(d, "m.onnxs", HEADER + function("f", f"    return op.Add(x, {name})\n"))
    return Case("long_misspelt_name", ["check", src])


@case
def many_misspelt_names(d: Path) -> Case:
    body = "".join(f"    y{i} = op.Add(x, undefined_{i})\n" for i in range(4000))
    params = "\n".join(f"    a{i} = x" for i in range(4000))
    src = write(d, "m.onnxs", HEADER + function("f", params + "\n" + body + "    return x\n"))
    return Case("many_misspelt_names", ["check", src])


@case
def huge_op_name(d: Path) -> Case:
    src = write(d, "m.onnxs", HEADER + function("f", f"    return op.A{'d' * 1_000_000}(x, x)\n"))
    return Case("huge_op_name", ["check", src])


@case
def huge_torch_op_name(d: Path) -> Case:
    text = HEADER + f'@torch_op("aten::{"a" * 1_000_000}")\ndef f(self):\n    return op.Abs(self)\n'
    src = write(d, "m.onnxs", text)
    return Case("huge_torch_op_name", ["check", src])


@case
def nul_line(d: Path) -> Case:
    src = write(d, "nul.onnxs", "x = 1\n" + "\0" * 1_000_000 + "\n")
    return Case("nul_line", ["check", src])


@case
def accented_line(d: Path) -> Case:
    src = write(d, "e.onnxs", "x = 1\n" + "é" * 500_000 + "\n")
    return Case("accented_line", ["check", src])


@case
def scattered_bad_characters(d: Path) -> Case:
    src = write(d, "s.onnxs", "x = 1\n" + "$ " * 500_000 + "\n")
    return Case("scattered_bad_characters", ["check", src])


@case
def json_long_line(d: Path) -> Case:
    src = write(d, "j.onnxs", "x = 1\n" + "é" * 500_000 + "\n")
    return Case("json_long_line", ["check", "--format", "json", src])


@case
def schema_with_many_arguments(d: Path) -> Case:
    args = ", ".join(f"Tensor a{i}" for i in range(100_000))
    schema = write(d, "s.yaml", f"- func: mylib::many({args}) -> Tensor\n")
    src = write(d, "m.onnxs", HEADER + function("f", "    return op.Abs(x)\n"))
    return Case("schema_with_many_arguments", ["check", "--schema", schema, src])


@case
def custom_op_with_many_arguments(d: Path) -> Case:
    n = 100_000
    args = ", ".join(f"Tensor a{i}" for i in range(n))
    params = ", ".join(f"a{i}" for i in range(n))
    text = ("import torch\n" + HEADER + "from onnxscript.function_libs.torch_lib.registration import torch_op\n\n"
            f'torch.library.define("mylib::many", "({args}) -> Tensor")\n\n'
            f'@torch_op("mylib::many")\ndef f({params}):\n    return op.Abs(a0)\n')
    src = write(d, "m.onnxs", text)
    return Case("custom_op_with_many_arguments", ["check", src])


@case
def deep_subscripts(d: Path) -> Case:
    src = write(d, "s.onnxs", HEADER + function("f", f"    y = op.Identity(x)\n    return y{'[0]' * 10_000}\n"))
    return Case("deep_subscripts", ["build", src, "-o", str(d / "out.onnx")], outputs=[str(d / "out.onnx")])


@case
def module_chain(d: Path) -> Case:
    n = 2000
    for i in range(n):
        nxt = f"from m{i + 1} import g{i + 1}\n" if i + 1 < n else ""
        body = f"    return g{i + 1}(x)\n" if i + 1 < n else "    return op.Abs(x)\n"
        write(d, f"m{i}.onnxs", HEADER + nxt + f"\n@script()\ndef g{i}(x: FLOAT) -> FLOAT:\n{body}")
    return Case("module_chain", ["check", str(d / "m0.onnxs")])


@case
def module_chain_as_namespaces(d: Path) -> Case:
    n = 2000
    for i in range(n):
        nxt = f"import m{i + 1}\n" if i + 1 < n else ""
        body = f"    return m{i + 1}.g{i + 1}(x)\n" if i + 1 < n else "    return op.Abs(x)\n"
        write(d, f"m{i}.onnxs", HEADER + nxt + f"\n@script()\ndef g{i}(x: FLOAT) -> FLOAT:\n{body}")
    return Case("module_chain_as_namespaces", ["check", str(d / "m0.onnxs")])


@case
def nested_module_chain(d: Path) -> Case:
    """Each module imports the next one a directory down: paths grow with the depth."""
    n = 1500
    path = d
    for i in range(n):
        nxt = f"from .p.m{i + 1} import g{i + 1}\n" if i + 1 < n else ""
        body = f"    return g{i + 1}(x)\n" if i + 1 < n else "    return op.Abs(x)\n"
        write(path, f"m{i}.onnxs", HEADER + nxt + f"\n@script()\ndef g{i}(x: FLOAT) -> FLOAT:\n{body}")
        path = path / "p"
    return Case("nested_module_chain", ["check", str(d / "m0.onnxs")])


@case
def many_small_functions(d: Path) -> Case:
    parts = [HEADER]
    for i in range(200_000):
        parts.append(f"@script()\ndef f{i}(x: FLOAT) -> FLOAT:\n    return op.Abs(x)\n\n")
    src = write(d, "big.onnxs", "".join(parts))
    return Case("many_small_functions", ["check", src])


LIMIT = 4 << 20  # the most source one compilation reads (driver::files::MAX_SOURCE_BYTES)


def fill(d: Path, name: str, head: str, unit, tail: str = "") -> str:
    """A source of just under the limit: `head`, then `unit(i)` for i = 0, 1, ... , then `tail`."""
    parts, size, i = [head], len(head) + len(tail), 0
    while True:
        u = unit(i)
        if size + len(u) > LIMIT - 16:
            break
        parts.append(u)
        size += len(u)
        i += 1
    return write(d, name, "".join(parts) + tail)


@case
def limit_of_small_functions(d: Path) -> Case:
    """The densest source the limit allows: 4 MiB of the smallest functions (ONNX refuses
    over 10,000 in a library, so this is E1003 after compiling them all)."""
    src = fill(d, "small.onnxs", HEADER, lambda i: f"def f{i}(x):\n    return op.Abs(x)\n")
    out = str(d / "lib.onnx")
    return Case("limit_of_small_functions", ["build", src, "-o", out], outputs=[out])


@case
def limit_of_statements(d: Path) -> Case:
    src = fill(d, "stmts.onnxs", HEADER + "@script()\ndef f(x: FLOAT) -> FLOAT:\n",
               lambda i: f"    x{i} = op.Abs(x)\n", "    return x\n")
    out = str(d / "lib.onnx")
    return Case("limit_of_statements", ["build", src, "-o", out], outputs=[out])


@case
def limit_of_one_sum(d: Path) -> Case:
    src = fill(d, "sum.onnxs", HEADER + "@script()\ndef f(x: FLOAT) -> FLOAT:\n    return x", lambda i: " + x", "\n")
    out = str(d / "lib.onnx")
    return Case("limit_of_one_sum", ["build", src, "-o", out], outputs=[out])


@case
def limit_of_arguments(d: Path) -> Case:
    src = fill(d, "args.onnxs", HEADER + "@script()\ndef f(x: FLOAT) -> FLOAT:\n    return op.Concat(x",
               lambda i: ", x", ", axis=0)\n")
    out = str(d / "lib.onnx")
    return Case("limit_of_arguments", ["build", src, "-o", out], outputs=[out])


@case
def limit_of_statements_with_ifs(d: Path) -> Case:
    src = fill(d, "ifs.onnxs", HEADER + "@script()\ndef f(x: FLOAT, k: int = 0) -> FLOAT:\n",
               lambda i: f"    if k == {i}:\n        x = op.Abs(x)\n", "    return x\n")
    out = str(d / "lib.onnx")
    return Case("limit_of_statements_with_ifs", ["build", src, "-o", out], outputs=[out])


@case
def over_ten_thousand_functions(d: Path) -> Case:
    parts = [HEADER]
    for i in range(10_001):
        parts.append(f"@script()\ndef f{i}(x: FLOAT) -> FLOAT:\n    return op.Abs(x)\n\n")
    src = write(d, "big.onnxs", "".join(parts))
    out = str(d / "lib.onnx")
    return Case("over_ten_thousand_functions", ["build", src, "-o", out], outputs=[out])


@case
def build_over_its_source(d: Path) -> Case:
    src = write(d, "a.onnxs", HEADER + function("f", "    return op.Abs(x)\n"))
    return Case("build_over_its_source", ["build", src, "-o", src], allowed=(2,))


@case
def build_text_over_its_source(d: Path) -> Case:
    src = write(d, "a.onnxs", HEADER + function("f", "    return op.Abs(x)\n"))
    return Case("build_text_over_its_source", ["build", src, "--emit", "text", "-o", src], allowed=(2,))


@case
def build_over_its_source_through_a_symlink(d: Path) -> Case:
    src = write(d, "a.onnxs", HEADER + function("f", "    return op.Abs(x)\n"))
    os.symlink(src, d / "alias.onnx")
    return Case("build_over_its_source_through_a_symlink", ["build", src, "-o", str(d / "alias.onnx")], allowed=(2,))


@case
def build_into_a_directory_input(d: Path) -> Case:
    src = write(d, "lib/a.onnxs", HEADER + function("f", "    return op.Abs(x)\n"))
    return Case("build_into_a_directory_input", ["build", str(d / "lib"), "-o", src], allowed=(2,))


def library_bytes(d: Path) -> tuple[str, str]:
    """A model that calls `lib.d::f`, and a library that defines it (built by onnxsc)."""
    src = write(d, "lib.onnxs", 'import onnxscript\n' + HEADER + 'd = onnxscript.values.Opset("lib.d", 1)\n\n'
                "@script(d)\ndef f(x: FLOAT) -> FLOAT:\n    return op.Abs(x)\n")
    lib = str(d / "lib.onnx")
    subprocess.run([BIN, "build", src, "-o", lib], check=True, capture_output=True)
    node = field_bytes(1, b"x") + field_bytes(2, b"y") + field_bytes(4, b"f") + field_bytes(7, b"lib.d")
    graph = field_bytes(1, node) + field_bytes(2, b"g") + field_bytes(11, value_info(b"x")) + field_bytes(12, value_info(b"y"))
    model = field_int(1, 10) + field_bytes(7, graph) + field_bytes(8, opset("", 18)) + field_bytes(8, opset("lib.d", 1))
    return write(d, "m.onnx", model), lib


@case
def link_over_the_model(d: Path) -> Case:
    m, lib = library_bytes(d)
    return Case("link_over_the_model", ["link", m, lib, "-o", m], allowed=(2,))


@case
def link_over_the_library(d: Path) -> Case:
    m, lib = library_bytes(d)
    return Case("link_over_the_library", ["link", m, lib, "-o", lib], allowed=(2,))


@case
def link_into_a_fifo(d: Path) -> Case:
    m, lib = library_bytes(d)
    fifo = d / "out.onnx"
    os.mkfifo(fifo)
    # Nobody reads the FIFO: the run must not block on it, nor replace it by a file.
    return Case("link_into_a_fifo", ["link", m, lib, "-o", str(fifo)], allowed=(2,))


@case
def build_into_a_symlink(d: Path) -> Case:
    src = write(d, "a.onnxs", HEADER + function("f", "    return op.Abs(x)\n"))
    real = write(d, "real.onnx", b"")
    os.symlink(real, d / "out.onnx")
    return Case("build_into_a_symlink", ["build", src, "-o", str(d / "out.onnx")], outputs=[real])


@case
def library_with_undeclared_domain(d: Path) -> Case:
    m, _ = library_bytes(d)
    node = field_bytes(1, b"x") + field_bytes(2, b"y") + field_bytes(4, b"Gelu") + field_bytes(7, b"com.microsoft")
    fn = (field_bytes(1, b"f") + field_bytes(4, b"x") + field_bytes(5, b"y") + field_bytes(7, node)
          + field_bytes(9, opset("", 18)) + field_bytes(10, b"lib.d"))
    lib = write(d, "bad.onnx", field_int(1, 10) + field_bytes(8, opset("", 18)) + field_bytes(25, fn))
    out = str(d / "out.onnx")
    return Case("library_with_undeclared_domain", ["link", m, lib, "-o", out], outputs=[out])


@case
def library_of_identical_functions(d: Path) -> Case:
    m, _ = library_bytes(d)
    fn = field_bytes(1, b"f") + field_bytes(10, b"lib.d")
    lib = write(d, "dup.onnx", field_int(1, 10) + field_bytes(25, fn) * 100_000)
    out = str(d / "out.onnx")
    return Case("library_of_identical_functions", ["link", m, lib, "-o", out], outputs=[out])


@case
def empty_functions_amplification(d: Path) -> Case:
    m, _ = library_bytes(d)
    lib = write(d, "empty.onnx", field_int(1, 10) + field_bytes(25, b"") * 10_000_000)
    out = str(d / "out.onnx")
    return Case("empty_functions_amplification", ["link", m, lib, "-o", out], outputs=[out])


@case
def empty_nodes_amplification(d: Path) -> Case:
    _, lib = library_bytes(d)
    graph = field_bytes(1, b"") * 10_000_000
    m = write(d, "m.onnx", field_int(1, 10) + field_bytes(7, graph) + field_bytes(8, opset("", 18)))
    out = str(d / "out.onnx")
    return Case("empty_nodes_amplification", ["link", m, lib, "-o", out], outputs=[out])


@case
def exponential_inlining(d: Path) -> Case:
    """f0 calls f1 twice, f1 calls f2 twice, ... f29: 2^30 nodes once inlined."""
    depth = 30
    fns = b""
    for i in range(depth):
        if i + 1 < depth:
            call = lambda a, b: (field_bytes(1, a) + field_bytes(2, b) + field_bytes(4, f"f{i + 1}".encode())  # noqa: E731
                                 + field_bytes(7, b"chain"))
            nodes = field_bytes(7, call(b"x", b"t")) + field_bytes(7, call(b"t", b"y"))
        else:
            nodes = field_bytes(7, field_bytes(1, b"x") + field_bytes(2, b"y") + field_bytes(4, b"Abs")
                                + field_bytes(7, b""))
        fns += field_bytes(25, field_bytes(1, f"f{i}".encode()) + field_bytes(4, b"x") + field_bytes(5, b"y")
                           + nodes + field_bytes(9, opset("", 18)) + field_bytes(9, opset("chain", 1))
                           + field_bytes(10, b"chain"))
    node = field_bytes(1, b"x") + field_bytes(2, b"y") + field_bytes(4, b"f0") + field_bytes(7, b"chain")
    graph = field_bytes(1, node) + field_bytes(2, b"g") + field_bytes(11, value_info(b"x")) + field_bytes(12, value_info(b"y"))
    model = (field_int(1, 10) + field_bytes(7, graph) + field_bytes(8, opset("", 18))
             + field_bytes(8, opset("chain", 1)) + fns)
    m = write(d, "m.onnx", model)
    out = str(d / "out.onnx")
    return Case("exponential_inlining", ["link", m, "--mode", "inline", "-o", out], outputs=[out])


@case
def dev_zero_input(d: Path) -> Case:
    return Case("dev_zero_input", ["check", "/dev/zero"], allowed=(2,))


@case
def dev_zero_in_a_directory(d: Path) -> Case:
    (d / "src").mkdir()
    os.symlink("/dev/zero", d / "src" / "zero.onnxs")
    return Case("dev_zero_in_a_directory", ["check", str(d / "src")], allowed=(2,))


@case
def fifo_input(d: Path) -> Case:
    os.mkfifo(d / "f.onnxs")
    return Case("fifo_input", ["check", str(d / "f.onnxs")], allowed=(2,))


@case
def dev_zero_model(d: Path) -> Case:
    _, lib = library_bytes(d)
    return Case("dev_zero_model", ["link", "/dev/zero", lib, "-o", str(d / "out.onnx")], allowed=(2,))


@case
def dev_zero_schema(d: Path) -> Case:
    src = write(d, "m.onnxs", HEADER + function("f", "    return op.Abs(x)\n"))
    return Case("dev_zero_schema", ["check", "--schema", "/dev/zero", src], allowed=(2,))


@case
def huge_source(d: Path) -> Case:
    src = write(d, "huge.onnxs", "#" * (40 * 1024 * 1024) + "\n")
    return Case("huge_source", ["check", src], allowed=(2,))


# --- running ------------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under root: its kind, and its bytes' hash or its link target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[str(p)] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[str(p)] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
            elif stat.S_ISFIFO(st.st_mode):
                out[str(p)] = ("fifo",)
            elif stat.S_ISDIR(st.st_mode):
                out[str(p)] = ("dir",)
    return out


def run(argv: list[str]) -> tuple[int | None, float, int, bytes]:
    """Exit status (None when killed at the time limit), seconds, peak RSS in bytes, stderr."""

    def limits():
        # A safety net so a blow-up cannot take the machine down; the contract is checked on RSS.
        resource.setrlimit(resource.RLIMIT_AS, (16 * 1024**3, 16 * 1024**3))

    start = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=limits)
    err = bytearray()
    os.set_blocking(p.stderr.fileno(), False)
    status = None
    rss = 0
    while True:
        try:
            chunk = p.stderr.read()
            if chunk and len(err) < 1 << 20:
                err += chunk[: (1 << 20) - len(err)]
        except (BlockingIOError, TypeError):
            pass
        pid, st, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            rss = usage.ru_maxrss * 1024
            status = os.waitstatus_to_exitcode(st)
            break
        if time.monotonic() - start > 3 * TIME_LIMIT:
            p.send_signal(signal.SIGKILL)
            _, st, usage = os.wait4(p.pid, 0)
            rss = usage.ru_maxrss * 1024
            status = None
            break
        time.sleep(0.01)
    p.returncode = status
    return status, time.monotonic() - start, rss, bytes(err)


def check_output(path: str) -> str | None:
    """None if the output is absent or passes onnx.checker; else the checker's complaint."""
    p = Path(path)
    if not p.exists() or not p.is_file() or p.stat().st_size == 0:
        return None
    import onnx

    try:
        onnx.checker.check_model(onnx.load(str(p), load_external_data=False))
    except Exception as e:  # noqa: BLE001 - any refusal is the finding
        return str(e).splitlines()[0][:200]
    return None


def main() -> int:
    global BIN
    sys.setrecursionlimit(20_000)  # the deep-directory cases
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "onnxsc"))
    ap.add_argument("-k", default="", help="run only the cases whose name contains this")
    ap.add_argument("--keep", help="generate the cases under this directory and keep them")
    args = ap.parse_args()
    BIN = args.bin
    failures = 0
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="onnxsc-hostile-"))
    try:
        for name, make in CASES.items():
            if args.k not in name:
                continue
            d = root / name
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            c = make(d)
            before = {k: v for k, v in snapshot(d).items() if k not in c.outputs}
            status, seconds, rss, err = run([BIN, "--color", "never", *c.args])
            after = snapshot(d)
            problems = []
            if status is None:
                problems.append("killed after 30 s")
            elif status not in c.allowed:
                problems.append(f"exit {status}, expected {' or '.join(map(str, c.allowed))}")
            if seconds > TIME_LIMIT:
                problems.append(f"{seconds:.1f} s")
            if rss > MEMORY_LIMIT:
                problems.append(f"{rss / 1024**3:.1f} GB")
            for k, v in before.items():
                if after.get(k) != v:
                    problems.append(f"changed {Path(k).relative_to(d)}: {v[0]} -> {after.get(k, ('gone',))[0]}")
            if status == 0:
                for o in c.outputs:
                    bad = check_output(o)
                    if bad:
                        problems.append(f"onnx.checker rejects {Path(o).name}: {bad}")
            last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            verdict = "FAIL " + "; ".join(problems) if problems else "ok"
            print(f"{name:45} exit {status!s:4} {seconds:6.2f} s {rss / 1024**2:7.0f} MB  {verdict}  | {last[0][:90]}",
                  flush=True)
            failures += bool(problems)
            if not args.keep:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{failures} failed, {sum(1 for n in CASES if args.k in n) - failures} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
