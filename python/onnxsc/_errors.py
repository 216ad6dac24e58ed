"""The exceptions and warnings of the onnxsc package."""

from __future__ import annotations

from typing import Optional


class OnnxscError(Exception):
    """onnxsc could not produce a translation table (a missing binary, an unreadable file,
    an operator torch does not know), or a translation could not be applied to a call."""


class CompileError(OnnxscError):
    """The sources have errors. ``diagnostics`` is onnxsc's rendered report: every error with
    its file, line, column, code and help, as ``onnxsc check`` prints it, then a summary that
    counts the errors and the warnings. ``errors`` and ``warnings`` hold each diagnostic as
    ``onnxsc check --format json`` writes it (the warnings are counted in the report, not shown:
    ``onnxsc check`` prints them)."""

    def __init__(self, diagnostics: str, errors: Optional[list] = None, warnings: Optional[list] = None):
        self.diagnostics = diagnostics
        self.errors = errors or []
        self.warnings = warnings or []
        super().__init__("onnxsc found errors in the translation sources:\n\n" + diagnostics)

    @classmethod
    def of(cls, diagnostics: list) -> "CompileError":
        """The error of a compilation's diagnostics (``--format json`` objects): its errors in
        order, then the counts."""
        errors = [d for d in diagnostics if d["severity"] == "error"]
        warnings = [d for d in diagnostics if d["severity"] != "error"]
        shown = "".join(d["rendered"] for d in errors).rstrip("\n")
        summary = f"onnxsc: {_plural(len(errors), 'error')}, {_plural(len(warnings), 'warning')}"
        if warnings:
            summary += " (the warnings are not shown here: `onnxsc check` prints them all)"
        return cls(f"{shown}\n\n{summary}\n", errors, warnings)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


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
