"""A float attention mask with values other than 0 and -inf (probe finding
R11): ALiBi slopes, relative-position biases, any float buffer given as
nn.MultiheadAttention's attn_mask (or an encoder / decoder layer's src_mask,
tgt_mask, memory_mask). torch adds a float mask to the scaled scores before
the softmax; ptec does the same: the mask's finite values are a constant
bias added to the scores (an int8 add of one shape: the bias expanded to
the scores' [batch * heads, L, S]), its -inf entries the bool mask of
ptec's masked softmax, as a 0/-inf mask is.

capture_modules.attention_mask combines the masks: with such a mask it
returns torch's additive form, a float [batch * heads, L, S] (-inf where
masked, the bias elsewhere); `biased` splits it back where the scores are
made (split_additive, shared with capture_computed_weights' additive step).
A constant float key padding mask stays 0/-inf only (torch 1.13 turns a
bool one into that form; a general one is refused); one computed from the
input, and any mask computed from the input, is capture_computed_weights'
(which splits such a constant mask the same way beside a computed
key_padding_mask). NaN and +inf stay refused: torch's rows there are NaN,
which no int8 value holds."""
from __future__ import annotations

import torch

from .capture_modules import CaptureModuleError


def additive_bias(m: torch.Tensor, what: str):
    """The bias of a constant float attention mask m with values other than
    0 and -inf (its -inf entries as 0), or None when m is bool, byte or
    0/-inf only. NaN and +inf are refused: torch's softmax gives NaN rows,
    which no int8 value holds."""
    if not m.is_floating_point():
        return None
    masked = torch.isneginf(m)
    if bool(((m == 0) | masked).all()):
        return None
    bias = m.masked_fill(masked, 0.0)
    if not bool(torch.isfinite(bias).all()):
        raise CaptureModuleError(f"{what}: a float attention mask with NaN or +inf values: torch's attention rows "
                                 "there are NaN (its softmax of NaN, or of inf - inf), and int8 values have no NaN "
                                 "(nor does the rest of the program carry it): ptec takes finite values and -inf")
    return bias.to(torch.float32)


def additive_form(full: torch.Tensor, bias: torch.Tensor, heads: int, batch: int) -> torch.Tensor:
    """torch's additive mask [batch * heads, L, S] of the combined bool mask
    `full` ([1 or batch * heads, L, S], True: masked) and `bias` ([L, S] or
    [batch * heads, L, S])."""
    shape = (batch * heads,) + tuple(full.shape[1:])
    return bias.expand(shape).masked_fill(full.expand(shape), float("-inf")).clone()


_MASKING = -1e4     # a value at or below it masks (capture_attention_masks.MASKING: float32's exp underflows)


def split_additive(mask: torch.Tensor):
    """A constant float (additive) mask as (bool mask or None, bias): its
    -inf entries and finite fills <= -1e4 (a causal ALiBi filled with -1e9)
    mask (the masked softmax), its other values are added to the scores
    (float32): a -1e9 in an int8 add would leave no grid for the scores."""
    masked = mask <= _MASKING
    return (masked if bool(masked.any()) else None), mask.masked_fill(masked, 0.0).to(torch.float32)


def biased(scores, mask):
    """(scores, bool mask or None) for the softmax: a float (additive) mask's
    bias added to the scores, its -inf entries the mask; a bool mask as is."""
    if not isinstance(mask, torch.Tensor) or not mask.is_floating_point():
        return scores, mask
    masked, bias = split_additive(mask)
    return scores + bias, masked
