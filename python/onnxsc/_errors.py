"""The exceptions and warnings of the onnxsc package."""

from __future__ import annotations

from typing import Optional


class OnnxscError(Exception):
    """onnxsc could not produce a translation table (a missing binary, an unreadable file,
    an operator torch does not know), or a translation could not be applied to a call."""


class CompileError(OnnxscError):
    """The sources have errors. ``diagnostics`` is onnxsc's rendered report: every error with
    its file, line, column, code and help, as ``onnxsc check`` prints it."""

    def __init__(self, diagnostics: str):
        self.diagnostics = diagnostics
        super().__init__("onnxsc found errors in the translation sources:\n\n" + diagnostics)


class OnnxscWarning(UserWarning):
    """A warning of ``onnxsc check`` about the translation sources (``W0501``, ...), raised
    by :func:`onnxsc.translation_table` with the rendered diagnostic as its message.
    ``translation_table(..., deny_warnings=True)`` makes them errors instead."""

    def __init__(self, rendered: str, code: str = "", file: Optional[str] = None, line: int = 0, column: int = 0):
        super().__init__(rendered)
        self.rendered = rendered
        self.code = code
        self.file = file
        self.line = line
        self.column = column
