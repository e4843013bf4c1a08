"""nn.EmbeddingBag (issue 15) on int64 ids (a program input, or an argmax
computed in it: capture_indices.int64_ids): [B, L] ids
(B bags of L ids), or 1-D ids with `offsets` that are constant (a buffer,
or a tensor made in forward from no input) or an int64 value of the
program (a model input: _run_time_bags); include_last_offset either way,
modes sum, mean and max, with or without padding_idx; per_sample_weights
(mode sum, as torch) scale each id's row before its bag's sum.

The rows are looked up as nn.Embedding's, then reduced over each bag in
int8: a mean, a sum (the mean times the bag's length) or a max (a max
pool). With offsets each bag is a slice of the rows, reduced alone, and
the bags joined; an empty bag is torch's zero row.

padding_idx: those ids leave their bag, and which ids they are is only
known at run time, so the tables say it. For sum and mean the padding row
is zero (it adds nothing); the mean divides the sum by the count of the
other ids, looked up as rows of a 0/1 `flags` table (0 for padding_idx)
whose mean over the bag is count / length, clamped to at least one id's
worth so an all-padding bag is 0 / 1 = 0, as torch. For max the padding
row is each column's least table value (never above a real id's value,
so never the maximum unless nothing else is in the bag) and the maximum
is multiplied by the bag's largest flag: 0 for an all-padding bag, as
torch, else 1."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_indices import int64_ids, lookup_table
from .ir import Node


def _bags(ids_shape, offsets, include_last: bool) -> Optional[List[tuple]]:
    """(start, end) of each bag in the flattened ids, or None for offsets
    torch refuses (not starting at 0, decreasing, past the ids)."""
    n = int(ids_shape[0])
    o = [int(v) for v in np.asarray(offsets).reshape(-1)]
    if not o or o[0] != 0 or any(b < a for a, b in zip(o, o[1:])) or o[-1] > n:
        return None
    ends = o[1:] if include_last else o[1:] + [n]
    return list(zip(o, ends))


class _Steps:
    def __init__(self, name: str):
        self.name, self.nodes = name, []

    def __call__(self, op: str, inputs: List[str], **attrs) -> str:
        self.nodes.append(Node(f"{self.name}__{len(self.nodes)}", op, inputs, attrs))
        return self.nodes[-1].name

    def const(self, value) -> str:
        return self("constant", [], value=np.asarray(value, np.float32))


def _reduce(s: _Steps, mode: str, rows: str, flags: Optional[str], shape, reduce_max) -> None:
    """[B, L] ids' rows (of `shape` [B, L, dim]; flags: padding, max only)
    reduced over each bag (dim 1)."""
    if mode == "max":
        top = reduce_max(f"{s.name}__max", rows, list(shape), [1], False, False)
        s.nodes += top
        if flags is not None:
            any_id = reduce_max(f"{s.name}__any", flags, list(shape), [1], False, False)
            s.nodes += any_id
            s("mul", [top[-1].name, any_id[-1].name])
        return
    mean = s("mean", [rows], dim=[1], keepdim=False)
    if mode == "sum":
        s("mul", [mean, s.const(np.full([shape[0], shape[2]], float(shape[1])))])


def embedding_bag_nodes(name: str, m: torch.nn.EmbeddingBag, ins: List[str], by_name, ids_shape,
                        offsets, reduce_max, lookup, weights: Optional[str] = None,
                        offsets_count: Optional[int] = None) -> Optional[List[Node]]:
    """The nodes of nn.EmbeddingBag m on ids ins[0] (of ids_shape) with
    `offsets` (a numpy array, the name of an int64 value of the program
    of offsets_count entries, or None when the call has none) and
    per_sample_weights `weights` (the name of a float value of ids' shape,
    or None), or None (the call stays refused by name) for forms outside
    the module's doc. lookup(name, table, ids) is the embedding node of the
    rows."""
    if not ins or not int64_ids(by_name.get(ins[0])) \
            or ids_shape is None or m.mode not in ("sum", "mean", "max") \
            or (weights is not None and m.mode != "sum"):
        return None
    if isinstance(offsets, str):
        return _run_time_bags(name, m, ins[0], offsets, offsets_count, by_name, ids_shape, reduce_max, lookup,
                              weights)
    if offsets is None and len(ids_shape) == 2 and int(ids_shape[1]) > 0:
        length = int(ids_shape[1])
        bags = [(b * length, (b + 1) * length) for b in range(int(ids_shape[0]))]
    elif offsets is not None and len(ids_shape) == 1:
        bags = _bags(ids_shape, offsets, bool(m.include_last_offset))
        if bags is None:
            return None
    else:
        return None
    dim, pad = int(m.weight.shape[1]), m.padding_idx
    table, flags_table, _ = _tables(m)
    if not ((m.mode == "max" and pad is not None) or (m.mode == "mean" and (pad is not None or offsets is not None))):
        flags_table = None
    s = _Steps(name)
    s.nodes.append(lookup(f"{name}_rows", table, ins[0]))
    rows = s.nodes[-1].name
    if weights is not None:
        rows = _weighted(s, rows, weights, [int(v) for v in ids_shape], dim, by_name)
    flags = None
    if flags_table is not None:
        s.nodes.append(lookup(f"{name}_flags", flags_table, ins[0]))
        flags = s.nodes[-1].name
    n = int(np.prod(ids_shape))
    if offsets is None and weights is None and not (m.mode == "mean" and pad is not None):
        _reduce(s, m.mode, rows, flags, [int(ids_shape[0]), int(ids_shape[1]), dim], reduce_max)
    elif m.mode == "max":
        # [1, N, dim]: each bag a slice of dim 1, its max as the [B, L] form's; the bags joined
        tops, anys = [], []
        for src, found in ((rows, tops), (flags, anys)):
            if src is None:
                continue
            src = s("reshape", [src], target_shape=[1, n, dim])
            for a, b in bags:
                if a == b:
                    found.append(s.const(np.zeros((1, dim))))              # torch's empty bag: zeros
                    continue
                piece = s("slice", [src], dim=1, start=a, end=b)
                top = reduce_max(f"{name}__max{len(s.nodes)}", piece, [1, b - a, dim], [1], False, False)
                s.nodes += top
                found.append(top[-1].name)
        joined = [s("cat", found, dim=0) if len(found) > 1 else found[0] for found in (tops, anys) if found]
        if len(joined) == 2:
            s("mul", joined)
    else:
        # the sum of each bag at once: ids' rows [N, dim] as [dim, N] times
        # the 0/1 bag matrix (its weights exact on their grid), as [B, dim]
        member = np.zeros((len(bags), n), np.float32)
        for k, (a, b) in enumerate(bags):
            member[k, a:b] = 1.0

        def total(src):
            if len(ids_shape) == 2:          # [B, L] ids: their rows as [B * L, dim]
                src = s("reshape", [src], target_shape=[n, dim])
            t = s("linear", [s("permute", [src], dims=[1, 0])], weight=member, bias=None)
            return s("permute", [t], dims=[1, 0])
        sums = total(rows)
        if m.mode == "mean":
            # over the count of its ids (the non-padding ones), at least 1: an empty bag is 0 / 1
            s("div", [sums, s("clamp", [total(flags)], lo=1.0, hi=None)])
    s.nodes[-1].name = name
    return s.nodes


def _weighted(s: _Steps, rows: str, weights: str, ids_shape: List[int], dim: int, by_name) -> str:
    """Each id's row times its per_sample_weight (mode sum only, as torch):
    the weights [..., 1] repeated along dim (a cat of copies: exact), so
    the int8 mul has operands of one shape. Constant weights (a buffer, a
    Parameter, a tensor made in forward) are repeated here, one constant
    the int8 mul reads directly (no cat of a constant's views to run)."""
    src = by_name.get(weights)
    if src is not None and src.op == "constant":
        w = np.asarray(src.attrs["value"], np.float32).reshape(ids_shape + [1])
        return s("mul", [rows, s.const(np.repeat(w, dim, axis=-1))])
    w = s("reshape", [weights], target_shape=ids_shape + [1])
    return s("mul", [rows, s("cat", [w] * dim, dim=len(ids_shape)) if dim > 1 else w])


def _tables(m: torch.nn.EmbeddingBag):
    """(rows, flags, filler) of m: its table with the padding row made
    neutral (zero for sum and mean; for max each column's least value), a
    0/1 table of which ids count (0 for padding_idx), and the row of "no
    id", the neutral row again, that pads a bag to the ids' length."""
    weight = lookup_table(m)                      # max_norm's rows scaled as torch's forward
    table, flags = weight.copy(), np.ones_like(weight)
    keep = np.ones(len(weight), bool)
    if m.padding_idx is not None:
        keep[m.padding_idx % len(weight)] = False
        flags[~keep] = 0.0
    least = weight[keep].min(axis=0) if m.mode == "max" and keep.any() else np.zeros(weight.shape[1], np.float32)
    table[~keep] = least
    return table, flags, least[None, :]


def _run_time_bags(name: str, m: torch.nn.EmbeddingBag, ids: str, offsets: str, count: Optional[int], by_name,
                   ids_shape, reduce_max, lookup, weights: Optional[str]) -> Optional[List[Node]]:
    """1-D ids with offsets an int64 value of the program (a model input):
    which ids each bag holds is only known at run time. The ids' rows
    [N, dim] (times their weights) and one filler row after them are a
    table [N + 1, dim] that ptec::bag_positions' [B, N] positions look up
    (each bag's ids, then the filler: position N), so every bag is N rows
    reduced over dim 1: the filler is zero for sum and mean (the sum a
    linear of N ones over dim 1; the mean divides it by the count, the same
    sum of a 0/1 flags table's rows, clamped to at least 1, so an empty bag
    is 0 as torch) and for max each column's least value,
    times the bag's largest flag (0 for an empty or all-padding bag)."""
    src = by_name.get(offsets)
    if src is None or not int64_ids(src) or len(ids_shape) != 1 or int(ids_shape[0]) < 1 or count is None:
        return None
    n, dim = int(ids_shape[0]), int(m.weight.shape[1])
    table, flags_table, filler = _tables(m)
    s = _Steps(name)
    bags = count - 1 if m.include_last_offset else count
    if bags < 1:
        return None
    positions = s("bag_positions", [offsets], length=n, include_last=bool(m.include_last_offset))

    def bagged(rows_table, fill, tag):
        s.nodes.append(lookup(f"{name}_{tag}", rows_table, ids))
        rows = s.nodes[-1].name
        if weights is not None and tag == "rows":
            rows = _weighted(s, rows, weights, [n], dim, by_name)
        ext = s("cat", [rows, s.const(fill)], dim=0)
        return s("embedding", [positions, ext])           # [B, N, dim]: each bag's rows, then filler

    rows = bagged(table, filler, "rows")
    if m.mode == "max":
        top = reduce_max(f"{name}__max", rows, [bags, n, dim], [1], False, False)
        s.nodes += top
        flags = bagged(flags_table, np.zeros((1, dim)), "flags")
        any_id = reduce_max(f"{name}__any", flags, [bags, n, dim], [1], False, False)
        s.nodes += any_id
        s("mul", [top[-1].name, any_id[-1].name])
    else:
        def total(src):
            # [B, N, dim] as [B, dim, N] through a linear of N ones (exact weights): one rounding, on the sum's grid
            t = s("linear", [s("permute", [src], dims=[0, 2, 1])], weight=np.ones((1, n), np.float32), bias=None)
            return s("reshape", [t], target_shape=[bags, dim])
        sums = total(rows)
        if m.mode == "mean":
            s("div", [sums, s("clamp", [total(bagged(flags_table, np.zeros((1, dim)), "flags"))], lo=1.0, hi=None)])
    s.nodes[-1].name = name
    return s.nodes


def eval_bag_positions(offsets: torch.Tensor, length: int, include_last: bool) -> torch.Tensor:
    """The bag_positions node in the float graph: torch's checks of the
    offsets (a bad one raises ValueError, as torch raises), then each bag's
    positions in the ids and `length` after them, as float32."""
    o = [int(v) for v in offsets.reshape(-1).tolist()]
    spans = _bags([length], o, include_last)
    if spans is None:
        raise ValueError(f"nn.EmbeddingBag: offsets {o} break torch's rules (offsets[0] must be 0, "
                         f"none may decrease or pass the {length} ids)")
    out = torch.full((len(spans), length), float(length))
    for b, (start, end) in enumerate(spans):
        out[b, :end - start] = torch.arange(start, end, dtype=torch.float32)
    return out
