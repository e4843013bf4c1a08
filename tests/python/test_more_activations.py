"""nn.Softplus (and F.softplus) and nn.PReLU with one slope (issue 15, from
the refused list): functions of one int8 tensor, so each becomes a 256-entry
LUT (cortex_m::quantized_activation) like SiLU or LeakyReLU. The int8 LUT is
the numpy reference's table, evaluated from torch's own float function; the
host runs byte-identical to the reference and stays within a few output
steps of PyTorch float; the boards give the host's bytes. A PReLU with a
slope per channel is not a function of one value: it becomes relu plus the
slopes times min(x, 0) (test_prelu_channels.py)."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference, host_steps_from_float
from ptec.compiler import compile_model


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.soft = nn.Softplus(beta=2.0, threshold=5.0)
        self.fc2 = nn.Linear(32, 32)
        self.prelu = nn.PReLU(init=0.2)
        self.fc3 = nn.Linear(32, 8)

    def forward(self, x):
        y = self.prelu(self.fc2(self.soft(self.fc1(x))))
        return self.fc3(F.softplus(y))


def inputs(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 16, generator=g) * 2,) for _ in range(n)]


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(1)
    model = Activations().eval()
    return model, compile_model(model, [inputs(1, 0)[0][0]], inputs(16, 0))


def test_each_activation_is_an_int8_lut(compiled):
    _, res = compiled
    placed = {p.op: p.backend for p in res.lowered.placements if p.op in ("softplus", "prelu")}
    assert placed == {"softplus": "cortex_m", "prelu": "cortex_m"}, res.lowered.placements
    assert set(res.lowered.operators) == {"cortex_m::quantize_per_tensor.out", "cortex_m::quantized_linear.out",
                                          "cortex_m::quantized_activation.out",
                                          "cortex_m::dequantize_per_tensor.out"}, res.lowered.operators


def test_host_equals_reference_and_float(compiled, tmp_path):
    model, res = compiled
    worst = host_steps_from_float(model, res, inputs(8, 3), tmp_path)
    assert worst <= 6.0, worst


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(compiled, tmp_path, target):
    model, _ = compiled
    board_matches_reference(compile_model(model, [inputs(1, 0)[0][0]], inputs(16, 0), target=target).data,
                            inputs(1, 9)[0][0].numpy(), target, tmp_path)


def test_prelu_per_channel_compiles():
    """Once refused; now relu(x) + slope * min(x, 0) (test_prelu_channels.py)."""
    model = nn.Sequential(nn.Conv2d(2, 4, 1), nn.PReLU(4)).eval()
    res = compile_model(model, [torch.rand(1, 2, 4, 4)], [(torch.rand(1, 2, 4, 4),) for _ in range(4)])
    assert not res.lowered.fallbacks
