"""torch.unique (sorted) and unique_consecutive of a selection x[m] /
torch.masked_select(x, m)
with return_counts and / or return_inverse (ptec.capture_unique_selection,
issue 15): the selected values ordered at the front of all of x's (two
stable sorts), runs only among the selected; exact int64 counts and
inverse of the selection's length, float values within half an output
step, integer values exact.

Oracle: torch 1.13 on the same input. Inputs: values on a grid of halves
(float: int8 codes far apart; the masks' thresholds a quarter away from
every value, so the program's mask is torch's), ties, negative values, a
row all equal, all selected, none selected."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from model_checks import Call

CALLS = {
    "x[x > 0] counts": lambda x: torch.unique(x[x > 0.25], return_counts=True),
    "x[x < 1] inverse": lambda x: torch.unique(x[x < 1.25], return_inverse=True),
    "x[m] inverse and counts": lambda x: x[(x > -1.75) & (x < 2.25)].unique(return_inverse=True, return_counts=True),
    "int64 x[m] counts and inverse": lambda x: torch.unique((x * 2).round().long()[x > -0.75], return_counts=True,
                                                            return_inverse=True),
    "int64 x[m] values": lambda x: torch.unique((x * 2).round().long()[x > 0.25]),
    "int32 masked_select counts": lambda x: torch.unique(torch.masked_select((x * 2).round().int() - 3, x < 0.75),
                                                         return_counts=True),
    # a mask not of the values (another element's): equal values selected and not
    "x[mask of the flipped x] counts and inverse": lambda x: torch.unique(x[x.flip(-1) > 0.25], return_counts=True,
                                                                          return_inverse=True),
    "int64 x[mask of the flipped x] counts": lambda x: torch.unique((x * 2).round().long()[x.flip(1) < -0.25],
                                                                    return_counts=True),
    "counts of a 2-D selection": lambda x: torch.unique(x.reshape(4, 8)[x.reshape(4, 8) > -0.25],
                                                        return_counts=True)[1],
    # unique_consecutive of a selection: runs among the selected in x's order (equal values apart in x,
    # adjacent among the selected, one run)
    "consecutive x[m] counts": lambda x: torch.unique_consecutive(x[x > -0.25], return_counts=True),
    "consecutive x[m] inverse": lambda x: x[x < 1.25].unique_consecutive(return_inverse=True),
    "consecutive x[m] values": lambda x: torch.unique_consecutive(x[(x > -1.25) & (x < 1.75)]),
    "consecutive int64 x[mask of the flipped x] counts and inverse": lambda x: torch.unique_consecutive(
        (x * 2).round().long()[x.flip(1) < 0.25], return_counts=True, return_inverse=True),
    "consecutive int32 masked_select values": lambda x: torch.unique_consecutive(
        torch.masked_select((x * 2).round().int(), x > -0.75)),
    # int16 / uint8 / int8 selections: on the int64 copy, the values cast back (wrapped values)
    "int16 x[m] counts and inverse": lambda x: torch.unique(((x * 2).round().long() * 9000).short()[x > -0.75],
                                                            return_counts=True, return_inverse=True),
    "uint8 x[m] values": lambda x: torch.unique(((x * 2).round().long() * 3).byte()[x < 1.25]),
    "int8 consecutive x[m] counts": lambda x: torch.unique_consecutive(
        ((x * 2).round().long() * 50).char()[x > -0.25], return_counts=True),
}


def _inputs(seed, n=7):
    g = torch.Generator().manual_seed(seed)
    xs = [(torch.randint(-2 - i % 4, 3 + i % 4, (1, 4, 8), generator=g) * 0.5,) for i in range(n)]
    xs[1][0][0, 1] = 1.5                                           # a row all equal
    # by the flipped x's mask the largest selected value equals the smallest unselected one
    xs += [(torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]).repeat(1, 4, 1),)]
    # equal values apart in x, adjacent among the selected (unique_consecutive: one run)
    xs += [(torch.tensor([0.5, -2.0, 0.5, 0.5, -2.0, 1.0, -2.0, 1.0]).repeat(1, 4, 1),)]
    xs += [(torch.full((1, 4, 8), 2.0),), (torch.full((1, 4, 8), -2.5),)]   # all / none selected
    return xs


@pytest.mark.parametrize("name", sorted(CALLS))
def test_selection_unique_is_torchs(name, tmp_path):
    fn = CALLS[name]
    cal = _inputs(len(name))
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    steps = [res.graph.node(o).qparams[0] if res.graph.node(o).qparams else None for o in res.graph.outputs]
    seen = set()
    for (x,) in cal:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        assert [g.tobytes() for g in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
        with torch.no_grad():
            want = fn(x)
        want = list(want) if isinstance(want, tuple) else [want]
        assert len(got) == len(want)
        for g, w, step in zip(got, want, steps):
            w = w.numpy()
            assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
            if w.dtype == np.float32:
                assert np.abs(g - w).max(initial=0.0) <= 0.5 * step + 1e-6, (g, w)
            else:
                assert np.array_equal(g, w), (g, w)                   # exact
        seen.add(tuple(tuple(np.ravel(w.numpy()).tolist()) for w in want))
    assert len(seen) >= 4, seen
    assert any(not part for one in seen for part in one)          # an empty selection among them
