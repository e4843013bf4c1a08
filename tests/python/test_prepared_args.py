"""Values no run reads keep no header, kernel side (PTEC_PREPARED_ARGS,
include/ptec/kernel.h): the cortex_m convolutions, linear and average pool
keep their constant operands' data pointers in their state at prepare, and
the load keeps no value or tensor header for a value that only such
arguments name. ptec.requirements and the host runtime agree to the byte
(one byte less fails), the run is bit-exact against the Python interpreter,
a value also named elsewhere (a method output or a tensor list's item)
stays kept, and a caller-bound input or a move destination at such an
argument is refused."""
import copy
import os
import subprocess

import numpy as np
import pytest

from conftest import ROOT
from ptec.backends.cortex_m.sample_programs import ds_cnn_program
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.pte.schema import (AllocationDetails, EValue, Instruction, Int, KernelCall, MoveCall, Null, Operator,
                             Tensor, TensorList)
from ptec.pte.writer import write_program
from ptec.requirements import RequirementsError, kept_flags, load_layouts, requirements
from test_requirements import assert_exact_on_host

PTEC_RUN = os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")
pytestmark = pytest.mark.skipif(not os.path.exists(PTEC_RUN), reason="no ptec-run (make host)")

# Argument positions each kernel's run reads through its state (the
# kernels' PTEC_PREPARED_ARGS): weight, bias, multipliers, shifts, scratch.
PREPARED = {"cortex_m::quantized_conv2d": (1, 2, 8, 9, 12),
            "cortex_m::quantized_depthwise_conv2d": (1, 2, 9, 10, 13),
            "cortex_m::quantized_linear": (1, 2, 3),
            "cortex_m::quantized_avg_pool2d": (8,)}


def _calls(plan):
    for ins in plan.chains[0].instructions:
        if isinstance(ins.instr_args, KernelCall):
            yield plan.operators[ins.instr_args.op_index].name, list(ins.instr_args.args)


def _run_host(tmp_path, program, x):
    path = tmp_path / "m.pte"
    write_program(program, str(path))
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    run = subprocess.run([PTEC_RUN, str(path), "--input", str(tmp_path / "x.npy"), "--output-dir", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return path, run, out


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_ds_cnn_constants_keep_no_header(tmp_path, target):
    program, _ = ds_cnn_program(seed=7, target=target)
    plan = program.plan()
    kept = kept_flags(plan, load_layouts()["lp64-SCALAR"])
    released = set()
    for name, args in _calls(plan):
        for j in PREPARED.get(name, ()):
            if not isinstance(plan.values[args[j]].val, Null):
                released.add(args[j])
    # 9 convolutions x 5, the linear's weights and bias or kernel_sum, the pool's scratch
    assert len(released) == 9 * 5 + 2 + 1
    assert not any(kept[i] for i in released)
    assert all(kept[i] for i in range(len(kept)) if isinstance(plan.values[i].val, Tensor) and i not in released)
    x = np.random.default_rng(1).normal(size=(1, 1, 49, 10)).astype(np.float32)
    path, run, out = _run_host(tmp_path, program, x)
    assert run.returncode == 0, run.stderr
    r = requirements(parse_program(path.read_bytes()), target="host")
    assert_exact_on_host(str(path), r)
    want = run_program(parse_program(path.read_bytes()), [x])[0]
    assert np.array_equal(np.load(out / "output0.npy"), want)


def test_prepared_arg_also_an_output_stays_kept(tmp_path):
    """The linear's kernel_sum (a constant its run reads through the state)
    is also a method output: it keeps its header (io reads it), the run is
    unchanged and output 1 is its bytes."""
    program, _ = ds_cnn_program(seed=7, target="cortex-m55")
    plan = program.plan()
    args = next(a for n, a in _calls(plan) if n == "cortex_m::quantized_linear")
    ksum = args[3]
    plan.outputs = list(plan.outputs) + [ksum]
    layout = load_layouts()["lp64-SCALAR"]
    assert kept_flags(plan, layout)[ksum]
    plain, _ = ds_cnn_program(seed=7, target="cortex-m55")
    # kept: one value header (16 B) and one tensor (40 B) more on the host
    # than the same program without the extra output (8 B: its I/O pointer).
    grown = requirements(program, target="host").metadata_bytes - requirements(plain, target="host").metadata_bytes
    assert grown == 16 + layout["sizes"]["tensor"] + 8
    x = np.random.default_rng(2).normal(size=(1, 1, 49, 10)).astype(np.float32)
    path, run, out = _run_host(tmp_path, program, x)
    assert run.returncode == 0, run.stderr
    assert_exact_on_host(str(path), requirements(parse_program(path.read_bytes()), target="host"))
    want = run_program(parse_program(path.read_bytes()), [x])
    assert np.array_equal(np.load(out / "output0.npy"), want[0])
    assert np.array_equal(np.load(out / "output1.npy"), want[1])


def test_caller_bound_input_at_a_prepared_arg_is_refused(tmp_path):
    """The linear's weights made a second method input with no memory of
    its own (bound by the caller): prepare would keep a data pointer the
    caller may change, so the load refuses it, naming the instruction."""
    program, _ = ds_cnn_program(seed=7, target="cortex-m55")
    plan = program.plan()
    args = next(a for n, a in _calls(plan) if n == "cortex_m::quantized_linear")
    w = plan.values[args[1]].val
    w.data_buffer_idx = 0
    w.allocation_info = None
    plan.inputs = list(plan.inputs) + [args[1]]
    x = np.random.default_rng(3).normal(size=(1, 1, 49, 10)).astype(np.float32)
    path = tmp_path / "m.pte"
    write_program(program, str(path))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", np.zeros(w.sizes, np.int8))
    run = subprocess.run([PTEC_RUN, str(path), "--input", str(tmp_path / "x.npy"), "--input", str(tmp_path / "w.npy")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run.returncode != 0
    assert "prepare-only argument is a caller-bound input or output" in run.stderr, run.stderr
    assert "quantized_linear" in run.stderr, run.stderr


def _linear(plan):
    k, ins = next((k, ins) for k, ins in enumerate(plan.chains[0].instructions)
                  if isinstance(ins.instr_args, KernelCall)
                  and plan.operators[ins.instr_args.op_index].name == "cortex_m::quantized_linear")
    return k, list(ins.instr_args.args)


def test_move_into_a_prepared_arg_is_refused(tmp_path):
    """A MoveCall of another constant (same shape and dtype, other bytes)
    into the linear's weights: the run reads the pointer prepare kept, so
    it would ignore the move. The load refuses it (NotSupported, naming
    the instruction), as do the runtime's and ptec.requirements' sizes."""
    program, _ = ds_cnn_program(seed=7, target="cortex-m55")
    plan = program.plan()
    k, args = _linear(plan)
    w = plan.values[args[1]].val
    nbytes = 12 * 64
    offsets = program.constant_segment.offsets
    seg = program.segment_data[0]
    at = (len(seg) + 15) // 16 * 16
    program.segment_data[0] = seg + bytes(at - len(seg)) + bytes([3]) * nbytes
    offsets.append(at)
    other = copy.deepcopy(w)
    other.data_buffer_idx = len(offsets) - 1
    plan.values.append(EValue(other))
    plan.chains[0].instructions.insert(k, Instruction(MoveCall(move_from=len(plan.values) - 1, move_to=args[1])))
    x = np.random.default_rng(4).normal(size=(1, 1, 49, 10)).astype(np.float32)
    path, run, out = _run_host(tmp_path, program, x)
    assert run.returncode != 0, "the move was ignored"
    assert "NotSupported" in run.stderr or "not supported" in run.stderr.lower(), run.stderr
    assert "prepare-only argument is a move destination" in run.stderr, run.stderr
    assert "quantized_linear" in run.stderr, run.stderr
    with pytest.raises(RequirementsError, match="move destination"):
        requirements(parse_program(path.read_bytes()), target="host")


def test_tensor_list_item_at_a_prepared_arg_stays_kept(tmp_path):
    """aten::cat.out([linear weights], 0, out) with out a method output:
    the weights are named at a prepare-only argument and as a list's item,
    which a kernel finds among the kept values; they keep their header,
    the program loads and runs, the output is the weights' bytes, and
    ptec.requirements equals the runtime's to the byte."""
    program, _ = ds_cnn_program(seed=7, target="cortex-m55")
    plan = program.plan()
    _, args = _linear(plan)
    w = plan.values[args[1]].val
    lay = load_layouts()["lp64-SCALAR"]
    assert not kept_flags(plan, lay)[args[1]]
    sizes = list(plan.non_const_buffer_sizes)
    out = copy.deepcopy(w)
    out.data_buffer_idx = 0
    out.allocation_info = AllocationDetails(memory_id=1, memory_offset_low=sizes[1])
    sizes[1] += 12 * 64
    plan.non_const_buffer_sizes = sizes
    n = len(plan.values)
    plan.values += [EValue(TensorList(items=[args[1]])), EValue(Int(0)), EValue(out)]
    plan.operators.append(Operator(name="aten::cat", overload="out"))
    plan.chains[0].instructions.append(
        Instruction(KernelCall(op_index=len(plan.operators) - 1, args=[n, n + 1, n + 2, n + 2])))
    plan.outputs = list(plan.outputs) + [n + 2]
    assert kept_flags(plan, lay)[args[1]]
    x = np.random.default_rng(5).normal(size=(1, 1, 49, 10)).astype(np.float32)
    path, run, outdir = _run_host(tmp_path, program, x)
    assert run.returncode == 0, run.stderr
    seg_off = program.constant_segment.offsets[w.data_buffer_idx]
    want = np.frombuffer(program.segment_data[0][seg_off:seg_off + 12 * 64], np.int8).reshape(12, 64)
    assert np.array_equal(np.load(outdir / "output1.npy"), want)
    assert_exact_on_host(str(path), requirements(parse_program(path.read_bytes()), target="host"))
