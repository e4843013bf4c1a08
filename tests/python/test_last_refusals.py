"""Two calls ptec refused by choice, now run:

* torchvision.ops.deform_conv2d with a weight (and bias) computed in the
  program (capture_torchvision._DeformConvComputed): the sampled columns
  times the weight viewed [groups, Cout / groups, Cin / groups * K] by one
  fp32 matmul. Oracle: torchvision's deform_conv2d in float64 on the
  program's inputs; weight and bias program inputs, every step fp32:
  within 2e-6 of the largest output (measured 3.9e-7 to 5.2e-7), weight
  groups 1 to 3, offset groups 1 to 3, masked or not, a constant bias too. A dynamic-filter
  network (weight = linear(x.mean).view) against torch float: within 4
  output steps (measured 3.33: its weight and bias are the linears' int8
  values, a step of their grid each, where a constant weight is fp32; the
  constant-weight DCN pattern measures 2.55).
* x.index_put((i, j, ...), v, accumulate=True) with several index tensors
  computed in the program (capture_index_put_flat): one int64 linear index
  over the indexed dims, then the single-index sum. Oracle: torch's
  index_put; within 1.5 output steps (the sum's int8 grid; measured 0.78
  to 1.39, indices and values broadcast too), torch's
  negative positions wrapped, an index torch raises on failing the run.
  A plain write by several computed indices stays refused in one line
  (positions may repeat, as the single-index path refuses)."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import cli_refusal
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")


def _run(res, feed):
    return np.asarray(host_runtime.run(parse_program(res.data), res.data, [t.numpy() for t in feed])[0], np.float64)


def _step(res):
    return res.graph.node(res.graph.outputs[0]).qparams[0]


class WeightIn(nn.Module):
    def __init__(self, masked, biased):
        super().__init__()
        self.masked, self.biased = masked, biased

    def forward(self, x, offset, weight, mask, bias):
        return tv.deform_conv2d(x, offset, weight, bias if self.biased else None, padding=1,
                                mask=mask if self.masked else None)


# (Cin, Cout, weight groups, offset groups, masked, biased)
CASES = [(4, 6, 2, 2, True, True), (4, 4, 1, 1, False, False), (6, 6, 3, 3, True, False), (6, 4, 2, 3, False, True)]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_deform_conv_by_a_weight_the_program_has(case):
    cin, cout, groups, og, masked, biased = case
    g = torch.Generator().manual_seed(0)
    feeds = [[torch.randn(2, cin, 7, 6, generator=g), torch.randn(2, 18 * og, 7, 6, generator=g) * 2.5,
              torch.randn(cout, cin // groups, 3, 3, generator=g), torch.rand(2, 9 * og, 7, 6, generator=g),
              torch.randn(cout, generator=g)] for _ in range(4)]
    res = compile_model(WeightIn(masked, biased), feeds[0], feeds)
    assert any("bmm" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    worst = 0.0
    for feed in feeds:
        x, off, w, mask, b = (t.double() for t in feed)
        want = tv.deform_conv2d(x, off, w, b if biased else None, padding=1, mask=mask if masked else None).numpy()
        got = _run(res, feed)
        assert got.shape == want.shape and np.std(want) > 0.1
        worst = max(worst, float(np.abs(got - want).max() / np.abs(want).max()))
    print(f"{case}: {worst:.2e} of the largest output")
    assert worst <= 2e-6


class DynamicFilter(nn.Module):
    """A dynamic-filter network: the deformable conv's weight and bias made from the input's channel means."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.offsets = nn.Conv2d(4, 36, 3, padding=1)
        self.weights = nn.Linear(4, 6 * 2 * 9)
        self.biases = nn.Linear(4, 6)

    def forward(self, x):
        z = x.mean((2, 3))[0]
        return tv.deform_conv2d(x, self.offsets(x), self.weights(z).view(6, 2, 3, 3), self.biases(z), padding=1)


def test_a_dynamic_filter_network():
    model = DynamicFilter().eval()
    g = torch.Generator().manual_seed(1)
    feeds = [[torch.randn(1, 4, 8, 8, generator=g)] for _ in range(12)]
    res = compile_model(model, feeds[0], feeds)
    step, worst = _step(res), 0.0
    with torch.no_grad():
        for feed in feeds[:4]:
            want = model(feed[0]).numpy()
            assert float(np.ptp(want)) >= 20 * step
            worst = max(worst, float(np.abs(_run(res, feed) - want).max() / step))
    print(f"dynamic filter: {worst:.2f} output steps")
    assert worst <= 4.0


class Arith(nn.Module):
    """Index tensors computed by int64 arithmetic on inputs: negative positions among them."""

    def forward(self, x, p, q, v):
        return x.index_put((p % 4 - 4, q * 2 - 3), v * 2, accumulate=True)


class Argmaxes(nn.Module):
    def forward(self, x, a, b, v):
        y = x.clone()
        y.index_put_((a.argmax(1), b.argmax(1)), v, accumulate=True)       # in place, rows of the last dim
        return y


class Three(nn.Module):
    def forward(self, x, a, b, c, v):
        return x.index_put((a.argmax(1), b.argmax(1), c.argmax(1)), v, accumulate=True)


class Broadcast(nn.Module):
    def forward(self, x, a, b, v):   # indices [3, 1] and [1, 2] broadcast, a value [1] broadcast to [3, 2, 2]
        return x.index_put((a.argmax(1).view(-1, 1), b.argmax(1).view(1, -1)), v[:1], accumulate=True)


def _picks(g, k, n):
    """[k, n] values whose argmax is clear by 4 (int8 rounding cannot move it)."""
    return torch.randn(k, n, generator=g) + 4 * torch.nn.functional.one_hot(torch.randint(0, n, (k,), generator=g), n)


def _feeds(model):
    g = torch.Generator().manual_seed(0)
    if isinstance(model, Arith):
        # every position as often as another, repeats included (p % 4 - 4 wraps to p % 4)
        return [[torch.randn(4, 5, generator=g), torch.randint(0, 9, (6,), generator=g),
                 torch.randint(0, 4, (6,), generator=g), torch.randn(6, generator=g)] for _ in range(12)]
    if isinstance(model, Argmaxes):
        return [[torch.randn(4, 5, 3, generator=g), _picks(g, 7, 4), _picks(g, 7, 5), torch.randn(7, 3, generator=g)]
                for _ in range(12)]
    if isinstance(model, Broadcast):
        return [[torch.randn(4, 5, 2, generator=g), _picks(g, 3, 4), _picks(g, 2, 5), torch.randn(2, generator=g)]
                for _ in range(12)]
    return [[torch.randn(3, 4, 5, generator=g), _picks(g, 8, 3), _picks(g, 8, 4), _picks(g, 8, 5),
             torch.randn(8, generator=g)] for _ in range(12)]


@pytest.mark.parametrize("model", [Arith(), Argmaxes(), Three(), Broadcast()],
                         ids=["int64 arithmetic", "argmaxes", "three", "broadcast"])
def test_index_put_by_several_computed_indices_accumulates(model):
    feeds = _feeds(model)
    res = compile_model(model, feeds[0], feeds)
    step, worst = _step(res), 0.0
    for feed in feeds[:6]:
        want = model(*feed).numpy()
        got = _run(res, feed)
        assert got.shape == want.shape
        worst = max(worst, float(np.abs(got - want).max() / step))
    print(f"{type(model).__name__}: {worst:.2f} output steps")
    assert worst <= 1.5


def test_the_linear_index_is_torchs_position():
    """One write of a large value: exactly where torch puts it (the int64
    linear index i * 5 + j, a negative j from the end), and nowhere else."""
    model = Arith()
    feeds = _feeds(model)
    res = compile_model(model, feeds[0], feeds)
    x = torch.zeros(4, 5)
    for p, q in ((1, 0), (6, 3), (8, 1), (3, 2)):
        feed = [x, torch.tensor([p] * 6), torch.tensor([q] * 6), torch.full((6,), 0.25)]
        want = model(*feed).numpy()
        got = _run(res, feed)
        assert np.unravel_index(np.abs(got).argmax(), got.shape) == np.unravel_index(np.abs(want).argmax(),
                                                                                     want.shape), (p, q)
        assert np.abs(got - want).max() <= 1.5 * _step(res)


def test_an_index_torch_raises_on_fails_the_run():
    model = Arith()
    feeds = _feeds(model)
    res = compile_model(model, feeds[0], feeds)
    bad = [feeds[0][0], feeds[0][1], torch.tensor([0, 1, 2, 5, 0, 1]), feeds[0][3]]    # q * 2 - 3 = 7 >= 5
    with pytest.raises(IndexError):
        model(*bad)
    with pytest.raises(Exception):
        _run(res, bad)


def test_a_plain_write_by_several_computed_indices_is_refused(tmp_path):
    line = cli_refusal(tmp_path, """import torch
class M(torch.nn.Module):
    def forward(self, x, a):
        return x.index_put((a[:, :4].argmax(1), a[:, 4:].argmax(1)), a[:, 0])
def model():
    return M(), (torch.randn(4, 5), torch.randn(6, 9))
""")
    assert "index_put" in line and "accumulate=True" in line, line


class ConstantBias(nn.Module):
    """A computed weight beside the module's own (constant) bias."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.linspace(-2.0, 2.0, 4))

    def forward(self, x, offset, weight):
        return tv.deform_conv2d(x, offset, weight, self.bias, padding=1)


def test_a_computed_weight_with_a_constant_bias():
    g = torch.Generator().manual_seed(2)
    feeds = [[torch.randn(1, 3, 6, 6, generator=g), torch.randn(1, 18, 6, 6, generator=g) * 2.0,
              torch.randn(4, 3, 3, 3, generator=g)] for _ in range(3)]
    model = ConstantBias().eval()
    res = compile_model(model, feeds[0], feeds)
    worst = 0.0
    for feed in feeds:
        x, off, w = (t.double() for t in feed)
        want = tv.deform_conv2d(x, off, w, model.bias.detach().double(), padding=1).numpy()
        worst = max(worst, float(np.abs(_run(res, feed) - want).max() / np.abs(want).max()))
    print(f"constant bias: {worst:.2e} of the largest output")
    assert worst <= 2e-6
