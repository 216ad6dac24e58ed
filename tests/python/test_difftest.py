"""The differential tester (tests/difftest, `scripts/difftest`) and its saved cases.

* the generator's table of ONNX Runtime kernels promises nothing ONNX Runtime lacks;
* a seed gives the same program in any process;
* the oracle finds a miscompilation: a compiler that turns every top-level `Add` into `Sub`
  disagrees, in scripted functions and in trace-time translations, and the reducer shrinks
  what it finds;
* the oracle tells onnxscript's miswired loops (a known onnxscript fault) from findings;
* every saved regression case (tests/difftest/regressions) agrees;
* a run of `scripts/difftest` ends with its summary line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

import harness

sys.path.insert(0, str(harness.REPO_ROOT / "tests"))
from difftest import generator, oracle, reduce, trace_generator  # noqa: E402

DIFFTEST_DIR = harness.REPO_ROOT / "tests" / "difftest"
REGRESSIONS = sorted((DIFFTEST_DIR / "regressions").glob("*.onnxs"))
ONNXSCRIPT_FAULTS = sorted((DIFFTEST_DIR / "onnxscript_faults").glob("*.onnxs"))
SUMMARY = re.compile(r"^difftest: (\d+) programs, (\d+) agree, (\d+) disagree, (\d+) valid rejected$")


@pytest.fixture(scope="module")
def binary() -> Path:
    return harness.default_onnxsc_binary()


def _session_opens(op: str, dtype: str, opset: int) -> bool:
    import onnxruntime as ort

    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    arity = 2 if op in ("Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min", "Less", "Greater",
                        "LessOrEqual", "GreaterOrEqual", "Equal", "And", "Or", "Xor", "MatMul") else 1
    inputs = [helper.make_tensor_value_info(f"i{k}", elem, [2, 2]) for k in range(arity)]
    names = [f"i{k}" for k in range(arity)]
    attrs = {"keepdims": 0} if op.startswith("Reduce") else {}
    nodes = [helper.make_node(op, names, ["o"], **attrs)]
    if op == "Where":
        inputs.append(helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, [2, 2]))
        nodes = [helper.make_node("Where", ["c", "i0", "i0"], ["o"])]
    output = onnx.ValueInfoProto()
    output.name = "o"
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, [output]),
                              opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=harness.model_ir_version({"": opset}))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        return True
    except Exception:  # noqa: BLE001 - a missing kernel is the answer
        return False


@pytest.mark.parametrize("opset", generator.OPSETS)
def test_kernel_table_matches_onnxruntime(opset):
    missing = [(op, t) for op, types in generator.KERNELS.items() for t in sorted(types)
               if not _session_opens(op, t, opset)]
    assert not missing, f"opset {opset}: ONNX Runtime has no kernel for {missing}"


def test_a_seed_gives_the_same_program_in_any_process():
    code = "import sys; sys.path.insert(0, sys.argv[1]); from difftest import generator; " \
           "print(generator.with_header(generator.generate(424242)), end='')"
    texts = {
        subprocess.run([sys.executable, "-c", code, str(harness.REPO_ROOT / "tests")], check=True,
                       capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    assert texts == {generator.with_header(generator.generate(424242))}
    assert generator.generate(424243).source != generator.generate(424242).source


def _mutant(tmp_path: Path, binary: Path) -> Path:
    """A compiler that is onnxsc, except that every top-level `Add` of every function it
    builds, and of every call it specialises (`serve`'s linked models), becomes a `Sub`."""
    script = tmp_path / "onnxsc-mutant"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import struct, subprocess, sys
        import onnx

        def subtract(nodes):
            for node in nodes:
                if node.op_type == "Add":
                    node.op_type = "Sub"

        if "serve" in sys.argv:
            run = subprocess.run([{str(binary)!r}, *sys.argv[1:]], input=sys.stdin.buffer.read(), capture_output=True)
            out, rest, first = b"", run.stdout, True
            while len(rest) >= 4:
                (n,) = struct.unpack("<I", rest[:4])
                frame, rest = rest[4:4 + n], rest[4 + n:]
                # The first answer is the handshake's, the server's versions.
                if frame[:1] == bytes([0]) and not first:
                    model = onnx.load_from_string(frame[1:])
                    subtract(model.graph.node)
                    frame = bytes([0]) + model.SerializeToString()
                out += struct.pack("<I", len(frame)) + frame
                first = False
            sys.stdout.buffer.write(out)
            sys.stderr.buffer.write(run.stderr)
            sys.exit(run.returncode)
        code = subprocess.run([{str(binary)!r}, *sys.argv[1:]]).returncode
        if code == 0 and sys.argv[1] == "build":
            out = sys.argv[sys.argv.index("-o") + 1]
            model = onnx.load(out)
            for f in model.functions:
                subtract(f.node)
            onnx.save(model, out)
        sys.exit(code)
    """))
    script.chmod(0o755)
    return script


def test_the_oracle_finds_a_miscompilation_and_the_reducer_shrinks_it(tmp_path, binary):
    honest = oracle.Oracle(binary, tmp_path / "honest")
    mutant = oracle.Oracle(_mutant(tmp_path, binary), tmp_path / "mutant")
    found = None
    for seed in range(7000, 7040):
        text = generator.with_header(generator.generate(seed))
        assert honest.run_text(text).finding() is None, f"program {seed}"
        result = mutant.run_text(text)
        if result.finding() and found is None and text.count("\ndef ") > 1:
            found = (text, result.finding())
    assert found is not None, "turning Add into Sub went unnoticed over 40 programs"
    text, finding = found
    assert finding.kind == oracle.DISAGREE and finding.detail.startswith("output "), finding
    small = reduce.reduce(mutant, text, finding, max_tests=400)
    assert mutant.run_text(small).finding().kind == oracle.DISAGREE
    # Smaller, and without the functions the finding does not need.
    assert len(small.splitlines()) < len(text.splitlines()) and small.count("\ndef ") < text.count("\ndef "), small
    assert honest.run_text(small).finding() is None


def test_the_oracle_finds_a_miscompiled_trace_time_translation(tmp_path, binary):
    honest = oracle.Oracle(binary, tmp_path / "honest")
    mutant = oracle.Oracle(_mutant(tmp_path, binary), tmp_path / "mutant")
    found = []
    for seed in range(7000, 7015):
        text = generator.with_header(trace_generator.generate_trace(seed))
        assert honest.run_text(text).finding() is None, f"program {seed}"
        finding = mutant.run_text(text).finding()
        if finding:
            found.append(finding)
    assert found, "turning Add into Sub in specialised translations went unnoticed over 15 programs"
    # Different values, not a compiler that failed to answer.
    assert all(f.kind == oracle.DISAGREE and f.detail.startswith("output ") for f in found), found


def test_outputs_compare_by_element_type():
    same = [np.array([1.0, np.nan], np.float32)]
    assert oracle.compare(same, [np.array([1.0, np.nan], np.float32)]) is None
    assert oracle.compare(same, [np.array([1.0, 2.0], np.float32)]) is not None
    assert oracle.compare([np.array([1.0 + 1e-7], np.float32)], [np.array([1.0], np.float32)]) is None
    assert oracle.compare([np.array([3], np.int32)], [np.array([3], np.int64)]) is not None
    assert oracle.compare([np.array([2], np.int8)], [np.array([3], np.int8)]) is not None


@pytest.mark.parametrize("case", ONNXSCRIPT_FAULTS, ids=lambda p: p.stem)
def test_onnxscript_faults_are_not_findings(case, binary, tmp_path):
    """Each case (run with the PYTHONHASHSEED its name gives, else 0) makes onnxscript compile
    something else than the source says: the oracle tells it, and reports no finding. A
    miswired loop is not compared; a wrong result that onnxscript's eager mode does not share
    is onnxscript's."""
    found = re.search(r"hash(\d+)", case.stem)
    seed = found.group(1) if found else "0"
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
            "from difftest import oracle; "
            "r = oracle.Oracle(Path(sys.argv[2]), Path(sys.argv[3])).run_text(Path(sys.argv[4]).read_text()); "
            "print(r.kind, r.functions[0].detail)")
    out = subprocess.run([sys.executable, "-c", code, str(harness.REPO_ROOT / "tests"), str(binary),
                          str(tmp_path), str(case)], check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONHASHSEED": seed}).stdout
    assert out.startswith(("invalid onnxscript's Loop", "onnxscript_wrong ")), out


@pytest.mark.parametrize("case", REGRESSIONS, ids=lambda p: p.stem)
def test_regression_cases_agree(case, binary, tmp_path):
    result = oracle.Oracle(binary, tmp_path).run_text(case.read_text(encoding="utf-8"))
    assert result.kind == oracle.AGREE, [o for o in result.functions if o.kind != oracle.AGREE]


def test_scripts_difftest_prints_its_summary_last(binary, tmp_path):
    env = {**os.environ, "ONNXSC_BIN": str(binary)}
    run = subprocess.run([str(harness.REPO_ROOT / "scripts" / "difftest"), "--seed", "3", "--count", "12",
                          "--jobs", "1", "--out", str(tmp_path)], capture_output=True, text=True, env=env)
    last = run.stdout.strip().splitlines()[-1]
    match = SUMMARY.match(last)
    assert match, run.stdout + run.stderr
    assert match.group(1) == "12"
    assert run.returncode == (1 if int(match.group(3)) or int(match.group(4)) else 0)
    assert run.returncode == 0, run.stdout


def test_a_run_that_never_ends_is_stopped():
    """A reduced program can loop forever where the generated one did not: the run is stopped
    at its time limit (and a later run is not, by a stale deadline)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Add", ["v", "one"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", onnx.TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", onnx.TensorProto.FLOAT, [])],
        [helper.make_tensor("one", onnx.TensorProto.FLOAT, [], [1.0])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["", "go", "v0"], ["v"], body=body)], "forever",
        [helper.make_tensor_value_info("go", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("v0", onnx.TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("v", onnx.TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with pytest.raises(Exception, match="(?i)terminat"):
        harness.run_model(model, {"go": np.array(True), "v0": np.array(0.0, np.float32)}, seconds=0.5)
    finite = {"go": np.array(False), "v0": np.array(2.0, np.float32)}
    for _ in range(3):
        assert harness.run_model(model, finite, seconds=0.5)[0] == 2.0
