"""Which entries of a translation table an export uses (onnxsc.usage), and the warnings for
entries it never calls: before export for an operator torch.export always decomposes, during
export for one whose graph calls a related operator instead.

The facts behind them are torch 2.15's, measured here on a model with BatchNorm, LayerNorm and
nearest interpolation: its exported graph calls `_native_batch_norm_legit_no_training`,
`layer_norm` and `upsample_nearest2d.vec`, never `batch_norm`, `native_layer_norm` or
`upsample_nearest2d`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/test")
import onnxsc  # noqa: E402

NORMS = Path(__file__).parent / "usage" / "norms.onnxs"

pytestmark = pytest.mark.usefixtures("quiet_exporter")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)
        self.ln = torch.nn.LayerNorm(4)

    def forward(self, x):
        y = torch.relu(self.bn(x))
        y = torch.nn.functional.interpolate(y, scale_factor=2.0, mode="nearest")
        return self.ln(y[..., :4])


def _export(table):
    x = torch.randn(1, 3, 4, 4)
    return torch.onnx.export(Net().eval(), (x,), dynamo=True, custom_translation_table=table, verbose=False)


def _ours(caught):
    return [w for w in caught if issubclass(w.category, onnxsc.OnnxscWarning)]


def test_an_operator_export_always_decomposes_is_a_warning_when_the_table_is_built():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        onnxsc.translation_table(NORMS)
    messages = [str(w.message) for w in _ours(caught)]
    assert len(messages) == 1, messages
    assert "always decomposes `aten::batch_norm`" in messages[0]
    assert "aten::_native_batch_norm_legit_no_training" in messages[0]
    (w,) = _ours(caught)
    assert (Path(w.filename).name, w.lineno) == (NORMS.name, 12)


def test_an_entry_whose_graph_calls_a_related_operator_instead_is_a_warning_during_export():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = onnxsc.translation_table(NORMS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _export(table)
    messages = sorted(str(w.message) for w in _ours(caught))
    assert len(messages) == 2, messages
    assert "never calls `aten::native_layer_norm`" in messages[0] and "`aten::layer_norm`" in messages[0]
    assert "never calls `aten::upsample_nearest2d`" in messages[1] and "`aten::upsample_nearest2d.vec`" in messages[1]
    # batch_norm was reported when the table was built; relu is used.
    assert not any("batch_norm" in m or "relu" in m for m in messages), messages


def test_deny_warnings_makes_an_unused_entry_an_error():
    with pytest.raises(onnxsc.OnnxscError, match="always decomposes `aten::batch_norm`"):
        onnxsc.translation_table(NORMS, deny_warnings=True)


def test_the_usage_report_after_an_export():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = onnxsc.translation_table(NORMS)
        program = _export(table)
    report = onnxsc.usage(program, table)
    assert report.used == ("aten::relu",)
    unused = {u.operator: u.instead for u in report.unused}
    assert unused == {
        "aten::batch_norm": ("aten::_native_batch_norm_legit_no_training",),
        "aten::native_layer_norm": ("aten::layer_norm",),
        "aten::upsample_nearest2d": ("aten::upsample_nearest2d.vec",),
    }
    assert set(report.not_overridden) == {
        "aten::_native_batch_norm_legit_no_training",
        "aten::layer_norm",
        "aten::slice.Tensor",
        "aten::upsample_nearest2d.vec",
    }
    data = report.as_dict()
    assert data["used"] == ["aten::relu"] and len(data["unused"]) == 3
    text = str(report)
    assert text.startswith(
        "translation table usage: 1 of 4 entries used, 3 unused (3 where the graph calls a related operator "
        "instead); 4 operators of the graph without an entry\n"
    ), text
    assert "\n  aten::native_layer_norm  (the graph calls aten::layer_norm instead)\n" in text
    # The used entries are listed on request only.
    assert "\n  aten::relu" not in text and "\nused:\n  aten::relu\n" in report.format(used=True)


def test_the_report_of_a_large_table_is_a_summary_with_its_lists_on_request():
    """A table built from torchlib has hundreds of entries an export never calls: the report
    counts them and lists only what to act on, unless asked."""
    unused = tuple(onnxsc.UnusedEntry(f"aten::op{k}", ()) for k in range(400))
    report = onnxsc.UsageReport(("aten::relu",), unused, ())
    text = str(report)
    assert text.splitlines()[0] == (
        "translation table usage: 1 of 401 entries used, 400 unused (0 where the graph calls a related "
        "operator instead); 0 operators of the graph without an entry"
    )
    assert "aten::op7" not in text and len(text.splitlines()) == 2
    every = report.format(used=True, unused=True)
    assert "\n  aten::op399" in every and "\n  aten::relu" in every
