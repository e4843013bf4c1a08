"""Buffer states read as they were before this execute's write
(capture_buffer_state, lower.py's state writes): an output that is a
buffer's old value (`old = self.s; self.s = ...; return old`, an RNN's
h_prev, a cached last output; its .clone() / .detach() / a reshape of
it), a buffer written with another's old value (the delay line `self.x2 =
self.x1`, a biquad, a swap), a buffer written with the input as it is
(`self.prev = x.clone()`, `self.prev.copy_(x)`), a recurrent cell's output
kept in a buffer; float, int64 and bool states.

The oracle is torch: a fresh copy of the model called on the same inputs
in the same order, over STEPS executes of the host runtime. Float outputs
within 3 int8 output steps (the range of torch's values over the stream /
255); integer and bool outputs equal, in torch's dtype."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import Session
from ptec.pte import parse_program

STEPS = 12


class OldPlain(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("s", torch.zeros(1, 4))

    def forward(self, x):
        old = self.s
        self.s = 0.5 * self.s + x
        return old, self.s


class OldClone(OldPlain):
    def forward(self, x):
        old = self.s.clone()
        self.s = 0.5 * self.s + x
        return old, self.s


class OldDetach(OldPlain):
    def forward(self, x):
        old = self.s.detach()
        self.s = self.s * 0.5 + x
        return self.s * 2.0, old


class OldFlatten(nn.Module):
    """The old value reshaped: a view of the state's bytes in the program."""
    def __init__(self):
        super().__init__()
        self.register_buffer("s", torch.zeros(1, 2, 3))

    def forward(self, x):
        old = self.s.flatten(1)
        self.s = 0.7 * self.s + x
        return old, self.s.sum(-1)


class HPrev(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(8, 4)
        self.register_buffer("h", torch.zeros(1, 4))

    def forward(self, x):
        h_prev = self.h
        self.h = torch.tanh(self.fc(torch.cat([x, h_prev], -1)))
        return self.h, h_prev


class CachedOutput(nn.Module):
    """The last call's output, kept: the state's loop moves no value (int8)."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.fc = nn.Linear(4, 4)
        self.register_buffer("last", torch.zeros(1, 4))

    def forward(self, x):
        y = torch.relu(self.fc(x))
        prev = self.last
        self.last = y
        return y - prev, prev


class RingOld(nn.Module):
    """A ring of frames (an int8 state: a loop of slices and a cat) and its old value."""
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(1, 3, 4))

    def forward(self, x):
        old = self.buf
        self.buf = torch.cat([self.buf[:, 1:], x.unsqueeze(1)], 1)
        return old, self.buf.mean(1)


class IntOld(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("n", torch.zeros(1, dtype=torch.long))

    def forward(self, x):
        old = self.n.clone()
        self.n = self.n + 1
        return x + 1, old


class BoolOld(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("flag", torch.zeros(2, dtype=torch.bool))

    def forward(self, x):
        old = self.flag
        self.flag = ~self.flag
        return x * 2.0, old, self.flag


class Delay(nn.Module):
    """A two-tap delay line: x2 takes x1's old value, x1 the frame."""
    def __init__(self):
        super().__init__()
        self.register_buffer("x1", torch.zeros(1, 4))
        self.register_buffer("x2", torch.zeros(1, 4))

    def forward(self, x):
        y = 0.5 * x + 0.3 * self.x1 + 0.2 * self.x2
        self.x2 = self.x1
        self.x1 = x * 1.0
        return y


class Biquad(nn.Module):
    """A direct-form-I biquad: its input and output delay lines."""
    def __init__(self):
        super().__init__()
        for k in ("x1", "x2", "y1", "y2"):
            self.register_buffer(k, torch.zeros(1, 4))

    def forward(self, x):
        y = 0.2 * x + 0.3 * self.x1 + 0.2 * self.x2 + 0.5 * self.y1 - 0.25 * self.y2
        self.x2 = self.x1
        self.x1 = x
        self.y2 = self.y1
        self.y1 = y
        return y


class Swap(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.zeros(1, 4))
        self.register_buffer("b", torch.ones(1, 4))

    def forward(self, x):
        self.a, self.b = self.b, self.a
        self.a = self.a + x
        return self.a, self.b


class SwapInt(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.tensor([1]))
        self.register_buffer("b", torch.tensor([2]))

    def forward(self, x):
        self.a, self.b = self.b, self.a
        self.b = self.b + 1
        return x + 1, self.a, self.b


class SwapPure(nn.Module):
    """Two buffers exchanged as they are, each execute (the first write must not be seen by the second)."""
    def __init__(self, dtype=torch.float32):
        super().__init__()
        self.register_buffer("a", torch.tensor([[1, -2, 3, 0]], dtype=dtype))
        self.register_buffer("b", torch.tensor([[-3, 2, 1, 2]], dtype=dtype))

    def forward(self, x):
        self.a, self.b = self.b, self.a
        return x + self.a, self.a, self.b


class SwapPureInt(SwapPure):
    def __init__(self):
        super().__init__(torch.long)


class DelayReversed(nn.Module):
    """The delay line with its later tap declared first."""
    def __init__(self):
        super().__init__()
        self.register_buffer("x2", torch.zeros(1, 4))
        self.register_buffer("x1", torch.zeros(1, 4))

    def forward(self, x):
        y = 0.5 * x + 0.3 * self.x1 + 0.2 * self.x2
        self.x2 = self.x1
        self.x1 = x * 1.0
        return y, self.x2


class FollowInt(nn.Module):
    """b takes a's old value, then a moves on."""
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.zeros(1, dtype=torch.long))
        self.register_buffer("b", torch.zeros(1, dtype=torch.long))

    def forward(self, x):
        self.b = self.a
        self.a = self.a + x.argmax(1)
        return self.a, self.b


class PrevClone(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("prev", torch.zeros(1, 4))

    def forward(self, x):
        d = x - self.prev
        self.prev = x.clone()
        return d


class PrevCopy(PrevClone):
    def forward(self, x):
        d = x - self.prev
        self.prev.copy_(x)
        return d


class TwoFramesClone(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("x1", torch.zeros(1, 4))
        self.register_buffer("x2", torch.zeros(1, 4))

    def forward(self, x):
        y = x - 2 * self.x1 + self.x2
        self.x2 = self.x1.clone()
        self.x1 = x.clone()
        return y


class KeptGRUCell(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.cell = nn.GRUCell(4, 6)
        self.register_buffer("h", torch.zeros(1, 6))

    def forward(self, x):
        self.h = self.cell(x, self.h)
        return self.h


class KeptLSTMCell(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.cell = nn.LSTMCell(4, 5)
        self.register_buffer("h", torch.zeros(1, 5))
        self.register_buffer("c", torch.zeros(1, 5))

    def forward(self, x):
        self.h, self.c = self.cell(x, (self.h, self.c))
        return self.h


class Vote(nn.Module):
    """A window of the last argmax ids kept in an int64 buffer, counted: ids < 3 by induction over the calls."""
    def __init__(self, start=0):
        super().__init__()
        self.register_buffer("hist", torch.full((4,), start, dtype=torch.long))

    def forward(self, x):
        self.hist = torch.cat([self.hist[1:], x.argmax(-1)])
        return torch.bincount(self.hist, minlength=3)


MODELS = {"old_plain": OldPlain, "old_clone": OldClone, "old_detach": OldDetach, "old_flatten": OldFlatten,
          "h_prev": HPrev, "cached_output": CachedOutput, "ring_old": RingOld, "int_old": IntOld,
          "bool_old": BoolOld, "delay": Delay, "biquad": Biquad, "swap": Swap, "swap_int": SwapInt,
          "swap_pure": SwapPure, "swap_pure_int": SwapPureInt, "delay_reversed": DelayReversed,
          "bincount_of_state": Vote,
          "follow_int": FollowInt, "prev_clone": PrevClone, "prev_copy": PrevCopy,
          "two_frames_clone": TwoFramesClone, "gru_cell_kept": KeptGRUCell, "lstm_cell_kept": KeptLSTMCell}
SHAPES = {"old_flatten": (1, 2, 3), "h_prev": (1, 4), "bincount_of_state": (1, 3)}


def _flat(o):
    return list(o) if isinstance(o, (tuple, list)) else [o]


def streamed(cls, shape=(1, 4), steps=STEPS):
    """(ptec's outputs, torch's) over steps executes, and the compile result."""
    g = torch.Generator().manual_seed(5)
    feeds = [[torch.randn(*shape, generator=g)] for _ in range(steps)]
    res = compile_model(cls().eval(), feeds[0], feeds)
    prog = parse_program(res.data)
    outs = host_runtime.run_stream(prog, res.data, [[t.numpy() for t in f] for f in feeds])
    session = Session(prog)         # the streamed reference interpreter gives ptec-run's values (an fp32
    for f, o in zip(feeds, outs):   # state's loop to fp32 rounding: its tanh / sigmoid are not the C's bit for bit)
        for a, b in zip(session.run([t.numpy() for t in f]), o):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and (np.allclose(a, b, rtol=1e-5, atol=1e-6) if a.dtype.kind == "f"
                                           else np.array_equal(a, b)), cls.__name__
    oracle = cls().eval()
    with torch.no_grad():
        wants = [[w.clone() for w in _flat(oracle(*[t.clone() for t in f]))] for f in feeds]
    return outs, wants


def worst_steps(outs, wants):
    """{output index: worst |ptec - torch| in int8 output steps} of the float
    outputs; integer / bool outputs asserted equal and of torch's dtype."""
    worst = {}
    for i, w0 in enumerate(wants[0]):
        if w0.is_floating_point():
            step = float(np.ptp(np.concatenate([w[i].numpy().ravel() for w in wants]))) / 255
            worst[i] = max(float(np.abs(np.asarray(o[i], np.float64) - w[i].numpy()).max())
                           for o, w in zip(outs, wants)) / step
            continue
        for k, (o, w) in enumerate(zip(outs, wants)):
            got = np.asarray(o[i])
            assert got.dtype == w[i].numpy().dtype, (i, got.dtype, w[i].dtype)
            assert np.array_equal(got, w[i].numpy()), (k, i, got, w[i])
    return worst


@pytest.mark.parametrize("name", sorted(MODELS))
def test_streamed_states_equal_torch(name):
    outs, wants = streamed(MODELS[name], SHAPES.get(name, (1, 4)))
    worst = worst_steps(outs, wants)
    assert all(v <= 3.0 for v in worst.values()), (name, worst)


def test_bincount_of_a_state_holding_an_id_past_minlength_is_refused_in_one_line():
    """Its initial value holds id 5: torch's first counts are 6 long, a program's length is fixed."""
    from ptec.compiler import CompileError
    x = torch.randn(1, 3)
    with pytest.raises(Exception) as e:
        compile_model(Vote(start=5).eval(), [x], [[x]])
    assert "pass minlength=<n> with ids known below n" in str(e.value) and "\n" not in str(e.value)
    assert isinstance(e.value, CompileError) or "CaptureError" in type(e.value).__name__
