"""The exporter's own translations for newer opsets, which a table entry displaces.

torch's exporter adds, beside torchlib's translations, some that use newer ONNX operators, each
marked with the opset it needs (torch 2.15: ``aten::gelu`` as ONNX's ``Gelu`` from opset 20,
``group_norm`` from 21, ``rms_norm`` and ``scaled_dot_product_attention`` from 23). For an export
to an opset that has them, its registry picks them over torchlib's; an entry of a
``custom_translation_table`` is picked first, whatever the opset. So an entry for such an
operator replaces the fused ONNX operator with its own formula at every opset.

Each entry asks :class:`NewerOpset` at each call: by default the entry stands and the first such
call of an export warns (W0510, suppressible with ``# noqa: W0510`` on the translation); with
``prefer_newer_opset=True`` the exporter's newer translation is called instead, exactly as the
exporter would call it.
"""

from __future__ import annotations

import functools
from typing import Callable, Optional

from onnxsc._trace import exporter_recorder
from onnxsc._usage import qualname


class NewerOpset:
    """The exporter's translations of one entry's operator for opsets newer than torchlib's."""

    def __init__(self, overload, warner, prefer: bool):
        self.newer = newer_translations().get(qualname(overload), ())
        self.name = qualname(overload)
        self.warner = warner
        self.prefer = prefer

    def at_this_call(self) -> Optional[Callable]:
        """The exporter's translation to call instead of the entry at this export's opset (with
        ``prefer_newer_opset``), or None; without it, warns that the entry displaces one."""
        if not self.newer:
            return None
        opset = current_opset()
        usable = [(since, f) for since, f in self.newer if opset is not None and since <= opset]
        if not usable:
            return None
        since, function = max(usable, key=lambda u: u[0])
        if self.prefer:
            return function
        self.warner.warn(
            f"{self.warner.where}: this export builds at opset {opset}, where the exporter translates "
            f"`{self.name}` with its own translation for opset {since} and later "
            f"(`{getattr(function, 'name', None) or getattr(function, '__name__', '?')}`), and this entry "
            f"replaces it; keep the entry on purpose with `# noqa: W0510` on its `@torch_op` line, or "
            f"build the table with prefer_newer_opset=True to let the exporter's stand",
            code="W0510",
        )
        return None


def current_opset() -> Optional[int]:
    """The ONNX opset of the graph the exporter is building, or None outside an export."""
    recorder = exporter_recorder()
    opset = getattr(recorder, "opset", None)
    return getattr(opset, "version", None)


@functools.lru_cache(maxsize=None)
def newer_translations() -> dict:
    """``{qualname: ((opset_introduced, function), ...)}`` for the exporter's own translations
    that need an opset newer than torchlib's (complex ones aside: the table never displaces
    those). Empty for a torch without them."""
    try:
        from torch.onnx._internal.exporter import _constants
        from torch.onnx._internal.exporter._torchlib import _torchlib_registry
    except ImportError:
        return {}
    base = getattr(_constants, "TORCHLIB_OPSET", 18)
    out: dict = {}
    for meta in _torchlib_registry.get_torchlib_ops():
        since = getattr(meta, "opset_introduced", base)
        if since <= base or getattr(meta, "is_complex", False):
            continue
        out.setdefault(qualname(meta.fx_target), []).append((since, meta.onnx_function))
    return {name: tuple(found) for name, found in out.items()}
