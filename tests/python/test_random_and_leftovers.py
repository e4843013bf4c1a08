"""Random calls in a forward (capture_random): each compiled program runs on
the host runtime over many executes of one loaded method, and its draws are
checked against the distribution torch samples from (moments, a histogram,
frequencies), not against torch's values: ptec draws from its own stream
(PCG32 on the device), never torch's. Every bound is several standard
errors wide and the streams are fixed by the compile's seed, so the checks
are deterministic. Refusals: one line naming the call."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.compiler import CompileError, compile_model
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from model_checks import Call
from test_function_coverage import inputs

BIG = (1, 16, 64)          # 1,024 draws per execute


def _compiled(fn, shape, lo=-3.0, hi=3.0, seed=0):
    calibration = inputs(shape, lo, hi)
    res = compile_model(Call(fn).eval(), [calibration[0][0]], calibration, random_seed=seed)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    return res, calibration[0][0]


def _draws(fn, shape, executes=8, x=None, lo=-3.0, hi=3.0, seed=0):
    """(the outputs of `executes` runs of one loaded method, stacked; the
    output's step; the input)."""
    res, x0 = _compiled(fn, shape, lo, hi, seed)
    x = x0 if x is None else x
    outs = host_runtime.run_stream(parse_program(res.data), res.data, [[x.numpy()]] * executes)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    return np.stack([np.asarray(o[0], np.float64) for o in outs]), step, x


def test_rand_like_is_uniform():
    y, step, _ = _draws(lambda x: torch.rand_like(x), BIG)
    n = y.size
    assert y.min() >= -step and y.max() <= 1 + step
    assert abs(y.mean() - 0.5) < 4 * math.sqrt(1 / 12 / n) + step
    assert abs(y.var() - 1 / 12) < 0.006
    counts, _ = np.histogram(y, bins=8, range=(0.0, 1.0))
    expected = n / 8
    assert np.abs(counts - expected).max() < 5 * math.sqrt(expected), counts


@pytest.mark.parametrize("call", ["randn_like", "randn", "normal_"])
def test_normal_draws(call):
    fn = {"randn_like": lambda x: torch.randn_like(x),
          "randn": lambda x: torch.randn(1, 16, 64) + x * 0,
          "normal_": lambda x: torch.empty(1, 16, 64).normal_(1.0, 2.0)}[call]
    y, step, _ = _draws(fn, BIG)
    if call == "normal_":
        y = (y - 1.0) / 2.0
        step /= 2.0
    n = y.size
    assert abs(y.mean()) < 4 / math.sqrt(n) + step
    assert abs(y.std() - 1.0) < 0.04
    inside = float((np.abs(y) < 1.0).mean())
    assert abs(inside - 0.6827) < 0.03, inside           # the normal's mass within one sigma
    assert (y > 2.0).any() and (y < -2.0).any()          # tails reached


def test_uniform_and_exponential_fills():
    y, step, _ = _draws(lambda x: torch.empty(1, 16, 64).uniform_(-2.0, 3.0), BIG)
    assert y.min() >= -2.0 - step and y.max() <= 3.0 + step
    assert abs(y.mean() - 0.5) < 0.05 and abs(y.var() - 25 / 12) < 0.12
    y, step, _ = _draws(lambda x: torch.empty(1, 16, 64).exponential_(2.0), BIG)
    assert y.min() >= -step
    assert abs(y.mean() - 0.5) < 0.03, y.mean()          # 1 / lambd
    assert abs(float((y > 0.5).mean()) - math.exp(-1.0)) < 0.03


def test_normal_of_tensors_centres_on_the_mean():
    y, step, x = _draws(lambda x: torch.normal(x, 0.5), BIG, lo=-1.0, hi=1.0)
    z = (y - x.numpy()[None]) / 0.5
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1.0) < 0.06


def test_bernoulli_frequencies_follow_the_probabilities():
    y, _, x = _draws(lambda x: torch.bernoulli(torch.sigmoid(x)), BIG)
    assert set(np.unique(y)) <= {0.0, 1.0}
    p = torch.sigmoid(x).numpy()[None].repeat(y.shape[0], 0)
    # the sum of (y - p) over n draws has variance sum p (1 - p)
    assert abs((y - p).sum()) < 4 * math.sqrt((p * (1 - p)).sum()) + 0.01 * y.size
    y, _, _ = _draws(lambda x: torch.bernoulli(x, 0.25), BIG)
    assert abs(y.mean() - 0.25) < 4 * math.sqrt(0.25 * 0.75 / y.size)


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_picks_by_softmax(hard):
    """Gumbel-max: the argmax of softmax((x + g) / tau) falls on class k
    with probability softmax(x)[k], whatever tau."""
    x = torch.tensor([[0.0, 1.0, -1.0, 2.0, 0.5, -2.0, 1.5, 0.0]]).repeat(64, 1)[None]
    y, step, _ = _draws(lambda x: F.gumbel_softmax(x, tau=0.5, hard=hard), (1, 64, 8), executes=16, x=x)
    if hard:
        assert set(np.unique(y)) <= {0.0, 1.0} and (y.sum(-1) == 1).all()
    else:
        assert np.abs(y.sum(-1) - 1.0).max() < 8 * step
    picks = np.bincount(y.reshape(-1, 8).argmax(-1), minlength=8) / (y.size / 8)
    want = torch.softmax(x[0, 0], 0).numpy()
    n = y.size / 8
    assert np.all(np.abs(picks - want) < 4 * np.sqrt(want * (1 - want) / n) + 0.02), (picks, want)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_or_sets_torchs_values(feature):
    p = 0.3
    a = 1.0 / math.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
    fn = (lambda x: F.feature_alpha_dropout(x, p, True)) if feature else (lambda x: F.alpha_dropout(x, p, True))
    shape = (1, 16, 4, 4) if feature else BIG
    y, step, x = _draws(fn, shape, lo=-1.0, hi=1.0)
    kept_value = a * x.numpy()[None] + 1.7580993408473766 * a * p
    dropped_value = 1.7580993408473766 * a * (p - 1)
    kept = np.abs(y - kept_value) <= 1.5 * step
    dropped = np.abs(y - dropped_value) <= 1.5 * step
    assert (kept | dropped).all()
    drop = ~kept
    if feature:
        per_channel = drop.reshape(y.shape[0] * 16, -1)
        assert all(r.all() or not r.any() for r in per_channel), "a channel is partly dropped"
    trials = drop.size if not feature else drop.size // 16
    assert abs(float(drop.mean()) - p) < 4 * math.sqrt(p * (1 - p) / trials) + 0.01


def test_draws_change_per_execute_and_repeat_per_seed():
    """torch.rand(size) with no traced argument: a draw per execute (fx would
    run it once while tracing and freeze it into a constant), the same
    stream for the same seed, another for another seed."""
    fn = lambda x: x + torch.rand(1, 4, 8)                       # noqa: E731
    first, _, _ = _draws(fn, (1, 4, 8), executes=3)
    assert not np.array_equal(first[0], first[1]) and not np.array_equal(first[1], first[2])
    again, _, _ = _draws(fn, (1, 4, 8), executes=3)
    assert np.array_equal(first, again)
    other, _, _ = _draws(fn, (1, 4, 8), executes=3, seed=7)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("call, word", [
    # (randint, randint_like, randperm, multinomial, poisson, random_, generator=: test_random_integers.py)
    (lambda x: x + torch.empty(1, 4, 8).cauchy_(), "cauchy_"),          # read by a layer: fp32 output only
    (lambda x: F.alpha_dropout(x, 1.0, True), "p 1.0"),
])
def test_refused_in_one_line(call, word):
    x = torch.zeros(1, 4, 8)
    with pytest.raises((CaptureError, CompileError, UnsupportedOperator)) as e:
        compile_model(Call(call).eval(), [x], [(x,)])
    msg = str(e.value)
    assert "\n" not in msg and word in msg, msg


def test_filled_tensor_read_elsewhere_is_refused():
    def fn(x):
        t = torch.empty(1, 4, 8)
        t.uniform_()
        return x + t
    x = torch.zeros(1, 4, 8)
    with pytest.raises((CaptureError, CompileError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [x], [(x,)])
    assert "uniform_" in str(e.value) and "\n" not in str(e.value)


# ---------------------------------------------------------------------------
# The leftovers: a computed q for torch.quantile (capture_computed_quantile),
# masked_scatter by a computed mask (capture_masked_scatter), the tuple forms
# of nonzero (capture_coordinate_tuple), a computed embedding table
# (capture_embedding_computed). PyTorch float on the same input is the oracle.

def _worst(fn, shape=(1, 4, 8), tmp_path=None, lo=-3.0, hi=3.0):
    from test_module_coverage import worst_steps
    calibration = inputs(shape, lo, hi)
    model = Call(fn).eval()
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    return worst_steps(model, res, calibration[:4], tmp_path)


@pytest.mark.parametrize("call, bound", [
    (lambda x: torch.quantile(x, torch.sigmoid(x[0, 0, 0]), dim=-1), 2.0),                      # 0-d q, dim -1
    (lambda x: torch.quantile(x, torch.sigmoid(x[0, :3, 1]), dim=1, keepdim=True), 2.0),        # keepdim
    (lambda x: x.quantile(torch.sigmoid(x[0, :2, 0]), 2), 2.0),                                 # the method
    (lambda x: torch.quantile(x[0, :2], torch.sigmoid(x[0, 2, :2])), 4.0),                      # no dim: 16 values
])
def test_quantile_of_a_computed_q(call, bound, tmp_path):
    worst = _worst(call, tmp_path=tmp_path)
    assert worst <= bound + 1e-3, worst


@pytest.mark.parametrize("call, word", [
    (lambda x: torch.quantile(x, torch.sigmoid(x[0, :2, 0]), dim=2, interpolation="nearest"), "'nearest'"),
    (lambda x: torch.nanquantile(x, torch.sigmoid(x[0, :2, 0]), dim=2), "nanquantile"),
    (lambda x: x.masked_scatter(x > 0, x * 2).repeat(1, 1, 40).masked_scatter(
        x.repeat(1, 1, 40) > 0, x.repeat(1, 1, 40)), "at most 256"),
    (lambda x: F.embedding(torch.tensor([0, 4]), x[0]), "index out of range"),   # torch's own error
    (lambda x: F.embedding(torch.tensor([0, 1]), x[0], max_norm=1.0), "max_norm"),
    # (constant ids with offsets and a computed table: capture_bag_of_values runs them)
    (lambda x: F.embedding_bag(torch.tensor([[0, 1]]), x[0], max_norm=1.0), "max_norm"),
    (lambda x: torch.where(x > 0), "whole"),
    (lambda x: torch.where(x > 0)[1] + 1, "program outputs"),
])
def test_leftovers_refused_in_one_line(call, word):
    x = torch.zeros(1, 4, 8)
    with pytest.raises((CaptureError, CompileError, UnsupportedOperator)) as e:
        compile_model(Call(call).eval(), [x], [(x,)])
    msg = str(e.value)
    assert "\n" not in msg and word in msg, msg


@pytest.mark.parametrize("call, bound", [
    (lambda x: x.masked_scatter(x[:, :1] > 0.5, x.flip(2) * 0.5), 1.0),            # a mask broadcast over dim 1
    (lambda x: x.masked_scatter(x > 1.5, x[0, :2].flatten() * 3.0), 1.5),            # src shorter than x
    (lambda x: x.masked_scatter(x < 10.0, -x), 0.5),                                # every position set
    (lambda x: x.masked_scatter(x > 10.0, -x), 0.5),                                # none: x itself
])
def test_masked_scatter_of_a_computed_mask(call, bound, tmp_path):
    worst = _worst(call, tmp_path=tmp_path)
    assert worst <= bound + 1e-3, worst


def test_where_tuple_both_elements_are_torchs(tmp_path):
    from ptec.interpreter import run_program
    model = Call(lambda x: (torch.where(x > 0.5)[0], torch.where(x > 0.5)[2],
                            x.nonzero(as_tuple=True)[1])).eval()
    calibration = inputs((1, 4, 8), -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    in_step = res.graph.node(res.graph.inputs[0]).qparams[0]
    counts = set()
    for (x,) in calibration[:4] + [(torch.full((1, 4, 8), -1.0),)]:
        x = torch.where((x - 0.5).abs() < in_step, x + 2 * in_step, x)     # no element on the threshold
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        want = run_program(prog, [x.numpy()])
        with torch.no_grad():
            ref = model(x)
        for g, w, r in zip(got, want, ref):
            assert g.tobytes() == w.tobytes()
            assert g.dtype == np.int64 and np.array_equal(g, r.numpy()), (g, r)
        counts.add(len(ref[0]))
    assert 0 in counts and len(counts) >= 3, counts


def test_cli_notes_the_draws_and_refuses_an_int16_randint_with_exit_2(tmp_path):
    """`compile` notes in one line that the call draws on the device and
    repeats its output for one --seed; randint as int16 (ptec draws int64
    or float32) exits 2 with one line."""
    import os
    import subprocess
    import sys
    from conftest import ROOT
    src = tmp_path / "draws.py"
    src.write_text("import torch\n"
                   "class Noisy(torch.nn.Module):\n"
                   "    def forward(self, x):\n"
                   "        return x + torch.randn_like(x)\n"
                   "class Shuffled(torch.nn.Module):\n"
                   "    def forward(self, x):\n"
                   "        return x + torch.randint(0, 4, (1, 4, 8), dtype=torch.int16)\n"
                   "def noisy():\n"
                   "    m = Noisy()\n"
                   "    m.input_shape = (1, 4, 8)\n"
                   "    return m\n"
                   "def shuffled():\n"
                   "    m = Shuffled()\n"
                   "    m.input_shape = (1, 4, 8)\n"
                   "    return m\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    made = []
    for k in range(2):
        out = tmp_path / f"noisy{k}.pte"
        r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:noisy", "--calib", "2", "-o", str(out)],
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        notes = [s for s in (r.stdout + r.stderr).splitlines() if "draws random numbers on the device" in s]
        assert len(notes) == 1 and "randn_like" in notes[0] and "dropout" not in notes[0], notes
        made.append(out.read_bytes())
    assert made[0] == made[1]                    # one --seed, one program
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:shuffled", "--calib", "2",
                        "-o", str(tmp_path / "shuffled.pte")], capture_output=True, text=True, env=env)
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "randint" in lines[0] and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "shuffled.pte").exists()


STREAMED = {
    "randn_like": lambda x: x + torch.randn_like(x),
    "gumbel_softmax(hard)": lambda x: F.gumbel_softmax(x, 0.5, hard=True),
    "bernoulli": lambda x: torch.bernoulli(torch.sigmoid(x)),
    "feature_alpha_dropout": lambda x: F.feature_alpha_dropout(x, 0.3, True),
}


@pytest.mark.parametrize("name", sorted(STREAMED))
def test_host_bytes_equal_the_reference_over_executes(name):
    """The host runtime's draws are the reference interpreter's (the numpy
    PCG32 twin) execute after execute, on one loaded method."""
    from ptec.interpreter import Session
    res, x = _compiled(STREAMED[name], (1, 4, 8))
    prog = parse_program(res.data)
    session = Session(prog)
    outs = host_runtime.run_stream(prog, res.data, [[x.numpy()]] * 5)
    seen = set()
    for (got,) in outs:
        want = session.run([x.numpy()])[0]
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
        seen.add(np.asarray(got).tobytes())
    assert len(seen) > 1                         # the stream advances


@pytest.mark.parametrize("name", ["gumbel_softmax(hard)", "feature_alpha_dropout"])
def test_the_m55_streams_the_reference(name, tmp_path):
    from model_checks import board_streams_reference
    calibration = inputs((1, 4, 8), -3.0, 3.0)
    res = compile_model(Call(STREAMED[name]).eval(), [calibration[0][0]], calibration, target="cortex-m55")
    board_streams_reference(res.data, [c[0] for c in calibration[:3]], "cortex-m55", tmp_path, random=True)


# spelling -> (call of x, "uniform" or "normal" and its scale)
SPELLINGS = {
    "torch.empty_like(x).normal_()": (lambda x: torch.empty_like(x).normal_(), "normal", 1.0),
    "x.new_empty(size).uniform_()": (lambda x: x.new_empty(1, 16, 64).uniform_(), "uniform", 1.0),
    "x.clone().uniform_()": (lambda x: x.clone().uniform_(), "uniform", 1.0),
    "torch.rand(x.shape)": (lambda x: torch.rand(x.shape) + x * 0, "uniform", 1.0),
    "torch.randn(x.size())": (lambda x: torch.randn(x.size()) + x * 0, "normal", 1.0),
    "torch.rand(size=...)": (lambda x: torch.rand(size=(1, 16, 64)) + x * 0, "uniform", 1.0),
    "torch.normal(0.0, 2.0, size=...)": (lambda x: torch.normal(0.0, 2.0, size=(1, 16, 64)) + x * 0, "normal", 2.0),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_spellings_draw_their_distribution(name):
    fn, kind, scale = SPELLINGS[name]
    y, step, _ = _draws(fn, BIG, executes=4)
    assert not np.array_equal(y[0], y[1])                        # new draws per execute
    y = y / scale
    if kind == "uniform":
        assert y.min() >= -step and y.max() <= 1 + step
        assert abs(y.mean() - 0.5) < 0.02 and abs(y.var() - 1 / 12) < 0.008
    else:
        assert abs(y.mean()) < 0.06 and abs(y.std() - 1.0) < 0.05


def test_hard_gumbel_along_another_dim_is_one_hot_there():
    y, _, _ = _draws(lambda x: F.gumbel_softmax(x, 1.0, True, dim=1), (1, 4, 8), executes=4)
    assert set(np.unique(y)) <= {0.0, 1.0} and (y.sum(axis=2) == 1).all()
