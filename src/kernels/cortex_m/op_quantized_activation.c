/* cortex_m::quantized_activation.out(Tensor input, Tensor lut, *, Tensor(a!) out)
 * A 256-entry int8 table indexed by input + 128 (cortex-m-ops.md §3.6). */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_LUT, ARG_OUT, ARG_COUNT };

typedef struct activation_state {
    uint32_t count;
} activation_state;

static ptec_status prepare(ptec_op *op)
{
    activation_state *state = (activation_state *)op->state;
    ptec_tensor *input, *lut, *out;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_LUT, PTEC_DTYPE_CHAR, &lut);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status != PTEC_OK) {
        return status;
    }
    if (lut->numel != 256 || !ptec_tensor_is_contiguous(lut)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_LUT, PTEC_MSG("lut must be 256 contiguous int8 entries"));
    }
    if (!ptec_cm_same_layout(input, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have the input's sizes and dim order"));
    }
    state->count = input->numel;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const activation_state *state = (const activation_state *)op->state;
    return ptec_nn_lut_s8(ptec_cm_in8(op, ARG_INPUT), ptec_cm_in8(op, ARG_LUT), ptec_cm_out8(op), state->count);
}

const ptec_kernel ptec_kernel_cortex_m_quantized_activation_out = {
    "cortex_m::quantized_activation.out", sizeof(activation_state), prepare, run};
