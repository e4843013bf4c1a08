/* aten::slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None,
 *     SymInt step=1, *, Tensor(a!) out)
 *
 * Any dtype and dim order. start/end are clamped into [0, size] after
 * negative values count from the end, as in PyTorch; step must be positive. */
#include <string.h>

#include "kernels/portable/data_movement.h"
#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct slice_state {
    int32_t start, step;
    uint8_t dim;
} slice_state;

static int64_t clamp_index(int64_t v, int64_t size)
{
    if (v < 0) {
        v += size;
    }
    return v < 0 ? 0 : (v > size ? size : v);
}

static ptec_status prepare(ptec_op *op)
{
    slice_state *s = op->state;
    ptec_tensor *self, *out;
    int64_t dim, start = 0, end = INT64_MAX, step;
    int d;
    ptec_status st;
    if ((st = ptec_move_prepare(op, 7, &self, &out)) != PTEC_OK || (st = ptec_op_get_int(op, 1, &dim)) != PTEC_OK ||
        (!ptec_op_arg_is_null(op, 2) && (st = ptec_op_get_int(op, 2, &start)) != PTEC_OK) ||
        (!ptec_op_arg_is_null(op, 3) && (st = ptec_op_get_int(op, 3, &end)) != PTEC_OK) ||
        (st = ptec_op_get_int(op, 4, &step)) != PTEC_OK || (st = ptec_portable_dim(op, 1, dim, self->rank, &d)) != PTEC_OK) {
        return st;
    }
    if (step <= 0 || step > INT32_MAX) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 4, PTEC_MSG("step must be positive"));
    }
    int64_t size = self->sizes[d];
    start = clamp_index(start, size);
    end = end == INT64_MAX ? size : clamp_index(end, size);
    int64_t len = end > start ? (end - start + step - 1) / step : 0;
    int32_t want[PTEC_MAX_RANK];
    memcpy(want, self->sizes, sizeof(int32_t) * self->rank);
    want[d] = (int32_t)len;
    memset(s, 0, sizeof *s);
    s->start = (int32_t)start;
    s->step = len > 1 ? (int32_t)step : 1; /* a single element never steps: keeps stride * step in range */
    s->dim = (uint8_t)d;
    return ptec_portable_expect_sizes(op, 5, out, want, self->rank, PTEC_MSG("out's sizes must be self's, sliced"));
}

static ptec_status run(ptec_op *op)
{
    const slice_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, 0), *out = ptec_op_tensor(op, 5);
    int32_t s_in[PTEC_MAX_RANK], s_out[PTEC_MAX_RANK];
    ptec_physical_strides(in, s_in);
    ptec_physical_strides(out, s_out);
    size_t base = (size_t)s->start * (size_t)s_in[s->dim];
    s_in[s->dim] *= s->step;
    if (out->numel > 0) {
        ptec_copy_strided(ptec_dtype_size(out->dtype), out->rank, out->sizes, in->data, s_in, base, out->data, s_out, 0);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_slice_copy_tensor_out = {"aten::slice_copy.Tensor_out", sizeof(slice_state),
                                                            prepare, run};
