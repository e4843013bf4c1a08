"""torch.histc(x, bins) over x's own range (min == max, torch's default)
(ptec.capture_fp32_histc, issue 15). Oracle: torch.histc on the values the
program's steps read (the float input, or an int8 value dequantized on its
compiled grid); the counts come out on an int8 grid: within half an output
step, and rounded they must equal torch's counts exactly."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.pte import parse_program
from model_checks import Call
from test_function_coverage import inputs


def _compile(fn, shape=(1, 4, 8), lo=-3.0, hi=3.0):
    calibration = inputs(shape, lo, hi)
    return calibration, compile_model(Call(fn).eval(), [calibration[0][0]], calibration)


def _run(res, x, tmp_path):
    return np.asarray(host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0],
                      np.float64)


def _on_grid(t, qparams):
    s, z = float(qparams[0]), int(qparams[1])
    q = torch.clamp(torch.round(t.double() / s) + z, -128, 127)
    return (q - z).float() * torch.tensor(s, dtype=torch.float32)


def _edge_case(bins, numel, lo, hi, seed):
    """A random x of numel float32 values whose own maximum torch 1.13 does
    not count (its linspace's last edge a float32 step below it: bins + 1 a
    multiple of 16), else None after some tries."""
    g = torch.Generator().manual_seed(seed)
    for _ in range(400):
        x = torch.rand(numel, generator=g) * (hi - lo) + lo
        if torch.histc(x, bins).sum() < numel:
            return x
    return None


# bins 1..70 (15, 31, 47, 63: bins + 1 a multiple of 16) and around 256 and 4,096 (the old chunked steps' sizes)
OWN_RANGE_BINS = list(range(1, 71)) + [255, 256, 4095, 4096]


@pytest.mark.parametrize("bins", OWN_RANGE_BINS)
def test_counts_are_torchs_exactly(bins, tmp_path):
    """Every histc over x's own range is one aten::histc.out: its float32
    counts equal torch's exactly on random float inputs, and where torch's
    last edge falls a step below the maximum (the maximum not counted by
    torch; the chunked steps this replaced counted it) on inputs found so."""
    fn = lambda x: torch.histc(x, bins)          # noqa: E731
    shape = (1, 4, 8)
    calibration, res = _compile(fn, shape=shape)
    assert res.lowered.fallbacks == ["histc (torch.histc): aten::histc.out"], res.lowered.fallbacks
    assert len(res.data) < 2000                  # the program does not grow with the bins
    g = torch.Generator().manual_seed(bins)
    xs = [c[0] for c in calibration[:3]] + [torch.randn(shape, generator=g) * 40,
                                            torch.randint(-30, 31, shape, generator=g).float() / 10,
                                            torch.full(shape, 0.75)]
    edge = 0
    if (bins + 1) % 16 == 0:
        for seed, (lo, hi) in enumerate([(-3.0, 3.0), (0.0, 1.0), (-1000.0, 7.0), (2.5, 2.75)] * 2):
            x = _edge_case(bins, 32, lo, hi, 1000 * bins + seed)
            if x is not None:
                xs.append(x.reshape(shape))
                edge += 1
        assert edge >= 2, edge               # the case the chunked steps got wrong, tested
    for x in xs:
        got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = fn(x).numpy()
        assert got.dtype == np.float32 and got.shape == want.shape and (got == want).all(), (x, got, want)
        assert got.sum() <= x.numel()
        if (bins + 1) % 16:                  # (else torch's last edge may fall a step below the maximum)
            assert got.sum() == x.numel()
            assert got[-1] >= 1 or x.min() == x.max()    # the maximum in the last bin (unless widened by one)


def test_after_an_int8_step(tmp_path):
    """tanh (an int8 LUT) then histc: torch's bins of the tanh's values as the program holds them."""
    fn = lambda x: torch.histc(torch.tanh(x), 6)          # noqa: E731
    calibration, res = _compile(fn)
    xg = res.graph.node(res.graph.inputs[0]).qparams
    tg = next(n for n in res.graph.nodes if n.op == "tanh").qparams
    for (x,) in calibration[:4]:
        got = _run(res, x, tmp_path)
        want = torch.histc(_on_grid(torch.tanh(_on_grid(x, xg)), tg), 6).numpy()
        assert (np.round(got) == want).all(), (got, want)


def test_an_equal_range_is_widened_by_one_as_torch(tmp_path):
    """All elements equal: torch takes [v - 1, v + 1]; every element lands in the middle bin."""
    fn = lambda x: torch.histc(x, 4)          # noqa: E731
    _, res = _compile(fn)
    x = torch.full((1, 4, 8), 0.75)
    got, want = _run(res, x, tmp_path), fn(x).numpy()
    assert want[2] == 32 and (np.round(got) == want).all(), (got, want)


@pytest.mark.parametrize("shape, bins", [((1, 16, 16), 4), ((1, 40, 32), 100), ((2, 30, 17), 7), ((1, 40, 32), 700)])
def test_many_elements_counted_exactly(shape, bins, tmp_path):
    """256 to 1,280 elements (an int8 count grid held at most 254): the
    memberships counted in int64, then float32: torch's counts exactly,
    with ties (values on a grid of tenths, many at a bin's edge)."""
    fn = lambda x: torch.histc(x, bins)          # noqa: E731
    calibration, res = _compile(fn, shape=shape)
    g = torch.Generator().manual_seed(bins)
    xs = [c[0] for c in calibration[:2]] + [torch.randint(-30, 31, shape, generator=g).float() / 10]
    for x in xs:                  # the fp32 steps read the float input as it is
        got, want = _run(res, x, tmp_path), torch.histc(x, bins).numpy()
        assert got.dtype == np.float64 and (got == want).all(), (got, want)
        assert got.sum() == x.numel()


def test_a_selection_stays_refused_in_one_line():
    """histc of x[x > 0] (a length that depends on the values) is refused naming the call (many bins too)."""
    from ptec.ir import UnsupportedOperator
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        _compile(lambda x: torch.histc(x[x > 0], 5000))
    assert "\n" not in str(e.value) and "histc (torch.histc)" in str(e.value), str(e.value)


# Many bins: aten::histc.out in one step whatever the bins, exact against torch on the float input the
# program reads as it is
@pytest.mark.parametrize("bins", [4097, 4111, 5000, 65536])     # 4111: bins + 1 a multiple of 16
def test_many_bins_on_the_kernel(bins, tmp_path):
    fn = lambda x: torch.histc(x, bins)          # noqa: E731
    calibration, res = _compile(fn, shape=(1, 40, 32))
    assert res.lowered.fallbacks == ["histc (torch.histc): aten::histc.out"], res.lowered.fallbacks
    assert len(res.data) < 2000                  # the program does not grow with the bins
    g = torch.Generator().manual_seed(bins)
    xs = [c[0] for c in calibration[:2]] + [torch.randint(-30, 31, (1, 40, 32), generator=g).float() / 10,
                                            torch.full((1, 40, 32), -0.25)]
    xs[-1][0, 0, :5] = torch.tensor([1e-40, -1e-40, 0.0, -0.0, 3.0e-39])    # denormals and zeros
    for x in xs:
        got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = fn(x).numpy()
        assert got.dtype == np.float32 and got.shape == want.shape and (got == want).all()
        if (bins + 1) % 16:          # (else torch's last edge may fall a step below the maximum: not counted)
            assert got.sum() == x.numel() and got[-1] >= 1          # the maximum in the last bin


def test_kernel_fails_the_run_on_a_non_finite_own_range(tmp_path):
    """NaN or inf in the float input: torch raises ("range of [nan, nan] is
    not finite"), the program's run fails (no made-up counts)."""
    fn = lambda x: torch.histc(x, 5000)          # noqa: E731
    _, res = _compile(fn)
    for bad in (float("nan"), float("inf")):
        x = torch.zeros(1, 4, 8)
        x[0, 1, 2] = bad
        with pytest.raises(RuntimeError, match="not finite"):
            fn(x)
        with pytest.raises(Exception):
            host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))


def _histc_program(shape, bins, lo, hi):
    from ptec.pte import ScalarType
    from ptec.pte.program_builder import ProgramBuilder
    b = ProgramBuilder()
    x, out = b.tensor(ScalarType.FLOAT, list(shape)), b.tensor(ScalarType.FLOAT, [bins])
    b.call("aten::histc.out", self=x, bins=bins, min=lo, max=hi, out=out)
    b.set_io([x], [out])
    return b.build()


def _kernel(x, bins, lo, hi, tmp_path):
    from ptec.pte.writer import serialize_program
    program = _histc_program(x.shape, bins, lo, hi)
    data = serialize_program(program)
    return host_runtime.run(parse_program(data), data, [np.asarray(x, np.float32)], workdir=str(tmp_path))[0]


KERNEL_CASES = {
    # torch's order of the steps: a tenth on [-3, 3] in 100 bins lands where (x - lo) * bins / w would not
    "tenths on [-3, 3], 100 bins": (np.arange(-30, 31, dtype=np.float32) / np.float32(10), 100, -3.0, 3.0),
    # a given range: values outside it and infinities dropped, max itself in the last bin, a NaN in bin 0
    # (torch 1.13 on 64-bit CPUs: its cast of NaN)
    "given range drops outside and inf, NaN in bin 0": (np.array([-2, -1, -0.5, 0, 0.999, 1, 1.5, np.nan, np.inf, -np.inf],
                                                     np.float32), 8, -1.0, 1.0),
    "own range, one value": (np.full(7, 2.5, np.float32), 5, 0.0, 0.0),
    "own range given min == max != 0": (np.array([3, 1, 2], np.float32), 4, 7.0, 7.0),
    "one bin": (np.array([-1, 0, 5], np.float32), 1, 0.0, 0.0),
    "huge and tiny values": (np.array([1.6e38, 1.4e38, -1.5e38, 1e-45, 0], np.float32), 9, -1.5e38, 1.5e38),
    "random normal, 5000 bins": (np.random.default_rng(3).normal(size=3000).astype(np.float32), 5000, 0.0, 0.0),
    "random given range, 4097 bins": (np.random.default_rng(4).uniform(-2, 2, 2000).astype(np.float32), 4097,
                                      -1.5, 1.25),
    # bins + 1 a multiple of 16: torch's last edge is its vectorized linspace's, a step off hi here
    "last edge of linspace, 175 bins": (np.array([-1.4305534, -0.073265314, -0.07326531, -0.0732653, -0.5],
                                                 np.float32), 175, -1.4305534, -0.073265314),
}


def test_reference_is_torch_on_random_ranges_and_edges():
    """Random ranges (given and the values' own) and bins (those with bins + 1 a multiple of 16 among them),
    the values on and next to every edge of torch's linspace: torch's counts."""
    from ptec.reference import portable as P
    rng = np.random.default_rng(0)
    for t in range(400):
        bins = int(rng.integers(1, 300)) if t % 4 else 16 * int(rng.integers(1, 400)) - 1
        lo = float(np.float32(rng.uniform(-5, 5)))
        hi = float(np.float32(lo + rng.uniform(0.01, 10)))
        edges = torch.linspace(lo, hi, bins + 1).numpy()
        x = np.concatenate([edges, np.nextafter(edges, np.float32(np.inf)), np.nextafter(edges, np.float32(-np.inf)),
                            rng.uniform(lo, hi, 50).astype(np.float32)]).astype(np.float32)
        rng_lo, rng_hi = (lo, hi) if t % 2 else (0.0, 0.0)
        want = torch.histc(torch.from_numpy(x), bins, rng_lo, rng_hi).numpy()
        assert (P.histc(x, bins, rng_lo, rng_hi) == want).all(), (bins, lo, hi, rng_lo)


@pytest.mark.parametrize("name", sorted(KERNEL_CASES))
def test_kernel_and_reference_are_torch(name, tmp_path):
    from ptec.reference import portable as P
    x, bins, lo, hi = KERNEL_CASES[name]
    want = torch.histc(torch.from_numpy(x), bins, lo, hi).numpy()
    ref = P.histc(x, bins, lo, hi)
    got = _kernel(x, bins, lo, hi, tmp_path)
    assert ref.dtype == got.dtype == want.dtype == np.float32
    assert (ref == want).all() and (got == want).all(), (got, want)


def test_empty_input_counts_nothing(tmp_path):
    got = _kernel(np.zeros((0, 3), np.float32), 6, 0.0, 0.0, tmp_path)
    assert (got == torch.histc(torch.zeros(0, 3), 6).numpy()).all() and got.sum() == 0


# A given [min, max]: torch's edges are linspace(min, max, bins + 1) too, its last a float32 step off max
# for some ranges when bins + 1 is a multiple of 16 (max itself then not counted)
def _dropping_ranges(bins, values, want=3):
    """(lo, hi) pairs of the given float32 values (lo < hi) where torch's histc drops hi itself."""
    found = []
    for i, lo in enumerate(values):
        for hi in values[i + 1:]:
            if torch.histc(torch.tensor([hi]), bins, float(lo), float(hi)).sum() == 0:
                found.append((float(lo), float(hi)))
                if len(found) == want:
                    return found
    return found


@pytest.mark.parametrize("bins", [15, 31, 47, 63])
def test_given_range_on_the_int8_grid_drops_max_as_torch(bins, tmp_path):
    """Up to 254 elements (LUTs of membership on the input's int8 grid): a
    range whose max is a grid value torch does not count (its last edge a
    step below): the program does not count it either (the LUTs took max
    itself as the last edge before)."""
    shape = (1, 4, 8)
    calibration = inputs(shape, -3.0, 3.0)
    probe = compile_model(Call(lambda x: torch.histc(x, bins, -1.0, 1.0)).eval(), [calibration[0][0]], calibration)
    s, z = probe.graph.node(probe.graph.inputs[0]).qparams
    grid = sorted(set(_on_grid(torch.linspace(-3.0, 3.0, 2001), (s, z)).tolist()))     # float32 grid values
    ranges = _dropping_ranges(bins, [v for v in grid if -2.5 < v < 2.5][::3])
    assert ranges, bins
    for lo, hi in ranges[:2]:
        fn = lambda x: torch.histc(x, bins, lo, hi)          # noqa: E731
        res = compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
        assert not res.lowered.fallbacks and res.graph.node(res.graph.inputs[0]).qparams == (s, z)
        xg = (s, z)
        x = calibration[1][0].clone()
        x[0, 0, :3] = torch.tensor([hi, hi, lo])          # (grid values: no rounding tie on the way in)
        got = _run(res, x, tmp_path)
        want = torch.histc(_on_grid(x, xg), bins, lo, hi).numpy()
        assert want.sum() <= x.numel() - 2                  # torch drops hi (twice here)
        so, zo = res.graph.node(res.graph.outputs[0]).qparams
        top = np.floor((127 - zo) * so + 0.5)               # the output grid's largest count (calibrated)
        assert (np.round(got) == np.minimum(want, top)).all(), (lo, hi, got, want)


@pytest.mark.parametrize("bins", list(range(1, 71)) + [255, 256, 4095, 4096])
def test_given_range_of_many_elements_on_the_kernel(bins, tmp_path):
    """More than 254 elements with a given range: one aten::histc.out on the
    float input, torch's counts exactly, max itself in the input (dropped
    by torch for some ranges when bins + 1 is a multiple of 16)."""
    shape = (1, 40, 32)
    g = torch.Generator().manual_seed(bins)
    cands = sorted(set((torch.rand(200, generator=g) * 4 - 2).tolist()))
    ranges = _dropping_ranges(bins, cands, want=2) if (bins + 1) % 16 == 0 else []
    if (bins + 1) % 16 == 0:
        assert ranges, bins
    for lo, hi in ranges + [(-1.5, 1.25)]:
        fn = lambda x: torch.histc(x, bins, lo, hi)          # noqa: E731
        calibration, res = _compile(fn, shape=shape)
        assert res.lowered.fallbacks == ["histc (torch.histc): aten::histc.out"], res.lowered.fallbacks
        assert len(res.data) < 2000
        xs = [calibration[0][0].clone(), torch.randn(shape, generator=g)]
        for x in xs:
            x.view(-1)[:6] = torch.tensor([hi, hi, lo, np.nextafter(np.float32(hi), np.float32(9)),
                                           np.nextafter(np.float32(lo), np.float32(-9)), (lo + hi) / 2])
            got = _run(res, x, tmp_path).astype(np.float32)
            want = fn(x).numpy()
            assert (got == want).all(), (lo, hi, got, want)


def test_reference_last_edge_is_torchs():
    """P.histc's last edge (op_histc.c's last_edge: the base by one fused
    multiply-add) is torch's linspace's on many random ranges with bins + 1
    a multiple of 16 (two roundings differed for about one range in 500)."""
    from ptec.reference import portable as P
    rng = np.random.default_rng(7)
    for t in range(3000):
        bins = 16 * int(rng.integers(1, 300)) - 1
        lo, hi = sorted(rng.uniform(-10, 10, 2) * 10.0 ** int(rng.integers(-20, 20)))
        lo, hi = float(np.float32(lo)), float(np.float32(hi))
        if not lo < hi:
            continue
        e = torch.linspace(lo, hi, bins + 1)
        x = torch.cat([e[-2:], torch.tensor([hi]), torch.nextafter(e[-1:], torch.tensor([np.inf]))]).numpy()
        assert (P.histc(x, bins, lo, hi) == torch.histc(torch.from_numpy(x), bins, lo, hi).numpy()).all(), (bins, lo, hi)
