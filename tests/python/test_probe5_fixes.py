"""Fixes for probe 5's refusals of ordinary code (issue 15):

1. an embedding looked up by ids the program fixes: GPT / BERT positions
   `self.wpe(torch.arange(T))`, `F.embedding(torch.arange(T), W)`, a start
   token `emb(torch.zeros(B, dtype=torch.long))`, a slice of an arange buffer
   (with max_norm: torch's renormed rows) run as the constant rows
   (capture_constant_ids); they were refused as "no kernel for wpe";
2. `torch.is_floating_point(x)`, `torch.is_complex(x)` and `x.is_leaf` in
   Python control: metadata, not values (the method forms already ran);
   they were refused as depending on the input's values.

Oracle: PyTorch float, within a bound in output quantization steps, on
calibration-like inputs whose outputs vary; ptec-run gives the reference
interpreter's bytes (host_steps_from_float)."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec.compiler import compile_model

from model_checks import host_steps_from_float


def _samples(shape, n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g),) for _ in range(n)]


class _Positions(nn.Module):          # GPT-2's wpe
    def __init__(self):
        super().__init__()
        self.wpe, self.out = nn.Embedding(16, 8), nn.Linear(8, 4)

    def forward(self, x):
        return self.out(x + self.wpe(torch.arange(x.shape[1])))


class _FunctionalPositions(nn.Module):
    def __init__(self):
        super().__init__()
        self.w, self.out = nn.Parameter(torch.randn(16, 8)), nn.Linear(8, 4)

    def forward(self, x):
        return self.out(x + F.embedding(torch.arange(x.shape[1]), self.w))


class _StartToken(nn.Module):         # a greedy decoder's first input
    def __init__(self):
        super().__init__()
        self.emb, self.out = nn.Embedding(10, 8), nn.Linear(8, 4)

    def forward(self, x):
        return self.out(x + self.emb(torch.full((x.shape[0],), 3, dtype=torch.long))[:, None])


class _BufferSlice(nn.Module):        # positions from a registered arange, rows renormed
    def __init__(self):
        super().__init__()
        self.emb, self.out = nn.Embedding(16, 8, max_norm=1.0), nn.Linear(8, 4)
        self.register_buffer("pos", torch.arange(16))

    def forward(self, x):
        return self.out(x + self.emb(self.pos[2:2 + x.shape[1]]))


@pytest.mark.parametrize("model", [_Positions, _FunctionalPositions, _StartToken, _BufferSlice],
                         ids=lambda m: m.__name__)
def test_embedding_of_fixed_ids_runs_as_constant_rows(model, tmp_path):
    torch.manual_seed(3)
    m = model().eval()
    cal = _samples((2, 5, 8), 16, 7)
    res = compile_model(m, cal[0], cal)
    assert not any(n.op == "embedding" for n in res.graph.nodes), "fixed ids need no lookup at run time"
    assert host_steps_from_float(m, res, cal[:4], tmp_path) <= 2.0


def test_fixed_ids_keep_torch_max_norm_rows(tmp_path):
    # the rows torch looks up with max_norm are renormed: a table of large rows
    torch.manual_seed(4)
    m = _BufferSlice().eval()
    with torch.no_grad():
        m.emb.weight.mul_(5.0)
    cal = _samples((2, 5, 8), 16, 8)
    res = compile_model(m, cal[0], cal)
    assert host_steps_from_float(m, res, cal[:4], tmp_path) <= 2.0


class _IfFloat(nn.Module):
    def __init__(self, test):
        super().__init__()
        self.test, self.lin = test, nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        return y if self.test(y) else -y


@pytest.mark.parametrize("test", [torch.is_floating_point, lambda v: not torch.is_complex(v), lambda v: v.is_leaf],
                         ids=["is_floating_point", "is_complex", "is_leaf"])
def test_metadata_in_python_control_takes_torch_branch(test, tmp_path):
    torch.manual_seed(5)
    m = _IfFloat(test).eval()
    cal = _samples((2, 8), 16, 9)
    res = compile_model(m, cal[0], cal)
    # the branch torch takes (y, not -y): a wrong branch is off by twice the output
    assert host_steps_from_float(m, res, cal[:4], tmp_path) <= 1.5
