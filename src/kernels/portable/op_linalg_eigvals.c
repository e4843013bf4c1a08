/* ptec::linalg_eigvals.out(Tensor self, *, Tensor(a!) out)
 *
 * The eigenvalues of each (general, real) matrix of self [..., n, n]
 * (float32, rank 2 or more, n at least 1) into out [..., n, 2] (float32):
 * each eigenvalue's real and imaginary parts, torch.view_as_real's layout
 * of torch.linalg.eigvals' complex result. Both tensors in the default dim
 * order (the AOT passes contiguous ones).
 *
 * On a copy in scratch (n * n floats): ptec_eig_values (linalg_eig.h):
 * power-of-two scaling, Hessenberg reduction, Francis double-shift QR, the
 * values scaled back and sorted by real part ascending, then imaginary part
 * descending: ptec's documented order (a conjugate pair a + bi, a - bi
 * adjacent, its positive imaginary part first; both of its real parts are
 * the same float). torch's (LAPACK geev's) order is deflation's, which
 * torch does not define. A matrix taking more than 30 n QR steps has not
 * converged: NaN for all its values (its run still succeeds; a program
 * cannot branch on it). ptec::linalg_eig_vectors.out computes the same
 * values, so its vectors follow this order.
 *
 * Only +, -, *, / , fabsf and sqrtf, in an order the reference interpreter
 * repeats (python/ptec/reference/linalg.py): its bytes are the kernel's. A
 * matrix holding an infinity or a NaN gives NaN for all its values; a zero
 * matrix gives zeros.
 *
 * Scratch: n * n floats. Every size is checked at prepare, in 64-bit
 * arithmetic against 32-bit limits. */
#include "kernels/portable/linalg_common.h"
#include "kernels/portable/linalg_eig.h"
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_OUT = 1, ARG_COUNT = 3 };

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
    int32_t n;
    uint32_t batch, scratch; /* the copy: n * n floats */
    if ((st = ptec_linalg_square_shapes(op, ARG_SELF, self, ARG_OUT, out, 1, true,
                                        PTEC_MSG("self must be [..., n, n] and out [..., n, 2]"),
                                        PTEC_MSG("out must be [..., n, 2] of self's batch"), &n, &batch)) != PTEC_OK ||
        (st = ptec_linalg_matrix_bytes(op, ARG_SELF, n, &scratch)) != PTEC_OK) {
        return st;
    }
    s->batch = batch;
    s->n = n;
    op->scratch_bytes = scratch;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const eigvals_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, ARG_SELF), *t_y = ptec_op_tensor(op, ARG_OUT);
    const float *x = t_x->data;
    float *y = t_y->data;
    size_t n = (size_t)s->n;
    for (uint32_t b = 0; b < s->batch; ++b) {
        int e;
        (void)ptec_eig_values(x + (size_t)b * n * n, op->scratch, y + (size_t)b * n * 2, NULL, (uint32_t)n, &e);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_linalg_eigvals_out = {"ptec::linalg_eigvals.out", sizeof(eigvals_state), prepare,
                                                         run};
