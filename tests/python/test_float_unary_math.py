"""Float32 math of one tensor on its own portable kernels (aten::exp.out,
log, sin, ..., sign: src/kernels/portable/op_float_unary_math.c on
unary_elementwise.c's engine), upstream ExecuTorch's names and schemas.

torch is the oracle. The C kernels (programs run by ptec-run) on random
values of each function's domain, random float32 encodings (subnormals,
NaNs, huge values) and specials (+-0, +-inf, NaN, domain edges):
abs / neg / floor / ceil / round / trunc / sign / sqrt / rsqrt / reciprocal
are torch's float32 bytes (every NaN the quiet NaN 0x7FC00000), the
transcendental ones within ULP_BOUND units in the last place of torch's
float64 result rounded to float32 (measured on the host's glibc: 2), with
its special values (NaN, +-inf, +-0) exactly. torch's own float32 results
are off from its float64 ones in places the kernels are not: sinh / cosh of
|x| in (88.72, 89.4] are inf in torch float32 (its exp overflows) where the
value is finite; log1p of a subnormal is 0 and of |x| > 1e38 inf there. The numpy reference
(ptec.reference.portable.float_unary) writes the C's bytes for the exact
ones and is within REFERENCE_ULP of them for the others (numpy's own float32
functions against the C library's). An fp32 region uses them: a float
value viewed as int32 (capture_dtype_view) made by exp, log, sin, ... is
torch's float32 bits within the ulps VIEWED states (0 for the exact ones,
2 where torch's own float32 function is 1 off); an fp32 node keeps the
graph's meaning at a domain's edge (a clamp before an internal sqrt, log,
...; torch's NaN for the user's own call)."""
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

F32 = ScalarType.FLOAT
U = np.uint32
# measured on the host (glibc's expf, logf, sinf, ...) against torch float64 rounded: 1 ulp at most,
# except sinh and atanh with 2 (one input each of 6000)
ULP_BOUND = 2
# numpy's float32 functions (its own SIMD code) against the C library's: at most 2 ulps apart
# (measured: exp, expm1, log10, tan, asin, acos, sinh, cosh, atanh reach 2 on a few inputs)
REFERENCE_ULP = 2

EXACT = ("abs", "neg", "floor", "ceil", "round", "trunc", "sign", "sqrt", "rsqrt", "reciprocal")
TRANSCENDENTAL = ("exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
                  "sinh", "cosh", "asinh", "acosh", "atanh", "erf")
ALL = EXACT + TRANSCENDENTAL
# where each function's values vary (random inputs drawn there)
DOMAIN = {"exp": (-87, 88), "expm1": (-20, 88), "log": (0, 1e6), "log1p": (-1, 1e4), "log2": (0, 1e6),
          "log10": (0, 1e6), "sin": (-100, 100), "cos": (-100, 100), "tan": (-10, 10), "asin": (-1, 1),
          "acos": (-1, 1), "atan": (-50, 50), "sinh": (-89, 89), "cosh": (-89, 89), "asinh": (-1e4, 1e4),
          "acosh": (1, 1e4), "atanh": (-1, 1), "erf": (-5, 5)}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
                    1e-45, -1e-45, 1.1754944e-38, 3.4028235e38, -3.4028235e38, 1e-30, -1e-30, 88.72284,
                    -103.97, 8388607.5, -8388608.5, 16777217.0, 1.0000001, 0.99999994, -0.99999994,
                    3.1415927, 1.5707964, 1e20, -1e20], np.float32)


def random_inputs(fn, n=6000, seed=0):
    rng = np.random.default_rng(seed)
    lo, hi = DOMAIN.get(fn, (-1e3, 1e3))
    uniform = rng.uniform(lo, hi, n).astype(np.float32)
    raw = rng.integers(0, 2 ** 32, n // 3, dtype=np.uint64).astype(U).view(np.float32)
    small = (rng.standard_normal(n // 3) * 10.0 ** rng.integers(-30, 3, n // 3)).astype(np.float32)
    halves = (rng.integers(-40, 40, 200) + 0.5).astype(np.float32)          # round's ties
    return np.concatenate([SPECIAL, uniform, raw, small, halves])


def bits(a):
    return np.ascontiguousarray(a, np.float32).view(U)


def ordered(a):
    """float32 encodings as integers in the order of their values (-0 == +0)."""
    b = bits(a).astype(np.int64)
    return np.where(b >= 0x80000000, 0x80000000 - b, b)


def torch_f32(fn, x):
    return getattr(torch, fn)(torch.from_numpy(x)).numpy()


def torch_f64(fn, x):
    with np.errstate(over="ignore"):
        return getattr(torch, fn)(torch.from_numpy(x).double()).numpy().astype(np.float32)


def unary_program(fns, n, dim_order=None):
    """One input [n] (or a 4-D shape), one aten::<fn>.out call and output per function."""
    b = ProgramBuilder()
    shape = n if isinstance(n, list) else [n]
    x = b.tensor(F32, shape)
    outs = []
    for fn in fns:
        out = b.tensor(F32, shape, dim_order=dim_order) if dim_order else b.tensor(F32, shape)
        b.call(f"aten::{fn}.out", self=x, out=out)
        outs.append(out)
    b.set_io([x], outs)
    return b.build()


def run_c(fns, x, tmp_path, dim_order=None):
    shape = list(x.shape)
    prog = unary_program(fns, shape if len(shape) > 1 else shape[0], dim_order)
    got = host_runtime.run(prog, serialize_program(prog), [x], workdir=str(tmp_path))
    return dict(zip(fns, got)), prog


def same_bytes_nan_quiet(got, want):
    """want's bytes, every NaN (of any sign or payload) the quiet NaN 0x7FC00000."""
    nan = np.isnan(want)
    return np.array_equal(np.isnan(got), nan) and np.array_equal(bits(got)[~nan], bits(want)[~nan]) \
        and np.all(bits(got)[nan] == 0x7FC00000)


@pytest.fixture(scope="module")
def c_results(tmp_path_factory):
    """Every function's C result on its own inputs (one program per function set, one input)."""
    tmp = tmp_path_factory.mktemp("unary")
    out = {}
    for fn in ALL:
        x = random_inputs(fn, seed=ALL.index(fn))
        got, prog = run_c([fn], x, tmp)
        out[fn] = (x, got[fn], prog)
    return out


@pytest.mark.parametrize("fn", EXACT)
def test_exact_functions_are_torchs_bytes(fn, c_results):
    x, got, _ = c_results[fn]
    assert same_bytes_nan_quiet(got, torch_f32(fn, x)), fn


@pytest.mark.parametrize("fn", TRANSCENDENTAL)
def test_transcendental_within_bound_of_torch_float64(fn, c_results):
    x, got, _ = c_results[fn]
    want = torch_f64(fn, x)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), fn              # NaN exactly where torch (out of domain, NaN in)
    assert np.all(bits(got)[nan] == 0x7FC00000)
    assert np.abs(ordered(got[~nan]) - ordered(want[~nan])).max() <= ULP_BOUND, fn


@pytest.mark.parametrize("fn", TRANSCENDENTAL)
def test_special_values_are_torchs(fn, c_results):
    """+-0, +-inf, NaN, the domain's edges: torch's values exactly
    (infinities, signed zeros and NaNs where torch float64 rounded gives
    them; its float32 too but for the deviations the docstring names)."""
    x, got, _ = c_results[fn]
    want = torch_f64(fn, x)
    special = ~np.isfinite(want) | (want == 0) | ~np.isfinite(x) | (x == 0)
    assert special[:len(SPECIAL)].any()
    assert same_bytes_nan_quiet(got[special], want[special]), fn
    f32 = torch_f32(fn, x)
    known = {"sinh": np.abs(x) > 88.72, "cosh": np.abs(x) > 88.72,
             "log1p": (np.abs(x) < 1.2e-38) | (np.abs(x) > 1e38)}.get(fn, np.zeros(x.shape, bool))
    assert same_bytes_nan_quiet(got[special & ~known], f32[special & ~known]), fn


def test_edges_by_hand():
    """torch 1.13: rsqrt(-0) = -inf, reciprocal(-0) = -inf, log(0) = -inf,
    log1p(-1) = -inf, atanh(+-1) = +-inf, acosh(1) = 0, sign(NaN) = sign(-0) = 0,
    round half to even, sqrt(-1) and log(-1) NaN."""
    x = np.array([-0.0, -0.0, 0.0, -1.0, 1.0, -1.0, 1.0, np.nan, -0.0, 2.5, -0.5, -1.0, -1.0], np.float32)
    fns = ["rsqrt", "reciprocal", "log", "log1p", "atanh", "atanh", "acosh", "sign", "sign", "round", "round",
           "sqrt", "log"]
    got = np.array([P.float_unary(f, x[i:i + 1])[0] for i, f in enumerate(fns)], np.float32)
    want = np.array([torch_f32(f, x[i:i + 1])[0] for i, f in enumerate(fns)], np.float32)
    assert same_bytes_nan_quiet(got, want)
    assert bits(got[:2]).tolist() == [0xFF800000, 0xFF800000] and bits(got[7:9]).tolist() == [0, 0]
    assert got[9:11].tolist() == [2.0, -0.0] and np.isnan(got[11:]).all()


@pytest.mark.parametrize("fn", ALL)
def test_reference_is_the_c(fn, c_results):
    """The interpreter's numpy reference: the C's bytes for the exact
    functions, within REFERENCE_ULP for the transcendental ones."""
    x, got, prog = c_results[fn]
    ref = run_program(prog, [x])[0]
    if fn in EXACT:
        assert ref.tobytes() == got.tobytes(), fn
        return
    nan = np.isnan(got)
    assert np.array_equal(np.isnan(ref), nan) and np.all(bits(ref)[nan] == 0x7FC00000)
    assert np.abs(ordered(ref[~nan]) - ordered(got[~nan])).max() <= REFERENCE_ULP, fn


def test_channels_last_out_and_many_calls(tmp_path):
    """A 4-D input read through a channels-last out (each tensor through its
    own dim order): every kernel's element in its place."""
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((2, 3, 4, 5)) * 2).astype(np.float32)
    got, _ = run_c(list(ALL), x, tmp_path, dim_order=[0, 2, 3, 1])
    for fn in ALL:
        want = torch_f64(fn, x) if fn in TRANSCENDENTAL else torch_f32(fn, x)
        g = got[fn]
        assert g.shape == x.shape
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(g), nan), fn
        assert np.abs(ordered(g[~nan]) - ordered(want[~nan])).max() <= (ULP_BOUND if fn in TRANSCENDENTAL else 0)


def test_kernels_are_upstream_operators():
    """Upstream ExecuTorch has each (kernels/portable/cpu/op_<name>.cpp): not
    marked ptec only, with the upstream rule of a unary kernel."""
    lines = all_kernels_def().splitlines()
    for fn in ALL:
        key = f"aten::{fn}.out"
        assert RULES[key].source == f"kernels/portable/cpu/op_{fn}.cpp"
        assert RULES[key].upstream_library == "portable"
        assert any(f"/* {key}, src/kernels/portable */" in line for line in lines), key


def samples(shape, n=3, seed=0, scale=3.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(shape, generator=g) * scale + shift,) for _ in range(n)]


# a float value viewed as int32, made by one of these in fp32: (call, input scale, input shift, kernels, ulp)
VIEWED = {
    "x.exp()": (lambda v: v.exp(), 3.0, 0.0, ["aten::exp.out"], 2),
    "torch.log(x.abs() + 1)": (lambda v: torch.log(v.abs() + 1), 3.0, 0.0,
                               ["aten::abs.out", "aten::add.out", "aten::log.out"], 1),
    "torch.sin(x) * torch.cos(x)": (lambda v: torch.sin(v) * torch.cos(v), 3.0, 0.0,
                                    ["aten::sin.out", "aten::cos.out", "aten::mul.out"], 2),
    "x.sqrt()": (lambda v: v.sqrt(), 3.0, 0.0, ["aten::sqrt.out"], 0),
    "-x.round()": (lambda v: -v.round(), 3.0, 0.0, ["aten::round.out", "aten::neg.out"], 0),
    "x.floor() + x.ceil() + x.trunc() + x.sign()": (
        lambda v: v.floor() + v.ceil() + v.trunc() + v.sign(), 3.0, 0.0,
        ["aten::floor.out", "aten::ceil.out", "aten::add.out", "aten::trunc.out", "aten::add.out",
         "aten::sign.out", "aten::add.out"], 0),
    "(x * 0.25).asin().atan().expm1()": (lambda v: torch.asin(v * 0.25).atan().expm1(), 2.0, 0.0,
                                 ["aten::mul.out", "aten::asin.out", "aten::atan.out", "aten::expm1.out"], 2),
    "x.reciprocal().erf()": (lambda v: v.reciprocal().erf(), 3.0, 0.0, ["aten::reciprocal.out", "aten::erf.out"],
                             1),
}


@pytest.mark.parametrize("name", sorted(VIEWED))
def test_viewed_value_is_torchs_bits(name, tmp_path):
    """x.exp().view(torch.int32) and kin: the producers run in fp32 on these
    kernels (capture_dtype_view.mark_viewed_producers), the int32 bits
    within the stated ulps of torch float32's (0: exact)."""
    f, scale, shift, kernels, ulp = VIEWED[name]
    fn = lambda v: f(v).view(torch.int32)
    cal = samples((1, 4, 8), scale=scale, shift=shift)
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    used = [line.split(": ")[1] for line in res.lowered.fallbacks]
    assert used[:-1] == kernels and used[-1] == "ptec::view_dtype.out", used
    prog = parse_program(res.data)
    for (x,) in cal:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = fn(x).numpy()
        assert got.dtype == np.int32 and got.shape == want.shape
        g, w = got.view(np.float32), want.view(np.float32)
        nan = np.isnan(w)                      # NaN where torch's, the quiet NaN (torch's may be negative)
        assert np.array_equal(np.isnan(g), nan) and np.all(got[nan] == 0x7FC00000)
        assert np.abs(ordered(g[~nan]) - ordered(w[~nan])).max() <= ulp, name
        ref = run_program(prog, [x.numpy()])[0]
        assert np.abs(ordered(ref.view(np.float32)) - ordered(g)).max() <= REFERENCE_ULP


@pytest.mark.parametrize("torch_nan", [False, True], ids=["internal", "user's call"])
def test_lowered_node_keeps_the_graphs_meaning(torch_nan, tmp_path):
    """An fp32 elementwise node of sqrt / log / asin / acosh on its kernel
    (backends/portable/lowering.py): the user's own call (attrs torch_nan)
    gives torch's NaN out of the domain; an internal one (ELEMENTWISE's
    function, made for the LUTs, clamps into the domain) the value at the
    domain's edge, as the graph's float evaluation, by a clamp before it."""
    from ptec.backends.portable.lowering import lower_fp32
    from ptec.ir import ELEMENTWISE, Node, _torch_nan
    from ptec.lowered import new_act
    x = np.array([-2.0, -0.5, 0.0, 0.25, 0.5, 1.0, 3.0, np.nan], np.float32)
    for fn in ("sqrt", "log", "log1p", "asin", "acosh", "atanh"):
        b = ProgramBuilder()
        a = new_act(b, F32, [8])
        attrs = dict(fn=fn, torch_nan=True) if torch_nan else dict(fn=fn)
        fallbacks = []
        out = lower_fp32(Node("y", "elementwise", ["x"], attrs, shape=[8]), [a], b, fallbacks)
        b.set_io([a.value], [out.value])
        prog = b.build()
        got = host_runtime.run(prog, serialize_program(prog), [x], workdir=str(tmp_path))[0]
        t = torch.from_numpy(x)
        want = ELEMENTWISE[fn](t, attrs)
        want = (_torch_nan(want, t, attrs) if torch_nan else want).numpy()
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan), fn
        assert np.abs(ordered(got[~nan]) - ordered(want[~nan])).max() <= ULP_BOUND, fn
        assert len(fallbacks) == 1 and fallbacks[0].endswith(f": aten::{fn}.out"), fallbacks
        assert bool(np.isnan(got[0])) == torch_nan, fn                  # -2: out of every domain here
