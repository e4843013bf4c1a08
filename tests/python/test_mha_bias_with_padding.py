"""A constant float attn_mask (an ALiBi-style bias buffer, -inf entries
too) beside a key_padding_mask computed from the input (`tok == 0`) in
nn.MultiheadAttention, F.multi_head_attention_forward and
nn.TransformerEncoderLayer's src_mask / src_key_padding_mask
(capture_computed_weights._constant_bias):
torch adds the float mask to the scores and sets the padded keys to -inf;
ptec adds the mask's finite values to the scores (capture_attention_bias)
and masks its -inf entries or-ed with the computed padding (the softmax of
the kept positions, capture_attention_masks).

Oracle: torch 1.13's module / function on the same inputs (float32), the
program within its bound in output steps on every query row with at least
one kept key (torch gives NaN for a row masked entirely; ptec 0), the host
runtime's bytes equal to the reference interpreter's."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec import fp32_residuals
from ptec.ir import origin
from ptec.interpreter import run_program
from ptec.pte import parse_program

E, H, L, N = 8, 2, 5, 2
POS = torch.arange(L)
DIST = -(POS[None, :] - POS[:, None]).abs().float()             # [L, L]: -|i - j|
SLOPES = torch.tensor([0.5, 0.25])


class Alibi(torch.nn.Module):
    """Token ids tok [N, L] embedded, self-attention with attn_mask a float
    buffer and key_padding_mask = tok == 0."""

    def __init__(self, kind, batch_first=True):
        super().__init__()
        torch.manual_seed(18)
        self.kind, self.batch_first = kind, batch_first
        self.emb = torch.nn.Embedding(10, E)
        self.m = torch.nn.MultiheadAttention(E, H, batch_first=batch_first).eval()
        self.layer = torch.nn.TransformerEncoderLayer(E, H, 16, dropout=0.0, batch_first=True).eval()
        per_head = (SLOPES[:, None, None] * DIST).repeat(N, 1, 1)  # [N h, L, L]
        causal = torch.triu(torch.ones(L, L, dtype=torch.bool), 1)
        self.register_buffer("bias", {"2d": DIST * 0.5, "3d causal": per_head.masked_fill(causal, float("-inf")),
                                      "function": DIST * 0.75 + 0.5, "encoder layer": DIST * 0.5}[kind])

    def forward(self, tok):
        x = self.emb(tok)
        if self.kind == "function":
            x = x.transpose(0, 1)
            m = self.m
            return F.multi_head_attention_forward(x, x, x, E, H, m.in_proj_weight, m.in_proj_bias, None, None,
                                                  False, 0.0, m.out_proj.weight, m.out_proj.bias, training=False,
                                                  key_padding_mask=tok < 1, need_weights=False,
                                                  attn_mask=self.bias)[0]
        if self.kind == "encoder layer":
            return self.layer(x, src_mask=self.bias, src_key_padding_mask=tok == 0)
        if not self.batch_first:
            x = x.transpose(0, 1)
        return self.m(x, x, x, key_padding_mask=tok == 0, attn_mask=self.bias, need_weights=False)[0]


CASES = {   # name: (model, bound in output steps)
    "2d bias, bool padding": (lambda: Alibi("2d"), 3.0),                                  # 2.52
    "per-head causal bias, bool padding": (lambda: Alibi("3d causal", batch_first=False), 3.0),   # 2.47
    "nn.TransformerEncoderLayer(src_mask=bias, src_key_padding_mask=tok == 0)": (lambda: Alibi("encoder layer"),
                                                                                 2.5),      # 1.96
    "F.multi_head_attention_forward, padding tok < 1": (lambda: Alibi("function"), 3.0),     # 2.23
}


def _feeds():
    g = torch.Generator().manual_seed(18)
    feeds = [(torch.randint(0, 4, (N, L), generator=g),) for _ in range(6)]
    feeds[0][0][0] = torch.tensor([0, 3, 0, 2, 1])             # padded keys at 0 and 2 (a causal row 0 masked)
    return feeds


@pytest.mark.parametrize("name", sorted(CASES))
def test_bias_with_computed_padding_within_its_bound(name, tmp_path):
    make, bound = CASES[name]
    model = make().eval()
    feeds = _feeds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compile_model(model, list(feeds[0]), feeds)
        # fp32 layer norms and the residual adds only they read (ptec.fp32_residuals)
        residual = {origin(n) for n in res.graph.nodes if n.attrs.get("fp32") == fp32_residuals.REASON}
        assert all("nn.LayerNorm" in f or f.split(":")[0] in residual for f in res.lowered.fallbacks), \
            res.lowered.fallbacks
        prog = parse_program(res.data)
        step = res.graph.node(res.graph.outputs[0]).qparams[0]
        worst, padded = 0.0, 0
        for (tok,) in feeds[:4]:
            got = host_runtime.run(prog, res.data, [tok.numpy()], workdir=str(tmp_path))[0]
            assert got.tobytes() == run_program(prog, [tok.numpy()])[0].tobytes()
            with torch.no_grad():
                want = model(tok).numpy()
            kept = np.isfinite(want)                               # rows with at least one kept key
            assert kept.sum() >= want.size // 2
            worst = max(worst, float(np.abs(got - want)[kept].max() / step))
            assert np.ptp(want[kept]) / step >= 16
            padded += int((tok == 0).sum())
    print(f"{name}: {worst:.2f} output steps")
    assert padded >= 4
    assert worst <= bound + 1e-3, worst


def test_padding_changes_the_result(tmp_path):
    """The computed padding is read: the same tokens with one more padded key differ."""
    model = Alibi("2d").eval()
    feeds = _feeds()
    res = compile_model(model, list(feeds[0]), feeds)
    prog = parse_program(res.data)
    a = torch.tensor([[1, 2, 3, 1, 2], [3, 1, 2, 3, 1]])
    b = a.clone()
    b[0, 1] = 0
    ga, gb = (host_runtime.run(prog, res.data, [t.numpy()], workdir=str(tmp_path))[0] for t in (a, b))
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert np.abs(ga[0] - gb[0]).max() / step >= 4 and np.array_equal(ga[1], gb[1])
