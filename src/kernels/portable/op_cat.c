/* aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out)
 *
 * Any dtype (int8 for quantized graphs whose inputs share out's qparams),
 * inputs and out in any dim orders, each addressed through its own. The
 * inputs share out's dtype and rank and its sizes except along dim; 1-D
 * empty inputs are skipped, as PyTorch's legacy rule allows. */
#include "kernels/portable/data_movement.h"
#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct cat_state {
    uint8_t dim;
} cat_state;

static bool skipped(const ptec_tensor *t)
{
    return t->rank == 1 && t->sizes[0] == 0;
}

static ptec_status prepare(ptec_op *op)
{
    cat_state *s = op->state;
    ptec_tensor *out;
    int64_t dim;
    size_t count;
    int d;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4)) != PTEC_OK || (st = ptec_op_get_tensor_list(op, 0, &count)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 1, &dim)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK ||
        (st = ptec_portable_dim(op, 1, dim, out->rank, &d)) != PTEC_OK) {
        return st;
    }
    if (count == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("cat needs at least one tensor"));
    }
    int64_t along = 0;
    for (size_t j = 0; j < count; ++j) {
        ptec_tensor temp, *t;
        if ((st = ptec_op_get_tensor_list_item(op, 0, j, &temp, &t)) != PTEC_OK) {
            return st;
        }
        if (t->dtype != out->dtype) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("every input must have out's dtype"));
        }
        if (skipped(t)) {
            continue;
        }
        if (t->rank != out->rank) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("every input must have out's rank"));
        }
        for (int k = 0; k < out->rank; ++k) {
            if (k != d && t->sizes[k] != out->sizes[k]) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("inputs differ from out in a dim other than dim"));
            }
        }
        along += t->sizes[d];
    }
    if (along != out->sizes[d]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out's size along dim is not the inputs' sum"));
    }
    s->dim = (uint8_t)d;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const cat_state *s = op->state;
    const ptec_tensor *out = ptec_op_tensor(op, 2);
    size_t es = ptec_dtype_size(out->dtype);
    int32_t s_out[PTEC_MAX_RANK], s_in[PTEC_MAX_RANK];
    ptec_physical_strides(out, s_out);
    size_t at = 0;
    for (uint32_t j = 0; j < op->argv[0]->count; ++j) {
        const ptec_tensor *t = ptec_op_tensor_list_item(op, 0, j);
        if (skipped(t) || t->numel == 0) {
            continue;
        }
        ptec_physical_strides(t, s_in);
        ptec_copy_strided(es, out->rank, t->sizes, t->data, s_in, 0, out->data, s_out, at * (size_t)s_out[s->dim]);
        at += (size_t)t->sizes[s->dim];
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_cat_out = {"aten::cat.out", sizeof(cat_state), prepare, run};
