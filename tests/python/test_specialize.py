"""Specialisation through one ``onnxsc serve`` process per library: one process for every
variant of a table, the same bodies as ``onnxsc link --mode inline``, safe from several
threads, an ``OnnxscError`` with the server's stderr when it dies, and nothing left behind when
the Specializer goes."""

from __future__ import annotations

import dataclasses
import gc
import os
import subprocess
import threading

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/test")
import onnx  # noqa: E402
import onnxsc  # noqa: E402
from onnxsc import _server, _specialize  # noqa: E402
from onnxsc._signature import signature_of  # noqa: E402
from onnxsc._table import compile_library  # noqa: E402

import harness  # noqa: E402

TUTORIAL = harness.REPO_ROOT / "examples" / "tutorial.onnxs"
OVERRIDES = harness.REPO_ROOT / "tests" / "python" / "overrides" / "aten.onnxs"

pytestmark = pytest.mark.usefixtures("quiet_exporter")


@pytest.fixture
def servers(monkeypatch):
    """Every `onnxsc serve` process started, and the requests sent (handshakes not counted)."""
    started, requests = [], []
    popen, request = subprocess.Popen, _server.Server.request

    def counting_popen(cmd, *args, **kwargs):
        proc = popen(cmd, *args, **kwargs)
        if "serve" in cmd:
            started.append(proc)
        return proc

    def counting_request(self, kind, body):
        if kind != _server.HELLO:
            requests.append(body)
        return request(self, kind, body)

    monkeypatch.setattr(_server.subprocess, "Popen", counting_popen)
    monkeypatch.setattr(_server.Server, "request", counting_request)
    return started, requests


class Block(torch.nn.Module):
    """linear with and without bias, gelu both ways, softmax on two axes, clamp three ways:
    many distinct calls of the table's translations."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8, bias=False)

    def forward(self, x):
        x = torch.nn.functional.gelu(self.a(x))
        x = torch.nn.functional.gelu(self.b(x), approximate="tanh")
        x = torch.softmax(x, dim=-1) + torch.softmax(x, dim=0)
        return torch.clamp(x, min=0.1) + torch.clamp(x, max=0.9) + torch.clamp(x, 0.2, 0.8)


def test_one_table_makes_one_server_for_many_variants(servers):
    started, requests = servers
    table = onnxsc.translation_table(OVERRIDES)
    assert started == [], "the server starts on the first variant, not with the table"
    x = torch.randn(4, 8)
    model = Block().eval()
    program = torch.onnx.export(model, (x,), dynamo=True, custom_translation_table=table, verbose=False)
    torch.testing.assert_close(torch.as_tensor(program(x)[0]), model(x), rtol=1e-4, atol=1e-5)
    assert len(requests) >= 8, f"only {len(requests)} variants"
    assert len(started) == 1, f"{len(started)} server processes for {len(requests)} variants"
    # A second export reuses the variants: no request, no process.
    before = len(requests)
    torch.onnx.export(model, (x,), dynamo=True, custom_translation_table=table, verbose=False)
    assert len(requests) == before and len(started) == 1


@pytest.fixture(scope="module")
def tutorial():
    data, model = compile_library([TUTORIAL])
    (add,) = [f for f in model.functions if f.name == "custom_aten_add"]
    return data, add, signature_of(add)


def test_the_server_links_what_link_inline_links(tutorial, tmp_path):
    data, add, signature = tutorial
    specializer = _specialize.Specializer(data)
    library = tmp_path / "library.onnx"
    library.write_bytes(data)
    for attributes in [{}, {"alpha": 2.0}]:
        served = specializer.linked(add, signature, ["self", "other"], attributes)
        call = tmp_path / "call.onnx"
        call.write_bytes(harness.one_call(add, ["self", "other"], attributes, signature).SerializeToString())
        out = tmp_path / "linked.onnx"
        cmd = [onnxsc.find_onnxsc_bin(), "link", str(call), str(library), "-o", str(out), "--mode", "inline"]
        subprocess.run(cmd, check=True, capture_output=True)
        assert served.SerializeToString() == out.read_bytes()
    specializer.close()


def test_a_killed_server_raises_onnxsc_error_and_the_next_call_gets_a_fresh_one(tutorial):
    data, add, signature = tutorial
    specializer = _specialize.Specializer(data)
    specializer.variant(add, signature, ["self", "other"], {}, 1)
    proc = specializer._server._proc
    proc.kill()
    proc.wait()
    # The request that meets the dead server says so.
    with pytest.raises(onnxsc.OnnxscError, match="the onnxsc server of this library was killed by signal 9"):
        specializer.variant(add, signature, ["self", "other"], {"alpha": 2.0}, 1)
    # Variants made before it died are still there.
    assert specializer.variant(add, signature, ["self", "other"], {}, 1) is not None
    # The next request starts another server: one crash does not fail every later call.
    assert specializer.variant(add, signature, ["self", "other"], {"alpha": 3.0}, 1) is not None
    assert specializer._server._proc is not proc
    # Closed, the next variant starts another server.
    specializer.close()
    specializer.variant(add, signature, ["self", "other"], {"alpha": 2.0}, 1)
    specializer.close()


def test_a_refused_link_raises_with_the_diagnostics(tutorial):
    data, add, signature = tutorial
    specializer = _specialize.Specializer(data)
    # A signature that says more than the function: an attribute it does not declare.
    beta = dataclasses.replace(signature.attributes[0], name="beta")
    wrong = signature.replace(attributes=(*signature.attributes, beta))
    with pytest.raises(onnxsc.OnnxscError, match=r"(?s)cannot specialise `custom_aten_add`.*error\[E0803\].*no attribute `beta`"):
        specializer.variant(add, wrong, ["self", "other"], {"beta": 1.0}, 1)
    # The server goes on.
    specializer.variant(add, signature, ["self", "other"], {}, 1)
    specializer.close()


def test_variants_from_several_threads_share_one_server(tutorial, servers):
    started, _ = servers
    data, add, signature = tutorial
    specializer = _specialize.Specializer(data)
    alphas = [1.0 + k / 4 for k in range(24)]
    results, errors = {}, []

    def work(alpha):
        try:
            results[alpha] = specializer.linked(add, signature, ["self", "other"], {"alpha": alpha})
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(a,)) for a in alphas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(started) == 1
    for alpha, linked in results.items():
        constants = [n for n in linked.graph.node if n.op_type == "Constant"]
        if alpha == 1.0:
            assert not constants, "alpha 1 folds the multiplication away"
        else:
            (value,) = [onnx.helper.get_attribute_value(a) for n in constants for a in n.attribute]
            assert value == alpha
    specializer.close()


def test_the_server_ends_with_its_specializer(tutorial, servers):
    started, _ = servers
    data, add, signature = tutorial
    specializer = _specialize.Specializer(data)
    specializer.variant(add, signature, ["self", "other"], {}, 1)
    (proc,) = started
    library = proc.args[-1]
    del specializer
    gc.collect()
    assert proc.poll() == 0, "the server ended at the end of its input"
    assert not os.path.exists(library), "its library file is gone"


def test_a_binary_of_another_protocol_fails_with_a_message_naming_both(monkeypatch, tutorial):
    """The package says its protocol first; a binary speaking another refuses, and the error
    names both releases' protocols, not a misread frame."""
    data, _ = compile_library([TUTORIAL])
    monkeypatch.setattr(_server, "PROTOCOL", 1)
    with pytest.raises(onnxsc.OnnxscError) as e:
        _server.Server(data)
    message = str(e.value)
    assert "speaks serve protocol 1, and onnxsc" in message and "speaks 3" in message, message
    assert "different releases" in message and "pip install onnxsc" in message, message
