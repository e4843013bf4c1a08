/* ptec::softmax_a16.out(Tensor input, int dim, int input_multiplier,
 *     int input_shift, Tensor exp_lut, Tensor one_by_one_lut, *, Tensor(a!) out)
 * cortex_m::softmax on int16 over the last dim: no zero points (the output
 * has scale 1/32768, zero point 0) and no diff_min, which the int16 kernel
 * does not use; instead the two 513-entry int16 tables of CMSIS-NN's
 * arm_softmax_s16 (docs/kernels.md, "16-bit activations"). */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_DIM, ARG_MULTIPLIER, ARG_SHIFT, ARG_EXP_LUT, ARG_ONE_LUT, ARG_OUT, ARG_COUNT };

typedef struct softmax_state {
    int32_t multiplier, shift;
    int32_t rows, row_size;
} softmax_state;

static ptec_status check_lut(ptec_op *op, size_t i)
{
    ptec_tensor *lut;
    ptec_status status = ptec_cm_get_tensor_of(op, i, PTEC_DTYPE_SHORT, &lut);
    if (status != PTEC_OK) {
        return status;
    }
    if (lut->numel != 513u || !ptec_tensor_is_contiguous(lut)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i,
                            PTEC_MSG("softmax tables must be contiguous int16 tensors of 513 entries"));
    }
    return PTEC_OK;
}

static ptec_status prepare(ptec_op *op)
{
    softmax_state *state = (softmax_state *)op->state;
    ptec_tensor *input, *out;
    int64_t dim;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_SHORT, &input);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_SHORT, &out);
    if (status == PTEC_OK) status = ptec_op_get_int(op, ARG_DIM, &dim);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_MULTIPLIER, &state->multiplier);
    if (status == PTEC_OK) status = ptec_cm_get_shift(op, ARG_SHIFT, &state->shift);
    if (status == PTEC_OK) status = check_lut(op, ARG_EXP_LUT);
    if (status == PTEC_OK) status = check_lut(op, ARG_ONE_LUT);
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
    state->row_size = input->sizes[last];
    if (state->row_size > 65535) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_INPUT, PTEC_MSG("int16 softmax rows hold at most 65535 values"));
    }
    state->rows = state->row_size > 0 ? (int32_t)(input->numel / (uint32_t)state->row_size) : 0;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const softmax_state *state = (const softmax_state *)op->state;
    const ptec_nn_softmax_s16_params p = {state->multiplier, state->shift, ptec_cm_in16(op, ARG_EXP_LUT),
                                          ptec_cm_in16(op, ARG_ONE_LUT)};
    return ptec_nn_softmax_s16(ptec_cm_in16(op, ARG_INPUT), state->rows, state->row_size, &p, ptec_cm_out16(op));
}

const ptec_kernel ptec_kernel_ptec_softmax_a16_out = {"ptec::softmax_a16.out", sizeof(softmax_state), prepare, run};
