"""Streamed buffer states kept at the precision torch keeps them (issue 15,
capture_state_precision): a state whose next value is computed from its
last runs its loop in fp32 and is a float32 tensor, so no int8 rounding is
carried from one execute to the next; a count or sum (`self.t += 1.0`) has
its readers in fp32 too, as it grows past any calibrated grid.

Oracle: PyTorch, a copy of the model called once per execute (its buffers
carry the writes), against ptec's program run on one loaded method
(host_runtime.run_stream: ptec-run --steps), in output quantization steps;
the numpy reference interpreter streamed the same way gives ptec-run's
values (to an fp32 ulp). Streams repeat the calibration's inputs, so the input and output
grids hold them and what is measured is the state's carried error."""
import copy

import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program
from model_checks import stream_worst_steps, worst_steps_compiled

from test_buffer_state import Ring       # slice writes: a constant 0/1 scatter (matmul), a where on a mask
from test_buffer_state import Reassigned as CatRing     # a cat of the buffer's tail and x


class CellState(nn.Module):
    """A GRU cell whose h is kept across executes."""

    def __init__(self, features, hidden):
        super().__init__()
        self.cell = nn.GRUCell(features, hidden)
        self.fc = nn.Linear(hidden, 4)
        self.register_buffer("h", torch.zeros(1, hidden))

    def forward(self, x):
        self.h.copy_(self.cell(x, self.h))
        return self.fc(self.h)


class GRUState(nn.Module):
    """nn.GRU given the kept h, which it then overwrites with h_n."""

    def __init__(self, features, hidden):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 4)
        self.register_buffer("h", torch.zeros(1, 1, hidden))

    def forward(self, x):
        y, h = self.gru(x, self.h)
        self.h.copy_(h)
        return self.fc(y[:, -1])


class Decay(nn.Module):
    """A float counter used as a time step: `self.t += 1.0`."""

    def __init__(self):
        super().__init__()
        self.register_buffer("t", torch.zeros(1))
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        self.t += 1.0
        return self.fc(x) * torch.exp(-0.05 * self.t)


class Clock(nn.Module):
    """`self.t = self.t + dt`, read through sin."""

    def __init__(self):
        super().__init__()
        self.register_buffer("t", torch.zeros(1))
        self.dt = 0.25

    def forward(self, x):
        self.t = self.t + self.dt
        return x + torch.sin(self.t)


class CountOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("t", torch.zeros(1))

    def forward(self, x):
        self.t += 1.0
        return x * 0.5 + self.t


def _stream(model, shape, calib, executes, seed):
    """Worst |ptec - torch| in output steps over `executes` executes of
    the calibration's inputs repeated; the reference interpreter's bytes."""
    g = torch.Generator().manual_seed(seed)
    cal = [torch.randn(*shape, generator=g) for _ in range(calib)]
    xs = [cal[k % calib] for k in range(executes)]
    return stream_worst_steps(model, cal, xs, checked=8)


# measured before -> after (30 executes, the calibration's 30 inputs): 1.72 to 3.20 -> 1.06 to 2.91
GRU_CASES = [(cls, f, h, seed) for cls in (CellState, GRUState) for f, h, seed in
             ((8, 16, 0), (8, 16, 2), (16, 32, 1), (4, 8, 1))]


@pytest.mark.parametrize("cls, features, hidden, seed", GRU_CASES,
                         ids=[f"{c.__name__}-{f}x{h}-s{s}" for c, f, h, s in GRU_CASES])
def test_a_kept_gru_state_streams_without_drift(cls, features, hidden, seed):
    torch.manual_seed(seed)
    model = cls(features, hidden).eval()
    shape = (1, features) if cls is CellState else (1, 1, features)
    worst, res = _stream(model, shape, 30, 30, seed + 100)
    assert worst <= 3.0, f"{worst:.2f} output steps from torch over 30 executes"
    state = next(n for n in res.graph.nodes if n.op == "state")
    assert state.attrs.get("fp32_state")


def test_a_fresh_stream_past_the_calibrated_state_range():
    """Inputs the calibration never saw: the int8 state saturated at its
    calibrated range (9.16 output steps, 4 x 8 GRU cell, seed 1); the fp32
    one does not (the input and output grids still bound the rest)."""
    torch.manual_seed(1)
    model = CellState(4, 8).eval()
    g = torch.Generator().manual_seed(101)
    cal = [torch.randn(1, 4, generator=g) for _ in range(120)]
    xs = [torch.randn(1, 4, generator=g) for _ in range(30)]
    res = compile_model(model, [cal[0]], [(x,) for x in cal])
    got = [o[0] for o in host_runtime.run_stream(parse_program(res.data), res.data, [[x.numpy()] for x in xs])]
    twin = copy.deepcopy(model)
    with torch.no_grad():
        want = [twin(x).numpy() for x in xs]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = max(float(np.abs(o - w).max()) for o, w in zip(got, want)) / step
    assert worst <= 5.0, f"{worst:.2f}"


# before: 99.3, 48.0 and 1020 output steps over 60 executes (the count saturated at 12)
@pytest.mark.parametrize("cls", [Decay, Clock, CountOut])
def test_a_float_counter_follows_torch_past_its_calibration(cls):
    torch.manual_seed(0)
    worst, res = _stream(cls().eval(), (1, 4), 12, 60, 1)
    assert worst <= 1.0, f"{worst:.2f} output steps from torch over 60 executes"
    state = next(n for n in res.graph.nodes if n.op == "state")
    assert state.attrs.get("fp32_state")


@pytest.mark.parametrize("cls, shape", [(CatRing, (1, 1, 3)), (Ring, (1, 8, 1))])
def test_a_ring_buffer_stays_int8(cls, shape):
    """Only moves in the loop (slices, cat, a slice write): exact on one int8 grid, not fp32."""
    torch.manual_seed(0)        # Ring's conv draws its weights: the same ones on every run (test_ring_buffer_precision: seeds 0..11)
    worst, res = _stream(cls().eval(), shape, 12, 20, 3)
    assert worst <= 2.5
    state = next(n for n in res.graph.nodes if n.op == "state")
    assert not state.attrs.get("fp32_state") and state.qparams is not None


# -- the sign of a difference (capture_sign.difference_sign_nodes) ---------------

class InputsSign(nn.Module):
    def forward(self, a, b):
        return torch.sign(a - b) + 0.25 * a


class MethodSign(nn.Module):
    def forward(self, a, b):
        return (a - b).sign() * a


class NumberSign(nn.Module):
    def forward(self, a):
        return torch.sgn(0.5 - a) + torch.sign(a - 0.25) + a


class KeptDifference(nn.Module):
    """The difference read elsewhere too: it stays for that reader."""

    def forward(self, a, b):
        d = a - b
        return torch.sign(d) * 0.5 + d


def _straddling(n, shape, seed, spread=1e-3):
    """Pairs (a, b) with b within `spread` of a: a - b straddles 0 closely."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        a = torch.randn(*shape, generator=g)
        out.append((a, a + spread * torch.randn(*shape, generator=g)))
    return out


def _worst(model, pairs):
    return worst_steps_compiled(model, pairs, pairs)


# before: 155, 195 output steps (the int8 difference's grid rounded +-1e-3 to 0)
@pytest.mark.parametrize("cls", [InputsSign, MethodSign])
def test_the_sign_of_a_difference_of_inputs_straddling_zero(cls):
    pairs = _straddling(8, (1, 16), 0)
    assert any((a - b).abs().max() > 0 and ((a - b) > 0).any() and ((a - b) < 0).any() for a, b in pairs)
    worst, res = _worst(cls().eval(), pairs)
    assert worst <= 1.5, f"{worst:.2f} output steps from torch"
    assert not any(n.op == "sub" and set(n.inputs) == {"a", "b"} for n in res.graph.nodes)


def test_the_sign_of_an_input_minus_a_number():
    g = torch.Generator().manual_seed(4)
    xs = [(torch.cat([0.5 + 1e-4 * torch.randn(1, 8, generator=g), 0.25 + 1e-4 * torch.randn(1, 8, generator=g),
                      torch.randn(1, 8, generator=g)], 1),) for _ in range(6)]
    worst, _ = _worst(NumberSign().eval(), xs)
    assert worst <= 1.5, f"{worst:.2f} output steps from torch"


def test_a_difference_read_elsewhere_is_kept():
    worst, res = _worst(KeptDifference().eval(), _straddling(8, (1, 16), 5, spread=0.5))
    assert any(n.op == "sub" and n.inputs == ["a", "b"] for n in res.graph.nodes)
    assert any(n.op == "compare" and n.inputs == ["a", "b"] for n in res.graph.nodes)
    assert worst <= 2.5, f"{worst:.2f} output steps from torch"


class GatedDecay(nn.Module):
    """A loop through a where: it runs in fp32 as the where-free ones do."""

    def __init__(self):
        super().__init__()
        self.register_buffer("m", torch.zeros(1, 4))

    def forward(self, x):
        self.m = torch.where(x > 0, 0.5 * self.m + 0.5 * x, self.m)
        return self.m + x


def test_a_loop_through_a_where_runs_fp32():
    """The state and its where fp32 (test_sign_where_precision measures the
    carried rounding this removes). Over the calibration's own 12 executes
    1.11 output steps from torch (1.09 when it stayed int8: a decay of 0.5
    carries little). Streaming those inputs a second time gives 23.8 either
    way: the state carried from the first pass makes outputs (3.41) past
    the grid calibration's single pass saw (2.93): its readers' int8 grids
    saturate, the state itself does not."""
    worst, res = _stream(GatedDecay().eval(), (1, 4), 12, 12, 6)
    state = next(n for n in res.graph.nodes if n.op == "state")
    assert state.attrs.get("fp32_state")
    assert all(n.attrs.get("fp32") for n in res.graph.nodes if n.op == "where")
    assert worst <= 1.5, f"{worst:.2f} output steps from torch"
