"""``python -m onnxsc test PATHS``: every ``@torch_op`` translation judged against PyTorch
(docs/optest.md).

``cli`` is the command and its report; ``run`` tests one operator; ``opinfo`` finds PyTorch's
samples of it; ``generate`` makes the samples OpInfo's miss; ``judge`` exports, runs and compares;
``tolerance`` says how close is right; ``shrink`` reduces a failure and writes its reproducer;
``calls`` is the call they all pass around.
"""

from onnxsc._optest.calls import Call, flatten
from onnxsc._optest.cli import main
from onnxsc._optest.judge import ONNX_NAMES, compare, expected_of, export, quiet
from onnxsc._optest.run import Options, Tally, accepted_dtypes, base_calls, test_operator

__all__ = [
    "Call",
    "ONNX_NAMES",
    "Options",
    "Tally",
    "accepted_dtypes",
    "base_calls",
    "compare",
    "expected_of",
    "export",
    "flatten",
    "main",
    "quiet",
    "test_operator",
]
