/* Shared argument checks of the cortex_m wrappers (see cortex_m_args.h). */
#include "cortex_m_args.h"

#include <math.h>
#include <string.h>

ptec_status ptec_cm_get_tensor_of(ptec_op *op, size_t i, ptec_dtype dtype, ptec_tensor **out)
{
    ptec_status status = ptec_op_get_tensor(op, i, out);
    if (status != PTEC_OK) {
        return status;
    }
    if ((*out)->dtype != (uint8_t)dtype) {
        switch (dtype) {
        case PTEC_DTYPE_CHAR:
            return ptec_op_fail(op, PTEC_INVALID_TYPE, (int)i, PTEC_MSG("expected an int8 tensor"));
        case PTEC_DTYPE_SHORT:
            return ptec_op_fail(op, PTEC_INVALID_TYPE, (int)i, PTEC_MSG("expected an int16 tensor"));
        case PTEC_DTYPE_INT:
            return ptec_op_fail(op, PTEC_INVALID_TYPE, (int)i, PTEC_MSG("expected an int32 tensor"));
        case PTEC_DTYPE_FLOAT:
            return ptec_op_fail(op, PTEC_INVALID_TYPE, (int)i, PTEC_MSG("expected a float32 tensor"));
        default:
            return ptec_op_fail(op, PTEC_INVALID_TYPE, (int)i, PTEC_MSG("tensor has the wrong dtype"));
        }
    }
    return PTEC_OK;
}

ptec_status ptec_cm_get_out_of(ptec_op *op, ptec_dtype dtype, ptec_tensor **out)
{
    ptec_status status = ptec_op_get_out(op, out);
    if (status != PTEC_OK) {
        return status;
    }
    if ((*out)->dtype != (uint8_t)dtype) {
        return ptec_op_fail(op, PTEC_INVALID_TYPE, (int)op->argc - 2, PTEC_MSG("out tensor has the wrong dtype"));
    }
    return PTEC_OK;
}

ptec_status ptec_cm_get_nhwc_dims(ptec_op *op, size_t i, const ptec_tensor *t, ptec_nn_dims *dims)
{
    if (t->rank != 4) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("expected a 4-D tensor"));
    }
    if (!ptec_tensor_is_channels_last(t)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, (int)i,
                            PTEC_MSG("expected a channels-last (NHWC) tensor, dim_order [0,2,3,1]"));
    }
    dims->n = t->sizes[0];
    dims->c = t->sizes[1];
    dims->h = t->sizes[2];
    dims->w = t->sizes[3];
    return PTEC_OK;
}

static bool is_identity_order(const ptec_tensor *t)
{
    for (uint8_t d = 0; d < t->rank; ++d) {
        if (t->dim_order != NULL && t->dim_order[d] != d) {
            return false;
        }
    }
    return true;
}

bool ptec_cm_same_layout(const ptec_tensor *a, const ptec_tensor *b)
{
    if (a->rank != b->rank || memcmp(a->sizes, b->sizes, (size_t)a->rank * sizeof(int32_t)) != 0) {
        return false;
    }
    if (a->dim_order == NULL || b->dim_order == NULL) {
        return is_identity_order(a) && is_identity_order(b);
    }
    if (memcmp(a->dim_order, b->dim_order, a->rank) == 0) {
        return true;
    }
    /* Different dim orders can still describe the same bytes. */
    if (ptec_tensor_is_contiguous(a) && ptec_tensor_is_contiguous(b)) {
        return true;
    }
    return a->rank == 4 && ptec_tensor_is_channels_last(a) && ptec_tensor_is_channels_last(b);
}

ptec_status ptec_cm_get_int_list_of(ptec_op *op, size_t i, size_t count, int32_t lo, int32_t hi, int32_t *values,
                                    const char *wrong_length, const char *out_of_range)
{
    size_t got = 0;
    ptec_status status = ptec_op_get_int32_list(op, i, values, count, &got, false);
    if (status != PTEC_OK) {
        return status;
    }
    if (got != count) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, wrong_length);
    }
    for (size_t k = 0; k < count; ++k) {
        if (values[k] < lo || values[k] > hi) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, out_of_range);
        }
    }
    return PTEC_OK;
}

ptec_status ptec_cm_get_hw(ptec_op *op, size_t i, int32_t min_value, ptec_nn_hw *out)
{
    int32_t values[2];
    const ptec_status status = ptec_cm_get_int_list_of(
        op, i, 2, min_value, INT32_MAX, values, PTEC_MSG("expected a list of two ints [h, w]"),
        min_value > 0 ? PTEC_MSG("stride, dilation and kernel sizes must be >= 1") : PTEC_MSG("padding must be >= 0"));
    if (status == PTEC_OK) {
        out->h = values[0];
        out->w = values[1];
    }
    return status;
}

ptec_status ptec_cm_get_int_in(ptec_op *op, size_t i, int32_t lo, int32_t hi, int32_t *out)
{
    ptec_status status = ptec_op_get_int32(op, i, out);
    if (status != PTEC_OK) {
        return status;
    }
    if (*out < lo || *out > hi) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("value out of range (zero point, offset or pad value)"));
    }
    return PTEC_OK;
}

/* activation_min and activation_max with lo <= min <= max <= hi. */
static ptec_status get_activation_in(ptec_op *op, size_t i_min, size_t i_max, int32_t lo, int32_t hi,
                                     const char *out_of_range, ptec_nn_activation *out)
{
    ptec_status status = ptec_op_get_int32(op, i_min, &out->min);
    if (status == PTEC_OK) {
        status = ptec_op_get_int32(op, i_max, &out->max);
    }
    if (status != PTEC_OK) {
        return status;
    }
    if (out->min < lo || out->max > hi || out->min > out->max) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_min, out_of_range);
    }
    return PTEC_OK;
}

ptec_status ptec_cm_get_activation(ptec_op *op, size_t i_min, size_t i_max, ptec_nn_activation *out)
{
    return get_activation_in(op, i_min, i_max, INT8_MIN, INT8_MAX,
                             PTEC_MSG("activation range must satisfy -128 <= min <= max <= 127"), out);
}

ptec_status ptec_cm_get_shift(ptec_op *op, size_t i, int32_t *out)
{
    ptec_status status = ptec_op_get_int32(op, i, out);
    if (status != PTEC_OK) {
        return status;
    }
    if (*out < -31 || *out > 31) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("requantization shift must be in [-31, 31]"));
    }
    return PTEC_OK;
}

ptec_status ptec_cm_get_requant(ptec_op *op, size_t i_mult, ptec_nn_quant *out)
{
    ptec_status status = ptec_op_get_int32(op, i_mult, &out->multiplier);
    if (status == PTEC_OK) {
        status = ptec_cm_get_shift(op, i_mult + 1, &out->shift);
    }
    return status;
}

static ptec_status check_int32_vector(ptec_op *op, size_t i, int32_t channels, ptec_tensor **out)
{
    ptec_status status = ptec_cm_get_tensor_of(op, i, PTEC_DTYPE_INT, out);
    if (status != PTEC_OK) {
        return status;
    }
    if ((*out)->numel != (uint32_t)channels || !ptec_tensor_is_contiguous(*out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i,
                            PTEC_MSG("per-channel tensor must hold one contiguous int32 per output channel"));
    }
    return PTEC_OK;
}

/* Per-channel multipliers and shifts with every shift in [-31, max_shift]. */
static ptec_status check_per_channel_up_to(ptec_op *op, size_t i_mult, size_t i_shift, int32_t channels,
                                           int32_t max_shift, const char *out_of_range);

ptec_status ptec_cm_check_per_channel(ptec_op *op, size_t i_mult, size_t i_shift, int32_t channels)
{
    return check_per_channel_up_to(op, i_mult, i_shift, channels, 31,
                                   PTEC_MSG("requantization shift must be in [-31, 31]"));
}

ptec_status ptec_cm_check_per_channel_s64(ptec_op *op, size_t i_mult, size_t i_shift, int32_t channels)
{
    return check_per_channel_up_to(op, i_mult, i_shift, channels, 7,
                                   PTEC_MSG("requantization shift must be in [-31, 7] for int16 activations"));
}

static ptec_status check_per_channel_up_to(ptec_op *op, size_t i_mult, size_t i_shift, int32_t channels,
                                           int32_t max_shift, const char *out_of_range)
{
    ptec_tensor *multipliers;
    ptec_tensor *shifts;
    ptec_status status = check_int32_vector(op, i_mult, channels, &multipliers);
    if (status == PTEC_OK) {
        status = check_int32_vector(op, i_shift, channels, &shifts);
    }
    if (status != PTEC_OK) {
        return status;
    }
    if (!(shifts->flags & PTEC_TENSOR_CONSTANT) || !(multipliers->flags & PTEC_TENSOR_CONSTANT) ||
        (channels > 0 && (shifts->data == NULL || multipliers->data == NULL))) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, (int)i_shift,
                            PTEC_MSG("requantization multipliers and shifts must be constant tensors"));
    }
    const int32_t *s = (const int32_t *)shifts->data;
    for (int32_t c = 0; c < channels; ++c) {
        if (s[c] < -31 || s[c] > max_shift) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_shift, out_of_range);
        }
    }
    return PTEC_OK;
}

ptec_status ptec_cm_check_bias(ptec_op *op, size_t i, int32_t channels, bool *present)
{
    ptec_tensor *bias;
    ptec_status status = ptec_op_get_optional_tensor(op, i, &bias);
    if (status != PTEC_OK) {
        return status;
    }
    *present = bias != NULL;
    if (bias == NULL) {
        return PTEC_OK;
    }
    return check_int32_vector(op, i, channels, &bias);
}

ptec_status ptec_cm_check_bias_s64(ptec_op *op, size_t i, int32_t channels, bool *present)
{
    ptec_tensor *bias;
    ptec_status status = ptec_op_get_optional_tensor(op, i, &bias);
    if (status != PTEC_OK) {
        return status;
    }
    *present = bias != NULL;
    if (bias == NULL) {
        return PTEC_OK;
    }
    if (bias->dtype != PTEC_DTYPE_LONG || bias->numel != (uint32_t)channels || !ptec_tensor_is_contiguous(bias)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i,
                            PTEC_MSG("bias must hold one contiguous int64 per output channel"));
    }
    /* The math layer reads it as int64_t, which needs its alignment. */
    if (bias->data != NULL && ((uintptr_t)bias->data & (sizeof(int64_t) - 1u)) != 0) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, (int)i, PTEC_MSG("int64 bias data must be 8-byte aligned"));
    }
    return PTEC_OK;
}

ptec_status ptec_cm_get_activation_s16(ptec_op *op, size_t i_min, size_t i_max, ptec_nn_activation *out)
{
    return get_activation_in(op, i_min, i_max, INT16_MIN, INT16_MAX,
                             PTEC_MSG("activation range must satisfy -32768 <= min <= max <= 32767"), out);
}

ptec_status ptec_cm_check_scratch_arg(ptec_op *op, size_t i)
{
    ptec_tensor *scratch;
    return ptec_op_get_tensor(op, i, &scratch);
}

ptec_status ptec_cm_check_axis_span(ptec_op *op, int64_t out_size, int64_t stride, int64_t kernel,
                                    int64_t dilation, int64_t padding)
{
    const int64_t limit = (int64_t)1 << 30;
    if (out_size > limit || stride > limit || kernel > limit || dilation > limit || padding > limit ||
        (out_size > 0 ? out_size - 1 : 0) * stride + (kernel - 1) * dilation + padding >= limit) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("convolution or pooling window exceeds 2^30 elements"));
    }
    return PTEC_OK;
}

ptec_status ptec_cm_get_quantized_dtype(ptec_op *op, size_t i, int32_t *dtype)
{
    const ptec_status status = ptec_op_get_int32(op, i, dtype);
    if (status != PTEC_OK) {
        return status;
    }
    if (*dtype != PTEC_DTYPE_CHAR && *dtype != PTEC_DTYPE_SHORT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, (int)i, PTEC_MSG("dtype must be int8 (CHAR) or int16 (SHORT)"));
    }
    return PTEC_OK;
}

ptec_status ptec_cm_get_quantize_params(ptec_op *op, size_t i_scale, int32_t dtype,
                                        ptec_nn_quantize_params *params)
{
    double scale;
    int32_t qmin, qmax;
    ptec_status status = ptec_op_get_double(op, i_scale, &scale);
    if (status == PTEC_OK) {
        status = ptec_op_get_int32(op, i_scale + 1, &params->zero_point);
    }
    if (status == PTEC_OK) {
        status = ptec_op_get_int32(op, i_scale + 2, &qmin);
    }
    if (status == PTEC_OK) {
        status = ptec_op_get_int32(op, i_scale + 3, &qmax);
    }
    if (status != PTEC_OK) {
        return status;
    }
    const float narrowed = (float)scale;
    if (!(narrowed > 0.0f) || !isfinite(narrowed) || !isfinite(1.0f / narrowed)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_scale,
                            PTEC_MSG("scale must be a positive, finite float32 with a finite inverse"));
    }
    const int32_t type_min = dtype == PTEC_DTYPE_CHAR ? INT8_MIN : INT16_MIN;
    const int32_t type_max = dtype == PTEC_DTYPE_CHAR ? INT8_MAX : INT16_MAX;
    if (qmin < type_min || qmax > type_max || qmin > qmax) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_scale + 2,
                            PTEC_MSG("quant_min..quant_max must be a non-empty range inside the dtype"));
    }
    params->scale = narrowed;
    params->quant_min = qmin;
    params->quant_max = qmax;
    return PTEC_OK;
}

ptec_status ptec_cm_prepare_quantize_common(ptec_op *op, bool float_input, ptec_cm_quantize_state *state)
{
    enum { ARG_INPUT, ARG_SCALE, ARG_ZERO_POINT, ARG_QUANT_MIN, ARG_QUANT_MAX, ARG_DTYPE, ARG_OUT, ARG_COUNT };
    ptec_tensor *input;
    ptec_tensor *out;
    int32_t dtype;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_quantized_dtype(op, ARG_DTYPE, &dtype);
    if (status != PTEC_OK) {
        return status;
    }
    status = ptec_cm_get_tensor_of(op, ARG_INPUT, float_input ? PTEC_DTYPE_FLOAT : (ptec_dtype)dtype, &input);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, float_input ? (ptec_dtype)dtype : PTEC_DTYPE_FLOAT, &out);
    if (status == PTEC_OK) status = ptec_cm_get_quantize_params(op, ARG_SCALE, dtype, &state->params);
    if (status != PTEC_OK) {
        return status;
    }
    if (!float_input && (state->params.zero_point < state->params.quant_min ||
                         state->params.zero_point > state->params.quant_max)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ZERO_POINT,
                            PTEC_MSG("zero_point must lie in quant_min..quant_max"));
    }
    if (!ptec_cm_same_layout(input, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have the input's sizes and dim order"));
    }
    state->count = input->numel;
    state->int16 = dtype == PTEC_DTYPE_SHORT;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

ptec_status ptec_cm_get_binary_operands(ptec_op *op, ptec_dtype dtype, size_t i_other, size_t i_out_zp,
                                        ptec_cm_binary_operands *operands)
{
    const int32_t lo = dtype == PTEC_DTYPE_SHORT ? INT16_MIN : INT8_MIN;
    const int32_t hi = dtype == PTEC_DTYPE_SHORT ? INT16_MAX : INT8_MAX;
    ptec_status status = ptec_cm_get_tensor_of(op, 0, dtype, &operands->self);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, i_other, dtype, &operands->other);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, dtype, &operands->out);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, 1, lo, hi, &operands->self_zp);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, i_other + 1, lo, hi, &operands->other_zp);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, i_out_zp, lo, hi, &operands->out_zp);
    return status;
}

ptec_status ptec_cm_plan_channel_broadcast(ptec_op *op, const ptec_tensor *self, const ptec_tensor *other,
                                           const ptec_tensor *out, size_t i_other, ptec_cm_broadcast_plan *plan)
{
    const ptec_tensor *large = self;
    plan->swap = false;
    if (self->rank == other->rank && memcmp(self->sizes, other->sizes, self->rank * sizeof(int32_t)) == 0) {
        if (!ptec_cm_same_layout(self, other)) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, (int)i_other, PTEC_MSG("inputs have different dim orders"));
        }
        plan->count = self->numel;
        plan->small_count = self->numel;
    } else {
        const bool channel_shaped = self->rank == 4 && other->rank == 4 && self->sizes[1] == other->sizes[1];
        const uint32_t channels = channel_shaped ? (uint32_t)self->sizes[1] : 0u;
        if (channel_shaped && other->numel == channels) {
            large = self;
        } else if (channel_shaped && self->numel == channels) {
            large = other;
            plan->swap = true;
        } else {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, (int)i_other,
                                PTEC_MSG("shapes must be equal, or one operand [1,C,1,1] broadcast over channels"));
        }
        if (!ptec_tensor_is_channels_last(large)) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, plan->swap ? (int)i_other : 0,
                                PTEC_MSG("channel broadcast needs a channels-last (NHWC) operand"));
        }
        plan->count = large->numel;
        plan->small_count = channels;
    }
    if (!ptec_cm_same_layout(large, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)op->argc - 2,
                            PTEC_MSG("out must have the larger input's sizes and dim order"));
    }
    return PTEC_OK;
}

void ptec_cm_nhwc_dims4(const ptec_tensor *t, int32_t dims[4])
{
    dims[0] = t->sizes[0];
    dims[1] = t->sizes[2];
    dims[2] = t->sizes[3];
    dims[3] = t->sizes[1];
}

void ptec_cm_logical_dims4(const ptec_tensor *t, int32_t dims[4])
{
    for (int d = 0; d < 4; ++d) {
        const int src = d - (4 - (int)t->rank);
        dims[d] = src >= 0 ? t->sizes[src] : 1;
    }
}

/* min/max: single elements broadcast like [1,1,1,1] in either layout. */
static bool nhwc_dims4(const ptec_tensor *t, int32_t dims[4])
{
    if (t->numel == 1) {
        dims[0] = dims[1] = dims[2] = dims[3] = 1;
        return true;
    }
    if (t->rank != 4 || !ptec_tensor_is_channels_last(t)) {
        return false;
    }
    ptec_cm_nhwc_dims4(t, dims);
    return true;
}

ptec_status ptec_cm_prepare_min_max(ptec_op *op, ptec_cm_min_max_state *state)
{
    ptec_tensor *a, *b, *out;
    ptec_status status = ptec_op_expect_argc(op, 4);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, 0, PTEC_DTYPE_CHAR, &a);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, 1, PTEC_DTYPE_CHAR, &b);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status != PTEC_OK) {
        return status;
    }
    if (a->rank > 4 || b->rank > 4 || out->rank > 4) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("minimum/maximum support rank <= 4"));
    }
    const bool contiguous = (a->numel == 1 || ptec_tensor_is_contiguous(a)) &&
                            (b->numel == 1 || ptec_tensor_is_contiguous(b)) && ptec_tensor_is_contiguous(out);
    if (contiguous) {
        ptec_cm_logical_dims4(a, state->a_dims);
        ptec_cm_logical_dims4(b, state->b_dims);
        ptec_cm_logical_dims4(out, state->out_dims);
    } else if (!nhwc_dims4(a, state->a_dims) || !nhwc_dims4(b, state->b_dims) ||
               !nhwc_dims4(out, state->out_dims)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1,
                            PTEC_MSG("operands must all be contiguous or all channels-last (or single elements)"));
    }
    for (int d = 0; d < 4; ++d) {
        const int32_t x = state->a_dims[d], y = state->b_dims[d];
        if ((x != y && x != 1 && y != 1) || state->out_dims[d] != (x > y ? x : y)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)op->argc - 2,
                                PTEC_MSG("shapes do not broadcast to the out tensor's shape"));
        }
    }
    op->scratch_bytes = 0;
    return PTEC_OK;
}

ptec_status ptec_cm_prepare_conv_common(ptec_op *op, const ptec_cm_conv_args *args, ptec_cm_conv_state *state)
{
    ptec_tensor *input, *weight, *out;
    ptec_nn_conv_params *p = &state->params;
    state->in_place = false;
    ptec_status status = ptec_op_expect_argc(op, args->argc);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, 0, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, 1, PTEC_DTYPE_CHAR, &weight);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status == PTEC_OK) status = ptec_cm_get_nhwc_dims(op, 0, input, &state->input);
    if (status == PTEC_OK) status = ptec_cm_get_nhwc_dims(op, (size_t)op->argc - 2, out, &state->output);
    if (status != PTEC_OK) {
        return status;
    }
    const size_t i_bias = args->i_weight_sizes != 0 ? args->i_weight_sizes + 1 : 2;
    if (args->i_weight_sizes != 0) {
        int32_t sizes[4];
        status = ptec_cm_get_packed_s4_weight(op, 1, args->i_weight_sizes, 4, sizes);
        if (status != PTEC_OK) {
            return status;
        }
        state->filter.n = sizes[0];
        state->filter.h = sizes[1];
        state->filter.w = sizes[2];
        state->filter.c = sizes[3];
    } else {
        if (weight->rank != 4 || !ptec_tensor_is_contiguous(weight)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1,
                                PTEC_MSG("weight must be a contiguous 4-D tensor in the physical order"));
        }
        state->filter.n = weight->sizes[0];
        state->filter.h = weight->sizes[1];
        state->filter.w = weight->sizes[2];
        state->filter.c = weight->sizes[3];
    }
    if (state->input.n != state->output.n) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)op->argc - 2, PTEC_MSG("input and out batch sizes differ"));
    }
    status = ptec_cm_get_hw(op, args->i_stride, 1, &p->stride);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, args->i_stride + 1, 0, &p->padding);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, args->i_dilation, 1, &p->dilation);
    if (status == PTEC_OK) {
        status = ptec_cm_get_int_in(op, args->i_input_offset, -INT8_MAX, -INT8_MIN, &p->input_offset);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_get_int_in(op, args->i_input_offset + 1, INT8_MIN, INT8_MAX, &p->output_offset);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_check_per_channel(op, args->i_input_offset + 2, args->i_input_offset + 3, state->output.c);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_get_activation(op, args->i_input_offset + 4, args->i_input_offset + 5, &p->activation);
    }
    if (status == PTEC_OK) status = ptec_cm_check_bias(op, i_bias, state->output.c, &state->has_bias);
    for (size_t i = 0; status == PTEC_OK && i < args->scratch_args; ++i) {
        status = ptec_cm_check_scratch_arg(op, args->i_input_offset + 6 + i);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_check_axis_span(op, state->output.h, p->stride.h, state->filter.h, p->dilation.h,
                                         p->padding.h);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_check_axis_span(op, state->output.w, p->stride.w, state->filter.w, p->dilation.w,
                                         p->padding.w);
    }
    if (status == PTEC_OK) {
        state->weight = ptec_cm_in8(op, 1);
        state->bias = ptec_cm_optional_in32(op, i_bias, state->has_bias);
        state->quant.multipliers = ptec_cm_in32(op, args->i_input_offset + 2);
        state->quant.shifts = ptec_cm_in32(op, args->i_input_offset + 3);
    }
    return status;
}

ptec_status ptec_cm_get_packed_s4_weight(ptec_op *op, size_t i_weight, size_t i_sizes, size_t count,
                                         int32_t *sizes)
{
    ptec_tensor *weight;
    int32_t values[PTEC_MAX_RANK];
    size_t got = 0;
    ptec_status status = ptec_cm_get_tensor_of(op, i_weight, PTEC_DTYPE_CHAR, &weight);
    /* Read up to the longest list a program may hold, so that a wrong
     * length gets this operator's message rather than the generic one. */
    if (status == PTEC_OK) status = ptec_op_get_int32_list(op, i_sizes, values, PTEC_MAX_RANK, &got, false);
    if (status != PTEC_OK) {
        return status;
    }
    if (got != count || count > PTEC_MAX_RANK) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_sizes,
                            count == 4 ? PTEC_MSG("weight_sizes must be [Cout, KH, KW, Cin/groups]")
                                       : PTEC_MSG("weight_sizes must be [out_features, in_features]"));
    }
    for (size_t d = 0; d < count; ++d) {
        if (values[d] < 1) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_sizes, PTEC_MSG("weight_sizes must all be >= 1"));
        }
        sizes[d] = values[d];
    }
    /* Each factor is < 2^31, so checking after every step keeps the
     * product below 2^62. */
    uint64_t elements = 1;
    for (size_t d = 0; d < count; ++d) {
        elements *= (uint64_t)sizes[d];
        if (elements > (uint64_t)INT32_MAX) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_sizes,
                                PTEC_MSG("weight_sizes: more than 2^31 - 1 weights"));
        }
    }
    if (weight->rank != 1 || !ptec_tensor_is_contiguous(weight) || (uint64_t)weight->numel != (elements + 1u) / 2u) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_weight,
                            PTEC_MSG("weight must be 1-D int8, ceil(prod(weight_sizes)/2) bytes"));
    }
    return PTEC_OK;
}

/* The output size of a convolution along one axis (floor division). */
int64_t ptec_cm_conv_output_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation)
{
    const int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
    return span < 0 ? 0 : span / stride + 1;
}

int64_t ptec_cm_pool_output_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode)
{
    const int64_t span = size + 2 * padding - kernel;
    if (span < 0) {
        return 0;
    }
    int64_t out = span / stride + 1;
    if (ceil_mode) {
        if (span % stride != 0) {
            ++out;
        }
        if ((out - 1) * stride >= size + padding) {
            --out;
        }
    }
    return out;
}

ptec_status ptec_cm_prepare_pool_common(ptec_op *op, size_t i_kernel, bool ceil_mode, ptec_cm_pool_state *state)
{
    return ptec_cm_prepare_pool_common_of(op, PTEC_DTYPE_CHAR, i_kernel, ceil_mode, state);
}

ptec_status ptec_cm_prepare_pool_common_of(ptec_op *op, ptec_dtype dtype, size_t i_kernel, bool ceil_mode,
                                           ptec_cm_pool_state *state)
{
    ptec_tensor *input, *out;
    ptec_nn_pool_params *p = &state->params;
    ptec_status status = ptec_cm_get_tensor_of(op, 0, dtype, &input);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, dtype, &out);
    if (status == PTEC_OK) status = ptec_cm_get_nhwc_dims(op, 0, input, &state->input);
    if (status == PTEC_OK) status = ptec_cm_get_nhwc_dims(op, (size_t)op->argc - 2, out, &state->output);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, i_kernel, 1, &p->kernel);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, i_kernel + 1, 1, &p->stride);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, i_kernel + 2, 0, &p->padding);
    if (status != PTEC_OK) {
        return status;
    }
    const ptec_nn_dims in = state->input, o = state->output;
    if (in.n != o.n || in.c != o.c) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)op->argc - 2, PTEC_MSG("input and out N and C must match"));
    }
    status = ptec_cm_check_axis_span(op, o.h, p->stride.h, p->kernel.h, 1, p->padding.h);
    if (status == PTEC_OK) status = ptec_cm_check_axis_span(op, o.w, p->stride.w, p->kernel.w, 1, p->padding.w);
    if (status != PTEC_OK) {
        return status;
    }
    if ((int64_t)p->kernel.h * p->kernel.w >= ((int64_t)1 << 23)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, (int)i_kernel, PTEC_MSG("pooling window larger than 2^23 elements"));
    }
    if (ptec_cm_pool_output_size(in.h, p->kernel.h, p->stride.h, p->padding.h, ceil_mode) != o.h ||
        ptec_cm_pool_output_size(in.w, p->kernel.w, p->stride.w, p->padding.w, ceil_mode) != o.w) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)op->argc - 2,
                            PTEC_MSG("out height/width do not match the pooling geometry"));
    }
    /* Every window must overlap the input: its first row/column must be
     * before the input's end and its last after the input's start. */
    if ((int64_t)(o.h - 1) * p->stride.h - p->padding.h >= in.h || p->kernel.h <= p->padding.h ||
        (int64_t)(o.w - 1) * p->stride.w - p->padding.w >= in.w || p->kernel.w <= p->padding.w) {
        if (o.h > 0 && o.w > 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_kernel + 2,
                                PTEC_MSG("a pooling window lies entirely in the padding"));
        }
    }
    return PTEC_OK;
}

ptec_status ptec_cm_prepare_conv_a16_common(ptec_op *op, const ptec_cm_conv_a16_args *args,
                                            ptec_cm_conv_a16_state *state)
{
    ptec_tensor *input, *weight, *out;
    ptec_nn_conv_s16_params *p = &state->params;
    ptec_status status = ptec_op_expect_argc(op, args->argc);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, 0, PTEC_DTYPE_SHORT, &input);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, 1, PTEC_DTYPE_CHAR, &weight);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_SHORT, &out);
    if (status == PTEC_OK) status = ptec_cm_get_nhwc_dims(op, 0, input, &state->input);
    if (status == PTEC_OK) status = ptec_cm_get_nhwc_dims(op, (size_t)op->argc - 2, out, &state->output);
    if (status != PTEC_OK) {
        return status;
    }
    if (weight->rank != 4 || !ptec_tensor_is_contiguous(weight)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("weight must be a contiguous 4-D tensor in the physical order"));
    }
    state->filter.n = weight->sizes[0];
    state->filter.h = weight->sizes[1];
    state->filter.w = weight->sizes[2];
    state->filter.c = weight->sizes[3];
    if (state->input.n != state->output.n) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)op->argc - 2, PTEC_MSG("input and out batch sizes differ"));
    }
    status = ptec_cm_get_hw(op, args->i_stride, 1, &p->stride);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, args->i_stride + 1, 0, &p->padding);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, args->i_dilation, 1, &p->dilation);
    if (status == PTEC_OK) {
        status = ptec_cm_check_per_channel_s64(op, args->i_multipliers, args->i_multipliers + 1, state->output.c);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_get_activation_s16(op, args->i_multipliers + 2, args->i_multipliers + 3, &p->activation);
    }
    if (status == PTEC_OK) status = ptec_cm_check_bias_s64(op, 2, state->output.c, &state->has_bias);
    if (status == PTEC_OK) status = ptec_cm_check_scratch_arg(op, args->i_multipliers + 4);
    if (status == PTEC_OK) {
        status = ptec_cm_check_axis_span(op, state->output.h, p->stride.h, state->filter.h, p->dilation.h,
                                         p->padding.h);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_check_axis_span(op, state->output.w, p->stride.w, state->filter.w, p->dilation.w,
                                         p->padding.w);
    }
    return status;
}
