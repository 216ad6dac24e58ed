"""Finding the ``onnxsc`` executable installed beside this package."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

from onnxsc._errors import OnnxscError


def find_onnxsc_bin() -> str:
    """The path of the ``onnxsc`` executable.

    ``ONNXSC_BIN`` wins; then the scripts directory of this Python installation, where
    ``pip install`` puts the binary of this wheel (also for ``--user`` installs); then ``PATH``.
    """
    explicit = os.environ.get("ONNXSC_BIN")
    if explicit:
        if not os.path.isfile(explicit):
            raise OnnxscError(f"ONNXSC_BIN={explicit!r} is not a file")
        return explicit
    exe = "onnxsc" + (sysconfig.get_config_var("EXE") or "")
    schemes = [sysconfig.get_default_scheme()]
    user = f"{os.name}_user"
    if user in sysconfig.get_scheme_names():
        schemes.append(user)
    for scheme in schemes:
        candidate = os.path.join(sysconfig.get_path("scripts", scheme=scheme), exe)
        if os.path.isfile(candidate):
            return candidate
    # A virtual environment's bin directory, when this package was imported from elsewhere.
    candidate = os.path.join(os.path.dirname(sys.executable), exe)
    if os.path.isfile(candidate):
        return candidate
    found = shutil.which("onnxsc")
    if found:
        return found
    raise OnnxscError(
        "the onnxsc executable was not found; install the package with `pip install .` "
        "from the onnxsc repository, or set ONNXSC_BIN"
    )
