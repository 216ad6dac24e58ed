"""The Python side of a compiled translation: what torch's exporter calls.

The exporter calls a translation with the arguments of the operator call: positional ones in
the aten schema's order (which ``onnxsc check`` has matched to the parameters), keyword-only
ones by name, trailing defaults omitted, ``None`` for absent optional values (and ``-1`` for
a ``dtype=None`` keyword). A translation binds them to the function's parameters exactly as
the source declares them (no defaults made up: an optional parameter without a default is
None when omitted), types the attribute values, and calls the function specialised to this
call (``_specialize``): one that takes the given inputs only and has no attributes.

The callable carries a ``__signature__`` with the source's parameters, defaults and types and
as many outputs as the aten schema returns, for the exporter's registry.
"""

from __future__ import annotations

import inspect
import typing
import warnings
from typing import Any, Callable, Optional

from onnxsc._errors import OnnxscError, OnnxscWarning
from onnxsc._signature import ATTRIBUTE_TYPES, Signature, TorchOp, annotation

# Where a compiled function and each node are defined (the compiler's onnx::metadata).
SOURCE_KEY = "onnxsc.source"


def source_of(proto) -> str:
    """Where a compiled function is defined, ``file:line:column``, for messages."""
    for entry in proto.metadata_props:
        if entry.key == SOURCE_KEY:
            return entry.value
    return f"{proto.domain}::{proto.name}"


def source_file_line(proto) -> tuple:
    """The ``.onnxs`` file and line a compiled function is defined at, for warnings that point
    there; ``("<onnxsc>", 0)`` for a function without a recorded source."""
    for entry in proto.metadata_props:
        if entry.key == SOURCE_KEY:
            file, _, rest = entry.value.rpartition(":")
            file, _, line = file.rpartition(":")
            if file and line.isdigit():
                return file, int(line)
    return "<onnxsc>", 0


class Warner:
    """Raises the warnings about one function: as :class:`OnnxscWarning` attributed to its
    ``.onnxs`` file and line (each message once), or, with ``deny_warnings``, as errors. A
    warning its source suppresses (``signature.noqa``: a ``# noqa: CODE`` on its decorators or
    ``def`` line, the file's, or the configuration's ``ignore``) is not raised."""

    def __init__(self, proto, deny_warnings: bool, signature: Optional[Signature] = None):
        self.file, self.line = source_file_line(proto)
        self.where = f"{source_of(proto)}: `{proto.name}`"
        self.deny = deny_warnings
        self.signature = signature
        # warnings.warn_explicit's memory of what it showed, per function.
        self.registry: dict = {}

    def warn(self, message: str, code: str) -> None:
        if self.signature is not None and self.signature.suppresses(code):
            return
        if self.deny:
            raise OnnxscError(f"{message}\n(deny_warnings=True makes this warning an error)")
        w = OnnxscWarning(message, code, self.file, self.line, 0)
        warnings.warn_explicit(w, OnnxscWarning, self.file, self.line, module="onnxsc", registry=self.registry)


def make_translation(
    proto, signature: Signature, op: TorchOp, overload, specializer, warner, usage, newer=None
) -> Callable:
    """The translation of ``overload`` (``op`` is its entry in the signature's ``torch_ops``),
    warning through ``warner`` and telling ``usage`` (the table's ``TableUsage``) each call;
    ``newer`` (a ``_newer.NewerOpset``) may hand the call to the exporter's own translation."""
    # The checker guarantees the function returns what the aten operator returns.
    n_outputs = op.outputs or len(proto.output)
    binder = _Binder(proto, signature, op.name)
    ignored = _IgnoredArguments(proto, signature, overload, binder.where, warner)

    def translation(*args, **kwargs):
        instead = newer.at_this_call() if newer is not None else None
        if instead is not None:
            return instead(*args, **kwargs)
        translation.calls += 1
        usage.observe()
        ignored.check(args, kwargs)
        inputs, attributes = binder.bind(args, kwargs)
        given = [name for name, value in inputs if value is not None]
        types, expect = call_types(inputs)
        function = specializer.variant(proto, signature, given, attributes, n_outputs, types, expect)
        try:
            return function(*[value for _, value in inputs if value is not None])
        except OnnxscError:
            raise
        except Exception as e:
            raise OnnxscError(f"{binder.where}: the exporter could not build this call: {e}") from e

    def check_facts(args, kwargs, expect) -> None:
        """Checks one call as the exporter would make it, from its facts alone: the body linked
        for the call and checked against what the given tensors are and PyTorch's answer
        (``expect``), raising the refusal; no function is built, nothing is exported."""
        ignored.check(args, kwargs)
        inputs, attributes = binder.bind(args, kwargs)
        given = [name for name, value in inputs if value is not None]
        specializer.check(proto, given, attributes, typed_inputs(inputs), expect)

    # How many times the exporter called it, and how many of the calls gave a deleted parameter
    # another value than its default (`python -m onnxsc test` counts on both).
    translation.calls = 0
    translation.ignored_values = lambda: ignored.ignored_values
    translation.check_facts = check_facts
    return _with_signature(translation, proto, signature, n_outputs)


def call_types(inputs: list) -> tuple:
    """What the exporter knows of a call's given tensors and lists of tensors (``{name: tagged
    facts}``, as a trace's facts describe them), and what PyTorch computes for the call
    (``_trace``'s ``pytorch_answer``, None outside an export). The server checks the call's body
    against both (``link::shapes``)."""
    from onnxsc._trace import pytorch_answer

    return typed_inputs(inputs), pytorch_answer()


def typed_inputs(inputs: list) -> dict:
    """``{name: tagged facts}`` of the given tensors and lists of tensors among ``inputs``."""
    from onnxsc._trace import tensor_facts

    types = {}
    for name, value in inputs:
        facts = tensor_facts(value)
        if facts is not None:
            types[name] = facts
    return types


class _Binder:
    """Binds an exporter call's arguments to the function's parameters."""

    def __init__(self, proto, signature: Signature, qualname: str):
        self.parameters = list(signature.parameters)
        self.inputs = {i.name: i for i in signature.inputs}
        self.attributes = {a.name: a for a in signature.attributes}
        self.where = f"{source_of(proto)}: `{proto.name}`, translating {qualname}"

    def bind(self, args: tuple, kwargs: dict):
        """``[(input name, value or None)]`` in the function's input order, and
        ``{attribute name: value}`` for the attributes that have a value."""
        if len(args) > len(self.parameters):
            raise OnnxscError(
                f"{self.where}: the exporter passed {len(args)} positional arguments, but the "
                f"translation has {len(self.parameters)} parameters"
            )
        values = dict(zip(self.parameters, args))
        for name, value in kwargs.items():
            if name not in self.inputs and name not in self.attributes:
                # An argument that check allows a translation to leave out (Layout, Device, ...).
                continue
            if name in values:
                raise OnnxscError(f"{self.where}: `{name}` is passed both by position and by name")
            # The exporter passes `dtype=None` as -1 (torch's _core); the source says None.
            attribute = self.attributes.get(name)
            if name == "dtype" and value == -1 and attribute is not None and attribute.optional:
                value = None
            values[name] = value
        inputs = []
        for name, spec in self.inputs.items():
            if name in values:
                value = values[name]
            elif spec.has_default:
                # ONNX inputs have no defaults: the source's (a constant, or None) is passed.
                value = spec.default
            elif spec.optional:
                value = None
            else:
                raise OnnxscError(f"{self.where}: the exporter passed no `{name}`, and the translation requires it")
            inputs.append((name, value))
        attributes = {}
        for name, spec in self.attributes.items():
            value = values.get(name)
            # None, or not passed: the source's default applies, else the attribute is not given.
            if value is None and spec.has_default:
                value = spec.default
            if value is None:
                if not spec.optional and not spec.has_default:
                    raise OnnxscError(f"{self.where}: the exporter passed no `{name}`, and the translation requires it")
                continue
            attributes[name] = self.attribute_value(name, spec.type, value)
        return inputs, attributes

    def attribute_value(self, name: str, python_type: str, value):
        """A value as the attribute's type carries it (bools as integers, one int as a list)."""
        if _is_dynamic(value):
            raise OnnxscError(
                f"{self.where}: `{name}` is computed when the model runs here (a dynamic shape), but "
                f"the translation takes it as a `{python_type}` attribute, fixed at export: take it as "
                f"an INT64 input (`{name}: INT64`)"
            )
        try:
            if python_type == "float":
                return float(value)
            if python_type in ("int", "bool"):
                return _integer(value)
            if python_type == "str":
                return str(value)
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            if python_type in ("list[int]", "list[bool]"):
                return [_integer(v) for v in items]
            if python_type == "list[float]":
                return [float(v) for v in items]
            return [str(v) for v in items]
        except (TypeError, ValueError) as e:
            raise OnnxscError(f"{self.where}: `{name}` = {value!r} does not fit its `{python_type}` attribute: {e}") from None


class _IgnoredArguments:
    """Warns when a call passes a parameter that the function never reads a value that differs
    from the operator's default: the exported graph then computes the default's result, not
    the call's (the tutorial's gelu, mapped to a kernel without `approximate`, called with
    ``approximate="tanh"``). A value equal to the default is what the function computes, and a
    parameter the function leaves unread on purpose (``del``, or a backend hint such as
    ``cudnn_enable``: the signature's ``ignored``) never warns."""

    def __init__(self, proto, signature: Signature, overload, where: str, warner: "Warner"):
        self.where = where
        self.warner = warner
        read = _names_read(proto)
        unread = {p for p in signature.parameters if p not in read}
        self.unread = unread - set(signature.ignored) - set(signature.hints)
        # Deleted parameters passed a value other than the default: the calls that compute the
        # default's result on purpose (`python -m onnxsc test` does not judge them).
        self.deleted = unread & set(signature.ignored)
        self.ignored_values = 0
        self.parameters = list(signature.parameters)
        schema = getattr(overload, "_schema", None)
        self.arguments = list(schema.arguments) if schema is not None else []
        self.qualname = str(schema.name) if schema is not None else ""

    def check(self, args: tuple, kwargs: dict) -> None:
        if not self.unread and not self.deleted:
            return
        by_name = {a.name: a for a in self.arguments}
        passed = [(self.parameters[i], value, self.arguments[i] if i < len(self.arguments) else None)
                  for i, value in enumerate(args) if i < len(self.parameters)]
        passed += [(name, value, by_name.get(name)) for name, value in kwargs.items()]
        for name, value, argument in passed:
            watched = name in self.unread or name in self.deleted
            if not watched or argument is None or not argument.has_default_value():
                continue
            default = argument.default_value
            if _same_value(value, default):
                continue
            if name in self.deleted:
                self.ignored_values += 1
                continue
            self.warner.warn(
                f"{self.where}: this call passes {argument.name}={_shown(value)}, but the translation "
                f"never reads `{name}`, so the exported graph computes the result for the default "
                f"{argument.name}={default!r}; read `{name}` in the translation, or write `del {name}` "
                f"at its top if the value does not matter",
                code="W0509",
            )


def _names_read(proto) -> set:
    """The inputs that some node consumes and the attributes that some node refers to, in the
    body and in its subgraphs (which read outer values by name)."""
    read: set = set()

    def visit(nodes) -> None:
        for node in nodes:
            read.update(node.input)
            for attribute in node.attribute:
                if attribute.ref_attr_name:
                    read.add(attribute.ref_attr_name)
                subgraphs = list(attribute.graphs) + ([attribute.g] if attribute.HasField("g") else [])
                for graph in subgraphs:
                    visit(graph.node)
                    read.update(o.name for o in graph.output)

    visit(proto.node)
    read.update(proto.output)
    return read


def _same_value(value, default) -> bool:
    """Whether a passed value is the schema's default (``-1`` stands for a ``dtype`` of None)."""
    if _is_dynamic(value):
        return False
    if default is None and value == -1:
        return True  # the exporter passes `dtype=None` as -1
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(value) == list(default)
    try:
        return bool(value == default)
    except Exception:  # a tensor-like value compares elementwise
        return False


def _shown(value) -> str:
    return "a value computed in the graph" if _is_dynamic(value) else repr(value)


def _integer(value) -> int:
    """An int (bools and integer-valued floats included), never a truncated float."""
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("it is not an integer (a `Scalar` that may be fractional needs a `float` attribute)")
    return int(value)


def _is_dynamic(value) -> bool:
    """Whether a value (or an item of a list) is a graph value, not a Python constant."""
    import onnx_ir as ir

    if isinstance(value, (list, tuple)):
        return any(_is_dynamic(v) for v in value)
    return isinstance(value, ir.Value)


# ---------------------------------------------------------------------------------------------
# Signatures as the exporter reads them


def _with_signature(fn: Callable, proto, signature: Signature, n_outputs: int) -> Callable:
    """``fn`` with the source's signature: parameters in order with their defaults (the source
    follows Python's rules, so this is a valid signature), input and attribute types, and
    ``n_outputs`` outputs in the return annotation (the exporter counts outputs there)."""
    inputs = {i.name: i for i in signature.inputs}
    attributes = {a.name: a for a in signature.attributes}
    made: dict = {}
    parameters = []
    annotations: dict[str, Any] = {}
    for name in signature.parameters:
        spec = inputs.get(name) or attributes[name]
        if name in inputs:
            annotated = annotation(inputs[name].type, made)
        else:
            annotated = ATTRIBUTE_TYPES[attributes[name].type]
        if annotated is not None:
            annotations[name] = typing.Optional[annotated] if spec.optional else annotated
        default = spec.default if spec.has_default else inspect.Parameter.empty
        parameters.append(
            inspect.Parameter(
                name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=default,
                annotation=annotations.get(name, inspect.Parameter.empty),
            )
        )
    declared = [o.type for o in signature.outputs]
    returns = []
    for k in range(n_outputs):
        t = annotation(declared[k] if k < len(declared) else None, made)
        returns.append(t if t is not None else typing.TypeVar(f"TReturn{k}"))
    annotations["return"] = returns[0] if n_outputs == 1 else typing.Tuple[tuple(returns)]
    fn.__name__ = proto.name
    fn.__qualname__ = proto.name
    fn.__module__ = "onnxsc.library"
    fn.__doc__ = proto.doc_string or None
    fn.__signature__ = inspect.Signature(parameters, return_annotation=annotations["return"])
    fn.__annotations__ = annotations
    return fn


def compiled_function(proto, signature: Signature, n_outputs: int):
    """An ``onnxscript.OnnxFunction`` whose ONNX side is ``proto`` exactly as built (typed
    attribute references and metadata included): the exporter adds it to the model as a
    local function, calls it and inlines it."""
    import onnx_ir as ir
    from onnxscript import values

    class CompiledFunction(values.OnnxFunction):
        def to_function_proto(self):
            copy = type(proto)()
            copy.CopyFrom(proto)
            return copy

    def stub(*args, **kwargs):
        raise OnnxscError(f"{proto.name} was compiled by onnxsc; it runs inside torch.onnx.export")

    _with_signature(stub, proto, signature, n_outputs)
    return CompiledFunction(values.Opset(proto.domain, 1), stub, ir.serde.deserialize_function(proto), "", {})
