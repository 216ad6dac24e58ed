"""onnxsc for Python: compiled ONNX Script translations as a ``custom_translation_table``.

    import onnxsc, torch

    table = onnxsc.translation_table("translations/")     # .onnxs files or directories
    program = torch.onnx.export(model, args, dynamo=True, custom_translation_table=table)

Every function bound to PyTorch operators with ``@torch_op("aten::add.Tensor")`` becomes an
entry ``{torch.ops.aten.add.Tensor: translation}``. The sources are checked first: any error
raises :class:`CompileError` with the rendered diagnostics, before an export starts.
:func:`load_library` does the same from a library built with ``onnxsc build``.
"""

from onnxsc._binary import find_onnxsc_bin
from onnxsc._errors import CompileError, OnnxscError
from onnxsc._table import load_library, translation_table

__all__ = ["CompileError", "OnnxscError", "find_onnxsc_bin", "load_library", "translation_table"]
