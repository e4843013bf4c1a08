"""Spectra (ptec.capture_spectral: torch.fft.rfft / fft and torch.stft read
through .abs(), .real, .imag, view_as_real, filtered by a constant and
brought back by torch.fft.irfft), the inverse trigonometric and
hyperbolic LUTs (ptec.inverse_trig), torch.ldexp (capture_ldexp), x.unfold
and the trapezoid rule (capture_trapezoid), F.normalize p != 2 and
torch.renorm (capture_norms), F.bilinear of 3-D inputs (issue 15).
test_function_coverage.py's RUNS rows bound each call's result on the
host; here: every spelling equal to torch in float, the domain edges of
the LUTs, the shape of the rewrites, the refusals in one line naming the
call, and a keyword-spotter-like model on the host and both emulated
boards (a spectrum read otherwise, a complex value: test_complex.py). The
oracle is PyTorch float."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model_checks import board_matches_reference
from ptec.capture import capture
from ptec.compiler import CompileError, compile_model
from ptec.ir import ELEMENTWISE, evaluate
from model_checks import Call
from test_function_coverage import inputs
from test_module_coverage import worst_steps

S3 = (1, 4, 8)
HANN = torch.hann_window(8)

# call of x: (call, input shape, input range). Every spelling torch takes.
FORMS = {
    "torch.asin/acos": (lambda x: torch.asin(x) + torch.acos(x) * 0.3, S3, (-1.0, 1.0)),
    "Tensor.asin/acos": (lambda x: x.asin() * x.acos(), S3, (-1.0, 1.0)),
    "torch.arcsin/arccos/arctan": (lambda x: torch.arcsin(x) + torch.arccos(x) * 2 + torch.arctan(x), S3, (-1.0, 1.0)),
    "Tensor.arcsin/arctanh": (lambda x: x.arcsin() + x.arctanh() + x.arctan(), S3, (-0.9, 0.9)),
    "sinh/cosh/asinh": (lambda x: torch.sinh(x) + x.cosh() + torch.asinh(x) + x.arcsinh(), S3, (-3.0, 3.0)),
    "acosh/arccosh": (lambda x: torch.acosh(x) + x.arccosh(), S3, (1.0, 4.0)),
    "atanh": (lambda x: torch.atanh(x), S3, (-0.99, 0.99)),
    "torch.ldexp(constant exponents)": (lambda x: torch.ldexp(x, torch.tensor([[3], [-2], [0], [1]])), S3, (-3.0, 3.0)),
    "Tensor.ldexp(one exponent)": (lambda x: x.ldexp(torch.tensor(-3)), S3, (-3.0, 3.0)),
    "torch.ldexp(float exponent of x)": (lambda x: torch.ldexp(x, x.flip(-1).round()), S3, (-3.0, 3.0)),
    "rfft.abs()": (lambda x: torch.fft.rfft(x).abs(), S3, (-3.0, 3.0)),
    "abs(rfft), odd n": (lambda x: abs(torch.fft.rfft(x[..., :7])), S3, (-3.0, 3.0)),
    "rfft(n shorter, ortho)": (lambda x: torch.fft.rfft(x, n=5, norm="ortho").abs(), S3, (-3.0, 3.0)),
    "rfft(n longer: zero padded, forward)": (lambda x: torch.fft.rfft(x, 12, -1, "forward").abs(), S3, (-3.0, 3.0)),
    "rfft(dim=1).real/.imag": (lambda x: torch.fft.rfft(x, dim=1).real * torch.fft.rfft(x, dim=1).imag, S3,
                               (-3.0, 3.0)),
    "rfft(dim=0)": (lambda x: torch.fft.rfft(x[0], dim=0).imag, S3, (-3.0, 3.0)),
    "torch.real/torch.imag": (lambda x: torch.real(torch.fft.rfft(x)) - torch.imag(torch.fft.rfft(x)), S3,
                              (-3.0, 3.0)),
    "view_as_real(rfft)": (lambda x: torch.view_as_real(torch.fft.rfft(x, norm="backward")), S3, (-3.0, 3.0)),
    "view_as_real(rfft(dim=1))": (lambda x: torch.view_as_real(torch.fft.rfft(x, dim=-2)), S3, (-3.0, 3.0)),
    "fft of real x": (lambda x: torch.fft.fft(x).abs() + torch.view_as_real(torch.fft.fft(x, norm="ortho"))[..., 1],
                      S3, (-3.0, 3.0)),
    "one rfft, several readers": (lambda x: (lambda z: torch.cat([z.abs(), z.real, z.imag, torch.abs(z) ** 2], -1))(
        torch.fft.rfft(x)), S3, (-3.0, 3.0)),
    "power spectra": (lambda x: torch.fft.rfft(x).abs() ** 2 + torch.square(torch.fft.rfft(x, norm="ortho").abs())
                      + torch.pow(torch.fft.rfft(x).abs(), 2.0) + torch.fft.rfft(x).abs().square(), S3, (-3.0, 3.0)),
    "a magnitude squared and read": (lambda x: (lambda a: a + a.pow(2) + a.pow(2))(torch.fft.rfft(x).abs()), S3,
                                     (-3.0, 3.0)),
    "irfft(rfft)": (lambda x: torch.fft.irfft(torch.fft.rfft(x)), S3, (-3.0, 3.0)),
    "irfft(rfft * real filter, n)": (lambda x: torch.fft.irfft(
        torch.fft.rfft(x) * torch.tensor([1.0, 1.0, 0.5, 0.0, 0.0]), n=8), S3, (-3.0, 3.0)),
    "irfft(complex filter * rfft, ortho)": (lambda x: torch.fft.irfft(
        torch.exp(-2j * torch.pi * torch.arange(5) / 8) * torch.fft.rfft(x, norm="ortho"), 8, norm="ortho"), S3,
        (-3.0, 3.0)),
    "irfft(n longer and shorter, dim 1, forward)": (lambda x: torch.cat([
        torch.fft.irfft(torch.fft.rfft(x, dim=1, norm="forward") * 0.5, n=3, dim=1, norm="forward"),
        torch.fft.irfft(torch.fft.rfft(x, dim=1), n=9, dim=-2)], 1), S3, (-3.0, 3.0)),
    "(rfft * complex filter per row).abs()": (lambda x: (torch.fft.rfft(x) * (torch.arange(20).reshape(4, 5) * 0.1j
                                                                              + 1.0)).abs(), S3, (-3.0, 3.0)),
    "stft(hann, center reflect)": (lambda x: torch.stft(x, 8, 2, window=HANN, return_complex=True).abs(),
                                   (2, 32), (-1.0, 1.0)),
    "stft(1-D, constant pad, hop default)": (lambda x: torch.stft(x[0], 8, window=HANN, pad_mode="constant",
                                                                  return_complex=True).real, (2, 32), (-1.0, 1.0)),
    "stft(center=False, no window)": (lambda x: torch.stft(x, 8, 3, center=False, return_complex=True).imag,
                                      (2, 32), (-1.0, 1.0)),
    "stft(win_length, normalized, twosided)": (lambda x: torch.stft(x, 8, 4, 6, torch.hann_window(6),
                                                                    normalized=True, onesided=False,
                                                                    return_complex=True).abs(), (1, 32), (-1.0, 1.0)),
    "stft(return_complex=False)": (lambda x: torch.stft(x, 8, 4, window=HANN, return_complex=False),
                                   (2, 32), (-1.0, 1.0)),
    "view_as_real(stft)": (lambda x: torch.view_as_real(torch.stft(x, 8, 4, window=HANN, return_complex=True)),
                           (2, 32), (-1.0, 1.0)),
    "Tensor.unfold(last)": (lambda x: x.unfold(-1, 3, 2), S3, (-3.0, 3.0)),
    "Tensor.unfold(dim 1, one window)": (lambda x: x.unfold(1, 4, 1), S3, (-3.0, 3.0)),
    "Tensor.unfold(dim 0)": (lambda x: x[0].unfold(0, 2, 2), S3, (-3.0, 3.0)),
    "torch.trapz": (lambda x: torch.trapz(x) + torch.trapz(x, dx=0.25) + torch.trapz(x, dim=-1), S3, (-3.0, 3.0)),
    "torch.trapz(y, x), dim=1": (lambda x: torch.trapz(x, torch.tensor([0.0, 0.5, 2.0, 2.5]), dim=1), S3,
                                 (-3.0, 3.0)),
    "torch.trapezoid(y, x same shape)": (lambda x: torch.trapezoid(x, torch.linspace(0, 3, 8).expand(1, 4, 8)), S3,
                                         (-3.0, 3.0)),
    "torch.cumulative_trapezoid": (lambda x: torch.cumulative_trapezoid(x, dx=0.5)
                                   + torch.cumulative_trapezoid(x, torch.linspace(0, 1, 8)), S3, (-3.0, 3.0)),
    "torch.trapz(y, computed x)": (lambda x: torch.trapz(x, x.cumsum(-1)), S3, (-3.0, 3.0)),     # capture_composed
    "torch.cumulative_trapezoid(dim 0)": (lambda x: torch.cumulative_trapezoid(x[0], dim=0), S3, (-3.0, 3.0)),
    "torch.renorm": (lambda x: torch.renorm(x, 2, 1, 3.0) + torch.renorm(x, 1, -1, 2.0), S3, (-3.0, 3.0)),
    "Tensor.renorm(2-D, p=3)": (lambda x: x[0].renorm(3, 0, 1.5), S3, (-3.0, 3.0)),
    "torch.renorm(dim 0, none exceeds)": (lambda x: torch.renorm(x, 2, 0, 100.0), S3, (-3.0, 3.0)),
    "torch.renorm(p=inf)": (lambda x: torch.renorm(x, float("inf"), 1, 1.5), S3, (-3.0, 3.0)),
    "F.embedding_bag(computed weight, 2-D ids)": (lambda x: F.embedding_bag(torch.tensor([[0, 1], [3, 3]]), x[0]),
                                                  S3, (-3.0, 3.0)),
    "F.embedding_bag(computed weight, offsets, sum, per_sample_weights)": (
        lambda x: F.embedding_bag(torch.tensor([0, 1, 2, 3, 1]), x[0], torch.tensor([0, 2]), mode="sum",
                                  per_sample_weights=torch.tensor([0.5, 1.0, -1.0, 2.0, 0.25])), S3, (-3.0, 3.0)),
    "F.embedding_bag(computed weight, max, include_last_offset)": (
        lambda x: F.embedding_bag(torch.tensor([0, 2, 3, 1]), x[0], torch.tensor([0, 1, 3, 4]), mode="max",
                                  include_last_offset=True), S3, (-3.0, 3.0)),
    "F.embedding_bag(computed weight, max, an empty bag)": (
        lambda x: F.embedding_bag(torch.tensor([0, 2, 3, 1]), x[0], torch.tensor([0, 0, 3]), mode="max"), S3,
        (-3.0, 3.0)),
    "F.embedding_bag(computed weight, padding_idx, an empty bag)": (
        lambda x: F.embedding_bag(torch.tensor([2, 0, 2, 1, 2]), x[0], torch.tensor([0, 1, 2]), padding_idx=2),
        S3, (-3.0, 3.0)),
    "F.normalize(p=1, 3, inf)": (lambda x: F.normalize(x, 1, 1) + F.normalize(x, p=3.0, dim=-1)
                                 + F.normalize(x, p=float("inf"), dim=0, eps=0.5), S3, (-3.0, 3.0)),
    "F.bilinear(3-D)": (lambda x: F.bilinear(x, x.flip(-1), torch.linspace(-1, 1, 128).reshape(2, 8, 8),
                                             torch.tensor([0.5, -0.2])), S3, (-3.0, 3.0)),
    "F.bilinear(3-D, two widths)": (lambda x: F.bilinear(x[..., :5], x, torch.linspace(-1, 1, 120).reshape(3, 5, 8)),
                                    S3, (-3.0, 3.0)),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_is_torch_in_float(name):
    fn, shape, (lo, hi) = FORMS[name]
    model = Call(fn).eval()
    x = inputs(shape, lo, hi, 1, seed=3)[0][0]
    g = capture(model, [x])
    assert not [n.name for n in g.nodes if n.op == "unsupported"], g.summary()
    assert len({n.name for n in g.nodes}) == len(g.nodes)
    with torch.no_grad():
        want = model(x)
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-4), (got - want).abs().max()


def test_luts_hold_the_edge_value_outside_the_domain():
    """An int8 grid reaches a little past a domain's edge: the table holds
    the edge's value there, never NaN."""
    a = {}
    outside = torch.tensor([-1.02, 1.02], dtype=torch.float64)
    edges = torch.tensor([-math.pi / 2, math.pi / 2], dtype=torch.float64)
    assert torch.allclose(ELEMENTWISE["asin"](outside, a), edges)
    assert torch.allclose(ELEMENTWISE["arccos"](outside, a), torch.tensor([math.pi, 0.0], dtype=torch.float64))
    assert ELEMENTWISE["acosh"](torch.tensor([0.97]), a).item() == 0.0
    assert torch.isinf(ELEMENTWISE["atanh"](outside, a)).all()


def test_asin_on_the_whole_domain(tmp_path):
    """asin of inputs reaching +-1, where its slope is infinite (the int8
    grid holds values past them): every output finite, and within one step
    of torch's asin of the input as the int8 grid holds it (the LUT's own
    rounding; the input's rounding is what the steep edge magnifies)."""
    from ptec import host_runtime
    from ptec.pte import parse_program
    model = Call(lambda x: torch.asin(x)).eval()
    edge = torch.linspace(-1, 1, 32).reshape(S3)
    calibration = inputs(S3, -1.0, 1.0) + [(edge,)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks
    scale, zp = res.graph.node(res.graph.inputs[0]).qparams
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    got = host_runtime.run(parse_program(res.data), res.data, [edge.numpy()], workdir=str(tmp_path))[0]
    held = (torch.clamp(torch.round(edge / scale) + zp, -128, 127) - zp) * scale
    want = torch.asin(held.clamp(-1.0, 1.0)).numpy()
    assert np.isfinite(got).all()
    assert np.abs(got - want).max() <= step * 1.001, np.abs(got - want).max() / step


def _ops(fn, shape):
    g = capture(Call(fn).eval(), [torch.zeros(shape)])
    return [n.op for n in g.nodes]


def test_a_spectrum_is_one_product_and_its_magnitude_one_hypot():
    ops = _ops(lambda x: torch.fft.rfft(x).abs(), S3)
    assert ops.count("linear") == 1 and ops.count("binary_math") == 1 and "unsupported" not in ops, ops
    ops = _ops(lambda x: torch.stft(x, 8, 2, window=HANN, return_complex=True).abs(), (2, 32))
    assert ops.count("conv2d") == 1 and ops.count("pad") == 1 and ops.count("binary_math") == 1, ops
    assert "pad" not in _ops(lambda x: torch.stft(x, 8, 2, center=False, return_complex=True).real, (2, 32))


def test_a_power_spectrum_is_int8():
    """|z| read only squared: re^2 + im^2 (no hypot); read also as itself:
    the hypot, squared by a LUT."""
    ops = _ops(lambda x: torch.stft(x, 8, 2, window=HANN, return_complex=True).abs().pow(2), (2, 32))
    assert "binary_math" not in ops and ops.count("elementwise") == 2 and ops.count("add") == 1, ops
    ops = _ops(lambda x: (lambda a: a * a.pow(2))(torch.fft.rfft(x).abs()), S3)
    assert ops.count("binary_math") == 1 and ops.count("elementwise") == 1, ops


def test_dft_rows_are_torchs():
    from ptec.capture_spectral import dft_matrix
    x = torch.randn(3, 10, dtype=torch.float64)
    w = torch.from_numpy(dft_matrix(10, 10, 6, 1.0).astype(np.float64))
    z = torch.fft.rfft(x)
    assert torch.allclose(x @ w.t(), torch.cat([z.real, z.imag], -1), atol=1e-5)


REFUSED = {
    # call of x: (call, the name in the one line, words of the reason)
    "trapz(y, drawn x)": (lambda x: torch.trapz(x, torch.rand(8).cumsum(0)), "trapz", ""),
}


class TwoInputs(torch.nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x, x.flip(-1) * 0.5)


@pytest.mark.parametrize("shape", [(1, 8), (3, 8), (1, 4, 8)])
def test_bilinear_module_of_any_rows_is_int8(shape, tmp_path):
    """nn.Bilinear over one row, several, and a 3-D input: the batch
    matmul's dims equal, the bias a linear by the identity, every op int8."""
    torch.manual_seed(0)
    model = TwoInputs(torch.nn.Bilinear(8, 8, 3)).eval()
    calibration = inputs(shape, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"{shape}: {worst:.2f} output steps")
    assert worst <= 2.0, worst              # measured 1.54, 1.33, 1.30


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line(name):
    fn, call, words = REFUSED[name]
    calibration = inputs(S3, -3.0, 3.0, 2)
    with pytest.raises(CompileError) as e:
        compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    message = str(e.value)
    assert "\n" not in message, message
    assert f"ptec has no kernel for {call}" in message and words in message, message


class KeywordSpotter(torch.nn.Module):
    """A keyword spotter's front end in the model: the log magnitude of an
    STFT (a hann window buffer, centred) and the log power of the rfft of fixed frames, each a
    conv1d over time, pooled, joined, then a linear classifier."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv_stft = torch.nn.Conv1d(17, 6, 3)
        self.conv_frames = torch.nn.Conv1d(17, 6, 3)
        self.head = torch.nn.Linear(12, 4)
        self.register_buffer("window", torch.hann_window(32))

    def forward(self, x):                                                       # x [1, 256] audio
        spec = torch.stft(x, 32, 16, window=self.window, return_complex=True).abs()             # [1, 17, 17]
        a = torch.relu(self.conv_stft(torch.log(spec + 0.1))).mean(-1)                           # [1, 6]
        frames = x.reshape(1, 8, 32)
        power = torch.fft.rfft(frames, norm="ortho").abs().pow(2).transpose(1, 2)                # [1, 17, 8]
        b = torch.relu(self.conv_frames(torch.log(power + 0.1))).mean(-1)                        # [1, 6]
        return self.head(torch.cat([a, b], -1))                                                  # [1, 4]


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m33"])
def test_keyword_spotter_on_host_and_boards(target, tmp_path):
    model = KeywordSpotter().eval()
    calibration = inputs((1, 256), -1.0, 1.0)
    res = compile_model(model, [calibration[0][0]], calibration,
                        target="cortex-m55" if target == "host" else target)
    # the stft magnitude's hypot in fp32, and the + 0.1 that reads it; the log power of the rfft in fp32 from
    # the float input (ptec.magnitude_logs: a power re ** 2 + im ** 2; was int8, 2.77 output steps)
    assert sorted(set(f.split(": ")[-1] for f in res.lowered.fallbacks)) == [
        "aten::add.out", "aten::hypot.out", "aten::linear.out", "aten::log.out", "aten::mul.out",
        "aten::permute_copy.out", "aten::slice_copy.Tensor_out", "aten::view_copy.out"], res.lowered.fallbacks
    if target == "host":
        worst = worst_steps(model, res, calibration[:4], tmp_path)
        assert worst <= 2.0, worst                     # measured 1.77 (2.77 with the power int8)
    else:
        board_matches_reference(res.data, inputs((1, 256), -1.0, 1.0, 1, seed=5)[0][0].numpy(), target, tmp_path)
