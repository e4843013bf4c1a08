"""Softmax over the last dim at any rank (issue 15): a rank-5 tensor is
contiguous, so its rows go straight to cortex_m::softmax; the C runtime
gives the numpy int8 reference's bytes, close to PyTorch's float result.
Another dim of a rank-5 tensor needs a rank-5 transpose and stays fp32."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


class Heads(nn.Module):
    """Multi-head scores kept as [B, heads, groups, T, T]."""

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.dim = dim

    def forward(self, x):                        # x: [1, 2, 3, 6, 8]
        return torch.softmax(self.proj(x), self.dim)


def _calib():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(1, 2, 3, 6, 8, generator=g) * 3,) for _ in range(8)]


@pytest.mark.parametrize("dim", [-1, 4])
def test_last_dim_softmax_of_rank_5_is_int8(dim, tmp_path):
    torch.manual_seed(0)
    model = Heads(dim).eval()
    calib = _calib()
    res = compile_model(model, list(calib[0]), calib)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert "cortex_m::softmax.out" in res.lowered.operators
    prog = parse_program(res.data)
    x = calib[3][0].numpy()
    want = run_program(prog, [x])[0]
    got = host_runtime.run(prog, res.data, [x], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    with torch.no_grad():
        r = model(calib[3][0]).numpy().ravel()
    g = np.asarray(got, np.float64).ravel()
    assert float(g @ r / np.linalg.norm(g) / np.linalg.norm(r)) >= 0.99


def test_another_dim_of_rank_5_stays_fp32_with_the_reason():
    torch.manual_seed(0)
    res = compile_model(Heads(2).eval(), list(_calib()[0]), _calib())
    assert any("only the last dim of a rank-5+ tensor" in r for r in res.lowered.refusals), res.lowered.refusals
