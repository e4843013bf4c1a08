"""Inputs, outputs and argument forms ordinary models use (probe items 9,
10, R3, R5-R9): each is compiled, run on the host (ptec-run) and compared
with torch on inputs that make the outputs vary; integer and bool results
exactly, float ones within a bound in output steps.

- integer and bool model inputs in their own dtype (capture_input_dtypes):
  a uint8 image `img.float() / 255`, int8 / int16 / int32 samples, a bool
  mask; the program's input has the example's dtype, calibration samples
  must have it too, the CLI's random calibration follows it; a float16
  example is a Half input (test_half_inputs);
- x.device / x.dtype / x.is_cuda given to constructors (capture_tracer);
- dict, nested and non-tensor outputs (capture_outputs): flattened depth
  first, dicts in insertion order, None and numbers dropped with a note;
- out= into a tensor made in forward (capture_out_arguments);
- torch.where(c, int, int) and reductions' dtype= of bool values
  (capture_dtype_forms);
- F.embedding of ids computed in the program, of any rank, and F.one_hot of
  ids the program takes (an out-of-range id fails the run)."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import Call
from ptec import host_runtime
from ptec.calibration import CalibrationError
from ptec.capture import CaptureError
from ptec.compiler import compile_model
from ptec.pte import parse_program

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _tensors(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, dict):
        v = list(v.values())
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _tensors(x)]
    return []


def check(model, samples, tmp_path, bound=1.5, feeds=None, **kw):
    """Compile on samples (tuples of inputs), run feeds (default: the samples)
    on the host and compare each output with torch's: integer / bool ones
    exactly (and of torch's dtype), float ones within `bound` output steps
    (int8 outputs) or bound / 256 of the output's range (fp32 ones). Returns
    the compile result and the worst float error in steps."""
    model = model.eval()
    res = compile_model(model, list(samples[0]), samples, **kw)
    prog = parse_program(res.data)
    worst = 0.0
    for inputs in feeds or samples:
        with torch.no_grad():
            want = _tensors(model(*[t.clone() for t in inputs]))
        got = host_runtime.run(prog, res.data, [t.numpy() for t in inputs], workdir=str(tmp_path))
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            g = np.asarray(g)
            assert g.shape == tuple(w.shape), (k, g.shape, w.shape)
            if not w.dtype.is_floating_point:
                assert g.dtype == w.numpy().dtype, (k, g.dtype, w.dtype)
                assert np.array_equal(g, w.numpy()), (k, g, w)
                continue
            qp = res.graph.node(res.graph.outputs[k]).qparams
            step = qp[0] if qp and res.lowered.outputs[k].dtype == "float32" and not res.lowered.fallbacks \
                else max(float(w.abs().max()), 1e-6) / 128
            worst = max(worst, float(np.abs(g.astype(np.float64) - w.double().numpy()).max() / step))
    assert worst <= bound + 1e-3, f"{worst:.2f} output steps from torch (bound {bound})"
    return res, worst


def _ints(dtype, lo, hi, shape, n=6):
    return [(torch.randint(lo, hi, shape, generator=torch.Generator().manual_seed(i)).to(dtype),)
            for i in range(n)]


class Image(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, img):
        return self.conv(img.float() / 255.0 - 0.5)


# --- integer and bool inputs -------------------------------------------------

@pytest.mark.parametrize("dtype,lo,hi", [(torch.uint8, 0, 256), (torch.int8, -128, 128),
                                         (torch.int16, -300, 300), (torch.int32, -300, 300)])
def test_integer_image_input_runs_in_its_dtype(dtype, lo, hi, tmp_path):
    res, worst = check(Image(), _ints(dtype, lo, hi, (1, 3, 8, 8)), tmp_path, bound=1.5)   # 0.94 .. 1.19
    assert [i.dtype for i in res.lowered.inputs] == [str(dtype).replace("torch.", "")]
    assert not res.lowered.fallbacks


@pytest.mark.parametrize("name,fn", [
    ("img / 255 (torch promotes)", lambda x: x / 255),
    ("img + 1 wraps as uint8", lambda x: x + 1),
    ("img returned", lambda x: x * 1),
    ("img.float()", lambda x: x.float()),
])
def test_uint8_input_calls(name, fn, tmp_path):
    samples = _ints(torch.uint8, 0, 256, (1, 16))
    samples[0][0][0, :2] = torch.tensor([0, 255], dtype=torch.uint8)     # the range's ends, 255 + 1 wraps
    check(Call(fn), samples, tmp_path, bound=1.0)


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(8, 3)

    def forward(self, x, mask):
        return self.fc(x.masked_fill(mask, 0.0)), (~mask).float().sum(-1), mask & (x > 0)


def test_bool_mask_input(tmp_path):
    g = torch.Generator().manual_seed(3)
    samples = [(torch.rand(1, 3, 8, generator=g) * 6 - 3, torch.rand(1, 3, 8, generator=g) > 0.5) for _ in range(6)]
    res, _ = check(Masked(), samples, tmp_path, bound=1.5)         # 0.82
    assert [i.dtype for i in res.lowered.inputs] == ["float32", "bool"]


def test_calibration_must_have_the_examples_dtype():
    good = _ints(torch.uint8, 0, 256, (1, 3, 8, 8))
    with pytest.raises(CalibrationError, match=r"dtype float32, the model wants uint8 \(convert with "
                                               r"\.astype\(numpy\.uint8\)\)"):
        compile_model(Image(), [good[0][0]], [(good[1][0].float(),)])
    mask = torch.ones(1, 3, 8, dtype=torch.bool)
    with pytest.raises(CalibrationError, match=r"input 1: dtype float32, the model wants bool .*numpy\.bool_"):
        compile_model(Masked(), [torch.zeros(1, 3, 8), mask], [(torch.zeros(1, 3, 8), mask.float())])


def test_float16_example_runs(tmp_path):
    """A float16 example was refused; it is a Half program input now (test_half_inputs)."""
    samples = [(torch.linspace(-3, 3, 4).reshape(1, 4).half(),), (torch.linspace(2, -1, 4).reshape(1, 4).half(),)]
    res, _ = check(Call(lambda x: x.float() * 2), samples, tmp_path, bound=1.5)
    assert [i.dtype for i in res.lowered.inputs] == ["float16"]


def test_cli_random_calibration_follows_the_example(tmp_path):
    from ptec.models import _noise_like
    g = torch.Generator().manual_seed(0)
    u8 = _noise_like(torch.zeros(1, 3, 16, 16, dtype=torch.uint8), g)
    assert u8.dtype == torch.uint8 and int(u8.min()) < 8 and int(u8.max()) > 247
    ids = _noise_like(torch.tensor([[0, 3, 29, 7]]), g)
    assert ids.dtype == torch.int64 and 0 <= int(ids.min()) and int(ids.max()) <= 29
    b = _noise_like(torch.zeros(1, 64, dtype=torch.bool), g)
    assert b.dtype == torch.bool and 0 < int(b.sum()) < 64
    assert _noise_like(torch.zeros(2, 3), g).dtype == torch.float32
    h = _noise_like(torch.zeros(1, 64).bfloat16(), g)
    assert h.dtype == torch.bfloat16 and float(h.float().std()) > 0.5        # normal noise, rounded


MODELS = '''
import torch, torch.nn as nn
class E(nn.Module):
    def __init__(s):
        super().__init__(); s.e = nn.Embedding(30, 8); s.fc = nn.Linear(8, 2)
    def forward(s, t):
        return s.fc(s.e(t))
class U8(nn.Module):
    def __init__(s):
        super().__init__(); s.c = nn.Conv2d(3, 4, 3)
    def forward(s, img):
        return s.c(img.float() / 255.0 - 0.5)
def emb():
    torch.manual_seed(0); return E(), torch.randint(0, 30, (1, 6))
def u8():
    torch.manual_seed(0); return U8(), torch.randint(0, 256, (1, 3, 8, 8), dtype=torch.uint8)
def half():
    return nn.Identity(), torch.randn(1, 4).half()
'''


def _cli(tmp_path, factory):
    (tmp_path / "models.py").write_text(MODELS)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), HOME=str(tmp_path))
    return subprocess.run([sys.executable, "-m", "ptec", "compile", f"{tmp_path}/models.py:{factory}", "-o",
                           str(tmp_path / f"{factory}.pte")], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("factory,dtype", [("emb", "int64"), ("u8", "uint8")])
def test_cli_compiles_integer_inputs_without_calibration_data(factory, dtype, tmp_path):
    r = _cli(tmp_path, factory)
    assert r.returncode == 0, r.stderr
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("[ptec] input ") and f": {dtype} [" in ln]
    assert (tmp_path / f"{factory}.pte").exists()


def test_cli_compiles_a_float16_example(tmp_path):
    """Refused until issue 15; the CLI's random calibration is float16 noise."""
    r = _cli(tmp_path, "half")
    assert r.returncode == 0, r.stderr
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("[ptec] input ") and ": float16 [" in ln]
    assert (tmp_path / "half.pte").exists()


# --- x.device / x.dtype in constructors --------------------------------------

DEVICE = {
    "torch.ones(device=, dtype=)": lambda x: x + torch.ones(8, device=x.device, dtype=x.dtype),
    "torch.arange(device=)": lambda x: x * 0.5 + torch.arange(8, device=x.device),
    "torch.tensor(device=)": lambda x: x * torch.tensor(0.5, device=x.device),
    "torch.zeros_like(device=) + x.new_ones": lambda x: x + torch.zeros_like(x, device=x.device) + x.new_ones(8),
    "torch.full(device=)": lambda x: x + torch.full((8,), 2.0, device=x.device),
    "x.is_cuda": lambda x: x * (2.0 if x.is_cuda else 3.0),
}


def _floats(shape, n=6, lo=-3.0, hi=3.0):
    g = torch.Generator().manual_seed(0)
    return [(torch.rand(shape, generator=g) * (hi - lo) + lo,) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(DEVICE))
def test_device_and_dtype_of_the_input(name, tmp_path):
    check(Call(DEVICE[name]), _floats((1, 4, 8)), tmp_path, bound=1.0)     # 0.00 .. 0.50


class InitialState(nn.Module):
    """The LSTM tutorial's zero initial state made on the input's device."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lstm = nn.LSTM(8, 16, 2, batch_first=True)

    def forward(self, x):
        h0 = torch.zeros(2, x.size(0), 16, device=x.device)
        c0 = torch.zeros(2, x.size(0), 16, device=x.device)
        return self.lstm(x, (h0, c0))[0]


def test_lstm_initial_state_on_the_inputs_device(tmp_path):
    check(InitialState(), _floats((1, 5, 8)), tmp_path, bound=1.5)         # 0.85


# --- outputs of any nesting --------------------------------------------------

OUTPUTS = {
    "dict": (lambda x: {"a": x * 2, "b": x.mean(-1)}, 2),
    "nested tuple": (lambda x: (x, (x * 2, [x.sum(-1), x - 1])), 4),
    "(y, None)": (lambda x: (x * 2, None), 1),
    "(y, int, float)": (lambda x: (x * 2, 3, 0.5), 1),
    "dict of tuples": (lambda x: {"p": (x.relu(), x.sigmoid()), "q": None, "r": x.amax(-1)}, 3),
}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_outputs_flattened_in_order(name, tmp_path):
    fn, count = OUTPUTS[name]
    res, _ = check(Call(fn), _floats((1, 4, 8)), tmp_path, bound=3.0)     # 2.85 (a sum of 8)
    assert len(res.lowered.outputs) == count


def test_dropped_outputs_are_noted():
    lines = []
    compile_model(Call(lambda x: {"y": x * 2, "n": None, "k": 3}).eval(), [torch.ones(1, 4)],
                  _floats((1, 4)), log=lines.append)
    noted = [ln for ln in lines if "dropped" in ln]
    assert len(noted) == 1 and "output['n'] (None)" in noted[0] and "output['k'] (int)" in noted[0]


def test_an_output_without_a_tensor_is_refused():
    with pytest.raises(CaptureError, match="forward returns no tensor"):
        compile_model(Call(lambda x: (None, 3)).eval(), [torch.ones(1, 4)], _floats((1, 4)))


# --- out=, where of ints, dtype= ---------------------------------------------

def _out_reused(x):
    o = torch.empty_like(x)
    torch.mul(x, 2, out=o)
    return o + 1


FORMS = {
    "torch.add(out=torch.empty(...))": (lambda x: torch.add(x, 1.0, out=torch.empty(1, 4, 8)), 1.0),
    "torch.mul(out=empty_like) read after": (_out_reused, 1.0),
    "torch.sigmoid(out=x.new_zeros(...))": (lambda x: torch.sigmoid(x, out=x.new_zeros(x.shape)), 1.0),
    "torch.where(c, 1, 0)": (lambda x: torch.where(x > 0, 1, 0), 0.0),
    "torch.where(c, 0, 1)": (lambda x: torch.where(x > 0.5, 0, 1), 0.0),
    "torch.where(c, 3, -2)": (lambda x: torch.where(x < 1, 3, -2), 0.0),
    "torch.where(c, 1.0, x)": (lambda x: torch.where(x > 0, 1.0, x), 1.5),
    "(x > 0).sum(-1, dtype=float32)": (lambda x: (x > 0).sum(-1, dtype=torch.float32), 1.0),
    "(x > 0).sum(-1, dtype=int64)": (lambda x: (x > 0).sum(-1, dtype=torch.int64), 0.0),
    "(x > 0).sum(-1, dtype=int32)": (lambda x: (x > 0).sum(-1, dtype=torch.int32), 0.0),
    "torch.cumsum(b, 2, dtype=float32)": (lambda x: torch.cumsum(x > 0, 2, dtype=torch.float32), 1.0),
    "(x > 0).prod(-1, dtype=float32)": (lambda x: (x > -1).prod(-1, dtype=torch.float32), 1.0),
    "x.sum(1, dtype=float64).float()": (lambda x: x.sum(1, dtype=torch.float64).float(), 1.5),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_argument_forms(name, tmp_path):
    fn, bound = FORMS[name]
    check(Call(fn), _floats((1, 4, 8)), tmp_path, bound=bound)


@pytest.mark.parametrize("name,fn,bound", [
    ("i.sum(-1, dtype=int32)", lambda i: i.sum(-1, dtype=torch.int32), 0.0),
    ("i.mean(-1, dtype=float32)", lambda i: i.mean(-1, dtype=torch.float32), 1.0),
    ("torch.cumsum(i, 1, dtype=float32)", lambda i: torch.cumsum(i, 1, dtype=torch.float32), 1.5),   # 1.10
])
def test_dtype_keyword_of_an_int64_input(name, fn, bound, tmp_path):
    check(Call(fn), _ints(torch.int64, -40, 40, (2, 8)), tmp_path, bound=bound)


# --- computed ids: embedding, one_hot ----------------------------------------

TABLE = torch.arange(6.0).reshape(2, 3) - 2.5


@pytest.mark.parametrize("shape", [(4, 8), (1, 4, 8)])
def test_embedding_of_computed_ids(shape, tmp_path):
    check(Call(lambda x: F.embedding((x > 0).long(), TABLE)), _floats(shape), tmp_path, bound=0.5)


class OneHot(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(20, 3)

    def forward(self, tok):
        return self.fc(F.one_hot(tok, 20).float().mean(1)), F.one_hot(tok, 20)


def test_one_hot_of_input_ids_and_an_id_outside_fails_the_run(tmp_path):
    samples = _ints(torch.int64, 0, 20, (1, 8))
    res, _ = check(OneHot(), samples, tmp_path, bound=1.0)          # 0.44
    bad = samples[0][0].clone()
    bad[0, 3] = 20
    with pytest.raises(host_runtime.RuntimeError_, match="outside the table"):
        host_runtime.run(parse_program(res.data), res.data, [bad.numpy()], workdir=str(tmp_path))
    bad[0, 3] = -1
    with pytest.raises(host_runtime.RuntimeError_, match="outside the table"):
        host_runtime.run(parse_program(res.data), res.data, [bad.numpy()], workdir=str(tmp_path))


def test_calibration_files_of_an_integer_input(tmp_path):
    """--calib folders: .npy of the example's dtype, .bin raw bytes of it."""
    from ptec.calibration import load_directory
    example = [torch.zeros(1, 3, 8, 8, dtype=torch.uint8)]
    x = np.arange(192, dtype=np.uint8).reshape(1, 3, 8, 8)
    np.save(tmp_path / "a.npy", x)
    x.tofile(tmp_path / "b.bin")
    got = load_directory(str(tmp_path), example)
    assert [s[0].dtype for s in got] == [torch.uint8, torch.uint8]
    assert all(np.array_equal(s[0].numpy(), x) for s in got)
    np.save(tmp_path / "c.npy", x.astype(np.float32))
    with pytest.raises(CalibrationError, match=r"c\.npy: dtype float32, the model wants uint8"):
        load_directory(str(tmp_path), example)


class PaddedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x, pad):
        return self.attn(x, x, x, key_padding_mask=pad, need_weights=False)[0]


def test_bool_key_padding_mask_input(tmp_path):
    g = torch.Generator().manual_seed(4)
    pads = [torch.tensor([[False, False, False, True, True]]), torch.tensor([[False, False, False, False, True]]),
            torch.tensor([[False] * 5])]
    samples = [(torch.rand(1, 5, 8, generator=g) * 6 - 3, pads[k % 3]) for k in range(6)]
    res, _ = check(PaddedAttention(), samples, tmp_path, bound=4.0)        # 3.58 (int8 attention)
    assert [i.dtype for i in res.lowered.inputs] == ["float32", "bool"]
