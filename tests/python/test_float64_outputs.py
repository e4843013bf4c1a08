"""A float64 result of float math as a program output (issue 15,
capture_plumbing / capture_casts): `x.double().exp()`, `x.double() * 2 + 1`,
`return x.double()`, `x.sum(-1, dtype=torch.float64)`, `(x > 0).double()`.
ptec computes the chain in float32 (int8 steps, or fp32 kernels) and
returns the value as Double (ScalarType 7): dim_order_ops::
_to_dim_order_copy from float32 into float64, exact.

Oracle: torch's float64 chain. The program's output is of dtype float64,
its bytes are the numpy reference interpreter's, and it is within the
bound of torch's float64 result: int8 programs in output steps (as the
same chain returned as .float(): the float64 conversion adds no error),
fp32 kernels in relative error (float32 rounding against float64's)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from model_checks import Call

R = (-3.0, 3.0)

# (call of x, bound in output steps of torch's float64 result)
INT8 = {
    "x.double().exp()": (lambda x: x.double().exp(), 2.5),                                 # 2.26 (Tensor.exp's 2.5)
    "x.double() * 2 + 1": (lambda x: x.double() * 2 + 1, 1.0),                             # 0.83
    "x.double()": (lambda x: x.double(), 0.5),                                             # 0.00: the input itself
    "x.to(torch.float64).detach()": (lambda x: x.to(torch.float64).detach(), 0.5),         # 0.00
    "x.sum(-1, dtype=torch.float64)": (lambda x: x.sum(-1, dtype=torch.float64), 1.5),     # 1.21 (Tensor.sum's 1.5)
    "torch.sigmoid(x).to(torch.float64)": (lambda x: torch.sigmoid(x).to(torch.float64), 1.0),  # 0.98
    "(x > 0).double() * x": (lambda x: (x > 0).double() * x, 1.5),                         # 1.31
}


def _inputs(n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(1, 4, 8, generator=g) * 6 - 3,) for _ in range(n)]


def _run(model, cal, tmp_path):
    res = compile_model(model, [cal[0][0]], cal)
    prog = parse_program(res.data)
    assert res.lowered.outputs[0].dtype == "float64"
    for (x,) in cal[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = run_program(prog, [x.numpy()])[0]
        assert got.dtype == np.float64 and want.dtype == np.float64
        if res.lowered.fallbacks:
            assert np.allclose(got, want, rtol=1e-5, atol=1e-6)
        else:
            assert got.tobytes() == want.tobytes()
        with torch.no_grad():
            ref = model(x)
        assert ref.dtype == torch.float64
        yield res, got, ref.numpy()


@pytest.mark.parametrize("name", sorted(INT8))
def test_int8_chain_as_float64(name, tmp_path):
    fn, bound = INT8[name]
    model = Call(fn).eval()
    worst, span = 0.0, []
    for res, got, ref in _run(model, _inputs(), tmp_path):
        assert not res.lowered.fallbacks
        step = res.graph.node(res.graph.outputs[0]).qparams[0]
        worst = max(worst, float(np.abs(got - ref).max() / step))
        span.append(np.ptp(ref) / step)
    print(f"{name}: {worst:.2f} output steps")
    assert min(span) >= 16
    assert worst <= bound + 1e-3, worst


@pytest.mark.parametrize("name", sorted(INT8))
def test_the_float64_output_is_the_float32_value(name, tmp_path):
    """fn(x) returned as float64 is the same program's fn(x).float() output, converted exactly: the Double
    output adds no error to the float32 chain's."""
    fn = INT8[name][0]
    cal = _inputs()
    wide = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    narrow = compile_model(Call(lambda x: fn(x).float()).eval(), [cal[0][0]], cal)
    assert [o.dtype for o in narrow.lowered.outputs] == ["float32"]
    for (x,) in cal[:3]:
        a = host_runtime.run(parse_program(wide.data), wide.data, [x.numpy()], workdir=str(tmp_path))[0]
        b = host_runtime.run(parse_program(narrow.data), narrow.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert a.dtype == np.float64 and b.dtype == np.float32
        assert np.array_equal(a, b.astype(np.float64))


# fp32 kernels: (call of x, bound on the relative error against torch's float64, measured)
FP32 = {
    "F.layer_norm(x.double(), (8,))": (lambda x: F.layer_norm(x.double(), (8,)), 2e-2),
    "F.log_softmax(x.double(), -1)": (lambda x: F.log_softmax(x.double(), -1), 2e-2),
}


@pytest.mark.parametrize("name", sorted(FP32))
def test_fp32_chain_as_float64(name, tmp_path):
    fn, bound = FP32[name]
    worst = 0.0
    for res, got, ref in _run(Call(fn).eval(), _inputs(), tmp_path):
        assert res.lowered.fallbacks
        worst = max(worst, float(np.abs(got - ref).max() / np.abs(ref).max()))
    print(f"{name}: relative error {worst:.2e}")
    assert worst <= bound, worst


def test_two_outputs_one_float64():
    """(x, x.double()): the same value returned as float32 and as float64."""
    cal = _inputs()
    res = compile_model(Call(lambda x: (x * 2, (x * 2).double())).eval(), [cal[0][0]], cal)
    assert [o.dtype for o in res.lowered.outputs] == ["float32", "float64"]
