"""A float input spanning decades (a power spectrum) compressed by a log /
dB / root before the first layer runs that chain in fp32 on the float input
(ptec.input_compression): torch float is the oracle, bounds in output
steps. Before it, the input's linear int8 grid zeroed the small powers:
107-214 output steps off, with no compile note."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


def powers(n, seed, shape=(1, 8, 10)):
    """Power spectra: rand**4 (values down to ~1e-8 of the max) times a peak
    from 1e-3 to 10 that changes from sample to sample."""
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(*shape, generator=g) ** 4 * 10.0 ** (i % 5 - 3) for i in range(n)]


class Fn(nn.Module):
    def __init__(self, fn, conv=None, fb=None, mel=False):
        super().__init__()
        torch.manual_seed(0)
        self.fn, self.conv = fn, conv
        if fb is not None:
            self.register_buffer("fb", torch.rand(*fb))
        if mel:         # a filterbank as nn.Linear(8, 5, bias=False) of non-negative weights
            self.mel = nn.Linear(8, 5, bias=False)
            with torch.no_grad():
                self.mel.weight.uniform_(0.0, 1.0)

    def forward(self, p):
        y = self.fn(self, p)
        return y if self.conv is None else self.conv(y)


def conv1d(c=8):
    torch.manual_seed(0)
    return nn.Conv1d(c, 4, 3)


def conv2d():
    torch.manual_seed(0)
    return nn.Conv2d(1, 4, 3)


# name -> (model, input shape, bound in output steps). Measured worst, int8 input -> fp32 chain:
# clamp_log 199 -> 0.01, db 199 -> 0.01, db_conv1d 159 -> 1.19, db_conv2d 123 -> 0.89,
# db_mel_linear 123 -> 1.09, log1p 39 -> 0.00, log2 178 -> 0.13, log_conv1d 112 -> 1.02,
# log_mel_matmul 140 -> 1.21, db_nn_linear 116 -> 1.10, pow_0.3 39 -> 0.00, sqrt_conv1d 5.9 -> 0.93
MODELS = {
    "db": (lambda: Fn(lambda m, p: 10 * torch.log10(torch.clamp(p, min=1e-10))), (1, 8, 10), 1.0),
    "db_conv1d": (lambda: Fn(lambda m, p: 10 * torch.log10(p + 1e-10), conv1d()), (1, 8, 10), 2.0),
    "log_conv1d": (lambda: Fn(lambda m, p: torch.log(p + 1e-6), conv1d()), (1, 8, 10), 2.0),
    "db_conv2d": (lambda: Fn(lambda m, p: 10 * torch.log10(p + 1e-10), conv2d()), (1, 1, 8, 10), 2.0),
    "log1p": (lambda: Fn(lambda m, p: torch.log1p(p * 100)), (1, 8, 10), 1.0),
    "clamp_log": (lambda: Fn(lambda m, p: p.clamp(min=1e-10).log()), (1, 8, 10), 1.0),
    "log2": (lambda: Fn(lambda m, p: torch.log2(p + 1e-8)), (1, 8, 10), 1.0),
    "sqrt_conv1d": (lambda: Fn(lambda m, p: torch.sqrt(p), conv1d()), (1, 8, 10), 2.0),
    "pow_0.3": (lambda: Fn(lambda m, p: (p + 1e-9) ** 0.3), (1, 8, 10), 1.0),
    # log-mel: the filterbank (a constant matmul) between the input and the log
    "log_mel_matmul": (lambda: Fn(lambda m, p: torch.log(m.fb @ p + 1e-6), conv1d(5), fb=(5, 8)), (1, 8, 10), 2.0),
    "db_mel_linear": (lambda: Fn(lambda m, p: 10 * torch.log10(
        (p.transpose(1, 2) @ m.fb).clamp(min=1e-10)).transpose(1, 2), conv1d(5), fb=(8, 5)), (1, 8, 10), 2.0),
    "db_nn_linear": (lambda: Fn(lambda m, p: 10 * torch.log10(m.mel(p.transpose(1, 2)) + 1e-10).transpose(1, 2),
                                conv1d(5), mel=True), (1, 8, 10), 2.0),
}

# the compression's own float32 kernel
KERNELS = {"log": "aten::log.out", "log2": "aten::log2.out", "log10": "aten::log10.out", "log1p": "aten::log1p.out",
           "sqrt": "aten::sqrt.out", "pow": "aten::pow.Tensor_Tensor_out"}


def _worst(model, res, tests, tmp_path):
    prog = parse_program(res.data)
    step, zp = res.graph.node(res.graph.outputs[0]).qparams
    worst, wants = 0.0, []
    for x in tests:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        # the reference interpreter's log is numpy's, within 2 ulps of the C library's (test_float_unary_math):
        # a value on a rounding edge may quantize one step apart
        assert np.abs(got - run_program(prog, [x.numpy()])[0]).max() <= step * 1.001
        with torch.no_grad():
            want = model(x).numpy()
        # a conv's output past its calibrated range saturates there (int8 by design)
        want = np.clip(want, (-128 - zp) * step, (127 - zp) * step)
        worst = max(worst, float(np.abs(got - want).max()) / step)
        wants.append(want)
    spread = (np.max(wants) - np.min(wants)) / step
    return worst, spread


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_compressed_power_input_runs_in_fp32_within_its_bound(name, tmp_path):
    make, shape, bound = MODELS[name]
    model = make().eval()
    calibration = [(x,) for x in powers(20, 1, shape)]
    lines = []
    res = compile_model(model, [calibration[0][0]], calibration, log=lines.append)
    notes = [s for s in lines if "runs in fp32 on the float input" in s]
    assert len(notes) == 1, lines
    assert "decades (calibration)" in notes[0] and "output steps off" in notes[0]
    fn = notes[0].split(": this ")[1].split()[0]
    assert KERNELS[fn] in res.lowered.operators, res.lowered.operators
    worst, spread = _worst(model, res, powers(10, 2, shape), tmp_path)
    print(f"{name}: worst {worst:.2f} output steps over outputs spanning {spread:.0f}; {notes[0]}")
    assert spread >= 64
    assert worst <= bound, f"{name}: {worst:.2f} output steps from float (bound {bound})"


def test_the_db_probe_gives_torchs_small_powers():
    """The probe's value: a power of 2.5e-7 is -66 dB, not the -23.9 dB of
    the first int8 step above 0."""
    model = MODELS["db"][0]().eval()
    calibration = [(torch.rand(1, 8, 10, generator=torch.Generator().manual_seed(i)) ** 4,) for i in range(12)]
    res = compile_model(model, [calibration[0][0]], calibration)
    x = calibration[0][0].clone()
    x[0, 0, 0] = 2.5e-7
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()])[0]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert abs(got[0, 0, 0] - (-66.02)) <= step, got[0, 0, 0]


def test_an_input_a_linear_grid_holds_keeps_the_int8_table(tmp_path):
    """A log of values in [0.5, 4] loses under two output steps on the
    input's grid: no fp32, no note, upstream-compatible kernels."""
    model = Fn(lambda m, p: torch.log(p), conv1d()).eval()
    g = torch.Generator().manual_seed(3)
    calibration = [(torch.rand(1, 8, 10, generator=g) * 3.5 + 0.5,) for _ in range(12)]
    lines = []
    res = compile_model(model, [calibration[0][0]], calibration, log=lines.append)
    assert not res.lowered.fallbacks
    assert not [s for s in lines if "float input" in s]
    assert not [n for n in res.graph.nodes if n.attrs.get("fp32")]


def test_a_steep_function_of_a_narrow_input_keeps_the_int8_table():
    """1 / x on [0.2, 3] (1.2 decades) loses 4.5 output steps on the int8
    input grid, the rounding of a steep function: DECADES keeps it int8."""
    model = Fn(lambda m, p: torch.reciprocal(p)).eval()
    g = torch.Generator().manual_seed(4)
    calibration = [(torch.rand(1, 8, 10, generator=g) * 2.8 + 0.2,) for _ in range(12)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks


def test_int8_io_warns_and_keeps_the_int8_input():
    """--int8-io: the input arrives on its int8 grid; nothing runs before
    it, the log warns with the measured steps."""
    model = MODELS["log_conv1d"][0]().eval()
    calibration = [(x,) for x in powers(20, 1)]
    lines = []
    res = compile_model(model, [calibration[0][0]], calibration, int8_io=True, log=lines.append)
    warned = [s for s in lines if s.startswith("warning:") and "int8 program input" in s]
    assert len(warned) == 1, lines
    assert "compile without --int8-io" in warned[0]
    assert not [n for n in res.graph.nodes if n.attrs.get("fp32")]
    assert res.lowered.inputs[0].dtype == "int8"


def test_the_compression_not_reading_an_input_is_untouched():
    """A log after a tanh of a conv (not a chain from the input) keeps its
    table. (A log of the conv's |y| itself is a chain from the input:
    test_filterbank_log_chains.)"""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = conv1d()

        def forward(self, p):
            return torch.log(torch.tanh(self.c(p)).abs() + 1e-3)
    calibration = [(x,) for x in powers(12, 1)]
    lines = []
    res = compile_model(M().eval(), [calibration[0][0]], calibration, log=lines.append)
    assert not [s for s in lines if "float input" in s]
    assert not [n for n in res.graph.nodes if n.attrs.get("fp32")]


def test_a_zero_power_is_torchs_minus_infinity():
    """A run's exact 0: aten::log.out's -inf, torch's value (the log is the
    program's float output; read by an int8 layer, the quantize saturates it
    at the grid's lowest value, as the int8 table gives it). Before, the
    atanh series on the smallest normal float32 gave -87.3."""
    model = Fn(lambda m, p: torch.log(p)).eval()
    calibration = [(x + 1e-9,) for x in powers(20, 1)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert "aten::log.out" in res.lowered.operators
    x = calibration[0][0].clone()
    x[0, 0, :2] = 0.0
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()])[0]
    assert np.array_equal(got[0, 0, :2], torch.log(x[0, 0, :2]).numpy()), got[0, 0, :2]
    assert np.isfinite(got[0, 0, 2:]).all()


def test_a_runtime_without_the_log_kernel_keeps_the_int8_table_and_warns():
    """available_kernels without aten::log.out (a runtime built with fewer
    kernels): the log stays on its int8 table, with a warning."""
    from ptec.compiler import runtime_kernels
    model = MODELS["log_conv1d"][0]().eval()
    calibration = [(x,) for x in powers(20, 1)]
    kernels = [k for k in runtime_kernels() if k != "aten::log.out"]
    lines = []
    res = compile_model(model, [calibration[0][0]], calibration, available_kernels=kernels, log=lines.append)
    assert [s for s in lines if s.startswith("warning:") and "aten::log.out" in s], lines
    assert not [n for n in res.graph.nodes if n.attrs.get("fp32")]
    assert "aten::log.out" not in res.lowered.operators
