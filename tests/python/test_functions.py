"""onnxsc.functions: a compiled function called on NumPy arrays or torch tensors, run in ONNX
Runtime, computes what PyTorch (or NumPy) computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/test")
import onnxsc  # noqa: E402

GELU = Path(__file__).parent / "functions" / "gelu.onnxs"


@pytest.fixture(scope="module")
def fns():
    return onnxsc.functions(GELU)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_a_translation_called_directly_computes_what_pytorch_does(fns, approximate):
    x = torch.linspace(-4, 4, 33)
    got = fns.my_gelu(x, approximate=approximate)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, torch.nn.functional.gelu(x, approximate=approximate).numpy(), rtol=1e-5, atol=1e-6)


def test_omitted_optional_inputs_and_several_outputs(fns):
    x = np.arange(6, dtype=np.float32)
    a, b = fns.split_two(x)
    np.testing.assert_array_equal(np.concatenate([a, b]), x)
    a, b = fns["split_two"](x, bias=np.full(6, 0.5, dtype=np.float32))
    np.testing.assert_array_equal(np.concatenate([a, b]), x + 0.5)


def test_calls_are_bound_as_python_binds_them(fns):
    x = np.ones(3, dtype=np.float32)
    with pytest.raises(TypeError, match="missing required argument 'self'"):
        fns.my_gelu()
    with pytest.raises(TypeError, match="unexpected keyword argument 'approx'"):
        fns.my_gelu(x, approx="tanh")
    with pytest.raises(AttributeError, match="no compiled function `nope`; the functions are: my_gelu, split_two"):
        fns.nope
    assert list(fns) == ["my_gelu", "split_two"]


def test_the_readme_example_runs():
    """The README's "Is my override right?" Python block runs as written."""
    import os
    import subprocess
    import sys

    root = Path(__file__).parent.parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Is my override right?", 1)[1].split("\n## ", 1)[0]
    (block,) = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    done = subprocess.run([sys.executable, "-c", block], cwd=root, capture_output=True, text=True, env=os.environ.copy())
    assert done.returncode == 0, done.stderr[-3000:]
