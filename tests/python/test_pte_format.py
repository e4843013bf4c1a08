"""The .pte reader and writer against the upstream sample files and flatc."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, UPSTREAM_FILES
from flatc_util import assert_same, flatc_json, have_flatc
from ptec.pte import (Null, ScalarType, Tensor, parse_program, read_header, read_program,
                      serialize_program)
from ptec.pte.jsonview import to_flatc_json
from ptec.pte.program_builder import ProgramBuilder

needs_flatc = pytest.mark.skipif(not have_flatc(), reason="flatc not installed")


def small_program():
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [1, 4])
    q = b.tensor(ScalarType.CHAR, [1, 4])
    y = b.tensor(ScalarType.FLOAT, [1, 4])
    b.call("cortex_m::quantize_per_tensor.out", input=x, scale=0.05, zero_point=3,
           quant_min=-128, quant_max=127, dtype=ScalarType.CHAR, out=q)
    w = b.constant(np.arange(16, dtype=np.int8).reshape(4, 4))
    bias = b.constant(np.array([1, -2, 3, -4], np.int32))
    q2 = b.tensor(ScalarType.CHAR, [1, 4])
    b.call("cortex_m::quantized_linear.out", input=q, weights=w, bias=bias, kernel_sum=None,
           input_offset=-3, filter_offset=0, output_offset=1,
           requantize_multipliers=[1 << 30], requantize_shifts=[-3],
           activation_max=127, activation_min=-128, out=q2)
    b.call("cortex_m::dequantize_per_tensor.out", input=q2, scale=0.1, zero_point=1,
           quant_min=-128, quant_max=127, dtype=ScalarType.CHAR, out=y)
    b.set_io([x], [y])
    return b.build()


@pytest.mark.parametrize("name", UPSTREAM_FILES)
def test_roundtrip_upstream(upstream, name, tmp_path):
    path = os.path.join(upstream, name)
    prog = read_program(path)
    data = serialize_program(prog)
    again = parse_program(data)
    assert again == prog
    # The layout decisions match upstream: same header and segment placement.
    orig = read_header(open(path, "rb").read())
    new = read_header(data)
    assert new.has_extended_header == orig.has_extended_header
    if orig.has_extended_header:
        assert new.segment_base_offset % 128 == 0
        assert new.segment_data_size == orig.segment_data_size
    if have_flatc():
        out = tmp_path / name
        out.write_bytes(data)
        assert flatc_json(str(out)) == flatc_json(path)


@needs_flatc
@pytest.mark.parametrize("name", UPSTREAM_FILES)
def test_reader_agrees_with_flatc_upstream(upstream, name):
    path = os.path.join(upstream, name)
    assert_same(to_flatc_json(read_program(path)), flatc_json(path))


@needs_flatc
def test_reader_agrees_with_flatc_on_written_file(tmp_path):
    path = tmp_path / "small.pte"
    path.write_bytes(serialize_program(small_program()))
    assert_same(to_flatc_json(read_program(str(path))), flatc_json(str(path)))


def test_written_layout():
    prog = small_program()
    data = serialize_program(prog)
    assert data[4:8] == b"ET12" and data[8:12] == b"eh00"
    hlen, program_size, base, seg_size = struct.unpack_from("<IQQQ", data, 12)
    assert hlen == 32 and base % 128 == 0 and base >= program_size
    assert base + seg_size == len(data)
    assert struct.unpack_from("<I", data, 0)[0] >= 40     # root is after the header
    back = parse_program(data)
    cs = back.constant_segment
    assert cs.offsets[0] == 0 and all(o % 16 == 0 for o in cs.offsets)
    plan = back.plan("forward")
    tensors = [v.val for v in plan.values if isinstance(v.val, Tensor)]
    planned = [t for t in tensors if t.allocation_info is not None]
    assert planned and all(t.allocation_info.memory_id == 1 for t in planned)
    assert plan.non_const_buffer_sizes[0] == 0
    for t in planned:
        assert t.allocation_info.offset + t.nbytes <= plan.non_const_buffer_sizes[1]
    # IntLists are boxed: items are value indices of Int values.
    call = plan.chains[0].instructions[1].instr_args
    mult_list = plan.values[call.args[7]].val
    assert plan.values[mult_list.items[0]].val.int_val == 1 << 30
    assert isinstance(plan.values[call.args[3]].val, Null)       # kernel_sum None
    assert call.args[-1] == call.args[-2]                        # return slot repeats out
    w = plan.values[call.args[1]].val
    assert np.frombuffer(back.constant_bytes(w), np.int8).tolist() == list(range(16))


def test_no_header_without_segment_data():
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [2])
    y = b.tensor(ScalarType.FLOAT, [2])
    b.call("aten::add.out", self=x, other=x, alpha=1, out=y)
    b.set_io([x], [y])
    data = serialize_program(b.build())
    assert data[8:12] != b"eh00"
    assert parse_program(data).plan().chains[0].instructions[0].instr_args.args == [0, 0, 2, 1, 1]


def test_inspect_cli(upstream):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    files = [os.path.join(upstream, f) for f in UPSTREAM_FILES]
    out = subprocess.run([sys.executable, "-m", "ptec", "inspect"] + files, env=env,
                         check=True, capture_output=True, text=True).stdout
    assert "aten::add.out" in out
    assert "legacy constant_buffer, 2 entries, 32 bytes" in out
    assert "delegate [0] id='EthosUBackend' location=INLINE index=0 size=1312 bytes" in out
    assert "arena 1: 48 bytes" in out
    assert "alpha v3: Int 1" in out


def test_rejects_bad_files():
    from ptec.pte import PteError
    with pytest.raises(PteError):
        parse_program(b"\x00" * 16)
    data = bytearray(serialize_program(small_program()))
    with pytest.raises(PteError):
        parse_program(bytes(data[:200]))


@pytest.mark.parametrize("name", UPSTREAM_FILES)
def test_corrupted_files_fail_cleanly(upstream, name):
    """Random byte corruption gives a PteError or a program, nothing else."""
    from ptec.pte import PteError
    data = open(os.path.join(upstream, name), "rb").read()
    rng = np.random.default_rng(len(data))
    for _ in range(300):
        buf = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            buf[int(rng.integers(0, len(buf)))] = int(rng.integers(0, 256))
        if rng.random() < 0.2:
            buf = buf[:int(rng.integers(8, len(buf)))]
        try:
            parse_program(bytes(buf))
        except PteError:
            pass


@needs_flatc
def test_inspect_json_equals_flatc(upstream):
    import json
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    for name in UPSTREAM_FILES:
        path = os.path.join(upstream, name)
        out = subprocess.run([sys.executable, "-m", "ptec", "inspect", "--json", path], env=env,
                             check=True, capture_output=True, text=True).stdout
        assert_same(json.loads(out), flatc_json(path))
