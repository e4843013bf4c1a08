/* cortex_m::pad.out(Tensor input, int[] pre_pad, int[] post_pad, int pad_value,
 *     *, Tensor(a!) out)
 * int8, rank 1..4, four pad entries in physical order (cortex-m-ops.md
 * §3.17): [n, h, w, c] for a channels-last 4-D tensor, otherwise the
 * logical sizes right-aligned into four slots. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_PRE_PAD, ARG_POST_PAD, ARG_PAD_VALUE, ARG_OUT, ARG_COUNT };

typedef struct pad_state {
    int32_t input_dims[4], pre[4], post[4];
    int8_t value;
} pad_state;

/* The four physical dims of t under the §3.17 rule. */
static bool physical_dims(const ptec_tensor *t, int32_t dims[4])
{
    if (t->rank == 4 && ptec_tensor_is_channels_last(t)) {
        ptec_cm_nhwc_dims4(t, dims);
        return true;
    }
    if (!ptec_tensor_is_contiguous(t)) {
        return false;
    }
    ptec_cm_logical_dims4(t, dims);
    return true;
}

static ptec_status get_pads(ptec_op *op, size_t i, int32_t pads[4])
{
    return ptec_cm_get_int_list_of(op, i, 4, 0, INT32_MAX, pads, PTEC_MSG("pads must have 4 entries (physical order)"),
                                   PTEC_MSG("pads must be >= 0"));
}

static ptec_status prepare(ptec_op *op)
{
    pad_state *state = (pad_state *)op->state;
    ptec_tensor *input, *out;
    int32_t value;
    int32_t out_dims[4];
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status == PTEC_OK) status = get_pads(op, ARG_PRE_PAD, state->pre);
    if (status == PTEC_OK) status = get_pads(op, ARG_POST_PAD, state->post);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_PAD_VALUE, INT8_MIN, INT8_MAX, &value);
    if (status != PTEC_OK) {
        return status;
    }
    if (input->rank < 1 || input->rank > 4 || out->rank != input->rank) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_INPUT, PTEC_MSG("pad supports rank 1 to 4, out of the same rank"));
    }
    if (!physical_dims(input, state->input_dims) || !physical_dims(out, out_dims)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_INPUT, PTEC_MSG("pad needs contiguous or channels-last tensors"));
    }
    for (int d = 0; d < 4; ++d) {
        if ((int64_t)state->input_dims[d] + state->pre[d] + state->post[d] != out_dims[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out sizes must be input + pre_pad + post_pad"));
        }
    }
    state->value = (int8_t)value;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const pad_state *state = (const pad_state *)op->state;
    return ptec_nn_pad_s8(ptec_cm_in8(op, ARG_INPUT), state->input_dims, state->pre, state->post, state->value,
                          ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_cortex_m_pad_out = {"cortex_m::pad.out", sizeof(pad_state), prepare, run};
