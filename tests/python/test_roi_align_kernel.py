"""torchvision.ops.roi_align / ps_roi_align on ptec::roi_align.out
(src/kernels/portable/op_roi_align.c, capture_torchvision), every
sampling_ratio: the adaptive ceil(box size / output size) grid of
sampling_ratio <= 0, a count that depends on the box values, included.

Oracle: torchvision's own CPU op in float32 on the values the program
reads. Bound: bit-equal (0 ulps; measured max abs and relative error 0 on
every case below): the kernel does torchvision 0.14's float32 arithmetic in
its order (the sample positions, `1. - ly` in double, the sum of the four
weighted taps, then the sum over the grid, then the division by the count).
Feature maps N(0, 2^2), boxes partly or wholly outside the map, tiny (under
a pixel), huge (three times the map), reversed (roi_align: not aligned or a fixed
ratio, as torchvision itself throws on an aligned reversed box with the
adaptive grid; ps_roi_align: all, its signed count giving -0), aligned both ways, sampling_ratio -1, 0, 1, 2, N 1 and 2.
The host interpreter's numpy reference equals the C bit for bit.
Boxes are data: a batch index outside [0, N) or a non-finite box fails the
run with a message (torchvision reads out of bounds), as does an adaptive
grid beyond 2^20 samples per bin."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program as interpret
from ptec.pte import parse_program
from runtime_util import run_program

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")


def _boxes(g, k, n, hw, scale, reversed_ok, huge=False):
    h, w = hw
    span = torch.tensor([w, h]) / scale
    lo = torch.rand(k, 2, generator=g) * span * 1.6 - span * 0.3
    size = torch.rand(k, 2, generator=g) * span * (3.0 if huge else 0.8) + 0.05
    size[1] = torch.rand(2, generator=g) * 0.4 / scale            # tiny: under a pixel of the map
    if reversed_ok:
        size[0] = -size[0] * 0.1                                     # reversed
    b = torch.cat([lo, lo + size], 1)
    return torch.cat([torch.randint(0, n, (k, 1), generator=g).float(), b], 1)


class Roi(nn.Module):
    def __init__(self, size, scale, ratio, aligned, ps=False):
        super().__init__()
        self.args, self.ps = (size, scale, ratio, aligned), ps

    def forward(self, x, boxes):
        if self.ps:
            return tv.ps_roi_align(x, boxes, *self.args[:3])
        return tv.roi_align(x, boxes, *self.args)


CASES = [  # (n, output_size, spatial_scale, sampling_ratio, aligned, huge)
    (1, (3, 2), 0.5, -1, False, False),
    (1, (3, 2), 0.5, 0, True, False),
    (2, 2, 1.0, -1, True, True),
    (2, (2, 3), 0.25, 0, False, True),
    (1, 7, 0.5, 1, True, False),
    (2, (3, 3), 1.0, 2, False, False),
    (1, (1, 1), 0.3, -1, False, True),
]


def _feeds(n, c, scale, reversed_ok, huge, count, seed):
    g = torch.Generator().manual_seed(seed)
    return [[torch.randn(n, c, 9, 11, generator=g) * 2, _boxes(g, 7, n, (9, 11), scale, reversed_ok, huge)]
            for _ in range(count)]


def _host(res, feed, tmp_path):
    return np.asarray(host_runtime.run(parse_program(res.data), res.data, [t.numpy() for t in feed],
                                       workdir=str(tmp_path))[0], np.float32)


def _bit_equal(got, want):
    assert got.shape == want.shape
    same = (got.view(np.int32) == want.view(np.int32)) | (np.isnan(got) & np.isnan(want))
    return bool(same.all()), float(np.nanmax(np.abs(got.astype(np.float64) - want)))


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_roi_align_bit_equal_to_torchvision(case, tmp_path):
    n, size, scale, ratio, aligned, huge = case
    model = Roi(size, scale, ratio, aligned).eval()
    reversed_ok = not aligned or ratio > 0
    feeds = _feeds(n, 3, scale, reversed_ok, huge, 4, 0)
    res = compile_model(model, feeds[0], feeds)
    assert any("ptec::roi_align.out" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    program = parse_program(res.data)
    wants = []
    for feed in _feeds(n, 3, scale, reversed_ok, huge, 3, 1):
        with torch.no_grad():
            want = model(*feed).numpy()
        got = _host(res, feed, tmp_path)
        equal, worst = _bit_equal(got, want)
        assert equal, worst
        ref = np.asarray(interpret(program, [t.numpy() for t in feed])[0], np.float32)
        assert _bit_equal(ref, got)[0]                       # the interpreter's numpy reference, bit for bit
        wants.append(want)
    assert np.std(wants) > 0.1 and np.mean(np.asarray(wants) == 0) > 0.005      # values vary; some zeros


@pytest.mark.parametrize("ratio", [-1, 0, 2])
def test_ps_roi_align_bit_equal_to_torchvision(ratio, tmp_path):
    model = Roi((2, 3), 0.5, ratio, True, ps=True).eval()
    feeds = _feeds(2, 12, 0.5, True, False, 3, 2)       # reversed boxes too: torchvision's signed count
    res = compile_model(model, feeds[0], feeds)
    assert any("ptec::roi_align.out" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    for feed in _feeds(2, 12, 0.5, True, False, 3, 3):
        with torch.no_grad():
            want = model(*feed).numpy()
        equal, worst = _bit_equal(_host(res, feed, tmp_path), want)
        assert equal and np.nanstd(want) > 0.1, worst          # (an empty adaptive grid: torchvision's NaN)


class ListedAdaptive(nn.Module):
    """roi_align on a list of one [K, 4] tensor (batch index 0) and
    nn.RoIAlign on per-image lists, both adaptive (the maps and boxes
    program inputs: float32 throughout)."""

    def __init__(self):
        super().__init__()
        self.r = tv.RoIAlign((2, 2), 0.5, 0, aligned=True)

    def forward(self, x1, x2, b, b2):
        return tv.roi_align(x1, [b], (3, 3), 0.5), self.r(x2, [b, b2])


def test_box_lists_adaptive(tmp_path):
    g = torch.Generator().manual_seed(4)
    corner = torch.tensor([0, 0, 6, 6])
    feed = [torch.randn(1, 3, 10, 12, generator=g), torch.randn(2, 3, 10, 12, generator=g),
            torch.rand(5, 4, generator=g) * 10 + corner, torch.rand(3, 4, generator=g) * 10 + corner]
    model = ListedAdaptive().eval()
    res = compile_model(model, feed, [feed])
    got = host_runtime.run(parse_program(res.data), res.data, [t.numpy() for t in feed], workdir=str(tmp_path))
    with torch.no_grad():
        wants = model(*feed)
    for y, want in zip(got, wants):
        assert _bit_equal(np.asarray(y, np.float32), want.numpy())[0]


class Pyramid(nn.Module):
    """MultiScaleRoIAlign with sampling_ratio -1 (torchvision's default for
    detection heads: the adaptive grid) on three maps (program inputs: fp32)."""

    def __init__(self):
        super().__init__()
        self.pool = tv.MultiScaleRoIAlign(["a", "b", "c"], 3, -1)

    def forward(self, a, b, c, boxes):
        return self.pool({"a": a, "b": b, "c": c}, [boxes], [(64, 64)])


def test_multiscale_adaptive_bit_equal(tmp_path):
    g = torch.Generator().manual_seed(5)
    lo = torch.rand(8, 2, generator=g) * 40
    side = torch.tensor([3.0, 9.0, 20.0, 40.0, 64.0, 5.0, 30.0, 50.0]).view(8, 1)
    feed = [torch.randn(1, 2, 32, 32, generator=g), torch.randn(1, 2, 16, 16, generator=g),
            torch.randn(1, 2, 8, 8, generator=g), torch.cat([lo, lo + side], 1)]
    model = Pyramid().eval()
    res = compile_model(model, feed, [feed])
    with torch.no_grad():
        want = model(*feed).numpy()
    equal, worst = _bit_equal(_host(res, feed, tmp_path), want)
    assert equal and np.std(want) > 0.1, worst


def _program(model, feed):
    return compile_model(model, feed, [feed]).program


@pytest.mark.parametrize("index", [2.0, -1.0, float("nan"), 1e9])
def test_batch_index_outside_the_batch_fails_the_run(index, tmp_path):
    """A box naming no image of the batch: ptec-run fails with the kernel's
    message (torchvision would read outside the map)."""
    model = Roi(2, 1.0, -1, False).eval()
    x = torch.randn(2, 3, 8, 8)
    good = torch.tensor([[1.0, 0.0, 0.0, 4.0, 4.0], [0.0, 1.0, 1.0, 6.0, 5.0]])
    program = _program(model, [x, good])
    proc, outs = run_program(program, [x.numpy(), good.numpy()], tmp_path, "ok")
    assert proc.returncode == 0 and len(outs) == 1, proc.stderr
    bad = good.clone()
    bad[1, 0] = index
    proc, _ = run_program(program, [x.numpy(), bad.numpy()], tmp_path, "bad")
    assert proc.returncode not in (0, -11, -6) and "batch index is outside" in proc.stderr, proc.stderr


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_non_finite_box_fails_the_run(value, tmp_path):
    model = Roi(2, 1.0, 2, True).eval()
    x = torch.randn(1, 3, 8, 8)
    boxes = torch.tensor([[0.0, 0.0, 0.0, 4.0, 4.0]])
    program = _program(model, [x, boxes])
    boxes[0, 3] = value
    proc, _ = run_program(program, [x.numpy(), boxes.numpy()], tmp_path)
    assert proc.returncode not in (0, -11, -6) and "box is not finite" in proc.stderr, proc.stderr


def test_adaptive_grid_beyond_the_limit_fails_the_run(tmp_path):
    """A box whose adaptive grid passes 2^20 samples per bin (2000 x 2000
    pixels into one bin): a message, not an unbounded loop."""
    model = Roi(1, 1.0, -1, False).eval()
    x = torch.randn(1, 1, 8, 8)
    boxes = torch.tensor([[0.0, 0.0, 0.0, 4.0, 4.0]])
    program = _program(model, [x, boxes])
    proc, outs = run_program(program, [x.numpy(), boxes.numpy()], tmp_path, "ok")
    assert proc.returncode == 0 and np.array_equal(outs[0], model(x, boxes).numpy()), proc.stderr
    boxes[0, 3:] = 2000.0
    proc, _ = run_program(program, [x.numpy(), boxes.numpy()], tmp_path, "big")
    assert proc.returncode not in (0, -11, -6) and "2^20 samples" in proc.stderr, proc.stderr


class ConvAdaptive(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x, boxes):
        return tv.roi_align(self.c(x), boxes, (2, 2), 0.5, -1, True)


class ConvOnly(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, x):
        return self.c(x)


def test_adaptive_behind_an_int8_conv(tmp_path):
    """The int8 conv's output dequantized into the fp32 kernel: torchvision
    on the program's own conv output (the conv alone, compiled with the same
    calibration) bit for bit: the kernel adds no error to the conv's."""
    g = torch.Generator().manual_seed(6)
    feeds = [[torch.randn(1, 3, 12, 12, generator=g), _boxes(g, 5, 1, (12, 12), 0.5, False)] for _ in range(6)]
    model = ConvAdaptive().eval()
    res = compile_model(model, feeds[0], feeds)
    assert any("ptec::roi_align.out" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    conv = ConvOnly(model.c).eval()
    res_c = compile_model(conv, [feeds[0][0]], [[f[0]] for f in feeds])
    assert res_c.graph.node(res_c.graph.outputs[0]).qparams            # the conv runs in int8
    for feed in feeds[:3]:
        maps = torch.from_numpy(_host(res_c, feed[:1], tmp_path).copy())
        want = tv.roi_align(maps, feed[1], (2, 2), 0.5, -1, True).numpy()
        equal, worst = _bit_equal(_host(res, feed, tmp_path), want)
        assert equal and np.std(want) > 0.05, worst
