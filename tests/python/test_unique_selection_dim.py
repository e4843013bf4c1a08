"""torch.unique(s, dim=0) and unique_consecutive(s, dim=0) of a selection
s = x[m] (ptec.capture_unique_selection.selection_unique_dim, issue 15):
rows selected by a mask of x's leading dims (`boxes[scores > t]`), sorted
lexicographically as torch's unique dim (or kept in x's order), then the
selected rows moved first by one stable sort; the unique rows a
bound-dynamic [k, ...] program output, counts and inverse exact int64. A
1-D selection's dim 0 is unique without dim.

Oracle: torch 1.13 on the same input. Inputs: rows of values on a grid of
halves (int8 codes far apart; the masks' thresholds a quarter away from
every value, so the program's mask is torch's), rows repeated, rows equal
in their first columns only, none selected, all selected (several
distinct rows), all rows equal."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from model_checks import Call

CALLS = {
    "boxes[m] dim=0": lambda b: torch.unique(b[b[:, 0] > 0.25], dim=0),
    "boxes[m] dim=0 inverse and counts": lambda b: torch.unique(b[b[:, 0] > -0.25], dim=0, return_inverse=True,
                                                                return_counts=True),
    "boxes[m].unique(dim=-2) counts": lambda b: b[b[:, 2] < 0.75].unique(dim=-2, return_counts=True),
    "boxes[m] dim=0 counts only": lambda b: torch.unique(b[b[:, 1] > -0.75], dim=0, return_counts=True)[1],
    "boxes[m] dim=0 values read": lambda b: torch.unique(b[b[:, 0] > -0.25], dim=0).sum(1) * 2,
    "x[m] of two leading dims, dim=0 counts": lambda b: torch.unique(
        b.reshape(2, 6, 3)[b.reshape(2, 6, 3)[..., 2] < 0.25], dim=0, return_counts=True),
    "consecutive boxes[m] dim=0 inverse and counts": lambda b: torch.unique_consecutive(
        b[b[:, 1] > -0.25], dim=0, return_inverse=True, return_counts=True),
    "consecutive boxes[m] dim=0": lambda b: torch.unique_consecutive(b[b[:, 0] < 0.75], dim=0),
    # a 1-D selection: dim 0 is unique without dim
    "x[m] 1-D dim=0": lambda b: torch.unique(b[b > -0.75], dim=0),
    "x[m] 1-D dim=0 counts": lambda b: torch.unique(b[b < 0.75], dim=0, return_counts=True),
    "consecutive x[m] 1-D dim=0 inverse": lambda b: torch.unique_consecutive(b[b < 0.75], dim=0,
                                                                             return_inverse=True),
    "int64 x[m] 1-D dim=0 counts": lambda b: torch.unique((b * 2).round().long()[b > -0.75], dim=0,
                                                          return_counts=True),
    "consecutive int64 x[m] 1-D dim=0": lambda b: torch.unique_consecutive((b * 2).round().long()[b < 0.75], dim=0),
}


def _inputs(seed=3, n=7):
    g = torch.Generator().manual_seed(seed)
    xs = []
    for i in range(n):
        b = torch.randint(-2, 3, (12, 3), generator=g) * 0.5
        b[i % 5] = b[(i + 3) % 12]                                  # a row twice
        b[(i + 1) % 12, :2] = b[(i + 6) % 12, :2]                   # rows equal in their first columns
        xs.append((b,))
    xs.append((torch.full((12, 3), 1.0),))                          # all rows equal
    xs.append((torch.full((12, 3), -1.0),))                         # none selected by most masks
    every = xs[0][0].clone()
    every[:, 0], every[:, 1], every[:, 2] = 1.0, 0.5, -1.0          # ... and all selected by most
    every[::3, 1] = 1.0
    xs.append((every,))
    return xs


@pytest.mark.parametrize("name", sorted(CALLS))
def test_unique_dim0_of_a_selection_is_torchs(name, tmp_path):
    fn = CALLS[name]
    cal = _inputs()
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    steps = [res.graph.node(o).qparams[0] if res.graph.node(o).qparams else None for o in res.graph.outputs]
    lengths, worst = set(), 0.0
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
                worst = max(worst, float(np.abs(g - w).max(initial=0.0) / step))
            else:
                assert np.array_equal(g, w), (g, w)                   # exact
        lengths.add(want[0].shape[0])
    print(f"{name}: lengths {sorted(lengths)}, worst {worst:.2f} output steps")
    # reading the values sums 3 of them (each within half a step) on the sum's grid
    assert worst <= (1.0 if "read" in name else 0.5) + 1e-3, worst
    assert len(lengths) >= 4 and 0 in lengths, lengths


@pytest.mark.parametrize("call,why", [
    # the columns of a row selection: slices whose length follows the values
    ("torch.unique(b[b[:, 0] > 0], dim=1)", "unique (torch.unique): on a selection"),
    ("b[b[:, 0] > 0].unique_consecutive(dim=1, return_counts=True)", "unique_consecutive (Tensor.unique"),
    ("torch.unique(b[b[:, 0] > 0], dim=0, sorted=False)", "runs sorted (unique)"),
    # an integer row selection (ptec selects float rows)
    ("torch.unique((b * 2).long()[b[:, 0] > 0], dim=0)", "of an integer tensor"),
])
def test_left_refused_in_one_line(call, why):
    b = _inputs(n=1)[0][0]
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(eval(f"lambda b: {call}")).eval(), [b], [(b,)])  # noqa: S307
    message = str(e.value)
    assert "\n" not in message and message.startswith("operator not supported") and why in message, message
