"""1-D layers (issue 15, item 3): nn.Conv1d (plain, depthwise, strided and
dilated), nn.MaxPool1d and nn.AvgPool1d compile to the int8 2-D kernels over
a unit height, with batch-norm and ReLU folded as after a 2-D convolution.
The program runs byte-identical to the numpy int8 reference on the host and
on the emulated M55 and M33, and within a few output steps of float."""

import pytest
import torch
import torch.nn as nn

from model_checks import board_matches_reference, host_steps_from_float
from ptec.compiler import compile_model


class AudioNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv1d(8, 16, 5, padding=2), nn.BatchNorm1d(16), nn.ReLU(),
            nn.MaxPool1d(2),
            nn.Conv1d(16, 16, 3, padding=1, groups=16), nn.ReLU(),
            nn.Conv1d(16, 24, 1), nn.BatchNorm1d(24), nn.ReLU(),
            nn.AvgPool1d(2),
            nn.Conv1d(24, 24, 3, stride=2, dilation=2, padding=2), nn.ReLU())
        self.fc = nn.Linear(24 * 8, 6)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def signals(n, seed):
    """Inputs like a feature stream: per-channel tones of different rates, with noise."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(64).float()
    rates = 0.1 + 0.05 * torch.arange(8).float()[:, None]
    return [((torch.sin(t[None, :] * rates + i) + 0.2 * torch.randn(8, 64, generator=g))[None],)
            for i in range(n)]


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(1)
    model = AudioNet().eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)
    res = compile_model(model, [signals(1, 0)[0][0]], signals(16, 0))
    return model, res


def test_every_layer_is_int8(compiled):
    _, res = compiled
    placed = {p.source: p.backend for p in res.lowered.placements if p.backend != "none"}
    assert set(placed.values()) == {"cortex_m"}, placed
    ops = set(res.lowered.operators)
    assert {"cortex_m::quantized_conv2d.out", "cortex_m::quantized_depthwise_conv2d.out",
            "cortex_m::quantized_max_pool2d.out", "cortex_m::quantized_avg_pool2d.out"} <= ops, ops
    assert not [n for n in res.graph.nodes if n.op in ("batch_norm", "clamp")], "not folded"


def test_host_equals_reference_and_float(compiled, tmp_path):
    model, res = compiled
    worst = host_steps_from_float(model, res, signals(12, 7), tmp_path)
    assert worst <= 3.0, worst      # measured 1.53


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(compiled, tmp_path, target):
    model, _ = compiled
    board_matches_reference(compile_model(model, [signals(1, 0)[0][0]], signals(16, 0), target=target).data, signals(1, 9)[0][0].numpy(), target, tmp_path)
