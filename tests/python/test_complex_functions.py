"""Functions of complex values (issue 15): ptec.capture_complex_math's
exp, log, sqrt, pow, reciprocal, z / w, sgn and square, ptec.capture_fft_dims'
fft2 ... irfftn, hfft / ihfft and fftshift / ifftshift, and capture_complex's
slices with a step, z.view(torch.float32) and nn.Identity / Flatten /
Unflatten of a complex value. The oracle is PyTorch float: every spelling
equal to torch in float (the rewrites are exact, torch's branch
conventions included: sqrt(-r + 0i) = i sqrt(r), log's angle pi on the
negative real axis, 0 ** p, sgn(0) = 0), the int8 / fp32 programs within
their bounds on the host (away from |z| = 0, where log, 1 / z and sgn are
ill-conditioned, and from the branch cut's far side: values reaching the
negative real axis from above only), one chain on the emulated
Cortex-M55, and the calls still refused in one line naming them."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator, evaluate
from model_checks import Call
from test_function_coverage import inputs
from test_module_coverage import worst_steps

S3 = (1, 4, 8)
SIGNS = torch.tensor([1.0, -1.0, -1.0, 1.0, -1.0, 1.0, -1.0, -1.0])


def rfft(x, **kw):
    return torch.fft.rfft(x, **kw)


def Z(x):
    """A complex value of every quadrant."""
    return torch.complex(x, x.flip(-1) * 0.5)


def U(x):
    """The upper half-plane, |z| >= 0.25: no branch cut, no zero."""
    return torch.complex(x, x.flip(-1).abs() + 0.25)


def W(x):
    """Im z >= 1: |1 / z| <= 1."""
    return torch.complex(x, x.flip(-1).abs() + 1.0)


def CUT(x):
    """|Re z| >= 0.5, Im z >= 0 and exactly 0 at about half the elements,
    several on the negative real axis: the branch cut reached from above,
    where torch's principal branch puts the angle pi."""
    return torch.complex((x.abs() + 0.5) * SIGNS, torch.relu(x.flip(-1)))


def ZERO(x):
    """0 wherever x and its flip are both negative."""
    return torch.complex(torch.relu(x), torch.relu(x.flip(1)))


# call of x: every output real (view_as_real of a complex result)
FORMS = {
    "exp, Tensor.exp": lambda x: torch.view_as_real(torch.exp(Z(x)[..., :5] * 0.5)
                                                    + (rfft(x, norm="ortho") * 0.3).exp()),
    "log": lambda x: torch.view_as_real(torch.log(Z(x)) + U(x).log()),
    "log on the negative real axis: angle pi": lambda x: torch.view_as_real(torch.log(CUT(x))),
    "sqrt": lambda x: torch.view_as_real(torch.sqrt(Z(x)) + U(x).sqrt()),
    "sqrt(-r + 0i) = i sqrt(r)": lambda x: torch.view_as_real(torch.sqrt(torch.complex(-x.abs() - 0.5, x - x))),
    "sqrt on the cut": lambda x: torch.view_as_real(CUT(x).sqrt()),
    "z ** p, torch.pow, Tensor.pow": lambda x: torch.view_as_real(Z(x) ** 1.5 + torch.pow(U(x), -0.5)
                                                                  + Z(x).pow(0.25) + CUT(x) ** 2.5),
    "z ** 0, 1, 2, 3, -1, -2": lambda x: torch.view_as_real(Z(x) ** 0 + Z(x) ** 1 + Z(x) ** 2 + Z(x) ** 3
                                                            + U(x) ** -1 + torch.pow(U(x), -2)),
    "0 ** p": lambda x: torch.view_as_real(ZERO(x) ** 1.5 + ZERO(x) ** 0 + ZERO(x) ** 2),
    "reciprocal": lambda x: torch.view_as_real(U(x).reciprocal() + torch.reciprocal(Z(x))),
    "z / w": lambda x: torch.view_as_real(Z(x) / U(x.flip(1)) + torch.div(Z(x), W(x))),
    "z / w, broadcast": lambda x: torch.view_as_real(Z(x) / U(x[0, 0]) + Z(x[0, 1]) / U(x)),
    "number, real value, constant / w": lambda x: torch.view_as_real(
        2 / U(x) + (1 - 1j) / U(x) + x / U(x) + torch.exp(1j * torch.arange(8.0)) / U(x) + x[0, 0] / U(x)),
    "sgn, 0 at 0": lambda x: torch.view_as_real(torch.sgn(Z(x)) + ZERO(x).sgn()),
    "square, z * z": lambda x: torch.view_as_real(Z(x).square() + torch.square(Z(x)) + Z(x) * Z(x)),
    "fft2, ifft2": lambda x: torch.view_as_real(torch.fft.fft2(x) + torch.fft.ifft2(Z(x), norm="ortho")
                                                + torch.fft.fft2(x, s=(3, 10))[:, :, :8].sum(1, True)
                                                + torch.fft.ifft2(Z(x), dim=(0, 2), norm="forward")),
    "fftn, ifftn": lambda x: torch.view_as_real(torch.fft.fftn(x) + torch.fft.ifftn(Z(x), s=(5, 6))[..., :4, :].sum()
                                                + torch.fft.fftn(Z(x), dim=1, norm="ortho")),
    "rfft2, rfftn": lambda x: torch.view_as_real(torch.fft.rfft2(x) + torch.fft.rfftn(x, dim=(1, 2), norm="ortho")
                                                 + torch.fft.rfftn(x, s=(3, 8))[:, :1]),
    "irfft2, irfftn": lambda x: torch.fft.irfft2(torch.fft.rfft2(x)) + torch.fft.irfftn(Z(x), s=(4, 8), norm="ortho")
    + torch.fft.irfftn(torch.fft.fftn(x, dim=(1, 2)), dim=(1, 2), s=(4, 8)),
    "hfft": lambda x: torch.fft.hfft(Z(x)[..., :5]) + torch.fft.hfft(Z(x), n=8, norm="ortho")
    + torch.fft.hfft(Z(x)[..., :5], norm="forward", dim=-1) + torch.fft.hfft(x[..., :5]),
    "hfft(dim)": lambda x: torch.fft.hfft(Z(x), n=6, dim=1),
    "ihfft": lambda x: torch.view_as_real((torch.fft.ihfft(x) + torch.fft.ihfft(x, norm="ortho")
                                           + torch.fft.ihfft(x, n=6, dim=1, norm="forward")[:, :4, :1]).resolve_conj()),
    "fftshift, ifftshift of a complex value": lambda x: torch.view_as_real(torch.fft.fftshift(Z(x))
                                                                           + torch.fft.ifftshift(Z(x), dim=-1)),
    "fftshift, ifftshift of a real value": lambda x: torch.fft.fftshift(x) + torch.fft.ifftshift(x, dim=(1,))
    + torch.fft.fftshift(x, 2) + torch.fft.ifftshift(x[..., :7]).sum(-1, True),
    "slices with a step": lambda x: torch.view_as_real(Z(x)[..., ::2] + Z(x)[:, 1::2, 1:8:2].sum(1, True)
                                                       + Z(x)[0, ::3, ::2][None, :1]),
    "z.view(torch.float32)": lambda x: Z(x).view(torch.float32)[..., :10] + rfft(x).view(torch.float32),
}


def _capture(fn, shape=S3, seed=3):
    model = Call(fn).eval()
    x = inputs(shape, -3.0, 3.0, 1, seed=seed)[0][0]
    return model, x, capture(model, [x])


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_is_torch_in_float(name):
    model, x, g = _capture(FORMS[name])
    assert not [n.name for n in g.nodes if n.op == "unsupported"], g.summary()
    assert len({n.name for n in g.nodes}) == len(g.nodes)
    with torch.no_grad():
        want = model(x)
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape, (got.shape, want.shape)
    assert torch.allclose(got, want.float(), rtol=1e-4, atol=1e-4), (got - want).abs().max()


def test_torchs_branch_conventions():
    """What FORMS checks ptec against, stated: the principal branch
    (sqrt(-1) = i, the angle pi on the negative real axis reached from
    above), 0 ** p = 0 for p > 0, z ** 0 = 1, sgn(0) = 0, hfft = irfft of
    conj x with the other direction's norm, ihfft = conj rfft likewise."""
    z = torch.tensor([-1 + 0j, -4 + 0j, 0j])
    assert torch.allclose(torch.view_as_real(z[:2].sqrt()), torch.tensor([[0.0, 1.0], [0.0, 2.0]]))
    assert torch.allclose(z[:2].log().imag, torch.full((2,), np.pi))
    assert torch.equal(torch.view_as_real(z[2:] ** 1.5), torch.zeros(1, 2))
    assert torch.equal(torch.view_as_real(z ** 0), torch.tensor([[1.0, 0.0]] * 3))
    assert torch.equal(torch.view_as_real(torch.sgn(z[2:])), torch.zeros(1, 2))
    y = torch.randn(3, 5, dtype=torch.complex64)
    r = torch.randn(3, 8)
    for norm, other in ((None, "forward"), ("ortho", "ortho"), ("forward", "backward")):
        assert torch.allclose(torch.fft.hfft(y, n=8, norm=norm), torch.fft.irfft(y.conj(), n=8, norm=other), atol=1e-5)
        assert torch.allclose(torch.fft.ihfft(r, norm=norm), torch.fft.rfft(r, norm=other).conj(), atol=1e-5)


def _ops(fn):
    return [n.op for n in _capture(fn)[2].nodes]


def test_rewrites_are_these_ops():
    """exp: three LUTs and two muls; log: fp32 hypot and atan2, a log LUT;
    pow: the polar form's fp32 hypot and atan2, a pow LUT, cos and sin
    LUTs, two muls (z ** 2 z * z's four muls, no LUT); 1 / z: one fp32
    pow of the fp32 hypot; fft2 two linears (one per dim)."""
    ops = _ops(lambda x: torch.view_as_real(Z(x).exp()))
    assert ops.count("elementwise") == 3 and ops.count("binary_math") == 0, ops
    ops = _ops(lambda x: torch.view_as_real(Z(x).log()))
    assert ops.count("binary_math") == 2 and ops.count("elementwise") == 1, ops
    ops = _ops(lambda x: torch.view_as_real(Z(x) ** 1.5))
    assert ops.count("binary_math") == 2 and ops.count("elementwise") == 3, ops
    ops = _ops(lambda x: torch.view_as_real(Z(x) ** 2))
    assert ops.count("mul") == 4 + 1 and "elementwise" not in ops and "binary_math" not in ops, ops   # + Z's * 0.5
    ops = _ops(lambda x: torch.view_as_real(Z(x).reciprocal()))
    assert ops.count("binary_math") == 2 and "div" not in ops, ops
    ops = _ops(lambda x: torch.view_as_real(torch.fft.fft2(Z(x))))
    assert ops.count("linear") == 2, ops


# chains: (call of x, bound in output steps, "int8" or "fp32"), measured in comments
CHAINS = {
    "exp(z)": (lambda x: torch.view_as_real(torch.exp(torch.complex(x * 0.5, x.flip(-1)))), 2.5, "int8"),
    "log(z)": (lambda x: torch.view_as_real(torch.log(U(x))), 2.0, "fp32"),
    "log(z) on the cut": (lambda x: torch.view_as_real(torch.log(CUT(x))), 2.5, "fp32"),
    "sqrt(z)": (lambda x: torch.view_as_real(U(x).sqrt()), 2.5, "fp32"),
    "sqrt(z) on the cut": (lambda x: torch.view_as_real(CUT(x).sqrt()), 2.5, "fp32"),
    "z ** 1.5": (lambda x: torch.view_as_real(U(x) ** 1.5), 2.0, "fp32"),
    "1 / z": (lambda x: torch.view_as_real(W(x).reciprocal()), 4.0, "fp32"),
    "z / w": (lambda x: torch.view_as_real(torch.complex(x, x.flip(1)) / W(x)), 2.5, "fp32"),
    "sgn(z)": (lambda x: torch.view_as_real(torch.sgn(U(x))), 3.5, "fp32"),
    "fft2": (lambda x: torch.view_as_real(torch.fft.fft2(x, norm="ortho")), 1.5, "int8"),
    "irfft2(rfft2(x) * 0.5)": (lambda x: torch.fft.irfft2(torch.fft.rfft2(x) * 0.5, s=(4, 8)), 4.0, "int8"),
    "hfft": (lambda x: torch.fft.hfft(torch.complex(x, x.flip(-1))[..., :5], norm="ortho"), 1.5, "int8"),
    "fftshift(rfft(x))[::2]": (lambda x: torch.view_as_real(torch.fft.fftshift(rfft(x, norm="ortho"), dim=(1, 2))
                                                            [:, ::2]), 1.0, "int8"),
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_chain_within_its_bound(name, tmp_path):
    fn, bound, kind = CHAINS[name]
    model = Call(fn).eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert kind == ("fp32" if res.lowered.fallbacks else "int8"), res.lowered.fallbacks
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"{name}: {worst:.2f} output steps")
    assert worst <= bound, worst


def test_sgn_of_zero_is_zero_in_int8(tmp_path):
    """sgn(0) = 0 on the int8 path too: the int8 div by a zero |z| gives 0."""
    from ptec import host_runtime
    from ptec.pte import parse_program
    model = Call(lambda x: torch.view_as_real(torch.sgn(ZERO(x)))).eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    x = calibration[1][0]
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
    with torch.no_grad():
        want = model(x).numpy()
    zero = (want == 0).all(-1)
    assert zero.any() and (~zero).any()
    assert np.all(got[zero] == 0), got[zero]


def test_exp_chain_on_the_m55(tmp_path):
    model = Call(CHAINS["exp(z)"][0]).eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration, target="cortex-m55")
    board_matches_reference(res.data, inputs(S3, -3.0, 3.0, 1, seed=5)[0][0].numpy(), "cortex-m55", tmp_path)


class Layers(torch.nn.Module):
    """nn.Identity, nn.Flatten and nn.Unflatten of a complex value: views."""

    def __init__(self):
        super().__init__()
        self.same, self.flat, self.unflat = torch.nn.Identity(), torch.nn.Flatten(), torch.nn.Unflatten(1, (4, 5))

    def forward(self, x):
        z = self.flat(self.same(torch.fft.rfft(x)))
        return torch.view_as_real(self.unflat(z * 2) + z.reshape(1, 4, 5))


def test_viewing_layers_of_a_complex_value(tmp_path):
    model = Layers().eval()
    calibration = inputs(S3, -3.0, 3.0)
    g = capture(model, [calibration[0][0]])
    with torch.no_grad():
        want = model(calibration[0][0])
    assert torch.allclose(evaluate(g, [calibration[0][0]])[0], want, atol=1e-4)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert worst_steps(model, res, calibration[:4], tmp_path) <= 1.5


class Returned(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.same = torch.nn.Identity()

    def forward(self, x):
        return self.same(torch.fft.rfft(x))


REFUSED = {
    # model: (the call named in the one line, words of the reason)
    "exp returned": (Call(lambda x: torch.exp(Z(x))), "exp (torch.exp)", "torch.view_as_real"),
    "z / w returned": (Call(lambda x: Z(x) / U(x)), "truediv (operator.truediv)", "complex program output"),
    "fft2 returned": (Call(lambda x: torch.fft.fft2(x)), "fft_fft2", "torch.view_as_real"),
    "a viewing layer's complex output": (Returned(), "same (nn.Identity)", "torch.view_as_real"),
    # (2 ** z, a complex exponent, hfft2, tanh, an index list run: test_complex_more.py)
    "z.view(torch.float64) of a complex64 value": (Call(lambda x: Z(x).view(torch.float64).float()),
                                                   "view (Tensor.view)", "rewrites only the calls"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line(name):
    model, call, words = REFUSED[name]
    calibration = inputs(S3, -3.0, 3.0, 2)
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(model.eval(), [calibration[0][0]], calibration)
    message = str(e.value)
    assert "\n" not in message, message
    assert "operator not supported: " in message and call in message and words in message, message
