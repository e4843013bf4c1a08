"""Fourier transforms over several dims, Hermitian ones, and the shifts
(issue 15): torch.fft.fft2 / ifft2 / fftn / ifftn / rfft2 / irfft2 / rfftn
/ irfftn are 1-D transforms over their dims one after another (the DFT is
separable: norm's factor is the product of each dim's), each one
ptec.capture_complex's constant product over that dim (one linear by its
DFT matrix, the pairs interleaved); the real-input ones rfft over their
last dim first, then fft over the others; the inverse ones ifft over all
but the last, then irfft over it (torch's order: irfft reads a half
spectrum, so is real- and not complex-linear).

hfft(x, n, dim, norm) = irfft(conj x, n, dim) and ihfft(x, n, dim, norm)
= conj rfft(x, n, dim): torch's Hermitian pair, whose norm is the other
direction's ("backward", the default, leaves hfft unscaled and divides
ihfft by n); conj is folded into the matrix (its imaginary columns or rows
negated).

fftshift / ifftshift (dim: all by default) roll each dim by n // 2 (by
-(n // 2)): two slices swapped, of a complex value's pair (its own dim
left) or of a real value."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import call_is, torch_functions
from .capture_rewrites import _Steps
from .capture_spectral import irfft_matrix
from .ir import Node

_N_DIM = tuple(getattr(torch.fft, f) for f in ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn",
                                               "irfftn"))
_HERMITIAN = (torch.fft.hfft, torch.fft.ihfft)
_HFFTN = torch_functions("fft.hfft2", "fft.hfftn")          # irfftn of conj x, the other direction's norm
_IHFFTN = torch_functions("fft.ihfft2", "fft.ihfftn")       # conj rfftn(x), likewise
_TWO = (torch.fft.fft2, torch.fft.ifft2, torch.fft.rfft2, torch.fft.irfft2) + torch_functions("fft.hfft2",
                                                                                               "fft.ihfft2")
_SHIFTS = (torch.fft.fftshift, torch.fft.ifftshift)
_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _args(fn, names):
    args = dict(zip(names, fn.args))
    args.update(fn.kwargs)
    return None if set(args) - set(names) else args


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _plan(fn, rank: int):
    """[(dim, n)] in the order torch lists them, or None: fft2's dims
    default to the last two, fftn's to the last len(s) (all when s is
    None); an n of -1 or None keeps the dim's length."""
    args = _args(fn, ("input", "s", "dim", "norm"))
    if args is None:
        return None
    two = call_is(fn, _TWO)
    sizes, dims = args.get("s"), args.get("dim", (-2, -1) if two else None)
    if _int(dims):
        dims = [dims]
    if sizes is not None and (not isinstance(sizes, (list, tuple)) or not all(_int(v) for v in sizes)):
        return None
    if dims is None:
        dims = list(range(rank - (len(sizes) if sizes is not None else rank), rank))
    if not isinstance(dims, (list, tuple)) or not dims or not all(_int(d) for d in dims):
        return None
    dims = [d % rank for d in dims] if rank else None
    if dims is None or len(set(dims)) != len(dims) or (sizes is not None and len(sizes) != len(dims)):
        return None
    sizes = list(sizes) if sizes is not None else [None] * len(dims)
    return [(d, None if n in (None, -1) else n) for d, n in zip(dims, sizes)], args.get("norm")


def _one(s: _Steps, src: str, shape, pair: bool, dim: int, n: Optional[int], norm, kind: str):
    """One 1-D transform over dim: kind "fft", "ifft" (of a pair or a real
    value), "rfft" (of a real value), "irfft" / "hfft" (of a pair, or of a
    real value: its imaginary parts 0) or "ihfft" (of a real value). The
    new name and shape (always a pair but after irfft / hfft)."""
    from .capture_complex import _along, _scale, dft_weight
    length = shape[dim]
    if kind in ("irfft", "hfft"):
        n = 2 * (length - 1) if n is None else n
        scale = _scale(_SWAPPED.get(norm, "?") if kind == "hfft" else norm, n, True) if n >= 1 else None
        if scale is None:
            return None
        w = irfft_matrix(n, length, scale)                      # [n, re columns | im columns]
        if kind == "hfft":
            w[:, length:] *= -1.0                               # of conj x
        if not pair:
            return _along(s, src, shape, dim, False, w[:, :length].copy(), False), shape[:dim] + [n] + shape[dim + 1:]
        inter = np.zeros((n, 2 * length), np.float32)
        inter[:, 0::2], inter[:, 1::2] = w[:, :length], w[:, length:]
        return _along(s, src, shape, dim, True, inter, False), shape[:dim] + [n] + shape[dim + 1:]
    n = length if n is None else n
    if n < 1 or (pair and kind in ("rfft", "ihfft")):
        return None
    inverse = kind == "ifft"
    scale = _scale(_SWAPPED.get(norm, "?") if kind == "ihfft" else norm, n, inverse)
    if scale is None:
        return None
    bins = n // 2 + 1 if kind in ("rfft", "ihfft") else n
    weight = dft_weight(n, length, bins, scale, inverse, pair, conjugate=kind == "ihfft")
    return _along(s, src, shape, dim, pair, weight, True), shape[:dim] + [bins] + shape[dim + 1:]


def fft_dims_nodes(fn, s: _Steps, x) -> Optional[str]:
    """fft2 ... irfftn, hfft, ihfft of capture_complex's operand x (a pair
    or a real value)."""
    t = fn.target
    if x is None or x[0] not in ("pair", "real") or not x[2]:
        return None
    cur, shape, pair = x[1], list(x[2]), x[0] == "pair"
    if call_is(fn, _HERMITIAN):
        args = _args(fn, ("input", "n", "dim", "norm"))
        if args is None or not _int(args.get("dim", -1)) or not (args.get("n") is None or _int(args["n"])):
            return None
        kind = "hfft" if t is torch.fft.hfft else "ihfft"
        got = _one(s, cur, shape, pair, args.get("dim", -1) % len(shape), args.get("n"), args.get("norm"), kind)
        return got and got[0]
    if not call_is(fn, _N_DIM + _HFFTN + _IHFFTN):
        return None
    planned = _plan(fn, len(shape))
    if planned is None:
        return None
    steps, norm = planned
    if call_is(fn, _HFFTN + _IHFFTN):               # torch's Hermitian pair: the other direction's norm
        norm = _SWAPPED.get(norm, "?")
        if call_is(fn, _HFFTN) and pair:
            cur = _conj(s, cur, shape)
    inverse = call_is(fn, (torch.fft.ifft2, torch.fft.ifftn, torch.fft.irfft2, torch.fft.irfftn) + _HFFTN)
    real = call_is(fn, (torch.fft.rfft2, torch.fft.rfftn, torch.fft.irfft2, torch.fft.irfftn) + _HFFTN + _IHFFTN)
    if real and not inverse:            # rfftn: rfft over the last dim, then fft over the others
        if pair:
            return None
        order = [(steps[-1], "rfft")] + [(step, "fft") for step in steps[:-1]]
    elif real:                          # irfftn: ifft over all but the last dim, then irfft over it
        order = [(step, "ifft") for step in steps[:-1]] + [(steps[-1], "irfft")]
    else:
        order = [(step, "ifft" if inverse else "fft") for step in steps]
    for (dim, n), kind in order:
        got = _one(s, cur, shape, pair, dim, n, norm, kind)     # (irfft of a real value: its imaginary parts 0)
        if got is None:
            return None
        cur, shape = got
        pair = kind != "irfft"
    return _conj(s, cur, shape) if call_is(fn, _IHFFTN) else cur


def _conj(s: _Steps, src: str, shape) -> str:
    from .capture_complex import _join, _parts
    re, im = _parts(s, src, shape)
    return _join(s, re, s("neg", [im]), len(shape))


def shift_nodes(fn, src: str, shape) -> Optional[List[Node]]:
    """torch.fft.fftshift / ifftshift of src of logical dims `shape` (a
    complex value's pair dim not among them): rolls by n // 2 (or back)."""
    if not call_is(fn, _SHIFTS) or shape is None:
        return None
    args = _args(fn, ("input", "dim"))
    dims = None if args is None else args.get("dim")
    dims = list(range(len(shape))) if dims is None else [dims] if _int(dims) else dims
    if not isinstance(dims, (list, tuple)) or not all(_int(d) for d in dims) or not shape:
        return None
    s = _Steps(fn.name)
    cur = src
    for dim in sorted({d % len(shape) for d in dims}):
        size = shape[dim]
        shift = size // 2 if fn.target is torch.fft.fftshift else -(size // 2)
        cut = (size - shift) % size
        if cut:
            cur = s("cat", [s("slice", [cur], dim=dim, start=cut, end=size), s("slice", [cur], dim=dim, start=0,
                                                                                    end=cut)], dim=dim)
    if not s.nodes:
        s("identity", [cur])
    return s.done()


def real_nodes(fn, ins) -> Optional[List[Node]]:
    """fftshift / ifftshift and hfft of a real value, which make no
    complex value (a complex one's: capture_complex)."""
    if not call_is(fn, _SHIFTS + (torch.fft.hfft,) + _HFFTN) or not fn.args or not isinstance(fn.args[0], torch.fx.Node) \
            or not ins:
        return None
    meta = fn.args[0].meta.get("tensor_meta")
    shape = [int(d) for d in meta.shape] if meta is not None and hasattr(meta, "shape") else None
    if shape is None or getattr(meta, "dtype", None) not in (torch.float32, torch.float64, torch.float16):
        return None
    if call_is(fn, (torch.fft.hfft,) + _HFFTN):
        s = _Steps(fn.name)
        return s.done() if fft_dims_nodes(fn, s, ("real", ins[0], shape)) is not None else None
    return shift_nodes(fn, ins[0], shape)
