"""Run a Program through the host runtime (ptec-run) and read its outputs."""
import os
import subprocess

import numpy as np

from ptec.pte.writer import write_program

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PTEC_RUN = os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")


def run_program(program, inputs, tmp_path, name="model"):
    """Writes the program and the inputs (.npy), runs ptec-run, returns
    (completed process, list of output arrays)."""
    assert os.path.exists(PTEC_RUN), "build the host preset first (make host)"
    pte = os.path.join(str(tmp_path), name + ".pte")
    write_program(program, pte)
    args = [PTEC_RUN, pte, "--output-dir", os.path.join(str(tmp_path), name + "-out")]
    for i, array in enumerate(inputs):
        path = os.path.join(str(tmp_path), f"{name}-in{i}.npy")
        np.save(path, np.asarray(array, order="C"))  # keeps 0-d shapes
        args += ["--input", path]
    proc = subprocess.run(args, capture_output=True, text=True)
    outputs = []
    i = 0
    while proc.returncode == 0:
        path = os.path.join(str(tmp_path), name + "-out", f"output{i}.npy")
        if not os.path.exists(path):
            break
        outputs.append(np.load(path))
        i += 1
    return proc, outputs
