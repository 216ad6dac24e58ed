"""``onnxsc build FILE --emit text`` prints the compiled functions in ONNX textual syntax.

The functions are separated by a blank line. Each must parse with
``onnx.parser.parse_function`` and be the same function as the binary build: name,
domain, opset imports, inputs, outputs, attributes and their defaults, and the same nodes
(domain, op type, inputs, outputs, attributes, subgraphs included). Node names may differ;
metadata has no textual syntax and is not compared. Lines starting with ``#`` are
comments to the parser.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import onnx.parser
import pytest

import harness

SOURCES = sorted(harness.EXAMPLES_DIR.glob("*.onnxs")) + sorted(
    harness.DIFFERENTIAL_DIR.glob("*.onnxs")
)


def split_functions(text: str) -> list[str]:
    """Split at blank lines, except blank lines inside a string literal (a doc_string
    may contain blank lines)."""
    chunks: list[str] = []
    current: list[str] = []
    in_string = False
    for line in text.splitlines():
        if not in_string and not line.strip():
            if current:
                chunks.append("\n".join(current))
                current = []
            continue
        current.append(line)
        escaped = False
        for ch in line:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = not in_string
    if current:
        chunks.append("\n".join(current))
    return chunks


def test_split_functions():
    assert split_functions("a\nb\n\nc\n  \nd\n") == ["a\nb", "c", "d"]
    text = 'f <\n doc_string: "x\n\n  y \\" z"\n>\nf (a) => (b)\n{\n}\n\ng (a) => (b)\n{\n}\n'
    assert split_functions(text) == [
        'f <\n doc_string: "x\n\n  y \\" z"\n>\nf (a) => (b)\n{\n}',
        "g (a) => (b)\n{\n}",
    ]


@pytest.mark.parametrize(
    "path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.stem}"
)
def test_text_matches_binary(path: Path, onnxsc, onnxsc_builds):
    proc = onnxsc.emit_text(path)
    assert proc.returncode == 0, (
        f"onnxsc build {path} --emit text exited {proc.returncode}\n{proc.stderr}"
    )
    binary = list(onnxsc_builds.build(path).require_model().functions)
    chunks = split_functions(proc.stdout)
    assert len(chunks) == len(binary), (
        f"{len(chunks)} functions in the text, {len(binary)} in the binary build:\n"
        + proc.stdout
    )
    for chunk, fp in zip(chunks, binary):
        try:
            parsed = onnx.parser.parse_function(chunk)
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"onnx.parser.parse_function rejects:\n{chunk}\n--> {exc}")
        expected = harness.canon_function(fp)
        actual = harness.canon_function(parsed)
        for key in expected:
            assert actual[key] == expected[key], f"{fp.name}: {key} differs\n{chunk}"
        assert parsed.doc_string == fp.doc_string, f"{fp.name}: doc_string differs\n{chunk}"
