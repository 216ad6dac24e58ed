"""``python -m onnxsc test PATHS``: the command, its report, and how it shares the work.

Operators are tested one by one, each in the process that built the table; with ``--jobs N``
(the number of cores by default) and more than one operator, in N worker processes that each
build the table once, operators handed out as workers finish. ``--shard K/N`` keeps the K-th of N
interleaved shares of the operators (sorted by name), for the jobs of a CI matrix.

The exit status is 0 when every operator passed and ran on at least ``--min-samples`` calls, 1
when one failed or is untested (``--allow-untested`` accepts the latter), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import sys
import warnings
from typing import Optional

from onnxsc._errors import OnnxscError
from onnxsc._optest.run import DTYPES, Options, Tally, test_operator, worst_text


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m onnxsc test",
        description=(
            "Judge every @torch_op translation in PATHS against PyTorch: on PyTorch's OpInfo samples "
            "and on samples made to find what they miss (other attribute values, shapes, dtypes, special "
            "and large values, dynamic dimensions), each failure shrunk to a small reproducer."
        ),
    )
    parser.add_argument("paths", nargs="+", help=".onnxs files or directories")
    parser.add_argument("--op", action="append", help="only this operator (aten::gelu); repeatable")
    parser.add_argument("--dtype", action="append", choices=DTYPES, help="only this dtype; repeatable")
    parser.add_argument(
        "--samples",
        type=int,
        default=Options.samples,
        help="calls exported per operator, each also run on special, large and tiny values (default %(default)s)",
    )
    parser.add_argument("--max-samples", type=int, dest="samples", help=argparse.SUPPRESS)
    parser.add_argument(
        "--min-samples",
        type=int,
        default=Options.min_samples,
        help="calls an operator's translation must run on, or it is untested (default %(default)s)",
    )
    parser.add_argument("--allow-untested", action="store_true", help="an untested operator does not fail the run")
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="test the translations without errors when others have some (they are left out, named on stderr)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the seed of every generated sample (default 0)")
    parser.add_argument(
        "--facts-only",
        action="store_true",
        help=(
            "judge every call by its shapes and dtypes alone, with onnxsc's inference and PyTorch's "
            "answer: no export, no ONNX Runtime, no values (milliseconds a call)"
        ),
    )
    parser.add_argument("--no-shrink", action="store_true", help="report failures as found, without shrinking them")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: the cores)")
    parser.add_argument("--shard", default="1/1", metavar="K/N", help="test the K-th of N shares of the operators")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import this module first (one that registers custom operators); repeatable",
    )
    args = parser.parse_args(argv)
    try:
        shard = _shard(args.shard)
    except ValueError as e:
        parser.error(str(e))
    try:
        import torch  # noqa: F401
        import expecttest  # noqa: F401  (torch's OpInfo database needs it)
    except ImportError as e:
        print(f"onnxsc test needs torch and expecttest: pip install torch expecttest ({e})", file=sys.stderr)
        return 2
    options = Options(
        dtypes=tuple(args.dtype or DTYPES),
        samples=args.samples,
        min_samples=args.min_samples,
        seed=args.seed,
        shrink=not args.no_shrink,
        facts_only=args.facts_only,
        source=" ".join(args.paths) if len(args.paths) > 1 else args.paths[0],
    )
    try:
        tallies = run(args.paths, args.op, options, args.imports, jobs=args.jobs, shard=shard, skip_invalid=args.skip_invalid)
    except OnnxscError as e:
        print(str(e), file=sys.stderr)
        return 1
    sys.stdout.write(report(tallies, options, args.allow_untested))
    failed = any(t.failed for t in tallies) or (not args.allow_untested and any(t.untested for t in tallies))
    return 1 if failed else 0


def _shard(text: str) -> tuple:
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit()) or not 1 <= int(k) <= int(n):
        raise ValueError(f"--shard takes K/N with 1 <= K <= N, not {text!r}")
    return int(k), int(n)


def _prepare(imports: list) -> None:
    sys.path.insert(0, os.getcwd())
    for module in imports:
        importlib.import_module(module)


def _entries(paths: list, only: Optional[list], skip_invalid: bool = False) -> tuple:
    """The table's entries (those of ``only``), and the operators this PyTorch does not register."""
    from onnxsc._table import compile_library, entries

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data, model = compile_library(paths, skip_invalid=skip_invalid)
        unresolved: list = []
        found = entries(model, data, unresolved)
    for w in caught:
        # The errors of what --skip-invalid left out, then its summary; check's warnings are
        # `onnxsc check`'s to report.
        code = getattr(w.message, "code", "")
        if skip_invalid and (code == "left-out" or code.startswith("E")):
            print(str(w.message), file=sys.stderr)
    if only:
        found = [e for e in found if e.qualname in only]
        unresolved = [u for u in unresolved if u[0] in only]
    return found, unresolved


def run(
    paths: list,
    only: Optional[list],
    options: Options,
    imports: list = (),
    jobs: int = 1,
    shard=(1, 1),
    skip_invalid: bool = False,
) -> list:
    """Tests the translations of ``paths`` (those of ``only``); the tallies, by operator name."""
    _prepare(list(imports))
    found, unresolved = _entries(paths, only, skip_invalid)
    k, n = shard
    names = sorted({e.qualname for e in found} | {u[0] for u in unresolved})
    mine = set(names[k - 1 :: n])
    found = [e for e in found if e.qualname in mine]
    tallies = []
    for qualname, _ in unresolved:
        if qualname in mine:
            tally = Tally(qualname, untested=True)
            tally.skipped["not registered with this PyTorch: nothing to compare with (register it with --import MODULE)"] = 1
            tallies.append(tally)
    if jobs > 1 and len(found) > 1:
        tallies += _in_workers(paths, [e.qualname for e in found], options, list(imports), jobs, skip_invalid)
    else:
        import torch

        torch.manual_seed(options.seed)
        for k, e in enumerate(found, 1):
            tallies.append(test_operator(e, options))
            _progress(k, len(found), tallies[-1])
    return sorted(tallies, key=lambda t: t.operator)


# ---------------------------------------------------------------------------------------------
# Workers


_WORKER: dict = {}


def _start_worker(paths: list, imports: list, skip_invalid: bool) -> None:
    import torch

    torch.set_num_threads(1)
    _prepare(imports)
    with contextlib.redirect_stderr(io.StringIO()):
        found, _ = _entries(paths, None, skip_invalid)
    _WORKER["entries"] = {e.qualname: e for e in found}


def _work(qualname: str, options: Options) -> Tally:
    return test_operator(_WORKER["entries"][qualname], options)


def _in_workers(paths: list, names: list, options: Options, imports: list, jobs: int, skip_invalid: bool) -> list:
    """The operators' tallies, tested by ``jobs`` worker processes, at most one operator each at a
    time. A worker that dies (a crash in a kernel, the system's memory) breaks the pool: the
    operators it may have been testing are tested again one by one in a fresh pool, and the one
    that kills it is reported untested, with the reason."""
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")

    def pool(workers: int):
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_start_worker, initargs=(paths, imports, skip_invalid)
        )

    done: dict = {}
    pending = list(names)
    suspects: list = []

    def finished(name: str, tally: Tally) -> None:
        done[name] = tally
        _progress(len(done), len(names), tally)

    while pending:
        executor = pool(min(jobs, len(pending)))
        running: dict = {}
        try:
            while pending or running:
                while pending and len(running) < jobs:
                    name = pending.pop(0)
                    running[executor.submit(_work, name, options)] = name
                over, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in over:
                    tally = future.result()
                    finished(running.pop(future), tally)
        except concurrent.futures.process.BrokenProcessPool:
            suspects += list(running.values())
        finally:
            executor.shutdown(wait=False, cancel_futures=True)
        for name in suspects:
            alone = pool(1)
            try:
                finished(name, alone.submit(_work, name, options).result())
            except concurrent.futures.process.BrokenProcessPool:
                tally = Tally(name, untested=True)
                tally.skipped["the process judging it died (a crash, or the system's memory)"] = 1
                finished(name, tally)
            finally:
                alone.shutdown(wait=False, cancel_futures=True)
        suspects = []
    return [done[name] for name in names]


def _progress(n: int, total: int, tally: Tally) -> None:
    """One line on stderr per operator judged, for a long run (the report is on stdout)."""
    if total < 2:
        return
    verdict = "FAILED" if tally.failed else "untested" if tally.untested else "ok"
    print(f"onnxsc test: [{n}/{total}] {tally.operator}: {verdict} ({tally.ran} calls)", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The report


def report(tallies: list, options: Options, allow_untested: bool = False) -> str:
    """One row per operator, then each failure (shrunk, with its reproducer), each untested
    operator, the skips, and the verdict."""
    rows = [("operator", "passed", "failed", "skipped", "worst difference")]
    for t in tallies:
        rows.append((t.operator, str(t.passed), str(t.failed), str(sum(t.skipped.values())), worst_text(t)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:4], widths[1:4])] + [r[4]]
        lines.append("  ".join(cells).rstrip())
    for t in tallies:
        if t.ran:
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(t.kinds.items()))
            on = "by their facts alone" if options.facts_only else f"on {t.exports} exported models"
            more = f"; {t.facts_only} more passed by their facts alone" if t.facts_only else ""
            lines.append(f"{t.operator}: ran {t.ran} calls ({kinds}) {on}{more}")
    for t in tallies:
        if t.first_failure:
            by = ", ".join(f"{n} {k}" for k, n in sorted(t.failures.items()))
            lines.append(f"{t.operator}: FAILED {t.failed} ({by}); first: {t.first_failure}")
            if t.shrunk:
                lines.append(f"  smallest failing call found: {t.shrunk}")
            if t.reproducer:
                lines.append("  reproduce:")
                lines.extend(f"    {line}" if line else "" for line in t.reproducer.splitlines())
    for t in tallies:
        if t.untested:
            lines.append(
                f"{t.operator}: UNTESTED: its translation ran on {t.ran} call{'s' if t.ran != 1 else ''}, "
                f"fewer than {options.min_samples} (--min-samples; --allow-untested accepts it)"
            )
    for t in tallies:
        for reason, n in sorted(t.skipped.items()):
            lines.append(f"{t.operator}: skipped {n}: {reason}")
    failed = sum(t.failed for t in tallies)
    passed = sum(t.passed for t in tallies)
    untested = sum(t.untested for t in tallies)
    verdict = "FAILED" if failed or (untested and not allow_untested) else "ok"
    # A facts-only run judged no value: its verdict says so.
    judged = " by their facts alone (values not judged)" if options.facts_only else ""
    lines.append(
        f"onnxsc test: {len(tallies)} operator{'' if len(tallies) == 1 else 's'}, {passed} calls passed{judged}, "
        f"{failed} failed, {untested} untested: {verdict}"
    )
    return "\n".join(lines) + "\n"
