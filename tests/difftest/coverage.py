"""What generated programs cover: constructs × element types, and opsets.

Read back from each function's source (not from what the generator meant to write), so a
construct counts only if it reached the compilers. A function's element types are those of
its inputs and of the casts it makes.
"""

from __future__ import annotations

import ast
import collections

from .generator import ELEMENT_TYPES, Program

_TYPE_NAMES = {name: dtype for dtype, (name, _) in ELEMENT_TYPES.items()}
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%",
              ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|"}

CONSTRUCTS = [
    "arithmetic operator", "comparison", "logic", "unary minus", "op call", "Cast", "CastLike",
    "Where", "reduction", "literal operand", "module constant", "attribute with default",
    "attribute without default", "attribute used as tensor", "attribute in condition",
    "optional input", "if", "elif", "else", "for", "for over attribute", "while", "break",
    "subscript", "slice", "loop index subscript", "sequence", "@graph Scan", "call of a function",
    "reshaping op", "@", "default_opset",
]


def _constructs(fn: ast.FunctionDef, nodes: list[ast.AST], constants: set[str]) -> set[str]:
    """The constructs of `fn`, whose nodes (`ast.walk`) are `nodes`."""
    found: set[str] = set()
    attrs = {a.arg for a in fn.args.args if isinstance(a.annotation, ast.Name) and a.annotation.id in ("float", "int", "bool")}
    defaults = fn.args.defaults
    with_default = {a.arg for a in fn.args.args[len(fn.args.args) - len(defaults):]}
    for a in attrs:
        found.add("attribute with default" if a in with_default else "attribute without default")
    if any(isinstance(a.annotation, ast.Subscript) and getattr(a.annotation.value, "id", "") == "Optional" for a in fn.args.args):
        found.add("optional input")
    if any(isinstance(d, ast.Call) and d.keywords for d in fn.decorator_list):
        found.add("default_opset")
    loops = {node.target.id for node in nodes if isinstance(node, ast.For)}
    functions_called = set()
    for node in nodes:
        if isinstance(node, ast.BinOp):
            op = _OPERATORS.get(type(node.op))
            found.add("@" if op == "@" else "logic" if op in ("&", "|") else "arithmetic operator")
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant):
                    found.add("literal operand")
                if isinstance(side, ast.Name) and side.id in constants:
                    found.add("module constant")
                if isinstance(side, ast.Name) and side.id in attrs:
                    found.add("attribute used as tensor")
        elif isinstance(node, ast.Compare):
            found.add("comparison")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            found.add("unary minus")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            found.add("op call")
            if name in ("Cast", "CastLike", "Where"):
                found.add(name)
            elif name.startswith("Reduce"):
                found.add("reduction")
            elif name in ("SequenceConstruct",):
                found.add("sequence")
            elif name == "Scan":
                found.add("@graph Scan")
            elif name in ("Transpose", "Reshape", "Concat", "Unsqueeze"):
                found.add("reshaping op")
            elif name in ("Not", "Xor"):
                found.add("logic")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            functions_called.add(node.func.id)
        elif isinstance(node, ast.If):
            found.add("if")
            if isinstance(node.test, ast.Name) and node.test.id in attrs or (
                    isinstance(node.test, ast.Compare) and isinstance(node.test.left, ast.Name) and node.test.left.id in attrs):
                found.add("attribute in condition")
            if node.orelse:
                found.add("elif" if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) else "else")
        elif isinstance(node, ast.For):
            found.add("for")
            count = node.iter.args[0] if isinstance(node.iter, ast.Call) and node.iter.args else None
            if isinstance(count, ast.Name) and count.id in attrs:
                found.add("for over attribute")
        elif isinstance(node, ast.While):
            found.add("while")
        elif isinstance(node, ast.Break):
            found.add("break")
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and not isinstance(node.value, ast.Name) or (
                isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id not in _TYPE_NAMES and node.value.id not in ("Optional", "Tuple")):
            index = node.slice
            parts = index.elts if isinstance(index, ast.Tuple) else [index]
            found.add("slice" if any(isinstance(p, ast.Slice) for p in parts) else "subscript")
            if any(isinstance(p, ast.Name) and p.id in loops for p in parts):
                found.add("loop index subscript")
    if functions_called - {"range", "script", "graph"}:
        found.add("call of a function")
    return found


def _element_types(nodes: list[ast.AST]) -> set[str]:
    return {_TYPE_NAMES[node.id] for node in nodes if isinstance(node, ast.Name) and node.id in _TYPE_NAMES}


TRACE_CONSTRUCTS = [
    "trace: branch on a fact", "trace: is None", "trace: element type", "trace: rank or dimension",
    "trace: attribute value", "trace: unrolled for", "trace: call of a translation",
    "trace: shape as a list", "trace: ir.tensor constant",
]


def _trace_constructs(fn: ast.FunctionDef, source: str) -> set[str]:
    text = ast.get_source_segment(source, fn) or ""
    found = {name for name, needle in [
        ("trace: is None", " is None"), ("trace: element type", "x.dtype =="),
        ("trace: rank or dimension", "x.shape"), ("trace: unrolled for", "for "),
        ("trace: shape as a list", "list(x.shape)"), ("trace: ir.tensor constant", "ir.tensor("),
    ] if needle in text}
    attrs = {a.arg for a in fn.args.args if a.arg.startswith("a")}
    for node in ast.walk(fn):
        if isinstance(node, ast.If):
            found.add("trace: branch on a fact")
        if isinstance(node, ast.Name) and node.id in attrs:
            found.add("trace: attribute value")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("f"):
            found.add("trace: call of a translation")
    return found


def _of_trace_program(program: Program) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for fn in ast.parse(program.source).body:
        if isinstance(fn, ast.FunctionDef):
            counts[("trace functions",)] += 1
            counts[("opset", program.opset)] += 1
            types = {_TYPE_NAMES.get(a["tensor"]["dtype"], a["tensor"]["dtype"]) for call in program.trace_calls[fn.name]
                     for a in call["args"] if "tensor" in a}
            for construct in _trace_constructs(fn, program.source):
                counts[("construct", construct)] += 1
                for t in types:
                    counts[("cell", construct, t)] += 1
            counts[("trace calls",)] += len(program.trace_calls[fn.name])
    return counts


def of_program(program: Program) -> collections.Counter:
    """Counts of (what, ...) keys over the program's functions."""
    if program.kind == "trace":
        return _of_trace_program(program)
    tree = ast.parse(program.source)
    constants = {t.id for s in tree.body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)}
    counts: collections.Counter = collections.Counter()
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        counts[("functions",)] += 1
        counts[("opset", program.opset)] += 1
        nodes = list(ast.walk(fn))  # walked once: the walk costs more than the tests
        types = _element_types(nodes)
        for construct in _constructs(fn, nodes, constants):
            counts[("construct", construct)] += 1
            for t in types:
                counts[("cell", construct, t)] += 1
        for t in types:
            counts[("type", t)] += 1
    return counts


def report(counts: collections.Counter) -> None:
    """A table: each construct's function count, and the element types it met."""
    total = counts[("functions",)]
    types = list(ELEMENT_TYPES)
    print(f"coverage over {total} functions: construct, functions, element types met (of {len(types)})")
    for construct in CONSTRUCTS:
        met = [t for t in types if counts[("cell", construct, t)]]
        print(f"  {construct:28} {counts[('construct', construct)]:8}  {len(met):2}  "
              f"{'all' if len(met) == len(types) else ', '.join(met)}")
    traced = counts[("trace functions",)]
    if traced:
        print(f"trace-time translations: {traced}, called {counts[('trace calls',)]} times")
        for construct in TRACE_CONSTRUCTS:
            met = [t for t in types if counts[("cell", construct, t)]]
            print(f"  {construct:34} {counts[('construct', construct)]:8}  {', '.join(met)}")
    opsets = sorted(k[1] for k in counts if k[0] == "opset")
    print("  opsets: " + ", ".join(f"{v}: {counts[('opset', v)]}" for v in opsets))
