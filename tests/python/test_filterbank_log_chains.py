"""A log, dB or root of |y| or relu(y), y a layer by constant weights of the
float input (a learnable filterbank: a bias-free Conv1d, nn.Linear, a
matmul by a constant) or the input itself, and a log power y ** 2 of an
nn.Linear filterbank (after Tensor.unfold framing or not): the chain runs in
fp32 from the float input (ptec.input_compression: abs is a lead step, the
layer may be a Linear or a constant matmul, a conv may carry its fused relu).
Before, |y| and y ** 2 were quantized on their linear int8 grid, which reads
every magnitude below half a step as 0, and the log spread those over most
of its output range: 24-148 output steps off, silently (issue 15). Torch
float is the oracle; bounds in output steps, on feeds the calibration did
not see."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

NOTE = "runs in fp32 on the float input"


def audio(n, seed, shape=(1, 1, 1024)):
    """Tones with noise and a stretch 40 dB quieter (a pause): the filterbank's
    outputs span decades, and many read as 0 on their int8 grid."""
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, 1024)
    quiet = torch.where((t > 0.3) & (t < 0.7), torch.tensor(1.0), torch.tensor(0.01))
    return [((torch.sin(2 * 3.14159 * (3 + 5 * torch.rand(1, generator=g)) * 30 * t + i)
              + 0.1 * torch.randn(1024, generator=g)) * quiet).reshape(shape) for i in range(n)]


class Bank(nn.Module):
    """fn(self, x) with a seeded filterbank: fb a bias-free Conv1d(1, 16, 64,
    stride 32), lin a bias-free nn.Linear(64, 16), w a constant [64, 16]
    matrix, win a Hann window; then a Conv1d(16, 4, 3) when conv (an int8
    output whose steps the bound counts in)."""

    def __init__(self, fn, conv=False):
        super().__init__()
        torch.manual_seed(0)
        self.fn = fn
        self.fb = nn.Conv1d(1, 16, 64, 32, bias=False)
        self.lin = nn.Linear(64, 16, bias=False)
        self.register_buffer("w", torch.randn(64, 16) * 0.2)
        self.register_buffer("win", torch.hann_window(64))
        self.out = nn.Conv1d(16, 4, 3, padding=1) if conv else None

    def forward(self, x):
        y = self.fn(self, x)
        return y if self.out is None else self.out(y)


def cmvn(m, x):
    """A front end: log-magnitude of the filterbank, per-utterance mean / std normalisation."""
    e = torch.log(m.fb(x).abs() + 1e-4)
    return (e - e.mean(-1, keepdim=True)) / (e.std(-1, keepdim=True) + 1e-5)


def abs_shared(m, x):
    """y read by the log's chain and by the output too: the chain reads an fp32 copy of the filterbank."""
    y = m.fb(x)
    return torch.cat([torch.log(y.abs() + 1e-4), y], 1)


def power_shared(m, x):
    y = m.lin(x)
    return torch.log(y ** 2 + 1e-6) + y


FRAMES = (1, 16, 64)         # x.reshape: 16 frames of 64 samples for the Linear / matmul filterbanks
ROW = (1, 1024)

# name -> (fn, input shape, conv after, bound in output steps). Measured worst on the feeds, int8 chain -> fp32
# (an fp32 chain's float output is torch's to float32 rounding):
# log_abs 117 -> 0.00, log_relu 117 -> 0.00, log_abs_clamp 138 -> 0.00, db_abs 140 -> 0.00, log1p_abs 36 -> 0.00,
# sqrt_abs 18 -> 0.00, pow_abs 53 -> 0.00, log_abs_input 105 -> 0.00, log_linear_power 149 -> 0.00,
# log_unfold_linear_power 136 -> 0.00, log_matmul_power 160 -> 0.00, log_matmul_abs 136 -> 0.00,
# log_abs_conv 89 -> 1.66, cmvn_conv 68 -> 1.61, log_abs_shared 126 -> 0.64, log_linear_power_shared 140 -> 1.00
MODELS = {
    "log_abs": (lambda m, x: torch.log(m.fb(x).abs() + 1e-4), None, False, 1.0),
    "log_relu": (lambda m, x: torch.log(F.relu(m.fb(x)) + 1e-4), None, False, 1.0),
    "log_abs_clamp": (lambda m, x: torch.log(m.fb(x).abs().clamp(min=1e-5)), None, False, 1.0),
    "db_abs": (lambda m, x: 20 * torch.log10(m.fb(x).abs() + 1e-5), None, False, 1.0),
    "log1p_abs": (lambda m, x: torch.log1p(100 * m.fb(x).abs()), None, False, 1.0),
    "sqrt_abs": (lambda m, x: torch.sqrt(m.fb(x).abs()), None, False, 1.0),
    "pow_abs": (lambda m, x: m.fb(x).abs() ** 0.3, None, False, 1.0),
    "log_abs_input": (lambda m, x: torch.log(x.abs() + 1e-4), None, False, 1.0),
    "log_linear_power": (lambda m, x: torch.log(m.lin(x) ** 2 + 1e-6), FRAMES, False, 1.0),
    "log_unfold_linear_power": (lambda m, x: torch.log(m.lin(x.unfold(-1, 64, 32) * m.win) ** 2 + 1e-6),
                                ROW, False, 1.0),
    "log_matmul_power": (lambda m, x: torch.log((x @ m.w) ** 2 + 1e-6), FRAMES, False, 1.0),
    "log_matmul_abs": (lambda m, x: torch.log((x @ m.w).abs() + 1e-4), FRAMES, False, 1.0),
    "log_abs_conv": (lambda m, x: torch.log(m.fb(x).abs() + 1e-4), None, True, 2.0),
    "cmvn_conv": (cmvn, None, True, 2.0),
    "log_abs_shared": (abs_shared, None, False, 1.5),
    "log_linear_power_shared": (power_shared, FRAMES, False, 1.5),
}


def _worst(model, res, feeds):
    """The worst |ptec - torch| over feeds in the output's steps (torch clipped to
    the calibrated range of an int8 output: it saturates there by design; an
    fp32 chain's output is not), and the span of torch's outputs in those steps."""
    prog = parse_program(res.data)
    out = res.graph.node(res.graph.outputs[0])
    step, zp = out.qparams
    lo, hi = (-np.inf, np.inf) if out.attrs.get("fp32") else ((-128 - zp) * step, (127 - zp) * step)
    worst, wants = 0.0, []
    for x in feeds:
        got = host_runtime.run(prog, res.data, [x.numpy()])[0]
        with torch.no_grad():
            want = model(x).numpy()
        wants.append(want)
        want = np.clip(want, lo, hi)
        worst = max(worst, float(np.abs(got - want).max()) / step)
    return worst, (np.max(wants) - np.min(wants)) / step


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_compressed_magnitude_runs_in_fp32_within_its_bound(name):
    fn, shape, conv, bound = MODELS[name]
    model = Bank(fn, conv).eval()
    shape = shape or (1, 1, 1024)
    calibration = [(x,) for x in audio(24, 1, shape)]
    lines = []
    res = compile_model(model, [calibration[0][0]], calibration, log=lines.append)
    notes = [s for s in lines if NOTE in s]
    assert len(notes) == 1, lines
    assert "output steps off on the input's int8 grid" in notes[0]
    worst, spread = _worst(model, res, audio(8, 2, shape))
    print(f"{name}: worst {worst:.2f} output steps over outputs spanning {spread:.0f}; {notes[0]}")
    assert spread >= 64
    assert worst <= bound, f"{name}: {worst:.2f} output steps from float (bound {bound})"


def test_the_note_names_the_abs_and_the_layer():
    """The compile log says what ran in fp32: the filterbank, the abs and the + eps with the log."""
    lines = []
    model = Bank(MODELS["log_abs"][0]).eval()
    calibration = [(x,) for x in audio(12, 1)]
    compile_model(model, [calibration[0][0]], calibration, log=lines.append)
    note = [s for s in lines if NOTE in s][0]
    assert note.startswith("log (torch.log): this log of a float program input"), note
    assert "fb (nn.Conv1d)" in note and "abs" in note and "add (operator.add)" in note, note


def test_a_compressed_magnitude_of_a_computed_value_keeps_the_int8_table():
    """|tanh(y)|: the tanh is not a step of a chain from the input, so the log
    keeps its int8 table (no fp32 conv of a nonlinear value)."""
    model = Bank(lambda m, x: torch.log(torch.tanh(m.fb(x)).abs() + 1e-4)).eval()
    calibration = [(x,) for x in audio(12, 1)]
    lines = []
    res = compile_model(model, [calibration[0][0]], calibration, log=lines.append)
    assert not [s for s in lines if NOTE in s]
    assert not [n for n in res.graph.nodes if n.attrs.get("fp32")]


def test_a_log_of_a_magnitude_its_grid_holds_keeps_the_int8_table():
    """log(|y| + 16) over a loud signal: the int8 grid loses under LIMIT
    output steps, so no fp32 and upstream-compatible kernels."""
    model = Bank(lambda m, x: torch.log(m.fb(x).abs() + 16.0)).eval()
    g = torch.Generator().manual_seed(5)
    calibration = [(torch.randn(1, 1, 1024, generator=g),) for _ in range(12)]
    lines = []
    res = compile_model(model, [calibration[0][0]], calibration, log=lines.append)
    assert not [s for s in lines if NOTE in s], lines
    assert not res.lowered.fallbacks, res.lowered.fallbacks
