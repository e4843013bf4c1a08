"""--ptec-runtime-only (issue 16, "unneeded scratch"): a program planned for
ptec's runtime alone carries no scratch for upstream's CMSIS-NN kernels.
Its scratch arguments are empty, the operators that take one are called by
their ptec:: names (so upstream refuses the program instead of writing
CMSIS-NN's buffer into nothing), the plan shrinks (the DS-CNN on the M55 to
its activations' liveness bound), and the outputs are the default
program's bytes: on the host, and on the emulated M55 and M33 the numpy
reference's."""
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
from ptec.models import ZOO
from ptec.pte import parse_program
from ptec.pte.upstream_rules import upstream_needs

SCRATCH_OPS = {"quantized_conv2d", "quantized_depthwise_conv2d", "quantized_transpose_conv2d",
               "quantized_batch_matmul", "quantized_avg_pool2d"}


class EveryScratchOp(nn.Module):
    """A conv, a depthwise conv, an average pool, a transposed conv and an
    activation-by-activation matmul: each operator that has a scratch argument."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pool = nn.AvgPool2d(2)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)

    def forward(self, x):
        y = self.pool(torch.relu(self.dw(torch.relu(self.conv(x)))))
        y = self.up(y)                                   # [1, 4, 8, 8]
        rows = y.flatten(2)                              # [1, 4, 64]
        return torch.matmul(rows, rows.transpose(1, 2))  # [1, 4, 4]


def inputs(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 3, 8, 8, generator=g),) for _ in range(n)]


def calls(program):
    plan = program.plan()
    return [(plan.operators[i.instr_args.op_index].key, i.instr_args.args)
            for i in plan.chains[0].instructions if hasattr(i.instr_args, "op_index")]


def scratch_sizes(program):
    """The sizes of every call's scratch / output_scratch argument."""
    from ptec.ops import signature
    plan = program.plan()
    sizes = []
    for key, args in calls(program):
        for (name, _), v in zip(signature(key), args):
            if name in ("scratch", "output_scratch"):
                sizes.append(int(np.prod(plan.values[v].val.sizes)))
    return sizes


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_no_scratch_same_bytes(target, tmp_path):
    torch.manual_seed(5)
    model = EveryScratchOp().eval()
    calib = inputs(16, 1)
    default = compile_model(model, calib[0], calib, target)
    only = compile_model(model, calib[0], calib, target, ptec_runtime_only=True)
    keys = [k for k, _ in calls(only.program)]
    used = {k.split("::")[1].split(".")[0] for k in keys}
    assert SCRATCH_OPS <= used, used           # the model reaches every renamed operator
    assert not [k for k in keys if k.startswith("cortex_m::") and k.split("::")[1].split(".")[0] in SCRATCH_OPS]
    assert {k for k in keys if k.startswith("ptec::")} == {f"ptec::{op}.out" for op in SCRATCH_OPS}
    assert set(scratch_sizes(only.program)) == {0}
    if target == "cortex-m55":                 # CMSIS-NN's MVE conv and bmm want scratch: the default plans it
        assert max(scratch_sizes(default.program)) > 0
    assert only.memory_plan.arena_bytes <= default.memory_plan.arena_bytes
    assert "ptec's runtime only" in upstream_needs(only.program)[0]
    assert "ptec's runtime only" not in " ".join(upstream_needs(default.program))
    p_default, p_only = parse_program(default.data), parse_program(only.data)
    for (x,) in inputs(3, 7):
        want = host_runtime.run(p_default, default.data, [x.numpy()], workdir=str(tmp_path))[0]
        got = host_runtime.run(p_only, only.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes()
        assert got.tobytes() == run_program(p_only, [x.numpy()])[0].tobytes()
    board_matches_reference(only.data, inputs(1, 9)[0][0].numpy(), target, tmp_path)


def test_ds_cnn_on_the_m55_plans_its_liveness_bound():
    """The DS-CNN's M55 plan held 4,464 B of CMSIS-NN depthwise scratch
    beside the activations (docs/performance.md); ptec's kernels need none."""
    zoo = ZOO["ds_cnn"]
    module = zoo.factory().eval()
    calib = zoo.calibration(8, 0)
    default = compile_model(module, calib[0], calib, "cortex-m55")
    only = compile_model(module, calib[0], calib, "cortex-m55", ptec_runtime_only=True)
    assert default.memory_plan.arena_bytes > default.memory_plan.lower_bound or max(scratch_sizes(default.program)) > 0
    assert only.memory_plan.arena_bytes == only.memory_plan.lower_bound
    assert only.memory_plan.arena_bytes < default.memory_plan.arena_bytes
    x = zoo.calibration(1, 5)[0][0].numpy()
    assert run_program(parse_program(only.data), [x])[0].tobytes() == \
        run_program(parse_program(default.data), [x])[0].tobytes()


def test_cli_flag(tmp_path):
    out = tmp_path / "m.pte"
    run = subprocess.run([sys.executable, "-m", "ptec", "compile", "digits_cnn", "--target", "cortex-m55",
                          "--ptec-runtime-only", "--calib", "4", "-o", str(out)],
                         cwd=ROOT, env={"PYTHONPATH": f"{ROOT}/python", "PATH": "/usr/bin:/bin"},
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    assert "runs on ptec's runtime only" in run.stdout
    assert set(scratch_sizes(parse_program(out.read_bytes()))) <= {0}
