"""Calls between modules: multi-module libraries against onnxscript 0.7.2 and ONNX Runtime.

Each scenario is a directory of ``tests/cases/modules/ok`` (the golden tests snapshot the same
directories): ``main.onnxs`` (or the files ``inputs.txt`` lists) imports the other modules, which
onnxsc finds beside it and compiles in. For each function checked here:

* onnxsc builds the scenario's inputs into one library;
* a model whose graph is one call of the function, with every function of the library as a
  model function, passes ``onnx.checker.check_model(full_check=True)``;
* ONNX Runtime runs it on a few inputs (and attribute settings), and the outputs equal those
  of the same model built from onnxscript's compilation of the same modules (the files copied
  as ``.py`` modules into a package on ``sys.path``, so Python's own imports resolve
  ``from mylib import f`` and ``from .helpers import f``), bit for bit;
* where onnxscript cannot compile the scenario (``mylib.f(x)`` through ``import mylib``, which
  its converter rejects, and import cycles, which Python's ``from main import f`` cannot
  resolve), the outputs are compared with numpy instead.

The call nodes are also compared with onnxscript's: the callee's domain and name, the attribute
names, and the version at which the caller imports the callee's domain (the version of the
callee's ``Opset``).
"""

from __future__ import annotations

import importlib
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import onnx
import pytest
from onnx import helper

import harness

MODULES_DIR = harness.REPO_ROOT / "tests" / "cases" / "modules" / "ok"


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------


@dataclass
class Case:
    scenario: str
    function: str
    # name -> dtype of each input (default float32); all inputs are [2, 3].
    dtypes: dict[str, str] = field(default_factory=dict)
    attrs: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    # numpy reference for scenarios onnxscript cannot compile: inputs in order -> output.
    numpy: Callable[..., np.ndarray] | None = None

    @property
    def id(self) -> str:
        return f"{self.scenario}::{self.function}"


CASES = [
    Case("from_import", "main_f"),
    Case("from_import", "main_in_lib_domain"),
    Case("relative", "main_f"),
    Case("relative", "via_module", numpy=lambda x: np.square(-x)),
    Case("shared_dependency", "main_f"),
    Case("input_elsewhere", "main_f"),
    Case("globals", "normalize", attrs=[{}, {"eps": 0.5}]),
    Case("globals", "normalize", dtypes={"x": "float64"}),
    Case("globals", "uses_constants"),
    Case("globals", "attribute_from_module"),
    Case("call_arguments", "positional_attribute"),
    Case("call_arguments", "keyword_input"),
    Case("call_arguments", "attribute_reference", attrs=[{}, {"factor": -1.5}, {"factor": 3.0, "flip": True}]),
    Case("call_arguments", "empty_list_attribute"),
    Case("call_arguments", "typevar_literal", dtypes={"x": "int64"}),
    Case("call_arguments", "omitted_optional_input"),
    Case("call_arguments", "none_for_optional_input"),
    Case("import_module", "main_f", numpy=lambda x: np.clip(2 * x + (2 * x + np.float32(0.25)), 0, 1)),
    Case("import_cycle", "main_f", numpy=lambda x: 2 * -np.abs(x)),
]

# Scenarios whose modules import each other relatively: imported as a package.
PACKAGE_SCENARIOS = {"relative"}


def scenario_inputs(scenario: str) -> list[Path]:
    """As the golden tests: the files ``inputs.txt`` lists, else ``main*.onnxs``."""
    d = MODULES_DIR / scenario
    listed = d / "inputs.txt"
    if listed.exists():
        lines = [l.strip() for l in listed.read_text().splitlines()]
        return [d / l for l in lines if l and not l.startswith("#")]
    return sorted(d.glob("main*.onnxs"))


# ---------------------------------------------------------------------------------------
# Building: onnxsc, and onnxscript through Python imports
# ---------------------------------------------------------------------------------------


class Libraries:
    """Each scenario built once per session, by onnxsc and by onnxscript."""

    def __init__(self, compiler: harness.Onnxsc, workdir: Path):
        self.compiler = compiler
        self.workdir = workdir
        self._onnxsc: dict[str, onnx.ModelProto] = {}
        self._onnxscript: dict[str, Any] = {}

    def onnxsc(self, scenario: str) -> onnx.ModelProto:
        if scenario not in self._onnxsc:
            out = self.workdir / f"onnxsc_{scenario}.onnx"
            result = self.compiler.build(scenario_inputs(scenario), out)
            self._onnxsc[scenario] = result.require_model()
            assert "warning" not in result.stderr, result.describe()
        return self._onnxsc[scenario]

    def onnxscript_module(self, scenario: str) -> Any:
        """The scenario's entry module, imported by Python with onnxscript converting each
        ``@script`` function as it is defined."""
        if scenario not in self._onnxscript:
            self._onnxscript[scenario] = import_scenario(scenario, self.workdir / "py")
        return self._onnxscript[scenario]


def import_scenario(scenario: str, root: Path) -> Any:
    """Copy the scenario's ``.onnxs`` files as ``.py`` modules into a package and import its
    entry module; its other modules are found by Python's own import system.

    The package directory is on ``sys.path`` (absolute imports such as ``from mylib import f``),
    as are the directories of the inputs (``input_elsewhere``'s ``vendor/``); scenarios with
    relative imports are imported as ``<package>.main``. Modules are removed from
    ``sys.modules`` afterwards so that scenarios with the same module names do not mix.
    """
    src = MODULES_DIR / scenario
    package = f"onnxsc_modules_{scenario}"
    dest = root / package
    if dest.exists():
        shutil.rmtree(dest)
    for f in src.rglob("*.onnxs"):
        target = dest / f.relative_to(src).with_suffix(".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
    for d in [dest, *[p for p in dest.rglob("*") if p.is_dir()]]:
        (d / "__init__.py").touch()
    inputs = scenario_inputs(scenario)
    paths = [str(root), str(dest)] + sorted({str(dest / p.parent.relative_to(src)) for p in inputs})
    before = set(sys.modules)
    saved_path = list(sys.path)
    sys.path[:0] = paths
    try:
        name = f"{package}.main" if scenario in PACKAGE_SCENARIOS else inputs[0].stem
        clashing = [m for m in list(sys.modules) if m == name or m.startswith(name + ".")]
        for m in clashing:
            del sys.modules[m]
        return importlib.import_module(name)
    finally:
        sys.path[:] = saved_path
        for m in set(sys.modules) - before:
            del sys.modules[m]


def onnxscript_functions(module: Any, name: str) -> list[onnx.FunctionProto]:
    """The FunctionProto of ``module.name`` and of every function it calls, transitively,
    with the opset imports onnxscript forgets in subgraphs repaired."""
    top = getattr(module, name)
    functions = [top, *top.function_ir.get_called_functions().values()]
    protos = []
    from onnxscript import values

    for f in functions:
        fp = f.to_function_proto()
        # The Opsets of the function's own module (its globals), as harness.module_opsets.
        opsets: dict[str, set[int]] = {}
        for v in f.function.__globals__.values():
            if isinstance(v, values.Opset):
                opsets.setdefault(v.domain, set()).add(v.version)
        harness.repair_opset_imports(fp, opsets)
        protos.append(fp)
    return protos


# ---------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------


def call_model(top: onnx.FunctionProto, functions: list[onnx.FunctionProto], dtypes: dict[str, int], attrs: dict[str, Any], attr_types: dict[str, str]) -> onnx.ModelProto:
    """A model whose graph calls ``top`` once, carrying ``functions`` (the library) as model
    functions. Its opset imports are those of the functions (the highest version of each
    domain) and each function's own domain, as onnxsc's library model has them."""
    node = helper.make_node(top.name, list(top.input), [f"out{i}" for i in range(len(top.output))], domain=top.domain)
    for k, v in attrs.items():
        node.attribute.append(harness.make_attribute(k, v, attr_types.get(k)))
    out_type = dtypes[top.input[0]]
    graph = helper.make_graph(
        [node],
        f"call_{top.name}",
        [helper.make_tensor_value_info(i, dtypes[i], [2, 3]) for i in top.input],
        [helper.make_tensor_value_info(f"out{i}", out_type, [None, None]) for i in range(len(top.output))],
    )
    return harness.model_with_functions(graph, functions, "onnxsc-tests", {"": 18})


def feeds_for(case: Case, top: onnx.FunctionProto, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for name in top.input:
        dtype = case.dtypes.get(name, "float32")
        if dtype == "int64":
            feeds[name] = rng.integers(-9, 9, size=(2, 3)).astype(np.int64)
        else:
            feeds[name] = rng.uniform(-3, 3, size=(2, 3)).astype(dtype)
    return feeds


def elem_types(case: Case, top: onnx.FunctionProto) -> dict[str, int]:
    return {n: harness.elem_type_of_name(case.dtypes.get(n, "float32")) for n in top.input}


@pytest.fixture(scope="module")
def libraries(onnxsc, tmp_path_factory) -> Libraries:
    return Libraries(onnxsc, tmp_path_factory.mktemp("modules"))


# Scenarios without a scripted function to run: what they show is what the compiler reports.
NOTHING_TO_RUN = {
    # A copy of torchlib's common.py beside a trace-only translation (W0101).
    "torchlib_common_copy",
}


def test_every_scenario_is_covered():
    scenarios = {p.name for p in MODULES_DIR.iterdir() if p.is_dir()} - NOTHING_TO_RUN
    covered = {c.scenario for c in CASES}
    assert scenarios == covered, sorted(scenarios ^ covered)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_library_call_checks_and_runs_like_onnxscript(case: Case, libraries: Libraries):
    library = libraries.onnxsc(case.scenario)
    functions = list(library.functions)
    top = harness.functions_by_name(library)[case.function]
    attr_types = {a["name"]: a["type"] for a in harness.metadata_signature(top)["attributes"]}
    types = elem_types(case, top)

    reference_functions = None
    if case.numpy is None:
        module = libraries.onnxscript_module(case.scenario)
        reference_functions = onnxscript_functions(module, case.function)

    for attrs in case.attrs:
        model = call_model(top, functions, types, attrs, attr_types)
        onnx.checker.check_model(model, full_check=True)
        if reference_functions is not None:
            reference = call_model(reference_functions[0], reference_functions, types, attrs, attr_types)
            onnx.checker.check_model(reference, full_check=True)
        for seed in range(3):
            feeds = feeds_for(case, top, harness.seed_for(case.id, str(seed)))
            got = harness.run_model(model, feeds)
            if reference_functions is not None:
                want = harness.run_model(reference, feeds)
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    assert g.dtype == w.dtype and g.shape == w.shape
                    np.testing.assert_array_equal(g, w, err_msg=f"{case.id} {attrs}")
            else:
                want = case.numpy(*[feeds[i] for i in top.input])
                np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-6, err_msg=case.id)


def _call_nodes(fp: onnx.FunctionProto, library_domains: set[str]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [
        (n.domain, n.op_type, tuple(sorted(a.name for a in n.attribute)))
        for n in harness.iter_nodes(fp.node)
        if n.domain in library_domains
    ]


@pytest.mark.parametrize("case", [c for c in CASES if c.numpy is None], ids=lambda c: c.id)
def test_call_nodes_and_imports_match_onnxscript(case: Case, libraries: Libraries):
    """Calls are nodes in the callee's domain named as the callee is defined, with the same
    attributes as onnxscript's; the caller imports each callee domain at the same version."""
    library = libraries.onnxsc(case.scenario)
    domains = {f.domain for f in library.functions}
    ours = harness.functions_by_name(library)[case.function]
    ref = onnxscript_functions(libraries.onnxscript_module(case.scenario), case.function)[0]
    assert _call_nodes(ours, domains) == _call_nodes(ref, domains)
    ref_imports = {o.domain: o.version for o in ref.opset_import}
    our_imports = {o.domain: o.version for o in ours.opset_import}
    for domain in {d for d, _, _ in _call_nodes(ours, domains)}:
        assert our_imports.get(domain) == ref_imports.get(domain), domain


def test_callee_domain_imported_at_its_opset_version(libraries: Libraries):
    """`mylib` declares `Opset("my.lib", 2)`: callers import `my.lib` at 2, as onnxscript does."""
    fns = harness.functions_by_name(libraries.onnxsc("from_import"))
    assert {o.domain: o.version for o in fns["main_f"].opset_import}["my.lib"] == 2
    module = libraries.onnxscript_module("from_import")
    assert {o.domain: o.version for o in module.main_f.to_function_proto().opset_import}["my.lib"] == 2


def test_omitted_optional_input_keeps_its_position(libraries: Libraries):
    """`add_opt(x, c=z)` passes z as the third input, with "" for the omitted second. onnxscript
    passes (x, z), binding z to the second parameter: a known fault, not copied."""
    fns = harness.functions_by_name(libraries.onnxsc("call_arguments"))
    (call,) = [n for n in fns["omitted_optional_input"].node if n.op_type == "add_opt"]
    assert list(call.input) == ["x", "", "z"]
    module = libraries.onnxscript_module("call_arguments")
    (ref,) = [n for n in module.omitted_optional_input.to_function_proto().node if n.op_type == "add_opt"]
    assert list(ref.input) == ["x", "z"]


def test_library_holds_each_module_once_in_a_stable_order(onnxsc, tmp_path):
    """`left` and `right` both import `common`: one `common_relu`; the order is the inputs',
    then the modules' in the order their imports are reached; two builds are byte-identical."""
    inputs = scenario_inputs("shared_dependency")
    first = onnxsc.build(inputs, tmp_path / "a.onnx").require_model()
    assert [f.name for f in first.functions] == ["main_f", "left_f", "right_f", "common_relu"]
    onnx.checker.check_model(first)
    second = onnxsc.build(inputs, tmp_path / "b.onnx").require_model()
    assert first.SerializeToString() == second.SerializeToString()


def test_duplicate_function_across_modules_is_an_error(onnxsc, tmp_path):
    """Two modules defining `this::helper` would make a library onnx.checker rejects ("same
    implementation id"), so the build fails with E0104 and writes nothing."""
    d = MODULES_DIR.parent / "errors" / "duplicate_name"
    out = tmp_path / "dup.onnx"
    result = onnxsc.build(sorted(d.glob("main*.onnxs")), out)
    assert result.returncode == 1, result.describe()
    assert "E0104" in result.stderr
    assert not out.exists()


def test_missing_module_is_an_error_naming_the_path(onnxsc, tmp_path):
    src = tmp_path / "main.onnxs"
    src.write_text(
        "from onnxscript import FLOAT, script\nfrom helpers_lib import f\n\n\n"
        "@script()\ndef g(x: FLOAT) -> FLOAT:\n    return f(x)\n"
    )
    result = onnxsc.build([src], tmp_path / "out.onnx")
    assert result.returncode == 1, result.describe()
    assert "E0111" in result.stderr and "helpers_lib.onnxs" in result.stderr, result.describe()
