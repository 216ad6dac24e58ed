"""Seeded generator of valid ONNX Script modules.

``generate(seed)`` returns a ``Program``: the text of a module of one to four functions, and
for each function the call the oracle makes (its inputs' element types and shapes, and the
attributes it passes). The same seed always gives the same text.

Every value the generator writes has a known element type and a concrete shape, so that each
operator it calls is given types ONNX Runtime's CPU kernels take (``KERNELS``) and shapes that
fit. Programs combine, at random: arithmetic, comparisons and logic on every element type ONNX
Runtime computes, casts, operators, Python literals and module constants as operands, attributes
(with and without defaults, passed or left to the default, used as tensors, as operator
attributes and in conditions), ``if``/``elif``/``else``, ``for`` and ``while`` loops (with a
trailing ``break``), subscripts and slices, sequences, optional inputs (given or not by the
call; never read, see `ProgramWriter.function`), nested ``@graph()`` bodies (``Scan``), calls
between the module's functions, and every ONNX opset from 15 to the newest onnxscript 0.7.2
knows. Trace-time translations come from `trace_generator`.
"""

from __future__ import annotations

import ast
import json
import random
from dataclasses import dataclass, field

# Opsets 15..27: onnxscript 0.7.2 exports 1-23 from `onnxscript`, all from `onnxscript.onnx_opset`.
OPSETS = list(range(15, 28))

# Element type -> (onnxscript type name, kind): f float, i signed int, u unsigned int, b bool.
ELEMENT_TYPES: dict[str, tuple[str, str]] = {
    "float32": ("FLOAT", "f"),
    "float64": ("DOUBLE", "f"),
    "float16": ("FLOAT16", "f"),
    "int8": ("INT8", "i"),
    "int16": ("INT16", "i"),
    "int32": ("INT32", "i"),
    "int64": ("INT64", "i"),
    "uint8": ("UINT8", "u"),
    "uint16": ("UINT16", "u"),
    "uint32": ("UINT32", "u"),
    "uint64": ("UINT64", "u"),
    "bool": ("BOOL", "b"),
}
NUMERIC = [t for t, (_, k) in ELEMENT_TYPES.items() if k != "b"]
FLOATS = [t for t, (_, k) in ELEMENT_TYPES.items() if k == "f"]
SIGNED = [t for t, (_, k) in ELEMENT_TYPES.items() if k in "fi"]

_F = set(FLOATS)
_ALL_NUMERIC = set(NUMERIC)
# The element types ONNX Runtime 1.32's CPU kernels take, per operator (measured by
# `test_difftest.py::test_kernel_table_matches_onnxruntime`, which fails if this table
# promises a kernel ONNX Runtime lacks).
KERNELS: dict[str, set[str]] = {
    "Abs": _ALL_NUMERIC,
    "Neg": set(SIGNED),
    "Relu": _F | {"int8", "int32"},
    "Sigmoid": _F,
    "Tanh": _F,
    "Exp": _F,
    "Sqrt": _F,
    "Floor": _F,
    "Ceil": _F,
    "Sign": _ALL_NUMERIC,
    "Reciprocal": _F,
    "Sin": _F,
    "Log": _F,
    "Add": _ALL_NUMERIC,
    "Sub": _ALL_NUMERIC,
    "Mul": _ALL_NUMERIC,
    "Div": _ALL_NUMERIC,
    "Mod": _ALL_NUMERIC,
    "Pow": _F | {"int32", "int64"},
    "Max": _F | {"int8", "int32", "int64", "uint8", "uint32", "uint64"},
    "Min": _F | {"int8", "int32", "int64", "uint8", "uint32", "uint64"},
    "Less": _ALL_NUMERIC,
    "Greater": _ALL_NUMERIC,
    "LessOrEqual": _ALL_NUMERIC,
    "GreaterOrEqual": _ALL_NUMERIC,
    "Equal": _ALL_NUMERIC | {"bool"},
    "And": {"bool"},
    "Or": {"bool"},
    "Xor": {"bool"},
    "Not": {"bool"},
    "Where": _F | {"int8", "int32", "int64", "uint8", "uint32"},
    "ReduceSum": _F | {"int32", "int64"},
    "ReduceMax": _F | {"int8", "int32", "int64", "uint8"},
    "ReduceMin": _F | {"int8", "int32", "int64", "uint8"},
    "MatMul": {"float32", "float64", "int32", "int64"},
}
UNARY = ["Abs", "Neg", "Relu", "Sigmoid", "Tanh", "Exp", "Sqrt", "Floor", "Ceil", "Sign",
         "Reciprocal", "Sin", "Log"]
COMPARISONS = {"<": "Less", ">": "Greater", "<=": "LessOrEqual", ">=": "GreaterOrEqual",
               "==": "Equal", "!=": "Equal"}
REDUCTIONS = ["ReduceSum", "ReduceMax", "ReduceMin"]
SHAPES = [(), (3,), (2, 3), (4,), (3, 2)]


@dataclass
class Var:
    name: str
    dtype: str
    shape: tuple[int, ...]


@dataclass
class Attr:
    name: str
    kind: str  # "float", "int" or "bool"
    default: object | None  # None: no default, the call must pass it
    call_value: object | None  # None: the call leaves it to the default


@dataclass
class Param:
    var: Var
    optional: bool = False
    passed: bool = True  # an optional input the call gives


@dataclass
class FunctionSpec:
    name: str
    params: list[Param]
    attrs: list[Attr]
    outputs: list[Var]


@dataclass
class Program:
    seed: int
    opset: int
    source: str
    functions: list[FunctionSpec] = field(default_factory=list)
    kind: str = "script"  # or "trace": trace-time translations (trace_generator)
    trace_calls: dict | None = None  # a trace program's calls, as the exporter describes them

    def calls(self) -> dict:
        """The calls the oracle makes, as saved in a case file's header."""
        if self.trace_calls is not None:
            return self.trace_calls
        return {
            f.name: {
                "inputs": {
                    p.var.name: (f"{p.var.dtype}[{','.join(map(str, p.var.shape))}]" if p.passed else None)
                    for p in f.params
                },
                "attrs": {a.name: ast.literal_eval(a.call_value) for a in f.attrs if a.call_value is not None},
                "attr_types": {a.name: a.kind for a in f.attrs},
            }
            for f in self.functions
        }


HEADER = "# difftest: "


def with_header(program: Program) -> str:
    """The program's text with its calls in a header comment (what case files store)."""
    meta = {"seed": program.seed, "calls": program.calls()}
    if program.kind != "script":
        meta["kind"] = program.kind
    return HEADER + json.dumps(meta, sort_keys=True) + "\n" + program.source


def read_header(text: str) -> dict:
    first = text.split("\n", 1)[0]
    if not first.startswith(HEADER):
        raise ValueError("a difftest case starts with a `# difftest: {...}` header line")
    return json.loads(first[len(HEADER):])


def opset_import(version: int) -> str:
    module = "onnxscript" if version <= 23 else "onnxscript.onnx_opset"
    return f"from {module} import opset{version} as op"


class Budget(Exception):
    """Raised when no expression of the wanted type can be built; the caller tries another."""


class FunctionWriter:
    """Writes one function's body, tracking every variable's element type and shape."""

    def __init__(self, rng: random.Random, name: str, program: "ProgramWriter"):
        self.rng = rng
        self.name = name
        self.program = program
        self.lines: list[str] = []
        self.indent = 1
        self.env: list[Var] = []
        self.counter = 0
        self.attrs: list[Attr] = []
        self.loop_index: Var | None = None
        self.nesting = 0
        # The element types this function computes in: two or three, to keep values flowing.
        self.palette = rng.sample(NUMERIC, rng.randint(1, 3))
        self.shapes = rng.sample(SHAPES, rng.randint(1, 3))

    # -- names and lines ------------------------------------------------------------------

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def vars_of(self, dtype: str, shape: tuple[int, ...]) -> list[Var]:
        return [v for v in self.env if v.dtype == dtype and v.shape == shape]

    # -- expressions ----------------------------------------------------------------------

    def literal(self, dtype: str) -> str:
        kind = ELEMENT_TYPES[dtype][1]
        if kind == "f":
            return self.rng.choice(["0.5", "2.0", "1.5", "-1.0", "3.0"])
        if kind == "u":
            return str(self.rng.randint(1, 5))
        return str(self.rng.choice([1, 2, 3, -2]))

    def expr(self, dtype: str, shape: tuple[int, ...], depth: int) -> str:
        """Source of an expression of element type `dtype` and shape `shape`."""
        choices = []
        existing = self.vars_of(dtype, shape)
        if existing:
            choices += ["var"] * 4
        if depth > 0:
            choices += ["unary", "binary", "binary", "cast", "where", "compare", "logic",
                        "reduce", "attr", "index", "const"]
        if not choices:
            choices = ["cast"] if depth >= 0 else []
        self.rng.shuffle(choices)
        for choice in choices:
            try:
                text = getattr(self, f"_expr_{choice}")(dtype, shape, depth - 1)
            except Budget:
                continue
            if text is not None:
                return text
        raise Budget()

    def _expr_var(self, dtype, shape, depth):
        found = self.vars_of(dtype, shape)
        return self.rng.choice(found).name if found else None

    def _expr_unary(self, dtype, shape, depth):
        ops = [o for o in UNARY if dtype in KERNELS[o]]
        if not ops:
            return None
        op = self.rng.choice(ops)
        inner = self.expr(dtype, shape, depth)
        if op == "Neg" and self.rng.random() < 0.5:
            return f"-({inner})"
        return f"op.{op}({inner})"

    def _expr_binary(self, dtype, shape, depth):
        kind = ELEMENT_TYPES[dtype][1]
        if kind == "b":
            return None
        ops = ["+", "-", "*", "max", "min"]
        if kind == "f":
            ops += ["/", "**", "%"]
        else:
            ops += ["/lit", "%lit"]
        op = self.rng.choice(ops)
        left = self.expr(dtype, shape, depth)
        if op in ("max", "min"):
            name = {"max": "Max", "min": "Min"}[op]
            if dtype not in KERNELS[name]:
                return None
            return f"op.{name}({left}, {self.operand(dtype, shape, depth)})"
        if op in ("/lit", "%lit"):
            # Integer division and remainder only by a positive literal: by zero, ONNX
            # Runtime's integer kernels stop the process.
            return f"({left}) {op[0]} {self.rng.randint(2, 4)}"
        if op == "**":
            if self.rng.random() < 0.5:
                return f"({left}) ** 2.0"
        if op == "%":
            return f"({left}) % {self.rng.choice(['1.5', '2.0', '0.75'])}"
        right = self.operand(dtype, shape, depth)
        return f"({left}) {op} ({right})" if not right[0].isdigit() and right[0] != "-" else f"({left}) {op} {right}"

    def operand(self, dtype, shape, depth) -> str:
        """A second operand: a value of the same shape, a scalar that broadcasts, a literal
        or a module constant."""
        r = self.rng.random()
        if r < 0.25:
            return self.literal(dtype)
        if r < 0.35 and ELEMENT_TYPES[dtype][1] == "f":
            return self.program.constant("float")
        if r < 0.5 and shape != ():
            try:
                return self.expr(dtype, (), depth)
            except Budget:
                pass
        return self.expr(dtype, shape, depth)

    def _expr_cast(self, dtype, shape, depth):
        source = self.rng.choice(self.palette + ["bool"])
        if source == dtype:
            return None
        inner = self.expr(source, shape, depth) if depth >= 0 else None
        if inner is None:
            return None
        if self.rng.random() < 0.3:
            like = self.vars_of(dtype, shape) or [v for v in self.env if v.dtype == dtype]
            if like:
                return f"op.CastLike({inner}, {self.rng.choice(like).name})"
        return f"op.Cast({inner}, to={ELEMENT_TYPES[dtype][0]}.dtype)"

    def _expr_where(self, dtype, shape, depth):
        if dtype not in KERNELS["Where"]:
            return None
        cond = self.expr("bool", shape, depth)
        return f"op.Where({cond}, {self.expr(dtype, shape, depth)}, {self.expr(dtype, shape, depth)})"

    def _expr_compare(self, dtype, shape, depth):
        if dtype != "bool":
            return None
        source = self.rng.choice(self.palette)
        symbol = self.rng.choice(list(COMPARISONS))
        left = self.expr(source, shape, depth)
        right = self.operand(source, shape, depth)
        return f"({left}) {symbol} ({right})"

    def _expr_logic(self, dtype, shape, depth):
        if dtype != "bool":
            return None
        r = self.rng.random()
        if r < 0.25:
            return f"op.Not({self.expr('bool', shape, depth)})"
        symbol = self.rng.choice(["&", "|", "xor"])
        left, right = self.expr("bool", shape, depth), self.expr("bool", shape, depth)
        if symbol == "xor":
            return f"op.Xor({left}, {right})"
        return f"({left}) {symbol} ({right})"

    def _expr_reduce(self, dtype, shape, depth):
        if shape != ():
            return None
        ops = [o for o in REDUCTIONS if dtype in KERNELS[o]]
        if not ops:
            return None
        source_shape = self.rng.choice([s for s in self.shapes if s != ()] or [(3,)])
        return f"op.{self.rng.choice(ops)}({self.expr(dtype, source_shape, depth)}, keepdims=0)"

    def _expr_attr(self, dtype, shape, depth):
        """An attribute used as a tensor: a float one with FLOAT values, an int one with
        INT64 (as onnxscript makes them: a Constant of the attribute's own type)."""
        wanted = {"float32": "float", "int64": "int"}.get(dtype)
        found = [a for a in self.attrs if a.kind == wanted]
        if not found:
            return None
        attr = self.rng.choice(found)
        if shape == ():
            return f"op.Add({self.expr(dtype, shape, depth)}, {attr.name})" if self.rng.random() < 0.5 else None
        return f"({self.expr(dtype, shape, depth)}) * {attr.name}"

    def _expr_index(self, dtype, shape, depth):
        """A subscript that yields the wanted shape from a larger value."""
        rng = self.rng
        if len(shape) == 1:
            (n,) = shape
            options = [(s, f"[{rng.randrange(s[0])}]") for s in self.shapes if len(s) == 2 and s[1] == n]
            options += [(s, f"[:, {rng.randrange(s[1])}]") for s in self.shapes if len(s) == 2 and s[0] == n]
            options += [(s, "[::-1]") for s in self.shapes if s == shape]
            options += [((n + 1,), "[1:]"), ((n + 2,), f"[1:{n + 1}]")]
        elif shape == ():
            options = [(s, f"[{rng.randrange(s[0]) - (rng.random() < 0.3)}]") for s in self.shapes if len(s) == 1]
            if self.loop_index is not None:
                options += [(s, f"[{self.loop_index.name}]") for s in self.shapes if len(s) == 1 and s[0] >= 3]
        else:
            options = [(shape, "[::-1]"), (shape, "[:, ::-1]"), ((shape[0] + 1, shape[1]), "[1:]"),
                       ((shape[0], shape[1] + 1), "[:, :-1]")]
        if not options:
            return None
        source_shape, subscript = rng.choice(options)
        source = self.expr(dtype, source_shape, depth)
        if not source.isidentifier():
            source = f"({source})"
        return source + subscript

    def _expr_const(self, dtype, shape, depth):
        """A module constant or a literal as one operand of `+`."""
        if ELEMENT_TYPES[dtype][1] == "b":
            return None
        value = self.program.constant("float" if ELEMENT_TYPES[dtype][1] == "f" else "int")
        return f"{value} + ({self.expr(dtype, shape, depth)})"

    # -- statements -----------------------------------------------------------------------

    def statements(self, count: int) -> None:
        kinds = ["assign"] * 6 + ["reshape", "sequence", "call", "call"]
        if self.nesting < 2:
            kinds += ["if", "for", "while", "scan"]
        for _ in range(count):
            kind = self.rng.choice(kinds)
            state = self.snapshot()
            try:
                getattr(self, f"_stmt_{kind}")()
            except Budget:
                self.restore(state)
                try:
                    self._stmt_assign()
                except Budget:
                    self.restore(state)

    def snapshot(self) -> tuple:
        return (len(self.lines), self.indent, self.nesting, list(self.env), list(self.shapes),
                self.loop_index)

    def restore(self, state: tuple) -> None:
        lines, self.indent, self.nesting, env, shapes, self.loop_index = state
        del self.lines[lines:]
        self.env, self.shapes = env, shapes

    def use(self, targets: list[Var]) -> None:
        """Read what a block assigned: onnxscript gives an `if` or a loop no outputs, and
        refuses it, when nothing it assigns is used afterwards."""
        for v in targets:
            self.assign(v.dtype, v.shape, v.name if self.rng.random() < 0.5 else f"op.Identity({v.name})")

    def assign(self, dtype: str, shape: tuple[int, ...], text: str, name: str | None = None) -> Var:
        if self.nesting and text.isidentifier():
            # Inside a branch or loop body, `a = b` is written `a = op.Identity(b)`: the
            # oracle tells onnxscript's miswired blocks by their output names, and an alias
            # has no name of its own (oracle.miswired).
            text = f"op.Identity({text})"
        var = Var(name or self.fresh(), dtype, shape)
        self.emit(f"{var.name} = {text}")
        if name is None:
            self.env.append(var)
        return var

    def _stmt_assign(self):
        for _ in range(8):
            dtype = self.rng.choice(self.palette + ["bool"])
            shape = self.rng.choice(self.shapes)
            try:
                self.assign(dtype, shape, self.expr(dtype, shape, self.rng.randint(1, 3)))
                return
            except Budget:
                continue
        raise Budget()

    def _stmt_reshape(self):
        """A value of a new shape: transposed, flattened, concatenated or unsqueezed."""
        candidates = [v for v in self.env if v.shape != ()]
        if not candidates:
            raise Budget()
        v = self.rng.choice(candidates)
        r = self.rng.random()
        if len(v.shape) == 2 and r < 0.3:
            new = self.assign(v.dtype, (v.shape[1], v.shape[0]), f"op.Transpose({v.name}, perm=[1, 0])")
        elif len(v.shape) == 2 and r < 0.5:
            new = self.assign(v.dtype, (v.shape[0] * v.shape[1],), f"op.Reshape({v.name}, [-1])")
        elif r < 0.75:
            shape = (v.shape[0] * 2,) + v.shape[1:]
            new = self.assign(v.dtype, shape, f"op.Concat({v.name}, {v.name}, axis=0)")
        else:
            new = self.assign(v.dtype, (1,) + v.shape, f"op.Unsqueeze({v.name}, [0])")
        if new.shape not in self.shapes and len(new.shape) <= 2:
            self.shapes.append(new.shape)
        if len(v.shape) == 2 and v.dtype in KERNELS["MatMul"] and self.rng.random() < 0.5:
            m, k = v.shape
            self.assign(v.dtype, (m, m), f"{v.name} @ op.Transpose({v.name}, perm=[1, 0])")

    def _stmt_sequence(self):
        dtype = self.rng.choice(self.palette)
        shape = self.rng.choice([s for s in self.shapes if s != ()] or [(3,)])
        items = [self.expr(dtype, shape, 1) for _ in range(self.rng.randint(1, 3))]
        seq = self.fresh("s")
        self.emit(f"{seq} = op.SequenceConstruct({', '.join(items)})")
        if self.rng.random() < 0.5:
            position = self.rng.randrange(-len(items), len(items))
            self.assign(dtype, shape, f"op.SequenceAt({seq}, {position})")
        else:
            self.assign(dtype, (shape[0] * len(items),) + shape[1:], f"op.ConcatFromSequence({seq}, axis=0)")

    def _stmt_call(self):
        """A call of a function defined earlier in the module."""
        callee = self.program.callable_function(self.rng)
        if callee is None:
            raise Budget()
        args = []
        for p in callee.params:
            if p.optional:
                break  # unread, so left out: an attribute may come first in the signature
            # onnxscript takes names, not expressions, as a function call's arguments.
            text = self.expr(p.var.dtype, p.var.shape, 1)
            if not text.isidentifier():
                text = self.assign(p.var.dtype, p.var.shape, text).name
            args.append(text)
        for a in callee.attrs:
            if a.default is None or self.rng.random() < 0.5:
                args.append(f"{a.name}={self.program.attr_literal(a.kind, self.rng)}")
        targets = [Var(self.fresh(), o.dtype, o.shape) for o in callee.outputs]
        self.emit(f"{', '.join(t.name for t in targets)} = {callee.name}({', '.join(args)})")
        self.env.extend(targets)

    def condition(self) -> str:
        r = self.rng.random()
        bools = [a for a in self.attrs if a.kind == "bool"]
        numbers = [a for a in self.attrs if a.kind in ("float", "int")]
        if r < 0.25 and bools:
            return self.rng.choice(bools).name
        if r < 0.35 and numbers:
            a = self.rng.choice(numbers)
            return f"{a.name} > {'1.0' if a.kind == 'float' else '1'}"
        return self.expr("bool", (), 3)

    def carried(self, count: int) -> list[Var]:
        """Existing variables a nested body reassigns (same type and shape)."""
        own = [v for v in self.env if not v.name.startswith(("x", "i"))]
        own = own or [v for v in self.env if not v.name.startswith("i")]
        return self.rng.sample(own, min(count, len(own)))

    def body(self, reassigned: list[Var], extra: int) -> None:
        """A nested block: a few local statements, then each of `reassigned` recomputed."""
        saved_env = list(self.env)
        self.indent += 1
        self.nesting += 1
        self.statements(extra)
        for v in reassigned:
            self.recompute(v)
        self.nesting -= 1
        self.indent -= 1
        self.env = saved_env  # values first assigned inside the block are local to it

    def recompute(self, v: Var) -> None:
        """Assign `v` again, in a nested block. Never `v = v`: in a loop body onnxscript 0.7.2
        then wires the loop's outputs to the wrong variables (docs/robustness.md)."""
        text = self.expr(v.dtype, v.shape, 2)
        if text == v.name:
            text = f"op.Identity({v.name})"
        self.assign(v.dtype, v.shape, text, name=v.name)

    def _stmt_if(self):
        targets = self.carried(self.rng.randint(1, 2))
        if not targets:
            raise Budget()
        condition = self.condition()
        self.emit(f"if {condition}:")
        self.body(targets, self.rng.randint(0, 2))
        for _ in range(self.rng.randint(0, 2) if self.nesting == 0 else 0):
            self.emit(f"elif {self.condition()}:")
            self.body(self.rng.sample(targets, self.rng.randint(1, len(targets))), self.rng.randint(0, 1))
        if self.rng.random() < 0.7:
            self.emit("else:")
            self.body(self.rng.sample(targets, self.rng.randint(1, len(targets))), self.rng.randint(0, 1))
        self.use(targets)

    def _stmt_for(self):
        targets = self.carried(self.rng.randint(1, 2))
        if not targets:
            raise Budget()
        ints = [a for a in self.attrs if a.kind == "int"]
        count = self.rng.choice(ints).name if ints and self.rng.random() < 0.3 else str(self.rng.randint(0, 3))
        index = Var(self.fresh("i"), "int64", ())
        self.emit(f"for {index.name} in range({count}):")
        outer_index = self.loop_index
        self.loop_index = index
        self.env.append(index)
        self.indent += 1
        self.nesting += 1
        saved_env = list(self.env)
        self.statements(self.rng.randint(0, 2))
        for v in targets:
            self.recompute(v)
        if self.rng.random() < 0.3:
            # onnxscript takes `if NAME: break` as the last statement of a loop body only.
            stop = self.fresh("stop")
            self.emit(f"{stop} = {self.expr('bool', (), 2)}")
            self.emit(f"if {stop}:")
            self.emit("    break")
        self.env = saved_env
        self.nesting -= 1
        self.indent -= 1
        self.env.remove(index)
        self.loop_index = outer_index
        self.use(targets)

    def _stmt_while(self):
        targets = self.carried(self.rng.randint(1, 2))
        if not targets:
            raise Budget()
        counter, cond = self.fresh("k"), self.fresh("c")
        limit = self.rng.randint(0, 3)
        self.emit(f"{counter} = op.Constant(value_int=0)")
        self.emit(f"{cond} = {counter} < {limit}")
        self.emit(f"while {cond}:")
        self.indent += 1
        self.nesting += 1
        saved_env = list(self.env)
        self.statements(self.rng.randint(0, 2))
        for v in targets:
            self.recompute(v)
        self.emit(f"{counter} = {counter} + 1")
        self.emit(f"{cond} = {counter} < {limit}")
        self.env = saved_env
        self.nesting -= 1
        self.indent -= 1
        self.use(targets)

    def _stmt_scan(self):
        """`op.Scan` over the rows of a 2-D value, with a nested `@graph()` body that sums
        them into a state (and reads an outer value by name)."""
        rows = [v for v in self.env if len(v.shape) == 2 and v.dtype in KERNELS["Add"]]
        if not rows:
            raise Budget()
        v = self.rng.choice(rows)
        n = v.shape[1]
        type_name = ELEMENT_TYPES[v.dtype][0]
        body = self.fresh("body")
        state, row = self.fresh("state"), self.fresh("row")
        self.emit("@graph()")
        self.emit(f"def {body}({state}: {type_name}[{n}], {row}: {type_name}[{n}]):")
        self.emit(f"    total = {state} + {row}")
        self.emit("    return total, total")
        init = self.fresh()
        self.emit(f"{init} = op.CastLike(op.ConstantOfShape([{n}]), {v.name})")
        final, scanned = self.fresh(), self.fresh()
        self.emit(f"{final}, {scanned} = op.Scan({init}, {v.name}, body={body}, num_scan_inputs=1)")
        self.env.append(Var(final, v.dtype, (n,)))
        self.env.append(Var(scanned, v.dtype, v.shape))


class ProgramWriter:
    """Writes a module: imports, constants, then functions that may call earlier ones."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seed = seed
        self.opset = self.rng.choice(OPSETS)
        self.constants: dict[str, str] = {}  # name -> value text
        self.functions: list[FunctionSpec] = []
        self.texts: list[str] = []

    def constant(self, kind: str) -> str:
        """A literal, or the name of a module constant holding one."""
        value = self.rng.choice(["0.25", "1.5", "2.0"]) if kind == "float" else str(self.rng.randint(1, 3))
        if self.rng.random() < 0.5:
            return value
        name = f"{'SCALE' if kind == 'float' else 'COUNT'}_{len(self.constants) + 1}"
        self.constants[name] = value
        return name

    def attr_literal(self, kind: str, rng: random.Random) -> str:
        return {"float": rng.choice(["0.5", "1.5", "2.0"]), "int": str(rng.randint(0, 3)),
                "bool": rng.choice(["True", "False"])}[kind]

    def callable_function(self, rng: random.Random) -> FunctionSpec | None:
        return rng.choice(self.functions) if self.functions else None

    def function(self, index: int) -> None:
        rng = self.rng
        writer = FunctionWriter(rng, f"f{index}", self)
        params: list[Param] = []
        # One input of each shape the function computes in, then optional inputs.
        for shape in writer.shapes:
            var = Var(writer.fresh("x"), rng.choice(writer.palette), shape)
            params.append(Param(var))
        for _ in range(rng.choice([0, 0, 1])):
            var = Var(writer.fresh("x"), rng.choice(writer.palette), rng.choice(writer.shapes))
            params.append(Param(var, optional=True, passed=rng.random() < 0.5))
        for _ in range(rng.randint(0, 2)):
            kind = rng.choice(["float", "int", "bool"])
            default = self.attr_literal(kind, rng) if rng.random() < 0.6 else None
            call = self.attr_literal(kind, rng) if default is None or rng.random() < 0.5 else None
            writer.attrs.append(Attr(writer.fresh("a"), kind, default, call))
        # Optional inputs are in the signature, passed or not by the call, and never read:
        # onnxscript 0.7.2 does not take `is None`, and onnxsc refuses on purpose (E0602)
        # to read one where it may be None.
        writer.env = [p.var for p in params if not p.optional]
        writer.statements(rng.randint(2, 7))
        outputs = [v for v in writer.env if not v.name.startswith("x")] or writer.env
        returned = rng.sample(outputs[-4:], min(len(outputs[-4:]), rng.randint(1, 2)))
        signature = []
        for p in params:
            annotation = self.annotation(p.var, rng)
            signature.append(f"{p.var.name}: Optional[{annotation}] = None" if p.optional else f"{p.var.name}: {annotation}")
        for a in writer.attrs:
            default = f" = {a.default}" if a.default is not None else ""
            signature.append(f"{a.name}: {a.kind}{default}")
        # Parameters without defaults may not follow ones with: order as Python requires.
        signature.sort(key=lambda s: "=" in s)
        ordered = {s.split(":")[0]: i for i, s in enumerate(signature)}
        params.sort(key=lambda p: ordered[p.var.name])
        writer.attrs.sort(key=lambda a: ordered[a.name])
        result = ", ".join(ELEMENT_TYPES[v.dtype][0] for v in returned)
        result = result if len(returned) == 1 else f"Tuple[{result}]"
        # onnxscript needs `default_opset` when the body calls no `op.` operator.
        decorator = "@script()" if "op." in "".join(writer.lines) and rng.random() < 0.7 else "@script(default_opset=op)"
        lines = ["", "", decorator, f"def {writer.name}({', '.join(signature)}) -> {result}:"]
        lines += writer.lines
        lines.append(f"    return {', '.join(v.name for v in returned)}")
        self.texts.append("\n".join(lines))
        # Attributes move to the end of a call's inputs anyway: the spec keeps source order.
        self.functions.append(FunctionSpec(writer.name, params, writer.attrs,
                                           [Var("", v.dtype, v.shape) for v in returned]))

    @staticmethod
    def annotation(var: Var, rng: random.Random) -> str:
        name = ELEMENT_TYPES[var.dtype][0]
        r = rng.random()
        if r < 0.3 or not var.shape:
            return name
        if r < 0.5 and var.shape:
            dims = ['"N"'] + [str(d) for d in var.shape[1:]]
            return f"{name}[{', '.join(dims)}]"
        return f"{name}[{', '.join(str(d) for d in var.shape)}]"

    def source(self) -> str:
        types = sorted({name for name, _ in ELEMENT_TYPES.values()})
        head = [
            "from typing import Optional, Tuple",
            "",
            "from onnxscript import " + ", ".join(types + ["graph", "script"]),
            opset_import(self.opset),
        ]
        if self.constants:
            head.append("")
            head += [f"{name} = {value}" for name, value in self.constants.items()]
        return "\n".join(head) + "\n" + "\n".join(self.texts) + "\n"


def generate(seed: int) -> Program:
    """The program of `seed`: one to four functions, later ones may call earlier ones."""
    writer = ProgramWriter(seed)
    for index in range(writer.rng.randint(1, 4)):
        writer.function(index)
    return Program(seed, writer.opset, writer.source(), writer.functions)
