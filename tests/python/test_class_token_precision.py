"""A ViT-style class token (issue #15): `torch.cat([cls.expand(B, -1, -1),
embed(x)], 1) + pos` through nn.TransformerEncoderLayer / nn.TransformerEncoder,
the head reading the class token's row (or the mean of the tokens, for
comparison), against torch float (the oracle) on the host runtime, in int8
output steps (the output's grid), worst over seeds 0-3. Feeds: 6 of the 24
calibration feeds and 4 fresh ones scaled by 0.7; outputs outside torch's
calibrated output range are not counted (int8 saturates there by design).

Before (the cat and + pos on the embedded tokens' int8 grid, where the cls /
pos values, ~0.02, are a few codes; the attention context on v's grid):
post-norm 17.21, norm_first 23.89, two post-norm layers 14.14, two
norm_first layers 18.98, mean pooling 5.01. After (ptec.class_token_rows):
4.87, 6.12, 4.03, 7.75, 3.62 (docs/aot.md says what remains)."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.class_token_rows import CONTEXT_GRID, REASON
from ptec.compiler import compile_model
from ptec.pte import parse_program

SEEDS = [0, 1, 2, 3]


class ClassToken(nn.Module):
    def __init__(self, d=32, n=8, classes=10, norm_first=False, layers=1, pool="cls"):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        self.embed = nn.Linear(16, d)
        self.pool = pool
        make = lambda: nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True, norm_first=norm_first)
        self.enc = make() if layers == 1 else nn.TransformerEncoder(make(), layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        t = torch.cat([self.cls.expand(x.shape[0], -1, -1), self.embed(x)], 1) + self.pos
        y = self.enc(t)
        return self.head(y[:, 0] if self.pool == "cls" else y.mean(1))


def _steps(seed, **kw):
    torch.manual_seed(seed)
    model = ClassToken(**kw).eval()
    g = torch.Generator().manual_seed(100 + seed)
    cal = [(torch.randn(1, 8, 16, generator=g),) for _ in range(24)]
    g = torch.Generator().manual_seed(900 + seed)
    feeds = cal[:6] + [(torch.randn(1, 8, 16, generator=g) * 0.7,) for _ in range(4)]
    res = compile_model(model, list(cal[0]), cal)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    with torch.no_grad():
        calout = np.stack([model(*f).numpy() for f in cal])
    worst = 0.0
    for f in feeds:
        got = host_runtime.run(prog, res.data, [t.numpy() for t in f])[0]
        with torch.no_grad():
            want = model(*f).numpy()
        inside = (want >= calout.min()) & (want <= calout.max())
        assert inside.mean() > 0.5
        worst = max(worst, float(np.abs(got - want)[inside].max()) / step)
    return worst, res


# worst over seeds 0-3, after (before)
CASES = {
    "postnorm": ({}, 5.5),                                              # 4.87 (17.21)
    "norm_first": (dict(norm_first=True), 7.0),                         # 6.12 (23.89)
    "two_layers": (dict(layers=2), 5.0),                                # 4.03 (14.14)
    "two_layers_norm_first": (dict(norm_first=True, layers=2), 8.5),    # 7.75 (18.98)
    "mean_pooling": (dict(pool="mean"), 4.5),                           # 3.62 (5.01)
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_class_token_steps(name):
    kw, bound = CASES[name]
    worst = 0.0
    for seed in SEEDS:
        steps, _ = _steps(seed, **kw)
        print(name, seed, f"{steps:.2f}")
        worst = max(worst, steps)
    assert worst <= bound, (name, worst)


def test_class_token_rows_are_fp32_and_context_has_its_own_grid():
    """The cat and + pos run in fp32 (the compile names the reason); the
    class token's attention context takes its observed range, finer than
    v's grid (which the convex-combination rule would give it)."""
    _, res = _steps(0)
    g = res.graph
    cat = [n for n in g.nodes if n.op == "cat"]
    assert cat and all(n.attrs.get("fp32") == REASON for n in cat)
    assert [u.attrs.get("fp32") for u in g.users(cat[0].name)] == [REASON]
    ctx = [n for n in g.nodes if n.attrs.get(CONTEXT_GRID)]
    assert len(ctx) == 1
    v = g.node(ctx[0].inputs[1])
    assert ctx[0].qparams[0] < 0.5 * v.qparams[0], (ctx[0].qparams, v.qparams)


def test_wide_constant_piece_keeps_int8():
    """A constant token as wide as the embedded tokens is not a few codes of
    the cat's grid: the cat stays int8."""
    torch.manual_seed(0)
    model = ClassToken().eval()
    with torch.no_grad():
        model.cls.copy_(torch.linspace(-3, 3, 32).reshape(1, 1, 32))
    g = torch.Generator().manual_seed(5)
    cal = [(torch.randn(1, 8, 16, generator=g),) for _ in range(8)]
    res = compile_model(model, list(cal[0]), cal)
    assert not any(n.attrs.get("fp32") == REASON for n in res.graph.nodes)
    assert not any(n.attrs.get(CONTEXT_GRID) for n in res.graph.nodes)
