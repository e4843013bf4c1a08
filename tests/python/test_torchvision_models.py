"""torchvision's ShuffleNet-V2 0.5 and MobileNet-V3 small (issue 15's check):
captured, quantized and lowered entirely to int8 (no fp32 fallback), then
run by the numpy int8 reference interpreter, by ptec-run on the host and by
the QEMU runner firmware on the M55 and the M33 boards: the four must give
the same bytes. The cosine of the int8 result against PyTorch's float
result, on inputs like the calibration data, must be at least 0.99.

Weights are torchvision's random initialisation (no pretrained weights
offline) with batch-norm statistics randomised as the zoo does, so the
network's activations have the spread of a trained one; the structure (the
operators, shapes and the int8 paths they take) is what this checks."""
import functools
import os
import shutil
import subprocess

import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.models.common import randomize_batch_norm
from ptec.pte import NUMPY_DTYPE, ScalarType, parse_program
from test_aot_on_boards import RUN_QEMU, run_and_compare, runner_elf

NETWORKS = ("shufflenet_v2_x0_5", "mobilenet_v3_small")
COSINE = 0.99


@functools.lru_cache(maxsize=None)
def network(name):
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    randomize_batch_norm(model, seed=1)
    g = torch.Generator().manual_seed(2)
    calib = [(torch.randn(1, 3, 224, 224, generator=g),) for _ in range(8)]
    return model, calib


@functools.lru_cache(maxsize=None)
def compiled(name, target, workdir):
    model, calib = network(name)
    res = compile_model(model, list(calib[0]), calib, target=target)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(9)).numpy()
    t = prog.plan().values[prog.plan().inputs[0]].val
    raw = np.ascontiguousarray(x.reshape(t.sizes).transpose(list(t.dim_order)),
                               NUMPY_DTYPE[ScalarType(t.scalar_type)]).tobytes()
    want = np.ascontiguousarray(run_program(prog, [x])[0])
    host = np.ascontiguousarray(host_runtime.run(prog, res.data, [x], workdir=workdir)[0])
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy().ravel()
    return res.data, raw, want, host, ref


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("torchvision"))


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", NETWORKS)
def test_int8_everywhere_and_close_to_float(name, target, workdir, tmp_path):
    data, raw, want, host, ref = compiled(name, target, workdir)
    assert host.tobytes() == want.tobytes(), "ptec-run differs from the int8 reference"
    got = want.ravel().astype(np.float64)
    cosine = float(got @ ref / (np.linalg.norm(got) * np.linalg.norm(ref)))
    print(f"{name} {target}: cosine vs float {cosine:.4f}")
    assert cosine >= COSINE, cosine
    if shutil.which("qemu-system-arm") is None or not os.path.exists(runner_elf(target)):
        pytest.fail(f"no QEMU or no runner firmware for {target} (build the {target} preset)")
    pte = tmp_path / "model.pte"
    pte.write_bytes(data)
    inp = tmp_path / "in.bin"
    inp.write_bytes(raw)
    run = subprocess.run([RUN_QEMU, "--target", target, "--elf", runner_elf(target), "--model",
                          str(pte), "--input", str(inp), "--timeout", "600"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout[-3000:]
    assert run_and_compare.firmware_outputs(run.stdout) == [want.tobytes()], \
        "the board differs from the int8 reference"
