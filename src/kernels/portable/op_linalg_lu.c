/* ptec::linalg_lu.out(Tensor self, int which, *, Tensor(a!) out)
 *
 * The LU factorisation with partial pivoting of each matrix A of self
 * [..., m, n] (float32, rank 2 or more, m and n at least 1), k = min(m, n),
 * as torch.linalg.lu_factor / torch.linalg.lu (A = P L U):
 *   which 0: LU into out [..., m, n] (float32), L's multipliers below the
 *            diagonal (its unit diagonal not stored), U on and above it;
 *   which 1: the pivots into out [..., k] (int32): row k was swapped with
 *            row pivots[k] (1-based, LAPACK's and torch's convention);
 *   which 2: P into out [..., m, m] (float32), the permutation matrix;
 *   which 3: L into out [..., m, k] (float32), unit lower trapezoidal;
 *   which 4: U into out [..., k, n] (float32), upper trapezoidal.
 * Both tensors in the default dim order.
 *
 * The factorisation is linalg_lu.h's ptec_lu_factor_rect (det and solve's,
 * on an m x n copy): the pivot of column j is the first row of the largest
 * |entry| from row j down (LAPACK getrf's rule: torch's pivots wherever the
 * largest is not tied to rounding), a column of zeros skipped (its pivot j
 * itself, nothing eliminated: a singular A still factors, as torch's
 * lu_factor_ex). P = S_0 S_1 ... S_k-1, S_j the swap of rows j and
 * pivots[j] (P^T A = L U): the identity with those rows swapped, the last
 * swap first. No scaling and no check for infinities or NaN: they
 * propagate by IEEE arithmetic (a NaN is never the larger |entry|, as in
 * getrf's idamax).
 *
 * Only -, * and / (python/ptec/reference/linalg.py repeats them: its bytes
 * are the kernel's). Scratch: m n floats and k uint32. Every size is
 * checked at prepare, in 64-bit arithmetic against 32-bit limits. */
#include <string.h>

#include "kernels/portable/linalg_common.h"
#include "kernels/portable/linalg_lu.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_WHICH = 1, ARG_OUT = 2, ARG_COUNT = 4 };
enum { WHICH_LU = 0, WHICH_PIVOTS = 1, WHICH_P = 2, WHICH_L = 3, WHICH_U = 4 };

typedef struct lu_state {
    uint32_t batch; /* matrices */
    int32_t m, n;   /* each matrix's rows and columns */
    int32_t which;
} lu_state;

static ptec_status prepare(ptec_op *op)
{
    lu_state *s = op->state;
    ptec_tensor *self, *out;
    int32_t which;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, ARG_WHICH, &which)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (which < WHICH_LU || which > WHICH_U) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WHICH,
                            PTEC_MSG("which must be 0 (LU), 1 (pivots), 2 (P), 3 (L) or 4 (U)"));
    }
    if (self->dtype != PTEC_DTYPE_FLOAT ||
        out->dtype != (which == WHICH_PIVOTS ? PTEC_DTYPE_INT : PTEC_DTYPE_FLOAT)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF,
                            PTEC_MSG("self must be float32, out int32 for the pivots and float32 otherwise"));
    }
    int drop = which == WHICH_PIVOTS ? 1 : 0;
    if ((st = ptec_linalg_expect_layout(op, ARG_SELF, self, ARG_OUT, out, drop,
                                        PTEC_MSG("self must be [..., m, n] and out of its rank (the pivots: one less)"))) !=
        PTEC_OK) {
        return st;
    }
    int rank = self->rank;
    int32_t m = self->sizes[rank - 2], n = self->sizes[rank - 1];
    if (m < 1 || n < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("empty matrices"));
    }
    int32_t k = m < n ? m : n;
    int32_t want[PTEC_MAX_RANK];
    uint32_t batch;
    if ((st = ptec_linalg_batch(op, ARG_SELF, self, want, &batch)) != PTEC_OK) {
        return st;
    }
    int32_t rows[] = {m, k, m, m, k}, cols[] = {n, 0, m, k, n};
    int out_rank = rank - drop;
    if (which == WHICH_PIVOTS) {
        want[rank - 2] = k;
    } else {
        want[rank - 2] = rows[which];
        want[rank - 1] = cols[which];
    }
    if ((st = ptec_portable_expect_sizes(op, ARG_OUT, out, want, out_rank,
                                         PTEC_MSG("out must be LU [..., m, n], the pivots [..., k], P [..., m, m], "
                                                  "L [..., m, k] or U [..., k, n] of self's batch"))) != PTEC_OK) {
        return st;
    }
    /* the copy m n floats and the pivots k uint32; P's m * m floats indexed in uint32 */
    uint64_t words = (uint64_t)m * (uint64_t)n + (uint64_t)k;
    if (words > UINT32_MAX / sizeof(float) || (uint64_t)m * (uint64_t)m > UINT32_MAX / sizeof(float)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("matrix too large for the scratch"));
    }
    s->batch = batch;
    s->m = m;
    s->n = n;
    s->which = which;
    op->scratch_bytes = (uint32_t)(words * sizeof(float));
    return PTEC_OK;
}

static void one_matrix(const lu_state *s, const float *a, void *scratch, void *out)
{
    uint32_t m = (uint32_t)s->m, n = (uint32_t)s->n, k = m < n ? m : n;
    float *w = scratch;
    uint32_t *piv = (uint32_t *)(w + (size_t)m * n);
    memcpy(w, a, (size_t)m * n * sizeof(float));
    (void)ptec_lu_factor_rect(w, m, n, NULL, 0, piv);
    float *y = out;
    switch (s->which) {
    case WHICH_LU:
        memcpy(y, w, (size_t)m * n * sizeof(float));
        return;
    case WHICH_PIVOTS: {
        int32_t *p = out;
        for (uint32_t j = 0; j < k; ++j) {
            p[j] = (int32_t)piv[j] + 1;
        }
        return;
    }
    case WHICH_P:
        /* P = S_0 S_1 ... S_k-1 (S_j swaps rows j and piv[j]): I with those swaps applied, the last first */
        for (uint32_t i = 0; i < m; ++i) {
            for (uint32_t c = 0; c < m; ++c) {
                y[(size_t)i * m + c] = i == c ? 1.0f : 0.0f;
            }
        }
        for (uint32_t j = k; j-- > 0;) {
            if (piv[j] != j) {
                ptec_lu_swap_rows(y, m, piv[j], j);
            }
        }
        return;
    case WHICH_L:
        for (uint32_t i = 0; i < m; ++i) {
            for (uint32_t c = 0; c < k; ++c) {
                y[(size_t)i * k + c] = c < i ? w[i * n + c] : (c == i ? 1.0f : 0.0f);
            }
        }
        return;
    default:
        for (uint32_t i = 0; i < k; ++i) {
            for (uint32_t c = 0; c < n; ++c) {
                y[(size_t)i * n + c] = c >= i ? w[i * n + c] : 0.0f;
            }
        }
        return;
    }
}

static ptec_status run(ptec_op *op)
{
    const lu_state *s = op->state;
    const float *x = ptec_op_tensor(op, ARG_SELF)->data;
    ptec_tensor *t_out = ptec_op_tensor(op, ARG_OUT);
    size_t m = (size_t)s->m, n = (size_t)s->n, k = m < n ? m : n;
    size_t per_out[] = {m * n, k, m * m, m * k, k * n};
    size_t step = per_out[s->which];
    for (uint32_t b = 0; b < s->batch; ++b) {
        void *y = s->which == WHICH_PIVOTS ? (void *)((int32_t *)t_out->data + (size_t)b * step)
                                           : (void *)((float *)t_out->data + (size_t)b * step);
        one_matrix(s, x + (size_t)b * m * n, op->scratch, y);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_lu_out = {"ptec::linalg_lu.out", sizeof(lu_state), prepare, run};
