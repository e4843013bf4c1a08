"""Unbatched inputs: a layer called without its batch dimension.

torch accepts most layers on an input without the batch dimension
([C, H, W] for a 2-D layer, [C, L] for a 1-D one, [L, H] for nn.RNN / GRU /
LSTM, [H] for a cell, [L, E] for a transformer layer) and runs them as the
batched layer on a batch of one. capture does the same, in one place: while
tracing, a module call (capture._Tracer.call_module) or a functional call
(capture._Tracer.create_proxy) whose input has one dimension fewer than
the layer's batched rank is recorded as x.unsqueeze(batch dim), the batched
call, then .squeeze(batch dim) of its outputs (and of a recurrent layer's
state: unsqueeze / squeeze dim 1; a cell's: dim 0; a key padding mask
[S]: dim 0). The lowering therefore only ever sees batched layers.

Only classes and functions torch itself accepts unbatched are listed; the
rank is read from the example's traced value (capture_tracer), so a call
whose input shape is not known while tracing is traced as before."""
from __future__ import annotations

import inspect

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from .capture_modules import (Decoder, DecoderLayer, Encoder, EncoderLayer, Recurrent, RecurrentCell,
                              Transformer)

# torch.nn layer classes (and their Lazy subclasses, by isinstance) -> batched rank of the input
_LAYERS = (
    ((nn.Conv1d, nn.ConvTranspose1d, nn.MaxPool1d, nn.AvgPool1d, nn.AdaptiveAvgPool1d, nn.AdaptiveMaxPool1d,
      nn.LPPool1d, nn.InstanceNorm1d, nn.ReflectionPad1d, nn.ReplicationPad1d, nn.MaxUnpool1d, nn.Fold), 3),
    ((nn.Conv2d, nn.ConvTranspose2d, nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d,
      nn.LPPool2d, nn.InstanceNorm2d, nn.ReflectionPad2d, nn.ReplicationPad2d, nn.MaxUnpool2d,
      nn.FractionalMaxPool2d, nn.PixelShuffle, nn.PixelUnshuffle, nn.Unfold), 4),
    ((nn.Conv3d, nn.ConvTranspose3d, nn.MaxPool3d, nn.AvgPool3d, nn.AdaptiveAvgPool3d, nn.AdaptiveMaxPool3d,
      nn.InstanceNorm3d, nn.ReflectionPad3d, nn.ReplicationPad3d, nn.MaxUnpool3d, nn.FractionalMaxPool3d), 5),
)
# max unpooling: its indices argument is unbatched as its input
_UNPOOLS = (nn.MaxUnpool1d, nn.MaxUnpool2d, nn.MaxUnpool3d)

# functions (fx records F.* by their Python function, the builtins by themselves) -> batched rank
_FUNCTIONS = {}
for _rank, _names in ((3, ("conv1d", "conv_transpose1d", "max_pool1d", "max_pool1d_with_indices", "avg_pool1d",
                           "adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
                           "lp_pool1d", "max_unpool1d", "fold")),
                      (4, ("conv2d", "conv_transpose2d", "max_pool2d", "max_pool2d_with_indices", "avg_pool2d",
                           "adaptive_avg_pool2d", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices",
                           "lp_pool2d", "max_unpool2d", "fractional_max_pool2d",
                           "fractional_max_pool2d_with_indices", "pixel_shuffle", "pixel_unshuffle", "unfold")),
                      (5, ("conv3d", "conv_transpose3d", "max_pool3d", "max_pool3d_with_indices", "avg_pool3d",
                           "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
                           "max_unpool3d", "fractional_max_pool3d", "fractional_max_pool3d_with_indices"))):
    for _name in _names:
        for _where in (F, torch):
            if hasattr(_where, _name):
                _FUNCTIONS[getattr(_where, _name)] = _rank
_UNPOOL_FUNCTIONS = {F.max_unpool1d, F.max_unpool2d, F.max_unpool3d}


def _value(tracer, a):
    """The example's traced value of proxy a (a tensor), else None."""
    if isinstance(a, torch.fx.Proxy) and tracer.fixed_shape(a.node) and isinstance(tracer.value(a.node),
                                                                                  torch.Tensor):
        return tracer.value(a.node)
    return None


def _unbatched(tracer, a, rank: int) -> bool:
    v = _value(tracer, a)
    return v is not None and v.dim() == rank - 1


def _batched(tracer, a, dim: int = 0):
    """a.unsqueeze(dim); of a value this module squeezed (pooling indices
    read by an unpooling layer), the value before the squeeze."""
    if isinstance(a, torch.fx.Proxy) and a.node.meta.get("ptec_unbatched_squeeze") == dim:
        return tracer.proxy(a.node.args[0])
    return a.unsqueeze(dim)


def _squeezed(t, dim: int = 0):
    """t.squeeze(dim), dropped after tracing when no one reads it (capture._symbolic_trace)."""
    out = t.squeeze(dim)
    if isinstance(out, torch.fx.Proxy):
        out.node.meta["ptec_unbatched_squeeze"] = dim
        out.node.meta["ptec_value_taken"] = True
    return out


def _map(out, fn):
    """fn on every tensor (proxy) of a nested tuple / list output."""
    if isinstance(out, (tuple, list)):
        items = [_map(o, fn) for o in out]
        return tuple(items) if type(out) is tuple else (list(items) if type(out) is list else type(out)(items))
    return out if out is None or isinstance(out, (int, float, bool, str)) else fn(out)


def _pad_rank(args, kwargs):
    """F.pad's batched rank in its reflect / replicate / circular modes (None: constant, any rank)."""
    mode = kwargs.get("mode", args[2] if len(args) > 2 else "constant")
    pad = kwargs.get("pad", args[1] if len(args) > 1 else None)
    if mode == "constant" or not isinstance(pad, (tuple, list)):
        return None
    return len(pad) // 2 + 2


# softmax's legacy implicit dim, which follows the rank (torch's _get_softmax_dim)
_IMPLICIT_DIM = {nn.Softmax: F.softmax, nn.LogSoftmax: F.log_softmax, nn.Softmin: F.softmin}


def legacy_softmax_dim(rank: int) -> int:
    """torch's implicit softmax dim for a value of this rank (its _get_softmax_dim)."""
    return 0 if rank in (0, 1, 3) else 1


def _implicit_dim(tracer, x):
    """torch's implicit softmax dim for proxy x, from its traced value's rank
    (fixed even where its sizes follow the data), else None. The one place
    the dim is filled: capture refuses a softmax still without one."""
    if isinstance(x, torch.fx.Proxy) and tracer.known(x.node) and isinstance(tracer.value(x.node), torch.Tensor):
        return legacy_softmax_dim(tracer.value(x.node).dim())
    return None


def function_call(tracer, target, args, kwargs, call):
    """The batched call of an unbatched functional layer (module doc), else None.
    call(args, kwargs): the proxy of the call as given. Also F.softmax /
    log_softmax / softmin without a dim: torch's implicit dim for the
    input's rank (0 for rank 0, 1 and 3, else 1), made explicit."""
    if _hashable(target) and target in _IMPLICIT_DIM.values() and args and len(args) < 2 \
            and kwargs.get("dim") is None:
        dim = _implicit_dim(tracer, args[0])
        if dim is not None:
            return call(tuple(args), dict(kwargs, dim=dim))
    rank = _pad_rank(args, kwargs) if target is F.pad else _FUNCTIONS.get(target) if _hashable(target) else None
    if rank is None or not args or not _unbatched(tracer, args[0], rank):
        return None
    args = list(args)
    args[0] = _batched(tracer, args[0])
    if target in _UNPOOL_FUNCTIONS:
        if len(args) > 1:
            args[1] = _batched(tracer, args[1])
        elif "indices" in kwargs:
            kwargs = dict(kwargs, indices=_batched(tracer, kwargs["indices"]))
    return _map(call(tuple(args), kwargs), _squeezed)


def _hashable(t) -> bool:
    try:
        hash(t)
    except TypeError:
        return False
    return True


def _layer_rank(m):
    for classes, rank in _LAYERS:
        if isinstance(m, classes):
            return rank
    return None


def _attention_batch_dim(m) -> int:
    first = m.layers[0] if isinstance(m, (Encoder, Decoder)) else m.encoder.layers[0] if isinstance(
        m, Transformer) else m
    return 0 if first.batch_first else 1


# stand-ins (capture_modules) of the recurrent and transformer layers:
# (sequence arguments, key padding mask arguments)
_ATTENTION_ARGS = {
    EncoderLayer: (("src",), ("src_key_padding_mask",)),
    Encoder: (("src",), ("src_key_padding_mask",)),
    DecoderLayer: (("tgt", "memory"), ("tgt_key_padding_mask", "memory_key_padding_mask")),
    Decoder: (("tgt", "memory"), ("tgt_key_padding_mask", "memory_key_padding_mask")),
    Transformer: (("src", "tgt"), ("src_key_padding_mask", "tgt_key_padding_mask", "memory_key_padding_mask")),
}


def module_call(tracer, m, args, kwargs, call):
    """The batched call of module m called unbatched (module doc), else None.
    call(args, kwargs): the traced call of m."""
    if not args:
        return None
    if type(m) in _IMPLICIT_DIM and m.dim is None and len(args) == 1 and not kwargs:
        dim = _implicit_dim(tracer, args[0])        # nn.Softmax(): torch's implicit dim (function_call)
        if dim is not None:
            return tracer.create_proxy("call_function", _IMPLICIT_DIM[type(m)], (args[0],), {"dim": dim})
    rank = _layer_rank(m)
    if rank is not None:
        if not _unbatched(tracer, args[0], rank):
            return None
        args = [_batched(tracer, args[0])] + list(args[1:])
        if isinstance(m, _UNPOOLS):
            if len(args) > 1:
                args[1] = _batched(tracer, args[1])
            elif "indices" in kwargs:
                kwargs = dict(kwargs, indices=_batched(tracer, kwargs["indices"]))
        return _map(call(tuple(args), kwargs), _squeezed)
    if isinstance(m, RecurrentCell):                  # [H], state [H] or ([H], [H])
        if not _unbatched(tracer, args[0], 2):
            return None
        args = [_map(a, lambda t: t.unsqueeze(0)) for a in args]
        kwargs = {k: _map(v, lambda t: t.unsqueeze(0)) for k, v in kwargs.items()}
        return _map(call(tuple(args), kwargs), lambda t: t.squeeze(0))
    if isinstance(m, Recurrent):                      # [L, H], state [layers, H]: out, h_n (, c_n)
        if not _unbatched(tracer, args[0], 3):
            return None
        bd = 0 if m.batch_first else 1
        args = [args[0].unsqueeze(bd)] + [_map(a, lambda t: t.unsqueeze(1)) for a in args[1:]]
        kwargs = {k: _map(v, lambda t: t.unsqueeze(1)) for k, v in kwargs.items()}
        out, state = call(tuple(args), kwargs)
        return out.squeeze(bd), _map(state, lambda t: t.squeeze(1))
    found = _ATTENTION_ARGS.get(type(m))
    if found is None:
        return None
    sequences, paddings = found
    bound = inspect.signature(m.forward).bind_partial(*args, **kwargs).arguments
    if not _unbatched(tracer, bound.get(sequences[0]), 3):
        return None
    bd = _attention_batch_dim(m)
    for k in sequences:
        if isinstance(bound.get(k), torch.fx.Proxy):
            bound[k] = bound[k].unsqueeze(bd)
    for k in paddings:
        if bound.get(k) is not None:
            bound[k] = bound[k].unsqueeze(0)
    return _map(call((), dict(bound)), lambda t: t.squeeze(bd))


def wrapped_root(model: nn.Module, example_inputs) -> nn.Module:
    """A whole-model stand-in called unbatched: held by a module that calls
    it, so that its call is a module call (module_call), else model."""
    if not isinstance(model, (RecurrentCell, Recurrent) + tuple(_ATTENTION_ARGS)) or not example_inputs:
        return model
    x = example_inputs[0]
    rank = 2 if isinstance(model, RecurrentCell) else 3
    if not isinstance(x, torch.Tensor) or x.dim() != rank - 1:
        return model
    holder = _HOLDERS.get(len(example_inputs))
    return model if holder is None else holder(model)


class _Holder(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model


class _Holder1(_Holder):
    def forward(self, a):
        return self.model(a)


class _Holder2(_Holder):
    def forward(self, a, b):
        return self.model(a, b)


class _Holder3(_Holder):
    def forward(self, a, b, c):
        return self.model(a, b, c)


_HOLDERS = {1: _Holder1, 2: _Holder2, 3: _Holder3}
