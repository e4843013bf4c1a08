"""torch.unique / unique_consecutive with return_inverse=True
(ptec.capture_unique_inverse, issue 15): the inverse (int64, x's shape) is
torch's exactly on values a grid apart, with the values torch's within half
an output step (their length following the values); the counts and dim:
test_unique_counts.py."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from model_checks import Call


def grid_inputs(seed, levels, n=6):
    """Values on a grid over [-3, 3] (int8 codes far apart), the first every level of it in runs."""
    g = torch.Generator().manual_seed(seed)
    # sample i on the levels -k..k, k = 1 + i % levels: the count of distinct values varies
    xs = [(torch.randint(-1 - i % levels, 2 + i % levels, (1, 4, 8), generator=g) * (3.0 / levels),)
          for i in range(n)]
    xs[0] = (torch.linspace(-3, 3, 2 * levels + 1).repeat_interleave(3).repeat(4)[:32].reshape(1, 4, 8),)
    return xs


@pytest.mark.parametrize("fn,levels", [
    (lambda x: torch.unique(x, return_inverse=True), 6),
    (lambda x: x.unique(sorted=True, return_inverse=True), 2),
    (lambda x: torch.unique_consecutive(x, return_inverse=True), 2),
    (lambda x: x.unique_consecutive(return_inverse=True), 6),
    # 768 elements: the sort and int64 cumsum have no limit (the [n, n] int8 sums before stopped at 254)
    (lambda x: torch.unique(x.repeat(1, 3, 8), return_inverse=True), 6),
    (lambda x: torch.unique_consecutive(x.view(1, 32, 1).repeat(1, 1, 24), return_inverse=True), 2),
], ids=["torch.unique", "x.unique(sorted)", "torch.unique_consecutive", "x.unique_consecutive",
        "torch.unique of 768", "torch.unique_consecutive of 768"])
def test_inverse_is_torchs(fn, levels, tmp_path):
    cal = grid_inputs(levels, levels)
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    counts = set()
    for (x,) in cal + [(torch.full((1, 4, 8), 1.5),)]:
        values, inverse = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        ref_values, ref_inverse = fn(x)
        assert inverse.dtype == np.int64 and inverse.shape == tuple(ref_inverse.shape)
        assert np.array_equal(inverse, ref_inverse.numpy()), (inverse, ref_inverse)
        assert np.array_equal(inverse, run_program(prog, [x.numpy()])[1])
        assert values.shape == tuple(ref_values.shape) and np.abs(values - ref_values.numpy()).max() <= 0.5 * step + 1e-6
        counts.add(len(ref_values))
    assert 1 in counts and len(counts) >= 3, counts


@pytest.mark.parametrize("call,why", [
    # (the counts and dim run: test_unique_counts.py, which has their refusals)
    ("torch.unique(x[..., :1, :1], return_inverse=True)[1]", "return_inverse"),     # one element
    # (unique_consecutive of a selection with return_inverse runs: test_unique_selection.py)
    ("torch.unique_consecutive(x[x > 0].reshape(-1, 1), dim=0, return_inverse=True)[1]", "fixed shape"),
])
def test_left_refused_in_one_line(call, why):
    x = grid_inputs(0, 6, n=1)[0][0]
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(eval(f"lambda x: {call}")).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "unique" in message and why in message, message
