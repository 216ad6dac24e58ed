"""Shared helpers for the onnxsc Python test suites.

Everything here uses the real tools (onnx, onnxruntime, onnxscript); nothing is mocked.

* running the compiler binary (``onnxsc build ...``) and loading what it wrote;
* compiling the same ``.onnxs`` source with onnxscript (the reference converter);
* reading a function's typed signature, from its Python source or from the
  ``onnxsc.signature`` metadata entry the compiler writes;
* wrapping a FunctionProto in a one-node model and running it in ONNX Runtime;
* a canonical, name-insensitive view of a FunctionProto for structural comparisons.
"""

from __future__ import annotations

import ast
import collections.abc
import contextlib
import importlib.util
import inspect
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import typing
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = REPO_ROOT / "examples"
DIFFERENTIAL_DIR = Path(__file__).resolve().parent / "differential"

SIGNATURE_KEY = "onnxsc.signature"

# Element types by the names used in test specs (numpy spelling).
DTYPES: dict[str, tuple[Any, int]] = {
    "float32": (np.float32, TensorProto.FLOAT),
    "float64": (np.float64, TensorProto.DOUBLE),
    "float16": (np.float16, TensorProto.FLOAT16),
    "int8": (np.int8, TensorProto.INT8),
    "int16": (np.int16, TensorProto.INT16),
    "int32": (np.int32, TensorProto.INT32),
    "int64": (np.int64, TensorProto.INT64),
    "uint8": (np.uint8, TensorProto.UINT8),
    "bool": (np.bool_, TensorProto.BOOL),
    "string": (np.object_, TensorProto.STRING),
    # ml_dtypes' types: fed to ONNX Runtime as OrtValues (see run_model).
    "bfloat16": (ml_dtypes.bfloat16, TensorProto.BFLOAT16),
    "float8e4m3fn": (ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN),
    "float8e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E4M3FNUZ),
    "float8e5m2": (ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2),
    "float8e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, TensorProto.FLOAT8E5M2FNUZ),
}
_ML_DTYPES = {np.dtype(t): code for name, (t, code) in DTYPES.items() if name in {
    "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"}}


def elem_type_of_array(arr: np.ndarray) -> int:
    """ONNX element type of a numpy array (string arrays are object/str arrays)."""
    if arr.dtype == np.object_ or arr.dtype.kind in ("U", "S"):
        return TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(arr.dtype)


def elem_type_of_name(name: str) -> int:
    try:
        return DTYPES[name][1]
    except KeyError:
        raise ValueError(f"unknown dtype name {name!r}; known: {sorted(DTYPES)}") from None


# --------------------------------------------------------------------------------------
# Running the compiler
# --------------------------------------------------------------------------------------


def default_onnxsc_binary() -> Path:
    env = os.environ.get("ONNXSC_BIN")
    if env:
        return Path(env)
    exe = "onnxsc.exe" if sys.platform == "win32" else "onnxsc"
    return REPO_ROOT / "target" / "debug" / exe


@dataclass
class BuildResult:
    """The outcome of one ``onnxsc build`` run."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    output: Path
    model: onnx.ModelProto | None

    def describe(self) -> str:
        return (
            f"command: {' '.join(self.args)}\nexit code: {self.returncode}\n"
            f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"
        )

    def require_model(self) -> onnx.ModelProto:
        """The built model, or an assertion error that shows what the compiler said."""
        assert self.returncode == 0, "onnxsc build failed\n" + self.describe()
        assert self.model is not None, "onnxsc build exited 0 but wrote no model\n" + self.describe()
        return self.model


class Onnxsc:
    """Runs the onnxsc binary."""

    def __init__(self, binary: Path, timeout: float = 300.0):
        self.binary = Path(binary)
        self.timeout = timeout

    def run(self, *args: str | os.PathLike) -> subprocess.CompletedProcess:
        cmd = [str(self.binary), *map(str, args)]
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=self.timeout, check=False
        )

    def build(self, paths: Sequence[str | os.PathLike], out: Path, *extra: str) -> BuildResult:
        out = Path(out)
        if out.exists():
            out.unlink()
        args = ["build", *map(str, paths), "-o", str(out), *extra]
        proc = self.run(*args)
        model = None
        if proc.returncode == 0 and out.exists():
            model = onnx.load(str(out))
        return BuildResult(
            [str(self.binary), *args], proc.returncode, proc.stdout, proc.stderr, out, model
        )

    def emit_text(self, path: str | os.PathLike) -> subprocess.CompletedProcess:
        return self.run("build", str(path), "--emit", "text")


def functions_by_name(model: onnx.ModelProto) -> dict[str, onnx.FunctionProto]:
    result: dict[str, onnx.FunctionProto] = {}
    for f in model.functions:
        assert f.name not in result, f"two functions named {f.name!r} in the built library"
        result[f.name] = f
    return result


# --------------------------------------------------------------------------------------
# Sources: top-level functions, and compiling with onnxscript
# --------------------------------------------------------------------------------------


def top_level_functions(path: Path) -> list[str]:
    """Names of the top-level ``def``s of a ``.onnxs`` file, in source order."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]


def import_as_module(path: Path, workdir: Path, prefix: str = "onnxs_src_") -> Any:
    """Copy a ``.onnxs`` file into ``workdir`` as a ``.py`` module and import it.

    The module gets a unique, prefixed name so that file names such as ``operator``
    cannot shadow real modules. Decorated functions are converted by onnxscript at
    import time.
    """
    path = Path(path)
    safe = "".join(c if c.isalnum() else "_" for c in path.stem)
    modname = f"{prefix}{safe}_{zlib.crc32(str(path.resolve()).encode()):08x}"
    workdir.mkdir(parents=True, exist_ok=True)
    target = workdir / f"{modname}.py"
    shutil.copyfile(path, target)
    spec = importlib.util.spec_from_file_location(modname, target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module  # inspect.getmodule() (used by onnxscript) needs this
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[modname]
        raise
    return module


@dataclass
class ReferenceFunction:
    """A function compiled by onnxscript."""

    name: str
    python_function: Any  # the undecorated Python function
    onnx_function: Any  # onnxscript.OnnxFunction
    proto: onnx.FunctionProto
    repairs: list[str]  # what was fixed in onnxscript's output (see repair_opset_imports)


def module_opsets(module: Any) -> dict[str, set[int]]:
    """domain -> versions of the onnxscript Opset objects a module defines or imports."""
    from onnxscript import values

    found: dict[str, set[int]] = {}
    for value in vars(module).values():
        if isinstance(value, values.Opset):
            found.setdefault(value.domain, set()).add(value.version)
    return found


def repair_opset_imports(fp: onnx.FunctionProto, opsets: Mapping[str, set[int]]) -> list[str]:
    """Add the opset imports onnxscript forgets.

    onnxscript 0.7.2 builds a function's opset_import from the ops of its top-level body
    only: a domain used only inside an If branch is missing, and ONNX Runtime rejects the
    function ("No opset registered for domain ..."). The version is the one of the
    module's Opset object for that domain. Returns a description of each repair.
    """
    imported = {o.domain for o in fp.opset_import}
    repairs = []
    for domain in sorted(used_domains(fp) - imported):
        versions = opsets.get(domain, set())
        assert len(versions) == 1, (
            f"{fp.name}: domain {domain!r} is used but not imported, and the module does "
            f"not declare exactly one opset for it ({sorted(versions)})"
        )
        (version,) = versions
        fp.opset_import.append(helper.make_opsetid(domain, version))
        repairs.append(f"added opset_import {domain!r}:{version} (used only in a subgraph)")
    return repairs


def compile_with_onnxscript(path: Path, workdir: Path) -> list[ReferenceFunction]:
    """Compile every top-level function of a ``.onnxs`` file with onnxscript.

    Decorated functions are already ``OnnxFunction``s after import; undecorated ones are
    converted here with ``onnxscript.script()`` (no opset: domain "this", like
    ``@script()``). Known onnxscript faults are repaired (``repair_opset_imports``).
    """
    import onnxscript  # imported lazily: only the differential suite needs it

    module = import_as_module(path, workdir)
    opsets = module_opsets(module)
    result = []
    for name in top_level_functions(path):
        obj = getattr(module, name)
        if isinstance(obj, onnxscript.OnnxFunction):
            fn = obj
        else:
            assert inspect.isfunction(obj), f"{path}: {name} is neither a function nor an OnnxFunction"
            fn = onnxscript.script()(obj)
        proto = fn.to_function_proto()
        repairs = repair_opset_imports(proto, opsets)
        result.append(ReferenceFunction(name, fn.function, fn, proto, repairs))
    return result


# --------------------------------------------------------------------------------------
# Signatures
# --------------------------------------------------------------------------------------

_ATTR_SCALARS = {float: "float", int: "int", str: "str", bool: "bool"}
_SEQUENCE_ORIGINS = (list, collections.abc.Sequence, typing.Sequence, typing.List)


def attribute_spelling(annotation: Any) -> str | None:
    """The Python spelling of an attribute annotation, or None if it declares an input.

    float/int/str/bool -> "float"/"int"/"str"/"bool"; list[int], List[int], Sequence[int]
    -> "list[int]" (same for float and str); Optional[X] -> spelling of X. Anything else
    (no annotation, tensor types, unions of tensor types, TypeVars) is an input.
    """
    if annotation is inspect.Parameter.empty:
        return None
    if annotation in _ATTR_SCALARS:
        return _ATTR_SCALARS[annotation]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in _SEQUENCE_ORIGINS and len(args) == 1 and args[0] in _ATTR_SCALARS:
        return f"list[{_ATTR_SCALARS[args[0]]}]"
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        return attribute_spelling(inner)
    return None


def _tensor_type_name(annotation: Any) -> str | None:
    """'FLOAT' for FLOAT, FLOAT[...], FLOAT["N", 3]; None if not a plain tensor type."""
    from onnxscript import onnx_types

    if isinstance(annotation, type) and issubclass(annotation, onnx_types.TensorType):
        if annotation is onnx_types.TensorType:
            return None
        return annotation.dtype and onnx.helper.tensor_dtype_to_string(annotation.dtype).split(".")[-1]
    return None


@dataclass
class AttrSig:
    name: str
    type: str
    has_default: bool
    default: Any = None


@dataclass
class Signature:
    """A function's typed parameter list, as written in its Python source."""

    inputs: list[tuple[str, Any]]  # (name, annotation or inspect.Parameter.empty)
    attributes: list[AttrSig]
    return_annotation: Any

    def attribute_types(self) -> dict[str, str]:
        return {a.name: a.type for a in self.attributes}

    def defaults(self) -> dict[str, Any]:
        return {a.name: a.default for a in self.attributes if a.has_default}


def python_signature(pyfun: Any) -> Signature:
    sig = inspect.signature(pyfun)
    inputs: list[tuple[str, Any]] = []
    attrs: list[AttrSig] = []
    for p in sig.parameters.values():
        spelling = attribute_spelling(p.annotation)
        if spelling is None:
            inputs.append((p.name, p.annotation))
        else:
            has_default = p.default is not inspect.Parameter.empty
            default = p.default if has_default else None
            if isinstance(default, tuple):
                default = list(default)
            attrs.append(AttrSig(p.name, spelling, has_default, default))
    return Signature(inputs, attrs, sig.return_annotation)


def expected_input_type(annotation: Any) -> tuple[bool, str | None]:
    """(strict, type) for the signature JSON: unannotated -> (True, None); a bare tensor
    type such as ``FLOAT`` -> (True, "FLOAT"); other annotations (shaped tensor types,
    TypeVars, unions) -> (False, None), meaning only "not null" is required."""
    if annotation is inspect.Parameter.empty:
        return True, None
    name = _tensor_type_name(annotation)
    if name is not None and getattr(annotation, "shape", None) is None:
        return True, name
    return False, None


_AST_SCALARS = {"float", "int", "str", "bool"}
_AST_SEQUENCES = {"list", "List", "Sequence"}


def _ast_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # typing.Sequence, collections.abc.Sequence
        return node.attr
    return None


def ast_attribute_spelling(annotation: ast.AST | None) -> str | None:
    """Like :func:`attribute_spelling`, from the annotation's syntax (no import needed)."""
    if annotation is None:
        return None
    name = _ast_name(annotation)
    if name in _AST_SCALARS:
        return name
    if isinstance(annotation, ast.Subscript):
        outer = _ast_name(annotation.value)
        inner = _ast_name(annotation.slice)
        if outer in _AST_SEQUENCES and inner in _AST_SCALARS:
            return f"list[{inner}]"
        if outer == "Optional":
            return ast_attribute_spelling(annotation.slice)
    return None


def ast_signature(path: Path, function: str) -> tuple[list[str], dict[str, str]]:
    """(input names, {attribute name: spelling}) of a top-level function, read from the
    source's syntax."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            inputs, attrs = [], {}
            for arg in node.args.args:
                spelling = ast_attribute_spelling(arg.annotation)
                if spelling is None:
                    inputs.append(arg.arg)
                else:
                    attrs[arg.arg] = spelling
            return inputs, attrs
    raise KeyError(f"{path}: no top-level function {function!r}")


def ast_defaults(path: Path, function: str) -> dict[str, Any]:
    """{parameter: default value} of a top-level function, for literal defaults."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            args = node.args.args
            defaults = node.args.defaults
            result = {}
            for arg, default in zip(args[len(args) - len(defaults):], defaults):
                value = ast.literal_eval(default)
                result[arg.arg] = list(value) if isinstance(value, tuple) else value
            return result
    raise KeyError(f"{path}: no top-level function {function!r}")


def same_default(expected: Any, actual: Any, spelling: str) -> bool:
    """Whether a signature-JSON default equals the source's default for an attribute of
    the given type (floats compared as float32, bools as JSON booleans)."""
    if spelling == "float":
        return (
            isinstance(actual, (int, float))
            and not isinstance(actual, bool)
            and np.float32(actual) == np.float32(expected)
        )
    if spelling == "list[float]":
        return isinstance(actual, list) and [np.float32(a) for a in actual] == [
            np.float32(e) for e in expected
        ]
    if spelling == "bool":
        return isinstance(actual, bool) and actual == bool(expected)
    if spelling == "list[int]":
        return isinstance(actual, list) and actual == list(expected)
    return actual == expected and type(actual) is type(expected)


def ast_expected_domain(path: Path, function: str) -> str | None:
    """The domain a function should get, read from the source's syntax: the domain of
    the Opset given to ``@script(opset)`` / ``@onnxscript.script(opset)`` when that opset
    is a module-level ``NAME = ...Opset("domain", version)`` (or ``domain=...``), "this"
    for ``@script()`` and for undecorated functions, torchlib's domain for ``@torch_op``;
    None if it cannot be told."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    opsets: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and _ast_name(node.value.func) == "Opset"
        ):
            call = node.value
            domain = None
            if call.args and isinstance(call.args[0], ast.Constant):
                domain = call.args[0].value
            for kw in call.keywords:
                if kw.arg == "domain" and isinstance(kw.value, ast.Constant):
                    domain = kw.value.value
            if isinstance(domain, str):
                opsets[node.targets[0].id] = domain
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and _ast_name(deco.func) == "script":
                    first = deco.args[0] if deco.args else None
                    for kw in deco.keywords:
                        if kw.arg == "opset":
                            first = kw.value
                    if first is None:
                        return "this"
                    if isinstance(first, ast.Name):
                        return opsets.get(first.id)
                    return None
            for deco in node.decorator_list:
                # torchlib's decorator scripts into torchlib's own domain.
                if isinstance(deco, ast.Call) and _ast_name(deco.func) == "torch_op":
                    return "pkg.onnxscript.torch_lib"
            return "this" if not node.decorator_list else None
    raise KeyError(f"{path}: no top-level function {function!r}")


def metadata_signature(fp: onnx.FunctionProto) -> dict | None:
    """The compiler's ``onnxsc.signature`` metadata entry, parsed, or None if absent."""
    for entry in fp.metadata_props:
        if entry.key == SIGNATURE_KEY:
            return json.loads(entry.value)
    return None


# --------------------------------------------------------------------------------------
# Wrapping a function in a model, and running it
# --------------------------------------------------------------------------------------


def make_attribute(name: str, value: Any, spelling: str | None = None) -> onnx.AttributeProto:
    """An AttributeProto for a call site; the type comes from ``spelling`` when given
    (a Python spelling as in the signature), else from the value."""
    kinds = {
        "float": onnx.AttributeProto.FLOAT,
        "int": onnx.AttributeProto.INT,
        "bool": onnx.AttributeProto.INT,
        "str": onnx.AttributeProto.STRING,
        "list[int]": onnx.AttributeProto.INTS,
        "list[float]": onnx.AttributeProto.FLOATS,
        "list[str]": onnx.AttributeProto.STRINGS,
    }
    if spelling is None:
        return helper.make_attribute(name, value)
    kind = kinds[spelling]
    if kind == onnx.AttributeProto.FLOAT:
        value = float(value)
    elif kind == onnx.AttributeProto.INT:
        value = int(value)
    elif kind == onnx.AttributeProto.FLOATS:
        value = [float(v) for v in value]
    elif kind == onnx.AttributeProto.INTS:
        value = [int(v) for v in value]
    return helper.make_attribute(name, value, attr_type=kind)


def value_info(name: str, elem_type: int, shape: Sequence[int | str | None] | None):
    """A tensor ValueInfoProto; ``shape=None`` leaves the shape out entirely (ORT accepts
    that for outputs, onnx.checker does not)."""
    if shape is None:
        vi = onnx.ValueInfoProto()
        vi.name = name
        vi.type.tensor_type.elem_type = elem_type
        return vi
    return helper.make_tensor_value_info(name, elem_type, list(shape))


def model_ir_version(opsets: Mapping[str, int]) -> int:
    """IR 10 unless the ai.onnx version needs more (IR 10 is what function metadata_props
    need; opset 23 needs 11, 24 needs 12, ...)."""
    ids = [helper.make_opsetid(d, v) for d, v in opsets.items()]
    return max(10, helper.find_min_ir_version_for(ids, ignore_unknown=True))


def model_with_functions(graph: onnx.GraphProto, functions: Sequence[onnx.FunctionProto],
                         producer: str, default_opsets: Mapping[str, int] | None = None) -> onnx.ModelProto:
    """A model of ``graph`` carrying ``functions``, importing what they import (the highest
    version of each domain) and each function's own domain (version 1)."""
    opsets: dict[str, int] = {}
    for f in functions:
        for imp in f.opset_import:
            opsets[imp.domain] = max(opsets.get(imp.domain, 0), imp.version)
    for f in functions:
        opsets.setdefault(f.domain, 1)
    for domain, version in (default_opsets or {}).items():
        opsets.setdefault(domain, version)
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid(d, v) for d, v in sorted(opsets.items())],
        functions=functions,
        ir_version=model_ir_version(opsets),
        producer_name=producer,
    )


def wrap_function(
    fp: onnx.FunctionProto,
    inputs: Sequence[tuple[str, int, Sequence[int | str | None] | None]],
    outputs: Sequence[tuple[str, int, Sequence[int | str | None] | None]],
    attrs: Mapping[str, Any],
    attr_types: Mapping[str, str] | None = None,
) -> onnx.ModelProto:
    """A model whose graph is one call of ``fp``.

    ``inputs``/``outputs``: (name, element type, shape or None) of the graph inputs and
    outputs, passed positionally to the call. ``attrs``: the call site's attributes (an
    attribute left out makes the function's default apply). ``attr_types``: the Python
    spelling of each attribute's type (float, int, bool, str, list[int], ...).
    """
    attr_types = attr_types or {}
    node = helper.make_node(
        fp.name,
        [name for name, _, _ in inputs],
        [name for name, _, _ in outputs],
        domain=fp.domain,
    )
    for name, value in attrs.items():
        node.attribute.append(make_attribute(name, value, attr_types.get(name)))
    graph = helper.make_graph(
        [node],
        f"call_{fp.name}",
        [value_info(*i) for i in inputs],
        [value_info(*o) for o in outputs],
    )
    opsets: dict[str, int] = {}
    for imp in fp.opset_import:
        opsets[imp.domain] = imp.version
    opsets.setdefault(fp.domain, 1)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
        functions=[fp],
        ir_version=model_ir_version(opsets),
        producer_name="onnxsc-tests",
    )
    return model


class _Deadlines:
    """One thread that stops the ONNX Runtime runs that outlive their time limit. A thread
    started per run (`threading.Timer`) costs about as much as running a small model; this
    thread sleeps until the earliest deadline, and is woken only when a run's deadline comes
    before the time it will wake anyway."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._runs: dict[int, tuple[float, Any]] = {}
        self._ids = itertools.count()
        self._wakes_at: float | None = None  # None: asleep until woken
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def watch(self, run_options: Any, seconds: float):
        """Sets `run_options.terminate` once `seconds` have passed, unless the `with` block has
        ended."""
        deadline = time.monotonic() + seconds
        with self._changed:
            key = next(self._ids)
            self._runs[key] = (deadline, run_options)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="onnxruntime-deadlines", daemon=True)
                self._thread.start()
            elif self._wakes_at is None or deadline < self._wakes_at:
                self._changed.notify()
        try:
            yield
        finally:
            with self._changed:
                self._runs.pop(key, None)

    def _watch(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                for key, (deadline, run_options) in list(self._runs.items()):
                    if deadline <= now:
                        run_options.terminate = True
                        del self._runs[key]
                self._wakes_at = min((d for d, _ in self._runs.values()), default=None)
                self._changed.wait(None if self._wakes_at is None else self._wakes_at - now)


_DEADLINES = _Deadlines()


def run_model(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], seconds: float | None = None) -> list[np.ndarray]:
    """Run a model on ONNX Runtime's CPU provider, stopped after ``seconds`` if given.

    Graph optimisations are disabled and one thread is used, so that every node runs as
    written (no fusion, no constant folding, reductions in a fixed order): two models
    that compute the same nodes give bit-identical results.
    """
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(
        model.SerializeToString(), sess_options=opts, providers=["CPUExecutionProvider"]
    )
    if not any(isinstance(v, np.ndarray) and v.dtype in _ML_DTYPES for v in feeds.values()):
        if seconds is None:
            return sess.run(None, dict(feeds))
        run_options = ort.RunOptions()
        with _DEADLINES.watch(run_options, seconds):
            return sess.run(None, dict(feeds), run_options)
    # ONNX Runtime's Python binding takes ml_dtypes arrays only as OrtValues of their bytes;
    # outputs of those types come back as their bytes (uint8 or uint16 codes).
    values = {
        name: ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            v.view(np.uint8 if v.dtype.itemsize == 1 else np.uint16), _ML_DTYPES[v.dtype]
        )
        if isinstance(v, np.ndarray) and v.dtype in _ML_DTYPES
        else ort.OrtValue.ortvalue_from_numpy(np.asarray(v))
        for name, v in feeds.items()
    }
    return [v.numpy() for v in sess.run_with_ort_values(None, values)]


# --------------------------------------------------------------------------------------
# Canonical form of a FunctionProto (for structural comparisons)
# --------------------------------------------------------------------------------------


def _canon_tensor(t: onnx.TensorProto):
    arr = numpy_helper.to_array(t)
    values = arr.tolist() if arr.dtype != np.object_ else [
        v.decode() if isinstance(v, bytes) else v for v in arr.ravel().tolist()
    ]
    return ("tensor", t.data_type, tuple(t.dims), repr(values))


def canon_attribute(a: onnx.AttributeProto):
    """An attribute as a comparable tuple (type, value or reference), ignoring proto2
    field presence and tensor encodings (raw_data vs typed fields)."""
    if a.ref_attr_name:
        return (a.name, a.type, "@" + a.ref_attr_name)
    t = a.type
    A = onnx.AttributeProto
    if t == A.FLOAT:
        value: Any = float(np.float32(a.f))
    elif t == A.INT:
        value = a.i
    elif t == A.STRING:
        value = a.s
    elif t == A.FLOATS:
        value = tuple(float(np.float32(v)) for v in a.floats)
    elif t == A.INTS:
        value = tuple(a.ints)
    elif t == A.STRINGS:
        value = tuple(a.strings)
    elif t == A.TENSOR:
        value = _canon_tensor(a.t)
    elif t == A.GRAPH:
        value = canon_graph(a.g)
    elif t == A.TENSORS:
        value = tuple(_canon_tensor(x) for x in a.tensors)
    elif t == A.GRAPHS:
        value = tuple(canon_graph(g) for g in a.graphs)
    else:
        value = a.SerializeToString()
    return (a.name, t, value)


def canon_node(n: onnx.NodeProto):
    return (
        n.domain or "",
        n.op_type,
        tuple(n.input),
        tuple(n.output),
        tuple(sorted((canon_attribute(a) for a in n.attribute), key=lambda x: x[0])),
    )


def canon_graph(g: onnx.GraphProto):
    return (
        tuple(i.name for i in g.input),
        tuple(o.name for o in g.output),
        tuple(canon_node(n) for n in g.node),
    )


def canon_function(fp: onnx.FunctionProto):
    """Everything the textual syntax can express, in comparable form (node names and
    doc strings are left out)."""
    return {
        "name": fp.name,
        "domain": fp.domain,
        "opset_import": tuple(sorted((o.domain, o.version) for o in fp.opset_import)),
        "input": tuple(fp.input),
        "output": tuple(fp.output),
        "attribute": tuple(fp.attribute),
        "attribute_proto": tuple(canon_attribute(a) for a in fp.attribute_proto),
        "node": tuple(canon_node(n) for n in fp.node),
    }


def iter_nodes(nodes: Iterable[onnx.NodeProto]) -> Iterable[onnx.NodeProto]:
    """All nodes, including those inside subgraphs (If/Loop/Scan bodies)."""
    for n in nodes:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from iter_nodes(a.g.node)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    yield from iter_nodes(g.node)


def used_domains(fp: onnx.FunctionProto) -> set[str]:
    return {n.domain or "" for n in iter_nodes(fp.node)}


def attribute_value(a: onnx.AttributeProto) -> Any:
    """Python value of an attribute_proto default (floats rounded to float32)."""
    v = helper.get_attribute_value(a)
    if a.type == onnx.AttributeProto.FLOAT:
        return float(np.float32(v))
    if a.type == onnx.AttributeProto.FLOATS:
        return [float(np.float32(x)) for x in v]
    if a.type == onnx.AttributeProto.STRING:
        return v.decode()
    if a.type == onnx.AttributeProto.STRINGS:
        return [x.decode() for x in v]
    if a.type == onnx.AttributeProto.INTS:
        return list(v)
    return v


def seed_for(*parts: str) -> int:
    return zlib.crc32("::".join(parts).encode())


def assert_same_output(actual: Any, expected: Any, msg: str, tol: Mapping | None, *, bits: bool = False) -> None:
    """One output of onnxsc's model against onnxscript's: same dtype and shape, then equal
    values (within ``tol``'s rtol/atol when given). ``bits`` also compares the bytes (signed
    zeros, NaN payloads)."""
    assert actual.dtype == expected.dtype, f"{msg}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{msg}: shape {actual.shape} != {expected.shape}"
    if tol:
        np.testing.assert_allclose(actual, expected, rtol=tol.get("rtol", 0), atol=tol.get("atol", 0), err_msg=msg)
        return
    np.testing.assert_array_equal(actual, expected, err_msg=msg, strict=True)
    if bits:
        assert actual.tobytes() == expected.tobytes(), (
            f"{msg}: equal values but different bits\nonnxsc:     {actual!r}\nonnxscript: {expected!r}"
        )


def custom_op(qualname: str, implementation, fake):
    """The ``OpOverload`` of a custom PyTorch operator, registered with
    ``torch.library.custom_op`` (schema inferred from ``implementation``) and ``fake`` unless
    this process has done so already."""
    import torch

    namespace, name = qualname.split("::")
    packet = getattr(getattr(torch.ops, namespace), name, None)
    if packet is None:
        torch.library.custom_op(qualname, mutates_args=())(implementation).register_fake(fake)
        packet = getattr(getattr(torch.ops, namespace), name)
    return packet.default


def one_call(f: onnx.FunctionProto, given: list, attributes: dict, signature) -> onnx.ModelProto:
    """The model of one call of ``f`` as the server builds it for a call request
    (docs/exporter.md): one node giving the inputs ``given`` and the ``attributes``, outputs
    ``out0``..., the function's domain imported first, then its body's imports."""
    from onnxsc._signature import ATTRIBUTE_PROTO_TYPES

    actuals = [name if name in given else "" for name in f.input]
    while actuals and not actuals[-1]:
        actuals.pop()
    outputs = [f"out{k}" for k in range(len(f.output))]
    node = onnx.helper.make_node(f.name, actuals, outputs, domain=f.domain)
    types = {a.name: a.type for a in signature.attributes}
    for name, value in attributes.items():
        node.attribute.append(onnx.helper.make_attribute(name, value, attr_type=ATTRIBUTE_PROTO_TYPES[types[name]]))
    tensor = onnx.helper.make_tensor_type_proto(onnx.TensorProto.UNDEFINED, None)
    tensor.tensor_type.shape.SetInParent()
    graph = onnx.helper.make_graph(
        [node],
        "call",
        [onnx.helper.make_value_info(n, tensor) for n in given],
        [onnx.helper.make_value_info(n, tensor) for n in outputs],
    )
    imports = {f.domain: 1}
    for o in f.opset_import:
        imports.setdefault(o.domain, o.version)
    opsets = [onnx.helper.make_opsetid(d, v) for d, v in imports.items()]
    return onnx.helper.make_model(graph, opset_imports=opsets, ir_version=10)
