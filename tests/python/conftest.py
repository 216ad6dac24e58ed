"""Fixtures for the onnxsc Python suites.

The compiler binary is ``$ONNXSC_BIN`` if set, else ``<repo>/target/debug/onnxsc``.
Nothing is skipped when it is missing: every test that needs it fails, saying to run
``cargo build``.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

import pytest

import harness


@pytest.fixture(scope="session")
def onnxsc_bin() -> Path:
    """Path of the onnxsc binary under test."""
    path = harness.default_onnxsc_binary()
    source = "$ONNXSC_BIN" if os.environ.get("ONNXSC_BIN") else "the default location"
    if not path.is_file():
        pytest.fail(
            f"onnxsc binary not found at {path} ({source}). Run `cargo build` in "
            f"{harness.REPO_ROOT} first, or set ONNXSC_BIN to the compiler's path.",
            pytrace=False,
        )
    if not os.access(path, os.X_OK):
        pytest.fail(f"onnxsc binary at {path} is not executable", pytrace=False)
    return path


@pytest.fixture(scope="session")
def onnxsc(onnxsc_bin: Path) -> harness.Onnxsc:
    """Runs the compiler: ``onnxsc.build(paths, out)``, ``onnxsc.run(*args)``."""
    return harness.Onnxsc(onnxsc_bin)


class BuildCache:
    """Builds each source once per session (``onnxsc build FILE -o OUT``)."""

    def __init__(self, compiler: harness.Onnxsc, outdir: Path):
        self.compiler = compiler
        self.outdir = outdir
        self._results: dict[Path, harness.BuildResult] = {}

    def build(self, path: Path) -> harness.BuildResult:
        path = Path(path).resolve()
        if path not in self._results:
            out = self.outdir / f"{len(self._results):03d}_{path.stem}.onnx"
            self._results[path] = self.compiler.build([path], out)
        return self._results[path]

    def functions(self, path: Path):
        """name -> FunctionProto of a successful build (assertion error otherwise)."""
        return harness.functions_by_name(self.build(path).require_model())


@pytest.fixture(scope="session")
def onnxsc_builds(onnxsc: harness.Onnxsc, tmp_path_factory) -> BuildCache:
    return BuildCache(onnxsc, tmp_path_factory.mktemp("onnxsc-builds"))


@pytest.fixture
def quiet_exporter():
    """torch.onnx.export logs and warns at length; the assertions say what matters."""
    logging.disable(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    logging.disable(logging.NOTSET)
