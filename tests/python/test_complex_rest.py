"""The calls on complex values that were refused though torch runs them
(issue 15: the refusal list shrunk to true limits): several computed
indices in one subscript, an einsum of more than three complex operands
(contracted two at a time), torch.isclose with equal_nan=True
(ptec.capture_complex_rest), and torch.equal / torch.allclose of real or
complex values read as a value (ptec.capture_bool_calls: their 0-d bool
tensor). The oracle is PyTorch float: each form equal to torch in the
float graph, compiled within its measured bound on the host. A branch on
torch.allclose stays refused in one line (a static program has one path),
and so does a view of complex128 as float32 (test_complex_products.py)."""
import numpy as np
import pytest
import torch

from model_checks import Call, run_feed
from ptec.capture import CaptureError, capture
from ptec.compiler import compile_model
from ptec.ir import evaluate
from test_function_coverage import inputs
from test_module_coverage import worst_steps
from test_complex_products import EQW, EQZ, R  # noqa: F401 (the forms' shared spectra)

S3 = (1, 4, 8)
V = torch.view_as_real


def Z(x):
    return torch.complex(x * 0.5, x.flip(-1) * 0.5)


def W(x):
    return torch.complex(x.flip(1), x) * 0.5


FORMS = {
    "z[i, j] (two argmax indices)": lambda x: V(R(x)[0][x[0, :3, :4].argmax(-1), x[0, 1:4, :5].argmin(-1)]),
    "z[..., i, j] (2-D computed indices)": lambda x: V(Z(x)[..., x[0, :4, :4].argmax(-1), x[0, :4, :8].argmax(-1)]),
    "z[i, j] of x.long() values": lambda x: V(R(x)[0][x[0, 0, :2].abs().long()[None], x[0, 1, :2].abs().long()[None]]),
    "z[:, i, j], a computed and a constant index": lambda x: V(
        Z(x)[:, x[0, :4, :4].argmax(-1), torch.tensor([0, 2, 4, 6])]),
    "z[i, :, j] (non-adjacent: index dims first)": lambda x: V(
        Z(x).expand(3, 4, 8)[x[0, :3, 0].argmax(-1, keepdim=True), :, x[0, 2:5, 1].argmax(-1, keepdim=True)]),
    "einsum of four complex vectors": lambda x: V(torch.einsum("i,i,i,i->i", *[Z(x)[0, k] for k in range(4)])),
    "einsum chain of four complex matrices": lambda x: V(torch.einsum(
        "bij,bjk,bkl,blm->bim", Z(x)[:, :, :4], W(x)[:, :, :4].transpose(1, 2), Z(x)[:, :, 4:],
        W(x)[:, :, 4:].transpose(1, 2))),
    "einsum of five operands, '...', a complex constant": lambda x: V(torch.einsum(
        "...j,...j,j,jk,...k->...", Z(x), W(x), Z(x)[0, 0], torch.exp(1j * torch.arange(32.0).reshape(8, 4) * 0.3),
        Z(x)[..., :4])),
    "torch.isclose(equal_nan=True)": lambda x: torch.isclose(Z(x), Z(x.round()), atol=0.2, rtol=0.0,
                                                             equal_nan=True).float()
    + torch.isclose(Z(x), W(x), 0.5, 0.3, True).float() * 2,
    "torch.equal, Tensor.equal, real and complex": lambda x: x * torch.equal(torch.relu(x), x)
    + Z(torch.relu(x)).equal(Z(x)) * 2.0 - torch.equal(x, x) * 1.0 + torch.equal(x, x[0]) * 8.0
    + torch.equal(torch.complex(x, x * 0), x) * 16.0 + torch.equal(torch.complex(x, x * 0), x.relu()) * 32.0,
    "torch.allclose, Tensor.allclose, real and complex": lambda x: x * torch.allclose(torch.relu(x), x, atol=0.5)
    + Z(x).allclose(Z(x.round()), atol=0.8) * 2.0 + torch.allclose(Z(x), Z(x) * 1.001, rtol=0.01) * 4.0,
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_is_torch_in_float(name):
    model = Call(FORMS[name]).eval()
    for x in (inputs(S3, -3.0, 3.0, 1, seed=3)[0][0], inputs(S3, 0.0, 3.0, 1, seed=4)[0][0]):
        g = capture(model, [x])
        assert not [n.name for n in g.nodes if n.op == "unsupported"], g.summary()
        with torch.no_grad():
            want = model(x).float()
        got = evaluate(g, [x])[0].float()
        assert got.shape == want.shape, (got.shape, want.shape)
        assert torch.allclose(got, want, rtol=1e-4, atol=1e-4), (got - want).abs().max()


# call of x: (bound in output steps, "int8" or "fp32" as in test_function_coverage's RUNS)
COMPILED = {
    "z[i, j] (two argmax indices)": (1.0, "int8"),                                 # 0.68 measured
    "z[..., i, j] (2-D computed indices)": (1.0, "int8"),                          # 0.45
    "z[:, i, j], a computed and a constant index": (1.0, "int8"),                  # 0.48
    "einsum of four complex vectors": (2.5, "int8"),                               # 2.25
    "einsum chain of four complex matrices": (3.5, "int8"),                        # 2.98
    "torch.isclose(equal_nan=True)": (0.0, "fp32"),                                # exact (the fp32 hypot)
}


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_within_its_bound(name, tmp_path):
    bound, kind = COMPILED[name]
    model = Call(FORMS[name]).eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert kind == ("fp32" if res.lowered.fallbacks else "int8"), res.lowered.fallbacks
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"{name}: {worst:.2f} output steps")
    assert worst <= bound + 1e-3, worst


def test_einsum_is_contracted_two_at_a_time():
    """Four operands: three contractions of two complex values, each four
    real einsums of the parts (not the 16 einsums of four operands' parts)."""
    x = inputs(S3, -3.0, 3.0, 1)[0][0]
    g = capture(Call(FORMS["einsum chain of four complex matrices"]).eval(), [x])
    assert sum(n.op == "matmul" for n in g.nodes) == 3 * 4, [n.op for n in g.nodes]


def test_torch_isclose_equal_nan_rule():
    """torch 1.13's rule, the oracle: a complex value is NaN when either part
    is, so two values NaN in different parts are close with equal_nan."""
    nan = float("nan")
    a = torch.tensor([complex(1, nan), complex(nan, 0), complex(nan, 0), 1 + 1j])
    b = torch.tensor([complex(2, nan), complex(0, nan), complex(1, 1), 1 + 1j])
    assert torch.isclose(a, b, equal_nan=True).tolist() == [True, True, False, True]
    assert torch.isclose(a, b).tolist() == [False, False, False, True]


def test_isclose_equal_nan_on_nan_values():
    """The float graph on inputs holding NaN (in one part of some complex
    values): torch's answer with equal_nan, and it differs from the one
    without (no int8 value is NaN, so the compiled program never meets one)."""
    x = inputs(S3, -3.0, 3.0, 1, seed=3)[0][0]
    nan_x = x.clone()
    nan_x[0, 0, 1] = nan_x[0, 1, 6] = nan_x[0, 2, 3] = float("nan")

    def fn(equal_nan):
        return lambda v: torch.isclose(Z(v), torch.complex(v.flip(-1) * 0.5, v * 0.5), equal_nan=equal_nan).float()
    results = []
    for equal_nan in (True, False):
        model = Call(fn(equal_nan)).eval()
        got = evaluate(capture(model, [x]), [nan_x])[0]
        assert torch.equal(got, model(nan_x)), (got, model(nan_x))
        results.append(got)
    assert not torch.equal(*results)


def test_equal_and_allclose_run_with_both_answers(tmp_path):
    """torch.equal / allclose read as values: the compiled program gives
    torch's value on inputs where they are True and where they are False
    (relu(x) == x only for x >= 0)."""
    def fn(x):
        return x + torch.equal(torch.relu(x), x) * 4.0 + EQW(x).equal(EQZ(x)) * 8.0 \
            + torch.allclose(Z(torch.relu(x)), Z(x), atol=0.1) * 16.0
    model = Call(fn).eval()
    mixed, positive = inputs(S3, -3.0, 3.0, 4), inputs(S3, 0.0, 3.0, 4, seed=1)
    calibration = mixed + positive
    res = compile_model(model, [calibration[0][0]], calibration)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    offsets = set()
    for (x,) in mixed[:2] + positive[:2]:
        got = run_feed(res, [x], tmp_path)[0]
        want = model(x).numpy()
        assert np.abs(got - want).max() <= step, np.abs(got - want).max() / step
        offsets.add(round(float((want - x.numpy()).mean())))
    assert offsets == {0, 28}, offsets


def test_equal_as_a_program_output(tmp_path):
    """A result returned from forward: the 0-d bool tensor of torch's bool."""
    model = Call(lambda x: (x * 2, torch.equal(EQW(x), EQZ(x)), torch.allclose(x, x.relu()))).eval()
    calibration = inputs(S3, -3.0, 3.0, 4) + inputs(S3, 0.0, 3.0, 4, seed=1)
    res = compile_model(model, [calibration[0][0]], calibration)
    seen = set()
    for (x,) in (calibration[0], calibration[5]):
        got = run_feed(res, [x], tmp_path)
        want = model(x)
        for g, w in zip(got[1:], want[1:]):
            assert np.asarray(g).shape == () and np.asarray(g).dtype == np.bool_ and bool(g) == w, (g, w)
        seen.add(want[1])
    assert seen == {True, False}


def test_branch_on_allclose_is_refused_in_one_line():
    """`if torch.allclose(z, w):` picks a path by the input's values; a
    static program has one path: refused in one line pointing at
    torch.where."""
    class Branch(torch.nn.Module):
        def forward(self, x):
            if torch.allclose(Z(x), W(x)):
                return x
            return -x
    x = inputs(S3, -3.0, 3.0, 1)[0][0]
    with pytest.raises(CaptureError) as e:
        capture(Branch().eval(), [x])
    message = str(e.value)
    assert "\n" not in message and "torch.allclose" in message and "torch.where" in message, message
