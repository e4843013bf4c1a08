/* ptec::linalg_eigvals.out(Tensor self, *, Tensor(a!) out)
 *
 * The eigenvalues of each (general, real) matrix of self [..., n, n]
 * (float32, rank 2 or more, n at least 1) into out [..., n, 2] (float32):
 * each eigenvalue's real and imaginary parts, torch.view_as_real's layout
 * of torch.linalg.eigvals' complex result. Both tensors in the default dim
 * order (the AOT passes contiguous ones).
 *
 * On a copy in scratch (n * n floats) scaled by a power of two (exact) so
 * that the largest |entry| is in [0.5, 1); no balancing:
 * 1. reduction to upper Hessenberg form by Gaussian elimination with
 *    pivoting (for column m - 1: the first largest |entry| of rows m ..
 *    n - 1 swapped into row m, and columns likewise; each row i > m less y
 *    times row m, then column m plus y times column i: a similarity);
 * 2. the implicit double-shift (Francis) QR iteration on the Hessenberg
 *    matrix: a subdiagonal entry is negligible (set to 0, deflating) when
 *    adding it to |a_{l-1,l-1}| + |a_ll| (or, were that 0, the Hessenberg
 *    part's 1-norm sum) changes nothing in float32; a 1x1 block is a real
 *    eigenvalue, a 2x2 block two real ones or a conjugate pair; otherwise
 *    one double-shift step (3-element Householder reflections chasing the
 *    bulge) with the trailing 2x2 block's eigenvalues as shifts, or an
 *    exceptional shift after 10 and 20 steps without a deflation. A matrix
 *    taking more than 30 n steps in all has not converged: NaN for all its
 *    values (its run still succeeds; a program cannot branch on it).
 * 3. the values scaled back, sorted by real part ascending, then imaginary
 *    part descending (a stable insertion sort): ptec's documented order (a
 *    conjugate pair a + bi, a - bi adjacent, its positive imaginary part
 *    first; both of its real parts are the same float). torch's (LAPACK
 *    geev's) order is deflation's, which torch does not define.
 *
 * Only +, -, *, / , fabsf and sqrtf, in an order the reference interpreter
 * repeats (python/ptec/reference/linalg.py): its bytes are the kernel's. A
 * matrix holding an infinity or a NaN gives NaN for all its values; a zero
 * matrix gives zeros.
 *
 * Scratch: n * n floats. Every size is checked at prepare, in 64-bit
 * arithmetic against 32-bit limits. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_OUT = 1, ARG_COUNT = 3 };

/* QR steps per matrix at most ITERATIONS_PER_N * n; exceptional shifts at these per-eigenvalue step counts */
#define ITERATIONS_PER_N 30u
#define EXCEPTIONAL_1 10u
#define EXCEPTIONAL_2 20u

typedef struct eigvals_state {
    uint32_t batch; /* matrices */
    int32_t n;      /* each matrix's rows and columns */
} eigvals_state;

static ptec_status prepare(ptec_op *op)
{
    eigvals_state *s = op->state;
    ptec_tensor *self, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must be float32"));
    }
    if ((st = ptec_linalg_expect_layout(op, ARG_SELF, self, ARG_OUT, out, 0,
                                        PTEC_MSG("self must be [..., n, n] and out [..., n, 2]"))) != PTEC_OK) {
        return st;
    }
    int rank = self->rank;
    int32_t n;
    if ((st = ptec_linalg_square(op, ARG_SELF, self, &n)) != PTEC_OK) {
        return st;
    }
    int32_t want[PTEC_MAX_RANK];
    uint32_t batch;
    if ((st = ptec_linalg_batch(op, ARG_SELF, self, want, &batch)) != PTEC_OK) {
        return st;
    }
    want[rank - 2] = n;
    want[rank - 1] = 2;
    if ((st = ptec_portable_expect_sizes(op, ARG_OUT, out, want, rank,
                                         PTEC_MSG("out must be [..., n, 2] of self's batch"))) != PTEC_OK) {
        return st;
    }
    /* the copy: n * n floats, at most 2^31 * 2^31 * 4 < 2^64 */
    uint64_t scratch = (uint64_t)n * (uint64_t)n * sizeof(float);
    if (scratch > UINT32_MAX) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("matrix too large for the scratch"));
    }
    s->batch = batch;
    s->n = n;
    op->scratch_bytes = (uint32_t)scratch;
    return PTEC_OK;
}

/* |a| with b's sign (b >= 0: positive) */
static float with_sign(float a, float b)
{
    return b >= 0.0f ? fabsf(a) : -fabsf(a);
}

#define A(i, j) a[(size_t)(i) * n + (size_t)(j)]

/* a (n x n) to upper Hessenberg form in place, a similarity (step 1) */
static void hessenberg(float *a, uint32_t n)
{
    for (uint32_t m = 1; m + 1 < n; ++m) {
        float x = 0.0f;
        uint32_t i = m;
        for (uint32_t j = m; j < n; ++j) {
            if (fabsf(A(j, m - 1)) > fabsf(x)) {
                x = A(j, m - 1);
                i = j;
            }
        }
        if (i != m) {
            for (uint32_t j = m - 1; j < n; ++j) {
                float tmp = A(i, j);
                A(i, j) = A(m, j);
                A(m, j) = tmp;
            }
            for (uint32_t j = 0; j < n; ++j) {
                float tmp = A(j, i);
                A(j, i) = A(j, m);
                A(j, m) = tmp;
            }
        }
        if (x != 0.0f) {
            for (i = m + 1; i < n; ++i) {
                float y = A(i, m - 1);
                if (y != 0.0f) {
                    y = y / x;
                    A(i, m - 1) = 0.0f;
                    for (uint32_t j = m; j < n; ++j) {
                        A(i, j) = A(i, j) - y * A(m, j);
                    }
                    for (uint32_t j = 0; j < n; ++j) {
                        A(j, m) = A(j, m) + y * A(j, i);
                    }
                }
            }
        }
    }
}

/* The Francis QR iteration on the Hessenberg a (step 2): the eigenvalues
 * into ev[2 k], ev[2 k + 1] in the order deflation finds them; false when
 * it takes more than ITERATIONS_PER_N * n steps. Signed indices: l, m run
 * down to 0 and nn below it. */
static bool francis(float *a, uint32_t un, float *ev)
{
    const size_t n = un;
    float norm = 0.0f;
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = i > 0 ? i - 1 : 0; j < n; ++j) {
            norm = norm + fabsf(A(i, j));
        }
    }
    int64_t nn = (int64_t)n - 1;
    float t = 0.0f, x = 0.0f, y = 0.0f, z = 0.0f, p = 0.0f, q = 0.0f, r = 0.0f, s, w;
    uint32_t its = 0;
    uint64_t total = 0, limit = (uint64_t)ITERATIONS_PER_N * n;
    while (nn >= 0) {
        int64_t l = nn;
        for (; l >= 1; --l) {
            s = fabsf(A(l - 1, l - 1)) + fabsf(A(l, l));
            if (s == 0.0f) {
                s = norm;
            }
            if (fabsf(A(l, l - 1)) + s == s) {
                A(l, l - 1) = 0.0f;
                break;
            }
        }
        x = A(nn, nn);
        if (l == nn) { /* one root */
            ev[2 * nn] = x + t;
            ev[2 * nn + 1] = 0.0f;
            nn -= 1;
            its = 0;
            continue;
        }
        y = A(nn - 1, nn - 1);
        w = A(nn, nn - 1) * A(nn - 1, nn);
        if (l == nn - 1) { /* two roots */
            p = 0.5f * (y - x);
            q = p * p + w;
            z = sqrtf(fabsf(q));
            x = x + t;
            if (q >= 0.0f) {
                z = p + with_sign(z, p);
                ev[2 * (nn - 1)] = ev[2 * nn] = x + z;
                if (z != 0.0f) {
                    ev[2 * nn] = x - w / z;
                }
                ev[2 * (nn - 1) + 1] = ev[2 * nn + 1] = 0.0f;
            } else {
                ev[2 * (nn - 1)] = ev[2 * nn] = x + p;
                ev[2 * (nn - 1) + 1] = z;
                ev[2 * nn + 1] = -z;
            }
            nn -= 2;
            its = 0;
            continue;
        }
        if (total >= limit) {
            return false;
        }
        if (its == EXCEPTIONAL_1 || its == EXCEPTIONAL_2) {
            t = t + x;
            for (int64_t i = 0; i <= nn; ++i) {
                A(i, i) = A(i, i) - x;
            }
            s = fabsf(A(nn, nn - 1)) + fabsf(A(nn - 1, nn - 2));
            x = y = 0.75f * s;
            w = -0.4375f * s * s;
        }
        ++its;
        ++total;
        int64_t m = nn - 2;
        for (;; --m) {
            z = A(m, m);
            r = x - z;
            s = y - z;
            p = (r * s - w) / A(m + 1, m) + A(m, m + 1);
            q = A(m + 1, m + 1) - z - r - s;
            r = A(m + 2, m + 1);
            s = fabsf(p) + fabsf(q) + fabsf(r);
            p = p / s;
            q = q / s;
            r = r / s;
            if (m == l) {
                break;
            }
            float u = fabsf(A(m, m - 1)) * (fabsf(q) + fabsf(r));
            float v = fabsf(p) * (fabsf(A(m - 1, m - 1)) + fabsf(z) + fabsf(A(m + 1, m + 1)));
            if (u + v == v) {
                break;
            }
        }
        for (int64_t i = m + 2; i <= nn; ++i) {
            A(i, i - 2) = 0.0f;
            if (i != m + 2) {
                A(i, i - 3) = 0.0f;
            }
        }
        for (int64_t k = m; k < nn; ++k) {
            if (k != m) {
                p = A(k, k - 1);
                q = A(k + 1, k - 1);
                r = k != nn - 1 ? A(k + 2, k - 1) : 0.0f;
                x = fabsf(p) + fabsf(q) + fabsf(r);
                if (x != 0.0f) {
                    p = p / x;
                    q = q / x;
                    r = r / x;
                }
            }
            s = with_sign(sqrtf(p * p + q * q + r * r), p);
            if (s == 0.0f) {
                continue;
            }
            if (k == m) {
                if (l != m) {
                    A(k, k - 1) = -A(k, k - 1);
                }
            } else {
                A(k, k - 1) = -s * x;
            }
            p = p + s;
            x = p / s;
            y = q / s;
            z = r / s;
            q = q / p;
            r = r / p;
            for (int64_t j = k; j <= nn; ++j) {
                p = A(k, j) + q * A(k + 1, j);
                if (k != nn - 1) {
                    p = p + r * A(k + 2, j);
                    A(k + 2, j) = A(k + 2, j) - p * z;
                }
                A(k + 1, j) = A(k + 1, j) - p * y;
                A(k, j) = A(k, j) - p * x;
            }
            int64_t top = nn < k + 3 ? nn : k + 3;
            for (int64_t i = l; i <= top; ++i) {
                p = x * A(i, k) + y * A(i, k + 1);
                if (k != nn - 1) {
                    p = p + z * A(i, k + 2);
                    A(i, k + 2) = A(i, k + 2) - p * r;
                }
                A(i, k + 1) = A(i, k + 1) - p * q;
                A(i, k) = A(i, k) - p;
            }
        }
    }
    return true;
}

#undef A

static bool before(float re, float im, float re2, float im2)
{
    return re < re2 || (re == re2 && im > im2);
}

static void one_matrix(const float *x, float *a, float *ev, uint32_t n)
{
    size_t count = (size_t)n * n;
    float big;
    if (!ptec_linalg_max_abs(x, count, &big)) {
        ptec_linalg_fill_nan(ev, 2 * (size_t)n);
        return;
    }
    if (big == 0.0f) {
        memset(ev, 0, 2 * (size_t)n * sizeof(float));
        return;
    }
    int e;
    (void)frexp((double)big, &e); /* big = f * 2^e, f in [0.5, 1) */
    for (size_t i = 0; i < count; ++i) {
        a[i] = ptec_linalg_scale(x[i], -e);
    }
    hessenberg(a, n);
    if (!francis(a, n, ev)) {
        ptec_linalg_fill_nan(ev, 2 * (size_t)n);
        return;
    }
    /* scaled back, inserted in ptec's order */
    for (uint32_t j = 0; j < n; ++j) {
        float re = ptec_linalg_scale(ev[2 * j], e), im = ptec_linalg_scale(ev[2 * j + 1], e);
        uint32_t at = j;
        while (at > 0 && before(re, im, ev[2 * (at - 1)], ev[2 * (at - 1) + 1])) {
            ev[2 * at] = ev[2 * (at - 1)];
            ev[2 * at + 1] = ev[2 * (at - 1) + 1];
            --at;
        }
        ev[2 * at] = re;
        ev[2 * at + 1] = im;
    }
}

static ptec_status run(ptec_op *op)
{
    const eigvals_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, ARG_SELF), *t_y = ptec_op_tensor(op, ARG_OUT);
    const float *x = t_x->data;
    float *y = t_y->data;
    size_t n = (size_t)s->n;
    for (uint32_t b = 0; b < s->batch; ++b) {
        one_matrix(x + (size_t)b * n * n, op->scratch, y + (size_t)b * n * 2, (uint32_t)n);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_eigvals_out = {"ptec::linalg_eigvals.out", sizeof(eigvals_state), prepare,
                                                         run};
