#include "kernels/portable/portable_args.h"

ptec_status ptec_portable_expect_float(ptec_op *op, int arg, const ptec_tensor *t)
{
    if (t->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, arg, PTEC_MSG("dtype must be float32"));
    }
    return PTEC_OK;
}

ptec_status ptec_portable_dim(ptec_op *op, int arg, int64_t dim, int rank, int *out)
{
    if (dim < -(int64_t)rank || dim >= (int64_t)rank || rank == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, PTEC_MSG("dim out of range for the tensor's rank"));
    }
    *out = (int)(dim < 0 ? dim + rank : dim);
    return PTEC_OK;
}

ptec_status ptec_portable_pair(ptec_op *op, size_t arg, const int32_t *fallback, int32_t *out)
{
    int32_t items[2];
    size_t count;
    ptec_status st = ptec_op_get_int32_list(op, arg, items, 2, &count, false);
    if (st != PTEC_OK) {
        return st;
    }
    if (count == 0 && fallback != NULL) {
        out[0] = fallback[0];
        out[1] = fallback[1];
    } else if (count == 1 || count == 2) {
        out[0] = items[0];
        out[1] = items[count - 1];
    } else {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)arg, PTEC_MSG("expected 1 or 2 items"));
    }
    return PTEC_OK;
}

ptec_status ptec_portable_expect_sizes(ptec_op *op, int arg, const ptec_tensor *t, const int32_t *sizes,
                                       int rank, const char *message)
{
    if (t->rank != rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, message);
    }
    for (int d = 0; d < rank; ++d) {
        if (t->sizes[d] != sizes[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, message);
        }
    }
    return PTEC_OK;
}

ptec_status ptec_portable_dim_order_copy_args(ptec_op *op, ptec_tensor **self, ptec_tensor **out)
{
    bool non_blocking;
    int64_t order[PTEC_MAX_RANK];
    size_t order_len;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, self)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 1, &non_blocking)) != PTEC_OK ||
        (st = ptec_op_get_int_list(op, 2, order, PTEC_MAX_RANK, &order_len, true)) != PTEC_OK ||
        (st = ptec_op_get_out(op, out)) != PTEC_OK) {
        return st;
    }
    if (non_blocking) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1, PTEC_MSG("non_blocking must be false"));
    }
    if (ptec_op_arg_is_null(op, 2)) {
        return PTEC_OK;
    }
    if (order_len != (*out)->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("dim_order length differs from the rank"));
    }
    for (size_t d = 0; d < order_len; ++d) {
        if (order[d] != (*out)->dim_order[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out's dim order differs from dim_order"));
        }
    }
    return PTEC_OK;
}
