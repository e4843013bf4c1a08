/* aten::argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out)
 * aten::argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out)
 *
 * The position (int64) of the largest (smallest) element along dim, or of
 * the whole tensor in row-major order when dim is None. self is float32,
 * int8, int32 or int64, any dim order: a quantized graph passes its int8
 * values unchanged, since dequantizing with a positive scale keeps their
 * order, so the index is the one of the dequantized floats; int32 / int64
 * values (integers a program computes) compare exactly. Ties go to the first index and a
 * NaN beats every number (the first NaN wins), as in PyTorch and in
 * ExecuTorch's portable kernels, whose schemas these are. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct arg_reduce_state {
    uint32_t count;   /* elements reduced into each output */
    uint8_t all;      /* dim is None: reduce every dim */
    uint8_t dim;      /* the reduced dim when !all */
    uint8_t keepdim;
} arg_reduce_state;

static ptec_status prepare(ptec_op *op)
{
    arg_reduce_state *s = op->state;
    ptec_tensor *self, *out;
    int64_t dim64 = 0;
    bool keepdim;
    int dim = 0;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 2, &keepdim)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    bool all = ptec_op_arg_is_null(op, 1);
    if (!all && (st = ptec_op_get_int(op, 1, &dim64)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT && self->dtype != PTEC_DTYPE_CHAR && self->dtype != PTEC_DTYPE_INT &&
        self->dtype != PTEC_DTYPE_LONG) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("self must be float32, int8, int32 or int64"));
    }
    if (out->dtype != PTEC_DTYPE_LONG) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 3, PTEC_MSG("out must be int64"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 3, PTEC_MSG("out must not be a constant tensor"));
    }
    if (!all && self->rank > 0 && (st = ptec_portable_dim(op, 1, dim64, self->rank, &dim)) != PTEC_OK) {
        return st;
    }
    if (!all && self->rank == 0 && dim64 != 0 && dim64 != -1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
    }
    /* A 0-d self has one element whatever dim says. */
    all = all || self->rank == 0;
    int32_t want[PTEC_MAX_RANK];
    int rank = 0;
    uint64_t count = 1;
    for (int d = 0; d < self->rank; ++d) {
        bool reduced = all || d == dim;
        if (reduced) {
            count *= (uint64_t)self->sizes[d];
        }
        if (!reduced || keepdim) {
            want[rank++] = reduced ? 1 : self->sizes[d];
        }
    }
    /* PyTorch refuses the index of nothing. */
    if (count == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("argmax/argmin over no elements"));
    }
    memset(s, 0, sizeof *s);
    s->count = (uint32_t)count;
    s->all = all;
    s->dim = (uint8_t)dim;
    s->keepdim = keepdim;
    return ptec_portable_expect_sizes(op, 3, out, want, rank, PTEC_MSG("out's sizes do not match dim and keepdim"));
}

/* Whether a beats the best so far b (strictly: the first of equals stays). */
static bool beats_f(float a, float b, bool smallest)
{
    if (isnan(b)) {
        return false;
    }
    if (isnan(a)) {
        return true;
    }
    return smallest ? a < b : a > b;
}

/* self's element i, an int32 or int64 tensor, as int64 */
static int64_t load_int(const ptec_tensor *t, size_t i)
{
    if (t->dtype == PTEC_DTYPE_LONG) {
        return ((const int64_t *)t->data)[i];
    }
    return ((const int32_t *)t->data)[i];
}

static ptec_status run_with(ptec_op *op, bool smallest)
{
    const arg_reduce_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    int64_t *y = t_out->data;
    int32_t zero[PTEC_MAX_RANK] = {0}, kept_index[PTEC_MAX_RANK] = {0};
    ptec_reduce_walk w;
    ptec_reduce_walk_init(t_in, t_out, s->all ? ~0u : 1u << s->dim, s->keepdim, &w);
    size_t off_x = 0, off_y = 0;
    for (uint32_t o = 0; o < t_out->numel; ++o) {
        /* The reduced elements in row-major order of the reduced dims, so
         * the index counts as PyTorch's does (flat for dim None). */
        int32_t red_index[PTEC_MAX_RANK] = {0};
        size_t at = off_x, unused = 0;
        uint32_t best = 0;
        if (t_in->dtype == PTEC_DTYPE_CHAR) {
            const int8_t *x = t_in->data;
            int8_t best_v = x[at];
            for (uint32_t i = 1; i < s->count; ++i) {
                ptec_walk_step(w.reduced, w.red_sizes, red_index, w.red_sx, &at, zero, &unused);
                if (smallest ? x[at] < best_v : x[at] > best_v) {
                    best_v = x[at];
                    best = i;
                }
            }
        } else if (t_in->dtype == PTEC_DTYPE_INT || t_in->dtype == PTEC_DTYPE_LONG) {
            int64_t best_v = load_int(t_in, at);
            for (uint32_t i = 1; i < s->count; ++i) {
                ptec_walk_step(w.reduced, w.red_sizes, red_index, w.red_sx, &at, zero, &unused);
                int64_t v = load_int(t_in, at);
                if (smallest ? v < best_v : v > best_v) {
                    best_v = v;
                    best = i;
                }
            }
        } else {
            const float *x = t_in->data;
            float best_v = x[at];
            for (uint32_t i = 1; i < s->count; ++i) {
                ptec_walk_step(w.reduced, w.red_sizes, red_index, w.red_sx, &at, zero, &unused);
                if (beats_f(x[at], best_v, smallest)) {
                    best_v = x[at];
                    best = i;
                }
            }
        }
        y[off_y] = (int64_t)best;
        ptec_walk_step(w.kept, w.kept_sizes, kept_index, w.kept_sx, &off_x, w.kept_sy, &off_y);
    }
    return PTEC_OK;
}

static ptec_status run_argmax(ptec_op *op) { return run_with(op, false); }

static ptec_status run_argmin(ptec_op *op) { return run_with(op, true); }

const ptec_kernel ptec_kernel_aten_argmax_out = {"aten::argmax.out", sizeof(arg_reduce_state), prepare,
                                                 run_argmax};
const ptec_kernel ptec_kernel_aten_argmin_out = {"aten::argmin.out", sizeof(arg_reduce_state), prepare,
                                                 run_argmin};
