"""Attention masks written in forward (capture_attention_masks), Python list
indices (capture_list_index), torch.isin (capture_isin), torch.bincount
(capture_bincount), torch.where of bools (capture_bool_where), and the
edges of each: argument spellings, rows masked entirely, refusals in one
line. The oracle is PyTorch float on the same input; agreement is bounded
in output steps (RUNS rows in test_function_coverage.py hold the common
forms)."""
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from test_compiler import ENV
from model_checks import Call
from test_function_coverage import inputs
from test_module_coverage import worst_steps

S3 = (1, 4, 8)
CAUSAL = torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)
ROWS = torch.zeros(4, 4, dtype=torch.bool)
ROWS[0] = True                      # query 0 sees nothing
ROWS[1, 2:] = True


def scores(x):
    return x @ x.transpose(1, 2)     # [1, 4, 4]


def compiled(model, shape=S3):
    calibration = inputs(shape, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    return res, calibration


def against_torch(model, res, samples, tmp_path, nan_rows_give=0.0):
    """The worst |ptec - torch| in output steps where torch's output is a
    number; where torch gives NaN (a row masked entirely by -inf) ptec must
    give nan_rows_give. ptec-run must be the reference interpreter, byte for byte."""
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, nans = 0.0, 0
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            ref = model(x).numpy()
        nan = np.isnan(ref)
        nans += int(nan.sum())
        assert (got[nan] == nan_rows_give).all(), got[nan]
        worst = max(worst, float(np.abs(got[~nan] - ref[~nan]).max() / step))
    return worst, nans


def no_infinite_constant(res) -> bool:
    return all(np.isfinite(np.asarray(n.attrs["value"], np.float64)).all()
               for n in res.graph.nodes if n.op == "constant")


class Buffered(nn.Module):
    """nanoGPT's spelling: a 0/1 lower-triangular buffer sliced to the
    tokens, `== 0` as the mask, an nn.Softmax module, [B, H, T, T] scores."""

    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        q = x.view(1, 4, 2, 4).transpose(1, 2)
        att = (q @ q.transpose(-2, -1)) * 0.125
        return self.softmax(att.masked_fill(self.bias[:, :, :4, :4] == 0, float("-inf")))


# call -> (model, bound in output steps, a constant mask: ptec's masked softmax op)
MASK_SPELLINGS = {
    "F.softmax(dim=-1)": (Call(lambda x: F.softmax(scores(x).masked_fill(CAUSAL, float("-inf")), dim=-1)), 1.0, True),
    "masked_fill(value=) kwarg": (Call(lambda x: scores(x).masked_fill(CAUSAL, value=-1e4).softmax(-1)), 1.0, True),
    "where(mask, -inf, scores)": (Call(lambda x: torch.where(CAUSAL, float("-inf"), scores(x)).softmax(-1)), 1.0,
                                  True),
    "where(keep, scores, finfo.min)": (
        Call(lambda x: torch.softmax(torch.where(~CAUSAL, scores(x), torch.finfo(torch.float32).min), -1)), 1.0, True),
    "HF GPT-2: where(keep, scores, torch.full([], finfo.min))": (
        Call(lambda x: torch.where(~CAUSAL, scores(x), torch.full([], torch.finfo(torch.float32).min))
             .softmax(-1)), 1.0, True),
    "masked_fill(mask, torch.tensor(-inf))": (
        Call(lambda x: scores(x).masked_fill(CAUSAL, torch.tensor(float("-inf"))).softmax(-1)), 1.0, True),
    "buffer, == 0, nn.Softmax, 4-D": (Buffered(), 1.5, True),                                  # 1.36
    "additive mask with a finite bias": (
        Call(lambda x: torch.softmax(scores(x) + (torch.triu(torch.full((4, 4), float("-inf")), 1)
                                                  + torch.arange(4.0) * 0.25), -1)), 1.5, True),
    "computed, where(keep, x, -inf)": (Call(lambda x: torch.softmax(torch.where(x > -1.5, x, float("-inf")), -1)),
                                       2.5, False),
    "computed 4-D, key padding": (Call(lambda x: torch.where(x.reshape(1, 2, 2, 8)[:, :, :1] <= 1.5,
                                                             x.reshape(1, 2, 2, 8), float("-inf")).softmax(-1)),
                                  3.0, False),                                   # 2.54
    "computed, F.softmax(dim=2)": (Call(lambda x: F.softmax(x.masked_fill((x > 1.0) & (x < 2.0), -1e9), dim=2)),
                                   3.5, False),                                     # 3.42
}


@pytest.mark.parametrize("name", sorted(MASK_SPELLINGS))
def test_mask_spellings(name, tmp_path):
    model, bound, constant = MASK_SPELLINGS[name]
    model = model.eval()
    res, calibration = compiled(model)
    ops = [n.op for n in res.graph.nodes]
    assert ("masked_softmax" in ops) == constant, ops
    assert no_infinite_constant(res)
    worst, nans = against_torch(model, res, calibration[:4], tmp_path)
    assert nans == 0
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps (bound {bound})"


# a row masked entirely: torch gives NaN for -inf (ptec 0), 1/n for a finite fill (ptec too)
FULL_ROWS = {
    "constant, -inf": (lambda x: torch.softmax(scores(x).masked_fill(ROWS, float("-inf")), -1), True, 1.0),
    "constant, -1e9": (lambda x: torch.softmax(scores(x).masked_fill(ROWS, -1e9), -1), False, 1.0),
    "computed, -inf": (lambda x: torch.softmax(x.masked_fill(x[:, :, :1] < 0, float("-inf")), -1), True, 2.5),
    "computed, -1e4": (lambda x: torch.softmax(x.masked_fill(x[:, :, :1] < 0, -1e4), -1), False, 2.5),
    "computed, 4-D, -1e9": (lambda x: torch.softmax(x.reshape(1, 2, 2, 8).masked_fill(
        x.reshape(1, 2, 2, 8)[..., :1] < 0, -1e9), -1), False, 2.5),
}


@pytest.mark.parametrize("name", sorted(FULL_ROWS))
def test_rows_masked_entirely(name, tmp_path):
    fn, nan, bound = FULL_ROWS[name]
    model = Call(fn).eval()
    res, calibration = compiled(model)
    worst, nans = against_torch(model, res, calibration[:4], tmp_path)
    assert (nans > 0) == nan
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps (bound {bound})"
    if not nan:
        # torch's 1/n there: uniform rows exist in torch's output, and ptec has them
        x = calibration[0][0]
        ref = model(x).numpy()
        got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
        uniform = np.isclose(ref, 1.0 / ref.shape[-1]).all(-1)
        assert uniform.any()
        assert np.abs(got[uniform] - 1.0 / ref.shape[-1]).max() <= res.graph.node(res.graph.outputs[0]).qparams[0]


def test_a_fill_above_the_threshold_is_a_value_not_a_mask(tmp_path):
    """masked_fill(mask, -5.0): a number the softmax weighs (exp(-5) is no 0)."""
    model = Call(lambda x: torch.softmax(scores(x).masked_fill(CAUSAL, -5.0), -1)).eval()
    res, calibration = compiled(model)
    assert "masked_softmax" not in [n.op for n in res.graph.nodes]
    assert against_torch(model, res, calibration[:4], tmp_path)[0] <= 1.5


def test_a_masked_value_read_elsewhere_too(tmp_path):
    """The softmax takes the mask; the other reader (a program output) reads
    the masked value. (A max of it was refused by test_masked_where.py:
    its int8 grid holding -1e4 made every kept value one code; it runs in fp32 now:
    test_masking_fill_readers.py.)"""
    def fn(x):
        m = x.masked_fill(x < -1.5, -1e4)
        return torch.softmax(m, -1), m
    model = Call(fn).eval()
    res, calibration = compiled(model)
    # the masked output's grid holds -1e4: it is coarse, the probabilities are not
    prog = parse_program(res.data)
    for (x,) in calibration[:2]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        ref = model(x)[0].numpy()
        assert np.abs(got - ref).max() < 0.05


FINITE_WHOLE_ROW = "lambda x: torch.softmax(x @ x.transpose(1, 2) + torch.where(W, -1e9, 0.0), -1)"


def test_a_finite_additive_mask_of_whole_rows_is_refused_in_one_line():
    """-1e9 everywhere in a row, or beside -inf (torch then puts the row's
    weight on the -1e9 position, not NaN)."""
    mixed = torch.triu(torch.full((4, 4), float("-inf")), 1)
    mixed[0] = torch.tensor([float("-inf"), -1e9, float("-inf"), float("-inf")])
    for fn in (eval(FINITE_WHOLE_ROW, dict(torch=torch, W=ROWS)),
               lambda x: torch.softmax(x @ x.transpose(1, 2) + mixed, -1)):
        with pytest.raises(CaptureError) as e:
            compiled(Call(fn).eval())
        message = str(e.value)
        assert "\n" not in message and "softmax (torch.softmax)" in message and "whole rows" in message


def cli(tmp_path, body: str):
    src = tmp_path / "m.py"
    src.write_text("import torch, torch.nn as nn\n"
                   "W = torch.zeros(4, 4, dtype=torch.bool)\nW[0] = True\n"
                   "class M(nn.Module):\n"
                   "    input_shape = (1, 4, 8)\n"
                   f"    def forward(self, x):\n        return ({body})(x)\n"
                   "def make():\n    return M()\n")
    out = tmp_path / "m.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "2", "-o", str(out)],
                       env=ENV, capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr and not out.exists(), r.stderr
    return r.stderr


def test_cli_refusals_exit_2_in_one_line(tmp_path):
    assert "whole rows" in cli(tmp_path, FINITE_WHOLE_ROW)
    # (integer weights: the int64 counts without weights run, capture_bincount.bincount_as_one_hot)
    assert "bincount" in cli(tmp_path, "lambda x: torch.bincount(x.argmax(-1).flatten(), "
                                       "weights=x.argmax(-1).flatten(), minlength=8) * 2")
    # no minlength: torch's length follows the largest id, a program's is fixed
    assert "minlength=<n>" in cli(tmp_path, "lambda x: torch.bincount(x.argmax(-1).flatten()).float()")


# Python lists in an index: exact copies of torch's picks (half an output step: the output's own grid)
LISTS = {
    "x[[0]]": lambda x: x[[0]],
    "x[0, [-1, 0], 2:5]": lambda x: x[0, [-1, 0], 2:5],
    "x[:, [1], None]": lambda x: x[:, [1], None],
    "x[[0, 0], :, [[1], [7]]]": lambda x: x[[0, 0], :, [[1], [7]]],
    "x[..., [True] * 4 + [False] * 4]": lambda x: x[..., [True] * 4 + [False] * 4],
    "x[:, [0, 2]][:, [1, 1, 0]]": lambda x: x[:, [0, 2]][:, [1, 1, 0]],
}


@pytest.mark.parametrize("name", sorted(LISTS))
def test_list_indices(name, tmp_path):
    model = Call(LISTS[name]).eval()
    res, calibration = compiled(model)
    assert worst_steps(model, res, calibration[:2], tmp_path) <= 0.5 + 1e-3


def test_a_list_index_out_of_range_is_the_models_error_in_one_line():
    with pytest.raises(CaptureError) as e:
        compiled(Call(lambda x: x[:, [0, 5]]).eval())
    assert "\n" not in str(e.value) and "getitem (operator.getitem): index 5 is out of range" in str(e.value)


# isin: float equality as torch's, exactly (0 output steps)
ISIN = {
    "test_elements= kw, duplicates and NaN": lambda x: torch.isin(x.round(), test_elements=torch.tensor(
        [1.0, 1.0, float("nan"), -2.0])).float(),
    "invert=True": lambda x: torch.isin(x.round(), torch.tensor([0.0]), invert=True).float(),
    "a number": lambda x: torch.isin(x.floor(), -1.0).float(),
    "assume_unique": lambda x: torch.isin(x.argmax(1), torch.tensor([1, 3]), assume_unique=True).float(),
}


@pytest.mark.parametrize("name", sorted(ISIN))
def test_isin_spellings(name, tmp_path):
    model = Call(ISIN[name]).eval()
    res, calibration = compiled(model)
    assert worst_steps(model, res, calibration[:4], tmp_path) == 0.0


def test_round_compared_with_a_whole_number_is_exact(tmp_path):
    """x.round() == 1.0 held for no input on the round's own 6/255 grid,
    where 1.0 is no code: a whole-valued function read by a comparison now
    gets a grid that holds every whole number."""
    model = Call(lambda x: ((x.round() == 1.0) | (x.ceil() != 2.0)).float()).eval()
    res, calibration = compiled(model)
    assert worst_steps(model, res, calibration[:4], tmp_path) == 0.0


def test_bool_where_with_a_python_bool(tmp_path):
    model = Call(lambda x: torch.where(x > 0, x > 1, True).float() + torch.where(x < 0, False, x > 2).float()).eval()
    res, calibration = compiled(model)
    assert worst_steps(model, res, calibration[:4], tmp_path) <= 0.5 + 1e-3


SPLITS_AND_SELECTS = {
    "torch.split_with_sizes(split_sizes=, dim=)": lambda x: torch.split_with_sizes(x, split_sizes=[1, 3], dim=1)[0],
    "x.split_with_sizes(.., -1)[1]": lambda x: x.split_with_sizes([2, 6], -1)[1],
    "index_select(-1, argsort(descending))": lambda x: x.index_select(-1, x[0, 1].argsort(descending=True)),
    "index_select(1, argsort) of 4-D": lambda x: x.reshape(2, 4, 2, 2).index_select(1, x[0, :, 0].argsort()),
}


@pytest.mark.parametrize("name", sorted(SPLITS_AND_SELECTS))
def test_splits_and_computed_selects(name, tmp_path):
    model = Call(SPLITS_AND_SELECTS[name]).eval()
    res, calibration = compiled(model)
    assert worst_steps(model, res, calibration[:4], tmp_path) <= 0.5 + 1e-3


class CausalSelfAttention(nn.Module):
    """A small causal self-attention block: two heads, the -inf mask a
    sliced buffer."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.qkv, self.proj = nn.Linear(8, 24), nn.Linear(8, 8)
        self.register_buffer("mask", torch.triu(torch.ones(8, 8, dtype=torch.bool), 1))

    def forward(self, x):                                   # [1, 4, 8]
        qkv = self.qkv(x)
        q, k, v = [qkv[..., i * 8:(i + 1) * 8].reshape(1, 4, 2, 4).transpose(1, 2) for i in range(3)]
        att = (q @ k.transpose(-2, -1)) * 0.5
        att = att.masked_fill(self.mask[:4, :4], float("-inf")).softmax(-1)
        return self.proj((att @ v).transpose(1, 2).reshape(1, 4, 8)) + x


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m33"])
def test_causal_self_attention(target, tmp_path):
    model = CausalSelfAttention().eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration,
                        target="cortex-m55" if target == "host" else target)
    assert not res.lowered.fallbacks and "masked_softmax" in [n.op for n in res.graph.nodes]
    if target == "host":
        assert worst_steps(model, res, calibration[:4], tmp_path) <= 1.5
    else:
        board_matches_reference(res.data, inputs(S3, -3.0, 3.0, 1, seed=5)[0][0].numpy(), target, tmp_path)
