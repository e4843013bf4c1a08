"""Issue 11's person_detect oracle (ethos-u-npu.md §8.2, "full oracle"): the
Vela-compiled person_detect_vela.tflite (ethos-u55-256) run on ptec's NPU
model gives the same two output bytes as person_detect.tflite imported on the
cortex_m kernels (ptec's TFLite int8 reference, itself checked layer by layer
against a numpy TFLite reference in test_tflite_import_int8.py), for
person.bmp and no_person.bmp (TFLM's raw-byte input convention) and 100
seeded random inputs (person_detect_oracle.py).

The NPU side runs the COP1 stream with region 0 = the flash tensor and region
1 = the 74,464-byte scratch holding the input at offset 0, configured as an
ethos-u55-256, through tests/c/npu/npu_weights_dump (the model's driver-level
entry; the output is scratch bytes 0..1, models/ethos-u/README.md). The same
model through the EthosUBackend delegate is test_vela_import_run.py's."""
import os
import subprocess

import numpy as np

from conftest import ROOT
from person_detect_oracle import TFLM, oracle_inputs, reference_outputs
from ptec.tflite import read_model

NPU_RUN = os.path.join(ROOT, "build", "host", "tests", "c", "npu", "npu_weights_dump")
VELA_MODEL = os.path.join(TFLM, "person_detect_vela.tflite")


def test_person_detect_vela_on_the_npu_model_equals_the_cortex_m_reference(tmp_path):
    assert os.path.exists(NPU_RUN), "build the host preset first (make host)"
    g = read_model(VELA_MODEL).subgraphs[0]
    (op,) = g.operators
    cop, flash, scratch = (g.tensors[i] for i in op.inputs[:3])
    cop_path, flash_path = tmp_path / "cop.bin", tmp_path / "flash.bin"
    cop_path.write_bytes(cop.array().tobytes())
    flash_path.write_bytes(flash.array().tobytes())
    named = oracle_inputs()
    references = reference_outputs([x for _, x in named])
    differ = []
    for (name, x), ref in zip(named, references):
        raw = tmp_path / "input.bin"
        raw.write_bytes(np.ascontiguousarray(x, np.int8).tobytes())   # NHWC, 9,216 bytes
        proc = subprocess.run([NPU_RUN, "ethos-u55-256", str(cop_path), str(flash_path),
                               str(scratch.numel), str(tmp_path / "ops.bin"), str(raw)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"{name}: {proc.stderr}"
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("output ")]
        assert line, proc.stdout
        npu = np.array([int(b) for b in line[0].split()[1:3]], np.uint8).view(np.int8)
        if not np.array_equal(npu, ref):
            differ.append(f"{name}: NPU {npu.tolist()} reference {ref.tolist()}")
    assert not differ, f"{len(differ)} of {len(named)} inputs differ: " + "; ".join(differ[:5])
    # TFLM's smoke check holds on the NPU too: person wins on person.bmp only
    assert references[0][1] > references[0][0] and references[1][0] > references[1][1]
