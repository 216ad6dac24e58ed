"""Building a ``custom_translation_table`` from ``.onnxs`` files or a compiled library.

``onnxsc build`` checks and compiles the sources; each compiled function carries its typed
signature in ``metadata_props["onnxsc.signature"]`` (docs/signature-format.md, read by
``_signature``) and the
PyTorch operators it is bound to. Before that, the custom operators the sources declare or
translate are looked up in the running PyTorch, and their registered schemas are passed to
the compiler (``--registered``): a declaration that differs is a located error (E0515), and a
translation of an undeclared operator is checked against its registration. Warnings become
Python warnings (:class:`OnnxscWarning`). Each bound function then becomes a translation
(see ``_translation``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import tempfile
import warnings
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Optional, Union

from onnxsc._binary import find_onnxsc_bin
from onnxsc._errors import CompileError, OnnxscError, OnnxscWarning
from onnxsc._specialize import Specializer
from onnxsc._signature import signature_of
from onnxsc._trace import make_trace_translation, traced_functions
from onnxsc._translation import Warner, make_translation, source_of
from onnxsc._usage import TableUsage, never_in_a_graph

PathLike = Union[str, "os.PathLike[str]"]

# The library model's list of the custom operators the sources declare (emit::proto).
CUSTOM_OPS_KEY = "onnxsc.custom_ops"

# Namespaces whose operators native_functions.yaml (or Python) defines, not custom ones.
_BUILTIN_NAMESPACES = {"aten", "prims", "_operator", "math"}


def translation_table(
    *paths: PathLike, native_functions: Optional[PathLike] = None, deny_warnings: bool = False
) -> dict:
    """Compiles and checks ``.onnxs`` files (or directories of them) and returns
    ``{torch._ops.OpOverload: translation}`` for every function bound with ``@torch_op``.

    ``native_functions`` is a native_functions.yaml to check ``aten::`` bindings against
    instead of the one embedded in onnxsc (torch 2.15's); ``"auto"`` uses the one of the torch
    this interpreter imports. Custom operators are checked against their registration with
    this PyTorch, so register them before building the table.

    Warnings of ``onnxsc check`` are raised as :class:`OnnxscWarning` (the rendered
    diagnostic is the message); ``deny_warnings=True`` makes them errors.

    Raises :class:`CompileError`, with the rendered diagnostics, if the sources have errors,
    and :class:`OnnxscError` if a bound operator is unknown to torch (e.g. a custom op that
    was not registered with ``torch.library.custom_op``).
    """
    data, model = compile_library(paths, native_functions=native_functions, deny_warnings=deny_warnings)
    return _table(model, Specializer(data), deny_warnings)


def compile_library(paths, native_functions: Optional[PathLike] = None, deny_warnings: bool = False) -> tuple:
    """Compiles and checks the sources into a library: its bytes and its model. Errors raise
    :class:`CompileError`, warnings are raised as :class:`OnnxscWarning`."""
    if not paths:
        raise OnnxscError("onnxsc needs at least one .onnxs file or directory")
    args = [os.fspath(p) for p in paths]
    if native_functions is not None:
        args += ["--native-functions", _native_functions_path(native_functions)]
    if deny_warnings:
        args.append("--deny-warnings")
    with tempfile.TemporaryDirectory(prefix="onnxsc-") as tmp:
        out = Path(tmp) / "library.onnx"
        report = _build(args, out)
        registered = _registered_schemas(_load(out))
        if registered:
            schemas = Path(tmp) / "registered.yaml"
            schemas.write_text("".join(f"- func: {s}\n" for s in registered), encoding="utf-8")
            report = _build(args + ["--registered", str(schemas)], out)
        data = out.read_bytes()
    _raise_warnings(report)
    return data, _load_bytes(data, "the compiled library")


def load_library(path: PathLike, deny_warnings: bool = False) -> dict:
    """The translation table of a library built with ``onnxsc build``; ``deny_warnings=True``
    makes its warnings (at export too) errors."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise OnnxscError(f"cannot read the library {os.fspath(path)!r}: {e}") from e
    return _table(_load_bytes(data, repr(os.fspath(path))), Specializer(data), deny_warnings)


def _native_functions_path(native_functions: PathLike) -> str:
    """``"auto"``: the native_functions.yaml of the torch this interpreter imports (torchgen
    ships it), whatever ``PATH`` or the active environment say."""
    if os.fspath(native_functions) != "auto":
        return os.fspath(native_functions)
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        raise OnnxscError("native_functions='auto' needs PyTorch (its torchgen package) in this Python environment")
    path = Path(spec.origin).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    if not path.is_file():
        raise OnnxscError(f"this PyTorch has no native_functions.yaml at {path}")
    return str(path)


def _build(args: list, out: Path) -> list:
    """Runs ``onnxsc build``; returns its diagnostics (the warnings, as ``--format json``
    writes them) or raises on errors."""
    cmd = [find_onnxsc_bin(), "--color", "never", "build", "--format", "json", *args, "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace")
    if proc.returncode not in (0, 1):
        raise OnnxscError(f"onnxsc failed (exit status {proc.returncode}):\n{proc.stderr.strip()}")
    try:
        diagnostics = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    except json.JSONDecodeError as e:
        raise OnnxscError(f"onnxsc printed diagnostics that are not JSON ({e}):\n{proc.stdout[:2000]}") from None
    if proc.returncode == 1:
        raise CompileError("".join(d["rendered"] for d in diagnostics).rstrip("\n") + "\n")
    return diagnostics


def _load(path: Path):
    return _load_bytes(path.read_bytes(), "the compiled library")


def _load_bytes(data: bytes, what: str):
    import onnx

    try:
        return onnx.load_from_string(data)
    except Exception as e:  # onnx raises DecodeError, ...
        raise OnnxscError(f"cannot read {what}: {e}") from e


def _raise_warnings(diagnostics: list) -> None:
    """Each warning as an :class:`OnnxscWarning` whose message is the rendered diagnostic,
    attributed to its ``.onnxs`` file and line."""
    for d in diagnostics:
        if d["severity"] != "warning":
            continue
        w = OnnxscWarning(d["rendered"].rstrip("\n"), d["code"], d["file"], d["line"], d["column"])
        warnings.warn_explicit(w, OnnxscWarning, d["file"], d["line"], module="onnxsc")


def _registered_schemas(model) -> list:
    """The schemas, as PyTorch registers them, of the custom operators the library declares or
    translates (those not registered are reported when the table is built)."""
    names = set()
    for entry in model.metadata_props:
        if entry.key == CUSTOM_OPS_KEY:
            names.update(json.loads(entry.value))
    for proto in model.functions:
        signature = signature_of(proto)
        if signature is not None:
            names.update(op.name for op in signature.torch_ops)
    schemas = []
    for name in sorted(names):
        namespace = name.partition("::")[0]
        if namespace in _BUILTIN_NAMESPACES:
            continue
        try:
            overload = resolve_overload(name)
        except OnnxscError:
            continue
        schema = getattr(overload, "_schema", None)
        if schema is not None:
            schemas.append(str(schema))
    return schemas


@dataclass(frozen=True)
class Entry:
    """One entry of a translation table: the operator overload, the compiled function that
    translates it, and the translation the exporter calls."""

    overload: Any
    qualname: str
    proto: Any
    signature: Any
    translation: Any


def entries(model, library: bytes, unresolved: Optional[list] = None) -> list:
    """The entries of the translation table of a compiled library, in its functions' order.
    With ``unresolved``, an operator PyTorch does not know is left out and listed there, as
    ``(qualname, why)``, instead of raising."""
    return _entries(model, Specializer(library), False, unresolved)


def _table(model, specializer: Specializer, deny_warnings: bool = False) -> dict:
    return {e.overload: e.translation for e in _entries(model, specializer, deny_warnings)}


def _entries(model, specializer: Specializer, deny_warnings: bool, unresolved: Optional[list] = None) -> list:
    found: list = []
    bound_by: dict = {}
    opset = _exporter_opset()
    usage = TableUsage()
    compiled = [(proto, signature_of(proto), False) for proto in model.functions]
    traced = [(proto, signature, True) for proto, signature in traced_functions(model)]
    for proto, signature, trace_only in compiled + traced:
        if signature is None or not signature.torch_ops:
            continue
        if signature.complex:
            # torch registers every custom_translation_table entry for real-valued inputs.
            message = (
                f"{source_of(proto)}: `{proto.name}` translates complex inputs (complex=True), which a "
                f"custom_translation_table cannot register; it is left out of the table"
            )
            Warner(proto, deny_warnings).warn(message, code="")
            continue
        if not trace_only:
            # A trace records its nodes at the exporter's opset.
            _check_exporter_opset(proto, opset)
        for op in signature.torch_ops:
            try:
                overload = resolve_overload(op.name)
            except NotInThisTorch as e:
                if unresolved is not None:
                    unresolved.append((op.name, str(e)))
                else:
                    warner = Warner(proto, deny_warnings)
                    warner.warn(f"{warner.where}: {e}; it is left out of the table, as the exporter skips it", code="W0506")
                continue
            except OnnxscError as e:
                if unresolved is None:
                    raise
                unresolved.append((op.name, str(e)))
                continue
            if overload in bound_by:
                raise OnnxscError(
                    f"{op.name} is translated twice: by {bound_by[overload]} and by "
                    f"{proto.domain}::{proto.name}"
                )
            warner = Warner(proto, deny_warnings)
            never = never_in_a_graph(overload)
            if never is not None:
                warner.warn(f"{warner.where}: {never}", code="unused")
            if trace_only:
                translation = make_trace_translation(proto, signature, op, specializer, warner.where, usage)
            else:
                translation = make_translation(proto, signature, op, overload, specializer, warner, usage)
            usage.add(overload, warner, warned=never is not None)
            bound_by[overload] = f"{proto.domain}::{proto.name}"
            found.append(Entry(overload, op.name, proto, signature, translation))
    return found


def _exporter_opset() -> Optional[int]:
    """The ONNX opset this torch's exporter builds the graph at (and inlines translations at)."""
    try:
        from torch.onnx._internal.exporter import _constants
    except ImportError:
        return None
    return getattr(_constants, "TORCHLIB_OPSET", None)


def _check_exporter_opset(proto, exporter_opset: Optional[int]) -> None:
    """onnxsc checks translations against torch 2.15's exporter opset (E0513); another torch
    may build at another one, where inlining the translation would fail."""
    versions = {o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")}
    if exporter_opset is None or not versions or versions == {exporter_opset}:
        return
    raise OnnxscError(
        f"{source_of(proto)}: translation `{proto.name}` uses ONNX opset {min(versions)}, but this "
        f"PyTorch's exporter builds translations at opset {exporter_opset} and would refuse to "
        f"inline it: import `opset{exporter_opset}`"
    )


def resolve_overload(qualname: str):
    """``aten::add.Tensor`` -> ``torch.ops.aten.add.Tensor``; ``aten::gelu`` (no overload) ->
    ``torch.ops.aten.gelu.default``, as torch names the default overload."""
    import torch

    namespace, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    # The exporter keys Python's own operators by the function itself (`operator.getitem`,
    # `math.ceil`), as its registry does when it reads torchlib.
    if namespace in ("_operator", "math"):
        module = importlib.import_module("operator" if namespace == "_operator" else "math")
        function = getattr(module, name, None)
        if function is None:
            raise NotInThisTorch(f"{qualname}: Python's `{module.__name__}` has no `{name}`")
        return function
    packet = getattr(getattr(torch.ops, namespace), name, None) if namespace and name else None
    if packet is None:
        if namespace == "aten":
            raise NotInThisTorch(f"{qualname} is not an operator of this PyTorch ({torch.__version__})")
        raise OnnxscError(
            f"{qualname} is not registered with PyTorch: register the custom operator (for "
            f"example with @torch.library.custom_op({namespace + '::' + name!r}, mutates_args=())) "
            f"before building the translation table"
        )
    known = ", ".join(sorted(packet.overloads()))
    if not overload and "default" not in packet.overloads():
        # torch names the default overload "default" (its schema's overload name is "").
        raise NotInThisTorch(
            f"{qualname} names no overload, and {namespace}::{name} has no default one in this PyTorch "
            f"({torch.__version__}); it has: {known}"
        )
    try:
        return getattr(packet, overload or "default")
    except AttributeError:
        raise OnnxscError(f"{namespace}::{name} has no overload {overload!r}; it has: {known}") from None


class NotInThisTorch(OnnxscError):
    """A PyTorch operator name the running PyTorch does not have: not an operator, or a name
    without an overload where the operator has no default one. torch's exporter skips such a
    name when it reads torchlib (with a log line); the table skips it with a warning."""
