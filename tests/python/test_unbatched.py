"""Layers called on an unbatched input ([C, H, W] for a 2-D layer, [C, L]
for a 1-D one, [L, H] for nn.RNN / GRU / LSTM, [H] for a cell, [L, E] for
a transformer layer), which torch accepts: capture_unbatched records the
batched layer on x.unsqueeze(0) and squeezes its output. Oracle: torch's
own layer on the unbatched input; the output has torch's shape and stays
within the row's bound in output steps (ptec-run checked against the
reference interpreter by test_module_coverage.worst_steps). A failure of
ptec's own rewrite is ptec's refusal naming the layer, never "the model
fails on its example inputs" (capture_own_failure)."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import test_module_coverage as tmc
from ptec.capture import CaptureError, capture
from ptec.compiler import compile_model
from ptec.host_runtime import run
from ptec.pte import parse_program


class FConv(nn.Module):
    """F.conv2d with the module's own weight (the functional spelling)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 4, 3, 3) * 0.3)
        self.b = nn.Parameter(torch.randn(2) * 0.3)

    def forward(self, x):
        return F.conv2d(x, self.w, self.b)


class FPool(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, 2) + F.avg_pool2d(x, 2)


class ImplicitSoftmax(nn.Module):
    """F.softmax / softmin without a dim: torch's implicit dim follows the rank
    (1 for [L, H], 0 for 3-D); a Python TypeError in capture before."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class StateCell(nn.Module):
    """A cell given its state: an unbatched [H] state too."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(4, 5)
        self.register_buffer("h", torch.linspace(-1, 1, 5))

    def forward(self, x):
        h, c = self.cell(x, (self.h, self.h * 0.5))
        return h + c


B, FO, ST = tmc.Body, tmc.FirstOutput, tmc.SourceIsTarget
# name: (model maker, unbatched input shape, bound in output steps (measured worst rounded up to a half step))
CASES = {
    # bug 1: compiled, then the runner rejected the program / a Python error text
    "Conv2d": (lambda: B(nn.Conv2d(4, 2, 3)), (4, 6, 6), 1.5),
    "F.conv2d": (FConv, (4, 6, 6), 1.0),
    "MaxPool2d": (lambda: B(nn.MaxPool2d(2)), (4, 6, 6), 0.5),
    "F.max_pool2d+avg_pool2d": (FPool, (4, 6, 6), 1.0),
    "PixelShuffle": (lambda: B(nn.PixelShuffle(2)), (4, 6, 6), 0.5),
    "PixelUnshuffle": (lambda: B(nn.PixelUnshuffle(2)), (4, 6, 6), 0.5),
    "AvgPool2d": (lambda: B(nn.AvgPool2d(2)), (4, 6, 6), 1.0),
    "AdaptiveAvgPool2d": (lambda: B(nn.AdaptiveAvgPool2d(2)), (4, 6, 6), 1.0),
    "LPPool2d": (lambda: B(nn.LPPool2d(2, 2)), (4, 6, 6), 2.0),
    # bug 2: a wrong shape (RNNCell as a submodule), or refused as "the model fails"
    "RNNCell": (lambda: B(nn.RNNCell(4, 5)), (4,), 1.5),
    "RNNCell root": (lambda: nn.RNNCell(4, 5), (4,), 1.5),
    "GRUCell root": (lambda: nn.GRUCell(4, 5), (4,), 1.0),
    "LSTMCell root": (lambda: FO(nn.LSTMCell(4, 5)), (4,), 1.5),
    "LSTMCell with state": (StateCell, (4,), 1.5),
    "InstanceNorm1d": (lambda: B(nn.InstanceNorm1d(3)), (3, 8), 1.0),
    "TransformerEncoderLayer": (tmc.encoder_layer, (4, 8), 2.5),
    "F.softmax implicit dim": (lambda: ImplicitSoftmax(F.softmax), (4, 8), 1.5),
    "F.softmin implicit dim 3-D": (lambda: ImplicitSoftmax(F.softmin), (2, 4, 8), 2.0),
    # 3: refused before
    "ReflectionPad1d": (lambda: B(nn.ReflectionPad1d(2)), (3, 8), 0.5),
    "ReplicationPad2d": (lambda: B(nn.ReplicationPad2d(1)), (3, 4, 4), 0.5),
    "ConvTranspose2d": (lambda: B(nn.ConvTranspose2d(4, 2, 3, stride=2)), (4, 4, 4), 1.5),
    "LPPool1d": (lambda: B(nn.LPPool1d(2, 2)), (3, 8), 1.5),
    "MaxPool1d indices": (lambda: tmc.Unpool(nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)), (3, 8), 0.5),
    # (batched [1, 3, 6, 6] with the same samples: the same 1.03)
    "FractionalMaxPool2d": (lambda: B(nn.FractionalMaxPool2d(2, output_size=2,
                                                             _random_samples=torch.rand(1, 3, 2))), (3, 6, 6), 1.5),
    "Fold": (lambda: B(nn.Fold((4, 4), 2)), (12, 9), 1.0),
    "GRU": (lambda: FO(nn.GRU(4, 5, 2, bidirectional=True)), (3, 4), 2.0),
    "LSTM batch_first": (lambda: FO(nn.LSTM(4, 5, batch_first=True)), (3, 4), 1.5),
    "RNN": (lambda: FO(nn.RNN(4, 5)), (3, 4), 2.0),
    "TransformerEncoder seq-first": (lambda: B(nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2)), (4, 8), 3.0),
    "TransformerDecoderLayer": (lambda: ST(tmc.decoder_layer()), (4, 8), 2.0),
    "Transformer": (lambda: ST(nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)), (4, 8), 2.5),
}


def _checked(model, shape, bound, tmp_path):
    model = model.eval()
    calibration = tmc.inputs(shape)
    with torch.no_grad():
        model(calibration[0][0])
    res = compile_model(model, [calibration[0][0]], calibration)
    x = calibration[1][0]
    got = run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
    with torch.no_grad():
        want = model(x)
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)       # torch's unbatched shape
    worst = tmc.worst_steps(model, res, calibration[:3], tmp_path)
    assert worst <= bound + 1e-3, f"{worst:.2f} output steps from torch (bound {bound})"


@pytest.mark.parametrize("name", sorted(CASES))
def test_unbatched_layer_is_torch(name, tmp_path):
    make, shape, bound = CASES[name]
    torch.manual_seed(0)
    _checked(make(), shape, bound, tmp_path)


# the sweep: test_module_coverage's RUNS rows on their unbatched input (a
# representative set: one per family; torch rejects BatchNorm, GroupNorm, PReLU unbatched)
SWEEP = ["AdaptiveMaxPool1d", "AvgPool1d", "Conv1d", "Conv3d", "ConstantPad2d", "ConvTranspose1d",
         "InstanceNorm2d", "MaxPool3d", "MaxUnpool2d", "ReflectionPad3d", "Unfold", "LSTMCell"]


def test_runs_rows_unbatched(tmp_path):
    """Each row runs unbatched with torch's shape, within its bound plus half
    a step (a different input: its own rounding), or is refused in one line
    naming the layer."""
    ran = 0
    for cls in SWEEP:
        make, shape, bound, _ = tmc.RUNS[cls]
        torch.manual_seed(0)
        try:
            _checked(tmc.Body(make()), tuple(shape[1:]), bound + 0.5, tmp_path)
            ran += 1
        except CaptureError as e:
            assert "\n" not in str(e) and cls in str(e), f"{cls}: {e}"
    assert ran == len(SWEEP)            # today every one of them runs


def test_rewrite_failure_is_ptecs_refusal(monkeypatch):
    """Without capture_unbatched, a cell's stand-in fails on [H]: the refusal
    says ptec's rewrite failed and names the model, not "the model fails"."""
    import ptec.capture as cap
    import ptec.capture_unbatched as ub
    monkeypatch.setattr(cap, "unbatched_module", lambda *a, **k: None)
    monkeypatch.setattr(ub, "wrapped_root", lambda m, x: m)
    with pytest.raises(CaptureError) as e:
        capture(nn.GRUCell(4, 5), [torch.rand(4)])
    msg = str(e.value)
    assert "\n" not in msg and "GRUCell" in msg and "ptec cannot capture" in msg, msg
    assert "the model fails" not in msg, msg
    # a stand-in that loses the unbatched shape: refused, never a silently wrong shape
    with pytest.raises(CaptureError) as e:
        capture(tmc.Body(nn.RNNCell(4, 5)), [torch.rand(4)])
    assert "shape [1, 5], torch gives [5]" in str(e.value), str(e.value)


def test_model_error_keeps_its_wording():
    """A model torch itself rejects on its input is still the model's failure."""
    with pytest.raises(CaptureError) as e:
        capture(tmc.Body(nn.Linear(4, 5)), [torch.rand(3)])
    assert "the model fails on its example inputs (3)" in str(e.value), str(e.value)


def test_batch_of_two_keeps_its_batch(tmp_path):
    """A batched input is untouched: [2, C, H, W] gives torch's [2, ...]."""
    torch.manual_seed(0)
    _checked(tmc.Body(nn.Conv2d(4, 2, 3)), (2, 4, 6, 6), 1.5, tmp_path)
