"""torch.mode / cummax / cummin of integer values (issue 15,
backends/cortex_m/lowering_int_rules.py): int64 and int32 values of the
program, and int16 / uint8 / int8 ones (their int64 copy, cast back).

Oracle: torch 1.13 on the program's own integers, exact (0 steps) in
torch's dtype, on rows with ties, negative values, all-equal rows and
values beyond float32's and float64's exact integers (2^24 + 1, 2^53 + 1,
the int64 extremes: a float copy would tie them). The host runtime's bytes
equal the numpy reference interpreter's. Indices: cummax / cummin's are
torch's own (the last position of the running extreme); mode's are torch's
on any row length: the kernel runs torch's procedure (libstdc++'s std::sort
of the row's positions by value, the last position of the first longest run
of equal values), on the rows' dense ranks, which order and tie as the
integers do."""
import numpy as np
import torch

from model_checks import exact_runs

BIG = [2 ** 53 + 1, 2 ** 53, 2 ** 24 + 1, 2 ** 24, -2 ** 63, 2 ** 63 - 1, -(2 ** 53) - 1, -(2 ** 53)]




class Rules(torch.nn.Module):
    """mode / cummax / cummin of an int64 input i [3, 4, 12], its int32 copy,
    narrow casts, and integers computed from a float input x [3, 4, 12]."""

    def forward(self, x, i):
        # x4, x3: the program's integers of the float input (the oracle is given them: body)
        return self.body(i, (x * 4).long(), x.long() % 3)

    def body(self, i, x4, x3):
        k = (i - 2).int()
        m, mi = torch.mode(i, -1)
        n, ni = torch.mode(k, 1, keepdim=True)
        a, ai = torch.cummax(i, 2)
        b, bi = torch.cummin(k, 0)
        c, ci = torch.cummax(x4, dim=2)
        d, di = torch.mode(x3, dim=-1)
        e, ei = torch.cummin(i.short() * 300, -1)
        f, fi = torch.mode(i.byte(), 0)
        g, gi = i.char().cummax(1)
        return (m, mi, n, ni, a, ai, b, bi, c, ci, d, di, e, ei, f, fi, g, gi, a - m.unsqueeze(-1), i.mode(0)[1], x4, x3)


def _feeds(count, seed, hi=4):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(3, 4, 12, generator=g), torch.randint(-hi, hi, (3, 4, 12), generator=g))
            for _ in range(count)]


def test_rules_of_integers_are_torchs(tmp_path):
    feeds = _feeds(6, 1)
    feeds[1][1][0, 1] = 7                                          # an all-equal row
    feeds[2][1][1, 2, :8] = torch.tensor(BIG)                      # beyond float64's integers
    feeds[3][1][2, 3, :8] = torch.tensor(BIG[::-1])
    feeds[4][1][:, 0, :] = feeds[4][1][:, 0, :1]                    # all-equal rows along dim 0 and 2
    res, runs = exact_runs(Rules().eval(), feeds, tmp_path)
    assert [o.dtype for o in res.lowered.outputs][:4] == ["int64", "int64", "int32", "int64"]
    varied = {}
    for (got, _), (x, i) in zip(runs, feeds):
        with torch.no_grad():
            want = Rules().body(i, torch.from_numpy(got[-2].copy()), torch.from_numpy(got[-1].copy()))
        for at, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.numpy().dtype, (at, g.dtype, w.dtype)
            assert g.shape == tuple(w.shape), at
            assert np.array_equal(g, w.numpy()), (at, g, w)                       # 0 steps
            varied.setdefault(at, set()).add(np.asarray(g).tobytes())
    assert all(len(v) >= 3 for v in varied.values()), sorted((len(v), k) for k, v in varied.items())
    # the big values: 2^53 + 1 above 2^53 (a float copy ties them)
    a = runs[2][0][4][1, 2]
    assert a[0] == 2 ** 53 + 1 and a[5] == 2 ** 63 - 1 and runs[2][0][5][1, 2, 1] == 0


class Long(torch.nn.Module):
    def forward(self, i):
        return (*torch.mode(i, -1), *torch.cummax(i, -1), *torch.cummin(i.int(), 0))


def test_long_rows(tmp_path):
    # rows of 40 elements (past std::sort's insertion sort of 16): every output torch's, mode's index too
    g = torch.Generator().manual_seed(5)
    feeds = [(torch.randint(-3, 3, (6, 40), generator=g),) for _ in range(3)]
    feeds[0][0][2] = -9
    _, runs = exact_runs(Long().eval(), feeds, tmp_path)
    for (got, want), (i,) in zip(runs, feeds):
        for at in range(6):
            assert np.array_equal(got[at], want[at].numpy()), at


class ZeroD(torch.nn.Module):
    def forward(self, i):
        s = i.sum()
        return (*torch.mode(s), *torch.cummax(s, 0), *torch.mode(i[:, :1], 1), *torch.cummin(i[:, :1], -1))


def test_one_element_rows(tmp_path):
    g = torch.Generator().manual_seed(2)
    feeds = [(torch.randint(-9, 9, (5, 3), generator=g),) for _ in range(3)]
    _, runs = exact_runs(ZeroD().eval(), feeds, tmp_path)
    for got, want in runs:
        for at, (g_, w) in enumerate(zip(got, want)):
            assert g_.dtype == w.numpy().dtype and g_.shape == tuple(w.shape) and np.array_equal(g_, w.numpy()), at
