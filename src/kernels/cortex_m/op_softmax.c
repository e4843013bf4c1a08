/* cortex_m::softmax.out(Tensor input, int dim, int input_zero_point,
 *     int output_zero_point, int input_multiplier, int input_shift, int diff_min,
 *     *, Tensor(a!) out)
 * int8 softmax over the last dim, output scale 1/256 and zero point -128
 * (cortex-m-ops.md §3.15). The last logical dim must also be the innermost
 * physical one, so that each row is contiguous. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_DIM, ARG_INPUT_ZP, ARG_OUTPUT_ZP, ARG_MULTIPLIER, ARG_SHIFT, ARG_DIFF_MIN, ARG_OUT,
       ARG_COUNT };

typedef struct softmax_state {
    ptec_nn_softmax_params params;
    int32_t rows, row_size;
} softmax_state;

static ptec_status prepare(ptec_op *op)
{
    softmax_state *state = (softmax_state *)op->state;
    ptec_tensor *input, *out;
    int64_t dim, unused;
    int32_t output_zp;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status == PTEC_OK) status = ptec_op_get_int(op, ARG_DIM, &dim);
    if (status == PTEC_OK) status = ptec_op_get_int(op, ARG_INPUT_ZP, &unused);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_OUTPUT_ZP, &output_zp);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_MULTIPLIER, &state->params.input_multiplier);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_SHIFT, &state->params.input_left_shift);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_DIFF_MIN, &state->params.diff_min);
    if (status != PTEC_OK) {
        return status;
    }
    if (input->rank < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT, PTEC_MSG("softmax needs a tensor of rank >= 1"));
    }
    const int64_t last = (int64_t)input->rank - 1;
    if (dim != last && dim != -1) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_DIM, PTEC_MSG("softmax runs over the last dim only"));
    }
    if (input->dim_order != NULL && input->dim_order[last] != last) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_INPUT,
                            PTEC_MSG("the softmax dim must be the innermost physical dim"));
    }
    if (!ptec_cm_same_layout(input, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have the input's sizes and dim order"));
    }
    if (output_zp != -128) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_OUTPUT_ZP, PTEC_MSG("softmax output zero point must be -128"));
    }
    if (state->params.input_left_shift < 0 || state->params.input_left_shift > 31) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SHIFT, PTEC_MSG("softmax input_shift must be in [0, 31]"));
    }
    state->row_size = input->sizes[last];
    state->rows = state->row_size > 0 ? (int32_t)(input->numel / (uint32_t)state->row_size) : 0;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const softmax_state *state = (const softmax_state *)op->state;
    return ptec_nn_softmax_s8(ptec_cm_in8(op, ARG_INPUT), state->rows, state->row_size, &state->params, ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_cortex_m_softmax_out = {"cortex_m::softmax.out", sizeof(softmax_state), prepare,
                                                      run};
