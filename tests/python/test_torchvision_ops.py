"""torchvision.ops.roi_align and nn RoIAlign (ptec.capture_torchvision).

Oracle: torchvision's own roi_align in float64 on the values the program
reads. A feature map and boxes that are program inputs stay float32 and
every step runs in fp32: within 4e-6 of the largest input magnitude, for
aligned both ways, several scales, sampling ratios and output sizes, a
batch of 2 (regions picked by their batch index), boxes as a [K, 5] tensor
or a list of one [K, 4] tensor, boxes partly or wholly outside the map
(torch's zero beyond -1 and the size, its clamp between), degenerate and
reversed boxes. Behind an int8 conv, the result is a mean of bilinear
weights of the conv's int8 values: its error is at most the conv's own
(in the conv output's steps). Boxes computed in the program (a linear of
an input) and constant boxes (a buffer) run too. Every roi_align runs on
ptec::roi_align.out (the adaptive sampling_ratio <= 0 too: its focused
tests, bit-equal to torchvision fp32, are test_roi_align_kernel.py)."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from istft_models import SpectrumOfLayer
from model_checks import cli_refusal, smooth_images
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")


def _boxes(g, k, n, hw, scale, listed):
    """k boxes in input coordinates, some beyond the map, some tiny or reversed."""
    h, w = hw
    lo = torch.rand(k, 2, generator=g) * torch.tensor([w, h]) / scale * 1.6 - torch.tensor([w, h]) / scale * 0.3
    size = torch.rand(k, 2, generator=g) * torch.tensor([w, h]) / scale * 0.8 + 0.05
    size[0] = -size[0] * 0.1                      # a reversed box: negative size
    b = torch.cat([lo, lo + size], 1)
    if listed:
        return [b]
    return torch.cat([torch.randint(0, n, (k, 1), generator=g).float(), b], 1)


class RoiModel(nn.Module):
    def __init__(self, size, scale, ratio, aligned, listed):
        super().__init__()
        self.args, self.listed = (size, scale, ratio, aligned), listed

    def forward(self, x, boxes):
        return tv.roi_align(x, [boxes] if self.listed else boxes, *self.args)


CASES = [  # (n, output_size, spatial_scale, sampling_ratio, aligned, listed)
    (1, (3, 2), 0.5, 2, True, False),
    (1, (3, 2), 0.5, 2, False, False),
    (1, 2, 1.0, 1, False, True),
    (1, (2, 3), 0.25, 3, True, True),
    (2, (3, 3), 0.5, 2, True, False),
    (2, 2, 1.0, 1, False, False),
]


def _feeds(n, scale, listed, count, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        x = torch.randn(n, 3, 9, 11, generator=g) * 2
        b = _boxes(g, 6, n, (9, 11), scale, listed)
        out.append([x, b[0] if listed else b])
    return out


def _run(res, feed, tmp_path):
    return np.asarray(host_runtime.run(parse_program(res.data), res.data, [t.numpy() for t in feed],
                                       workdir=str(tmp_path))[0], np.float64)


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_inputs_in_fp32_within_rounding_of_torch(case, tmp_path):
    n, size, scale, ratio, aligned, listed = case
    model = RoiModel(size, scale, ratio, aligned, listed).eval()
    calibration = _feeds(n, scale, listed, 4, 0)
    res = compile_model(model, calibration[0], calibration)
    assert any("ptec::roi_align.out" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    wants = []
    for feed in _feeds(n, scale, listed, 4, 1):
        got = _run(res, feed, tmp_path)
        want = model(*[t.double() for t in feed]).numpy()
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 4e-6 * float(feed[0].abs().max()), np.abs(got - want).max()
        wants.append(want)
    assert np.std(wants) > 0.1 and np.mean(np.asarray(wants) == 0) > 0.01      # values vary; some zeros


class ConvRoi(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c = nn.Conv2d(3, 4, 3, padding=1)
        self.r = tv.RoIAlign((2, 2), 0.5, 2, aligned=True)

    def forward(self, x, boxes):
        return self.r(self.c(x), [boxes])


class ConvOnly(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, x):
        return self.c(x)


def _conv_feeds(count, seed):
    g = torch.Generator().manual_seed(seed)
    images = smooth_images(count, seed)
    return [[x[:, :3, :12, :12].contiguous(), _boxes(g, 5, 1, (12, 12), 0.5, True)[0]] for (x,) in images]


def test_behind_an_int8_conv_within_the_conv_error(tmp_path):
    """nn.RoIAlign on an int8 conv's output: bilinear means of the conv's
    values, so off torch float by no more than the conv itself (measured
    in the conv output's steps)."""
    model = ConvRoi().eval()
    calibration, tests = _conv_feeds(12, 0), _conv_feeds(4, 7)
    res = compile_model(model, calibration[0], calibration)
    conv = ConvOnly(model.c).eval()
    res_c = compile_model(conv, [calibration[0][0]], [[f[0]] for f in calibration])
    step = res_c.graph.node(res_c.graph.outputs[0]).qparams[0]
    worst = conv_worst = 0.0
    with torch.no_grad():
        for feed in tests:
            worst = max(worst, float(np.abs(_run(res, feed, tmp_path) - model(*feed).numpy()).max() / step))
            conv_worst = max(conv_worst, float(np.abs(_run(res_c, feed[:1], tmp_path) - conv(feed[0]).numpy()).max()
                                               / step))
    print(f"roi_align {worst:.2f}, the conv alone {conv_worst:.2f} conv output steps")
    assert worst <= conv_worst + 0.01 and worst <= 1.5


class ComputedBoxes(nn.Module):
    """Boxes from a linear of an input (a box head), then roi_align."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.l = nn.Linear(4, 4)

    def forward(self, x, z):
        b = self.l(z).abs() * 3
        boxes = torch.cat([b[:, :2], b[:, :2] + b[:, 2:] + 0.5], 1)
        return tv.roi_align(x, [boxes], (2, 2), 1.0, 2, True)


def test_computed_boxes_run(tmp_path):
    model = ComputedBoxes().eval()
    g = torch.Generator().manual_seed(3)
    feeds = [[torch.randn(1, 2, 8, 8, generator=g), torch.randn(3, 4, generator=g)] for _ in range(8)]
    res = compile_model(model, feeds[0], feeds)
    worst = 0.0
    with torch.no_grad():
        for feed in feeds[:4]:
            worst = max(worst, float(np.abs(_run(res, feed, tmp_path) - model(*feed).numpy()).max()))
    # the boxes' linear runs in int8 (its output's step ~0.03 of a pixel): well under 0.1 of x's unit range
    assert worst <= 0.1, worst


class ConstantBoxes(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("rois", torch.tensor([[0, 1., 1., 6., 6.], [0, 0., 2., 8., 7.], [0, -3., 7., 2., 12.]]))

    def forward(self, x):
        return tv.roi_align(x, self.rois, (2, 2), 1.0, 2, aligned=True)


def test_constant_boxes_fp32(tmp_path):
    model = ConstantBoxes().eval()
    g = torch.Generator().manual_seed(4)
    feeds = [[torch.randn(1, 3, 10, 10, generator=g)] for _ in range(4)]
    res = compile_model(model, feeds[0], feeds)
    for feed in feeds:
        want = tv.roi_align(feed[0].double(), model.rois.double(), (2, 2), 1.0, 2, aligned=True).numpy()
        assert np.abs(_run(res, feed, tmp_path) - want).max() <= 4e-6 * float(feed[0].abs().max())


# ---- torch.istft (ptec.capture_torchvision._istft) ----

class RoundTrip(nn.Module):
    """torch.stft then torch.istft of its spectrum (a constant window or none)."""

    def __init__(self, n_fft, hop, win_length, hann, center, normalized, length, batched):
        super().__init__()
        self.args, self.batched = (n_fft, hop, win_length), batched
        self.kw = dict(center=center, normalized=normalized)
        self.length = length
        if hann:
            self.register_buffer("w", torch.hann_window(win_length))
        else:
            self.w = None

    def forward(self, x):
        if not self.batched:
            x = x[0]
        spec = torch.stft(x, *self.args, window=self.w, return_complex=True, **self.kw)
        return torch.istft(spec, *self.args, window=self.w, length=self.length, **self.kw)


ISTFT = {  # name: (model, input shape, bound in output steps; measured with the fp32 window product, overlap-add
    # and division after the int8 irfft (ISTFT_FP32); all in int8 they were 3.47, 3.23, 2.09, under 4 and 2.18)
    "hann, length": (RoundTrip(32, 16, 32, True, True, False, 128, True), (2, 128), 2.25),         # 1.81
    "no window, not centred": (RoundTrip(16, 4, 16, False, False, False, None, True), (2, 128), 1.75),  # 1.29
    "win_length 24, normalized, unbatched":                                                          # 1.25
        (RoundTrip(32, 8, 24, True, True, True, None, False), (1, 128), 1.75),
    "zeros after the signal (length > frames)": (RoundTrip(16, 4, 16, False, False, False, 140, True), (2, 128),
                                                 2.0),                                               # 1.45
    "view_as_complex of a linear": (SpectrumOfLayer(17, 32, 8, length=60, seed=0), (1, 9, 6), 2.0),  # 1.53
}


@pytest.mark.parametrize("name", sorted(ISTFT))
def test_istft_int8_within_steps(name, tmp_path):
    model, shape, bound = ISTFT[name]
    model.eval()
    g = torch.Generator().manual_seed(0)
    feeds = [[torch.randn(*shape, generator=g)] for _ in range(8)]
    res = compile_model(model, feeds[0], feeds)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, wants = 0.0, []
    with torch.no_grad():
        for feed in feeds[:4]:
            got, want = _run(res, feed, tmp_path), model(feed[0]).numpy()
            assert got.shape == want.shape
            worst = max(worst, float(np.abs(got - want).max() / step))
            wants.append(want)
    print(f"{name}: {worst:.2f} output steps")
    assert worst <= bound and np.std(wants) > 0.1


def test_istft_plan_is_torchs_envelope():
    """The constants: torch.istft of a spectrum equals irfft * window,
    overlap-added, times 1 / envelope over the kept range, zeros after
    (float64); a range where the envelope is 0 gives no plan (torch raises)."""
    from ptec.capture_torchvision import istft_plan
    g = torch.Generator().manual_seed(5)
    spec = torch.randn(17, 7, dtype=torch.complex128, generator=g)
    spec[0].imag = 0
    spec[-1].imag = 0
    w = torch.hann_window(20, dtype=torch.float64) + 0.1
    assert istft_plan(32, 8, 20, w, 7, False, False, None) is None         # zero envelope: torch raises
    assert istft_plan(32, 8, 20, w, 7, True, False, 70) is None
    with pytest.raises(RuntimeError):
        torch.istft(spec, 32, 8, 20, w, center=False)
    for center, normalized, length in [(True, False, None), (True, True, 58), (True, True, 40)]:
        scale, total, start, end, inv, pad = istft_plan(32, 8, 20, w, 7, center, normalized, length)
        frames = torch.fft.irfft(spec, n=32, dim=0) * scale[:, None]
        y = torch.zeros(total, dtype=torch.float64)
        for t in range(7):
            y[t * 8:t * 8 + 32] += frames[:, t]
        y = torch.cat([y[start:end] * inv, torch.zeros(pad, dtype=torch.float64)])
        want = torch.istft(spec, 32, 8, 20, w, center=center, normalized=normalized, length=length)
        assert torch.allclose(y, want, atol=1e-12), (center, normalized, length)


# (a two-sided spectrum and a window computed in the program run: test_istft_forms.py)


# ---- torchvision.ops.roi_pool (ptec.capture_torchvision._RoiPool) ----

class PoolModel(nn.Module):
    def __init__(self, size, scale, listed):
        super().__init__()
        self.args, self.listed = (size, scale), listed

    def forward(self, x, boxes):
        return tv.roi_pool(x, [boxes] if self.listed else boxes, *self.args)


def _pool_feeds(n, scale, listed, count, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        x = torch.randn(n, 3, 9, 11, generator=g) * 2
        b = _boxes(g, 6, n, (9, 11), scale, listed)
        first = b[0] if listed else b[:, 1:]
        first[1] = torch.tensor([2.5, 3.5, 5.5, 7.5]) / scale      # halves: std::round goes away from zero
        first[2] = torch.tensor([-1.5, 0.5, 3.0, 2.5]) / scale
        out.append([x, first if listed else b])
    return out


POOL_CASES = [(1, (3, 2), 0.5, True), (1, 2, 1.0, False), (2, (2, 3), 0.25, False)]


@pytest.mark.parametrize("case", POOL_CASES, ids=[str(c) for c in POOL_CASES])
def test_roi_pool_inputs_exact(case, tmp_path):
    """A max of the input's own values (or 0 for an empty window): torch's bytes."""
    n, size, scale, listed = case
    model = PoolModel(size, scale, listed).eval()
    calibration = _pool_feeds(n, scale, listed, 4, 0)
    res = compile_model(model, calibration[0], calibration)
    zeros = []
    for feed in _pool_feeds(n, scale, listed, 4, 1):
        got, want = _run(res, feed, tmp_path), model(*feed).numpy()
        assert np.array_equal(got, want), np.abs(got - want).max()
        zeros.append(np.mean(want == 0))
    assert 0 < np.mean(zeros) < 0.6


def test_roi_pool_behind_an_int8_conv(tmp_path):
    class ConvPool(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.c = nn.Conv2d(3, 4, 3, padding=1)

        def forward(self, x, boxes):
            return tv.RoIPool((2, 2), 0.5)(self.c(x), [boxes])

    model = ConvPool().eval()
    calibration, tests = _conv_feeds(12, 0), _conv_feeds(4, 7)
    res = compile_model(model, calibration[0], calibration)
    conv = ConvOnly(model.c).eval()
    res_c = compile_model(conv, [calibration[0][0]], [[f[0]] for f in calibration])
    step = res_c.graph.node(res_c.graph.outputs[0]).qparams[0]
    worst = conv_worst = 0.0
    with torch.no_grad():
        for feed in tests:
            worst = max(worst, float(np.abs(_run(res, feed, tmp_path) - model(*feed).numpy()).max() / step))
            conv_worst = max(conv_worst, float(np.abs(_run(res_c, feed[:1], tmp_path) - conv(feed[0]).numpy()).max()
                                               / step))
    print(f"roi_pool {worst:.2f}, the conv alone {conv_worst:.2f} conv output steps")
    assert worst <= conv_worst + 0.01 and worst <= 1.5


# (deform_conv2d's weight groups and offset groups run: test_deform_conv_groups.py; a weight computed in the
# program, as z[:4].reshape(4, 4, 1, 1) was here: test_last_refusals.py)
# (nms with a threshold computed in the program, z[0, 0], refused here before, runs: test_nms_threshold.py)
@pytest.mark.parametrize("call", ["ops.nms(b[:0], s[:0], z[0, 0])",
                                  "ops.batched_nms(b[:0], s[:0], (s[:0] > 3).long(), 0.5)"])
def test_nms_of_no_boxes_runs(call):
    """Boxes computed in the program, none of them: torch's empty int64
    result (refused by name before issue 15's round 22; more in
    test_refusals_round22b.py)."""
    import torchvision.ops as ops

    class M(torch.nn.Module):
        def forward(self, x, z):
            b = torch.cat([z[:, :2], z[:, :2] + z[:, 2:].abs() + 1], 1)
            s = z[:, 0]
            assert ops is not None and b is not None and s is not None
            return eval(call)

    feed = [torch.randn(1, 4, 8, 8), torch.rand(5, 4) * 6]
    res = compile_model(M().eval(), feed, [feed])
    got = host_runtime.run(parse_program(res.data), res.data, [t.numpy() for t in feed])[0]
    assert np.asarray(got).dtype == np.int64 and np.asarray(got).shape == (0,)


# ---- torchvision.ops.deform_conv2d (ptec.capture_torchvision._DeformConv) ----

class Deform(nn.Module):
    def __init__(self, masked, stride, padding, dilation, bias=True):
        super().__init__()
        torch.manual_seed(0)
        self.dc = tv.DeformConv2d(3, 4, 3, stride=stride, padding=padding, dilation=dilation, bias=bias)
        self.masked = masked

    def forward(self, x, offset, mask):
        return self.dc(x, offset, mask if self.masked else None)


DEFORM_CASES = [(False, 1, 1, 1, True), (True, 2, 0, 1, True), (True, 1, 2, 2, False)]


def _deform_feeds(stride, padding, dilation, count, seed):
    g = torch.Generator().manual_seed(seed)
    ho = (7 + 2 * padding - 2 * dilation - 1) // stride + 1
    wo = (6 + 2 * padding - 2 * dilation - 1) // stride + 1
    # offsets of a few pixels: reads beyond the map's edges (torch's zeros) and between pixels
    return [[torch.randn(2, 3, 7, 6, generator=g), torch.randn(2, 18, ho, wo, generator=g) * 2.5,
             torch.rand(2, 9, ho, wo, generator=g)] for _ in range(count)]


@pytest.mark.parametrize("case", DEFORM_CASES, ids=[str(c) for c in DEFORM_CASES])
def test_deform_conv2d_inputs_in_fp32(case, tmp_path):
    masked, stride, padding, dilation, bias = case
    model = Deform(masked, stride, padding, dilation, bias).eval()
    calibration = _deform_feeds(stride, padding, dilation, 4, 0)
    res = compile_model(model, calibration[0], calibration)
    w, b = model.dc.weight.double(), None if model.dc.bias is None else model.dc.bias.double()
    for feed in _deform_feeds(stride, padding, dilation, 3, 1):
        got = _run(res, feed, tmp_path)
        x, off, mask = (t.double() for t in feed)
        want = tv.deform_conv2d(x, off, w, b, stride, padding, dilation, mask if masked else None).detach().numpy()
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 2e-6 * np.abs(want).max(), np.abs(got - want).max()


def test_deform_conv2d_offsets_from_an_int8_conv(tmp_path):
    """The DCN pattern: offsets from a conv of x (int8), x sampled there in fp32."""
    class DCN(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.off = nn.Conv2d(3, 18, 3, padding=1)
            self.dc = tv.DeformConv2d(3, 4, 3, padding=1)

        def forward(self, x):
            return self.dc(x, self.off(x))

    model = DCN().eval()
    g = torch.Generator().manual_seed(0)
    feeds = [[torch.randn(1, 3, 8, 8, generator=g)] for _ in range(12)]
    res = compile_model(model, feeds[0], feeds)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    with torch.no_grad():
        for feed in feeds[:4]:
            worst = max(worst, float(np.abs(_run(res, feed, tmp_path) - model(feed[0]).numpy()).max() / step))
    print(f"DCN: {worst:.2f} output steps")
    assert worst <= 2.5        # measured 2.06: the int8 input and offsets


def test_detection_head_int8_around_roi_align(tmp_path):
    """conv, relu, RoIAlign (boxes a program input), flatten, linear: the
    fp32 roi_align quantized for the int8 linear after it."""
    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.c, self.r, self.fc = nn.Conv2d(3, 8, 3, padding=1), tv.RoIAlign(3, 0.5, 2, True), nn.Linear(72, 5)

        def forward(self, x, boxes):
            return self.fc(self.r(torch.relu(self.c(x)), [boxes]).flatten(1))

    def feed(seed):
        g = torch.Generator().manual_seed(seed)
        lo = torch.rand(4, 2, generator=g) * 12
        return [torch.randn(1, 3, 12, 12, generator=g), torch.cat([lo, lo + torch.rand(4, 2, generator=g) * 10 + 1], 1)]

    model = Head().eval()
    calibration = [feed(i) for i in range(12)]
    res = compile_model(model, calibration[0], calibration)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    with torch.no_grad():
        for f in [feed(20 + i) for i in range(4)]:
            worst = max(worst, float(np.abs(_run(res, f, tmp_path) - model(*f).numpy()).max() / step))
    print(f"head: {worst:.2f} output steps")
    assert worst <= 2.0         # measured 1.70


@pytest.mark.parametrize("pool", [False, True], ids=["roi_align", "roi_pool"])
def test_a_list_of_boxes_per_image(pool, tmp_path):
    """boxes as a list of N [K_i, 4] tensors (one per image), as torchvision
    joins them: torch's values (roi_pool's bytes; roi_align within 4e-6)."""
    class PerImage(nn.Module):
        def forward(self, x, b, c):
            return tv.roi_pool(x, [b, c], (2, 3), 0.5) if pool else tv.roi_align(x, [b, c], (2, 3), 0.5, 2, True)

    def feed(seed):
        g = torch.Generator().manual_seed(seed)
        lo, lo2 = torch.rand(3, 2, generator=g) * 16 - 2, torch.rand(2, 2, generator=g) * 16 - 2
        return [torch.randn(2, 3, 8, 8, generator=g), torch.cat([lo, lo + torch.rand(3, 2, generator=g) * 10], 1),
                torch.cat([lo2, lo2 + torch.rand(2, 2, generator=g) * 10], 1)]

    model = PerImage()
    res = compile_model(model, feed(0), [feed(i) for i in range(4)])
    for f in [feed(9 + i) for i in range(3)]:
        got, want = _run(res, f, tmp_path), model(*[t.double() for t in f]).numpy()
        assert got.shape == (5, 3, 2, 3)
        if pool:
            assert np.array_equal(got, model(*f).numpy())
        else:
            assert np.abs(got - want).max() <= 4e-6 * float(f[0].abs().max())


# ---- torchvision.ops.ps_roi_align (ptec.capture_torchvision._ps_roi_align) ----

class PsModel(nn.Module):
    def __init__(self, size, scale, ratio):
        super().__init__()
        self.args = (size, scale, ratio)

    def forward(self, x, boxes):
        return tv.ps_roi_align(x, boxes, *self.args)


def _ps_feeds(n, c, count, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        lo = torch.rand(5, 2, generator=g) * 20 - 4
        # sizes from -0.5 to 11.5: reversed and tiny boxes too (torchvision clamps none of them)
        b = torch.cat([torch.randint(0, n, (5, 1), generator=g).float(), lo,
                       lo + torch.rand(5, 2, generator=g) * 12 - 0.5], 1)
        out.append([torch.randn(n, c, 9, 10, generator=g), b])
    return out


PS_CASES = [(1, 8, 2, 0.5, 2), (2, 12, (2, 3), 1.0, 1), (1, 18, 3, 0.25, 3)]


@pytest.mark.parametrize("case", PS_CASES, ids=[str(c) for c in PS_CASES])
def test_ps_roi_align_inputs_in_fp32(case, tmp_path):
    n, c, size, scale, ratio = case
    model = PsModel(size, scale, ratio)
    calibration = _ps_feeds(n, c, 4, 0)
    res = compile_model(model, calibration[0], calibration)
    for feed in _ps_feeds(n, c, 3, 9):
        got, want = _run(res, feed, tmp_path), model(*[t.double() for t in feed]).numpy()
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 4e-6 * float(feed[0].abs().max()), np.abs(got - want).max()


class PsPoolModel(nn.Module):
    def __init__(self, size, scale):
        super().__init__()
        self.args = (size, scale)

    def forward(self, x, boxes):
        return tv.ps_roi_pool(x, boxes, *self.args)


@pytest.mark.parametrize("case", PS_CASES, ids=[str(c) for c in PS_CASES])
def test_ps_roi_pool_inputs_in_fp32(case, tmp_path):
    """torchvision's ps_roi_pool: integer windows clipped to [0, size - 1]
    (its kernel never reads the last row or column), the window's mean."""
    n, c, size, scale, _ = case
    model = PsPoolModel(size, scale)
    calibration = _ps_feeds(n, c, 4, 0)
    res = compile_model(model, calibration[0], calibration)
    for feed in _ps_feeds(n, c, 3, 9):
        feed[1][0, 1:] = torch.tensor([5.0, 7.0, 19.0, 17.0])     # a window reaching the last row and column
        got, want = _run(res, feed, tmp_path), model(*[t.double() for t in feed]).numpy()
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 4e-6 * float(feed[0].abs().max()), np.abs(got - want).max()
