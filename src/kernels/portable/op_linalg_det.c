/* ptec::linalg_det.out(Tensor self, int mode, *, Tensor(a!) out)
 *
 * For each square matrix of self [..., n, n] (float32, rank 2 or more, n
 * at least 1), into out [...] (float32, self's batch dims):
 *   mode 0: the determinant (torch.linalg.det);
 *   mode 1: its sign, -1, 0 or 1 (torch.linalg.slogdet's sign);
 *   mode 2: log |det| (slogdet's logabsdet; -inf for a singular matrix);
 *   mode 3: log det (torch.logdet: logabsdet where the sign is 1, -inf
 *           where it is 0, NaN where it is -1).
 * Both tensors in the default dim order (the AOT passes contiguous ones).
 *
 * LU with partial pivoting on a scratch copy (linalg_lu.h). The
 * determinant is the product of the pivots in order, from 1.0f, negated
 * after an odd number of row swaps (float32, overflowing to inf as
 * torch's float32 does for huge n); the sign, that product's sign (0 when a
 * pivot is 0); log |det| the sum, in double, of log |pivot| (double log,
 * on the runtime's libc allowance), rounded once to float: it stays finite
 * where the determinant itself overflows or underflows float32. A
 * matrix holding an infinity or a NaN gives NaN.
 *
 * Scratch: n * n floats. Every size is checked at prepare, in 64-bit
 * arithmetic against 32-bit limits. */
#include <math.h>
#include <string.h>

#include "kernels/portable/linalg_lu.h"
#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_MODE = 1, ARG_OUT = 2, ARG_COUNT = 4 };
enum { MODE_DET = 0, MODE_SIGN = 1, MODE_LOGABS = 2, MODE_LOGDET = 3 };

typedef struct det_state {
    uint32_t batch; /* matrices */
    int32_t n;      /* each matrix's rows and columns */
    int32_t mode;
} det_state;

static ptec_status prepare(ptec_op *op)
{
    det_state *s = op->state;
    ptec_tensor *self, *out;
    int32_t mode;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, ARG_MODE, &mode)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must be float32"));
    }
    if (mode < MODE_DET || mode > MODE_LOGDET) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_MODE, PTEC_MSG("mode must be 0 (det), 1 (sign), 2 (log |det|) or 3 (log det)"));
    }
    int32_t n;
    uint32_t batch, scratch; /* the copy: n * n floats */
    if ((st = ptec_linalg_square_shapes(op, ARG_SELF, self, ARG_OUT, out, 0, false,
                                        PTEC_MSG("self must be [..., n, n] and out [...]"),
                                        PTEC_MSG("out must be self's batch dims"), &n, &batch)) != PTEC_OK ||
        (st = ptec_linalg_matrix_bytes(op, ARG_SELF, n, &scratch)) != PTEC_OK) {
        return st;
    }
    s->batch = batch;
    s->n = n;
    s->mode = mode;
    op->scratch_bytes = scratch;
    return PTEC_OK;
}

static float one_matrix(const float *a, float *w, uint32_t n, int32_t mode)
{
    size_t count = (size_t)n * n;
    if (!ptec_lu_all_finite(a, count)) {
        return NAN;
    }
    memcpy(w, a, count * sizeof(float));
    uint32_t parity = ptec_lu_factor(w, n, NULL, 0);
    float det = 1.0f;
    double logabs = 0.0;
    int negative = (int)parity, zero = 0;
    for (uint32_t k = 0; k < n; ++k) {
        float u = w[k * n + k];
        det = det * u;
        if (u == 0.0f) {
            zero = 1;
        } else {
            negative ^= u < 0.0f;
            logabs += log((double)fabsf(u));
        }
    }
    float sign = zero ? 0.0f : (negative ? -1.0f : 1.0f);
    float logabsdet = zero ? -INFINITY : (float)logabs;
    switch (mode) {
    case MODE_DET:
        return parity ? -det : det;
    case MODE_SIGN:
        return sign;
    case MODE_LOGABS:
        return logabsdet;
    default:
        return sign < 0.0f ? NAN : logabsdet;
    }
}

static ptec_status run(ptec_op *op)
{
    const det_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, ARG_SELF), *t_y = ptec_op_tensor(op, ARG_OUT);
    const float *x = t_x->data;
    float *y = t_y->data;
    size_t n = (size_t)s->n;
    for (uint32_t b = 0; b < s->batch; ++b) {
        y[b] = one_matrix(x + (size_t)b * n * n, op->scratch, (uint32_t)n, s->mode);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_det_out = {"ptec::linalg_det.out", sizeof(det_state), prepare, run};
