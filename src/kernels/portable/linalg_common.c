/* What the float32 linear-algebra kernels share (linalg_common.h). */
#include "kernels/portable/linalg_common.h"
#include "kernels/portable/portable_args.h"

#include <float.h>

bool ptec_linalg_default_order(const ptec_tensor *t)
{
    for (int d = 0; d < (int)t->rank; ++d) {
        if (t->dim_order[d] != d) {
            return false;
        }
    }
    return true;
}

ptec_status ptec_linalg_expect_layout(ptec_op *op, int self_arg, const ptec_tensor *self, int out_arg,
                                      const ptec_tensor *out, int drop, const char *shape_message)
{
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, out_arg, PTEC_MSG("out must not be a constant tensor"));
    }
    if (self->rank < 2 || (int)out->rank != (int)self->rank - drop) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, self_arg, shape_message);
    }
    if (!ptec_linalg_default_order(self) || !ptec_linalg_default_order(out)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, self_arg, PTEC_MSG("self and out must be in the default dim order"));
    }
    return PTEC_OK;
}

ptec_status ptec_linalg_square(ptec_op *op, int arg, const ptec_tensor *self, int32_t *n)
{
    int rank = self->rank;
    int32_t cols = self->sizes[rank - 1];
    if (self->sizes[rank - 2] != cols) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, PTEC_MSG("self's matrices must be square"));
    }
    if (cols < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, PTEC_MSG("empty matrices"));
    }
    *n = cols;
    return PTEC_OK;
}

ptec_status ptec_linalg_batch(ptec_op *op, int arg, const ptec_tensor *self, int32_t *want, uint32_t *batch)
{
    uint64_t count = 1;
    for (int d = 0; d < (int)self->rank - 2; ++d) {
        if (self->sizes[d] < 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, PTEC_MSG("negative size"));
        }
        if (want) {
            want[d] = self->sizes[d];
        }
        count *= (uint64_t)self->sizes[d];
        if (count > UINT32_MAX) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, arg, PTEC_MSG("too many matrices"));
        }
    }
    *batch = (uint32_t)count;
    return PTEC_OK;
}

ptec_status ptec_linalg_square_shapes(ptec_op *op, int self_arg, const ptec_tensor *self, int out_arg,
                                      const ptec_tensor *out, int out_n_dims, bool out_pair,
                                      const char *rank_message, const char *sizes_message, int32_t *n,
                                      uint32_t *batch)
{
    int tail = out_n_dims + (out_pair ? 1 : 0);
    ptec_status st;
    if ((st = ptec_linalg_expect_layout(op, self_arg, self, out_arg, out, 2 - tail, rank_message)) != PTEC_OK ||
        (st = ptec_linalg_square(op, self_arg, self, n)) != PTEC_OK) {
        return st;
    }
    int32_t want[PTEC_MAX_RANK];
    if ((st = ptec_linalg_batch(op, self_arg, self, want, batch)) != PTEC_OK) {
        return st;
    }
    /* at ends at out's rank, self's - 2 + tail (the layout check), which a
     * tensor keeps within PTEC_MAX_RANK */
    int at = (int)self->rank - 2;
    for (int d = 0; d < out_n_dims; ++d) {
        want[at++] = *n;
    }
    if (out_pair) {
        want[at++] = 2;
    }
    return ptec_portable_expect_sizes(op, out_arg, out, want, at, sizes_message);
}

ptec_status ptec_linalg_matrix_bytes(ptec_op *op, int arg, int32_t n, uint32_t *bytes)
{
    /* n < 2^31: the product is below 2^64 */
    uint64_t b = (uint64_t)n * (uint64_t)n * sizeof(float);
    if (b > UINT32_MAX) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, arg, PTEC_MSG("matrix too large"));
    }
    *bytes = (uint32_t)b;
    return PTEC_OK;
}

bool ptec_linalg_max_abs(const float *a, size_t count, float *big)
{
    float top = 0.0f;
    for (size_t i = 0; i < count; ++i) {
        float v = fabsf(a[i]);
        if (!(v <= FLT_MAX)) {
            return false;
        }
        top = v > top ? v : top;
    }
    *big = top;
    return true;
}

void ptec_linalg_fill_nan(float *out, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        out[i] = NAN;
    }
}

float ptec_linalg_jacobi_tangent(float zeta)
{
    if (fabsf(zeta) > 1073741824.0f) {
        return 0.5f / zeta;
    }
    float mag = 1.0f / (fabsf(zeta) + sqrtf(1.0f + zeta * zeta));
    return zeta < 0.0f ? -mag : mag;
}
