"""Writes the delegate programs the mock-backend test loads, each with a
sidecar naming its planned-buffer sizes as the writer put them (the test's
oracle for what the backend must see, independent of the C reader):

  ethos_two_buffers.pte    upstream's Ethos-U sample with a second planned
                           buffer (memory id 2) that no tensor uses, so the
                           backend has two planned buffers of distinct sizes
  ethos_two_buffers.sizes  "48 208": non_const_buffer_sizes[1:]"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from ptec.pte.reader import read_program  # noqa: E402
from ptec.pte.writer import write_program  # noqa: E402

SECOND_BUFFER_BYTES = 208

shared, out_dir = sys.argv[1], sys.argv[2]
os.makedirs(out_dir, exist_ok=True)
program = read_program(os.path.join(shared, "models", "upstream", "ethos_u_minimal_example.pte"))
plan = program.execution_plan[0]
plan.non_const_buffer_sizes = list(plan.non_const_buffer_sizes) + [SECOND_BUFFER_BYTES]
write_program(program, os.path.join(out_dir, "ethos_two_buffers.pte"))
with open(os.path.join(out_dir, "ethos_two_buffers.sizes"), "w") as f:
    f.write(" ".join(str(n) for n in plan.non_const_buffer_sizes[1:]) + "\n")
