/* ptec::linalg_ldl_factor.out(Tensor self, int which, *, Tensor(a!) out)
 *
 * The LDL^T factorisation with Bunch-Kaufman pivoting of each matrix A of
 * self [..., n, n] (float32, rank 2 or more, n at least 1), read as the
 * symmetric matrix of its lower triangle (the upper one is not read), as
 * torch.linalg.ldl_factor_ex (hermitian=False, a real A):
 *   which 0: LD into out [..., n, n] (float32): D's 1x1 and 2x2 diagonal
 *            blocks on the diagonal (a 2x2 block's off-diagonal entry below
 *            it), L's multipliers below them (its unit diagonal not
 *            stored), zeros above the diagonal;
 *   which 1: the pivots into out [..., n] (int32, 1-based, LAPACK's and
 *            torch's convention): pivots[k] = p > 0, a 1x1 block at k after
 *            rows and columns k and p were swapped; pivots[k] =
 *            pivots[k+1] = -p, a 2x2 block at k after rows and columns k+1
 *            and p were swapped;
 *   which 2: info into out [...] (int32): 1 + the first k whose column was
 *            zero from the diagonal down (nothing eliminated there, pivot
 *            k itself), or 0.
 * Both tensors in the default dim order.
 *
 * The steps, column k from 0 (the Bunch-Kaufman partial pivoting LAPACK's
 * sytf2 documents, lower triangle, alpha = (1 + sqrt(17)) / 8 in float32):
 * a = |a_kk|, c = the first largest |a_ik|, i > k, at row r. a and c both
 * 0, or a NaN: a zero column (info), k is its own pivot. Else a 1x1 block
 * without a swap when a >= alpha c; else with w the largest |entry| of
 * row r left of the diagonal (columns k .. r-1) and of column r below it:
 * a 1x1 block without a swap when a >= (alpha c) (c / w), a 1x1 block on
 * r (swap k and r) when |a_rr| >= alpha w, else a 2x2 block on k and r
 * (swap k+1 and r). A swap of j and p > j exchanges, in the trailing
 * lower triangle, column j and column p below p, column j between them
 * with row p between them, the two diagonal entries, and (a 2x2 block)
 * a_{j,k} with a_{p,k}; the columns left of k are not touched (LAPACK's
 * L, the swaps between its columns). 1x1: d = 1 / a_kk, w_j = a_jk d,
 * a_ij -= a_ik w_j for i >= j > k, then a_jk = w_j. 2x2 (rows below
 * k+1 only): e = a_{k+1,k}, d11 = a_{k+1,k+1} / e, d22 = a_kk / e,
 * t = 1 / (d11 d22 - 1), f = t / e, for j > k+1: u_j = f (d11 a_jk -
 * a_{j,k+1}), v_j = f (d22 a_{j,k+1} - a_jk), a_ij -= a_ik u_j + a_{i,k+1}
 * v_j for i >= j, then a_jk = u_j, a_{j,k+1} = v_j. torch (LAPACK) makes
 * the same choices where no comparison is tied to rounding; its LD's
 * digits differ by the order of LAPACK's float arithmetic. No scaling and
 * no check for infinities or NaN: they propagate by IEEE arithmetic (a
 * NaN is never the larger |entry|; every index stays inside the matrix).
 *
 * Only +, -, * and / (no contraction, C11 ISO mode):
 * python/ptec/reference/linalg.py repeats them, its bytes are the
 * kernel's. Scratch: n n floats. Every size is checked at prepare, in
 * 64-bit arithmetic against 32-bit limits. */
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_WHICH = 1, ARG_OUT = 2, ARG_COUNT = 4 };
enum { WHICH_LD = 0, WHICH_PIVOTS = 1, WHICH_INFO = 2 };

typedef struct ldl_state {
    uint32_t batch; /* matrices */
    int32_t n;      /* each matrix's rows and columns */
    int32_t which;
} ldl_state;

static ptec_status prepare(ptec_op *op)
{
    ldl_state *s = op->state;
    ptec_tensor *self, *out;
    int32_t which;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, ARG_WHICH, &which)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (which < WHICH_LD || which > WHICH_INFO) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WHICH,
                            PTEC_MSG("which must be 0 (LD), 1 (pivots) or 2 (info)"));
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != (which == WHICH_LD ? PTEC_DTYPE_FLOAT : PTEC_DTYPE_INT)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF,
                            PTEC_MSG("self must be float32, out float32 for LD and int32 for the pivots and info"));
    }
    /* LD [..., n, n], the pivots [..., n], info [...]: 2 - which dims of n */
    int32_t n;
    uint32_t batch, scratch; /* the copy: n * n floats */
    if ((st = ptec_linalg_square_shapes(op, ARG_SELF, self, ARG_OUT, out, 2 - which, false,
                                        PTEC_MSG("self must be [..., n, n] and out of its rank (the pivots: one "
                                                 "less, info: two less)"),
                                        PTEC_MSG("out must be LD [..., n, n], the pivots [..., n] or info [...] "
                                                 "of self's batch"), &n, &batch)) != PTEC_OK ||
        (st = ptec_linalg_matrix_bytes(op, ARG_SELF, n, &scratch)) != PTEC_OK) {
        return st;
    }
    s->batch = batch;
    s->n = n;
    s->which = which;
    op->scratch_bytes = scratch;
    return PTEC_OK;
}

/* The first largest of |v[0]|, |v[step]|, ... (count >= 1 entries) by a
 * strict > scan (a NaN never larger; a NaN first stays): its index (0 ..
 * count) into *at, when at is not NULL; the value returned. */
static float first_max(const float *v, size_t count, size_t step, size_t *at)
{
    float best = fabsf(v[0]);
    size_t where = 0;
    for (size_t i = 1; i < count; ++i) {
        float x = fabsf(v[i * step]);
        if (x > best) {
            best = x;
            where = i;
        }
    }
    if (at) {
        *at = where;
    }
    return best;
}

static void swap(float *a, float *b)
{
    float t = *a;
    *a = *b;
    *b = t;
}

/* Swaps rows and columns j and p > j of the trailing lower triangle of a
 * (n x n, row-major). */
static void swap_symmetric(float *a, size_t n, size_t j, size_t p)
{
    for (size_t i = p + 1; i < n; ++i) {
        swap(&a[i * n + j], &a[i * n + p]);
    }
    for (size_t i = j + 1; i < p; ++i) {
        swap(&a[i * n + j], &a[p * n + i]);
    }
    swap(&a[j * n + j], &a[p * n + p]);
}

/* Bunch-Kaufman LDL^T of the n x n matrix a in place (the steps above):
 * the pivots (1-based, LAPACK's signs) into piv when not NULL; info
 * returned. */
static int32_t factor(float *a, size_t n, int32_t *piv)
{
    const float alpha = (1.0f + 4.12310562561766054982f) / 8.0f; /* (1 + sqrt(17)) / 8, float32 */
    int32_t info = 0;
    size_t k = 0;
    while (k < n) {
        size_t step = 1, r = k, kp = k;
        float absakk = fabsf(a[k * n + k]), colmax = 0.0f;
        if (k + 1 < n) {
            size_t at;
            colmax = first_max(&a[(k + 1) * n + k], n - k - 1, n, &at);
            r = k + 1 + at;
        }
        if ((absakk == 0.0f && colmax == 0.0f) || isnan(absakk)) {
            if (info == 0) {
                info = (int32_t)(k + 1);
            }
            if (piv) {
                piv[k] = (int32_t)(k + 1);
            }
            ++k;
            continue;
        }
        if (!(absakk >= alpha * colmax)) {
            float rowmax = first_max(&a[r * n + k], r - k, 1, NULL);
            if (r + 1 < n) {
                float below = first_max(&a[(r + 1) * n + r], n - r - 1, n, NULL);
                if (below > rowmax) {
                    rowmax = below;
                }
            }
            if (absakk >= (alpha * colmax) * (colmax / rowmax)) {
                kp = k;
            } else if (fabsf(a[r * n + r]) >= alpha * rowmax) {
                kp = r;
            } else {
                kp = r;
                step = 2;
            }
        }
        size_t kk = k + step - 1;
        if (kp != kk) {
            swap_symmetric(a, n, kk, kp);
            if (step == 2) {
                swap(&a[(k + 1) * n + k], &a[kp * n + k]);
            }
        }
        if (step == 1) {
            float d = 1.0f / a[k * n + k];
            for (size_t j = k + 1; j < n; ++j) {
                float w = a[j * n + k] * d;
                for (size_t i = j; i < n; ++i) {
                    a[i * n + j] = a[i * n + j] - a[i * n + k] * w;
                }
            }
            for (size_t j = k + 1; j < n; ++j) {
                a[j * n + k] = a[j * n + k] * d;
            }
            if (piv) {
                piv[k] = (int32_t)(kp + 1);
            }
        } else {
            if (k + 2 < n) {
                float e = a[(k + 1) * n + k];
                float d11 = a[(k + 1) * n + k + 1] / e, d22 = a[k * n + k] / e;
                float t = 1.0f / (d11 * d22 - 1.0f);
                float f = t / e;
                /* column j's u_j and v_j read a_jk and a_{j,k+1} before the columns after it are updated, which
                   read only rows i >= j + 1 of columns k and k + 1: stored after column j's update */
                for (size_t j = k + 2; j < n; ++j) {
                    float x = a[j * n + k], y = a[j * n + k + 1];
                    float u = f * (d11 * x - y), v = f * (d22 * y - x);
                    for (size_t i = j; i < n; ++i) {
                        a[i * n + j] = a[i * n + j] - (a[i * n + k] * u + a[i * n + k + 1] * v);
                    }
                    a[j * n + k] = u;
                    a[j * n + k + 1] = v;
                }
            }
            if (piv) {
                piv[k] = piv[k + 1] = -(int32_t)(kp + 1);
            }
        }
        k += step;
    }
    return info;
}

static ptec_status run(ptec_op *op)
{
    const ldl_state *s = op->state;
    const float *x = ptec_op_tensor(op, ARG_SELF)->data;
    ptec_tensor *t_out = ptec_op_tensor(op, ARG_OUT);
    size_t n = (size_t)s->n;
    float *w = op->scratch;
    for (uint32_t b = 0; b < s->batch; ++b) {
        memcpy(w, x + (size_t)b * n * n, n * n * sizeof(float));
        if (s->which == WHICH_LD) {
            (void)factor(w, n, NULL);
            float *y = (float *)t_out->data + (size_t)b * n * n;
            for (size_t i = 0; i < n; ++i) {
                for (size_t c = 0; c < n; ++c) {
                    y[i * n + c] = c <= i ? w[i * n + c] : 0.0f;
                }
            }
        } else if (s->which == WHICH_PIVOTS) {
            (void)factor(w, n, (int32_t *)t_out->data + (size_t)b * n);
        } else {
            ((int32_t *)t_out->data)[b] = factor(w, n, NULL);
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_ldl_factor_out = {"ptec::linalg_ldl_factor.out", sizeof(ldl_state), prepare,
                                                            run};
