"""Complex values inside a program (issue 15): a spectrum multiplied by
another, a filter computed in the model, an FFT of an FFT. ptec's tensors
are real, so capture carries each complex value z of shape S as the real
tensor S + [2] of its real and imaginary parts, torch.view_as_real's
layout (view_as_real and view_as_complex are then the value itself), and
rewrites each call on it as real ops on that pair:

- z * c, z / c by a real value, constant or number: one mul (div) by c
  with a trailing 1-wide dim; by a complex number a + bi: one linear over
  the last dim by [[a, -b], [b, a]]; by a complex constant or value w:
  (ac - bd, ad + bc) from the parts (four muls, a sub, an add, a cat);
- z + w, z - w of complex values (pair adds), of a complex number or
  constant (its pair added), of a real value (added to the real part);
  -z, conj (the imaginary part negated);
- z.real / z.imag (a slice), abs (torch.hypot's fp32 kernel of the parts,
  as capture_spectral's magnitude), angle (torch.atan2's fp32 kernel),
  torch.complex(re, im) and torch.polar(r, theta) (r cos, r sin: LUTs and
  muls) joined along a new last dim;
- torch.fft.fft / ifft (n, dim, norm) of a complex or real value, rfft of
  a real one that capture_spectral does not read in its own layout, and
  irfft of a complex value: one constant product over the dim moved last,
  its pairs interleaved (DFT matrices, as capture_spectral builds), stft
  capture_spectral's conv with its [.., F, T, 2] output;
- torch.linalg.eigvals and torch.linalg.eig's eigenvalues of a real matrix
  (ptec.capture_eig: ptec::linalg_eigvals.out's [..., n, 2] pairs), and
  eig's eigenvectors (ptec::linalg_eig_vectors.out's [..., n, n, 2]);
- sum / mean over dims, cat / stack, slices (any positive step) and int
  indices, reshapes and permutes of the dims other than the pair's,
  z.view(torch.float32) of a complex64 value (torch's [..., 2n]: the
  pairs along the last dim), and nn.Identity / nn.Flatten / nn.Unflatten
  called on one (views: torch flattens the complex dims).

The ops are the int8 or fp32 ones those real ops lower to. A complex
program output is refused in one line pointing at torch.view_as_real: the
.pte format reserves the complex ScalarTypes (8, 9, 10) as not valid, so a
program cannot declare a complex output; view_as_real's [..., 2] float
output holds the same bytes. Element-wise functions (exp, log, sqrt,
pow, reciprocal, a complex value over another, sgn, square) are
ptec.capture_complex_math's; sin ... atanh, sigmoid, log10 / log2, rsqrt,
powers with a complex exponent or base and the layers of element-wise
functions (nn.Tanh, nn.Sigmoid, nn.SiLU, ...) ptec.capture_complex_trig's;
index lists, gather, flip, roll, where, dtype conversions, norms, pads
and shuffles ptec.capture_complex_select's; expand, repeat, narrow,
select, movedim, T / mH, cumsum, diff, outer
ptec.capture_complex_layout's; matrix products
ptec.capture_complex_matmul's; prod, cumprod, einsum, dot, vdot, inner,
==, !=, isclose and a computed index ptec.capture_complex_products';
transforms over several dims, the
Hermitian ones and the shifts ptec.capture_fft_dims'. A call or layer
torch itself does not compute on a complex value (torch.exp2 in torch
1.13, nn.Linear with float weights, nn.ReLU) is refused quoting torch's
error (torch_refusal runs it on values of the traced shapes and dtypes);
any other call on a complex value, and any other submodule called on one
(its layer would read the pair's dim as data), is refused in one line
naming it."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .capture_calls import call_is, refuse_call
from .capture_rewrites import _Steps
from .capture_spectral import _stft_nodes, dft_matrix, irfft_matrix
from .ir import Node, UnsupportedOperator
from .model_copy import model_copy

_COMPLEX = tuple(d for d in (torch.complex64, torch.complex128, getattr(torch, "complex32", None)) if d is not None)

OUTPUT = ("a complex program output: the .pte format has no complex dtype (ScalarType 8-10 reserved); "
          "return torch.view_as_real(z) (its [..., 2] real and imaginary parts, the same bytes)")
OTHER = ("ptec carries a complex value as its [..., 2] real and imaginary parts and rewrites only the calls "
         "docs/aot.md's capture_complex row names")

_MUL = (operator.mul, torch.mul, "mul", "multiply", torch.multiply)
_DIV = (operator.truediv, torch.div, "div", "divide", torch.divide, torch.true_divide, "true_divide")
_ADD = (operator.add, torch.add, "add")
_SUB = (operator.sub, torch.sub, "sub", "subtract", torch.subtract)
_FFT_DIMS = tuple(getattr(torch.fft, f) for f in ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn",
                                                   "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn")
                  if hasattr(torch.fft, f))
_SHIFTS = (torch.fft.fftshift, torch.fft.ifftshift)
_VIEWS = ("view", "reshape", torch.reshape, "flatten", torch.flatten, "unsqueeze", torch.unsqueeze, "squeeze",
          torch.squeeze, "contiguous", "clone", torch.clone, "resolve_conj", torch.resolve_conj, "resolve_neg",
          torch.resolve_neg)


def _meta(a):
    return a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None


def _shape(a) -> Optional[List[int]]:
    meta = _meta(a)
    return [int(d) for d in meta.shape] if meta is not None and hasattr(meta, "shape") else None


def is_complex(a) -> bool:
    meta = _meta(a)
    return meta is not None and getattr(meta, "dtype", None) in _COMPLEX


def _number(a) -> bool:
    return isinstance(a, (int, float, complex)) and not isinstance(a, bool)


def _constant(a, by_name):
    node = by_name.get(a.name) if isinstance(a, torch.fx.Node) else None
    return np.asarray(node.attrs["value"]) if node is not None and node.op == "constant" else None


def _operand(a, by_name):
    """("number", c), ("constant", array), ("pair", name, S) for a complex
    value, ("real", name, S) for a real one, or None."""
    if _number(a):
        return ("number", complex(a))
    value = _constant(a, by_name)
    if value is not None:
        return ("constant", value)
    if isinstance(a, torch.fx.Node) and a.name in by_name and _shape(a) is not None:
        node = by_name[a.name]
        if "spectrum" in node.attrs:
            return None             # capture_spectral's own layout: its readers are its own
        return ("pair" if is_complex(a) else "real", a.name, _shape(a))
    return None


def _parts(s: _Steps, p: str, shape):
    """The real and imaginary parts of pair p, each of shape S + [1]."""
    last = len(shape)
    return (s("slice", [p], dim=last, start=0, end=1), s("slice", [p], dim=last, start=1, end=2))


def _trailing(s: _Steps, name: str, shape) -> str:
    """A real value of shape S as S + [1], to broadcast against a pair."""
    return s("reshape", [name], target_shape=list(shape) + [1])


def _join(s: _Steps, re: str, im: str, rank: int) -> str:
    return s("cat", [re, im], dim=rank)


def _pair_constant(value) -> np.ndarray:
    v = np.asarray(value)
    return np.stack([np.real(v), np.imag(v)], axis=-1).astype(np.float32)


def _wide(s: _Steps, name: str, shape, full) -> str:
    """name (of shape `shape`, broadcastable to full) copied out to full:
    ptec's int8 add and mul broadcast over channels only, so operands are
    made equal (a reshape to full's rank, then cats of copies)."""
    shape, full = list(shape), list(full)
    if len(shape) < len(full):
        shape = [1] * (len(full) - len(shape)) + shape
        name = s("reshape", [name], target_shape=shape)
    return s.widen(name, shape, full)


def _full_const(s: _Steps, value, full) -> str:
    return s.const(np.broadcast_to(np.asarray(value, np.float32), tuple(full)).copy())


def _real_wide(s: _Steps, other, full) -> str:
    """A real value of shape Sv as full (S + [1] or S + [2])."""
    return _wide(s, _trailing(s, other[1], other[2]), other[2] + [1], full)


def _mul(s: _Steps, p: str, shape, other, out_shape, divide=False) -> Optional[str]:
    """pair p (of S) times (or over) another operand, the product of shape
    out_shape + [2]."""
    rank, whole, half = len(out_shape), list(out_shape) + [2], list(out_shape) + [1]
    kind = other[0]
    if kind == "number":
        c = 1.0 / other[1] if divide else other[1]
        if c.imag == 0:
            return s("mul", [p, s.const(np.float32(c.real))])
        return s("linear", [p], weight=np.array([[c.real, -c.imag], [c.imag, c.real]], np.float32), bias=None)
    if kind == "constant":
        v = other[1]
        if divide:
            if not np.all(v != 0):
                return None
            v = 1.0 / v.astype(np.complex128 if np.iscomplexobj(v) else np.float64)
        if not np.iscomplexobj(v) or not np.imag(v).any():
            return s("mul", [_wide(s, p, shape + [2], whole), _full_const(s, np.real(v)[..., None], whole)])
        re, im = (_wide(s, q, shape + [1], half) for q in _parts(s, p, shape))
        hr, hi = _full_const(s, np.real(v)[..., None], half), _full_const(s, np.imag(v)[..., None], half)
        return _join(s, s("sub", [s("mul", [re, hr]), s("mul", [im, hi])]),
                     s("add", [s("mul", [re, hi]), s("mul", [im, hr])]), rank)
    if kind == "real":
        return s("div" if divide else "mul", [_wide(s, p, shape + [2], whole), _real_wide(s, other, whole)])
    if kind == "pair" and not divide:
        a, b = (_wide(s, q, shape + [1], half) for q in _parts(s, p, shape))
        c, d = (_wide(s, q, other[2] + [1], half) for q in _parts(s, other[1], other[2]))
        return _join(s, s("sub", [s("mul", [a, c]), s("mul", [b, d])]),
                     s("add", [s("mul", [a, d]), s("mul", [b, c])]), rank)
    return None


def _add(s: _Steps, p: str, shape, other, out_shape, negate_other=False) -> Optional[str]:
    """pair p (of S) plus (or minus) another operand, the sum of shape
    out_shape + [2]."""
    kind, whole = other[0], list(out_shape) + [2]
    if kind in ("number", "constant"):
        v = -np.asarray(other[1]) if negate_other else np.asarray(other[1])
        return s("add", [_wide(s, p, shape + [2], whole), _full_const(s, _pair_constant(v), whole)])
    if kind == "pair":
        return s("sub" if negate_other else "add", [_wide(s, p, shape + [2], whole),
                                                     _wide(s, other[1], other[2] + [2], whole)])
    if kind == "real":
        if list(out_shape) != list(shape):
            return None                     # the real value widens z: its imaginary part would need widening too
        re, im = _parts(s, p, shape)
        re = s("sub" if negate_other else "add", [re, _real_wide(s, other, list(shape) + [1])])
        return _join(s, re, im, len(out_shape))
    return None


def _arithmetic(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    if len(fn.args) != 2 or fn.kwargs:
        return None
    a, b = (_operand(x, by_name) for x in fn.args)
    if a is None or b is None:
        return None
    if "pair" not in (a[0], b[0]):
        # a real value and a complex number or constant: the value as a pair (v, 0), or at once v * (re, im)
        real_first = a[0] == "real"
        if a[0] != "real":
            a, b = b, a
        if a[0] != "real" or b[0] not in ("number", "constant"):
            return None
        whole = list(out_shape) + [2]
        v = _real_wide(s, a, whole)
        if call_is(fn, _MUL):
            return s("mul", [v, _full_const(s, _pair_constant(b[1]), whole)])
        if call_is(fn, _DIV):
            divisor = np.asarray(b[1], np.complex128)
            if not real_first or not np.all(divisor != 0):
                return None
            return s("mul", [v, _full_const(s, _pair_constant(1.0 / divisor), whole)])
        pair = s("mul", [v, _full_const(s, [1.0, 0.0], whole)])
        if call_is(fn, _ADD):
            return _add(s, pair, out_shape, b, out_shape)
        if call_is(fn, _SUB):
            if real_first:
                return _add(s, pair, out_shape, b, out_shape, negate_other=True)
            return _add(s, s("neg", [pair]), out_shape, b, out_shape)
        return None
    if call_is(fn, _MUL):
        if a[0] != "pair":
            a, b = b, a
        return _mul(s, a[1], a[2], b, out_shape) if a[0] == "pair" else None
    if call_is(fn, _DIV):
        if b[0] == "pair":                   # over a complex value (capture_complex_math)
            from .capture_complex_math import over_pair
            return over_pair(s, a, b[1], b[2], out_shape)
        return _mul(s, a[1], a[2], b, out_shape, divide=True)
    if call_is(fn, _ADD):
        if a[0] != "pair":
            a, b = b, a
        return _add(s, a[1], a[2], b, out_shape) if a[0] == "pair" else None
    if call_is(fn, _SUB):
        if a[0] == "pair":
            return _add(s, a[1], a[2], b, out_shape, negate_other=True)
        if b[0] == "pair":                   # c - z: -z + c
            return _add(s, s("neg", [b[1]]), b[2], a, out_shape)
    return None


def _dims(value, rank) -> Optional[List[int]]:
    dims = [value] if isinstance(value, int) else value
    if not isinstance(dims, (list, tuple)) or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        return None
    return sorted(d % rank for d in dims) if rank else None


def _arg(fn, i, key, default=None):
    return fn.args[i] if len(fn.args) > i else fn.kwargs.get(key, default)


_FFT_NAMES = ("input", "n", "dim", "norm")


def _fft_args(fn):
    args = dict(zip(_FFT_NAMES, fn.args))
    args.update(fn.kwargs)
    if set(args) - set(_FFT_NAMES):
        return None
    return args


def _scale(norm, n, inverse) -> Optional[float]:
    forward = {None: 1.0, "backward": 1.0, "ortho": n ** -0.5, "forward": 1.0 / n}
    backward = {None: 1.0 / n, "backward": 1.0 / n, "ortho": n ** -0.5, "forward": 1.0}
    return (backward if inverse else forward).get(norm)


def _complex_dft(n: int, length: int, bins: int, scale: float, inverse: bool) -> np.ndarray:
    """[bins, length] complex: exp(-+2 pi i k t / n) * scale for t < n (a
    longer input is cut to n: its columns past n are 0)."""
    k = np.arange(bins, dtype=np.float64)[:, None]
    t = np.arange(length, dtype=np.float64)[None, :]
    angle = 2.0 * np.pi * ((k * t) % n) / n
    m = np.exp((1j if inverse else -1j) * angle) * scale
    return np.where(t < n, m, 0.0)


def _interleaved(m: np.ndarray) -> np.ndarray:
    """Complex [M, L] as the real [2M, 2L] acting on interleaved (re, im)
    pairs: out re = Re m re - Im m im, out im = Im m re + Re m im."""
    w = np.zeros((2 * m.shape[0], 2 * m.shape[1]), np.float64)
    w[0::2, 0::2], w[0::2, 1::2] = m.real, -m.imag
    w[1::2, 0::2], w[1::2, 1::2] = m.imag, m.real
    return w.astype(np.float32)


def dft_weight(n: int, length: int, bins: int, scale: float, inverse: bool, pair: bool,
               conjugate: bool = False) -> np.ndarray:
    """The real weight of an n-point DFT of `length` samples into `bins`
    interleaved (re, im) outputs: of an input pair the interleaved complex
    matrix (_interleaved), of a real input [2 bins, length] rows, their
    imaginary rows negated when conjugate (torch.fft.ihfft)."""
    if pair:
        return _interleaved(_complex_dft(n, length, bins, scale, inverse))
    weight = np.zeros((2 * bins, length), np.float32)
    if inverse:
        m = _complex_dft(n, length, bins, scale, True)
        weight[0::2], weight[1::2] = m.real, m.imag
    else:
        stacked = dft_matrix(n, min(n, length), bins, scale)          # [cos rows; -sin rows]
        weight[0::2, :min(n, length)] = stacked[:bins]
        weight[1::2, :min(n, length)] = -stacked[bins:] if conjugate else stacked[bins:]
    return weight


def _along(s: _Steps, src: str, shape, dim: int, pair_in: bool, weight: np.ndarray, pair_out: bool) -> str:
    """One linear by weight over dim of src (of logical shape `shape`, a
    pair when pair_in): dim moved last (before the pair dim), an input
    pair's parts interleaved into it, the product, an output pair split
    back out, dim moved back."""
    rank = len(shape)
    order = list(range(rank + (1 if pair_in else 0)))
    order[dim], order[rank - 1] = rank - 1, dim
    moved = [shape[i] for i in order[:rank]]
    cur = src if dim == rank - 1 else s("permute", [src], dims=order)
    if pair_in:
        cur = s("reshape", [cur], target_shape=moved[:-1] + [2 * moved[-1]])
    cur = s("linear", [cur], weight=weight, bias=None)
    rows = weight.shape[0]
    if pair_out:
        cur = s("reshape", [cur], target_shape=moved[:-1] + [rows // 2, 2])
    if dim != rank - 1:
        back = list(range(rank + (1 if pair_out else 0)))
        back[dim], back[rank - 1] = rank - 1, dim
        cur = s("permute", [cur], dims=back)
    return cur


def _fft(fn, by_name, s: _Steps) -> Optional[str]:
    """fft / ifft of a complex or real value, rfft of a real one, irfft of
    a complex one, over one dim."""
    args = _fft_args(fn)
    if args is None or not isinstance(args.get("input"), torch.fx.Node):
        return None
    x = _operand(args["input"], by_name)
    n, dim, norm = args.get("n"), args.get("dim", -1), args.get("norm")
    if x is None or x[0] not in ("pair", "real") or not isinstance(dim, int) or not x[2] \
            or (n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1)):
        return None
    shape, pair = x[2], x[0] == "pair"
    dim %= len(shape)
    length = shape[dim]
    t = fn.target
    if t is torch.fft.irfft:
        if not pair:
            return None
        n = 2 * (length - 1) if n is None else n
        scale = _scale(norm, n, True) if n >= 1 else None
        if scale is None:
            return None
        w = irfft_matrix(n, length, scale)                      # [n, re columns | im columns]
        inter = np.zeros((n, 2 * length), np.float32)
        inter[:, 0::2], inter[:, 1::2] = w[:, :length], w[:, length:]
        return _along(s, x[1], shape, dim, True, inter, False)
    n = length if n is None else n
    inverse = t is torch.fft.ifft
    scale = _scale(norm, n, inverse)
    if scale is None or (t is torch.fft.rfft and pair):
        return None
    bins = n // 2 + 1 if t is torch.fft.rfft else n
    return _along(s, x[1], shape, dim, pair, dft_weight(n, length, bins, scale, inverse, pair), True)


def _index_nodes(fn, s: _Steps, p: str, shape, out_shape) -> Optional[str]:
    """z[...]: ints and slices of step 1 over S's dims (Ellipsis and None
    allowed), as slices, then the reshape to the result's shape + [2]."""
    idx = fn.args[1] if isinstance(fn.args[1], tuple) else (fn.args[1],)
    if any(not (isinstance(i, (int, slice)) and not isinstance(i, bool)) and i is not Ellipsis and i is not None
           for i in idx) or sum(i is Ellipsis for i in idx) > 1:
        return None
    taking = [i for i in idx if i is not None and i is not Ellipsis]
    if len(taking) > len(shape):
        return None
    if Ellipsis in idx:
        at = [i for i in idx if i is not None].index(Ellipsis)
        per_dim = taking[:at] + [slice(None)] * (len(shape) - len(taking)) + taking[at:]
    else:
        per_dim = taking + [slice(None)] * (len(shape) - len(taking))
    cur = p
    for d, (i, size) in enumerate(zip(per_dim, shape)):
        if isinstance(i, int):
            if not -size <= i < size:
                return None
            start, end = i % size, i % size + 1
        else:
            if i.step is not None and (not isinstance(i.step, int) or i.step < 1):
                return None
            start, end, step = i.indices(size)
            end = max(start, end)
            if step > 1 and len(range(start, end, step)) > 1:      # z[a:b:k]: one-wide slices joined
                cur = s("cat", [s("slice", [cur], dim=d, start=j, end=j + 1) for j in range(start, end, step)],
                        dim=d)
                continue
            end = min(end, start + 1) if step > 1 else end
        if (start, end) != (0, size):
            cur = s("slice", [cur], dim=d, start=start, end=end)
    return s("reshape", [cur], target_shape=list(out_shape) + [2])


def _permute(fn, s: _Steps, p: str, shape) -> Optional[str]:
    """permute / transpose / t of S's dims, the pair's dim kept last."""
    rank = len(shape)
    if call_is(fn, ("permute", torch.permute)):
        if fn.op == "call_method" and not (len(fn.args) == 2 and isinstance(fn.args[1], (list, tuple))):
            dims = list(fn.args[1:])
        else:
            dims = _arg(fn, 1, "dims")
        if not isinstance(dims, (list, tuple)) or len(dims) != rank or not all(isinstance(d, int) for d in dims):
            return None
        order = [d % rank for d in dims]
    elif call_is(fn, ("transpose", torch.transpose, "swapaxes", "swapdims")) and len(fn.args) == 3:
        if not all(isinstance(d, int) for d in fn.args[1:]):
            return None
        order = list(range(rank))
        i, j = fn.args[1] % rank, fn.args[2] % rank
        order[i], order[j] = order[j], order[i]
    elif fn.target == "t" and rank == 2:
        order = [1, 0]
    else:
        return None
    return s("permute", [p], dims=order + [rank])


def _pair_nodes(fn, by_name) -> Optional[List[Node]]:
    """The nodes of one call that makes or reads a complex value, or None
    for a call this module does not rewrite."""
    s = _Steps(fn.name)
    out_shape = _shape(fn)
    t = fn.target
    x = _operand(fn.args[0], by_name) if fn.args else None
    if t is torch.view_as_real and x is not None and x[0] == "pair" and len(fn.args) == 1:
        s("identity", [x[1]])               # (its tensor_meta may be missing: a view of a complex tensor)
        return s.done()
    if out_shape is None:
        return None
    got = None
    if call_is(fn, _MUL + _DIV + _ADD + _SUB):
        got = _arithmetic(fn, by_name, s, out_shape)
    elif t in (torch.fft.fft, torch.fft.ifft, torch.fft.rfft, torch.fft.irfft):
        got = _fft(fn, by_name, s)
    elif call_is(fn, _FFT_DIMS):
        from .capture_fft_dims import fft_dims_nodes
        got = fft_dims_nodes(fn, s, x)
    elif call_is(fn, _SHIFTS):
        from .capture_fft_dims import shift_nodes
        return shift_nodes(fn, x[1], x[2]) if x is not None and x[0] == "pair" else None
    elif t is torch.stft:
        nodes = _stft_nodes(fn, [fn.args[0].name], by_name, pair=True) if x is not None else None
        return nodes
    elif t is torch.complex and len(fn.args) == 2 and not fn.kwargs:
        re, im = (_operand(a, by_name) for a in fn.args)
        if re is None or im is None or re[0] != "real" or im[0] != "real":
            return None
        parts = []
        for v in (re, im):                  # torch broadcasts the two: each viewed at the result's rank, widened
            kept = [1] * (len(out_shape) - len(v[2])) + v[2]
            parts.append(s.widen(s("reshape", [v[1]], target_shape=kept + [1]), kept + [1], out_shape + [1]))
        got = _join(s, parts[0], parts[1], len(out_shape))
    elif t is torch.polar and len(fn.args) == 2 and not fn.kwargs:
        r, theta = (_operand(a, by_name) for a in fn.args)
        if r is None or theta is None or r[0] != "real" or theta[0] != "real" or r[2] != theta[2]:
            return None
        re = s("mul", [r[1], s("elementwise", [theta[1]], fn="cos")])
        im = s("mul", [r[1], s("elementwise", [theta[1]], fn="sin")])
        got = _join(s, _trailing(s, re, out_shape), _trailing(s, im, out_shape), len(out_shape))
    elif t is torch.view_as_complex and x is not None and x[0] == "real":
        got = s("identity", [x[1]])
    elif (got := _complex_power(fn, by_name, s, out_shape)) is not None:
        pass                                # a complex exponent or base (capture_complex_trig)
    elif (got := _layout(fn, by_name, s, x, out_shape)) is not None:
        pass                                # expand, repeat, select, cumsum, dot, ... (capture_complex_layout)
    elif (got := _matmul(fn, by_name, s, out_shape)) is not None:
        pass                                # complex matrix products (capture_complex_matmul)
    elif (got := _selection(fn, by_name, s, x, out_shape)) is not None:
        pass                                # index lists, gather, flip, roll, where, norms (capture_complex_select)
    elif (got := _products(fn, by_name, s, x, out_shape)) is not None:
        pass                                # prod, einsum, dot, ==, a computed index (capture_complex_products)
    elif x is None or x[0] != "pair":
        return None
    elif (t is getattr and fn.args[1] in ("real", "imag")) or t in (torch.real, torch.imag):
        which = fn.args[1] if t is getattr else ("real" if t is torch.real else "imag")
        part = _parts(s, x[1], x[2])[which == "imag"]
        got = s("reshape", [part], target_shape=out_shape)
    elif call_is(fn, (torch.abs, operator.abs, "abs", torch.angle, "angle")) and len(fn.args) == 1:
        re, im = _parts(s, x[1], x[2])
        pair = [re, im] if call_is(fn, (torch.abs, operator.abs, "abs")) else [im, re]
        value = s("binary_math", pair, fn="hypot" if pair[0] == re else "atan2")
        got = s("reshape", [value], target_shape=out_shape)
    elif call_is(fn, (operator.neg, torch.neg, "neg")) and len(fn.args) == 1:
        got = s("neg", [x[1]])
    elif call_is(fn, (torch.conj, "conj", torch.conj_physical, "conj_physical")) and len(fn.args) == 1:
        re, im = _parts(s, x[1], x[2])
        got = _join(s, re, s("neg", [im]), len(out_shape))
    elif call_is(fn, ("sum", torch.sum, "mean", torch.mean)) and not set(fn.kwargs) - {"dim", "keepdim"}:
        got = _reduce(fn, s, x[1], x[2], out_shape)
    elif t is operator.getitem and len(fn.args) == 2:
        got = _index_nodes(fn, s, x[1], x[2], out_shape)
    elif call_is(fn, _VIEWS) and is_complex(fn):
        got = s("reshape", [x[1]], target_shape=out_shape + [2])
    elif fn.target == "view" and fn.args[1:] == (torch.float32,) and not fn.kwargs \
            and getattr(_meta(fn.args[0]), "dtype", None) is torch.complex64:
        got = s("reshape", [x[1]], target_shape=out_shape)  # complex64 as float32: the pairs along the last dim
    elif (got := _math(fn, s, x[1], x[2], out_shape)) is not None:
        pass
    elif call_is(fn, ("permute", torch.permute, "transpose", torch.transpose, "swapaxes", "swapdims", "t")):
        got = _permute(fn, s, x[1], x[2])
    if got is None:
        return None
    return s.done()


def _math(fn, s: _Steps, p: str, shape, out_shape) -> Optional[str]:
    from .capture_complex_math import math_nodes       # (it imports this module)
    from .capture_complex_trig import function_nodes
    return math_nodes(fn, s, p, shape, out_shape) or function_nodes(fn, s, p, shape, out_shape)


def _layout(fn, by_name, s: _Steps, x, out_shape) -> Optional[str]:
    from .capture_complex_layout import layout_nodes
    return layout_nodes(fn, by_name, s, x, out_shape)


def _matmul(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    from .capture_complex_matmul import matmul_nodes
    return matmul_nodes(fn, by_name, s, out_shape)


def _selection(fn, by_name, s: _Steps, x, out_shape) -> Optional[str]:
    from .capture_complex_select import select_nodes
    return select_nodes(fn, by_name, s, x, out_shape)


def _products(fn, by_name, s: _Steps, x, out_shape) -> Optional[str]:
    from .capture_complex_products import product_nodes
    return product_nodes(fn, by_name, s, x, out_shape)


def _complex_power(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    from .capture_complex_trig import power_nodes
    return power_nodes(fn, by_name, s, out_shape)


def _reduce(fn, s: _Steps, p: str, shape, out_shape) -> Optional[str]:
    """sum / mean over dims (all of S when none): the pair's dim and the
    summed ones moved after the kept ones (a permute), viewed as [kept, 2,
    count], one linear by a row of ones over the
    last dim (a mean: the mean over it), viewed as the result + [2]. (The
    int8 mean times the count, as capture_calls sums, would round the mean
    on its own grid and magnify that by the count: 4.2 output steps
    measured for a whole sum of 20 bins, the linear's one rounding 1.2.)"""
    dim = _arg(fn, 1, "dim")
    if len(fn.args) > 3 or not shape:
        return None
    dims = list(range(len(shape))) if dim is None else _dims(dim, len(shape))
    if dims is None:
        return None
    kept = [d for d in range(len(shape)) if d not in dims]
    order = kept + [len(shape)] + dims
    cur = p if order == sorted(order) else s("permute", [p], dims=order)
    count = int(np.prod([shape[d] for d in dims]))
    cur = s("reshape", [cur], target_shape=[int(np.prod([shape[d] for d in kept])), 2, count])
    if call_is(fn, ("sum", torch.sum)):
        cur = s("linear", [cur], weight=np.ones((1, count), np.float32), bias=None)
    else:
        cur = s("mean", [cur], dim=[2], keepdim=False)
    return s("reshape", [cur], target_shape=out_shape + [2])


def _joined(fn, by_name) -> Optional[List[Node]]:
    """torch.cat / torch.stack of complex values along a dim of S."""
    if not call_is(fn, (torch.cat, torch.concat, torch.stack)) or not fn.args \
            or set(fn.kwargs) - {"dim"} or len(fn.args) > 2 or not isinstance(fn.args[0], (list, tuple)):
        return None
    parts = [_operand(a, by_name) for a in fn.args[0]]
    if not parts or any(p is None or p[0] != "pair" for p in parts):
        return None
    out_shape = _shape(fn)
    dim = _arg(fn, 1, "dim", 0)
    if out_shape is None or not isinstance(dim, int):
        return None
    s = _Steps(fn.name)
    dim %= len(out_shape)
    names = [p[1] for p in parts]
    if fn.target is torch.stack:
        names = [s("reshape", [p[1]], target_shape=p[2][:dim] + [1] + p[2][dim:] + [2]) for p in parts]
    s("cat", names, dim=dim)
    return s.done()


def _touches_complex(fn) -> bool:
    found = []
    torch.fx.node.map_arg((fn.args, fn.kwargs), lambda a: found.append(is_complex(a)))
    return is_complex(fn) or any(found)


def complex_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of a call that makes, combines or reads complex values;
    refuses (one line naming the call) a complex program output and any
    other call on a complex value; None for a call with none."""
    if fn.op not in ("call_function", "call_method") or not _touches_complex(fn):
        return None
    if is_complex(fn) and any(u.op == "output" for u in fn.users):
        refuse_call(fn, OUTPUT)
    from .capture_complex_layout import piece_nodes     # chunk, split, unbind and their pieces
    from .capture_eig import eig_nodes                  # eigvals, eig's values and vectors: made complex
    nodes = piece_nodes(fn) or eig_nodes(fn) or _joined(fn, by_name) or _pair_nodes(fn, by_name)
    if nodes is None:
        refuse_call(fn, torch_refusal(fn) or OTHER)
    return nodes


def complex_module_nodes(fn, module, source: str) -> Optional[List[Node]]:
    """A submodule called on (or returning) a complex value: nn.Identity,
    nn.Flatten and nn.Unflatten, which only view it (torch flattens the
    complex dims, the pair's dim stays last), as a reshape of its pair;
    nn.Tanh, nn.Sigmoid, nn.SiLU, nn.Softsign, nn.Tanhshrink and the
    dropouts (capture_complex_trig); any other refused in one line naming
    it, quoting torch where torch raises (its layers would read the pair's
    dim as data). None for a call with no complex value."""
    if fn.op != "call_module" or not _touches_complex(fn):
        return None
    if is_complex(fn) and any(u.op == "output" for u in fn.users):
        raise UnsupportedOperator(f"operator not supported: {source}: {OUTPUT}")
    x, out_shape = (fn.args[0] if len(fn.args) == 1 and not fn.kwargs else None), _shape(fn)
    if is_complex(x) and is_complex(fn) and out_shape is not None:
        s = _Steps(fn.name)
        if isinstance(module, (torch.nn.Identity, torch.nn.Flatten, torch.nn.Unflatten)):
            s("reshape", [x.name], target_shape=out_shape + [2])
            return s.done()
        from .capture_complex_trig import module_nodes      # nn.Tanh, nn.Sigmoid, ..., the dropouts
        from .capture_complex_select import pad_module_nodes  # the pad layers
        if out_shape == _shape(x) and module_nodes(module, s, x.name, out_shape) is not None:
            return s.done()
        if pad_module_nodes(module, s, x.name, _shape(x), out_shape) is not None:
            return s.done()
    raise UnsupportedOperator(f"operator not supported: {source}: {torch_refusal(fn, module) or OTHER}")


def torch_refusal(fn, module=None) -> Optional[str]:
    """What torch itself says when it runs this call (or layer) on values
    of its arguments' traced shapes and dtypes, if it raises: a call torch
    does not define on a complex value (torch.exp2 in torch 1.13, nn.Linear
    with float weights, nn.ReLU) is refused quoting torch, not as a gap."""
    missing = []

    def sample(a):
        meta = _meta(a)
        if meta is None or not hasattr(meta, "shape"):
            missing.append(a)
            return None
        return torch.ones(tuple(meta.shape), dtype=meta.dtype)
    args, kwargs = torch.fx.node.map_arg((fn.args, fn.kwargs), sample)
    if missing:
        return None
    try:
        with torch.no_grad():
            if module is not None:
                model_copy(module)(*args, **kwargs)     # (a copy: a layer's state stays as it was)
            elif fn.op == "call_method":
                getattr(args[0], fn.target)(*args[1:], **kwargs)
            else:
                fn.target(*args, **kwargs)
    except Exception as e:                  # noqa: BLE001 - torch's own refusal, quoted
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        # only a refusal of the dtype: another error (a shape, a value of these samples) says nothing of it
        if any(w in first.lower() for w in ("complex", "dtype", "scalar type")):
            return f"torch itself does not compute it on a complex value ({first})"
    return None
