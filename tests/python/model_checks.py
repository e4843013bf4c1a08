"""Checks the operator-coverage tests share (test_conv1d, test_layer_norm,
test_upsample): a compiled model gives the numpy reference interpreter's
bytes on the host runtime and on an emulated board, and its distance to
PyTorch float in output steps."""
import os
import shutil
import subprocess

import numpy as np
import pytest
import torch

from conftest import ROOT
from ptec import host_runtime
from ptec.interpreter import run_program
from ptec.pte import parse_program


def host_steps_from_float(model, res, inputs, workdir) -> float:
    """The largest |ptec - float| in output steps over `inputs`, after
    checking that ptec-run gives the reference interpreter's bytes for each."""
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    for (x,) in inputs:
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(workdir))[0]
        assert got.tobytes() == want.tobytes(), "ptec-run differs from the reference interpreter"
        with torch.no_grad():
            worst = max(worst, float(np.abs(got - model(x).numpy()).max() / step))
    print(f"worst |ptec - float|: {worst:.2f} output steps")
    return worst


def board_matches_reference(data: bytes, x: np.ndarray, target: str, workdir) -> None:
    """The program runs in `target`'s runner firmware under QEMU and prints
    the reference interpreter's output bytes for input x."""
    elf = os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")
    if shutil.which("qemu-system-arm") is None or not os.path.exists(elf):
        pytest.skip(f"no QEMU or no runner firmware for {target}")
    prog = parse_program(data)
    plan = prog.plan()
    t_in, t_out = plan.values[plan.inputs[0]].val, plan.values[plan.outputs[0]].val
    want = run_program(prog, [x])[0]
    (workdir / "m.pte").write_bytes(data)
    (workdir / "in.bin").write_bytes(np.ascontiguousarray(x.transpose(list(t_in.dim_order)), np.float32).tobytes())
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", target, "--elf", elf,
                          "--model", str(workdir / "m.pte"), "--input", str(workdir / "in.bin"),
                          "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    hex_bytes = "".join(line.split()[2] for line in run.stdout.splitlines() if line.startswith("@out0 "))
    assert bytes.fromhex(hex_bytes) == np.ascontiguousarray(want.transpose(list(t_out.dim_order))).tobytes(), \
        run.stdout[-2000:]
