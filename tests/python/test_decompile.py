"""`onnxsc decompile` round-trips real functions: decompiled, then compiled by `onnxsc build`,
each gives back the same function (the same nodes, attributes and values; value, attribute and
function names aside).

The functions:

* every scripted (non-trace_only) torchlib translation of the pinned onnxscript, as onnxscript
  itself compiles it (the registry's `OnnxFunction.to_function_proto()`), decompiled from one
  library holding all of them;
* the same translations as onnxsc compiles them (`torchlib_source`'s modules, built into one
  library);
* every function body of an ONNX operator that onnxsc embeds (`onnxsc decompile --op NAME
  --opset N` for each body's opset), compared with the body whose attributes take the
  schema's defaults (which the decompiled function declares).

Each group counts its functions and asserts that at least `FLOOR` of them round-trip, listing
the failures. `test_export2python_does_worse` runs onnxscript's own `export2python` on the same
functions (its output compiled by onnxscript) and reports both counts.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from pathlib import Path

import onnx
import onnx.defs
import pytest

import harness
import torchlib_source

# The share of each group that must round-trip.
FLOOR = 0.95


# --------------------------------------------------------------------------------------
# A name-insensitive canonical form
# --------------------------------------------------------------------------------------


class _Names:
    """Canonical names by order of definition, one scope per graph."""

    def __init__(self, parent: _Names | None = None):
        self.parent = parent
        self.map: dict[str, str] = {}
        self.counter = parent.counter if parent else [0]

    def define(self, name: str) -> str:
        if name == "":
            return ""
        self.counter[0] += 1
        self.map[name] = f"v{self.counter[0]}"
        return self.map[name]

    def lookup(self, name: str) -> str:
        if name == "":
            return ""
        scope: _Names | None = self
        while scope is not None:
            if name in scope.map:
                return scope.map[name]
            scope = scope.parent
        return "?" + name


def _attribute(a: onnx.AttributeProto, names: _Names, attrs: dict[str, str]):
    """`harness.canon_attribute`, with references and subgraphs named by position."""
    if a.ref_attr_name:
        return (a.name, a.type, "@" + attrs.get(a.ref_attr_name, "?" + a.ref_attr_name))
    if a.type == onnx.AttributeProto.GRAPH:
        return (a.name, a.type, _graph(a.g, names, attrs))
    return harness.canon_attribute(a)


def _graph(g: onnx.GraphProto, outer: _Names, attrs: dict[str, str]):
    names = _Names(outer)
    inputs = tuple(names.define(i.name) for i in g.input)
    nodes = tuple(_node(n, names, attrs) for n in g.node)
    return (inputs, nodes, tuple(names.lookup(o.name) for o in g.output))


def _node(n: onnx.NodeProto, names: _Names, attrs: dict[str, str]):
    attributes = tuple(
        _attribute(a, names, attrs) for a in sorted(n.attribute, key=lambda a: a.name)
    )
    inputs = tuple(names.lookup(i) for i in n.input)
    outputs = tuple(names.define(o) for o in n.output)
    return (n.domain or "", n.op_type, inputs, outputs, attributes)


def canonical(fp: onnx.FunctionProto, *, with_domain: bool = True) -> dict:
    """The function with every value and attribute parameter named by its position."""
    names = _Names()
    attrs = {a: f"a{i}" for i, a in enumerate([*fp.attribute, *(p.name for p in fp.attribute_proto)])}
    inputs = tuple(names.define(i) for i in fp.input)
    nodes = tuple(_node(n, names, attrs) for n in fp.node)
    return {
        "domain": fp.domain if with_domain else None,
        "opset_import": tuple(sorted((o.domain, o.version) for o in fp.opset_import)),
        "input": inputs,
        "output": tuple(names.lookup(o) for o in fp.output),
        "attribute": tuple(attrs[a] for a in fp.attribute),
        "attribute_proto": tuple(
            (attrs[p.name],) + _attribute(p, names, attrs)[1:] for p in fp.attribute_proto
        ),
        "node": nodes,
    }


def difference(expected: dict, actual: dict) -> str:
    for key in expected:
        if expected[key] != actual[key]:
            if key == "node":
                for i, (e, a) in enumerate(zip(expected[key], actual[key])):
                    if e != a:
                        return f"node {i}: expected {e}\n  got {a}"
                return f"{len(expected[key])} nodes expected, got {len(actual[key])}"
            return f"{key}: expected {expected[key]}, got {actual[key]}"
    return ""


def test_canonical_form_sees_structure_not_names():
    def fn(value_name: str, alpha: float) -> onnx.FunctionProto:
        node = onnx.helper.make_node("LeakyRelu", ["x"], [value_name], alpha=alpha)
        out = onnx.helper.make_node("Neg", [value_name], ["y"])
        return onnx.helper.make_function("d", "f", ["x"], ["y"], [node, out], [onnx.helper.make_opsetid("", 18)])

    assert canonical(fn("a", 0.5)) == canonical(fn("b", 0.5))
    assert canonical(fn("a", 0.5)) != canonical(fn("a", 0.25))


# --------------------------------------------------------------------------------------
# The functions
# --------------------------------------------------------------------------------------


def onnxscript_torchlib_functions() -> list[onnx.FunctionProto]:
    """onnxscript's own FunctionProtos of its scripted torchlib translations."""
    import onnxscript
    from onnxscript.function_libs.torch_lib import registration
    from onnxscript.function_libs.torch_lib.ops import (  # noqa: F401  (registers them)
        core, fft, linalg, nn, prims, sparse, special, vision,
    )

    found: dict[str, onnx.FunctionProto] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _name, entry in sorted(registration.default_registry.items()):
            for f in entry.overloads:
                if isinstance(f, onnxscript.OnnxFunction) and f.name not in found:
                    found[f.name] = f.to_function_proto()
    return [found[k] for k in sorted(found)]


def library(functions: list[onnx.FunctionProto], path: Path) -> Path:
    imports: dict[str, int] = {}
    for f in functions:
        for o in f.opset_import:
            imports[o.domain] = max(imports.get(o.domain, 0), o.version)
        imports.setdefault(f.domain, 1)
    model = onnx.helper.make_model(
        onnx.helper.make_graph([], "library", [], []),
        functions=functions,
        opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in sorted(imports.items())],
        ir_version=10,
    )
    onnx.save(model, str(path))
    return path


def round_trip_library(onnxsc: harness.Onnxsc, lib: Path, tmp: Path) -> tuple[dict, str]:
    """Decompiles a library in one call and builds the result: name -> rebuilt function, and
    the command's standard error (where W1101 names the functions it finds changed)."""
    out = tmp / (lib.stem + "_decompiled.onnxs")
    proc = onnxsc.run("--color", "never", "decompile", lib, "-o", out)
    assert proc.returncode == 0, proc.stderr
    built = onnxsc.build([out], tmp / (lib.stem + "_rebuilt.onnx"))
    model = built.require_model()
    return {f.name: f for f in model.functions}, proc.stderr


def compare_all(expected: list[onnx.FunctionProto], rebuilt: dict, **kw) -> list[str]:
    failures = []
    for fp in expected:
        got = rebuilt.get(fp.name)
        if got is None:
            failures.append(f"{fp.name}: not rebuilt")
            continue
        diff = difference(canonical(fp, **kw), canonical(got, **kw))
        if diff:
            failures.append(f"{fp.name}: {diff}")
    return failures


def assert_floor(label: str, total: int, failures: list[str]) -> None:
    passed = total - len(failures)
    print(f"\n{label}: {passed}/{total} round-trip")
    assert total > 0
    assert passed >= FLOOR * total, f"{label}: only {passed}/{total} round-trip:\n" + "\n".join(failures)


@pytest.fixture(scope="module")
def torchlib_protos() -> list[onnx.FunctionProto]:
    functions = onnxscript_torchlib_functions()
    assert len(functions) >= 40, [f.name for f in functions]
    return functions


def test_onnxscript_torchlib_round_trips(torchlib_protos, onnxsc: harness.Onnxsc, tmp_path: Path):
    lib = library(torchlib_protos, tmp_path / "onnxscript_torchlib.onnx")
    rebuilt, stderr = round_trip_library(onnxsc, lib, tmp_path)
    failures = compare_all(torchlib_protos, rebuilt)
    assert_floor("onnxscript's torchlib functions", len(torchlib_protos), failures)
    # The command's own check (W1101) finds the same functions changed as this test.
    assert stderr.count("warning[W1101]") == len(failures), stderr


def test_onnxsc_torchlib_round_trips(onnxsc: harness.Onnxsc, tmp_path: Path):
    records = [r for r in torchlib_source.scripted_functions() if r.module_text is not None]
    assert len(records) >= 40
    functions: dict[str, onnx.FunctionProto] = {}
    for r in records:
        built = onnxsc.build([r.write(tmp_path / "src" / r.name)], tmp_path / f"{r.name}.onnx")
        if built.returncode != 0:
            continue  # torchlib_test's KNOWN_DEFECTS: not onnxsc output to decompile
        for f in built.require_model().functions:
            functions.setdefault(f.name, f)
    assert len(functions) >= 40
    expected = [functions[k] for k in sorted(functions)]
    lib = library(expected, tmp_path / "onnxsc_torchlib.onnx")
    rebuilt, _ = round_trip_library(onnxsc, lib, tmp_path)
    assert_floor("onnxsc's torchlib functions", len(expected), compare_all(expected, rebuilt))
    # The recorded signatures come back too, but for what may be None (docs/decompile.md).
    changed = [
        f"{fp.name}: {interface(fp)} became {interface(rebuilt[fp.name])}"
        for fp in expected
        if fp.name in rebuilt and interface(fp) != interface(rebuilt[fp.name])
    ]
    assert_floor("onnxsc's torchlib signatures", len(expected), changed)


def interface(fp: onnx.FunctionProto) -> dict:
    """What the recorded signature says a caller needs, but for what may be None (which
    decompile writes as plain parameters) and the output names (value names)."""
    sig = harness.metadata_signature(fp) or {}
    optional = any(p.get("optional") for p in [*sig.get("inputs", []), *sig.get("attributes", [])])
    return {
        "parameters": sig.get("parameters"),
        "inputs": [(i["name"], i.get("type")) for i in sig.get("inputs", [])],
        "outputs": [o.get("type") for o in sig.get("outputs", [])],
        "attributes": [
            (a["name"], a["type"], a.get("default")) for a in sig.get("attributes", []) if not a.get("optional")
        ],
        "ignored": sig.get("ignored", []),
        "torch_ops": None if optional else sig.get("torch_ops", []),
    }


# --------------------------------------------------------------------------------------
# ONNX operators' function bodies
# --------------------------------------------------------------------------------------

_GENERATED = harness.REPO_ROOT / "src" / "schema" / "generated" / "onnx_functions.json"


def operator_bodies() -> list[tuple[str, int, onnx.FunctionProto, bool]]:
    """(name, opset, body, context dependent) of every embedded body: one per body opset."""
    data = json.loads(_GENERATED.read_text(encoding="utf-8"))
    assert data["header"]["onnx"] == onnx.__version__
    out = []
    for e in data["bodies"]:
        if e["domain"]:
            continue
        fp = onnx.FunctionProto()
        fp.ParseFromString(bytes.fromhex(e["function"]))
        out.append((e["name"], e["opset"], fp, e["context_dependent"]))
    return out


BODIES = operator_bodies()


def test_every_function_bodied_operator_is_embedded():
    """Every static body onnx has is embedded; context-dependent ones are embedded or listed."""
    data = json.loads(_GENERATED.read_text(encoding="utf-8"))
    embedded = {(n, v) for n, v, _, _ in BODIES}
    left_out = {(e["name"], e["opset"]) for e in data["header"]["left_out"]}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain not in ("", "ai.onnx"):
            continue
        for v in s.function_opset_versions:
            assert (s.name, v) in embedded, (s.name, v)
        for v in s.context_dependent_function_opset_versions:
            assert (s.name, v) in embedded | left_out, (s.name, v)
    assert len(BODIES) >= 60


def with_schema_defaults(name: str, opset: int, fp: onnx.FunctionProto) -> onnx.FunctionProto:
    """The body as `decompile --op` declares it: named after the operator, in onnxsc's default
    domain, its attributes with a schema default moved to `attribute_proto`."""
    schema = onnx.defs.get_schema(name, opset)
    out = onnx.FunctionProto()
    out.CopyFrom(fp)
    out.name, out.domain = name, "this"
    del out.attribute[:]
    for a in fp.attribute:
        default = schema.attributes[a].default_value if a in schema.attributes else None
        if default is not None and default.type != onnx.AttributeProto.UNDEFINED:
            proto = onnx.AttributeProto()
            proto.CopyFrom(default)
            proto.name = a
            out.attribute_proto.append(proto)
        else:
            out.attribute.append(a)
    return out


def test_operator_bodies_round_trip(onnxsc: harness.Onnxsc, tmp_path: Path):
    failures = []
    for name, opset, fp, _ in BODIES:
        src = tmp_path / f"{name}_{opset}.onnxs"
        proc = onnxsc.run("--color", "never", "decompile", "--op", name, "--opset", str(opset), "-o", src)
        if proc.returncode != 0:
            failures.append(f"{name}@{opset}: decompile failed: {proc.stderr}")
            continue
        built = onnxsc.build([src], tmp_path / f"{name}_{opset}.onnx")
        if built.returncode != 0:
            failures.append(f"{name}@{opset}: build failed: {built.stderr}")
            continue
        got = built.model.functions[0]
        diff = difference(canonical(with_schema_defaults(name, opset, fp)), canonical(got))
        if diff:
            failures.append(f"{name}@{opset}: {diff}")
        # The command's own check (W1101) agrees.
        assert ("warning[W1101]" in proc.stderr) == bool(diff), f"{name}@{opset}: {proc.stderr}"
    assert_floor("ONNX operator bodies", len(BODIES), failures)


# --------------------------------------------------------------------------------------
# onnxscript's export2python on the same functions
# --------------------------------------------------------------------------------------


def in_domain(fp: onnx.FunctionProto, domain: str) -> onnx.FunctionProto:
    out = onnx.FunctionProto()
    out.CopyFrom(fp)
    out.domain = domain
    return out


def export2python_round_trips(fp: onnx.FunctionProto, tmp: Path, index: str) -> str:
    """'' when export2python's text, compiled by onnxscript, gives back `fp`; else why not."""
    from onnxscript.backend.onnx_export import export2python

    try:
        text = export2python(fp)
    except Exception as e:  # noqa: BLE001 - every failure counts
        return f"export2python raised {type(e).__name__}: {e}"
    path = tmp / f"e2p_{index}.py"
    path.write_text(text, encoding="utf-8")
    try:
        spec = importlib.util.spec_from_file_location(f"e2p_{index}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"e2p_{index}"] = module  # onnxscript reads the function's source through it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec.loader.exec_module(module)
        import onnxscript

        compiled = [v for v in vars(module).values() if isinstance(v, onnxscript.OnnxFunction)]
        if len(compiled) != 1:
            return f"{len(compiled)} functions in its output"
        got = compiled[0].to_function_proto()
    except Exception as e:  # noqa: BLE001
        return f"its output does not compile: {type(e).__name__}: {str(e)[:200]}"
    finally:
        sys.modules.pop(f"e2p_{index}", None)
    return difference(canonical(fp, with_domain=False), canonical(got, with_domain=False))


def test_export2python_does_worse(torchlib_protos, onnxsc: harness.Onnxsc, tmp_path: Path):
    """The same functions through onnxscript's export2python: how many come back (printed);
    onnxsc must do at least as well on each group."""
    groups = {
        "onnxscript's torchlib functions": [[fp] for fp in torchlib_protos],
        # export2python cannot write a function in ONNX's own domain (it names an undefined
        # `opset1`): it also gets each body moved to onnxsc's default domain, and counts when
        # either comes back.
        "ONNX operator bodies": [[fp, in_domain(fp, "this")] for _, _, fp, _ in BODIES],
    }
    ours = {}
    lib = library(torchlib_protos, tmp_path / "e2p_torchlib.onnx")
    rebuilt, _ = round_trip_library(onnxsc, lib, tmp_path)
    ours["onnxscript's torchlib functions"] = len(torchlib_protos) - len(compare_all(torchlib_protos, rebuilt))
    ops_ok = 0
    for name, opset, fp, _ in BODIES:
        src = tmp_path / f"{name}_{opset}.onnxs"
        if onnxsc.run("decompile", "--op", name, "--opset", str(opset), "-o", src).returncode == 0:
            built = onnxsc.build([src], tmp_path / f"{name}_{opset}.onnx")
            if built.returncode == 0:
                expected = canonical(with_schema_defaults(name, opset, fp))
                ops_ok += not difference(expected, canonical(built.model.functions[0]))
    ours["ONNX operator bodies"] = ops_ok
    report = []
    for label, functions in groups.items():
        theirs = sum(
            any(not export2python_round_trips(fp, tmp_path, f"{i}_{j}") for j, fp in enumerate(variants))
            for i, variants in enumerate(functions)
        )
        report.append(f"{label}: onnxsc {ours[label]}/{len(functions)}, export2python {theirs}/{len(functions)}")
        assert ours[label] >= theirs, report[-1]
    print("\n" + "\n".join(report))
