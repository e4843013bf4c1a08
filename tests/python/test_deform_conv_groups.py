"""torchvision.ops.deform_conv2d / DeformConv2d with weight groups and
offset groups (ptec.capture_torchvision._DeformConv).

Oracle: torchvision's own deform_conv2d in float64 on the values the program
reads. Offset groups: channel group g (Cin / G consecutive channels) reads
at its own offset pairs and mask taps; weight groups: the columns' grouped
1x1 convolution. Inputs float32, every step fp32: within 2e-6 of the
largest output (measured 3.1e-7 to 4.7e-7), for groups 2 and 3, offset
groups 2 to 4, masked or not, strides, padding and dilation. The DCN
pattern (offsets from an int8 conv of x, 2 offset groups, 2 weight groups)
within 3 output steps (measured 2.55). A weight computed in the program:
test_last_refusals.py."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")


def _run(res, feed):
    return np.asarray(host_runtime.run(parse_program(res.data), res.data, [t.numpy() for t in feed])[0], np.float64)


class Grouped(nn.Module):
    def __init__(self, cin, cout, groups, masked, stride, padding, dilation):
        super().__init__()
        torch.manual_seed(0)
        self.dc = tv.DeformConv2d(cin, cout, 3, stride=stride, padding=padding, dilation=dilation, groups=groups)
        self.masked = masked

    def forward(self, x, offset, mask):
        return self.dc(x, offset, mask if self.masked else None)


# (Cin, Cout, weight groups, offset groups, masked, stride, padding, dilation)
CASES = [(4, 6, 2, 1, False, 1, 1, 1), (4, 4, 1, 2, True, 1, 1, 1), (6, 6, 3, 3, True, 2, 0, 1),
         (4, 2, 2, 4, False, 1, 2, 2)]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_groups_and_offset_groups_in_fp32(case):
    cin, cout, groups, og, masked, stride, padding, dilation = case
    model = Grouped(cin, cout, groups, masked, stride, padding, dilation).eval()
    ho = (7 + 2 * padding - 2 * dilation - 1) // stride + 1
    wo = (6 + 2 * padding - 2 * dilation - 1) // stride + 1
    g = torch.Generator().manual_seed(0)
    # offsets of a few pixels: reads beyond the map's edges (torchvision's zeros) and between pixels
    feeds = [[torch.randn(2, cin, 7, 6, generator=g), torch.randn(2, 18 * og, ho, wo, generator=g) * 2.5,
              torch.rand(2, 9 * og, ho, wo, generator=g)] for _ in range(4)]
    res = compile_model(model, feeds[0], feeds)
    assert any("grid_sampler_2d" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    w, b = model.dc.weight.double(), model.dc.bias.double()
    worst = 0.0
    for feed in feeds[1:]:
        got = _run(res, feed)
        x, off, mask = (t.double() for t in feed)
        want = tv.deform_conv2d(x, off, w, b, stride, padding, dilation, mask if masked else None).detach().numpy()
        assert got.shape == want.shape and np.std(want) > 0.1
        worst = max(worst, float(np.abs(got - want).max() / np.abs(want).max()))
    print(f"{case}: {worst:.2e} of the largest output")
    assert worst <= 2e-6


def test_the_offset_groups_are_torchvisions():
    """Each offset group moves its own channels only: a shift of group 1's
    offsets leaves the output of a weight reading group 0 alone (torch and ptec's module alike)."""
    from ptec.capture_torchvision import _DeformConv
    g = torch.Generator().manual_seed(3)
    x, off = torch.randn(1, 4, 6, 6, generator=g), torch.randn(1, 36, 6, 6, generator=g)
    weight = torch.zeros(1, 4, 3, 3)
    weight[0, :2] = torch.randn(2, 3, 3, generator=g)
    module = _DeformConv(1, 4, 6, 6, 6, 6, 3, 3, (1, 1), (1, 1), (1, 1), weight, None, False, 1, 2)
    moved = off.clone()
    moved[:, 18:] += 1.5
    for o in (off, moved):
        assert torch.allclose(module(x, o), tv.deform_conv2d(x, o, weight, None, 1, 1), atol=1e-5)
    assert torch.allclose(module(x, off), module(x, moved))
    moved[:, :18] += 1.5
    assert not torch.allclose(module(x, off), module(x, moved))


def test_dcn_with_groups_behind_an_int8_conv():
    """The DCN pattern with 2 offset groups and 2 weight groups: offsets from an int8 conv of x."""
    class DCN(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.off = nn.Conv2d(4, 36, 3, padding=1)
            self.dc = tv.DeformConv2d(4, 6, 3, padding=1, groups=2)

        def forward(self, x):
            return self.dc(x, self.off(x))

    model = DCN().eval()
    g = torch.Generator().manual_seed(0)
    feeds = [[torch.randn(1, 4, 8, 8, generator=g)] for _ in range(12)]
    res = compile_model(model, feeds[0], feeds)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    with torch.no_grad():
        for feed in feeds[:4]:
            want = model(feed[0]).numpy()
            assert float(np.ptp(want)) >= 20 * step
            worst = max(worst, float(np.abs(_run(res, feed) - want).max() / step))
    print(f"DCN, groups 2, offset groups 2: {worst:.2f} output steps")
    assert worst <= 3.0

