"""F.interpolate / nn.Upsample built from int8 ops ptec has (capture's
stand-ins): modes "linear" [N, C, L], "bilinear" and "bicubic" [N, C, H, W],
"trilinear" [N, C, D, H, W], and "area", "nearest" and "nearest-exact" on all
three ranks ([N, C, L] nearest as [N, C, 1, L]).

Each of the interpolating modes is separable: along one axis it is a
constant matrix A [out, in] (linear: two weights a row, lambda0 and
lambda1; bicubic: four; area: 1 / count over the window), so an axis is a
linear layer without bias over the last dim, its taps summed in one int8
accumulator (8-bit weights even under --w4: attrs["resize_weights"]).
Several axes go last dim first, each brought last by a permute and the rest
flattened so every linear sees a [N, M, L] tensor; the extra rounding
between two axes is one int8 step of the intermediate. "area" on a 4-D
input is the adaptive average pool instead (adaptive_avg_pool_nodes: one
joint matrix, one rounding, when the output does not divide the input).
"nearest" picks input indices: H and W by the 4-D nearest resize on
[N, C * D, H, W] when its in / out rule picks what torch picks, and
otherwise (and D always) by slices joined by a cat: byte copies on the
input's int8 grid.

The source indices follow torch's rules (ATen's UpSample.h) in float32:
scale = (in - 1) / (out - 1) with align_corners (0 when out is 1), else
1 / scale_factor when the call gave one and did not ask to recompute it,
else in / out; the linear source is scale * (dst + 0.5) - 0.5, at least 0
(scale * dst with align_corners), i0 its floor, i1 = i0 + 1 except at the
last input, lambda1 = src - i0; nearest is min(floor(dst * scale), in - 1),
nearest-exact min(floor((dst + 0.5) * scale), in - 1);
bicubic's rules are at cubic_matrix, antialias's at antialias_matrix
(torch 1.13 takes antialias=True for bilinear and bicubic on 4-D only).
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from .ir import Node


def _scale(n_in: int, n_out: int, align_corners: bool, factor: Optional[float]) -> np.float32:
    if align_corners:
        return np.float32((n_in - 1) / (n_out - 1)) if n_out > 1 else np.float32(0.0)
    if factor is not None and factor > 0:
        return np.float32(1.0 / factor)
    return np.float32(n_in) / np.float32(n_out)


def linear_matrix(n_in: int, n_out: int, align_corners: bool, factor: Optional[float]) -> np.ndarray:
    """[n_out, n_in] float32: row j holds torch's two linear weights for output j."""
    s = _scale(n_in, n_out, align_corners, factor)
    a = np.zeros((n_out, n_in), np.float32)
    for j in range(n_out):
        if align_corners:
            src = s * np.float32(j)
        else:
            src = max(s * (np.float32(j) + np.float32(0.5)) - np.float32(0.5), np.float32(0.0))
        i0 = int(src)
        i1 = i0 + 1 if i0 < n_in - 1 else i0
        l1 = np.float32(src - np.float32(i0))
        a[j, i0] += np.float32(1.0) - l1
        a[j, i1] += l1
    return a


def _cubic_weights(t: np.float32) -> List[np.float32]:
    """torch's four cubic-convolution weights (A = -0.75) for the taps at
    offsets -1, 0, 1, 2 from floor(src), t = src - floor(src), in float32."""
    a = np.float32(-0.75)
    one = np.float32(1.0)

    def near(v):        # |v| <= 1
        return ((a + np.float32(2.0)) * v - (a + np.float32(3.0))) * v * v + one

    def far(v):         # 1 < |v| < 2
        return ((a * v - np.float32(5.0) * a) * v + np.float32(8.0) * a) * v - np.float32(4.0) * a

    return [far(t + one), near(t), near(one - t), far(np.float32(2.0) - t)]


def cubic_matrix(n_in: int, n_out: int, align_corners: bool, factor: Optional[float]) -> np.ndarray:
    """[n_out, n_in] float32: row j holds torch's bicubic weights for output
    j. Unlike linear the source is not clamped at 0 (it may be negative);
    the tap index is min(floor(src), in - 1), t = src - index kept in
    [0, 1], and the four taps index - 1 .. index + 2 are clamped into the
    input, so border taps add onto the edge sample."""
    s = _scale(n_in, n_out, align_corners, factor)
    a = np.zeros((n_out, n_in), np.float32)
    for j in range(n_out):
        src = s * np.float32(j) if align_corners else s * (np.float32(j) + np.float32(0.5)) - np.float32(0.5)
        i0 = min(int(np.floor(src)), n_in - 1)
        t = np.float32(min(max(src - np.float32(i0), np.float32(0.0)), np.float32(1.0)))
        for k, wk in enumerate(_cubic_weights(t)):
            a[j, min(max(i0 - 1 + k, 0), n_in - 1)] += wk
    return a


def antialias_matrix(n_in: int, n_out: int, cubic: bool, align_corners: bool,
                     factor: Optional[float]) -> np.ndarray:
    """[n_out, n_in] float32: torch's antialiased weights (its separable AA
    kernel, as PIL's): with scale s as above, the filter (triangle
    max(0, 1 - |x|), or Keys' cubic with a = -0.5, not the -0.75 of plain
    bicubic) has support 1 (2) input samples, widened by s when shrinking
    (s >= 1), its argument divided by s then; output j is centred on
    s * (j + 0.5) and takes the inputs int(centre - support + 0.5) ..
    int(centre + support + 0.5) - 1 clipped to the axis, weight
    filter((i - centre + 0.5) / s), normalized to sum 1 per output.
    Formed in double, one float32 rounding at the end."""
    s = float(_scale(n_in, n_out, align_corners, factor))
    support = (2.0 if cubic else 1.0) * (s if s >= 1.0 else 1.0)
    inv = 1.0 / s if s >= 1.0 else 1.0

    def filt(v: float) -> float:
        v = abs(v)
        if not cubic:
            return max(0.0, 1.0 - v)
        a = -0.5
        if v < 1.0:
            return ((a + 2.0) * v - (a + 3.0)) * v * v + 1.0
        return (((v - 5.0) * v + 8.0) * v - 4.0) * a if v < 2.0 else 0.0

    out = np.zeros((n_out, n_in), np.float64)
    for j in range(n_out):
        centre = s * (j + 0.5)
        lo = max(int(centre - support + 0.5), 0)
        hi = min(int(centre + support + 0.5), n_in)
        w = np.array([filt((i - centre + 0.5) * inv) for i in range(lo, hi)])
        total = w.sum()
        out[j, lo:hi] = w / total if total != 0.0 else w
    return out.astype(np.float32)


def area_matrix(n_in: int, n_out: int) -> np.ndarray:
    """[n_out, n_in] float32: mode "area" is adaptive average pooling;
    output j averages inputs floor(j * in / out) .. ceil((j + 1) * in / out) - 1
    (torch's start and end indices), each weighted 1 / count."""
    a = np.zeros((n_out, n_in), np.float32)
    for j in range(n_out):
        lo, hi = (j * n_in) // n_out, -((-(j + 1) * n_in) // n_out)
        a[j, lo:hi] = np.float32(1.0) / np.float32(hi - lo)
    return a


def nearest_indices(n_in: int, n_out: int, factor: Optional[float], exact: bool = False) -> List[int]:
    """The input index of each output: "nearest" floors dst * scale in
    float32; "nearest-exact" floors (dst + 0.5) * scale, which torch forms
    in double and rounds to float32 before the floor."""
    s = _scale(n_in, n_out, False, factor)
    if exact:
        return [min(int(np.floor(np.float32((j + 0.5) * float(s)))), n_in - 1) for j in range(n_out)]
    return [min(int(np.floor(np.float32(j) * s)), n_in - 1) for j in range(n_out)]


def _factors(scale_factor, recompute, rank: int) -> List[Optional[float]]:
    """The scale factor of each spatial dim torch's kernel gets: none when
    the call gave a size or asked to recompute the factor."""
    if scale_factor is None or recompute:
        return [None] * rank
    if isinstance(scale_factor, (tuple, list)):
        return [float(f) for f in scale_factor]
    return [float(scale_factor)] * rank


def _along_last(name: str, x: str, shape: Sequence[int], a: np.ndarray) -> List[Node]:
    """A applied along the last dim of x (shape): a linear over [N, M, L]
    between reshapes; the last node is named `name`."""
    lead = int(np.prod(shape[1:-1])) if len(shape) > 2 else 1
    out_shape = list(shape[:-1]) + [int(a.shape[0])]
    return [Node(f"{name}_rows", "reshape", [x], dict(target_shape=[int(shape[0]), lead, int(shape[-1])])),
            Node(f"{name}_mix", "linear", [f"{name}_rows"], dict(weight=a, bias=None, resize_weights=True)),
            Node(name, "reshape", [f"{name}_mix"], dict(target_shape=out_shape))]


def separable_nodes(name: str, x: str, in_shape: Sequence[int], mats: Sequence[np.ndarray]) -> List[Node]:
    """Matrix mats[k] [out, in] applied along spatial dim k of x
    ([N, C, *spatial], one matrix per spatial dim), last dim first, so
    every pass is one int8 linear (_along_last): the dim in hand is brought
    last by viewing x as [N, P, L, Q] (P the dims before it, Q the ones
    after, already resized) and swapping L and Q. A matrix that is the
    identity (same size, one weight 1 a row) is skipped. The last node is
    named `name` (a view when every matrix is the identity)."""
    shape = [int(v) for v in in_shape]
    nodes: List[Node] = []
    cur = x
    k = len(mats)
    for i in range(k - 1, -1, -1):
        a = mats[i]
        dim = 2 + i
        if a.shape[0] == a.shape[1] and np.array_equal(a, np.eye(a.shape[0], dtype=a.dtype)):
            continue
        tag = f"{name}_axis{dim}"
        if i == k - 1:
            nodes += _along_last(tag, cur, shape, a)
        else:
            p = int(np.prod(shape[1:dim]))
            q = int(np.prod(shape[dim + 1:]))
            length = shape[dim]
            nodes += [Node(f"{tag}_in", "reshape", [cur], dict(target_shape=[shape[0], p, length, q])),
                      Node(f"{tag}_t", "permute", [f"{tag}_in"], dict(dims=[0, 1, 3, 2]))]
            nodes += _along_last(f"{tag}_mixed", f"{tag}_t", [shape[0], p, q, length], a)
            nodes += [Node(f"{tag}_back", "permute", [f"{tag}_mixed"], dict(dims=[0, 1, 3, 2]))]
            nodes += [Node(tag, "reshape", [f"{tag}_back"],
                           dict(target_shape=shape[:dim] + [int(a.shape[0])] + shape[dim + 1:]))]
        shape[dim] = int(a.shape[0])
        cur = tag
    if not nodes:           # same size every way: a view
        return [Node(name, "reshape", [x], dict(target_shape=shape))]
    nodes[-1].name = name   # the last node: nothing reads it yet
    return nodes


# Past this many weight bytes an adaptive pool's joint [oh * ow, h * w]
# matrix is two per-axis passes instead (one more rounding, out x in bytes
# per axis): 64 KiB is a 16 x 16 map pooled to 16 x 16, far past the
# global-style pools models use.
JOINT_POOL_BYTES = 1 << 16


def adaptive_avg_pool_nodes(name: str, x: str, in_shape: Sequence[int], output_size: Sequence[int]) -> List[Node]:
    """nn.AdaptiveAvgPool2d of [N, C, H, W] to output_size whose output
    does not divide the input (the int8 average pool takes the case that
    does): output (i, j) averages the window area_matrix gives each axis,
    so the pool is the matrix kron(A_H, A_W) [oh * ow, h * w] on the
    flattened plane, one int8 linear (one rounding; weights 1 / (rows x
    cols) of each window, whole codes on _whole_code_scale's scale when it
    has one). Past JOINT_POOL_BYTES, the two
    axes one after the other (separable_nodes). The last node is `name`."""
    n, c, h, w = (int(v) for v in in_shape)
    oh, ow = (int(v) for v in output_size)
    a_h, a_w = area_matrix(h, oh), area_matrix(w, ow)
    if oh * ow * h * w > JOINT_POOL_BYTES:
        return separable_nodes(name, x, in_shape, [a_h, a_w])
    joint = np.kron(a_h, a_w).astype(np.float32)
    return [Node(f"{name}_plane", "reshape", [x], dict(target_shape=[n, c, h * w])),
            Node(f"{name}_mix", "linear", [f"{name}_plane"], dict(
                weight=joint, bias=None, resize_weights=True, weight_scale=_whole_code_scale(a_h, a_w))),
            Node(name, "reshape", [f"{name}_mix"], dict(target_shape=[n, c, oh, ow]))]


def _whole_code_scale(a_h: np.ndarray, a_w: np.ndarray) -> Optional[float]:
    """A per-tensor int8 scale on which every window's 1 / count is a whole
    code: 1 / (L * k), L the least common multiple of the window sizes
    (rows x cols), k the largest with L * k / smallest window <= 127; None
    when L / smallest > 127 (the largest weight's code 127 then, the others
    rounded to half a code)."""
    counts = sorted({int(r) * int(c) for r in np.count_nonzero(a_h, axis=1) for c in np.count_nonzero(a_w, axis=1)})
    lcm = int(np.lcm.reduce(np.array(counts, np.int64)))
    top = lcm // counts[0]
    return None if top > 127 else 1.0 / (lcm * (127 // top))


def expand_adaptive_avg_pools(g) -> bool:
    """Every adaptive_avg_pool2d node of g (shapes inferred) whose output
    does not divide its input becomes adaptive_avg_pool_nodes, in place
    (the node's name and source kept), whoever made it: nn.AdaptiveAvgPool2d
    / 1d, F.adaptive_avg_pool2d / 1d or another stand-in's nodes. The
    dividing case stays the int8 average pool. True when it made nodes."""
    out = []
    for node in g.nodes:
        if node.op == "adaptive_avg_pool2d" and node.shape is not None and len(node.shape) == 4:
            x = g.node(node.inputs[0]).shape
            size = [int(v) for v in node.shape[2:]]
            node.attrs["output_size"] = size        # None entries (keep that dim) resolved
            if any(int(i) % o for i, o in zip(x[2:], size)):
                made = adaptive_avg_pool_nodes(node.name, node.inputs[0], x, size)
                src = node.attrs.get("source")
                for m in made:
                    if src is not None:
                        m.attrs["source"] = src
                out += made
                continue
        out.append(node)
    made_any = len(out) != len(g.nodes)
    g.nodes = out
    return made_any


def _picks(name: str, x: str, dim: int, picks: List[int]) -> List[Node]:
    """The slices of dim `dim` of x at the indices `picks`, joined by a cat
    (byte copies on x's int8 grid); the cat is named `name`."""
    nodes = [Node(f"{name}_{i}", "slice", [x], dict(dim=dim, start=i, end=i + 1)) for i in sorted(set(picks))]
    return nodes + [Node(name, "cat", [f"{name}_{i}" for i in picks], dict(dim=dim))]


def _nearest_nodes(name: str, x: str, in_shape, out_shape, f, exact: bool) -> Optional[List[Node]]:
    """Nearest (or nearest-exact) on 3-D to 5-D: H and W by the 4-D nearest
    resize (on [N, C * D, H, W]) when it picks torch's rows and columns (it
    picks by in / out), else (and D always) by _picks along each dim that is
    not kept as it is; [N, C, L] as [N, C, 1, L]. None for a 4-D "nearest"
    the 4-D node takes alone."""
    rank = len(in_shape)
    if rank == 3:
        n, c, length = (int(v) for v in in_shape)
        inner = _nearest_nodes(f"{name}_as_2d", f"{name}_as_2d_in", [n, c, 1, length],
                               [n, c, 1, int(out_shape[2])], [None] + list(f), exact)
        if inner is None:
            inner = [Node(f"{name}_as_2d", "upsample_nearest", [f"{name}_as_2d_in"],
                          dict(size=[1, int(out_shape[2])]))]
        return ([Node(f"{name}_as_2d_in", "reshape", [x], dict(target_shape=[n, c, 1, length]))] + inner
                + [Node(name, "reshape", [f"{name}_as_2d"], dict(target_shape=[int(v) for v in out_shape]))])
    ins = [int(v) for v in in_shape[2:]]
    outs = [int(v) for v in out_shape[2:]]
    picks = [nearest_indices(i, o, s, exact) for i, o, s in zip(ins, outs, f)]
    by_size = [nearest_indices(i, o, None) for i, o in zip(ins, outs)]
    hw_resize = picks[-2:] == by_size[-2:]
    if rank == 4 and hw_resize and not exact:
        return None
    nodes: List[Node] = []
    cur = x
    shape = [int(v) for v in in_shape]
    if hw_resize and ins[-2:] != outs[-2:]:
        lead = int(np.prod(shape[1:-2]))
        nodes += [Node(f"{name}_planes", "reshape", [x], dict(target_shape=[shape[0], lead, ins[-2], ins[-1]])),
                  Node(f"{name}_hw", "upsample_nearest", [f"{name}_planes"], dict(size=outs[-2:])),
                  Node(f"{name}_hw_back", "reshape", [f"{name}_hw"], dict(target_shape=shape[:-2] + outs[-2:]))]
        cur = f"{name}_hw_back"
        shape[-2:] = outs[-2:]
    for k in range(rank - 2):
        if hw_resize and k >= rank - 4:
            continue
        if picks[k] != list(range(ins[k])):
            nodes += _picks(f"{name}_dim{2 + k}", cur, 2 + k, picks[k])
            cur = f"{name}_dim{2 + k}"
    if not nodes:
        return [Node(name, "reshape", [x], dict(target_shape=shape))]
    nodes[-1].name = name
    return nodes


def interpolate_nodes(name: str, mode: str, align_corners, scale_factor, recompute, ins: List[str],
                      in_shape, out_shape, antialias: bool = False) -> Optional[List[Node]]:
    """The nodes for the modes above (the last one named `name`), or None
    for any other mode or rank (the call stays what capture made of it)."""
    if in_shape is None or out_shape is None:
        return None
    rank = len(in_shape)
    f = _factors(scale_factor, recompute, rank - 2) if rank >= 3 else None
    sizes = list(zip((int(v) for v in in_shape[2:]), (int(v) for v in out_shape[2:])))
    if antialias:
        if (mode, rank) not in (("bilinear", 4), ("bicubic", 4)):
            return None     # torch itself refuses these
        mats = [antialias_matrix(i, o, mode == "bicubic", bool(align_corners), s) for (i, o), s in zip(sizes, f)]
        return separable_nodes(name, ins[0], in_shape, mats)
    if (mode, rank) in (("linear", 3), ("bilinear", 4), ("trilinear", 5), ("bicubic", 4)):
        build = cubic_matrix if mode == "bicubic" else linear_matrix
        mats = [build(i, o, bool(align_corners), s) for (i, o), s in zip(sizes, f)]
        return separable_nodes(name, ins[0], in_shape, mats)
    if mode == "area" and rank in (3, 4, 5):
        if rank == 4:
            # adaptive average pooling: the int8 average pool when the output
            # divides the input, else one joint window matrix (expand_adaptive_avg_pools)
            return [Node(name, "adaptive_avg_pool2d", ins[:1], dict(output_size=[o for _, o in sizes]))]
        return separable_nodes(name, ins[0], in_shape, [area_matrix(i, o) for i, o in sizes])
    if mode in ("nearest", "nearest-exact") and rank in (3, 4, 5) and not align_corners:
        return _nearest_nodes(name, ins[0], in_shape, out_shape, f, mode == "nearest-exact")
    return None
