"""torchvision.ops.nms and batched_nms (ptec.capture_nms: ptec::nms.out).

Oracle: torchvision's own CPU nms on the values the program reads. The
result is int64 indices of the kept boxes in decreasing score order, a
length that depends on the values (a bound-dynamic program output): the
indices must be torchvision's exactly. Boxes and scores given as program
inputs (float32): heavy overlaps, equal scores (torchvision's order is the
stable descending sort), duplicate, touching and empty boxes, thresholds 0 to
0.7, K from 1 to 256. Boxes computed by an int8 conv head: exactly
torchvision's nms of the boxes the program computed (returned beside), and
torch float's wherever no IoU crosses the threshold between the float
and the int8 boxes (measured: 9 and 14 of 16 feeds at t 0.3 and 0.6).
Scores from an int8 layer (equal codes): torchvision's nms on them.
Larger box counts: test_nms_kernel.py."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec.compiler import compile_model

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")
from nms_models import run_feed as _run, Nms, BatchedNms  # noqa: E402


def _boxes(g, k, spread=4.0):
    """k boxes crowded in a small square (heavy overlaps), some duplicated,
    some touching; scores on 5 levels (many ties)."""
    lo = torch.rand(k, 2, generator=g) * spread
    b = torch.cat([lo, lo + torch.rand(k, 2, generator=g) * 5 + 0.25], 1)
    if k > 3:
        b[1] = b[0]                                         # a duplicate: IoU 1
        b[2] = torch.cat([b[0, 2:3], b[0, 1:2], b[0, 2:3] + 1, b[0, 3:4]])   # touching box 0: IoU 0
    if k > 5:
        b[4, 2:] = b[4, :2]                                 # two boxes of no area: torch's IoU 0 / 0, NaN
        b[5] = b[4]
    s = torch.randint(0, 5, (k,), generator=g).float() / 5 + (torch.rand(k, generator=g) < 0.3).float() * 0.013
    return b, s


CASES = [(1, 0.5), (5, 0.5), (16, 0.0), (40, 0.3), (100, 0.7), (256, 0.5)]


@pytest.mark.parametrize("k,t", CASES, ids=[f"K{k}-t{t}" for k, t in CASES])
def test_nms_of_inputs_is_torchvisions(k, t, tmp_path):
    g = torch.Generator().manual_seed(k)
    model = Nms(t).eval()
    calibration = [list(_boxes(g, k)) for _ in range(2)]
    res = compile_model(model, calibration[0], calibration)
    lengths = []
    for _ in range(6):
        feed = list(_boxes(g, k))
        got = np.asarray(_run(res, feed, tmp_path)[0])
        want = tv.nms(*feed, t).numpy()
        assert got.dtype == np.int64 and np.array_equal(got, want), (got, want)
        lengths.append(len(want))
    if k >= 16:
        assert min(lengths) < k and len(set(lengths)) > 1, lengths      # boxes suppressed, lengths vary


def test_batched_nms_of_inputs_is_torchvisions(tmp_path):
    g = torch.Generator().manual_seed(7)
    model = BatchedNms(0.4).eval()

    def feed():
        b, s = _boxes(g, 30)
        return [b, s, torch.randint(0, 3, (30,), generator=g)]
    calibration = [feed() for _ in range(2)]
    res = compile_model(model, calibration[0], calibration)
    for _ in range(6):
        f = feed()
        got = np.asarray(_run(res, f, tmp_path)[0])
        want = tv.batched_nms(*f, 0.4).numpy()
        assert np.array_equal(got, want), (got, want)
        assert len(want) > len(tv.nms(f[0], f[1], 0.4))                 # classes kept apart


class Head(nn.Module):
    """A conv head predicting one box per position, then nms."""

    def __init__(self, t):
        super().__init__()
        torch.manual_seed(0)
        self.c = nn.Conv2d(3, 4, 3, padding=1)
        self.t = t

    def forward(self, x, scores):
        p = self.c(x).flatten(2)[0].t()                                  # [H*W, 4]
        boxes = torch.cat([p[:, :2] * 1.5, p[:, :2] * 1.5 + p[:, 2:].abs() * 2 + 1], 1)
        return boxes, tv.nms(boxes, scores, self.t)


def _iou(b):
    b = b.double()
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    w = (torch.minimum(b[:, None, 2], b[None, :, 2]) - torch.maximum(b[:, None, 0], b[None, :, 0])).clamp(min=0)
    h = (torch.minimum(b[:, None, 3], b[None, :, 3]) - torch.maximum(b[:, None, 1], b[None, :, 1])).clamp(min=0)
    inter = w * h
    return inter / (area[:, None] + area[None, :] - inter)


@pytest.mark.parametrize("t", [0.3, 0.6])
def test_nms_of_int8_conv_boxes(t, tmp_path):
    g = torch.Generator().manual_seed(3)
    model = Head(t).eval()

    def feed():
        return [torch.randn(1, 3, 3, 3, generator=g), torch.rand(9, generator=g)]
    calibration = [feed() for _ in range(4)]
    res = compile_model(model, calibration[0], calibration)
    compared, lengths = 0, []
    with torch.no_grad():
        for _ in range(16):
            f = feed()
            boxes, got = _run(res, f, tmp_path)
            boxes, got = torch.tensor(np.asarray(boxes, np.float32)), np.asarray(got)
            # exactly torchvision's nms of the boxes the program computed
            assert np.array_equal(got, tv.nms(boxes, f[1], t).numpy())
            fb, want = model(*f)
            # torch float's wherever no IoU moves across the threshold between the float boxes and the
            # program's int8 ones (every keep/suppress decision the same)
            if bool(((_iou(fb) > t) == (_iou(boxes) > t)).all()):
                assert np.array_equal(got, want.numpy()), (got, want)
                compared += 1
            lengths.append(len(got))
    print(f"t={t}: {compared} of 16 feeds compared with torch float, kept {lengths} of 9")
    assert compared >= 4 and min(lengths) < 9 and len(set(lengths)) > 1


class ScoredBoxes(nn.Module):
    """Scores computed by an int8 layer (equal codes: ties), nms of the input boxes."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.l = nn.Linear(4, 1)

    def forward(self, b):
        s = torch.sigmoid(self.l(b)).flatten()
        return s, tv.nms(b, s, 0.4)


def test_nms_of_int8_scores_is_torchvisions_on_them(tmp_path):
    g = torch.Generator().manual_seed(0)

    def feed():
        lo = torch.rand(20, 2, generator=g) * 4
        return [torch.cat([lo, lo + torch.rand(20, 2, generator=g) * 4 + 0.5], 1)]
    calibration = [feed() for _ in range(3)]
    res = compile_model(ScoredBoxes().eval(), calibration[0], calibration)
    ties = 0
    for _ in range(6):
        f = feed()
        s, got = _run(res, f, tmp_path)
        s = torch.tensor(np.asarray(s, np.float32))
        ties += len(s) - len(set(s.tolist()))
        assert np.array_equal(np.asarray(got), tv.nms(f[0], s, 0.4).numpy())
    assert ties > 0                   # equal int8 scores met: ordered as torchvision's stable sort
