#!/usr/bin/env python3
"""Generate the operator-schema database embedded by onnxsc.

Regenerate (from the repository root, with the pinned packages in .venv):

    .venv/bin/python scripts/gen_schemas.py

Writes src/schema/generated/onnx_schemas.json: compact, deterministic JSON that
build.rs (build/schema_tables.rs) turns into the static tables src/schema/tables.rs includes.
Sources:

* onnx.defs.get_all_schemas_with_history(): every version of every schema of the
  ONNX domains (ai.onnx written as "", ai.onnx.ml, ai.onnx.preview.training, ...).
* onnxruntime's get_all_operator_schema(): contrib schemas (com.microsoft,
  com.microsoft.nchwc, com.ms.internal.nhwc, ...). ONNX Runtime also reports schemas
  in the ONNX-owned domains ("" and ai.onnx.ml); those are skipped wholesale: onnx is
  the authority there (ORT adds a few legacy/experimental "" entries such as Affine or
  Crop that onnx.checker rejects; their names are listed in the header).

File layout:

    {"header": {...package versions, max opset per domain...},
     "schemas": [ {domain, name, since_version, deprecated, has_function,
                   min_input, max_input, min_output, max_output,
                   inputs: [{name, type_str, option, is_homogeneous[, min_arity]}],
                   outputs: [...same...],
                   attributes: [{name, type, required[, default]}],
                   type_constraints: [{type_param, allowed: [...]}]}, ... ]}

* option is "single", "optional" or "variadic"; min_arity is written for variadic
  parameters only.
* type is the AttributeProto.AttributeType name (FLOAT, INT, STRING, TENSOR, GRAPH,
  FLOATS, INTS, STRINGS, ...).
* default is absent when the attribute has no default value; otherwise a number
  (FLOAT/INT), a string (STRING), a list (FLOATS/INTS/STRINGS), or null for defaults
  that are not representable that way (tensor, graph, ...). FLOAT defaults are
  written as the shortest decimal that round-trips to the same float32.
* Schemas are sorted by (domain, name, since_version); attributes by name; formal
  parameters and allowed types keep their declaration order.

src/schema/generated/onnx_functions.json holds the function bodies of the function-bodied
ONNX operators (for `onnxsc decompile --op`), see function_bodies() below.

No doc strings are kept there. src/schema/generated/onnx_docs.json holds, for editors, the first
paragraph of each schema's documentation:

    {"header": {...package versions...}, "summaries": [[domain, name, since_version, text], ...]}

sorted like the schemas; text is the paragraph with its lines joined by spaces.
"""

import json
import math
import os
import platform
import struct
import sys
from collections import defaultdict

import onnx
import onnx.defs
import onnxruntime
from onnx import AttributeProto
from onnx.onnx_cpp2py_export import defs as onnx_defs_c
from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_PATH = os.path.join(REPO_ROOT, "src", "schema", "generated", "onnx_schemas.json")

# Domains whose schemas come from onnx; ORT's copies of these are skipped.
ONNX_OWNED_DOMAINS = {"", "ai.onnx", "ai.onnx.ml"}


def norm_domain(domain):
    return "" if domain == "ai.onnx" else domain


def shortest_f32(value):
    """The shortest decimal string that parses back to the same float32."""
    if not math.isfinite(value):
        raise ValueError(f"non-finite float default {value!r} cannot be written as JSON")
    bits = struct.pack("<f", value)
    for digits in range(1, 18):
        text = "%.*g" % (digits, value)
        try:
            if struct.pack("<f", float(text)) == bits:
                return float(text)
        except OverflowError:  # rounded past FLT_MAX
            continue
    return float(value)


def decode_default(attr_proto):
    """JSON value of a default AttributeProto (by its own type field)."""
    t = attr_proto.type
    A = AttributeProto
    if t == A.FLOAT:
        return shortest_f32(attr_proto.f)
    if t == A.INT:
        return int(attr_proto.i)
    if t == A.STRING:
        return attr_proto.s.decode("utf-8")
    if t == A.FLOATS:
        return [shortest_f32(v) for v in attr_proto.floats]
    if t == A.INTS:
        return [int(v) for v in attr_proto.ints]
    if t == A.STRINGS:
        return [s.decode("utf-8") for s in attr_proto.strings]
    # TENSOR, GRAPH, SPARSE_TENSOR, TYPE_PROTO and their lists: not representable.
    return None


def has_default(attr_proto):
    return attr_proto.type != AttributeProto.UNDEFINED


def option_name(option):
    name = option.name.lower()
    if name not in ("single", "optional", "variadic"):
        raise ValueError(f"unexpected formal parameter option {option!r}")
    return name


def formal_params(params, min_count, get_type_str, get_homogeneous, get_min_arity):
    out = []
    for index, p in enumerate(params):
        entry = {
            "name": p.name,
            "type_str": get_type_str(p),
            "option": option_name(p.option),
            "is_homogeneous": bool(get_homogeneous(p)),
        }
        if entry["option"] == "variadic":
            entry["min_arity"] = int(get_min_arity(p, index, min_count))
        out.append(entry)
    return out


def type_constraints(schema):
    return [
        {"type_param": tc.type_param_str, "allowed": list(tc.allowed_type_strs)}
        for tc in schema.type_constraints
    ]


def attr_type_name(attr_type):
    name = attr_type.name
    if name not in AttributeProto.AttributeType.keys() or name == "UNDEFINED":
        raise ValueError(f"unexpected attribute type {attr_type!r}")
    return name


def attribute_entry(name, attr, default_proto):
    entry = {
        "name": name,
        "type": attr_type_name(attr.type),
        "required": bool(attr.required),
    }
    if default_proto is not None and has_default(default_proto):
        if default_proto.type != getattr(AttributeProto, entry["type"]):
            raise ValueError(f"attribute {name}: default type differs from declared type")
        entry["default"] = decode_default(default_proto)
    return entry


def onnx_schemas():
    result = []
    for s in onnx.defs.get_all_schemas_with_history():
        attrs = [
            attribute_entry(name, a, a.default_value)
            for name, a in sorted(s.attributes.items())
        ]
        result.append(
            {
                "domain": norm_domain(s.domain),
                "name": s.name,
                "since_version": int(s.since_version),
                "deprecated": bool(s.deprecated),
                "has_function": bool(s.has_function or s.has_context_dependent_function),
                "min_input": int(s.min_input),
                "max_input": int(s.max_input),
                "min_output": int(s.min_output),
                "max_output": int(s.max_output),
                "inputs": formal_params(
                    s.inputs, s.min_input,
                    lambda p: p.type_str, lambda p: p.is_homogeneous,
                    lambda p, i, m: p.min_arity),
                "outputs": formal_params(
                    s.outputs, s.min_output,
                    lambda p: p.type_str, lambda p: p.is_homogeneous,
                    lambda p, i, m: p.min_arity),
                "attributes": attrs,
                "type_constraints": type_constraints(s),
            }
        )
    return result


def ort_variadic_min_arity(_param, index, min_count):
    # ORT's Python binding does not expose min_arity. ONNX's OpSchema::Finalize sets
    # min_count = (params before the variadic one, up to the last single) + min_arity,
    # and the variadic parameter is always last, so min_arity = min_count - index.
    # (Checked against every variadic parameter of the onnx schemas by this script.)
    return max(min_count - index, 0)


def ort_cpu_kernels():
    """(domain, op) pairs that ONNX Runtime's CPU execution provider has a kernel for."""
    return {
        (norm_domain(k.domain), k.op_name)
        for k in ort_c.get_all_opkernel_def()
        if k.provider == "CPUExecutionProvider"
    }


def ort_schemas(onnx_keys):
    """ONNX Runtime's schemas: its own domains (com.microsoft, ...), and the operators it
    registers in ONNX's domains that onnx does not define (such as SimplifiedLayerNormalization
    or LayerNormalization@1) when the CPU provider runs them, marked `runtime_only`."""
    result = []
    onnx_domain_extras = set()
    cpu = ort_cpu_kernels()
    for s in ort_c.get_all_operator_schema():
        runtime_only = False
        if s.domain in ONNX_OWNED_DOMAINS:
            key = (norm_domain(s.domain), s.name, int(s.since_version))
            if key in onnx_keys or (key[0], s.name) not in cpu:
                continue
            onnx_domain_extras.add(key)
            runtime_only = True
        attrs = []
        for name, a in sorted(s.attributes.items()):
            raw = a._default_value
            proto = None
            if raw:
                proto = AttributeProto()
                proto.ParseFromString(raw)
            attrs.append(attribute_entry(name, a, proto))
        entry = {
            "domain": norm_domain(s.domain),
            "name": s.name,
            "since_version": int(s.since_version),
            "deprecated": bool(s.deprecated),
            # ORT's binding does not say whether a contrib op has a function body.
            "has_function": False,
            "min_input": int(s.min_input),
            "max_input": int(s.max_input),
            "min_output": int(s.min_output),
            "max_output": int(s.max_output),
            "inputs": formal_params(
                s.inputs, s.min_input,
                lambda p: p.typeStr, lambda p: p.isHomogeneous, ort_variadic_min_arity),
            "outputs": formal_params(
                s.outputs, s.min_output,
                lambda p: p.typeStr, lambda p: p.isHomogeneous, ort_variadic_min_arity),
            "attributes": attrs,
            "type_constraints": type_constraints(s),
        }
        if runtime_only:
            entry["runtime_only"] = True
        result.append(entry)
    return result, onnx_domain_extras


def check_onnx_min_arity():
    """Guard for ort_variadic_min_arity: the formula must hold for every onnx schema."""
    for s in onnx.defs.get_all_schemas_with_history():
        for params, min_count in ((s.inputs, s.min_input), (s.outputs, s.min_output)):
            for index, p in enumerate(params):
                if p.option.name == "Variadic":
                    assert index == len(params) - 1, (s.name, s.since_version)
                    assert p.min_arity == min_count - index, (s.name, s.since_version)


DOCS_OUT_PATH = os.path.join(REPO_ROOT, "src", "schema", "generated", "onnx_docs.json")


def summary(doc):
    """The first paragraph of a schema's documentation, on one line (None if it has none); a
    paragraph that ends in a colon is followed by the next (the formula it announces)."""
    out = []
    for paragraph in (doc or "").strip().split("\n\n"):
        text = " ".join(line.strip() for line in paragraph.strip().splitlines())
        if text:
            out.append(text)
            if not text.endswith(":") or len(out) == 3:
                break
    return " ".join(out) or None


def schema_summaries():
    out = []
    for s in onnx.defs.get_all_schemas_with_history():
        out.append((norm_domain(s.domain), s.name, int(s.since_version), summary(s.doc)))
    for s in ort_c.get_all_operator_schema():
        if s.domain in ONNX_OWNED_DOMAINS:
            continue
        out.append((s.domain, s.name, int(s.since_version), summary(s.doc)))
    return sorted([list(e) for e in out if e[3]])


def write_docs(header):
    doc = {"header": header, "summaries": schema_summaries()}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    with open(DOCS_OUT_PATH, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
        f.write("\n")
    print(f"wrote {os.path.relpath(DOCS_OUT_PATH, REPO_ROOT)}: {len(text) + 1} bytes, "
          f"{len(doc['summaries'])} summaries", file=sys.stderr)


TYPING_OUT_PATH = os.path.join(REPO_ROOT, "src", "sema", "generated", "torchlib_typing.txt")


def torchlib_typing():
    """The TypeVars and Union aliases of onnxscript's torch_lib.tensor_typing, which
    translations import (core.py imports `IntType` and `RealType`, which are Unions)."""
    import importlib.metadata
    import typing

    from onnxscript.function_libs.torch_lib import tensor_typing

    lines = [
        "# TypeVars and Union aliases of onnxscript.function_libs.torch_lib.tensor_typing:",
        "# `typevar NAME TYPES...` or `union NAME TYPES...`, the allowed tensor types.",
        f"# generated by scripts/gen_schemas.py from onnxscript {importlib.metadata.version('onnxscript')}",
    ]
    for name, value in sorted(vars(tensor_typing).items()):
        if isinstance(value, typing.TypeVar):
            kind = "typevar"
            bound = value.__bound__
            members = typing.get_args(bound) if bound is not None else ()
            if bound is not None and not members:
                members = (bound,)
        elif typing.get_origin(value) is typing.Union:
            kind = "union"
            members = typing.get_args(value)
        else:
            continue
        lines.append(" ".join([kind, name] + [m.__name__ for m in members]))
    os.makedirs(os.path.dirname(TYPING_OUT_PATH), exist_ok=True)
    with open(TYPING_OUT_PATH, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {os.path.relpath(TYPING_OUT_PATH, REPO_ROOT)}: {len(lines) - 3} names", file=sys.stderr)


FUNCTIONS_OUT_PATH = os.path.join(REPO_ROOT, "src", "schema", "generated", "onnx_functions.json")

# The element type a context-dependent body is built for when its constraint allows it.
REPRESENTATIVE_TYPE = "tensor(float)"


def representative_input_type(schema, formal):
    """The TypeProto a context-dependent body is built for, for one formal input: float when the
    constraint allows it, else the constraint's first allowed type (None: not a tensor type)."""
    allowed = [formal.type_str]
    for tc in schema.type_constraints:
        if tc.type_param_str == formal.type_str:
            allowed = list(tc.allowed_type_strs)
    chosen = REPRESENTATIVE_TYPE if REPRESENTATIVE_TYPE in allowed else allowed[0]
    if not (chosen.startswith("tensor(") and chosen.endswith(")")):
        return None, chosen
    elem = chosen[len("tensor("):-1]
    names = {"float": "FLOAT", "double": "DOUBLE", "float16": "FLOAT16", "bfloat16": "BFLOAT16",
             "bool": "BOOL", "string": "STRING"}
    name = names.get(elem, elem.upper())
    if not hasattr(onnx.TensorProto, name):
        return None, chosen
    return onnx.helper.make_tensor_type_proto(getattr(onnx.TensorProto, name), None), chosen


def context_dependent_body(schema, opset):
    """The body of a context-dependent function, built for every input given, with the
    representative type, and no attribute given (their defaults): (FunctionProto bytes, the
    input types) or (None, why not)."""
    if any(a.required for a in schema.attributes.values()):
        return None, "a required attribute decides the body"
    types, type_names = [], []
    for formal in schema.inputs:
        proto, name = representative_input_type(schema, formal)
        if proto is None:
            return None, f"input {formal.name} takes {name}, not a tensor"
        types.append(proto.SerializeToString())
        type_names.append(name)
    node = onnx.helper.make_node(
        schema.name, [f.name for f in schema.inputs], [f.name for f in schema.outputs],
        domain=schema.domain)
    try:
        raw = schema.get_context_dependent_function_with_opset_version(
            opset, node.SerializeToString(), types)
    except Exception as e:  # onnx refuses the representative call
        return None, f"onnx does not build it: {e}"
    if not raw:
        return None, "onnx builds no body"
    return raw, type_names


def function_bodies():
    """Every function body of the ONNX domains' operators, per schema version and body opset:
    [{domain, name, since_version, opset, context_dependent, input_types?, function}], the
    function a FunctionProto in hex; and the context-dependent bodies onnx could not build for
    the representative types, with why."""
    bodies, left_out = [], []
    for s in onnx.defs.get_all_schemas_with_history():
        key = {"domain": norm_domain(s.domain), "name": s.name, "since_version": int(s.since_version)}
        if s.has_function:
            for v in s.function_opset_versions:
                raw = s.get_function_with_opset_version(v)
                bodies.append({**key, "opset": int(v), "context_dependent": False,
                               "function": raw.hex()})
        if s.has_context_dependent_function:
            for v in s.context_dependent_function_opset_versions:
                if s.has_function and v in s.function_opset_versions:
                    continue
                raw, info = context_dependent_body(s, v)
                if raw is None:
                    left_out.append({**key, "opset": int(v), "why": info})
                    continue
                bodies.append({**key, "opset": int(v), "context_dependent": True,
                               "input_types": info, "function": raw.hex()})
    order = lambda e: (e["domain"], e["name"], e["since_version"], e["opset"])  # noqa: E731
    return sorted(bodies, key=order), sorted(left_out, key=order)


def write_function_bodies():
    bodies, left_out = function_bodies()
    header = {"generator": "scripts/gen_schemas.py", "onnx": onnx.__version__,
              "representative_type": REPRESENTATIVE_TYPE, "left_out": left_out}
    text = json.dumps({"header": header, "bodies": bodies}, sort_keys=True, indent=0,
                      ensure_ascii=True)
    with open(FUNCTIONS_OUT_PATH, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
        f.write("\n")
    print(f"wrote {os.path.relpath(FUNCTIONS_OUT_PATH, REPO_ROOT)}: {len(bodies)} bodies "
          f"({sum(b['context_dependent'] for b in bodies)} context-dependent), "
          f"{len(left_out)} left out", file=sys.stderr)


def main():
    torchlib_typing()
    write_function_bodies()
    check_onnx_min_arity()
    schemas = onnx_schemas()
    onnx_keys = {(s["domain"], s["name"], s["since_version"]) for s in schemas}
    ort, ort_owned = ort_schemas(onnx_keys)
    for s in ort:
        key = (s["domain"], s["name"], s["since_version"])
        if key in onnx_keys:
            raise ValueError(f"ORT schema {key} collides with an onnx schema")
    schemas.extend(ort)
    schemas.sort(key=lambda s: (s["domain"], s["name"], s["since_version"]))

    keys = [(s["domain"], s["name"], s["since_version"]) for s in schemas]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate (domain, name, since_version) entries")

    # Max opset version per domain: onnx's registered version ranges (which include
    # domains without operators, e.g. ai.onnx.training), else the greatest
    # since_version seen (ORT domains).
    max_versions = defaultdict(int)
    for domain, (_lo, hi) in onnx_defs_c.schema_version_map().items():
        max_versions[norm_domain(domain)] = max(max_versions[norm_domain(domain)], int(hi))
    for s in schemas:
        d = s["domain"]
        max_versions[d] = max(max_versions[d], s["since_version"])

    ort_only_extras = sorted(f"{d}::{n}@{v}" if d else f"{n}@{v}" for (d, n, v) in ort_owned)
    header = {
        "generator": "scripts/gen_schemas.py",
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
        "python": platform.python_version(),
        "max_versions": dict(sorted(max_versions.items())),
        "ort_onnx_domain_extras": ort_only_extras,
    }
    doc = {"header": header, "schemas": schemas}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    os.makedirs(os.path.dirname(OUT_PATH), exist_ok=True)
    with open(OUT_PATH, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
        f.write("\n")

    write_docs({"generator": "scripts/gen_schemas.py", "onnx": onnx.__version__,
                "onnxruntime": onnxruntime.__version__})

    per_domain = defaultdict(lambda: [set(), 0])
    for s in schemas:
        per_domain[s["domain"]][0].add(s["name"])
        per_domain[s["domain"]][1] += 1
    print(f"wrote {os.path.relpath(OUT_PATH, REPO_ROOT)}: {len(text) + 1} bytes, "
          f"{len(schemas)} schemas", file=sys.stderr)
    for d, (names, count) in sorted(per_domain.items()):
        print(f"  {d or '(ai.onnx)'}: {len(names)} ops, {count} versions, "
              f"max opset {max_versions[d]}", file=sys.stderr)


if __name__ == "__main__":
    main()
