/* ptec::linalg_cholesky_info.out(Tensor self, bool upper, *, Tensor(a!) out)
 *
 * torch.linalg.cholesky_ex(A, upper)'s info for each matrix A of self
 * [..., n, n] (float32, rank 2 or more, n at least 1) into out [...]
 * (int32, self's batch sizes): 0 when the factorisation of
 * ptec::linalg_cholesky.out (linalg_cholesky.h, the same arithmetic, one
 * triangle read: the upper one when upper) meets only positive pivots,
 * else the 1-based order j + 1 of the first pivot d_j <= 0 or NaN (the
 * first leading minor that is not positive-definite, LAPACK potrf's test).
 * An infinity or a NaN in the read triangle is computed through, as LAPACK
 * does (a NaN reaches the pivot of its row; a +inf pivot passes). Both
 * tensors in the default dim order.
 *
 * Scratch: one factor, n * n floats. Every size is checked at prepare, in
 * 64-bit arithmetic against 32-bit limits. */
#include "kernels/portable/linalg_cholesky.h"
#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_UPPER = 1, ARG_OUT = 2, ARG_COUNT = 4 };

typedef struct cholesky_info_state {
    uint32_t batch; /* matrices */
    int32_t n;      /* each matrix's rows and columns */
    uint8_t upper;  /* read the upper triangle */
} cholesky_info_state;

static ptec_status prepare(ptec_op *op)
{
    cholesky_info_state *s = op->state;
    ptec_tensor *self, *out;
    bool upper;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, ARG_UPPER, &upper)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_INT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self must be float32 and out int32"));
    }
    int32_t n;
    uint32_t batch, scratch; /* one factor's n * n floats, indexed in size_t */
    if ((st = ptec_linalg_square_shapes(op, ARG_SELF, self, ARG_OUT, out, 0, false,
                                        PTEC_MSG("self must be [..., n, n] and out [...]"),
                                        PTEC_MSG("out must have self's batch sizes"), &n, &batch)) != PTEC_OK ||
        (st = ptec_linalg_matrix_bytes(op, ARG_SELF, n, &scratch)) != PTEC_OK) {
        return st;
    }
    s->batch = batch;
    s->n = n;
    s->upper = upper;
    op->scratch_bytes = scratch;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const cholesky_info_state *s = op->state;
    const float *x = ptec_op_tensor(op, ARG_SELF)->data;
    int32_t *y = ptec_op_tensor(op, ARG_OUT)->data;
    size_t n = (size_t)s->n;
    for (uint32_t b = 0; b < s->batch; ++b) {
        y[b] = (int32_t)ptec_cholesky_columns(x + (size_t)b * n * n, op->scratch, n, s->upper);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_cholesky_info_out = {"ptec::linalg_cholesky_info.out",
                                                               sizeof(cholesky_info_state), prepare, run};
