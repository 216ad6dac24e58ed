"""Seeded generator of trace-time translations (`@torch_op(..., trace_only=True)`).

A trace-time translation is Python the exporter runs once per call, over what the call knows:
attribute values, which optional inputs are None, each tensor's element type and shape. The
generator writes modules of such translations (branches on those facts, Python arithmetic on
attributes and dimensions, loops unrolled at trace time, constants made with `ir.tensor`, calls
between translations) and, for each, a few calls with random facts: the oracle traces each call
as the exporter does and has onnxsc specialise it, then runs both in ONNX Runtime.
"""

from __future__ import annotations

import random

from .generator import ELEMENT_TYPES, KERNELS, OPSETS, Program, opset_import

# Element types a call may give: those for which every operator below has ONNX Runtime
# kernels (`generator.KERNELS`; INT16 and the unsigned types lack Where, Max, Min or Neg).
CALL_TYPES = ["float32", "float64", "float16", "int32", "int64", "int8"]
IR_TYPES = {t: ELEMENT_TYPES[t][0] for t in CALL_TYPES}
_OPERATORS = ["Abs", "Neg", "Sign", "Add", "Sub", "Mul", "Max", "Min", "Where", "Less", "Greater", "Equal"]
assert all(set(CALL_TYPES) <= KERNELS[o] for o in _OPERATORS), "a call type some operator lacks"
# Operators of a namespace nobody declares: onnxsc warns (W0504) that it cannot check their
# signatures, and neither onnxscript nor the oracle needs PyTorch to know them.
TORCH_NAMESPACE = "difftest"


class TraceWriter:
    """Writes one translation: tensors keep the element type of `x`, their shapes vary."""

    def __init__(self, rng: random.Random, name: str, callee: "TraceSpec | None"):
        self.rng = rng
        self.name = name
        self.callee = callee
        self.lines: list[str] = []
        self.indent = 1
        self.counter = 0
        self.tensors = ["x"]  # names holding a tensor of x's element type and shape
        self.attrs: dict[str, str] = {}  # name -> kind

    def fresh(self) -> str:
        self.counter += 1
        return f"t{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def tensor(self) -> str:
        return self.rng.choice(self.tensors)

    def target(self) -> str:
        """A name to assign: never `x`, whose element type and shape the facts are about (in
        the exporter, a node's output has neither while the translation runs)."""
        own = [t for t in self.tensors if t != "x"]
        return self.rng.choice(own) if own and self.rng.random() < 0.4 else self.fresh()

    def scalar(self) -> str:
        """A Python number the call decides: an attribute, a dimension, or arithmetic on them."""
        rng = self.rng
        options = ["len(x.shape)", "x.shape[0]", "x.shape[-1]", str(rng.randint(1, 3))]
        options += [a for a, kind in self.attrs.items() if kind in ("int", "float")]
        left, right = rng.choice(options), rng.choice(options)
        return rng.choice([left, f"({left} + {right})", f"({left} * {right})", f"max({left}, {right})"])

    def constant(self) -> str:
        return f"ir.tensor({self.scalar()}, dtype=x.dtype)"

    def value(self, depth: int = 2) -> str:
        """A tensor expression of x's element type and shape."""
        rng = self.rng
        if depth <= 0 or rng.random() < 0.3:
            return self.tensor()
        r = rng.random()
        if r < 0.3:
            return f"op.{rng.choice(['Abs', 'Neg', 'Identity', 'Sign'])}({self.value(depth - 1)})"
        if r < 0.6:
            name = rng.choice(['Add', 'Sub', 'Mul', 'Max', 'Min'])
            # A constant operand of the variadic Max and Min needs its type from the other
            # operand, which the exporter's recorder does not know for a node's output.
            constant = name in ("Add", "Sub", "Mul") and rng.random() < 0.5
            other = self.constant() if constant else self.value(depth - 1)
            return f"op.{name}({self.value(depth - 1)}, {other})"
        if r < 0.75:
            return f"op.Where({self.condition_tensor()}, {self.value(depth - 1)}, {self.value(depth - 1)})"
        if r < 0.85:
            return f"op.CastLike(op.Cast({self.value(depth - 1)}, to=ir.DataType.FLOAT), x)"
        return f"op.Cast({self.value(depth - 1)}, to=x.dtype)"

    def condition_tensor(self) -> str:
        return f"op.{self.rng.choice(['Less', 'Greater', 'Equal'])}({self.tensor()}, {self.constant()})"

    def fact(self) -> str:
        """A Python condition on what the call knows."""
        rng = self.rng
        options = [
            f"len(x.shape) == {rng.randint(1, 2)}",
            f"x.shape[0] > {rng.randint(1, 3)}",
            f"x.dtype == ir.DataType.{rng.choice(list(IR_TYPES.values()))}",
            f"x.dtype in (ir.DataType.FLOAT, ir.DataType.DOUBLE)",
            f"{self.scalar()} > {rng.randint(1, 4)}",
        ]
        if self.optional:
            options += ["y is None", "y is not None"]
        for a, kind in self.attrs.items():
            if kind == "bool":
                options += [a, f"not {a}"]
            if kind == "str":
                options.append(f"{a} == {rng.choice(ATTR_DEFAULTS['str'])}")
        fact = rng.choice(options)
        if rng.random() < 0.2:
            fact = f"{fact} and {rng.choice(options)}"
        return fact

    optional = False

    def statements(self, count: int, depth: int = 0) -> None:
        for _ in range(count):
            r = self.rng.random()
            if r < 0.45 or depth >= 2:
                self.assign()
            elif r < 0.7:
                self.branch(depth)
            elif r < 0.8:
                self.loop(depth)
            elif r < 0.9:
                self.reshape()
            else:
                self.call()

    def assign(self) -> None:
        target = self.target()
        self.emit(f"{target} = {self.value()}")
        if target not in self.tensors:
            self.tensors.append(target)

    def branch(self, depth: int) -> None:
        """An `if` on facts: a name assigned in every branch is a tensor afterwards."""
        fact = self.fact()
        target = self.target()
        saved = list(self.tensors)
        self.emit(f"if {fact}:")
        self.indent += 1
        if fact == "y is not None" or fact.startswith("y is not None and"):
            self.tensors.append("y")
        self.statements(self.rng.randint(0, 2), depth + 1)
        self.emit(f"{target} = {self.value()}")
        self.indent -= 1
        self.tensors = list(saved)
        self.emit("else:")
        self.indent += 1
        if fact == "y is None":
            self.tensors.append("y")
        self.statements(self.rng.randint(0, 1), depth + 1)
        self.emit(f"{target} = {self.value()}")
        self.indent -= 1
        self.tensors = saved + ([target] if target not in saved else [])

    def loop(self, depth: int) -> None:
        """A Python loop, unrolled at trace time."""
        target = self.target()
        if target not in self.tensors:
            self.emit(f"{target} = {self.value()}")
            self.tensors.append(target)
        ints = [a for a, k in self.attrs.items() if k == "int"]
        count = self.rng.choice(ints + ["len(x.shape)", "2"])
        index = f"i{self.counter}"
        self.emit(f"for {index} in range({count}):")
        self.indent += 1
        self.emit(f"{target} = op.Add({target}, ir.tensor({index}, dtype=x.dtype))")
        self.indent -= 1

    def reshape(self) -> None:
        """A value shaped from the call's dimensions, reshaped back to x's shape."""
        t = self.fresh()
        self.emit(f"{t} = op.Reshape({self.value()}, [-1])")
        self.emit(f"{t} = op.Reshape({t}, list(x.shape))")
        self.tensors.append(t)

    def call(self) -> None:
        if self.callee is None:
            return self.assign()
        t = self.fresh()
        args = ["x"]  # the callee reads its facts, which only the call's own inputs carry
        for a, kind in self.callee.attrs.items():
            if self.rng.random() < 0.5:
                args.append(f"{a}={self.callee_value(kind)}")
        self.emit(f"{t} = {self.callee.name}({', '.join(args)})")
        self.tensors.append(t)

    def callee_value(self, kind: str) -> str:
        rng = self.rng
        return {"int": str(rng.randint(0, 3)), "float": rng.choice(["0.5", "2.0"]),
                "bool": rng.choice(["True", "False"]), "str": rng.choice(['"sum"', '"max"'])}[kind]


class TraceSpec:
    def __init__(self, name: str, attrs: dict[str, str], defaults: dict[str, str], optional: bool):
        self.name = name
        self.attrs = attrs
        self.defaults = defaults
        self.optional = optional


ATTR_DEFAULTS = {"int": ["1", "2"], "float": ["0.5", "1.5"], "bool": ["True", "False"], "str": ['"sum"', '"max"']}


def _calls(rng: random.Random, spec: TraceSpec) -> list[dict]:
    """Three calls with random facts, as the exporter describes them (docs/exporter.md)."""
    calls = []
    for _ in range(3):
        dtype = rng.choice(CALL_TYPES)
        shape = [rng.randint(1, 4) for _ in range(rng.randint(1, 2))]
        args = [{"tensor": {"dtype": IR_TYPES[dtype], "shape": shape}}]
        if spec.optional:
            args.append({"none": None} if rng.random() < 0.5 else {"tensor": {"dtype": IR_TYPES[dtype], "shape": shape}})
        kwargs = {}
        for a, kind in spec.attrs.items():
            if rng.random() < 0.6:
                value = rng.choice(ATTR_DEFAULTS[kind] + ["3", "0"] if kind == "int" else ATTR_DEFAULTS[kind])
                kwargs[a] = {kind: eval(value)}  # noqa: S307 - literals the generator wrote
        calls.append({"function": f"pkg.onnxscript.torch_lib::{spec.name}", "args": args, "kwargs": kwargs})
    return calls


def generate_trace(seed: int) -> Program:
    """Program `seed`: one or two trace-time translations (the second may call the first)."""
    rng = random.Random(seed)
    opset = rng.choice([v for v in OPSETS if v >= 18])  # ir.tensor constants and Reshape's list
    texts, specs, calls = [], [], {}
    for index in range(rng.randint(1, 2)):
        name = f"f{index}"
        attrs = {f"a{k}": rng.choice(list(ATTR_DEFAULTS)) for k in range(rng.randint(0, 3))}
        defaults = {a: rng.choice(ATTR_DEFAULTS[kind]) for a, kind in attrs.items()}
        spec = TraceSpec(name, attrs, defaults, optional=rng.random() < 0.4)
        writer = TraceWriter(rng, name, specs[-1] if specs else None)
        writer.attrs = attrs
        writer.optional = spec.optional
        writer.statements(rng.randint(2, 6))
        result = writer.tensor() if writer.tensors != ["x"] else "op.Identity(x)"
        params = ["x: TTensor"] + (["y: Optional[TTensor] = None"] if spec.optional else [])
        params += [f"{a}: {kind} = {defaults[a]}" for a, kind in attrs.items()]
        texts.append("\n".join([
            "", "",
            f'@torch_op("{TORCH_NAMESPACE}::{name}", trace_only=True)',
            f"def {name}({', '.join(params)}) -> TTensor:",
            *writer.lines,
            f"    return {result}",
        ]))
        specs.append(spec)
        calls[name] = _calls(rng, spec)
    head = [
        "from typing import Optional",
        "",
        "import onnx_ir as ir",
        opset_import(opset),
        "from onnxscript.function_libs.torch_lib.registration import torch_op",
        "from onnxscript.function_libs.torch_lib.tensor_typing import TTensor",
    ]
    return Program(seed, opset, "\n".join(head) + "\n" + "\n".join(texts) + "\n", kind="trace", trace_calls=calls)
