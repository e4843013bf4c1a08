"""A computed bool mask moved before attention reads it (issue 15):
`key_padding_mask=(x[..., 0] > 0.5).t()`, `attn_mask=(s > 0.6).transpose(0, 1)`,
`(x[..., 0] > x[..., 1] + 0.5).t()` (both operands moved),
a hand-written attention's `scores.masked_fill(m.t(), -inf)`. A moved bool
is moved bytes, which the softmax of the kept positions, a logical or and
a where do not read as a bool ("gt: not a bool value" at lowering, or the
or / masked_fill refused): capture_bool_moves.compares_after_moves makes
it the comparison of the moved operand, `x[..., 0].t() > 0.5`, torch's
value exactly.

Oracle: torch on the same inputs (float32, no grad), the program within
its bound in output steps (measured figures beside each case), the host
runtime's bytes equal to the reference interpreter's; the masks are
computed from the inputs and mask no whole row."""
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F


from test_attention_masks_more import B_IN, B_OUT, E, H, L, MHA, W_IN, W_OUT, worst_steps


def _attn(x):
    """A computed [L, S] bool from x [L, N, E], moved: row i is the column i of x[:, 0, 2:2 + L] > 0.6."""
    return (x[:, 0, 2:2 + L] > 0.6).transpose(0, 1)


def _pair(x):
    """A key padding mask [N, L] from x [L, N, E]: two of its columns compared, then transposed."""
    return (x[..., 0] > x[..., 1] + 0.5).t()


class Module(nn.Module):
    """nn.MultiheadAttention with a transposed computed bool key_padding_mask (or attn_mask)."""

    def __init__(self, batch_first, which="kpm"):
        super().__init__()
        self.batch_first, self.which = batch_first, which
        self.m = nn.MultiheadAttention(E, H, batch_first=batch_first).eval()
        self.m.load_state_dict(MHA.state_dict())

    def forward(self, x):          # x [L, N, E]
        v = x.transpose(0, 1) if self.batch_first else x
        if self.which == "attn":
            y = self.m(v, v, v, attn_mask=_attn(x), need_weights=False)[0]
        elif self.which == "pair":      # a comparison of two tensors of one shape, both moved
            y = self.m(v, v, v, key_padding_mask=_pair(x), need_weights=False)[0]
        else:
            y = self.m(v, v, v, key_padding_mask=(x[..., 0] > 0.5).t(), need_weights=False)[0]
        return y.transpose(0, 1) if self.batch_first else y


class Functional(nn.Module):
    """F.multi_head_attention_forward with both masks transposed computed bools."""

    def forward(self, x):
        return F.multi_head_attention_forward(x, x, x, E, H, W_IN, B_IN, None, None, False, 0.0, W_OUT, B_OUT,
                                              training=False, key_padding_mask=(x[..., 0] > 0.5).t(),
                                              attn_mask=_attn(x), need_weights=False)[0]


class Layer(nn.Module):
    """nn.TransformerEncoderLayer (sequence first) given src_key_padding_mask=(x[..., 0] > 0.5).t()."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.layer = nn.TransformerEncoderLayer(E, H, 16, dropout=0.0).eval()

    def forward(self, x):
        return self.layer(x, src_key_padding_mask=(x[..., 0] > 0.5).t())


class HandWritten(nn.Module):
    """One head written out: scores.masked_fill(m.t(), -inf) (and .T, .transpose, .permute of m)."""

    def __init__(self, move):
        super().__init__()
        self.move = move
        torch.manual_seed(6)
        self.q, self.k, self.v = (nn.Linear(E, E) for _ in range(3))

    def forward(self, x):
        h = x[:, 0]                                            # [L, E]
        m = x[:, 0, 2:2 + L] > 0.6                             # [L, L]; the mask is its transpose
        m = {"t": m.t(), "T": m.T, "transpose": m.transpose(0, 1), "permute": m.permute(1, 0)}[self.move]
        scores = self.q(h) @ self.k(h).t() * E ** -0.5
        return scores.masked_fill(m, float("-inf")).softmax(-1) @ self.v(h)


CASES = {   # name: (model, bound in output steps)
    "nn.MultiheadAttention: key_padding_mask=(x > t).t() (sequence first)": (lambda: Module(False), 3.5),  # 2.27
    "nn.MultiheadAttention: key_padding_mask=(x > t).t() (fast path)": (lambda: Module(True), 3.5),  # 2.27
    "nn.MultiheadAttention: attn_mask=(s > t).transpose(0, 1)": (lambda: Module(False, "attn"), 3.5),  # 1.89
    "nn.MultiheadAttention: key_padding_mask=(a > b).t()": (lambda: Module(False, "pair"), 3.5),  # 1.99
    "F: both masks transposed": (Functional, 3.5),  # 2.24
    "nn.TransformerEncoderLayer: src_key_padding_mask=(x > t).t()": (Layer, 3.5),  # 1.60
    "hand-written: masked_fill(m.t(), -inf)": (lambda: HandWritten("t"), 3.5),  # 1.36
    "hand-written: masked_fill(m.T, -inf)": (lambda: HandWritten("T"), 3.5),  # 1.36
    "hand-written: masked_fill(m.transpose(0, 1), -inf)": (lambda: HandWritten("transpose"), 3.5),  # 1.36
    "hand-written: masked_fill(m.permute(1, 0), -inf)": (lambda: HandWritten("permute"), 3.5),  # 1.36
}


def _inputs(n=6):
    """x [L, 2, E] whose masks mask some keys and no whole row (key 0 kept)."""
    g = torch.Generator().manual_seed(11)
    out = []
    while len(out) < n:
        x = torch.rand(L, 2, E, generator=g) * 2 - 1
        pad, attn, pair = x[..., 0].t() > 0.5, _attn(x), _pair(x)
        if bool(pad.any() and attn.any() and ~pad[:, 0].any() and (~(attn | pad[0])).any(-1).all()
                and (~(attn | pad[1])).any(-1).all() and pair.any() and (~pair).sum(-1).min() >= 2):
            out.append((x,))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_moved_bool_masks_within_their_bound(name, tmp_path):
    make, bound = CASES[name]
    model = make().eval()
    worst = worst_steps(model, model, _inputs(), tmp_path, name)
    assert worst <= bound + 1e-3, worst


def test_the_masks_matter():
    """The moved masks change torch's output (a mask read unmoved, or not at all, would differ)."""
    x = _inputs(1)[0][0]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = HandWritten("t").eval()
        m = x[:, 0, 2:2 + L] > 0.6
        unmoved = (h.q(x[:, 0]) @ h.k(x[:, 0]).t() * E ** -0.5).masked_fill(m, float("-inf")).softmax(-1) \
            @ h.v(x[:, 0])
        assert float((h(x) - unmoved).abs().max()) > 0.05
        mha = Module(False).eval()
        assert float((mha(x) - mha.m(x, x, x, need_weights=False)[0]).abs().max()) > 0.05
