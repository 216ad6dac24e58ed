"""onnxsc for Python: compiled ONNX Script translations as a ``custom_translation_table``.

    import onnxsc, torch

    table = onnxsc.translation_table("translations/")     # .onnxs files or directories
    program = torch.onnx.export(model, args, dynamo=True, custom_translation_table=table)

Every function bound to PyTorch operators with ``@torch_op("aten::add.Tensor")`` becomes an
entry ``{torch.ops.aten.add.Tensor: translation}``. The sources are checked first: any error
raises :class:`CompileError` with the rendered diagnostics, before an export starts; each
warning is an :class:`OnnxscWarning` (``deny_warnings=True`` makes them errors).
:func:`load_library` does the same from a library built with ``onnxsc build``.

Each translation is specialised to every distinct call the exporter makes (the optional inputs
it gives, its attribute values) by onnxsc's linker, so ``if x is None:`` and conditions on
attributes leave only the branch taken in the exported model. Every node carries its ``.onnxs``
location in ``metadata_props["onnxsc.source"]``.

:func:`functions` runs compiled functions directly on NumPy arrays or torch tensors, in ONNX
Runtime, for debugging. :func:`usage` tells, after an export, which entries of the table its graph called, which it
did not (and what it called instead), and which operators of the graph no entry translates.
"""

from onnxsc._binary import find_onnxsc_bin
from onnxsc._errors import CompileError, OnnxscError, OnnxscWarning
from onnxsc._functions import Function, Functions, functions
from onnxsc._table import load_library, translation_table
from onnxsc._usage import UnusedEntry, UsageReport, usage

__all__ = [
    "CompileError",
    "Function",
    "Functions",
    "OnnxscError",
    "OnnxscWarning",
    "UnusedEntry",
    "UsageReport",
    "find_onnxsc_bin",
    "functions",
    "load_library",
    "translation_table",
    "usage",
]
