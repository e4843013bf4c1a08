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
