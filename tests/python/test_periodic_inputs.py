"""sin / cos of an angle spanning many periods, made from a program input
(ptec.periodic_inputs; probe: a timestep embedding of an int64 t in
[0, 1000] was 36 output steps off, the product's int8 grid far coarser than
the period).

Oracle: torch. Each model's outputs vary between inputs and are within the
stated output steps of torch's float result on the host runtime (which
is within one output step of the reference interpreter); the same model compiled with
the int8 angle (the criterion's limit out of reach) is shown far off, so
the test bites. The function runs on aten::sin.out / cos.out (their
accuracy on any float32 angle: test_float_unary_math.py); a runtime
without them keeps the int8 table and warns. An angle an int8 grid holds well keeps the int8
table; --int8-io with a float input warns."""
import math

import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import Call
from ptec import host_runtime, periodic_inputs
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


class Timestep(nn.Module):
    """A diffusion model's sinusoidal timestep embedding; mlp: its time MLP after it."""

    def __init__(self, dim=16, mlp=False, float_input=False):
        super().__init__()
        half = dim // 2
        self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / half))
        self.float_input = float_input
        torch.manual_seed(0)
        self.mlp = nn.Sequential(nn.Linear(dim, 32), nn.SiLU(), nn.Linear(32, 8)) if mlp else None

    def forward(self, t):
        emb = (t[:, None] if self.float_input else t[:, None].float()) * self.freqs[None]
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], -1)
        return self.mlp(emb) if self.mlp is not None else emb


class Shifted(nn.Module):
    """Steps between the integer and the angle: (t * 0.5 + 3), reshaped, times frequencies, sin only."""

    def forward(self, t):
        return torch.sin((t.float() * 0.5 + 3.0).reshape(-1, 1) * torch.tensor([[1.0, 0.3, 0.07, 0.011]]))


class Fourier(nn.Module):
    """NeRF's positional encoding of a float input in [-1, 1]: sin / cos of 2^k pi x, k < 10."""

    def forward(self, x):
        angles = (x[..., None] * (math.pi * 2.0 ** torch.arange(10.0))).flatten(-2)
        return torch.cat([angles.sin(), angles.cos()], -1)


class Negated(nn.Module):
    """A neg in the chain: cos(-x), sin(x.neg() * 3)."""

    def forward(self, x):
        return torch.cat([torch.cos(-x), torch.sin(x.neg() * 3.0)], -1)


class Gaussian(nn.Module):
    """Gaussian Fourier features (Tancik et al. 2020): (2 pi x) @ B.T, B ~ N(0, 10^2),
    a constant matmul (or nn.Linear without bias) in the chain."""

    def __init__(self, linear=False):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.register_buffer("B", torch.randn(16, 2, generator=g) * 10.0)
        self.linear = nn.Linear(2, 16, bias=False) if linear else None
        if linear:
            self.linear.weight.data.copy_(self.B)

    def forward(self, x):
        proj = self.linear(2 * math.pi * x) if self.linear is not None else (2 * math.pi * x) @ self.B.T
        return torch.cat([torch.sin(proj), torch.cos(proj)], -1)


class Small(nn.Module):
    def forward(self, x):
        return torch.cat([torch.sin(x * 1.0), torch.cos(x)], -1)


def _ints(n, size, seed, hi=1000):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randint(0, hi + 1, (size,), generator=g),) for _ in range(n)]


def _floats(n, shape, lo, hi, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * (hi - lo) + lo,) for _ in range(n)]


CASES = {   # name: (model, calibration, feeds, bound in output steps)
    "timestep embedding, int64 t": (lambda: Timestep(), lambda: _ints(12, 4, 0), lambda: _ints(6, 4, 1), 0.51),
    "timestep embedding dim 64, int64 t": (lambda: Timestep(64), lambda: _ints(12, 4, 2), lambda: _ints(6, 4, 3),
                                           0.51),
    "timestep embedding then time MLP": (lambda: Timestep(16, mlp=True), lambda: _ints(48, 4, 4),
                                         lambda: _ints(6, 4, 5), 2.0),
    "timestep embedding, float t": (lambda: Timestep(float_input=True), lambda: _floats(12, (4,), 0, 1000, 6),
                                    lambda: _floats(6, (4,), 0, 1000, 7), 0.51),
    "sin((t * 0.5 + 3).reshape(-1, 1) * f)": (Shifted, lambda: _ints(12, 6, 8, 2000), lambda: _ints(6, 6, 9, 2000),
                                               0.51),
    "cos(-x), sin(x.neg() * 3)": (Negated, lambda: _floats(12, (1, 64), 0, 1000, 15),
                                   lambda: _floats(6, (1, 64), 0, 1000, 16), 0.51),
    "Gaussian Fourier features, matmul": (Gaussian, lambda: _floats(12, (32, 2), 0, 1, 17),
                                          lambda: _floats(6, (32, 2), 0, 1, 18), 0.51),
    "Gaussian Fourier features, nn.Linear": (lambda: Gaussian(linear=True), lambda: _floats(12, (32, 2), 0, 1, 17),
                                             lambda: _floats(6, (32, 2), 0, 1, 18), 0.51),
    "NeRF positional encoding": (Fourier, lambda: _floats(12, (5, 3), -1, 1, 10), lambda: _floats(6, (5, 3), -1, 1, 11),
                                 0.51),
}


def _worst(model, res, feeds, tmp_path):
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, wants = 0.0, set()
    for feed in feeds:
        arrays = [t.numpy() for t in feed]
        got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))[0]
        # the reference interpreter's sin / cos are numpy's, within 2 ulps of the C library's
        # (test_float_unary_math): a value on a rounding edge may quantize one step apart
        assert np.abs(got - run_program(prog, arrays)[0]).max() <= step * 1.001
        with torch.no_grad():
            want = model(*feed).numpy()
        wants.add(want.tobytes())
        worst = max(worst, float(np.abs(got - want).max() / step))
    assert len(wants) == len(feeds), "outputs do not vary"
    return worst


@pytest.mark.parametrize("name", sorted(CASES))
def test_periodic_chain_in_fp32(name, tmp_path, monkeypatch):
    make, calibration, feeds, bound = CASES[name]
    model, calibration, feeds = make().eval(), calibration(), feeds()
    lines = []
    res = compile_model(model, list(calibration[0]), calibration, log=lines.append)
    noted = [s for s in lines if "periods (calibration)" in s and "runs in fp32" in s]
    assert noted, lines
    worst = _worst(model, res, feeds, tmp_path)
    monkeypatch.setattr(periodic_inputs, "LIMIT", float("inf"))       # the int8 angle, as before
    before = _worst(model, compile_model(model, list(calibration[0]), calibration), feeds, tmp_path)
    print(f"{name}: {worst:.2f} output steps (int8 angle: {before:.1f})")
    assert worst <= bound
    assert before > 10 * bound


def test_small_angle_keeps_its_int8_table(tmp_path):
    """sin / cos of x in [-3, 3] (less than a period): an int8 grid holds it,
    no fp32 chain; within 2 output steps (measured 1.4)."""
    model = Small().eval()
    calibration = _floats(12, (4, 6), -3, 3, 12)
    lines = []
    res = compile_model(model, list(calibration[0]), calibration, log=lines.append)
    assert not any("periods" in s for s in lines), lines
    assert not res.lowered.fallbacks
    assert _worst(model, res, _floats(6, (4, 6), -3, 3, 13), tmp_path) <= 2.0


def test_int8_io_warns():
    """--int8-io: a float input arrives on its int8 grid; the log warns with the steps."""
    model = Timestep(float_input=True).eval()
    calibration = _floats(8, (4,), 0, 1000, 14)
    lines = []
    compile_model(model, list(calibration[0]), calibration, int8_io=True, log=lines.append)
    assert any(s.startswith("warning:") and "periods" in s and "--int8-io" in s for s in lines), lines


def test_angle_off_the_chain_warns():
    """sin(x * x): not a chain of constant steps, so it stays on the int8 grid, and the log warns with the steps."""
    model = Call(lambda x: torch.sin(x * x)).eval()
    calibration = _floats(8, (4, 8), 0, 30, 19)
    lines = []
    compile_model(model, list(calibration[0]), calibration, log=lines.append)
    assert any(s.startswith("warning:") and "periods" in s and "stays on the int8 grid" in s for s in lines), lines


@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_the_function_runs_on_its_own_kernel(fn, tmp_path):
    """The fp32 chain ends in aten::sin.out / cos.out (no remainder-and-series
    construction), and a runtime lacking that kernel keeps the int8 table,
    with a warning naming it."""
    from ptec.compiler import runtime_kernels
    model = Call(lambda x: getattr(torch, fn)(x * 3.0)).eval()
    calibration = _floats(8, (4, 8), 0, 1000, 20)
    res = compile_model(model, list(calibration[0]), calibration)
    assert f"aten::{fn}.out" in res.lowered.operators
    assert "aten::remainder.Tensor_out" not in res.lowered.operators
    assert _worst(model, res, _floats(4, (4, 8), 0, 1000, 21), tmp_path) <= 0.51
    lines = []
    kernels = [k for k in runtime_kernels() if k != f"aten::{fn}.out"]
    res = compile_model(model, list(calibration[0]), calibration, available_kernels=kernels, log=lines.append)
    assert [s for s in lines if s.startswith("warning:") and f"aten::{fn}.out" in s], lines
    assert not [n for n in res.graph.nodes if n.attrs.get("fp32")]
