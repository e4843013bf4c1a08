"""Fused expansions (issue 16, MobileNet-V2's activations): with
--fuse-expansion an inverted-residual block's 1x1 expansion and the
depthwise convolution after it run as one ptec::quantized_expand_depthwise
call, which never holds the expanded tensor whole. The plan shrinks, and
the outputs stay the unfused program's bytes: on the host, in the numpy
reference interpreter (whose fused reference runs the two layers whole),
and on the emulated M55 and M33."""
import os
import re
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
from ptec.requirements import requirements

TARGETS = ["cortex-m55", "cortex-m33"]
FUSED = "ptec::quantized_expand_depthwise.out"


def keys(program):
    plan = program.plan()
    return [plan.operators[ins.instr_args.op_index].key for ins in plan.chains[0].instructions]


def check_same_outputs(unfused, fused, xs, tmp_path):
    p_unfused, p_fused = parse_program(unfused), parse_program(fused)
    for x in xs:
        want = host_runtime.run(p_unfused, unfused, [x], workdir=str(tmp_path))[0]
        got = host_runtime.run(p_fused, fused, [x], workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes()
        assert run_program(p_fused, [x])[0].tobytes() == run_program(p_unfused, [x])[0].tobytes() == \
            want.tobytes()
    assert len({float(v) for x in xs for v in run_program(p_unfused, [x])[0].ravel()}) > 1


class Block(nn.Module):
    """MobileNet-V2's inverted residual: 1x1 expansion, ReLU6, depthwise,
    ReLU6, 1x1 projection, the input added back when shapes allow."""

    def __init__(self, cin, cout, expand, kernel=3, stride=1, dilation=1):
        super().__init__()
        hidden = cin * expand
        pad = dilation * (kernel - 1) // 2
        self.expand = nn.Sequential(nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6())
        self.dw = nn.Sequential(nn.Conv2d(hidden, hidden, kernel, stride, pad, dilation, groups=hidden,
                                          bias=False), nn.BatchNorm2d(hidden), nn.ReLU6())
        self.project = nn.Sequential(nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.dw(self.expand(x)))
        return x + y if self.residual else y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU6())
        self.blocks = nn.Sequential(
            Block(8, 8, 4),                  # stride 1, residual
            Block(8, 12, 6, stride=2),       # stride 2: the features.2 shape
            Block(12, 12, 3, kernel=5),      # a 5x5 depthwise
            Block(12, 16, 2, dilation=2),    # dilated
            Block(16, 16, 3, stride=2),      # stride 2 on an odd size
        )
        self.tap = nn.Conv2d(16, 32, 1)      # an expansion whose out is also read by the add: apart
        self.tap_dw = nn.Conv2d(32, 32, 3, padding=1, groups=32)

    def forward(self, x):
        y = self.blocks(self.stem(x))
        e = torch.relu(self.tap(y))
        return self.tap_dw(e) + e


def compiled(target, **kw):
    torch.manual_seed(5)
    model = Net().eval()
    for m in model.modules():   # non-trivial folded batch norms
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    g = torch.Generator().manual_seed(6)
    calib = [(torch.randn(1, 3, 30, 26, generator=g),) for _ in range(12)]
    return compile_model(model, calib[0], calib, target, **kw), g


@pytest.mark.parametrize("target", TARGETS)
def test_fused_blocks_match_the_unfused_program(target, tmp_path):
    apart, g = compiled(target, ptec_runtime_only=True)
    fused, _ = compiled(target, fuse_expansion=True)
    assert keys(fused.program).count(FUSED) == 5
    assert FUSED not in keys(apart.program)
    assert len(keys(fused.program)) == len(keys(apart.program)) - 5
    assert fused.memory_plan.arena_bytes < apart.memory_plan.arena_bytes
    xs = [torch.randn(1, 3, 30, 26, generator=g).numpy() for _ in range(3)]
    check_same_outputs(apart.data, fused.data, xs, tmp_path)
    board_matches_reference(fused.data, xs[0], target, tmp_path)


def test_fusion_is_its_own_choice(tmp_path):
    """--ptec-runtime-only and --in-place alone fuse nothing (the fused
    kernel costs instructions: docs/performance.md); --fuse-expansion
    implies --ptec-runtime-only and says how many pairs it fused."""
    only, _ = compiled("cortex-m55", in_place=True)
    assert FUSED not in keys(only.program)
    out = tmp_path / "m.pte"
    run = subprocess.run([sys.executable, "-m", "ptec", "compile", "mobilenet_v2_035", "--target", "cortex-m55",
                          "--fuse-expansion", "--int8-io", "--calib", "2", "-o", str(out)],
                         cwd=ROOT, env={"PYTHONPATH": f"{ROOT}/python", "PATH": "/usr/bin:/bin"},
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    assert "runs on ptec's runtime only" in run.stdout, run.stdout
    # MobileNet-V2's 17 blocks: all but the first (no expansion) fuse.
    assert "--fuse-expansion: 16 expansion and depthwise pairs run as one call" in run.stdout, run.stdout


def test_requirements_count_the_window(tmp_path):
    """ptec.requirements' copy of the fused kernel's scratch (the window of
    expanded rows) is what the host runtime asks, on a program of that one
    call."""
    ptec_run = os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")
    torch.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(4, 24, 1), nn.ReLU6(), nn.Conv2d(24, 24, 3, 2, 1, groups=24), nn.ReLU6()).eval()
    g = torch.Generator().manual_seed(2)
    calib = [(torch.randn(1, 4, 11, 9, generator=g),) for _ in range(4)]
    r = compile_model(model, calib[0], calib, "cortex-m55", int8_io=True, fuse_expansion=True)
    assert keys(r.program) == [FUSED]
    want = requirements(r.program, target="host").scratch_bytes
    assert want == 4 * 24 + 5 * 9 * 24       # the expansion's int32 bases, then 5 rows of 9 x 24
    path = tmp_path / "m.pte"
    path.write_bytes(r.data)
    out = subprocess.run([ptec_run, str(path)], capture_output=True, text=True).stdout
    assert re.findall(r"^scratch:\s+(\d+) bytes", out, re.M) == [str(want)], out
