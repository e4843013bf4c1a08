"""A model around one function of itself and its input: LayerFn(fn) holds a
seeded layer `l` (Linear(5, 8) unless given) and its forward is fn(self, x),
so a test can write a forward as a lambda that calls self.l. steps() compiles
one on samples of (2, 5) and measures it against torch in output steps
(shared by the trace-fidelity and type-check tests)."""
import torch
import torch.nn as nn

from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program

from model_checks import host_steps_from_float


class LayerFn(nn.Module):
    def __init__(self, fn, layer=None):
        super().__init__()
        torch.manual_seed(0)
        self.fn = fn
        self.l = layer if layer is not None else nn.Linear(5, 8)

    def forward(self, x):
        return self.fn(self, x)


def samples(n=8, shape=(2, 5), seed=1):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=g),) for _ in range(n)]


def steps(model, tmp_path, shape=(2, 5)) -> float:
    """Output steps from torch on four samples; the shape of a run's out is
    torch's (not the input passed through)."""
    model = model.eval()
    cal = samples(shape=shape)
    res = compile_model(model, cal[0], cal)
    got = run_program(parse_program(res.data), [cal[0][0].numpy()])[0]
    with torch.no_grad():
        assert got.shape == tuple(model(cal[0][0]).shape)
    return host_steps_from_float(model, res, cal[:4], tmp_path)
