"""Writes the fuzzer's seed corpus: one program for each structure the loader
handles, so that mutations start from every path rather than rediscover it.

  upstream samples         legacy constant_buffer (ModuleLinear), segment
                           constants (add), an inline delegate (Ethos-U)
  ethos_u_segment_blob     the same delegate with its blob in a segment
  ds_cnn_small_*, portable_small
                           ptec-built programs: segment constants, every
                           cortex_m and portable kernel family
  legacy_constants         a ptec-built program with its constants moved to
                           the legacy constant_buffer layout
  control_flow             move, jump_false (taken and not taken), free
  plan_none                no planned memory: inputs and outputs bound
  plan_two_buffers         tensors in memory ids 1 and 2
  plan_input_only          planned input, unplanned output
  plan_view                two tensors over the same planned bytes

Usage: make_seed_corpus.py <shared dir> <out dir>"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import numpy as np  # noqa: E402

from ptec.pte.program_builder import ProgramBuilder  # noqa: E402
from ptec.pte.reader import read_program  # noqa: E402
from ptec.pte.schema import (AllocationDetails, Buffer, DataLocation, FreeCall,  # noqa: E402
                             Instruction, JumpFalseCall, MoveCall, ScalarType,
                             SubsegmentOffsets)
from ptec.pte.writer import write_program  # noqa: E402

UPSTREAM_SAMPLES = ["add.pte", "add_arduino.pte", "ModuleLinear-no-constant-segment.pte",
                    "ethos_u_minimal_example.pte"]
F32 = ScalarType.FLOAT


def add_program(b, x, other, out):
    b.call("aten::add.out", self=x, other=other, alpha=1, out=out)


def ethos_u_segment_blob(upstream):
    program = read_program(os.path.join(upstream, "ethos_u_minimal_example.pte"))
    delegate = program.execution_plan[0].delegates[0]
    blob = program.backend_delegate_data[delegate.processed.index].data
    program.segment_data.append(blob)
    program.segments = list(program.segments or []) + [None]
    delegate.processed.location = DataLocation.SEGMENT
    delegate.processed.index = len(program.segment_data) - 1
    program.backend_delegate_data = []
    return program


def legacy_constants():
    b = ProgramBuilder()
    x, y, z = (b.tensor(F32, [2, 3]) for _ in range(3))
    add_program(b, x, b.constant(np.arange(6, dtype=np.float32).reshape(2, 3)), y)
    b.call("aten::mul.out", self=y, other=b.constant(np.full((2, 3), 0.5, np.float32)), out=z)
    b.set_io([x], [z])
    program = b.build()
    blobs = program.segment_data[0]
    offsets = program.constant_segment.offsets
    ends = offsets[1:] + [len(blobs)]
    sizes = [6 * 4, 6 * 4]
    program.constant_buffer = [Buffer(b"")] + [Buffer(bytes(blobs[o:o + n])) for o, n in zip(offsets[1:], sizes)]
    assert all(o + n <= e for o, n, e in zip(offsets[1:], sizes, ends[1:]))
    program.constant_segment = SubsegmentOffsets(0, [])
    program.segment_data, program.segments = [], []
    return program


def control_flow():
    """add; jump_false(true) falls through; jump_false(false) skips a mul;
    move the sum into the output slot; free the temporary."""
    b = ProgramBuilder()
    x, t, u, y = (b.tensor(F32, [4]) for _ in range(4))
    one = b.constant(np.ones(4, np.float32))
    add_program(b, x, one, t)
    yes, no = b.bool(True), b.bool(False)
    b.instructions.append(Instruction(JumpFalseCall(yes, len(b.instructions) + 1)))
    b.instructions.append(Instruction(JumpFalseCall(no, len(b.instructions) + 2)))
    b.call("aten::mul.out", self=t, other=one, out=u)
    b.instructions.append(Instruction(MoveCall(t, y)))
    b.instructions.append(Instruction(FreeCall(u)))
    b.set_io([x], [y])
    return b.build()


def plan_none():
    b = ProgramBuilder()
    x, y = b.tensor(F32, [2, 2], planned=False), b.tensor(F32, [2, 2], planned=False)
    add_program(b, x, b.constant(np.ones((2, 2), np.float32)), y)
    b.set_io([x], [y])
    return b.build()


def plan_two_buffers():
    b = ProgramBuilder()
    x, t, y = (b.tensor(F32, [8]) for _ in range(3))
    one = b.constant(np.ones(8, np.float32))
    add_program(b, x, one, t)
    add_program(b, t, one, y)
    b.set_io([x], [y])
    program = b.build()
    plan = program.execution_plan[0]
    plan.values[t].val.allocation_info = AllocationDetails(2, 0, 0)
    plan.non_const_buffer_sizes = plan.non_const_buffer_sizes + [32]
    return program


def plan_input_only():
    b = ProgramBuilder()
    x, y = b.tensor(F32, [3]), b.tensor(F32, [3], planned=False)
    add_program(b, x, b.constant(np.ones(3, np.float32)), y)
    b.set_io([x], [y])
    return b.build()


def plan_view():
    b = ProgramBuilder()
    x, y = b.tensor(F32, [2, 3]), b.tensor(F32, [2, 3])
    add_program(b, x, b.constant(np.ones((2, 3), np.float32)), y)
    flat = b.view(y, [6])
    b.set_io([x], [flat])
    return b.build()


def main():
    shared, out = sys.argv[1], sys.argv[2]
    upstream = os.path.join(shared, "models", "upstream")
    os.makedirs(out, exist_ok=True)
    for name in UPSTREAM_SAMPLES:
        shutil.copyfile(os.path.join(upstream, name), os.path.join(out, name))
    subprocess.run([sys.executable, os.path.join(HERE, "..", "c", "make_fuzz_programs.py"), out], check=True)
    built = {"ethos_u_segment_blob": ethos_u_segment_blob(upstream), "legacy_constants": legacy_constants(),
             "control_flow": control_flow(), "plan_none": plan_none(), "plan_two_buffers": plan_two_buffers(),
             "plan_input_only": plan_input_only(), "plan_view": plan_view()}
    for name, program in built.items():
        write_program(program, os.path.join(out, name + ".pte"))


if __name__ == "__main__":
    main()
