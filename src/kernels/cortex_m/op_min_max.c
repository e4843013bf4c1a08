/* cortex_m::minimum.out / cortex_m::maximum.out(Tensor self, Tensor other, *, Tensor(a!) out)
 * int8, true NumPy broadcasting (cortex-m-ops.md §3.7). The two ops differ only in the nn
 * routine they call, so they share prepare and the argument plumbing in run. */
#include "cortex_m_args.h"

typedef ptec_status (*min_max_fn)(const int8_t *a, const int32_t a_dims[4], const int8_t *b,
                                  const int32_t b_dims[4], int8_t *out, const int32_t out_dims[4]);

static ptec_status prepare(ptec_op *op)
{
    return ptec_cm_prepare_min_max(op, (ptec_cm_min_max_state *)op->state);
}

static ptec_status run_with(ptec_op *op, min_max_fn fn)
{
    const ptec_cm_min_max_state *state = (const ptec_cm_min_max_state *)op->state;
    return fn(ptec_cm_in8(op, 0), state->a_dims, ptec_cm_in8(op, 1), state->b_dims, ptec_cm_out8(op),
              state->out_dims);
}

static ptec_status run_minimum(ptec_op *op) { return run_with(op, ptec_nn_minimum_s8); }

static ptec_status run_maximum(ptec_op *op) { return run_with(op, ptec_nn_maximum_s8); }

const ptec_kernel ptec_kernel_cortex_m_minimum_out = {"cortex_m::minimum.out", sizeof(ptec_cm_min_max_state),
                                                      prepare, run_minimum};
const ptec_kernel ptec_kernel_cortex_m_maximum_out = {"cortex_m::maximum.out", sizeof(ptec_cm_min_max_state),
                                                      prepare, run_maximum};
