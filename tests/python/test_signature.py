"""The Python package's reader of the ``onnxsc.signature`` metadata (``onnxsc._signature``)
against what the compiler writes, and the format's rules (docs/signature-format.md): every
type form, absent keys and their defaults, unknown keys ignored, versions refused when newer.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

import onnx
import pytest

import harness
from onnxsc import OnnxscError, load_library
from onnxsc._signature import (
    NO_DEFAULT,
    SIGNATURE_KEY,
    SIGNATURE_VERSION,
    AnyTensor,
    ElementType,
    SequenceType,
    TypeVarType,
    annotation,
    parse,
    signature_of,
)

SOURCE = Path(__file__).parent / "signature" / "every_form.onnxs"


@pytest.fixture(scope="module")
def library(onnxsc, tmp_path_factory) -> onnx.ModelProto:
    out = tmp_path_factory.mktemp("signature") / "library.onnx"
    result = onnxsc.build([SOURCE], out)
    assert result.returncode == 0, result.stderr
    return onnx.load(out)


def test_every_form_reads_as_the_source_declares(library):
    functions = harness.functions_by_name(library)
    every = signature_of(functions["every_form"])
    assert every.version == SIGNATURE_VERSION
    real = every.type_vars["TReal"]
    assert [(i.name, i.type) for i in every.inputs] == [
        ("self", TypeVarType("TReal", real)),
        # A named union alias: its members are not recorded.
        ("other", AnyTensor("RealType")),
    ]
    assert [(t.name, t.outputs) for t in every.torch_ops] == [("aten::add.Tensor", 1)]
    assert every.outputs[0].type == TypeVarType("TReal", real)
    assert every.parameters == ("self", "other", "alpha")

    helper = signature_of(functions["helper"])
    assert helper.torch_ops == () and not helper.complex
    small = TypeVarType("TSmall", ("FLOAT", "INT4"))
    assert [(i.name, i.type, i.optional, i.default) for i in helper.inputs] == [
        ("xs", SequenceType(ElementType("FLOAT")), False, NO_DEFAULT),
        ("small", small, False, NO_DEFAULT),
        ("packed", ElementType("INT4"), False, NO_DEFAULT),
        ("count", ElementType("INT64"), True, None),
    ]
    assert [(a.name, a.type, a.optional, a.default) for a in helper.attributes] == [
        ("axes", "list[int]", False, [0]),
        ("flag", "bool", False, False),
        ("name", "str", True, None),
    ]
    assert helper.outputs[0].type == small


def test_types_become_the_annotations_the_exporter_reads(library):
    from onnxscript import onnx_types

    helper = signature_of(harness.functions_by_name(library)["helper"])
    made: dict = {}
    xs, small, packed, count = (annotation(i.type, made) for i in helper.inputs)
    assert xs == typing.Sequence[onnx_types.FLOAT]
    assert packed is onnx_types.INT4  # not re-exported by the onnxscript package itself
    assert isinstance(small, typing.TypeVar) and small.__bound__ == typing.Union[onnx_types.FLOAT, onnx_types.INT4]
    assert annotation(helper.outputs[0].type, made) is small, "one TypeVar per name"
    assert count is onnx_types.INT64
    assert annotation(AnyTensor("RealType"), made) is None
    assert annotation(SequenceType(None), made) is None


def _entry(library, name: str) -> dict:
    proto = harness.functions_by_name(library)[name]
    return json.loads(next(e.value for e in proto.metadata_props if e.key == SIGNATURE_KEY))


def test_absent_keys_unknown_keys_and_versions(library):
    data = _entry(library, "helper")
    written = parse(json.dumps(data))

    unversioned = dict(data)
    del unversioned["version"]
    assert parse(json.dumps(unversioned)) == written.replace(version=0), "version 0 reads as version 1"

    extended = dict(data, later_key={"x": 1})
    extended["inputs"] = [dict(i, later_key=True) for i in data["inputs"]]
    assert parse(json.dumps(extended)) == written, "unknown keys are ignored"

    minimal = parse(json.dumps({"attributes": [], "inputs": [{"name": "x"}], "outputs": []}))
    assert minimal.parameters == () and minimal.torch_ops == () and minimal.type_vars == {}
    assert minimal.inputs[0].type is None and not minimal.inputs[0].optional and not minimal.inputs[0].has_default

    with pytest.raises(OnnxscError, match="format version 2.*up to 1"):
        parse(json.dumps(dict(data, version=SIGNATURE_VERSION + 1)), "this::helper")
    for broken in [{}, dict(data, attributes=[{"name": "a", "type": "complex"}]), dict(data, complex="yes")]:
        with pytest.raises(OnnxscError, match="is not a signature"):
            parse(json.dumps(broken))


def test_a_library_of_a_newer_format_is_refused(library, tmp_path):
    pytest.importorskip("torch", reason="torch is installed by scripts/test")
    newer = onnx.ModelProto()
    newer.CopyFrom(library)
    for proto in newer.functions:
        for entry in proto.metadata_props:
            if entry.key == SIGNATURE_KEY:
                entry.value = json.dumps(dict(json.loads(entry.value), version=SIGNATURE_VERSION + 1))
    path = tmp_path / "newer.onnx"
    onnx.save(newer, path)
    with pytest.raises(OnnxscError, match="format version 2"):
        load_library(path)
