"""Issue 15: a steep saturating gate of a computed value, `torch.clamp(
self.fc(x) * 1e6, 0, 1)` and its siblings (hardtanh, sigmoid, tanh, a
number added, a division by a tiny number, clamp(fc(x) * 10, 0, 1)),
against torch float (the oracle: the same model called by PyTorch), in the
program output's quantization steps, over seeds 0..2 (64 calibration
inputs, 8 fresh ones whose rows are scaled by 1e-3 half the time, so the
layer's outputs there sit far inside one int8 step of 0, and one row of
exact zeros). ptec.capture_steep_gates: the gate, its factor and the
layer computed once more in fp32 from the float input."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec.compiler import compile_model
from model_checks import worst_steps_compiled
from test_step_functions_precision import _feeds


class Layer(nn.Module):
    def __init__(self, gate):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(8, 8)
        self.gate = gate

    def forward(self, x):
        return self.gate(self.fc(x))


# measured before (worst over seeds 0..2; int8: the layer's value within half its step of the ramp read
# as the other side) -> after: 0.00 each
GATES = {
    "clamp(fc(x) * 1e6, 0, 1)": (lambda h: torch.clamp(h * 1e6, 0, 1)),             # 255.00
    "torch.clamp(1e6 * fc(x), -1, 1)": (lambda h: torch.clamp(1e6 * h, -1, 1)),     # 127.50
    "F.hardtanh(fc(x) * 1e6)": (lambda h: F.hardtanh(h * 1e6)),                     # 127.50
    "torch.sigmoid(fc(x) * 1e6)": (lambda h: torch.sigmoid(h * 1e6)),               # 128.00
    "torch.tanh(fc(x) / 1e-6)": (lambda h: torch.tanh(h / 1e-6)),                   # 127.50
    "(fc(x) * 1e4).clamp(0, 1)": (lambda h: (h * 1e4).clamp(0, 1)),                 # 255.00
    "clamp(fc(x) * 1e6 + 0.5, 0, 1)": (lambda h: torch.clamp(h * 1e6 + 0.5, 0, 1)),  # 128.00
    "clamp((fc(x) - 0.1) * 1e6, 0, 1)": (lambda h: torch.clamp((h - 0.1) * 1e6, 0, 1)),  # 255.00
    "clamp(fc(x) * 10, 0, 1)": (lambda h: torch.clamp(h * 10, 0, 1)),               # 19.03
    "torch.sigmoid(fc(x) * 100)": (lambda h: torch.sigmoid(h * 100)),               # 34.16
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(GATES))
def test_a_steep_gate_of_a_layer_is_torchs(name, seed):
    feeds = _feeds(72, seed)
    worst, res = worst_steps_compiled(Layer(GATES[name]).eval(), feeds[:64], feeds[64:])
    assert worst <= 0.5, f"{name} seed {seed}: {worst:.2f} output steps from torch"
    assert any(n.attrs.get("fp32") and n.op == "linear" for n in res.graph.nodes)


def test_a_steep_gate_read_by_an_int8_layer_is_on_its_own_grid():
    """The fp32 clamp's value is quantized for the int8 add on its own calibrated range [0, 1], not on its
    input's (a clamp keeps its input's grid in int8: there the gate's 1 rounded to 0 on a grid of 2e4).
    Measured 73.54 / 74.48 -> 1.02 / 1.02 (seed 2: 9.15, as `(fc(x) > 0).float() + fc(x)`'s exact comparison:
    the int8 add's own)."""
    for seed in (0, 1):
        feeds = _feeds(72, seed)
        worst, _ = worst_steps_compiled(Layer(lambda h: torch.clamp(h * 1e6, 0, 1) + h).eval(), feeds[:64],
                                        feeds[64:])
        assert worst <= 1.5, f"seed {seed}: {worst:.2f} output steps from torch"


class OfInput(nn.Module):
    def forward(self, x):
        return torch.clamp(x * 1e6, 0, 1)


def test_a_steep_gate_of_an_input_reads_its_float_value():
    """The input's int8 grid rounds it as a layer's does (255.00 -> 0.00); under int8_io its codes are all
    the program has, and the int8 steps stay."""
    feeds = _feeds(72, 0)
    worst, res = worst_steps_compiled(OfInput().eval(), feeds[:64], feeds[64:])
    assert worst <= 0.5, f"{worst:.2f} output steps from torch"
    res = compile_model(OfInput().eval(), list(feeds[0]), feeds[:8], int8_io=True)
    assert not any(n.attrs.get("fp32") for n in res.graph.nodes)


@pytest.mark.parametrize("gate", [lambda h: torch.sigmoid(h * 2), lambda h: torch.clamp(h * 4, 0, 1),
                                  lambda h: F.hardtanh(h), lambda h: torch.clamp(h * 1e6, min=0)])
def test_a_gentle_or_one_sided_gate_keeps_its_int8_kernel(gate):
    """A slope under 8 per unit of the gate's width, or a clamp of one bound (a ramp, no step): nothing fp32."""
    feeds = _feeds(8, 0)
    res = compile_model(Layer(gate).eval(), list(feeds[0]), feeds)
    assert not any(n.attrs.get("fp32") for n in res.graph.nodes)
