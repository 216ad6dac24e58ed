"""One ``onnxsc serve`` process per compiled library: the library read and indexed once, then
one request per variant (``driver::serve`` in the compiler says the protocol).

Every message is a 4-byte little-endian length, then its bytes. A request is a kind byte
(:data:`HELLO`, :data:`LINK`, :data:`TRACE`, :data:`CALL`) and its body; a response a status byte and its
payload. The first request is the handshake: this package's protocol version and its own
version, so that a binary of another release fails with a message that names both.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import weakref
from pathlib import Path

from onnxsc._binary import find_onnxsc_bin
from onnxsc._errors import OnnxscError

# The version of the serve protocol this package speaks (`driver::serve::PROTOCOL`).
PROTOCOL = 3

# The kind byte of a request.
HELLO = 0
LINK = 1
TRACE = 2
CALL = 3

# The status byte of a response.
LINKED = 0


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return f"onnxsc {version('onnxsc')} (Python package)"
    except Exception:  # not installed: run from the source tree
        return "onnxsc (Python package, from source)"


class Server:
    """One ``onnxsc serve`` process: the library in a temporary file that lives as long as the
    process, requests framed on its stdin, responses on its stdout, its stderr in a temporary
    file, read when it dies. One request at a time. Raises :class:`OnnxscError` when the binary
    does not speak this package's protocol."""

    def __init__(self, library: bytes):
        directory = tempfile.mkdtemp(prefix="onnxsc-serve-")
        stderr = tempfile.TemporaryFile(prefix="onnxsc-serve-")
        try:
            path = Path(directory) / "library.onnx"
            path.write_bytes(library)
            cmd = [find_onnxsc_bin(), "--color", "never", "serve", str(path)]
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        except BaseException:
            stderr.close()
            shutil.rmtree(directory, ignore_errors=True)
            raise
        self._stderr = stderr
        self._responses = _Responses(self._proc.stdout)
        self._lock = threading.Lock()
        self._failure = None
        self.close = weakref.finalize(self, _close, self._proc, directory, stderr)
        self._greet()

    def _greet(self) -> None:
        """The handshake: this package's protocol, answered with the binary's versions."""
        status, payload = self.request(HELLO, struct.pack("<I", PROTOCOL) + _package_version().encode("utf-8"))
        answer = payload.decode("utf-8", errors="replace").strip()
        if status == LINKED:
            try:
                if json.loads(answer).get("protocol") == PROTOCOL:
                    return
            except ValueError:
                pass
        self.close()
        raise OnnxscError(
            f"the onnxsc binary {find_onnxsc_bin()} does not speak this package's serve protocol "
            f"({PROTOCOL}): the Python package and the binary are of different releases; it "
            f"answered:\n{answer}\n"
            "install the package and the binary of one release (`pip install onnxsc` installs both; "
            "ONNXSC_BIN may point at another binary)"
        )

    def request(self, kind: int, body: bytes) -> tuple:
        """The response to a request of ``kind``: (status, payload)."""
        with self._lock:
            if self._failure is None:
                try:
                    return self._exchange(bytes([kind]) + body)
                except (OSError, ValueError, EOFError):
                    self._failure = self._died()
            raise OnnxscError(self._failure)

    @property
    def ended(self) -> bool:
        """Whether the process stopped answering (a crash is reported to the request it met)."""
        return self._failure is not None

    def _exchange(self, data: bytes) -> tuple:
        proc = self._proc
        proc.stdin.write(struct.pack("<I", len(data)) + data)
        proc.stdin.flush()
        (length,) = struct.unpack("<I", self._responses.read(4))
        response = self._responses.read(length)
        if not response:
            raise EOFError
        return response[0], response[1:]

    def _died(self) -> str:
        """What to say of a server that stopped answering: its exit and its stderr."""
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        how = f"was killed by signal {-code}" if code < 0 else f"ended with exit status {code}"
        self._stderr.seek(0)
        err = self._stderr.read().decode("utf-8", errors="replace").strip()
        return f"the onnxsc server of this library {how}" + (f":\n{err}" if err else ", saying nothing")


class _Responses:
    """The server's stdout, read by waiting actively for a short while before sleeping. The
    answer to a request comes within tens of microseconds; a reader that sleeps meanwhile has
    its core go idle, and waking it costs about as much again (more on a virtual machine). Where
    the pipe cannot be made non-blocking (or outside POSIX systems), reads simply block."""

    # How long a read polls before it blocks: far longer than an answer takes, far shorter
    # than anything a user would notice.
    SPIN_SECONDS = 0.002

    def __init__(self, stream):
        self._stream = stream
        self._buffer = bytearray()
        self._fd = None
        if os.name != "posix":  # `select` waits on sockets only, elsewhere
            return
        try:
            fd = stream.fileno()
            os.set_blocking(fd, False)
            self._fd = fd
        except (OSError, AttributeError, ValueError):
            pass

    def read(self, n: int) -> bytes:
        if self._fd is None:
            return _read(self._stream, n)
        deadline = None
        while len(self._buffer) < n:
            try:
                chunk = os.read(self._fd, max(n - len(self._buffer), 1 << 16))
            except BlockingIOError:
                now = time.perf_counter()
                if deadline is None:
                    deadline = now + self.SPIN_SECONDS
                elif now > deadline:
                    select.select([self._fd], [], [])
                continue
            if not chunk:
                raise EOFError
            self._buffer += chunk
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data


def _read(stream, n: int) -> bytes:
    data = stream.read(n)
    if len(data) < n:
        raise EOFError
    return data


def _close(proc, directory: str, stderr) -> None:
    """Ends a server: its input closed (it exits at the end of its input), then its files."""
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()
    stderr.close()
    shutil.rmtree(directory, ignore_errors=True)
