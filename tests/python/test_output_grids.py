"""A mean, sum or clamp whose output is much narrower than its input gets an
int8 grid of its own (quantize.own_grid, exact_sums).

On its input's grid (the pass-through rule) an autoencoder's anomaly score
((x - r) ** 2).mean(-1) had 13 distinct values and was 11.6 output steps
from torch; x.var / x.std 7.5; a masked mean pooling (h * mask).sum(1) /
mask.sum(1) over T = 10 was 9-10 steps off for length-1 rows (the short
sum kept as mean x count, the mean on h's grid); hardtanh(x, -0.3, 0.7) of
a +-4 value 3.7-6 steps. Oracle: torch eager on the float inputs, on the
host runtime's outputs, in steps of the range torch's outputs span / 255,
on inputs whose outputs vary."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program


def _worst_steps(model, feeds, tmp_path, **kw):
    """Worst error over all outputs in output steps (torch's range / 255),
    calibrated on the feeds it is tested on (no clipping)."""
    model = model.eval()
    with torch.no_grad():
        wants = [model(*f).double().numpy() for f in feeds]
    res = compile_model(model, feeds[0], feeds, **kw)
    prog = parse_program(res.data)
    allw = np.concatenate([w.ravel() for w in wants])
    step = float(np.ptp(allw)) / 255
    assert np.unique(allw.round(6)).size > 64, "outputs must vary"
    worst = 0.0
    for f, want in zip(feeds, wants):
        got = np.asarray(host_runtime.run(prog, res.data, [t.numpy() for t in f], workdir=str(tmp_path))[0],
                         np.float64)
        assert got.shape == want.shape
        worst = max(worst, float(np.abs(got - want).max()) / step)
    return worst, res


def _feeds(*shapes, n=24, seed=1, lengths=None):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        f = [torch.randn(s, generator=g) for s in shapes]
        if lengths is not None:
            f.append(torch.randint(1, lengths + 1, (shapes[0][0],), generator=g))
        out.append(f)
    return out


class _AE(nn.Module):
    """An anomaly score: the mean squared reconstruction error per row."""

    def __init__(self, reduce):
        super().__init__()
        torch.manual_seed(0)
        self.enc = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 8), nn.ReLU())
        self.dec = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 64))
        self.reduce = reduce

    def forward(self, x):
        return self.reduce(x - self.dec(self.enc(x)))


SCORES = {
    # (reduce, bound): measured on the input's grid before -> a grid of its own now. What is left is
    # the rounding of x - r and of its squares on their own grids (the mean of 64 of them)
    "((x - r) ** 2).mean(-1)": (lambda d: (d ** 2).mean(-1), 5.0),                          # 13.65 -> 4.59
    "((x - r) ** 2).mean(-1, keepdim=True)": (lambda d: (d ** 2).mean(-1, keepdim=True), 5.0),  # 13.65 -> 4.59
    "(x - r).abs().mean(-1)": (lambda d: d.abs().mean(-1), 4.3),                            # 7.84 -> 3.88
}


@pytest.mark.parametrize("name", sorted(SCORES))
def test_a_narrow_mean_has_a_grid_of_its_own(name, tmp_path):
    reduce, bound = SCORES[name]
    worst, res = _worst_steps(_AE(reduce), _feeds((4, 64)), tmp_path)
    assert worst <= bound, f"{name}: {worst:.2f} output steps"


@pytest.mark.parametrize("a16", [False, True])
def test_the_anomaly_score_with_a16(a16, tmp_path):
    worst, res = _worst_steps(_AE(lambda d: (d ** 2).mean(-1)), _feeds((4, 64)), tmp_path, a16=a16)
    out = res.graph.node(res.graph.outputs[0])
    assert tuple(out.qparams) != tuple(res.graph.node(out.inputs[0]).qparams)
    assert worst <= 5.0, f"{worst:.2f} output steps"                       # 13.65 before, 4.59 now (both)


class _Reduce(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


SHORT = {
    # a model input reduced over a few values: the short sum inside var / std was the mean on x's
    # grid times the count (exact_sums.MIN_TERMS was 16); measured before -> now
    "x.std(-1, keepdim=True) of [2, 3, 4, 5]": (lambda x: x.std(-1, keepdim=True), (2, 3, 4, 5), 6.6),  # 11.56 -> 6.19
    "x.var(-1) of [2, 3, 4, 5]": (lambda x: x.var(-1), (2, 3, 4, 5), 3.6),                              # 4.76 -> 3.34
    "x.sum(-1) of [8, 6]": (lambda x: x.sum(-1), (8, 6), 2.0),                                          # 3.19 -> 1.70
}


@pytest.mark.parametrize("name", sorted(SHORT))
def test_short_reductions_of_an_input(name, tmp_path):
    fn, shape, bound = SHORT[name]
    worst, _ = _worst_steps(_Reduce(fn), _feeds(shape, n=32, seed=3), tmp_path)
    assert worst <= bound, f"{name}: {worst:.2f} output steps"


class _MaskPool(nn.Module):
    def __init__(self, dim_last=False):
        super().__init__()
        self.dim_last = dim_last

    def forward(self, h, lengths):
        mask = (torch.arange(h.shape[1])[None, :] < lengths[:, None]).float()
        return (h * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)


@pytest.mark.parametrize("t", [4, 10, 15])
def test_masked_mean_pooling_of_short_sequences(t, tmp_path):
    worst, _ = _worst_steps(_MaskPool(), _feeds((3, t, 16), lengths=t), tmp_path)
    # measured before -> now: T=4 4.48 -> 0.51, T=10 11.11 -> 2.72, T=15 16.04 -> 0.00 (the sum of the
    # fp32 masked product is now one exact sum, which stays fp32 after its fp32 producer)
    assert worst <= 3.0, f"T={t}: {worst:.2f} output steps"


class _HardTanhOfInput(nn.Module):
    def forward(self, x):
        return F.hardtanh(x, -0.3, 0.7), x.mean(-1)


def test_hardtanh_of_a_wide_input(tmp_path):
    """The probe's form: the input's grid is fixed (+-4, read by the mean
    too), and the values the clamp passes are exact codes of it: the clamp
    stays on that grid (a finer one would round them again), and its error
    is the input's own rounding alone."""
    model = _HardTanhOfInput().eval()
    feeds = [[x * 1.3] for (x,) in _feeds((8, 64))]
    res = compile_model(model, feeds[0], feeds)
    prog = parse_program(res.data)
    with torch.no_grad():
        wants = [model(*f)[0].double().numpy() for f in feeds]
    step = float(np.ptp(np.concatenate([w.ravel() for w in wants]))) / 255
    s_in = res.graph.node(res.graph.inputs[0]).qparams[0]
    worst = max(float(np.abs(np.asarray(host_runtime.run(prog, res.data, [f[0].numpy()],
                                                       workdir=str(tmp_path))[0], np.float64) - w).max())
                for f, w in zip(feeds, wants)) / step
    clamp = next(n for n in res.graph.nodes if n.op == "clamp")
    assert tuple(clamp.qparams) == tuple(res.graph.node(clamp.inputs[0]).qparams)
    # the input's own rounding, s_in / 2 (and a hair)
    assert worst <= 0.5 * s_in / step + 0.05, f"{worst:.2f} output steps (input's rounding {0.5 * s_in / step:.2f})"


class _ClampOfProduct(nn.Module):
    """A clamp read alone from a mul (free qparams): the mul's output takes
    the clamp's grid and saturates at it."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y):
        return self.fn(x * y)


CLAMPS = {
    "hardtanh(x * y, -0.3, 0.7)": lambda v: F.hardtanh(v, -0.3, 0.7),
    "relu6(x * y)": F.relu6,
    "(x * y).clamp(-0.5, 0.5)": lambda v: v.clamp(-0.5, 0.5),
}


@pytest.mark.parametrize("name", sorted(CLAMPS))
def test_a_narrow_clamp_of_a_free_producer(name, tmp_path):
    """Oracle: torch on the int8 inputs the program holds (their rounding
    is not the clamp's): within one rounding of the program's own output
    grid. On the product's +-36 grid (0.24 a step) hardtanh was 0.22 off,
    56 steps of the 1/255 grid it has now (0.002 off)."""
    model = _ClampOfProduct(CLAMPS[name]).eval()
    feeds = [[t * 2.0 for t in f] for f in _feeds((4, 64), (4, 64))]     # x * y over about +-36
    res = compile_model(model, feeds[0], feeds)
    prog = parse_program(res.data)
    qps = [res.graph.node(i).qparams for i in res.graph.inputs]

    def held(f):
        return [torch.fake_quantize_per_tensor_affine(t, float(s), int(z), -128, 127) for t, (s, z) in zip(f, qps)]
    with torch.no_grad():
        wants = [model(*held(f)).double().numpy() for f in feeds]
    assert np.ptp(np.concatenate([w.ravel() for w in wants])) >= 0.5
    step = res.graph.node(res.graph.outputs[0]).qparams[0]                  # the program's own output step
    worst = max(float(np.abs(np.asarray(host_runtime.run(prog, res.data, [t.numpy() for t in f],
                                                       workdir=str(tmp_path))[0], np.float64) - w).max())
                for f, w in zip(feeds, wants)) / step
    assert step <= 6.0 / 250                  # a grid fitted to the clamp's range, not the product's
    # one rounding, and at a bound not on the grid (0 is exact, so -0.3 is -0.298 on [-0.3, 0.7]'s
    # grid) up to half a step more; measured 0.50 / 0.50 / 0.62 (clamp, hardtanh, relu6)
    assert worst <= 1.0, f"{name}: {worst:.2f} output steps from torch on the held inputs"


def test_global_average_pool_keeps_its_input_grid():
    """x.mean((2, 3)) of a conv's map before a classifier: CMSIS-NN's avg
    pool on the input's grid, whatever its range (the zoo's programs)."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.c, self.l = nn.Conv2d(3, 8, 3), nn.Linear(8, 4)

        def forward(self, x):
            return self.l(torch.relu(self.c(x)).mean((2, 3)))
    feeds = _feeds((1, 3, 12, 12), n=8)
    res = compile_model(Net().eval(), feeds[0], feeds)
    mean = next(n for n in res.graph.nodes if n.op == "mean")
    assert tuple(mean.qparams) == tuple(res.graph.node(mean.inputs[0]).qparams)
    assert b"quantized_avg_pool2d" in res.data
