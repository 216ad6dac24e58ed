#!/usr/bin/env python3
"""Benchmark: wall time of `onnxsc check` on small files, beside onnxscript on the same text.

The target is under 20 ms per `onnxsc check` of one small file, including process start and
loading the embedded ONNX, ONNX Runtime and PyTorch schemas. This is a measurement, not a test:
run it on a quiet machine and read the numbers.

    .venv/bin/python scripts/bench_check.py [--runs N] [FILE ...]

For each file it reports the median, minimum and 90th percentile of:
  - `onnxsc check FILE` (release build, a fresh process each run);
  - onnxscript 0.7.2 compiling the same text in one Python process started per run
    (`python -c "..."`), the way an exporter script would meet it. Its import time dominates,
    and is reported separately as `python + import onnxscript`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FILES = ["examples/tutorial.onnxs", "examples/language_tour.onnxs"]

ONNXSCRIPT_COMPILE = """
import sys, types
import onnxscript
src = open(sys.argv[1], encoding="utf-8").read()
module = types.ModuleType("bench_module")
module.__dict__["torch_op"] = lambda *a, **k: onnxscript.script()
exec(compile(src, sys.argv[1], "exec"), module.__dict__)
"""

IMPORT_ONLY = "import onnxscript"


def timed(cmd: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.decode()}")
    return times


def row(label: str, times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    return f"  {label:<34} median {statistics.median(ms):7.1f} ms   min {ms[0]:7.1f} ms   p90 {p90:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", default=DEFAULT_FILES)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--no-onnxscript", action="store_true", help="measure onnxsc only")
    args = parser.parse_args()

    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=REPO, check=True)
    onnxsc = os.path.join(REPO, "target", "release", "onnxsc")
    # One warm-up run so the page cache holds the binary.
    subprocess.run([onnxsc, "check", args.files[0]], cwd=REPO, capture_output=True)

    print(f"{args.runs} runs each; wall time per process")
    for f in args.files:
        print(f)
        print(row("onnxsc check", timed([onnxsc, "check", f], args.runs)))
        if not args.no_onnxscript:
            print(row("onnxscript @script (fresh python)", timed([sys.executable, "-c", ONNXSCRIPT_COMPILE, f], args.runs)))
    if not args.no_onnxscript:
        print(row("python + import onnxscript", timed([sys.executable, "-c", IMPORT_ONLY], args.runs)))


if __name__ == "__main__":
    main()
