"""Testing one operator's translation: the calls to judge, in the order that spreads a budget over
every kind of sample, each export judging the calls that share its facts, the first failure
shrunk, and the verdict.

The calls come from PyTorch's OpInfo samples (``opinfo``: as the database calls the function;
``direct``: the operator called with exactly what PyTorch passes it), or, for an operator
without one, from its schema (``schema``); then from them, variants (``generate``): attributes,
shapes, dtypes, and values. One call with dynamic dimensions checks that no shape is baked into
the model. An operator whose translation ran on fewer than ``min_samples`` calls is untested.

Every call is first judged by its facts alone (``facts``: its shapes and dtypes through the
translation and onnxsc's inference, against PyTorch's answer), which takes milliseconds: a call
refused there fails without an export, and the calls beyond the exports' budget are still
checked. With ``facts_only``, nothing is exported.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Optional

from onnxsc._optest import facts, generate, opinfo
from onnxsc._optest.calls import Call
from onnxsc._optest.judge import DROPPED, ONNX_NAMES, Exported, Verdict, expected_of, export, g
from onnxsc._optest.shrink import shrink, snippet

# The dtypes tried, in this order, where the operator and the translation take them.
DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "bool")


@dataclass
class Options:
    dtypes: tuple = DTYPES
    # Calls exported per operator; each also judges the value regimes of its call.
    samples: int = 30
    min_samples: int = 10
    seed: int = 0
    shrink: bool = True
    # The file under test, for the reproducing snippet.
    source: str = ""
    # Judge each call by its facts alone (shapes, dtypes, PyTorch's answer), without an export
    # or ONNX Runtime (``facts``): every call made, not ``samples`` of them.
    facts_only: bool = False


@dataclass
class Tally:
    """What the calls of one operator gave."""

    operator: str
    passed: int = 0
    failed: int = 0
    dropped: int = 0
    skipped: dict = field(default_factory=dict)
    # Calls compared, by where they come from (opinfo, direct, attribute, shape, ...).
    kinds: dict = field(default_factory=dict)
    worst: Optional[tuple] = None
    first_failure: Optional[str] = None
    failures: dict = field(default_factory=dict)
    shrunk: Optional[str] = None
    reproducer: Optional[str] = None
    untested: bool = False
    # Models exported: each judged its call and the calls that share its facts.
    exports: int = 0
    # Calls beyond the exports' budget that passed by their facts alone (values not judged).
    facts_only: int = 0

    @property
    def ran(self) -> int:
        return self.passed + self.failed

    def count(self, call: Call, verdict: Verdict, origin: Optional[str] = None) -> None:
        origin = origin or call.origin
        if verdict.outcome == "dropped":
            self.dropped += 1
            return
        if verdict.outcome == "skipped":
            self.skipped[verdict.message] = self.skipped.get(verdict.message, 0) + 1
            return
        self.kinds[origin] = self.kinds.get(origin, 0) + 1
        if verdict.worst is not None and (self.worst is None or verdict.worst[0] > self.worst[0]):
            self.worst = verdict.worst
        if verdict.outcome == "passed":
            self.passed += 1
            return
        self.failed += 1
        self.failures[origin] = self.failures.get(origin, 0) + 1
        if self.first_failure is None:
            self.first_failure = f"({origin}) {call.describe()}: {verdict.message}"


def accepted_dtypes(signature) -> Optional[set]:
    """The element types the translation's first tensor input accepts (None: any)."""
    from onnxsc._signature import ElementType, TypeVarType

    for i in signature.inputs:
        if isinstance(i.type, ElementType):
            return {i.type.name}
        if isinstance(i.type, TypeVarType) and i.type.bound:
            return set(i.type.bound)
        return None
    return None


def base_calls(entry, options: Options, rng) -> list:
    """The calls each export starts from, in the order they are judged: PyTorch's samples and
    every kind of variant of them, interleaved so that a budget reaches each kind."""
    import torch

    accepted = accepted_dtypes(entry.signature)
    dtypes = [d for d in options.dtypes if accepted is None or ONNX_NAMES.get(d) in accepted]
    first = dtypes[0] if dtypes else "float32"
    own: list = []
    for name in dtypes[:2]:
        own += opinfo.samples(entry.qualname, entry.overload, getattr(torch, name))
    if not own:
        own = schema_calls(entry.overload, getattr(torch, first), rng)
    direct = [c for c in own if c.origin in ("direct", "schema")]
    seen = generate.seen_values(direct)
    # Variants of the calls with the most to vary: the most dimensions, then the most elements.
    rich = sorted(direct or own, key=lambda c: -max((t.dim() * 1_000_000 + t.numel() for t in c.tensors()), default=0))
    attributes = _interleave(*(generate.attribute_variants(c, seen) for c in rich[:3]))
    shapes = _interleave(*(generate.shape_variants(c, rng) for c in rich[:3]))
    kinds = _interleave(*(generate.dtype_variants(c, accepted) for c in rich[:2]))
    if (accepted is None or "FLOAT16" in accepted) and rich and _outputs_follow_inputs(rich[0]):
        kinds = [c for c in (generate.large_count(c, rng) for c in rich[:1]) if c is not None] + kinds
    ordered = [c for c in _interleave(own, attributes, shapes, kinds) if _elements(c) <= MAX_ELEMENTS]
    seen: set = set()
    out = []
    for call in ordered:
        facts = call.facts()
        if facts in seen:
            continue
        seen.add(facts)
        out.append(call)
    return out


# A made call with more input elements than this is not tried (an operator whose output grows
# as a product of its inputs' sizes would need gigabytes).
MAX_ELEMENTS = 1 << 20


def _elements(call: Call) -> int:
    return sum(t.numel() for t in call.tensors())


def _outputs_follow_inputs(call: Call) -> bool:
    """Whether the call's outputs hold no more elements than its inputs, four times over: the
    large float16 sample grows an input to 70,000 elements, which an operator whose output is a
    product of its inputs' sizes (``outer``, ``cdist``) would square."""
    expected = expected_of(call)
    return expected is not None and sum(t.numel() for t in expected) <= 4 * max(_elements(call), 1)


def _interleave(*lists) -> list:
    out = []
    for group in itertools.zip_longest(*lists):
        out.extend(c for c in group if c is not None)
    return out


def schema_calls(overload, dtype, rng) -> list:
    """Calls made from the schema of an operator without OpInfo samples (a custom operator,
    typically): its tensors of a few shapes, its other arguments without a default at a value of
    their type, the rest at their defaults. PyTorch decides which are calls."""
    schema = getattr(overload, "_schema", None)
    if schema is None:
        return []
    import torch

    like = torch.zeros((), dtype=dtype)
    out = []
    for shape in ((3, 4), (2, 3, 4), (5,)):
        args: list = []
        kwargs: dict = {}
        for argument in schema.arguments:
            if argument.has_default_value():
                continue
            value = _value_of(generate.kind_of(argument), shape, like, rng)
            if value is _NONE:
                return []
            if argument.kwarg_only:
                kwargs[argument.name] = value
            else:
                args.append(value)
        out.append(Call(overload, tuple(args), kwargs, origin="schema"))
    return out


_NONE = object()


def _value_of(kind: str, shape: tuple, like, rng):
    """A value of the aten type ``kind`` for a schema call (``_NONE``: no value can be made)."""
    if kind == "Tensor":
        return generate._new(rng, shape, like)
    if kind.endswith("?"):
        return None
    if kind == "Tensor[]":
        return [generate._new(rng, shape, like) for _ in range(2)]
    return {"float": 1.5, "Scalar": 1.5, "int": 1, "SymInt": 1, "bool": False, "int[]": [1], "SymInt[]": [1]}.get(kind, _NONE)


def test_operator(entry, options: Options) -> Tally:
    """Judges the entry's translation on its calls, within the options' budget. A failure of the
    judging itself ends this operator's test, untested, with the reason, not the run."""
    try:
        return _test_operator(entry, options)
    except Exception as e:  # a defect of `onnxsc test`: reported, and the other operators go on
        tally = Tally(entry.qualname, untested=True)
        tally.skipped[f"onnxsc test could not judge it: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"] = 1
        return tally


def _test_operator(entry, options: Options) -> Tally:
    import torch

    rng = torch.Generator().manual_seed(options.seed)
    if options.facts_only:
        return _test_by_facts(entry, options, rng)
    tally = Tally(entry.qualname)
    first_failure: Optional[tuple] = None
    judged_shapes: dict = {}
    exports = 0
    calls = base_calls(entry, options, rng)
    # Every call's facts first, in milliseconds each: a call its facts refuse fails as its export
    # would, without one, and the calls beyond the exports' budget are not left unchecked.
    by_facts = [facts.judge(entry, call) for call in calls]
    for call, fact in zip(calls, by_facts):
        if fact.outcome == "failed":
            tally.count(call, fact)
            if first_failure is None:
                first_failure = (call, fact)
            continue
        if exports >= options.samples:
            tally.facts_only += fact.outcome == "passed"
            continue
        expected = expected_of(call)
        if expected is None:
            tally.count(call, DROPPED)
            continue
        exports += 1
        tally.exports += 1
        exported = export(entry, call)
        if not isinstance(exported, Exported):
            tally.count(call, exported)
            if exported.outcome == "failed" and first_failure is None:
                first_failure = (call, exported)
            continue
        for judged, origin in [(call, call.origin)] + [(c, "value") for _, c in generate.value_regimes(call, rng)]:
            want = expected if judged is call else expected_of(judged)
            verdict = DROPPED if want is None else exported.judge(judged, want)
            tally.count(judged, verdict, origin)
            if verdict.outcome == "failed" and first_failure is None:
                first_failure = (judged, verdict)
        if call.origin != "dtype":
            judged_shapes.setdefault(call.sizes_free(), []).append(call)
    dynamic = _dynamic(entry, judged_shapes, tally)
    if first_failure is not None:
        call, verdict = first_failure
        # A refusal by the facts shrinks by the facts: milliseconds a candidate, not an export.
        by_facts_alone = any(verdict is fact for fact in by_facts)
        still_fails = _facts_still_fail(entry, verdict) if by_facts_alone else _still_fails(entry, verdict)
        _report_failure(tally, entry, options, call, verdict, still_fails)
    elif dynamic is not None:
        first, other, verdict = dynamic
        tally.reproducer = snippet(other, options.source, entry.qualname, verdict.runtime, exported_from=first)
    tally.untested = tally.ran < options.min_samples
    return tally


def _test_by_facts(entry, options: Options, rng) -> Tally:
    """Judges every call made for the entry by its facts alone (``facts``): no export, no ONNX
    Runtime, no values; the first failure shrunk by the same judging."""
    tally = Tally(entry.qualname)
    first_failure: Optional[tuple] = None
    for call in base_calls(entry, options, rng):
        verdict = facts.judge(entry, call)
        tally.count(call, verdict)
        if verdict.outcome == "failed" and first_failure is None:
            first_failure = (call, verdict)
    if first_failure is not None:
        call, verdict = first_failure
        _report_failure(tally, entry, options, call, verdict, _facts_still_fail(entry, verdict))
    tally.untested = tally.ran < options.min_samples
    return tally


def _dynamic(entry, judged: dict, tally: Tally) -> Optional[tuple]:
    """One export with dynamic dimensions, run on a call of other sizes: a translation that bakes
    a size into the model gives the first call's shape, or fails, there. Returns (the call
    exported, the call run, the verdict) when it fails."""
    def size(call: Call) -> int:
        return sum(t.numel() for t in call.tensors())

    for calls in judged.values():
        # torch.export makes a dimension of size 0 or 1 static: neither call may have one.
        sized = [c for c in calls if c.tensors() and all(s >= 2 for t in c.tensors() for s in t.shape)]
        pairs = [(a, b) for a in sized for b in sized if a.facts() != b.facts()]
        if not pairs:
            continue
        # The smallest pair: a failure here is read from its reproducer.
        first, other = min(pairs, key=lambda p: size(p[0]) + size(p[1]))
        expected = expected_of(other)
        if expected is None:
            continue
        exported = export(entry, first, dynamic=True)
        tally.exports += 1
        verdict = exported.judge(other, expected) if isinstance(exported, Exported) else exported
        tally.count(other, verdict, "dynamic")
        return (first, other, verdict) if verdict.outcome == "failed" else None
    return None


def _report_failure(tally: Tally, entry, options: Options, call: Call, verdict: Verdict, still_fails) -> None:
    """The first failure shrunk (with ``still_fails``, unless the options say not to), and its
    reproducer."""
    small = shrink(call, still_fails) if options.shrink else call
    tally.shrunk = f"{small.describe()}" if small is not call else None
    tally.reproducer = snippet(small, options.source, entry.qualname, verdict.runtime)


def _facts_still_fail(entry, verdict: Verdict):
    """The shrinker's test for a refusal by the facts: the candidate's facts are refused the
    same way."""

    def still_fails(candidate: Call, same_facts: bool) -> bool:
        again = facts.judge(entry, candidate)
        return again.outcome == "failed" and again.kind == verdict.kind

    return still_fails


def _still_fails(entry, verdict: Verdict):
    """The shrinker's test: the candidate still fails with the verdict's kind of failure."""
    last: dict = {}

    def still_fails(candidate: Call, same_facts: bool) -> bool:
        expected = expected_of(candidate)
        if expected is None:
            return False
        exported = last.get("exported") if same_facts else None
        if exported is None:
            exported = export(entry, candidate)
            if not isinstance(exported, Exported):
                return exported.outcome == "failed" and exported.kind == verdict.kind
        result = exported.judge(candidate, expected)
        if result.outcome == "failed" and result.kind == verdict.kind:
            last["exported"] = exported
            return True
        return False

    return still_fails


def worst_text(tally: Tally) -> str:
    return f"{g(tally.worst[0])} (relative {g(tally.worst[1])})" if tally.worst else "-"
