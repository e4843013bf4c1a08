"""The wrong-shape guard's reference (capture_own_failure.wrong_shape): torch's
outputs of the model on the example inputs. When the capture ran the model
already (capture_export checks its graph against one eager run) those
outputs are the reference and the model does not run again; otherwise a
copy of it runs once, the caller's random streams untouched. (torch.export
is torch >= 2.1: the export path is stood in for here.)"""
import pytest
import torch
import torch.nn as nn

import ptec.capture as cap
import ptec.capture_export as ce
import ptec.capture_own_failure as cof
from ptec.capture import CaptureError, capture


def _no_second_run(*args, **kwargs):
    raise AssertionError("the model ran again for the wrong-shape check")


def test_given_eager_outputs_are_the_reference_and_the_model_does_not_run_again(monkeypatch):
    model = nn.Linear(4, 3).eval()
    x = torch.randn(2, 4)
    g = capture(model, [x], method="fx")
    monkeypatch.setattr(cof, "_reference_outputs", _no_second_run)
    assert cof.wrong_shape(g, [x], model, [torch.zeros(2, 3)]) is None
    wrong = cof.wrong_shape(g, [x], model, [torch.zeros(2, 1, 3)])
    assert "shape [2, 3], torch gives [2, 1, 3]" in wrong, wrong


def test_the_export_checks_run_reaches_the_guard(monkeypatch):
    """capture() hands capture_with_export's eager outputs to the guard."""
    model = nn.Linear(4, 3).eval()
    x = torch.randn(2, 4)
    fx_graph = capture(model, [x], method="fx")
    monkeypatch.setattr(torch, "export", object(), raising=False)
    monkeypatch.setattr(ce, "capture_with_export", lambda m, ex: (fx_graph, [torch.zeros(1, 2, 3)]))
    monkeypatch.setattr(cof, "_reference_outputs", _no_second_run)
    with pytest.raises(CaptureError, match=r"torch gives \[1, 2, 3\]"):
        cap.capture(model, [x], method="export")


def test_without_eager_outputs_a_copy_runs_once():
    calls = []

    class Counted(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 2

    model = Counted().eval()
    x = torch.randn(2, 4)
    g = capture(model, [x], method="fx")
    calls.clear()
    assert cof.wrong_shape(g, [x], model) is None
    assert len(calls) == 1
