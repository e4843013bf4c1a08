/* cortex_m::minimum.out / cortex_m::maximum.out(Tensor self, Tensor other, *, Tensor(a!) out)
 * int8, true NumPy broadcasting (cortex-m-ops.md §3.7). The two ops differ only in the nn
 * routine they call, so they share prepare and the argument plumbing in run. */
#include "cortex_m_args.h"

static ptec_status prepare(ptec_op *op)
{
    return ptec_cm_prepare_min_max(op, (ptec_cm_min_max_state *)op->state);
}

/* Direct calls, not a function pointer: a position-independent host build
 * would reach the routine's address through the GOT. */
static ptec_status run_with(ptec_op *op, bool maximum)
{
    const ptec_cm_min_max_state *state = (const ptec_cm_min_max_state *)op->state;
    const int8_t *a = ptec_cm_in8(op, 0), *b = ptec_cm_in8(op, 1);
    int8_t *out = ptec_cm_out8(op);
    return maximum ? ptec_nn_maximum_s8(a, state->a_dims, b, state->b_dims, out, state->out_dims)
                   : ptec_nn_minimum_s8(a, state->a_dims, b, state->b_dims, out, state->out_dims);
}

static ptec_status run_minimum(ptec_op *op) { return run_with(op, false); }

static ptec_status run_maximum(ptec_op *op) { return run_with(op, true); }

const ptec_kernel ptec_kernel_cortex_m_minimum_out = {"cortex_m::minimum.out", sizeof(ptec_cm_min_max_state),
                                                      prepare, run_minimum};
const ptec_kernel ptec_kernel_cortex_m_maximum_out = {"cortex_m::maximum.out", sizeof(ptec_cm_min_max_state),
                                                      prepare, run_maximum};
