"""One worker process's share of a run: a long-lived oracle, one program per task.

Separate from `__main__` because worker processes are spawned and must find these functions
by module name (`-m difftest` runs `__main__` under another name in the workers).
"""

from __future__ import annotations

import collections
from pathlib import Path

from . import coverage, generator, trace_generator
from .oracle import Oracle, Result

_oracle: Oracle | None = None


def init(binary: str) -> None:
    global _oracle
    _memoize_operator_signatures()
    _oracle = Oracle(Path(binary))


def _memoize_operator_signatures() -> None:
    """onnxscript's converter and torch's `OpRecorder` rebuild an operator's signature from its
    schema (`OpSignature.from_op_schema`) for every operator call they convert or record: a
    sixth of a worker's time. The signature depends on the schema alone, and neither mutates
    it, so a worker builds each once. Workers only: the test suite runs the tools untouched."""
    from onnx_ir import schemas

    build = schemas.OpSignature.from_op_schema.__func__
    built: dict = {}

    def from_op_schema(cls, op_schema):
        key = (op_schema.domain, op_schema.name, op_schema.since_version)
        if key not in built:
            built[key] = build(cls, op_schema)
        return built[key]

    schemas.OpSignature.from_op_schema = classmethod(from_op_schema)


def run_one(task: tuple[int, str]) -> tuple[int, str, Result, collections.Counter]:
    """Program `seed` of `kind` ("script" or "trace"): its case text, the oracle's result, and
    what it covered."""
    seed, kind = task
    program = generator.generate(seed) if kind == "script" else trace_generator.generate_trace(seed)
    text = generator.with_header(program)
    assert _oracle is not None, "batch.init runs first in each worker"
    return seed, text, _oracle.run_text(text), coverage.of_program(program)
