"""Writes the fuzzer's seed corpus: one program for each structure the loader
handles, so that mutations start from every path rather than rediscover it.

  upstream samples         legacy constant_buffer (ModuleLinear), segment
                           constants (add), an inline delegate (Ethos-U)
  ethos_u_segment_blob     the same delegate with its blob in a segment
  ethos_u_fast_scratch_spec
                           the same with ptec's fast-scratch compile spec
  ds_cnn_small_*, portable_small, index_small, random_small, bool_small
                           ptec-built programs: segment constants, every
                           cortex_m and portable kernel family (portable_small
                           samples a plane and a volume at grids made of its
                           input's bytes and takes the singular and
                           symmetric eigenvalues of them as matrices;
                           index_small:
                           argmax, argmin, the int64-to-float32 copy, a
                           max pool's window indices and the unpool by
                           them, an embedding of int64 ids, sort and topk,
                           median, mode and cummax,
                           a gather by an index, two index tensors as one
                           position (flat_index) and bag positions from
                           offsets (bag_positions), each looked up by an
                           embedding, argmax's indices floor-divided,
                           remainder and fmod by int64 constants and
                           narrowed to int32; random_small: the random
                           dropout and fractional pick; bool_small:
                           comparisons, logical ops, where, casts of a bool,
                           a masked_select into a bound-dynamic output, an
                           index by a bool mask over the rows)
  legacy_constants         a ptec-built program with its constants moved to
                           the legacy constant_buffer layout
  control_flow             move, jump_false (taken and not taken), free
  plan_none                no planned memory: inputs and outputs bound
  plan_two_buffers         tensors in memory ids 1 and 2
  plan_input_only          planned input, unplanned output
  plan_view                two tensors over the same planned bytes
  state                    a planned tensor with an initial value
                           (mutable_data_segments), written back each run

With --hostile DIR it also writes the Ethos-U sample with one lie in its
delegate blob each (lying lengths, a block past the end, no end marker, bad
COP1 records, I/O outside the scratch area or in another region, a config
word of another NPU, a fast-scratch spec that is no byte count, ...): programs the EthosUBackend must refuse cleanly.
They seed the fuzzer but do not run to the end, so they live apart from the
seeds (tests/c/test_ethos_u_delegate.c checks each refusal's message).

Usage: make_seed_corpus.py <shared dir> <out dir> [--hostile DIR]"""
import os
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import numpy as np  # noqa: E402

from ptec.pte.program_builder import ProgramBuilder  # noqa: E402
from ptec.pte.reader import read_program  # noqa: E402
from ptec.pte.schema import (AllocationDetails, Buffer, CompileSpec, FreeCall,  # noqa: E402
                             Instruction, JumpFalseCall, MoveCall, ScalarType,
                             SubsegmentOffsets)
from ptec.pte.writer import write_program  # noqa: E402
from pte_edits import move_delegate_blob_to_segment  # noqa: E402

UPSTREAM_SAMPLES = ["add.pte", "add_arduino.pte", "ModuleLinear-no-constant-segment.pte",
                    "ethos_u_minimal_example.pte"]
F32 = ScalarType.FLOAT


def add_program(b, x, other, out):
    b.call("aten::add.out", self=x, other=other, alpha=1, out=out)


def ethos_u_segment_blob(upstream):
    program = read_program(os.path.join(upstream, "ethos_u_minimal_example.pte"))
    move_delegate_blob_to_segment(program)
    return program


def vela_blocks(blob):
    """{name: (header offset, payload offset, size)} of a vela_bin_stream."""
    blocks, pos = {}, 0
    while pos + 32 <= len(blob):
        name = blob[pos:pos + 16].rstrip(b"\0").decode()
        size = struct.unpack_from("<I", blob, pos + 16)[0]
        blocks[name] = (pos, pos + 32, size)
        pos += 32 + (size + 15) // 16 * 16
    return blocks


def ethos_u_hostile_blobs(upstream):
    """The sample's blob with one lie each (same length, edited in place)."""
    def edit(blob, at, data):
        blob[at:at + len(data)] = data

    def u32(value):
        return struct.pack("<I", value)

    base = bytes(read_program(os.path.join(upstream, "ethos_u_minimal_example.pte")).backend_delegate_data[0].data)
    blocks = vela_blocks(base)
    cmd = blocks["cmd_data"][1]
    inputs, outputs = blocks["inputs"][1], blocks["outputs"][1]
    lies = {
        "cmd_size_lies": lambda b: edit(b, blocks["cmd_data"][0] + 16, u32(0xFFFFFFF0)),
        "cmd_past_end": lambda b: edit(b, blocks["cmd_data"][0] + 16, u32(len(base))),
        "inputs_size_lies": lambda b: edit(b, blocks["inputs"][0] + 16, u32(72)),
        "input_count_lies": lambda b: edit(b, inputs, u32(0x80000000)),
        "no_end_marker": lambda b: edit(b, blocks["vela_end_stream"][0], b"vela_end_strean"),
        "unknown_block": lambda b: edit(b, blocks["scratch_size"][0], b"scratch_sizf"),
        "blocks_out_of_order": lambda b: edit(b, blocks["inputs"][0], b"outputs\0"),
        "external_block": lambda b: edit(b, blocks["weight_data"][0] + 20, b"\1"),
        "bad_fourcc": lambda b: edit(b, cmd, b"COPX"),
        "cop_unknown_action": lambda b: edit(b, cmd + 16, u32(9)),
        "cop_stream_too_long": lambda b: edit(b, cmd + 28, u32(0x00FF0002)),
        "io_offset_past_scratch": lambda b: edit(b, inputs + 4 + 28, u32(144)),
        "io_offset_wraps": lambda b: edit(b, outputs + 4 + 28, u32(0xFFFFFFFF)),
        "io_shape_huge": lambda b: edit(b, inputs + 4, u32(0x7FFFFFFF) * 6),
        "io_region_3": lambda b: edit(b, outputs + 4 + 32, u32(3)),
        "scratch_too_small": lambda b: edit(b, blocks["scratch_size"][1], u32(64)),
        "stream_past_scratch": lambda b: edit(b, blocks["scratch_size"][1], u32(80)),
        "config_word_u65": lambda b: edit(b, cmd + 8, u32(0x10003008)),
        "config_more_shram": lambda b: edit(b, cmd + 8, u32(0x00003007)),
    }
    programs = {}
    for name, lie in lies.items():
        program = read_program(os.path.join(upstream, "ethos_u_minimal_example.pte"))
        blob = bytearray(base)
        lie(blob)
        program.backend_delegate_data[0].data = bytes(blob)
        programs["ethos_u_hostile_" + name] = program
    return programs


def with_fast_scratch_spec(upstream, value: bytes):
    """The Ethos-U sample carrying ptec's fast-scratch compile spec (what a
    Dedicated_Sram program of ptec's compiler has)."""
    program = read_program(os.path.join(upstream, "ethos_u_minimal_example.pte"))
    d = program.execution_plan[0].delegates[0]
    d.compile_specs = list(d.compile_specs or []) + [CompileSpec("ptec_fast_scratch_bytes", value)]
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


def state():
    """A state tensor with an initial value in mutable_data_segments[0]
    (after the constant segment), read and written back by each run."""
    b = ProgramBuilder()
    x, y = b.tensor(F32, [3]), b.tensor(F32, [3])
    s = b.state(F32, [3], np.array([0.5, -1.0, 2.0], np.float32).tobytes())
    add_program(b, x, s, y)
    b.call("aten::view_copy.out", self=y, size=[3], out=s)
    b.set_io([x], [y])
    return b.build()


def main():
    shared, out = sys.argv[1], sys.argv[2]
    hostile = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--hostile" else None
    upstream = os.path.join(shared, "models", "upstream")
    os.makedirs(out, exist_ok=True)
    for name in UPSTREAM_SAMPLES:
        shutil.copyfile(os.path.join(upstream, name), os.path.join(out, name))
    subprocess.run([sys.executable, os.path.join(HERE, "..", "c", "make_fuzz_programs.py"), out], check=True)
    built = {"ethos_u_segment_blob": ethos_u_segment_blob(upstream),
             "ethos_u_fast_scratch_spec": with_fast_scratch_spec(upstream, b"64"),
             "legacy_constants": legacy_constants(),
             "control_flow": control_flow(), "plan_none": plan_none(), "plan_two_buffers": plan_two_buffers(),
             "plan_input_only": plan_input_only(), "plan_view": plan_view(), "state": state()}
    for name, program in built.items():
        write_program(program, os.path.join(out, name + ".pte"))
    if hostile is not None:
        os.makedirs(hostile, exist_ok=True)
        for name, program in ethos_u_hostile_blobs(upstream).items():
            write_program(program, os.path.join(hostile, name + ".pte"))
        for name, value in (("letters", b"12a"), ("above_u32", b"4294967296"), ("empty", b""),
                            ("signed", b"-1"), ("eleven_digits", b"00000000001")):
            write_program(with_fast_scratch_spec(upstream, value),
                          os.path.join(hostile, f"ethos_u_hostile_fast_scratch_{name}.pte"))


if __name__ == "__main__":
    main()
