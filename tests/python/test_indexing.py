"""Basic tensor indexing and narrow (issue 15): `qkv[..., :d]`, `x[:, -1]`,
`z[:, 1:5, :, 2:]`, `x[0, :, None]`, `torch.narrow` become slice (and
reshape) nodes, lowered to int8 `slice_copy`; the C runtime's bytes equal
the numpy int8 reference's, and the result is close to PyTorch's float
one. A step (`x[:, ::2]`) is one-wide slices joined by a cat. A tensor
index computed from the input (`x[x > 0]`) is refused by name:
docs/refused-operators.md and test_refused_operators.py."""
import numpy as np
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
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


def test_a_step_is_slices_joined(tmp_path):
    g = torch.Generator().manual_seed(3)
    calib = [(torch.randn(1, 8, generator=g),) for _ in range(8)]
    res = compile_model(Strided().eval(), [calib[0][0]], calib)
    assert not res.lowered.fallbacks and "aten::cat.out" in res.lowered.operators
    prog = parse_program(res.data)
    x = calib[3][0]
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert np.abs(got - x[:, [0, 2, 4, 6]].numpy() * 2.0).max() <= step     # two roundings: x's and the product's

