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


# F.batch_norm(training=True) with running statistics computed in the program: torch writes them in place
# (its output is the batch's normalization), so it runs when nothing reads them after the call.
def _bn_read_before(x):
    rm, rv = x.mean((0, 2, 3)), x.var((0, 2, 3))
    z = rm.reshape(1, 3, 1, 1) * 0.5           # read before the call: the value torch had
    return F.batch_norm(x, rm, rv, training=True) + z


BN_RUNS = {
    # (call of x, input shape, bound in output steps): measured 0.50, 1.66, 1.25
    "computed stats": (lambda x: F.batch_norm(x, x.mean((0, 2, 3)), x.var((0, 2, 3)), training=True),
                       (1, 3, 4, 4), 1.0),
    "computed stats, weight, bias, batch 2": (lambda x: F.batch_norm(
        x, x.mean((0, 2, 3)) * 0, x.var((0, 2, 3)), torch.tensor([1., 2, 3]), torch.tensor([0., 1, 2]),
        training=True, momentum=0.3), (2, 3, 4, 4), 2.0),
    "stats read before the call": (_bn_read_before, (2, 3, 4, 4), 1.5),
}


@pytest.mark.parametrize("name", sorted(BN_RUNS))
def test_batch_norm_computed_stats_within_bound(name, tmp_path):
    fn, shape, bound = BN_RUNS[name]
    model = Call(fn).eval()
    cal = inputs(shape, *R)
    res = compile_model(model, [cal[0][0]], cal)
    worst = worst_steps(model, res, cal[:4], tmp_path)
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps (bound {bound})"


def _bn_read_after(x):
    rm, rv = x.mean((0, 2, 3)), x.var((0, 2, 3))
    y = F.batch_norm(x, rm, rv, training=True)
    return y + rm.reshape(1, 3, 1, 1)           # the updated statistics


def _bn_stats_out(x):
    rm, rv = x.mean((0, 2, 3)), x.var((0, 2, 3))
    return F.batch_norm(x, rm, rv, training=True), rv


def _bn_view_of_input(x):
    return F.batch_norm(x, x[0, :, 0, 0], x[0, :, 1, 1].abs(), training=True)


@pytest.mark.parametrize("fn, words", [
    (_bn_read_after, "reads them after the call"),
    (_bn_stats_out, "output reads them after the call"),
    (_bn_view_of_input, "is a view of its input"),
])
def test_batch_norm_written_stats_read_refused(fn, words):
    from ptec.capture import capture
    x = inputs((2, 3, 4, 4), *R)[0][0]
    with pytest.raises(Exception) as e:
        capture(Call(fn).eval(), [x])
    msg = str(e.value)
    assert "F.batch_norm(training=True)" in msg and words in msg and "\n" not in msg, msg
