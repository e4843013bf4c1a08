/* ptec::linalg_eigvalsh.out(Tensor self, bool upper, *, Tensor(a!) out)
 *
 * The eigenvalues of each symmetric matrix of self [..., n, n] (float32,
 * rank 2 or more, n at least 1), ascending, into out [..., n] (float32), as
 * torch.linalg.eigvalsh: only the lower triangle is read (upper false,
 * torch's UPLO='L'), or only the upper one. Both tensors in the default dim
 * order (the AOT passes contiguous ones).
 *
 * Cyclic Jacobi on a symmetric copy in scratch (n * n floats), scaled by a
 * power of two (exact) so that the largest |entry| read is in [0.5, 1). A
 * sweep visits every pair (p, q), p < q, in row-major order and rotates it
 * when |a_pq| > TOL, TOL = n * FLT_EPSILON * (that largest scaled |entry|):
 * theta = (a_qq - a_pp) / (2 a_pq), t = sign(theta) / (|theta| +
 * sqrt(1 + theta^2)) (1 / (2 theta) where |theta| > 2^30), c = 1 /
 * sqrt(1 + t^2), s = c t; a_pp -= t a_pq, a_qq += t a_pq, a_pq = a_qp = 0,
 * and for every other r: a_rp <- c a_rp - s a_rq, a_rq <- s a_rp + c a_rq
 * (and the symmetric entries). The matrix is done after a sweep that
 * rotates no pair (a further sweep would leave it unchanged) or after
 * MAX_SWEEPS sweeps, whichever comes first. The eigenvalues are the
 * diagonal, scaled back and sorted ascending (insertion sort).
 *
 * Only +, -, *, / and sqrtf, in an order the reference interpreter repeats
 * (python/ptec/reference/linalg.py): its bytes are the kernel's. A matrix
 * whose read triangle holds an infinity or a NaN gives NaN for all its
 * values; a zero matrix gives zeros.
 *
 * Scratch: n * n floats. Every size is checked at prepare, in 64-bit
 * arithmetic against 32-bit limits. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_UPPER = 1, ARG_OUT = 2, ARG_COUNT = 4 };

/* sweeps at most: Jacobi converges quadratically, in 5 to 10 sweeps for
 * the sizes a microcontroller meets */
#define MAX_SWEEPS 30

typedef struct eigvalsh_state {
    uint32_t batch; /* matrices */
    int32_t n;      /* each matrix's rows and columns */
    uint8_t upper;  /* read the upper triangle (else the lower) */
} eigvalsh_state;

static ptec_status prepare(ptec_op *op)
{
    eigvalsh_state *s = op->state;
    ptec_tensor *self, *out;
    bool upper;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, ARG_UPPER, &upper)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must be float32"));
    }
    int32_t n;
    uint32_t batch, scratch; /* the copy: n * n floats */
    if ((st = ptec_linalg_square_shapes(op, ARG_SELF, self, ARG_OUT, out, 1, false,
                                        PTEC_MSG("self must be [..., n, n] and out [..., n]"),
                                        PTEC_MSG("out must be [..., n] of self's batch"), &n, &batch)) != PTEC_OK ||
        (st = ptec_linalg_matrix_bytes(op, ARG_SELF, n, &scratch)) != PTEC_OK) {
        return st;
    }
    s->batch = batch;
    s->n = n;
    s->upper = upper;
    op->scratch_bytes = scratch;
    return PTEC_OK;
}

/* Rotates pair (p, q) of the symmetric w (n x n) to a zero a_pq when
 * |a_pq| exceeds tol; returns whether it rotated. */
static bool rotate(float *w, uint32_t n, uint32_t p, uint32_t q, float tol)
{
    float apq = w[p * n + q];
    if (!(fabsf(apq) > tol)) {
        return false;
    }
    float theta = (w[q * n + q] - w[p * n + p]) / (2.0f * apq);
    float t = ptec_linalg_jacobi_tangent(theta);
    float c = 1.0f / sqrtf(1.0f + t * t);
    float sn = c * t;
    float shift = t * apq;
    w[p * n + p] = w[p * n + p] - shift;
    w[q * n + q] = w[q * n + q] + shift;
    w[p * n + q] = 0.0f;
    w[q * n + p] = 0.0f;
    for (uint32_t r = 0; r < n; ++r) {
        if (r == p || r == q) {
            continue;
        }
        float a = w[r * n + p], b = w[r * n + q];
        float ap = c * a - sn * b, bq = sn * a + c * b;
        w[r * n + p] = ap;
        w[p * n + r] = ap;
        w[r * n + q] = bq;
        w[q * n + r] = bq;
    }
    return true;
}

static void one_matrix(const float *a, float *w, float *ev, uint32_t n, bool upper)
{
    /* the largest |entry| of the triangle read; a non-finite one makes every value NaN */
    float big = 0.0f;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
            if (upper ? j < i : j > i) {
                continue;
            }
            float v = fabsf(a[i * n + j]);
            if (!(v <= FLT_MAX)) {
                ptec_linalg_fill_nan(ev, n);
                return;
            }
            big = v > big ? v : big;
        }
    }
    if (big == 0.0f) {
        for (uint32_t k = 0; k < n; ++k) {
            ev[k] = 0.0f;
        }
        return;
    }
    int e;
    float f = (float)frexp((double)big, &e); /* big = f * 2^e, f in [0.5, 1): the largest scaled |entry| */
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            float v = ptec_linalg_scale(upper ? a[j * n + i] : a[i * n + j], -e);
            w[i * n + j] = v;
            w[j * n + i] = v;
        }
    }
    float tol = (float)n * FLT_EPSILON * f;
    for (int sweep = 0; sweep < MAX_SWEEPS; ++sweep) {
        bool rotated = false;
        for (uint32_t p = 0; p + 1 < n; ++p) {
            for (uint32_t q = p + 1; q < n; ++q) {
                rotated |= rotate(w, n, p, q, tol);
            }
        }
        if (!rotated) {
            break;
        }
    }
    /* the diagonal, scaled back, inserted in ascending order */
    for (uint32_t j = 0; j < n; ++j) {
        float v = ptec_linalg_scale(w[j * n + j], e);
        uint32_t at = j;
        while (at > 0 && ev[at - 1] > v) {
            ev[at] = ev[at - 1];
            --at;
        }
        ev[at] = v;
    }
}

static ptec_status run(ptec_op *op)
{
    const eigvalsh_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, ARG_SELF), *t_y = ptec_op_tensor(op, ARG_OUT);
    const float *x = t_x->data;
    float *y = t_y->data;
    size_t n = (size_t)s->n;
    for (uint32_t b = 0; b < s->batch; ++b) {
        one_matrix(x + (size_t)b * n * n, op->scratch, y + (size_t)b * n, (uint32_t)n, s->upper);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_eigvalsh_out = {"ptec::linalg_eigvalsh.out", sizeof(eigvalsh_state),
                                                          prepare, run};
