#include "kernels/portable/broadcast.h"

#include "kernels/portable/strides.h"

ptec_status ptec_broadcast_strides(ptec_op *op, int arg, const ptec_tensor *t, const ptec_tensor *out,
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

void ptec_broadcast_start(ptec_broadcast *w, ptec_op *op, const int *args, int n, int out_arg)
{
    const ptec_tensor *out = ptec_op_tensor(op, (size_t)out_arg);
    w->n = n;
    w->rank = out->rank;
    w->sizes = out->sizes;
    for (int d = 0; d < PTEC_MAX_RANK; ++d) {
        w->index[d] = 0;
    }
    for (int k = 0; k < n; ++k) {
        /* prepare() already checked that every input broadcasts to out */
        (void)ptec_broadcast_strides(op, args[k], ptec_op_tensor(op, (size_t)args[k]), out, w->stride[k]);
        w->off[k] = 0;
    }
    ptec_physical_strides(out, w->stride[n]);
    w->off[n] = 0;
}

void ptec_broadcast_next(ptec_broadcast *w)
{
    /* Offsets wrap through size_t on the way back; every offset they land
     * on is in range (as in strides.h's odometer). */
    for (int d = w->rank - 1; d >= 0; --d) {
        if (++w->index[d] < w->sizes[d]) {
            for (int k = 0; k <= w->n; ++k) {
                w->off[k] += (size_t)w->stride[k][d];
            }
            return;
        }
        for (int k = 0; k <= w->n; ++k) {
            w->off[k] -= (size_t)w->stride[k][d] * (size_t)(w->sizes[d] - 1);
        }
        w->index[d] = 0;
    }
}
