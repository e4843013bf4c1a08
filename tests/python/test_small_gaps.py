"""Small gaps of issue 15 (helper wt-small): F.pairwise_distance of complex
values with p other than 1 and 2 (capture_fp32_distances keeps only real
operands whole), and the refusals that name their argument. Oracle: torch
in float; bounds in output steps (test_module_coverage.worst_steps)."""
import pytest
import torch
import torch.nn.functional as F

from ptec.compiler import compile_model
from model_checks import Call
from test_module_coverage import worst_steps
from test_function_coverage import inputs

S3, R = (1, 4, 8), (-3.0, 3.0)


def _z(x):
    return torch.complex(x * 0.5, x.flip(-1) * 0.5)


def _w(x):
    return torch.complex(x.flip(1), x) * 0.5


RUNS = {
    # (call of x, bound in output steps): measured 3.01, 3.05, 1.93, 0.37
    "complex p=3": (lambda x: F.pairwise_distance(_z(x), _w(x), p=3), 3.5),
    "complex p=3 eps keepdim": (lambda x: F.pairwise_distance(_z(x), _w(x), 3.0, 1e-3, True), 3.5),
    "complex p=0.5": (lambda x: F.pairwise_distance(_z(x), _w(x), p=0.5), 2.5),
    "real p=3 stays fp32 call": (lambda x: F.pairwise_distance(x, x.flip(2), 3, keepdim=True), 1.0),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_pairwise_distance_within_bound(name, tmp_path):
    fn, bound = RUNS[name]
    model = Call(fn).eval()
    cal = inputs(S3, *R)
    res = compile_model(model, [cal[0][0]], cal)
    worst = worst_steps(model, res, cal[:4], tmp_path)
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps (bound {bound})"


def test_complex_p3_output_varies_and_matches_torch_shape():
    """The oracle's outputs vary over the inputs (the bound above is not vacuous)."""
    cal = inputs(S3, *R)
    outs = [F.pairwise_distance(_z(x), _w(x), p=3) for (x,) in cal[:4]]
    assert outs[0].shape == (1, 4) and float(torch.stack(outs).std()) > 0.1


def test_real_p3_keeps_the_fp32_call():
    """A real p = 3 distance stays one torch.pairwise_distance node (the fp32 hook's)."""
    from ptec.capture_fp32_distances import stays_a_call
    assert stays_a_call(torch.pairwise_distance, 3.0, torch.zeros(2), torch.zeros(2))
    assert not stays_a_call(torch.pairwise_distance, 3.0, torch.zeros(2, dtype=torch.cfloat), torch.zeros(2))
