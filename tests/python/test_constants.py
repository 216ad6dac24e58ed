"""The constant evaluator, value by value, against onnxscript 0.7.2.

Each function of ``constants/*.onnxs`` builds constants: module constants used as tensors,
attribute arguments (``op.Constant(value=...)``, ``value_float=...``, ``op.Cast(to=...)``) and
attribute defaults, from Python values, numpy, ``onnx.helper``, ``onnx.numpy_helper`` and
``onnx_ir``. onnxscript evaluates them as Python; onnxsc evaluates them itself. For every
function, both compilations must have the same nodes with the same attributes: every tensor
with the same element type, shape and bytes, every float attribute with the same bits.

``constants/errors/*.onnxs`` are constants Python cannot evaluate (it raises): onnxscript must
fail to import them, and onnxsc must report the code named in their first line.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import harness

CONSTANTS_DIR = Path(__file__).resolve().parent / "constants"
FILES = sorted(CONSTANTS_DIR.glob("*.onnxs"))
ERROR_FILES = sorted((CONSTANTS_DIR / "errors").glob("*.onnxs"))
CASES = [(path, name) for path in FILES for name in harness.top_level_functions(path)]


def tensor_key(t: onnx.TensorProto):
    """Element type, shape and bytes of a tensor, whatever field holds its data."""
    arr = numpy_helper.to_array(t)
    if arr.dtype == np.object_:
        data = [v if isinstance(v, bytes) else str(v).encode() for v in arr.ravel().tolist()]
    else:
        data = arr.tobytes()
    return ("tensor", t.data_type, tuple(t.dims), data)


def attribute_key(a: onnx.AttributeProto):
    """An attribute as a comparable value: floats by their float32 bits, tensors by
    :func:`tensor_key`, references by name."""
    A = onnx.AttributeProto
    if a.ref_attr_name:
        return (a.name, a.type, "@" + a.ref_attr_name)
    if a.type == A.FLOAT:
        value = np.float32(a.f).tobytes()
    elif a.type == A.FLOATS:
        value = np.array(a.floats, dtype=np.float32).tobytes()
    elif a.type == A.INT:
        value = a.i
    elif a.type == A.INTS:
        value = tuple(a.ints)
    elif a.type == A.STRING:
        value = a.s
    elif a.type == A.STRINGS:
        value = tuple(a.strings)
    elif a.type == A.TENSOR:
        value = tensor_key(a.t)
    else:
        value = a.SerializeToString()
    return (a.name, a.type, value)


def node_keys(fp: onnx.FunctionProto):
    return [
        (n.domain, n.op_type, tuple(sorted(attribute_key(a) for a in n.attribute)))
        for n in fp.node
    ]


@pytest.fixture(scope="module")
def onnxscript_functions(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("constants")
    return {
        path: {f.name: f.proto for f in harness.compile_with_onnxscript(path, workdir)}
        for path in FILES
    }


def test_every_file_has_cases():
    assert len(FILES) >= 4 and len(CASES) >= 25, (len(FILES), len(CASES))
    assert len(ERROR_FILES) >= 8


@pytest.mark.parametrize("path,name", CASES, ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_constants_match_onnxscript(path: Path, name: str, onnxscript_functions, onnxsc_builds):
    ref = onnxscript_functions[path][name]
    ours = onnxsc_builds.functions(path)[name]
    expected, actual = node_keys(ref), node_keys(ours)
    assert len(actual) == len(expected), f"{len(actual)} nodes, onnxscript has {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a == e, f"node {i}: onnxsc {a!r}\n  onnxscript {e!r}"
    assert [attribute_key(a) for a in ours.attribute_proto] == [
        attribute_key(a) for a in ref.attribute_proto
    ], "attribute defaults"


def expected_code(path: Path) -> str:
    m = re.match(r"# expect: (E\d{4})", path.read_text(encoding="utf-8"))
    assert m, f"{path.name}: the first line must be `# expect: CODE`"
    return m.group(1)


@pytest.mark.parametrize("path", ERROR_FILES, ids=lambda p: p.stem)
def test_python_raises_and_onnxsc_reports(path: Path, onnxsc, tmp_path):
    with pytest.raises(Exception):
        harness.compile_with_onnxscript(path, tmp_path)
    proc = onnxsc.run("check", path, "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f'"code":"{expected_code(path)}"' in proc.stdout, proc.stdout


# ---------------------------------------------------------------------------------------------
# Python's arithmetic, exactly: random expressions against CPython


_INT_LEAVES = [0, 1, -1, 2, 3, 7, -13, 255, 2**31, -(2**31), 2**53 + 1, 2**62, 2**63 - 1, -(2**63), 10**18, 2**100 + 3]
_FLOAT_LEAVES = [0.0, -0.0, 0.5, -1.25, 0.1, 3.0, 1e-300, 1e300, 2.5e-8, 123456.789, float("inf")]
_BINARY = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "<", "<=", "==", "!="]
_INT_ONLY = {"<<", ">>", "&", "|", "^"}
_LIMIT = 2**127


def _leaf(rng) -> str:
    if rng.random() < 0.6:
        return repr(_INT_LEAVES[rng.integers(len(_INT_LEAVES))])
    v = _FLOAT_LEAVES[rng.integers(len(_FLOAT_LEAVES))]
    return 'float("inf")' if v == float("inf") else repr(v)


def _expression(rng, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        return _leaf(rng)
    kind = rng.random()
    if kind < 0.12:
        return f"(-{_expression(rng, depth - 1)})"
    if kind < 0.18:
        return f"(not {_expression(rng, depth - 1)})"
    if kind < 0.24:
        return f"({_expression(rng, depth - 1)} if {_expression(rng, depth - 1)} else {_expression(rng, depth - 1)})"
    op = _BINARY[rng.integers(len(_BINARY))]
    if op in ("**", "<<", ">>"):
        # A literal right operand keeps CPython's own work bounded (2**(2**62) would not end).
        right = ["-2", "-1", "0", "1", "2", "3", "5", "63", "64", "100", "0.5", "-1.5", "2.0"][rng.integers(13)]
        return f"({_expression(rng, depth - 1)} {op} {right})"
    return f"({_expression(rng, depth - 1)} {op} {_expression(rng, depth - 1)})"


_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


class _Unsupported(Exception):
    pass


class _Beyond(Exception):
    pass


def _evaluate(node):
    """Evaluates as CPython does (both operands, the taken branch only), noting what onnxsc
    reports instead of a value."""
    if isinstance(node, ast.Constant):
        value = node.value
    elif isinstance(node, ast.Call):  # float("inf")
        value = float(node.args[0].value)
    elif isinstance(node, ast.UnaryOp):
        operand = _evaluate(node.operand)
        value = -operand if isinstance(node.op, ast.USub) else (not operand)
    elif isinstance(node, ast.IfExp):
        value = _evaluate(node.body) if _evaluate(node.test) else _evaluate(node.orelse)
    elif isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left), _evaluate(node.right)
        ints = all(isinstance(v, int) for v in (left, right))
        if isinstance(node.op, ast.Div) and ints and right != 0 and max(abs(left), abs(right)) > 2**53:
            raise _Unsupported
        value = _OPS[type(node.op)](left, right)
    elif isinstance(node, ast.Compare):
        value = _OPS[type(node.ops[0])](_evaluate(node.left), _evaluate(node.comparators[0]))
    else:
        raise AssertionError(ast.dump(node))
    if isinstance(value, complex):
        raise _Unsupported
    if isinstance(value, int) and not -_LIMIT <= value < _LIMIT:
        raise _Beyond
    return value


def _outcome(text: str):
    """What CPython makes of an expression: ("value", repr), or the onnxsc code expected:
    E0114 where Python raises, E0116 where an int leaves 128 bits, E0112 for what onnxsc does
    not evaluate (a complex result, `/` of ints beyond 2**53)."""
    try:
        return ("value", repr(_evaluate(ast.parse(text, mode="eval").body)))
    except _Unsupported:
        return ("error", "E0112")
    except _Beyond:
        return ("error", "E0116")
    except Exception:  # noqa: BLE001 - Python raises
        return ("error", "E0114")


def _random_cases(count: int, seed: int):
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        text = _expression(rng, 3)
        cases.append((text, _outcome(text)))
    return cases


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_arithmetic_follows_python(seed, onnxsc, tmp_path):
    """400 random expressions over ints (up to 2**100), floats, infinities and signed zeros:
    each value's repr is Python's, each failure the code Python's exception maps to."""
    cases = _random_cases(400, seed=seed)
    values = [(t, o[1]) for t, o in cases if o[0] == "value"]
    errors = [(t, o[1]) for t, o in cases if o[0] == "error"]
    assert len(values) > 150 and len(errors) > 30, (len(values), len(errors))

    header = "from onnxscript import script\nfrom onnxscript import opset18 as op\n\n\n"
    body = "".join(
        f"@script()\ndef v{i}():\n    return op.Constant(value_string=f'{{{text}!r}}')\n\n\n"
        for i, (text, _) in enumerate(values)
    )
    source = tmp_path / "values.onnxs"
    source.write_text(header + body, encoding="utf-8")
    functions = onnxsc.build([source], tmp_path / "values.onnx").require_model().functions
    got = {f.name: f.node[0].attribute[0].s.decode() for f in functions}
    mismatches = [(text, want, got[f"v{i}"]) for i, (text, want) in enumerate(values) if got[f"v{i}"] != want]
    assert not mismatches, "\n".join(f"{t}: Python {w}, onnxsc {g}" for t, w, g in mismatches[:20])

    lines = [f"E{i} = {text}" for i, (text, _) in enumerate(errors)]
    bad = tmp_path / "errors.onnxs"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # Deferred errors are reported where a function uses the constant: use them all.
    uses = "".join(f"    e{i} = op.Constant(value_string=f'{{E{i}}}')\n" for i in range(len(errors)))
    bad.write_text(
        "from onnxscript import script\nfrom onnxscript import opset18 as op\n"
        + "\n".join(lines)
        + "\n\n\n@script()\ndef uses():\n"
        + uses
        + "    return e0\n",
        encoding="utf-8",
    )
    proc = onnxsc.run("check", bad, "--format", "json")
    reported = {}
    for line in proc.stdout.splitlines():
        d = json.loads(line)
        reported.setdefault(d["line"], d["code"])
    wrong = [
        (text, want, reported.get(i + 3))
        for i, (text, want) in enumerate(errors)
        if reported.get(i + 3) != want
    ]
    assert not wrong, "\n".join(f"{t}: expected {w}, onnxsc {g}" for t, w, g in wrong[:20])
