/* ptec::linalg_svd.out(Tensor self, int which, bool full_matrices, float rtol, *, Tensor(a!) out)
 *
 * The singular vectors of each matrix A of self [..., m, n] (float32, rank
 * 2 or more, m and n at least 1), in the order of ptec::linalg_svdvals.out's
 * values (largest first), with k = min(m, n):
 *   which 0: U into out [..., m, k] (full_matrices: [..., m, m]);
 *   which 1: V^T (torch's Vh) into out [..., k, n] (full: [..., n, n]);
 *   which 2: the pseudo-inverse V diag(1 / s) U^T into out [..., n, m],
 *            1 / s taken for the values s > rtol * s_max only (0 for the
 *            others: torch.linalg.pinv's rule with atol 0).
 * So A = U diag(S) Vh as torch.linalg.svd(A, full_matrices) with S
 * linalg_svdvals.out's values. Both tensors in the default dim order.
 *
 * op_linalg_svdvals.c's one-sided Jacobi step for step (the same scaling,
 * threshold, rotations, sweeps and stop, so the same values in the same
 * order), each rotation also applied to the columns of K = I (k x k). W's
 * columns are then A V (A tall: V = K, U's columns W's normalised) or A^T U
 * (A wide: U = K, V's columns W's normalised). A column whose norm is at
 * most p FLT_EPSILON times the largest (a zero or rounding-size singular
 * value, p = max(m, n)), and the columns full_matrices adds, are completed
 * to an orthonormal basis: the first unit vector e_0, e_1, ... that keeps
 * a norm above 1/2 after classical Gram-Schmidt against the columns before
 * it (twice), normalised. Signs: each pair (u_j, v_j) is flipped together so
 * that u_j's first largest-magnitude component is positive (a completed
 * column, alone, likewise): singular vectors are defined up to such a sign
 * (and within a repeated value's space up to rotation), torch's follow
 * LAPACK's algorithm; this normalisation makes ptec's answer unique.
 *
 * Only +, -, *, / and sqrtf, in an order the reference interpreter repeats
 * (python/ptec/reference/linalg.py): its bytes are the kernel's. A matrix
 * holding an infinity or a NaN gives NaN for all of its out.
 *
 * Scratch: k p + k k + p p + 3 k floats (W, K, the p-side columns, the
 * values, the norms, the order). Every size is checked at prepare, in
 * 64-bit arithmetic against 32-bit limits. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_WHICH = 1, ARG_FULL = 2, ARG_RTOL = 3, ARG_OUT = 4, ARG_COUNT = 6 };
enum { WHICH_U = 0, WHICH_VH = 1, WHICH_PINV = 2 };

/* sweeps at most: linalg_svdvals.out's */
#define MAX_SWEEPS 30

typedef struct svd_state {
    uint32_t batch;  /* matrices */
    int32_t m, n;    /* each matrix's rows and columns */
    int32_t which;
    uint8_t full;
    float rtol;
} svd_state;

static ptec_status prepare(ptec_op *op)
{
    svd_state *s = op->state;
    ptec_tensor *self, *out;
    int32_t which;
    bool full;
    double rtol;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, ARG_WHICH, &which)) != PTEC_OK || (st = ptec_op_get_bool(op, ARG_FULL, &full)) != PTEC_OK ||
        (st = ptec_op_get_double(op, ARG_RTOL, &rtol)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must be float32"));
    }
    if (which < WHICH_U || which > WHICH_PINV) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WHICH, PTEC_MSG("which must be 0 (U), 1 (Vh) or 2 (pinv)"));
    }
    if (!(rtol >= 0.0 && rtol <= 1.0)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_RTOL, PTEC_MSG("rtol must be in [0, 1]"));
    }
    if ((st = ptec_linalg_expect_layout(op, ARG_SELF, self, ARG_OUT, out, 0,
                                        PTEC_MSG("self must be [..., m, n] and out of its rank"))) != PTEC_OK) {
        return st;
    }
    int rank = self->rank;
    int32_t m = self->sizes[rank - 2], n = self->sizes[rank - 1];
    if (m < 1 || n < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("empty matrices"));
    }
    int32_t k = m < n ? m : n, p = m < n ? n : m;
    int32_t want[PTEC_MAX_RANK];
    uint32_t batch;
    if ((st = ptec_linalg_batch(op, ARG_SELF, self, want, &batch)) != PTEC_OK) {
        return st;
    }
    want[rank - 2] = which == WHICH_U ? m : which == WHICH_VH ? (full ? n : k) : n;
    want[rank - 1] = which == WHICH_U ? (full ? m : k) : which == WHICH_VH ? n : m;
    if ((st = ptec_portable_expect_sizes(op, ARG_OUT, out, want, rank,
                                         PTEC_MSG("out must be U [..., m, k or m], Vh [..., k or n, n] or pinv "
                                                  "[..., n, m] of self's batch"))) != PTEC_OK) {
        return st;
    }
    /* W k p, K k k, the p-side columns p p, values / norms / order 3 k floats: each term below 2^62 */
    uint64_t floats = (uint64_t)k * (uint64_t)p + (uint64_t)k * (uint64_t)k + (uint64_t)p * (uint64_t)p + 3u * (uint64_t)k;
    if (floats > UINT32_MAX / sizeof(float)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("matrix too large for the scratch"));
    }
    s->batch = batch;
    s->m = m;
    s->n = n;
    s->which = which;
    s->full = full;
    s->rtol = (float)rtol;
    op->scratch_bytes = (uint32_t)(floats * sizeof(float));
    return PTEC_OK;
}

/* sum_i a[i] * b[i], float32, i in order */
static float dot(const float *a, const float *b, uint32_t len)
{
    float acc = 0.0f;
    for (uint32_t i = 0; i < len; ++i) {
        acc = acc + a[i] * b[i];
    }
    return acc;
}

/* Rotates columns x and y (length len) orthogonal when they are not
 * already, and V's columns vx and vy (length k) alike; returns whether it
 * rotated. */
static bool rotate(float *x, float *y, uint32_t len, float *vx, float *vy, uint32_t k, float tol)
{
    float alpha = dot(x, x, len), beta = dot(y, y, len), gamma = dot(x, y, len);
    if (!(fabsf(gamma) > tol * sqrtf(alpha) * sqrtf(beta))) {
        return false;
    }
    float zeta = (beta - alpha) / (2.0f * gamma);
    float t = ptec_linalg_jacobi_tangent(zeta);
    float c = 1.0f / sqrtf(1.0f + t * t);
    float sn = c * t;
    for (uint32_t i = 0; i < len; ++i) {
        float a = x[i], b = y[i];
        x[i] = c * a - sn * b;
        y[i] = sn * a + c * b;
    }
    for (uint32_t i = 0; i < k; ++i) {
        float a = vx[i], b = vy[i];
        vx[i] = c * a - sn * b;
        vy[i] = sn * a + c * b;
    }
    return true;
}

/* Column c (length len, at cols + c * len) completed: the first unit vector
 * e_i whose remainder after Gram-Schmidt against columns 0..c-1 (twice)
 * keeps a norm above 1/2, normalised. */
static void complete(float *cols, uint32_t len, uint32_t c)
{
    float *v = cols + c * len;
    for (uint32_t i = 0; i < len; ++i) {
        for (uint32_t r = 0; r < len; ++r) {
            v[r] = r == i ? 1.0f : 0.0f;
        }
        for (int pass = 0; pass < 2; ++pass) {
            for (uint32_t j = 0; j < c; ++j) {
                const float *q = cols + j * len;
                float d = dot(q, v, len);
                for (uint32_t r = 0; r < len; ++r) {
                    v[r] = v[r] - d * q[r];
                }
            }
        }
        float norm = sqrtf(dot(v, v, len));
        if (norm > 0.5f) {
            for (uint32_t r = 0; r < len; ++r) {
                v[r] = v[r] / norm;
            }
            return;
        }
    }
}

/* Whether column v (length len)'s first largest |component| is negative. */
static bool negative(const float *v, uint32_t len)
{
    uint32_t top = 0;
    for (uint32_t r = 1; r < len; ++r) {
        if (fabsf(v[r]) > fabsf(v[top])) {
            top = r;
        }
    }
    return v[top] < 0.0f;
}

static void negate(float *v, uint32_t len)
{
    for (uint32_t r = 0; r < len; ++r) {
        v[r] = -v[r];
    }
}

static void one_matrix(const svd_state *s, const float *a, float *scratch, float *out)
{
    uint32_t rows = (uint32_t)s->m, cols = (uint32_t)s->n;
    bool tall = rows >= cols;
    uint32_t k = tall ? cols : rows, p = tall ? rows : cols;
    float *w = scratch, *kv = w + (size_t)k * p, *pc = kv + (size_t)k * k, *sv = pc + (size_t)p * p, *nrm = sv + k;
    uint32_t *order = (uint32_t *)(nrm + k);
    size_t out_count = s->which == WHICH_U ? (size_t)rows * (s->full ? rows : k)
                       : s->which == WHICH_VH ? (size_t)(s->full ? cols : k) * cols : (size_t)rows * cols;
    /* the largest |entry|; any non-finite entry makes all of out NaN */
    float big;
    if (!ptec_linalg_max_abs(a, (size_t)rows * cols, &big)) {
        ptec_linalg_fill_nan(out, out_count);
        return;
    }
    int e = 0;
    if (big > 0.0f) {
        (void)frexp((double)big, &e); /* big = f * 2^e, f in [0.5, 1) */
    }
    /* W column j (length p) at w + j * p: A's column j, or row j of a wide A */
    for (uint32_t i = 0; i < rows; ++i) {
        for (uint32_t j = 0; j < cols; ++j) {
            float v = ptec_linalg_scale(a[i * cols + j], -e);
            if (tall) {
                w[j * p + i] = v;
            } else {
                w[i * p + j] = v;
            }
        }
    }
    for (uint32_t i = 0; i < k; ++i) {
        for (uint32_t j = 0; j < k; ++j) {
            kv[i * k + j] = i == j ? 1.0f : 0.0f;
        }
    }
    float tol = (float)p * FLT_EPSILON;
    for (int sweep = 0; big > 0.0f && sweep < MAX_SWEEPS; ++sweep) {
        bool rotated = false;
        for (uint32_t j = 0; j + 1 < k; ++j) {
            for (uint32_t l = j + 1; l < k; ++l) {
                rotated |= rotate(w + j * p, w + l * p, p, kv + j * k, kv + l * k, k, tol);
            }
        }
        if (!rotated) {
            break;
        }
    }
    /* the values (linalg_svdvals.out's) and their order: a stable insertion sort, largest first */
    for (uint32_t j = 0; j < k; ++j) {
        const float *col = w + j * p;
        nrm[j] = sqrtf(dot(col, col, p));
        float v = ptec_linalg_scale(nrm[j], e);
        uint32_t at = j;
        while (at > 0 && sv[at - 1] < v) {
            sv[at] = sv[at - 1];
            order[at] = order[at - 1];
            --at;
        }
        sv[at] = v;
        order[at] = j;
    }
    /* the p-side columns in that order: W's normalised, a rounding-size one (sorted last) completed,
     * then the ones full_matrices adds */
    float small = (float)p * FLT_EPSILON * nrm[order[0]];
    uint32_t p_count = (s->full && s->which == (tall ? WHICH_U : WHICH_VH)) ? p : k;
    for (uint32_t t = 0; t < p_count; ++t) {
        if (t < k && nrm[order[t]] > small) {
            const float *col = w + order[t] * p;
            for (uint32_t r = 0; r < p; ++r) {
                pc[t * p + r] = col[r] / nrm[order[t]];
            }
        } else {
            complete(pc, p, t);
        }
    }
    /* the k-side columns (K's) in that order, over W (k * k <= k * p floats, no longer read) */
    float *kc = w;
    for (uint32_t t = 0; t < k; ++t) {
        memcpy(kc + t * k, kv + order[t] * k, k * sizeof(float));
    }
    /* signs: u_t's first largest |component| positive, v_t flipped with it; the added columns alone */
    for (uint32_t t = 0; t < p_count; ++t) {
        bool flip = t < k ? negative(tall ? pc + t * p : kc + t * k, tall ? p : k) : negative(pc + t * p, p);
        if (flip) {
            negate(pc + t * p, p);
            if (t < k) {
                negate(kc + t * k, k);
            }
        }
    }
    /* U[i][t], V[i][t] of the sides */
#define U_AT(i, t) (tall ? pc[(t) * p + (i)] : kc[(t) * k + (i)])
#define V_AT(i, t) (tall ? kc[(t) * k + (i)] : pc[(t) * p + (i)])
    if (s->which == WHICH_U) {
        uint32_t ucols = s->full ? rows : k;
        for (uint32_t i = 0; i < rows; ++i) {
            for (uint32_t t = 0; t < ucols; ++t) {
                out[(size_t)i * ucols + t] = U_AT(i, t);
            }
        }
    } else if (s->which == WHICH_VH) {
        uint32_t vrows = s->full ? cols : k;
        for (uint32_t t = 0; t < vrows; ++t) {
            for (uint32_t i = 0; i < cols; ++i) {
                out[(size_t)t * cols + i] = V_AT(i, t);
            }
        }
    } else {
        /* 1 / s_t for s_t > rtol * s_max, else 0 (into nrm, no longer read) */
        float limit = s->rtol * sv[0];
        for (uint32_t t = 0; t < k; ++t) {
            nrm[t] = sv[t] > limit ? 1.0f / sv[t] : 0.0f;
        }
        for (uint32_t i = 0; i < cols; ++i) {
            for (uint32_t r = 0; r < rows; ++r) {
                float acc = 0.0f;
                for (uint32_t t = 0; t < k; ++t) {
                    acc = acc + V_AT(i, t) * nrm[t] * U_AT(r, t);
                }
                out[(size_t)i * rows + r] = acc;
            }
        }
    }
#undef U_AT
#undef V_AT
}

static ptec_status run(ptec_op *op)
{
    const svd_state *s = op->state;
    const float *x = ptec_op_tensor(op, ARG_SELF)->data;
    float *y = ptec_op_tensor(op, ARG_OUT)->data;
    size_t m = (size_t)s->m, n = (size_t)s->n, k = m < n ? m : n;
    size_t per_out = s->which == WHICH_U ? m * (s->full ? m : k) : s->which == WHICH_VH ? (s->full ? n : k) * n : m * n;
    for (uint32_t b = 0; b < s->batch; ++b) {
        one_matrix(s, x + (size_t)b * m * n, op->scratch, y + (size_t)b * per_out);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_svd_out = {"ptec::linalg_svd.out", sizeof(svd_state), prepare, run};
