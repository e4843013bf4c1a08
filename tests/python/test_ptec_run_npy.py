"""ptec-run's .npy inputs and outputs honour shape and dim order (issue 10,
item 5a): an .npy holds the logical (PyTorch) shape in C or Fortran order,
whatever order the program stores the tensor in. The oracle is numpy's own
transpose of the array, not ptec-run's conversion code."""
import os
import subprocess

import numpy as np
import pytest

from ptec.pte.program_builder import CHANNELS_LAST, ProgramBuilder
from ptec.pte.schema import ScalarType
from ptec.pte.writer import write_program

from runtime_util import PTEC_RUN

rng = np.random.default_rng(10)
SHAPE = (1, 3, 4, 5)  # N, C, H, W


def clone_program(in_order, out_order):
    """One _clone_dim_order from an input stored in `in_order` to an output in `out_order`."""
    bld = ProgramBuilder()
    a = bld.tensor(ScalarType.FLOAT, SHAPE, in_order)
    b = bld.tensor(ScalarType.FLOAT, SHAPE, out_order)
    bld.call("dim_order_ops::_clone_dim_order.out", self=a, non_blocking=False,
             dim_order=out_order if out_order is not None else [0, 1, 2, 3], out=b)
    bld.set_io([a], [b])
    return bld.build()


def run(tmp_path, program, input_path, tag):
    if not os.path.exists(PTEC_RUN):
        pytest.skip("build the host preset first (make host)")
    pte = tmp_path / "model.pte"
    write_program(program, str(pte))
    out = tmp_path / tag
    proc = subprocess.run([PTEC_RUN, str(pte), "--input", str(input_path), "--output-dir", str(out)],
                          capture_output=True, text=True)
    return proc, out


def test_npy_nchw_into_nhwc_input_equals_raw_nhwc(tmp_path):
    x = rng.standard_normal(SHAPE).astype(np.float32)
    program = clone_program(CHANNELS_LAST, None)
    np.save(tmp_path / "x.npy", x)  # what a PyTorch user has: NCHW, C order
    raw = tmp_path / "x_nhwc.bin"   # the bytes as the program stores them
    raw.write_bytes(np.ascontiguousarray(x.transpose(0, 2, 3, 1)).tobytes())
    from_npy, npy_out = run(tmp_path, program, tmp_path / "x.npy", "npy")
    from_raw, raw_out = run(tmp_path, program, raw, "raw")
    assert from_npy.returncode == 0, from_npy.stderr
    assert from_raw.returncode == 0, from_raw.stderr
    assert (npy_out / "output0.bin").read_bytes() == (raw_out / "output0.bin").read_bytes()
    assert (npy_out / "output0.bin").read_bytes() == x.tobytes()  # the clone gives NCHW back


def test_npy_fortran_order_input_is_honoured(tmp_path):
    x = rng.standard_normal(SHAPE).astype(np.float32)
    np.save(tmp_path / "x_f.npy", np.asfortranarray(x))
    for in_order in (None, CHANNELS_LAST):
        proc, out = run(tmp_path, clone_program(in_order, None), tmp_path / "x_f.npy", f"f{in_order is None}")
        assert proc.returncode == 0, proc.stderr
        assert (out / "output0.bin").read_bytes() == x.tobytes()


def test_npy_wrong_shape_is_refused_naming_both_shapes(tmp_path):
    x = rng.standard_normal(SHAPE).astype(np.float32)
    np.save(tmp_path / "x_nhwc.npy", np.ascontiguousarray(x.transpose(0, 2, 3, 1)))  # [1, 4, 5, 3]
    proc, out = run(tmp_path, clone_program(CHANNELS_LAST, None), tmp_path / "x_nhwc.npy", "bad")
    assert proc.returncode != 0
    assert "[1, 4, 5, 3]" in proc.stderr and "[1, 3, 4, 5]" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (out / "output0.npy").exists()


def test_npy_output_is_logical_order(tmp_path):
    import torch
    x = rng.standard_normal(SHAPE).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    proc, out = run(tmp_path, clone_program(None, CHANNELS_LAST), tmp_path / "x.npy", "out")
    assert proc.returncode == 0, proc.stderr
    reference = torch.from_numpy(x).contiguous(memory_format=torch.channels_last)
    got = np.load(out / "output0.npy")
    assert got.shape == tuple(reference.shape)
    assert got.tobytes() == reference.numpy().tobytes()  # numpy() gives the logical order
    # The raw file keeps the bytes as stored: NHWC.
    assert (out / "output0.bin").read_bytes() == np.ascontiguousarray(x.transpose(0, 2, 3, 1)).tobytes()
