"""scripts/difftest: generated programs through onnxsc and onnxscript, compared in ONNX Runtime.

    scripts/difftest --seed N --count K [--kind script|trace|both] [--jobs J] [--out DIR] [--coverage]
    scripts/difftest --replay CASE.onnxs...

Program i of a run is `generator.generate((N << 32) + i)` (even i) or
`trace_generator.generate_trace((N << 32) + i)` (odd i): a run is reproducible from its seed,
and each finding is also saved as a case file (header line, then the module) that `--replay`
and the test suite run again. Findings are reduced first (`reduce`). The last line is the
summary, `difftest: K programs, A agree, D disagree, R valid rejected`; the exit status is 1
on any disagreement or valid rejection.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import sys
import time
from pathlib import Path

from . import batch, coverage
from .oracle import AGREE, DISAGREE, INVALID, ONNXSCRIPT_WRONG, VALID_REJECTED, Oracle, Result
from .reduce import reduce

REPO = Path(__file__).resolve().parents[2]


def _binary() -> Path:
    env = os.environ.get("ONNXSC_BIN")
    return Path(env) if env else REPO / "target" / "release" / "onnxsc"


def _save(out: Path, text: str, result: Result, seed: int) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    finding = result.finding()
    path = out / f"{finding.kind}-{seed}.onnxs"
    detail = "\n".join("# " + line for line in finding.detail.splitlines()[:12])
    header, body = text.split("\n", 1)
    path.write_text(f"{header}\n# finding ({finding.function}): {finding.kind}\n{detail}\n{body}", encoding="utf-8")
    return path


def _replay(paths: list[str], binary: Path) -> int:
    oracle = Oracle(binary)
    counts = collections.Counter()
    for name in paths:
        result = oracle.run_text(Path(name).read_text(encoding="utf-8"))
        counts[result.kind] += 1
        finding = result.finding()
        if finding:
            print(f"{name}: {finding.kind} in {finding.function}: {finding.detail}")
    return _summary(len(paths), counts)


def _summary(total: int, counts: collections.Counter) -> int:
    if counts[ONNXSCRIPT_WRONG]:
        print(f"difftest: {counts[ONNXSCRIPT_WRONG]} programs where onnxscript's compilation is wrong: "
              "its eager mode (the Python, run line by line) computes what onnxsc's does")
    if counts[INVALID]:
        print(f"difftest: {counts[INVALID]} programs not compared: onnxscript refuses them, or ONNX "
              "Runtime its model (the generator's fault, not a finding)")
    print(f"difftest: {total} programs, {counts[AGREE]} agree, {counts[DISAGREE]} disagree, "
          f"{counts[VALID_REJECTED]} valid rejected")
    return 1 if counts[DISAGREE] or counts[VALID_REJECTED] else 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/difftest", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--kind", choices=["script", "trace", "both"], default="both",
                        help="scripted functions, trace-time translations, or both in turn (default)")
    parser.add_argument("--out", type=Path, default=REPO / "target" / "difftest",
                        help="where reduced findings are saved")
    parser.add_argument("--reduce", type=int, default=3, metavar="N",
                        help="reduce at most N findings (default 3; the others are saved as found)")
    parser.add_argument("--coverage", action="store_true", help="print what the programs covered")
    parser.add_argument("--replay", nargs="+", metavar="CASE", help="run saved case files instead")
    args = parser.parse_args()
    binary = _binary()
    if not binary.is_file():
        print(f"difftest: no onnxsc binary at {binary} (build it, or set ONNXSC_BIN)", file=sys.stderr)
        return 2
    if args.replay:
        return _replay(args.replay, binary)

    start = time.monotonic()
    kinds = ["script", "trace"] if args.kind == "both" else [args.kind]
    seeds = [((args.seed << 32) + i, kinds[i % len(kinds)]) for i in range(args.count)]
    counts: collections.Counter = collections.Counter()
    functions: collections.Counter = collections.Counter()
    covered: collections.Counter = collections.Counter()
    findings: list[tuple[int, str, Result]] = []
    with multiprocessing.get_context("spawn").Pool(args.jobs, batch.init, (str(binary),)) as pool:
        for done, (seed, text, result, seen) in enumerate(pool.imap_unordered(batch.run_one, seeds, chunksize=4), 1):
            if done % 1000 == 0:
                print(f"difftest: {done} programs, {sum(functions.values())} functions, "
                      f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
            counts[result.kind] += 1
            for outcome in result.functions:
                functions[outcome.kind] += 1
            covered.update(seen)
            if result.finding():
                findings.append((seed, text, result))
    findings.sort(key=lambda f: f[0])
    oracle = Oracle(binary)
    for n, (seed, text, result) in enumerate(findings):
        finding = result.finding()
        if n < args.reduce:
            text = reduce(oracle, text, finding)
            result = oracle.run_text(text)
            finding = result.finding() or finding
        path = _save(args.out, text, result if result.finding() else Result([finding]), seed)
        print(f"{path}: {finding.kind} in {finding.function}: {finding.detail.splitlines()[0] if finding.detail else ''}")
    if args.coverage:
        coverage.report(covered)
    scripted, traced = covered[("functions",)], covered[("trace functions",)]
    compared = sum(functions.values()) - functions[INVALID]
    print(f"difftest: seed {args.seed}: {scripted + traced} functions ({scripted} scripted, {traced} "
          f"trace-time called {covered[('trace calls',)]} times); {compared} functions and calls "
          f"compared, {functions[AGREE]} agree; {time.monotonic() - start:.0f} s on {args.jobs} jobs")
    return _summary(args.count, counts)


if __name__ == "__main__":
    sys.exit(main())
