"""torchvision.ops.MultiScaleRoIAlign (ptec.capture_torchvision.multiscale_forward).

Oracle: torchvision's own module in fp32 on the same inputs. Each box's
FPN level (floor(k0 + log2(sqrt(area) / s0) + 1e-6), clamped to the
levels the feature map sizes give) is decided in ptec by comparing the
fp32 area with constant thresholds found with torch's own arithmetic, so
boxes at a threshold land on torch's level: with feature maps and boxes
kept float32 the result is within 1e-5 of torch's (box sizes spanning all
levels, and sides within a few ulps of both thresholds; measured 5.4e-7).
Behind int8 convs: torchvision on the program's own maps within 1e-5,
torch float within the convs' own error. Boxes computed by a linear, the
module's cached scales. image_shapes torchvision itself cannot read:
refused in one line naming torch's failure (sizes from shapes or computed
in the program: test_multiscale_roi_shapes.py)."""
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import cli_refusal, run_feed, smooth_images
from ptec.compiler import compile_model

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")


class Pyramid(nn.Module):
    def __init__(self, names=("f0", "f1", "f2"), size=2, ratio=2):
        super().__init__()
        self.m = tv.MultiScaleRoIAlign(list(names), size, ratio, canonical_scale=32, canonical_level=4)

    def forward(self, a, b, c, boxes):
        return self.m(OrderedDict([("f0", a), ("f1", b), ("f2", c)]), [boxes], [(64, 64)])


def _boxes(g, k):
    """Box sides spanning the three levels (sqrt(area) < 16, 16..32, >= 32),
    and boxes whose sqrt(area) is within a few ulps of 16 and 32."""
    lo = torch.rand(k, 2, generator=g) * 20
    side = torch.rand(k, 2, generator=g) * 44 + 2
    near = []
    for t in (16.0, 32.0):
        for d in (-3e-5, -1e-6, 0.0, 1e-6, 3e-5, -8e-5, -7e-5):
            near.append([3.0, 2.0, 3.0 + t, 2.0 + t * (1.0 + d)])
    return torch.cat([torch.cat([lo, lo + side], 1), torch.tensor(near)], 0)


def _feeds(count, seed, k=8):
    g = torch.Generator().manual_seed(seed)
    return [[torch.randn(1, 3, 16, 16, generator=g), torch.randn(1, 3, 8, 8, generator=g),
             torch.randn(1, 3, 4, 4, generator=g), _boxes(g, k)] for _ in range(count)]


def _run(res, feed, tmp_path):
    return np.asarray(run_feed(res, feed, tmp_path)[0], np.float64)


def _levels(boxes):
    s = torch.sqrt((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]))
    return torch.clamp(torch.floor(4 + torch.log2(s / 32) + torch.tensor(1e-6)), 2, 4)


def test_inputs_in_fp32_match_torchvision(tmp_path):
    model = Pyramid().eval()
    calibration = _feeds(3, 0)
    res = compile_model(model, calibration[0], calibration)
    seen = set()
    for feed in _feeds(3, 1):
        got = _run(res, feed, tmp_path)
        with torch.no_grad():
            want = model(*feed).numpy()
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-5, np.abs(got - want).max()
        print(f"max |ptec - torchvision| {np.abs(got - want).max():.2e}")
        assert np.std(want) > 0.1
        seen |= set(_levels(feed[3]).tolist())
    assert seen == {2.0, 3.0, 4.0}


def test_near_thresholds_each_box_on_torchs_level(tmp_path):
    """One map per level of constant values 0, 1, 2 (a map picked wrongly
    shows as a different value); boxes at and around both thresholds."""
    model = Pyramid(size=1, ratio=1).eval()
    g = torch.Generator().manual_seed(3)
    maps = [torch.full((1, 3, 16, 16), 0.0), torch.full((1, 3, 8, 8), 1.0), torch.full((1, 3, 4, 4), 2.0)]
    feeds = [maps + [_boxes(g, 4)] for _ in range(2)]
    res = compile_model(model, feeds[0], feeds)
    for feed in feeds:
        got = _run(res, feed, tmp_path)
        with torch.no_grad():
            want = model(*feed).numpy()
        assert np.array_equal(got, want), (got[:, 0, 0, 0], want[:, 0, 0, 0])
        assert np.array_equal(want[:, 0, 0, 0], (_levels(feed[3]) - 2).numpy())
        assert len(set(want[:, 0, 0, 0].tolist())) == 3


class ConvPyramid(nn.Module):
    """Three int8 convs (strides 1, 2, 4) as the pyramid, two images with
    their own box lists."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c = nn.ModuleList([nn.Conv2d(3, 4, 3, stride=s, padding=1) for s in (1, 2, 4)])
        self.m = tv.MultiScaleRoIAlign(["p0", "p1", "p2"], (2, 3), 2, canonical_scale=32, canonical_level=4)

    def forward(self, x, b0, b1):
        maps = [c(x) for c in self.c]
        return (self.m(OrderedDict([("p0", maps[0]), ("p1", maps[1]), ("p2", maps[2])]), [b0, b1], [(64, 64)]),
                maps[0], maps[1], maps[2])


def _conv_feeds(count, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for (x,) in smooth_images(count, seed):
        x = torch.cat([x[:, :3, :16, :16]] * 2, 0).contiguous()
        x[1] = x[1].flip(2)
        out.append([x, _boxes(g, 5), _boxes(g, 3)])
    return out


def test_behind_int8_convs_within_the_convs_error(tmp_path):
    """On the int8 maps the program computes, torchvision's own module
    agrees within 1e-5 (each box's level and samples exact); against torch
    float, off by no more than the convs themselves (absolute)."""
    model = ConvPyramid().eval()
    calibration, tests = _conv_feeds(10, 0), _conv_feeds(3, 5)
    res = compile_model(model, calibration[0], calibration)
    worst = conv_worst = on_maps = 0.0
    for feed in tests:
        outs = [torch.tensor(np.asarray(o)) for o in
                run_feed(res, feed, tmp_path)]
        with torch.no_grad():
            want = model(*feed)
            again = model.m(OrderedDict([("p0", outs[1]), ("p1", outs[2]), ("p2", outs[3])]), feed[1:], [(64, 64)])
        on_maps = max(on_maps, float((outs[0] - again).abs().max()))
        worst = max(worst, float((outs[0] - want[0]).abs().max()))
        conv_worst = max(conv_worst, max(float((o - w).abs().max()) for o, w in zip(outs[1:], want[1:])))
        assert float(want[0].std()) > 0.05
    print(f"MultiScaleRoIAlign on the program's maps {on_maps:.2e}; vs torch float {worst:.4f}, "
          f"the convs alone {conv_worst:.4f}")
    assert on_maps <= 1e-5 and worst <= conv_worst


class BoxHead(nn.Module):
    """Boxes computed by a linear of an input, torchvision's default
    canonical scale and level, the module already called once in torch
    (its cached scales and level mapper are the ones used)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.m = tv.MultiScaleRoIAlign(["f0", "f1", "f2"], (3, 2), 3)
        self.l = nn.Linear(4, 4)

    def forward(self, a, b, c, boxes):
        bx = self.l(boxes).abs() * 40
        bx = torch.cat([bx[:, :2], bx[:, :2] + bx[:, 2:]], 1)
        return self.m(OrderedDict([("f0", a), ("f1", b), ("f2", c)]), [bx], [(256, 256)]), bx


def test_computed_boxes_and_cached_scales(tmp_path):
    model = BoxHead().eval()
    calibration = _feeds(4, 0)
    with torch.no_grad():
        model(*calibration[0])
    assert model.m.scales == [0.0625, 0.03125, 0.015625]
    res = compile_model(model, calibration[0], calibration)
    levels = set()
    for feed in _feeds(3, 1):
        outs = [torch.tensor(np.asarray(o)) for o in
                run_feed(res, feed, tmp_path)]
        with torch.no_grad():
            again = model.m(OrderedDict([("f0", feed[0]), ("f1", feed[1]), ("f2", feed[2])]), [outs[1]], [(256, 256)])
        assert float((outs[0] - again).abs().max()) <= 1e-5
        s = torch.sqrt((outs[1][:, 2] - outs[1][:, 0]) * (outs[1][:, 3] - outs[1][:, 1]))
        levels |= set(torch.clamp(torch.floor(4 + torch.log2(s / 224) + torch.tensor(1e-6)), 4, 6).tolist())
    assert len(levels) >= 2, levels


def test_sizes_torch_cannot_read_refused_as_torchs_limit(tmp_path):
    """Image sizes as an input run (test_multiscale_roi_shapes.py); a height
    of two elements fails in torchvision itself (max() of a tensor of two
    values): the one line names torch's failure, not ptec's."""
    line = cli_refusal(tmp_path, """import torch, torchvision.ops as ops
from collections import OrderedDict
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.m = ops.MultiScaleRoIAlign(["f0", "f1"], 2, 2)
    def forward(self, a, b, boxes, hw):
        return self.m(OrderedDict([("f0", a), ("f1", b)]), [boxes], [(hw, hw)])
def model():
    return M(), (torch.randn(1, 3, 16, 16), torch.randn(1, 3, 8, 8), torch.tensor([[1., 1, 20, 20], [2, 3, 6, 9]]),
                 torch.tensor([32, 32]))
""")
    assert "module m (MultiScaleRoIAlign)" in line and "in torch itself" in line and "ambiguous" in line, line
