#!/usr/bin/env python3
"""onnxsc's shape rules against ONNX's own shape inference (C++, reached from Python), side by
side on the same call bodies: what each knows of the outputs, whether they ever disagree, and
what each costs.

A measurement, not a test: it prints numbers and asserts nothing about time.

torchlib's `ops/core.py` and `ops/nn.py` of the installed onnxscript are copied verbatim as
`.onnxs` files and compiled with `--skip-invalid`. Every call `python -m onnxsc test --facts-only`
makes for the first `--operators` operators (sorted by name) is judged by its facts, so that
onnxsc's server links or traces each one and answers with the call's body, its outputs declared
with the shapes onnxsc's rules infer. Then, for each answered body:

- onnxsc: the declared output shapes; and the time of the server's whole request, sent again
  (linking or tracing the call, the rules, the checks, the answer serialised: more work than
  inference alone, so the comparison is conservative for onnxsc);
- ONNX: the same body with its output shapes erased, through
  `onnx.shape_inference.infer_shapes(model, data_prop=True)`, timed; and its inferred outputs.

Each output is counted by who knows its full shape (every dimension a number or a symbol; a
scalar's is known, and ONNX's invented `unk__N` dimensions are not: `known_shape`): both, only
onnxsc, only ONNX, neither. A dimension both know as numbers and that differs is a
disagreement, printed. Times are medians per body, in microseconds.

    ONNXSC_BIN=target/release/onnxsc PYTHONPATH=python .venv/bin/python scripts/bench_inference.py

With `--tract PATH`, tract (the `tract-onnx` crate, an inference engine with symbolic dimensions)
is measured as a third party on the same erased, typed bodies. PATH is the binary of the standalone
Cargo project `scripts/tract_shapes/`, built apart from onnxsc's own package:

    CARGO_TARGET_DIR=target/tract_shapes cargo build --release --manifest-path scripts/tract_shapes/Cargo.toml
    ... scripts/bench_inference.py --tract target/tract_shapes/release/tract_shapes

Each body ONNX's inference took is written to a temporary directory as an `.onnx` file, its
model-local functions inlined first (`onnx.inliner.inline_local_functions`: tract does not expand
ONNX functions), and the binary is run once over the directory: it loads each model with
`tract_onnx::onnx().model_for_path` (the graph inputs' declared types are its facts, their
dim_params its symbols) and runs tract's analysis (`InferenceModel::analyse`), timed alone. Each
output is then counted by which of onnxsc, ONNX and tract know its full shape (an output of a
body tract refused counts as unknown to tract); disagreements of tract with
each of the others (on dimensions both know as numbers, or on a rank) are printed, with the bodies
tract refused by their most common errors and tract's median analysis time per body.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter


def full_shape(value_info):
    """The dimensions of a graph output when every one is known (numbers and symbols), or None."""
    t = value_info.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    dims = []
    for d in t.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param") and not d.dim_param.startswith("?"):
            dims.append(d.dim_param)
        else:
            return None
    return dims


def known_shape(value_info):
    """The full shape an output is declared with, as every count here takes it: a scalar's empty
    shape is known (onnxsc leaves an output it knows nothing of with an empty shape too, but no
    element type), and a `unk__N` dimension, which ONNX's inference invents for one it cannot
    tell, is not."""
    dims = full_shape(value_info)
    if dims == [] and value_info.type.tensor_type.elem_type == 0:
        return None
    if dims and any(isinstance(d, str) and d.startswith("unk__") for d in dims):
        return None
    return dims


def tagged_tensors(value, out: list) -> list:
    """The tensors' facts in a trace's tagged arguments, in the order the body takes them."""
    if isinstance(value, dict):
        if "tensor" in value:
            out.append(value["tensor"])
        else:
            for v in value.values():
                tagged_tensors(v, out)
    elif isinstance(value, list):
        for v in value:
            tagged_tensors(v, out)
    return out


def typed_inputs(model, tensors: list) -> None:
    """The body's graph inputs given the element types and shapes the call knows (the answer
    leaves them untyped: the exporter holds its values already)."""
    import onnx

    for value, known in zip(model.graph.input, tensors):
        if known is None or known.get("dtype") is None or known.get("sequence"):
            continue
        value.type.tensor_type.elem_type = getattr(onnx.TensorProto, known["dtype"])
        shape = value.type.tensor_type.shape
        shape.ClearField("dim")
        for d in known.get("shape") or []:
            dim = shape.dim.add()
            if isinstance(d, int):
                dim.dim_value = d
            else:
                dim.dim_param = str(d)


def differs(a, b) -> bool:
    """Whether two full shapes disagree: in rank, or on a dimension both know as a number."""
    if len(a) != len(b):
        return True
    return any(isinstance(x, int) and isinstance(y, int) and x != y for x, y in zip(a, b))


def run_tract(binary: str, models: list, repeat: int) -> list:
    """tract's answer for each model, in order: one JSON object each (see tract_shapes' main.rs).
    Models with local functions are inlined first: tract does not expand ONNX functions."""
    import onnx
    import onnx.inliner

    with tempfile.TemporaryDirectory(prefix="tract_shapes.") as tmp:
        paths = []
        for i, model in enumerate(models):
            if len(model.functions):
                model = onnx.inliner.inline_local_functions(model)
            path = os.path.join(tmp, f"{i:06d}.onnx")
            onnx.save(model, path)
            paths.append(path)
        out = subprocess.run([binary, "--repeat", str(repeat), tmp], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"{binary} failed ({out.returncode}): {out.stderr.strip()[-2000:]}")
        answers = {a["path"]: a for a in map(json.loads, out.stdout.splitlines())}
    return [answers.get(p, {"outputs": [], "error": "no answer", "micros": None}) for p in paths]


def shorten(error: str) -> str:
    """An error message's gist: its first line, names of nodes and numbers left out."""
    import re

    line = error.splitlines()[0] if error else ""
    line = re.sub(r'"[^"]*"|`[^`]*`|\bnode \S+', "…", line)
    line = re.sub(r"#\d+|\b\d+\b", "N", line).replace("… …", "…")
    return line[:110]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operators", type=int, default=120, help="operators taken, by name (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=5, help="timings per body (default %(default)s)")
    parser.add_argument("--tract", metavar="PATH", help="tract_shapes' binary: compare tract too (see above)")
    args = parser.parse_args()

    import onnx
    import torch

    from bench_facts import torchlib_entries
    from onnxsc._optest import facts
    from onnxsc._optest.run import Options, base_calls
    from onnxsc._server import CALL, LINKED, TRACE
    from onnxsc._specialize import Specializer

    found = sorted(torchlib_entries(), key=lambda e: e.qualname)[: args.operators]
    calls = 0
    for entry in found:
        rng = torch.Generator().manual_seed(0)
        for call in base_calls(entry, Options(), rng):
            facts.judge(entry, call)
            calls += 1

    specializers = [o for o in gc.get_objects() if isinstance(o, Specializer)]
    requests = []  # (request kind, request bytes, the specializer that sent it)
    for s in specializers:
        requests += [(TRACE, key[1].encode("utf-8"), s) for key in s.cache if key[0] == "trace"]
        requests += [(CALL, request, s) for request in s.checked]
    bodies = []
    for kind, request, s in requests:
        status, payload = s._respond(kind, request)
        if status == LINKED:
            bodies.append((kind, request, onnx.load_from_string(payload), s))

    counts = {"both": 0, "onnxsc only": 0, "ONNX only": 0, "neither": 0}
    disagreements = []
    # The operators producing the outputs only ONNX knows: where a rule is missing.
    missing: dict = {}
    onnx_times, onnxsc_times = [], []
    refused = 0
    # For tract: (the function called, onnxsc's output shapes, ONNX's, the erased typed body,
    # the operator producing each output).
    compared = []
    for kind, request, linked, s in bodies:
        ours = [known_shape(o) for o in linked.graph.output]
        erased = onnx.ModelProto()
        erased.CopyFrom(linked)
        asked = json.loads(request)
        if kind == TRACE:
            known = tagged_tensors([asked["args"], asked["kwargs"]], [])
        else:
            types = asked.get("types", {})
            known = [types.get(i.name, {}).get("tensor") for i in erased.graph.input]
        typed_inputs(erased, known)
        for o in erased.graph.output:
            if o.type.HasField("tensor_type"):
                o.type.tensor_type.ClearField("shape")
        del erased.graph.value_info[:]
        try:
            inferred = onnx.shape_inference.infer_shapes(erased, data_prop=True)
        except Exception:
            refused += 1
            continue
        theirs = [known_shape(o) for o in inferred.graph.output]
        producer = {out: node.op_type for node in linked.graph.node for out in node.output}
        if args.tract:
            compared.append((
                asked.get("function", linked.graph.name).rsplit("::", 1)[-1],
                ours,
                theirs,
                erased,
                [producer.get(o.name, "an input") for o in linked.graph.output],
            ))
        for o, a, b in zip(linked.graph.output, ours, theirs):
            key = ("both" if a is not None and b is not None else "onnxsc only" if a is not None
                   else "ONNX only" if b is not None else "neither")
            counts[key] += 1
            if key == "ONNX only":
                op = producer.get(o.name, "an input")
                missing[op] = missing.get(op, 0) + 1
            if a is not None and b is not None and len(a) == len(b):
                if any(isinstance(x, int) and isinstance(y, int) and x != y for x, y in zip(a, b)):
                    disagreements.append((linked.graph.name, a, b))
            elif a is not None and b is not None:
                disagreements.append((linked.graph.name, a, b))
        t_onnx, t_ours = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            onnx.shape_inference.infer_shapes(erased, data_prop=True)
            t_onnx.append(time.perf_counter() - start)
            start = time.perf_counter()
            s._respond(kind, request)
            t_ours.append(time.perf_counter() - start)
        onnx_times.append(statistics.median(t_onnx))
        onnxsc_times.append(statistics.median(t_ours))

    outputs = sum(counts.values())
    print(f"{len(found)} operators, {calls} calls judged by their facts, {len(bodies)} distinct bodies answered")
    print(f"outputs: {outputs}")
    for key, n in counts.items():
        print(f"  full shape known by {key:<12} {n:>6}  ({100 * n / max(outputs, 1):.1f}%)")
    print(f"bodies ONNX's inference refused: {refused}")
    print(f"disagreements (a dimension both know as numbers, or a rank): {len(disagreements)}")
    for name, a, b in disagreements[:20]:
        print(f"  {name}: onnxsc {a}, ONNX {b}")
    if missing:
        ranked = sorted(missing.items(), key=lambda kv: -kv[1])
        print("outputs only ONNX knows, by the operator producing them: " + ", ".join(f"{op} {n}" for op, n in ranked[:25]))
    if onnx_times:
        print(f"median per body: ONNX infer_shapes {statistics.median(onnx_times) * 1e6:.0f} us; "
              f"onnxsc's whole request {statistics.median(onnxsc_times) * 1e6:.0f} us")
    if args.tract:
        report_tract(args.tract, compared, args.repeat)
    return 0


def report_tract(binary: str, compared: list, repeat: int) -> None:
    """tract beside onnxsc and ONNX on the bodies ONNX's inference took."""
    answers = run_tract(binary, [erased for _, _, _, erased, _ in compared], repeat)
    combos = Counter()  # (onnxsc knows, ONNX knows, tract knows) -> outputs
    against = {"onnxsc": [], "ONNX": []}
    only_tract = Counter()  # outputs tract knows and onnxsc does not, by producing operator
    errors = Counter()
    analysed_outputs = analysed_known = 0
    for (name, ours, theirs, _, producers), answer in zip(compared, answers):
        if answer["error"] is not None:
            errors[shorten(answer["error"])] += 1
            tract = [None] * len(ours)
        else:
            tract = answer["outputs"]
            analysed_outputs += len(tract)
            analysed_known += sum(t is not None for t in tract)
        for a, b, t, op in zip(ours, theirs, tract, producers):
            combos[(a is not None, b is not None, t is not None)] += 1
            if t is not None and a is None:
                only_tract[op] += 1
            for who, other in (("onnxsc", a), ("ONNX", b)):
                if t is not None and other is not None and differs(other, t):
                    against[who].append((name, other, t))

    outputs = sum(combos.values())
    inlined = sum(len(erased.functions) > 0 for _, _, _, erased, _ in compared)
    print()
    print(f"tract ({binary}) on the {len(compared)} bodies ONNX's inference took "
          f"({inlined} with local functions, inlined): {outputs} outputs")
    print("(an output of a body tract refused counts as unknown to tract)")
    print("  onnxsc  ONNX  tract   outputs")
    for key in itertools.product((True, False), repeat=3):
        marks = "  ".join(f"{'yes' if k else ' - ':>5}" for k in key)
        print(f"  {marks}  {combos[key]:>7}  ({100 * combos[key] / max(outputs, 1):.1f}%)")
    for i, who in enumerate(("onnxsc", "ONNX", "tract")):
        n = sum(v for k, v in combos.items() if k[i])
        print(f"  full shape known by {who:<7} {n:>6}  ({100 * n / max(outputs, 1):.1f}%)")
    print(f"  among the bodies tract analysed: tract knows {analysed_known} of {analysed_outputs} outputs")
    refused = sum(errors.values())
    print(f"bodies tract refused: {refused} of {len(compared)}")
    for message, n in errors.most_common(15):
        print(f"  {n:>5}  {message}")
    for who, found in against.items():
        print(f"disagreements of tract with {who} (a dimension both know as numbers, or a rank): {len(found)}")
        for name, a, t in found[:15]:
            print(f"  {name}: {who} {a}, tract {t}")
    if only_tract:
        ranked = only_tract.most_common(25)
        print("outputs tract knows and onnxsc does not, by the operator producing them: "
              + ", ".join(f"{op} {n}" for op, n in ranked))
    times = [a["micros"] for a in answers if a["error"] is None]
    parse = [a["parse_micros"] for a in answers if a["error"] is None]
    if times:
        print(f"median per body tract analysed: tract's analysis {statistics.median(times):.0f} us "
              f"(median of {repeat}); parsing the file into tract's model {statistics.median(parse):.0f} us")


if __name__ == "__main__":
    sys.exit(main())
