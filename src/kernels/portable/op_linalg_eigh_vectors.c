/* ptec::linalg_eigh_vectors.out(Tensor self, bool upper, *, Tensor(a!) out)
 *
 * The eigenvectors of each symmetric matrix of self [..., n, n] (float32,
 * rank 2 or more, n at least 1) as the columns of out [..., n, n]
 * (float32), in the order of ptec::linalg_eigvalsh.out's ascending
 * eigenvalues: torch.linalg.eigh(A, UPLO)'s eigenvectors (its eigenvalues
 * are linalg_eigvalsh.out's, which runs the same rotations). Only the
 * lower triangle is read (upper false, UPLO='L'), or only the upper one.
 * Both tensors in the default dim order (the AOT passes contiguous ones).
 *
 * The cyclic Jacobi iteration of op_linalg_eigvalsh.c, step for step (the
 * same scaling, threshold, rotations, sweeps and stop), accumulating V = V J
 * for each rotation J in out (V = I first): v_rp <- c v_rp - s v_rq,
 * v_rq <- s v_rp + c v_rq for every row r. The columns are then sorted as
 * the diagonal's scaled-back values by a stable insertion sort (the order
 * linalg_eigvalsh.out gives), and each column's sign fixed so that its
 * largest-magnitude component (the first of equal ones) is positive:
 * eigenvectors are defined up to sign only (and within an eigenspace of a
 * repeated eigenvalue up to rotation); this normalisation makes ptec's
 * answer unique, where torch's follows LAPACK's algorithm.
 *
 * Only +, -, *, / and sqrtf, in an order the reference interpreter repeats
 * (python/ptec/reference/linalg.py): its bytes are the kernel's. A matrix
 * whose read triangle holds an infinity or a NaN gives NaN for all its
 * vectors; a zero matrix gives I.
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

typedef struct eigh_state {
    uint32_t batch; /* matrices */
    int32_t n;      /* each matrix's rows and columns */
    uint8_t upper;  /* read the upper triangle (else the lower) */
} eigh_state;

static ptec_status prepare(ptec_op *op)
{
    eigh_state *s = op->state;
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
    if ((st = ptec_linalg_square_shapes(op, ARG_SELF, self, ARG_OUT, out, 2, false,
                                        PTEC_MSG("self and out must be [..., n, n]"),
                                        PTEC_MSG("out must have self's sizes"), &n, &batch)) != PTEC_OK ||
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
static bool rotate(float *w, float *v, uint32_t n, uint32_t p, uint32_t q, float tol)
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
    for (uint32_t r = 0; r < n; ++r) {
        float a = v[r * n + p], b = v[r * n + q];
        v[r * n + p] = c * a - sn * b;
        v[r * n + q] = sn * a + c * b;
    }
    return true;
}

static void one_matrix(const float *a, float *w, float *v, uint32_t n, bool upper)
{
    /* the largest |entry| of the triangle read; a non-finite one makes every vector NaN */
    float big = 0.0f;
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
            if (upper ? j < i : j > i) {
                continue;
            }
            float x = fabsf(a[i * n + j]);
            if (!(x <= FLT_MAX)) {
                ptec_linalg_fill_nan(v, (size_t)n * n);
                return;
            }
            big = x > big ? x : big;
        }
    }
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
            v[i * n + j] = i == j ? 1.0f : 0.0f;
        }
    }
    if (big == 0.0f) {
        return;
    }
    int e;
    float f = (float)frexp((double)big, &e); /* big = f * 2^e, f in [0.5, 1): the largest scaled |entry| */
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j <= i; ++j) {
            float x = ptec_linalg_scale(upper ? a[j * n + i] : a[i * n + j], -e);
            w[i * n + j] = x;
            w[j * n + i] = x;
        }
    }
    float tol = (float)n * FLT_EPSILON * f;
    for (int sweep = 0; sweep < MAX_SWEEPS; ++sweep) {
        bool rotated = false;
        for (uint32_t p = 0; p + 1 < n; ++p) {
            for (uint32_t q = p + 1; q < n; ++q) {
                rotated |= rotate(w, v, n, p, q, tol);
            }
        }
        if (!rotated) {
            break;
        }
    }
    /* the diagonal scaled back (into w's first row, no longer needed), sorted ascending with the
     * columns of v: a stable insertion sort, the order of linalg_eigvalsh.out's */
    for (uint32_t j = 0; j < n; ++j) {
        w[j] = ptec_linalg_scale(w[j * n + j], e);
    }
    for (uint32_t j = 1; j < n; ++j) {
        for (uint32_t at = j; at > 0 && w[at - 1] > w[at]; --at) {
            float t = w[at - 1];
            w[at - 1] = w[at];
            w[at] = t;
            for (uint32_t r = 0; r < n; ++r) {
                float x = v[r * n + at - 1];
                v[r * n + at - 1] = v[r * n + at];
                v[r * n + at] = x;
            }
        }
    }
    /* each column's largest |component| (the first of equal ones) made positive */
    for (uint32_t j = 0; j < n; ++j) {
        uint32_t top = 0;
        for (uint32_t r = 1; r < n; ++r) {
            if (fabsf(v[r * n + j]) > fabsf(v[top * n + j])) {
                top = r;
            }
        }
        if (v[top * n + j] < 0.0f) {
            for (uint32_t r = 0; r < n; ++r) {
                v[r * n + j] = -v[r * n + j];
            }
        }
    }
}

static ptec_status run(ptec_op *op)
{
    const eigh_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, ARG_SELF), *t_y = ptec_op_tensor(op, ARG_OUT);
    const float *x = t_x->data;
    float *y = t_y->data;
    size_t n = (size_t)s->n;
    for (uint32_t b = 0; b < s->batch; ++b) {
        one_matrix(x + (size_t)b * n * n, op->scratch, y + (size_t)b * n * n, (uint32_t)n, s->upper);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_eigh_vectors_out = {"ptec::linalg_eigh_vectors.out", sizeof(eigh_state),
                                                              prepare, run};
