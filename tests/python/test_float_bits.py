"""torch.nextafter and torch.frexp (issue 15): fp32 on the ptec-only kernels
aten::nextafter.out and aten::frexp.Tensor_out (op_float_bits.c: integer
steps on the float32 encodings), captured by capture_float_bits.

torch float32 is the oracle, bit for bit: the numpy reference
(ptec.reference.float_bits) on every pair of a grid of special values
(+-0, subnormals, the normal / subnormal edge, FLT_MAX, +-inf, NaNs with
sign and payload, signalling ones) and on random encodings; the C runtime
writes the reference's bytes (broadcast, a channels-last layout); programs
give torch's bytes on the float input: `torch.nextafter(x, x + 1) - x` is
the float32 spacing exactly (the sub reads the bit-level result in fp32),
frexp's mantissa (float32) and exponent (int32) as outputs and through
`m * e.float()`."""
import numpy as np
import pytest
import torch

from model_checks import Call, cli_refusal
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ops import all_kernels_def
from ptec.pte import ScalarType, parse_program, serialize_program
from ptec.pte.program_builder import ProgramBuilder
from ptec.pte.upstream_rules import RULES
from ptec.reference import portable as P
from ptec.reference.float_bits import frexp, nextafter

F32 = ScalarType.FLOAT
U = np.uint32
SPECIAL_BITS = np.array([
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x00000002, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
    0x00800001, 0x00400000, 0x3F000000, 0x3F800000, 0xBF800000, 0x3F7FFFFF, 0x3F800001, 0x40490FDB, 0x7F7FFFFF,
    0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFFC12345, 0x7F800001, 0x7FBFFFFF,
    0x4B7FFFFF, 0xCB000000, 0x33800000], U)
SPECIAL = SPECIAL_BITS.view(np.float32)


def random_encodings(n=20000, seed=0):
    """Uniform encodings (every exponent, subnormals and NaNs included) and
    ordinary values."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(U).view(np.float32)
    plain = (rng.standard_normal(n) * 10.0 ** rng.integers(-40, 37, n)).astype(np.float32)
    return np.concatenate([raw, plain])


def pairs(v):
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.reshape(-1), b.reshape(-1)


def bits(a):
    return np.ascontiguousarray(a, np.float32).view(U)


def same_nextafter(got, want) -> bool:
    """Bit for bit, NaN the quiet NaN 0x7FC00000 (torch's vectorized loop
    writes that one whatever the operands' NaNs; its scalar tail for the
    last few elements keeps their sign and payload)."""
    nan = np.isnan(want)
    return np.array_equal(np.isnan(got), nan) and np.array_equal(bits(got)[~nan], bits(want)[~nan]) \
        and np.all(bits(got)[nan] == 0x7FC00000)


def test_nextafter_reference_is_torch_bit_for_bit_on_special_pairs():
    a, b = pairs(SPECIAL)
    want = torch.nextafter(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert same_nextafter(nextafter(a, b), want)
    assert same_nextafter(P.binary_math("nextafter", a, b), want)


def test_nextafter_reference_is_torch_on_random_encodings():
    a = random_encodings()
    b = np.concatenate([random_encodings(seed=1)[: a.size // 2], a[: a.size - a.size // 2]])   # equal pairs too
    want = torch.nextafter(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert same_nextafter(nextafter(a, b), want)


def test_nextafter_edges():
    """0 towards -0 is -0 (y), 0 towards 1 the smallest subnormal, FLT_MAX
    up is inf, inf down FLT_MAX, the smallest normal down the largest
    subnormal."""
    f = np.float32
    got = nextafter(f([0.0, 0.0, 3.4028235e38, np.inf, 1.1754944e-38, -0.0]),
                    f([-0.0, 1.0, np.inf, 0.0, 0.0, -1.0]))
    assert bits(got).tolist() == [0x80000000, 0x00000001, 0x7F800000, 0x7F7FFFFF, 0x007FFFFF, 0x80000001]


def test_frexp_reference_is_torch_bit_for_bit():
    x = np.concatenate([SPECIAL, random_encodings(seed=2)])
    m, e = torch.frexp(torch.from_numpy(x))
    gm, ge = frexp(x)
    assert ge.dtype == np.int32 and e.dtype == torch.int32
    assert np.array_equal(bits(gm), bits(m.numpy())) and np.array_equal(ge, e.numpy())


def test_frexp_of_zero_inf_nan_and_subnormals():
    """torch 1.13: 0, -0, +-inf, NaN give themselves and exponent 0; the
    smallest subnormal is 0.5 * 2^-148, the largest 0.99999988 * 2^-126."""
    m, e = frexp(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 1.1754942e-38, 3.4028235e38], np.float32))
    assert bits(m).tolist() == [0x0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x3F000000, 0x3F7FFFFE,
                                0x3F7FFFFF]
    assert e.tolist() == [0, 0, 0, 0, 0, -148, -126, 128]


def nextafter_program(a_shape, b_shape, out_shape):
    b = ProgramBuilder()
    x, y, out = b.tensor(F32, a_shape), b.tensor(F32, b_shape), b.tensor(F32, out_shape)
    b.call("aten::nextafter.out", self=x, other=y, out=out)
    b.set_io([x, y], [out])
    return b.build()


def frexp_program(shape, dim_order=None):
    b = ProgramBuilder()
    x = b.tensor(F32, shape)
    m = b.tensor(F32, shape, dim_order=dim_order) if dim_order else b.tensor(F32, shape)
    e = b.tensor(ScalarType.INT, shape, dim_order=dim_order) if dim_order else b.tensor(ScalarType.INT, shape)
    b.call("aten::frexp.Tensor_out", self=x, mantissa=m, exponent=e)
    b.set_io([x], [m, e])
    return b.build()


def test_c_nextafter_writes_torchs_bytes(tmp_path):
    a, b = pairs(SPECIAL)
    ra, rb = random_encodings(4000, seed=3), random_encodings(4000, seed=4)
    a, b = np.concatenate([a, ra]), np.concatenate([b, rb])
    prog = nextafter_program([a.size], [b.size], [a.size])
    got = host_runtime.run(prog, serialize_program(prog), [a, b], workdir=str(tmp_path))[0]
    want = torch.nextafter(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert same_nextafter(got, want)
    assert got.tobytes() == run_program(prog, [a, b])[0].tobytes()


def test_c_nextafter_broadcasts_as_torch(tmp_path):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 1, 3, 4)).astype(np.float32)
    b = rng.standard_normal((5, 1, 4)).astype(np.float32)
    prog = nextafter_program(list(a.shape), list(b.shape), [2, 5, 3, 4])
    got = host_runtime.run(prog, serialize_program(prog), [a, b], workdir=str(tmp_path))[0]
    want = torch.nextafter(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    assert same_nextafter(got, want)
    assert got.tobytes() == run_program(prog, [a, b])[0].tobytes()


@pytest.mark.parametrize("dim_order", [None, [0, 2, 3, 1]])
def test_c_frexp_writes_torchs_bytes(dim_order, tmp_path):
    x = np.concatenate([SPECIAL, random_encodings(1000, seed=5)])
    x = np.resize(x, 2 * 3 * 7 * 5).reshape(2, 3, 7, 5).astype(np.float32)
    prog = frexp_program(list(x.shape), dim_order)
    got_m, got_e = host_runtime.run(prog, serialize_program(prog), [x], workdir=str(tmp_path))
    m, e = torch.frexp(torch.from_numpy(x))
    assert got_e.dtype == np.int32
    assert np.array_equal(bits(got_m), bits(m.numpy())) and np.array_equal(got_e, e.numpy())
    ref_m, ref_e = run_program(prog, [x])
    assert got_m.tobytes() == ref_m.tobytes() and got_e.tobytes() == ref_e.tobytes()


def test_kernels_are_ptec_only():
    """Upstream ExecuTorch has neither: all_kernels.def marks them ptec
    only, which keeps them out of the i.MX93 firmware's default list."""
    lines = all_kernels_def().splitlines()
    for key in ("aten::nextafter.out", "aten::frexp.Tensor_out"):
        assert RULES[key].upstream_library.startswith("none")
        assert any(f"/* {key}, src/kernels/portable, ptec only */" in line for line in lines), key


def samples(shape, n=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(shape, generator=g) * 3.0,) for _ in range(n)]


def unpacked_product(x):
    m, e = torch.frexp(x)
    return m * e.float()


def method_fields(x):
    return x.frexp().mantissa, x.frexp().exponent


# programs whose outputs are torch's bytes on the float input: (call, input shape, fp32 kernels)
EXACT = {
    "nextafter(x, x + 1) - x": (lambda x: torch.nextafter(x, x + 1) - x, (1, 4, 8),
                                ["aten::nextafter.out", "aten::sub.out"]),
    "Tensor.nextafter(-x)": (lambda x: x.nextafter(-x), (1, 4, 8), ["aten::nextafter.out"]),
    "nextafter(x, y) - x, 4-D, broadcast": (lambda x: torch.nextafter(x, x[:, :1] * 0 - 5) - x, (1, 3, 4, 4),
                                            ["aten::nextafter.out", "aten::sub.out"]),
    "m, e = frexp(x); m * e.float()": (unpacked_product, (1, 4, 8),
                                       ["aten::frexp.Tensor_out", "aten::frexp.Tensor_out", "aten::mul.out"]),
    "torch.frexp(x) returned": (lambda x: torch.frexp(x), (1, 3, 4, 4),
                                ["aten::frexp.Tensor_out", "aten::frexp.Tensor_out"]),
    "x.frexp().mantissa, .exponent": (method_fields, (1, 4, 8),
                                      ["aten::frexp.Tensor_out", "aten::frexp.Tensor_out"]),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_program_is_torch_bit_for_bit(name, tmp_path):
    fn, shape, kernels = EXACT[name]
    model = Call(fn).eval()
    cal = samples(shape)
    res = compile_model(model, [cal[0][0]], cal)
    assert [f.split(": ")[1] for f in res.lowered.fallbacks] == kernels
    prog = parse_program(res.data)
    if "frexp" in name and "returned" in name or "mantissa" in name:
        assert [o.dtype for o in res.lowered.outputs] == ["float32", "int32"]
    for (x,) in cal:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        want = fn(x)
        want = want if isinstance(want, tuple) else (want,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            w = w.numpy()
            assert g.dtype == w.dtype and g.shape == w.shape
            assert g.tobytes() == np.ascontiguousarray(w).tobytes(), name
        ref = run_program(prog, [x.numpy()])
        assert all(g.tobytes() == r.tobytes() for g, r in zip(got, ref))


def test_nextafter_difference_is_the_spacing_not_an_int8_step():
    """The sub reading nextafter runs in fp32 on purpose (its reason names
    the bit-level result); its output is float32's spacing at x, at most
    2^-19 for |x| < 16, far below any int8 step."""
    model = Call(lambda x: torch.nextafter(x, x + 1) - x).eval()
    cal = samples((1, 4, 8))
    res = compile_model(model, [cal[0][0]], cal)
    sub = next(n for n in res.graph.nodes if n.op == "sub")
    assert "bit-level" in sub.attrs["fp32"]
    x = cal[1][0].numpy()
    assert np.abs(x).max() < 16
    got = host_runtime.run(parse_program(res.data), res.data, [x])[0]
    assert 0 < got.min() and got.max() <= 2.0 ** -19


def test_frexp_elements_of_two_calls_are_captured():
    """Each element of each frexp call is a node of its own; no call is
    left unsupported."""
    from ptec.capture import capture
    g = capture(Call(lambda x: torch.frexp(x)[0] + torch.frexp(x)[1]).eval(), [torch.randn(1, 8)])
    assert not any(n.op == "unsupported" for n in g.nodes)
    assert sorted(n.op for n in g.nodes if n.op.startswith("frexp")) == ["frexp_exponent", "frexp_mantissa"]


@pytest.mark.parametrize("call,words", [
    # torch promotes the int32 exponent in a cat with the float mantissa; ptec computes on integers only by
    # converting them (.float())
    ("torch.cat(torch.frexp(x), 1)", ["int32 indices", "torch.cat", ".float()"]),
    # frexp of a value of undefined contents: that value's own refusal
    ("x + torch.empty_like(x).frexp()[0]", ["empty_like", "undefined"]),
])
def test_what_stays_refused_in_one_line(call, words, tmp_path):
    line = cli_refusal(tmp_path, "import torch\n"
                                 "class M(torch.nn.Module):\n"
                                 "    def forward(self, x):\n"
                                 f"        return {call}\n"
                                 "def model():\n"
                                 "    return M(), (torch.rand(1, 4, 8),)\n")
    assert all(w in line for w in words), line
