"""`onnxsc link`: exported-style models, built with the onnx package, linked against compiled
function libraries in both modes.

Each linked model must pass `onnx.checker.check_model(full_check=True)` and compute in ONNX
Runtime what the unlinked model carrying the library's functions computes; defaults apply,
domains used only inside functions are imported, nested calls and calls in subgraphs resolve.
Every kind of bad input has a test: exit status 1 with its diagnostic, no output file, the input
untouched.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness

D = "test.link"
F = TensorProto.FLOAT

LIB_SOURCE = '''
import onnxscript
from onnxscript import FLOAT, opset20 as op, script

lk = onnxscript.values.Opset("test.link", 1)
ms = onnxscript.values.Opset("com.microsoft", 1)


@script(lk)
def scaled(x: FLOAT, alpha: float = 1.0) -> FLOAT:
    if alpha != 1.0:
        x = op.Mul(x, op.CastLike(alpha, x))
    return op.Add(x, x)


@script(lk)
def shift(x: FLOAT, by: float) -> FLOAT:
    return op.Add(x, op.CastLike(by, x))


@script(lk)
def gelu_twice(x: FLOAT) -> FLOAT:
    return ms.Gelu(ms.Gelu(x))


@script(lk)
def nested(x: FLOAT, alpha: float = 3.0) -> FLOAT:
    return scaled(shift(x, by=alpha), alpha=alpha)


@script(lk, default_opset=op)
def pick(x: FLOAT, mode: str = "relu", flag: bool = False) -> FLOAT:
    if mode == "relu":
        y = op.Relu(x)
    elif mode == "neg":
        y = op.Neg(x)
    else:
        y = op.Identity(x)
    if flag:
        y = op.Abs(y)
    return y


@script(lk)
def two_out(x: FLOAT) -> tuple[FLOAT, FLOAT]:
    return op.Relu(x), op.Neg(x)


@script(lk, default_opset=op)
def looped(x: FLOAT, n: int = 2) -> FLOAT:
    for i in range(n):
        x = scaled(x, alpha=0.5)
    return x
'''

ALL_FUNCTIONS = {"scaled", "shift", "gelu_twice", "nested", "pick", "two_out", "looped"}
SHAPE = [2, 3]


# --------------------------------------------------------------------------------------
# Building exported-style models
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lib(onnxsc, tmp_path_factory) -> dict[str, Path]:
    """The library as sources and as an `onnxsc build` output."""
    d = tmp_path_factory.mktemp("link-lib")
    src = d / "lib.onnxs"
    src.write_text(LIB_SOURCE)
    built = onnxsc.build([src], d / "lib.onnx")
    built.require_model()
    return {"source": src, "built": built.output}


def vi(name: str, shape=SHAPE, elem=F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def call(op: str, inputs, outputs, name: str, **attrs) -> onnx.NodeProto:
    return helper.make_node(op, inputs, outputs, name=name, domain=D, **attrs)


def make_model(nodes, inputs, outputs, typed=(), initializers=(), functions=(), opsets=None):
    """A model as an exporter writes it: calls into a private domain, value_info for every
    intermediate value (which full_check needs around com.microsoft ops)."""
    graph = helper.make_graph(
        nodes, "main", inputs, outputs, initializer=list(initializers), value_info=[vi(n) for n in typed]
    )
    opsets = opsets or {"": 20, D: 1}
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
        ir_version=10,
        functions=list(functions),
        producer_name="pytorch-like",
    )


def main_model() -> onnx.ModelProto:
    """Every feature at once: defaults, given attributes, a function without a default, a
    com.microsoft-only function, nested calls, attribute-only conditions, several outputs, calls
    in If branches and in a Loop body (using outer values), a function with a Loop calling
    another."""
    then_g = helper.make_graph(
        [call("scaled", ["h1"], ["t"], "then_scaled", alpha=3.0)], "then", [], [vi("t")]
    )
    else_g = helper.make_graph(
        [call("pick", ["h2"], ["t2"], "else_pick", mode="other")], "else", [], [vi("t2")]
    )
    body = helper.make_graph(
        [
            call("scaled", ["v"], ["vs"], "body_scaled", alpha=0.5),
            helper.make_node("Add", ["vs", "a"], ["v_next"], name="body_add"),
            helper.make_node("Identity", ["c_in"], ["c_out"], name="body_cond"),
        ],
        "body",
        [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL), vi("v")],
        [vi("c_out", [], TensorProto.BOOL), vi("v_next")],
    )
    nodes = [
        call("scaled", ["x"], ["a"], "scaled_default"),
        call("scaled", ["x"], ["b"], "scaled_2", alpha=2.0),
        call("shift", ["b"], ["c"], "shift", by=0.5),
        call("gelu_twice", ["c"], ["d"], "gelu"),
        call("nested", ["d"], ["e"], "nested"),
        call("pick", ["e"], ["f"], "pick_default"),
        call("pick", ["f"], ["g"], "pick_neg_abs", mode="neg", flag=1),
        call("two_out", ["g"], ["h1", "h2"], "two_out"),
        helper.make_node("If", ["cond"], ["k"], name="if", then_branch=then_g, else_branch=else_g),
        helper.make_node("Constant", [], ["trips"], name="trips", value=numpy_helper.from_array(np.array(2, np.int64))),
        helper.make_node("Loop", ["trips", "", "h1"], ["l"], name="loop", body=body),
        helper.make_node("Add", ["k", "l"], ["kl"], name="add_kl"),
        call("looped", ["kl"], ["m"], "looped", n=3),
        helper.make_node("Add", ["m", "y"], ["out"], name="final"),
    ]
    typed = ["a", "b", "c", "d", "e", "f", "g", "h1", "h2", "k", "l", "kl", "m"]
    return make_model(nodes, [vi("x"), vi("y"), vi("cond", [], TensorProto.BOOL)], [vi("out")], typed)


def carrying(model: onnx.ModelProto, library: onnx.ModelProto) -> onnx.ModelProto:
    """The unlinked model as an exporter would ship it: carrying the library's functions and
    importing their domains."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.functions.extend(library.functions)
    have = {o.domain for o in m.opset_import}
    for o in library.opset_import:
        if o.domain not in have:
            m.opset_import.append(o)
    return m


def save(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def link(onnxsc, model: Path, libs, out: Path, *extra: str):
    return onnxsc.run("link", model, *libs, "-o", out, "--color", "never", *extra)


def linked(onnxsc, model: Path, libs, out: Path, *extra: str) -> onnx.ModelProto:
    proc = link(onnxsc, model, libs, out, *extra)
    assert proc.returncode == 0, proc.stderr
    m = onnx.load(str(out))
    onnx.checker.check_model(m, full_check=True)
    return m


def feeds(cond: bool) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        "x": rng.standard_normal(SHAPE).astype(np.float32),
        "y": rng.standard_normal(SHAPE).astype(np.float32),
        "cond": np.array(cond),
    }


def all_nodes(nodes):
    for n in nodes:
        yield n
        for a in n.attribute:
            for g in [a.g] if a.HasField("g") else list(a.graphs):
                yield from all_nodes(g.node)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------------------
# Both modes compute what the unlinked model computes
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["reference", "inline"])
@pytest.mark.parametrize("lib_kind", ["built", "source"])
def test_linked_model_checks_and_matches_unlinked(onnxsc, lib, tmp_path, mode, lib_kind):
    model = main_model()
    path = save(model, tmp_path / "model.onnx")
    out = linked(onnxsc, path, [lib[lib_kind]], tmp_path / "out.onnx", "--mode", mode)
    reference = carrying(model, onnx.load(str(lib["built"])))
    onnx.checker.check_model(reference, full_check=True)
    for cond in (True, False):
        expected = harness.run_model(reference, feeds(cond))
        got = harness.run_model(out, feeds(cond))
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)
    domains = {o.domain for o in out.opset_import}
    assert "com.microsoft" in domains, "a domain used only inside functions must be imported"
    if mode == "reference":
        assert {f.name for f in out.functions} == ALL_FUNCTIONS, "nested callees are added too"
    else:
        assert not out.functions
        assert not [n for n in all_nodes(out.graph.node) if n.domain == D], "every call is expanded"


def test_inline_names_are_unique_and_outer_names_kept(onnxsc, lib, tmp_path):
    path = save(main_model(), tmp_path / "model.onnx")
    out = linked(onnxsc, path, [lib["built"]], tmp_path / "out.onnx", "--mode", "inline")
    nodes = list(all_nodes(out.graph.node))
    outputs = [o for n in nodes for o in n.output if o]
    assert len(outputs) == len(set(outputs)), "values are SSA across the graph and subgraphs"
    names = [n.name for n in nodes]
    assert all(names) and len(names) == len(set(names)), "every node has a unique name"
    # The Loop body still reads the outer `a`, and the call outputs keep their names.
    body = next(n for n in out.graph.node if n.op_type == "Loop").attribute[0].g
    assert "a" in {i for n in body.node for i in n.input}
    assert {"a", "b", "h1", "h2", "m"} <= set(outputs)


def test_inline_specialises_attribute_only_conditions(onnxsc, lib, tmp_path):
    path = save(main_model(), tmp_path / "model.onnx")
    out = linked(onnxsc, path, [lib["built"]], tmp_path / "out.onnx", "--mode", "inline")
    ifs = [n for n in all_nodes(out.graph.node) if n.op_type == "If"]
    assert [n.name for n in ifs] == ["if"], "only the model's own, data-dependent If remains"
    ops = [n.op_type for n in all_nodes(out.graph.node)]
    # pick(mode="neg", flag=1): Neg then Abs, and no Equal on strings left behind.
    assert "Abs" in ops and "Neg" in ops and "Equal" not in ops


def test_defaults_apply(onnxsc, lib, tmp_path):
    """scaled(x) has alpha=1 (x + x); nested(x) has alpha=3 ((x + 3) * 3 * 2) — onnx's C++
    inliner leaves such Constants without a value."""
    nodes = [call("scaled", ["x"], ["s"], "s"), call("nested", ["x"], ["n"], "n")]
    model = make_model(nodes, [vi("x")], [vi("s"), vi("n")])
    x = feeds(True)["x"]
    for mode in ("reference", "inline"):
        out = linked(onnxsc, save(model, tmp_path / "m.onnx"), [lib["built"]], tmp_path / f"{mode}.onnx", "--mode", mode)
        s, n = harness.run_model(out, {"x": x})
        np.testing.assert_allclose(s, x + x, rtol=1e-6)
        np.testing.assert_allclose(n, (x + 3) * 3 * 2, rtol=1e-6)


def test_inline_model_functions_without_libraries(onnxsc, lib, tmp_path):
    """A model carrying its functions can be inlined with no library at all."""
    model = carrying(make_model([call("nested", ["x"], ["n"], "n")], [vi("x")], [vi("n")]), onnx.load(str(lib["built"])))
    out = linked(onnxsc, save(model, tmp_path / "m.onnx"), [], tmp_path / "out.onnx", "--mode", "inline")
    assert not out.functions, "functions no call remains to are removed"
    x = feeds(True)["x"]
    np.testing.assert_allclose(harness.run_model(out, {"x": x})[0], (x + 3) * 6, rtol=1e-6)


def test_optional_inputs_and_pass_through_outputs(onnxsc, tmp_path):
    """Model-local functions written by hand: a missing optional input binds to "", and an
    output that is also an input (which breaks ONNX Runtime and both onnx inliners) becomes
    an Identity."""
    clip = helper.make_function(
        D, "clip", ["x", "lo", "hi"], ["y"], [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
        [helper.make_opsetid("", 20)],
    )
    through = helper.make_function(
        D, "through", ["x"], ["y", "x"], [helper.make_node("Neg", ["x"], ["y"])], [helper.make_opsetid("", 20)],
    )
    nodes = [
        helper.make_node("Constant", [], ["hi"], value=numpy_helper.from_array(np.array(0.5, np.float32))),
        call("clip", ["x", "", "hi"], ["c1"], "clip_hi"),
        call("clip", ["x"], ["c2"], "clip_none"),
        call("through", ["x"], ["neg", "same"], "through"),
    ]
    model = make_model(nodes, [vi("x")], [vi("c1"), vi("c2"), vi("neg"), vi("same")], functions=[clip, through])
    out = linked(onnxsc, save(model, tmp_path / "m.onnx"), [], tmp_path / "out.onnx", "--mode", "inline")
    x = feeds(True)["x"]
    c1, c2, neg, same = harness.run_model(out, {"x": x})
    np.testing.assert_allclose(c1, np.minimum(x, 0.5))
    np.testing.assert_allclose(c2, x)
    np.testing.assert_allclose(neg, -x)
    np.testing.assert_allclose(same, x)


def test_value_info_and_metadata_are_kept(onnxsc, lib, tmp_path):
    model = main_model()
    helper.set_model_props(model, {"exporter": "torch", "note": "kept"})
    path = save(model, tmp_path / "model.onnx")
    for mode in ("reference", "inline"):
        out = linked(onnxsc, path, [lib["built"]], tmp_path / f"{mode}.onnx", "--mode", mode)
        assert {p.key: p.value for p in out.metadata_props} == {"exporter": "torch", "note": "kept"}
        assert {v.name for v in model.graph.value_info} <= {v.name for v in out.graph.value_info}


def test_override_replaces_the_models_function(onnxsc, lib, tmp_path):
    """The model carries its own `scaled` (x * 10); the library's is x + x."""
    own = helper.make_function(
        D, "scaled", ["x"], ["y"],
        [
            helper.make_node("Constant", [], ["ten"], value=numpy_helper.from_array(np.array(10, np.float32))),
            helper.make_node("Mul", ["x", "ten"], ["y"]),
        ],
        [helper.make_opsetid("", 20)],
    )
    model = make_model([call("scaled", ["x"], ["s"], "s")], [vi("x")], [vi("s")], functions=[own])
    path = save(model, tmp_path / "m.onnx")
    x = feeds(True)["x"]
    for mode in ("reference", "inline"):
        proc = link(onnxsc, path, [lib["built"]], tmp_path / "kept.onnx", "--mode", mode)
        assert proc.returncode == 0 and "warning[W0801]" in proc.stderr, proc.stderr
        kept = onnx.load(str(tmp_path / "kept.onnx"))
        np.testing.assert_allclose(harness.run_model(kept, {"x": x})[0], x * 10, rtol=1e-6)
        replaced = linked(onnxsc, path, [lib["built"]], tmp_path / "over.onnx", "--mode", mode, "--override")
        np.testing.assert_allclose(harness.run_model(replaced, {"x": x})[0], x + x, rtol=1e-6)


def test_compatible_opset_versions_link(onnxsc, tmp_path):
    """A function importing ai.onnx 17 in a model importing 20 is fine when its operators are
    the same in both (Add: since 14)."""
    f = helper.make_function(D, "add", ["x"], ["y"], [helper.make_node("Add", ["x", "x"], ["y"])], [helper.make_opsetid("", 17)])
    model = make_model([call("add", ["x"], ["y"], "add")], [vi("x")], [vi("y")], functions=[f])
    for mode in ("reference", "inline"):
        linked(onnxsc, save(model, tmp_path / "m.onnx"), [], tmp_path / f"{mode}.onnx", "--mode", mode)


# --------------------------------------------------------------------------------------
# External data
# --------------------------------------------------------------------------------------


def external_model(tmp_path: Path) -> Path:
    """A model whose weight lives in `weights.bin` beside it."""
    w = numpy_helper.from_array(np.arange(9, dtype=np.float32).reshape(3, 3) / 10, "W")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"], name="mm"), call("nested", ["xw"], ["y"], "nested")]
    model = make_model(nodes, [vi("x", [3, 3])], [vi("y", [3, 3])], initializers=[w])
    d = tmp_path / "exported"
    d.mkdir()
    onnx.save(model, str(d / "model.onnx"), save_as_external_data=True, location="weights.bin", size_threshold=0)
    return d / "model.onnx"


@pytest.mark.parametrize("where", ["same_dir", "other_dir"])
@pytest.mark.parametrize("mode", ["reference", "inline"])
def test_external_data_stays_valid(onnxsc, lib, tmp_path, where, mode):
    path = external_model(tmp_path)
    before = {p.name: digest(p) for p in path.parent.iterdir()}
    out_dir = path.parent if where == "same_dir" else tmp_path / "elsewhere" / "deeper"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / "linked.onnx"
    proc = link(onnxsc, path, [lib["built"]], out, "--mode", mode)
    assert proc.returncode == 0, proc.stderr
    raw = onnx.load(str(out), load_external_data=False)
    (w,) = raw.graph.initializer
    assert w.data_location == TensorProto.EXTERNAL and not w.raw_data, "tensor data is not pulled in"
    assert {e.key: e.value for e in w.external_data}["location"] == "weights.bin"
    assert (out_dir / "weights.bin").is_file()
    onnx.checker.check_model(str(out), full_check=True)
    x = feeds(True)["x"][:, :3].repeat(2, 0)[:3].copy()
    import onnxruntime as ort

    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    xw = x @ (np.arange(9, dtype=np.float32).reshape(3, 3) / 10)
    np.testing.assert_allclose(got, (xw + 3) * 6, rtol=1e-5)
    after = {p.name: digest(p) for p in path.parent.iterdir() if p.name in before}
    assert after == before, "the input model and its data are untouched"
    again = link(onnxsc, path, [lib["built"]], out, "--mode", mode)
    assert again.returncode == 0, "the copy an earlier run left is reused: " + again.stderr


def test_external_data_clash_is_refused(onnxsc, lib, tmp_path):
    path = external_model(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "weights.bin").write_bytes(b"someone else's weights")
    proc = link(onnxsc, path, [lib["built"]], other / "linked.onnx")
    assert proc.returncode == 2, proc.stderr
    assert "weights.bin" in proc.stderr and not (other / "linked.onnx").exists()
    assert (other / "weights.bin").read_bytes() == b"someone else's weights"


# --------------------------------------------------------------------------------------
# Bad input: exit 1 with a diagnostic, no output, input untouched
# --------------------------------------------------------------------------------------


def assert_fails(onnxsc, model_path: Path, libs, tmp_path: Path, code: str, *extra: str, status: int = 1) -> str:
    before = digest(model_path)
    out = tmp_path / "should_not_exist.onnx"
    proc = link(onnxsc, model_path, libs, out, *extra)
    assert proc.returncode == status, proc.stderr
    assert f"[{code}]" in proc.stderr, proc.stderr
    assert not out.exists(), "nothing is written on failure"
    assert digest(model_path) == before, "the input is never modified"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp")], "no temporary file is left"
    return proc.stderr


def test_unresolved_calls_are_listed_with_their_nodes(onnxsc, lib, tmp_path):
    then_g = helper.make_graph([call("missing_b", ["x"], ["t"], "deep_call")], "then", [], [vi("t")])
    nodes = [
        call("missing_a", ["x"], ["a"], "first_call"),
        call("missing_a", ["a"], ["b"], "second_call"),
        helper.make_node("If", ["cond"], ["c"], name="branch", then_branch=then_g, else_branch=then_g),
        call("scaled", ["c"], ["y"], "fine"),
    ]
    model = make_model(nodes, [vi("x"), vi("cond", [], TensorProto.BOOL)], [vi("y")])
    for mode in ("reference", "inline"):
        err = assert_fails(onnxsc, save(model, tmp_path / "m.onnx"), [lib["built"]], tmp_path, "E0801", "--mode", mode)
        assert "`test.link::missing_a`" in err and "`first_call`" in err and "`second_call`" in err
        assert "`test.link::missing_b`" in err and "`deep_call`" in err and "`branch`" in err


@pytest.mark.parametrize(
    "node, expected",
    [
        (call("scaled", ["x", "x"], ["y"], "bad", alpha=2.0), "2 inputs"),
        (call("two_out", ["x"], ["y", "z", "w"], "bad"), "3 outputs"),
        (call("scaled", ["x"], ["y"], "bad", alpha=2), "INT"),
        (call("scaled", ["x"], ["y"], "bad", beta=2.0), "`beta`"),
        (call("shift", [], ["y"], "bad", by=1.0), "required input `x`"),
    ],
    ids=["too_many_inputs", "too_many_outputs", "attribute_type", "unknown_attribute", "missing_input"],
)
def test_calls_contradicting_the_signature(onnxsc, lib, tmp_path, node, expected):
    model = make_model([node], [vi("x")], [vi("y")])
    err = assert_fails(onnxsc, save(model, tmp_path / "m.onnx"), [lib["built"]], tmp_path, "E0803")
    assert expected in err and "`bad`" in err


def test_signature_from_the_function_proto_without_metadata(onnxsc, lib, tmp_path):
    library = onnx.load(str(lib["built"]))
    for f in library.functions:
        del f.metadata_props[:]
    bare = save(library, tmp_path / "bare.onnx")
    model = make_model([call("shift", ["x"], ["y"], "bad", by=1)], [vi("x")], [vi("y")])
    err = assert_fails(onnxsc, save(model, tmp_path / "m.onnx"), [bare], tmp_path, "E0803")
    assert "INT" in err and "FLOAT" in err


@pytest.mark.parametrize("which", ["model", "library"])
def test_corrupt_or_truncated_files(onnxsc, lib, tmp_path, which):
    good_model = main_model().SerializeToString()
    good_lib = Path(lib["built"]).read_bytes()
    good = good_model if which == "model" else good_lib
    variants = {
        "garbage": b"\x00\xffnot a model at all\x12\x34" * 10,
        "empty": b"",
        **{f"cut_{frac}": good[: int(len(good) * frac)] for frac in (0.1, 0.5, 0.9, 0.99)},
    }
    for name, data in variants.items():
        bad = tmp_path / f"{name}.onnx"
        bad.write_bytes(data)
        model = bad if which == "model" else save(main_model(), tmp_path / "m.onnx")
        libs = [lib["built"]] if which == "model" else [bad]
        err = assert_fails(onnxsc, model, libs, tmp_path, "E0802")
        assert bad.name in err, err


def test_a_model_onnx_checker_refuses_is_told_how_to_fix_it(onnxsc, lib, tmp_path):
    """A graph output without a type decodes fine: the help says what to do, not that the
    file may be corrupt."""
    model = make_model([call("scaled", ["x"], ["y"], "s")], [vi("x")], [helper.make_value_info("y", onnx.TypeProto())])
    err = assert_fails(onnxsc, save(model, tmp_path / "m.onnx"), [lib["built"]], tmp_path, "E0802")
    assert "output `y` has no complete type" in err and "torch.onnx.export" in err
    assert "corrupt" not in err

def test_library_defining_a_function_twice(onnxsc, lib, tmp_path):
    library = onnx.load(str(lib["built"]))
    library.functions.append(library.functions[0])
    twice = save(library, tmp_path / "twice.onnx")
    model = save(make_model([call("scaled", ["x"], ["y"], "s")], [vi("x")], [vi("y")]), tmp_path / "m.onnx")
    err = assert_fails(onnxsc, model, [twice], tmp_path, "E0804")
    assert "`test.link::scaled`" in err and "defines it twice" in err
    # The same function from two libraries is ambiguous too.
    err = assert_fails(onnxsc, model, [lib["built"], lib["source"]], tmp_path, "E0804")
    assert "both define it" in err


def test_opset_version_conflict_names_both_versions(onnxsc, tmp_path):
    """Split changed between opset 12 and 20 (its `split` attribute became an input)."""
    f = helper.make_function(
        D, "halves", ["x"], ["a"], [helper.make_node("Split", ["x"], ["a", "b"], axis=0)], [helper.make_opsetid("", 12)]
    )
    model = make_model([call("halves", ["x"], ["y"], "h")], [vi("x")], [vi("y", [1, 3])], functions=[f])
    err = assert_fails(onnxsc, save(model, tmp_path / "m.onnx"), [], tmp_path, "E0805", "--mode", "inline")
    assert "version 12" in err and "version 20" in err and "`Split`" in err


def test_recursive_functions(onnxsc, tmp_path):
    ping = helper.make_function(D, "ping", ["x"], ["y"], [call("pong", ["x"], ["y"], "")], [helper.make_opsetid(D, 1)])
    pong = helper.make_function(D, "pong", ["x"], ["y"], [call("ping", ["x"], ["y"], "")], [helper.make_opsetid(D, 1)])
    model = make_model([call("ping", ["x"], ["y"], "p")], [vi("x")], [vi("y")], functions=[ping, pong])
    err = assert_fails(onnxsc, save(model, tmp_path / "m.onnx"), [], tmp_path, "E0806", "--mode", "inline")
    assert "`test.link::ping` -> `test.link::pong` -> `test.link::ping`" in err


def test_library_sources_with_errors(onnxsc, tmp_path):
    bad = tmp_path / "bad.onnxs"
    bad.write_text("from onnxscript import opset18 as op\n\ndef f(x):\n    return op.Ad(x, x)\n")
    model = save(make_model([call("f", ["x"], ["y"], "f")], [vi("x")], [vi("y")]), tmp_path / "m.onnx")
    assert_fails(onnxsc, model, [bad], tmp_path, "E0402")


def test_missing_files_are_io_errors(onnxsc, lib, tmp_path):
    model = save(make_model([call("scaled", ["x"], ["y"], "s")], [vi("x")], [vi("y")]), tmp_path / "m.onnx")
    for args in ([tmp_path / "nope.onnx", lib["built"]], [model, tmp_path / "nope.onnx"]):
        proc = link(onnxsc, args[0], [args[1]], tmp_path / "out.onnx")
        assert proc.returncode == 2 and "nope.onnx" in proc.stderr, proc.stderr
    proc = link(onnxsc, model, [lib["built"]], tmp_path / "no" / "such" / "dir.onnx")
    assert proc.returncode == 2, proc.stderr
    assert not (tmp_path / "out.onnx").exists()


# --------------------------------------------------------------------------------------
# `is None` tests: exact in the generic function when the values are given; omitted values
# need the call specialised, which inline mode does, and reference mode with variants (below;
# docs/exporter.md)
# --------------------------------------------------------------------------------------

NONE_SOURCE = '''
from typing import Optional, Sequence

import onnxscript
from onnxscript import FLOAT, opset18 as op, script

lk = onnxscript.values.Opset("test.link", 1)


@script(lk, default_opset=op)
def affine(x: FLOAT, weight: Optional[FLOAT] = None, bias: Optional[FLOAT] = None) -> FLOAT:
    y = op.Identity(x)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


@script(lk, default_opset=op)
def bounded(x: FLOAT, low: Optional[float] = None, high: Optional[float] = None, mode: str = "clip") -> FLOAT:
    if mode != "clip":
        y = op.Neg(x)
    elif low is None and high is None:
        y = op.Identity(x)
    else:
        y = op.Clip(x, low, high)
    return y


@script(lk, default_opset=op)
def doubled_affine(x: FLOAT, bias: Optional[FLOAT] = None) -> FLOAT:
    # Passes its own optional input on: a call without `bias` calls `affine` without it.
    return affine(x, op.CastLike(2.0, x), bias)


@script(lk, default_opset=op)
def relu_if_positive(x: FLOAT, low: Optional[float] = None) -> FLOAT:
    # `low > 0.0` reads `low` only where `low is not None` is true.
    if low is not None and low > 0.0:
        y = op.Relu(x)
    else:
        y = op.Identity(x)
    return y
'''


def numpy_affine(x, weight=None, bias=None):
    y = x if weight is None else x * weight
    return y if bias is None else y + bias


def numpy_bounded(x, low=None, high=None, mode="clip"):
    if mode != "clip":
        return -x
    return np.clip(x, -np.inf if low is None else np.float32(low), np.inf if high is None else np.float32(high))


@pytest.fixture(scope="module")
def none_lib(onnxsc, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("none-lib")
    src = d / "none.onnxs"
    src.write_text(NONE_SOURCE)
    built = onnxsc.build([src], d / "none.onnx")
    built.require_model()
    return built.output


AFFINE_CALLS = [["x"], ["x", "w"], ["x", "", "b"], ["x", "w", "b"]]
BOUNDED_CALLS = [{}, {"low": -0.5}, {"high": 0.5}, {"low": -0.5, "high": 0.5}, {"mode": "neg", "low": 1.0}]


def none_model(inputs, attrs=None, op="affine"):
    node = call(op, inputs, ["out"], "call", **(attrs or {}))
    return make_model([node], [vi("x"), vi("w"), vi("b")], [vi("out")], opsets={"": 18, D: 1})


def none_feeds():
    rng = np.random.default_rng(11)
    return {n: rng.standard_normal(SHAPE).astype(np.float32) for n in ("x", "w", "b")}


def numpy_args(inputs, attrs, feeds):
    names = dict(zip(["x", "weight", "bias"], inputs))
    return {k: feeds[v] for k, v in names.items() if v}, attrs or {}


@pytest.mark.parametrize("inputs", AFFINE_CALLS, ids=lambda c: "_".join(i or "none" for i in c))
def test_inline_folds_none_tests_on_inputs(onnxsc, none_lib, tmp_path, inputs):
    path = save(none_model(inputs), tmp_path / "model.onnx")
    out = linked(onnxsc, path, [none_lib], tmp_path / "out.onnx", "--mode", "inline")
    ops = [n.op_type for n in all_nodes(out.graph.node)]
    assert "If" not in ops and "OptionalHasElement" not in ops, ops
    feeds = none_feeds()
    args, _ = numpy_args(inputs, None, feeds)
    np.testing.assert_allclose(harness.run_model(out, feeds)[0], numpy_affine(**args), rtol=1e-6)


@pytest.mark.parametrize("attrs", BOUNDED_CALLS, ids=lambda a: "_".join(a) or "none")
def test_inline_folds_none_tests_on_attributes(onnxsc, none_lib, tmp_path, attrs):
    path = save(none_model(["x"], attrs, op="bounded"), tmp_path / "model.onnx")
    out = linked(onnxsc, path, [none_lib], tmp_path / "out.onnx", "--mode", "inline")
    ops = [n.op_type for n in all_nodes(out.graph.node)]
    assert "If" not in ops and "CategoryMapper" not in ops, ops
    feeds = none_feeds()
    np.testing.assert_allclose(harness.run_model(out, feeds)[0], numpy_bounded(feeds["x"], **attrs), rtol=1e-6)


@pytest.mark.parametrize("attrs", [{}, {"low": 1.0}, {"low": -1.0}], ids=["none", "positive", "negative"])
def test_inline_short_circuits_and(onnxsc, none_lib, tmp_path, attrs):
    path = save(none_model(["x"], attrs, op="relu_if_positive"), tmp_path / "model.onnx")
    out = linked(onnxsc, path, [none_lib], tmp_path / "out.onnx", "--mode", "inline")
    ops = [n.op_type for n in all_nodes(out.graph.node)]
    assert ops == (["Relu"] if attrs.get("low", 0) > 0 else ["Identity"]), ops
    feeds = none_feeds()
    expected = np.maximum(feeds["x"], 0) if attrs.get("low", 0) > 0 else feeds["x"]
    np.testing.assert_allclose(harness.run_model(out, feeds)[0], expected)


def test_generic_function_is_exact_when_the_tested_values_are_given(none_lib):
    """Unspecialised, ONNX Runtime runs the generic functions: `OptionalHasElement` and the
    string comparison compute the conditions, exactly, when every tested value is given."""
    library = onnx.load(str(none_lib))
    feeds = none_feeds()
    cases = [(none_model(["x", "w", "b"]), numpy_affine(feeds["x"], feeds["w"], feeds["b"]))]
    for attrs in ({"low": -0.5, "high": 0.5}, {"low": -0.5, "high": 0.5, "mode": "neg"}):
        cases.append((none_model(["x"], attrs, op="bounded"), numpy_bounded(feeds["x"], **attrs)))
    for model, expected in cases:
        m = carrying(model, library)
        onnx.checker.check_model(m, full_check=True)
        np.testing.assert_allclose(harness.run_model(m, feeds)[0], expected, rtol=1e-6)


@pytest.mark.parametrize(
    "model, reason",
    [
        (none_model(["x", "", "b"]), "has an empty string"),
        (none_model(["x"], {"high": 0.5}, op="bounded"), "'value', 'value_\\*' or 'sparse_value' must be specified"),
    ],
    ids=["input", "attribute"],
)
def test_generic_function_refuses_a_call_that_omits_a_tested_value(none_lib, model, reason):
    """A call that omits a tested value needs the call specialised: ONNX Runtime refuses it
    unspecialised (an omitted input where the branch needs it; a `Constant` without value), it
    never computes something else."""
    import onnxruntime

    m = carrying(model, onnx.load(str(none_lib)))
    with pytest.raises(Exception, match=reason):
        onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


# --------------------------------------------------------------------------------------
# Reference mode: a call that leaves a value out calls a variant of the function without it
# --------------------------------------------------------------------------------------


def omitted(inputs, formals=("x", "weight", "bias")):
    return [f for f, i in zip(formals, list(inputs) + [""] * len(formals)) if not i]


@pytest.mark.parametrize("inputs", AFFINE_CALLS, ids=lambda c: "_".join(i or "none" for i in c))
def test_reference_mode_calls_a_variant_without_the_omitted_inputs(onnxsc, none_lib, tmp_path, inputs):
    """What ONNX Runtime refused ("input 1 is marked single but has an empty string") now
    passes the checker and computes what inline mode and numpy compute."""
    path = save(none_model(inputs), tmp_path / "model.onnx")
    ref = linked(onnxsc, path, [none_lib], tmp_path / "reference.onnx")
    inline = linked(onnxsc, path, [none_lib], tmp_path / "inline.onnx", "--mode", "inline")
    (node,) = ref.graph.node
    left_out = omitted(inputs)
    assert node.op_type == ("affine__without_" + "_".join(left_out) if left_out else "affine")
    assert "" not in node.input and {f.name for f in ref.functions} == {node.op_type}
    feeds = none_feeds()
    args, _ = numpy_args(inputs, None, feeds)
    got = harness.run_model(ref, feeds)[0]
    np.testing.assert_allclose(got, harness.run_model(inline, feeds)[0], rtol=1e-6)
    np.testing.assert_allclose(got, numpy_affine(**args), rtol=1e-6)


@pytest.mark.parametrize("attrs", BOUNDED_CALLS, ids=lambda a: "_".join(a) or "none")
def test_reference_mode_calls_a_variant_without_the_omitted_attributes(onnxsc, none_lib, tmp_path, attrs):
    """An attribute without a default that the call does not give: its `Constant` would have
    no value (ONNX Runtime refuses it); the variant has none, and keeps the others as references."""
    path = save(none_model(["x"], attrs, op="bounded"), tmp_path / "model.onnx")
    ref = linked(onnxsc, path, [none_lib], tmp_path / "reference.onnx")
    (node,) = ref.graph.node
    left_out = [a for a in ("low", "high") if a not in attrs]
    assert node.op_type == ("bounded__without_" + "_".join(left_out) if left_out else "bounded")
    assert {a.name for a in node.attribute} == set(attrs), "the call keeps its attributes"
    feeds = none_feeds()
    np.testing.assert_allclose(harness.run_model(ref, feeds)[0], numpy_bounded(feeds["x"], **attrs), rtol=1e-6)


def test_variants_call_variants(onnxsc, none_lib, tmp_path):
    """`doubled_affine` without `bias` calls `affine` without it: variants of both."""
    nodes = [call("doubled_affine", ["x"], ["d1"], "without"), call("doubled_affine", ["x", "b"], ["d2"], "with")]
    model = make_model(nodes, [vi("x"), vi("b")], [vi("d1"), vi("d2")], opsets={"": 18, D: 1})
    path = save(model, tmp_path / "model.onnx")
    ref = linked(onnxsc, path, [none_lib], tmp_path / "reference.onnx")
    names = [f.name for f in ref.functions]
    assert names == ["affine__without_bias", "doubled_affine__without_bias", "affine", "doubled_affine"]
    feeds = none_feeds()
    d1, d2 = harness.run_model(ref, {"x": feeds["x"], "b": feeds["b"]})
    np.testing.assert_allclose(d1, feeds["x"] * 2, rtol=1e-6)
    np.testing.assert_allclose(d2, feeds["x"] * 2 + feeds["b"], rtol=1e-6)
    again = link(onnxsc, path, [none_lib], tmp_path / "again.onnx")
    assert again.returncode == 0 and digest(tmp_path / "again.onnx") == digest(tmp_path / "reference.onnx")


def gated_function() -> onnx.FunctionProto:
    """`gated(x, w) <use_w>`: `Mul(x, w)` in an `If` on the attribute, written by hand (onnxsc
    itself would refuse it with E0602)."""
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["m"], name="scale")], "then", [], [vi("m")])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["i"], name="keep")], "else", [], [vi("i")])
    flag = helper.make_node("Constant", [], ["c"], name="flag")
    flag.attribute.append(helper.make_attribute_ref("value_int", onnx.AttributeProto.INT))
    flag.attribute[0].ref_attr_name = "use_w"
    nodes = [
        flag,
        helper.make_node("Cast", ["c"], ["cb"], to=TensorProto.BOOL, name="flag_bool"),
        helper.make_node("If", ["cb"], ["y"], then_branch=then_g, else_branch=else_g, name="choose"),
    ]
    return helper.make_function(D, "gated", ["x", "w"], ["y"], nodes, [helper.make_opsetid("", 20)], ["use_w"])


def test_reference_mode_refuses_a_variant_that_needs_the_omitted_input(onnxsc, tmp_path):
    """The `If` on `use_w` stays in reference mode, and its branch multiplies by the omitted
    `w`: refused (E0810), with the call; inline mode folds the `If` for `use_w=0` and runs."""
    model = make_model(
        [call("gated", ["x", ""], ["y"], "gated_call", use_w=0)], [vi("x")], [vi("y")], functions=[gated_function()]
    )
    path = save(model, tmp_path / "m.onnx")
    err = assert_fails(onnxsc, path, [], tmp_path, "E0810")
    assert "`gated_call`" in err and "`test.link::gated` without `w`" in err and "--mode inline" in err
    out = linked(onnxsc, path, [], tmp_path / "inline.onnx", "--mode", "inline")
    x = feeds(True)["x"]
    np.testing.assert_allclose(harness.run_model(out, {"x": x})[0], x)


# --------------------------------------------------------------------------------------
# Reference mode: chains of calls at most 100 functions deep
# --------------------------------------------------------------------------------------


def chain_library(depth: int) -> onnx.ModelProto:
    """`level0` calls `level1` ... calls `level{depth-1}`, which negates; callees first, as
    reference mode writes them."""
    functions = []
    for i in range(depth):
        body = (
            helper.make_node("Neg", ["x"], ["y"])
            if i == depth - 1
            else helper.make_node(f"level{i + 1}", ["x"], ["y"], domain=D)
        )
        functions.append(
            helper.make_function(D, f"level{i}", ["x"], ["y"], [body], [helper.make_opsetid("", 20), helper.make_opsetid(D, 1)])
        )
    library = helper.make_model(helper.make_graph([], "library", [], []), opset_imports=[helper.make_opsetid("", 20)], ir_version=10)
    library.functions.extend(reversed(functions))
    return library


def chain_model() -> onnx.ModelProto:
    return make_model([call("level0", ["x"], ["y"], "start")], [vi("x")], [vi("y")])


def test_onnx_limits_call_chains_to_100_functions():
    """What the limit is, measured: 100 functions on a chain pass onnx.checker and ONNX Runtime;
    101 are refused by ONNX Runtime always, and by onnx.checker when its walk (in hash order)
    starts at the top, as it does for these names."""
    import onnxruntime

    ok = carrying(chain_model(), chain_library(100))
    onnx.checker.check_model(ok, full_check=True)
    np.testing.assert_allclose(harness.run_model(ok, {"x": feeds(True)["x"]})[0], -feeds(True)["x"])
    deep = carrying(chain_model(), chain_library(101))
    with pytest.raises(onnx.checker.ValidationError, match=r"Function call chain depth exceeds limit \(100\)"):
        onnx.checker.check_model(deep)
    with pytest.raises(Exception, match="call depth 101 exceeds the maximum supported depth of 100"):
        onnxruntime.InferenceSession(deep.SerializeToString(), providers=["CPUExecutionProvider"])


def test_reference_mode_refuses_call_chains_deeper_than_onnx_accepts(onnxsc, tmp_path):
    model = save(chain_model(), tmp_path / "m.onnx")
    at_limit = save(chain_library(100), tmp_path / "deep100.onnx")
    out = linked(onnxsc, model, [at_limit], tmp_path / "out.onnx")
    assert len(out.functions) == 100
    x = feeds(True)["x"]
    np.testing.assert_allclose(harness.run_model(out, {"x": x})[0], -x)
    too_deep = save(chain_library(101), tmp_path / "deep101.onnx")
    err = assert_fails(onnxsc, model, [too_deep], tmp_path, "E0811")
    assert "101 deep" in err and "`start`" in err and "--mode inline" in err
    # Inline mode expands the chain.
    inline = linked(onnxsc, model, [too_deep], tmp_path / "inline.onnx", "--mode", "inline")
    assert not inline.functions
    np.testing.assert_allclose(harness.run_model(inline, {"x": x})[0], -x)



PROJECT_SOURCE = '''
import onnxscript
from onnxscript import FLOAT, opset20 as op, script

lk = onnxscript.values.Opset("test.link", 1)


@script(lk)
def project(x: FLOAT, w: FLOAT) -> FLOAT:
    return op.Gemm(x, w, transB=1)
'''


@pytest.mark.parametrize("mode", ["inline", "reference"])
@pytest.mark.parametrize("x_shape, refused", [([2, 5, 4], True), (["batch", 4], False)], ids=["rank-3", "rank-2"])
def test_link_checks_the_translations_against_the_models_declared_shapes(onnxsc, tmp_path, x_shape, refused, mode):
    """A scripted function's nodes meet the types and shapes the model declares (in reference
    mode, through an inlined copy): a `Gemm` given a rank-3 input is refused at its `.onnxs`
    line, not by ONNX Runtime's node name."""
    source = tmp_path / "project.onnxs"
    source.write_text(PROJECT_SOURCE)
    model = make_model([call("project", ["x", "w"], ["y"], "project")], [vi("x", x_shape), vi("w", [3, 4])], [vi("y", ["batch", 3])])
    path = save(model, tmp_path / "m.onnx")
    if refused:
        stderr = assert_fails(onnxsc, path, [source], tmp_path, "E0907", "--mode", mode)
        assert "`Gemm` needs a rank-2 `A`; this call gives float32[2, 5, 4] (`x`)" in stderr, stderr
        line = PROJECT_SOURCE.splitlines().index("    return op.Gemm(x, w, transB=1)") + 1
        assert f"project.onnxs:{line}:12" in stderr, stderr
    else:
        out = linked(onnxsc, path, [source], tmp_path / "out.onnx", "--mode", mode)
        x, w = np.ones([5, 4], np.float32), np.ones([3, 4], np.float32)
        np.testing.assert_allclose(harness.run_model(out, {"x": x, "w": w})[0], x @ w.T)


def test_each_distinct_call_of_a_function_is_checked(onnxsc, tmp_path):
    """Reference mode walks a function's body once per distinct call: a second call of the same
    function with other shapes is checked on its own, not taken from the first."""
    source = tmp_path / "project.onnxs"
    source.write_text(PROJECT_SOURCE)
    nodes = [call("project", ["x", "w"], ["y"], "fits"), call("project", ["x3", "w"], ["y3"], "rank_3")]
    inputs = [vi("x", [5, 4]), vi("x3", [2, 5, 4]), vi("w", [3, 4])]
    model = make_model(nodes, inputs, [vi("y", [5, 3]), vi("y3", [2, 5, 3])])
    stderr = assert_fails(onnxsc, save(model, tmp_path / "m.onnx"), [source], tmp_path, "E0907")
    assert "this call gives float32[2, 5, 4] (`x3`)" in stderr, stderr
