"""The runtime's portable kernels, end to end: programs built with the .pte
builder, run by ptec-run, compared with numpy bit for bit."""
import numpy as np
import pytest

from ptec.pte.program_builder import CHANNELS_LAST, ProgramBuilder
from ptec.pte.schema import ScalarType

from runtime_util import run_program

rng = np.random.default_rng(7)


def binary_program(op, a, b, out_shape, dtype, alpha=None, orders=(None, None, None)):
    bld = ProgramBuilder()
    x = bld.tensor(dtype, a.shape, orders[0])
    y = bld.tensor(dtype, b.shape, orders[1])
    z = bld.tensor(dtype, out_shape, orders[2])
    kwargs = dict(self=x, other=y, out=z)
    if op == "aten::add.out":
        kwargs["alpha"] = alpha
    bld.call(op, **kwargs)
    bld.set_io([x, y], [z])
    return bld.build()


@pytest.mark.parametrize("shape_a,shape_b", [((2, 3, 4), (3, 1)), ((4,), (2, 3, 4)), ((1, 5), (6, 1)),
                                             ((), (3, 2)), ((2, 1, 3), (2, 4, 1))])
def test_add_float_broadcast_alpha(tmp_path, shape_a, shape_b):
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    alpha = 2.5
    want = a + np.float32(alpha) * b
    proc, (got,) = run_program(binary_program("aten::add.out", a, b, want.shape, ScalarType.FLOAT, alpha),
                               [a, b], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert got.dtype == np.float32 and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("np_dtype,st", [(np.int32, ScalarType.INT), (np.int8, ScalarType.CHAR),
                                         (np.int64, ScalarType.LONG)])
def test_mul_integer_broadcast_wraps(tmp_path, np_dtype, st):
    info = np.iinfo(np_dtype)
    a = rng.integers(info.min, info.max, size=(4, 1), dtype=np_dtype)
    b = rng.integers(info.min, info.max, size=(1, 5), dtype=np_dtype)
    with np.errstate(over="ignore"):
        want = a * b
    proc, (got,) = run_program(binary_program("aten::mul.out", a, b, want.shape, st), [a, b], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(got, want)


def test_add_integer_alpha(tmp_path):
    a = np.array([[127, -128, 5]], np.int8)
    b = np.array([[1], [-1]], np.int8)
    want = (a.astype(np.int64) + 3 * b.astype(np.int64)).astype(np.int8)
    proc, (got,) = run_program(binary_program("aten::add.out", a, b, want.shape, ScalarType.CHAR, 3),
                               [a, b], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(got, want)


def test_add_channels_last_with_contiguous_bias(tmp_path):
    """Out and self are NHWC in memory; other is a contiguous [C,1,1]."""
    logical = rng.standard_normal((1, 3, 2, 4)).astype(np.float32)
    bias = rng.standard_normal((3, 1, 1)).astype(np.float32)
    prog = binary_program("aten::add.out", logical, bias, logical.shape, ScalarType.FLOAT, 1,
                          orders=(CHANNELS_LAST, None, CHANNELS_LAST))
    proc, (got,) = run_program(prog, [logical, bias], tmp_path)
    assert proc.returncode == 0, proc.stderr
    # ptec-run's .npy files are logical (NCHW) whatever the stored order.
    assert got.tobytes() == (logical + bias).tobytes()


def test_clone_changes_layout(tmp_path):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    bld = ProgramBuilder()
    a = bld.tensor(ScalarType.FLOAT, x.shape)
    b = bld.tensor(ScalarType.FLOAT, x.shape, CHANNELS_LAST)
    bld.call("dim_order_ops::_clone_dim_order.out", self=a, non_blocking=False, dim_order=CHANNELS_LAST, out=b)
    bld.set_io([a], [b])
    proc, (got,) = run_program(bld.build(), [x], tmp_path)
    assert proc.returncode == 0, proc.stderr
    # The output .npy is logical: the layout change is invisible in it.
    assert got.tobytes() == x.tobytes()


def test_quantize_dequantize_per_tensor(tmp_path):
    scale, zp = 0.0473, -7
    x = np.concatenate([rng.standard_normal(500).astype(np.float32) * 4,
                        (np.arange(-20, 20, dtype=np.float32) + 0.5) * np.float32(scale),  # near ties
                        np.array([1e9, -1e9, np.inf, -np.inf], np.float32)])
    bld = ProgramBuilder()
    a = bld.tensor(ScalarType.FLOAT, x.shape)
    q = bld.tensor(ScalarType.CHAR, x.shape)
    r = bld.tensor(ScalarType.FLOAT, x.shape)
    qp = dict(scale=scale, zero_point=zp, quant_min=-128, quant_max=127, dtype=int(ScalarType.CHAR))
    bld.call("quantized_decomposed::quantize_per_tensor.out", input=a, out=q, **qp)
    bld.call("quantized_decomposed::dequantize_per_tensor.out", input=q, out_dtype=None, out=r, **qp)
    bld.set_io([a], [q, r])
    proc, (got_q, got_r) = run_program(bld.build(), [x], tmp_path)
    assert proc.returncode == 0, proc.stderr
    inv = np.float32(1.0) / np.float32(scale)
    with np.errstate(invalid="ignore", over="ignore"):
        want_q = np.clip(np.rint(inv * x).astype(np.float64) + zp, -128, 127).astype(np.int8)
    want_r = (want_q.astype(np.int32) - zp).astype(np.float32) * np.float32(scale)
    assert np.array_equal(got_q, want_q)
    assert got_r.tobytes() == want_r.tobytes()


def test_dtype_mismatch_is_refused_at_load(tmp_path):
    a = np.zeros((2,), np.float32)
    b = np.zeros((2,), np.int32)
    bld = ProgramBuilder()
    x = bld.tensor(ScalarType.FLOAT, [2])
    y = bld.tensor(ScalarType.INT, [2])
    z = bld.tensor(ScalarType.FLOAT, [2])
    bld.call("aten::add.out", self=x, other=y, alpha=1, out=z)
    bld.set_io([x, y], [z])
    proc, _ = run_program(bld.build(), [a, b], tmp_path)
    assert proc.returncode == 1
    assert "NotSupported (0x10): instruction 0 (aten::add.out)" in proc.stderr
    assert "no promotion" in proc.stderr


def test_shapes_that_do_not_broadcast_are_refused(tmp_path):
    a = np.zeros((2, 3), np.float32)
    b = np.zeros((4,), np.float32)
    proc, _ = run_program(binary_program("aten::add.out", a, b, (2, 3), ScalarType.FLOAT, 1), [a, b], tmp_path)
    assert proc.returncode == 1
    assert "arg 1: shape does not broadcast to out" in proc.stderr
