"""aten::bmm.out (issue 15): the portable fp32 batched matrix product, and
what it serves: matrix_power / matrix_exp of any n (tests/python/
test_matrix_functions.py measures them against torch's float64 result up
to 32x32), and torch.linalg.lstsq's solution, residuals, rank and singular
values, each of the shape torch 1.13 gives it for the driver and A's shape.

Oracles: torch (float64 where a bound is relative), and for the kernel's
bytes the sum written out here in float32 (index order from 0)."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from ptec.pte.program_builder import ProgramBuilder
from ptec.pte.schema import ScalarType
from ptec.pte.upstream_rules import check_program
from ptec.pte.writer import serialize_program
from model_checks import Call

EPS = float(np.finfo(np.float32).eps)


def bmm_on_host(x, y, tmp_path):
    b = ProgramBuilder()
    tx, ty = b.tensor(ScalarType.FLOAT, list(x.shape)), b.tensor(ScalarType.FLOAT, list(y.shape))
    tz = b.tensor(ScalarType.FLOAT, [x.shape[0], x.shape[1], y.shape[2]])
    b.call("aten::bmm.out", self=tx, mat2=ty, out=tz)
    b.set_io([tx, ty], [tz])
    program = b.build()
    assert not check_program(program), "the call breaks upstream's bmm rules"
    data = serialize_program(program)
    prog = parse_program(data)
    got = host_runtime.run(prog, data, [x, y], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [x, y])[0].tobytes(), "ptec-run differs from the reference"
    return got


def in_order(x, y):
    """float32 sums from 0 over the contracted index in order."""
    out = np.zeros((x.shape[0], x.shape[1], y.shape[2]), np.float32)
    for c in range(x.shape[2]):
        out = (out + (x[:, :, c:c + 1] * y[:, c:c + 1, :]).astype(np.float32)).astype(np.float32)
    return out


@pytest.mark.parametrize("b,n,k,m", [(1, 1, 1, 1), (3, 4, 5, 2), (2, 7, 64, 3), (1, 33, 17, 40), (4, 2, 0, 3)])
def test_bmm_kernel_against_torch(b, n, k, m, tmp_path):
    """Bytes: the in-order float32 sum; values: within k epsilons of
    sum |x| |y| of torch's float64 product."""
    g = np.random.default_rng(b * 1000 + n * 100 + k * 10 + m)
    x = g.standard_normal((b, n, k)).astype(np.float32)
    y = g.standard_normal((b, k, m)).astype(np.float32)
    got = bmm_on_host(x, y, tmp_path)
    assert got.tobytes() == in_order(x, y).tobytes()
    want = torch.bmm(torch.from_numpy(x).double(), torch.from_numpy(y).double()).numpy()
    scale = np.abs(x).astype(np.float64) @ np.abs(y).astype(np.float64)
    assert np.all(np.abs(got - want) <= max(k, 1) * EPS * scale + 1e-30)


def test_bmm_sums_in_index_order(tmp_path):
    """(2^24 + 1 + 1 - 2^24): 0 in index order (each + 1 rounds away),
    where a reversed sum gives 2 and a pairwise one 1."""
    x = np.array([[[2.0 ** 24, 1, 1, -2.0 ** 24]]], np.float32)
    assert bmm_on_host(x, np.ones((1, 4, 1), np.float32), tmp_path)[0, 0, 0] == 0.0


def lstsq_inputs(shape, seed, count=3):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g),) for _ in range(count)]


B_TALL = torch.linspace(-1, 1, 14).reshape(7, 2)
B_WIDE = torch.linspace(-1, 1, 8).reshape(4, 2)

# (id, call of A, A's shape, which result); the result's shape and dtype are torch 1.13's for that driver and shape
LSTSQ = [
    (f"{which} {driver} {kind}", driver, shape, which, b)
    for driver in (None, "gelsy", "gelsd", "gelss", "gels")
    for kind, shape, b in (("tall", (2, 7, 4), B_TALL), ("wide", (2, 4, 6), B_WIDE), ("2-D tall", (7, 3), B_TALL))
    for which in ("solution", "residuals", "rank", "singular_values")
    if not (driver == "gels" and kind == "wide")
]


@pytest.mark.parametrize("name,driver,shape,which,b", LSTSQ, ids=[r[0] for r in LSTSQ])
def test_lstsq_results_match_torch(name, driver, shape, which, b, tmp_path):
    """Each result of A [..., m, n] (the model's input, fp32) and a constant
    B: torch's shape (empty where torch's is), rank equal, the others
    within a relative bound of torch's float64 result."""
    full = b.expand(tuple(shape[:-2]) + tuple(b.shape)).contiguous()

    def fn(a):
        kw = {} if driver is None else {"driver": driver}
        return getattr(torch.linalg.lstsq(a, full.to(a.dtype), **kw), which)
    samples = lstsq_inputs(shape, sum(map(ord, name)))
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    prog = parse_program(res.data)
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        want = fn(x.double() if which != "rank" else x).numpy()
        assert got.shape == want.shape, (got.shape, want.shape)
        if which == "rank":
            assert got.dtype == np.int64 and np.array_equal(got, want)
        elif want.size:
            err = np.abs(got - want).max() / np.abs(want).max()
            assert err <= 1e-4, err


def test_lstsq_residuals_of_a_full_rank_tall_system_are_torch_s_gels(tmp_path):
    """gels' residuals (m > n): the squared column norms of A X - B, within
    1e-4 relative of torch's float64 values, also where B is far from A's range."""
    g = torch.Generator().manual_seed(7)
    b = (torch.randn(12, 3, generator=g) * 5).expand(2, 12, 3).contiguous()

    def fn(a):
        return torch.linalg.lstsq(a, b.to(a.dtype), driver="gels").residuals
    samples = [(torch.randn(2, 12, 5, generator=g),) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    for (x,) in samples:
        got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = fn(x.double()).numpy()
        assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


def test_lstsq_of_a_large_system_runs_on_bmm(tmp_path):
    """n m k = 24 * 40 * 8 (the pick tables this replaced stopped at 4096)."""
    g = torch.Generator().manual_seed(8)
    b = torch.randn(1, 40, 8, generator=g)

    def fn(a):
        return torch.linalg.lstsq(a, b).solution
    samples = [(torch.randn(1, 40, 24, generator=g),) for _ in range(2)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    assert "aten::bmm.out" in res.lowered.operators
    assert not any("linear" in k or "mul" in k for k in res.lowered.operators), res.lowered.operators
    for (x,) in samples:
        got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = torch.linalg.lstsq(x.double(), b.double()).solution.numpy()
        assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


def test_matrix_products_are_bmm_calls():
    """matrix_exp and matrix_power of a 12x12 matrix (beyond the 8x8 the
    pick tables served): bmm calls, no 0/1 picking linear."""
    samples = lstsq_inputs((2, 12, 12), 9, 2)
    for fn in (torch.linalg.matrix_exp, lambda a: torch.linalg.matrix_power(a, 3)):
        res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
        assert "aten::bmm.out" in res.lowered.operators and "aten::linear.out" not in res.lowered.operators


REFUSED = [
    # B broadcast over A's batch dims (torch broadcasts it)
    ("broadcast B", lambda x: torch.linalg.lstsq(x, x[:1, :, :2]).solution, "of A's batch dims"),
]


@pytest.mark.parametrize("name,fn,says", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_in_one_line(name, fn, says):
    x = torch.randn(2, 5, 4)
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


# torch.matmul of a broadcast batch (cortex_m lowers equal batch dims or a 2-D rhs in int8): the portable fp32
# fallback on aten::bmm.out, the broadcast operand's copies joined by aten::cat.out
BROADCAST = [
    ("4-D, rhs batch [2, 1]", lambda x: torch.matmul(x, x[:, :1].mT), (2, 3, 4, 4)),
    ("3-D lhs, 4-D rhs", lambda x: torch.matmul(x[0], x[:, :1].mT), (2, 3, 4, 5)),
    ("5-D", lambda x: torch.matmul(x, x[:, :1, :1].mT), (2, 2, 2, 3, 4)),
]


@pytest.mark.parametrize("name,fn,shape", BROADCAST, ids=[b[0] for b in BROADCAST])
def test_broadcast_matmul_falls_back_to_bmm(name, fn, shape, tmp_path):
    """Within 1e-2 relative of torch (the operands' int8 rounding before the
    fp32 product: measured 3e-3 to 5e-3), the reference interpreter's bytes."""
    g = torch.Generator().manual_seed(len(name))
    samples = [(torch.rand(shape, generator=g) * 2 - 1,) for _ in range(4)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    assert any(f.endswith("aten::bmm.out") and f.startswith("matmul") for f in res.lowered.fallbacks), \
        res.lowered.fallbacks
    prog = parse_program(res.data)
    for (x,) in samples[1:]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        want = fn(x.double()).numpy()
        assert got.shape == want.shape and np.abs(got - want).max() <= 1e-2 * np.abs(want).max()
