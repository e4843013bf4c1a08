#include "kernels/portable/float_binary.h"

#include <math.h>

#include "kernels/portable/binary_operands.h"
#include "kernels/portable/broadcast.h"
#include "kernels/portable/portable_args.h"

ptec_status ptec_float_binary_prepare(ptec_op *op)
{
    float_binary_state *s = op->state;
    ptec_tensor *self, *other, *out;
    ptec_status st;
    if ((st = ptec_binary_operands(op, &self, &other, &out)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 0, self)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 1, other)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 2, out)) != PTEC_OK ||
        (st = ptec_binary_onto_out(op, self, other, out)) != PTEC_OK) {
        return st;
    }
    s->flat = ptec_binary_same_layout(self, out) && ptec_binary_same_layout(other, out);
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
