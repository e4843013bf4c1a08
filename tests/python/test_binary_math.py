"""torch's float functions of two tensors (pow with a tensor exponent,
atan2, hypot, fmod, remainder, copysign) on their portable fp32 kernels, and
ids computed in the program (x.long(), x.int()) for nn.Embedding (issue 15).

Kernels: on special values (negative bases with whole and fractional
exponents, zeros of both signs, infinities, NaN, overflow) and random
broadcast operands, the C runtime writes the numpy reference's bytes, and
the reference is torch's float32 result (the same NaNs; pow, atan2 and
hypot within one float32 ulp, since torch's vectorised math is not
correctly rounded; the rest exact). A float32-to-integer copy truncates as
torch and fails the run on NaN or a value outside the type. Models: the
calls compile with the functions reported as fp32 layers, run within
their bounds of PyTorch (test_function_coverage) and on the emulated
boards print the reference bytes; computed ids outside the table fail the
run."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import ScalarType, parse_program, serialize_program
from ptec.pte.program_builder import ProgramBuilder
from ptec.reference import portable as P
from model_checks import Call

KEYS = {"pow": "aten::pow.Tensor_Tensor_out", "atan2": "aten::atan2.out", "hypot": "aten::hypot.out",
        "fmod": "aten::fmod.Tensor_out", "remainder": "aten::remainder.Tensor_out", "copysign": "aten::copysign.out"}
TORCH = {"pow": torch.pow, "atan2": torch.atan2, "hypot": torch.hypot, "fmod": torch.fmod,
         "remainder": torch.remainder, "copysign": torch.copysign}
ROUNDED = {"pow", "atan2", "hypot"}          # computed by libm, not exact
F32 = ScalarType.FLOAT


def program(fn, a_shape, b_shape, out_shape):
    b = ProgramBuilder()
    x, y, out = b.tensor(F32, a_shape), b.tensor(F32, b_shape), b.tensor(F32, out_shape)
    b.call(KEYS[fn], self=x, out=out, **{"exponent" if fn == "pow" else "other": y})
    b.set_io([x, y], [out])
    return b.build()


def special_operands():
    """Every pair of a list of special and ordinary values: whole and
    fractional exponents of negative bases, signed zeros, infinities, NaN,
    values near 1 and large enough to overflow pow."""
    v = np.array([-3, -2, -1.5, -1, -0.5, -0.0, 0.0, 0.5, 1, 1.5, 2, 3, 7, -7, 0.1, 100, -100, 1e-30,
                  np.inf, -np.inf, np.nan, 88.5, -88.5, 3.4e38], np.float32)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.reshape(-1), b.reshape(-1)


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in float32 ulps of the larger (finite values of one sign)."""
    spacing = np.spacing(np.maximum(np.abs(a), np.abs(b)).astype(np.float32))
    return np.abs(a.astype(np.float64) - b.astype(np.float64)) / spacing


def agrees_with_torch(fn, a, b, got):
    want = TORCH[fn](torch.from_numpy(a), torch.from_numpy(b)).numpy()
    if fn in ("fmod", "remainder"):
        # torch's vectorised CPU fmod divides first: where the float32
        # quotient overflows it gives NaN; C's fmod (and torch's scalar
        # std::fmod) is exact there, which ptec keeps (docs/portable-ops.md)
        with np.errstate(all="ignore"):
            keep = ~(np.isinf(a / b) & np.isfinite(a) & (b != 0))
        a, b, got, want = a[keep], b[keep], got[keep], want[keep]
    assert np.array_equal(np.isnan(got), np.isnan(want)), (a[np.isnan(got) != np.isnan(want)],
                                                             b[np.isnan(got) != np.isnan(want)])
    ok = ~np.isnan(want)
    g, w = got[ok], want[ok]
    assert np.array_equal(np.isinf(g), np.isinf(w)) and np.array_equal(g[np.isinf(w)], w[np.isinf(w)])
    finite = np.isfinite(w)
    if fn in ROUNDED:
        bad = ulps(g[finite], w[finite]) > 1.0
        assert not bad.any(), (a[ok][finite][bad], b[ok][finite][bad], g[finite][bad], w[finite][bad])
    else:
        assert g[finite].tobytes() == w[finite].tobytes()


@pytest.mark.parametrize("fn", sorted(KEYS))
def test_reference_is_torch_on_special_values(fn):
    a, b = special_operands()
    agrees_with_torch(fn, a, b, P.binary_math(fn, a, b))


def test_negative_bases_follow_torch():
    """The cases issue 15 names: a negative base to a whole power keeps an
    odd power's sign, to a fractional one is NaN."""
    got = P.binary_math("pow", np.array([-2, -2, -3, -2], np.float32), np.array([3, 2, -1, 0.5], np.float32))
    assert got[:3].tolist() == [-8.0, 4.0, np.float32(-1 / 3)] and np.isnan(got[3])


@pytest.mark.parametrize("fn", sorted(KEYS))
def test_c_kernel_writes_the_reference_bytes(fn, tmp_path):
    a, b = special_operands()
    prog = program(fn, [a.size], [b.size], [a.size])
    got = host_runtime.run(prog, serialize_program(prog), [a, b], workdir=str(tmp_path))[0]
    assert got.tobytes() == P.binary_math(fn, a, b).tobytes()
    agrees_with_torch(fn, a, b, got)


@pytest.mark.parametrize("fn", sorted(KEYS))
def test_broadcast_is_torchs(fn, tmp_path):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((2, 1, 3, 4)) * 3).astype(np.float32)
    b = (rng.standard_normal((5, 1, 4)) * 2).astype(np.float32)
    if fn == "pow":
        a = np.abs(a) + np.float32(0.1)            # positive bases: every value a number
    prog = program(fn, list(a.shape), list(b.shape), [2, 5, 3, 4])
    got = host_runtime.run(prog, serialize_program(prog), [a, b], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [a, b])[0].tobytes()
    agrees_with_torch(fn, *np.broadcast_arrays(a, b), got)


def to_integer_program(dtype, n):
    b = ProgramBuilder()
    x, out = b.tensor(F32, [n]), b.tensor(dtype, [n])
    b.call("dim_order_ops::_to_dim_order_copy.out", self=x, non_blocking=False, dim_order=None, out=out)
    b.set_io([x], [out])
    return b.build()


@pytest.mark.parametrize("dtype,torch_dtype", [(ScalarType.LONG, torch.int64), (ScalarType.INT, torch.int32)])
def test_float_to_integer_truncates_as_torch(dtype, torch_dtype, tmp_path):
    x = np.concatenate([np.linspace(-9.75, 9.75, 79), [-0.0, 0.999, -0.999, 2.0 ** 30, -2.0 ** 31]]).astype(np.float32)
    prog = to_integer_program(dtype, x.size)
    got = host_runtime.run(prog, serialize_program(prog), [x], workdir=str(tmp_path))[0]
    want = torch.from_numpy(x).to(torch_dtype).numpy()
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(run_program(prog, [x])[0], want)


@pytest.mark.parametrize("dtype,bad", [(ScalarType.LONG, np.nan), (ScalarType.LONG, np.inf),
                                       (ScalarType.LONG, 2.0 ** 63), (ScalarType.INT, 2.0 ** 31),
                                       (ScalarType.INT, -2.0 ** 31 - 256)])
def test_float_to_integer_out_of_range_fails_the_run(dtype, bad, tmp_path):
    x = np.array([1.5, bad, -2.0], np.float32)
    prog = to_integer_program(dtype, 3)
    with pytest.raises(Exception, match="NaN, infinite or outside"):
        host_runtime.run(prog, serialize_program(prog), [x], workdir=str(tmp_path))
    with pytest.raises(ValueError, match="NaN, infinite or outside"):
        run_program(prog, [x])


class Geometry(torch.nn.Module):
    """Polar form and powers: every function of two tensors, then int8 layers."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.fc = torch.nn.Linear(192, 6)

    def forward(self, x):                                   # [1, 4, 8]
        y = x.flip(-1)
        parts = [(x.abs() + 0.5) ** y, torch.atan2(x, y + 1), torch.hypot(x, y),
                 torch.fmod(x, y.abs() + 1), torch.remainder(x, y - 4), torch.copysign(x, y)]
        return self.fc(torch.cat(parts, -1).flatten(1))


class ComputedIds(torch.nn.Module):
    """Embedding rows (and a bag's mean) picked by ids computed from the input."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.table = torch.nn.Parameter(torch.randn(10, 4))

    def forward(self, x):                                   # [2, 5]
        ids = torch.floor(x.abs() * 3).long()
        rows = F.embedding(ids, self.table)                 # [2, 5, 4]
        bag = F.embedding_bag((x.abs() * 2).long(), self.table)    # [2, 4]
        return rows.flatten(1) + bag.repeat(1, 5)


def samples(shape, n, seed, lo=-3.0, hi=3.0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * (hi - lo) + lo,) for _ in range(n)]


def test_fp32_layers_are_reported():
    calibration = samples((1, 4, 8), 8, 0)
    res = compile_model(Geometry().eval(), [calibration[0][0]], calibration)
    used = sorted(f.split(": ")[1] for f in res.lowered.fallbacks)
    assert used == sorted(KEYS.values()), used
    assert all("no int8 lowering for binary_math" in r for r in res.lowered.refusals), res.lowered.refusals


def test_computed_ids_run_as_int8_rows():
    calibration = samples((2, 5), 8, 0)
    res = compile_model(ComputedIds().eval(), [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks


class FloatIds(torch.nn.Module):
    """Ids from an fp32 layer (copysign(x, x) is x): the float input reaches
    it unquantized, so no int8 grid clamps the ids into the table."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(torch.linspace(-1, 1, 40).reshape(10, 4))

    def forward(self, x):                                   # [2, 5] in [0, 10)
        return F.embedding(torch.copysign(x, x).long(), self.table)


@pytest.mark.parametrize("bad,why", [(10.5, "outside the table"), (-1.5, "outside the table"),
                                     (float("nan"), "NaN, infinite or outside")])
def test_computed_ids_outside_the_table_fail_the_run(bad, why, tmp_path):
    calibration = samples((2, 5), 8, 0, 0.0, 9.99)
    res = compile_model(FloatIds().eval(), [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    x = calibration[0][0].numpy().copy()
    step = res.graph.node(res.graph.outputs[0]).qparams[0]        # the table's rows, on the output's grid
    with torch.no_grad():
        assert np.abs(run_program(prog, [x])[0] - FloatIds()(torch.from_numpy(x)).numpy()).max() <= step / 2 * 1.001
    x[1, 2] = bad
    with pytest.raises(Exception, match=why):
        host_runtime.run(prog, res.data, [x], workdir=str(tmp_path))
    with pytest.raises(ValueError, match=why):
        run_program(prog, [x])


WHOLE = {"floor": lambda x: torch.floor(x * 2).long(), "round": lambda x: (x * 3).round().long(),
         "ceil": lambda x: torch.ceil(x).to(torch.int64), "trunc": lambda x: torch.trunc(x * 5).int()}


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_whole_numbers_convert_exactly(name, tmp_path):
    """torch.floor(...).long() and its kin: the whole numbers sit on an int8
    grid that holds them exactly (quantize.whole_number_qparams), so on
    inputs on the program's input grid the ids are torch's, none a whole
    number less from a value rounded a little below it."""
    model = Call(WHOLE[name]).eval()
    calibration = samples((4, 16), 8, 0)
    res = compile_model(model, [calibration[0][0]], calibration)
    s, z = res.graph.node(res.graph.inputs[0]).qparams
    g = torch.Generator().manual_seed(3)
    x = ((torch.randint(-128, 128, (4, 16), generator=g) - z) * s).float()     # on the input's grid
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
    want = model(x).numpy()
    assert got.dtype == want.dtype and np.array_equal(got, want), (got - want)
    assert len(np.unique(want)) >= 5


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("which", ["Geometry", "ComputedIds"])
def test_board_prints_the_reference_bytes(which, target, tmp_path):
    model, shape = {"Geometry": (Geometry, (1, 4, 8)), "ComputedIds": (ComputedIds, (2, 5))}[which]
    calibration = samples(shape, 8, 0)
    res = compile_model(model().eval(), [calibration[0][0]], calibration, target=target)
    board_matches_reference(res.data, samples(shape, 1, 9)[0][0].numpy(), target, tmp_path)
