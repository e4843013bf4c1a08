/* ptec::random_dropout.out(Tensor self, float p, int mask_dims,
 *     int zero_point, int seed, Tensor(a!) out)
 *
 * F.dropout / dropout1d / 2d / 3d called with training=True: each mask
 * element is dropped with probability p, drawn anew on every execute.
 * The mask varies over the first mask_dims logical dims and is shared by
 * the rest: mask_dims = rank drops elements, 2 drops whole channels of
 * [N, C, ...]. One draw per mask element, in row-major logical order
 * (so the stream does not depend on the layout); dropped when the draw's
 * float in [0, 1) is below p (float32).
 * float32: x times torch's noise, 1 / (1 - p) in float32 for a kept element
 * and 0 for a dropped one. int8: the output's grid is the input's with scale
 * in_scale / (1 - p) and the same zero point (the compiler chose it), so a
 * kept element is its input code and a dropped one the zero point: exact.
 * The generator (ptec_random.h) lives in the prepared state, seeded at
 * prepare from `seed`. */
#include "kernels/portable/portable_args.h"
#include "kernels/portable/ptec_random.h"
#include "kernels/portable/strides.h"

enum { ARG_SELF, ARG_P, ARG_MASK_DIMS, ARG_ZERO_POINT, ARG_SEED, ARG_OUT, ARG_COUNT };

typedef struct dropout_state {
    ptec_random rng;
    float p;        /* drop when the draw is below it */
    float scale;    /* float32: a kept element's factor */
    uint32_t inner; /* elements that share one draw */
    int8_t zero_point;
    int32_t sx[PTEC_MAX_RANK], sy[PTEC_MAX_RANK];
} dropout_state;

static ptec_status prepare(ptec_op *op)
{
    dropout_state *s = op->state;
    ptec_tensor *self, *out;
    double p;
    int64_t mask_dims, zero_point, seed;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT + 1)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_double(op, ARG_P, &p)) != PTEC_OK ||
        (st = ptec_op_get_int(op, ARG_MASK_DIMS, &mask_dims)) != PTEC_OK ||
        (st = ptec_op_get_int(op, ARG_ZERO_POINT, &zero_point)) != PTEC_OK ||
        (st = ptec_op_get_int(op, ARG_SEED, &seed)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT && self->dtype != PTEC_DTYPE_CHAR) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self must be float32 or int8"));
    }
    if (out->dtype != self->dtype) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have self's dtype"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, ARG_OUT, PTEC_MSG("out must not be a constant tensor"));
    }
    if ((st = ptec_portable_expect_sizes(op, ARG_OUT, out, self->sizes, self->rank,
                                         PTEC_MSG("out must have self's sizes"))) != PTEC_OK) {
        return st;
    }
    if (!(p >= 0.0 && p < 1.0)) { /* NaN fails too */
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_P, PTEC_MSG("p must be in [0, 1)"));
    }
    if (mask_dims < 0 || mask_dims > (int64_t)self->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_MASK_DIMS, PTEC_MSG("mask_dims must be in [0, rank]"));
    }
    int64_t lo = self->dtype == PTEC_DTYPE_CHAR ? INT8_MIN : 0, hi = self->dtype == PTEC_DTYPE_CHAR ? INT8_MAX : 0;
    if (zero_point < lo || zero_point > hi) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ZERO_POINT,
                            PTEC_MSG("zero_point must be an int8 value (0 for float32)"));
    }
    uint64_t inner = 1u;
    for (int d = (int)mask_dims; d < (int)self->rank; ++d) {
        inner *= (uint64_t)self->sizes[d]; /* numel is the loader's checked product: no overflow */
    }
    s->inner = (uint32_t)inner;
    s->p = (float)p;
    s->scale = 1.0f / (float)(1.0 - p);
    s->zero_point = (int8_t)zero_point;
    ptec_physical_strides(self, s->sx);
    ptec_physical_strides(out, s->sy);
    ptec_random_seed(&s->rng, (uint64_t)seed);
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    dropout_state *s = op->state; /* the generator advances: state is the kernel's, not shared */
    const ptec_tensor *t_x = ptec_op_tensor(op, ARG_SELF), *t_y = ptec_op_tensor(op, ARG_OUT);
    int rank = (int)t_x->rank;
    int32_t index[PTEC_MAX_RANK] = {0};
    size_t ox = 0, oy = 0;
    uint32_t left = 0;
    bool drop = false;
    for (uint32_t i = 0; i < t_x->numel; ++i) {
        if (left == 0u) {
            drop = ptec_random_float(&s->rng) < s->p;
            left = s->inner;
        }
        --left;
        if (t_x->dtype == PTEC_DTYPE_FLOAT) {
            /* torch multiplies by its noise (0 or the scale): -0 and NaN as it gives them */
            ((float *)t_y->data)[oy] = ((const float *)t_x->data)[ox] * (drop ? 0.0f : s->scale);
        } else {
            ((int8_t *)t_y->data)[oy] = drop ? s->zero_point : ((const int8_t *)t_x->data)[ox];
        }
        ptec_walk_step(rank, t_x->sizes, index, s->sx, &ox, s->sy, &oy);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_random_dropout_out = {"ptec::random_dropout.out", sizeof(dropout_state), prepare,
                                                         run};
