/* Reductions of int32 / int64 tensors, as PyTorch's integer kernels:
 *   aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None,
 *       Tensor(a!) out)
 *   aten::amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out)
 *   aten::amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out)
 *   aten::cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out)
 *   aten::prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out)
 *   aten::prod.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out)
 *
 * self is int32 or int64, any dim order; a dim list None or [] reduces every
 * dim (prod.out: every dim). sum, prod and cumsum give int64 (PyTorch's
 * promotion of an integer sum or product), or int32 when dtype says so (and
 * out is int32); they wrap in out's dtype as PyTorch's do (two's
 * complement: taken modulo 2^64 and kept in out's width). A sum over no
 * elements is 0, a product 1, as PyTorch's; amax / amin
 * over none fail the load (PyTorch refuses them), and keep self's dtype.
 * These are upstream's schemas; upstream's portable kernels (op_sum.cpp,
 * op_amax.cpp, op_amin.cpp, op_cumsum.cpp, op_prod.cpp) take the integer dtypes too, and
 * ptec's take only them (its float reductions are other kernels). */
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef enum int_reduce_kind { INT_SUM, INT_AMAX, INT_AMIN, INT_CUMSUM, INT_PROD } int_reduce_kind;

typedef struct int_reduce_state {
    uint32_t reduced_mask; /* bit d: logical dim d of self is reduced (cumsum: its one dim) */
    uint32_t count;        /* elements per output (cumsum: along the dim) */
    uint8_t keepdim;
    uint8_t out_arg;
} int_reduce_state;

static bool integral(uint8_t dtype)
{
    return dtype == PTEC_DTYPE_INT || dtype == PTEC_DTYPE_LONG;
}

static int64_t load(const ptec_tensor *t, size_t i)
{
    if (t->dtype == PTEC_DTYPE_LONG) {
        int64_t v;
        memcpy(&v, (const uint8_t *)t->data + i * sizeof v, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, (const uint8_t *)t->data + i * sizeof v, sizeof v);
    return v;
}

/* v's low bits in t's width (two's complement), stored at element i */
static void store(const ptec_tensor *t, size_t i, uint64_t v)
{
    if (t->dtype == PTEC_DTYPE_LONG) {
        memcpy((uint8_t *)t->data + i * sizeof v, &v, sizeof v);
    } else {
        uint32_t low = (uint32_t)v;
        memcpy((uint8_t *)t->data + i * sizeof low, &low, sizeof low);
    }
}

/* out's dtype for sum / cumsum: dtype (arg) if given, else int64; int32 or int64 only */
static ptec_status check_sum_dtype(ptec_op *op, int dtype_arg, int out_arg, const ptec_tensor *out)
{
    int64_t dtype = PTEC_DTYPE_LONG;
    ptec_status st;
    if (!ptec_op_arg_is_null(op, (size_t)dtype_arg) && (st = ptec_op_get_int(op, (size_t)dtype_arg, &dtype)) != PTEC_OK) {
        return st;
    }
    if (dtype != PTEC_DTYPE_LONG && dtype != PTEC_DTYPE_INT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, dtype_arg, PTEC_MSG("dtype must be None, int32 or int64"));
    }
    if (out->dtype != dtype) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, out_arg,
                            PTEC_MSG("out must be int64 (or the dtype given) for an integer sum"));
    }
    return PTEC_OK;
}

/* The reduced count and out's sizes from s->reduced_mask and s->keepdim. */
static ptec_status finish_reduce(ptec_op *op, const ptec_tensor *self, const ptec_tensor *out, int_reduce_kind kind)
{
    int_reduce_state *s = op->state;
    int32_t want[PTEC_MAX_RANK];
    int rank = 0;
    uint64_t reduced = 1;
    for (int d = 0; d < self->rank; ++d) {
        if (s->reduced_mask & (1u << d)) {
            reduced *= (uint64_t)self->sizes[d];
            if (s->keepdim) {
                want[rank++] = 1;
            }
        } else {
            want[rank++] = self->sizes[d];
        }
    }
    if (reduced == 0 && (kind == INT_AMAX || kind == INT_AMIN)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("amax/amin over no elements"));
    }
    s->count = (uint32_t)reduced;
    return ptec_portable_expect_sizes(op, s->out_arg, out, want, rank,
                                      PTEC_MSG("out's sizes do not match dim and keepdim"));
}

/* sum.IntList_out, amax.out, amin.out: self 0, dims 1, keepdim 2, (dtype 3), out */
static ptec_status prepare_reduce(ptec_op *op, int_reduce_kind kind)
{
    int_reduce_state *s = op->state;
    const int out_arg = kind == INT_SUM ? 4 : 3;
    ptec_tensor *self, *out;
    int64_t dims[PTEC_MAX_RANK];
    size_t count;
    bool keepdim;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, (size_t)out_arg + 2u)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_int_list(op, 1, dims, PTEC_MAX_RANK, &count, kind == INT_SUM)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 2, &keepdim)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (!integral(self->dtype)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("self must be int32 or int64"));
    }
    if (kind == INT_SUM) {
        if ((st = check_sum_dtype(op, 3, out_arg, out)) != PTEC_OK) {
            return st;
        }
    } else if (out->dtype != self->dtype) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, out_arg, PTEC_MSG("out must have self's dtype"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, out_arg, PTEC_MSG("out must not be a constant tensor"));
    }
    memset(s, 0, sizeof *s);
    s->keepdim = keepdim;
    s->out_arg = (uint8_t)out_arg;
    if (count == 0) {
        s->reduced_mask = self->rank == 0 ? 0u : (uint32_t)((1u << self->rank) - 1u);
    }
    for (size_t i = 0; i < count; ++i) {
        int d = 0;
        if (self->rank == 0) {
            if (dims[i] != 0 && dims[i] != -1) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
            }
            continue;
        }
        if ((st = ptec_portable_dim(op, 1, dims[i], self->rank, &d)) != PTEC_OK) {
            return st;
        }
        if (s->reduced_mask & (1u << d)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim lists a dimension twice"));
        }
        s->reduced_mask |= 1u << d;
    }
    return finish_reduce(op, self, out, kind);
}

/* prod.int_out: self 0, dim 1, keepdim 2, dtype 3, out 4; prod.out: self 0, dtype 1, out 2 */
static ptec_status prepare_prod_with(ptec_op *op, bool all)
{
    int_reduce_state *s = op->state;
    const int out_arg = all ? 2 : 4;
    ptec_tensor *self, *out;
    int64_t dim64 = 0;
    bool keepdim = false;
    int dim = 0;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, (size_t)out_arg + 2u)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (!all && ((st = ptec_op_get_int(op, 1, &dim64)) != PTEC_OK || (st = ptec_op_get_bool(op, 2, &keepdim)) != PTEC_OK)) {
        return st;
    }
    if (!integral(self->dtype)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("self must be int32 or int64"));
    }
    if ((st = check_sum_dtype(op, all ? 1 : 3, out_arg, out)) != PTEC_OK) {
        return st;
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, out_arg, PTEC_MSG("out must not be a constant tensor"));
    }
    if (!all && self->rank == 0 && dim64 != 0 && dim64 != -1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
    }
    if (!all && self->rank > 0 && (st = ptec_portable_dim(op, 1, dim64, self->rank, &dim)) != PTEC_OK) {
        return st;
    }
    memset(s, 0, sizeof *s);
    s->keepdim = keepdim;
    s->out_arg = (uint8_t)out_arg;
    s->reduced_mask = self->rank == 0 ? 0u : all ? (uint32_t)((1u << self->rank) - 1u) : 1u << dim;
    return finish_reduce(op, self, out, INT_PROD);
}

static ptec_status run_reduce(ptec_op *op, int_reduce_kind kind)
{
    const int_reduce_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, s->out_arg);
    int32_t zero[PTEC_MAX_RANK] = {0}, kept_index[PTEC_MAX_RANK] = {0};
    ptec_reduce_walk w;
    ptec_reduce_walk_init(t_in, t_out, s->reduced_mask, s->keepdim, &w);
    size_t off_x = 0, off_y = 0;
    for (uint32_t o = 0; o < t_out->numel; ++o) {
        int32_t red_index[PTEC_MAX_RANK] = {0};
        size_t at = off_x, unused = 0;
        uint64_t sum = 0, product = 1; /* unsigned: both wrap modulo 2^64, no undefined overflow */
        int64_t best = s->count > 0 ? load(t_in, at) : 0;
        for (uint32_t i = 0; i < s->count; ++i) {
            int64_t v = load(t_in, at);
            sum += (uint64_t)v;
            product *= (uint64_t)v;
            if (kind == INT_AMAX ? v > best : v < best) {
                best = v;
            }
            if (i + 1 < s->count) {
                ptec_walk_step(w.reduced, w.red_sizes, red_index, w.red_sx, &at, zero, &unused);
            }
        }
        store(t_out, off_y, kind == INT_SUM ? sum : kind == INT_PROD ? product : (uint64_t)best);
        ptec_walk_step(w.kept, w.kept_sizes, kept_index, w.kept_sx, &off_x, w.kept_sy, &off_y);
    }
    return PTEC_OK;
}

/* cumsum.out: self 0, dim 1, dtype 2, out 3 */
static ptec_status prepare_cumsum(ptec_op *op)
{
    int_reduce_state *s = op->state;
    ptec_tensor *self, *out;
    int64_t dim64;
    int dim = 0;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 1, &dim64)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (!integral(self->dtype)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("self must be int32 or int64"));
    }
    if ((st = check_sum_dtype(op, 2, 3, out)) != PTEC_OK) {
        return st;
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 3, PTEC_MSG("out must not be a constant tensor"));
    }
    if (self->rank == 0) {
        if (dim64 != 0 && dim64 != -1) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
        }
    } else if ((st = ptec_portable_dim(op, 1, dim64, self->rank, &dim)) != PTEC_OK) {
        return st;
    }
    memset(s, 0, sizeof *s);
    s->reduced_mask = self->rank == 0 ? 0u : 1u << dim;
    s->count = self->rank == 0 ? 1u : (uint32_t)self->sizes[dim];
    s->keepdim = 1;
    s->out_arg = 3;
    return ptec_portable_expect_sizes(op, 3, out, self->sizes, self->rank, PTEC_MSG("out must have self's sizes"));
}

static ptec_status run_cumsum(ptec_op *op)
{
    const int_reduce_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    if (t_out->numel == 0) {
        return PTEC_OK;
    }
    int32_t kept_index[PTEC_MAX_RANK] = {0}, sy[PTEC_MAX_RANK];
    ptec_reduce_walk w;
    /* keepdim: the kept dims' output strides skip the summed dim, which is walked with its own strides */
    ptec_reduce_walk_init(t_in, t_out, s->reduced_mask, true, &w);
    ptec_physical_strides(t_out, sy);
    size_t step_x = 1, step_y = 1;
    for (int d = 0; d < (int)t_in->rank; ++d) {
        if (s->reduced_mask & (1u << d)) {
            step_x = (size_t)w.red_sx[0];
            step_y = (size_t)sy[d];
        }
    }
    size_t off_x = 0, off_y = 0;
    for (uint32_t o = 0; o < t_out->numel / s->count; ++o) {
        uint64_t sum = 0;
        for (uint32_t i = 0; i < s->count; ++i) {
            sum += (uint64_t)load(t_in, off_x + i * step_x);
            store(t_out, off_y + i * step_y, sum);
        }
        ptec_walk_step(w.kept, w.kept_sizes, kept_index, w.kept_sx, &off_x, w.kept_sy, &off_y);
    }
    return PTEC_OK;
}

static ptec_status prepare_sum(ptec_op *op) { return prepare_reduce(op, INT_SUM); }
static ptec_status prepare_amax(ptec_op *op) { return prepare_reduce(op, INT_AMAX); }
static ptec_status prepare_amin(ptec_op *op) { return prepare_reduce(op, INT_AMIN); }
static ptec_status prepare_prod(ptec_op *op) { return prepare_prod_with(op, false); }
static ptec_status prepare_prod_all(ptec_op *op) { return prepare_prod_with(op, true); }
static ptec_status run_prod(ptec_op *op) { return run_reduce(op, INT_PROD); }
static ptec_status run_sum(ptec_op *op) { return run_reduce(op, INT_SUM); }
static ptec_status run_amax(ptec_op *op) { return run_reduce(op, INT_AMAX); }
static ptec_status run_amin(ptec_op *op) { return run_reduce(op, INT_AMIN); }

const ptec_kernel ptec_kernel_aten_sum_intlist_out = {"aten::sum.IntList_out", sizeof(int_reduce_state),
                                                      prepare_sum, run_sum};
const ptec_kernel ptec_kernel_aten_amax_out = {"aten::amax.out", sizeof(int_reduce_state), prepare_amax, run_amax};
const ptec_kernel ptec_kernel_aten_amin_out = {"aten::amin.out", sizeof(int_reduce_state), prepare_amin, run_amin};
const ptec_kernel ptec_kernel_aten_cumsum_out = {"aten::cumsum.out", sizeof(int_reduce_state), prepare_cumsum,
                                                 run_cumsum};
const ptec_kernel ptec_kernel_aten_prod_int_out = {"aten::prod.int_out", sizeof(int_reduce_state), prepare_prod,
                                                   run_prod};
const ptec_kernel ptec_kernel_aten_prod_out = {"aten::prod.out", sizeof(int_reduce_state), prepare_prod_all,
                                               run_prod};
