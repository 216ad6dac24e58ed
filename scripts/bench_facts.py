#!/usr/bin/env python3
"""What judging one call costs `python -m onnxsc test` by its facts alone (`--facts-only`),
against exporting the call and running it in ONNX Runtime (the default judging), side by side.

A benchmark, not a test: it prints numbers and asserts nothing about time.

torchlib's `ops/core.py` and `ops/nn.py` of the installed onnxscript are copied verbatim as
`.onnxs` files and compiled with `--skip-invalid`, as `scripts/optest-torchlib` does. For each
operator below, the calls `onnxsc test` makes for it (float32, seed 0) are taken in order, the
first `--calls` that PyTorch accepts. Each call is judged both ways, one after the other:

- facts: `facts.judge` (the eager run recording the operator's calls, each made as the exporter
  makes it and checked by the server: linked and walked for a scripted translation, traced for
  a trace-only one);
- export: `judge.export` and the judging of the one call in ONNX Runtime (values included).

Every call's facts are new to both, as in a run (each distinct call is judged once). The
figures are medians per operator and over every call, in milliseconds.

    ONNXSC_BIN=target/release/onnxsc PYTHONPATH=python .venv/bin/python scripts/bench_facts.py
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

OPERATORS = (
    "aten::linear",
    "aten::gelu",
    "aten::softmax.int",
    "aten::mean.dim",
    "aten::cat",
    "aten::transpose.int",
    "aten::addmm",
    "aten::layer_norm",
    "aten::convolution",
    "aten::max_pool2d",
)


def torchlib_entries() -> list:
    """The table entries of torchlib's `core` and `nn` modules of the installed onnxscript,
    copied verbatim as `.onnxs` files and compiled with `--skip-invalid`."""
    import onnxscript

    from onnxsc._optest import judge
    from onnxsc._table import compile_library, entries

    ops = pathlib.Path(onnxscript.__file__).parent / "function_libs" / "torch_lib" / "ops"
    directory = pathlib.Path(tempfile.mkdtemp(prefix="bench-torchlib-"))
    try:
        for module in ("core", "nn"):
            shutil.copy(ops / f"{module}.py", directory / f"{module}.onnxs")
        with judge.quiet():
            data, model = compile_library([str(directory)], skip_invalid=True)
            return entries(model, data)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=8, help="calls judged per operator (default %(default)s)")
    args = parser.parse_args()

    import torch

    from onnxsc._optest import facts, judge
    from onnxsc._optest.run import Options, base_calls

    found = {e.qualname: e for e in torchlib_entries()}
    options = Options(dtypes=("float32",))
    rows = []
    every_facts: list = []
    every_export: list = []
    for name in OPERATORS:
        entry = found.get(name)
        if entry is None:
            print(f"{name}: not in the compiled copies", file=sys.stderr)
            continue
        rng = torch.Generator().manual_seed(0)
        calls = [c for c in base_calls(entry, options, rng) if judge.expected_of(c) is not None][: args.calls]
        by_facts, by_export = [], []
        for call in calls:
            start = time.perf_counter()
            facts.judge(entry, call)
            by_facts.append(time.perf_counter() - start)
            start = time.perf_counter()
            exported = judge.export(entry, call)
            if isinstance(exported, judge.Exported):
                exported.judge(call, judge.expected_of(call))
            by_export.append(time.perf_counter() - start)
        if not calls:
            continue
        every_facts += by_facts
        every_export += by_export
        rows.append((name, len(calls), statistics.median(by_facts), statistics.median(by_export)))

    print(f"{'operator':<22} {'calls':>5} {'facts ms':>9} {'export ms':>10} {'ratio':>7}")
    for name, n, f, e in rows:
        print(f"{name:<22} {n:>5} {f * 1e3:>9.1f} {e * 1e3:>10.1f} {e / f:>6.0f}x")
    if every_facts:
        f, e = statistics.median(every_facts), statistics.median(every_export)
        print(f"{'every call':<22} {len(every_facts):>5} {f * 1e3:>9.1f} {e * 1e3:>10.1f} {e / f:>6.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
