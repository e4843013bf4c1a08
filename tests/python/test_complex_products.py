"""Products, contractions and comparisons of complex values (issue 15):
ptec.capture_complex_products' prod / cumprod, einsum, dot / vdot / inner,
== / != / isclose, a computed index, and nn.PairwiseDistance /
F.pairwise_distance of complex values (capture_modules' stand-in with the
magnitudes), and what stays refused. The oracle is PyTorch: each spelling
equal to torch in float, int8 / fp32 programs within their bounds on the
host (test_function_coverage.py's RUNS rows; dot / vdot here, against
torch.inner: this torch 1.13 build's torch.dot / vdot of complex vectors
return 0)."""
import pytest
import torch

from model_checks import Call
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator, evaluate
from test_function_coverage import inputs
from test_module_coverage import worst_steps

S3 = (1, 4, 8)
V = torch.view_as_real
W53 = torch.exp(1j * torch.arange(15.0).reshape(5, 3) * 0.4) * 0.5        # a complex constant
C8 = torch.tensor([0.0, 0.0, 5.0, 0.0, 5.0, 0.0, 0.0, 5.0]) + 0j      # a complex constant of zeros and fives
W8 = torch.exp(-1j * torch.arange(8.0) * 0.3) * (1 + torch.arange(8.0) * 0.1)


def Z(x):
    """Every quadrant, |Re|, |Im| <= 1.5."""
    return torch.complex(x * 0.5, x.flip(-1) * 0.5)


def R(x):
    return torch.fft.rfft(x, norm="ortho")


def EQZ(x):
    return torch.complex(x, x.flip(-1))


def EQW(x):
    """EQZ(x) where x >= 0 (equal to it there, on the int8 grid too: relu keeps the codes)."""
    return torch.complex(torch.relu(x), x.flip(-1))


class Distances(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.d2, self.d3 = torch.nn.PairwiseDistance(), torch.nn.PairwiseDistance(p=3.0, keepdim=True)

    def forward(self, x):
        return (self.d2(Z(x), Z(x.flip(1))) + self.d3(Z(x), R(x)[..., :1])[..., 0]
                + torch.nn.functional.pairwise_distance(Z(x), Z(x) * 1j, p=1.0, eps=0.0))


# call of x: every output real
FORMS = {
    "torch.prod over a dim": lambda x: V(torch.prod(Z(x), 1) + torch.prod(Z(x), dim=-1)[..., None]),
    "Tensor.prod keepdim": lambda x: V(Z(x).prod(-1, keepdim=True) + Z(x).prod(dim=0, keepdim=True)[..., :1]),
    "prod of every element": lambda x: V(torch.prod(Z(x)[0, :, :3])[None] + R(x).prod()),
    "cumprod": lambda x: V(torch.cumprod(Z(x), 1) + Z(x).cumprod(dim=2)[..., :1] + torch.cumprod(Z(x), -1)),
    "einsum batched product": lambda x: V(torch.einsum("bij,bkj->bik", Z(x), Z(x.flip(1)))),
    "einsum of z with itself": lambda x: V(torch.einsum("bij,bkj->bik", Z(x), Z(x))),
    "einsum ..., a complex constant": lambda x: V(torch.einsum("...j,jk->...k", R(x), W53)),
    "einsum three operands": lambda x: V(torch.einsum("bij,bkj,bk->bi", Z(x), Z(x.flip(1)), Z(x)[..., 0])),
    "einsum diagonal, sum, outer": lambda x: V(torch.einsum("bii->bi", Z(x)[..., :4]) + torch.einsum(
        "bij->bj", Z(x))[..., :4] + torch.einsum("i,j->ij", Z(x)[0, 0, :4], Z(x)[0, 1, :4])[None, 0]),
    "einsum sublists, list of operands": lambda x: V(torch.einsum(Z(x)[0], [0, 1], Z(x)[0].flip(0), [2, 1], [0, 2])
                                                     + torch.einsum("ij,kj->ik", [Z(x)[0], Z(x)[0]])),
    "einsum whole contraction": lambda x: V(torch.einsum("bij,bij->", Z(x), Z(x.flip(2)))[None]),
    "einsum with a real-valued constant": lambda x: V(torch.einsum("bij,j->bi", Z(x), W8.real + 0j)),
    "torch.inner, Tensor.inner": lambda x: V(torch.inner(Z(x), Z(x.flip(1))) + Z(x)[0].inner(Z(x)[0, 0])[None, :, None, None]),
    "torch.inner with a complex constant, of z with itself": lambda x: V(
        torch.inner(Z(x), W8) + torch.inner(Z(x)[0, 1], Z(x)[0, 1])),
    "== and != of complex values": lambda x: (EQZ(x) == EQW(x)).float() + torch.ne(EQW(x), EQZ(x)).float() * 2
    + torch.eq(EQZ(x), torch.complex(x, torch.relu(x.flip(-1)))).float() * 4
    + EQZ(x).not_equal(torch.complex(torch.relu(x), torch.relu(x.flip(-1)))).float() * 8,
    "== a number, a constant, a real value": lambda x: (torch.complex(torch.relu(x), x * 0) == 0).float()
    + (torch.complex(x * 0, torch.relu(x)) != 0).float() * 2 + (torch.complex(torch.relu(x), x * 0) == C8).float() * 4
    + (torch.complex(torch.relu(x), x * 0) == torch.relu(x.flip(1))).float() * 8
    + (torch.relu(x) == torch.complex(x * 0, torch.relu(x.flip(-1)))).float() * 16,
    "(z == w).all(dim), torch.where(z == w)": lambda x: (EQZ(x) == EQW(x)).all(-1).float()
    + torch.where(EQZ(x) != EQW(x), x, -x).sum(-1),
    "torch.isclose": lambda x: torch.isclose(EQZ(x), EQW(x)).float()
    + torch.isclose(Z(x), Z(x) * 1.01, atol=0.01, rtol=0.0).float() * 2
    + torch.isclose(Z(x), Z(x) * (1 + 0.1j), rtol=0.05, atol=0.05).float() * 4
    + torch.isclose(Z(x), Z(x.round()), atol=0.2, rtol=0.0).float() * 8,
    "torch.isclose with a complex constant": lambda x: torch.isclose(Z(x), W8, atol=0.5).float(),
    "z[ids], z[..., ids], z[:, ids] (computed ids)": lambda x: V(
        R(x)[0][:, x[0, :3, :5].argmax(-1)] + R(x)[0][x[0, :4, :4].argmax(-1)][:, :3]
        + R(x)[0, x[0, :4, 0].argmin()][None, :3]),
    "z[..., ids] of x.long()": lambda x: V(R(x)[..., x[0, 0, :2].abs().long()]),
    "z[..., i] (a 0-d computed index), z[0, ids]": lambda x: V(R(x)[..., x[0, 1, :5].argmax()])[..., None, :]
    + V(R(x)[0, x[0, 0, :2].argmax(-1, keepdim=True)])[..., :1, :],
    "nn.PairwiseDistance, F.pairwise_distance": Distances(),
}


def _capture(fn, seed=3):
    model = fn if isinstance(fn, torch.nn.Module) else Call(fn)
    model.eval()
    x = inputs(S3, -3.0, 3.0, 1, seed=seed)[0][0]
    return model, x, capture(model, [x])


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_is_torch_in_float(name):
    model, x, g = _capture(FORMS[name])
    assert not [n.name for n in g.nodes if n.op == "unsupported"], g.summary()
    assert len({n.name for n in g.nodes}) == len(g.nodes)
    with torch.no_grad():
        want = model(x).float()
    got = evaluate(g, [x])[0].float()
    assert got.shape == want.shape, (got.shape, want.shape)
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-4), (got - want).abs().max()


def test_comparisons_vary():
    """The comparison forms above are not constant: each bit of their
    outputs takes both values on the example."""
    x = inputs(S3, -3.0, 3.0, 1, seed=3)[0][0]
    for name, bits in (("== and != of complex values", 4), ("== a number, a constant, a real value", 5),
                       ("torch.isclose", 4)):
        out = FORMS[name](x).long()
        for b in range(bits):
            bit = (out >> b) & 1
            assert bit.min() == 0 and bit.max() == 1, (name, b)


def _dots(x):
    a, b, c, d = (Z(x)[0, k] for k in range(4))
    return a, b, c, d


# ptec's dot / vdot and their oracle: torch.inner (dot's sum for 1-D), with the first operand conjugated for vdot
DOTS = {
    "torch.dot, Tensor.dot": (lambda x: V(torch.dot(_dots(x)[0], _dots(x)[1])[None] + _dots(x)[2].dot(_dots(x)[3])),
                              lambda x: V(torch.inner(_dots(x)[0], _dots(x)[1])[None]
                                          + torch.inner(_dots(x)[2], _dots(x)[3]))),
    "torch.vdot, Tensor.vdot": (lambda x: V(torch.vdot(_dots(x)[0], _dots(x)[1])[None] + _dots(x)[2].vdot(_dots(x)[3])),
                                lambda x: V(torch.inner(_dots(x)[0].conj(), _dots(x)[1])[None]
                                            + torch.inner(_dots(x)[2].conj(), _dots(x)[3]))),
    "dot, vdot of z with itself": (lambda x: V(torch.dot(_dots(x)[1], _dots(x)[1])[None] + torch.vdot(_dots(x)[0], _dots(x)[0])),
                                   lambda x: V(torch.inner(_dots(x)[1], _dots(x)[1])[None]
                                               + torch.inner(_dots(x)[0].conj(), _dots(x)[0]))),
}


def test_pairwise_distance_layers_int8(tmp_path):
    """nn.PairwiseDistance (p 2, 3 with keepdim) and F.pairwise_distance (p
    1) of complex values compiled: the magnitudes' fp32 hypot, within 2.5
    output steps of torch."""
    model = Distances().eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"distances: {worst:.2f} output steps")
    assert worst <= 2.5, worst


def test_the_oracle_of_dot_and_vdot():
    """torch.inner of complex vectors is sum a_i b_i (torch's own
    elementwise product and sum), the sum torch documents for torch.dot;
    vdot conjugates its first operand. (This torch 1.13 build's torch.dot
    and vdot return 0 for complex vectors, so they are not the oracle.)"""
    g = torch.Generator().manual_seed(1)
    a, b = (torch.randn(6, dtype=torch.complex64, generator=g) for _ in range(2))
    assert torch.allclose(torch.inner(a, b), (a * b).sum(), atol=1e-5)
    assert torch.allclose(torch.inner(a.conj(), b), (a.conj() * b).sum(), atol=1e-5)
    assert abs(torch.inner(a.conj(), b) - torch.inner(a, b)) > 0.1          # the conjugate matters here
    dot = torch.dot(a, b)
    assert dot == 0 or torch.allclose(dot, torch.inner(a, b), atol=1e-5)     # 0: this build's kernel


@pytest.mark.parametrize("name", sorted(DOTS))
def test_dot_and_vdot_in_float(name):
    fn, oracle = DOTS[name]
    model, x, g = _capture(fn)
    want = oracle(x)
    assert torch.allclose(evaluate(g, [x])[0], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(DOTS))
def test_dot_and_vdot_int8(name, tmp_path):
    fn, oracle = DOTS[name]
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    worst = worst_steps(Call(oracle).eval(), res, calibration[:4], tmp_path)
    print(f"{name}: {worst:.2f} output steps")
    assert worst <= 1.5, worst                                      # 1.09 (dot), 1.00 (vdot) measured


def test_einsum_is_real_einsums_of_the_parts():
    """Two complex operands: four real einsums (batch matmuls), a sub and
    an add; a constant's parts constants (no views of constants); one
    with a zero imaginary part two einsums."""
    ops = [n.op for n in _capture(lambda x: V(torch.einsum("bij,bkj->bik", Z(x), Z(x.flip(1)))))[2].nodes]
    assert ops.count("matmul") == 4 and ops.count("sub") == 1 and ops.count("add") == 1, ops
    nodes = _capture(lambda x: V(torch.einsum("...j,jk->...k", R(x), W53)))[2].nodes
    consts = {n.name for n in nodes if n.op == "constant"}
    assert not [n for n in nodes if n.op in ("reshape", "permute") and set(n.inputs) & consts]
    ops = [n.op for n in _capture(lambda x: V(torch.einsum("bij,j->bi", Z(x), W8.real + 0j)))[2].nodes]
    assert ops.count("matmul") == 2, ops


def test_prod_is_chained_complex_products():
    """prod over a dim of n: n - 1 complex products (four int8 muls each)."""
    ops = [n.op for n in _capture(lambda x: V(torch.prod(Z(x), 1)))[2].nodes if n.name.startswith("prod")]
    assert ops.count("mul") == 4 * 3 and ops.count("slice") == 4 + 4 * 3 and "linear" not in ops, ops


def _refusal(model) -> str:
    calibration = inputs(S3, -3.0, 3.0, 2)
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(model.eval(), [calibration[0][0]], calibration)
    message = str(e.value)
    assert "\n" not in message and "operator not supported: " in message, message
    return message


REFUSED = {
    # model: (the call named in the one line, words of the reason)
    "z < w (torch refuses)": (Call(lambda x: (Z(x) < Z(x.flip(1))).float()), "lt (operator.lt)",
                              "\"lt_cpu\" not implemented for 'ComplexFloat'"),
    "torch.ge (torch refuses)": (Call(lambda x: torch.ge(Z(x), Z(x.flip(1))).float()), "ge (torch.ge)",
                                 "torch itself does not compute it"),
    "torch.cdist (torch refuses)": (Call(lambda x: torch.cdist(Z(x), Z(x))), "cdist (torch.cdist)",
                                    "cdist only supports floating-point dtypes"),
    "einsum of a complex and a float operand (torch refuses)": (
        Call(lambda x: V(torch.einsum("bij,j->bi", Z(x), x[0, 0]))), "einsum (torch.einsum)",
        "expected scalar type ComplexFloat but found Float"),
    # (an einsum of four complex operands, torch.equal / allclose, two computed indices: test_complex_rest.py)
    "a prod returned": (Call(lambda x: torch.prod(Z(x), 1)), "prod (torch.prod)", "torch.view_as_real"),
    "complex128 viewed as float32": (Call(lambda x: Z(x).cdouble().view(torch.float32)), "view (Tensor.view)",
                                     "rewrites only the calls"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line(name):
    model, call, words = REFUSED[name]
    message = _refusal(model)
    assert call in message and words in message, message


def test_real_pairwise_distance_unchanged():
    """The real stand-in still squares the difference (one int8 mul, no
    magnitude)."""
    nodes = _capture(lambda x: torch.nn.functional.pairwise_distance(x, x.flip(1)))[2].nodes
    assert not [n for n in nodes if n.op == "binary_math"] and any(n.op == "mul" for n in nodes)
