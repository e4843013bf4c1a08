/* aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)
 *
 * The batched matrix product of self [B, n, k] and mat2 [B, k, m] into out
 * [B, n, m], float32, all three rank 3 and in the default dim order
 * (upstream's kernel demands self's default order and one order for all
 * three). No broadcasting: the batch sizes are equal.
 *
 *   out[b, i, j] = ((0 + s[b,i,0] t[b,0,j]) + s[b,i,1] t[b,1,j]) + ...
 *
 * summed in float32 from 0.0f, the contracted index in order 0 .. k-1, each
 * product rounded then added (the build has -ffp-contract=off: no fused
 * multiply-add), as upstream's portable kernel (vec_matmul) sums; so the
 * reference interpreter (ptec.reference.portable.bmm) gives its bytes. k = 0
 * gives zeros; an empty batch or matrix writes nothing. Non-finite entries
 * propagate as IEEE arithmetic does (an inf times 0 is NaN).
 *
 * No scratch. Every size is checked at prepare; the sizes the runtime
 * accepts are non-negative with fewer than 2^31 elements per tensor, so
 * each offset below fits size_t on a 32-bit target. */
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_MAT2 = 1, ARG_OUT = 2, ARG_COUNT = 4 };

typedef struct bmm_state {
    uint32_t batch;
    uint32_t n, k, m;  /* self [batch, n, k], mat2 [batch, k, m], out [batch, n, m] */
} bmm_state;

static bool default_order(const ptec_tensor *t)
{
    for (int d = 0; d < (int)t->rank; ++d) {
        if (t->dim_order[d] != d) {
            return false;
        }
    }
    return true;
}

/* Whether x y z (each below 2^31) is at most UINT32_MAX. */
static bool fits3(uint64_t x, uint64_t y, uint64_t z)
{
    uint64_t xy = x * y; /* below 2^62 */
    return xy == 0 || z <= UINT32_MAX / xy;
}

static ptec_status prepare(ptec_op *op)
{
    bmm_state *s = op->state;
    ptec_tensor *self, *mat2, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_MAT2, &mat2)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if ((st = ptec_portable_expect_float(op, ARG_SELF, self)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, ARG_MAT2, mat2)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, ARG_OUT, out)) != PTEC_OK) {
        return st;
    }
    if (self->rank != 3 || mat2->rank != 3 || out->rank != 3) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("self, mat2 and out must have rank 3"));
    }
    if (!default_order(self) || !default_order(mat2) || !default_order(out)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self, mat2 and out must be in the default dim order"));
    }
    for (int d = 0; d < 3; ++d) {
        if (self->sizes[d] < 0 || mat2->sizes[d] < 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, self->sizes[d] < 0 ? ARG_SELF : ARG_MAT2,
                                PTEC_MSG("negative size"));
        }
    }
    if (mat2->sizes[0] != self->sizes[0]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_MAT2, PTEC_MSG("mat2's batch must equal self's"));
    }
    if (mat2->sizes[1] != self->sizes[2]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_MAT2, PTEC_MSG("mat2 must have as many rows as self has columns"));
    }
    int32_t want[3] = {self->sizes[0], self->sizes[1], mat2->sizes[2]};
    if ((st = ptec_portable_expect_sizes(op, ARG_OUT, out, want, 3, PTEC_MSG("out must be [B, n, m] of self [B, n, k] "
                                                                             "and mat2 [B, k, m]"))) != PTEC_OK) {
        return st;
    }
    /* each tensor's element count within 32 bits (the runtime's bound, checked here again), each product
     * checked before it is taken: no 64-bit product of three sizes below 2^31 can wrap */
    uint64_t b = (uint64_t)self->sizes[0], n = (uint64_t)self->sizes[1], k = (uint64_t)self->sizes[2];
    uint64_t m = (uint64_t)mat2->sizes[2];
    if (!fits3(b, n, k) || !fits3(b, k, m) || !fits3(b, n, m)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("tensors too large"));
    }
    s->batch = (uint32_t)b;
    s->n = (uint32_t)n;
    s->k = (uint32_t)k;
    s->m = (uint32_t)m;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const bmm_state *s = op->state;
    const float *x = ptec_op_tensor(op, ARG_SELF)->data;
    const float *y = ptec_op_tensor(op, ARG_MAT2)->data;
    float *z = ptec_op_tensor(op, ARG_OUT)->data;
    size_t n = s->n, k = s->k, m = s->m;
    for (size_t b = 0; b < s->batch; ++b) {
        const float *xb = x + b * n * k, *yb = y + b * k * m;
        float *zb = z + b * n * m;
        for (size_t i = 0; i < n; ++i) {
            for (size_t j = 0; j < m; ++j) {
                float acc = 0.0f;
                for (size_t c = 0; c < k; ++c) {
                    acc += xb[i * k + c] * yb[c * m + j];
                }
                zb[i * m + j] = acc;
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_bmm_out = {"aten::bmm.out", sizeof(bmm_state), prepare, run};
