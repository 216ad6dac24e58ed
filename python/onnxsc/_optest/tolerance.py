"""How far ONNX Runtime may be from PyTorch for a right translation: by dtype, and by family of
operator (docs/optest.md has the table and why).

Integer and boolean outputs must be equal. Floating point outputs may differ by ``atol + rtol *
|expected|``: an elementwise operator's kernels differ in the last bits of a transcendental
function; an operator that accumulates (a sum, a product of matrices, a convolution, a
normalisation, a softmax) also in the order of its additions, so its tolerance is wider; float16
and bfloat16 keep 11 and 8 bits of mantissa, and PyTorch's CPU kernels compute them in float32
where ONNX Runtime may not.
"""

from __future__ import annotations

import re

# (rtol, atol) for elementwise operators, by dtype.
ELEMENTWISE = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-4, 1e-5),
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
}

# (rtol, atol) for operators that accumulate, by dtype.
ACCUMULATING = {
    "float64": (1e-6, 1e-6),
    "float32": (1e-3, 1e-4),
    "float16": (2e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
}

# The aten names of operators that accumulate (a word of the name, `_` separated).
_ACCUMULATING_WORDS = re.compile(
    r"(^|_)(sum|mean|prod|var|std|norm|matmul|mm|bmm|addmm|baddbmm|addmv|mv|dot|linear|conv\w*|"
    r"convolution|softmax|logsumexp|cumsum|cumprod|attention|pool\w*|einsum|tensordot|layer|group|"
    r"batch|instance|rms|loss|entropy|nll|kl|cdist|dist|trace|det|inverse|solve|lerp|addcmul|addcdiv)(_|$)"
)


def family(qualname: str) -> str:
    """``accumulating`` or ``elementwise``, by the operator's name."""
    name = qualname.split("::", 1)[-1].split(".")[0].lstrip("_")
    return "accumulating" if _ACCUMULATING_WORDS.search(name) else "elementwise"


def tolerance(qualname: str, dtype: str) -> tuple:
    """``(rtol, atol)`` for a floating point output of dtype ``dtype`` (``float32``) of the
    operator ``qualname``."""
    table = ACCUMULATING if family(qualname) == "accumulating" else ELEMENTWISE
    return table.get(dtype, table["float32"])
