"""Basic tensor indexing and narrow (issue 15): `qkv[..., :d]`, `x[:, -1]`,
`z[:, 1:5, :, 2:]`, `x[0, :, None]`, `torch.narrow` become slice (and
reshape) nodes, lowered to int8 `slice_copy`; the C runtime's bytes equal
the numpy int8 reference's, and the result is close to PyTorch's float
one. Indexing the capture cannot express (a step, a tensor index) stays an
unsupported operator, refused in one line that names it."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(12, 36)
        self.c = nn.Conv2d(4, 6, 3, padding=1)

    def forward(self, x, y):
        qkv = self.qkv(x)                              # [1, 16, 36]
        q, k, v = qkv[..., :12], qkv[..., 12:24], qkv[:, :, 24:]
        a = torch.softmax(q @ k.transpose(-2, -1), -1) @ v
        z = self.c(y)[:, 1:5, :, 2:]
        return a[:, -1], z, torch.narrow(a, 1, 2, 5), z[0, :, None], a.narrow(-1, -4, 4)


def _calib():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(1, 16, 12, generator=g), torch.randn(1, 4, 8, 8, generator=g))
            for _ in range(8)]


def test_slices_run_int8_and_match_the_reference(tmp_path):
    torch.manual_seed(0)
    model = Attention().eval()
    calib = _calib()
    res = compile_model(model, list(calib[0]), calib)
    assert not res.lowered.fallbacks and not res.lowered.refusals
    assert sum(p.op == "slice" for p in res.lowered.placements) >= 7
    prog = parse_program(res.data)
    xs = [t.numpy() for t in calib[3]]
    want = run_program(prog, xs)
    got = host_runtime.run(prog, res.data, xs, workdir=str(tmp_path))
    with torch.no_grad():
        ref = [t.numpy() for t in model(*calib[3])]
    assert len(got) == len(ref) == 5
    for w, g, r in zip(want, got, ref):
        assert np.asarray(g).shape == r.shape
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
        cos = float(np.dot(np.ravel(g), r.ravel()) / np.linalg.norm(g) / np.linalg.norm(r))
        assert cos >= 0.99, cos


class Strided(nn.Module):
    def forward(self, x):
        return x[:, ::2] * 2.0


def test_a_step_stays_unsupported_and_is_named():
    x = torch.randn(1, 8)
    with pytest.raises(CompileError, match="getitem") as e:
        compile_model(Strided().eval(), [x], [(x,)])
    assert "\n" not in str(e.value)
