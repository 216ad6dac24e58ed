"""Delta debugging: shrink a program while the oracle still gives the same finding.

Edits, tried in source order and kept when the finding remains (same kind, same function, same
symptom: different values of the same output stay that, and do not drift into a model ONNX
Runtime refuses, which would be another fault):
delete a statement (a module constant, a function nobody's finding needs, a statement of any
block, an `else` or `elif`), replace a compound statement by its body, and replace an
expression by one of its operands. Passes repeat until none applies. The oracle itself keeps a
candidate honest: one onnxscript refuses, or whose onnxscript model ONNX Runtime refuses, is
not the same finding, so it is dropped.
"""

from __future__ import annotations

import ast
import json
from typing import Callable, Iterator

from .generator import HEADER, read_header
from .oracle import Oracle, Outcome

Edit = Callable[[], bool]


def _blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every statement list in `node`, outermost first."""
    for name in ("body", "orelse"):
        block = getattr(node, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
            for stmt in block:
                yield from _blocks(stmt)


def _statement_edits(tree: ast.Module, keep: str) -> Iterator[Edit]:
    for block in _blocks(tree):
        for index, stmt in enumerate(block):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(stmt, ast.FunctionDef) and stmt.name == keep:
                continue
            if isinstance(stmt, ast.Return):
                continue

            def delete(block=block, index=index) -> bool:
                if len(block) == 1:
                    return False
                del block[index]
                return True

            yield delete
            if isinstance(stmt, (ast.If, ast.For, ast.While)):

                def inline(block=block, index=index, stmt=stmt) -> bool:
                    block[index:index + 1] = stmt.body
                    return True

                yield inline
                if isinstance(stmt, ast.If) and stmt.orelse:

                    def drop_else(stmt=stmt) -> bool:
                        stmt.orelse = []
                        return True

                    yield drop_else


def _operands(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.Subscript):
        return [node.value]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return list(node.args)
    return []


def _expression_edits(tree: ast.Module) -> Iterator[Edit]:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            slots = [(value, None)] if isinstance(value, ast.expr) else (
                [(v, i) for i, v in enumerate(value) if isinstance(v, ast.expr)] if isinstance(value, list) else [])
            for child, index in slots:
                if isinstance(parent, (ast.arg, ast.arguments)) or field in ("annotation", "returns", "decorator_list", "targets", "target"):
                    continue
                for operand in _operands(child):

                    def replace(parent=parent, field=field, index=index, operand=operand) -> bool:
                        if index is None:
                            setattr(parent, field, operand)
                        else:
                            getattr(parent, field)[index] = operand
                        return True

                    yield replace


def _edits(tree: ast.Module, keep: str) -> list[Edit]:
    return list(_statement_edits(tree, keep)) + list(_expression_edits(tree))


def _avoided(tree: ast.Module) -> bool:
    """Whether the candidate has what the generator avoids on purpose: `a = b` inside a
    branch or loop body, where the oracle could not tell onnxscript's miswired blocks
    (oracle.miswired) from a disagreement."""
    for block_owner in ast.walk(tree):
        if not isinstance(block_owner, (ast.If, ast.For, ast.While)):
            continue
        for stmt in block_owner.body + block_owner.orelse:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name):
                return True
    return False


def _render(tree: ast.Module, meta: dict) -> str:
    names = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    calls = {name: call for name, call in meta["calls"].items() if name in names}
    header = HEADER + json.dumps({**meta, "calls": calls}, sort_keys=True)
    return header + "\n" + ast.unparse(tree) + "\n"


def symptom(outcome: Outcome) -> str:
    """What a finding's detail says went wrong, without the values: `output 1`, `ONNX Runtime
    refuses onnxsc's model`, `onnxsc exit 1`..."""
    return outcome.detail.split(":", 1)[0]


def same_finding(found: Outcome) -> Callable[[list[Outcome]], bool]:
    def check(outcomes: list[Outcome]) -> bool:
        return any(o.kind == found.kind and o.function == found.function and symptom(o) == symptom(found)
                   for o in outcomes)

    return check


def reduce(oracle: Oracle, text: str, finding: Outcome, max_tests: int = 2000,
           log: Callable[[str], None] | None = None) -> str:
    """The smallest program found that still gives `finding`."""
    meta = read_header(text)
    interesting = same_finding(finding)
    current = _render(ast.parse(text.split("\n", 1)[1]), meta)
    if not interesting(oracle.run_text(current).functions):
        return text  # the unparsed text lost it (comments, spelling): keep the original
    tests = 0
    changed = True
    while changed and tests < max_tests:
        changed = False
        k = 0
        while tests < max_tests:
            tree = ast.parse(current.split("\n", 1)[1])
            edits = _edits(tree, finding.function or "")
            if k >= len(edits):
                break
            if not edits[k]() or _avoided(tree):
                k += 1
                continue
            try:
                candidate = _render(tree, meta)
                ast.parse(candidate)
            except (SyntaxError, ValueError):
                k += 1
                continue
            if candidate == current:
                k += 1
                continue
            tests += 1
            if interesting(oracle.run_text(candidate).functions):
                current, changed = candidate, True
                if log:
                    log(f"reduce: {tests} tests, {len(current)} bytes")
            else:
                k += 1
    return current

