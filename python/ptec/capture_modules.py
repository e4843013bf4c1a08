"""Traceable stand-ins for torch.nn modules that torch.fx keeps as opaque
leaves: nn.MultiheadAttention (self-attention, as nn.TransformerEncoderLayer
uses it) and nn.TransformerEncoderLayer. Their forward is a fused fast path
or a long function with Python control flow on tensor properties, so fx
records one call ptec has no kernel for. The stand-ins compute the same
function from the same parameters with the operators ptec captures (linear,
reshape, transpose, matmul, softmax, LayerNorm, the activation), so the
layer lowers like any other attention block.

Scope: one sequence per call (batch 1, as on a microcontroller), no
attention or padding masks, query = key = value dimensions. Anything else
keeps the original module, which capture then reports as unsupported with
its module path."""
from __future__ import annotations

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CaptureModuleError(ValueError):
    """A stand-in module called in a way it does not cover; one line."""


class SelfAttention(nn.Module):
    """nn.MultiheadAttention's function for batch 1 and no masks: the input
    projection split into q, k and v, heads as a [heads, tokens, head_dim]
    batch, scaled dot-product softmax attention, the output projection."""

    def __init__(self, mha: nn.MultiheadAttention):
        super().__init__()
        e, h = mha.embed_dim, mha.num_heads
        self.heads, self.head_dim, self.embed = h, e // h, e
        self.batch_first = mha.batch_first
        w, b = mha.in_proj_weight.detach(), mha.in_proj_bias
        self.q, self.k, self.v = (nn.Linear(e, e, bias=b is not None) for _ in range(3))
        for i, proj in enumerate((self.q, self.k, self.v)):
            proj.weight = nn.Parameter(w[i * e:(i + 1) * e].clone())
            if b is not None:
                proj.bias = nn.Parameter(b.detach()[i * e:(i + 1) * e].clone())
        self.out = nn.Linear(e, e, bias=mha.out_proj.bias is not None)
        self.out.weight = nn.Parameter(mha.out_proj.weight.detach().clone())
        if mha.out_proj.bias is not None:
            self.out.bias = nn.Parameter(mha.out_proj.bias.detach().clone())

    def attend(self, x):
        """x: [1, tokens, embed] (batch first)."""
        h, d = self.heads, self.head_dim
        q = self.q(x).reshape(-1, h, d).transpose(0, 1) * (1.0 / math.sqrt(d))
        k = self.k(x).reshape(-1, h, d).transpose(0, 1)
        v = self.v(x).reshape(-1, h, d).transpose(0, 1)
        a = torch.softmax(q @ k.transpose(1, 2), -1) @ v              # [heads, tokens, head_dim]
        return self.out(a.transpose(0, 1).reshape(1, -1, self.embed))

    def forward(self, query, key=None, value=None, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        if key_padding_mask is not None or attn_mask is not None or is_causal:
            raise CaptureModuleError("nn.MultiheadAttention with a mask: ptec captures "
                                     "unmasked self-attention only")
        if (key is not None and key is not query) or (value is not None and value is not query):
            raise CaptureModuleError("nn.MultiheadAttention with key or value other than the "
                                     "query: ptec captures self-attention only")
        x = query if self.batch_first else query.transpose(0, 1)
        y = self.attend(x)
        return (y if self.batch_first else y.transpose(0, 1)), None


class EncoderLayer(nn.Module):
    """nn.TransformerEncoderLayer, post-norm or pre-norm (norm_first)."""

    def __init__(self, layer: nn.TransformerEncoderLayer):
        super().__init__()
        self.attn = SelfAttention(layer.self_attn)
        self.linear1, self.linear2 = layer.linear1, layer.linear2
        self.norm1, self.norm2 = layer.norm1, layer.norm2
        self.norm_first = layer.norm_first
        self.batch_first = layer.self_attn.batch_first
        act = layer.activation
        self.activation = (act if isinstance(act, nn.Module)
                           else nn.GELU() if act is F.gelu else nn.ReLU())

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if src_mask is not None or src_key_padding_mask is not None or is_causal:
            raise CaptureModuleError("nn.TransformerEncoderLayer with a mask: ptec captures "
                                     "unmasked self-attention only")
        x = src if self.batch_first else src.transpose(0, 1)
        if self.norm_first:
            x = x + self.attn.attend(self.norm1(x))
            x = x + self.linear2(self.activation(self.linear1(self.norm2(x))))
        else:
            x = self.norm1(x + self.attn.attend(x))
            x = self.norm2(x + self.linear2(self.activation(self.linear1(x))))
        return x if self.batch_first else x.transpose(0, 1)


class Encoder(nn.Module):
    """nn.TransformerEncoder: its layers in turn, then its norm if any."""

    def __init__(self, enc: nn.TransformerEncoder):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(layer) for layer in enc.layers)
        self.norm = enc.norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        if mask is not None or src_key_padding_mask is not None or is_causal:
            raise CaptureModuleError("nn.TransformerEncoder with a mask: ptec captures "
                                     "unmasked self-attention only")
        x = src
        for layer in self.layers:
            x = layer(x)
        return x if self.norm is None else self.norm(x)


def _attention_covered(m) -> bool:
    return (isinstance(m, nn.MultiheadAttention) and m._qkv_same_embed_dim
            and m.embed_dim % m.num_heads == 0 and m.bias_k is None and not m.add_zero_attn)


def _stand_in(m: nn.Module):
    """The stand-in of a covered module, else None."""
    if isinstance(m, nn.TransformerEncoder):
        ok = all(isinstance(layer, nn.TransformerEncoderLayer) and _attention_covered(layer.self_attn)
                 for layer in m.layers)
        return Encoder(m) if ok else None
    if isinstance(m, nn.TransformerEncoderLayer):
        return EncoderLayer(m) if _attention_covered(m.self_attn) else None
    if _attention_covered(m):
        return SelfAttention(m)
    return None


def with_traceable_modules(model: nn.Module) -> nn.Module:
    """model, or a copy of it whose covered leaf modules are stand-ins (the
    user's model is never changed). Outermost modules first: an encoder's
    layers go with it."""
    if not any(isinstance(m, (nn.TransformerEncoder, nn.TransformerEncoderLayer, nn.MultiheadAttention))
               for m in model.modules()):
        return model
    model = copy.deepcopy(model)
    whole = _stand_in(model)
    if whole is not None:
        return whole
    replaced = []
    for name, m in list(model.named_modules()):
        if not name or any(name.startswith(r + ".") for r in replaced):
            continue
        stand_in = _stand_in(m)
        if stand_in is None:
            continue
        parent_name, _, attr = name.rpartition(".")
        setattr(model.get_submodule(parent_name) if parent_name else model, attr, stand_in)
        replaced.append(name)
    return model
