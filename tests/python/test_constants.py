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
