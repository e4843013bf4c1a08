"""The margin, embedding and likelihood losses a forward computes
(ptec.capture_margin_losses, issue 15): torch float is the oracle, bounds in
output steps on the host runtime (checked against the reference
interpreter); the calls left to torch's refusal."""
import pytest
import torch
import torch.nn.functional as F

from ptec.compiler import CompileError, compile_model
from model_checks import Call
from test_losses_in_forward import inputs, steps_from_torch

S3 = (1, 4, 8)
U = (0.0, 1.0)                                            # the probe: uniform in [0, 1)
R = (-3.0, 3.0)
SIGNS = torch.tensor([1.0, -1.0, -1.0, 1.0])              # a pair label per row of x[0]
SIGNS32 = torch.tensor([1.0, -1.0] * 16).reshape(1, 4, 8)
TARGET = torch.tensor([0, 3, 1, 2])
MULTI = torch.tensor([[0, 3, -1, 2, 0, 0, 0, 0], [7, -1, 0, 0, 0, 0, 0, 0],
                      [1, 2, 5, 6, -1, 0, 0, 0], [4, 4, -1, 0, 0, 0, 0, 0]])
W8 = torch.linspace(0.5, 2.0, 8)
COUNTS = torch.tensor([0.0, 1.0, 2.0, 3.0, 5.0, 0.0, 4.0, 1.0] * 4).reshape(1, 4, 8)


def pos(x):
    return x - x.flip(-1) * 0.5


# call of x, input range, bound in output steps (measured worst in comments)
LOSSES = {
    "F.triplet_margin_loss(none)": (
        lambda x: F.triplet_margin_loss(x, pos(x), x.flip(-1), reduction="none"), U, 3.5),                 # 2.98
    "F.triplet_margin_loss(p 1, margin, swap, sum)": (
        lambda x: F.triplet_margin_loss(x, pos(x), x.flip(-1) * 0.8, margin=2.0, p=1, swap=True, reduction="sum"),
        U, 2.5),                                                                                           # 2.05
    "F.triplet_margin_loss(eps, mean)": (
        lambda x: F.triplet_margin_loss(x, pos(x), x.roll(1, -1), eps=0.1), U, 1.5),                       # 1.06
    "F.triplet_margin_with_distance_loss": (
        lambda x: F.triplet_margin_with_distance_loss(x, pos(x), x.flip(-1), swap=True, reduction="none"),
        U, 3.5),                                                                                           # 2.98
    "F.triplet_margin_with_distance_loss(the model's distance, margin, mean)": (
        lambda x: F.triplet_margin_with_distance_loss(x, pos(x), x.flip(-1), margin=0.5,
                                                      distance_function=lambda a, b: (a - b).abs().amax(-1)),
        U, 1.0),
    "F.margin_ranking_loss(none)": (
        lambda x: F.margin_ranking_loss(x, x.flip(-1), SIGNS32, reduction="none"), U, 3.0),                # 2.49
    "F.margin_ranking_loss(computed labels, margin, mean)": (
        lambda x: F.margin_ranking_loss(x, x.flip(-1), torch.sign(x - 0.5), margin=0.2), U, 1.0),          # 0.53
    "F.cosine_embedding_loss(none)": (
        lambda x: F.cosine_embedding_loss(x[0], x[0].flip(-1) - 0.5, SIGNS, reduction="none"), U, 3.0),    # 2.27
    "F.cosine_embedding_loss(margin, sum)": (
        lambda x: F.cosine_embedding_loss(x[0], x[0].roll(1, -1) - 0.5, SIGNS, margin=0.1, reduction="sum"),
        U, 2.5),                                                                                           # 2.09
    "F.hinge_embedding_loss(none)": (
        lambda x: F.hinge_embedding_loss(x, SIGNS32, reduction="none"), U, 2.0),                           # 1.37
    "F.hinge_embedding_loss(computed labels, margin, mean)": (
        lambda x: F.hinge_embedding_loss(x, torch.sign(x.flip(-1) - 0.5), margin=0.7), U, 1.0),            # 0.46
    "F.soft_margin_loss(none)": (
        lambda x: F.soft_margin_loss(x * 4 - 2, SIGNS32, reduction="none"), U, 1.5),                       # 1.24
    "F.soft_margin_loss(mean)": (lambda x: F.soft_margin_loss(x * 4 - 2, SIGNS32), U, 1.0),                 # 0.38
    "F.multilabel_soft_margin_loss(none)": (
        lambda x: F.multilabel_soft_margin_loss(x * 4 - 2, (SIGNS32 > 0).float(), reduction="none"), U, 2.0),  # 1.68
    "F.multilabel_soft_margin_loss(weight, sum)": (
        lambda x: F.multilabel_soft_margin_loss(x * 4 - 2, x.flip(-1), W8, reduction="sum"), U, 1.5),      # 0.84
    "F.poisson_nll_loss(log_input, none)": (
        lambda x: F.poisson_nll_loss(x, COUNTS, reduction="none"), U, 1.5),                                # 1.16
    "F.poisson_nll_loss(log_input, full, mean)": (
        lambda x: F.poisson_nll_loss(x, COUNTS, full=True), U, 1.0),                                       # 0.47
    "F.poisson_nll_loss(rates, full, none)": (
        lambda x: F.poisson_nll_loss(x + 0.1, COUNTS, log_input=False, full=True, reduction="none"), U, 2.5),  # 1.80
    "F.poisson_nll_loss(rates, eps, sum)": (
        lambda x: F.poisson_nll_loss(x, COUNTS, log_input=False, eps=0.05, reduction="sum"), U, 3.0),      # 2.46
    "F.gaussian_nll_loss(none)": (
        lambda x: F.gaussian_nll_loss(x, x.flip(-1), x * 0.5 + 0.1, reduction="none"), U, 5.0),            # 4.31
    "F.gaussian_nll_loss(var one short, full, eps, mean)": (
        lambda x: F.gaussian_nll_loss(x, x.flip(-1), x.mean(-1), full=True, eps=0.05), U, 1.0),            # 0.67
    "F.gaussian_nll_loss(var [.., 1], sum)": (
        lambda x: F.gaussian_nll_loss(x, x.roll(1, -1), x.amax(-1, keepdim=True), reduction="sum"), U, 6.5),  # 5.41
    "F.multi_margin_loss(none)": (
        lambda x: F.multi_margin_loss(x[0], TARGET, reduction="none"), U, 2.0),                            # 1.61
    "F.multi_margin_loss(p 2, margin, weight, mean)": (
        lambda x: F.multi_margin_loss(x[0] * 2, TARGET, p=2, margin=0.5, weight=W8), U, 1.5),              # 1.11
    "F.multi_margin_loss(argmax target, sum)": (
        lambda x: F.multi_margin_loss(x[0], x[0].flip(-1).argmax(-1), reduction="sum"), U, 1.0),           # 0.66
    "F.multilabel_margin_loss(none)": (
        lambda x: F.multilabel_margin_loss(x[0], MULTI, reduction="none"), U, 5.0),                        # 4.09
    "F.multilabel_margin_loss(mean)": (lambda x: F.multilabel_margin_loss(x[0] * 3, MULTI), U, 2.5),        # 2.18
    "F.multilabel_margin_loss(computed target, sum)": (                     # test_refusals_round22b.py too
        lambda x: F.multilabel_margin_loss(x[0] * 3, (x[0].flip(-1) * 9).long() - 1, reduction="sum"), U, 1.0),   # 0.56
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_within_its_bound(name, tmp_path):
    fn, (lo, hi), bound = LOSSES[name]
    model = Call(fn).eval()
    calibration = inputs(S3, lo, hi)
    res = compile_model(model, [calibration[0][0]], calibration)
    worst = steps_from_torch(model, res, calibration[:6], tmp_path)
    print(f"{name}: {worst:.2f} output steps, {len(res.lowered.fallbacks)} fp32 layers")
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


@pytest.mark.parametrize("call,named", [
    ("F.margin_ranking_loss(x, x * 0.5, torch.ones(1, 4, 8), size_average=False)", "margin_ranking_loss"),
    ("F.multi_margin_loss(x[0], x[0].argmax(-1), weight=torch.ones(8))", "multi_margin_loss"),
])
def test_left_to_torchs_refusal(call, named):
    model = Call(eval(f"lambda x: {call}")).eval()
    calibration = inputs(S3, *U, n=2)
    with pytest.raises(CompileError) as e:
        compile_model(model, [calibration[0][0]], calibration)
    assert f"{named} (F.{named})" in str(e.value) and "\n" not in str(e.value), str(e.value)
