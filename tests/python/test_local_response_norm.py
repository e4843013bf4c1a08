"""nn.LocalResponseNorm (issue 15: it was on the refused list). Capture
decomposes it into ops with int8 lowerings: the square of x (an int8 mul),
the mean over a window of `size` channels as a 1 x 1 convolution with a
band of 1 / size (torch's zero padding: size // 2 channels in front,
(size - 1) // 2 behind, divided by size), the scale (k + alpha * mean)^-beta
as a 256-entry LUT (lrn_scale, cortex_m::quantized_activation) and x times
that scale (an int8 mul). A rank-3 input runs over a unit height."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference, host_steps_from_float
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.ir import evaluate


class One(nn.Module):
    def __init__(self, lrn):
        super().__init__()
        self.lrn = lrn

    def forward(self, x):
        return self.lrn(x)


@pytest.mark.parametrize("size,alpha,beta,k", [(2, 1e-4, 0.75, 1.0), (3, 0.5, 0.75, 1.0), (5, 0.2, 0.5, 2.0),
                                               (4, 1.0, 1.5, 0.5), (1, 0.3, 0.75, 1.0), (7, 0.1, 0.25, 1.0)])
@pytest.mark.parametrize("shape", [(2, 6, 3, 5), (1, 5, 7)])
def test_decomposition_is_torchs_in_float(size, alpha, beta, k, shape):
    m = One(nn.LocalResponseNorm(size, alpha, beta, k)).eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(size)) * 2.0
    g = capture(m, [x])
    ops = [n.op for n in g.nodes]
    assert "lrn_scale" in ops and "conv2d" in ops and "unsupported" not in ops, ops
    got = evaluate(g, [x])
    got = got[0] if isinstance(got, (list, tuple)) else got
    assert torch.allclose(got, m(x), atol=1e-5), (got - m(x)).abs().max()


class Functional(nn.Module):
    def forward(self, x):
        return F.local_response_norm(torch.relu(x), 4, alpha=0.3, k=1.5) + F.local_response_norm(x, 3)


@pytest.mark.parametrize("shape", [(1, 6, 4, 4), (2, 5, 9)])
def test_functional_form_is_torchs_in_float(shape):
    m = Functional().eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)) * 3.0
    g = capture(m, [x])
    assert [n.op for n in g.nodes].count("lrn_scale") == 2
    got = evaluate(g, [x])
    got = got[0] if isinstance(got, (list, tuple)) else got
    assert torch.allclose(got, m(x), atol=1e-5), (got - m(x)).abs().max()


class AlexLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.lrn1 = nn.LocalResponseNorm(3, alpha=0.1, beta=0.75, k=1.0)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.lrn2 = nn.LocalResponseNorm(2, alpha=0.05, beta=0.75, k=2.0)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):                         # x [1, 3, 8, 8]
        y = self.pool(self.lrn1(torch.relu(self.conv1(x))))
        y = self.lrn2(torch.relu(self.conv2(y)))
        return self.fc(torch.flatten(y, 1))


def inputs(n, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(8.0)
    return [((torch.sin(t[None, :, None] * (0.3 + 0.1 * i) + t[None, None, :] * 0.2)
              + 0.5 * torch.randn(3, 8, 8, generator=g))[None],) for i in range(n)]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return AlexLike().eval()


@pytest.fixture(scope="module")
def compiled(model):
    return compile_model(model, [inputs(1, 0)[0][0]], inputs(16, 0))


def test_every_layer_runs_in_int8(compiled):
    ops = [n.op for n in compiled.graph.nodes]
    assert ops.count("lrn_scale") == 2, ops
    assert not compiled.lowered.fallbacks, compiled.lowered.fallbacks
    assert "cortex_m::quantized_activation.out" in compiled.lowered.operators, compiled.lowered.operators
    assert "cortex_m::quantized_mul.out" in compiled.lowered.operators, compiled.lowered.operators
    assert not [o for o in compiled.lowered.operators if o.startswith("aten::")], compiled.lowered.operators


def test_host_equals_reference_and_float(model, compiled, tmp_path):
    # calibration inputs (other draws leave the calibrated ranges and clip)
    worst = host_steps_from_float(model, compiled, inputs(16, 0)[:8], tmp_path)
    assert worst <= 3.0, worst     # measured 1.82 (1.86 on the other 8 calibration inputs)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(model, tmp_path, target):
    data = compile_model(model, [inputs(1, 0)[0][0]], inputs(16, 0), target=target).data
    board_matches_reference(data, inputs(1, 5)[0][0].numpy(), target, tmp_path)


class OneD(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 6, 3, padding=1)
        self.lrn = nn.LocalResponseNorm(4, alpha=0.2, beta=0.75, k=1.0)

    def forward(self, x):                         # x [1, 3, 16]
        return self.lrn(self.conv(x))


def test_rank_3_runs_in_int8_on_host(tmp_path):
    torch.manual_seed(1)
    m = OneD().eval()
    g = torch.Generator().manual_seed(3)
    calib = [(torch.sin(torch.arange(16.0) * (0.2 + 0.05 * i)).expand(1, 3, 16)
              + 0.3 * torch.randn(1, 3, 16, generator=g),) for i in range(16)]
    res = compile_model(m, [calib[0][0]], calib)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert not [o for o in res.lowered.operators if o.startswith("aten::")], res.lowered.operators
    worst = host_steps_from_float(m, res, calib[:8], tmp_path)
    assert worst <= 3.0, worst     # measured 1.69
