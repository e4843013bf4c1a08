"""Integer random draws in a forward (capture_random_integers), and the
fills geometric_ / log_normal_ / bernoulli_ (capture_random): each compiled
program runs on the host runtime over many executes of one loaded method
and its draws are checked against torch's distribution (frequencies,
moments, ranges), never torch's values (ptec draws from its own stream).
Bounds are several standard errors wide plus the documented resolution
(n / 65536 for randint, about one int8 step of the cumulative weights for
multinomial and poisson); the streams are fixed by the compile's seed, so
the checks are deterministic. Refusals: one line naming the call."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.compiler import CompileError, compile_model
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from model_checks import Call
from test_function_coverage import inputs

BIG = (1, 16, 64)          # 1,024 draws per execute


def _runs(fn, shape=BIG, executes=8, x=None, lo=-3.0, hi=3.0):
    """(the outputs of `executes` runs of one loaded method, stacked; the
    output's int8 step, 0 for an int64 or exact float output; the input)."""
    calibration = inputs(shape, lo, hi)
    x = calibration[0][0] if x is None else x
    res = compile_model(Call(fn).eval(), [x], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    outs = host_runtime.run_stream(parse_program(res.data), res.data, [[x.numpy()]] * executes)
    out = res.graph.node(res.graph.outputs[0])
    step = out.qparams[0] if out.qparams and out.op not in ("index_to_float", "int_math", "argmax",
                                                             "sort_indices", "to_index") else 0.0
    return np.stack([np.asarray(o[0]) for o in outs]), step, x


def _frequencies_match(values, probs, trials, slack=0.0):
    """Each value's count over `trials` draws within 5 binomial sigmas (plus
    `slack` of the trials) of probs[value]; values outside never drawn."""
    counts = np.bincount(values.reshape(-1), minlength=len(probs))
    assert len(counts) == len(probs), counts
    for k, p in enumerate(probs):
        sigma = math.sqrt(trials * p * (1 - p))
        assert abs(counts[k] - trials * p) <= 5 * sigma + slack * trials + 1e-9, (k, counts[k], trials * p)


def test_the_uniform_has_256_equally_likely_levels():
    """u is i / 256 exactly, each i in 0..255 as likely (the integer draws
    rest on it): 32,768 draws, Pearson's chi-square over the 256 levels."""
    y, _, _ = _runs(lambda x: torch.rand_like(x), executes=32)
    levels = y.reshape(-1) * 256.0
    assert np.array_equal(levels, np.round(levels)) and levels.min() == 0 and levels.max() == 255
    counts = np.bincount(levels.astype(np.int64), minlength=256)
    expected = y.size / 256
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 255 + 5 * math.sqrt(2 * 255), (chi2, np.flatnonzero(counts < expected / 2))


@pytest.mark.parametrize("call, low, high", [
    (lambda x: torch.randint(0, 5, (1, 16, 64)), 0, 5),                        # two draws (5 does not divide 256)
    (lambda x: torch.randint(10, (1, 16, 64)), 0, 10),                         # randint(high, size)
    (lambda x: torch.randint(-3, 4, size=(1, 16, 64)), -3, 4),                 # a negative low
    (lambda x: torch.randint_like(x, 2, 10).long(), 2, 10),                    # one draw: 8 divides 256
    (lambda x: torch.randint(0, 200, (1, 16, 64)), 0, 200),
])
def test_randint_is_uniform_over_its_integers(call, low, high):
    y, _, _ = _runs(call)
    assert y.dtype == np.int64
    assert y.min() >= low and y.max() < high
    n = high - low
    _frequencies_match(y - low, [1.0 / n] * n, y.size, slack=n / 65536)
    # all values at once: Pearson's chi-square over n bins is n - 1 +- sqrt(2 (n - 1)) (one 256-level
    # draw for n = 200 would give some values twice the levels of others: a chi-square near 1,000)
    expected = y.size / n
    chi2 = float((((np.bincount((y - low).reshape(-1), minlength=n) - expected) ** 2) / expected).sum())
    assert chi2 < n - 1 + 5 * math.sqrt(2 * (n - 1)) + 4, chi2
    # not frozen: draws differ between executes
    assert not np.array_equal(y[0], y[1])


@pytest.mark.parametrize("low, high", [(0, 1000), (-7, 2 ** 16 - 7 - 3)])
def test_wide_randint_is_uniform(low, high):
    """More than 256 integers, up to 2^16: floor(n V / 2^K) of m draws in
    int64, each value within 2^-K of 1 / n (a relative bias below 2^-24).
    Chi-square over the values (n = 1000) or over 1,024 bins (n near 2^16);
    the float copy is the int."""
    from ptec.capture_random_integers import wide_draws
    n = high - low
    m, k = wide_draws(n)
    assert 2 ** k >= n * 2 ** 24 and n * 2 ** k <= 2 ** 62
    y, _, _ = _runs(lambda x: torch.randint(low, high, BIG), executes=32)
    assert y.dtype == np.int64 and y.min() >= low and y.max() < high
    r = (y - low).reshape(-1)
    cells = min(n, 1024)
    bins = r * cells // n
    expected = r.size / cells
    chi2 = float(((np.bincount(bins, minlength=cells) - expected) ** 2 / expected).sum())
    assert chi2 < cells - 1 + 5 * math.sqrt(2 * (cells - 1)), chi2
    f, _, _ = _runs(lambda x: torch.randint(low, high, BIG).float(), executes=2)
    assert f.dtype == np.float32 and np.array_equal(f, np.round(f)) and f.min() >= low and f.max() < high
    assert abs(f.mean() - (low + high - 1) / 2) < 5 * n / math.sqrt(12 * f.size)


def _unsigned(y, low):
    """y - low as exact Python ints (spans up to 2^64 - 1)."""
    return np.array([int(v) - low for v in y.reshape(-1)], dtype=object)


# spans above 2^16 (issue 15): a power of two is its own p bits (exact); any other span by rejection
WIDE = [
    (-7, 2 ** 20 - 7),                      # 2^20: the bits
    (5, 2 ** 40 + 5),                       # 2^40
    (-2 ** 63, 0),                          # 2^63: the largest power of two torch takes
    (0, 3 * 10 ** 12),                      # rejection, accepting 68 % of 42-bit candidates
    (-10, 2 ** 33 + 2 ** 32 + 1),           # rejection, accepting just over half of the 34-bit candidates
    (0, 2 ** 63 - 1),                       # 2^63 - 1 integers
    (-2 ** 63, 2 ** 63 - 1),                # the full int64 span torch takes: 2^64 - 1 integers (64-bit candidates)
    (-2 ** 62, 2 ** 63 - 1),                # 3 2^62 - 1 integers
]


@pytest.mark.parametrize("low, high", WIDE)
def test_randint_over_spans_up_to_int64(low, high):
    """32,768 draws: all in [low, high); Pearson's chi-square over 1,024
    equal bins of the span (each bin's integer count within one of the
    others', a relative difference below 2^-20 here); each of the span's
    top 12 bits (p bits: 2^(p-1) < n <= 2^p) at its exact frequency for
    the span; the mean. Each bound is 5 sigmas (the chi-square's
    1023 + 5 sqrt(2046)): a false alarm per check below 1e-5 (chi-square:
    about 1e-5 by its normal approximation), the streams fixed by the
    compile's seed. A wrong rejection (candidates reduced mod n without
    rejecting) doubles the probability of the span's low 2^p - n values:
    a chi-square in the thousands."""
    n = high - low
    y, _, _ = _runs(lambda x: torch.randint(low, high, BIG), executes=32)
    assert y.dtype == np.int64 and int(y.min()) >= low and int(y.max()) < high
    r = _unsigned(y, low)
    cells = 1024
    bins = np.array([v * cells // n for v in r], dtype=np.int64)
    expected = r.size / cells
    chi2 = float(((np.bincount(bins, minlength=cells) - expected) ** 2 / expected).sum())
    assert chi2 < cells - 1 + 5 * math.sqrt(2 * (cells - 1)), chi2
    p = (n - 1).bit_length()
    for bit in range(max(0, p - 12), p):
        # P(bit set) over [0, n): the count of integers below n with that bit, over n
        period = 2 ** (bit + 1)
        ones = (n // period) * 2 ** bit + max(0, n % period - 2 ** bit)
        want = ones / n
        got = float(np.mean([(v >> bit) & 1 for v in r]))
        assert abs(got - want) < 5 * math.sqrt(want * (1 - want) / r.size) + 1e-9, (bit, got, want)
    mean = float(np.mean([float(v) for v in r]))
    assert abs(mean - (n - 1) / 2) < 5 * n / math.sqrt(12 * r.size), (mean, n)
    assert len({row.tobytes() for row in y}) == len(y)          # a new draw every execute


@pytest.mark.parametrize("fill, low, n, dtype", [
    (lambda t: t.random_(), 0, 2 ** 63, torch.int64),                         # [0, 2^63 - 1]: the bits
    (lambda t: t.random_(-2 ** 63, None), -2 ** 63, 2 ** 64, torch.int64),    # every int64
    (lambda t: t.random_(2 ** 63 - 3, None), 2 ** 63 - 3, 3, torch.int64),
    (lambda t: t.random_(), 0, 2 ** 24 + 1, torch.float32),                   # [0, 2^24]: by rejection
    (lambda t: t.random_(2 ** 24 - 3, None), 2 ** 24 - 3, 4, torch.float32),
])
def test_random_fills_up_to_the_dtypes_top(fill, low, n, dtype):
    """t.random_() and t.random_(from, None): torch's [from, top] with top
    2^63 - 1 for int64 and 2^24 for float32 (included). 8,192 draws in
    range, the few-valued spans each value at 1 / n, the wide ones' 64 bins
    by chi-square and the mean (5 sigmas: false alarms below 1e-5)."""
    y, _, _ = _runs(lambda x: fill(torch.zeros(1, 16, 64, dtype=dtype)), executes=8)
    assert y.dtype == (np.int64 if dtype == torch.int64 else np.float32)
    r = np.array([int(v) - low for v in y.reshape(-1)], dtype=object)
    assert min(r) >= 0 and max(r) < n
    if n <= 4:
        _frequencies_match(r.astype(np.int64), [1.0 / n] * n, r.size)
        return
    cells = 64
    counts = np.bincount(np.array([v * cells // n for v in r], dtype=np.int64), minlength=cells)
    expected = r.size / cells
    assert float(((counts - expected) ** 2 / expected).sum()) < cells - 1 + 5 * math.sqrt(2 * (cells - 1))
    assert abs(float(np.mean([float(v) for v in r])) - (n - 1) / 2) < 5 * n / math.sqrt(12 * r.size)


def test_rejection_leaves_a_bias_below_2_to_the_minus_24():
    """The rejection's fallback (all of the first TRIES - 1 candidates
    rejected) has chance (1 - n / 2^p)^(TRIES - 1) < 2^-24 for every span
    that is no power of two; it moves each value's probability by less
    than that, relatively."""
    from ptec.capture_random_integers import TRIES
    for n in (2 ** 16 + 1, 2 ** 33 + 2 ** 32 + 1, 3 * 10 ** 12, 2 ** 64 - 1):
        p = (n - 1).bit_length()
        f = (1 - n / 2 ** p) ** (TRIES - 1)
        assert f < 2.0 ** -24, (n, f)


def test_wide_randint_as_float_and_random_():
    """random_ of a float tensor (torch's warning: beyond 2^24 floats are not
    all whole-spaced) and x + randint(0, 2^30) are the float32 copy of the int."""
    y, _, _ = _runs(lambda x: torch.empty(1, 16, 64).random_(0, 2 ** 30))
    assert y.dtype == np.float32 and np.array_equal(y, np.floor(y)) and y.min() >= 0 and y.max() <= 2 ** 30
    assert abs(y.mean() - 2 ** 29) < 5 * 2 ** 30 / math.sqrt(12 * y.size)
    y, _, _ = _runs(lambda x: torch.zeros(1, 16, 64, dtype=torch.int64).random_(-2 ** 40, 2 ** 40), executes=4)
    assert y.dtype == np.int64 and y.min() >= -2 ** 40 and y.max() < 2 ** 40
    assert abs(y.mean()) < 5 * 2 ** 41 / math.sqrt(12 * y.size)
    y, step, x = _runs(lambda x: x + torch.randint(0, 2 ** 30, (1, 16, 64)))
    assert y.dtype == np.float32 and y.min() > -4 and y.max() < 2 ** 30 + 4
    assert abs(y.mean() - 2 ** 29) < 5 * 2 ** 30 / math.sqrt(12 * y.size)


def test_randint_as_float_and_in_float_arithmetic():
    """random_ of a float tensor and randint(dtype=float) are whole floats;
    x + randint(...) is torch's promotion: x plus a whole number in [2, 7)."""
    y, _, _ = _runs(lambda x: torch.empty(1, 16, 64).random_(0, 6))
    assert y.dtype == np.float32 and np.array_equal(y, np.floor(y)) and y.min() == 0 and y.max() == 5
    _frequencies_match(y.astype(np.int64), [1 / 6] * 6, y.size, slack=6 / 65536)
    y, _, _ = _runs(lambda x: torch.randint(0, 3, (1, 16, 64), dtype=torch.float32))
    assert y.dtype == np.float32 and set(np.unique(y)) == {0.0, 1.0, 2.0}
    y, step, x = _runs(lambda x: x + torch.randint(2, 7, (1, 16, 64)))
    d = y - x.numpy()[None]
    r = np.round(d)
    assert np.abs(d - r).max() <= 1.5 * step and r.min() == 2 and r.max() == 6
    _frequencies_match((r - 2).astype(np.int64), [0.2] * 5, r.size, slack=5 / 65536 + 0.01)


def test_randperm_gives_uniform_permutations():
    perms, _, _ = _runs(lambda x: torch.stack([torch.randperm(6) for _ in range(32)]) + x[0, 0, 0].long() * 0,
                        shape=(1, 1, 1), executes=40, lo=0.1, hi=0.9)
    perms = perms.reshape(-1, 6)
    assert perms.dtype == np.int64
    assert all(sorted(p) == list(range(6)) for p in perms), "not a permutation"
    trials = len(perms)
    # every value equally likely at every position
    for pos in range(6):
        _frequencies_match(perms[:, pos], [1 / 6] * 6, trials)
    # the relative order of two values is a fair coin
    first = (np.argmax(perms == 0, 1) < np.argmax(perms == 5, 1)).mean()
    assert abs(first - 0.5) < 5 * math.sqrt(0.25 / trials)
    assert len({tuple(p) for p in perms}) > trials // 4          # many different permutations


def test_randperm_indexes():
    y, step, x = _runs(lambda x: x[..., torch.randperm(8)], shape=(1, 4, 8), executes=6)
    seen = set()
    for out in y:
        # each output row holds x's row in some order: the same columns for every row
        cols = [int(np.argmin(np.abs(x.numpy()[0, 0] - v))) for v in out[0, 0]]
        assert sorted(cols) == list(range(8))
        assert np.abs(out[0] - x.numpy()[0][:, cols]).max() <= step          # the input's int8 bytes moved
        seen.add(tuple(cols))
    assert len(seen) > 3


WEIGHTS = torch.tensor([[0.0, 1.0, 2.0, 0.0, 4.0, 1.0, 0.0, 0.0],
                        [3.0, 0.0, 0.0, 1.0, 1.0, 0.0, 2.0, 1.0],
                        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0],
                        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])[None]


def test_multinomial_with_replacement_follows_the_weights():
    y, _, _ = _runs(lambda x: torch.multinomial(F.relu(x[0]), 64, replacement=True), shape=(1, 4, 8),
                    executes=24, x=WEIGHTS, lo=0.0, hi=5.0)
    assert y.dtype == np.int64 and y.shape == (24, 4, 64)
    for r in range(4):
        p = (WEIGHTS[0, r] / WEIGHTS[0, r].sum()).numpy()
        picks = y[:, r].reshape(-1)
        assert not np.isin(picks, np.flatnonzero(p == 0)).any(), "a zero weight was drawn"
        _frequencies_match(picks, p, picks.size, slack=0.01)


def test_multinomial_without_replacement_draws_distinct_indices():
    y, _, _ = _runs(lambda x: torch.multinomial(F.relu(x[0, :2]), 3), shape=(1, 4, 8), executes=200,
                    x=WEIGHTS, lo=0.0, hi=5.0)
    assert y.dtype == np.int64 and y.shape == (200, 2, 3)
    for r in range(2):
        w = WEIGHTS[0, r].numpy()
        picks = y[:, r]
        assert all(len(set(p)) == 3 for p in picks), "an index drawn twice"
        assert not np.isin(picks, np.flatnonzero(w == 0)).any(), "a zero weight was drawn"
        # the first draw by weight; the second, given the first, by the weights left
        _frequencies_match(picks[:, 0], w / w.sum(), len(picks), slack=0.01)
        second = np.zeros(8)
        for k in np.flatnonzero(w):
            rest = w.copy()
            rest[k] = 0
            second += w[k] / w.sum() * rest / rest.sum()
        _frequencies_match(picks[:, 1], second, len(picks), slack=0.01)


def test_multinomial_of_one_row():
    w = torch.tensor([1.0, 0.0, 3.0, 0.0])
    y, _, _ = _runs(lambda x: torch.multinomial(x.abs() * 0 + w, 2), shape=(4,), executes=200, lo=0.0, hi=1.0)
    assert y.shape == (200, 2) and set(np.unique(y)) == {0, 2}
    assert all(a != b for a, b in y)
    _frequencies_match(y[:, 0], [0.25, 0, 0.75, 0], len(y), slack=0.01)


@pytest.mark.parametrize("call, mean", [
    (lambda x: torch.multinomial(torch.tensor([0.2, 0.0, 0.8]), 64, True).float(), 1.6),
    (lambda x: torch.poisson(torch.full((64,), 2.0)), 2.0),
    (lambda x: torch.bernoulli(torch.full((64,), 0.3)), 0.3),
    (lambda x: torch.randint_like(torch.zeros(64), 4), 1.5),
    # method spellings and fills of constants, the dropouts' and gumbel_softmax's default training=True
    (lambda x: torch.tensor([0.2, 0.0, 0.8]).multinomial(64, True).float(), 1.6),
    (lambda x: torch.full((64,), 0.3).bernoulli(), 0.3),
    (lambda x: torch.zeros(64).bernoulli(0.3), 0.3),
    (lambda x: torch.ones(64).exponential_(2.0), 0.5),
    (lambda x: torch.normal(2.0, 3.0, size=(64,)), 2.0),
    (lambda x: torch.rand(64).uniform_(1.0, 3.0), 2.0),
    (lambda x: x.new_empty(64).normal_(-1.0, 0.5), -1.0),
    (lambda x: F.dropout(torch.ones(64), 0.25), 1.0),
    (lambda x: F.alpha_dropout(torch.ones(64), 0.25, True), 0.75 / math.sqrt((1.7580993408473766 ** 2 * 0.25 + 1) * 0.75)),    # (1 - p) a
    (lambda x: F.gumbel_softmax(torch.zeros(4, 16), hard=True), 1.0 / 16),
])
def test_draws_from_constant_arguments_are_not_frozen(call, mean):
    """A draw whose arguments are all constants (no traced input) is
    recorded as a call: fx would run it once while tracing and keep one
    draw as a constant."""
    y, step, _ = _runs(call, shape=(1, 4, 8), executes=20)
    assert len({r.tobytes() for r in y}) == len(y)
    assert abs(y.mean() - mean) < 5 * math.sqrt(max(y.var(), 1e-6) / y.size) + step + 0.01


def test_poisson_counts_follow_the_rates():
    rates = torch.linspace(0.0, 12.0, 1024).reshape(1, 16, 64)
    y, _, _ = _runs(lambda x: torch.poisson(x), x=rates, lo=0.0, hi=12.0, executes=16)
    assert y.dtype == np.float32 and np.array_equal(y, np.floor(y)) and y.min() >= 0
    lam = rates.numpy()[None].repeat(len(y), 0)
    assert (y[lam == 0] == 0).all()
    # the sum of (count - rate) over n draws has variance sum rate
    assert abs((y - lam).sum()) < 5 * math.sqrt(lam.sum()) + 0.01 * y.size
    # (count - rate)^2 has mean rate: the spread is Poisson's
    assert abs(((y - lam) ** 2).sum() / lam.sum() - 1.0) < 0.06
    # one rate: the frequency of each count
    y, _, _ = _runs(lambda x: torch.poisson(x * 0 + 3.0), lo=0.0, hi=1.0, executes=8)
    pmf = [math.exp(-3.0) * 3.0 ** k / math.factorial(k) for k in range(12)]
    counts = np.minimum(y.astype(np.int64), 11)
    pmf[11] = 1 - sum(pmf[:11])
    _frequencies_match(counts, pmf, y.size, slack=0.008)


def test_poisson_of_large_rates_sums_parts():
    """Rates above 16: each count the sum (int64) of m independent counts of
    rate / m <= 8 (m from the example's largest rate), a Poisson count of
    the whole rate. Mean and spread over rates 0 to 60, and the pmf at rate
    40 in bins of width 4 (each bin within 5 sigmas and the m parts' int8
    resolution)."""
    from ptec.capture_random_integers import poisson_parts
    assert poisson_parts(60.0) == 10 and poisson_parts(6.0) == 1
    rates = torch.linspace(0.0, 60.0, 1024).reshape(1, 16, 64)
    y, _, _ = _runs(lambda x: torch.poisson(x), x=rates, lo=0.0, hi=60.0, executes=16)
    assert y.dtype == np.float32 and np.array_equal(y, np.floor(y)) and y.min() >= 0
    lam = rates.numpy()[None].repeat(len(y), 0)
    assert (y[lam == 0] == 0).all()
    assert abs((y - lam).sum()) < 5 * math.sqrt(lam.sum()) + 0.01 * y.size
    assert abs(((y - lam) ** 2).sum() / lam.sum() - 1.0) < 0.06
    y, _, _ = _runs(lambda x: torch.poisson(x * 0 + 40.0), lo=0.0, hi=1.0, executes=16)
    pmf = np.array([math.exp(-40.0 + k * math.log(40.0) - math.lgamma(k + 1)) for k in range(200)])
    edges = list(range(20, 64, 4))                 # bins [0, 20), [20, 24), ..., [60, 200)
    probs = [pmf[a:b].sum() for a, b in zip([0] + edges, edges + [200])]
    _frequencies_match(np.digitize(y, edges), probs, y.size, slack=0.01)
    # the example's rates decide the parts: a calibration input with larger ones is refused in one line
    calibration = inputs((1, 4, 8), 0.0, 40.0)
    with pytest.raises((CaptureError, CompileError, UnsupportedOperator)) as e:
        compile_model(Call(lambda x: torch.poisson(x)).eval(), [calibration[0][0] * 0.1], calibration)
    assert "\n" not in str(e.value) and "rates up to" in str(e.value) and "example" in str(e.value), str(e.value)


def _poisson_pmf(lam, top):
    return np.array([math.exp(-lam + k * math.log(lam) - math.lgamma(k + 1)) for k in range(top)])


@pytest.mark.parametrize("lam, shape, executes", [(300.0, (1, 4, 64), 16), (1000.0, (1, 4, 32), 16),
                                                  (1e4, (1, 1, 16), 128)])
def test_poisson_of_rates_above_256(lam, shape, executes):
    """Rates above 256 (issue 15): m = ceil(1.25 rate / 8) parts (1,563 at
    10^4), each a count of rate / m against 24-bit thresholds, summed.
    Against the true Poisson(rate), over 2,048 to 4,096 draws: the mean
    (5 sigmas of sqrt(rate / N)), the variance (5 sigmas of
    sqrt((2 rate^2 + rate) / N)) and Pearson's chi-square over 16 bins of
    about equal probability (df + 5 sqrt(2 df)). False alarms: below 1e-6
    for each moment, about 1e-4 for the chi-square (its normal
    approximation at df = 15), streams fixed by the compile's seed. The
    24-bit thresholds move a part's mean by below 32 2^-24 (int8 cumulative
    values, 1/256 apart, would move it by up to about 0.1: tens of counts
    over 1,563 parts)."""
    y, _, _ = _runs(lambda x: torch.poisson(x * 0 + lam), shape=shape, lo=0.0, hi=1.0, executes=executes)
    assert y.dtype == np.float32 and np.array_equal(y, np.floor(y)) and y.min() >= 0
    v = y.reshape(-1).astype(np.float64)
    n = v.size
    assert abs(v.mean() - lam) < 5 * math.sqrt(lam / n), v.mean()
    assert abs(v.var() - lam) < 5 * math.sqrt((2 * lam * lam + lam) / n), v.var()
    top = int(lam + 20 * math.sqrt(lam))
    pmf = _poisson_pmf(lam, top)
    cdf = np.cumsum(pmf)
    edges = sorted({int(np.searchsorted(cdf, q)) for q in np.linspace(0, 1, 17)[1:-1]})
    probs = np.diff(np.concatenate([[0.0], cdf[np.array(edges) - 1], [1.0]]))
    counts = np.bincount(np.digitize(v, edges), minlength=len(probs))
    chi2 = float(((counts - n * probs) ** 2 / (n * probs)).sum())
    df = len(probs) - 1
    assert chi2 < df + 5 * math.sqrt(2 * df), (chi2, counts, n * probs)
    assert len({row.tobytes() for row in y}) == len(y)


def test_poisson_of_per_element_rates_to_2000():
    """Rates computed in the program, 0 to 2,000 per element (the example's
    largest picks 157 parts): sum of (count - rate) within 5 sigmas and
    the spread Poisson's."""
    rates = torch.linspace(0.0, 2000.0, 256).reshape(1, 4, 64)
    y, _, _ = _runs(lambda x: torch.poisson(x), x=rates, shape=(1, 4, 64), lo=0.0, hi=2000.0, executes=8)
    lam = rates.numpy()[None].repeat(len(y), 0).astype(np.float64)
    # the rates the program sees are x's int8 grid (step 2000 / 255): torch's counts of those rates
    grid = y.astype(np.float64)
    assert (grid[lam == 0] == 0).all()
    assert abs((grid - lam).sum()) < 5 * math.sqrt(lam.sum()) + 0.5 * 2000 / 255 * lam.size / 2
    assert abs(((grid - lam) ** 2).sum() / lam.sum() - 1.0) < 0.1


def test_cauchy_fill_is_an_fp32_output_of_torchs_quantiles():
    """t.cauchy_(median, sigma) as the program's output: fp32 values, each
    median + sigma tan(pi (u' - 1/2)) of a level midpoint u' (float64,
    rounded once), looked up by the level in a constant fp32 table (the
    only fp32 layers: the lookup and its view). Half fall below the
    median, half within one sigma of it, a tenth beyond
    sigma cot(pi / 20) on either side."""
    calibration = inputs(BIG, -3.0, 3.0)
    x = calibration[0][0]
    res = compile_model(Call(lambda x: torch.empty(BIG).cauchy_(1.0, 2.0)).eval(), [x], calibration)
    assert [f.split(": ")[-1] for f in res.lowered.fallbacks] == ["aten::embedding.out", "aten::view_copy.out"]
    prog = parse_program(res.data)
    y = np.stack([o[0] for o in host_runtime.run_stream(prog, res.data, [[x.numpy()]] * 16)])
    assert y.dtype == np.float32 and y.shape == (16,) + BIG
    mid = (np.arange(256) + 0.5) / 256.0
    assert set(np.unique(y)) <= set((1.0 + 2.0 * np.tan(np.pi * (mid - 0.5))).astype(np.float32))
    z, sigma = (y - 1.0) / 2.0, math.sqrt(0.25 / y.size)
    assert abs((z < 0).mean() - 0.5) < 5 * sigma
    assert abs((np.abs(z) < 1).mean() - 0.5) < 5 * sigma
    tail = 1 / math.tan(math.pi / 20)                       # P(z > tail) = 0.05
    assert abs((z > tail).mean() - 0.05) < 5 * math.sqrt(0.05 * 0.95 / y.size) + 1 / 256
    assert abs((z < -tail).mean() - 0.05) < 5 * math.sqrt(0.05 * 0.95 / y.size) + 1 / 256


def test_geometric_log_normal_and_bernoulli_fills():
    y, step, _ = _runs(lambda x: torch.empty(1, 16, 64).geometric_(0.3))
    k = np.round(y)
    assert np.abs(y - k).max() <= step and k.min() == 1
    assert abs(float((k == 1).mean()) - 0.3) < 5 * math.sqrt(0.21 / y.size) + 0.004
    assert abs(float((k == 2).mean()) - 0.21) < 5 * math.sqrt(0.21 * 0.79 / y.size) + 0.004
    assert abs(k.mean() - 1 / 0.3) < 0.15
    y, step, _ = _runs(lambda x: torch.empty(1, 16, 64).log_normal_(0.5, 0.4))
    assert y.min() > 0
    z = np.log(np.maximum(y, step))
    assert abs(z.mean() - 0.5) < 0.03 and abs(z.std() - 0.4) < 0.03
    y, _, _ = _runs(lambda x: torch.empty(1, 16, 64).bernoulli_(0.3))
    assert set(np.unique(y)) == {0.0, 1.0}
    assert abs(y.mean() - 0.3) < 5 * math.sqrt(0.21 / y.size) + 0.004
    y, _, x = _runs(lambda x: torch.empty(1, 16, 64).bernoulli_(torch.sigmoid(x)))
    p = torch.sigmoid(x).numpy()[None].repeat(len(y), 0)
    assert abs((y - p).sum()) < 5 * math.sqrt((p * (1 - p)).sum()) + 0.01 * y.size


@pytest.mark.parametrize("call, word", [
    (lambda x: x + torch.randint(0, 4, (1, 4, 8), dtype=torch.int16), "int16"),
    (lambda x: torch.poisson(x.abs() * 30000), "rates up to"),                # 8,192 parts of 8 at most
    (lambda x: x + torch.empty(1, 4, 8).geometric_(0.0), "geometric_"),
    (lambda x: x + torch.empty(1, 4, 8).cauchy_(), "fp32 program output only"),
    (lambda x: torch.empty(1, 4, 8).cauchy_(0.0, -1.0), "sigma > 0"),
])
def test_refused_in_one_line(call, word):
    calibration = inputs((1, 4, 8), -3.0, 3.0)
    with pytest.raises((CaptureError, CompileError, UnsupportedOperator)) as e:
        compile_model(Call(call).eval(), [calibration[0][0]], calibration)
    msg = str(e.value)
    assert "\n" not in msg and word in msg, msg


def test_wide_randint_exits_2_from_the_cli(tmp_path):
    from model_checks import cli_refusal
    line = cli_refusal(tmp_path, "import torch\n"
                          "class M(torch.nn.Module):\n"
                          "    def forward(self, x):\n"
                          "        return x + torch.randint(0, 4, (1, 4, 8), dtype=torch.int16)\n"
                          "def model():\n"
                          "    m = M()\n"
                          "    m.input_shape = (1, 4, 8)\n"
                          "    return m\n")
    assert "randint" in line and "int16" in line, line


STREAMED = {
    "randint": lambda x: torch.randint(-2, 5, (1, 4, 8)),
    "x + randint": lambda x: x + torch.randint(0, 3, (1, 4, 8)),
    "wide randint": lambda x: torch.randint(-9, 5000, (1, 4, 8)),
    "full-span randint": lambda x: torch.randint(-2 ** 63, 2 ** 63 - 1, (1, 4, 8)),
    "randint by rejection": lambda x: torch.randint(0, 3 * 10 ** 12, (1, 4, 8)),
    "poisson of rates above 256": lambda x: torch.poisson(x.abs() * 200),
    "randperm": lambda x: torch.randperm(8),
    "multinomial": lambda x: torch.multinomial(torch.softmax(x[0], -1), 3),
    "poisson": lambda x: torch.poisson(x.abs()),
    "poisson of large rates": lambda x: torch.poisson(x.abs() * 10),
    "geometric_": lambda x: torch.empty(1, 4, 8).geometric_(0.4),
    "cauchy_": lambda x: torch.empty(1, 4, 8).cauchy_(),
}


@pytest.mark.parametrize("name", sorted(STREAMED))
def test_host_bytes_equal_the_reference_over_executes(name):
    """The host runtime's draws are the reference interpreter's (the numpy
    PCG32 twin) execute after execute, on one loaded method."""
    from ptec.interpreter import Session
    calibration = inputs((1, 4, 8), -3.0, 3.0)
    x = calibration[0][0]
    res = compile_model(Call(STREAMED[name]).eval(), [x], calibration)
    prog = parse_program(res.data)
    session = Session(prog)
    seen = set()
    for (got,) in host_runtime.run_stream(prog, res.data, [[x.numpy()]] * 5):
        want = session.run([x.numpy()])[0]
        assert np.asarray(got).dtype == np.asarray(want).dtype
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
        seen.add(np.asarray(got).tobytes())
    assert len(seen) > 1                         # the stream advances


@pytest.mark.parametrize("name", ["multinomial", "x + randint", "wide randint", "cauchy_", "full-span randint",
                                  "randint by rejection", "poisson of rates above 256"])
def test_the_m55_streams_the_reference(name, tmp_path):
    from model_checks import board_streams_reference
    calibration = inputs((1, 4, 8), -3.0, 3.0)
    res = compile_model(Call(STREAMED[name]).eval(), [calibration[0][0]], calibration, target="cortex-m55")
    board_streams_reference(res.data, [c[0] for c in calibration[:3]], "cortex-m55", tmp_path, random=True)


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial_fails_the_execute_where_torch_raises(replacement):
    """A row of zero weights: torch raises at run time, and so does the
    execute (a checked embedding lookup whose id is out of range exactly
    then). Fewer positive weights than k without replacement: an error in
    torch's documentation (torch 1.13 and 2.x on the CPU return zero-weight
    positions instead, pytorch#50034), an error here. Other weights run, on
    the same loaded program, and never draw a zero weight."""
    good = torch.tensor([[0.5, 0.0, 0.3, 0.2], [0.1, 0.1, 0.0, 0.8]])
    fn = lambda w: torch.multinomial(w, 2, replacement)
    res = compile_model(Call(fn).eval(), [good], [[good], [good * 2]])
    prog = parse_program(res.data)
    two = torch.tensor([[0.0, 0.7, 0.0, 0.2], [0.0, 0.0, 0.4, 0.8]])       # exactly k positive weights
    for w in (good, two):
        torch.multinomial(w, 2, replacement)                # torch draws these
        for (picks,) in host_runtime.run_stream(prog, res.data, [[w.numpy()]] * 4):
            assert (w.numpy()[np.arange(2)[:, None], picks] > 0).all()
    bad = [torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.1, 0.1, 0.0, 0.8]])]
    if not replacement:
        bad.append(torch.tensor([[0.5, 0.0, 0.0, 0.0], [0.1, 0.1, 0.0, 0.8]]))
    with pytest.raises(RuntimeError, match="invalid multinomial"):
        torch.multinomial(bad[0], 2, replacement)
    for w in bad:
        with pytest.raises(host_runtime.RuntimeError_, match="outside the table"):
            host_runtime.run(prog, res.data, [w.numpy()])


@pytest.mark.parametrize("call", [
    lambda x, g: torch.rand(1, 4, 8, generator=g),
    lambda x, g: torch.randint(0, 1000, (1, 4, 8), generator=g).float(),
    lambda x, g: torch.poisson(x.abs(), g),                              # positional
    lambda x, g: x.new_empty(1, 4, 8).normal_(generator=g),              # a traced tensor's fill
    lambda x, g: torch.multinomial(torch.softmax(x[0], -1), 2, generator=g).float(),
])
def test_a_generator_argument_is_ignored_with_a_note(call):
    """ptec's draws follow torch's distribution, never a torch.Generator's
    stream (which no device reproduces, with or without one): generator= is
    dropped with one compile note per call, the user's generator is left as
    it was, and the draws change per execute."""
    g = torch.Generator().manual_seed(5)
    state = g.get_state().clone()
    calibration = inputs((1, 4, 8), -3.0, 3.0)
    x = calibration[0][0]
    lines = []
    res = compile_model(Call(lambda x: call(x, g)).eval(), [x], calibration, log=lines.append)
    notes = [s for s in lines if "generator= argument is ignored" in s]
    assert len(notes) == 1 and "draws random numbers on the device" in notes[0], lines
    assert torch.equal(g.get_state(), state)
    outs = host_runtime.run_stream(parse_program(res.data), res.data, [[x.numpy()]] * 4)
    assert len({np.asarray(o[0]).tobytes() for o in outs}) == 4
