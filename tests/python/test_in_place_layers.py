"""In-place layers (issue 16, "activations below the liveness bound"): in a
--ptec-runtime-only program a depthwise convolution that keeps its input's
shape with stride 1 along H, or a 1x1 convolution with Cout == Cin, has its
out planned over its input when nothing reads the input afterwards; ptec's
kernels then compute in place. The plan goes below the liveness bound of the
same program without in-place layers, and the outputs stay the default
program's bytes: on the host, in the numpy reference interpreter, and on
the emulated M55 and M33."""
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.backends.cortex_m.sample_programs import ds_cnn_program
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ops import signature
from ptec.pte import parse_program
from ptec.pte.writer import serialize_program

TARGETS = ["cortex-m55", "cortex-m33"]
IN_PLACE_OPS = {"ptec::quantized_depthwise_conv2d.out", "ptec::quantized_conv2d.out"}


def sharing_calls(program):
    """(operator, in place?) per depthwise / conv call of the program: in
    place when input and out are planned at the same offset."""
    plan = program.plan()
    found = []
    for ins in plan.chains[0].instructions:
        call = ins.instr_args
        key = plan.operators[call.op_index].key
        if key.split("::")[1] not in ("quantized_depthwise_conv2d.out", "quantized_conv2d.out"):
            continue
        named = dict(zip([n for n, _ in signature(key)], call.args))
        a, b = (plan.values[named[n]].val.allocation_info for n in ("input", "out"))
        found.append((key, a is not None and b is not None and
                      (a.memory_id, a.offset) == (b.memory_id, b.offset)))
    return found


def check_same_outputs(default, in_place, xs, tmp_path):
    """Host runtime and reference interpreter: the in-place program's output
    bytes are the default program's."""
    p_default, p_in_place = parse_program(default), parse_program(in_place)
    for x in xs:
        want = host_runtime.run(p_default, default, [x], workdir=str(tmp_path))[0]
        got = host_runtime.run(p_in_place, in_place, [x], workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes()
        assert run_program(p_in_place, [x])[0].tobytes() == run_program(p_default, [x])[0].tobytes() == \
            want.tobytes()
    assert len({float(v) for x in xs for v in run_program(p_default, [x])[0].ravel()}) > 1


@pytest.mark.parametrize("target", TARGETS)
def test_ds_cnn_goes_below_its_liveness_bound(target, tmp_path):
    blocks = 4
    default, _ = ds_cnn_program(target=target, blocks=blocks)
    apart, apart_info = ds_cnn_program(target=target, blocks=blocks, ptec_runtime_only=True, in_place=False)
    program, info = ds_cnn_program(target=target, blocks=blocks, ptec_runtime_only=True, in_place=True)
    # Every block's depthwise and pointwise layer runs in place, nothing else.
    assert [k for k, same in sharing_calls(program) if same] == \
        ["ptec::quantized_depthwise_conv2d.out", "ptec::quantized_conv2d.out"] * blocks
    assert not any(same for _, same in sharing_calls(apart))
    bound = apart_info["memory_plan"].lower_bound
    assert apart_info["memory_plan"].arena_bytes == bound
    # One 25x5x64 tensor live where there were two: about half the bound.
    assert info["memory_plan"].arena_bytes <= bound // 2 + 512, (info["memory_plan"].arena_bytes, bound)
    rng = np.random.default_rng(3)
    xs = [(rng.normal(size=(1, 1, 49, 10)) * 3).astype(np.float32) for _ in range(3)]
    check_same_outputs(serialize_program(default), serialize_program(program), xs, tmp_path)
    board_matches_reference(serialize_program(program), xs[0], target, tmp_path)


class Blocks(nn.Module):
    """Layers that can run in place and layers that cannot."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)                     # in place
        self.pw = nn.Conv2d(8, 8, 1)                                          # in place
        self.dw_dilated = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8)  # in place
        self.dw_tall = nn.Conv2d(8, 8, (5, 3), padding=(2, 1), groups=8)      # in place
        self.pw_res = nn.Conv2d(8, 8, 1)              # the add reads its input again: apart
        self.dw_s2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)       # a smaller out: apart
        self.pw_wide = nn.Conv2d(8, 12, 1)            # Cout != Cin: apart

    def forward(self, x):
        y = torch.relu(self.conv(x))
        y = torch.relu(self.dw(y))
        y = torch.relu(self.pw(y))
        y = torch.relu(self.dw_dilated(y))
        y = self.dw_tall(y)
        y = y + torch.relu(self.pw_res(y))
        return self.pw_wide(self.dw_s2(y))


@pytest.mark.parametrize("target", TARGETS)
def test_compiled_layers_in_place(target, tmp_path):
    torch.manual_seed(2)
    model = Blocks().eval()
    g = torch.Generator().manual_seed(4)
    calib = [(torch.randn(1, 3, 6, 5, generator=g),) for _ in range(16)]
    default = compile_model(model, calib[0], calib, target)
    only = compile_model(model, calib[0], calib, target, in_place=True)
    calls = sharing_calls(only.program)
    assert [same for _, same in calls] == [False, True, True, True, True, False, False, False], calls
    # This model's peak is the residual add's three tensors, which no layer
    # here can fold: the plan only must not grow.
    assert only.memory_plan.arena_bytes <= default.memory_plan.arena_bytes
    xs = [torch.randn(1, 3, 6, 5, generator=g).numpy() for _ in range(3)]
    check_same_outputs(default.data, only.data, xs, tmp_path)
    board_matches_reference(only.data, xs[0], target, tmp_path)


def test_in_place_is_its_own_choice(tmp_path):
    """--ptec-runtime-only alone keeps every layer out of place (the in-place
    layers cost instructions: docs/performance.md); --in-place implies it."""
    torch.manual_seed(2)
    model = Blocks().eval()
    g = torch.Generator().manual_seed(4)
    calib = [(torch.randn(1, 3, 6, 5, generator=g),) for _ in range(8)]
    only = compile_model(model, calib[0], calib, "cortex-m55", ptec_runtime_only=True)
    assert not any(same for _, same in sharing_calls(only.program))
    out = tmp_path / "m.pte"
    run = subprocess.run([sys.executable, "-m", "ptec", "compile", "digits_cnn", "--target", "cortex-m55",
                          "--in-place", "--calib", "4", "-o", str(out)],
                         cwd=ROOT, env={"PYTHONPATH": f"{ROOT}/python", "PATH": "/usr/bin:/bin"},
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    assert "runs on ptec's runtime only" in run.stdout and "--in-place:" in run.stdout, run.stdout
