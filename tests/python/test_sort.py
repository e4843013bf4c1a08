"""Ordering along a dim (issue 15): torch.sort / Tensor.sort, torch.topk /
Tensor.topk, torch.kthvalue, torch.median(x, dim) (values and indices),
torch.argsort and torch.msort run as aten::sort.values / topk.values. Each program's host bytes are the numpy
reference interpreter's; its values are the quantized input's own codes
reordered, so they equal torch's sort of the dequantized input exactly and
are within the input's rounding (half a step) of torch's float values; its
indices are torch's on rows whose int8 codes all differ (no ties after
rounding). The emulated boards print the reference
bytes."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.reference import portable as P


class Ordered(torch.nn.Module):
    """The input, clamped in int8 (on the input's grid), ordered along a dim
    by `order`: the codes sorted are the input's, so the test knows them."""

    def __init__(self, order):
        super().__init__()
        self.order = order

    def forward(self, x):
        return self.order(torch.clamp(x, -8.0, 8.0))


class Scores(torch.nn.Module):
    """A small model for the boards: linear scores, then `order`."""

    def __init__(self, order, features=12, outputs=12):
        super().__init__()
        torch.manual_seed(5)
        self.fc = torch.nn.Linear(features, outputs)
        self.order = order

    def forward(self, x):
        return self.order(self.fc(x))


def sort_unpacked(y):
    v, i = torch.sort(y, dim=0)
    return v


# name: (call, dim it orders along in the [3, 4, 12] scores, returns indices)
CALLS = {
    "torch.sort values": (lambda y: torch.sort(y, -1)[0], 2, False),
    "Tensor.sort descending indices": (lambda y: y.sort(1, descending=True)[1], 1, True),
    "sort unpacked": (sort_unpacked, 0, False),
    "torch.topk values": (lambda y: torch.topk(y, 4, -1).values, 2, False),
    "Tensor.topk smallest indices": (lambda y: y.topk(3, dim=1, largest=False)[1], 1, True),
    "topk unsorted": (lambda y: y.topk(5, sorted=False)[0], 2, False),
    "torch.argsort": (lambda y: torch.argsort(y, dim=-1, descending=True), 2, True),
    "Tensor.argsort": (lambda y: y.argsort(0), 0, True),
    "torch.msort": (lambda y: torch.msort(y), 0, False),
    "torch.kthvalue values": (lambda y: torch.kthvalue(y, 3, -1)[0], 2, False),
    "Tensor.kthvalue keepdim indices": (lambda y: y.kthvalue(2, 1, keepdim=True)[1], 1, True),
    "torch.median(dim) values": (lambda y: torch.median(y, 0).values, 0, False),
    "Tensor.median(dim) indices": (lambda y: y.median(-1)[1], 2, True),
}
SHAPE = (3, 4, 12)


def samples(n, seed, spread=2.0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(SHAPE, generator=g) * spread,) for _ in range(n)]


def compiled(call, model_class=Ordered):
    model = model_class(call).eval()
    calibration = samples(16, 0)
    return model, compile_model(model, [calibration[0][0]], calibration)


def _apart(scores: np.ndarray, dim: int, qparams) -> np.ndarray:
    """Rows (along dim) whose int8 codes all differ: rounding keeps their
    order (torch's), and no two are tied after it."""
    s, z = qparams
    codes = np.clip(np.round(scores / s) + z, -128, 127)
    return (np.diff(np.sort(codes, axis=dim), axis=dim) > 0).all(axis=dim, keepdims=True)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_order_matches_torch(name, tmp_path):
    call, dim, indices = CALLS[name]
    model, res = compiled(call)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    assert [o.dtype for o in res.lowered.outputs] == ["int64" if indices else "float32"]
    prog = parse_program(res.data)
    qparams = res.graph.node("x").qparams
    step = qparams[0]
    checked = 0
    # inside the calibrated range: no int8 code saturates
    for (x,) in samples(8, 1, spread=1.0):
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes()
        scores = x
        ref = call(x).numpy()
        assert got.shape == ref.shape
        if name == "topk unsorted":
            # torch's order is its own choice there; ptec's is sorted
            got, ref = np.sort(got, axis=dim), np.sort(ref, axis=dim)
        if not indices:
            # the values are the input's codes: within half a step of torch's (and a hair for the fp32 dequantize)
            assert np.abs(got - ref).max() <= 0.5 * step * 1.001 + 1e-6, name
            continue
        rows = _apart(scores.numpy(), dim, qparams)
        sure = np.broadcast_to(rows if got.ndim == rows.ndim else rows.squeeze(dim), got.shape)
        assert np.array_equal(got[sure], ref[sure]), name
        checked += int(sure.sum())
    assert indices is False or checked >= 20, checked        # enough tie-free rows to mean something


def test_values_are_the_dequantized_sort():
    """The values are exactly torch's sort of the input's own int8 codes
    (quantizing with a positive scale keeps the order)."""
    model, res = compiled(CALLS["torch.topk values"][0])
    prog = parse_program(res.data)
    s, z = res.graph.node("x").qparams
    assert tuple(res.graph.node(res.graph.outputs[0]).qparams) == (s, z)   # the input's grid
    for (x,) in samples(3, 2):
        with torch.no_grad():
            codes = torch.clamp(torch.round(x / s) + z, -128, 127)
        want = (torch.topk(codes, 4, -1).values - z) * s
        got = run_program(prog, [x.numpy()])[0]
        assert np.allclose(got, want.numpy(), rtol=0, atol=1e-6 * s)


def test_stable_ties_as_torchs_stable_sort(tmp_path):
    """Equal inputs (equal codes): the program keeps them in row order,
    which is torch.sort(stable=True)'s order, ascending and descending."""
    class Both(torch.nn.Module):
        def forward(self, x):
            return torch.sort(x, -1)[1], torch.sort(x, -1, descending=True)[1], x.topk(3).indices
    model = Both().eval()
    g = torch.Generator().manual_seed(4)
    calibration = [(torch.randn(2, 8, generator=g),) for _ in range(8)]
    res = compile_model(model, [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    x = torch.tensor([[0.5, 2.0, -1.0, 2.0, 0.0, -1.0, 1.0, 2.0],
                      [-2.0, 1.0, -2.0, 1.0, 0.3, 0.2, -2.0, 1.0]])
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
    assert [a.tobytes() for a in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
    assert got[0].tolist() == torch.sort(x, dim=-1, stable=True)[1].tolist()
    assert got[1].tolist() == torch.sort(x, dim=-1, descending=True, stable=True)[1].tolist()
    # topk's order of equals is torch's choice: ptec's is the stable sort's first k
    assert got[2].tolist() == torch.sort(x, dim=-1, descending=True, stable=True)[1][:, :3].tolist()


def test_reference_is_numpys_stable_sort():
    """The numpy reference against torch's stable sort, NaN included (the
    largest value) and int8 codes, and topk's values against torch's."""
    g = torch.Generator().manual_seed(9)
    x = torch.randn(3, 5, 7, generator=g)
    x[0, 1, 2] = x[1, 2, 3] = float("nan")
    x[2, 0, :3] = 1.5
    for dim in (0, 1, 2, -1):
        for desc in (False, True):
            v, i = P.ordered(x.numpy(), dim, desc, None)
            tv, ti = torch.sort(x, dim=dim, descending=desc, stable=True)
            assert np.array_equal(v, tv.numpy(), equal_nan=True) and np.array_equal(i, ti.numpy())
            tk = torch.topk(x, 2, dim, desc).values
            assert np.array_equal(P.ordered(x.numpy(), dim, desc, 2)[0], tk.numpy(), equal_nan=True)
    q = torch.randint(-128, 128, (4, 9), generator=g, dtype=torch.int8)
    v, i = P.ordered(q.numpy(), 1, True, None)
    tv, ti = torch.sort(q.long(), dim=1, descending=True, stable=True)
    assert v.dtype == np.int8 and np.array_equal(v, tv.numpy()) and np.array_equal(i, ti.numpy())


def test_index_into_later_layers(tmp_path):
    """`.float()` of sort indices feeds int8 layers; bytes as the reference."""
    class Next(torch.nn.Module):
        def forward(self, x):
            return x.topk(2, -1).values.sum(-1) + x.argsort(-1).float()[..., 0] * 0.25
    model = Next().eval()
    g = torch.Generator().manual_seed(6)
    calibration = [(torch.rand(1, 6, 10, generator=g) * 6 - 3,) for _ in range(8)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    prog = parse_program(res.data)
    for (x,) in calibration[:3]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()


def test_float_input_sorts_in_float(tmp_path):
    """A float32 program input sorted as it is (no int8 step before the
    sort): values and indices are exactly torch's on tie-free inputs."""
    res = compile_model(_Raw().eval(), [samples(1, 0)[0][0]], samples(8, 0))
    prog = parse_program(res.data)
    for (x,) in samples(3, 3):
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        assert [a.tobytes() for a in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
        v, i = torch.topk(x, 5, 2, largest=False)
        assert np.array_equal(got[0], v.numpy()) and np.array_equal(got[1], i.numpy())


class _Raw(torch.nn.Module):
    def forward(self, x):
        v, i = torch.topk(x, 5, 2, largest=False)
        return v, i


class ConvSort(torch.nn.Module):
    """Sorts over a 4-D channels-last conv output: over channels (dim 1)
    and along H (topk), and the lower median along W."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv = torch.nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        v, i = y.sort(1, descending=True)
        return v, i, y.topk(2, dim=2)[0], torch.median(y, 3)[0]


def test_channels_last_values(tmp_path):
    """4-D values are channels-last: each sort works on a contiguous copy
    and its results go back. Bytes as the reference; values within the
    conv's own rounding (1.5 steps) of torch's; indices torch's on rows
    whose float values are more than 4 steps apart (the conv's rounding
    cannot swap them)."""
    model = ConvSort().eval()
    g = torch.Generator().manual_seed(2)
    calibration = [(torch.randn(1, 3, 5, 4, generator=g),) for _ in range(8)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    prog = parse_program(res.data)
    step = res.graph.node("conv").qparams[0]
    checked = 0
    for (x,) in calibration[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        assert [a.tobytes() for a in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
        with torch.no_grad():
            y = model.conv(x).numpy()
            ref = [r.numpy() for r in model(x)]
        for k in (0, 2, 3):
            assert np.abs(got[k] - ref[k]).max() <= 1.5 * step, k
        apart = np.broadcast_to((np.diff(np.sort(y, axis=1), axis=1) > 4 * step).all(axis=1, keepdims=True), y.shape)
        assert np.array_equal(got[1][apart], ref[1][apart])
        checked += int(apart.sum())
    assert checked >= 24, checked


# the (values, indices) tuple returned whole is the program's two outputs: test_traced_tuples.py


def test_index_used_as_a_number_is_refused():
    class Sum(torch.nn.Module):
        def forward(self, x):
            # (argsort + 1 is integer arithmetic on an index value, which runs: capture_int_math, and so does
            # argsort * 0.5, torch's float copy: capture_int_promotion, and an int16 copy's .float():
            # capture_int_casts, and int16 arithmetic: capture_narrow_ints); an int16 shift by 40 does not
            return (x.argsort(-1).short() << 40).float()
    g = torch.Generator().manual_seed(4)
    calibration = [(torch.randn(2, 8, generator=g),) for _ in range(4)]
    with pytest.raises(Exception, match=r"^lowering failed: lshift \(operator\.lshift\): a shift of an int16 / uint8 / int8 value by 40[^\n]*$"):
        compile_model(Sum().eval(), [calibration[0][0]], calibration)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", ["torch.topk values", "Tensor.sort descending indices"])
def test_sort_on_boards(target, name, tmp_path):
    _, res = compiled(CALLS[name][0], Scores)
    for (x,) in samples(2, 7):
        board_matches_reference(res.data, x.numpy(), target, tmp_path)


NAN, INF = float("nan"), float("inf")


def nan_rows(seed):
    """fp32 [4, 5, 9] rows along every dim with NaNs at their first, middle
    and last positions, a row of NaNs only, rows without one, ties (equal
    numbers, 0.0 and -0.0) and infinities."""
    g = torch.Generator().manual_seed(seed)
    x = torch.round(torch.randn(4, 5, 9, generator=g) * 4) / 4
    x[torch.rand(x.shape, generator=g) < 0.25] = NAN
    x[0, 0, 0] = x[0, 0, 4] = x[0, 0, 8] = NAN
    x[1, 2, :] = NAN
    x[2, 3, :] = torch.arange(9.0)                  # no NaN, no tie
    x[3, 1, 1], x[3, 1, 5], x[3, 4, 2] = -0.0, 0.0, INF
    x[0, 1, 3], x[2, 0, 6] = -INF, NAN
    return x


def _same_values(got, want) -> bool:
    """Equal numbers (0.0 and -0.0 alike) and NaN where torch has NaN."""
    return got.shape == want.shape and np.array_equal(got, want, equal_nan=True)


def _untied(x: np.ndarray, picked: np.ndarray, dim: int) -> np.ndarray:
    """For each picked value (its row along dim, any count of them), whether
    it occurs once in x's row, NaNs counting as one value: there any correct
    index is the one."""
    xr, pr = np.moveaxis(x, dim, -1)[..., None, :], np.moveaxis(picked, dim, -1)[..., :, None]
    same = (xr == pr) | (np.isnan(xr) & np.isnan(pr))
    return np.moveaxis(same.sum(axis=-1) == 1, -1, dim)


# (k, dim, keepdim) of kthvalue over nan_rows' [4, 5, 9]: k before, at and
# after the NaNs (which sort last), the first and the last position
KTH = [(1, 2, False), (3, 2, True), (6, 2, False), (8, 2, True), (9, 2, False),
       (1, 1, True), (3, 1, False), (5, 1, True), (2, 0, False), (4, 0, True), (3, -1, True)]


class KthNaN(torch.nn.Module):
    """kthvalue of a float32 program input (sorted in fp32, NaN kept)."""

    def forward(self, x):
        out = []
        for k, dim, keepdim in KTH:
            v, i = torch.kthvalue(x, k, dim, keepdim)
            out += [v, i]
        return tuple(out)


def _fp32_program(model, tmp_path, seeds):
    g = torch.Generator().manual_seed(0)
    calibration = [(torch.randn(4, 5, 9, generator=g),) for _ in range(4)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    prog = parse_program(res.data)
    for seed in seeds:
        x = nan_rows(seed)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        assert [a.tobytes() for a in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
        yield x, got


def test_kthvalue_with_nan_as_torch(tmp_path):
    """kthvalue of fp32 rows holding NaNs: the values are torch's (NaN the
    largest value, so k past the row's numbers gives NaN); the indices are
    torch's wherever the k-th value occurs once in its row. Among equal
    values (several NaNs, equal numbers, 0.0 and -0.0) torch's CPU index is
    whichever its quickselect's partitioning leaves (its docs call the CUDA
    one nondeterministic); ptec's is the stable order's: the k-th of
    torch.sort(stable=True), which this checks on every row."""
    untied = tied = nan_picks = 0
    for x, got in _fp32_program(KthNaN().eval(), tmp_path, (1, 2, 3)):
        xs = x.numpy()
        for j, (k, dim, keepdim) in enumerate(KTH):
            v, i = got[2 * j], got[2 * j + 1]
            tv, ti = torch.kthvalue(x, k, dim, keepdim)
            assert _same_values(v, tv.numpy()) and i.dtype == np.int64, (k, dim, keepdim)
            stable = torch.sort(x, dim=dim, stable=True)[1].narrow(dim, k - 1, 1)
            assert np.array_equal(i, (stable if keepdim else stable.squeeze(dim)).numpy()), (k, dim, keepdim)
            kept = lambda a: a if keepdim else np.expand_dims(a, dim)     # noqa: E731
            once = _untied(xs, kept(v), dim)
            assert np.array_equal(kept(i)[once], kept(ti.numpy())[once]), (k, dim, keepdim)
            untied, tied = untied + int(once.sum()), tied + int((~once).sum())
            # a tied pick still points at an element equal to torch's
            at = np.take_along_axis(xs, kept(i), dim % 3)
            assert _same_values(at, np.take_along_axis(xs, kept(ti.numpy()), dim % 3))
            nan_picks += int(np.isnan(v).sum())
    # enough of each: picks torch fixes, ties, and k past a row's numbers
    assert untied >= 400 and tied >= 200 and nan_picks >= 200, (untied, tied, nan_picks)


class SortNaN(torch.nn.Module):
    """sort, topk (largest and smallest), argsort and msort of a float32
    program input holding NaNs."""

    def forward(self, x):
        v, i = torch.sort(x, 2)
        dv, di = x.sort(1, descending=True)
        tv, ti = torch.topk(x, 4, 2)
        sv, si = x.topk(3, 0, largest=False)
        return v, i, dv, di, tv, ti, sv, si, torch.argsort(x, -1, descending=True), torch.msort(x)


def test_sort_topk_argsort_msort_with_nan_as_torch(tmp_path):
    """NaN is the largest value in every call, as torch's: the values are
    torch's, NaN included; the indices are torch's wherever the element is
    the only one of its value in the row, and everywhere torch's stable
    sort's (its first k for topk: torch leaves the order of equals in topk
    and in its default sort to the implementation)."""
    def stable(x, dim, desc, k=None):
        i = torch.sort(x, dim=dim, descending=desc, stable=True)[1]
        return i if k is None else i.narrow(dim, 0, k)
    untied = 0
    for x, got in _fp32_program(SortNaN().eval(), tmp_path, (4, 5)):
        want = SortNaN()(x)
        calls = [(0, 2, False, None), (2, 1, True, None), (4, 2, True, 4), (6, 0, False, 3)]
        for j, dim, desc, k in calls:
            assert _same_values(got[j], want[j].numpy()), j
            assert np.array_equal(got[j + 1], stable(x, dim, desc, k).numpy()), j
            once = _untied(x.numpy(), got[j], dim)
            assert np.array_equal(got[j + 1][once], want[j + 1].numpy()[once]), j
            untied += int(once.sum())
            # differing indices only ever point at equal elements
            assert _same_values(np.take_along_axis(x.numpy(), got[j + 1], dim),
                                np.take_along_axis(x.numpy(), want[j + 1].numpy(), dim)), j
        assert np.array_equal(got[8], stable(x, -1, True).numpy())
        once = _untied(x.numpy(), np.take_along_axis(x.numpy(), got[8], -1), -1)
        assert np.array_equal(got[8][once], want[8].numpy()[once])
        assert _same_values(got[9], want[9].numpy())
    assert untied >= 500, untied


class KthNaNIndices(torch.nn.Module):
    def forward(self, x):
        return torch.kthvalue(x, 7, 2, keepdim=True)[1]


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_kthvalue_with_nan_on_boards(target, tmp_path):
    """fp32 rows with NaNs, k past most rows' numbers: the boards print the
    reference's indices."""
    g = torch.Generator().manual_seed(0)
    calibration = [(torch.randn(4, 5, 9, generator=g),) for _ in range(4)]
    res = compile_model(KthNaNIndices().eval(), [calibration[0][0]], calibration)
    board_matches_reference(res.data, nan_rows(6).numpy(), target, tmp_path)
