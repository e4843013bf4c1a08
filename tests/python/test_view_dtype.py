"""x.view(dtype) as another dtype (capture_dtype_view, issue 15) against
torch, bit for bit.

The program keeps the viewed value in its real dtype (a float program
input as the float32 bytes given, an int input as its integers) and
ptec::view_dtype.out copies those bytes into a tensor of the new dtype, so
the result is torch's exactly: random values and specials (NaN with
payloads, +-inf, +-0.0, denormals, the extremes), every integer dtype ptec
holds, shapes of rank 0 to 4 (a 4-D value is channels-last in ptec: viewed
in torch's order), the result read downstream (`.float()`, `& 0xFF`,
shifts, comparisons, narrow arithmetic, a view back) and as a program
output. A float value computed before the view is made in fp32 with its
producers (add, sub, mul, div, clamp, reshape, permute: torch's bits
exactly; atan2 within 1 ulp); one computed by what ptec runs only in int8
(exp, conv) is refused in one line with .to(dtype) advice.
Every program also runs on the reference interpreter, whose bytes
ptec-run's must equal. Refused in one line: float64 / bool / float16
views, and torch's own errors (stride, last size) quoting torch."""
import numpy as np
import pytest
import torch

from model_checks import Call, cli_refusal
from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program

SPECIAL = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-40, -1e-45, 1.17549435e-38, 3.4028235e38,
           -3.4028235e38, 1.0, -2.5]


def run(fn, x, tmp_path, calibration=None):
    """fn compiled (on a finite calibration sample), run by ptec-run on x,
    its bytes the reference interpreter's; the outputs and the fallbacks."""
    cal = x if calibration is None else calibration
    res = compile_model(Call(fn).eval(), [cal], [(cal,)])
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
    want = run_program(prog, [x.numpy()])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
    return got, res.lowered.fallbacks


def exact(fn, x, tmp_path, calibration=None):
    """fn's program output equals torch's, bytes, dtype and shape."""
    (got,), fallbacks = run(fn, x, tmp_path, calibration)
    want = fn(x).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    assert got.tobytes() == want.tobytes()
    assert any("ptec::view_dtype.out" in f for f in fallbacks), fallbacks
    return got


def floats(shape, seed):
    """Random float32 values (every exponent) with the specials and NaN payloads in the first elements."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** 32, int(np.prod(shape)), dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32).copy()
    k = min(len(SPECIAL), x.size)
    x[:k] = np.array(SPECIAL[:k], np.float32)
    if x.size > k + 2:
        x[k:k + 2] = np.array([0x7FC00001, 0xFFA00000], np.uint32).view(np.float32)   # quiet / signalling NaN
    return torch.from_numpy(x.reshape(shape))


def calib(shape):
    return torch.randn(shape, generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int16, torch.int8, torch.uint8, torch.int64],
                         ids=lambda d: str(d).replace("torch.", ""))
@pytest.mark.parametrize("shape", [(24,), (3, 8), (2, 3, 4), (2, 3, 4, 6)], ids=str)
def test_float_input_viewed_as_integers(dtype, shape, tmp_path):
    x = floats(shape, len(shape))
    got = exact(lambda v: v.view(dtype), x, tmp_path, calib(shape))
    size = torch.tensor([], dtype=dtype).element_size()
    assert got.shape == shape[:-1] + (shape[-1] * 4 // size,)


def test_zero_dim_and_keyword(tmp_path):
    x = torch.tensor(-0.0)
    exact(lambda v: v.view(torch.int32), x, tmp_path, torch.tensor(0.5))
    exact(lambda v: v.view(dtype=torch.int32), floats((2, 4), 3), tmp_path, calib((2, 4)))


INTS = {torch.int32: (-2 ** 31, 2 ** 31), torch.int64: (-2 ** 63, 2 ** 63 - 1), torch.int16: (-2 ** 15, 2 ** 15),
        torch.uint8: (0, 256), torch.int8: (-128, 128)}


@pytest.mark.parametrize("src, dst", [(torch.int32, torch.float32), (torch.int64, torch.float32),
                                      (torch.uint8, torch.float32), (torch.int16, torch.float32),
                                      (torch.int32, torch.uint8), (torch.uint8, torch.int8),
                                      (torch.int16, torch.int32), (torch.int8, torch.int64),
                                      (torch.int32, torch.int64)],
                         ids=lambda d: str(d).replace("torch.", ""))
def test_integer_input_viewed(src, dst, tmp_path):
    lo, hi = INTS[src]
    g = torch.Generator().manual_seed(7)
    x = torch.randint(lo, hi, (3, 16), dtype=src, generator=g)
    if src is torch.int32:          # NaN, inf, -0.0 and a denormal among them
        x[0, :6] = torch.tensor([0x7FC00001, 0x7F800000, -0x80000000, 1, 0xFF800000 - 2 ** 32, 0x7FFFFFFF])
    exact(lambda v: v.view(dst), x, tmp_path)


READERS = {
    "& 0xFF": lambda v: (v.view(torch.int32) & 0xFF).float(),
    ">> 23 (exponent)": lambda v: ((v.view(torch.int32) >> 23) & 0xFF).float(),
    "> 0 (sign by bits)": lambda v: v.view(torch.int32) > 0,
    "== bits of 1.0": lambda v: (v.view(torch.int32) == 0x3F800000).float(),
    "int16 + 1": lambda v: v.view(torch.int16) + 1,
    "uint8 * 3": lambda v: v.view(torch.uint8) * 3,
    "uint8 .float()": lambda v: v.view(torch.uint8).float(),
    "where": lambda v: torch.where(v.view(torch.int32) < 0, v.view(torch.int32), 7),
    "abs by bits": lambda v: (v.view(torch.int32) & 0x7FFFFFFF).view(torch.float32),
    "view back": lambda v: v.view(torch.int32).view(torch.float32),
    "int64 .sum()": lambda v: v.view(torch.int64).sum(-1),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_read_downstream(name, tmp_path):
    x = floats((4, 8), 11)
    exact(READERS[name], x, tmp_path, calib((4, 8)))


def test_fp32_steps_between_views(tmp_path):
    """int32 bits viewed as float32, doubled by an fp32 mul, viewed back:
    torch's bits (NaN, inf and denormals through the mul)."""
    x = torch.from_numpy(floats((3, 8), 5).numpy().view(np.int32).copy())
    cal = torch.randint(0x3E000000, 0x41000000, (3, 8), dtype=torch.int32, generator=torch.Generator().manual_seed(2))
    exact(lambda v: (v.view(torch.float32) * 2.0).view(torch.int32), x, tmp_path, cal)


CHAINS = {          # float32 values computed before the view: each step fp32, torch's rounding
    "x * 3 + 1": lambda v: (v * 3 + 1).view(torch.int32),
    "(x * 3 + 1) & 0xFFFF": lambda v: ((v * 3 + 1).view(torch.int32) & 0xFFFF).float(),
    "x / 3 - 0.5": lambda v: (v / 3 - 0.5).view(torch.int32),
    "x * x - x": lambda v: (v * v - v).view(torch.int32),
    "relu(x - 0.25)": lambda v: torch.relu(v - 0.25).view(torch.int32),
    "clamp(x * 2)": lambda v: (v * 2).clamp(-0.5, 1.5).view(torch.int32),
    "(x.t() * 3).contiguous() as uint8": lambda v: (v.t() * 3).contiguous().view(torch.uint8),
    "(x * 2) as int16": lambda v: (v * 2).view(torch.int16),
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_computed_value_is_viewed_bit_exact(name, tmp_path):
    """A float value computed before the view is made in fp32 with its
    producers (capture_dtype_view.mark_viewed_producers): its bits are
    torch's float32 bits exactly (an int8 grid's dequantized value has
    others: 0.5 of the 16 low bits of (x * 3 + 1) off)."""
    x = torch.rand(4, 8, generator=torch.Generator().manual_seed(3)) * 8 - 4
    exact(CHAINS[name], x, tmp_path, calib((4, 8)))


def test_computed_by_atan2_within_one_unit_in_the_last_place(tmp_path):
    """atan2 (fp32 binary_math) is libm's float32 atan2: its bits within 1 of torch's (same sign: ulps)."""
    x = torch.rand(4, 8, generator=torch.Generator().manual_seed(4)) * 8 - 4
    fn = lambda v: torch.atan2(v, v * 0.5 + 1).view(torch.int32)
    (got,), _ = run(fn, x, tmp_path, calib((4, 8)))
    assert np.abs(got.astype(np.int64) - fn(x).numpy().astype(np.int64)).max() <= 1


@pytest.mark.parametrize("fn", [lambda v: v.sigmoid().view(torch.int32),
                                lambda v: torch.nn.functional.conv1d(v.reshape(4, 1, 8), torch.ones(1, 1, 3))
                                .view(torch.int32)], ids=["sigmoid", "conv1d"])
def test_computed_off_fp32_is_refused_in_one_line(fn):
    """A producer ptec runs only on an int8 grid: its bits would not be torch's, refused with .to advice."""
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(fn).eval(), [calib((4, 8))], [(calib((4, 8)),)])
    message = str(e.value)
    assert "\n" not in message and "reinterprets float32 bits" in message and ".to(dtype)" in message, message


def test_refusal_of_an_operator_producer_names_the_users_expression(tmp_path):
    """The producer an int8 grid makes is named as the user wrote it (the
    operator and the model's line), not fx's name matmul (operator.matmul)."""
    line = cli_refusal(tmp_path, """
import torch, torch.nn as nn
class M(nn.Module):
    def forward(s, x):
        y = x @ x.t()
        return y.view(torch.int32)
def model():
    return M().eval(), (torch.randn(4, 8),)
""")
    assert "operator not supported: the operator @ at models.py:5 (`y = x @ x.t()`): a view as another dtype" \
        in line, line
    assert "matmul (operator.matmul)" not in line, line


@pytest.mark.parametrize("fn, words", [
    (lambda v: v.view(torch.float64), "float64"),
    (lambda v: v.view(torch.bool), "bool"),
    (lambda v: v.view(torch.float16), "float16"),
    (lambda v: v.t().view(torch.uint8), "self.stride(-1) must be 1 to view Float as Byte"),
    (lambda v: v[:, :3].view(torch.int64), "self.size(-1) must be divisible by 2 to view Float as Long"),
    (lambda v: v.sum().view(torch.uint8), "self.dim() cannot be 0"),
], ids=["float64", "bool", "float16", "stride", "last size", "0-d"])
def test_refused_in_one_line(fn, words):
    with pytest.raises((UnsupportedOperator, CaptureError)) as e:
        compile_model(Call(fn).eval(), [calib((4, 8))], [(calib((4, 8)),)])
    message = str(e.value)
    assert "\n" not in message and "view (Tensor.view)" in message and words in message, message


def test_kernels_are_ptec_only():
    """Upstream ExecuTorch has neither ptec::view_dtype.out nor aten::histc.out
    (test_fp32_histc.py): all_kernels.def marks them ptec only, which keeps
    them out of the i.MX93 firmware's default list."""
    from ptec.ops import all_kernels_def
    from ptec.pte.upstream_rules import RULES
    lines = all_kernels_def().splitlines()
    for key in ("ptec::view_dtype.out", "aten::histc.out"):
        assert RULES[key].upstream_library.startswith("none")
        assert any(f"/* {key}, src/kernels/portable, ptec only */" in line for line in lines), key
