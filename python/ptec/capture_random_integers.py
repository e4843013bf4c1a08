"""Integer random draws in a forward (issue 15): torch.randint,
torch.randint_like, t.random_(low, high) (random_() and random_(low, None):
up to the dtype's top, torch's 2^63 - 1 for int64 and 2^24 for float32,
included), torch.randperm, torch.multinomial
and torch.poisson, as transforms of capture_random's uniform stream (u: one
of 256 equally likely levels per element, an int8 value drawn on the
device). Like capture_random's calls they follow torch's distribution, not
torch's values.

Every draw below is first taken back to its level i = floor(256 u) in
0..255 (a LUT whose output is a whole number: quantize gives it a grid on
which each whole number is exact, as for x.long()'s ids).

- randint(low, high): n = high - low <= 256 values. With n dividing 256
  one draw is exact: floor(n i / 256). Otherwise two draws i1, i2 make one
  of 65,536 levels v = 256 i1 + i2 and r = floor(n v / 65536), each value
  drawn with probability within n / 65536 of 1 / n (one draw alone would be
  off by up to n / 256): r = a(i1) + [i2 > t(i1)] with the LUTs
  a = floor(n i1 / 256) and t = ceil(256 (256 - (n i1 mod 256)) / n) - 1,
  compared exactly (both whole numbers). The result is torch's int64
  (to_index, then + low as int_math); a float dtype= (or random_ of a float
  tensor) gives its float copy; read only by float layers (x + r, torch's
  promotion to float32) it is that float copy too. n > 256 (an int8 value
  holds 256 whole numbers), up to torch's whole int64 span (2^64 - 1
  integers): a power of two 2^p is p uniform bits (ceil(p / 8) levels
  shifted and or-ed in int64, masked to p bits): exact. Other spans up to
  2^16: m draws make one of 2^K levels V (K = 8 m, the fewest with
  2^K >= n 2^24) and r = floor(n V / 2^K), each value drawn with
  probability within 2^-K of 1 / n (relatively within 2^-24); no integer
  division runs on the device: r's bits from the top, b_j =
  [n V >= 2^(K+j)] by an int64 clamp, subtracted as found. Larger spans
  (2^(p-1) < n < 2^p): rejection over 25 candidates of p bits each, the
  first below n (each accepted with chance n / 2^p > 1/2), or when the
  first 24 are all rejected (chance f < 2^-24) the last reduced as
  V - n [V >= n]: each value's probability within f of 1 / n relatively.
  A span above 2^63 compares its 64-bit candidates as signed W = V - 2^63
  and adds low + 2^63 with int64's wrap (the result is in range).
- randperm(n): the stable argsort of n keys of 2^24 levels, each three
  draws combined as 65536 i1 + 256 i2 + i3 in int64 (int_math) and sorted
  as their exact float32 copies. Two keys tie with probability 2^-24 (one
  argsort of 256-level draws would tie often and favour the identity
  order); a tie keeps position order, a bias below n^2 2^-25.
- multinomial(probs, k, replacement) of 1-D [C] or 2-D [R, C] weights: with
  replacement each draw is the inverse CDF, the first position whose
  normalised cumulative weight (a triangular linear over the weights,
  divided by C copies of its last column, the sum: each copy its own slice,
  so they keep the cumulative value's grid and the last positive weight's
  is exactly 1) exceeds u: the argmax of [cdf_j > u] over j < C - 1 with a
  final 1 (so C - 1 when none does). A zero weight repeats the cumulative
  value before it exactly (the same int32 sum), so it is never drawn.
  Without replacement: k such draws in turn, each from the weights with the
  ones drawn before set to 0 (torch's definition, the law Gumbel-top-k
  samples too; Gumbel-top-k on int8 keys, whose grid step is a tenth of a
  nat, would tie often and favour low indices, and a zero weight's -inf key
  has no int8 code). Each probability is the int8 cumulative weight's,
  within about one step (1/255 of the row's sum). A row whose weights
  (the last draw's) have no positive one fails the execute (_checked): a
  row of zeros, where torch raises, and fewer positive weights than k
  without replacement, an error by torch's documentation (its CPU code
  returns zero-weight positions then, pytorch#50034).
- poisson(rates): the count is the sum (int64) of m independent counts
  of rate / m each (a sum of independent Poisson counts is Poisson of the
  summed rate: exact in law), m = ceil(1.25 r / 8) from the example
  input's largest rate r (the tracer's shadow value; a constant's own), so
  each part's rate is at most 8 (6.4 at the example's largest), up to
  8,192 parts (rates to 65,536; more refused). A part's count is the first
  k with F_k(rate / m) > u, F_k = sum_{j <= k} p_j with p_0 = exp(-rate / m)
  and p_{j+1} = p_j (rate / m) / (j + 1), i.e. #{k < K : V >= T_k} with V
  one of 2^24 levels (three draws) and T_k = floor(2^24 F_k) from three
  whole-valued byte LUTs of the rate (each byte's K LUTs joined on their
  one whole-number grid, then combined in int64: exact compares): K = 32
  terms leave a tail below 2^-24 up to rate 10 a part, and each part's
  probabilities are within 2^-24 of Poisson's, so m parts move the mean by
  below 32 m 2^-24 (0.003 counts at rate 10^4). The compares are
  [N, m, K] (8,192 x 32 per element at most), summed over both. A
  calibration input with a rate above 8 m refuses the model in one line
  (naming the example) rather than cut the counts short.
"""
from __future__ import annotations

import math
import operator

import numpy as np
import torch

from .capture_calls import refuse_call, _meta_shape
from .ir import UnsupportedOperator

INTEGER_CALLS = ("randint", "randint_like", "random_", "randperm", "multinomial", "poisson")
RATE_CAP = 8.0
_RATE_ROOM = 10.0          # K is chosen for rates up to here


def _level(x: torch.Tensor) -> torch.Tensor:
    """u's level i in 0..255 (u is i / 256, exactly on its int8 grid)."""
    return torch.clamp(torch.floor(x * 256.0), 0.0, 255.0)


def _carry_at(x, a):
    n, i = a["n"], _level(x)
    c = 256.0 - torch.remainder(n * i, 256.0)
    return torch.clamp(torch.ceil(256.0 * c / n), 1.0, 256.0) - 1.0


def _poisson_cdf(x, a):
    """Byte `byte` (2: the top) of T_k = floor(2^24 F_k(rate / parts)),
    F_k = sum_{j <= k} p_j, clamped to 2^24 - 1: a whole number 0..255."""
    parts = int(a.get("parts", 1))
    if x.dtype == torch.float32 and x.numel() and float(x.max()) > RATE_CAP * parts:
        # the float graph on a calibration input (the LUT's own grid is float64)
        raise UnsupportedOperator(f"operator not supported: {a.get('source', 'torch.poisson')}: rates up to "
                                  f"{float(x.max()):.3g} on the calibration inputs; ptec draws Poisson counts "
                                  f"for rates up to {RATE_CAP * parts:g} here ({parts} independent part(s) of "
                                  f"rate / {parts} <= {RATE_CAP:g}, as many as the example input's largest rate "
                                  f"asks for: give an example with rates as large as the calibration's)")
    lam = torch.clamp(x.double(), min=0.0) / parts
    p = torch.exp(-lam)
    total = p.clone()
    for j in range(1, int(a["k"]) + 1):
        p = p * lam / j
        total = total + p
    t = torch.clamp(torch.floor(total * 2.0 ** 24), 0.0, 2.0 ** 24 - 1)
    return torch.remainder(torch.floor(t / 256.0 ** int(a.get("byte", 0))), 256.0).to(x.dtype)


def _middle(x: torch.Tensor) -> torch.Tensor:
    return (_level(x) + 0.5) / 256.0


# element-wise functions of u (capture_elementwise_math.MATH adds them); the
# fills geometric_ / log_normal_ are capture_random's, of the level's midpoint
MATH_FUNCTIONS = {
    "geometric": lambda x, a: torch.clamp(torch.ceil(torch.log(_middle(x)) / math.log1p(-a["p"]))
                                          if a["p"] < 1 else torch.zeros_like(x), min=1.0),
    "log_normal": lambda x, a: torch.exp(a["mean"] + a["std"] * torch.special.ndtri(_middle(x))),
    # capture_random's normal and exponential / Gumbel draws
    "ndtri_of_level": lambda x, a: torch.special.ndtri(_middle(x)),
    "minus_log_of_level": lambda x, a: -torch.log(_middle(x)),
    "uniform_level": lambda x, a: _level(x),
    "randint_high": lambda x, a: torch.floor(a["n"] * _level(x) / 256.0),
    "randint_carry_at": _carry_at,
    "poisson_cdf": _poisson_cdf,
}


def _terms() -> int:
    """The fewest K with 1 - F_{K-1}(_RATE_ROOM) < 2^-24."""
    p = total = math.exp(-_RATE_ROOM)
    k = 0
    while 1.0 - total >= 2.0 ** -24:
        k += 1
        p *= _RATE_ROOM / k
        total += p
    return k + 1


POISSON_TERMS = _terms()


def _arg(fn, i: int, key: str, default=None):
    if len(fn.args) > i:
        return fn.args[i]
    return fn.kwargs.get(key, default)


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _dtype(fn):
    return getattr(fn.meta.get("tensor_meta"), "dtype", None)


def _whole(d, src: str, name: str, lo: int, hi: int, **attrs) -> str:
    """A whole-valued LUT of src with its known range [lo, hi] (quantize's
    whole-number grid covers it even when calibration saw less)."""
    return d("elementwise", [src], fn="math", name=name, whole_valued=True, whole_range=(float(lo), float(hi)),
             **attrs)


def levels_of(d, shape) -> str:
    """A draw's level i (0..255) as an int64 value."""
    return d("to_index", [_whole(d, d.uniform(shape), "uniform_level", 0, 255)], dtype="int64")


# the calls that read an int64 draw as a number, where torch promotes it to float32 (x + r)
_PROMOTING = (operator.add, operator.sub, operator.mul, operator.truediv, torch.add, torch.sub, torch.mul,
              torch.div, "add", "sub", "mul", "div")


def _float_users_only(fn) -> bool:
    """Every reader of fn is arithmetic giving a float tensor (x + r: torch
    promotes r to float32). An index, an output or r.float() keeps int64."""
    users = list(fn.users)
    try:
        return bool(users) and all(_dtype(u) == torch.float32 and u.target in _PROMOTING for u in users)
    except TypeError:         # an unhashable target is none of these
        return False


def _finish(d, fn, r: str) -> str:
    """r (an int64 value) as torch's dtype for fn: int64 itself, or its float copy."""
    dtype = _dtype(fn)
    if dtype == torch.int64 and not _float_users_only(fn):
        return r
    if dtype in (torch.int64, torch.float32):
        return d("index_to_float", [r])
    refuse_call(fn, f"ptec draws random integers as int64 or float32, not {dtype}")


def _randint(d, fn, shape, low, high) -> str:
    if not (_int(low) and _int(high)) or high <= low:
        refuse_call(fn, "ptec runs randint / random_ with int bounds low < high")
    n = high - low
    if n > 256:
        return _finish(d, fn, _wide_randint(d, fn, shape, n, int(low)))
    u1 = d.uniform(shape)
    a = d("to_index", [_whole(d, u1, "randint_high", 0, n - 1, n=float(n))], dtype="int64")
    if 256 % n:
        at = _whole(d, u1, "randint_carry_at", 0, 255, n=float(n))
        i2 = _whole(d, d.uniform(shape), "uniform_level", 0, 255)
        carry = d("bool_to", [d("compare", [i2, at], kind="gt")], dtype="int64")
        a = d("int_math", [a, carry], kind="add", dtype="int64", scalars={}, alpha=1)
    if low:
        a = d("int_math", [a], kind="add", dtype="int64", scalars={1: int(low)}, alpha=1)
    return _finish(d, fn, a)


WIDE_BITS = 62           # n 2^K below 2^62: Y + 1 and every threshold fit int64
WIDE_BIAS_BITS = 24      # relative bias below 2^-24 for every span that is not a power of two
TRIES = WIDE_BIAS_BITS + 1      # rejection candidates: TRIES - 1 rejected in turn leave a chance below 2^-24


def wide_draws(n: int):
    """(m draws, K = 8 m bits) for randint over n > 256 integers by
    floor(n V / 2^K): the fewest draws with 2^K >= n 2^24 (a relative bias
    below 2^-24) within n 2^K <= 2^62 (spans up to 2^16); None for larger
    spans (a power of two is its own bits, any other span by rejection)."""
    p = (n - 1).bit_length()
    m = -(-(p + WIDE_BIAS_BITS) // 8)
    return (m, 8 * m) if p + 8 * m <= WIDE_BITS else None


def _im(d, kind, ins, **scalars):
    return d("int_math", ins, kind=kind, dtype="int64", scalars={int(a): b for a, b in scalars.items()}, alpha=1)


def _bits_of(d, shape, p: int) -> str:
    """p uniform bits (1 <= p <= 64) per element of shape, int64: m = ceil(p / 8)
    draws' levels side by side, V = i1 << 8 (m - 1) | ... | im (wrapping, two's
    complement, for p = 64), then its low p bits (V & (2^p - 1)) for p < 64."""
    m = -(-p // 8)
    v = None
    for j in range(m):
        level = levels_of(d, shape)
        if j + 1 < m:
            level = _im(d, "left_shift", [level], **{"1": 8 * (m - 1 - j)})
        v = level if v is None else _im(d, "bitwise_or", [v, level])
    if p < 8 * m and p < 64:
        v = _im(d, "bitwise_and", [v], **{"1": 2 ** p - 1})
    return v


def _rejection_randint(d, fn, shape, n: int, low: int) -> str:
    """low + r, r uniform over n integers (n not a power of two, 2^(p-1) < n
    < 2^p): TRIES candidates V_t of p bits each, r the first V_t < n (each
    accepted with chance n / 2^p > 1/2), or, when the first TRIES - 1 are
    all rejected (chance f below 2^-24), the last one reduced: V - n [V >= n]
    (always in range). Each value's probability is (1 - f) / n + f q with q
    within [1, 2] / 2^p: within f (below 2^-24) of 1 / n relatively.
    Candidates as [N, TRIES] int64; the pick is the argmax of [V_t < n] with
    the last column 1, selected by a one-hot sum. Spans above 2^63 (p = 64):
    the 64 bits as a signed W = V - 2^63 (mod 2^64), compared as W < n - 2^63,
    and low + V computed as W + (low + 2^63) (wrapping: the result is in range)."""
    count = int(np.prod(shape)) if shape else 1
    p = (n - 1).bit_length()
    v = _bits_of(d, [count, TRIES], p)
    bound = n if p < 64 else n - 2 ** 63
    accept = d("compare", [v], kind="lt", integer="int64", scalar=float(bound), int_scalar=bound)
    over = d("bool_to", [d("compare", [v], kind="ge", integer="int64", scalar=float(bound), int_scalar=bound)],
             dtype="int64")
    if p < 64:
        r = _im(d, "sub", [v, _im(d, "mul", [over], **{"1": n})])
    else:
        r = _im(d, "add", [v, _im(d, "mul", [over], **{"1": 2 ** 64 - n})])
    hits = d("cat", [d("slice", [d("bool_to", [accept], dtype="float32")], dim=1, start=0, end=TRIES - 1),
                     d.const(np.ones((count, 1), np.float32))], dim=1)
    pick = d("argmax", [hits], dim=1, keepdim=True, smallest=False)                   # [N, 1]
    hot = d("compare", [d("index_to_float", [pick]), d.const(np.arange(TRIES, dtype=np.float32)[None])], kind="eq")
    r = _im(d, "mul", [r, d("bool_to", [hot], dtype="int64")])
    r = d("int_math", [r], kind="sum", dtype="int64", dims=[1], keepdim=False)
    shift = low if p < 64 else (low + 2 ** 63 + 2 ** 63) % 2 ** 64 - 2 ** 63
    if shift:
        r = _im(d, "add", [r], **{"1": shift})
    return d("int_math", [r], kind="view", dtype="int64", shape=[int(v) for v in shape])


def _wide_randint(d, fn, shape, n: int, low: int) -> str:
    """low + r for n > 256 integers. A power of two 2^p: r is p uniform
    bits, exact. Up to 2^16 integers, r = floor(n V / 2^K), V = 256^(m-1) i1
    + ... + im of m draws (2^K equally likely levels): each r has floor or
    ceil of 2^K / n levels, so its probability is within 2^-K of 1 / n
    (relatively within n 2^-K <= 2^-24). All in int64 (int_math), with no
    division: Y = n V, then r's bits from the top, b_j = [Y >= 2^(K+j)] as
    clamp(Y - 2^(K+j) + 1, 0, 1), Y -= b_j 2^(K+j), r += b_j 2^j. Larger
    spans: _rejection_randint."""
    if n & (n - 1) == 0:
        r = _bits_of(d, shape, n.bit_length() - 1)
        return _im(d, "add", [r], **{"1": low}) if low else r
    found = wide_draws(n)
    if found is None:
        return _rejection_randint(d, fn, shape, n, low)
    m, k = found

    def im(kind, ins, **scalars):
        return _im(d, kind, ins, **scalars)

    v = None
    for j in range(m):
        level = levels_of(d, shape)
        if j + 1 < m:
            level = im("mul", [level], **{"1": 256 ** (m - 1 - j)})
        v = level if v is None else im("add", [v, level])
    y = im("mul", [v], **{"1": n})
    r = None
    for j in reversed(range((n - 1).bit_length())):
        t = 2 ** (k + j)
        bit = d("int_math", [im("add", [y], **{"1": 1 - t})], kind="clamp", dtype="int64", lo=0, hi=1)
        if j:
            y = im("sub", [y, im("mul", [bit], **{"1": t})])
        part = im("mul", [bit], **{"1": 2 ** j}) if j else bit
        r = part if r is None else im("add", [r, part])
    return im("add", [r], **{"1": low}) if low else r


def _randint_bounds(fn, name):
    """(low, high) of randint(low, high, size) / randint(high, size),
    randint_like(x, low, high) / randint_like(x, high), t.random_(from, to) /
    random_(to), and random_() / random_(from, None): up to the dtype's
    top, torch's 2^63 - 1 for int64 and 2^24 for float32, included."""
    low, high = _given_bounds(fn, name)
    if name == "random_" and high is None and (low is not None or not (fn.args[1:] or fn.kwargs)):
        top = {torch.int64: 2 ** 63 - 1, torch.float32: 2 ** 24}.get(_dtype(fn))
        if top is not None:
            return (0 if low is None else low), top + 1
    return low, high


def _given_bounds(fn, name):
    args = list(fn.args[1:] if name in ("randint_like", "random_") else fn.args)
    kw = fn.kwargs
    if name == "randint":
        ints = [a for a in args if _int(a)]
        if "high" in kw:
            return kw.get("low", ints[0] if ints else 0), kw["high"]
        return (0, ints[0]) if len(ints) == 1 else (ints[0], ints[1]) if len(ints) >= 2 else (None, None)
    lo_key, hi_key = ("from", "to") if name == "random_" else ("low", "high")
    if hi_key in kw:
        return kw.get(lo_key, args[0] if args else 0), kw[hi_key]
    if len(args) == 1:
        return 0, args[0]
    if len(args) >= 2:
        return args[0], args[1]
    return None, None


def _randperm(d, fn, shape) -> str:
    n = shape[0]
    key = None
    for weight in (65536, 256, 1):
        level = levels_of(d, [n])
        if weight != 1:
            level = d("int_math", [level], kind="mul", dtype="int64", scalars={1: weight}, alpha=1)
        key = level if key is None else d("int_math", [key, level], kind="add", dtype="int64", scalars={}, alpha=1)
    perm = d("sort_indices", [d("index_to_float", [key])], dim=0, descending=False, k=None, pick=None,
             keepdim=False, rule=None)
    return _finish(d, fn, perm)


def _inverse_cdf(d, weights: str, rows: int, c: int, draws: int) -> str:
    """[rows, draws] int64: each the first j whose normalised cumulative
    weight exceeds a fresh u (C - 1 when none of the first C - 1 does)."""
    cum = d("linear", [weights], weight=np.tril(np.ones((c, c), np.float32)), bias=None)
    # the sum: cum's last column, the same int8 code, so the last positive weight's cdf is exactly 1
    # C copies of the sum, each its own slice of cum, so the cat keeps cum's grid (quantize: inputs on one grid)
    total = d("cat", [d("slice", [cum], dim=1, start=c - 1, end=c) for _ in range(c)], dim=1)
    cdf = d("div", [cum, total])
    if c == 1:
        return d("to_index", [d.const(np.zeros((rows, draws), np.float32))], dtype="int64")
    head = d("slice", [d("reshape", [cdf], target_shape=[rows, 1, c])], dim=2, start=0, end=c - 1)
    u = d("reshape", [d.uniform([rows, draws])], target_shape=[rows, draws, 1])
    above = d("compare", [head, u], kind="gt")          # broadcast: [rows, draws, C - 1]
    hits = d("cat", [d("bool_to", [above], dtype="float32"), d.const(np.ones((rows, draws, 1), np.float32))], dim=2)
    return d("argmax", [hits], dim=2, keepdim=False, smallest=False)


def _checked(d, picks: str, weights: str, rows: int, c: int) -> str:
    """picks (int64 [rows, n]) plus a 0 that exists only when every row's
    weights (the last draw's, without replacement) have a positive one;
    else torch raises ("invalid multinomial distribution") and so does the
    execute: id = the first positive weight's position, C when none (the
    argmax of [w > 0] with a final 1: exact compares of the dequantized
    weights), looked up in a constant [C, 1] of zeros by
    aten::embedding.out, which checks its ids at run time (id C is outside
    the table: InvalidArgument). The looked-up 0.0, as int64, is added to
    the picks, so the check is no dead code and the picks are unchanged."""
    hits = d("bool_to", [d("compare", [weights], kind="gt", scalar=0.0)], dtype="float32")
    hits = d("cat", [hits, d.const(np.ones((rows, 1), np.float32))], dim=1)
    ids = d("argmax", [hits], dim=1, keepdim=False, smallest=False)
    zero = d("to_index", [d("embedding", [ids], weight=np.zeros((c, 1), np.float32))], dtype="int64")
    return d("int_math", [picks, zero], kind="add", dtype="int64", scalars={}, alpha=1)     # [rows, 1] broadcast


def _multinomial(d, fn, ins, by_name, shape) -> str:
    probs = fn.args[0]
    pshape = _meta_shape(probs) if isinstance(probs, torch.fx.Node) else None
    k, replacement = _arg(fn, 1, "num_samples"), _arg(fn, 2, "replacement", False)
    if pshape is None or len(pshape) not in (1, 2) or _dtype(probs) != torch.float32 or not _int(k) or k < 1 \
            or not isinstance(replacement, bool):
        refuse_call(fn, "ptec runs torch.multinomial of 1-D or 2-D float weights with an int num_samples")
    rows, c = (1, pshape[0]) if len(pshape) == 1 else tuple(pshape)
    if not replacement and k > c:
        refuse_call(fn, f"{k} samples without replacement from {c} categories (torch raises)")
    src = by_name.get(ins[0])
    if src is not None and src.op == "constant":          # constant weights (a view of a constant has no bytes)
        weights = d.const(np.asarray(src.attrs["value"], np.float32).reshape(rows, c))
    else:
        weights = d("reshape", [ins[0]], target_shape=[rows, c])
    if replacement:
        picks = _checked(d, _inverse_cdf(d, weights, rows, c, k), weights, rows, c)
    else:
        positions = d.const(np.arange(c, dtype=np.float32).reshape(1, c))
        drawn = []
        for s in range(k):
            pick = _inverse_cdf(d, weights, rows, c, 1)                     # [rows, 1]
            if s + 1 == k:          # the last draw's weights have a positive one iff k were
                pick = _checked(d, pick, weights, rows, c)
            drawn.append(pick)
            if s + 1 < k:
                # (broadcast: the pick's float32 copy against the positions, exactly)
                hit = d("compare", [d("index_to_float", [pick]), positions], kind="eq")
                weights = d("where", [hit, d.const(np.zeros((rows, c), np.float32)), weights])
        picks = drawn[0] if k == 1 else d("int_math", drawn, kind="cat", dtype="int64", dim=1)
    if len(pshape) == 1:
        picks = d("int_math", [picks], kind="view", dtype="int64", shape=[k])
    return _finish(d, fn, picks)


MAX_PARTS = 8192            # rates up to 65,536: N x parts x K compares, 8192 x 32 per element at most


def poisson_parts(rate_max) -> int:
    """Independent parts a count is summed from: enough for 1.25 times the
    example's largest rate (room as RATE_CAP's to _RATE_ROOM) at RATE_CAP each."""
    return max(1, math.ceil(1.25 * float(rate_max or 0.0) / RATE_CAP))


def _poisson(d, fn, ins, by_name, shape, source) -> str:
    if _dtype(fn) != torch.float32:
        refuse_call(fn, "ptec runs torch.poisson of float32 rates")
    parts = poisson_parts(fn.meta.get("ptec_rate_max"))
    if parts > MAX_PARTS:
        refuse_call(fn, f"rates up to {fn.meta['ptec_rate_max']:.3g} on the example input: ptec draws Poisson "
                    f"counts for rates up to {RATE_CAP * MAX_PARTS:g} ({MAX_PARTS} parts of rate <= {RATE_CAP:g})")
    # over the elements as [N, 1]
    n = int(np.prod(shape)) if shape else 1
    src = by_name.get(ins[0])
    if src is not None and src.op == "constant":          # constant rates (a view of a constant has no bytes)
        rates = d.const(np.asarray(src.attrs["value"], np.float32).reshape(n, 1))
    else:
        rates = d("reshape", [ins[0]], target_shape=[n, 1])
    # T_k = floor(2^24 F_k(rate / parts)), k < K, as int64 [N, 1, K]: three whole-valued byte LUTs each,
    # each byte's K LUTs joined (one whole-number grid) and taken to int64 at once
    t = None
    for byte in (2, 1, 0):
        b = d("cat", [_whole(d, rates, "poisson_cdf", 0, 255, k=k, parts=parts, byte=byte, source=source)
                      for k in range(POISSON_TERMS)], dim=1)
        b = d("to_index", [b], dtype="int64")
        if byte:
            b = d("int_math", [b], kind="left_shift", dtype="int64", scalars={1: 8 * byte})
        t = b if t is None else d("int_math", [t, b], kind="bitwise_or", dtype="int64", scalars={})
    t = d("int_math", [t], kind="view", dtype="int64", shape=[n, 1, POISSON_TERMS])
    # each part's V, one of 2^24 levels (three draws): [N, parts, 1]
    v = None
    for byte in (2, 1, 0):
        level = levels_of(d, [n, parts, 1])
        if byte:
            level = d("int_math", [level], kind="left_shift", dtype="int64", scalars={1: 8 * byte})
        v = level if v is None else d("int_math", [v, level], kind="bitwise_or", dtype="int64", scalars={})
    # a part's count is the first k with F_k > u, i.e. #{k : V >= T_k}; summed over the parts in int64
    over = d("bool_to", [d("compare", [v, t], kind="ge", integer="int64")], dtype="int64")   # [N, parts, K]
    counts = d("int_math", [over], kind="sum", dtype="int64", dims=[1, 2], keepdim=False)
    counts = d("int_math", [counts], kind="view", dtype="int64", shape=[int(v) for v in shape])
    return d("index_to_float", [counts])          # torch's float counts, exact


def integer_draw(d, fn, name: str, ins, by_name, shape) -> None:
    """The nodes of one of INTEGER_CALLS into steps d (capture_random's _Draws)."""
    if name in ("randint", "randint_like", "random_"):
        low, high = _randint_bounds(fn, name)
        _randint(d, fn, shape, low, high)
    elif name == "randperm":
        if len(shape) != 1:
            refuse_call(fn, "ptec runs torch.randperm(n) with an int n")
        _randperm(d, fn, shape)
    elif name == "multinomial":
        _multinomial(d, fn, ins, by_name, shape)
    else:
        from .capture import _source
        _poisson(d, fn, ins, by_name, shape, _source(fn, {}))
