/* Input/out sharing of the cortex_m convolutions (cortex_m_in_place.h). */
#include "cortex_m_in_place.h"

ptec_cm_sharing ptec_cm_sharing_of(const ptec_tensor *a, const ptec_tensor *b)
{
    if (a->data == NULL || b->data == NULL || a->nbytes == 0 || b->nbytes == 0) {
        return PTEC_CM_DISJOINT;
    }
    const uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
    if (a0 == b0 && a->nbytes == b->nbytes) {
        return PTEC_CM_SAME;
    }
    /* Both are live objects of at most 2^32 - 1 bytes: the ends cannot wrap. */
    const uintptr_t a1 = a0 + a->nbytes, b1 = b0 + b->nbytes;
    return a0 < b1 && b0 < a1 ? PTEC_CM_PARTIAL : PTEC_CM_DISJOINT;
}

ptec_status ptec_cm_check_sharing(ptec_op *op, size_t i_input, bool same_ok)
{
    const ptec_cm_sharing sharing = ptec_cm_sharing_of(ptec_op_tensor(op, i_input),
                                                       ptec_op_tensor(op, (size_t)op->argc - 2u));
    if (sharing == PTEC_CM_PARTIAL) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_input,
                            PTEC_MSG("input and out partly overlap (an in-place layer shares all its bytes)"));
    }
    if (sharing == PTEC_CM_SAME && !same_ok) {
        /* Only ptec::'s depthwise (out shaped as the input, stride 1 along
         * H) and 1x1 conv (stride 1, no padding), both sides planned, can. */
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i_input,
                            PTEC_MSG("input and out are the same bytes: this convolution cannot run in place"));
    }
    return PTEC_OK;
}

static uint32_t in_place_scratch(const ptec_cm_conv_state *state, bool pointwise)
{
    if (state->input.n != state->output.n || state->input.h != state->output.h ||
        state->input.w != state->output.w || state->input.c != state->output.c) {
        return 0;
    }
    return pointwise ? ptec_nn_pointwise_in_place_s8_buffer_size(&state->params, &state->input, &state->filter)
                     : ptec_nn_depthwise_in_place_s8_buffer_size(&state->params, &state->input, &state->filter);
}

ptec_status ptec_cm_prepare_in_place(ptec_op *op, size_t i_input, bool pointwise, ptec_cm_conv_state *state)
{
    const uint8_t both = ptec_op_tensor(op, i_input)->flags & ptec_op_tensor(op, (size_t)op->argc - 2u)->flags;
    const uint32_t need = (both & PTEC_TENSOR_PLANNED) ? in_place_scratch(state, pointwise) : 0u;
    state->in_place = need != 0;
    if (need > op->scratch_bytes) {
        op->scratch_bytes = need;
    }
    return PTEC_OK;
}

bool ptec_cm_runs_in_place(ptec_op *op, size_t i_input, const ptec_cm_conv_state *state, ptec_status *status)
{
    *status = ptec_cm_check_sharing(op, i_input, state->in_place);
    return *status == PTEC_OK && state->in_place &&
           ptec_cm_sharing_of(ptec_op_tensor(op, i_input), ptec_op_tensor(op, (size_t)op->argc - 2u)) ==
               PTEC_CM_SAME;
}
