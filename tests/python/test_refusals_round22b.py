"""Four calls ptec refused by its own choice, now run (issue 15):

* torch.nan_to_num(a / b) with b 0 in calibration samples: the division
  whose NaN / inf a test reads runs in fp32 (nonfinite_in_fp32), the
  replacing wheres too (aten::where.self_out on float32), so the output
  holds torch's values, float32's extremes included: exact against torch.
  torch.nanmean / nansum of an input holding NaN: calibration takes
  samples with NaN / inf (their ranges skip them) and refuses in one line
  only an input whose NaN / inf reach the outputs.
* F.multilabel_margin_loss / nn.MultiLabelMarginLoss of a computed int64
  target (a program input), terminated by -1, repeated classes counted as
  ATen's loop counts them; reductions none / mean / sum.
* torchvision.ops.nms / batched_nms of zero boxes: torch's empty int64;
  nms(B[m], S[m], t) after a score filter m (any count at run, 0 too):
  nms over all the boxes, those m drops made empty, the kept ones of m
  numbered as in B[m]: torch's indices exactly.
* torch.clamp(int tensor, min=float tensor, max=float tensor): clamp of
  the int value's float32 copy, as torch promotes.

torch float is the oracle: bounds in output steps on varied inputs,
exact where the outputs are indices or extremes."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import cli_refusal
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program


def _run(res, feed):
    return host_runtime.run(parse_program(res.data), res.data, [t.numpy() for t in feed])


def _step(res):
    return res.graph.node(res.graph.outputs[0]).qparams[0]


# ---------------------------------------------------------------- nan_to_num(a / b), nanmean

class DivNanToNum(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, a, b):
        return torch.nan_to_num(a / b, **self.kw)


def _ratios(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        a = torch.randn(3, 8, generator=g)
        a[0, :2] = 0.0                                        # 0 / 0: NaN
        b = torch.randint(-2, 3, (3, 8), generator=g).float() # 0 in every sample: +-inf
        b[0, :3] = 0.0
        out.append([a, b])
    return out


@pytest.mark.parametrize("kw", [{}, dict(nan=0.5, posinf=7.0, neginf=-7.0)], ids=["defaults", "moderate"])
def test_nan_to_num_of_a_division_by_zero(kw):
    feeds = _ratios(6)
    model = DivNanToNum(**kw).eval()
    res = compile_model(model, feeds[0], feeds[:4])
    assert any("div" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    for feed in feeds:                                        # 2 samples calibration never saw
        want = model(*feed).numpy()
        got = np.asarray(_run(res, feed)[0])
        assert got.dtype == np.float32 and np.isfinite(got).all()
        assert np.array_equal(got, want), (got, want)
        if not kw:
            assert (got == np.finfo(np.float32).max).any() and (got == np.finfo(np.float32).min).any()


class NanMean(nn.Module):
    def forward(self, x):
        return torch.nanmean(x, dim=-1), torch.nansum(x, dim=0) * 2.0


def _with_nans(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        x = torch.randn(4, 10, generator=g)
        x[torch.rand(4, 10, generator=g) < 0.3] = float("nan")
        x[:, 0] = torch.randn(4, generator=g)                 # no row all NaN
        out.append([x])
    return out


def test_nanmean_of_an_input_holding_nan():
    feeds = _with_nans(8)
    model = NanMean().eval()
    res = compile_model(model, feeds[0], feeds)            # (int8 ranges: an unseen sample may saturate)
    steps = [res.graph.node(o).qparams[0] for o in res.graph.outputs]
    worst = [0.0, 0.0]
    for feed in feeds:
        wants = model(*feed)
        gots = _run(res, feed)
        for k in range(2):
            want, got = wants[k].numpy().astype(np.float64), np.asarray(gots[k], np.float64)
            assert np.isfinite(got).all() and np.std(want) > 0.05
            worst[k] = max(worst[k], float(np.abs(got - want).max() / steps[k]))
    print(f"nanmean {worst[0]:.2f}, nansum {worst[1]:.2f} output steps")
    assert max(worst) <= 2.5


def test_nan_reaching_the_outputs_is_refused_naming_the_sample():
    class Twice(nn.Module):
        def forward(self, x):
            return x * 2.0

    feeds = _with_nans(2)
    with pytest.raises(ValueError) as e:
        compile_model(Twice().eval(), feeds[0], feeds)
    msg = str(e.value)
    assert "calibration sample 0" in msg and "NaN or infinity" in msg and "nan_to_num" in msg and "\n" not in msg


# ---------------------------------------------------------------- multilabel_margin_loss of a computed target

class MultiLabel(nn.Module):
    def __init__(self, reduction="mean", module=False):
        super().__init__()
        self.reduction = reduction
        self.loss = nn.MultiLabelMarginLoss(reduction=reduction) if module else None

    def forward(self, x, t):
        if self.loss is not None:
            return self.loss(x * 2.0, t)
        return F.multilabel_margin_loss(x * 2.0, t, reduction=self.reduction)


def _targets(n, rows, classes, g):
    """int64 class lists ended by -1 (or full), repeats and values past the -1 included."""
    t = torch.randint(0, classes, (rows, classes), generator=g)
    for r in range(rows):
        stop = int(torch.randint(0, classes + 1, (1,), generator=g))
        if stop < classes:
            t[r, stop] = -1
    return t


@pytest.mark.parametrize("reduction,module,shape", [("none", False, (4, 6)), ("mean", False, (4, 6)),
                                                    ("sum", False, (3, 10)), ("mean", True, (4, 6)),
                                                    ("none", False, (7,))])
def test_multilabel_margin_loss_of_a_computed_target(reduction, module, shape):
    g = torch.Generator().manual_seed(1)
    rows, classes = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0])
    feeds = []
    for _ in range(10):
        t = _targets(1, rows, classes, g)
        feeds.append([torch.rand(shape, generator=g) * 2 - 1, t.reshape(shape)])
    model = MultiLabel(reduction, module).eval()
    res = compile_model(model, feeds[0], feeds)
    step, worst, spread = _step(res), 0.0, []
    for feed in feeds:
        with torch.no_grad():
            want = model(*feed).numpy().astype(np.float64)
        got = np.asarray(_run(res, feed)[0], np.float64).reshape(want.shape)
        spread.append(want.ravel())
        worst = max(worst, float(np.abs(got - want).max() / step))
    assert np.std(np.concatenate(spread)) > 0.05
    print(f"{reduction} {shape}: {worst:.2f} output steps")
    assert worst <= (2.5 if reduction == "none" else 1.5)


# ---------------------------------------------------------------- nms of zero boxes

class NoBoxes(nn.Module):
    def __init__(self, batched):
        super().__init__()
        self.batched = batched

    def forward(self, boxes, scores, classes):
        import torchvision.ops as tv
        if self.batched:
            return tv.batched_nms(boxes[:0], scores[:0], classes[:0], 0.5), boxes.sum(1)
        return tv.nms(boxes[:0], scores[:0], 0.5), boxes.sum(1)


@pytest.mark.parametrize("batched", [False, True], ids=["nms", "batched_nms"])
def test_nms_of_zero_boxes(batched):
    tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")
    g = torch.Generator().manual_seed(0)
    feeds = [[torch.rand(5, 4, generator=g) * 4, torch.rand(5, generator=g), torch.randint(0, 3, (5,),
                                                                                               generator=g)]
             for _ in range(3)]
    model = NoBoxes(batched).eval()
    res = compile_model(model, feeds[0], feeds)
    for feed in feeds:
        got = _run(res, feed)
        want = model(*feed)[0]
        assert want.dtype == torch.int64 and want.numel() == 0 and tv is not None
        assert np.asarray(got[0]).dtype == np.int64 and np.asarray(got[0]).shape == (0,)


class ScoreFilter(nn.Module):
    def forward(self, boxes, scores):
        import torchvision.ops as tv
        keep = scores > 0.5
        return tv.nms(boxes[keep], scores[keep], 0.4)


def _clustered(g, k=12):
    """Boxes in three clusters (overlaps above and below the threshold), scores with ties."""
    centre = torch.tensor([[2.0, 2.0], [2.5, 2.2], [8.0, 8.0]])[torch.randint(0, 3, (k,), generator=g)]
    xy = centre + torch.rand(k, 2, generator=g) * 1.5
    wh = torch.rand(k, 2, generator=g) * 3 + 1
    scores = torch.round(torch.rand(k, generator=g) * 8) / 8
    return [torch.cat([xy, xy + wh], 1), scores]


def test_nms_after_a_score_filter_any_count():
    tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")
    g = torch.Generator().manual_seed(3)
    feeds = [_clustered(g) for _ in range(8)]
    feeds[0][1] = feeds[0][1] * 0.4                           # none kept by the filter (the example too)
    feeds[5][1] = feeds[5][1] * 0.4
    feeds[6][1] = feeds[6][1] * 0 + 0.9                       # all kept, all tied
    model = ScoreFilter().eval()
    res = compile_model(model, feeds[0], feeds[:4])
    counts = []
    for feed in feeds:
        want = model(*feed)
        got = np.asarray(_run(res, feed)[0])
        assert tv is not None and got.dtype == np.int64 and np.array_equal(got, want.numpy()), (got, want)
        counts.append((int((feed[1] > 0.5).sum()), len(want)))
    assert (0, 0) in counts and any(f > w > 0 for f, w in counts), counts     # suppression happens


def test_nms_of_a_computed_selection_is_refused_in_one_line(tmp_path):
    pytest.importorskip("torchvision.ops", reason="torchvision is not installed")
    line = cli_refusal(tmp_path, """
import torch, torch.nn as nn, torchvision.ops as tv
class M(nn.Module):
    def forward(self, boxes, scores):
        keep = scores > 0.5
        return tv.batched_nms(boxes[keep] * 2.0, scores[keep], (scores[keep] * 3).long(), 0.5)
def model():
    return M(), (torch.rand(6, 4) + torch.tensor([0.0, 0.0, 1.0, 1.0]), torch.rand(6))
""")
    # (nms(boxes[keep] * 2.0, scores[keep], 0.5) runs since round 23: test_refusals_round23.py)
    assert "batched_nms (torchvision.ops.batched_nms)" in line and "depends on the values" in line, line


# ---------------------------------------------------------------- clamp of an int tensor by float tensors

class IntClamp(nn.Module):
    def __init__(self, form):
        super().__init__()
        self.form = form

    def forward(self, i, lo, hi):
        if self.form == "both":
            return torch.clamp(i, min=lo, max=hi)
        if self.form == "min":
            return torch.clamp(i, min=lo)
        return i.clamp(max=hi)


@pytest.mark.parametrize("form", ["both", "min", "max"])
def test_clamp_of_an_int_tensor_by_float_tensors(form):
    g = torch.Generator().manual_seed(2)
    # bounds uniform in [-4, 1) and [-1, 4): lo > hi in some places (torch: hi there)
    feeds = [[torch.randint(-6, 7, (3, 8), generator=g), torch.rand(3, 8, generator=g) * 5 - 4,
              torch.rand(3, 8, generator=g) * 5 - 1] for _ in range(8)]
    model = IntClamp(form).eval()
    res = compile_model(model, feeds[0], feeds)
    step, worst = _step(res), 0.0
    for feed in feeds:
        want = model(*feed)
        assert want.dtype == torch.float32
        got = np.asarray(_run(res, feed)[0], np.float64)
        worst = max(worst, float(np.abs(got - want.numpy()).max() / step))
    print(f"clamp {form}: {worst:.2f} output steps")
    assert worst <= 1.5                                          # i's and a bound's grids, one step each
