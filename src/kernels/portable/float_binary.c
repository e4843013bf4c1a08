#include "kernels/portable/float_binary.h"

#include <math.h>
#include <string.h>

#include "kernels/portable/broadcast.h"
#include "kernels/portable/portable_args.h"

static bool same_layout(const ptec_tensor *a, const ptec_tensor *b)
{
    return ptec_tensor_same_shape(a, b) && memcmp(a->dim_order, b->dim_order, a->rank) == 0;
}

ptec_status ptec_float_binary_prepare(ptec_op *op)
{
    float_binary_state *s = op->state;
    ptec_tensor *self, *other, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4u)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 1, &other)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 0, self)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 1, other)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 2, out)) != PTEC_OK) {
        return st;
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 2, PTEC_MSG("out must not be a constant tensor"));
    }
    int32_t strides[PTEC_MAX_RANK];
    if ((st = ptec_broadcast_strides(op, 0, self, out, strides)) != PTEC_OK ||
        (st = ptec_broadcast_strides(op, 1, other, out, strides)) != PTEC_OK) {
        return st;
    }
    s->flat = same_layout(self, out) && same_layout(other, out);
    return PTEC_OK;
}

/* fn(a, b) with every NaN as the one quiet NaN (0x7FC00000): the CPUs'
 * default NaNs differ in sign (x86's is negative, Arm's positive), and the
 * host, the boards and the reference write the same bytes. */
static inline float apply(float_binary_fn fn, float a, float b)
{
    float r = fn(a, b);
    return r != r ? NAN : r;
}

ptec_status ptec_float_binary_run(ptec_op *op, float_binary_fn fn)
{
    const float_binary_state *s = op->state;
    const ptec_tensor *t_a = ptec_op_tensor(op, 0), *t_b = ptec_op_tensor(op, 1), *t_out = ptec_op_tensor(op, 2);
    const float *a = t_a->data, *b = t_b->data;
    float *y = t_out->data;
    if (s->flat) {
        for (uint32_t i = 0; i < t_out->numel; ++i) {
            y[i] = apply(fn, a[i], b[i]);
        }
        return PTEC_OK;
    }
    static const int args[2] = {0, 1};
    ptec_broadcast w;
    ptec_broadcast_start(&w, op, args, 2, 2);
    for (uint32_t n = 0; n < t_out->numel; ++n, ptec_broadcast_next(&w)) {
        y[w.off[2]] = apply(fn, a[w.off[0]], b[w.off[1]]);
    }
    return PTEC_OK;
}
