"""Integer and bool buffers a forward writes (ptec.capture_integer_states):
each is a state of its own dtype, computed on exactly as torch does, over
30+ executes of the host runtime against torch eager calls (the oracle:
a fresh copy of the model called in the same order). Integer and bool
outputs must be equal and of torch's dtype; float outputs within a few
int8 output steps."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program

STEPS = 34


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(8, 8)
        self.register_buffer("count", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.count += 1
        return self.fc(x), self.count


class Counter32(nn.Module):
    """An int32 counter that steps by 3 from a start past 2^24 (float32 could not hold it exactly)."""
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.tensor([2 ** 24 + 1, -5], dtype=torch.int32))

    def forward(self, x):
        self.count.add_(3)
        return x * 2, self.count


class Int64Big(nn.Module):
    """An int64 counter stepping by 10^12 from 2^62: torch's int64 wraps past 2^63 - 1 within the run."""
    def __init__(self):
        super().__init__()
        self.register_buffer("t", torch.tensor([2 ** 62, -7], dtype=torch.int64))

    def forward(self, x):
        self.t = self.t + 2 ** 57
        return x + 1, self.t


class Ring(nn.Module):
    """A step index kept modulo n, used to write the frame into a ring buffer."""
    def __init__(self, n=5):
        super().__init__()
        self.n = n
        self.register_buffer("idx", torch.zeros((), dtype=torch.long))
        self.register_buffer("slot", torch.zeros(1, dtype=torch.long))

    def forward(self, x):
        self.idx = (self.idx + 1) % self.n
        self.slot = self.slot * 0 + self.idx
        return x.mean(1), self.idx, self.slot


class ArgmaxTally(nn.Module):
    """An int32 accumulator of argmaxes (torch: int32 + int64 argmax -> int64, cast back by the in-place add)."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.fc = nn.Linear(6, 4)
        self.register_buffer("total", torch.zeros(3, dtype=torch.int32))
        self.register_buffer("hits", torch.zeros(3, 4, dtype=torch.long))

    def forward(self, x):
        y = self.fc(x)
        k = y.argmax(-1)
        self.total += k.int()
        self.hits = self.hits + nn.functional.one_hot(k, 4)
        return y, self.total, self.hits


class Flag(nn.Module):
    """A bool flag toggled every call, choosing between two branches."""
    def __init__(self):
        super().__init__()
        self.register_buffer("flag", torch.tensor([True, False]))

    def forward(self, x):
        self.flag = ~self.flag
        return torch.where(self.flag[:, None], x, -x), self.flag


class RingWrite(nn.Module):
    """`self.buf[self.idx % n] = x`: the position is the run's step index (an example's would be one constant slot)."""
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(4, 3))
        self.register_buffer("idx", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.buf[self.idx % 4] = x
        self.idx += 1
        return self.buf.sum(0), self.idx


class Narrow(nn.Module):
    """uint8, int16 and int8 counters wrapping as torch's (computed in int64, cast back)."""
    def __init__(self):
        super().__init__()
        self.register_buffer("u", torch.tensor([250, 3], dtype=torch.uint8))
        self.register_buffer("s", torch.tensor([32000], dtype=torch.int16))
        self.register_buffer("c", torch.tensor([120, -128], dtype=torch.int8))

    def forward(self, x):
        self.u += 100
        self.s -= -3001
        self.c = (self.c.long() + 37).char()
        return x + 1, self.u, self.s, self.c


class FlagByCount(nn.Module):
    """A bool flag flipped in place, and one xor-ed with a test on an int64 step count."""
    def __init__(self):
        super().__init__()
        self.register_buffer("f", torch.tensor([True]))
        self.register_buffer("g", torch.tensor([True, False]))
        self.register_buffer("n", torch.tensor([0, 1], dtype=torch.long))

    def forward(self, x):
        self.f.logical_not_()
        self.n += torch.tensor([1, 2])
        self.g ^= self.n % 3 == 0
        return x * self.f.float(), self.f, self.g


class History(nn.Module):
    """int64 and bool histories shifted by a cat (the int64 one starting at 10^12, past float32's exact integers)."""
    def __init__(self):
        super().__init__()
        self.register_buffer("h", torch.full((5,), 10 ** 12 + 1, dtype=torch.long))
        self.register_buffer("m", torch.zeros(4, dtype=torch.bool))

    def forward(self, x):
        k = x.argmax().reshape(1)
        self.h = torch.cat([self.h[1:], k])
        self.m = torch.cat([self.m[1:], k > 2])
        return x * 2, self.h, self.m


MODELS = {"counter": (Counter, (3, 8)), "counter_int32": (Counter32, (2, 4)), "int64_wraps": (Int64Big, (2, 3)),
          "ring_index": (Ring, (2, 6)), "argmax_tally": (ArgmaxTally, (3, 6)), "bool_flag": (Flag, (2, 5)),
          "ring_write": (RingWrite, (3,)), "narrow_wraps": (Narrow, (2, 3)), "bool_in_place": (FlagByCount, (2,)),
          "history_cat": (History, (6,))}


def _feeds(shape, seed=3):
    g = torch.Generator().manual_seed(seed)
    return [[torch.randn(*shape, generator=g)] for _ in range(STEPS)]


def _flat(o):
    return list(o) if isinstance(o, (tuple, list)) else [o]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_streamed_integer_states_equal_torch(name):
    cls, shape = MODELS[name]
    feeds = _feeds(shape)
    res = compile_model(cls().eval(), feeds[0], feeds)
    outs = host_runtime.run_stream(parse_program(res.data), res.data, [[t.numpy() for t in f] for f in feeds])
    oracle = cls().eval()
    with torch.no_grad():
        wants = [[w.clone() for w in _flat(oracle(*[t.clone() for t in f]))] for f in feeds]
    floats = [i for i, w in enumerate(wants[0]) if w.is_floating_point()]
    for i in floats:
        step = float(np.ptp(np.concatenate([w[i].numpy().ravel() for w in wants]))) / 255
        worst = max(float(np.abs(np.asarray(o[i], np.float64) - w[i].numpy()).max()) for o, w in zip(outs, wants))
        assert worst <= 3 * step, (name, i, worst / step)
    changed = 0
    for k, (o, w) in enumerate(zip(outs, wants)):
        for i, want in enumerate(w):
            if i in floats:
                continue
            got = np.asarray(o[i])
            assert got.dtype == want.numpy().dtype, (name, i, got.dtype, want.dtype)
            assert np.array_equal(got, want.numpy()), (name, k, i, got, want)
            changed += int(k > 0 and not torch.equal(want, wants[k - 1][i]))
    assert changed >= STEPS - 1, (name, changed)      # the states move on every call


def test_the_int64_wrap_is_reached():
    """The int64 case's oracle does wrap within the run (the check above covers it)."""
    m = Int64Big()
    seen = [int(m(torch.zeros(2, 3))[1][0]) for _ in range(STEPS)]
    assert min(seen) < 0 < max(seen)


def test_reset_restores_the_integer_state():
    feeds = _feeds((3, 8))
    res = compile_model(Counter().eval(), feeds[0], feeds)
    prog = parse_program(res.data)
    steps = [[t.numpy() for t in f] for f in feeds[:8]]
    outs = host_runtime.run_stream(prog, res.data, steps, reset_before=[5])
    assert [int(o[1]) for o in outs] == [1, 2, 3, 4, 5, 1, 2, 3]


class Widened(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("c", torch.zeros(3, dtype=torch.int32))

    def forward(self, x):
        self.c = self.c + x.argmax(1)        # int64 in torch: the next call reads another dtype
        return x, self.c


def test_a_write_of_another_dtype_is_refused_in_one_line():
    x = torch.randn(3, 4)
    with pytest.raises(Exception) as e:
        compile_model(Widened().eval(), [x], [[x]])
    msg = str(e.value)
    assert "\n" not in msg and "buffer c is int32 [3]" in msg and "another dtype" in msg, msg


class TensorBounds(nn.Module):
    """torch.clamp of int values by tensor bounds: 0-d constants, a row, a computed index, int32."""
    def forward(self, x, i):
        j = i.int()
        return (torch.clamp(i, min=torch.tensor(2), max=i.new_full((), 5)), i.clamp(torch.tensor(-1), 4),
                torch.clamp(i, max=torch.tensor([3, 0, 7, 1, 2, 9])), i.clamp(min=x.argmax(-1, keepdim=True)),
                torch.clamp(j, min=torch.tensor(2, dtype=torch.int32), max=torch.tensor(5, dtype=torch.int32)),
                torch.clamp(i, min=torch.tensor(6), max=torch.tensor(1)))      # min above max: all max, as torch


def test_clamp_of_ints_by_tensor_bounds_is_exact():
    g = torch.Generator().manual_seed(2)
    feeds = [[torch.randn(3, 6, generator=g), torch.randint(-3, 9, (3, 6), generator=g)] for _ in range(12)]
    res = compile_model(TensorBounds().eval(), feeds[0], feeds)
    outs = host_runtime.run_stream(parse_program(res.data), res.data, [[t.numpy() for t in f] for f in feeds])
    clipped = 0
    for o, f in zip(outs, feeds):
        for got, want in zip(o, TensorBounds()(*f)):
            got = np.asarray(got)
            assert got.dtype == want.numpy().dtype and np.array_equal(got, want.numpy()), (got, want)
        clipped += int((f[1] < 2).sum() + (f[1] > 5).sum())
    assert clipped > 50          # the bounds do clip


class LengthLoop(nn.Module):
    def forward(self, x, lengths):
        outs = [x[i, :lengths[i]].mean(0) for i in range(x.shape[0])]
        return torch.stack(outs)


class CountSlice(nn.Module):
    def forward(self, x):
        return x[:, (x > 0).sum()].sum(0) + x[(x[:, 0] > 0).sum():].sum()


@pytest.mark.parametrize("model, inputs, call", [
    (LengthLoop(), [torch.randn(3, 7, 4), torch.tensor([3, 7, 5])], "operator.getitem"),
    (CountSlice(), [torch.randn(5, 6)], "Tensor.sum")])
def test_a_slice_bound_from_the_values_is_refused_in_one_line(model, inputs, call):
    with pytest.raises(Exception) as e:
        compile_model(model.eval(), inputs, [inputs])
    msg = str(e.value)
    assert "\n" not in msg and f"a slice bound from the result of {call} cannot be traced" in msg, msg
    assert "depends on the input's values" in msg and "test_integer_states.py:" in msg and "rewrite" not in msg, msg


class CountBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("c", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.c += 1
        if self.c > 3:
            return x * 2
        return x


def test_python_control_on_a_state_is_refused_in_one_line():
    """The state's value is the run's, not the example's: Python control on it is refused (it was a KeyError)."""
    x = torch.randn(3)
    with pytest.raises(Exception) as e:
        compile_model(CountBranch().eval(), [x], [[x]])
    msg = str(e.value)
    assert "\n" not in msg and "Python control" in msg and "`if self.c > 3:`" in msg, msg
