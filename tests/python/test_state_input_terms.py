"""A decay through buffer states that reads a float input's term (issue 15):
`self.a = 0.9 * self.b + 0.1 * x; self.b = self.a.clone()` (or copy_).
The states' loop ran in fp32 (capture_state_precision), but its operand
`0.1 * x` was computed in int8: x rounded onto the input's grid, the product
onto its own, every execute, and the loop (gain 1 / (1 - 0.9) and more)
carried that rounding. The input's term now runs in fp32 from the input's
exact float value (steps that change it by constants only: a layer, such as
a GRU's input projection, keeps its int8 grid).

Oracle: PyTorch, a copy of the model called once per execute, against
ptec's program streamed on one loaded method (host_runtime.run_stream via
test_state_cycles._stream: 100 executes repeating the 20 calibration
inputs), in output quantization steps, seeds 0..3."""
import pytest
import torch
import torch.nn as nn

from test_state_cycles import DecayTwo, _stream


class Clone(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.zeros(1, 4))
        self.register_buffer("b", torch.zeros(1, 4))

    def forward(self, x):
        self.a = 0.9 * self.b + 0.1 * x
        self.b = self.a.clone()
        return x * 1.0, self.a * 1.0


class CopyInPlace(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.zeros(1, 4))
        self.register_buffer("b", torch.zeros(1, 4))

    def forward(self, x):
        self.a.copy_(0.9 * self.b + 0.1 * x)
        self.b.copy_(self.a)
        return x * 1.0, self.a + 0.0


class OneBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.zeros(1, 4))

    def forward(self, x):
        self.a = 0.95 * self.a + (x - 0.5) / 10
        return x * 1.0, self.a * 1.0


# worst output steps over seeds 0..3 before: two 3.20 (0..7: 3.48), clone 1.51, copy_ 1.51, one 1.28 at seed 0
MODELS = {"two": lambda: DecayTwo(0.1), "clone": Clone, "copy_": CopyInPlace, "one": OneBuffer}


@pytest.mark.parametrize("form", sorted(MODELS))
def test_a_decay_reads_the_input_term_unrounded(form):
    """After: 0.0 output steps (the output is the fp32 loop's value)."""
    for seed in (0, 1, 2, 3):
        worst, graph = _stream(MODELS[form]().eval(), (1, 4), seed=seed)
        assert worst <= 0.5, (form, seed, f"{worst:.2f} output steps from torch over 100 executes")
    terms = [n for n in graph.nodes if "x" in n.inputs and n.name not in graph.outputs]      # 0.1 * x, x - 0.5
    assert terms and all(n.attrs.get("fp32") for n in terms)


class LayerTerm(nn.Module):
    """The loop's operand from the input is a layer: it keeps its int8 grid."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(4, 4)
        self.register_buffer("a", torch.zeros(1, 4))

    def forward(self, x):
        self.a = 0.9 * self.a + self.fc(x)
        return self.a * 1.0


def test_a_layer_term_keeps_its_int8_grid():
    worst, graph = _stream(LayerTerm().eval(), (1, 4), out=0)
    assert not graph.node("fc").attrs.get("fp32")
    assert worst <= 2.0, f"{worst:.2f} output steps from torch over 100 executes"      # 1.22, as before
