"""Traceable stand-ins for torch.nn modules that torch.fx keeps as opaque
leaves: nn.MultiheadAttention (self- and cross-attention),
nn.TransformerEncoderLayer, nn.TransformerEncoder, the decoder
layer, decoder and nn.Transformer; nn.GRU, nn.LSTM, nn.RNN (unrolled over
the traced sequence length) and their cells; nn.Bilinear,
nn.CosineSimilarity and nn.PairwiseDistance. Their forward is a fused fast path
or a long function with Python control flow on tensor properties, so fx
records one call ptec has no kernel for. The stand-ins compute the same
function from the same parameters with the operators ptec captures (linear,
reshape, transpose, matmul, softmax, LayerNorm, the activation), so the
layer lowers like any other attention block.

Scope: any batch (the heads of batch element b are rows b * heads ..
of the [batch * heads, tokens, head_dim] matmuls, torch's order), query =
key = value dimensions. Attention masks (attn_mask / src_mask / mask: bool,
or float holding only 0 and -inf; [L, S] or [batch * heads, L, S]) and key
padding masks ([batch, S], bool or 0/-inf) that are constants at trace time
become one boolean mask of a masked softmax (ptec::quantized_softmax_masked).
need_weights gives the attention weights (averaged over the heads or not),
dropped from the graph when unread. A mask computed from the model's input,
or a float mask with other values, is refused in one line naming the
module. Recurrent layers take a given initial state, proj_size and packed
input (capture_packed_sequences). Anything else keeps the original
module, which capture then reports as unsupported with its module path."""
from __future__ import annotations

import inspect
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .ir import masked_softmax_float
from .capture_fp32_distances import stays_a_call
from .capture_module_forms import OriginalAttributes     # a stand-in answers the original's attributes
from .model_copy import model_copy


class CaptureModuleError(ValueError):
    """A stand-in module called in a way it does not cover; one line."""


# State across runs (--stateful). Both are fx leaves (torch.fx.wrap below):
# capture turns them into the graph's `state` and `state_write` nodes, which
# lower to a planned tensor with an initial value (the .pte's mutable data)
# and a copy into it after everything else of the run. Run eagerly they do
# what the program does, so a stand-in carries its state across calls.
def ptec_state(buffer, anchor, bound=None):
    """The value `buffer` holds at the start of the run (bound: a known
    bound on its magnitude, for its int8 grid, or None: calibrated).
    anchor: a tensor of the run (the layer's input), unused: it makes
    torch.fx record the read (a buffer alone is no traced value)."""
    return buffer.detach().clone()


def ptec_state_write(buffer, value):
    """Stores `value` into `buffer` for the next run; returns value."""
    with torch.no_grad():
        buffer.copy_(value.detach())
    return value


torch.fx.wrap("ptec_state")
torch.fx.wrap("ptec_state_write")


def masked_softmax(scores, mask):
    """Softmax over the last dim with mask's True positions as -infinity
    (a fully masked row gives zeros). torch.fx records it as one call
    (capture makes it the graph op masked_softmax); `mask` is a constant."""
    return masked_softmax_float(scores, mask)


torch.fx.wrap("masked_softmax")

# The mask arguments of the covered modules, by their forward's parameter names.
MASK_ARGS = ("attn_mask", "key_padding_mask", "is_causal", "src_mask", "src_key_padding_mask", "mask",
             "tgt_mask", "tgt_key_padding_mask", "tgt_is_causal", "memory_mask", "memory_key_padding_mask")


def _as_bool_mask(m: torch.Tensor, arg: str, what: str) -> torch.Tensor:
    """A mask as bool, True where attention is not allowed: bool as is,
    uint8 as bool (torch's deprecated form), float only with values 0 and
    -inf (torch adds a float mask to the scores: -inf masks, 0 keeps)."""
    if m.dtype == torch.bool:
        return m
    if m.dtype == torch.uint8:
        return m.bool()
    if m.is_floating_point():
        masked = torch.isneginf(m)
        if not bool(((m == 0) | masked).all()):
            raise CaptureModuleError(f"{what}: a float {arg} with values other than 0 and -inf: ptec takes "
                                     "boolean masks and 0/-inf float masks (int8 scores cannot add a general bias "
                                     "exactly)")
        return masked
    raise CaptureModuleError(f"{what}: a {arg} of dtype {m.dtype}: ptec takes bool or 0/-inf float masks")


def attention_mask(attn_mask, key_padding_mask, is_causal, heads: int, tokens: int, what: str, batch: int = 1,
                   source: int = 0, padding_as_bool=None):
    """One bool mask [1 or batch * heads, L, S] (True: masked) from concrete
    masks, None when nothing is masked: torch's layout of the scores, the
    heads of batch element b at rows b * heads .. (b + 1) * heads - 1.
    attn_mask [L, S] (every head of every element) or [batch * heads, L, S];
    key_padding_mask [batch, S] (a key masked for every query of that
    element). is_causal=True needs the mask (torch requires it) and the
    mask must be the causal one. source: S, the keys' count (0: L, self-attention).
    padding_as_bool: how torch 1.13 takes a float key_padding_mask with
    values other than 0 and -inf (capture_attention_bias.padding): True its
    nonzeros (a fast path), False added to the scores (its nonzeros beside
    a bool attn_mask), None refused (a caller that does not say)."""
    if not tokens:          # traced without a record of the call: the masks' own size
        tokens = next((int(m.shape[-1]) for m in (attn_mask, key_padding_mask) if m is not None), 0)
    s = source or tokens
    full = torch.zeros(1, tokens, s, dtype=torch.bool)
    if is_causal and attn_mask is None:
        raise CaptureModuleError(f"{what}: is_causal=True without the mask: pass the causal mask too, as torch "
                                 "requires")
    bias = None if attn_mask is None else additive_bias(attn_mask.detach(), what)    # a float bias (ALiBi)
    if attn_mask is not None:
        a = _as_bool_mask(attn_mask.detach() if bias is None else torch.isneginf(attn_mask), "attention mask", what)
        if tuple(a.shape) == (tokens, s):
            a = a.unsqueeze(0)
        elif tuple(a.shape) != (batch * heads, tokens, s):
            raise CaptureModuleError(f"{what}: an attention mask of shape {list(a.shape)}: ptec takes [L, S] or "
                                     f"[batch * heads, L, S] = [{tokens}, {s}] or "
                                     f"[{batch * heads}, {tokens}, {s}]")
        if is_causal and not torch.equal(a, torch.triu(torch.ones_like(a), 1).expand_as(a)):
            raise CaptureModuleError(f"{what}: is_causal=True with a mask that is not the causal one")
        full = full | a
    if key_padding_mask is not None:
        k = key_padding_mask.detach()
        if padding_as_bool is not None and general_padding(k):
            as_bool = padding_as_bool or (attn_mask is not None and not attn_mask.is_floating_point())
            k, k_bias = padding(k, as_bool, what)
            if k_bias is not None:          # [N, S] added to every query of every head: [N h, 1, S]
                k_bias = k_bias.reshape(batch, 1, 1, s).expand(batch, heads, 1, s).reshape(batch * heads, 1, s)
                bias = k_bias if bias is None else bias + k_bias
        k = _as_bool_mask(k, "key padding mask", what)
        if k.dim() == 1 and batch == 1:         # torch's unbatched form: [S]
            k = k.reshape(1, -1)
        if tuple(k.shape) != (batch, s):
            raise CaptureModuleError(f"{what}: a key padding mask of shape {list(k.shape)}: ptec takes [batch, S] "
                                     f"= [{batch}, {s}]")
        k = (k.reshape(1, 1, s) if batch == 1 else
             k.reshape(batch, 1, 1, s).expand(batch, heads, 1, s).reshape(batch * heads, 1, s))
        full = full | k
    if bias is not None:        # torch's additive form: -inf where masked, the bias elsewhere
        return additive_form(full, bias, heads, batch)
    return full if bool(full.any()) else None


def _input_free(node: "torch.fx.Node") -> bool:
    """Whether a traced value depends on no model input except through its
    shape (x.size(1), x.shape: static for a trace). The nodes it is made of
    are marked so capture drops them once nothing else uses them."""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.op == "placeholder":
            return False
        if n.op == "call_method" and n.target in ("size", "dim"):
            continue
        if n.op == "call_function" and n.target is getattr and len(n.args) > 1 and \
                n.args[1] in ("shape", "ndim", "dtype", "device"):
            continue
        stack.extend(n.all_input_nodes)
    for n in seen:
        n.meta["ptec_mask_only"] = True
    return True


class _MaskArgs:
    """Mask arguments as concrete tensors. Run eagerly they are; traced by
    torch.fx a mask made in forward from no input (torch.triu(torch.ones(..)),
    a buffer taken through an op) arrives as a Proxy, and its value is the
    one the module got in the same call when the model ran on its example
    inputs (recorded by with_traceable_modules: `calls`, one dict of mask
    arguments and tokens per call, in call order; tracing calls the module
    in the same order)."""

    what = "nn.MultiheadAttention"
    calls: list = []
    traced_calls = 0

    def begin_call(self, src) -> dict:
        """The recorded arguments of this call (traced calls only)."""
        if not isinstance(src, torch.fx.Proxy) or not self.calls:
            return {}
        known = self.calls[self.traced_calls % len(self.calls)]
        self.traced_calls += 1
        return known

    def concrete(self, value, arg: str, known: dict):
        if value is None or isinstance(value, (bool, torch.Tensor)):
            return value
        if isinstance(value, torch.fx.Proxy):
            if not _input_free(value.node):
                raise CaptureModuleError(f"{self.what}: {arg} is computed from the model's input: ptec takes masks "
                                         "that are constants at trace time")
            if not isinstance(known.get(arg), (bool, torch.Tensor)):
                raise CaptureModuleError(f"{self.what}: {arg} has no value from the example run: ptec takes masks "
                                         "that are constants at trace time")
            return known[arg]
        raise CaptureModuleError(f"{self.what}: {arg} of type {type(value).__name__} is not a tensor")


class SelfAttention(OriginalAttributes, _MaskArgs, nn.Module):
    """nn.MultiheadAttention's function for batch 1: the input
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
        self.what, self.calls = "nn.MultiheadAttention", []
        self.__dict__["formula"] = formula_attention(mha)      # a mask computed from the input (not a child)
        self.out = nn.Linear(e, e, bias=mha.out_proj.bias is not None)
        self.out.weight = nn.Parameter(mha.out_proj.weight.detach().clone())
        if mha.out_proj.bias is not None:
            self.out.bias = nn.Parameter(mha.out_proj.bias.detach().clone())

    def attend(self, x, mask=None, key=None, value=None, weights=None):
        """x: [batch, tokens, embed] (batch first); mask: None or a constant
        bool [1 or batch * heads, tokens, tokens], True where attention is
        not allowed. key, value: [batch, source tokens, embed] for
        cross-attention (None: x). weights: None (the output alone), or
        True / False: also the attention weights [batch, L, S] averaged
        over the heads / [batch, heads, L, S] per head."""
        h, d = self.heads, self.head_dim
        key = x if key is None else key
        value = x if value is None else value
        b, n, s = x.shape[0], x.shape[1], key.shape[1]
        if b == 1:          # the heads are the batch of the matmuls
            q = self.q(x).reshape(-1, h, d).transpose(0, 1) * (1.0 / math.sqrt(d))
            k = self.k(key).reshape(-1, h, d).transpose(0, 1)
            v = self.v(value).reshape(-1, h, d).transpose(0, 1)
        else:               # [batch * heads, tokens, head_dim], torch's order of the rows
            q = self.q(x).reshape(b, n, h, d).transpose(1, 2).reshape(b * h, n, d) * (1.0 / math.sqrt(d))
            k = self.k(key).reshape(b, s, h, d).transpose(1, 2).reshape(b * h, s, d)
            v = self.v(value).reshape(b, s, h, d).transpose(1, 2).reshape(b * h, s, d)
        scores, mask = biased(q @ k.transpose(1, 2), mask)          # a float mask's bias added
        p = torch.softmax(scores, -1) if mask is None else masked_softmax(scores, mask)
        a = p @ v                                                      # [batch * heads, tokens, head_dim]
        if b == 1:
            y = self.out(a.transpose(0, 1).reshape(1, -1, self.embed))
        else:
            y = self.out(a.reshape(b, h, n, d).transpose(1, 2).reshape(b, n, self.embed))
        if weights is None:
            return y
        per_head = p.reshape(b, h, n, s)
        w = per_head.mean(1) if weights else per_head
        for t in (per_head, w):         # traced: dropped when the model does not read the weights
            if isinstance(t, torch.fx.Proxy):
                t.node.meta["ptec_if_read"] = True
        return y, w

    def mask_for(self, x, attn_mask, key_padding_mask, is_causal, names, known: dict, what: str, source: int = 0,
                 padding_as_bool=None):
        """The combined constant mask for a [batch, tokens, embed] input;
        known: the recorded arguments of this call; what: the module called;
        padding_as_bool: attention_mask's."""
        self.what = what
        tokens = x.shape[1] if isinstance(x, torch.Tensor) else known.get("tokens", 0)
        # traced, the shape is the example's (capture_tracer) unless the record has it
        batch = x.shape[0] if isinstance(x, torch.Tensor) else known.get("batch", x.shape[0])
        return attention_mask(self.concrete(attn_mask, names[0], known),
                              self.concrete(key_padding_mask, names[1], known),
                              bool(self.concrete(is_causal, "is_causal", known)), self.heads, tokens, what,
                              int(batch), int(source), padding_as_bool)

    def forward(self, query, key=None, value=None, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        if any(isinstance(m, torch.fx.Proxy) and not _input_free(m.node) for m in (attn_mask, key_padding_mask)):
            self.begin_call(query)          # (the recorded calls stay in order)
            return self.formula.forward(query, key, value, key_padding_mask, need_weights, attn_mask,
                                        average_attn_weights, is_causal)
        cross = (key is not None and key is not query) or (value is not None and value is not query)
        if cross and is_causal:
            raise CaptureModuleError(f"{self.what} with key or value other than the query and is_causal: "
                                     "pass the mask itself")
        unbatched = query.dim() == 2
        if unbatched:       # [L, E]: one sequence, torch's unbatched form
            query = query.unsqueeze(1 if not self.batch_first else 0)
            key, value = (None if t is None else t.unsqueeze(1 if not self.batch_first else 0)
                          for t in (key, value))
        x = query if self.batch_first else query.transpose(0, 1)
        weights = bool(average_attn_weights) if need_weights else None
        if cross:
            key, value = (t if self.batch_first else t.transpose(0, 1) for t in (key, value))
            mask = self.mask_for(x, attn_mask, key_padding_mask, False, ("attn_mask", "key_padding_mask"),
                                 self.begin_call(query), self.what, source=key.shape[1], padding_as_bool=False)
            got = self.attend(x, mask, key, value, weights)
        else:
            # torch's inference fast path (self-attention of a batch, no attn_mask) reads a float padding as a bool
            fast = self.formula is not None and self.formula.fast and attn_mask is None and not unbatched
            mask = self.mask_for(x, attn_mask, key_padding_mask, is_causal, ("attn_mask", "key_padding_mask"),
                                 self.begin_call(query), self.what, padding_as_bool=fast)
            got = self.attend(x, mask, weights=weights)
        y, w = (got, None) if weights is None else got
        y = y if self.batch_first else y.transpose(0, 1)
        if unbatched:
            y = y.squeeze(0 if self.batch_first else 1)
            w = None if w is None else w.squeeze(0)
        return y, w


class _CalledActivation(nn.Module):
    """A transformer layer's activation given as a function (torch.tanh,
    F.silu, a lambda): called as the layer calls it, so it traces as
    written."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def layer_activation(act) -> nn.Module:
    """The activation of nn.TransformerEncoderLayer / DecoderLayer as a
    module: its own module, nn.ReLU / nn.GELU for F.relu / F.gelu (the
    layer's "relu" / "gelu"), any other function called as given."""
    if isinstance(act, nn.Module):
        return act
    if act is F.relu:
        return nn.ReLU()
    if act is F.gelu:
        return nn.GELU()
    return _CalledActivation(act)


class EncoderLayer(OriginalAttributes, _MaskArgs, nn.Module):
    """nn.TransformerEncoderLayer, post-norm or pre-norm (norm_first)."""

    def __init__(self, layer: nn.TransformerEncoderLayer):
        super().__init__()
        self.what, self.calls = "nn.TransformerEncoderLayer", []
        self.attn = SelfAttention(layer.self_attn)
        self.linear1, self.linear2 = layer.linear1, layer.linear2
        self.norm1, self.norm2 = layer.norm1, layer.norm2
        self.norm_first = layer.norm_first
        self.batch_first = layer.self_attn.batch_first
        self.activation = layer_activation(layer.activation)

    def run(self, src, mask=None, attend=None):
        """src in the layer's layout; mask: the combined constant mask;
        attend: the self-attention of a computed mask (capture_encoder_masks)."""
        x = src if self.batch_first else src.transpose(0, 1)
        attend = attend or (lambda v: self.attn.attend(v, mask))
        if self.norm_first:
            x = x + attend(self.norm1(x))
            x = x + self.linear2(self.activation(self.linear1(self.norm2(x))))
        else:
            x = self.norm1(x + attend(x))
            x = self.norm2(x + self.linear2(self.activation(self.linear1(x))))
        return x if self.batch_first else x.transpose(0, 1)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if computed_mask(src_mask, src_key_padding_mask):
            return computed_mask_layer(self, src, src_mask, src_key_padding_mask)
        x = src if self.batch_first else src.transpose(0, 1)
        mask = self.attn.mask_for(x, src_mask, src_key_padding_mask, is_causal, ("src_mask", "src_key_padding_mask"),
                                  self.begin_call(src), self.what, padding_as_bool=layer_fast_path(self, src, src_mask))
        return self.run(src, mask)


def _nested_fast_path(enc: nn.TransformerEncoder) -> bool:
    """Whether torch's inference fast path of this encoder runs the layers
    on a nested tensor when given a key padding mask (and no mask): its
    output is then zero at the padded positions (before the final norm),
    which the stand-in reproduces. The conditions that do not depend on the
    call, as torch 1.13 and 2.x check them."""
    first = enc.layers[0]
    if not isinstance(first, nn.TransformerEncoderLayer) or not getattr(enc, "enable_nested_tensor", False):
        return False
    return (not first.norm_first and first.self_attn.batch_first and first.self_attn._qkv_same_embed_dim
            and getattr(first, "activation_relu_or_gelu", False) and first.norm1.eps == first.norm2.eps
            and first.self_attn.num_heads % 2 == 0)


class Encoder(OriginalAttributes, _MaskArgs, nn.Module):
    """nn.TransformerEncoder: its layers in turn (each with the same masks),
    then its norm if any. Given a left-aligned key padding mask and no mask,
    torch (eval, no grad) runs the layers on the kept positions only and
    pads the output with zeros: the stand-in zeroes the padded positions."""

    def __init__(self, enc: nn.TransformerEncoder):
        super().__init__()
        self.what, self.calls = "nn.TransformerEncoder", []
        self.layers = nn.ModuleList(EncoderLayer(layer) for layer in enc.layers)
        self.norm = enc.norm
        self.nested = _nested_fast_path(enc)

    def padded_zero(self, x, mask, key_padding_mask, known: dict):
        """x times a constant [batch, tokens, 1] of 1 (kept) and 0 (padded)
        where torch's nested fast path applies (its tokens cut to the
        longest kept length, as torch's padding of the nested output), else x."""
        if not self.nested or key_padding_mask is None or mask is not None or x.dim() != 3:
            return x
        pad = self.concrete(key_padding_mask, "src_key_padding_mask", known)
        if pad is None or pad.dim() != 2:
            return x
        # (torch's logical_not of a float mask: its zeros are kept)
        keep = pad.detach() == 0 if pad.is_floating_point() else ~_as_bool_mask(pad.detach(), "key padding mask",
                                                                                  self.what)
        # left aligned: each row's kept positions come first (torch's own check)
        if not bool((keep.int().cumprod(1).bool() == keep).all()) or bool(keep.all()):
            return x
        # torch pads to the longest kept length: the output may be shorter than the input
        longest = int(keep.sum(1).max())
        if longest < keep.shape[1]:
            x, keep = x[:, :longest], keep[:, :longest]
        return x if bool(keep.all()) else x * keep.to(torch.float32).unsqueeze(-1)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        if computed_mask(mask, src_key_padding_mask):
            return computed_mask_encoder(self, src, mask, src_key_padding_mask)
        first = self.layers[0]
        x = src if first.batch_first else src.transpose(0, 1)
        known = self.begin_call(src)
        # the nested fast path keeps the float padding's zeros; each layer's own fast path reads its nonzeros
        as_bool = (self.nested and mask is None and src.dim() == 3) or layer_fast_path(first, src, mask)
        combined = first.attn.mask_for(x, mask, src_key_padding_mask, is_causal, ("mask", "src_key_padding_mask"),
                                       known, self.what, padding_as_bool=as_bool)
        x = src
        for layer in self.layers:
            x = layer.run(x, combined)
        x = self.padded_zero(x, mask, src_key_padding_mask, known)
        return x if self.norm is None else self.norm(x)


class DecoderLayer(OriginalAttributes, _MaskArgs, nn.Module):
    """nn.TransformerDecoderLayer, post-norm or pre-norm: self-attention of
    the target (its masks as the encoder layer's), cross-attention to the
    memory (with the memory masks, as the target's: S the memory's length),
    the feed-forward block."""

    def __init__(self, layer: nn.TransformerDecoderLayer):
        super().__init__()
        self.what, self.calls = "nn.TransformerDecoderLayer", []
        self.attn = SelfAttention(layer.self_attn)
        self.cross = SelfAttention(layer.multihead_attn)
        self.linear1, self.linear2 = layer.linear1, layer.linear2
        self.norm1, self.norm2, self.norm3 = layer.norm1, layer.norm2, layer.norm3
        self.norm_first = layer.norm_first
        self.batch_first = layer.self_attn.batch_first
        self.activation = layer_activation(layer.activation)

    def run(self, tgt, memory, mask=None, memory_mask=None):
        """tgt, memory in the layer's layout; mask, memory_mask: the
        target's and the memory's combined constant masks."""
        x = tgt if self.batch_first else tgt.transpose(0, 1)
        m = memory if self.batch_first else memory.transpose(0, 1)
        if self.norm_first:
            x = x + self.attn.attend(self.norm1(x), mask)
            x = x + self.cross.attend(self.norm2(x), memory_mask, m, m)
            x = x + self.linear2(self.activation(self.linear1(self.norm3(x))))
        else:
            x = self.norm1(x + self.attn.attend(x, mask))
            x = self.norm2(x + self.cross.attend(x, memory_mask, m, m))
            x = self.norm3(x + self.linear2(self.activation(self.linear1(x))))
        return x if self.batch_first else x.transpose(0, 1)

    def target_mask(self, tgt, memory, tgt_mask, tgt_key_padding_mask, tgt_is_causal, memory_mask,
                    memory_key_padding_mask, known: dict):
        """The target's and the memory's combined constant masks."""
        x = tgt if self.batch_first else tgt.transpose(0, 1)
        m = memory if self.batch_first else memory.transpose(0, 1)
        mask = self.attn.mask_for(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal,
                                  ("tgt_mask", "tgt_key_padding_mask"), known, self.what)
        if memory_mask is None and memory_key_padding_mask is None:
            return mask, None
        return mask, self.cross.mask_for(x, memory_mask, memory_key_padding_mask, False,
                                         ("memory_mask", "memory_key_padding_mask"), known, self.what,
                                         source=m.shape[1])

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        mask, memory_mask = self.target_mask(tgt, memory, tgt_mask, tgt_key_padding_mask, tgt_is_causal,
                                             memory_mask, memory_key_padding_mask, self.begin_call(tgt))
        return self.run(tgt, memory, mask, memory_mask)


class Decoder(OriginalAttributes, _MaskArgs, nn.Module):
    """nn.TransformerDecoder: its layers in turn (each with the same masks
    and memory), then its norm if any."""

    def __init__(self, dec: nn.TransformerDecoder):
        super().__init__()
        self.what, self.calls = "nn.TransformerDecoder", []
        self.layers = nn.ModuleList(DecoderLayer(layer) for layer in dec.layers)
        self.norm = dec.norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        first = self.layers[0]
        first.what = self.what
        mask, memory_mask = first.target_mask(tgt, memory, tgt_mask, tgt_key_padding_mask, tgt_is_causal,
                                              memory_mask, memory_key_padding_mask, self.begin_call(tgt))
        x = tgt
        for layer in self.layers:
            x = layer.run(x, memory, mask, memory_mask)
        return x if self.norm is None else self.norm(x)


class Transformer(OriginalAttributes, _MaskArgs, nn.Module):
    """nn.Transformer: the encoder over src, the decoder over tgt with the
    encoder's output as memory."""

    def __init__(self, t: nn.Transformer):
        super().__init__()
        self.what, self.calls = "nn.Transformer", []
        self.encoder, self.decoder = Encoder(t.encoder), Decoder(t.decoder)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None):
        known = self.begin_call(src)
        # masks made in forward are Proxies here: their recorded values go down as tensors
        src_mask, src_key_padding_mask, tgt_mask, tgt_key_padding_mask, memory_mask, memory_key_padding_mask = (
            self.concrete(v, k, known) for v, k in ((src_mask, "src_mask"),
                                                    (src_key_padding_mask, "src_key_padding_mask"),
                                                    (tgt_mask, "tgt_mask"),
                                                    (tgt_key_padding_mask, "tgt_key_padding_mask"),
                                                    (memory_mask, "memory_mask"),
                                                    (memory_key_padding_mask, "memory_key_padding_mask")))
        memory = self.encoder(src, src_mask, src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask)


# ---------------------------------------------------------------------------
# Two-input layers from element-wise math, sums and matmuls

class CosineSimilarity(OriginalAttributes, nn.Module):
    """nn.CosineSimilarity: the one call torch.cosine_similarity, which
    capture_fp32_distances computes in fp32 as torch does, sum(x1 * x2) /
    sqrt(max(sum(x1^2) * sum(x2^2), eps^2)) over dim."""

    def __init__(self, m: nn.CosineSimilarity):
        super().__init__()
        self.dim, self.eps = m.dim, float(m.eps)

    def forward(self, x1, x2):
        # one torch.cosine_similarity call, computed in fp32 (capture_fp32_distances: its int8 form
        # lost short rows by tens of output steps)
        return torch.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(OriginalAttributes, nn.Module):
    """nn.PairwiseDistance: the p-norm of x1 - x2 + eps over the last dim,
    as (sum |d|^p)^(1/p) (p = 2: sqrt of the sum of squares)."""

    def __init__(self, m: nn.PairwiseDistance):
        super().__init__()
        self.p, self.eps, self.keepdim = float(m.norm), float(m.eps), bool(m.keepdim)

    def forward(self, x1, x2):
        d = x1 - x2 + self.eps
        if self.p == 2.0 and d.is_complex():       # (torch's norm of a complex difference: of its magnitudes)
            d = torch.abs(d)
        if stays_a_call(torch.pairwise_distance, self.p) and not d.is_complex():
            # p other than 1, 2 (and 0, inf): one call, computed in fp32 (capture_fp32_distances: in
            # int8 each |d|^p below a step rounded to 0)
            return torch.pairwise_distance(x1, x2, self.p, self.eps, self.keepdim)
        powers = d * d if self.p == 2.0 else torch.abs(d) ** self.p
        total = powers.sum(-1, keepdim=self.keepdim)
        return torch.sqrt(total) if self.p == 2.0 else total ** (1.0 / self.p)


class Bilinear(OriginalAttributes, nn.Module):
    """nn.Bilinear, y[n, o] = x1[n] A[o] x2[n] + b[o]: a linear of x2 by A
    as an [out * in1, in2] matrix, reshaped to [N, out, in1], times x1 as a
    column (a batch matmul), plus the bias: a linear by the identity with
    that bias (an int8 add would broadcast a [1, out] bias over more rows,
    which only fp32 does)."""

    def __init__(self, m: nn.Bilinear):
        super().__init__()
        out, in1, in2 = m.weight.shape
        self.out, self.in1 = int(out), int(in1)
        self.proj = nn.Linear(int(in2), self.out * self.in1, bias=False)
        self.proj.weight = nn.Parameter(m.weight.detach().reshape(self.out * self.in1, int(in2)).clone())
        self.biased = None
        if m.bias is not None:
            self.biased = nn.Linear(self.out, self.out)
            self.biased.weight = nn.Parameter(torch.eye(self.out))
            self.biased.bias = nn.Parameter(m.bias.detach().clone())

    def forward(self, x1, x2):
        # [.., out, in1] keeps x2's leading dims, so the batch matmul's are x1's (equal dims)
        z = self.proj(x2).reshape(x2.shape[:-1] + (self.out, self.in1))
        y = (z @ x1.unsqueeze(-1)).squeeze(-1)
        return y if self.biased is None else self.biased(y)


def _bilinear_call(x1, x2, weight, bias=None):
    """F.bilinear with constant weight and bias: Bilinear's forward, the
    projection an F.linear by the reshaped constant (capture rebuilds it as
    an nn.Linear: capture_calls.FUNCTIONAL_MODULES); the bias a linear by
    the identity, as in Bilinear."""
    out, in1, in2 = weight.shape
    z = F.linear(x2, weight.detach().reshape(out * in1, in2).clone())
    z = z.reshape(x2.shape[:-1] + (int(out), int(in1)))
    y = (z @ x1.unsqueeze(-1)).squeeze(-1)
    if bias is None:
        return y
    return F.linear(y, torch.eye(int(out)), bias.detach().clone())


# Functionals that are a two-input stand-in's forward (F.pdist, whose pairs need
# the traced shape: capture_rewrites): (parameter names,
# how many leading ones are traced tensors, the call). The tracer runs them
# on its proxies, so the trace holds their ops, not the opaque call (a
# stand-in's forward is called directly: fx traces only the root's modules).
FUNCTIONAL_STAND_INS = {
    # (torch.cosine_similarity stays one call: capture_fp32_distances)
    torch.pairwise_distance: (("x1", "x2", "p", "eps", "keepdim"), 2,
                              lambda x1, x2, p=2.0, eps=1e-6, keepdim=False: None if stays_a_call(
                                  torch.pairwise_distance, p, x1, x2) else PairwiseDistance(
                                  nn.PairwiseDistance(p, eps, keepdim)).forward(x1, x2)),
    torch.bilinear: (("input1", "input2", "weight", "bias"), 2, _bilinear_call),
}

from .capture_losses import STAND_INS as _LOSSES        # noqa: E402 - F.mse_loss, cross_entropy, batch_norm, ...
from .capture_constant_gathers import STAND_INS as _GATHERS     # noqa: E402 - diagflat, combinations, vander, ...
FUNCTIONAL_STAND_INS.update(_LOSSES)
FUNCTIONAL_STAND_INS.update(_GATHERS)
from .capture_margin_losses import STAND_INS as _MARGIN_LOSSES  # noqa: E402 - triplet / margin / nll losses, ...
FUNCTIONAL_STAND_INS.update(_MARGIN_LOSSES)
from .capture_known_calls import STAND_INS as _KNOWN_CALLS      # noqa: E402 - torch.dist, result_type, rrelu(training)
FUNCTIONAL_STAND_INS.update(_KNOWN_CALLS)
from .capture_unique_inverse import STAND_INS as _UNIQUE_INVERSE  # noqa: E402 - unique(return_inverse=True)
FUNCTIONAL_STAND_INS.update(_UNIQUE_INVERSE)
from .capture_unique_counts import STAND_INS as _UNIQUE_COUNTS  # noqa: E402 - unique(return_counts=True), dim=
FUNCTIONAL_STAND_INS.update(_UNIQUE_COUNTS)
from .capture_computed_weights import add_computed_weight_stand_ins, formula_attention  # noqa: E402 - F.conv1d(x, w(x))
add_computed_weight_stand_ins(FUNCTIONAL_STAND_INS)
from .capture_encoder_masks import (computed as computed_mask, encoder_forward as computed_mask_encoder,  # noqa: E402
                                    layer_forward as computed_mask_layer,  # encoder masks computed from the input
                                    _fast as layer_fast_path)
from .capture_attention_bias import (additive_bias, additive_form, biased, general_padding,  # noqa: E402
                                     padding)  # float attn_mask biases, constant float key padding masks
from .capture_packed_lengths import step_keeps  # noqa: E402 - pack_padded_sequence's lengths per step


# ---------------------------------------------------------------------------
# Recurrent layers, unrolled over the traced sequence length

def _linear(weight, bias) -> nn.Linear:
    lin = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    lin.weight = nn.Parameter(weight.detach().clone())
    if bias is not None:
        lin.bias = nn.Parameter(bias.detach().clone())
    return lin


def _zero_state_gates(module: nn.Module, hh: nn.Linear, gates: int, hidden: int, name: str) -> None:
    """W_hh 0 + b_hh = b_hh: the hidden projection of the zero state, kept
    as constant buffers (one per gate) so the first step needs no matmul."""
    b = hh.bias.detach() if hh.bias is not None else torch.zeros(gates * hidden)
    for k in range(gates):
        module.register_buffer(f"{name}_{k}", b[k * hidden:(k + 1) * hidden].clone().reshape(1, hidden))


def gru_step(x_gates, h, hh: nn.Linear, hidden: int, zero):
    """PyTorch's GRU update from the input's gate pre-activations [1, 3H]
    (W_ih x + b_ih) and h [1, H] (None: the zero state, whose hidden gates
    are `zero`, b_hh per gate)."""
    xr, xz, xn = x_gates[:, :hidden], x_gates[:, hidden:2 * hidden], x_gates[:, 2 * hidden:]
    if h is None:
        hr, hz, hn = zero
    else:
        gh = hh(h)
        hr, hz, hn = gh[:, :hidden], gh[:, hidden:2 * hidden], gh[:, 2 * hidden:]
    r = torch.sigmoid(xr + hr)
    z = torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return (1.0 - z) * n if h is None else n + z * (h - n)


def lstm_step(x_gates, h, c, hh: nn.Linear, hidden: int, zero):
    """PyTorch's LSTM update (gates i, f, g, o); h, c None: the zero state,
    whose hidden gates are `zero`."""
    if h is None:
        xs = [x_gates[:, k * hidden:(k + 1) * hidden] + zero[k] for k in range(4)]
    else:
        g = x_gates + hh(h)
        xs = [g[:, k * hidden:(k + 1) * hidden] for k in range(4)]
    i = torch.sigmoid(xs[0])
    f = torch.sigmoid(xs[1])
    cand = torch.tanh(xs[2])
    o = torch.sigmoid(xs[3])
    c = i * cand if c is None else f * c + i * cand
    return o * torch.tanh(c), c


class LSTMLayer(nn.Module):
    """One nn.LSTM layer over a [1, T, I] sequence from the zero state, kept
    whole by the tracer (a leaf): capture makes it one `lstm` node, which
    the cortex_m backend lowers to ptec::quantized_lstm (docs/kernels.md,
    "LSTM")."""

    def __init__(self, weight_ih, weight_hh, bias_ih, bias_hh):
        super().__init__()
        self.weight_ih = nn.Parameter(weight_ih.detach().clone())
        self.weight_hh = nn.Parameter(weight_hh.detach().clone())
        b = torch.zeros(weight_ih.shape[0])
        for extra in (bias_ih, bias_hh):
            if extra is not None:
                b = b + extra.detach()
        self.bias = nn.Parameter(b)

    def forward(self, seq):
        from .ir import lstm_layer
        return lstm_layer(seq, self.weight_ih, self.weight_hh, self.bias)[0]


class LSTMFinalCell(LSTMLayer):
    """The last cell state of an LSTMLayer (c_n). The kernel does not give
    it: capture unrolls the layer when a model uses it."""

    def forward(self, seq):
        from .ir import lstm_layer
        return lstm_layer(seq, self.weight_ih, self.weight_hh, self.bias)[1][:, -1]


def rnn_step(x_gates, h, hh: nn.Linear, relu: bool, zero):
    """nn.RNN's update: tanh (or relu) of W_ih x + b_ih + W_hh h + b_hh; h
    None: the zero state, whose hidden term is `zero`, b_hh."""
    v = x_gates + (zero[0] if h is None else hh(h))
    return torch.relu(v) if relu else torch.tanh(v)


def _known_zero(v) -> bool:
    """Whether v is a tensor known to be all zeros: a tensor, or a traced
    value the tracer knows and that does not depend on the input."""
    if isinstance(v, torch.fx.Proxy):
        tracer = v.tracer
        if not (hasattr(tracer, "fixed") and tracer.fixed(v.node)):
            return False
        v = tracer.value(v.node)
    return isinstance(v, torch.Tensor) and not bool(v.any())


class Recurrent(OriginalAttributes, nn.Module):
    """nn.GRU / nn.LSTM / nn.RNN (tanh or relu), one or both directions, any
    number of layers, any batch, unrolled over the sequence length the
    model was traced with: per layer and direction one input projection of
    the whole sequence, then per step the hidden projection (the same
    weights every step: the program stores them once) and the gate
    arithmetic. A backward direction walks the steps from the last; its
    outputs join the forward ones along the features, as PyTorch's.

    The initial state is zero, the state the last run left (--stateful),
    or the one the call gives (h0, or (h0, c0) for the LSTM: constants or
    values computed in the program, [layers * directions, batch, H]). An
    LSTM with proj_size > 0 projects each step's h by W_hr (no bias), and
    its hidden projection reads the projected h. A packed input
    (capture_packed_sequences: pack_padded_sequence with constant lengths)
    runs each sequence for its own length: past it the step's output is
    zero and the state is held, so h_n is the state at its own last step.
    Lengths computed in the program (capture_packed_lengths) run all the
    padded batch's steps, whatever lengths the example had."""

    def __init__(self, rnn, steps: int, stateful: bool = False, lstm_kernel: bool = False):
        super().__init__()
        self.kind = {nn.LSTM: "lstm", nn.GRU: "gru"}.get(type(rnn), "rnn")
        self.relu = getattr(rnn, "nonlinearity", "tanh") == "relu"
        self.dirs = 2 if rnn.bidirectional else 1
        self.proj = int(getattr(rnn, "proj_size", 0) or 0)
        # nn.LSTM as one LSTMLayer per layer (one kernel call each) instead of
        # unrolled; stateful, the layers' h and c are the kernel's state
        # tensors (capture marks the lstm nodes), not buffers here. Called
        # with an initial state or a packed input, the layer is unrolled.
        self.lstm_kernel = lstm_kernel and self.kind == "lstm" and self.dirs == 1 and not self.proj
        if self.lstm_kernel:
            args = [[getattr(rnn, f"{w}_l{k}", None) for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
                    for k in range(rnn.num_layers)]
            self.layer = nn.ModuleList(LSTMLayer(*a) for a in args)
            self.final_cell = nn.ModuleList(LSTMFinalCell(*a) for a in args)
        self.hidden, self.layers, self.steps = rnn.hidden_size, rnn.num_layers, steps
        self.out_size = self.proj or self.hidden
        self.stateful = stateful
        if stateful and self.dirs == 2:
            raise CaptureModuleError(f"a bidirectional nn.{type(rnn).__name__} "
                                     "with --stateful: the backward direction needs the whole sequence, "
                                     "which a stream does not have")
        if stateful and not self.lstm_kernel:
            # Per layer the hidden state (and the LSTM's cell state), zero
            # after load and reset; each run starts from what the last left.
            for k in range(self.layers):
                self.register_buffer(f"state_h_l{k}", torch.zeros(1, self.out_size))
                if self.kind == "lstm":
                    self.register_buffer(f"state_c_l{k}", torch.zeros(1, self.hidden))
        self.batch_first = rnn.batch_first
        suffixes = [f"l{k}{'_reverse' if d else ''}" for k in range(self.layers) for d in range(self.dirs)]
        self.ih = nn.ModuleList(_linear(getattr(rnn, f"weight_ih_{sx}"), getattr(rnn, f"bias_ih_{sx}", None))
                                for sx in suffixes)
        self.hh = nn.ModuleList(_linear(getattr(rnn, f"weight_hh_{sx}"), getattr(rnn, f"bias_hh_{sx}", None))
                                for sx in suffixes)
        if self.proj:       # h_t = W_hr (o_t * tanh(c_t))
            self.hr = nn.ModuleList(_linear(getattr(rnn, f"weight_hr_{sx}"), None) for sx in suffixes)
        self.gates = {"lstm": 4, "gru": 3, "rnn": 1}[self.kind]
        for j in range(len(suffixes)):
            _zero_state_gates(self, self.hh[j], self.gates, self.hidden, f"zero_l{j}")

    def _zero(self, j):
        return [getattr(self, f"zero_l{j}_{g}") for g in range(self.gates)]

    def _direction(self, j, seq, h, c, backward: bool, lengths=None):
        """One layer's direction j (index into ih/hh) over seq [B, T, F]
        from h, c (None: the zero state): its outputs [B, T, H] in time
        order, and its last h and c. lengths: each sequence's own length
        (a packed input), else None."""
        gates = self.ih[j](seq)                                      # [B, T, gates]
        # lengths computed in the program: all the padded batch's steps, whatever the
        # example's longest length (self.steps, recorded from torch's packed batch)
        steps = int(seq.shape[1]) if isinstance(lengths, torch.fx.Proxy) else self.steps
        outs = [None] * steps
        batch = seq.shape[0]
        # the zero state's hidden gates (b_hh) as [B, H]: an int8 add takes equal shapes
        zero = self._zero(j) if batch == 1 else [z.expand(batch, -1) for z in self._zero(j)]
        for t in (reversed(range(steps)) if backward else range(steps)):
            g = gates[:, t]
            if self.kind == "gru":
                h_t, c_t = gru_step(g, h, self.hh[j], self.hidden, zero), None
            elif self.kind == "lstm":
                h_t, c_t = lstm_step(g, h, c, self.hh[j], self.hidden, zero)
                if self.proj:
                    h_t = self.hr[j](h_t)
            else:
                h_t, c_t = rnn_step(g, h, self.hh[j], self.relu, zero), None
            # past a sequence's length: its output is zero and its state held, by 0/1
            # factors of the state's shape (an int8 mul takes equal shapes): constants,
            # or computed from lengths of the input (capture_packed_lengths)
            keeps = step_keeps(lengths, t, (self.out_size, self.hidden))
            if keeps is None:
                h, c = h_t, c_t
                outs[t] = h.unsqueeze(1)
                continue
            h_keep, c_keep = keeps
            outs[t] = (h_t * h_keep).unsqueeze(1)
            h = h_t * h_keep if h is None else h_t * h_keep + h * (1.0 - h_keep)
            if c_t is not None:
                c = c_t * c_keep if c is None else c_t * c_keep + c * (1.0 - c_keep)
        return torch.cat(outs, 1), h, c

    def _initial(self, state):
        """(h0, c0) per layer * direction from the call's state, each [B, H]
        or None (the zero state)."""
        n = self.layers * self.dirs
        if state is None:
            return [None] * n, [None] * n
        if self.stateful:
            raise CaptureModuleError(f"nn.{self.kind.upper()} given an initial state with --stateful: the state "
                                     "is the one the last run left; pass no state")
        if self.kind == "lstm":
            if not isinstance(state, (tuple, list)) or len(state) != 2:
                raise CaptureModuleError("nn.LSTM given a state that is not a pair (h0, c0)")
            h0, c0 = state
        else:
            h0, c0 = state, None
        # a state known to be zero (torch.zeros(..) in forward, a zero buffer) is the zero state
        h0 = None if _known_zero(h0) else h0
        c0 = None if _known_zero(c0) else c0
        if self.kind == "lstm" and (h0 is None) != (c0 is None):
            h0 = torch.zeros(n, c0.shape[1], self.out_size) if h0 is None else h0
            c0 = torch.zeros(n, h0.shape[1], self.hidden) if c0 is None else c0
        hs = [None if h0 is None else h0[j] for j in range(n)]
        cs = [None if c0 is None else c0[j] for j in range(n)]
        return hs, cs

    def forward(self, x, state=None):
        from .capture_packed_sequences import PackedInput
        if isinstance(x, nn.utils.rnn.PackedSequence):      # run eagerly: torch's packed batch
            padded, lengths = nn.utils.rnn.pad_packed_sequence(x, self.batch_first)
            out, last = self.forward(PackedInput(padded, [int(n) for n in lengths], self.batch_first), state)
            return nn.utils.rnn.pack_padded_sequence(out.padded, lengths, self.batch_first,
                                                     enforce_sorted=False), last
        packed = x if isinstance(x, PackedInput) else None
        if packed is not None:
            x = packed.padded if packed.batch_first == self.batch_first else packed.padded.transpose(0, 1)
        seq = x if self.batch_first else x.transpose(0, 1)          # [B, T, features]
        last_h, last_c = [], []
        h0s, c0s = self._initial(state)
        if self.lstm_kernel and packed is None and all(h is None for h in h0s + c0s):
            for k in range(self.layers):
                last_c.append(self.final_cell[k](seq).unsqueeze(0))
                seq = self.layer[k](seq)
                last_h.append(seq[:, -1].unsqueeze(0))
            out = seq if self.batch_first else seq.transpose(0, 1)
            return out, (torch.cat(last_h, 0), torch.cat(last_c, 0))
        lengths = None if packed is None else packed.lengths
        if self.lstm_kernel and isinstance(lengths, list) and all(h is None for h in h0s + c0s):
            from .capture_packed_sequences import packed_lstm_layers        # a packed batch on the kernels
            out, last = packed_lstm_layers(self, seq, lengths)
            return packed.again(out if self.batch_first else out.transpose(0, 1), self.batch_first), last
        for k in range(self.layers):
            h = c = None
            if self.stateful:
                # |h| <= 1 whatever the input: a GRU's h is a convex mix of
                # tanh outputs and the last h, an LSTM's is o * tanh(c), a tanh
                # RNN's a tanh. A relu RNN's h and the LSTM's c have no bound.
                bound = None if self.kind == "rnn" and self.relu else 1.0
                h = ptec_state(getattr(self, f"state_h_l{k}"), seq, bound)
                if self.kind == "lstm":
                    c = ptec_state(getattr(self, f"state_c_l{k}"), seq)
            outs = []
            for d in range(self.dirs):
                j = k * self.dirs + d
                if self.stateful:
                    h_in, c_in = (h, c) if d == 0 else (None, None)
                else:
                    h_in, c_in = h0s[j], c0s[j]
                out_d, h_d, c_d = self._direction(j, seq, h_in, c_in, backward=d == 1, lengths=lengths)
                if self.stateful:
                    h_d = ptec_state_write(getattr(self, f"state_h_l{k}"), h_d)
                    if self.kind == "lstm":
                        c_d = ptec_state_write(getattr(self, f"state_c_l{k}"), c_d)
                outs.append(out_d)
                last_h.append(h_d.unsqueeze(0))
                last_c.append(c_d.unsqueeze(0) if c_d is not None else None)
            seq = outs[0] if self.dirs == 1 else torch.cat(outs, 2)
        out = seq if self.batch_first else seq.transpose(0, 1)
        if packed is not None:
            out = packed.again(out, self.batch_first)
        h_n = torch.cat(last_h, 0)
        if self.kind != "lstm":
            return out, h_n
        return out, (h_n, torch.cat(last_c, 0))


class RecurrentCell(OriginalAttributes, nn.Module):
    """nn.GRUCell / nn.LSTMCell / nn.RNNCell: one step (a given state, or the zero state)."""

    def __init__(self, cell):
        super().__init__()
        self.kind = {nn.LSTMCell: "lstm", nn.GRUCell: "gru"}.get(type(cell), "rnn")
        self.relu = getattr(cell, "nonlinearity", "tanh") == "relu"
        self.hidden = cell.hidden_size
        self.ih = _linear(cell.weight_ih, cell.bias_ih)
        self.hh = _linear(cell.weight_hh, cell.bias_hh)
        self.gates = {"lstm": 4, "gru": 3, "rnn": 1}[self.kind]
        _zero_state_gates(self, self.hh, self.gates, self.hidden, "zero")

    def forward(self, x, state=None):
        g = self.ih(x)
        zero = [getattr(self, f"zero_{k}") for k in range(self.gates)]
        if self.kind == "gru":
            return gru_step(g, state, self.hh, self.hidden, zero)
        if self.kind == "rnn":
            return rnn_step(g, state, self.hh, self.relu, zero)
        h, c = (None, None) if state is None else state
        return lstm_step(g, h, c, self.hh, self.hidden, zero)


def _attention_covered(m) -> bool:
    return (isinstance(m, nn.MultiheadAttention) and m._qkv_same_embed_dim
            and m.embed_dim % m.num_heads == 0 and m.bias_k is None and not m.add_zero_attn)


def _decoder_layer_covered(layer) -> bool:
    return (isinstance(layer, nn.TransformerDecoderLayer) and _attention_covered(layer.self_attn)
            and _attention_covered(layer.multihead_attn))


def _stand_in(m: nn.Module, steps=None, stateful: bool = False, lstm_kernel: bool = False):
    """The stand-in of a covered module, else None. steps: the sequence
    length a recurrent layer was called with (traced shapes). stateful:
    recurrent layers keep their state across runs."""
    if getattr(m, "_ptec_decomposed", False):       # a part hooked: torch's forward traced (capture_module_forms)
        return None
    if isinstance(m, nn.CosineSimilarity):
        return CosineSimilarity(m)
    if isinstance(m, nn.PairwiseDistance):
        return PairwiseDistance(m)
    if isinstance(m, nn.Bilinear):
        return Bilinear(m)
    if isinstance(m, (nn.GRU, nn.LSTM, nn.RNN)):
        ok = m.mode in ("GRU", "LSTM", "RNN_TANH", "RNN_RELU") and steps is not None
        return Recurrent(m, steps, stateful, lstm_kernel) if ok else None
    if isinstance(m, (nn.GRUCell, nn.LSTMCell, nn.RNNCell)):
        return RecurrentCell(m)
    if isinstance(m, nn.TransformerEncoder):
        ok = all(isinstance(layer, nn.TransformerEncoderLayer) and _attention_covered(layer.self_attn)
                 for layer in m.layers)
        return Encoder(m) if ok else None
    if isinstance(m, nn.TransformerEncoderLayer):
        return EncoderLayer(m) if _attention_covered(m.self_attn) else None
    if isinstance(m, nn.TransformerDecoderLayer):
        return DecoderLayer(m) if _decoder_layer_covered(m) else None
    if isinstance(m, nn.TransformerDecoder):
        return Decoder(m) if all(_decoder_layer_covered(layer) for layer in m.layers) else None
    if isinstance(m, nn.Transformer):
        ok = (isinstance(m.encoder, nn.TransformerEncoder) and isinstance(m.decoder, nn.TransformerDecoder)
              and all(isinstance(layer, nn.TransformerEncoderLayer) and _attention_covered(layer.self_attn)
                      for layer in m.encoder.layers)
              and all(_decoder_layer_covered(layer) for layer in m.decoder.layers))
        return Transformer(m) if ok else None
    if _attention_covered(m):
        return SelfAttention(m)
    return formula_attention(m)     # add_bias_kv / add_zero_attn: torch's formula (capture_computed_weights)


COVERED = (nn.TransformerEncoder, nn.TransformerEncoderLayer, nn.MultiheadAttention, nn.GRU, nn.LSTM,
           nn.RNN, nn.GRUCell, nn.LSTMCell, nn.RNNCell, nn.TransformerDecoderLayer, nn.TransformerDecoder,
           nn.Transformer, nn.CosineSimilarity, nn.PairwiseDistance, nn.Bilinear)


def sequence_lengths(model: nn.Module, example_inputs) -> dict:
    """{module name: sequence length} of each nn.GRU / nn.LSTM / nn.RNN, from
    one run of the model on its example inputs. A packed input gives its
    longest length, the steps of constant lengths; lengths computed in the
    program run the padded batch's steps instead (Recurrent._direction)."""
    found, hooks = {}, []
    for name, m in model.named_modules():
        if isinstance(m, (nn.GRU, nn.LSTM, nn.RNN)):
            def hook(mod, args, _name=name):
                x = args[0]
                if isinstance(x, nn.utils.rnn.PackedSequence):      # steps: the longest sequence's
                    found[_name] = int(x.batch_sizes.numel())
                elif isinstance(x, torch.Tensor) and x.dim() == 3:
                    found[_name] = int(x.shape[1] if mod.batch_first else x.shape[0])
                elif isinstance(x, torch.Tensor) and x.dim() == 2:     # unbatched [L, H] (capture_unbatched)
                    found[_name] = int(x.shape[0])
            hooks.append(m.register_forward_pre_hook(hook))
    if hooks:
        from .capture_buffer_state import tensors_kept
        try:
            with torch.no_grad(), tensors_kept(model):      # its buffer writes undone
                model(*example_inputs)
        finally:
            for h in hooks:
                h.remove()
    return found


ATTENTION = (nn.TransformerEncoder, nn.TransformerEncoderLayer, nn.MultiheadAttention, nn.TransformerDecoderLayer,
             nn.TransformerDecoder, nn.Transformer)


def _batch_first(m: nn.Module) -> bool:
    """Whether an ATTENTION module takes [batch, tokens, embed]."""
    if isinstance(m, nn.MultiheadAttention):
        return m.batch_first
    if isinstance(m, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
        return m.self_attn.batch_first
    if isinstance(m, nn.Transformer):
        return m.encoder.layers[0].self_attn.batch_first
    return m.layers[0].self_attn.batch_first


def recorded_masks(model: nn.Module, example_inputs):
    """{module name: [per call: {mask argument: value, "tokens": L, "batch": B}]} of the
    attention modules, from one run of `model` on its example inputs: the
    values a traced module's constant masks have, call by call."""
    calls, wrapped = {}, []
    for name, m in model.named_modules():
        if not isinstance(m, ATTENTION):
            continue
        params = inspect.signature(m.forward).parameters

        def forward(*args, _name=name, _orig=m.forward, _params=params, _m=m, **kwargs):
            bound = dict(zip(_params, args), **kwargs)
            now = {k: (v.detach().clone() if isinstance(v, torch.Tensor) else v)
                   for k, v in bound.items() if k in MASK_ARGS}
            calls.setdefault(_name, []).append(now)
            x = args[0] if args else next(iter(bound.values()))
            # (an encoder's layers in eval with a padding mask get torch's nested tensors: no shape)
            if isinstance(x, torch.Tensor) and not getattr(x, "is_nested", False) and x.dim() == 3:
                now["tokens"] = int(x.shape[1] if _batch_first(_m) else x.shape[0])
                now["batch"] = int(x.shape[0] if _batch_first(_m) else x.shape[1])
            elif isinstance(x, torch.Tensor) and not getattr(x, "is_nested", False) and x.dim() == 2:
                now["tokens"], now["batch"] = int(x.shape[0]), 1         # unbatched [L, E] (capture_unbatched)
            return _orig(*args, **kwargs)
        m.forward = forward
        wrapped.append(m)
    if wrapped:
        from .capture_buffer_state import tensors_kept
        try:
            with torch.no_grad(), tensors_kept(model):      # its buffer writes undone
                model(*example_inputs)
        except Exception as e:          # noqa: BLE001 - the model's own error, in one line
            first = (str(e).strip().splitlines() or [""])[0]
            raise CaptureModuleError(f"the model fails on its example inputs: {type(e).__name__}: {first}") from e
        finally:
            for m in wrapped:
                del m.forward
    return calls


def with_traceable_modules(model: nn.Module, example_inputs=(), stateful: bool = False,
                           lstm_kernel: bool = False) -> nn.Module:
    """model, or a copy of it whose covered leaf modules are stand-ins (the
    user's model is never changed). Outermost modules first: an encoder's
    layers go with it. stateful: nn.GRU / nn.LSTM keep their state from one
    call to the next (the copy is then stateful when run eagerly too).
    lstm_kernel: nn.LSTM layers become LSTMLayer leaves (one
    ptec::quantized_lstm each) instead of being unrolled."""
    if not any(isinstance(m, COVERED) for m in model.modules()):
        return model
    from .capture_buffer_state import restore_tensors
    from .capture_in_place import tensors_of
    # the two eager runs below write a forward's own tensors (a GRU's kept h:
    # `self.h.copy_(h_n)`): each is put back, or the states would start from
    # the written values (capture_buffer_state)
    before, attributes = tensors_of(model), set(vars(model))
    steps = sequence_lengths(model, example_inputs) if example_inputs else {}
    restore_tensors(before, model, attributes)
    model = model_copy(model)
    from .capture_module_aliases import remember_paths
    remember_paths(model)       # functools.partial(run, self.cell) of __init__ holds the copy's cell
    before, attributes = tensors_of(model), set(vars(model))
    calls = recorded_masks(model, example_inputs) if example_inputs else {}
    restore_tensors(before, model, attributes)

    def stand_in_of(name, m):
        from .capture_module_forms import answering_for
        found = answering_for(_stand_in(m, steps.get(name), stateful, lstm_kernel), m)   # stand_in.num_layers
        if isinstance(found, _MaskArgs):
            found.calls = calls.get(name, [])
            found.what = f"{name} ({found.what})" if name else found.what
        return found
    whole = stand_in_of("", model)
    if whole is not None:
        from .capture_unbatched import wrapped_root
        return wrapped_root(whole, example_inputs)     # called unbatched: a module call, batched
    replaced = []
    for name, m in list(model.named_modules()):
        if not name or any(name.startswith(r + ".") for r in replaced):
            continue
        stand_in = stand_in_of(name, m)
        if stand_in is None:
            continue
        parent_name, _, attr = name.rpartition(".")
        setattr(model.get_submodule(parent_name) if parent_name else model, attr, stand_in)
        replaced.append(name)
    return model
