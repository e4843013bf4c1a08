/* The Cholesky factorisation of one float32 matrix, column by column
 * (Cholesky-Crout, LAPACK's unblocked potf2 order): ptec::linalg_cholesky.out
 * (the factor) and ptec::linalg_cholesky_info.out (the order where it
 * stops).
 *
 * ptec_cholesky_columns reads one triangle of a [n, n] (the lower one, or
 * the upper one when upper: A's entry (i, j), i >= j, is a[i n + j], or
 * a[j n + i]) and writes the factor's entries (i, j), i >= j, at the same
 * places of l (L, or U = L^T when upper); the other triangle of l is not
 * touched. For j = 0 .. n-1:
 *   d = a_jj - L_j0^2 - ... - L_j,j-1^2 (subtracted in k order);
 *   d > 0: L_jj = sqrtf(d), L_ij = (a_ij - L_i0 L_j0 - ... - L_i,j-1 L_j,j-1)
 *          / L_jj for i > j;
 *   else (d <= 0 or NaN: the leading minor of order j + 1 is not
 *          positive-definite, LAPACK potrf's test): L_ic = NaN (the quiet
 *          NAN, the same bytes on every FPU) for every c >= j, i >= c, and
 *          the function returns j + 1.
 * Returns 0 when every pivot was positive. Only -, *, / and sqrtf, no
 * contraction (C11, ISO mode): python/ptec/reference/linalg.py repeats it
 * bit for bit. An infinity in the triangle is computed through (a +inf
 * pivot passes, as LAPACK's test lets it); n * n floats must be indexable
 * in size_t (the callers check). */
#ifndef PTEC_KERNELS_PORTABLE_LINALG_CHOLESKY_H
#define PTEC_KERNELS_PORTABLE_LINALG_CHOLESKY_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint32_t ptec_cholesky_columns(const float *a, float *l, size_t n, bool upper)
{
    /* entry (i, j), i >= j, of the triangle read and of the factor written */
#define PTEC_CHOL_A(i, j) (upper ? a[(j) * n + (i)] : a[(i) * n + (j)])
#define PTEC_CHOL_L(i, j) (*(upper ? &l[(j) * n + (i)] : &l[(i) * n + (j)]))
    for (size_t j = 0; j < n; ++j) {
        float d = PTEC_CHOL_A(j, j);
        for (size_t k = 0; k < j; ++k) {
            d = d - PTEC_CHOL_L(j, k) * PTEC_CHOL_L(j, k);
        }
        if (!(d > 0.0f)) {
            for (size_t c = j; c < n; ++c) {
                for (size_t i = c; i < n; ++i) {
                    PTEC_CHOL_L(i, c) = NAN;
                }
            }
            return (uint32_t)(j + 1);
        }
        float ljj = sqrtf(d);
        PTEC_CHOL_L(j, j) = ljj;
        for (size_t i = j + 1; i < n; ++i) {
            float v = PTEC_CHOL_A(i, j);
            for (size_t k = 0; k < j; ++k) {
                v = v - PTEC_CHOL_L(i, k) * PTEC_CHOL_L(j, k);
            }
            PTEC_CHOL_L(i, j) = v / ljj;
        }
    }
    return 0;
#undef PTEC_CHOL_A
#undef PTEC_CHOL_L
}

#endif
