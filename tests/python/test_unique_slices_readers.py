"""Readers of torch.unique's slices along a dim behind a dim above 1
(issue 15, capture_unique_counts `_behind`, capture_masked_select): the
result [..., k, ...] has its varying count inside, so only element-wise
readers run, moved before the selection (f(x_sorted)[:, ..., first], the
same slices of f's values): arithmetic with numbers, functions of one
value, two readers of the same slices, operands of size 1 along the dim.
Any other reader (a sum over another dim, a view) stays refused in one line
naming it.

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


@pytest.mark.parametrize("fn", [lambda x: u(x).sum(1), lambda x: u(x).flip(2)])
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
