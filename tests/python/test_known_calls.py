"""torch.dist, torch.result_type and F.rrelu(training=True)
(ptec.capture_known_calls), and the functionals that run as their module
(torch.native_channel_shuffle, F.instance_norm with running statistics,
F.fractional_max_pool2d / 3d: capture_calls.FUNCTIONAL_MODULES) (issue 15):
torch float is the oracle, bounds in output steps on the host runtime
(checked against the reference interpreter); the random ones against torch
given the device's draws, or by their statistics."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from model_checks import Call
from test_losses_in_forward import inputs, steps_from_torch

S3, S4, S5 = (1, 4, 8), (1, 3, 4, 4), (1, 2, 4, 6, 6)
U, R = (0.0, 1.0), (-3.0, 3.0)
SAMPLES = torch.tensor([[[0.3, 0.7], [0.5, 0.1], [0.9, 0.2]]])


# call of x, input shape, range, bound in output steps (measured worst in comments)
CALLS = {
    "torch.dist(p 2)": (lambda x: torch.dist(x, x.flip(-1)), S3, U, 1.0),                                # 0.87
    "torch.dist(p 3)": (lambda x: torch.dist(x, x.flip(-1) * 0.5, 3), S3, U, 1.5),                       # 1.32
    "torch.dist(p 1, broadcast)": (lambda x: torch.dist(x, x[:, :1], 1), S3, U, 1.5),                    # 1.38
    "torch.dist(p inf)": (lambda x: torch.dist(x, x.roll(1, -1), math.inf), S3, U, 1.0),                 # 0.65
    "torch.dist(p 0.5)": (lambda x: torch.dist(x, x.flip(-1), 0.5), S3, U, 2.0),                         # 1.82
    "torch.result_type(x, 2.0)": (lambda x: x.to(torch.result_type(x, 2.0)) * 2 - 1, S3, U, 1.0),       # 0.76
    "torch.result_type(long, 2.5)": (
        lambda x: x.argmax(-1).to(torch.result_type(x.argmax(-1), 2.5)) * 0.5 + x.amax(-1), S3, U, 1.0),  # 0.78
    "torch.native_channel_shuffle": (lambda x: torch.native_channel_shuffle(x * 2 - 1, 3), S4, U, 1.0),  # 0.96
    "F.instance_norm(running stats, use_input_stats=False)": (
        lambda x: F.instance_norm(x, torch.tensor([0.2, 0.5, 0.8]), torch.tensor([0.5, 2.0, 1.0]),
                                  torch.tensor([1.0, -0.5, 2.0]), torch.tensor([0.0, 0.1, -0.3]),
                                  use_input_stats=False, eps=1e-3), S4, U, 1.0),                          # 0.78
    "F.fractional_max_pool2d(_random_samples)": (
        lambda x: F.fractional_max_pool2d(x, 2, output_size=(3, 2), _random_samples=SAMPLES), S4, U, 0.5),  # 0.50
    "F.fractional_max_pool3d(_random_samples)": (
        lambda x: F.fractional_max_pool3d(x, 2, output_size=(2, 3, 3),
                                          _random_samples=torch.tensor([[[0.2, 0.6, 0.4], [0.8, 0.1, 0.5]]])),
        S5, U, 0.5),                                                                                       # 0.50
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_call_within_its_bound(name, tmp_path):
    fn, shape, (lo, hi), bound = CALLS[name]
    model = Call(fn).eval()
    calibration = inputs(shape, lo, hi)
    res = compile_model(model, [calibration[0][0]], calibration)
    worst = steps_from_torch(model, res, calibration[:6], tmp_path)
    print(f"{name}: {worst:.2f} output steps, {len(res.lowered.fallbacks)} fp32 layers")
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


def test_dist_moves_as_torchs(tmp_path):
    """One number per run: across inputs of different scale it must follow torch's (the sum of squares on
    its int8 grid, then the square root, steep near 0: a few steps at the smallest scale)."""
    model = Call(lambda x: torch.dist(x, x.flip(-1))).eval()
    calibration = [(x * s,) for s, (x,) in zip([0.2, 0.5, 1.0, 1.5] * 2, inputs(S3, *U))]
    res = compile_model(model, [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    got = [float(host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]) for (x,) in calibration]
    ref = [float(model(x)) for (x,) in calibration]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert max(ref) - min(ref) > 20 * step
    assert max(abs(a - b) for a, b in zip(got, ref)) <= 4.0 * step        # 3.20


@pytest.mark.parametrize("fn,shape", [
    (lambda x: F.fractional_max_pool2d(x, 2, output_size=(3, 2)), S4),
    (lambda x: F.fractional_max_pool3d(x, 2, output_size=(2, 3, 3)), S5),
])
def test_fractional_pool_draws_is_torch_given_the_device_draws(fn, shape, tmp_path):
    """Without _random_samples: drawn on the device each call (as the module's
    nn.FractionalMaxPool2d / 3d); torch's pool given those draws."""
    from ptec.reference.random_ops import Pcg32
    model = Call(fn).eval()
    calibration = inputs(shape, *U)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    (x,) = calibration[0]
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes(), "ptec-run is not the reference"
    seeds = [n.attrs["seed"] for n in res.graph.nodes if n.op == "random_fractional_pick"]
    assert len(seeds) == 1
    rng, dims = Pcg32(seeds[0]), x.dim() - 2
    samples = torch.tensor([float(rng.next_float()) for _ in range(x.shape[0] * x.shape[1] * dims)])
    samples = samples.reshape(x.shape[0], x.shape[1], dims)
    pool = F.fractional_max_pool2d if dims == 2 else F.fractional_max_pool3d
    out = (3, 2) if dims == 2 else (2, 3, 3)
    with torch.no_grad():
        want = pool(x, 2, output_size=out, _random_samples=samples).numpy()
    assert float(np.abs(got - want).max() / step) <= 0.5 + 1e-3


def test_rrelu_training_draws_a_slope_per_element(tmp_path):
    """F.rrelu(x, lower, upper, training=True): x where x >= 0, else x times a
    slope drawn uniform in [lower, upper) on each execute (torch's own draw
    differs by design, so its statistics are the check)."""
    lower, upper = 0.1, 0.4
    model = Call(lambda x: F.rrelu(x, lower, upper, training=True)).eval()
    calibration = inputs(S3, *R)
    res = compile_model(model, [calibration[0][0]], calibration)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    x = calibration[0][0].numpy()
    outs = [y for (y,) in host_runtime.run_stream(parse_program(res.data), res.data, [[x]] * 16)]
    pos, neg = x >= 0, x < -1.0                   # negatives far enough from 0 that a slope is measurable
    slopes = []
    for y in outs:
        y = np.asarray(y, np.float64)
        assert np.abs(y[pos] - x[pos]).max() <= 1.5 * step
        s = y[neg] / x[neg]
        assert (s >= lower - step / 1.0).all() and (s <= upper + step / 1.0).all(), s
        slopes.append(s)
    slopes = np.stack(slopes)
    assert (slopes.std(0) > 0.03).all(), "a slope does not change between executes"
    assert abs(slopes.mean() - (lower + upper) / 2) < 0.03, slopes.mean()
    assert slopes.std() == pytest.approx((upper - lower) / math.sqrt(12), abs=0.02)


@pytest.mark.parametrize("call,named", [
    ("torch.dist(x, x * 0.5, torch.tensor(2.0))", "dist (torch.dist)"),                 # a tensor p
    ("F.instance_norm(x, torch.zeros(4), torch.ones(4))", "instance_norm (F.instance_norm)"),  # updated in place
    ("F.fractional_max_pool2d(x.reshape(1, 4, 2, 4), 2, output_size=1, return_indices=True)[1].float()",
     "fractional_max_pool2d"),
])
def test_left_refused_by_name(call, named):
    model = Call(eval(f"lambda x: {call}")).eval()
    calibration = inputs(S3, *U, n=2)
    with pytest.raises(CompileError) as e:
        compile_model(model, [calibration[0][0]], calibration)
    assert named in str(e.value) and "\n" not in str(e.value), str(e.value)
