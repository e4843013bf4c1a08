/* What the float32 linear-algebra kernels (ptec::linalg_*.out) share: the
 * prepare checks of a batch of matrices [..., m, n], the scan of one matrix
 * for its largest |entry| (or a NaN fill) before it is scaled by a power of
 * two, and the Jacobi rotation's tangent.
 *
 * Each kernel keeps its own argument checks, in its own order; these
 * helpers fail with the messages every kernel gives for the same fault
 * ("negative size", "too many matrices", "empty matrices", ...) or with the
 * one the kernel passes. */
#ifndef PTEC_KERNELS_PORTABLE_LINALG_COMMON_H
#define PTEC_KERNELS_PORTABLE_LINALG_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptec/kernel.h"

/* Whether t is in the default dim order (0, 1, ..., rank - 1). */
bool ptec_linalg_default_order(const ptec_tensor *t);

/* The checks of self [..., m, n] and out after their dtypes': out is not a
 * constant (InvalidProgram on out_arg); self has rank 2 or more and out
 * self's rank less drop (InvalidArgument on self_arg, with the kernel's
 * shape_message); both are in the default dim order (NotSupported on
 * self_arg). In that order, as each kernel checked them itself. */
ptec_status ptec_linalg_expect_layout(ptec_op *op, int self_arg, const ptec_tensor *self, int out_arg,
                                      const ptec_tensor *out, int drop, const char *shape_message);

/* n of self [..., n, n] (rank 2 or more) into *n: fails on argument arg
 * with InvalidArgument "self's matrices must be square" or, for n < 1,
 * "empty matrices". */
ptec_status ptec_linalg_square(ptec_op *op, int arg, const ptec_tensor *self, int32_t *n);

/* Counts the matrices of self [..., m, n] (rank 2 or more) into *batch, in
 * 64-bit arithmetic: fails on argument arg with InvalidArgument "negative
 * size" or NotSupported "too many matrices" (more than UINT32_MAX). When
 * want is not NULL, copies self's batch sizes into want[0 .. rank - 2). */
ptec_status ptec_linalg_batch(ptec_op *op, int arg, const ptec_tensor *self, int32_t *want, uint32_t *batch);

/* The shape checks of a kernel reading square matrices self [..., n, n]
 * into out [..., tail]: ptec_linalg_expect_layout (rank_message), then
 * ptec_linalg_square and ptec_linalg_batch, then out's sizes, which must be
 * self's batch sizes followed by out_n_dims sizes of n and, when out_pair,
 * a last 2 (a complex result's real and imaginary parts) (InvalidArgument
 * on out_arg, sizes_message). The order every such kernel checked them in
 * itself; *n and *batch are filled on success. */
ptec_status ptec_linalg_square_shapes(ptec_op *op, int self_arg, const ptec_tensor *self, int out_arg,
                                      const ptec_tensor *out, int out_n_dims, bool out_pair,
                                      const char *rank_message, const char *sizes_message, int32_t *n,
                                      uint32_t *batch);

/* n * n floats in bytes into *bytes (one matrix's copy, indexed in size_t):
 * fails on argument arg with NotSupported "matrix too large" above
 * UINT32_MAX bytes, so the product also fits a 32-bit size_t. */
ptec_status ptec_linalg_matrix_bytes(ptec_op *op, int arg, int32_t n, uint32_t *bytes);

/* The largest |a[i]| of a[0 .. count) into *big; false (*big then
 * meaningless) when an entry is infinite or NaN. */
bool ptec_linalg_max_abs(const float *a, size_t count, float *big);

/* out[0 .. count) = NaN: all of a matrix's results when it holds an
 * infinity or a NaN. */
void ptec_linalg_fill_nan(float *out, size_t count);

/* The tangent t of a Jacobi rotation's angle from zeta = (a_qq - a_pp) /
 * (2 a_pq): the root of t^2 + 2 zeta t - 1 = 0 of least magnitude, sign(zeta)
 * / (|zeta| + sqrt(1 + zeta^2)), or 1 / (2 zeta) where |zeta| > 2^30 (zeta^2
 * would overflow float32 or swamp the 1). float32 /, +, * and sqrtf, in this
 * order: python/ptec/reference/linalg.py repeats it. */
float ptec_linalg_jacobi_tangent(float zeta);

/* v * 2^k rounded once to float, as ldexpf: exact in double (a float times
 * 2^k for |k| <= 300 stays inside double's range), then narrowed. The
 * double frexp / ldexp are the ones the runtime's libc allowance lists. */
static inline float ptec_linalg_scale(float v, int k)
{
    return (float)ldexp((double)v, k);
}

#endif
