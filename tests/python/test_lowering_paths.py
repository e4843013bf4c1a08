"""Less common lowering paths, checked numerically through the reference
interpreter against PyTorch float."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from plan_check import check_plan
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


class KitchenSink(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool_pad = nn.AvgPool2d(3, stride=1, padding=1)          # count_include_pad
        self.pool_excl = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.grouped = nn.Conv2d(8, 8, 3, padding=1, groups=2)
        self.maxpool = nn.MaxPool2d(2)
        self.lone_bn = nn.BatchNorm2d(8)
        self.fc1 = nn.Linear(8 * 4 * 4, 128)
        self.pw = nn.Conv2d(8, 6, 1)
        self.fc2 = nn.Linear(6, 5)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.pool_pad(x) + self.pool_excl(x)
        x = nn.functional.hardtanh(x, 0.0, 2.0)           # after add: fused
        g = torch.sigmoid(x.mean([2, 3], keepdim=True))   # squeeze-excite style gate
        x = self.grouped(x) * g                            # channel-broadcast mul
        x = self.maxpool(torch.tanh(x))
        x = torch.clamp(self.lone_bn(x), -1.0, 1.0)        # lone BN, standalone clamp
        x = self.fc1(torch.flatten(x, 1))
        x = self.pw(x.view(1, 8, 4, 4))                    # 2-D -> channels-last 4-D
        x = self.fc2(x.mean([2, 3]))
        return torch.softmax(x, dim=1)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_kitchen_sink(target):
    torch.manual_seed(0)
    m = KitchenSink().eval()
    with torch.no_grad():
        for bn in (m.bn1, m.lone_bn):
            bn.running_mean.uniform_(-0.2, 0.2)
            bn.running_var.uniform_(0.5, 1.5)
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 3, 8, 8, generator=g),) for _ in range(16)]
    res = compile_model(m, [calib[0][0]], calib, target=target)
    keys = {op.key for op in res.program.plan().operators}
    for k in ["cortex_m::pad.out", "cortex_m::quantized_avg_pool2d.out",
              "cortex_m::quantized_conv2d.out", "cortex_m::quantized_mul.out",
              "cortex_m::quantized_activation.out", "cortex_m::quantized_max_pool2d.out",
              "cortex_m::quantized_depthwise_conv2d.out", "cortex_m::quantized_add.out",
              "cortex_m::softmax.out", "dim_order_ops::_clone_dim_order.out",
              "cortex_m::quantized_linear.out"]:
        assert k in keys, k
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    check_plan(prog)
    for x in [(torch.randn(1, 3, 8, 8, generator=g),) for _ in range(4)]:
        got = run_program(prog, [x[0].numpy()])[0]
        want = m(*x).detach().numpy()
        assert np.abs(got - want).max() < 0.04, (got, want)


class TwoInTwoOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=4, bias=False)  # depth mult 2
        self.pool = nn.AvgPool2d(3, stride=2, ceil_mode=True)
        self.fc = nn.Linear(8 * 2 * 2, 6, bias=False)

    def forward(self, a, b):
        x = torch.relu(self.dw(a + b))
        y = self.pool(x)
        return self.fc(torch.flatten(y, 1)), y


class Batch2(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(3, 3, 3, padding=1, groups=3)   # N = 2: grouped conv, not depthwise
        self.fc = nn.Linear(3, 4)

    def forward(self, x):
        return self.fc(nn.functional.adaptive_avg_pool2d(torch.relu(self.dw(x)), 1).flatten(1))


def _check(model, shapes, target="cortex-m55", tol=0.05):
    torch.manual_seed(0)
    model = model.eval()
    g = torch.Generator().manual_seed(3)
    calib = [tuple(torch.randn(s, generator=g) for s in shapes) for _ in range(12)]
    res = compile_model(model, list(calib[0]), calib, target=target)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    check_plan(prog)
    x = tuple(torch.randn(s, generator=g) for s in shapes)
    got = run_program(prog, [t.numpy() for t in x])
    want = model(*x)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        b = b.detach().numpy()
        assert a.shape == b.shape
        assert np.abs(a - b).max() <= tol * (np.abs(b).max() + 1e-3)
    return res


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_two_inputs_two_outputs(target):
    torch.manual_seed(0)
    res = _check(TwoInTwoOut(), [(1, 4, 8, 8), (1, 4, 8, 8)], target)
    plan = res.program.plan()
    assert len(plan.inputs) == 2 and len(plan.outputs) == 2
    keys = [op.key for op in plan.operators]
    assert "cortex_m::quantized_depthwise_conv2d.out" in keys


def test_batch_two_uses_grouped_conv():
    torch.manual_seed(0)
    res = _check(Batch2(), [(2, 3, 6, 6)])
    keys = [op.key for op in res.program.plan().operators]
    assert "cortex_m::quantized_conv2d.out" in keys
    assert "cortex_m::quantized_depthwise_conv2d.out" not in keys


class Fp32BesideInt8(nn.Module):
    """y = x ** x (two tensors: an fp32 layer, binary_math pow, reading the
    float input itself) is both a program output and the input of an int8
    mean (an int8 avg pool)."""

    def forward(self, x):
        y = torch.pow(x, x)
        return y, y.mean(-1)


def test_an_fp32_value_read_in_int8_keeps_its_fp32_bytes():
    """Lowering used to replace an fp32 layer's value by the int8 copy its
    int8 reader made, so fp32 readers after it (here the program output)
    got the rounded value, up to half an int8 step off. The output is the
    fp32 kernel's value now: within fp32 rounding of torch."""
    g = torch.Generator().manual_seed(4)
    cal = [(torch.rand(1, 4, 8, generator=g) * 2 + 0.5,) for _ in range(8)]
    res = compile_model(Fp32BesideInt8().eval(), [cal[0][0]], cal)
    prog = parse_program(res.data)
    names = [prog.plan().operators[i.instr_args.op_index].name for c in prog.plan().chains for i in c.instructions]
    assert "aten::pow.Tensor_Tensor_out" in names or any("pow" in n for n in names), names
    for (x,) in cal[:3]:
        got = run_program(prog, [x.numpy()])
        with torch.no_grad():
            want = Fp32BesideInt8()(x)
        step = res.graph.node(res.graph.outputs[1]).qparams[0]
        assert np.abs(got[0] - want[0].numpy()).max() <= 1e-5 * np.abs(want[0].numpy()).max()
        assert np.abs(got[1] - want[1].numpy()).max() <= 1.5 * step


class Fp32MeanOf5D(nn.Module):
    """An fp32 layer (atan2) whose 5-D value is averaged / summed to a 4-D
    result, which ptec holds channels-last."""

    def forward(self, x):
        a = torch.atan2(x, x + 4.0)
        return a.mean(2) + a.sum(4).transpose(2, 3)


def test_an_fp32_mean_of_a_5d_value_to_a_4d_result(tmp_path):
    """The fp32 mean's out was made channels-last while its 5-D input is
    contiguous, so the compile stopped at upstream's same-dim-order rule for
    aten::mean.out. The out is contiguous now, then relaid out; ptec-run's
    bytes are the reference interpreter's and near torch's."""
    from ptec import host_runtime
    g = torch.Generator().manual_seed(5)
    cal = [(torch.rand(1, 3, 3, 4, 3, generator=g) * 2 - 1,) for _ in range(8)]
    res = compile_model(Fp32MeanOf5D().eval(), [cal[0][0]], cal)
    prog = parse_program(res.data)
    for (x,) in cal[:3]:
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad():
            ref = Fp32MeanOf5D()(x).numpy()
        step = res.graph.node(res.graph.outputs[0]).qparams[0]
        assert np.abs(got - want).max() <= step * 1.001
        assert np.abs(got - ref).max() <= 1.0 * step, np.abs(got - ref).max() / step
