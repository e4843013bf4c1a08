/* cortex_m::maximum.out(Tensor self, Tensor other, *, Tensor(a!) out)
 * int8, true NumPy broadcasting (cortex-m-ops.md §3.7). */
#include "cortex_m_args.h"

static ptec_status prepare(ptec_op *op)
{
    return ptec_cm_prepare_min_max(op, (ptec_cm_min_max_state *)op->state);
}

static ptec_status run(ptec_op *op)
{
    const ptec_cm_min_max_state *state = (const ptec_cm_min_max_state *)op->state;
    return ptec_nn_maximum_s8(ptec_cm_in8(op, 0), state->a_dims, ptec_cm_in8(op, 1), state->b_dims, ptec_cm_out8(op),
                              state->out_dims);
}

const ptec_kernel ptec_kernel_cortex_m_maximum_out = {"cortex_m::maximum.out", sizeof(ptec_cm_min_max_state),
                                                      prepare, run};
