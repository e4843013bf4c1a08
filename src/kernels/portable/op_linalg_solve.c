/* ptec::linalg_solve.out(Tensor self, Tensor rhs, *, Tensor(a!) out)
 *
 * X = A^-1 B for each square matrix A of self [..., n, n] (float32, rank 2
 * or more, n at least 1) and B of rhs [..., n, k] (float32, self's rank;
 * its batch dims self's, or all 1: one B for every A), into out
 * [..., n, k] (float32, self's batch dims): torch.linalg.solve(A, B)
 * (left=True), and torch.linalg.inv with B the identity. All three in the
 * default dim order (the AOT passes contiguous ones).
 *
 * LU with partial pivoting of a scratch copy of A (linalg_lu.h), the row
 * swaps and the forward elimination applied to B copied into out as they
 * happen; then back substitution, row i = n-1 down to 0: x_i = (y_i -
 * u_i,i+1 x_i+1 - ... - u_i,n-1 x_n-1) / u_ii, subtracting in that order.
 * float32 -, * and / only: the reference interpreter repeats it bit for
 * bit. A singular A (a zero pivot) divides by 0: inf or NaN where torch
 * raises. An A holding an infinity or a NaN gives NaN for all of X.
 *
 * Scratch: n * n floats. Every size is checked at prepare, in 64-bit
 * arithmetic against 32-bit limits. */
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_lu.h"
#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_RHS = 1, ARG_OUT = 2, ARG_COUNT = 4 };

typedef struct solve_state {
    uint32_t batch;  /* matrices */
    int32_t n;       /* each matrix's rows and columns */
    int32_t k;       /* B's columns */
    uint8_t shared;  /* one B for every A */
} solve_state;

static ptec_status prepare(ptec_op *op)
{
    solve_state *s = op->state;
    ptec_tensor *self, *rhs, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_RHS, &rhs)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || rhs->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self, rhs and out must be float32"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, ARG_OUT, PTEC_MSG("out must not be a constant tensor"));
    }
    if (self->rank < 2 || rhs->rank != self->rank || out->rank != self->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("self must be [..., n, n], rhs and out [..., n, k]"));
    }
    if (!ptec_linalg_default_order(self) || !ptec_linalg_default_order(rhs) || !ptec_linalg_default_order(out)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self, rhs and out must be in the default dim order"));
    }
    int rank = self->rank;
    int32_t n = self->sizes[rank - 1], k = rhs->sizes[rank - 1];
    if (self->sizes[rank - 2] != n) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("self's matrices must be square"));
    }
    if (n < 1 || k < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("empty matrices"));
    }
    if (rhs->sizes[rank - 2] != n) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_RHS, PTEC_MSG("rhs must have n rows"));
    }
    int32_t want[PTEC_MAX_RANK];
    uint64_t batch = 1;
    bool same = true, ones = true;
    for (int d = 0; d < rank - 2; ++d) {
        if (self->sizes[d] < 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("negative size"));
        }
        want[d] = self->sizes[d];
        same = same && rhs->sizes[d] == self->sizes[d];
        ones = ones && rhs->sizes[d] == 1;
        batch *= (uint64_t)self->sizes[d];
        if (batch > UINT32_MAX) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("too many matrices"));
        }
    }
    if (!same && !ones) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_RHS, PTEC_MSG("rhs's batch dims must be self's or all 1"));
    }
    want[rank - 2] = n;
    want[rank - 1] = k;
    if ((st = ptec_portable_expect_sizes(op, ARG_OUT, out, want, rank,
                                         PTEC_MSG("out must be [..., n, k] of self's batch"))) != PTEC_OK) {
        return st;
    }
    /* the copy of A: n * n floats, at most 2^31 * 2^31 * 4 < 2^64 */
    uint64_t scratch = (uint64_t)n * (uint64_t)n * sizeof(float);
    if (scratch > UINT32_MAX || (uint64_t)n * (uint64_t)k * sizeof(float) > UINT32_MAX) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("matrix too large for the scratch"));
    }
    s->batch = (uint32_t)batch;
    s->n = n;
    s->k = k;
    s->shared = !same;
    op->scratch_bytes = (uint32_t)scratch;
    return PTEC_OK;
}

static void one_system(const float *a, const float *b, float *w, float *x, uint32_t n, uint32_t k)
{
    size_t count = (size_t)n * n, per = (size_t)n * k;
    if (!ptec_lu_all_finite(a, count)) {
        ptec_linalg_fill_nan(x, per);
        return;
    }
    memcpy(w, a, count * sizeof(float));
    memcpy(x, b, per * sizeof(float));
    (void)ptec_lu_factor(w, n, x, k);
    for (uint32_t i = n; i-- > 0;) {
        for (uint32_t c = 0; c < k; ++c) {
            float v = x[i * k + c];
            for (uint32_t j = i + 1; j < n; ++j) {
                v = v - w[i * n + j] * x[j * k + c];
            }
            x[i * k + c] = v / w[i * n + i];
        }
    }
}

static ptec_status run(ptec_op *op)
{
    const solve_state *s = op->state;
    const float *a = ptec_op_tensor(op, ARG_SELF)->data, *b = ptec_op_tensor(op, ARG_RHS)->data;
    float *x = ptec_op_tensor(op, ARG_OUT)->data;
    size_t n = (size_t)s->n, per = n * (size_t)s->k;
    for (uint32_t m = 0; m < s->batch; ++m) {
        one_system(a + (size_t)m * n * n, b + (s->shared ? 0 : (size_t)m * per), op->scratch, x + (size_t)m * per,
                   (uint32_t)n, (uint32_t)s->k);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_solve_out = {"ptec::linalg_solve.out", sizeof(solve_state), prepare, run};
