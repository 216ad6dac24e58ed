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

Each output is counted by who knows its full shape (every dimension a number or a symbol):
both, only onnxsc, only ONNX, neither. A dimension both know as numbers and that differs is a
disagreement, printed. Times are medians per body, in microseconds.

    ONNXSC_BIN=target/release/onnxsc PYTHONPATH=python .venv/bin/python scripts/bench_inference.py
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operators", type=int, default=120, help="operators taken, by name (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=5, help="timings per body (default %(default)s)")
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
    for kind, request, linked, s in bodies:
        ours = [full_shape(o) for o in linked.graph.output]
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
        theirs = [full_shape(o) for o in inferred.graph.output]
        producer = {out: node.op_type for node in linked.graph.node for out in node.output}
        for o, a, b in zip(linked.graph.output, ours, theirs):
            key = "both" if a and b else "onnxsc only" if a else "ONNX only" if b else "neither"
            counts[key] += 1
            if key == "ONNX only":
                op = producer.get(o.name, "an input")
                missing[op] = missing.get(op, 0) + 1
            if a and b and len(a) == len(b):
                if any(isinstance(x, int) and isinstance(y, int) and x != y for x, y in zip(a, b)):
                    disagreements.append((linked.graph.name, a, b))
            elif a and b:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
