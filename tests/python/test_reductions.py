"""capture_reductions (issue 15): counts of a bool tensor, any / all, the
whole tensor's argmax / amax / prod, aminmax, norms, nansum / nanmean,
var_mean / std_mean, diff, logcumsumexp, quantile, cov and corrcoef as
exact rewrites at capture.

torch is the oracle. The float graph ptec captured is torch's call in float
(NaN included where torch defines the call on it); on the host, integer and
bool results are torch's exactly (inputs kept clear of the comparison's
threshold by more than an input step, and with no two values on one int8
code where an index is asked), and the argument forms ptec does not cover
are refused in one line naming the call. test_function_coverage.py's RUNS
rows bound the float results in output steps."""
import os
import subprocess

import numpy as np
import pytest
import torch

from conftest import ROOT
from ptec import host_runtime
from ptec.capture import capture
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator, evaluate
from ptec.pte import parse_program
from model_checks import Call

INF = float("inf")
S3 = (1, 4, 8)


class Pair(torch.nn.Module):
    """lo, hi = torch.aminmax(x): the tuple unpacked as a model writes it."""

    def forward(self, x):
        lo, hi = torch.aminmax(x, dim=-1, keepdim=True)
        var, mean = torch.var_mean(x, 1)
        return torch.cat([hi - lo, var[..., None][:, :4], mean[..., None][:, :4]], 2)


# (id, call of x): each captured with no unsupported node, its float graph torch's call
FLOAT = [
    ("sum of bool", lambda x: (x > 0).sum()),
    ("sum of bool, dim", lambda x: (x > 0).sum(1)),
    ("sum of bool, dims keepdim", lambda x: torch.sum(x < 0.5, (0, -1), keepdim=True)),
    ("sum of bool, dim=", lambda x: (x > 0).sum(dim=-2)),
    ("sum of bool, keepdim", lambda x: (x > 0).sum(1, keepdim=True)),
    ("sum of .long()", lambda x: (x > 0).long().sum(-1)),
    ("sum of .int()", lambda x: (x >= 1).int().sum()),
    ("sum of logical", lambda x: ((x > 0) & (x < 1)).sum(2)),
    ("sum .float()", lambda x: (x > 0).sum().float() * 0.5),
    ("count_nonzero", lambda x: torch.count_nonzero(x > 0)),
    ("count_nonzero dim", lambda x: torch.count_nonzero(x > 0, -1)),
    ("count_nonzero dims", lambda x: torch.count_nonzero(x > 0, (0, 1))),
    ("count_nonzero float", lambda x: torch.count_nonzero(torch.relu(x))),
    ("Tensor.count_nonzero", lambda x: (x > 1).count_nonzero(dim=2)),
    ("any", lambda x: (x > 1).any()),
    ("all", lambda x: (x > -3).all()),
    ("any dim", lambda x: (x > 1).any(2)),
    ("all dim keepdim", lambda x: (x > -1).all(1, keepdim=True)),
    ("torch.any float", lambda x: torch.any(torch.relu(x))),
    ("torch.all float dim", lambda x: torch.all(torch.relu(x), -1)),
    ("any of a float", lambda x: x.any()),
    ("argmax()", lambda x: x.argmax()),
    ("argmin()", lambda x: torch.argmin(x)),
    ("argmax(dim=None, keepdim)", lambda x: x.argmax(dim=None, keepdim=True)),
    ("amax()", lambda x: x.amax()),
    ("amin()", lambda x: torch.amin(x)),
    ("amax(dim=())", lambda x: x.amax(dim=())),
    ("aminmax", lambda x: torch.aminmax(x).min - torch.aminmax(x)[1]),
    ("aminmax dim", lambda x: torch.aminmax(x, dim=-2).max),
    ("Tensor.aminmax keepdim", lambda x: x.aminmax(dim=2, keepdim=True)[0]),
    ("norm()", lambda x: x.norm()),
    ("norm(p)", lambda x: x.norm(3)),
    ("norm p=1 dim", lambda x: x.norm(p=1, dim=2)),
    ("norm inf keepdim", lambda x: x.norm(p=INF, dim=1, keepdim=True)),
    ("norm -inf", lambda x: x.norm(p=-INF, dim=-1)),
    ("norm 2.5 dims", lambda x: x.norm(2.5, (1, 2))),
    ("torch.norm fro", lambda x: torch.norm(x, "fro")),
    ("torch.norm p=1", lambda x: torch.norm(x, 1)),
    ("torch.norm keepdim", lambda x: torch.norm(x, p=2, keepdim=True)),
    ("vector_norm -inf dims keepdim", lambda x: torch.linalg.vector_norm(x, -INF, (0, 1), True)),
    ("linalg.norm()", lambda x: torch.linalg.norm(x)),
    ("linalg.norm dim", lambda x: torch.linalg.norm(x, dim=-1)),
    ("linalg.norm ord dim", lambda x: torch.linalg.norm(x, 1, 1, True)),
    ("linalg.norm 2-D", lambda x: torch.linalg.norm(x[0], INF)),
    ("linalg.norm dims", lambda x: torch.linalg.norm(x, -1, (1, 2))),
    ("vector_norm()", lambda x: torch.linalg.vector_norm(x)),
    ("vector_norm ord dim", lambda x: torch.linalg.vector_norm(x, 1, 2)),
    ("vector_norm inf", lambda x: torch.linalg.vector_norm(x, ord=INF)),
    ("matrix_norm fro", lambda x: torch.linalg.matrix_norm(x[0], "fro")),
    ("matrix_norm 1", lambda x: torch.linalg.matrix_norm(x, 1)),
    ("matrix_norm -inf keepdim", lambda x: torch.linalg.matrix_norm(x, -INF, keepdim=True)),
    ("matrix_norm dims", lambda x: torch.linalg.matrix_norm(x, -1, (0, 2))),
    ("prod()", lambda x: (x * 0.5).prod()),
    ("torch.prod() odd", lambda x: torch.prod(x[..., :7] * 0.5 + 0.7)),
    ("nansum", lambda x: x.nansum()),
    ("nansum dim", lambda x: torch.nansum(x, 1)),
    ("nanmean", lambda x: x.nanmean()),
    ("nanmean dims keepdim", lambda x: x.nanmean((0, 2), keepdim=True)),
    ("var_mean", lambda x: torch.var_mean(x, 2)[0]),
    ("var_mean mean", lambda x: torch.var_mean(x, -1, keepdim=True)[1]),
    ("var_mean unbiased=False", lambda x: torch.var_mean(x, 1, False)[0]),
    ("var_mean whole", lambda x: torch.var_mean(x)[0]),
    ("std_mean", lambda x: torch.std_mean(x, (0, 2))[0]),
    ("std_mean correction", lambda x: torch.std_mean(x, 2, correction=0)[0]),
    ("diff", lambda x: torch.diff(x)),
    ("diff n=2 dim", lambda x: torch.diff(x, 2, 1)),
    ("diff n=0", lambda x: torch.diff(x, 0)),
    ("diff prepend append", lambda x: torch.diff(x, dim=-1, prepend=x[..., :2] * 0.5, append=x[..., -1:])),
    ("diff constant prepend", lambda x: torch.diff(x, prepend=torch.zeros(1, 4, 1))),
    ("Tensor.diff", lambda x: x.diff(n=3, dim=2)),
    ("logcumsumexp", lambda x: x.logcumsumexp(2)),
    ("torch.logcumsumexp dim", lambda x: torch.logcumsumexp(x * 4, 1)),
    ("quantile", lambda x: torch.quantile(x.flatten(), 0.3)),
    ("quantile whole", lambda x: torch.quantile(x, 0.75)),
    ("quantile dim keepdim", lambda x: torch.quantile(x, 0.4, dim=1, keepdim=True)),
    ("quantile q tensor", lambda x: torch.quantile(x, torch.tensor([0.0, 0.3, 1.0]), dim=-1)),
    ("quantile q tensor whole", lambda x: torch.quantile(x, torch.tensor([0.5, 0.9]))),
    ("quantile q tensor keepdim", lambda x: torch.quantile(x, torch.tensor([0.2, 0.5]), 2, True)),
    ("quantile lower", lambda x: torch.quantile(x, 0.3, 2, interpolation="lower")),
    ("quantile higher", lambda x: torch.quantile(x, 0.3, 2, interpolation="higher")),
    ("quantile nearest", lambda x: torch.quantile(x, torch.tensor([0.5, 0.6]), 2, interpolation="nearest")),
    ("quantile nearest, half to even", lambda x: torch.quantile(x[..., :6], 0.5, 2, interpolation="nearest")),
    ("quantile midpoint", lambda x: torch.quantile(x, 0.3, 2, interpolation="midpoint")),
    ("nanquantile", lambda x: torch.nanquantile(x, 0.7, dim=2)),
    ("Tensor.quantile", lambda x: x.quantile(0.1, -1)),
    ("cov", lambda x: torch.cov(x[0])),
    ("cov correction 0", lambda x: torch.cov(x[0], correction=0)),
    ("cov 1-D", lambda x: torch.cov(x[0, 0])),
    ("Tensor.cov", lambda x: x[0, :, :5].cov()),
    ("corrcoef", lambda x: torch.corrcoef(x[0])),
    ("Tensor.corrcoef", lambda x: x[0].t().corrcoef()),
    ("aminmax, var_mean unpacked", Pair()),
]


def _model(fn):
    return (fn if isinstance(fn, torch.nn.Module) else Call(fn)).eval()


@pytest.mark.parametrize("name,fn", FLOAT, ids=[f[0] for f in FLOAT])
def test_float_graph_is_torch(name, fn):
    model = _model(fn)
    x = torch.randn(S3, generator=torch.Generator().manual_seed(len(name))) * 2.0
    g = capture(model, [x])
    assert not [n.name for n in g.nodes if n.op == "unsupported"]
    assert len({n.name for n in g.nodes}) == len(g.nodes)
    with torch.no_grad():
        want = model(x)
    got = evaluate(g, [x])[0]
    assert tuple(got.shape) == tuple(want.shape)
    if want.dtype in (torch.bool, torch.int64):
        assert torch.equal(got.to(want.dtype), want) and torch.equal(got.double(), want.double())
    else:
        assert torch.allclose(got.double(), want.double(), rtol=1e-5, atol=1e-5), (got - want).abs().max()


@pytest.mark.parametrize("fn", [
    lambda x: torch.stack([x.nansum(), x.nanmean(), torch.count_nonzero(x).float()]),
    lambda x: torch.cat([x.nansum(2), torch.nanmean(x, -1), (x > 0).any(2).float()]),
    lambda x: torch.var_mean(x, 2)[1],
], ids=["whole", "dim", "var_mean"])
def test_float_graph_with_nan_is_torch(fn):
    """nansum / nanmean skip NaN (x != x) as torch does; a NaN is no zero."""
    model = Call(fn).eval()
    x = torch.randn(S3, generator=torch.Generator().manual_seed(3))
    x[0, 1, 2] = x[0, 3, 0] = x[0, 3, 5] = float("nan")
    g = capture(model, [torch.randn(S3)])
    with torch.no_grad():
        want = model(x)
    got = evaluate(g, [x])[0]
    assert torch.allclose(got, want, equal_nan=True), (got, want)


class Exact(torch.nn.Module):
    """Counts, truth values and whole-tensor indices: int64 and bool outputs."""

    def forward(self, x):                                      # x [2, 10, 40]: 800 values
        return ((x > 0).sum(), (x > 0).sum(-1), torch.count_nonzero(x < 0, (0, 2)), (x > 0).long().sum(1),
                (x > 1.0).any(2), (x > -1.0).all(1), (x > 0).all(), x.argmax(), x.argmin(dim=None, keepdim=True))


def _exact_inputs(n):
    """Inputs whose values are no closer than 0.05 to 0 and to +-1 (more
    than an input step): magnitudes 0.05 to 0.95 and 1.05 with a random
    sign, and one 1.5 and one -1.5 at random places, the only values on
    their int8 codes (the argmax and argmin)."""
    g = torch.Generator().manual_seed(n)
    out = []
    for _ in range(n):
        magnitude = torch.rand(800, generator=g) * 0.9 + 0.05
        magnitude[torch.rand(800, generator=g) < 0.1] = 1.05
        x = magnitude * torch.where(torch.rand(800, generator=g) < 0.5, -1.0, 1.0)
        top, bottom = torch.randperm(800, generator=g)[:2]
        x[top], x[bottom] = 1.5, -1.5
        out.append((x.reshape(2, 10, 40),))
    return out


def test_counts_and_indices_are_torchs_on_the_host(tmp_path):
    """Over 800 values (more than int8 has codes) the counts are torch's
    int64 exactly, any / all its bools, argmax() / argmin() its index."""
    model = Exact().eval()
    samples = _exact_inputs(6)
    res = compile_model(model, [samples[0][0]], samples)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    seen = set()
    for (x,) in samples:
        want = run_program(prog, [x.numpy()])
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        with torch.no_grad():
            ref = model(x)
        for g, w, r in zip(got, want, ref):
            assert g.tobytes() == np.asarray(w).tobytes()
            assert g.dtype == r.numpy().dtype and g.shape == tuple(r.shape)
            assert (g == r.numpy()).all(), (g, r)
        seen.add(int(ref[0]))
    assert len(seen) > 2 and max(seen) > 255                   # counts beyond what an int8 value could hold


def test_count_of_an_always_true_mask(tmp_path):
    """A mask set everywhere in calibration still counts exactly (the 0/1
    grid then has no 0 to see) and so does one that is never set."""
    model = Call(lambda x: torch.stack([(x > -10.0).sum(1), (x > 10.0).sum(1), (x > 0).sum(1)])).eval()
    samples = [(torch.randn(S3, generator=torch.Generator().manual_seed(k)),) for k in range(4)]
    res = compile_model(model, [samples[0][0]], samples)
    prog = parse_program(res.data)
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.dtype == np.int64 and (got == model(x).numpy()).all(), (got, model(x))


# forms ptec does not cover: (id, call of x, the call's name in the one-line message)
REFUSED = [
    # (matrix norms 2, -2, 'nuc' of any size run: capture_matrix_functions, test_svdvals.py)
    ("norm p=0", lambda x: x.norm(p=0, dim=2), "norm (Tensor.norm)"),
    ("norm dtype", lambda x: torch.linalg.vector_norm(x, dtype=torch.float64).float(), "linalg_vector_norm"),
    # a computed q runs with 'linear' interpolation (capture_computed_quantile; test_random_and_leftovers.py)
    ("quantile of a computed q, nearest", lambda x: torch.quantile(x, torch.sigmoid(x[0, 0, :2]), dim=2,
                                                                    interpolation="nearest"), "quantile"),
    # (a reduction's dtype= is a cast before it, `(x > 0).sum(dtype=torch.float32)`, `x.prod(dtype=torch.int64)`:
    # capture_dtype_forms, test_io_forms.py)
    ("var_mean of one value", lambda x: torch.var_mean(x[..., :1], 2)[0], "var_mean"),
    # (a sum of int64 indices runs in integers: test_integer_math.py, and casts of them to int16 too:
    # test_int_sort_casts.py, and int16 arithmetic of them: test_narrow_ints.py); an int8 shift by 32 is torch
    # 1.13's 32-bit C shift
    ("int8 shift of int64 indices by 32", lambda x: (x.argmax(-1).char() << 32).float(), "lshift"),
    # an empty result: calibration sees no element of it (once a KeyError in quantize, not a refusal)
    ("diff to nothing", lambda x: torch.diff(x, 9), "diff (torch.diff)"),
]


@pytest.mark.parametrize("name,fn,called", REFUSED, ids=[r[0] for r in REFUSED])
def test_uncovered_forms_are_refused_in_one_line(name, fn, called):
    x = torch.randn(S3, generator=torch.Generator().manual_seed(0))
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    assert called in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_cli_refuses_a_norm_in_one_line(tmp_path):
    (tmp_path / "m.py").write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x.norm(p=0, dim=2)\n"
        "def make():\n"
        "    m = M()\n"
        "    m.input_shape = (1, 4, 8)\n"
        "    return m\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run(["/usr/bin/python3", "-m", "ptec", "compile", f"{tmp_path}/m.py:make", "--calib", "2", "-o",
                        f"{tmp_path}/m.pte"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "norm (Tensor.norm)" in r.stderr
    assert not (tmp_path / "m.pte").exists()


def test_counts_on_a_board(tmp_path):
    """A count (the sort and argmax of the 0/1 with its appended 1, the
    int64 subtraction) and a whole-tensor argmax print the reference
    interpreter's bytes on the emulated Cortex-M55."""
    from model_checks import board_matches_reference
    model = Call(lambda x: torch.stack([(x > 0).sum(), x.argmax(), torch.count_nonzero(x > 1.0)])).eval()
    samples = _exact_inputs(2)
    res = compile_model(model, [samples[0][0]], samples)
    for (x,) in samples:
        board_matches_reference(res.data, x.numpy(), "cortex-m55", tmp_path)
