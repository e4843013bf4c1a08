"""A call's tuple of tensors read whole while tracing (capture_tracer, issue 15).

torch.broadcast_tensors, meshgrid, the named tuples of topk / sort / max /
min / aminmax / kthvalue / mode / median, a submodule's or a function's
tuple, nn.LSTM's (out, (h, c)): the tracer knows their length from the
example, so each is a Python tuple of getitem proxies, and passing it whole
to torch.cat / stack / hstack, `*t`, sum(t), list(t), t[::-1], `for a in t`
work. Returned whole, it is the program's outputs in order. A tuple whose
length or pieces' sizes follow the input's values stays refused in one
line. torch float is the oracle; bounds in output steps on inputs whose
outputs vary."""
from __future__ import annotations

import operator

import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import cli_refusal
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from test_module_coverage import worst_steps
from test_tracing_front_end import S3, Call, inputs


def _bt(x):
    return torch.broadcast_tensors(x, x[:, :1])


def _written_then_read_whole(x):
    y = x * 1.0
    t = torch.broadcast_tensors(y, x[:, :1])
    y.add_(1)                       # both pieces: t[0] is y itself (a view), t[1] not
    return torch.cat(t, 1)


def _row_written_then_read_whole(x):
    y = x * 0.5
    t = torch.broadcast_tensors(y[:, :1], y)
    y[:, 0].mul_(2)                 # t[0] is an expanded view of row 0 of y
    return torch.stack(t, 0).sum(0)


def _pair(x):
    return x + 1, x * 3


class _Halves(nn.Module):
    def forward(self, x):
        return x * 2, x - 1


class SubmoduleTuple(nn.Module):
    def __init__(self):
        super().__init__()
        self.halves = _Halves()

    def forward(self, x):
        return torch.cat(self.halves(x)[::-1], 1)


class LSTMState(nn.Module):
    """(out, (h, c)) read whole: the state tuple unpacked into a cat."""
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 8, batch_first=True)

    def forward(self, x):
        out, state = self.lstm(x)
        return torch.cat([out[:, -1:], *state], 1)


# name: (call of x, bound in output steps); x of [1, 4, 8] in [-3, 3)
FORMS = {
    "torch.cat(torch.broadcast_tensors(y, x[:, :1]), 1)": (lambda x: torch.cat(_bt(x), 1), 0.5),      # 0.50
    "torch.stack(broadcast_tensors)": (lambda x: torch.stack(_bt(x), 0).sum(0), 1.0),                # 0.51
    "torch.hstack(broadcast_tensors)": (lambda x: torch.hstack(_bt(x)), 0.5),                        # 0.50
    "torch.vstack(broadcast_tensors)": (lambda x: torch.vstack(_bt(x)), 0.5),                        # 0.50
    "torch.dstack(broadcast_tensors)": (lambda x: torch.dstack(_bt(x)), 0.5),                        # 0.50
    "torch.block_diag(*broadcast_tensors)": (lambda x: torch.block_diag(*_bt(x[0])), 0.5),           # 0.50
    "broadcast_tensors(*broadcast_tensors)": (lambda x: torch.cat(torch.broadcast_tensors(*_bt(x)), 1), 0.5),
    "sum(broadcast_tensors)": (lambda x: sum(_bt(x)), 1.0),                                           # 0.97
    "list(broadcast_tensors)": (lambda x: torch.cat(list(_bt(x)), 2), 0.5),                           # 0.50
    "broadcast_tensors[::-1]": (lambda x: torch.cat(_bt(x)[::-1], 2), 0.5),                           # 0.50
    "torch.maximum(*broadcast_tensors)": (lambda x: torch.maximum(*_bt(x)), 1.5),                     # 1.27
    "for a in broadcast_tensors": (lambda x: torch.stack([a * 2 for a in _bt(x)]).sum(0), 1.0),      # 0.51
    "len(broadcast_tensors)": (lambda x: x * len(_bt(x)), 0.5),                                       # 0.50
    "torch.cat(torch.meshgrid(a, b), 0)": (lambda x: torch.cat(torch.meshgrid(x[0, 0, :3], x[0, 1, :2],
                                                                               indexing="ij"), 0), 1.0),  # 0.74
    "torch.stack(torch.split(x, 4, 2))": (lambda x: torch.stack(torch.split(x, 4, 2), 0).sum(0), 1.0),  # 0.59
    "torch.cat(x.topk(3) floats)": (lambda x: torch.cat([t.float() for t in x.topk(3, -1)], -1), 1.0),  # 0.64
    "torch.sort(x) as a list": (lambda x: torch.cat([a.float() * 0.1 for a in list(torch.sort(x, -1))], -1),
                                1.0),                                                               # 0.79
    "x.max(-1).values + indices": (lambda x: x.max(-1).values + x.max(-1).indices.float(), 1.0),  # 0.82
    "torch.stack(torch.aminmax(x, dim=-1))": (lambda x: torch.stack(torch.aminmax(x, dim=-1), 0), 0.5),  # 0.48
    "sum(x.min(-1, True)) floats": (lambda x: sum(t.float() for t in x.min(-1, True)), 1.0),  # 0.84
    "(lambda v, i: ...)(*x.kthvalue(2))": (lambda x: (lambda v, i: v * i.float())(*x.kthvalue(2, -1, True)),
                                           2.0),                                                       # 1.07
    "torch.cat(x.median(-1, True)[:1] * 2)": (lambda x: torch.cat(x.median(-1, True)[:1] * 2, -1), 1.5),  # 1.25
    "a function's tuple passed whole": (lambda x: torch.cat(_pair(x), 1), 1.0),                       # 0.60
    "write into a piece, then read whole": (_written_then_read_whole, 1.0),                           # 0.87
    "write into the base, then read whole": (_row_written_then_read_whole, 1.0),  # 0.93
}

MODULES = {
    "a submodule's tuple sliced whole": (SubmoduleTuple, 1.0),                                        # 0.58
    "nn.LSTM (out, (h, c)) unpacked whole": (LSTMState, 2.5),                                         # 1.88
}


@pytest.mark.parametrize("name", sorted(FORMS) + sorted(MODULES))
def test_tuple_read_whole_runs_within_its_bound(name, tmp_path):
    if name in FORMS:
        fn, bound = FORMS[name]
        model = Call(fn).eval()
    else:
        make, bound = MODULES[name]
        torch.manual_seed(0)
        model = make().eval()
    calibration = inputs(S3)
    res = compile_model(model, [calibration[0][0]], calibration)
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"{name}: worst {worst:.2f} output steps")
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


def _distinct(n=4, seed=3):
    """Rows of distinct values a grid apart: every index is torch's."""
    g = torch.Generator().manual_seed(seed)
    return [((torch.randperm(32, generator=g).float() - 16).reshape(1, 4, 8) * 0.25,) for _ in range(n)]


# returned whole: the program's outputs are the tuple's, in order
WHOLE = {
    "torch.topk(x, 2)": lambda x: torch.topk(x, 2),
    "torch.cummax(x, 2)": lambda x: torch.cummax(x, 2),
    "x.sort(-1, descending=True)": lambda x: x.sort(-1, descending=True),
    "torch.broadcast_tensors(x, x[:, :1])": lambda x: torch.broadcast_tensors(x, x[:, :1]),
    "torch.meshgrid(a, b)": lambda x: torch.meshgrid(x[0, 0], x[0, 1], indexing="ij"),
}


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_tuple_returned_whole_is_the_outputs(name, tmp_path):
    model = Call(WHOLE[name]).eval()
    calibration = _distinct(8)
    res = compile_model(model, [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    for (x,) in calibration[:3]:
        with torch.no_grad():
            ref = model(x)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        want = run_program(prog, [x.numpy()])
        assert len(got) == len(ref) == len(res.graph.outputs)
        for k, (g, w, r) in enumerate(zip(got, want, ref)):
            assert g.tobytes() == np.asarray(w, g.dtype).tobytes(), f"output {k}: ptec-run is not the reference"
            if r.dtype == torch.int64:
                assert np.array_equal(g, r.numpy()), f"output {k}: indices differ from torch"
            else:
                step = res.graph.node(res.graph.outputs[k]).qparams[0]
                worst = float(np.abs(g.astype(np.float64) - r.numpy()).max() / step)
                assert worst <= 0.5 + 1e-3, f"output {k}: {worst:.2f} output steps from float"


def test_adaptive_max_pool_indices_module_reads_its_values():
    """A module returning (values, indices) is a tuple while tracing:
    `y[0] if isinstance(y, tuple)` picks the values, which run."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = nn.AdaptiveMaxPool3d(1, return_indices=True)

        def forward(self, x):
            y = self.pool(x)
            return y[0] if isinstance(y, tuple) else y
    g = torch.Generator().manual_seed(1)
    calibration = [(torch.randn(1, 2, 2, 2, 2, generator=g),) for _ in range(4)]
    res = compile_model(Net().eval(), [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration:
        with torch.no_grad():
            ref = Net().eval()(x).numpy()
        got = run_program(prog, [x.numpy()])[0]
        assert np.abs(np.asarray(got, np.float64) - ref).max() <= 0.5 * step + 1e-6


def test_unread_pieces_are_not_in_the_graph():
    """len(torch.broadcast_tensors(...)) and t[1] alone: the getitems the
    tracer made for the other pieces are dropped."""
    from ptec.capture import _symbolic_trace
    x = inputs(S3, 1)[0][0]
    gm = _symbolic_trace(Call(lambda x: _bt(x)[1] * len(torch.aminmax(x, dim=-1))), [x])
    pieces = [n for n in gm.graph.nodes if n.target is operator.getitem
              and n.args[0].target in (torch.broadcast_tensors, torch.aminmax)]
    assert [(n.args[0].target, n.args[1]) for n in pieces] == [(torch.broadcast_tensors, 1)], \
        [n.format_node() for n in pieces]


REFUSED = {
    "torch.cat(x[x > 0].split(2), 0)": (lambda x: torch.cat(x[x > 0].split(2), 0), "Tensor.split"),
    "torch.cat(torch.nonzero(m, as_tuple=True))": (lambda x: torch.cat(torch.nonzero(x > 0, as_tuple=True)),
                                                   "torch.nonzero"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_tuple_of_data_dependent_length_is_refused_in_one_line(name):
    fn, callee = REFUSED[name]
    x = torch.randn(S3)
    with pytest.raises(Exception) as e:
        compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    message = str(e.value)
    assert "\n" not in message
    assert f"the result of {callee} passed whole as a sequence of tensors cannot be traced" in message, message
    assert "follow the input's values" in message, message


def test_cli_refuses_a_data_dependent_tuple_with_exit_2(tmp_path):
    line = cli_refusal(tmp_path,
                       "import torch\n"
                       "class M(torch.nn.Module):\n"
                       "    def forward(self, x):\n"
                       "        return torch.stack(x[x > 0].chunk(2), 0)\n"
                       "def model():\n"
                       "    return M(), (torch.randn(1, 4, 8),)\n")
    assert "the result of Tensor.chunk passed whole" in line and "models.py:4" in line, line
