"""A probability vector's expectation and a spatial transformer's grid,
against torch float (issue 15), in OUTPUT quantization steps (the span of
torch's outputs over the feeds / 255) on the host runtime, over several
seeds: each model is compiled on 16 feeds and run on them.

1. Soft-argmax, `p = softmax(h * beta, -1); (p * grid).sum(-1)` and its
   2-D keypoint forms (x and y grids over the flattened heatmap, the
   marginals' sums, p @ coords): on the softmax's int8 1/256 grid every
   probability's rounding was weighted and summed (ptec.soft_argmax: the
   softmax, its products and sums, and beta's scale in fp32).
2. A spatial transformer, `theta = loc(x).view(-1, 2, 3); grid =
   F.affine_grid(theta, x.size()); F.grid_sample(x, grid)`: theta and the
   grid each sat on an int8 grid, moving every sampled position
   (capture_grid: affine_grid and theta's linear layer in fp32).

Oracle: the PyTorch module itself, in float."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec.compiler import compile_model

from model_checks import steps_over_feeds


def _feeds(shape, n, seed):
    g = torch.Generator().manual_seed(seed)
    return [[torch.randn(*shape, generator=g)] for _ in range(n)]


def _worst(model, feeds):
    """(worst |ptec - torch| in output steps over the feeds, the compile)."""
    model = model.eval()
    res = compile_model(model, feeds[0], feeds)
    return steps_over_feeds(model, res, feeds)[0], res


class Line(nn.Module):
    """1-D soft-argmax of a heatmap over linspace(-1, 1, n)."""

    def __init__(self, beta, n=32):
        super().__init__()
        self.beta = beta
        self.register_buffer("grid", torch.linspace(-1, 1, n))

    def forward(self, h):
        p = F.softmax(h.flatten(1) * self.beta, -1)
        return (p * self.grid).sum(-1)


class Keypoints(nn.Module):
    """2-D keypoints: x and y grids over each flattened heatmap, stacked."""

    def __init__(self, beta, h=8, w=10):
        super().__init__()
        self.beta = beta
        gy, gx = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
        self.register_buffer("gx", gx.reshape(-1))
        self.register_buffer("gy", gy.reshape(-1))

    def forward(self, hm):
        p = F.softmax(hm.flatten(2) * self.beta, -1)
        return torch.stack([(p * self.gx).sum(-1), (p * self.gy).sum(-1)], -1)


class Marginals(nn.Module):
    """2-D keypoints from p's marginals: p.sum(H) by the x grid, p.sum(W) by the y grid."""

    def __init__(self, beta, h=8, w=10):
        super().__init__()
        self.beta = beta
        self.register_buffer("gx", torch.linspace(-1, 1, w))
        self.register_buffer("gy", torch.linspace(-1, 1, h))

    def forward(self, hm):
        n, k, h, w = hm.shape
        p = F.softmax(hm.reshape(n, k, -1) * self.beta, -1).reshape(n, k, h, w)
        return torch.stack([(p.sum(2) * self.gx).sum(-1), (p.sum(3) * self.gy).sum(-1)], -1)


class Coords(nn.Module):
    """p @ coords, coords the constant [h * w, 2] of (x, y); the logits divided by a temperature."""

    def __init__(self, beta, h=8, w=10):
        super().__init__()
        self.t = 1.0 / beta
        gy, gx = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
        self.register_buffer("coords", torch.stack([gx.reshape(-1), gy.reshape(-1)], -1))

    def forward(self, hm):
        return torch.softmax(hm.flatten(2) / self.t, dim=-1) @ self.coords


FORMS = {"line": (Line, (2, 1, 32)), "keypoints": (Keypoints, (1, 4, 8, 10)),
         "marginals": (Marginals, (1, 4, 8, 10)), "coords": (Coords, (1, 4, 8, 10))}


@pytest.mark.parametrize("beta", [1.0, 5.0, 20.0])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_soft_argmax_of_a_heatmap_input(form, beta):
    """Worst over seeds 0..3 before (betas 1 / 5 / 20): line 4.26 / 4.06 / 16.45, keypoints
    12.18 / 5.59 / 16.29, marginals 15.18 / 7.87 / 18.29, coords 14.47 / - / 13.0 output steps;
    after: 0.0 to 0.50 (the stack's int8 output grid)."""
    cls, shape = FORMS[form]
    for seed in (0, 1, 2):
        worst, res = _worst(cls(beta), _feeds(shape, 16, seed))
        assert worst <= 1.0, (form, beta, seed, worst)
    assert [n.op for n in res.graph.nodes if n.op == "softmax" and n.attrs.get("fp32")] == ["softmax"]


class Heatmap(nn.Module):
    """A conv's heatmap, soft-argmax over its flattened positions (beta 1)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv1d(2, 1, 3, padding=1)
        self.register_buffer("grid", torch.linspace(-1, 1, 32))

    def forward(self, x):
        p = F.softmax(self.conv(x).flatten(1), -1)
        return (p * self.grid).sum(-1)


def test_soft_argmax_of_a_conv_heatmap():
    """Before 8.61 to 28.46 output steps over seeds 0..3, after 1.77 to 2.83 (the conv's own
    int8 rounding; beta 1 is under soft_argmax_logits.BETA: the conv stays int8)."""
    for seed in (0, 1, 2, 3):
        worst, res = _worst(Heatmap(), _feeds((1, 2, 32), 16, seed))
        assert worst <= 3.5, (seed, worst)
        assert not any(n.op == "conv2d" and n.attrs.get("fp32") for n in res.graph.nodes)


class SharpKeypoints(nn.Module):
    """A keypoint head: a Conv2d's two 8 x 8 heatmaps, softmax(beta * h) over each, x and y by the grids."""

    def __init__(self, beta, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.conv = nn.Conv2d(3, 2, 3, padding=1)
        self.beta = beta
        self.register_buffer("xs", torch.linspace(-1, 1, 8).repeat(8))
        self.register_buffer("ys", torch.linspace(-1, 1, 8).repeat_interleave(8))

    def forward(self, x):
        p = F.softmax(self.beta * self.conv(x).flatten(2), -1)
        return torch.stack([(p * self.xs).sum(-1), (p * self.ys).sum(-1)], -1)


# before -> after, worst over seeds 0..2 (beta times the conv's int8 rounding in the logits)
@pytest.mark.parametrize("beta", [4.0, 10.0, 30.0, 100.0])     # 4.85, 6.54, 19.10, 28.83 -> 0.50 each
def test_a_sharp_soft_argmax_of_a_conv_follows_torch(beta):
    """From beta 4 the conv is copied in fp32 for the logits (ptec.soft_argmax_logits)."""
    for seed in (0, 1, 2):
        worst, res = _worst(SharpKeypoints(beta, seed), _feeds((1, 3, 8, 8), 24, seed))
        assert worst <= 0.6, (beta, seed, worst)
        assert any(n.op == "conv2d" and n.attrs.get("fp32") for n in res.graph.nodes)


def test_a_mild_beta_keeps_the_conv_int8():
    """Under soft_argmax_logits.BETA (beta 2) the conv's rounding moves the expectation by a step or two: the
    conv stays on its int8 kernel, only the scale, softmax and sums are fp32."""
    feeds = _feeds((1, 3, 8, 8), 8, 0)
    res = compile_model(SharpKeypoints(2.0, 0).eval(), feeds[0], feeds)
    assert not any(n.op == "conv2d" and n.attrs.get("fp32") for n in res.graph.nodes)
    assert any(n.op == "softmax" and n.attrs.get("fp32") for n in res.graph.nodes)


class Attention(nn.Module):
    """softmax(q k^T) @ v: p weights a computed value, not a constant grid."""

    def forward(self, x):
        return torch.softmax(x @ x.transpose(1, 2), -1) @ x


class Probabilities(nn.Module):
    """A softmax returned, and its expectation: p itself is read on its int8 grid."""

    def __init__(self):
        super().__init__()
        self.register_buffer("grid", torch.linspace(-1, 1, 16))

    def forward(self, x):
        p = F.softmax(x, -1)
        return p, (p * self.grid).sum(-1)


@pytest.mark.parametrize("cls", [Attention, Probabilities])
def test_other_softmaxes_keep_their_int8_kernel(cls):
    feeds = _feeds((1, 4, 16), 8, 0)
    res = compile_model(cls().eval(), feeds[0], feeds)
    assert not [n.name for n in res.graph.nodes if n.attrs.get("fp32")]


class ClassifierHead(nn.Module):
    """An ordinary classifier head on a softmax: a Linear of 3 rows (<=
    soft_argmax.COORDS), with a bias, whose weights are no grid."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Linear(8, 10)
        self.b = nn.Linear(10, 3)

    def forward(self, x):
        return self.b(F.softmax(self.a(x), -1))


class RandomExpectation(nn.Module):
    """(softmax(h) * w).sum(-1), w an arbitrary constant: an expectation,
    but of no coordinate grid; left as it was (module doc)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Linear(8, 10)
        self.register_buffer("w", torch.randn(10))

    def forward(self, x):
        return (F.softmax(self.a(x), -1) * self.w).sum(-1)


def _without_the_pass(compile_it):
    """compile_it() with ptec.soft_argmax's pass turned off (the oracle:
    the program as it was before the pass existed)."""
    from ptec import quantize
    saved = quantize.soft_argmax_in_fp32
    quantize.soft_argmax_in_fp32 = lambda g: []
    try:
        return compile_it()
    finally:
        quantize.soft_argmax_in_fp32 = saved


@pytest.mark.parametrize("cls", [ClassifierHead, RandomExpectation])
def test_a_softmax_read_by_no_grid_is_the_program_it_was(cls):
    """Before the grid check any Linear of <= 4 rows counted as coordinates:
    the head's softmax and linear went fp32 (cortex_m::softmax +
    quantized_linear -> aten::_softmax + aten::linear, 3,672 -> 3,160 B)."""
    feeds = _feeds((2, 8), 8, 1)
    res = compile_model(cls().eval(), feeds[0], feeds)
    plain = _without_the_pass(lambda: compile_model(cls().eval(), feeds[0], feeds))
    assert not [n.name for n in res.graph.nodes if n.attrs.get("fp32")]
    assert res.data == plain.data


def test_a_classifier_head_stays_on_the_npu():
    """On Ethos-U55-128 with int8 io the head's linear stayed on the NPU
    only without the pass's over-reach (2 delegates; 1 before the fix)."""
    from ptec.backends.cortex_m import CortexMBackend
    from ptec.backends.ethos_u.backend import EthosUBackend
    from ptec.backends.portable import PortableBackend
    feeds = _feeds((2, 8), 8, 1)

    def compiled():
        return compile_model(ClassifierHead().eval(), feeds[0], feeds, int8_io=True,
                             backends=[EthosUBackend("ethos-u55-128"), CortexMBackend(), PortableBackend()])
    res, plain = compiled(), _without_the_pass(compiled)
    assert len(res.lowered.delegates) == len(plain.lowered.delegates) == 2
    assert res.data == plain.data


class GridLinear(nn.Module):
    """The x and y grids of a 4 x 5 heatmap as a bias-free nn.Linear's two rows."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 20)
        self.b = nn.Linear(20, 2, bias=False)
        gy, gx = torch.meshgrid(torch.linspace(-1, 1, 4), torch.linspace(-1, 1, 5), indexing="ij")
        with torch.no_grad():
            self.b.weight.copy_(torch.stack([gx.reshape(-1), gy.reshape(-1)]))

    def forward(self, x):
        return self.b(F.softmax(4.0 * self.a(x), -1))


def test_a_linear_of_grid_rows_is_still_taken():
    feeds = _feeds((2, 8), 8, 1)
    res = compile_model(GridLinear().eval(), feeds[0], feeds)
    assert {"softmax", "b"} <= {n.name for n in res.graph.nodes if n.attrs.get("fp32")}


class Stn(nn.Module):
    """A spatial transformer: theta from a linear of the input (near the identity), affine_grid
    of the input's size, grid_sample."""

    def __init__(self, seed, c, h, w, conv=False, mode="bilinear"):
        super().__init__()
        torch.manual_seed(seed)
        self.conv = nn.Conv2d(c, 4, 3, padding=1) if conv else None
        self.fc = nn.Linear((4 if conv else c) * h * w, 6)
        with torch.no_grad():
            self.fc.weight.mul_(0.3)
            self.fc.bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
        self.mode = mode

    def forward(self, x):
        h = x if self.conv is None else torch.relu(self.conv(x))
        theta = self.fc(h.flatten(1)).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, mode=self.mode, align_corners=False)


@pytest.mark.parametrize("shape", [(1, 1, 8, 8), (1, 3, 6, 6)])
def test_spatial_transformer_of_the_input(shape):
    """Before 5.87 to 8.38 output steps over seeds 0..3 (the grid's int8 rounding alone 4.3 to
    6.4, theta's 4.2 to 4.9, emulated); after 0.0: theta's layer reads the float input, the grid
    is its fp32 map, the sampler reads the input."""
    for seed in (0, 1, 2):
        worst, res = _worst(Stn(seed, *shape[1:]), _feeds(shape, 16, seed))
        assert worst <= 0.5, (shape, seed, worst)
    assert "affine_grid (F.affine_grid): aten::linear.out" in res.lowered.fallbacks


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_spatial_transformer_with_a_conv_localizer(mode):
    """theta = fc(relu(conv(x))): the conv stays int8. Before 5.18 to 6.24 output steps over seeds
    0..3, after 0.83 to 1.65."""
    for seed in (0, 1, 2, 3):
        worst, res = _worst(Stn(seed, 1, 8, 8, conv=True, mode=mode), _feeds((1, 1, 8, 8), 16, seed))
        assert worst <= 2.0, (mode, seed, worst)
    assert not res.graph.node("conv").attrs.get("fp32")
