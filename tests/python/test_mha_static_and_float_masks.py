"""F.multi_head_attention_forward's static_k / static_v and computed float
attention masks (issue 15, capture_computed_weights._mha).

static_k / static_v [N h, S, d]: per-head keys and values given in place
of the projected ones (torch's src_len becomes S), constants or computed
from the input, with a key_padding_mask of S columns and add_zero_attn.
A computed float attn_mask is added to the scores (torch's baddbmm);
written as `zeros.masked_fill(b, -inf)` / `torch.where(b, -inf, bias)` of a
computed bool b, b masks (capture_attention_masks' softmax of the kept
positions) and the rest is added; in nn.MultiheadAttention too. A row
masked entirely is 0 (as for a computed bool mask: torch gives NaN for
-inf, and for a finite fill a value of float32's rounding of scores +
fill, 1/S for -1e9): the inputs here mask no whole row.

Oracle: torch 1.13's own function on the same inputs (float32), the
program within its bound in output steps (int8: the projections, the
scores' int8 matmul and the softmax's LUTs; measured figures beside each
case), the host runtime's bytes equal to the reference interpreter's.
Kept refused in one line: bias_k beside static_k (torch asserts), a float
mask holding NaN (a computed float key_padding_mask runs:
test_attention_masks_more.py)."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.capture import CaptureError
from ptec.interpreter import run_program
from ptec.pte import parse_program

E, H, L, S = 8, 2, 4, 5
torch.manual_seed(15)
MHA = torch.nn.MultiheadAttention(E, H).eval()
W_IN, B_IN = MHA.in_proj_weight.detach().clone(), MHA.in_proj_bias.detach().clone()
W_OUT, B_OUT = MHA.out_proj.weight.detach().clone(), MHA.out_proj.bias.detach().clone()


class Static(torch.nn.Module):
    """static_k / static_v of batch n: constants, or computed from x [L, n, E]."""

    def __init__(self, n=1, computed=False, padding=False, zero=False):
        super().__init__()
        self.n, self.computed, self.padding, self.zero = n, computed, padding, zero
        g = torch.Generator().manual_seed(3)
        self.register_buffer("sk", torch.randn(n * H, S, E // H, generator=g))
        self.register_buffer("sv", torch.randn(n * H, S, E // H, generator=g))
        for name, t in (("w_in", W_IN), ("b_in", B_IN), ("w_out", W_OUT), ("b_out", B_OUT)):
            self.register_buffer(name, t)

    def forward(self, x):
        if self.computed:       # [L, n, E] -> [n h, L, d]: the input's own heads, as keys (S = L)
            sk = x.reshape(L, self.n * H, E // H).transpose(0, 1) * 0.5
            sv = torch.tanh(sk.flip(1))
        else:
            sk, sv = self.sk, self.sv
        source = sk.shape[1] + self.zero
        kpm = (x[:source, :, 0] > 0.6).t() if self.padding and source <= L else None
        return F.multi_head_attention_forward(x, x, x, E, H, self.w_in, self.b_in, None, None, self.zero, 0.0,
                                              self.w_out, self.b_out, training=False, key_padding_mask=kpm,
                                              need_weights=False, static_k=sk, static_v=sv)[0]


class FloatMask(torch.nn.Module):
    """nn.MultiheadAttention(x, x, x, attn_mask=m) with m a float computed from x [L, 1, E]."""

    def __init__(self, kind, batch_first=False):
        super().__init__()
        self.kind = kind
        self.m = torch.nn.MultiheadAttention(E, H, batch_first=batch_first).eval()
        self.m.load_state_dict(MHA.state_dict())

    def forward(self, x):
        c = x[:, 0, :L]                                   # [L, L]
        cond = c.t() > 0.6
        if self.kind == "masked_fill":
            mask = torch.zeros(L, L).masked_fill(cond, float("-inf"))
        elif self.kind == "where":
            mask = torch.where(cond, float("-inf"), c * 0.25)
        elif self.kind == "where, -1e9 kept":
            mask = torch.where(c.t() <= 0.6, c * 0.25, -1e9)      # kept where true: masked where c > 0.6
        else:                                             # a finite additive bias
            mask = c * 0.5
        return self.m(x, x, x, attn_mask=mask, need_weights=False)[0]


CASES = {   # name: (model, input batch, bound in output steps)
    "static_k / static_v constants": (lambda: Static(), 1, 2.0),                           # 1.69
    "static_k / static_v computed": (lambda: Static(computed=True), 1, 2.5),               # 2.06
    "static, batch 2": (lambda: Static(n=2), 2, 3.5),                                      # 3.35
    "static with key_padding_mask and add_zero_attn": (lambda: Static(computed=True, padding=True, zero=True), 1,
                                                       2.5),                                                 # 2.06
    "float mask: zeros.masked_fill(b, -inf)": (lambda: FloatMask("masked_fill"), 1, 3.0),  # 2.56
    "float mask: where(b, -inf, bias)": (lambda: FloatMask("where"), 1, 3.5),              # 2.93
    "float mask: where(b, bias, -1e9)": (lambda: FloatMask("where, -1e9 kept"), 1, 3.5),   # 2.93
    "float mask: a computed bias": (lambda: FloatMask("bias"), 1, 3.0),                    # 2.48
}


def _inputs(batch, n=6):
    g = torch.Generator().manual_seed(7)
    return [(torch.rand(L, batch, E, generator=g) * 2 - 1,) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_within_its_bound(name, tmp_path):
    make, batch, bound = CASES[name]
    model = make().eval()
    cal = _inputs(batch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compile_model(model, [cal[0][0]], cal)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, span = 0.0, []
    for (x,) in cal[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = model(x).numpy()
        assert np.isfinite(want).all()
        worst = max(worst, float(np.abs(got - want).max() / step))
        span.append(np.ptp(want) / step)
    print(f"{name}: {worst:.2f} output steps")
    assert min(span) >= 16
    assert worst <= bound + 1e-3, worst


class BiasWithStatic(Static):
    def forward(self, x):
        return F.multi_head_attention_forward(x, x, x, E, H, self.w_in, self.b_in, torch.zeros(1, 1, E),
                                              torch.zeros(1, 1, E), False, 0.0, self.w_out, self.b_out,
                                              training=False, need_weights=False, static_k=self.sk,
                                              static_v=self.sv)[0]


class NanMask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.zeros(L, L))
        self.bias[0, 1] = float("nan")

    def forward(self, x):
        kpm = x[:, :, 0].t() > 0.6                           # computed: the formula's path
        return F.multi_head_attention_forward(x, x, x, E, H, W_IN, B_IN, None, None, False, 0.0, W_OUT, B_OUT,
                                              training=False, key_padding_mask=kpm, attn_mask=self.bias,
                                              need_weights=False)[0]


@pytest.mark.parametrize("model, words", [(BiasWithStatic(), "bias_k with static_k / static_v"),
                                          (NanMask(), "NaN or +inf")])
def test_still_refused_in_one_line(model, words):
    cal = _inputs(1, 2)
    with pytest.raises((CompileError, CaptureError)) as e:
        compile_model(model.eval(), [cal[0][0]], cal)
    message = str(e.value)
    assert "\n" not in message and words in message, message
