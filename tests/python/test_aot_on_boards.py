"""Compiled models on the emulated boards: every zoo model, `ptec compile`d for
each target and run in the QEMU runner firmware, gives output bytes equal to
the host runtime's (ptec-run) and to the numpy reference interpreter.
Skipped unless the cortex-m presets are built and qemu exists (a failure
under make test, PTEC_STRICT=1)."""
import importlib.util
import os
import shutil
import subprocess

import numpy as np
import pytest

from conftest import ROOT
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec import host_runtime
from ptec.models import ZOO, load_model
from ptec.pte import NUMPY_DTYPE, ScalarType, parse_program

RUN_QEMU = os.path.join(ROOT, "scripts", "run_qemu.sh")
_spec = importlib.util.spec_from_file_location(
    "run_and_compare", os.path.join(ROOT, "tests", "target", "run_and_compare.py"))
run_and_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_and_compare)


def runner_elf(target):
    return os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", list(ZOO))
def test_compiled_model_on_board(tmp_path, target, name):
    if shutil.which("qemu-system-arm") is None or not os.path.exists(runner_elf(target)):
        pytest.skip(f"no QEMU or no runner firmware for {target} (build the {target} preset)")
    m = load_model(name)
    res = compile_model(m.module, m.example_inputs, m.calibration(8), target=target)
    prog = parse_program(res.data)
    pte = tmp_path / "model.pte"
    pte.write_bytes(res.data)
    x = m.calibration(1, 17)[0][0].numpy()
    t = prog.plan().values[prog.plan().inputs[0]].val
    phys = x.reshape(t.sizes).transpose(list(t.dim_order))
    raw = tmp_path / "in.bin"
    raw.write_bytes(np.ascontiguousarray(phys, NUMPY_DTYPE[ScalarType(t.scalar_type)]).tobytes())
    run = subprocess.run([RUN_QEMU, "--target", target, "--elf", runner_elf(target), "--model",
                          str(pte), "--input", str(raw), "--timeout", "120"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    got = run_and_compare.firmware_outputs(run.stdout)
    want = run_program(prog, [x])[0]
    host = host_runtime.run(prog, res.data, [x], workdir=str(tmp_path))[0]
    assert got == [np.ascontiguousarray(host).tobytes()], "board differs from ptec-run on the host"
    assert got == [np.ascontiguousarray(want).tobytes()], "board differs from the int8 reference"
