"""nn.PReLU with a slope per channel (issue 15): relu(x) + slope * min(x, 0)
in int8 (two clamps, a channel-broadcast mul by the slopes, an add); the C
runtime gives the numpy reference's bytes on the host and the M55 and M33
boards, close to PyTorch's float result. One slope stays one LUT."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


class Net(nn.Module):
    def __init__(self, slopes=8):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.prelu = nn.PReLU(slopes)
        self.head = nn.Conv2d(8, 4, 1)
        with torch.no_grad():
            self.prelu.weight.copy_(torch.linspace(-0.5, 0.9, slopes))

    def forward(self, x):
        return self.head(self.prelu(self.conv(x)))


def _compiled(slopes=8, target="cortex-m55"):
    torch.manual_seed(0)
    model = Net(slopes).eval()
    g = torch.Generator().manual_seed(0)
    calib = [(torch.randn(1, 3, 8, 8, generator=g),) for _ in range(8)]
    return model, calib, compile_model(model, list(calib[0]), calib, target=target)


def test_per_channel_prelu_is_int8_and_exact(tmp_path):
    model, calib, res = _compiled()
    assert not res.lowered.fallbacks
    ops = [p.op for p in res.lowered.placements if p.source.startswith("prelu")]
    assert sorted(ops) == ["add", "clamp", "clamp", "constant", "mul"], ops
    prog = parse_program(res.data)
    x = calib[2][0].numpy()
    want = run_program(prog, [x])[0]
    got = host_runtime.run(prog, res.data, [x], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    with torch.no_grad():
        r = model(calib[2][0]).numpy().ravel()
    g = np.asarray(got, np.float64).ravel()
    assert float(g @ r / np.linalg.norm(g) / np.linalg.norm(r)) >= 0.99


def test_one_slope_stays_one_lut():
    _, _, res = _compiled(slopes=1)
    assert [p.op for p in res.lowered.placements if p.source.startswith("prelu")] == ["prelu"]


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_on_the_boards(target, tmp_path):
    _, calib, res = _compiled(target=target)
    board_matches_reference(res.data, calib[4][0].numpy(), target, tmp_path)
