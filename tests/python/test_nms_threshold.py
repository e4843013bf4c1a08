"""torchvision.ops.nms / batched_nms with a threshold that is not a number
in the source: a tensor of one element computed in forward, a program
input, x.item(), a buffer or tensor attribute (folded: a constant).

torchvision takes such a threshold as float(t): a float32 tensor's value
read as a double, compared as iou (float32) > t in double. ptec runs a
computed or input threshold on ptec::nms.Tensor_out /
ptec::batched_nms.Tensor_out, reading the program's float32 value at each
run; a buffer or attribute is folded into ptec::nms.out's constant.

Oracle: torchvision's own CPU nms / batched_nms on the program's inputs and
the threshold the program used (an input as fed; a threshold computed by
an int8 layer read back from the program's second output): the kept
indices must be torchvision's exactly. Thresholds sit on the feed's own
IoUs (equal, one float32 step above and below: near-threshold decisions),
NaN (nothing suppressed), 0 and 1; boxes crowded with ties in the scores."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec.compiler import compile_model
from ptec.pte import parse_program

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")
from nms_models import ComputedThreshold, run_feed as _run  # noqa: E402


def _boxes(g, k, spread=None):
    """k crowded boxes (a duplicate, a touching pair, two empty boxes), scores on 6 levels (ties)."""
    spread = 4.0 * max(1.0, (k / 40) ** 0.5) if spread is None else spread
    lo = torch.rand(k, 2, generator=g) * spread
    b = torch.cat([lo, lo + torch.rand(k, 2, generator=g) * 5 + 0.25], 1)
    if k > 7:
        b[1] = b[0]
        b[2] = torch.cat([b[0, 2:3], b[0, 1:2], b[0, 2:3] + 1, b[0, 3:4]])
        b[4, 2:] = b[4, :2]
        b[5] = b[4]
    s = torch.randint(0, 6, (k,), generator=g).float() / 6 + (torch.rand(k, generator=g) < 0.2).float() * 0.01
    return b, s


def _ops(res):
    return {f"{o.name}.{o.overload}" for o in parse_program(res.data).execution_plan[0].operators}


def _iou_thresholds(b, s):
    """float32 thresholds on the feed's own IoUs: the IoU of the top box with
    a few others, exactly and one float32 step either side."""
    iou = tv.box_iou(b[s.argmax()][None], b)[0]
    picks = iou[(iou > 0.05) & (iou < 0.95)][:3]
    out = []
    for v in picks:
        out += [v, torch.nextafter(v, torch.tensor(0.0)), torch.nextafter(v, torch.tensor(1.0))]
    return out


class NmsOfInput(nn.Module):
    def forward(self, boxes, scores, t):
        return tv.nms(boxes, scores, t)


class BatchedOfInput(nn.Module):
    def forward(self, boxes, scores, idxs, t):
        return tv.batched_nms(boxes, scores, idxs, t)


def test_input_threshold_near_the_feeds_ious_is_torchvisions(tmp_path):
    g = torch.Generator().manual_seed(3)
    cal = [list(_boxes(g, 60)) + [torch.tensor(0.5)] for _ in range(2)]
    res = compile_model(NmsOfInput().eval(), cal[0], cal)
    assert "ptec::nms.Tensor_out" in _ops(res) and "ptec::nms.out" not in _ops(res)
    differ = 0
    for _ in range(4):
        b, s = _boxes(g, 60)
        ts = _iou_thresholds(b, s) + [torch.tensor(0.0), torch.tensor(1.0), torch.tensor(float("nan"))]
        assert len(ts) >= 9
        wants = []
        for t in ts:
            t = t.to(torch.float32).reshape(())
            got = np.asarray(_run(res, [b, s, t], tmp_path)[0])
            want = tv.nms(b, s, t).numpy()
            assert got.dtype == np.int64 and np.array_equal(got, want), (float(t), got, want)
            wants.append(want)
        # a threshold equal to an IoU keeps that box, one step below suppresses it (when it is still alive)
        differ += sum(not np.array_equal(wants[i], wants[i + 1]) for i in range(0, 9, 3))
        assert len(wants[-1]) == 60 and len(wants[-3]) < 60              # NaN: nothing suppressed; t 0: some
    assert differ > 0


@pytest.mark.parametrize("k", [60, 1200], ids=["K60-coordinate-trick", "K1200-per-class"])
def test_batched_input_threshold_is_torchvisions(k, tmp_path):
    g = torch.Generator().manual_seed(k)

    def feed(t):
        b, s = _boxes(g, k, spread=60.0 if k > 1000 else None)
        return [b, s, torch.randint(0, 4, (k,), generator=g), torch.tensor(t)]
    cal = [feed(0.5) for _ in range(2)]
    res = compile_model(BatchedOfInput().eval(), cal[0], cal)
    assert "ptec::batched_nms.Tensor_out" in _ops(res) if k > 1000 else "ptec::nms.Tensor_out" in _ops(res)
    lengths = []
    for t in (0.0, 0.3, 0.5, 0.7, 1.0, float("nan")):
        f = feed(t)
        for tt in [f[3]] + _iou_thresholds(f[0], f[1])[:3]:
            f[3] = tt.reshape(())
            got = np.asarray(_run(res, f, tmp_path)[0])
            want = tv.batched_nms(*f).numpy()
            assert got.dtype == np.int64 and np.array_equal(got, want), (t, got[:20], want[:20])
            lengths.append(len(want))
    assert len(set(lengths)) > 3, lengths


def test_threshold_of_an_int8_layer_is_torchvisions_on_the_programs_value(tmp_path):
    g = torch.Generator().manual_seed(11)

    def feed():
        b, s = _boxes(g, 80)
        return [b, s, torch.randn(1, 8, generator=g) * 2]
    cal = [feed() for _ in range(16)]
    model = ComputedThreshold().eval()
    res = compile_model(model, cal[0], cal)
    assert "ptec::nms.Tensor_out" in _ops(res)
    ts, lengths = [], []
    for _ in range(8):
        f = feed()
        out = _run(res, f, tmp_path)
        got, t = np.asarray(out[0]), np.asarray(out[1], dtype=np.float32).reshape(())
        want = tv.nms(f[0], f[1], torch.from_numpy(t.copy())).numpy()
        assert got.dtype == np.int64 and np.array_equal(got, want), (float(t), got, want)
        # the program's threshold is the layer's: the mean of 4 sigmoid outputs (int8, scale at most 1 / 255)
        # within 2 of their steps of torch float's (measured: 0.005 at most)
        assert abs(float(t) - float(model(*f)[1])) < 2 / 255 + 1e-6
        ts.append(float(t))
        lengths.append(len(want))
    assert len(set(ts)) > 3 and len(set(lengths)) > 2, (ts, lengths)


class Sigmoid(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Parameter(torch.tensor(-0.2))

    def forward(self, boxes, scores):
        return tv.nms(boxes, scores, self.t.sigmoid())


class MeanItem(nn.Module):
    def forward(self, boxes, scores):
        return tv.nms(boxes, scores, (scores.mean() * 0.8).item())


class Buffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("t", torch.tensor(0.45))

    def forward(self, boxes, scores):
        return tv.nms(boxes, scores, self.t)


class Attribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = torch.tensor([0.35], dtype=torch.float64)

    def forward(self, boxes, scores):
        return tv.nms(boxes, scores, self.t)


@pytest.mark.parametrize("model,kernel", [(Sigmoid, "ptec::nms.Tensor_out"), (MeanItem, "ptec::nms.Tensor_out"),
                                          (Buffer, "ptec::nms.out"), (Attribute, "ptec::nms.out")],
                         ids=["param.sigmoid()", "x.item()", "buffer", "float64-attribute"])
def test_forms_of_a_tensor_threshold(model, kernel, tmp_path):
    """Each form runs; a buffer / attribute is folded (the constant kernel,
    torchvision's float(t)); a computed one runs on Tensor_out. The
    computed thresholds here are within the feeds' IoUs' gaps, so the
    program's float32 value gives torch's own indices."""
    g = torch.Generator().manual_seed(5)
    m = model().eval()
    cal = [list(_boxes(g, 50)) for _ in range(2)]
    res = compile_model(m, cal[0], cal)
    ops = _ops(res)
    assert kernel in ops and ({"ptec::nms.out", "ptec::nms.Tensor_out"} - {kernel}).isdisjoint(ops), ops
    lengths = []
    for _ in range(4):
        f = list(_boxes(g, 50))
        got = np.asarray(_run(res, f, tmp_path)[0])
        want = m(*f).numpy()
        assert got.dtype == np.int64 and np.array_equal(got, want), (got, want)
        lengths.append(len(want))
    assert min(lengths) < 50


class FormerRefusal(nn.Module):
    """test_torchvision_ops's former refusal: boxes, scores and the threshold
    all computed from z (returned beside: the values the program used)."""
    def forward(self, x, z):
        b = torch.cat([z[:, :2], z[:, :2] + z[:, 2:].abs() + 1], 1)
        s = z[:, 0]
        t = z[0, 0] / 8
        return tv.nms(b, s, t), tv.batched_nms(b, s, (s > 3).long(), t), b, s, t


def test_former_refusal_runs(tmp_path):
    """Exactly torchvision's nms and batched_nms of the program's own boxes,
    scores and threshold."""
    g = torch.Generator().manual_seed(2)

    def feed():
        return [torch.randn(1, 4, 8, 8, generator=g), torch.rand(12, 4, generator=g) * 6]
    cal = [feed() for _ in range(8)]
    res = compile_model(FormerRefusal().eval(), cal[0], cal)
    assert {"ptec::nms.Tensor_out"} <= _ops(res)
    lengths = []
    for _ in range(6):
        f = feed()
        k, kb, b, s, t = [torch.from_numpy(np.array(o)) for o in _run(res, f, tmp_path)]
        assert t.dtype == torch.float32 and t.numel() == 1
        want = tv.nms(b, s, t).numpy()
        assert k.dtype == torch.int64 and np.array_equal(k.numpy(), want), (k, want, float(t))
        want_b = tv.batched_nms(b, s, (s > 3).long(), t).numpy()
        assert np.array_equal(kb.numpy(), want_b), (kb, want_b, float(t))
        lengths.append(len(want))
    assert len(set(lengths)) > 1, lengths


def test_float_graph_and_reference_interpreter_with_input_threshold():
    """ptec's two mirrors of Tensor_out (capture_nms.nms_keep /
    batched_nms_indices on a tensor, reference portable.nms_threshold): each
    torchvision's indices."""
    from ptec.capture import capture
    from ptec.interpreter import run_program
    from ptec.ir import evaluate
    g = torch.Generator().manual_seed(9)
    for model, k, classes in ((NmsOfInput(), 40, 0), (BatchedOfInput(), 1100, 3)):
        def feed(t):
            b, s = _boxes(g, k, spread=60.0 if k > 1000 else None)
            return [b, s] + ([torch.randint(0, classes, (k,), generator=g)] if classes else []) + [torch.tensor(t)]
        feeds = [feed(t) for t in (0.2, 0.5, float("nan"))]
        graph = capture(model.eval(), feeds[0])
        program = parse_program(compile_model(model.eval(), feeds[0], feeds[:2]).data)
        for f in feeds:
            want = model(*f).numpy()
            assert np.array_equal(np.asarray(evaluate(graph, f)[0]).astype(np.int64), want)
            assert np.array_equal(np.asarray(run_program(program, [x.numpy() for x in f])[0]), want)


@pytest.mark.parametrize("model,k", [(NmsOfInput(), 2000), (BatchedOfInput(), 1500)], ids=["nms", "batched"])
def test_tensor_out_plans_its_scratch(model, k, tmp_path):
    """Tensor_out's scratch (K float32 areas; batched: and K uint32 kept
    indices) is planned: ptec-run measures exactly the computed scratch and
    fails with a byte less."""
    from ptec.requirements import requirements
    from test_requirements import assert_exact_on_host, PTEC_RUN
    import os
    assert os.path.exists(PTEC_RUN), "no ptec-run (make host)"
    g = torch.Generator().manual_seed(k)
    b, s = _boxes(g, k)
    feed = [b, s] + ([torch.randint(0, 3, (k,), generator=g)] if k == 1500 else []) + [torch.tensor(0.5)]
    res = compile_model(model.eval(), feed, [feed])
    kernel = "ptec::batched_nms.Tensor_out" if k == 1500 else "ptec::nms.Tensor_out"
    assert kernel in _ops(res)
    path = tmp_path / "nms.pte"
    path.write_bytes(res.data)
    r = requirements(parse_program(res.data), target="host")
    assert r.scratch_bytes >= (8 if k == 1500 else 4) * k
    assert_exact_on_host(str(path), r)
