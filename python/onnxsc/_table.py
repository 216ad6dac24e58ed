"""Building a ``custom_translation_table`` from ``.onnxs`` files or a compiled library.

``onnxsc build`` checks and compiles the sources; each compiled function carries its typed
signature in ``metadata_props["onnxsc.signature"]`` (docs/signature-format.md, read by
``_signature``) and the PyTorch operators it is bound to. Before that, every operator the sources
declare or translate outside native_functions.yaml (custom operators, ``prims``, a library's such
as ``torchvision``, the few ``aten`` names PyTorch registers elsewhere) is looked up in the running
PyTorch, and the registered schemas are passed to the compiler (``--registered``): a declaration
that differs is a located error (E0515), and a translation, scripted or trace-only, is checked
against the registration. Warnings become Python warnings (:class:`OnnxscWarning`), each
honouring the source's ``# noqa`` and ``[tool.onnxsc]`` configuration. Each bound function then
becomes a translation (see ``_translation`` and ``_trace``).
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
from onnxsc._newer import NewerOpset
from onnxsc._translation import Warner, make_translation, source_of
from onnxsc._usage import TableUsage, never_in_a_graph

PathLike = Union[str, "os.PathLike[str]"]

# The library model's list of the custom operators the sources declare (emit::proto).
CUSTOM_OPS_KEY = "onnxsc.custom_ops"
# The library model's list of the functions `build --skip-invalid` left out (onnx::metadata).
LEFT_OUT_KEY = "onnxsc.left_out"

# Namespaces of Python's own functions (the compiler's `binding::PYTHON_NAMESPACES`): the exporter
# keys them by the function itself (`operator.add`), and they have no schema.
_PYTHON_NAMESPACES = ("_operator", "math")

# Namespaces of operators that PyTorch itself registers when torch is imported, besides those of
# libraries below: an operator of theirs that this PyTorch lacks is skipped, as the exporter skips
# it when it reads torchlib.
_TORCH_NAMESPACES = ("aten", "prims")

# Namespaces a library registers when one of its modules is imported (measured with torch 2.15):
# an operator of theirs is left out of the table, as the exporter leaves it out, until it is.
_REGISTERING_MODULES = {
    "quantized_decomposed": "torch.ao.quantization.fx._decomposed",
    "torchvision": "torchvision",
}

# Compiler warnings that only say a binding's schema is unknown (W0504) or outside
# native_functions.yaml (W0506). Here every binding is looked up in the running PyTorch and checked
# against its registration when it has one; when it has none, the table says so itself (W0511,
# or an error for a custom operator), so these would repeat the finding.
_UNKNOWN_SCHEMA_CODES = ("W0504", "W0506")


def translation_table(
    *paths: PathLike,
    native_functions: Optional[PathLike] = None,
    deny_warnings: bool = False,
    skip_invalid: bool = False,
    prefer_newer_opset: bool = False,
) -> dict:
    """Compiles and checks ``.onnxs`` files (or directories of them) and returns
    ``{torch._ops.OpOverload: translation}`` for every function bound with ``@torch_op``.

    ``native_functions`` is a native_functions.yaml to check ``aten::`` bindings against
    instead of the one embedded in onnxsc (torch 2.15's); ``"auto"`` uses the one of the torch
    this interpreter imports. Operators outside it (custom operators, ``prims``, ``torchvision``)
    are checked against their registration with this PyTorch, so register them (import the
    modules that do) before building the table.

    Warnings of ``onnxsc check`` are raised as :class:`OnnxscWarning` (the rendered diagnostic is
    the message), except those the sources suppress (``# noqa: CODE``, ``[tool.onnxsc]`` in
    ``pyproject.toml``); ``deny_warnings=True`` makes them errors.

    ``skip_invalid=True`` builds a table of the translations without errors when others have
    some: each error is raised as an :class:`OnnxscWarning` at its line, and a last warning names
    the translations left out and counts them. ``prefer_newer_opset=True`` lets the exporter's own
    translations for newer opsets (ONNX's ``Gelu`` from 20, ...) stand for an export to such an
    opset instead of an entry of the table (W0510 otherwise).

    Raises :class:`CompileError`, with the errors and a summary, if the sources have errors (and
    ``skip_invalid`` is not set), and :class:`OnnxscError` if a bound custom operator is not
    registered (``torch.library.custom_op``).
    """
    data, model, errors = _compile(paths, native_functions, deny_warnings, skip_invalid)
    table = _table(model, Specializer(data), deny_warnings, skip_invalid, prefer_newer_opset)
    if errors:
        _summarize_left_out(errors, model, len(table))
    return table


def compile_library(
    paths,
    native_functions: Optional[PathLike] = None,
    deny_warnings: bool = False,
    skip_invalid: bool = False,
) -> tuple:
    """Compiles and checks the sources into a library: its bytes and its model. Errors raise
    :class:`CompileError` (with ``skip_invalid``, a library of what compiles is made and each
    error is raised as an :class:`OnnxscWarning`), warnings are raised as :class:`OnnxscWarning`."""
    data, model, errors = _compile(paths, native_functions, deny_warnings, skip_invalid)
    if errors:
        _summarize_left_out(errors, model, None)
    return data, model


def _compile(paths, native_functions, deny_warnings: bool, skip_invalid: bool) -> tuple:
    """The library's bytes and model, and (with ``skip_invalid``) the errors of the functions it
    left out, each already raised as an :class:`OnnxscWarning`."""
    if not paths:
        raise OnnxscError("onnxsc needs at least one .onnxs file or directory")
    args = [os.fspath(p) for p in paths]
    if native_functions is not None:
        args += ["--native-functions", _native_functions_path(native_functions)]
    if deny_warnings:
        args.append("--deny-warnings")
    if skip_invalid:
        args.append("--skip-invalid")
    with tempfile.TemporaryDirectory(prefix="onnxsc-") as tmp:
        out = Path(tmp) / "library.onnx"
        report = _build(args, out)
        registered = _registered_schemas(_load(out))
        if registered:
            schemas = Path(tmp) / "registered.yaml"
            schemas.write_text("".join(f"- func: {s}\n" for s in registered), encoding="utf-8")
            report = _build(args + ["--registered", str(schemas)], out)
        data = out.read_bytes()
    model = _load_bytes(data, "the compiled library")
    report = [d for d in report if d["code"] not in _UNKNOWN_SCHEMA_CODES]
    _raise_warnings(report)
    errors = [d for d in report if d["severity"] == "error"]
    for d in errors:
        _warn_diagnostic(d)
    return data, model, errors


def load_library(path: PathLike, deny_warnings: bool = False, prefer_newer_opset: bool = False) -> dict:
    """The translation table of a library built with ``onnxsc build``; ``deny_warnings=True``
    makes its warnings (at export too) errors. A library that ``build --skip-invalid`` wrote
    says, in a warning, which functions it left out."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise OnnxscError(f"cannot read the library {os.fspath(path)!r}: {e}") from e
    model = _load_bytes(data, repr(os.fspath(path)))
    left_out = _left_out(model)
    if left_out:
        names = ", ".join(f"`{r['name']}` ({r['source']})" for r in left_out)
        message = f"{os.fspath(path)} was built with --skip-invalid and leaves out {len(left_out)} function{'s' if len(left_out) != 1 else ''} for errors: {names}"
        if deny_warnings:
            raise OnnxscError(f"{message}\n(deny_warnings=True makes this warning an error)")
        warnings.warn_explicit(OnnxscWarning(message, "left-out"), OnnxscWarning, os.fspath(path), 0, module="onnxsc")
    return _table(model, Specializer(data), deny_warnings, prefer_newer=prefer_newer_opset)


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
    """Runs ``onnxsc build``; returns its diagnostics (as ``--format json`` writes them), or
    raises :class:`CompileError` on errors unless ``--skip-invalid`` wrote a library of what
    compiles."""
    cmd = [find_onnxsc_bin(), "--color", "never", "build", "--format", "json", *args, "-o", str(out)]
    # A library of an earlier build must not pass for this one's.
    out.unlink(missing_ok=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace")
    if proc.returncode not in (0, 1):
        raise OnnxscError(f"onnxsc failed (exit status {proc.returncode}):\n{proc.stderr.strip()}")
    try:
        diagnostics = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    except json.JSONDecodeError as e:
        raise OnnxscError(f"onnxsc printed diagnostics that are not JSON ({e}):\n{proc.stdout[:2000]}") from None
    if proc.returncode == 1 and not out.exists():
        raise CompileError.of(diagnostics)
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
        if d["severity"] == "warning":
            _warn_diagnostic(d)


def _warn_diagnostic(d: dict) -> None:
    w = OnnxscWarning(d["rendered"].rstrip("\n"), d["code"], d["file"], d["line"], d["column"])
    warnings.warn_explicit(w, OnnxscWarning, d["file"], d["line"], module="onnxsc")


def _summarize_left_out(errors: list, model, entries: Optional[int]) -> None:
    """``skip_invalid``, after each error was raised at its line: the last warning names the
    functions the library left out, where and why, and counts them (and the table's entries)."""
    left_out = _left_out(model)
    lines = [
        f"  {r['source']}: `{r['name']}` ({', '.join(r.get('torch_ops', [])) or 'no operator'}): {r['reason']}"
        for r in left_out
    ]
    made = f"; {entries} entries in the table" if entries is not None else ""
    message = (
        f"onnxsc: {_plural(len(errors), 'error')} (each raised above, at its line); "
        f"{_plural(len(left_out), 'function')} left out (skip_invalid=True){made}:\n" + "\n".join(lines)
    )
    w = OnnxscWarning(message, "left-out", None, 0, 0)
    warnings.warn_explicit(w, OnnxscWarning, "<onnxsc>", 0, module="onnxsc")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _left_out(model) -> list:
    """The records of the functions a library left out for errors (``onnxsc.left_out``)."""
    for entry in model.metadata_props:
        if entry.key == LEFT_OUT_KEY:
            try:
                return list(json.loads(entry.value))
            except ValueError as e:
                raise OnnxscError(f"the library's {LEFT_OUT_KEY} record is not valid: {e}") from None
    return []


def _registered_schemas(model) -> list:
    """The schemas, as this PyTorch registers them, of every operator the library declares or
    translates, scripted or trace-only, outside Python's own functions (those not registered are
    reported when the table is built). The compiler checks a binding against the registration
    when native_functions.yaml does not have it."""
    names = set()
    for entry in model.metadata_props:
        if entry.key == CUSTOM_OPS_KEY:
            names.update(json.loads(entry.value))
    signatures = [signature_of(proto) for proto in model.functions]
    signatures += [signature for _, signature in traced_functions(model)]
    for signature in signatures:
        if signature is not None:
            names.update(op.name for op in signature.torch_ops)
    schemas = []
    for name in sorted(names):
        if name.partition("::")[0] in _PYTHON_NAMESPACES:
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
    return _entries(model, Specializer(library), False, unresolved=unresolved)


def _table(
    model, specializer: Specializer, deny_warnings: bool = False, skip_invalid: bool = False, prefer_newer: bool = False
) -> dict:
    found = _entries(model, specializer, deny_warnings, skip_invalid=skip_invalid, prefer_newer=prefer_newer)
    return {e.overload: e.translation for e in found}


def _entries(
    model,
    specializer: Specializer,
    deny_warnings: bool,
    unresolved: Optional[list] = None,
    skip_invalid: bool = False,
    prefer_newer: bool = False,
) -> list:
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
            # torch registers every custom_translation_table entry for real-valued inputs, and
            # its own complex translations stay in force for complex ones: left out, silently.
            continue
        if not trace_only:
            # A trace records its nodes at the exporter's opset.
            _check_exporter_opset(proto, opset)
        warner = Warner(proto, deny_warnings, signature)
        for op in signature.torch_ops:
            try:
                overload = resolve_overload(op.name)
            except NotInThisTorch as e:
                if unresolved is not None:
                    unresolved.append((op.name, str(e)))
                else:
                    warner.warn(f"{warner.where}: {e}; it is left out of the table, as the exporter leaves it out", code="W0511")
                continue
            except OnnxscError as e:
                if unresolved is not None:
                    unresolved.append((op.name, str(e)))
                    continue
                if not skip_invalid:
                    raise OnnxscError(f"{warner.where}: {e}") from None
                Warner(proto, False).warn(f"{warner.where}: {e}; it is left out of the table (skip_invalid=True)", code="W0511")
                continue
            if overload in bound_by:
                raise OnnxscError(
                    f"{op.name} is translated twice: by {bound_by[overload]} and by "
                    f"{proto.domain}::{proto.name}"
                )
            never = never_in_a_graph(overload)
            if never is not None:
                warner.warn(f"{warner.where}: {never}", code="W0508")
            newer = NewerOpset(overload, warner, prefer_newer)
            if trace_only:
                translation = make_trace_translation(proto, signature, op, specializer, warner.where, usage, newer)
            else:
                translation = make_translation(proto, signature, op, overload, specializer, warner, usage, newer)
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
    ``torch.ops.aten.gelu.default``, as torch names the default overload. Raises
    :class:`NotInThisTorch` for a name the exporter would skip (this PyTorch lacks it, or a
    library that registers it is not imported), :class:`OnnxscError` for an unregistered custom
    operator."""
    import torch

    namespace, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    # The exporter keys Python's own operators by the function itself (`operator.getitem`,
    # `math.ceil`), as its registry does when it reads torchlib.
    if namespace in _PYTHON_NAMESPACES:
        module = importlib.import_module("operator" if namespace == "_operator" else "math")
        function = getattr(module, name, None)
        if function is None:
            raise NotInThisTorch(f"{qualname}: Python's `{module.__name__}` has no `{name}`")
        return function
    packet = getattr(getattr(torch.ops, namespace), name, None) if namespace and name else None
    if packet is None:
        if namespace in _TORCH_NAMESPACES:
            raise NotInThisTorch(f"{qualname} is not an operator of this PyTorch ({torch.__version__})")
        if namespace in _REGISTERING_MODULES:
            module = _REGISTERING_MODULES[namespace]
            raise NotInThisTorch(
                f"{qualname} is not registered with this PyTorch: `{module}` registers the `{namespace}` "
                f"operators when imported; import it before building the table to translate them"
            )
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
        message = f"{namespace}::{name} has no overload {overload!r} in this PyTorch ({torch.__version__}); it has: {known}"
        if namespace in _TORCH_NAMESPACES or namespace in _REGISTERING_MODULES:
            raise NotInThisTorch(message) from None
        raise OnnxscError(message) from None


class NotInThisTorch(OnnxscError):
    """A PyTorch operator name the exporter would skip: one this PyTorch does not have (not an
    operator, an overload it lacks, a name without an overload where the operator has no
    default one), or one of a library that is not imported. torch's exporter skips such a name
    when it reads torchlib (with a log line); the table leaves it out with a warning (W0511)."""
