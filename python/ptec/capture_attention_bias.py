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
A constant float key padding mask with other values (a buffer of 0.5's,
-1e9 fills, a per-key bias) follows torch 1.13 (`padding`): added to the
scores as [batch * heads, 1, S] where torch adds it (its values <= -1e4
masking, as above), its nonzeros a bool mask where torch reads it as a
bool (beside a bool attn_mask: torch's logical_or; on the inference fast
paths: the caller's padding_as_bool); a caller that knows neither (the
decoder layers) refuses it. One computed from the input, and any mask
computed from the input, is capture_computed_weights' (which splits such
a constant mask the same way beside a computed key_padding_mask). NaN and +inf stay refused: torch's rows there are NaN,
which no int8 value holds."""
from __future__ import annotations

import torch
import torch.fx

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


def general_padding(m) -> bool:
    """Whether m is a constant float key padding mask with values other than
    0 and -inf (torch adds it to the scores, or reads its nonzeros)."""
    return isinstance(m, torch.Tensor) and not isinstance(m, torch.fx.Proxy) and m.is_floating_point() \
        and not bool(((m == 0) | torch.isneginf(m)).all())


def padding(m: torch.Tensor, as_bool: bool, what: str):
    """A constant float key padding mask [batch, S] (or [S]) as torch 1.13
    uses it: (bool mask, bias or None). as_bool: torch reads a bool of its
    nonzeros (its fast paths, its logical_or into a bool attn_mask): that
    bool, no bias; else torch adds it to the scores: its values <= -1e4
    mask (split_additive's rule: -inf, a -1e9 fill), the rest is the bias
    (float32, None when zeros). NaN and +inf are refused (torch's rows
    there are NaN); so is a finite fill masking every key of an element
    (torch's softmax there is 1/S of float32's rounding, ptec's masked
    softmax gives zeros)."""
    m = m.detach()
    if not bool((torch.isfinite(m) | torch.isneginf(m)).all()):
        raise CaptureModuleError(f"{what}: a float key padding mask with NaN or +inf values: torch's attention rows "
                                 "there are NaN, and int8 values have no NaN: ptec takes finite values and -inf")
    if as_bool:
        return m != 0, None
    masked = m <= _MASKING
    whole = masked.reshape(-1, m.shape[-1]).all(-1) & ~torch.isneginf(m).reshape(-1, m.shape[-1]).all(-1)
    if bool(whole.any()):
        raise CaptureModuleError(f"{what}: a float key padding mask whose finite fill masks every key of an element: "
                                 "torch's softmax there is 1/S of float32's rounding, not a mask: use -inf or a "
                                 "bool mask")
    bias = m.masked_fill(masked, 0.0).to(torch.float32)
    return masked, (bias if bool(bias.any()) else None)


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
