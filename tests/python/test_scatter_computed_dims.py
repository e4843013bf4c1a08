"""A plain torch.scatter (and reduce='multiply') by an index computed in the
program along any dim (ptec.capture_scatter_computed.computed_scatter_nodes):
the written dim moved last by a permute of the index (as float) and of src,
the last-dim one-hot form, the result permuted back, as summed_scatter_nodes
does for sums.

Oracle: torch on the same inputs. The index is an argsort / topk / argmax
itself, over the written dim: its positions there are distinct, so torch's
result is defined (torch leaves a position written twice unspecified). An
argsort over another dim than the written one may write a position twice:
refused in one line (before, on the last dim it ran, summing the values
written twice). reduce='multiply' multiplies self by src where written
(before, on the last dim it ran as the plain write, losing self's factor:
485 output steps). A plain write picks int8 bytes of src (half an output
step); a constant value or a product adds one rounding."""
import numpy as np
import pytest
import torch

from model_checks import Call
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program


CASES = {  # name: (call of x [1, 4, 8], bound in output steps; measured)
    "scatter(1, argsort(1)) into zeros": (lambda x: torch.zeros(1, 4, 8).scatter(1, x.argsort(1), x), 0.5),  # 0.5
    "scatter(0, argsort(0, descending)) of a 2-D value": (
        lambda x: x[0].scatter(0, x[0].argsort(0, descending=True), x[0] * 2), 0.5),                  # 0.5
    "scatter(1, topk(2, 1) indices)": (lambda x: x.scatter(1, x.topk(2, 1)[1], -x[:, :2]), 0.5),      # 0.5
    "scatter_(-2, argmax keepdim, value)": (lambda x: x.clone().scatter_(-2, x.argmax(1, keepdim=True), 1.0),
                                            1.0),                                                    # 0.75
    "scatter(1, argsort(1), reduce='multiply')": (
        lambda x: x.scatter(1, x.argsort(1), x * 0.5, reduce="multiply"), 1.5),                       # 1.02
    "scatter(2, argsort(2), reduce='multiply')": (
        lambda x: x.scatter(2, x.argsort(2), x, reduce="multiply"), 1.25),                           # 0.95
    "scatter(1, argmax keepdim, value, reduce='multiply')": (
        lambda x: x.scatter(1, x.argmax(1, keepdim=True), 2.0, reduce="multiply"), 1.25),             # 1.0
}


def _samples(n, g):
    # distinct values a grid apart: argsort / argmax of the int8 input is torch's
    return [((torch.randperm(32, generator=g).float() / 31 * 5.6 - 2.8).reshape(1, 4, 8),) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_computed_scatter_along_any_dim_is_torchs(name, tmp_path):
    fn, bound = CASES[name]
    cal = _samples(6, torch.Generator().manual_seed(0))
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    for (x,) in cal[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = fn(x).numpy()
        assert got.shape == want.shape and float(np.ptp(want)) >= 4 * step
        worst = max(worst, float(np.abs(got - want).max()) / step)
    print(f"{name}: {worst:.2f} output steps")
    assert worst <= bound + 1e-6


REFUSED = {
    "an argsort over another dim than the written one": (
        lambda x: x.scatter(2, x.argsort(1), x), r"distinct along the dim the argsort ran over \(1\), not along "
                                                 r"the written dim 2.*unspecified"),
    "an argmax over another dim, more than one write per row": (
        lambda x: x[:, :1].expand(1, 4, 8).scatter(1, x.argmax(2, keepdim=True).expand(1, 4, 2), x[..., :2]),
        r"index is computed in the program"),
    "reduce='multiply' by an argsort over another dim": (
        lambda x: x.scatter(1, x.topk(4, 2)[1], x[..., :4], reduce="multiply"),
        r"distinct along the dim the argsort ran over \(2\), not along the written dim 1"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_position_possibly_written_twice_is_refused(name):
    fn, words = REFUSED[name]
    x = _samples(1, torch.Generator().manual_seed(1))[0][0]
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(fn).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "scatter" in message, message
    assert __import__("re").search(words, message), message
