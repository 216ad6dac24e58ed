"""Judging calls: each exported through the translation alone, run in ONNX Runtime, and compared
with PyTorch eager, dtype, shape and values.

Exporting dominates the time a judgement takes, so:

* the exporter's registry (torchlib's translations, at the opset of a default export) is built
  once per process, and each export adds the one entry under test to a copy of it, as
  ``torch.onnx.export(..., custom_translation_table=...)`` does (``_compat.export_compat``);
* calls that differ only in their tensors' values share one exported model: an
  :class:`Exported` runs as many inputs as are given it;
* a model exported with dynamic dimensions runs the calls whose shapes differ (a translation
  that bakes a shape into a constant fails there).

The graph is judged as the translation builds it (``optimize=False``): the optimiser may only
hide a mistake.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import logging
import math
import re
import warnings
from dataclasses import dataclass
from typing import Optional

from onnxsc._located import located
from onnxsc._optest.calls import Call, flatten
from onnxsc._optest.tolerance import tolerance

# ONNX element types by torch dtype name (the signature's element type names).
ONNX_NAMES = {
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "float16": "FLOAT16",
    "bfloat16": "BFLOAT16",
    "int64": "INT64",
    "int32": "INT32",
    "int16": "INT16",
    "int8": "INT8",
    "uint8": "UINT8",
    "bool": "BOOL",
}


@dataclass(frozen=True)
class Verdict:
    """What judging one call gave: ``passed``, ``failed`` (with ``kind``: values, shape, dtype,
    outputs, export, runtime), ``skipped`` (with the reason), or ``dropped`` (PyTorch itself
    rejects the call: not a sample at all)."""

    outcome: str
    kind: str = ""
    message: str = ""
    worst: Optional[tuple] = None
    # What computed the outputs judged: ONNX Runtime, or ONNX's reference implementation.
    runtime: str = "onnxruntime"

    @property
    def counted(self) -> bool:
        """Whether the call ran through the translation and was compared."""
        return self.outcome in ("passed", "failed")


PASSED = Verdict("passed")
DROPPED = Verdict("dropped")


def skipped(reason: str) -> Verdict:
    return Verdict("skipped", message=reason)


def failed(kind: str, message: str, worst: Optional[tuple] = None) -> Verdict:
    return Verdict("failed", kind, message, worst)


@functools.lru_cache(maxsize=None)
def _base_registry():
    """The registry a default ``torch.onnx.export`` builds (torchlib's translations at the default
    opset), once per process."""
    from torch.onnx import _constants
    from torch.onnx._internal.exporter import _registration

    with quiet():
        return _registration.ONNXRegistry.from_torchlib(opset_version=_constants.ONNX_DEFAULT_OPSET)


def _registry_with(overload, translation):
    """A copy of the base registry with the entry under test, registered as the exporter
    registers a ``custom_translation_table`` entry."""
    base = _base_registry()
    registry = copy.copy(base)
    registry.functions = {k: list(v) for k, v in base.functions.items()}
    registry.register_op(overload, translation, is_complex=False)
    return registry


class _Module:
    """A ``torch.nn.Module`` whose forward is the call, its tensors as inputs."""

    def __new__(cls, call: Call):
        import torch

        class Sample(torch.nn.Module):
            def forward(self, *tensors):
                return call.run(*tensors)

        return Sample()


@contextlib.contextmanager
def quiet():
    """The exporter's progress messages and warnings are not the report's."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)


class Expected(list):
    """PyTorch's outputs of a call; ``random`` when two runs with other seeds give other values
    (``dropout``, ``rand_like``): then only their dtypes and shapes can be compared."""

    random = False


def expected_of(call: Call) -> Optional[Expected]:
    """PyTorch's result of the call (its tensors, in order), or None when PyTorch rejects it."""
    import torch

    try:
        with torch.no_grad(), torch.random.fork_rng(), quiet():
            torch.manual_seed(0)
            first = Expected(flatten(call.run()))
            torch.manual_seed(1)
            again = flatten(call.run())
    except Exception:
        return None
    first.random = any(not _identical(a, b) for a, b in zip(first, again))
    return first


def _identical(a, b) -> bool:
    """Whether two of PyTorch's results are the same, NaN for NaN."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    try:
        if a.dtype.is_complex:
            a, b = torch.view_as_real(a.to(torch.complex128)), torch.view_as_real(b.to(torch.complex128))
        return bool(torch.equal(torch.nan_to_num(a.detach()), torch.nan_to_num(b.detach())))
    except Exception:  # a dtype these cannot compare: taken as deterministic
        return True


class Exported:
    """A model exported from one call through the entry's translation: it judges that call and any
    other with its facts (or, exported with dynamic dimensions, with its ranks).

    ONNX Runtime runs it as the model says, its graph optimisations off: they may compute a
    float16 model in float32 where the model casts (an inserted cast to float, then the model's
    own cast to float16, become one), which hides what the model computes on a runtime that does
    not (a count or a product that overflows float16)."""

    def __init__(self, program, qualname: str):
        self.program = program
        self.qualname = qualname
        self._reference = None
        try:
            program.initialize_inference_session(_literal_session)
        except Exception:  # left to the first run, with ONNX Runtime's default options
            pass

    def judge(self, call: Call, expected: list) -> Verdict:
        tensors = call.tensors()
        half = any(t.dtype in _HALF for t in tensors)
        try:
            with quiet():
                actual = flatten(self.program(*tensors))
        except Exception as e:
            message = str(e)
            if "NOT_IMPLEMENTED" in message or "Could not find an implementation" in message:
                # bfloat16, mostly: the reference implementation judges those.
                return self._by_reference(tensors, expected) if half else skipped("ONNX Runtime has no CPU kernel for it")
            if "Got invalid dimensions" in message or "INVALID_ARGUMENT" in message and "dimension" in message:
                return skipped("the export made a dimension of it static")
            return failed("runtime", f"ONNX Runtime fails: {located(first_line(e), self.program.model_proto)}")
        verdict = compare(actual, expected, self.qualname, tensors)
        if verdict.outcome == "passed" and half:
            return self._by_reference(tensors, expected, verdict)
        return verdict

    def _by_reference(self, tensors: list, expected: list, after: Optional[Verdict] = None) -> Verdict:
        """A float16 or bfloat16 call run by ONNX's reference implementation too, which computes
        each node in the dtype the model gives it: ONNX Runtime's CPU computes float16 nodes in
        float32 where it has no float16 kernel, and merges the casts around them, which hides an
        overflow of a count or a product in float16 (a GPU's kernels do not)."""
        try:
            with quiet():
                if self._reference is None:
                    from onnx.reference import ReferenceEvaluator

                    self._reference = ReferenceEvaluator(self.program.model_proto)
                names = [i.name for i in self.program.model_proto.graph.input]
                outputs = self._reference.run(None, {n: _numpy(t) for n, t in zip(names, tensors)})
        except Exception:
            return after or skipped("neither ONNX Runtime's CPU nor ONNX's reference implementation runs it")
        import torch

        actual = [torch.from_numpy(_plain(o)).to(e.dtype) if hasattr(o, "dtype") else torch.tensor(o) for o, e in zip(outputs, expected)]
        verdict = compare(actual, expected, self.qualname, tensors)
        # Only what the dtype itself causes counts here: an infinity or NaN where PyTorch has a
        # number (an overflow), a dtype or a shape. How a sum rounds in float16 is the
        # implementation's choice (PyTorch's accumulates in float32, the reference in float16).
        overflow = None
        if verdict.outcome == "failed" and verdict.kind == "values":
            overflow = _overflows(actual, expected) and _first_overflow(self.program.model_proto, names, tensors)
            if not overflow:
                return after or Verdict("passed", worst=verdict.worst)
        if verdict.outcome == "failed":
            message = f"in ONNX's reference implementation (as the model computes {short(tensors[0].dtype)}): {verdict.message}"
            if overflow:
                message += f"; first {overflow}"
            return Verdict("failed", verdict.kind, message, verdict.worst, runtime="reference")
        return after or verdict


@functools.lru_cache(maxsize=None)
def _cached_cia_ops(original):
    return functools.lru_cache(maxsize=1)(original)


@contextlib.contextmanager
def _cia_ops_known():
    """While it lasts, torch.export's list of the operators it may keep undecomposed is computed
    once: it walks every operator PyTorch registers, a third of an export's time, and the answer
    changes only when an operator is registered, which no export does."""
    try:
        from torch._export import utils
        from torch.export import decomp_utils, exported_program
    except ImportError:
        yield
        return
    original = utils._collect_all_valid_cia_ops
    cached = _cached_cia_ops(original)
    patched = [(m, "_collect_all_valid_cia_ops") for m in (exported_program, decomp_utils) if hasattr(m, "_collect_all_valid_cia_ops")]
    for module, name in patched:
        setattr(module, name, cached)
    try:
        yield
    finally:
        for module, name in patched:
            setattr(module, name, original)


def _overflows(actual: list, expected: list) -> bool:
    """Whether some output is infinite or NaN where PyTorch's is a finite number."""
    import torch

    for a, e in zip(actual, expected):
        if a.dtype.is_floating_point and e.dtype.is_floating_point and a.shape == e.shape:
            if bool((~torch.isfinite(a.to(torch.float64)) & torch.isfinite(e.to(torch.float64))).any()):
                return True
    return False


def _first_overflow(model, names: list, tensors: list) -> Optional[str]:
    """The first node of the model (its functions inlined) whose 16-bit output is infinite or
    NaN although its inputs are finite, described, when the exact value (the node computed in
    float64) is beyond what the dtype holds: a value the model keeps in float16 overflows. None
    when there the exact value fits, so that it is the reference kernel's own way of computing
    (its LogSoftmax is the log of a Softmax that underflows) and not the model's."""
    import numpy as np
    import onnx
    import onnx.inliner
    import onnx.numpy_helper
    from onnx.reference import ReferenceEvaluator

    try:
        with quiet():
            inlined = onnx.inliner.inline_local_functions(model)
            nodes = list(inlined.graph.node)
            wanted = [o for n in nodes for o in n.output if o]
            feeds = {n: _numpy(t) for n, t in zip(names, tensors)}
            values = dict(zip(wanted, ReferenceEvaluator(inlined).run(wanted, feeds)))
            values.update(feeds)
            for init in inlined.graph.initializer:
                values[init.name] = onnx.numpy_helper.to_array(init)
            for node in nodes:
                if any(a.g.node or a.graphs for a in node.attribute):
                    continue  # control flow: its body's nodes are not these
                ins = [values.get(i) for i in node.input if i]
                if any(not _finite_array(v) for v in ins):
                    continue
                for k, out in enumerate(node.output):
                    got = values.get(out)
                    if got is None or not _half_array(got) or _finite_array(got):
                        continue
                    wide = {i: v.astype(np.float64) if _half_array(v) else v for i, v in zip([i for i in node.input if i], ins)}
                    exact = np.asarray(ReferenceEvaluator(node).run(None, wide)[k], dtype=np.float64)
                    limit = float(np.finfo(np.float16).max) if got.dtype == np.float16 else 3.39e38
                    # Only a finite exact value beyond the dtype's range is an overflow: an
                    # infinite one is the reference kernel's (log of an underflowed exp).
                    beyond = np.isfinite(exact) & (np.abs(exact) > limit)
                    if bool(np.any(beyond & ~np.isfinite(np.asarray(got, dtype=np.float64)))):
                        return f"at a `{node.op_type}` whose exact result, up to {float(np.max(np.abs(exact[np.isfinite(exact)]))):.2g}, {got.dtype} cannot hold"
                    return None
    except Exception:  # a node the reference cannot run alone: the overflow stands, unexplained
        return "where the reference's values become infinite"
    return None


def _finite_array(v) -> bool:
    import numpy as np

    if v is None or not hasattr(v, "dtype") or v.dtype.kind != "f" and "float" not in str(v.dtype):
        return True
    return bool(np.all(np.isfinite(np.asarray(v, dtype=np.float64))))


def _half_array(v) -> bool:
    return hasattr(v, "dtype") and str(v.dtype) in ("float16", "bfloat16")


def _half():
    import torch

    return (torch.float16, torch.bfloat16)


class _Half:
    """The 16-bit floating point dtypes (torch imported when first asked)."""

    def __contains__(self, dtype) -> bool:
        return dtype in _half()


_HALF = _Half()


def _numpy(t):
    """A tensor as NumPy holds it (bfloat16 through ml_dtypes)."""
    import torch

    if t.dtype == torch.bfloat16:
        import ml_dtypes

        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.detach().numpy()


def _plain(array):
    """A NumPy array torch can take: bfloat16 as float32 (exact), contiguous (the reference's
    Slice with a negative step returns a view torch cannot wrap)."""
    import numpy as np

    array = np.asarray(array)
    if array.dtype.name == "bfloat16":
        return array.astype(np.float32)
    # Not `np.ascontiguousarray`, which makes a 0-d array 1-d.
    return array if array.flags.c_contiguous else array.copy(order="C")


def _literal_session(model):
    """An ONNX Runtime session on the CPU with no graph optimisation."""
    import onnxruntime as ort

    # A failing run is an exception the report shows; ONNX Runtime's own log of it is noise.
    ort.set_default_logger_severity(4)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def export(entry, call: Call, dynamic: bool = False):
    """The call exported through the entry's translation alone: an :class:`Exported`, or the
    :class:`Verdict` that ends it (the export fails, or never calls the translation).

    As ``torch.onnx.export`` does: ``torch.export.export``, the decompositions the registry asks
    for, the translation of each node. When the exported graph calls only operators the registry
    translates, the decompositions would leave it as it is, and they are not run: they are nine
    tenths of the time of such an export."""
    import torch
    from torch.onnx._internal.exporter import _core

    translation = entry.translation
    calls_before = translation.calls
    ignored_before = translation.ignored_values()
    tensors = call.tensors()
    dynamic_shapes = None
    if dynamic:
        auto = torch.export.Dim.AUTO
        dynamic_shapes = (tuple({d: auto for d in range(t.dim())} for t in tensors),)
    registry = _registry_with(entry.overload, translation)
    try:
        with quiet(), _cia_ops_known():
            exported = torch.export.export(_Module(call), tuple(tensors), dynamic_shapes=dynamic_shapes)
            if _translated_as_it_is(exported, registry):
                program = _core._exported_program_to_onnx_program(exported, registry=registry)
            else:
                program = _core.export(exported, registry=registry, optimize=False, verbose=False)
    except Exception as e:
        if first_line(e).strip() == "torch.complex32":
            # torch.complex32 (a float16 input's complex result) has no ONNX type.
            return skipped("the exporter has no ONNX type for complex32")
        if translation.calls == calls_before:
            return skipped("the export fails before it reaches the translation")
        return failed("export", f"the export fails: {first_line(e)}")
    if translation.calls == calls_before:
        called = _graph_operators(program)
        where = f" (its graph calls {', '.join(called)})" if called else ""
        return skipped(f"the export does not call this translation for it{where}")
    if translation.ignored_values() != ignored_before:
        return skipped("it sets an argument the translation deletes (`del`): the default's result on purpose")
    return Exported(program, entry.qualname)


def _translated_as_it_is(exported, registry) -> bool:
    """Whether every operator the exported graph calls has a translation in the registry (or is
    Python's `getitem`) and may stay in a graph (torch.export always decomposes some composite
    operators, `aten::batch_norm`, whatever the registry says): the exporter's decompositions
    would then change nothing."""
    import operator

    from onnxsc._usage import never_in_a_graph

    for node in exported.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if not registry.is_registered(node.target) or never_in_a_graph(node.target) is not None:
            return False
    return True


def _graph_operators(program) -> list:
    """The aten operators the export's graph calls, by name (what the call reached instead)."""
    try:
        graph = program.exported_program.graph
    except Exception:
        return []
    names = {t.name() for t in (n.target for n in graph.nodes if n.op == "call_function") if hasattr(t, "name") and callable(t.name)}
    return sorted(names)


def compare(actual: list, expected: list, qualname: str, inputs: Optional[list] = None) -> Verdict:
    """ONNX Runtime's outputs against PyTorch's: the same number, dtypes and shapes, values within
    the dtype's and the operator family's tolerance, NaN in the same places and infinities of the
    same sign. One exception: an elementwise NaN that PyTorch computes from an infinite input
    (gelu(-inf) is -inf * 0 in its formula), where the translation's kernel gives the limit, is
    not held against it; a NaN from a NaN input must stay NaN."""
    import torch

    if len(actual) != len(expected):
        return failed("outputs", f"{len(actual)} outputs, PyTorch gives {len(expected)}")
    worst_abs, worst_rel = 0.0, 0.0
    for k, (a, e) in enumerate(zip(actual, expected)):
        name = f"output {k}: " if len(expected) > 1 else ""
        if e.dtype.is_complex and not a.dtype.is_complex and tuple(a.shape) == (*e.shape, 2):
            # The exporter gives a complex tensor as its real view: a last dimension of 2.
            e = torch.view_as_real(e.resolve_conj())
        if a.dtype != e.dtype:
            return failed("dtype", f"{name}dtype {short(a.dtype)}, PyTorch gives {short(e.dtype)}")
        if tuple(a.shape) != tuple(e.shape):
            return failed("shape", f"{name}shape {list(a.shape)}, PyTorch gives {list(e.shape)}")
        if a.numel() == 0 or getattr(expected, "random", False) or unspecified_values(qualname):
            continue
        e = e.detach()
        if not (e.dtype.is_floating_point or e.dtype.is_complex):
            differ = a != e
            if bool(differ.any()) and not _tied_indices(k, actual, expected, inputs or []):
                n = int(differ.sum())
                return failed("values", f"{name}{n} of {e.numel()} values differ (first: {a[differ][0].item()} for {e[differ][0].item()})")
            continue
        rtol, atol = tolerance(qualname, short(e.dtype))
        ad, ed = a.to(torch.float64), e.to(torch.float64)
        a_nan, e_nan = torch.isnan(ad), torch.isnan(ed)
        indeterminate = _from_infinity(e_nan & ~a_nan, inputs or [])
        e_nan = e_nan & ~indeterminate
        if bool(indeterminate.any()):
            ed = torch.where(indeterminate, ad, ed)
        if bool((a_nan != e_nan).any()):
            where = "NaN where PyTorch gives a number" if bool((a_nan & ~e_nan).any()) else "a number where PyTorch gives NaN"
            return failed("values", f"{name}{where} ({int((a_nan != e_nan).sum())} of {e.numel()} values)")
        a_inf, e_inf = torch.isinf(ad), torch.isinf(ed)
        if bool((e_inf & (ad != ed)).any()) or bool((a_inf & ~e_inf).any()):
            return failed("values", f"{name}an infinity differs from PyTorch's ({int(((e_inf & (ad != ed)) | (a_inf & ~e_inf)).sum())} values)")
        finite = ~(e_nan | e_inf)
        diff = torch.where(finite, (ad - ed).abs(), torch.zeros_like(ad))
        rel = diff / ed.abs().clamp_min(1e-30)
        worst_abs = max(worst_abs, float(diff.max()))
        worst_rel = max(worst_rel, float(torch.where(diff == 0, torch.zeros_like(rel), rel).max()))
        if bool((diff > atol + rtol * _magnitude(ed, e.dtype, finite, inputs or [])).any()):
            return failed("values", f"{name}differs by up to {g(worst_abs)} (relative {g(worst_rel)})", (worst_abs, worst_rel))
    return Verdict("passed", worst=(worst_abs, worst_rel))


# Inputs at least this large make a result's rounding a matter of its largest terms.
LARGE_INPUT = 100.0


def _magnitude(expected, dtype, finite, inputs: list):
    """What a difference is measured against: each of PyTorch's values, or, for a float16 or
    bfloat16 output or when an input holds large values (|x| >= 100), the largest of them
    (normwise). A sum or difference of large terms (a convolution, a cross product, `a - 1.5 * b`
    computed in float16) loses a small result to cancellation in any order of operations, so
    there its error is that of its largest terms, not of itself. The float32 twin of a float16
    call is still judged elementwise."""
    import torch

    own = expected.abs()
    if dtype in _HALF:
        # A translation computes in the model's dtype what PyTorch's CPU kernels compute in
        # float32 and round once: each product of `a1 * b2 - a2 * b1` is rounded to float16.
        large = True
    else:
        large = any(
            t.dtype.is_floating_point and t.numel() > 0 and float(torch.nan_to_num(t.abs().to(torch.float64), posinf=0.0).max()) >= LARGE_INPUT
            for t in inputs
        )
    if not large or not bool(finite.any()):
        return own
    return torch.clamp_min(own, float(own[finite].max()))


@functools.lru_cache(maxsize=None)
def unspecified_values(qualname: str) -> bool:
    """Whether PyTorch leaves the values of the operator's outputs unspecified, so that only
    their dtypes and shapes can be compared: a random operator (its schema is tagged
    ``nondeterministic_seeded``; OpInfo's samples of those reseed on every call, so two runs of
    them agree) or one that returns uninitialised memory (``empty``, ``new_empty_strided``)."""
    import torch

    namespace, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    if _UNINITIALISED.search(name):
        return True
    try:
        op = getattr(getattr(getattr(torch.ops, namespace), name), overload or "default")
        return torch.Tag.nondeterministic_seeded in op.tags
    except (AttributeError, RuntimeError):
        return False


# Operators whose outputs are uninitialised memory: `empty`, `new_empty`, `empty_strided`, ...
_UNINITIALISED = re.compile(r"(^|_)empty(_|$)")


def _from_infinity(where, inputs: list):
    """The positions of ``where`` at which an input of the same shape holds an infinity."""
    import torch

    found = torch.zeros_like(where)
    for t in inputs:
        if t.shape == where.shape and t.dtype.is_floating_point:
            found |= torch.isinf(t.to(torch.float64))
    return where & found


def _tied_indices(k: int, actual: list, expected: list, inputs: list) -> bool:
    """Whether integer output ``k`` is the indices that go with a floating point output of the same
    shape that agrees, and differs only where that output's value occurs more than once, in it
    or in a floating point input (`topk` keeps one of two tied values): where values tie (or are
    NaN), which index comes first is not specified (``sort``, ``topk``, ``max.dim``)."""
    import torch

    for j, e in enumerate(expected):
        if j == k or not e.dtype.is_floating_point or e.shape != expected[k].shape:
            continue
        a, e = actual[j].to(torch.float64), e.to(torch.float64)
        if not bool(((a == e) | (torch.isnan(a) & torch.isnan(e))).all()):
            return False
        pool = [e] + [t.to(torch.float64) for t in inputs if t.dtype.is_floating_point]
        tied = torch.cat([_repeated(t[~torch.isnan(t)]) for t in pool])
        at = e[actual[k] != expected[k]]
        return bool((torch.isnan(at) | torch.isin(at, tied)).all())
    return False


def _repeated(values):
    """The values that occur more than once."""
    import torch

    unique, counts = torch.unique(values.reshape(-1), return_counts=True)
    return unique[counts > 1]


def short(dtype) -> str:
    return str(dtype).replace("torch.", "")


def g(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.2g}"


def first_line(e: BaseException) -> str:
    """What stopped an export, in a line: the translation's own error (it names the `.onnxs`
    line) when the exporter's chain of exceptions holds one, else the deepest cause."""
    from onnxsc._errors import OnnxscError

    chain = []
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ or e.__context__
    ours = [c for c in chain if isinstance(c, OnnxscError)]
    cause = ours[0] if ours else chain[-1]
    text = [line.strip() for line in str(cause).strip().splitlines() if line.strip()]
    for k, line in enumerate(text):
        if not line.startswith(("Failed to convert", "[", "- ")):
            # "... cannot translate this call:" is followed by the diagnostic's headline.
            if line.endswith(":") and k + 1 < len(text):
                line = f"{line} {text[k + 1]}"
            return line[:300]
    return text[0][:300] if text else type(cause).__name__
