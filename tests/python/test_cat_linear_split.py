"""A Linear reading a torch.cat along its features whose parts span ranges
4x or more apart is a sum of linears, one per part on its own int8 grid
(ptec.cat_linear_split, issue 15 R4). Oracle: torch float, in output
steps, against the same weights written by hand as a(x) + b(x**2) +
c(x**3); parts of similar ranges keep their program byte for byte."""
import pytest
import torch

from ptec import cat_linear_split
from ptec.compiler import compile_model
from model_checks import worst_steps_compiled


class Powers(torch.nn.Module):
    def __init__(self, act=torch.sigmoid):
        super().__init__()
        self.fc15 = torch.nn.Linear(15, 6)
        self.act = act

    def forward(self, x):
        return self.act(self.fc15(torch.cat([x, x ** 2, x ** 3], -1)))


class ByHand(torch.nn.Module):
    """Powers' weights as three linears summed (the bias once)."""

    def __init__(self, m):
        super().__init__()
        w = m.fc15.weight.detach()
        self.a, self.b, self.c = (torch.nn.Linear(5, 6, bias=i == 0) for i in range(3))
        for i, layer in enumerate((self.a, self.b, self.c)):
            layer.weight.data = w[:, 5 * i:5 * i + 5].clone()
        self.a.bias.data = m.fc15.bias.detach().clone()
        self.act = m.act

    def forward(self, x):
        return self.act(self.a(x) + self.b(x ** 2) + self.c(x ** 3))


def _calibration(shape, seed):
    torch.manual_seed(seed)
    return [(torch.randn(shape),) for _ in range(8)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_powers_keep_their_own_grids(seed):
    """sigmoid(fc(cat([x, x**2, x**3]))): 28.8 / 11.6 / 9.4 output steps on the cat's one grid, 8.3 / 5.0 / 3.2
    split, the hand-written sum's own figures."""
    cal = _calibration((4, 5), seed)
    torch.manual_seed(seed)
    m = Powers().eval()
    worst, res = worst_steps_compiled(m, cal, cal)
    hand, _ = worst_steps_compiled(ByHand(m).eval(), cal, cal)
    ops = [n.op for n in res.graph.nodes]
    assert "cat" not in ops and ops.count("linear") == 3 and ops.count("add") == 2
    assert worst <= hand + 0.5, (worst, hand)


@pytest.mark.parametrize("seed", [0, 1])
def test_fused_relu_and_three_dims(seed):
    """relu(fc(cat)) over [2, 3, 5] rows: the activation on the last add."""
    cal = _calibration((2, 3, 5), seed)
    torch.manual_seed(seed)
    m = Powers(torch.relu).eval()
    worst, res = worst_steps_compiled(m, cal, cal)
    hand, _ = worst_steps_compiled(ByHand(m).eval(), cal, cal)
    last = next(n for n in res.graph.nodes if n.op == "add" and not any(n.name in u.inputs for u in res.graph.nodes
                                                                        if u.op == "add"))
    assert last.attrs.get("act") is not None
    assert worst <= hand + 0.5, (worst, hand)


class Near(torch.nn.Module):
    """Parts of similar ranges (a U-Net skip's, an LSTM cell's [x, h])."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b, self.fc = torch.nn.Linear(5, 4), torch.nn.Linear(5, 4), torch.nn.Linear(13, 3)

    def forward(self, x):
        return self.fc(torch.cat([torch.tanh(self.a(x)), x, torch.relu(self.b(x)) * 2], 1))


class Shared(Powers):
    """The cat read by another layer too: its parts share its grid anyway, left as it is."""

    def forward(self, x):
        c = torch.cat([x, x ** 2, x ** 3], -1)
        return self.act(self.fc15(c)) + c[:, :6]


@pytest.mark.parametrize("model", [Near, Shared])
def test_other_cats_are_unchanged_byte_for_byte(model, monkeypatch):
    cal = _calibration((4, 5), 0)
    torch.manual_seed(0)
    m = model().eval()
    res = compile_model(m, [cal[0][0]], cal)
    assert "cat" in [n.op for n in res.graph.nodes]
    monkeypatch.setattr(cat_linear_split, "SPREAD", float("inf"))      # (the rule never applies)
    assert compile_model(m, [cal[0][0]], cal).data == res.data


def test_a_wide_cat_changes_the_program(monkeypatch):
    cal = _calibration((4, 5), 0)
    torch.manual_seed(0)
    m = Powers().eval()
    split = compile_model(m, [cal[0][0]], cal)
    monkeypatch.setattr(cat_linear_split, "SPREAD", float("inf"))
    whole = compile_model(m, [cal[0][0]], cal)
    assert "cat" in [n.op for n in whole.graph.nodes] and whole.data != split.data
