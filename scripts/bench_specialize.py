#!/usr/bin/env python3
"""What specialising a translation to one call costs: through `onnxsc serve` (one process per
library, a request per variant) against the old path (an `onnxsc link --mode inline` process per
variant, with its files), side by side in one run; and what a translation table adds to an
export of a 6-layer `torch.nn.TransformerEncoder`.

A benchmark, not a test. Per variant, the server's path is `Specializer._link` (a call request,
the one-call model built and linked by the server, the result parsed); the old path builds the
same model in Python and runs `onnxsc link` on files, as the package once did. Each variant
is linked again and again (`_link` keeps no cache), and the median is reported; the server's
start (the first request) is reported apart. The libraries: the tutorial's `add` and `gelu`,
every function of `tests/python/overrides/` (one call each, every input given, each attribute
without a default given a value), and the tutorial's `add` in a library of 1,000 more
functions (the server's requests must not grow with the library).

The export: `scripts/bench_specialize.onnxs` overrides `aten::linear` and `aten::gelu`; each
export builds its table first (not timed), so that every variant is made during the export,
as in a first export (the server's start included); the runs of the three ways alternate. Beside
the export's wall time, which varies by tens of percent from run to run on a shared machine,
the time the export spent specialising (in `Specializer._link`, and in `_check`, which checks a
typed call and keeps its answer as the variant's body) is measured exactly.

    cargo build --release
    .venv/bin/python scripts/bench_specialize.py [--repeat 200] [--exports 5]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import bench_compile

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "tests" / "python"))

import harness  # noqa: E402

TUTORIAL = REPO / "examples" / "tutorial.onnxs"
OVERRIDES = REPO / "tests" / "python" / "overrides"
EXPORT_OVERRIDES = REPO / "scripts" / "bench_specialize.onnxs"

# A value of each attribute type, for attributes without a default.
VALUES = {"float": 0.5, "int": 1, "bool": 1, "str": "none", "list[float]": [0.5], "list[int]": [0], "list[bool]": [1], "list[str]": ["a"]}


def link_by_process(library: bytes, call) -> "onnx.ModelProto":
    """The old path: the one-call model built in Python (``harness.one_call``, what the server
    builds for a call request), written to a file with the library, `onnxsc link --mode
    inline` in a process of its own, the output read back."""
    import onnx

    from onnxsc._binary import find_onnxsc_bin

    with tempfile.TemporaryDirectory(prefix="onnxsc-") as tmp:
        model, lib, linked = (Path(tmp) / n for n in ("call.onnx", "library.onnx", "linked.onnx"))
        model.write_bytes(harness.one_call(*call).SerializeToString())
        lib.write_bytes(library)
        cmd = [find_onnxsc_bin(), "--color", "never", "link", str(model), str(lib), "-o", str(linked), "--mode", "inline"]
        subprocess.run(cmd, capture_output=True, check=True)
        return onnx.load_from_string(linked.read_bytes())


def build(paths: list, out: Path) -> bytes:
    from onnxsc._binary import find_onnxsc_bin

    subprocess.run([find_onnxsc_bin(), "build", *map(str, paths), "-o", str(out)], check=True, capture_output=True)
    return out.read_bytes()


def calls(library: bytes, names=None) -> list:
    """(label, proto, signature, given, attributes) of one call of each function (of `names`)."""
    import onnx

    from onnxsc._signature import signature_of

    out = []
    for proto in onnx.load_from_string(library).functions:
        signature = signature_of(proto)
        if signature is None or (names is not None and proto.name not in names):
            continue
        given = [i.name for i in signature.inputs]
        attributes = {a.name: VALUES[a.type] for a in signature.attributes if not a.has_default}
        out.append((proto.name, proto, signature, given, attributes))
    return out


def median_ms(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def per_variant(library: bytes, call, repeat: int, old_repeat: int) -> tuple:
    """(server start ms, server ms per variant, old path ms per variant) for one call."""
    from onnxsc._specialize import Specializer

    _, proto, signature, given, attributes = call
    server = Specializer(library)
    start = time.perf_counter()
    served = server._link(proto, signature, given, attributes)
    first = (time.perf_counter() - start) * 1e3
    old = (proto, given, attributes, signature)
    assert link_by_process(library, old).SerializeToString() == served.SerializeToString()
    # Interleaved in blocks, so that drift of the machine falls on both.
    fast, slow = [], []
    for _ in range(5):
        fast.append(median_ms(repeat // 5, lambda: server._link(proto, signature, given, attributes)))
        slow.append(median_ms(max(1, old_repeat // 5), lambda: link_by_process(library, old)))
    server.close()
    return first, statistics.median(fast), statistics.median(slow)


def variants_table(repeat: int, old_repeat: int, workdir: Path) -> None:
    tutorial = build([TUTORIAL], workdir / "tutorial.onnx")
    overrides = build([OVERRIDES], workdir / "overrides.onnx")
    filler = workdir / "filler.onnxs"
    # bench_compile.py's typical translation, 1,000 times beside the tutorial's.
    filler.write_text(bench_compile.source(1000))
    large = build([TUTORIAL, filler], workdir / "large.onnx")
    rows = []
    for call in calls(tutorial, {"custom_aten_add", "custom_aten_gelu"}):
        label = f"tutorial `{call[0]}`" + (" (alpha=2.5)" if call[0] == "custom_aten_add" else "")
        if call[0] == "custom_aten_add":
            call = (*call[:4], {"alpha": 2.5})
        rows.append((label, *per_variant(tutorial, call, repeat, old_repeat)))
    each = [per_variant(overrides, call, repeat, old_repeat) for call in calls(overrides)]
    first, fast, slow = (statistics.median(column) for column in zip(*each))
    rows.append((f"overrides/, {len(each)} functions (median)", first, fast, slow))
    (add,) = calls(large, {"custom_aten_add"})
    add = (*add[:4], {"alpha": 2.5})
    rows.append(("tutorial `add` among 1,003 functions", *per_variant(large, add, repeat, old_repeat)))

    header = f"{'variant':<42} {'server start':>13} {'server':>10} {'old path':>10} {'speed-up':>9}"
    print(header)
    print("-" * len(header))
    for label, first, fast, slow in rows:
        print(f"{label:<42} {first:>10.2f} ms {fast:>7.3f} ms {slow:>7.2f} ms {slow / fast:>8.0f}×")
    if len(each) > 1:
        fasts = [f for _, f, _ in each]
        slows = [s for _, _, s in each]
        print(f"\noverrides/ per function: server {min(fasts):.3f}–{max(fasts):.3f} ms, old path {min(slows):.2f}–{max(slows):.2f} ms")


def export_table(exports: int) -> None:
    import gc

    import torch

    import onnxsc
    from onnxsc import _specialize

    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=256, activation="gelu", batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False).eval()
    x = torch.randn(2, 16, 64)
    link = _specialize.Specializer._link
    check = _specialize.Specializer._check
    linking = []  # (seconds) of every `_link` and `_check` of the current export

    def old_link(self, proto, signature, given, attributes):
        return link_by_process(self.library, (proto, given, attributes, signature))

    def timed(inner):
        def timed_link(self, *args):
            start = time.perf_counter()
            try:
                return inner(self, *args)
            finally:
                linking.append(time.perf_counter() - start)

        return timed_link

    # What the default registry spends per FX node: torchlib's function called and traced.
    from torch.onnx._internal.exporter import _core

    lower, per_node = _core._handle_call_function_node_with_lowering, []

    def timed_lower(*args, **kwargs):
        start = time.perf_counter()
        try:
            return lower(*args, **kwargs)
        finally:
            per_node.append(time.perf_counter() - start)

    def export(way: str) -> tuple:
        """(export ms, of which specialising ms, variants made) of one export."""
        table = None if way == "default" else onnxsc.translation_table(EXPORT_OVERRIDES)
        _specialize.Specializer._link = timed(old_link if way == "old path" else link)
        # A typed call is checked by the server, and its answer is the variant's body; the old
        # path predates the check.
        _specialize.Specializer._check = (lambda *args: None) if way == "old path" else timed(check)
        if way == "default":
            _core._handle_call_function_node_with_lowering = timed_lower
        linking.clear()
        gc.collect()
        start = time.perf_counter()
        try:
            program = torch.onnx.export(model, (x,), dynamo=True, custom_translation_table=table, verbose=False)
            took = time.perf_counter() - start
        finally:
            _specialize.Specializer._link = link
            _specialize.Specializer._check = check
            _core._handle_call_function_node_with_lowering = lower
        if table is not None:
            torch.testing.assert_close(torch.as_tensor(program(x)[0]), model(x), rtol=1e-4, atol=1e-4)
        return took * 1e3, sum(linking) * 1e3, len(linking)

    ways = ["default", "server", "old path"]
    for way in ways:
        export(way)  # warm: imports, torch's caches
    runs = {w: [] for w in ways}
    per_node.clear()
    for round in range(exports):
        # Each way in each place of the round in turn: an export is slower or faster after
        # another (garbage to collect, caches warm).
        for way in ways[round % 3 :] + ways[: round % 3]:
            runs[way].append(export(way))
    base = statistics.median(t for t, _, _ in runs["default"])
    print(f"\n6-layer TransformerEncoder (d_model 64, batch 2 x 16), torch {torch.__version__}; median of {exports} exports each:")
    header = f"{'table':<44} {'export':>8} {'range':>12} {'overhead':>9} {'specialising':>13}"
    print(header)
    print("-" * len(header))
    labels = {"default": "default registry", "server": "linear + gelu, onnxsc serve", "old path": "linear + gelu, a link process per variant"}
    for way in ways:
        took = [t for t, _, _ in runs[way]]
        t, spent, variants = statistics.median(took), statistics.median(s for _, s, _ in runs[way]), runs[way][0][2]
        special = f"{spent:.1f} ms ({variants})" if way != "default" else "—"
        print(f"{labels[way]:<44} {t:>5.0f} ms {min(took):>5.0f}–{max(took):<5.0f} {100 * (t - base) / base:>+8.1f}% {special:>13}")
    print(
        "(specialising: the time in Specializer._link and _check during the export, and how often they ran; "
        "a _check of a call checked already returns at once)"
    )
    nodes = len(per_node) // exports
    print(
        f"The default registry translates each of the {nodes} FX nodes (a torchlib function called and "
        f"traced) in {1e3 * statistics.median(per_node):.2f} ms (median; mean {1e3 * statistics.mean(per_node):.2f} ms)."
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=200, help="links per variant through the server")
    ap.add_argument("--old-repeat", type=int, default=20, help="links per variant by the old path")
    ap.add_argument("--exports", type=int, default=5, help="exports of each kind")
    args = ap.parse_args()
    if not bench_compile.use_release_binary(REPO):
        return 2
    print(f"onnxsc: {os.environ['ONNXSC_BIN']}; per variant: median of {args.repeat} (server) and {args.old_repeat} (old path) links\n")
    with tempfile.TemporaryDirectory(prefix="bench-specialize-") as tmp:
        variants_table(args.repeat, args.old_repeat, Path(tmp))
    export_table(args.exports)
    return 0


if __name__ == "__main__":
    sys.exit(main())
