"""The scripted torchlib translations of the installed onnxscript, as ``.onnxs`` modules.

onnxscript ships PyTorch's ATen-to-ONNX translations in
``onnxscript/function_libs/torch_lib/ops/*.py``. Each is a function decorated with
``@torch_op("aten::name", ...)``; the *scripted* ones (no ``trace_only=True``) are compiled
by onnxscript's converter, so they are ONNX Script, and onnxsc must accept them.

This module reads them from the installed package at test time (nothing is copied into
the repository) and turns each into a self-contained module text:

* a fixed preamble: ``from onnxscript import <every tensor type onnxscript exports>, script``
  (``from __future__ import annotations`` first when the source module has it);
* the imports the function needs, as the source module writes them (``from
  onnxscript.onnx_opset import opset18 as op``, ``from onnxscript import graph``, ``from
  typing import Sequence``, ...) and ``from onnxscript.function_libs.torch_lib.registration
  import torch_op``;
* the module-level definitions it uses, in their file order: the ``TypeVar``s and ``Union``
  aliases of ``torch_lib/tensor_typing.py`` (with the aliases they depend on), and the
  constants of the source module. A constant written as an expression over ``math``
  (``_MATH_PI = math.pi``) is folded to its value (``_MATH_PI = 3.141592653589793  # math.pi``);
* the other scripted functions it calls (e.g. a ``private=True`` helper), callees first;
* the function itself, its source text copied exactly (decorator included, dedented when
  the definition is nested in a module-level ``if``).

Nothing is imported from torch_lib (``ops`` imports torch): the files are located with
``importlib.util.find_spec`` and read with :mod:`ast`. A function that cannot be made
self-contained (it uses ``torch``, ``numpy``, a module attribute such as
``common_ops.Rank``, a traced helper, ...) gets a ``skip_reason`` instead of a module text.

:func:`scripted_functions` returns the records; :meth:`TorchlibFunction.write` writes one
as a file, in its ``torch_op`` form or with ``@script()`` in place of each ``@torch_op(...)``.
The written file is valid Python: ``harness.compile_with_onnxscript`` compiles it with
onnxscript (the real ``torch_op`` runs ``onnxscript.script`` with torchlib's opset and does
not import torch).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib.util
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

TORCH_LIB = "onnxscript.function_libs.torch_lib"
REGISTRATION = f"{TORCH_LIB}.registration"
TORCH_OP_IMPORT = f"from {REGISTRATION} import torch_op"

# Modules whose names are part of the ONNX Script language: imports from them are copied.
_SCRIPT_MODULES = {
    "onnxscript",
    "onnxscript.onnx_types",
    "onnxscript.onnx_opset",
    "onnxscript.values",
}
_TYPING_MODULES = {"typing", "collections.abc", "typing_extensions"}
# Modules a module-level constant may be computed from; it is folded to its value.
_FOLDABLE_MODULES = {"math": math}

VARIANTS = ("torch_op", "script")


# --------------------------------------------------------------------------------------
# Locating and reading the package
# --------------------------------------------------------------------------------------


def onnxscript_dir() -> Path:
    """The installed ``onnxscript`` package directory (found without importing it)."""
    spec = importlib.util.find_spec("onnxscript")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("onnxscript is not installed in this Python environment")
    return Path(list(spec.submodule_search_locations)[0])


def torch_lib_dir() -> Path:
    return onnxscript_dir() / "function_libs" / "torch_lib"


def ops_files() -> list[Path]:
    """``torch_lib/ops/*.py``, sorted (``__init__`` excluded)."""
    return sorted(p for p in (torch_lib_dir() / "ops").glob("*.py") if p.name != "__init__.py")


@functools.lru_cache(maxsize=None)
def tensor_type_names() -> tuple[str, ...]:
    """The tensor types ``onnxscript/__init__.py`` imports from ``.onnx_types``, in order."""
    tree = ast.parse((onnxscript_dir() / "__init__.py").read_text(encoding="utf-8"))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == "onnx_types":
            names.extend(a.asname or a.name for a in node.names)
    if not names:
        raise RuntimeError("could not find the tensor types exported by onnxscript/__init__.py")
    return tuple(names)


def _module_name_of(path: Path) -> str:
    try:
        rel = path.resolve().relative_to(onnxscript_dir().resolve().parent).with_suffix("")
    except ValueError:  # a file outside the package (tests of the extractor itself)
        return path.stem
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _path_of_module(name: str) -> Path | None:
    """The source file of a module inside the onnxscript package, if there is one."""
    if name != "onnxscript" and not name.startswith("onnxscript."):
        return None
    base = onnxscript_dir().parent.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


# --------------------------------------------------------------------------------------
# Module-level bindings of a source file
# --------------------------------------------------------------------------------------


@dataclass
class _Binding:
    """What a module-level statement binds a name to."""

    kind: str  # "import_from", "import", "assign", "function"
    name: str
    node: ast.AST
    module: str = ""  # import_from/import: the (absolute) module
    imported: str = ""  # import_from: the name imported from it
    condition: str | None = None  # the module-level `if` the statement is nested in


class _SourceModule:
    def __init__(self, path: Path):
        self.path = path
        self.name = _module_name_of(path)
        self.text = path.read_text(encoding="utf-8")
        self.lines = self.text.splitlines()
        self.tree = ast.parse(self.text, filename=str(path))
        self.future_annotations = any(
            isinstance(n, ast.ImportFrom)
            and n.module == "__future__"
            and any(a.name == "annotations" for a in n.names)
            for n in self.tree.body
        )
        self.bindings: dict[str, list[_Binding]] = {}
        for stmt, condition in self._statements(self.tree.body, None):
            for b in self._bindings_of(stmt, condition):
                self.bindings.setdefault(b.name, []).append(b)

    def _statements(self, body, condition) -> Iterator[tuple[ast.stmt, str | None]]:
        """Module-level statements, including those nested in module-level if/try."""
        for stmt in body:
            if isinstance(stmt, ast.If):
                test = ast.unparse(stmt.test)
                yield from self._statements(stmt.body, _join(condition, test))
                yield from self._statements(stmt.orelse, _join(condition, f"not ({test})"))
            elif isinstance(stmt, ast.Try):
                for part in (stmt.body, stmt.orelse, stmt.finalbody):
                    yield from self._statements(part, _join(condition, "try"))
                for handler in stmt.handlers:
                    yield from self._statements(handler.body, _join(condition, "except"))
            else:
                yield stmt, condition

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = self.name.split(".")
        if self.path.name != "__init__.py":
            package = package[:-1]
        base = package[: len(package) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _bindings_of(self, stmt: ast.stmt, condition) -> Iterator[_Binding]:
        if isinstance(stmt, ast.ImportFrom):
            module = self._absolute(stmt)
            for a in stmt.names:
                yield _Binding(
                    "import_from", a.asname or a.name, stmt, module, a.name, condition
                )
        elif isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.asname:
                    yield _Binding("import", a.asname, stmt, a.name, "", condition)
                else:
                    top = a.name.split(".")[0]
                    yield _Binding("import", top, stmt, top, "", condition)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield _Binding("function", stmt.name, stmt, condition=condition)
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    yield _Binding("assign", target.id, stmt, condition=condition)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            if isinstance(stmt.target, ast.Name):
                yield _Binding("assign", stmt.target.id, stmt, condition=condition)

    def segment(self, first_line: int, last_line: int, indent: int) -> str:
        """Source lines ``first_line..last_line`` (1-based, inclusive) with ``indent``
        columns of leading whitespace removed (lines inside multi-line strings that are
        indented less are left as they are)."""
        out = []
        for line in self.lines[first_line - 1 : last_line]:
            prefix = line[:indent]
            out.append(line[indent:] if prefix.strip() == "" else line)
        return "\n".join(out)

    def statement_text(self, node: ast.stmt) -> str:
        first = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
        return self.segment(first, node.end_lineno, node.col_offset)


def _join(outer: str | None, inner: str) -> str:
    return inner if outer is None else f"{outer} and {inner}"


@functools.lru_cache(maxsize=None)
def _source_module(path: Path) -> _SourceModule:
    return _SourceModule(path)


# --------------------------------------------------------------------------------------
# torch_op decorators
# --------------------------------------------------------------------------------------


def _torch_op_decorator(node: ast.AST) -> ast.Call | None:
    """The ``@torch_op(...)`` decorator of a function definition, if it has one."""
    for deco in getattr(node, "decorator_list", []):
        if isinstance(deco, ast.Call):
            func = deco.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "torch_op":
                return deco
    return None


def _keyword(call: ast.Call, name: str, default):
    for kw in call.keywords:
        if kw.arg == name:
            try:
                return ast.literal_eval(kw.value)
            except ValueError:
                return ast.unparse(kw.value)
    return default


def _is_scripted_torch_op(node: ast.AST) -> bool:
    deco = _torch_op_decorator(node)
    return deco is not None and _keyword(deco, "trace_only", False) is not True


def _is_script_function(node: ast.AST) -> bool:
    """A function onnxscript compiles: scripted ``@torch_op`` or ``@script``."""
    if _is_scripted_torch_op(node):
        return True
    for deco in getattr(node, "decorator_list", []):
        target = deco.func if isinstance(deco, ast.Call) else deco
        if (isinstance(target, ast.Name) and target.id == "script") or (
            isinstance(target, ast.Attribute) and target.attr == "script"
        ):
            return True
    return False


# --------------------------------------------------------------------------------------
# Free names
# --------------------------------------------------------------------------------------


def _free_names(node: ast.AST) -> list[str]:
    """Names a definition or expression reads but does not bind, in first-use order.

    Parameters, assigned names and nested definitions anywhere inside (nested ``@graph``
    functions included) count as bound: Python makes them local to their function.
    """
    bound: set[str] = set()
    loads: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.arg):
            bound.add(sub.arg)
        elif isinstance(sub, ast.Name):
            if isinstance(sub.ctx, ast.Load):
                loads.append(sub.id)
            else:
                bound.add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub is not node:
            bound.add(sub.name)
    seen: set[str] = set()
    result = []
    for name in loads:
        if name not in bound and name not in seen:
            seen.add(name)
            result.append(name)
    return result


def _is_literal(expr: ast.expr) -> bool:
    try:
        ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _is_plain_value(value) -> bool:
    if isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_plain_value(v) for v in value)
    return False


class _Unsupported(Exception):
    """The function cannot be made self-contained; the message says why."""


# --------------------------------------------------------------------------------------
# Collecting what a function needs
# --------------------------------------------------------------------------------------


@dataclass
class _Item:
    """One module-level definition of the output, with where it came from."""

    key: tuple[str, str]  # (module name, bound name)
    text: str
    order: tuple[int, str, int]  # (group, module name, line): definitions in file order


class _Collector:
    """Resolves the free names of a function (and of what it pulls in, transitively)."""

    def __init__(self):
        self.imports: dict[str, dict[str, str | None]] = {}  # module -> {name: alias}
        self.torch_op = False
        self.module_imports: set[str] = set()  # `import onnxscript` lines
        self.definitions: dict[tuple[str, str], _Item] = {}
        self.functions: list[tuple[_SourceModule, ast.FunctionDef]] = []  # callees first
        self.defined_names: dict[str, tuple[str, str]] = {}  # output name -> its key
        self.notes: list[str] = []
        self._in_progress: set[tuple[str, str]] = set()
        self.future_annotations = False

    # An output-module name may be bound once.
    def _claim(self, name: str, key: tuple[str, str]) -> None:
        previous = self.defined_names.get(name)
        if previous is not None and previous != key:
            raise _Unsupported(
                f"`{name}` would be defined twice: by {previous[0]} and by {key[0]}"
            )
        self.defined_names[name] = key

    def add_function(self, module: _SourceModule, node: ast.FunctionDef) -> None:
        key = (module.name, node.name)
        if key in self._in_progress or any(
            (m.name, n.name) == key for m, n in self.functions
        ):
            return
        self._in_progress.add(key)
        self._claim(node.name, key)
        self.future_annotations |= module.future_annotations
        for name in _free_names(node):
            self.resolve(module, name, f"`{node.name}`")
        self._in_progress.discard(key)
        self.functions.append((module, node))

    def resolve(self, module: _SourceModule, name: str, user: str) -> None:
        bindings = module.bindings.get(name, [])
        if not bindings:
            if hasattr(builtins, name):
                return
            raise _Unsupported(f"{user} uses `{name}`, which {module.name} does not define")
        if len(bindings) > 1:
            where = ", ".join(f"line {b.node.lineno}" for b in bindings)
            raise _Unsupported(
                f"{user} uses `{name}`, which {module.name} defines more than once ({where})"
            )
        (b,) = bindings
        if b.condition is not None:
            raise _Unsupported(
                f"{user} uses `{name}`, which {module.name} defines only if {b.condition}"
            )
        if b.kind == "function":
            if not _is_script_function(b.node):
                raise _Unsupported(
                    f"{user} calls `{name}` ({module.name}, line {b.node.lineno}), which is "
                    "not a scripted function (traced or plain Python)"
                )
            self.add_function(module, b.node)
        elif b.kind == "assign":
            self._add_assignment(module, b)
        elif b.kind == "import_from":
            self._add_import_from(module, b, user)
        elif b.module in _SCRIPT_MODULES:  # import onnxscript[.values], import X as Y
            self._claim(name, ("import", b.module))
            spelled = [a for a in b.node.names if (a.asname or a.name.split(".")[0]) == name]
            self.module_imports.add(ast.unparse(ast.Import(names=spelled)))
        else:
            raise _Unsupported(
                f"{user} uses module `{name}` (`import {b.module}`), which is not part of "
                "ONNX Script"
            )

    def _add_import_from(self, module: _SourceModule, b: _Binding, user: str) -> None:
        source, name, alias = b.module, b.imported, b.name
        if source == REGISTRATION and name == "torch_op":
            if alias != "torch_op":
                raise _Unsupported(f"{module.name} imports torch_op as `{alias}`")
            self.torch_op = True
            return
        if source in _SCRIPT_MODULES or source in _TYPING_MODULES:
            if source in ("onnxscript", "onnxscript.onnx_types") and alias == name and (
                name in tensor_type_names() or name == "script"
            ):
                return  # in the preamble
            self._claim(alias, (source, name))
            self.imports.setdefault(source, {})[name] = None if alias == name else alias
            return
        if source.startswith(TORCH_LIB + ".") or source == TORCH_LIB:
            path = _path_of_module(source)
            if path is not None:
                target = _source_module(path)
                if _path_of_module(f"{source}.{name}") is not None:
                    raise _Unsupported(
                        f"{user} uses `{alias}`, the module {source}.{name}: a module "
                        "attribute cannot be made self-contained"
                    )
                if alias != name:
                    raise _Unsupported(f"{user} uses `{alias}`, imported as an alias of {source}.{name}")
                self.resolve(target, name, f"{user} (via {source})")
                return
        raise _Unsupported(
            f"{user} uses `{alias}` (`from {source} import {name}`), which is not part of "
            "ONNX Script"
        )

    def _add_assignment(self, module: _SourceModule, b: _Binding) -> None:
        key = (module.name, b.name)
        if key in self.definitions:
            return
        if key in self._in_progress:
            raise _Unsupported(f"`{b.name}` in {module.name} is defined in terms of itself")
        self._in_progress.add(key)
        self._claim(b.name, key)
        stmt = b.node
        value = stmt.value
        group = 0 if module.name.endswith("tensor_typing") else 1
        # Copy it as written if every name it uses can be brought along; otherwise fold
        # a constant computed from `math` to its value.
        try:
            for name in _free_names(value):
                self.resolve(module, name, f"`{b.name}` ({module.name})")
            text = module.statement_text(stmt)
        except _Unsupported as why:
            folded = self._fold(module, value)
            if folded is None:
                raise _Unsupported(f"{why} (and it is not a constant that can be folded)") from None
            text = f"{b.name} = {folded!r}  # {ast.unparse(value)}"
            self.notes.append(f"{b.name} folded from `{ast.unparse(value)}` ({module.name})")
        self._in_progress.discard(key)
        self.definitions[key] = _Item(key, text, (group, module.name, stmt.lineno))

    def _fold(self, module: _SourceModule, value: ast.expr):
        namespace: dict = {"__builtins__": {}}
        for name in _free_names(value):
            bindings = module.bindings.get(name, [])
            if len(bindings) != 1:
                return None
            (b,) = bindings
            if b.kind == "import" and b.module in _FOLDABLE_MODULES and b.name == b.module:
                namespace[name] = _FOLDABLE_MODULES[b.module]
            elif b.kind == "assign" and _is_literal(b.node.value):
                namespace[name] = ast.literal_eval(b.node.value)
            else:
                return None
        try:
            result = eval(compile(ast.Expression(value), str(module.path), "eval"), namespace)  # noqa: S307
        except Exception:  # noqa: BLE001 - anything that does not evaluate is not a constant
            return None
        return result if _is_plain_value(result) else None


# --------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TorchlibFunction:
    """One scripted torchlib translation.

    ``module_text`` is the self-contained ``.onnxs`` module (``None`` with a
    ``skip_reason`` when it cannot be built); ``script_module_text`` is the same module
    with ``@script()`` in place of every ``@torch_op(...)`` and without the torch_op import.
    """

    name: str
    source_file: Path
    line: int  # of the `def`
    op_names: tuple[str, ...]
    private: bool
    complex: bool
    condition: str | None  # the module-level `if` it is defined under, if any
    dependencies: tuple[str, ...] = ()  # other scripted functions included, callees first
    module_text: str | None = field(default=None, repr=False)
    script_module_text: str | None = field(default=None, repr=False)
    skip_reason: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def location(self) -> str:
        return f"{self.source_file}:{self.line}"

    def text(self, variant: str = "torch_op") -> str:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; known: {VARIANTS}")
        if self.module_text is None:
            raise ValueError(f"{self.name} has no module text: {self.skip_reason}")
        return self.module_text if variant == "torch_op" else self.script_module_text

    def write(self, directory: Path, variant: str = "torch_op") -> Path:
        """Write the module as ``DIRECTORY/<name>.onnxs`` and return its path."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.name}.onnxs"
        path.write_text(self.text(variant), encoding="utf-8")
        return path


def _function_text(module: _SourceModule, node: ast.FunctionDef, variant: str) -> str:
    if variant == "torch_op":
        return module.statement_text(node)
    # @script() in place of @torch_op(...): the decorator's lines are replaced.
    deco = _torch_op_decorator(node)
    text = module.statement_text(node)
    if deco is None:
        return text
    first = node.decorator_list[0].lineno
    lines = text.split("\n")
    start, end = deco.lineno - first, deco.end_lineno - first
    lines[start : end + 1] = ["@script()"]
    return "\n".join(lines)


def _render(collector: _Collector, variant: str) -> str:
    out: list[str] = []
    if collector.future_annotations:
        out += ["from __future__ import annotations", ""]
    typing_first = sorted(collector.imports, key=lambda m: (m not in _TYPING_MODULES, m))
    for source in [m for m in typing_first if m in _TYPING_MODULES]:
        out.append(_import_line(source, collector.imports[source]))
    out += sorted(collector.module_imports)
    out.append(_wrap_import("onnxscript", [*tensor_type_names(), "script"]))
    for source in [m for m in typing_first if m not in _TYPING_MODULES]:
        out.append(_import_line(source, collector.imports[source]))
    if collector.torch_op and variant == "torch_op":
        out.append(TORCH_OP_IMPORT)
    definitions = sorted(collector.definitions.values(), key=lambda item: item.order)
    if definitions:
        out.append("")
        out += [item.text for item in definitions]
    for module, node in collector.functions:
        out += ["", "", _function_text(module, node, variant)]
    return "\n".join(out) + "\n"


def _import_line(module: str, names: dict[str, str | None]) -> str:
    return _wrap_import(module, [n if a is None else f"{n} as {a}" for n, a in sorted(names.items())])


def _wrap_import(module: str, names: list[str]) -> str:
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= 88:
        return line
    body = textwrap.fill(", ".join(names), width=84, initial_indent="    ", subsequent_indent="    ")
    return f"from {module} import (\n{body},\n)"


def _record(module: _SourceModule, node: ast.FunctionDef, condition: str | None) -> TorchlibFunction:
    deco = _torch_op_decorator(node)
    assert deco is not None
    names = ast.literal_eval(deco.args[0]) if deco.args else ()
    op_names = (names,) if isinstance(names, str) else tuple(names)
    common = dict(
        name=node.name,
        source_file=module.path,
        line=node.lineno,
        op_names=op_names,
        private=bool(_keyword(deco, "private", False)),
        complex=bool(_keyword(deco, "complex", False)),
        condition=condition,
    )
    collector = _Collector()
    try:
        # The function itself: its own bindings may be conditional (aten_chunk), which is
        # fine for the function being extracted, but not for what it uses.
        collector.add_function(module, node)
        if not collector.torch_op:
            raise _Unsupported(f"{module.name} does not import torch_op from {REGISTRATION}")
    except _Unsupported as why:
        return TorchlibFunction(**common, skip_reason=str(why))
    return TorchlibFunction(
        **common,
        dependencies=tuple(n.name for _, n in collector.functions[:-1]),
        module_text=_render(collector, "torch_op"),
        script_module_text=_render(collector, "script"),
        notes=tuple(collector.notes),
    )


def _torch_op_functions(module: _SourceModule) -> Iterator[tuple[ast.FunctionDef, str | None]]:
    for stmt, condition in module._statements(module.tree.body, None):
        if isinstance(stmt, ast.FunctionDef) and _torch_op_decorator(stmt) is not None:
            yield stmt, condition


def extract_file(path: Path) -> list[TorchlibFunction]:
    """The scripted ``@torch_op`` functions of one source file, in line order.

    The file may also lie outside the package (its imports of torch_lib modules are
    still resolved in the installed package)."""
    module = _source_module(Path(path))
    return [
        _record(module, node, condition)
        for node, condition in _torch_op_functions(module)
        if _is_scripted_torch_op(node)
    ]


@functools.lru_cache(maxsize=None)
def _scripted() -> tuple[TorchlibFunction, ...]:
    return tuple(r for path in ops_files() for r in extract_file(path))


def scripted_functions() -> list[TorchlibFunction]:
    """Every ``@torch_op`` function of ``torch_lib/ops/*.py`` without ``trace_only=True``,
    in file and line order."""
    return list(_scripted())


def torch_op_count() -> int:
    """How many ``@torch_op`` functions the ops modules define (scripted or traced)."""
    return sum(
        1 for path in ops_files() for _ in _torch_op_functions(_source_module(path))
    )


def main() -> None:
    """``python torchlib_source.py [NAME...]``: print the modules (or a summary)."""
    import sys

    wanted = set(sys.argv[1:])
    records = scripted_functions()
    if not wanted:
        print(f"{torch_op_count()} @torch_op functions, {len(records)} scripted")
        for r in records:
            status = r.skip_reason or "ok"
            cond = f" [only if {r.condition}]" if r.condition else ""
            print(f"  {r.name:45} {Path(r.source_file).name}:{r.line:<5} {status}{cond}")
        return
    for r in records:
        if r.name in wanted:
            print(f"# ===== {r.name} ({r.location})")
            print(r.module_text if r.module_text is not None else f"# skipped: {r.skip_reason}")


if __name__ == "__main__":
    main()
