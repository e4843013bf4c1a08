"""int8 LayerNorm (issue 15, item 4, `--int8-layernorm`): nn.LayerNorm in
integers only through ptec's own `ptec::quantized_layer_norm` (upstream has
no int8 layer norm, so the default stays fp32). Checks: the integer
algorithm (docs/kernels.md) is within one output step of float layer norm;
transformer layers compiled with it have no fp32 layer norm left, run on the
C runtime and on the M55 and M33 with the numpy reference's bytes, and stay
as close to PyTorch float as with the fp32 layer norm."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.reference import cortex_m as ref
from test_transformer import CASES, _calib


def _params(gamma, beta, s_y):
    pairs = [ref.quantize_multiplier(g / (s_y * 65536.0)) for g in gamma]
    return (np.array([p[0] for p in pairs], np.int32), np.array([p[1] for p in pairs], np.int32),
            np.round(beta / s_y).astype(np.int32))


@pytest.mark.parametrize("n", [1, 2, 7, 64, 257])
def test_integer_algorithm_is_within_a_step_of_float(n):
    """The oracle is float64 layer norm of the dequantized rows."""
    rng = np.random.default_rng(n)
    s_x, z_x, s_y, z_y, eps = 0.037, -5, 0.021, 3, 1e-5
    x = rng.integers(-128, 128, size=(40, n)).astype(np.int8)
    x[0] = 12                                        # a constant row: variance 0
    x[1, ::2], x[1, 1::2] = -128, 127                # extremes
    gamma, beta = rng.uniform(-1.5, 1.5, n), rng.uniform(-0.5, 0.5, n)
    mults, shifts, bias = _params(gamma, beta, s_y)
    eps_term = round(n * n * eps / s_x ** 2)
    got = ref.quantized_layer_norm(x, n, z_x, eps_term, mults, shifts, bias, z_y, -128, 127).astype(np.int64)
    real = (x.astype(np.float64) - z_x) * s_x
    norm = (real - real.mean(1, keepdims=True)) / np.sqrt(real.var(1, keepdims=True) + eps)
    want = np.clip(np.round((norm * gamma + beta) / s_y) + z_y, -128, 127)
    assert np.abs(got - want).max() <= 1


def _compile(model, calib, **kw):
    return compile_model(model, [calib[0][0]], calib, int8_layernorm=True, **kw)


@pytest.mark.parametrize("case", ["post_norm_relu", "pre_norm_gelu", "encoder_2_layers"])
def test_transformers_run_int8_norms_on_the_host(case, tmp_path):
    torch.manual_seed(0)
    model = CASES[case]().eval()
    calib = _calib()
    res = _compile(model, calib)
    assert "aten::native_layer_norm.out" not in res.lowered.operators
    assert "ptec::quantized_layer_norm.out" in res.lowered.operators
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    fp32_norms = compile_model(model, [calib[0][0]], calib)
    worst = {True: 0.0, False: 0.0}
    for (x,) in calib[8:14]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            f = model(x).numpy()
        worst[True] = max(worst[True], float(np.abs(got - f).max() / step))
        base = run_program(fp32_norms.program, [x.numpy()])[0]
        worst[False] = max(worst[False], float(np.abs(base - f).max() / step))
    print(f"{case}: worst |ptec - float| {worst[True]:.2f} steps (fp32 norms {worst[False]:.2f})")
    assert worst[True] <= max(4.0, 1.5 * worst[False]), worst


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_int8_norms_on_the_boards(target, tmp_path):
    torch.manual_seed(0)
    model = CASES["pre_norm_gelu"]().eval()
    calib = _calib()
    board_matches_reference(_compile(model, calib, target=target).data, calib[7][0].numpy(), target, tmp_path)


def test_default_keeps_upstreams_fp32_norm_and_says_why():
    torch.manual_seed(0)
    model = CASES["post_norm_relu"]().eval()
    calib = _calib()
    res = compile_model(model, [calib[0][0]], calib)
    assert "ptec::quantized_layer_norm.out" not in res.lowered.operators
    assert any("--int8-layernorm" in r for r in res.lowered.refusals), res.lowered.refusals


def test_cli_flag(tmp_path):
    src = tmp_path / "norm_model.py"
    src.write_text("import torch, torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    def __init__(self):\n"
                   "        super().__init__(); self.a = nn.Linear(8, 16); self.n = nn.LayerNorm(16)\n"
                   "    def forward(self, x):\n"
                   "        return self.n(self.a(x))\n"
                   "def get_model():\n"
                   "    return M().eval(), [torch.randn(1, 4, 8)]\n")
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:get_model", "--int8-layernorm",
                        "-o", str(tmp_path / "m.pte")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    assert r.returncode == 0, r.stderr
    assert "ptec::quantized_layer_norm.out" in r.stdout + r.stderr
