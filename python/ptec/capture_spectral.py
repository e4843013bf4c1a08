"""Spectra of a real input, the front end of keyword spotters (issue 15):
torch.fft.rfft / torch.fft.fft over one dim and torch.stft, read through
.abs() (torch.abs, abs()), .real, .imag, torch.real / torch.imag or
torch.view_as_real, filtered by a constant (spectrum * H) and brought back
by torch.fft.irfft.

A DFT of a real input is linear in it: capture writes the real parts and
the imaginary parts as one product by a constant matrix, the cos rows then
the -sin rows (norm's factor in them), so the spectrum is a real tensor with
the transformed dim twice as long: re stacked before im along that dim. Its
readers take their parts: .real and .imag a slice each, view_as_real the
two joined along a new last dim (copies of the int8 bytes), the magnitude
sqrt(re^2 + im^2) torch.hypot's fp32 kernel (between a dequantize and a quantize),
or where the magnitude is only squared (a power spectrum, |z| ** 2) re^2 + im^2
in int8 (two square LUTs, an add).

A product by a constant H is again linear: re * hr - im * hi and re * hi
+ im * hr (int8 muls by constants, a sub, an add; a real H one mul), and
irfft one more constant product, [cos | -sin] columns weighted as the
bins' mirror images count.

torch.stft is the same product over windows of the input: one conv1d whose
kernels are the windowed DFT rows and whose stride is the hop (after the
reflect or constant padding center=True asks for), giving [B, 2F, T].

A spectrum read any other way (multiplied by a value, transformed again,
returned) is a complex value, which capture_complex carries as a real
[..., 2] tensor (spectral_nodes leaves it to it)."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .capture_rewrites import _Steps
from .ir import Node

_FFTS = (torch.fft.rfft, torch.fft.fft)


def _shape(fn):
    meta = fn.meta.get("tensor_meta") if isinstance(fn, torch.fx.Node) else None
    return [int(d) for d in meta.shape] if meta is not None and hasattr(meta, "shape") else None


def _real_float(fn) -> bool:
    meta = fn.meta.get("tensor_meta") if isinstance(fn, torch.fx.Node) else None
    return meta is not None and meta.dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def _constant_or_number(a) -> bool:
    return (isinstance(a, (int, float, complex)) and not isinstance(a, bool)) \
        or (isinstance(a, torch.fx.Node) and a.op == "get_attr")


def _part_of(user, spectrum=None) -> Optional[str]:
    """What a reader of a spectrum takes ("abs", "real", "imag", "pair",
    "irfft" of it, "scaled": a product by a constant, itself a spectrum),
    or None for any other use."""
    t = user.target
    if user.op == "call_method" and t == "abs" and len(user.args) == 1 and not user.kwargs:
        return "abs"
    if t in (operator.mul, torch.mul, "mul") and len(user.args) == 2 and not user.kwargs \
            and user.op in ("call_function", "call_method") \
            and sum(_constant_or_number(a) for a in user.args) == 1 and user.args.count(spectrum) == 1:
        return "scaled"
    if user.op == "call_function" and t is torch.fft.irfft and user.args and user.args[0] is spectrum \
            and spectrum is not None and not set(user.kwargs) - {"n", "dim", "norm"}:
        return "irfft"
    if user.op != "call_function" or user.kwargs:
        return None
    if t in (torch.abs, operator.abs) and len(user.args) == 1:
        return "abs"
    if t is getattr and len(user.args) == 2 and user.args[1] in ("real", "imag"):
        return user.args[1]
    if t in (torch.real, torch.imag) and len(user.args) == 1:
        return "real" if t is torch.real else "imag"
    if t is torch.view_as_real and len(user.args) == 1:
        return "pair"
    return None


def _spectrum_dim(fn) -> Optional[int]:
    """The dim an FFT (of its input's rank) or an STFT (the bins' dim,
    before the frames) transforms, or None."""
    shape = _shape(fn)
    if shape is None:
        return None
    if fn.target is torch.stft:
        return len(shape) - 2
    dim = _arg(fn, 2, "dim", -1)
    return dim % len(shape) if isinstance(dim, int) and shape else None


def _readable(fn, dim=None) -> bool:
    """Every use of spectrum fn reads a part of it (a product by a constant:
    every use of that product too; an irfft: over the spectrum's own dim).
    A spectrum read otherwise is a complex value (capture_complex)."""
    dim = _spectrum_dim(fn) if dim is None else dim
    parts = [(_part_of(u, fn), u) for u in fn.users]
    return dim is not None and bool(parts) and all(
        p is not None and (p != "scaled" or _readable(u, dim)) and (p != "irfft" or _along(u, fn, dim))
        for p, u in parts)


def _along(irfft, spectrum, dim: int) -> bool:
    """irfft (a call of torch.fft.irfft) transforms spectrum's dim `dim`."""
    along, shape = _arg(irfft, 2, "dim", -1), _shape(spectrum)
    return isinstance(along, int) and not isinstance(along, bool) and bool(shape) and along % len(shape) == dim


def _squares(user) -> bool:
    """user is x.pow(2), x ** 2, torch.pow(x, 2), x.square() or torch.square(x)."""
    t = user.target
    if user.kwargs or user.op not in ("call_function", "call_method"):
        return False
    if t in ("square", torch.square) and len(user.args) == 1:
        return True
    two = len(user.args) == 2 and not isinstance(user.args[1], bool) and user.args[1] == 2 \
        and isinstance(user.args[1], (int, float))
    return two and t in ("pow", torch.pow, operator.pow)


def _arg(fn, i, key, default=None):
    return fn.args[i] if len(fn.args) > i else fn.kwargs.get(key, default)


def _scale(norm, n: int) -> Optional[float]:
    return {None: 1.0, "backward": 1.0, "ortho": 1.0 / np.sqrt(n), "forward": 1.0 / n}.get(norm)


def dft_matrix(n: int, length: int, bins: int, scale: float) -> np.ndarray:
    """[2 * bins, length]: rows k of cos(2 pi k t / n), then of -sin, for
    the first `length` samples t of an n-point DFT (a shorter input is
    zero-padded to n: its missing samples add nothing), times scale."""
    k = np.arange(bins, dtype=np.float64)[:, None]
    t = np.arange(length, dtype=np.float64)[None, :]
    angle = 2.0 * np.pi * ((k * t) % n) / n
    return (np.concatenate([np.cos(angle), -np.sin(angle)]) * scale).astype(np.float32)


def _fft_nodes(fn, ins) -> Optional[List[Node]]:
    """torch.fft.rfft / fft (x, n, dim, norm) of a real x: the constant
    product over dim (moved last and back by permutes), the input cut to n
    first when n is shorter."""
    args = dict(zip(("input", "n", "dim", "norm"), fn.args))
    args.update(fn.kwargs)
    if set(args) - {"input", "n", "dim", "norm"} or not isinstance(args["input"], torch.fx.Node):
        return None
    shape, n, dim, norm = _shape(args["input"]), args.get("n"), args.get("dim", -1), args.get("norm")
    if shape is None or not shape or not _real_float(args["input"]) or not isinstance(dim, int) \
            or (n is not None and (not isinstance(n, int) or n < 1)):
        return None
    dim %= len(shape)
    n = shape[dim] if n is None else n
    scale = _scale(norm, n)
    if scale is None:
        return None
    bins = n // 2 + 1 if fn.target is torch.fft.rfft else n
    s = _Steps(fn.name)
    cur = ins[0]
    if n < shape[dim]:
        cur = s("slice", [cur], dim=dim, start=0, end=n)
    last = len(shape) - 1
    order = list(range(len(shape)))
    order[dim], order[last] = last, dim
    if dim != last:
        cur = s("permute", [cur], dims=order)
    cur = s("linear", [cur], weight=dft_matrix(n, min(n, shape[dim]), bins, scale), bias=None)
    if dim != last:
        s("permute", [cur], dims=order)
    nodes = s.done()
    nodes[-1].attrs["spectrum"] = (dim, bins)
    return nodes


def _stft_nodes(fn, ins, by_name, pair=False) -> Optional[List[Node]]:
    """torch.stft(x [L] or [B, L], n_fft, hop_length, win_length, window,
    center, pad_mode, normalized, onesided, return_complex): x viewed as
    [B, 1, L], padded by n_fft // 2 on each side when center (reflect or
    constant), then a conv1d by the windowed DFT rows [2F, 1, n_fft] with
    stride hop: [B, 2F, T], viewed as [2F, T] for a 1-D x. return_complex
    False (or pair, a complex value capture_complex carries) gives torch's
    [.., F, T, 2] at once (view_as_real's layout)."""
    names = ("input", "n_fft", "hop_length", "win_length", "window", "center", "pad_mode", "normalized",
             "onesided", "return_complex")
    args = dict(zip(names, fn.args))
    args.update(fn.kwargs)
    x, n_fft = args.get("input"), args.get("n_fft")
    if set(args) - set(names) or not isinstance(x, torch.fx.Node) or not isinstance(n_fft, int):
        return None
    shape = _shape(x)
    hop = args.get("hop_length") or n_fft // 4
    win = args.get("win_length") or n_fft
    center, pad_mode = args.get("center", True), args.get("pad_mode", "reflect")
    onesided = args.get("onesided")
    onesided = True if onesided is None else onesided
    if shape is None or len(shape) not in (1, 2) or not _real_float(x) or not isinstance(hop, int) or hop < 1 \
            or not isinstance(win, int) or not 0 < win <= n_fft or pad_mode not in ("reflect", "constant") \
            or not isinstance(center, bool) or not isinstance(onesided, bool):
        return None
    window = args.get("window")
    if window is None:
        w = np.ones(win, np.float64)
    else:
        const = by_name.get(window.name) if isinstance(window, torch.fx.Node) else None
        if const is None or const.op != "constant":
            return None
        w = np.asarray(const.attrs["value"], np.float64).reshape(-1)
        if w.size != win:
            return None
    left = (n_fft - win) // 2                       # torch centres a shorter window in n_fft
    full = np.zeros(n_fft, np.float64)
    full[left:left + win] = w
    bins = n_fft // 2 + 1 if onesided else n_fft
    scale = n_fft ** -0.5 if args.get("normalized", False) else 1.0
    kernel = dft_matrix(n_fft, n_fft, bins, scale) * full[None, :].astype(np.float32)
    batch, length = (shape if len(shape) == 2 else [1] + shape)
    s = _Steps(fn.name)
    cur = s("reshape", [ins[0]], target_shape=[batch, 1, length])
    if center:
        pad = n_fft // 2
        if pad_mode == "reflect" and pad >= length:
            return None
        cur = s("pad", [cur], pad=[pad, pad], mode=pad_mode, value=0.0)
        length += 2 * pad
    if length < n_fft:
        return None
    frames = 1 + (length - n_fft) // hop
    cur = s("reshape", [cur], target_shape=[batch, 1, 1, length])
    cur = s("conv2d", [cur], weight=kernel[:, None, None, :].copy(), bias=None, stride=[1, hop], padding=[0, 0],
            dilation=[1, 1], groups=1)
    spectrum = [batch, 2 * bins, frames] if len(shape) == 2 else [2 * bins, frames]
    if args.get("return_complex") and not pair:
        s("reshape", [cur], target_shape=spectrum)
        nodes = s.done()
        nodes[-1].attrs["spectrum"] = (len(spectrum) - 2, bins)
        return nodes
    # [.., 2, F, T] -> [.., F, T, 2]
    cur = s("reshape", [cur], target_shape=spectrum[:-2] + [2, bins, frames])
    rank = len(spectrum) + 1
    s("permute", [cur], dims=list(range(rank - 3)) + [rank - 2, rank - 1, rank - 3])
    return s.done()


def _scaled_nodes(fn, src: Node, factor, shape) -> Optional[List[Node]]:
    """spectrum * H, H a constant (real or complex, broadcast to the
    spectrum's shape) or a number: re * hr - im * hi, re * hi + im * hr by
    int8 muls by constants, an add and a sub, restacked; a real H one mul
    of the stacked parts by [H; H]."""
    dim, bins = src.attrs["spectrum"]
    try:
        h = np.broadcast_to(np.asarray(factor), shape)
    except ValueError:
        return None
    hr, hi = np.real(h).astype(np.float32), np.imag(h).astype(np.float32)
    s = _Steps(fn.name)
    if not hi.any():
        s("mul", [src.name, s.const(np.concatenate([hr, hr], axis=dim))])
    else:
        re = s("slice", [src.name], dim=dim, start=0, end=bins)
        im = s("slice", [src.name], dim=dim, start=bins, end=2 * bins)
        new_re = s("sub", [s("mul", [re, s.const(hr)]), s("mul", [im, s.const(hi)])])
        new_im = s("add", [s("mul", [re, s.const(hi)]), s("mul", [im, s.const(hr)])])
        s("cat", [new_re, new_im], dim=dim)
    nodes = s.done()
    nodes[-1].attrs["spectrum"] = (dim, bins)
    return nodes


def irfft_matrix(n: int, bins: int, scale: float) -> np.ndarray:
    """[n, 2 * bins]: sample t of the real signal of n points whose first
    n // 2 + 1 bins are re (columns 0..bins-1) + i im (the rest): scale *
    c_k (re_k cos(2 pi k t / n) - im_k sin(2 pi k t / n)), c_k 1 for the
    DC and Nyquist bins, 2 for the others (their mirror images), 0 past n
    // 2 + 1 (torch reads no more); the DC and Nyquist imaginary parts meet
    sin(0) and sin(pi t), so drop out as torch drops them."""
    k = np.arange(bins, dtype=np.float64)[None, :]
    t = np.arange(n, dtype=np.float64)[:, None]
    weight = np.where(k > n // 2, 0.0, np.where((k == 0) | (2 * k == n), 1.0, 2.0))
    angle = 2.0 * np.pi * ((k * t) % n) / n
    return (np.concatenate([np.cos(angle) * weight, -np.sin(angle) * weight], axis=1) * scale).astype(np.float32)


def _irfft_nodes(fn, src: Node, shape) -> Optional[List[Node]]:
    """torch.fft.irfft(spectrum, n, dim, norm) over the spectrum's own dim:
    one constant product (the dim moved last and back by permutes)."""
    dim, bins = src.attrs["spectrum"]
    args = dict(zip(("input", "n", "dim", "norm"), fn.args))
    args.update(fn.kwargs)
    rank = len(shape)
    n, norm, along = args.get("n"), args.get("norm"), args.get("dim", -1)
    if not isinstance(along, int) or along % rank != dim or (n is not None and (not isinstance(n, int) or n < 1)):
        return None
    n = 2 * (bins - 1) if n is None else n
    scale = {None: 1.0 / n, "backward": 1.0 / n, "ortho": 1.0 / np.sqrt(n), "forward": 1.0}.get(norm)
    if scale is None or n < 1:
        return None
    s = _Steps(fn.name)
    order = list(range(rank))
    order[dim], order[-1] = order[-1], order[dim]
    cur = src.name if dim == rank - 1 else s("permute", [src.name], dims=order)
    cur = s("linear", [cur], weight=irfft_matrix(n, bins, scale), bias=None)
    if dim != rank - 1:
        s("permute", [cur], dims=order)
    return s.done()


def _reader_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """A reader of a spectrum (_part_of): its part of the stacked re, im."""
    spectra = [a for a in fn.args if isinstance(a, torch.fx.Node) and a.name in by_name
               and "spectrum" in by_name[a.name].attrs]
    if len(spectra) != 1:
        return None
    src = by_name[spectra[0].name]
    part = _part_of(fn, spectra[0])
    if part is None:
        return None
    dim, bins = src.attrs["spectrum"]
    shape = _shape(fn)
    if part == "scaled":
        other = next(a for a in fn.args if a is not spectra[0])
        if isinstance(other, torch.fx.Node):
            const = by_name.get(other.name)
            if const is None or const.op != "constant":
                return None
            other = const.attrs["value"]
        return _scaled_nodes(fn, src, other, _shape(spectra[0]))
    if part == "irfft":
        nodes = _irfft_nodes(fn, src, _shape(spectra[0]))
        if nodes is None:
            from .capture import _function_node       # capture imports this module
            nodes = [_function_node(fn, [src.name])]
            nodes[0].attrs["why"] = "ptec runs irfft over the dim its spectrum was taken along, with norm " \
                                    "backward, ortho or forward"
        return nodes
    s = _Steps(fn.name)
    re = s("slice", [src.name], dim=dim, start=0, end=bins)
    if part == "real":
        return s.done()
    im = s("slice", [src.name], dim=dim, start=bins, end=2 * bins)
    if part == "imag":
        return s.done()
    if part == "pair":
        whole = shape[:-1]
        joined = [s("reshape", [p], target_shape=whole + [1]) for p in (re, im)]
        s("cat", joined, dim=len(whole))
        return s.done()
    if fn.users and all(_squares(u) for u in fn.users):
        # read only squared (a power spectrum): re^2 + im^2 in int8, two square
        # LUTs and an add, which its squares pass on (spectral_nodes)
        s("add", [s("elementwise", [re], fn="square"), s("elementwise", [im], fn="square")])
        nodes = s.done()
        nodes[-1].attrs["power_spectrum"] = True
        return nodes
    # sqrt(re^2 + im^2) from int8 squares would lose the small magnitudes (a
    # square's grid steps are coarse near 0, and sqrt magnifies them: 11 output
    # steps measured): torch.hypot's fp32 kernel takes re and im instead
    s("binary_math", [re, im], fn="hypot")
    return s.done()


def spectral_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of a spectrum (an FFT or STFT whose every reader takes a
    real part of it) or of one reader; for a spectrum read otherwise, the
    unsupported node capture makes, with the reason; else None."""
    if fn.op not in ("call_function", "call_method"):
        return None
    if fn.op == "call_function" and (fn.target in _FFTS or fn.target is torch.stft):
        stft = fn.target is torch.stft
        complex_out = not stft or bool(_arg(fn, 9, "return_complex", False))
        if complex_out and not _readable(fn):
            return None         # a complex value: capture_complex carries it as [..., 2]
        return _stft_nodes(fn, ins, by_name) if stft else _fft_nodes(fn, ins)
    src = by_name.get(ins[0]) if ins else None
    if src is not None and src.attrs.get("power_spectrum") and _squares(fn):
        return [Node(fn.name, "identity", [src.name])]         # the magnitude's square: the power itself
    return _reader_nodes(fn, ins, by_name)
