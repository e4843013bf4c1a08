"""Encoder of Arm Ethos-U compressed weight streams ("mlw", spec ethos-u-npu.md §4.4).

``encode_weights(values)`` turns weight values (w - weight_zp, -255..255, already in the NPU's
brick order) into a stream that ptec's decoder (npu_model/mlw_decode.c, the reference of the
format here) reads back exactly. Encodings are not unique; this one only promises the values.

Every slice (at most 32768 values) defines its own palette and takes the cheapest, by exact bit
count, of: Golomb-Rice codes of palette indices (divisor 2^0..2^5, quotients optionally
truncated at 2), fixed-width indices, and either of those for the non-zero values with the
zeros sent as run lengths in a second lane. Costs come from histograms and the bits are placed
with numpy, so no Python loop runs per weight.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

SLICE_MAX = 32768            # SLICELEN is a 15-bit field holding length - 1
PALETTE_MAX = 32             # PALSIZE field 0..31 -> 0 or 2..32 entries
DIROFS_MAX = 31              # 5-bit field
INDEX_LIMIT = 512            # indices and palette values are 9-bit
WDIV_MAX = 5
WDIV_UNCOMPRESSED = 7
ZDIV_MAX = 3
ZDIV_NO_RUNS = 6
ZDIV_END = 7
UNARY_BITS = 12              # a weight chunk's slots; a zero-run group when ZDIV < 3
SLOW_UNARY_BITS = 8          # zero-run groups when ZDIV >= 3; uncompressed indices over 5 bits
WEIGHT_LEAD_LIMIT = 8        # the decoder's balance rule between the two lanes
HEADER_BITS = 3 + 15 + 3 + 1 + 1 + 5 + 5 + 3   # slice header with the NEWPAL fields
STREAM_ALIGN = 16

_Fields = Tuple[np.ndarray, np.ndarray, np.ndarray]   # bit position, value, width
_Mode = Tuple[int, int, int]                          # ZDIV, WDIV, WTRUNC


@dataclass
class _WeightPlan:
    bits: int                # lane bits plus palette entries
    palette: np.ndarray      # v (sign in bit 0) of each entry, most frequent first
    palbits: int
    dirofs: int
    wdiv: int                # 0..5, or 7 = fixed-width indices
    trunc: int
    lut: np.ndarray          # v -> index, valid for the values the slice holds


@dataclass
class _Lane:
    """One Golomb-Rice lane cut into the chunks the decoder reads."""
    u1: np.ndarray           # per chunk: first unary field (weights: slot bits; runs: group)
    u1_bits: int
    u2: np.ndarray           # per chunk: second unary field (weights: codes 1/2; runs: none)
    u2_bits: np.ndarray
    closed: np.ndarray       # symbols closed before each chunk, padding included (the decoder's count)
    chunk_of: np.ndarray     # per real symbol: the chunk that closes it
    rem: np.ndarray          # per real symbol: remainder
    rem_bits: int


def _ceil_to(x, m):
    return -(-x // m) * m


def _plan_weights(hist: np.ndarray, only: Optional[Tuple[int, int]] = None) -> Optional[_WeightPlan]:
    """The cheapest palette x code for a histogram of v over 0..511 (only: this WDIV, WTRUNC)."""
    n = int(hist.sum())
    present = np.flatnonzero(hist)
    by_count = present[np.argsort(-hist[present], kind="stable")]
    if by_count.size == 1:
        # a palette of one entry cannot be stated: pair the value with an unused one
        by_count = np.append(by_count, 1 if by_count[0] == 0 else 0)
    divisors = np.arange(WDIV_MAX + 1)
    q = np.arange(INDEX_LIMIT)[None, :] >> divisors[:, None]
    # quotient q costs q // 2 code-2 slots and a closing code 0/1 slot; codes 1/2 take a 2nd bit
    slots, second = (q >> 1) + 1, (q >> 1) + (q & 1)
    best: Optional[_WeightPlan] = None

    def consider(bits, palette, palbits, dirofs, wdiv, trunc, lut):
        nonlocal best
        if only is not None and only != (wdiv, trunc):
            return
        if best is None or bits < best.bits:
            best = _WeightPlan(int(bits), palette, palbits, dirofs, wdiv, trunc, lut)

    for p in [0] + list(range(2, min(PALETTE_MAX, by_count.size) + 1)):
        palette = by_count[:p]
        in_palette = np.zeros(INDEX_LIMIT, bool)
        in_palette[palette] = True
        direct = present[~in_palette[present]]
        # DIROFS may not pass the smallest direct value: it would map below index p
        dirofs = min(DIROFS_MAX, int(direct[0])) if direct.size else 0
        lut = np.zeros(INDEX_LIMIT, np.int64)
        lut[direct] = direct - dirofs + p
        lut[palette] = np.arange(p)
        top = int(lut[present].max())
        if top >= INDEX_LIMIT:
            continue
        h = np.zeros(INDEX_LIMIT, np.int64)
        h[lut[present]] = hist[present]    # lut is one-to-one on the values present
        palbits = max(2, int(palette.max()).bit_length()) if p else 2
        pal = p * palbits
        # 12-bit first fields cover the slots rounded up to whole chunks
        cost = _ceil_to(slots @ h, UNARY_BITS) + second @ h + n * divisors
        for k in divisors:
            consider(pal + cost[k], palette, palbits, dirofs, int(k), 0, lut)
            if top >> k <= 2:   # WTRUNC: code 2 closes, every quotient fits one slot
                consider(pal + _ceil_to(n, UNARY_BITS) + int((q[k] > 0) @ h) + n * k,
                         palette, palbits, dirofs, int(k), 1, lut)
        # fixed width: PALBITS without a palette, else just wide enough for its indices
        if p == 0:
            width = max(2, top.bit_length())
            consider(n * width, palette, width, dirofs, WDIV_UNCOMPRESSED, 0, lut)
        elif top < 1 << (p - 1).bit_length():
            consider(pal + n * (p - 1).bit_length(), palette, palbits, dirofs, WDIV_UNCOMPRESSED, 0, lut)
    return best   # None only when `only` rules out everything; p = 0 fits v - DIROFS <= 511


def _uncompressed_width(plan: _WeightPlan) -> int:
    return plan.palbits if plan.palette.size == 0 else (plan.palette.size - 1).bit_length()


def _plan_runs(runs: np.ndarray, only: Optional[int] = None) -> Tuple[int, int]:
    """(bits, ZDIV) of the cheapest zero-run lane (only: this ZDIV)."""
    options = []
    for z in range(ZDIV_MAX + 1) if only is None else [only]:
        group = UNARY_BITS if z < 3 else SLOW_UNARY_BITS
        options.append((_ceil_to(int(((runs >> z) + 1).sum()), group) + runs.size * z, z))
    return min(options)


def _weight_lane(index: np.ndarray, plan: _WeightPlan) -> _Lane:
    n = index.size
    if plan.wdiv == WDIV_UNCOMPRESSED:
        width = _uncompressed_width(plan)
        # no unary fields: every slot is a code 0, so a chunk closes `per` symbols
        per = SLOW_UNARY_BITS if width > 5 else UNARY_BITS
        chunks = -(-n // per)
        zeros = np.zeros(chunks, np.int64)
        return _Lane(zeros, 0, zeros, zeros, np.arange(chunks + 1) * per, np.arange(n) // per, index, width)
    k = plan.wdiv
    q = index >> k
    if plan.trunc:
        codes, ends = q.astype(np.int8), np.arange(n)
    else:
        ends = np.cumsum((q >> 1) + 1) - 1
        codes = np.full(int(ends[-1]) + 1, 2, np.int8)
        codes[ends] = q & 1
    chunks = -(-codes.size // UNARY_BITS)
    grid = np.zeros(chunks * UNARY_BITS, np.int8)
    grid[:codes.size] = codes          # padding slots are code 0: symbols past the slice, ignored
    grid = grid.reshape(chunks, UNARY_BITS)
    nonzero = grid != 0
    u1 = nonzero.astype(np.int64) @ (1 << np.arange(UNARY_BITS))
    rank = np.maximum(np.cumsum(nonzero, axis=1) - 1, 0)
    u2 = np.where(grid == 2, 1 << rank, 0).sum(axis=1)
    closes = np.full(chunks, UNARY_BITS) if plan.trunc else (grid < 2).sum(axis=1)
    return _Lane(u1, UNARY_BITS, u2, nonzero.sum(axis=1), np.concatenate([[0], np.cumsum(closes)]),
                 ends // UNARY_BITS, index & ((1 << k) - 1), k)


def _run_lane(runs: np.ndarray, zdiv: int) -> _Lane:
    group = UNARY_BITS if zdiv < 3 else SLOW_UNARY_BITS
    ends = np.cumsum((runs >> zdiv) + 1) - 1     # quotient q: q one bits, then a zero
    chunks = -(-(int(ends[-1]) + 1) // group)
    bits = np.zeros(chunks * group, np.int64)
    bits[:int(ends[-1]) + 1] = 1
    bits[ends] = 0
    grid = bits.reshape(chunks, group)
    zeros = np.zeros(chunks, np.int64)
    closed = np.concatenate([[0], np.cumsum(group - grid.sum(axis=1))])
    return _Lane(grid @ (1 << np.arange(group)), group, zeros, zeros, closed, ends // group,
                 runs & ((1 << zdiv) - 1), zdiv)


def _schedule(w: _Lane, z: Optional[_Lane]) -> Tuple[np.ndarray, np.ndarray]:
    """The chunk each lane reads per decoder iteration (-1: none), final iteration included."""
    if z is None:
        chunks = w.u1.size
        wa = np.arange(chunks + 1)
        wa[-1] = -1
        return wa, np.full(chunks + 1, -1)
    # The balance rule makes the order sequential; this loop runs per chunk, not per weight.
    cw, cz = w.closed.tolist(), z.closed.tolist()
    w_total, z_total = w.chunk_of.size, z.chunk_of.size
    wa: List[int] = []
    zb: List[int] = []
    a = b = 0
    while True:
        balance = cw[a] - cz[b]
        w_on = balance < WEIGHT_LEAD_LIMIT and cw[a] < w_total
        z_on = balance >= 0 and cz[b] < z_total
        wa.append(a if w_on else -1)
        zb.append(b if z_on else -1)
        if not (w_on or z_on):
            break
        a += w_on
        b += z_on
    assert a == w.u1.size and b == z.u1.size, "zero-run lanes stalled"
    return np.array(wa), np.array(zb)


def _layout(w: _Lane, z: Optional[_Lane]) -> Tuple[List[_Fields], int]:
    """Fields of a slice body in decoder order: per iteration the weight slot bits, the run
    group, the weight code bits, then the previous chunks' weight and run remainders."""
    wa, zb = _schedule(w, z)
    lanes = [(w, wa)] + ([(z, zb)] if z is not None else [])
    on = [c >= 0 for _, c in lanes]
    at = [np.where(o, c, 0) for o, (_, c) in zip(on, lanes)]
    real = [np.bincount(lane.chunk_of, minlength=lane.u1.size) for lane, _ in lanes]
    l1 = np.where(on[0], w.u1_bits, 0)
    lz = np.where(on[1], z.u1_bits, 0) if z is not None else np.zeros_like(l1)
    l2 = np.where(on[0], w.u2_bits[at[0]], 0)
    # remainders trail their chunk by one iteration
    lr = [np.concatenate([[0], np.where(o, lane.rem_bits * r[a], 0)[:-1]])
          for o, a, r, (lane, _) in zip(on, at, real, lanes)]
    seg = l1 + lz + l2 + sum(lr)
    start = np.concatenate([[0], np.cumsum(seg)[:-1]])
    tw = np.flatnonzero(on[0])
    fields: List[_Fields] = [
        (start[tw], w.u1, np.full(tw.size, w.u1_bits)),
        (start[tw] + l1[tw] + lz[tw], w.u2, w.u2_bits),
    ]
    rem_base = start + l1 + lz + l2
    if z is not None:
        tz = np.flatnonzero(on[1])
        fields.append((start[tz] + l1[tz], z.u1, np.full(tz.size, z.u1_bits)))
    for i, (lane, _) in enumerate(lanes):
        t = np.flatnonzero(on[i])
        if lane.rem_bits:
            first = np.concatenate([[0], np.cumsum(real[i])[:-1]])
            rank = np.arange(lane.chunk_of.size) - first[lane.chunk_of]
            pos = rem_base[t[lane.chunk_of] + 1] + lane.rem_bits * rank
            fields.append((pos, lane.rem, np.full(pos.size, lane.rem_bits)))
        rem_base = rem_base + lr[i]
    return fields, int(seg.sum())


def _slice(v: np.ndarray, force: Optional[_Mode]) -> Tuple[List[_Fields], int]:
    """Fields (positions from the slice start) and bit length of one slice."""
    candidates = []
    zeros = v == 0
    only_w = None if force is None else force[1:]
    if force is None or force[0] == ZDIV_NO_RUNS:
        plan = _plan_weights(np.bincount(v, minlength=INDEX_LIMIT), only_w)
        if plan is not None:
            candidates.append((HEADER_BITS + plan.bits, plan, None, v))
    if (zeros.any() if force is None else force[0] != ZDIV_NO_RUNS):
        kept = np.flatnonzero(~zeros)
        if kept.size == 0:
            kept = np.array([v.size - 1])   # SLICELEN >= 1: the last zero travels as a weight
        # with NEWPAL, run 0 leads and run i + 1 follows weight i
        runs = np.diff(np.concatenate([[-1], kept, [v.size]])) - 1
        plan = _plan_weights(np.bincount(v[kept], minlength=INDEX_LIMIT), only_w)
        run_bits, zdiv = _plan_runs(runs, None if force is None else force[0])
        if plan is not None:
            candidates.append((HEADER_BITS + plan.bits + run_bits, plan, (runs, zdiv), v[kept]))
    if not candidates:
        raise ValueError(f"mode {force} cannot encode these weights")
    _, plan, runs_zdiv, symbols = min(candidates, key=lambda c: c[0])
    p = plan.palette.size
    zdiv = ZDIV_NO_RUNS if runs_zdiv is None else runs_zdiv[1]
    head = [(zdiv, 3), (symbols.size - 1, 15), (plan.wdiv, 3), (plan.trunc, 1), (1, 1),
            (plan.dirofs, 5), (p - 1 if p else 0, 5), (plan.palbits - 2, 3)]
    widths = np.array([b for _, b in head] + [plan.palbits] * p)
    values = np.concatenate([np.array([x for x, _ in head]), plan.palette])
    pos = np.concatenate([[0], np.cumsum(widths)[:-1]])
    body_start = int(widths.sum())
    z = _run_lane(*runs_zdiv) if runs_zdiv is not None else None
    body, body_bits = _layout(_weight_lane(plan.lut[symbols], plan), z)
    fields = [(pos, values, widths)] + [(f[0] + body_start, f[1], f[2]) for f in body]
    return fields, body_start + body_bits


def _pack(fields: List[_Fields], nbytes: int) -> np.ndarray:
    """Bytes holding every field LSB-first. Fields never overlap, so adding bytes is OR-ing."""
    pos = np.concatenate([f[0] for f in fields]).astype(np.int64)
    val = np.concatenate([f[1] for f in fields]).astype(np.int64)
    width = np.concatenate([f[2] for f in fields]).astype(np.int64)
    assert not np.any(val >> width), "field wider than its width"
    shifted = val << (pos & 7)              # width <= 15, so three bytes at most
    byte = pos >> 3
    out = np.zeros(nbytes + 3)
    for i in range(3):
        out += np.bincount(byte + i, weights=(shifted >> (8 * i)) & 0xFF, minlength=nbytes + 3)
    return out[:nbytes].astype(np.uint8)


def encode_weights(values) -> bytes:
    """The mlw stream of `values`: ints in -255..255, one dimension, in the order the NPU reads
    them. The length is a multiple of 16 bytes: the end marker, zero bits to a byte boundary,
    then 0xFF bytes (Vela's padding). Other input raises ValueError with a one-line message."""
    return _encode(values)


def _encode(values, force: Optional[_Mode] = None) -> bytes:
    """encode_weights; `force` (tests): every slice in this (ZDIV, WDIV, WTRUNC) mode."""
    w = np.asarray(values)
    if w.ndim != 1:
        raise ValueError(f"mlw weights must be one-dimensional, got shape {w.shape}")
    if w.size and w.dtype.kind not in "iub":
        raise ValueError(f"mlw weights must be integers in -255..255, got dtype {w.dtype}")
    bad = np.flatnonzero((w < -255) | (w > 255))   # before the cast: uint64 would wrap
    if bad.size:
        raise ValueError(f"mlw weight {int(w[bad[0]])} at index {int(bad[0])} is outside -255..255")
    w = w.astype(np.int64)
    v = np.where(w < 0, 1 - 2 * w, 2 * w)   # sign in bit 0, magnitude above
    fields: List[_Fields] = []
    at = 0
    for s in range(0, v.size, SLICE_MAX):
        slice_fields, bits = _slice(v[s:s + SLICE_MAX], force)
        fields += [(f[0] + at, f[1], f[2]) for f in slice_fields]
        at += bits
    fields.append((np.array([at]), np.array([ZDIV_END]), np.array([3])))
    used = -(-(at + 3) // 8)                # the marker's byte; its spare high bits stay 0
    total = _ceil_to(max(used, 1), STREAM_ALIGN)
    out = np.full(total, 0xFF, np.uint8)
    out[:used] = _pack(fields, used)
    return out.tobytes()
