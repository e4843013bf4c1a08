"""torchvision nms of boxes and scores picked by integer indices computed
in the program (ptec.capture_nms_rows): `nms(boxes[idx], scores[idx], t)`
with idx = scores.topk(k).indices, scores.argsort(descending=True)[:k],
index_select, a YOLO-style prediction tensor sliced then picked, and
batched_nms of picked rows.

The picks used to be row lookups on the input's int8 copy: nms met boxes
rounded to the input's grid (an IoU near t moved across it) and scores
rounded together (near scores became ties, ordered by position). Now the
lookups copy the float32 rows, so the kept indices are torchvision's.

Oracle: torch / torchvision's own CPU run of the same model on the same
feed (the indices must be equal, dtype int64). The threshold is a program
input, so each feed is checked at thresholds on its own IoUs (of the picked
boxes, by torchvision.ops.box_iou: exactly, and one float32 step below and
above) as well as at 0.3 and 0.5; the scores sit on 6 levels plus distinct
multiples of 1e-4 (closer than an int8 step)."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec.compiler import compile_model
from ptec.pte import parse_program

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")
from nms_models import run_feed as _run  # noqa: E402

K, PICK = 48, 16


def _feed(g, t=0.5):
    """K crowded boxes (heavy overlaps) and scores on 6 levels, each one
    moved by a distinct multiple of 1e-4 (no two equal: torch.topk orders
    equal values as it likes; near ones in an order the int8 codes do not
    keep), and a threshold."""
    lo = torch.rand(K, 2, generator=g) * 5
    b = torch.cat([lo, lo + torch.rand(K, 2, generator=g) * 4 + 0.5], 1)
    s = torch.randint(0, 6, (K,), generator=g).float() / 6 + 1e-4 * torch.randperm(K, generator=g).float()
    return [b, s, torch.tensor(float(t))]


class TopKIndices(nn.Module):
    def forward(self, b, s, t):
        idx = s.topk(PICK).indices
        return tv.nms(b[idx], s[idx], t)


class ArgsortSlice(nn.Module):
    def forward(self, b, s, t):
        idx = s.argsort(descending=True)[:PICK]
        return tv.nms(b[idx], s[idx], t)


class IndexSelect(nn.Module):
    def forward(self, b, s, t):
        idx = torch.topk(s, PICK)[1]
        return tv.nms(b.index_select(0, idx), torch.index_select(s, 0, idx), t)


class Prediction(nn.Module):
    """A [1, K, 5] prediction (boxes and score joined by torch.cat), sliced, then picked."""

    def forward(self, b, s, t):
        p = torch.cat([b, s[:, None]], 1)[None]
        score = p[0, :, 4]
        idx = score.topk(PICK).indices
        return tv.nms(p[0, :, :4][idx], score[idx], t)


class BatchedPicked(nn.Module):
    def forward(self, b, s, t):
        idx = s.topk(PICK).indices
        return tv.batched_nms(b[idx], s[idx], idx % 2, t)


def _thresholds(b, s):
    """float32 thresholds on the IoUs of the boxes nms meets: the top
    picked box's with a few others, exactly and one float32 step either
    side, then 0.3 and 0.5."""
    idx = s.topk(PICK).indices
    picked = b[idx]
    iou = tv.box_iou(picked[:1], picked)[0]
    vals = iou[(iou > 0.05) & (iou < 0.95)][:3]
    out = []
    for v in vals:
        out += [v, torch.nextafter(v, torch.tensor(0.0)), torch.nextafter(v, torch.tensor(1.0))]
    return out + [torch.tensor(0.3), torch.tensor(0.5)]


# measured before -> after (12 feeds, 11 thresholds each, seed 0): feeds whose indices differed from torchvision's
# at one threshold or more: TopKIndices, ArgsortSlice, IndexSelect and Prediction 12 -> 0, BatchedPicked 9 -> 0
@pytest.mark.parametrize("cls", [TopKIndices, ArgsortSlice, IndexSelect, Prediction, BatchedPicked])
def test_nms_of_picked_rows_is_torchvisions(cls, tmp_path):
    g = torch.Generator().manual_seed(0)
    model = cls().eval()
    cal = [_feed(g) for _ in range(3)]
    res = compile_model(model, cal[0], cal)
    lengths, checked = set(), 0
    for _ in range(12):
        b, s, _t = _feed(g)
        for t in _thresholds(b, s):
            f = [b, s, t.to(torch.float32).reshape(())]
            got = np.asarray(_run(res, f, tmp_path)[0])
            with torch.no_grad():
                want = model(*f).numpy()
            assert got.dtype == np.int64 and np.array_equal(got, want), (float(t), got, want)
            lengths.add(len(want))
            checked += 1
    assert checked >= 12 * 9 and len(lengths) > 3, (checked, lengths)      # thresholds on the feeds' IoUs
    lookups = [n for n in res.graph.nodes if n.op == "embedding"]
    assert lookups and all(n.attrs.get("fp32") for n in lookups)           # the float rows
    ops = {f"{o.name}.{o.overload}" for o in parse_program(res.data).execution_plan[0].operators}
    assert "aten::embedding.out" in ops


class ConstantThreshold(nn.Module):
    """A number threshold (ptec::nms.out's constant)."""

    def forward(self, b, s):
        idx = s.topk(PICK).indices
        return tv.nms(b[idx], s[idx], 0.3)


# measured before -> after (24 feeds, seed 2): 4 -> 0 feeds off torchvision's indices
def test_nms_of_picked_rows_at_a_number_threshold(tmp_path):
    g = torch.Generator().manual_seed(2)
    model = ConstantThreshold().eval()
    cal = [_feed(g)[:2] for _ in range(3)]
    res = compile_model(model, cal[0], cal)
    for _ in range(24):
        f = _feed(g)[:2]
        got = np.asarray(_run(res, f, tmp_path)[0])
        assert np.array_equal(got, model(*f).numpy()), (got, model(*f))


class ConvTable(nn.Module):
    """Boxes computed by an int8 layer, then picked: the picks copy its int8 rows (nothing more to read)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(4, 4)

    def forward(self, b, s, t):
        boxes = self.fc(b)
        idx = s.topk(PICK).indices
        return tv.nms(boxes[idx], s[idx], t)


def test_rows_of_an_int8_layer_stay_int8():
    g = torch.Generator().manual_seed(1)
    cal = [_feed(g) for _ in range(2)]
    res = compile_model(ConvTable().eval(), cal[0], cal)
    boxes = next(n for n in res.graph.nodes if n.op == "embedding" and res.graph.node(n.inputs[1]).op == "reshape"
                 and res.graph.node(res.graph.node(n.inputs[1]).inputs[0]).op == "linear")
    assert not boxes.attrs.get("fp32")


# -- element-wise readers of the picked rows ------------------------------------------

class PickedSizes(nn.Module):
    """The picked boxes' widths and heights beside nms: slices of the float rows, subtracted."""

    def forward(self, b, s, t):
        idx = s.topk(PICK).indices
        p = b[idx]
        return p[:, 2:] - p[:, :2], tv.nms(p, s[idx], t)


class PickedAreas(nn.Module):
    def forward(self, b, s, t):
        idx = s.topk(PICK).indices
        p = b[idx]
        return (p[:, 2] - p[:, 0]) * (p[:, 3] - p[:, 1]), tv.nms(p, s[idx], t)


class PickedScaled(nn.Module):
    """Scaled and shifted rows, picked by index_select (a mul by a number alone was fp32 already)."""

    def forward(self, b, s, t):
        idx = torch.topk(s, PICK)[1]
        p = b.index_select(0, idx)
        return p * 0.5 + 1.0, tv.nms(p, s.index_select(0, idx), t)


# measured before -> after (seeds 0..2, 8 feeds each), worst |ptec - torch| in the output's steps: PickedSizes
# 2.10 to 2.31 -> 0.00, PickedAreas 1.93 to 15.77 -> 0.00 (the slices rounded to the input's int8 grid, then
# each step to its own), PickedScaled 0.00 -> 0.00
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cls", [PickedSizes, PickedAreas, PickedScaled])
def test_element_wise_readers_of_picked_rows_are_torchs(cls, seed, tmp_path):
    g = torch.Generator().manual_seed(seed)
    model = cls().eval()
    cal = [_feed(g) for _ in range(8)]
    res = compile_model(model, cal[0], cal)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for _ in range(8):
        f = _feed(g)
        got = _run(res, f, tmp_path)
        with torch.no_grad():
            want = model(*f)
        assert np.array_equal(np.asarray(got[1]), want[1].numpy())
        err = float(np.abs(np.asarray(got[0], np.float64) - want[0].double().numpy()).max())
        assert err <= 1e-5 * float(want[0].abs().max()) and err / step <= 0.01, err / step
