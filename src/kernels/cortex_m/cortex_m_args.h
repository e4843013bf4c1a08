/* Argument decoding shared by the cortex_m operator wrappers: the checks
 * every op repeats (int8 activations in NHWC, 2-element int lists,
 * per-channel requantization tensors, zero-point ranges), each failing
 * through ptec_op_fail with a message that names the problem. */
#ifndef PTEC_CORTEX_M_ARGS_H
#define PTEC_CORTEX_M_ARGS_H

#include "nn/ptec_nn.h"
#include "ptec/kernel.h"

/* Argument i as a tensor of the given dtype. */
ptec_status ptec_cm_get_tensor_of(ptec_op *op, size_t i, ptec_dtype dtype, ptec_tensor **out);

/* The out tensor (argc - 2) of the given dtype. */
ptec_status ptec_cm_get_out_of(ptec_op *op, ptec_dtype dtype, ptec_tensor **out);

/* A 4-D tensor whose bytes are NHWC (channels-last by the §1.2 rule);
 * gives its physical dims. */
ptec_status ptec_cm_get_nhwc_dims(ptec_op *op, size_t i, const ptec_tensor *t, ptec_nn_dims *dims);

/* Whether two tensors have the same sizes and the same byte layout, so
 * that an element-wise op may walk both as flat arrays. */
bool ptec_cm_same_layout(const ptec_tensor *a, const ptec_tensor *b);

/* An int list of exactly `count` items (at most PTEC_MAX_RANK), each in
 * [lo, hi]; wrong_length and out_of_range are the failures' messages. */
ptec_status ptec_cm_get_int_list_of(ptec_op *op, size_t i, size_t count, int32_t lo, int32_t hi, int32_t *values,
                                    const char *wrong_length, const char *out_of_range);

/* An int list of exactly two items, each >= min_value. */
ptec_status ptec_cm_get_hw(ptec_op *op, size_t i, int32_t min_value, ptec_nn_hw *out);

/* An Int argument within [lo, hi]. */
ptec_status ptec_cm_get_int_in(ptec_op *op, size_t i, int32_t lo, int32_t hi, int32_t *out);

/* activation_min and activation_max: int8 values with min <= max. */
ptec_status ptec_cm_get_activation(ptec_op *op, size_t i_min, size_t i_max, ptec_nn_activation *out);

/* A requantization shift in [-31, 31]. */
ptec_status ptec_cm_get_shift(ptec_op *op, size_t i, int32_t *out);

/* A requantization: the multiplier at i_mult, its shift at i_mult + 1. */
ptec_status ptec_cm_get_requant(ptec_op *op, size_t i_mult, ptec_nn_quant *out);

/* Per-channel multiplier and shift tensors: constant, INT, `channels`
 * contiguous entries, every shift in [-31, 31]. */
ptec_status ptec_cm_check_per_channel(ptec_op *op, size_t i_mult, size_t i_shift, int32_t channels);

/* The same with every shift in [-31, 7], the 64-bit requantization's
 * range (int16 activations). */
ptec_status ptec_cm_check_per_channel_s64(ptec_op *op, size_t i_mult, size_t i_shift, int32_t channels);

/* An optional LONG (int64) bias of `channels` contiguous entries. */
ptec_status ptec_cm_check_bias_s64(ptec_op *op, size_t i, int32_t channels, bool *present);

/* activation_min and activation_max: int16 values with min <= max. */
ptec_status ptec_cm_get_activation_s16(ptec_op *op, size_t i_min, size_t i_max, ptec_nn_activation *out);

/* An optional INT bias of `channels` contiguous entries. */
ptec_status ptec_cm_check_bias(ptec_op *op, size_t i, int32_t channels, bool *present);

/* Argument i must be a tensor (a planned scratch placeholder); its bytes
 * are not used, the runtime's op->scratch is. */
ptec_status ptec_cm_check_scratch_arg(ptec_op *op, size_t i);

/* The window arithmetic of a conv/pool axis stays far inside int32:
 * (out - 1) * stride + (kernel - 1) * dilation + padding < 2^30. */
ptec_status ptec_cm_check_axis_span(ptec_op *op, int64_t out_size, int64_t stride, int64_t kernel,
                                    int64_t dilation, int64_t padding);

/* The dtype Int of quantize/dequantize_per_tensor: int8 (CHAR) or int16
 * (SHORT), anything else NotSupported. */
ptec_status ptec_cm_get_quantized_dtype(ptec_op *op, size_t i, int32_t *dtype);

/* scale, zero_point, quant_min, quant_max at i_scale..i_scale+3 of
 * quantize/dequantize_per_tensor, checked for an int8 or int16 dtype. */
ptec_status ptec_cm_get_quantize_params(ptec_op *op, size_t i_scale, int32_t dtype,
                                        ptec_nn_quantize_params *params);

/* The operands of an element-wise binary op (add, mul, div): self (0),
 * other (i_other) and out of one dtype, then the zero points of self (1),
 * other (i_other + 1) and out (i_out_zp), each within the dtype's range. */
typedef struct ptec_cm_binary_operands {
    ptec_tensor *self, *other, *out;
    int32_t self_zp, other_zp, out_zp;
} ptec_cm_binary_operands;

ptec_status ptec_cm_get_binary_operands(ptec_op *op, ptec_dtype dtype, size_t i_other, size_t i_out_zp,
                                        ptec_cm_binary_operands *operands);

/* quantize_per_tensor and dequantize_per_tensor: input (0), scale,
 * zero_point, quant_min, quant_max (1..4), dtype (5), out; the float32
 * side is the input of quantize (float_input) and the out of dequantize,
 * the other side has dtype; dequantize's zero point must lie in
 * quant_min..quant_max. */
typedef struct ptec_cm_quantize_state {
    ptec_nn_quantize_params params;
    uint32_t count;
    bool int16;
} ptec_cm_quantize_state;

ptec_status ptec_cm_prepare_quantize_common(ptec_op *op, bool float_input, ptec_cm_quantize_state *state);

/* How an element-wise binary op walks its inputs (add, mul): equal
 * shapes, or a [1,C,1,1] operand repeated over every pixel of an NHWC
 * one. swap is set when `other` is the larger operand. */
typedef struct ptec_cm_broadcast_plan {
    uint32_t count, small_count;
    bool swap;
} ptec_cm_broadcast_plan;

ptec_status ptec_cm_plan_channel_broadcast(ptec_op *op, const ptec_tensor *self, const ptec_tensor *other,
                                           const ptec_tensor *out, size_t i_other, ptec_cm_broadcast_plan *plan);

/* Four dims of a tensor of rank <= 4: its logical sizes right-aligned,
 * leading 1s; and the [n, h, w, c] sizes of a 4-D channels-last tensor,
 * the order its bytes are in. */
void ptec_cm_logical_dims4(const ptec_tensor *t, int32_t dims[4]);
void ptec_cm_nhwc_dims4(const ptec_tensor *t, int32_t dims[4]);

/* minimum/maximum: (self, other, out) int8 with NumPy broadcasting over
 * the right-aligned logical dims of contiguous tensors, or over the NHWC
 * dims of channels-last ones. */
typedef struct ptec_cm_min_max_state {
    int32_t a_dims[4], b_dims[4], out_dims[4];
} ptec_cm_min_max_state;

ptec_status ptec_cm_prepare_min_max(ptec_op *op, ptec_cm_min_max_state *state);

/* The common part of quantized_conv2d, _depthwise_conv2d and
 * _transpose_conv2d: input (0), weight (1), bias (2), stride and padding
 * (i_stride, i_stride + 1), dilation, then input_offset, output_offset,
 * multipliers, shifts, activation_min, activation_max and the scratch
 * tensors in a row from i_input_offset.
 *
 * With i_weight_sizes != 0 (ptec::quantized_conv2d_w4) the weight is
 * packed 4-bit: a 1-D int8 tensor of ceil(prod(weight_sizes) / 2) bytes,
 * its logical sizes the int list at i_weight_sizes, the bias right after. */
typedef struct ptec_cm_conv_args {
    size_t argc, i_stride, i_dilation, i_input_offset, scratch_args, i_weight_sizes;
} ptec_cm_conv_args;

/* The logical [rows, ...] sizes of a packed 4-bit weight (argument
 * i_weight, sizes at i_sizes): `count` ints, each >= 1, whose product
 * fits in int32, and a contiguous 1-D int8 tensor of ceil(product / 2)
 * bytes. */
ptec_status ptec_cm_get_packed_s4_weight(ptec_op *op, size_t i_weight, size_t i_sizes, size_t count,
                                         int32_t *sizes);

typedef struct ptec_cm_conv_state {
    ptec_nn_conv_params params;
    ptec_nn_dims input, filter, output;
    int32_t depth_multiplier;
    bool has_bias;
    bool in_place; /* ptec:: kernels: prepare asked for the scratch of running with out == input */
    /* The constant operands' data, for a run that reads them here and not
     * through its arguments (PTEC_PREPARED_ARGS): bias NULL when absent. */
    const int8_t *weight;
    const int32_t *bias;
    ptec_nn_per_channel_quant quant;
} ptec_cm_conv_state;

/* The arguments quantized_conv2d and _depthwise_conv2d read at prepare
 * only: weight (1), bias (2), multipliers, shifts and the scratch tensor
 * (i_multipliers to i_multipliers + 5, as ptec_cm_conv_args). */
#define PTEC_CM_CONV_PREPARED_ARGS(i_multipliers) \
    PTEC_PREPARED_ARGS(0x6u | (0x3u << (i_multipliers)) | (0x1u << ((i_multipliers) + 4)))

ptec_status ptec_cm_prepare_conv_common(ptec_op *op, const ptec_cm_conv_args *args, ptec_cm_conv_state *state);

int64_t ptec_cm_conv_output_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation);

/* Pooling: input (0) and out NHWC int8, kernel_size, stride and padding
 * at i_kernel..i_kernel + 2; checks the output size (PyTorch's formula,
 * with ceil_mode) and that no window lies entirely in the padding. */
typedef struct ptec_cm_pool_state {
    ptec_nn_pool_params params;
    ptec_nn_dims input, output;
} ptec_cm_pool_state;

int64_t ptec_cm_pool_output_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode);

ptec_status ptec_cm_prepare_pool_common(ptec_op *op, size_t i_kernel, bool ceil_mode, ptec_cm_pool_state *state);

/* The same for input and out of the given dtype (int16 for the a16 ops). */
ptec_status ptec_cm_prepare_pool_common_of(ptec_op *op, ptec_dtype dtype, size_t i_kernel, bool ceil_mode,
                                           ptec_cm_pool_state *state);

/* The common part of the a16 convolutions (int16 input and out, int8
 * weight, int64 bias at 2): stride and padding at i_stride, i_stride + 1,
 * dilation, then multipliers, shifts, activation_min, activation_max and
 * one scratch tensor in a row from i_multipliers. No offsets: int16
 * tensors are symmetric. */
typedef struct ptec_cm_conv_a16_args {
    size_t argc, i_stride, i_dilation, i_multipliers;
} ptec_cm_conv_a16_args;

typedef struct ptec_cm_conv_a16_state {
    ptec_nn_conv_s16_params params;
    ptec_nn_dims input, filter, output;
    int32_t depth_multiplier;
    bool has_bias;
} ptec_cm_conv_a16_state;

ptec_status ptec_cm_prepare_conv_a16_common(ptec_op *op, const ptec_cm_conv_a16_args *args,
                                            ptec_cm_conv_a16_state *state);

/* Tensor data for run(), as the math layer's types. */
static inline const int8_t *ptec_cm_in8(const ptec_op *op, size_t i)
{
    return (const int8_t *)ptec_op_tensor(op, i)->data;
}

static inline const int32_t *ptec_cm_in32(const ptec_op *op, size_t i)
{
    return (const int32_t *)ptec_op_tensor(op, i)->data;
}

/* NULL for a Null (absent optional) argument. */
static inline const int32_t *ptec_cm_optional_in32(const ptec_op *op, size_t i, bool present)
{
    return present ? (const int32_t *)ptec_op_tensor(op, i)->data : NULL;
}

static inline const int16_t *ptec_cm_in16(const ptec_op *op, size_t i)
{
    return (const int16_t *)ptec_op_tensor(op, i)->data;
}

static inline const int64_t *ptec_cm_optional_in64(const ptec_op *op, size_t i, bool present)
{
    return present ? (const int64_t *)ptec_op_tensor(op, i)->data : NULL;
}

static inline int16_t *ptec_cm_out16(const ptec_op *op)
{
    return (int16_t *)ptec_op_tensor(op, (size_t)op->argc - 2u)->data;
}

static inline int8_t *ptec_cm_out8(const ptec_op *op)
{
    return (int8_t *)ptec_op_tensor(op, (size_t)op->argc - 2u)->data;
}

/* add and mul: the math layer's (large, small) operands, which are self
 * and other in the order the broadcast plan chose. */
static inline void ptec_cm_plan_operands(const ptec_op *op, size_t i_self, size_t i_other,
                                         const ptec_cm_broadcast_plan *plan, const int8_t **large,
                                         const int8_t **small)
{
    const int8_t *self = ptec_cm_in8(op, i_self);
    const int8_t *other = ptec_cm_in8(op, i_other);
    *large = plan->swap ? other : self;
    *small = plan->swap ? self : other;
}

static inline ptec_nn_buffer ptec_cm_scratch(const ptec_op *op)
{
    ptec_nn_buffer buffer = {op->scratch, op->scratch_bytes};
    return buffer;
}

#endif
