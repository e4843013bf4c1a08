/* ptec::linalg_eig_vectors.out(Tensor self, *, Tensor(a!) out)
 *
 * The eigenvectors of each (general, real) matrix of self [..., n, n]
 * (float32, rank 2 or more, n at least 1) as the columns of out
 * [..., n, n, 2] (float32): out[..., i, j, 0 / 1] the real / imaginary part
 * of component i of the eigenvector of eigenvalue j, torch.view_as_real's
 * layout of torch.linalg.eig(A)'s complex eigenvectors. Column j belongs to
 * the j-th eigenvalue of ptec::linalg_eigvals.out of the same matrix: both
 * kernels compute the values by ptec_eig_values (linalg_eig.h), bit for
 * bit, in ptec's order (real part ascending, then imaginary part
 * descending). Both tensors in the default dim order.
 *
 * Each vector by inverse iteration on the matrix scaled by 2^-e (the
 * values' scaling: its largest |entry| in [0.5, 1)) in complex float32:
 * with the shift mu = lambda_j 2^-e (the value as Francis found it on the
 * scaled matrix, before its scaling back, which may overflow), A - mu I factored by Gaussian
 * elimination with partial pivoting (the first largest |re| + |im| of the
 * column), a pivot of |re| + |im| below EPS3 = n FLT_EPSILON replaced by
 * EPS3 (A - mu I is singular to working precision); then ITERATIONS solves
 * (A - mu I) v' = v from v = (1, ..., 1), each followed by v /= its largest
 * max(|re|, |im|); the back substitution scales v by 2^-64 whenever a
 * component's |re| + |im| exceeds 2^64 (a solve of a nearly singular
 * system grows by 1 / EPS3 per step). An eigenvalue within TIE n
 * FLT_EPSILON of c earlier ones (|re - re'| + |im - im'| of the scaled
 * values, both real or both not: a tie, as a repeated value, which Francis
 * returns equal or a few ulps apart) starts from v_i = 1 / (1 + (i c mod n)) and is made
 * orthogonal to those c vectors after each solve (Gram-Schmidt, in their
 * order): an eigenspace gets independent vectors. When that leaves less
 * than 2^-10 of v's largest max(|re|, |im|), the tie has no more
 * independent vectors (a defective value: a Jordan block's has one) and v
 * is kept as solved (parallel to an earlier one, as LAPACK's). A value of negative
 * imaginary part whose exact conjugate came earlier (Francis gives a pair
 * as exact conjugates; a value equal to c earlier ones pairs with the c-th
 * conjugate) gets that vector's conjugate.
 *
 * Normalisation (LAPACK geev's, what torch returns): unit Euclidean norm,
 * the component of largest modulus (the first of equal ones) real; ptec
 * makes it positive (LAPACK's sign is its back substitution's, unspecified:
 * torch's is either). The vector is first divided by its largest
 * max(|re|, |im|), then multiplied by conj(v_k) / |v_k| (v_k's imaginary
 * part then set to 0), then divided by its norm. A real eigenvalue's vector
 * is real (its imaginary parts written as 0).
 *
 * Only +, -, *, /, fabsf and sqrtf, in an order the reference interpreter
 * repeats (python/ptec/reference/linalg.py): its bytes are the kernel's. A
 * matrix holding an infinity or a NaN, or whose QR did not converge, gives
 * NaN for all its vectors; a zero matrix gives I.
 *
 * Scratch: the values' working copy (n * n floats), the values and the
 * scaled values (2 n each), the complex factors (2 n * n), v and its copy (2 n each) and the pivots
 * (n uint32). Every size
 * is checked at prepare, in 64-bit arithmetic against 32-bit limits. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_common.h"
#include "kernels/portable/linalg_eig.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_OUT = 1, ARG_COUNT = 3 };

/* inverse iteration's solves per vector */
#define ITERATIONS 3u
/* two values are a tie when |re - re'| + |im - im'| <= TIE n FLT_EPSILON on the scaled matrix (largest
 * |entry| in [0.5, 1), so n bounds its norm): Francis returns a repeated value a few ulps apart */
#define TIE 4.0f
/* what orthogonalisation must leave of v (else v is kept as solved) */
#define KEPT 9.765625e-4f /* 2^-10 */
/* the back substitution's rescaling threshold and factor */
#define GROWTH 18446744073709551616.0f     /* 2^64 */
#define SHRINK 5.42101086242752217e-20f    /* 2^-64 */

typedef struct eig_vectors_state {
    uint32_t batch; /* matrices */
    int32_t n;      /* each matrix's rows and columns */
} eig_vectors_state;

static ptec_status prepare(ptec_op *op)
{
    eig_vectors_state *s = op->state;
    ptec_tensor *self, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must be float32"));
    }
    /* out has one dimension more than self */
    int32_t n;
    uint32_t batch;
    if ((st = ptec_linalg_square_shapes(op, ARG_SELF, self, ARG_OUT, out, 2, true,
                                        PTEC_MSG("self must be [..., n, n] and out [..., n, n, 2]"),
                                        PTEC_MSG("out must be [..., n, n, 2] of self's batch"), &n, &batch)) != PTEC_OK) {
        return st;
    }
    /* 3 n^2 + 9 n words: n below 2^16 keeps it below 2^34 words, 2^36 bytes, in 64 bits */
    if (n >= 65536) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("matrix too large for the scratch"));
    }
    uint64_t scratch = (3u * (uint64_t)n * (uint64_t)n + 9u * (uint64_t)n) * sizeof(float);
    if (scratch > UINT32_MAX) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("matrix too large for the scratch"));
    }
    s->batch = batch;
    s->n = n;
    op->scratch_bytes = (uint32_t)scratch;
    return PTEC_OK;
}

/* (cr, ci) = (ar + i ai) / (br + i bi), Smith's order (b nonzero) */
static void cdiv(float ar, float ai, float br, float bi, float *cr, float *ci)
{
    if (fabsf(br) >= fabsf(bi)) {
        float r = bi / br, d = br + bi * r;
        *cr = (ar + ai * r) / d;
        *ci = (ai - ar * r) / d;
    } else {
        float r = br / bi, d = bi + br * r;
        *cr = (ar * r + ai) / d;
        *ci = (ai * r - ar) / d;
    }
}

/* the largest max(|re|, |im|) of v (n complex) */
static float largest(const float *v, uint32_t n)
{
    float big = 0.0f;
    for (uint32_t i = 0; i < 2 * n; ++i) {
        if (fabsf(v[i]) > big) {
            big = fabsf(v[i]);
        }
    }
    return big;
}

/* v (n complex) divided by its largest max(|re|, |im|); false when that is 0 */
static bool rescale(float *v, uint32_t n)
{
    float big = largest(v, n);
    if (big == 0.0f) {
        return false;
    }
    for (uint32_t i = 0; i < 2 * n; ++i) {
        v[i] = v[i] / big;
    }
    return true;
}

#define LU(i, j, c) lu[((size_t)(i) * n + (size_t)(j)) * 2 + (c)]
#define OUT(i, j, c) out[((size_t)(i) * n + (size_t)(j)) * 2 + (c)]

/* lu = x 2^-e - mu I, factored in place (row swaps in piv) */
static void factor(const float *x, int e, float mr, float mi, float eps3, float *lu, uint32_t *piv, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
            LU(i, j, 0) = ptec_linalg_scale(x[(size_t)i * n + j], -e);
            LU(i, j, 1) = 0.0f;
        }
        LU(i, i, 0) = LU(i, i, 0) - mr;
        LU(i, i, 1) = LU(i, i, 1) - mi;
    }
    for (uint32_t k = 0; k < n; ++k) {
        uint32_t p = k;
        float best = fabsf(LU(k, k, 0)) + fabsf(LU(k, k, 1));
        for (uint32_t i = k + 1; i < n; ++i) {
            float m = fabsf(LU(i, k, 0)) + fabsf(LU(i, k, 1));
            if (m > best) {
                best = m;
                p = i;
            }
        }
        piv[k] = p;
        if (p != k) { /* columns k .. n - 1: the multipliers stay where solve's interleaved swaps read them */
            for (uint32_t j = 2 * k; j < 2 * n; ++j) {
                float t = lu[(size_t)p * n * 2 + j];
                lu[(size_t)p * n * 2 + j] = lu[(size_t)k * n * 2 + j];
                lu[(size_t)k * n * 2 + j] = t;
            }
        }
        if (best < eps3) {
            LU(k, k, 0) = eps3;
            LU(k, k, 1) = 0.0f;
        }
        float pr = LU(k, k, 0), pi = LU(k, k, 1);
        for (uint32_t i = k + 1; i < n; ++i) {
            float lr, li;
            cdiv(LU(i, k, 0), LU(i, k, 1), pr, pi, &lr, &li);
            LU(i, k, 0) = lr;
            LU(i, k, 1) = li;
            for (uint32_t j = k + 1; j < n; ++j) {
                float ur = LU(k, j, 0), ui = LU(k, j, 1);
                LU(i, j, 0) = LU(i, j, 0) - (lr * ur - li * ui);
                LU(i, j, 1) = LU(i, j, 1) - (lr * ui + li * ur);
            }
        }
    }
}

/* v = (L U)^-1 P v, up to a power of two */
static void solve(const float *lu, const uint32_t *piv, float *v, uint32_t n)
{
    for (uint32_t k = 0; k < n; ++k) {
        uint32_t p = piv[k];
        if (p != k) {
            float tr = v[2 * p], ti = v[2 * p + 1];
            v[2 * p] = v[2 * k];
            v[2 * p + 1] = v[2 * k + 1];
            v[2 * k] = tr;
            v[2 * k + 1] = ti;
        }
        for (uint32_t i = k + 1; i < n; ++i) {
            float lr = LU(i, k, 0), li = LU(i, k, 1);
            v[2 * i] = v[2 * i] - (lr * v[2 * k] - li * v[2 * k + 1]);
            v[2 * i + 1] = v[2 * i + 1] - (lr * v[2 * k + 1] + li * v[2 * k]);
        }
    }
    for (uint32_t ii = n; ii-- > 0;) {
        float rr = v[2 * ii], ri = v[2 * ii + 1];
        for (uint32_t j = ii + 1; j < n; ++j) {
            float ur = LU(ii, j, 0), ui = LU(ii, j, 1);
            rr = rr - (ur * v[2 * j] - ui * v[2 * j + 1]);
            ri = ri - (ur * v[2 * j + 1] + ui * v[2 * j]);
        }
        cdiv(rr, ri, LU(ii, ii, 0), LU(ii, ii, 1), &v[2 * ii], &v[2 * ii + 1]);
        if (fabsf(v[2 * ii]) + fabsf(v[2 * ii + 1]) > GROWTH) {
            for (uint32_t j = 0; j < 2 * n; ++j) {
                v[j] = v[j] * SHRINK;
            }
        }
    }
}

/* v less its projections on the unit columns cols[0 .. c) of out, in order */
static void orthogonalize(const float *out, const uint32_t *cols, uint32_t c, float *v, uint32_t n)
{
    for (uint32_t t = 0; t < c; ++t) {
        uint32_t k = cols[t];
        float dr = 0.0f, di = 0.0f; /* u^H v */
        for (uint32_t i = 0; i < n; ++i) {
            float ur = OUT(i, k, 0), ui = OUT(i, k, 1);
            dr = dr + (ur * v[2 * i] + ui * v[2 * i + 1]);
            di = di + (ur * v[2 * i + 1] - ui * v[2 * i]);
        }
        for (uint32_t i = 0; i < n; ++i) {
            float ur = OUT(i, k, 0), ui = OUT(i, k, 1);
            v[2 * i] = v[2 * i] - (dr * ur - di * ui);
            v[2 * i + 1] = v[2 * i + 1] - (dr * ui + di * ur);
        }
    }
}

/* v (rescaled: its largest max(|re|, |im|) 1) normalised into column j of out */
static void store(float *v, float *out, uint32_t j, bool real, uint32_t n)
{
    uint32_t top = 0;
    float best = -1.0f;
    for (uint32_t i = 0; i < n; ++i) {
        float m = v[2 * i] * v[2 * i] + v[2 * i + 1] * v[2 * i + 1];
        if (m > best) {
            best = m;
            top = i;
        }
    }
    float mod = sqrtf(best), cr = v[2 * top] / mod, ci = -v[2 * top + 1] / mod;
    float sum = 0.0f;
    for (uint32_t i = 0; i < n; ++i) {
        float vr = v[2 * i], vi = v[2 * i + 1];
        v[2 * i] = vr * cr - vi * ci;
        v[2 * i + 1] = vr * ci + vi * cr;
    }
    v[2 * top + 1] = 0.0f;
    for (uint32_t i = 0; i < n; ++i) {
        sum = sum + (v[2 * i] * v[2 * i] + v[2 * i + 1] * v[2 * i + 1]);
    }
    float norm = sqrtf(sum);
    for (uint32_t i = 0; i < n; ++i) {
        OUT(i, j, 0) = v[2 * i] / norm;
        OUT(i, j, 1) = real ? 0.0f : v[2 * i + 1] / norm;
    }
}

static void one_matrix(const float *x, float *scratch, float *out, uint32_t n)
{
    float *a = scratch, *ev = a + (size_t)n * n, *sc = ev + 2 * (size_t)n, *lu = sc + 2 * (size_t)n;
    float *v = lu + 2 * (size_t)n * n, *solved = v + 2 * (size_t)n;
    uint32_t *piv = (uint32_t *)(void *)(solved + 2 * (size_t)n);
    int e;
    ptec_eig_outcome got = ptec_eig_values(x, a, ev, sc, n, &e);
    if (got == PTEC_EIG_NAN) {
        ptec_linalg_fill_nan(out, 2 * (size_t)n * n);
        return;
    }
    if (got == PTEC_EIG_ZERO) {
        memset(out, 0, 2 * (size_t)n * n * sizeof(float));
        for (uint32_t i = 0; i < n; ++i) {
            OUT(i, i, 0) = 1.0f;
        }
        return;
    }
    const float eps3 = (float)n * FLT_EPSILON, close = TIE * eps3;
    for (uint32_t j = 0; j < n; ++j) {
        float re = ev[2 * j], im = ev[2 * j + 1], sr = sc[2 * j], si = sc[2 * j + 1];
        /* the earlier columns of a value within close of this one and real as it is or not (a tie; scaled),
         * in a's scratch as indices;
         * same: how many of them are this very value */
        uint32_t *tie = (uint32_t *)(void *)a, c = 0, same = 0;
        for (uint32_t k = 0; k < j; ++k) {
            if ((sc[2 * k + 1] == 0.0f) == (si == 0.0f) && fabsf(sc[2 * k] - sr) + fabsf(sc[2 * k + 1] - si) <= close) {
                tie[c++] = k;
            }
            same += ev[2 * k] == re && ev[2 * k + 1] == im;
        }
        if (im < 0.0f) { /* the same-th earlier exact conjugate's vector, conjugated */
            uint32_t seen = 0, k = 0;
            for (; k < j; ++k) {
                if (ev[2 * k] == re && ev[2 * k + 1] == -im) {
                    if (seen == same) {
                        break;
                    }
                    ++seen;
                }
            }
            if (k < j) {
                for (uint32_t i = 0; i < n; ++i) {
                    OUT(i, j, 0) = OUT(i, k, 0);
                    OUT(i, j, 1) = -OUT(i, k, 1);
                }
                continue;
            }
        }
        factor(x, e, sr, si, eps3, lu, piv, n);
        for (uint32_t i = 0; i < n; ++i) { /* 1 / (1 + (i c mod n)): ones for c = 0; i c < 2^32 */
            v[2 * i] = 1.0f / (float)(1u + (i * c) % n);
            v[2 * i + 1] = 0.0f;
        }
        for (uint32_t it = 0; it < ITERATIONS; ++it) {
            solve(lu, piv, v, n);
            if (c > 0) {
                memcpy(solved, v, 2 * (size_t)n * sizeof(float));
                orthogonalize(out, tie, c, v, n);
                if (largest(v, n) < KEPT * largest(solved, n)) {
                    memcpy(v, solved, 2 * (size_t)n * sizeof(float));
                }
            }
            if (!rescale(v, n)) { /* nothing left of v: e_(j mod n) */
                memset(v, 0, 2 * (size_t)n * sizeof(float));
                v[2 * (j % n)] = 1.0f;
            }
        }
        store(v, out, j, im == 0.0f, n);
    }
}

#undef LU
#undef OUT

static ptec_status run(ptec_op *op)
{
    const eig_vectors_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, ARG_SELF), *t_y = ptec_op_tensor(op, ARG_OUT);
    const float *x = t_x->data;
    float *y = t_y->data;
    size_t n = (size_t)s->n;
    for (uint32_t b = 0; b < s->batch; ++b) {
        one_matrix(x + (size_t)b * n * n, op->scratch, y + (size_t)b * n * n * 2, (uint32_t)n);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_eig_vectors_out = {"ptec::linalg_eig_vectors.out", sizeof(eig_vectors_state),
                                                             prepare, run};
