"""Calls that arrange their input's values by constant index tables
(ptec.capture_constant_gathers, issue 15): diagflat, combinations, vander,
histogram, index_reduce and torch.special's softmax spellings; torch float
is the oracle, bounds in output steps on the host runtime (checked against
the reference interpreter by worst_steps)."""
import pytest
import torch

from ptec.capture import capture
from ptec.compiler import CompileError, compile_model
from test_module_coverage import worst_steps
from model_checks import Call

S3 = (1, 4, 8)
R = (-3.0, 3.0)

# call of x, bound in output steps (measured worst in comments)
GATHERS = {
    "torch.diagflat(v, 1)": (lambda x: torch.diagflat(x[0, 0], 1), 1.0),                      # 0.93
    "torch.diagflat(2-D, -2)": (lambda x: torch.diagflat(x[0, :2], -2), 1.0),                # 0.84
    "torch.combinations(v, 2)": (lambda x: torch.combinations(x[0, 0], 2), 0.5),              # 0.48
    "torch.combinations(v, 3, with_replacement)": (lambda x: torch.combinations(x[0, 0, :5], 3, True), 0.5),  # 0.45
    "torch.linalg.vander(v)": (lambda x: torch.linalg.vander(x[0, 0, :4] * 0.5), 2.5),       # 1.83
    "torch.linalg.vander(rows, N=3)": (lambda x: torch.linalg.vander(x[0], N=3), 2.0),      # 1.61
    # these inputs have no value within an input step of a bin's edge (as test_function_coverage's histc)
    "torch.histogram(x, 4, range).hist": (lambda x: torch.histogram(x, 4, range=(-2.0, 2.0)).hist, 0.5),  # 0.33
    "torch.histogram(...).bin_edges": (lambda x: torch.histogram(x, 4, range=(-2.0, 2.0)).bin_edges + x[0, 0, :5],
                                       1.0),                                                  # 0.73
    "Tensor.index_reduce(prod)": (lambda x: x.index_reduce(2, torch.tensor([0, 1, 0, 1]), x[..., :4] * 0.5, "prod"),
                                  1.5),                                                                   # 1.28
    "Tensor.index_reduce(mean, include_self=False)": (
        lambda x: x.index_reduce(1, torch.tensor([3, 0, 3]), x[:, 1:] * 2, "mean", include_self=False), 2.0),  # 1.50
    "Tensor.index_reduce(amax/amin)": (lambda x: x.index_reduce(2, torch.tensor([7, 7, 2]), x[..., 5:] + 1, "amax")
                                       + x.index_reduce(2, torch.tensor([0, 6, 0]), x[..., :3], "amin"), 1.5),  # 1.13
    "special.softmax/log_softmax/logsumexp": (lambda x: torch.special.softmax(x, -1)
                                              + torch.special.log_softmax(x, 1) * 0.1
                                              + torch.special.logsumexp(x, -1, keepdim=True) * 0.1, 2.0),  # 1.37
}


def inputs(n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(S3, generator=g) * (R[1] - R[0]) + R[0],) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(GATHERS))
def test_gather_within_its_bound(name, tmp_path):
    fn, bound = GATHERS[name]
    model = Call(fn).eval()
    calibration = inputs()
    res = compile_model(model, [calibration[0][0]], calibration)
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"{name}: {worst:.2f} output steps ({'fp32' if res.lowered.fallbacks else 'int8'})")
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


def test_diagflat_places_every_value():
    """The index table and mask put each value once, the rest 0 (exactly torch's in float)."""
    x = torch.randn(S3)
    for offset in (-3, 0, 2):
        g = capture(Call(lambda v: torch.diagflat(v[0, 0], offset)).eval(), [x])
        from ptec.ir import evaluate
        got = evaluate(g, [x])
        got = got[0] if isinstance(got, (list, tuple)) else got
        assert torch.equal(got, torch.diagflat(x[0, 0], offset)), offset


@pytest.mark.parametrize("call,named", [
    ("torch.histogram(x, 4).hist", "histogram"),                               # no range: x's own
    ("x.index_reduce(2, x[0, 0, :4].argmax().reshape(1), x[..., :1], 'prod')", "index_reduce"),   # computed index
])
def test_left_to_torchs_refusal(call, named):
    model = Call(eval(f"lambda x: {call}")).eval()
    calibration = inputs(2)
    with pytest.raises(CompileError) as e:
        compile_model(model, [calibration[0][0]], calibration)
    assert named in str(e.value) and "\n" not in str(e.value), str(e.value)
