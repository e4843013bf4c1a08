"""torch's linear-algebra calls, rewritten at capture by ptec.capture_linalg
(issue 15): torch.dot / vdot, inner, outer / ger, mv, addmm, addmv,
addbmm, baddbmm, addr, tensordot, linalg.multi_dot, chain_matmul,
linalg.vecdot, cross / linalg.cross and cdist. test_function_coverage.py's
RUNS rows bound each call's int8 result on the host; here the edge cases:
argument spellings, the scalars alpha and beta, `input` broadcast, batch
dims, constant operands, the shape of the rewrite (one matmul per
product), the forms refused in one line naming the call, and a model of
several calls on the emulated boards. The oracle is PyTorch float."""
import subprocess
import sys

import pytest
import torch

from model_checks import board_matches_reference
from ptec.capture import capture
from ptec.compiler import CompileError, compile_model
from ptec.ir import evaluate
from test_compiler import ENV
from model_checks import Call
from test_function_coverage import inputs
from test_module_coverage import worst_steps

S3 = (1, 4, 8)
W = torch.linspace(-1, 1, 24).reshape(8, 3)          # a constant operand (a weight)

# call of x: (call, input shape). Every spelling torch takes for the calls.
FORMS = {
    "torch.dot": (lambda x: torch.dot(x.flatten(), x.flip(-1).flatten()), S3),
    "Tensor.dot": (lambda x: x[0, 0].dot(x[0, 1]), S3),
    "torch.vdot": (lambda x: torch.vdot(x[0, 0], x[0, 3]), S3),
    "torch.dot(constant)": (lambda x: torch.dot(torch.linspace(-1, 1, 8), x[0, 2]), S3),
    "torch.inner(3-D, 3-D)": (lambda x: torch.inner(x, x), S3),
    "torch.inner(1-D, 3-D)": (lambda x: torch.inner(x[0, 0], x), S3),
    "Tensor.inner(2-D)": (lambda x: x[0].inner(x[0, :2]), S3),
    "torch.inner(constant)": (lambda x: torch.inner(x, W.t()), S3),
    "torch.outer": (lambda x: torch.outer(x[0, 0], x[0, 1, :3]), S3),
    "torch.ger": (lambda x: torch.ger(x[0, 0, :2], x[0, 1]), S3),
    "Tensor.outer/ger": (lambda x: x[0, 0].outer(x[0, 1]) + x[0, 2].ger(x[0, 3]), S3),
    "torch.mv": (lambda x: torch.mv(x[0], x[0, 0]), S3),
    "Tensor.mv": (lambda x: x[0].t().mv(x[0, :, 1]), S3),
    "torch.mv(constant matrix)": (lambda x: torch.mv(W.t(), x[0, 0]), S3),
    "torch.addmm(beta, alpha)": (lambda x: torch.addmm(x[0, 0, :4], x[0], x[0].t(), beta=0.5, alpha=-2), S3),
    "torch.addmm(int alpha)": (lambda x: torch.addmm(x[0, 0, :4], x[0], x[0].t(), alpha=3), S3),
    "Tensor.addmm": (lambda x: x[0, :, :4].addmm(x[0], x[0].t(), beta=2), S3),
    "torch.addmm(column input)": (lambda x: torch.addmm(x[0, :, :1], x[0], x[0].t()), S3),
    "torch.addmm(0-d input)": (lambda x: torch.addmm(x[0, 0, 0], x[0], x[0].t(), beta=-1), S3),
    "torch.addmm(constant input, constant mat2)": (lambda x: torch.addmm(torch.tensor([0.5, -1.0, 2.0]), x[0], W,
                                                                         beta=3, alpha=0.5), S3),
    # beta=0: input is not read, so its nan does not reach the result
    "torch.addmm(beta=0, nan input)": (lambda x: torch.addmm(torch.full((4,), float("nan")), x[0], x[0].t(),
                                                             beta=0), S3),
    "torch.addmm(alpha=0)": (lambda x: torch.addmm(x[0, 0, :4], x[0], x[0].t(), alpha=0, beta=0.5), S3),
    "torch.addmv": (lambda x: torch.addmv(x[0, 0, :4], x[0], x[0, 1], beta=2, alpha=0.5), S3),
    "Tensor.addmv(0-d input)": (lambda x: x[0, 0, 0].addmv(x[0], x[0, 1]), S3),
    "torch.addbmm": (lambda x: torch.addbmm(x[0, :1, :4], x, x.transpose(1, 2), alpha=0.25), (3, 4, 8)),
    "Tensor.addbmm": (lambda x: x[0].addbmm(x[:, :, :4], x[:, :4]), (2, 4, 8)),
    "torch.baddbmm": (lambda x: torch.baddbmm(x[:, :, :4], x, x.transpose(1, 2), beta=0.5, alpha=2), (3, 4, 8)),
    "torch.baddbmm(2-D input)": (lambda x: torch.baddbmm(x[0, :, :4], x, x.transpose(1, 2)), (2, 4, 8)),
    "Tensor.baddbmm(constant batch2)": (lambda x: x[:, :, :3].baddbmm(x, W.expand(2, 8, 3)), (2, 4, 8)),
    "torch.addr": (lambda x: torch.addr(x[0], x[0, :, 0], x[0, 0], beta=-1, alpha=0.25), S3),
    "Tensor.addr(row input)": (lambda x: x[0, 0].addr(x[0, :, 0], x[0, 1]), S3),
    "torch.tensordot(lists)": (lambda x: torch.tensordot(x, x, dims=([2], [2])), S3),
    "torch.tensordot(int)": (lambda x: torch.tensordot(x, x.permute(2, 0, 1), dims=1), S3),
    "torch.tensordot(default 2)": (lambda x: torch.tensordot(x, x[0] * 0.5), S3),
    "torch.tensordot(0)": (lambda x: torch.tensordot(x[0, 0, :3], x[0, 1], dims=0), S3),
    "torch.tensordot(two dims, out of order)": (lambda x: torch.tensordot(x, x.permute(0, 2, 1), dims=([2, 1], [1, 2])),
                                                S3),
    "torch.tensordot(negative dims, tuples)": (lambda x: torch.tensordot(x, W, dims=((-1,), (0,))), S3),
    "torch.tensordot(4-D)": (lambda x: torch.tensordot(x, x, dims=([1, 3], [1, 3])), (1, 3, 4, 4)),
    "torch.linalg.multi_dot": (lambda x: torch.linalg.multi_dot([x[0], x[0].t(), x[0]]), S3),
    "torch.linalg.multi_dot(vectors at the ends)": (lambda x: torch.linalg.multi_dot([x[0, 0, :4], x[0], W, x[0, 1, :3]]),
                                                    S3),
    "torch.linalg.multi_dot(two)": (lambda x: torch.linalg.multi_dot((x[0].t(), x[0])), S3),
    "torch.linalg.vecdot": (lambda x: torch.linalg.vecdot(x, x.flip(-1)), S3),
    "torch.linalg.vecdot(dim, broadcast)": (lambda x: torch.linalg.vecdot(x, x[:, :1], dim=1), S3),
    "torch.linalg.vecdot(constant)": (lambda x: torch.linalg.vecdot(x, torch.linspace(-1, 1, 8)), S3),
    "torch.cross(dim=-1)": (lambda x: torch.cross(x[..., :3], x[..., 3:6], dim=-1), S3),
    "torch.cross(dim 1)": (lambda x: torch.cross(x[:, :3], x[:, 1:], dim=1), S3),
    "torch.cross(no dim, the last dim the first of size 3)": (lambda x: torch.cross(x[..., :3], x[..., 5:]), S3),
    "Tensor.cross": (lambda x: x[..., :3].cross(x[..., 2:5], dim=2), S3),
    "torch.linalg.cross(broadcast)": (lambda x: torch.linalg.cross(x[..., :3], x[:, :1, 3:6]), S3),
    "torch.linalg.cross(constant, dim 0)": (lambda x: torch.linalg.cross(x[0, :3], torch.tensor([[0.5], [-1.0], [2.0]]),
                                                                        dim=0), S3),
    "torch.cdist": (lambda x: torch.cdist(x, x * 0.5), S3),
    "torch.cdist(p=1)": (lambda x: torch.cdist(x, x[:, :3], p=1), S3),
    "torch.cdist(p=inf, 2-D)": (lambda x: torch.cdist(x[0], x[0, :2], p=float("inf")), S3),
    "torch.cdist(p=3, p=0.5)": (lambda x: torch.cdist(x[0], x[0, :2], p=3) + torch.cdist(x, x[:, :2], 0.5), S3),
    "torch.cdist(batch broadcast)": (lambda x: torch.cdist(x, x[:1, :3]), (2, 4, 8)),
    "torch.cdist(constant x1, compute_mode)": (lambda x: torch.cdist(W.t(), x, compute_mode="donot_use_mm_for_euclid_dist"),
                                               S3),
    # more than 25 rows: torch's float takes its matrix-product form, the same distances
    "torch.cdist(30 rows)": (lambda x: torch.cdist(x, x.flip(1)), (1, 30, 4)),
}
if hasattr(torch, "chain_matmul"):              # deprecated for torch.linalg.multi_dot
    FORMS["torch.chain_matmul"] = (lambda x: torch.chain_matmul(x[0], x[0].t(), x[0]), S3)
    FORMS["torch.chain_matmul(one)"] = (lambda x: torch.chain_matmul(x[0]) * 2, S3)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_rewrite_is_torch_in_float(name):
    """The rewrite is exact: the captured graph in float is torch's result
    but for float rounding."""
    fn, shape = FORMS[name]
    model = Call(fn).eval()
    x = torch.randn(shape, generator=torch.Generator().manual_seed(len(name))) * 2.0
    g = capture(model, [x])
    assert not [n.name for n in g.nodes if n.op == "unsupported"]
    assert len({n.name for n in g.nodes}) == len(g.nodes)
    with torch.no_grad():
        want = model(x)
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape
    assert torch.isfinite(want).all()
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-4), (got - want).abs().max()


# calls that are one product: exactly one matmul, whatever the operands' order
ONE_MATMUL = ["torch.dot", "torch.inner(3-D, 3-D)", "torch.outer", "torch.mv", "torch.addmm(beta, alpha)",
              "torch.addmv", "torch.addbmm", "torch.baddbmm", "torch.addr", "torch.tensordot(two dims, out of order)",
              "torch.linalg.vecdot(dim, broadcast)", "torch.cdist"]


@pytest.mark.parametrize("name", ONE_MATMUL)
def test_one_product_is_one_matmul(name):
    fn, shape = FORMS[name]
    g = capture(Call(fn).eval(), [torch.randn(shape)])
    assert [n.op for n in g.nodes].count("matmul") == 1, [n.op for n in g.nodes]


def test_transposed_rhs_is_the_matmuls_own():
    """torch.inner(x, x) contracts both operands' last dims: the right one
    is viewed as [B, cols, K] and transposed by a 3-D permute that feeds the
    matmul alone, which the int8 lowering takes as it is (no copy)."""
    g = capture(Call(lambda x: torch.inner(x, x)).eval(), [torch.randn(S3)])
    mm = next(n for n in g.nodes if n.op == "matmul")
    rhs = g.node(mm.inputs[1])
    assert rhs.op == "permute" and rhs.attrs["dims"] == [0, 2, 1], (rhs.op, rhs.attrs)
    res = compile_model(Call(lambda x: torch.inner(x, x)).eval(), [torch.randn(S3)], inputs(S3, -3.0, 3.0, 4))
    assert not [o for o in res.lowered.operators if "transpose" in o or "permute" in o], res.lowered.operators


# addmm's scalars and input shapes on the host, int8: (alpha, beta, input of x, bound in output steps)
SCALED = {
    "row input, alpha and beta": (0.25, -2.0, lambda x: x[0, 1, :4], 1.5),
    "column input": (1, 1, lambda x: x[0, :, 2:3], 1.5),
    "0-d input": (2, 0.5, lambda x: x[0, 0, 0], 1.5),
    "full input, beta=0": (1, 0, lambda x: x[0, :, :4], 1.5),
    "alpha=0": (0, 0.5, lambda x: x[0, :, 4:], 1.0),
}


@pytest.mark.parametrize("name", sorted(SCALED))
def test_addmm_scalars_and_input_on_the_host(name, tmp_path):
    alpha, beta, input_of, bound = SCALED[name]
    model = Call(lambda x: torch.addmm(input_of(x), x[0], x[0].t(), beta=beta, alpha=alpha)).eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"{name}: {worst:.2f} output steps")
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


# forms refused, in one line naming the call: (call of x, input shape, the call as named, words of the reason)
REFUSED = {
    "torch.cross without dim, the first dim of size 3 not the last": (
        lambda x: torch.cross(x[:, :, :3], x[:, :, 3:6]), (1, 3, 8), "cross (torch.cross)", "give dim="),
    "torch.cdist(p=0)": (lambda x: torch.cdist(x, x, p=0), S3, "cdist (torch.cdist)", "p=0"),
    "torch.inner of a 0-d tensor": (lambda x: torch.inner(x[0, 0, 0], x), S3, "inner (torch.inner)", "0-d operand"),
    "torch.addmm(alpha=0, beta=0)": (lambda x: torch.addmm(x[0, 0, :4], x[0], x[0].t(), alpha=0, beta=0), S3,
                                     "addmm (torch.addmm)", "alpha=0"),
    "torch.addmv(alpha=0, constant input)": (lambda x: torch.addmv(torch.ones(4), x[0], x[0, 0], alpha=0), S3,
                                             "addmv (torch.addmv)", "constant"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line(name):
    fn, shape, call, words = REFUSED[name]
    calibration = inputs(shape, -3.0, 3.0, 2)
    with pytest.raises(CompileError) as e:
        compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    message = str(e.value)
    assert "\n" not in message, message
    assert f"ptec has no kernel for {call}: " in message and words in message, message


def test_integer_operands_are_refused_in_one_line():
    """int64 operands (x.long()) are not rewritten into an int8 matmul:
    refused naming the call that reads them."""
    model = Call(lambda x: torch.mv((x[0] * 2).long(), (x[0, 1] * 2).long()).float() + x[0, :, 0]).eval()
    calibration = inputs(S3, -3.0, 3.0, 2)
    with pytest.raises(CompileError) as e:
        compile_model(model, [calibration[0][0]], calibration)
    assert "\n" not in str(e.value)
    assert "used by mv (torch.mv), which ptec computes only on float values" in str(e.value), str(e.value)


def test_cli_refusal_exits_2_in_one_line(tmp_path):
    src = tmp_path / "crossed.py"
    src.write_text("import torch, torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    input_shape = (1, 3, 8)\n"
                   "    def forward(self, x):\n"
                   "        return torch.cross(x[:, :, :3], x[:, :, 3:6]) * 2.0\n"
                   "def make():\n    return M()\n")
    out = tmp_path / "crossed.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "2", "-o", str(out)],
                       env=ENV, capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "ptec has no kernel for cross (torch.cross): give dim=" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


class LinearAlgebra(torch.nn.Module):
    """Several of the rewrites in one model: addmm, baddbmm, tensordot,
    vecdot, cross, cdist and dot."""

    def forward(self, x):                                                     # x [1, 4, 8]
        a = torch.addmm(x[0, 0, :4], x[0], x[0].t(), beta=0.5, alpha=0.25)[None]     # [1, 4, 4]
        b = torch.baddbmm(x[:, :, :4], x, x[:, :4].transpose(1, 2) * 0.3)             # [1, 4, 4]
        c = torch.tensordot(x, torch.linspace(-1, 1, 16).reshape(8, 2), dims=1)       # [1, 4, 2]
        d = torch.linalg.vecdot(x, x.flip(-1))[..., None] * 0.2                       # [1, 4, 1]
        e = torch.cross(x[..., :3], x[..., 4:7], dim=-1)                              # [1, 4, 3]
        f = torch.cdist(x, x.flip(1) * 0.5)                                           # [1, 4, 4]
        g = torch.dot(x[0, 0], x[0, 3]).reshape(1, 1, 1).expand(1, 4, 1)             # [1, 4, 1]
        return torch.cat([a, b, c, d, e, f, g], -1)                                   # [1, 4, 19]


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m33"])
def test_together_on_host_and_boards(target, tmp_path):
    model = LinearAlgebra().eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration,
                        target="cortex-m55" if target == "host" else target)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    if target == "host":
        worst = worst_steps(model, res, calibration[:4], tmp_path)
        print(f"worst {worst:.2f} output steps")
        assert worst <= 2.0
    else:
        board_matches_reference(res.data, inputs(S3, -3.0, 3.0, 1, seed=5)[0][0].numpy(), target, tmp_path)
