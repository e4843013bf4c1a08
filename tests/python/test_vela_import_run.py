"""Vela models imported by `ptec import-tflite` on the host runtime (ptec-run). What the
build can do decides what is checked, and every branch checks something:

* no EthosUBackend in the build: the load fails naming the backend and the size of the
  blob the importer wrote (the C runtime found the delegate's segment);
* an EthosUBackend for another NPU: the load fails naming both NPUs;
* an EthosUBackend for the model's NPU: kws gives Arm's expected.bin
  (models/ethos-u/arm/.../README.md) and person_detect gives the bytes of
  person_detect.tflite imported on the cortex_m kernels (issue 11's person_detect oracle).
"""
import os
import re
import subprocess

import numpy as np
import pytest

from conftest import SHARED
from ptec.tflite import import_tflite, read_model
from runtime_util import PTEC_RUN

MODELS = os.path.join(SHARED, "models", "ethos-u")
KWS_DIR = os.path.join(MODELS, "arm", "kws_cnn_small-ethos-u65-256")
CASES = {
    "kws": (os.path.join(KWS_DIR, "model.tflite"), "ethos-u65-256"),
    "person_detect": (os.path.join(MODELS, "tflm", "person_detect_vela.tflite"),
                      "ethos-u55-256"),
}


def _run(pte, inp, out_dir):
    return subprocess.run([PTEC_RUN, str(pte), "--input", str(inp), "--output-dir", str(out_dir)],
                          capture_output=True, text=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_imported_vela_model_on_ptec_run(tmp_path, case):
    assert os.path.exists(PTEC_RUN), "build the host preset first (make host)"
    path, target = CASES[case]
    pte = tmp_path / f"{case}.pte"
    data = import_tflite(path)
    pte.write_bytes(data)
    # the vela_bin_stream's length from the framing rule (ethos-u-delegate.md §2.1): seven
    # 32-byte headers, payloads padded to 16: cmd_data, weight_data, scratch_size, the two
    # I/O tables of one 36-byte entry each
    g = read_model(path).subgraphs[0]
    cmd, flash = (len(g.tensors[i].data) for i in g.operators[0].inputs[:2])
    blob_len = 7 * 32 + sum((n + 15) // 16 * 16 for n in (cmd, flash, 4, 40, 40))
    if case == "kws":
        inp = os.path.join(KWS_DIR, "input.bin")
    else:
        inp = tmp_path / "input.bin"
        inp.write_bytes(np.random.default_rng(3).integers(-128, 128, 9216, np.int8).tobytes())
    ops = subprocess.run([PTEC_RUN, "--list-ops"], capture_output=True, text=True).stdout
    built = re.search(r"\n  EthosUBackend \(NPU (\S+),", ops)
    proc = _run(pte, inp, tmp_path / "out")
    if "\n  EthosUBackend" not in ops:
        assert proc.returncode == 1
        assert (f"backend EthosUBackend not available in this build (delegate 0, "
                f"{blob_len}-byte blob)") in proc.stderr, proc.stderr
    elif built is None or built.group(1) != target:
        assert proc.returncode == 1
        assert f"blob is for {target}, this build drives" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        got = (tmp_path / "out" / "output0.bin").read_bytes()
        if case == "kws":
            with open(os.path.join(KWS_DIR, "expected.bin"), "rb") as f:
                assert got == f.read()
        else:
            ref = tmp_path / "ref.pte"
            ref.write_bytes(import_tflite(os.path.join(MODELS, "tflm", "person_detect.tflite")))
            r = _run(ref, inp, tmp_path / "ref-out")
            assert r.returncode == 0, r.stderr
            assert got == (tmp_path / "ref-out" / "output0.bin").read_bytes()
