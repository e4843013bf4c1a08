"""Fixes for probe4's findings (notes/repro4):

1. a streaming conv's cache buffer, `y = cat([cache, x], -1); cache <- y[..., -k:]`
   (Conformer / TCN / KWS streaming), and its forms: the value written into
   the state has its int8 grid fixed by the cat (a slice keeps its input's,
   a cat input shares the cat's), so the state takes that grid (quantize);
2. torch.distributions with their default validate_args: torch's argument
   checks are assertions on the values, skipped while tracing (a compile
   note says so);
3. index_add / scatter_add whose index is a program input (a GNN's
   edge_index).

Oracle: PyTorch. A stream: a copy of the model called K times in a row
(its buffers carry the writes) against ptec's program run K times on one
loaded method (host_runtime.run_stream), within a bound in output
quantization steps, on outputs that vary and whose state is used; the
stream is not the calibration's samples (it stays inside their range). Refusals: one line, exit 2."""
import copy

import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

from model_checks import cli_refusal

K = 8


def _samples(shape, n, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g) for _ in range(n)]


class _Cache(nn.Module):
    def __init__(self, c=8, k=5):
        super().__init__()
        self.dw = nn.Conv1d(c, c, k, groups=c)
        self.pw = nn.Conv1d(c, 4, 1)
        self.register_buffer("cache", torch.zeros(1, c, k - 1))


class CopyTail(_Cache):
    """The usual streaming conv: cache <- the last k-1 frames of cat([cache, x])."""

    def forward(self, x):
        y = torch.cat([self.cache, x], -1)
        self.cache.copy_(y[..., -4:])
        return self.pw(torch.nn.functional.silu(self.dw(y)))


class AssignTail(_Cache):
    def forward(self, x):
        y = torch.cat([self.cache, x], -1)
        self.cache = y[:, :, -4:].detach()
        return self.dw(y)


class TailOfInput(_Cache):
    """cache <- x's own last frames (chunks at least k-1 long)."""

    def forward(self, x):
        y = torch.cat([self.cache, x], -1)
        self.cache.copy_(x[:, :, -4:])
        return self.dw(y)


class DocsRing(_Cache):
    """docs/aot.md's ring buffer, `self.buf = cat([self.buf[..., 1:], x])`, its new value also read by a cat."""

    def forward(self, x):
        self.cache = torch.cat([self.cache[..., 1:], x], -1)
        return self.dw(torch.cat([self.cache, x], -1))


class RingReadThenWrite(_Cache):
    def forward(self, x):
        y = torch.cat([self.cache, x], -1)
        self.cache = y[:, :, 1:]
        return self.dw(y)


STREAMS = {"copy_ of the cat's tail": (CopyTail, 6, 3.0),
           "assigned the cat's tail": (AssignTail, 6, 3.0),
           "tail of the input": (TailOfInput, 6, 3.0),
           "docs ring buffer, cat read": (DocsRing, 1, 3.0),
           "one frame a call": (RingReadThenWrite, 1, 3.0)}


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_streaming_conv_cache_follows_torch(name):
    cls, frames, bound = STREAMS[name]
    torch.manual_seed(0)
    model = cls().eval()
    calib = [(x,) for x in _samples((1, 8, frames), 12, 1)]
    notes = []
    res = compile_model(model, [calib[0][0]], calib, log=notes.append)
    assert any("buffer cache is state kept across executes" in line for line in notes), notes
    # a fresh stream inside the calibrated range (an input past it is clipped, and a clipped
    # frame then stays in the cache for the next calls, as any int8 input does)
    xs = [0.75 * x for x in _samples((1, 8, frames), K, 2)]
    twin = copy.deepcopy(model)
    with torch.no_grad():
        want = [twin(x).numpy() for x in xs]
        once = [copy.deepcopy(model)(x).numpy() for x in xs]
    got = [o[0] for o in host_runtime.run_stream(parse_program(res.data), res.data, [[x.numpy()] for x in xs])]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = max(float(np.abs(o - w).max()) for o, w in zip(got, want)) / step
    assert worst <= bound, f"{worst:.2f} output steps from torch"
    # outputs vary, and the cache is used: a call's output is not a fresh model's on its input
    assert float(np.ptp(want[0])) >= 30 * step
    assert max(float(np.abs(w - o).max()) for w, o in zip(want, once)) >= 8 * step
    # one grid for the cache, the value written into it and the cat reading it
    state = next(n for n in res.graph.nodes if n.op == "state")
    write = next(n for n in res.graph.nodes if n.op == "state_write")
    assert tuple(state.qparams) == tuple(res.graph.node(write.inputs[1]).qparams)


class SoftmaxState(nn.Module):
    """A state written with a softmax of itself, initial value 5: off the softmax's grid [0, 1)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("p", torch.full((1, 4), 5.0))

    def forward(self, x):
        self.p = torch.softmax(x + self.p, -1)
        return x * self.p


def test_a_softmax_of_the_state_written_into_it_runs_in_fp32():
    """Refused once (its initial value off the softmax's int8 grid); its next
    value is computed from its last, so it is an fp32 state now
    (capture_state_precision), whatever its initial value."""
    torch.manual_seed(0)
    model = SoftmaxState().eval()
    xs = _samples((1, 4), 12, 1)
    res = compile_model(model, [xs[0]], [(x,) for x in xs])
    assert next(n for n in res.graph.nodes if n.op == "state").attrs.get("fp32_state")
    twin = copy.deepcopy(model)
    with torch.no_grad():
        want = [twin(x).numpy() for x in xs]
    got = [o[0] for o in host_runtime.run_stream(parse_program(res.data), res.data, [[x.numpy()] for x in xs])]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert max(float(np.abs(o - w).max()) for o, w in zip(got, want)) / step <= 2.0


def test_a_state_that_cannot_take_its_values_grid_is_refused_in_one_line(tmp_path):
    """A softmax (grid [0, 1)) of the input alone written into a buffer initialised to 5."""
    line = cli_refusal(tmp_path, "import torch, torch.nn as nn\n"
                                 "class M(nn.Module):\n"
                                 "    def __init__(self):\n"
                                 "        super().__init__()\n"
                                 "        self.register_buffer('p', torch.full((1, 4), 5.0))\n"
                                 "    def forward(self, x):\n"
                                 "        y = x * self.p\n"
                                 "        self.p = torch.softmax(x, -1)\n"
                                 "        return y\n"
                                 "def model():\n"
                                 "    return M().eval(), (torch.randn(1, 4),)\n")
    assert "buffer p" in line and "initial value" in line, line
    assert "--" not in line and "traceback" not in line, line


# -- 2. torch.distributions with their default validate_args ----------------------------------

class CategoricalHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)
        with torch.no_grad():
            self.fc.weight.mul_(4)      # peaked and flat rows: entropies that vary

    def forward(self, x):
        d = torch.distributions.Categorical(logits=self.fc(x))
        return d.probs, d.entropy()


class NormalHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 1)

    def forward(self, x):
        d = torch.distributions.Normal(self.fc(x), 0.5)
        return d.log_prob(x[:, :1])


DISTRIBUTIONS = {"Categorical": (CategoricalHead, 3.0), "Normal": (NormalHead, 3.0)}


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_distribution_with_default_validate_args_runs(name):
    cls, bound = DISTRIBUTIONS[name]
    assert torch.distributions.Distribution._validate_args     # torch's default: checks on
    torch.manual_seed(0)
    model = cls().eval()
    calib = [(x,) for x in _samples((4, 6), 12, 1)]
    notes = []
    res = compile_model(model, [calib[0][0]], calib, log=notes.append)
    assert any(f"torch.distributions {name}" in line and "validate_args" in line for line in notes), notes
    # the trace's patch is undone: torch still checks outside compile
    assert torch.distributions.Distribution._validate_args
    with pytest.raises(ValueError):
        torch.distributions.Normal(torch.zeros(1), -torch.ones(1))
    # a calibration sample: inside the calibrated ranges (a fresh one may walk past the
    # log-density's grid, as the same formula written out does: no distribution's doing)
    x = calib[3][0]
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()])
    with torch.no_grad():
        want = model(x)
    want = want if isinstance(want, tuple) else (want,)
    for i, (o, w) in enumerate(zip(got, want)):
        step = res.graph.node(res.graph.outputs[i]).qparams[0]
        assert float(np.ptp(w.numpy())) >= 20 * step
        err = float(np.abs(o - w.numpy()).max()) / step
        assert err <= bound, f"output {i}: {err:.2f} output steps from torch"


# -- 3. index_add / scatter_add by an index the program takes as an input -------------------

class MessagePassing(nn.Module):
    """A GNN layer: messages of the source nodes summed into the destinations of edge_index (an input)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, x, edge_index):
        msg = self.fc(x)[edge_index[0]]
        return torch.zeros(x.shape[0], 4).index_add(0, edge_index[1], msg, alpha=0.5) + x.sum(1, keepdim=True)


class LastDimScatterAdd(nn.Module):
    def forward(self, x, idx):
        return x.new_zeros(2, 6).scatter_add(1, idx, x)


class ArithmeticIndex(nn.Module):
    """scatter_add by index arithmetic on an argsort (not an argsort itself): a sum needs no distinct positions."""

    def forward(self, x):
        return torch.scatter_add(x, 2, (7 - x.argsort(2)) // 2, x)


def _edges(g):
    return torch.randint(0, 5, (2, 9), generator=g)


SCATTERS = {
    "index_add by edge_index": (MessagePassing, lambda g: (torch.randn(5, 3, generator=g), _edges(g)), 2.0),
    "scatter_add, last dim, input index": (
        LastDimScatterAdd, lambda g: (torch.randn(2, 4, generator=g), torch.randint(0, 6, (2, 4), generator=g)), 2.0),
    "scatter_add by index arithmetic": (ArithmeticIndex, lambda g: (torch.randn(1, 4, 8, generator=g),), 2.0),
}


@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_summed_scatter_by_an_input_or_computed_index_follows_torch(name):
    cls, make, bound = SCATTERS[name]
    torch.manual_seed(0)
    model = cls().eval()
    g = torch.Generator().manual_seed(1)
    calib = [make(g) for _ in range(12)]
    lines = []
    res = compile_model(model, list(calib[0]), calib, log=lines.append)
    # the sums take calibration's range (more repeats of an index at run time saturate): the log says so
    assert any(s.startswith("warning: ") and "take the range calibration saw" in s and "degrees" in s
               for s in lines), lines
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for feed in calib[3:6]:      # index values that vary (the calibration's samples: inside its ranges)
        got = host_runtime.run(prog, res.data, [t.numpy() for t in feed])[0]
        with torch.no_grad():
            want = model(*feed).numpy()
        assert float(np.ptp(want)) >= 20 * step
        err = float(np.abs(got - want).max()) / step
        assert err <= bound, f"{err:.2f} output steps from torch"


# (index_add off dim 0 runs now: test_scatter_any_dim.py)


def test_an_input_index_outside_self_fails_the_run_where_torch_raises():
    model = LastDimScatterAdd().eval()
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(2, 4, generator=g), torch.randint(0, 6, (2, 4), generator=g)) for _ in range(6)]
    res = compile_model(model, list(calib[0]), calib)
    bad = torch.tensor([[0, 6, 1, 1], [0, 0, 0, 0]])
    with pytest.raises(RuntimeError):
        model(calib[0][0], bad)
    with pytest.raises(host_runtime.RuntimeError_, match="outside the table"):
        host_runtime.run(parse_program(res.data), res.data, [calib[0][0].numpy(), bad.numpy()])
