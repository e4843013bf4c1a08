"""Patterns of the lowering map (cortex-m-ops.md §5) beyond conv/linear/pool:
transposed convolution, matmul/bmm, division, minimum/maximum, softmax over
any dim, LUT activations, permute/transpose, constant pad, ceil_mode
max-pool, number operands, reshape corner cases. Each small model is
compiled for both targets; the C runtime (ptec-run) must give the bytes of
the int8 reference interpreter, the result must be close to PyTorch float,
and the program must use the expected cortex_m op, with no fp32 fallback.
Unsupported parameter combinations are refused with the reason."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import ROOT
from plan_check import check_plan
from ptec import host_runtime
from ptec import quant_math as qm
from ptec.compiler import CompileError, compile_model
from ptec.evaluate import cosine
from ptec.interpreter import run_program
from ptec.ops import SIGNATURES, runtime_kernels
from ptec.pte import parse_program

# One core per kernel ISA (ptec.targets.ISA): MVE, DSP (the M7 and M4 get the
# M33's program), scalar.
TARGETS = ["cortex-m55", "cortex-m33", "cortex-m3"]
ALLOWED = {"dim_order_ops::_clone_dim_order.out"}
# Only the int8 kernels: a refusal must not depend on which fp32 kernels exist.
INT8_ONLY = [k for k in runtime_kernels() if k.startswith("cortex_m::")] + sorted(ALLOWED)


def _inputs(shapes, n, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(s, generator=g) * scale for s in shapes) for _ in range(n)]


def _calls(program):
    plan = program.plan()
    for ins in plan.chains[0].instructions:
        call = ins.instr_args
        key = plan.operators[call.op_index].key
        yield key, dict(zip([n for n, _ in SIGNATURES[key]], call.args)), plan


def check(model, shapes, expect, target, cos_min=0.98, n_test=3, scale=1.0, calib=None,
          tests=None):
    """Compile, then for a few fresh inputs: C runtime bytes == reference
    bytes, and cosine(reference, PyTorch float) >= cos_min."""
    torch.manual_seed(0)
    model = model.eval()
    calib = calib or _inputs(shapes, 12, 1, scale)
    res = compile_model(model, list(calib[0]), calib, target=target)
    keys = [op.key for op in res.program.plan().operators]
    for k in expect:
        assert k in keys, (k, keys)
    assert not res.lowered.fallbacks and not res.lowered.refusals
    assert all(k.startswith("cortex_m::") or k in ALLOWED for k in keys), keys
    prog = parse_program(res.data)
    check_plan(prog)
    for x in tests or _inputs(shapes, n_test, 2, scale):
        arrays = [t.numpy() for t in x]
        want = model(*x)
        want = want if isinstance(want, tuple) else (want,)
        ref = run_program(prog, arrays)
        got = host_runtime.run(prog, res.data, arrays)
        for r, c, w in zip(ref, got, want):
            w = w.detach().numpy()
            assert r.shape == w.shape
            assert c.tobytes() == r.tobytes(), "C runtime differs from the int8 reference"
            assert cosine(r, w) >= cos_min, cosine(r, w)
    return res


def calls(res, key):
    """How many instructions call `key`."""
    return sum(1 for k, _, _ in _calls(res.program) if k == key)


# -- transposed convolution ----------------------------------------------------

class Upsample(nn.Module):
    def __init__(self, cin=4, cout=6, k=3, stride=2, padding=1):
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cout, k, stride=stride, padding=padding)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.relu(self.bn(self.up(x)))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("cfg", [dict(cin=4, cout=6, k=3, stride=2, padding=1),
                                 dict(cin=20, cout=8, k=4, stride=2, padding=1),
                                 dict(cin=3, cout=5, k=2, stride=3, padding=0)])
def test_transpose_conv(target, cfg):
    m = Upsample(**cfg)
    with torch.no_grad():
        m.bn.running_mean.uniform_(-0.2, 0.2)
        m.bn.running_var.uniform_(0.5, 1.5)
    res = check(m, [(1, cfg["cin"], 5, 5)], ["cortex_m::quantized_transpose_conv2d.out"], target)
    (key, a, plan), = [c for c in _calls(res.program) if c[0].endswith("transpose_conv2d.out")]
    v = plan.values
    assert v[a["weight"]].val.sizes == [cfg["cout"], cfg["k"], cfg["k"], cfg["cin"]]   # OHWI
    mults = v[a["requantize_multipliers"]].val.sizes
    assert mults == [cfg["cout"]]                              # per output channel
    lo = v[a["activation_min"]].val.int_val
    assert lo == v[a["output_offset"]].val.int_val             # the ReLU is fused
    scratch = v[a["scratch"]].val.sizes[0]
    out_scratch = v[a["output_scratch"]].val.sizes[0]
    s = cfg["stride"]
    if s <= 2 and cfg["cin"] > 16:                              # CMSIS-NN's reverse-conv path
        taps = cfg["k"] * cfg["k"] * cfg["cin"]
        a16, a4 = (taps + 15) // 16 * 16, (taps + 3) // 4 * 4
        assert scratch == 4 * (a16 if target == "cortex-m55" else a4)
        assert out_scratch == cfg["cin"] * cfg["k"] * cfg["k"] * cfg["cout"]
    else:
        assert scratch == 4 * ((5 - 1) * s + max(cfg["k"], s)) * cfg["cout"] * max(cfg["k"], s)
        assert out_scratch == 0


def test_grouped_transpose_conv_runs_int8():
    # capture makes the weight block-diagonal, groups 1 (python/ptec/conv_transpose3d.py)
    m = nn.Sequential(nn.ConvTranspose2d(4, 4, 3, stride=2, groups=2)).eval()
    calib = _inputs([(1, 4, 4, 4)], 2, 1)
    res = compile_model(m, list(calib[0]), calib, available_kernels=INT8_ONLY)
    assert "cortex_m::quantized_transpose_conv2d.out" in res.lowered.operators, res.lowered.operators
    assert not res.lowered.fallbacks, res.lowered.fallbacks


@pytest.mark.parametrize("kw", [dict(output_padding=1), dict(dilation=2), dict(output_padding=1, dilation=2)])
def test_transpose_conv_output_padding_and_dilation_run_int8(kw):
    # capture folds both into the weight (python/ptec/conv_transpose3d.py)
    m = nn.Sequential(nn.ConvTranspose2d(4, 4, 3, stride=2, **kw)).eval()
    calib = _inputs([(1, 4, 4, 4)], 2, 1)
    res = compile_model(m, list(calib[0]), calib, available_kernels=INT8_ONLY)
    assert "cortex_m::quantized_transpose_conv2d.out" in res.lowered.operators, res.lowered.operators


def test_refusal_on_the_command_line_writes_no_file(tmp_path):
    src = tmp_path / "gate.py"          # a branch on the input's values: one fixed path cannot hold it
    src.write_text("import torch.nn as nn\n"
                   "class Gate(nn.Module):\n"
                   "    def forward(self, x):\n"
                   "        return x if x.sum() > 0 else -x\n"
                   "def make():\n"
                   "    m = nn.Sequential(Gate())\n"
                   "    m.input_shape = (4, 8)\n"
                   "    return m\n")
    out = tmp_path / "out.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "2",
                        "-o", str(out)], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert r.returncode == 2, r.stderr
    assert "module 0 (Gate) at gate.py:4" in r.stderr and "torch.where" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists(), r.stderr


# -- matmul / bmm ---------------------------------------------------------------

class MatMuls(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def forward(self, a, b):
        if self.mode == "matmul":
            return torch.matmul(a, b)                       # rhs through cortex_m::transpose
        return torch.bmm(a, b.transpose(1, 2))              # rhs already transposed: no op


@pytest.mark.parametrize("target", TARGETS)
def test_matmul_through_transpose(target):
    res = check(MatMuls("matmul"), [(2, 4, 8), (2, 8, 6)],
                ["cortex_m::quantized_batch_matmul.out", "cortex_m::transpose.out"], target)
    (_, a, plan), = [c for c in _calls(res.program) if "batch_matmul" in c[0]]
    v = plan.values
    assert v[a["rhs_transposed"]].val.sizes == [2, 6, 8]
    assert v[a["scratch"]].val.sizes == [4 * 6 if target == "cortex-m55" else 0]
    zl = v[a["lhs_zero_point"]].val.int_val
    lhs_zp = [n for n in res.graph.nodes if n.op == "input"][0].qparams[1]
    assert zl == -lhs_zp                                     # negated offsets (§1.4)


@pytest.mark.parametrize("target", TARGETS)
def test_bmm_with_transposed_rhs_needs_no_transpose(target):
    res = check(MatMuls("bmm_t"), [(2, 4, 8), (2, 6, 8)],
                ["cortex_m::quantized_batch_matmul.out"], target)
    assert "cortex_m::transpose.out" not in res.lowered.operators


class ConstRhs(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 5) * 0.3)

    def forward(self, a):
        return a @ self.w


class FourD(nn.Module):
    def forward(self, a, b):
        return a @ b


@pytest.mark.parametrize("target", TARGETS)
def test_matmul_constant_rhs_and_rank4(target):
    res = check(ConstRhs(), [(1, 3, 4, 8)], ["cortex_m::quantized_batch_matmul.out"], target)
    assert "cortex_m::transpose.out" not in res.lowered.operators   # pre-transposed constant
    (_, a, plan), = [c for c in _calls(res.program) if "batch_matmul" in c[0]]
    assert plan.values[a["rhs_transposed"]].val.sizes == [1, 5, 8]
    assert plan.values[a["lhs"]].val.sizes == [1, 12, 8]         # batch folded into M
    check(FourD(), [(1, 2, 4, 8), (1, 2, 8, 3)], ["cortex_m::quantized_batch_matmul.out"],
          target)


def test_matmul_batch_broadcast_refused():
    m = FourD().eval()
    calib = _inputs([(4, 8), (3, 8, 5)], 2, 1)
    with pytest.raises(CompileError, match="batch dims"):
        compile_model(m, list(calib[0]), calib, available_kernels=INT8_ONLY)


# -- division, numbers, minimum / maximum ------------------------------------------

class Divide(nn.Module):
    def forward(self, a, b):
        den = torch.sigmoid(b) + 0.5                  # number operand: a LUT
        return (a / den) / 2.0 - 1.0                  # x / c and x - c: LUTs


@pytest.mark.parametrize("target", TARGETS)
def test_div(target):
    res = check(Divide(), [(1, 3, 4, 4), (1, 3, 4, 4)],
                ["cortex_m::quantized_div.out", "cortex_m::quantized_activation.out"], target)
    (_, a, plan), = [c for c in _calls(res.program) if "quantized_div" in c[0]]
    v = plan.values
    g = {n.name: n for n in res.graph.nodes}
    div = [n for n in res.graph.nodes if n.op == "div" and n.inputs[1] in g
           and g[n.inputs[1]].op == "add"][0]
    s1, s2, so = g[div.inputs[0]].qparams[0], g[div.inputs[1]].qparams[0], div.qparams[0]
    assert v[a["output_scale"]].val.double_val == pytest.approx(s1 / (s2 * so), rel=1e-12)
    assert v[a["self_zero_point"]].val.int_val == g[div.inputs[0]].qparams[1]   # true zp
    # the three number operands became LUTs, not float constants
    assert calls(res, "cortex_m::quantized_activation.out") == 4


def test_div_broadcast_refused():
    class D(nn.Module):
        def forward(self, a, b):
            return a / b
    calib = [(x[0], x[1].abs() + 1) for x in _inputs([(1, 4, 8), (1, 1, 8)], 2, 1)]
    with pytest.raises(CompileError, match="does not broadcast"):
        compile_model(D().eval(), list(calib[0]), calib, available_kernels=INT8_ONLY)


class MinMax(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.c2 = nn.Conv2d(3, 4, 1)

    def forward(self, x, y):
        a = torch.minimum(self.c1(x), self.c2(x))          # producers share the grid
        return torch.maximum(a, y * 3.0), torch.max(a, torch.tanh(y))   # requantized inputs


@pytest.mark.parametrize("target", TARGETS)
def test_minimum_maximum(target):
    res = check(MinMax(), [(1, 3, 5, 5), (1, 4, 5, 5)],
                ["cortex_m::minimum.out", "cortex_m::maximum.out"], target)
    g = {n.name: n for n in res.graph.nodes}
    mn = [n for n in res.graph.nodes if n.op == "minimum"][0]
    assert all(g[i].qparams == mn.qparams for i in mn.inputs)
    for key, a, plan in _calls(res.program):
        if key in ("cortex_m::minimum.out", "cortex_m::maximum.out"):
            assert plan.values[a["self"]].val.sizes == plan.values[a["other"]].val.sizes


# -- softmax, activations ------------------------------------------------------------

class Softmaxes(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.conv = nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        return torch.softmax(self.conv(x) * 2.0, dim=self.dim)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dim, transposes", [(1, 0), (-1, 2), (2, 2)])
def test_softmax_4d(target, dim, transposes):
    res = check(Softmaxes(dim), [(1, 3, 4, 5)], ["cortex_m::softmax.out"], target)
    assert calls(res, "cortex_m::transpose.out") == transposes
    sm = [n for n in res.graph.nodes if n.op == "softmax"][0]
    assert sm.qparams == (qm.SOFTMAX_OUTPUT_SCALE, qm.SOFTMAX_OUTPUT_ZERO_POINT)
    for key, a, plan in _calls(res.program):
        if key == "cortex_m::softmax.out":
            assert plan.values[a["output_zero_point"]].val.int_val == -128
            assert plan.values[a["dim"]].val.int_val == -1
            assert len(plan.values[a["input"]].val.sizes) == 2


class Softmax3(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1) + torch.softmax(x, dim=-1)


@pytest.mark.parametrize("target", TARGETS)
def test_softmax_3d_any_dim(target):
    check(Softmax3(), [(2, 5, 7)], ["cortex_m::softmax.out", "cortex_m::transpose.out"], target,
          scale=2.0)


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.acts = nn.ModuleList([nn.SiLU(), nn.GELU(), nn.Hardswish(), nn.Hardsigmoid(),
                                   nn.LeakyReLU(0.1), nn.ELU()])

    def forward(self, x):
        h = self.fc(x)
        out = [act(h) for act in self.acts]
        out += [F.gelu(h, approximate="tanh"), F.silu(h), torch.sigmoid(h), torch.tanh(h)]
        return tuple(out)


@pytest.mark.parametrize("target", TARGETS)
def test_lut_activations(target):
    res = check(Activations(), [(1, 16)], ["cortex_m::quantized_activation.out"], target,
                scale=2.0)
    assert calls(res, "cortex_m::quantized_activation.out") == 10


# -- data movement: permute, pad, ceil_mode max-pool, reshapes -----------------------

class Moves(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        y = self.conv(x)                                 # [1,4,5,6] channels-last
        a = y.permute(0, 2, 3, 1)                        # [1,5,6,4]
        b = y.transpose(2, 3)                            # [1,4,6,5]
        c = self.fc(y)                                   # linear over W of a 4-D tensor
        d = y.flatten(2).transpose(1, 2)                 # [1,30,4] tokens
        return a, b, c, d


@pytest.mark.parametrize("target", TARGETS)
def test_permute_transpose(target):
    res = check(Moves(), [(1, 3, 5, 6)], ["cortex_m::transpose.out"], target)
    for key, a, plan in _calls(res.program):
        if key == "cortex_m::transpose.out":
            for arg in ("input", "out"):
                t = plan.values[a[arg]].val
                assert list(t.dim_order) == list(range(len(t.sizes)))   # contiguous (§3.16)


class Pads(nn.Module):
    def __init__(self):
        super().__init__()
        self.zero = nn.ZeroPad2d((1, 2, 0, 1))

    def forward(self, x, s):
        return self.zero(x), F.pad(s, (2, 1), value=0.5), F.pad(s, (0, 0, 1, 1))


@pytest.mark.parametrize("target", TARGETS)
def test_constant_pad(target):
    res = check(Pads(), [(1, 3, 4, 5), (2, 3, 6)], ["cortex_m::pad.out"], target)
    pads = [[plan.values[i].val.int_val for i in plan.values[a["pre_pad"]].val.items]
            for k, a, plan in _calls(res.program) if k == "cortex_m::pad.out"]
    assert pads[0] == [0, 0, 1, 0]                         # physical N,H,W,C of the 4-D input


def test_pad_of_three_dims_of_a_volume():
    """An edge pad over three dims of a 5-D tensor runs as 2-D edge pads
    (python/ptec/pool3d.py; equality with torch: test_pool3d.py); a runtime
    without the portable edge-pad kernel is refused naming it (circular and
    negative pads are slices: test_parameter_stand_ins.py)."""
    class Volume(nn.Module):
        def forward(self, x):
            return F.pad(x, (1, 1, 1, 1, 1, 1), mode="reflect")
    calib = _inputs([(1, 2, 4, 4, 4)], 2, 1)
    with pytest.raises(CompileError, match=r"no kernel for: aten::reflection_pad2d\.out"):
        compile_model(Volume().eval(), list(calib[0]), calib, available_kernels=INT8_ONLY)
    res = compile_model(Volume().eval(), list(calib[0]), calib)
    assert "aten::reflection_pad2d.out" in res.lowered.operators and not res.lowered.fallbacks


class CeilPool(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3)
        self.pool = nn.MaxPool2d(**kw)

    def forward(self, x):
        return self.pool(self.conv(x))


@pytest.mark.parametrize("target", TARGETS)
def test_max_pool_ceil_mode(target):
    res = check(CeilPool(kernel_size=3, stride=2, ceil_mode=True), [(1, 2, 9, 10)],
                ["cortex_m::pad.out", "cortex_m::quantized_max_pool2d.out"], target)
    for key, a, plan in _calls(res.program):
        if key == "cortex_m::quantized_max_pool2d.out":
            assert not plan.values[a["ceil_mode"]].val.bool_val


def test_max_pool_dilation_needs_no_fp32_kernel():
    # maxima of strided slices of the int8 input (test_dilated_max_pool.py checks the values)
    m = CeilPool(kernel_size=2, dilation=2).eval()
    calib = _inputs([(1, 2, 9, 9)], 2, 1)
    kernels = INT8_ONLY + ["aten::slice_copy.Tensor_out"]       # a byte copy, any dtype
    res = compile_model(m, list(calib[0]), calib, available_kernels=kernels)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert set(res.lowered.operators) <= set(kernels), res.lowered.operators
    assert "cortex_m::maximum.out" in res.lowered.operators
    with pytest.raises(CompileError, match=r"no kernel for: aten::slice_copy.Tensor_out"):
        compile_model(m, list(calib[0]), calib, available_kernels=INT8_ONLY)


class Reshapes(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 8)

    def forward(self, x):                                # x [2, 4, 12]
        b, t = x.shape[0], x.shape[1]
        h = self.fc(x.view(x.size(0) * t, -1)).view(b, t, 8)
        y = h.reshape(b, t, 2, 4).unsqueeze(0).squeeze(0)      # 4-D, channels-last
        z = y.flatten(1)                                  # back to 2-D
        return z, h.mean(1), h.mean(-1, keepdim=True), x.view(x.size(0), -1)


@pytest.mark.parametrize("target", TARGETS)
def test_reshape_corner_cases(target):
    res = check(Reshapes(), [(2, 4, 12)], ["cortex_m::quantized_avg_pool2d.out"], target)
    assert "cortex_m::quantized_linear.out" in res.lowered.operators


# -- the zoo's attention block -------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
def test_tiny_attention_block(target):
    from ptec.models.tiny_attention import calibration, train_tiny_attention
    m = train_tiny_attention(steps=20)
    res = check(m, [(1, 16, 12)], ["cortex_m::quantized_batch_matmul.out",
                                   "cortex_m::softmax.out", "cortex_m::quantized_linear.out",
                                   "cortex_m::quantized_activation.out"], target,
                calib=calibration(8), tests=calibration(3, 5))
    # q @ k^T takes k as it is; attention @ v transposes v once
    assert calls(res, "cortex_m::transpose.out") == 1
    assert calls(res, "cortex_m::quantized_batch_matmul.out") == 2


class Difference(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x, y):
        h = self.conv(x)
        return h - y, 1.0 - torch.sigmoid(h)


@pytest.mark.parametrize("target", TARGETS)
def test_sub(target):
    res = check(Difference(), [(1, 3, 5, 5), (1, 4, 5, 5)],
                ["cortex_m::quantized_add.out", "cortex_m::quantized_activation.out"], target)
    # b is negated exactly by a LUT (q -> -q - 1 on the grid (s, -1 - zp)), then added
    luts = [plan.values[a["lut"]].val for k, a, plan in _calls(res.program)
            if k == "cortex_m::quantized_activation.out"]
    program = res.program
    negations = [t for t in luts if np.array_equal(
        np.frombuffer(program.constant_bytes(t), np.int8), -np.arange(-128, 128) - 1)]
    assert len(negations) == 1


class BroadcastMinMax(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.floor = nn.Parameter(torch.tensor([-0.2, 0.0, 0.1, -0.5]).reshape(1, 4, 1, 1))

    def forward(self, x, t):
        h = torch.maximum(self.conv(x), self.floor)       # per-channel constant, [1,C,1,1]
        return h, torch.minimum(t, t.mean(-1, keepdim=True))   # [2,5,6] vs [2,5,1]


@pytest.mark.parametrize("target", TARGETS)
def test_minimum_maximum_broadcast(target):
    check(BroadcastMinMax(), [(1, 3, 5, 5), (2, 5, 6)],
          ["cortex_m::minimum.out", "cortex_m::maximum.out"], target)
