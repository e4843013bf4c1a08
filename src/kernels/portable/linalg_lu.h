/* LU factorisation with partial pivoting, in place on one float32 matrix
 * (ptec::linalg_det.out, ptec::linalg_solve.out, ptec::linalg_lu.out).
 *
 * ptec_lu_factor_rect, on a [m, n] matrix, for column k < min(m, n): the
 * pivot is the first row p >= k of the largest |a_pk| (a NaN is never
 * larger, so a NaN on the diagonal stays the pivot; LAPACK's getrf, whose
 * idamax takes the first maximum, picks the same row); rows p and k are
 * swapped (and the same rows of rhs, when given); p is stored in
 * pivots[k] (0-based), when given; when that |a_pk| is 0 the column has
 * nothing to eliminate and is skipped (as getrf, which reports it); else
 * for every row i > k: l = a_ik / a_kk, a_ik = l, a_ij -= l * a_kj for
 * j > k in order, and rhs_ic -= l * rhs_kc for every column c. Only -, *
 * and /, no contraction (C11, ISO mode): python/ptec/reference/linalg.py
 * repeats it bit for bit. Returns the parity of the row swaps (0 even, 1
 * odd). ptec_lu_factor is the square case without pivots. */
#ifndef PTEC_KERNELS_PORTABLE_LINALG_LU_H
#define PTEC_KERNELS_PORTABLE_LINALG_LU_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

static inline void ptec_lu_swap_rows(float *m, uint32_t cols, uint32_t a, uint32_t b)
{
    for (uint32_t j = 0; j < cols; ++j) {
        float t = m[a * cols + j];
        m[a * cols + j] = m[b * cols + j];
        m[b * cols + j] = t;
    }
}

static inline uint32_t ptec_lu_factor_rect(float *a, uint32_t m, uint32_t n, float *rhs, uint32_t k_cols,
                                           uint32_t *pivots)
{
    uint32_t parity = 0, steps = m < n ? m : n;
    for (uint32_t k = 0; k < steps; ++k) {
        uint32_t p = k;
        float best = fabsf(a[k * n + k]);
        for (uint32_t i = k + 1; i < m; ++i) {
            float v = fabsf(a[i * n + k]);
            if (v > best) {
                best = v;
                p = i;
            }
        }
        if (pivots) {
            pivots[k] = p;
        }
        if (p != k) {
            ptec_lu_swap_rows(a, n, p, k);
            if (rhs) {
                ptec_lu_swap_rows(rhs, k_cols, p, k);
            }
            parity ^= 1u;
        }
        if (best == 0.0f) {
            continue;
        }
        float pivot = a[k * n + k];
        for (uint32_t i = k + 1; i < m; ++i) {
            float l = a[i * n + k] / pivot;
            a[i * n + k] = l;
            for (uint32_t j = k + 1; j < n; ++j) {
                a[i * n + j] = a[i * n + j] - l * a[k * n + j];
            }
            if (rhs) {
                for (uint32_t c = 0; c < k_cols; ++c) {
                    rhs[i * k_cols + c] = rhs[i * k_cols + c] - l * rhs[k * k_cols + c];
                }
            }
        }
    }
    return parity;
}

static inline uint32_t ptec_lu_factor(float *a, uint32_t n, float *rhs, uint32_t k_cols)
{
    return ptec_lu_factor_rect(a, n, n, rhs, k_cols, NULL);
}

/* Whether every entry of the n x n matrix a is finite. */
static inline int ptec_lu_all_finite(const float *a, uint64_t count)
{
    for (uint64_t i = 0; i < count; ++i) {
        if (!(fabsf(a[i]) <= 3.40282347e+38f)) {
            return 0;
        }
    }
    return 1;
}

#endif
