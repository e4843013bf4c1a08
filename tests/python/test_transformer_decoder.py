"""nn.Transformer, nn.TransformerDecoder(Layer) and cross-attention
(capture_modules.DecoderLayer / Decoder / Transformer): a sequence-to-
sequence model with a causal target mask made in forward, batch-first or
not, and a pre-norm decoder whose mask is a buffer, run on the host with
the reference interpreter's bytes (fp32 LayerNorm kernels: within one
output step of them) and within a few output steps of PyTorch float; a
memory mask (constant) masks the cross-attention likewise."""
import pytest
import torch
import torch.nn as nn

from ptec.compiler import compile_model
from test_module_coverage import worst_steps


class Seq2Seq(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.batch_first = batch_first
        self.t = nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=batch_first)

    def forward(self, x):                     # x [1, 6, 8]: the source; its first 3 tokens, halved, the target
        src, tgt = x, x[:, :3] * 0.5
        if not self.batch_first:
            src, tgt = src.transpose(0, 1), tgt.transpose(0, 1)
        return self.t(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3))


class PreNormDecoder(nn.Module):
    def __init__(self, memory_mask=False):
        super().__init__()
        layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
        self.d = nn.TransformerDecoder(layer, 2)
        self.register_buffer("mask", torch.triu(torch.ones(3, 3, dtype=torch.bool), 1))
        self.memory_mask = memory_mask

    def forward(self, x):
        if self.memory_mask:
            return self.d(x[:, :3], x, memory_mask=torch.ones(3, 6, dtype=torch.bool).triu(4))
        return self.d(x[:, :3], x, tgt_mask=self.mask)


def inputs(n=8):
    g = torch.Generator().manual_seed(3)
    return [(torch.rand(1, 6, 8, generator=g) * 6.0 - 3.0,) for _ in range(n)]


@pytest.mark.parametrize("make", [lambda: Seq2Seq(True), lambda: Seq2Seq(False), PreNormDecoder],
                         ids=["transformer-batch-first", "transformer-seq-first", "pre-norm-decoder"])
def test_decoder_runs_with_its_causal_mask(make, tmp_path):
    torch.manual_seed(0)
    model = make().eval()
    calibration = inputs()
    res = compile_model(model, [calibration[0][0]], calibration)
    ops = {n.op for n in res.graph.nodes}
    assert "masked_softmax" in ops and "softmax" in ops, ops     # masked self-attention, plain cross-attention
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    assert worst <= 3.5, worst          # measured 2.8-2.9: two or four layers of linears, softmaxes, norms


def test_memory_mask_masks_the_cross_attention(tmp_path):
    torch.manual_seed(0)
    model = PreNormDecoder(memory_mask=True).eval()
    calibration = inputs()
    res = compile_model(model, [calibration[0][0]], calibration)
    assert sum(n.op == "masked_softmax" for n in res.graph.nodes) == 2, [n.op for n in res.graph.nodes]
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    assert worst <= 3.5, worst
