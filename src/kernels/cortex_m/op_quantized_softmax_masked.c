/* ptec::quantized_softmax_masked.out(Tensor input, Tensor mask,
 *     int input_multiplier, int input_shift, int diff_min, Tensor out)
 * int8 softmax over the last dim of contiguous rows with masked positions
 * as -infinity (nn/ptec_nn_softmax_masked_s8.c); output scale 1/256, zero
 * point -128, as cortex_m::softmax. mask: a constant BOOL tensor of
 * [mask_rows, row_size] (a non-zero byte masks the position); row r of the
 * input uses mask row r % mask_rows, so one [L, S] attention mask serves
 * every head. A ptec operator (upstream has none): capture emits it for
 * nn.MultiheadAttention / nn.TransformerEncoder(Layer) masks. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_MASK, ARG_MULTIPLIER, ARG_SHIFT, ARG_DIFF_MIN, ARG_OUT, ARG_COUNT };

typedef struct softmax_masked_state {
    ptec_nn_softmax_params params;
    int32_t rows, row_size, mask_rows;
} softmax_masked_state;

static ptec_status prepare(ptec_op *op)
{
    softmax_masked_state *state = (softmax_masked_state *)op->state;
    ptec_tensor *input, *mask, *out;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_MASK, PTEC_DTYPE_BOOL, &mask);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_MULTIPLIER, &state->params.input_multiplier);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_SHIFT, &state->params.input_left_shift);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_DIFF_MIN, &state->params.diff_min);
    if (status != PTEC_OK) {
        return status;
    }
    if (input->rank < 1 || !ptec_tensor_is_contiguous(input)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT, PTEC_MSG("input must be contiguous, rank >= 1"));
    }
    if (!ptec_tensor_is_contiguous(out) || !ptec_tensor_same_shape(input, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must be contiguous, shaped as input"));
    }
    if (state->params.input_left_shift < 0 || state->params.input_left_shift > 31) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SHIFT, PTEC_MSG("softmax input_shift must be in [0, 31]"));
    }
    const int32_t row_size = input->sizes[input->rank - 1];
    const uint32_t rows = row_size > 0 ? input->numel / (uint32_t)row_size : 0;
    if (!(mask->flags & PTEC_TENSOR_CONSTANT) || mask->data == NULL) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_MASK, PTEC_MSG("mask must be a constant tensor"));
    }
    if (mask->rank != 2 || !ptec_tensor_is_contiguous(mask) || mask->sizes[1] != row_size || mask->sizes[0] < 1 ||
        (uint32_t)mask->sizes[0] > rows || rows % (uint32_t)mask->sizes[0] != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_MASK,
                            PTEC_MSG("mask must be contiguous [mask_rows, row_size], mask_rows dividing the rows"));
    }
    const uint8_t *m = (const uint8_t *)mask->data;
    for (uint32_t i = 0; i < mask->numel; ++i) {
        if (m[i] > 1) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_MASK, PTEC_MSG("mask bytes must be 0 or 1"));
        }
    }
    if (rows > (uint32_t)INT32_MAX) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT, PTEC_MSG("too many rows"));
    }
    state->row_size = row_size;
    state->rows = (int32_t)rows;
    state->mask_rows = mask->sizes[0];
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const softmax_masked_state *state = (const softmax_masked_state *)op->state;
    return ptec_nn_softmax_masked_s8(ptec_cm_in8(op, ARG_INPUT), state->rows, state->row_size,
                                     (const uint8_t *)ptec_op_tensor(op, ARG_MASK)->data, state->mask_rows,
                                     &state->params, ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_softmax_masked_out = {"ptec::quantized_softmax_masked.out",
                                                                   sizeof(softmax_masked_state), prepare, run};
