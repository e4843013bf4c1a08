/* ptec::linalg_triangular_solve.out(Tensor self, Tensor rhs, bool upper,
 *     bool transpose, bool unitriangular, *, Tensor(a!) out)
 *
 * X = op(T)^-1 B for each triangular matrix T of self [..., n, n] (float32,
 * rank 2 or more, n at least 1; only its upper triangle is read when upper,
 * else its lower one) and B of rhs [..., n, k] (float32, self's rank; its
 * batch dims self's, or all 1: one B for every T), into out [..., n, k]
 * (float32, self's batch dims). op(T) is T, or T^T when transpose;
 * unitriangular takes T's diagonal as 1s without reading it. As
 * torch.linalg.solve_triangular(T, B, upper=, left=True, unitriangular=)
 * and torch.triangular_solve(B, T, upper, transpose, unitriangular)'s
 * solution; torch.cholesky_solve(B, L) is two of them (L, then L^T). All
 * three tensors in the default dim order; out must not share rhs's memory.
 *
 * op(T) is lower triangular when upper == transpose: forward substitution,
 * row 0 first; else backward, row n-1 first. Row i: x_i = (b_i - t_ij x_j
 * ... over the rows j already solved, in the order solved) / t_ii,
 * float32 -, * and / only: the reference interpreter repeats it bit for
 * bit. A zero on the diagonal divides by 0 (inf / NaN, as torch's
 * float32 solve_triangular). A T whose read triangle holds an inf or a NaN
 * gives NaN for all of its X.
 *
 * No scratch. Every size is checked at prepare, in 64-bit arithmetic
 * against 32-bit limits. */
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_RHS = 1, ARG_UPPER = 2, ARG_TRANSPOSE = 3, ARG_UNIT = 4, ARG_OUT = 5, ARG_COUNT = 7 };

typedef struct trisolve_state {
    uint32_t batch;   /* matrices */
    int32_t n;        /* each matrix's rows and columns */
    int32_t k;        /* B's columns */
    uint8_t shared;   /* one B for every T */
    uint8_t upper;    /* T's upper triangle read */
    uint8_t transpose;
    uint8_t unit;     /* the diagonal taken as 1s */
} trisolve_state;

static ptec_status prepare(ptec_op *op)
{
    trisolve_state *s = op->state;
    ptec_tensor *self, *rhs, *out;
    bool upper, transpose, unit;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_RHS, &rhs)) != PTEC_OK || (st = ptec_op_get_bool(op, ARG_UPPER, &upper)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, ARG_TRANSPOSE, &transpose)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, ARG_UNIT, &unit)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
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
    /* one T's and one X's floats, indexed in size_t: at most 2^32 - 1 bytes each (a 32-bit size_t) */
    if ((uint64_t)n * (uint64_t)n * sizeof(float) > UINT32_MAX || (uint64_t)n * (uint64_t)k * sizeof(float) > UINT32_MAX) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("matrix too large"));
    }
    s->batch = (uint32_t)batch;
    s->n = n;
    s->k = k;
    s->shared = !same;
    s->upper = upper;
    s->transpose = transpose;
    s->unit = unit;
    return PTEC_OK;
}

static void one_system(const trisolve_state *s, const float *t, const float *b, float *x)
{
    size_t n = (size_t)s->n, k = (size_t)s->k;
    bool finite = true;
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) {
            bool read = s->upper ? j >= i : j <= i;
            if (read && !(s->unit && i == j)) {
                finite = finite && fabsf(t[i * n + j]) <= 3.40282347e+38f;
            }
        }
    }
    if (!finite) {
        ptec_linalg_fill_nan(x, n * k);
        return;
    }
    /* op(T)[i][j] */
#define OP_AT(i, j) (s->transpose ? t[(j) * n + (i)] : t[(i) * n + (j)])
    bool forward = s->upper == s->transpose;
    for (size_t step = 0; step < n; ++step) {
        size_t i = forward ? step : n - 1 - step;
        for (size_t c = 0; c < k; ++c) {
            float v = b[i * k + c];
            for (size_t done = 0; done < step; ++done) {
                size_t j = forward ? done : n - 1 - done;
                v = v - OP_AT(i, j) * x[j * k + c];
            }
            x[i * k + c] = s->unit ? v : v / OP_AT(i, i);
        }
    }
#undef OP_AT
}

static ptec_status run(ptec_op *op)
{
    const trisolve_state *s = op->state;
    const float *t = ptec_op_tensor(op, ARG_SELF)->data, *b = ptec_op_tensor(op, ARG_RHS)->data;
    float *x = ptec_op_tensor(op, ARG_OUT)->data;
    size_t n = (size_t)s->n, per = n * (size_t)s->k;
    for (uint32_t m = 0; m < s->batch; ++m) {
        one_system(s, t + (size_t)m * n * n, b + (s->shared ? 0 : (size_t)m * per), x + (size_t)m * per);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_triangular_solve_out = {"ptec::linalg_triangular_solve.out",
                                                                  sizeof(trisolve_state), prepare, run};
