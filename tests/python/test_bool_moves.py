"""Casts of a moved computed bool (issue 15, capture_bool_moves):
`(x > 0).permute(0, 2, 1).float()`, `.transpose(1, 2).long()`, a slice's
`.int()`, an expand's `.float()`, views between: the bool cast first, the
same moves on the cast value (a move and an element-wise cast commute).

Oracle: torch, exact: int64 / int32 results equal torch's in value and
dtype; float 0 / 1 results within 0.5 output steps (their int8 grid holds
0 and 1: measured 0); the host runtime's bytes are the reference
interpreter's. Inputs keep every element at least an input step from the
threshold, so the comparison is torch's."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from model_checks import Call

# (call of x, bound in output steps for a float result; int results exact)
CALLS = {
    "(x > 0).permute(0, 2, 1).long()": lambda x: (x > 0).permute(0, 2, 1).long(),
    "(x > 0).transpose(1, 2).int()": lambda x: (x > 0).transpose(1, 2).int(),
    "(x > 0)[:, 1:3, ::2].long()": lambda x: (x > 0)[:, 1:3, ::2].long(),
    "(x[:, :1] > 0).expand(1, 4, 8).to(torch.int64)": lambda x: (x[:, :1] > 0).expand(1, 4, 8).to(torch.int64),
    "torch.transpose(x > 0, 1, 2).reshape(1, 32).long()": lambda x: torch.transpose(x > 0, 1, 2).reshape(1, 32).long(),
    "(x > 0).permute(0, 2, 1).float()": lambda x: (x > 0).permute(0, 2, 1).float(),
    "(x > 0).transpose(1, 2).float() * x.transpose(1, 2)": lambda x: (x > 0).transpose(1, 2).float()
    * x.transpose(1, 2),
    "(x > 0)[..., 2:].double()": lambda x: (x > 0)[..., 2:].double(),
    "(x > 0).t() of 2-D, .long()": lambda x: (x[0] > 0).t().long(),
    "(x[0] > 0).T.long()": lambda x: (x[0] > 0).T.long(),
    "(x > 0).mT.int()": lambda x: (x > 0).mT.int(),
    "(x > 0).chunk(2, 2)[1].transpose(1, 2).long()": lambda x: (x > 0).chunk(2, 2)[1].transpose(1, 2).long(),
    "(x > 0).unbind(1)[2].long()": lambda x: (x > 0).unbind(1)[2].long(),
    "torch.broadcast_to(x[:, :1] > 0, ...).long()": lambda x: torch.broadcast_to(x[:, :1] > 0, (1, 4, 8)).long(),
    "(x > 0).select(2, 3).flip(1).long()": lambda x: (x > 0).select(2, 3).flip(1).long(),
}


def _inputs(n=6):
    g = torch.Generator().manual_seed(5)
    return [(torch.rand(1, 4, 8, generator=g) * 6 - 3,) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_cast_of_a_moved_bool_is_torchs(name, tmp_path):
    model = Call(CALLS[name]).eval()
    cal = _inputs()
    res = compile_model(model, [cal[0][0]], cal)
    prog = parse_program(res.data)
    in_step = res.graph.node(res.graph.inputs[0]).qparams[0]
    varied = 0
    for (x,) in cal[:4]:
        x = torch.where(x.abs() < in_step, x + 2 * in_step, x)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = model(x).numpy()
        assert got.shape == want.shape
        if want.dtype.kind in "iu":
            assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
        else:
            step = res.graph.node(res.graph.outputs[0]).qparams[0]
            bound = 1.5 if "* x" in name else 0.5                           # a product: 1.16 measured
            assert got.dtype == want.dtype and np.abs(got - want).max() <= bound * step + 1e-6
        varied += int(np.ptp(want) > 0)
    assert varied >= 3


def _two_casts(x):
    m = (x > 0).transpose(1, 2)[:, 1:]
    return m.float() * 2 + m.long().float() - m.int().float()


def test_one_moved_bool_cast_twice(tmp_path):
    """One moved bool read by three casts: each made before the same moves."""
    cal = _inputs()
    model = Call(_two_casts).eval()
    res = compile_model(model, [cal[0][0]], cal)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in cal[:3]:
        x = torch.where(x.abs() < 0.05, x + 0.1, x)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert np.abs(got - model(x).numpy()).max() <= 0.5 * step + 1e-6
