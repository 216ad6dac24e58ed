#!/usr/bin/env python3
"""Wall time of `onnxsc link --mode inline` beside onnx's C++ inliner and onnx_ir's InlinePass.

A benchmark, not a test. Each tool reads the same exported-style model from disk (a chain of
calls into a private domain, the called functions carried by the model, some with attribute
defaults, attribute-only conditions and nested calls), inlines every call and writes the result
to disk; the time includes loading and saving. onnx_ir's InlinePass is quadratic, so it runs only
at the smallest sizes. The last columns say whether each output runs in ONNX Runtime and agrees
with what the unlinked model computes (onnx's C++ inliner drops attribute defaults, so its output
does not load); the reference values come from numpy, as ONNX Runtime's own inlining of the
unlinked model is quadratic too.

    cargo build --release
    .venv/bin/python scripts/bench_link.py [--sizes 1000,2000,...] [--onnx-ir-max 1000]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

REPO = Path(__file__).resolve().parent.parent
D = "bench.link"

LIBRARY = '''
import onnxscript
from onnxscript import FLOAT, opset18 as op, script

bench = onnxscript.values.Opset("bench.link", 1)


@script(bench)
def scaled(x: FLOAT, alpha: float = 1.0) -> FLOAT:
    if alpha != 1.0:
        x = op.Mul(x, op.CastLike(alpha, x))
    return op.Add(x, x)


@script(bench)
def shift(x: FLOAT, by: float = 0.5) -> FLOAT:
    return op.Sub(x, op.CastLike(by, x))


@script(bench)
def nested(x: FLOAT, alpha: float = 0.5) -> FLOAT:
    return scaled(shift(x, by=alpha), alpha=alpha)
'''


def build_library(onnxsc: Path, workdir: Path) -> onnx.ModelProto:
    src = workdir / "bench_lib.onnxs"
    src.write_text(LIBRARY)
    out = workdir / "bench_lib.onnx"
    subprocess.run([str(onnxsc), "build", str(src), "-o", str(out)], check=True, capture_output=True)
    return onnx.load(str(out))


def make_model(sites: int, library: onnx.ModelProto) -> onnx.ModelProto:
    """A chain of `sites` calls, four kinds in turn (given attributes, defaults, nested); every
    four calls subtract 2, so the output still depends on the input."""
    nodes = []
    prev = "x"
    for i in range(sites):
        out = f"v{i}"
        kind = i % 4
        if kind == 0:
            nodes.append(helper.make_node("scaled", [prev], [out], name=f"call{i}", domain=D, alpha=0.25))
        elif kind == 1:
            nodes.append(helper.make_node("shift", [prev], [out], name=f"call{i}", domain=D))
        elif kind == 2:
            nodes.append(helper.make_node("nested", [prev], [out], name=f"call{i}", domain=D))
        else:
            # The default alpha: x + x, no If after specialisation.
            nodes.append(helper.make_node("scaled", [prev], [out], name=f"call{i}", domain=D))
        prev = out
    graph = helper.make_graph(
        nodes,
        "bench",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4])],
    )
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(D, 1)],
        functions=list(library.functions),
        ir_version=10,
    )


def expected_output(sites: int, x: np.ndarray) -> np.ndarray:
    """What the chain computes, in float32 as ONNX Runtime does, without building a session on
    the unlinked model (ONNX Runtime's own inlining of local functions is quadratic too)."""
    v = x.astype(np.float32)
    f = np.float32
    for i in range(sites):
        kind = i % 4
        if kind == 0:
            v = v * f(0.25)
            v = v + v
        elif kind == 1:
            v = v - f(0.5)
        elif kind == 2:
            v = (v - f(0.5)) * f(0.5)
            v = v + v
        else:
            v = v + v
    return v


def timed(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def run_onnxsc(onnxsc: Path, model: Path, out: Path) -> None:
    proc = subprocess.run([str(onnxsc), "link", str(model), "-o", str(out), "--mode", "inline"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)


def run_onnx_inliner(model: Path, out: Path) -> None:
    import onnx.inliner

    onnx.save(onnx.inliner.inline_local_functions(onnx.load(str(model))), str(out))


def run_onnx_ir(model: Path, out: Path) -> None:
    import onnx_ir as ir
    from onnx_ir.passes.common import InlinePass

    m = ir.load(str(model))
    InlinePass()(m)
    ir.save(m, str(out))


def agrees(path: Path, expected: np.ndarray, x: np.ndarray) -> str:
    """"yes" if the output runs in ONNX Runtime and matches the unlinked model."""
    import onnxruntime as ort

    try:
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        got = sess.run(None, {"x": x})[0]
    except Exception as e:  # noqa: BLE001 — report, do not stop the benchmark
        # ONNX Runtime's reason, without its source location and function name.
        reason = re.sub(r"^\S+:\d+ \S+ ", "", str(e).rsplit("FAIL : ", 1)[-1].strip())
        return "refused: " + " ".join(reason.split())[:60]
    return "yes" if np.allclose(got, expected, rtol=1e-4, atol=1e-5) else "WRONG VALUES"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,2000,5000,10000,20000,40000")
    ap.add_argument("--onnx-ir-max", type=int, default=1000, help="largest size to run onnx_ir's InlinePass on")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--verify-max", type=int, default=20000, help="largest size whose outputs are run in ONNX Runtime")
    ap.add_argument("--onnxsc", type=Path, default=REPO / "target" / "release" / "onnxsc")
    args = ap.parse_args()
    if not args.onnxsc.is_file():
        print(f"{args.onnxsc} not found: run `cargo build --release` first", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",")]
    x = np.linspace(-1, 1, 4).astype(np.float32)

    import onnxruntime as ort

    print(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}; best of {args.repeat}; times include load and save\n")
    header = f"{'call sites':>10}  {'nodes out':>9}  {'onnxsc':>8}  {'us/site':>7}  {'onnx C++':>8}  {'speedup':>7}  {'onnx_ir':>8}  onnxsc output  onnx C++ output"
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        library = build_library(args.onnxsc, tmp)
        for n in sizes:
            model = make_model(n, library)
            path = tmp / f"model_{n}.onnx"
            onnx.save(model, str(path))
            expected = expected_output(n, x)
            ours, theirs = tmp / f"onnxsc_{n}.onnx", tmp / f"onnx_{n}.onnx"
            t_ours = timed(lambda: run_onnxsc(args.onnxsc, path, ours), args.repeat)
            t_onnx = timed(lambda: run_onnx_inliner(path, theirs), args.repeat)
            t_ir = "-"
            if n <= args.onnx_ir_max:
                t_ir = f"{timed(lambda: run_onnx_ir(path, tmp / f'ir_{n}.onnx'), 1):7.2f}s"
            nodes_out = len(onnx.load(str(ours)).graph.node)
            verdict = (lambda p: agrees(p, expected, x)) if n <= args.verify_max else (lambda p: "not run")
            print(
                f"{n:>10}  {nodes_out:>9}  {t_ours:7.3f}s  {t_ours / n * 1e6:7.1f}  {t_onnx:7.3f}s  {t_onnx / t_ours:6.1f}x  {t_ir:>8}  "
                f"{verdict(ours):<13}  {verdict(theirs)}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
