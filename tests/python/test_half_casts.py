"""Float dtype casts (issue 15): x.half() / x.to(torch.float16) /
x.bfloat16() round to that precision (a LUT of the rounded value on int8),
`.float()` of a float value is the value, and a model output torch returns
as float16 / bfloat16 is a Half / BFloat16 program output converted from
fp32 by _to_dim_order_copy (docs/aot.md). The conversion is IEEE's round to
nearest even: on every kind of float32 (random bit patterns: normals,
subnormals, overflow, NaN; for bfloat16 also every tie) the C kernel writes
numpy's float16 bytes, which are torch's `.half()`, and torch's
`.bfloat16()` bytes (NaN: the quiet NaN of its sign, where torch's own NaN
bits differ between its scalar and vectorized paths). A model returning
half or bfloat16 is within its bound of torch's output and the emulated
boards print the reference bytes."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import ScalarType, parse_program, serialize_program
from ptec.pte.program_builder import ProgramBuilder
from model_checks import Call


def half_program(n, out_type=ScalarType.HALF):
    b = ProgramBuilder()
    x, out = b.tensor(ScalarType.FLOAT, [n]), b.tensor(out_type, [n])
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


def bfloat16_of(bits: np.ndarray) -> torch.Tensor:
    """uint16 bit patterns (ptec's numpy form of bfloat16) as torch bfloat16."""
    return torch.from_numpy(np.array(bits, np.uint16).view(np.int16)).view(torch.bfloat16)


def torch_bfloat16_bits(x: np.ndarray) -> np.ndarray:
    return torch.from_numpy(np.ascontiguousarray(x, np.float32)).bfloat16().view(torch.int16).numpy().view(np.uint16)


def test_float_to_bfloat16_is_torchs_on_every_kind_of_float(tmp_path):
    rng = np.random.default_rng(12)
    bits = rng.integers(0, 2 ** 32, 4096, dtype=np.uint64).astype(np.uint32)
    # exact ties (the dropped half 0x8000: even and odd kept halves), one either side of them,
    # subnormals (exponent 0), the largest finites (their rounding overflows), NaN payloads near 0x7FFF
    kept = rng.integers(0, 2 ** 16, 2048).astype(np.uint32) << 16
    edges = np.array([0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x7F7E8000, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
                      0x7F800001, 0x7FFFFFFF, 0xFFFF8000, 0x7FC00000, 0x00008000, 0x00018000, 0x00000001,
                      0x80007FFF, 0x807F8000, 0x007FFFFF, 0x3F808000, 0x3F818000, 0x00000000, 0x80000000],
                     np.uint32)
    subnormal = rng.integers(0, 2 ** 23, 1024).astype(np.uint32) | (rng.integers(0, 2, 1024).astype(np.uint32) << 31)
    x = np.concatenate([bits, kept | 0x8000, kept | 0x7FFF, kept | 0x8001, subnormal, edges]).view(np.float32)
    prog = half_program(x.size, ScalarType.BFLOAT16)
    got = host_runtime.run(prog, serialize_program(prog), [x], workdir=str(tmp_path))[0]
    assert got.dtype == np.uint16
    nan = np.isnan(x)
    want = torch_bfloat16_bits(x)
    assert np.array_equal(got[~nan], want[~nan])
    assert torch.isnan(bfloat16_of(got[nan])).all() and torch.isnan(bfloat16_of(want[nan])).all()
    assert np.array_equal(got[nan], np.where(np.signbit(x[nan]), 0xFFC0, 0x7FC0))      # quiet, of its sign
    assert run_program(prog, [x])[0].tobytes() == got.tobytes()
    # every kind was met: ties both ways, overflow to infinity, subnormal results
    tie = (x.view(np.uint32) & 0xFFFF) == 0x8000
    assert np.count_nonzero(tie & (got == x.view(np.uint32) >> 16)) > 500
    assert np.count_nonzero(tie & (got != x.view(np.uint32) >> 16) & ~nan) > 500
    assert np.count_nonzero(np.isinf(bfloat16_of(got).float().numpy()) & ~np.isinf(x)) >= 3
    assert np.count_nonzero(((got & 0x7F80) == 0) & ((got & 0x7F) != 0)) > 500


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


BFLOAT16_OUT = {
    "x.bfloat16()": lambda x: torch.sigmoid(x).bfloat16(),
    "x.to(torch.bfloat16) * 2": lambda x: x.to(torch.bfloat16) * 2,
    "x.to(dtype=torch.bfloat16)": lambda x: (x * 100.0).to(dtype=torch.bfloat16),
}


@pytest.mark.parametrize("name", sorted(BFLOAT16_OUT))
def test_bfloat16_output_is_bfloat16_and_torchs(name, tmp_path):
    model = Call(BFLOAT16_OUT[name]).eval()
    calibration = samples(8, 0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert [o.dtype for o in res.lowered.outputs] == ["bfloat16"] and not res.lowered.fallbacks
    prog = parse_program(res.data)
    assert prog.plan().values[prog.plan().outputs[0]].val.scalar_type == ScalarType.BFLOAT16
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.dtype == np.uint16 and got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = model(x)
        assert want.dtype == torch.bfloat16
        value = bfloat16_of(got).double()
        assert len(torch.unique(value)) > 8                       # outputs that vary
        # int8's rounding, then bfloat16's on each side (half a bfloat16 step each: 2^-8 of the value)
        assert (value - want.double()).abs().max() <= 1.0 * step + want.double().abs().max() * 2.0 ** -7


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("out", ["float16", "bfloat16"])
def test_board_prints_the_reference_half_bytes(out, target, tmp_path):
    model = Call(HALF_OUT["x.half()"] if out == "float16" else BFLOAT16_OUT["x.bfloat16()"]).eval()
    calibration = samples(8, 0)
    res = compile_model(model, [calibration[0][0]], calibration, target=target)
    board_matches_reference(res.data, samples(1, 9)[0][0].numpy(), target, tmp_path)
