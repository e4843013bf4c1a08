"""Selections, conversions and norms of a complex value (issue 15), on the
[..., 2] pair of real and imaginary parts that ptec.capture_complex
carries (its dim last, never selected along):

- z[..., idx] / z[:, idx] with one index list or 1-D constant integer
  tensor (the other positions full slices or ...), torch.index_select /
  Tensor.index_select by a constant: the entries picked along that dim
  (one slice per run of consecutive entries, joined by a cat);
- torch.gather / Tensor.gather by a constant index: the pair's index is
  the index repeated along the pair's dim (capture_rewrites' constant
  gather: slices, or a batch matmul by one-hot picks);
- torch.flip / Tensor.flip (its one-wide slices joined in reverse),
  torch.roll / Tensor.roll (two slices swapped per dim; no dims: of the
  value flattened);
- torch.where(cond, z, w) with complex, real, number or constant
  branches: each as a pair, the condition viewed with a trailing 1-wide
  dim and copied out along it, one where;
- Tensor.to / type of another complex dtype, cfloat / cdouble (ptec
  carries complex128 as complex64's pair, as float64 as float32),
  z.view(torch.float64) of a complex128 value (torch's [..., 2n]);
- F.pad (constant, reflect, replicate, circular) and the pad layers
  (nn.ZeroPad2d, nn.ConstantPad*d, nn.ReflectionPad*d, nn.ReplicationPad*d)
  of a complex value: each part padded as a real value (torch pads with
  value + 0i: the real part with the value, the imaginary with 0), the
  parts joined; nn.PixelShuffle / PixelUnshuffle / ChannelShuffle of a 4-D
  complex value likewise (layouts: the layer of each part);
- torch.linalg.vector_norm / norm / matrix_norm, torch.norm, Tensor.norm
  of a complex value: the real norm of |z| (capture_reductions' forms on
  the fp32 hypot of the parts: every norm of a complex tensor is a norm of
  its magnitudes).

A complex index, a computed (non-constant) index and a view as another
dtype (float32 of a complex128 value: torch's halves of each float64's
bytes) are not rewritten here."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import call_is, torch_functions
from .capture_rewrites import _Steps

_INDEX_SELECT = (torch.index_select, "index_select")
_GATHER = (torch.gather, "gather")
_FLIP = (torch.flip, "flip")
_ROLL = (torch.roll, "roll")
_WHERE = (torch.where, "where")
_TO = ("to", "type", "cfloat", "cdouble")
_NORMS = (torch.norm, "norm", torch.linalg.vector_norm, torch.linalg.norm, torch.linalg.matrix_norm)
_PAD = (torch.nn.functional.pad,) + torch_functions("_C._nn.pad")
_MODES = {"constant", "reflect", "replicate", "circular"}


def _int_list(v, size: int) -> Optional[List[int]]:
    """A 1-D list of in-range ints (negative ones counted from the end)."""
    if isinstance(v, np.ndarray):
        if v.ndim != 1 or v.dtype.kind not in "iu":
            return None
        v = v.tolist()
    if not isinstance(v, (list, tuple)) or not v or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        return None
    if not all(-size <= i < size for i in v):
        return None
    return [i % size for i in v]


def _pick(s: _Steps, src: str, dim: int, idx: List[int]) -> str:
    from .capture_tensor_index import select_nodes
    s.nodes.extend(select_nodes(f"{s.name}__{len(s.nodes)}", src, dim, idx))
    return s.nodes[-1].name


def _index_list(fn, by_name, s: _Steps, p: str, shape) -> Optional[str]:
    """z[..., idx]: one list or constant 1-D int tensor, the rest full slices."""
    from .capture_complex import _constant
    idx = fn.args[1] if isinstance(fn.args[1], tuple) else (fn.args[1],)
    lists = [i for i, v in enumerate(idx) if isinstance(v, (list, torch.fx.Node))]
    if len(lists) != 1 or sum(v is Ellipsis for v in idx) > 1 \
            or any(v != slice(None) and v is not Ellipsis for i, v in enumerate(idx) if i != lists[0]):
        return None
    at = lists[0]
    if Ellipsis in idx[:at]:
        dim = len(shape) - (len(idx) - at)
    else:
        dim = at
    if not 0 <= dim < len(shape) or len(idx) - (1 if Ellipsis in idx else 0) > len(shape):
        return None
    value = idx[at] if isinstance(idx[at], list) else _constant(idx[at], by_name)
    picks = None if value is None else _int_list(value, shape[dim])
    return None if picks is None else _pick(s, p, dim, picks)


def _dims_arg(v, rank) -> Optional[List[int]]:
    dims = [v] if isinstance(v, int) else v
    if not isinstance(dims, (list, tuple)) or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        return None
    return [d % rank for d in dims]


def _arg(fn, i, key, default=None):
    return fn.args[i] if len(fn.args) > i else fn.kwargs.get(key, default)


def _roll(s: _Steps, p: str, shape, shifts, dims) -> Optional[str]:
    if dims is None:                              # of the value flattened, then viewed back
        if not isinstance(shifts, int) and not (isinstance(shifts, (list, tuple)) and len(shifts) == 1):
            return None
        n = int(np.prod(shape))
        flat = s("reshape", [p], target_shape=[n, 2])
        rolled = _roll(s, flat, [n], shifts if isinstance(shifts, int) else shifts[0], 0)
        return None if rolled is None else s("reshape", [rolled], target_shape=list(shape) + [2])
    shifts = [shifts] if isinstance(shifts, int) else shifts
    dims = _dims_arg(dims, len(shape))
    if dims is None or not isinstance(shifts, (list, tuple)) or len(shifts) != len(dims) \
            or not all(isinstance(k, int) and not isinstance(k, bool) for k in shifts):
        return None
    cur = p
    for k, dim in zip(shifts, dims):
        size = shape[dim]
        cut = (size - k) % size
        if cut:
            cur = s("cat", [s("slice", [cur], dim=dim, start=cut, end=size),
                            s("slice", [cur], dim=dim, start=0, end=cut)], dim=dim)
    return cur if cur != p else s("identity", [p])


def _where(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    """torch.where(cond, z, w): both branches as pairs of the result's shape."""
    from .capture_complex import _operand, _pair_constant, _full_const, _shape, _wide
    from .capture_complex_trig import _as_pair
    if len(fn.args) != 3 or fn.kwargs or not isinstance(fn.args[0], torch.fx.Node):
        return None
    cond = fn.args[0]
    cond_shape = _shape(cond)
    whole = list(out_shape) + [2]
    branches = []
    for a in fn.args[1:]:
        v = _operand(a, by_name)
        if v is None:
            return None
        if v[0] in ("number", "constant"):
            branches.append(_full_const(s, _pair_constant(v[1]), whole))
        elif v[0] == "real":
            branches.append(_wide(s, _as_pair(s, v), list(v[2]) + [2], whole))
        else:
            branches.append(_wide(s, v[1], list(v[2]) + [2], whole))
    if cond_shape is None or cond.name not in by_name:
        return None
    kept = [1] * (len(out_shape) - len(cond_shape)) + list(cond_shape) + [1]
    mask = s("reshape", [cond.name], target_shape=kept)            # (where broadcasts it over the pair)
    return s("where", [mask] + branches)


def select_nodes(fn, by_name, s: _Steps, x, out_shape) -> Optional[str]:
    """The pair of one selection or conversion of complex operand x (or a
    where with a complex branch), or None."""
    from .capture_complex import _meta, is_complex
    if call_is(fn, _WHERE):
        return _where(fn, by_name, s, out_shape) if is_complex(fn) else None
    if x is None or x[0] != "pair":
        return None
    p, shape = x[1], list(x[2])
    if not shape:
        return None
    import operator
    if fn.target is operator.getitem and len(fn.args) == 2:
        return _index_list(fn, by_name, s, p, shape)
    if call_is(fn, _INDEX_SELECT) and len(fn.args) == 3 and not fn.kwargs and isinstance(fn.args[1], int):
        from .capture_complex import _constant
        value = fn.args[2] if isinstance(fn.args[2], list) else _constant(fn.args[2], by_name)
        picks = None if value is None else _int_list(value, shape[fn.args[1] % len(shape)])
        return None if picks is None else _pick(s, p, fn.args[1] % len(shape), picks)
    if call_is(fn, _GATHER) and len(fn.args) == 3 and not fn.kwargs and isinstance(fn.args[1], int):
        from .capture_complex import _constant
        from .capture_rewrites import gather_constant
        idx = _constant(fn.args[2], by_name)
        if idx is None or idx.ndim != len(shape) or idx.dtype.kind not in "iu":
            return None
        pair_idx = np.repeat(idx[..., None], 2, axis=-1)
        return gather_constant(s, p, shape + [2], fn.args[1] % len(shape), pair_idx)
    if call_is(fn, _FLIP):
        from .capture_views import _flip
        dims = _dims_arg(fn.args[1] if len(fn.args) == 2 else (list(fn.args[1:]) if len(fn.args) > 2
                                                                 else fn.kwargs.get("dims")), len(shape))
        if dims is None or (len(fn.args) < 2 and set(fn.kwargs) != {"dims"}):
            return None
        cur = p
        for d in sorted(set(dims)):
            cur = _flip(s, cur, shape, d)
        return cur if cur != p else s("identity", [p])
    if call_is(fn, _ROLL) and set(fn.kwargs) <= {"shifts", "dims"} and len(fn.args) <= 3:
        return _roll(s, p, shape, _arg(fn, 1, "shifts"), _arg(fn, 2, "dims"))
    if call_is(fn, _TO) and is_complex(fn) and list(out_shape) == shape:
        return s("identity", [p])               # complex64 <-> complex128: the same pair
    if fn.target == "view" and fn.args[1:] == (torch.float64,) and not fn.kwargs \
            and getattr(_meta(fn.args[0]), "dtype", None) is torch.complex128:
        return s("reshape", [p], target_shape=list(out_shape))
    if call_is(fn, _NORMS) and not is_complex(fn):
        return _norm(fn, s, p, shape, out_shape)
    if call_is(fn, _PAD) and is_complex(fn):
        pads, mode, value = _arg(fn, 1, "pad"), _arg(fn, 2, "mode", "constant"), _arg(fn, 3, "value", None)
        return pad_pair(s, p, shape, out_shape, pads, mode, value, fn.name)
    return None


def pad_pair(s: _Steps, p: str, shape, out_shape, pads, mode, value, what: str) -> Optional[str]:
    """Each part of pair p padded as a real value (F.pad's pads, mode and
    value: value + 0i), then joined."""
    from .capture import CaptureError
    from .circular_pad import circular_pad_nodes
    value = 0.0 if value is None else value
    if mode not in _MODES or not isinstance(pads, (list, tuple)) or not all(isinstance(v, int) for v in pads) \
            or len(pads) % 2 or len(pads) // 2 > len(shape) or not isinstance(value, (int, float)) \
            or isinstance(value, bool):
        return None

    def pad(cur, k):
        if mode == "circular":
            s.nodes.extend(circular_pad_nodes(f"{s.name}__{len(s.nodes)}", cur, list(pads), list(shape), what,
                                              CaptureError))
            return s.nodes[-1].name
        return s("pad", [cur], pad=list(pads), mode=mode, value=float(value) if k == 0 else 0.0)
    return per_part(s, p, shape, out_shape, pad)


def per_part(s: _Steps, p: str, shape, out_shape, make) -> str:
    """make(part, k) of each part (k 0: real, 1: imaginary) of pair p, viewed
    as a real value of shape S, joined back into the result's pair: a
    layout layer (a pad, a shuffle) of a complex value is the layer of each
    part."""
    from .capture_complex import _parts
    parts = []
    for k, part in enumerate(_parts(s, p, shape)):
        cur = make(s("reshape", [part], target_shape=list(shape)), k)
        parts.append(s("reshape", [cur], target_shape=list(out_shape) + [1]))
    return s("cat", parts, dim=len(out_shape))


def pad_module_nodes(module, s: _Steps, p: str, shape, out_shape) -> Optional[str]:
    """nn.ZeroPad2d, nn.ConstantPad*d, nn.ReflectionPad*d, nn.ReplicationPad*d
    (F.pad's pads: the module's padding), nn.PixelShuffle / PixelUnshuffle
    and nn.ChannelShuffle of a 4-D value, of complex pair p: per part."""
    nn = torch.nn
    kinds = {"constant": tuple(getattr(nn, f"ConstantPad{k}d") for k in (1, 2, 3)) + (nn.ZeroPad2d,),
             "reflect": tuple(getattr(nn, f"ReflectionPad{k}d") for k in (1, 2, 3) if hasattr(nn, f"ReflectionPad{k}d")),
             "replicate": tuple(getattr(nn, f"ReplicationPad{k}d") for k in (1, 2, 3))}
    for mode, classes in kinds.items():
        if isinstance(module, classes):
            return pad_pair(s, p, shape, out_shape, list(module.padding), mode, getattr(module, "value", 0.0), "pad")
    if isinstance(module, (nn.PixelShuffle, nn.PixelUnshuffle)) and len(shape) == 4:
        unshuffle = isinstance(module, nn.PixelUnshuffle)
        factor = int(module.downscale_factor if unshuffle else module.upscale_factor)
        return per_part(s, p, shape, out_shape,
                        lambda cur, k: s("pixel_shuffle", [cur], factor=factor, unshuffle=unshuffle))
    if isinstance(module, nn.ChannelShuffle) and len(shape) == 4:
        return per_part(s, p, shape, out_shape, lambda cur, k: s("channel_shuffle", [cur], groups=int(module.groups)))
    return None


def _norm(fn, s: _Steps, p: str, shape, out_shape) -> Optional[str]:
    """A norm of z as the same norm of |z| (capture_reductions' forms)."""
    from .capture_complex import _parts
    from .capture_reductions import _dims, _ints, _matrix_norm, _norm_call, _vector_norm, _view
    call = _norm_call(fn)
    if call is None:
        return None
    _, kind, ord, dim, keepdim = call
    dims = _dims(dim, len(shape))
    if dims is None or not isinstance(keepdim, bool) or (kind == "matrix" and len(_ints(dim) or []) != 2):
        return None
    re, im = _parts(s, p, shape)
    size = s("reshape", [s("binary_math", [re, im], fn="hypot")], target_shape=shape)
    if kind == "matrix":
        cur = _matrix_norm(s, size, shape, [d % len(shape) for d in _ints(dim)], ord)
    else:
        cur = _vector_norm(s, size, shape, dims, ord)
    if cur is None:
        return None
    _view(s, cur, list(out_shape))
    return s.nodes[-1].name
