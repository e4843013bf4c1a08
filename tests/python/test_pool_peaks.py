"""Peaks picked by a value's comparison with its own max pool (issue 15,
ptec.capture_pool_peaks): `F.max_pool2d(h, 3, 1, 1) == h` and its
spellings. The oracle is torch float (the same model called by PyTorch):
the program's peak mask, over 8 fresh smoothed heatmaps (4 x 24 x 24,
so neighbours are close and peaks vary), must be torch's; on h's int8
grid plateaus of equal codes gave 99 extra peaks beside torch's 1,352
(a conv's sigmoid: 63 extra, 2 missed of 708)."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import run_feed, worst_steps_compiled
from ptec.compiler import compile_model


def _heatmaps(n, seed, shape=(1, 4, 24, 24)):
    g = torch.Generator().manual_seed(seed)
    return [(F.avg_pool2d(torch.randn(shape, generator=g), 5, 1, 2) * 3,) for _ in range(n)]


class Peaks(nn.Module):
    def __init__(self, fn, conv=False):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(4, 2, 3, padding=1) if conv else None
        self.pool = nn.MaxPool2d(3, 1, 1)
        self.fn = fn

    def forward(self, x):
        h = torch.sigmoid(self.conv(x)) if self.conv is not None else x
        return self.fn(self, h)


FORMS = {
    "max_pool2d == h": (lambda m, h: (F.max_pool2d(h, 3, 1, 1) == h).float(), False),
    "torch.eq(MaxPool2d(h), h)": (lambda m, h: torch.eq(m.pool(h), h).float(), False),
    "h != max_pool2d (5, 1, 2)": (lambda m, h: (h != F.max_pool2d(h, 5, stride=1, padding=2)).float(), False),
    "h >= max_pool2d": (lambda m, h: (h >= F.max_pool2d(h, 3, 1, 1)).float(), False),
    "max_pool1d == h": (lambda m, h: (F.max_pool1d(h.flatten(2), 5, 1, 2) == h.flatten(2)).float(), False),
    "sigmoid(conv) peaks": (lambda m, h: (F.max_pool2d(h, 3, 1, 1) == h).float(), True),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_peaks_are_torchs(name, tmp_path):
    fn, conv = FORMS[name]
    model = Peaks(fn, conv).eval()
    cal, test = _heatmaps(16, 0), _heatmaps(8, 1)
    res = compile_model(model, list(cal[0]), cal)
    assert any(n.attrs.get("fp32") for n in res.graph.nodes if n.op == "max_pool2d")
    peaks = 0
    for feed in test:
        got = np.asarray(run_feed(res, feed, tmp_path)[0])
        with torch.no_grad():
            want = model(*feed).numpy()
        assert (got == want).all(), int((got != want).sum())
        peaks += int(want.sum())
    assert 0 < peaks < want.size * len(test)          # peaks vary: neither none nor everywhere


def test_centernet_keep_within_steps():
    """`h * (hmax == h).float()` (CenterNet's NMS): each extra plateau peak
    was a whole heatmap value (107 output steps); now h's rounding on the
    product's grid, measured 1.21."""
    model = Peaks(lambda m, h: h * (F.max_pool2d(h, 3, stride=1, padding=1) == h).float()).eval()
    cal = _heatmaps(16, 0)
    worst, _ = worst_steps_compiled(model, cal, cal[:8])
    assert worst <= 1.5, worst


def test_int8_io_pooled_input_left():
    """Under int8_io the input arrives as codes: the same ties in fp32, so
    the comparison stays int8 (no fp32 step)."""
    model = Peaks(FORMS["max_pool2d == h"][0]).eval()
    cal = _heatmaps(4, 0)
    res = compile_model(model, list(cal[0]), cal, int8_io=True)
    assert not any(n.attrs.get("fp32") for n in res.graph.nodes)


def test_past_the_budget_stays_int8_with_a_note():
    """A heatmap whose chain holds more weights than the program's fp32
    budget (capture_sign.MAX_WEIGHTS 4,096: a Conv2d(4, 128, 3)'s 4,608)
    compares on its int8 grid, and the compile log says so."""
    class Wide(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.conv = nn.Conv2d(4, 128, 3, padding=1)

        def forward(self, x):
            h = self.conv(x)
            return (F.max_pool2d(h, 3, 1, 1) == h).float()

    cal = _heatmaps(4, 0)
    res = compile_model(Wide().eval(), list(cal[0]), cal)
    assert not any(n.attrs.get("fp32") for n in res.graph.nodes)
    assert any("past the budget" in (n.attrs.get("note") or "") for n in res.graph.nodes)
