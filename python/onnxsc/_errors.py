"""The exceptions of the onnxsc package."""

from __future__ import annotations


class OnnxscError(Exception):
    """onnxsc could not produce a translation table (a missing binary, an unreadable file,
    an operator torch does not know)."""


class CompileError(OnnxscError):
    """The sources have errors. ``diagnostics`` is onnxsc's rendered report: every error with
    its file, line, column, code and help, as ``onnxsc check`` prints it."""

    def __init__(self, diagnostics: str):
        self.diagnostics = diagnostics
        super().__init__("onnxsc found errors in the translation sources:\n\n" + diagnostics)
