"""torch.mode's index on rows of any length (issue 15): the kernel
aten::mode.values (src/kernels/portable/op_median_mode.c) and its reference
(python/ptec/reference/std_sort.py) run torch 1.13's CPU procedure: the
row's (value, position) pairs sorted by value alone with libstdc++'s
std::sort (introsort: median of three to the front, unguarded partition,
depth limit 2 floor(log2 n) then heapsort, ranges of 16 or less left to a
final insertion sort), then the last position of the first longest run of
equal values.

torch is the oracle, exact: indices and values bit for bit (fp32 path and
int64 inputs), indices exact and values within half an input step (int8
path, inputs on a grid whose codes keep order and ties). Rows of 17 to 200
elements with few distinct values (so long runs and many ties), NaN and
-0.0 / 0.0 in fp32; rows built against the sort (McIlroy's adversary,
then merged into ties) so that it reaches the heapsort. The host's bytes
equal the reference interpreter's."""
import math
import random

import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import exact_runs
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.reference import portable as P
from ptec.reference.std_sort import mode_position, sorted_positions

LENGTHS = [17, 23, 40, 64, 100, 200]


def _row(rng, n, kind):
    """A row of n values from a small pool: `f32` multiples of 0.5, `nan`
    those with NaNs, `zeros` with 0.0 and -0.0, `int` integers."""
    k = rng.choice([1, 2, 3, 4, 6, 10, 30, n])
    if kind == "int":
        pool = [rng.randint(-50, 50) for _ in range(k)]
    else:
        pool = [rng.randint(-8, 8) * 0.5 for _ in range(k)]
        pool += {"f32": [], "nan": [math.nan] * rng.randint(1, 3), "zeros": [0.0, -0.0, -0.0]}[kind]
    return [rng.choice(pool) for _ in range(n)]


def _same(a, b):
    """Bit-equal float32 values (NaN as NaN, -0.0 apart from 0.0)."""
    return np.asarray(a, np.float32).tobytes() == np.asarray(b, np.float32).tobytes()


def test_reference_is_torch_on_random_rows():
    """The reference's position and value equal torch.mode's on 1200 rows
    of 1 to 300 elements: fp32 (NaN, +-0), int8, int32, int64."""
    rng = random.Random(11)
    dtypes = {"f32": torch.float32, "nan": torch.float32, "zeros": torch.float32, "i8": torch.int8,
              "i32": torch.int32, "i64": torch.int64}
    longer = 0
    for trial in range(1200):
        kind = list(dtypes)[trial % len(dtypes)]
        n = rng.randint(1, 300)
        row = _row(rng, n, "int" if kind.startswith("i") else kind)
        t = torch.tensor(row, dtype=dtypes[kind])
        v, i = torch.mode(t, 0)
        got = mode_position(t.double().tolist())
        assert got == int(i), (kind, n)
        if kind.startswith("i"):
            assert t[got] == v
        else:
            assert _same(t[got], v)
        rv, ri = P.row_pick(t.numpy()[None], 1, False, "mode")
        assert int(ri[0]) == int(i) and rv.tobytes() == v.numpy().reshape(1).tobytes()
        if n > 16 and not math.isnan(float(v)):
            longer += got != max(j for j, x in enumerate(t.tolist()) if x == v)
    assert longer > 100          # many rows where torch's index is not the value's last position


def _adversary(n):
    """McIlroy's adversary against the reference's sort: values decided as
    the comparisons ask (a candidate pivot frozen to the next small value),
    giving a row of n distinct ranks that drives the introsort deep."""
    val = [None] * n
    state = {"solid": 0, "candidate": None}

    class Gas:
        def __init__(self, i):
            self.i = i

        def __lt__(self, other):
            a, b = self.i, other.i
            if val[a] is None and val[b] is None:
                val[a if a == state["candidate"] else b] = state["solid"]
                state["solid"] += 1
            if val[a] is None:
                state["candidate"] = a
            elif val[b] is None:
                state["candidate"] = b
            return (n if val[a] is None else val[a]) < (n if val[b] is None else val[b])

    sorted_positions([Gas(i) for i in range(n)])
    rest = iter(range(state["solid"], n))
    return [v if v is not None else next(rest) for v in val]


def _merged(ranks, rng, keep):
    """The ranks merged into ties: each boundary between consecutive ranks
    kept with probability keep."""
    level, table = 0, []
    for r in range(len(ranks)):
        level += r > 0 and rng.random() < keep
        table.append(level)
    return [table[r] for r in ranks]


def heap_rows(n, count, seed):
    """count rows of n whose sort reaches the heapsort and whose mode index
    the heapsort decides (another depth limit gives another index)."""
    rng = random.Random(seed)
    ranks, rows = _adversary(n), []
    for _ in range(200):
        row = [v * 0.5 - 4.0 for v in _merged(ranks, rng, rng.choice([0.7, 0.9, 0.97]))]
        if mode_position(row) != mode_position_deep(row):
            rows.append(row)
        if len(rows) == count:
            return rows
    raise AssertionError(f"no {count} heapsort rows of {n}")


def mode_position_deep(row):
    """The mode position with a depth limit the rows never reach (no heapsort)."""
    p = sorted_positions(row, depth_limit=64)
    best, best_count, count = 0, 0, 0
    for i in range(len(p)):
        count += 1
        if i == len(p) - 1 or row[p[i]] != row[p[i + 1]]:
            if count > best_count:
                best, best_count = p[i], count
            count = 0
    return best


def test_reference_is_torch_where_the_heapsort_decides():
    for n in (40, 77, 150, 300):
        for row in heap_rows(n, 4, n):
            v, i = torch.mode(torch.tensor(row), 0)
            assert mode_position(row) == int(i), n


class Raw(nn.Module):
    """torch.mode along the rows of the float program input (fp32 path)."""

    def forward(self, x):
        r = torch.mode(x, -1)
        return r[0], r[1]


class Clamped(nn.Module):
    """torch.mode along dim 1 of the input clamped in int8 (the codes moved)."""

    def forward(self, x):
        r = torch.mode(torch.clamp(x, -8.0, 8.0), 1)
        return r[0], r[1]


def _rows(n, count, seed, kinds=("f32", "nan", "zeros")):
    rng = random.Random(seed)
    return torch.tensor([_row(rng, n, kinds[r % len(kinds)]) for r in range(count)], dtype=torch.float32)


def _host(res, x, tmp_path):
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
    assert [a.tobytes() for a in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
    return got


@pytest.mark.parametrize("n", LENGTHS)
def test_fp32_rows(n, tmp_path):
    """fp32 path: values and indices torch's bit for bit, NaN and +-0 rows too."""
    calibration = [(_rows(n, 9, s, ("f32",)),) for s in range(4)]
    res = compile_model(Raw().eval(), [calibration[0][0]], calibration)
    assert not res.lowered.unsupported
    for seed in (10, 11, 12):
        x = _rows(n, 9, seed + n)
        got = _host(res, x, tmp_path)
        v, i = torch.mode(x, -1)
        assert np.array_equal(got[1], i.numpy()) and _same(got[0], v.numpy()), n


@pytest.mark.parametrize("n", [17, 40, 100, 200])
def test_int8_rows(n, tmp_path):
    """int8 path: inputs on multiples of 0.5 in [-4, 4] (distinct codes,
    same order and ties), indices torch's exactly, values within half an
    input step."""
    g = torch.Generator().manual_seed(n)
    calibration = [(torch.linspace(-8, 8, 6 * n).reshape(6, n)[torch.randperm(6)],)] + \
        [(torch.randint(-8, 9, (6, n), generator=g).float() * 0.5,) for _ in range(3)]
    res = compile_model(Clamped().eval(), [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    step = res.graph.node("x").qparams[0]
    for seed in (20, 21):
        x = _rows(n, 6, seed + n, ("f32",))
        got = _host(res, x, tmp_path)
        v, i = torch.mode(x, 1)
        assert np.array_equal(got[1], i.numpy()), n
        assert np.abs(got[0] - v.numpy()).max() <= 0.5 * step * 1.001, n


def test_fp32_heapsort_rows(tmp_path):
    """Rows where libstdc++'s depth limit hands a range to the heapsort and
    that decides the index: the kernel's index is torch's."""
    for n in (40, 150):
        x = torch.tensor(heap_rows(n, 6, n), dtype=torch.float32)
        res = compile_model(Raw().eval(), [x], [(x,)])
        got = _host(res, x, tmp_path)
        v, i = torch.mode(x, -1)
        assert np.array_equal(got[1], i.numpy()) and _same(got[0], v.numpy()), n


class Ints(nn.Module):
    def forward(self, i):
        a, b = torch.mode(i, -1)
        c, d = torch.mode(i.int(), 0, keepdim=True)
        return a, b, c, d


@pytest.mark.parametrize("n", [17, 60, 200])
def test_int64_rows(n, tmp_path):
    """int64 / int32 values (their dense ranks through the float kernel):
    torch's values and indices exactly, along rows of n and down 5 rows."""
    rng = random.Random(n)
    feeds = [(torch.tensor([_row(rng, n, "int") for _ in range(5)], dtype=torch.int64),) for _ in range(3)]
    feeds[1][0][2, : n // 2] = 2 ** 62 + 1               # beyond float's integers, ties with its own kind
    feeds[1][0][2, n // 2:] = 2 ** 62
    _, runs = exact_runs(Ints().eval(), feeds, tmp_path)
    for got, want in runs:
        for k, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.numpy().dtype and np.array_equal(g, w.numpy()), (n, k)
