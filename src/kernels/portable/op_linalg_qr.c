/* ptec::linalg_qr.out(Tensor self, int which, bool complete, *, Tensor(a!) out)
 *
 * The QR factorisation of each matrix A of self [..., m, n] (float32, rank
 * 2 or more, m and n at least 1), k = min(m, n), as torch.linalg.qr(A, mode):
 *   which 0: Q into out [..., m, k] (complete: [..., m, m]), orthonormal
 *            columns;
 *   which 1: R into out [..., k, n] (complete: [..., m, n]), upper
 *            triangular, A = Q R;
 *   which 2: torch.geqrf's a, LAPACK geqrf's compact form, into out
 *            [..., m, n]: R on and above the diagonal, below it each
 *            reflection's vector u_j (u_j's 1 on the diagonal not stored);
 *   which 3: torch.geqrf's tau into out [..., k]: H_j = I - tau_j u_j u_j^T.
 * complete is false for which 2 and 3.
 * Both tensors in the default dim order.
 *
 * Householder reflections on a scratch copy scaled by a power of two (exact
 * but for entries below 2^-126 of the largest, which go subnormal; the
 * largest |entry| in [0.5, 1), so no square overflows), LAPACK's convention
 * (dgeqrf / dlarfg): for column j < k, x = the column from row j down. Every
 * x_i below the diagonal exactly 0: H_j = I, tau_j = 0 (the column is
 * already reduced; R_jj stays x_0). Else, on y = x 2^-f with f the exponent
 * of the column's own largest |x_i| (as dnrm2 / dlarfg scale; so entries
 * tiny against the matrix's largest neither square to 0 nor make 1 / v_0
 * overflow): s = y_1^2 + ... (float32, rows in order), alpha =
 * -sign(y_0) sqrt(y_0^2 + s) (sign(+0) = +1, sign(-0) = -1, as LAPACK's
 * SIGN), tau_j = (alpha - y_0) / alpha, u = (1, y_1 (1 / (y_0 - alpha)),
 * ...), R_jj = alpha 2^f, and every later column c: g = tau_j (u . c),
 * c -= g u. Q = H_0 ... H_k-1 applied to the first columns of I, last
 * reflection first. R is scaled back. u (stored below the diagonal) and
 * tau are torch.geqrf's a and tau, which are ratios (the scalings cancel);
 * a column already reduced keeps its zeros below the diagonal, as
 * LAPACK's. So R's diagonal signs are LAPACK's, which
 * torch's follow (tests compare R and Q up to a sign per row of R / column
 * of Q all the same: A = Q R and Q^T Q = I are the oracle).
 *
 * Only +, -, *, / and sqrtf, in an order the reference interpreter repeats
 * (python/ptec/reference/linalg.py): its bytes are the kernel's. A matrix
 * holding an infinity or a NaN gives NaN for all of its out; a zero matrix
 * gives Q = I, R = 0 (a = 0, tau = 0). No iteration: k reflections.
 *
 * Scratch: m n + 2 k floats (the copy, v_0 and tau). Every size is checked at prepare, in 64-bit
 * arithmetic against 32-bit limits. */
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_WHICH = 1, ARG_COMPLETE = 2, ARG_OUT = 3, ARG_COUNT = 5 };
enum { WHICH_Q = 0, WHICH_R = 1, WHICH_A = 2, WHICH_TAU = 3 };

typedef struct qr_state {
    uint32_t batch;  /* matrices */
    int32_t m, n;    /* each matrix's rows and columns */
    int32_t which;
    uint8_t complete;
} qr_state;

static ptec_status prepare(ptec_op *op)
{
    qr_state *s = op->state;
    ptec_tensor *self, *out;
    int32_t which;
    bool complete;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, ARG_WHICH, &which)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, ARG_COMPLETE, &complete)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must be float32"));
    }
    if (which < WHICH_Q || which > WHICH_TAU) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WHICH,
                            PTEC_MSG("which must be 0 (Q), 1 (R), 2 (geqrf's a) or 3 (its tau)"));
    }
    if (which >= WHICH_A && complete) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_COMPLETE, PTEC_MSG("complete is for Q and R only"));
    }
    if ((st = ptec_linalg_expect_layout(op, ARG_SELF, self, ARG_OUT, out, which == WHICH_TAU ? 1 : 0,
                                        PTEC_MSG("self must be [..., m, n] and out of its rank (tau: one "
                                                 "less)"))) != PTEC_OK) {
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
    int out_rank = rank;
    if (which == WHICH_TAU) {
        want[rank - 2] = k;
        out_rank = rank - 1;
    } else {
        want[rank - 2] = which == WHICH_Q || which == WHICH_A ? m : (complete ? m : k);
        want[rank - 1] = which == WHICH_Q ? (complete ? m : k) : n;
    }
    if ((st = ptec_portable_expect_sizes(op, ARG_OUT, out, want, out_rank,
                                         PTEC_MSG("out must be Q [..., m, k or m], R [..., k or m, n], a [..., m, "
                                                  "n] or tau [..., k] of self's batch"))) != PTEC_OK) {
        return st;
    }
    /* the copy m n, v_0 and tau 2 k floats; out's m * m floats indexed in size_t */
    uint64_t floats = (uint64_t)m * (uint64_t)n + 2u * (uint64_t)k;
    if (floats > UINT32_MAX / sizeof(float) || (uint64_t)m * (uint64_t)m > UINT32_MAX / sizeof(float)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("matrix too large for the scratch"));
    }
    s->batch = batch;
    s->m = m;
    s->n = n;
    s->which = which;
    s->complete = complete;
    op->scratch_bytes = (uint32_t)(floats * sizeof(float));
    return PTEC_OK;
}

/* out's rows and columns for one matrix (tau: k rows of 1) */
static void out_dims(const qr_state *s, uint32_t *rows, uint32_t *cols)
{
    uint32_t m = (uint32_t)s->m, n = (uint32_t)s->n, k = m < n ? m : n;
    *rows = s->which == WHICH_Q || s->which == WHICH_A ? m : (s->which == WHICH_R && s->complete ? m : k);
    *cols = s->which == WHICH_Q ? (s->complete ? m : k) : (s->which == WHICH_TAU ? 1 : n);
}

static void one_matrix(const qr_state *s, const float *a, float *scratch, float *out)
{
    uint32_t m = (uint32_t)s->m, n = (uint32_t)s->n, k = m < n ? m : n;
    float *w = scratch, *v0 = w + (size_t)m * n, *taus = v0 + k;
    uint32_t orows, ocols;
    out_dims(s, &orows, &ocols);
    float big;
    if (!ptec_linalg_max_abs(a, (size_t)m * n, &big)) {
        ptec_linalg_fill_nan(out, (size_t)orows * ocols);
        return;
    }
    int e = 0;
    if (big > 0.0f) {
        (void)frexp((double)big, &e);
    }
    for (uint32_t i = 0; i < m * n; ++i) {
        w[i] = ptec_linalg_scale(a[i], -e);
    }
    /* H_j = I - tau_j u u^T, u = (1, x_j+1 / v_0, ...) (LAPACK's dlarfg): tau_j in taus[j], u below the
     * diagonal; x is reduced (tau 0) only when every entry below the diagonal is exactly 0. The norm, v_0
     * and tau are taken on the column scaled by 2^-f, f the exponent of its own largest |x_i| (exact), so
     * that entries far below the matrix's largest neither square to 0 nor make 1 / v_0 overflow. */
    for (uint32_t j = 0; j < k; ++j) {
        float x0 = w[j * n + j], col = fabsf(x0);
        bool reduced = true;
        for (uint32_t i = j + 1; i < m; ++i) {
            float x = w[i * n + j];
            reduced = reduced && x == 0.0f;
            col = fabsf(x) > col ? fabsf(x) : col;
        }
        if (reduced) {
            v0[j] = 0.0f;
            taus[j] = 0.0f;
            if (s->which == WHICH_TAU) {
                out[j] = 0.0f;
            }
            continue;
        }
        int f = 0;
        (void)frexp((double)col, &f);
        float y0 = ptec_linalg_scale(x0, -f), sub = 0.0f;
        for (uint32_t i = j + 1; i < m; ++i) {
            float y = ptec_linalg_scale(w[i * n + j], -f);
            sub = sub + y * y;
        }
        float norm = sqrtf(y0 * y0 + sub);
        float alpha = signbit(y0) ? norm : -norm;
        float tau = (alpha - y0) / alpha;
        if (s->which == WHICH_TAU) {
            out[j] = tau;
        }
        v0[j] = y0 - alpha;
        taus[j] = tau;
        float inv = 1.0f / v0[j];
        for (uint32_t i = j + 1; i < m; ++i) {
            w[i * n + j] = ptec_linalg_scale(w[i * n + j], -f) * inv;
        }
        for (uint32_t c = j + 1; c < n; ++c) {
            float d = w[j * n + c];
            for (uint32_t i = j + 1; i < m; ++i) {
                d = d + w[i * n + j] * w[i * n + c];
            }
            float g = tau * d;
            w[j * n + c] = w[j * n + c] - g;
            for (uint32_t i = j + 1; i < m; ++i) {
                w[i * n + c] = w[i * n + c] - g * w[i * n + j];
            }
        }
        w[j * n + j] = ptec_linalg_scale(alpha, f);
    }
    if (s->which == WHICH_TAU) {
        return;
    }
    if (s->which == WHICH_A) {
        for (uint32_t i = 0; i < m; ++i) {
            for (uint32_t c = 0; c < n; ++c) {
                float v = w[i * n + c];
                out[(size_t)i * n + c] = c >= i ? ptec_linalg_scale(v, e) : v;
            }
        }
        return;
    }
    if (s->which == WHICH_R) {
        for (uint32_t i = 0; i < orows; ++i) {
            for (uint32_t c = 0; c < n; ++c) {
                out[(size_t)i * n + c] = i < k && c >= i ? ptec_linalg_scale(w[i * n + c], e) : 0.0f;
            }
        }
        return;
    }
    /* Q = H_0 ... H_k-1 E, E the first ocols columns of I; the last reflection first */
    for (uint32_t i = 0; i < m; ++i) {
        for (uint32_t c = 0; c < ocols; ++c) {
            out[(size_t)i * ocols + c] = i == c ? 1.0f : 0.0f;
        }
    }
    for (uint32_t j = k; j-- > 0;) {
        if (taus[j] == 0.0f) {
            continue;
        }
        for (uint32_t c = 0; c < ocols; ++c) {
            float d = out[(size_t)j * ocols + c];
            for (uint32_t i = j + 1; i < m; ++i) {
                d = d + w[i * n + j] * out[(size_t)i * ocols + c];
            }
            float g = taus[j] * d;
            out[(size_t)j * ocols + c] = out[(size_t)j * ocols + c] - g;
            for (uint32_t i = j + 1; i < m; ++i) {
                out[(size_t)i * ocols + c] = out[(size_t)i * ocols + c] - g * w[i * n + j];
            }
        }
    }
}

static ptec_status run(ptec_op *op)
{
    const qr_state *s = op->state;
    const float *x = ptec_op_tensor(op, ARG_SELF)->data;
    float *y = ptec_op_tensor(op, ARG_OUT)->data;
    size_t m = (size_t)s->m, n = (size_t)s->n;
    uint32_t orows, ocols;
    out_dims(s, &orows, &ocols);
    size_t per_out = (size_t)orows * ocols;
    for (uint32_t b = 0; b < s->batch; ++b) {
        one_matrix(s, x + (size_t)b * m * n, op->scratch, y + (size_t)b * per_out);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_qr_out = {"ptec::linalg_qr.out", sizeof(qr_state), prepare, run};
