"""The ``onnxsc.signature`` metadata of a compiled function, read once into typed values.

The format is the compiler's contract with this package and with other tools:
``docs/signature-format.md`` describes every key. This module is the package's only reader of
it: keys it does not know are ignored, absent keys take their documented defaults, and a
signature of a later format version than :data:`SIGNATURE_VERSION` is refused rather than
guessed at.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import typing
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

from onnxsc._errors import OnnxscError

SIGNATURE_KEY = "onnxsc.signature"

# The latest format version this package reads (a missing version is 0, read as 1).
SIGNATURE_VERSION = 1

# The attribute types, as Python annotations (bool travels as INT, list[bool] as INTS).
ATTRIBUTE_TYPES: dict = {
    "float": float,
    "int": int,
    "str": str,
    "bool": bool,
    "list[float]": Sequence[float],
    "list[int]": Sequence[int],
    "list[str]": Sequence[str],
    "list[bool]": Sequence[bool],
}

# The attribute types, as AttributeProto types.
ATTRIBUTE_PROTO_TYPES: dict = {
    "float": 1,  # FLOAT
    "int": 2,  # INT
    "bool": 2,  # INT, as onnxscript carries bools
    "str": 3,  # STRING
    "list[float]": 6,  # FLOATS
    "list[int]": 7,  # INTS
    "list[bool]": 7,
    "list[str]": 8,  # STRINGS
}


class _NoDefault:
    """The absence of a default (``None`` is a default: ``= None``)."""

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


# ---------------------------------------------------------------------------------------------
# Types of inputs and outputs (the format's type grammar)


@dataclass(frozen=True)
class ElementType:
    """A tensor of one element type (``FLOAT``, ``INT4``, ...)."""

    name: str


@dataclass(frozen=True)
class TypeVarType:
    """A tensor whose element type is one of ``bound`` (any, when empty), the same for every
    input and output naming the TypeVar."""

    name: str
    bound: tuple


@dataclass(frozen=True)
class AnyTensor:
    """A tensor of any element type: a named union alias (whose members the format does not
    record), or a TypeVar named only inside ``Sequence[...]``."""

    name: str


@dataclass(frozen=True)
class SequenceType:
    """A sequence of tensors; ``element`` is None for ``Sequence[?]`` (any element type)."""

    element: Optional["TensorType"]


TensorType = Union[ElementType, TypeVarType, AnyTensor, SequenceType]


@functools.lru_cache(maxsize=None)
def _element_type_names() -> frozenset:
    import onnx

    return frozenset(name for name in onnx.TensorProto.DataType.keys() if name != "UNDEFINED")


def parse_type(text: Optional[str], type_vars: dict) -> Optional[TensorType]:
    """A ``type`` string of the format; None for ``null`` (unannotated)."""
    if text is None:
        return None
    if text.startswith("Sequence[") and text.endswith("]"):
        inner = text[len("Sequence[") : -1]
        return SequenceType(None if inner == "?" else parse_type(inner, type_vars))
    if text in type_vars:
        return TypeVarType(text, tuple(type_vars[text]))
    if text in _element_type_names():
        return ElementType(text)
    return AnyTensor(text)


# ---------------------------------------------------------------------------------------------
# The signature


class _Parameter:
    """What inputs and attributes share: ``optional`` (may be None or omitted) and
    ``default`` (the source's default, None for ``= None``, or NO_DEFAULT)."""

    default: Any

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass(frozen=True)
class Input(_Parameter):
    name: str
    type: Optional[TensorType]
    optional: bool = False
    default: Any = NO_DEFAULT


@dataclass(frozen=True)
class Attribute(_Parameter):
    name: str
    # One of ATTRIBUTE_TYPES' keys.
    type: str
    optional: bool = False
    default: Any = NO_DEFAULT


@dataclass(frozen=True)
class Output:
    name: str
    type: Optional[TensorType]


@dataclass(frozen=True)
class TorchOp:
    """A PyTorch operator the function translates; ``outputs`` is how many values it returns
    (None: no schema of it is known)."""

    name: str
    outputs: Optional[int]


@dataclass(frozen=True)
class Signature:
    attributes: tuple
    inputs: tuple
    outputs: tuple
    parameters: tuple = ()
    torch_ops: tuple = ()
    type_vars: dict = field(default_factory=dict)
    complex: bool = False
    # The parameters that receive a backend hint (cudnn_enable, ...): they cannot change values.
    hints: tuple = ()
    # The parameters the source deletes with `del`: left unread on purpose.
    ignored: tuple = ()
    # The warnings suppressed for the translation as a whole: codes, or prefixes of codes.
    noqa: tuple = ()
    version: int = 0

    def suppresses(self, code: str) -> bool:
        """Whether the source suppresses the warning ``code`` for the whole translation (a
        ``# noqa`` on its decorators or ``def`` line, the file's, or its configuration's)."""
        return bool(code) and any(code.startswith(s) for s in self.noqa if s)

    def input(self, name: str) -> Optional[Input]:
        return next((i for i in self.inputs if i.name == name), None)

    def attribute(self, name: str) -> Optional[Attribute]:
        return next((a for a in self.attributes if a.name == name), None)

    def replace(self, **changes) -> "Signature":
        return dataclasses.replace(self, **changes)


def signature_of(proto) -> Optional[Signature]:
    """The signature a compiled function carries, or None if it has none."""
    for entry in proto.metadata_props:
        if entry.key == SIGNATURE_KEY:
            return parse(entry.value, f"{proto.domain}::{proto.name}")
    return None


def parse(text: str, where: str = "a function") -> Signature:
    """The signature of the JSON ``text``; raises :class:`OnnxscError` if it is not one in a
    version this package reads."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("it is not a JSON object")
        version = data.get("version", 0)
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise ValueError(f"`version` is {version!r}, not a format version")
        if version > SIGNATURE_VERSION:
            raise OnnxscError(
                f"{where}: its {SIGNATURE_KEY} metadata is in format version {version}, but this onnxsc "
                f"package reads versions up to {SIGNATURE_VERSION}: use the package of the onnxsc that "
                f"compiled it"
            )
        type_vars = {
            _str(name, "a TypeVar name"): tuple(_str(t, "an element type") for t in _list(bound, "a bound"))
            for name, bound in _dict(data.get("type_vars", {}), "`type_vars`").items()
        }
        return Signature(
            attributes=tuple(_attribute(a) for a in _list(data["attributes"], "`attributes`")),
            inputs=tuple(_input(i, type_vars) for i in _list(data["inputs"], "`inputs`")),
            outputs=tuple(
                Output(_str(o["name"], "a name"), parse_type(_opt_str(o.get("type")), type_vars))
                for o in _list(data["outputs"], "`outputs`")
            ),
            parameters=tuple(_str(p, "a parameter") for p in _list(data.get("parameters", []), "`parameters`")),
            torch_ops=tuple(_torch_op(t) for t in _list(data.get("torch_ops", []), "`torch_ops`")),
            type_vars=type_vars,
            complex=_bool(data.get("complex", False), "`complex`"),
            hints=tuple(_str(p, "a parameter") for p in _list(data.get("hints", []), "`hints`")),
            ignored=tuple(_str(p, "a parameter") for p in _list(data.get("ignored", []), "`ignored`")),
            noqa=tuple(_str(c, "a code") for c in _list(data.get("noqa", []), "`noqa`")),
            version=version,
        )
    except OnnxscError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        reason = f"`{e.args[0]}` is missing" if isinstance(e, KeyError) else str(e)
        raise OnnxscError(f"{where}: its {SIGNATURE_KEY} metadata is not a signature ({reason})") from None


def _attribute(a) -> Attribute:
    kind = _str(a["type"], "an attribute type")
    if kind not in ATTRIBUTE_TYPES:
        raise ValueError(f"`{kind}` is not an attribute type")
    return Attribute(
        _str(a["name"], "a name"), kind, _bool(a.get("optional", False), "`optional`"), a.get("default", NO_DEFAULT)
    )


def _input(i, type_vars: dict) -> Input:
    return Input(
        _str(i["name"], "a name"),
        parse_type(_opt_str(i.get("type")), type_vars),
        _bool(i.get("optional", False), "`optional`"),
        i.get("default", NO_DEFAULT),
    )


def _torch_op(t) -> TorchOp:
    outputs = t["outputs"]
    if outputs is not None and (not isinstance(outputs, int) or isinstance(outputs, bool)):
        raise ValueError(f"`outputs` is {outputs!r}, not a count")
    return TorchOp(_str(t["name"], "an operator name"), outputs)


def _str(value, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not {what}")
    return value


def _opt_str(value) -> Optional[str]:
    return None if value is None else _str(value, "a type")


def _bool(value, what: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{what} is {value!r}, not a boolean")
    return value


def _list(value, what: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{what} is not an array")
    return value


def _dict(value, what: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not an object")
    return value


# ---------------------------------------------------------------------------------------------
# Types as torch's exporter reads them


def annotation(ty: Optional[TensorType], made: dict):
    """The annotation torch's exporter reads for an input or output of type ``ty``: an
    onnxscript tensor type, a TypeVar with its bound, or a Sequence of either; None when any
    tensor fits. ``made`` keeps one ``typing.TypeVar`` per name across a signature."""
    if ty is None or isinstance(ty, AnyTensor):
        return None
    if isinstance(ty, SequenceType):
        inner = annotation(ty.element, made)
        return Sequence[inner] if inner is not None else None
    if isinstance(ty, TypeVarType):
        if ty.name not in made:
            bound = [t for t in (_tensor_class(name) for name in ty.bound) if t is not None]
            made[ty.name] = typing.TypeVar(ty.name, bound=Union[tuple(bound)]) if bound else typing.TypeVar(ty.name)
        return made[ty.name]
    return _tensor_class(ty.name)


def _tensor_class(name: str):
    """onnxscript's tensor type of an element type (``onnx_types`` has them all, also those
    the top-level package does not re-export, such as ``INT4``)."""
    from onnxscript import onnx_types

    return getattr(onnx_types, name, None)
