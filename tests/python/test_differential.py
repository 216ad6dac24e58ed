"""Differential tests: onnxsc against onnxscript 0.7.2 on ``differential/*.onnxs``.

Each ``.onnxs`` file is valid Python. For every top-level function:

* onnxscript compiles it (the file is imported as a module from a temp dir; undecorated
  functions go through ``onnxscript.script()``), giving the reference FunctionProto;
* onnxsc compiles the file (``onnxsc build FILE -o OUT.onnx``); the function of the same
  name is taken from the output model's ``functions``;
* both are wrapped the same way in a one-node model and run in ONNX Runtime on the same
  inputs and attributes; the outputs must be identical (same dtype, shape and bits);
* the compiled function must also pass ``onnx.checker.check_model(full_check=True)``,
  match onnxscript's interface (name, domain, inputs, attributes and defaults, number of
  outputs, doc string), import every domain it uses, never return an input directly, and
  carry an ``onnxsc.signature`` metadata entry that matches the Python signature.

The spec of each function is the block of ``# case:`` comment lines right above it (above
its decorators). Joined and wrapped in braces they form a Python dict literal::

    # case: "inputs": [{"x": "float32[2,3]", "y": "int64[3] in [1, 9]"},
    # case:            {"x": ("float32", [1.0, -2.0]), "y": ("int64", [4, 5])}],
    # case: "attrs": [{}, {"alpha": 2.0}],
    # case: "outputs": ["float32", "like:y"],

* ``inputs``: several input sets; each maps every input parameter to either
  ``"DTYPE[d0,d1,...]"`` (random values, optionally ``in [lo, hi]``; ``DTYPE[]`` is a
  scalar) or ``(DTYPE, value)`` (an explicit nested list or scalar).
* ``attrs``: the attribute settings to call with (default ``[{}]``); an attribute left
  out makes the function's default apply. Every setting runs on every input set.
* ``outputs``: the element type of each output, a DTYPE or ``"like:INPUT"``.
* ``checker`` (optional): a reason to skip ``onnx.checker`` (for ONNX Runtime's operators of
  the ONNX domain, which onnx does not define); ONNX Runtime still runs both functions.
* ``inline`` (optional): a reason to inline the function (``onnx.inliner``) before running
  both models, as torch's exporter and onnxscript's ``to_model_proto`` do.
* ``tol`` (optional): ``{"rtol": ..., "atol": ..., "why": "..."}`` to compare with
  ``assert_allclose`` instead of exact equality; a reason is required. No case uses it:
  both models run the same ops on ONNX Runtime with graph optimisations off and a single
  thread, so equal programs give bit-identical results.
"""

from __future__ import annotations

import ast
import inspect
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.inliner
import pytest

import harness

DIFF_FILES = sorted(harness.DIFFERENTIAL_DIR.glob("*.onnxs"))
MIN_CASES = 35
SPEC_KEYS = {"inputs", "attrs", "outputs", "tol", "checker", "inline"}
DEFAULT_FLOAT_RANGE = (-4.0, 4.0)
DEFAULT_INT_RANGE = (-9, 9)


# ---------------------------------------------------------------------------------------
# Specs
# ---------------------------------------------------------------------------------------


@dataclass
class Case:
    path: Path
    name: str
    spec: dict[str, Any] | None
    spec_error: str | None = None
    input_names: list[str] = field(default_factory=list)
    attr_types: dict[str, str] = field(default_factory=dict)
    attr_defaults: set[str] = field(default_factory=set)

    @property
    def id(self) -> str:
        return f"{self.path.stem}::{self.name}"


def _spec_comment_block(lines: list[str], first_line: int) -> list[str]:
    """The ``# case:`` lines directly above line ``first_line`` (1-based)."""
    block: list[str] = []
    i = first_line - 2
    while i >= 0 and lines[i].lstrip().startswith("# case:"):
        block.append(lines[i].lstrip()[len("# case:"):])
        i -= 1
    return list(reversed(block))


def collect_cases(path: Path) -> list[Case]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(path))
    cases = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        block = _spec_comment_block(lines, first)
        inputs, attr_types = harness.ast_signature(path, node.name)
        n_defaults = len(node.args.defaults)
        params = [a.arg for a in node.args.args]
        defaulted = set(params[len(params) - n_defaults:]) if n_defaults else set()
        case = Case(path, node.name, None, None, inputs, attr_types, defaulted & set(attr_types))
        if not block:
            case.spec_error = "no `# case:` spec comment block above the function"
        else:
            try:
                spec = ast.literal_eval("{" + "\n".join(block) + "}")
                assert isinstance(spec, dict)
                case.spec = spec
            except Exception as exc:  # noqa: BLE001 - reported by test_spec
                case.spec_error = f"the `# case:` block is not a dict literal: {exc}"
        cases.append(case)
    return cases


CASES: list[Case] = [c for path in DIFF_FILES for c in collect_cases(path)]

_INPUT_RE = re.compile(
    r"^\s*(?P<dtype>\w+)\[(?P<shape>[^\]]*)\]"
    r"(?:\s+in\s+\[\s*(?P<lo>[-+.\deE]+)\s*,\s*(?P<hi>[-+.\deE]+)\s*\])?\s*$"
)


def make_input(spec: Any, rng: np.random.Generator) -> np.ndarray:
    if isinstance(spec, tuple):
        dtype, value = spec
        return np.array(value, dtype=harness.DTYPES[dtype][0])
    m = _INPUT_RE.match(spec)
    if not m:
        raise ValueError(f"bad input spec {spec!r}")
    dtype = m["dtype"]
    np_dtype = harness.DTYPES[dtype][0]
    shape = tuple(int(d) for d in m["shape"].split(",") if d.strip())
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "string":
        return np.array(
            ["".join(rng.choice(list("abcxyz"), size=3)) for _ in range(int(np.prod(shape)))],
            dtype=object,
        ).reshape(shape)
    if np.issubdtype(np_dtype, np.integer):
        lo, hi = (int(m["lo"]), int(m["hi"])) if m["lo"] else DEFAULT_INT_RANGE
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(np_dtype)
    lo, hi = (float(m["lo"]), float(m["hi"])) if m["lo"] else DEFAULT_FLOAT_RANGE
    return rng.uniform(lo, hi, size=shape).astype(np_dtype)


def make_inputs(case: Case, index: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(harness.seed_for(case.id, str(index)))
    return {name: make_input(s, rng) for name, s in case.spec["inputs"][index].items()}


def output_types(case: Case, feeds: dict[str, np.ndarray]) -> list[int]:
    types = []
    for out in case.spec["outputs"]:
        if out.startswith("like:"):
            types.append(harness.elem_type_of_array(feeds[out[len("like:"):]]))
        else:
            types.append(harness.elem_type_of_name(out))
    return types


# ---------------------------------------------------------------------------------------
# Compilation caches
# ---------------------------------------------------------------------------------------


class ReferenceCache:
    """onnxscript's compilation of each differential file, once per session."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self._by_path: dict[Path, dict[str, harness.ReferenceFunction] | Exception] = {}

    def function(self, path: Path, name: str) -> harness.ReferenceFunction:
        if path not in self._by_path:
            try:
                compiled = harness.compile_with_onnxscript(path, self.workdir)
                self._by_path[path] = {f.name: f for f in compiled}
            except Exception as exc:  # noqa: BLE001 - reported below, for every case
                self._by_path[path] = exc
        found = self._by_path[path]
        if isinstance(found, Exception):
            pytest.fail(
                f"onnxscript cannot compile {path.name} (a problem of the test suite, not "
                f"of onnxsc): {type(found).__name__}: {found}"
            )
        return found[name]


@pytest.fixture(scope="session")
def references(tmp_path_factory) -> ReferenceCache:
    return ReferenceCache(tmp_path_factory.mktemp("onnxscript-modules"))


def compiled(onnxsc_builds, case: Case) -> onnx.FunctionProto:
    functions = onnxsc_builds.functions(case.path)
    assert case.name in functions, (
        f"onnxsc's output for {case.path.name} has no function {case.name!r} "
        f"(it has {sorted(functions)})"
    )
    return functions[case.name]


# ---------------------------------------------------------------------------------------
# Tests of the suite itself
# ---------------------------------------------------------------------------------------


def test_suite_size():
    assert len(CASES) >= MIN_CASES, f"only {len(CASES)} differential cases"
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


def test_function_names_unique_across_files():
    names = [c.name for c in CASES]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"function names used in more than one file: {dupes}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_spec(case: Case):
    """Each function has a well-formed spec that exercises it properly."""
    assert case.spec_error is None, f"{case.id}: {case.spec_error}"
    spec = case.spec
    assert set(spec) <= SPEC_KEYS, f"unknown spec keys {set(spec) - SPEC_KEYS}"
    assert "inputs" in spec and "outputs" in spec
    assert len(spec["inputs"]) >= 2, "give several input sets"
    for i, input_set in enumerate(spec["inputs"]):
        assert list(input_set) == case.input_names, (
            f"input set {i} names {list(input_set)}, the function's inputs are "
            f"{case.input_names}"
        )
        feeds = make_inputs(case, i)
        output_types(case, feeds)  # every "like:" names an input
    attrs = spec.get("attrs", [{}])
    for setting in attrs:
        unknown = set(setting) - set(case.attr_types)
        assert not unknown, f"attribute setting {setting} names non-attributes {unknown}"
        required = set(case.attr_types) - case.attr_defaults
        assert required <= set(setting), f"setting {setting} misses required {required}"
    if case.attr_types:
        assert len(attrs) >= 3, "give several attribute settings"
    for name in case.attr_defaults:
        assert any(name not in s for s in attrs), f"no setting omits {name!r} (its default)"
        assert any(name in s for s in attrs), f"no setting gives {name!r} explicitly"
    if "tol" in spec:
        assert spec["tol"].get("why"), "a tolerance needs a reason"


# ---------------------------------------------------------------------------------------
# onnxsc against onnxscript
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", DIFF_FILES, ids=lambda p: p.stem)
def test_builds_in_source_order(path: Path, onnxsc_builds):
    """Every function of the file is compiled, in source order."""
    model = onnxsc_builds.build(path).require_model()
    assert [f.name for f in model.functions] == harness.top_level_functions(path)


def test_directory_build(onnxsc, tmp_path):
    """Building the whole directory gives every function of every file."""
    model = onnxsc.build([harness.DIFFERENTIAL_DIR], tmp_path / "all.onnx").require_model()
    built = [f.name for f in model.functions]
    assert sorted(built) == sorted(c.name for c in CASES)
    for path in DIFF_FILES:
        expected = harness.top_level_functions(path)
        assert [n for n in built if n in expected] == expected, path.name


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_interface(case: Case, references, onnxsc_builds):
    """Name, domain, inputs, attributes and their defaults, outputs, doc string and opset
    imports agree with onnxscript's function."""
    ref = references.function(case.path, case.name).proto
    fp = compiled(onnxsc_builds, case)
    assert fp.domain == ref.domain, "domain"
    assert list(fp.input) == list(ref.input), "input names"
    assert list(fp.attribute) == list(ref.attribute), "attributes without default"
    assert [harness.canon_attribute(a) for a in fp.attribute_proto] == [
        harness.canon_attribute(a) for a in ref.attribute_proto
    ], "attributes with default (name, type, value)"
    assert len(fp.output) == len(ref.output), "number of outputs"
    assert len(set(fp.output)) == len(fp.output), f"output names repeat: {list(fp.output)}"
    passthrough = set(fp.output) & set(fp.input)
    assert not passthrough, f"inputs returned directly (need an Identity): {passthrough}"
    assert fp.doc_string == ref.doc_string, "doc_string (the docstring, verbatim)"

    imports: dict[str, int] = {}
    for o in fp.opset_import:
        assert o.domain not in imports, f"domain {o.domain!r} imported twice"
        imports[o.domain] = o.version
    assert "ai.onnx" not in imports, 'write the default domain as "", not "ai.onnx"'
    ref_imports = {o.domain: o.version for o in ref.opset_import}
    for domain in sorted(harness.used_domains(fp)):
        assert domain != "ai.onnx", 'node domain "ai.onnx": write ""'
        assert domain in imports, f"domain {domain!r} is used but not in opset_import"
        if domain in ref_imports:
            assert imports[domain] == ref_imports[domain], f"version of domain {domain!r}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_signature_metadata(case: Case, references, onnxsc_builds):
    """The ``onnxsc.signature`` metadata matches the Python signature."""
    ref = references.function(case.path, case.name)
    fp = compiled(onnxsc_builds, case)
    sig = harness.metadata_signature(fp)
    assert sig is not None, f"no {harness.SIGNATURE_KEY!r} entry in metadata_props"
    expected = harness.python_signature(ref.python_function)

    assert [i["name"] for i in sig["inputs"]] == [n for n, _ in expected.inputs]
    for entry, (name, annotation) in zip(sig["inputs"], expected.inputs):
        strict, type_name = harness.expected_input_type(annotation)
        if strict:
            assert entry.get("type") == type_name, f"type of input {name!r}"
        else:
            assert entry.get("type") is not None, f"input {name!r} is annotated"

    assert [(a["name"], a["type"]) for a in sig["attributes"]] == [
        (a.name, a.type) for a in expected.attributes
    ], "attribute names and types"
    for entry, attr in zip(sig["attributes"], expected.attributes):
        if attr.has_default:
            assert "default" in entry, f"attribute {attr.name!r} has a default"
            assert harness.same_default(attr.default, entry["default"], attr.type), (
                f"default of {attr.name!r}: {entry['default']!r} != {attr.default!r}"
            )
        else:
            assert entry.get("default") is None, f"attribute {attr.name!r} has no default"

    assert len(sig["outputs"]) == len(fp.output), "number of outputs"
    ret = expected.return_annotation
    ret_types = list(typing.get_args(ret)) if typing.get_origin(ret) is tuple else [ret]
    if ret is not inspect.Parameter.empty and len(ret_types) == len(sig["outputs"]):
        for entry, annotation in zip(sig["outputs"], ret_types):
            strict, type_name = harness.expected_input_type(annotation)
            if strict and type_name is not None:
                assert entry.get("type") == type_name, "output type"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_differential(case: Case, references, onnxsc_builds):
    """Same outputs as onnxscript's function on every input set and attribute setting;
    the compiled function passes the full ONNX checker."""
    assert case.spec is not None, case.spec_error
    ref = references.function(case.path, case.name)
    fp = compiled(onnxsc_builds, case)
    tol = case.spec.get("tol")
    runs = 0
    for attrs in case.spec.get("attrs", [{}]):
        for index in range(len(case.spec["inputs"])):
            feeds = make_inputs(case, index)
            types = output_types(case, feeds)
            graph_inputs = [(n, harness.elem_type_of_array(a), a.shape) for n, a in feeds.items()]
            where = f"{case.id} with attributes {attrs}, input set {index} (" + ", ".join(
                f"{k}: {v.dtype}{list(v.shape)}" for k, v in feeds.items()
            ) + ")"

            ref_model = harness.wrap_function(
                ref.proto,
                graph_inputs,
                [(f"output_{i}", t, None) for i, t in enumerate(types)],
                attrs,
                case.attr_types,
            )
            if case.spec.get("inline"):
                ref_model = onnx.inliner.inline_local_functions(ref_model)
            try:
                expected = harness.run_model(ref_model, feeds)
            except Exception as exc:  # noqa: BLE001
                pytest.fail(
                    f"the onnxscript reference fails on {where} (a problem of the test "
                    f"suite, not of onnxsc): {exc}"
                )

            model = harness.wrap_function(
                fp,
                graph_inputs,
                [(f"output_{i}", t, e.shape) for i, (t, e) in enumerate(zip(types, expected))],
                attrs,
                case.attr_types,
            )
            try:
                if not case.spec.get("checker"):
                    onnx.checker.check_model(model, full_check=True)
            except Exception as exc:  # noqa: BLE001
                pytest.fail(f"onnx.checker rejects onnxsc's function, {where}: {exc}")
            if case.spec.get("inline"):
                model = onnx.inliner.inline_local_functions(model)
            try:
                actual = harness.run_model(model, feeds)
            except Exception as exc:  # noqa: BLE001
                pytest.fail(f"ONNX Runtime fails on onnxsc's function, {where}: {exc}")

            assert len(actual) == len(expected), where
            for i, (a, e) in enumerate(zip(actual, expected)):
                harness.assert_same_output(a, e, f"{where}: output {i}", tol)
            runs += 1
    assert runs >= 2
