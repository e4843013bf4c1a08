/* ptec::linalg_svdvals.out(Tensor self, *, Tensor(a!) out)
 *
 * The singular values of each matrix of self [..., m, n] (float32, rank 2
 * or more, m and n at least 1), largest first, into out [..., min(m, n)]
 * (float32), as torch.linalg.svdvals. Both tensors in the default dim
 * order (the AOT passes contiguous ones).
 *
 * One-sided Jacobi (Hestenes) on a copy of the matrix in scratch: the copy
 * W holds k = min(m, n) columns of length p = max(m, n) (A's columns, or
 * its rows when m < n: A and A^T have the same singular values), scaled by
 * a power of two (exact) so that the largest |entry| is in [0.5, 1) and no
 * square overflows. A sweep visits every pair (j, l), j < l, in row-major
 * order; with alpha = |w_j|^2, beta = |w_l|^2, gamma = w_j . w_l (float32
 * sums over the rows in order), a pair is rotated when
 * |gamma| > TOL * sqrt(alpha) * sqrt(beta), TOL = p * FLT_EPSILON, by the
 * plane rotation that makes the two columns orthogonal:
 * zeta = (beta - alpha) / (2 gamma), t = sign(zeta) / (|zeta| +
 * sqrt(1 + zeta^2)) (1 / (2 zeta) where |zeta| > 2^30), c = 1 /
 * sqrt(1 + t^2), s = c t; w_j <- c w_j - s w_l, w_l <- s w_j + c w_l. The
 * matrix is done after a sweep that rotates no pair (a further sweep would
 * leave it unchanged) or after MAX_SWEEPS sweeps, whichever comes first:
 * the run's cost is bounded and every step is determined by the input.
 * The singular values are the columns' norms, scaled back and sorted
 * descending (insertion sort).
 *
 * Only +, -, *, / and sqrtf, in an order the reference interpreter repeats
 * (python/ptec/reference/linalg.py): its bytes are the kernel's. A matrix
 * holding an infinity or a NaN gives NaN for all its values; a zero matrix
 * gives zeros.
 *
 * Scratch: k * p floats. Every size is checked at prepare, in 64-bit
 * arithmetic against 32-bit limits. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_OUT = 1, ARG_COUNT = 3 };

/* sweeps at most: Jacobi converges quadratically, in 5 to 10 sweeps for
 * the sizes a microcontroller meets */
#define MAX_SWEEPS 30

typedef struct svdvals_state {
    uint32_t batch; /* matrices */
    int32_t m, n;   /* each matrix's rows and columns */
} svdvals_state;

static ptec_status prepare(ptec_op *op)
{
    svdvals_state *s = op->state;
    ptec_tensor *self, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must be float32"));
    }
    if ((st = ptec_linalg_expect_layout(op, ARG_SELF, self, ARG_OUT, out, 1,
                                        PTEC_MSG("self must be [..., m, n] and out [..., min(m, n)]"))) != PTEC_OK) {
        return st;
    }
    int rank = self->rank;
    int32_t m = self->sizes[rank - 2], n = self->sizes[rank - 1];
    if (m < 1 || n < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("empty matrices"));
    }
    int32_t want[PTEC_MAX_RANK];
    uint32_t batch;
    if ((st = ptec_linalg_batch(op, ARG_SELF, self, want, &batch)) != PTEC_OK) {
        return st;
    }
    want[rank - 2] = m < n ? m : n;
    if ((st = ptec_portable_expect_sizes(op, ARG_OUT, out, want, rank - 1,
                                         PTEC_MSG("out must be [..., min(m, n)] of self's batch"))) != PTEC_OK) {
        return st;
    }
    /* the copy: m * n floats, at most 2^31 * 2^31 * 4 < 2^64 */
    uint64_t scratch = (uint64_t)m * (uint64_t)n * sizeof(float);
    if (scratch > UINT32_MAX) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("matrix too large for the scratch"));
    }
    s->batch = batch;
    s->m = m;
    s->n = n;
    op->scratch_bytes = (uint32_t)scratch;
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
 * already; returns whether it rotated. */
static bool rotate(float *x, float *y, uint32_t len, float tol)
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
    return true;
}

static void one_matrix(const float *a, float *w, float *sv, int32_t m, int32_t n)
{
    uint32_t rows = (uint32_t)m, cols = (uint32_t)n;
    bool tall = rows >= cols;
    uint32_t k = tall ? cols : rows, p = tall ? rows : cols;
    /* the largest |entry|; any non-finite entry makes every value NaN */
    float big;
    if (!ptec_linalg_max_abs(a, (size_t)rows * cols, &big)) {
        ptec_linalg_fill_nan(sv, k);
        return;
    }
    if (big == 0.0f) {
        for (uint32_t j = 0; j < k; ++j) {
            sv[j] = 0.0f;
        }
        return;
    }
    int e;
    (void)frexp((double)big, &e); /* big = f * 2^e, f in [0.5, 1) */
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
    float tol = (float)p * FLT_EPSILON;
    for (int sweep = 0; sweep < MAX_SWEEPS; ++sweep) {
        bool rotated = false;
        for (uint32_t j = 0; j + 1 < k; ++j) {
            for (uint32_t l = j + 1; l < k; ++l) {
                rotated |= rotate(w + j * p, w + l * p, p, tol);
            }
        }
        if (!rotated) {
            break;
        }
    }
    /* the norms, scaled back, inserted in descending order */
    for (uint32_t j = 0; j < k; ++j) {
        const float *col = w + j * p;
        float v = ptec_linalg_scale(sqrtf(dot(col, col, p)), e);
        uint32_t at = j;
        while (at > 0 && sv[at - 1] < v) {
            sv[at] = sv[at - 1];
            --at;
        }
        sv[at] = v;
    }
}

static ptec_status run(ptec_op *op)
{
    const svdvals_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, ARG_SELF), *t_y = ptec_op_tensor(op, ARG_OUT);
    const float *x = t_x->data;
    float *y = t_y->data;
    size_t per_in = (size_t)s->m * (size_t)s->n, per_out = (size_t)(s->m < s->n ? s->m : s->n);
    for (uint32_t b = 0; b < s->batch; ++b) {
        one_matrix(x + (size_t)b * per_in, op->scratch, y + (size_t)b * per_out, s->m, s->n);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_svdvals_out = {"ptec::linalg_svdvals.out", sizeof(svdvals_state), prepare,
                                                         run};
