"""Readers of torch.unique's slices along a dim behind a dim above 1
(issue 15, capture_unique_counts `_behind`, capture_masked_select): the
result [..., k, ...] has its varying count inside, so only element-wise
readers run, moved before the selection (f(x_sorted)[:, ..., first], the
same slices of f's values): arithmetic with numbers, functions of one
value, two readers of the same slices, operands of size 1 along the dim.
Sums, means, extremes and softmax over the slices' dim, the whole tensor's,
and layers acting on each slice over another dim run too
(capture_unique_slices, `REDUCING`), and so do scans, flips and views
keeping the count a dim of its own (checked against torch in
test_function_coverage.py's UNIQUE_COUNTS). Any other reader (a sort along
the slices' dim, a view merging the count with another dim, cumprod)
stays refused in one line naming it.

Oracle: torch on inputs rounded away from the rounding edges (so the
unique slices and their count are torch's), the values within their int8
bound in output steps."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from model_checks import Call


def u(x):
    return torch.unique((x * 0.4).round()[:, :2], dim=2)        # [1, 2, k]: dim 2 behind a 2


CALLS = {   # call, bound in output steps (measured)
    "torch.exp(u) * 0.5": (lambda x: torch.exp(u(x)) * 0.5, 1.5),                                # 1.00
    "(u + 1) * (u - 2)": (lambda x: (lambda v: (v + 1) * (v - 2))(u(x)), 1.5),                  # 1.00
    "u * x[:, :2, :1] (size 1 along the dim)": (lambda x: u(x) * x[:, :2, :1], 1.5),            # 1.02 (fp32 mul)
    "torch.unique_consecutive(dim=2) - 1": (lambda x: torch.unique_consecutive((x * 0.4).round()[:, :2], dim=2) - 1,
                                            1.5),                                             # 1.00
}


def _inputs(n=6):
    g = torch.Generator().manual_seed(11)
    return [(torch.rand(1, 4, 8, generator=g) * 6 - 3,) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_elementwise_readers_are_torchs(name, tmp_path):
    fn, bound = CALLS[name]
    model = Call(fn).eval()
    cal = _inputs()
    res = compile_model(model, [cal[0][0]], cal)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    in_step = res.graph.node(res.graph.inputs[0]).qparams[0]
    shapes, worst = set(), 0.0
    for (x,) in cal + [(torch.full((1, 4, 8), 2.2),)]:
        edge = ((x * 0.4) - (x * 0.4).floor() - 0.5).abs() < 2 * in_step * 0.4
        x = torch.where(edge, x + 4 * in_step, x)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = run_program(prog, [x.numpy()])[0]
        if res.lowered.fallbacks:
            assert np.abs(got - want).max(initial=0.0) <= step * 1.001
        else:
            assert got.tobytes() == want.tobytes()
        with torch.no_grad():
            ref = model(x).numpy()
        assert got.shape == ref.shape, (got.shape, ref.shape)
        shapes.add(ref.shape)
        worst = max(worst, float(np.abs(got - ref).max() / step))
    print(f"{name}: {sorted(shapes)}, worst {worst:.2f} output steps")
    assert len(shapes) >= 3
    assert worst <= bound + 1e-3, worst


def v(x):
    return torch.unique((x * 0.4).round().reshape(2, 8, 2), dim=1)     # [2, k, 2]: dim 1 behind a 2, a dim after


# reductions and layers over the slices' dim, and layers acting on each slice over another dim
# (capture_unique_slices): call, bound in output steps (measured)
REDUCING = {
    "u.sum(2)": (lambda x: u(x).sum(2), 0.5),                                                   # 0.00
    "u.mean(-1)": (lambda x: u(x).mean(-1), 1.0),                                               # 0.46 (fp32 div)
    "u.mean(2, keepdim=True)": (lambda x: u(x).mean(2, keepdim=True), 1.0),                      # 0.46
    "u.amax(2)": (lambda x: u(x).amax(2), 0.5),                                                 # 0.50
    "u.amin(-1, keepdim=True)": (lambda x: u(x).amin(-1, keepdim=True), 0.5),                   # 0.50
    "u.max(2).values": (lambda x: u(x).max(2)[0], 0.5),                                         # 0.50
    "u.min(2).values": (lambda x: u(x).min(2)[0], 0.5),                                         # 0.50
    "torch.softmax(u, 2)": (lambda x: torch.softmax(u(x), 2), 5.0),                              # 2.74 (1/256 grid)
    "torch.log_softmax(u, -1)": (lambda x: torch.log_softmax(u(x), -1), 1.5),                    # 1.01
    "u.sum()": (lambda x: u(x).sum(), 0.5),                                                     # 0.50
    "u.mean()": (lambda x: u(x).mean(), 0.5),                                                   # 0.27
    "u.max()": (lambda x: u(x).max(), 0.5),                                                     # 0.50
    "u.min()": (lambda x: u(x).min(), 0.5),                                                     # 0.50
    "u.sum((1, 2))": (lambda x: u(x).sum((1, 2)), 1.0),                                         # 0.50
    # per slice over another dim: computed over the sorted tensor, then selected
    "u.sum(1)": (lambda x: u(x).sum(1), 0.5),                                                   # 0.50
    "u.mean(1, keepdim=True)": (lambda x: u(x).mean(1, keepdim=True), 0.5),                     # 0.50
    "u.amax(1)": (lambda x: u(x).amax(1), 0.5),                                                 # 0.50
    "torch.softmax(u, 1)": (lambda x: torch.softmax(u(x), 1), 1.0),                              # 0.48
    "u.sort(1).values": (lambda x: u(x).sort(1)[0], 0.5),                                       # 0.50
    "u.sum(1).sum(1)": (lambda x: u(x).sum(1).sum(1), 0.5),                                     # 0.50
    "torch.softmax(u, 1).sum(2)": (lambda x: torch.softmax(u(x), 1).sum(2), 2.0),                # 1.47
    # dim 1 of [2, 8, 2]: the slices' dim between two others
    "v.sum(2)": (lambda x: v(x).sum(2), 0.5),                                                   # 0.50
    "v.mean(1)": (lambda x: v(x).mean(1), 1.0),                                                 # 0.34
    "torch.softmax(v, 1)": (lambda x: torch.softmax(v(x), 1), 5.0),                              # 4.30
    "v.amin(1, keepdim=True)": (lambda x: v(x).amin(1, keepdim=True), 0.5),                     # 0.50
    "v.sum((0, 2)) * 2 + 1": (lambda x: v(x).sum((0, 2)) * 2 + 1, 1.0),                         # 0.57
    # amax over dim 0 leaves the slices' dim first: a row selection, with its readers
    "v.amax(0).sum(0)": (lambda x: v(x).amax(0).sum(0), 1.5),                                   # 1.00
    "torch.softmax(v.amax(0), 0)": (lambda x: torch.softmax(v(x).amax(0), 0), 1.5),              # 1.00
}


def _varied(n=6):
    """_inputs, every element an input step from a rounding edge of x * 0.4, with the slices all equal (one)
    and all distinct (every slice of u and v its own)."""
    pairs = torch.tensor([[a, b] for a in (-1.0, 0.0, 1.0) for b in (-1.0, 0.0, 1.0)][:8]) * 2.5
    every = torch.zeros(1, 4, 8)
    every[0, :2] = pairs.t()                                    # u: 8 distinct columns of two
    every[0, 2:] = pairs.reshape(2, 8)                          # v: its 8 [2, 2] slices distinct
    xs = [x for (x,) in _inputs(n)] + [torch.full((1, 4, 8), 2.2), every]
    out = []
    for x in xs:
        edge = ((x * 0.4) - (x * 0.4).floor() - 0.5).abs() < 0.05
        out.append((torch.where(edge, x + 0.15, x),))
    return out


@pytest.mark.parametrize("name", sorted(REDUCING))
def test_reducing_readers_are_torchs(name, tmp_path):
    fn, bound = REDUCING[name]
    model = Call(fn).eval()
    cal = _varied()
    res = compile_model(model, [cal[0][0]], cal)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    counts, worst = set(), 0.0
    for (x,) in cal:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = run_program(prog, [x.numpy()])[0]
        if res.lowered.fallbacks:
            assert np.abs(got - want).max(initial=0.0) <= step * 1.001
        else:
            assert got.tobytes() == want.tobytes()
        with torch.no_grad():
            ref = model(x).numpy()
        assert got.shape == ref.shape, (got.shape, ref.shape)
        counts.add((u(x).shape[2], v(x).shape[1]))
        worst = max(worst, float(np.abs(got - ref).max() / step))
    print(f"{name}: counts {sorted(counts)}, worst {worst:.2f} output steps")
    assert len(counts) >= 3 and {c[0] for c in counts} >= {1, 8} and {c[1] for c in counts} >= {1, 8}, counts
    assert worst <= bound + 1e-3, worst


@pytest.mark.parametrize("fn", [lambda x: u(x).cumprod(2), lambda x: u(x).reshape(1, -1),
                                lambda x: u(x).sort(2)[0]])
def test_other_readers_refused_in_one_line(fn):
    x = _inputs(1)[0][0]
    with pytest.raises(Exception) as e:
        compile_model(Call(fn).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "unique's slices along a dim behind a dim above 1" in message, message


def test_an_operand_along_the_slices_dim_refused_in_one_line():
    """An operand varying along the slices' dim: torch's product holds on an input whose count is that size
    (8 distinct slices here), but no longer selects the same elements when the count changes: refused."""
    x = torch.zeros(1, 4, 8)
    x[0, 0] = (torch.arange(8.0) - 4) * 2.5                 # 8 distinct slices: u [1, 2, 8]
    fn = lambda x: u(x) * x[:, :2, :]                       # noqa: E731
    assert fn(x).shape == (1, 2, 8)
    with pytest.raises(Exception) as e:
        compile_model(Call(fn).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "unique's slices along a dim behind a dim above 1" in message, message
