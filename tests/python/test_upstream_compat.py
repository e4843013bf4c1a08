"""Issue 18: every program ptec writes keeps upstream ExecuTorch's
per-operator dim-order and dtype rules (ptec.pte.upstream_rules), so it runs,
and computes right, on upstream's kernels too.

Two halves. The checker: hand-made programs with the constructs upstream
refuses or computes wrongly (the issue's exact failing cases among them) are
refused, their corrected forms accepted, and `compile` refuses to write a
program that breaks a rule (one line, exit 2, no file). The lowering: fp32
and mixed int8/fp32 models with those constructs compile to programs the
checker accepts, and still match PyTorch on ptec's C runtime.

The oracle for the rules is upstream's kernel source (the facts quoted in
upstream_rules.RULES); for the numbers it is PyTorch."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import ROOT
from ptec import host_runtime
from ptec.backends.portable import PortableBackend
from ptec.compiler import compile_model
from ptec.ops import SIGNATURES
from ptec.pte.program_builder import CHANNELS_LAST, ProgramBuilder
from ptec.pte.schema import ScalarType
from ptec.pte.upstream_rules import (RULES, UpstreamRuleError, check_program, require_compatible,
                                     upstream_needs)

F32, I8 = ScalarType.FLOAT, ScalarType.CHAR
CONTIG4 = [0, 1, 2, 3]


# -- the checker on hand-made programs ------------------------------------------

def _program(build):
    b = ProgramBuilder()
    ins, outs = build(b)
    b.set_io(ins, outs)
    return b.build()


def _mul_scalar_constant(b, constant_sizes=(1,), constant_order=None):
    """The issue's case 1: `y * 2.0` on a channels-last y as it used to be
    lowered: a [1] constant in contiguous order next to channels-last tensors."""
    x = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    c = b.constant(np.full(constant_sizes, 2.0, np.float32))
    if constant_order is not None:
        b.values[c].val.dim_order = bytes(constant_order)
    y = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    b.call("aten::mul.out", self=x, other=c, out=y)
    return [x], [y]


def _mul_on_nhwc_view(b):
    """y * 2.0 as ptec lowers it now: on the contiguous [N,H,W,C] view of
    the channels-last bytes, where upstream broadcasts right."""
    x = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    y = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    out = b.view(y, [1, 3, 3, 4], CONTIG4)
    b.call("aten::mul.out", self=b.view(x, [1, 3, 3, 4], CONTIG4),
           other=b.constant(np.full([1, 1, 1, 1], 2.0, np.float32)), out=out)
    return [x], [y]


def _flatten_channels_last(b):
    """The issue's case 2: view_copy straight from channels-last [1,4,3,3] to [1,36]."""
    x = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    y = b.tensor(F32, [1, 36])
    b.call("aten::view_copy.out", self=x, size=[1, 36], out=y)
    return [x], [y]


def _flatten_after_clone(b):
    x = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    xc = b.tensor(F32, [1, 4, 3, 3], CONTIG4)
    b.call("dim_order_ops::_clone_dim_order.out", self=x, non_blocking=False,
           dim_order=CONTIG4, out=xc)
    y = b.tensor(F32, [1, 36])
    b.call("aten::view_copy.out", self=xc, size=[1, 36], out=y)
    return [x], [y]


def _softmax_over_channels(b, order=CHANNELS_LAST, sizes=(1, 4, 3, 3), dim=1):
    """The issue's case 3: softmax over dim 1 of a channels-last tensor,
    which upstream accepts and computes wrongly."""
    x = b.tensor(F32, list(sizes), order)
    y = b.tensor(F32, list(sizes), order)
    b.call("aten::_softmax.out", self=x, dim=dim, half_to_float=False, out=y)
    return [x], [y]


def _mean_channels_last(b):
    x = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    y = b.tensor(F32, [1, 1, 3, 3], CHANNELS_LAST)
    b.call("aten::mean.out", self=x, dim=[1], keepdim=True, dtype=None, out=y)
    return [x], [y]


def _cat_channels_last(b, dtype=F32):
    xs = [b.tensor(dtype, [1, c, 3, 3], CHANNELS_LAST) for c in (2, 3)]
    y = b.tensor(dtype, [1, 5, 3, 3], CHANNELS_LAST)
    b.call("aten::cat.out", tensors=xs, dim=1, out=y)
    return xs, [y]


def _broadcast_channels_last(b):
    """Same dim-order class, but a broadcast into a channels-last out."""
    x = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    g = b.tensor(F32, [1, 1, 3, 3], CHANNELS_LAST)
    y = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    b.call("aten::mul.out", self=x, other=g, out=y)
    return [x, g], [y]


def _int8_maximum(b, other_sizes):
    x = b.tensor(I8, [1, 4, 3, 3], CHANNELS_LAST)
    c = b.constant(np.zeros(other_sizes, np.int8))
    b.values[c].val.dim_order = bytes(CHANNELS_LAST)
    y = b.tensor(I8, [1, 4, 3, 3], CHANNELS_LAST)
    b.call("cortex_m::maximum.out", self=x, other=c, out=y)
    return [x], [y]


def _clone_wrong_out(b):
    x = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    y = b.tensor(F32, [1, 4, 3, 3], CHANNELS_LAST)
    b.call("dim_order_ops::_clone_dim_order.out", self=x, non_blocking=False,
           dim_order=CONTIG4, out=y)
    return [x], [y]


def _cortex_m_conv_contiguous(b):
    x = b.tensor(I8, [1, 2, 4, 4], CONTIG4)
    y = b.tensor(I8, [1, 3, 4, 4], CHANNELS_LAST)
    b.call("cortex_m::quantized_conv2d.out", input=x, weight=b.constant(np.zeros((3, 1, 1, 2), np.int8)),
           bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1], input_offset=0,
           output_offset=0, requantize_multipliers=b.constant(np.ones(3, np.int32)),
           requantize_shifts=b.constant(np.zeros(3, np.int32)), activation_min=-128,
           activation_max=127, scratch=b.scratch(16), out=y)
    return [x], [y]


def _view_copy_dtype(b):
    x = b.tensor(F32, [1, 36])
    y = b.tensor(I8, [36])
    b.call("aten::view_copy.out", self=x, size=[36], out=y)
    return [x], [y]


REFUSED = {
    "mul_scalar_constant_channels_last": (_mul_scalar_constant, "tensors_have_same_dim_order"),
    "mul_rank3_constant_channels_last": (lambda b: _mul_scalar_constant(b, (4, 1, 1)),
                                         "tensors_have_same_dim_order"),
    "mul_4d_contiguous_constant": (lambda b: _mul_scalar_constant(b, (1, 4, 3, 3)),
                                   "tensors_have_same_dim_order"),
    # same class, but a broadcast into channels-last: upstream computes it wrongly
    "mul_1111_constant_channels_last": (
        lambda b: _mul_scalar_constant(b, (1, 1, 1, 1), CHANNELS_LAST), "broadcast"),
    "flatten_channels_last": (_flatten_channels_last, "default (contiguous) dim order"),
    "softmax_over_channels_channels_last": (_softmax_over_channels, "indexes it as contiguous"),
    "softmax_over_width_channels_last": (lambda b: _softmax_over_channels(b, dim=3),
                                         "indexes it as contiguous"),
    "mean_channels_last": (_mean_channels_last, "default (contiguous) dim order"),
    "cat_channels_last_fp32": (_cat_channels_last, "indexes it as contiguous"),
    "cat_channels_last_int8": (lambda b: _cat_channels_last(b, I8), "indexes it as contiguous"),
    "broadcast_into_channels_last": (_broadcast_channels_last, "broadcast"),
    "clone_out_differs_from_dim_order": (_clone_wrong_out, "differs from out's"),
    "int8_maximum_channel_broadcast": (lambda b: _int8_maximum(b, (1, 4, 1, 1)),
                                       "logical sizes as row-major dims"),
    "cortex_m_conv_contiguous_input": (_cortex_m_conv_contiguous, "4-D channels-last"),
    "view_copy_dtype_change": (_view_copy_dtype, "dtypes differ"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_checker_refuses_what_upstream_refuses_or_computes_wrongly(name):
    build, why = REFUSED[name]
    program = _program(build)
    problems = check_program(program)
    assert problems and any(why in p for p in problems), problems
    with pytest.raises(UpstreamRuleError, match="upstream"):
        require_compatible(program)


ACCEPTED = {
    "mul_constant_on_nhwc_view": _mul_on_nhwc_view,
    "flatten_after_clone": _flatten_after_clone,
    "softmax_contiguous": lambda b: _softmax_over_channels(b, CONTIG4),
    "int8_maximum_single_element": lambda b: _int8_maximum(b, (1, 1, 1, 1)),
    # channels-last whose bytes are NCHW order (H = W = 1): indexed right
    "softmax_channels_last_1x1": lambda b: _softmax_over_channels(b, sizes=(1, 4, 1, 1)),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_checker_accepts_the_corrected_forms(name):
    program = _program(ACCEPTED[name])
    assert check_program(program) == []
    require_compatible(program)


def test_every_operator_ptec_emits_has_an_upstream_rule():
    """A new operator in the manifest must state upstream's rules for it,
    unless it is one of ptec's own (`ptec::`, which upstream has no kernel
    for: upstream_needs says so)."""
    missing = sorted(k for k in SIGNATURES if k not in RULES and not k.startswith("ptec::"))
    assert missing == []
    for key, rule in RULES.items():
        names = {n for n, _ in SIGNATURES[key]}
        used = set(rule.same_dim_order + rule.contiguous + rule.contiguous_or_channels_last
                   + rule.channels_last + rule.same_dtype + rule.indexed_as_contiguous
                   + rule.broadcast + rule.row_major_broadcast
                   + tuple(n for n, _ in rule.dtypes))
        assert used <= names, (key, used - names)


def test_compile_refuses_to_write_a_program_that_breaks_a_rule(tmp_path):
    """With the layout handling of the fp32 fallback switched off, a
    channel softmax on a channels-last tensor is the old program: the CLI
    says why in one line, exits 2 and writes nothing."""
    model = tmp_path / "m.py"
    model.write_text(
        "import torch, torch.nn as nn\n"
        "class M(nn.Module):\n"
        "    input_shape = (1, 4, 3, 3)\n"
        "    def forward(self, x):\n"
        "        return torch.softmax(x, dim=1)\n"
        "def make():\n"
        "    return M()\n")
    out = tmp_path / "m.pte"
    code = ("import sys; import ptec.backends.portable.lowering as L\n"
            "L._layout_sensitive = lambda *a: None\n"
            "import ptec.backends as B; from ptec.backends.portable import PortableBackend\n"
            "B.default_backends = lambda: [PortableBackend()]\n"
            "from ptec.cli import main; sys.exit(main(sys.argv[1:]))\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", code, "compile", f"{model}:make", "--calib", "2",
                        "-o", str(out)], capture_output=True, text=True, env=env)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "upstream" in lines[0] and "aten::_softmax.out" in lines[0], lines
    assert not out.exists()


# -- the lowering: models with those constructs ----------------------------------

class ScalarMul(nn.Module):
    """The issue's case 1 as a model: `y * 2.0` on a channels-last y."""
    input_shape = (1, 4, 3, 3)

    def forward(self, x):
        return x * 2.0


class Flatten(nn.Module):
    """The issue's case 2: flatten of a channels-last [1,4,3,3]."""
    input_shape = (1, 4, 3, 3)

    def forward(self, x):
        return torch.flatten(torch.sigmoid(x), 1)


class ChannelSoftmax(nn.Module):
    """The issue's case 3: softmax over channels of a channels-last tensor."""
    input_shape = (1, 4, 3, 3)

    def forward(self, x):
        return torch.softmax(x, dim=1)


class ConstantsOfEveryRank(nn.Module):
    """add/sub/mul/div with constants of rank 0 to 4 on a channels-last
    tensor, and a full 4-D constant."""
    input_shape = (1, 4, 3, 5)

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.c1 = torch.randn(5, generator=g)
        self.c2 = torch.randn(3, 5, generator=g)
        self.c3 = torch.randn(4, 1, 1, generator=g)
        self.c4 = torch.randn(1, 4, 3, 5, generator=g)
        self.c4b = torch.rand(1, 4, 1, 1, generator=g) + 0.5

    def forward(self, x):
        y = (x + 1.5) * self.c1 - self.c2
        y = y * self.c3 + self.c4
        return y / self.c4b, 3.0 - y


class ViewsAndReductions(nn.Module):
    """view/reshape after channels-last producers, softmax and mean over
    every dim, permute and cat on channels-last tensors, and broadcasts
    between activations."""
    input_shape = (1, 4, 3, 5)

    def forward(self, x):
        s = torch.sigmoid(x)
        outs = [s.reshape(1, 3, 4, 5), s.view(1, 4, 15), s.flatten(2)]
        outs += [torch.softmax(s, d) for d in (1, 2, 3)]
        outs += [s.mean(dim=1, keepdim=True), s.mean(dim=(2, 3)), s.mean(dim=2),
                 s.mean(dim=1), s.mean(dim=[2, 3], keepdim=True)]
        outs += [s.permute(0, 2, 3, 1), torch.cat([s, x], 1), torch.cat([s, x], 3)]
        outs += [s * s.mean(dim=1, keepdim=True), x - s.mean(dim=(2, 3), keepdim=True)]
        return tuple(outs)


class PoolsAndNorm(nn.Module):
    """fp32 avg-pool (divisor_override), adaptive pool and batch-norm on
    channels-last tensors: upstream's kernels want them contiguous."""
    input_shape = (1, 4, 6, 6)

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(4)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        # 6 x 6 pooled to 2 x 2 divides: the adaptive pool stays one
        # aten::_adaptive_avg_pool2d (one that does not is a linear now)
        y = F.avg_pool2d(x, 3, 1, padding=1, divisor_override=3)
        return F.adaptive_avg_pool2d(y, 2), self.bn(x)


class MixedInt8Fp32(nn.Module):
    """int8 convolutions around fp32 islands: a channel softmax after an
    fp32 avg-pool, a flatten and a scaled, shifted output."""
    input_shape = (1, 3, 6, 6)

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        y = F.avg_pool2d(F.relu(self.c1(x)), 3, 1, padding=1, divisor_override=9)
        y = torch.softmax(y, dim=1) * 2.0 + 0.5
        return torch.flatten(self.c2(y), 1)


class MinMaxBroadcast(nn.Module):
    """int8 minimum/maximum with a per-channel constant and a per-channel
    activation broadcast over a channels-last tensor."""
    input_shape = (1, 4, 3, 5)

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.c = torch.linspace(-0.5, 0.5, 4).reshape(4, 1, 1)

    def forward(self, x):
        y = self.conv(x)
        return torch.minimum(torch.maximum(y, self.c), y.mean(dim=(2, 3), keepdim=True))


FP32_MODELS = [ScalarMul, Flatten, ChannelSoftmax, ConstantsOfEveryRank, ViewsAndReductions,
               PoolsAndNorm]


def _compile(cls, backends=None, target="cortex-m55"):
    torch.manual_seed(0)
    m = cls().eval()
    gen = torch.Generator().manual_seed(1)
    calib = [(torch.randn(cls.input_shape, generator=gen),) for _ in range(8)]
    return m, compile_model(m, [calib[0][0]], calib, target=target, backends=backends)


def _run_against_torch(m, res, cls, tol):
    gen = torch.Generator().manual_seed(7)
    for _ in range(2):
        x = torch.randn(cls.input_shape, generator=gen)
        with torch.no_grad():
            want = m(x)
        want = want if isinstance(want, tuple) else (want,)
        got = host_runtime.run(res.program, res.data, [x.numpy()])
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            w = w.numpy()
            assert g.shape == w.shape, (i, g.shape, w.shape)
            span = float(np.abs(w).max()) or 1.0
            assert np.abs(g - w).max() <= tol * span, (i, np.abs(g - w).max(), span)


@pytest.mark.parametrize("cls", FP32_MODELS, ids=lambda c: c.__name__)
def test_fp32_programs_keep_upstream_rules_and_match_torch(cls):
    """Everything on the portable fp32 kernels (the fallback path)."""
    m, res = _compile(cls, backends=[PortableBackend()])
    assert check_program(res.program) == []
    _run_against_torch(m, res, cls, 1e-5)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("cls", FP32_MODELS + [MixedInt8Fp32, MinMaxBroadcast],
                         ids=lambda c: c.__name__)
def test_mixed_int8_fp32_programs_keep_upstream_rules(cls, target):
    m, res = _compile(cls, target=target)
    assert check_program(res.program) == []
    if cls is MinMaxBroadcast:
        assert "cortex_m::maximum.out" in res.lowered.operators
        _run_against_torch(m, res, cls, 0.08)
    if cls is MixedInt8Fp32:
        assert res.lowered.fallbacks and any(op.startswith("cortex_m::quantized_conv2d")
                                             for op in res.lowered.operators)
        _run_against_torch(m, res, cls, 0.08)


def _calls(res, key):
    plan = res.program.plan()
    return [(ins.instr_args, [plan.values[a].val for a in ins.instr_args.args])
            for ins in plan.chains[0].instructions
            if plan.operators[ins.instr_args.op_index].key == key]


def test_the_issues_cases_lower_without_extra_instructions():
    """y * 2.0 stays one mul (its constant in the activations' order),
    flatten is one _clone_dim_order (no view_copy), a channel softmax is one
    softmax on the [N,H,W,C] view over its last dim: no clone is added."""
    _, res = _compile(ScalarMul, backends=[PortableBackend()])
    assert res.lowered.operators == ["aten::mul.out"]
    (_, (x, c, y, _)), = _calls(res, "aten::mul.out")
    assert bytes(x.dim_order) == bytes(c.dim_order) == bytes(y.dim_order)
    _, res = _compile(Flatten, backends=[PortableBackend()])
    assert res.lowered.operators == ["aten::sigmoid.out", "dim_order_ops::_clone_dim_order.out"]
    _, res = _compile(ChannelSoftmax, backends=[PortableBackend()])
    assert res.lowered.operators == ["aten::_softmax.out"]
    (_, (x, dim, *_)), = _calls(res, "aten::_softmax.out")
    assert list(x.sizes) == [1, 3, 3, 4] and list(x.dim_order) == CONTIG4
    assert dim.int_val == 3


@pytest.mark.parametrize("target,mve", [("cortex-m55", True), ("cortex-m33", False)])
def test_upstream_needs_names_the_libraries_and_the_mve_build(target, mve):
    """An int8 linear on cortex-m55 passes kernel_sum (no bias), which only
    CMSIS-NN's MVE path reads; on cortex-m33 it passes the bias."""
    class Head(nn.Module):
        input_shape = (1, 8)

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(x)
    _, res = _compile(Head, target=target)
    needs = upstream_needs(res.program)
    assert "cortex_m" in needs
    assert ("CMSIS-NN MVE build" in needs) == mve
    (_, args), = _calls(res, "cortex_m::quantized_linear.out")
    names = [n for n, _ in SIGNATURES["cortex_m::quantized_linear.out"]]
    is_null = [a is None or type(a).__name__ == "Null" for a in args]
    assert is_null[names.index("bias")] == mve and is_null[names.index("kernel_sum")] != mve
    _, res = _compile(ScalarMul, backends=[PortableBackend()])
    assert upstream_needs(res.program) == ["portable"]


# -- what the programs compute with upstream's indexing --------------------------

def test_upstream_indexing_shows_the_defects_ptec_avoids():
    """The emulation is able to see the issue's case 3 (and a broadcast into
    channels-last): the old constructs give wrong numbers with upstream's
    indexing, right ones with ptec's."""
    from ptec import interpreter
    from upstream_semantics import run_as_upstream
    x = np.random.default_rng(0).standard_normal((1, 4, 3, 3)).astype(np.float32)
    program = _program(_softmax_over_channels)
    want = torch.softmax(torch.from_numpy(x), 1).numpy()
    assert np.abs(interpreter.run_program(program, [x])[0] - want).max() < 1e-6
    assert np.abs(run_as_upstream(program, [x])[0] - want).max() > 0.1
    g = np.random.default_rng(1).standard_normal((1, 1, 3, 3)).astype(np.float32)
    program = _program(_broadcast_channels_last)
    assert np.abs(interpreter.run_program(program, [x, g])[0] - x * g).max() < 1e-6
    assert np.abs(run_as_upstream(program, [x, g])[0] - x * g).max() > 0.1


@pytest.mark.parametrize("cls", FP32_MODELS + [MixedInt8Fp32], ids=lambda c: c.__name__)
def test_programs_compute_right_with_upstream_indexing(cls):
    from ptec import interpreter
    from upstream_semantics import run_as_upstream
    backends = None if cls is MixedInt8Fp32 else [PortableBackend()]
    m, res = _compile(cls, backends=backends)
    x = torch.randn(cls.input_shape, generator=torch.Generator().manual_seed(11))
    got = run_as_upstream(res.program, [x.numpy()])
    ours = interpreter.run_program(res.program, [x.numpy()])
    with torch.no_grad():
        want = m(x)
    want = want if isinstance(want, tuple) else (want,)
    for g, o, w in zip(got, ours, want):
        np.testing.assert_allclose(g, o, rtol=1e-6, atol=1e-6)
        if backends is not None:
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-5)
