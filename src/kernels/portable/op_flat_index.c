/* ptec::flat_index.out(Tensor[] indices, int[] sizes, *, Tensor(a!) out)
 *
 * The row-major position, in a block of dims of `sizes`, named by one
 * int64 index per dim: out[p] = ((i0[p] * sizes[1] + i1[p]) * sizes[2] + ...)
 * with each index tensor broadcast to out's shape (numpy's rule: aligned
 * at the last dim, a size 1 repeated). It is torch's advanced indexing by
 * several index tensors (x[i, j]) reduced to one: the indexed dims of x
 * viewed as one, whose rows aten::embedding.out then copies. A negative
 * index counts from the end of its dim, as torch's.
 *
 * The indices are data, usually computed in the program: every one is
 * checked against its dim at run time, before anything is written, and one
 * outside [-size, size) fails the call with PTEC_INVALID_ARGUMENT. The
 * positions written are then below the product of sizes (checked at load
 * to fit int32), whatever a hostile plan overlapping out with an index
 * makes of the values read later: the lookup after it checks them again. */
#include "kernels/portable/portable_args.h"

/* indices a call takes: one per indexed dim */
enum { MAX_INDICES = 8, F_INDICES = 0, F_SIZES = 1, F_OUT = 2 };

typedef struct flat_index_state {
    uint8_t count;               /* index tensors (and sizes) */
    int32_t sizes[MAX_INDICES];  /* the indexed dims' sizes */
} flat_index_state;

/* Whether t broadcasts to out's sizes (t's dims aligned with out's last) */
static bool broadcasts_to(const ptec_tensor *t, const ptec_tensor *out)
{
    if (t->rank > out->rank) {
        return false;
    }
    const int lead = (int)out->rank - (int)t->rank;
    for (int d = 0; d < (int)t->rank; ++d) {
        if (t->sizes[d] != 1 && t->sizes[d] != out->sizes[lead + d]) {
            return false;
        }
    }
    return true;
}

static ptec_status prepare(ptec_op *op)
{
    flat_index_state *s = op->state;
    ptec_tensor *out;
    int64_t sizes[MAX_INDICES];
    size_t count, n_sizes;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4)) != PTEC_OK ||
        (st = ptec_op_get_tensor_list(op, F_INDICES, &count)) != PTEC_OK ||
        (st = ptec_op_get_int_list(op, F_SIZES, sizes, MAX_INDICES, &n_sizes, false)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (count == 0 || count != n_sizes) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, F_SIZES,
                            PTEC_MSG("there must be one size per index tensor, and at least one"));
    }
    if (out->dtype != PTEC_DTYPE_LONG || !ptec_tensor_is_contiguous(out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, F_OUT, PTEC_MSG("out must be a contiguous int64 tensor"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, F_OUT, PTEC_MSG("out must not be a constant tensor"));
    }
    int64_t block = 1;
    for (size_t k = 0; k < count; ++k) {
        /* the block's positions must fit int32: each size at least 1, the
         * product checked before it can overflow */
        if (sizes[k] < 1 || sizes[k] > INT32_MAX / block) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, F_SIZES,
                                PTEC_MSG("sizes must be at least 1, their product at most INT32_MAX"));
        }
        block *= sizes[k];
        s->sizes[k] = (int32_t)sizes[k];
        ptec_tensor temp, *t;
        if ((st = ptec_op_get_tensor_list_item(op, F_INDICES, k, &temp, &t)) != PTEC_OK) {
            return st;
        }
        if (t->dtype != PTEC_DTYPE_LONG || !ptec_tensor_is_contiguous(t)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, F_INDICES,
                                PTEC_MSG("every index must be a contiguous int64 tensor"));
        }
        if (!broadcasts_to(t, out)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, F_INDICES,
                                PTEC_MSG("every index must broadcast to out's sizes"));
        }
    }
    s->count = (uint8_t)count;
    return PTEC_OK;
}

/* Offset in t (broadcast to out) of out's element at coordinates `at` */
static size_t broadcast_offset(const ptec_tensor *t, const ptec_tensor *out, const int32_t *at)
{
    const int lead = (int)out->rank - (int)t->rank;
    size_t off = 0;
    for (int d = 0; d < (int)t->rank; ++d) {
        off = off * (size_t)t->sizes[d] + (t->sizes[d] == 1 ? 0u : (size_t)at[lead + d]);
    }
    return off;
}

/* out's element count positions, in row-major order; returns false when an
 * index is outside its dim (nothing more is written). write: store them. */
static bool walk(const ptec_op *op, const flat_index_state *s, bool write)
{
    const ptec_tensor *out = ptec_op_tensor(op, F_OUT);
    int32_t at[PTEC_MAX_RANK] = {0};
    int64_t *y = out->data;
    for (uint32_t p = 0; p < out->numel; ++p) {
        int64_t flat = 0;
        for (int k = 0; k < (int)s->count; ++k) {
            const ptec_tensor *t = ptec_op_tensor_list_item(op, F_INDICES, (size_t)k);
            int64_t i = ((const int64_t *)t->data)[broadcast_offset(t, out, at)];
            const int64_t size = s->sizes[k];
            if (i < -size || i >= size) {
                return false;
            }
            flat = flat * size + (i < 0 ? i + size : i);
        }
        if (write) {
            y[p] = flat;
        }
        for (int d = (int)out->rank - 1; d >= 0; --d) {     /* the next coordinates, the last dim fastest */
            if (++at[d] < out->sizes[d]) {
                break;
            }
            at[d] = 0;
        }
    }
    return true;
}

static ptec_status run(ptec_op *op)
{
    const flat_index_state *s = op->state;
    /* all checked first, so a bad index leaves out untouched; checked again
     * as written: out may share memory with an index in a hostile plan */
    if (!walk(op, s, false) || !walk(op, s, true)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, F_INDICES, PTEC_MSG("an index is outside its dim"));
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_flat_index_out = {"ptec::flat_index.out", sizeof(flat_index_state), prepare, run};
