"""aten::minimum.out / maximum.out (upstream operators) and aten::fmin.out /
fmax.out (ptec only): src/kernels/portable/op_minimum_maximum.c, bool,
uint8, int8/16/32/64 and float32, broadcast, one dtype on both sides.

torch 1.13 is the oracle, bit for bit (these are exact operations):
minimum / maximum give NaN where either operand is NaN, fmin / fmax the
other operand (NaN only where both are); every NaN is written as the quiet
NaN 0x7FC00000 (torch's vectorized loop writes 0xFFFFFFFF, its scalar loop
0x7FC00000: torch promises no NaN bits). A -0.0 / +0.0 tie gives self, as
torch's scalar loop (fmin / fmax everywhere; minimum / maximum on tensors
of fewer than 16 floats here: torch's vectorized minimum / maximum gives
other's zero in whole blocks of 16, measured below). The C runtime writes
the numpy reference's bytes (ptec.reference.portable.extreme), including
broadcast and channels-last layouts. fp32 minimum / maximum nodes (torch.minimum,
torch.max(a, b), ...) and fmin / fmax of a bit-level fp32 result lower to
these kernels (nms has its own kernel, ptec::nms.out: test_nms_kernel.py)."""
import numpy as np
import pytest
import torch

from model_checks import Call
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ops import all_kernels_def
from ptec.pte import ScalarType, parse_program, serialize_program
from ptec.pte.program_builder import ProgramBuilder
from ptec.pte.upstream_rules import RULES
from ptec.reference import portable as P

OPS = {"minimum": torch.minimum, "maximum": torch.maximum, "fmin": torch.fmin, "fmax": torch.fmax}
DTYPES = {np.bool_: ScalarType.BOOL, np.uint8: ScalarType.BYTE, np.int8: ScalarType.CHAR,
          np.int16: ScalarType.SHORT, np.int32: ScalarType.INT, np.int64: ScalarType.LONG,
          np.float32: ScalarType.FLOAT}
U = np.uint32
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 1e-45, -1e-45, 3.4028235e38, -3.4028235e38,
                    np.inf, -np.inf, np.nan, -np.nan], np.float32)


def bits(a):
    return np.ascontiguousarray(a, np.float32).view(U)


def same(got, want) -> bool:
    """Bit for bit, except that any NaN of torch's is the quiet NaN 0x7FC00000."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype != np.float32:
        return np.array_equal(got, want)
    nan = np.isnan(want)
    return np.array_equal(np.isnan(got), nan) and np.array_equal(bits(got)[~nan], bits(want)[~nan]) \
        and bool(np.all(bits(got)[nan] == 0x7FC00000))


def torch_of(fn, a, b):
    return OPS[fn](torch.from_numpy(np.asarray(a)), torch.from_numpy(np.asarray(b))).numpy()


def pairs(v):
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.reshape(-1), b.reshape(-1)


def random_floats(n, seed):
    rng = np.random.default_rng(seed)
    v = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(np.float32)
    v[rng.random(n) < 0.05] = np.nan
    v[rng.random(n) < 0.02] = np.inf
    v[rng.random(n) < 0.02] = -np.inf
    v[rng.random(n) < 0.05] = v[0]            # equal pairs
    return v


def program(key, a_shape, b_shape, out_shape, st=ScalarType.FLOAT, orders=(None, None, None)):
    b = ProgramBuilder()
    x = b.tensor(st, a_shape, orders[0]) if orders[0] else b.tensor(st, a_shape)
    y = b.tensor(st, b_shape, orders[1]) if orders[1] else b.tensor(st, b_shape)
    out = b.tensor(st, out_shape, orders[2]) if orders[2] else b.tensor(st, out_shape)
    b.call(key, self=x, other=y, out=out)
    b.set_io([x, y], [out])
    return b.build()


def run_c(prog, inputs, tmp_path):
    got = host_runtime.run(prog, serialize_program(prog), inputs, workdir=str(tmp_path))[0]
    ref = run_program(prog, inputs)[0]
    assert got.tobytes() == np.ascontiguousarray(ref).tobytes()       # the C writes the reference's bytes
    return got


def test_torch_ties_measured():
    """Why self is kept on a -0 / +0 tie: torch 1.13's scalar loop keeps
    self (fmin / fmax everywhere, minimum / maximum on few elements), its
    vectorized minimum / maximum takes other's zero; torch's own sign
    depends on the size."""
    z, nz = torch.zeros(20), -torch.zeros(20)
    for f in (torch.fmin, torch.fmax):
        assert not torch.signbit(f(z, nz)).any() and torch.signbit(f(nz, z)).all()
    for f in (torch.minimum, torch.maximum):
        assert not torch.signbit(f(z[:7], nz[:7])).any()                  # scalar: self
        assert torch.signbit(f(z, nz)[:16]).all()                         # vectorized: other


@pytest.mark.parametrize("fn", sorted(OPS))
def test_reference_is_torch_on_special_pairs(fn):
    """Every pair of zeros, subnormals, FLT_MAX, infinities and NaNs, one
    pair per call (torch's scalar loop, whose tie rule ptec keeps)."""
    a, b = pairs(SPECIAL)
    want = np.concatenate([torch_of(fn, a[i:i + 1], b[i:i + 1]) for i in range(a.size)])
    assert same(P.extreme(fn, a, b), want)


@pytest.mark.parametrize("fn", sorted(OPS))
def test_c_is_torch_on_special_pairs(fn, tmp_path):
    a, b = pairs(SPECIAL)
    want = np.concatenate([torch_of(fn, a[i:i + 1], b[i:i + 1]) for i in range(a.size)])
    got = run_c(program(f"aten::{fn}.out", [a.size], [b.size], [a.size]), [a, b], tmp_path)
    assert same(got, want)


@pytest.mark.parametrize("fn", sorted(OPS))
def test_c_is_torch_on_random_values(fn, tmp_path):
    """5000 pairs with NaNs, infinities and ties; torch's vectorized result
    differs from the scalar one only in the sign of a zero tie, of which
    these values have none (0 is never drawn)."""
    a, b = random_floats(5000, 1), random_floats(5000, 2)
    assert not np.any((a == 0) & (b == 0))
    got = run_c(program(f"aten::{fn}.out", [a.size], [b.size], [a.size]), [a, b], tmp_path)
    assert same(got, torch_of(fn, a, b))
    assert np.isnan(got).any() and (np.isnan(a) & ~np.isnan(b)).any()


@pytest.mark.parametrize("fn", sorted(OPS))
def test_c_broadcasts_as_torch(fn, tmp_path):
    a = random_floats(2 * 3 * 4, 3).reshape(2, 1, 3, 4)
    b = random_floats(5 * 4, 4).reshape(5, 1, 4)
    got = run_c(program(f"aten::{fn}.out", [2, 1, 3, 4], [5, 1, 4], [2, 5, 3, 4]), [a, b], tmp_path)
    assert same(got, torch_of(fn, a, b))


def test_c_channels_last_and_scalar_other(tmp_path):
    """self and out channels-last, other one element: the walk reads each
    through its own dim order."""
    a = random_floats(2 * 3 * 4 * 5, 5).reshape(2, 3, 4, 5)
    b = np.array([[[[0.25]]]], np.float32)
    prog = program("aten::maximum.out", [2, 3, 4, 5], [1, 1, 1, 1], [2, 3, 4, 5],
                   orders=([0, 2, 3, 1], None, [0, 2, 3, 1]))
    assert same(run_c(prog, [a, b], tmp_path), torch_of("maximum", a, b))


INT_RANGES = {np.uint8: (0, 256), np.int8: (-128, 128), np.int16: (-2 ** 15, 2 ** 15),
              np.int32: (-2 ** 31, 2 ** 31), np.int64: (-2 ** 63, 2 ** 63 - 1)}


@pytest.mark.parametrize("dtype", list(INT_RANGES) + [np.bool_])
@pytest.mark.parametrize("fn", sorted(OPS))
def test_c_integers_and_bool_are_torch(fn, dtype, tmp_path):
    """Integers compare as numbers (the extremes of each dtype included;
    int64 beyond 2^53, where a float comparison would tie); bool minimum
    is and, maximum or. fmin / fmax of integers are minimum / maximum."""
    rng = np.random.default_rng(6)
    if dtype is np.bool_:
        a, b = rng.integers(0, 2, (3, 40)).astype(np.bool_), rng.integers(0, 2, (1, 40)).astype(np.bool_)
    else:
        lo, hi = INT_RANGES[dtype]
        a = rng.integers(lo, hi, (3, 40), dtype=np.int64).astype(dtype)
        b = rng.integers(lo, hi, (1, 40), dtype=np.int64).astype(dtype)
        info = np.iinfo(dtype)
        a[0, :4] = [info.min, info.max, info.min, 0]
        b[0, :4] = [info.max, info.min, info.min, 0]
        if dtype is np.int64:
            a[1, 4], b[0, 4] = 2 ** 53 + 1, 2 ** 53
    st = DTYPES[dtype]
    got = run_c(program(f"aten::{fn}.out", [3, 40], [1, 40], [3, 40], st=st), [a, b], tmp_path)
    want = torch_of(fn, a, b) if fn in ("minimum", "maximum") or dtype is not np.bool_ else \
        torch_of({"fmin": "minimum", "fmax": "maximum"}[fn], a, b)     # torch has no bool fmin / fmax
    assert same(got.astype(want.dtype), want)


def test_kernel_table_marks_upstream_and_ptec_only():
    lines = all_kernels_def().splitlines()
    for key in ("aten::minimum.out", "aten::maximum.out"):
        assert RULES[key].upstream_library == "portable"
        assert any(f"/* {key}, src/kernels/portable */" in line for line in lines), key
    for key in ("aten::fmin.out", "aten::fmax.out"):
        assert RULES[key].upstream_library.startswith("none")
        assert any(f"/* {key}, src/kernels/portable, ptec only */" in line for line in lines), key


def samples(shape, n=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(shape, generator=g) * 3.0,) for _ in range(n)]


# programs whose fp32 outputs are torch's bytes: the extreme reads a bit-level result (nextafter), so it runs
# in fp32 on the new kernels; the other operand is the input itself (a slice or a flip of it is int8)
def _down(x):
    return torch.nextafter(x, 0 * x)             # towards zero: below x where x > 0, above where x < 0


EXACT = {
    "torch.minimum(x, nextafter(x, 0))": (lambda x: torch.minimum(x, _down(x)),
                                          ["aten::nextafter.out", "aten::minimum.out"]),
    "torch.maximum(nextafter(x, 0), x)": (lambda x: torch.maximum(_down(x), x),
                                          ["aten::nextafter.out", "aten::maximum.out"]),
    "torch.max(a, b)": (lambda x: torch.max(x, _down(x)), ["aten::nextafter.out", "aten::maximum.out"]),
    "Tensor.min(b)": (lambda x: _down(x).min(x), ["aten::nextafter.out", "aten::minimum.out"]),
    "torch.fmin(x, nextafter(x, 0))": (lambda x: torch.fmin(x, _down(x)), ["aten::nextafter.out", "aten::fmin.out"]),
    "Tensor.fmax(b)": (lambda x: _down(x).fmax(x), ["aten::nextafter.out", "aten::fmax.out"]),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_program_is_torch_bit_for_bit(name, tmp_path):
    fn, kernels = EXACT[name]
    model = Call(fn).eval()
    cal = samples((1, 4, 8))
    res = compile_model(model, [cal[0][0]], cal)
    fp32 = [f.split(": ")[1] for f in res.lowered.fallbacks]
    assert fp32 == kernels
    prog = parse_program(res.data)
    for (x,) in cal:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        want = fn(x).numpy()
        assert len(got) == 1 and got[0].dtype == want.dtype and got[0].shape == want.shape
        assert got[0].tobytes() == np.ascontiguousarray(want).tobytes(), name
        assert not np.array_equal(want, x.numpy()) and not np.array_equal(want, _down(x).numpy())   # both sides
