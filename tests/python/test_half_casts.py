"""Float dtype casts (issue 15): x.half() / x.to(torch.float16) /
x.bfloat16() round to that precision (a LUT of the rounded value on int8),
`.float()` of a float value is the value, and a model output torch returns
as float16 is a Half program output converted from fp32 by
_to_dim_order_copy (docs/aot.md). The conversion is IEEE's round to
nearest even: on every kind of float32 (random bit patterns: normals,
subnormals, overflow, NaN) the C kernel writes numpy's float16 bytes, which
are torch's `.half()` (NaN: the quiet NaN of its sign). A model returning
half is within its bound of torch's half output and the emulated boards
print the reference bytes; a bfloat16 output is refused in one line."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.pte import ScalarType, parse_program, serialize_program
from ptec.pte.program_builder import ProgramBuilder


def half_program(n):
    b = ProgramBuilder()
    x, out = b.tensor(ScalarType.FLOAT, [n]), b.tensor(ScalarType.HALF, [n])
    b.call("dim_order_ops::_to_dim_order_copy.out", self=x, non_blocking=False, dim_order=None, out=out)
    b.set_io([x], [out])
    return b.build()


def test_float_to_half_is_ieee_on_every_kind_of_float(tmp_path):
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2 ** 32, 4096, dtype=np.uint64).astype(np.uint32)
    # and the neighbourhoods of the half range's edges: exponents 2^-26 .. 2^17
    near = (rng.integers(0, 2 ** 23, 4096) | (rng.integers(101, 144, 4096) << 23)).astype(np.uint32)
    x = np.concatenate([bits, near]).view(np.float32)
    prog = half_program(x.size)
    got = host_runtime.run(prog, serialize_program(prog), [x], workdir=str(tmp_path))[0]
    assert got.dtype == np.float16
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    nan = np.isnan(x)
    assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])
    assert np.array_equal(got.view(np.uint16)[nan], np.where(np.signbit(x[nan]), 0xFE00, 0x7E00))
    torch_half = torch.from_numpy(x[~nan]).half().numpy()
    assert np.array_equal(got[~nan].view(np.uint16), torch_half.view(np.uint16))
    assert run_program(prog, [x])[0].tobytes() == got.tobytes()
    assert np.count_nonzero((np.abs(want) < 2.0 ** -14) & (want != 0)) > 100     # subnormals were met
    assert np.count_nonzero(np.isinf(want) & ~np.isinf(x)) > 100                  # overflow too


class Call(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def samples(n, seed, shape=(1, 4, 8)):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * 6.0 - 3.0,) for _ in range(n)]


HALF_OUT = {
    "x.half()": lambda x: torch.sigmoid(x).half(),
    "x.to(torch.float16) * 2": lambda x: x.to(torch.float16) * 2,
}


@pytest.mark.parametrize("name", sorted(HALF_OUT))
def test_half_output_is_half_and_torchs(name, tmp_path):
    model = Call(HALF_OUT[name]).eval()
    calibration = samples(8, 0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert [o.dtype for o in res.lowered.outputs] == ["float16"] and not res.lowered.fallbacks
    prog = parse_program(res.data)
    assert prog.plan().values[prog.plan().outputs[0]].val.scalar_type == ScalarType.HALF
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.dtype == np.float16 and got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = model(x).numpy()
        assert want.dtype == np.float16
        assert np.abs(got.astype(np.float64) - want.astype(np.float64)).max() <= 1.0 * step


def test_rounding_inside_is_a_lut():
    """x.half().float() and x.bfloat16().float() before more float layers: int8 LUTs."""
    model = Call(lambda x: x.half().float() * 0.5 + x.bfloat16().float()).eval()
    calibration = samples(8, 0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert [o.dtype for o in res.lowered.outputs] == ["float32"] and not res.lowered.fallbacks
    assert sorted(n.attrs["fn"] for n in res.graph.nodes if n.op == "elementwise") == ["to_bfloat16", "to_half"]


def test_bfloat16_output_is_refused_in_one_line():
    model = Call(lambda x: x.bfloat16()).eval()
    calibration = samples(2, 0)
    with pytest.raises(CompileError) as e:
        compile_model(model, [calibration[0][0]], calibration)
    assert "\n" not in str(e.value) and "bfloat16" in str(e.value) and ".float()" in str(e.value), str(e.value)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_board_prints_the_reference_half_bytes(target, tmp_path):
    model = Call(HALF_OUT["x.half()"]).eval()
    calibration = samples(8, 0)
    res = compile_model(model, [calibration[0][0]], calibration, target=target)
    board_matches_reference(res.data, samples(1, 9)[0][0].numpy(), target, tmp_path)
