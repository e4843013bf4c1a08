/* The eigenvalues of a general real float32 matrix, shared by
 * ptec::linalg_eigvals.out (the values) and ptec::linalg_eig_vectors.out
 * (the vectors, in the same order): both call ptec_eig_values, so one eig
 * call's values and vectors come out in the same order, bit for bit the
 * same values.
 *
 * On a copy scaled by a power of two (exact) so that the largest |entry| is
 * in [0.5, 1); no balancing:
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
 *    taking more than 30 n steps in all has not converged.
 * 3. the values scaled back, sorted by real part ascending, then imaginary
 *    part descending (a stable insertion sort): ptec's documented order (a
 *    conjugate pair a + bi, a - bi adjacent, its positive imaginary part
 *    first; both of its real parts are the same float).
 *
 * Only +, -, *, / , fabsf and sqrtf, in an order the reference interpreter
 * repeats (python/ptec/reference/linalg.py). */
#ifndef PTEC_KERNELS_PORTABLE_LINALG_EIG_H
#define PTEC_KERNELS_PORTABLE_LINALG_EIG_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/portable/linalg_common.h"

/* QR steps per matrix at most PTEC_EIG_ITERATIONS_PER_N * n; exceptional shifts at these per-eigenvalue step counts */
#define PTEC_EIG_ITERATIONS_PER_N 30u
#define PTEC_EIG_EXCEPTIONAL_1 10u
#define PTEC_EIG_EXCEPTIONAL_2 20u

/* |a| with b's sign (b >= 0: positive) */
static inline float ptec_eig_with_sign(float a, float b)
{
    return b >= 0.0f ? fabsf(a) : -fabsf(a);
}

#define PTEC_EIG_A(i, j) a[(size_t)(i) * n + (size_t)(j)]

/* a (n x n) to upper Hessenberg form in place, a similarity (step 1) */
static inline void ptec_eig_hessenberg(float *a, uint32_t n)
{
    for (uint32_t m = 1; m + 1 < n; ++m) {
        float x = 0.0f;
        uint32_t i = m;
        for (uint32_t j = m; j < n; ++j) {
            if (fabsf(PTEC_EIG_A(j, m - 1)) > fabsf(x)) {
                x = PTEC_EIG_A(j, m - 1);
                i = j;
            }
        }
        if (i != m) {
            for (uint32_t j = m - 1; j < n; ++j) {
                float tmp = PTEC_EIG_A(i, j);
                PTEC_EIG_A(i, j) = PTEC_EIG_A(m, j);
                PTEC_EIG_A(m, j) = tmp;
            }
            for (uint32_t j = 0; j < n; ++j) {
                float tmp = PTEC_EIG_A(j, i);
                PTEC_EIG_A(j, i) = PTEC_EIG_A(j, m);
                PTEC_EIG_A(j, m) = tmp;
            }
        }
        if (x != 0.0f) {
            for (i = m + 1; i < n; ++i) {
                float y = PTEC_EIG_A(i, m - 1);
                if (y != 0.0f) {
                    y = y / x;
                    PTEC_EIG_A(i, m - 1) = 0.0f;
                    for (uint32_t j = m; j < n; ++j) {
                        PTEC_EIG_A(i, j) = PTEC_EIG_A(i, j) - y * PTEC_EIG_A(m, j);
                    }
                    for (uint32_t j = 0; j < n; ++j) {
                        PTEC_EIG_A(j, m) = PTEC_EIG_A(j, m) + y * PTEC_EIG_A(j, i);
                    }
                }
            }
        }
    }
}

/* The Francis QR iteration on the Hessenberg a (step 2): the eigenvalues
 * into ev[2 k], ev[2 k + 1] in the order deflation finds them; false when
 * it takes more than PTEC_EIG_ITERATIONS_PER_N * n steps. Signed indices: l, m run
 * down to 0 and nn below it. */
static inline bool ptec_eig_francis(float *a, uint32_t un, float *ev)
{
    const size_t n = un;
    float norm = 0.0f;
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = i > 0 ? i - 1 : 0; j < n; ++j) {
            norm = norm + fabsf(PTEC_EIG_A(i, j));
        }
    }
    int64_t nn = (int64_t)n - 1;
    float t = 0.0f, x = 0.0f, y = 0.0f, z = 0.0f, p = 0.0f, q = 0.0f, r = 0.0f, s, w;
    uint32_t its = 0;
    uint64_t total = 0, limit = (uint64_t)PTEC_EIG_ITERATIONS_PER_N * n;
    while (nn >= 0) {
        int64_t l = nn;
        for (; l >= 1; --l) {
            s = fabsf(PTEC_EIG_A(l - 1, l - 1)) + fabsf(PTEC_EIG_A(l, l));
            if (s == 0.0f) {
                s = norm;
            }
            if (fabsf(PTEC_EIG_A(l, l - 1)) + s == s) {
                PTEC_EIG_A(l, l - 1) = 0.0f;
                break;
            }
        }
        x = PTEC_EIG_A(nn, nn);
        if (l == nn) { /* one root */
            ev[2 * nn] = x + t;
            ev[2 * nn + 1] = 0.0f;
            nn -= 1;
            its = 0;
            continue;
        }
        y = PTEC_EIG_A(nn - 1, nn - 1);
        w = PTEC_EIG_A(nn, nn - 1) * PTEC_EIG_A(nn - 1, nn);
        if (l == nn - 1) { /* two roots */
            p = 0.5f * (y - x);
            q = p * p + w;
            z = sqrtf(fabsf(q));
            x = x + t;
            if (q >= 0.0f) {
                z = p + ptec_eig_with_sign(z, p);
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
        if (its == PTEC_EIG_EXCEPTIONAL_1 || its == PTEC_EIG_EXCEPTIONAL_2) {
            t = t + x;
            for (int64_t i = 0; i <= nn; ++i) {
                PTEC_EIG_A(i, i) = PTEC_EIG_A(i, i) - x;
            }
            s = fabsf(PTEC_EIG_A(nn, nn - 1)) + fabsf(PTEC_EIG_A(nn - 1, nn - 2));
            x = y = 0.75f * s;
            w = -0.4375f * s * s;
        }
        ++its;
        ++total;
        int64_t m = nn - 2;
        for (;; --m) {
            z = PTEC_EIG_A(m, m);
            r = x - z;
            s = y - z;
            p = (r * s - w) / PTEC_EIG_A(m + 1, m) + PTEC_EIG_A(m, m + 1);
            q = PTEC_EIG_A(m + 1, m + 1) - z - r - s;
            r = PTEC_EIG_A(m + 2, m + 1);
            s = fabsf(p) + fabsf(q) + fabsf(r);
            p = p / s;
            q = q / s;
            r = r / s;
            if (m == l) {
                break;
            }
            float u = fabsf(PTEC_EIG_A(m, m - 1)) * (fabsf(q) + fabsf(r));
            float v = fabsf(p) * (fabsf(PTEC_EIG_A(m - 1, m - 1)) + fabsf(z) + fabsf(PTEC_EIG_A(m + 1, m + 1)));
            if (u + v == v) {
                break;
            }
        }
        for (int64_t i = m + 2; i <= nn; ++i) {
            PTEC_EIG_A(i, i - 2) = 0.0f;
            if (i != m + 2) {
                PTEC_EIG_A(i, i - 3) = 0.0f;
            }
        }
        for (int64_t k = m; k < nn; ++k) {
            if (k != m) {
                p = PTEC_EIG_A(k, k - 1);
                q = PTEC_EIG_A(k + 1, k - 1);
                r = k != nn - 1 ? PTEC_EIG_A(k + 2, k - 1) : 0.0f;
                x = fabsf(p) + fabsf(q) + fabsf(r);
                if (x != 0.0f) {
                    p = p / x;
                    q = q / x;
                    r = r / x;
                }
            }
            s = ptec_eig_with_sign(sqrtf(p * p + q * q + r * r), p);
            if (s == 0.0f) {
                continue;
            }
            if (k == m) {
                if (l != m) {
                    PTEC_EIG_A(k, k - 1) = -PTEC_EIG_A(k, k - 1);
                }
            } else {
                PTEC_EIG_A(k, k - 1) = -s * x;
            }
            p = p + s;
            x = p / s;
            y = q / s;
            z = r / s;
            q = q / p;
            r = r / p;
            for (int64_t j = k; j <= nn; ++j) {
                p = PTEC_EIG_A(k, j) + q * PTEC_EIG_A(k + 1, j);
                if (k != nn - 1) {
                    p = p + r * PTEC_EIG_A(k + 2, j);
                    PTEC_EIG_A(k + 2, j) = PTEC_EIG_A(k + 2, j) - p * z;
                }
                PTEC_EIG_A(k + 1, j) = PTEC_EIG_A(k + 1, j) - p * y;
                PTEC_EIG_A(k, j) = PTEC_EIG_A(k, j) - p * x;
            }
            int64_t top = nn < k + 3 ? nn : k + 3;
            for (int64_t i = l; i <= top; ++i) {
                p = x * PTEC_EIG_A(i, k) + y * PTEC_EIG_A(i, k + 1);
                if (k != nn - 1) {
                    p = p + z * PTEC_EIG_A(i, k + 2);
                    PTEC_EIG_A(i, k + 2) = PTEC_EIG_A(i, k + 2) - p * r;
                }
                PTEC_EIG_A(i, k + 1) = PTEC_EIG_A(i, k + 1) - p * q;
                PTEC_EIG_A(i, k) = PTEC_EIG_A(i, k) - p;
            }
        }
    }
    return true;
}

#undef PTEC_EIG_A

static inline bool ptec_eig_before(float re, float im, float re2, float im2)
{
    return re < re2 || (re == re2 && im > im2);
}

/* What ptec_eig_values found of one matrix */
typedef enum ptec_eig_outcome {
    PTEC_EIG_VALUES = 0, /* ev holds the values, the matrix was scaled by 2^-(*e) */
    PTEC_EIG_ZERO = 1,   /* a zero matrix: ev zeros */
    PTEC_EIG_NAN = 2     /* a non-finite entry, or no convergence: ev NaN */
} ptec_eig_outcome;

/* The eigenvalues of x (n x n) into ev[2 j], ev[2 j + 1] (real, imaginary)
 * in ptec's order, with a (n * n floats) as the working copy; *e the power
 * of two x was scaled by (x 2^-e has its largest |entry| in [0.5, 1)).
 * scaled (2 n floats, or NULL): the same values in the same order as
 * Francis found them on x 2^-e, before the scaling back (which may
 * overflow to an infinity or flush to 0: inverse iteration's shifts). */
static inline ptec_eig_outcome ptec_eig_values(const float *x, float *a, float *ev, float *scaled, uint32_t n,
                                               int *e_out)
{
    size_t count = (size_t)n * n;
    float big;
    *e_out = 0;
    if (!ptec_linalg_max_abs(x, count, &big)) {
        ptec_linalg_fill_nan(ev, 2 * (size_t)n);
        return PTEC_EIG_NAN;
    }
    if (big == 0.0f) {
        memset(ev, 0, 2 * (size_t)n * sizeof(float));
        return PTEC_EIG_ZERO;
    }
    int e;
    (void)frexp((double)big, &e); /* big = f * 2^e, f in [0.5, 1) */
    *e_out = e;
    for (size_t i = 0; i < count; ++i) {
        a[i] = ptec_linalg_scale(x[i], -e);
    }
    ptec_eig_hessenberg(a, n);
    if (!ptec_eig_francis(a, n, ev)) {
        ptec_linalg_fill_nan(ev, 2 * (size_t)n);
        return PTEC_EIG_NAN;
    }
    /* scaled back, inserted in ptec's order */
    for (uint32_t j = 0; j < n; ++j) {
        float sr = ev[2 * j], si = ev[2 * j + 1];
        float re = ptec_linalg_scale(sr, e), im = ptec_linalg_scale(si, e);
        uint32_t at = j;
        while (at > 0 && ptec_eig_before(re, im, ev[2 * (at - 1)], ev[2 * (at - 1) + 1])) {
            ev[2 * at] = ev[2 * (at - 1)];
            ev[2 * at + 1] = ev[2 * (at - 1) + 1];
            if (scaled != NULL) {
                scaled[2 * at] = scaled[2 * (at - 1)];
                scaled[2 * at + 1] = scaled[2 * (at - 1) + 1];
            }
            --at;
        }
        ev[2 * at] = re;
        ev[2 * at + 1] = im;
        if (scaled != NULL) {
            scaled[2 * at] = sr;
            scaled[2 * at + 1] = si;
        }
    }
    return PTEC_EIG_VALUES;
}

#endif
