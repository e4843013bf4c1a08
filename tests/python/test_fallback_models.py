"""Models with layers the int8 lowering cannot take: their fp32 fallback now
runs on portable kernels, so they compile, and run on the C runtime with
the interpreter's outputs (bit for bit unless an fp32 expf/tanhf op is in
the program, then within a few ulps) and close to PyTorch. Before the
portable kernels, the kernel check refused every one of them."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec import host_runtime, interpreter
from ptec.compiler import CompileError, compile_model
from ptec.ops import cortex_m_ops
from ptec.pte import ScalarType

OLD_KERNELS = cortex_m_ops() + [
    "aten::add.out", "aten::mul.out", "dim_order_ops::_clone_dim_order.out",
    "quantized_decomposed::quantize_per_tensor.out", "quantized_decomposed::dequantize_per_tensor.out"]
TRANSCENDENTAL = {"aten::_softmax.out", "aten::sigmoid.out", "aten::tanh.out"}


class CeilPoolCNN(nn.Module):
    """max-pool with ceil_mode and dilation 2 (int8: maxima of strided
    slices) and an avg-pool with divisor_override (fp32); then an adaptive
    pool (6 x 6 to 3 x 3: int8, as one that does not divide its input would
    be too)."""
    input_shape = (1, 3, 12, 12)

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, groups=2)
        self.fc = nn.Linear(8 * 3 * 3, 5)

    def forward(self, x):
        x = F.relu(self.c1(x))
        x = F.max_pool2d(x, 2, 2, padding=1, dilation=2, ceil_mode=True)
        x = F.relu(self.c2(x))
        x = F.avg_pool2d(x, 2, 1, divisor_override=3)
        x = F.adaptive_avg_pool2d(x, 3)
        return self.fc(torch.flatten(x, 1))


class SigmoidGate(nn.Module):
    """A channel mean (fp32) followed by a sigmoid that stays fp32, gating
    the features; sub and div on the way."""
    input_shape = (1, 4, 6, 6)

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 6, 3, padding=1)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        y = F.relu(self.conv(x))
        g = torch.sigmoid(y.mean(dim=1, keepdim=True) - 0.5)
        z = (y * g) / 2.0
        return self.head(z.mean(dim=[2, 3]))


class ChannelSoftmax(nn.Module):
    """Ends in a softmax over dim 1 of a 4-D tensor (segmentation-style),
    after an fp32 avg-pool (divisor_override), so the softmax stays fp32 too.
    (Over an int8 input, a channel softmax is lowered to cortex_m::softmax.)"""
    input_shape = (1, 3, 8, 8)

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 5, 1)

    def forward(self, x):
        y = F.avg_pool2d(self.c2(F.relu(self.c1(x))), 3, 1, padding=1, divisor_override=9)
        return torch.softmax(y, dim=1)


class InceptionCat(nn.Module):
    """Two branches concatenated on channels (int8 cat, shared qparams), a
    global average pool with a divisor_override (fp32), a lone 1-D
    batch-norm (int8: a depthwise 1x1 conv) and a permute."""
    input_shape = (1, 3, 8, 8)

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 4, 1)
        self.b = nn.Conv2d(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm1d(10)
        self.fc = nn.Linear(10, 4)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        y = torch.cat([F.relu(self.a(x)), F.relu(self.b(x))], dim=1)
        y = F.avg_pool2d(y, 8, divisor_override=60).flatten(1)
        y = self.fc(self.bn(y))
        return y, y.unsqueeze(2).permute(0, 2, 1)


MODELS = [CeilPoolCNN, SigmoidGate, ChannelSoftmax, InceptionCat]


def _compile(cls, seed=0, **kw):
    torch.manual_seed(seed)
    m = cls().eval()
    gen = torch.Generator().manual_seed(seed + 1)
    calib = [(torch.randn(cls.input_shape, generator=gen),) for _ in range(8)]
    return m, compile_model(m, [calib[0][0]], calib, **kw)


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_fallback_model_runs_on_the_c_runtime(cls, target):
    m, res = _compile(cls, target=target)
    ops = set(res.lowered.operators)
    assert res.lowered.fallbacks, "the model was meant to need the fp32 fallback"
    gen = torch.Generator().manual_seed(99)
    for _ in range(3):
        x = torch.randn(cls.input_shape, generator=gen)
        want = m(x)
        want = want if isinstance(want, tuple) else (want,)
        got_c = host_runtime.run(res.program, res.data, [x.numpy()])
        got_py = interpreter.run_program(res.program, [x.numpy()])
        for c, py, w in zip(got_c, got_py, want):
            w = w.detach().numpy()
            if ops & TRANSCENDENTAL:
                np.testing.assert_allclose(c, py, rtol=1e-5, atol=1e-6)
            else:
                assert np.array_equal(c, py)
            span = float(w.max() - w.min()) or 1.0
            assert np.abs(c - w).max() <= 0.08 * span, (np.abs(c - w).max(), span)


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_old_runtime_refused_these_models(cls):
    with pytest.raises(CompileError, match="no kernel for"):
        _compile(cls, available_kernels=OLD_KERNELS)


def test_expected_operators():
    _, res = _compile(SigmoidGate)
    fallbacks = " ".join(res.lowered.fallbacks)
    assert "aten::sigmoid.out" in fallbacks and "aten::mean.out" in fallbacks
    assert "cortex_m::quantized_activation.out" not in res.lowered.operators   # sigmoid stayed fp32
    _, res = _compile(ChannelSoftmax)
    assert res.lowered.operators[-1] == "aten::_softmax.out"
    _, res = _compile(CeilPoolCNN)
    assert "aten::avg_pool2d.out" in res.lowered.operators
    # the dilated ceil-mode max pool is int8 now
    assert not any("max_pool" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    assert "cortex_m::maximum.out" in res.lowered.operators


def test_cat_stays_int8_with_shared_qparams():
    _, res = _compile(InceptionCat)
    plan = res.program.plan()
    cats = [ins.instr_args for ins in plan.chains[0].instructions
            if plan.operators[ins.instr_args.op_index].key == "aten::cat.out"]
    assert len(cats) == 1
    args = cats[0].args
    out = plan.values[args[2]].val
    assert out.scalar_type == ScalarType.CHAR
    items = plan.values[args[0]].val.items
    assert all(plan.values[i].val.scalar_type == ScalarType.CHAR for i in items)
    assert "aten::avg_pool2d.out" in res.lowered.operators
    assert "aten::_native_batch_norm_legit_no_training.out" not in res.lowered.operators   # int8 now
    # the permute of the int8 [1,4,1] moves only a size-1 dim: a view, no op
    assert not any("permute" in f for f in res.lowered.fallbacks)
    assert "cortex_m::transpose.out" not in res.lowered.operators


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("cls", [CeilPoolCNN, InceptionCat], ids=lambda c: c.__name__)
def test_fallback_model_on_board(tmp_path, target, cls):
    """The fp32 portable kernels on the emulated cores give the interpreter's
    bytes too (no fused multiply-add anywhere, IEEE single precision)."""
    import importlib.util
    import os
    import shutil
    import subprocess
    from conftest import ROOT
    from ptec.pte import NUMPY_DTYPE
    elf = os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")
    if shutil.which("qemu-system-arm") is None or not os.path.exists(elf):
        pytest.skip(f"no QEMU or no runner firmware for {target} (build the {target} preset)")
    spec = importlib.util.spec_from_file_location(
        "run_and_compare", os.path.join(ROOT, "tests", "target", "run_and_compare.py"))
    rc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rc)
    _, res = _compile(cls, target=target)
    (tmp_path / "model.pte").write_bytes(res.data)
    x = torch.randn(cls.input_shape, generator=torch.Generator().manual_seed(5)).numpy()
    t = res.program.plan().values[res.program.plan().inputs[0]].val
    phys = x.reshape(t.sizes).transpose(list(t.dim_order))
    (tmp_path / "in.bin").write_bytes(np.ascontiguousarray(phys, NUMPY_DTYPE[ScalarType(t.scalar_type)]).tobytes())
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", target, "--elf", elf,
                          "--model", str(tmp_path / "model.pte"), "--input", str(tmp_path / "in.bin"),
                          "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    plan = res.program.plan()
    want = []
    for index, y in zip(plan.outputs, interpreter.run_program(res.program, [x])):
        o = plan.values[index].val
        want.append(np.ascontiguousarray(y.reshape(o.sizes).transpose(list(o.dim_order))).tobytes())
    assert rc.firmware_outputs(run.stdout) == want
