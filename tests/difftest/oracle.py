"""The oracle: one program through both compilers and ONNX Runtime.

onnxscript 0.7.2 converts the module (imported as Python, as its users run it); onnxsc builds
the same file. Each function is then called from a one-node model that holds every function of
its compiler's output, and both models run in ONNX Runtime on the same random inputs. The
outcome of a function is one of:

* ``agree``: same outputs (element type, shape, values: exact for integers and booleans, within
  a tolerance by element type for floats, NaN where the other has NaN);
* ``disagree``: different outputs, or onnxsc's model fails where onnxscript's runs;
* ``valid_rejected``: onnxscript's model runs, and onnxsc refuses the module;
* ``invalid``: onnxscript refuses the program or ONNX Runtime its model. Not a finding: the
  generator wrote something outside the language, and is fixed instead;
* ``onnxscript_wrong``: the outputs differ, and onnxscript's eager mode (the Python function
  run line by line, each operator in ONNX Runtime: what the source says) gives onnxsc's. Not a
  finding: onnxscript's compilation is wrong (docs/robustness.md lists what was seen).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import harness  # noqa: E402  (tests/python: the suites' shared helpers)

from .generator import read_header  # noqa: E402

# Float comparisons: both compilers feed ONNX Runtime the same operators on the same values,
# so results are normally bit-identical; a tolerance absorbs a legitimate difference in the
# order of operations that constant folding could make.
TOLERANCES = {
    np.dtype(np.float16): (1e-3, 1e-3),
    np.dtype(np.float32): (1e-5, 1e-6),
    np.dtype(np.float64): (1e-12, 1e-12),
}
RUN_SECONDS = 5.0
AGREE, DISAGREE, VALID_REJECTED, INVALID = "agree", "disagree", "valid_rejected", "invalid"
ONNXSCRIPT_WRONG = "onnxscript_wrong"


@dataclass
class Outcome:
    kind: str
    function: str | None = None
    detail: str = ""


@dataclass
class Result:
    """The outcome of a program: its functions' outcomes, and the program's summary."""

    functions: list[Outcome]

    @property
    def kind(self) -> str:
        kinds = {o.kind for o in self.functions}
        for kind in (DISAGREE, VALID_REJECTED, ONNXSCRIPT_WRONG, AGREE):
            if kind in kinds:
                return kind
        return INVALID

    def finding(self) -> Outcome | None:
        for o in self.functions:
            if o.kind in (DISAGREE, VALID_REJECTED):
                return o
        return None


def make_inputs(spec: dict[str, str | None], seed: int) -> dict[str, np.ndarray | None]:
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray | None] = {}
    for name, text in spec.items():
        if text is None:
            feeds[name] = None
            continue
        dtype, dims = text[:-1].split("[")
        shape = tuple(int(d) for d in dims.split(",") if d)
        np_type = np.dtype(dtype)
        if dtype == "bool":
            value = rng.random(shape) < 0.5
        elif np_type.kind == "f":
            value = rng.uniform(-4.0, 4.0, size=shape).astype(np_type)
        elif np_type.kind == "u":
            value = rng.integers(0, 9, size=shape, endpoint=True).astype(np_type)
        else:
            value = rng.integers(-9, 9, size=shape, endpoint=True).astype(np_type)
        feeds[name] = np.asarray(value)
    return feeds


Call = tuple[str, dict, dict]  # a function's name, its call (header), its inputs by parameter


def calls_model(functions: list[onnx.FunctionProto], calls: list[Call]) -> onnx.ModelProto:
    """A model holding all of `functions` whose graph calls each of `calls` once, side by side:
    the inputs of function `f` are the graph's `f.x`, `f.y`..., its outputs `f.out0`..."""
    nodes, graph_inputs, graph_outputs = [], [], []
    for name, call, feeds in calls:
        (target,) = [f for f in functions if f.name == name]
        inputs = [f"{name}.{n}" if feeds[n] is not None else "" for n in call["inputs"]]
        while inputs and inputs[-1] == "":
            inputs.pop()
        outputs = [f"{name}.out{i}" for i in range(len(target.output))]
        node = helper.make_node(name, inputs, outputs, domain=target.domain)
        for attr, value in call["attrs"].items():
            node.attribute.append(harness.make_attribute(attr, value, call["attr_types"][attr]))
        nodes.append(node)
        graph_inputs += [
            helper.make_tensor_value_info(f"{name}.{n}", harness.elem_type_of_array(v), list(v.shape))
            for n, v in feeds.items() if v is not None
        ]
        for out in outputs:
            graph_outputs.append(onnx.ValueInfoProto(name=out))
    graph = helper.make_graph(nodes, "calls", graph_inputs, graph_outputs)
    return harness.model_with_functions(graph, functions, "onnxsc-difftest")


def run_calls(functions: list[onnx.FunctionProto], calls: list[Call]) -> dict[str, list[np.ndarray] | Exception]:
    """Each call's outputs, or why ONNX Runtime cannot compute them. One model (one session:
    most of the cost of a run) computes every call; when it fails, a model per call tells
    which calls fail, and why."""
    def feeds(group: list[Call]) -> dict[str, np.ndarray | None]:
        return {f"{name}.{n}": v for name, _, fs in group for n, v in fs.items()}

    counts = {f.name: len(f.output) for f in functions}

    def run_group(group: list[Call]) -> dict[str, list[np.ndarray]]:
        values = iter(run_model(calls_model(functions, group), feeds(group)))
        return {name: [next(values) for _ in range(counts[name])] for name, _, _ in group}

    try:
        return run_group(calls)
    except Exception:  # noqa: BLE001 - one call's failure; find which, below
        pass
    results: dict[str, list[np.ndarray] | Exception] = {}
    for one in calls:
        try:
            results.update(run_group([one]))
        except Exception as exc:  # noqa: BLE001
            results[one[0]] = exc
    return results


def run_model(model: onnx.ModelProto, feeds) -> list[np.ndarray]:
    """Run a model in ONNX Runtime, stopped after RUN_SECONDS: a reduced program can loop
    forever where the generated one did not."""
    return harness.run_model(model, {n: v for n, v in feeds.items() if v is not None}, RUN_SECONDS)


def compare(ours: list[np.ndarray], theirs: list[np.ndarray]) -> str | None:
    """None when the outputs agree, else what differs."""
    if len(ours) != len(theirs):
        return f"{len(ours)} outputs, onnxscript's function has {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"output {i}: {a.dtype}{list(a.shape)}, onnxscript's {b.dtype}{list(b.shape)}"
        if a.dtype in TOLERANCES:
            rtol, atol = TOLERANCES[a.dtype]
            same = np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
            if not same.all():
                return f"output {i}: onnxsc {a.tolist()} vs onnxscript {b.tolist()}"
        elif not np.array_equal(a, b):
            return f"output {i}: onnxsc {a.tolist()} vs onnxscript {b.tolist()}"
    return None


def _base(name: str) -> str:
    """A value's variable: onnxscript names the versions of `v` `v`, `v_3`, `v_12`."""
    return re.sub(r"_\d+$", "", name)


def miswired(fp: onnx.FunctionProto) -> str | None:
    """An `If` or `Loop` whose outputs onnxscript lists in another order than its bodies'.

    onnxscript 0.7.2 collects a block's outputs in a set and iterates it more than once; the
    orders can differ (they depend on PYTHONHASHSEED), and then a loop or branch hands each
    value to the wrong variable. Such a model computes something the source does not say.
    """
    for node in harness.iter_nodes(fp.node):
        graphs = {a.name: a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH}
        if node.op_type == "Loop" and "body" in graphs:
            body = [_base(o.name) for o in graphs["body"].output[1:1 + len(node.output)]]
        elif node.op_type == "If" and graphs:
            body = [_base(o.name) for o in graphs["then_branch"].output]
            if body != [_base(o.name) for o in graphs["else_branch"].output]:
                return f"onnxscript's If {node.name}: its branches list their outputs in different orders"
        else:
            continue
        outer = [_base(o) for o in node.output][:len(body)]
        if body != outer:
            return f"onnxscript's {node.op_type} {node.name}: outputs {outer}, its body's {body}"
    return None


def _onnxscript_functions(path: Path, workdir: Path) -> tuple[Any, list[onnx.FunctionProto]]:
    """The module as Python, and onnxscript's conversion of each of its functions."""
    module = harness.import_as_module(path, workdir, prefix="difftest_")
    try:
        opsets = harness.module_opsets(module)
        opsets.setdefault("this", {1})  # `@script()`'s own domain, at version 1
        protos = []
        for name in harness.top_level_functions(path):
            proto = getattr(module, name).to_function_proto()
            harness.repair_opset_imports(proto, opsets)
            protos.append(proto)
        return module, protos
    finally:
        sys.modules.pop(module.__name__, None)


def eager(module: Any, name: str, call: dict, feeds) -> list[np.ndarray] | None:
    """The function run by onnxscript's eager evaluator: its Python, each operator computed by
    ONNX Runtime. None if eager mode cannot run it."""
    kwargs = {n: v for n, v in feeds.items() if v is not None}
    kwargs.update(call["attrs"])
    opset = max(harness.module_opsets(module).get("", {0}))
    try:
        with _eager_at_opset(opset):
            result = getattr(module, name)(**kwargs)
    except Exception:  # noqa: BLE001 - eager mode is a tie-breaker only
        return None
    values = result if isinstance(result, (tuple, list)) else [result]
    return [np.asarray(getattr(v, "value", v)) for v in values]


@contextlib.contextmanager
def _eager_at_opset(version: int):
    """Eager mode with each operator's one-node model stamped with the module's ONNX opset.

    onnxscript stamps it with the operator's own `since_version`, which is also the version of
    every operator in its subgraphs: the body of a `Scan` at opset 15 is read at opset 11, where
    ONNX Runtime has no INT8 `Add`, and eager mode fails on what the source means. At the
    module's opset the operator is the same (the module's opset selected its schema) and its
    bodies' operators are the module's too."""
    from onnxscript._internal import evaluator

    prepare = evaluator._prepare_model_and_inputs_for_eager

    def at_module_opset(schema, *args):
        model, feeds, inputs = prepare(schema, *args)
        if schema.domain == "" and version > schema.since_version:
            for entry in model.opset_import:
                if entry.domain == "":
                    entry.version = version
            model.ir_version = harness.model_ir_version({"": version})
        return model, feeds, inputs

    evaluator._prepare_model_and_inputs_for_eager = at_module_opset
    try:
        yield
    finally:
        evaluator._prepare_model_and_inputs_for_eager = prepare


def serve(binary: Path, path: Path, kind: int, calls: list[dict], timeout: float) -> tuple[list[tuple[int, bytes]], int, str]:
    """onnxsc's answers to requests of `kind` (trace or call) for `calls`, from one `onnxsc serve`
    of `path` (a program, or the library built from it):
    (status, payload) per call answered, the server's exit status and its stderr. Fewer
    answers than calls means the server refused the program (exit 1, no answer) or died."""
    from onnxsc._server import HELLO, PROTOCOL

    requests = [bytes([HELLO]) + struct.pack("<I", PROTOCOL) + b"difftest"]
    requests += [bytes([kind]) + json.dumps(c).encode() for c in calls]
    frames = b"".join(struct.pack("<I", len(r)) + r for r in requests)
    proc = subprocess.run([str(binary), "--color", "never", "serve", str(path)], input=frames,
                          capture_output=True, timeout=timeout, check=False)
    answers, data = [], proc.stdout
    # The answer to the handshake first.
    if len(data) >= 4:
        (length,) = struct.unpack("<I", data[:4])
        data = data[4 + length:]
    while len(data) >= 4 and len(answers) < len(calls):
        (length,) = struct.unpack("<I", data[:4])
        if length == 0 or len(data) < 4 + length:
            break
        answers.append((data[4], data[5:4 + length]))
        data = data[4 + length:]
    return answers, proc.returncode, proc.stderr.decode("utf-8", errors="replace")


def inferred(value) -> tuple:
    """(element type or 0, dimensions or None) an answer declares on an output: each dimension a
    number, a symbol, or None. An unknown element type with no dimension is onnxsc's
    placeholder for an output it knows nothing of."""
    t = value.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
    if t.elem_type == 0 and not dims:
        return 0, None
    return t.elem_type, dims


def contradiction(declared: list, got: list) -> str:
    """Where what onnxsc inferred contradicts what ONNX Runtime returns (less specific is
    allowed), or ""."""
    for k, ((elem, dims), array) in enumerate(zip(declared, got)):
        array = np.asarray(array)
        if elem and onnx.helper.tensor_dtype_to_np_dtype(elem) != array.dtype:
            return f"output {k}: onnxsc infers {onnx.TensorProto.DataType.Name(elem)}, ONNX Runtime returns {array.dtype}"
        if dims is None:
            continue
        if len(dims) != array.ndim or any(isinstance(d, int) and d != n for d, n in zip(dims, array.shape)):
            return f"output {k}: onnxsc infers dimensions {dims}, ONNX Runtime returns {list(array.shape)}"
    return ""


class Oracle:
    def __init__(self, binary: Path, workdir: Path | None = None):
        self.onnxsc = harness.Onnxsc(binary, timeout=120)
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="difftest-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.counter = 0

    def run_text(self, text: str) -> Result:
        """The outcome of the program `text` (a case file: header line, then the module)."""
        meta = read_header(text)
        self.counter += 1
        stem = f"p{os.getpid()}_{self.counter}"
        path = self.workdir / f"{stem}.onnxs"
        path.write_text(text, encoding="utf-8")
        try:
            return self._run(path, meta)
        finally:
            for pattern in (f"{stem}*", f"difftest_{stem}_*"):
                for leftover in self.workdir.glob(pattern):
                    leftover.unlink()
            shutil.rmtree(self.workdir / "__pycache__", ignore_errors=True)

    def _run(self, path: Path, meta: dict) -> Result:
        if meta.get("kind") == "trace":
            from .trace_oracle import run_trace

            return run_trace(self, path, meta)
        calls: dict[str, Any] = meta["calls"]
        try:
            module, reference = _onnxscript_functions(path, self.workdir)
        except Exception as exc:  # noqa: BLE001 - onnxscript's refusal is the outcome
            detail = f"onnxscript: {type(exc).__name__}: {exc}"
            return Result([Outcome(INVALID, name, detail) for name in calls])
        faults = [fault for fault in map(miswired, reference) if fault]
        if faults:
            return Result([Outcome(INVALID, name, faults[0]) for name in calls])
        outcomes: list[Outcome] = []
        inputs = {name: make_inputs(call["inputs"], zlib.crc32(f"{meta['seed']}:{name}".encode()))
                  for name, call in calls.items()}
        expected: dict[str, list[np.ndarray]] = {}
        for name, theirs in run_calls(reference, [(n, c, inputs[n]) for n, c in calls.items()]).items():
            if isinstance(theirs, Exception):
                outcomes.append(Outcome(INVALID, name, f"ONNX Runtime refuses onnxscript's model: {theirs}"))
            else:
                expected[name] = theirs
        if not expected:
            return Result(outcomes)
        built = self.onnxsc.build([path], path.with_suffix(".onnx"))
        if built.returncode != 0:
            kind = VALID_REJECTED if built.returncode == 1 else DISAGREE
            detail = f"onnxsc exit {built.returncode}:\n{built.stdout}{built.stderr}"
            return Result(outcomes + [Outcome(kind, name, detail) for name in expected])
        ours = run_calls(list(built.model.functions), [(n, calls[n], inputs[n]) for n in expected])
        ran = [n for n in expected if not isinstance(ours[n], Exception)]
        inferred_for = self._inferred(path.with_suffix(".onnx"), built.model, calls, inputs, ran)
        for name, theirs in expected.items():
            got, feeds = ours[name], inputs[name]
            if isinstance(got, Exception):
                outcomes.append(Outcome(DISAGREE, name, f"ONNX Runtime refuses onnxsc's model: {got}"))
                continue
            difference = compare(got, theirs)
            if difference is None:
                # What onnxsc's check of the typed call infers, against what ONNX Runtime returns.
                refused, declared = inferred_for[name]
                if refused:
                    outcomes.append(Outcome(VALID_REJECTED, name, f"onnxsc refuses the typed call:\n{refused}"))
                else:
                    contradicted = contradiction(declared, got)
                    outcomes.append(Outcome(DISAGREE if contradicted else AGREE, name, contradicted))
                continue
            python = eager(module, name, calls[name], feeds)
            if python is not None and compare(got, python) is None and compare(theirs, python) is not None:
                outcomes.append(Outcome(ONNXSCRIPT_WRONG, name, f"{difference}; eager Python gives onnxsc's"))
            else:
                outcomes.append(Outcome(DISAGREE, name, difference))
        return Result(outcomes)

    def _inferred(self, library: Path, built: onnx.ModelProto, calls: dict, inputs: dict, names: list) -> dict:
        """For each call of `names`: onnxsc's refusal of it as a typed call request (the one
        the Python package sends at export: its inputs' element types and shapes), or ""; and
        what the answer declares of each output (`inferred`)."""
        if not names:
            return {}
        from onnxsc._server import CALL

        domains = {f.name: f.domain for f in built.functions}
        requests = [_call_request(domains[n], n, calls[n], inputs[n]) for n in names]
        answers, status, stderr = serve(self.onnxsc.binary, library, CALL, requests, self.onnxsc.timeout)
        out = {}
        for k, name in enumerate(names):
            if k >= len(answers):
                out[name] = (f"onnxsc serve exit {status}, no answer:\n{stderr}", [])
            elif answers[k][0] != 0:
                out[name] = (answers[k][1].decode("utf-8", errors="replace"), [])
            else:
                out[name] = ("", [inferred(o) for o in onnx.load_from_string(answers[k][1]).graph.output])
        return out


def _call_request(domain: str, name: str, call: dict, feeds: dict) -> dict:
    """A typed call request of `name` for `call` with these inputs (`driver::call`)."""
    def tagged(value, spelling: str):
        if spelling.startswith("list["):
            return {"list": [tagged(v, spelling[5:-1]) for v in value]}
        kind = {"float": float, "int": int, "bool": bool, "str": str}[spelling]
        return {spelling: kind(value)}

    given = [n for n in call["inputs"] if feeds.get(n) is not None]
    types = {n: {"tensor": {"dtype": onnx.TensorProto.DataType.Name(harness.elem_type_of_array(feeds[n])),
                            "shape": list(feeds[n].shape)}} for n in given}
    attributes = {a: tagged(v, call["attr_types"][a]) for a, v in call["attrs"].items()}
    return {"function": f"{domain}::{name}", "inputs": given, "attributes": attributes, "types": types}
