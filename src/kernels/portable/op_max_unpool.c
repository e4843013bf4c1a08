/* ptec::max_unpool.out(Tensor self, Tensor indices, int zero_point, *, Tensor(a!) out)
 *
 * torch's max_unpool1d/2d/3d: out is zero except that each value of self
 * lands at its index, a flat position in its (n, c) plane of out (the
 * plane being out's dims after N and C, any count of them). self and
 * indices are [N, C, ...] of equal sizes; self float32, or int8 with out
 * on self's grid, whose zero is the code zero_point (an affine grid maps
 * zero_point to 0.0 exactly); a float32 out takes zero_point 0. Any dim
 * orders. The indices are data (a pool's output, or a program input):
 * every one is checked against the plane before anything is written, so
 * an index outside [0, plane) fails the call with PTEC_INVALID_ARGUMENT
 * and leaves out untouched. Two values at one index: the later in self's
 * row-major order wins, as torch's CPU loop. */
#include <string.h>

#include "kernels/portable/strides.h"
#include "ptec/kernel.h"

enum { U_SELF = 0, U_INDICES = 1, U_ZERO = 2, U_OUT = 3 };

typedef struct max_unpool_state {
    int64_t plane; /* elements of one (n, c) plane of out */
    int8_t zero;   /* the int8 code of 0.0 */
} max_unpool_state;

static ptec_status prepare(ptec_op *op)
{
    max_unpool_state *s = op->state;
    ptec_tensor *self, *indices, *out;
    int64_t zero;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5)) != PTEC_OK || (st = ptec_op_get_tensor(op, U_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, U_INDICES, &indices)) != PTEC_OK ||
        (st = ptec_op_get_int(op, U_ZERO, &zero)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT && self->dtype != PTEC_DTYPE_CHAR) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, U_SELF, PTEC_MSG("self must be float32 or int8"));
    }
    if (out->dtype != self->dtype) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, U_OUT, PTEC_MSG("out must have self's dtype"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, U_OUT, PTEC_MSG("out must not be a constant tensor"));
    }
    if ((self->dtype == PTEC_DTYPE_CHAR && (zero < -128 || zero > 127)) ||
        (self->dtype == PTEC_DTYPE_FLOAT && zero != 0)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, U_ZERO,
                            PTEC_MSG("zero_point must be an int8 code (0 for float32)"));
    }
    if (indices->dtype != PTEC_DTYPE_LONG || indices->rank != self->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, U_INDICES, PTEC_MSG("indices must be int64 with self's sizes"));
    }
    for (int d = 0; d < (int)self->rank; ++d) {
        if (indices->sizes[d] != self->sizes[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, U_INDICES,
                                PTEC_MSG("indices must be int64 with self's sizes"));
        }
    }
    if (self->rank < 3 || out->rank != self->rank || out->sizes[0] != self->sizes[0] ||
        out->sizes[1] != self->sizes[1]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, U_OUT, PTEC_MSG("self and out must be [N, C, ...] alike"));
    }
    /* out's numel is the loader's checked product, so the plane fits */
    int64_t plane = 1;
    for (int d = 2; d < (int)out->rank; ++d) {
        plane *= out->sizes[d];
    }
    s->plane = plane;
    s->zero = (int8_t)zero;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const max_unpool_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, U_SELF), *t_i = ptec_op_tensor(op, U_INDICES);
    const ptec_tensor *t_y = ptec_op_tensor(op, U_OUT);
    int rank = (int)t_x->rank;
    int32_t sx[PTEC_MAX_RANK], si[PTEC_MAX_RANK], sy[PTEC_MAX_RANK], at[PTEC_MAX_RANK];
    ptec_physical_strides(t_x, sx);
    ptec_physical_strides(t_i, si);
    ptec_physical_strides(t_y, sy);
    const int64_t *idx = t_i->data;
    /* every index first: a bad one leaves out untouched */
    for (uint32_t e = 0; e < t_i->numel; ++e) {
        if (idx[e] < 0 || idx[e] >= s->plane) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, U_INDICES, PTEC_MSG("an index is outside the output plane"));
        }
    }
    size_t width = t_x->dtype == PTEC_DTYPE_CHAR ? 1u : sizeof(float);
    uint8_t *y = t_y->data;
    if (width == 1) {
        memset(y, (uint8_t)s->zero, t_y->numel);
    } else {
        memset(y, 0, (size_t)t_y->numel * width); /* all-zero bytes are +0.0f */
    }
    if (t_x->numel == 0) {
        return PTEC_OK;
    }
    const uint8_t *x = t_x->data;
    memset(at, 0, sizeof at);
    size_t ox = 0, oi = 0;
    for (uint32_t e = 0; e < t_x->numel; ++e) {
        int64_t p = idx[oi];
        /* the plane position as out's coordinates: row-major over dims 2.. */
        size_t to = (size_t)at[0] * (size_t)sy[0] + (size_t)at[1] * (size_t)sy[1];
        for (int d = rank - 1; d >= 2; --d) {
            to += (size_t)(p % t_y->sizes[d]) * (size_t)sy[d];
            p /= t_y->sizes[d];
        }
        memcpy(y + to * width, x + ox * width, width);
        if (e + 1 < t_x->numel) {
            ptec_walk_step(rank, t_x->sizes, at, sx, &ox, si, &oi);
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_max_unpool_out = {"ptec::max_unpool.out", sizeof(max_unpool_state), prepare,
                                                     run};
