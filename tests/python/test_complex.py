"""Complex values inside a program (ptec.capture_complex, issue 15): each
complex value carried as its [..., 2] real and imaginary parts, each call on
it rewritten as real ops on that pair. test_function_coverage.py's RUNS rows
bound each call's result on the host; here: every call and spelling equal to
torch in float (the rewrite is exact), the DFT matrices against torch.fft, the
shape of the rewrites (int8 ops, operands widened to equal shapes), chains
on the host within their bounds and on the emulated Cortex-M55, and the
refusals (a complex program output, a call the module does not rewrite) in
one line naming the call, from the API and the CLI. The oracle is PyTorch
float."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference, cli_refusal
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator, evaluate
from model_checks import Call
from test_function_coverage import inputs
from test_module_coverage import worst_steps

S3 = (1, 4, 8)
C5 = torch.exp(1j * torch.arange(5) * 0.7)           # a complex constant over rfft's 5 bins
HANN = torch.hann_window(8)


def rfft(x, **kw):
    return torch.fft.rfft(x, **kw)


# call of x: (call, input shape). Every output real (view_as_real of a complex result).
FORMS = {
    # z * c, z / c: a number, a real or complex constant, a real value, a complex value
    "z * 2, 2 * z, torch.mul, Tensor.mul": lambda x: torch.view_as_real(
        rfft(x) * 2 + 2.0 * rfft(x) + torch.mul(rfft(x), 3) + rfft(x).mul(0.5)),
    "z * complex number": lambda x: torch.view_as_real(rfft(x) * (1 - 2j) + 1j * rfft(x)),
    "z * real constant": lambda x: torch.view_as_real(rfft(x) * torch.tensor([1.0, 0.5, 0.0, -1.0, 2.0])),
    "z * complex constant": lambda x: torch.view_as_real(rfft(x) * C5 + C5[:1] * rfft(x)),
    "z * real value, broadcast": lambda x: torch.view_as_real(rfft(x) * x[..., :5] + rfft(x) * x[0, 0, :5]
                                                              + rfft(x[0, 0]) * x[..., 3:]),
    "z * w": lambda x: torch.view_as_real(rfft(x) * rfft(x.flip(1)) + rfft(x) * rfft(x)),
    "z * w, broadcast": lambda x: torch.view_as_real(rfft(x) * rfft(x[0, 1])),
    "z / number, complex number": lambda x: torch.view_as_real(rfft(x) / 4 + torch.div(rfft(x), 2 + 1j)),
    "z / real constant": lambda x: torch.view_as_real(rfft(x) / torch.tensor([1.0, 2.0, 4.0, -1.0, 0.5])),
    "z / complex constant": lambda x: torch.view_as_real(rfft(x) / C5),
    "z / real value": lambda x: torch.view_as_real(rfft(x) / (x[..., 3:].abs() + 1) + rfft(x).div(x[..., :5] + 4)),
    "real value * complex number / constant": lambda x: torch.view_as_real(x[..., :5] * (1 + 1j) + x[..., :5] * C5
                                                                            + x[..., 3:] / (2 - 1j)),
    # z + w, z - w
    "z + w, z - w": lambda x: torch.view_as_real(rfft(x) + torch.fft.fft(x[..., :5]) - rfft(x.flip(1))
                                                 + torch.add(rfft(x), rfft(x)) - torch.sub(rfft(x), rfft(x) * 2)),
    "z + w, broadcast": lambda x: torch.view_as_real(rfft(x) + rfft(x[0, 2])),
    "z + number, constant": lambda x: torch.view_as_real(rfft(x) + 1 - 2j + (3j - rfft(x)) + (rfft(x) - C5)
                                                         + (torch.tensor([1.0, 0.0, 2.0, 0.0, 1.0]) + rfft(x))),
    "z + real value, real value - z": lambda x: torch.view_as_real(rfft(x) + x[..., :5] - x[..., 3:]
                                                                   + (x[..., 1:6] - rfft(x))),
    "real value + complex number": lambda x: torch.view_as_real(x + 1j) + torch.view_as_real(x - (1 + 2j))
    + torch.view_as_real((2 - 1j) - x),
    "-z": lambda x: torch.view_as_real(-rfft(x) + torch.neg(rfft(x)) + rfft(x).neg()),
    # parts, conj, abs, angle
    "conj": lambda x: torch.view_as_real(torch.conj(rfft(x) * C5).resolve_conj() + rfft(x).conj().resolve_conj()
                                         + torch.conj_physical(rfft(x))),
    ".real, .imag, torch.real, torch.imag": lambda x: (rfft(x) * 1j).real + (rfft(x) * C5).imag
    + torch.real(rfft(x) * 2) + torch.imag(rfft(x) * 2),
    "abs": lambda x: (rfft(x) * C5).abs() + torch.abs(rfft(x) * 2) + abs(rfft(x) * 1j),
    "angle": lambda x: torch.angle(rfft(x)[..., 1:4] * C5[1:4]) + (rfft(x)[..., 1:4] * 2).angle(),
    # making complex values
    "torch.complex": lambda x: torch.view_as_real(torch.complex(x, x.flip(-1) * 0.5)),
    "torch.complex, broadcast": lambda x: torch.view_as_real(torch.complex(x, x[0, 0]) + torch.complex(x[0, 1], x)),
    "torch.polar": lambda x: torch.view_as_real(torch.polar(x.abs() + 0.5, x)),
    "torch.polar, abs and angle back": lambda x: torch.polar(x.abs() + 0.5, x * 0.75).abs()
    + torch.angle(torch.polar(x.abs() + 0.5, x * 0.75)),
    "view_as_complex, view_as_real": lambda x: torch.view_as_real(torch.view_as_complex(x.reshape(1, 4, 4, 2))
                                                                  * (0.5 + 1j)),
    # transforms of complex values (and of real ones capture_spectral does not read in its layout)
    "fft of a complex value": lambda x: torch.view_as_real(torch.fft.fft(rfft(x))),
    "fft(dim 1, ortho), n shorter and longer": lambda x: torch.view_as_real(
        torch.fft.fft(rfft(x), dim=1, norm="ortho") + torch.fft.fft(rfft(x), n=3, dim=1)[:, :, :5].sum(1, True)
        + torch.fft.fft(rfft(x), 7, -1, "forward")[..., :5]),
    "ifft": lambda x: torch.view_as_real(torch.fft.ifft(torch.fft.fft(x) * 0.5)),
    "ifft(n, norm) of a complex value": lambda x: torch.view_as_real(
        torch.fft.ifft(rfft(x), n=3, norm="forward") + torch.fft.ifft(rfft(x)[..., :3], dim=1, norm="ortho")),
    "ifft of a real value": lambda x: torch.view_as_real(torch.fft.ifft(x, n=6, norm="forward").resolve_conj()),
    "rfft returned as pairs": lambda x: torch.view_as_real(rfft(x, dim=1) * 2),
    "fft of a real value as pairs": lambda x: torch.view_as_real(torch.fft.fft(x, n=5) * 1j),
    "irfft of a complex value": lambda x: torch.fft.irfft(rfft(x) * rfft(x.flip(-1))),
    "irfft(n, dim, norm)": lambda x: torch.fft.irfft(rfft(x) * 1j, n=6, norm="ortho")
    + torch.fft.irfft(torch.fft.fft(x, dim=1), n=6, dim=1, norm="forward")[..., :6, :6].sum(),
    "irfft over another dim than rfft's": lambda x: torch.fft.irfft(rfft(x), dim=1),
    "irfft(rfft(x) * rfft(w)): circular convolution": lambda x: torch.fft.irfft(
        rfft(x) * rfft(torch.tanh(x.flip(-1))), n=8),
    "stft times a value": lambda x: torch.view_as_real(torch.stft(x[0], 8, 2, window=HANN, return_complex=True)
                                                       * (0.5 + 0.5j)),
    "stft read through a product": lambda x: (torch.stft(x, 8, 4, center=False, return_complex=True)
                                              * torch.stft(x.flip(-1), 8, 4, center=False, return_complex=True)).real,
    # reductions, joins, pieces, views
    "sum, mean over dims": lambda x: torch.view_as_real(rfft(x).sum(1) + rfft(x).mean(-1, keepdim=True)
                                                        + torch.sum(rfft(x), dim=(0, 1)) + torch.mean(rfft(x), 1)),
    "sum, mean of all": lambda x: torch.view_as_real(rfft(x).sum() + rfft(x).mean() * 1j),
    "cat, stack": lambda x: torch.view_as_real(torch.cat([rfft(x), torch.fft.fft(x)], -1)[..., :5]
                                               + torch.stack([rfft(x), rfft(x) * 2], 1).sum(1)
                                               + torch.cat((rfft(x), rfft(x)), dim=1)[:, 2:6]),
    "slices, ints, Ellipsis, None": lambda x: torch.view_as_real(rfft(x)[..., 1:4] + rfft(x)[0, :, 1:4][None]
                                                                 + rfft(x)[:, -1, None, -3:] + rfft(x)[0, 1, 2:5]),
    "reshape, view, flatten, unsqueeze, squeeze": lambda x: torch.view_as_real(
        rfft(x).reshape(2, 10).view(20).unsqueeze(0).squeeze(0).flatten() + rfft(x).flatten(1)[0]),
    "permute, transpose, t": lambda x: torch.view_as_real(rfft(x).permute(0, 2, 1) + rfft(x).transpose(1, 2)
                                                          + rfft(x)[0].t()[None] + torch.permute(rfft(x), (0, 2, 1))),
}


def _capture(fn, shape=S3, seed=3):
    model = Call(fn).eval()
    x = inputs(shape, -3.0, 3.0, 1, seed=seed)[0][0]
    return model, x, capture(model, [x])


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_is_torch_in_float(name):
    shape = (2, 32) if "stft" in name else S3
    model, x, g = _capture(FORMS[name], shape)
    assert not [n.name for n in g.nodes if n.op == "unsupported"], g.summary()
    assert len({n.name for n in g.nodes}) == len(g.nodes)
    with torch.no_grad():
        want = model(x)
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape, (got.shape, want.shape)
    assert torch.allclose(got, want.float(), rtol=1e-4, atol=1e-4), (got - want).abs().max()


class Buffers(torch.nn.Module):
    """A complex filter made from buffers (constants the trace folds: h.conj()
    one with torch's conjugate bit) and a complex value built from them."""

    def __init__(self):
        super().__init__()
        self.register_buffer("h", torch.exp(1j * torch.arange(5) * 0.3))
        self.register_buffer("w", torch.linspace(0.0, 1.0, 5))

    def forward(self, x):
        z = torch.fft.rfft(x)
        return torch.cat([torch.fft.irfft(z * self.h.conj() * torch.polar(torch.ones(5), self.w), n=8),
                          torch.view_as_real(z * self.h.conj() + self.h).flatten(-2)], -1)


def test_constants_from_buffers():
    model = Buffers().eval()
    x = inputs(S3, -3.0, 3.0, 1, seed=3)[0][0]
    g = capture(model, [x])
    assert not [n.name for n in g.nodes if n.op == "unsupported"], g.summary()
    with torch.no_grad():
        want = model(x)
    assert torch.allclose(evaluate(g, [x])[0], want, rtol=1e-4, atol=1e-4)


def test_interleaved_dft_is_torchs():
    """The [2M, 2L] real matrix of a complex DFT acting on interleaved
    (re, im) pairs gives torch.fft.fft / ifft (n shorter and longer than
    the input) in float64."""
    from ptec.capture_complex import _complex_dft, _interleaved
    z = torch.randn(3, 6, dtype=torch.complex128)
    pairs = torch.view_as_real(z).reshape(3, 12)
    for n, inverse, norm in ((6, False, None), (4, False, "ortho"), (9, True, None), (6, True, "forward")):
        scale = {None: 1.0 / n if inverse else 1.0, "ortho": n ** -0.5, "forward": 1.0 if inverse else 1.0 / n}[norm]
        w = torch.from_numpy(_interleaved(_complex_dft(n, 6, n, scale, inverse)).astype(np.float64))
        want = (torch.fft.ifft if inverse else torch.fft.fft)(z, n=n, norm=norm)
        assert torch.allclose((pairs @ w.t()).reshape(3, n, 2), torch.view_as_real(want), atol=1e-5), (n, inverse)


def _ops(fn):
    return [n.op for n in _capture(fn)[2].nodes]


def test_rewrites_are_real_ops():
    """z * (a + bi) is one linear over the pair's dim; z * w four muls,
    a sub, an add and a cat; a sum one linear by ones; fft of a complex
    value one linear; view_as_real / view_as_complex no op of their own."""
    ops = _ops(lambda x: torch.view_as_real(torch.complex(x, x.flip(-1)) * (1 + 2j)))
    assert ops.count("linear") == 1 and "mul" not in ops, ops
    ops = _ops(lambda x: torch.view_as_real(rfft(x) * rfft(x.flip(1))))
    assert ops.count("mul") == 4 and ops.count("sub") == 1 and ops.count("add") == 1, ops
    ops = _ops(lambda x: torch.view_as_real(rfft(x).sum(1)))
    assert ops.count("linear") == 2 and "mean" not in ops, ops
    ops = _ops(lambda x: torch.view_as_real(torch.fft.fft(rfft(x))))
    assert ops.count("linear") == 2 and "unsupported" not in ops, ops
    ops = _ops(lambda x: torch.view_as_real(torch.view_as_complex(x.reshape(1, 4, 4, 2))))
    assert ops.count("identity") == 2, ops


def test_operands_are_widened_to_int8():
    """ptec's int8 mul and add broadcast over channels only: a real value,
    a constant or a broadcast complex operand is copied out to the
    product's shape, so every op stays int8."""
    for fn in (lambda x: torch.view_as_real(rfft(x) * x[0, 0, :5]),
               lambda x: torch.view_as_real(rfft(x) * C5 + rfft(x[0, 1]) + 1j),
               lambda x: torch.view_as_real(torch.complex(x, x[0, 0]) * rfft(x[0, 0], n=14)[:8])):
        model = Call(fn).eval()
        calibration = inputs(S3, -3.0, 3.0, 4)
        res = compile_model(model, [calibration[0][0]], calibration)
        assert not res.lowered.fallbacks, res.lowered.fallbacks


# chains: (call of x, input shape, bound in output steps, "int8" or "fp32"), measured in comments
CHAINS = {
    "(rfft(x) * 2).abs()": (lambda x: (rfft(x) * 2).abs(), S3, 2.0, "fp32"),                        # 1.57
    "irfft(rfft(x) * rfft(w)), w computed": (lambda x: torch.fft.irfft(
        rfft(x) * rfft(torch.tanh(x.flip(-1))), n=8), S3, 3.0, "int8"),                           # 2.38
    "fft(rfft(x)).abs()": (lambda x: torch.fft.fft(rfft(x)).abs(), S3, 3.0, "fp32"),               # 2.61
    "ifft(fft(x) * H).real": (lambda x: torch.fft.ifft(torch.fft.fft(x) * torch.exp(
        -2j * torch.pi * torch.arange(8) / 8)).real, S3, 3.0, "int8"),                            # 2.38: a delay
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_chain_within_its_bound(name, tmp_path):
    fn, shape, bound, kind = CHAINS[name]
    model = Call(fn).eval()
    calibration = inputs(shape, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert kind == ("fp32" if res.lowered.fallbacks else "int8"), res.lowered.fallbacks
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"{name}: {worst:.2f} output steps")
    assert worst <= bound, worst


def test_circular_convolution_on_the_m55(tmp_path):
    model = Call(CHAINS["irfft(rfft(x) * rfft(w)), w computed"][0]).eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration, target="cortex-m55")
    board_matches_reference(res.data, inputs(S3, -3.0, 3.0, 1, seed=5)[0][0].numpy(), "cortex-m55", tmp_path)


REFUSED = {
    # call of x: (the call named in the one line, words of the reason)
    "rfft returned": (lambda x: rfft(x), "fft_rfft (torch.fft_rfft)", "torch.view_as_real"),
    "rfft returned beside its magnitude": (lambda x: (rfft(x).abs(), rfft(x)), "fft_rfft", "torch.view_as_real"),
    "a product returned": (lambda x: rfft(x) * 2.0, "mul (operator.mul)", "complex program output"),
    "stft returned": (lambda x: torch.stft(x[0], 4, 2, window=torch.hann_window(4), return_complex=True),
                      "stft (torch.stft)", "torch.view_as_real"),
    "torch.complex returned": (lambda x: torch.complex(x, x), "(torch.complex)", "torch.view_as_real"),
    "view_as_complex returned": (lambda x: torch.view_as_complex(x.reshape(1, 4, 4, 2)), "view_as_complex",
                                 "torch.view_as_real"),
    # (exp, z / w, fft2, a slice with a step, z.view(torch.float32) run: test_complex_functions.py; tanh, an index
    # list, ...: test_complex_more.py)
    "a view of complex128 as float32": (lambda x: rfft(x).cdouble().view(torch.float32) * 2,
                                        "view (Tensor.view)", "[..., 2] real and imaginary parts"),
    "a function torch does not define on a complex value": (lambda x: torch.view_as_real(torch.exp2(rfft(x))),
                                                            "exp2 (torch.exp2)", "torch itself does not compute it"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line(name):
    fn, call, words = REFUSED[name]
    calibration = inputs(S3, -3.0, 3.0, 2)
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    message = str(e.value)
    assert "\n" not in message, message
    assert "operator not supported: " in message and call in message and words in message, message


class LayerOfAComplexValue(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return torch.view_as_real(self.act(torch.fft.rfft(x)))


def test_a_layer_torch_does_not_run_on_a_complex_value_is_refused():
    """nn.ReLU of a complex value: torch raises (its clamp), so ptec refuses
    quoting torch, naming the layer (nn.Tanh, nn.Sigmoid, ... run:
    test_complex_more.py)."""
    x = inputs(S3, -3.0, 3.0, 1)[0][0]
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(LayerOfAComplexValue().eval(), [x], [(x,)])
    assert "act (nn.ReLU)" in str(e.value) and "\n" not in str(e.value), str(e.value)
    assert "clamp is not supported for complex" in str(e.value), str(e.value)


def test_cli_refuses_a_complex_output_with_exit_2(tmp_path):
    line = cli_refusal(tmp_path,
                       "import torch\n"
                       "class M(torch.nn.Module):\n"
                       "    def forward(self, x):\n"
                       "        return torch.fft.rfft(x) * 2.0\n"
                       "def model():\n"
                       "    return M(), (torch.randn(1, 4, 8),)\n")
    assert "mul (operator.mul)" in line and "torch.view_as_real(z)" in line, line
