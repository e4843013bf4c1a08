"""Issue 15: torchvision's nms / batched_nms of a selection, the forms
docs/refused-operators.md used to list as refused (capture_nms,
`_selection_rewrite`).

- batched_nms(boxes[m], scores[m], idxs[m], t), element-wise steps of the
  selections allowed: torchvision's coordinate trick on the selection,
  B[m] + I[m] * (max(B[m]) + 1), over all K rows with the maximum taken
  over the rows m keeps.
- nms / batched_nms of a selection at a threshold computed from the input
  (a 0-d tensor, read at each run) or a negative number: a dropped box is
  ordered after every selected one, so an overlap of 0 above a negative
  threshold suppresses no selected box.

torchvision on each feed is the oracle: its int64 indices exactly, on
feeds that calibration never saw, counts 0 to K, suppression happening."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator

from test_refusals_round22b import _clustered     # boxes in three clusters, scores with ties
from test_refusals_round23 import _run


class SelectionNms(nn.Module):
    def __init__(self, form):
        super().__init__()
        self.form = form

    def forward(self, boxes, scores):
        import torchvision.ops as tv
        # a score filter and a position one: a dropped box may sort before a kept one
        m = (scores > 0.5) & (boxes[:, 0] < 8.6)
        b, s = boxes[m], scores[m]
        cls = (boxes[:, 0] > 4).long()                        # two classes, by position
        f = self.form
        if f == "batched":
            return tv.batched_nms(b, s, cls[m], 0.5)
        if f == "batched, changed":
            return tv.batched_nms(b * 2.0, s * 2, cls[m], 0.4)
        if f == "batched, computed t":
            return tv.batched_nms(b, s, cls[m], scores.mean())
        if f == "computed t":
            return tv.nms(b, s, scores.mean())
        if f == "computed t below 0":
            return tv.nms(b, s, scores.mean() - 2.0)
        return tv.nms(b + 0.5, s, -0.5)                       # a negative number


FORMS = ["batched", "batched, changed", "batched, computed t", "computed t", "computed t below 0", "negative"]


def _feeds():
    g = torch.Generator().manual_seed(3)
    feeds = [_clustered(g) for _ in range(10)]
    feeds[5][1] = feeds[5][1] * 0.4                           # none kept by the filter
    feeds[6][1] = feeds[6][1] * 0 + 0.875                     # all kept, all tied
    # a dropped box far out: batched_nms's maximum over all boxes would move the kept boxes' offsets to 1e8,
    # where float32's step is 8, and round two overlapping boxes of class 1 (IoU 0.53) to boxes of no area
    feeds[7][0][:5] = torch.tensor([[5.0, 5.0, 8.0, 8.0], [5.5, 5.5, 8.5, 8.5], [1.0, 1.0, 3.0, 3.0],
                                    [1.2, 1.1, 3.2, 3.0], [1e8, 1e8, 1e8 + 1, 1e8 + 1]])
    feeds[7][1][:5] = torch.tensor([0.875, 0.75, 0.625, 0.625, 0.0])
    feeds[7][1][5:] = feeds[7][1][5:] * 0.4
    return feeds


@pytest.mark.parametrize("form", FORMS)
def test_nms_of_a_selection_gives_torchvisions_indices(form):
    tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")
    feeds = _feeds()
    model = SelectionNms(form).eval()
    res = compile_model(model, feeds[0], feeds[:4])
    counts = []
    for feed in feeds:
        want = model(*feed)
        got = np.asarray(_run(res, feed)[0])
        assert tv is not None and got.dtype == np.int64 and np.array_equal(got, want.numpy()), (form, got, want)
        counts.append((int(((feed[1] > 0.5) & (feed[0][:, 0] < 8.6)).sum()), len(want)))
    assert (0, 0) in counts and any(f > w > 0 for f, w in counts), counts     # suppression happens


class Refused(nn.Module):
    def __init__(self, form):
        super().__init__()
        self.form = form

    def forward(self, boxes, scores):
        import torchvision.ops as tv
        m = scores > 0.5
        b, s = boxes[m], scores[m]
        if self.form == "threshold of the selection":
            return tv.nms(b, s, s.mean())
        if self.form == "sorted selection":
            return tv.nms(b, s.sort()[0], 0.5)
        return tv.batched_nms(b, s, (boxes[:, 0] > 4).long()[m], 0.5)


@pytest.mark.parametrize("form, k, words", [
    ("threshold of the selection", 12, "a threshold computed from no selection"),
    ("sorted selection", 12, "other steps after the selection"),
    ("batched, 1200 boxes", 1200, "chosen by the count at run"),
])
def test_what_stays_refused_is_one_line_naming_the_call(form, k, words):
    pytest.importorskip("torchvision.ops", reason="torchvision is not installed")
    feed = _clustered(torch.Generator().manual_seed(3), k)
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Refused(form).eval(), feed, [feed])
    msg = str(e.value)
    assert "\n" not in msg and "(torchvision.ops." in msg and words in msg, msg
