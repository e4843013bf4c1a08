"""nn.TransformerEncoderLayer / nn.TransformerEncoder given masks computed
from the model's input (probe finding R1): `src_key_padding_mask=tok == 0`,
`x.abs().sum(-1) == 0`, `pad.bool()` of an input; or a float one
(`pad.float() * -1e9`): torch 1.13 adds it to the scores, except on its
inference fast paths (the layer's, its attention's, the nested encoder's:
_fast), which read its nonzeros as the padding (_padding).

The stand-ins of capture_modules take constant masks (one bool mask folded
into ptec's masked softmax); a computed one takes nn.MultiheadAttention's
path for computed masks instead: each layer's self-attention is torch's
formula (capture_computed_weights._mha: the scores masked where the computed
bool mask is True, softmax of the kept positions), the rest of the layer as
for a constant mask.

torch's inference fast path of nn.TransformerEncoder (eval, no grad,
enable_nested_tensor, batch first, ...; capture_modules._nested_fast_path)
runs the layers on a nested tensor of the kept positions when the padding
mask is left aligned, and pads its output with zeros: the stand-in zeroes
the padded positions by the computed mask (x * ~mask), torch's value for a
left-aligned mask. torch also cuts the output to the longest kept length,
a length that depends on the input: an example whose padding covers the
last positions of every sequence (an output shorter than the input) is
refused, naming enable_nested_tensor=False. Where torch's mask is not left
aligned torch runs its ordinary path, whose padded positions hold the
attention of those positions to the kept ones (ptec's zeros there differ;
the kept positions agree)."""
from __future__ import annotations

import torch
import torch.fx
import torch.nn as nn

from .capture_modules import CaptureModuleError, _input_free


def computed(*masks) -> bool:
    """Whether a traced mask argument depends on the model's input."""
    return any(isinstance(m, torch.fx.Proxy) and not _input_free(m.node) for m in masks)


def formula_attend(attn, attn_mask, key_padding_mask):
    """Self-attention of a [batch, tokens, embed] value by torch's formula
    with the (computed or constant) masks, as a function of that value;
    attn: capture_modules.SelfAttention (its FormulaAttention `formula`)."""
    f = attn.formula
    if f is None:
        raise CaptureModuleError(f"{attn.what}: a computed mask needs embed_dim divisible by num_heads")
    from .capture_computed_weights import _mha

    def attend(x):
        q = x.transpose(0, 1)           # [L, N, E], torch's layout
        y, _ = _mha(q, q, q, f.e, f.h, f.w_in, f.b_in, f.bias_k, f.bias_v, f.zero, 0.0, f.w_out, f.b_out, False,
                    key_padding_mask, False, attn_mask, f.separate, *f.ws)
        return y.transpose(0, 1)
    return attend


def _fast(layer, src, src_mask) -> bool:
    """Whether torch 1.13 (eval, no grad) runs this layer's self-attention on
    a fast path (the layer's own, torch._transformer_encoder_layer_fwd, or
    its nn.MultiheadAttention's): both read a float key padding mask as a
    bool of its nonzeros. The conditions of their forwards."""
    f = layer.attn.formula
    if f is None or src_mask is not None or src.dim() != 3:
        return False
    own = (isinstance(layer.activation, (nn.ReLU, nn.GELU)) and layer.norm1.eps == layer.norm2.eps
           and layer.batch_first and not f.separate and f.h % 2 == 0 and not layer.linear1.training)
    return own or f.fast


def _padding(mask, as_bool: bool):
    """A float key padding mask computed in the program as torch's fast path
    reads it (as_bool: its nonzeros), else as given (added to the scores)."""
    if as_bool and isinstance(mask, torch.fx.Proxy) and mask.dtype.is_floating_point:
        from .capture_computed_weights import nonzero_mask
        return nonzero_mask(mask)
    return mask


def layer_forward(layer, src, src_mask, src_key_padding_mask):
    """capture_modules.EncoderLayer's call with a computed mask."""
    layer.begin_call(src)               # (the recorded calls stay in order)
    src_key_padding_mask = _padding(src_key_padding_mask, _fast(layer, src, src_mask))
    return layer.run(src, attend=formula_attend(layer.attn, src_mask, src_key_padding_mask))


def encoder_forward(enc, src, mask, src_key_padding_mask):
    """capture_modules.Encoder's call with a computed mask (module docstring)."""
    known = enc.begin_call(src)
    nested = enc.nested and mask is None and src_key_padding_mask is not None and src.dim() == 3
    # torch's nested tensor of the kept positions: the float mask's nonzeros pad (its logical_not keeps)
    src_key_padding_mask = _padding(src_key_padding_mask, nested)
    x = src
    for layer in enc.layers:
        x = layer.run(x, attend=formula_attend(layer.attn, mask, _padding(src_key_padding_mask,
                                                                           _fast(layer, x, mask))))
    if nested:
        example = known.get("src_key_padding_mask")
        if isinstance(example, torch.Tensor) and example.dim() == 2:
            keep = ~(example.bool() if example.dtype != torch.bool else example)
            left = bool((keep.int().cumprod(1).bool() == keep).all())
            if left and int(keep.sum(1).max()) < keep.shape[1]:
                raise CaptureModuleError(
                    f"{enc.what}: a src_key_padding_mask computed from the input that pads the last positions of "
                    f"every sequence of the example: torch's nested-tensor fast path then cuts its output to the "
                    f"longest kept length ({int(keep.sum(1).max())} of {keep.shape[1]}), a length that depends on "
                    f"the input: build it with enable_nested_tensor=False (or give an example with one sequence "
                    f"kept whole)")
        x = x * (~src_key_padding_mask).unsqueeze(-1).to(torch.float32)
    return x if enc.norm is None else enc.norm(x)
