"""Writes the ptec-built programs that the hostile-file test corrupts, next
to the upstream samples: a DS-CNN for each ISA flavour (linear with bias, and
with kernel_sum), so that every cortex_m kernel's prepare() meets damaged
arguments."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from ptec.pte.builders import ds_cnn_program  # noqa: E402
from ptec.pte.writer import write_program  # noqa: E402

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
for target in ("cortex-m55", "cortex-m33"):
    program, _ = ds_cnn_program(seed=11, target=target, channels=8, blocks=1)
    write_program(program, os.path.join(out_dir, f"ds_cnn_small_{target}.pte"))
