#include "kernels/portable/float_binary.h"

#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

/* Strides of `t` right-aligned onto out's rank, 0 where t has extent 1 (broadcast). */
static ptec_status aligned_strides(ptec_op *op, int arg, const ptec_tensor *t, const ptec_tensor *out,
                                   int32_t *strides)
{
    int32_t own[PTEC_MAX_RANK];
    ptec_physical_strides(t, own);
    int shift = (int)out->rank - (int)t->rank;
    if (shift < 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, PTEC_MSG("input has more dimensions than out"));
    }
    for (int d = 0; d < (int)out->rank; ++d) {
        int32_t extent = d >= shift ? t->sizes[d - shift] : 1;
        if (extent != 1 && extent != out->sizes[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, PTEC_MSG("shape does not broadcast to out"));
        }
        strides[d] = (d >= shift && extent != 1) ? own[d - shift] : 0;
    }
    return PTEC_OK;
}

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
    if ((st = aligned_strides(op, 0, self, out, strides)) != PTEC_OK ||
        (st = aligned_strides(op, 1, other, out, strides)) != PTEC_OK) {
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
    int32_t stride_a[PTEC_MAX_RANK], stride_b[PTEC_MAX_RANK], stride_y[PTEC_MAX_RANK];
    int32_t index[PTEC_MAX_RANK] = {0};
    /* prepare() already checked that both inputs broadcast to out */
    (void)aligned_strides(op, 0, t_a, t_out, stride_a);
    (void)aligned_strides(op, 1, t_b, t_out, stride_b);
    ptec_physical_strides(t_out, stride_y);
    size_t off_a = 0, off_b = 0, off_y = 0;
    const int rank = (int)t_out->rank;
    for (uint32_t n = 0; n < t_out->numel; ++n) {
        y[off_y] = apply(fn, a[off_a], b[off_b]);
        /* a row-major odometer over out's sizes, the three offsets in step;
         * they wrap through size_t on the way back and land in range */
        for (int d = rank - 1; d >= 0; --d) {
            if (++index[d] < t_out->sizes[d]) {
                off_a += (size_t)stride_a[d];
                off_b += (size_t)stride_b[d];
                off_y += (size_t)stride_y[d];
                break;
            }
            off_a -= (size_t)stride_a[d] * (size_t)(t_out->sizes[d] - 1);
            off_b -= (size_t)stride_b[d] * (size_t)(t_out->sizes[d] - 1);
            off_y -= (size_t)stride_y[d] * (size_t)(t_out->sizes[d] - 1);
            index[d] = 0;
        }
    }
    return PTEC_OK;
}
