#!/usr/bin/python3
"""Writes the programs of the portable kernels' C unit test
(test_portable_kernels.c) into OUTDIR, with a manifest cases.txt:

  run NAME INPUTS OUTPUTS   NAME.pte, NAME.in<i>.bin, NAME.out<i>.bin (raw bytes as stored)
  fail NAME STATUS TEXT     loading NAME.pte must fail with STATUS (hex) and a detail holding TEXT
  execfail NAME INPUTS STATUS TEXT   NAME.pte loads, takes NAME.in<i>.bin, and its execute must fail
                            with STATUS (hex) and a detail holding TEXT

Expected outputs are worked out by hand (in the comments), with values that
are exact in float32, so the C test compares bytes. numpy only, no torch.
Usage: make_portable_cases.py OUTDIR
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from ptec.pte.program_builder import CHANNELS_LAST, ProgramBuilder  # noqa: E402
from ptec.pte.schema import ScalarType  # noqa: E402
from ptec.pte.writer import write_program  # noqa: E402

F32, I8, I64 = ScalarType.FLOAT, ScalarType.CHAR, ScalarType.LONG
INVALID_ARGUMENT, NOT_SUPPORTED, INVALID_PROGRAM = 0x12, 0x10, 0x23
CASES = []


def physical(arr, order):
    arr = np.asarray(arr)
    return np.ascontiguousarray(arr.transpose(order) if order is not None else arr).tobytes()


def run_case(name, b, inputs, outputs):
    """inputs/outputs: lists of (array in logical order, dim order or None)."""
    CASES.append(("run", name, b.build(), [physical(a, o) for a, o in inputs],
                  [physical(a, o) for a, o in outputs], [np.asarray(a).shape for a, _ in outputs]))


def fail_case(name, b, status, text):
    CASES.append(("fail", name, b.build(), status, text))


def exec_fail_case(name, b, inputs, status, text):
    """The program loads; executing it on inputs (as run_case's) must fail."""
    CASES.append(("execfail", name, b.build(), [physical(a, o) for a, o in inputs], status, text))


def one_op(key, x_shape, out_shape, st=F32, order=None, out_order="same", **kw):
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(st, out_shape, order if out_order == "same" else out_order)
    b.call(key, self=x, out=y, **kw)
    b.set_io([x], [y])
    return b


# -- hand-checked results -------------------------------------------------------

# 3x3 input 1..9, 2x2 kernel [[1,0],[0,-1]], bias 0.5, stride 1, no padding:
# out[i][j] = x[i][j] - x[i+1][j+1] + 0.5 = -4 + 0.5 everywhere.
b = ProgramBuilder()
x, y = b.tensor(F32, [1, 1, 3, 3]), b.tensor(F32, [1, 1, 2, 2])
b.call("aten::convolution.out", input=x, weight=b.constant(np.array([[[[1, 0], [0, -1]]]], np.float32)),
       bias=b.constant(np.array([0.5], np.float32)), stride=[1, 1], padding=[0, 0], dilation=[1, 1],
       transposed=False, output_padding=[0, 0], groups=1, out=y)
b.set_io([x], [y])
run_case("conv_2x2", b, [(np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3), None)],
         [(np.full((1, 1, 2, 2), -3.5, np.float32), None)])

# Depthwise (groups 2) 1x1 conv on channels-last [1,2,1,2] with padding 1:
# channel 0 x [1,2] * 2, channel 1 x [3,4] * -1; the border is 0 (no bias).
b = ProgramBuilder()
x, y = b.tensor(F32, [1, 2, 1, 2], CHANNELS_LAST), b.tensor(F32, [1, 2, 3, 4], CHANNELS_LAST)
b.call("aten::convolution.out", input=x, weight=b.constant(np.array([2, -1], np.float32).reshape(2, 1, 1, 1)),
       bias=None, stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False,
       output_padding=[0, 0], groups=2, out=y)
b.set_io([x], [y])
want = np.zeros((1, 2, 3, 4), np.float32)
want[0, 0, 1, 1:3] = [2, 4]
want[0, 1, 1, 1:3] = [-3, -4]
run_case("conv_depthwise_padded_nhwc", b, [(np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 1, 2), CHANNELS_LAST)],
         [(want, CHANNELS_LAST)])

# Transposed conv, stride 2, 1x1 input 3, kernel 2x2 [[1,2],[3,4]]: out = 3 * kernel.
b = ProgramBuilder()
x, y = b.tensor(F32, [1, 1, 1, 1]), b.tensor(F32, [1, 1, 2, 2])
b.call("aten::convolution.out", input=x, weight=b.constant(np.array([[[[1, 2], [3, 4]]]], np.float32)),
       bias=None, stride=[2, 2], padding=[0, 0], dilation=[1, 1], transposed=True, output_padding=[0, 0],
       groups=1, out=y)
b.set_io([x], [y])
run_case("conv_transposed", b, [(np.array([3], np.float32).reshape(1, 1, 1, 1), None)],
         [(np.array([[3, 6], [9, 12]], np.float32).reshape(1, 1, 2, 2), None)])

# linear: [1,2,3] . [[1,1,1],[0,-1,2]] + [10, 0] = [16, 4]
b = ProgramBuilder()
x, y = b.tensor(F32, [1, 3]), b.tensor(F32, [1, 2])
b.call("aten::linear.out", input=x, weight=b.constant(np.array([[1, 1, 1], [0, -1, 2]], np.float32)),
       bias=b.constant(np.array([10, 0], np.float32)), out=y)
b.set_io([x], [y])
run_case("linear", b, [(np.array([[1, 2, 3]], np.float32), None)], [(np.array([[16, 4]], np.float32), None)])

# softmax of [0, 0] along dim 1 of a channels-last [1,2,1,2]: 0.5 everywhere
run_case("softmax_channels", one_op("aten::_softmax.out", [1, 2, 1, 2], [1, 2, 1, 2], order=CHANNELS_LAST,
                                    dim=1, half_to_float=False),
         [(np.zeros((1, 2, 1, 2), np.float32), CHANNELS_LAST)], [(np.full((1, 2, 1, 2), 0.5, np.float32), CHANNELS_LAST)])
# log-softmax over rows of one: (x - x) - log(1) = 0 exactly, whatever x
run_case("log_softmax_rows_of_one", one_op("aten::_log_softmax.out", [3, 1], [3, 1], dim=1, half_to_float=False),
         [(np.array([[1.5], [-7.0], [100.0]], np.float32), None)], [(np.zeros((3, 1), np.float32), None)])

# relu / clamp / hardtanh on [-2, -0.5, 0.5, 2]
v = np.array([-2, -0.5, 0.5, 2], np.float32)
run_case("relu", one_op("aten::relu.out", [4], [4]), [(v, None)], [(np.array([0, 0, 0.5, 2], np.float32), None)])
run_case("clamp_max_only", one_op("aten::clamp.out", [4], [4], min=None, max=0.5), [(v, None)],
         [(np.array([-2, -0.5, 0.5, 0.5], np.float32), None)])
run_case("hardtanh", one_op("aten::hardtanh.out", [4], [4], min_val=-1, max_val=1), [(v, None)],
         [(np.array([-1, -0.5, 0.5, 1], np.float32), None)])
run_case("clamp_int8", one_op("aten::clamp.out", [4], [4], st=I8, min=-3, max=1000),
         [(np.array([-128, -3, 0, 127], np.int8), None)], [(np.array([-3, -3, 0, 127], np.int8), None)])

# avg pool 2x2 stride 2 on 1..16 (4x4): means of the quadrants 3.5, 5.5, 11.5, 13.5;
# padding 1 without count_include_pad on a 2x2 [1,2,3,4] with kernel 2 stride 1 -> corner
# windows hold one element each, the centre all four (2.5).
x4 = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
run_case("avg_pool", one_op("aten::avg_pool2d.out", [1, 1, 4, 4], [1, 1, 2, 2], kernel_size=[2, 2], stride=[],
                            padding=[0], ceil_mode=False, count_include_pad=True, divisor_override=None),
         [(x4, None)], [(np.array([[3.5, 5.5], [11.5, 13.5]], np.float32).reshape(1, 1, 2, 2), None)])
x2 = np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2)
run_case("avg_pool_exclude_pad", one_op("aten::avg_pool2d.out", [1, 1, 2, 2], [1, 1, 3, 3], kernel_size=[2, 2],
                                        stride=[1, 1], padding=[1, 1], ceil_mode=False, count_include_pad=False,
                                        divisor_override=None),
         [(x2, None)], [(np.array([[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]], np.float32).reshape(1, 1, 3, 3), None)])
run_case("avg_pool_divisor", one_op("aten::avg_pool2d.out", [1, 1, 2, 2], [1, 1, 1, 1], kernel_size=[2, 2],
                                    stride=[2, 2], padding=[0, 0], ceil_mode=False, count_include_pad=True,
                                    divisor_override=2),
         [(x2, None)], [(np.array([5], np.float32).reshape(1, 1, 1, 1), None)])

# max pool 3x3 stride 2 ceil_mode on 1..16: windows start at 0 and 2 -> maxima 11, 12, 15, 16,
# indices 10, 11, 14, 15. int8 the same values.
b = ProgramBuilder()
x, y = b.tensor(F32, [1, 1, 4, 4]), b.tensor(F32, [1, 1, 2, 2])
ind = b.tensor(I64, [1, 1, 2, 2])
b.call("aten::max_pool2d_with_indices.out", self=x, kernel_size=[3, 3], stride=[2, 2], padding=[0, 0],
       dilation=[1, 1], ceil_mode=True, out=y, indices=ind)
b.set_io([x], [y, ind])
run_case("max_pool_ceil", b, [(x4, None)], [(np.array([11, 12, 15, 16], np.float32).reshape(1, 1, 2, 2), None),
                                            (np.array([10, 11, 14, 15], np.int64).reshape(1, 1, 2, 2), None)])

# adaptive 3x3 -> 2x2 of 1..9: windows rows [0,2) [1,3): (1+2+4+5)/4 = 3, 4, 6, 7
run_case("adaptive_avg_pool", one_op("aten::_adaptive_avg_pool2d.out", [1, 1, 3, 3], [1, 1, 2, 2],
                                     output_size=[2, 2]),
         [(np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3), None)],
         [(np.array([3, 4, 6, 7], np.float32).reshape(1, 1, 2, 2), None)])

# mean over dim 1 of [[1,2,3],[4,5,6]] -> [2, 5]; over everything -> 3.5
m = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
run_case("mean_dim1", one_op("aten::mean.out", [2, 3], [2], dim=[1], keepdim=False, dtype=None), [(m, None)],
         [(np.array([2, 5], np.float32), None)])
run_case("mean_all", one_op("aten::mean.out", [2, 3], [], dim=None, keepdim=False, dtype=None), [(m, None)],
         [(np.array(3.5, np.float32), None)])

# sub alpha 2, div: [4, 6] - 2 * [1, 2] = [2, 2]; [4, 6] / [1, 2] = [4, 3]
for key, want in (("aten::sub.out", [2, 2]), ("aten::div.out", [4, 3])):
    b = ProgramBuilder()
    a, c, y = b.tensor(F32, [2]), b.tensor(F32, [2]), b.tensor(F32, [2])
    b.call(key, self=a, other=c, out=y, **({"alpha": 2} if key == "aten::sub.out" else {}))
    b.set_io([a, c], [y])
    run_case(key.split("::")[1].split(".")[0], b, [(np.array([4, 6], np.float32), None),
                                                    (np.array([1, 2], np.float32), None)],
             [(np.array(want, np.float32), None)])

# batch-norm: x [1,2] per channel, mean [1, 0], var [3, 0] eps 1, weight [2, 1], bias [0, 1]:
# (3-1)/2*2+0 = 2 ; (5-0)/1*1+1 = 6
b = ProgramBuilder()
x, y = b.tensor(F32, [1, 2]), b.tensor(F32, [1, 2])
b.call("aten::_native_batch_norm_legit_no_training.out", input=x, weight=b.constant(np.array([2, 1], np.float32)),
       bias=b.constant(np.array([0, 1], np.float32)), running_mean=b.constant(np.array([1, 0], np.float32)),
       running_var=b.constant(np.array([3, 0], np.float32)), momentum=0.1, eps=1.0, out0=y,
       out1=b.tensor(F32, [0]), out2=b.tensor(F32, [0]))
b.set_io([x], [y])
run_case("batch_norm", b, [(np.array([[3, 5]], np.float32), None)], [(np.array([[2, 6]], np.float32), None)])

# data movement on int8 0..23 as [2,3,4]
d = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
run_case("permute_int8", one_op("aten::permute_copy.out", [2, 3, 4], [4, 2, 3], st=I8, dims=[2, 0, 1]),
         [(d, None)], [(d.transpose(2, 0, 1), None)])
run_case("slice_int8", one_op("aten::slice_copy.Tensor_out", [2, 3, 4], [2, 3, 2], st=I8, dim=-1, start=1,
                              end=None, step=2), [(d, None)], [(d[:, :, 1::2], None)])
run_case("view_int8", one_op("aten::view_copy.out", [2, 3, 4], [6, 4], st=I8, size=[-1, 4]), [(d, None)],
         [(d.reshape(6, 4), None)])
run_case("unsqueeze_int8", one_op("aten::unsqueeze_copy.out", [2, 3, 4], [2, 1, 3, 4], st=I8, dim=1,
                                  out_order=None), [(d, None)], [(d.reshape(2, 1, 3, 4), None)])
run_case("squeeze_int8", one_op("aten::squeeze_copy.dims_out", [2, 1, 3, 4], [2, 3, 4], st=I8, dim=[1, 0],
                                order=None), [(d.reshape(2, 1, 3, 4), None)], [(d, None)])
# view of a channels-last [1,2,2,2] (bytes NHWC) as [1, 8]: PyTorch's flatten (NCHW order)
nchw = np.arange(8, dtype=np.int8).reshape(1, 2, 2, 2)
run_case("view_from_nhwc", one_op("aten::view_copy.out", [1, 2, 2, 2], [1, 8], st=I8, order=CHANNELS_LAST,
                                  out_order=None, size=[1, 8]),
         [(nchw, CHANNELS_LAST)], [(nchw.reshape(1, 8), None)])
# cat on channels of an NHWC [1,1,1,2] and a contiguous [1,2,1,2] into NHWC [1,3,1,2]
b = ProgramBuilder()
p, q = b.tensor(I8, [1, 1, 1, 2], CHANNELS_LAST), b.tensor(I8, [1, 2, 1, 2])
y = b.tensor(I8, [1, 3, 1, 2], CHANNELS_LAST)
b.call("aten::cat.out", tensors=[p, q], dim=1, out=y)
b.set_io([p, q], [y])
pa, qa = np.array([1, 2], np.int8).reshape(1, 1, 1, 2), np.array([3, 4, 5, 6], np.int8).reshape(1, 2, 1, 2)
run_case("cat_channels", b, [(pa, CHANNELS_LAST), (qa, None)],
         [(np.concatenate([pa, qa], 1), CHANNELS_LAST)])

# float32 math of one tensor (op_float_unary_math.c). The exact ones on ties, signed zeros, infinities and
# NaN (written as the quiet NaN 0x7FC00000): round half to even, sign(NaN) = sign(-0) = 0 as torch 1.13,
# rsqrt(-0) = reciprocal(-0) = -inf; the transcendental ones on values every correct libm gives exactly
nan, inf = np.float32(np.nan), np.float32(np.inf)
v = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, 0.0, nan, inf, -inf, 4, -7.25, 1e-45], np.float32)
EXACT_UNARY = {
    "abs": np.abs(v), "neg": -v, "floor": np.floor(v), "ceil": np.ceil(v), "round": np.rint(v),
    "trunc": np.trunc(v), "sign": np.array([-1, -1, -1, 1, 1, 1, 0, 0, 0, 1, -1, 1, -1, 1], np.float32),
    "sqrt": np.array([nan, nan, nan, np.sqrt(np.float32(0.5)), np.sqrt(np.float32(1.5)),
                      np.sqrt(np.float32(2.5)), -0.0, 0.0, nan, inf, nan, 2, nan, np.sqrt(np.float32(1e-45))],
                     np.float32),
    "reciprocal": np.array([-0.4, np.float32(1) / np.float32(-1.5), -2, 2, np.float32(1) / np.float32(1.5), 0.4,
                            -inf, inf, nan, 0.0, -0.0, 0.25, np.float32(1) / np.float32(-7.25), inf], np.float32),
}
for fn, want in EXACT_UNARY.items():
    want = np.where(np.isnan(want), nan, want).astype(np.float32)        # the one quiet NaN
    run_case(f"float_{fn}", one_op(f"aten::{fn}.out", [14], [14]), [(v, None)], [(want, None)])
SPECIAL_UNARY = {
    "exp": ([0, -inf, inf, nan], [1, 0, inf, nan]), "expm1": ([0, -0.0, -inf, inf], [0, -0.0, -1, inf]),
    "log": ([1, 0, -1, inf], [0, -inf, nan, inf]), "log1p": ([0, -1, -2, inf], [0, -inf, nan, inf]),
    "log2": ([1, 8, 0, -0.5], [0, 3, -inf, nan]), "log10": ([1, 100, -0.0, nan], [0, 2, -inf, nan]),
    "rsqrt": ([4, 0, -0.0, inf], [0.5, inf, -inf, 0]), "sin": ([0, -0.0, inf, nan], [0, -0.0, nan, nan]),
    "cos": ([0, -0.0, -inf, nan], [1, 1, nan, nan]), "tan": ([0, -0.0, inf, nan], [0, -0.0, nan, nan]),
    "asin": ([0, 1, -1.5, nan], [0, np.pi / 2, nan, nan]), "acos": ([1, -1, 2, nan], [0, np.pi, nan, nan]),
    "atan": ([0, inf, -inf, nan], [0, np.pi / 2, -np.pi / 2, nan]), "sinh": ([0, -0.0, inf, -inf], [0, -0.0, inf, -inf]),
    "cosh": ([0, -inf, inf, nan], [1, inf, inf, nan]), "asinh": ([0, -0.0, inf, -inf], [0, -0.0, inf, -inf]),
    "acosh": ([1, 0.5, inf, nan], [0, nan, inf, nan]), "atanh": ([1, -1, 2, 0], [inf, -inf, nan, 0]),
    "erf": ([0, inf, -inf, nan], [0, 1, -1, nan]),
}
for fn, (x, want) in SPECIAL_UNARY.items():
    run_case(f"float_{fn}_special", one_op(f"aten::{fn}.out", [4], [4]), [(np.array(x, np.float32), None)],
             [(np.array(want, np.float32), None)])
# each tensor through its own dim order: a channels-last input, a contiguous out
x4 = np.arange(-12, 12, dtype=np.float32).reshape(1, 2, 3, 4) * 0.75
run_case("float_floor_channels_last", one_op("aten::floor.out", [1, 2, 3, 4], [1, 2, 3, 4], order=CHANNELS_LAST,
                                             out_order=None),
         [(x4, CHANNELS_LAST)], [(np.floor(x4), None)])

# -- bad arguments: each refused while the method loads --------------------------

fail_case("sigmoid_int8", one_op("aten::sigmoid.out", [4], [4], st=I8), NOT_SUPPORTED, "dtype must be float32")
fail_case("exp_int8", one_op("aten::exp.out", [4], [4], st=I8), NOT_SUPPORTED, "dtype must be float32")
fail_case("sign_shape", one_op("aten::sign.out", [4], [2, 2]), INVALID_ARGUMENT, "out must have the dtype and sizes")
fail_case("relu_shape", one_op("aten::relu.out", [4], [5]), INVALID_ARGUMENT, "out must have the dtype and sizes")
fail_case("clamp_no_bounds", one_op("aten::clamp.out", [4], [4], min=None, max=None), INVALID_ARGUMENT,
          "at least one of min and max")
fail_case("clamp_int8_fraction", one_op("aten::clamp.out", [4], [4], st=I8, min=0.5, max=None),
          INVALID_ARGUMENT, "bound must be an integer")
fail_case("softmax_dim", one_op("aten::_softmax.out", [2, 3], [2, 3], dim=2, half_to_float=False),
          INVALID_ARGUMENT, "dim out of range")
fail_case("softmax_half", one_op("aten::_softmax.out", [2, 3], [2, 3], dim=1, half_to_float=True),
          NOT_SUPPORTED, "half_to_float must be false")
fail_case("log_softmax_dim", one_op("aten::_log_softmax.out", [2, 3], [2, 3], dim=-3, half_to_float=False),
          INVALID_ARGUMENT, "dim out of range")
fail_case("log_softmax_shape", one_op("aten::_log_softmax.out", [2, 3], [3, 2], dim=1, half_to_float=False),
          INVALID_ARGUMENT, "dtype and sizes of self")
fail_case("avg_pool_out_size", one_op("aten::avg_pool2d.out", [1, 1, 4, 4], [1, 1, 3, 3], kernel_size=[2, 2],
                                      stride=[], padding=[0, 0], ceil_mode=False, count_include_pad=True,
                                      divisor_override=None), INVALID_ARGUMENT, "out must be [N, C, OH, OW]")
fail_case("avg_pool_divisor_zero", one_op("aten::avg_pool2d.out", [1, 1, 4, 4], [1, 1, 2, 2], kernel_size=[2, 2],
                                          stride=[], padding=[0, 0], ceil_mode=False, count_include_pad=True,
                                          divisor_override=0), INVALID_ARGUMENT, "divisor_override must not be zero")
fail_case("avg_pool_kernel_list", one_op("aten::avg_pool2d.out", [1, 1, 4, 4], [1, 1, 2, 2], kernel_size=[2, 2, 2],
                                         stride=[], padding=[0, 0], ceil_mode=False, count_include_pad=True,
                                         divisor_override=None), INVALID_ARGUMENT, "longer than the operator allows")
fail_case("avg_pool_3d", one_op("aten::avg_pool2d.out", [1, 4, 4], [1, 2, 2], kernel_size=[2, 2], stride=[],
                                padding=[0, 0], ceil_mode=False, count_include_pad=True, divisor_override=None),
          NOT_SUPPORTED, "self must be 4-D")
fail_case("mean_twice", one_op("aten::mean.out", [2, 3], [2], dim=[1, -1], keepdim=False, dtype=None),
          INVALID_ARGUMENT, "dim lists a dimension twice")
fail_case("mean_dtype", one_op("aten::mean.out", [2, 3], [2], dim=[1], keepdim=False, dtype=int(ScalarType.DOUBLE)),
          NOT_SUPPORTED, "dtype must be None or float32")
fail_case("view_numel", one_op("aten::view_copy.out", [2, 3], [4], size=[4]), INVALID_ARGUMENT,
          "element count differs")
fail_case("view_two_inferred", one_op("aten::view_copy.out", [2, 3], [2, 3], size=[-1, -1]), INVALID_ARGUMENT,
          "at most one -1")
fail_case("permute_repeat", one_op("aten::permute_copy.out", [2, 3], [2, 3], dims=[0, 0]), INVALID_ARGUMENT,
          "every dim of self once")
fail_case("slice_step", one_op("aten::slice_copy.Tensor_out", [4], [2], dim=0, start=0, end=4, step=0),
          INVALID_ARGUMENT, "step must be positive")
fail_case("unsqueeze_dim", one_op("aten::unsqueeze_copy.out", [4], [4, 1], dim=3), INVALID_ARGUMENT,
          "dim out of range")
fail_case("squeeze_shape", one_op("aten::squeeze_copy.dims_out", [2, 3], [6], dim=[0]), INVALID_ARGUMENT,
          "without the squeezed dims")



def arg_op(key, x_shape, out_shape, st=F32, out_st=I64, order=None, **kw):
    """aten::argmax.out / argmin.out (or _to_dim_order_copy.out): out's dtype
    is not self's."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(out_st, out_shape)
    b.call(key, self=x, out=y, **kw)
    b.set_io([x], [y])
    return b


# argmax of int8 rows [3,-1,3,7] -> 3 and [5,9,9,-128] -> 1 (the first of the two 9s)
run_case("argmax_int8_rows", arg_op("aten::argmax.out", [2, 4], [2], st=I8, dim=1, keepdim=False),
         [(np.array([[3, -1, 3, 7], [5, 9, 9, -128]], np.int8), None)], [(np.array([3, 1], np.int64), None)])
# argmin down the columns of [[1,2],[.5,2],[1,-1]] kept as [1, 2]: .5 at row 1, -1 at row 2
run_case("argmin_keepdim", arg_op("aten::argmin.out", [3, 2], [1, 2], dim=0, keepdim=True),
         [(np.array([[1, 2], [0.5, 2], [1, -1]], np.float32), None)], [(np.array([[1, 2]], np.int64), None)])
# a NaN beats every number and the first NaN wins: [1, nan, 5, nan] -> 1, for argmin too
for key in ("aten::argmax.out", "aten::argmin.out"):
    run_case(key[6:12] + "_nan", arg_op(key, [4], [], dim=-1, keepdim=False),
             [(np.array([1, np.nan, 5, np.nan], np.float32), None)], [(np.array(1, np.int64), None)])
# channels-last [1,2,1,2] over C: pixel 0 holds (1, 3) -> 1, pixel 1 (4, 2) -> 0
run_case("argmax_channels_last", arg_op("aten::argmax.out", [1, 2, 1, 2], [1, 1, 2], order=CHANNELS_LAST, dim=1,
                                        keepdim=False),
         [(np.array([1, 4, 3, 2], np.float32).reshape(1, 2, 1, 2), CHANNELS_LAST)],
         [(np.array([1, 0], np.int64).reshape(1, 1, 2), None)])
# no dim: the flat position of the first 7 in [[1,7,3],[7,0,2]] is 1
run_case("argmax_flat", arg_op("aten::argmax.out", [2, 3], [], dim=None, keepdim=False),
         [(np.array([[1, 7, 3], [7, 0, 2]], np.float32), None)], [(np.array(1, np.int64), None)])
# int64 -> float32: 2^24 + 1 has no float32, it rounds to 2^24 (to even)
run_case("to_float_int64", arg_op("dim_order_ops::_to_dim_order_copy.out", [4], [4], st=I64, out_st=F32,
                                  non_blocking=False, dim_order=None),
         [(np.array([-3, 0, 2 ** 24 + 1, 5], np.int64), None)],
         [(np.array([-3, 0, 2 ** 24, 5], np.float32), None)])
run_case("to_float_int8", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=I8, out_st=F32,
                                 non_blocking=False, dim_order=[0]),
         [(np.array([-128, 0, 127], np.int8), None)], [(np.array([-128, 0, 127], np.float32), None)])

fail_case("argmax_out_float", arg_op("aten::argmax.out", [2, 3], [2], out_st=F32, dim=1, keepdim=False),
          INVALID_ARGUMENT, "out must be int64")
fail_case("argmax_self_double", arg_op("aten::argmax.out", [2, 3], [2], st=ScalarType.DOUBLE, dim=1, keepdim=False),
          NOT_SUPPORTED, "self must be float32, int8, int32 or int64")
fail_case("argmax_dim", arg_op("aten::argmax.out", [2, 3], [2], dim=2, keepdim=False), INVALID_ARGUMENT,
          "dim out of range")
fail_case("argmin_sizes", arg_op("aten::argmin.out", [2, 3], [2], dim=1, keepdim=True), INVALID_ARGUMENT,
          "out's sizes do not match")
fail_case("argmax_empty", arg_op("aten::argmax.out", [2, 0], [2], dim=1, keepdim=False), INVALID_ARGUMENT,
          "over no elements")
# (an integer into int8 wraps: to_int8_from_uint8; a float32 into int8 has no conversion)
fail_case("to_float_out_int8", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=F32, out_st=I8,
                                      non_blocking=False, dim_order=None), NOT_SUPPORTED, "into float32, float32 into")
fail_case("to_float_sizes", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [4], st=I64, out_st=F32,
                                   non_blocking=False, dim_order=None), INVALID_ARGUMENT, "self's sizes")
fail_case("to_float_dim_order", arg_op("dim_order_ops::_to_dim_order_copy.out", [2, 3], [2, 3], st=I64, out_st=F32,
                                       non_blocking=False, dim_order=[1, 0]), INVALID_ARGUMENT,
          "differs from dim_order")

# float32 into int64 / int32: truncation toward zero; -2^63 and the largest
# float below 2^63 (2^63 - 2^39) fit int64, -2^31 and 2^31 - 128 fit int32
run_case("to_int64", arg_op("dim_order_ops::_to_dim_order_copy.out", [6], [6], out_st=I64,
                            non_blocking=False, dim_order=None),
         [(np.array([-2.75, -0.5, 0.5, 2.9375, -2.0 ** 63, 2.0 ** 63 - 2.0 ** 39], np.float32), None)],
         [(np.array([-2, 0, 0, 2, -2 ** 63, 2 ** 63 - 2 ** 39], np.int64), None)])
run_case("to_int32", arg_op("dim_order_ops::_to_dim_order_copy.out", [4], [4], out_st=ScalarType.INT,
                            non_blocking=False, dim_order=None),
         [(np.array([-2.0 ** 31, 2.0 ** 31 - 128, -7.99, 7.99], np.float32), None)],
         [(np.array([-2 ** 31, 2 ** 31 - 128, -7, 7], np.int32), None)])
# float32 into float16, nearest even: 1 + 2^-11 ties down to 1, 1 + 3 * 2^-11 up to 1 + 2^-9; 65519.99 stays
# 65504, 65520 (the tie above it) is infinite; 2^-24 the smallest subnormal, 2^-25 ties down to 0,
# 1.5 * 2^-25 up to 2^-24; 2^-14 - 2^-26 rounds up to the smallest normal; NaN quiet of its sign
H = [1 + 2 ** -11, 1 + 3 * 2 ** -11, 65519.99, 65520, 2 ** -24, 2 ** -25, 1.5 * 2 ** -25, 2 ** -14 - 2 ** -26, -0.0,
     -np.inf, -np.nan, -3.0]
run_case("to_half", arg_op("dim_order_ops::_to_dim_order_copy.out", [len(H)], [len(H)], out_st=ScalarType.HALF,
                           non_blocking=False, dim_order=None),
         [(np.array(H, np.float32), None)],
         [(np.array([0x3C00, 0x3C02, 0x7BFF, 0x7C00, 0x0001, 0x0000, 0x0001, 0x0400, 0x8000, 0xFC00, 0xFE00, 0xC200],
                    np.uint16), None)])
# float32 into bfloat16 (bit patterns), nearest even on the dropped 16 bits: 1 + 2^-8 ties down to 1,
# 1 + 3 * 2^-8 up to 1 + 2^-6, 1 + 2^-8 + 2^-23 past the tie up to 1 + 2^-7; the largest float (its
# rounding carries into infinity), the smallest subnormal (down to 0), a subnormal tie on an odd kept
# half (0x0001: up to 0x0002), NaNs of either sign quiet, their payloads dropped
BF = [0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF, 0x00000001, 0x00018000, 0xFF800000, 0x7F800001,
      0xFFBFFFFF, 0x80000000, 0xC0400000, 0x7F7F7FFF]
run_case("to_bfloat16", arg_op("dim_order_ops::_to_dim_order_copy.out", [len(BF)], [len(BF)],
                               out_st=ScalarType.BFLOAT16, non_blocking=False, dim_order=None),
         [(np.array(BF, np.uint32).view(np.float32), None)],
         [(np.array([0x3F80, 0x3F82, 0x3F81, 0x7F80, 0x0000, 0x0002, 0xFF80, 0x7FC0, 0xFFC0, 0x8000, 0xC040, 0x7F7F],
                    np.uint16), None)])
# float16 into float32 (a Half program input), exact: 1.0 (0x3C00), the smallest subnormal 2^-24 (0x0001,
# a normal float 0x33800000), the largest subnormal 1023 * 2^-24 (0x03FF: 0x387FC000), the smallest normal
# 2^-14 (0x0400), the largest half 65504 (0x7BFF), -0, -infinity, a signalling NaN 0x7C01 (payload 1 shifted
# up 13, quiet bit set: 0x7FC02000, as torch's .float()), -2.5 (0xC100)
HALF_IN = [0x3C00, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x8000, 0xFC00, 0x7C01, 0xC100]
run_case("to_float_from_half", arg_op("dim_order_ops::_to_dim_order_copy.out", [len(HALF_IN)], [len(HALF_IN)],
                                      st=ScalarType.HALF, out_st=F32, non_blocking=False, dim_order=None),
         [(np.array(HALF_IN, np.uint16), None)],
         [(np.array([0x3F800000, 0x33800000, 0x387FC000, 0x38800000, 0x477FE000, 0x80000000, 0xFF800000,
                     0x7FC02000, 0xC0200000], np.uint32), None)])
# bfloat16 into float32: the bits as the top half, NaNs too (a signalling 0x7F81 stays 0x7F810000, as torch)
BF_IN = [0x3F80, 0x0001, 0x7F7F, 0x8000, 0xFF80, 0x7F81, 0xFFC0, 0xC040]
run_case("to_float_from_bfloat16", arg_op("dim_order_ops::_to_dim_order_copy.out", [len(BF_IN)], [len(BF_IN)],
                                          st=ScalarType.BFLOAT16, out_st=F32, non_blocking=False, dim_order=None),
         [(np.array(BF_IN, np.uint16), None)], [(np.array(BF_IN, np.uint32) << 16, None)])
fail_case("to_half_from_bfloat16", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=ScalarType.BFLOAT16,
                                          out_st=ScalarType.HALF, non_blocking=False, dim_order=None),
          NOT_SUPPORTED, "converts integers")
# (int8 into int64 is an integer conversion, which runs; float16 into int64 is none)
fail_case("to_int_from_int8", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=ScalarType.HALF, out_st=I64,
                                     non_blocking=False, dim_order=None), NOT_SUPPORTED, "float32 into int64/int32")


def grid_3d(mode, padding, points):
    """aten::grid_sampler_3d.out of the volume 0..7 ([1, 1, 2, 2, 2]; value
    z * 4 + y * 2 + x) at (x, y, z) points, align_corners (-1 and 1 the
    first and last voxel)."""
    b = ProgramBuilder()
    x, g = b.tensor(F32, [1, 1, 2, 2, 2]), b.tensor(F32, [1, 1, 1, len(points), 3])
    y = b.tensor(F32, [1, 1, 1, 1, len(points)])
    b.call("aten::grid_sampler_3d.out", input=x, grid=g, interpolation_mode=mode, padding_mode=padding,
           align_corners=True, out=y)
    b.set_io([x, g], [y])
    return b, [(np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2), None),
               (np.array(points, np.float32).reshape(1, 1, 1, len(points), 3), None)]


# trilinear: the centre is the mean 3.5; (1, -1, -1) the voxel x = 1; a NaN coordinate reads nothing (zeros)
b3, in3 = grid_3d(0, 0, [[0, 0, 0], [1, -1, -1], [np.nan, 0, 0]])
run_case("grid_sampler_3d_zeros", b3, in3, [(np.array([3.5, 1.0, 0.0], np.float32).reshape(1, 1, 1, 1, 3), None)])
# border: NaN clips to the last voxel (PyTorch's std::min/std::max), far coordinates to the edges, z = 0.5
# halfway between voxels 2 and 6; infinities to the edges
b3, in3 = grid_3d(0, 1, [[np.nan, -1, -1], [-5, 5, 0], [np.inf, -np.inf, 1]])
run_case("grid_sampler_3d_border", b3, in3, [(np.array([1.0, 4.0, 5.0], np.float32).reshape(1, 1, 1, 1, 3), None)])
fail_case("grid_sampler_3d_bicubic", grid_3d(2, 0, [[0, 0, 0]])[0], INVALID_ARGUMENT,
          "interpolation_mode must be 0 or 1")


def two_op(key, a_shape, b_shape, out_shape, st=F32, out_st=F32, other="other"):
    """A float function of two tensors (aten::pow.Tensor_Tensor_out, atan2, ...)."""
    b = ProgramBuilder()
    x, y = b.tensor(st, a_shape), b.tensor(st, b_shape)
    out = b.tensor(out_st, out_shape)
    b.call(key, self=x, out=out, **{other: y})
    b.set_io([x, y], [out])
    return b


POW = "aten::pow.Tensor_Tensor_out"
FMAX = float(np.finfo(np.float32).max)
# C99's (and torch's) pow: (-2)^3 = -8, (-2)^-2 = 0.25, (-2)^0.5 NaN, NaN^0 = 1, 1^NaN = 1,
# 2^128 beyond float32: infinite; 0^-1 = inf; (-0)^-1 = -inf
run_case("pow_special", two_op(POW, [8], [8], [8], other="exponent"),
         [(np.array([-2, -2, -2, np.nan, 1, 2, 0, -0.0], np.float32), None),
          (np.array([3, -2, 0.5, 0, np.nan, 128, -1, -1], np.float32), None)],
         [(np.array([-8, 0.25, np.nan, 1, 1, np.inf, np.inf, -np.inf], np.float32), None)])
# broadcast [2, 1] ** [3]: rows 2 and 3 to the powers 0, 1, 2
run_case("pow_broadcast", two_op(POW, [2, 1], [3], [2, 3], other="exponent"),
         [(np.array([[2], [3]], np.float32), None), (np.array([0, 1, 2], np.float32), None)],
         [(np.array([[1, 2, 4], [1, 3, 9]], np.float32), None)])
# atan2(y, x): the quadrant from both signs; (+0, -0) is +pi, (-0, -0) is -pi, (1, 1) pi/4;
# every result the float32 nearest the exact angle
PI, QUARTER = float(np.float32(np.pi)), float(np.float32(np.pi / 4))
run_case("atan2_quadrants", two_op("aten::atan2.out", [6], [6], [6]),
         [(np.array([0.0, -0.0, 1, -1, 1, 0], np.float32), None),
          (np.array([-0.0, -0.0, 1, -1, 0, 1], np.float32), None)],
         [(np.array([PI, -PI, QUARTER, -3 * QUARTER, 2 * QUARTER, 0], np.float32), None)])
# hypot: 3-4-5; inf beats NaN; FLT_MAX twice overflows (sqrt 2 * FLT_MAX), FLT_MAX with 1 stays
run_case("hypot_edges", two_op("aten::hypot.out", [4], [4], [4]),
         [(np.array([3, np.inf, FMAX, FMAX], np.float32), None), (np.array([4, np.nan, FMAX, 1], np.float32), None)],
         [(np.array([5, np.inf, np.inf, FMAX], np.float32), None)])
# fmod keeps the dividend's sign, remainder takes the divisor's; x % 0 is NaN in both
for key, want in (("aten::fmod.Tensor_out", [1.5, -1.5, 1.5, np.nan]),
                  ("aten::remainder.Tensor_out", [-0.5, 0.5, 1.5, np.nan])):
    run_case(key[6:].split(".")[0], two_op(key, [4], [4], [4]),
             [(np.array([5.5, -5.5, 5.5, 1], np.float32), None), (np.array([-2, 2, 2, 0], np.float32), None)],
             [(np.array(want, np.float32), None)])
# copysign: the sign bit of other, -0.0 included
run_case("copysign", two_op("aten::copysign.out", [3], [3], [3]),
         [(np.array([3, -2, 0], np.float32), None), (np.array([-0.0, 1, -5], np.float32), None)],
         [(np.array([-3, 2, -0.0], np.float32), None)])
# igamma / igammac (op_special_gamma.c): P(1, 1) = 1 - 1/e, P(1/2, 1) = erf 1, Q(1, 2) = e^-2 (the float
# nearest each; the exact values sit 0.27 to 0.38 ulp from a rounding edge); torch's edges: x = 0 gives 0,
# a = 0 with x > 0 gives 1, a < 0 NaN, an infinite x 1
run_case("igamma_values", two_op("aten::igamma.out", [7], [7], [7]),
         [(np.array([1, 0.5, 2, 0, -1, 3, 1], np.float32), None),
          (np.array([1, 1, 0, 3, 1, np.inf, -1], np.float32), None)],
         [(np.array([1 - np.exp(-1.0), 0.8427007929497149, 0, 1, np.nan, 1, np.nan], np.float32), None)])
run_case("igammac_values", two_op("aten::igammac.out", [4], [4], [4]),
         [(np.array([1, 2, 0, np.inf], np.float32), None), (np.array([2, 0, 3, 1], np.float32), None)],
         [(np.array([np.exp(-2.0), 1, 0, 1], np.float32), None)])
# Hurwitz zeta: zeta(2, 1) = pi^2 / 6 (0.43 ulp from an edge); s = 1 inf, s < 1 NaN, q a non-positive
# whole number inf, q < 0 with s not whole NaN
run_case("special_zeta_values", two_op("aten::special_zeta.out", [5], [5], [5]),
         [(np.array([2, 1, 0.5, 2, 2.5], np.float32), None), (np.array([1, 5, 1, -3, -1.5], np.float32), None)],
         [(np.array([np.pi ** 2 / 6, np.inf, np.nan, np.inf, np.nan], np.float32), None)])
fail_case("igamma_int8", two_op("aten::igamma.out", [3], [3], [3], st=I8, out_st=I8), NOT_SUPPORTED,
          "dtype must be float32")
# nextafter (op_float_bits.c): 1 up is 1 + 2^-23, 1 down 1 - 2^-24; 0 towards -1 the smallest negative
# subnormal; 0 towards -0 is -0 (y); FLT_MAX up inf, inf down FLT_MAX; the smallest normal down the largest
# subnormal; a NaN operand the quiet NaN. Broadcast: other [1] against self [8]
run_case("nextafter_values", two_op("aten::nextafter.out", [8], [8], [8]),
         [(np.array([1, 1, 0, 0, FMAX, np.inf, 2.0 ** -126, np.nan], np.float32), None),
          (np.array([2, 0, -1, -0.0, np.inf, 0, 0, 1], np.float32), None)],
         [(np.array([1 + 2.0 ** -23, 1 - 2.0 ** -24, -2.0 ** -149, -0.0, np.inf, FMAX, 2.0 ** -126 - 2.0 ** -149,
                     np.nan], np.float32), None)])
run_case("nextafter_broadcast", two_op("aten::nextafter.out", [2, 4], [1], [2, 4]),
         [(np.array([[-1, 0.5, 3, -0.0], [2, 4, -4, 8]], np.float32), None), (np.array([3], np.float32), None)],
         [(np.array([[-1 + 2.0 ** -24, 0.5 + 2.0 ** -24, 3, 2.0 ** -149], [2 + 2.0 ** -22, 4 - 2.0 ** -22,
                                                                            -4 + 2.0 ** -22, 8 - 2.0 ** -21]],
                    np.float32), None)])
fail_case("nextafter_int8", two_op("aten::nextafter.out", [3], [3], [3], st=I8, out_st=I8), NOT_SUPPORTED,
          "dtype must be float32")
# minimum / maximum / fmin / fmax (op_minimum_maximum.c): minimum(NaN, 1) is NaN, fmin(NaN, 1) is 1, both NaN
# NaN; -0.0 against +0.0 keeps self (torch 1.13's scalar loop); -inf / inf order as numbers
MM_A = np.array([1, -2, np.nan, 1, np.nan, -0.0, 0.0, -np.inf], np.float32)
MM_B = np.array([3, -5, 1, np.nan, np.nan, 0.0, -0.0, np.inf], np.float32)
run_case("minimum_values", two_op("aten::minimum.out", [8], [8], [8]), [(MM_A, None), (MM_B, None)],
         [(np.array([1, -5, np.nan, np.nan, np.nan, -0.0, 0.0, -np.inf], np.float32), None)])
run_case("maximum_values", two_op("aten::maximum.out", [8], [8], [8]), [(MM_A, None), (MM_B, None)],
         [(np.array([3, -2, np.nan, np.nan, np.nan, -0.0, 0.0, np.inf], np.float32), None)])
run_case("fmin_values", two_op("aten::fmin.out", [8], [8], [8]), [(MM_A, None), (MM_B, None)],
         [(np.array([1, -5, 1, 1, np.nan, -0.0, 0.0, -np.inf], np.float32), None)])
run_case("fmax_values", two_op("aten::fmax.out", [8], [8], [8]), [(MM_A, None), (MM_B, None)],
         [(np.array([3, -2, 1, 1, np.nan, -0.0, 0.0, np.inf], np.float32), None)])
# broadcast [2, 1] against [3]; int64 beyond 2^53 and int8 / uint8 / bool compare as their own numbers
run_case("maximum_broadcast", two_op("aten::maximum.out", [2, 1], [3], [2, 3]),
         [(np.array([[0.5], [-1]], np.float32), None), (np.array([-2, 0.5, 7], np.float32), None)],
         [(np.array([[0.5, 0.5, 7], [-1, 0.5, 7]], np.float32), None)])
run_case("minimum_int64", two_op("aten::minimum.out", [3], [3], [3], st=I64, out_st=I64),
         [(np.array([2 ** 53 + 1, -7, 2 ** 62], np.int64), None), (np.array([2 ** 53, -8, -2 ** 63], np.int64), None)],
         [(np.array([2 ** 53, -8, -2 ** 63], np.int64), None)])
run_case("maximum_int8", two_op("aten::maximum.out", [3], [3], [3], st=I8, out_st=I8),
         [(np.array([-128, 5, -1], np.int8), None), (np.array([127, -5, -2], np.int8), None)],
         [(np.array([127, 5, -1], np.int8), None)])
run_case("fmin_uint8", two_op("aten::fmin.out", [3], [3], [3], st=ScalarType.BYTE, out_st=ScalarType.BYTE),
         [(np.array([200, 5, 0], np.uint8), None), (np.array([100, 255, 1], np.uint8), None)],
         [(np.array([100, 5, 0], np.uint8), None)])
run_case("minimum_bool", two_op("aten::minimum.out", [4], [4], [4], st=ScalarType.BOOL, out_st=ScalarType.BOOL),
         [(np.array([0, 1, 0, 1], np.uint8), None), (np.array([0, 0, 1, 1], np.uint8), None)],
         [(np.array([0, 0, 0, 1], np.uint8), None)])
fail_case("minimum_mixed_dtype", two_op("aten::minimum.out", [3], [3], [3], out_st=I64), NOT_SUPPORTED,
          "share one dtype")
fail_case("maximum_float64", two_op("aten::maximum.out", [3], [3], [3], st=ScalarType.DOUBLE,
                                    out_st=ScalarType.DOUBLE), NOT_SUPPORTED, "dtype not supported")
fail_case("fmax_no_broadcast", two_op("aten::fmax.out", [3], [4], [4]), INVALID_ARGUMENT, "does not broadcast")


def frexp_op(shape, order=None, m_order=None, e_st=ScalarType.INT, e_shape=None):
    b = ProgramBuilder()
    x = b.tensor(F32, shape, order)
    m = b.tensor(F32, shape, m_order)
    e = b.tensor(e_st, e_shape or shape, m_order)
    b.call("aten::frexp.Tensor_out", self=x, mantissa=m, exponent=e)
    b.set_io([x], [m, e])
    return b


# frexp: 8 = 0.5 * 2^4, -3 = -0.75 * 2^2, 0.1 = 0.8 * 2^-3, the smallest subnormal 0.5 * 2^-148, the largest
# (1 - 2^-23) * 2^-126 ... as 0.99999988 * 2^-126; 0, -0, inf keep themselves with exponent 0. A
# channels-last self read into contiguous outs
X_FREXP = np.array([8, -3, 0.1, 2.0 ** -149, 2.0 ** -126 - 2.0 ** -149, 0, -0.0, np.inf], np.float32)
M_FREXP = np.array([0.5, -0.75, np.float32(0.1) * 8, 0.5, (2.0 ** -126 - 2.0 ** -149) * 2.0 ** 126, 0, -0.0,
                    np.inf], np.float32)
E_FREXP = np.array([4, 2, -3, -148, -126, 0, 0, 0], np.int32)
run_case("frexp_values", frexp_op([8]), [(X_FREXP, None)], [(M_FREXP, None), (E_FREXP, None)])
run_case("frexp_channels_last_self", frexp_op([1, 2, 2, 2], order=CHANNELS_LAST),
         [(X_FREXP.reshape(1, 2, 2, 2), CHANNELS_LAST)],
         [(M_FREXP.reshape(1, 2, 2, 2), None), (E_FREXP.reshape(1, 2, 2, 2), None)])
fail_case("frexp_exponent_int64", frexp_op([3], e_st=I64), INVALID_ARGUMENT, "exponent must be int32")
fail_case("frexp_exponent_sizes", frexp_op([3], e_shape=[4]), INVALID_ARGUMENT, "exponent must have mantissa's")
fail_case("special_zeta_broadcast", two_op("aten::special_zeta.out", [2], [3], [3]), INVALID_ARGUMENT,
          "does not broadcast")


def nms_op(k, t, box_shape=None, order_st=I64, out_st=F32):
    b = ProgramBuilder()
    x, o, y = b.tensor(F32, box_shape or [k, 4]), b.tensor(order_st, [k]), b.tensor(out_st, [k])
    b.call("ptec::nms.out", boxes=x, order=o, iou_threshold=t, out=y)
    b.set_io([x, o], [y])
    return b


# ptec::nms.out (op_nms.c), torchvision's CPU nms walk over a given order: b0, b1 the same square (IoU 1),
# b2 touching b0 (IoU 0), b3 half over b0 and b2 (IoU 1/3 with each), b4, b5 the same empty box (0 / 0:
# NaN, never above t). Walking 3, 0, 1, 2, 5, 4: at t 0.5 only b1 goes (its twin b0 kept); at t 0.3 b3
# takes b0, b1 and b2; at t 1 nothing (an IoU of exactly 1 is not above it).
NMS_BOXES = np.array([[0, 0, 2, 2], [0, 0, 2, 2], [2, 0, 4, 2], [1, 0, 3, 2], [5, 5, 5, 5], [5, 5, 5, 5]],
                     np.float32)
NMS_ORDER = np.array([3, 0, 1, 2, 5, 4], np.int64)
for t, want in ((0.5, [1, 1, 0, 1, 1, 1]), (0.3, [1, 0, 0, 0, 1, 1]), (1.0, [1] * 6)):
    run_case(f"nms_keep_t{int(t * 10)}", nms_op(6, t), [(NMS_BOXES, None), (NMS_ORDER, None)],
             [(np.array(want, np.float32), None)])
exec_fail_case("nms_order_past_k", nms_op(6, 0.5), [(NMS_BOXES, None), (np.array([3, 0, 1, 2, 6, 4], np.int64), None)],
               INVALID_ARGUMENT, "order holds an index outside")
fail_case("nms_boxes_not_4", nms_op(6, 0.5, box_shape=[6, 3]), NOT_SUPPORTED, "boxes must be float32 [K, 4]")
fail_case("nms_order_int32", nms_op(6, 0.5, order_st=ScalarType.INT), INVALID_ARGUMENT, "order must be int64 [K]")
fail_case("nms_out_int64", nms_op(6, 0.5, out_st=I64), INVALID_ARGUMENT, "out must be float32 [K]")


def nms_tensor_op(k, t_st=F32, t_shape=()):
    b = ProgramBuilder()
    x, o, t, y = b.tensor(F32, [k, 4]), b.tensor(I64, [k]), b.tensor(t_st, list(t_shape)), b.tensor(F32, [k])
    b.call("ptec::nms.Tensor_out", boxes=x, order=o, iou_threshold=t, out=y)
    b.set_io([x, o, t], [y])
    return b


# ptec::nms.Tensor_out: the same walk with the threshold a program input (float32, one element). b3's IoU
# with b0 and b2 is float32(1/3): a threshold of exactly that value keeps them (not above), one float32 step
# below it suppresses them; NaN suppresses nothing (torchvision: iou > NaN is false).
T_THIRD = np.float32(1 / 3)
for name, t, shape, want in (("t5", 0.5, (), [1, 1, 0, 1, 1, 1]), ("third", T_THIRD, (), [1, 1, 0, 1, 1, 1]),
                             ("below_third", np.nextafter(T_THIRD, np.float32(0)), (1,), [1, 0, 0, 0, 1, 1]),
                             ("nan", np.nan, (), [1] * 6)):
    run_case(f"nms_tensor_{name}", nms_tensor_op(6, t_shape=shape),
             [(NMS_BOXES, None), (NMS_ORDER, None), (np.full(shape, t, np.float32), None)],
             [(np.array(want, np.float32), None)])
fail_case("nms_tensor_threshold_int64", nms_tensor_op(6, t_st=I64), INVALID_ARGUMENT,
          "iou_threshold must be float32 of one element")
fail_case("nms_tensor_threshold_two", nms_tensor_op(6, t_shape=(2,)), INVALID_ARGUMENT,
          "iou_threshold must be float32 of one element")


def batched_nms_op(k, t, idxs_st=I64, out_st=I64, scores_shape=None):
    b = ProgramBuilder()
    x, v, o = b.tensor(F32, [k, 4]), b.tensor(F32, scores_shape or [k]), b.tensor(I64, [k])
    c, y = b.tensor(idxs_st, [k]), b.tensor(out_st, [k])
    b.call("ptec::batched_nms.out", boxes=x, scores=v, order=o, idxs=c, iou_threshold=t, out=y)
    b.set_io([x, v, o, c], [y])
    return b


# ptec::batched_nms.out (op_batched_nms.c): torchvision 0.14's per-class nms, then torch's unstable descending
# sort of the kept scores. 40 disjoint unit boxes b_p = [2p, 0, 2p + 1, 1], scores (5p mod 4) / 4 (ten of each
# level: ties, more than 16 kept, so the introsort's partitions decide), order their stable descending sort;
# b1 = b0 (IoU 1), b3 = b2, b7 = b6 moved half a side (IoU 1/3). int64 classes p mod 3, b1 b0's, b3 not b2's,
# b7 b6's; float32 classes the same but b2 0.0 and b3 -0.0 (one class), b5 NaN (no class: never kept). The
# wanted indices are torchvision._batched_nms_vanilla's (torch 1.13 CPU); none is the stable order.
BN_P = np.arange(40)
BN_BOXES = np.stack([2.0 * BN_P, 0 * BN_P, 2.0 * BN_P + 1, 0 * BN_P + 1], 1).astype(np.float32)
BN_BOXES[1], BN_BOXES[3], BN_BOXES[7] = BN_BOXES[0], BN_BOXES[2], BN_BOXES[6] + np.float32([0.5, 0, 0.5, 0])
BN_SCORES = (((BN_P * 5) % 4) * 0.25).astype(np.float32)
BN_ORDER = np.argsort(-BN_SCORES, kind="stable").astype(np.int64)
BN_I64 = (BN_P % 3).astype(np.int64)
BN_I64[1], BN_I64[3], BN_I64[7] = BN_I64[0], BN_I64[2] + 1, BN_I64[6]
BN_F32 = (BN_P % 3).astype(np.float32)
BN_F32[1], BN_F32[2], BN_F32[3], BN_F32[5], BN_F32[7] = BN_F32[0], 0.0, -0.0, np.nan, BN_F32[6]
BN_WANT = {
    (0.5, "i64"): [39, 3, 35, 19, 7, 31, 15, 27, 11, 23, 18, 2, 22, 26, 30, 34, 38, 14, 6, 10, 29, 1, 37, 5, 33, 9,
                   17, 25, 13, 21, 28, 12, 8, 32, 24, 36, 20, 4, 16],
    (0.5, "f32"): [3, 39, 35, 31, 27, 23, 19, 15, 7, 11, 38, 14, 10, 34, 18, 6, 30, 22, 26, 25, 1, 37, 33, 29, 21, 9,
                   17, 13, 24, 28, 8, 20, 32, 4, 36, 16, 12],
    (0.3, "i64"): [39, 3, 35, 7, 31, 11, 27, 23, 15, 19, 2, 38, 34, 30, 26, 22, 14, 10, 18, 29, 1, 37, 5, 33, 9, 13,
                   25, 21, 17, 12, 28, 24, 32, 16, 8, 36, 20, 4],
    (0.3, "f32"): [3, 39, 35, 31, 27, 23, 19, 15, 11, 7, 38, 14, 34, 18, 10, 22, 30, 26, 1, 37, 33, 29, 25, 9, 21, 17,
                   13, 8, 28, 24, 32, 20, 4, 36, 16, 12]}
for (t, kind), want in BN_WANT.items():
    classes, st = (BN_I64, I64) if kind == "i64" else (BN_F32, F32)
    run_case(f"batched_nms_{kind}_t{int(t * 10)}", batched_nms_op(40, t, idxs_st=st),
             [(BN_BOXES, None), (BN_SCORES, None), (BN_ORDER, None), (classes, None)],
             [(np.array(want + [-1] * (40 - len(want)), np.int64), None)])
run_case("batched_nms_i32_t5", batched_nms_op(40, 0.5, idxs_st=ScalarType.INT),
         [(BN_BOXES, None), (BN_SCORES, None), (BN_ORDER, None), (BN_I64.astype(np.int32), None)],
         [(np.array(BN_WANT[(0.5, "i64")] + [-1], np.int64), None)])
run_case("batched_nms_empty", batched_nms_op(0, 0.5), [(np.zeros((0, 4), np.float32), None),
                                                        (np.zeros(0, np.float32), None), (np.zeros(0, np.int64), None),
                                                        (np.zeros(0, np.int64), None)], [(np.zeros(0, np.int64), None)])
exec_fail_case("batched_nms_order_past_k", batched_nms_op(40, 0.5),
               [(BN_BOXES, None), (BN_SCORES, None), (np.where(BN_ORDER == 9, 40, BN_ORDER), None), (BN_I64, None)],
               INVALID_ARGUMENT, "order holds an index outside")
exec_fail_case("batched_nms_order_negative", batched_nms_op(40, 0.5),
               [(BN_BOXES, None), (BN_SCORES, None), (np.where(BN_ORDER == 9, -1, BN_ORDER), None), (BN_I64, None)],
               INVALID_ARGUMENT, "order holds an index outside")
fail_case("batched_nms_idxs_bool", batched_nms_op(40, 0.5, idxs_st=ScalarType.BOOL), INVALID_ARGUMENT,
          "idxs must be int64, int32 or float32")
fail_case("batched_nms_out_float", batched_nms_op(40, 0.5, out_st=F32), INVALID_ARGUMENT, "out must be int64 [K]")
fail_case("batched_nms_scores_short", batched_nms_op(40, 0.5, scores_shape=[39]), INVALID_ARGUMENT,
          "scores must be float32 [K]")


def batched_nms_tensor_op(k, t_st=F32, t_shape=()):
    b = ProgramBuilder()
    x, v, o, c = b.tensor(F32, [k, 4]), b.tensor(F32, [k]), b.tensor(I64, [k]), b.tensor(I64, [k])
    t, y = b.tensor(t_st, list(t_shape)), b.tensor(I64, [k])
    b.call("ptec::batched_nms.Tensor_out", boxes=x, scores=v, order=o, idxs=c, iou_threshold=t, out=y)
    b.set_io([x, v, o, c, t], [y])
    return b


# ptec::batched_nms.Tensor_out: the int64-class cases above with the threshold a program input
for t in (0.5, 0.3):
    want = BN_WANT[(t, "i64")]
    run_case(f"batched_nms_tensor_t{int(t * 10)}", batched_nms_tensor_op(40),
             [(BN_BOXES, None), (BN_SCORES, None), (BN_ORDER, None), (BN_I64, None), (np.float32(t), None)],
             [(np.array(want + [-1] * (40 - len(want)), np.int64), None)])
fail_case("batched_nms_tensor_threshold_int64", batched_nms_tensor_op(40, t_st=I64), INVALID_ARGUMENT,
          "iou_threshold must be float32 of one element")
fail_case("pow_int8", two_op(POW, [3], [3], [3], st=I8, out_st=I8, other="exponent"), NOT_SUPPORTED,
          "dtype must be float32")
fail_case("atan2_out_int64", two_op("aten::atan2.out", [3], [3], [3], out_st=I64), NOT_SUPPORTED,
          "dtype must be float32")
fail_case("hypot_broadcast", two_op("aten::hypot.out", [2], [3], [3]), INVALID_ARGUMENT, "does not broadcast")
fail_case("fmod_rank", two_op("aten::fmod.Tensor_out", [1, 3], [3], [3]), INVALID_ARGUMENT,
          "more dimensions than out")

# -- integer division (int_binary.c): floor_divide, and fmod / remainder of int32 / int64 -------------
I32 = ScalarType.INT
L64 = -2 ** 63
# 7 and -7 by 2 and -2: floor 3 -4 -4 3; remainder (the divisor's sign) 1 1 -1 -1; fmod (the
# dividend's) 1 -1 1 -1; 0 by 5 is 0; the least int64 by 1 is itself, by -3 floors to
# 3074457345618258602 (its remainder -2, fmod -2), by 2^62 is -2 (0, 0)
DIV_A = np.array([7, -7, 7, -7, 0, L64, L64, L64], np.int64)
DIV_B = np.array([2, 2, -2, -2, 5, 1, -3, 2 ** 62], np.int64)
for key, want in (("aten::floor_divide.out", [3, -4, -4, 3, 0, L64, 3074457345618258602, -2]),
                  ("aten::remainder.Tensor_out", [1, 1, -1, -1, 0, 0, -2, 0]),
                  ("aten::fmod.Tensor_out", [1, -1, 1, -1, 0, 0, -2, 0])):
    name = key[6:].split(".")[0]
    run_case(f"{name}_int64", two_op(key, [8], [8], [8], st=I64, out_st=I64), [(DIV_A, None), (DIV_B, None)],
             [(np.array(want, np.int64), None)])
# int32, broadcast [2, 1] by [3]: rows 10 and -10 by 3, -4, 7
for key, want in (("aten::floor_divide.out", [[3, -3, 1], [-4, 2, -2]]),
                  ("aten::remainder.Tensor_out", [[1, -2, 3], [2, -2, 4]]),
                  ("aten::fmod.Tensor_out", [[1, 2, 3], [-1, -2, -3]])):
    name = key[6:].split(".")[0]
    run_case(f"{name}_int32_broadcast", two_op(key, [2, 1], [3], [2, 3], st=I32, out_st=I32),
             [(np.array([[10], [-10]], np.int32), None), (np.array([3, -4, 7], np.int32), None)],
             [(np.array(want, np.int32), None)])
# a zero divisor (PyTorch raises ZeroDivisionError) and the least value by -1 (PyTorch's CPU traps) fail
# the execute, whichever element holds them
for key in ("aten::floor_divide.out", "aten::remainder.Tensor_out", "aten::fmod.Tensor_out"):
    name = key[6:].split(".")[0]
    exec_fail_case(f"{name}_by_zero", two_op(key, [3], [3], [3], st=I64, out_st=I64),
                   [(np.array([4, 5, 6], np.int64), None), (np.array([1, 2, 0], np.int64), None)],
                   INVALID_ARGUMENT, "division by zero")
    exec_fail_case(f"{name}_int32_least_by_minus_one", two_op(key, [2], [1], [2], st=I32, out_st=I32),
                   [(np.array([5, -2 ** 31], np.int32), None), (np.array([-1], np.int32), None)],
                   INVALID_ARGUMENT, "least integer divided by -1")
exec_fail_case("floor_divide_int64_least_by_minus_one", two_op("aten::floor_divide.out", [1], [1], [1], st=I64,
                                                               out_st=I64),
               [(np.array([L64], np.int64), None), (np.array([-1], np.int64), None)], INVALID_ARGUMENT,
               "least integer divided by -1")
# refused at load: floats or int8 in floor_divide, mixed dtypes (no promotion), shapes that do not broadcast
fail_case("floor_divide_float", two_op("aten::floor_divide.out", [3], [3], [3]), NOT_SUPPORTED,
          "dtype must be int32 or int64")
fail_case("floor_divide_int8", two_op("aten::floor_divide.out", [3], [3], [3], st=I8, out_st=I8), NOT_SUPPORTED,
          "dtype must be int32 or int64")
fail_case("remainder_int64_out_float", two_op("aten::remainder.Tensor_out", [3], [3], [3], st=I64, out_st=F32),
          NOT_SUPPORTED, "share one dtype")
fail_case("fmod_int64_out_int32", two_op("aten::fmod.Tensor_out", [3], [3], [3], st=I64, out_st=I32),
          NOT_SUPPORTED, "share one dtype")
b = ProgramBuilder()
x, y, out = b.tensor(I64, [3]), b.tensor(I32, [3]), b.tensor(I64, [3])
b.call("aten::floor_divide.out", self=x, other=y, out=out)
b.set_io([x, y], [out])
fail_case("floor_divide_mixed_int", b, NOT_SUPPORTED, "share one dtype")
fail_case("floor_divide_broadcast", two_op("aten::floor_divide.out", [2], [3], [3], st=I64, out_st=I64),
          INVALID_ARGUMENT, "does not broadcast")
fail_case("remainder_int32_rank", two_op("aten::remainder.Tensor_out", [1, 3], [3], [3], st=I32, out_st=I32),
          INVALID_ARGUMENT, "more dimensions than out")
# bitwise and / or / xor of 12 = 0b1100 and 10 = 0b1010: 8, 14, 6; of -1 and 5: 5, -1, -6; of the
# least int64 and -1: itself, -1, its largest
BIT_A = np.array([12, -1, L64], np.int64)
BIT_B = np.array([10, 5, -1], np.int64)
for op, want in (("and", [8, 5, L64]), ("or", [14, -1, -1]), ("xor", [6, -6, 2 ** 63 - 1])):
    run_case(f"bitwise_{op}_int64", two_op(f"aten::bitwise_{op}.Tensor_out", [3], [3], [3], st=I64, out_st=I64),
             [(BIT_A, None), (BIT_B, None)], [(np.array(want, np.int64), None)])
run_case("bitwise_xor_int32_broadcast", two_op("aten::bitwise_xor.Tensor_out", [2, 1], [2], [2, 2], st=I32,
                                               out_st=I32),
         [(np.array([[0], [-2 ** 31]], np.int32), None), (np.array([-1, 1], np.int32), None)],
         [(np.array([[-1, 1], [2 ** 31 - 1, -2 ** 31 + 1]], np.int32), None)])
# shifts: 1 << 63 is the least int64, -1 << 63 too; 5 << 0 is 5; 3 << 62 wraps to -2^62; -5 >> 1 is -3
# (arithmetic), -1 >> 63 stays -1, 2^62 >> 62 is 1; int32: 1 << 31 the least int32, -8 >> 31 is -1
SH_A = np.array([1, -1, 5, 3, -5, -1, 2 ** 62], np.int64)
SH_B = np.array([63, 63, 0, 62, 1, 63, 62], np.int64)
run_case("left_shift_int64", two_op("aten::bitwise_left_shift.Tensor_out", [7], [7], [7], st=I64, out_st=I64),
         [(SH_A, None), (SH_B, None)], [(np.array([L64, L64, 5, -2 ** 62, -10, L64, 0], np.int64), None)])
run_case("right_shift_int64", two_op("aten::bitwise_right_shift.Tensor_out", [7], [7], [7], st=I64, out_st=I64),
         [(SH_A, None), (SH_B, None)], [(np.array([0, -1, 5, 0, -3, -1, 1], np.int64), None)])
run_case("shifts_int32", two_op("aten::bitwise_left_shift.Tensor_out", [2], [2], [2], st=I32, out_st=I32),
         [(np.array([1, 3], np.int32), None), (np.array([31, 30], np.int32), None)],
         [(np.array([-2 ** 31, -2 ** 30], np.int32), None)])
run_case("right_shift_int32", two_op("aten::bitwise_right_shift.Tensor_out", [2], [1], [2], st=I32, out_st=I32),
         [(np.array([-8, 2 ** 31 - 1], np.int32), None), (np.array([31], np.int32), None)],
         [(np.array([-1, 0], np.int32), None)])
# a shift by a negative amount or by the width or more fails the execute (torch's results differ by version)
for key, st, amount in (("aten::bitwise_left_shift.Tensor_out", I64, 64), ("aten::bitwise_right_shift.Tensor_out",
                                                                          I64, -1),
                        ("aten::bitwise_left_shift.Tensor_out", I32, 32)):
    name = f"{key[13:].split('.')[0]}_{'int64' if st == I64 else 'int32'}_by_{amount}".replace("-", "minus_")
    exec_fail_case(name, two_op(key, [2], [2], [2], st=st, out_st=st),
                   [(np.array([1, 2], np.int64 if st == I64 else np.int32), None),
                    (np.array([1, amount], np.int64 if st == I64 else np.int32), None)],
                   INVALID_ARGUMENT, "shift amount")
fail_case("bitwise_and_float", two_op("aten::bitwise_and.Tensor_out", [3], [3], [3]), NOT_SUPPORTED,
          "dtype must be int32 or int64")
fail_case("bitwise_or_bool", two_op("aten::bitwise_or.Tensor_out", [3], [3], [3], st=ScalarType.BOOL,
                                    out_st=ScalarType.BOOL), NOT_SUPPORTED, "dtype must be int32 or int64")
fail_case("left_shift_mixed", two_op("aten::bitwise_left_shift.Tensor_out", [3], [3], [3], st=I64, out_st=I32),
          NOT_SUPPORTED, "share one dtype")
fail_case("right_shift_broadcast", two_op("aten::bitwise_right_shift.Tensor_out", [3], [2], [3], st=I32,
                                          out_st=I32), INVALID_ARGUMENT, "does not broadcast")
# gcd: Euclid's on the magnitudes, gcd(0, 0) = 0, gcd(-12, 18) = 6; the least int64's magnitude is itself
# (std::abs wraps), so gcd(least, 0) is the least value and gcd(least, 6) is -2 (least % 6 = -2 in C);
# lcm = |a / gcd * b|: lcm(-12, 18) = 36, lcm(0, 0) = 0, lcm(4, 0) = 0, lcm(least, 6) = |2^62 * 6| wraps to
# the least value (3 * 2^63 mod 2^64 = 2^63), lcm(2^62, 3) = 3 * 2^62 wraps to -2^62, abs 2^62
GCD_A = np.array([0, -12, 12, L64, L64, 4, 2 ** 62, -7], np.int64)
GCD_B = np.array([0, 18, -18, 0, 6, 0, 3, -7], np.int64)
run_case("gcd_int64", two_op("aten::gcd.out", [8], [8], [8], st=I64, out_st=I64), [(GCD_A, None), (GCD_B, None)],
         [(np.array([0, 6, 6, L64, -2, 4, 1, 7], np.int64), None)])
run_case("lcm_int64", two_op("aten::lcm.out", [8], [8], [8], st=I64, out_st=I64), [(GCD_A, None), (GCD_B, None)],
         [(np.array([0, 36, 36, 0, L64, 0, 2 ** 62, 7], np.int64), None)])
# int32, broadcast [2,1] against [3]: gcd(-2^31, 6) = -2 as in int64, gcd(-2^31, 15) = -1 (15 % -2^31 = 15,
# -2^31 % 15 = -8, 15 % -8 = 7, -8 % 7 = -1, 7 % -1 = 0), gcd(-2^31, 0) = -2^31; gcd(10, 6/15/0) = 2, 5, 10;
# lcm(-2^31, 1) = |-2^31| wraps to -2^31; lcm(46341, 46343) (coprime) = 2147580963 wraps to -2147386333, abs
run_case("gcd_int32_broadcast", two_op("aten::gcd.out", [2, 1], [3], [2, 3], st=I32, out_st=I32),
         [(np.array([[-2 ** 31], [10]], np.int32), None), (np.array([6, 15, 0], np.int32), None)],
         [(np.array([[-2, -1, -2 ** 31], [2, 5, 10]], np.int32), None)])
run_case("lcm_int32", two_op("aten::lcm.out", [3], [3], [3], st=I32, out_st=I32),
         [(np.array([-2 ** 31, 46341, -6], np.int32), None), (np.array([1, 46343, 4], np.int32), None)],
         [(np.array([-2 ** 31, 2147386333, 12], np.int32), None)])
# lcm(least, 5): gcd(least, 5) is -1 and least / -1 traps in PyTorch's CPU kernel: the execute fails
exec_fail_case("lcm_least_by_minus_one", two_op("aten::lcm.out", [2], [2], [2], st=I64, out_st=I64),
               [(np.array([4, L64], np.int64), None), (np.array([6, 5], np.int64), None)], INVALID_ARGUMENT,
               "divided by -1")
fail_case("gcd_float", two_op("aten::gcd.out", [3], [3], [3]), NOT_SUPPORTED, "dtype must be int32 or int64")
fail_case("lcm_mixed", two_op("aten::lcm.out", [3], [3], [3], st=I64, out_st=I32), NOT_SUPPORTED,
          "share one dtype")

# integer reductions (op_int_reduce.c). sum of [[2^62, 2^62, 5], [-1, -2, -3]]: every element 2^63 - 1
# (2^63 + 5 - 6 wraps to 2^63 - 1: 2^63 + 5 is the least value + 5, minus 6 is the least - 1 = 2^63 - 1);
# along dim 1 kept: [2^63 + 5 wrapped = least + 5, -6]
SUM_X = np.array([[2 ** 62, 2 ** 62, 5], [-1, -2, -3]], np.int64)
run_case("sum_int64_all", arg_op("aten::sum.IntList_out", [2, 3], [], st=I64, out_st=I64, dim=None, keepdim=False,
                                 dtype=None), [(SUM_X, None)], [(np.array(2 ** 63 - 1, np.int64), None)])
run_case("sum_int64_dim1_keepdim", arg_op("aten::sum.IntList_out", [2, 3], [2, 1], st=I64, out_st=I64, dim=[-1],
                                          keepdim=True, dtype=None),
         [(SUM_X, None)], [(np.array([[L64 + 5], [-6]], np.int64), None)])
# int32 columns into int64 (PyTorch's promotion): -2^31 + -2^31 = -2^32 exactly; with dtype int32 it wraps to 0
SUM_I = np.array([[-2 ** 31, 7], [-2 ** 31, -9]], np.int32)
run_case("sum_int32_into_int64", arg_op("aten::sum.IntList_out", [2, 2], [2], st=I32, out_st=I64, dim=[0],
                                        keepdim=False, dtype=None),
         [(SUM_I, None)], [(np.array([-2 ** 32, -2], np.int64), None)])
run_case("sum_int32_dtype_int32", arg_op("aten::sum.IntList_out", [2, 2], [2], st=I32, out_st=I32, dim=[0],
                                         keepdim=False, dtype=int(I32)),
         [(SUM_I, None)], [(np.array([0, -2], np.int32), None)])
# channels-last [1,2,1,2] over C: pixel 0 holds (1, 3) -> 4, pixel 1 (4, -2) -> 2
run_case("sum_int64_channels_last", arg_op("aten::sum.IntList_out", [1, 2, 1, 2], [1, 1, 2], st=I64, out_st=I64,
                                           order=CHANNELS_LAST, dim=[1], keepdim=False, dtype=None),
         [(np.array([1, 4, 3, -2], np.int64).reshape(1, 2, 1, 2), CHANNELS_LAST)],
         [(np.array([4, 2], np.int64).reshape(1, 1, 2), None)])
# a sum over no elements is 0, as PyTorch's
run_case("sum_int64_empty", arg_op("aten::sum.IntList_out", [2, 0], [2], st=I64, out_st=I64, dim=[1],
                                   keepdim=False, dtype=None),
         [(np.zeros((2, 0), np.int64), None)], [(np.array([0, 0], np.int64), None)])
# amax / amin of [[3, least, 9], [9, -1, 2^62]] over dims [0, 1]: 2^62 and the least value; amin along dim 1 of
# int32 [[5, -5], [0, 2^31 - 1]] kept: [[-5], [0]]
AMAX_X = np.array([[3, L64, 9], [9, -1, 2 ** 62]], np.int64)
run_case("amax_int64_all", arg_op("aten::amax.out", [2, 3], [], st=I64, out_st=I64, dim=[0, 1], keepdim=False),
         [(AMAX_X, None)], [(np.array(2 ** 62, np.int64), None)])
run_case("amin_int64_none", arg_op("aten::amin.out", [2, 3], [1, 1], st=I64, out_st=I64, dim=[], keepdim=True),
         [(AMAX_X, None)], [(np.array([[L64]], np.int64), None)])
run_case("amin_int32_keepdim", arg_op("aten::amin.out", [2, 2], [2, 1], st=I32, out_st=I32, dim=[1], keepdim=True),
         [(np.array([[5, -5], [0, 2 ** 31 - 1]], np.int32), None)], [(np.array([[-5], [0]], np.int32), None)])
# cumsum down dim 0 of [[2^62, -1], [2^62, -2], [1, 3]]: [2^62, -1], [least (2^63 wrapped), -3], [least + 1, 0];
# int32 along dim 1 into int64: [2^31 - 1, 2^31 - 1] -> [2^31 - 1, 2^32 - 2] exactly
CUM_X = np.array([[2 ** 62, -1], [2 ** 62, -2], [1, 3]], np.int64)
run_case("cumsum_int64_dim0", arg_op("aten::cumsum.out", [3, 2], [3, 2], st=I64, out_st=I64, dim=0, dtype=None),
         [(CUM_X, None)], [(np.array([[2 ** 62, -1], [L64, -3], [L64 + 1, 0]], np.int64), None)])
run_case("cumsum_int32_into_int64", arg_op("aten::cumsum.out", [1, 2], [1, 2], st=I32, out_st=I64, dim=-1,
                                           dtype=None),
         [(np.array([[2 ** 31 - 1, 2 ** 31 - 1]], np.int32), None)], [(np.array([[2 ** 31 - 1, 2 ** 32 - 2]],
                                                                                 np.int64), None)])
# argmax / argmin of int64 rows: 2^53 + 1 beats 2^53 (a double would tie them), the first of equals wins
run_case("argmax_int64_rows", arg_op("aten::argmax.out", [2, 3], [2], st=I64, dim=1, keepdim=False),
         [(np.array([[2 ** 53, 2 ** 53 + 1, 2 ** 53 + 1], [L64, -1, L64]], np.int64), None)],
         [(np.array([1, 1], np.int64), None)])
run_case("argmin_int32_flat", arg_op("aten::argmin.out", [2, 2], [], st=I32, dim=None, keepdim=False),
         [(np.array([[4, -2 ** 31], [0, -2 ** 31]], np.int32), None)], [(np.array(1, np.int64), None)])
# products wrap modulo 2^64: 2^62 * 2^62 * 5 is 0 (2^124), -1 * -2 * -3 is -6; along dim 0 of int32 [[2^31 - 1, 3],
# [2, -4]] into int64: 2^32 - 2 (exact), -12; prod.out of [2^32, 2^32 - 1] (into int64) is 2^64 - 2^32 wrapped: -2^32;
# over no elements 1
run_case("prod_int64_dim1", arg_op("aten::prod.int_out", [2, 3], [2], st=I64, out_st=I64, dim=1, keepdim=False,
                                   dtype=None), [(SUM_X, None)], [(np.array([0, -6], np.int64), None)])
run_case("prod_int32_into_int64_keepdim", arg_op("aten::prod.int_out", [2, 2], [1, 2], st=I32, out_st=I64, dim=0,
                                                 keepdim=True, dtype=None),
         [(np.array([[2 ** 31 - 1, 3], [2, -4]], np.int32), None)], [(np.array([[2 ** 32 - 2, -12]], np.int64), None)])
run_case("prod_all_int64", arg_op("aten::prod.out", [2], [], st=I64, out_st=I64, dtype=None),
         [(np.array([2 ** 32, 2 ** 32 - 1], np.int64), None)], [(np.array(-2 ** 32, np.int64), None)])
run_case("prod_int64_empty", arg_op("aten::prod.int_out", [2, 0], [2], st=I64, out_st=I64, dim=1, keepdim=False,
                                    dtype=None), [(np.zeros((2, 0), np.int64), None)],
         [(np.array([1, 1], np.int64), None)])
fail_case("prod_out_int32", arg_op("aten::prod.out", [3], [], st=I32, out_st=I32, dtype=None), INVALID_ARGUMENT,
          "out must be int64")
fail_case("prod_dim", arg_op("aten::prod.int_out", [2, 3], [2], st=I64, out_st=I64, dim=2, keepdim=False,
                             dtype=None), INVALID_ARGUMENT, "dim out of range")
fail_case("sum_float", arg_op("aten::sum.IntList_out", [2, 3], [2], st=F32, out_st=F32, dim=[1], keepdim=False,
                              dtype=None), NOT_SUPPORTED, "self must be int32 or int64")
fail_case("sum_out_int32", arg_op("aten::sum.IntList_out", [2, 3], [2], st=I32, out_st=I32, dim=[1],
                                  keepdim=False, dtype=None), INVALID_ARGUMENT, "out must be int64")
fail_case("sum_dtype_float", arg_op("aten::sum.IntList_out", [2, 3], [2], st=I64, out_st=F32, dim=[1],
                                    keepdim=False, dtype=int(F32)), NOT_SUPPORTED, "dtype must be None, int32")
fail_case("sum_twice", arg_op("aten::sum.IntList_out", [2, 3], [2], st=I64, out_st=I64, dim=[1, -1],
                              keepdim=False, dtype=None), INVALID_ARGUMENT, "dimension twice")
fail_case("sum_sizes", arg_op("aten::sum.IntList_out", [2, 3], [3], st=I64, out_st=I64, dim=[1], keepdim=False,
                              dtype=None), INVALID_ARGUMENT, "out's sizes")
fail_case("amax_empty", arg_op("aten::amax.out", [2, 0], [2], st=I64, out_st=I64, dim=[1], keepdim=False),
          INVALID_ARGUMENT, "over no elements")
fail_case("amax_out_dtype", arg_op("aten::amax.out", [2, 3], [2], st=I64, out_st=I32, dim=[1], keepdim=False),
          INVALID_ARGUMENT, "out must have self's dtype")
fail_case("amin_dim", arg_op("aten::amin.out", [2, 3], [2], st=I32, out_st=I32, dim=[2], keepdim=False),
          INVALID_ARGUMENT, "dim out of range")
fail_case("cumsum_dim", arg_op("aten::cumsum.out", [2, 3], [2, 3], st=I64, out_st=I64, dim=-3, dtype=None),
          INVALID_ARGUMENT, "dim out of range")
fail_case("cumsum_sizes", arg_op("aten::cumsum.out", [2, 3], [3, 2], st=I64, out_st=I64, dim=0, dtype=None),
          INVALID_ARGUMENT, "self's sizes")
fail_case("cumsum_bool", arg_op("aten::cumsum.out", [3], [3], st=ScalarType.BOOL, out_st=I64, dim=0, dtype=None),
          NOT_SUPPORTED, "self must be int32 or int64")

# int64 into int32 keeps the low 32 bits (PyTorch's wrap), int32 into int64 the value
run_case("to_int32_from_int64", arg_op("dim_order_ops::_to_dim_order_copy.out", [5], [5], st=I64, out_st=I32,
                                       non_blocking=False, dim_order=None),
         [(np.array([0, 2 ** 31 + 5, -2 ** 31 - 1, 2 ** 40 - 1, L64 + 7], np.int64), None)],
         [(np.array([0, -2 ** 31 + 5, 2 ** 31 - 1, -1, 7], np.int32), None)])
run_case("to_int64_from_int32", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=I32, out_st=I64,
                                       non_blocking=False, dim_order=None),
         [(np.array([-2 ** 31, -1, 2 ** 31 - 1], np.int32), None)],
         [(np.array([-2 ** 31, -1, 2 ** 31 - 1], np.int64), None)])
# between any integer types: the low bits (torch's wrap); uint8 modulo 256; into float64 the nearest double
run_case("to_int16_from_int64", arg_op("dim_order_ops::_to_dim_order_copy.out", [6], [6], st=I64,
                                       out_st=ScalarType.SHORT, non_blocking=False, dim_order=None),
         [(np.array([300, -1, 32768, 40000, -40000, L64 + 5], np.int64), None)],
         [(np.array([300, -1, -32768, -25536, 25536, 5], np.int16), None)])
run_case("to_uint8_from_int32", arg_op("dim_order_ops::_to_dim_order_copy.out", [5], [5], st=I32,
                                       out_st=ScalarType.BYTE, non_blocking=False, dim_order=None),
         [(np.array([300, -1, 255, 256, -2 ** 31], np.int32), None)],
         [(np.array([44, 255, 255, 0, 0], np.uint8), None)])
run_case("to_int8_from_uint8", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=ScalarType.BYTE,
                                      out_st=I8, non_blocking=False, dim_order=None),
         [(np.array([127, 128, 255], np.uint8), None)], [(np.array([127, -128, -1], np.int8), None)])
run_case("to_int64_from_int16", arg_op("dim_order_ops::_to_dim_order_copy.out", [2], [2], st=ScalarType.SHORT,
                                       out_st=I64, non_blocking=False, dim_order=None),
         [(np.array([-32768, 32767], np.int16), None)], [(np.array([-32768, 32767], np.int64), None)])
# 2^53 + 1 has no double: the tie goes to the even 2^53; the int64 extremes are powers of two (exact)
run_case("to_float64_from_int64", arg_op("dim_order_ops::_to_dim_order_copy.out", [4], [4], st=I64,
                                         out_st=ScalarType.DOUBLE, non_blocking=False, dim_order=None),
         [(np.array([2 ** 53 + 1, -3, L64, 2 ** 53 + 3], np.int64), None)],
         [(np.array([2.0 ** 53, -3.0, -2.0 ** 63, 2.0 ** 53 + 4], np.float64), None)])
run_case("to_float32_from_float64", arg_op("dim_order_ops::_to_dim_order_copy.out", [2], [2],
                                           st=ScalarType.DOUBLE, out_st=F32, non_blocking=False, dim_order=None),
         [(np.array([2.0 ** 24 + 1, -0.1], np.float64), None)], [(np.array([2.0 ** 24, -0.1], np.float32), None)])
fail_case("to_int16_from_float32", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=F32,
                                          out_st=ScalarType.SHORT, non_blocking=False, dim_order=None),
          NOT_SUPPORTED, "converts integers")
# float32 into float64 (a Double output of float math): exact, subnormals, -0 and infinities kept
F64_OF = np.array([0.1, -0.0, 1e-45, -3.4028235e38, np.inf, -np.inf, 2.0 ** 24 + 2, -1.5], np.float32)
run_case("to_float64_from_float32", arg_op("dim_order_ops::_to_dim_order_copy.out", [8], [8], st=F32,
                                           out_st=ScalarType.DOUBLE, non_blocking=False, dim_order=None),
         [(F64_OF, None)], [(F64_OF.astype(np.float64), None)])
fail_case("to_float64_from_half", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=ScalarType.HALF,
                                         out_st=ScalarType.DOUBLE, non_blocking=False, dim_order=None),
          NOT_SUPPORTED, "converts integers")
fail_case("to_int64_from_int64_sizes", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [4], st=I32,
                                              out_st=I64, non_blocking=False, dim_order=None),
          INVALID_ARGUMENT, "self's sizes")


def embedding_op(table, ids_shape, out_shape, ids_st=I64, out_st=None):
    b = ProgramBuilder()
    ids = b.tensor(ids_st, ids_shape)
    y = b.tensor(out_st if out_st is not None else (I8 if table.dtype == np.int8 else F32), out_shape)
    b.call("aten::embedding.out", weight=b.constant(table), indices=ids, padding_idx=-1, scale_grad_by_freq=False,
           sparse=False, out=y)
    b.set_io([ids], [y])
    return b


# rows 2, 0, 2 / 1, 1, 0 of a 3x2 int8 table [[1,-2],[3,4],[-128,127]]
T8 = np.array([[1, -2], [3, 4], [-128, 127]], np.int8)
run_case("embedding_int8", embedding_op(T8, [2, 3], [2, 3, 2]),
         [(np.array([[2, 0, 2], [1, 1, 0]], np.int64), None)],
         [(np.array([[[-128, 127], [1, -2], [-128, 127]], [[3, 4], [3, 4], [1, -2]]], np.int8), None)])
# int32 ids into a float table: rows 1, 0
run_case("embedding_int32_ids", embedding_op(np.array([[0.5, 1.5], [2.5, -3.0]], np.float32), [2], [2, 2],
                                             ids_st=ScalarType.INT),
         [(np.array([1, 0], np.int32), None)], [(np.array([[2.5, -3.0], [0.5, 1.5]], np.float32), None)])
fail_case("embedding_ids_float", embedding_op(T8, [3], [3, 2], ids_st=F32), INVALID_ARGUMENT,
          "indices must be int64 or int32")
fail_case("embedding_out_dtype", embedding_op(T8, [3], [3, 2], out_st=F32), INVALID_ARGUMENT,
          "out must have weight's dtype")
fail_case("embedding_sizes", embedding_op(T8, [3], [3, 3]), INVALID_ARGUMENT, "indices' sizes + [dim]")
fail_case("embedding_table_rank", embedding_op(T8.reshape(3, 2, 1), [3], [3, 2]), INVALID_ARGUMENT,
          "weight must be 2-D")

def flat_index_op(index_shapes, sizes, out_shape, idx_st=I64, out_st=I64):
    b = ProgramBuilder()
    idx = [b.tensor(idx_st, s) for s in index_shapes]
    y = b.tensor(out_st, out_shape)
    b.call("ptec::flat_index.out", indices=idx, sizes=list(sizes), out=y)
    b.set_io(idx, [y])
    return b


# i [2, 1] = [1, -1] and j [3] = [0, 2, -4] broadcast to [2, 3] in a block [3, 4]:
# i wraps to 2 for -1, j's -4 to 0: rows 1 and 2 of [0, 2, 0] -> [4, 6, 4], [8, 10, 8]
run_case("flat_index_broadcast", flat_index_op([[2, 1], [3]], [3, 4], [2, 3]),
         [(np.array([[1], [-1]], np.int64), None), (np.array([0, 2, -4], np.int64), None)],
         [(np.array([[4, 6, 4], [8, 10, 8]], np.int64), None)])
fail_case("flat_index_count", flat_index_op([[2], [2]], [3], [2]), INVALID_ARGUMENT, "one size per index tensor")
fail_case("flat_index_size_zero", flat_index_op([[2]], [0], [2]), INVALID_ARGUMENT, "at most INT32_MAX")
fail_case("flat_index_block_overflow", flat_index_op([[2], [2]], [65536, 65536], [2]), INVALID_ARGUMENT,
          "at most INT32_MAX")
fail_case("flat_index_int32", flat_index_op([[2]], [3], [2], idx_st=ScalarType.INT), INVALID_ARGUMENT,
          "contiguous int64 tensor")
fail_case("flat_index_out_float", flat_index_op([[2]], [3], [2], out_st=F32), INVALID_ARGUMENT,
          "out must be a contiguous int64")
fail_case("flat_index_broadcast_bad", flat_index_op([[3], [2]], [3, 3], [3]), INVALID_ARGUMENT,
          "broadcast to out's sizes")


def bag_op(count, length, include_last, out_shape, off_st=I64, out_st=I64):
    b = ProgramBuilder()
    o = b.tensor(off_st, [count])
    y = b.tensor(out_st, out_shape)
    b.call("ptec::bag_positions.out", offsets=o, length=length, include_last_offset=include_last, out=y)
    b.set_io([o], [y])
    return b


# offsets [0, 2, 2] of 4 ids: bags [0, 2), [2, 2) (empty), [2, 4); 4 is the filler
run_case("bag_positions", bag_op(3, 4, False, [3, 4]), [(np.array([0, 2, 2], np.int64), None)],
         [(np.array([[0, 1, 4, 4], [4, 4, 4, 4], [2, 3, 4, 4]], np.int64), None)])
# include_last_offset: [0, 1, 3] of 4 ids is two bags [0, 1), [1, 3); id 3 in none
run_case("bag_positions_last", bag_op(3, 4, True, [2, 4]), [(np.array([0, 1, 3], np.int64), None)],
         [(np.array([[0, 4, 4, 4], [1, 2, 4, 4]], np.int64), None)])
fail_case("bag_positions_int32", bag_op(3, 4, False, [3, 4], off_st=ScalarType.INT), INVALID_ARGUMENT,
          "1-D int64")
fail_case("bag_positions_no_bag", bag_op(1, 4, True, [0, 4]), INVALID_ARGUMENT, "at least one bag")
fail_case("bag_positions_sizes", bag_op(3, 4, False, [3, 5]), INVALID_ARGUMENT, "[bags, length]")
fail_case("bag_positions_length", bag_op(3, 0, False, [3, 0]), INVALID_ARGUMENT, "length must be at least 1")
fail_case("bag_positions_out_float", bag_op(3, 4, False, [3, 4], out_st=F32), INVALID_ARGUMENT, "out must be int64")


def window_op(x_shape, out_shape, windows, st=F32, out_st=None, order=None):
    """ptec::window_max.out: out_st I64 for the indices, else the maxima."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(out_st if out_st is not None else st, out_shape, order)
    b.call("ptec::window_max.out", self=x, windows=b.constant(np.asarray(windows, np.int32)), out=y)
    b.set_io([x], [y])
    return b


def dropout_op(shape, out_shape=None, st=F32, out_st=None, p=0.5, mask_dims=None, zero_point=0):
    b = ProgramBuilder()
    x = b.tensor(st, shape)
    y = b.tensor(out_st if out_st is not None else st, out_shape or shape)
    b.call("ptec::random_dropout.out", self=x, p=p, mask_dims=len(shape) if mask_dims is None else mask_dims,
           zero_point=zero_point, seed=7, out=y)
    b.set_io([x], [y])
    return b


# 1-D rows [3, 1, 3, 0, 7] with windows [0,3) [2,5) [1,5 step 2]: maxima
# 3 (the first of the two 3s: index 0), 7 (index 4), 1 (taps 1 and 3: 1 and 0, index 1)
W1 = [[[[0, 3, 1], [2, 5, 1], [1, 5, 2]]]]
X1 = np.array([[[3, 1, 3, 0, 7]]], np.int8)
run_case("window_argmax_1d_ties", window_op([1, 1, 5], [1, 1, 3], W1, st=I8, out_st=I64),
         [(X1, None)], [(np.array([[[0, 4, 1]]], np.int64), None)])
run_case("window_max_1d_int8", window_op([1, 1, 5], [1, 1, 3], W1, st=I8), [(X1, None)],
         [(np.array([[[3, 7, 1]]], np.int8), None)])
# torch's NaN rule: a NaN beats every number and the last NaN wins: [1, nan, 5, nan] -> 3
run_case("window_argmax_nan", window_op([1, 1, 4], [1, 1, 1], [[[[0, 4, 1]]]], out_st=I64),
         [(np.array([[[1, np.nan, 5, np.nan]]], np.float32), None)], [(np.array([[[3]]], np.int64), None)])
# 2-D channels-last [1, 2, 2, 2], one window per channel (windows per channel: C' = 2):
# channel 0 [[1, 4], [4, 2]] over the whole plane -> 4 at h*W+w = 1; channel 1
# [[5, 0], [6, 9]] over row 1 only -> 9 at 3
run_case("window_argmax_2d_per_channel",
         window_op([1, 2, 2, 2], [1, 2, 1, 1], [[[[0, 2, 1], [0, 2, 1]], [[1, 2, 1], [0, 2, 1]]]], out_st=I64,
                   order=CHANNELS_LAST),
         [(np.array([[[[1, 4], [4, 2]], [[5, 0], [6, 9]]]], np.float32), CHANNELS_LAST)],
         [(np.array([[[[1]], [[3]]]], np.int64), CHANNELS_LAST)])
# 3-D [1, 1, 2, 2, 2] values 0..7 except 7 at (1, 0, 1) = 5: one window over all -> 5
X3 = np.array([0, 1, 2, 3, 4, 7, 6, 5], np.float32).reshape(1, 1, 2, 2, 2)
run_case("window_argmax_3d", window_op([1, 1, 2, 2, 2], [1, 1, 1, 1, 1], [[[[0, 2, 1], [0, 2, 1], [0, 2, 1]]]],
                                       out_st=I64), [(X3, None)], [(np.array(5, np.int64).reshape(1, 1, 1, 1, 1), None)])
fail_case("window_outside", window_op([1, 1, 5], [1, 1, 1], [[[[3, 6, 1]]]]), INVALID_ARGUMENT,
          "empty or outside self")
fail_case("window_negative", window_op([1, 1, 5], [1, 1, 1], [[[[-1, 2, 1]]]]), INVALID_ARGUMENT,
          "empty or outside self")
fail_case("window_empty", window_op([1, 1, 5], [1, 1, 1], [[[[2, 2, 1]]]]), INVALID_ARGUMENT, "empty or outside self")
fail_case("window_step", window_op([1, 1, 5], [1, 1, 1], [[[[0, 2, 0]]]]), INVALID_ARGUMENT, "empty or outside self")
fail_case("window_rows", window_op([1, 1, 5], [1, 1, 2], [[[[0, 2, 1]]]]), INVALID_ARGUMENT,
          "sum of out's sizes")
fail_case("window_out_dtype", window_op([1, 1, 5], [1, 1, 1], [[[[0, 2, 1]]]], st=I8, out_st=F32), INVALID_ARGUMENT,
          "self's dtype or int64")
fail_case("window_rank", window_op([1, 5], [1, 1], [[[[0, 2, 1]]]]), INVALID_ARGUMENT, "1 to 3 dims")


def svdvals_op(x_shape, out_shape, st=F32, out_st=F32, order=None):
    """ptec::linalg_svdvals.out: the singular values of x's matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(out_st, out_shape)
    b.call("ptec::linalg_svdvals.out", self=x, out=y)
    b.set_io([x], [y])
    return b


# Orthogonal columns (nothing to rotate): the values are the columns' norms,
# exact here: after the scaling by a power of two (exact) every square and
# root is exact. diag(3, -4, 0.5) -> [4, 3, 0.5]; [[3, 4], [-4, 3]] -> [5, 5];
# the wide [[3, 4]] and the tall [[3], [4]] -> [5]; a 4-D batch of two
# diagonals; zeros -> zeros; a matrix with an inf or a NaN -> NaN for every
# value (the other matrices of the batch computed as usual).
run_case("svdvals_diagonal", svdvals_op([1, 3, 3], [1, 3]),
         [(np.diag(np.array([3, -4, 0.5], np.float32))[None], None)], [(np.array([[4, 3, 0.5]], np.float32), None)])
run_case("svdvals_orthogonal_columns", svdvals_op([2, 2], [2]), [(np.array([[3, 4], [-4, 3]], np.float32), None)],
         [(np.array([5, 5], np.float32), None)])
run_case("svdvals_wide_row", svdvals_op([1, 2], [1]), [(np.array([[3, 4]], np.float32), None)],
         [(np.array([5], np.float32), None)])
run_case("svdvals_tall_column", svdvals_op([2, 1], [1]), [(np.array([[3], [4]], np.float32), None)],
         [(np.array([5], np.float32), None)])
run_case("svdvals_batch_4d", svdvals_op([2, 1, 2, 2], [2, 1, 2]),
         [(np.array([[[[0.25, 0], [0, -8]]], [[[0, 6], [1, 0]]]], np.float32), None)],
         [(np.array([[[8, 0.25]], [[6, 1]]], np.float32), None)])
run_case("svdvals_zero", svdvals_op([2, 3], [2]), [(np.zeros((2, 3), np.float32), None)],
         [(np.zeros(2, np.float32), None)])
run_case("svdvals_non_finite", svdvals_op([3, 2, 2], [3, 2]),
         [(np.array([[[np.inf, 0], [0, 1]], [[2, 0], [0, np.nan]], [[0, 2], [1, 0]]], np.float32), None)],
         [(np.array([[np.nan, np.nan], [np.nan, np.nan], [2, 1]], np.float32), None)])
fail_case("svdvals_int8", svdvals_op([2, 2], [2], st=I8), NOT_SUPPORTED, "must be float32")
fail_case("svdvals_out_int8", svdvals_op([2, 2], [2], out_st=I8), NOT_SUPPORTED, "must be float32")
fail_case("svdvals_rank_1", svdvals_op([4], [4]), INVALID_ARGUMENT, "[..., m, n]")
fail_case("svdvals_out_rank", svdvals_op([2, 3, 4], [2, 3, 3]), INVALID_ARGUMENT, "[..., m, n]")
fail_case("svdvals_out_size", svdvals_op([2, 3, 4], [2, 4]), INVALID_ARGUMENT, "min(m, n)")
fail_case("svdvals_out_batch", svdvals_op([2, 3, 4], [3, 3]), INVALID_ARGUMENT, "min(m, n)")
fail_case("svdvals_empty", svdvals_op([2, 0, 4], [2, 0]), INVALID_ARGUMENT, "empty matrices")
fail_case("svdvals_dim_order", svdvals_op([1, 2, 3, 3], [1, 2, 3], order=CHANNELS_LAST), NOT_SUPPORTED,
          "default dim order")


def eigvalsh_op(x_shape, out_shape, upper=False, st=F32, out_st=F32, order=None):
    """ptec::linalg_eigvalsh.out: the eigenvalues of x's symmetric matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(out_st, out_shape)
    b.call("ptec::linalg_eigvalsh.out", self=x, upper=upper, out=y)
    b.set_io([x], [y])
    return b


# Diagonal in the triangle read (nothing to rotate): the diagonal sorted
# ascending, exact (scaling by a power of two is exact): diag(3, -4, 0.5)
# -> [-4, 0.5, 3], whatever the other triangle holds (9s, a NaN); [[2, 1],
# [1, 2]] (one rotation, theta = 0: t = 1, c = s = 1/sqrt(2)) -> [1, 3]
# exactly, as a_pp -+ t a_pq; a read NaN or inf -> NaN for every value.
DIAG_JUNK = np.array([[3, 9, 9], [0, -4, np.nan], [0, 0, 0.5]], np.float32)
run_case("eigvalsh_lower_ignores_upper", eigvalsh_op([1, 3, 3], [1, 3]), [(DIAG_JUNK[None], None)],
         [(np.array([[-4, 0.5, 3]], np.float32), None)])
run_case("eigvalsh_upper_ignores_lower", eigvalsh_op([1, 3, 3], [1, 3], upper=True), [(DIAG_JUNK.T.copy()[None], None)],
         [(np.array([[-4, 0.5, 3]], np.float32), None)])
run_case("eigvalsh_one_rotation", eigvalsh_op([2, 2], [2]), [(np.array([[2, 1], [1, 2]], np.float32), None)],
         [(np.array([1, 3], np.float32), None)])
run_case("eigvalsh_zero_and_non_finite", eigvalsh_op([3, 2, 2], [3, 2]),
         [(np.array([[[0, 0], [0, 0]], [[1, 0], [np.inf, 1]], [[5, 0], [0, -5]]], np.float32), None)],
         [(np.array([[0, 0], [np.nan, np.nan], [-5, 5]], np.float32), None)])
fail_case("eigvalsh_int8", eigvalsh_op([2, 2], [2], st=I8), NOT_SUPPORTED, "must be float32")
fail_case("eigvalsh_not_square", eigvalsh_op([2, 3], [2]), INVALID_ARGUMENT, "must be square")
fail_case("eigvalsh_rank_1", eigvalsh_op([4], [4]), INVALID_ARGUMENT, "[..., n, n]")
fail_case("eigvalsh_out_size", eigvalsh_op([2, 3, 3], [2, 2]), INVALID_ARGUMENT, "[..., n] of self's batch")
fail_case("eigvalsh_empty", eigvalsh_op([2, 0, 0], [2, 0]), INVALID_ARGUMENT, "empty matrices")
fail_case("eigvalsh_dim_order", eigvalsh_op([1, 2, 3, 3], [1, 2, 3], order=CHANNELS_LAST), NOT_SUPPORTED,
          "default dim order")


def eigvals_op(x_shape, out_shape, st=F32, order=None):
    """ptec::linalg_eigvals.out: the (real, imaginary) eigenvalues of x's general matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(F32, out_shape)
    b.call("ptec::linalg_eigvals.out", self=x, out=y)
    b.set_io([x], [y])
    return b


# Exact cases (scaling by a power of two is exact): a triangular matrix deflates at once (every
# subdiagonal 0), its diagonal in ptec's order (real ascending): [[1, 5, 7], [0, 2, 9], [0, 0, -3]] ->
# -3, 1, 2; the rotation [[0, -1], [1, 0]] one 2x2 block: x = y = 0, w = -1/4 (scaled by 2^-1), a
# conjugate pair 0 +- i, its positive imaginary part first; [[2, 1], [1, 2]]: p = 0, q = 1/16, z =
# 1/4 (scaled by 2^-2): 3 and x - w / z = 1, exactly; a zero matrix zeros, an inf or a NaN NaN.
run_case("eigvals_triangular_deflates", eigvals_op([3, 3], [3, 2]),
         [(np.array([[1, 5, 7], [0, 2, 9], [0, 0, -3]], np.float32), None)],
         [(np.array([[-3, 0], [1, 0], [2, 0]], np.float32), None)])
run_case("eigvals_rotation_pair", eigvals_op([1, 2, 2], [1, 2, 2]),
         [(np.array([[[0, -1], [1, 0]]], np.float32), None)],
         [(np.array([[[0, 1], [0, -1]]], np.float32), None)])
run_case("eigvals_two_real", eigvals_op([2, 2], [2, 2]), [(np.array([[2, 1], [1, 2]], np.float32), None)],
         [(np.array([[1, 0], [3, 0]], np.float32), None)])
run_case("eigvals_zero_and_non_finite", eigvals_op([3, 2, 2], [3, 2, 2]),
         [(np.array([[[0, 0], [0, 0]], [[1, 0], [np.inf, 1]], [[5, np.nan], [0, -5]]], np.float32), None)],
         [(np.array([[[0, 0], [0, 0]], [[np.nan] * 2] * 2, [[np.nan] * 2] * 2], np.float32), None)])
fail_case("eigvals_int8", eigvals_op([2, 2], [2, 2], st=I8), NOT_SUPPORTED, "must be float32")
fail_case("eigvals_not_square", eigvals_op([2, 3], [2, 2]), INVALID_ARGUMENT, "must be square")
fail_case("eigvals_rank_1", eigvals_op([4], [4]), INVALID_ARGUMENT, "[..., n, n]")
fail_case("eigvals_out_size", eigvals_op([2, 3, 3], [2, 3, 1]), INVALID_ARGUMENT, "[..., n, 2] of self's batch")
fail_case("eigvals_empty", eigvals_op([2, 0, 0], [2, 0, 2]), INVALID_ARGUMENT, "empty matrices")
fail_case("eigvals_dim_order", eigvals_op([1, 2, 3, 3], [1, 2, 3, 2], order=CHANNELS_LAST), NOT_SUPPORTED,
          "default dim order")


def eig_vectors_op(x_shape, out_shape, st=F32, order=None):
    """ptec::linalg_eig_vectors.out: the eigenvectors of x's general matrices, [..., n, n, 2]."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(F32, out_shape)
    b.call("ptec::linalg_eig_vectors.out", self=x, out=y)
    b.set_io([x], [y])
    return b


# Exact cases: a 1x1 matrix's vector is 1 whatever its value (inverse iteration on a - a = 0: the pivot
# EPS3, v = 1 / EPS3, rescaled to 1; its largest component positive, its norm 1), a zero matrix's
# vectors I (torch's), an infinity or a NaN anywhere NaN for the whole matrix.
run_case("eig_vectors_one_by_one", eig_vectors_op([3, 1, 1], [3, 1, 1, 2]),
         [(np.array([[[-2.5]], [[0]], [[np.nan]]], np.float32), None)],
         [(np.array([[[[1, 0]]], [[[1, 0]]], [[[np.nan, np.nan]]]], np.float32), None)])
run_case("eig_vectors_zero_and_non_finite", eig_vectors_op([3, 2, 2], [3, 2, 2, 2]),
         [(np.array([[[0, 0], [0, 0]], [[1, 0], [np.inf, 1]], [[5, 1], [0, -5]]], np.float32) * np.array(
             [1, 1, np.nan], np.float32)[:, None, None], None)],
         [(np.array([[[[1, 0], [0, 0]], [[0, 0], [1, 0]]]] + [[[[np.nan] * 2] * 2] * 2] * 2, np.float32), None)])
fail_case("eig_vectors_int8", eig_vectors_op([2, 2], [2, 2, 2], st=I8), NOT_SUPPORTED, "must be float32")
fail_case("eig_vectors_not_square", eig_vectors_op([2, 3], [2, 2, 2]), INVALID_ARGUMENT, "must be square")
fail_case("eig_vectors_rank_1", eig_vectors_op([4], [4, 2]), INVALID_ARGUMENT, "[..., n, n]")
fail_case("eig_vectors_out_is_eigvals_shape", eig_vectors_op([2, 3, 3], [2, 3, 2]), INVALID_ARGUMENT,
          "out [..., n, n, 2]")
fail_case("eig_vectors_out_size", eig_vectors_op([2, 3, 3], [2, 3, 3, 1]), INVALID_ARGUMENT,
          "[..., n, n, 2] of self's batch")
fail_case("eig_vectors_out_batch", eig_vectors_op([2, 3, 3], [1, 3, 3, 2]), INVALID_ARGUMENT, "of self's batch")
fail_case("eig_vectors_empty", eig_vectors_op([2, 0, 0], [2, 0, 0, 2]), INVALID_ARGUMENT, "empty matrices")
fail_case("eig_vectors_dim_order", eig_vectors_op([1, 2, 3, 3], [1, 2, 3, 3, 2], order=CHANNELS_LAST), NOT_SUPPORTED,
          "default dim order")
# no matrix, but n = 20000: (3 n^2 + 9 n) 4 bytes of scratch above 2^32 (n = 65536 or more, the kernel's check
# before its 64-bit product, is out of reach: out's n * n * 2 elements reach 2^31, which the loader refuses)
fail_case("eig_vectors_scratch_bytes", eig_vectors_op([0, 20000, 20000], [0, 20000, 20000, 2]), NOT_SUPPORTED,
          "too large for the scratch")


def det_op(x_shape, out_shape, mode=0, st=F32, out_st=F32, order=None):
    """ptec::linalg_det.out: det (mode 0), sign (1), log |det| (2), log det (3) of x's matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(out_st, out_shape)
    b.call("ptec::linalg_det.out", self=x, mode=mode, out=y)
    b.set_io([x], [y])
    return b


def solve_op(a_shape, b_shape, out_shape, st=F32, rhs_st=F32, order=None):
    """ptec::linalg_solve.out: A^-1 B of x's matrices."""
    b = ProgramBuilder()
    a, r = b.tensor(st, a_shape, order), b.tensor(rhs_st, b_shape)
    y = b.tensor(F32, out_shape)
    b.call("ptec::linalg_solve.out", self=a, rhs=r, out=y)
    b.set_io([a, r], [y])
    return b


# Exact cases (every product and quotient a small power of two or integer):
# [[0, 2], [4, 1]]: the pivot swaps rows (|4| > |0|), U = [[4, 1], [0, 2]],
# det -(4 * 2) = -8, sign -1, log det NaN; the triangular diag(2, 4, 0.5):
# det 4, log |det| log 4; a zero row: det 0, sign 0, log |det| -inf; a
# matrix holding an inf or a NaN: NaN, its batch neighbours as usual.
SWAP = np.array([[0, 2], [4, 1]], np.float32)
run_case("det_pivot_swap", det_op([2, 2, 2], [2]),
         [(np.stack([SWAP, np.diag(np.array([2, 4], np.float32))]), None)], [(np.array([-8, 8], np.float32), None)])
run_case("det_sign", det_op([3, 2, 2], [3], mode=1),
         [(np.stack([SWAP, np.eye(2, dtype=np.float32), np.array([[1, 2], [0, 0]], np.float32)]), None)],
         [(np.array([-1, 1, 0], np.float32), None)])
run_case("det_log_abs", det_op([1, 3, 3, 3], [1, 3], mode=2),
         [(np.stack([np.diag(np.array([2, 4, 0.5], np.float32)), np.eye(3, dtype=np.float32),
                     np.zeros((3, 3), np.float32)])[None], None)],
         [(np.array([[np.float32(np.log(4.0)), 0, -np.inf]], np.float32), None)])
run_case("det_logdet", det_op([2, 2, 2], [2], mode=3), [(np.stack([SWAP, 2 * np.eye(2, dtype=np.float32)]), None)],
         [(np.array([np.nan, np.float32(np.log(4.0))], np.float32), None)])
run_case("det_1x1_and_non_finite", det_op([3, 1, 1], [3]), [(np.array([[[-2.5]], [[np.inf]], [[np.nan]]], np.float32),
                                                             None)], [(np.array([-2.5, np.nan, np.nan], np.float32),
                                                                       None)])
run_case("det_2d", det_op([2, 2], []), [(SWAP, None)], [(np.array(-8, np.float32), None)])
fail_case("det_int8", det_op([2, 2], [], st=I8), NOT_SUPPORTED, "must be float32")
fail_case("det_mode", det_op([2, 2], [], mode=4), INVALID_ARGUMENT, "mode must be")
fail_case("det_not_square", det_op([2, 3], []), INVALID_ARGUMENT, "must be square")
fail_case("det_out_rank", det_op([2, 2, 2], [2, 1]), INVALID_ARGUMENT, "out [...]")
fail_case("det_out_batch", det_op([2, 2, 2], [3]), INVALID_ARGUMENT, "self's batch dims")
fail_case("det_empty", det_op([2, 0, 0], [2]), INVALID_ARGUMENT, "empty matrices")
fail_case("det_dim_order", det_op([1, 2, 3, 3], [1, 2], order=CHANNELS_LAST), NOT_SUPPORTED, "default dim order")
# A X = B exactly: [[0, 2], [4, 1]] X = [[2, 4], [9, 6]] -> [[2, 1], [1, 2]] (a row swap, then
# 1 - 0 * ..., halves and quarters); one B shared by a batch of two (batch dims 1): diag(2, 4) -> [[1], [0.5]];
# a singular A divides by its zero pivot (inf / NaN); a NaN in A -> NaN for its X.
run_case("solve_pivot_swap", solve_op([1, 2, 2], [1, 2, 2], [1, 2, 2]),
         [(SWAP[None], None), (np.array([[[2, 4], [9, 6]]], np.float32), None)],
         [(np.array([[[2, 1], [1, 2]]], np.float32), None)])
run_case("solve_shared_rhs", solve_op([2, 2, 2], [1, 2, 1], [2, 2, 1]),
         [(np.stack([np.diag(np.array([2, 4], np.float32)), np.eye(2, dtype=np.float32)]), None),
          (np.array([[[2], [2]]], np.float32), None)],
         [(np.array([[[1], [0.5]], [[2], [2]]], np.float32), None)])
run_case("solve_singular_and_nan", solve_op([2, 2, 2], [2, 2, 1], [2, 2, 1]),
         [(np.array([[[1, 1], [1, 1]], [[1, np.nan], [0, 1]]], np.float32), None),
          (np.array([[[1], [2]], [[1], [1]]], np.float32), None)],
         [(np.array([[[-np.inf], [np.inf]], [[np.nan], [np.nan]]], np.float32), None)])
fail_case("solve_int8", solve_op([2, 2], [2, 1], [2, 1], rhs_st=I8), NOT_SUPPORTED, "must be float32")
fail_case("solve_not_square", solve_op([2, 3], [2, 1], [2, 1]), INVALID_ARGUMENT, "must be square")
fail_case("solve_rhs_rows", solve_op([2, 2], [3, 1], [2, 1]), INVALID_ARGUMENT, "n rows")
fail_case("solve_rhs_rank", solve_op([2, 2, 2], [2, 1], [2, 2, 1]), INVALID_ARGUMENT, "rhs and out")
fail_case("solve_rhs_batch", solve_op([2, 2, 2], [3, 2, 1], [2, 2, 1]), INVALID_ARGUMENT, "self's or all 1")
fail_case("solve_out_size", solve_op([2, 2, 2], [2, 2, 1], [2, 2, 2]), INVALID_ARGUMENT, "[..., n, k]")
fail_case("solve_empty", solve_op([2, 2], [2, 0], [2, 0]), INVALID_ARGUMENT, "empty matrices")
fail_case("solve_dim_order", solve_op([1, 2, 3, 3], [1, 2, 3, 3], [1, 2, 3, 3], order=CHANNELS_LAST), NOT_SUPPORTED,
          "default dim order")

def cholesky_op(x_shape, out_shape, upper=False, st=F32, out_st=F32, order=None):
    """ptec::linalg_cholesky.out: L (or U) of x's matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(out_st, out_shape)
    b.call("ptec::linalg_cholesky.out", self=x, upper=upper, out=y)
    b.set_io([x], [y])
    return b


def trisolve_op(a_shape, b_shape, out_shape, upper=True, transpose=False, unit=False, st=F32):
    """ptec::linalg_triangular_solve.out: op(T)^-1 B."""
    b = ProgramBuilder()
    a, r = b.tensor(st, a_shape), b.tensor(F32, b_shape)
    y = b.tensor(F32, out_shape)
    b.call("ptec::linalg_triangular_solve.out", self=a, rhs=r, upper=upper, transpose=transpose, unitriangular=unit,
           out=y)
    b.set_io([a, r], [y])
    return b


# Exact factors (integer square roots): [[4, 2, 2], [2, 5, 3], [2, 3, 6]] -> L = [[2, 0, 0], [1, 2, 0],
# [1, 1, 2]], whatever the unread triangle holds (9s, a NaN); upper: U = L^T from the upper triangle; a
# matrix not positive-definite [[1, 2], [2, 1]]: sqrt(1 - 4) is NaN from that pivot on; an inf read: NaN
# everywhere, the batch neighbour as usual.
SPD3 = np.array([[4, 9, np.nan], [2, 5, 9], [2, 3, 6]], np.float32)
L3 = np.array([[2, 0, 0], [1, 2, 0], [1, 1, 2]], np.float32)
run_case("cholesky_lower", cholesky_op([1, 3, 3], [1, 3, 3]), [(SPD3[None], None)], [(L3[None], None)])
run_case("cholesky_upper", cholesky_op([3, 3], [3, 3], upper=True), [(SPD3.T.copy(), None)], [(L3.T.copy(), None)])
run_case("cholesky_not_positive_definite", cholesky_op([3, 2, 2], [3, 2, 2]),
         [(np.array([[[1, 0], [2, 1]], [[np.inf, 0], [0, 1]], [[9, 0], [3, 5]]], np.float32), None)],
         [(np.array([[[1, 0], [2, np.nan]], [[np.nan] * 2] * 2, [[3, 0], [1, 2]]], np.float32), None)])
fail_case("cholesky_int8", cholesky_op([2, 2], [2, 2], st=I8), NOT_SUPPORTED, "must be float32")
fail_case("cholesky_not_square", cholesky_op([2, 3], [2, 3]), INVALID_ARGUMENT, "must be square")
fail_case("cholesky_out_size", cholesky_op([2, 3, 3], [2, 3, 2]), INVALID_ARGUMENT, "self's sizes")
fail_case("cholesky_out_rank", cholesky_op([2, 3, 3], [6, 3]), INVALID_ARGUMENT, "[..., n, n]")
fail_case("cholesky_empty", cholesky_op([2, 0, 0], [2, 0, 0]), INVALID_ARGUMENT, "empty matrices")
fail_case("cholesky_dim_order", cholesky_op([1, 2, 3, 3], [1, 2, 3, 3], order=CHANNELS_LAST), NOT_SUPPORTED,
          "default dim order")
# a zero pivot ([[1, 0], [1, 1]]: 1 - 1 = 0) is not positive: NaN from it on, as a negative one
run_case("cholesky_zero_pivot", cholesky_op([2, 2], [2, 2]), [(np.array([[1, 5], [1, 1]], np.float32), None)],
         [(np.array([[1, 0], [1, np.nan]], np.float32), None)])


def cholesky_info_op(x_shape, out_shape, upper=False, st=F32, out_st=I32):
    """ptec::linalg_cholesky_info.out: cholesky_ex's info of x's matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape)
    y = b.tensor(out_st, out_shape)
    b.call("ptec::linalg_cholesky_info.out", self=x, upper=upper, out=y)
    b.set_io([x], [y])
    return b


# info: SPD3 0; [[1, .], [2, 1]] 2 (1 - 4 < 0); a +inf pivot passes (0 / inf = 0 below it) 0; a zero first
# pivot 1; a NaN below the diagonal reaches the second pivot 2; [[9, .], [3, 5]] 0. Upper: the same read
# from the other triangle.
INFO_IN = np.array([[[1, 0], [2, 1]], [[np.inf, 0], [0, 1]], [[0, 7], [0, 1]], [[1, 0], [np.nan, 1]],
                    [[9, 0], [3, 5]]], np.float32)
run_case("cholesky_info", cholesky_info_op([5, 2, 2], [5]), [(INFO_IN, None)],
         [(np.array([2, 0, 1, 2, 0], np.int32), None)])
run_case("cholesky_info_upper", cholesky_info_op([5, 2, 2], [5], upper=True),
         [(INFO_IN.transpose(0, 2, 1).copy(), None)], [(np.array([2, 0, 1, 2, 0], np.int32), None)])
run_case("cholesky_info_spd_0d", cholesky_info_op([3, 3], []), [(SPD3, None)], [(np.array(0, np.int32), None)])
fail_case("cholesky_info_float_out", cholesky_info_op([2, 2], [], out_st=F32), NOT_SUPPORTED, "out int32")
fail_case("cholesky_info_int8", cholesky_info_op([2, 2], [], st=I8), NOT_SUPPORTED, "out int32")
fail_case("cholesky_info_not_square", cholesky_info_op([2, 3], []), INVALID_ARGUMENT, "must be square")
fail_case("cholesky_info_out_size", cholesky_info_op([2, 3, 3], [3]), INVALID_ARGUMENT, "batch sizes")
fail_case("cholesky_info_out_rank", cholesky_info_op([2, 3, 3], [2, 1]), INVALID_ARGUMENT, "out [...]")
fail_case("cholesky_info_empty", cholesky_info_op([2, 0, 0], [2]), INVALID_ARGUMENT, "empty matrices")
# Exact solves: upper [[2, 1], [junk, 4]] x = [4, 8] -> [1, 2] (backward); the lower [[2, junk], [1, 4]]
# transposed is the same upper matrix; the unit lower [[9, junk], [3, 9]] (diagonal not read) x = [1, 5]
# -> [1, 2] (forward); one B for a batch of two; a NaN read -> NaN, one in the unread triangle ignored.
run_case("trisolve_upper", trisolve_op([1, 2, 2], [1, 2, 1], [1, 2, 1]),
         [(np.array([[[2, 1], [np.nan, 4]]], np.float32), None), (np.array([[[4], [8]]], np.float32), None)],
         [(np.array([[[1], [2]]], np.float32), None)])
run_case("trisolve_lower_transposed", trisolve_op([2, 2], [2, 1], [2, 1], upper=False, transpose=True),
         [(np.array([[2, np.nan], [1, 4]], np.float32), None), (np.array([[4], [8]], np.float32), None)],
         [(np.array([[1], [2]], np.float32), None)])
run_case("trisolve_unit_shared_rhs", trisolve_op([2, 2, 2], [1, 2, 1], [2, 2, 1], upper=False, unit=True),
         [(np.array([[[9, 7], [3, 9]], [[np.nan, 0], [-1, np.inf]]], np.float32), None),
          (np.array([[[1], [5]]], np.float32), None)],
         [(np.array([[[1], [2]], [[1], [6]]], np.float32), None)])
run_case("trisolve_non_finite", trisolve_op([2, 2, 2], [2, 2, 1], [2, 2, 1]),
         [(np.array([[[1, np.inf], [0, 1]], [[1, 0], [np.nan, 2]]], np.float32), None),
          (np.array([[[1], [1]], [[1], [4]]], np.float32), None)],
         [(np.array([[[np.nan], [np.nan]], [[1], [2]]], np.float32), None)])
fail_case("trisolve_int8", trisolve_op([2, 2], [2, 1], [2, 1], st=I8), NOT_SUPPORTED, "must be float32")
fail_case("trisolve_rhs_rows", trisolve_op([2, 2], [3, 1], [2, 1]), INVALID_ARGUMENT, "n rows")
fail_case("trisolve_rhs_batch", trisolve_op([2, 2, 2], [3, 2, 1], [2, 2, 1]), INVALID_ARGUMENT, "self's or all 1")
fail_case("trisolve_out_size", trisolve_op([2, 2, 2], [2, 2, 1], [2, 2, 2]), INVALID_ARGUMENT, "[..., n, k]")
fail_case("trisolve_empty", trisolve_op([2, 2], [2, 0], [2, 0]), INVALID_ARGUMENT, "empty matrices")

def eigh_vectors_op(x_shape, out_shape, upper=False, st=F32, order=None):
    """ptec::linalg_eigh_vectors.out: the eigenvectors of x's symmetric matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(F32, out_shape)
    b.call("ptec::linalg_eigh_vectors.out", self=x, upper=upper, out=y)
    b.set_io([x], [y])
    return b


# Eigenvectors in eigvalsh's order, each column's first largest component positive: diag(3, -4, 0.5)
# (nothing to rotate) -> the unit vectors e1, e2, e0 (values -4, 0.5, 3), whatever the other triangle
# holds; [[2, 1], [1, 2]]: one rotation, c = s = 1 / sqrtf(2) -> columns [c, -c] (value 1: its first
# component, the first of equal magnitudes, positive) and [c, c] (value 3); zeros -> I; a NaN read -> NaN.
C2 = np.float32(1) / np.sqrt(np.float32(2))
run_case("eigh_vectors_diagonal", eigh_vectors_op([1, 3, 3], [1, 3, 3]), [(DIAG_JUNK[None], None)],
         [(np.eye(3, dtype=np.float32)[:, [1, 2, 0]][None], None)])
run_case("eigh_vectors_upper_one_rotation", eigh_vectors_op([3, 2, 2], [3, 2, 2], upper=True),
         [(np.array([[[2, 1], [np.nan, 2]], [[0, 0], [0, 0]], [[1, np.inf], [0, 1]]], np.float32), None)],
         [(np.array([[[C2, C2], [-C2, C2]], [[1, 0], [0, 1]], [[np.nan] * 2] * 2], np.float32), None)])
fail_case("eigh_vectors_int8", eigh_vectors_op([2, 2], [2, 2], st=I8), NOT_SUPPORTED, "must be float32")
fail_case("eigh_vectors_not_square", eigh_vectors_op([2, 3], [2, 3]), INVALID_ARGUMENT, "must be square")
fail_case("eigh_vectors_out_size", eigh_vectors_op([2, 3, 3], [2, 3]), INVALID_ARGUMENT, "[..., n, n]")
fail_case("eigh_vectors_out_batch", eigh_vectors_op([2, 3, 3], [1, 3, 3]), INVALID_ARGUMENT, "self's sizes")
fail_case("eigh_vectors_empty", eigh_vectors_op([2, 0, 0], [2, 0, 0]), INVALID_ARGUMENT, "empty matrices")

def svd_op(x_shape, out_shape, which, full=False, rtol=1e-6, st=F32):
    """ptec::linalg_svd.out: U (which 0), Vh (1) or pinv (2) of x's matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape)
    y = b.tensor(F32, out_shape)
    b.call("ptec::linalg_svd.out", self=x, which=which, full_matrices=full, rtol=rtol, out=y)
    b.set_io([x], [y])
    return b


# Orthogonal columns (nothing to rotate): [[3, 0], [0, -4]] has values 4, 3: U's columns e1 and e0, each
# column's largest component made positive (u_0 = -(0, -1): its 0 becomes -0.0), v_j flipped with u_j:
# Vh = [[-0, -1], [1, 0]]; pinv [[1/3, 0], [0, -1/4]]. A zero 2x3: U = I, Vh completed from e_0, e_1, e_2
# (full: I3), pinv zeros; a NaN: NaN.
DIAG34 = np.array([[3, 0], [0, -4]], np.float32)
run_case("svd_u_orthogonal_columns", svd_op([2, 2], [2, 2], 0), [(DIAG34, None)],
         [(np.array([[-0.0, 1], [1, 0]], np.float32), None)])
run_case("svd_vh_orthogonal_columns", svd_op([1, 2, 2], [1, 2, 2], 1), [(DIAG34[None], None)],
         [(np.array([[[-0.0, -1], [1, 0]]], np.float32), None)])
run_case("svd_pinv_orthogonal_columns", svd_op([2, 2], [2, 2], 2), [(DIAG34, None)],
         [(np.array([[np.float32(1) / np.float32(3), 0], [0, -0.25]], np.float32), None)])
run_case("svd_zero_wide_full", svd_op([2, 2, 3], [2, 3, 3], 1, full=True),
         [(np.stack([np.zeros((2, 3), np.float32), np.array([[1, np.nan, 0], [0, 1, 0]], np.float32)]), None)],
         [(np.stack([np.eye(3, dtype=np.float32), np.full((3, 3), np.nan, np.float32)]), None)])
run_case("svd_zero_pinv", svd_op([2, 3], [3, 2], 2), [(np.zeros((2, 3), np.float32), None)],
         [(np.zeros((3, 2), np.float32), None)])
fail_case("svd_int8", svd_op([2, 2], [2, 2], 0, st=I8), NOT_SUPPORTED, "must be float32")
fail_case("svd_which", svd_op([2, 2], [2, 2], 3), INVALID_ARGUMENT, "which must be")
fail_case("svd_rtol", svd_op([2, 2], [2, 2], 2, rtol=2.0), INVALID_ARGUMENT, "rtol must be")
fail_case("svd_u_size", svd_op([3, 2], [3, 3], 0), INVALID_ARGUMENT, "out must be U")
fail_case("svd_vh_full_size", svd_op([2, 3], [2, 3], 1, full=True), INVALID_ARGUMENT, "out must be U")
fail_case("svd_pinv_size", svd_op([2, 3], [2, 3], 2), INVALID_ARGUMENT, "out must be U")
fail_case("svd_empty", svd_op([0, 3], [3, 0], 2), INVALID_ARGUMENT, "empty matrices")

def qr_op(x_shape, out_shape, which, complete=False, st=F32):
    """ptec::linalg_qr.out: Q (which 0), R (1), geqrf's a (2) or tau (3) of x's matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape)
    y = b.tensor(F32, out_shape)
    b.call("ptec::linalg_qr.out", self=x, which=which, complete=complete, out=y)
    b.set_io([x], [y])
    return b


# [[3, 1], [4, 2]]: one reflection (scaled by 2^-3, exact): x = (3, 4) / 8, |x| = 5 / 8, alpha = -5 / 8,
# v = (1, 0.5), beta = 2 / 1.25 = 1.6; R = [[-5, -11 / 5], [0, 2 / 5]] as float32's steps give them (2 / 5
# one rounding low: 0.39999998, the float32 below 0.4);
# Q = I - beta v v^T = [[-0.6, -0.8], [-0.8, 0.6]]; an upper-triangular matrix: no reflection (Q = I, R
# = A); a NaN: NaN.
A34 = np.array([[3, 1], [4, 2]], np.float32)
run_case("qr_r_one_reflection", qr_op([2, 2], [2, 2], 1), [(A34, None)],
         [(np.array([[-5, -2.2], [0, np.nextafter(np.float32(0.4), np.float32(0))]], np.float32), None)])
run_case("qr_q_one_reflection", qr_op([1, 2, 2], [1, 2, 2], 0), [(A34[None], None)],
         [(np.array([[[-0.6, -0.8], [-0.8, 0.6]]], np.float32), None)])
run_case("qr_upper_and_nan", qr_op([2, 2, 3], [2, 2, 2], 0),
         [(np.array([[[2, 5, 1], [0, -3, 7]], [[1, 0, 0], [np.nan, 1, 0]]], np.float32), None)],
         [(np.array([[[1, 0], [0, 1]], [[np.nan] * 2] * 2], np.float32), None)])
fail_case("qr_int8", qr_op([2, 2], [2, 2], 0, st=I8), NOT_SUPPORTED, "must be float32")
# geqrf's compact form of the same: a = [[-5, -2.2], [0.5, 0.39999998]] (u = 4 / (3 + 5)), tau = [(alpha - x0)
# / alpha = 1.6, 0] (the last column has no row below: no reflection); of a 2x3 with its first column
# reduced (tau 0, a's entries kept) and a NaN matrix: NaN; of a zero 3x2: 0.
run_case("qr_geqrf_a", qr_op([2, 2], [2, 2], 2), [(A34, None)],
         [(np.array([[-5, -2.2], [0.5, np.nextafter(np.float32(0.4), np.float32(0))]], np.float32), None)])
run_case("qr_geqrf_tau", qr_op([3, 2, 2], [3, 2], 3),
         [(np.array([A34, [[-2, 1], [0, 3]], [[1, np.nan], [0, 1]]], np.float32), None)],
         [(np.array([[1.6, 0], [0, 0], [np.nan, np.nan]], np.float32), None)])
run_case("qr_geqrf_reduced_and_zero", qr_op([2, 3, 2], [2, 3, 2], 2),
         [(np.array([[[-2, 1], [0, 0], [0, 0]], [[0, 0], [0, 0], [0, 0]]], np.float32), None)],
         [(np.array([[[-2, 1], [0, 0], [0, 0]], [[0, 0], [0, 0], [0, 0]]], np.float32), None)])
fail_case("qr_which", qr_op([2, 2], [2, 2], 4), INVALID_ARGUMENT, "which must be")
fail_case("qr_geqrf_complete", qr_op([2, 2], [2, 2], 2, complete=True), INVALID_ARGUMENT, "complete is for Q and R")
fail_case("qr_geqrf_a_size", qr_op([3, 2], [2, 2], 2), INVALID_ARGUMENT, "a [..., m, n]")
fail_case("qr_tau_size", qr_op([2, 3, 2], [2, 3], 3), INVALID_ARGUMENT, "tau [..., k]")
fail_case("qr_tau_rank", qr_op([2, 3, 2], [2, 2, 2], 3), INVALID_ARGUMENT, "tau: one less")
fail_case("qr_q_size", qr_op([3, 2], [3, 3], 0), INVALID_ARGUMENT, "out must be Q")
fail_case("qr_r_complete_size", qr_op([3, 2], [2, 2], 1, complete=True), INVALID_ARGUMENT, "out must be Q")
fail_case("qr_empty", qr_op([0, 2], [0, 0], 0), INVALID_ARGUMENT, "empty matrices")


def bmm_op(x_shape, y_shape, out_shape, st=F32, y_st=F32, order=None):
    """aten::bmm.out: x [B, n, k] times y [B, k, m]."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(y_st, y_shape)
    z = b.tensor(F32, out_shape)
    b.call("aten::bmm.out", self=x, mat2=y, out=z)
    b.set_io([x, y], [z])
    return b


def bmm_sum(x, y):
    """float32 sums from 0 over the contracted index in order, as op_bmm.c
    (written out here, not ptec's reference module)."""
    out = np.zeros((x.shape[0], x.shape[1], y.shape[2]), np.float32)
    for b in range(x.shape[0]):
        for i in range(x.shape[1]):
            for j in range(y.shape[2]):
                acc = np.float32(0.0)
                for c in range(x.shape[2]):
                    acc = np.float32(acc + np.float32(x[b, i, c] * y[b, c, j]))
                out[b, i, j] = acc
    return out


# [[1, 2, 3], [4, 5, 6]] times [[1, 0], [0, 1], [1, 1]]: [[4, 5], [10, 11]] (batch 0), and batch 1 its
# negative times 2 I's first rows
BX = np.array([[[1, 2, 3], [4, 5, 6]], [[-1, -2, -3], [-4, -5, -6]]], np.float32)
BY = np.array([[[1, 0], [0, 1], [1, 1]], [[2, 0], [0, 2], [0, 0]]], np.float32)
run_case("bmm_small", bmm_op([2, 2, 3], [2, 3, 2], [2, 2, 2]), [(BX, None), (BY, None)],
         [(np.array([[[4, 5], [10, 11]], [[-2, -4], [-8, -10]]], np.float32), None)])
# the sum order: row (2^24, 1, 1, -2^24) . (1, 1, 1, 1): ((2^24 + 1) + 1) - 2^24 = 0 in float32 in index order
# (2^24 + 1 rounds to 2^24, to even, twice); summed last to first it is 2, pairwise 1
ORDER = np.array([[[2.0 ** 24, 1, 1, -2.0 ** 24]]], np.float32)
run_case("bmm_sum_order", bmm_op([1, 1, 4], [1, 4, 1], [1, 1, 1]), [(ORDER, None), (np.ones((1, 4, 1), np.float32), None)],
         [(np.zeros((1, 1, 1), np.float32), None)])
RX = np.random.default_rng(150).standard_normal((3, 5, 37)).astype(np.float32)
RY = np.random.default_rng(151).standard_normal((3, 37, 4)).astype(np.float32)
run_case("bmm_random", bmm_op([3, 5, 37], [3, 37, 4], [3, 5, 4]), [(RX, None), (RY, None)],
         [(bmm_sum(RX, RY), None)])
# k = 0: zeros (an empty sum); an inf stays inf in its row, the other rows finite (inf times 0's NaN is not
# compared: its sign bit is the FPU's, 0xffc00000 on x86)
run_case("bmm_k0", bmm_op([2, 2, 0], [2, 0, 3], [2, 2, 3]),
         [(np.zeros((2, 2, 0), np.float32), None), (np.zeros((2, 0, 3), np.float32), None)],
         [(np.zeros((2, 2, 3), np.float32), None)])
run_case("bmm_inf_nan", bmm_op([1, 2, 2], [1, 2, 1], [1, 2, 1]),
         [(np.array([[[np.inf, 1], [1, 1]]], np.float32), None), (np.array([[[2], [2]]], np.float32), None)],
         [(np.array([[[np.inf], [4]]], np.float32), None)])
run_case("bmm_empty_batch", bmm_op([0, 2, 3], [0, 3, 2], [0, 2, 2]),
         [(np.zeros((0, 2, 3), np.float32), None), (np.zeros((0, 3, 2), np.float32), None)],
         [(np.zeros((0, 2, 2), np.float32), None)])
fail_case("bmm_int8", bmm_op([1, 2, 2], [1, 2, 2], [1, 2, 2], st=I8), NOT_SUPPORTED, "dtype must be float32")
fail_case("bmm_mat2_int8", bmm_op([1, 2, 2], [1, 2, 2], [1, 2, 2], y_st=I8), NOT_SUPPORTED, "dtype must be float32")
fail_case("bmm_rank", bmm_op([2, 3], [3, 2], [2, 2]), INVALID_ARGUMENT, "rank 3")
fail_case("bmm_batch", bmm_op([2, 2, 3], [1, 3, 2], [2, 2, 2]), INVALID_ARGUMENT, "batch must equal")
fail_case("bmm_inner", bmm_op([1, 2, 3], [1, 2, 2], [1, 2, 2]), INVALID_ARGUMENT, "as many rows")
fail_case("bmm_out_size", bmm_op([1, 2, 3], [1, 3, 2], [1, 2, 3]), INVALID_ARGUMENT, "out must be [B, n, m]")
fail_case("bmm_order", bmm_op([1, 2, 3], [1, 3, 2], [1, 2, 2], order=[0, 2, 1]), NOT_SUPPORTED, "default dim order")


def lu_op(x_shape, out_shape, which, st=F32, out_st=None):
    """ptec::linalg_lu.out: LU (which 0), pivots (1, int32), P (2), L (3) or U (4) of x's matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape)
    y = b.tensor(out_st or (I32 if which == 1 else F32), out_shape)
    b.call("ptec::linalg_lu.out", self=x, which=which, out=y)
    b.set_io([x], [y])
    return b


# [[1, 2], [4, 4]]: row 2 the pivot (|4| > |1|), l = 1 / 4, u_22 = 2 - l 4 = 1 (exact); a zero first column:
# nothing eliminated, its pivot itself (getrf's 1), then rows 2 and 3 swapped; a NaN below the diagonal is never
# the larger |entry| (pivot 1 kept, the NaN spreads to row 2); a wide 2x3 (l = 0.5, row 2 [0, 2]); a tall 3x1
# (pivot -4, L's column [1, -0.25, -0.5])
A2 = np.array([[[1, 2], [4, 4]], [[1, 2], [np.nan, 1]]], np.float32)
Z3 = np.array([[0, 0, 1], [0, 0, 2], [0, 3, 4]], np.float32)
W23 = np.array([[2, 1, 3], [4, 2, 2]], np.float32)
T31 = np.array([[1], [-4], [2]], np.float32)
run_case("lu_packed_2x2_and_nan", lu_op([2, 2, 2], [2, 2, 2], 0), [(A2, None)],
         [(np.array([[[4, 4], [0.25, 1]], [[1, 2], [np.nan, np.nan]]], np.float32), None)])
run_case("lu_pivots_2x2_and_nan", lu_op([2, 2, 2], [2, 2], 1), [(A2, None)],
         [(np.array([[2, 2], [1, 2]], np.int32), None)])
run_case("lu_pivots_zero_column", lu_op([3, 3], [3], 1), [(Z3, None)], [(np.array([1, 3, 3], np.int32), None)])
run_case("lu_packed_zero_column", lu_op([1, 3, 3], [1, 3, 3], 0), [(Z3[None], None)],
         [(np.array([[[0, 0, 1], [0, 3, 4], [0, 0, 2]]], np.float32), None)])
run_case("lu_p_zero_column", lu_op([3, 3], [3, 3], 2), [(Z3, None)],
         [(np.array([[1, 0, 0], [0, 0, 1], [0, 1, 0]], np.float32), None)])
run_case("lu_l_wide", lu_op([2, 3], [2, 2], 3), [(W23, None)], [(np.array([[1, 0], [0.5, 1]], np.float32), None)])
run_case("lu_u_wide", lu_op([2, 3], [2, 3], 4), [(W23, None)],
         [(np.array([[4, 2, 2], [0, 0, 2]], np.float32), None)])
run_case("lu_p_tall", lu_op([3, 1], [3, 3], 2), [(T31, None)],
         [(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], np.float32), None)])
run_case("lu_l_tall", lu_op([3, 1], [3, 1], 3), [(T31, None)], [(np.array([[1], [-0.25], [-0.5]], np.float32), None)])
run_case("lu_u_tall", lu_op([3, 1], [1, 1], 4), [(T31, None)], [(np.array([[-4]], np.float32), None)])
fail_case("lu_int8", lu_op([2, 2], [2, 2], 0, st=I8), NOT_SUPPORTED, "self must be float32")
fail_case("lu_pivots_float", lu_op([2, 2], [2], 1, out_st=F32), NOT_SUPPORTED, "int32 for the pivots")
fail_case("lu_lu_int32", lu_op([2, 2], [2, 2], 0, out_st=I32), NOT_SUPPORTED, "int32 for the pivots")
fail_case("lu_which", lu_op([2, 2], [2, 2], 5), INVALID_ARGUMENT, "which must be")
fail_case("lu_pivots_rank", lu_op([2, 3], [2, 1], 1), INVALID_ARGUMENT, "out of its rank")
fail_case("lu_p_size", lu_op([3, 2], [2, 2], 2), INVALID_ARGUMENT, "out must be LU")
fail_case("lu_u_size", lu_op([3, 2], [3, 2], 4), INVALID_ARGUMENT, "out must be LU")
fail_case("lu_empty", lu_op([0, 2], [0, 2], 0), INVALID_ARGUMENT, "empty matrices")


def ldl_op(x_shape, out_shape, which, st=F32, out_st=None):
    """ptec::linalg_ldl_factor.out: LD (which 0), pivots (1, int32) or info (2, int32) of x's matrices."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape)
    y = b.tensor(out_st or (F32 if which == 0 else I32), out_shape)
    b.call("ptec::linalg_ldl_factor.out", self=x, which=which, out=y)
    b.set_io([x], [y])
    return b


# Bunch-Kaufman on the lower triangles (99: the upper one, never read): [[4, .], [2, 3]] a 1x1 block without a
# swap (d = 1/4, l = 0.5, 3 - 2 0.5 = 2); [[1, .], [3, 8]] a 1x1 block on row 2 (|8| >= alpha 3: swapped, l = 3/8,
# 1 - 3 0.375 = -0.125); [[0, .], [1, 0]] a 2x2 block (|a_22| = 0 < alpha); a NaN diagonal a zero column
# (info 1, its pivot itself); a 3x3 2x2 block with a row below it (e = 2, d11 = d22 = 0, t = -1, f = -0.5:
# u = v = 0.5, 4 - (0.5 + 0.5) = 3); a zero first column (info 1) then 1x1 blocks
L2 = np.array([[[4, 99], [2, 3]], [[1, 99], [3, 8]], [[0, 99], [1, 0]], [[np.nan, 99], [1, 1]]], np.float32)
L3 = np.array([[[0, 99, 99], [2, 0, 99], [1, 1, 4]], [[0, 99, 99], [0, 2, 99], [0, 1, 3]]], np.float32)
run_case("ldl_ld_2x2", ldl_op([4, 2, 2], [4, 2, 2], 0), [(L2, None)],
         [(np.array([[[4, 0], [0.5, 2]], [[8, 0], [0.375, -0.125]], [[0, 0], [1, 0]], [[np.nan, 0], [1, 1]]],
                    np.float32), None)])
run_case("ldl_pivots_2x2", ldl_op([4, 2, 2], [4, 2], 1), [(L2, None)],
         [(np.array([[1, 2], [2, 2], [-2, -2], [1, 2]], np.int32), None)])
run_case("ldl_info_2x2", ldl_op([4, 2, 2], [4], 2), [(L2, None)], [(np.array([0, 0, 0, 1], np.int32), None)])
run_case("ldl_ld_3x3", ldl_op([2, 3, 3], [2, 3, 3], 0), [(L3, None)],
         [(np.array([[[0, 0, 0], [2, 0, 0], [0.5, 0.5, 3]], [[0, 0, 0], [0, 2, 0], [0, 0.5, 2.5]]], np.float32),
           None)])
run_case("ldl_pivots_3x3", ldl_op([2, 3, 3], [2, 3], 1), [(L3, None)],
         [(np.array([[-2, -2, 3], [1, 2, 3]], np.int32), None)])
run_case("ldl_info_2d", ldl_op([3, 3], [], 2), [(L3[1], None)], [(np.array(1, np.int32), None)])
fail_case("ldl_int8", ldl_op([2, 2], [2, 2], 0, st=I8), NOT_SUPPORTED, "self must be float32")
fail_case("ldl_pivots_float", ldl_op([2, 2], [2], 1, out_st=F32), NOT_SUPPORTED, "int32 for the pivots")
fail_case("ldl_ld_int32", ldl_op([2, 2], [2, 2], 0, out_st=I32), NOT_SUPPORTED, "int32 for the pivots")
fail_case("ldl_which", ldl_op([2, 2], [2, 2], 3), INVALID_ARGUMENT, "which must be")
fail_case("ldl_info_rank", ldl_op([2, 2, 2], [2, 1], 2), INVALID_ARGUMENT, "out of its rank")
fail_case("ldl_not_square", ldl_op([2, 3], [2, 3], 0), INVALID_ARGUMENT, "must be square")
fail_case("ldl_pivots_size", ldl_op([2, 3, 3], [2, 2], 1), INVALID_ARGUMENT, "out must be LD")
fail_case("ldl_info_batch", ldl_op([2, 3, 3], [3], 2), INVALID_ARGUMENT, "out must be LD")
fail_case("ldl_empty", ldl_op([0, 0], [0, 0], 0), INVALID_ARGUMENT, "empty matrices")

def unpool_op(x_shape, out_shape, zero_point=0, st=F32, idx_st=I64, order=None):
    b = ProgramBuilder()
    x, i = b.tensor(st, x_shape, order), b.tensor(idx_st, x_shape, order)
    y = b.tensor(st, out_shape, order)
    b.call("ptec::max_unpool.out", self=x, indices=i, zero_point=zero_point, out=y)
    b.set_io([x, i], [y])
    return b


# int8 [1, 1, 1, 2] values 5, -3 at 3 and 0 of a [1, 1, 2, 2] plane whose zero is the code -7
run_case("max_unpool_int8_zero_point", unpool_op([1, 1, 1, 2], [1, 1, 2, 2], -7, st=I8),
         [(np.array([[[[5, -3]]]], np.int8), None), (np.array([[[[3, 0]]]], np.int64), None)],
         [(np.array([[[[-3, -7], [-7, 5]]]], np.int8), None)])
# float32 channels-last [1, 2, 1, 1] to [1, 2, 1, 2]: channel 0's 1.5 at 1, channel 1's -2 at 0
run_case("max_unpool_channels_last", unpool_op([1, 2, 1, 1], [1, 2, 1, 2], order=CHANNELS_LAST),
         [(np.array([1.5, -2], np.float32).reshape(1, 2, 1, 1), CHANNELS_LAST),
          (np.array([1, 0], np.int64).reshape(1, 2, 1, 1), CHANNELS_LAST)],
         [(np.array([[[[0, 1.5]], [[-2, 0]]]], np.float32), CHANNELS_LAST)])
# two values at one index: the later wins (torch's loop): [4, 9] both at 1 -> [0, 9, 0]
run_case("max_unpool_repeat", unpool_op([1, 1, 2], [1, 1, 3]),
         [(np.array([[[4, 9]]], np.float32), None), (np.array([[[1, 1]]], np.int64), None)],
         [(np.array([[[0, 9, 0]]], np.float32), None)])
fail_case("max_unpool_float_zero", unpool_op([1, 1, 2], [1, 1, 4], 3), INVALID_ARGUMENT, "zero_point")
fail_case("max_unpool_zero_range", unpool_op([1, 1, 2], [1, 1, 4], 128, st=I8), INVALID_ARGUMENT, "zero_point")
fail_case("max_unpool_indices_int32", unpool_op([1, 1, 2], [1, 1, 4], idx_st=ScalarType.INT), INVALID_ARGUMENT,
          "indices must be int64")
fail_case("max_unpool_batch", unpool_op([1, 1, 2], [2, 1, 4]), INVALID_ARGUMENT, "[N, C, ...] alike")


def pick_op(win_shape, out_shape, kernel, st=F32, out_st=None, win_order=None, out_order=None):
    b = ProgramBuilder()
    x = b.tensor(st, win_shape, win_order)
    y = b.tensor(out_st if out_st is not None else st, out_shape, out_order)
    b.call("ptec::random_fractional_pick.out", windows=x, kernel_size=list(kernel), seed=3, out=y)
    b.set_io([x], [y])
    return b


# p = 0 drops nothing whatever is drawn: float32 x * (1 / 1), int8 codes copied
XD = np.array([[1.5, -2.0, 0.25], [3.0, -0.5, 8.0]], np.float32)
run_case("random_dropout_p0_float", dropout_op([2, 3], p=0.0), [(XD, None)], [(XD, None)])
run_case("random_dropout_p0_int8", dropout_op([2, 3], st=I8, p=0.0, zero_point=-5),
         [(np.array([[-128, 127, 0], [5, -5, 1]], np.int8), None)], [(np.array([[-128, 127, 0], [5, -5, 1]], np.int8), None)])
fail_case("random_dropout_p1", dropout_op([2, 3], p=1.0), INVALID_ARGUMENT, "p must be in [0, 1)")
fail_case("random_dropout_p_negative", dropout_op([2, 3], p=-0.1), INVALID_ARGUMENT, "p must be in [0, 1)")
fail_case("random_dropout_p_nan", dropout_op([2, 3], p=float("nan")), INVALID_ARGUMENT, "p must be in [0, 1)")
fail_case("random_dropout_mask_dims", dropout_op([2, 3], mask_dims=3), INVALID_ARGUMENT, "mask_dims must be in")
fail_case("random_dropout_mask_dims_negative", dropout_op([2, 3], mask_dims=-1), INVALID_ARGUMENT, "mask_dims must be in")
fail_case("random_dropout_zero_point", dropout_op([2, 3], st=I8, zero_point=128), INVALID_ARGUMENT,
          "zero_point must be an int8 value")
fail_case("random_dropout_zero_point_float", dropout_op([2, 3], zero_point=1), INVALID_ARGUMENT,
          "zero_point must be an int8 value")
fail_case("random_dropout_dtype", dropout_op([2, 3], st=I64), NOT_SUPPORTED, "self must be float32 or int8")
fail_case("random_dropout_out_dtype", dropout_op([2, 3], out_st=I8), INVALID_ARGUMENT, "out must have self's dtype")
fail_case("random_dropout_sizes", dropout_op([2, 3], out_shape=[3, 2]), INVALID_ARGUMENT, "out must have self's sizes")

# as many outputs as windows: alpha = 1, so start i = int(i + u) - int(u) = i
# for any sample u: the pick is the windows themselves, in any layout
W4 = np.arange(2 * 3 * 3 * 4, dtype=np.float32).reshape(2, 3, 3, 4) - 20.0
run_case("random_pick_identity_nhwc", pick_op([2, 3, 3, 4], [2, 3, 3, 4], [2, 2], win_order=CHANNELS_LAST),
         [(W4, CHANNELS_LAST)], [(W4, None)])
W5 = (np.arange(1 * 2 * 2 * 3 * 2) % 251 - 100).astype(np.int8).reshape(1, 2, 2, 3, 2)
run_case("random_pick_identity_3d_int8", pick_op([1, 2, 2, 3, 2], [1, 2, 2, 3, 2], [3, 1, 2], st=I8),
         [(W5, None)], [(W5, None)])
# one output: the window at n - k, the last one, whatever is drawn
run_case("random_pick_last_window", pick_op([1, 1, 3, 4], [1, 1, 1, 1], [2, 2]),
         [(np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4), None)], [(np.full((1, 1, 1, 1), 11.0, np.float32), None)])
fail_case("random_pick_rank", pick_op([1, 3, 4], [1, 3, 4], [2]), INVALID_ARGUMENT, "windows must be 4-D or 5-D")
fail_case("random_pick_kernel_items", pick_op([1, 1, 3, 4], [1, 1, 2, 2], [2, 2, 2]), INVALID_ARGUMENT,
          "kernel_size needs one item a spatial dim")
fail_case("random_pick_kernel_zero", pick_op([1, 1, 3, 4], [1, 1, 2, 2], [0, 2]), INVALID_ARGUMENT,
          "kernel_size out of range")
fail_case("random_pick_kernel_huge", pick_op([1, 1, 3, 4], [1, 1, 2, 2], [2, 2 ** 31 - 2]), INVALID_ARGUMENT,
          "kernel_size out of range")
fail_case("random_pick_too_many_outputs", pick_op([1, 1, 3, 4], [1, 1, 4, 2], [2, 2]), INVALID_ARGUMENT,
          "each spatial out size must be in [1, windows' size]")
fail_case("random_pick_no_outputs", pick_op([1, 1, 3, 4], [1, 1, 0, 2], [2, 2]), INVALID_ARGUMENT,
          "each spatial out size must be in [1, windows' size]")
fail_case("random_pick_planes", pick_op([1, 2, 3, 4], [1, 1, 2, 2], [2, 2]), INVALID_ARGUMENT,
          "out must have windows' N and C")
fail_case("random_pick_out_dtype", pick_op([1, 1, 3, 4], [1, 1, 2, 2], [2, 2], out_st=I8), INVALID_ARGUMENT,
          "out must have windows' dtype and rank")
fail_case("random_pick_dtype", pick_op([1, 1, 3, 4], [1, 1, 2, 2], [2, 2], st=I64), NOT_SUPPORTED,
          "windows must be float32 or int8")


def gather_op(x_shape, index_shape, out_shape, dim, st=I8, index_st=I64, out_st=None, sparse_grad=False,
              index_order=None, out_order=None):
    b = ProgramBuilder()
    x = b.tensor(st, x_shape)
    index = b.tensor(index_st, index_shape, index_order)
    y = b.tensor(out_st if out_st is not None else st, out_shape, out_order)
    b.call("aten::gather.out", self=x, dim=dim, index=index, sparse_grad=sparse_grad, out=y)
    b.set_io([x, index], [y])
    return b


# int8 [2, 3] picked along dim 1: [[x00, x02], [x11, x11]]; along dim 0 (a
# narrower index): [[x10, x01]]; a float 0-d self with a 1-element index
G8 = np.array([[-128, 5, 127], [7, -3, 0]], np.int8)
run_case("gather_int8_dim1", gather_op([2, 3], [2, 2], [2, 2], 1),
         [(G8, None), (np.array([[0, 2], [1, 1]], np.int64), None)],
         [(np.array([[-128, 127], [-3, -3]], np.int8), None)])
run_case("gather_int8_dim0_narrow", gather_op([2, 3], [1, 2], [1, 2], -2),
         [(G8, None), (np.array([[1, 0]], np.int64), None)], [(np.array([[7, 5]], np.int8), None)])
run_case("gather_float_0d", gather_op([], [1], [1], 0, st=F32),
         [(np.array(2.5, np.float32), None), (np.array([0], np.int64), None)], [(np.array([2.5], np.float32), None)])
fail_case("gather_index_int32", gather_op([2, 3], [2, 2], [2, 2], 1, index_st=ScalarType.INT), INVALID_ARGUMENT,
          "index must be int64")
fail_case("gather_out_dtype", gather_op([2, 3], [2, 2], [2, 2], 1, out_st=F32), INVALID_ARGUMENT,
          "out must have self's dtype")
fail_case("gather_rank", gather_op([2, 3], [2], [2], 1), INVALID_ARGUMENT, "index must have self's rank")
fail_case("gather_index_wider", gather_op([2, 3], [3, 1], [3, 1], 1), INVALID_ARGUMENT,
          "no larger than self in every dim but dim")
fail_case("gather_out_sizes", gather_op([2, 3], [2, 2], [2, 3], 1), INVALID_ARGUMENT, "out must have index's sizes")
fail_case("gather_dim", gather_op([2, 3], [2, 2], [2, 2], 2), INVALID_ARGUMENT, "dim")
fail_case("gather_sparse_grad", gather_op([2, 3], [2, 2], [2, 2], 1, sparse_grad=True), NOT_SUPPORTED,
          "sparse_grad must be false")
fail_case("gather_dim_order", gather_op([2, 3], [2, 2], [2, 2], 1, out_order=[1, 0]), NOT_SUPPORTED,
          "out must have index's dim order")


def conv(weight_shape, out_shape, groups=1, transposed=False, stride=(1, 1), output_padding=(0, 0),
         bias_shape=None, x_dtype=F32):
    b = ProgramBuilder()
    x, y = b.tensor(x_dtype, [1, 4, 5, 5]), b.tensor(F32, out_shape)
    b.call("aten::convolution.out", input=x, weight=b.constant(np.zeros(weight_shape, np.float32)),
           bias=None if bias_shape is None else b.constant(np.zeros(bias_shape, np.float32)),
           stride=list(stride), padding=[0, 0], dilation=[1, 1], transposed=transposed,
           output_padding=list(output_padding), groups=groups, out=y)
    b.set_io([x], [y])
    return b


fail_case("conv_groups", conv([6, 2, 3, 3], [1, 6, 3, 3], groups=3), INVALID_ARGUMENT, "groups must be positive and divide")
fail_case("conv_weight", conv([6, 3, 3, 3], [1, 6, 3, 3]), INVALID_ARGUMENT, "weight must be [Cout, Cin/groups")
fail_case("conv_out", conv([6, 4, 3, 3], [1, 6, 2, 3]), INVALID_ARGUMENT, "out must be [N, Cout, OH, OW]")
fail_case("conv_bias", conv([6, 4, 3, 3], [1, 6, 3, 3], bias_shape=[5]), INVALID_ARGUMENT, "bias must be [Cout]")
fail_case("conv_stride", conv([6, 4, 3, 3], [1, 6, 3, 3], stride=(0, 1)), INVALID_ARGUMENT, "stride must be positive")
fail_case("conv_output_padding", conv([4, 2, 3, 3], [1, 2, 12, 12], transposed=True, stride=(2, 2),
                                      output_padding=(2, 0)), INVALID_ARGUMENT, "output_padding must be")
fail_case("conv_int8", conv([6, 4, 3, 3], [1, 6, 3, 3], x_dtype=I8), NOT_SUPPORTED, "dtype must be float32")

b = ProgramBuilder()
x, y = b.tensor(F32, [2, 3]), b.tensor(F32, [2, 4])
b.call("aten::linear.out", input=x, weight=b.constant(np.zeros((4, 2), np.float32)), bias=None, out=y)
b.set_io([x], [y])
fail_case("linear_k", b, INVALID_ARGUMENT, "weight's second dim must equal")

b = ProgramBuilder()
x, y = b.tensor(F32, [1, 1, 4, 4]), b.tensor(F32, [1, 1, 2, 2])
ind = b.tensor(ScalarType.INT, [1, 1, 2, 2])
b.call("aten::max_pool2d_with_indices.out", self=x, kernel_size=[2, 2], stride=[2, 2], padding=[0, 0],
       dilation=[1, 1], ceil_mode=False, out=y, indices=ind)
b.set_io([x], [y])
fail_case("max_pool_indices_dtype", b, INVALID_ARGUMENT, "indices must be int64")

b = ProgramBuilder()
x, y = b.tensor(F32, [1, 1, 4, 4]), b.tensor(F32, [1, 1, 2, 2])
ind = b.tensor(I64, [1, 1, 2, 2])
b.call("aten::max_pool2d_with_indices.out", self=x, kernel_size=[2, 2], stride=[2, 2], padding=[0, 0],
       dilation=[1, 1], ceil_mode=False, out=y, indices=ind)
b.instructions[-1].instr_args.args[-1] = y          # a plain return slot, not the TensorList
b.set_io([x], [y])
fail_case("max_pool_return_slot", b, INVALID_ARGUMENT, "expected TensorList")

for name, parts, out_shape, dim, text in (
        ("cat_dtype", [(F32, [1, 2]), (I8, [1, 2])], [1, 4], 1, "every input must have out's dtype"),
        ("cat_sizes", [(F32, [1, 2]), (F32, [2, 2])], [1, 4], 1, "differ from out in a dim other than dim"),
        ("cat_sum", [(F32, [1, 2]), (F32, [1, 2])], [1, 5], 1, "not the inputs' sum"),
        ("cat_rank", [(F32, [1, 2]), (F32, [1, 2, 1])], [1, 4], 1, "every input must have out's rank"),
        ("cat_empty_list", [], [1, 4], 1, "at least one tensor")):
    b = ProgramBuilder()
    xs = [b.tensor(st, shape) for st, shape in parts]
    y = b.tensor(F32, out_shape)
    b.call("aten::cat.out", tensors=xs, dim=dim, out=y)
    b.set_io(xs, [y])
    fail_case(name, b, INVALID_ARGUMENT, text)

b = ProgramBuilder()
x, y = b.tensor(F32, [1, 2]), b.tensor(F32, [1, 2])
b.call("aten::cat.out", tensors=[x], dim=1, out=y)
b.instructions[-1].instr_args.args[0] = b.int_list([1])   # a list of ints where tensors belong
b.set_io([x], [y])
fail_case("cat_not_tensor_list", b, INVALID_ARGUMENT, "expected TensorList")

b = ProgramBuilder()
x, y = b.tensor(F32, [1, 2]), b.tensor(F32, [1, 2])
b.call("aten::cat.out", tensors=[x], dim=1, out=y)
b.values[b.instructions[-1].instr_args.args[0]].val.items = [b.int(3)]   # an item that is an Int
b.set_io([x], [y])
fail_case("cat_item_not_tensor", b, INVALID_ARGUMENT, "tensor list item is not a Tensor")


# -- bicubic resize: hand-worked, and malformed calls ----------------------------

def bicubic(x_shape, out_shape, size, scales=None, align=False, st=F32):
    b = ProgramBuilder()
    x, y = b.tensor(st, x_shape), b.tensor(st, out_shape)
    b.call("aten::upsample_bicubic2d.vec_out", input=x, output_size=size, align_corners=align,
           scale_factors=scales, out=y)
    b.set_io([x], [y])
    return b


# W: [0, 16, 32, 0] -> 2 (align_corners False): s = 2, src = 0.5 and 2.5, t = 0.5,
# weights far(1.5) = -0.09375, near(0.5) = 0.59375, near(0.5), far(1.5).
# out 0: taps -1, 0, 1, 2 -> 0, 0, 1, 2: -0.09375*0 + 0.59375*0 + 0.59375*16 - 0.09375*32 = 6.5
# out 1: taps 1, 2, 3, 4 -> 1, 2, 3, 3: -0.09375*16 + 0.59375*32 + 0 + 0 = 17.5
# H (1 -> 1): src 0, t = 0, weights 0, 1, 0, 0: the row itself.
run_case("bicubic_down", bicubic([1, 1, 1, 4], [1, 1, 1, 2], [1, 2]),
         [(np.array([0, 16, 32, 0], np.float32).reshape(1, 1, 1, 4), None)],
         [(np.array([6.5, 17.5], np.float32).reshape(1, 1, 1, 2), None)])
fail_case("bicubic_size", bicubic([1, 1, 2, 2], [1, 1, 4, 4], [4, 5]), INVALID_ARGUMENT,
          "output_size must be out's [H, W]")
fail_case("bicubic_scale_nan", bicubic([1, 1, 2, 2], [1, 1, 4, 4], None, [float("nan"), 2.0]), INVALID_ARGUMENT,
          "scale_factors must be positive")
fail_case("bicubic_scale_inf", bicubic([1, 1, 2, 2], [1, 1, 4, 4], None, [2.0, float("inf")]), INVALID_ARGUMENT,
          "scale_factors must be positive")
fail_case("bicubic_scale_negative", bicubic([1, 1, 2, 2], [1, 1, 4, 4], None, [-2.0, 2.0]), INVALID_ARGUMENT,
          "scale_factors must be positive")
fail_case("bicubic_both", bicubic([1, 1, 2, 2], [1, 1, 4, 4], [4, 4], [2.0, 2.0]), INVALID_ARGUMENT,
          "give either output_size or two")
fail_case("bicubic_one_size", bicubic([1, 1, 2, 2], [1, 1, 4, 4], [4]), INVALID_ARGUMENT,
          "output_size must be out's [H, W]")
fail_case("bicubic_huge_size", bicubic([1, 1, 2, 2], [1, 1, 4, 4], [1 << 40, 4]), INVALID_ARGUMENT, "")
fail_case("bicubic_channels", bicubic([1, 2, 2, 2], [1, 3, 4, 4], [4, 4]), INVALID_ARGUMENT,
          "input and out must be 4-D float")
fail_case("bicubic_3d", bicubic([1, 2, 2], [1, 4, 4], [4, 4]), INVALID_ARGUMENT, "input and out must be 4-D float")
fail_case("bicubic_int8", bicubic([1, 1, 2, 2], [1, 1, 4, 4], [4, 4], st=I8), INVALID_ARGUMENT,
          "input and out must be 4-D float")
fail_case("bicubic_empty", bicubic([1, 1, 0, 2], [1, 1, 0, 4], [0, 4]), INVALID_ARGUMENT, "empty input or output")



def order_op(key, x_shape, val_shape, idx_shape=None, st=F32, val_st=None, idx_st=I64, order=None, idx_order=None,
             **kw):
    """aten::sort.values / topk.values: two outputs, values (self's dtype)
    and int64 indices, both program outputs."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    v = b.tensor(val_st or st, val_shape, order)
    i = b.tensor(idx_st, idx_shape or val_shape, idx_order or order)
    b.call(key, self=x, values=v, indices=i, **kw)
    b.set_io([x], [v, i])
    return b


# rows [3,1,3,2] and [0,-5,7,0] ascending, stable: the first 3 (pos 0) before
# the second (pos 2), the first 0 (pos 0) before the second (pos 3)
run_case("sort_stable_rows", order_op("aten::sort.values", [2, 4], [2, 4], dim=-1, descending=False),
         [(np.array([[3, 1, 3, 2], [0, -5, 7, 0]], np.float32), None)],
         [(np.array([[1, 2, 3, 3], [-5, 0, 0, 7]], np.float32), None),
          (np.array([[1, 3, 0, 2], [1, 0, 3, 2]], np.int64), None)])
# descending keeps equals in row order too: int8 [5,9,5,-128] -> 9,5,5,-128 at 1,0,2,3
run_case("sort_desc_int8", order_op("aten::sort.values", [4], [4], st=I8, dim=0, descending=True),
         [(np.array([5, 9, 5, -128], np.int8), None)],
         [(np.array([9, 5, 5, -128], np.int8), None), (np.array([1, 0, 2, 3], np.int64), None)])
# NaN is the largest: ascending [nan, 1, -2] -> -2, 1, nan at 2, 1, 0
run_case("sort_nan", order_op("aten::sort.values", [3], [3], dim=0, descending=False),
         [(np.array([np.nan, 1, -2], np.float32), None)],
         [(np.array([-2, 1, np.nan], np.float32), None), (np.array([2, 1, 0], np.int64), None)])
# sort down the columns (dim 0) of [[4,1],[2,3],[6,0]]: col 0 -> 2,4,6 (1,0,2), col 1 -> 0,1,3 (2,0,1)
run_case("sort_dim0", order_op("aten::sort.values", [3, 2], [3, 2], dim=0, descending=False),
         [(np.array([[4, 1], [2, 3], [6, 0]], np.float32), None)],
         [(np.array([[2, 0], [4, 1], [6, 3]], np.float32), None),
          (np.array([[1, 2], [0, 0], [2, 1]], np.int64), None)])
# channels-last [1,3,1,2] sorted over C, descending: pixel 0 (1,5,3) -> 5,3,1 at 1,2,0;
# pixel 1 (2,0,4) -> 4,2,0 at 2,0,1
run_case("sort_channels_last", order_op("aten::sort.values", [1, 3, 1, 2], [1, 3, 1, 2], order=CHANNELS_LAST,
                                        dim=1, descending=True),
         [(np.array([[1, 2], [5, 0], [3, 4]], np.float32).reshape(1, 3, 1, 2), CHANNELS_LAST)],
         [(np.array([[5, 4], [3, 2], [1, 0]], np.float32).reshape(1, 3, 1, 2), CHANNELS_LAST),
          (np.array([[1, 2], [2, 0], [0, 1]], np.int64).reshape(1, 3, 1, 2), CHANNELS_LAST)])
# the 2 largest of [1,8,-3,8,5]: 8 (pos 1), 8 (pos 3); the 2 smallest: -3 (2), 1 (0)
run_case("topk_largest", order_op("aten::topk.values", [5], [2], k=2, dim=0, largest=True, sorted=True),
         [(np.array([1, 8, -3, 8, 5], np.float32), None)],
         [(np.array([8, 8], np.float32), None), (np.array([1, 3], np.int64), None)])
run_case("topk_smallest_int8", order_op("aten::topk.values", [2, 5], [2, 2], st=I8, k=2, dim=1, largest=False,
                                        sorted=False),
         [(np.array([[1, 8, -3, 8, 5], [0, 0, 0, 0, -1]], np.int8), None)],
         [(np.array([[-3, 1], [-1, 0]], np.int8), None), (np.array([[2, 0], [4, 0]], np.int64), None)])
# NaN counts as the largest for topk: [2, nan, 7] k=1 -> nan at 1
run_case("topk_nan", order_op("aten::topk.values", [3], [1], k=1, dim=-1, largest=True, sorted=True),
         [(np.array([2, np.nan, 7], np.float32), None)],
         [(np.array([np.nan], np.float32), None), (np.array([1], np.int64), None)])
# 0-d self: one element, index 0
run_case("topk_scalar", order_op("aten::topk.values", [], [], k=1, dim=0, largest=True, sorted=True),
         [(np.array(4.5, np.float32), None)], [(np.array(4.5, np.float32), None), (np.array(0, np.int64), None)])

fail_case("topk_k_big", order_op("aten::topk.values", [2, 3], [2, 4], k=4, dim=1, largest=True, sorted=True),
          INVALID_ARGUMENT, "k out of range")
fail_case("topk_k_negative", order_op("aten::topk.values", [2, 3], [2, 0], k=-1, dim=1, largest=True, sorted=True),
          INVALID_ARGUMENT, "k out of range")
fail_case("topk_dim", order_op("aten::topk.values", [2, 3], [2, 1], k=1, dim=2, largest=True, sorted=True),
          INVALID_ARGUMENT, "dim out of range")
fail_case("sort_dim", order_op("aten::sort.values", [2, 3], [2, 3], dim=-3, descending=False),
          INVALID_ARGUMENT, "dim out of range")
fail_case("sort_scalar_dim", order_op("aten::sort.values", [], [], dim=1, descending=False),
          INVALID_ARGUMENT, "dim out of range")
fail_case("topk_values_sizes", order_op("aten::topk.values", [2, 3], [2, 3], k=2, dim=1, largest=True, sorted=True),
          INVALID_ARGUMENT, "values' sizes do not match")
fail_case("sort_indices_sizes", order_op("aten::sort.values", [2, 3], [2, 3], [3, 2], dim=1, descending=False),
          INVALID_ARGUMENT, "indices' sizes do not match")
fail_case("sort_values_dtype", order_op("aten::sort.values", [2, 3], [2, 3], val_st=I8, dim=1, descending=False),
          NOT_SUPPORTED, "both be float32, int8, int64 or int32")
fail_case("sort_self_int16", order_op("aten::sort.values", [2, 3], [2, 3], st=ScalarType.SHORT, dim=1,
                                      descending=False), NOT_SUPPORTED, "both be float32, int8, int64 or int32")
fail_case("topk_values_int32_of_int64", order_op("aten::topk.values", [4], [2], st=I64, val_st=I32, k=2, dim=0,
                                                 largest=True, sorted=True), NOT_SUPPORTED, "both be float32")
# int64 compares exactly: 2^53 + 1 above 2^53 (a double compare ties them), the extremes in place; equals keep
# their row order (stable), descending too
run_case("sort_int64", order_op("aten::sort.values", [2, 4], [2, 4], st=I64, dim=1, descending=False),
         [(np.array([[2 ** 53 + 1, 2 ** 53, L64, 2 ** 63 - 1], [3, -1, 3, -1]], np.int64), None)],
         [(np.array([[L64, 2 ** 53, 2 ** 53 + 1, 2 ** 63 - 1], [-1, -1, 3, 3]], np.int64), None),
          (np.array([[2, 1, 0, 3], [1, 3, 0, 2]], np.int64), None)])
run_case("sort_desc_int64_dim0", order_op("aten::sort.values", [3, 2], [3, 2], st=I64, dim=0, descending=True),
         [(np.array([[5, -7], [9, -7], [5, 2 ** 40]], np.int64), None)],
         [(np.array([[9, 2 ** 40], [5, -7], [5, -7]], np.int64), None),
          (np.array([[1, 2], [0, 0], [2, 1]], np.int64), None)])
# the 2 largest of int32 [7, -2^31, 2^31 - 1, 7, 0]: 2^31 - 1 (pos 2), 7 (pos 0, the earlier equal)
run_case("topk_int32", order_op("aten::topk.values", [5], [2], st=I32, k=2, dim=0, largest=True, sorted=True),
         [(np.array([7, -2 ** 31, 2 ** 31 - 1, 7, 0], np.int32), None)],
         [(np.array([2 ** 31 - 1, 7], np.int32), None), (np.array([2, 0], np.int64), None)])
run_case("topk_smallest_int64", order_op("aten::topk.values", [2, 3], [2, 1], st=I64, k=1, dim=1, largest=False,
                                         sorted=True),
         [(np.array([[4, L64 + 1, L64 + 1], [0, 0, -1]], np.int64), None)],
         [(np.array([[L64 + 1], [-1]], np.int64), None), (np.array([[1], [2]], np.int64), None)])
fail_case("topk_indices_int32", order_op("aten::topk.values", [4], [2], idx_st=ScalarType.INT, k=2, dim=0,
                                         largest=True, sorted=True), INVALID_ARGUMENT, "indices must be int64")
fail_case("sort_indices_order", order_op("aten::sort.values", [1, 2, 2, 2], [1, 2, 2, 2], dim=1, descending=False,
                                         idx_order=CHANNELS_LAST), INVALID_ARGUMENT, "dim order differs")

b = order_op("aten::sort.values", [4], [4], dim=0, descending=False)
b.instructions[-1].instr_args.args[-1] = b.instructions[-1].instr_args.args[-2]   # a plain return slot
fail_case("sort_return_slot", b, INVALID_ARGUMENT, "expected TensorList")


# -- one element per row (median, nanmedian, mode) and the running extremes (cummax, cummin) ----

# median of [3,1,3,2] is the lower middle of 1,2,3,3: 2 (pos 3); of [5,5,1,5]: 5, the stable order's
# second 5 (1,5@0,5@1,5@3: position 1 is pos 0); of [1,nan,0,nan]: its first NaN (pos 1)
run_case("median_rows", order_op("aten::median.dim_values", [3, 4], [3], dim=1, keepdim=False),
         [(np.array([[3, 1, 3, 2], [5, 5, 1, 5], [1, np.nan, 0, np.nan]], np.float32), None)],
         [(np.array([2, 5, np.nan], np.float32), None), (np.array([3, 0, 1], np.int64), None)])
# nanmedian leaves the NaNs out: [1,nan,0,nan] -> lower middle of 1,0: 0 (pos 2); NaNs only -> NaN at 0;
# [4,-1,4,nan] -> -1,4,4: 4, the first 4 (pos 0)
run_case("nanmedian_rows", order_op("aten::nanmedian.dim_values", [3, 4], [3, 1], dim=-1, keepdim=True),
         [(np.array([[1, np.nan, 0, np.nan], [np.nan] * 4, [4, -1, 4, np.nan]], np.float32), None)],
         [(np.array([[0], [np.nan], [4]], np.float32), None), (np.array([[2], [0], [0]], np.int64), None)])
# int8 down the columns of [[7,-2],[3,-2],[-9,5]]: col 0 -> -9,3,7: 3 (pos 1); col 1 -> -2@0,-2@1,5: -2 at 1
run_case("median_int8_dim0", order_op("aten::median.dim_values", [3, 2], [2], st=I8, dim=0, keepdim=False),
         [(np.array([[7, -2], [3, -2], [-9, 5]], np.int8), None)],
         [(np.array([3, -2], np.int8), None), (np.array([1, 1], np.int64), None)])
# mode: [2,1,2,1,3] -> 1 and 2 twice each: the smaller, 1, at its last position 3; [4,4,0,9,4] -> 4 at 4;
# [6,5,7,8,9] all once -> 5 (pos 1)
run_case("mode_rows", order_op("aten::mode.values", [3, 5], [3], dim=1, keepdim=False),
         [(np.array([[2, 1, 2, 1, 3], [4, 4, 0, 9, 4], [6, 5, 7, 8, 9]], np.float32), None)],
         [(np.array([1, 4, 5], np.float32), None), (np.array([3, 4, 1], np.int64), None)])
# int8 mode over C of a channels-last [1,4,1,2]: pixel 0 (3,-1,3,-1) -> -1 at 3; pixel 1 (0,0,7,0) -> 0 at 3
run_case("mode_int8_channels_last", order_op("aten::mode.values", [1, 4, 1, 2], [1, 1, 1, 2], st=I8,
                                             order=CHANNELS_LAST, dim=1, keepdim=True),
         [(np.array([[3, 0], [-1, 0], [3, 7], [-1, 0]], np.int8).reshape(1, 4, 1, 2), CHANNELS_LAST)],
         [(np.array([[-1, 0]], np.int8).reshape(1, 1, 1, 2), CHANNELS_LAST),
          (np.array([[3, 3]], np.int64).reshape(1, 1, 1, 2), CHANNELS_LAST)])
# mode past 16 elements: PyTorch's libstdc++ std::sort procedure (op_median_mode.c). Row 0, twelve 0s: torch's
# index 2, neither the first (0) nor the last (19) 0; row 1, twenty 3s: index 1 (both torch 1.13's CPU answers)
run_case("mode_long_rows", order_op("aten::mode.values", [2, 20], [2], dim=1, keepdim=False),
         [(np.array([[0, 2, 0, 0, 2, 0, 1, 1, 0, 1, 0, 0, 0, 2, 2, 1, 0, 0, 0, 0], [3] * 20], np.float32), None)],
         [(np.array([0, 3], np.float32), None), (np.array([2, 1], np.int64), None)])
# int8 row of 24 down dim 0: -2 nine times, torch's index 13 (its last is 22)
run_case("mode_int8_long_dim0", order_op("aten::mode.values", [24, 1], [1, 1], st=I8, dim=0, keepdim=True),
         [(np.array([-2, 3, -2, -2, 3, -2, -1, -1, -2, 1, 2, 2, -2, -2, 2, -2, 0, -1, -3, -1, 0, -2, -2, -1],
                    np.int8).reshape(24, 1), None)],
         [(np.array([[-2]], np.int8), None), (np.array([[13]], np.int64), None)])
# 40 values, one tie (8 at 33 and 36), built so the introsort reaches its depth limit (2 floor(log2 40) = 10):
# the heapsort leaves 33 before 36, so torch's index is 36 (without the depth limit it would be 33)
run_case("mode_heapsort_row", order_op("aten::mode.values", [40], [], dim=0, keepdim=False),
         [(np.array([29, -7, 27, -5, 25, -3, 23, -1, 28, 1, 24, 3, 30, 5, 22, 7, 26, 9, 12, 11, -8, -6, -4, -2, 0, 2,
                     4, 6, 8, 10, 21, 18, 19, 16, 17, 15, 16, 13, 14, 20], np.float32) / 2, None)],
         [(np.array(8, np.float32), None), (np.array(36, np.int64), None)])
# 0-d self: one element, index 0
run_case("median_scalar", order_op("aten::median.dim_values", [], [], dim=0, keepdim=False),
         [(np.array(-2.5, np.float32), None)], [(np.array(-2.5, np.float32), None), (np.array(0, np.int64), None)])
# cummax of [1,3,2,3,nan,5,nan]: a tie moves to the later 3 (pos 3), a NaN takes it and keeps it, a later NaN
# takes it again
run_case("cummax_row", order_op("aten::cummax.out", [7], [7], dim=0),
         [(np.array([1, 3, 2, 3, np.nan, 5, np.nan], np.float32), None)],
         [(np.array([1, 3, 3, 3, np.nan, np.nan, np.nan], np.float32), None),
          (np.array([0, 1, 1, 3, 4, 4, 6], np.int64), None)])
# int8 cummin down the columns of [[2,1],[2,3],[0,1]]: col 0 -> 2@0, 2@1, 0@2; col 1 -> 1@0, 1@0, 1@2
run_case("cummin_int8_dim0", order_op("aten::cummin.out", [3, 2], [3, 2], st=I8, dim=0),
         [(np.array([[2, 1], [2, 3], [0, 1]], np.int8), None)],
         [(np.array([[2, 1], [2, 1], [0, 1]], np.int8), None), (np.array([[0, 0], [1, 0], [2, 2]], np.int64), None)])

fail_case("median_dim", order_op("aten::median.dim_values", [2, 3], [2], dim=2, keepdim=False),
          INVALID_ARGUMENT, "dim out of range")
fail_case("mode_scalar_dim", order_op("aten::mode.values", [], [], dim=1, keepdim=False),
          INVALID_ARGUMENT, "dim out of range")
fail_case("median_empty_row", order_op("aten::median.dim_values", [2, 0], [2], dim=1, keepdim=False),
          INVALID_ARGUMENT, "no elements")
fail_case("nanmedian_values_sizes", order_op("aten::nanmedian.dim_values", [2, 3], [2, 1], dim=1, keepdim=False),
          INVALID_ARGUMENT, "values' sizes do not match")
fail_case("mode_indices_sizes", order_op("aten::mode.values", [2, 3], [2, 1], [2], dim=1, keepdim=True),
          INVALID_ARGUMENT, "indices' sizes do not match")
fail_case("median_values_dtype", order_op("aten::median.dim_values", [2, 3], [2], val_st=I8, dim=1, keepdim=False),
          NOT_SUPPORTED, "both be float32 or both int8")
fail_case("mode_indices_int32", order_op("aten::mode.values", [4], [], idx_st=ScalarType.INT, dim=0, keepdim=False),
          INVALID_ARGUMENT, "indices must be int64")
fail_case("mode_indices_order", order_op("aten::mode.values", [1, 2, 2, 2], [1, 1, 2, 2], dim=1, keepdim=True,
                                         idx_order=CHANNELS_LAST), INVALID_ARGUMENT, "dim order differs")
fail_case("cummax_dim", order_op("aten::cummax.out", [2, 3], [2, 3], dim=-3), INVALID_ARGUMENT, "dim out of range")
fail_case("cummin_scalar_dim", order_op("aten::cummin.out", [], [], dim=1), INVALID_ARGUMENT, "dim out of range")
fail_case("cummax_values_sizes", order_op("aten::cummax.out", [2, 3], [3, 2], [2, 3], dim=1), INVALID_ARGUMENT,
          "values' sizes do not match")
fail_case("cummin_indices_sizes", order_op("aten::cummin.out", [2, 3], [2, 3], [2, 2], dim=1), INVALID_ARGUMENT,
          "indices' sizes do not match")
fail_case("cummax_self_int64", order_op("aten::cummax.out", [2, 3], [2, 3], st=I64, dim=1), NOT_SUPPORTED,
          "both be float32 or both int8")
fail_case("cummax_indices_int32", order_op("aten::cummax.out", [4], [4], idx_st=ScalarType.INT, dim=0),
          INVALID_ARGUMENT, "indices must be int64")
fail_case("cummin_indices_order", order_op("aten::cummin.out", [1, 2, 2, 2], [1, 2, 2, 2], dim=1,
                                           idx_order=CHANNELS_LAST), INVALID_ARGUMENT, "dim order differs")
for key, extra in (("aten::median.dim_values", dict(keepdim=False)), ("aten::cummax.out", {})):
    b = order_op(key, [4], [] if extra else [4], dim=0, **extra)
    b.instructions[-1].instr_args.args[-1] = b.instructions[-1].instr_args.args[-2]   # a plain return slot
    fail_case(f"{key.split('::')[1].split('.')[0]}_return_slot", b, INVALID_ARGUMENT, "expected TensorList")


# -- bool: comparisons, logical ops, where, casts of a bool -------------------------

B8 = ScalarType.BOOL


def bool_op(key, tensors, out, **numbers):
    """One call of `key`: tensors maps argument names to (dtype, sizes,
    dim order or None), in input order; out is (dtype, sizes, dim order)."""
    b = ProgramBuilder()
    ins = {name: b.tensor(st, sizes, order) for name, (st, sizes, order) in tensors.items()}
    y = b.tensor(*out)
    b.call(key, **ins, **numbers, out=y)
    b.set_io(list(ins.values()), [y])
    return b


T, F_ = True, False
# int8 [[1,-2,5],[0,7,-128]] against the row [1,0,5] broadcast down: gt and eq
for kind, want in (("gt", [[F_, F_, F_], [F_, T, F_]]), ("eq", [[T, F_, T], [F_, F_, F_]])):
    run_case(f"{kind}_tensor_int8_broadcast",
             bool_op(f"aten::{kind}.Tensor_out", {"self": (I8, [2, 3], None), "other": (I8, [3], None)},
                     (B8, [2, 3], None)),
             [(np.array([[1, -2, 5], [0, 7, -128]], np.int8), None), (np.array([1, 0, 5], np.int8), None)],
             [(np.array(want, np.bool_), None)])
# float32 0.3f > 0.30000001: the number rounds to float32 first (0.3f itself), so not greater;
# a NaN is greater than nothing and unequal to everything
run_case("gt_scalar_float_rounds", bool_op("aten::gt.Scalar_out", {"self": (F32, [3], None)}, (B8, [3], None),
                                           other=0.30000001),
         [(np.array([0.3, np.nan, 0.5], np.float32), None)], [(np.array([F_, F_, T], np.bool_), None)])
run_case("ne_scalar_float_nan", bool_op("aten::ne.Scalar_out", {"self": (F32, [3], None)}, (B8, [3], None),
                                        other=0.5),
         [(np.array([0.5, np.nan, 1.0], np.float32), None)], [(np.array([F_, T, T], np.bool_), None)])
# int8 against 3.5, exactly: -128, 0, 3 below, 4 above; and le 3 (an integral number)
run_case("lt_scalar_int8_fraction", bool_op("aten::lt.Scalar_out", {"self": (I8, [4], None)}, (B8, [4], None),
                                            other=3.5),
         [(np.array([-128, 0, 3, 4], np.int8), None)], [(np.array([T, T, T, F_], np.bool_), None)])
run_case("le_scalar_int8", bool_op("aten::le.Scalar_out", {"self": (I8, [4], None)}, (B8, [4], None), other=3),
         [(np.array([-128, 0, 3, 4], np.int8), None)], [(np.array([T, T, T, F_], np.bool_), None)])
# channels-last [1,2,1,2] int8 (logical [[0,4],[6,-1]] over C, W) ge the row [0, 5] over W
run_case("ge_tensor_channels_last",
         bool_op("aten::ge.Tensor_out", {"self": (I8, [1, 2, 1, 2], CHANNELS_LAST), "other": (I8, [2], None)},
                 (B8, [1, 2, 1, 2], CHANNELS_LAST)),
         [(np.array([0, 4, 6, -1], np.int8).reshape(1, 2, 1, 2), CHANNELS_LAST), (np.array([0, 5], np.int8), None)],
         [(np.array([T, F_, T, F_], np.bool_).reshape(1, 2, 1, 2), CHANNELS_LAST)])
# logical ops: bools [[T,F],[T,T]] with the row [T,F]; a float's truth value (NaN is true)
run_case("logical_and_broadcast",
         bool_op("aten::logical_and.out", {"self": (B8, [2, 2], None), "other": (B8, [2], None)}, (B8, [2, 2], None)),
         [(np.array([[T, F_], [T, T]]), None), (np.array([T, F_]), None)], [(np.array([[T, F_], [T, F_]]), None)])
run_case("logical_xor_float",
         bool_op("aten::logical_xor.out", {"self": (F32, [3], None), "other": (B8, [3], None)}, (B8, [3], None)),
         [(np.array([0.0, np.nan, -2.0], np.float32), None), (np.array([T, T, F_]), None)],
         [(np.array([T, F_, T]), None)])
run_case("logical_not", bool_op("aten::logical_not.out", {"self": (B8, [3], None)}, (B8, [3], None)),
         [(np.array([T, F_, T]), None)], [(np.array([F_, T, F_]), None)])
# where: condition [2,1] down the rows, self [2,3], other the row [7,8,9]
run_case("where_int8_broadcast",
         bool_op("aten::where.self_out", {"condition": (B8, [2, 1], None), "self": (I8, [2, 3], None),
                                          "other": (I8, [3], None)}, (I8, [2, 3], None)),
         [(np.array([[T], [F_]]), None), (np.array([[1, 2, 3], [4, 5, 6]], np.int8), None),
          (np.array([7, 8, 9], np.int8), None)],
         [(np.array([[1, 2, 3], [7, 8, 9]], np.int8), None)])
# a bool's bytes: any nonzero byte is true (2 -> 1)
run_case("to_int64_bool", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=B8, out_st=I64,
                                 non_blocking=False, dim_order=None),
         [(np.array([0, 1, 2], np.uint8), None)], [(np.array([0, 1, 1], np.int64), None)])
run_case("to_float_bool", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=B8, out_st=F32,
                                 non_blocking=False, dim_order=None),
         [(np.array([2, 0, 1], np.uint8), None)], [(np.array([1, 0, 1], np.float32), None)])

fail_case("gt_out_int8", bool_op("aten::gt.Tensor_out", {"self": (I8, [3], None), "other": (I8, [3], None)},
                                 (I8, [3], None)), NOT_SUPPORTED, "out must be bool")
fail_case("eq_mixed_dtypes", bool_op("aten::eq.Tensor_out", {"self": (I8, [3], None), "other": (F32, [3], None)},
                                     (B8, [3], None)), NOT_SUPPORTED, "share one dtype")
fail_case("lt_shapes", bool_op("aten::lt.Tensor_out", {"self": (F32, [2, 3], None), "other": (F32, [2], None)},
                               (B8, [2, 3], None)), INVALID_ARGUMENT, "does not broadcast")
fail_case("ge_rank", bool_op("aten::ge.Tensor_out", {"self": (F32, [1, 3], None), "other": (F32, [3], None)},
                             (B8, [3], None)), INVALID_ARGUMENT, "more dimensions than out")
fail_case("ne_double", bool_op("aten::ne.Scalar_out", {"self": (ScalarType.DOUBLE, [3], None)}, (B8, [3], None),
                               other=1.0), NOT_SUPPORTED, "dtype not supported")
fail_case("gt_scalar_sizes", bool_op("aten::gt.Scalar_out", {"self": (F32, [1], None)}, (B8, [3], None), other=1.0),
          INVALID_ARGUMENT, "self's sizes")
fail_case("logical_or_out_float", bool_op("aten::logical_or.out", {"self": (B8, [3], None), "other": (B8, [3], None)},
                                          (F32, [3], None)), NOT_SUPPORTED, "out must be bool")
fail_case("logical_and_int64", bool_op("aten::logical_and.out", {"self": (I64, [3], None), "other": (B8, [3], None)},
                                       (B8, [3], None)), NOT_SUPPORTED, "dtype not supported")
fail_case("logical_not_sizes", bool_op("aten::logical_not.out", {"self": (B8, [1], None)}, (B8, [3], None)),
          INVALID_ARGUMENT, "self's sizes")
fail_case("where_condition_float",
          bool_op("aten::where.self_out", {"condition": (F32, [3], None), "self": (I8, [3], None),
                                           "other": (I8, [3], None)}, (I8, [3], None)),
          NOT_SUPPORTED, "condition must be bool")
fail_case("where_mixed_dtypes",
          bool_op("aten::where.self_out", {"condition": (B8, [3], None), "self": (I8, [3], None),
                                           "other": (F32, [3], None)}, (I8, [3], None)),
          NOT_SUPPORTED, "share one dtype")
fail_case("where_shapes",
          bool_op("aten::where.self_out", {"condition": (B8, [4], None), "self": (I8, [3], None),
                                           "other": (I8, [3], None)}, (I8, [3], None)),
          INVALID_ARGUMENT, "does not broadcast")
# the integer types convert into one another (to_int32_from_int64, to_int8_from_uint8); float64 into int32
# not: only integers become float64, and float64 only float32
fail_case("to_int32_int8", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=ScalarType.DOUBLE,
                                  out_st=ScalarType.INT, non_blocking=False, dim_order=None),
          NOT_SUPPORTED, "converts integers")


# -- masked_select: a 1-D bound-dynamic out whose size the kernel sets -----------------------

def masked_op(x, mask, out, dynamic=True):
    """x, mask: (dtype, sizes, dim order or None); out: (dtype, bound sizes)."""
    b = ProgramBuilder()
    xi, mi = b.tensor(*x), b.tensor(*mask)
    y = b.tensor(*out)
    if dynamic:
        b.values[y].val.shape_dynamism = 1          # DYNAMIC_BOUND
    b.call("aten::masked_select.out", self=xi, mask=mi, out=y)
    b.set_io([xi, mi], [y])
    return b


# int8 [[1,2,3],[4,5,6]] with the mask column [T, F] broadcast along the rows: the first row
run_case("masked_select_int8_broadcast", masked_op((I8, [2, 3], None), (B8, [2, 1], None), (I8, [6])),
         [(np.array([[1, 2, 3], [4, 5, 6]], np.int8), None), (np.array([[T], [F_]]), None)],
         [(np.array([1, 2, 3], np.int8), None)])
# self the row [-1, 7, -128] under a [2,3] mask (more elements than self): logical row-major order
run_case("masked_select_mask_wider", masked_op((I8, [3], None), (B8, [2, 3], None), (I8, [6])),
         [(np.array([-1, 7, -128], np.int8), None), (np.array([[F_, T, T], [T, F_, T]]), None)],
         [(np.array([7, -128, -1, -128], np.int8), None)])
# channels-last float32 [1,2,1,2]: logical [[0.5,1.5],[2.5,3.5]] over (C, W), stored 0.5, 2.5, 1.5, 3.5;
# the mask (identity order) picks logical elements 0, 2, 3 -> 0.5, 2.5, 3.5, in logical order
run_case("masked_select_float_channels_last",
         masked_op((F32, [1, 2, 1, 2], CHANNELS_LAST), (B8, [1, 2, 1, 2], None), (F32, [4])),
         [(np.array([0.5, 1.5, 2.5, 3.5], np.float32).reshape(1, 2, 1, 2), CHANNELS_LAST),
          (np.array([T, F_, T, T]).reshape(1, 2, 1, 2), None)],
         [(np.array([0.5, 2.5, 3.5], np.float32), None)])
# a bound above the broadcast numel is fine; a count of all of them fills 4 of its 7
run_case("masked_select_all_loose_bound", masked_op((F32, [2, 2], None), (B8, [2, 2], None), (F32, [7])),
         [(np.array([[1, 2], [3, 4]], np.float32), None), (np.array([[T, T], [T, T]]), None)],
         [(np.array([1, 2, 3, 4], np.float32), None)])
fail_case("masked_select_mask_float", masked_op((I8, [3], None), (F32, [3], None), (I8, [3])),
          NOT_SUPPORTED, "mask must be bool")
fail_case("masked_select_mask_uint8", masked_op((I8, [3], None), (ScalarType.BYTE, [3], None), (I8, [3])),
          NOT_SUPPORTED, "mask must be bool")
fail_case("masked_select_shapes", masked_op((I8, [2, 3], None), (B8, [2], None), (I8, [6])),
          INVALID_ARGUMENT, "do not broadcast")
fail_case("masked_select_bound_small", masked_op((I8, [2, 3], None), (B8, [2, 1], None), (I8, [5])),
          INVALID_PROGRAM, "bound is smaller")
fail_case("masked_select_out_static", masked_op((I8, [3], None), (B8, [3], None), (I8, [3]), dynamic=False),
          INVALID_PROGRAM, "bound-dynamic")
fail_case("masked_select_out_rank", masked_op((I8, [3], None), (B8, [3], None), (I8, [3, 1])),
          INVALID_PROGRAM, "1-D")
# a row out [1, bound] (torch's x[mask].unsqueeze(0)): the run sets [1, count], here [1, 4] of [1, 6]
run_case("masked_select_row_out", masked_op((I8, [2, 3], None), (B8, [2, 3], None), (I8, [1, 6])),
         [(np.array([[1, 2, 3], [4, 5, 6]], np.int8), None), (np.array([[T, F_, T], [F_, T, T]]), None)],
         [(np.array([[1, 3, 5, 6]], np.int8), None)])
# none selected: [1, 0]
run_case("masked_select_row_out_empty", masked_op((F32, [3], None), (B8, [3], None), (F32, [1, 3])),
         [(np.array([1, 2, 3], np.float32), None), (np.array([F_, F_, F_]), None)],
         [(np.zeros((1, 0), np.float32), None)])
# [1, 1, bound] and [1, 1, 1, bound] (torch's x[mask][None, None]): [1, 1, count], [1, 1, 1, count]
run_case("masked_select_row_out_rank_3", masked_op((I8, [2, 3], None), (B8, [2, 3], None), (I8, [1, 1, 6])),
         [(np.array([[1, 2, 3], [4, 5, 6]], np.int8), None), (np.array([[F_, F_, T], [T, F_, T]]), None)],
         [(np.array([[[3, 4, 6]]], np.int8), None)])
run_case("masked_select_row_out_rank_4", masked_op((F32, [3], None), (B8, [3], None), (F32, [1, 1, 1, 4])),
         [(np.array([1.5, -2, 3], np.float32), None), (np.array([F_, T, F_]), None)],
         [(np.array([[[[-2]]]], np.float32), None)])
fail_case("masked_select_out_rows_not_1", masked_op((I8, [2, 3], None), (B8, [2, 3], None), (I8, [2, 6])),
          INVALID_PROGRAM, "[1, ..., 1, bound]")
# every size but the last must be 1: a 2 in the middle or first, a 0 anywhere before it
fail_case("masked_select_out_middle_not_1", masked_op((I8, [2, 3], None), (B8, [2, 3], None), (I8, [1, 2, 6])),
          INVALID_PROGRAM, "[1, ..., 1, bound]")
fail_case("masked_select_out_first_not_1", masked_op((I8, [2, 3], None), (B8, [2, 3], None), (I8, [2, 1, 6])),
          INVALID_PROGRAM, "[1, ..., 1, bound]")
fail_case("masked_select_out_middle_empty", masked_op((I8, [2, 3], None), (B8, [2, 3], None), (I8, [1, 0, 6])),
          INVALID_PROGRAM, "[1, ..., 1, bound]")
fail_case("masked_select_out_row_empty", masked_op((I8, [2, 3], None), (B8, [2, 3], None), (I8, [0, 6])),
          INVALID_PROGRAM, "[1, ..., 1, bound]")
fail_case("masked_select_out_rank_3_bound_small", masked_op((I8, [2, 3], None), (B8, [2, 3], None),
                                                            (I8, [1, 1, 5])),
          INVALID_PROGRAM, "bound is smaller")
fail_case("masked_select_row_bound_small", masked_op((I8, [2, 3], None), (B8, [2, 3], None), (I8, [1, 5])),
          INVALID_PROGRAM, "bound is smaller")
fail_case("masked_select_out_dtype", masked_op((I8, [3], None), (B8, [3], None), (F32, [3])),
          NOT_SUPPORTED, "self's dtype")


# -- index.Tensor: one bool mask over self's leading dims keeps its rows ---------------------

def index_op(x, mask, out, dynamic=True, indices=None):
    """x, mask: (dtype, sizes, dim order or None); out: (dtype, bound sizes,
    dim order or None); indices: the index list's items (default [mask])."""
    b = ProgramBuilder()
    xi, mi = b.tensor(*x), b.tensor(*mask)
    y = b.tensor(*out)
    if dynamic:
        b.values[y].val.shape_dynamism = 1          # DYNAMIC_BOUND
    b.call("aten::index.Tensor_out", self=xi, indices=[mi] if indices is None else indices(mi), out=y)
    b.set_io([xi, mi], [y])
    return b


# int8 [3, 2] rows 0 and 2 of mask [T, F, T]: out [2, 2] of its [3, 2] bound
run_case("index_rows_int8", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [3, 2], None)),
         [(np.array([[1, -2], [3, 4], [-128, 127]], np.int8), None), (np.array([T, F_, T]), None)],
         [(np.array([[1, -2], [-128, 127]], np.int8), None)])
# float32 [2, 2, 3] under a [2, 2] mask: rows of 3 in row-major mask order; none set gives [0, 3]
run_case("index_rows_2d_mask", index_op((F32, [2, 2, 3], None), (B8, [2, 2], None), (F32, [4, 3], None)),
         [(np.arange(12, dtype=np.float32).reshape(2, 2, 3), None), (np.array([[F_, T], [T, F_]]), None)],
         [(np.array([[3, 4, 5], [6, 7, 8]], np.float32), None)])
run_case("index_rows_none", index_op((F32, [2, 3], None), (B8, [2], None), (F32, [2, 3], None)),
         [(np.ones((2, 3), np.float32), None), (np.array([F_, F_]), None)],
         [(np.zeros((0, 3), np.float32), None)])
fail_case("index_mask_int8", index_op((I8, [3, 2], None), (I8, [3], None), (I8, [3, 2], None)),
          NOT_SUPPORTED, "bool mask")
fail_case("index_two_indices", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [3, 2], None),
                                        indices=lambda m: [m, m]), NOT_SUPPORTED, "only one index")
fail_case("index_none_index", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [3, 2], None),
                                       indices=lambda m: [None]), NOT_SUPPORTED, "bool mask")
fail_case("index_mask_all_dims", index_op((I8, [3, 2], None), (B8, [3, 2], None), (I8, [6], None)),
          NOT_SUPPORTED, "leading dims")
fail_case("index_mask_shape", index_op((I8, [3, 2], None), (B8, [2], None), (I8, [3, 2], None)),
          INVALID_ARGUMENT, "leading dims")
fail_case("index_self_channels_last", index_op((I8, [1, 2, 2, 2], CHANNELS_LAST), (B8, [1], None),
                                               (I8, [1, 2, 2, 2], None)), NOT_SUPPORTED, "row-major")
fail_case("index_out_static", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [3, 2], None), dynamic=False),
          INVALID_PROGRAM, "bound-dynamic")
fail_case("index_out_rank", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [6], None)),
          INVALID_PROGRAM, "bound-dynamic")
fail_case("index_out_rows", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [3, 3], None)),
          INVALID_ARGUMENT, "kept dims")
fail_case("index_bound_small", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [2, 2], None)),
          INVALID_PROGRAM, "fewer rows")
fail_case("index_out_dtype", index_op((I8, [3, 2], None), (B8, [3], None), (F32, [3, 2], None)),
          INVALID_ARGUMENT, "self's dtype")
# a dim of 1 in front (x[mask].unsqueeze(0) of rows): out [1, bound, 2], the run sets [1, count, 2]
run_case("index_rows_lead_one", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [1, 3, 2], None)),
         [(np.array([[1, -2], [3, 4], [-128, 127]], np.int8), None), (np.array([F_, T, T]), None)],
         [(np.array([[[3, 4], [-128, 127]]], np.int8), None)])
run_case("index_rows_lead_one_none", index_op((F32, [2, 2, 3], None), (B8, [2, 2], None), (F32, [1, 4, 3], None)),
         [(np.ones((2, 2, 3), np.float32), None), (np.array([[F_, F_], [F_, F_]]), None)],
         [(np.zeros((1, 0, 3), np.float32), None)])
# hostile: the front dim not 1 (or 0), the bound short, rows not self's kept dims, two dims in front
fail_case("index_lead_not_1", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [2, 3, 2], None)),
          INVALID_PROGRAM, "one dim plus")
fail_case("index_lead_0", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [0, 3, 2], None)),
          INVALID_PROGRAM, "one dim plus")
fail_case("index_lead_bound_small", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [1, 2, 2], None)),
          INVALID_PROGRAM, "fewer rows")
fail_case("index_lead_rows", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [1, 3, 3], None)),
          INVALID_ARGUMENT, "kept dims")
fail_case("index_two_leads", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [1, 1, 3, 2], None)),
          INVALID_PROGRAM, "one dim plus")
# None indices before the mask (x[:, m], x[:, :, m]: unique(dim=2) of [1, 4, 8]): out [x's first dims, count, rest]
run_case("index_after_none", index_op((F32, [2, 3, 2], None), (B8, [3], None), (F32, [2, 3, 2], None),
                                      indices=lambda m: [None, m]),
         [(np.arange(12, dtype=np.float32).reshape(2, 3, 2), None), (np.array([T, F_, T]), None)],
         [(np.arange(12, dtype=np.float32).reshape(2, 3, 2)[:, [0, 2]], None)])
run_case("index_after_none_last_dim", index_op((I8, [1, 2, 3], None), (B8, [3], None), (I8, [1, 2, 3], None),
                                               indices=lambda m: [None, None, m]),
         [(np.array([[[1, -2, 3], [-128, 127, 0]]], np.int8), None), (np.array([F_, T, T]), None)],
         [(np.array([[[-2, 3], [127, 0]]], np.int8), None)])
run_case("index_after_none_empty", index_op((F32, [2, 3, 2], None), (B8, [3], None), (F32, [2, 3, 2], None),
                                            indices=lambda m: [None, m]),
         [(np.ones((2, 3, 2), np.float32), None), (np.array([F_, F_, F_]), None)],
         [(np.zeros((2, 0, 2), np.float32), None)])
# hostile: a None after the mask, too many indices, the mask not the dims after the Nones, out's first dims not self's
fail_case("index_none_after_mask", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [3, 2], None),
                                            indices=lambda m: [m, None]), NOT_SUPPORTED, "bool mask")
fail_case("index_too_many_nones", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [3, 2], None),
                                           indices=lambda m: [None, None, m]), NOT_SUPPORTED, "only one index")
fail_case("index_after_none_mask_shape", index_op((I8, [3, 2], None), (B8, [3], None), (I8, [3, 2], None),
                                                  indices=lambda m: [None, m]), INVALID_ARGUMENT, "leading dims")
fail_case("index_after_none_out_first", index_op((I8, [2, 3, 2], None), (B8, [3], None), (I8, [3, 3, 2], None),
                                                 indices=lambda m: [None, m]), INVALID_ARGUMENT, "first dims")
fail_case("index_after_none_bound_small", index_op((I8, [2, 3, 2], None), (B8, [3], None), (I8, [2, 2, 2], None),
                                                   indices=lambda m: [None, m]), INVALID_PROGRAM, "fewer rows")



def view_dtype_op(x_shape, out_shape, st=F32, out_st=I32, order=None, out_order=None):
    """ptec::view_dtype.out: x's bytes as out's dtype (torch's Tensor.view(dtype))."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape, order)
    y = b.tensor(out_st, out_shape, out_order)
    b.call("ptec::view_dtype.out", self=x, out=y)
    b.set_io([x], [y])
    return b


# float32 bits of NaN (with a payload), +-inf, -0.0, a denormal, 1.0 and -2.5, as torch's view gives them
VIEW_BITS = np.array([[0x7FC00001, 0x7F800000, 0xFF800000, 0x80000000], [0x00000001, 0x3F800000, 0xC0200000,
                                                                      0x7F7FFFFF]], np.uint32)
VIEW_F32 = VIEW_BITS.view(np.float32)
run_case("view_dtype_f32_int32", view_dtype_op([2, 4], [2, 4]), [(VIEW_F32, None)],
         [(VIEW_BITS.view(np.int32), None)])
run_case("view_dtype_int32_f32", view_dtype_op([2, 4], [2, 4], st=I32, out_st=F32), [(VIEW_BITS.view(np.int32), None)],
         [(VIEW_F32, None)])
run_case("view_dtype_f32_uint8", view_dtype_op([2, 4], [2, 16], out_st=ScalarType.BYTE), [(VIEW_F32, None)],
         [(VIEW_F32.view(np.uint8), None)])
run_case("view_dtype_f32_int16_3d", view_dtype_op([2, 1, 4], [2, 1, 8], out_st=ScalarType.SHORT),
         [(VIEW_F32.reshape(2, 1, 4), None)], [(VIEW_F32.view(np.int16).reshape(2, 1, 8), None)])
run_case("view_dtype_f32_int64", view_dtype_op([2, 4], [2, 2], out_st=I64), [(VIEW_F32, None)],
         [(VIEW_F32.view(np.int64), None)])
run_case("view_dtype_int8_f32", view_dtype_op([1, 8], [1, 2], st=I8, out_st=F32),
         [(VIEW_F32[1:, :2].view(np.int8), None)], [(VIEW_F32[1:, :2], None)])
run_case("view_dtype_0d", view_dtype_op([], [], st=I32, out_st=F32), [(np.array(0x3F800000, np.int32), None)],
         [(np.array(1.0, np.float32), None)])
run_case("view_dtype_empty", view_dtype_op([0, 4], [0, 16], out_st=ScalarType.BYTE),
         [(np.zeros((0, 4), np.float32), None)], [(np.zeros((0, 16), np.uint8), None)])
fail_case("view_dtype_bool", view_dtype_op([2], [8], out_st=ScalarType.BOOL), NOT_SUPPORTED, "1, 2, 4 or 8 bytes")
fail_case("view_dtype_half", view_dtype_op([2], [4], st=ScalarType.HALF, out_st=I8), NOT_SUPPORTED,
          "1, 2, 4 or 8 bytes")
fail_case("view_dtype_channels_last", view_dtype_op([1, 2, 2, 2], [1, 2, 2, 2], order=CHANNELS_LAST), NOT_SUPPORTED,
          "contiguous")
fail_case("view_dtype_rank", view_dtype_op([2, 4], [8]), INVALID_ARGUMENT, "self's rank")
fail_case("view_dtype_0d_size", view_dtype_op([], [4], out_st=ScalarType.BYTE), INVALID_ARGUMENT, "self's rank")
fail_case("view_dtype_0d_narrow", view_dtype_op([], [], out_st=ScalarType.SHORT), INVALID_ARGUMENT,
          "element size")
fail_case("view_dtype_leading", view_dtype_op([2, 4], [3, 4]), INVALID_ARGUMENT, "leading sizes")
fail_case("view_dtype_last_same", view_dtype_op([2, 4], [2, 5]), INVALID_ARGUMENT, "scaled by the element sizes")
fail_case("view_dtype_last_smaller", view_dtype_op([2, 4], [2, 4], out_st=ScalarType.BYTE), INVALID_ARGUMENT,
          "scaled by the element sizes")
fail_case("view_dtype_last_not_multiple", view_dtype_op([2, 3], [2, 1], out_st=I64), INVALID_ARGUMENT,
          "multiple of the element size ratio")
fail_case("view_dtype_last_larger", view_dtype_op([2, 4], [2, 1], out_st=I64), INVALID_ARGUMENT,
          "scaled by the element sizes")


def histc_op(x_shape, bins, lo, hi, out_shape=None, st=F32, out_st=F32):
    """aten::histc.out: torch.histc of x in bins over [lo, hi] (x's own range when lo == hi)."""
    b = ProgramBuilder()
    x = b.tensor(st, x_shape)
    y = b.tensor(out_st, [bins] if out_shape is None else out_shape)
    b.call("aten::histc.out", self=x, bins=bins, min=lo, max=hi, out=y)
    b.set_io([x], [y])
    return b


# own range [-1, 3] in 4 bins of width 1: -1 in bin 0; 0, 0.5 in 1; 1, 1.5 in 2; 2, 2.999 and 3 (the
# maximum) in the last (torch: [1, 2, 2, 3])
HISTC_IN = np.array([[-1, 0, 0.5, 3], [2.999, 1, 2, 1.5]], np.float32)
run_case("histc_own_range", histc_op([2, 4], 4, 0.0, 0.0), [(HISTC_IN, None)],
         [(np.array([1, 2, 2, 3], np.float32), None)])
# [0, 2] given: -1 and 3 dropped, a NaN in bin 0 (torch 1.13's), 2 in the last bin
run_case("histc_given_range", histc_op([5], 2, 0.0, 2.0), [(np.array([-1, 3, np.nan, 2, 0.5], np.float32), None)],
         [(np.array([2, 1], np.float32), None)])
# one value: [v - 1, v + 1], the middle bin
run_case("histc_one_value", histc_op([3], 4, 0.0, 0.0), [(np.full(3, 0.75, np.float32), None)],
         [(np.array([0, 0, 3, 0], np.float32), None)])
run_case("histc_empty", histc_op([0], 3, 0.0, 0.0), [(np.zeros(0, np.float32), None)],
         [(np.zeros(3, np.float32), None)])
exec_fail_case("histc_own_range_nan", histc_op([3], 4, 0.0, 0.0), [(np.array([1, np.nan, 2], np.float32), None)],
               INVALID_ARGUMENT, "not finite")
exec_fail_case("histc_own_range_inf", histc_op([3], 4, 0.0, 0.0), [(np.array([1, np.inf, 2], np.float32), None)],
               INVALID_ARGUMENT, "not finite")
fail_case("histc_int8", histc_op([3], 4, 0.0, 0.0, st=I8), NOT_SUPPORTED, "float32")
fail_case("histc_out_int64", histc_op([3], 4, 0.0, 0.0, out_st=I64), NOT_SUPPORTED, "float32")
fail_case("histc_zero_bins", histc_op([3], 0, 0.0, 0.0, out_shape=[0]), INVALID_ARGUMENT, "bins must be")
fail_case("histc_out_size", histc_op([3], 4, 0.0, 0.0, out_shape=[5]), INVALID_ARGUMENT, "out must be [bins]")
fail_case("histc_out_rank", histc_op([3], 4, 0.0, 0.0, out_shape=[1, 4]), INVALID_ARGUMENT, "out must be [bins]")
fail_case("histc_min_above_max", histc_op([3], 4, 2.0, 1.0), INVALID_ARGUMENT, "min must be below max")
fail_case("histc_equal_in_float32", histc_op([3], 4, 1.0, 1.00000001), INVALID_ARGUMENT, "min must be below max")
fail_case("histc_width_overflows", histc_op([3], 4, -3e38, 3e38), INVALID_ARGUMENT, "min must be below max")
fail_case("histc_infinite_min", histc_op([3], 4, float("-inf"), 1.0), INVALID_ARGUMENT, "finite")

# -- ptec::roi_align.out (op_roi_align.c): torchvision's roi_align / ps_roi_align forward ----------------

def roi_op(x_shape, k, out_shape, scale=1.0, ph=1, pw=1, sampling=1, aligned=False, ps=False, order=None,
           st=F32, cols=5):
    b = ProgramBuilder()
    x, r = b.tensor(st, x_shape, order), b.tensor(F32, [k, cols])
    y = b.tensor(st, out_shape, order)
    b.call("ptec::roi_align.out", input=x, rois=r, spatial_scale=scale, pooled_height=ph, pooled_width=pw,
           sampling_ratio=sampling, aligned=aligned, position_sensitive=ps, out=y)
    b.set_io([x, r], [y])
    return b


# by hand: [[1, 2], [3, 4]]; box (0, 0, 1, 1) into one bin with one sample at (0.5, 0.5): 2.5; box
# (0, 0, 2, 2) adaptive (grid ceil(2 / 1) = 2): samples at 0.5 and 1.5 per axis, 1.5 past the last
# pixel moved onto it: (2.5 + 3 + 3.5 + 4) / 4 = 3.25; a box beyond the map (y > H): its samples empty, 0
ROI_X = np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2)
run_case("roi_align_by_hand", roi_op([1, 1, 2, 2], 3, [3, 1, 1, 1], sampling=-1),
         [(ROI_X, None), (np.array([[0, 0, 0, 1, 1], [0, 0, 0, 2, 2], [0, 0, 5, 1, 7]], np.float32), None)],
         [(np.array([2.5, 3.25, 0], np.float32).reshape(3, 1, 1, 1), None)])
# a zero-size aligned box, adaptive: an empty grid; roi_align divides by max(0, 1) (0), ps_roi_align by 0 (NaN),
# as torchvision 0.14 does
run_case("roi_align_empty_grid", roi_op([1, 1, 2, 2], 1, [1, 1, 1, 1], sampling=-1, aligned=True),
         [(ROI_X, None), (np.array([[0, 1, 1, 1, 1]], np.float32), None)], [(np.zeros((1, 1, 1, 1), np.float32), None)])
run_case("ps_roi_align_empty_grid", roi_op([1, 4, 2, 2], 1, [1, 1, 2, 2], ph=2, pw=2, sampling=0, aligned=True,
                                           ps=True),
         [(np.tile(ROI_X, (1, 4, 1, 1)), None), (np.array([[0, 1, 1, 1, 1]], np.float32), None)],
         [(np.full((1, 1, 2, 2), np.nan, np.float32), None)])
run_case("roi_align_boxes_of_image_0", roi_op([1, 1, 2, 2], 1, [1, 1, 1, 1], cols=4),
         [(ROI_X, None), (np.array([[0, 0, 1, 1]], np.float32), None)],
         [(np.array([2.5], np.float32).reshape(1, 1, 1, 1), None)])


def _roi_reference_case(name, n, c, ph, pw, sampling, aligned, ps, seed):
    """C against the numpy reference (bit-equal to torchvision) on a channels-last map, two images."""
    from ptec.reference.roi_align import roi_align
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, 5, 6)).astype(np.float32)
    xy = rng.uniform(-3, 10, (4, 2)).astype(np.float32)
    rois = np.concatenate([rng.integers(0, n, (4, 1)).astype(np.float32), xy,
                           xy + rng.uniform(0.1, 9, (4, 2)).astype(np.float32)], 1)
    want = roi_align(x, rois, 0.75, ph, pw, sampling, aligned, ps)
    run_case(name, roi_op([n, c, 5, 6], 4, list(want.shape), 0.75, ph, pw, sampling, aligned, ps, CHANNELS_LAST),
             [(x, CHANNELS_LAST), (rois, None)], [(want, CHANNELS_LAST)])


_roi_reference_case("roi_align_adaptive_nhwc", 2, 3, 2, 3, 0, True, False, 1)
_roi_reference_case("roi_align_ratio2_nhwc", 2, 2, 3, 2, 2, False, False, 2)
_roi_reference_case("ps_roi_align_adaptive_nhwc", 2, 6, 2, 3, -1, True, True, 3)
fail_case("roi_align_rois_k3", roi_op([1, 1, 2, 2], 2, [2, 1, 1, 1], cols=3), INVALID_ARGUMENT,
          "rois must be [K, 5] or [K, 4]")
fail_case("roi_align_out_lies", roi_op([1, 2, 2, 2], 2, [2, 1, 1, 1]), INVALID_ARGUMENT, "out must be [K, C, PH, PW]")
fail_case("ps_roi_align_channels", roi_op([1, 3, 2, 2], 1, [1, 1, 1, 2], pw=2, aligned=True, ps=True),
          INVALID_ARGUMENT, "input channels must be a multiple")
fail_case("roi_align_int8", roi_op([1, 1, 2, 2], 1, [1, 1, 1, 1], st=I8), INVALID_ARGUMENT,
          "input and out must be 4-D float")
exec_fail_case("roi_align_batch_index_outside", roi_op([1, 1, 2, 2], 1, [1, 1, 1, 1]),
               [(ROI_X, None), (np.array([[1, 0, 0, 1, 1]], np.float32), None)], INVALID_ARGUMENT,
               "batch index is outside")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    lines = []
    for case in CASES:
        kind, name, program = case[:3]
        write_program(program, os.path.join(out_dir, name + ".pte"))
        if kind == "run":
            ins, outs = case[3], case[4]
            for i, data in enumerate(ins):
                with open(os.path.join(out_dir, f"{name}.in{i}.bin"), "wb") as f:
                    f.write(data)
            for i, data in enumerate(outs):
                with open(os.path.join(out_dir, f"{name}.out{i}.bin"), "wb") as f:
                    f.write(data)
                # the logical sizes the output must report (int32 each): a
                # bound-dynamic out's are the run's
                with open(os.path.join(out_dir, f"{name}.out{i}.sizes"), "wb") as f:
                    f.write(np.asarray(case[5][i], np.int32).tobytes())
            lines.append(f"run {name} {len(ins)} {len(outs)}")
        elif kind == "execfail":
            for i, data in enumerate(case[3]):
                with open(os.path.join(out_dir, f"{name}.in{i}.bin"), "wb") as f:
                    f.write(data)
            lines.append(f"execfail {name} {len(case[3])} {case[4]:#04x} {case[5]}")
        else:
            lines.append(f"fail {name} {case[3]:#04x} {case[4]}")
    with open(os.path.join(out_dir, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases to {out_dir}")


if __name__ == "__main__":
    main()
