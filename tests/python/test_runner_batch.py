"""The firmware runner's batch mode: k blocks of input bytes at the input slot
give k inferences, each reported as "infer k: class c" plus its output bytes
("@b<k>.out<i>" lines), which must equal ptec-run's on the host for the same
input, byte for byte. Uses the compiled digits CNN and a few held-out test
images, on every core's board. Skipped unless the host and cortex-m presets are
built and qemu-system-arm exists."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from ptec.compiler import compile_model
from ptec.models import load_model
from ptec.models.digits import digits_dataset
from ptec.targets import CORES

from runtime_util import PTEC_RUN, ROOT

RUN_QEMU = os.path.join(ROOT, "scripts", "run_qemu.sh")
IMAGES = 5


def runner_elf(target):
    return os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")


def batch_outputs(text):
    """{inference: {output: bytes}} and {inference: class} from the runner's log."""
    outputs = {}
    for m in re.finditer(r"^@b(\d+)\.out(\d+) ([0-9a-f]+) ([0-9a-f]*)$", text, re.M):
        k, i, offset, data = int(m.group(1)), int(m.group(2)), int(m.group(3), 16), m.group(4)
        buf = outputs.setdefault(k, {}).setdefault(i, bytearray())
        assert offset == len(buf), f"@b{k}.out{i} at offset {offset}, expected {len(buf)}"
        buf += bytes.fromhex(data)
    classes = {int(m.group(1)): int(m.group(2))
               for m in re.finditer(r"^infer +(\d+): class +(-?\d+) +\d+ instructions$", text, re.M)}
    return outputs, classes


@pytest.fixture(scope="module")
def digits_model():
    return load_model("digits_cnn")


@pytest.mark.parametrize("target", CORES)
def test_batch_equals_ptec_run(tmp_path, digits_model, target):
    if shutil.which("qemu-system-arm") is None or not os.path.exists(runner_elf(target)):
        pytest.skip(f"no QEMU or no runner firmware for {target} (build the {target} preset)")
    if not os.path.exists(PTEC_RUN):
        pytest.skip("no ptec-run (build the host preset)")
    m = digits_model
    res = compile_model(m.module, m.example_inputs, m.calibration(16), target=target)
    pte = tmp_path / "digits.pte"
    pte.write_bytes(res.data)
    _, _, xte, _ = digits_dataset()
    images = [np.ascontiguousarray(xte[i], np.float32) for i in range(IMAGES)]  # NHWC = NCHW, C = 1
    batch = tmp_path / "batch.bin"
    batch.write_bytes(b"".join(x.tobytes() for x in images))

    run = subprocess.run([RUN_QEMU, "--target", target, "--elf", runner_elf(target), "--model",
                          str(pte), "--input", str(batch), "--timeout", "60"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    assert f"batch: {IMAGES} inferences" in run.stdout
    assert not re.search(r"^@out\d", run.stdout, re.M), "batch mode prints no single-run @out lines"
    outputs, classes = batch_outputs(run.stdout)
    assert sorted(outputs) == list(range(IMAGES)) and sorted(classes) == list(range(IMAGES))

    for k, x in enumerate(images):
        raw = tmp_path / f"in{k}.bin"
        raw.write_bytes(x.tobytes())
        out_dir = tmp_path / f"host{k}"
        host = subprocess.run([PTEC_RUN, str(pte), "--input", str(raw), "--output-dir", str(out_dir)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert host.returncode == 0, host.stdout
        want = (out_dir / "output0.bin").read_bytes()
        assert bytes(outputs[k][0]) == want, f"inference {k} differs from ptec-run"
        assert classes[k] == int(np.argmax(np.frombuffer(want, np.float32)))

