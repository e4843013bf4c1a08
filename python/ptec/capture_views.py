"""torch's views, copies and constructors that capture rewrites exactly
into ops ptec already lowers (issue 15): moves of the int8 bytes (reshape,
permute, slice, cat) for x.clone(), view_as / reshape_as,
expand_as / broadcast_to, x.T / mT / mH, movedim, unflatten, select, the
hstack family, fliplr / flipud / rot90, tile, repeat_interleave, diagonal,
take and cartesian_prod; a multiply by a constant 0/1 pattern for what
places values among zeros (diag, diag_embed, block_diag, index_fill); an
int8 mul for kron; constants for zeros_like and its kin.

view_nodes returns (nodes, names of the constants now held in them), or
None for a call it does not cover, which then stays an unsupported node,
refused by name. Elements of the calls that return several tensors
(hsplit, tensor_split, meshgrid) are capture_view_elements' and in-place
ops on a fresh clone capture_in_place's."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _ints, _meta_shape
from .capture_rewrites import _constant_of, _number, _Steps
from .capture_in_place import out_of_place
from .capture_tensor_index import select_nodes
from .ir import UnsupportedOperator


class _Empty(Exception):
    """The call's result has no elements: nothing to run, and no range to
    quantize it to; refused at capture, by name."""


def _call_name(t) -> Optional[str]:
    """The name of a Tensor method or torch function target, else None."""
    if isinstance(t, str):
        return t
    if t is getattr:
        return "getattr"                    # x.T, x.mT: attributes fx records as getattr calls
    name = getattr(t, "__name__", None)
    if name and any(getattr(home, name, None) is t for home in (torch, torch._C._VariableFunctions)):
        return name
    return None


def _bind(fn, names, **defaults):
    """fn's arguments by name (the tensor first), or None for an argument
    the rewrite does not know."""
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return None
    bound = dict(defaults)
    bound.update(zip(names, fn.args))
    bound.update(fn.kwargs)
    return bound


def _dtype(node) -> Optional[torch.dtype]:
    meta = node.meta.get("tensor_meta") if isinstance(node, torch.fx.Node) else None
    return getattr(meta, "dtype", None)


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _numel(shape) -> int:
    return int(np.prod(shape)) if shape else 1


def _reshape(s: _Steps, src: str, shape, want) -> str:
    return src if list(shape) == list(want) else s("reshape", [src], target_shape=list(want))


def _permute(s: _Steps, src: str, perm) -> str:
    return src if list(perm) == sorted(perm) else s("permute", [src], dims=list(perm))


def _broadcast(s: _Steps, src: str, shape, out) -> Optional[str]:
    """src of shape `shape` broadcast to `out` (leading dims added, dims of
    1 copied), or None where torch's broadcast would fail."""
    if len(out) < len(shape):
        return None
    full = [1] * (len(out) - len(shape)) + list(shape)
    if any(k not in (1, f) for k, f in zip(full, out)):
        return None
    return s.widen(_reshape(s, src, shape, full), full, out)


def _flip(s: _Steps, src: str, shape, dim: int) -> str:
    """src reversed along dim: its one-wide slices joined in reverse."""
    if shape[dim] < 2:
        return src
    return s("cat", [s("slice", [src], dim=dim, start=i, end=i + 1) for i in reversed(range(shape[dim]))], dim=dim)


def _pick(s: _Steps, src: str, dim: int, idx: List[int]) -> str:
    """The entries idx of dim (runs of consecutive ones as one slice)."""
    s.nodes.extend(select_nodes(f"{s.name}__{len(s.nodes)}", src, dim, idx))
    return s.nodes[-1].name


def _interleave(s: _Steps, src: str, shape, dim: int, times: int) -> str:
    """Each entry of dim repeated `times` times in place: a new dim after
    dim, copies joined along it, then merged with dim (a view)."""
    if times == 1:
        return src
    lifted = list(shape[:dim + 1]) + [1] + list(shape[dim + 1:])
    cur = s("cat", [_reshape(s, src, shape, lifted)] * times, dim=dim + 1)
    return s("reshape", [cur], target_shape=list(shape[:dim]) + [shape[dim] * times] + list(shape[dim + 1:]))


def _padded(s: _Steps, src: str, shape, before: int, after: int) -> str:
    """src's last dim with `before` copies of its first entry in front and
    `after` of its last behind: filler that a 0/1 mask then zeroes."""
    d, n = len(shape) - 1, shape[-1]
    parts = [s("slice", [src], dim=d, start=0, end=1)] * before + [src] \
        + [s("slice", [src], dim=d, start=n - 1, end=n)] * after
    return s("cat", parts, dim=d) if len(parts) > 1 else src


def _embed(s: _Steps, src: str, shape, offset: int, dim1: int, dim2: int) -> Optional[str]:
    """torch.diag_embed: the last dim of src on diagonal `offset` of new
    planes (dim1, dim2), zeros elsewhere. Built with the planes last: row
    i of plane holds src padded to the plane's width, so column j holds
    the entry that belongs at (j - offset, j); the constant identity
    shifted by offset keeps those and zeroes the rest (an int8 mul)."""
    if not shape:
        return None
    n, r = shape[-1], len(shape)
    m = n + abs(offset)
    d1, d2 = dim1 % (r + 1), dim2 % (r + 1)
    if d1 == d2:
        return None
    row = _padded(s, src, shape, max(offset, 0), max(-offset, 0))
    plane = list(shape[:-1]) + [m, m]
    cur = s.widen(s("reshape", [row], target_shape=list(shape[:-1]) + [1, m]), list(shape[:-1]) + [1, m], plane)
    cur = s("mul", [cur, s.const(np.broadcast_to(np.eye(m, k=offset, dtype=np.float32), plane).copy())])
    batch = iter(range(r - 1))
    return _permute(s, cur, [r - 1 if t == d1 else r if t == d2 else next(batch) for t in range(r + 1)])


def _diagonal(s: _Steps, src: str, shape, offset: int, dim1: int, dim2: int) -> Optional[str]:
    """torch.diagonal: the planes (dim1, dim2) moved last and viewed as one
    dim of a * b entries, whose diagonal entries are picked (slices)."""
    rank = len(shape)
    if rank < 2:
        return None
    d1, d2 = dim1 % rank, dim2 % rank
    if d1 == d2:
        return None
    a, b = shape[d1], shape[d2]
    length = min(a, b - offset) if offset >= 0 else min(a + offset, b)
    if length <= 0:
        raise _Empty(f"offset {offset} leaves no diagonal")
    start = offset if offset >= 0 else -offset * b
    rest = [d for d in range(rank) if d not in (d1, d2)]
    lines = _numel([shape[d] for d in rest])
    cur = s("reshape", [_permute(s, src, rest + [d1, d2])], target_shape=[lines, a * b])
    cur = _pick(s, cur, 1, [start + i * (b + 1) for i in range(length)])
    return s("reshape", [cur], target_shape=[shape[d] for d in rest] + [length])


def _windows(s: _Steps, src: str, shape, dim: int, size: int, step: int) -> Optional[str]:
    """x.unfold(dim, size, step): window w is the slice [w * step, w *
    step + size) of dim; the windows joined along dim (each with a dim of
    its own after it), that dim then moved last, as torch puts it."""
    if not shape or not 1 <= size <= shape[dim]:
        return None
    count = (shape[dim] - size) // step + 1
    lifted = list(shape[:dim]) + [1, size] + list(shape[dim + 1:])
    windows = [s("reshape", [s("slice", [src], dim=dim, start=w * step, end=w * step + size)], target_shape=lifted)
               for w in range(count)]
    cur = s("cat", windows, dim=dim) if count > 1 else windows[0]
    rank = len(lifted)
    return _permute(s, cur, [d for d in range(rank) if d != dim + 1] + [dim + 1])


def _stack_shape(kind: str, shape, all_1d: bool):
    """(shape of one operand as the hstack family joins it, the join dim)."""
    rank = len(shape)
    if kind == "hstack":
        return (list(shape) or [1]), (0 if all_1d else 1)
    if kind in ("vstack", "row_stack"):
        return ([1, 1] if rank == 0 else [1, shape[0]] if rank == 1 else list(shape)), 0
    if kind == "dstack":
        return ([1, 1, 1] if rank == 0 else [1, shape[0], 1] if rank == 1 else
                list(shape) + [1] if rank == 2 else list(shape)), 2
    return ([1, 1] if rank == 0 else [shape[0], 1] if rank == 1 else list(shape)), 1      # column_stack


def _tensors(bound, key):
    """The operands of a call of a list (or of several tensors)."""
    seq = bound.get(key)
    if isinstance(seq, torch.fx.Node):
        seq = [seq]
    if not isinstance(seq, (list, tuple)) or not seq or not all(isinstance(t, torch.fx.Node) for t in seq):
        return None
    shapes = [_meta_shape(t) for t in seq]
    return None if any(sh is None for sh in shapes) else (list(seq), shapes)


def _several(fn):
    """fn's tensors given as separate arguments or as one list."""
    args = list(fn.args)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = list(args[0])
    return _tensors({"t": args}, "t") if args and not fn.kwargs else None


def _rewrite(fn, name: str, s: _Steps, by_name) -> Optional[str]:
    """The steps of call `name` added to s; the node holding its value, or
    None where this call is not rewritten."""
    x = fn.args[0] if fn.args else None
    shape = _meta_shape(x) if isinstance(x, torch.fx.Node) else None
    out = _meta_shape(fn)
    src = x.name if isinstance(x, torch.fx.Node) else None

    if name in ("hstack", "vstack", "row_stack", "dstack", "column_stack"):
        parts = _tensors(_bind(fn, ("tensors",)) or {}, "tensors")
        if parts is None:
            return None
        all_1d = all(len(sh) <= 1 for sh in parts[1])     # torch.atleast_1d first: a 0-d is 1-D
        joined = []
        for t, sh in zip(*parts):
            want, dim = _stack_shape(name, sh, all_1d)
            joined.append(_reshape(s, t.name, sh, want))
        return s("cat", joined, dim=dim) if len(joined) > 1 else joined[0]
    if name in ("block_diag", "cartesian_prod", "meshgrid"):
        parts = _several(fn)
        return None if parts is None or name == "meshgrid" else \
            (_block_diag if name == "block_diag" else _cartesian_prod)(s, *parts)
    if shape is None or out is None:
        return None
    rank = len(shape)

    if name == "clone" and _bind(fn, ("input", "memory_format")) is not None:
        return src
    if name == "positive" and len(fn.args) == 1 and not fn.kwargs:
        return src
    if name == "unfold" and fn.op == "call_method":
        b = _bind(fn, ("input", "dimension", "size", "step"))
        if not b or not all(_int(b.get(k)) for k in ("dimension", "size", "step")) or b["step"] < 1:
            return None
        return _windows(s, src, shape, b["dimension"] % max(rank, 1), b["size"], b["step"])
    if name in ("view_as", "reshape_as", "unflatten"):
        return _reshape(s, src, shape, out)
    if name in ("expand_as", "broadcast_to"):
        return _broadcast(s, src, shape, out)
    if name == "adjoint" and len(fn.args) == 1 and not fn.kwargs:
        name, fn_attr = "getattr", "mH"     # x.adjoint() is x.mH
    else:
        fn_attr = fn.args[1] if name == "getattr" and len(fn.args) == 2 else None
    if name == "getattr" and fn_attr in ("T", "mT", "H", "mH"):
        if _dtype(x) not in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            return None                     # a complex H conjugates
        if fn_attr in ("T", "H"):
            return _permute(s, src, list(reversed(range(rank))))
        return _permute(s, src, list(range(rank - 2)) + [rank - 1, rank - 2]) if rank >= 2 else None
    if name in ("movedim", "moveaxis"):
        b = _bind(fn, ("input", "source", "destination"))
        froms, tos = (_ints(b.get("source")), _ints(b.get("destination"))) if b else (None, None)
        if froms is None or tos is None or len(froms) != len(tos):
            return None
        froms, tos = [d % rank for d in froms], [d % rank for d in tos]
        perm = [None] * rank
        for f, t in zip(froms, tos):
            perm[t] = f
        rest = iter(d for d in range(rank) if d not in froms)
        return _permute(s, src, [next(rest) if p is None else p for p in perm])
    if name == "select":
        b = _bind(fn, ("input", "dim", "index"))
        if not b or not _int(b.get("dim")) or not _int(b.get("index")):
            return None
        dim = b["dim"] % rank
        i = b["index"] % shape[dim]
        return s("reshape", [s("slice", [src], dim=dim, start=i, end=i + 1)], target_shape=out)
    if name in ("fliplr", "flipud"):
        return _flip(s, src, shape, 1 if name == "fliplr" else 0) if rank >= (2 if name == "fliplr" else 1) else None
    if name == "rot90":
        b = _bind(fn, ("input", "k", "dims"), k=1, dims=[0, 1])
        dims = _ints(b.get("dims")) if b else None
        if dims is None or len(dims) != 2 or not _int(b["k"]) or dims[0] % rank == dims[1] % rank:
            return None
        p, q = dims[0] % rank, dims[1] % rank
        k = b["k"] % 4
        swap = list(range(rank))
        swap[p], swap[q] = q, p
        if k == 1:          # torch: flip dims[1], then transpose
            return _permute(s, _flip(s, src, shape, q), swap)
        if k == 2:
            return _flip(s, _flip(s, src, shape, p), shape, q)
        if k == 3:
            return _permute(s, _flip(s, src, shape, p), swap)
        return src
    if name == "tile":
        reps = _ints(list(fn.args[1:]) if len(fn.args) > 2 else fn.args[1] if len(fn.args) == 2
                     else fn.kwargs.get("dims"))
        if reps is None or any(r < 1 for r in reps) or set(fn.kwargs) - {"dims"}:
            return None
        reps = [1] * (rank - len(reps)) + reps
        full = [1] * (len(reps) - rank) + list(shape)
        cur = _reshape(s, src, shape, full)
        for d, r in enumerate(reps):
            if r > 1:
                cur = s("cat", [cur] * r, dim=d)
        return cur
    if name == "repeat_interleave":
        return _repeat_interleave(fn, s, src, shape, by_name)
    if name == "diagonal":
        b = _bind(fn, ("input", "offset", "dim1", "dim2"), offset=0, dim1=0, dim2=1)
        if not b or not all(_int(b[k]) for k in ("offset", "dim1", "dim2")):
            return None
        return _diagonal(s, src, shape, b["offset"], b["dim1"], b["dim2"])
    if name == "diag":
        b = _bind(fn, ("input", "diagonal"), diagonal=0)
        if not b or not _int(b["diagonal"]) or rank not in (1, 2):
            return None
        return _embed(s, src, shape, b["diagonal"], 0, 1) if rank == 1 else \
            _diagonal(s, src, shape, b["diagonal"], 0, 1)
    if name == "diag_embed":
        b = _bind(fn, ("input", "offset", "dim1", "dim2"), offset=0, dim1=-2, dim2=-1)
        if not b or not all(_int(b[k]) for k in ("offset", "dim1", "dim2")):
            return None
        return _embed(s, src, shape, b["offset"], b["dim1"], b["dim2"])
    if name == "trace" and rank == 2 and len(fn.args) == 1 and not fn.kwargs:
        line = _diagonal(s, src, shape, 0, 0, 1)
        if line is None:
            return None
        # the sum of the diagonal viewed as [1, n] (a mean times n: ptec's int8 mean reduces a dim of a 2-D view)
        n = min(shape)
        total = s("mul", [s("mean", [s("reshape", [line], target_shape=[1, n])], dim=[1], keepdim=False),
                          s.const(n)])
        return s("reshape", [total], target_shape=[])
    if name == "kron":
        b = _bind(fn, ("input", "other"))
        other = b.get("other") if b else None
        if not isinstance(other, torch.fx.Node) or _meta_shape(other) is None:
            return None
        return _kron(s, src, shape, other.name, _meta_shape(other), out)
    if name in ("zeros_like", "ones_like", "full_like"):
        return _filled(fn, name, s, out)
    if name == "index_fill":
        b = _bind(fn, ("input", "dim", "index", "value"))
        idx = _constant_of(b.get("index"), by_name) if b else None
        if idx is None or not _int(b.get("dim")) or not _number(b.get("value")) or idx.ndim > 1 \
                or idx.dtype.kind not in "iu":
            return None
        dim = b["dim"] % rank if rank else 0
        size = shape[dim] if rank else 1
        if ((idx < -size) | (idx >= size)).any():
            return None
        keep = np.ones(shape, np.float32)
        keep[(slice(None),) * dim + (idx.reshape(-1) % size,)] = 0.0
        cur = s("mul", [src, s.const(keep)])
        value = float(b["value"])
        return s("add", [cur, s.const((1.0 - keep) * value)]) if value else cur
    if name == "take":
        b = _bind(fn, ("input", "index"))
        idx = _constant_of(b.get("index"), by_name) if b else None
        n = _numel(shape)
        if idx is None or idx.dtype.kind not in "iu" or ((idx < -n) | (idx >= n)).any():
            return None
        if idx.size == 0:
            raise _Empty("no index")
        cur = _pick(s, _reshape(s, src, shape, [n]), 0, [int(i) % n for i in idx.reshape(-1)])
        return _reshape(s, cur, [idx.size], out)
    return None


def _repeat_interleave(fn, s: _Steps, src: str, shape, by_name) -> Optional[str]:
    """x.repeat_interleave(repeats, dim): an int, the copies of each entry
    made in place (_interleave); a constant tensor of repeats, the entries
    picked in order (slices). dim None: x flattened first."""
    b = _bind(fn, ("input", "repeats", "dim", "output_size"), dim=None)
    if not b or "repeats" not in b or not (b["dim"] is None or _int(b["dim"])):
        return None
    reps = b["repeats"]
    if isinstance(reps, torch.fx.Node):
        reps = _constant_of(reps, by_name)
        if reps is None or reps.ndim > 1 or reps.dtype.kind not in "iu":
            return None
        reps = [int(r) for r in reps.reshape(-1)]
    elif _int(reps):
        reps = [reps]
    else:
        return None
    if b["dim"] is None:
        src, shape, dim = _reshape(s, src, shape, [_numel(shape)]), [_numel(shape)], 0
    else:
        dim = b["dim"] % len(shape)
    if any(r < 0 for r in reps) or len(reps) not in (1, shape[dim]):
        return None
    if sum(reps) == 0:
        raise _Empty("every repeat is 0")
    if len(reps) == 1:
        return _interleave(s, src, shape, dim, reps[0])
    return _pick(s, src, dim, [i for i, r in enumerate(reps) for _ in range(r)])


def _kron(s: _Steps, a: str, ashape, b: str, bshape, out) -> Optional[str]:
    """torch.kron(a, b): a's entries each copied to a block of b's size
    (repeat_interleave per dim), b tiled over a's, times each other."""
    rank = max(len(ashape), len(bshape))
    fa, fb = [1] * (rank - len(ashape)) + list(ashape), [1] * (rank - len(bshape)) + list(bshape)
    if [p * q for p, q in zip(fa, fb)] != list(out):
        return None
    big, now = _reshape(s, a, ashape, fa), list(fa)
    for d in range(rank):
        big = _interleave(s, big, now, d, fb[d])
        now[d] *= fb[d]
    tiled = _reshape(s, b, bshape, fb)
    for d in range(rank):
        if fa[d] > 1:
            tiled = s("cat", [tiled] * fa[d], dim=d)
    return s("mul", [big, tiled])


def _block_diag(s: _Steps, tensors, shapes) -> Optional[str]:
    """torch.block_diag: each operand as a 2-D block, its band of rows
    filled out to the full width with copies of its first column, the bands
    joined, times the constant 0/1 mask of the blocks."""
    blocks = []
    for t, sh in zip(tensors, shapes):
        if len(sh) > 2:
            return None
        want = [1, 1] if not sh else [1, sh[0]] if len(sh) == 1 else list(sh)
        if 0 in want:
            return None
        blocks.append((_reshape(s, t.name, sh, want), want))
    if len(blocks) == 1:
        return blocks[0][0]
    width = sum(c for _, (_, c) in blocks)
    mask = np.zeros((sum(r for _, (r, _) in blocks), width), np.float32)
    bands, row, col = [], 0, 0
    for block, (r, c) in blocks:
        mask[row:row + r, col:col + c] = 1.0
        first = s("slice", [block], dim=1, start=0, end=1)
        parts = ([s.widen(first, [r, 1], [r, col])] if col else []) + [block] \
            + ([s.widen(first, [r, 1], [r, width - col - c])] if width - col - c else [])
        bands.append(s("cat", parts, dim=1) if len(parts) > 1 else block)
        row, col = row + r, col + c
    return s("mul", [s("cat", bands, dim=0), s.const(mask)])


def _cartesian_prod(s: _Steps, tensors, shapes) -> Optional[str]:
    """torch.cartesian_prod of 1-D tensors: operand k laid along dim k of
    the grid (a view, copies along the other dims), flattened as column k."""
    if any(len(sh) != 1 for sh in shapes):
        return None
    if len(tensors) == 1:
        return tensors[0].name
    grid = [sh[0] for sh in shapes]
    total = _numel(grid)
    cols = []
    for k, (t, sh) in enumerate(zip(tensors, shapes)):
        lay = [1] * len(grid)
        lay[k] = sh[0]
        wide = s.widen(s("reshape", [t.name], target_shape=lay), lay, grid)
        cols.append(s("reshape", [wide], target_shape=[total, 1]))
    return s("cat", cols, dim=1)


def _filled(fn, name: str, s: _Steps, out) -> Optional[str]:
    """torch.zeros_like / ones_like / full_like: a constant of the traced
    shape, float32, or of an integer or bool dtype (`zeros_like(x,
    dtype=torch.long)`: its value converted by torch, an integer constant as
    capture_int_math reads and lowering returns in its dtype; x.new_zeros and
    kin are capture_spellings')."""
    if _dtype(fn) in _EXACT_FILLS and fn.kwargs.get("dtype") in (None, _dtype(fn)):
        return _exact_filled(fn, name, s, out)
    if _dtype(fn) != torch.float32 or fn.kwargs.get("dtype") not in (None, torch.float32):
        return None
    if name == "full_like":
        value = fn.args[1] if len(fn.args) > 1 else fn.kwargs.get("fill_value")
        if not _number(value):
            return None
    else:
        value = 1.0 if "ones" in name else 0.0
    return s.const(np.full(out, float(value), np.float32))


_EXACT_FILLS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)


def _exact_filled(fn, name: str, s: _Steps, out) -> Optional[str]:
    """_filled's constant of an integer or bool dtype, its fill converted by torch."""
    if name == "full_like":
        value = fn.args[1] if len(fn.args) > 1 else fn.kwargs.get("fill_value")
        if not isinstance(value, (int, float, bool)) or len(fn.args) > 2:
            return None
    else:
        value = 1 if "ones" in name else 0
    try:
        made = torch.full(list(out), value, dtype=_dtype(fn))
    except (RuntimeError, OverflowError, ValueError, TypeError):
        return None                         # torch's own error stays the model's
    return s("constant", [], value=made.numpy().copy())


def _refusal(fn, name: str, by_name) -> Optional[str]:
    """Why ptec does not run this call of the ones above, in its refusal."""
    if name in ("empty_like", "new_empty"):
        return "its contents are undefined; use torch.zeros_like / x.new_zeros, which ptec runs"
    if name in ("zeros_like", "ones_like", "full_like") \
            and _dtype(fn) not in (None, torch.float32, *_EXACT_FILLS):
        return (f"a tensor of {_dtype(fn)}: ptec makes float32, integer and bool constants (make it in "
                f"float32: torch.zeros_like(x, dtype=torch.float32))")
    index = {"index_fill": 2, "take": 1}.get(name)
    if index is not None and len(fn.args) > index and isinstance(fn.args[index], torch.fx.Node) \
            and _constant_of(fn.args[index], by_name) is None:
        return "ptec runs a constant index (a tensor known when the model is compiled)"
    if out_of_place(fn) is not None:                # capture_in_place left it: a write into no value of the program
        return "an in-place op on a value the program does not compute; write the out-of-place op"
    return None


def _source(fn) -> str:
    home = "Tensor." if fn.op == "call_method" else "torch." if fn.target is not getattr else ""
    return f"{fn.name} ({home}{_call_name(fn.target)})"


def view_nodes(fn, ins, by_name):
    """(nodes, taken constants) of a view, copy or constructor call this
    module rewrites; None otherwise."""
    name = _call_name(fn.target) if fn.op in ("call_function", "call_method") else None
    if name is None:
        return None
    why = _refusal(fn, name, by_name)
    if why is not None:
        from .capture import _function_node       # capture imports this module: late
        node = _function_node(fn, ins)
        node.attrs["why"] = why
        run = node.attrs["fn"]
        # a computed index is carried as float (argmax's): torch takes it as int64
        node.attrs["fn"] = lambda *xs: run(*(v.long() if k and v.is_floating_point() and name in ("index_fill", "take")
                                             else v for k, v in enumerate(xs)))
        return [node], []
    s = _Steps(fn.name)
    try:
        got = _rewrite(fn, name, s, by_name)
    except _Empty as e:
        raise UnsupportedOperator(f"operator not supported: {_source(fn)}: {e}, an empty result ptec does not run")
    except (IndexError, ValueError, TypeError, ZeroDivisionError):
        return None                         # arguments torch would reject: the call's own error
    if got is None:
        return None
    if not s.nodes or s.nodes[-1].name != got:
        s("identity", [got])
    taken = [a.name for a in fn.args if _constant_of(a, by_name) is not None]
    return s.done(), taken
