"""Building a ``custom_translation_table`` from functions compiled by onnxsc.

Each compiled function carries its typed signature in ``metadata_props["onnxsc.signature"]``
(see the compiler's emit::proto): the parameters in Python order, input types and TypeVar
bounds, attribute types and defaults, and the PyTorch operators it is bound to with their
output counts. That is what torch's exporter reads from a translation's Python signature, so
each function becomes an ``onnxscript.OnnxFunction`` whose Python side is a stub carrying
exactly that signature, and whose ONNX side is the compiled FunctionProto.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import tempfile
import typing
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

from onnxsc._binary import find_onnxsc_bin
from onnxsc._errors import CompileError, OnnxscError

SIGNATURE_KEY = "onnxsc.signature"

PathLike = Union[str, "os.PathLike[str]"]


def translation_table(*paths: PathLike, native_functions: Optional[PathLike] = None) -> dict:
    """Compiles and checks ``.onnxs`` files (or directories of them) and returns
    ``{torch._ops.OpOverload: translation}`` for every function bound with ``@torch_op``.

    ``native_functions`` is a native_functions.yaml to check ``aten::`` bindings against
    instead of the one embedded in onnxsc (torch 2.15's); ``"auto"`` uses the one of the torch
    in the active virtual environment.

    Raises :class:`CompileError`, with the rendered diagnostics, if the sources have errors,
    and :class:`OnnxscError` if a bound operator is unknown to torch (e.g. a custom op that
    was not registered with ``torch.library.custom_op``).
    """
    if not paths:
        raise OnnxscError("translation_table() needs at least one .onnxs file or directory")
    with tempfile.TemporaryDirectory(prefix="onnxsc-") as tmp:
        out = Path(tmp) / "library.onnx"
        cmd = [find_onnxsc_bin(), "--color", "never", "build", *map(os.fspath, paths), "-o", str(out)]
        if native_functions is not None:
            cmd += ["--native-functions", os.fspath(native_functions)]
        proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace")
        if proc.returncode == 1:
            raise CompileError(_strip_summary(proc.stderr))
        if proc.returncode != 0:
            raise OnnxscError(f"onnxsc failed (exit status {proc.returncode}):\n{proc.stderr.strip()}")
        return load_library(out)


def load_library(path: PathLike) -> dict:
    """The translation table of a library built with ``onnxsc build``."""
    import onnx

    try:
        data = Path(path).read_bytes()
        model = onnx.load_from_string(data)
    except Exception as e:  # onnx raises DecodeError, OSError, ...
        raise OnnxscError(f"cannot read the library {os.fspath(path)!r}: {e}") from e
    return _table(model, _Specializer(data))


def _strip_summary(stderr: str) -> str:
    """The diagnostics without onnxsc's last `onnxsc: N errors` line."""
    lines = stderr.rstrip("\n").split("\n")
    if lines and lines[-1].startswith("onnxsc: "):
        lines.pop()
    return "\n".join(lines).rstrip("\n") + "\n"


def _table(model, specializer: "_Specializer") -> dict:
    table: dict = {}
    bound_by: dict = {}
    for proto in model.functions:
        signature = _signature_of(proto)
        if signature is None or not signature.get("torch_ops"):
            continue
        function = _onnx_function(proto, signature, specializer)
        for op in signature["torch_ops"]:
            overload = resolve_overload(op["name"])
            if overload in table:
                raise OnnxscError(
                    f"{op['name']} is translated twice: by {bound_by[overload]} and by "
                    f"{proto.domain}::{proto.name}"
                )
            table[overload] = function
            bound_by[overload] = f"{proto.domain}::{proto.name}"
    return table


def _signature_of(proto) -> Optional[dict]:
    for entry in proto.metadata_props:
        if entry.key == SIGNATURE_KEY:
            return json.loads(entry.value)
    return None


def resolve_overload(qualname: str):
    """``aten::add.Tensor`` -> ``torch.ops.aten.add.Tensor``; ``aten::gelu`` (no overload) ->
    ``torch.ops.aten.gelu.default``, as torch names the default overload."""
    import torch

    namespace, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    packet = getattr(getattr(torch.ops, namespace), name, None) if namespace and name else None
    if packet is None:
        if namespace == "aten":
            raise OnnxscError(f"{qualname} is not an operator of this PyTorch ({torch.__version__})")
        raise OnnxscError(
            f"{qualname} is not registered with PyTorch: register the custom operator (for "
            f"example with @torch.library.custom_op({namespace + '::' + name!r}, mutates_args=())) "
            f"before building the translation table"
        )
    overload = overload or "default"
    try:
        return getattr(packet, overload)
    except AttributeError:
        known = ", ".join(sorted(packet.overloads()))
        raise OnnxscError(f"{namespace}::{name} has no overload {overload!r}; it has: {known}") from None


# ---------------------------------------------------------------------------------------------
# The Python side of a compiled function


_ATTRIBUTE_TYPES: dict[str, Any] = {
    "float": float,
    "int": int,
    "str": str,
    "bool": bool,
    "list[float]": Sequence[float],
    "list[int]": Sequence[int],
    "list[str]": Sequence[str],
    "list[bool]": Sequence[bool],
}


def _tensor_type(name: str):
    import onnxscript

    return getattr(onnxscript, name)


def _input_annotation(type_name: Optional[str], type_vars: dict, made: dict):
    """The annotation torch's exporter reads for an input: an onnxscript tensor type, a
    TypeVar with its bound, or a Sequence of either; ``None`` for an unannotated input."""
    if type_name is None:
        return None
    if type_name.startswith("Sequence[") and type_name.endswith("]"):
        inner = _input_annotation(type_name[len("Sequence[") : -1], type_vars, made)
        return Sequence[inner] if inner is not None else None
    if type_name in type_vars:
        if type_name not in made:
            bound = [_tensor_type(t) for t in type_vars[type_name]]
            made[type_name] = typing.TypeVar(type_name, bound=Union[tuple(bound)]) if bound else typing.TypeVar(type_name)
        return made[type_name]
    try:
        return _tensor_type(type_name)
    except AttributeError:
        return None


def _stub(proto, signature: dict, n_outputs: int, body: Optional[Callable] = None) -> Callable:
    inputs = {i["name"]: i for i in signature["inputs"]}
    attributes = {a["name"]: a for a in signature["attributes"]}
    type_vars = signature.get("type_vars", {})
    made: dict = {}
    parameters = []
    annotations: dict[str, Any] = {}
    for name in signature["parameters"]:
        if name in inputs:
            spec = inputs[name]
            annotation = _input_annotation(spec.get("type"), type_vars, made)
            default = None if spec.get("optional") else inspect.Parameter.empty
            if annotation is not None:
                annotations[name] = Optional[annotation] if spec.get("optional") else annotation
        else:
            spec = attributes[name]
            annotation = _ATTRIBUTE_TYPES[spec["type"]]
            default = spec["default"] if "default" in spec else inspect.Parameter.empty
            annotations[name] = annotation
        parameters.append(
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotations.get(name, inspect.Parameter.empty))
        )
    # The exporter counts outputs from the return annotation: one entry per output.
    declared = [o.get("type") for o in signature["outputs"]]
    returns = []
    for k in range(n_outputs):
        t = _input_annotation(declared[k] if k < len(declared) else None, type_vars, made)
        returns.append(t if t is not None else typing.TypeVar(f"TReturn{k}"))
    annotations["return"] = returns[0] if n_outputs == 1 else typing.Tuple[tuple(returns)]

    def translation(*args, **kwargs):
        if body is None:
            raise OnnxscError(f"{proto.name} was compiled by onnxsc; it runs inside torch.onnx.export")
        return body(*args, **kwargs)

    translation.__name__ = proto.name
    translation.__qualname__ = proto.name
    translation.__module__ = "onnxsc.library"
    translation.__doc__ = proto.doc_string or None
    translation.__signature__ = inspect.Signature(parameters, return_annotation=annotations["return"])
    translation.__annotations__ = annotations
    return translation


def _has_attribute_condition(proto) -> bool:
    """Whether the body has an `If` whose condition may depend on attributes only: the
    exporter then gets, per set of attribute values, the function specialised to them."""
    referencing = {a.ref_attr_name for n in proto.node for a in n.attribute if a.ref_attr_name}
    return bool(proto.attribute or proto.attribute_proto) and bool(referencing) and any(n.op_type == "If" and n.domain in ("", "ai.onnx") for n in proto.node)


class _Specializer:
    """Specialises library functions to concrete attribute values with onnxsc's linker: a
    one-node model calling the function, linked in inline mode, is the function's body with
    the attributes bound and attribute-only conditions folded."""

    def __init__(self, library: bytes):
        self.library = library
        self.cache: dict = {}

    def variant(self, proto, signature: dict, attrs: dict):
        import onnx

        attr_types = {a["name"]: a["type"] for a in signature["attributes"]}
        given = {k: _typed(attr_types[k], v) for k, v in attrs.items() if k in attr_types and v is not None}
        key = (proto.domain, proto.name, json.dumps(given, sort_keys=True))
        if key in self.cache:
            return self.cache[key]
        inputs = [i["name"] for i in signature["inputs"]]
        outputs = [f"out{k}" for k in range(len(proto.output))]
        node = onnx.helper.make_node(proto.name, inputs, outputs, domain=proto.domain, **given)
        # Typed as onnx.checker requires (the linker refuses a model it would refuse); the
        # element type is a placeholder, as only the linked nodes are used.
        untyped = [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in inputs + outputs]
        for v in untyped:
            v.type.tensor_type.shape.SetInParent()
        graph = onnx.helper.make_graph([node], "call", untyped[: len(inputs)], untyped[len(inputs) :])
        imports = [onnx.helper.make_opsetid(proto.domain, 1), *proto.opset_import]
        model = onnx.helper.make_model(graph, opset_imports=_unique_imports(imports), ir_version=10)
        with tempfile.TemporaryDirectory(prefix="onnxsc-") as tmp:
            paths = [Path(tmp) / n for n in ("call.onnx", "library.onnx", "linked.onnx")]
            paths[0].write_bytes(model.SerializeToString())
            paths[1].write_bytes(self.library)
            cmd = [find_onnxsc_bin(), "--color", "never", "link", str(paths[0]), str(paths[1]), "-o", str(paths[2]), "--mode", "inline"]
            proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace")
            if proc.returncode != 0:
                raise OnnxscError(f"cannot specialise {proto.domain}::{proto.name} to {given}:\n{proc.stderr.strip()}")
            linked = onnx.load_from_string(paths[2].read_bytes())
        body = onnx.helper.make_function(
            proto.domain,
            f"{proto.name}__specialized_{len(self.cache)}",
            inputs,
            outputs,
            list(linked.graph.node),
            [o for o in linked.opset_import if o.domain != proto.domain or _calls_domain(linked.graph.node, proto.domain)],
        )
        variant_signature = {
            "inputs": signature["inputs"],
            "attributes": [],
            "parameters": inputs,
            "outputs": signature["outputs"],
            "type_vars": signature.get("type_vars", {}),
            "torch_ops": signature["torch_ops"],
        }
        self.cache[key] = _onnx_function(body, variant_signature, None)
        return self.cache[key]


def _typed(python_type: str, value):
    """An attribute value as the function declares it (bool attributes travel as INT)."""
    if python_type == "float":
        return float(value)
    if python_type in ("int", "bool"):
        return int(value)
    if python_type in ("list[int]", "list[bool]"):
        return [int(v) for v in value]
    if python_type == "list[float]":
        return [float(v) for v in value]
    return value


def _unique_imports(imports):
    seen, out = set(), []
    for o in imports:
        if o.domain not in seen:
            seen.add(o.domain)
            out.append(o)
    return out


def _calls_domain(nodes, domain: str) -> bool:
    return any(n.domain == domain for n in nodes)


def _onnx_function(proto, signature: dict, specializer: Optional[_Specializer]):
    import onnx_ir as ir
    from onnxscript import values

    class CompiledFunction(values.OnnxFunction):
        """An onnxscript function whose body onnxsc compiled: the exporter gets the
        FunctionProto exactly as built, typed attribute references and metadata included."""

        def to_function_proto(self):
            copy = type(proto)()
            copy.CopyFrom(proto)
            return copy

    counts = {op.get("outputs") for op in signature["torch_ops"] if op.get("outputs") is not None}
    # The checker guarantees the function returns what each bound aten operator returns.
    n_outputs = counts.pop() if len(counts) == 1 else len(proto.output)
    ir_function = ir.serde.deserialize_function(proto)
    opset = values.Opset(proto.domain, 1)
    body = None
    if specializer is not None and _has_attribute_condition(proto):
        attribute_names = {a["name"] for a in signature["attributes"]}

        def body(**arguments):
            # The exporter traces this call with concrete attribute values: call the function
            # specialised to them, whose attribute-only conditions are folded away.
            attrs = {k: v for k, v in arguments.items() if k in attribute_names}
            # Positionally: an input may be called `self`, which a keyword cannot bind.
            inputs = [arguments.get(i["name"]) for i in signature["inputs"]]
            return specializer.variant(proto, signature, attrs)(*inputs)

    function = CompiledFunction(opset, _stub(proto, signature, n_outputs, body), ir_function, "", {})
    # torch's exporter calls a traceable function's Python side with the attribute values.
    function.traceable = body is not None
    return function
