"""Which entries of a translation table an export uses, and which it never calls.

A ``custom_translation_table`` entry is called only for the operator overloads that remain in
the graph ``torch.export`` hands to the ONNX exporter. Some never do:

- a composite operator that ``torch.export`` always decomposes, whatever the table says
  (``aten::batch_norm``): known before any export, from torch's own rules, and a warning when
  the table is built (:func:`never_in_a_graph`);
- an overload the model's Python code does not produce (``aten::upsample_nearest2d`` when
  ``F.interpolate`` calls ``upsample_nearest2d.vec``; ``aten::native_layer_norm`` when
  ``nn.LayerNorm`` calls ``layer_norm``): known only from the graph. The first time one of the
  table's translations is called in an export, the graph is read and an entry whose operator
  is missing while a related one is there, untranslated by the table, is a warning naming it
  (:class:`TableUsage`).

After an export, :func:`usage` reports the whole picture, printable and as data.
"""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass
from typing import Any, Optional

# What torch.export turns the operators it always decomposes into, as measured with torch 2.15
# (tests/python/test_usage.py exports models that show it); named in the warning.
_DECOMPOSED_INTO = {
    "aten::batch_norm": "aten::_native_batch_norm_legit_no_training in eval mode, "
    "aten::_native_batch_norm_legit in training",
    "aten::dropout": "nothing in eval mode (the dropout is removed), aten::native_dropout in training",
}

# The exporter's function that translates a graph node by node; its `fx_graph` is the graph.
_TRANSLATING_FUNCTION = "_translate_fx_graph"


def qualname(overload) -> str:
    """``aten::add.Tensor``, or ``aten::gelu`` for a default overload: as ``@torch_op`` names it
    (and as torch's ``OpOverload.name()`` does)."""
    return overload.name() if hasattr(overload, "name") else str(overload)


def never_in_a_graph(overload) -> Optional[str]:
    """Why ``torch.export`` never leaves ``overload`` in a graph, or None: a composite
    (CompositeImplicitAutograd) operator that export does not preserve is always decomposed."""
    try:
        from torch._export.utils import _check_valid_to_preserve, _is_cia_op
    except ImportError:  # another torch: nothing known
        return None
    try:
        if not _is_cia_op(overload) or _check_valid_to_preserve(overload):
            return None
    except Exception:  # an overload torch cannot judge
        return None
    name = qualname(overload)
    into = _DECOMPOSED_INTO.get(name)
    where = f" (into {into})" if into else ""
    return (
        f"torch.export always decomposes `{name}`{where} before the ONNX exporter translates the graph, "
        f"so this translation is never called: translate the operators it decomposes into "
        f"(onnxsc.usage(program, table) lists what an export's graph calls)"
    )


@dataclass(frozen=True)
class UnusedEntry:
    """A table entry the graph never calls, and the related operators it calls instead that the
    table does not translate (empty: the model simply does not use the operator)."""

    operator: str
    instead: tuple

    def as_dict(self) -> dict:
        return {"operator": self.operator, "instead": list(self.instead)}


@dataclass(frozen=True)
class UsageReport:
    """What one export did with a translation table: the entries its graph called, those it did
    not (with what it called instead), and the graph's operators no entry translates (the
    exporter's own translations took them)."""

    used: tuple
    unused: tuple
    not_overridden: tuple

    def as_dict(self) -> dict:
        return {
            "used": list(self.used),
            "unused": [u.as_dict() for u in self.unused],
            "not_overridden": list(self.not_overridden),
        }

    def __str__(self) -> str:
        return self.format()

    def format(self, used: bool = False, unused: bool = False) -> str:
        """The report: a summary, then what to act on (the unused entries whose graph calls a
        related operator instead, the graph's operators without an entry). ``used=True`` and
        ``unused=True`` list every used and every unused entry too (a table built from torchlib
        has hundreds an export never calls)."""
        misses = [u for u in self.unused if u.instead]
        total = len(self.used) + len(self.unused)
        lines = [
            f"translation table usage: {len(self.used)} of {total} entries used, {len(self.unused)} unused "
            f"({len(misses)} where the graph calls a related operator instead); "
            f"{len(self.not_overridden)} operator{'s' if len(self.not_overridden) != 1 else ''} of the graph without an entry"
        ]
        if used:
            lines.append("used:")
            lines.extend(f"  {name}" for name in self.used)
        if misses or unused:
            lines.append("unused:" if unused else "unused, where the graph calls a related operator instead:")
            for u in self.unused if unused else misses:
                instead = f"  (the graph calls {', '.join(u.instead)} instead)" if u.instead else ""
                lines.append(f"  {u.operator}{instead}")
        if self.not_overridden:
            lines.append("operators of the graph without an entry (the exporter's own translations took them):")
            lines.extend(f"  {name}" for name in self.not_overridden)
        if not (used and unused):
            lines.append("(report.format(used=True, unused=True) lists every entry; report.as_dict() gives the data)")
        return "\n".join(lines)


def usage(program, table: dict) -> UsageReport:
    """The :class:`UsageReport` of an export: ``program`` is what ``torch.onnx.export`` returned
    (or its ``exported_program``, or an FX graph), ``table`` the translation table it was given."""
    return _report(_graph_of(program), table)


def _graph_of(program):
    exported = getattr(program, "exported_program", program)
    graph = getattr(exported, "graph", exported)
    if not hasattr(graph, "nodes"):
        raise TypeError(f"usage() needs what torch.onnx.export returned, not {type(program).__name__}")
    return graph


def _graph_operators(graph) -> set:
    """The operator overloads the graph calls."""
    return {n.target for n in graph.nodes if n.op == "call_function" and hasattr(n.target, "_schema")}


def _report(graph, table: dict) -> UsageReport:
    called = _graph_operators(graph)
    untranslated = sorted(qualname(o) for o in called if o not in table)
    used, unused = [], []
    for overload in table:
        name = qualname(overload)
        if overload in called:
            used.append(name)
        else:
            instead = tuple(o for o in untranslated if _related(name, o))
            unused.append(UnusedEntry(name, instead))
    return UsageReport(tuple(sorted(used)), tuple(sorted(unused, key=lambda u: u.operator)), tuple(untranslated))


def _base(name: str) -> str:
    """``aten::_native_batch_norm_legit.no_stats`` -> ``batch_norm_legit``: the operator's name
    without namespace, overload, leading underscores and ``native_``."""
    base = name.split("::")[-1].split(".")[0].lstrip("_")
    return base[len("native_") :] if base.startswith("native_") else base


def _related(entry: str, other: str) -> bool:
    """Whether ``other`` may be what the graph calls instead of ``entry``: another overload of
    it, or an operator whose name contains its name or is contained in it."""
    a, b = _base(entry), _base(other)
    return bool(a) and bool(b) and (a in b or b in a)


def _current_graph():
    """The FX graph the exporter is translating, if this is called from inside a translation."""
    frame = sys._getframe(1)
    for _ in range(64):
        if frame is None:
            return None
        if frame.f_code.co_name == _TRANSLATING_FUNCTION:
            return frame.f_locals.get("fx_graph")
        frame = frame.f_back
    return None


class TableUsage:
    """The entries of one translation table, watching the exports they are called in: the first
    call in an export reads its graph and warns about each entry the graph never calls while a
    related operator, which the table does not translate, is there."""

    def __init__(self) -> None:
        self.entries: dict = {}
        self.warned: set = set()
        self.seen: Any = weakref.WeakSet()

    def add(self, overload, warner, warned: bool = False) -> None:
        """An entry, and whether it was already reported as never called (then silent here)."""
        self.entries[overload] = warner
        if warned:
            self.warned.add(overload)

    def observe(self) -> None:
        graph = _current_graph()
        if graph is None or graph in self.seen:
            return
        self.seen.add(graph)
        by_name = {qualname(o): o for o in self.entries}
        for entry in _report(graph, self.entries).unused:
            overload = by_name[entry.operator]
            if not entry.instead or overload in self.warned:
                continue
            warner = self.entries[overload]
            warner.warn(
                f"{warner.where}: this export never calls `{entry.operator}`: its graph calls "
                f"{', '.join(f'`{i}`' for i in entry.instead)} instead, which the table does not translate; "
                f"bind the translation to that operator (onnxsc schema shows its arguments)",
                code="W0508",
            )
