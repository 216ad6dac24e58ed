#!/usr/bin/env python3
"""What a trace-only translation costs per exporter call when onnxsc evaluates it, against
torchlib's own Python function traced by the exporter; and what a table of torchlib's
translations compiled by onnxsc costs two whole exports, against the default registry.

A benchmark, not a test: it prints numbers and asserts nothing about time.

The sources. torchlib's `ops/core.py` and `ops/nn.py` of the installed onnxscript are copied
verbatim into a temporary directory as `.onnxs` files. `onnxsc check --format json` runs on
the copies; every module-level statement with an error in its line range (a `@torch_op`
function from its first decorator line to its last line, a helper, a module-level `if`) is
replaced by empty lines, so that the remaining lines keep their numbers, and the check runs
again until it is clean. The translations kept, and the error codes of each one dropped, are
printed. The library is compiled once (`onnxsc build`, through the package's
`compile_library`) and its entries made as `translation_table` makes them, over a
`Specializer` this script holds.

Per call (part 1). Each row is one operator overload called with arguments as the exporter
passes them (positional, in the aten schema's order, trailing defaults left out): tensors are
the exporter's `SymbolicTensor`s with an element type and a static shape, made afresh for
every call outside the timed region. Three timings, interleaved in blocks so that drift of
the machine falls on all of them:

- torchlib: the function the exporter's default registry holds for the overload, called as
  `_core._handle_call_function_node_with_lowering` calls it, under a fresh `OpRecorder` (a
  fresh constant farm, so a fresh graph) made the default evaluator;
- onnxsc, traced: `Specializer.traced(proto, signature, facts)` for the call's facts (what
  `make_trace_translation` asks per distinct call: one request to `onnxsc serve`, the answer
  parsed and wrapped as a function), with the per-facts cache emptied before every call;
- onnxsc, call: the whole translation under the same fresh `OpRecorder`, cache emptied: the
  facts described, `traced`, the function call recorded, and the function added to the model
  the way `_core` adds it (`to_function_proto`, `ir.serde.deserialize_function`). What the
  exporter does later, inlining that function, is not counted.

Each figure is the median over the repeats; the ratios are onnxsc / torchlib, with their
geometric mean over the rows that succeeded. A row whose translation was dropped from the
copies, or whose call fails on either side, is printed as failed with the reason.

Whole exports (part 2). A 6-layer `torch.nn.TransformerEncoder` (d_model 64, 4 heads,
feed-forward 256, GELU, batch 2 x 16) and a small CNN (three conv 3x3 + ReLU + max-pool 2
blocks and a linear head, 1x3x32x32) exported with `torch.onnx.export(..., dynamo=True)`:
with the default registry, and with the table of the compiled copies (built once, outside the
timed region) with its variants cache emptied before each export, so that every call is
specialised during the export, against a server already running (its start is reported
apart), and with the cache kept from the previous export. The ways alternate, each taking
each place of a round in turn; the median wall time of each is printed with its ratio to the
default registry. `onnxsc.usage` says which aten operators of each export the table
translated and which it left to the exporter's own translations.

    cargo build --release
    PYTHONPATH=python .venv/bin/python scripts/bench_trace.py [--repeat 200] [--exports 5]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import logging
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import bench_compile
from typing import Any, Callable, Optional

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

# The torchlib modules copied verbatim.
MODULES = ("core", "nn")
TARGET = 0.5  # the target per call: onnxsc at most half of torchlib's time
EXPORT_TARGET = 1.05  # and per export: at most 5% over the default registry


# --------------------------------------------------------------------------------------
# The verbatim copies, pruned to what checks clean
# --------------------------------------------------------------------------------------


@dataclass
class Copies:
    paths: list  # the .onnxs files
    kept: int  # @torch_op translations left in the copies
    total: int  # @torch_op translations in the originals
    dropped: dict  # function (or statement) name -> sorted error codes that dropped it
    dropped_ops: dict  # operator a dropped translation was bound to -> (function, codes)


def torch_lib_ops() -> Path:
    import onnxscript

    return Path(onnxscript.__file__).parent / "function_libs" / "torch_lib" / "ops"


def check_json(paths: list) -> list:
    from onnxsc import find_onnxsc_bin

    cmd = [find_onnxsc_bin(), "--color", "never", "check", "--format", "json", *map(str, paths)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"onnxsc check failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def statement_ranges(text: str) -> list:
    """(first line, last line, name, operators) of each module-level statement: a decorated
    function starts at its first decorator; operators are those its `@torch_op` names (None
    for a statement that is not a translation)."""
    out = []
    for node in ast.parse(text).body:
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno] + [d.lineno for d in decorators])
        name = getattr(node, "name", None) or f"line {node.lineno}: module-level {type(node).__name__.lower()}"
        ops = [torch_op_names(d) for d in decorators if is_torch_op(d)]
        out.append((first, node.end_lineno, name, sum(ops, []) if ops else None))
    return out


def is_torch_op(decorator: ast.expr) -> bool:
    call = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(call, ast.Name) and call.id == "torch_op" or isinstance(call, ast.Attribute) and call.attr == "torch_op"


def torch_op_names(decorator: ast.expr) -> list:
    """The operators `@torch_op("aten::x")` or `@torch_op(("aten::x", "aten::y"), ...)` names."""
    if not isinstance(decorator, ast.Call) or not decorator.args:
        return []
    first = decorator.args[0]
    items = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def count_translations(text: str) -> int:
    return sum(1 for *_, ops in statement_ranges(text) if ops is not None)


def prepare_copies(workdir: Path, rounds: int = 8) -> Copies:
    """Copies torchlib's modules and blanks out the statements with errors until they check
    clean (a dropped helper may leave a translation calling it with an error: another round)."""
    paths = []
    for module in MODULES:
        path = workdir / f"{module}.onnxs"
        shutil.copyfile(torch_lib_ops() / f"{module}.py", path)
        paths.append(path)
    total = sum(count_translations(p.read_text(encoding="utf-8")) for p in paths)
    dropped: dict = {}
    dropped_ops: dict = {}
    for _ in range(rounds):
        errors = [d for d in check_json(paths) if d["severity"] == "error"]
        if not errors:
            break
        for path in paths:
            mine = [d for d in errors if Path(d["file"]).resolve() == path.resolve()]
            if not mine:
                continue
            lines = path.read_text(encoding="utf-8").split("\n")
            for first, last, name, ops in statement_ranges("\n".join(lines)):
                codes = {d["code"] for d in mine if first <= d["line"] <= last}
                if codes:
                    dropped.setdefault(name, set()).update(codes)
                    for op in ops or []:
                        dropped_ops.setdefault(op, (name, dropped[name]))
                    lines[first - 1 : last] = [""] * (last - first + 1)
            path.write_text("\n".join(lines), encoding="utf-8")
    else:
        left = [d for d in check_json(paths) if d["severity"] == "error"]
        if left:
            raise RuntimeError("the copies still have errors:\n" + "".join(d["rendered"] for d in left[:5]))
    kept = sum(count_translations(p.read_text(encoding="utf-8")) for p in paths)
    dropped_ops = {op: (name, sorted(codes)) for op, (name, codes) in dropped_ops.items()}
    return Copies(paths, kept, total, {k: sorted(v) for k, v in dropped.items()}, dropped_ops)


# --------------------------------------------------------------------------------------
# The two sides of one call
# --------------------------------------------------------------------------------------


@dataclass
class Library:
    specializer: Any
    entries: dict  # OpOverload -> onnxsc._table.Entry
    table: dict  # OpOverload -> translation (the custom_translation_table)
    seconds: float  # compile and make the entries


def build_library(copies: Copies) -> Library:
    from onnxsc import _table
    from onnxsc._specialize import Specializer

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data, model = _table.compile_library(copies.paths)
        specializer = Specializer(data)
        unresolved: list = []
        found = _table._entries(model, specializer, False, unresolved)
    took = time.perf_counter() - start
    entries = {e.overload: e for e in found}
    return Library(specializer, entries, {o: e.translation for o, e in entries.items()}, took)


def exporter_opset():
    from torch.onnx._internal.exporter import _constants, _core

    return _core._get_onnxscript_opset(_constants.TORCHLIB_OPSET)


@contextlib.contextmanager
def recording():
    """A fresh `OpRecorder` as the default evaluator, as the exporter makes one per FX node."""
    import onnxscript
    from torch.onnx._internal.exporter import _building

    recorder = _building.OpRecorder(exporter_opset(), {})
    with onnxscript.evaluator.default_as(recorder):
        yield recorder


def tensor(dtype: str, *dims: int):
    """A factory of the exporter's symbolic tensors (a fresh one each call)."""
    import onnx_ir as ir
    from torch.onnx._internal.exporter._tensors import SymbolicTensor

    def make(name: str):
        return SymbolicTensor(exporter_opset(), name=name, shape=ir.Shape(dims), type=ir.TensorType(ir.DataType[dtype]))

    return make


def f32(*dims):
    return tensor("FLOAT", *dims)


@dataclass
class Case:
    label: str
    overload: str  # torch.ops path, e.g. "aten.linear.default"
    args: tuple  # tensor factories, lists of them, or Python values
    kwargs: dict

    def overload_object(self):
        import torch

        target = torch.ops
        for part in self.overload.split("."):
            target = getattr(target, part)
        return target

    def arguments(self) -> tuple:
        """Fresh (args, kwargs), every tensor a new value."""
        counter = iter(range(1000))

        def fresh(a):
            if callable(a):
                return a(f"in{next(counter)}")
            if isinstance(a, list):
                return [fresh(x) for x in a]
            return a

        return tuple(fresh(a) for a in self.args), {k: fresh(v) for k, v in self.kwargs.items()}


# Shapes of the TransformerEncoder and the CNN of part 2.
B, S, D, H = 2, 16, 64, 4
CASES = [
    Case("linear", "aten.linear.default", (f32(B, S, D), f32(256, D), f32(256)), {}),
    Case("gelu", "aten.gelu.default", (f32(B, S, 256),), {}),
    Case("gelu tanh", "aten.gelu.default", (f32(B, S, 256),), {"approximate": "tanh"}),
    Case("softmax", "aten.softmax.int", (f32(B, H, S, S), -1), {}),
    Case("layer_norm", "aten.layer_norm.default", (f32(B, S, D), [D], f32(D), f32(D), 1e-5), {}),
    Case("native_layer_norm", "aten.native_layer_norm.default", (f32(B, S, D), [D], f32(D), f32(D), 1e-5), {}),
    Case("permute", "aten.permute.default", (f32(B, S, H, D // H), [0, 2, 1, 3]), {}),
    Case("transpose", "aten.transpose.int", (f32(B, H, S, D // H), -2, -1), {}),
    Case("view", "aten.view.default", (f32(B, S, D), [B, S, H, D // H]), {}),
    Case("reshape", "aten.reshape.default", (f32(B, S, D), [B * S, D]), {}),
    Case("cat", "aten.cat.default", ([f32(B, S, D), f32(B, S, D)], 1), {}),
    Case("addmm", "aten.addmm.default", (f32(256), f32(B * S, D), f32(D, 256)), {}),
    Case("mul", "aten.mul.Tensor", (f32(B, S, D), f32(B, S, D)), {}),
    Case("add", "aten.add.Tensor", (f32(B, S, D), f32(B, S, D)), {}),
    Case("add alpha=2", "aten.add.Tensor", (f32(B, S, D), f32(B, S, D)), {"alpha": 2}),
    Case("relu", "aten.relu.default", (f32(1, 16, 32, 32),), {}),
    Case(
        "convolution",
        "aten.convolution.default",
        (f32(1, 3, 32, 32), f32(16, 3, 3, 3), f32(16), [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
        {},
    ),
    Case("conv2d", "aten.conv2d.default", (f32(1, 3, 32, 32), f32(16, 3, 3, 3), f32(16), [1, 1], [1, 1]), {}),
    Case("max_pool2d", "aten.max_pool2d.default", (f32(1, 16, 32, 32), [2, 2], [2, 2]), {}),
    Case("scaled_dot_product_attention", "aten.scaled_dot_product_attention.default", (f32(B, H, S, D // H),) * 3, {}),
    Case("mean.dim", "aten.mean.dim", (f32(B, S, D), [-1], True), {}),
    Case("embedding", "aten.embedding.default", (f32(1000, D), tensor("INT64", B, S)), {}),
    Case("matmul", "aten.matmul.default", (f32(B, S, D), f32(D, 256)), {}),
    Case("t", "aten.t.default", (f32(256, D),), {}),
    Case("unsqueeze", "aten.unsqueeze.default", (f32(B, S, D), 1), {}),
]


def torchlib_function(registry, overload):
    """The function the exporter's default registry holds for `overload` (real inputs)."""
    decomps = [m for m in registry.get_decomps(overload) if not m.is_complex]
    if not decomps:
        raise LookupError("the default registry has no translation")
    return decomps[0].onnx_function


def timed(fn: Callable[[], Any], prepare: Callable[[], Any]) -> float:
    """Seconds of one `fn(prepared)` call, `prepare()` outside the timing."""
    state = prepare()
    start = time.perf_counter()
    fn(state)
    return time.perf_counter() - start


@dataclass
class Row:
    label: str
    overload_name: str  # as @torch_op names it: aten::add.Tensor, aten::gelu
    torchlib: Optional[float] = None  # µs
    traced: Optional[float] = None
    serve: Optional[float] = None
    call: Optional[float] = None
    failure: str = ""


def measure_case(case: Case, registry, library: Library, repeat: int) -> Row:
    import onnx_ir as ir

    from onnxsc._trace import describe

    from onnxsc._usage import qualname

    overload = case.overload_object()
    row = Row(case.label, qualname(overload))
    entry = library.entries.get(overload)
    if entry is None:
        row.failure = "onnxsc: no translation in the copies"
        return row
    try:
        torchlib = torchlib_function(registry, overload)
    except LookupError as e:
        row.failure = f"torchlib: {e}"
        return row
    specializer = library.specializer
    function_name = f"{entry.proto.domain}::{entry.proto.name}"

    def facts_of(arguments):
        args, kwargs = arguments
        tensors: list = []
        return {
            "function": function_name,
            "args": [describe(a, tensors, "bench") for a in args],
            "kwargs": {k: describe(v, tensors, "bench") for k, v in kwargs.items()},
        }

    def run_torchlib(arguments):
        args, kwargs = arguments
        with recording():
            torchlib(*args, **kwargs)

    def run_traced(facts):
        specializer.cache.clear()
        specializer.traced(entry.proto, entry.signature, facts)

    def run_serve(facts):
        from onnxsc._server import TRACE

        specializer._respond(TRACE, json.dumps(facts).encode("utf-8"))

    def run_call(arguments):
        args, kwargs = arguments
        specializer.cache.clear()
        with recording() as recorder:
            entry.translation(*args, **kwargs)
        for function in recorder.functions.values():  # as _core adds them to the model
            if not isinstance(function, ir.Function):
                ir.serde.deserialize_function(function.to_function_proto())

    ways = {
        "torchlib": (run_torchlib, case.arguments),
        "traced": (run_traced, lambda: facts_of(case.arguments())),
        "serve": (run_serve, lambda: facts_of(case.arguments())),
        "call": (run_call, case.arguments),
    }
    times: dict = {w: [] for w in ways}
    for way, (fn, prepare) in list(ways.items()):
        try:
            for _ in range(5):  # warm up, and see that it works
                timed(fn, prepare)
        except Exception as e:  # a failed row, not an aborted run
            row.failure = f"{'torchlib' if way == 'torchlib' else 'onnxsc'}: {reason(e)}"
            return row
    block = max(1, repeat // 5)
    for _ in range(5):  # blocks, interleaved
        for way, (fn, prepare) in ways.items():
            times[way].extend(timed(fn, prepare) for _ in range(block))
    row.torchlib, row.traced, row.serve, row.call = (
        statistics.median(times[w]) * 1e6 for w in ("torchlib", "traced", "serve", "call")
    )
    return row


def reason(e: BaseException) -> str:
    """An exception in one line: its type and first two lines (an onnxsc diagnostic's headline),
    and the innermost cause's first line."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    text = f"{type(e).__name__}: {' '.join(lines[:2])}"
    cause = e.__cause__
    while cause is not None and cause.__cause__ is not None:
        cause = cause.__cause__
    if cause is not None:
        text += f" (caused by {type(cause).__name__}: {str(cause).strip().splitlines()[0][:160]})"
    return text


def geomean(values: list) -> float:
    return math.exp(statistics.mean(math.log(v) for v in values)) if values else float("nan")


def per_call_table(library: Library, copies: Copies, repeat: int) -> None:
    from torch.onnx._internal.exporter import _registration

    registry = _registration.ONNXRegistry.from_torchlib()
    rows = [measure_case(case, registry, library, repeat) for case in CASES]
    print(f"Per call, uncached: median µs of {5 * max(1, repeat // 5)} calls each (after 5 warm-up calls)")
    header = (
        f"{'translation':<30} {'torchlib':>9} {'onnxsc traced':>14} {'ratio':>6} {'(serve)':>8} "
        f"{'onnxsc call':>12} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        if r.failure:
            why = r.failure.replace(f"{copies.paths[0].parent}{os.sep}", "")
            if r.overload_name in copies.dropped_ops:
                name, codes = copies.dropped_ops[r.overload_name]
                why += f": `{name}` was dropped for {', '.join(codes)}"
            print(f"{r.label:<30} FAILED  {why}")
            continue
        print(
            f"{r.label:<30} {r.torchlib:>9.1f} {r.traced:>14.1f} {r.traced / r.torchlib:>5.2f}× {r.serve:>8.1f} "
            f"{r.call:>12.1f} {r.call / r.torchlib:>5.2f}×"
        )
    ok = [r for r in rows if not r.failure]
    print("-" * len(header))
    traced = geomean([r.traced / r.torchlib for r in ok])
    call = geomean([r.call / r.torchlib for r in ok])
    print(
        f"{'geometric mean (' + str(len(ok)) + ' rows)':<30} {'':>9} {'':>14} {traced:>5.2f}× {'':>8} {'':>12} {call:>5.2f}×"
        f"   (target ≤ {TARGET}×)"
    )
    failed = len(rows) - len(ok)
    if failed:
        print(f"{failed} of {len(rows)} rows failed and are not in the means.")
    print(
        "torchlib: the registry's function under a fresh OpRecorder. onnxsc traced: Specializer.traced "
        "for the call's\nfacts, of which (serve) is the request and response of `onnxsc serve` alone. "
        "onnxsc call: the whole\ntranslation under a fresh OpRecorder (facts described, traced, the call "
        "recorded, its function\ndeserialised as _core adds it to the model). Ratios: onnxsc / torchlib."
    )


# --------------------------------------------------------------------------------------
# Whole exports
# --------------------------------------------------------------------------------------


def transformer():
    import torch

    layer = torch.nn.TransformerEncoderLayer(d_model=D, nhead=H, dim_feedforward=256, activation="gelu", batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False).eval()
    return "6-layer TransformerEncoder (d_model 64, 4 heads, 2 x 16)", model, (torch.randn(B, S, D),)


def cnn():
    import torch
    from torch import nn

    def block(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]

    model = nn.Sequential(*block(3, 16), *block(16, 32), *block(32, 64), nn.Flatten(), nn.Linear(64 * 4 * 4, 10)).eval()
    return "CNN (3 x conv+relu+maxpool, linear; 1x3x32x32)", model, (torch.randn(1, 3, 32, 32),)


def failing_overload(error: BaseException):
    """The operator overload of the FX node whose translation raised ``error`` (the exporter
    names the node's target in a ConversionError of the chain), and the innermost error."""
    import re

    import torch

    target, innermost = None, error
    while innermost is not None:
        found = re.search(r"target=torch\.ops\.([\w.]+)\]", str(innermost))
        if found and target is None:
            target = found.group(1)
        if innermost.__cause__ is None:
            break
        innermost = innermost.__cause__
    if target is None:
        return None, innermost
    overload = torch.ops
    for part in target.split("."):
        overload = getattr(overload, part, None)
    return overload, innermost


def headline(error: BaseException, copies: Copies) -> str:
    """An onnxsc error's first two lines (the function and the diagnostic's headline)."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return " ".join(lines[:2]).replace(f"{copies.paths[0].parent}{os.sep}", "")


def export_table(library: Library, copies: Copies, exports: int) -> None:
    import gc

    import torch

    import onnxsc
    from onnxsc._usage import qualname

    ways = ["default", "onnxsc", "onnxsc cached"]
    labels = {
        "default": "default registry",
        "onnxsc": "onnxsc table, variants uncached",
        "onnxsc cached": "onnxsc table, variants cached",
    }
    library.specializer.close()
    start = time.perf_counter()
    library.specializer._respond(2, b"{}")  # a trace request: starts the server, which refuses it
    server_start = (time.perf_counter() - start) * 1e3
    print(
        f"\nWhole exports (torch.onnx.export(..., dynamo=True)), median of {exports} each, the ways alternating;"
        f"\nthe table: {len(library.table)} entries, compiled in {library.seconds * 1e3:.0f} ms, its server started in "
        f"{server_start:.0f} ms (both outside the timed region)"
    )
    for make in (transformer, cnn):
        torch.manual_seed(0)
        title, model, inputs = make()
        expected = model(*inputs)
        table = dict(library.table)

        def export(way: str):
            if way == "onnxsc":
                library.specializer.cache.clear()
            gc.collect()
            start = time.perf_counter()
            program = torch.onnx.export(
                model, inputs, dynamo=True, custom_translation_table=None if way == "default" else table, verbose=False
            )
            return time.perf_counter() - start, program

        print(f"\n{title}")
        # An entry whose translation fails for a call of this export is left out (the exporter's
        # own translation takes that operator), and said so: the rest is still measured.
        removed = []
        program = None
        while program is None and len(removed) < 20:
            try:
                _, program = export("onnxsc")
            except Exception as e:
                overload, innermost = failing_overload(e)
                if overload is None or overload not in table:
                    print(f"  FAILED: {reason(e)}")
                    break
                del table[overload]
                removed.append(f"{qualname(overload)}: {headline(innermost, copies)}")
        if program is None:
            continue
        for line in removed:
            print(f"  left out of the table, its translation failing in this export: {line}")
        got = torch.as_tensor(program(*inputs)[0])
        difference = (got - expected).abs().max().item()
        report = onnxsc.usage(program, table)
        # The table overrides the operators this model's export uses, as a user's would: the
        # exporter registers every entry at every export (its signature inferred each time), so
        # the 400-odd entries of all of torchlib would cost the export ~0.1 ms each.
        used = set(report.used)
        table = {op: t for op, t in table.items() if qualname(op) in used}
        print(f"  the table for this model: the {len(table)} entries its export calls, of {len(library.table)}")
        for way in ways:  # warm: imports, torch's caches, the cached way's variants
            export(way)
        runs: dict = {w: [] for w in ways}
        for round in range(exports):
            for way in ways[round % len(ways) :] + ways[: round % len(ways)]:
                runs[way].append(export(way)[0] * 1e3)
        base = statistics.median(runs["default"])
        header = f"  {'table':<34} {'export':>8} {'range':>13} {'ratio':>7}"
        print(header)
        print("  " + "-" * (len(header) - 2))
        for way in ways:
            took = runs[way]
            t = statistics.median(took)
            print(f"  {labels[way]:<34} {t:>5.0f} ms {min(took):>6.0f}–{max(took):<6.0f} {t / base:>6.3f}×")
        print(f"  (target ≤ {EXPORT_TARGET}×; onnxsc's output vs PyTorch: max |difference| {difference:.1e})")
        print(f"  aten operators of the graph translated by the table ({len(report.used)}): {', '.join(report.used)}")
        left = report.not_overridden
        print(f"  left to the exporter's own translations ({len(left)}): {', '.join(left) if left else 'none'}")


# --------------------------------------------------------------------------------------


def versions() -> str:
    import onnxscript
    import torch

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    dirty = " (working tree modified)" if git("status", "--porcelain", "--untracked-files=no") else ""
    return f"torch {torch.__version__}, onnxscript {onnxscript.__version__}, onnxsc {commit}{dirty}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=200, help="timed calls per row and way")
    ap.add_argument("--exports", type=int, default=5, help="timed exports per model and way")
    ap.add_argument("--skip-exports", action="store_true", help="part 1 only")
    args = ap.parse_args()
    if not bench_compile.use_release_binary(REPO):
        return 2
    command = " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv])
    print(f"$ ONNXSC_BIN={os.environ['ONNXSC_BIN']} PYTHONPATH={os.environ.get('PYTHONPATH', '')} {command}")
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    print(versions())
    with tempfile.TemporaryDirectory(prefix="bench-trace-") as tmp:
        try:
            copies = prepare_copies(Path(tmp))
        except RuntimeError as e:
            print(f"the torchlib copies do not build: {e}")
            return 1
        print(
            f"torchlib copies ({', '.join(p.name for p in copies.paths)}): {copies.kept} of {copies.total} "
            f"@torch_op translations kept; {len(copies.dropped)} statements dropped for errors:"
        )
        for name, codes in sorted(copies.dropped.items()):
            print(f"  {name}: {', '.join(codes)}")
        print()
        library = build_library(copies)
        per_call_table(library, copies, args.repeat)
        if not args.skip_exports:
            export_table(library, copies, args.exports)
        library.specializer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
