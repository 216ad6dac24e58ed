#!/usr/bin/env python3
"""Benchmark: compile throughput beside onnxscript, growth with size, cold start, peak memory.

A measurement, not a test: run it on a quiet machine and read the numbers.

    .venv/bin/python scripts/bench_compile.py [--sizes 10 1000 10000] [--repeat 3] [--cold-runs 30]

The workload is N copies of one typical translation (an attribute-only `if`, 13 nodes, literals
that are CastLike'd, `Where` and `ReduceSum`), each under its own name, in one module.

- Throughput: `onnxsc build FILE -o OUT` as a whole process (start, schemas, parse, check,
  lower, emit, write), best of `--repeat`; onnxscript 0.7.2 compiling the same text in process
  (`@script()` on every function, its import not counted), best of `--repeat`. onnxscript is
  skipped above `--onnxscript-max` functions (it takes minutes) and its per-function time at the
  largest measured size is used to estimate the ratio there, marked `~`.
- Growth: onnxsc's time at each size relative to the smallest size above 100.
- Cold start: `onnxsc check examples/tutorial.onnxs` against `onnxsc --version`, run in
  alternation `--cold-runs` times; the ratio of the medians (and the median of the paired ratios).
- Peak memory: the peak resident set size of the `onnxsc build` process at each size, per source
  byte.
- Parse: the parse alone of the same file (`examples/parse_time.rs`: lexing, layout, lalrpop and
  the syntax tree, on fresh memory, the compiler's threads started), best of `--repeat`, and its
  share of the build: what no change to the later phases can win back.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

HEADER = """\
from onnxscript import FLOAT, script
from onnxscript import opset18 as op

"""

# One translation: 13 nodes once the attribute-only `if` is counted with its branch.
TEMPLATE = """\
@script()
def scaled_gate_{i}(x: FLOAT["N"], y: FLOAT["N"], alpha: float = 1.0) -> FLOAT["N"]:
    if alpha != 1.0:
        y = op.Mul(y, alpha)
    z = op.Add(x, y)
    positive = op.Greater(z, 0.0)
    gated = op.Where(positive, z, op.Neg(z) * 0.5)
    total = op.ReduceSum(gated, [0], keepdims=1)
    return op.Div(gated, total + 1e-6)


"""

# onnxscript reads each function's source through its module, so the text is imported as a real
# module; the timer starts after `import onnxscript` and covers @script on every function and the
# FunctionProtos.
ONNXSCRIPT_COMPILE = """
import importlib.util, sys, time
import onnxscript
spec = importlib.util.spec_from_file_location("bench_module", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules["bench_module"] = module
start = time.perf_counter()
spec.loader.exec_module(module)
for value in list(vars(module).values()):
    if isinstance(value, onnxscript.values.OnnxFunction):
        value.to_function_proto()
print(time.perf_counter() - start)
"""


def source(n: int) -> str:
    return HEADER + "".join(TEMPLATE.format(i=i) for i in range(n))


def use_release_binary(repo: Path) -> bool:
    """Points `ONNXSC_BIN` at the release build unless it is set; False (with a message) when
    the binary is missing."""
    os.environ.setdefault("ONNXSC_BIN", str(repo / "target" / "release" / "onnxsc"))
    if not Path(os.environ["ONNXSC_BIN"]).is_file():
        print(f"{os.environ['ONNXSC_BIN']} not found: run `cargo build --release` first", file=sys.stderr)
        return False
    return True


def run_timed(cmd: list[str]) -> float:
    """Wall time of one child process, which must succeed."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, cwd=REPO)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.decode(errors='replace')}")
    return elapsed


def peak_rss(cmd: list[str]) -> int:
    """Peak resident set size in bytes of `cmd`, from wait4's rusage (Linux: ru_maxrss in KiB)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(REPO)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed while measuring memory")
    return usage.ru_maxrss * 1024


def parse_seconds(parse_time: str, path: Path) -> float:
    """The seconds one parse of `path` took in a fresh process, as `parse_time` measures it."""
    proc = subprocess.run([parse_time, str(path)], capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        sys.exit(f"parse_time failed on {path}:\n{proc.stderr}")
    return float(proc.stdout.strip())


def best_of(repeat: int, fn) -> float:
    return min(fn() for _ in range(repeat))


def fmt_time(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms" if seconds < 10 else f"{seconds:9.2f} s "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold-runs", type=int, default=30)
    parser.add_argument("--onnxscript-max", type=int, default=1000, help="largest N compiled by onnxscript")
    parser.add_argument("--onnxsc", help="the onnxsc binary (default: a fresh release build)")
    parser.add_argument("--parse-time", help="the parse_time example (default: a fresh release build)")
    args = parser.parse_args()

    if args.onnxsc:
        onnxsc = args.onnxsc
    else:
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=REPO, check=True)
        onnxsc = str(REPO / "target" / "release" / "onnxsc")
    if args.parse_time:
        parse_time = args.parse_time
    else:
        build_example = ["cargo", "build", "--release", "--locked", "--quiet", "--example", "parse_time"]
        subprocess.run(build_example, cwd=REPO, check=True)
        parse_time = str(REPO / "target" / "release" / "examples" / "parse_time")

    with tempfile.TemporaryDirectory(prefix="onnxsc-bench-") as tmp:
        tmp = Path(tmp)
        print(f"onnxsc: {onnxsc}")
        print(
            f"{'N':>7} {'source':>10} {'onnxscript':>12} {'onnxsc':>12} {'per fn':>10} {'ratio':>8} {'growth':>8} "
            f"{'peak RSS':>10} {'RSS/byte':>9} {'parse':>12} {'share':>6}"
        )
        base = None
        onnxscript_per_fn = None
        for n in args.sizes:
            path = tmp / f"bench_{n}.onnxs"
            text = source(n)
            path.write_text(text, encoding="utf-8")
            out = tmp / f"bench_{n}.onnx"
            build = [onnxsc, "build", str(path), "-o", str(out)]
            subprocess.run(build, check=True, capture_output=True)  # warm the page cache
            ours = best_of(args.repeat, lambda: run_timed(build))
            theirs = None
            if n <= args.onnxscript_max:
                py = tmp / f"bench_{n}.py"
                py.write_text(text, encoding="utf-8")

                def onnxscript_once() -> float:
                    proc = subprocess.run([sys.executable, "-c", ONNXSCRIPT_COMPILE, str(py)], capture_output=True, text=True)
                    if proc.returncode != 0:
                        sys.exit(f"onnxscript failed on N={n}:\n{proc.stderr}")
                    return float(proc.stdout.strip().splitlines()[-1])

                theirs = best_of(args.repeat, onnxscript_once)
                onnxscript_per_fn = theirs / n
            estimated = theirs is None and onnxscript_per_fn is not None
            reference = theirs if theirs is not None else (onnxscript_per_fn * n if onnxscript_per_fn else None)
            ratio = f"{'~' if estimated else ''}{reference / ours:.0f}x" if reference else "-"
            if base is None and n > 100:
                base = (n, ours)
            growth = f"{ours / base[1]:.2f}x" if base else "-"
            rss = peak_rss(build)
            parse = best_of(args.repeat, lambda: parse_seconds(parse_time, path))
            shown_theirs = fmt_time(theirs) if theirs is not None else ("~" + fmt_time(reference).strip() if reference else "-")
            print(
                f"{n:>7} {len(text.encode()):>10,} {shown_theirs:>12} {fmt_time(ours):>12} "
                f"{ours / n * 1e6:>8.1f}us {ratio:>8} {growth:>8} {rss / 2**20:>8.1f}MB {rss / len(text.encode()):>8.0f} "
                f"{fmt_time(parse):>12} {parse / ours:>6.0%}"
            )
        if base:
            print(f"growth is relative to N={base[0]}; linear growth means time(N)/time({base[0]}) ~ N/{base[0]}")

    tutorial = str(REPO / "examples" / "tutorial.onnxs")
    check, version = [onnxsc, "check", tutorial], [onnxsc, "--version"]
    subprocess.run(check, capture_output=True)
    checks, versions = [], []
    for _ in range(args.cold_runs):
        versions.append(run_timed(version))
        checks.append(run_timed(check))
    med_check, med_version = statistics.median(checks), statistics.median(versions)
    paired = statistics.median(c / v for c, v in zip(checks, versions))
    print(
        f"cold start: `check examples/tutorial.onnxs` {med_check * 1000:.2f} ms, `--version` "
        f"{med_version * 1000:.2f} ms (medians of {args.cold_runs}): ratio {med_check / med_version:.2f}x "
        f"(median paired ratio {paired:.2f}x)"
    )


if __name__ == "__main__":
    main()
