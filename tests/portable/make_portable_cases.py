#!/usr/bin/python3
"""Writes the programs of the portable kernels' C unit test
(test_portable_kernels.c) into OUTDIR, with a manifest cases.txt:

  run NAME INPUTS OUTPUTS   NAME.pte, NAME.in<i>.bin, NAME.out<i>.bin (raw bytes as stored)
  fail NAME STATUS TEXT     loading NAME.pte must fail with STATUS (hex) and a detail holding TEXT

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
                  [physical(a, o) for a, o in outputs]))


def fail_case(name, b, status, text):
    CASES.append(("fail", name, b.build(), status, text))


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

# -- bad arguments: each refused while the method loads --------------------------

fail_case("sigmoid_int8", one_op("aten::sigmoid.out", [4], [4], st=I8), NOT_SUPPORTED, "dtype must be float32")
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
          NOT_SUPPORTED, "self must be float32 or int8")
fail_case("argmax_dim", arg_op("aten::argmax.out", [2, 3], [2], dim=2, keepdim=False), INVALID_ARGUMENT,
          "dim out of range")
fail_case("argmin_sizes", arg_op("aten::argmin.out", [2, 3], [2], dim=1, keepdim=True), INVALID_ARGUMENT,
          "out's sizes do not match")
fail_case("argmax_empty", arg_op("aten::argmax.out", [2, 0], [2], dim=1, keepdim=False), INVALID_ARGUMENT,
          "over no elements")
fail_case("to_float_out_int8", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=I64, out_st=I8,
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
fail_case("to_int_from_int8", arg_op("dim_order_ops::_to_dim_order_copy.out", [3], [3], st=I8, out_st=I64,
                                     non_blocking=False, dim_order=None), NOT_SUPPORTED, "float32 into int64/int32")


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
fail_case("pow_int8", two_op(POW, [3], [3], [3], st=I8, out_st=I8, other="exponent"), NOT_SUPPORTED,
          "dtype must be float32")
fail_case("atan2_out_int64", two_op("aten::atan2.out", [3], [3], [3], out_st=I64), NOT_SUPPORTED,
          "dtype must be float32")
fail_case("hypot_broadcast", two_op("aten::hypot.out", [2], [3], [3]), INVALID_ARGUMENT, "does not broadcast")
fail_case("fmod_rank", two_op("aten::fmod.Tensor_out", [1, 3], [3], [3]), INVALID_ARGUMENT,
          "more dimensions than out")


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
            lines.append(f"run {name} {len(ins)} {len(outs)}")
        else:
            lines.append(f"fail {name} {case[3]:#04x} {case[4]}")
    with open(os.path.join(out_dir, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases to {out_dir}")


if __name__ == "__main__":
    main()
