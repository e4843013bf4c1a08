"""Precision of L2-normalise heads (F.normalize after a layer, a cosine-
similarity matrix of two normalised embeddings, contrastive logits with a
temperature) and of the class token read after nn.TransformerEncoderLayer,
against torch float (the oracle) on the host runtime, in int8 OUTPUT steps
(the range of torch's outputs over the test feeds / 255). Test feeds: four
calibration feeds and four fresh ones scaled by 0.7 (inside the calibrated
range; outputs outside torch's calibrated output range are not counted: int8
saturates there by design).

Before (probe 10, int8 F.normalize): 5.65 steps (normalize after a Linear),
7.74 (after a conv's global pool), 15.46 (cosine-similarity matrix), 9.77
(contrastive logits / 0.07). F.normalize now runs in fp32 (and the matmul of
two such unit vectors): ptec.guarded_denominators, UNIT_REASON."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

SEEDS = [0, 1, 2]


def _feeds(specs, n, seed):
    g = torch.Generator().manual_seed(seed)
    return [[torch.randn(*s, generator=g) for s in specs] for _ in range(n)]


def _steps(model, specs, seed, **kw):
    cal = _feeds(specs, 24, 100 + seed)
    fresh = [[t * 0.7 for t in f] for f in _feeds(specs, 4, 900 + seed)]
    test = cal[:4] + fresh
    res = compile_model(model, cal[0], cal, **kw)
    prog = parse_program(res.data)
    got = np.stack([np.asarray(host_runtime.run(prog, res.data, [t.numpy() for t in f])[0], np.float64)
                    for f in test])
    with torch.no_grad():
        want = np.stack([model(*f).numpy().astype(np.float64) for f in test])
        calout = np.stack([model(*f).numpy().astype(np.float64) for f in cal])
    inside = (want >= calout.min()) & (want <= calout.max())
    assert np.ptp(want) > 0 and inside.mean() > 0.8
    return float(np.abs(got - want)[inside].max()) / (float(np.ptp(want)) / 255), res


class NormLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(16, 8)

    def forward(self, x):
        return F.normalize(self.l(x), dim=-1)


class NormConvGap(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        return F.normalize(self.c(x).mean((2, 3)), p=2, dim=1)


class CosineMatrix(nn.Module):
    def __init__(self, temperature=None):
        super().__init__()
        self.l = nn.Linear(16, 8)
        self.t = temperature

    def forward(self, a, b):
        if self.t is None:
            return F.normalize(self.l(a), dim=-1) @ F.normalize(self.l(b), dim=-1).T
        return F.normalize(self.l(a), dim=1) @ F.normalize(self.l(b), dim=1).t() / self.t


# (input shapes, bound in steps, model). Worst over seeds 0-2, after (before: int8 F.normalize):
# the residual is the layer's own int8 output rounding, magnified on a row of small norm (seed 2);
# with --a16 (an int16 layer output) a normalize after a Linear is 0.6 steps
HEADS = {
    "normalize_linear": ([(3, 16)], 6.0, NormLinear),                     # 5.57 (36.13)
    "normalize_conv_gap": ([(2, 3, 8, 8)], 2.8, NormConvGap),              # 2.31 (7.74)
    "cosine_matrix": ([(4, 16), (5, 16)], 4.5, CosineMatrix),              # 3.95 (59.41)
    "contrastive_temp": ([(4, 16), (4, 16)], 5.5, lambda: CosineMatrix(0.07)),   # 5.06 (62.07)
}


@pytest.mark.parametrize("name", sorted(HEADS))
def test_l2_normalise_heads(name):
    specs, bound, make = HEADS[name]
    worst = 0.0
    for seed in SEEDS:
        torch.manual_seed(seed)
        steps, _ = _steps(make().eval(), specs, seed)
        print(name, seed, f"{steps:.2f}")
        worst = max(worst, steps)
    assert worst <= bound, (name, worst)


def test_normalize_after_linear_a16():
    """With --a16 the Linear's output is int16: the normalize (fp32) is then
    within a step of torch (0.60 measured; int8 F.normalize: 4.24)."""
    torch.manual_seed(0)
    steps, _ = _steps(NormLinear().eval(), [(3, 16)], 0, a16=True)
    assert steps <= 1.0, steps


def test_cosine_matrix_runs_in_fp32():
    """The matmul of two normalised embeddings is an fp32 step (its int8
    form rounded both unit vectors' elements)."""
    torch.manual_seed(0)
    _, res = _steps(CosineMatrix().eval(), [(4, 16), (5, 16)], 0)
    mm = [n for n in res.graph.nodes if n.op == "matmul"]
    assert mm and all("F.normalize" in str(n.attrs.get("fp32", "")) for n in mm)


class EncoderCls(nn.Module):
    """A zero-initialised class token concatenated to conv patch tokens,
    nn.TransformerEncoderLayer, the class token's output (through a head
    when `head`)."""

    def __init__(self, norm_first, head=False):
        super().__init__()
        self.pe = nn.Conv2d(3, 16, 4, 4)
        self.enc = nn.TransformerEncoderLayer(16, 2, 32, 0.0, batch_first=True, norm_first=norm_first,
                                              activation="gelu" if head else "relu")
        self.cls = nn.Parameter(torch.zeros(1, 1, 16))
        self.head = nn.Linear(16, 4) if head else None

    def forward(self, x):
        t = self.pe(x).flatten(2).transpose(1, 2)
        y = self.enc(torch.cat([self.cls.expand(x.shape[0], -1, -1), t], 1))[:, 0]
        return self.head(y) if self.head is not None else y


# worst over seeds 0-2, after (before: the residual adds on their int8 grids). The class token's attention
# context on its own grid (ptec.class_token_rows; before, v's grid): postnorm 10.61 / 8.57 / 9.11 -> 9.69 /
# 3.29 / 4.02, norm_first_head 6.25 / 10.63 / 6.02 -> 5.85 / 5.86 / 4.11; the rest is the class row's own
# int8 steps before the layer norm: docs/aot.md
ENCODERS = {
    "postnorm": (lambda: EncoderCls(False), 10.2),                         # 9.69 (21.16; 10.61 on v's grid)
    "norm_first_head": (lambda: EncoderCls(True, head=True), 6.5),         # 5.86 (14.52; 10.63 on v's grid)
}


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_class_token_after_encoder_layer(name):
    make, bound = ENCODERS[name]
    worst = 0.0
    for seed in SEEDS:
        torch.manual_seed(seed)
        steps, _ = _steps(make().eval(), [(2, 3, 16, 16)], seed)
        print(name, seed, f"{steps:.2f}")
        worst = max(worst, steps)
    assert worst <= bound, (name, worst)
