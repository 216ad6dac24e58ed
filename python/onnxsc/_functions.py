"""Running a compiled function directly, for debugging: ``onnxsc.functions(*paths)``.

    fns = onnxsc.functions("gelu.onnxs")
    y = fns.my_gelu(x, approximate="tanh")     # NumPy arrays or torch tensors in, NumPy out

Each call binds its arguments to the function's parameters as Python would (positions, then
names, then the source's defaults), specialises the function to the inputs given and the
attribute values (onnxsc's linker, as an export does: ``x is None`` tests and conditions on
attributes folded), and runs that body in ONNX Runtime on the CPU. onnxscript's eager mode is
the model: a function called like Python code, computing with ONNX Runtime.
"""

from __future__ import annotations

import os
from typing import Any, Union

from onnxsc._errors import OnnxscError
from onnxsc._located import located
from onnxsc._signature import NO_DEFAULT, Signature, signature_of
from onnxsc._specialize import Specializer
from onnxsc._translation import source_of

PathLike = Union[str, "os.PathLike[str]"]


class Functions:
    """The compiled functions of some ``.onnxs`` files, by name: ``fns.name`` or
    ``fns["name"]`` (``fns["domain::name"]`` when two domains define the same name)."""

    def __init__(self, library: bytes, model):
        specializer = Specializer(library)
        self._by_name: dict = {}
        for proto in model.functions:
            signature = signature_of(proto)
            if signature is None:
                continue
            function = Function(proto, signature, specializer)
            self._by_name[f"{proto.domain}::{proto.name}"] = function
            # A bare name is kept only while it is unambiguous.
            self._by_name[proto.name] = None if proto.name in self._by_name else function

    def __getitem__(self, name: str) -> "Function":
        function = self._by_name.get(name)
        if function is None:
            if name in self._by_name:
                raise KeyError(f"`{name}` is defined in several domains: write fns['domain::{name}']")
            raise KeyError(f"no compiled function `{name}`; the functions are: {', '.join(self.names())}")
        return function

    def __getattr__(self, name: str) -> "Function":
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(str(e.args[0])) from None

    def names(self) -> list:
        """Every function's name (qualified with its domain where the name is ambiguous)."""
        return sorted(n for n, f in self._by_name.items() if f is not None and "::" not in n) + sorted(
            n for n, f in self._by_name.items() if "::" in n and self._by_name.get(n.split("::", 1)[1]) is None
        )

    def __dir__(self):
        return list(super().__dir__()) + [n for n in self.names() if "::" not in n]

    def __iter__(self):
        return iter(self.names())


class Function:
    """One compiled function, callable on NumPy arrays or torch tensors; returns NumPy arrays
    (a tuple of them for several outputs)."""

    def __init__(self, proto, signature: Signature, specializer: Specializer):
        self.proto = proto
        self.signature = signature
        self._specializer = specializer
        self._sessions: dict = {}
        self.__name__ = proto.name
        self.__doc__ = proto.doc_string or None

    def __repr__(self) -> str:
        return f"<onnxsc function {self.proto.domain}::{self.proto.name} ({source_of(self.proto)})>"

    def __call__(self, *args, **kwargs):
        import numpy as np

        inputs, attributes = self._bind(args, kwargs)
        given = [name for name, value in inputs if value is not None]
        arrays = {name: _array(value) for name, value in inputs if value is not None}
        key = (tuple((n, a.dtype.str, a.ndim) for n, a in arrays.items()), repr(sorted(attributes.items())))
        if key not in self._sessions:
            self._sessions[key] = self._session(given, attributes, arrays)
        session, model = self._sessions[key]
        try:
            outputs = session.run(None, arrays)
        except Exception as e:
            raise OnnxscError(
                f"{source_of(self.proto)}: ONNX Runtime fails on `{self.proto.name}`: {located(str(e).strip(), model)}"
            ) from e
        outputs = [np.asarray(o) for o in outputs]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _bind(self, args: tuple, kwargs: dict):
        """``[(input, value or None)]`` in input order, and ``{attribute: value}`` for those given,
        bound as Python binds a call: positions, names, then defaults."""
        parameters = list(self.signature.parameters)
        if len(args) > len(parameters):
            raise TypeError(f"{self.proto.name}() takes {len(parameters)} arguments ({len(args)} given)")
        values: dict = dict(zip(parameters, args))
        for name, value in kwargs.items():
            if name not in parameters:
                raise TypeError(f"{self.proto.name}() got an unexpected keyword argument '{name}'")
            if name in values:
                raise TypeError(f"{self.proto.name}() got multiple values for argument '{name}'")
            values[name] = value
        inputs = []
        for spec in self.signature.inputs:
            value = values.get(spec.name, spec.default if spec.has_default else NO_DEFAULT)
            if value is NO_DEFAULT:
                if not spec.optional:
                    raise TypeError(f"{self.proto.name}() missing required argument '{spec.name}'")
                value = None
            inputs.append((spec.name, value))
        attributes = {}
        for spec in self.signature.attributes:
            value = values.get(spec.name, spec.default if spec.has_default else NO_DEFAULT)
            if value is NO_DEFAULT:
                if not spec.optional:
                    raise TypeError(f"{self.proto.name}() missing required argument '{spec.name}'")
                continue
            if value is not None:
                attributes[spec.name] = _attribute(value, spec.type)
        return inputs, attributes

    def _session(self, given: list, attributes: dict, arrays: dict):
        import onnx
        import onnxruntime

        linked = self._specializer.linked(self.proto, self.signature, given, attributes)
        if linked.functions:
            raise OnnxscError(
                f"{source_of(self.proto)}: `{self.proto.name}` calls functions that cannot be expanded "
                f"({', '.join(f.name for f in linked.functions)})"
            )
        graph_inputs = [
            onnx.helper.make_tensor_value_info(
                name, onnx.helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape)
            )
            for name, array in arrays.items()
        ]
        outputs = [onnx.helper.make_value_info(o.name, onnx.TypeProto()) for o in linked.graph.output]
        graph = onnx.helper.make_graph(list(linked.graph.node), self.proto.name, graph_inputs, outputs)
        model = onnx.helper.make_model(graph, opset_imports=list(linked.opset_import), ir_version=linked.ir_version)
        try:
            return onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]), model
        except Exception as e:
            raise OnnxscError(
                f"{source_of(self.proto)}: ONNX Runtime cannot run `{self.proto.name}` here: {located(str(e), model)}"
            ) from e


def _array(value: Any):
    """A NumPy array of an input value: an array, a torch tensor, or a Python number."""
    import numpy as np

    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return value.detach().cpu().numpy()
    if isinstance(value, bool):
        return np.asarray(value)
    if isinstance(value, int):
        return np.asarray(value, dtype=np.int64)
    if isinstance(value, float):
        return np.asarray(value, dtype=np.float32)
    return np.asarray(value)


def _attribute(value: Any, python_type: str):
    """An attribute value as its type carries it (bools as integers)."""
    if python_type in ("int", "bool"):
        return int(value)
    if python_type == "float":
        return float(value)
    if python_type == "str":
        return str(value)
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if python_type in ("list[int]", "list[bool]"):
        return [int(v) for v in items]
    if python_type == "list[float]":
        return [float(v) for v in items]
    return [str(v) for v in items]


def functions(*paths: PathLike, native_functions=None, deny_warnings: bool = False) -> Functions:
    """Compiles and checks ``.onnxs`` files (or directories of them) and returns their compiled
    functions, each callable on NumPy arrays or torch tensors and run in ONNX Runtime.

    Errors raise :class:`onnxsc.CompileError`; warnings are :class:`onnxsc.OnnxscWarning`s
    (``deny_warnings=True`` makes them errors)."""
    from onnxsc._table import compile_library

    data, model = compile_library(paths, native_functions=native_functions, deny_warnings=deny_warnings)
    return Functions(data, model)
