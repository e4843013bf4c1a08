"""Upstream ExecuTorch's per-operator dim-order and dtype rules, and the
check that every program ptec writes keeps them (issue 18).

ptec promises that its .pte files run on upstream's runtime with upstream's
kernels. Upstream's kernels check some argument layouts and refuse the call
(InvalidArgument) when they do not hold, and index some tensors as if they
were contiguous, computing wrong values for a channels-last layout whose
bytes differ from NCHW order. RULES holds those facts, one entry per
operator ptec emits; they were read from upstream's kernels (v1.5, commit
cff6f4dd: kernels/portable/cpu/op_*.cpp and util/*_util.cpp,
kernels/quantized/cpu, backends/cortex_m/ops). `check_program` walks every
kernel call of a program against them; `require_compatible` is what the
emit stage calls before any byte is written.

Dim-order classes (upstream's dim_order_util.h): "contiguous" is
0, 1, ..., n-1; "channels_last" is 0, 2, 3, 1 (rank 4 only here).
`tensors_have_same_dim_order` accepts a group of tensors when all are
contiguous or all are channels-last, whatever their ranks, so a rank-1
constant next to a channels-last activation is refused.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from ..ops import OPERATORS, signature
from .schema import KernelCall, OptionalTensorList, Program, ScalarType, Tensor, TensorList

F32 = frozenset({ScalarType.FLOAT})
HALF_FLOATS = frozenset({ScalarType.HALF, ScalarType.BFLOAT16})
I8 = frozenset({ScalarType.CHAR})
I32 = frozenset({ScalarType.INT})
I64 = frozenset({ScalarType.LONG})
I16 = frozenset({ScalarType.SHORT})
BOOL = frozenset({ScalarType.BOOL})
U8 = frozenset({ScalarType.BYTE})
F64 = frozenset({ScalarType.DOUBLE})

CHANNELS_LAST_4D = (0, 2, 3, 1)


@dataclass(frozen=True)
class Rule:
    """What one upstream kernel demands of its tensor arguments (by schema
    name; a Tensor[] argument counts each of its tensors)."""
    source: str                                  # where upstream states it
    same_dim_order: Tuple[str, ...] = ()         # tensors_have_same_dim_order(...)
    contiguous: Tuple[str, ...] = ()             # tensor_is_default_dim_order(...)
    contiguous_or_channels_last: Tuple[str, ...] = ()
    channels_last: Tuple[str, ...] = ()          # cortex_m is_channels_last_tensor(...)
    same_dtype: Tuple[str, ...] = ()
    dtypes: Tuple[Tuple[str, FrozenSet[int]], ...] = ()
    # indexed as contiguous whatever the dim order: a channels-last layout
    # whose bytes differ from NCHW order is computed wrongly (accepted, not refused)
    indexed_as_contiguous: Tuple[str, ...] = ()
    # broadcasting walks `out` linearly while reading inputs by their strides:
    # when shapes differ, a channels-last `out` whose bytes differ from NCHW
    # order is computed wrongly
    broadcast: Tuple[str, ...] = ()
    # the kernel takes every tensor as row-major over its logical sizes: an
    # operand of more than one element broadcast into out needs row-major
    # layouts (a single element broadcasts right in any layout)
    row_major_broadcast: Tuple[str, ...] = ()
    dim_order_argument: bool = False             # _clone_dim_order's dim_order argument
    upstream_library: str = "portable"           # where upstream's kernel lives


def _binary(op: str) -> Rule:
    return Rule(f"kernels/portable/cpu/op_{op}.cpp",
                same_dim_order=("self", "other", "out"),
                broadcast=("self", "other", "out"))


def _unary(op: str, file: Optional[str] = None) -> Rule:
    return Rule(file or f"kernels/portable/cpu/op_{op}.cpp", same_dim_order=("self", "out"))


_POOL_CONTIGUOUS = dict(same_dim_order=("self", "out"), contiguous=("self",),
                        same_dtype=("self", "out"))


def _cortex_m(op: str, int8: Sequence[str], **extra) -> Rule:
    dtypes = tuple((name, I8) for name in int8) + tuple(extra.pop("dtypes", ()))
    return Rule(f"backends/cortex_m/ops/op_{op}.cpp", dtypes=dtypes,
                upstream_library="cortex_m", **extra)


RULES: Dict[str, Rule] = {
    "aten::add.out": _binary("add"),
    "aten::sub.out": _binary("sub"),
    "aten::mul.out": _binary("mul"),
    "aten::div.out": _binary("div"),
    # float32 functions of two tensors (pattern/bitwise_op and
    # util/elementwise_util: one dim-order class, broadcast like add)
    "aten::pow.Tensor_Tensor_out": Rule("kernels/portable/cpu/op_pow.cpp", same_dim_order=("self", "exponent", "out"),
                                        broadcast=("self", "exponent", "out")),
    "aten::atan2.out": _binary("atan2"),
    # fmod, remainder and floor_divide take integer tensors too (real dtypes:
    # ptec's int32 / int64 and float32 are among them); an integer division
    # by zero is InvalidArgument upstream as in ptec
    "aten::fmod.Tensor_out": _binary("fmod"),
    "aten::remainder.Tensor_out": _binary("remainder"),
    "aten::floor_divide.out": _binary("floor_divide"),
    # pattern/bitwise_op.h: integer (and bool) tensors, one dim-order class, broadcast
    **{f"aten::bitwise_{op}.Tensor_out": Rule(f"kernels/portable/cpu/op_bitwise_{op}.cpp (pattern/bitwise_op.h)",
                                              same_dim_order=("self", "other", "out"),
                                              broadcast=("self", "other", "out")) for op in ("and", "or", "xor")},
    # the shifts: upstream's newer kernels (op_bitwise_left_shift.cpp / right_shift.cpp, after the
    # v1.5 tree the rest was read from: a program with one needs an upstream runtime that has them),
    # same pattern; upstream shifts with C's operators, ptec fails the run on an amount outside [0, width)
    **{f"aten::bitwise_{op}_shift.Tensor_out": Rule(f"kernels/portable/cpu/op_bitwise_{op}_shift.cpp",
                                                    same_dim_order=("self", "other", "out"),
                                                    broadcast=("self", "other", "out")) for op in ("left", "right")},
    # upstream's portable library has no gcd or lcm kernel (torch's schemas; op_gcd.c)
    **{f"aten::{op}.out": Rule("none: ptec only (src/kernels/portable/op_gcd.c)",
                               same_dim_order=("self", "other", "out"), broadcast=("self", "other", "out"),
                               upstream_library="none (ptec only)") for op in ("gcd", "lcm")},
    # reductions of int32 / int64 tensors (ptec's op_int_reduce.c): upstream's op_sum.cpp,
    # op_amax.cpp / op_amin.cpp, op_cumsum.cpp, op_prod.cpp take every real dtype, self in the default dim
    # order and out in self's
    **{f"aten::{key}": Rule(f"kernels/portable/cpu/op_{key.split('.')[0]}.cpp", same_dim_order=("self", "out"),
                            contiguous=("self",)) for key in ("sum.IntList_out", "amax.out", "amin.out",
                                                              "cumsum.out", "prod.int_out", "prod.out")},
    # upstream's portable library has no hypot or copysign kernel
    "aten::hypot.out": Rule("none: ptec only (src/kernels/portable/op_float_binary_math.c)",
                            same_dim_order=("self", "other", "out"), broadcast=("self", "other", "out"),
                            upstream_library="none (ptec only)"),
    "aten::copysign.out": Rule("none: ptec only (src/kernels/portable/op_float_binary_math.c)",
                               same_dim_order=("self", "other", "out"), broadcast=("self", "other", "out"),
                               upstream_library="none (ptec only)"),
    # nor igamma / igammac / special_zeta (capture_binary_tables' two independent operands)
    **{f"aten::{op}.out": Rule("none: ptec only (src/kernels/portable/op_special_gamma.c)",
                               same_dim_order=("self", "other", "out"), broadcast=("self", "other", "out"),
                               upstream_library="none (ptec only)") for op in ("igamma", "igammac", "special_zeta")},
    # nor nextafter / frexp (capture_float_bits: bit-level functions of fp32 values)
    "aten::nextafter.out": Rule("none: ptec only (src/kernels/portable/op_float_bits.c)",
                                same_dim_order=("self", "other", "out"), broadcast=("self", "other", "out"),
                                upstream_library="none (ptec only)"),
    "aten::frexp.Tensor_out": Rule("none: ptec only (src/kernels/portable/op_float_bits.c)",
                                   dtypes=(("self", F32), ("mantissa", F32), ("exponent", frozenset({ScalarType.INT}))),
                                   same_dim_order=("mantissa", "exponent"), upstream_library="none (ptec only)"),
    # the element-wise extremes (op_minimum_maximum.c): upstream's minimum / maximum broadcast like add;
    # upstream's portable library has no fmin or fmax kernel
    "aten::minimum.out": _binary("minimum"),
    "aten::maximum.out": _binary("maximum"),
    **{f"aten::{op}.out": Rule("none: ptec only (src/kernels/portable/op_minimum_maximum.c)",
                               same_dim_order=("self", "other", "out"), broadcast=("self", "other", "out"),
                               upstream_library="none (ptec only)") for op in ("fmin", "fmax")},
    "aten::relu.out": _unary("relu"),
    "aten::sigmoid.out": _unary("sigmoid"),
    "aten::tanh.out": _unary("tanh", "kernels/portable/cpu/pattern/"
                                     "unary_ufunc_realhbbf16_to_floathbf16.cpp"),
    "aten::clamp.out": _unary("clamp"),
    # float32 math of one tensor (src/kernels/portable/op_float_unary_math.c): upstream's op_<name>.cpp
    **{f"aten::{op}.out": _unary(op) for op in (
        "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos",
        "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "abs", "neg", "floor", "ceil", "round", "trunc",
        "reciprocal", "sign")},
    "aten::hardtanh.out": Rule("kernels/portable/cpu/op_hardtanh.cpp",
                               same_dim_order=("self", "out"), same_dtype=("self", "out")),
    "aten::convolution.out": Rule(
        "kernels/portable/cpu/util/kernel_ops_util.cpp (check_convolution_args)",
        contiguous_or_channels_last=("input", "weight", "out"),
        same_dtype=("input", "weight", "out")),
    # upstream has no portable linear; its optimized library's kernel
    # (kernels/optimized/cpu/op_linear.cpp) checks no dim order
    "aten::linear.out": Rule("kernels/optimized/cpu/op_linear.cpp",
                             same_dtype=("input", "weight", "out"),
                             upstream_library="optimized"),
    # matmul_ops_util.cpp check_bmm_args: self and mat2 rank 3 of out's dtype, equal batches, self's
    # columns mat2's rows; then one dim order for the three and self in the default one
    "aten::bmm.out": Rule("kernels/portable/cpu/op_bmm.cpp (check_bmm_args)", same_dim_order=("self", "mat2", "out"),
                          contiguous=("self",), same_dtype=("self", "mat2", "out")),
    "aten::_softmax.out": Rule("kernels/portable/cpu/op_softmax.cpp (apply_over_dim)",
                               same_dim_order=("self", "out"),
                               indexed_as_contiguous=("self", "out")),
    "aten::_log_softmax.out": Rule("kernels/portable/cpu/op_log_softmax.cpp (apply_over_dim)",
                                   same_dim_order=("self", "out"),
                                   indexed_as_contiguous=("self", "out")),
    "aten::avg_pool2d.out": Rule("kernels/portable/cpu/op_avg_pool2d.cpp", **_POOL_CONTIGUOUS),
    "aten::_adaptive_avg_pool2d.out": Rule("kernels/portable/cpu/op__adaptive_avg_pool2d.cpp",
                                           **_POOL_CONTIGUOUS),
    "aten::max_pool2d_with_indices.out": Rule(
        "kernels/portable/cpu/util/kernel_ops_util.cpp (check_max_pool2d_with_indices_args)",
        contiguous_or_channels_last=("self", "out"), same_dtype=("self", "out"),
        dtypes=(("indices", I64),)),
    "aten::mean.out": Rule("kernels/portable/cpu/op_mean.cpp", same_dim_order=("self", "out"),
                           contiguous=("self",)),
    # reduce_util.cpp check_argmin_argmax_args: out int64, self any real
    # dtype (int8 included), one dim order; the reduction indexes self as
    # contiguous
    "aten::argmax.out": Rule("kernels/portable/cpu/op_argmax.cpp", same_dim_order=("self", "out"),
                             contiguous=("self",), dtypes=(("out", I64),)),
    "aten::argmin.out": Rule("kernels/portable/cpu/op_argmin.cpp", same_dim_order=("self", "out"),
                             contiguous=("self",), dtypes=(("out", I64),)),
    # check_embedding_args: weight 2-D of any dtype copied by rows into out
    # of its dtype, indices int64 or int32
    "aten::embedding.out": Rule("kernels/portable/cpu/op_embedding.cpp", same_dtype=("weight", "out"),
                                contiguous=("weight", "indices", "out"),
                                dtypes=(("indices", frozenset({ScalarType.LONG, ScalarType.INT})),)),
    # check_topk_args: values of self's dtype, indices int64; perform_topk
    # steps every tensor by self's contiguous strides
    "aten::topk.values": Rule("kernels/portable/cpu/op_topk.cpp", contiguous=("self", "values", "indices"),
                              same_dtype=("self", "values"), dtypes=(("indices", I64),)),
    # upstream's portable library (v1.5) has no sort kernel
    "aten::sort.values": Rule("none: ptec only (src/kernels/portable/op_sort.c)",
                              contiguous=("self", "values", "indices"), same_dtype=("self", "values"),
                              dtypes=(("indices", I64),), upstream_library="none (ptec only)"),
    # nor median / nanmedian / mode by dim, nor cummax / cummin
    **{op: Rule(f"none: ptec only (src/kernels/portable/{src})", contiguous=("self", "values", "indices"),
                same_dtype=("self", "values"), dtypes=(("indices", I64),), upstream_library="none (ptec only)")
       for op, src in (("aten::median.dim_values", "op_median_mode.c"), ("aten::nanmedian.dim_values", "op_median_mode.c"),
                       ("aten::mode.values", "op_median_mode.c"), ("aten::cummax.out", "op_cumulative_extreme.c"),
                       ("aten::cummin.out", "op_cumulative_extreme.c"))},
    # index_util.cpp check_gather_args: out of self's dtype, index int64 of
    # self's rank; the kernel walks self and index as contiguous
    "aten::gather.out": Rule("kernels/portable/cpu/op_gather.cpp", same_dtype=("self", "out"),
                             contiguous=("self", "index", "out"), dtypes=(("index", I64),)),
    "aten::_native_batch_norm_legit_no_training.out": Rule(
        "kernels/portable/cpu/op_native_batch_norm.cpp",
        contiguous=("input",), same_dim_order=("input", "out0", "out1", "out2"),
        same_dtype=("input", "weight", "bias", "running_mean", "running_var", "out0")),
    "aten::native_group_norm.out": Rule(
        "kernels/portable/cpu/op_native_group_norm.cpp (check_group_norm_args; out1 and out2 resized "
        "to [N, group])",
        contiguous=("input",), same_dim_order=("input", "out0"),
        same_dtype=("input", "weight", "bias", "out0", "out1", "out2")),
    "aten::native_layer_norm.out": Rule(
        "kernels/portable/cpu/util/normalization_ops_util.cpp (check_layer_norm_args; out1 and out2 "
        "resized to the input's sizes with the normalized dims 1)",
        contiguous=("input",), same_dim_order=("input", "out0"),
        same_dtype=("input", "weight", "bias", "out0", "out1", "out2")),
    "aten::upsample_nearest2d.vec_out": Rule(
        "kernels/portable/cpu/util/upsample_util.cpp (check_upsample_2d_common_args)",
        contiguous=("input", "out"), same_dtype=("input", "out")),
    "aten::upsample_bilinear2d.vec_out": Rule(
        "kernels/portable/cpu/util/upsample_util.cpp (check_upsample_bilinear2d_args)",
        contiguous=("input", "out"), same_dtype=("input", "out")),
    # upstream's portable library has no bicubic kernel (kernels/portable/cpu
    # holds op_upsample_bilinear2d.cpp and op_upsample_nearest2d.cpp only)
    "aten::upsample_bicubic2d.vec_out": Rule(
        "none: ptec only (src/kernels/portable/op_upsample_bicubic2d.c)",
        contiguous=("input", "out"), same_dtype=("input", "out"), dtypes=(("input", F32), ("out", F32)),
        upstream_library="none (ptec only)"),
    # read from upstream's main branch, not from the v1.5 sources above (a
    # runtime older than the kernel lacks it): its
    # check_grid_sampler_2d_args_and_resize_out wants an NCHW input; ptec
    # gives input, grid and out contiguous
    "aten::grid_sampler_2d.out": Rule(
        "kernels/portable/cpu/op_grid_sampler_2d.cpp (util/grid_sampler_2d_util.cpp: "
        "check_grid_sampler_2d_args_and_resize_out)",
        contiguous=("input", "grid", "out"), same_dtype=("input", "grid", "out")),
    # upstream's portable library has a 2-D grid sampler only (kernels/portable/cpu
    # holds op_grid_sampler_2d.cpp, no op_grid_sampler_3d.cpp)
    "aten::grid_sampler_3d.out": Rule(
        "none: ptec only (src/kernels/portable/op_grid_sampler_3d.c)",
        contiguous=("input", "grid", "out"), same_dtype=("input", "grid", "out"),
        dtypes=(("input", F32), ("out", F32)), upstream_library="none (ptec only)"),
    "aten::pixel_shuffle.out": Rule("kernels/portable/cpu/op_pixel_shuffle.cpp (check_pixel_shuffle_args)",
                                    contiguous=("self", "out"), same_dtype=("self", "out")),
    "aten::pixel_unshuffle.out": Rule("kernels/portable/cpu/op_pixel_unshuffle.cpp (check_pixel_unshuffle_args)",
                                      contiguous=("self", "out"), same_dtype=("self", "out")),
    "aten::reflection_pad1d.out": Rule("kernels/portable/cpu/op_reflection_pad1d.cpp (check_padding_args)",
                           contiguous=("self", "out"), same_dtype=("self", "out")),
    "aten::reflection_pad2d.out": Rule("kernels/portable/cpu/op_reflection_pad2d.cpp (check_padding_args)",
                           contiguous=("self", "out"), same_dtype=("self", "out")),
    "aten::replication_pad1d.out": Rule("kernels/portable/cpu/op_replication_pad1d.cpp (check_padding_args)",
                           contiguous=("self", "out"), same_dtype=("self", "out")),
    "aten::replication_pad2d.out": Rule("kernels/portable/cpu/op_replication_pad2d.cpp (check_padding_args)",
                           contiguous=("self", "out"), same_dtype=("self", "out")),
    "aten::view_copy.out": Rule("kernels/portable/cpu/op_view_copy.cpp",
                                same_dim_order=("self", "out"), contiguous=("self",),
                                same_dtype=("self", "out")),
    "aten::permute_copy.out": Rule("kernels/portable/cpu/op_permute_copy.cpp "
                                   "(coordinateToIndexWithTrailingDimsMemo)",
                                   same_dim_order=("self", "out"), same_dtype=("self", "out"),
                                   indexed_as_contiguous=("self", "out")),
    "aten::cat.out": Rule("kernels/portable/cpu/op_cat.cpp (getLeadingDims/getTrailingDims)",
                          same_dim_order=("tensors", "out"),
                          indexed_as_contiguous=("tensors", "out")),
    "aten::slice_copy.Tensor_out": Rule("kernels/portable/cpu/op_slice_copy.cpp",
                                        same_dim_order=("self", "out"),
                                        same_dtype=("self", "out"),
                                        indexed_as_contiguous=("self", "out")),
    "aten::squeeze_copy.dims_out": Rule("kernels/portable/cpu/op_squeeze_copy.cpp",
                                        same_dim_order=("self", "out"), contiguous=("self",)),
    "aten::unsqueeze_copy.out": Rule("kernels/portable/cpu/util/copy_ops_util.cpp "
                                     "(check_unsqueeze_copy_args)",
                                     same_dtype=("self", "out"),
                                     indexed_as_contiguous=("self", "out")),
    "dim_order_ops::_clone_dim_order.out": Rule(
        "kernels/portable/cpu/op__clone_dim_order.cpp (check__to_dim_order_copy_args)",
        same_dtype=("self", "out"), dim_order_argument=True),
    # the dtype conversion itself; ptec's kernel converts into float32,
    # float32 into int64 / int32 (ids computed in the program) or half /
    # bfloat16 (an output), a bool into int32/int64, integers into one
    # another (int16, uint8, int8 too) and into float64, float64 into
    # float32 (capture_int_casts), float16 / bfloat16 into float32 (a half
    # input: capture_input_dtypes); upstream's switches over every real type
    # (ET_SWITCH_REALHBBF16_TYPES) for self and out alike
    "dim_order_ops::_to_dim_order_copy.out": Rule(
        "kernels/portable/cpu/op__to_dim_order_copy.cpp (check__to_dim_order_copy_args)",
        same_dim_order=("self", "out"), dtypes=(("out", F32 | I32 | I64 | HALF_FLOATS | I16 | I8 | U8 | F64),),
        dim_order_argument=True),
    # pattern/comparison_op.h and pattern/logical_op.cpp: one dim order for
    # every tensor, inputs broadcast into out as the binary ops do; ptec's
    # calls give a bool out
    **{f"aten::{op}.Tensor_out": Rule(f"kernels/portable/cpu/op_{op}.cpp (comparison_tensor_out)",
                                      same_dim_order=("self", "other", "out"),
                                      broadcast=("self", "other", "out"), dtypes=(("out", BOOL),))
       for op in ("gt", "ge", "lt", "le", "eq", "ne")},
    **{f"aten::{op}.Scalar_out": Rule(f"kernels/portable/cpu/op_{op}.cpp (comparison_scalar_out)",
                                      same_dim_order=("self", "out"), dtypes=(("out", BOOL),))
       for op in ("gt", "ge", "lt", "le", "eq", "ne")},
    **{f"aten::logical_{op}.out": Rule(f"kernels/portable/cpu/op_logical_{op}.cpp (logical_tensor_out)",
                                       same_dim_order=("self", "other", "out"),
                                       broadcast=("self", "other", "out"))
       for op in ("and", "or", "xor")},
    "aten::logical_not.out": Rule("kernels/portable/cpu/op_logical_not.cpp", same_dim_order=("self", "out")),
    # op_where.cpp: condition Bool or Byte, one dim order, all three broadcast into out
    "aten::where.self_out": Rule("kernels/portable/cpu/op_where.cpp",
                                 same_dim_order=("condition", "self", "other", "out"),
                                 broadcast=("condition", "self", "other", "out"),
                                 dtypes=(("condition", BOOL),)),
    # op_masked_select.cpp: a bool mask, out of self's dtype, one dim order for
    # all three; an operand of broadcast shape is read linearly
    "aten::masked_select.out": Rule("kernels/portable/cpu/op_masked_select.cpp",
                                    same_dim_order=("self", "mask", "out"), same_dtype=("self", "out"),
                                    dtypes=(("mask", BOOL),), indexed_as_contiguous=("self", "mask")),
    # op_index.cpp: indices broadcast into the result's leading dims (a bool
    # mask counts its set entries), self and out of one dtype; ptec emits one
    # bool mask over self's leading dims, self and out row-major
    "aten::index.Tensor_out": Rule("kernels/portable/cpu/op_index.cpp", same_dtype=("self", "out"),
                                   contiguous=("self", "indices", "out"),
                                   indexed_as_contiguous=("self",)),
    "quantized_decomposed::quantize_per_tensor.out": Rule(
        "kernels/quantized/cpu/op_quantize.cpp", dtypes=(("input", F32),),
        upstream_library="quantized"),
    "quantized_decomposed::dequantize_per_tensor.out": Rule(
        "kernels/quantized/cpu/op_dequantize.cpp", dtypes=(("out", F32),),
        upstream_library="quantized"),
    # cortex_m: element-wise kernels walk buffers (dim order not validated
    # yet upstream: "TBD (#16032)"), so in and out must share it to be right
    "cortex_m::quantize_per_tensor.out": _cortex_m(
        "quantize_per_tensor", ("out",), dtypes=(("input", F32),),
        same_dim_order=("input", "out")),
    "cortex_m::dequantize_per_tensor.out": _cortex_m(
        "dequantize_per_tensor", ("input",), dtypes=(("out", F32),),
        same_dim_order=("input", "out")),
    "cortex_m::quantized_add.out": _cortex_m("quantized_add", ("self", "other", "out")),
    "cortex_m::quantized_mul.out": _cortex_m("quantized_mul", ("self", "other", "out")),
    "cortex_m::quantized_div.out": _cortex_m("quantized_div", ("self", "other", "out")),
    "cortex_m::quantized_activation.out": _cortex_m("quantized_activation",
                                                    ("input", "lut", "out"),
                                                    same_dim_order=("input", "out")),
    # arm_minimum_s8/arm_maximum_s8 get the logical sizes as row-major dims
    "cortex_m::minimum.out": _cortex_m("minimum", ("self", "other", "out"),
                                       row_major_broadcast=("self", "other", "out")),
    "cortex_m::maximum.out": _cortex_m("maximum", ("self", "other", "out"),
                                       row_major_broadcast=("self", "other", "out")),
    "cortex_m::quantized_linear.out": _cortex_m("quantized_linear", ("input", "weights", "out"),
                                                dtypes=(("bias", I32), ("kernel_sum", I32))),
    "cortex_m::quantized_conv2d.out": _cortex_m(
        "quantized_conv2d", ("input", "weight", "out"), dtypes=(("bias", I32),),
        channels_last=("input", "out")),
    "cortex_m::quantized_depthwise_conv2d.out": _cortex_m(
        "quantized_depthwise_conv2d", ("input", "weight", "out"), dtypes=(("bias", I32),),
        channels_last=("input", "out")),
    "cortex_m::quantized_transpose_conv2d.out": _cortex_m(
        "quantized_transpose_conv2d", ("input", "weight", "out"), dtypes=(("bias", I32),),
        channels_last=("input", "out")),
    "cortex_m::quantized_batch_matmul.out": _cortex_m("quantized_batch_matmul",
                                                      ("lhs", "rhs_transposed", "out")),
    "cortex_m::quantized_avg_pool2d.out": _cortex_m(
        "quantized_avg_pool2d", ("input", "out"), channels_last=("input", "out")),
    "cortex_m::quantized_max_pool2d.out": _cortex_m(
        "quantized_max_pool2d", ("input", "out"), channels_last=("input", "out")),
    "cortex_m::softmax.out": _cortex_m("softmax", ("input", "out")),
    "cortex_m::transpose.out": _cortex_m("transpose", ("input", "out")),
    "cortex_m::pad.out": _cortex_m("pad", ("input", "out")),
    # ptec's own operators (packed 4-bit weights, issue 15): upstream has
    # no kernel for them, so a program using them runs on ptec only; the
    # layouts are those of the cortex_m operators they extend
    "ptec::quantized_linear_w4.out": Rule(
        "none: ptec only (src/kernels/cortex_m/op_quantized_linear_w4.c)",
        dtypes=(("input", I8), ("weights", I8), ("out", I8), ("bias", I32)),
        upstream_library="none (ptec only)"),
    "ptec::quantized_conv2d_w4.out": Rule(
        "none: ptec only (src/kernels/cortex_m/op_quantized_conv2d_w4.c)",
        dtypes=(("input", I8), ("weight", I8), ("out", I8), ("bias", I32)),
        channels_last=("input", "out"), upstream_library="none (ptec only)"),
    "ptec::quantized_depthwise_conv2d_w4.out": Rule(
        "none: ptec only (src/kernels/cortex_m/op_quantized_depthwise_conv2d_w4.c)",
        dtypes=(("input", I8), ("weight", I8), ("out", I8), ("bias", I32)),
        channels_last=("input", "out"), upstream_library="none (ptec only)"),
    "ptec::quantized_expand_depthwise.out": Rule(
        "none: ptec only (src/kernels/cortex_m/op_quantized_expand_depthwise.c)",
        dtypes=(("input", I8), ("weight", I8), ("expand_weight", I8), ("out", I8), ("bias", I32),
                ("expand_bias", I32)),
        channels_last=("input", "out"), upstream_library="none (ptec only)"),
    "ptec::quantized_layer_norm.out": Rule(
        "none: ptec only (src/kernels/cortex_m/op_quantized_layer_norm.c)",
        dtypes=(("input", I8), ("out", I8), ("bias", I32)), contiguous=("input", "out"),
        upstream_library="none (ptec only)"),
    "ptec::quantized_softmax_masked.out": Rule(
        "none: ptec only (src/kernels/cortex_m/op_quantized_softmax_masked.c)",
        dtypes=(("input", I8), ("out", I8), ("mask", frozenset({ScalarType.BOOL}))),
        contiguous=("input", "mask", "out"), upstream_library="none (ptec only)"),
    "ptec::quantized_lstm.out": Rule(
        "none: ptec only (src/kernels/cortex_m/op_quantized_lstm.c)",
        dtypes=(("input", I8), ("input_weights", I8), ("hidden_weights", I8), ("input_effective_bias", I32),
                ("hidden_effective_bias", I32), ("out", I8)), contiguous=("input", "out"),
        upstream_library="none (ptec only)"),
    "ptec::quantized_lstm_a16.out": Rule(
        "none: ptec only (src/kernels/cortex_m/op_quantized_lstm_a16.c)",
        dtypes=(("input", I16), ("input_weights", I8), ("hidden_weights", I8), ("input_effective_bias", I64),
                ("hidden_effective_bias", I64), ("out", I16)), contiguous=("input", "out"),
        upstream_library="none (ptec only)"),
    "ptec::quantized_svdf.out": Rule(
        "none: ptec only (src/kernels/cortex_m/op_quantized_svdf.c)",
        dtypes=(("input", I8), ("weights_feature", I8), ("weights_time", I8), ("activation_state", I8),
                ("out", I8), ("bias", I32)),
        contiguous=("input", "weights_feature", "weights_time", "activation_state", "out"),
        upstream_library="none (ptec only)"),
    # a max pool's int64 indices over listed windows and the unpool by them
    # (issue 15): any dim order, so no layout rule
    "ptec::window_max.out": Rule(
        "none: ptec only (src/kernels/portable/op_window_max.c)", dtypes=(("windows", I32),),
        upstream_library="none (ptec only)"),
    "ptec::max_unpool.out": Rule(
        "none: ptec only (src/kernels/portable/op_max_unpool.c)", same_dtype=("self", "out"),
        dtypes=(("indices", I64),), upstream_library="none (ptec only)"),
    # singular values and symmetric eigenvalues of matrices of any size (issue 15: svdvals, matrix_norm
    # 2 / -2 / 'nuc', eigvalsh)
    "ptec::linalg_svdvals.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_svdvals.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_eigvalsh.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_eigvalsh.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_svd.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_svd.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_eigvals.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_eigvals.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_eig_vectors.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_eig_vectors.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_qr.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_qr.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_lu.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_lu.c)",
        dtypes=(("self", F32), ("out", frozenset({ScalarType.FLOAT, ScalarType.INT}))),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_ldl_factor.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_ldl_factor.c)",
        dtypes=(("self", F32), ("out", frozenset({ScalarType.FLOAT, ScalarType.INT}))),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_eigh_vectors.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_eigh_vectors.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    # torchvision's roi_align / ps_roi_align forward, any sampling_ratio (capture_torchvision)
    "ptec::roi_align.out": Rule(
        "none: ptec only (src/kernels/portable/op_roi_align.c)",
        dtypes=(("input", F32), ("rois", F32), ("out", F32)), upstream_library="none (ptec only)"),
    # det, slogdet, logdet, inv and solve of any n by LU with partial pivoting (issue 15)
    "ptec::linalg_det.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_det.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_solve.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_solve.c)",
        dtypes=(("self", F32), ("rhs", F32), ("out", F32)), contiguous=("self", "rhs", "out"),
        upstream_library="none (ptec only)"),
    # cholesky of any n, solve_triangular / triangular_solve / cholesky_solve (issue 15)
    "ptec::linalg_cholesky.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_cholesky.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "aten::histc.out": Rule(
        "none: ptec only (src/kernels/portable/op_histc.c)", dtypes=(("self", F32), ("out", F32)),
        contiguous=("out",), upstream_library="none (ptec only)"),
    # torchvision.ops.nms's keep/suppress recurrence over a sorted order (capture_torchvision._nms)
    "ptec::nms.out": Rule(
        "none: ptec only (src/kernels/portable/op_nms.c)",
        dtypes=(("boxes", F32), ("order", frozenset({ScalarType.LONG})), ("out", F32)),
        contiguous=("boxes", "order", "out"), upstream_library="none (ptec only)"),
    # torchvision.ops.batched_nms past 1,000 boxes: per-class nms, then torch's unstable sort (capture_nms)
    "ptec::batched_nms.out": Rule(
        "none: ptec only (src/kernels/portable/op_batched_nms.c)",
        dtypes=(("boxes", F32), ("scores", F32), ("order", frozenset({ScalarType.LONG})),
                ("idxs", frozenset({ScalarType.LONG, ScalarType.INT, ScalarType.FLOAT})),
                ("out", frozenset({ScalarType.LONG}))),
        contiguous=("boxes", "scores", "order", "idxs", "out"), upstream_library="none (ptec only)"),
    # the same two with a threshold the program computed (a float32 tensor of one element)
    "ptec::nms.Tensor_out": Rule(
        "none: ptec only (src/kernels/portable/op_nms.c)",
        dtypes=(("boxes", F32), ("order", frozenset({ScalarType.LONG})), ("iou_threshold", F32), ("out", F32)),
        contiguous=("boxes", "order", "out"), upstream_library="none (ptec only)"),
    "ptec::batched_nms.Tensor_out": Rule(
        "none: ptec only (src/kernels/portable/op_batched_nms.c)",
        dtypes=(("boxes", F32), ("scores", F32), ("order", frozenset({ScalarType.LONG})),
                ("idxs", frozenset({ScalarType.LONG, ScalarType.INT, ScalarType.FLOAT})), ("iou_threshold", F32),
                ("out", frozenset({ScalarType.LONG}))),
        contiguous=("boxes", "scores", "order", "idxs", "out"), upstream_library="none (ptec only)"),
    "ptec::view_dtype.out": Rule(
        "none: ptec only (src/kernels/portable/op_view_dtype.c)",
        dtypes=(("self", frozenset({ScalarType.FLOAT, ScalarType.LONG, ScalarType.INT, ScalarType.SHORT,
                                    ScalarType.CHAR, ScalarType.BYTE})),
                ("out", frozenset({ScalarType.FLOAT, ScalarType.LONG, ScalarType.INT, ScalarType.SHORT,
                                   ScalarType.CHAR, ScalarType.BYTE}))),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_cholesky_info.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_cholesky_info.c)",
        dtypes=(("self", F32), ("out", frozenset({ScalarType.INT}))),
        contiguous=("self", "out"), upstream_library="none (ptec only)"),
    "ptec::linalg_triangular_solve.out": Rule(
        "none: ptec only (src/kernels/portable/op_linalg_triangular_solve.c)",
        dtypes=(("self", F32), ("rhs", F32), ("out", F32)), contiguous=("self", "rhs", "out"),
        upstream_library="none (ptec only)"),
    # several computed index tensors (x[i, j]) as one flat position, and
    # nn.EmbeddingBag's bags from run-time offsets (issue 15)
    "ptec::flat_index.out": Rule(
        "none: ptec only (src/kernels/portable/op_flat_index.c)", dtypes=(("indices", I64), ("out", I64)),
        contiguous=("indices", "out"), upstream_library="none (ptec only)"),
    "ptec::bag_positions.out": Rule(
        "none: ptec only (src/kernels/portable/op_bag_positions.c)", dtypes=(("offsets", I64), ("out", I64)),
        contiguous=("offsets", "out"), upstream_library="none (ptec only)"),
}


# --ptec-runtime-only (docs/aot.md): a cortex_m operator that ptec also
# runs under its own name (operators.json: the same kernel source) is called
# so when upstream's kernel must not see the program's arguments (an empty
# scratch it would write CMSIS-NN's buffer into); the layout rules stay the
# cortex_m operator's, and upstream has no such operator.
for _key, _op in OPERATORS.items():
    _twin = "cortex_m::" + _key[len("ptec::"):]
    if _key.startswith("ptec::") and _key not in RULES and _twin in RULES and \
            OPERATORS[_twin].source == _op.source:
        RULES[_key] = replace(RULES[_twin], source=f"none: ptec only ({_op.source})",
                              upstream_library="none (ptec only)")


class UpstreamRuleError(ValueError):
    """A program upstream's kernels would refuse or compute wrongly."""


def _is_contiguous(order: Sequence[int]) -> bool:
    return list(order) == list(range(len(order)))


def _is_channels_last(order: Sequence[int]) -> bool:
    return tuple(order) == CHANNELS_LAST_4D


def _cortex_m_channels_last(t: Tensor) -> bool:
    """cortex_m_ops_common.h is_channels_last_tensor: 4-D, and channels-last
    unless channels or both spatial dims are 1 (the layout is ambiguous)."""
    s = list(t.sizes or [])
    if len(s) != 4:
        return False
    return s[1] == 1 or (s[2] == 1 and s[3] == 1) or _is_channels_last(t.dim_order or b"")


def _bytes_as_contiguous(t: Tensor) -> bool:
    """The tensor's bytes are in row-major order of its sizes: its dim order
    is contiguous, or only size-1 dims are out of place."""
    order = list(t.dim_order or b"")
    sizes = list(t.sizes or [])
    moved = [d for d in order if sizes[d] > 1]
    return moved == sorted(moved)


def _strip_leading_ones(sizes) -> List[int]:
    sizes = list(sizes)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    return sizes


def _order(t: Tensor) -> str:
    return "[" + ",".join(str(d) for d in (t.dim_order or b"")) + "]"


def _describe(name: str, t: Tensor) -> str:
    return f"{name} {list(t.sizes or [])} dim order {_order(t)}"


def _check_call(key: str, rule: Rule, named: Dict[str, List[Tensor]]) -> List[str]:
    bad: List[str] = []

    def tensors(names):
        return [(n, t) for n in names for t in named.get(n, [])]

    group = tensors(rule.same_dim_order)
    if len(group) > 1 and not (all(_is_contiguous(t.dim_order or b"") for _, t in group)
                               or all(_is_channels_last(t.dim_order or b"") for _, t in group)):
        bad.append("tensors_have_same_dim_order fails: "
                   + ", ".join(_describe(n, t) for n, t in group))
    for n, t in tensors(rule.contiguous):
        if not _is_contiguous(t.dim_order or b""):
            bad.append(f"{_describe(n, t)}: upstream wants the default (contiguous) dim order")
    for n, t in tensors(rule.contiguous_or_channels_last):
        order = t.dim_order or b""
        if not (_is_contiguous(order) or _is_channels_last(order)):
            bad.append(f"{_describe(n, t)}: upstream wants contiguous or channels-last")
    for n, t in tensors(rule.channels_last):
        if not _cortex_m_channels_last(t):
            bad.append(f"{_describe(n, t)}: upstream's cortex_m kernel wants 4-D channels-last")
    same = tensors(rule.same_dtype)
    if len({int(t.scalar_type) for _, t in same}) > 1:
        bad.append("dtypes differ: " + ", ".join(
            f"{n} {ScalarType(t.scalar_type).name}" for n, t in same))
    for n, allowed in rule.dtypes:
        for t in named.get(n, []):
            if int(t.scalar_type) not in allowed:
                bad.append(f"{n} is {ScalarType(t.scalar_type).name}, upstream wants "
                           + "/".join(ScalarType(a).name for a in sorted(allowed)))
    for n, t in tensors(rule.indexed_as_contiguous):
        if not _bytes_as_contiguous(t):
            bad.append(f"{_describe(n, t)}: upstream's kernel indexes it as contiguous "
                       "and computes wrong values for this layout")
    if rule.broadcast:
        ops = tensors(rule.broadcast)
        out_sizes = _strip_leading_ones(ops[-1][1].sizes or [])
        shapes_differ = any(_strip_leading_ones(t.sizes or []) != out_sizes for _, t in ops[:-1])
        if shapes_differ and not all(_bytes_as_contiguous(t) for _, t in ops):
            bad.append("broadcast over a layout that is not row-major ("
                       + ", ".join(_describe(n, t) for n, t in ops)
                       + "): upstream walks out linearly and computes wrong values")
    if rule.row_major_broadcast:
        ops = tensors(rule.row_major_broadcast)
        out_sizes = _strip_leading_ones(ops[-1][1].sizes or [])
        spread = any(_strip_leading_ones(t.sizes or []) != out_sizes and t.numel > 1
                     for _, t in ops[:-1])
        if spread and not all(_bytes_as_contiguous(t) for _, t in ops):
            bad.append("broadcast over a layout that is not row-major ("
                       + ", ".join(_describe(n, t) for n, t in ops)
                       + "): upstream's kernel takes the logical sizes as row-major dims")
    if rule.dim_order_argument:
        arg = named.get("__dim_order__")
        out = named.get("out", [None])[0]
        if arg is not None and out is not None:
            order = arg[0]
            if not (_is_contiguous(order) or _is_channels_last(order)):
                bad.append(f"dim_order argument {list(order)}: upstream wants contiguous "
                           "or channels-last")
            elif list(order) != list(out.dim_order or b""):
                bad.append(f"dim_order argument {list(order)} differs from out's "
                           f"{_order(out)}")
    return bad


def _arguments(key: str, call: KernelCall, values: list) -> Dict[str, list]:
    """Schema name -> the tensors it holds (a Tensor[] gives each)."""
    named: Dict[str, list] = {}
    args = list(call.args or [])
    for (name, kind), idx in zip(signature(key), args):
        if not 0 <= idx < len(values):
            continue
        v = values[idx].val
        if isinstance(v, Tensor):
            named[name] = [v]
        elif isinstance(v, (TensorList, OptionalTensorList)):     # None items (-1) skipped
            named[name] = [values[i].val for i in (v.items or [])
                           if 0 <= i < len(values) and isinstance(values[i].val, Tensor)]
        elif name == "dim_order" and hasattr(v, "items"):
            named["__dim_order__"] = [[values[i].val.int_val for i in (v.items or [])]]
    return named


def check_program(program: Program) -> List[str]:
    """Every breach of RULES in the program: "instruction i (op): why".
    Operators without a rule are not upstream's: the kernel check names them."""
    return [f"instruction {i} ({key}): {why}" for i, key, named in _kernel_calls(program)
            for why in _check_call(key, RULES[key], named)]


def _kernel_calls(program: Program):
    """(instruction index, operator key, named tensor arguments) of every
    kernel call to an operator RULES knows."""
    for plan in program.execution_plan or []:
        values = plan.values or []
        ops = plan.operators or []
        for chain in plan.chains or []:
            for i, ins in enumerate(chain.instructions or []):
                call = ins.instr_args
                if isinstance(call, KernelCall) and 0 <= call.op_index < len(ops):
                    op = ops[call.op_index]
                    key = f"{op.name}.{op.overload}" if op.overload else op.name
                    if key in RULES:
                        yield i, key, _arguments(key, call, values)


def upstream_needs(program: Program) -> List[str]:
    """The upstream kernel libraries the program's calls live in, and
    "CMSIS-NN MVE build" when a quantized_linear passes kernel_sum (which
    only CMSIS-NN's MVE path reads; docs/compatibility.md)."""
    needs = set()
    for _, key, named in _kernel_calls(program):
        needs.add(RULES[key].upstream_library)
        if key == "cortex_m::quantized_linear.out" and named.get("kernel_sum"):
            needs.add("CMSIS-NN MVE build")
    own = ptec_only_operators(program)
    if own:   # compile prints "upstream ExecuTorch needs: <this>"
        return ["kernels it does not have (" + ", ".join(own) + "): this program runs on ptec's "
                "runtime only"]
    return sorted(needs)


def _mask_rank(named) -> int:
    """The rank of index.Tensor_out's one bool mask (its last index, after
    any None), plus the None indices before it (the out rank's rule: out
    keeps those dims)."""
    indices = named.get("indices") or []
    if not indices or indices[-1] is None:
        return 0
    return len(indices[-1].sizes or []) - (len(indices) - 1)


def ptec_only_operators(program: Program) -> List[str]:
    """The `ptec::` operators the program calls (opt-in precision variants
    such as --w4) and the ATen operators whose rule names no upstream
    library (aten::upsample_bicubic2d.vec_out), which upstream ExecuTorch
    has no kernel for."""
    own = {op.key for plan in program.execution_plan or []
           for op in plan.operators or [] if op.name.startswith("ptec::")
           or (op.key in RULES and RULES[op.key].upstream_library.startswith("none"))}
    # ptec's masked_select also fills a [1, ..., 1, bound] out (x[m].unsqueeze(0)):
    # upstream's kernel resizes out to 1-D, which a tensor of rank 2 or more refuses
    if any(key == "aten::masked_select.out" and len(named["out"][0].sizes or []) >= 2
           for _, key, named in _kernel_calls(program)):
        own.add("aten::masked_select.out into a [1, bound] out")
    # and its index.Tensor_out an out [1, bound, ...] (rows' x[m].unsqueeze(0)): upstream's resizes it to [count, ...]
    if any(key == "aten::index.Tensor_out" and len(named["out"][0].sizes or []) == len(named["self"][0].sizes or []) + 2
           - _mask_rank(named) for _, key, named in _kernel_calls(program)):
        own.add("aten::index.Tensor_out into a [1, bound, ...] out")
    return sorted(own)


def require_compatible(program: Program) -> None:
    """Raise UpstreamRuleError (one line) when the program breaks a rule."""
    problems = check_program(program)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UpstreamRuleError("program would not run right on upstream ExecuTorch's kernels: "
                                + problems[0] + more)
