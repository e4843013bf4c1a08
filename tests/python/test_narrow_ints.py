"""Calls on int16 / uint8 / int8 values (issue 15, capture_narrow_ints):
arithmetic, //, %, bitwise ops, shifts by an int, comparisons, float math,
views, cat, stack, where, index and sorts, computed as int64 calls cast
back into the narrow dtype.

Oracle: torch on the program's own integers, exact (0 steps) and of
torch's dtype, on values that wrap (200 + 100 as uint8 is 44, 30000 * 3
as int16 is 24464, -(-128) as int8 is -128, int8 1 << 7 is -128, uint8
b // -3 is b // 253); the host runtime's bytes equal the numpy reference
interpreter's. Float math on them (s * 0.5, s / 3) is ptec's int8 float
path: within 1 output step of torch's."""
import numpy as np
import pytest
import torch

from ptec.compiler import compile_model
from model_checks import exact_runs

EDGES = [200, -1, 30000, 5, -129, 127, 255, 0, -32768, 100, -128, 1, 32767, 128, -3, 300, 65535, 7, -200, 2]




class Narrow(torch.nn.Module):
    """Integer calls on s int16, b uint8, c int8 casts of an int64 input i [4, 5]."""

    def forward(self, i):
        s, b, c = i.short(), i.byte(), i.char()
        return (s * 3 + 7, b + 100, -c, s - b, b * b, c * 3 - 1, s.abs(), c.abs(),
                b // -3, b // 7, s // 7, s // -7, c // -1, b % -3, s % 7, c % -5, s // (b // 2 + 1), c % (c.abs() + 1),
                b & 6, s | 0x5555, c ^ -1, ~b, ~c, c << 7, b << 3, s << 5, c >> 2, s >> 3, b >> 1, c << 9, s >> 31, b << 31,
                b < 3, b < 300, b == -1, c >= 0, s > b, s.max(-1)[0], b.min(),
                torch.sort(b, -1)[0], torch.sort(s, 0, descending=True)[0], torch.topk(c, 2)[0],
                torch.cat([b, b + 1], 1), torch.stack([s, s * 2]), torch.where(i > 0, c, c * 2),
                b.view(2, -1) + 1, s.t()[1:3] - 1, b[1], s.sum(-1), torch.maximum(s, b), c ** 2, b.flip(0) * 5,
                b.div(-3, rounding_mode="floor"), c.div(-7, rounding_mode="trunc"), torch.fmod(b, -3), torch.fmod(c, 300))


class FloatOf(torch.nn.Module):
    def forward(self, i):
        return torch.cat([i.short() * 0.5, i.byte() / 3, i.char() + 0.25], 1)


def _feeds():
    g = torch.Generator().manual_seed(15)
    return [(torch.tensor(EDGES).view(4, 5),)] + [(torch.randint(-70000, 70000, (4, 5), generator=g),)
                                                  for _ in range(5)]


def test_narrow_calls_are_torchs_exactly(tmp_path):
    _, runs = exact_runs(Narrow().eval(), _feeds(), tmp_path)
    varied = 0
    for got, want in runs:
        assert len(got) == len(want)
        for at, (g_, w) in enumerate(zip(got, want)):
            assert g_.dtype == w.numpy().dtype, (at, g_.dtype, w.dtype)
            assert np.array_equal(g_, w.numpy()), (at, g_, w)          # exact: torch's wrap
            varied += int(np.ptp(np.asarray(g_, np.float64)) > 0)
    assert varied >= 40 * len(runs)
    want = runs[0][1]
    assert want[1][0, 0].item() == 44 and want[0][0, 2].item() == 90007 - 65536
    assert want[2][2, 0].item() == -128 and want[23][0, 1].item() == -128      # -(-128), -1 << 7 as int8
    assert want[8][0, 0].item() == 200 // 253                                  # b // -3: b // 253 as torch


def test_float_math_on_narrow_values_is_within_a_step(tmp_path):
    _, runs = exact_runs(FloatOf().eval(), _feeds()[:3], tmp_path)
    for got, want in runs:
        w = want[0].numpy().astype(np.float64)
        step = (w.max() - min(w.min(), 0.0)) / 255
        assert np.ptp(w) > 0
        assert np.abs(np.asarray(got[0], np.float64) - w).max() <= 1.0 * step


@pytest.mark.parametrize("call, shown, why", [
    (lambda i: i.masked_scatter(i.byte() % 2, i), r"masked_scatter \(Tensor\.masked_scatter\)",
     "ptec has no kernel for it in this form"),            # a uint8 mask is a bool's (test_uint8_masks.py)
    (lambda i: i.char() << (i.char() & 3), r"lshift \(operator\.lshift\)", "a shift of an int16 / uint8 / int8 value by a tensor"),
    (lambda i: i.char() << 32, r"lshift \(operator\.lshift\)", "by 32: torch 1.13 shifts it as a 32-bit C int"),
    (lambda i: i.short() >> -1, r"rshift \(operator\.rshift\)", "by -1: torch 1.13 shifts it as a 32-bit C int"),
    # (i[(i > 0).byte()] runs, an int64 selection as a program output: test_index_forms.py; read by more it is refused)
    (lambda i: i[(i > 0).byte()] + 1, r"getitem \(operator\.getitem\)", "a selection of integer values"),
    (lambda i: i[(i > 0).char()], "fails on its example", r"tensors used as indices must be long, byte or bool"),
])
def test_what_stays_refused_in_one_line(call, shown, why):
    class Refused(torch.nn.Module):
        def forward(self, i):
            return call(i)
    i = torch.randint(-5, 5, (3, 6))
    with pytest.raises(Exception, match=rf"^[^\n]*{shown}[^\n]*{why}[^\n]*$"):
        compile_model(Refused().eval(), [i], [(i,)])
