"""Narrow means, short sums and narrow clamps on int8 grids of their own
(ptec.exact_sums.narrow_sums_as_linear, ptec.narrow_clamps), issue #15.

Before, a mean passed its input's grid through (an anomaly score
((x - r) ** 2).mean(-1) had a handful of codes), a sum of fewer than 16
values was the mean on its input's grid times the count (std, norms,
pairwise distances, a masked mean pool's sum), and a clamp kept its
input's wide grid. Oracle: torch eager on the float inputs (the clamp of
a product: torch on the int8 inputs the program holds, whose rounding is
not the clamp's), on the host runtime's outputs, in steps of the range
torch's outputs span / 255, on inputs whose outputs vary."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program


def _worst_steps(model, feeds, tmp_path):
    """Worst error over the output in output steps (torch's range / 255),
    calibrated on the feeds it is tested on."""
    model = model.eval()
    with torch.no_grad():
        wants = [model(*f).double().numpy() for f in feeds]
    res = compile_model(model, feeds[0], feeds)
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


def _feeds(*shapes, n=24, seed=1, lengths=None, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        f = [torch.randn(s, generator=g) * scale for s in shapes]
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


class _Fn(nn.Module):
    def __init__(self, fn, linear=0):
        super().__init__()
        torch.manual_seed(0)
        self.fn = fn
        self.lin = nn.Linear(16, linear) if linear else None

    def forward(self, *a):
        return self.fn(self.lin(a[0]) if self.lin is not None else a[0], *a[1:])


class _MaskPool(nn.Module):
    def forward(self, h, lengths):
        mask = (torch.arange(h.shape[1])[None, :] < lengths[:, None]).float()
        return (h * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)


# name: (model, feeds, bound); the measured figures before -> after in the comments. What is left is
# the rounding of the reduced values on their own grids (x - r and its squares, the squared differences)
CASES = {
    "((x - r) ** 2).mean(-1)": (lambda: _AE(lambda d: (d ** 2).mean(-1)), lambda: _feeds((4, 64)), 5.0),  # 13.65 -> 4.59
    "((x - r) ** 2).mean(-1, keepdim)": (lambda: _AE(lambda d: (d ** 2).mean(-1, keepdim=True)),
                                         lambda: _feeds((4, 64)), 5.0),                                   # 13.65 -> 4.59
    "masked mean pool T=10": (_MaskPool, lambda: _feeds((3, 10, 16), lengths=10), 3.0),                 # 11.11 -> 2.83
    "x.std(-1) over 5": (lambda: _Fn(lambda x: x.std(-1)), lambda: _feeds((2, 3, 4, 5), seed=3, n=32), 6.5),  # 11.56 -> 6.19
    "linear(x).std(-1) over 6": (lambda: _Fn(lambda v: v.std(-1), 6), lambda: _feeds((4, 16)), 3.0),    # 23.85 -> 2.47
    "F.pairwise_distance over 8": (lambda: _Fn(F.pairwise_distance), lambda: _feeds((4, 8), (4, 8)), 3.0),  # 5.32 -> 2.85
    "torch.norm(x, dim=-1) over 8": (lambda: _Fn(lambda x: torch.norm(x, dim=-1)), lambda: _feeds((4, 8)), 2.5),  # 3.92 -> 2.34
    "hardtanh(x, -0.3, 0.7) of an input": (lambda: _Fn(lambda x: F.hardtanh(x, -0.3, 0.7)),
                                           lambda: _feeds((8, 64), scale=1.3), 0.6),                     # 5.19 -> 0.50
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_narrow_reductions_and_clamps_follow_torch(name, tmp_path):
    model, feeds, bound = CASES[name]
    worst, _ = _worst_steps(model(), feeds(), tmp_path)
    assert worst <= bound, f"{name}: {worst:.2f} output steps"


class _ClampOfProduct(nn.Module):
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
def test_a_narrow_clamp_of_a_product(name, tmp_path):
    """The product (over about +-36) takes the clamp's grid and saturates at
    it. Oracle: torch on the int8 inputs the program holds (their rounding
    is not the clamp's), within one rounding of the program's output grid."""
    model = _ClampOfProduct(CLAMPS[name]).eval()
    feeds = _feeds((4, 64), (4, 64), scale=2.0)
    res = compile_model(model, feeds[0], feeds)
    prog = parse_program(res.data)
    qps = [res.graph.node(i).qparams for i in res.graph.inputs]

    def held(f):
        return [torch.fake_quantize_per_tensor_affine(t, float(s), int(z), -128, 127) for t, (s, z) in zip(f, qps)]
    with torch.no_grad():
        wants = [model(*held(f)).double().numpy() for f in feeds]
    assert np.ptp(np.concatenate([w.ravel() for w in wants])) >= 0.5
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert step <= 6.0 / 250                  # a grid fitted to the clamp's range, not the product's
    worst = max(float(np.abs(np.asarray(host_runtime.run(prog, res.data, [t.numpy() for t in f],
                                                       workdir=str(tmp_path))[0], np.float64) - w).max())
                for f, w in zip(feeds, wants)) / step
    assert worst <= 1.0, f"{name}: {worst:.2f} output steps from torch on the held inputs"


class _ClampAndMean(nn.Module):
    def forward(self, x):
        return F.hardtanh(x, -0.3, 0.7), x.mean(-1)


def test_an_input_read_by_others_keeps_its_grid():
    """A clamp's producer read by anything else keeps its own grid."""
    feeds = _feeds((8, 64), scale=1.3)
    res = compile_model(_ClampAndMean().eval(), feeds[0], feeds)
    clamp = next(n for n in res.graph.nodes if n.op == "clamp")
    x = res.graph.node(clamp.inputs[0])
    assert x.qparams[0] > 8.0 / 255


def test_wide_means_and_global_pools_keep_their_kernels():
    """A mean whose range is not narrow keeps its pool on its input's grid,
    the global average pool of a conv's map always (the zoo's programs)."""
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
    res = compile_model(_Fn(lambda x: x.mean(1)).eval(), feeds[0][:0] or [torch.randn(4, 5, 16)],
                        _feeds((4, 5, 16)))
    assert any(n.op == "mean" for n in res.graph.nodes)


def test_the_anomaly_score_with_a16(tmp_path):
    """--a16: the mean's linear takes its int16 kernel too (measured 4.45 output steps)."""
    model = _AE(lambda d: (d ** 2).mean(-1)).eval()
    feeds = _feeds((4, 64))
    with torch.no_grad():
        wants = [model(*f).double().numpy() for f in feeds]
    res = compile_model(model, feeds[0], feeds, a16=True)
    prog = parse_program(res.data)
    step = float(np.ptp(np.concatenate([w.ravel() for w in wants]))) / 255
    worst = max(float(np.abs(np.asarray(host_runtime.run(prog, res.data, [t.numpy() for t in f],
                                                       workdir=str(tmp_path))[0], np.float64) - w).max())
                for f, w in zip(feeds, wants)) / step
    assert worst <= 5.0, f"{worst:.2f} output steps"
