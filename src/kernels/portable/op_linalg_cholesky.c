/* ptec::linalg_cholesky.out(Tensor self, bool upper, *, Tensor(a!) out)
 *
 * The Cholesky factor of each symmetric positive-definite matrix of self
 * [..., n, n] (float32, rank 2 or more, n at least 1) into out of the same
 * sizes (float32): L, lower triangular with A = L L^T, reading only A's
 * lower triangle (upper false); or U = L^T, upper triangular with
 * A = U^T U, reading only the upper one (upper true), as
 * torch.linalg.cholesky(A, upper). The other triangle of out is 0. Both in
 * the default dim order (the AOT passes contiguous ones); out must not
 * share self's memory (the AOT never plans an op's out over its input).
 *
 * Column by column (Cholesky-Crout, linalg_cholesky.h), j = 0 .. n-1:
 *   L_jj = sqrtf(a_jj - L_j0^2 - ... - L_j,j-1^2),
 *   L_ij = (a_ij - L_i0 L_j0 - ... - L_i,j-1 L_j,j-1) / L_jj for i > j,
 * subtracting in k order, float32 -, *, / and sqrtf only: the reference
 * interpreter repeats it bit for bit. L is kept in out (its transpose
 * where upper). A matrix that is not positive-definite meets a pivot
 * <= 0: NaN (the quiet NAN, not the FPU's sqrt of a negative, whose sign
 * differs between x86 and Arm) in that column and every later one of the
 * factor's triangle, where torch raises (ptec::linalg_cholesky_info.out
 * gives that column's order, cholesky_ex's info). A matrix whose read
 * triangle holds an inf or a NaN gives NaN for the whole factor (both
 * triangles).
 *
 * No scratch. Every size is checked at prepare, in 64-bit arithmetic
 * against 32-bit limits. */
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_cholesky.h"
#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_UPPER = 1, ARG_OUT = 2, ARG_COUNT = 4 };

typedef struct cholesky_state {
    uint32_t batch; /* matrices */
    int32_t n;      /* each matrix's rows and columns */
    uint8_t upper;  /* read the upper triangle, write U */
} cholesky_state;

static ptec_status prepare(ptec_op *op)
{
    cholesky_state *s = op->state;
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
    uint32_t batch, bytes; /* one matrix's n * n floats, indexed in size_t */
    if ((st = ptec_linalg_square_shapes(op, ARG_SELF, self, ARG_OUT, out, 2, false,
                                        PTEC_MSG("self and out must be [..., n, n]"),
                                        PTEC_MSG("out must have self's sizes"), &n, &batch)) != PTEC_OK ||
        (st = ptec_linalg_matrix_bytes(op, ARG_SELF, n, &bytes)) != PTEC_OK) {
        return st;
    }
    s->batch = batch;
    s->n = n;
    s->upper = upper;
    return PTEC_OK;
}

static void one_matrix(const float *a, float *l, size_t n, bool upper)
{
    bool finite = true;
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j <= i; ++j) {
            finite = finite && fabsf(upper ? a[j * n + i] : a[i * n + j]) <= 3.40282347e+38f;
        }
    }
    for (size_t k = 0; k < n * n; ++k) {
        l[k] = finite ? 0.0f : NAN;
    }
    if (finite) {
        (void)ptec_cholesky_columns(a, l, n, upper);
    }
}

static ptec_status run(ptec_op *op)
{
    const cholesky_state *s = op->state;
    const float *x = ptec_op_tensor(op, ARG_SELF)->data;
    float *y = ptec_op_tensor(op, ARG_OUT)->data;
    size_t n = (size_t)s->n;
    for (uint32_t b = 0; b < s->batch; ++b) {
        one_matrix(x + (size_t)b * n * n, y + (size_t)b * n * n, n, s->upper);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_cholesky_out = {"ptec::linalg_cholesky.out", sizeof(cholesky_state), prepare,
                                                          run};
